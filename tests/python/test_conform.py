"""`bbrlab conform` (the BBR draft's Appendix A cases) and the per-ACK state trace behind it.

Each check can fail: a BBRv3 with one rule changed (BBRLAB_TEST_MUTATION, read by the simulator
when it builds a flow) must fail the case that holds that rule, and the unmutated one pass it.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from bbrlab.cli import cli
from bbrlab.conform import CASE_IDS, CSV_COLUMNS, conform, select_cases
from bbrlab.errors import UserError
from click.testing import CliRunner

MUTATION_ENV = "BBRLAB_TEST_MUTATION"


def _one(case: str, alg: str = "bbr3"):
    (row,) = conform([alg], select_cases([case]))
    return row


def test_the_state_table_reaches_python_results(core: ModuleType, tmp_path: Path) -> None:
    from bbrlab import run
    from bbrlab.scenario import load_scenario

    path = tmp_path / "trace.toml"
    path.write_text(
        """
name = "trace"
duration = "2s"
[topology]
kind = "dumbbell"
[topology.bottleneck]
rate = "10Mbps"
rtt = "40ms"
[[flows]]
cc = "bbr3"
trace = true
[[flows]]
cc = "cubic"
""",
        encoding="utf-8",
    )
    r = run(load_scenario(path))
    st = r.state
    assert len(st) > 100 and set(st["flow"]) == {0}
    assert list(st["phase"][:1]) == ["startup"] and "drain" in set(st["phase"])
    assert (np.diff(st["round_count"]) >= 0).all()
    # Saved and loaded back with the run.
    back = type(r).load(r.save(tmp_path / "run", plots=False))
    assert len(back.state) == len(st) and list(back.state.columns) == list(st.columns)


@pytest.mark.parametrize(
    ("case", "mutation", "alg"),
    [
        ("A.3", "drain_gain=0.75", "bbr3"),
        ("A.8", "down_gain=0.75", "bbr3_linux"),
        ("A.10", "probe_rtt_interval_s=10", "bbr3"),
        ("A.14", "probe_rtt_cwnd_floor=2", "bbr3"),
        ("A.1", "full_bw_cnt=1", "bbr3"),
        ("A.5", "full_bw_cnt=1", "bbr3_linux"),
        ("A.4", "drain_max_rounds=1000", "bbr3"),
        ("A.9", "down_gain=0.75", "bbr3"),
        ("A.20", "loss_thresh=0.5", "bbr3"),
        ("A.6", "longterm_from_app_limited=1", "bbr3"),
        ("A.21", "refill_needs_unlimited_round=1", "bbr3_linux"),
        ("A.18", "undo_keeps_phase=1", "bbr3"),
    ],
)
def test_each_check_catches_its_mutated_rule(
    core: ModuleType, monkeypatch: pytest.MonkeyPatch, case: str, mutation: str, alg: str
) -> None:
    monkeypatch.delenv(MUTATION_ENV, raising=False)
    good = _one(case, alg)
    assert good.verdict == "pass", good
    monkeypatch.setenv(MUTATION_ENV, mutation)
    bad = _one(case, alg)
    assert bad.verdict == "fail", (mutation, bad)
    assert bad.observed != good.observed


def test_cases_without_their_mechanism_say_what_is_missing(core: ModuleType) -> None:
    rows = conform(["bbr1"], select_cases(["A.2", "A.4", "A.8", "A.18", "A.21"]))
    assert [r.verdict for r in rows] == ["not applicable"] * 5
    assert "only on a bandwidth plateau" in rows[0].criterion
    assert "only on inflight" in rows[1].criterion and "no PROBE_DOWN" in rows[2].criterion
    assert "no bw/inflight bounds" in rows[3].criterion and "no PROBE_REFILL" in rows[4].criterion


def test_a_triggered_run_replays_its_base_up_to_the_trigger_and_changes_after(core: ModuleType) -> None:
    from bbrlab.conform.scenarios import TRIGGERED, build
    from bbrlab.conform.trace import run_config
    from bbrlab.conform.triggers import find_moment, replay

    trigger = TRIGGERED["drain_cut"][1]
    base = run_config(build("bulk", "bbr3"))
    moment = find_moment(base, "drain", 0.0)
    assert moment is not None and base.phases[moment.row] == "drain" and base.phases[moment.row - 1] == "startup"
    cut = replay(build("bulk", "bbr3"), base, trigger, "bbr3")
    assert cut.trigger_row == moment.row, cut.trigger_note
    n = moment.row + 1
    assert np.array_equal(cut.col("t_s")[:n], base.col("t_s")[:n])
    # After the trigger the link is slower: the same ACKs come later.
    m = min(len(cut.phases), len(base.phases))
    assert not np.array_equal(cut.col("t_s")[n:m], base.col("t_s")[n:m])
    # A phase the flow never enters is reported, not replayed.
    bbr1 = run_config(build("bulk", "bbr1"))
    none = replay(build("bulk", "bbr1"), bbr1, TRIGGERED["down_cut"][1], "bbr1")
    assert none.trigger_row is None and "never entered probe_down" in none.trigger_note


def test_sweep_runs_the_scalable_cases_at_each_point(core: ModuleType) -> None:
    from bbrlab.conform import sweep
    from bbrlab.conform.scenarios import SWEEP_RATES_BPS, SWEEP_RTTS_NS

    rows = sweep(["bbr3"], select_cases(["A.1", "A.14"]))
    # A.14's scenario sets its own rate: not swept.
    assert [r.case for r in rows] == ["A.1"] * (len(SWEEP_RATES_BPS) * len(SWEEP_RTTS_NS))
    assert rows[0].observed.startswith("[1 Mbit/s, 10 ms]") and rows[-1].observed.startswith("[100 Mbit/s, 200 ms]")
    # The default point is in the grid and gives the default verdict.
    assert any(r.observed.startswith("[10 Mbit/s, 40 ms]") and r.verdict == "pass" for r in rows)


def test_case_selection_accepts_both_spellings_and_refuses_unknown_ids() -> None:
    assert [c.id for c in select_cases(["a.10", "1"])] == ["A.1", "A.10"]
    assert [c.id for c in select_cases(None)] == list(CASE_IDS)
    with pytest.raises(UserError, match="no case 'A.99'"):
        select_cases(["A.99"])
    with pytest.raises(UserError, match="not a BBR"):
        conform(["cubic"], select_cases(["A.1"]))


def test_cli_writes_the_table_and_conform_csv(core: ModuleType, tmp_path: Path) -> None:
    r = CliRunner().invoke(cli, ["conform", "bbr3", "bbr1", "--cases", "A.1,A.5", "--out", str(tmp_path), "-q"])
    assert r.exit_code == 0, r.output
    assert "A.1" in r.output and "pass" in r.output and "n/a" in r.output
    with open(tmp_path / "conform.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert tuple(rows[0]) == CSV_COLUMNS
    got = {(x["case"], x["algorithm"]): x["verdict"] for x in rows}
    assert got == {
        ("A.1", "bbr3"): "pass",
        ("A.1", "bbr1"): "pass",
        ("A.5", "bbr3"): "pass",
        ("A.5", "bbr1"): "not applicable",
    }
    assert all(x["backend"] == "sim" and x["criterion"] for x in rows)
    # The timeline page: a plot for each applicable row (3 here), with the phases as bands.
    page = (tmp_path / "conform.html").read_text(encoding="utf-8")
    assert page.count("<svg") == 3 and "<title>drain" in page and "A.5 · bbr1" in page
    j = CliRunner().invoke(cli, ["conform", "bbr2", "--cases", "A.3", "--json", "--out", str(tmp_path)])
    assert j.exit_code == 0, j.output
    (row,) = json.loads(j.output)
    assert row["case"] == "A.3" and row["algorithm"] == "bbr2" and row["verdict"] in ("pass", "fail")


def test_a2_exits_startup_on_six_discontiguous_losses_not_on_one_contiguous_range(
    core: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bbrlab.conform import scenarios

    monkeypatch.delenv(MUTATION_ENV, raising=False)
    assert _one("A.2").verdict == "pass"
    # The same six losses in one range are fewer loss events: STARTUP goes on.
    first = scenarios.A2_DROPPED_SEGMENTS[0]
    monkeypatch.setattr(scenarios, "A2_DROPPED_SEGMENTS", tuple(range(first, first + 6)))
    row = _one("A.2")
    assert row.verdict == "fail" and "end of run" in row.observed, row


def test_a6_holds_an_app_limited_loss_apart_from_a_bulk_one(core: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    """A.6 and A.20 place losses in PROBE_UP; only A.6's sender is app-limited, so only A.20's
    losses set inflight_longterm. Without the application's slow-down A.6's check fails on the
    same algorithm (the losses then set inflight_longterm from a sample that is not app-limited)."""
    from bbrlab.conform import scenarios

    monkeypatch.delenv(MUTATION_ENV, raising=False)
    good = _one("A.6")
    assert good.verdict == "pass" and "unset on UP's entry, unset after" in good.observed, good
    assert "inflight_longterm unset" not in _one("A.20").observed
    monkeypatch.setattr(scenarios, "APP_SLOW_SHARE", 10.0)  # the app "slows" to 10× the link
    bulk = _one("A.6")
    assert bulk.verdict == "fail" and "not app-limited" in bulk.observed, bulk


def test_a18_holds_v2alpha_to_the_draft_s_phase_restore(core: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    """v2alpha's undo restores the bounds but not the phase: after the spurious recovery in UP it
    is in CRUISE, a documented fail, while its bounds are restored."""
    monkeypatch.delenv(MUTATION_ENV, raising=False)
    row = _one("A.18", "bbr2")
    assert row.verdict == "fail" and "documented difference" in row.observed, row
    assert "probe_up → probe_cruise" in row.observed and "undos" in row.observed


def test_a5_does_not_judge_a_probe_up_that_probe_rtt_preempts() -> None:
    """PROBE_RTT pre-empts any state when min_rtt's window expires (the draft's BBRCheckProbeRTT
    runs on every ACK). The bulk run behind Linux's autotuning receiver (`receiver_window =
    "autotune"`) shifts `bbr3_linux`'s cycles so that two PROBE_UPs are cut short by it after one
    round: A.5 leaves those out and judges the other nine, which end on the plateau."""
    from bbrlab.conform.probe_bw import check_a5
    from bbrlab.conform.rules import RULES
    from bbrlab.conform.scenarios import build
    from bbrlab.conform.trace import run_config

    cfg = build("bulk", "bbr3_linux")
    cfg["flows"][0]["receiver_window"] = "autotune"
    run = run_config(cfg)
    cut = [e for e in run.episodes_of("probe_up") if e.next == "probe_rtt"]
    assert cut, "the run no longer has a PROBE_UP that PROBE_RTT cuts short: pick another"
    out = check_a5(run, RULES["bbr3_linux"])
    assert out.verdict == "pass", out
    assert f"{len(cut)} more cut short by probe_rtt" in out.observed, out
