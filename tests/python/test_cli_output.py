"""Machine-readable and familiar output: `run --json`, `show --json`, `show --intervals` (iperf3's
layout), the summary table's rows and what they average over, Result in a notebook, Result.load
giving the scenario back and ca_state as a category, and the star fabric's lossless switch.

Runs are tiny (0.5–2 s simulated) so the file takes seconds on 2 cores.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import bbrlab
import pandas as pd
import pytest
from bbrlab.cli import cli
from bbrlab.errors import ScenarioWarning
from bbrlab.results.display import fmt_bps, fmt_bytes, fmt_count, summary_html, summary_table
from bbrlab.results.intervals import _bitrate, _bytes, interval_lines, intervals
from bbrlab.results.results import CA_STATES, Result
from bbrlab.results.sstable import _ss_rate
from click.testing import CliRunner

# The emu backend's availability check and clean-up assertion (root, namespaces; CI has both).
from test_emu import _assert_clean, needs_emu

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
QUICK = EXAMPLES / "quick.toml"


def _bbrlab(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The real command in a child process: stdout and stderr apart, as a shell pipe sees them."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "python"), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run(
        [sys.executable, "-m", "bbrlab", *args], cwd=cwd, capture_output=True, text=True, timeout=300, env=env
    )


@pytest.fixture(scope="module")
def two_flows(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """bbr1 from 0 s and cubic from 0.5 s on 100 Mbit/s for 2 s, 100 ms samples."""
    d = tmp_path_factory.mktemp("out") / "two"
    sc = bbrlab.load_scenario(EXAMPLES / "bbr-vs-cubic.toml", ["duration=2s", "flows.1.start=0.5s"])
    bbrlab.run(sc).save(d, plots=False)
    return d


@pytest.fixture(scope="module")
def lossy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One CUBIC flow with 2 % random loss, sampled every 10 ms: recoveries in the time series."""
    d = tmp_path_factory.mktemp("out") / "lossy"
    sc = bbrlab.load_scenario(
        QUICK, ["duration=2s", "flows.0.cc=cubic", "topology.bottleneck.loss=2%", "sample_interval=10ms"]
    )
    bbrlab.run(sc).save(d, plots=False)
    return d


# ------------------------------------------------------------------ run --json


@pytest.mark.parametrize("quiet", [False, True])
def test_run_json_is_the_only_thing_on_stdout(tmp_path: Path, quiet: bool) -> None:
    p = _bbrlab("run", str(QUICK), "--set", "duration=1s", "--json", *(["-q"] if quiet else []), cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)  # fails on any line that is not part of the document
    run_dir = tmp_path / doc.pop("run_dir")
    assert json.loads((run_dir / "summary.json").read_text()) == doc
    assert doc["run"]["overrides"] == ["duration=1s"]


def test_run_json_survives_a_pfc_warning_and_the_lossless_example_really_drops(tmp_path: Path) -> None:
    """The dc-incast example's comment says --set topology.lossless=false gives a drop-tail switch:
    the run must drop and send no PAUSE, the ignored pfc table is named on stderr, and stdout is
    still only the JSON document."""
    example = str(EXAMPLES / "dc-incast.toml")
    off = _bbrlab(
        "run",
        example,
        "--set",
        "topology.lossless=false",
        "--set",
        "duration=0.3s",
        "--set",
        "sample_interval=100ms",
        "--json",
        cwd=tmp_path,
    )
    assert off.returncode == 0, off.stderr
    doc = json.loads(off.stdout)
    assert doc["run"]["drops"] > 0 and doc["run"]["pause_frames"] == 0, doc["run"]
    assert doc["scenario"]["lossless"] is False and doc["scenario"]["buffer_bytes"] == 128_000
    assert "warning: topology.pfc is ignored" in off.stderr
    written = (tmp_path / doc["run_dir"] / "scenario.toml").read_text()
    assert "lossless = false" in written and "[topology.pfc]" not in written
    on = _bbrlab("run", example, "--set", "duration=0.3s", "--set", "sample_interval=100ms", "--json", cwd=tmp_path)
    assert on.returncode == 0, on.stderr
    doc = json.loads(on.stdout)
    assert doc["run"]["drops"] == 0 and doc["run"]["pause_frames"] > 0, doc["run"]
    assert "pfc is ignored" not in on.stderr


