"""many-flows-ecn (Google BBRv2 slides): BBRv2's many-flows ECN changes and its host-side optimizations.

Google's BBRv2 slides (Cardwell et al., "BBR v2 ... Performance Optimizations", 2019) tested N bulk flows from two sender
machines to one receiver on one switch, all NICs 50 Gbit/s, the switch CE-marking when the
instantaneous queue exceeds 80 KB, DCTCP vs baseline BBRv2 (`bbr2`) vs BBRv2 with the experimental
ECN changes (`bbr2_new`: bw_lo cut by the ECN mark rate, ecn_factor 0.5, additive probing), with
metrics from `ss`: throughput, srtt sampled every 100 ms (average and 95th percentile),
retransmission rate, CE mark rate and Jain's fairness index, for N from a handful to 1000+.

Our model of that testbed (bbrlab's dumbbell):
- Two sender hosts (flow field `sender = i % 2`, so flows share a host NIC), access links
  50 Gbit/s; the bottleneck is the 50 Gbit/s link towards the receiver, CE-marking ECT packets
  that arrive to more than 80 KB queued (`ecn_threshold = "80KB"`); every flow has `ecn = true`.
- Base RTT 50 µs: propagation inside one rack is ~1 µs, but a Linux host's stack, NIC and the
  switch put same-rack `ss` RTTs at tens of µs. 50 µs makes the BDP 312 KB (~200 packets), ~4x
  the marking threshold, so that "number_of_flows · min_cwnd > BDP" (the slides' standing-queue
  condition) holds from N ≈ 50 (bbr2's 4-packet floor) or N ≈ 100 (DCTCP's 2).
- Switch buffer 16 MB: a shared-buffer data-center switch of the time (Broadcom Trident 3 /
  Tomahawk 3: 32–64 MB shared; one congested port under dynamic thresholds takes a large part of
  it). It holds N · min_cwnd for every N we run (1000 · 4 · 1538 B = 6.2 MB) with room for
  start-up, so ECN, not drop-tail, governs the steady state; drops are still counted.
- Flow starts are spread uniformly over the first 20 ms (netperf instances are launched one by
  one); the metrics cover the window [warm-up, end], not the start-up.
- RTT statistics are those of `ss`: each flow's smoothed RTT (srtt) sampled every 100 ms from
  the time series (`srtt_ms`), pooled over flows and samples — not per-ACK RTT samples.
  Retransmission rate = retransmitted / sent data packets, CE rate = CE-marked / data packets at
  the bottleneck, throughput = all flows' delivered payload over the window, Jain over the
  per-flow goodputs in the window.

Ablations of the slides' host-side optimizations that a simulator can show:
- TSO autosizing (optimization 2): mean offload chunk per flow (`tso_burst_mean_segs`: segments
  a sender hands to its NIC back to back, up to its chunk-size rule) with and without the
  min_rtt term (`tso_minrtt_autosize`), in the ECN setup and where the slides place the problem:
  a sender host whose NIC is the bottleneck for many flows (no ECN, no loss).
- Host model (optimizations 1 and 2 as the slides measure them, on host metrics): the same
  setups with bbrlab's host model on (`[hosts]` at its defaults: 8 cores per host, interrupt
  moderation 8 µs / 128 frames, GRO, per-packet/chunk/ACK/timer CPU costs; `host.rs`): realized
  offload chunks once the receiver's GRO sends stretch ACKs, sender CPU per MB, CPU utilisation,
  ACK and interrupt rates, with the min_rtt term on and off and the fast path on and off —
  ten bbr2 flows at 50 Gbit/s and 50 µs (one sender host per flow pair), the sender-NIC
  bottleneck at its largest N, and the app-limited RPC traffic of the faster-ACK setup, where the
  fast path has ACKs to skip.
- Faster ACKs (optimization 3): the receiver ACK rule before the fix (`faster_acks = false`: ACK
  every 2 segments only if the window offered does not shrink) and after it, with a receiver
  whose window stops growing (rcvbuf 128 KB, Linux's default tcp_rmem[1]; the application reads
  50 µs after data arrives: `app_read_delay`), and request/response traffic under sustained
  congestion: RPC flows writing 64 KB messages (`rpc = {size, gap}`) beside bulk flows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ...plots.figures import save, subplots
from ...results.display import fmt_bps, fmt_bytes
from ...results.results import jain_index
from ..analysis import select, value
from ..claims import Claim, above, at_least, below, cell, claims_table, num, untested, verdict, verdict_of_all, within
from ..context import Size, StudyContext
from ..report import MSS, WIRE, md_table
from ..scenarios import Dumbbell, Flow, QueueLimit, Rpc, StudyRun, study_run
from ..sentences import join
from ..sources import GOOGLE_BBR2

SOURCE = GOOGLE_BBR2
CCS = ["dctcp", "bbr2", "bbr2_new"]
LABEL = {"dctcp": "DCTCP", "bbr2": "bbr2 (bbr2_old)", "bbr2_new": "bbr2_new"}
#: The bottleneck of the host-bottleneck TSO setup: faster than the sender's NIC, so only the NIC queues.
HOST_BOTTLENECK_RATE_BPS = 100_000_000_000


@dataclass(frozen=True)
class Config:
    """Everything that sizes the study."""

    ns: tuple[int, ...]
    duration_s: float
    warmup_s: float
    rate_bps: int = 50_000_000_000
    rtt_s: float = 50e-6
    buffer_bytes: int = 16_000_000
    ecn_threshold_bytes: int = 80_000
    ccs: tuple[str, ...] = tuple(CCS)
    # TSO ablation
    tso_ns: tuple[int, ...] = (100, 1000)
    tso_duration_s: float = 2.0
    tso_warmup_s: float = 0.5
    # faster-ACK ablation
    ack_ccs: tuple[str, ...] = ("dctcp", "bbr2_new")
    ack_bulk: int = 100
    ack_rpc: int = 20
    rpc_size_bytes: int = 64_000
    rpc_gap_s: float = 100e-6
    rpc_start_s: float = 0.3
    ack_duration_s: float = 3.0
    # shallow-buffer variant: the slides' DCTCP retransmissions at N ≥ 320 need drops, so that port
    # held less than DCTCP's standing queue there (N·2 packets − BDP ≈ 670 KB at N = 320); 500 KB
    # is a static per-port share of a 16 MB shared buffer over 32 ports (a Tomahawk-class switch)
    shallow_buffer_bytes: int = 500_000
    shallow_ns: tuple[int, ...] = (320, 1000)
    shallow_duration_s: float = 4.0
    rcvbuf_bytes: int = 128_000
    app_read_delay_s: float = 50e-6
    # host-model ablation: flows in the ECN-switch setup (the slides' "10 flows" comparison)
    host_ecn_n: int = 10
    host_duration_s: float = 1.0
    host_warmup_s: float = 0.4

    @property
    def rtt_ns(self) -> int:
        return round(self.rtt_s * 1e9)


PLANS = {
    Size.TINY: Config(
        ns=(4, 12),
        duration_s=0.4,
        warmup_s=0.2,
        rate_bps=10_000_000_000,
        tso_ns=(12,),
        tso_duration_s=0.3,
        tso_warmup_s=0.1,
        ack_bulk=6,
        ack_rpc=3,
        ack_duration_s=0.5,
        rpc_start_s=0.1,
        shallow_ns=(12,),
        shallow_duration_s=0.4,
        shallow_buffer_bytes=200_000,
        host_ecn_n=4,
        host_duration_s=0.3,
        host_warmup_s=0.1,
    ),
    Size.QUICK: Config(
        ns=(10, 100, 320),
        duration_s=2.5,
        warmup_s=1.0,
        tso_ns=(320,),
        tso_duration_s=1.0,
        tso_warmup_s=0.4,
        ack_bulk=50,
        ack_rpc=10,
        ack_duration_s=1.2,
        shallow_ns=(320,),
        shallow_duration_s=2.0,
    ),
    Size.FULL: Config(
        ns=(10, 20, 40, 80, 160, 320, 640, 1000),
        duration_s=6.0,
        warmup_s=1.0,
        tso_ns=(1000,),
        tso_duration_s=1.5,
        tso_warmup_s=0.5,
        host_duration_s=2.0,
        host_warmup_s=0.5,
    ),
}


def _us(t_s: float) -> str:
    return f"{t_s * 1e6:g} µs"


def _flows(n: int, cc: str, *, start_spread_s: float = 0.02, **extra: Any) -> list[Flow]:
    # Starts spread evenly, to the microsecond.
    return [Flow(cc, ecn=True, sender=i % 2, start_s=round(start_spread_s * i / n, 6), **extra) for i in range(n)]


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


METRICS = [
    ("retrans_rate", "retransmission rate", "retransmission_rate.png", 100.0, "%"),
    ("rtt_avg_ms", "average srtt (ms, ss-style 100 ms samples)", "average_rtt.png", 1.0, "ms"),
    ("rtt_p95_ms", "95th percentile srtt (ms)", "p95_rtt.png", 1.0, "ms"),
    ("throughput_bps", "throughput (Gbit/s)", "throughput.png", 1e-9, "Gbit/s"),
    ("ce_rate", "CE mark rate", "ce_rate.png", 1.0, ""),
    ("jain", "Jain fairness index", "jain_fairness.png", 1.0, ""),
]


def _plots(df: pd.DataFrame, cfg: Config, out: Path) -> list[str]:
    files = []
    ceiling = cfg.rate_bps * MSS / WIRE
    for col, title, fname, scale, _ in METRICS:
        fig, ax = subplots(figsize=(6, 3.8))
        for cc in cfg.ccs:
            d = df[df["algo"] == cc].sort_values("num_flows")
            ax.plot(d["num_flows"], d[col] * scale, marker="o", label=LABEL[cc])
        if col == "throughput_bps":
            ax.axhline(ceiling * scale, color="k", ls="--", lw=1, label="goodput ceiling")
            ax.set_ylim(0, ceiling * scale * 1.1)
        if col in ("ce_rate", "jain"):
            ax.set_ylim(0, 1.05)
        ax.set_xscale("log")
        ax.set_xlabel("num_flows")
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        save(fig, out / fname, dpi=100)
        files.append(fname)
    return files


def _tso(ctx: StudyContext, cfg: Config) -> pd.DataFrame:
    """Offload chunk sizes: bbr2/bbr2_new with and without the min_rtt term, DCTCP for reference,
    (a) in the ECN setup and (b) with one sender host whose 50 Gbit/s NIC is the bottleneck
    (bottleneck link 100 Gbit/s: no queue, no ECN marks, no loss anywhere but the host)."""
    scen = []
    for setup in ("ecn-switch", "host-bottleneck"):
        for n in cfg.tso_ns:
            for cc, auto in (("dctcp", True), ("bbr2", True), ("bbr2", False), ("bbr2_new", True), ("bbr2_new", False)):
                fl = _flows(n, cc, tso_minrtt_autosize=auto)
                if setup == "host-bottleneck":
                    fl = [replace(f, sender=0) for f in fl]
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
                fl = _flows(n, cc, tso_minrtt_autosize=auto, fast_path=fp)
                if setup == "host-bottleneck":
                    fl = [replace(f, sender=0) for f in fl]
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


#: A CPU difference smaller than this share is not a saving: any change of the sending path moves
#: a deterministic run's CPU by a few tenths of a percent (the slides' regressions were 2–5 %).
CPU_SAVING_MIN = 0.01


def _saves(before: float, after: float) -> bool | None:
    return below(after, before * (1 - CPU_SAVING_MIN))


def host_claims(h: pd.DataFrame) -> list[Claim]:
    """Optimizations 1 and 2 on the host model's CPU figures."""
    out = []
    d = h[(h["setup"] == "host-bottleneck") & h["fast_path"]]
    n = int(d["num_flows"].max())

    def v(setup: str, cc: str, auto: bool, fp: bool, col: str) -> float:
        return value(h, col, setup=setup, algo=cc, autosize=auto, fast_path=fp)

    claim = "TSO autosizing with the min_rtt term lowers BBRv2's sender CPU when many flows share a NIC"
    cpu = {
        cc: (
            v("host-bottleneck", cc, False, True, "sender_cpu_ns_per_mb"),
            v("host-bottleneck", cc, True, True, "sender_cpu_ns_per_mb"),
        )
        for cc in ("bbr2", "bbr2_new")
    }
    out.append(
        Claim(
            claim,
            "to match CPU usage for Reno/CUBIC/DCTCP",
            f"N = {n}, sender CPU per MB, min_rtt term off → on: "
            + ", ".join(f"{LABEL[cc]} {a / 1e3:.1f} → {b / 1e3:.1f} µs/MB" for cc, (a, b) in cpu.items()),
            f"sender CPU per MB ≥ {CPU_SAVING_MIN:.0%} lower with the term, for bbr2 and bbr2_new",
            verdict_of_all(_saves(a, b) for a, b in cpu.values()),
            paper_value="lower CPU",
            bbrlab_value=cell(num(a / 1e3, "µs/MB", label=f"{cc} off → on", to=b / 1e3) for cc, (a, b) in cpu.items()),
        )
    )
    claim = "The fast path lowers BBRv2's CPU on app-limited traffic without costing latency"
    fp = {
        cc: (
            v("rpc", cc, True, False, "sender_cpu_ns_per_mb"),
            v("rpc", cc, True, True, "sender_cpu_ns_per_mb"),
            v("rpc", cc, True, False, "rpc_mean_ms"),
            v("rpc", cc, True, True, "rpc_mean_ms"),
        )
        for cc in ("bbr2", "bbr2_new")
    }
    out.append(
        Claim(
            claim,
            "Resolved those CPU regressions, without sacrificing throughput or latency",
            "RPC flows, sender CPU per MB and mean RPC latency, fast path off → on: "
            + ", ".join(
                f"{LABEL[cc]} {a / 1e3:.1f} → {b / 1e3:.1f} µs/MB, {la:.3f} → {lb:.3f} ms"
                for cc, (a, b, la, lb) in fp.items()
            ),
            f"CPU per MB ≥ {CPU_SAVING_MIN:.0%} lower with the fast path and mean RPC latency within 5 %, "
            "for bbr2 and bbr2_new",
            verdict_of_all(
                r
                for a, b, la, lb in fp.values()
                for r in (_saves(a, b), within(lb / la, 0.95, 1.05) if la == la and la > 0 else None)
            ),
            paper_value="lower CPU, same latency",
            bbrlab_value=cell(
                num(a / 1e3, "µs/MB", label=f"{cc} off → on", to=b / 1e3) for cc, (a, b, _, _) in fp.items()
            ),
        )
    )
    return out


