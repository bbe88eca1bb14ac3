"""Reading a scenario: TOML → ``--set`` overrides → the validated model, or one ScenarioError."""

from __future__ import annotations

import re
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from .. import units
from ..errors import ScenarioError, ScenarioWarning
from ._toml import tomllib
from .checks import split_checks
from .core import load_core
from .errors import from_validation_error, with_set_source
from .model import Scenario
from .overrides import apply_overrides, ignored_settings
from .traces import read_cdfs, read_traces

__all__ = [
    "load_scenario",
    "parse_scenario",
    "check_flow_count",
    "read_scenario_file",
    "split_sweep",
    "SWEEP_TABLE",
    "default_name",
]

#: A scenario file's ``[sweep]`` table (the grid `bbrlab sweep` runs) belongs to the front end:
#: it is taken out here, before the model and the core see the scenario, and checked by
#: ``bbrlab.sweep.grid`` (which `bbrlab sweep` and `bbrlab validate` call).
SWEEP_TABLE = "sweep"


def split_sweep(raw: dict[str, Any]) -> tuple[dict[str, Any], Any]:
    """(the scenario's tables without ``[sweep]``, the ``[sweep]`` table or None)."""
    if SWEEP_TABLE not in raw:
        return raw, None
    rest = dict(raw)
    return rest, rest.pop(SWEEP_TABLE)


def parse_scenario(
    raw: dict[str, Any],
    *,
    overrides: Sequence[str] = (),
    default_name: str = "scenario",
    base_dir: Path | None = None,
) -> Scenario:
    """Validate raw TOML tables (already read, overrides not yet applied; a ``[sweep]`` table is
    left out: it describes a sweep over the scenario, not the scenario). Trace files are read
    relative to ``base_dir`` (the scenario file's folder; None: the working folder)."""
    raw, _ = split_sweep(raw)
    raw, checks = split_checks(raw)  # [checks]: the front end's, like [sweep] (scenario/checks.py)
    raw = apply_overrides(raw, overrides)
    raw.setdefault("name", default_name)
    try:
        raw = read_cdfs(read_traces(raw, base_dir), base_dir)
    except ScenarioError as e:
        raise with_set_source(e, overrides) from None
    try:
        check_flow_count(raw)
    except ScenarioError as e:
        raise with_set_source(e, overrides) from None
    for note in ignored_settings(raw):
        warnings.warn(note, ScenarioWarning, stacklevel=3)
    try:
        scenario = Scenario.model_validate(raw)
    except ValidationError as exc:
        raise from_validation_error(exc, overrides) from None
    except ScenarioError as e:  # the core's check of the whole scenario
        raise with_set_source(e, overrides) from None
    scenario._overrides = tuple(overrides)
    scenario._checks = checks
    return scenario


def check_flow_count(raw: dict[str, Any]) -> None:
    """Refuse at once a scenario whose ``count``s expand to more flows than the core takes (the
    schema's bound on ``count``, the simulator's limit on flows after expansion): before
    anything checks, let alone expands, its [[flows]] tables one by one. Values that are not
    counts are left to the field checks."""
    from .core import schema

    flows = raw.get("flows")
    if not isinstance(flows, list):
        return
    limit = schema()["$defs"]["Flow"]["properties"]["count"]["maximum"]
    total = 0
    for i, f in enumerate(flows):
        count = f.get("count", 1) if isinstance(f, dict) else 1
        if not isinstance(count, int) or isinstance(count, bool) or count < 1:
            count = 1
        if count > limit:
            raise ScenarioError(f"flows.{i}.count", f"{units._show(count)} is out of range; it must be in [1, {limit}]")
        total += count
    if total > limit:
        raise ScenarioError("flows", f"{total} flows after expanding count; the limit is {limit}")


def load_scenario(path: str | Path, overrides: Sequence[str] | None = None) -> Scenario:
    """Read, override and validate a scenario file; raises :class:`ScenarioError` on any problem."""
    p = Path(path)
    raw = read_scenario_file(p)
    scenario = parse_scenario(raw, overrides=overrides or (), default_name=default_name(p), base_dir=p.parent)
    scenario._source_file = str(path)
    scenario._has_sweep_table = SWEEP_TABLE in raw
    return scenario


def read_scenario_file(path: str | Path) -> dict[str, Any]:
    """A scenario file's raw TOML tables (``[sweep]`` included), or one ScenarioError."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise ScenarioError("", f"{p}: no such scenario file") from None
    except IsADirectoryError:
        raise ScenarioError("", f"{p}: is a directory, not a scenario file") from None
    except OSError as e:
        raise ScenarioError("", f"{p}: cannot read: {e.strerror}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ScenarioError("", f"{p}: not a TOML file (not UTF-8 text)") from None
    return parse_toml(text, str(p))


def parse_toml(text: str, where: str) -> dict[str, Any]:
    """TOML text as tables, or one ScenarioError saying why not (also for what the parser itself
    cannot take: integers over 4300 digits, nesting deeper than Python's recursion limit)."""
    text = text.removeprefix("\ufeff")  # a UTF-8 byte-order mark is not part of the TOML
    # The core's reader answers where its answer is exactly tomllib's (TOML 1.0, no dates or
    # times, 64-bit integers), ~3x faster on large files; tomllib answers the rest and words
    # every error.
    fast = getattr(load_core(), "parse_toml", None)
    tables = fast(text) if fast is not None else None
    if tables is not None:
        return tables
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError("", f"{where}: not valid TOML: {e}") from None
    except RecursionError:
        raise ScenarioError("", f"{where}: not a usable scenario: values nested too deeply") from None
    except ValueError:  # Python refuses integer literals of more than 4300 digits
        raise ScenarioError("", f"{where}: not a usable scenario: an integer with more than 4300 digits") from None


def default_name(p: Path) -> str:
    """A scenario's name when it sets none: its file name, reduced to the characters names allow."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", p.stem).strip("-._") or "scenario"
