"""bql-vs-bbr (Anhalt BQL paper): BQL vs BBR under high bandwidth-delay products.

The paper (Mareev et al., Anhalt University of Applied Sciences, "Efficiency of BQL Congestion
Control under High Bandwidth-Delay Product Network Conditions") ran RMDT's BQL and TCP BBR (iperf, Linux
4.15.0-45-lowlatency: BBRv1 as 4.15 had it, without the ACK-aggregation cwnd term Linux added in
5.1: our `bbr1_linux413`, the same code for that term as 4.13) through a Netropy 40G WAN emulator: 1 Gbit/s
bottleneck, RTT {0, 100, 500, 1000} ms ("0 ms" is in fact ≈ 150 µs), an 80 MB drop-tail queue,
75 GB per test (≈ 10 min at 1 Gbit/s). Then 1 % random loss at 1 Gbit/s (60 GB per test) and
0.7 % at 10 Gbit/s (200 GB per test) over the same RTTs. Its "mean datarate" is data transmitted
divided by the sender's elapsed time; "buffer load" is the emulator's bottleneck queue.

bbrlab's `bql` is a reconstruction from the paper (no code is public; crates/cc/src/bql.rs
explains every equation): a rate-based sender whose paired PID controllers hold a small target
queue (Q* = BDP/16 clamped to 30–150 KB). What this study can test is therefore whether that
design meets the paper's claims where BBRv1 does not, and whether our BBRv1 fails the way the
paper's did.

Our runs are duration-limited rather than size-limited (long enough for steady state: the
full study runs 200 s per 1 Gbit/s point — 23.5 GB, 20 ProbeRTT periods, 200 round trips at
1 s — and 40 s per 10 Gbit/s point; `--quick` runs 40 s / 8 s). Means are over the whole run,
start-up included, as the paper's are; at 1000 ms BBR's start-up alone takes ≈ 15 s. Rates are TCP goodput (payload delivered in order); the
paper's rates are at the emulator's line level, so we compare link *utilization*: ours against the
1448/1538 payload ceiling (941.5 Mbit/s at 1 Gbit/s), the paper's against 1 Gbit/s.
Queue figures: mean = time-weighted mean of the bottleneck queue over the whole run; peak = its
maximum; jitter = the spread (99th − 1st percentile) of the queue sampled every 100 ms after the
warm-up (max(20 % of the run, 20 RTTs)), which is what the paper's time plots show as the
queue's swing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ..plots.figures import save, subplots
from ..results.display import fmt_bps, fmt_bytes
from .analysis import packets_simulated, value
from .claims import (
    Check,
    Claim,
    Verdict,
    all_of,
    cell,
    check,
    check_within,
    claims_table,
    num,
    pct,
    shown_number,
    untested,
    verdict,
    verdict_of_all,
)
from .context import Size, StudyContext
from .report import MSS, WIRE, md_table
from .scenarios import Dumbbell, Flow, QueueLimit, StudyRun, study_run
from .sentences import join, reproduces
from .source_figures import SourceFigure, SourcePanel, SourceSeries, beside, draw_all
from .sources import ANHALT_BQL

SOURCE = ANHALT_BQL
BUFFER = QueueLimit.of_bytes(80_000_000)
ZERO_RTT_MS = 0.15  # the paper's "0 ms": ≈ 150 µs of residual delay
#: BBR as the paper's kernel (4.15) ran it.
BBR = "bbr1_linux413"
CCS = ("bql", BBR)
LABEL = {"bql": "BQL (bbrlab reconstruction)", BBR: "BBR (BBRv1, as Linux 4.15)"}
GIG, TEN_GIG = 1_000_000_000, 10_000_000_000


@dataclass(frozen=True)
class Plan:
    """RTT grids and run lengths of the three parts."""

    rtts_ms: tuple[float, ...]  # part 1: 1 Gbit/s, no loss
    dur_s: float
    loss_rtts_ms: tuple[float, ...]  # part 2: 1 Gbit/s, 1 % loss
    loss_dur_s: float
    tengig_rtts_ms: tuple[float, ...]  # part 3: 10 Gbit/s, 0.7 % loss
    tengig_dur_s: float
    sample_s: float = 0.1


_ALL = (ZERO_RTT_MS, 100, 500, 1000)
PLANS = {
    Size.TINY: Plan(
        rtts_ms=(ZERO_RTT_MS, 100),
        dur_s=4,
        loss_rtts_ms=(ZERO_RTT_MS, 100),
        loss_dur_s=3,
        tengig_rtts_ms=(ZERO_RTT_MS,),
        tengig_dur_s=1,
    ),
    Size.QUICK: Plan(
        rtts_ms=_ALL,
        dur_s=40,
        loss_rtts_ms=(ZERO_RTT_MS, 100, 1000),
        loss_dur_s=40,
        tengig_rtts_ms=(ZERO_RTT_MS, 100),
        tengig_dur_s=8,
    ),
    Size.FULL: Plan(rtts_ms=_ALL, dur_s=200, loss_rtts_ms=_ALL, loss_dur_s=200, tengig_rtts_ms=_ALL, tengig_dur_s=40),
}


def _rtt_label(rtt_ms: float) -> str:
    return "0 ms (150 µs)" if rtt_ms < 1 else f"{rtt_ms:g} ms"


def _scenario(
    rate_bps: int, rtt_ms: float, cc: str, dur_s: float, loss_pct: float, sample_s: float, tags: dict[str, Any]
) -> StudyRun:
    return study_run(
        "bql-vs-bbr",
        duration_s=dur_s,
        seed=1,
        sample_interval_s=sample_s,
        topology=Dumbbell(rate_bps=rate_bps, rtt_s=rtt_ms / 1e3, buffer=BUFFER, loss=loss_pct / 100),
        flows=[Flow(cc)],
        tags=dict(tags, cc_name=cc, rtt_ms=rtt_ms),
    )


def _queue_stats(q: pd.DataFrame, warm_s: float) -> tuple[float, float]:
    """(jitter = p99 − p1 of the sampled queue after warm-up, its standard deviation), bytes."""
    b = q[(q["queue"] == "bottleneck") & (q["t_s"] >= warm_s)]
    if not len(b):
        return math.nan, math.nan
    occ = b["mean_occupancy_bytes"].to_numpy(dtype=float)
    return float(np.percentile(occ, 99) - np.percentile(occ, 1)), float(np.std(occ))


def _summarize(
    rows: pd.DataFrame,
    series: list[tuple[dict[str, Any], pd.DataFrame, pd.DataFrame]] | None,
    rate_bps: float,
    dur_s: float,
) -> pd.DataFrame:
    out = []
    jit: dict[tuple[str, float], tuple[float, float]] = {}
    for tags, _ts, q in series or []:
        warm = max(0.2 * dur_s, 20 * tags["rtt_ms"] / 1e3)
        jit[(tags["cc_name"], tags["rtt_ms"])] = _queue_stats(q, warm)
    ceiling = rate_bps * MSS / WIRE
    for _, r in rows.iterrows():
        j = jit.get((r["cc_name"], r["rtt_ms"]), (math.nan, math.nan))
        out.append(
            {
                "cc": r["cc_name"],
                "rtt_ms": r["rtt_ms"],
                "goodput_bps": r["goodput_bps"],
                "utilization": r["goodput_bps"] / ceiling,
                "queue_mean_bytes": r["queue_mean_bytes"],
                "queue_max_bytes": r["queue_max_bytes"],
                "queue_jitter_bytes": j[0],
                "queue_std_bytes": j[1],
                "retransmits": r["retransmits"],
                "rtt_p95_ms": r["rtt_p95_ms"],
            }
        )
    return pd.DataFrame(out).sort_values(["cc", "rtt_ms"]).reset_index(drop=True)


def _get(df: pd.DataFrame, cc: str, rtt: float, col: str) -> float:
    return value(df, col, cc=cc, rtt_ms=rtt)


def _kb(b: float) -> str:
    """Queue sizes in the tables: three significant digits, "405 KB", "23.8 MB"."""
    return fmt_bytes(b, sig=3)


def _time_figure(
    series: list[tuple[dict[str, Any], pd.DataFrame, pd.DataFrame]], rtt: float, path: Path, fig_no: int
) -> None:
    fig, (a1, a2) = subplots(2, 1, figsize=(8, 5.6), sharex=True)
    for tags, ts, q in series:
        if tags["rtt_ms"] != rtt:
            continue
        cc = tags["cc_name"]
        t = ts["t_s"].to_numpy()
        # 1 s moving average of goodput, as an emulator's rate plot shows it.
        dt = float(np.median(np.diff(t))) if len(t) > 1 else 1.0
        w = max(1, int(round(1.0 / dt)))
        g = pd.Series(ts["goodput_bps"].to_numpy()).rolling(w, min_periods=1).mean().to_numpy()
        a1.plot(t, g / 1e6, lw=1, label=LABEL[cc])
        b = q[q["queue"] == "bottleneck"]
        a2.plot(b["t_s"], b["mean_occupancy_bytes"] / 1e6, lw=0.8, label=LABEL[cc])
    a1.axhline(1e9 * MSS / WIRE / 1e6, color="k", ls="--", lw=0.8, label="goodput ceiling")
    a1.set_ylabel("goodput (Mbit/s, 1 s avg)")
    a1.set_ylim(0, 1100)
    a1.legend(fontsize=8, loc="lower right")
    a2.set_ylabel("bottleneck buffer load (MB)")
    a2.set_xlabel("time (s)")
    a2.set_yscale("symlog", linthresh=0.1)
    a2.set_ylim(bottom=0)
    a2.legend(fontsize=8)
    fig.suptitle(f"Fig. {fig_no} redrawn: BBW 1 Gbit/s, base RTT {_rtt_label(rtt)}, 80 MB drop-tail")
    save(fig, path)


def _vs_rtt_plot(df: pd.DataFrame, title: str, with_queue: bool, rate_bps: float, paper: bool = False) -> Figure:
    """Mean goodput (and mean buffer load) per RTT, a bar per algorithm. ``paper``: the paper's
    values (PAPER) at the RTTs drawn here, as black-outlined diamonds on the same bars."""
    ncols = 2 if with_queue else 1
    fig, axes = subplots(1, ncols, figsize=(5.2 * ncols, 3.8), squeeze=False)
    rtts = sorted(df["rtt_ms"].unique())
    x = np.arange(len(rtts))
    width = 0.38
    for k, cc in enumerate(CCS):
        d = [_get(df, cc, r, "goodput_bps") / 1e6 for r in rtts]
        axes[0][0].bar(x + (k - 0.5) * width, d, width, label=LABEL[cc])
        if with_queue:
            qv = [_get(df, cc, r, "queue_mean_bytes") / 1e3 for r in rtts]
            axes[0][1].bar(x + (k - 0.5) * width, qv, width, label=LABEL[cc])
    if paper:
        for k, cc in enumerate(CCS):
            at = [(i, PAPER[(r, cc)]) for i, r in enumerate(rtts) if (r, cc) in PAPER]
            xs = [x[i] + (k - 0.5) * width for i, _ in at]
            style = dict(ls="none", marker="D", ms=6, mfc="white", mec="black", mew=1.2)
            # One legend entry per panel, for the first algorithm's markers.
            first = k == 0
            axes[0][0].plot(
                xs,
                [case.rate_bps / 1e6 for _, case in at],
                label=f"{SOURCE.name} (line level)" if first else "_",
                **style,
            )
            if with_queue:
                axes[0][1].plot(
                    xs, [case.queue_bytes / 1e3 for _, case in at], label=SOURCE.name if first else "_", **style
                )
    axes[0][0].axhline(rate_bps * MSS / WIRE / 1e6, color="k", ls="--", lw=0.8)
    axes[0][0].set_ylabel("mean goodput (Mbit/s)")
    for ax in axes[0]:
        ax.set_xticks(x, [_rtt_label(r) for r in rtts], fontsize=8)
        ax.set_xlabel("base RTT")
        # Below the axes: inside, the legend would hide bars and the paper's markers.
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, frameon=False)
    if with_queue:
        axes[0][1].set_ylabel("mean buffer load (KB)")
        axes[0][1].set_yscale("log")
    fig.suptitle(title)
    return fig


def _vs_rtt_figure(
    df: pd.DataFrame, path: Path, title: str, with_queue: bool, rate_bps: float, paper: bool = False
) -> None:
    save(_vs_rtt_plot(df, title, with_queue, rate_bps, paper), path)


def run(ctx: StudyContext) -> Path:
    """The simulator's study (`--backend emu` runs bql_kernel.py instead, the catalog's choice)."""
    p = PLANS[ctx.size]
    out = ctx.out_dir

    # Part 1 (Figs 2-4): 1 Gbit/s, 80 MB drop-tail, RTT sweep, no loss.
    grid = [_scenario(GIG, r, cc, p.dur_s, 0.0, p.sample_s, {"part": "rtt"}) for r in p.rtts_ms for cc in CCS]
    a_rows = ctx.run_many("rtt", grid, keep_timeseries=True)
    a = _summarize(a_rows, ctx.series["rtt"], 1e9, p.dur_s)
    a.to_csv(out / "rtt-sweep.csv", index=False)
    figs = []
    for rtt, no in ((100, 2), (1000, 3)):
        if rtt in p.rtts_ms:
            _time_figure(ctx.series["rtt"], rtt, out / f"fig{no}-rtt{rtt}ms.png", no)
            figs.append((no, rtt))
    _vs_rtt_figure(
        a,
        out / "fig4-summary.png",
        "Fig. 4 redrawn: 1 Gbit/s, 80 MB drop-tail, mean rate and buffer load",
        True,
        1e9,
        paper=True,
    )

    # Part 2 (Fig 5): 1 Gbit/s, 1 % random loss.
    l1 = [
        _scenario(GIG, r, cc, p.loss_dur_s, 1.0, p.sample_s, {"part": "loss1g"}) for r in p.loss_rtts_ms for cc in CCS
    ]
    b_rows = ctx.run_many("loss-1g", l1, keep_timeseries=True)
    b = _summarize(b_rows, ctx.series["loss-1g"], 1e9, p.loss_dur_s)
    b.to_csv(out / "loss-1g.csv", index=False)
    _vs_rtt_figure(b, out / "fig5-1g-loss1pct.png", "Fig. 5 redrawn: 1 Gbit/s, 1 % random loss", True, 1e9)

    # Part 3 (Fig 6): 10 Gbit/s, 0.7 % random loss.
    l10 = [
        _scenario(TEN_GIG, r, cc, p.tengig_dur_s, 0.7, p.sample_s, {"part": "loss10g"})
        for r in p.tengig_rtts_ms
        for cc in CCS
    ]
    c_rows = ctx.run_many("loss-10g", l10, keep_timeseries=True)
    c = _summarize(c_rows, ctx.series["loss-10g"], 10e9, p.tengig_dur_s)
    c.to_csv(out / "loss-10g.csv", index=False)
    _vs_rtt_figure(c, out / "fig6-10g-loss07pct.png", "Fig. 6 redrawn: 10 Gbit/s, 0.7 % random loss", True, 10e9)
    draw_all(SOURCE_FIGURES.values(), out)
    cl, tengig = claims(a, b), tengig_claims(c)
    return ctx.write_report(
        "bql-vs-bbr: BQL vs BBRv1 at high bandwidth-delay products (Anhalt BQL paper)",
        report_sections(a, b, c, figs, cl, tengig) + [_kernel_plan_section()],
        source=SOURCE,
        packets=packets_simulated(a_rows, b_rows, c_rows),
        claims=cl + tengig,
    )


def _kernel_plan_section() -> tuple[str, str]:
    """Where the real-host column is (bql_kernel.py, which builds on this module)."""
    return (
        "The real-host column (`--backend emu`)",
        "`bbrlab reproduce bql-vs-bbr --backend emu` runs the points the link emulator can carry on real "
        "Linux and on the simulator, one page with both: BQL over bbrlab's UDP transport, BQL over kernel "
        "TCP (its BPF port) and the kernel's BBR at 0 ms and 1 Gbit/s, and at 100 ms scaled to 300 Mbit/s; "
        "that page lists the points and why each is carried or scaled (docs/reproduce.md).",
    )


def _util(df: pd.DataFrame, cc: str, rtt: float) -> str:
    g = _get(df, cc, rtt, "goodput_bps")
    u = _get(df, cc, rtt, "utilization")
    return "-" if g != g else f"{fmt_bps(g, 1, unit='Mbit/s')} ({u * 100:.1f} %)"


@dataclass(frozen=True)
class PaperCase:
    """One of the paper's 1 Gbit/s, loss-free runs as its text gives it (Figs. 2 and 3)."""

    rate_bps: float  # mean datarate at the emulator's line level
    queue_bytes: float  # mean bottleneck buffer load
    swing: str  # the buffer's jitter, in the paper's words


