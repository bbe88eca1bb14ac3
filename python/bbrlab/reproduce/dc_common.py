"""Shared pieces of the data-center studies of the Waterloo DC study (docs/sources.md): dc-query,
dc-incast, dc-convergence.

Every study runs on the fabrics of ``FABRICS``, one mechanism of a real switch each, so the
reports can say which mechanism produces which of the paper's findings (``dc_findings``):

- ``lossless``: PAUSE triggered by the *egress* queue (802.3x: XOFF 64 KB, XON 32 KB, 65535
  quanta), pausing every ingress link at once; cut-through. bbrlab's earlier model of the
  Waterloo fabric, kept as the labelled alternative.
- ``lossless-ingress``: the Waterloo cluster's Mellanox SX1012 as its switch generation works:
  SwitchX buffers packets per ingress port ("the ingress packet buffer memory, which was used in
  previous devices (SwitchX), and on which each port has a bound memory to buffer incoming
  packets" — Mellanox, *Understanding the Alpha Parameter in the Buffer Configuration of Mellanox
  Spectrum Switches*), and PAUSE is sent by the ingress port over XOFF to its own sender only;
  XOFF 64 KB / XON 32 KB (no public SX1012 number: an assumption, ≈ 40 frames, a port's share of a
  few-MB ASIC buffer), headroom the PAUSE round trip (2 × rate × delay + 2 frames + the PAUSE
  frame, IEEE 802.1Qbb's rule); 65535 quanta with re-send every half (Mellanox's PBMC register:
  xoff_timer_value 0xffff, xoff_refresh 0xffff / 2). Cut-through.
- ``lossless-ingress-racks``: ``lossless-ingress`` in the Waterloo DC study's cluster layout: racks
  of 16 nodes under an aggregation switch (non-blocking 16 Gbit/s uplinks; no public number), with
  the workers where the Waterloo DC study's scripts put them (``SEED_WORKER_RACKS``): three of every
  four in other racks than the aggregator's, so they reach it through the aggregation switch and its
  ToR, where all of them share one ingress port (and its PAUSE), while every fourth worker has a
  port of its own on the aggregator's ToR.
- ``lossless-racks``: the same racks and placement with ``lossless``'s PAUSE (by egress queue,
  pausing every ingress link of the congested port at once), so after each XON the uplink
  delivers at its own 16 Gbit/s and a local worker at 1 Gbit/s.
- ``pause-hosts-only``: ``lossless-racks`` with inter-switch ports that ignore PAUSE (802.3x is
  configured per port, and "receive off" is a common default — Cisco's Catalyst 3550 manual:
  "The default state for Gigabit Ethernet ports is receive off"; whether the SYN cluster's
  trunks had it on is not public): the aggregator's ToR pauses only its own hosts, the trunk from
  the aggregation switch keeps sending, and its packets are dropped past the port's buffer (1 MB,
  the shared-buffer fabric's assumption). The trunk alone keeps the port above XON, so the
  aggregator-rack workers stay paused.
- ``pause-ignored``: ``lossless-ingress`` with host NICs that ignore PAUSE (flow control off in
  the NIC or its driver): the switch still sends PAUSE, and drops once a port's headroom is full.
- ``shared-dt``: a lossy shared-buffer ToR (Broadcom / Mellanox Spectrum): one 1 MB pool, dynamic
  threshold alpha = 1 (one congested queue may take half of the free pool); no PAUSE;
  cut-through. 1 MB is an assumption: 1 GbE ToR ASICs carry 1–4 MB.
- ``store-and-forward``: a conventional commodity ToR: store-and-forward with a shallow 128 KB
  drop-tail buffer per output port, no flow control — the comparison the Waterloo authors asked for.

Both: 10 µs one-way per host link (≈ 50 µs base RTT with serialization), hosts' clocks within
±100 ppm of the switch and 1 µs of host transmit jitter (without these, equal-rate links stay
phase-locked in a simulator and a drop-tail port can lock a flow out indefinitely), Linux
defaults for the transport (IW 10, min RTO 200 ms, delayed ACKs, TSQ; BBR paces, CUBIC does not).
BBR is the cluster's kernel's: Linux 4.13's BBRv1 (`bbr1_linux413`).

No fabric models the end hosts' CPUs (scenario ``[hosts]``), because at 1 GbE the receiver
cannot be the bottleneck the Waterloo DC study's thread-per-connection aggregator might suggest.
Measured 2026-11-26 (dc-incast's quick plan, 2-s samples, n = 1, 10, 20, core at 442e3bd): with
``[hosts]`` at its defaults, or as a host of the Waterloo DC study's era (one receive queue, so
every flow's softirq on one core; a 256-packet ring; 50 µs interrupt moderation; twice today's
per-packet costs and a 20 Gbit/s copy), the aggregator's busiest core was at most 19 % busy and no
ring dropped: a 1 GbE port delivers a packet every 12 µs, and the CPU spends 0.3 µs (defaults) to
2.3 µs (the old host) on it. On
``lossless-ingress`` every sample stayed at 941 Mbit/s for both algorithms, as without hosts; on
``shared-dt`` the n = 20 aggregate moved by at most 1 % (BBR 938.5 → 939.6 / 933.1 Mbit/s,
CUBIC 941.4 either way). So finding (b) does not come from the receiver host.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ..results.display import fmt_bps
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
FABRIC_LABEL = {
    "lossless": "lossless, PAUSE by egress queue (bbrlab's earlier model), cut-through",
    "lossless-ingress": "lossless, PAUSE by ingress port (SX1012's per-port buffers), cut-through",
    "lossless-ingress-racks": "lossless, PAUSE by ingress port, the Waterloo DC study's racks and worker placement",
    "lossless-racks": "lossless, PAUSE by egress queue, the Waterloo DC study's racks and worker placement",
    "pause-hosts-only": "PAUSE by egress queue to hosts only (trunks ignore it, 1 MB ports), the Waterloo DC study's racks",
    "pause-ignored": "PAUSE by ingress port, host NICs ignore it (drops past headroom), cut-through",
    "shared-dt": "shared 1 MB buffer, dynamic threshold α = 1, no PAUSE, cut-through",
    "store-and-forward": "store-and-forward, 128 KB drop-tail",
    "store-and-forward-deep": "store-and-forward, 1 MB drop-tail",
}
#: The fabrics in sentences.
FABRIC_SHORT = {
    "lossless": "lossless (egress PAUSE)",
    "lossless-ingress": "lossless (ingress PAUSE)",
    "lossless-ingress-racks": "lossless (ingress PAUSE, racks)",
    "lossless-racks": "lossless (egress PAUSE, racks)",
    "pause-hosts-only": "PAUSE to hosts only (racks)",
    "pause-ignored": "PAUSE ignored by NICs",
    "shared-dt": "1 MB shared, α = 1",
    "store-and-forward": "128 KB drop-tail",
    "store-and-forward-deep": "1 MB drop-tail",
}
#: The fabrics whose switches send PAUSE frames (PFC), whoever honours them.
PFC_FABRICS = (
    "lossless",
    "lossless-racks",
    "pause-hosts-only",
    "lossless-ingress",
    "lossless-ingress-racks",
    "pause-ignored",
)
#: The fabrics of every study; dc-convergence adds the deep-buffered one.
FABRICS = [*PFC_FABRICS, "shared-dt", "store-and-forward"]
#: The deep-buffered fabric only dc-convergence runs (its open question: 1 MB vs 128 KB drop-tail).
DEEP = "store-and-forward-deep"
#: Every fabric in the order the reports list them.
ALL_FABRICS = FABRICS + [DEEP]
#: The fabrics of ``--quick`` (every study; ``--full`` and ``tiny`` run all of theirs). The rule:
#: the baseline every comparison of the reports is made against, and one fabric per lossy buffer
#: mechanism, since drops are what turn findings on:
#:
#: - ``lossless`` (PAUSE by egress queue): the baseline. dc-query's and dc-incast's explanations
#:   and dc-convergence's open question ("drops instead of PAUSE") compare against it;
#: - ``shared-dt`` (shared buffer, dynamic threshold): the mechanism of commodity ToRs;
#: - ``store-and-forward`` (per-port 128 KB drop-tail): the comparison the Waterloo authors asked
#:   for, named by the reports' explanations;
#: - ``pause-hosts-only`` (the Waterloo DC study's racks, trunks deaf to PAUSE and dropping): the
#:   one mechanism that starves the aggregator-rack workers as the Waterloo DC study's throughput
#:   CSVs show (added 2026-11-26; the four fabrics' ``--quick`` took 17 s at ``-j 2`` on that day's
#:   2-core machine).
#:
#: Left to ``--full``: the ingress-PAUSE family (``lossless-ingress``, its racks, NICs ignoring
#: PAUSE) and the 1 MB drop-tail buffer. Why these: the three studies' ``--quick`` runs took
#: 104–165 s on all fabrics by the machine's load, 157 s of CPU (target ≤ 60 s on 2 cores),
#: dc-convergence's 90-s runs most of it (T = 10 s is the shortest
#: level that spans BBRv1's 10-s min-RTT window, so a shorter T is no cure); and in those runs
#: (2026-11-24) the ingress-PAUSE fabrics scored like each other and like the baseline but for a
#: 1 % query-latency difference — (a) partly (BBR/CUBIC 0.99), (b) no, (c) no — while findings
#: (a) and (c) appeared only on the two lossy mechanisms; the full dc-convergence (T = 30 and
#: 60 s, same day) kept that picture: per-second Jain 1.00 for both algorithms at every level on
#: all four PAUSE fabrics, (c) only with drops. The findings table marks the fabrics a run left
#: out as "not run", never with a verdict.
QUICK_FABRICS = ("lossless", "pause-hosts-only", "shared-dt", "store-and-forward")
#: Hosts per rack in the Waterloo DC study's cluster (six racks of 16 nodes).
HOSTS_PER_RACK = 16
#: The rack of each worker in turn (0: the aggregator's), as the Waterloo DC study's scripts placed
#: them: the aggregator is blue00 and ``tests/nodes`` of github.com/chowes/data-center-bbr (every
#: version, 2017-11-20 to 11-26) lists the workers green00, red00, yellow00/05, blue01, green01,
#: red01, yellow01, blue02, … — racks green, red, yellow, then the aggregator's own, in turn. Its
#: throughput results show it: ⌊n/4⌋ flows of a sample (the blue workers' count) read under
#: 8 Mbit/s in all 100 CUBIC samples at every n ≥ 14 and in 88–99 of 100 BBR samples at every
#: n ≥ 8 (at least ⌊n/4⌋ flows; the Waterloo DC study's CSVs, counted).
SEED_WORKER_RACKS = (1, 2, 3, 0)
#: XOFF / XON of the lossless fabrics (an assumption, see above) and the PAUSE duration.
PFC_XOFF_BYTES, PFC_XON_BYTES, PFC_QUANTA = 64_000, 32_000, 65535
#: The shared-buffer fabric's pool and dynamic threshold (assumptions, see above).
SHARED_POOL_BYTES, SHARED_ALPHA = 1_000_000, 1.0
#: Goodput ceiling of 1 GbE with the default MSS (MSS / WIRE of the line rate).
CEILING_BPS = 1e9 * MSS / WIRE
#: The short names the Waterloo study's own CSV files use for the algorithms.
CSV_CC = {"cubic": "cubic", BBR: "bbr"}


def topology(fabric: str, workers: int) -> Star:
    common: dict[str, Any] = dict(
        workers=workers, rate_bps=1_000_000_000, delay_s=10e-6, clock_ppm=100, host_jitter_s=1e-6
    )
    if fabric in PFC_FABRICS:
        racks = fabric.endswith("-racks") or fabric == "pause-hosts-only"
        pfc = Pfc(
            xoff_bytes=PFC_XOFF_BYTES,
            xon_bytes=PFC_XON_BYTES,
            quanta=PFC_QUANTA,
            accounting="egress" if fabric in ("lossless", "lossless-racks", "pause-hosts-only") else "ingress",
            nic_honours_pause=fabric != "pause-ignored",
            switches_honour_pause=fabric != "pause-hosts-only",
        )
        # Trunks deaf to PAUSE drop at the port: it needs a limit (the shared-buffer fabric's pool).
        return Star(
            forwarding="cut-through",
            pfc=pfc,
            buffer_bytes=SHARED_POOL_BYTES if fabric == "pause-hosts-only" else None,
            hosts_per_rack=HOSTS_PER_RACK if racks else None,
            worker_racks=SEED_WORKER_RACKS if racks else None,
            **common,
        )
    if fabric == "shared-dt":
        # The per-port limit is the pool itself: only the dynamic threshold divides it.
        return Star(
            forwarding="cut-through",
            buffer_bytes=SHARED_POOL_BYTES,
            shared_buffer_bytes=SHARED_POOL_BYTES,
            shared_buffer_alpha=SHARED_ALPHA,
            **common,
        )
    if fabric == "store-and-forward":
        return Star(forwarding="store-and-forward", buffer_bytes=128_000, **common)
    if fabric == "store-and-forward-deep":
        return Star(forwarding="store-and-forward", buffer_bytes=1_000_000, **common)
    raise ValueError(fabric)


def fabrics_in(d: pd.DataFrame) -> list[str]:
    """The fabrics a study's table holds (its size's plan may leave some out), in report order."""
    ran = set(d["fabric"]) if len(d) else set()
    return [f for f in ALL_FABRICS if f in ran]


def is_lossless(fabric: str) -> bool:
    return fabric.startswith("lossless")


def assert_lossless(rows: pd.DataFrame, where: str) -> int:
    """Every lossless run dropped nothing (their headroom covers the PAUSE round trip); returns
    the PAUSE frames counted in them."""
    d = rows[rows["fabric"].map(is_lossless)]
    if len(d) == 0:
        return 0
    per_run = d.groupby("run").agg(
        drops=("drops_run", "first"), lost=("lost_packets", "sum"), pause=("pause_frames_run", "first")
    )
    bad = per_run[(per_run["drops"] != 0) | (per_run["lost"] != 0)]
    if len(bad):
        raise AssertionError(f"{where}: lossless runs dropped packets: {bad.head().to_dict('index')}")
    return int(per_run["pause"].sum())


def fmt_mbps(bps: float) -> str:
    """Rates in these studies' tables: whole Mbit/s, as the Waterloo figures read."""
    return fmt_bps(bps, 0, unit="Mbit/s")
