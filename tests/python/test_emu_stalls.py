"""The emulator's stalls and the bottleneck drops attributed to them (bbrlab.emu.stalls), on
synthetic queue tables, and their way into `bbrlab compare` (kernel side played by the simulator
with stalls written into its summary)."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest
from bbrlab.emu.compare import run_compare
from bbrlab.emu.stalls import (
    drops_in_stalls,
    late_sleeps,
    late_wakes,
    run_stalls,
    stall_drops_of_run,
    stalls_from_final,
)

QUICK = Path(__file__).resolve().parents[2] / "examples" / "quick.toml"


def _queue(drops_per_interval: list[int], rev_drops: int = 0) -> pd.DataFrame:
    """A dumbbell's queue table on a 100 ms grid: the bottleneck's cumulative overflow drops from
    these per-interval counts, and a reverse queue dropping ``rev_drops`` in every interval."""
    rows = []
    cum = rev = 0
    for i, d in enumerate(drops_per_interval):
        t = round(0.1 * (i + 1), 10)
        cum += d
        rev += rev_drops
        rows.append({"t_s": t, "queue": "bottleneck", "drops_overflow": cum})
        rows.append({"t_s": t, "queue": "bottleneck_rev", "drops_overflow": rev})
    return pd.DataFrame(rows)


def test_drops_of_a_stalled_interval_and_the_next_count() -> None:
    #            0.1 0.2 0.3 0.4 0.5 0.6 0.7 0.8
    per = [5, 0, 7, 11, 3, 0, 13, 2]
    q = _queue(per, rev_drops=100)
    # Stalls end the intervals at 0.3 and 0.6: 0.3 (7) and 0.4 (11), then 0.6 (0) and 0.7 (13).
    # Not 0.2 or 0.5 (before a stall), not 0.8 (two after).
    stalls = [[0.30000000000000004, 3.5], [0.6, 1.2]]
    m = stall_drops_of_run(q, stalls, 2)
    assert m["overflow_drops"] == sum(per)
    assert m["stall_drops"] == 7 + 11 + 0 + 13
    assert m["stall_drop_share"] == pytest.approx(31 / 41)
    assert m["stall_count"] == 2 and m["stall_max_ms"] == 3.5


def test_adjacent_stalls_count_each_interval_once() -> None:
    q = _queue([4, 6, 8, 10])
    b = q[q["queue"] == "bottleneck"]
    got = drops_in_stalls(b["t_s"].tolist(), b["drops_overflow"].tolist(), [0.1, 0.2])
    assert got == (4 + 6 + 8, 28)


def test_no_stall_no_drops_attributed_and_no_drops_no_share() -> None:
    m = stall_drops_of_run(_queue([3, 4]), [], 0)
    assert (m["stall_drops"], m["overflow_drops"], m["stall_max_ms"]) == (0, 7, 0.0)
    m = stall_drops_of_run(_queue([0, 0]), [[0.1, 2.0]], 1)
    assert m["stall_drops"] == 0 and math.isnan(m["stall_drop_share"])


def test_a_graph_sums_its_links() -> None:
    q = pd.DataFrame(
        {
            "t_s": [0.1, 0.1, 0.2, 0.2],
            "queue": ["r0-r1", "r1-r2", "r0-r1", "r1-r2"],
            "drops_overflow": [1, 0, 3, 5],
        }
    )
    m = stall_drops_of_run(q, [[0.2, 1.5]], 1)
    assert (m["stall_drops"], m["overflow_drops"]) == (2 + 5, 8)


def test_final_line_stalls_within_the_run_in_seconds_and_ms() -> None:
    final = {
        "stall_count": 4,
        "stalls": [[100_000_000, 3_999_120], [19_400_000_000, 1_000_000], [20_100_000_000, 9_000_000]],
    }
    stalls, count = stalls_from_final(final, 20_000_000_000)
    assert stalls == [[0.1, 3.999], [19.4, 1.0]]
    # 4 in all, one of the listed after the end: 3 within (one beyond the list's cap).
    assert count == 3
    assert stalls_from_final({}, 10) == ([], 0)


def test_compare_reports_the_kernel_runs_stall_drops(tmp_path: Path) -> None:
    """The kernel side is the simulator with stalls written in: one stall at the interval before
    the first drops, one where nothing drops."""
    from bbrlab.engine.runner import run

    def run_fn(scn, backend="sim"):
        res = run(scn, backend="sim")
        if backend == "emu":
            res.summary["run"]["emu"] = {"emulator": {"stall_count": 2, "stalls": [[0.2, 3.0], [1.5, 1.25]]}}
        return res

    lines: list[str] = []
    table, out = run_compare(
        str(QUICK),
        sets=["topology.bottleneck.rate=500Mbps", "topology.bottleneck.rtt=10ms"],
        grid=[],
        ccs=["cubic"],
        duration="2s",
        out=tmp_path / "cmp",
        run_fn=run_fn,
        echo=lines.append,
        seeds=1,
        emu_runs=1,
    )
    q = pd.read_parquet(out / "runs" / "p0-cubic-emu-s1" / "queue.parquet")
    b = q[q["queue"] == "bottleneck"].set_index(q[q["queue"] == "bottleneck"]["t_s"].round(6))["drops_overflow"]
    first = b[b > 0].index[0]
    assert first == 0.3, "the scenario's first drops moved; pick the stall times anew"
    expected = int(b[0.3] - b[0.1])  # the intervals ending 0.2 and 0.3
    expected += int(b[1.6] - b[1.4])  # 1.5 and 1.6
    row = table.iloc[0]
    assert row["emu_stall_drops"] == expected > 0
    assert row["emu_overflow_drops"] == int(b.iloc[-1])
    assert row["emu_stall_count"] == 2 and row["emu_stall_max_ms"] == 3.0
    assert "sim_stall_drops" not in table.columns
    csv = pd.read_csv(out / "compare.csv")
    assert csv["emu_stall_drops"].iloc[0] == expected
    md = (out / "compare.md").read_text()
    assert f"{expected} of {int(b.iloc[-1])} overflow drops in stalled intervals" in md
    assert any(f"{expected} in stalled intervals" in line for line in lines)


def test_runs_without_stall_records_give_none() -> None:
    assert run_stalls({"run": {"backend": "sim"}}) is None
    assert run_stalls({"run": {"emu": {"emulator": {"late_max_ns": 5}}}}) is None
    assert run_stalls({"run": {"emu": {"emulator": {"stall_count": 1, "stalls": [[0.1, 2.0]]}}}}) == ([[0.1, 2.0]], 1)


# ------------------------------------------------------------------ late wake-ups vs a busy loop

#: A final line as the emulator writes it since it records wake-up lateness: [t_ns, late_ns,
#: wake_late_ns, sleep_late_ns] per stall. The 0.3 s stall's sleep woke exactly at the threshold
#: (a late wake-up), the 0.5 s one's 1 µs short of it (the loop busy; a sleep returned 2.9 ms late
#: with a packet ready); the last is after the run's end.
FINAL_WITH_WAKES = {
    "stall_threshold_ns": 1_000_000,
    "stall_count": 5,
    "stalls": [
        [100_000_000, 14_512_345, 14_400_100, 14_400_100],
        [300_000_000, 1_200_000, 1_000_000, 1_000_000],
        [500_000_000, 3_000_000, 999_000, 2_900_000],
        [700_000_000, 2_000_000, 20_000, 20_000],
        [2_100_000_000, 9_000_000, 9_000_000, 9_000_000],
    ],
}


def test_final_line_stalls_carry_their_wake_up_lateness_in_ms() -> None:
    stalls, count = stalls_from_final(FINAL_WITH_WAKES, 2_000_000_000)
    assert stalls == [[0.1, 14.512, 14.4, 14.4], [0.3, 1.2, 1.0, 1.0], [0.5, 3.0, 0.999, 2.9], [0.7, 2.0, 0.02, 0.02]]
    assert count == 4


def test_a_stall_is_a_late_wake_up_from_the_threshold_on() -> None:
    stalls, _ = stalls_from_final(FINAL_WITH_WAKES, 2_000_000_000)
    assert late_wakes(stalls, 1.0) == (2.0, 14.4)
    assert late_wakes(stalls, 20.0) == (0.0, 0.0)
    assert late_wakes([], 1.0) == (0.0, 0.0)
    # Not known: a stall from before wake-up lateness was recorded, or no threshold.
    assert all(math.isnan(x) for x in late_wakes([[0.1, 2.0], [0.3, 1.2, 1.0]], 1.0))
    assert all(math.isnan(x) for x in late_wakes(stalls, math.nan))
    # The 0.5 s stall: no late wake-up, but a sleep that overran by 2.9 ms (a packet ready).
    assert late_sleeps(stalls, 1.0) == 1.0
    assert late_sleeps(stalls, 3.0) == 0.0
    assert math.isnan(late_sleeps([[0.3, 1.2, 1.0]], 1.0))


def test_the_split_in_the_attribution_the_messages_and_compare(tmp_path: Path) -> None:
    from bbrlab.emu.compare import _markdown_stalls, _stall_run_line
    from bbrlab.emu.runner import _warn_stalls
    from bbrlab.errors import ScenarioWarning

    stalls, count = stalls_from_final(FINAL_WITH_WAKES, 2_000_000_000)
    m = stall_drops_of_run(_queue([0, 4, 0, 0, 0, 0, 0]), stalls, count, 1.0)
    assert (m["late_wake_stalls"], m["late_wake_max_ms"], m["stall_max_ms"]) == (2, 14.4, 14.512)
    assert m["stall_drops"] == 4
    line = _stall_run_line(1, 9, m)
    split = "2 of them the machine waking the emulator late from sleep, worst 14.4 ms; 1 more a sleep that returned late with a packet ready"
    assert f"4 stalls ({split}), " in line
    # Without the threshold (or an older run's pairs) the split is left out, not guessed.
    old = stall_drops_of_run(_queue([0, 4]), [[0.1, 2.0]], 1)
    assert math.isnan(old["late_wake_stalls"])
    assert "1 stalls, longest 2.0 ms" in _stall_run_line(1, 9, old)
    none = stall_drops_of_run(_queue([0, 4]), [[0.1, 2.0, 0.5]], 1, 1.0)
    assert "(0 of them the machine waking the emulator late from sleep)" in _stall_run_line(1, 9, none)
    assert "0 stalls, longest 0.0 ms" in _stall_run_line(1, 9, stall_drops_of_run(_queue([0, 4]), [], 0, 1.0))
    rows = [{"t_ns": int(t * 1e9), "queue": "bottleneck", "drops_overflow": 0} for t in (0.1, 0.3, 0.5, 0.7)]
    with pytest.warns(ScenarioWarning) as rec:
        _warn_stalls(stalls, count, 1.0, rows, 2_000_000_000)
    msg = str(rec[0].message)
    assert f"in 4 statistics intervals ({split})" in msg
    t = pd.DataFrame(
        [
            {
                "label": "p",
                "cc": "cubic",
                "emu_retransmits": 9.0,
                "sim_retransmits": 1.0,
                **{f"emu_{k}": v for k, v in m.items()},
            }
        ]
    )
    means = "2.0 of them the machine waking the emulator late from sleep, worst 14.4 ms; 1.0 more a sleep that returned late with a packet ready"
    assert f"4.0 stalls (longest 14.5 ms; {means}); " in _markdown_stalls(t)
