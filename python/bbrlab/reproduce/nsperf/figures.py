"""nsperf's figures redrawn (graph_tests.sh): each scenario's plotted metric against its swept
parameter, one line per algorithm, written next to the report; and the nsperf plots they redraw
(`SOURCE_FIGURES`), as the report shows them beside ours."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ...plots.figures import save, subplots
from ..source_figures import SourceFigure
from .plan import SOURCE, Config

#: (scenario, metric column, y label, scale, log x, x label, file) as graph_tests.sh plots them.
FIGURES = (
    ("coexist", "throughput_bps", "BBR flow throughput (Mbit/s)", 1e-6, True, "buffer (BDP)", "coexist.png"),
    ("random_loss", "throughput_bps", "throughput (Mbit/s)", 1e-6, True, "random loss (%)", "random_loss.png"),
    ("shallow", "retrans_pct", "retransmits (%)", 1.0, True, "flows", "shallow.png"),
    ("bufferbloat", "p50_srtt_ms", "p50 srtt (ms)", 1.0, True, "buffer (BDP)", "bufferbloat.png"),
    ("ecn_bulk", "p50_srtt_ms", "p50 srtt (ms)", 1.0, True, "flows", "ecn_bulk_rtt.png"),
    ("ecn_bulk", "retrans_pct", "retransmits (%)", 1.0, True, "flows", "ecn_bulk_retrans.png"),
)


#: Each scenario as run_tests.sh runs it (the module docstring's table, in one line).
_SCENARIO = {
    "coexist": "a CUBIC flow, then a BBR flow 2 s later, 50 Mbit/s, 30 ms, buffer swept over 0.1–16 BDP",
    "random_loss": "one flow, 1 Gbit/s, 100 ms, 1 BDP, random loss swept over 0.00001–20 %, 10 repetitions",
    "shallow": "1–100 flows of one algorithm, 1 Gbit/s, 100 ms, a 0.02 BDP (165-packet) buffer",
    "bufferbloat": "two flows 2 s apart, 50 Mbit/s, 30 ms, buffer swept over 1–100 BDP",
    "ecn_bulk": "1–100 ECN flows 5 ms apart, 1 Gbit/s, 1 ms, CoDel marking CE above 242 µs, 10 repetitions",
}


def _nsperf_plot(name: str, ylabel: str, xlabel: str) -> SourceFigure:
    return SourceFigure(
        SOURCE,
        f"graph_tests.sh's {name} plot ({ylabel})",
        "",
        f"{ylabel} against {xlabel}, one line per algorithm run_tests.sh runs, from "
        f"nsperf.py's ss samples every 0.1 s. The scenario: {_SCENARIO[name]}. nsperf is a test harness: it "
        "publishes no figure or numbers, only the scripts that draw this plot from a run.",
    )


#: The nsperf plots these figures redraw, by our file (each study has this table: the report tests
#: read it).
SOURCE_FIGURES = {fname: _nsperf_plot(name, ylabel, xlabel) for name, _, ylabel, _, _, xlabel, fname in FIGURES}


def draw(points: pd.DataFrame, cfg: Config, out: Path, kernel: pd.DataFrame | None = None) -> list[str]:
    """One PNG per figure; with ``kernel`` (the same points on real Linux), each algorithm's
    kernel line dashed beside its simulator line."""
    files = []
    by_name = {sc.name: sc for sc in cfg.scenarios()}
    for name, col, ylabel, scale, logx, xlabel, fname in FIGURES:
        sc = by_name[name]
        fig, ax = subplots(figsize=(6, 3.8))
        for i, cc in enumerate(sc.ccs):
            for backend, frame, style in (("sim", points, "-"), ("kernel", kernel, "--")):
                if frame is None:
                    continue
                d = frame[(frame["scenario"] == name) & (frame["cc"] == cc)].sort_values("x")
                label = cc if kernel is None else f"{cc} ({backend})"
                ax.plot(d["x"], d[col] * scale, style, marker="o", color=f"C{i}", label=label)
        if col == "throughput_bps":
            ax.set_ylim(0, sc.rate_bps * scale * 1.05)
        else:
            ax.set_ylim(bottom=0)
        if logx:
            ax.set_xscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(f"{name}: {sc.rate_bps / 1e6:g} Mbit/s, {sc.rtt_s * 1e3:g} ms")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
        save(fig, out / fname, dpi=100)
        files.append(fname)
    return files
