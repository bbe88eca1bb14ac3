"""The scenario: a TOML file in human units → a validated :class:`Scenario` → the core's config.

- ``model.py``: the model, generated from the core's config schema (``codegen.py``); every field's
  name, type, unit, default, bounds and description is defined once, in
  ``crates/sim/src/config/``.
- ``fields.py``: the field types (human units in the file, integer SI units in the model).
- ``mixins.py``: the core's check as a model validator; derived values; TOML output.
- ``core.py``: model ↔ core config, and the core's check.
- ``errors.py``, ``overrides.py``, ``load.py``: error translation, ``--set``, reading files.
- ``checks.py``: the ``[checks]`` table (bounds on transperf's metrics), the front end's only.

Names are imported on first use, so ``python -m bbrlab.scenario.codegen`` works while model.py is
being regenerated.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__all__ = [
    "Scenario",
    "Flow",
    "Bottleneck",
    "Dumbbell",
    "Star",
    "QueryApp",
    "load_scenario",
    "parse_scenario",
    "apply_overrides",
]

_WHERE = {
    "load_scenario": "load",
    "parse_scenario": "load",
    "apply_overrides": "overrides",
}


def __getattr__(name: str) -> Any:
    if name in __all__:
        return getattr(import_module(f".{_WHERE.get(name, 'model')}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
