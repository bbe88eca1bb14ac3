"""PNG plots of one run (matplotlib, Agg backend, no pyplot global state).

goodput.png  per-flow goodput over time
cwnd.png     cwnd and bytes in flight per flow (with the BDP for reference)
rtt.png      smoothed and per-interval RTT per flow
queue.png    bottleneck queue occupancy (sampled, mean and max per interval) and drops
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from .figures import new_figure


class Result(Protocol):
    """What the plots read from a run. `bbrlab.Result` has it; naming the shape here instead of
    importing results.py keeps the import one-way (results.py imports this module to save plots)."""

    summary: dict[str, Any]
    timeseries: pd.DataFrame
    queue: pd.DataFrame

__all__ = ["plot_all", "PLOTS"]

PLOTS = ("goodput.png", "cwnd.png", "rtt.png", "queue.png")

# Past this many flows, individual lines are unreadable: draw one line per algorithm instead.
_MAX_LINES = 12


def _figure(rows: int = 1) -> tuple[Figure, Any]:
    fig = new_figure((9, 3.2 * rows), dpi=110, layout="constrained")
    axes = fig.subplots(rows, 1, sharex=True, squeeze=False)[:, 0]
    return fig, axes


def _series(ts: pd.DataFrame, column: str) -> Iterator[tuple[str, pd.Series, pd.Series]]:
    """(label, t_s, values) per flow, or per algorithm (mean over its flows) when there are many."""
    if column not in ts or ts.empty:
        return
    flows = ts["flow"].unique()
    if len(flows) <= _MAX_LINES:
        for flow in flows:
            rows = ts[ts["flow"] == flow]
            cc = str(rows["cc"].iloc[0]) if "cc" in rows else ""
            yield f"flow {flow} ({cc})" if cc else f"flow {flow}", rows["t_s"], rows[column]
    else:
        key = "cc" if "cc" in ts else "flow"
        for cc, rows in ts.groupby(key, observed=True):
            mean = rows.groupby("t_s")[column].mean()
            yield f"{cc} (mean of {rows['flow'].nunique()} flows)", pd.Series(mean.index), pd.Series(mean.to_numpy())


def _finish(fig: Figure, axes: Any, title: str, path: Path) -> Path:
    axes[0].set_title(title, fontsize=10)
    axes[-1].set_xlabel("time (s)")
    for ax in axes:
        ax.grid(True, alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7, loc="best")
    fig.savefig(path)
    return path


def _title(result: Result, what: str) -> str:
    name = result.summary.get("name", "")
    return f"{name}: {what}" if name else what


def plot_goodput(result: Result, path: Path) -> Path:
    fig, axes = _figure()
    for label, t, v in _series(result.timeseries, "goodput_bps"):
        axes[0].plot(t, np.asarray(v, dtype=float) / 1e6, label=label, lw=1)
    rate = (result.summary.get("scenario") or {}).get("bottleneck_rate_bps")
    if rate:
        axes[0].axhline(rate / 1e6, color="grey", ls="--", lw=0.8, label="bottleneck rate")
    axes[0].set_ylabel("goodput (Mbit/s)")
    axes[0].set_ylim(bottom=0)
    return _finish(fig, axes, _title(result, "goodput per flow"), path)


def plot_cwnd(result: Result, path: Path) -> Path:
    fig, axes = _figure(2)
    for label, t, v in _series(result.timeseries, "cwnd_bytes"):
        axes[0].plot(t, np.asarray(v, dtype=float) / 1e3, label=label, lw=1)
    for label, t, v in _series(result.timeseries, "inflight_bytes"):
        axes[1].plot(t, np.asarray(v, dtype=float) / 1e3, label=label, lw=1)
    bdp = (result.summary.get("scenario") or {}).get("bdp_bytes")
    if bdp:
        for ax in axes:
            ax.axhline(bdp / 1e3, color="grey", ls="--", lw=0.8, label="BDP")
    axes[0].set_ylabel("cwnd (KB)")
    axes[1].set_ylabel("bytes in flight (KB)")
    for ax in axes:
        ax.set_ylim(bottom=0)
    return _finish(fig, axes, _title(result, "congestion window and bytes in flight"), path)


def plot_rtt(result: Result, path: Path) -> Path:
    fig, axes = _figure()
    ts = result.timeseries
    if not ts.empty and "srtt_ms" in ts:
        # Before a flow has its first RTT sample its srtt is 0: blank it rather than draw a dive to 0.
        ts = ts.assign(srtt_ms=ts["srtt_ms"].where(ts["srtt_ms"] > 0))
    raw = {label: (t, v) for label, t, v in _series(ts, "rtt_ms")}
    for label, t, v in _series(ts, "srtt_ms"):
        (line,) = axes[0].plot(t, v, label=f"{label} srtt", lw=1.2)
        if label in raw:
            # The per-interval mean of raw samples shows what srtt smooths away (NaN = no sample).
            axes[0].plot(*raw[label], lw=0.6, alpha=0.4, color=line.get_color())
    base = (result.summary.get("scenario") or {}).get("rtt_ms")
    if base is not None:
        axes[0].axhline(base, color="grey", ls="--", lw=0.8, label="base RTT")
    axes[0].set_ylabel("RTT (ms)")
    axes[0].set_ylim(bottom=0)
    return _finish(fig, axes, _title(result, "round-trip time"), path)


def plot_queue(result: Result, path: Path) -> Path:
    fig, axes = _figure(2)
    q = result.queue
    if not q.empty and "queue" in q:
        # The shared queue: the dumbbell's bottleneck or the star's switch port to the aggregator.
        main = next((n for n in ("bottleneck", "tor_to_agg") if (q["queue"] == n).any()), None)
        bq = q[q["queue"] == main] if main is not None else q
        t = bq["t_s"]
        if "max_occupancy_bytes" in bq:
            axes[0].plot(t, bq["max_occupancy_bytes"] / 1e3, lw=0.8, alpha=0.6, label="max in interval")
        if "mean_occupancy_bytes" in bq:
            axes[0].plot(t, bq["mean_occupancy_bytes"] / 1e3, lw=1.2, label="time-weighted mean")
        if "occupancy_bytes" in bq:
            axes[0].plot(t, bq["occupancy_bytes"] / 1e3, lw=0.6, ls=":", label="at sample time")
        if "drops" in bq:
            axes[1].plot(t, bq["drops"], lw=1, label="buffer drops (cumulative)")
        if "random_losses" in bq and bq["random_losses"].any():
            axes[1].plot(t, bq["random_losses"], lw=1, label="random losses (cumulative)")
        if "ce_marks" in bq and bq["ce_marks"].any():
            axes[1].plot(t, bq["ce_marks"], lw=1, label="CE marks (cumulative)")
    buf = (result.summary.get("scenario") or {}).get("buffer_bytes")
    if buf:
        axes[0].axhline(buf / 1e3, color="grey", ls="--", lw=0.8, label="buffer limit")
    axes[0].set_ylabel("bottleneck queue (KB)")
    axes[1].set_ylabel("packets")
    for ax in axes:
        ax.set_ylim(bottom=0)
    return _finish(fig, axes, _title(result, "bottleneck queue"), path)


def plot_all(result: Result, out_dir: Path) -> list[Path]:
    """Draw every plot into ``out_dir``; returns the files written."""
    out_dir = Path(out_dir)
    return [
        plot_goodput(result, out_dir / "goodput.png"),
        plot_cwnd(result, out_dir / "cwnd.png"),
        plot_rtt(result, out_dir / "rtt.png"),
        plot_queue(result, out_dir / "queue.png"),
    ]