@needs_emu
def test_run_json_with_the_emu_backend(tmp_path: Path) -> None:
    """The kernel backend starts `ip`, the emulator and traffic processes: stdout stays JSON."""
    path = tmp_path / "emu.toml"
    path.write_text(
        'name = "emu-json"\nduration = "1s"\n[topology]\nbottleneck = { rate = "20Mbps", rtt = "20ms" }\n'
        '[[flows]]\ncc = "cubic"\n'
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "python"), os.environ.get("PYTHONPATH", "")])}
    p = subprocess.Popen(
        [sys.executable, "-m", "bbrlab", "run", str(path), "--backend", "emu", "--json"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    out, err = p.communicate(timeout=120)
    assert p.returncode == 0, err
    doc = json.loads(out)
    assert doc["run"]["backend"] == "emu" and (tmp_path / doc["run_dir"] / "summary.json").exists()
    assert doc["aggregate"]["goodput_bps"] > 5e6  # a 20 Mbit/s link carried a real flow
    _assert_clean(p.pid)


def test_stdout_guard_sends_child_processes_and_prints_to_stderr(tmp_path: Path) -> None:
    code = textwrap.dedent("""
        import os, sys
        from bbrlab.cli.stdio import stdout_to_stderr
        with stdout_to_stderr():
            print("python noise")
            os.system("echo child noise")
            os.write(1, b"fd noise\\n")
        print('{"ok": 1}')
    """)
    env = {**os.environ, "PYTHONPATH": str(REPO / "python")}
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout) == {"ok": 1}
    assert all(n in p.stderr for n in ("python noise", "child noise", "fd noise")), p.stderr


def test_show_json_is_the_summary(two_flows: Path) -> None:
    r = CliRunner().invoke(cli, ["show", str(two_flows), "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    assert doc.pop("run_dir") == str(two_flows)
    assert doc == json.loads((two_flows / "summary.json").read_text())


# ------------------------------------------------------------------ show --intervals


def test_intervals_add_up_to_the_flows_totals(two_flows: Path) -> None:
    res = Result.load(two_flows)
    iv = intervals(res, 0.5)
    per_flow = iv.rows.groupby("flow").agg(bytes=("bytes", "sum"), retrans=("retransmits", "sum"))
    flows = res.flows.set_index("flow")
    # The run ends on a sample, so the intervals cover each flow's whole active time.
    assert (per_flow["bytes"] == flows["delivered_bytes"]).all()
    assert (per_flow["retrans"] == flows["retransmits"]).all()
    cubic = iv.rows[iv.rows["flow"] == 1]
    assert cubic["start_s"].min() == pytest.approx(0.5)  # nothing before it started
    # The bitrate is over each interval's own span: bytes × 8 / span.
    span = iv.rows["end_s"] - iv.rows["start_s"]
    assert (iv.rows["bitrate_bps"] - iv.rows["bytes"] * 8 / span).abs().max() < 1e-6
    # A [SUM] line per interval: the flows' bytes added up.
    assert iv.sums["bytes"].sum() == flows["delivered_bytes"].sum()
    whole = intervals(res, 2.0).rows.set_index("flow")
    assert whole.loc[0, "bitrate_bps"] == pytest.approx(flows.loc[0, "goodput_bps"])


def test_intervals_cli_layout_and_refusals(two_flows: Path) -> None:
    out = CliRunner().invoke(cli, ["show", str(two_flows), "--intervals", "1s"])
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    assert lines[1].split() == ["[", "ID]", "Interval", "Transfer", "Bitrate", "Retr", "Cwnd"]
    assert any(line.startswith("[  0]   0.00-1.00   sec") and "Mbits/sec" in line for line in lines)
    assert any(line.startswith("[SUM]   1.00-2.00   sec") for line in lines)
    one = CliRunner().invoke(cli, ["show", str(two_flows), "--intervals", "1", "--flow", "1"])
    assert one.exit_code == 0 and "[  0]" not in one.output and "[SUM]" not in one.output, one.output
    for args, text in (
        (["--intervals", "50ms"], "shorter than the run's sample interval (100ms)"),
        (["--intervals", "250ms"], "use 200ms or 300ms"),
        (["--intervals", "1s", "--flow", "7"], "--flow 7"),
        (["--intervals", "1s", "--ss"], "choose one"),
        (["--flow", "0"], "only meaningful with --intervals"),
    ):
        r = CliRunner().invoke(cli, ["show", str(two_flows), *args])
        assert r.exit_code == 2 and r.output.startswith("error: ") and text in r.output, (args, r.output)
        assert "Traceback" not in r.output


def test_intervals_footnote_only_when_an_interval_beats_the_link(lossy: Path) -> None:
    """After a loss is repaired the receiver releases the bytes it held: a 10 ms interval can show
    more than the 20 Mbit/s link carried. Over 1 s intervals that evens out."""
    res = Result.load(lossy)
    fine = intervals(res, 0.01)
    assert fine.rows["above_link_rate"].any()
    assert (fine.rows.loc[fine.rows["above_link_rate"], "bitrate_bps"] > 20e6).all()
    text = "\n".join(interval_lines(fine))
    assert "* above the bottleneck's 20.0 Mbits/sec" in text
    coarse = intervals(res, 1.0)
    assert not coarse.rows["above_link_rate"].any()
    assert "above the bottleneck" not in "\n".join(interval_lines(coarse))
    doc = json.loads(CliRunner().invoke(cli, ["show", str(lossy), "--intervals", "10ms", "--json"]).output)
    assert sum(r["above_link_rate"] for r in doc["intervals"]) == int(fine.rows["above_link_rate"].sum())


# ------------------------------------------------------------------ one rounding formatter


@pytest.mark.parametrize(
    "fmt, value, expected",
    [
        (fmt_bps, 94_310_000, "94.31 Mbit/s"),
        (fmt_bps, 999, "999 bit/s"),
        (fmt_bytes, 318_700, "318.7 KB"),
        (fmt_count, 1_910_000, "1.91M"),
        (fmt_count, 12, "12"),
        (_ss_rate, 354_123_000, "354.1Mbps"),  # as ss -tni prints it
        (_bitrate, 94_100_000, "94.1 Mbits/sec"),  # as iperf3 prints it: three significant digits
        (_bitrate, 9_412_000, "9.41 Mbits/sec"),
        (_bytes, 941_000_000, "941 MBytes"),
        (fmt_bps, float("nan"), "-"),
        (fmt_bytes, None, "-"),
    ],
)
def test_every_table_rounds_through_one_formatter(fmt, value, expected: str) -> None:
    assert fmt(value) == expected


# ------------------------------------------------------------------ the summary table


def _texts(table) -> tuple[list[str], list[str], list[list[str]]]:
    cols = table.columns
    return [c.header for c in cols], [c.footer for c in cols], [list(c._cells) for c in cols]


def test_summary_says_what_each_row_averages_over(two_flows: Path) -> None:
    s = Result.load(two_flows).summary
    headers, footers, cells = _texts(summary_table(s))
    assert "active" in headers
    active = cells[headers.index("active")]
    assert active == ["0–2 s", "0.5–2 s"] and footers[headers.index("active")] == "0–2 s"
    r = CliRunner().invoke(cli, ["show", str(two_flows)])
    assert "each flow's bytes over its active time; all: every flow's bytes over the whole run" in r.output
    # The reason for the note: the all row is every byte over the 2 s run, so it is less than the
    # flows' goodputs added up (cubic's is over its 1.5 s).
    assert s["aggregate"]["goodput_bps"] == pytest.approx(sum(f["delivered_bytes"] for f in s["flows"]) * 8 / 2.0)
    assert sum(f["goodput_bps"] for f in s["flows"]) > s["aggregate"]["goodput_bps"]


def test_summary_without_partial_flows_has_no_active_column_and_adds_up(tmp_path: Path) -> None:
    res = bbrlab.run(bbrlab.load_scenario(EXAMPLES / "bbr-vs-cubic.toml", ["duration=1s", "flows.1.start=0s"]))
    headers, _, _ = _texts(summary_table(res.summary))
    assert "active" not in headers
    assert sum(f["goodput_bps"] for f in res.summary["flows"]) == pytest.approx(res.summary["aggregate"]["goodput_bps"])


def test_result_html_is_the_summary_escaped(two_flows: Path) -> None:
    res = Result.load(two_flows)
    html = res._repr_html_()
    assert html.startswith("<table>") and "Jain&#x27;s index" in html
    for f in res.summary["flows"]:
        assert f">{f['cc']}<" in html
    evil = {**res.summary, "name": "<script>x</script>"}
    assert "<script>" not in summary_html(evil) and "&lt;script&gt;" in summary_html(evil)


# ------------------------------------------------------------------ Result.load


def test_load_gives_the_scenario_back(two_flows: Path) -> None:
    res = Result.load(two_flows)
    assert res.scenario is not None
    original = bbrlab.load_scenario(EXAMPLES / "bbr-vs-cubic.toml", ["duration=2s", "flows.1.start=0.5s"])
    assert res.scenario.resolve() == original.resolve()
    again = bbrlab.run(res.scenario)  # the loaded scenario runs: same seed, same numbers
    assert again.summary["aggregate"]["delivered_bytes"] == res.summary["aggregate"]["delivered_bytes"]


def test_load_keeps_a_scenario_it_cannot_read_as_text(two_flows: Path, tmp_path: Path) -> None:
    import shutil

    d = tmp_path / "old"
    shutil.copytree(two_flows, d)
    text = (d / "scenario.toml").read_text().replace("[topology]", "retired_field = 3\n\n[topology]")
    (d / "scenario.toml").write_text(text)
    with pytest.warns(ScenarioWarning, match="retired_field"):
        res = Result.load(d)
    assert res.scenario is None and res.scenario_toml == text and not res.damaged
    assert CliRunner().invoke(cli, ["show", str(d)]).exit_code == 0


def test_ca_state_is_a_category_and_recovery_shows_under_loss(lossy: Path, two_flows: Path) -> None:
    ts = Result.load(lossy).timeseries
    assert isinstance(ts["ca_state"].dtype, pd.CategoricalDtype)
    assert list(ts["ca_state"].cat.categories) == list(CA_STATES)
    assert "Recovery" in set(ts["ca_state"].astype(str))  # 2 % loss: fast recovery at some samples
    ss = CliRunner().invoke(cli, ["show", str(lossy), "--ss"])
    assert ss.exit_code == 0 and "ca_state:" in ss.output and any(f"ca_state:{s}" in ss.output for s in CA_STATES)


def test_a_run_with_numeric_ca_state_loads_as_the_category(two_flows: Path, tmp_path: Path) -> None:
    import shutil

    d = tmp_path / "numeric"
    shutil.copytree(two_flows, d)
    ts = pd.read_parquet(d / "timeseries.parquet")
    ts["ca_state"] = [3 if i % 2 else 0 for i in range(len(ts))]
    ts["ca_state"] = ts["ca_state"].astype("uint8")
    ts.to_parquet(d / "timeseries.parquet", index=False)
    got = Result.load(d).timeseries["ca_state"]
    assert list(got.astype(str)[:4]) == ["Open", "Recovery", "Open", "Recovery"]