def _host_text(h: pd.DataFrame, cfg: Config) -> str:
    """The host-model ablation's table and what its numbers say (computed)."""
    rows = []
    for _, r in h.sort_values(["setup", "algo", "autosize", "fast_path"]).iterrows():
        rows.append(
            [
                r["setup"],
                r["num_flows"],
                LABEL[r["algo"]],
                "on" if r["autosize"] else "off",
                "on" if r["fast_path"] else "off",
                f"{r['tso_goal_segs']:.1f}",
                f"{r['tso_chunk_segs']:.1f}",
                f"{r['receiver_gro_mean_segs']:.1f}",
                f"{r['throughput_bps'] / 1e9:.2f}",
                f"{r['sender_cpu_ns_per_mb'] / 1e3:.1f}",
                f"{r['sender_cpu_util_max_core'] * 100:.0f} %",
                f"{r['receiver_cpu_ns_per_mb'] / 1e3:.1f}",
                f"{r['receiver_acks_per_s'] / 1e3:.0f}k",
                f"{r['receiver_interrupts_per_s'] / 1e3:.0f}k",
                f"{r['cc_fast_ack_share'] * 100:.0f} %",
            ]
        )
    ten = h[(h["setup"] == "ecn-switch") & (h["algo"] == "bbr2") & h["fast_path"]]
    on, off = ten[ten["autosize"]], ten[~ten["autosize"]]
    bulk_fp = h[(h["setup"] != "rpc") & (h["algo"] != "dctcp")]
    share = float(bulk_fp[bulk_fp["fast_path"]]["cc_fast_ack_share"].max()) if len(bulk_fp) else math.nan
    text = (
        f"With the receiver's GRO merging segments per interrupt and ACKing each merged skb, {cfg.host_ecn_n} bbr2 flows "
        f"at {cfg.rate_bps / 1e9:g} Gbit/s realize {float(on['tso_chunk_segs'].iloc[0]):.1f}-segment chunks with the "
        f"min_rtt term and {float(off['tso_chunk_segs'].iloc[0]):.1f} without it (sizing rule "
        f"{float(on['tso_goal_segs'].iloc[0]):.1f} vs {float(off['tso_goal_segs'].iloc[0]):.1f}); sender CPU "
        f"{float(on['sender_cpu_ns_per_mb'].iloc[0]) / 1e3:.1f} vs {float(off['sender_cpu_ns_per_mb'].iloc[0]) / 1e3:.1f} µs per MB, "
        f"receiver ACKs {float(on['receiver_acks_per_s'].iloc[0]) / 1e3:.0f}k vs "
        f"{float(off['receiver_acks_per_s'].iloc[0]) / 1e3:.0f}k per second. "
        f"On the bulk setups the fast path answered at most {share * 100:.1f} % of BBRv2's ACKs (bulk flows are "
        "rarely app-limited, the fast path's first condition), so its saving shows on the RPC setup."
    )
    return (
        text
        + "\n\n"
        + md_table(
            [
                "setup",
                "N",
                "algorithm",
                "min_rtt autosize",
                "fast path",
                "sizing-rule chunk",
                "realized chunk",
                "receiver GRO segs",
                "Gbit/s",
                "sender µs/MB",
                "busiest sender core",
                "receiver µs/MB",
                "ACKs/s",
                "receiver irq/s",
                "fast-path ACKs",
            ],
            rows,
        )
    )