#: The paper's 1 Gbit/s numbers (the text of Figs. 2 and 3): (RTT ms, algorithm) -> its case.
PAPER = {
    (100, "bql"): PaperCase(994.6e6, 158e3, "< 200 KB"),
    (100, BBR): PaperCase(964.2e6, 705e3, "up to 4 MB"),
    (1000, "bql"): PaperCase(972.9e6, 387e3, "–"),
    (1000, BBR): PaperCase(821.6e6, 3633e3, "up to 30 MB"),
}
#: The paper's central claim in its numbers, as the claims tables print it.
PAPER_QUEUE_SAID = "158 KB vs 705 KB (100 ms), 0.387 vs 3.633 MB (1000 ms); rate higher"
#: The paper's mean BQL buffer load over all 1 Gbit/s tests.
PAPER_BQL_MEAN_BYTES = 250e3


def _paper_share_pct(rtt_ms: int, cc: str) -> float:
    """The paper's mean datarate at ``rtt_ms`` as a share of 1 Gbit/s, as it rounds it (%)."""
    return round(PAPER[(rtt_ms, cc)].rate_bps / GIG * 100, 1)


#: The paper's numbers as value cells (from PAPER, machine-readable).
PAPER_VALUES = {
    "queue": cell(
        num(case.queue_bytes / 1e3, "KB", label=f"{rtt:g} ms {'bql' if cc == 'bql' else 'bbr1'}")
        for (rtt, cc), case in PAPER.items()
    ),
    "degrades": cell(
        num(_paper_share_pct(100, BBR), "%", label="bbr1 100 ms → 1000 ms", to=_paper_share_pct(1000, BBR))
    ),
}


