"""The report's explanations, computed from this run's numbers rather than written in advance:
the host-model table and what it shows (`_host_text`), the RTT claim against DCTCP set beside each
algorithm's window floor N · min_cwnd − BDP, and bbr2_new against bbr2_old where that floor makes a
standing queue (`_why_rtt`, `_vs_old`), and why the shallow-buffer variant exists and what it
drops (`_shallow_text`)."""

from __future__ import annotations

import math

import pandas as pd

from ...results.display import fmt_bytes
from ..report import WIRE, md_table
from ..sentences import join
from .metrics import _ns_text, _us, _val
from .plan import LABEL, Config


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


def _lower_where(df: pd.DataFrame, ns: list[int], col: str, a: str = "bbr2_new", b: str = "bbr2") -> tuple[list, list]:
    """The Ns (among ns) where algorithm a's `col` is below b's, and those where it is not."""
    lo = [n for n in ns if _val(df, a, n, col) < _val(df, b, n, col)]
    return lo, [n for n in ns if n not in lo]


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