def _faster_acks(ctx: StudyContext, cfg: Config) -> pd.DataFrame:
    """RPC latency under sustained congestion with the old and the fixed receiver ACK rule."""
    scen = []
    for cc in cfg.ack_ccs:
        for fast in (False, True):
            recv = {"faster_acks": fast, "rcvbuf_bytes": cfg.rcvbuf_bytes, "app_read_delay_s": cfg.app_read_delay_s}
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


#: How the claims' value cells write a metric: (scale, unit).
CELL_UNIT = {"retrans_rate": (100.0, "%"), "rtt_avg_ms": (1.0, "ms"), "rtt_p95_ms": (1.0, "ms")}


def claims(df: pd.DataFrame, cfg: Config, shallow: pd.DataFrame | None = None) -> list[Claim]:
    """The slides' many-flows results, checked on the sweep (and the shallow-buffer variant). A claim
    about N this size's grid does not reach is listed as not tested."""
    ns = sorted(df["num_flows"].unique())

    def cmp(claim: str, source: str, col: str, n_min: int, a: str, b: str, d: pd.DataFrame | None = df) -> Claim:
        rule = f"{LABEL[a]} below {LABEL[b]} at every N ≥ {n_min}"
        ns_ = [n for n in sorted(d["num_flows"].unique()) if n >= n_min] if d is not None else []
        if not ns_:
            return untested(
                claim, source, rule, f"no N ≥ {n_min} in this size's grid (N = {_ns_text(ns)})", paper_value=source
            )
        parts, oks, items = [], [], []
        scale, unit = CELL_UNIT[col]
        for n in ns_:
            va, vb = _val(d, a, n, col), _val(d, b, n, col)
            parts.append(f"N={n}: {_fmt(va, col)} vs {_fmt(vb, col)}")
            items += [num(scale * va, unit, label=f"{a} N = {n}"), num(scale * vb, unit, label=f"{b} N = {n}")]
            # Neither retransmitting (nothing dropped) cannot show which retransmits less.
            oks.append(None if col == "retrans_rate" and va == vb == 0 else below(va, vb))
        return Claim(
            claim,
            source,
            f"{LABEL[a]} vs {LABEL[b]}: " + "; ".join(parts),
            rule,
            verdict_of_all(oks),
            paper_value=source,
            bbrlab_value=cell(items),
        )

    out = [
        cmp(
            f"bbr2_new much lower retransmission rate than DCTCP, N ≥ 320 ({fmt_bytes(cfg.buffer_bytes, 0)} buffer)",
            "much lower",
            "retrans_rate",
            320,
            "bbr2_new",
            "dctcp",
        ),
        cmp(
            f"the same, {fmt_bytes(cfg.shallow_buffer_bytes, 0)} buffer",
            "much lower",
            "retrans_rate",
            320,
            "bbr2_new",
            "dctcp",
            shallow,
        ),
    ]
    for col, what in (("rtt_avg_ms", "average"), ("rtt_p95_ms", "p95")):
        for other in ("dctcp", "bbr2"):
            out.append(
                cmp(
                    f"bbr2_new lower {what} RTT than {LABEL[other]}, N ≥ 160 (ms)", "lower", col, 160, "bbr2_new", other
                )
            )
    thr = df.groupby("num_flows")["throughput_bps"]
    spread_at = (thr.max() - thr.min()) / thr.max()
    spread = float(spread_at.max())
    out.append(
        Claim(
            "all variants similar throughput",
            "similar",
            f"largest spread between algorithms at one N: {100 * spread:.1f} % "
            f"(min {df['throughput_bps'].min() / 1e9:.2f}, max {df['throughput_bps'].max() / 1e9:.2f} Gbit/s; "
            f"ceiling {cfg.rate_bps * MSS / WIRE / 1e9:.2f})",
            "spread below 5 % at every N",
            verdict(below(spread, 0.05)),
            paper_value="similar",
            bbrlab_value=cell(num(100 * v, "%", label=f"spread N = {n}") for n, v in spread_at.items()),
        )
    )
    big = max(ns)
    ce = {cc: _val(df, cc, big, "ce_rate") for cc in cfg.ccs}
    claim, rule = (
        "DCTCP and bbr2_new avoid saturating the CE signal (bbr2 does not)",
        "DCTCP and bbr2_new ≤ 0.9; bbr2 above both",
    )
    if {"dctcp", "bbr2", "bbr2_new"} <= set(ce):
        out.append(
            Claim(
                claim,
                "yes",
                f"CE rate at N={big}: " + ", ".join(f"{LABEL[c]} {ce[c]:.3f}" for c in cfg.ccs),
                rule,
                verdict_of_all(
                    [
                        at_least(0.9, ce["dctcp"]),
                        at_least(0.9, ce["bbr2_new"]),
                        above(ce["bbr2"], max(ce["dctcp"], ce["bbr2_new"])),
                    ]
                ),
                paper_value="yes",
                bbrlab_value=cell(num(ce[c], label=f"CE rate {c} N = {big}") for c in cfg.ccs),
            )
        )
    else:
        out.append(untested(claim, "yes", rule, "needs all three algorithms", paper_value="yes"))
    jmin = {cc: float(df[df["algo"] == cc]["jain"].min()) for cc in cfg.ccs}
    out.append(
        Claim(
            "all three reasonable, not ideal fairness",
            "reasonable, not ideal",
            "lowest Jain over N: " + ", ".join(f"{LABEL[c]} {jmin[c]:.3f}" for c in cfg.ccs),
            "lowest Jain of each between 0.5 and 0.999",
            verdict_of_all(None if not math.isfinite(v) else 0.5 < v < 0.999 for v in jmin.values()),
            paper_value="reasonable, not ideal",
            bbrlab_value=cell(num(jmin[c], label=f"lowest Jain {c}") for c in cfg.ccs),
        )
    )
    return out


