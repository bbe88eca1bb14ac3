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
# module keeps the study's description above, which its report quotes, and runs the parts in order.

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ...results.display import fmt_bps, fmt_bytes
from ..claims import claims_table
from ..context import StudyContext
from ..report import MSS, WIRE, md_table
from .experiments import _faster_acks, _hosts, _sweep, _tso
from .figures import _plots
from .metrics import METRICS, _fmt, _us, _val
from .plan import LABEL, PLANS, SOURCE, Config
from .prose import _host_text, _shallow_text, _why_rtt
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
