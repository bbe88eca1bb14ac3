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

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ...plots.figures import save, subplots
from .. import dc_common as dc
from .. import dc_findings
from ..analysis import Estimate, difference, mean_ci, sign_of_difference, value
from ..claims import Claim, Verdict, above, below, cell, claims_table, is_sign, num, untested, verdict_of_all
from ..context import Size, StudyContext
from ..report import md_table
from ..scenarios import Flow, StudyRun, study_run
from ..sentences import change, compare, direction, join, reproduces
from ..sources import WATERLOO_DC

SOURCE = WATERLOO_DC


@dataclass(frozen=True)
class Plan:
    ns: tuple[int, ...]  # numbers of senders
    reps: int  # samples per (fabric, algorithm, n)
    dur_s: float  # measurement window = run length
    fabrics: tuple[str, ...] = tuple(dc.FABRICS)


PLANS = {
    Size.TINY: Plan(ns=(1, 10), reps=2, dur_s=1.0),
    # The n the claims read (1: the reference of the decline; ≥ 10: BBR's lead; 20: Figure 8's
    # fraction), which are also the n the figures report.
    Size.QUICK: Plan(ns=(1, 10, 20), reps=3, dur_s=2.0, fabrics=dc.QUICK_FABRICS),
    Size.FULL: Plan(ns=(1, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20), reps=20, dur_s=10.0),
}

#: "Most samples reach 75 % of the link" (Figure 8's reading) in bit/s.
LINK_75_BPS = 0.75 * 1e9

#: The Waterloo DC study's own numbers: github.com/chowes/data-center-bbr,
#: tests/results/throughput/thru_cubic.csv and thru_bbr.csv (commit e490c96, "Finished throughput
#: tests", 2017-11-26; 100 samples per n), as the aggregator wrote them (`tool_reading_bps`). Per n:
#: the mean total (Mbit/s), the fraction of samples at ≥ 750 Mbit/s, and the mean reading of a
#: sample's ⌊n/4⌋ slowest flows — the number of workers the Waterloo DC study's node list puts in
#: the aggregator's own rack (``dc_common.SEED_WORKER_RACKS``); None below n = 4.
SEED_READINGS: dict[str, dict[int, tuple[float, float, float | None]]] = {
    "cubic": {
        1: (936.0, 1.0, None),
        2: (933.3, 1.0, None),
        3: (928.9, 1.0, None),
        4: (925.6, 1.0, 135.3),
        5: (920.6, 1.0, 74.5),
        6: (912.2, 1.0, 33.7),
        7: (904.6, 1.0, 12.0),
        8: (902.0, 0.99, 47.1),
        9: (880.3, 0.97, 18.2),
        10: (860.2, 0.94, 4.1),
        11: (845.7, 0.88, 0.6),
        12: (837.6, 0.91, 5.8),
        13: (818.3, 0.88, 1.0),
        14: (801.9, 0.79, 0.0),
        15: (809.4, 0.86, 0.0),
        16: (771.1, 0.70, 0.0),
        17: (764.0, 0.68, 0.0),
        18: (761.9, 0.68, 0.0),
        19: (735.8, 0.54, 0.0),
        20: (698.5, 0.42, 0.0),
    },
    dc.BBR: {
        1: (936.0, 1.0, None),
        2: (931.1, 1.0, None),
        3: (928.7, 1.0, None),
        4: (921.0, 1.0, 15.8),
        5: (914.2, 1.0, 5.2),
        6: (909.5, 1.0, 2.9),
        7: (904.6, 1.0, 1.5),
        8: (891.0, 0.99, 0.6),
        9: (889.2, 1.0, 0.2),
        10: (882.1, 1.0, 0.4),
        11: (877.4, 1.0, 0.5),
        12: (867.4, 1.0, 0.3),
        13: (860.1, 0.99, 0.3),
        14: (855.2, 0.99, 0.2),
        15: (842.3, 0.97, 0.2),
        16: (834.3, 0.93, 0.1),
        17: (826.6, 0.95, 0.2),
        18: (814.2, 0.91, 0.1),
        19: (816.6, 0.90, 0.0),
        20: (805.0, 0.92, 0.1),
    },
}