#: The TSO claim: with the min_rtt term a BBRv2 flow's sizing-rule chunk at least this much larger.
TSO_GAIN = 1.5


def tso_claims(tso: pd.DataFrame) -> list[Claim]:
    """The slides' TSO autosizing change (optimization 2), on the host-bottleneck setup at its largest N."""
    claim = "TSO autosizing with the min_rtt term: BBRv2 keeps large offload chunks when many flows share a NIC"
    d = tso[tso["setup"] == "host-bottleneck"]
    n = int(d["num_flows"].max())
    goal = {
        (cc, auto): value(d, "tso_goal_segs", num_flows=n, algo=cc, autosize=auto)
        for cc in ("bbr2", "bbr2_new")
        for auto in (False, True)
    }
    gain = {cc: goal[(cc, True)] / goal[(cc, False)] for cc in ("bbr2", "bbr2_new")}
    return [
        Claim(
            claim,
            "larger chunks",
            f"N = {n}, sizing-rule chunk off → on: "
            + ", ".join(
                f"{LABEL[cc]} {goal[(cc, False)]:.1f} → {goal[(cc, True)]:.1f} segments ({gain[cc]:.2f}×)"
                for cc in gain
            ),
            f"chunk with the min_rtt term ≥ {TSO_GAIN:g}× without, for bbr2 and bbr2_new (one sender host, its "
            "NIC the bottleneck)",
            verdict_of_all(at_least(g, TSO_GAIN) for g in gain.values()),
            paper_value="larger chunks",
            bbrlab_value=cell(
                num(goal[(cc, False)], "segments", label=f"{cc} N = {n} off → on", to=goal[(cc, True)]) for cc in gain
            ),
        )
    ]


