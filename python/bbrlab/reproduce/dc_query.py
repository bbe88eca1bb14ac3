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

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..plots.figures import save, subplots
from ..results.display import fmt_seconds
from . import dc_common as dc
from . import dc_findings
from .analysis import Estimate, mean_ci, p95, packets_simulated, sign_of_difference, value
from .claims import Claim, all_of, cell, check, check_sign, check_within, claims_table, num, times, verdict_of_all
from .context import Size, StudyContext
from .report import md_table
from .scenarios import Flow, QueryApp, StudyRun, study_run
from .sentences import at, between, compare, join
from .source_figures import SourceFigure, beside
from .sources import WATERLOO_DC

SOURCE = WATERLOO_DC

_QUERY = (
    "The aggregator requests 1 MiB in all from n workers (1/n MiB each); the response time is the time to "
    "receive all n answers; 100 samples per n, Linux 4.13, Mellanox SX1012 lossless cut-through ToR switches."
)
_NO_NUMBERS = " The report gives no values (the figure's numbers are not in its text)."


def _waterloo(no: int, caption: str, shows: str) -> SourceFigure:
    return SourceFigure(SOURCE, f"Figure {no}", caption, f"{shows} {_QUERY}{_NO_NUMBERS}")


#: The Waterloo DC study's figures this study redraws, by the file of ours that redraws each (each
#: study has this table: the report tests read it). Captions quoted from the report.
SOURCE_FIGURES = {
    "fig1-mean-no-bg": _waterloo(
        1,
        "Mean query latency ± 95 % CI in the absence of background traffic averaged over 100 samples. "
        "Performance is similar between TCP BBR and TCP Cubic.",
        "mean query latency against the number of workers n (1 to 40), TCP BBR and TCP Cubic.",
    ),
    "fig2-p95-no-bg": _waterloo(
        2,
        "95th percentile of query latency in the absence of background traffic over 100 samples. Performance is "
        "similar between TCP BBR and TCP Cubic.",
        "the 95th percentile of query latency against n, TCP BBR and TCP Cubic.",
    ),
    "fig3-cdf-no-bg": _waterloo(
        3,
        "CDF of query latency in the absence of background traffic over 100 samples when querying from 20 worker "
        "nodes. Performance is similar between TCP BBR and TCP Cubic.",
        "the CDF of the response times at n = 20. The text: no sign of incast congestion collapse without "
        "background traffic.",
    ),
    "fig4-mean-bg": _waterloo(
        4,
        "Mean query latency with a single long-lived background flow ± 95 % CI averaged over 100 samples. Mean "
        "query latency is significantly shorter for TCP BBR compared with TCP Cubic.",
        "mean query latency against n (up to 20) with one long-lived flow into the aggregator. The text: a "
        "drastic increase in mean and variance; BBR's advantage is largest at small n and the two converge at "
        "high congestion.",
    ),
    "fig5-p95-bg": _waterloo(
        5,
        "95th percentile of query latency with a single long-lived background flow over 100 samples. Queries are "
        "shorter when using TCP BBR than when using TCP Cubic at the 95th percentile of query latency.",
        "the 95th percentile against n with the background flow.",
    ),
    "fig6-cdf-bg": _waterloo(
        6,
        "CDF of query latency with a single long-lived background flow over 100 samples when querying from 20 "
        "worker nodes.",
        "the CDF at n = 20 with the background flow. The text: a greater share of BBR's queries see very low latency.",
    ),
}
QUERY_BYTES = 1 << 20
GAP_S = 0.02
JITTER_S = 50e-6
QUERY_START_S = 0.3
#: A query slower than this counts as collapsed (an RTO is 200 ms; the wire time 8.9 ms).
COLLAPSE_S = 0.05
#: A background-flow query mean this close to n/(n+1) of the port's wire time counts as that share.
SHARE_TOLERANCE = 0.15


@dataclass(frozen=True)
class Plan:
    reps: int  # queries per (fabric, algorithm, n, background)
    ns_nobg: tuple[int, ...]
    ns_bg: tuple[int, ...]
    n_cdf: int  # the n of the CDF figures (the study's: 20)
    fabrics: tuple[str, ...] = tuple(dc.FABRICS)


