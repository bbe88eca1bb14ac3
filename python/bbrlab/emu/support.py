"""What --backend emu can run of a scenario: fields it cannot honour are an error when the kernel
would run a different experiment, a warning when they only switch parts of the simulator's model.

The emu backend runs real Linux TCP over bbrlab's link emulator: on a dumbbell one bottleneck
link each way (rate, delay, buffer limit, Bernoulli loss, the data direction's queue discipline,
ECN marking) and one namespace per flow; on a graph every link direction and one namespace per
host (``graph.py``, which refuses what the marks cannot say: a graph too large to host). It sets what the kernel exposes per flow (algorithm, start/stop,
size, MSS, initial window, minimum RTO, delayed ACKs, socket buffers, SO_MAX_PACING_RATE, extra
RTT, ECN) and nothing else.

Which field is which is not listed here: every field of the core's config schema carries its
marks, written beside its definition (``x-backends``, see ``crates/sim/src/config/backends.rs``),
and :func:`check_supported` walks the scenario along the schema and acts on them: a field marked
``refused`` for emu and set to anything but its default is an error (one line naming it), one
marked ``ignored`` or ``model-switch`` a warning; ``within`` fields belong to a table or variant
that is refused or ignored as a whole. ``python/bbrlab/emu/runner.py`` calls it before it touches
the machine.
"""

from __future__ import annotations

import json
import warnings
from typing import Any

from ..errors import ScenarioError, ScenarioWarning
from ..scenario import Scenario
from ..scenario import core as scenario_core

__all__ = ["BACKEND", "MARKS", "check_supported", "mark_of"]

BACKEND = "emu"
#: The marks a field may carry per backend (``backends.rs``'s ``Mark``).
MARKS = ("honoured", "refused", "ignored", "model-switch", "within")

_MODEL_SWITCH = "switches the simulator's model; --backend emu runs the kernel's own, so it has no effect there"


def mark_of(schema: dict[str, Any] | None, backend: str = BACKEND) -> tuple[str, str] | None:
    """(mark, its message) of a field's or variant's schema for ``backend``; None when unmarked."""
    marks = (schema or {}).get("x-backends")
    if not isinstance(marks, dict) or backend not in marks:
        return None
    m = marks[backend]
    if isinstance(m, dict):
        ((name, why),) = m.items()
        return name, why
    return m, ""


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return f'"{value}"' if isinstance(value, str) else str(value)


class _Walk:
    """The scenario as the user set it (the core config it sent, ``None`` fields left out),
    walked beside the schema in the schema's field order."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self.schema = scenario_core.schema()
        self.defs: dict[str, Any] = self.schema.get("$defs", {})
        self.sent = scenario.verdict().sent
        self.notes: list[str] = []

    def resolve(self, s: dict[str, Any]) -> dict[str, Any]:
        ref = s.get("$ref")
        return self.resolve(self.defs[ref.split("/")[-1]]) if ref else s

    def human(self, path: list[str]) -> str:
        return scenario_core.human_path(".".join(path), self.scenario)

    def is_set(self, prop: dict[str, Any], value: Any, path: list[str]) -> bool:
        """Whether the user set the field to something other than what the core uses without it."""
        if value is None or ("default" in prop and value == prop["default"]):
            return False
        if prop.get("default", 0) is None:
            # A default the core derives from other fields (a dumbbell's access rate): the value
            # the core fills with the field left out.
            bare = json.loads(json.dumps(self.sent))
            parent = bare
            for p in path[:-1]:
                parent = parent[int(p)] if isinstance(parent, list) else parent[p]
            del parent[path[-1]]
            filled = json.loads(scenario_core.check_config(bare, self.scenario)[0].resolved)
            for p in path:
                filled = filled[int(p)] if isinstance(filled, list) else (filled or {}).get(p)
            return value != filled
        return True

    def value(self, data: Any, s: dict[str, Any], path: list[str]) -> None:
        """Walk a value of schema ``s``: the fields of an object, the items of a list, the variant
        of a tagged union."""
        s = self.resolve(s)
        alts = s.get("oneOf") or s.get("anyOf")
        if alts and isinstance(data, str):
            # A string enum whose values carry their own marks (``receiver_window``).
            for alt in map(self.resolve, alts):
                if alt.get("const") == data and (mark := mark_of(alt)) is not None:
                    self.act(mark, data, path)
            return
        if alts and isinstance(data, dict):
            # An optional tagged union (``Option<QdiscSpec>``: anyOf [union, null]): its variants.
            alts = [v for a in map(self.resolve, alts) for v in (a.get("oneOf") or [a])]
            for alt in map(self.resolve, alts):
                kind = alt.get("properties", {}).get("kind", {}).get("const")
                if kind is not None and kind == data.get("kind"):
                    mark = mark_of(alt)
                    if mark is not None and mark[0] == "refused":
                        raise ScenarioError(
                            self.human(path + ["kind"]), f"{_show(kind)} is not supported by --backend emu ({mark[1]})"
                        )
                    self.value(data, alt, path)
                    return
            for alt in map(self.resolve, alts):  # the alternative with the value's keys
                if "properties" in alt and set(data) <= set(alt["properties"]):
                    self.value(data, alt, path)
                    return
            return
        if isinstance(data, list) and "items" in s:
            for i, item in enumerate(data):
                self.value(item, s["items"], path + [str(i)])
            return
        if isinstance(data, dict):
            for key, prop in s.get("properties", {}).items():
                if key in data and key != "kind":
                    self.field(data[key], prop, path + [key])

    def field(self, value: Any, prop: dict[str, Any], path: list[str]) -> None:
        mark, why = mark_of(prop) or ("honoured", "")
        if mark == "honoured":
            if not (isinstance(value, str) and value == prop.get("default")):
                self.value(value, prop, path)
        elif mark in ("refused", "ignored", "model-switch") and self.is_set(prop, value, path):
            self.act((mark, why), value, path)

    def act(self, marked: tuple[str, str], value: Any, path: list[str]) -> None:
        """A field or value marked other than honoured, and set: an error or a warning."""
        (mark, why), where = marked, self.human(path)
        if mark in ("refused", "ignored", "model-switch"):
            if mark == "refused":
                message = (
                    why
                    if isinstance(value, (dict, list))
                    else f"{_show(value)} is not available on --backend emu: {why}"
                )
                raise ScenarioError(where, message)
            self.notes.append(
                f"{where} = {_show(value)} {_MODEL_SWITCH}" if mark == "model-switch" else f"{where}: {why}"
            )


def check_supported(scenario: Scenario) -> list[str]:
    """Raise ScenarioError (naming the field) for the first field --backend emu cannot honour in a
    way that changes the experiment; warn (ScenarioWarning, one per field) for those that only
    switch the simulator's model, and return those warnings. Fields in the schema's order."""
    walk = _Walk(scenario)
    walk.value(walk.sent, walk.schema, [])
    for note in walk.notes:
        warnings.warn(note, ScenarioWarning, stacklevel=2)
    return walk.notes
