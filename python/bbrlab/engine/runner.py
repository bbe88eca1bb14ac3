"""Drive the embedded simulator (`bbrlab._core`) for one scenario.

The core advances in slices (``run_until``, GIL released); between slices the runner reports
progress and Python gets a chance to deliver Ctrl-C, so an interrupt stops the run within one
slice. A slice ends after 0.1 s of wall time (the core watches its own clock), not after an amount
of simulated time: the cost of a simulated second varies by orders of magnitude between scenarios,
and within one run between an idle start and a busy end.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ScenarioError, SimulationError
from ..scenario.core import Verdict, human_path, load_core

if TYPE_CHECKING:
    from ..results.results import Result
    from ..scenario import Scenario

__all__ = ["ProgressFn", "load_core", "run", "simulate"]  # load_core: re-exported for callers

# progress(now_ns, end_ns): called after every slice, and once more at the end.
ProgressFn = Callable[[int, int], None]

# Each slice ends after this much wall time (the core checks its clock every 1024 events), so
# Ctrl-C takes effect within about this long whatever the scenario.
_SLICE_WALL_S = 0.1


def simulate(
    config: dict[str, Any] | Verdict, progress: ProgressFn | None = None, scenario: Scenario | None = None
) -> tuple[dict[str, Any], float, str]:
    """Run a core config; returns (raw results, wall seconds, core version). ``config`` is a
    scenario's :class:`Verdict` (checked already: the simulation is built from the core's checked
    config, not checked again) or a config dict, which the core checks; one it rejects raises
    ScenarioError naming the field (in the scenario's terms when ``scenario`` is the model it
    came from)."""
    from ..scenario.fields import KERNEL_PREFIX

    if isinstance(config, Verdict):
        kernel = sorted(config.kernel.items())
    else:
        kernel = [
            (i, f["cc"])
            for i, f in enumerate(config.get("flows", []))
            if str(f.get("cc", "")).startswith(KERNEL_PREFIX)
        ]
    if kernel:
        i, cc = kernel[0]
        raise ScenarioError(
            f"flows.{i}.cc",
            f'"{cc}" is a kernel algorithm, which only --backend emu runs; '
            "the simulator's algorithms are listed by `bbrlab cc`",
        )
    core = load_core()
    try:
        sim = core.Simulation(config.checked if isinstance(config, Verdict) else json.dumps(config))
    except core.ConfigError as e:
        path, message = e.args
        raise ScenarioError(human_path(path, scenario) if scenario is not None else path, message) from None
    end_ns = int(sim.end_ns)
    started = time.perf_counter()
    done = False
    stalled = 0
    while not done:
        before_ns, before_events = int(sim.now_ns), int(sim.events)
        try:
            done = bool(sim.run_until(end_ns, max_wall_s=_SLICE_WALL_S))
        except (RuntimeError, ValueError, OverflowError) as e:
            raise SimulationError(f"the simulator failed at t={before_ns / 1e9:.6f}s: {e}") from None
        now_ns = int(sim.now_ns)
        if progress is not None:
            progress(now_ns, end_ns)
        # Guard against a core that neither works nor reports completion (would spin forever).
        stalled = stalled + 1 if int(sim.events) == before_events and not done else 0
        if stalled > 3:
            raise SimulationError(f"the simulator stopped advancing at t={now_ns / 1e9:.6f}s without completing")
    wall_s = time.perf_counter() - started
    try:
        raw = sim.results()
    except (RuntimeError, ValueError) as e:
        raise SimulationError(f"the simulator could not return its results: {e}") from None
    return raw, wall_s, str(core.version())


BACKENDS = ("sim", "emu")


def run(scenario: Scenario | str | Path, progress: ProgressFn | None = None, backend: str = "sim") -> Result:
    """Run ``scenario`` (a :class:`Scenario` or a scenario file's path) and return its
    :class:`Result` (not yet saved).

    ``backend``: "sim" (the embedded simulator) or "emu" (real Linux TCP through bbrlab's link
    emulator; root and network namespaces needed, see bbrlab.emu).
    """
    from ..results.results import Result
    from ..scenario import Scenario, load_scenario

    if isinstance(scenario, (str, Path)):
        scenario = load_scenario(scenario)
    elif not isinstance(scenario, Scenario):
        raise ScenarioError("", f"run() takes a Scenario or a scenario file's path, not {type(scenario).__name__}")
    if backend == "emu":
        from ..emu.runner import run_emu

        raw, wall_s, facts = run_emu(scenario, progress)
        return Result.from_core(scenario, raw, wall_s=wall_s, core_version="", backend="emu", run_extra={"emu": facts})
    if backend != "sim":
        raise ScenarioError("--backend", f'"{backend}" is not a backend; use one of {", ".join(BACKENDS)}')
    raw, wall_s, core_version = simulate(scenario.verdict(), progress, scenario)
    return Result.from_core(scenario, raw, wall_s=wall_s, core_version=core_version)
