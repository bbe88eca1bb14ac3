"""transperf's metrics (results/transperf.py) and a scenario's [checks] (scenario/checks.py):
the numbers against what the scenario makes them, `bbrlab run`'s exit codes, and the table kept
out of the core's config."""

from __future__ import annotations

import json
import math
import textwrap
from pathlib import Path

import bbrlab
import numpy as np
import pytest
from bbrlab.cli import cli
from bbrlab.errors import ScenarioError
from bbrlab.scenario import parse_scenario
from bbrlab.scenario.checks import METRICS, parse_checks
from click.testing import CliRunner

# Two BBRv1 flows, 10 Mbit/s, 20 ms, 6 s: about half a second of simulation.
TWO_FLOWS = {
    "name": "tp",
    "duration": "6s",
    "topology": {"kind": "dumbbell", "bottleneck": {"rate": "10Mbps", "rtt": "20ms"}},
    "flows": [{"cc": "bbr1", "count": 2}],
}


def scenario(checks: dict | None = None, **changes) -> bbrlab.Scenario:
    raw = json.loads(json.dumps(TWO_FLOWS))
    raw.update(changes)
    if checks is not None:
        raw["checks"] = checks
    return parse_scenario(raw)


def test_bulk_bbr_flows_fill_the_link_fairly(core) -> None:
    tp = bbrlab.run(scenario()).summary["transperf"]
    # Goodput of a full 10 Mbit/s link: payload / wire = 1448 / 1538 = 94.1 %, less STARTUP.
    assert 80 < tp["tput"] < 94.2
    assert tp["flows"] == 2 and tp["warmup_s"] == 4.0 and tp["judged_flows"] == "bbr"
    # Per-second Jain index over two flows lies in [50, 100]; the mean is at least the minimum.
    assert 50 <= tp["convergence_fairness"] <= tp["fairness"] <= 100
    # Each flow leaves STARTUP near the link's rate: far above its fair share's 35 %.
    assert tp["lock_on_bw"] > 35
    for f in tp["per_flow"]:
        assert f["bbr"] and f["lock_on_bw_bps"] > 0
        assert f["min_rtt_ms"] == pytest.approx(20.0, rel=0.05)
        assert f["med_rtt_ms"] >= f["min_rtt_ms"]
    assert 0 < tp["rtt_med"] <= 100
    assert 50 < tp["loss_avoid"] < 100  # BBRv1 in one BDP: STARTUP overflows it
    assert len(tp["per_second"]["tput"]) == 6  # one bucket per whole second of the run


def test_one_flow_has_no_fairness(core) -> None:
    tp = bbrlab.run(scenario(flows=[{"cc": "bbr1"}])).summary["transperf"]
    assert tp["fairness"] is None and tp["convergence_fairness"] is None
    assert "one flow" in tp["notes"]["fairness"]


def test_convergence_compares_a_share_of_the_link_not_bit_per_s(core) -> None:
    """transperf's defect: its per-second check compares aggregate bit/s with the tput target
    (a percentage), so 5 Mbit/s on a 10 Mbit/s link 'converges'. Here it is 50 % < 80 %."""
    writer = [{"cc": "bbr1", "app": {"kind": "rate", "rate": "5Mbps"}}]
    tp = bbrlab.run(scenario(flows=writer)).summary["transperf"]
    assert tp["tput"] == pytest.approx(50, abs=8)
    assert tp["convergence_sec"] is None
    # With a target the writer's rate meets, the same run converges within its first seconds.
    tp2 = bbrlab.run(scenario({"tput": ">= 30"}, flows=writer)).summary["transperf"]
    assert tp2["convergence_targets"]["tput"] == 30
    assert tp2["convergence_sec"] is not None and tp2["convergence_sec"] <= 3


def test_cubic_has_no_lock_on_and_is_judged_on_all_flows(core) -> None:
    tp = bbrlab.run(scenario(flows=[{"cc": "cubic", "count": 2}])).summary["transperf"]
    assert tp["lock_on_bw"] is None and tp["judged_flows"] == "all"
    assert tp["rtt_med"] is not None and tp["loss_avoid"] is not None


# ------------------------------------------------------------------ [checks]


def test_checks_stay_out_of_the_core_config() -> None:
    plain, checked = scenario(), scenario({"tput": ">= 80", "convergence_sec": 4})
    assert plain.resolve() == checked.resolve()
    assert [c.expression for c in checked.checks] == [">= 80", "<= 4"]
    assert "[checks]" in checked.to_toml() and "[checks]" not in plain.to_toml()


