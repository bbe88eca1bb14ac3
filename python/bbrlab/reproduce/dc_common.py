"""Shared pieces of the data-center studies of seed 000 (Howes & Muñoz, 'TCP BBR - Assessing
Performance in a Data Center Environment', U. Waterloo, 2017): dc-query, dc-incast, dc-convergence.

Every study runs on two fabrics (``FABRICS``):

- ``lossless``: the seed's cluster as the paper describes it: 1 GbE hosts on a Mellanox SX1012
  ToR with lossless Ethernet (802.3x PAUSE: XOFF 64 KB, XON 32 KB, 65535 quanta) and cut-through
  forwarding. No packet is ever dropped (asserted for every run).
- ``store-and-forward``: a conventional commodity ToR: store-and-forward with a shallow 128 KB
  drop-tail buffer per output port, no flow control — the comparison the seed asked for.

Both: 10 µs one-way per host link (≈ 50 µs base RTT with serialization), hosts' clocks within
±100 ppm of the switch and 1 µs of host transmit jitter (without these, equal-rate links stay
phase-locked in a simulator and a drop-tail port can lock a flow out indefinitely), Linux
defaults for the transport (IW 10, min RTO 200 ms, delayed ACKs, TSQ; BBR paces, CUBIC does not).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from .report import MSS, WIRE

CCS = ["cubic", "bbr1"]
CC_LABEL = {"cubic": "TCP Cubic", "bbr1": "TCP BBR"}
CC_COLOR = {"cubic": "#d95f02", "bbr1": "#1b9e77"}
FABRIC_LABEL = {"lossless": "seed's fabric: lossless (PAUSE), cut-through",
                "store-and-forward": "store-and-forward, 128 KB drop-tail",
                "store-and-forward-deep": "store-and-forward, 1 MB drop-tail"}
#: The two fabrics of every study; dc-convergence adds the deep-buffered one.
FABRICS = ["lossless", "store-and-forward"]
#: Goodput ceiling of 1 GbE with the default MSS (MSS / WIRE of the line rate).
CEILING_BPS = 1e9 * MSS / WIRE


def topology(fabric: str, workers: int) -> dict[str, Any]:
    t: dict[str, Any] = {"kind": "star", "workers": workers, "rate": "1Gbps", "delay": "10us",
                         "clock_ppm": 100, "host_jitter": "1us"}
    if fabric == "lossless":
        t.update(forwarding="cut-through", lossless=True, pfc={"xoff": "64KB", "xon": "32KB", "quanta": 65535})
    elif fabric == "store-and-forward":
        t.update(forwarding="store-and-forward", buffer="128KB")
    elif fabric == "store-and-forward-deep":
        t.update(forwarding="store-and-forward", buffer="1MB")
    else:
        raise ValueError(fabric)
    return t


# Student t quantiles t(0.975, df) for df = 1..30 (mean_cl_normal in the seed's R scripts).
_T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
         2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
         2.045, 2.042]


def t975(df: int) -> float:
    if df < 1:
        return math.nan
    if df <= 30:
        return _T975[df - 1]
    return 1.96 + 2.4 / df  # within 0.2 % of the exact quantile above 30


def mean_ci(x: Sequence[float]) -> tuple[float, float]:
    """(mean, half-width of the 95 % confidence interval) as R's mean_cl_normal."""
    a = np.asarray(x, dtype=float)
    a = a[np.isfinite(a)]
    if a.size == 0:
        return math.nan, math.nan
    if a.size == 1:
        return float(a[0]), math.nan
    return float(a.mean()), float(t975(a.size - 1) * a.std(ddof=1) / math.sqrt(a.size))


def p95(x: Sequence[float]) -> float:
    a = np.asarray(x, dtype=float)
    a = a[np.isfinite(a)]
    return float(np.quantile(a, 0.95)) if a.size else math.nan  # R's quantile type 7


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


def fmt_ms(s: float) -> str:
    return "–" if not math.isfinite(s) else (f"{s * 1e3:.1f} ms" if s * 1e3 < 1000 else f"{s:.2f} s")


def fmt_mbps(bps: float) -> str:
    return "–" if not math.isfinite(bps) else f"{bps / 1e6:.0f} Mbit/s"
