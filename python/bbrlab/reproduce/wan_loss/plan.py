"""How big the wan-loss study runs, and the numbers it is checked against: the blog's path (2.5
Gbit/s, netem's 1000-packet queue, Ubuntu's 6 MiB receive buffer) and the sweep's, per size (tiny,
quick, full) the algorithms, RTT and loss grids and run lengths of parts A to C, the blog's 140 ms
results and the BBR patch series' 10 Gbit/s example. Everything else in the study reads its numbers
from here."""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..context import Size
from ..report import MSS, WIRE
from ..scenarios import QueueLimit
from ..sources import TOONK_BLOG

SOURCE = TOONK_BLOG
#: Ubuntu's default net.ipv4.tcp_rmem maximum, the receive window the blog's hosts could offer.
BLOG_RCVBUF_BYTES = 6 * 2**20
#: netem's default queue limit.
NETEM_LIMIT = QueueLimit.of_packets(1000)
BLOG_RATE_BPS = 2_500_000_000
SWEEP_RATE_BPS, SWEEP_RTT_MS = 100_000_000, 100


@dataclass(frozen=True)
class Plan:
    ccs: tuple[str, ...]  # part A: the blog's grid
    rtts_ms: tuple[float, ...]
    losses_pct: tuple[float, ...]
    dur_s: float
    patch: bool  # part B: 10 Gbit/s × 30 s per algorithm
    sweep_losses_pct: tuple[float, ...]  # part C
    sweep_ccs: tuple[str, ...]
    sweep_dur_s: float


#: The tiny plan: every step of the study on a two-algorithm, two-RTT, two-loss grid, in seconds.
_TINY = Plan(
    ccs=("cubic", "bbr1"),
    rtts_ms=(10, 140),
    losses_pct=(0.0, 1.5),
    dur_s=1,
    patch=False,
    sweep_losses_pct=(1.0, 15.0),
    sweep_ccs=("cubic", "bbr1"),
    sweep_dur_s=2,
)


PLANS = {
    Size.TINY: _TINY,
    # The tiny grid, run ten times longer, and its sweep over five loss rates.
    Size.QUICK: replace(_TINY, dur_s=10, sweep_losses_pct=(0.01, 0.1, 1.0, 5.0, 15.0), sweep_dur_s=20),
    Size.FULL: Plan(
        ccs=("cubic", "bbr1", "bbr3"),
        rtts_ms=(1, 10, 40, 140),
        losses_pct=(0.0, 0.1, 0.5, 1.0, 1.5, 3.0),
        dur_s=30,
        patch=True,
        sweep_losses_pct=(0.001, 0.01, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 15.0, 20.0),
        sweep_ccs=("cubic", "bbr1", "bbr3"),
        sweep_dur_s=60,
    ),
}


#: Goodput ceiling of the blog's 2.5 Gbit/s path.
BLOG_CEILING_BPS = BLOG_RATE_BPS * MSS / WIRE
#: What the blog's 6 MiB receive window allows at 140 ms.
WINDOW_LIMIT_BPS = BLOG_RCVBUF_BYTES * 8 / 0.140


#: The blog's 140 ms results: (case, algorithm, loss %, rate in bit/s).
BLOG_140MS = (
    ("no loss: CUBIC", "cubic", 0.0, 347e6),
    ("no loss: BBR", "bbr1", 0.0, 340e6),
    ("1.5 % loss: CUBIC", "cubic", 1.5, 1.23e6),
    ("1.5 % loss: BBR", "bbr1", 1.5, 153e6),
)


#: The BBR patch series' 10 Gbit/s, 100 ms, 1 % loss example, bit/s.
PATCH_CUBIC_BPS, PATCH_BBR_BPS = 3.27e6, 9150e6
