"""What `bbrlab run` prints and summary.json holds: per-flow and aggregate figures from the
core's tables (goodput against the payload capacity, Jain's index over bulk flows, FCT buckets,
transperf's metrics), with the helpers they share (`jain_index`, `payload_fraction`)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core.tables import FLOW_SUMMARY_COLUMNS
from .columns import Table

if TYPE_CHECKING:
    import pandas as pd

    from ..scenario import Scenario

__all__ = [
    "jain_index",
    "payload_fraction",
    "decode_table",
    "summarize",
    "add_graph_columns",
    "fct_buckets",
    "TCP_IP_HEADER_BYTES",
    "ETHERNET_OVERHEAD_BYTES",
    "GRAPH_FLOW_COLUMNS",
]


def jain_index(values: Any) -> float:
    """Jain's fairness index (sum x)^2 / (n * sum x^2): 1 = equal shares, 1/n = one flow takes all.

    NaN when undefined (no flows, or every flow got nothing).
    """
    x = np.asarray(values, dtype=float)
    x = x[np.isfinite(x)]
    if x.size == 0:
        return math.nan
    denom = x.size * float(np.sum(x * x))
    if denom == 0:
        return math.nan
    return float(np.sum(x)) ** 2 / denom


#: What a full segment carries besides its MSS of payload, as the simulator charges it
#: (crates/transport/src/lib.rs): 52 B of TCP/IPv4 headers with timestamps, then 38 B of Ethernet
#: framing (preamble, header, FCS, inter-frame gap).
TCP_IP_HEADER_BYTES = 52
ETHERNET_OVERHEAD_BYTES = 38


def payload_fraction(mss_bytes: int) -> float:
    """The share of a link's rate that full segments of ``mss_bytes`` carry as payload: the
    ceiling of goodput (1448 -> 1448 / 1538 = 94.1 %)."""
    return mss_bytes / (mss_bytes + TCP_IP_HEADER_BYTES + ETHERNET_OVERHEAD_BYTES)


def _flow_specs(scenario: Scenario | None) -> list[dict[str, Any]]:
    """Per ``[[flows]]`` entry: whether its flows are bulk (no ``bytes``, no ``rpc``), use ECN,
    and their MSS; empty without a scenario."""
    if scenario is None:
        return []
    return [
        {
            "bulk": f.get("bytes") is None and f.get("rpc") is None and f.get("app") is None,
            "ecn": bool(f.get("ecn")),
            "mss_bytes": int(f["mss_bytes"]),
        }
        for f in scenario.resolve().get("flows", [])
    ]


#: What a graph adds to the flows table (from the core's routes, `topology/routing.rs`): the
#: hosts, the data path (link names joined by ">") and the max-min fair share as goodput.
GRAPH_FLOW_COLUMNS = ("src", "dst", "path", "maxmin_goodput_bps")


def add_graph_columns(flows: Table, scenario: Scenario) -> None:
    """On a graph: each flow's ``src``, ``dst``, ``path`` (categoricals) and
    ``maxmin_goodput_bps``, beside the measured ``goodput_bps``."""
    routes = scenario.derived().get("routes") if scenario.is_graph else None
    if not routes or len(routes) != len(flows):
        return
    for col in ("src", "dst", "path"):
        labels = sorted({r[col] for r in routes})
        codes = np.array([labels.index(r[col]) for r in routes], dtype=np.int64)
        flows.set(col, codes, categories=labels, after="cc" if "cc" in flows else None)
    share = np.array([r["maxmin_goodput_bps"] for r in routes], dtype=float)
    flows.set("maxmin_goodput_bps", share, after="goodput_bps" if "goodput_bps" in flows else None)


def decode_table(name: str, columns: dict[str, Any], labels: dict[str, list[str]]) -> pd.DataFrame:
    """Wrap the core's ``{column: (dtype, bytes)}`` as a DataFrame; ``*_code`` become categoricals."""
    return Table.from_core(name, columns, labels).to_pandas()


def _json_clean(value: Any) -> Any:
    """NaN/inf -> null and numpy scalars -> Python, so summary.json is strict JSON."""
    if isinstance(value, dict):
        return {str(k): _json_clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_clean(v) for v in value]
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating, float)):
        f = float(value)
        return f if math.isfinite(f) else None
    if isinstance(value, np.bool_):
        return bool(value)
    return value


