"""The esnet-100g report's tables and computed prose: our throughputs beside the slides'
table, the packet-gap summary, the host-model runs with their busiest cores, and the sentence on what
limits the 4×10G path's streams (the receive window or the LAG) at the plan's rates."""

from __future__ import annotations

from typing import Any

import pandas as pd

from ...results.display import fmt_bps
from ..analysis import row
from ..report import MSS, WIRE, md_table
from .plan import CC_SEED, RCVBUF_4X10G_BYTES, SEED_4X10G, SEED_100G, Plan, _rate_bps


def _seed_table(s: pd.DataFrame, seed: dict, cap: float, **sel: Any) -> str:
    rows = []
    for (streams, cc, pace), (t, sd, n, rx) in seed.items():
        r = row(s, cc_name=cc, streams=streams, cap_gbps=pace, **sel)
        ours = (
            ("–", "–", "–")
            if r is None
            else (f"{r['tput_mean'] / 1e9:.2f}", f"{r['tput_std'] / 1e9:.2f} ({int(r['n'])})", f"{r['retr_mean']:,.0f}")
        )
        rows.append(
            [
                streams,
                f"{CC_SEED[cc]} ({cc})",
                f"{pace:.1f}",
                f"{t:.2f}",
                ours[0],
                f"{sd:.2f} ({n})",
                ours[1],
                f"{rx:,}",
                ours[2],
            ]
        )
    return md_table(
        [
            "streams",
            "cc (bbrlab)",
            "pacing (Gbit/s)",
            "ESnet tput (Gbit/s)",
            "bbrlab tput",
            "ESnet stddev (n)",
            "bbrlab stddev (n)",
            "ESnet RXMTs",
            "bbrlab RXMTs",
        ],
        rows,
    )


def _gap_summary(gs: pd.DataFrame, nic_gbps: float) -> str:
    wire_ns = WIRE * 8 / (nic_gbps * 1e9) * 1e9
    rows = [
        [
            f"{CC_SEED[r['cc']]} ({r['cc']})",
            f"paced {r['cap_gbps']:g} Gbit/s" if r["cap_gbps"] else "unpaced",
            f"{int(r['gaps']):,}",
            f"{r['b2b'] * 100:.1f} %",
            f"≤ {r['median_ns'] / 1e3:.3g} µs",
            f"≤ {r['p99_ns'] / 1e3:.3g} µs",
        ]
        for _, r in gs.iterrows()
    ]
    return md_table(
        ["cc", "pacing", "gaps", f"back-to-back (≈{wire_ns:.0f} ns at the NIC)", "median gap", "99th pct gap"], rows
    )


def _host_table(h: pd.DataFrame, hosts_rows: pd.DataFrame, p: Plan) -> str:
    """The host-model runs beside the slides: throughput, and what limited them (busiest cores)."""
    rows = []
    for path, seed in (("100G", SEED_100G), ("4x10G", SEED_4X10G)):
        for (streams, cc, pace), (t, sd, _n, _rx) in seed.items():
            r = row(h, path=path, cc_name=cc, streams=streams, cap_gbps=pace)
            if r is None:
                continue
            hr = row(hosts_rows, path=path, cc_name=cc, streams=streams, cap_gbps=pace)

            def busy(col: str, hr: pd.Series | None = hr) -> str:
                return "–" if hr is None or col not in hr else f"{hr[col] * 100:.0f} %"

            drops = "–" if hr is None or "receiver_rx_ring_drops" not in hr else f"{hr['receiver_rx_ring_drops']:,.0f}"
            rows.append(
                [
                    path,
                    streams,
                    f"{CC_SEED[cc]} ({cc})",
                    f"{pace:g}",
                    f"{t:.2f} ± {sd:.2f}",
                    f"{r['tput_mean'] / 1e9 / p.rate_scale:.2f}",
                    f"{r['retr_mean']:,.0f}",
                    drops,
                    busy("sender_cpu_util_max_core"),
                    busy("receiver_cpu_util_max_core"),
                ]
            )
    return md_table(
        [
            "path",
            "streams",
            "cc",
            "pacing (Gbit/s)",
            "ESnet tput (Gbit/s)",
            "bbrlab, host model",
            "bbrlab RXMTs",
            "receive-ring drops",
            "busiest sender core",
            "busiest receiver core",
        ],
        rows,
    )


def _window_text(p: Plan) -> str:
    """What limits the 4×10G path's streams: the receive window or the LAG (scaled rates included)."""
    window_bps = RCVBUF_4X10G_BYTES * 8 / 0.147
    member_bps, lag_bps = _rate_bps(10, p) * MSS / WIRE, _rate_bps(40, p) * MSS / WIRE
    one = f"The receive window caps one stream at 103 MB / 147 ms ≈ {fmt_bps(window_bps, sig=2)} of goodput, " + (
        f"below the {fmt_bps(member_bps, sig=3)} goodput of one LAG member, so the window limits one stream"
        if window_bps < member_bps
        else f"above the {fmt_bps(member_bps, sig=3)} goodput of one (scaled) LAG member, so the member limits one stream"
    )
    eight = "; with 8 streams the cap is 8× that, " + (
        f"above the {fmt_bps(lag_bps, sig=3)} aggregate, so the LAG limits instead"
        if 8 * window_bps > lag_bps
        else f"below the {fmt_bps(lag_bps, sig=3)} aggregate, so the window limits them too"
    )
    return (
        one + eight + " — the slides' 8-stream aggregate (20 Gbit/s) was limited by its receiving host beyond the "
        "window, which we do not model."
    )
