"""The bql-vs-bbr study's figures: goodput and buffer load over time at one RTT (the paper's Figs. 2
and 3), mean goodput and buffer load against RTT (Figs. 4 to 6), and the paper's figures these redraw
(`SOURCE_FIGURES`), with the values its text gives, as the report shows them beside ours."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ...plots.figures import save, subplots
from ..report import MSS, WIRE
from ..source_figures import SourceFigure, SourcePanel, SourceSeries
from .metrics import _get
from .plan import BBR, CCS, GIG, LABEL, PAPER, SOURCE, _rtt_label


def _time_figure(
    series: list[tuple[dict[str, Any], pd.DataFrame, pd.DataFrame]], rtt: float, path: Path, fig_no: int
) -> None:
    fig, (a1, a2) = subplots(2, 1, figsize=(8, 5.6), sharex=True)
    for tags, ts, q in series:
        if tags["rtt_ms"] != rtt:
            continue
        cc = tags["cc_name"]
        t = ts["t_s"].to_numpy()
        # 1 s moving average of goodput, as an emulator's rate plot shows it.
        dt = float(np.median(np.diff(t))) if len(t) > 1 else 1.0
        w = max(1, int(round(1.0 / dt)))
        g = pd.Series(ts["goodput_bps"].to_numpy()).rolling(w, min_periods=1).mean().to_numpy()
        a1.plot(t, g / 1e6, lw=1, label=LABEL[cc])
        b = q[q["queue"] == "bottleneck"]
        a2.plot(b["t_s"], b["mean_occupancy_bytes"] / 1e6, lw=0.8, label=LABEL[cc])
    a1.axhline(1e9 * MSS / WIRE / 1e6, color="k", ls="--", lw=0.8, label="goodput ceiling")
    a1.set_ylabel("goodput (Mbit/s, 1 s avg)")
    a1.set_ylim(0, 1100)
    a1.legend(fontsize=8, loc="lower right")
    a2.set_ylabel("bottleneck buffer load (MB)")
    a2.set_xlabel("time (s)")
    a2.set_yscale("symlog", linthresh=0.1)
    a2.set_ylim(bottom=0)
    a2.legend(fontsize=8)
    fig.suptitle(f"Fig. {fig_no} redrawn: BBW 1 Gbit/s, base RTT {_rtt_label(rtt)}, 80 MB drop-tail")
    save(fig, path)


def _vs_rtt_plot(df: pd.DataFrame, title: str, with_queue: bool, rate_bps: float, paper: bool = False) -> Figure:
    """Mean goodput (and mean buffer load) per RTT, a bar per algorithm. ``paper``: the paper's
    values (PAPER) at the RTTs drawn here, as black-outlined diamonds on the same bars."""
    ncols = 2 if with_queue else 1
    fig, axes = subplots(1, ncols, figsize=(5.2 * ncols, 3.8), squeeze=False)
    rtts = sorted(df["rtt_ms"].unique())
    x = np.arange(len(rtts))
    width = 0.38
    for k, cc in enumerate(CCS):
        d = [_get(df, cc, r, "goodput_bps") / 1e6 for r in rtts]
        axes[0][0].bar(x + (k - 0.5) * width, d, width, label=LABEL[cc])
        if with_queue:
            qv = [_get(df, cc, r, "queue_mean_bytes") / 1e3 for r in rtts]
            axes[0][1].bar(x + (k - 0.5) * width, qv, width, label=LABEL[cc])
    if paper:
        for k, cc in enumerate(CCS):
            at = [(i, PAPER[(r, cc)]) for i, r in enumerate(rtts) if (r, cc) in PAPER]
            xs = [x[i] + (k - 0.5) * width for i, _ in at]
            style = dict(ls="none", marker="D", ms=6, mfc="white", mec="black", mew=1.2)
            # One legend entry per panel, for the first algorithm's markers.
            first = k == 0
            axes[0][0].plot(
                xs,
                [case.rate_bps / 1e6 for _, case in at],
                label=f"{SOURCE.name} (line level)" if first else "_",
                **style,
            )
            if with_queue:
                axes[0][1].plot(
                    xs, [case.queue_bytes / 1e3 for _, case in at], label=SOURCE.name if first else "_", **style
                )
    axes[0][0].axhline(rate_bps * MSS / WIRE / 1e6, color="k", ls="--", lw=0.8)
    axes[0][0].set_ylabel("mean goodput (Mbit/s)")
    for ax in axes[0]:
        ax.set_xticks(x, [_rtt_label(r) for r in rtts], fontsize=8)
        ax.set_xlabel("base RTT")
        # Below the axes: inside, the legend would hide bars and the paper's markers.
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, frameon=False)
    if with_queue:
        axes[0][1].set_ylabel("mean buffer load (KB)")
        axes[0][1].set_yscale("log")
    fig.suptitle(title)
    return fig


def _vs_rtt_figure(
    df: pd.DataFrame, path: Path, title: str, with_queue: bool, rate_bps: float, paper: bool = False
) -> None:
    save(_vs_rtt_plot(df, title, with_queue, rate_bps, paper), path)


def _paper_panels(rtts_ms: tuple[int, ...]) -> tuple[SourcePanel, ...]:
    """The paper's mean datarate and mean buffer load at ``rtts_ms`` (from PAPER), as panels."""
    cats = tuple(_rtt_label(r) for r in rtts_ms)
    names = {"bql": "BQL", BBR: "BBR"}
    return (
        SourcePanel(
            "mean datarate (Mbit/s, line level)",
            cats,
            tuple(SourceSeries(names[cc], tuple(PAPER[(r, cc)].rate_bps / 1e6 for r in rtts_ms)) for cc in CCS),
            title="mean datarate",
        ),
        SourcePanel(
            "mean buffer load (KB)",
            cats,
            tuple(SourceSeries(names[cc], tuple(PAPER[(r, cc)].queue_bytes / 1e3 for r in rtts_ms)) for cc in CCS),
            log_y=True,
            title="mean bottleneck buffer load",
        ),
    )


