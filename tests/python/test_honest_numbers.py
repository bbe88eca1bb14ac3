"""Numbers on screen say what they are (issue 36, items 4 and 8): the run table's goodput against
the link's payload capacity, FCTs of sized flows, CE marks with ECN, Jain's index over the bulk
flows only; `bbrlab show` reads summary.json without pandas; the run page's scenario facts in
words; a tiny study's claims are not verdicts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import bbrlab
import pytest
from bbrlab.cli import cli
from bbrlab.report.pages import run_page
from bbrlab.reproduce.claims import Claim, Outcome, Verdict, claims_table, verdicts_unchecked
from bbrlab.results.display import facts_lines, summary_table
from bbrlab.results.results import jain_index, payload_fraction
from click.testing import CliRunner
from scenario_files import write_scenario

MIXED = """
name = "mixed"
duration = "3s"
seed = 2

[topology]
kind = "dumbbell"

[topology.bottleneck]
rate = "20Mbps"
rtt = "20ms"
buffer = "2bdp"
ecn_threshold = "30KB"

[[flows]]
cc = "dctcp"
ecn = true
count = 2

[[flows]]
cc = "cubic"
bytes = "200KB"
start = "0.5s"
"""


@pytest.fixture(scope="module")
def mixed_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two bulk DCTCP flows with ECN and one sized CUBIC transfer."""
    d = tmp_path_factory.mktemp("honest")
    out = d / "run"
    bbrlab.run(bbrlab.load_scenario(write_scenario(d, MIXED, "mixed.toml"))).save(out)
    return out


def _summary(run: Path) -> dict:
    return json.loads((run / "summary.json").read_text())


def _columns(summary: dict) -> dict[str, list[str]]:
    t = summary_table(summary)
    return {str(c.header): [str(v) for v in c.cells] for c in t.columns}


def test_jain_is_over_the_bulk_flows_and_says_so(mixed_run: Path) -> None:
    s = _summary(mixed_run)
    flows = s["flows"]
    bulk = [f["goodput_bps"] for f in flows if f["cc"] == "dctcp"]
    assert len(bulk) == 2 and [f.get("bulk") for f in flows] == [True, True, False]
    assert s["aggregate"]["jain"] == pytest.approx(jain_index(bulk))
    # Over every flow, the short transfer would pull the index down: not what it measures here.
    assert jain_index([f["goodput_bps"] for f in flows]) != pytest.approx(s["aggregate"]["jain"])
    assert s["aggregate"]["jain_flows"] == 2
    assert "Jain's index over the 2 bulk flows" in facts_lines(s)[0]


def test_the_table_has_fct_of_sized_flows_and_ce_marks_with_ecn(mixed_run: Path) -> None:
    s = _summary(mixed_run)
    cols = _columns(s)
    assert cols["FCT"][:2] == ["-", "-"]  # bulk flows have no completion time
    fct = s["flows"][2]["fct_s"]
    assert fct is not None and fct > 0 and cols["FCT"][2] not in ("", "-")
    assert [int(x) for x in cols["CE"]] == [f["ce_packets"] for f in s["flows"]]
    assert sum(int(x) for x in cols["CE"][:2]) > 0, "the ECN flows were marked"
    # A run with neither: no such columns.
    quick = json.loads(json.dumps(s))
    for f in quick["flows"]:
        f.update(bulk=True, ecn=False, ce_packets=0, fct_s=None)
    assert "FCT" not in _columns(quick) and "CE" not in _columns(quick)


def test_goodput_is_stated_against_the_payload_capacity(mixed_run: Path) -> None:
    s = _summary(mixed_run)
    agg = s["aggregate"]
    assert payload_fraction(1448) == pytest.approx(1448 / 1538)
    assert agg["payload_capacity_bps"] == pytest.approx(20e6 * 1448 / 1538)
    assert agg["payload_share"] == pytest.approx(agg["goodput_bps"] / agg["payload_capacity_bps"])
    line = facts_lines(s)[0]
    assert "of the bottleneck's 20.0 Mbit/s" in line
    assert f"{100 * agg['payload_share']:.2f}% of its 18.8 Mbit/s payload capacity" in line


