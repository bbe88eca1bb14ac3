"""Reading the studies' tables: one row selector, the Waterloo study's R statistics, packet counts.

Jain's fairness index is `bbrlab.results.jain_index` (the same definition as a run's summary).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["mean_ci", "p95", "packets_simulated", "row", "select", "t975", "value"]


def select(df: pd.DataFrame, **equal: Any) -> pd.DataFrame:
    """The rows whose columns equal the given values (``select(df, cc="bbr1", rtt_ms=140)``)."""
    mask = np.ones(len(df), dtype=bool)
    for col, v in equal.items():
        mask &= (df[col] == v).to_numpy()
    return df[mask]


def row(df: pd.DataFrame, **equal: Any) -> pd.Series | None:
    """The first selected row, or None."""
    d = select(df, **equal)
    return d.iloc[0] if len(d) else None


def value(df: pd.DataFrame, col: str, **equal: Any) -> float:
    """Column ``col`` of the first selected row as a float; NaN when no row matches."""
    d = select(df, **equal)
    return float(d[col].iloc[0]) if len(d) else math.nan


def packets_simulated(*rows: pd.DataFrame) -> int:
    """Data packets delivered over all runs in per-flow row tables (``StudyContext.run_many``)."""
    return int(sum(r["data_packets_delivered_run"].groupby(r["run"]).first().sum() for r in rows))


# Student t quantiles t(0.975, df) for df = 1..30 (mean_cl_normal in the Waterloo study's R scripts).
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
