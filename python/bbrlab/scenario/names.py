"""A config field's names in the scenario: the one rule that the generator (codegen.py) writes the
models with and that keys.py reads the models' config keys back with.

A field's scenario name is its config name without the unit suffix (``rate_bps`` → ``rate``); its
attribute in the model is that name, with ``_`` appended where Python reserves it (``from``) or
where it would shadow a type the model's annotations use (``bytes``).
"""

from __future__ import annotations

import keyword

#: Unit suffixes of config names, and the unit each stands for (codegen's field types).
UNIT_SUFFIXES = {"_bps": "rate", "_ns": "time", "_bytes": "size", "_segs": "count"}

#: Scenario names that are not Python keywords but still take a ``_`` as attributes.
_SHADOWED = ("bytes",)


def human_key(core_key: str) -> str:
    """A config field's scenario name: the name without its unit suffix."""
    for suffix in UNIT_SUFFIXES:
        if core_key.endswith(suffix):
            return core_key[: -len(suffix)]
    return core_key


def field_name(core_key: str) -> str:
    """A config field's attribute in the model (its scenario name is the attribute's alias where
    the two differ)."""
    hk = human_key(core_key)
    return hk + "_" if keyword.iskeyword(hk) or hk in _SHADOWED else hk
