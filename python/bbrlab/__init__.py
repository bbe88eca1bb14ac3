"""bbrlab: a congestion-control laboratory built around TCP BBR.

>>> import bbrlab
>>> scenario = bbrlab.load_scenario("examples/quick.toml", overrides=["flows.0.cc=bbr"])
>>> result = bbrlab.run(scenario)
>>> result.timeseries.groupby("flow").goodput_bps.mean()
>>> points = bbrlab.sweep("examples/quick.toml", grid=["flows.0.cc=bbr1,cubic"], seeds=2)
>>> bbrlab.plot_sweep(points, x="cc", y="goodput_bps")

(docs/notebook.md walks through it.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .errors import ScenarioError, SimulationError, UserError

if TYPE_CHECKING:
    from . import sweep  # the package, callable: bbrlab.sweep.api.sweep
    from ._version import __version__
    from .engine.runner import run
    from .notebook import compare, plot_sweep
    from .results.results import Result
    from .scenario import Scenario, load_scenario, parse_scenario

__all__ = [
    "__version__",
    "Scenario",
    "ScenarioError",
    "SimulationError",
    "UserError",
    "load_scenario",
    "parse_scenario",
    "run",
    "Result",
    "sweep",
    "plot_sweep",
    "compare",
]


# Lazy: `import bbrlab` (and so `import bbrlab._core`, and the link emulator's process,
# `python -m bbrlab.emu.linkemu`) loads none of pydantic, importlib.metadata, pandas or pyarrow;
# each is imported when the name that needs it is first used.
_LAZY = {
    "__version__": "._version",
    "Scenario": ".scenario",
    "load_scenario": ".scenario",
    "parse_scenario": ".scenario",
    "run": ".engine.runner",
    "Result": ".results.results",
    "sweep": ".sweep",  # the subpackage itself: calling it runs a sweep (its _CallableModule)
    "plot_sweep": ".notebook",
    "compare": ".notebook",
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        module = importlib.import_module(_LAZY[name], __name__)
        value = module if _LAZY[name] == f".{name}" else getattr(module, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'bbrlab' has no attribute {name!r}")


def __dir__() -> list[str]:
    """The public API, lazy names included, so tab completion offers `run`, `load_scenario` …
    before their first use (listing them imports nothing), with the module's dunders and the
    subpackages already imported; not this file's own imports (TYPE_CHECKING, annotations)."""
    import types

    loaded = {n for n, v in globals().items() if n.startswith("__") or isinstance(v, types.ModuleType)}
    return sorted(set(__all__) | loaded)
