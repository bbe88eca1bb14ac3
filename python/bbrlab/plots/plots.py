"""PNG plots of one run (drawn by :mod:`bbrlab.plots.chart`: Pillow, no matplotlib, no pandas).

goodput.png  per-flow goodput over time (past 12 flows: each algorithm's flows summed), with
             the link rate
cwnd.png     cwnd and bytes in flight per flow (with the BDP for reference)
rtt.png      smoothed and per-interval RTT per flow
queue.png    the shared queue as queueing delay (ms; KB on the right axis), and its drops — or,
             on a lossless fabric, the PAUSE frames sent and received per second

Each figure has a function that describes it (``goodput_figure`` … return a
:class:`bbrlab.plots.chart.Chart`: its panels, lines and labels, what the tests inspect) and
:func:`plot_all` draws and saves them. A run is read through :class:`PlotData` (numpy columns),
from a :class:`bbrlab.Result` without building its pandas tables.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from .chart import COLORS, Chart, HLine, Panel, render

__all__ = ["plot_all", "plot_data", "PlotData", "PLOTS", "FIGURES"]

PLOTS = ("goodput.png", "cwnd.png", "rtt.png", "queue.png")

# Past this many flows, individual lines are unreadable: draw one line per algorithm instead.
_MAX_LINES = 12

#: The columns the plots read, per table (what plot_data() keeps; each flow's algorithm is kept
#: once per flow, not once per row).
PLOT_COLUMNS = {
    "timeseries": ("t_s", "flow", "goodput_bps", "cwnd_bytes", "inflight_bytes", "srtt_ms", "rtt_ms"),
    "queue": (
        "t_s",
        "queue",
        "occupancy_bytes",
        "mean_occupancy_bytes",
        "max_occupancy_bytes",
        "drops",
        "random_losses",
        "ce_marks",
        "pause_frames",
    ),
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
    """The part of ``run`` the plots read (from a Result's numpy columns: no pandas built)."""
    if isinstance(run, PlotData):
        return run
    table = getattr(run, "table", None)
    ts, queue = (table("timeseries"), table("queue")) if callable(table) else (run.timeseries, run.queue)

    def columns(t: Any, names: tuple[str, ...]) -> dict[str, np.ndarray]:
        return {n: _column(t, n) for n in names if t is not None and n in t}

    return PlotData(
        summary=run.summary,
        timeseries=columns(ts, PLOT_COLUMNS["timeseries"]),
        queue=columns(queue, PLOT_COLUMNS["queue"]),
        flows=_flow_algorithms(ts) if ts is not None else {},
    )


def _rows(cols: Mapping[str, np.ndarray]) -> int:
    return len(next(iter(cols.values()))) if cols else 0


def _scenario(run: PlotData) -> dict[str, Any]:
    return run.summary.get("scenario") or {}


# ------------------------------------------------------------ layout


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


def goodput_figure(run: Run) -> Chart:
    data = plot_data(run)
    rate = _scenario(data).get("bottleneck_rate_bps")
    many = len(data.flows) > _MAX_LINES
    lines = list(_series(data, "goodput_bps", "sum"))
    points = np.concatenate([v for _, _, v in lines]) if lines else np.zeros(0)
    above = int(np.sum(points > rate)) if rate else 0
    panel = Panel(ylabel="goodput (Mbit/s)")
    for label, t, v in lines:
        panel.add(t, v / 1e6, label)
    if rate:
        panel.hlines.append(HLine(rate / 1e6, f"link rate ({rate / 1e6:g} Mbit/s)"))
    # A per-interval figure above the link rate is not a measurement error: the receiver
    # releases at once the bytes it held behind a hole, when the hole is repaired.
    note = (
        (
            f"{above} of {np.sum(~np.isnan(points))} points lie above the link rate: when a loss is repaired, "
            "the receiver delivers at once the bytes it held behind it, in one interval."
        )
        if above
        else None
    )
    what = "goodput per algorithm (sum of its flows)" if many else "goodput per flow"
    return Chart(_title(data, what), [panel], note=note)


def cwnd_figure(run: Run) -> Chart:
    data = plot_data(run)
    panels = [Panel(ylabel="cwnd (KB)"), Panel(ylabel="bytes in flight (KB)")]
    for panel, column in zip(panels, ("cwnd_bytes", "inflight_bytes")):
        for label, t, v in _series(data, column, "mean"):
            panel.add(t, v / 1e3, label)
    bdp = _scenario(data).get("bdp_bytes")
    if bdp:
        for panel in panels:
            panel.hlines.append(HLine(bdp / 1e3, "BDP"))
    return Chart(_title(data, "congestion window and bytes in flight"), panels)


def rtt_figure(run: Run) -> Chart:
    data = plot_data(run)
    panel = Panel(ylabel="RTT (ms)")
    if "srtt_ms" in data.timeseries:
        # Before a flow has its first RTT sample its srtt is 0: blank it rather than draw a dive to 0.
        srtt = np.asarray(data.timeseries["srtt_ms"], dtype=float)
        data = replace(data, timeseries={**data.timeseries, "srtt_ms": np.where(srtt > 0, srtt, np.nan)})
    raw = {label: (t, v) for label, t, v in _series(data, "rtt_ms", "mean")}
    for n, (label, t, v) in enumerate(_series(data, "srtt_ms", "mean")):
        color = COLORS[n % len(COLORS)]
        if label in raw:
            # The per-interval mean of raw samples shows what srtt smooths away (NaN = no sample);
            # drawn first and faint, in its flow's colour, under the srtt line.
            panel.add(*raw[label], width=0.6, alpha=0.4, color=color)
        panel.add(t, v, f"{label} srtt", width=1.2, color=color)
    base = _scenario(data).get("rtt_ms")
    if base is not None:
        panel.hlines.append(HLine(base, "base RTT"))
    return Chart(_title(data, "round-trip time"), [panel])


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


def queue_figure(run: Run) -> Chart:
    data = plot_data(run)
    q = data.queue
    facts = _scenario(data)
    rate = facts.get("bottleneck_rate_bps")
    top, bottom = Panel(), Panel()

    def to_y(occupancy_bytes: Any) -> Any:
        # KB where the rate is unknown.
        return queue_delay_ms(occupancy_bytes, rate) if rate else np.asarray(occupancy_bytes, dtype=float) / 1e3

    main = main_queue_name(q.get("queue"))
    if _rows(q):
        rows = (q["queue"] == main) if main is not None else np.ones(_rows(q), dtype=bool)
        t = q["t_s"][rows]
        styles: tuple[tuple[str, dict[str, Any]], ...] = (
            ("max_occupancy_bytes", dict(width=0.8, alpha=0.6, label="max in interval")),
            ("mean_occupancy_bytes", dict(width=1.2, label="time-weighted mean")),
            ("occupancy_bytes", dict(width=0.6, alpha=0.8, label="at sample time")),
        )
        for col, style in styles:
            if col in q:
                top.add(t, to_y(q[col][rows]), **style)
        pause = np.asarray(q["pause_frames"], dtype=float) if "pause_frames" in q else np.zeros(_rows(q))
        drops = np.asarray(q["drops"], dtype=float)[rows] if "drops" in q else np.zeros(int(rows.sum()))
        # PAUSE replaces drops on a lossless fabric (and wherever only PAUSE happened).
        if facts.get("lossless") or (not drops.any() and pause.any()):
            _pause_panel(bottom, q, main)
        else:
            if "drops" in q:
                bottom.add(t, drops, "buffer drops (cumulative)")
            for col, label in (("random_losses", "random losses (cumulative)"), ("ce_marks", "CE marks (cumulative)")):
                if col in q and q[col][rows].any():
                    bottom.add(t, q[col][rows], label)
            bottom.ylabel = "packets"
    buf = facts.get("buffer_bytes")
    if buf:
        top.hlines.append(HLine(float(to_y(buf)), "buffer limit"))
    where = "bottleneck" if main in (None, "bottleneck") else main
    if rate:
        top.ylabel = f"{where} queueing delay (ms)"
        kb_per_ms = rate / 8 / 1e3 / 1e3
        top.right_axis = ("queue (KB)", kb_per_ms)
    else:
        top.ylabel = f"{where} queue (KB)"
    return Chart(_title(data, f"{where} queue"), [top, bottom])


def _pause_panel(panel: Panel, q: Mapping[str, np.ndarray], main: str | None) -> None:
    """PAUSE frames per second: sent by the shared port, received by the links it paused (one line
    each, or their mean past _MAX_LINES)."""
    names, t, pause = q["queue"], q["t_s"], np.asarray(q.get("pause_frames", np.zeros(_rows(q))), dtype=float)
    per_s = np.full(len(names), np.nan)
    for n in np.unique(names):
        rows = names == n
        per_s[rows] = _per_second(t[rows], pause[rows])
    if main is not None:
        panel.add(t[names == main], per_s[names == main], f"{main}: sent", width=1.2)
    paused = [n for n in dict.fromkeys(names.tolist()) if n != main and pause[names == n].any()]
    if len(paused) <= _MAX_LINES:
        for n in paused:
            panel.add(t[names == n], per_s[names == n], f"{n}: received", width=0.8, alpha=0.7)
    else:
        rows = np.isin(names, paused)
        panel.add(*_group(t[rows], per_s[rows], "mean"), f"received (mean of {len(paused)} paused links)", width=0.8)
    panel.ylabel = "PAUSE frames / s"


FIGURES = {"goodput.png": goodput_figure, "cwnd.png": cwnd_figure, "rtt.png": rtt_figure, "queue.png": queue_figure}


def plot_all(run: Run, out_dir: Path, names: Iterable[str] = PLOTS) -> list[Path]:
    """Draw the plots ``names`` (default all) into ``out_dir``; returns the files written."""
    data = plot_data(run)
    out_dir = Path(out_dir)
    return [render(FIGURES[name](data), out_dir / name) for name in names]


#: The plots a fork draws in plot_all_forked: three of the four, about as much work as the fourth
#: plus importing pyarrow and writing the run's tables, which the calling process does meanwhile.
FORKED = ("cwnd.png", "rtt.png", "queue.png")


def plot_all_forked(run: Run, out_dir: Path) -> Callable[[], None]:
    """Start drawing every plot into ``out_dir`` on two cores: a fork of this process draws
    :data:`FORKED` while this one draws the rest. Returns ``finish()``, which waits for the fork
    (the caller writes its tables in between); what the fork failed to draw, ``finish`` draws
    here, so a failed fork never costs a plot.

    For the CLI's own process: forking one that runs other threads (a notebook's) can deadlock the
    child on a lock held by a thread that does not exist there, so with other threads alive this
    is plot_all, done before it returns. Ctrl-C (or any exception) while the fork is alive kills and
    reaps it before it propagates: the caller then removes the directory the fork was writing to.
    """
    import os
    import signal
    import threading

    data = plot_data(run)
    out_dir = Path(out_dir)
    rest = [n for n in PLOTS if n not in FORKED]
    if threading.active_count() > 1 or not hasattr(os, "fork"):
        plot_all(data, out_dir)
        return lambda: None
    pid = os.fork()
    if pid == 0:  # the fork: draw, and leave without running anything of the parent's (atexit, buffers)
        code = 1
        try:
            _draw_forked(data, out_dir)
            code = 0
        finally:
            os._exit(code)

    def reap(kill: bool) -> int:
        if kill:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        while True:
            try:
                return os.waitpid(pid, 0)[1]
            except ChildProcessError:
                return -1
            except InterruptedError:
                continue

    try:
        plot_all(data, out_dir, rest)
    except BaseException:
        reap(kill=True)
        raise

    def finish() -> None:
        try:
            status = reap(kill=False)
        except BaseException:
            reap(kill=True)
            raise
        missing = [n for n in FORKED if status != 0 or not (out_dir / n).is_file()]
        plot_all(data, out_dir, missing)  # the fork failed: draw (and report any error) here

    return finish


def _draw_forked(data: PlotData, out_dir: Path) -> None:
    plot_all(data, out_dir, FORKED)
