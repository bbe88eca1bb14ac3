"""dc-incast (Waterloo DC study §4.2, Figures 7–8): aggregate throughput of n synchronized flows.

The Waterloo authors started n ∈ 1..20 flows into one receiver together and measured their total
throughput over a 10-s window (``aggregator throughput n 10 10``), 100 samples per n; Figure 7
plots the mean ± 95 % CI against n, Figure 8 the CDF of the 100 samples at n = 20. (Its worker was
told to send for longer than the window and the aggregator stopped measuring after 10 s.)

Here each sample is one simulation: n bulk flows, one per worker, starting within 1 ms of each
other (random per sample: the aggregator's thread start-up), measured over D seconds as
delivered bytes × 8 / D at the receiver.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..figures import save, subplots
from . import dc_common as dc
from . import dc_findings
from .analysis import Estimate, difference, mean_ci, sign_of_difference, value
from .claims import Claim, Verdict, above, below, cell, claims_table, is_sign, num, untested, verdict_of_all
from .context import Size, StudyContext
from .report import md_table
from .scenarios import Flow, StudyRun, study_run
from .sentences import change, compare, direction, join, reproduces
from .sources import WATERLOO_DC

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


def _scenario(fabric: str, cc: str, n: int, rep: int, dur_s: float) -> StudyRun:
    seed = 10_000 * n + rep
    rng = random.Random(seed)
    return study_run(f"dc-incast-{fabric}-{cc}-n{n}-r{rep}", duration_s=dur_s, seed=seed, sample_interval_s=1.0,
                     topology=dc.topology(fabric, n),
                     flows=[Flow(cc, start_s=rng.randrange(0, 1000) * 1e-6) for _ in range(n)],
                     tags={"fabric": fabric, "cc": cc, "n": n, "rep": rep, "dur_s": dur_s})


def run(ctx: StudyContext) -> Path:
    p = PLANS[ctx.size]
    scen = [_scenario(f, cc, n, r, p.dur_s) for f in p.fabrics for cc in dc.CCS for n in p.ns for r in range(p.reps)]
    rows = ctx.run_many("incast", scen)
    pause = dc.assert_lossless(rows, "dc-incast")
    runs = rows.groupby(["fabric", "cc", "n", "rep"], as_index=False).agg(
        delivered=("delivered_bytes", "sum"), retrans=("retransmits", "sum"), rto=("rto_count", "sum"),
        drops=("drops_run", "first"), pause=("pause_frames_run", "first"), min_flow=("goodput_bps", "min"),
        packets=("data_packets_delivered_run", "first"))
    runs["throughput_bps"] = runs["delivered"] * 8 / p.dur_s
    runs.to_csv(ctx.out_dir / "samples.csv", index=False)
    st = stats(runs)
    st.to_csv(ctx.out_dir / "stats.csv", index=False)
    _seed_csvs(runs, ctx.out_dir)
    _figures(st, runs, p, ctx.out_dir)
    cl = claims(st, list(p.ns))
    sections = report_sections(st, list(p.ns), pause, cl)
    report = ctx.write_report("dc-incast: throughput of n synchronized flows (Waterloo DC study, Figs 7–8)", sections,
                              source=SOURCE, packets=int(runs["packets"].sum()), claims=cl)
    dc_findings.write(ctx.out_dir, ctx.size)  # the mechanism × finding table, once all three have run
    return report


def stats(runs: pd.DataFrame) -> pd.DataFrame:
    """Per (fabric, algorithm, n): mean and 95 % CI of the samples, and what limited them."""
    st = []
    for key, g in runs.groupby(["fabric", "cc", "n"]):
        m, ci = mean_ci(g["throughput_bps"])
        st.append(dict(zip(["fabric", "cc", "n"], key), mean_bps=m, ci_bps=ci, samples=len(g),
                       frac75=float((g["throughput_bps"] >= LINK_75_BPS).mean()), rto=float(g["rto"].mean()),
                       drops=float(g["drops"].mean()), min_flow_bps=float(g["min_flow"].mean())))
    return pd.DataFrame(st)


def _seed_csvs(runs: pd.DataFrame, out_dir: Path) -> None:
    # The Waterloo study's CSV schema for the totals: num_flows,socket_fd,throughput,time ('all', 'total').
    for fabric in dc.fabrics_in(runs):
        for cc in dc.CCS:
            d = runs[(runs["fabric"] == fabric) & (runs["cc"] == cc)]
            pd.DataFrame({"num_flows": d["n"], "socket_fd": "all", "throughput": (d["throughput_bps"] / 1e6).round(1),
                          "time": "total"}).to_csv(out_dir / f"thru_{dc.CSV_CC[cc]}_{fabric}.csv", index=False)


def _figures(st: pd.DataFrame, runs: pd.DataFrame, p: Plan, out_dir: Path) -> None:
    fabrics = dc.fabrics_in(st)
    fig, axes = subplots(1, len(fabrics), figsize=(5.5 * len(fabrics), 4), squeeze=False)
    for ax, fabric in zip(axes[0], fabrics):
        for cc in dc.CCS:
            c = st[(st["fabric"] == fabric) & (st["cc"] == cc)].sort_values("n")
            ax.errorbar(c["n"], c["mean_bps"] / 1e6, yerr=c["ci_bps"].fillna(0) / 1e6, marker="o", ms=3, capsize=3,
                        color=dc.CC_COLOR[cc], label=dc.CC_LABEL[cc])
        ax.axhline(dc.CEILING_BPS / 1e6, color="grey", ls="--", lw=0.8, label="goodput ceiling")
        ax.set_title(dc.FABRIC_LABEL[fabric], fontsize=10)
        ax.set_xlabel("number of senders (n)")
        ax.set_ylabel("throughput (Mbit/s), mean ± 95 % CI")
        ax.set_ylim(0, 1000)
        ax.grid(alpha=0.3)
        ax.legend(loc="lower left")
    fig.suptitle(f"Fig 7: aggregate throughput of n synchronized flows ({p.dur_s:g}-s window)")
    save(fig, out_dir / "fig7-throughput.png")
    n_cdf = max(p.ns)
    fig, axes = subplots(1, len(fabrics), figsize=(5.5 * len(fabrics), 4), squeeze=False)
    for ax, fabric in zip(axes[0], fabrics):
        for cc in dc.CCS:
            x = np.sort(runs[(runs["fabric"] == fabric) & (runs["cc"] == cc) & (runs["n"] == n_cdf)]["throughput_bps"] / 1e6)
            ax.step(x, np.arange(1, len(x) + 1) / max(len(x), 1), where="post", color=dc.CC_COLOR[cc], label=dc.CC_LABEL[cc])
        ax.axvline(LINK_75_BPS / 1e6, color="grey", ls=":", lw=0.8, label="75 % of 1 Gbit/s")
        ax.set_title(dc.FABRIC_LABEL[fabric], fontsize=10)
        ax.set_xlabel("throughput (Mbit/s)")
        ax.set_ylabel("ECDF")
        ax.grid(alpha=0.3)
        ax.legend(loc="upper left")
    fig.suptitle(f"Fig 8: CDF of aggregate throughput, n = {n_cdf} senders, {p.reps} samples")
    save(fig, out_dir / "fig8-cdf.png")


def _estimate(st: pd.DataFrame, fabric: str, cc: str, n: int) -> Estimate:
    """The mean aggregate throughput at n with its 95 % CI, as `stats` computed it."""
    samples = value(st, "samples", fabric=fabric, cc=cc, n=n)
    return Estimate(value(st, "mean_bps", fabric=fabric, cc=cc, n=n), value(st, "ci_bps", fabric=fabric, cc=cc, n=n),
                    int(samples) if math.isfinite(samples) else 0)


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
        def g(col: str, cc: str, n: int) -> float:
            return value(st, col, fabric=fabric, cc=cc, n=n)

        where = f" — {dc.FABRIC_LABEL[fabric]}"
        out.append(Claim(
            "throughput falls as n grows, for both" + where, "yes",
            f"CUBIC {dc.fmt_mbps(g('mean_bps', 'cubic', 1))} → {dc.fmt_mbps(g('mean_bps', 'cubic', n_cdf))}, "
            f"BBR {dc.fmt_mbps(g('mean_bps', dc.BBR, 1))} → {dc.fmt_mbps(g('mean_bps', dc.BBR, n_cdf))} (n = 1 → {n_cdf})",
            f"mean at n = {n_cdf} below n = 1, the drop {SIGNIFICANT} of the n = 1 mean, per algorithm",
            verdict_of_all(is_sign(_trend(st, fabric, cc, n_cdf), -1) for cc in dc.CCS),
            paper_value="falls",
            bbrlab_value=cell(num(g("mean_bps", cc, 1) / 1e6, "Mbit/s", label=f"{cc} n = 1 → {n_cdf}",
                                  to=g("mean_bps", cc, n_cdf) / 1e6) for cc in dc.CCS)))
        claim = "BBR significantly ahead of CUBIC for n ≥ 10" + where
        rule = f"BBR − CUBIC above 0, {SIGNIFICANT} of CUBIC's mean, at each n ≥ 10"
        if big:
            leads = {n: _lead(st, fabric, n) for n in big}
            out.append(Claim(
                claim, "yes",
                "BBR − CUBIC: " + ", ".join(f"n = {n}: {d / 1e6:+.0f} ± {hw / 1e6:.0f}" for n, (d, hw, _) in leads.items())
                + " Mbit/s", rule,
                verdict_of_all(is_sign(sign, 1) for _, _, sign in leads.values()),
                paper_value="ahead",
                bbrlab_value=cell(num(d / 1e6, "Mbit/s", label=f"n = {n}", ci=hw / 1e6) for n, (d, hw, _) in leads.items())))
        else:
            out.append(untested(claim, "yes", rule, f"no n ≥ 10 in this size's grid ({ns})", paper_value="ahead"))
        f_cubic, f_bbr = g("frac75", "cubic", n_cdf), g("frac75", dc.BBR, n_cdf)
        out.append(Claim(
            f"n = {n_cdf}: fraction of samples ≥ 75 % of the link" + where, "CUBIC < 50 %, BBR larger",
            f"CUBIC {f_cubic:.0%}, BBR {f_bbr:.0%}", "CUBIC < 50 %; BBR > CUBIC",
            verdict_of_all([below(f_cubic, 0.5), above(f_bbr, f_cubic)]),
            paper_value="CUBIC < 50 %, BBR larger",
            bbrlab_value=cell(num(100 * f_cubic, "%", label="cubic"), num(100 * f_bbr, "%", label=dc.BBR))))
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
        return join(change(f"{dc.CC_NAME[cc]}'s mean", g("mean_bps", fabric, cc, 1), g("mean_bps", fabric, cc, n_cdf),
                           dc.fmt_mbps, sign=_trend(st, fabric, cc, n_cdf), where_a="at n = 1", where_b=f"at n = {n_cdf}",
                           significance=f" ({SIGNIFICANT})") for cc in dc.CCS)

    lossless = st[st["fabric"] == L]
    lowest = lossless.loc[lossless["mean_bps"].idxmin()]
    # A flow's share of the aggregate relative to 1/n: 1 = every flow got exactly its share.
    share = lossless["min_flow_bps"] * lossless["n"] / lossless["mean_bps"]
    worst = lossless.loc[share.idxmin()]
    if lowest["mean_bps"] >= 0.99 * dc.CEILING_BPS:
        level = (f"stays busy: aggregate throughput stays within 1 % of the {dc.fmt_mbps(dc.CEILING_BPS)} goodput "
                 f"ceiling for every n and both algorithms (lowest mean {dc.fmt_mbps(lowest['mean_bps'])})")
    else:
        level = (f"does not stay busy: aggregate throughput falls below the {dc.fmt_mbps(dc.CEILING_BPS)} goodput "
                 f"ceiling, lowest mean {dc.fmt_mbps(lowest['mean_bps'])} ({dc.CC_NAME[lowest['cc']]}, n = "
                 f"{int(lowest['n'])})")
    fair = share.min()
    fairness = (f"it is shared per sender: the slowest flow of a sample gets at least {fair:.0%} of its 1/n share"
                if fair >= 0.9 else
                f"it is not shared evenly: at n = {int(worst['n'])} ({dc.CC_NAME[worst['cc']]}) the slowest flow "
                f"gets {fair:.0%} of its 1/n share")
    falls_l = _claim(cl, "throughput falls", L).verdict
    missing = ("" if falls_l is Verdict.AGREES else
               " What the model leaves out and could cost throughput on the real cluster: the receiver's CPU (one "
               "thread per connection, 20 threads receiving at 1 Gbit/s), the switch's real PAUSE thresholds and "
               "buffer arbitration (ingress-port accounting, shared buffer), and host NICs that do not honour PAUSE "
               "(in which case the switch drops).")
    lossless_text = (f"**Lossless fabric.** With PAUSE no packet is lost (asserted) and the congested port pauses every "
                     f"sender's link at once. The receiver's link {level}; {fairness}. {trends(L)}: bbrlab "
                     f"{reproduces(falls_l)} the Waterloo study's decline on this fabric.{missing}")

    drops = {cc: g("drops", S, cc, n_cdf) for cc in dc.CCS}
    rtos = {cc: g("rto", S, cc, n_cdf) for cc in dc.CCS}
    if not any(drops.values()):
        loss = f"The 128 KB port drops nothing at n = {n_cdf}."
    else:
        loss = (f"The 128 KB port overflows (at n = {n_cdf}, {drops[dc.BBR]:,.0f} drops per sample for BBRv1 and "
                f"{drops['cubic']:,.0f} for CUBIC")
        ratio = drops[dc.BBR] / drops["cubic"] if drops["cubic"] else math.inf
        loss += ("; BBRv1 does not reduce its rate on loss)." if ratio >= 2 else ").")
        loss += (f" Flows that lose their window's tail wait for 200 ms RTOs (on average {rtos['cubic']:.1f} per sample "
                 f"for CUBIC and {rtos[dc.BBR]:.1f} for BBRv1), during which the link can idle."
                 if any(v > 0 for v in rtos.values()) else " No flow needed an RTO.")
    lead = _claim(cl, "BBR significantly ahead", S)
    if big:
        signs = {n: _lead(st, S, n)[2] for n in big}
        behind = any(v == -1 for v in signs.values())
        said = {Verdict.AGREES: "the Waterloo Figure 7 pattern (BBR ahead for n ≥ 10) appears on this fabric",
                Verdict.PARTLY: "the Waterloo study's BBR lead for n ≥ 10 is reproduced only partly",
                Verdict.DISAGREES: ("the reverse of the Waterloo Figure 7" if behind else
                                    "the Waterloo study's BBR lead for n ≥ 10 is not reproduced"),
                Verdict.UNTESTED: "the Waterloo study's BBR lead cannot be tested"}[lead.verdict]
        compared = (f"Counting a difference {SIGNIFICANT} of CUBIC's mean, "
                    f"{compare('BBRv1', 'CUBIC', signs, 'n', more='ahead of', less='behind', same='level with')}: {said}.")
    else:
        compared = "This grid has no n ≥ 10, so the Waterloo study's BBR lead cannot be tested."
    fig8 = (f"At n = {n_cdf}, {g('frac75', S, dc.BBR, n_cdf):.0%} of BBRv1's samples reach 75 % of the link and "
            f"{g('frac75', S, 'cubic', n_cdf):.0%} of CUBIC's (Figure 8; the Waterloo study: CUBIC below 50 %, BBR "
            f"above it): bbrlab {reproduces(_claim(cl, f'n = {n_cdf}: fraction', S).verdict)} that reading.")
    return f"""
{lossless_text}

