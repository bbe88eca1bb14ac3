"""A sweep directory, and the cache that lets a sweep resume.

Layout::

    DIR/sweep.json        what the sweep is: scenario file, --set, axes, seeds, engine, version
    DIR/points.parquet    the points table (table.py), and the same as points.csv
    DIR/runs/<id>/        one complete run directory per point and seed

A run's id is the start of its cache key, a hash of the resolved scenario (the core's config,
every default filled, as canonical JSON) and of the code that runs it (:func:`code_identity`:
bbrlab's Python sources and the compiled core, byte for byte): the same run always gets the
same directory, and a run whose directory is complete (``results.is_complete_run``) is not run
again. Run directories are written atomically (``<id>.incomplete`` renamed at the end), so an
interrupted sweep leaves only whole runs, and the same command resumes it. Editing the scenario
file, upgrading bbrlab or editing its code in a checkout changes the keys, so stale runs are never reused (their directories stay,
unreferenced by the new table). A run that another sweep directory beside this one (under the same
parent, e.g. sweeps/) already made is taken from there (hard links) instead of being run again,
so extending a grid runs only the new points.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import shutil
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

from .._version import __version__
from ..errors import UserError
from ..results.provenance import default_run_dir
from ..results.results import is_complete_run
from ..results.rundir import check_out_dir

__all__ = ["run_key", "SWEEP_FILE", "RUNS_DIR", "open_sweep_dir", "DEFAULT_PARENT"]

SWEEP_FILE = "sweep.json"
RUNS_DIR = "runs"
DEFAULT_PARENT = Path("sweeps")


class SweepPlan(Protocol):
    """What this module reads of a plan (grid.SweepPlan, which imports this module for run_key)."""

    scenario_file: str
    name: str
    sets: list[str]
    seeds: list[int]
    runs: list[Any]

    @property
    def points(self) -> int: ...

    def axes_dict(self) -> dict[str, list[str]]: ...


@lru_cache(maxsize=1)
def code_identity() -> str:
    """A hash of the code a run's numbers depend on: every Python source of the package and the
    compiled core. The version alone is not enough: in a development checkout it stays the same
    while the simulator changes, and a sweep must not reuse runs of other code. (About 5 ms,
    once per process.)"""
    package = Path(__file__).resolve().parent.parent
    h = hashlib.sha256(f"bbrlab {__version__}".encode())
    for f in sorted(package.rglob("*.py")) + sorted(package.glob("_core*.so")) + sorted(package.glob("_core*.pyd")):
        h.update(str(f.relative_to(package)).encode() + b"\0" + f.read_bytes())
    return h.hexdigest()


def run_key(config: dict[str, Any]) -> str:
    """The cache key of a run: sha256 of the code's identity and the core config as canonical JSON."""
    text = json.dumps(config, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(f"{code_identity()}\n{text}".encode()).hexdigest()


def _identity(plan: SweepPlan) -> dict[str, Any]:
    """What makes two commands the same sweep (the engine and -j do not)."""
    return {
        "scenario_path": str(Path(plan.scenario_file).resolve()),
        "sets": plan.sets,
        "axes": plan.axes_dict(),
        "seeds": plan.seeds,
    }


def _description(plan: SweepPlan, engine: str) -> dict[str, Any]:
    return {
        "name": plan.name,
        "scenario_file": plan.scenario_file,
        **_identity(plan),
        "engine": engine,
        "points": plan.points,
        "runs": len(plan.runs),
        "bbrlab_version": __version__,
        "updated": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    }


def _read(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((path / SWEEP_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    return data if isinstance(data, dict) else None


def _same_sweep(data: dict[str, Any] | None, plan: SweepPlan) -> bool:
    return data is not None and all(data.get(k) == v for k, v in _identity(plan).items())


def _differs(data: dict[str, Any], plan: SweepPlan) -> str:
    names = {"scenario_path": "scenario file", "sets": "--set", "axes": "axes", "seeds": "seeds"}
    return ", ".join(names[k] for k, v in _identity(plan).items() if data.get(k) != v)


def _previous(plan: SweepPlan) -> Path | None:
    """The newest sweeps/<name>-* directory of the same sweep (so the same command resumes it)."""
    if not DEFAULT_PARENT.is_dir():
        return None
    found = [d for d in DEFAULT_PARENT.glob(f"{plan.name}-*") if d.is_dir() and _same_sweep(_read(d), plan)]
    return max(found, key=lambda d: (d.stat().st_mtime, d.name), default=None)


def open_sweep_dir(plan: SweepPlan, out: str | Path | None, engine: str) -> tuple[Path, bool]:
    """(the sweep directory, whether it resumes an earlier run of the same sweep).

    ``out`` None: the newest ``sweeps/<name>-*`` of the same sweep, else a new
    ``sweeps/<name>-<timestamp>``. An existing ``out`` must be a directory of the same sweep (it is
    resumed) or empty. Writes sweep.json, and removes partial run directories an interrupted run
    left behind.
    """
    resumed = False
    if out is None:
        prev = _previous(plan)
        path = prev if prev is not None else default_run_dir(plan.name, root=DEFAULT_PARENT)
        resumed = prev is not None
    else:
        path = Path(out)
        if path.exists():
            data = _read(path)
            if data is not None:
                if not _same_sweep(data, plan):
                    raise UserError(
                        f"--out {path}: holds another sweep (its {_differs(data, plan)} differ); "
                        "choose another directory"
                    )
                resumed = True
            elif not path.is_dir() or any(path.iterdir()):
                raise UserError(f"--out {path}: exists and is not a sweep directory; choose another directory")
    if not path.exists():
        check_out_dir(path)  # a usable name, a writable place, room for a small run
    try:
        (path / RUNS_DIR).mkdir(parents=True, exist_ok=True)
        tmp = path / (SWEEP_FILE + ".tmp")
        tmp.write_text(json.dumps(_description(plan, engine), indent=2) + "\n")
        os.replace(tmp, path / SWEEP_FILE)
    except OSError as e:
        raise UserError(f"--out {path}: cannot write the sweep directory: {e.strerror}") from None
    clean_partial(path)
    return path, resumed


def clean_partial(path: Path) -> None:
    """Remove run directories left half-written by an interrupted or killed run."""
    for d in (path / RUNS_DIR).glob("*.incomplete"):
        shutil.rmtree(d, ignore_errors=True)


def run_dir(path: Path, run_id: str) -> Path:
    return path / RUNS_DIR / run_id


def is_done(path: Path, run_id: str) -> bool:
    """Whether the run is in the sweep directory, taking it from a sibling sweep directory (another
    sweep under the same parent, e.g. sweeps/) that has it: a run id is its content's hash."""
    if is_complete_run(run_dir(path, run_id)):
        return True
    for other in sorted(path.parent.glob(f"*/{RUNS_DIR}/{run_id}")):
        if other.parent.parent != path and (other.parent.parent / SWEEP_FILE).is_file() and is_complete_run(other):
            try:
                _link_copy(other, run_dir(path, run_id))
                return True
            except OSError:
                continue  # unreadable or vanished: run it instead
    return False


def _link_copy(src: Path, final: Path) -> None:
    """A complete run directory from another sweep, hard-linked where the file system allows (run
    directories are never modified once complete), written atomically like any run directory."""
    tmp = final.with_name(final.name + ".incomplete")
    shutil.rmtree(tmp, ignore_errors=True)

    def link(a: str, b: str) -> None:
        try:
            os.link(a, b)
        except OSError:
            shutil.copy2(a, b)

    try:
        shutil.copytree(src, tmp, copy_function=link)
        os.rename(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
