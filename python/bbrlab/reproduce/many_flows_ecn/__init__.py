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

# The study is split by job, a module each: plan (its sizes), experiments (the simulations, one
# row per run), metrics (the slides' metrics from the time series, and their formats), figures,
# verdicts (the slides' claims checked) and prose (explanations computed from the numbers). This
# module keeps the study's description above, which its report quotes, and runs the parts in order;
# sections lays out the report, a function per section.

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ..claims import claims_table
from ..context import StudyContext
from .experiments import _faster_acks, _hosts, _sweep, _tso
from .figures import SOURCE_FIGURES, _plots
from .plan import PLANS, SOURCE, Config
from .prose import _shallow_text, _why_rtt
from .sections import (
    cost_section,
    durations_section,
    faster_acks_section,
    hosts_section,
    per_n_section,
    shallow_section,
    tso_section,
)
from .verdicts import ack_claims, claims, host_claims, tso_claims


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

    main_claims, tso_cl, ack_cl = claims(df, cfg, shallow), tso_claims(tso), ack_claims(acks, cfg)
    host_cl = host_claims(hosts)
    sections = [
        ("Source and setup", __doc__.split("\n", 2)[2]),
        durations_section(cfg),
        ("The slides' claims beside ours", claims_table(main_claims, source_header="Google BBRv2 slides")),
        ("The RTT claim against DCTCP and the window floors", _why_rtt(df, cfg)),
        per_n_section(df, cfg, figs),
        shallow_section(df, shallow, cfg),
        tso_section(tso, tso_cl),
        hosts_section(hosts, cfg, host_cl),
        faster_acks_section(acks, cfg, ack_cl),
        cost_section(df, cfg),
    ]
    packets = int(df["packets"].sum() + shallow["packets"].sum())
    return ctx.write_report(
        "many-flows-ecn: BBRv2 with many flows sharing a small BDP (Google BBRv2 slides)",
        sections,
        source=SOURCE,
        packets=packets,
        claims=main_claims + tso_cl + host_cl + ack_cl,
    )


__all__ = [
    "PLANS",
    "SOURCE_FIGURES",
    "Config",
    "_shallow_text",
    "_why_rtt",
    "ack_claims",
    "claims",
    "host_claims",
    "run",
    "tso_claims",
]
