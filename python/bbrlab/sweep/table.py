"""The points table of a sweep: one row per point and seed, written as points.parquet and points.csv.

Columns, in order: ``point`` (the run's id, its directory under runs/), one column per axis named
by its path (the value as a string, as given), ``seed``, ``run_dir`` (relative to the sweep
directory), the run's aggregate metrics (:data:`AGGREGATE`, then the query metrics when a run has
them), per-algorithm metrics ``<cc>.<metric>`` (:data:`PER_CC`, algorithms in name order), and
``error`` (empty unless the run failed; a failed run's metrics are empty).

Every metric is read from the run's summary.json, never from the live result, so a run made now, a
cached one and one made on a Ray worker give the same row.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from ..results.rundir import configured_flows

__all__ = ["AGGREGATE", "PER_CC", "WALL_CLOCK", "run_metrics", "points_frame", "write_points"]

#: Aggregate metrics, from summary.json's "aggregate" (rtt_*: see :func:`run_metrics`).
AGGREGATE = (
    "goodput_bps",
    "link_share",
    "jain",
    "retransmits",
    "retrans_rate",
    "queue_mean_bytes",
    "rtt_mean_ms",
    "rtt_p95_ms",
)
QUERY = ("queries", "query_mean_s", "query_p95_s", "query_max_s")
#: Per algorithm: goodput and share of the total, mean over its flows of each flow's RTT figures, retransmits.
PER_CC = ("goodput_bps", "share", "rtt_mean_ms", "rtt_p95_ms", "retransmits")
#: Columns that measure the machine, not the network: they differ between two runs of one scenario.
WALL_CLOCK = ("wall_s",)


def _num(x: Any) -> float:
    """A summary value as a float (null, i.e. NaN or absent, as NaN)."""
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else math.nan


def _mean(values: Sequence[float]) -> float:
    finite = [v for v in values if math.isfinite(v)]
    return sum(finite) / len(finite) if finite else math.nan


def _rtt(flows: Sequence[dict[str, Any]]) -> tuple[float, float]:
    """Mean over flows of each flow's mean and p95 RTT. The configured flows count, not the short
    transfers of a query app (thousands of them would outvote the flows), unless there are only those."""
    configured = configured_flows(list(flows)) or list(flows)
    return (
        _mean([_num(f.get("rtt_mean_ms")) for f in configured]),
        _mean([_num(f.get("rtt_p95_ms")) for f in configured]),
    )


def run_metrics(summary: dict[str, Any]) -> dict[str, float]:
    """The metric columns of one run, from its summary.json.

    Per-algorithm goodput is the algorithm's delivered bytes over the run's duration, the way the
    aggregate goodput is computed, so the algorithms' goodputs add up to the aggregate and
    ``share`` is each one's fraction of it.
    """
    agg = summary.get("aggregate", {})
    flows = summary.get("flows", [])
    row: dict[str, float] = {k: _num(agg.get(k)) for k in AGGREGATE[:6]}
    row["rtt_mean_ms"], row["rtt_p95_ms"] = _rtt(flows)
    for k in QUERY:
        if k in agg:
            row[k] = _num(agg[k])
    row["wall_s"] = _num(summary.get("run", {}).get("wall_s"))
    duration_s = _num(summary.get("scenario", {}).get("duration_s"))
    total_bytes = sum(_num(f.get("delivered_bytes")) for f in flows)
    for cc in sorted({str(f.get("cc", "")) for f in flows}):
        mine = [f for f in flows if str(f.get("cc", "")) == cc]
        delivered = sum(_num(f.get("delivered_bytes")) for f in mine)
        row[f"{cc}.goodput_bps"] = delivered * 8 / duration_s if duration_s > 0 else math.nan
        row[f"{cc}.share"] = delivered / total_bytes if total_bytes > 0 else math.nan
        row[f"{cc}.rtt_mean_ms"], row[f"{cc}.rtt_p95_ms"] = _rtt(mine)
        row[f"{cc}.retransmits"] = sum(_num(f.get("retransmits")) for f in mine)
    return row


def read_metrics(run_dir: Path) -> dict[str, float]:
    return run_metrics(json.loads((run_dir / "summary.json").read_text(encoding="utf-8")))


def points_frame(axes: Sequence[str], rows: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """The table from rows holding point, the axes, seed, run_dir, metrics and error."""
    base = ["point", *axes, "seed", "run_dir"]
    metric_cols: list[str] = []
    for r in rows:
        metric_cols += [k for k in r if k not in base and k != "error" and k not in metric_cols]
    per_cc = sorted(
        (c for c in metric_cols if "." in c), key=lambda c: (c.rsplit(".", 1)[0], PER_CC.index(c.rsplit(".", 1)[1]))
    )
    plain = [c for c in (*AGGREGATE, *QUERY, *WALL_CLOCK) if c in metric_cols]
    frame = pd.DataFrame([{**r} for r in rows], columns=[*base, *plain, *per_cc, "error"])
    for a in axes:
        frame[a] = frame[a].astype(str)
    frame["seed"] = frame["seed"].astype("int64")
    for c in (*plain, *per_cc):
        frame[c] = frame[c].astype("float64")
    frame["error"] = frame["error"].fillna("").astype(str)
    frame["run_dir"] = frame["run_dir"].fillna("").astype(str)
    return frame


def write_points(frame: pd.DataFrame, out: Path) -> Path:
    """points.parquet and points.csv in ``out`` (each written to a temporary name and renamed)."""
    for name, write in (
        ("points.parquet", lambda p: frame.to_parquet(p, engine="pyarrow", index=False)),
        ("points.csv", lambda p: frame.to_csv(p, index=False)),
    ):
        tmp = out / f".{name}.tmp"
        write(tmp)
        tmp.replace(out / name)
    return out / "points.parquet"