def _paper_rate(case: PaperCase) -> str:
    return f"{case.rate_bps / 1e6:.1f} Mbit/s ({round(case.rate_bps / GIG * 100, 1):.1f} %)"


def _paper_queue(case: PaperCase) -> str:
    return f"{case.queue_bytes / 1e3:g} KB" if case.queue_bytes < 1e6 else f"{case.queue_bytes / 1e6:g} MB"


def _paper_panels(rtts_ms: tuple[int, ...]) -> tuple[SourcePanel, ...]:
    """The paper's mean datarate and mean buffer load at ``rtts_ms`` (from PAPER), as panels."""
    cats = tuple(_rtt_label(r) for r in rtts_ms)
    names = {"bql": "BQL", BBR: "BBR"}
    return (
        SourcePanel(
            "mean datarate (Mbit/s, line level)",
            cats,
            tuple(SourceSeries(names[cc], tuple(PAPER[(r, cc)].rate_bps / 1e6 for r in rtts_ms)) for cc in CCS),
            title="mean datarate",
        ),
        SourcePanel(
            "mean buffer load (KB)",
            cats,
            tuple(SourceSeries(names[cc], tuple(PAPER[(r, cc)].queue_bytes / 1e3 for r in rtts_ms)) for cc in CCS),
            log_y=True,
            title="mean bottleneck buffer load",
        ),
    )


