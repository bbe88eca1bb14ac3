"""PNG plots of one run (matplotlib through :mod:`bbrlab.figures`, no pyplot, no pandas).

goodput.png  per-flow goodput over time (past 12 flows: each algorithm's flows summed), with
             the link rate
cwnd.png     cwnd and bytes in flight per flow (with the BDP for reference)
rtt.png      smoothed and per-interval RTT per flow
queue.png    the shared queue as queueing delay (ms; KB on the right axis), and its drops — or,
             on a lossless fabric, the PAUSE frames sent and received per second

Each figure has a function that returns it (``goodput_figure`` …; what the tests inspect) and
:func:`plot_all` saves them. A run's tables may be pandas DataFrames (a :class:`bbrlab.Result`) or
plain ``{column: array}`` mappings (:class:`PlotData`, what the CLI hands to its plot process,
see plotworker.py); the code below reads columns as numpy arrays only, so drawing needs neither
pandas nor the simulator.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

if TYPE_CHECKING:
    from matplotlib.figure import Figure

# matplotlib (through .figures) is imported by the functions that draw: the CLI's process reduces a
# run to PlotData here without loading it (plotworker.py), and that saves it 0.5-0.8 s.

__all__ = ["plot_all", "plot_data", "PlotData", "PLOTS", "FIGURES"]

PLOTS = ("goodput.png", "cwnd.png", "rtt.png", "queue.png")

# Past this many flows, individual lines are unreadable: draw one line per algorithm instead.
_MAX_LINES = 12

#: The columns the plots read, per table (what plot_data() keeps; each flow's algorithm is kept
#: once per flow, not once per row).
PLOT_COLUMNS = {
    "timeseries": ("t_s", "flow", "goodput_bps", "cwnd_bytes", "inflight_bytes", "srtt_ms", "rtt_ms"),
    "queue": ("t_s", "queue", "occupancy_bytes", "mean_occupancy_bytes", "max_occupancy_bytes", "drops",
              "random_losses", "ce_marks", "pause_frames"),
}


class Run(Protocol):
    """What the plots read from a run. `bbrlab.Result` has it; naming the shape here instead of
    importing results.py keeps the import one-way (results.py imports this module to save plots)."""

    summary: dict[str, Any]
    timeseries: Any  # a DataFrame or a {column: array} mapping
    queue: Any


@dataclass
class PlotData:
    """A run reduced to what the plots read: the summary, the plotted columns as numpy arrays
    (categorical columns as their labels) and each flow's algorithm. Picklable, free of pandas."""

    summary: dict[str, Any]
    timeseries: dict[str, np.ndarray]
    queue: dict[str, np.ndarray]
    #: flow id -> algorithm ("" when unknown), in id order; from the time series when not given
    flows: dict[int, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.flows and "flow" in self.timeseries:
            self.flows = _flow_algorithms(self.timeseries)


def _column(table: Any, name: str) -> np.ndarray:
    """A column as a numpy array: a view of a numeric one; a pandas categorical's labels as
    objects (one reference per row to the shared label strings)."""
    col = table[name]
    cat = getattr(col, "cat", None)
    if cat is not None:
        labels = np.asarray([str(c) for c in cat.categories] + [""], dtype=object)
        return labels[np.asarray(cat.codes)]  # code -1 (missing) → the trailing ""
    return np.asarray(col)


def _flow_algorithms(ts: Any) -> dict[int, str]:
    """Each flow in ``ts`` (a table with ``flow`` and maybe ``cc``) and its algorithm."""
    if "flow" not in ts:
        return {}
    ids, first = np.unique(_column(ts, "flow"), return_index=True)
    if "cc" not in ts:
        return dict.fromkeys(ids.tolist(), "")
    cc = ts["cc"]
    cat = getattr(cc, "cat", None)
    if cat is not None:  # the label of each flow's first row, without decoding every row
        labels = [str(c) for c in cat.categories] + [""]
        names = [labels[c] for c in np.asarray(cat.codes)[first]]
    else:
        names = [str(x) for x in np.asarray(cc)[first]]
    return dict(zip(ids.tolist(), names))


def plot_data(run: Run) -> PlotData:
    """The part of ``run`` the plots read."""
    if isinstance(run, PlotData):
        return run

    def columns(table: Any, names: tuple[str, ...]) -> dict[str, np.ndarray]:
        return {n: _column(table, n) for n in names if table is not None and n in table}

    return PlotData(
        summary=run.summary,
        timeseries=columns(run.timeseries, PLOT_COLUMNS["timeseries"]),
        queue=columns(run.queue, PLOT_COLUMNS["queue"]),
        flows=_flow_algorithms(run.timeseries) if run.timeseries is not None else {},
    )


def _rows(cols: Mapping[str, np.ndarray]) -> int:
    return len(next(iter(cols.values()))) if cols else 0


def _scenario(run: PlotData) -> dict[str, Any]:
    return run.summary.get("scenario") or {}


# ------------------------------------------------------------ layout

# Margins in inches, fixed: constrained layout measured every text of a figure to place the axes
# and roughly doubled the time to draw one (bbrlab run's plots were most of its wall time).
_WIDTH_IN, _ROW_IN = 9.0, 3.2
_LEFT_IN, _RIGHT_IN, _RIGHT_AXIS_IN, _TOP_IN, _BOTTOM_IN, _NOTE_IN = 0.8, 0.2, 0.75, 0.3, 0.5, 0.25


def _figure(rows: int = 1, *, right_axis: bool = False, note: bool = False) -> tuple[Figure, Any]:
    from .figures import DPI, new_figure

    height = _ROW_IN * rows + (_NOTE_IN if note else 0)
    fig = new_figure((_WIDTH_IN, height), dpi=DPI)
    axes = fig.subplots(rows, 1, sharex=True, squeeze=False)[:, 0]
    fig.subplots_adjust(
        left=_LEFT_IN / _WIDTH_IN,
        right=1 - (_RIGHT_AXIS_IN if right_axis else _RIGHT_IN) / _WIDTH_IN,
        top=1 - _TOP_IN / height,
        bottom=(_BOTTOM_IN + (_NOTE_IN if note else 0)) / height,
        hspace=0.08,
    )
    return fig, axes


def _finish(fig: Figure, axes: Any, title: str) -> Figure:
    # An explicit y: matplotlib otherwise measures every tick label to see whether the title must move up.
    axes[0].set_title(title, fontsize=10, y=1.0)
    axes[-1].set_xlabel("time (s)")
    for ax in axes:
        # At most 5 intervals up the y axis: every tick is an object to make and a label to render.
        ax.locator_params(axis="y", nbins=5)
        ax.grid(True, alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7, loc="best")
    return fig


def _title(run: PlotData, what: str) -> str:
    name = run.summary.get("name", "")
    return f"{name}: {what}" if name else what


# ------------------------------------------------------------ series


def _group(t: np.ndarray, v: np.ndarray, how: str) -> tuple[np.ndarray, np.ndarray]:
    """``v`` summed or averaged per distinct ``t`` (NaN values skipped, as "no sample")."""
    times, at = np.unique(t, return_inverse=True)
    ok = ~np.isnan(v)
    total = np.bincount(at[ok], weights=v[ok], minlength=len(times))
    if how == "sum":
        return times, total
    count = np.bincount(at[ok], minlength=len(times))
    with np.errstate(invalid="ignore", divide="ignore"):
        return times, np.where(count > 0, total / np.maximum(count, 1), np.nan)


def _series(run: PlotData, column: str, many: str) -> Iterator[tuple[str, np.ndarray, np.ndarray]]:
    """(label, t_s, values) per flow; past _MAX_LINES flows, per algorithm: its flows' ``many``
    ("sum" or "mean") at each sample time."""
    ts = run.timeseries
    if column not in ts or not run.flows:
        return
    flow, t, v = ts["flow"], ts["t_s"], np.asarray(ts[column], dtype=float)
    if len(run.flows) <= _MAX_LINES:
        for f, cc in run.flows.items():
            rows = flow == f
            yield (f"flow {f} ({cc})" if cc else f"flow {f}"), t[rows], v[rows]
        return
    by_algorithm: dict[str, list[int]] = {}
    for f, cc in run.flows.items():
        by_algorithm.setdefault(cc or "all", []).append(f)
    for cc, flows in by_algorithm.items():
        rows = np.isin(flow, flows)
        times, values = _group(t[rows], v[rows], many)
        yield f"{cc} ({many} of {len(flows)} flows)", times, values


# ------------------------------------------------------------ figures


def goodput_figure(run: Run) -> Figure:
    data = plot_data(run)
    rate = _scenario(data).get("bottleneck_rate_bps")
    many = len(data.flows) > _MAX_LINES
    lines = list(_series(data, "goodput_bps", "sum"))
    points = np.concatenate([v for _, _, v in lines]) if lines else np.zeros(0)
    above = int(np.sum(points > rate)) if rate else 0
    fig, axes = _figure(note=above > 0)
    for label, t, v in lines:
        axes[0].plot(t, v / 1e6, label=label, lw=1)
    if rate:
        axes[0].axhline(rate / 1e6, color="grey", ls="--", lw=0.8, label=f"link rate ({rate / 1e6:g} Mbit/s)")
    if above:
        # A per-interval figure above the link rate is not a measurement error: the receiver
        # releases at once the bytes it held behind a hole, when the hole is repaired.
        fig.text(0.01, 0.02, f"{above} of {np.sum(~np.isnan(points))} points lie above the link rate: when a loss is "
                 "repaired, the receiver delivers at once the bytes it held behind it, in one interval.", fontsize=7)
    axes[0].set_ylabel("goodput (Mbit/s)")
    axes[0].set_ylim(bottom=0)
    what = "goodput per algorithm (sum of its flows)" if many else "goodput per flow"
    return _finish(fig, axes, _title(data, what))


def cwnd_figure(run: Run) -> Figure:
    data = plot_data(run)
    fig, axes = _figure(2)
    for label, t, v in _series(data, "cwnd_bytes", "mean"):
        axes[0].plot(t, v / 1e3, label=label, lw=1)
    for label, t, v in _series(data, "inflight_bytes", "mean"):
        axes[1].plot(t, v / 1e3, label=label, lw=1)
    bdp = _scenario(data).get("bdp_bytes")
    if bdp:
        for ax in axes:
            ax.axhline(bdp / 1e3, color="grey", ls="--", lw=0.8, label="BDP")
    axes[0].set_ylabel("cwnd (KB)")
    axes[1].set_ylabel("bytes in flight (KB)")
    for ax in axes:
        ax.set_ylim(bottom=0)
    return _finish(fig, axes, _title(data, "congestion window and bytes in flight"))


def rtt_figure(run: Run) -> Figure:
    data = plot_data(run)
    fig, axes = _figure()
    if "srtt_ms" in data.timeseries:
        # Before a flow has its first RTT sample its srtt is 0: blank it rather than draw a dive to 0.
        srtt = np.asarray(data.timeseries["srtt_ms"], dtype=float)
        data = replace(data, timeseries={**data.timeseries, "srtt_ms": np.where(srtt > 0, srtt, np.nan)})
    raw = {label: (t, v) for label, t, v in _series(data, "rtt_ms", "mean")}
    for label, t, v in _series(data, "srtt_ms", "mean"):
        (line,) = axes[0].plot(t, v, label=f"{label} srtt", lw=1.2)
        if label in raw:
            # The per-interval mean of raw samples shows what srtt smooths away (NaN = no sample).
            axes[0].plot(*raw[label], lw=0.6, alpha=0.4, color=line.get_color())
    base = _scenario(data).get("rtt_ms")
    if base is not None:
        axes[0].axhline(base, color="grey", ls="--", lw=0.8, label="base RTT")
    axes[0].set_ylabel("RTT (ms)")
    axes[0].set_ylim(bottom=0)
    return _finish(fig, axes, _title(data, "round-trip time"))


def _per_second(t: np.ndarray, cumulative: np.ndarray) -> np.ndarray:
    """A cumulative count as a rate per second over each sample interval (the run starts at 0)."""
    c = np.asarray(cumulative, dtype=float)
    return np.diff(c, prepend=0.0) / np.diff(np.asarray(t, dtype=float), prepend=0.0)


#: The shared queue of each topology, in the order looked for: the dumbbell's bottleneck, the
#: star's switch port to the aggregator (the core's ``derived()["main_queue"]`` is not saved in a
#: run directory, so plots of saved runs find it by name).
MAIN_QUEUES = ("bottleneck", "tor_to_agg")


def main_queue_name(names: Any) -> str | None:
    """The shared queue among a queue table's ``queue`` column (None when there is none)."""
    if names is None:
        return None
    names = np.asarray(names, dtype=object)
    return next((n for n in MAIN_QUEUES if np.any(names == n)), None)


def queue_delay_ms(occupancy_bytes: Any, rate_bps: float) -> np.ndarray:
    """How long the bytes in a queue take to drain at ``rate_bps``: the queueing delay a packet
    arriving behind them waits (the bytes are wire bytes, which the shared link sends at its rate)."""
    return np.asarray(occupancy_bytes, dtype=float) * 8 / rate_bps * 1e3


def queue_figure(run: Run) -> Figure:
    data = plot_data(run)
    q = data.queue
    facts = _scenario(data)
    rate = facts.get("bottleneck_rate_bps")
    fig, axes = _figure(2, right_axis=bool(rate))

    def to_y(occupancy_bytes: Any) -> Any:
        # KB where the rate is unknown.
        return queue_delay_ms(occupancy_bytes, rate) if rate else np.asarray(occupancy_bytes, dtype=float) / 1e3

    main = main_queue_name(q.get("queue"))
    if _rows(q):
        rows = (q["queue"] == main) if main is not None else np.ones(_rows(q), dtype=bool)
        t = q["t_s"][rows]
        for col, style in (("max_occupancy_bytes", dict(lw=0.8, alpha=0.6, label="max in interval")),
                           ("mean_occupancy_bytes", dict(lw=1.2, label="time-weighted mean")),
                           ("occupancy_bytes", dict(lw=0.6, ls=":", label="at sample time"))):
            if col in q:
                axes[0].plot(t, to_y(q[col][rows]), **style)
        pause = np.asarray(q["pause_frames"], dtype=float) if "pause_frames" in q else np.zeros(_rows(q))
        drops = np.asarray(q["drops"], dtype=float)[rows] if "drops" in q else np.zeros(int(rows.sum()))
        # PAUSE replaces drops on a lossless fabric (and wherever only PAUSE happened).
        if facts.get("lossless") or (not drops.any() and pause.any()):
            _pause_panel(axes[1], q, main)
        else:
            if "drops" in q:
                axes[1].plot(t, drops, lw=1, label="buffer drops (cumulative)")
            for col, label in (("random_losses", "random losses (cumulative)"), ("ce_marks", "CE marks (cumulative)")):
                if col in q and q[col][rows].any():
                    axes[1].plot(t, q[col][rows], lw=1, label=label)
            axes[1].set_ylabel("packets")
    buf = facts.get("buffer_bytes")
    if buf:
        axes[0].axhline(float(to_y(buf)), color="grey", ls="--", lw=0.8, label="buffer limit")
    where = "bottleneck" if main in (None, "bottleneck") else main
    if rate:
        axes[0].set_ylabel(f"{where} queueing delay (ms)")
        kb_per_ms = rate / 8 / 1e3 / 1e3
        right = axes[0].secondary_yaxis("right", functions=(lambda ms: ms * kb_per_ms, lambda kb: kb / kb_per_ms))
        right.set_ylabel("queue (KB)")
    else:
        axes[0].set_ylabel(f"{where} queue (KB)")
    for ax in axes:
        ax.set_ylim(bottom=0)
    return _finish(fig, axes, _title(data, f"{where} queue"))


def _pause_panel(ax: Any, q: Mapping[str, np.ndarray], main: str | None) -> None:
    """PAUSE frames per second: sent by the shared port, received by the links it paused (one line
    each, or their mean past _MAX_LINES)."""
    names, t, pause = q["queue"], q["t_s"], np.asarray(q.get("pause_frames", np.zeros(_rows(q))), dtype=float)
    per_s = np.full(len(names), np.nan)
    for n in np.unique(names):
        rows = names == n
        per_s[rows] = _per_second(t[rows], pause[rows])
    if main is not None:
        ax.plot(t[names == main], per_s[names == main], lw=1.2, label=f"{main}: sent")
    paused = [n for n in dict.fromkeys(names.tolist()) if n != main and pause[names == n].any()]
    if len(paused) <= _MAX_LINES:
        for n in paused:
            ax.plot(t[names == n], per_s[names == n], lw=0.8, alpha=0.7, label=f"{n}: received")
    else:
        rows = np.isin(names, paused)
        ax.plot(*_group(t[rows], per_s[rows], "mean"), lw=0.8, label=f"received (mean of {len(paused)} paused links)")
    ax.set_ylabel("PAUSE frames / s")


FIGURES = {"goodput.png": goodput_figure, "cwnd.png": cwnd_figure, "rtt.png": rtt_figure, "queue.png": queue_figure}


def plot_all(run: Run, out_dir: Path, names: Iterable[str] = PLOTS) -> list[Path]:
    """Draw the plots ``names`` (default all) into ``out_dir``; returns the files written."""
    from .figures import save

    data = plot_data(run)
    out_dir = Path(out_dir)
    return [save(FIGURES[name](data), out_dir / name, tight=False) for name in names]
