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

import pandas as pd
import pytest
from click.testing import CliRunner

from bbrlab import ScenarioError
from bbrlab.cli import cli
from bbrlab.reproduce import STUDIES, Size
from bbrlab.reproduce import dc_convergence, dc_incast, dc_query, wan_loss
from bbrlab.reproduce.claims import Verdict, below, verdict, verdict_of_all
from bbrlab.reproduce.scenarios import Dumbbell, Flow, QueueLimit, Star, study_run
from bbrlab.reproduce.sources import SOURCES

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
    # Every claims table ends in a verdict computed by its rule.
    rows = [line for line in text.splitlines() if line.startswith("| ") and line.rstrip().endswith(" |")]
    verdict_rows = [r for r in rows if r.split("|")[-2].strip() in VERDICTS]
    assert verdict_rows, "no claims table"


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
    run = study_run("t", duration_s=1.5, seed=3, sample_interval_s=0.1,
                    topology=Dumbbell(rate_bps=2_500_000_000, rtt_s=0.14, buffer=QueueLimit.of_packets(1000),
                                      loss=0.015, access_rate_bps=2_500_000_000),
                    flows=[Flow("cubic", rcvbuf_bytes=6 * 2**20, start_s=0.000123)], tags={"k": 1})
    sc = run.scenario
    assert run.tags == {"k": 1}
    assert sc.duration == 1_500_000_000 and sc.sample_interval == 100_000_000
    assert sc.topology.bottleneck.rate == 2_500_000_000 and sc.topology.bottleneck.rtt == 140_000_000
    assert sc.topology.access_rate == 2_500_000_000 and sc.topology.bottleneck.loss == 0.015
    assert sc.flows[0].rcvbuf == 6 * 2**20 and sc.flows[0].start == 123_000


def test_builders_reject_what_a_scenario_rejects():
    star = Star(workers=2, rate_bps=1_000_000_000, delay_s=10e-6, forwarding="store-and-forward", buffer_bytes=128_000)
    with pytest.raises(ScenarioError):  # a flow that starts after the end of the run
        study_run("t", duration_s=1, seed=1, sample_interval_s=0.1, topology=star, flows=[Flow("cubic", start_s=2)],
                  tags={})
    with pytest.raises(TypeError):  # rates are whole bits per second, never a float that may round
        Dumbbell(rate_bps=2.5e9, rtt_s=0.1, buffer=QueueLimit.of_bdp(1)).raw()  # type: ignore[arg-type]


# ------------------------------------------------------------------ claims: rules flip with the numbers


def test_rules():
    assert verdict(True) is Verdict.AGREES and verdict(False) is Verdict.DISAGREES and verdict(None) is Verdict.UNTESTED
    assert verdict_of_all([True, True]) is Verdict.AGREES
    assert verdict_of_all([True, False]) is Verdict.PARTLY
    assert verdict_of_all([False, None]) is Verdict.DISAGREES
    assert verdict_of_all([None]) is Verdict.UNTESTED
    assert below(1.0, 2.0) is True and below(2.0, 1.0) is False and below(float("nan"), 1.0) is None


def _incast_stats(bbr_ahead: bool) -> pd.DataFrame:
    """A stats table where BBR keeps the link busy and CUBIC collapses with n — or the reverse."""
    rows = []
    for fabric in ("lossless", "store-and-forward"):
        for n in (1, 10, 20):
            for cc in ("cubic", "bbr1"):
                good, bad = 940e6, 940e6 - 30e6 * n
                mean = (good if cc == "bbr1" else bad) if bbr_ahead else (bad if cc == "bbr1" else good)
                share = 0.9 if mean == good else 0.2
                rows.append(dict(fabric=fabric, cc=cc, n=n, mean_bps=mean, ci_bps=5e6, samples=5,
                                 frac75=share, rto=1.0, drops=10.0, min_flow_bps=mean / n))
    return pd.DataFrame(rows)


def test_incast_verdicts_follow_the_numbers():
    ns = [1, 10, 20]
    ahead = {c.claim: c.verdict for c in dc_incast.claims(_incast_stats(True), ns)}
    behind = {c.claim: c.verdict for c in dc_incast.claims(_incast_stats(False), ns)}
    key = next(k for k in ahead if k.startswith("BBR significantly ahead") and "drop-tail" in k)
    assert ahead[key] is Verdict.AGREES and behind[key] is Verdict.DISAGREES
    key = next(k for k in ahead if k.startswith("n = 20: fraction") and "drop-tail" in k)
    assert ahead[key] is Verdict.AGREES and behind[key] is Verdict.DISAGREES
    # The prose says what the numbers say.
    text_ahead = dc_incast._explain(_incast_stats(True), ns)
    text_behind = dc_incast._explain(_incast_stats(False), ns)
    assert "pattern appears on this fabric" in text_ahead and "reverse of the Waterloo Figure 7" in text_behind
    assert "throughput falls with n for TCP Cubic" in text_ahead
    assert "throughput falls with n for TCP BBR" in text_behind