_LINE_LEVEL = (
    "The paper's rates are at the emulator's line level (of 1 Gbit/s); bbrlab plots TCP goodput, whose "
    f"ceiling at 1 Gbit/s is {GIG * MSS / WIRE / 1e6:.1f} Mbit/s."
)

#: The paper's figures this study redraws, with the numbers its text gives (from PAPER).
SOURCE_FIGURES = {
    2: SourceFigure(
        SOURCE,
        "Figure 2",
        "BBW 1 Gbps, base RTT 100 ms.",
        "datarate and bottleneck buffer load over time, BQL and BBR, 75 GB each in about 10 min. The text: "
        "both reach the available bandwidth; mean buffer load 158 KB (BQL) and 705 KB (BBR); mean datarate "
        "994.6 Mbps (BQL) and 964.2 Mbps (BBR); BBR's buffer jitter up to 4 MB, BQL's under 200 KB. " + _LINE_LEVEL,
        _paper_panels((100,)),
    ),
    3: SourceFigure(
        SOURCE,
        "Figure 3",
        "BBW 1 Gbps, base RTT 1000 ms.",
        "the same at 1000 ms. The text: BBR's bandwidth probing leads to a significant rate decay and buffer "
        "jitter up to 30 MB; mean buffer load 0.387 MB (BQL) and 3.633 MB (BBR); mean datarate 972.9 Mbps (BQL) "
        "and 821.6 Mbps (BBR). " + _LINE_LEVEL,
        _paper_panels((1000,)),
    ),
    4: SourceFigure(
        SOURCE,
        "Figure 4",
        "BBW 1 Gbps, 75 GB, summary results.",
        "mean datarate and mean buffer load of BQL and BBR against RTT (0, 100, 500, 1000 ms). The text gives "
        "the values at 100 and 1000 ms only (those of Figs. 2 and 3), re-plotted here; 0 and 500 ms are read "
        "from the image alone, which the document does not carry. " + _LINE_LEVEL,
        _paper_panels((100, 1000)),
    ),
    5: SourceFigure(
        SOURCE,
        "Figure 5",
        "BBW 1 Gbps, PLR 1 %, 60 GB.",
        "mean datarate of BQL and BBR against RTT with 1 % random loss. The text gives no values: the "
        "performance difference between BBR and BQL grows with RTT, and both keep high performance (neither "
        "takes a loss as a congestion signal).",
    ),
    6: SourceFigure(
        SOURCE,
        "Figure 6",
        "BBW 10 Gbps, PLR 0.7 %, 200 GB.",
        "mean datarate of BQL and BBR against RTT at 10 Gbit/s with 0.7 % random loss. The text gives no values: "
        "at 0 ms (≈ 150 µs) BBR's rate drops significantly while BQL keeps high performance; the TCP stacks "
        "of both hosts, tuned to their maximum, were not enough.",
    ),
}