def _lower_where(df: pd.DataFrame, ns: list[int], col: str, a: str = "bbr2_new", b: str = "bbr2") -> tuple[list, list]:
    """The Ns (among ns) where algorithm a's `col` is below b's, and those where it is not."""
    lo = [n for n in ns if _val(df, a, n, col) < _val(df, b, n, col)]
    return lo, [n for n in ns if n not in lo]


def _ns_text(ns: list[int]) -> str:
    return ", ".join(str(n) for n in ns)


def _vs_old(df: pd.DataFrame, ns: list[int], floor_pkts: int) -> str:
    """bbr2_new against bbr2_old where the 4-packet floor makes a standing queue, from the numbers."""
    if not ns or "bbr2" not in set(df["algo"]) or "bbr2_new" not in set(df["algo"]):
        return ""
    cols = (("queue_mean_kb", "mean queue"), ("rtt_avg_ms", "average srtt"), ("rtt_p95_ms", "p95 srtt"))
    parts = []
    for col, name in cols:
        lo, hi = _lower_where(df, ns, col)
        if not hi:
            parts.append(f"its {name} is below bbr2_old's at every such N")
        elif not lo:
            parts.append(f"its {name} is not below bbr2_old's at any such N")
        else:
            parts.append(f"its {name} is below bbr2_old's at N = {_ns_text(lo)} but not at N = {_ns_text(hi)}")
    detail = "; ".join(
        f"N = {n}: {_val(df, 'bbr2_new', n, 'queue_mean_kb'):,.0f} vs {_val(df, 'bbr2', n, 'queue_mean_kb'):,.0f} KB, "
        f"{_val(df, 'bbr2_new', n, 'rtt_avg_ms'):.3f} vs {_val(df, 'bbr2', n, 'rtt_avg_ms'):.3f} ms avg, "
        f"{_val(df, 'bbr2_new', n, 'rtt_p95_ms'):.3f} vs {_val(df, 'bbr2', n, 'rtt_p95_ms'):.3f} ms p95"
        for n in ns
    )
    return (
        f" Against bbr2_old (same algorithm without the slides' changes), at the N where "
        f"N·{floor_pkts} packets exceed the BDP ({_ns_text(ns)}): "
        + "; ".join(parts)
        + f" (bbr2_new vs bbr2_old — {detail})."
    )


