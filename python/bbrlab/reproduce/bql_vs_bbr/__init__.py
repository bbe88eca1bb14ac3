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

# The study is split by job, a module each: plan (its sizes and the paper's numbers), experiments
# (the simulations of the three parts), metrics (goodput, utilization and queue statistics per run),
# figures, central_claim (the paper's central claim and its rule, which bql_kernel.py shares),
# verdicts (the paper's claims checked), prose (explanations computed from the numbers) and
# sections (the report, a section each). This module keeps the study's description above, which
# its report quotes (and bql_kernel.py's page too), lays out the report and runs the parts in order.

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..analysis import packets_simulated
from ..claims import Claim
from ..context import StudyContext
from ..source_figures import draw_all
from .central_claim import PAPER_VALUES, QUEUE_CLAIM, QUEUE_RULE, smaller_queue_check
from .experiments import run_part
from .figures import SOURCE_FIGURES, _time_figure, _vs_rtt_figure, _vs_rtt_plot
from .metrics import _kb
from .plan import (
    BBR,
    BUFFER,
    CCS,
    GIG,
    PAPER,
    PAPER_QUEUE_SAID,
    PLANS,
    SOURCE,
    TEN_GIG,
    ZERO_RTT_MS,
    Plan,
    _rtt_label,
)
from .prose import _tengig_text
from .sections import _kernel_plan_section, claims_section, fig4_section, fig5_section, fig6_section, time_section
from .verdicts import claims, tengig_claims


def report_sections(
    a: pd.DataFrame, b: pd.DataFrame, c: pd.DataFrame, figs: list[tuple[int, int]], cl: list[Claim], tengig: list[Claim]
) -> list[tuple[str, str]]:
    """The study's report: its description above, then a section per part (sections.py)."""
    return [
        ("Source and setup", __doc__.split("\n", 2)[2]),
        claims_section(a, cl),
        time_section(figs),
        fig4_section(a),
        fig5_section(b),
        fig6_section(c, tengig),
    ]


def run(ctx: StudyContext) -> Path:
    """The simulator's study (`--backend emu` runs bql_kernel.py instead, the catalog's choice)."""
    p = PLANS[ctx.size]
    out = ctx.out_dir

    # Part 1 (Figs 2-4): 1 Gbit/s, 80 MB drop-tail, RTT sweep, no loss.
    a_rows, a = run_part(ctx, p, "rtt", "rtt", GIG, p.rtts_ms, p.dur_s, 0.0, "rtt-sweep.csv")
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
    b_rows, b = run_part(ctx, p, "loss-1g", "loss1g", GIG, p.loss_rtts_ms, p.loss_dur_s, 1.0, "loss-1g.csv")
    _vs_rtt_figure(b, out / "fig5-1g-loss1pct.png", "Fig. 5 redrawn: 1 Gbit/s, 1 % random loss", True, 1e9)

    # Part 3 (Fig 6): 10 Gbit/s, 0.7 % random loss.
    c_rows, c = run_part(ctx, p, "loss-10g", "loss10g", TEN_GIG, p.tengig_rtts_ms, p.tengig_dur_s, 0.7, "loss-10g.csv")
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


__all__ = [
    "BBR",
    "BUFFER",
    "CCS",
    "GIG",
    "PAPER",
    "PAPER_QUEUE_SAID",
    "PAPER_VALUES",
    "PLANS",
    "QUEUE_CLAIM",
    "QUEUE_RULE",
    "SOURCE",
    "SOURCE_FIGURES",
    "ZERO_RTT_MS",
    "Plan",
    "_kb",
    "_rtt_label",
    "_tengig_text",
    "_vs_rtt_plot",
    "claims",
    "report_sections",
    "run",
    "smaller_queue_check",
    "tengig_claims",
]