**Store-and-forward fabric.** {trends(S)}. {loss} {compared} {fig8}
"""


def report_sections(st: pd.DataFrame, ns: list[int], pause: int, cl: list[Claim]) -> list[tuple[str, str]]:
    def g(col: str, f: str, cc: str, n: int) -> float:
        return value(st, col, fabric=f, cc=cc, n=n)

    table = [[f, n] + [f"{dc.fmt_mbps(g('mean_bps', f, cc, n))} ± {g('ci_bps', f, cc, n) / 1e6:.0f} "
                       f"(RTOs {g('rto', f, cc, n):.0f}, slowest flow {dc.fmt_mbps(g('min_flow_bps', f, cc, n))})"
                       for cc in dc.CCS] for f in dc.fabrics_in(st) for n in ns]
    return [
        ("Source and setup", __doc__.split("\n", 2)[2] + "\n" + dc.__doc__.split("\n", 3)[3]),
        ("The Waterloo study's claims beside ours",
         claims_table(cl, source_header="Waterloo DC study (§4.2)")
         + f"\n\nLossless mode: 0 packets dropped in every run (asserted); {pause:,} PAUSE/XON frames sent in total."),
        ("What changes between the fabrics", _explain(st, ns)),
        ("Numbers (mean ± 95 % CI over samples)", md_table(["fabric", "n"] + [dc.CC_LABEL[c] for c in dc.CCS], table)
         + "\n\nEvery sample: `samples.csv`; the Waterloo study's CSV schema (`num_flows,socket_fd,throughput,time`, "
           "total rows): `thru_{cubic,bbr}_<fabric>.csv`."),
        ("Figures", "![fig7](fig7-throughput.png)\n\n![fig8](fig8-cdf.png)"),
    ]


__all__ = ["PLANS", "Plan", "claims", "report_sections", "run", "stats"]
