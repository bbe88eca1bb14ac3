"""The study's simulations: the flows and the dumbbell of the slides' testbed (`_flows`,
`_scenario`), and the four experiments built from them and run through the study context, each
reduced to one row per run: the many-flows sweep (`_sweep`, also run with the shallow buffer), the
TSO autosizing ablation (`_tso`), the host-model ablation (`_hosts`, over `HOST_VARIANTS`, reporting
`HOST_COLS`) and the faster-ACK ablation with RPC flows beside bulk ones (`_faster_acks`)."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import pandas as pd

from ..analysis import select
from ..context import StudyContext
from ..report import MSS
from ..scenarios import Dumbbell, Flow, QueueLimit, Rpc, StudyRun, study_run
from .metrics import _chunk_mean, _window_metrics
from .plan import HOST_BOTTLENECK_RATE_BPS, Config


def _flows(n: int, cc: str, *, start_spread_s: float = 0.02, **extra: Any) -> list[Flow]:
    # Starts spread evenly, to the microsecond.
    return [Flow(cc, ecn=True, sender=i % 2, start_s=round(start_spread_s * i / n, 6), **extra) for i in range(n)]


def _setup_flows(setup: str, n: int, cc: str, **extra: Any) -> list[Flow]:
    """``_flows`` of one setup: in the host-bottleneck setup all from host 0, whose NIC is then
    the one bottleneck."""
    fl = _flows(n, cc, **extra)
    return [replace(f, sender=0) for f in fl] if setup == "host-bottleneck" else fl


def _scenario(
    cfg: Config,
    name: str,
    flows: list[Flow],
    dur_s: float,
    tags: dict[str, Any],
    *,
    ecn: bool = True,
    bottleneck_rate_bps: int | None = None,
    hosts: dict[str, Any] | None = None,
) -> StudyRun:
    return study_run(
        name,
        duration_s=dur_s,
        seed=1,
        sample_interval_s=0.1,
        topology=Dumbbell(
            rate_bps=bottleneck_rate_bps or cfg.rate_bps,
            rtt_s=cfg.rtt_s,
            buffer=QueueLimit.of_bytes(cfg.buffer_bytes),
            ecn_threshold_bytes=cfg.ecn_threshold_bytes if ecn else None,
            access_rate_bps=cfg.rate_bps,
        ),
        flows=flows,
        tags=tags,
        hosts=hosts,
    )


def _sweep(ctx: StudyContext, cfg: Config, *, label: str = "sweep") -> pd.DataFrame:
    scen = [
        _scenario(cfg, f"mf-{cc}-{n}", _flows(n, cc), cfg.duration_s, {"num_flows": n, "algo": cc})
        for n in cfg.ns
        for cc in cfg.ccs
    ]
    rows = ctx.run_many(label, scen, keep_timeseries=True)
    out = []
    for tags, ts, q in ctx.series.pop(label):
        m = _window_metrics(ts, q, cfg.warmup_s, cfg.duration_s)
        r = select(rows, num_flows=tags["num_flows"], algo=tags["algo"])
        m.update(
            num_flows=tags["num_flows"],
            algo=tags["algo"],
            tso_chunk_segs=_chunk_mean(r),
            wall_s=float(r["wall_s"].iloc[0]),
            packets=int(r["data_packets_delivered_run"].iloc[0]),
            run_retrans_rate=float(r["retransmits"].sum() / max(1, r["data_packets_sent"].sum())),
        )
        out.append(m)
    return pd.DataFrame(out).sort_values(["algo", "num_flows"]).reset_index(drop=True)


def _tso(ctx: StudyContext, cfg: Config) -> pd.DataFrame:
    """Offload chunk sizes: bbr2/bbr2_new with and without the min_rtt term, DCTCP for reference,
    (a) in the ECN setup and (b) with one sender host whose 50 Gbit/s NIC is the bottleneck
    (bottleneck link 100 Gbit/s: no queue, no ECN marks, no loss anywhere but the host)."""
    scen = []
    for setup in ("ecn-switch", "host-bottleneck"):
        for n in cfg.tso_ns:
            for cc, auto in (("dctcp", True), ("bbr2", True), ("bbr2", False), ("bbr2_new", True), ("bbr2_new", False)):
                fl = _setup_flows(setup, n, cc, tso_minrtt_autosize=auto)
                scen.append(
                    _scenario(
                        cfg,
                        f"tso-{setup}-{cc}-{n}",
                        fl,
                        cfg.tso_duration_s,
                        {"setup": setup, "num_flows": n, "algo": cc, "autosize": auto},
                        ecn=setup == "ecn-switch",
                        bottleneck_rate_bps=None if setup == "ecn-switch" else HOST_BOTTLENECK_RATE_BPS,
                    )
                )
    rows = ctx.run_many("tso", scen, keep_timeseries=True)
    out = []
    for tags, ts, q in ctx.series.pop("tso"):
        r = select(rows, setup=tags["setup"], num_flows=tags["num_flows"], algo=tags["algo"], autosize=tags["autosize"])
        m = _window_metrics(ts, q, cfg.tso_warmup_s, cfg.tso_duration_s)
        chunk = _chunk_mean(r)
        goal = _chunk_mean(r, "tso_goal_mean_segs")
        m.update(
            tags,
            tso_chunk_segs=chunk,
            tso_chunk_kb=chunk * MSS / 1e3,
            tso_goal_segs=goal,
            tso_goal_kb=goal * MSS / 1e3,
            # chunks per second per Gbit/s: the host's per-chunk CPU cost proxy
            chunks_per_s=float(r["tso_bursts"].sum() / cfg.tso_duration_s),
        )
        out.append(m)
    return pd.DataFrame(out)


#: The host-model ablation's variants: (algorithm, min_rtt autosize, fast path).
HOST_VARIANTS = (
    ("dctcp", True, True),
    ("bbr2", True, True),
    ("bbr2", False, True),
    ("bbr2", True, False),
    ("bbr2_new", True, True),
    ("bbr2_new", False, True),
    ("bbr2_new", True, False),
)
#: Host columns the ablation reports (pool.host_columns).
HOST_COLS = (
    "sender_cpu_ns_per_mb",
    "sender_cpu_util",
    "sender_cpu_util_max_core",
    "sender_chunk_mean_segs",
    "sender_acks_per_s",
    "sender_interrupts_per_s",
    "receiver_cpu_ns_per_mb",
    "receiver_acks_per_s",
    "receiver_interrupts_per_s",
    "receiver_gro_mean_segs",
    "receiver_cpu_util_max_core",
)


def _hosts(ctx: StudyContext, cfg: Config) -> pd.DataFrame:
    """The Google BBRv2 slides' host metrics with the host model on: the ECN switch with few flows,
    the sender-NIC bottleneck with many, and app-limited RPC flows, each with the min_rtt term and
    the fast path on and off."""
    scen = []
    host_n = max(cfg.tso_ns)
    for setup, n in (("ecn-switch", cfg.host_ecn_n), ("host-bottleneck", host_n), ("rpc", cfg.ack_rpc)):
        for cc, auto, fp in HOST_VARIANTS:
            if setup == "rpc":
                if cc == "dctcp" or not auto:
                    continue  # the fast path's case: app-limited BBRv2 flows
                fl = [
                    Flow(
                        cc,
                        ecn=True,
                        sender=i % 2,
                        start_s=round(1e-4 * i, 6),
                        fast_path=fp,
                        rpc=Rpc(size_bytes=cfg.rpc_size_bytes, gap_s=cfg.rpc_gap_s),
                    )
                    for i in range(n)
                ]
            else:
                fl = _setup_flows(setup, n, cc, tso_minrtt_autosize=auto, fast_path=fp)
            scen.append(
                _scenario(
                    cfg,
                    f"host-{setup}-{cc}-{n}-{auto}-{fp}",
                    fl,
                    cfg.host_duration_s,
                    {"setup": setup, "num_flows": n, "algo": cc, "autosize": auto, "fast_path": fp},
                    ecn=setup != "host-bottleneck",
                    bottleneck_rate_bps=HOST_BOTTLENECK_RATE_BPS if setup == "host-bottleneck" else None,
                    hosts={},
                )
            )
    rows = ctx.run_many("hosts", scen, keep_timeseries=True)
    out = []
    for tags, ts, q in ctx.series.pop("hosts"):
        r = select(
            rows,
            setup=tags["setup"],
            num_flows=tags["num_flows"],
            algo=tags["algo"],
            autosize=tags["autosize"],
            fast_path=tags["fast_path"],
        )
        m = _window_metrics(ts, q, cfg.host_warmup_s, cfg.host_duration_s)
        m.update(
            tags,
            tso_chunk_segs=_chunk_mean(r),
            tso_goal_segs=_chunk_mean(r, "tso_goal_mean_segs"),
            cc_fast_ack_share=float(r["cc_fast_acks"].sum() / max(1, r["acks_sent"].sum())),
            rpc_mean_ms=float((r["rpc_mean_ms"] * r["rpc_count"]).sum() / max(1, r["rpc_count"].sum())),
            wall_s=float(r["wall_s"].iloc[0]),
        )
        m.update({c: float(r[c].iloc[0]) if c in r else math.nan for c in HOST_COLS})
        out.append(m)
    return pd.DataFrame(out)


def _faster_acks(ctx: StudyContext, cfg: Config) -> pd.DataFrame:
    """RPC latency under sustained congestion with the old and the fixed receiver ACK rule."""
    scen = []
    for cc in cfg.ack_ccs:
        for fast in (False, True):
            recv: dict[str, Any] = {
                "faster_acks": fast,
                "rcvbuf_bytes": cfg.rcvbuf_bytes,
                "app_read_delay_s": cfg.app_read_delay_s,
            }
            fl = _flows(cfg.ack_bulk, cc, **recv)
            fl += [
                Flow(
                    cc,
                    ecn=True,
                    sender=i % 2,
                    start_s=round(cfg.rpc_start_s + 1e-4 * i, 6),
                    rpc=Rpc(size_bytes=cfg.rpc_size_bytes, gap_s=cfg.rpc_gap_s),
                    **recv,
                )
                for i in range(cfg.ack_rpc)
            ]
            scen.append(_scenario(cfg, f"ack-{cc}-{fast}", fl, cfg.ack_duration_s, {"algo": cc, "faster_acks": fast}))
    rows = ctx.run_many("acks", scen)
    out = []
    for (cc, fast), r in rows.groupby(["algo", "faster_acks"]):
        rpc = r[r["rpc_count"] > 0]
        bulk = r[r["rpc_count"] == 0]
        w = rpc["rpc_count"].astype(float)
        out.append(
            {
                "algo": cc,
                "faster_acks": bool(fast),
                "rpcs": int(rpc["rpc_count"].sum()),
                "rpc_mean_ms": float((rpc["rpc_mean_ms"] * w).sum() / w.sum()) if w.sum() else math.nan,
                "rpc_p50_ms": float(rpc["rpc_p50_ms"].median()),
                "rpc_p99_ms_median_flow": float(rpc["rpc_p99_ms"].median()),
                "rpc_p99_ms_max_flow": float(rpc["rpc_p99_ms"].max()),
                "bulk_throughput_bps": float(bulk["goodput_bps"].sum()),
                "acks_withheld": int(r["acks_withheld"].sum()),
                "bulk_rtt_mean_ms": float(bulk["rtt_mean_ms"].mean()),
            }
        )
    return pd.DataFrame(out).sort_values(["algo", "faster_acks"]).reset_index(drop=True)
