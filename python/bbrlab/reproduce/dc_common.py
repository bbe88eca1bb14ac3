"""Shared pieces of the data-center studies of the Waterloo DC study (docs/sources.md): dc-query,
dc-incast, dc-convergence.

Every study runs on two fabrics (``FABRICS``):

- ``lossless``: the Waterloo cluster as the paper describes it: 1 GbE hosts on a Mellanox SX1012
  ToR with lossless Ethernet (802.3x PAUSE: XOFF 64 KB, XON 32 KB, 65535 quanta) and cut-through
  forwarding. No packet is ever dropped (asserted for every run).
- ``store-and-forward``: a conventional commodity ToR: store-and-forward with a shallow 128 KB
  drop-tail buffer per output port, no flow control — the comparison the Waterloo authors asked for.

Both: 10 µs one-way per host link (≈ 50 µs base RTT with serialization), hosts' clocks within
±100 ppm of the switch and 1 µs of host transmit jitter (without these, equal-rate links stay
phase-locked in a simulator and a drop-tail port can lock a flow out indefinitely), Linux
defaults for the transport (IW 10, min RTO 200 ms, delayed ACKs, TSQ; BBR paces, CUBIC does not).
BBR is the cluster's kernel's: Linux 4.13's BBRv1 (`bbr1_linux413`).
"""

from __future__ import annotations

import pandas as pd

from ..display import fmt_bps
from .report import MSS, WIRE
from .scenarios import Pfc, Star

#: BBR as the Waterloo cluster ran it: Linux 4.13's BBRv1, without the ACK-aggregation cwnd term
#: that Linux added in 5.1 (`bbr1_linux413`; on a 50 µs path that term changes what BBR keeps in
#: flight).
BBR = "bbr1_linux413"
CCS = ["cubic", BBR]
CC_LABEL = {"cubic": "TCP Cubic", BBR: "TCP BBR"}  # as the Waterloo figures label them
CC_NAME = {"cubic": "CUBIC", BBR: "BBRv1"}  # in sentences
CC_COLOR = {"cubic": "#d95f02", BBR: "#1b9e77"}
FABRIC_LABEL = {"lossless": "Waterloo's fabric: lossless (PAUSE), cut-through",
                "store-and-forward": "store-and-forward, 128 KB drop-tail",
                "store-and-forward-deep": "store-and-forward, 1 MB drop-tail"}
#: The two fabrics of every study; dc-convergence adds the deep-buffered one.
FABRICS = ["lossless", "store-and-forward"]
#: Goodput ceiling of 1 GbE with the default MSS (MSS / WIRE of the line rate).
CEILING_BPS = 1e9 * MSS / WIRE
#: The short names the Waterloo study's own CSV files use for the algorithms.
CSV_CC = {"cubic": "cubic", BBR: "bbr"}


def topology(fabric: str, workers: int) -> Star:
    common = dict(workers=workers, rate_bps=1_000_000_000, delay_s=10e-6, clock_ppm=100, host_jitter_s=1e-6)
    if fabric == "lossless":
        return Star(forwarding="cut-through", pfc=Pfc(xoff_bytes=64_000, xon_bytes=32_000, quanta=65535), **common)
    if fabric == "store-and-forward":
        return Star(forwarding="store-and-forward", buffer_bytes=128_000, **common)
    if fabric == "store-and-forward-deep":
        return Star(forwarding="store-and-forward", buffer_bytes=1_000_000, **common)
    raise ValueError(fabric)


def assert_lossless(rows: pd.DataFrame, where: str) -> int:
    """Every lossless run dropped nothing; returns the PAUSE frames counted in them."""
    d = rows[rows["fabric"] == "lossless"]
    if len(d) == 0:
        return 0
    per_run = d.groupby("run").agg(drops=("drops_run", "first"), lost=("lost_packets", "sum"),
                                   pause=("pause_frames_run", "first"))
    bad = per_run[(per_run["drops"] != 0) | (per_run["lost"] != 0)]
    if len(bad):
        raise AssertionError(f"{where}: lossless runs dropped packets: {bad.head().to_dict('index')}")
    return int(per_run["pause"].sum())


def fmt_mbps(bps: float) -> str:
    """Rates in these studies' tables: whole Mbit/s, as the Waterloo figures read."""
    return fmt_bps(bps, 0, unit="Mbit/s")