def _why_rtt(df: pd.DataFrame, cfg: Config) -> str:
    """The RTT claim against DCTCP, explained from this run's own numbers."""
    big = int(df["num_flows"].max())
    bdp_pkts = cfg.rate_bps * cfg.rtt_ns / 1e9 / 8 / WIRE
    rows = []
    floors = {"dctcp": 2, "bbr2": 4, "bbr2_new": 4}
    for cc, floor in floors.items():
        if cc not in cfg.ccs:
            continue
        rows.append(
            [
                LABEL[cc],
                floor,
                f"{big * floor:,}",
                f"{max(0.0, big * floor - bdp_pkts) * WIRE / 1e3:,.0f}",
                f"{_val(df, cc, big, 'cwnd_mean_pkts'):.2f}",
                f"{_val(df, cc, big, 'inflight_pkts'):,.0f}",
                f"{_val(df, cc, big, 'queue_mean_kb'):,.0f}",
                f"{_val(df, cc, big, 'rtt_avg_ms'):.3f}",
            ]
        )
    dq, nq = _val(df, "dctcp", big, "queue_mean_kb"), _val(df, "bbr2_new", big, "queue_mean_kb")
    dr, nr = _val(df, "dctcp", big, "rtt_avg_ms"), _val(df, "bbr2_new", big, "rtt_avg_ms")
    d_floor_kb = max(0.0, big * floors["dctcp"] - bdp_pkts) * WIRE / 1e3
    n_inflight = _val(df, "bbr2_new", big, "inflight_pkts")
    standing = sorted(int(n) for n in df["num_flows"].unique() if n * floors["bbr2"] > bdp_pkts)
    if nr < dr:
        finding = f"At N = {big} bbr2_new's mean srtt ({nr:.3f} ms) is below DCTCP's ({dr:.3f} ms), as in the slides."
    else:

        def rel(x: float, ref: float) -> str:
            return "below" if x < ref else "not below"

        d_vs_floor = f"within {abs(dq - d_floor_kb) / d_floor_kb:.0%} of" if d_floor_kb > 0 else "compared with"
        finding = (
            f"At N = {big} bbr2_new's mean srtt ({nr:.3f} ms) is not below DCTCP's ({dr:.3f} ms). DCTCP's mean "
            f"queue is {dq:,.0f} KB, {d_vs_floor} its 2-packet floor N·2 − BDP = {d_floor_kb:,.0f} KB. bbr2_new "
            f"keeps {n_inflight:,.0f} packets in flight in aggregate, {rel(n_inflight, big * floors['bbr2_new'])} "
            f"its own 4-packet floor (N·4 = {big * 4:,}) and {rel(n_inflight, big * floors['dctcp'])} DCTCP's "
            f"(N·2 = {big * 2:,}) — only pacing (bw_lo/bw_hi cut by the ECN rate) can go below a window floor; "
            f"its mean queue is {nq:,.0f} KB vs DCTCP's {dq:,.0f} KB. Every bbr2_new flow re-probes after "
            "min(63, inflight) rounds (Reno-coexistence timing), and each probe resets bw_lo and adds a packet to "
            "inflight_hi and a packet per min_rtt to bw_hi, so at any moment a share of the flows is probing "
            "above its fair share. The slides' experimental code was never published; our bbr2_new is a "
            "reconstruction from the slide's bullet points (see crates/cc/src/bbr/v2/), so how far below "
            "DCTCP's floor Google's version paced is unknown."
        )
    return (
        f"At N = {big}, {_us(cfg.rtt_s)} base RTT, BDP ≈ {bdp_pkts:.0f} packets. A window-limited algorithm cannot "
        "keep less than N·min_cwnd in flight, so its standing queue is at least N·min_cwnd − BDP "
        "(the slides' Morris '97 formula); only pacing can go below it.\n\n"
        + md_table(
            [
                "algorithm",
                "min cwnd (pkts)",
                "N·min_cwnd",
                "floor queue KB",
                "mean cwnd (pkts)",
                "mean aggregate in flight (pkts)",
                "mean queue KB",
                "avg srtt ms",
            ],
            rows,
        )
        + "\n\n"
        + finding
        + _vs_old(df, standing, floors["bbr2"])
    )


def _shallow_text(df: pd.DataFrame, shallow: pd.DataFrame, cfg: Config) -> str:
    """Why the shallow-buffer variant exists and what it shows, from both sweeps' numbers."""
    buf, sbuf = fmt_bytes(cfg.buffer_bytes, 0), fmt_bytes(cfg.shallow_buffer_bytes, 0)
    drops, retrans = float(df["drops"].sum()), float(df["retrans_rate"].max())
    if drops == 0 and retrans == 0:
        deep = (
            f"With the {buf} buffer nothing is dropped, so no algorithm retransmits and the slides' retransmission "
            "claim cannot show."
        )
    else:
        deep = (
            f"With the {buf} buffer the bottleneck drops {drops:,.0f} packets over the sweep's windows (highest "
            f"retransmission rate {100 * retrans:.3f} %)."
        )
    n = int(shallow["num_flows"].max())
    floors = {"DCTCP": 2, "BBRv2": 4}
    need = {name: n * k * WIRE for name, k in floors.items()}
    overflow = [name for name, b in need.items() if b > cfg.shallow_buffer_bytes]
    relation = (
        "below N · min_cwnd"
        if len(overflow) == len(need)
        else f"below N · min_cwnd for {join(overflow)} only"
        if overflow
        else "above N · min_cwnd"
    )
    consequence = (
        ", so only an algorithm that keeps its aggregate in-flight data below the buffer avoids drops"
        if overflow
        else ", so window floors alone need not overflow it"
    )
    dropped = ", ".join(f"{LABEL[cc]} {_val(shallow, cc, n, 'drops'):,.0f}" for cc in cfg.ccs)
    return (
        f"{deep} Google's switch evidently dropped (DCTCP retransmitted at N ≥ 320). Here the same runs with a "
        f"{sbuf} buffer — below the standing queue DCTCP's 2-packet floor makes at N = 320 (what the slides' "
        "retransmissions there imply about their port), a static per-port share of a 16 MB shared buffer over 32 "
        f"ports — which is {relation} for N = {n} ("
        + ", ".join(f"{name} {floors[name]} packets: {fmt_bytes(b, sig=2)}" for name, b in need.items())
        + f"){consequence}. Drops in the window at N = {n}: {dropped}. Metrics over "
        f"[{cfg.warmup_s:g} s, {cfg.shallow_duration_s:g} s]."
    )


#: "Higher p99 RPC latency" with the old ACK rule: above this ratio (the slides saw 2× in some tests).
ACK_P99_RATIO = 1.2


