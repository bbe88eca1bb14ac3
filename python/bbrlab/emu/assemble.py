"""The results of an emu run, assembled into the raw layout of the core's
``Simulation.results()`` (docs/core-api.md) so that results.py and the plots work unchanged: the
flows table (times, goodput, the final TCP_INFO's counters, retransmissions by cause from the
sender namespace's TCP MIB counters (mib.py), RTT statistics over the sampled ``tcpi_rtt``, the
emulator's per-sender drops and CE marks), the timeseries with its phases coded, and the queue
table from the emulator's statistics file. The rest follows from the core's table specs
(:func:`bbrlab.core.tables.schema`), so that a column or table the core adds needs nothing here: a
column the kernel does not report is NaN (0 for integers; −1 for the flows table's ACK counts and
application indices, as their specs define), and a table the emulator cannot fill (:data:`EMU_TABLES` names those it can) is empty."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from ..core import tables
from .mib import retrans_columns
from .rtt import RttReads, rtt_stats
from .sources import KIND_LABELS
from .traffic import FlowState


def _read_stats(path: Path) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    rows: list[dict[str, Any]] = []
    final = None
    if not path.exists():
        return rows, None
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        d = json.loads(line)
        if d.get("final"):
            final = d
        else:
            rows.append(d)
    return rows, final


def _flows_table(
    cfg: dict[str, Any],
    states: list[FlowState],
    rtt_reads: list[RttReads],
    final: dict[str, Any],
    t0: int,
    cc_labels: list[str],
) -> dict[str, tuple[str, bytes]]:
    """The flows table: per flow its times, bytes, goodput, TCP_INFO's final counters, the RTT
    statistics over its samples and the emulator's per-sender drop and CE counts."""
    duration_s = cfg["duration_ns"] / 1e9
    fwd = final.get("forward_per_sender", [])
    fl: dict[str, list[Any]] = {k: [] for k in ("flow", "spec", "cc_code", *tables.FLOW_SUMMARY_COLUMNS)}
    for i, s in enumerate(states):
        f = cfg["flows"][i]
        start_s = f["start_ns"] / 1e9
        if s.total_bytes is not None and s.complete_ns is not None:
            end_s = (s.complete_ns - t0) / 1e9
            fct = end_s - start_s
        else:
            end_s = min(duration_s, f["stop_ns"] / 1e9) if f["stop_ns"] is not None else duration_s
            fct = math.nan
        info = getattr(s, "final_info", None) or {}
        sent = int(info.get("data_segs_out", 0))
        retr = int(info.get("total_retrans", 0))
        pc = fwd[i] if i < len(fwd) else {}
        fl["flow"].append(i)
        fl["spec"].append(f["spec"])
        fl["cc_code"].append(cc_labels.index(s.cc))
        fl["start_s"].append(start_s)
        fl["end_s"].append(end_s)
        fl["fct_s"].append(fct)
        fl["delivered_bytes"].append(s.received)
        active = end_s - start_s
        fl["goodput_bps"].append(s.received * 8 / active if active > 0 else math.nan)
        fl["data_packets_sent"].append(sent)
        fl["retransmits"].append(retr)
        fl["retrans_rate"].append(retr / sent if sent else 0.0)
        fl["lost_packets"].append(int(pc.get("drops", 0)) + int(pc.get("random_losses", 0)))
        for k, v in rtt_stats(rtt_reads[i]).items():
            fl[k].append(v)
        fl["rto_count"].append(int(info.get("total_rto", 0)) if info.get("_len", 0) >= 242 else 0)
        fl["ce_packets"].append(int(pc.get("ce_marks", 0)))
        for k, v in retrans_columns(s.final_mib, info).items():
            fl[k].append(v)
    # What the kernel does not report (offload chunks, RPCs, applications) is NaN / 0 / −1.
    # ACK and fast-path counts are the simulator's; the kernel's sockets do not report them (−1).
    flows = tables.encode("flows", fl, len(states), fill={"app": -1, "query": -1, "acks_sent": -1, "cc_fast_acks": -1})
    return flows


def _timeseries_table(ts: dict[str, list[Any]]) -> tuple[dict[str, tuple[str, bytes]], list[str]]:
    """The timeseries table, its phase names coded in order of appearance; returns it and the names."""
    phases: list[str] = []
    codes = []
    for p in ts.get("phase", []):
        if p not in phases:
            phases.append(p)
        codes.append(phases.index(p))
    ts_cols = {("phase_code" if k == "phase" else k): (codes if k == "phase" else v) for k, v in ts.items()}
    timeseries = tables.encode("timeseries", ts_cols, len(codes))
    return timeseries, phases


# The emulator's queue-discipline columns (crates/emu link.rs, QueueSample): drops by cause
# and the sojourn of the packets that entered service since the run's start, all and DualPI2's
# L4S class (NaN: no packet yet, or a one-class discipline) — cumulative, as the simulator's
# queue table has them. Named as the simulator's columns; a column the core's schema does not
# have is left out.
AQM_COLUMNS = ("drops_overflow", "drops_aqm")

# The emulator's sojourn fields (ns) -> the simulator's queue columns (ms).
SOJOURN_COLUMNS = {
    "sojourn_mean_ns": "sojourn_mean_ms",
    "sojourn_p50_ns": "sojourn_p50_ms",
    "sojourn_p99_ns": "sojourn_p99_ms",
    "l4s_sojourn_p99_ns": "l4s_sojourn_p99_ms",
}

