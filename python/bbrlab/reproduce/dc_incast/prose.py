"""The dc-incast report's computed prose and tables: what changes between the fabrics (which
algorithm leads, where throughput falls and why), the Waterloo study's measurement and worker
placement against the equal-shares reading of its aggregator, and its readings beside ours."""

from __future__ import annotations

import math

import pandas as pd

from .. import dc_common as dc
from ..analysis import value
from ..claims import Claim, Verdict
from ..report import md_table
from ..sentences import change, compare, join, reproduces
from .plan import SEED_READINGS, tool_reading_bps
from .verdicts import SIGNIFICANT, _big, _claim, _lead, _trend, claims

#: The two fabrics _explain speaks of.
LOSSLESS, STORE_AND_FORWARD = "lossless", "store-and-forward"


def _g(st: pd.DataFrame, col: str, fabric: str, cc: str, n: int) -> float:
    return value(st, col, fabric=fabric, cc=cc, n=n)


def _trends(st: pd.DataFrame, fabric: str, n_cdf: int) -> str:
    """Each algorithm's mean from n = 1 to the largest n on `fabric`, with its trend's significance."""

    return join(
        change(
            f"{dc.CC_NAME[cc]}'s mean",
            _g(st, "mean_bps", fabric, cc, 1),
            _g(st, "mean_bps", fabric, cc, n_cdf),
            dc.fmt_mbps,
            sign=_trend(st, fabric, cc, n_cdf),
            where_a="at n = 1",
            where_b=f"at n = {n_cdf}",
            significance=f" ({SIGNIFICANT})",
        )
        for cc in dc.CCS
    )


def _lossless_text(st: pd.DataFrame, cl: list[Claim], n_cdf: int) -> str:
    """The lossless fabric: is the receiver's link busy, is it shared per sender, and does it decline."""
    L = LOSSLESS
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
        f"sender's link at once. The receiver's link {level}; {fairness}. {_trends(st, L, n_cdf)}: bbrlab "
        f"{reproduces(falls_l)} the Waterloo study's decline on this fabric.{missing}"
    )

    return lossless_text


def _loss_text(st: pd.DataFrame, n_cdf: int) -> str:
    """The store-and-forward port's drops and RTOs at the largest n."""
    S = STORE_AND_FORWARD

    drops = {cc: _g(st, "drops", S, cc, n_cdf) for cc in dc.CCS}
    rtos = {cc: _g(st, "rto", S, cc, n_cdf) for cc in dc.CCS}
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
    return loss


def _lead_text(st: pd.DataFrame, ns: list[int], cl: list[Claim]) -> str:
    """Whether BBRv1 leads CUBIC for n ≥ 10 on the store-and-forward fabric, as the Waterloo Figure 7."""
    S = STORE_AND_FORWARD
    big = _big(ns)
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
    return compared


def _fig8_text(st: pd.DataFrame, cl: list[Claim], n_cdf: int) -> str:
    """The Figure 8 reading: the fraction of samples reaching 75 % of the link at the largest n."""
    S = STORE_AND_FORWARD

    fig8 = (
        f"At n = {n_cdf}, {_g(st, 'frac75', S, dc.BBR, n_cdf):.0%} of BBRv1's samples reach 75 % of the link and "
        f"{_g(st, 'frac75', S, 'cubic', n_cdf):.0%} of CUBIC's (Figure 8; the Waterloo study: CUBIC below 50 %, BBR "
        f"above it): bbrlab {reproduces(_claim(cl, f'n = {n_cdf}: fraction', S).verdict)} that reading."
    )
    return fig8


def _explain(st: pd.DataFrame, ns: list[int]) -> str:
    """What happens on each fabric, every statement computed from the table (and the claims)."""
    n_cdf = max(ns)
    cl = claims(st, ns)
    S = STORE_AND_FORWARD
    return f"""
{_lossless_text(st, cl, n_cdf)}

**Store-and-forward fabric.** {_trends(st, S, n_cdf)}. {_loss_text(st, n_cdf)} {_lead_text(st, ns, cl)} {_fig8_text(st, cl, n_cdf)}
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

    lost = [_g(st, "true_mean_bps", f, cc, n_max) - _g(st, "mean_bps", f, cc, n_max) for f in fabrics for cc in dc.CCS]
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
        lowest = min((_g(st, "true_mean_bps", f, cc, n_max), f, cc) for f in fabrics for cc in dc.CCS)
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
            f"{dc.FABRIC_SHORT[f]} "
            + " / ".join(f"{_g(st, 'slow_quarter_bps', f, cc, n_max) / 1e6:.0f}" for cc in dc.CCS)
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