def tool_reading_bps(delivered_bytes: float | np.ndarray, window_s: float) -> float | np.ndarray:
    """A flow's throughput as the Waterloo DC study's aggregator reports it (src/aggregator.cc,
    ``calc_throughput``: ``bytes / usecs`` in integer arithmetic, × ``USECS_PER_SEC /
    BYTES_PER_MBIT`` = 8), in bit/s: whole bytes per microsecond × 8 Mbit/s. A flow loses what
    its rate has beyond a whole byte per µs, up to 8 Mbit/s, so n equal shares of the 941 Mbit/s
    goodput ceiling read 936 Mbit/s at n = 1 and 800 at n = 20."""
    return 8e6 * np.floor(np.asarray(delivered_bytes, dtype=float) / (window_s * 1e6))


def _slowest_quarter(readings: pd.Series) -> float:
    """Mean reading of a sample's ⌊n/4⌋ slowest flows (NaN below n = 4)."""
    k = len(readings) // 4
    return float(np.sort(readings.to_numpy())[:k].mean()) if k else math.nan


def _scenario(fabric: str, cc: str, n: int, rep: int, dur_s: float) -> StudyRun:
    seed = 10_000 * n + rep
    rng = random.Random(seed)
    return study_run(
        f"dc-incast-{fabric}-{cc}-n{n}-r{rep}",
        duration_s=dur_s,
        seed=seed,
        sample_interval_s=1.0,
        topology=dc.topology(fabric, n),
        flows=[Flow(cc, start_s=rng.randrange(0, 1000) * 1e-6) for _ in range(n)],
        tags={"fabric": fabric, "cc": cc, "n": n, "rep": rep, "dur_s": dur_s},
    )


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


def stats(runs: pd.DataFrame) -> pd.DataFrame:
    """Per (fabric, algorithm, n): mean and 95 % CI of the samples as the Waterloo DC study's tool
    read them (``mean_bps``, ``ci_bps``, ``frac75``: what the claims compare with the paper) and of
    the exact aggregate (``true_*``), and what limited them."""
    st = []
    for key, g in runs.groupby(["fabric", "cc", "n"]):
        m, ci = mean_ci(g["tool_bps"])
        tm, tci = mean_ci(g["throughput_bps"])
        st.append(
            dict(
                zip(["fabric", "cc", "n"], key),
                mean_bps=m,
                ci_bps=ci,
                samples=len(g),
                frac75=float((g["tool_bps"] >= LINK_75_BPS).mean()),
                true_mean_bps=tm,
                true_ci_bps=tci,
                true_frac75=float((g["throughput_bps"] >= LINK_75_BPS).mean()),
                rto=float(g["rto"].mean()),
                drops=float(g["drops"].mean()),
                min_flow_bps=float(g["min_flow"].mean()),
                slow_quarter_bps=float(g["slow_quarter_bps"].mean()),
            )
        )
    return pd.DataFrame(st)


def _seed_csvs(rows: pd.DataFrame, out_dir: Path) -> None:
    # The Waterloo study's CSV schema, as its aggregator wrote it: per sample one 'total' row per
    # flow (socket_fd: here the worker) and one 'all' row, in whole Mbit/s (`tool_reading_bps`).
    for fabric in dc.fabrics_in(rows):
        for cc in dc.CCS:
            out = []
            d = rows[(rows["fabric"] == fabric) & (rows["cc"] == cc)]
            for (n, _), g in d.groupby(["n", "rep"], sort=True):
                mbps = (g["tool_bps"] / 1e6).round().astype(int).tolist()
                out += [(n, w, v, "total") for w, v in enumerate(mbps)] + [(n, "all", sum(mbps), "total")]
            pd.DataFrame(out, columns=["num_flows", "socket_fd", "throughput", "time"]).to_csv(
                out_dir / f"thru_{dc.CSV_CC[cc]}_{fabric}.csv", index=False
            )


