"""The dc-query figures: mean (± 95 % CI) and 95th-percentile query latency against the number of
workers, and the CDF of the response times at the study's n, each without and with the background
flow and a panel per fabric; and the Waterloo study's figures these redraw (`SOURCE_FIGURES`), as the
report shows them beside ours."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ...plots.figures import save, subplots
from .. import dc_common as dc
from ..source_figures import SourceFigure
from .plan import SOURCE, Plan

_QUERY = (
    "The aggregator requests 1 MiB in all from n workers (1/n MiB each); the response time is the time to "
    "receive all n answers; 100 samples per n, Linux 4.13, Mellanox SX1012 lossless cut-through ToR switches."
)
_NO_NUMBERS = " The report gives no values (the figure's numbers are not in its text)."


def _waterloo(no: int, caption: str, shows: str) -> SourceFigure:
    return SourceFigure(SOURCE, f"Figure {no}", caption, f"{shows} {_QUERY}{_NO_NUMBERS}")


#: The Waterloo DC study's figures this study redraws, by the file of ours that redraws each (each
#: study has this table: the report tests read it). Captions quoted from the report.
SOURCE_FIGURES = {
    "fig1-mean-no-bg": _waterloo(
        1,
        "Mean query latency ± 95 % CI in the absence of background traffic averaged over 100 samples. "
        "Performance is similar between TCP BBR and TCP Cubic.",
        "mean query latency against the number of workers n (1 to 40), TCP BBR and TCP Cubic.",
    ),
    "fig2-p95-no-bg": _waterloo(
        2,
        "95th percentile of query latency in the absence of background traffic over 100 samples. Performance is "
        "similar between TCP BBR and TCP Cubic.",
        "the 95th percentile of query latency against n, TCP BBR and TCP Cubic.",
    ),
    "fig3-cdf-no-bg": _waterloo(
        3,
        "CDF of query latency in the absence of background traffic over 100 samples when querying from 20 worker "
        "nodes. Performance is similar between TCP BBR and TCP Cubic.",
        "the CDF of the response times at n = 20. The text: no sign of incast congestion collapse without "
        "background traffic.",
    ),
    "fig4-mean-bg": _waterloo(
        4,
        "Mean query latency with a single long-lived background flow ± 95 % CI averaged over 100 samples. Mean "
        "query latency is significantly shorter for TCP BBR compared with TCP Cubic.",
        "mean query latency against n (up to 20) with one long-lived flow into the aggregator. The text: a "
        "drastic increase in mean and variance; BBR's advantage is largest at small n and the two converge at "
        "high congestion.",
    ),
    "fig5-p95-bg": _waterloo(
        5,
        "95th percentile of query latency with a single long-lived background flow over 100 samples. Queries are "
        "shorter when using TCP BBR than when using TCP Cubic at the 95th percentile of query latency.",
        "the 95th percentile against n with the background flow.",
    ),
    "fig6-cdf-bg": _waterloo(
        6,
        "CDF of query latency with a single long-lived background flow over 100 samples when querying from 20 "
        "worker nodes.",
        "the CDF at n = 20 with the background flow. The text: a greater share of BBR's queries see very low latency.",
    ),
}


#: What each of our figures draws (its alt text).
_OUR_FIGURE = {
    "fig1-mean-no-bg": "mean query latency ± 95 % CI against the number of workers, no background traffic",
    "fig2-p95-no-bg": "95th percentile of query latency against the number of workers, no background traffic",
    "fig3-cdf-no-bg": "CDF of query latency at the largest number of workers, no background traffic",
    "fig4-mean-bg": "mean query latency ± 95 % CI against the number of workers, one background flow",
    "fig5-p95-bg": "95th percentile of query latency against the number of workers, one background flow",
    "fig6-cdf-bg": "CDF of query latency at the largest number of workers, one background flow",
}


def _vs_n(st: pd.DataFrame, bg: bool, metric: str, path: Path, title: str) -> None:
    fabrics = dc.fabrics_in(st)
    fig, axes = subplots(1, len(fabrics), figsize=(5.5 * len(fabrics), 4), squeeze=False)
    for ax, fabric in zip(axes[0], fabrics):
        d = st[(st["fabric"] == fabric) & (st["bg"] == bg)]
        for cc in dc.CCS:
            c = d[d["cc"] == cc].sort_values("n")
            if metric == "mean":
                ax.errorbar(
                    c["n"],
                    c["mean_s"] * 1e3,
                    yerr=c["ci_s"].fillna(0) * 1e3,
                    marker="o",
                    ms=3,
                    capsize=3,
                    color=dc.CC_COLOR[cc],
                    label=dc.CC_LABEL[cc],
                )
            else:
                ax.plot(c["n"], c["p95_s"] * 1e3, marker="o", ms=3, color=dc.CC_COLOR[cc], label=dc.CC_LABEL[cc])
        ax.set_title(dc.FABRIC_LABEL[fabric], fontsize=10)
        ax.set_xlabel("number of workers (n)")
        ax.set_ylabel("query latency (ms)" + (" — mean ± 95 % CI" if metric == "mean" else " — 95th percentile"))
        col = "mean_s" if metric == "mean" else "p95_s"
        hi = float((d[col] + (d["ci_s"].fillna(0) if metric == "mean" else 0)).max()) * 1e3 if len(d) else 1.0
        lo = float(d[col].min()) * 1e3 if len(d) else 0.0
        if lo > 0 and hi > 20 * lo:
            ax.set_yscale("log")
            ax.set_ylim(lo / 1.5, hi * 1.5)
        else:
            ax.set_ylim(0, hi * 1.15)
        ax.grid(alpha=0.3)
        ax.legend()
    fig.suptitle(title)
    save(fig, path)


def _cdf(q: pd.DataFrame, bg: bool, n: int, path: Path, title: str) -> None:
    fabrics = dc.fabrics_in(q)
    fig, axes = subplots(1, len(fabrics), figsize=(5.5 * len(fabrics), 4), squeeze=False)
    for ax, fabric in zip(axes[0], fabrics):
        d = q[(q["fabric"] == fabric) & (q["bg"] == bg) & (q["n"] == n)]
        for cc in dc.CCS:
            x = np.sort(d[d["cc"] == cc]["response_s"].to_numpy() * 1e3)
            if x.size:
                ax.step(
                    x, np.arange(1, x.size + 1) / x.size, where="post", color=dc.CC_COLOR[cc], label=dc.CC_LABEL[cc]
                )
        ax.set_title(dc.FABRIC_LABEL[fabric], fontsize=10)
        ax.set_xlabel("query latency (ms)")
        ax.set_ylabel("ECDF")
        if len(d) and d["response_s"].max() > 20 * d["response_s"].min():
            ax.set_xscale("log")
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend()
    fig.suptitle(title)
    save(fig, path)


def _figures(st: pd.DataFrame, q: pd.DataFrame, p: Plan, out: Path) -> None:
    """Figs. 1-6 redrawn from this run's statistics ``st`` and completed queries ``q``."""
    n = p.n_cdf
    _vs_n(st, False, "mean", out / "fig1-mean-no-bg.png", "Fig 1: mean query latency ± 95 % CI, no background traffic")
    _vs_n(
        st, False, "p95", out / "fig2-p95-no-bg.png", "Fig 2: 95th percentile of query latency, no background traffic"
    )
    _cdf(q, False, n, out / "fig3-cdf-no-bg.png", f"Fig 3: CDF of query latency, n = {n}, no background traffic")
    _vs_n(st, True, "mean", out / "fig4-mean-bg.png", "Fig 4: mean query latency ± 95 % CI, one background flow")
    _vs_n(st, True, "p95", out / "fig5-p95-bg.png", "Fig 5: 95th percentile of query latency, one background flow")
    _cdf(q, True, n, out / "fig6-cdf-bg.png", f"Fig 6: CDF of query latency, n = {n}, one background flow")
