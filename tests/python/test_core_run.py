"""End to end with the compiled simulator (`bbrlab._core`): `pytest -m needs_core`.

Every test here takes the `core` fixture, which FAILS (never skips) when the core is not built.
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
from bbrlab.results.results import RUN_FILES, is_complete_run
from click.testing import CliRunner

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

SHORT = """
name = "short"
duration = "5s"
seed = 3
[topology]
kind = "dumbbell"
bottleneck = { rate = "20Mbps", rtt = "40ms", buffer = "1bdp" }
[[flows]]
cc = "cubic"
[[flows]]
cc = "bbr1"
start = "1s"
"""


def _run_cli(args: list[str]) -> str:
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, f"{args}: exit {res.exit_code}\n{res.output}\n{res.exception!r}"
    return res.output


def test_core_calls_follow_the_contract(core) -> None:
    assert isinstance(core.version(), str) and core.version()
    names = {a["name"] for a in core.algorithms()}
    assert {"reno", "cubic", "bbr1"} <= names
    assert all(isinstance(a["summary"], str) and a["summary"] and "\n" not in a["summary"] for a in core.algorithms())
    config = bbrlab.parse_scenario(__import__("tomllib").loads(SHORT)).resolve()
    sim = core.Simulation(json.dumps(config))
    assert sim.end_ns == 5 * 10**9 and sim.now_ns == 0
    assert sim.run_until(10**9) is False and sim.now_ns == 10**9
    bad = dict(config, flows=[dict(config["flows"][0], cc="no-such-cc")])
    with pytest.raises(core.ConfigError) as e:
        core.Simulation(json.dumps(bad))
    assert e.value.args[0] == "flows.0.cc" and "no-such-cc" in e.value.args[1]
    assert isinstance(e.value, ValueError)


def test_short_run_tables_match_the_summary(core, in_tmp: Path) -> None:
    (in_tmp / "short.toml").write_text(SHORT)
    _run_cli(["run", "short.toml", "--out", "run", "--quiet"])
    d = in_tmp / "run"
    assert is_complete_run(d) and not (in_tmp / "run.incomplete").exists()
    for f in RUN_FILES + PLOTS:
        assert (d / f).is_file() and (d / f).stat().st_size > 0, f

    summary = json.loads((d / "summary.json").read_text())
    flows = pd.read_parquet(d / "flows.parquet")
    ts = pd.read_parquet(d / "timeseries.parquet")
    queue = pd.read_parquet(d / "queue.parquet")

    n_flows, n_samples = 2, 50  # 5 s / 100 ms, one sample at the end of each interval
    assert len(flows) == n_flows
    assert len(ts) == n_flows * n_samples
    assert sorted(ts["t_s"].unique()) == pytest.approx(np.arange(1, n_samples + 1) * 0.1)
    assert len(queue) >= n_samples and "bottleneck" in set(queue["queue"].astype(str))
    assert list(flows["cc"].astype(str)) == ["cubic", "bbr1"]
    assert set(ts["cc"].astype(str)) == {"cubic", "bbr1"}
    assert ts["phase"].notna().all()

    # Data actually moved, and no more than the link can carry.
    last = ts.sort_values("t_s").groupby("flow")["delivered_bytes"].last()
    assert (last > 0).all(), "a flow delivered nothing"
    assert last.sum() * 8 / 5.0 <= 20e6 * 1.01

    # Timeseries and flows agree, and both agree with summary.json (within rounding).
    assert list(last.sort_index()) == list(flows.sort_values("flow")["delivered_bytes"])
    agg = summary["aggregate"]
    assert agg["goodput_bps"] == pytest.approx(last.sum() * 8 / 5.0, rel=1e-9)
    for f in summary["flows"]:
        row = flows[flows["flow"] == f["flow"]].iloc[0]
        assert f["cc"] == row["cc"]
        assert f["goodput_bps"] == pytest.approx(row["goodput_bps"], rel=1e-9)
        assert f["goodput_bps"] == pytest.approx(row["delivered_bytes"] * 8 / (row["end_s"] - row["start_s"]), rel=1e-3)
        assert f["retransmits"] == row["retransmits"]
        for k in ("rtt_mean_ms", "rtt_p95_ms"):
            assert f[k] is not None and f[k] >= 40.0 * 0.999, (k, f[k])
    # Per-interval goodput integrates to the cumulative delivered bytes.
    for _flow, rows in ts.sort_values("t_s").groupby("flow"):
        integral = float((rows["goodput_bps"] * 0.1 / 8).sum())
        assert integral == pytest.approx(float(rows["delivered_bytes"].iloc[-1]), rel=1e-6, abs=n_samples)
    jain = agg["jain"]
    assert 0.5 <= jain <= 1.0 + 1e-12
    run = summary["run"]
    assert run["backend"] == "sim" and run["seed"] == 3 and run["complete"] is True
    assert run["data_packets_delivered"] > 0 and run["events"] > 0 and run["wall_s"] > 0
    assert run["packets_per_wall_s"] == pytest.approx(run["data_packets_delivered"] / run["wall_s"])
    assert run["bbrlab_version"] == bbrlab.__version__

    # show and show --ss read the same directory back.
    assert "Jain" in _run_cli(["show", "run"])
    ss = _run_cli(["show", "run", "--ss", "--at", "2.5s"])
    assert "t=2.5s" in ss and "cubic cwnd:" in ss and "bbr:(bw:" in ss and "pacing_gain:" in ss


def test_same_seed_same_timeseries(core, tmp_path: Path) -> None:
    (tmp_path / "s.toml").write_text(SHORT)
    lossy = ["topology.bottleneck.loss=1%", "duration=3s"]  # random loss: the seed matters
    a = bbrlab.run(bbrlab.load_scenario(tmp_path / "s.toml", lossy))
    b = bbrlab.run(bbrlab.load_scenario(tmp_path / "s.toml", lossy))
    pd.testing.assert_frame_equal(a.timeseries, b.timeseries)
    pd.testing.assert_frame_equal(a.flows, b.flows)
    pd.testing.assert_frame_equal(a.queue, b.queue)
    c = bbrlab.run(bbrlab.load_scenario(tmp_path / "s.toml", lossy + ["seed=4"]))
    assert not a.timeseries.equals(c.timeseries), "a different seed gave the same run"


def test_quick_example_runs(core, in_tmp: Path) -> None:
    out = _run_cli(["run", str(EXAMPLES / "quick.toml"), "--out", "q"])
    assert "bbr1" in out and "Jain" in out
    assert json.loads((in_tmp / "q" / "summary.json").read_text())["flows"][0]["goodput_bps"] > 0


def test_cc_lists_the_core(core) -> None:
    out = _run_cli(["cc"])
    for a in core.algorithms():
        assert a["name"] in out and a["summary"] in out
        for alias in a["aliases"]:
            assert f"{alias}" in out and f"alias of {a['name']}" in out