def _query_stats(lossless_ratio: float) -> pd.DataFrame:
    rows = []
    for fabric in ("lossless", "store-and-forward"):
        for bg in (False, True):
            for n in (1, 5, 20):
                for cc in ("cubic", "bbr1"):
                    base = 0.009 * (2 if bg else 1)
                    mean = base * (lossless_ratio if cc == "bbr1" and fabric == "lossless" else 1)
                    if fabric != "lossless" and bg:
                        mean = 0.05 if cc == "bbr1" else 0.5
                    rows.append(dict(fabric=fabric, bg=bg, cc=cc, n=n, mean_s=mean, ci_s=0.0, p95_s=mean * 1.1,
                                     median_s=mean, completed=10, requested=10))
    return pd.DataFrame(rows)


def test_query_verdicts_follow_the_numbers():
    plan = dc_query.Plan(reps=10, ns_nobg=(1, 5, 20), ns_bg=(1, 5, 20), n_cdf=20)
    same, faster = _query_stats(1.0), _query_stats(0.5)
    assert "algorithm-blind" in dc_query._explain(same, plan)
    assert "algorithm-blind" not in dc_query._explain(faster, plan)
    claim = "with background: BBR below CUBIC in mean and p95, most at small n — "

    def verdict_of(st: pd.DataFrame, where: str) -> Verdict:
        return next(c.verdict for c in dc_query.claims(st, plan) if c.claim.startswith(claim) and where in c.claim)

    assert verdict_of(same, "lossless") is Verdict.DISAGREES
    assert verdict_of(faster, "lossless") is Verdict.AGREES


def test_convergence_answer_follows_the_numbers():
    def levels(bbr_droptail: float) -> pd.DataFrame:
        rows = []
        for fabric in dc_convergence.FABRICS:
            for cc in ("cubic", "bbr1"):
                j = bbr_droptail if (cc == "bbr1" and fabric != "lossless") else 0.99
                for active in range(1, 6):
                    rows.append(dict(fabric=fabric, cc=cc, T=10.0, level=active, active=active, jain_level=j,
                                     jain_per_second=j, total_bps=9e8, min_share=0.2,
                                     starved_flows=1 if j < 0.7 else 0))
        return pd.DataFrame(rows)

    assert "not in the direction the Waterloo authors suspected" in dc_convergence._answer(levels(0.5))
    assert "In bbrlab, no" in dc_convergence._answer(levels(0.98))
    poorly = {c.claim: c.verdict for c in dc_convergence.claims(levels(0.5))}
    fair = {c.claim: c.verdict for c in dc_convergence.claims(levels(0.98))}
    key = next(k for k in poorly if k.startswith("BBR converges poorly") and "128 KB" in k)
    assert poorly[key] is Verdict.AGREES and fair[key] is Verdict.DISAGREES


def test_wan_loss_verdicts_follow_the_numbers():
    def grid(cubic0: float, bbr0: float) -> pd.DataFrame:
        rows = []
        for buffers in ("blog", "unlimited"):
            for loss, c, b in ((0.0, cubic0, bbr0), (1.5, 1.3e6, 150e6)):
                for cc, g in (("cubic", c), ("bbr1", b)):
                    rows.append(dict(buffers=buffers, rtt_ms=140, loss_pct=loss, cc=cc, goodput_bps=g))
        return pd.DataFrame(rows)

    like_blog = {c.claim: c.verdict for c in wan_loss.claims(grid(340e6, 335e6))}
    unlike = {c.claim: c.verdict for c in wan_loss.claims(grid(100e6, 900e6))}
    assert like_blog["140 ms, no loss: CUBIC"] is Verdict.AGREES and unlike["140 ms, no loss: CUBIC"] is Verdict.DISAGREES
    assert like_blog["140 ms, 1.5 % loss: CUBIC"] is Verdict.AGREES
    assert "so both algorithms come within 20 % of the window limit" in wan_loss._commentary(grid(340e6, 335e6), 10)
    assert "yet only" in wan_loss._commentary(grid(100e6, 335e6), 10)


# ------------------------------------------------------------------ figures, CLI


def test_figures_leave_pyplot_alone(tmp_path):
    # In a fresh interpreter: importing every study and drawing a figure loads no pyplot and keeps
    # matplotlib's default backend choice untouched.
    code = f"""
import sys, matplotlib
before = matplotlib.rcParams._get_backend_or_none()
import bbrlab.plots, bbrlab.emu.compare
from bbrlab.reproduce import STUDIES
import importlib
for s in STUDIES.values():
    importlib.import_module("bbrlab.reproduce." + s.module)
from bbrlab.figures import save, subplots
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
    monkeypatch.setattr(rp, "run_studies", lambda names, out, *, size, jobs, progress: seen.append(size) or [])
    for args, size in ((["--quick"], Size.QUICK), (["--size", "tiny"], Size.TINY), ([], Size.FULL),
                       (["--quick", "--size", "quick"], Size.QUICK)):
        out = CliRunner().invoke(cli, ["reproduce", "wan-loss", "--out", str(tmp_path), *args])
        assert out.exit_code == 0, out.output
        assert seen[-1] is size
    out = CliRunner().invoke(cli, ["reproduce", "wan-loss", "--quick", "--size", "full"])
    assert out.exit_code == 2 and "contradicts" in out.output
