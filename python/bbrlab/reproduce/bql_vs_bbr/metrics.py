"""The bql-vs-bbr study's numbers from the simulations' rows and queue series: per (algorithm, RTT)
the goodput and its share of the payload ceiling, the bottleneck queue's mean, peak and jitter (the
spread of the sampled queue after warm-up), and how the tables and reasons write a queue size or a
goodput."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from ...results.display import fmt_bps, fmt_bytes
from ..analysis import value
from ..report import MSS, WIRE


def _queue_stats(q: pd.DataFrame, warm_s: float) -> tuple[float, float]:
    """(jitter = p99 − p1 of the sampled queue after warm-up, its standard deviation), bytes."""
    b = q[(q["queue"] == "bottleneck") & (q["t_s"] >= warm_s)]
    if not len(b):
        return math.nan, math.nan
    occ = b["mean_occupancy_bytes"].to_numpy(dtype=float)
    return float(np.percentile(occ, 99) - np.percentile(occ, 1)), float(np.std(occ))


def _summarize(
    rows: pd.DataFrame,
    series: list[tuple[dict[str, Any], pd.DataFrame, pd.DataFrame]] | None,
    rate_bps: float,
    dur_s: float,
) -> pd.DataFrame:
    out = []
    jit: dict[tuple[str, float], tuple[float, float]] = {}
    for tags, _ts, q in series or []:
        warm = max(0.2 * dur_s, 20 * tags["rtt_ms"] / 1e3)
        jit[(tags["cc_name"], tags["rtt_ms"])] = _queue_stats(q, warm)
    ceiling = rate_bps * MSS / WIRE
    for _, r in rows.iterrows():
        j = jit.get((r["cc_name"], r["rtt_ms"]), (math.nan, math.nan))
        out.append(
            {
                "cc": r["cc_name"],
                "rtt_ms": r["rtt_ms"],
                "goodput_bps": r["goodput_bps"],
                "utilization": r["goodput_bps"] / ceiling,
                "queue_mean_bytes": r["queue_mean_bytes"],
                "queue_max_bytes": r["queue_max_bytes"],
                "queue_jitter_bytes": j[0],
                "queue_std_bytes": j[1],
                "retransmits": r["retransmits"],
                "rtt_p95_ms": r["rtt_p95_ms"],
            }
        )
    return pd.DataFrame(out).sort_values(["cc", "rtt_ms"]).reset_index(drop=True)


def _get(df: pd.DataFrame, cc: str, rtt: float, col: str) -> float:
    return value(df, col, cc=cc, rtt_ms=rtt)


def _kb(b: float) -> str:
    """Queue sizes in the tables: three significant digits, "405 KB", "23.8 MB"."""
    return fmt_bytes(b, sig=3)


def _util(df: pd.DataFrame, cc: str, rtt: float) -> str:
    g = _get(df, cc, rtt, "goodput_bps")
    u = _get(df, cc, rtt, "utilization")
    return "-" if g != g else f"{fmt_bps(g, 1, unit='Mbit/s')} ({u * 100:.1f} %)"
