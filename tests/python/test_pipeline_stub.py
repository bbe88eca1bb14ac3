"""The Python pipeline (runner, results, run directory, plots, show, --ss) against the contract stub.

These tests do not exercise the simulator: contract_stub.py returns made-up numbers in the exact
shapes of docs/core-api.md. The real simulator is tested in test_core_run.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import bbrlab
import numpy as np
import pandas as pd
import pytest
from bbrlab.cli import cli
from bbrlab.plots.plots import PLOTS
from bbrlab.results.results import RUN_FILES, Result, is_complete_run, jain_index
from click.testing import CliRunner

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_jain_index() -> None:
    assert jain_index([5, 5, 5, 5]) == pytest.approx(1.0)
    assert jain_index([1, 0, 0, 0]) == pytest.approx(0.25)
    assert jain_index([3, 1]) == pytest.approx(16 / 20)
    assert np.isnan(jain_index([]))
    assert np.isnan(jain_index([0, 0]))


def test_run_decodes_the_contract(stub_core) -> None:
    s = bbrlab.load_scenario(EXAMPLES / "bbr-vs-cubic.toml", ["duration=5s", "flows.1.start=1s", "flows.1.count=2"])
    seen: list[tuple[int, int]] = []
    r = bbrlab.run(s, progress=lambda now, end: seen.append((now, end)))
    assert seen and seen[-1] == (5 * 10**9, 5 * 10**9)
    assert [now for now, _ in seen] == sorted(now for now, _ in seen)
    assert list(r.flows["cc"].astype(str)) == ["bbr1", "cubic", "cubic"]
    assert list(r.flows["spec"]) == [0, 1, 1]
    assert len(r.timeseries) == 3 * 50
    assert {"cc", "phase"} <= set(r.timeseries.columns) and "phase_code" not in r.timeseries
    # The stub reports phase code 2 of each flow's registry table: names the algorithm has.
    by_cc = r.timeseries.groupby(r.timeseries["cc"].astype(str))["phase"]
    assert {cc: set(p.astype(str)) for cc, p in by_cc} == {"bbr1": {"probe_bw"}, "cubic": {"recovery"}}
    assert set(r.queue["queue"].astype(str)) == {"bottleneck"}
    assert r.summary["run"]["backend"] == "sim" and r.summary["run"]["seed"] == 1
    assert r.summary["aggregate"]["jain"] == pytest.approx(jain_index(r.flows["goodput_bps"]))


def test_save_writes_a_complete_run_atomically(stub_core, tmp_path: Path) -> None:
    s = bbrlab.load_scenario(EXAMPLES / "quick.toml", ["duration=2s"])
    r = bbrlab.run(s)
    out = r.save(tmp_path / "run1")
    assert is_complete_run(out) and not (tmp_path / "run1.incomplete").exists()
    for f in RUN_FILES + PLOTS:
        assert (out / f).is_file() and (out / f).stat().st_size > 0, f
    summary = json.loads((out / "summary.json").read_text())
    assert summary == r.summary
    back = Result.load(out)
    pd.testing.assert_frame_equal(back.timeseries, r.timeseries, check_categorical=False)
    assert bbrlab.load_scenario(out / "scenario.toml").resolve() == s.resolve()
    with pytest.raises(bbrlab.UserError):
        r.save(out)  # never overwrite a run


def test_failed_save_leaves_nothing_that_looks_complete(stub_core, tmp_path: Path, monkeypatch) -> None:
    r = bbrlab.run(bbrlab.load_scenario(EXAMPLES / "quick.toml", ["duration=1s"]))

    def boom(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr("bbrlab.plots.plots.plot_all", boom)
    with pytest.raises(KeyboardInterrupt):
        r.save(tmp_path / "run")
    assert not (tmp_path / "run").exists() and not (tmp_path / "run.incomplete").exists()


def test_cli_run_show_and_ss(stub_core, in_tmp: Path) -> None:
    res = CliRunner().invoke(
        cli,
        [
            "run",
            str(EXAMPLES / "bbr-vs-cubic.toml"),
            "--set",
            "duration=3s",
            "--set",
            "flows.1.start=1s",
            "--seed",
            "9",
            "--out",
            "r",
        ],
    )
    assert res.exit_code == 0, res.output
    assert "Jain" in res.output and "bbr1" in res.output and "wrote r" in res.output
    assert json.loads((in_tmp / "r" / "summary.json").read_text())["run"]["seed"] == 9
    show = CliRunner().invoke(cli, ["show", "r"])
    assert show.exit_code == 0 and "cubic" in show.output and "Jain" in show.output
    ss = CliRunner().invoke(cli, ["show", "r", "--ss", "--at", "1.25s"])
    assert ss.exit_code == 0, ss.output
    assert "t=1.3s" in ss.output
    assert "bbr:(bw:" in ss.output and "pacing_gain:1.25" in ss.output and "cwnd_gain:2" in ss.output
    assert "phase:probe_bw" in ss.output and "cwnd:100" in ss.output
    bad_at = CliRunner().invoke(cli, ["show", "r", "--ss", "--at", "99s"])
    assert bad_at.exit_code == 2 and "outside the run" in bad_at.output


def test_cli_quiet_and_default_run_dir(stub_core, in_tmp: Path) -> None:
    res = CliRunner().invoke(cli, ["run", str(EXAMPLES / "quick.toml"), "--quiet", "--set", "duration=1s"])
    assert res.exit_code == 0, res.output
    path = Path(res.output.strip())
    assert path.parent.name == "runs" and path.name.startswith("quick-") and is_complete_run(in_tmp / path)


def test_ctrl_c_exits_130_without_a_run_dir(stub_core, in_tmp: Path) -> None:
    stub_core.Simulation.interrupt_after = 2
    res = CliRunner().invoke(cli, ["run", str(EXAMPLES / "quick.toml"), "--out", "r"])
    assert res.exit_code == 130, res.output
    assert "Traceback" not in res.output and "interrupted" in res.output
    assert not any(p.name.startswith("r") for p in in_tmp.iterdir())


def test_core_rejection_is_a_user_error(stub_core, in_tmp: Path, monkeypatch) -> None:
    # The core has the last word on a config; its error names the config's field, which reaches
    # the user as one line naming the scenario's field.
    def reject(self, config_json):
        raise stub_core.ConfigError("flows.0.mss_bytes", "64B is below the minimum 88B")

    monkeypatch.setattr(stub_core.Simulation, "__init__", reject)
    res = CliRunner().invoke(cli, ["run", str(EXAMPLES / "quick.toml"), "--set", "flows.0.mss=64", "--out", "r"])
    assert res.exit_code == 2, res.output
    assert res.output == "error: flows.0.mss: 64B is below the minimum 88B\n"
    assert not (in_tmp / "r").exists()


def test_cc_lists_the_cores_algorithms(stub_core) -> None:
    res = CliRunner().invoke(cli, ["cc"])
    assert res.exit_code == 0
    assert "bbr1" in res.output and "alias of bbr1" in res.output
