"""The wan-loss figures: goodput heatmaps over RTT × loss per algorithm (the blog's host buffers and
unlimited ones), and goodput against random loss beside link · (1 − p) and the Mathis bound; and
the blog's results table this study redraws (`SOURCE_FIGURES`), with the 140 ms numbers its text
gives, as the report shows it beside ours."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from ...plots.figures import save, subplots
from ..report import MSS, WIRE
from ..source_figures import SourceFigure, SourcePanel, SourceSeries
from .plan import BLOG_140MS, SOURCE


def _heatmaps(df: pd.DataFrame, ccs: list[str], mode: str, path: Path, link_bps: float) -> None:
    d = df[df["buffers"] == mode]
    rtts = sorted(d["rtt_ms"].unique())
    losses = sorted(d["loss_pct"].unique())
    fig, axes = subplots(1, len(ccs), figsize=(4.2 * len(ccs), 3.6), squeeze=False)
    for ax, cc in zip(axes[0], ccs):
        m = np.full((len(rtts), len(losses)), np.nan)
        for _, r in d[d["cc"] == cc].iterrows():
            m[rtts.index(r["rtt_ms"]), losses.index(r["loss_pct"])] = r["goodput_bps"] / 1e6
        im = ax.imshow(
            np.log10(np.maximum(m, 0.01)),
            cmap="viridis",
            vmin=-1,
            vmax=math.log10(link_bps / 1e6),
            aspect="auto",
            origin="lower",
        )
        for i in range(len(rtts)):
            for j in range(len(losses)):
                v = m[i, j]
                if v == v:
                    ax.text(
                        j,
                        i,
                        f"{v:.0f}" if v >= 10 else f"{v:.1f}",
                        ha="center",
                        va="center",
                        color="white" if v < link_bps / 1e6 / 10 else "black",
                        fontsize=8,
                    )
        ax.set_xticks(range(len(losses)), [f"{x:g}%" for x in losses])
        ax.set_yticks(range(len(rtts)), [f"{x:g} ms" for x in rtts])
        ax.set_xlabel("random loss")
        ax.set_title(cc)
    axes[0][0].set_ylabel("RTT")
    fig.suptitle(
        f"goodput (Mbit/s), 2.5 Gbit/s path, {'blog host buffers (rcvbuf 6 MiB)' if mode == 'blog' else 'unlimited socket buffers'}"
    )
    fig.colorbar(im, ax=axes[0].tolist(), label="log10 Mbit/s", shrink=0.85)
    save(fig, path)


def _sweep_plot(df: pd.DataFrame, ccs: list[str], path: Path, rate_bps: float, rtt_s: float) -> None:
    fig, ax = subplots(figsize=(7, 4.2))
    ceiling = rate_bps * MSS / WIRE
    for cc in ccs:
        d = df[df["cc"] == cc].sort_values("loss_pct")
        ax.plot(d["loss_pct"], d["goodput_bps"] / 1e6, marker="o", label=cc)
    xs = np.logspace(-3, math.log10(20), 100)
    ax.plot(xs, ceiling * (1 - xs / 100) / 1e6, "k--", lw=1, label="link · (1 − p)")
    mathis = MSS * 8 / rtt_s * math.sqrt(1.5) / np.sqrt(xs / 100)
    ax.plot(xs, np.minimum(mathis, ceiling) / 1e6, ":", color="gray", lw=1, label="Mathis (Reno)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("random loss rate (%)")
    ax.set_ylabel("goodput (Mbit/s)")
    ax.set_title(f"goodput vs random loss, {rate_bps / 1e6:.0f} Mbit/s, {rtt_s * 1e3:.0f} ms RTT")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    save(fig, path)


def _blog_panel() -> SourcePanel:
    """The blog's 140 ms numbers (BLOG_140MS) as one panel: loss on x, CUBIC and BBR, Mbit/s."""
    losses = sorted({loss for _, _, loss, _ in BLOG_140MS})
    names = {"cubic": "CUBIC", "bbr1": "BBR"}
    rate = {(cc, loss): bps for _, cc, loss, bps in BLOG_140MS}
    return SourcePanel(
        "throughput (Mbit/s, iperf3 30 s average)",
        tuple("no loss" if loss == 0 else f"{loss:g} % loss" for loss in losses),
        tuple(SourceSeries(name, tuple(rate[(cc, loss)] / 1e6 for loss in losses)) for cc, name in names.items()),
        log_y=True,
        title="140 ms RTT (netem 70 ms each way)",
    )


#: The blog's figure this study redraws: its results table, with the 140 ms numbers its text gives.
_RESULTS_TABLE = SourceFigure(
    SOURCE,
    "results table",
    "Throughput Test results with various congestion control algorithms",
    "a table, published as an image (so not in the document's text), of iperf3 throughput per congestion "
    "control algorithm, latency and packet loss. The text gives four results, all at 140 ms (re-plotted): "
    "347 Mbit/s (CUBIC) and 340 Mbit/s (BBR) without loss, 1.23 Mbit/s (CUBIC) and 153 Mbit/s (BBR) with "
    "1.5 % loss on the sender; its first test, before any latency was added, gave 2.35 Gbit/s. "
    "bbrlab's heatmaps redraw the table as RTT × loss per algorithm.",
    (_blog_panel(),),
)
#: The source's figures this study redraws (every study has this table: the report tests read it).
SOURCE_FIGURES = {"results table": _RESULTS_TABLE}
