"""Which runs a set of paths names, and what to call each: the input side of `bbrlab plot` and of
the sweep report.

A path is a run directory (`results.is_complete_run`), a sweep directory (``sweep.json`` /
``points.parquet`` beside ``runs/<point-id>/``; its points table names each run's point and seed,
so the seeds of one point can be averaged), or any directory, searched recursively for complete
runs. Each run gets a legend label: its name and the overrides it ran with (summary.json
``run.overrides``), or its sweep point's axis values; ``labels`` (``--label PATH=TEXT``) replaces
the name part for the runs found under PATH.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..results.rundir import configured_flows, is_complete_run
from ..results.rundir import find_runs as find_complete_runs
from ..results.rundir import read_summary as _read_summary
from ..sweep.aliases import short_name

__all__ = ["RunRef", "find_runs", "is_sweep_dir", "read_points", "parse_labels", "SWEEP_FILES"]

#: What makes a directory a sweep (written by `bbrlab sweep`).
SWEEP_FILES = ("sweep.json", "points.parquet")

#: Legend labels longer than this are cut (with "…"): a legend must not be wider than the plot.
LABEL_CHARS = 60


@dataclass(frozen=True)
class RunRef:
    """One complete run directory and how the figures name it."""

    path: Path
    label: str  # the legend label of the run, or of its sweep point (seeds share one)
    group: str  # runs with the same group are seeds of one point: averaged in the scatter
    seed: int | None
    summary: dict[str, Any]

    @property
    def algorithms(self) -> list[str]:
        """The configured flows' algorithms, in flow order, each once (application transfers aside)."""
        seen: dict[str, None] = {}
        for f in configured_flows(self.summary.get("flows", [])):
            seen.setdefault(str(f.get("cc", "")), None)
        return list(seen)


def is_sweep_dir(path: Path) -> bool:
    return path.is_dir() and any((path / f).is_file() for f in SWEEP_FILES)


def read_points(sweep_dir: Path) -> Any:
    """A sweep's points table (pandas; parquet, else the CSV copy), or None when it has neither."""
    import pandas as pd

    for name, reader in (("points.parquet", pd.read_parquet), ("points.csv", pd.read_csv)):
        f = sweep_dir / name
        if f.is_file():
            try:
                return reader(f)
            except Exception as e:  # pyarrow/pandas raise many kinds for a bad file
                raise UserError(f"{f}: damaged ({type(e).__name__}: {' '.join(str(e).split())[:160]})") from None
    return None


def sweep_axes(sweep_dir: Path, points: Any) -> list[str]:
    """The axis columns of a sweep's points table: sweep.json's axes, else the columns between
    `point` and `seed` (the agreed layout)."""
    try:
        axes = json.loads((sweep_dir / "sweep.json").read_text()).get("axes")
    except (OSError, ValueError, AttributeError):
        axes = None
    cols = list(points.columns)
    if isinstance(axes, dict):
        return [a for a in axes if a in cols]
    if "point" in cols and "seed" in cols:
        return cols[cols.index("point") + 1 : cols.index("seed")]
    return []


def parse_labels(items: list[str] | tuple[str, ...]) -> dict[str, str]:
    """``--label PATH=TEXT`` options as {PATH: TEXT}."""
    out = {}
    for item in items:
        key, sep, text = item.partition("=")
        if not sep or not key.strip() or not text.strip():
            raise UserError(f"--label {item!r}: use PATH=TEXT, e.g. --label runs/r1=baseline")
        out[key.strip()] = text.strip()
    return out


def _short(text: str) -> str:
    return text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1] + "…"


def _run_label(name: str, summary: dict[str, Any]) -> str:
    overrides = (summary.get("run") or {}).get("overrides") or []
    return _short(f"{name} {' '.join(str(o) for o in overrides)}".strip())


