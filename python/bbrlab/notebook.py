"""The sweep as a notebook calls it: ``bbrlab.sweep`` returns the points table as a DataFrame
(``sweep.api``) and ``bbrlab.plot_sweep`` draws it as `bbrlab plot SWEEP` does, returning the
figure (shown inline).

The CLI's `bbrlab sweep` and `bbrlab plot SWEEP` are these with a terminal around them: the same
plan (``sweep.grid.plan_sweep``: one grid language, full paths or the short names), the same
cached run directories, the same figure (``runs.sweepplot.metric_figure``)::

    import bbrlab
    points = bbrlab.sweep("examples/bbr-vs-cubic.toml", grid=["buffer=0.5bdp,2bdp,8bdp"], seeds=3)
    points.groupby("topology.bottleneck.buffer")["cubic.share"].mean()
    bbrlab.plot_sweep(points, x="buffer", y="cubic.share")
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .sweep.api import AXES_ATTR, sweep

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = ["sweep", "plot_sweep"]


def plot_sweep(
    points: pd.DataFrame | str | Path,
    *,
    x: str | None = None,
    y: str | None = None,
    hue: str | None = None,
    col: str | None = None,
) -> Figure:
    """A metric against a sweep axis, mean ± sd over seeds (`bbrlab plot SWEEP --x --y`), as a
    matplotlib figure. ``points``: what :func:`sweep` returned, or a sweep directory. ``x``: an
    axis (full path or short name; default the first); ``y``: a metric column (default the key
    metrics, a row of panels each); ``hue``/``col``: another axis as lines / as panels."""
    import pandas as pd

    from .errors import UserError
    from .runs.runset import read_points, sweep_axes
    from .runs.sweepplot import _check_axis, _check_column, metric_figure, metric_panels

    if isinstance(points, pd.DataFrame):
        frame = points
        axes = list(points.attrs.get(AXES_ATTR, ()))
    else:
        d = Path(points)
        read = read_points(d)
        if read is None:
            raise UserError(f"{d}: not a sweep directory (no points.parquet)")
        frame, axes = read, sweep_axes(d, read)
    if not axes:
        raise UserError("plot_sweep: the sweep has no axes to plot against")
    x_path = _check_axis("x", x, axes) or axes[0]
    y_col = _check_column(frame, axes, y) if y is not None else None
    panels = metric_panels(frame, y_col)
    if not panels:
        raise UserError("plot_sweep: no metric to plot (did every run fail?)")
    return metric_figure(
        frame, axes, x_path, panels, hue=_check_axis("hue", hue, axes), col=_check_axis("col", col, axes)
    )
