"""What a kernel run will use, planned from the scenario before anything starts.

The core resolves the scenario (``scenario_core.check``); this module turns its config into the
emu backend's terms: flows expanded in flow-id order (:func:`emu_config`), the socket-buffer
sysctls and the dumbbell emulator's link parameters (:func:`emu_settings`, :func:`link_plan`).
Pure functions of the scenario, so they are tested without root (tests/python/test_emu_plan.py)
and the run's summary records exactly what the emulator was given.
"""

from __future__ import annotations

from typing import Any

from ..scenario import Scenario
from ..scenario import core as scenario_core
from .launch import ecn_mode

__all__ = [
    "FRAME_OVERHEAD_BYTES",
    "emu_config",
    "emu_settings",
    "emulator_trace",
    "is_udp",
    "link_plan",
    "path_model_plan",
]

FRAME_OVERHEAD_BYTES = 38  # as the simulator charges per packet (Ethernet framing)
_MB = 1 << 20


def is_udp(f: dict[str, Any]) -> bool:
    """The flow asks for bbrlab's UDP transport (``transport = "udp"``) rather than kernel TCP."""
    return f.get("transport", "tcp") == "udp"


def emu_config(scenario: Scenario) -> dict[str, Any]:
    """The core's resolved config as this backend uses it: flows expanded (``count``) in flow-id
    order, each with its ``spec`` (index of its [[flows]] entry), the bottleneck's limit as
    ``buffer_bytes`` / ``buffer_packets`` (the core's own conversion of a BDP multiple), and, for
    a bottleneck that follows a trace instead of a rate, ``rate_bps`` = the trace's mean rate as
    the core computes it (what the ACK direction runs at without a ``trace_reverse``). On a graph
    (presets expanded) it adds ``routes`` and ``graph_links``, the core's routes and link
    directions, and ``path_buffer``, the limit (bytes, packets) of the link max-min fairness
    fills first."""
    cfg, derived = scenario_core.check(scenario)
    cfg["flows"] = [dict(f, spec=i) for i, f in enumerate(cfg["flows"]) for _ in range(f["count"])]
    if cfg["topology"]["kind"] == "graph":
        # The core's routes (each flow's data and ACK path) and link directions (graph.py).
        cfg["routes"], cfg["graph_links"] = derived.get("routes", []), derived.get("links", [])
        cfg["path_buffer"] = derived["buffer_bytes"], derived["buffer_packets"]
    if cfg["topology"]["kind"] == "dumbbell":
        b = cfg["topology"]["bottleneck"]
        b["buffer_bytes"], b["buffer_packets"] = derived["buffer_bytes"], derived["buffer_packets"]
        if b.get("rate_bps") is None:
            b["rate_bps"] = derived["bottleneck_rate_bps"]
    return cfg


def emu_settings(scenario: Scenario) -> dict[str, Any]:
    """Socket-buffer sysctls and link parameters a run will use (also recorded in the summary)."""
    cfg = emu_config(scenario)
    if cfg["topology"]["kind"] == "graph":
        buf_bytes, buf_packets = cfg["path_buffer"]
    else:
        b = cfg["topology"]["bottleneck"]
        buf_bytes, buf_packets = b["buffer_bytes"], b["buffer_packets"]
    flows = cfg["flows"]
    buf_bytes = buf_bytes if buf_bytes is not None else (buf_packets or 0) * 1538
    path_bytes = scenario.bdp_bytes + buf_bytes
    # Default maxima: 4x (BDP + buffer) so neither socket buffer limits a bulk flow even after
    # the kernel's skb truesize overhead (about 2x payload), with a floor at the stock values.
    def_w = max(4 * _MB, 4 * path_bytes)
    def_r = max(6 * _MB, 4 * path_bytes)
    wmem = []
    for f in flows:
        # The simulator's sndbuf limits unacked+unsent payload; the kernel's tcp_wmem counts skb
        # memory (about twice the payload), hence the factor 2.
        wmax = 2 * f["sndbuf_bytes"] if f["sndbuf_bytes"] else def_w
        wmem.append(f"4096 {min(262144, wmax)} {wmax}")
    rcv = [f["rcvbuf_bytes"] for f in flows if f["rcvbuf_bytes"]]
    rmax = 2 * max(rcv) if rcv else def_r
    rmem = f"4096 {min(131072, rmax)} {rmax}"
    if cfg["topology"]["kind"] == "graph":
        return {"tcp_wmem": wmem, "tcp_rmem": rmem}  # the links: graph.py
    return {"tcp_wmem": wmem, "tcp_rmem": rmem, **link_plan(cfg)}


