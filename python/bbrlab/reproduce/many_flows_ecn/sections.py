"""The many-flows-ecn report after the study's description, one function per section: durations,
the sweep per N and algorithm, the shallow-buffer variant, the TSO autosizing, host-model and
faster-ACK ablations (each with the claims it tabulates) and the simulator's cost. Each returns its
(title, markdown) section; the claims are computed by verdicts and passed in."""

from __future__ import annotations

import pandas as pd

from ...results.display import fmt_bps, fmt_bytes
from ..claims import Claim, claims_table
from ..report import MSS, WIRE, md_table
from .figures import figure_pairs
from .metrics import METRICS, _fmt, _us, _val
from .plan import LABEL, Config
from .prose import _host_text, _shallow_text

Section = tuple[str, str]


def durations_section(cfg: Config) -> Section:
    """How long the sweep runs simulate, and which of BBRv2's slow cycles the metrics window holds."""
    window_s = cfg.duration_s - cfg.warmup_s
    return (
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
    )


def per_n_section(df: pd.DataFrame, cfg: Config, figs: list[str]) -> Section:
    """The sweep's metrics per N and algorithm, with the figures."""
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
    return (
        "Per N and algorithm",
        per_n + "\n\nretrans = retransmitted / sent data packets in the window; srtt = `ss`-style smoothed RTT of "
        "every flow sampled every 100 ms (not per-ACK samples); Gbit/s = all flows' goodput (ceiling "
        f"{cfg.rate_bps * MSS / WIRE / 1e9:.2f}); CE rate = CE-marked / data packets at the bottleneck; "
        "drops = bottleneck drops in the window; chunk segs = mean offload chunk (segments per TSO burst).\n\n"
        + figure_pairs(figs),
    )


def shallow_section(df: pd.DataFrame, shallow: pd.DataFrame, cfg: Config) -> Section:
    """The shallow-buffer variant beside the sweep."""
    return (
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
    )


def tso_section(tso: pd.DataFrame, tso_cl: list[Claim]) -> Section:
    """The TSO autosizing ablation (optimization 2), with its claims."""
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
    return (
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
    )


def hosts_section(hosts: pd.DataFrame, cfg: Config, host_cl: list[Claim]) -> Section:
    """The host model's CPU, ACK and offload-chunk figures (optimizations 1 and 2), with their claims."""
    return (
        "Host model: CPU, ACKs and offload chunks (optimizations 1 and 2)",
        "The same setups with bbrlab's host model on (`[hosts]` defaults; costs per interrupt, packet, skb, "
        "chunk, ACK and timer; see docs/core-api.md). 'rpc' is the faster-ACK setup's RPC flows alone "
        f"({fmt_bytes(cfg.rpc_size_bytes, 0)} messages): app-limited, where the fast path applies. µs/MB = CPU time per "
        "MB of payload sent (sender hosts together) or received; fast-path ACKs = ACKs on which the algorithm "
        "skipped its model and control update.\n\n"
        + _host_text(hosts, cfg)
        + "\n\n"
        + claims_table(host_cl, source_header="Google BBRv2 slides"),
    )


def faster_acks_section(acks: pd.DataFrame, cfg: Config, ack_cl: list[Claim]) -> Section:
    """The faster-ACK ablation (optimization 3), with its claims."""
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
    return (
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
    )


def cost_section(df: pd.DataFrame, cfg: Config) -> Section:
    """The simulator's wall time for the largest N."""
    big = df[df["num_flows"] == df["num_flows"].max()]
    perf = (
        f"The {int(big['num_flows'].iloc[0])}-flow runs ({cfg.duration_s:g} s simulated at "
        f"{cfg.rate_bps / 1e9:g} Gbit/s) took "
        + ", ".join(f"{LABEL[r['algo']]} {r['wall_s']:.1f} s" for _, r in big.iterrows())
        + " wall each."
    )
    return ("Simulator cost", perf + " See `sweep.csv` (`wall_s`) for every run.")