_LINE_LEVEL = (
    "The paper's rates are at the emulator's line level (of 1 Gbit/s); bbrlab plots TCP goodput, whose "
    f"ceiling at 1 Gbit/s is {GIG * MSS / WIRE / 1e6:.1f} Mbit/s."
)


#: The paper's figures this study redraws, with the numbers its text gives (from PAPER).
SOURCE_FIGURES = {
    2: SourceFigure(
        SOURCE,
        "Figure 2",
        "BBW 1 Gbps, base RTT 100 ms.",
        "datarate and bottleneck buffer load over time, BQL and BBR, 75 GB each in about 10 min. The text: "
        "both reach the available bandwidth; mean buffer load 158 KB (BQL) and 705 KB (BBR); mean datarate "
        "994.6 Mbps (BQL) and 964.2 Mbps (BBR); BBR's buffer jitter up to 4 MB, BQL's under 200 KB. " + _LINE_LEVEL,
        _paper_panels((100,)),
    ),
    3: SourceFigure(
        SOURCE,
        "Figure 3",
        "BBW 1 Gbps, base RTT 1000 ms.",
        "the same at 1000 ms. The text: BBR's bandwidth probing leads to a significant rate decay and buffer "
        "jitter up to 30 MB; mean buffer load 0.387 MB (BQL) and 3.633 MB (BBR); mean datarate 972.9 Mbps (BQL) "
        "and 821.6 Mbps (BBR). " + _LINE_LEVEL,
        _paper_panels((1000,)),
    ),
    4: SourceFigure(
        SOURCE,
        "Figure 4",
        "BBW 1 Gbps, 75 GB, summary results.",
        "mean datarate and mean buffer load of BQL and BBR against RTT (0, 100, 500, 1000 ms). The text gives "
        "the values at 100 and 1000 ms only (those of Figs. 2 and 3), re-plotted here; 0 and 500 ms are read "
        "from the image alone, which the document does not carry. " + _LINE_LEVEL,
        _paper_panels((100, 1000)),
    ),
    5: SourceFigure(
        SOURCE,
        "Figure 5",
        "BBW 1 Gbps, PLR 1 %, 60 GB.",
        "mean datarate of BQL and BBR against RTT with 1 % random loss. The text gives no values: the "
        "performance difference between BBR and BQL grows with RTT, and both keep high performance (neither "
        "takes a loss as a congestion signal).",
    ),
    6: SourceFigure(
        SOURCE,
        "Figure 6",
        "BBW 10 Gbps, PLR 0.7 %, 200 GB.",
        "mean datarate of BQL and BBR against RTT at 10 Gbit/s with 0.7 % random loss. The text gives no values: "
        "at 0 ms (≈ 150 µs) BBR's rate drops significantly while BQL keeps high performance; the TCP stacks "
        "of both hosts, tuned to their maximum, were not enough.",
    ),
}
