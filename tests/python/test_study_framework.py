"""The study framework: sizes, typed scenarios, claims, figures, reports, the CLI.

Every study runs end to end at size tiny (the `tiny_study` fixture, shared with the per-study
tests); the claim rules are fed contrary numbers and must change their verdict, and so must the
verdict sentences in the reports.
"""

from __future__ import annotations

import importlib
import re
import subprocess
import sys

import pytest
from bbrlab import ScenarioError
from bbrlab.cli import cli
from bbrlab.reproduce import STUDIES, Size
from bbrlab.reproduce.claims import Check, Verdict, below, verdict, verdict_of_all
from bbrlab.reproduce.scenarios import Dumbbell, Flow, QueueLimit, Star, study_run
from bbrlab.reproduce.sources import SOURCES
from click.testing import CliRunner

VERDICTS = {v.value for v in Verdict}


# ------------------------------------------------------------------ every study, tiny, end to end


@pytest.mark.parametrize("name", sorted(STUDIES))
def test_every_study_runs_at_size_tiny(tiny_study, name):
    d = tiny_study(name)
    study = STUDIES[name]
    text = (d / "REPORT.md").read_text()
    assert text.startswith(f"# {name}: ")
    assert f"Source: {study.source.name}" in text or f"Source: [{study.source.name}]" in text
    assert study.source.citation in text
    assert "Tiny version" in text and "(tiny study)" in text
    assert not re.search(r"seed 00\d", text), "reports name their sources, not seed file numbers"
    assert "nan" not in text.lower().replace("nanos", "")
    for img in re.findall(r"!\[[^]]*\]\(([^)]+)\)", text):
        assert (d / img).stat().st_size > 1000, img
    for csv in d.glob("*.csv"):
        assert csv.stat().st_size > 0, csv
    # Every claims table ends in a verdict computed by its rule, and why.
    rows = [line for line in text.splitlines() if line.startswith("| ") and line.rstrip().endswith(" |")]
    verdict_rows = [r for r in rows if r.split("|")[-3].strip() in VERDICTS]
    assert verdict_rows, "no claims table"
    assert all(r.split("|")[-2].strip() for r in verdict_rows), "a claim without its reason"


def test_every_study_sizes_itself_in_one_table():
    for study in STUDIES.values():
        mod = importlib.import_module(f"bbrlab.reproduce.{study.module}")
        assert set(mod.PLANS) == set(Size), study.name
        assert mod.SOURCE is study.source


def test_sources_have_distinct_short_names_and_anchors():
    assert len({s.name for s in SOURCES}) == len({s.key for s in SOURCES}) == 5
    from bbrlab.reproduce.sources import SOURCES_MD

    if SOURCES_MD.is_file():  # a source checkout: every anchor is a heading there
        text = SOURCES_MD.read_text()
        for s in SOURCES:
            assert f'<a id="{s.key}"></a>' in text, s.key


# ------------------------------------------------------------------ typed scenarios


def test_builders_write_base_units_and_validate():
    run = study_run(
        "t",
        duration_s=1.5,
        seed=3,
        sample_interval_s=0.1,
        topology=Dumbbell(
            rate_bps=2_500_000_000,
            rtt_s=0.14,
            buffer=QueueLimit.of_packets(1000),
            loss=0.015,
            access_rate_bps=2_500_000_000,
        ),
        flows=[Flow("cubic", rcvbuf_bytes=6 * 2**20, start_s=0.000123)],
        tags={"k": 1},
    )
    sc = run.scenario
    assert run.tags == {"k": 1}
    assert sc.duration == 1_500_000_000 and sc.sample_interval == 100_000_000
    assert sc.topology.bottleneck.rate == 2_500_000_000 and sc.topology.bottleneck.rtt == 140_000_000
    assert sc.topology.access_rate == 2_500_000_000 and sc.topology.bottleneck.loss == 0.015
    assert sc.flows[0].rcvbuf == 6 * 2**20 and sc.flows[0].start == 123_000