def test_show_reads_the_summary_without_pandas(mixed_run: Path) -> None:
    code = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from bbrlab.cli import cli\n"
        f"r = CliRunner().invoke(cli, ['show', {str(mixed_run)!r}])\n"
        "assert r.exit_code == 0, r.output\n"
        "print(r.output)\n"
        "print('LOADED', *sorted(m for m in ('pandas', 'pyarrow', 'numpy') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "dctcp" in out and "Jain's index over the 2 bulk flows" in out
    assert out.rstrip().splitlines()[-1] == "LOADED", out
    # `bbrlab cc` imports neither rich nor the package metadata.
    code = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from bbrlab.cli import cli\n"
        "r = CliRunner().invoke(cli, ['cc'])\n"
        "assert r.exit_code == 0 and 'cubic' in r.output, r.output\n"
        "print('LOADED', *sorted(m for m in ('rich', 'importlib.metadata') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.rstrip().splitlines()[-1] == "LOADED", out
    assert CliRunner().invoke(cli, ["--version"]).output.startswith("bbrlab, version ")


def test_show_without_the_tables_still_warns_of_a_damaged_one(mixed_run: Path, tmp_path: Path) -> None:
    import shutil

    d = tmp_path / "run"
    shutil.copytree(mixed_run, d)
    (d / "queue.parquet").write_bytes(b"PAR1" + b"\0" * 64)
    r = CliRunner().invoke(cli, ["show", str(d)])
    assert r.exit_code == 0 and "dctcp" in r.stdout
    assert "queue.parquet is damaged (not a Parquet file" in r.stderr
    ok = CliRunner().invoke(cli, ["show", str(mixed_run)])
    assert ok.exit_code == 0 and ok.stderr == ""
    js = CliRunner().invoke(cli, ["show", str(mixed_run), "--json"])
    assert json.loads(js.output)["aggregate"] == _summary(mixed_run)["aggregate"]


def test_the_run_page_says_the_scenario_in_words_once(mixed_run: Path, tmp_path: Path) -> None:
    page = run_page(mixed_run, tmp_path / "report.html")
    facts = page.split('id="scenario-facts"', 1)[1].split("</section>", 1)[0]
    for raw in ("rtt_ms", "buffer_packets", "null", "bottleneck_rate_bps", "bdp_bytes"):
        assert raw not in facts, raw
    assert "base RTT" in facts and "20 ms" in facts and "buffer" in facts and "bottleneck rate" in facts
    run_facts = page.split('id="run"', 1)[1].split("</section>", 1)[0]
    for shown_above in ("git_commit", "bbrlab_version", "scenario_file", ">seed<"):
        assert shown_above not in run_facts, shown_above
    assert "wall_s" in run_facts


def _claim(v: Verdict) -> Claim:
    return Claim("c", "3", "2", "c < 2", Outcome(v, "c is 2 (rule: < 2)"), paper_value="3", bbrlab_value="2")


def test_a_tiny_study_shows_its_claims_as_not_checked(tiny_study) -> None:
    assert "| disagrees |" in claims_table([_claim(Verdict.DISAGREES)])
    with verdicts_unchecked():
        assert "| not checked at this size |" in claims_table([_claim(Verdict.DISAGREES)])
        assert _claim(Verdict.AGREES).csv_row()["verdict"] == "not checked at this size"
        assert _claim(Verdict.UNTESTED).csv_row()["verdict"] == "not tested"
    assert _claim(Verdict.DISAGREES).verdict is Verdict.DISAGREES  # the rule's outcome is kept
    d = tiny_study("wan-loss")
    import csv

    with open(d / "claims.csv", newline="") as fh:
        verdicts = {r["verdict"] for r in csv.DictReader(fh)}
    # Claims the tiny grid does not reach stay "not tested" (nothing of ours to show).
    assert verdicts <= {"not checked at this size", "not tested"} and "not checked at this size" in verdicts
    html = (d / "report.html").read_text()
    assert 'class="verdict disagrees"' not in html and 'class="verdict agrees"' not in html
    assert '<td class="verdict untested">not checked at this size</td>' in html
    assert "| disagrees |" not in (d / "REPORT.md").read_text()