def ack_claims(acks: pd.DataFrame, cfg: Config) -> list[Claim]:
    """The slides' faster-ACK fix: the old receiver rule raised p99 RPC latency; the fix resolved it."""
    ratios = []
    for cc in cfg.ack_ccs:
        a = acks[acks["algo"] == cc].set_index("faster_acks")
        if True in a.index and False in a.index:
            ratios.append(
                (
                    cc,
                    a.loc[False, "rpc_p99_ms_median_flow"] / a.loc[True, "rpc_p99_ms_median_flow"],
                    a.loc[False, "rpc_mean_ms"] / a.loc[True, "rpc_mean_ms"],
                )
            )
    return [
        Claim(
            "the old ACK rule caused higher p99 RPC latency under sustained congestion; the fix resolved it",
            "2× higher p99 in some tests",
            "; ".join(
                f"{LABEL[cc]}: p99 (median flow) old/fixed = {p99:.2f}×, mean old/fixed = {mean:.2f}×"
                for cc, p99, mean in ratios
            ),
            f"p99 (median flow) old/fixed > {ACK_P99_RATIO} for each algorithm",
            verdict_of_all(above(p99, ACK_P99_RATIO) for _, p99, _ in ratios),
            paper_value=cell(num(2, "×", label="p99 old/fixed")),
            bbrlab_value=cell(
                [num(p99, "×", label=f"{cc} p99 (median flow) old/fixed") for cc, p99, _ in ratios]
                + [num(mean, "×", label=f"{cc} mean old/fixed") for cc, _, mean in ratios]
            ),
        )
    ]