def summarize(
    scenario: Scenario | None,
    flows: Table,
    queue: Table,
    run: dict[str, Any],
    *,
    duration_s: float,
    app_events: Table | None = None,
    hosts: Table | None = None,
    traffic: Table | None = None,
    fct: Table | None = None,
) -> dict[str, Any]:
    """Per-flow and aggregate figures (what `bbrlab run` prints and summary.json holds); with the
    host model, one entry per host (``hosts``: its row of the hosts table)."""
    per_flow = _flow_entries(flows)

    def total(col: str) -> int:
        return int(flows[col].sum()) if col in flows else 0

    delivered, sent, retrans = total("delivered_bytes"), total("data_packets_sent"), total("retransmits")
    specs = _flow_specs(scenario)
    for entry in per_flow:
        spec = specs[entry["spec"]] if 0 <= entry.get("spec", -1) < len(specs) else None
        if spec is not None:
            entry["bulk"] = spec["bulk"]
            entry["ecn"] = spec["ecn"]
    # Fairness among the bulk flows: a sized transfer, an RPC stream or an application transfer
    # (short and sequential) is not after an equal share of the link, and counting it would say
    # "unfair" of flows that were never competing for the same thing.
    bulk = [e["goodput_bps"] for e in per_flow if e.get("bulk", e.get("spec", 0) >= 0) and "goodput_bps" in e]
    jain = jain_index(bulk) if bulk else math.nan
    aggregate: dict[str, Any] = {
        # All flows' bytes over the whole run: the useful throughput of the bottleneck.
        "goodput_bps": delivered * 8 / duration_s if duration_s > 0 else math.nan,
        "delivered_bytes": delivered,
        "jain": jain,
        "jain_flows": len(bulk),
        "retransmits": retrans,
        "retrans_rate": retrans / sent if sent else 0.0,
        "flows": len(flows),
    }
    derived = scenario.derived() if scenario is not None else None
    # A graph's flows share no one link: their goodput is not a share of one (the flows table
    # has each flow's max-min share instead).
    if derived is not None and duration_s > 0 and scenario is not None and not scenario.is_graph:
        aggregate["link_share"] = aggregate["goodput_bps"] / derived["bottleneck_rate_bps"]
        mss = {spec["mss_bytes"] for spec in specs}
        if len(mss) == 1:  # one MSS: the link's payload capacity is one number
            aggregate["payload_capacity_bps"] = derived["bottleneck_rate_bps"] * payload_fraction(mss.pop())
            aggregate["payload_share"] = aggregate["goodput_bps"] / aggregate["payload_capacity_bps"]
    if len(queue) and "queue" in queue:
        bq = queue.rows(queue["queue"] == (derived["main_queue"] if derived else "bottleneck"))
        if len(bq):
            aggregate.update(_queue_aggregate(bq))
    if app_events is not None and len(app_events) and "response_time_s" in app_events:
        rt = np.asarray(app_events["response_time_s"], dtype=float)
        aggregate["queries"] = int(rt.size)
        aggregate["query_mean_s"] = float(rt.mean())
        aggregate["query_p95_s"] = float(np.percentile(rt, 95))
        aggregate["query_max_s"] = float(rt.max())
    summary: dict[str, Any] = {"name": scenario.name if scenario is not None else run.get("name", "")}
    host_rows = _host_summaries(hosts) if hosts is not None else []
    if scenario is not None and derived is not None:
        summary["scenario"] = _scenario_entry(scenario, derived)
    summary["run"] = run
    summary["flows"] = per_flow
    summary["aggregate"] = aggregate
    if host_rows:
        summary["hosts"] = host_rows
    if traffic is not None and len(traffic):
        summary["traffic"] = _rows(traffic)
    if fct is not None and len(fct):
        summary["fct"] = fct_buckets(fct)
    return _json_clean(summary)


def _flow_entries(flows: Table) -> list[dict[str, Any]]:
    """One entry per row of the flows table: its id, algorithm and summary columns."""
    per_flow = []
    cc = flows["cc"] if "cc" in flows else None  # noqa: SIM401  # a Table, not a dict: no .get()
    summary_columns = [c for c in FLOW_SUMMARY_COLUMNS if c in flows]
    for i in range(len(flows)):
        entry: dict[str, Any] = {"flow": int(flows["flow"][i]), "cc": str(cc[i]) if cc is not None else ""}
        if "spec" in flows:
            entry["spec"] = int(flows["spec"][i])
        for col in summary_columns:
            entry[col] = flows[col][i].item()
        for col in GRAPH_FLOW_COLUMNS:
            if col in flows:
                value = flows[col][i]
                entry[col] = value.item() if hasattr(value, "item") else str(value)
        per_flow.append(entry)
    return per_flow