#: "Keeps a high rate under loss": goodput with 1 % loss at least this share of the loss-free goodput.
HIGH_UNDER_LOSS = 0.8


#: The paper's central claim and the rule that tests it at one point (`smaller_queue_check`).
QUEUE_CLAIM = "BQL keeps a smaller queue than BBR at BBR's rate or better (no loss)"
QUEUE_RULE = "BQL's mean queue smaller and its goodput ≥ 98 % of BBR's, at each RTT"
#: "At BBR's rate or better": BQL's goodput at least this share of BBR's.
RATE_AS_BBR = 0.98


def smaller_queue_check(qb: float, qr: float, gb: float, gr: float, where: str) -> Check:
    """The paper's central claim at one point: BQL's mean queue ``qb`` below BBR's ``qr`` and its
    goodput ``gb`` at least RATE_AS_BBR of BBR's ``gr`` (bytes, bit/s)."""
    return all_of(
        check(qb, "<", qr, "BQL's mean queue {} vs BBR's {limit}", _kb),
        check(gb / gr if gr else math.nan, "≥", RATE_AS_BBR, "BQL's goodput is {} of BBR's", pct),
        where=where,
    )


def claims(a: pd.DataFrame, b: pd.DataFrame) -> list[Claim]:
    """The paper's claims on the 1 Gbit/s runs (a: no loss, b: 1 % loss)."""
    rtts = sorted(a["rtt_ms"].unique())
    out = []
    per_rtt = []
    for rtt in rtts:
        qb, qr = _get(a, "bql", rtt, "queue_mean_bytes"), _get(a, BBR, rtt, "queue_mean_bytes")
        gb, gr = _get(a, "bql", rtt, "goodput_bps"), _get(a, BBR, rtt, "goodput_bps")
        ok = smaller_queue_check(qb, qr, gb, gr, _rtt_label(rtt))
        per_rtt.append((rtt, qr / max(qb, 1), (gb - gr) / 1e6, ok))
    out.append(
        Claim(
            QUEUE_CLAIM,
            PAPER_QUEUE_SAID,
            "BBR/BQL mean queue (×), BQL − BBR goodput (Mbit/s): "
            + "; ".join(f"{_rtt_label(r)}: {shown_number(q)}, {shown_number(d)}" for r, q, d, _ in per_rtt),
            QUEUE_RULE,
            verdict_of_all(ok for *_, ok in per_rtt),
            paper_value=PAPER_VALUES["queue"],
            bbrlab_value=cell(
                [num(q, "×", label=f"{r:g} ms BBR/BQL mean queue") for r, q, _, _ in per_rtt]
                + [num(d, "Mbit/s", label=f"{r:g} ms BQL − BBR goodput") for r, _, d, _ in per_rtt]
            ),
        )
    )
    bql_all = pd.concat([a[a["cc"] == "bql"], b[b["cc"] == "bql"]])["queue_mean_bytes"].mean()
    out.append(
        Claim(
            "mean BQL buffer load over all 1 Gbit/s tests is low",
            "≈ 250 KB",
            _kb(bql_all),
            "within 2× of the paper's 250 KB",
            verdict(
                check_within(
                    bql_all,
                    PAPER_BQL_MEAN_BYTES / 2,
                    2 * PAPER_BQL_MEAN_BYTES,
                    "BQL's mean queue over all tests {}",
                    _kb,
                )
            ),
            paper_value=cell(num(PAPER_BQL_MEAN_BYTES / 1e3, "KB")),
            bbrlab_value=cell(num(bql_all / 1e3, "KB")),
        )
    )
    claim, rule = "BBR's rate degrades at high BDP", "at least 5 points lower at 1000 ms than at 100 ms"
    source = "82.2 % (1000 ms) vs 96.4 % (100 ms) of 1 Gbit/s"
    if 100 in rtts and 1000 in rtts:
        u100, u1000 = _get(a, BBR, 100, "utilization"), _get(a, BBR, 1000, "utilization")
        out.append(
            Claim(
                claim,
                source,
                f"BBR's goodput at 1000 ms is {u1000 * 100:.1f} % of the ceiling vs {u100 * 100:.1f} % at 100 ms",
                rule,
                verdict(
                    check(
                        u100 - u1000,
                        "≥",
                        0.05,
                        f"BBR's share of the ceiling falls {{}} from {u100:.1%} at 100 ms to {u1000:.1%} at 1000 ms",
                        lambda x: f"{100 * x:.1f} points",
                    )
                ),
                paper_value=PAPER_VALUES["degrades"],
                bbrlab_value=cell(num(100 * u100, "%", label="bbr1 100 ms → 1000 ms", to=100 * u1000)),
            )
        )
    else:
        out.append(
            untested(
                claim,
                source,
                rule,
                f"needs 100 and 1000 ms (this size: {', '.join(map(_rtt_label, rtts))})",
                paper_value=PAPER_VALUES["degrades"],
            )
        )
    lrtts = sorted(b["rtt_ms"].unique())
    claim, rule = (
        "1 % loss: the gap in BQL's favour grows with RTT",
        "BQL − BBR larger at each RTT than at the one below",
    )
    if len(lrtts) >= 2:
        gap = [(_get(b, "bql", r, "goodput_bps") - _get(b, BBR, r, "goodput_bps")) / 1e6 for r in lrtts]
        out.append(
            Claim(
                claim,
                "yes",
                "BQL − BBR (Mbit/s): " + "; ".join(f"{_rtt_label(r)}: {shown_number(g)}" for r, g in zip(lrtts, gap)),
                rule,
                verdict_of_all(
                    check(
                        later,
                        ">",
                        earlier,
                        "BQL − BBR {} vs {limit} at " + _rtt_label(r0),
                        "Mbit/s",
                        where=_rtt_label(r1),
                    )
                    for r0, r1, earlier, later in zip(lrtts, lrtts[1:], gap, gap[1:])
                ),
                paper_value="grows with RTT",
                bbrlab_value=cell(num(g, "Mbit/s", label=f"{r:g} ms BQL − BBR") for r, g in zip(lrtts, gap)),
            )
        )
    else:
        out.append(untested(claim, "yes", rule, "needs two RTTs with loss", paper_value="grows with RTT"))
    keep = {
        (cc, r): _get(b, cc, r, "goodput_bps") / _get(a, cc, r, "goodput_bps") for cc in CCS for r in lrtts if r in rtts
    }
    out.append(
        Claim(
            "1 % loss: both keep high rates (neither takes loss as congestion)",
            "yes",
            "goodput with 1 % loss / without (%): "
            + "; ".join(f"{cc} {_rtt_label(r)}: {shown_number(100 * k)}" for (cc, r), k in keep.items()),
            f"≥ {HIGH_UNDER_LOSS:.0%} of the loss-free goodput at each RTT, per algorithm",
            verdict_of_all(
                check(k, "≥", HIGH_UNDER_LOSS, "{} of the loss-free goodput", pct, where=f"{cc} {_rtt_label(r)}")
                for (cc, r), k in keep.items()
            ),
            paper_value="high rates",
            bbrlab_value=cell(
                num(100 * k, "%", label=f"{cc} {r:g} ms with/without loss") for (cc, r), k in keep.items()
            ),
        )
    )
    return out


