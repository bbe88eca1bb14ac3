"""The wan-loss simulations, one run per point and a CSV per part: A, the blog's grid (RTT × loss ×
algorithm, the sender's NIC the 2.5 Gbit/s bottleneck behind netem's queue, with the blog's host
buffers and with unlimited ones); B, the BBR patch series' 10 Gbit/s example (full study only); C,
the random-loss sweep at 100 Mbit/s. Each part draws its figures once its runs are in."""

from __future__ import annotations

from typing import Any

import pandas as pd

from ..context import StudyContext
from ..scenarios import Dumbbell, Flow, QueueLimit, StudyRun, study_run
from .figures import _heatmaps, _sweep_plot
from .plan import (
    BLOG_CEILING_BPS,
    BLOG_RATE_BPS,
    BLOG_RCVBUF_BYTES,
    NETEM_LIMIT,
    SWEEP_RATE_BPS,
    SWEEP_RTT_MS,
    Plan,
)


def _scenario(
    name: str,
    rate_bps: int,
    rtt_ms: float,
    loss_pct: float,
    cc: str,
    dur_s: float,
    *,
    rcvbuf_bytes: int | None,
    buffer: QueueLimit,
    tags: dict[str, Any],
    host_nic_is_bottleneck: bool = False,
) -> StudyRun:
    return study_run(
        name,
        duration_s=dur_s,
        seed=1,
        sample_interval_s=0.5,
        topology=Dumbbell(
            rate_bps=rate_bps,
            rtt_s=rtt_ms / 1e3,
            buffer=buffer,
            loss=loss_pct / 100,
            access_rate_bps=rate_bps if host_nic_is_bottleneck else None,
        ),
        flows=[Flow(cc, rcvbuf_bytes=rcvbuf_bytes)],
        tags=tags,
    )


def _run_grid(ctx: StudyContext, p: Plan, ccs: list[str]) -> pd.DataFrame:
    """Part A: the blog's grid, with the blog's host buffers and with unlimited buffers (and its heatmaps)."""
    grid = [
        _scenario(
            "wan-loss",
            BLOG_RATE_BPS,
            rtt,
            loss,
            cc,
            p.dur_s,
            rcvbuf_bytes=rcvbuf,
            buffer=NETEM_LIMIT,
            host_nic_is_bottleneck=True,
            tags={"buffers": mode, "rtt_ms": rtt, "loss_pct": loss},
        )
        for mode, rcvbuf in (("blog", BLOG_RCVBUF_BYTES), ("unlimited", None))
        for rtt in p.rtts_ms
        for loss in p.losses_pct
        for cc in ccs
    ]
    a = ctx.run_many("grid", grid)
    a.to_csv(ctx.out_dir / "grid.csv", index=False)
    for mode in ("blog", "unlimited"):
        _heatmaps(a, ccs, mode, ctx.out_dir / f"heatmap-{mode}.png", BLOG_CEILING_BPS)
    return a


def _run_patch(ctx: StudyContext, p: Plan) -> pd.DataFrame | None:
    """Part B: the BBR patch series' 10G example (full study only: 30 s at 10 Gbit/s); None if not run."""
    if not p.patch:
        return None
    pb = [
        _scenario(
            "patch-10g",
            10_000_000_000,
            100,
            1.0,
            cc,
            30,
            rcvbuf_bytes=None,
            buffer=QueueLimit.of_bdp(1),
            tags={"part": "patch"},
        )
        for cc in ("cubic", "bbr1")
    ]
    b = ctx.run_many("patch", pb)
    b.to_csv(ctx.out_dir / "patch-10g.csv", index=False)
    return b


def _run_sweep(ctx: StudyContext, p: Plan) -> pd.DataFrame:
    """Part C: the random-loss sweep (and its plot)."""
    sweep_ccs = list(p.sweep_ccs)
    pc = [
        _scenario(
            "loss-sweep",
            SWEEP_RATE_BPS,
            SWEEP_RTT_MS,
            loss,
            cc,
            p.sweep_dur_s,
            rcvbuf_bytes=None,
            buffer=QueueLimit.of_bdp(1),
            tags={"loss_pct": loss},
        )
        for loss in p.sweep_losses_pct
        for cc in sweep_ccs
    ]
    c = ctx.run_many("sweep", pc)
    c.to_csv(ctx.out_dir / "loss-sweep.csv", index=False)
    _sweep_plot(c, sweep_ccs, ctx.out_dir / "loss-sweep.png", SWEEP_RATE_BPS, SWEEP_RTT_MS / 1e3)
    return c