def _figures(st: pd.DataFrame, runs: pd.DataFrame, p: Plan, out_dir: Path) -> None:
    fabrics = dc.fabrics_in(st)
    fig, axes = subplots(1, len(fabrics), figsize=(5.5 * len(fabrics), 4), squeeze=False)
    for ax, fabric in zip(axes[0], fabrics):
        for cc in dc.CCS:
            c = st[(st["fabric"] == fabric) & (st["cc"] == cc)].sort_values("n")
            ax.errorbar(
                c["n"],
                c["mean_bps"] / 1e6,
                yerr=c["ci_bps"].fillna(0) / 1e6,
                marker="o",
                ms=3,
                capsize=3,
                color=dc.CC_COLOR[cc],
                label=f"{dc.CC_LABEL[cc]}, as the Waterloo DC study's tool reads it",
            )
            ax.plot(
                c["n"],
                c["true_mean_bps"] / 1e6,
                ls="--",
                lw=0.9,
                color=dc.CC_COLOR[cc],
                label=f"{dc.CC_LABEL[cc]}, exact aggregate",
            )
            seed = sorted(SEED_READINGS[cc].items())
            ax.plot(
                [n for n, _ in seed],
                [v[0] for _, v in seed],
                ls="none",
                marker="x",
                ms=4,
                color=dc.CC_COLOR[cc],
                label=f"{dc.CC_LABEL[cc]}, the Waterloo DC study's measurement",
            )
        ax.axhline(dc.CEILING_BPS / 1e6, color="grey", ls="--", lw=0.8, label="goodput ceiling")
        ax.set_title(dc.FABRIC_LABEL[fabric], fontsize=10)
        ax.set_xlabel("number of senders (n)")
        ax.set_ylabel("throughput (Mbit/s), mean ± 95 % CI")
        ax.set_ylim(0, 1000)
        ax.grid(alpha=0.3)
        ax.legend(loc="lower left", fontsize=7)
    fig.suptitle(f"Fig 7: aggregate throughput of n synchronized flows ({p.dur_s:g}-s window)")
    save(fig, out_dir / "fig7-throughput.png")
    n_cdf = max(p.ns)
    fig, axes = subplots(1, len(fabrics), figsize=(5.5 * len(fabrics), 4), squeeze=False)
    for ax, fabric in zip(axes[0], fabrics):
        for cc in dc.CCS:
            x = np.sort(runs[(runs["fabric"] == fabric) & (runs["cc"] == cc) & (runs["n"] == n_cdf)]["tool_bps"] / 1e6)
            ax.step(
                x, np.arange(1, len(x) + 1) / max(len(x), 1), where="post", color=dc.CC_COLOR[cc], label=dc.CC_LABEL[cc]
            )
        ax.axvline(LINK_75_BPS / 1e6, color="grey", ls=":", lw=0.8, label="75 % of 1 Gbit/s")
        ax.set_title(dc.FABRIC_LABEL[fabric], fontsize=10)
        ax.set_xlabel("throughput (Mbit/s)")
        ax.set_ylabel("ECDF")
        ax.grid(alpha=0.3)
        ax.legend(loc="upper left")
    fig.suptitle(
        f"Fig 8: CDF of aggregate throughput as the Waterloo DC study's tool reads it, n = {n_cdf} senders, {p.reps} samples"
    )
    save(fig, out_dir / "fig8-cdf.png")


def _estimate(st: pd.DataFrame, fabric: str, cc: str, n: int) -> Estimate:
    """The mean aggregate throughput at n with its 95 % CI, as `stats` computed it."""
    samples = value(st, "samples", fabric=fabric, cc=cc, n=n)
    return Estimate(
        value(st, "mean_bps", fabric=fabric, cc=cc, n=n),
        value(st, "ci_bps", fabric=fabric, cc=cc, n=n),
        int(samples) if math.isfinite(samples) else 0,
    )


#: A change or lead in throughput counts when it is significant (95 %, Welch's t) and at least this
#: share of the reference mean: near the link's ceiling the samples' intervals shrink to a fraction
#: of a Mbit/s, and a significant 0.1 % is no decline.
MATERIAL = 0.02
SIGNIFICANT = f"significant (95 %, Welch's t) and ≥ {MATERIAL * 100:g} %"


def _trend(st: pd.DataFrame, fabric: str, cc: str, n_max: int) -> int | None:
    """Sign of the change of the mean from n = 1 to n_max (−1: falls), significant and material."""
    return direction(_estimate(st, fabric, cc, 1), _estimate(st, fabric, cc, n_max), tolerance=MATERIAL)


