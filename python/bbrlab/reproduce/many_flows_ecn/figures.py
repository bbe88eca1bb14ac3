"""The sweep's figures: one PNG per metric in `METRICS` (retransmission rate, average and p95
srtt, throughput against the goodput ceiling, CE rate, Jain's index), each algorithm's value against
the number of flows on a log axis, written next to the report."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ...plots.figures import save, subplots
from ..report import MSS, WIRE
from .metrics import METRICS
from .plan import LABEL, Config


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
