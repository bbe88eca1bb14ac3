"""The scenario model and the core's config: one shape, two unit systems.

:func:`to_core` turns a validated model (integer SI values under human names) into the core's JSON
config (the same values under the config's names, ``rate`` → ``rate_bps``); :func:`from_core` does
the reverse. :func:`verdict` hands a model to the core, which checks it (bounds, relations between
fields) and returns a :class:`Verdict`: the checked config (what a simulation is built from), the
config with every default filled, and the facts derived from it (BDP, the shared queue's limit); a
core error comes back as a :class:`ScenarioError` naming the scenario's field. A scenario keeps its
verdict (``ScenarioBase.verdict``): one run sends the scenario to the core's checker once.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any

from .. import units
from ..errors import ScenarioError, SimulationError
from .keys import CORE_KEYS

if TYPE_CHECKING:
    from pydantic import BaseModel

# pydantic (and the field types built on it) is imported inside the functions that take a model:
# `bbrlab cc` and the result schema need only load_core(), and pydantic costs them 0.1-0.2 s.

__all__ = ["load_core", "to_core", "from_core", "Verdict", "verdict", "check_config", "check", "human_path", "schema"]


def load_core() -> Any:
    """Import the compiled core, or explain how to build it."""
    try:
        from bbrlab import _core
    except ImportError as e:
        raise SimulationError(
            f"the simulator core (bbrlab._core) is not available ({e}); build it with `pip install -e .`"
        ) from None
    return _core


@lru_cache(maxsize=1)
def schema() -> dict[str, Any]:
    """The core's config schema (JSON Schema draft 2020-12)."""
    return json.loads(load_core().config_schema())


def _value_to_core(v: Any, given_only: bool) -> Any:
    # Called for every value of every flow: no imports or isinstance chains on the way (a
    # 10^5-flow scenario has millions of values).
    if v is None or type(v) in _PLAIN:
        return v
    if type(v) is list:
        return [_value_to_core(x, given_only) for x in v]
    if hasattr(v, "model_fields_set"):  # a model (pydantic is not imported here, see above)
        return to_core(v, given_only=given_only)
    if isinstance(v, units.Buffer):
        from .fields import buffer_to_core

        return buffer_to_core(v)
    return v


def to_core(m: BaseModel, *, given_only: bool = False) -> dict[str, Any]:
    """A model as the core's config (SI units, config names); ``None`` fields are left out, so
    the core fills its defaults. ``given_only``: so are the fields left at their default (the
    schema's, the same in the model and the core): what the scenario itself sets."""
    out: dict[str, Any] = {}
    mapping, values = CORE_KEYS[type(m).__name__], m.__dict__
    fields: Any = mapping
    if given_only:  # a flow sets a few of its 27 fields: only those are visited, in schema order
        order = _field_order(type(m).__name__)
        given = m.model_fields_set | {"kind"} if "kind" in order else m.model_fields_set  # the tag: always
        fields = sorted(given, key=order.__getitem__)
    for field in fields:
        v = values[field]
        if v is not None:
            out[mapping[field][0]] = v if type(v) in _PLAIN else _value_to_core(v, given_only)
    return out


_PLAIN = frozenset((bool, int, float, str))


@cache
def _field_order(model_name: str) -> dict[str, int]:
    return {f: i for i, f in enumerate(CORE_KEYS[model_name])}


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

        def sub(x: Any, info: Any = info) -> Any:  # info: this field's, bound now
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

    from .names import human_key

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


@dataclass(frozen=True)
class Verdict:
    """The core's verdict on a scenario. ``checked`` is the core's checked config, from which a
    simulation is built without a second check (``runner.simulate``); ``kernel`` maps the index
    of each ``kernel:NAME`` flow to that name (the core checked it as another algorithm, so the
    simulator must refuse it); ``sent`` is the config as the scenario sets it, the fields left
    at their default left out (what the user set, before the core filled its defaults)."""

    checked: Any
    derived: dict[str, Any]
    sent: dict[str, Any]
    kernel: dict[int, str]

    @property
    def resolved_json(self) -> str:
        return str(self.checked.resolved)

    def topology(self) -> dict[str, Any]:
        """The resolved topology alone (without decoding every flow)."""
        return dict(json.loads(self.checked.topology))

    def __deepcopy__(self, memo: dict[int, Any]) -> Verdict:
        return self  # nothing in it changes (resolved() hands out copies)

    def resolved(self) -> dict[str, Any]:
        """The config with every default filled (a fresh copy: callers may change it)."""
        out = json.loads(self.resolved_json)
        for i, cc in self.kernel.items():
            out["flows"][i]["cc"] = cc
        return out


