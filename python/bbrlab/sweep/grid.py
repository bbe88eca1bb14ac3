"""A sweep's plan: the axes (scenario paths, each with values), the seeds, and every run they make.

An axis is anything ``--set`` reaches (``topology.bottleneck.loss``, ``flows.0.cc``), or one of the
short names of ``aliases.py`` (``buffer``, ``cc`` …), stored as its full path; its values are
strings exactly as on the command line, applied through ``scenario.overrides``. Axes come from
``--grid PATH=V1,V2`` and from a scenario file's ``[sweep]`` table::

    [sweep]
    grid = { "topology.bottleneck.loss" = ["0%", "1%"], "flows.0.cc" = ["bbr", "cubic"] }
    seeds = 2

A ``--grid`` axis replaces the file's axis of the same path (in the file's position). The points are
the cartesian product of the axes, in axis order; every point runs with seeds seed..seed+N-1
(``seed`` of the base scenario). Every run is validated while the plan is made, so a bad axis or
value fails in one line before anything runs.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ScenarioError, UserError, did_you_mean
from ..scenario import Scenario
from ..scenario.load import SWEEP_TABLE, default_name, parse_scenario, read_scenario_file, split_sweep
from ..scenario.overrides import apply_overrides
from .aliases import expand_override, resolve_axis
from .cache import run_key

__all__ = ["Axis", "PlannedRun", "SweepPlan", "plan_sweep", "parse_grid_option", "MAX_RUNS", "MAX_SEEDS"]

#: Plans bigger than this are refused before anything is validated (validating a run costs ~4 ms,
#: so this many take most of a minute before the first run starts).
MAX_RUNS = 10_000
MAX_SEEDS = 1000
_TABLE_KEYS = ("grid", "seeds")


@dataclass(frozen=True)
class Axis:
    path: str
    values: tuple[str, ...]
    source: str  # where it was written, for messages: "--grid" or "[sweep] grid"


@dataclass
class PlannedRun:
    """One point of the grid with one seed: a row of the points table and a run directory."""

    values: dict[str, str]  # axis path -> value
    seed: int
    overrides: list[str]  # what `bbrlab run --set` would need to make the same run, seed included
    scenario: Scenario
    key: str  # the cache key: hash of the resolved scenario and bbrlab's version (cache.run_key)

    @property
    def id(self) -> str:
        """The run's id: its directory under runs/ and the `point` column."""
        return self.key[:12]


@dataclass
class SweepPlan:
    scenario_file: str  # as given
    name: str  # the base scenario's name
    sets: list[str]
    axes: list[Axis]
    seeds: list[int]
    runs: list[PlannedRun] = field(default_factory=list)

    @property
    def points(self) -> int:
        return math.prod(len(a.values) for a in self.axes)

    def axes_dict(self) -> dict[str, list[str]]:
        return {a.path: list(a.values) for a in self.axes}

    def describe(self) -> str:
        """ "4 points × 2 seeds = 8 runs" (one line, for validate and the progress bar)."""
        axes = "; ".join(f"{a.path} = {', '.join(a.values)}" for a in self.axes) or "no axes"
        return (
            f"{self.points} point{'s' * (self.points != 1)} × {len(self.seeds)} seed{'s' * (len(self.seeds) != 1)} "
            f"= {len(self.runs)} run{'s' * (len(self.runs) != 1)} ({axes})"
        )


def _split_values(text: str) -> list[str]:
    return [v.strip() for v in text.split(",")]


def parse_grid_option(text: str) -> Axis:
    """``--grid PATH=V1,V2,...`` as an Axis (shape only; the path and values are checked later)."""
    if "=" not in text:
        raise UserError(f"--grid {text}: expected PATH=V1,V2,..., e.g. --grid topology.bottleneck.loss=0%,1%")
    name, values = (s.strip() for s in text.split("=", 1))
    path = resolve_axis(name)
    if not path:
        raise UserError(f"--grid {text}: no field path before '='; write e.g. --grid flows.0.cc=bbr,cubic")
    vals = _split_values(values)
    if not values or any(v == "" for v in vals):
        raise UserError(f"--grid {path}: an empty value; write values separated by commas, e.g. --grid {path}=A,B")
    return Axis(path, tuple(vals), "--grid")


def _table_value(v: Any) -> str | None:
    """A value from the [sweep] table as the string --set would take, or None if it is not one."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, str)):
        return str(v).strip()
    if isinstance(v, float) and math.isfinite(v):
        return repr(v)
    return None


def _axes_from_table(table: Any) -> tuple[list[Axis], int | None]:
    """The [sweep] table's axes and seeds, checked for shape (paths and values are checked later)."""
    if not isinstance(table, dict):
        raise ScenarioError(SWEEP_TABLE, "not a table; write [sweep] with grid = { PATH = [VALUES] } and seeds = N")
    for k in table:
        if k not in _TABLE_KEYS:
            raise ScenarioError(f"{SWEEP_TABLE}.{k}", f"unknown key '{k}' in [sweep]{did_you_mean(k, _TABLE_KEYS)}")
    seeds = table.get("seeds")
    if seeds is not None and (isinstance(seeds, bool) or not isinstance(seeds, int) or not 1 <= seeds <= MAX_SEEDS):
        raise ScenarioError(
            f"{SWEEP_TABLE}.seeds", f"{seeds!r} is not a whole number from 1 to {MAX_SEEDS}; write e.g. seeds = 3"
        )
    grid = table.get("grid", {})
    if not isinstance(grid, dict):
        raise ScenarioError(
            f"{SWEEP_TABLE}.grid", 'not a table; write grid = { "topology.bottleneck.loss" = ["0%", "1%"] }'
        )
    axes = []
    for path, values in grid.items():
        where = f'{SWEEP_TABLE}.grid."{path}"'
        if not isinstance(values, list) or not values:
            raise ScenarioError(where, 'write a non-empty list of values, e.g. ["0%", "1%"]')
        vals = [_table_value(v) for v in values]
        if any(v is None or v == "" for v in vals):
            bad = next(v for v, s in zip(values, vals) if s is None or s == "")
            raise ScenarioError(where, f"{bad!r} is not a value --set takes; write a string, number or boolean")
        axes.append(Axis(resolve_axis(path), tuple(v for v in vals if v is not None), "[sweep] grid"))
    return axes, seeds


