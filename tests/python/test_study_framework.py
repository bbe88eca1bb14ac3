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
from bbrlab import ScenarioError
from bbrlab.cli import cli
from bbrlab.report.markdown import BESIDE_BBRLAB, BESIDE_END, BESIDE_SOURCE
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
    # A claim checked on several fabrics is one row, a cell per fabric: "value: **verdict** — why".
    pivoted = [c for r in rows for c in r.split("|") if re.search(r"\*\*([^*]+)\*\*", c)]
    pivoted = [c for c in pivoted if re.search(r"\*\*([^*]+)\*\*", c).group(1) in VERDICTS]  # type: ignore[union-attr]
    assert verdict_rows or pivoted, "no claims table"
    assert all(r.split("|")[-2].strip() for r in verdict_rows), "a claim without its reason"
    assert all(" — " in c for c in pivoted), "a claim without its reason"


def _beside_blocks(text: str) -> list[tuple[str, str]]:
    """REPORT.md's side-by-side blocks as (the source's side, bbrlab's side)."""
    found = re.findall(
        re.escape(BESIDE_SOURCE) + r"\n(.*?)\n" + re.escape(BESIDE_BBRLAB) + r"\n(.*?)\n" + re.escape(BESIDE_END),
        text,
        flags=re.S,
    )
    return [(src.strip(), ours.strip()) for src, ours in found]


_IMAGE = re.compile(r"!\[([^]]*)\]\(([^)]+)\)")


@pytest.mark.parametrize("name", sorted(STUDIES))
def test_every_redrawn_figure_sits_beside_the_source_figure(tiny_study, name):
    """Each source figure the study redraws has one block on its page: the source's side names the
    figure (its number, or the slide or plot), describes it, and shows its numbers re-plotted (the
    file written) or says where they are drawn or that the document gives none; bbrlab's side has
    our figure (or why it is not drawn at this size). Every image has a meaningful alt text."""
    d = tiny_study(name)
    figures = importlib.import_module(f"bbrlab.reproduce.{STUDIES[name].module}").SOURCE_FIGURES
    assert figures, name
    text = (d / "REPORT.md").read_text()
    blocks = _beside_blocks(text)
    assert len(blocks) == text.count(BESIDE_SOURCE) == text.count(BESIDE_END), "a block is not well formed"
    for sf in figures.values():
        assert sf.source is STUDIES[name].source
        assert re.search(r"Figure \d+|slide|plot|table", sf.figure), sf.figure
        head = f"**{sf.source.name}, {sf.figure}**"
        mine = [(src, ours) for src, ours in blocks if src.startswith(head)]
        assert len(mine) == 1, (head, len(mine))
        src, ours = mine[0]
        assert len(src) > len(head) + 80, "the source's figure is described"
        if sf.png is not None:
            [(alt, png)] = _IMAGE.findall(src)
            assert png == sf.png and (d / png).stat().st_size > 1000
            assert alt.startswith(f"{sf.source.name}, {sf.figure}, re-plotted")
        elif sf.on_bbrlab_axes:
            assert "re-plotted on bbrlab's figure" in src and not _IMAGE.findall(src)
        else:
            assert "gives no numbers" in src and not _IMAGE.findall(src)
        images = _IMAGE.findall(ours)
        assert images or "Not drawn at this size" in ours, (head, ours)
        for alt, png in images:
            assert (d / png).stat().st_size > 1000, png
            assert alt.startswith("bbrlab") and len(alt) > 30, alt  # not "fig4" or the file's name
    # a study redraws every figure it shows beside the source's: no block without its SourceFigure
    assert len(blocks) == len(figures)


def _bars(fig, label: str) -> list[list[float]]:
    """The heights of the bars labelled ``label`` on each axes of ``fig`` (one list per axes)."""
    return [[b.get_height() for c in ax.containers if c.get_label() == label for b in c] for ax in fig.axes]