def _non_finite(data: Any, path: str = "") -> str | None:
    """The config path of the first NaN or infinity in ``data``, if any (JSON has neither)."""
    if isinstance(data, float) and not math.isfinite(data):
        return path
    items = data.items() if isinstance(data, dict) else enumerate(data) if isinstance(data, list) else ()
    for k, v in items:
        found = _non_finite(v, f"{path}.{k}" if path else str(k))
        if found is not None:
            return found
    return None


def verdict(scenario: BaseModel) -> Verdict:
    """Send a scenario to the core's checker (once per scenario: ``ScenarioBase.verdict`` keeps
    the answer)."""
    sent = to_core(scenario, given_only=True)  # a 10^5-flow scenario: a tenth of the text
    checked, kernel = check_config(sent, scenario)
    return Verdict(checked, json.loads(checked.derived), sent, kernel)


def udp_flow_problem(flows: list[dict[str, Any]]) -> tuple[str, str] | None:
    """(config path, message) for the first ``transport = "udp"`` flow bbrlab's UDP transport
    cannot run (crates/udpflow), on either backend: a kernel module (``kernel:NAME``: the
    transport runs bbrlab's own algorithms), an algorithm that needs ECN, or ECN asked for (the
    transport carries no ECN codepoint). None when every UDP flow can run."""
    from .fields import KERNEL_PREFIX

    # The core's registry, read here (not through bbrlab.core.algorithms, which reads it through
    # this module): whether the algorithm ``cc`` names, by name or alias, needs ECN.
    def needs_ecn(cc: str) -> bool:
        low = cc.strip().lower()
        return any(a["needs_ecn"] for a in load_core().algorithms() if low == a["name"] or low in a["aliases"])

    for i, f in enumerate(flows):
        if f.get("transport", "tcp") != "udp":
            continue
        cc = str(f.get("cc", ""))
        if cc.startswith(KERNEL_PREFIX):
            return (
                f"flows.{i}.cc",
                f'"{cc}" is a kernel module, which transport = "udp" cannot run (it runs bbrlab\'s own '
                'algorithms: bbrlab cc lists them); use transport = "tcp" for a kernel module',
            )
        if needs_ecn(cc):
            return (
                f"flows.{i}.cc",
                f'"{cc}" needs ECN, which transport = "udp" does not carry; use transport = "tcp"',
            )
        if f.get("ecn") not in (None, False, "off"):
            return (f"flows.{i}.ecn", 'transport = "udp" carries no ECN; leave ecn "off" or use transport = "tcp"')
    return None


def check_config(config: dict[str, Any], scenario: BaseModel) -> tuple[Any, dict[int, str]]:
    """The core's checker on a config of ``scenario``: (the core's CheckedConfig, the
    ``kernel:NAME`` flows by index), or a ScenarioError naming the scenario's field. Flows named
    ``kernel:NAME`` are checked as any flow (the resolved config gets that name back,
    :meth:`Verdict.resolved`; only the emu backend runs them, the simulator refuses them,
    ``runner.simulate``)."""
    from .fields import KERNEL_PREFIX

    core = load_core()
    config = dict(config)
    problem = udp_flow_problem(config.get("flows", []))
    if problem is not None:
        raise ScenarioError(human_path(problem[0], scenario), problem[1])
    kernel = {
        i: f["cc"] for i, f in enumerate(config.get("flows", [])) if str(f.get("cc", "")).startswith(KERNEL_PREFIX)
    }
    if kernel:
        config["flows"] = list(config["flows"])
        for i in kernel:
            config["flows"][i] = dict(config["flows"][i], cc=_KERNEL_STAND_IN)
    try:
        text = json.dumps(config, allow_nan=False)
    except ValueError:  # the field types refuse NaN and infinities; this names one that got past
        path = _non_finite(config) or ""
        raise ScenarioError(human_path(path, scenario), "is not a finite number; write a number such as 0.5") from None
    try:
        return core.check_config(text), kernel
    except core.ConfigError as e:
        path, message = e.args
        raise ScenarioError(human_path(path, scenario), message) from None


def check(scenario: BaseModel) -> tuple[dict[str, Any], dict[str, Any]]:
    """The core's verdict on a scenario: (resolved config, derived facts), or a ScenarioError; a
    scenario model answers from the verdict it keeps."""
    v = scenario.verdict() if hasattr(scenario, "verdict") else verdict(scenario)
    return v.resolved(), dict(v.derived)