def _merge(file_axes: list[Axis], cli_axes: list[Axis]) -> list[Axis]:
    """The file's axes with the command line's replacing those of the same path, then the new ones."""
    seen: set[str] = set()
    for a in cli_axes:
        if a.path in seen:
            raise UserError(f"--grid {a.path}: given twice; put all its values in one --grid {a.path}=A,B")
        seen.add(a.path)
    by_path = {a.path: a for a in cli_axes}
    merged = [by_path.pop(a.path, a) for a in file_axes]
    return merged + [a for a in cli_axes if a.path in by_path]


def _check_axes(
    raw: dict[str, Any], axes: list[Axis], sets: Sequence[str], flows: int, base_dir: Path | None = None
) -> None:
    """Every axis path reachable and every value valid on the base scenario (of ``flows``
    configured flows); one line if not."""
    set_paths = {s.split("=", 1)[0].strip() for s in sets}
    for a in axes:
        if a.path == "seed":
            raise UserError(f"{a.source} seed: the seeds are not an axis; use --seeds N (seeds seed..seed+N-1)")
        if a.path in set_paths:
            raise UserError(f"{a.source} {a.path}: also given with --set; sweep it or set it, not both")
        dup = next((v for i, v in enumerate(a.values) if v in a.values[:i]), None)
        if dup is not None:
            raise UserError(f'{a.source} {a.path}: the value "{dup}" is listed twice')
        if not expand_override(a.path, a.values[0], flows):
            raise UserError(f"{a.source} {a.path}: the scenario has no flows for it to set")
        try:
            apply_overrides(raw, expand_override(a.path, a.values[0], flows))
        except ScenarioError as e:  # the path: "--set PATH: unknown key ..." in --set's words
            raise ScenarioError(f"{a.source} {a.path}", e.message) from None
        for v in a.values:
            try:
                parse_scenario(raw, overrides=[*sets, *expand_override(a.path, v, flows)], base_dir=base_dir)
            except ScenarioError as e:
                if e.path.split(" ")[0] == a.path or e.path.startswith(a.path + "."):
                    raise ScenarioError(f"{e.path.split(' ')[0]} (from {a.source})", e.message, more=e.more) from None
                raise ScenarioError(f"{a.source} {a.path}={v}", str(e)) from None


def plan_sweep(
    scenario_file: str | Path,
    *,
    grid: Sequence[str] = (),
    sets: Sequence[str] = (),
    seeds: int | None = None,
    require_table: bool = False,
) -> SweepPlan:
    """Read the scenario file and make the sweep's plan: every run validated, with its cache key.

    ``grid``: ``--grid`` options; ``sets``: ``--set`` options (applied to every run); ``seeds``:
    ``--seeds`` (default: the [sweep] table's, else 1). ``require_table``: only check the file's
    [sweep] table (for `bbrlab validate`).
    """
    path = Path(scenario_file)
    raw_all = read_scenario_file(path)
    raw, table = split_sweep(raw_all)
    file_axes: list[Axis] = []
    table_seeds = None
    if table is not None:
        file_axes, table_seeds = _axes_from_table(table)
    elif require_table:
        raise UserError(f"{path}: has no [sweep] table")
    cli_axes = [parse_grid_option(g) for g in grid]
    axes = _merge(file_axes, cli_axes)
    n_seeds = seeds if seeds is not None else (table_seeds or 1)
    if not 1 <= n_seeds <= MAX_SEEDS:
        raise UserError(f"--seeds {n_seeds}: use a whole number from 1 to {MAX_SEEDS}")
    name = default_name(path)
    base = parse_scenario(raw, overrides=sets, default_name=name, base_dir=Path(path).parent)
    _check_axes(raw, axes, sets, len(base.flows), Path(path).parent)
    seed_list = list(range(base.seed, base.seed + n_seeds))
    plan = SweepPlan(scenario_file=str(scenario_file), name=base.name, sets=list(sets), axes=axes, seeds=seed_list)
    total = plan.points * n_seeds
    if total > MAX_RUNS:
        raise UserError(
            f"the sweep has {total} runs ({plan.points} points × {n_seeds} seeds); at most {MAX_RUNS}: "
            "use fewer axes, values or seeds"
        )
    for combo in itertools.product(*(a.values for a in axes)):
        values = dict(zip((a.path for a in axes), combo))
        for seed in seed_list:
            axis_sets = [o for p, v in values.items() for o in expand_override(p, v, len(base.flows))]
            overrides = [*sets, *axis_sets, f"seed={seed}"]
            try:
                scn = parse_scenario(raw, overrides=overrides, default_name=name, base_dir=Path(path).parent)
            except ScenarioError as e:
                point = ", ".join(f"{p}={v}" for p, v in values.items())
                raise ScenarioError(f"sweep point {point}, seed {seed}", str(e)) from None
            plan.runs.append(PlannedRun(values, seed, overrides, scn, run_key(scn.resolve())))
    return plan