def link_plan(cfg: dict[str, Any]) -> dict[str, Any]:
    """The emulator's link parameters for resolved config ``cfg`` (dumbbell; flows expanded as
    :func:`emu_config` does): ``forward`` (data direction) and ``reverse`` (ACK direction) as
    ``LinkParams`` JSON, each sender's extra one-way delay, and ``ect1_senders``, the senders
    (flow indices) whose ECT(0) packets the emulator rewrites to ECT(1) (docs/emu.md).

    The bottleneck's ``qdisc`` (a ``QdiscSpec`` dict, e.g. ``{"kind": "codel", ...}``; absent or
    None: drop-tail) is its egress queue on the data direction only: the ACK direction stays a
    drop-tail FIFO with the same buffer and step-ECN threshold, as it always was."""
    b = cfg["topology"]["bottleneck"]
    flows = cfg["flows"]
    link = {
        "rate_bps": b["rate_bps"],
        "delay_ns": b["rtt_ns"] // 2,
        "limit_bytes": b["buffer_bytes"],
        "limit_packets": b["buffer_packets"],
        "ecn_threshold_bytes": b["ecn_threshold_bytes"],
        "ecn_threshold_packets": b["ecn_threshold_packets"],
        "overhead_bytes": FRAME_OVERHEAD_BYTES,
    }
    forward = dict(link, loss=b["loss"])
    if b.get("qdisc") is not None:
        forward["qdisc"] = b["qdisc"]
    fwd_path, rev_path = path_model_plan(b)
    return {
        "forward": forward | fwd_path,
        "reverse": dict(link, loss=b["ack_loss"]) | rev_path,
        "sender_extra_delay_ns": [f["extra_rtt_ns"] // 2 for f in flows],
        "ect1_senders": [i for i, f in enumerate(flows) if ecn_mode(f.get("ecn")) == "ect1"],
    }


def emulator_trace(trace: dict[str, Any]) -> dict[str, Any]:
    """A trace as the emulator takes it (``{"file", "text"}``: the name for messages and the
    format, the contents to parse) from the core config's ``trace``/``trace_reverse``. The one
    place that knows the core's form."""
    return {"file": str(trace["file"]), "text": str(trace["text"])}


def path_model_plan(b: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The bottleneck's path model (issue 30) as the emulator's two directions take it (fields of
    ``LinkParams``, the core config's spec forms): (data direction, ACK direction).

    The data direction gets the ``schedule`` (rate, rtt, loss, buffer), ``trace``, ``policer``,
    ``loss_model``, ``jitter`` and ``reorder``; the ACK direction gets the schedule's ``rtt``
    changes only (each direction's delay becomes rtt / 2, so the RTT changes whole; rate, loss
    and buffer act on the data direction, as in the simulator) and ``trace_reverse``;
    ``aggregation`` goes to the direction it names (``data`` or ``ack``). Absent fields are
    left out (the emulator's defaults: none of them)."""
    fwd: dict[str, Any] = {}
    rev: dict[str, Any] = {}
    schedule = b.get("schedule") or []
    if schedule:
        fwd["schedule"] = [dict(e) for e in schedule]
        rtt_changes = [{"at_ns": e["at_ns"], "rtt_ns": e["rtt_ns"]} for e in schedule if e.get("rtt_ns") is not None]
        if rtt_changes:
            rev["schedule"] = rtt_changes
    for key in ("policer", "loss_model", "jitter", "reorder"):
        if b.get(key) is not None:
            fwd[key] = b[key]
    if b.get("trace") is not None:
        fwd["trace"] = emulator_trace(b["trace"])
        fwd["rate_bps"] = 0  # the trace's rate (the emulator runs at its mean before the run)
    if b.get("trace_reverse") is not None:
        rev["trace"] = emulator_trace(b["trace_reverse"])
        rev["rate_bps"] = 0
    aggregation = b.get("aggregation")
    if aggregation is not None:
        direction = aggregation.get("direction")
        if direction not in ("data", "ack"):
            raise ValueError(f"aggregation direction {direction!r}: expected 'data' or 'ack'")
        (fwd if direction == "data" else rev)["aggregation"] = aggregation
    return fwd, rev
