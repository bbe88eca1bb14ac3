"""Reading the studies' tables: one row selector, the Waterloo study's R statistics (means with 95 %
confidence intervals, Student t from scipy), the significance of a difference, packet counts.

Jain's fairness index is `bbrlab.results.results.jain_index` (the same definition as a run's summary).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "Estimate",
    "difference",
    "mean_ci",
    "p95",
    "packets_simulated",
    "row",
    "select",
    "sign_of_difference",
    "t975",
    "value",
]


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


def t975(df: float) -> float:
    """Student t quantile t(0.975, df) (R's mean_cl_normal, the Waterloo study's statistics)."""
    if not df >= 1:
        return math.nan
    # Here, not at the top: a study's worker processes never need it. scipy.special's inverse of
    # Student's t CDF is what scipy.stats.t.ppf evaluates (identical values), without the second
    # of importing scipy.stats in every study's process.
    from scipy import special

    return float(special.stdtrit(df, 0.975))


def mean_ci(x: Sequence[float]) -> tuple[float, float]:
    """(mean, half-width of the 95 % confidence interval) as R's mean_cl_normal."""
    a = np.asarray(x, dtype=float)
    a = a[np.isfinite(a)]
    if a.size == 0:
        return math.nan, math.nan
    if a.size == 1:
        return float(a[0]), math.nan
    return float(a.mean()), float(t975(a.size - 1) * a.std(ddof=1) / math.sqrt(a.size))


@dataclass(frozen=True)
class Estimate:
    """A mean over ``n`` samples with the half-width ``ci`` of its 95 % confidence interval (as
    `mean_ci` computes it and the studies' stats tables hold it)."""

    mean: float
    ci: float
    n: int

    @property
    def se(self) -> float:
        """Standard error of the mean, recovered from the interval: ci / t(0.975, n − 1)."""
        return self.ci / t975(self.n - 1) if self.n >= 2 and math.isfinite(self.ci) else math.nan

    @property
    def sd(self) -> float:
        """Standard deviation of the samples."""
        return self.se * math.sqrt(self.n)


def difference(a: Estimate, b: Estimate) -> tuple[float, float]:
    """a − b and the half-width of its 95 % confidence interval (Welch's t, unequal variances);
    the half-width is NaN when either side has fewer than two samples."""
    d = a.mean - b.mean
    va, vb = a.se**2, b.se**2
    if not (math.isfinite(va) and math.isfinite(vb)):
        return d, math.nan
    if va + vb == 0:
        return d, 0.0
    # Welch–Satterthwaite degrees of freedom.
    df = (va + vb) ** 2 / (va**2 / (a.n - 1) + vb**2 / (b.n - 1))
    return d, t975(df) * math.sqrt(va + vb)


def sign_of_difference(a: Estimate, b: Estimate, *, min_rel: float = 0.0) -> int | None:
    """+1 when a is significantly above b (95 %, Welch), −1 when below, 0 when the interval of
    a − b contains 0 or when |a − b| is below ``min_rel`` × |b| (significant but too small to
    matter: means near a ceiling have tiny intervals); None when it cannot be decided (a missing
    mean, a single sample)."""
    d, hw = difference(a, b)
    if not (math.isfinite(d) and math.isfinite(hw)):
        return None
    if abs(d) < min_rel * abs(b.mean):
        return 0
    return 1 if d > hw else (-1 if d < -hw else 0)


def p95(x: Sequence[float]) -> float:
    a = np.asarray(x, dtype=float)
    a = a[np.isfinite(a)]
    return float(np.quantile(a, 0.95)) if a.size else math.nan  # R's quantile type 7
