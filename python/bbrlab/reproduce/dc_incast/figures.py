"""The dc-incast figures: Figure 7 (mean ± 95 % CI of the aggregate throughput against n, ours
beside the Waterloo study's) and Figure 8 (the CDF of the samples at the largest n); and the
Waterloo study's figures they redraw (`SOURCE_FIGURES`), as the report shows them beside ours."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ...plots.figures import save, subplots
from .. import dc_common as dc
from ..source_figures import SourceFigure, SourcePanel, SourceSeries
from .plan import LINK_75_BPS, SEED_READINGS, SOURCE, Plan

_INCAST = (
    "n senders (1 to 20) each send to one receiver at once; 100 samples per n, the throughput as the study's "
    "own aggregator tool reads it, Linux 4.13, Mellanox SX1012 lossless cut-through ToR switches."
)
#: Figure 8's n (its caption: "when receiving data from 20 nodes").
FIG8_N = 20


def _fig8_panel() -> SourcePanel:
    """The share of Figure 8's samples at ≥ 75 % of the link, per algorithm, from SEED_READINGS."""
    return SourcePanel(
        "share of samples ≥ 750 Mbit/s",
        (f"n = {FIG8_N}",),
        tuple(SourceSeries(dc.CC_LABEL[cc], (SEED_READINGS[cc][FIG8_N][1],)) for cc in dc.CCS),
        title="the study's data at n = 20",
    )


#: The Waterloo DC study's figures this study redraws (each study has this table: the report tests
#: read it). Captions quoted from the report.
SOURCE_FIGURES = {
    7: SourceFigure(
        SOURCE,
        "Figure 7",
        "Mean throughput ± 95 % CI. Throughput is negatively affected in both TCP Cubic and TCP BBR, though TCP "
        "BBR performs significantly better than TCP Cubic for n ≥ 10.",
        "mean aggregate throughput against n, TCP BBR and TCP Cubic. " + _INCAST + " The report's text gives no "
        "values; the study's published data (its repository's CSVs) give the mean per n.",
        on_bbrlab_axes="the × markers labelled “the Waterloo DC study's measurement”, the mean per n from the "
        "study's published data",
    ),
    8: SourceFigure(
        SOURCE,
        "Figure 8",
        "CDF of throughput over 100 samples when receiving data from 20 nodes. A smaller fraction of TCP BBR flows "
        "are affected by throughput collapse compared to TCP Cubic, where less than half of transfers are able to "
        "achieve 75 % of bottleneck bandwidth.",
        f"the CDF of the aggregate throughput at n = {FIG8_N}. " + _INCAST + " The report's text gives one "
        "reading (under half of Cubic's samples reach 75 % of the link); re-plotted here is that share per "
        "algorithm from the study's published data.",
        (_fig8_panel(),),
        numbers_from="the study's published data",
    ),
}


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
