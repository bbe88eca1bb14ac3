"""How big the bql-vs-bbr study runs, and the Anhalt BQL paper's numbers it is checked against: the
algorithms compared (BQL and Linux 4.15's BBRv1), the 80 MB drop-tail bottleneck and the paper's
"0 ms", per size (tiny, quick, full) the RTT grids and run lengths of the three parts, and the paper's
1 Gbit/s loss-free runs as its text gives them (Figs. 2 and 3). Everything else in the study reads its
numbers from here."""

from __future__ import annotations

from dataclasses import dataclass

from ..context import Size
from ..scenarios import QueueLimit
from ..sources import ANHALT_BQL

SOURCE = ANHALT_BQL
BUFFER = QueueLimit.of_bytes(80_000_000)
ZERO_RTT_MS = 0.15  # the paper's "0 ms": ≈ 150 µs of residual delay
#: BBR as the paper's kernel (4.15) ran it.
BBR = "bbr1_linux413"
CCS = ("bql", BBR)
LABEL = {"bql": "BQL (bbrlab reconstruction)", BBR: "BBR (BBRv1, as Linux 4.15)"}
GIG, TEN_GIG = 1_000_000_000, 10_000_000_000


@dataclass(frozen=True)
class Plan:
    """RTT grids and run lengths of the three parts."""

    rtts_ms: tuple[float, ...]  # part 1: 1 Gbit/s, no loss
    dur_s: float
    loss_rtts_ms: tuple[float, ...]  # part 2: 1 Gbit/s, 1 % loss
    loss_dur_s: float
    tengig_rtts_ms: tuple[float, ...]  # part 3: 10 Gbit/s, 0.7 % loss
    tengig_dur_s: float
    sample_s: float = 0.1


_ALL = (ZERO_RTT_MS, 100, 500, 1000)
PLANS = {
    Size.TINY: Plan(
        rtts_ms=(ZERO_RTT_MS, 100),
        dur_s=4,
        loss_rtts_ms=(ZERO_RTT_MS, 100),
        loss_dur_s=3,
        tengig_rtts_ms=(ZERO_RTT_MS,),
        tengig_dur_s=1,
    ),
    Size.QUICK: Plan(
        rtts_ms=_ALL,
        dur_s=40,
        loss_rtts_ms=(ZERO_RTT_MS, 100, 1000),
        loss_dur_s=40,
        tengig_rtts_ms=(ZERO_RTT_MS, 100),
        tengig_dur_s=8,
    ),
    Size.FULL: Plan(rtts_ms=_ALL, dur_s=200, loss_rtts_ms=_ALL, loss_dur_s=200, tengig_rtts_ms=_ALL, tengig_dur_s=40),
}


def _rtt_label(rtt_ms: float) -> str:
    return "0 ms (150 µs)" if rtt_ms < 1 else f"{rtt_ms:g} ms"


@dataclass(frozen=True)
class PaperCase:
    """One of the paper's 1 Gbit/s, loss-free runs as its text gives it (Figs. 2 and 3)."""

    rate_bps: float  # mean datarate at the emulator's line level
    queue_bytes: float  # mean bottleneck buffer load
    swing: str  # the buffer's jitter, in the paper's words


#: The paper's 1 Gbit/s numbers (the text of Figs. 2 and 3): (RTT ms, algorithm) -> its case.
PAPER = {
    (100, "bql"): PaperCase(994.6e6, 158e3, "< 200 KB"),
    (100, BBR): PaperCase(964.2e6, 705e3, "up to 4 MB"),
    (1000, "bql"): PaperCase(972.9e6, 387e3, "–"),
    (1000, BBR): PaperCase(821.6e6, 3633e3, "up to 30 MB"),
}
#: The paper's central claim in its numbers, as the claims tables print it.
PAPER_QUEUE_SAID = "158 KB vs 705 KB (100 ms), 0.387 vs 3.633 MB (1000 ms); rate higher"
#: The paper's mean BQL buffer load over all 1 Gbit/s tests.
PAPER_BQL_MEAN_BYTES = 250e3


def _paper_share_pct(rtt_ms: int, cc: str) -> float:
    """The paper's mean datarate at ``rtt_ms`` as a share of 1 Gbit/s, as it rounds it (%)."""
    return round(PAPER[(rtt_ms, cc)].rate_bps / GIG * 100, 1)
