"""``bbrlab.sweep(...)``: a sweep from Python, returning its points table (see bbrlab.notebook)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["sweep", "SWEEP_DIR_ATTR", "AXES_ATTR"]

#: ``DataFrame.attrs`` keys of a sweep's points table: its directory and its axes (full paths).
SWEEP_DIR_ATTR = "sweep_dir"
AXES_ATTR = "axes"


def sweep(
    scenario: str | Path,
    *,
    grid: Sequence[str] = (),
    sets: Sequence[str] = (),
    seeds: int | None = None,
    out: str | Path | None = None,
    jobs: int | None = None,
    plots: bool = False,
) -> pd.DataFrame:
    """Run ``scenario`` over ``grid`` (``"buffer=0.5bdp,2bdp"``, ``"flows.0.cc=bbr1,cubic"``) and
    ``seeds`` seeds, each run with the ``sets`` overrides, as `bbrlab sweep` does; return the
    points table: one row per run, the axes' values, ``seed``, ``run_dir`` and the run's metrics
    (``goodput_bps``, ``<cc>.share``, ``rtt_p95_ms``, ``jain`` …). ``attrs["sweep_dir"]`` is the
    sweep directory (``out``, default ``sweeps/<name>-…``: runs already there are not run again),
    ``attrs["axes"]`` the axes as full paths. ``plots``: draw each run's PNGs (off: faster)."""
    from .grid import plan_sweep
    from .run import run_sweep

    plan = plan_sweep(scenario, grid=list(grid), sets=list(sets), seeds=seeds)
    outcome = run_sweep(plan, out=out, jobs=jobs, plots=plots)
    points = outcome.table
    points.attrs[SWEEP_DIR_ATTR] = str(outcome.path)
    points.attrs[AXES_ATTR] = [a.path for a in plan.axes]
    return points
