"""The sweep's figures: one PNG per metric in `METRICS` (retransmission rate, average and p95
srtt, throughput against the goodput ceiling, CE rate, Jain's index), each algorithm's value against
the number of flows on a log axis, written next to the report; and the slides' plots they redraw
(`SOURCE_FIGURES`, one per metric), as the report shows them beside ours."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ...plots.figures import save, subplots
from ..report import MSS, WIRE
from ..source_figures import SourceFigure, beside
from .metrics import METRICS
from .plan import LABEL, SOURCE, Config

_SETUP = (
    "a plot against num_flows of DCTCP, bbr2_old and bbr2_new (2 senders, 1 receiver, 50 Gbit/s NICs on one "
    "switch that marks CE when its instantaneous queue exceeds 80 KB; N 60-second bulk netperf flows; metrics "
    "from ss, srtt sampled every 100 ms). The slides give no numbers, only the plot and one line:"
)


def _slide(title: str, plot: str, line: str) -> SourceFigure:
    return SourceFigure(
        SOURCE,
        f"slide “{title}” (plot {plot})",
        "Many flows sharing small BDPs: Experiment results",
        f"{_SETUP} {line}",
    )


#: The slides' plots, by the file of ours that redraws each (each study has this table: the report
#: tests read it).
SOURCE_FIGURES = {
    "retransmission_rate.png": _slide(
        "retransmission rate",
        "retransmission_rate",
        "“bbr2_new has a much lower retransmission rate than DCTCP, for num_flows ≥ 320”.",
    ),
    "average_rtt.png": _slide("average RTT", "average_rtt", "“bbr2_new has a lower average RTT, for num_flows ≥ 160”."),
    "p95_rtt.png": _slide("p95 RTT", "95% rtt", "“bbr2_new has a lower 95% RTT, for num_flows ≥ 160”."),
    "throughput.png": _slide("throughput", "throughput", "“All variants have similar throughputs”."),
    "ce_rate.png": _slide(
        "ECN mark rate",
        "ce_rate",
        "“DCTCP and bbr2_new avoid saturation of the congestion experienced (CE) signal”.",
    ),
    "jain_fairness.png": _slide(
        "fairness", "fairness", "“All three variants have reasonable, though not ideal, fairness”."
    ),
}


def figure_pairs(files: list[str]) -> str:
    """Each of our figures beside the slide it redraws, in ``files``' order."""
    titles = {fname: title for _, title, fname, _, _ in METRICS}
    return "\n\n".join(
        beside(SOURCE_FIGURES[f], f"![bbrlab's {titles[f]} against the number of flows, per algorithm]({f})")
        for f in files
    )


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
