"""Run a study's scenarios on the embedded simulator in parallel (``bbrlab.engine.parallel``'s pool)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from contextlib import closing
from functools import partial
from typing import Any

import pandas as pd

from .. import run
from ..engine.parallel import imap_unordered
from .scenarios import StudyRun


def _run_one(
    item: StudyRun, keep_timeseries: bool, backend: str = "sim"
) -> tuple[dict[str, Any], pd.DataFrame, pd.DataFrame | None, pd.DataFrame | None, dict[str, Any]]:
    res = run(item.scenario, backend=backend)
    ts = res.timeseries if keep_timeseries else None
    q = res.queue if keep_timeseries else None
    return item.tags, res.flows, ts, q, res.summary


def host_columns(hosts: Sequence[dict[str, Any]]) -> dict[str, float]:
    """A run's host model figures by role (``sender_*``, ``receiver_*``; none without hosts):
    rates summed over the role's hosts, CPU per MB over their payload together, utilisation the
    mean of the hosts and the busiest core of any."""
    out: dict[str, float] = {}
    for role, is_sender in (("sender", 1), ("receiver", 0)):
        hs = [h for h in hosts if h.get("is_sender") == is_sender]
        if not hs:
            continue
        mb = sum(h["payload_bytes"] for h in hs) / 1e6
        cpu_ns = sum(h["cpu_ns_per_mb"] * h["payload_bytes"] / 1e6 for h in hs if h["payload_bytes"] > 0)
        out[f"{role}_cpu_util"] = sum(h["cpu_util"] for h in hs) / len(hs)
        out[f"{role}_cpu_util_max_core"] = max(h["cpu_util_max_core"] for h in hs)
        out[f"{role}_cpu_ns_per_mb"] = cpu_ns / mb if mb > 0 else float("nan")
        for col in ("interrupts_per_s", "data_packets_per_s", "acks_per_s", "timers_per_s"):
            out[f"{role}_{col}"] = sum(h[col] for h in hs)
        out[f"{role}_rx_ring_drops"] = sum(h["rx_ring_drops"] for h in hs)
        out[f"{role}_pause_frames"] = sum(h.get("pause_frames", 0) for h in hs)
        segs = sum(h["data_packets_per_s"] for h in hs)
        key, per = ("chunk_mean_segs", "sender") if is_sender else ("gro_mean_segs", "receiver")
        units = sum(h["data_packets_per_s"] / h[key] for h in hs if h[key] == h[key] and h[key] > 0)
        out[f"{per}_{key}"] = segs / units if units > 0 else float("nan")
    return out


def emu_columns(emu: dict[str, Any] | None, flows: pd.Series) -> dict[str, Any]:
    """A kernel run's own figures (none for a simulator run): the link emulator's lateness
    (``emu_late_mean_ns``, ``emu_late_max_ns``: how far behind its schedule it forwarded, which
    the flows see as delay) and, per flow of ``flows`` (flow indices), the CPU seconds each half
    of a ``transport = "udp"`` flow used (``udp_sender_cpu_s``, ``udp_receiver_cpu_s``; NaN for
    kernel TCP flows)."""
    if emu is None:
        return {}
    lateness = emu.get("emulator") or {}
    udp = {u["flow"]: u for u in (emu.get("udp") or {}).get("flows") or []}  # None: no UDP flow
    out: dict[str, Any] = {
        "emu_late_mean_ns": lateness.get("late_mean_ns", math.nan),
        "emu_late_max_ns": lateness.get("late_max_ns", math.nan),
    }
    for half in ("sender", "receiver"):
        out[f"udp_{half}_cpu_s"] = [udp.get(int(i), {}).get(f"{half}_cpu_s", math.nan) for i in flows]
    return out


def run_scenarios(
    scenarios: Sequence[StudyRun],
    *,
    jobs: int,
    keep_timeseries: bool = False,
    progress: Callable[[int, int], None] | None = None,
    backend: str = "sim",
) -> tuple[pd.DataFrame, list[tuple[dict[str, Any], pd.DataFrame, pd.DataFrame]]]:
    """Returns (per-flow rows with tags and run-level columns, [(tags, timeseries, queue)])."""
    n = len(scenarios)
    results: list[Any] = [None] * n
    if progress:
        progress(0, n)
    done = 0
    # closing(): an error below stops the pool's other runs at once, not when the generator is collected.
    with closing(
        imap_unordered(partial(_run_one, keep_timeseries=keep_timeseries, backend=backend), scenarios, jobs=jobs)
    ) as runs:
        for i, value in runs:
            if isinstance(value, BaseException):
                raise value  # a study needs every run
            results[i] = value
            done += 1
            if progress:
                progress(done, n)
    frames = []
    series = []
    for i, (tags, flows, ts, q, summary) in enumerate(results):
        f = flows.copy()
        f["cc"] = f["cc"].astype(str)
        for k, v in tags.items():
            f[k] = v
        f["run"] = i
        agg = summary.get("aggregate", {})
        f["run_goodput_bps"] = agg.get("goodput_bps")
        f["run_jain"] = agg.get("jain")
        f["queue_mean_bytes"] = agg.get("queue_mean_bytes")
        f["queue_max_bytes"] = agg.get("queue_max_bytes")
        f["wall_s"] = summary["run"]["wall_s"]
        f["data_packets_delivered_run"] = summary["run"]["data_packets_delivered"]
        f["pause_frames_run"] = summary["run"].get("pause_frames", 0)
        f["drops_run"] = summary["run"].get("drops", 0)
        for k, v in host_columns(summary.get("hosts", [])).items():
            f[k] = v
        for k, v in emu_columns(summary["run"].get("emu"), f["flow"]).items():
            f[k] = v
        frames.append(f)
        if keep_timeseries:
            series.append((tags, ts, q))
    rows = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    return rows, series
