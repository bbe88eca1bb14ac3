"""A sweep's answer as figures: metrics against a sweep axis, seeds as error bars.

``bbrlab plot SWEEP --x AXIS --y METRIC [--hue AXIS] [--col AXIS]`` draws METRIC (a column of the
points table: ``cubic.share``, ``rtt_p95_ms``, ``jain`` …) against AXIS, one marker per value
of AXIS at the mean over its seeds with a bar of ± one standard deviation; ``--hue`` draws a line
per value of another axis, ``--col`` a panel per value of another. One axis named by none of them
is drawn as ``--hue``; with more, they are pooled (the title says so). Without ``--y`` the figure has a row of panels per key metric
(``sweep.summary.key_metrics``: goodput and share per algorithm — one line each —, p95 RTT,
retransmission rate, Jain's index); without ``--x``, `bbrlab plot SWEEP` draws that figure for
every axis (``by_<axis>.png``).

An axis whose values are numbers with one unit ("0.25bdp", "1bdp", "16bdp") is drawn to scale
(logarithmic when the values span more than a factor 20); any other axis ("bbr1", "cubic") as
categories in the sweep's order.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ..errors import UserError, did_you_mean
from ..plots.figures import new_figure, save
from ..sweep.aliases import resolve_axis, short_name
from ..sweep.summary import SD_SUFFIX, display, key_metrics, point_stats
from .runset import read_points, sweep_axes

__all__ = ["plot_sweep_metrics", "axis_positions", "metric_figure", "metric_panels"]

#: A value that is a number with a unit: "0.25bdp", "100Mbps", "1.5%", "40ms".
_NUMBER_UNIT = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([^\d\s]*)\s*$")

#: More values than this on --hue would make the legend the figure: refused.
MAX_HUE = 10


@dataclass(frozen=True)
class AxisScale:
    positions: dict[str, float]  # value as written -> x position
    numeric: bool
    unit: str  # the values' common unit, when numeric


def axis_positions(values: Sequence[str]) -> AxisScale:
    """Where each of ``values`` (an axis's values, as written) goes on the x axis: its number
    when all share one unit, else its rank in the given order."""
    order = list(dict.fromkeys(str(v) for v in values))
    parsed = [_NUMBER_UNIT.match(v) for v in order]
    units = {m.group(2).lower() for m in parsed if m}
    if all(parsed) and len(units) == 1:
        return AxisScale({v: float(m.group(1)) for v, m in zip(order, parsed) if m}, True, units.pop())
    return AxisScale({v: float(i) for i, v in enumerate(order)}, False, "")


def metric_panels(points: pd.DataFrame, y: str | None) -> list[list[str]]:
    """The panels of a figure: lists of columns drawn together (one line each). ``y``: one
    metric; None: the key metrics, an algorithm's goodput beside the others' on one panel."""
    if y is not None:
        return [[y]]
    panels: dict[str, list[str]] = {}
    for col in key_metrics(points):
        panels.setdefault(col.rpartition(".")[2], []).append(col)
    return list(panels.values())


def _check_column(points: pd.DataFrame, axes: Sequence[str], name: str) -> str:
    if name in points.columns and name not in axes and name not in ("point", "seed", "run_dir", "error"):
        return name
    metrics = [c for c in points.columns if c not in (*axes, "point", "seed", "run_dir", "error")]
    raise UserError(
        f"--y {name}: not a metric of this sweep{did_you_mean(name, metrics)} (its metrics: {', '.join(metrics)})"
    )


def _check_axis(option: str, name: str | None, axes: Sequence[str]) -> str | None:
    if name is None:
        return None
    path = resolve_axis(name)
    if path not in axes:
        shown = ", ".join(f"{a} ({short_name(a)})" if short_name(a) != a else a for a in axes) or "none"
        raise UserError(f"{option} {name}: not an axis of this sweep{did_you_mean(path, axes)} (its axes: {shown})")
    return path


def metric_figure(
    points: pd.DataFrame,
    axes: Sequence[str],
    x: str,
    panels: list[list[str]],
    *,
    hue: str | None = None,
    col: str | None = None,
) -> Figure:
    """Rows of ``panels`` (columns of ``points``), a column of panels per value of ``col``: each
    column's mean over seeds against ``x``, ± one standard deviation, a line per value of ``hue``."""
    group = [a for a in (x, hue, col) if a is not None]
    metrics = list(dict.fromkeys(c for panel in panels for c in panel))
    stats = point_stats(points, group, metrics)
    scale = axis_positions(points[x].astype(str).tolist())
    hues = list(dict.fromkeys(points[hue].astype(str))) if hue else [None]
    cols = list(dict.fromkeys(points[col].astype(str))) if col else [None]
    if len(hues) > MAX_HUE:
        raise UserError(f"--hue {hue}: {len(hues)} values; at most {MAX_HUE} lines are readable, use --col")
    fig = new_figure((max(5.0, 4.2 * len(cols)), 2.6 * len(panels) + 0.8), layout="constrained")
    grid = fig.subplots(len(panels), len(cols), squeeze=False, sharex=True)
    from matplotlib import colormaps

    cmap = colormaps["tab10"]
    pooled = [short_name(a) for a in axes if a not in group]
    for r, panel in enumerate(panels):
        for c, col_value in enumerate(cols):
            ax = grid[r][c]
            rows = stats if col_value is None or col is None else stats[stats[col].astype(str) == col_value]
            k = 0
            for column in panel:
                d = display(column)
                for hue_value in hues:
                    sub = rows if hue_value is None or hue is None else rows[rows[hue].astype(str) == hue_value]
                    xs = np.array([scale.positions[str(v)] for v in sub[x]], dtype=float)
                    order = np.argsort(xs, kind="stable")
                    ys = sub[column].to_numpy(float)[order] * d.scale
                    sd = sub[column + SD_SUFFIX].to_numpy(float)[order] * d.scale
                    if not np.isfinite(ys).any():
                        continue  # e.g. bbr1's goodput where a cc axis ran cubic alone: no entry
                    parts = [column.rpartition(".")[0]] if len(panel) > 1 else []
                    if hue is not None:
                        parts.append(f"{short_name(hue)}={hue_value}")
                    ax.errorbar(
                        xs[order],
                        ys,
                        yerr=sd,
                        fmt="o-",
                        ms=4,
                        lw=1.2,
                        capsize=3,
                        color=cmap(k % cmap.N),
                        label=" · ".join(p for p in parts if p) or None,
                    )
                    k += 1
            metric = display(panel[0].rpartition(".")[2]) if len(panel) > 1 else display(panel[0])
            ax.set_ylabel(f"{metric.label} ({metric.unit})" if metric.unit else metric.label, fontsize=8)
            ax.grid(True, alpha=0.3)
            ax.tick_params(labelsize=7)
            if metric.unit == "%" or metric.label.endswith("Jain"):
                ax.set_ylim(bottom=0)
            if k > 1:
                ax.legend(fontsize=7, loc="best")
            if r == 0 and col is not None:
                ax.set_title(f"{short_name(col)} = {col_value}", fontsize=9)
            if r == len(panels) - 1:
                ax.set_xlabel(f"{x}" + (f" ({scale.unit})" if scale.unit else ""), fontsize=8)
                if scale.numeric:
                    from .multiplot import _log_if_wide

                    _log_if_wide(ax, np.array(list(scale.positions.values())))
                    ax.set_xticks(sorted(scale.positions.values()))
                    ax.set_xticklabels([f"{v:g}" for v in sorted(scale.positions.values())])
                else:
                    ax.set_xticks(list(scale.positions.values()))
                    ax.set_xticklabels(list(scale.positions), rotation=20)
    runs = int(stats["seeds"].max()) if len(stats) else 0  # runs per marker: seeds × pooled values
    if pooled:
        note = [f"mean ± sd over up to {runs} runs: the seeds and every {', '.join(pooled)} pooled"]
    else:
        note = [f"mean ± sd over {runs} seeds" if runs > 1 else "one seed"]
    fig.suptitle(f"against {short_name(x)} — {'; '.join(note)}", fontsize=10)
    return fig


def _file_name(x: str, y: str | None) -> str:
    stem = f"{short_name(x)}" + (f"-{y}" if y else "")
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", f"by_{stem}") + ".png"


def plot_sweep_metrics(
    sweep_dir: str | Path,
    out_dir: str | Path,
    *,
    x: str | None = None,
    y: str | None = None,
    hue: str | None = None,
    col: str | None = None,
) -> list[Path]:
    """The metric-against-axis figures of one sweep into ``out_dir``: for ``x`` (a full path or
    short name), else for every axis; ``y`` one metric, else the key metrics. Returns the files
    (none for a sweep of seeds alone, unless an axis or metric was asked for: an error)."""
    sweep = Path(sweep_dir)
    points = read_points(sweep)
    if points is None:
        raise UserError(f"{sweep}: not a sweep directory (no points.parquet)")
    axes = sweep_axes(sweep, points)
    if not axes:
        if x is None and y is None and hue is None and col is None:
            return []  # seeds only: nothing to draw against (the caller draws the runs instead)
        raise UserError(f"{sweep}: the sweep has no axes to plot against")
    x_path = _check_axis("--x", x, axes)
    hue_path = _check_axis("--hue", hue, axes)
    col_path = _check_axis("--col", col, axes)
    if y is not None:
        y = _check_column(points, axes, y)
    chosen = [a for a in (x_path, hue_path, col_path) if a is not None]
    if len(set(chosen)) < len(chosen):
        raise UserError("--x, --hue and --col: give each a different axis")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    panels = metric_panels(points, y)
    if not panels:
        raise UserError(f"{sweep}: no metric to plot (did every run fail?)")
    written = []
    for axis in [x_path] if x_path is not None else axes:
        others = [a for a in axes if a != axis]
        h = hue_path
        free = [a for a in others if a != col_path]
        if h is None and len(free) == 1 and points[free[0]].nunique() <= MAX_HUE:
            h = free[0]  # one axis left: its values as lines rather than pooled
        if h == axis or col_path == axis:
            continue
        fig = metric_figure(points, axes, axis, panels, hue=h, col=col_path)
        written.append(save(fig, out / _file_name(axis, y), tight=False))
    return written
