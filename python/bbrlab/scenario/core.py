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

from .. import units
from ..errors import ScenarioError, SimulationError
from .keys import CORE_KEYS

if TYPE_CHECKING:
    from pydantic import BaseModel

# pydantic (and the field types built on it) is imported inside the functions that take a model:
# `bbrlab cc` and the result schema need only load_core(), and pydantic costs them 0.1-0.2 s.

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


def _value_to_core(v: Any) -> Any:
    from pydantic import BaseModel

    from .fields import buffer_to_core

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
    out: dict[str, Any] = {}
    for field, (core_key, _) in CORE_KEYS[type(m).__name__].items():
        v = getattr(m, field)
        if v is not None:
            out[core_key] = _value_to_core(v)
    return out


def _rename(data: Any, cls: type[BaseModel]) -> Any:
    """Config names → scenario names, recursively, for the model ``cls`` (a list: each item;
    a tagged union: the variant its ``kind`` names)."""
    from .introspect import item_model

    if not isinstance(data, dict) or cls.__name__ not in CORE_KEYS:
        return data
    out = {}
    for field, (core_key, nested) in CORE_KEYS[cls.__name__].items():
        if core_key not in data:
            continue
        info = cls.model_fields[field]

        def sub(x: Any) -> Any:
            target = item_model(info.annotation, x.get("kind") if isinstance(x, dict) else None)
            return _rename(x, target) if target is not None else x

        value = data[core_key]
        if nested is not None:
            value = [sub(x) for x in value] if isinstance(value, list) else sub(value)
        out[info.alias or field] = value
    return out


def from_core(data: dict[str, Any], cls: type[BaseModel]) -> Any:
    """The core's config as an instance of the model ``cls`` (values taken as SI units; no second
    core check)."""
    return cls.model_validate(_rename(data, cls), context={"si": True})


def human_path(core_path: str, scenario: BaseModel) -> str:
    """A config path (``flows.1.mss_bytes``) as the scenario's path (``flows.1.mss``)."""
    from pydantic import BaseModel

    from .codegen import human_key

    out: list[str] = []
    obj: Any = scenario
    for seg in (p for p in core_path.split(".") if p):
        if isinstance(obj, list) and seg.isdigit():
            out.append(seg)
            obj = obj[int(seg)] if int(seg) < len(obj) else None
            continue
        mapping = CORE_KEYS.get(type(obj).__name__, {}) if isinstance(obj, BaseModel) else {}
        field = next((f for f, (k, _) in mapping.items() if k == seg), None)
        if field is None:
            out.append(human_key(seg))
            obj = None
            continue
        out.append(type(obj).model_fields[field].alias or field)
        obj = getattr(obj, field)
    return ".".join(out)


# A flow whose cc is ``kernel:NAME`` (the emu backend's kernel modules, unknown to the core) is
# checked by the core as this algorithm and handed back with its own name.
_KERNEL_STAND_IN = "reno"


def check(scenario: BaseModel) -> tuple[dict[str, Any], dict[str, Any]]:
    """The core's verdict on a scenario: (resolved config, derived facts), or a ScenarioError.
    Flows named ``kernel:NAME`` are checked as any flow and keep that name in the config (which
    only the emu backend runs; the simulator refuses it, ``runner.simulate``)."""
    from .fields import KERNEL_PREFIX

    core = load_core()
    config = to_core(scenario)
    kernel = {i: f["cc"] for i, f in enumerate(config.get("flows", [])) if str(f.get("cc", "")).startswith(KERNEL_PREFIX)}
    for i in kernel:
        config["flows"][i] = dict(config["flows"][i], cc=_KERNEL_STAND_IN)
    try:
        resolved, derived = core.resolve_config(json.dumps(config))
    except core.ConfigError as e:
        path, message = e.args
        raise ScenarioError(human_path(path, scenario), message) from None
    out = json.loads(resolved)
    for i, cc in kernel.items():
        out["flows"][i]["cc"] = cc
    return out, json.loads(derived)
