"""What the emu runner hands the link emulator (no root needed): the bottleneck's queue
discipline on the data direction only, the per-flow ECT(1) rewrite list, the flow ``ecn`` field
in both of its forms, and the emulator's queue-discipline columns passed through to the queue
table."""

from __future__ import annotations

import math
from typing import Any

import pytest
from bbrlab.emu.assemble import AQM_COLUMNS, _queue_columns
from bbrlab.emu.runner import FRAME_OVERHEAD_BYTES, ecn_mode, link_plan


def _cfg(qdisc: Any = "absent", ecn: list[Any] | None = None) -> dict[str, Any]:
    """A resolved dumbbell config as emu_config leaves it (flows expanded), built by hand."""
    b: dict[str, Any] = {
        "rate_bps": 50_000_000,
        "rtt_ns": 20_000_000,
        "buffer_bytes": 125_000,
        "buffer_packets": None,
        "ecn_threshold_bytes": 30_000,
        "ecn_threshold_packets": None,
        "loss": 0.01,
        "ack_loss": 0.0,
    }
    if qdisc != "absent":
        b["qdisc"] = qdisc
    flows = [{"extra_rtt_ns": 2_000_000 * i, "ecn": e} for i, e in enumerate(ecn or [False])]
    return {"topology": {"kind": "dumbbell", "bottleneck": b}, "flows": flows}


def test_qdisc_goes_to_the_data_direction_only():
    codel = {"kind": "codel", "target_ns": 5_000_000, "interval_ns": 100_000_000}
    plan = link_plan(_cfg(codel))
    assert plan["forward"]["qdisc"] == codel
    assert "qdisc" not in plan["reverse"]  # the ACK direction stays a drop-tail FIFO
    # Everything else as before: the buffer and threshold in both directions, loss per direction.
    for d, loss in (("forward", 0.01), ("reverse", 0.0)):
        assert plan[d] == {
            "rate_bps": 50_000_000,
            "delay_ns": 10_000_000,
            "limit_bytes": 125_000,
            "limit_packets": None,
            "ecn_threshold_bytes": 30_000,
            "ecn_threshold_packets": None,
            "overhead_bytes": FRAME_OVERHEAD_BYTES,
            "loss": loss,
            **({"qdisc": codel} if d == "forward" else {}),
        }


@pytest.mark.parametrize("qdisc", ["absent", None])
def test_no_qdisc_leaves_the_emulator_its_default(qdisc):
    plan = link_plan(_cfg(qdisc))
    assert "qdisc" not in plan["forward"] and "qdisc" not in plan["reverse"]


def test_ect1_senders_are_the_ect1_flows_in_flow_order():
    plan = link_plan(_cfg(ecn=["ect1", True, "off", False, "ect0", "ect1", None]))
    assert plan["ect1_senders"] == [0, 5]
    assert plan["sender_extra_delay_ns"] == [1_000_000 * i for i in range(7)]
    assert link_plan(_cfg(ecn=[True, "ect0"]))["ect1_senders"] == []


def test_ecn_field_in_both_forms():
    assert [ecn_mode(v) for v in (False, None, True, "off", "ect0", "ect1")] == [
        "off",
        "off",
        "ect0",
        "off",
        "ect0",
        "ect1",
    ]
    with pytest.raises(ValueError, match="ect2"):
        ecn_mode("ect2")


def _row(queue: str, **extra: Any) -> dict[str, Any]:
    base = {
        "queue": queue,
        "t_ns": 100_000_000,
        "occupancy_bytes": 3076,
        "occupancy_pkts": 2,
        "mean_occupancy_bytes": 1500.5,
        "max_occupancy_bytes": 4614,
        "drops": 5,
        "random_losses": 1,
        "ce_marks": 7,
        "tx_bytes": 10_000,
        "utilization": 0.5,
    }
    return base | extra


def test_aqm_columns_pass_through_when_the_schema_has_them():
    aqm = {
        "drops_overflow": 3,
        "drops_aqm": 2,
        "sojourn_mean_ns": 1.5e6,
        "sojourn_p50_ns": 1.2e6,
        "sojourn_p99_ns": 4.0e6,
        "l4s_sojourn_mean_ns": None,
        "l4s_sojourn_p50_ns": None,
        "l4s_sojourn_p99_ns": None,
    }
    rows = [_row("bottleneck", **aqm), _row("bottleneck_rev")]  # the second: an older emulator
    cols = _queue_columns(rows, set(AQM_COLUMNS))
    assert cols["drops_overflow"] == [3, 0] and cols["drops_aqm"] == [2, 0]
    assert cols["sojourn_p99_ns"][0] == 4.0e6 and math.isnan(cols["sojourn_p99_ns"][1])
    assert all(math.isnan(x) for x in cols["l4s_sojourn_p99_ns"])
    assert cols["queue_code"] == [0, 1] and cols["drops"] == [5, 5]
    # A schema without them (before the core's queue table gains them): left out, not an error.
    assert not set(AQM_COLUMNS) & set(_queue_columns(rows, {"drops", "t_s"}))
