"""A run's tables without pandas (bbrlab.results.columns.Table) and the Result built on them: the core's
columns checked as they arrive, written to Parquet as pandas would read them, and the DataFrames a
user gets (and may change) being what is saved."""

from __future__ import annotations

from pathlib import Path

import bbrlab
import numpy as np
import pandas as pd
import pytest
from bbrlab.errors import SimulationError
from bbrlab.results.columns import Table

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _col(values: list, dtype: str) -> tuple[str, bytes]:
    return dtype, np.asarray(values, dtype=dtype).tobytes()


def test_core_columns_become_numbers_and_categoricals() -> None:
    t = Table.from_core(
        "flows",
        {
            "flow": _col([0, 1, 2], "<u4"),
            "cc_code": _col([1, 0, 1], "<u1"),
            "goodput_bps": _col([1.0, np.nan, 3.0], "<f8"),
        },
        {"cc": ["cubic", "bbr1"]},
    )
    assert list(t) == ["flow", "cc", "goodput_bps"] and len(t) == 3
    assert t["cc"].tolist() == ["bbr1", "cubic", "bbr1"]
    frame = t.to_pandas()
    assert frame["cc"].dtype == "category" and list(frame["cc"].cat.categories) == ["cubic", "bbr1"]
    assert frame["flow"].dtype == np.uint32 and np.isnan(frame["goodput_bps"][1])


@pytest.mark.parametrize(
    ("columns", "message"),
    [
        ({"a": ("<zz", b"")}, "unreadable column flows.a"),
        ({"a": _col([1, 2], "<u4"), "b": _col([1.0], "<f8")}, "flows.b with 1 rows, expected 2"),
        ({"cc_code": _col([0, 2], "<u1")}, "outside labels.cc"),
    ],
)
def test_a_malformed_core_column_is_named(columns: dict, message: str) -> None:
    with pytest.raises(SimulationError, match=message):
        Table.from_core("flows", columns, {"cc": ["cubic", "bbr1"]})


def test_parquet_from_columns_reads_back_as_the_pandas_table(tmp_path: Path) -> None:
    t = Table()
    t.set("flow", np.array([0, 1, 0, 1], dtype=np.uint32))
    t.set("cc", np.array([0, 1, -1, 1]), categories=("cubic", "bbr1"))  # -1: missing
    t.set("x", np.array([0.5, np.nan, 2.0, -1.0]))
    t.set("ok", np.array([True, False, True, True]))
    t.set("n", np.array([1, 2, 3, 4], dtype=np.int64), after="flow")
    assert list(t) == ["flow", "n", "cc", "x", "ok"]
    t.write_parquet(tmp_path / "t.parquet")
    back = pd.read_parquet(tmp_path / "t.parquet")
    want = t.to_pandas()
    assert back["cc"].isna().tolist() == [False, False, True, False]
    back["cc"] = back["cc"].cat.set_categories(back["cc"].cat.categories.astype(object))
    pd.testing.assert_frame_equal(back, want)
    assert np.isnan(back["x"][1])  # NaN stays a value, as pandas writes it, not a null


@pytest.fixture
def three_flows(core) -> bbrlab.Result:
    # Three flows sharing the bottleneck: per-flow rows, a queue that fills and drops.
    return bbrlab.run(bbrlab.load_scenario(EXAMPLES / "quick.toml", ["duration=1s", "flows.0.count=3"]))


def test_result_tables_are_built_on_use_and_saved_as_changed(three_flows: bbrlab.Result, tmp_path: Path) -> None:
    r = three_flows
    ts = r.timeseries
    # Each time-series row carries its flow's algorithm (what groupby("cc") needs).
    by_flow = dict(zip(r.flows["flow"], r.flows["cc"].astype(str)))
    assert (ts["cc"].astype(str) == ts["flow"].map(by_flow)).all()
    assert ts.columns.get_loc("cc") == ts.columns.get_loc("flow") + 1
    assert r.timeseries is ts  # built once
    r.flows["note"] = "changed"
    out = r.save(tmp_path / "run", plots=False)
    assert pd.read_parquet(out / "flows.parquet")["note"].tolist() == ["changed"] * len(r.flows)
    assert "cc" in pd.read_parquet(out / "timeseries.parquet")


def test_summary_counts_configured_flows_and_the_main_queue(three_flows: bbrlab.Result) -> None:
    s = three_flows.summary
    flows = three_flows.flows
    assert s["aggregate"]["flows"] == len(flows) == 3
    assert s["aggregate"]["delivered_bytes"] == int(flows["delivered_bytes"].sum())
    q = three_flows.queue[three_flows.queue["queue"] == "bottleneck"]
    assert s["aggregate"]["queue_max_bytes"] == int(q["max_occupancy_bytes"].max())
    assert s["aggregate"]["queue_drops"] == int(q["drops"].iloc[-1])
    assert [f["cc"] for f in s["flows"]] == flows["cc"].astype(str).tolist()
