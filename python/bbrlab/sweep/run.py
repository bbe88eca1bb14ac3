"""Run a sweep's plan: skip the runs the cache has, run the rest on an engine, write the points table."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..engine.parallel import default_jobs
from ..errors import UserError
from .cache import RUNS_DIR, clean_partial, is_done, open_sweep_dir, run_dir
from .engines import RunTask, engine
from .grid import SweepPlan
from .table import points_frame, read_metrics, write_points

__all__ = ["SweepOutcome", "run_sweep"]

#: progress(done, total): after the cached runs are counted, and after every run.
ProgressFn = Callable[[int, int], None]


@dataclass
class SweepOutcome:
    path: Path  # the sweep directory
    table: Any  # the points table (a DataFrame)
    ran: int
    cached: int
    failed: int
    resumed: bool

    @property
    def summary_line(self) -> str:
        runs = self.ran + self.cached + self.failed
        return (
            f"{runs} run{'s' * (runs != 1)}: {self.ran} ran, {self.cached} cached, {self.failed} failed; "
            f"{self.path / 'points.parquet'}"
        )


def _error_text(e: BaseException) -> str:
    text = str(e) if isinstance(e, UserError) else f"{type(e).__name__}: {e}"
    return " ".join(text.split())


def run_sweep(
    plan: SweepPlan,
    *,
    out: str | Path | None = None,
    engine_name: str = "local",
    jobs: int | None = None,
    address: str | None = None,
    plots: bool = True,
    progress: ProgressFn | None = None,
    on_open: Callable[[Path, bool], None] | None = None,
) -> SweepOutcome:
    """Run every run of ``plan`` not already in the sweep directory and write its points table.

    ``out``: the sweep directory (see cache.open_sweep_dir); ``jobs``: parallel runs (local default:
    CPU count; Ray default: as many as the cluster takes); ``on_open(path, resumed)`` is called once
    the directory is known, before anything runs. A failed run is recorded in the table's ``error``
    column and the others go on. Ctrl-C stops the engine (no worker left) and keeps finished runs.
    """
    run_engine = engine(engine_name)
    if address is not None and engine_name != "ray":
        raise UserError("--address: only with --engine ray")
    if jobs is not None and jobs < 1:
        raise UserError(f"-j {jobs}: use 1 or more")
    path, resumed = open_sweep_dir(plan, out, engine_name)
    if on_open is not None:
        on_open(path, resumed)
    # One task per distinct run: two points that resolve to the same scenario (an alias, "0" and
    # "0%") share a key, hence a directory, and must not be run twice at once.
    todo: dict[str, int] = {}
    tasks: list[RunTask] = []
    for r in plan.runs:
        if r.id in todo or is_done(path, r.id):
            continue
        todo[r.id] = len(tasks)
        tasks.append(RunTask(r.scenario, run_dir(path, r.id).resolve(), plots, tuple(r.overrides), plan.scenario_file))
    distinct = len({r.id for r in plan.runs})
    cached = distinct - len(tasks)
    errors: dict[str, str] = {}
    done = cached
    if progress:
        progress(done, distinct)
    try:
        if tasks:
            if jobs is None and engine_name == "local":
                jobs = default_jobs()
            with closing(run_engine(tasks, jobs=jobs, address=address)) as results:
                for i, err in results:
                    if err is not None:
                        errors[tasks[i].run_dir.name] = _error_text(err)
                    done += 1
                    if progress:
                        progress(done, distinct)
    finally:
        clean_partial(path)  # what a stopped worker left half-written
    rows = []
    for r in plan.runs:
        row: dict[str, Any] = {"point": r.id, **r.values, "seed": r.seed}
        if r.id in errors:
            row.update(run_dir="", error=errors[r.id])
        else:
            row.update(run_dir=f"{RUNS_DIR}/{r.id}", **read_metrics(run_dir(path, r.id)), error="")
        rows.append(row)
    table = points_frame([a.path for a in plan.axes], rows)
    write_points(table, path)
    return SweepOutcome(path, table, ran=len(tasks) - len(errors), cached=cached, failed=len(errors), resumed=resumed)
