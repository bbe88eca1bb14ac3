"""Property-based fuzzing of the scenario front and the core (bbrlab.devtools.fuzz), sized for CI.

- hostile and edge scenarios: validation accepts or gives one line, never anything else; what it
  accepts the core accepts; the TOML round trip is exact;
- accepted edge scenarios run to completion without a panic, conserve packets and stay within
  physical bounds;
- every case a fuzzing session ever failed on is replayed (fuzz_regressions.json).

The long run is `python -m bbrlab.devtools.fuzz --scenarios 10000 --runs 200` (README, Development).
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest
from bbrlab.devtools import fuzz
from bbrlab.errors import ScenarioError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

HERE = Path(__file__).resolve().parent
EXAMPLES = int(os.environ.get("BBRLAB_FUZZ_EXAMPLES", "600"))
RUNS = int(os.environ.get("BBRLAB_FUZZ_RUNS", "25"))
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _chooser(data: st.DataObject):
    return lambda options: data.draw(st.sampled_from(list(options)))


@SETTINGS
@given(st.data(), st.booleans())
def test_validation_gives_a_scenario_the_core_takes_or_one_line(data: st.DataObject, hostile: bool) -> None:
    out = fuzz.Outcome()
    fuzz.check_scenario(fuzz.mutated_scenario(_chooser(data), hostile=hostile), out)
    assert not out.failures, out.failures


def test_accepted_edge_scenarios_run_within_physics() -> None:
    rng = random.Random(20261123)
    out = fuzz.Outcome()
    ran = 0
    for _ in range(20 * RUNS):
        if ran >= RUNS:
            break
        s = fuzz.check_scenario(fuzz.mutated_scenario(rng.choice, hostile=False), out)
        small = fuzz.runnable(s) if s is not None else None
        if small is None:
            continue
        fuzz.check_run(small, out, wall_limit_s=30)
        ran += 1
    assert ran == RUNS, out.summary()
    assert not out.failures, out.failures
    assert out.counts["runs_complete"] == RUNS


def test_the_checks_can_fail(monkeypatch: pytest.MonkeyPatch) -> None:
    # A scenario the core rejects although validation accepted it must be reported.
    out = fuzz.Outcome()
    s = fuzz.check_scenario(fuzz.BASES[0], out)
    assert s is not None and not out.failures
    bad = s.model_copy(update={"flows": [s.flows[0].model_copy(update={"cc": "bbrr"})]})
    with pytest.raises(ScenarioError):
        bad.resolve()
    # The same scenario with a core whose constructor refuses it: the fuzzer records the failure.
    from bbrlab.scenario import core

    real = core.load_core()

    class RefusingCore:
        def __getattr__(self, name: str) -> object:
            return getattr(real, name)

        @staticmethod
        def Simulation(config: str) -> None:  # the core's class name
            raise ValueError("refused")

    monkeypatch.setattr(core, "load_core", RefusingCore)
    assert fuzz.check_scenario(fuzz.BASES[0], out) is None
    assert [kind for kind, _ in out.failures] == ["accepted-then-rejected"]


REGRESSIONS = json.loads((HERE / "fuzz_regressions.json").read_text())


@pytest.mark.parametrize("case", REGRESSIONS, ids=[f"{c['seed']}-{c['hostile']}" for c in REGRESSIONS])
def test_past_fuzzing_failures_stay_fixed(case: dict) -> None:
    out = fuzz.Outcome()
    raw = fuzz.mutated_scenario(random.Random(case["seed"]).choice, hostile=case["hostile"])
    fuzz.check_scenario(raw, out)
    assert not out.failures, (case["what"], out.failures)
