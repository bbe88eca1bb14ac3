"""The bql-vs-bbr simulations: per part (1 Gbit/s without loss, with 1 % loss, 10 Gbit/s with 0.7 %)
one run per (RTT, algorithm), a single flow through the 80 MB drop-tail bottleneck, its queue sampled
for the time figures and the jitter statistic; each part's summary is written as its CSV."""

from __future__ import annotations

from typing import Any

import pandas as pd

from ..context import StudyContext
from ..scenarios import Dumbbell, Flow, StudyRun, study_run
from .metrics import _summarize
from .plan import BUFFER, CCS, Plan


def _scenario(
    rate_bps: int, rtt_ms: float, cc: str, dur_s: float, loss_pct: float, sample_s: float, tags: dict[str, Any]
) -> StudyRun:
    return study_run(
        "bql-vs-bbr",
        duration_s=dur_s,
        seed=1,
        sample_interval_s=sample_s,
        topology=Dumbbell(rate_bps=rate_bps, rtt_s=rtt_ms / 1e3, buffer=BUFFER, loss=loss_pct / 100),
        flows=[Flow(cc)],
        tags=dict(tags, cc_name=cc, rtt_ms=rtt_ms),
    )


def run_part(
    ctx: StudyContext,
    p: Plan,
    label: str,
    part: str,
    rate_bps: int,
    rtts_ms: tuple[float, ...],
    dur_s: float,
    loss_pct: float,
    csv: str,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One part: every (RTT, algorithm) at ``rate_bps`` with ``loss_pct`` random loss, run as the
    batch ``label`` (its runs tagged ``part``); returns the rows and their summary, which is written
    to ``csv`` in the study's directory."""
    grid = [_scenario(rate_bps, r, cc, dur_s, loss_pct, p.sample_s, {"part": part}) for r in rtts_ms for cc in CCS]
    rows = ctx.run_many(label, grid, keep_timeseries=True)
    summary = _summarize(rows, ctx.series[label], float(rate_bps), dur_s)
    summary.to_csv(ctx.out_dir / csv, index=False)
    return rows, summary
