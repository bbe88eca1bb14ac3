"""The slides' metrics and how the report writes them: `_window_metrics` turns one run's 100 ms
time series (per-flow and bottleneck-queue counters, polled as `ss` would) into throughput,
retransmission rate, srtt average and p95, CE rate, Jain's index, drops and mean queue over the
measurement window; `_chunk_mean` averages offload chunks over a run's flows; `METRICS` lists the
sweep's metrics with their titles, figure files and units; `_val`, `_fmt`, `_us` and `_ns_text`
look a metric up and format it for tables and prose."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ...results.results import jain_index
from ..analysis import value
from ..report import MSS, WIRE


def _us(t_s: float) -> str:
    return f"{t_s * 1e6:g} µs"


def _window_metrics(ts: pd.DataFrame, q: pd.DataFrame, warm_s: float, end_s: float) -> dict[str, float]:
    """The slides' metrics over [warm_s, end_s] from the 100 ms time series (as `ss` polling)."""
    eps = 1e-6
    t0 = ts[(ts["t_s"] - warm_s).abs() < eps]
    t1 = ts[(ts["t_s"] - end_s).abs() < eps]
    if not len(t0) or not len(t1):  # fall back to the nearest samples
        t0 = ts[ts["t_s"] == ts["t_s"][ts["t_s"] >= warm_s - eps].min()]
        t1 = ts[ts["t_s"] == ts["t_s"].max()]
    a = t0.set_index("flow")
    b = t1.set_index("flow")
    span = float(b["t_s"].iloc[0] - a["t_s"].iloc[0])
    d_bytes = (b["delivered_bytes"] - a["delivered_bytes"]).clip(lower=0)
    d_retr = (b["retransmits"] - a["retransmits"]).clip(lower=0)
    goodputs = d_bytes * 8 / span
    sent = d_bytes.sum() / MSS + d_retr.sum()
    win = ts[(ts["t_s"] > warm_s + eps) & (ts["t_s"] <= end_s + eps)]
    srtt = win["srtt_ms"].to_numpy()
    srtt = srtt[np.isfinite(srtt) & (srtt > 0)]
    bq = q[q["queue"] == "bottleneck"] if "queue" in q else q
    qa = bq[(bq["t_s"] - a["t_s"].iloc[0]).abs() < eps]
    qb = bq[(bq["t_s"] - b["t_s"].iloc[0]).abs() < eps]
    d_ce = float(qb["ce_marks"].iloc[0] - qa["ce_marks"].iloc[0])
    d_pkts = float(qb["tx_bytes"].iloc[0] - qa["tx_bytes"].iloc[0]) / WIRE
    d_drops = float(qb["drops"].iloc[0] - qa["drops"].iloc[0])
    qwin = bq[(bq["t_s"] > warm_s + eps) & (bq["t_s"] <= end_s + eps)]
    g = goodputs.to_numpy()
    agg_inflight = win.groupby("t_s")["inflight_bytes"].sum() / MSS if len(win) else pd.Series(dtype=float)
    return {
        "inflight_pkts": float(agg_inflight.mean()) if len(agg_inflight) else math.nan,
        "cwnd_mean_pkts": float(win["cwnd_pkts"].mean()) if len(win) else math.nan,
        "throughput_bps": float(d_bytes.sum() * 8 / span),
        "retrans_rate": float(d_retr.sum() / sent) if sent > 0 else 0.0,
        "rtt_avg_ms": float(srtt.mean()) if len(srtt) else math.nan,
        "rtt_p95_ms": float(np.percentile(srtt, 95)) if len(srtt) else math.nan,
        # marks are counted on arrival, bytes on departure: clip the window-edge mismatch
        "ce_rate": min(1.0, d_ce / d_pkts) if d_pkts > 0 else 0.0,
        "jain": jain_index(g),
        "drops": d_drops,
        "queue_mean_kb": float(qwin["mean_occupancy_bytes"].mean() / 1e3) if len(qwin) else math.nan,
        "window_s": span,
    }


def _chunk_mean(rows: pd.DataFrame, col: str = "tso_burst_mean_segs") -> float:
    b = rows["tso_bursts"].astype(float)
    return float((rows[col] * b).sum() / b.sum()) if b.sum() > 0 else math.nan


METRICS = [
    ("retrans_rate", "retransmission rate", "retransmission_rate.png", 100.0, "%"),
    ("rtt_avg_ms", "average srtt (ms, ss-style 100 ms samples)", "average_rtt.png", 1.0, "ms"),
    ("rtt_p95_ms", "95th percentile srtt (ms)", "p95_rtt.png", 1.0, "ms"),
    ("throughput_bps", "throughput (Gbit/s)", "throughput.png", 1e-9, "Gbit/s"),
    ("ce_rate", "CE mark rate", "ce_rate.png", 1.0, ""),
    ("jain", "Jain fairness index", "jain_fairness.png", 1.0, ""),
]


def _fmt(v: float, col: str) -> str:
    if v != v:
        return "–"
    if col == "retrans_rate":
        return f"{100 * v:.3f} %"
    if col == "throughput_bps":
        return f"{v / 1e9:.2f}"
    if col in ("ce_rate", "jain"):
        return f"{v:.3f}"
    return f"{v:.3f}"


def _val(df: pd.DataFrame, cc: str, n: int, col: str) -> float:
    return value(df, col, algo=cc, num_flows=n)


def _ns_text(ns: list[int]) -> str:
    return ", ".join(str(n) for n in ns)