def tengig_claims(c: pd.DataFrame) -> list[Claim]:
    """The paper's 10 Gbit/s, 0.7 % loss result (Fig. 6): BQL ahead of BBR, whose TCP stack limited it."""
    rtts = sorted(c["rtt_ms"].unique())
    gap = {r: _get(c, "bql", r, "goodput_bps") - _get(c, BBR, r, "goodput_bps") for r in rtts}
    return [
        Claim(
            "10 Gbit/s, 0.7 % loss: BQL above BBR (the paper's BBR limited by its TCP stack)",
            "yes",
            "BQL − BBR: " + ", ".join(f"{_rtt_label(r)}: {fmt_bps(g, sig=3)}" for r, g in gap.items()),
            "BQL's goodput above BBR's at each RTT",
            verdict_of_all(
                check(g, ">", 0, "BQL − BBR goodput {}", lambda x: fmt_bps(x, sig=3), where=_rtt_label(r), rule="> 0")
                for r, g in gap.items()
            ),
            paper_value="BQL above BBR",
            bbrlab_value=cell(num(g / 1e6, "Mbit/s", label=f"{r:g} ms BQL − BBR") for r, g in gap.items()),
        )
    ]


def _tengig_text(c: pd.DataFrame, cl: Claim) -> str:
    """The paper's Fig. 6 reading against ours: what our endpoints lack, and what the numbers say."""
    head = (
        "The paper's BBR was limited here by its TCP stack: \"TCP stack of both server and a receiver was tuned up "
        "to its maximum but it turned out that it is not enough\" — RMDT's advantage was user-space buffers and "
        "faster loss processing, and at 0 ms BBR dropped sharply. bbrlab's TCP endpoints have unlimited socket "
        "buffers here (no `sndbuf`/`rcvbuf`) and no per-packet CPU cost, so this part shows the algorithms alone."
    )
    ahead = [
        r for r in sorted(c["rtt_ms"].unique()) if _get(c, BBR, r, "goodput_bps") >= _get(c, "bql", r, "goodput_bps")
    ]
    if cl.verdict is Verdict.AGREES:
        return head + " Even so BQL is ahead of BBR at every RTT here: the gap does not need the paper's TCP stack."
    if not ahead:
        return head + " BBR and BQL could not be compared here."
    return (
        head + f" Here BBR is not behind BQL at {join(_rtt_label(r) for r in ahead)}: bbrlab "
        f"{reproduces(cl.verdict)} the paper's Fig. 6 gap, which came from its TCP stack, not from the algorithms."
    )


