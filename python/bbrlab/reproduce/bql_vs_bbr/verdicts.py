"""The Anhalt BQL paper's claims checked on the bql-vs-bbr study's numbers, each a `Claim` with its
rule and verdict: on the 1 Gbit/s runs (`claims`: the smaller queue at BBR's rate or better, BQL's
low mean buffer load, BBR's decay at high BDP, and under 1 % loss the growing gap and both keeping
high rates) and on the 10 Gbit/s runs with 0.7 % loss (`tengig_claims`). The thresholds that turn a
measured difference into a verdict are named here; the central claim's rule, which bql_kernel.py
checks on real hosts too, is central_claim.py's."""

from __future__ import annotations

import pandas as pd

from ...results.display import fmt_bps
from ..claims import Claim, cell, check, check_within, num, pct, shown_number, untested, verdict, verdict_of_all
from .central_claim import PAPER_VALUES, QUEUE_CLAIM, QUEUE_RULE, smaller_queue_check
from .metrics import _get, _kb
from .plan import BBR, CCS, PAPER_BQL_MEAN_BYTES, PAPER_QUEUE_SAID, _rtt_label

#: "Keeps a high rate under loss": goodput with 1 % loss at least this share of the loss-free goodput.
HIGH_UNDER_LOSS = 0.8


def claims(a: pd.DataFrame, b: pd.DataFrame) -> list[Claim]:
    """The paper's claims on the 1 Gbit/s runs (a: no loss, b: 1 % loss)."""
    rtts = sorted(a["rtt_ms"].unique())
    lrtts = sorted(b["rtt_ms"].unique())
    return [
        _queue_claim(a, rtts),
        _bql_load_claim(a, b),
        _degrades_claim(a, rtts),
        _loss_gap_claim(b, lrtts),
        _keeps_rate_claim(a, b, rtts, lrtts),
    ]


def _queue_claim(a: pd.DataFrame, rtts: list[float]) -> Claim:
    """The central claim (`QUEUE_CLAIM`) at every RTT of the loss-free runs."""
    per_rtt = []
    for rtt in rtts:
        qb, qr = _get(a, "bql", rtt, "queue_mean_bytes"), _get(a, BBR, rtt, "queue_mean_bytes")
        gb, gr = _get(a, "bql", rtt, "goodput_bps"), _get(a, BBR, rtt, "goodput_bps")
        ok = smaller_queue_check(qb, qr, gb, gr, _rtt_label(rtt))
        per_rtt.append((rtt, qr / max(qb, 1), (gb - gr) / 1e6, ok))
    return Claim(
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


def _bql_load_claim(a: pd.DataFrame, b: pd.DataFrame) -> Claim:
    """BQL's mean buffer load over every 1 Gbit/s run, with and without loss, against the paper's."""
    bql_all = pd.concat([a[a["cc"] == "bql"], b[b["cc"] == "bql"]])["queue_mean_bytes"].mean()
    return Claim(
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


def _degrades_claim(a: pd.DataFrame, rtts: list[float]) -> Claim:
    """BBR's share of the ceiling at 1000 ms against 100 ms; not tested where the grid lacks either."""
    claim, rule = "BBR's rate degrades at high BDP", "at least 5 points lower at 1000 ms than at 100 ms"
    source = "82.2 % (1000 ms) vs 96.4 % (100 ms) of 1 Gbit/s"
    if not (100 in rtts and 1000 in rtts):
        return untested(
            claim,
            source,
            rule,
            f"needs 100 and 1000 ms (this size: {', '.join(map(_rtt_label, rtts))})",
            paper_value=PAPER_VALUES["degrades"],
        )
    u100, u1000 = _get(a, BBR, 100, "utilization"), _get(a, BBR, 1000, "utilization")
    return Claim(
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


def _loss_gap_claim(b: pd.DataFrame, lrtts: list[float]) -> Claim:
    """With 1 % loss, BQL's lead over BBR at each RTT against the RTT below; needs two RTTs."""
    claim, rule = (
        "1 % loss: the gap in BQL's favour grows with RTT",
        "BQL − BBR larger at each RTT than at the one below",
    )
    if len(lrtts) < 2:
        return untested(claim, "yes", rule, "needs two RTTs with loss", paper_value="grows with RTT")
    gap = [(_get(b, "bql", r, "goodput_bps") - _get(b, BBR, r, "goodput_bps")) / 1e6 for r in lrtts]
    return Claim(
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


def _keeps_rate_claim(a: pd.DataFrame, b: pd.DataFrame, rtts: list[float], lrtts: list[float]) -> Claim:
    """Each algorithm's goodput with 1 % loss as a share of its loss-free goodput, at the RTTs both ran."""
    keep = {
        (cc, r): _get(b, cc, r, "goodput_bps") / _get(a, cc, r, "goodput_bps") for cc in CCS for r in lrtts if r in rtts
    }
    return Claim(
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
        bbrlab_value=cell(num(100 * k, "%", label=f"{cc} {r:g} ms with/without loss") for (cc, r), k in keep.items()),
    )


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