# The path model's columns (issue 30; crates/emu path.rs): the link's rate at the sample time
# (the scheduled constant rate, or the trace's) and the policer's drops (cumulative), named as
# the simulator's queue table names them.
PATH_COLUMNS = ("rate_bps", "policer_drops")

# Integer columns, and what a row of an older emulator (without the column) gives them: 0
# (no drops; no rate known). The others are statistics: NaN.
_COUNT_COLUMNS = ("drops_overflow", "drops_aqm", "policer_drops", "rate_bps")


def _queue_columns(
    qrows: list[dict[str, Any]], schema_columns: set[str], labels: list[str] | None = None
) -> dict[str, list[Any]]:
    """The queue table's columns from the emulator's rows: those every row has, and those of
    :data:`AQM_COLUMNS` and :data:`PATH_COLUMNS` the schema has (absent in an older emulator's
    rows: 0 drops, rate 0; a null or absent sojourn: NaN)."""
    qcols: dict[str, list[Any]] = {
        "t_s": [r["t_ns"] / 1e9 for r in qrows],
        "queue_code": [(labels or QUEUE_LABELS).index(r["queue"]) for r in qrows],
        "utilization": [math.nan if r["utilization"] is None else r["utilization"] for r in qrows],
    }
    for k in (
        "occupancy_bytes",
        "occupancy_pkts",
        "mean_occupancy_bytes",
        "max_occupancy_bytes",
        "drops",
        "random_losses",
        "ce_marks",
        "tx_bytes",
    ):
        qcols[k] = [r[k] for r in qrows]
    for k in (*AQM_COLUMNS, *PATH_COLUMNS):
        if k not in schema_columns:
            continue
        missing = 0 if k in _COUNT_COLUMNS else math.nan
        qcols[k] = [missing if r.get(k) is None else r[k] for r in qrows]
    for ns_key, ms_col in SOJOURN_COLUMNS.items():
        if ms_col in schema_columns:
            qcols[ms_col] = [math.nan if r.get(ns_key) is None else r[ns_key] / 1e6 for r in qrows]
    return qcols


#: The dumbbell's queues; a graph's are its link directions, named as the simulator names them.
QUEUE_LABELS = ["bottleneck", "bottleneck_rev"]


def _queue_table(
    cfg: dict[str, Any], queue_rows: list[dict[str, Any]], labels: list[str] | None = None
) -> tuple[dict[str, tuple[str, bytes]], list[str]]:
    """The queue table from the emulator's statistics rows within the run; returns it and the
    queues' names (``labels``, default :data:`QUEUE_LABELS`)."""
    labels = list(labels or QUEUE_LABELS)
    qrows = [r for r in queue_rows if r["t_ns"] <= cfg["duration_ns"]]
    have = {c.name for c in tables.schema()["queue"].columns}
    queue = tables.encode("queue", _queue_columns(qrows, have, labels), len(qrows))
    return queue, labels


#: The tables the emulator fills (``traffic`` and ``pings`` from the ``[[traffic]]`` sources'
#: processes, sources.py); every other table of the core's schema (per-hop gaps, events, the
#: host model, algorithm state, workload FCTs) is empty on this backend.
EMU_TABLES = ("flows", "timeseries", "queue", "traffic", "pings")


def _assemble(
    cfg: dict[str, Any],
    states: list[FlowState],
    ts: dict[str, list[Any]],
    rtt_reads: list[RttReads],
    queue_rows: list[dict[str, Any]],
    final: dict[str, Any],
    t0: int,
    queue_labels: list[str] | None = None,
    source_tables: tuple[dict[str, list[Any]], dict[str, list[Any]]] | None = None,
) -> dict[str, Any]:
    """The raw results dict, laid out as the core's (docs/core-api.md), from what the run
    collected; ``queue_labels``: the emulator's queue names (default: the dumbbell's);
    ``source_tables``: the ``traffic`` and ``pings`` columns of the run's sources (none: empty)."""
    cc_labels: list[str] = []
    for s in states:
        if s.cc not in cc_labels:
            cc_labels.append(s.cc)
    flows = _flows_table(cfg, states, rtt_reads, final, t0, cc_labels)
    timeseries, phases = _timeseries_table(ts)
    queue, qlabels = _queue_table(cfg, queue_rows, queue_labels)
    delivered_pkts = int(final.get("forward_tx_pkts", 0))
    traffic_cols, ping_cols = source_tables or ({}, {})
    traffic = tables.encode("traffic", traffic_cols, len(traffic_cols.get("source", [])))
    pings = tables.encode("pings", ping_cols, len(ping_cols.get("source", [])))
    filled = dict(zip(EMU_TABLES, (flows, timeseries, queue, traffic, pings)))
    return {
        **{name: filled[name] if name in filled else tables.encode(name, {}, 0) for name in tables.schema()},
        "labels": {"phase": phases, "cc": cc_labels, "queue": qlabels, "host": [], "kind": list(KIND_LABELS)},
        "run": {
            "events": int(final.get("reads", 0)),
            "data_packets_delivered": delivered_pkts,
            "data_packets_sent": int(
                sum(int((getattr(s, "final_info", None) or {}).get("data_segs_out", 0)) for s in states)
            ),
            "sim_end_ns": cfg["duration_ns"],
            "complete": True,
        },
    }
