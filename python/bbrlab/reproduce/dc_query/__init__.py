"""dc-query (Waterloo DC study §4.1, Figures 1–6): partition/aggregate query latency.

The Waterloo aggregator asked n workers for 1 MiB / n bytes each over new connections and timed
until every response had arrived (``aggregator query``: the connections are accepted before the
clock starts, so the handshake is outside the response time), 100 queries per n: n = 1..40
without background traffic, n = 1..20 with one long-lived iperf flow into the aggregator. It plots
the mean ± 95 % CI against n, the 95th percentile against n, and the CDF at n = 20.

Here each (fabric, algorithm, n) is one simulation with k queries in sequence (20 ms apart; each
request leaves after a random 0–50 µs thread start-up delay). The background flow runs from its
own host (as the study's 10.0.3.14) from t = 0; queries start at 0.3 s. Both the queries and the
background flow use the algorithm under test (the study switched the whole system).
"""

# The study is split by job, a module each: plan (its sizes and the query), experiments (the
# simulations, one row per query, the per-point statistics and the Waterloo study's CSVs), metrics
# (what a statistic rests on, BBR against CUBIC), figures, verdicts (the study's claims checked) and
# prose (explanations computed from the numbers). This module keeps the study's description above,
# which its report quotes, runs the parts in order and lays out the report.

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ...results.display import fmt_seconds
from .. import dc_common as dc
from .. import dc_findings
from ..analysis import packets_simulated, value
from ..claims import Claim, claims_table
from ..context import StudyContext
from ..report import md_table
from ..source_figures import beside
from .experiments import _queries, _scenario, _stats, _waterloo_csvs, completed
from .figures import _OUR_FIGURE, SOURCE_FIGURES, _figures
from .metrics import rests_on
from .plan import PLANS, QUERY_BYTES, SOURCE, Plan
from .prose import _explain
from .verdicts import claims


def run(ctx: StudyContext) -> Path:
    p = PLANS[ctx.size]
    scen = [
        _scenario(fabric, cc, n, p.reps, bg, seed=1000 + n)
        for fabric in p.fabrics
        for bg, ns in ((False, p.ns_nobg), (True, p.ns_bg))
        for cc in dc.CCS
        for n in ns
    ]
    rows = ctx.run_many("queries", scen)
    pause = dc.assert_lossless(rows, "dc-query")
    q_all = _queries(rows)
    st = _stats(q_all, rows)
    q_all.to_csv(ctx.out_dir / "queries.csv", index=False)
    q = completed(q_all)
    st.to_csv(ctx.out_dir / "stats.csv", index=False)
    _waterloo_csvs(q, p, ctx.out_dir)
    _figures(st, q, p, ctx.out_dir)
    cl = claims(st, p)
    report = ctx.write_report(
        "dc-query: partition/aggregate query latency (Waterloo DC study, Figs 1–6)",
        report_sections(st, p, pause, cl),
        source=SOURCE,
        packets=packets_simulated(rows),
        claims=cl,
    )
    dc_findings.write(ctx.out_dir, ctx.size)  # the mechanism × finding table, once all three have run
    return report


def report_sections(st: pd.DataFrame, p: Plan, pause: int, cl: list[Claim]) -> list[tuple[str, str]]:
    def cell(fabric: str, bg: bool, cc: str, n: int) -> str:
        m = value(st, "mean_s", fabric=fabric, bg=bg, cc=cc, n=n)
        q95 = value(st, "p95_s", fabric=fabric, bg=bg, cc=cc, n=n)
        basis = rests_on(st, fabric=fabric, bg=bg, cc=cc, n=n)
        return f"{fmt_seconds(m)} / {fmt_seconds(q95)}" + (f" ({basis})" if basis else "")

    table = []
    for fabric in dc.fabrics_in(st):
        for bg, ns in ((False, p.ns_nobg), (True, p.ns_bg)):
            for n in [x for x in (1, 5, 10, 20, 40) if x in ns]:
                table.append([fabric, "yes" if bg else "no", n] + [cell(fabric, bg, cc, n) for cc in dc.CCS])
    floor_s = QUERY_BYTES * 8 / dc.CEILING_BPS
    return [
        ("Source and setup", __doc__.split("\n", 2)[2] + "\n" + dc.__doc__.split("\n", 3)[3]),
        (
            "The Waterloo study's claims beside ours",
            claims_table(cl, source_header="Waterloo DC study (§4.1)")
            + "\n\nPhysical floor of one 1 MiB query at 1 GbE: "
            + f"{floor_s * 1e3:.2f} ms of wire time + one RTT."
            + f"\n\nLossless mode: 0 packets dropped in every run (asserted); {pause:,} PAUSE/XON frames sent in total.",
        ),
        ("What changes between the fabrics", _explain(st, p)),
        (
            "Numbers (mean / 95th percentile)",
            md_table(["fabric", "background", "n"] + [dc.CC_LABEL[c] for c in dc.CCS], table)
            + "\n\nStatistics are over the completed queries; where some did not finish, the cell says how many "
            "the statistic rests on: a query still running when the run ended is counted as censored (its response "
            "time is at least the time it had run), and queries that never started are counted too. "
            "\n\nAll points: `stats.csv`; every query that started: `queries.csv` (`censored` marks the "
            "unfinished, with the lower bound as `response_s`); the Waterloo study's CSV schema "
            "(`num_workers,query_size,response_time` in µs): `query_{cubic,bbr}[_bg]_<fabric>.csv`.",
        ),
        (
            "Figures",
            "\n\n".join(
                beside(sf, f"![bbrlab's {sf.figure}: {_OUR_FIGURE[f]}, per fabric]({f}.png)")
                for f, sf in SOURCE_FIGURES.items()
            ),
        ),
    ]


__all__ = [
    "PLANS",
    "SOURCE_FIGURES",
    "Plan",
    "_explain",
    "_queries",
    "_stats",
    "claims",
    "completed",
    "report_sections",
    "rests_on",
    "run",
]
