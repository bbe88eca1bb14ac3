"""The dc-query report's computed prose: what changes between the fabrics. On the lossless fabric,
why it is algorithm-blind (PAUSE shares the port per ingress link) or how the algorithms differ on
it; on the store-and-forward fabric, where queries collapse into retransmission timeouts, with and
without the background flow, and which algorithm's mean latency leads. Every statement is computed
from the table."""

from __future__ import annotations

import pandas as pd

from ...results.display import fmt_seconds
from .. import dc_common as dc
from ..sentences import at, between, compare, join
from .metrics import MATERIAL, _bbr_vs_cubic, _ratio
from .plan import COLLAPSE_S, QUERY_BYTES, SHARE_TOLERANCE, Plan


def _explain(st: pd.DataFrame, p: Plan) -> str:
    """What happens on each fabric, every statement computed from the table."""
    return f"\n{_lossless_text(st, p)}\n\n{_store_and_forward_text(st, p)}\n"


def _lossless_text(st: pd.DataFrame, p: Plan) -> str:
    """Why the lossless fabric is algorithm-blind here, or how the algorithms differ on it."""
    L = "lossless"
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
    return lossless_text


def _store_and_forward_text(st: pd.DataFrame, p: Plan) -> str:
    """Where the store-and-forward fabric's queries collapse, with and without the background flow."""
    S = "store-and-forward"
    nmax = max(p.ns_nobg)
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
    return f"""**On the store-and-forward fabric** {incast}. With a background flow mean latencies range from
{between(bg_sf["mean_s"].min(), bg_sf["mean_s"].max(), fmt_seconds)}{why} Counting a difference that is significant (95 %, Welch's t) and ≥ {MATERIAL * 100:g} %, {sf_bg}."""