def run(ctx: StudyContext) -> Path:
    cfg = PLANS[ctx.size]
    out = ctx.out_dir
    df = _sweep(ctx, cfg)
    df.to_csv(out / "sweep.csv", index=False)
    figs = _plots(df, cfg, out)
    shallow = _sweep(
        ctx,
        replace(cfg, ns=cfg.shallow_ns, buffer_bytes=cfg.shallow_buffer_bytes, duration_s=cfg.shallow_duration_s),
        label="shallow",
    )
    shallow.to_csv(out / "shallow-buffer.csv", index=False)
    tso = _tso(ctx, cfg)
    tso.to_csv(out / "tso.csv", index=False)
    acks = _faster_acks(ctx, cfg)
    acks.to_csv(out / "faster_acks.csv", index=False)
    hosts = _hosts(ctx, cfg)
    hosts.to_csv(out / "hosts.csv", index=False)

    # ---- report
    table_rows = []
    for n in sorted(df["num_flows"].unique()):
        for cc in cfg.ccs:
            table_rows.append(
                [n, LABEL[cc]]
                + [_fmt(_val(df, cc, n, c), c) for c, *_ in METRICS]
                + [
                    f"{_val(df, cc, n, 'drops'):.0f}",
                    f"{_val(df, cc, n, 'queue_mean_kb'):.0f}",
                    f"{_val(df, cc, n, 'tso_chunk_segs'):.1f}",
                ]
            )
    per_n = md_table(
        [
            "N",
            "algorithm",
            "retrans",
            "avg srtt ms",
            "p95 srtt ms",
            "Gbit/s",
            "CE rate",
            "Jain",
            "drops",
            "mean queue KB",
            "chunk segs",
        ],
        table_rows,
    )
    tso_rows = [
        [
            r["setup"],
            r["num_flows"],
            LABEL[r["algo"]],
            "on" if r["autosize"] else "off",
            f"{r['tso_goal_segs']:.1f} ({r['tso_goal_kb']:.1f} KB)",
            f"{r['tso_chunk_segs']:.1f} ({r['tso_chunk_kb']:.1f} KB)",
            f"{r['chunks_per_s'] / 1e3:.0f}k",
            f"{r['throughput_bps'] / 1e9:.2f}",
            f"{r['rtt_avg_ms']:.3f}",
            f"{r['ce_rate']:.3f}",
        ]
        for _, r in tso.sort_values(["setup", "num_flows", "algo", "autosize"]).iterrows()
    ]
    ack_rows = [
        [
            LABEL[r["algo"]],
            "fixed (faster ACKs)" if r["faster_acks"] else "old Linux rule",
            r["rpcs"],
            f"{r['rpc_mean_ms']:.3f}",
            f"{r['rpc_p50_ms']:.3f}",
            f"{r['rpc_p99_ms_median_flow']:.3f}",
            f"{r['rpc_p99_ms_max_flow']:.3f}",
            fmt_bps(r["bulk_throughput_bps"], sig=3),
            f"{r['acks_withheld']:,}",
        ]
        for _, r in acks.iterrows()
    ]
    big = df[df["num_flows"] == df["num_flows"].max()]
    perf = (
        f"The {int(big['num_flows'].iloc[0])}-flow runs ({cfg.duration_s:g} s simulated at "
        f"{cfg.rate_bps / 1e9:g} Gbit/s) took "
        + ", ".join(f"{LABEL[r['algo']]} {r['wall_s']:.1f} s" for _, r in big.iterrows())
        + " wall each."
    )
    window_s = cfg.duration_s - cfg.warmup_s
    main_claims, tso_cl, ack_cl = claims(df, cfg, shallow), tso_claims(tso), ack_claims(acks, cfg)
    host_cl = host_claims(hosts)
    sections = [
        ("Source and setup", __doc__.split("\n", 2)[2]),
        (
            "Durations",
            f"Each sweep run simulates {cfg.duration_s:g} s; metrics cover [{cfg.warmup_s:g} s, "
            f"{cfg.duration_s:g} s]. At a {_us(cfg.rtt_s)} RTT one second is {1 / cfg.rtt_s:,.0f} round trips, so start-up (a few ms) and "
            "the flows' convergence are over well within the warm-up; what the window must contain are BBRv2's "
            "slow cycles: bandwidth probing every ~2–3 s of wall-clock time and PROBE_RTT every 5 s"
            + (
                f" (this {window_s:g} s window holds at least one bandwidth probe per flow and reaches the first "
                "PROBE_RTT at ~5 s)."
                if window_s >= 5
                else f"; this {window_s:g} s window holds at most one, so its numbers are indicative."
            )
            + " Google ran 60 s netperf flows; its metrics average over those cycles in the same way.",
        ),
        ("The slides' claims beside ours", claims_table(main_claims, source_header="Google BBRv2 slides")),
        ("The RTT claim against DCTCP and the window floors", _why_rtt(df, cfg)),
        (
            "Per N and algorithm",
            per_n + "\n\nretrans = retransmitted / sent data packets in the window; srtt = `ss`-style smoothed RTT of "
            "every flow sampled every 100 ms (not per-ACK samples); Gbit/s = all flows' goodput (ceiling "
            f"{cfg.rate_bps * MSS / WIRE / 1e9:.2f}); CE rate = CE-marked / data packets at the bottleneck; "
            "drops = bottleneck drops in the window; chunk segs = mean offload chunk (segments per TSO burst).\n\n"
            + "\n\n".join(f"![{f}]({f})" for f in figs),
        ),
        (
            f"Shallow-buffer variant ({fmt_bytes(cfg.shallow_buffer_bytes, 0)})",
            _shallow_text(df, shallow, cfg)
            + "\n\n"
            + md_table(
                ["N", "algorithm", "retrans", "avg srtt ms", "p95 srtt ms", "Gbit/s", "CE rate", "Jain", "drops"],
                [
                    [n, LABEL[cc]]
                    + [_fmt(_val(shallow, cc, n, c), c) for c, *_ in METRICS]
                    + [f"{_val(shallow, cc, n, 'drops'):.0f}"]
                    for n in sorted(shallow["num_flows"].unique())
                    for cc in cfg.ccs
                ],
            ),
        ),
        (
            "Ablation: TSO autosizing (optimization 2)",
            "Mean offload chunk = segments a sender hands its NIC back to back (one TSO skb), over the run. "
            "'host-bottleneck' is the slides' case: one sender host, its 50 Gbit/s NIC the bottleneck, no ECN "
            "or loss. With the min_rtt term (`tso_minrtt_autosize`, on by default) BBRv2 adds 64 KB >> "
            "(min_rtt / 512 µs) — the full 64 KB at data-center RTTs — so its chunks no longer shrink with the "
            "per-flow fair share; without it a flow's chunk is ~1 ms of its pacing rate, which is small when "
            "hundreds of flows share 50 Gbit/s. 'sizing-rule chunk' is the chunk size the rule allows when a "
            "chunk starts (`tso_goal_mean_segs`); 'realized chunk' is what was actually sent back to back "
            "(`tso_burst_mean_segs`): a cwnd-limited, ACK-clocked flow sends ~2 segments per ACK, and the "
            "simulator without its host model releases a flow's TSQ budget per departing packet rather than per "
            "departing skb (Linux frees a whole skb at TX completion and checks TSQ per skb), so TSQ-limited flows "
            "realize ~1-segment chunks whatever the rule allows — the realized column is a lower bound on Linux's "
            "chunks; the host-model section below has skb-granular TSQ and receive offload. chunks/s is "
            "the NIC's realized chunk rate (a proxy for per-chunk CPU cost).\n\n"
            + md_table(
                [
                    "setup",
                    "N",
                    "algorithm",
                    "min_rtt autosize",
                    "sizing-rule chunk",
                    "realized chunk",
                    "chunks/s",
                    "Gbit/s",
                    "avg srtt ms",
                    "CE rate",
                ],
                tso_rows,
            )
            + "\n\n"
            + claims_table(tso_cl, source_header="Google BBRv2 slides"),
        ),
        (
            "Host model: CPU, ACKs and offload chunks (optimizations 1 and 2)",
            "The same setups with bbrlab's host model on (`[hosts]` defaults; costs per interrupt, packet, skb, "
            "chunk, ACK and timer; see docs/core-api.md). 'rpc' is the faster-ACK setup's RPC flows alone "
            f"({fmt_bytes(cfg.rpc_size_bytes, 0)} messages): app-limited, where the fast path applies. µs/MB = CPU time per "
            "MB of payload sent (sender hosts together) or received; fast-path ACKs = ACKs on which the algorithm "
            "skipped its model and control update.\n\n"
            + _host_text(hosts, cfg)
            + "\n\n"
            + claims_table(host_cl, source_header="Google BBRv2 slides"),
        ),
        (
            "Ablation: faster ACKs (optimization 3)",
            f"{cfg.ack_bulk} bulk flows plus {cfg.ack_rpc} RPC flows (messages of {fmt_bytes(cfg.rpc_size_bytes, 0)}, next one "
            f"{_us(cfg.rpc_gap_s)} after the previous is fully acknowledged; the server answers a complete message at "
            f"once and the answer carries the ACK), every receiver with rcvbuf {fmt_bytes(cfg.rcvbuf_bytes, 0)} and an application "
            f"that reads {_us(cfg.app_read_delay_s)} after data arrives, so the offered window shrinks between reads. "
            "Old rule: ACK every 2 segments only if the window offered now is not smaller than the last one, "
            "else wait for the read (Linux `tcp_cleanup_rbuf`) or the 40 ms timer; fixed: ACK every 2 segments. "
            "RPC latency = write to full acknowledgement. p99 per RPC flow (median and max over the RPC flows; "
            "the histograms are per flow). The slides: 'Caused 2x higher p99 RPC latency with sustained "
            "congestion in some tests'; 'Resolved these RPC latency issues'.\n\n"
            + md_table(
                [
                    "algorithm",
                    "receiver ACK rule",
                    "RPCs",
                    "mean ms",
                    "p50 ms",
                    "p99 ms (median flow)",
                    "p99 ms (max flow)",
                    "bulk throughput",
                    "ACKs withheld",
                ],
                ack_rows,
            )
            + "\n\n"
            + claims_table(ack_cl, source_header="Google BBRv2 slides"),
        ),
        ("Simulator cost", perf + " See `sweep.csv` (`wall_s`) for every run."),
    ]
    packets = int(df["packets"].sum() + shallow["packets"].sum())
    return ctx.write_report(
        "many-flows-ecn: BBRv2 with many flows sharing a small BDP (Google BBRv2 slides)",
        sections,
        source=SOURCE,
        packets=packets,
        claims=main_claims + tso_cl + host_cl + ack_cl,
    )


__all__ = ["PLANS", "Config", "ack_claims", "claims", "host_claims", "run", "tso_claims"]
