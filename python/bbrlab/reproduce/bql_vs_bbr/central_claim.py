"""The Anhalt BQL paper's central claim, shared by the simulator's study (verdicts.py) and its
real-host page (bql_kernel.py): the claim and its rule as the claims tables print them, the check
at one point (`smaller_queue_check`), and the paper's numbers as value cells, so that both pages
test the claim the same way."""

from __future__ import annotations

import math

from ..claims import Check, all_of, cell, check, num, pct
from .metrics import _kb
from .plan import BBR, PAPER, _paper_share_pct

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
