"""The emu backend's results hold to the core's table specs (no root needed): every table and
column of :func:`bbrlab.core.tables.schema`, in the core's order and dtypes, from what a run's
sampler and emulator collect; what the kernel does not report is filled from the spec, so a
column or table the core adds does not break an emu run."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from bbrlab.core import tables
from bbrlab.emu.assemble import EMU_TABLES, _assemble
from bbrlab.emu.sampling import _Sampler
from bbrlab.emu.traffic import FlowState

DURATION_NS = 1_000_000_000
INTERVAL_NS = 100_000_000

#: A connected cubic flow's TCP_INFO: the fields the sampler reads.
TCP_INFO = {
    "snd_mss": 1448,
    "snd_cwnd": 10,
    "unacked": 10,
    "sacked": 0,
    "lost": 0,
    "retrans": 0,
    "pacing_rate": 1_250_000,
    "delivery_rate": 1_000_000,
    "rtt": 20_000,
    "min_rtt": 19_000,
    "total_retrans": 2,
    "snd_ssthresh": 0x7FFFFFFF,
    "ca_state": 0,
    "rwnd_limited": 0,
    "sndbuf_limited": 0,
    "bytes_acked": 100_000,
}


def _queue_row(t_ns: int, queue: str) -> dict[str, Any]:
    """One row of the emulator's statistics file (the columns every emulator writes)."""
    counts = ("occupancy_bytes", "occupancy_pkts", "mean_occupancy_bytes", "max_occupancy_bytes", "drops")
    return {
        "t_ns": t_ns,
        "queue": queue,
        "utilization": 0.5,
        **dict.fromkeys(counts, 0),
        **dict.fromkeys(("random_losses", "ce_marks", "tx_bytes"), 0),
    }


def _raw() -> dict[str, Any]:
    """The raw results of a two-interval, one-flow run: a row before the flow connects, one after."""
    state = FlowState(index=0, cc="cubic", kernel_cc="cubic", port=5001, start_ns=0, stop_ns=None, total_bytes=None)
    sampler = _Sampler([state], INTERVAL_NS, {})
    sampler.sample(0.1, [None])
    state.received = 50_000
    sampler.sample(0.2, [(TCP_INFO, None, None)])
    cfg = {"duration_ns": DURATION_NS, "flows": [{"start_ns": 0, "stop_ns": None, "spec": 0}]}
    queue_rows = [_queue_row(t, q) for t in (INTERVAL_NS, 2 * INTERVAL_NS) for q in ("bottleneck", "bottleneck_rev")]
    return _assemble(cfg, [state], sampler.cols, sampler.rtt_reads(), queue_rows, {}, 0)


def _column(raw: dict[str, Any], table: str, name: str) -> np.ndarray:
    dtype, data = raw[table][name]
    return np.frombuffer(data, dtype=np.dtype(dtype))


def test_every_table_and_column_of_the_specs():
    raw = _raw()
    assert tables.check_raw(raw) == []
    assert len(_column(raw, "timeseries", "t_s")) == 2 and len(_column(raw, "queue", "t_s")) == 4
    for name in set(tables.schema()) - set(EMU_TABLES):
        assert all(len(data) == 0 for _, data in raw[name].values()), name


def test_what_the_kernel_does_not_report_is_filled_from_the_spec():
    raw = _raw()
    # Measured: the second row's cwnd; not reported by the kernel: NaN (floats), −1 (ACK counts).
    assert list(_column(raw, "timeseries", "cwnd_pkts")) == [0, 10]
    assert all(math.isnan(v) for v in _column(raw, "timeseries", "app_limited"))
    assert all(math.isnan(v) for v in _column(raw, "timeseries", "w_max_pkts"))
    assert list(_column(raw, "flows", "acks_sent")) == [-1]


@pytest.fixture
def grown_schema(monkeypatch):
    """The core's table specs with a column added to every table and a new table."""
    specs = dict(tables.schema())
    new_columns = (tables.ColumnSpec("new_ratio", "<f8", "", ""), tables.ColumnSpec("new_count", "<i8", "", ""))
    grown = {name: tables.TableSpec(name, t.description, t.columns + new_columns) for name, t in specs.items()}
    grown["new_table"] = tables.TableSpec("new_table", "", new_columns)
    monkeypatch.setattr(tables, "schema", lambda: grown)
    return grown


def test_a_column_or_table_the_core_adds_needs_nothing_in_the_emu_backend(grown_schema):
    raw = _raw()
    assert tables.check_raw(raw) == []
    assert all(math.isnan(v) for v in _column(raw, "timeseries", "new_ratio"))
    assert list(_column(raw, "flows", "new_count")) == [0]
    assert len(_column(raw, "new_table", "new_ratio")) == 0
