"""How big the esnet-100g study runs, and the ESnet BBRv3 slides' numbers it is checked against:
the algorithms compared, the slides' two throughput tables (100G path and 4×10G LAG), the paths' fitted
loss rates and receive window, the stream/pacing configurations, and per size (tiny, quick, full) the
seeds, run lengths, bottleneck buffers and the rate scale, with the two helpers that scale a rate or a
buffer by it. Everything else in the study reads its numbers from here."""

from __future__ import annotations

from dataclasses import dataclass

from ..context import Size
from ..scenarios import QueueLimit
from ..sources import ESNET_BBR3

SOURCE = ESNET_BBR3


BBR = "bbr3_linux"


CCS = ("bbr3_linux", "cubic")


CC_SEED = {"bbr3_linux": "bbr", "cubic": "cubic"}


#: The slides' two tables side by side: (streams, cc, paced) -> ((tput Gbit/s, stddev, n,
#: retransmits) on the 100G path, the same on the 4x10G LAG). "Paced" is 12 Gbit/s per stream on
#: the 100G path and 11 Gbit/s on the LAG.
_SLIDES = {
    (1, "bbr3_linux", False): ((22.90, 3.58, 10, 568340), (5.61, 0.84, 6, 19721)),
    (1, "cubic", False): ((19.50, 4.04, 10, 68051), (2.60, 1.18, 6, 4966)),
    (8, "bbr3_linux", False): ((47.96, 2.43, 10, 300157), (20.26, 0.90, 5, 525351)),
    (8, "cubic", False): ((30.64, 7.35, 10, 49778), (8.34, 0.73, 5, 112758)),
    (8, "bbr3_linux", True): ((50.58, 2.21, 10, 302178), (18.19, 1.32, 5, 685559)),
    (8, "cubic", True): ((44.08, 3.58, 10, 61393), (8.46, 2.82, 6, 89142)),
}


#: One table per path: (streams, cc, pacing Gbit/s) -> (tput Gbit/s, stddev, n, retransmits).
SEED_100G = {(n, cc, 12.0 if paced else 0.0): row[0] for (n, cc, paced), row in _SLIDES.items()}


SEED_4X10G = {(n, cc, 11.0 if paced else 0.0): row[1] for (n, cc, paced), row in _SLIDES.items()}


LOSS_100G = 1e-8


LOSS_4X10G = 1.5e-7


RCVBUF_4X10G_BYTES = 103_000_000


@dataclass(frozen=True)
class EsnetPath:
    """One of the slides' two paths as the study simulates it: a bottleneck of ``members`` links
    of ``member_gbps`` (one stream rides one member of a LAG, several streams all of them) behind
    the streams' shared first hop of ``access_gbps``, the base RTT, the fitted random loss, and
    the slides' pacing cap per stream ("paced")."""

    tag: str
    member_gbps: float
    members: int
    access_gbps: float
    rtt_ms: float
    loss: float
    cap_gbps: float

    def rate_gbps(self, streams: int) -> float:
        """The bottleneck rate that ``streams`` streams share."""
        return self.member_gbps if streams == 1 else self.member_gbps * self.members


#: lbl-dev-dtn1 → cern773: 100G, 150 ms, behind ESnet's 400G backbone rate (the module's docstring).
PATH_100G = EsnetPath("100G", member_gbps=100, members=1, access_gbps=400, rtt_ms=150, loss=LOSS_100G, cap_gbps=12.0)
#: lbl-dev-dtn1 → pygrid-sonar2.lancs.ac.uk: the 4×10G LAG, 147 ms, behind the DTN's 100G NIC.
PATH_4X10G = EsnetPath("4x10G", member_gbps=10, members=4, access_gbps=100, rtt_ms=147, loss=LOSS_4X10G, cap_gbps=11.0)


@dataclass(frozen=True)
class Plan:
    """Repetitions, run lengths and rate scale of the study."""

    seeds: int = 3
    dur_s: float = 10
    #: bottleneck buffers of the 100G path, in ms of line rate (add 50.0 for a deep-buffer router;
    #: not in the default full study: it doubles its ~40 core-minutes)
    buffers_ms: tuple[float, ...] = (5.0,)
    lag_dur_s: float = 10
    gap_dur_s: float = 10
    #: scale all rates by this (quick: 0.2 turns 100G into 20G; tiny: 0.01 into 1G)
    rate_scale: float = 1.0


PLANS = {
    Size.TINY: Plan(seeds=2, dur_s=2, buffers_ms=(5.0,), lag_dur_s=2, gap_dur_s=1, rate_scale=0.01),
    # Quick: every rate (links, caps, NIC) at 1/5 — a 20G path — so a run costs a fifth.
    Size.QUICK: Plan(seeds=2, dur_s=5, buffers_ms=(5.0,), lag_dur_s=5, gap_dur_s=3, rate_scale=0.2),
    Size.FULL: Plan(),
}


def _rate_bps(gbps: float, p: Plan) -> int:
    return round(gbps * p.rate_scale * 1e9)


def _buffer(gbps: float, ms: float, p: Plan) -> QueueLimit:
    return QueueLimit.of_bytes(int(gbps * p.rate_scale * 1e9 / 8 * ms / 1e3))


CONFIGS = [(1, 0.0), (8, 0.0), (8, None)]  # (streams, cap); None = the path's cap (12 or 11 Gbit/s)