def _lead(st: pd.DataFrame, fabric: str, n: int) -> tuple[float, float, int | None]:
    """BBR − CUBIC mean throughput at n, the half-width of its 95 % CI (Welch), and its sign
    (significant and material)."""
    b, c = _estimate(st, fabric, dc.BBR, n), _estimate(st, fabric, "cubic", n)
    d, hw = difference(b, c)
    return d, hw, sign_of_difference(b, c, min_rel=MATERIAL)


def _big(ns: list[int]) -> list[int]:
    """The n of the Waterloo study's BBR-lead claim (n ≥ 10) in this size's grid."""
    return [n for n in ns if n >= 10]


def claims(st: pd.DataFrame, ns: list[int]) -> list[Claim]:
    """The Waterloo study's §4.2 claims, checked on each fabric."""
    n_cdf = max(ns)
    big = _big(ns)
    out = []
    for fabric in dc.fabrics_in(st):

        def g(col: str, cc: str, n: int, fabric: str = fabric) -> float:
            return value(st, col, fabric=fabric, cc=cc, n=n)

        where = f" — {dc.FABRIC_LABEL[fabric]}"
        out.append(
            Claim(
                "throughput falls as n grows, for both" + where,
                "yes",
                f"CUBIC {dc.fmt_mbps(g('mean_bps', 'cubic', 1))} → {dc.fmt_mbps(g('mean_bps', 'cubic', n_cdf))}, "
                f"BBR {dc.fmt_mbps(g('mean_bps', dc.BBR, 1))} → {dc.fmt_mbps(g('mean_bps', dc.BBR, n_cdf))} (n = 1 → {n_cdf})",
                f"the Waterloo DC study's reading: mean at n = {n_cdf} below n = 1, the drop {SIGNIFICANT} of the n = 1 mean, per "
                "algorithm",
                verdict_of_all(is_sign(_trend(st, fabric, cc, n_cdf), -1) for cc in dc.CCS),
                paper_value="falls",
                bbrlab_value=cell(
                    num(
                        g("mean_bps", cc, 1) / 1e6,
                        "Mbit/s",
                        label=f"{cc} n = 1 → {n_cdf}",
                        to=g("mean_bps", cc, n_cdf) / 1e6,
                    )
                    for cc in dc.CCS
                ),
            )
        )
        claim = "BBR significantly ahead of CUBIC for n ≥ 10" + where
        rule = f"the Waterloo DC study's reading: BBR − CUBIC above 0, {SIGNIFICANT} of CUBIC's mean, at each n ≥ 10"
        if big:
            leads = {n: _lead(st, fabric, n) for n in big}
            out.append(
                Claim(
                    claim,
                    "yes",
                    "BBR − CUBIC: "
                    + ", ".join(f"n = {n}: {d / 1e6:+.0f} ± {hw / 1e6:.0f}" for n, (d, hw, _) in leads.items())
                    + " Mbit/s",
                    rule,
                    verdict_of_all(is_sign(sign, 1) for _, _, sign in leads.values()),
                    paper_value="ahead",
                    bbrlab_value=cell(
                        num(d / 1e6, "Mbit/s", label=f"n = {n}", ci=hw / 1e6) for n, (d, hw, _) in leads.items()
                    ),
                )
            )
        else:
            out.append(untested(claim, "yes", rule, f"no n ≥ 10 in this size's grid ({ns})", paper_value="ahead"))
        f_cubic, f_bbr = g("frac75", "cubic", n_cdf), g("frac75", dc.BBR, n_cdf)
        out.append(
            Claim(
                f"n = {n_cdf}: fraction of samples ≥ 75 % of the link" + where,
                "CUBIC < 50 %, BBR larger",
                f"CUBIC {f_cubic:.0%}, BBR {f_bbr:.0%}",
                "the Waterloo DC study's reading ≥ 750 Mbit/s: CUBIC < 50 % of samples; BBR > CUBIC",
                verdict_of_all([below(f_cubic, 0.5), above(f_bbr, f_cubic)]),
                paper_value="CUBIC < 50 %, BBR larger",
                bbrlab_value=cell(num(100 * f_cubic, "%", label="cubic"), num(100 * f_bbr, "%", label=dc.BBR)),
            )
        )
    return out


