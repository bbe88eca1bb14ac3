"""Paths that change (issue 30), the front's side: trace files are read relative to the scenario
and passed to the core by contents (so the run's cache key follows them), the examples load, and
the scenario forms of the issue reach the core with their units converted."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from bbrlab.errors import ScenarioError
from bbrlab.scenario import load_scenario
from bbrlab.sweep.cache import run_key

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_the_trace_is_passed_by_contents_and_the_cache_key_follows_them(tmp_path: Path) -> None:
    shutil.copy(EXAMPLES / "cellular-trace.toml", tmp_path / "s.toml")
    (tmp_path / "traces").mkdir()
    for name in ("cell-down.mahimahi", "cell-up.mahimahi"):
        shutil.copy(EXAMPLES / "traces" / name, tmp_path / "traces" / name)
    first = load_scenario(tmp_path / "s.toml").resolve()
    b = first["topology"]["bottleneck"]
    assert b["trace"]["file"] == "traces/cell-down.mahimahi"
    assert b["trace"]["text"] == (EXAMPLES / "traces" / "cell-down.mahimahi").read_text()
    assert "rate_bps" not in b
    same = load_scenario(tmp_path / "s.toml").resolve()
    assert run_key(first) == run_key(same)
    # The same path, other contents: another run.
    down = tmp_path / "traces" / "cell-down.mahimahi"
    down.write_text(down.read_text() + "60001\n")
    changed = load_scenario(tmp_path / "s.toml").resolve()
    assert run_key(changed) != run_key(first)


def test_a_missing_trace_names_the_field_and_the_file(tmp_path: Path) -> None:
    (tmp_path / "s.toml").write_text(
        'duration = "1s"\n[topology.bottleneck]\ntrace = "gone.mahimahi"\nrtt = "40ms"\n[[flows]]\ncc = "cubic"\n'
    )
    with pytest.raises(ScenarioError) as e:
        load_scenario(tmp_path / "s.toml")
    assert "topology.bottleneck.trace" in str(e.value) and "gone.mahimahi" in str(e.value)


@pytest.mark.parametrize("name", ["cellular-trace", "policer", "wifi-aggregation", "rate-step"])
def test_the_examples_load_with_their_units_converted(name: str) -> None:
    core = load_scenario(EXAMPLES / f"{name}.toml").resolve()
    b = core["topology"]["bottleneck"]
    if name == "policer":
        assert b["policer"] == {"rate_bps": 50_000_000, "burst_bytes": 64_000}
    if name == "wifi-aggregation":
        assert b["aggregation"] == {"direction": "ack", "bytes": 16_000, "timeout_ns": 2_000_000}
        assert b["jitter"] == {"max_ns": 2_000_000, "reorder": False}
    if name == "rate-step":
        assert [(e["at_ns"], e["rate_bps"]) for e in b["schedule"]] == [
            (10_000_000_000, 10_000_000),
            (20_000_000_000, 100_000_000),
        ]