def test_builders_reject_what_a_scenario_rejects():
    star = Star(workers=2, rate_bps=1_000_000_000, delay_s=10e-6, forwarding="store-and-forward", buffer_bytes=128_000)
    with pytest.raises(ScenarioError):  # a flow that starts after the end of the run
        study_run(
            "t", duration_s=1, seed=1, sample_interval_s=0.1, topology=star, flows=[Flow("cubic", start_s=2)], tags={}
        )
    with pytest.raises(TypeError):  # rates are whole bits per second, never a float that may round
        Dumbbell(rate_bps=2.5e9, rtt_s=0.1, buffer=QueueLimit.of_bdp(1)).raw()


# ------------------------------------------------------------------ claims: rules flip with the numbers


def test_rules():
    def c(holds: bool | None) -> Check:
        return Check(holds, "x")

    assert verdict(c(True)).verdict is Verdict.AGREES and verdict(c(False)).verdict is Verdict.DISAGREES
    assert verdict(c(None)).verdict is Verdict.UNTESTED
    assert verdict_of_all([c(True), c(True)]).verdict is Verdict.AGREES
    assert verdict_of_all([c(True), c(False)]).verdict is Verdict.PARTLY
    assert verdict_of_all([c(False), c(None)]).verdict is Verdict.DISAGREES
    assert verdict_of_all([c(None)]).verdict is Verdict.UNTESTED
    assert below(1.0, 2.0) is True and below(2.0, 1.0) is False and below(float("nan"), 1.0) is None


# The studies' own claims and commentary flip with contrary numbers: test_claims.py.


# ------------------------------------------------------------------ figures, CLI


def test_figures_leave_pyplot_alone(tmp_path):
    # In a fresh interpreter: importing every study and drawing a figure loads no pyplot and keeps
    # matplotlib's default backend choice untouched.
    code = f"""
import sys, matplotlib
before = matplotlib.rcParams._get_backend_or_none()
import bbrlab.plots.plots, bbrlab.emu.compare
from bbrlab.reproduce import STUDIES
import importlib
for s in STUDIES.values():
    importlib.import_module("bbrlab.reproduce." + s.module)
from bbrlab.plots.figures import save, subplots
fig, ax = subplots(1, 2, figsize=(4, 2))
ax[0].plot([0, 1], [1, 0])
save(fig, {str(tmp_path / "f.png")!r})
assert "matplotlib.pyplot" not in sys.modules, "pyplot was imported"
assert matplotlib.rcParams._get_backend_or_none() == before, "a backend was chosen"
"""
    subprocess.run([sys.executable, "-c", code], check=True)
    assert (tmp_path / "f.png").stat().st_size > 1000


def test_cli_lists_studies_by_source_name():
    out = CliRunner().invoke(cli, ["reproduce", "--list"])
    assert out.exit_code == 0, out.output
    for study in STUDIES.values():
        assert study.name in out.output and study.source.name in out.output
    assert "seed 00" not in out.output


def test_cli_size_and_quick(monkeypatch, tmp_path):
    import bbrlab.reproduce as rp

    seen = []
    monkeypatch.setattr(rp, "run_studies", lambda names, out, *, size, jobs, progress, backend: seen.append(size) or [])
    for args, size in (
        (["--quick"], Size.QUICK),
        (["--size", "tiny"], Size.TINY),
        ([], Size.FULL),
        (["--quick", "--size", "quick"], Size.QUICK),
    ):
        out = CliRunner().invoke(cli, ["reproduce", "wan-loss", "--out", str(tmp_path), *args])
        assert out.exit_code == 0, out.output
        assert seen[-1] is size
    out = CliRunner().invoke(cli, ["reproduce", "wan-loss", "--quick", "--size", "full"])
    assert out.exit_code == 2 and "contradicts" in out.output
