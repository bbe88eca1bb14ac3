"""How big the nsperf study runs: nsperf's five scenarios with their exact parameters (full),
a quick and a tiny plan, and the reduced plan for the kernel (`KERNEL_PLAN`, not run by
`bbrlab reproduce`; see the study's page).

nsperf's parameters (google/bbr, gtests/net/tcp/bbr/nsperf/run_tests.sh at e7db8639): buffers in
1514-byte packets as nsperf computes them, buf_pkts = int(bw * RTT / (1514 * 8) * bdp_of_buf).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..context import Size
from ..sources import NSPERF

SOURCE = NSPERF

#: nsperf's packet on the wire (its buffer unit).
NSPERF_PACKET_BYTES = 1514
#: Every BBR version the simulator has, then CUBIC (nsperf: bbr1, bbr = v3, cubic).
BBRS = ("bbr1", "bbr1_linux413", "bbr2", "bbr2_new", "bbr3", "bbr3_linux")
CCS = (*BBRS, "cubic")
#: ecn_bulk compares DCTCP with the BBRs (nsperf: dctcp, bbr1, bbr).
ECN_CCS = ("dctcp", *BBRS)
#: The algorithms the kernel plan runs (those the kernel backend has as stock modules).
KERNEL_CCS = ("bbr1", "bbr3_linux", "cubic")


def buffer_packets(rate_bps: int, rtt_s: float, bdp_multiple: float) -> int:
    """nsperf's buffer: int(bw * RTT / (1514 B * 8) * bdp_of_buf) packets."""
    return int(rate_bps * rtt_s / (NSPERF_PACKET_BYTES * 8) * bdp_multiple)


@dataclass(frozen=True)
class Scenario:
    """One nsperf scenario: its link, flows and the parameter it sweeps."""

    name: str
    rate_bps: int
    rtt_s: float
    duration_s: float  # each flow's netperf -l
    reps: int
    ccs: tuple[str, ...]
    #: The swept parameter: buffer in BDPs (coexist, bufferbloat), loss in % (random_loss),
    #: flows (shallow, ecn_bulk).
    sweep: tuple[float, ...]
    buffer_bdp: float = 1.0  # when the sweep is not the buffer
    flows: int = 1  # when the sweep is not the flow count
    interval_s: float = 0.0  # between flow starts


@dataclass(frozen=True)
class Config:
    coexist: Scenario
    random_loss: Scenario
    shallow: Scenario
    bufferbloat: Scenario
    ecn_bulk: Scenario
    #: What the plan changes from nsperf's, for the page ("" for the full plan).
    reduced: str = ""

    def scenarios(self) -> tuple[Scenario, ...]:
        return (self.coexist, self.random_loss, self.shallow, self.bufferbloat, self.ecn_bulk)


M = 1_000_000
G = 1_000_000_000

FULL = Config(
    coexist=Scenario("coexist", 50 * M, 0.030, 180.0, 1, BBRS, (0.1, 1, 2, 4, 8, 16), flows=2, interval_s=2.0),
    random_loss=Scenario(
        "random_loss", G, 0.100, 60.0, 10, CCS, (0.00001, 0.0001, 0.001, 0.01, 0.1, 0.2, 0.5, 1, 2, 3, 10, 15, 20)
    ),
    shallow=Scenario("shallow", G, 0.100, 300.0, 1, CCS, (1, 10, 30, 60, 100), buffer_bdp=0.02, interval_s=0.139),
    bufferbloat=Scenario("bufferbloat", 50 * M, 0.030, 120.0, 1, CCS, (1, 10, 50, 100), flows=2, interval_s=2.0),
    ecn_bulk=Scenario("ecn_bulk", G, 0.001, 10.0, 10, ECN_CCS, (1, 4, 10, 40, 100), interval_s=0.005),
)

QUICK = Config(
    coexist=Scenario("coexist", 50 * M, 0.030, 30.0, 1, BBRS, (0.1, 1, 4, 16), flows=2, interval_s=2.0),
    random_loss=Scenario("random_loss", 100 * M, 0.100, 20.0, 1, CCS, (0.01, 0.1, 1, 3, 10, 20)),
    shallow=Scenario("shallow", 100 * M, 0.100, 30.0, 1, CCS, (1, 10, 30, 100), buffer_bdp=0.02, interval_s=0.139),
    bufferbloat=Scenario("bufferbloat", 50 * M, 0.030, 30.0, 1, CCS, (1, 10, 50, 100), flows=2, interval_s=2.0),
    ecn_bulk=Scenario("ecn_bulk", G, 0.001, 2.0, 1, ECN_CCS, (1, 10, 100), interval_s=0.005),
    reduced="runs of 20-30 s (ecn_bulk 2 s) instead of 60-300 s, one repetition, fewer points; random_loss and "
    "shallow at 100 Mbit/s instead of 1 Gbit/s (same RTT and buffer in BDPs, so a tenth of the packets: "
    "CUBIC's loss-limited rate, which scales with 1/(RTT sqrt(p)), is the same, its share of the link ten "
    "times larger)",
)

TINY = Config(
    coexist=Scenario("coexist", 10 * M, 0.020, 3.0, 1, ("bbr1",), (1,), flows=2, interval_s=1.0),
    random_loss=Scenario("random_loss", 10 * M, 0.020, 2.0, 1, ("bbr1", "cubic"), (1,)),
    shallow=Scenario("shallow", 10 * M, 0.020, 2.0, 1, ("bbr1",), (2,), buffer_bdp=0.5, interval_s=0.139),
    bufferbloat=Scenario("bufferbloat", 10 * M, 0.020, 2.0, 1, ("cubic",), (2,), flows=2, interval_s=0.5),
    ecn_bulk=Scenario("ecn_bulk", 100 * M, 0.001, 0.5, 1, ("dctcp",), (2,), interval_s=0.005),
    reduced="the smallest runs that go through every step (tests)",
)

PLANS = {Size.TINY: TINY, Size.QUICK: QUICK, Size.FULL: FULL}

#: The reduced plan for the kernel backend (`--backend emu`), sized to about 30 minutes of wall
#: time on a 2-core machine: nsperf's rates (the emulator carries up to ~1.5 Gbit/s), shorter
#: runs, one repetition, three points per sweep, and the algorithms the kernel has.
KERNEL_PLAN = Config(
    coexist=Scenario("coexist", 50 * M, 0.030, 30.0, 1, ("bbr1", "bbr3_linux"), (1, 4, 16), flows=2, interval_s=2.0),
    random_loss=Scenario("random_loss", G, 0.100, 20.0, 1, KERNEL_CCS, (0.1, 1, 10)),
    shallow=Scenario("shallow", G, 0.100, 20.0, 1, KERNEL_CCS, (1, 10, 30), buffer_bdp=0.02, interval_s=0.139),
    bufferbloat=Scenario("bufferbloat", 50 * M, 0.030, 20.0, 1, KERNEL_CCS, (1, 10, 100), flows=2, interval_s=2.0),
    ecn_bulk=Scenario("ecn_bulk", G, 0.001, 10.0, 1, ("dctcp", "bbr1", "bbr3_linux"), (1, 10, 40), interval_s=0.005),
    reduced="20-30 s runs instead of 60-300 s, one repetition instead of 10, three points per sweep, "
    "bbr1, bbr3_linux and cubic (and dctcp in ecn_bulk) only",
)
