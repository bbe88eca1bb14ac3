"""The esnet-100g study's simulations, one function per part: A, the 100G path per buffer; B,
the 4×10G LAG path; C, packet gaps at the sender NIC (short runs one after another, for their gaps
table); D, the modelled hosts instead of the fitted loss and window. `_scenario` builds one run of any
part: its streams with seed-drawn start offsets, pacing cap and receive window, on a scaled dumbbell.
Each part writes its CSVs to the study's directory and returns what the report needs."""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from ... import run as run_scenario
from ..context import StudyContext
from ..scenarios import Dumbbell, Flow, StudyRun, study_run
from .figures import _gap_figure
from .metrics import _per_run, _stats
from .plan import CCS, CONFIGS, PATH_4X10G, PATH_100G, RCVBUF_4X10G_BYTES, EsnetPath, Plan, _buffer, _rate_bps


def _scenario(
    *,
    name: str,
    p: Plan,
    path: EsnetPath,
    buffer_ms: float,
    loss: float | None = None,
    cc: str,
    streams: int,
    cap_gbps: float | None,
    seed: int,
    dur_s: float,
    rcvbuf_bytes: int | None = None,
    gaps: bool = False,
    tags: dict[str, Any],
    hosts: dict[str, Any] | None = None,
) -> StudyRun:
    """One run on ``path``: its fitted loss unless ``loss`` is given, its pacing cap per stream
    where ``cap_gbps`` is None (0: unpaced)."""
    rate_gbps = path.rate_gbps(streams)
    loss = path.loss if loss is None else loss
    cap_gbps = path.cap_gbps if cap_gbps is None else cap_gbps
    rnd = random.Random(seed * 1_000_003 + streams)
    # Streams start 0-10 ms apart, to the 0.1 µs.
    flows = [
        Flow(
            cc,
            sender=0,
            start_s=round(rnd.uniform(0, 10), 4) / 1e3,
            max_pacing_rate_bps=_rate_bps(cap_gbps, p) if cap_gbps else None,
            rcvbuf_bytes=rcvbuf_bytes,
            gap_histogram=True if gaps else None,
        )
        for _ in range(streams)
    ]
    return study_run(
        name,
        duration_s=dur_s,
        seed=seed,
        sample_interval_s=0.1,
        topology=Dumbbell(
            rate_bps=_rate_bps(rate_gbps, p),
            rtt_s=path.rtt_ms / 1e3,
            buffer=_buffer(rate_gbps, buffer_ms, p),
            loss=loss,
            access_rate_bps=_rate_bps(path.access_gbps, p),
        ),
        flows=flows,
        tags=dict(tags, cc_name=cc, streams=streams, cap_gbps=cap_gbps, seed=seed, link_gbps=rate_gbps * p.rate_scale),
        hosts=hosts,
    )


def _every_config(p: Plan, seeds: Sequence[int], **part: Any) -> list[StudyRun]:
    """A part's runs: each configuration of streams and pacing cap (`CONFIGS`), each algorithm,
    each seed, in that order; ``part``: the rest of `_scenario`'s arguments (path, buffer, ...)."""
    return [
        _scenario(p=p, cc=cc, streams=streams, cap_gbps=cap, seed=sd, **part)
        for streams, cap in CONFIGS
        for cc in CCS
        for sd in seeds
    ]


def run_path_100g(ctx: StudyContext, p: Plan, seeds: list[int]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Part A: the 100G path, per buffer. Returns its per-flow rows and its per-configuration stats."""
    out = ctx.out_dir
    a_sc = [
        run
        for buf in p.buffers_ms
        for run in _every_config(
            p,
            seeds,
            name="esnet-100g",
            path=PATH_100G,
            buffer_ms=buf,
            dur_s=p.dur_s,
            tags={"path": PATH_100G.tag, "buffer_ms": buf},
        )
    ]
    a_rows = ctx.run_many("100g", a_sc)
    a_rows.to_csv(out / "path-100g-flows.csv", index=False)
    a_runs = _per_run(a_rows)
    a_runs.to_csv(out / "path-100g-runs.csv", index=False)
    return a_rows, _stats(a_runs)


def run_lag(ctx: StudyContext, p: Plan, seeds: list[int]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Part B: the 4×10G LAG path (1 stream: one 10G member; 8 streams: the 40G aggregate).
    Returns its per-flow rows and its per-configuration stats."""
    b_sc = _every_config(
        p,
        seeds,
        name="esnet-4x10g",
        path=PATH_4X10G,
        buffer_ms=5.0,
        dur_s=p.lag_dur_s,
        rcvbuf_bytes=RCVBUF_4X10G_BYTES,
        tags={"path": PATH_4X10G.tag},
    )
    b_rows = ctx.run_many("4x10g", b_sc)
    b_rows.to_csv(ctx.out_dir / "path-4x10g-flows.csv", index=False)
    return b_rows, _stats(_per_run(b_rows))


def run_gaps(p: Plan, out: Path) -> list[tuple[dict[str, Any], pd.DataFrame]]:
    """Part C: packet gaps at the sender NIC (1 stream, the 4×10G path's member, 100G NIC), paced at
    10G. Four short runs, one after another: their gaps table is not in run_many's per-flow rows.
    Writes gaps.csv and the histogram figure; returns each run's tags and gap histogram."""
    c_sc = [
        _scenario(
            name="esnet-gaps",
            p=p,
            path=PATH_4X10G,
            buffer_ms=5.0,
            cc=cc,
            streams=1,
            cap_gbps=cap,
            seed=1,
            dur_s=p.gap_dur_s,
            rcvbuf_bytes=RCVBUF_4X10G_BYTES,
            gaps=True,
            tags={"path": "gaps"},
        )
        for cc in CCS
        for cap in (0.0, 10.0)
    ]
    hists = []
    for item in c_sc:
        g = run_scenario(item.scenario).gaps.copy()
        g["cc"] = item.tags["cc_name"]
        g["pacing_gbps"] = item.tags["cap_gbps"]
        hists.append((item.tags, g))
    pd.concat([g for _, g in hists]).to_csv(out / "gaps.csv", index=False)
    _gap_figure(
        hists,
        out / "packet-gaps.png",
        f"packet spacing at the send host's NIC ({100 * p.rate_scale:g}G NIC, {10 * p.rate_scale:g}G path, 147 ms)",
    )
    return hists


def run_hosts(ctx: StudyContext, p: Plan, hm: dict[str, Any]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Part D: the hosts instead of the fitted loss and window (one seed: without random loss only
    BBR's phase and the start offsets differ between seeds). Returns the per-flow rows and the
    per-configuration stats."""
    d_sc = [
        run
        for path in (PATH_100G, PATH_4X10G)
        for run in _every_config(
            p,
            [1],
            name=f"esnet-hosts-{path.tag}",
            path=path,
            buffer_ms=5.0,
            loss=0.0,
            dur_s=p.dur_s if path is PATH_100G else p.lag_dur_s,
            tags={"path": path.tag},
            hosts=hm,
        )
    ]
    d_rows = ctx.run_many("hosts", d_sc)
    d_rows.to_csv(ctx.out_dir / "hosts-flows.csv", index=False)
    d = _stats(_per_run(d_rows))
    d.to_csv(ctx.out_dir / "hosts.csv", index=False)
    return d_rows, d
