"""How big the many-flows-ecn study runs: the testbed's constants (rates, RTT, buffer, marking
threshold, the algorithms compared and their labels) and, per size (tiny, quick, full), the flow
counts, durations and warm-ups of the sweep and of each ablation (TSO autosizing, faster ACKs,
shallow buffer, host model). Everything else in the study reads its numbers from a `Config`."""

from __future__ import annotations

from dataclasses import dataclass

from ..context import Size
from ..sources import GOOGLE_BBR2

SOURCE = GOOGLE_BBR2
CCS = ["dctcp", "bbr2", "bbr2_new"]
LABEL = {"dctcp": "DCTCP", "bbr2": "bbr2 (bbr2_old)", "bbr2_new": "bbr2_new"}
#: The two BBRv2 versions whose optimizations (TSO autosizing's min_rtt term, the fast path) the
#: slides' claims are about; DCTCP runs beside them only for reference.
BBR2S = ("bbr2", "bbr2_new")
#: The bottleneck of the host-bottleneck TSO setup: faster than the sender's NIC, so only the NIC queues.
HOST_BOTTLENECK_RATE_BPS = 100_000_000_000


@dataclass(frozen=True)
class Config:
    """Everything that sizes the study."""

    ns: tuple[int, ...]
    duration_s: float
    warmup_s: float
    rate_bps: int = 50_000_000_000
    rtt_s: float = 50e-6
    buffer_bytes: int = 16_000_000
    ecn_threshold_bytes: int = 80_000
    ccs: tuple[str, ...] = tuple(CCS)
    # TSO ablation
    tso_ns: tuple[int, ...] = (100, 1000)
    tso_duration_s: float = 2.0
    tso_warmup_s: float = 0.5
    # faster-ACK ablation
    ack_ccs: tuple[str, ...] = ("dctcp", "bbr2_new")
    ack_bulk: int = 100
    ack_rpc: int = 20
    rpc_size_bytes: int = 64_000
    rpc_gap_s: float = 100e-6
    rpc_start_s: float = 0.3
    ack_duration_s: float = 3.0
    # shallow-buffer variant: the slides' DCTCP retransmissions at N ≥ 320 need drops, so that port
    # held less than DCTCP's standing queue there (N·2 packets − BDP ≈ 670 KB at N = 320); 500 KB
    # is a static per-port share of a 16 MB shared buffer over 32 ports (a Tomahawk-class switch)
    shallow_buffer_bytes: int = 500_000
    shallow_ns: tuple[int, ...] = (320, 1000)
    shallow_duration_s: float = 4.0
    rcvbuf_bytes: int = 128_000
    app_read_delay_s: float = 50e-6
    # host-model ablation: flows in the ECN-switch setup (the slides' "10 flows" comparison)
    host_ecn_n: int = 10
    host_duration_s: float = 1.0
    host_warmup_s: float = 0.4

    @property
    def rtt_ns(self) -> int:
        return round(self.rtt_s * 1e9)


PLANS = {
    Size.TINY: Config(
        ns=(4, 12),
        duration_s=0.4,
        warmup_s=0.2,
        rate_bps=10_000_000_000,
        tso_ns=(12,),
        tso_duration_s=0.3,
        tso_warmup_s=0.1,
        ack_bulk=6,
        ack_rpc=3,
        ack_duration_s=0.5,
        rpc_start_s=0.1,
        shallow_ns=(12,),
        shallow_duration_s=0.4,
        shallow_buffer_bytes=200_000,
        host_ecn_n=4,
        host_duration_s=0.3,
        host_warmup_s=0.1,
    ),
    Size.QUICK: Config(
        ns=(10, 100, 320),
        duration_s=2.5,
        warmup_s=1.0,
        tso_ns=(320,),
        tso_duration_s=1.0,
        tso_warmup_s=0.4,
        ack_bulk=50,
        ack_rpc=10,
        ack_duration_s=1.2,
        shallow_ns=(320,),
        shallow_duration_s=2.0,
    ),
    Size.FULL: Config(
        ns=(10, 20, 40, 80, 160, 320, 640, 1000),
        duration_s=6.0,
        warmup_s=1.0,
        tso_ns=(1000,),
        tso_duration_s=1.5,
        tso_warmup_s=0.5,
        host_duration_s=2.0,
        host_warmup_s=0.5,
    ),
}
