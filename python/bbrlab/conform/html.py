"""``conform.html``: per case and algorithm, the verdict and the state timeline that decided it —
the phases as coloured bands over time, the pacing rate and cwnd over them — as inline SVG, one
self-contained page (no scripts, no external files).

Lines are thinned to at most :data:`MAX_POINTS` points per plot (every n-th ACK): the page is
for looking, the checks read the full trace.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .cases import CASES
from .trace import Run

__all__ = ["write_html"]

#: Points per line in a plot.
MAX_POINTS = 1500
#: Plot size, px.
WIDTH, HEIGHT = 900, 160
#: Band colours by phase (the same phase has the same colour in every plot).
PHASE_COLOURS = {
    "startup": "#f4a582",
    "drain": "#92c5de",
    "probe_down": "#d1e5f0",
    "probe_cruise": "#e0e0e0",
    "probe_refill": "#fddbc7",
    "probe_up": "#d6604d",
    "probe_bw": "#e0e0e0",
    "probe_rtt": "#4393c3",
}


def _polyline(x: np.ndarray, y: np.ndarray, t1: float, y1: float, colour: str) -> str:
    step = max(len(x) // MAX_POINTS, 1)
    xs, ys = x[::step], y[::step]
    pts = " ".join(f"{WIDTH * a / t1:.1f},{HEIGHT - HEIGHT * b / y1:.1f}" for a, b in zip(xs, ys) if np.isfinite(b))
    return f'<polyline fill="none" stroke="{colour}" stroke-width="1" points="{pts}"/>'


def _svg(run: Run) -> str:
    t = run.col("t_s")
    if not len(t):
        return "<p>no ACKs traced</p>"
    t1 = float(t[-1]) or 1.0
    parts = [f'<svg width="{WIDTH}" height="{HEIGHT}" xmlns="http://www.w3.org/2000/svg">']
    for e in run.episodes():
        x0 = WIDTH * float(t[e.start]) / t1
        x1 = WIDTH * float(t[e.end] if e.end < len(t) else t1) / t1
        colour = PHASE_COLOURS.get(e.phase, "#ffffff")
        parts.append(
            f'<rect x="{x0:.1f}" y="0" width="{max(x1 - x0, 0.5):.1f}" height="{HEIGHT}" fill="{colour}">'
            f"<title>{html.escape(e.phase)} {t[e.start]:.3f} s</title></rect>"
        )
    rate, cwnd = run.col("pacing_rate_bps"), run.col("cwnd_pkts").astype(float)
    rate_max = float(np.nanmax(rate)) or 1.0
    cwnd_max = float(np.nanmax(cwnd)) or 1.0
    parts.append(_polyline(t, rate, t1, rate_max * 1.05, "#b2182b"))
    parts.append(_polyline(t, cwnd, t1, cwnd_max * 1.05, "#2166ac"))
    parts.append("</svg>")
    legend = (
        f"<small>0–{t1:.1f} s; <span style='color:#b2182b'>pacing rate</span> (top {rate_max / 1e6:.2f} Mbit/s), "
        f"<span style='color:#2166ac'>cwnd</span> (top {cwnd_max:.0f} packets)</small>"
    )
    return "".join(parts) + "<br>" + legend


def write_html(rows: Sequence[Any], runs: Mapping[tuple[str, str], Run], path: Path) -> Path:
    """Write the page for ``rows`` (``Row``s of the simulator) with each case's run from
    ``runs`` (keyed by scenario and algorithm)."""
    scenario_of = {c.id: c.scenario for c in CASES}
    key = " ".join(
        f"<span style='background:{c};padding:0 4px'>{html.escape(p)}</span>" for p, c in PHASE_COLOURS.items()
    )
    out = [
        "<!doctype html><meta charset='utf-8'><title>bbrlab conform</title>",
        "<style>body{font-family:sans-serif;margin:1em}h2{margin-top:1.5em}.pass{color:green}"
        ".fail{color:#b2182b;font-weight:bold}.na{color:gray}</style>",
        "<h1>BBR draft Appendix A: state timelines</h1>",
        f"<p>Phases: {key}</p>",
    ]
    for r in rows:
        verdict_class = {"pass": "pass", "fail": "fail"}.get(r.verdict, "na")
        out.append(
            f"<h2>{html.escape(r.case)} · {html.escape(r.algorithm)} · "
            f"<span class='{verdict_class}'>{html.escape(r.verdict)}</span></h2>"
            f"<p>{html.escape(r.observed)}<br><small>criterion: {html.escape(r.criterion)}</small></p>"
        )
        scn = scenario_of.get(r.case)
        run = runs.get((scn, r.algorithm)) if scn is not None else None
        if run is not None and r.verdict != "not applicable":
            out.append(_svg(run))
    path.write_text("\n".join(out), encoding="utf-8")
    return path