def _queue_aggregate(bq: Table) -> dict[str, Any]:
    """The main queue's figures over the run, from its rows of the queue table."""
    out: dict[str, Any] = {}
    if "utilization" in bq:
        out["bottleneck_utilization"] = float(bq["utilization"].mean())
    if "mean_occupancy_bytes" in bq:
        out["queue_mean_bytes"] = float(bq["mean_occupancy_bytes"].mean())
    if "max_occupancy_bytes" in bq:
        out["queue_max_bytes"] = int(bq["max_occupancy_bytes"].max())
    if "drops" in bq:
        out["queue_drops"] = int(bq["drops"][-1])
    if "ce_marks" in bq:
        out["queue_ce_marks"] = int(bq["ce_marks"][-1])
    if "drops_aqm" in bq:
        out["queue_drops_aqm"] = int(bq["drops_aqm"][-1])
    # Measured by a queue discipline only (qdisc); NaN on the native drop-tail: left out.
    for col in ("sojourn_mean_ms", "sojourn_p50_ms", "sojourn_p99_ms", "l4s_sojourn_p99_ms"):
        if col in bq and math.isfinite(float(bq[col][-1])):
            out[f"queue_{col}"] = float(bq[col][-1])
    return out


def _scenario_entry(scenario: Scenario, derived: dict[str, Any]) -> dict[str, Any]:
    """The scenario's shape in summary.json: its topology's main figures."""
    if scenario.is_star:
        t = scenario.topology
        return {
            "duration_s": scenario.duration / 1e9,
            "topology": "star",
            "bottleneck_rate_bps": derived["bottleneck_rate_bps"],
            "rtt_ms": derived["base_rtt_ns"] / 1e6,
            "bdp_bytes": derived["bdp_bytes"],
            "buffer_bytes": derived["buffer_bytes"],
            "workers": t.workers,
            "lossless": t.lossless,
            "forwarding": t.forwarding,
            "flows": scenario.flow_count,
            "apps": len(scenario.apps),
        }
    if scenario.is_graph:
        return {
            "duration_s": scenario.duration / 1e9,
            "topology": "graph",
            # The link max-min fairness fills first (the tightest share per flow).
            "bottleneck": derived["main_queue"],
            "bottleneck_rate_bps": derived["bottleneck_rate_bps"],
            "rtt_ms": derived["base_rtt_ns"] / 1e6,
            "bdp_bytes": derived["bdp_bytes"],
            "buffer_bytes": derived["buffer_bytes"],
            "buffer_packets": derived["buffer_packets"],
            "nodes": len(scenario.topology.nodes),
            "links": len(scenario.topology.links),
            "flows": scenario.flow_count,
        }
    b = scenario.topology.bottleneck
    return {
        "duration_s": scenario.duration / 1e9,
        "bottleneck_rate_bps": b.rate,
        "rtt_ms": b.rtt / 1e6,
        "bdp_bytes": derived["bdp_bytes"],
        "buffer_bytes": derived["buffer_bytes"],
        "buffer_packets": derived["buffer_packets"],
        "loss": b.loss,
        "flows": scenario.flow_count,
    }


#: Flow-size buckets of the FCT summary (upper edges, bytes): the data-center papers' short
#: (< 100 KB), medium and long (> 10 MB) flows, with the short ones split at 10 KB.
FCT_BUCKET_EDGES = (10_000, 100_000, 1_000_000, 10_000_000)


def fct_buckets(fct: Table) -> list[dict[str, Any]]:
    """Slowdown and FCT by flow-size bucket (p50, p99, count): summary.json's ``fct``."""
    size = np.asarray(fct["size_bytes"], dtype=np.int64)
    slow = np.asarray(fct["slowdown"], dtype=float)
    t = np.asarray(fct["fct_s"], dtype=float)
    edges = (0, *FCT_BUCKET_EDGES, None)
    out = []
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        sel = (size > lo) & (size <= hi) if hi is not None else size > lo
        if not sel.any():
            continue
        out.append(
            {
                "bucket": f"({lo}, {hi}] B" if hi is not None else f"> {lo} B",
                "flows": int(sel.sum()),
                "slowdown_p50": float(np.percentile(slow[sel], 50)),
                "slowdown_p99": float(np.percentile(slow[sel], 99)),
                "fct_p50_s": float(np.percentile(t[sel], 50)),
                "fct_p99_s": float(np.percentile(t[sel], 99)),
            }
        )
    return out


def _rows(t: Table) -> list[dict[str, Any]]:
    """A small table as one dict per row (summary.json's ``traffic``)."""
    return [{c: (str(t[c][i]) if t[c].dtype == object else t[c][i].item()) for c in t} for i in range(len(t))]


def _host_summaries(hosts: Table) -> list[dict[str, Any]]:
    """The hosts table as one dict per host (summary.json's ``hosts``)."""
    if not len(hosts) or "host" not in hosts:
        return []
    rows = []
    for i in range(len(hosts)):
        entry: dict[str, Any] = {"host": str(hosts["host"][i])}
        for col in hosts:
            if col != "host":
                entry[col] = hosts[col][i].item()
        rows.append(entry)
    return rows
