"""What the emu runner hands the link emulator (no root needed): the bottleneck's queue
discipline on the data direction only, the per-flow ECT(1) rewrite list, the flow ``ecn`` field
in both of its forms, and the emulator's queue-discipline columns passed through to the queue
table."""

from __future__ import annotations

import math
from typing import Any

import pytest
from bbrlab.emu.assemble import AQM_COLUMNS, SOJOURN_COLUMNS, _queue_columns
from bbrlab.emu.launch import ecn_mode
from bbrlab.emu.plan import FRAME_OVERHEAD_BYTES, link_plan


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
    cols = _queue_columns(rows, set(AQM_COLUMNS) | set(SOJOURN_COLUMNS.values()))
    assert cols["drops_overflow"] == [3, 0] and cols["drops_aqm"] == [2, 0]
    # The emulator's ns become the simulator's ms columns.
    assert cols["sojourn_p99_ms"][0] == 4.0 and math.isnan(cols["sojourn_p99_ms"][1])
    assert cols["sojourn_mean_ms"][0] == 1.5 and "sojourn_p99_ns" not in cols
    assert all(math.isnan(x) for x in cols["l4s_sojourn_p99_ms"])
    assert cols["queue_code"] == [0, 1] and cols["drops"] == [5, 5]
    # A schema without them: left out, not an error.
    assert not {*AQM_COLUMNS, *SOJOURN_COLUMNS.values()} & set(_queue_columns(rows, {"drops", "t_s"}))


# --- the path model (issue 30): which direction gets what, in the emulator's JSON form ---

_SCHEDULE = [
    {"at_ns": 5_000_000_000, "rate_bps": 10_000_000, "rtt_ns": None, "loss": None, "buffer_bytes": None},
    {"at_ns": 6_000_000_000, "rate_bps": None, "rtt_ns": 40_000_000, "loss": 0.01, "buffer_bytes": 50_000},
]


def _path_cfg(**path: Any) -> dict[str, Any]:
    cfg = _cfg()
    cfg["topology"]["bottleneck"].update(path)
    return cfg


def test_no_path_model_adds_nothing():
    plan = link_plan(_cfg())
    keys = {"schedule", "trace", "policer", "loss_model", "jitter", "reorder", "aggregation"}
    assert not keys & set(plan["forward"]) and not keys & set(plan["reverse"])


def test_the_data_direction_gets_the_path_model_and_the_ack_direction_the_rtt_changes():
    policer = {"rate_bps": 25_000_000, "burst_bytes": 64_000}
    ge = {"kind": "gilbert_elliott", "p": 0.01, "r": 0.3, "h": 0.5, "k": 0.99}
    jitter = {"max_ns": 2_000_000, "reorder": False}
    reorder = {"probability": 0.01, "displacement": 3, "timeout_ns": 10_000_000}
    plan = link_plan(_path_cfg(schedule=_SCHEDULE, policer=policer, loss_model=ge, jitter=jitter, reorder=reorder))
    fwd, rev = plan["forward"], plan["reverse"]
    assert fwd["schedule"] == _SCHEDULE
    assert (fwd["policer"], fwd["loss_model"], fwd["jitter"], fwd["reorder"]) == (policer, ge, jitter, reorder)
    # Each direction carries half the RTT: the ACK direction follows rtt changes only.
    assert rev["schedule"] == [{"at_ns": 6_000_000_000, "rtt_ns": 40_000_000}]
    assert not {"policer", "loss_model", "jitter", "reorder"} & set(rev)
    assert fwd["rate_bps"] == rev["rate_bps"] == 50_000_000  # no trace: the constant rate
    # A schedule without rtt changes leaves the ACK direction without one.
    assert "schedule" not in link_plan(_path_cfg(schedule=_SCHEDULE[:1]))["reverse"]


@pytest.mark.parametrize(("direction", "gets", "not_"), [("data", "forward", "reverse"), ("ack", "reverse", "forward")])
def test_aggregation_goes_to_the_direction_it_names(direction, gets, not_):
    agg = {"direction": direction, "bytes": 16_000, "timeout_ns": 2_000_000}
    plan = link_plan(_path_cfg(aggregation=agg))
    assert plan[gets]["aggregation"] == agg and "aggregation" not in plan[not_]
    with pytest.raises(ValueError, match="sideways"):
        link_plan(_path_cfg(aggregation=dict(agg, direction="sideways")))


def test_traces_go_one_per_direction_as_file_and_text():
    down = {"file": "traces/cell-down.mahimahi", "text": "1\n1\n2\n"}
    up = {"file": "traces/cell-up.mahimahi", "text": "3\n"}
    # emu_config fills rate_bps with the core's mean rate of the data trace.
    plan = link_plan(_path_cfg(trace=down, trace_reverse=up))
    assert plan["forward"]["trace"] == down and plan["reverse"]["trace"] == up
    assert plan["forward"]["rate_bps"] == plan["reverse"]["rate_bps"] == 0  # the traces' rates
    # Only a data trace: the ACK direction runs at the constant rate emu_config gave (its mean).
    plan = link_plan(_path_cfg(trace=down))
    assert plan["forward"]["trace"] == down and "trace" not in plan["reverse"]
    assert plan["reverse"]["rate_bps"] == 50_000_000


def test_path_columns_pass_through_when_the_schema_has_them():
    rows = [_row("bottleneck", rate_bps=10_000_000, policer_drops=12), _row("bottleneck_rev")]
    cols = _queue_columns(rows, {"rate_bps", "policer_drops"})
    assert cols["rate_bps"] == [10_000_000, 0] and cols["policer_drops"] == [12, 0]
    assert "rate_bps" not in _queue_columns(rows, {"drops"})
