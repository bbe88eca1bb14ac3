"""The scenario model and the core's config: one shape, two unit systems.

:func:`to_core` turns a validated model (integer SI values under human names) into the core's JSON
config (the same values under the config's names, ``rate`` → ``rate_bps``); :func:`from_core` does
the reverse. :func:`check` hands a model to the core, which checks it (bounds, relations between
fields) and returns it with every default filled plus the facts derived from it (BDP, the shared
queue's limit); a core error comes back as a :class:`ScenarioError` naming the scenario's field.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from .. import units
from ..errors import ScenarioError, SimulationError
from .fields import buffer_to_core

if TYPE_CHECKING:
    from .model import Scenario

__all__ = ["load_core", "to_core", "from_core", "check", "human_path", "schema"]


def load_core() -> Any:
    """Import the compiled core, or explain how to build it."""
    try:
        from bbrlab import _core  # type: ignore[attr-defined]
    except ImportError as e:
        raise SimulationError(
            f"the simulator core (bbrlab._core) is not available ({e}); build it with `pip install -e .`"
        ) from None
    return _core


@lru_cache(maxsize=1)
def schema() -> dict[str, Any]:
    """The core's config schema (JSON Schema draft 2020-12)."""
    return json.loads(load_core().config_schema())


def _model_maps() -> tuple[dict[str, dict[str, tuple[str, str | None]]], dict[str, dict[str, str]], Any]:
    from . import model

    return model.CORE_KEYS, model.VARIANTS, model


def _value_to_core(v: Any) -> Any:
    if isinstance(v, BaseModel):
        return to_core(v)
    if isinstance(v, list):
        return [_value_to_core(x) for x in v]
    if isinstance(v, units.Buffer):
        return buffer_to_core(v)
    return v


def to_core(m: BaseModel) -> dict[str, Any]:
    """A model as the core's config (SI units, config names); ``None`` fields are left out, so
    the core fills its defaults."""
    keys, _, _ = _model_maps()
    out: dict[str, Any] = {}
    for field, (core_key, _) in keys[type(m).__name__].items():
        v = getattr(m, field)
        if v is not None:
            out[core_key] = _value_to_core(v)
    return out


def _rename(data: Any, target: str | None) -> Any:
    """Config names → scenario names, recursively, for the model ``target``."""
    keys, variants, model = _model_maps()
    if target is None or not isinstance(data, (dict, list)):
        return data
    if isinstance(data, list):
        return [_rename(x, target) for x in data]
    if target in variants:
        target = variants[target].get(data.get("kind", ""), target)
    if target not in keys:
        return data
    fields = getattr(model, target).model_fields
    out = {}
    for field, (core_key, nested) in keys[target].items():
        if core_key in data:
            out[fields[field].alias or field] = _rename(data[core_key], nested)
    return out


def from_core(data: dict[str, Any], target: str = "Scenario") -> Any:
    """The core's config as a model (values taken as SI units; no second core check)."""
    _, _, model = _model_maps()
    return getattr(model, target).model_validate(_rename(data, target), context={"si": True})


def human_path(core_path: str, scenario: Scenario) -> str:
    """A config path (``flows.1.mss_bytes``) as the scenario's path (``flows.1.mss``)."""
    from .codegen import human_key

    keys, _, _ = _model_maps()
    out: list[str] = []
    obj: Any = scenario
    for seg in (p for p in core_path.split(".") if p):
        if isinstance(obj, list) and seg.isdigit():
            out.append(seg)
            obj = obj[int(seg)] if int(seg) < len(obj) else None
            continue
        mapping = keys.get(type(obj).__name__, {}) if isinstance(obj, BaseModel) else {}
        field = next((f for f, (k, _) in mapping.items() if k == seg), None)
        if field is None:
            out.append(human_key(seg))
            obj = None
            continue
        out.append(type(obj).model_fields[field].alias or field)
        obj = getattr(obj, field)
    return ".".join(out)


def check(scenario: Scenario) -> tuple[dict[str, Any], dict[str, Any]]:
    """The core's verdict on a scenario: (resolved config, derived facts), or a ScenarioError."""
    core = load_core()
    try:
        resolved, derived = core.resolve_config(json.dumps(to_core(scenario)))
    except core.ConfigError as e:
        path, message = e.args
        raise ScenarioError(human_path(path, scenario), message) from None
    return json.loads(resolved), json.loads(derived)
