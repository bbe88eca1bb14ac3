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
    bbrlab.compare("examples/quick.toml", cc=["bbr3", "cubic"], head_to_head=True, sim_only=True)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .sweep.api import AXES_ATTR, sweep

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = ["sweep", "plot_sweep", "compare"]

#: ``DataFrame.attrs`` key of a comparison's table: its output directory.
OUT_ATTR = "out"


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


def compare(
    scenario: str | Path,
    *,
    cc: Sequence[str] = (),
    grid: Sequence[str] = (),
    sets: Sequence[str] = (),
    head_to_head: bool = False,
    duration: str | None = None,
    seeds: int = 3,
    emu_runs: int = 1,
    sim_only: bool = False,
    out: str | Path | None = None,
    echo: Callable[[str], Any] | None = print,
) -> pd.DataFrame:
    """`bbrlab compare` from Python: ``scenario`` on the simulator (``seeds`` runs) and the kernel
    (``emu_runs``; root, network namespaces; none with ``sim_only``) per point of ``grid``
    (``rate``, ``rtt``, ``buffer``, ``loss`` or their full paths) and algorithm of ``cc`` (each
    alone, or all in one run with ``head_to_head``); returns the table compare.csv holds (one
    row per point and algorithm: the backends' goodput, RTT, retransmissions and the error), with
    ``attrs["out"]`` its directory. Kernel runs start without a question. ``echo``: where the
    per-point lines go (None: nowhere)."""
    from .emu.compare import run_compare
    from .engine.runner import run as run_scenario
    from .errors import UserError
    from .sweep.compare_args import compare_grid
    from .sweep.compare_args import head_to_head as head_to_head_overrides

    grid_list, grid_ccs = compare_grid(grid)
    if grid_ccs and cc:
        raise UserError("compare: give the algorithms as cc or as a cc= grid axis, not both")
    ccs = tuple(cc) or tuple(grid_ccs)
    overrides = tuple(sets)
    if head_to_head:
        overrides, ccs = (*overrides, *head_to_head_overrides(str(scenario), overrides, ccs)), ()
    if not sim_only:
        from .emu.netns import check_environment

        check_environment()
    table, path = run_compare(
        str(scenario),
        sets=list(overrides),
        grid=grid_list,
        ccs=list(ccs),
        duration=duration,
        out=Path(out) if out is not None else None,
        run_fn=run_scenario,
        echo=echo or (lambda _line: None),
        seeds=seeds,
        emu_runs=emu_runs,
        sim_only=sim_only,
    )
    table.attrs[OUT_ATTR] = str(path)
    return table