@pytest.mark.parametrize(
    ("table", "path", "text"),
    [
        ({"tput": "=> 80"}, "checks.tput", '"OP NUMBER"'),
        ({"tput": "80%"}, "checks.tput", '">= 80"'),
        ({"rtt_med": ">= 4s"}, "checks.rtt_med", "OP one of >=, >, <=, <"),
        ({"tput": True}, "checks.tput", '"OP NUMBER"'),
        ({"throughput": ">= 80"}, "checks.throughput", "unknown metric"),
    ],
)
def test_bad_check_expressions_are_refused(table: dict, path: str, text: str) -> None:
    with pytest.raises(ScenarioError) as e:
        parse_checks(table)
    assert e.value.path == path and text in str(e.value) and "\n" not in str(e.value)


def test_bare_numbers_take_transperfs_direction() -> None:
    checks = parse_checks({k: 1 for k in METRICS})
    assert {c.metric: c.op for c in checks} == METRICS
    assert parse_checks({"convergence_sec": "< 2.5s"})[0].value == 2.5


def _write(tmp: Path, checks: str) -> Path:
    p = tmp / "s.toml"
    p.write_text(
        textwrap.dedent(
            """\
            duration = "5s"
            [topology]
            kind = "dumbbell"
            [topology.bottleneck]
            rate = "10Mbps"
            rtt = "20ms"
            [[flows]]
            cc = "bbr1"
            count = 2
            [checks]
            """
        )
        + checks
    )
    return p


def test_run_passes_its_checks(core, in_tmp: Path) -> None:
    p = _write(in_tmp, 'tput = ">= 60"\nloss_avoid = ">= 50"\n')
    r = CliRunner().invoke(cli, ["run", str(p), "--out", "r", "-q"])
    assert r.exit_code == 0, r.output
    summary = json.loads((in_tmp / "r" / "summary.json").read_text())
    assert [c["passed"] for c in summary["checks"]] == [True, True]
    # The run directory's scenario keeps the bounds, so a loaded run has them again.
    assert [c.expression for c in bbrlab.Result.load(in_tmp / "r").scenario.checks] == [">= 60", ">= 50"]


def test_run_fails_a_check_with_exit_1_and_a_table(core, in_tmp: Path) -> None:
    p = _write(in_tmp, 'tput = ">= 99"\nfairness = ">= 10"\n')
    r = CliRunner().invoke(cli, ["run", str(p), "--out", "r", "-q"])
    assert r.exit_code == 1, r.output
    assert "1 of 2 checks failed" in r.output and "tput" in r.output and ">= 99" in r.output
    summary = json.loads((in_tmp / "r" / "summary.json").read_text())  # written all the same
    assert [(c["metric"], c["passed"]) for c in summary["checks"]] == [("tput", False), ("fairness", True)]


def test_run_refuses_a_bad_check_in_one_line(in_tmp: Path) -> None:
    p = _write(in_tmp, 'rtt_med = "at least 40"\n')
    r = CliRunner().invoke(cli, ["run", str(p), "--out", "r"])
    assert r.exit_code == 2
    lines = [x for x in r.output.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: checks.rtt_med:") and '"OP NUMBER"' in lines[0]
    assert not (in_tmp / "r").exists()


def test_lock_on_is_the_estimate_at_startup_exit_zero_if_never_unknown_if_unreported() -> None:
    from bbrlab.results.columns import Table
    from bbrlab.results.transperf import _lock_on_bps

    phases = ("startup", "drain", "probe_bw")

    def ts(codes: list[int], bw: list[float]) -> Table:
        t = Table()
        t.set("t_s", np.arange(1, len(codes) + 1) * 0.1)
        t.set("flow", np.zeros(len(codes), dtype=np.int32))
        t.set("phase", np.asarray(codes), categories=phases)
        t.set("bw_bps", np.asarray(bw, dtype=float))
        return t

    assert _lock_on_bps(0, None, ts([0, 0, 1, 2], [1e6, 5e6, 9e6, 8e6])) == 9e6  # first non-STARTUP row
    assert _lock_on_bps(0, None, ts([0, 0, 0], [1e6, 5e6, 9e6])) == 0.0  # never left STARTUP
    assert math.isnan(_lock_on_bps(0, None, ts([0, 2], [math.nan, math.nan])))  # not reported
    # A state trace (per ACK) is preferred to the time series when it has the flow.
    assert _lock_on_bps(0, ts([0, 1], [1e6, 7e6]), ts([0, 2], [1e6, 9e6])) == 7e6