PLANS = {
    # 6 queries: the shortest run (lossless, no background) still spans one 1-s sample.
    Size.TINY: Plan(reps=6, ns_nobg=(1, 20), ns_bg=(1, 20), n_cdf=20),
    Size.QUICK: Plan(reps=10, ns_nobg=(1, 5, 10, 20), ns_bg=(1, 5, 10, 20), n_cdf=20, fabrics=dc.QUICK_FABRICS),
    Size.FULL: Plan(
        reps=100,
        ns_nobg=(1, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 24, 28, 32, 36, 40),
        ns_bg=(1, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20),
        n_cdf=20,
    ),
}


def _scenario(fabric: str, cc: str, n: int, reps: int, bg: bool, seed: int) -> StudyRun:
    # Budget per query for the run's length: generous where queries can hit RTOs; queries still
    # running at the end are counted as censored, those never started as such.
    per_query = 0.1 if dc.is_lossless(fabric) else (1.0 if bg else 2.0)
    duration_s = round(QUERY_START_S + reps * (GAP_S + per_query), 3)  # to the millisecond
    return study_run(
        f"dc-query-{fabric}-{cc}-n{n}{'-bg' if bg else ''}",
        duration_s=duration_s,
        seed=seed,
        sample_interval_s=0.1 if bg else 1.0,
        topology=dc.topology(fabric, n + 1),
        flows=[Flow(cc, sender=n)] if bg else [],
        apps=[
            QueryApp(
                workers=n,
                size_bytes=QUERY_BYTES,
                repetitions=reps,
                start_s=QUERY_START_S,
                gap_s=GAP_S,
                jitter_s=JITTER_S,
                flow=Flow(cc),
            )
        ],
        tags={"fabric": fabric, "cc": cc, "n": n, "bg": bg, "reps": reps},
    )