def _sweep_runs(sweep: Path, name: str, warn: Callable[[str], None]) -> list[RunRef] | None:
    points = read_points(sweep)
    if points is None or "run_dir" not in points.columns:
        return None
    axes = sweep_axes(sweep, points)
    refs = []
    for row in points.to_dict("records"):
        d = sweep / str(row["run_dir"])
        if not is_complete_run(d):
            warn(f"{d}: listed in {sweep}/points but not a complete run directory; left out")
            continue
        values = ", ".join(f"{short_name(a)}={row[a]}" for a in axes)
        seed = row.get("seed")
        refs.append(
            RunRef(
                d,
                _short(f"{name} {values}".strip()),
                # The point's axis values, not its `point` id: `bbrlab sweep` gives each seed its
                # own id (a hash of the resolved scenario, seed included).
                f"{sweep}#{values}" if axes else f"{sweep}#",
                int(seed) if seed is not None and seed == seed else None,
                _read_summary(d / "summary.json"),
            )
        )
    return refs


def find_runs(
    paths: list[str | Path], labels: dict[str, str] | None = None, warn: Callable[[str], None] | None = None
) -> list[RunRef]:
    """Every complete run that ``paths`` name (see the module docstring), in the order given.

    ``labels``: {PATH as given, or its directory name: TEXT}. ``warn`` hears about runs left out.
    """
    labels = dict(labels or {})
    warn = warn or (lambda message: None)
    if not paths:
        raise UserError("give at least one run or sweep directory")
    refs: list[RunRef] = []
    seen: set[Path] = set()
    used: set[str] = set()
    for given in paths:
        p = Path(given)
        if not p.exists():
            raise UserError(f"{p}: no such run or sweep directory")
        if not p.is_dir():
            raise UserError(f"{p}: not a directory; give a run directory (with summary.json) or a sweep directory")
        key = next((k for k in (str(given), os.path.normpath(str(given)), p.name) if k in labels), None)
        if key is not None:
            used.add(key)
        found: list[RunRef] | None = None
        if is_complete_run(p):
            summary = _read_summary(p / "summary.json")
            label = labels[key] if key is not None else _run_label(str(summary.get("name") or p.name), summary)
            found = [RunRef(p, label, str(p.resolve()), (summary.get("run") or {}).get("seed"), summary)]
        elif is_sweep_dir(p):
            # A sweep's points are told apart by their axis values; its name only when there are others.
            found = _sweep_runs(p, labels[key] if key is not None else p.name if len(paths) > 1 else "", warn)
        if found is None:
            found = []
            for d in sorted(find_complete_runs(p)):
                try:
                    summary = _read_summary(d / "summary.json")
                except UserError as e:
                    warn(f"{e}; left out")
                    continue
                name = labels[key] if key is not None else str(summary.get("name") or d.name)
                found.append(
                    RunRef(
                        d, _run_label(name, summary), str(d.resolve()), (summary.get("run") or {}).get("seed"), summary
                    )
                )
        if not found:
            raise UserError(f"{p}: no complete run directory in it (a run directory holds summary.json)")
        for ref in found:
            if ref.path.resolve() not in seen:
                seen.add(ref.path.resolve())
                refs.append(ref)
    unused = sorted(set(labels) - used)
    if unused:
        raise UserError(
            f"--label {unused[0]}=…: {unused[0]} is none of the given paths; use --label PATH=TEXT "
            "with PATH as given on the command line or its directory name"
        )
    return _disambiguate(refs)


def _disambiguate(refs: list[RunRef]) -> list[RunRef]:
    """Two runs (not seeds of one point) with one label get their directory names added."""
    groups_by_label: dict[str, set[str]] = {}
    for r in refs:
        groups_by_label.setdefault(r.label, set()).add(r.group)
    out = []
    for r in refs:
        if len(groups_by_label[r.label]) > 1:
            r = RunRef(r.path, _short(f"{r.label} [{r.path.name}]"), r.group, r.seed, r.summary)
        out.append(r)
    return out
