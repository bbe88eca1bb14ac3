"""What a sweep found, one row per point: its axes, then the key metrics as mean ± sd over seeds.

The points table (``table.py``) has one row per point *and seed* and ~30 columns; the question a
sweep asks ("how does CUBIC's share change with the buffer?") is answered by a few of them,
averaged over the seeds with their spread. This module picks those columns (:func:`key_metrics`),
reduces the seeds (:func:`point_stats`) and prints them (:func:`terminal_table`), for the end of
`bbrlab sweep` and for the figures of `bbrlab plot SWEEP --x AXIS --y METRIC`.

Each metric is shown in one unit, said once in its column header (:data:`DISPLAY`): goodput in
Mbit/s, shares and rates in %, RTT in ms.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from .table import PER_CC

__all__ = ["Display", "display", "key_metrics", "point_stats", "terminal_table", "SD_SUFFIX", "N_COLUMN"]

#: Jain's index at or above this is 1 up to rounding (one flow, or equal shares): not worth a column.
JAIN_OF_EQUALS = 0.999999

#: The column of :func:`point_stats` holding each metric's standard deviation over seeds.
SD_SUFFIX = ":sd"
#: The column of :func:`point_stats` counting the seeds that ran (failed runs are not counted).
N_COLUMN = "seeds"


@dataclass(frozen=True)
class Display:
    """How a metric column is shown: ``value × scale`` in ``unit``, under ``label``."""

    label: str
    unit: str
    scale: float
    digits: int  # after the decimal point, in the shown unit


#: Metric (the part after "<cc>." for per-algorithm columns) -> how it is shown.
DISPLAY: dict[str, Display] = {
    "goodput_bps": Display("goodput", "Mbit/s", 1e-6, 2),
    "share": Display("share", "%", 100.0, 1),
    "link_share": Display("link share", "%", 100.0, 1),
    "jain": Display("Jain", "", 1.0, 3),
    "retransmits": Display("retransmits", "", 1.0, 0),
    "retrans_rate": Display("retx rate", "%", 100.0, 2),
    "queue_mean_bytes": Display("mean queue", "KB", 1e-3, 1),
    "rtt_mean_ms": Display("mean RTT", "ms", 1.0, 1),
    "rtt_p95_ms": Display("p95 RTT", "ms", 1.0, 1),
    "wall_s": Display("wall", "s", 1.0, 2),
}


def display(column: str) -> Display:
    """How ``column`` (``jain``, ``cubic.share`` …) is shown; a per-algorithm column's label
    names its algorithm ("cubic share")."""
    cc, _, metric = column.rpartition(".")
    d = DISPLAY.get(metric, Display(metric, "", 1.0, 3))
    return Display(f"{cc} {d.label}" if cc else d.label, d.unit, d.scale, d.digits)


def algorithms(points: pd.DataFrame) -> list[str]:
    """The algorithms with per-algorithm columns in ``points``, in column order."""
    out: dict[str, None] = {}
    for c in points.columns:
        cc, _, metric = str(c).rpartition(".")
        if cc and metric in PER_CC and not str(c).startswith(("topology.", "flows.")):
            out.setdefault(cc, None)
    return list(out)


def key_metrics(points: pd.DataFrame) -> list[str]:
    """The columns that answer a sweep's usual question, present in ``points``: each algorithm's
    goodput, its share where some run has several algorithms (else every share is 100 %), the
    p95 RTT, the retransmission rate and Jain's index where it is not 1 everywhere (one flow)."""
    ccs = algorithms(points)
    cols = [f"{cc}.goodput_bps" for cc in ccs]
    goodputs = points[[c for c in cols if c in points.columns]].apply(pd.to_numeric, errors="coerce")
    if len(ccs) > 1 and bool((goodputs.notna().sum(axis=1) > 1).any()):
        cols += [f"{cc}.share" for cc in ccs]
    elif not ccs:
        cols.append("goodput_bps")
    cols += ["rtt_p95_ms", "retrans_rate"]
    jain = pd.to_numeric(points["jain"], errors="coerce") if "jain" in points else None
    if jain is not None and bool((jain < JAIN_OF_EQUALS).any()):
        cols.append("jain")
    return [c for c in cols if c in points.columns]


def point_stats(points: pd.DataFrame, axes: Sequence[str], metrics: Sequence[str]) -> pd.DataFrame:
    """One row per point (the axes' values, in the table's order): each metric's mean over the
    point's seeds, its standard deviation (``<metric>:sd``; 0 with one seed) and ``seeds``, the
    number of runs that did not fail."""
    ok = points[points["error"].astype(str) == ""] if "error" in points else points
    keys = list(axes)
    values = ok[[*keys, *metrics]].copy()
    for m in metrics:
        values[m] = pd.to_numeric(values[m], errors="coerce")
    if not keys:
        values["_all"] = ""
        keys = ["_all"]
    grouped = values.groupby(keys, sort=False, dropna=False)
    mean = grouped[list(metrics)].mean()
    sd = grouped[list(metrics)].std(ddof=1).fillna(0.0).add_suffix(SD_SUFFIX)
    n = grouped.size().rename(N_COLUMN)
    out = pd.concat([mean, sd, n], axis=1).reset_index()
    if "_all" in out:
        out = out.drop(columns="_all")
    return out


def _cell(mean: float, sd: float, d: Display, seeds: int) -> str:
    if not math.isfinite(mean):
        return "–"
    text = f"{mean * d.scale:.{d.digits}f}"
    return f"{text} ± {sd * d.scale:.{d.digits}f}" if seeds > 1 and math.isfinite(sd) else text


def table_rows(stats: pd.DataFrame, axes: Sequence[str], metrics: Sequence[str]) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the points' table as text: the axes, then each metric "mean ± sd"."""
    from .aliases import short_name

    header = [short_name(a) for a in axes]
    for m in metrics:
        d = display(m)
        header.append(f"{d.label} ({d.unit})" if d.unit else d.label)
    header.append(N_COLUMN)
    rows = []
    for r in stats.to_dict("records"):
        n = int(r[N_COLUMN])
        cells = [str(r[a]) for a in axes]
        cells += [_cell(float(r[m]), float(r[m + SD_SUFFIX]), display(m), n) for m in metrics]
        rows.append([*cells, str(n)])
    return header, rows


def terminal_table(points: pd.DataFrame, axes: Sequence[str], metrics: Sequence[str] | None = None) -> Any:
    """A rich Table of the points: one row per point, the axes, then ``metrics`` (default
    :func:`key_metrics`) as mean ± sd over the seeds."""
    from rich.table import Table

    metrics = list(metrics) if metrics is not None else key_metrics(points)
    stats = point_stats(points, axes, metrics)
    header, rows = table_rows(stats, axes, metrics)
    seeds = int(stats[N_COLUMN].max()) if len(stats) else 0
    title = "mean ± sd over seeds" if seeds > 1 else None
    table = Table(title=title, title_justify="left", header_style="bold")
    for i, h in enumerate(header):
        table.add_column(h, justify="left" if i < len(axes) else "right")
    for row in rows:
        table.add_row(*row)
    return table