def _queries(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per query that started: fabric, bg, cc, n, run, query, response_s, censored.

    A query still running when the run ends is *censored*: its response time is only known to be
    at least ``response_s`` = the run's end − its first transfer's start (a lower bound, since the
    transfers start after the query). Queries that never started (the previous one had not
    finished) have no row; `_stats` counts them from the requested number."""
    a = rows[rows["app"] >= 0]
    q = a.groupby(["fabric", "bg", "cc", "n", "run", "query"], as_index=False).agg(
        response_s=("query_response_s", "first"), first_start_s=("start_s", "min"), last_end_s=("end_s", "max")
    )
    q["censored"] = ~np.isfinite(q["response_s"])
    # An unfinished transfer's end_s is the run's end (the flows table's definition).
    q.loc[q["censored"], "response_s"] = q["last_end_s"] - q["first_start_s"]
    return q.drop(columns=["first_start_s", "last_end_s"])


def completed(q: pd.DataFrame) -> pd.DataFrame:
    """The queries that finished (the only ones with a response time; the Waterloo DC study's CSVs
    hold these)."""
    return q[~q["censored"]]


def _stats(q: pd.DataFrame, rows: pd.DataFrame) -> pd.DataFrame:
    """Per (fabric, bg, cc, n): latency statistics of the completed queries, and how many queries
    they rest on: ``completed`` of ``requested``, ``censored`` (running at the run's end, at least
    ``censored_min_s`` each) and ``not_started``."""
    out = []
    reps = rows.groupby(["fabric", "bg", "cc", "n"])["reps"].first()
    for key, g in q.groupby(["fabric", "bg", "cc", "n"]):
        done, cens = g[~g["censored"]]["response_s"], g[g["censored"]]["response_s"]
        m, ci = mean_ci(done) if len(done) else (math.nan, math.nan)
        out.append(
            dict(
                zip(["fabric", "bg", "cc", "n"], key),
                mean_s=m,
                ci_s=ci,
                p95_s=p95(done) if len(done) else math.nan,
                median_s=float(done.median()) if len(done) else math.nan,
                completed=len(done),
                censored=len(cens),
                censored_min_s=float(cens.min()) if len(cens) else math.nan,
                not_started=int(reps[key]) - len(g),
                requested=int(reps[key]),
            )
        )
    return pd.DataFrame(out)


def rests_on(st: pd.DataFrame, **where: object) -> str:
    """ "" when every requested query finished, else what a statistic rests on: "rests on 1 of 10
    queries; 1 censored at the run's end (≥ 2.1 s); 8 never started"."""
    done, req = value(st, "completed", **where), value(st, "requested", **where)
    if not math.isfinite(done + req) or done == req:
        return ""  # not run, or every query finished
    done, req = int(done), int(req)
    cens, never = int(value(st, "censored", **where)), int(value(st, "not_started", **where))
    parts = [f"rests on {done} of {req} queries"]
    if cens:
        parts.append(f"{cens} censored at the run's end (≥ {fmt_seconds(value(st, 'censored_min_s', **where))})")
    if never:
        parts.append(f"{never} never started")
    return "; ".join(parts)


def _vs_n(st: pd.DataFrame, bg: bool, metric: str, path: Path, title: str) -> None:
    fabrics = dc.fabrics_in(st)
    fig, axes = subplots(1, len(fabrics), figsize=(5.5 * len(fabrics), 4), squeeze=False)
    for ax, fabric in zip(axes[0], fabrics):
        d = st[(st["fabric"] == fabric) & (st["bg"] == bg)]
        for cc in dc.CCS:
            c = d[d["cc"] == cc].sort_values("n")
            if metric == "mean":
                ax.errorbar(
                    c["n"],
                    c["mean_s"] * 1e3,
                    yerr=c["ci_s"].fillna(0) * 1e3,
                    marker="o",
                    ms=3,
                    capsize=3,
                    color=dc.CC_COLOR[cc],
                    label=dc.CC_LABEL[cc],
                )
            else:
                ax.plot(c["n"], c["p95_s"] * 1e3, marker="o", ms=3, color=dc.CC_COLOR[cc], label=dc.CC_LABEL[cc])
        ax.set_title(dc.FABRIC_LABEL[fabric], fontsize=10)
        ax.set_xlabel("number of workers (n)")
        ax.set_ylabel("query latency (ms)" + (" — mean ± 95 % CI" if metric == "mean" else " — 95th percentile"))
        col = "mean_s" if metric == "mean" else "p95_s"
        hi = float((d[col] + (d["ci_s"].fillna(0) if metric == "mean" else 0)).max()) * 1e3 if len(d) else 1.0
        lo = float(d[col].min()) * 1e3 if len(d) else 0.0
        if lo > 0 and hi > 20 * lo:
            ax.set_yscale("log")
            ax.set_ylim(lo / 1.5, hi * 1.5)
        else:
            ax.set_ylim(0, hi * 1.15)
        ax.grid(alpha=0.3)
        ax.legend()
    fig.suptitle(title)
    save(fig, path)


def _cdf(q: pd.DataFrame, bg: bool, n: int, path: Path, title: str) -> None:
    fabrics = dc.fabrics_in(q)
    fig, axes = subplots(1, len(fabrics), figsize=(5.5 * len(fabrics), 4), squeeze=False)
    for ax, fabric in zip(axes[0], fabrics):
        d = q[(q["fabric"] == fabric) & (q["bg"] == bg) & (q["n"] == n)]
        for cc in dc.CCS:
            x = np.sort(d[d["cc"] == cc]["response_s"].to_numpy() * 1e3)
            if x.size:
                ax.step(
                    x, np.arange(1, x.size + 1) / x.size, where="post", color=dc.CC_COLOR[cc], label=dc.CC_LABEL[cc]
                )
        ax.set_title(dc.FABRIC_LABEL[fabric], fontsize=10)
        ax.set_xlabel("query latency (ms)")
        ax.set_ylabel("ECDF")
        if len(d) and d["response_s"].max() > 20 * d["response_s"].min():
            ax.set_xscale("log")
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend()
    fig.suptitle(title)
    save(fig, path)


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
    # The Waterloo study's own CSV schema: num_workers,query_size,response_time (µs).
    for fabric in p.fabrics:
        for bg in (False, True):
            for cc in dc.CCS:
                d = q[(q["fabric"] == fabric) & (q["bg"] == bg) & (q["cc"] == cc)]
                pd.DataFrame(
                    {
                        "num_workers": d["n"],
                        "query_size": QUERY_BYTES,
                        "response_time": (d["response_s"] * 1e6).round().astype(int),
                    }
                ).to_csv(ctx.out_dir / f"query_{dc.CSV_CC[cc]}{'_bg' if bg else ''}_{fabric}.csv", index=False)
    n = p.n_cdf
    out = ctx.out_dir
    _vs_n(st, False, "mean", out / "fig1-mean-no-bg.png", "Fig 1: mean query latency ± 95 % CI, no background traffic")
    _vs_n(
        st, False, "p95", out / "fig2-p95-no-bg.png", "Fig 2: 95th percentile of query latency, no background traffic"
    )
    _cdf(q, False, n, out / "fig3-cdf-no-bg.png", f"Fig 3: CDF of query latency, n = {n}, no background traffic")
    _vs_n(st, True, "mean", out / "fig4-mean-bg.png", "Fig 4: mean query latency ± 95 % CI, one background flow")
    _vs_n(st, True, "p95", out / "fig5-p95-bg.png", "Fig 5: 95th percentile of query latency, one background flow")
    _cdf(q, True, n, out / "fig6-cdf-bg.png", f"Fig 6: CDF of query latency, n = {n}, one background flow")
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


def _ratio(st: pd.DataFrame, fabric: str, bg: bool, n: int, col: str = "mean_s") -> float:
    """BBR / CUBIC of a statistic."""
    return value(st, col, fabric=fabric, bg=bg, cc=dc.BBR, n=n) / value(st, col, fabric=fabric, bg=bg, cc="cubic", n=n)


def _fmt_ratio(r: float) -> str:
    """A ratio in a sentence; "–" where one algorithm finished no query (its basis says so)."""
    return f"{r:.2f}" if math.isfinite(r) else "–"


def _basis(st: pd.DataFrame, fabric: str, bg: bool, n: int) -> str:
    """What a BBR/CUBIC ratio rests on where not every query finished: "; BBR: rests on 1 of 10 …"."""
    parts = [f"{dc.CC_NAME[cc]}: {b}" for cc in dc.CCS if (b := rests_on(st, fabric=fabric, bg=bg, cc=cc, n=n))]
    return "".join(f"; {x}" for x in parts)


def _estimate(st: pd.DataFrame, fabric: str, bg: bool, cc: str, n: int) -> Estimate:
    """Mean query latency with its 95 % CI over the completed queries, as `_stats` computed it."""
    done = value(st, "completed", fabric=fabric, bg=bg, cc=cc, n=n)
    return Estimate(
        value(st, "mean_s", fabric=fabric, bg=bg, cc=cc, n=n),
        value(st, "ci_s", fabric=fabric, bg=bg, cc=cc, n=n),
        int(done) if math.isfinite(done) else 0,
    )


#: A latency difference counts when significant (95 %, Welch's t) and at least this share of CUBIC's
#: mean: the 1 % within which the lossless fabric is called algorithm-blind.
MATERIAL = 0.01


def _bbr_vs_cubic(st: pd.DataFrame, fabric: str, bg: bool, ns: Sequence[int]) -> dict[int, int | None]:
    """Per n: +1 when BBR's mean latency is above CUBIC's (significantly, by ≥ 1 %), −1 below, 0 neither."""
    return {
        n: sign_of_difference(
            _estimate(st, fabric, bg, dc.BBR, n), _estimate(st, fabric, bg, "cubic", n), min_rel=MATERIAL
        )
        for n in ns
    }


def claims(st: pd.DataFrame, p: Plan) -> list[Claim]:
    """The Waterloo study's §4.1 claims, checked on each fabric."""
    nmax, bgmax = max(p.ns_nobg), max(p.ns_bg)
    mid = min(p.ns_bg, key=lambda n: abs(n - 5))
    shown = sorted({1, mid, bgmax})
    out = []
    for fabric in dc.fabrics_in(st):
        where = f" — {dc.FABRIC_LABEL[fabric]}"

        def mean(bg: bool, cc: str, n: int, fabric: str = fabric) -> float:
            return value(st, "mean_s", fabric=fabric, bg=bg, cc=cc, n=n)

        grow = {cc: mean(False, cc, nmax) / mean(False, cc, 1) for cc in dc.CCS}
        same = _ratio(st, fabric, False, nmax)
        out.append(
            Claim(
                "no incast collapse without background traffic (n up to 40)" + where,
                "same latency for n = 1..40, BBR ≈ CUBIC",
                f"n = {nmax}: CUBIC {fmt_seconds(mean(False, 'cubic', nmax))}, BBR {fmt_seconds(mean(False, dc.BBR, nmax))}: "
                f"{grow['cubic']:.2f}× (CUBIC) and {grow[dc.BBR]:.2f}× (BBR) the n = 1 mean; BBR/CUBIC = {same:.2f}",
                f"mean at n = {nmax} ≤ 1.5× the n = 1 mean, per algorithm; BBR/CUBIC there within 1.5× either way",
                verdict_of_all(
                    [
                        check_within(
                            g, 0, 1.5, f"mean at n = {nmax} is {{}} the n = 1 mean", times, where=dc.CC_NAME[cc]
                        )
                        for cc, g in grow.items()
                    ]
                    + [check_within(same, 1 / 1.5, 1.5, f"BBR/CUBIC at n = {nmax} is {{}}", times, where="BBR/CUBIC")]
                ),
                paper_value="same latency for n = 1..40, BBR ≈ CUBIC",
                bbrlab_value=cell(
                    num(1e3 * mean(False, cc, 1), "ms", label=f"{cc} n = 1 → {nmax}", to=1e3 * mean(False, cc, nmax))
                    for cc in dc.CCS
                ),
            )
        )
        slow = {cc: mean(True, cc, 1) / mean(False, cc, 1) for cc in dc.CCS}
        sd = {(cc, bg): _estimate(st, fabric, bg, cc, 1).sd for cc in dc.CCS for bg in (False, True)}
        out.append(
            Claim(
                "a background flow raises mean latency and variance drastically" + where,
                "drastic increase",
                f"n = 1: CUBIC {fmt_seconds(mean(True, 'cubic', 1))}, BBR {fmt_seconds(mean(True, dc.BBR, 1))}: mean "
                f"×{slow['cubic']:.2f} (CUBIC), ×{slow[dc.BBR]:.2f} (BBR) of the mean without; standard deviation "
                + ", ".join(
                    f"{fmt_seconds(sd[(cc, False)])} → {fmt_seconds(sd[(cc, True)])} ({dc.CC_NAME[cc]})"
                    for cc in dc.CCS
                ),
                "n = 1 mean with background ≥ 1.5× (raises) and ≥ 5× (drastically) the mean without, and a larger "
                "standard deviation, per algorithm",
                verdict_of_all(
                    [
                        check(
                            x,
                            "≥",
                            1.5,
                            "mean with background {} the mean without",
                            times,
                            where=f"{dc.CC_NAME[cc]} raises",
                        )
                        for cc, x in slow.items()
                    ]
                    + [
                        check(
                            x,
                            "≥",
                            5,
                            "mean with background {} the mean without",
                            times,
                            where=f"{dc.CC_NAME[cc]} drastically",
                        )
                        for cc, x in slow.items()
                    ]
                    + [
                        check(
                            sd[(cc, True)],
                            ">",
                            sd[(cc, False)],
                            "standard deviation {} with background vs {limit} without",
                            fmt_seconds,
                            where=f"{dc.CC_NAME[cc]} variance",
                        )
                        for cc in dc.CCS
                    ]
                ),
                paper_value="drastic increase",
                bbrlab_value=cell(
                    [num(slow[cc], "×", label=f"{cc} mean with/without") for cc in dc.CCS]
                    + [
                        num(
                            1e3 * sd[(cc, False)],
                            "ms",
                            label=f"{cc} standard deviation without → with",
                            to=1e3 * sd[(cc, True)],
                        )
                        for cc in dc.CCS
                    ]
                ),
            )
        )
        r1, r1p, rmax = (
            _ratio(st, fabric, True, 1),
            _ratio(st, fabric, True, 1, "p95_s"),
            _ratio(st, fabric, True, bgmax),
        )
        lower1 = _bbr_vs_cubic(st, fabric, True, [1])[1]
        out.append(
            Claim(
                "with background: BBR below CUBIC in mean and p95, most at small n" + where,
                "BBR significantly lower",
                "BBR/CUBIC mean = "
                + ", ".join(
                    f"{_fmt_ratio(_ratio(st, fabric, True, n))} (n = {n}{_basis(st, fabric, True, n)})" for n in shown
                )
                + f"; p95 {_fmt_ratio(r1p)} (n = 1)",
                f"at n = 1 BBR/CUBIC < 0.9 in mean (and significantly lower, 95 %, Welch's t) and in p95; BBR's lead "
                f"(mean ratio < 1) at n = 1 at least as large as at n = {bgmax}",
                verdict_of_all(
                    [
                        all_of(
                            check(r1, "<", 0.9, "BBR/CUBIC mean {}", _fmt_ratio),
                            check_sign(
                                lower1,
                                -1,
                                compare(
                                    "BBR's mean",
                                    "CUBIC's",
                                    {1: lower1},
                                    more="significantly above",
                                    less="significantly below",
                                ),
                            ),
                            where="n = 1 mean",
                        ),
                        check(r1p, "<", 0.9, "BBR/CUBIC p95 {}", _fmt_ratio, where="n = 1 p95"),
                        all_of(
                            check(r1, "<", 1, "BBR/CUBIC mean {} at n = 1", _fmt_ratio),
                            check(
                                r1, "≤", rmax, f"BBR/CUBIC mean {{}} at n = 1 vs {{limit}} at n = {bgmax}", _fmt_ratio
                            ),
                            where="lead most at small n",
                        ),
                    ]
                ),
                paper_value="BBR significantly lower",
                bbrlab_value=cell(
                    [num(_ratio(st, fabric, True, n), label=f"BBR/CUBIC mean n = {n}") for n in shown]
                    + [num(r1p, label="BBR/CUBIC p95 n = 1")]
                ),
            )
        )
    return out


def _explain(st: pd.DataFrame, p: Plan) -> str:
    """What happens on each fabric, every statement computed from the table."""
    L, S = "lossless", "store-and-forward"
    nmax = max(p.ns_nobg)
    floor_s = QUERY_BYTES * 8 / dc.CEILING_BPS
    lossless = st[st["fabric"] == L]
    ratios = [
        _ratio(st, L, bool(bg), int(n)) for bg, n in lossless[["bg", "n"]].drop_duplicates().itertuples(index=False)
    ]
    lo_r, hi_r = min(ratios), max(ratios)
    blind = max(abs(lo_r - 1), abs(hi_r - 1)) < MATERIAL
    nobg = lossless[~lossless["bg"]]["mean_s"]
    measured = between(nobg.min(), nobg.max(), fmt_seconds)
    handful = ", its wire time plus a handful of RTTs," if nobg.max() < 1.5 * floor_s else ""
    # Against one background flow a query's n workers get n/(n+1) of the port if PAUSE shares it per
    # ingress link: its wire time grows by (n+1)/n.
    bg_l = lossless[lossless["bg"]]
    share_err = ((bg_l["mean_s"] / (floor_s * (bg_l["n"] + 1) / bg_l["n"])) - 1).abs()
    per_link = (
        f", and against one background flow n/(n+1) of the port (every mean within {share_err.max():.0%} of "
        "that share's wire time)"
        if len(share_err) and share_err.max() < SHARE_TOLERANCE
        else ""
    )
    if blind:
        lossless_text = f"""**Why the lossless fabric is algorithm-blind here.** On the lossless fabric no packet is lost, so
neither algorithm ever reduces its window for loss; every response sender and the background
sender keep their NIC queue non-empty (CUBIC because its window only grows; BBRv1 because Linux
4.13 adds 3 TSO bursts — ~130 segments at 1 Gbit/s — to its 2·BDP window, on a path whose BDP is
only ~6 KB, and paces at ≥ 1.0 × its bandwidth estimate). The switch port above XOFF pauses
*all* its ingress links at once and they resume together, so the port is shared per ingress
link, packet by packet, whatever the algorithm does. A 1 MiB query takes {measured}{handful} with no
background flow (its wire time is {fmt_seconds(floor_s)}){per_link} — identical for both algorithms (BBR/CUBIC
mean within {MATERIAL * 100:g} % at every n, with and without background). So in this model the Waterloo study's BBR
advantage with a background flow cannot come from the PAUSE mechanism (per-port back-pressure from an
egress queue); it needs a fabric where the background flow's queue, not the port arbiter, sets the
query's wait — which is what a drop-tail buffer does."""
    else:
        comparisons = [
            compare(
                "BBRv1's mean latency",
                "CUBIC's",
                _bbr_vs_cubic(st, L, bg, ns),
                "n",
                more="above",
                less="below",
                same="level with",
            )
            + f" {label}"
            for bg, ns, label in (
                (False, p.ns_nobg, "without background traffic"),
                (True, p.ns_bg, "with one background flow"),
            )
        ]
        lossless_text = (
            f"**The lossless fabric.** No packet is lost (asserted), yet the algorithms differ: BBR/CUBIC "
            f"mean {between(lo_r, hi_r, '{:.2f}'.format)} over the grid; counting a difference that is significant (95 %, Welch's t) and ≥ "
            f"{MATERIAL * 100:g} %, "
            f"{join(comparisons)}. A 1 MiB query takes "
            f"{measured} with no background flow (its wire time is {fmt_seconds(floor_s)})."
        )
    collapse = {}
    for cc in dc.CCS:
        d = st[(st["fabric"] == S) & (~st["bg"]) & (st["cc"] == cc) & (st["mean_s"] > COLLAPSE_S)]
        collapse[cc] = f"n = {int(d['n'].min())}" if len(d) else f"never (up to n = {nmax})"
    if any(c.startswith("n =") for c in collapse.values()):
        incast = (
            "the shallow buffer produces the classic incast collapse (responses losing their tail, then waiting "
            f"for a 200 ms RTO): the first n whose mean exceeds {COLLAPSE_S * 1e3:.0f} ms is {collapse['cubic']} "
            f"for CUBIC and {collapse[dc.BBR]} for BBRv1"
        )
    else:
        incast = f"no query mean exceeds {COLLAPSE_S * 1e3:.0f} ms up to n = {nmax}: no incast collapse in this grid"
    bg_sf = st[(st["fabric"] == S) & st["bg"]]
    slow_bg = {
        cc: sorted(int(n) for n in bg_sf[(bg_sf["cc"] == cc) & (bg_sf["mean_s"] > COLLAPSE_S)]["n"]) for cc in dc.CCS
    }
    if any(slow_bg.values()):
        why = (
            f". Query means exceed {COLLAPSE_S * 1e3:.0f} ms (an RTO's worth) "
            + join(f"{at('n', ns) if ns else 'at no n'} for {dc.CC_NAME[cc]}" for cc, ns in slow_bg.items())
            + ": new connections lose packets of their initial window to the background flow's queue and wait for "
            "retransmission timeouts."
        )
    else:
        why = f". No query mean exceeds {COLLAPSE_S * 1e3:.0f} ms (an RTO's worth) with the background flow."
    sf_bg = compare(
        "BBRv1's mean latency",
        "CUBIC's",
        _bbr_vs_cubic(st, S, True, p.ns_bg),
        "n",
        more="above",
        less="below",
        same="level with",
    )
    return f"""
{lossless_text}

**On the store-and-forward fabric** {incast}. With a background flow mean latencies range from
{between(bg_sf["mean_s"].min(), bg_sf["mean_s"].max(), fmt_seconds)}{why} Counting a difference that is significant (95 %, Welch's t) and ≥ {MATERIAL * 100:g} %, {sf_bg}.
"""


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


#: What each of our figures draws (its alt text).
_OUR_FIGURE = {
    "fig1-mean-no-bg": "mean query latency ± 95 % CI against the number of workers, no background traffic",
    "fig2-p95-no-bg": "95th percentile of query latency against the number of workers, no background traffic",
    "fig3-cdf-no-bg": "CDF of query latency at the largest number of workers, no background traffic",
    "fig4-mean-bg": "mean query latency ± 95 % CI against the number of workers, one background flow",
    "fig5-p95-bg": "95th percentile of query latency against the number of workers, one background flow",
    "fig6-cdf-bg": "CDF of query latency at the largest number of workers, one background flow",
}


__all__ = ["PLANS", "SOURCE_FIGURES", "Plan", "claims", "report_sections", "run"]
