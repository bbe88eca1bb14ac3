"""The one grid language: an axis is a full field path, and a few short names stand for the paths
used most.

``sweep --grid``, a scenario's ``[sweep]`` table and ``compare --grid`` all read axes through
:func:`resolve_axis`, so ``buffer=1bdp,4bdp`` and ``topology.bottleneck.buffer=1bdp,4bdp`` are the
same axis everywhere. ``cc`` stands for every configured flow's algorithm (``flows.*.cc``): a
point sets all of them, as ``compare --cc`` does; ``flows.0.cc`` names one flow.

A path with ``*`` in place of a flow index is expanded by :func:`expand_override` into one
override per flow.
"""

from __future__ import annotations

__all__ = ["ALIASES", "EVERY_FLOW", "resolve_axis", "short_name", "expand_override"]

#: The wildcard in a path that stands for every configured flow's index.
EVERY_FLOW = "*"

#: Short name -> full path. The only table of these names: add one here and all three grids take it.
ALIASES: dict[str, str] = {
    "rate": "topology.bottleneck.rate",
    "rtt": "topology.bottleneck.rtt",
    "buffer": "topology.bottleneck.buffer",
    "loss": "topology.bottleneck.loss",
    "cc": f"flows.{EVERY_FLOW}.cc",
}

_SHORT = {path: name for name, path in ALIASES.items()}


def resolve_axis(name: str) -> str:
    """The full path of an axis given by its short name or its path (returned unchanged)."""
    name = name.strip()
    return ALIASES.get(name, name)


def short_name(path: str) -> str:
    """The short name of a full path that has one (for labels and table headers), else the path."""
    return _SHORT.get(path, path)


def expand_override(path: str, value: str, flows: int) -> list[str]:
    """``path=value`` as --set overrides: one per flow when ``path`` has ``flows.*``."""
    parts = path.split(".")
    if len(parts) > 2 and parts[0] == "flows" and parts[1] == EVERY_FLOW:
        rest = ".".join(parts[2:])
        return [f"flows.{i}.{rest}={value}" for i in range(flows)]
    return [f"{path}={value}"]
