"""Run a study's scenarios on the embedded simulator in parallel (``bbrlab.parallel``'s pool)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import closing
from functools import partial
from typing import Any

import pandas as pd

from .. import run
from ..parallel import imap_unordered
from .scenarios import StudyRun


def _run_one(item: StudyRun, keep_timeseries: bool) -> tuple[dict[str, Any], pd.DataFrame, pd.DataFrame | None, pd.DataFrame | None, dict[str, Any]]:
    res = run(item.scenario)
    ts = res.timeseries if keep_timeseries else None
    q = res.queue if keep_timeseries else None
    return item.tags, res.flows, ts, q, res.summary


def run_scenarios(
    scenarios: Sequence[StudyRun],
    *,
    jobs: int,
    keep_timeseries: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[pd.DataFrame, list[tuple[dict[str, Any], pd.DataFrame, pd.DataFrame]]]:
    """Returns (per-flow rows with tags and run-level columns, [(tags, timeseries, queue)])."""
    n = len(scenarios)
    results: list[Any] = [None] * n
    if progress:
        progress(0, n)
    done = 0
    # closing(): an error below stops the pool's other runs at once, not when the generator is collected.
    with closing(imap_unordered(partial(_run_one, keep_timeseries=keep_timeseries), scenarios, jobs=jobs)) as runs:
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
        frames.append(f)
        if keep_timeseries:
            series.append((tags, ts, q))
    rows = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    return rows, series
