"""bbrlab: a congestion-control laboratory built around TCP BBR.

    >>> import bbrlab
    >>> scenario = bbrlab.load_scenario("examples/quick.toml", overrides=["flows.0.cc=bbr"])
    >>> result = bbrlab.run(scenario)
    >>> result.timeseries.groupby("flow").goodput_bps.mean()
"""

from __future__ import annotations

from ._version import __version__
from .errors import ScenarioError, SimulationError, UserError

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
]


def __getattr__(name: str):  # lazy: pydantic, pandas and pyarrow are imported on first use
    if name in ("Scenario", "load_scenario", "parse_scenario"):
        from . import scenario

        return getattr(scenario, name)
    if name == "run":
        from .runner import run

        return run
    if name == "Result":
        from .results import Result

        return Result
    raise AttributeError(f"module 'bbrlab' has no attribute {name!r}")