def test_replotted_source_numbers_are_the_studies_own_constants():
    """What the source's side re-plots, read back from the drawn bars, is the constants the claims
    compare against: the same numbers, not a second copy typed in."""
    from bbrlab.reproduce import bql_vs_bbr, dc_incast, esnet_100g, wan_loss
    from bbrlab.reproduce import dc_common as dc
    from bbrlab.reproduce.claims import parse_cell
    from bbrlab.reproduce.source_figures import source_plot

    bql = source_plot(bql_vs_bbr.SOURCE_FIGURES[4])
    rtts = (100, 1000)
    for cc, label in (("bql", "BQL"), (bql_vs_bbr.BBR, "BBR")):
        rate, queue = _bars(bql, f"{label} (Anhalt BQL paper)")
        assert rate == [bql_vs_bbr.PAPER[(r, cc)].rate_bps / 1e6 for r in rtts]
        assert queue == [bql_vs_bbr.PAPER[(r, cc)].queue_bytes / 1e3 for r in rtts]
    # the claims' queue cell holds the plotted queues (KB), in PAPER's order
    plotted = {
        (r, cc): h
        for cc, label in (("bql", "BQL"), (bql_vs_bbr.BBR, "BBR"))
        for r, h in zip(rtts, _bars(bql, f"{label} (Anhalt BQL paper)")[1])
    }
    assert [n.value for n in parse_cell(bql_vs_bbr.PAPER_VALUES["queue"])] == [plotted[k] for k in bql_vs_bbr.PAPER]
    # Figs. 2 and 3 are Fig. 4's two RTTs, one each
    assert _bars(source_plot(bql_vs_bbr.SOURCE_FIGURES[3]), "BBR (Anhalt BQL paper)") == [
        [_bars(bql, "BBR (Anhalt BQL paper)")[0][1]],
        [_bars(bql, "BBR (Anhalt BQL paper)")[1][1]],
    ]

    # bbrlab's own Fig. 4 carries the paper's values on its bars, at the RTTs it ran (0 ms has none)
    ours = pd.DataFrame(
        [
            dict(cc=cc, rtt_ms=r, goodput_bps=7e8, queue_mean_bytes=3e5)
            for cc in bql_vs_bbr.CCS
            for r in (0.15, 100, 1000)
        ]
    )
    fig4 = bql_vs_bbr._vs_rtt_plot(ours, "t", True, 1e9, paper=True)
    for ax, unit in zip(fig4.axes, ("rate", "queue")):
        diamonds = [list(line.get_ydata()) for line in ax.lines if line.get_marker() == "D"]
        assert diamonds == [
            [
                bql_vs_bbr.PAPER[(r, cc)].rate_bps / 1e6
                if unit == "rate"
                else bql_vs_bbr.PAPER[(r, cc)].queue_bytes / 1e3
                for r in rtts
            ]
            for cc in bql_vs_bbr.CCS
        ]
    plain = bql_vs_bbr._vs_rtt_plot(ours, "t", True, 1e9)
    assert not [line for ax in plain.axes for line in ax.lines if line.get_marker() == "D"]

    blog = source_plot(wan_loss.SOURCE_FIGURES["results table"])
    for cc, label in (("cubic", "CUBIC"), ("bbr1", "BBR")):
        rows = sorted((loss, bps) for _, c, loss, bps in wan_loss.BLOG_140MS if c == cc)
        assert _bars(blog, f"{label} (Toonk BBR blog)") == [[bps / 1e6 for _, bps in rows]]

    fig8 = source_plot(dc_incast.SOURCE_FIGURES[8])
    for cc in dc.CCS:  # Figure 8's n = 20: the share of samples at ≥ 75 % of the link
        assert _bars(fig8, f"{dc.CC_LABEL[cc]} (Waterloo DC study)") == [[dc_incast.SEED_READINGS[cc][20][1]]]
    assert len(fig8.axes[0].containers) == len(dc.CCS)

    # esnet-100g draws the slides' table on its own axes: the grey bars are SEED_100G
    empty = pd.DataFrame(columns=["cc_name", "streams", "cap_gbps", "tput_mean", "tput_std", "retr_mean"])
    fig = esnet_100g.figures.bar_plot(empty, esnet_100g.SEED_100G, "t")
    tput, retr = _bars(fig, esnet_100g.figures.SLIDES_LABEL)
    assert tput == [v[0] for v in esnet_100g.SEED_100G.values()]
    assert retr == [v[3] for v in esnet_100g.SEED_100G.values()]


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