def _claim(cl: list[Claim], start: str, fabric: str) -> Claim:
    return next(c for c in cl if c.claim.startswith(start) and c.claim.endswith(dc.FABRIC_LABEL[fabric]))


def _explain(st: pd.DataFrame, ns: list[int]) -> str:
    """What happens on each fabric, every statement computed from the table (and the claims)."""
    L, S = "lossless", "store-and-forward"
    n_cdf = max(ns)
    big = _big(ns)
    cl = claims(st, ns)

    def g(col: str, fabric: str, cc: str, n: int) -> float:
        return value(st, col, fabric=fabric, cc=cc, n=n)

    def trends(fabric: str) -> str:
        return join(
            change(
                f"{dc.CC_NAME[cc]}'s mean",
                g("mean_bps", fabric, cc, 1),
                g("mean_bps", fabric, cc, n_cdf),
                dc.fmt_mbps,
                sign=_trend(st, fabric, cc, n_cdf),
                where_a="at n = 1",
                where_b=f"at n = {n_cdf}",
                significance=f" ({SIGNIFICANT})",
            )
            for cc in dc.CCS
        )

    lossless = st[st["fabric"] == L]
    lowest = lossless.loc[lossless["true_mean_bps"].idxmin()]
    # A flow's share of the aggregate relative to 1/n: 1 = every flow got exactly its share.
    share = lossless["min_flow_bps"] * lossless["n"] / lossless["true_mean_bps"]
    worst = lossless.loc[share.idxmin()]
    if lowest["true_mean_bps"] >= 0.99 * dc.CEILING_BPS:
        level = (
            f"stays busy: the exact aggregate stays within 1 % of the {dc.fmt_mbps(dc.CEILING_BPS)} goodput "
            f"ceiling for every n and both algorithms (lowest mean {dc.fmt_mbps(lowest['true_mean_bps'])})"
        )
    else:
        level = (
            f"does not stay busy: the exact aggregate falls below the {dc.fmt_mbps(dc.CEILING_BPS)} goodput "
            f"ceiling, lowest mean {dc.fmt_mbps(lowest['true_mean_bps'])} ({dc.CC_NAME[lowest['cc']]}, n = "
            f"{int(lowest['n'])})"
        )
    fair = share.min()
    fairness = (
        f"it is shared per sender: the slowest flow of a sample gets at least {fair:.0%} of its 1/n share"
        if fair >= 0.9
        else f"it is not shared evenly: at n = {int(worst['n'])} ({dc.CC_NAME[worst['cc']]}) the slowest flow "
        f"gets {fair:.0%} of its 1/n share"
    )
    falls_l = _claim(cl, "throughput falls", L).verdict
    missing = (
        ""
        if falls_l is Verdict.AGREES
        else " What the model leaves out and could cost throughput on the real cluster: the receiver's CPU (one "
        "thread per connection, 20 threads receiving at 1 Gbit/s), the switch's real PAUSE thresholds and "
        "buffer arbitration (ingress-port accounting, shared buffer), and host NICs that do not honour PAUSE "
        "(in which case the switch drops)."
    )
    lossless_text = (
        f"**Lossless fabric.** With PAUSE no packet is lost (asserted) and the congested port pauses every "
        f"sender's link at once. The receiver's link {level}; {fairness}. {trends(L)}: bbrlab "
        f"{reproduces(falls_l)} the Waterloo study's decline on this fabric.{missing}"
    )

    drops = {cc: g("drops", S, cc, n_cdf) for cc in dc.CCS}
    rtos = {cc: g("rto", S, cc, n_cdf) for cc in dc.CCS}
    if not any(drops.values()):
        loss = f"The 128 KB port drops nothing at n = {n_cdf}."
    else:
        loss = (
            f"The 128 KB port overflows (at n = {n_cdf}, {drops[dc.BBR]:,.0f} drops per sample for BBRv1 and "
            f"{drops['cubic']:,.0f} for CUBIC"
        )
        ratio = drops[dc.BBR] / drops["cubic"] if drops["cubic"] else math.inf
        loss += "; BBRv1 does not reduce its rate on loss)." if ratio >= 2 else ")."
        loss += (
            f" Flows that lose their window's tail wait for 200 ms RTOs (on average {rtos['cubic']:.1f} per sample "
            f"for CUBIC and {rtos[dc.BBR]:.1f} for BBRv1), during which the link can idle."
            if any(v > 0 for v in rtos.values())
            else " No flow needed an RTO."
        )
    lead = _claim(cl, "BBR significantly ahead", S)
    if big:
        signs = {n: _lead(st, S, n)[2] for n in big}
        behind = any(v == -1 for v in signs.values())
        said = {
            Verdict.AGREES: "the Waterloo Figure 7 pattern (BBR ahead for n ≥ 10) appears on this fabric",
            Verdict.PARTLY: "the Waterloo study's BBR lead for n ≥ 10 is reproduced only partly",
            Verdict.DISAGREES: (
                "the reverse of the Waterloo Figure 7"
                if behind
                else "the Waterloo study's BBR lead for n ≥ 10 is not reproduced"
            ),
            Verdict.UNTESTED: "the Waterloo study's BBR lead cannot be tested",
        }[lead.verdict]
        compared = (
            f"Counting a difference {SIGNIFICANT} of CUBIC's mean, "
            f"{compare('BBRv1', 'CUBIC', signs, 'n', more='ahead of', less='behind', same='level with')}: {said}."
        )
    else:
        compared = "This grid has no n ≥ 10, so the Waterloo study's BBR lead cannot be tested."
    fig8 = (
        f"At n = {n_cdf}, {g('frac75', S, dc.BBR, n_cdf):.0%} of BBRv1's samples reach 75 % of the link and "
        f"{g('frac75', S, 'cubic', n_cdf):.0%} of CUBIC's (Figure 8; the Waterloo study: CUBIC below 50 %, BBR "
        f"above it): bbrlab {reproduces(_claim(cl, f'n = {n_cdf}: fraction', S).verdict)} that reading."
    )
    return f"""
{lossless_text}

**Store-and-forward fabric.** {trends(S)}. {loss} {compared} {fig8}
"""


