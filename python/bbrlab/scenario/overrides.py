"""``--set path=value``: overrides applied to a scenario's raw tables before validation."""

from __future__ import annotations

import copy
import math
import typing
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from ..errors import ScenarioError, did_you_mean
from . import model as model_cls
from ._toml import tomllib
from .introspect import fields_by_key, item_model, unwrap

__all__ = ["apply_overrides", "add_flow_override", "ignored_settings"]


def _override_value(text: str, leaf: str) -> Any:
    """A --set value: a TOML value when it parses as one (10, 0.5, true, [..], {..}), else a string.

    So `--set duration=30s` and `--set flows.0.cc=bbr` need no quotes, while `--set seed=7` is an int.
    """
    if leaf in ("name", "cc", "kind"):
        return text.strip().strip('"')
    try:
        value = tomllib.loads(f"v = {text}")["v"]
    except (tomllib.TOMLDecodeError, ValueError, RecursionError):
        return text.strip()
    if isinstance(value, float) and not math.isfinite(value):
        return text.strip()
    return value


def apply_overrides(raw: dict[str, Any], overrides: Sequence[str]) -> dict[str, Any]:
    """Apply ``path=value`` overrides to raw tables (returns a copy: deep when it changes anything).

    A path must name a field of the schema: ``duration``, ``topology.bottleneck.loss``,
    ``flows.0.cc``. An index past the end of a list is refused: a typo there would silently add a
    flow, a different experiment. A flow is added only explicitly, by ``LIST+=KEY=VALUE,...``
    (``flows+=cc=cubic,start=5s``, what ``--add-flow cc=cubic,start=5s`` writes; see
    :func:`add_flow_override`).
    """
    if not overrides:
        return dict(raw)  # nothing below the top level changes (a deep copy of 10^5 flows: ~2 s)
    raw = copy.deepcopy(raw)
    for item in overrides:
        if "=" not in item:
            raise ScenarioError(
                f"--set {item}", "expected path=value, e.g. --set flows.0.cc=bbr1 or --set duration=30s"
            )
        path, text = (s.strip() for s in item.split("=", 1))
        if path.endswith("+"):
            raw = _append(raw, path[:-1].strip(), text)
            continue
        _set_one(raw, path, text)
    return raw


#: The option that appends a flow, named by the error for an index past the end.
ADD_FLOW_EXAMPLE = "--add-flow cc=cubic,start=5s"


def add_flow_override(spec: str) -> str:
    """``--add-flow KEY=VALUE,...`` as the override item that appends that flow."""
    return f"flows+={spec.strip()}"


def _append(raw: dict[str, Any], list_path: str, spec: str) -> dict[str, Any]:
    """``LIST+=KEY=VALUE,...``: a new entry at the end of the list at ``list_path``, its fields set."""
    shown = "--add-flow" if list_path == "flows" else f"--set {list_path}+"
    pairs = [p.strip() for p in spec.split(",")] if spec.strip() else []
    if not pairs or any("=" not in p or not p.split("=", 1)[0].strip() for p in pairs):
        raise ScenarioError(shown, f"{spec!r}: expected KEY=VALUE,..., e.g. {ADD_FLOW_EXAMPLE}")
    node: Any = raw
    for part in list_path.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    if node is None and "." not in list_path:
        node = raw.setdefault(list_path, [])  # the file has none yet: the first
    if not isinstance(node, list):
        raise ScenarioError(shown, f"'{list_path}' is not a list of entries one can add to")
    index = len(node)
    node.append({})
    for pair in pairs:
        key, value = (s.strip() for s in pair.split("=", 1))
        try:
            _set_one(raw, f"{list_path}.{index}.{key}", value)
        except ScenarioError as e:
            raise ScenarioError(f"{shown} {key}", e.message) from None
    return raw


def _set_one(raw: dict[str, Any], path: str, text: str) -> None:
    """One ``path=value`` override, in place."""
    parts = path.split(".") if path else []
    if not parts or any(p == "" for p in parts):
        raise ScenarioError(f"--set {path or '(empty)'}", "not a field path; write e.g. topology.bottleneck.loss")
    if text == "":
        raise ScenarioError(f"--set {path}", "has no value; write path=value, e.g. --set duration=30s")
    node: Any = raw
    model: type[BaseModel] | None = model_cls.Scenario
    annotation: Any = None  # the field a list came from: its items' model follows each item's kind
    done: list[str] = []
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        where = f"in [{'.'.join(done)}]" if done else "at the top level"
        if isinstance(node, list):
            if not part.isdigit():
                raise ScenarioError(
                    f"--set {path}",
                    f"'{part}' is not an index into {'.'.join(done)}; write e.g. {'.'.join(done)}.0.cc",
                )
            idx = int(part)
            if idx >= len(node):
                listed = ".".join(done)
                add = ADD_FLOW_EXAMPLE if listed == "flows" else f"--set {listed}+=KEY=VALUE,..."
                have = f"{len(node)} entr{'y' if len(node) == 1 else 'ies'}"
                indices = f" ({listed}.0..{len(node) - 1})" if len(node) > 1 else f" ({listed}.0)" if node else ""
                raise ScenarioError(
                    f"--set {path}",
                    f"{listed} has {have}{indices}; index {idx} is past the end and --set does not "
                    f"add one: to add an entry, use {add}",
                )
            if last:
                raise ScenarioError(f"--set {path}", "cannot replace a whole flow; set its fields, e.g. flows.0.cc")
            node = node[idx]
            kind = node.get("kind") if isinstance(node, dict) else None
            if isinstance(kind, str):  # a tagged entry (apps, traffic): the model of its own kind
                model = item_model(annotation, kind) or model
            done.append(part)
            continue
        if model is None or not isinstance(node, dict):
            raise ScenarioError(f"--set {path}", f"'{'.'.join(done)}' is a value, it has no field '{part}'")
        fields = fields_by_key(model)
        if part not in fields:
            raise ScenarioError(f"--set {path}", f"unknown key '{part}' {where}{did_you_mean(part, fields)}")
        if last:
            node[part] = _override_value(text, part)
            break
        child = node.get(part)
        kind = child.get("kind") if isinstance(child, dict) else None
        child_model = item_model(fields[part].annotation, kind if isinstance(kind, str) else None)
        is_list = typing.get_origin(unwrap(fields[part].annotation)) is list
        if child_model is None:
            raise ScenarioError(
                f"--set {path}", f"'{'.'.join(done + [part])}' is a value, it has no field '{parts[i + 1]}'"
            )
        if part not in node or not isinstance(node[part], (dict, list)):
            node[part] = [] if is_list else {}
        node = node[part]
        model = child_model
        annotation = fields[part].annotation
        done.append(part)


def ignored_settings(raw: dict[str, Any]) -> list[str]:
    """Settings in raw tables (overrides applied) that a run will not use, each as a one-line note.

    A star's ``pfc`` table only matters when ``lossless`` is true. A file written for a lossless
    fabric keeps its ``pfc`` table when ``--set topology.lossless=false`` turns PAUSE off, and
    ``--set`` cannot remove a table; the run then drops at the port buffer, and the note says so
    rather than leaving the table to suggest that PAUSE is still on.
    """
    topo = raw.get("topology")
    if not isinstance(topo, dict) or topo.get("kind") != "star" or "pfc" not in topo:
        return []
    if topo.get("lossless", False) is False:
        return [
            "topology.pfc is ignored: topology.lossless is false, so the switch ports drop packets "
            "at their buffer instead of sending PAUSE"
        ]
    return []
