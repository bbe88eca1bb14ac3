"""pydantic's validation errors in the user's vocabulary: one line naming the scenario field."""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ValidationError

from .. import units
from ..errors import ScenarioError, did_you_mean
from . import keys, model
from .introspect import fields_by_key, item_model

__all__ = ["from_validation_error", "with_set_source", "EXAMPLES"]

EXAMPLES: dict[str, str] = {
    "duration": 'add duration = "60s"',
    "topology": 'add [topology] with kind = "dumbbell" and a [topology.bottleneck] table',
    "bottleneck": 'add a [topology.bottleneck] table with rate = "100Mbps" and rtt = "40ms"',
    "flows": 'add at least one [[flows]] table with cc = "cubic"',
    "rate": 'add rate = "100Mbps"',
    "rtt": 'add rtt = "40ms"',
    "cc": 'add cc = "cubic"',
}


_KINDS = {k for variants in keys.VARIANTS.values() for k in variants}


def _walk(loc: Sequence[int | str]) -> tuple[tuple[int | str, ...], type[BaseModel] | None]:
    """Drop union tags from a pydantic error location; return it with the model at its end."""
    m: type[BaseModel] | None = model.Scenario
    out: list[int | str] = []
    annotation: Any = None
    for part in loc:
        if isinstance(part, int):
            out.append(part)
            continue
        if annotation is not None and part in _KINDS and _is_variant(annotation, str(part)):
            m = item_model(annotation, str(part))  # the union variant pydantic tagged
            annotation = None
            continue
        out.append(part)
        field = fields_by_key(m).get(str(part)) if m is not None else None
        annotation = field.annotation if field is not None else None
        m = item_model(annotation) if annotation is not None else None
    return tuple(out), m


def _is_variant(annotation: Any, kind: str) -> bool:
    """Whether ``kind`` names a variant of the union ``annotation`` holds (a tag in an error's
    location), not a field that happens to share a kind's name (a bottleneck's ``rate`` and the
    flow application ``kind = "rate"``)."""
    m = item_model(annotation, kind)
    f = m.model_fields.get("kind") if m is not None else None
    return f is not None and f.default == kind


def _path(loc: Sequence[int | str]) -> str:
    # A key that is not a plain name (" ", "a.b") is quoted, so the path stays readable.
    return ".".join(
        str(p) if isinstance(p, int) or re.fullmatch(r"[A-Za-z0-9_-]+", str(p)) else json.dumps(str(p)) for p in loc
    )


def _describe(value: object) -> str:
    if isinstance(value, (str, int, datetime.date, datetime.time)) and not isinstance(value, bool):
        return units._show(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "a list"
    return repr(value)


def _message(err: Mapping[str, Any]) -> tuple[str, str]:
    """(field path, one-line message) for one pydantic error."""
    loc, _ = _walk(tuple(err["loc"]))
    kind = err["type"]
    value = err.get("input")
    ctx = err.get("ctx") or {}
    if kind == "extra_forbidden":
        parent, key = loc[:-1], str(loc[-1])
        _, m = _walk(parent)
        where = f"in [{_path(parent)}]" if parent else "at the top level"
        hint = did_you_mean(key, fields_by_key(m)) if m is not None else ""
        return _path(loc), f"unknown key '{key}' {where}{hint}"
    if kind == "missing":
        leaf = str(loc[-1])
        return _path(loc), f"missing; {EXAMPLES.get(leaf, 'add it')}"
    if kind == "kind":
        return _path(loc) + ".kind", err["msg"]
    if kind in ("unit", "range", "cc"):
        return _path(loc), err["msg"]
    if kind == "literal_error":
        return _path(loc), f"{_describe(value)} is not allowed; use one of {ctx.get('expected', '')}"
    if kind in ("int_parsing", "int_type", "int_from_float"):
        return _path(loc), f"{_describe(value)} is not an integer; write a whole number, e.g. 10"
    if kind in ("bool_parsing", "bool_type"):
        return _path(loc), f"{_describe(value)} is not a boolean; write true or false"
    if kind in ("string_type",):
        return _path(loc), f"{_describe(value)} is not a string; put it in double quotes"
    if kind in ("list_type",):
        if loc[-1] in ("flows", "apps"):
            return _path(loc), f"{_describe(value)} is not a list; write one [[{loc[-1]}]] table per item"
        return _path(loc), f"{_describe(value)} is not a list; write the items in brackets, e.g. [1, 2, 3, 0]"
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return _path(loc), f"{_describe(value)} is not a table; write [{_path(loc)}] with its keys"
    return _path(loc), f"{_describe(value)}: {err['msg']}"


def from_validation_error(exc: ValidationError, overrides: Sequence[str] = ()) -> ScenarioError:
    errors = exc.errors(include_url=False)
    # An unknown key is usually a misspelt known one, which then also shows up as "missing":
    # report the typo, the root cause, first.
    errors.sort(key=lambda e: e["type"] != "extra_forbidden")
    # Report the first problem; later ones are often consequences of it.
    path, msg = _message(errors[0])
    return with_set_source(ScenarioError(path, msg, more=len(errors) - 1), overrides)


def with_set_source(e: ScenarioError, overrides: Sequence[str]) -> ScenarioError:
    """Mark an error whose field a ``--set`` wrote."""
    set_paths = [o.split("=", 1)[0].strip() for o in overrides]
    if any(e.path == p or e.path.startswith(p + ".") for p in set_paths):
        return ScenarioError(e.path + " (from --set)", e.message, more=e.more, source=e.source)
    return e
