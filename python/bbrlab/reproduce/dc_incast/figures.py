"""The dc-incast figures: Figure 7 (mean ± 95 % CI of the aggregate throughput against n, ours
beside the Waterloo study's) and Figure 8 (the CDF of the samples at the largest n)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ...plots.figures import save, subplots
from .. import dc_common as dc
from .plan import LINK_75_BPS, SEED_READINGS, Plan


def _figures(st: pd.DataFrame, runs: pd.DataFrame, p: Plan, out_dir: Path) -> None:
    fabrics = dc.fabrics_in(st)
    fig, axes = subplots(1, len(fabrics), figsize=(5.5 * len(fabrics), 4), squeeze=False)
    for ax, fabric in zip(axes[0], fabrics):
        for cc in dc.CCS:
            c = st[(st["fabric"] == fabric) & (st["cc"] == cc)].sort_values("n")
            ax.errorbar(
                c["n"],
                c["mean_bps"] / 1e6,
                yerr=c["ci_bps"].fillna(0) / 1e6,
                marker="o",
                ms=3,
                capsize=3,
                color=dc.CC_COLOR[cc],
                label=f"{dc.CC_LABEL[cc]}, as the Waterloo DC study's tool reads it",
            )
            ax.plot(
                c["n"],
                c["true_mean_bps"] / 1e6,
                ls="--",
                lw=0.9,
                color=dc.CC_COLOR[cc],
                label=f"{dc.CC_LABEL[cc]}, exact aggregate",
            )
            seed = sorted(SEED_READINGS[cc].items())
            ax.plot(
                [n for n, _ in seed],
                [v[0] for _, v in seed],
                ls="none",
                marker="x",
                ms=4,
                color=dc.CC_COLOR[cc],
                label=f"{dc.CC_LABEL[cc]}, the Waterloo DC study's measurement",
            )
        ax.axhline(dc.CEILING_BPS / 1e6, color="grey", ls="--", lw=0.8, label="goodput ceiling")
        ax.set_title(dc.FABRIC_LABEL[fabric], fontsize=10)
        ax.set_xlabel("number of senders (n)")
        ax.set_ylabel("throughput (Mbit/s), mean ± 95 % CI")
        ax.set_ylim(0, 1000)
        ax.grid(alpha=0.3)
        ax.legend(loc="lower left", fontsize=7)
    fig.suptitle(f"Fig 7: aggregate throughput of n synchronized flows ({p.dur_s:g}-s window)")
    save(fig, out_dir / "fig7-throughput.png")
    n_cdf = max(p.ns)
    fig, axes = subplots(1, len(fabrics), figsize=(5.5 * len(fabrics), 4), squeeze=False)
    for ax, fabric in zip(axes[0], fabrics):
        for cc in dc.CCS:
            x = np.sort(runs[(runs["fabric"] == fabric) & (runs["cc"] == cc) & (runs["n"] == n_cdf)]["tool_bps"] / 1e6)
            ax.step(
                x, np.arange(1, len(x) + 1) / max(len(x), 1), where="post", color=dc.CC_COLOR[cc], label=dc.CC_LABEL[cc]
            )
        ax.axvline(LINK_75_BPS / 1e6, color="grey", ls=":", lw=0.8, label="75 % of 1 Gbit/s")
        ax.set_title(dc.FABRIC_LABEL[fabric], fontsize=10)
        ax.set_xlabel("throughput (Mbit/s)")
        ax.set_ylabel("ECDF")
        ax.grid(alpha=0.3)
        ax.legend(loc="upper left")
    fig.suptitle(
        f"Fig 8: CDF of aggregate throughput as the Waterloo DC study's tool reads it, n = {n_cdf} senders, {p.reps} samples"
    )
    save(fig, out_dir / "fig8-cdf.png")