def _time_pair(no: int, rtt_ms: int, drawn: dict[int, int]) -> str:
    """Fig. 2 or 3 of the paper beside ours, or why ours is not drawn at this size."""
    ours = (
        f"![bbrlab's Fig. {no}: goodput and bottleneck buffer load over time of BQL and BBR, 1 Gbit/s, base RTT "
        f"{_rtt_label(rtt_ms)}](fig{no}-rtt{rtt_ms}ms.png)"
        if no in drawn
        else f"*Not drawn at this size: its RTT ({_rtt_label(rtt_ms)}) is not in this size's grid.*"
    )
    return beside(SOURCE_FIGURES[no], ours)


def report_sections(
    a: pd.DataFrame, b: pd.DataFrame, c: pd.DataFrame, figs: list[tuple[int, int]], cl: list[Claim], tengig: list[Claim]
) -> list[tuple[str, str]]:
    rtts = set(a["rtt_ms"].unique())
    paper_rows = [
        [
            f"{rtt} ms, {cc}",
            prate,
            _util(a, cc, rtt),
            pq,
            _kb(_get(a, cc, rtt, "queue_mean_bytes")),
            pj,
            _kb(_get(a, cc, rtt, "queue_jitter_bytes")),
            _kb(_get(a, cc, rtt, "queue_max_bytes")),
        ]
        for (rtt, cc), case in PAPER.items()
        if rtt in rtts
        for prate, pq, pj in [(_paper_rate(case), _paper_queue(case), case.swing)]
    ]

    def table(df: pd.DataFrame) -> str:
        rows = []
        for rtt in sorted(df["rtt_ms"].unique()):
            for cc in CCS:
                rows.append(
                    [
                        _rtt_label(rtt),
                        cc,
                        _util(df, cc, rtt),
                        _kb(_get(df, cc, rtt, "queue_mean_bytes")),
                        _kb(_get(df, cc, rtt, "queue_max_bytes")),
                        _kb(_get(df, cc, rtt, "queue_jitter_bytes")),
                        f"{_get(df, cc, rtt, 'rtt_p95_ms'):.1f} ms",
                        f"{int(_get(df, cc, rtt, 'retransmits')):,}",
                    ]
                )
        return md_table(
            [
                "RTT",
                "cc",
                "goodput (utilization)",
                "mean queue",
                "peak queue",
                "queue jitter (p99−p1)",
                "RTT p95",
                "retransmits",
            ],
            rows,
        )

    return [
        ("Source and setup", __doc__.split("\n", 2)[2]),
        (
            "The paper's claims beside ours (1 Gbit/s, 80 MB drop-tail)",
            claims_table(cl, source_header="Anhalt BQL paper")
            + "\n\n"
            + md_table(
                [
                    "case",
                    "paper rate",
                    "bbrlab goodput (of ceiling)",
                    "paper mean queue",
                    "bbrlab mean queue",
                    "paper queue jitter",
                    "bbrlab queue jitter",
                    "bbrlab peak queue",
                ],
                paper_rows,
            )
            + f"\n\nThe paper's percentages are of 1 Gbit/s at line level, ours of the {fmt_bps(GIG * MSS / WIRE, 1, unit='Mbit/s')} "
            "TCP payload ceiling.",
        ),
        (
            "Figs. 2 and 3: rate and buffer load over time",
            "\n\n".join(_time_pair(no, rtt, dict(figs)) for no, rtt in ((2, 100), (3, 1000))),
        ),
        (
            "Fig. 4: 1 Gbit/s RTT sweep",
            table(a)
            + "\n\n"
            + beside(
                SOURCE_FIGURES[4],
                "![bbrlab's Fig. 4: mean goodput and mean buffer load of BQL and BBR against RTT, 1 Gbit/s, "
                "80 MB drop-tail, with the paper's values as black-outlined diamonds](fig4-summary.png)",
                "the same figure redrawn from this run, the paper's values at the RTTs run here drawn on its bars "
                "as black-outlined diamonds (the paper's rates are at line level: a full link is 1000 Mbit/s for its "
                "diamonds, the dashed goodput ceiling for bbrlab's bars)",
            ),
        ),
        (
            "Fig. 5: 1 Gbit/s, 1 % random loss",
            "The paper: both algorithms keep high rates under 1 % loss (neither uses loss as a congestion signal); "
            "the gap in BQL's favour grows with RTT (both checked in the claims table above).\n\n"
            + table(b)
            + "\n\n"
            + beside(
                SOURCE_FIGURES[5],
                "![bbrlab's Fig. 5: mean goodput and buffer load of BQL and BBR against RTT, 1 Gbit/s, 1 % random "
                "loss](fig5-1g-loss1pct.png)",
            ),
        ),
        (
            "Fig. 6: 10 Gbit/s, 0.7 % random loss",
            claims_table(tengig, source_header="Anhalt BQL paper")
            + "\n\n"
            + _tengig_text(c, tengig[0])
            + "\n\n"
            + table(c)
            + "\n\n"
            + beside(
                SOURCE_FIGURES[6],
                "![bbrlab's Fig. 6: mean goodput and buffer load of BQL and BBR against RTT, 10 Gbit/s, 0.7 % "
                "random loss](fig6-10g-loss07pct.png)",
            ),
        ),
    ]


__all__ = [
    "PAPER",
    "PLANS",
    "SOURCE_FIGURES",
    "Plan",
    "claims",
    "report_sections",
    "run",
    "tengig_claims",
]
