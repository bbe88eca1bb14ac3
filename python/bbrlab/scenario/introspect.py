"""Reading the scenario model's structure: which key a field has in TOML, which model a field
holds. Generic over pydantic models; knows no field by name."""

from __future__ import annotations

import types
import typing
from typing import Annotated, Any

from pydantic import BaseModel

__all__ = ["fields_by_key", "unwrap", "item_model"]


def fields_by_key(m: type[BaseModel]) -> dict[str, Any]:
    """Fields by the key written in TOML (the alias when there is one)."""
    return {(f.alias or name): f for name, f in m.model_fields.items()}


def unwrap(annotation: Any) -> Any:
    while typing.get_origin(annotation) is Annotated:
        annotation = typing.get_args(annotation)[0]
    return annotation


def item_model(annotation: Any, kind: str | None = None) -> type[BaseModel] | None:
    """The model a field holds (directly, optionally, as list items, or as the union variant
    ``kind``, default the first), or None for a leaf."""
    annotation = unwrap(annotation)
    origin = typing.get_origin(annotation)
    if origin in (list, typing.Union, types.UnionType):
        # ``kind`` goes down too: an optional union (``QdiscSpec | None``) is a union of unions.
        found = [m for m in (item_model(a, kind) for a in typing.get_args(annotation)) if m is not None]
        for m in found:
            if kind is not None and m.model_fields.get("kind") and m.model_fields["kind"].default == kind:
                return m
        return found[0] if found else None
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return None
