"""dc-incast (Waterloo DC study §4.2, Figures 7–8): aggregate throughput of n synchronized flows.

The Waterloo authors started n ∈ 1..20 flows into one receiver together and measured their total
throughput over a 10-s window (``aggregator throughput n 10 10``), 100 samples per n; Figure 7
plots the mean ± 95 % CI against n, Figure 8 the CDF of the 100 samples at n = 20. (Its worker was
told to send for longer than the window and the aggregator stopped measuring after 10 s.)

Here each sample is one simulation: n bulk flows, one per worker, starting within 1 ms of each
other (random per sample: the aggregator's thread start-up), measured over D seconds as
delivered bytes × 8 / D at the receiver — and as the Waterloo DC study's aggregator computed it:
each flow's bytes per microsecond in integer arithmetic, × 8 Mbit/s, summed over the flows
(`tool_reading_bps`). The paper's figures are that reading, so the claims compare it; the exact
aggregate is reported beside it.
"""

# The study is split by job, a module each: plan (its sizes and the Waterloo study's readings),
# experiments (the simulations and their tables), figures, verdicts (the study's claims checked)
# and prose (explanations computed from the numbers). This module keeps the study's description
# above, which its report quotes, runs the parts in order and lays out the report.

from __future__ import annotations

from pathlib import Path

import pandas as pd

from .. import dc_common as dc
from .. import dc_findings
from ..analysis import value
from ..claims import Claim, claims_table
from ..context import StudyContext
from ..report import md_table
from ..source_figures import beside, draw_all
from .experiments import _scenario, _seed_csvs, _slowest_quarter, stats
from .figures import SOURCE_FIGURES, _figures
from .plan import PLANS, SEED_READINGS, SOURCE, Plan, tool_reading_bps
from .prose import _equal_shares_reading_bps, _explain, _measurement, _seed_table
from .verdicts import claims


def run(ctx: StudyContext) -> Path:
    p = PLANS[ctx.size]
    scen = [_scenario(f, cc, n, r, p.dur_s) for f in p.fabrics for cc in dc.CCS for n in p.ns for r in range(p.reps)]
    rows = ctx.run_many("incast", scen)
    pause = dc.assert_lossless(rows, "dc-incast")
    rows = rows.assign(tool_bps=tool_reading_bps(rows["delivered_bytes"], p.dur_s))
    keys = ["fabric", "cc", "n", "rep"]
    runs = rows.groupby(keys, as_index=False).agg(
        delivered=("delivered_bytes", "sum"),
        tool_bps=("tool_bps", "sum"),
        retrans=("retransmits", "sum"),
        rto=("rto_count", "sum"),
        drops=("drops_run", "first"),
        pause=("pause_frames_run", "first"),
        min_flow=("goodput_bps", "min"),
        packets=("data_packets_delivered_run", "first"),
    )
    runs["throughput_bps"] = runs["delivered"] * 8 / p.dur_s
    slow = rows.groupby(keys)["tool_bps"].apply(_slowest_quarter).rename("slow_quarter_bps").reset_index()
    runs = runs.merge(slow, on=keys)
    runs.to_csv(ctx.out_dir / "samples.csv", index=False)
    st = stats(runs)
    st.to_csv(ctx.out_dir / "stats.csv", index=False)
    _seed_csvs(rows, ctx.out_dir)
    _figures(st, runs, p, ctx.out_dir)
    draw_all(SOURCE_FIGURES.values(), ctx.out_dir)
    cl = claims(st, list(p.ns))
    sections = report_sections(st, list(p.ns), pause, cl)
    report = ctx.write_report(
        "dc-incast: throughput of n synchronized flows (Waterloo DC study, Figs 7–8)",
        sections,
        source=SOURCE,
        packets=int(runs["packets"].sum()),
        claims=cl,
    )
    dc_findings.write(ctx.out_dir, ctx.size)  # the mechanism × finding table, once all three have run
    return report


def report_sections(st: pd.DataFrame, ns: list[int], pause: int, cl: list[Claim]) -> list[tuple[str, str]]:
    def g(col: str, f: str, cc: str, n: int) -> float:
        return value(st, col, fabric=f, cc=cc, n=n)

    table = [
        [f, n]
        + [
            f"{dc.fmt_mbps(g('mean_bps', f, cc, n))} ± {g('ci_bps', f, cc, n) / 1e6:.0f} "
            f"(exact {dc.fmt_mbps(g('true_mean_bps', f, cc, n))}, RTOs {g('rto', f, cc, n):.0f}, "
            f"slowest flow {dc.fmt_mbps(g('min_flow_bps', f, cc, n))})"
            for cc in dc.CCS
        ]
        for f in dc.fabrics_in(st)
        for n in ns
    ]
    return [
        ("Source and setup", __doc__.split("\n", 2)[2] + "\n" + dc.__doc__.split("\n", 3)[3]),
        (
            "The Waterloo study's claims beside ours",
            claims_table(cl, source_header="Waterloo DC study (§4.2)")
            + f"\n\nLossless mode: 0 packets dropped in every run (asserted); {pause:,} PAUSE/XON frames sent in total.",
        ),
        ("What changes between the fabrics", _explain(st, ns)),
        (
            "The Waterloo DC study's measurement and worker placement",
            _measurement(st, ns) + "\n\n" + _seed_table(st, ns),
        ),
        (
            "Numbers (the Waterloo DC study's reading, mean ± 95 % CI over samples)",
            md_table(["fabric", "n"] + [dc.CC_LABEL[c] for c in dc.CCS], table)
            + "\n\nEvery sample: `samples.csv`; the Waterloo study's CSV schema (`num_flows,socket_fd,throughput,time`, "
            "total rows): `thru_{cubic,bbr}_<fabric>.csv`.",
        ),
        (
            "Figures",
            beside(
                SOURCE_FIGURES[7],
                "![bbrlab's Fig. 7: aggregate throughput of n synchronized flows against n, mean ± 95 % CI, per "
                "fabric, with the Waterloo DC study's means](fig7-throughput.png)",
            )
            + "\n\n"
            + beside(
                SOURCE_FIGURES[8],
                "![bbrlab's Fig. 8: CDF of the aggregate throughput at the largest n, per fabric](fig8-cdf.png)",
                "the same figure redrawn from this run, at this size's largest n",
            ),
        ),
    ]


__all__ = [
    "PLANS",
    "SEED_READINGS",
    "SOURCE_FIGURES",
    "Plan",
    "_equal_shares_reading_bps",
    "_explain",
    "_measurement",
    "claims",
    "report_sections",
    "run",
    "stats",
    "tool_reading_bps",
]
