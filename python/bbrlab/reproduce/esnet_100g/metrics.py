"""The esnet-100g study's numbers from the simulations' rows: per run (aggregate throughput and
retransmits of its streams), per configuration over seeds (mean, standard deviation, slowest wall
time), and per packet-gap run (gaps counted, fraction back to back, median and 99th percentile gap)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..report import WIRE


def _per_run(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per run: aggregate throughput and retransmits of its streams."""
    keys = [c for c in ("path", "buffer_ms", "cc_name", "streams", "cap_gbps", "seed", "link_gbps") if c in rows]
    g = rows.groupby(["run"] + keys, dropna=False)
    out = g.agg(
        tput_bps=("goodput_bps", "sum"),
        retransmits=("retransmits", "sum"),
        sent=("data_packets_sent", "sum"),
        wall_s=("wall_s", "first"),
    ).reset_index()
    return out


def _stats(runs: pd.DataFrame) -> pd.DataFrame:
    keys = [c for c in ("path", "buffer_ms", "cc_name", "streams", "cap_gbps", "link_gbps") if c in runs]
    g = runs.groupby(keys, dropna=False)
    s = g.agg(
        tput_mean=("tput_bps", "mean"),
        tput_std=("tput_bps", "std"),
        n=("tput_bps", "size"),
        retr_mean=("retransmits", "mean"),
        sent_mean=("sent", "mean"),
        wall_max=("wall_s", "max"),
    ).reset_index()
    s["tput_std"] = s["tput_std"].fillna(0.0)
    return s


def gap_stats(hists: list[tuple[dict[str, Any], pd.DataFrame]], nic_gbps: float) -> pd.DataFrame:
    """Per run: gaps counted, fraction back to back (≤ 1.5 × one packet at the NIC rate, up to the
    histogram's bucket), median and 99th percentile gap (upper edge of their bucket, ns)."""
    wire_ns = WIRE * 8 / (nic_gbps * 1e9) * 1e9
    rows = []
    for tags, g in hists:
        d = g.groupby(["lo_ns", "hi_ns"], as_index=False)["count"].sum().sort_values("lo_ns")
        c = d["count"].to_numpy(dtype=float)
        tot = c.sum()
        if tot == 0:
            continue
        cum = np.cumsum(c) / tot
        hi = d["hi_ns"].to_numpy()
        rows.append(
            {
                "cc": tags["cc_name"],
                "cap_gbps": tags["cap_gbps"],
                "gaps": int(tot),
                "b2b": c[hi <= 1.5 * wire_ns * 10**0.1].sum() / tot,
                "median_ns": hi[np.searchsorted(cum, 0.5)],
                "p99_ns": hi[np.searchsorted(cum, 0.99)],
            }
        )
    return pd.DataFrame(rows, columns=["cc", "cap_gbps", "gaps", "b2b", "median_ns", "p99_ns"])