def _equal_shares_reading_bps(n: int) -> float:
    """What the Waterloo DC study's tool reads for n flows sharing the goodput ceiling exactly
    equally."""
    return n * float(tool_reading_bps(dc.CEILING_BPS / 8 / n, 1.0))


def _measurement(st: pd.DataFrame, ns: list[int]) -> str:
    """What the Waterloo DC study's measurement and worker placement contribute, computed from the
    table and the Waterloo DC study's own numbers (`SEED_READINGS`)."""
    n_max = max(ns)
    fabrics = dc.fabrics_in(st)

    def g(col: str, fabric: str, cc: str, n: int) -> float:
        return value(st, col, fabric=fabric, cc=cc, n=n)

    lost = [g("true_mean_bps", f, cc, n_max) - g("mean_bps", f, cc, n_max) for f in fabrics for cc in dc.CCS]
    seed = {cc: SEED_READINGS[cc] for cc in dc.CCS}
    seed_drop = {cc: seed[cc][1][0] - seed[cc][n_max][0] for cc in dc.CCS}
    quant = (
        f"**The Waterloo DC study's measurement.** Its aggregator divides each flow's bytes by the microseconds in "
        f"integer arithmetic and sums the quotients × 8 Mbit/s, so a flow loses up to 8 Mbit/s: {n_max} equal "
        f"shares of the {dc.fmt_mbps(dc.CEILING_BPS)} ceiling would read "
        f"{dc.fmt_mbps(_equal_shares_reading_bps(n_max))}, one flow "
        f"{dc.fmt_mbps(_equal_shares_reading_bps(1))}. In bbrlab's runs at n = {n_max} the division takes "
        f"{min(lost) / 1e6:.0f}–{max(lost) / 1e6:.0f} Mbit/s off the exact aggregate (all fabrics, both "
        f"algorithms), against the Waterloo DC study's decline from n = 1 to {n_max} of "
        + join(f"{seed_drop[cc]:.0f} Mbit/s for {dc.CC_NAME[cc]}" for cc in dc.CCS)
        + "."
    )
    # A reading of R over n flows means at most R + 8 n Mbit/s was delivered: an upper bound on the
    # study's exact aggregate, so a lower bound on what its link lost.
    bounds = {cc: seed[cc][n_max][0] + 8 * n_max for cc in dc.CCS}
    ceiling = dc.CEILING_BPS / 1e6
    idle = [cc for cc in dc.CCS if bounds[cc] < ceiling]
    if idle:
        lowest = min((g("true_mean_bps", f, cc, n_max), f, cc) for f in fabrics for cc in dc.CCS)
        idle_text = (
            " "
            + join(
                f"{dc.CC_NAME[cc]}'s seed reading at n = {n_max}, {seed[cc][n_max][0]:.0f} Mbit/s, "
                f"means at most {bounds[cc]:.0f} Mbit/s was delivered: its link lost at least "
                f"{ceiling - bounds[cc]:.0f} Mbit/s ({(ceiling - bounds[cc]) / ceiling:.0%})"
                for cc in idle
            )
            + f", beyond the division; bbrlab's lowest exact mean at n = {n_max} is "
            f"{dc.fmt_mbps(lowest[0])} ({dc.CC_NAME[lowest[2]]}, {dc.FABRIC_SHORT[lowest[1]]})."
        )
    else:
        idle_text = (
            f" Both seed readings at n = {n_max} are within what the division alone takes from a busy link: "
            "the Waterloo DC study's numbers do not show its link idling."
        )
    k = n_max // 4
    if k:
        slow = {cc: seed[cc][n_max][2] for cc in dc.CCS}
        per_fabric = join(
            f"{dc.FABRIC_SHORT[f]} " + " / ".join(f"{g('slow_quarter_bps', f, cc, n_max) / 1e6:.0f}" for cc in dc.CCS)
            for f in fabrics
        )
        place = (
            f"\n\n**The Waterloo DC study's worker placement.** Its node list puts every fourth worker in the aggregator's own "
            f"rack and the others in three other racks. At n = {n_max} a sample's {k} slowest flows — as many as "
            f"sit in the aggregator's rack — read "
            + join(f"{slow[cc]:.1f} Mbit/s for {dc.CC_NAME[cc]}" for cc in dc.CCS)
            + f" in the seed (a fair share reads {_equal_shares_reading_bps(n_max) / n_max / 1e6:.0f}); in bbrlab "
            f"(CUBIC / BBRv1, Mbit/s): {per_fabric}."
        )
    else:
        place = ""
    return quant + idle_text + place


