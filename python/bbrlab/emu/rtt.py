"""A kernel flow's RTT statistics for the flows table, as the simulator defines them.

The simulator's ``rtt_mean_ms`` and ``rtt_pNN_ms`` are over every per-ACK RTT sample, so each
stretch of a run counts by the data it acknowledged. The kernel backend reads ``tcpi_rtt`` at a
fixed tick; each read stands for the ACKs since the one before it, so it is weighted by the bytes
acknowledged in between (``tcpi_bytes_acked``'s change). Unweighted, a 10x rate step down filling
a deep buffer counted ten times more on the kernel than in the simulator: CUBIC's mean RTT on
``examples/rate-step.toml`` read 174 ms against the simulator's 80, while the two timeseries'
smoothed RTTs agreed within 0.4 %."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["RttReads", "rtt_stats", "PERCENTILES"]

#: The flows table's RTT percentiles: (percent, column).
PERCENTILES = ((50, "rtt_p50_ms"), (95, "rtt_p95_ms"), (99, "rtt_p99_ms"))


@dataclass(frozen=True)
class RttReads:
    """One flow's RTT reads (ms) and the bytes acknowledged since the read before each."""

    rtt_ms: list[float]
    acked_bytes: list[float]


def _weighted_percentile(values: np.ndarray, weights: np.ndarray, q: float) -> float:
    """The smallest value whose cumulative weight reaches q % of the total (the inverse of the
    weighted empirical distribution, as a per-sample histogram's percentile is)."""
    order = np.argsort(values, kind="stable")
    cum = np.cumsum(weights[order])
    i = int(np.searchsorted(cum, q / 100.0 * cum[-1], side="left"))
    return float(values[order][min(i, len(values) - 1)])


def rtt_stats(reads: RttReads) -> dict[str, float]:
    """``rtt_mean_ms`` and the percentile columns; NaN when there is no read. Reads that follow no
    acknowledged byte carry no weight; if none carries any (a flow that never got an ACK
    between reads), every read counts alike."""
    r = np.asarray(reads.rtt_ms, dtype=float)
    if not r.size:
        return {"rtt_mean_ms": math.nan, **{k: math.nan for _, k in PERCENTILES}}
    w = np.asarray(reads.acked_bytes, dtype=float)
    if not w.size or w.sum() <= 0:
        w = np.ones_like(r)
    out = {"rtt_mean_ms": float(np.average(r, weights=w))}
    for q, k in PERCENTILES:
        out[k] = _weighted_percentile(r, w, q)
    return out