def _seed_table(st: pd.DataFrame, ns: list[int]) -> str:
    shown = [n for n in ns if n in (1, 10, max(ns))]
    head = [
        "fabric",
        "n",
        "algorithm",
        "seed reading",
        "bbrlab reading",
        "bbrlab exact",
        "≥ 75 % seed / bbrlab",
        "slowest ⌊n/4⌋ seed / bbrlab",
    ]
    rows = []
    for f in dc.fabrics_in(st):
        for n in shown:
            for cc in dc.CCS:
                sm, sf, ss = SEED_READINGS[cc][n]
                slow = value(st, "slow_quarter_bps", fabric=f, cc=cc, n=n)
                rows.append(
                    [
                        dc.FABRIC_SHORT[f],
                        n,
                        dc.CC_NAME[cc],
                        f"{sm:.0f}",
                        f"{value(st, 'mean_bps', fabric=f, cc=cc, n=n) / 1e6:.0f}",
                        f"{value(st, 'true_mean_bps', fabric=f, cc=cc, n=n) / 1e6:.0f}",
                        f"{sf:.0%} / {value(st, 'frac75', fabric=f, cc=cc, n=n):.0%}",
                        "–" if ss is None else f"{ss:.1f} / {slow / 1e6:.1f}",
                    ]
                )
    return (
        md_table(head, rows) + "\n\nMbit/s, means over samples; \"reading\" is the Waterloo DC study's aggregator's "
        'figure (`tool_reading_bps`), "exact" the delivered bytes × 8 / window. The Waterloo DC study\'s numbers: '
        "`SEED_READINGS` (its CSV files, 100 samples per n)."
    )


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
        ("Figures", "![fig7](fig7-throughput.png)\n\n![fig8](fig8-cdf.png)"),
    ]


__all__ = ["PLANS", "Plan", "claims", "report_sections", "run", "stats"]
