"""Figures across runs (`bbrlab plot`): several runs and sweeps in one set of PNGs.

goodput.png           goodput over time, one line per run (per flow when few flows, else per algorithm)
cwnd.png              congestion window over time, the same lines
rtt.png               smoothed RTT over time, the same lines
queue_delay.png       bottleneck queueing delay over time (ms = bytes × 8 / the bottleneck's rate), per run
jain.png              Jain's index over time among each run's configured flows that are running
pause.png             PAUSE + XON frames sent by the bottleneck port (lossless runs only)
throughput_delay.png  Pantheon's summary plot: throughput vs 95th-percentile RTT per algorithm, delay
                      axis inverted so better is up and right; seeds of a sweep point averaged
                      (error bars: min–max over the seeds); its numbers in throughput_delay.csv
cdf_rtt.png           CDF of the per-interval RTT samples, per run and algorithm
cdf_fct.png           CDF of flow completion times (flows that finished), per run
cdf_query.png         CDF of query response times (runs with a query app), per run

Past ``MAX_LINES`` legend entries lines are coloured by algorithm, with one legend entry each, so a
legend stays readable with a hundred runs. Everything is drawn through `figures.py` (no pyplot).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.layout_engine import ConstrainedLayoutEngine

from ..errors import UserError
from ..plots.figures import new_figure, save
from ..plots.plots import main_queue_name, queue_delay_ms
from ..results.results import Result, jain_index
from ..results.rundir import APP_TRANSFER_SPEC, configured_flows
from .runset import RunRef, find_runs

__all__ = [
    "plot_runs",
    "load_runs",
    "LoadedRun",
    "main_queue",
    "queue_delay_ms",
    "cdf",
    "jain_over_time",
    "throughput_delay_points",
    "MAX_LINES",
]

#: Legend entries past which lines are coloured by algorithm instead of named one by one.
MAX_LINES = 12

#: ``progress(done, total)`` while runs load and figures are drawn.
ProgressFn = Callable[[int, int], None]


@dataclass
class LoadedRun:
    ref: RunRef
    result: Result

    @property
    def configured_flows(self) -> pd.DataFrame:
        """The flows table without application transfers (query responses, spec −1)."""
        flows = self.result.flows
        return flows[flows["spec"] != APP_TRANSFER_SPEC] if "spec" in flows else flows

    @property
    def rate_bps(self) -> float | None:
        rate = (self.ref.summary.get("scenario") or {}).get("bottleneck_rate_bps")
        return float(rate) if rate else None


# ------------------------------------------------------------------ numbers (tested on their own)


def main_queue(queue: pd.DataFrame) -> pd.DataFrame:
    """The rows of the shared bottleneck queue (empty when the run has none)."""
    if queue.empty or "queue" not in queue:
        return queue.iloc[0:0]
    name = main_queue_name(queue["queue"].astype(object).to_numpy())
    return queue[queue["queue"] == name] if name is not None else queue.iloc[0:0]


def cdf(values: Any) -> tuple[np.ndarray, np.ndarray]:
    """(sorted finite values, fraction ≤ each): an empirical CDF, ending at 1."""
    x = np.asarray(values, dtype=float)
    x = np.sort(x[np.isfinite(x)])
    return x, np.arange(1, x.size + 1) / x.size if x.size else np.array([])


def jain_over_time(run: LoadedRun) -> tuple[np.ndarray, np.ndarray]:
    """(t_s, Jain's index of the configured flows' goodput in each interval), counting a flow in
    the intervals it is running (started before the interval began and not yet ended), so a
    staggered start shows as convergence rather than as unfairness."""
    ts = run.result.timeseries
    flows = run.configured_flows
    if ts.empty or flows.empty or "goodput_bps" not in ts:
        return np.array([]), np.array([])
    ts = ts[ts["flow"].isin(flows["flow"])]
    t = np.sort(ts["t_s"].unique())
    interval = float(np.min(np.diff(t))) if t.size > 1 else float(t[0]) if t.size else 0.0
    start = dict(zip(flows["flow"], flows["start_s"] if "start_s" in flows else np.zeros(len(flows))))
    end = dict(zip(flows["flow"], flows["end_s"] if "end_s" in flows else np.full(len(flows), np.inf)))
    out = []
    eps = 1e-9  # sample times are sums of floats
    for when, rows in ts.groupby("t_s", sort=True):
        running = np.array(
            [start[f] <= when - interval + eps and not end[f] < when - eps for f in rows["flow"]], dtype=bool
        )
        out.append(jain_index(rows["goodput_bps"].to_numpy(dtype=float)[running]))
    return t, np.asarray(out, dtype=float)


def throughput_delay_points(runs: Sequence[RunRef]) -> pd.DataFrame:
    """One row per sweep point (or run) and algorithm: the algorithm's throughput (its configured
    flows' goodput summed) and 95th-percentile RTT (its flows' mean), each the mean over the
    point's seeds with min and max."""
    rows = []
    for ref in runs:
        by_cc: dict[str, list[dict[str, Any]]] = {}
        for f in configured_flows(ref.summary.get("flows", [])):
            by_cc.setdefault(str(f.get("cc", "")), []).append(f)
        for cc, flows in by_cc.items():
            p95 = [f["rtt_p95_ms"] for f in flows if isinstance(f.get("rtt_p95_ms"), (int, float))]
            rows.append(
                {
                    "group": ref.group,
                    "label": ref.label,
                    "cc": cc,
                    "seed": ref.seed,
                    "throughput_bps": float(sum(f.get("goodput_bps") or 0.0 for f in flows)),
                    "rtt_p95_ms": float(np.mean(p95)) if p95 else math.nan,
                    "flows": len(flows),
                }
            )
    # Each measure over the seeds: its mean under its own name, its min and max (the error bars)
    # as {stem}_min_{unit} and {stem}_max_{unit}.
    over_seeds = {
        f"{stem}{stat}_{unit}": (f"{stem}_{unit}", how)
        for stem, unit in (("throughput", "bps"), ("rtt_p95", "ms"))
        for stat, how in (("", "mean"), ("_min", "min"), ("_max", "max"))
    }
    cols = ["label", "cc", "seeds", "flows", *over_seeds]
    if not rows:
        return pd.DataFrame(columns=cols)
    g = pd.DataFrame(rows).groupby(["group", "cc"], sort=False)
    out = g.agg(label=("label", "first"), seeds=("seed", "size"), flows=("flows", "first"), **over_seeds)
    return out.reset_index()[cols]


# ------------------------------------------------------------------ lines and colours


@dataclass
class _Line:
    name: str  # legend entry when lines are named one by one
    cc: str  # the algorithm, for colouring by algorithm
    t: np.ndarray
    y: np.ndarray


def _flow_lines(
    runs: Sequence[LoadedRun],
    column: str,
    agg: str,
    per_flow: bool,
    transform: Callable[[pd.Series], pd.Series] | None = None,
) -> list[_Line]:
    """Per run: one line per configured flow (``per_flow``) or per algorithm (``agg`` of its flows)."""
    lines = []
    for run in runs:
        ts = run.result.timeseries
        if ts.empty or column not in ts:
            continue
        ts = ts[ts["flow"].isin(run.configured_flows["flow"])]
        values = transform(ts[column]) if transform else ts[column]
        ts = ts.assign(_v=values.astype(float), _cc=ts["cc"].astype(str) if "cc" in ts else "")
        if per_flow:
            for flow, rows in ts.groupby("flow", sort=True):
                cc = str(rows["_cc"].iloc[0])
                # The algorithm first, and lines sorted by it below: a legend grouped by algorithm.
                name = f"{cc} · {run.ref.label} · flow {flow}" if run.ref.label else f"{cc} · flow {flow}"
                lines.append(_Line(name, cc, rows["t_s"].to_numpy(), rows["_v"].to_numpy()))
        else:
            for cc, rows in ts.groupby("_cc", sort=False):
                series = rows.groupby("t_s")["_v"].agg(agg)
                n = rows["flow"].nunique()
                what = "sum" if agg == "sum" else "mean"
                lines.append(
                    _Line(
                        f"{cc} · {run.ref.label} ({what} of {n} flows)" if n > 1 else f"{cc} · {run.ref.label}",
                        str(cc),
                        series.index.to_numpy(),
                        series.to_numpy(),
                    )
                )
    return sorted(lines, key=lambda line: line.cc)  # stable: runs keep their order within an algorithm


def _run_lines(
    runs: Sequence[LoadedRun], fn: Callable[[LoadedRun], tuple[np.ndarray, np.ndarray] | None]
) -> list[_Line]:
    """One line per run; a run with several algorithms is coloured as "a+b"."""
    lines = []
    for run in runs:
        got = fn(run)
        if got is not None and len(got[0]):
            lines.append(_Line(run.ref.label, "+".join(run.ref.algorithms), *got))
    return lines


def _palette(keys: Sequence[str]) -> dict[str, Any]:
    from matplotlib import colormaps

    keys = list(dict.fromkeys(keys))
    cmap = colormaps["tab10" if len(keys) <= 10 else "tab20"]
    return {k: cmap(i % cmap.N) for i, k in enumerate(keys)}


def _draw(ax: Any, lines: list[_Line], *, step: bool = False) -> str:
    """Draw ``lines``: named one by one, or, past MAX_LINES names, coloured by algorithm. Returns
    a note for the title when the legend is by algorithm."""
    names = list(dict.fromkeys(line.name for line in lines))
    by_cc = len(names) > MAX_LINES
    colours = _palette([line.cc for line in lines] if by_cc else names)
    labelled: set[str] = set()
    plot = ax.step if step else ax.plot
    for line in lines:
        key = line.cc if by_cc else line.name
        kw: dict[str, Any] = {"where": "post"} if step else {}
        plot(
            line.t,
            line.y,
            color=colours[key],
            lw=0.7 if by_cc else 1.1,
            alpha=0.55 if by_cc else 0.95,
            label=None if key in labelled else key,
            **kw,
        )
        labelled.add(key)
    return f"{len(names)} lines, coloured by algorithm" if by_cc else ""


def legend(ax: Any) -> None:
    """A few short entries inside the axes; more or longer ones in columns below the plot (the
    figure grows to hold them), where they cover no data."""
    handles, labels = ax.get_legend_handles_labels()
    if not labels:
        return
    widest = max(len(t) for t in labels)
    if len(labels) <= 4 and widest <= 28:
        ax.legend(handles, labels, fontsize=7, loc="best")
        return
    ncol = 1 if widest > 55 else 2 if widest > 30 else 3
    rows = -(-len(labels) // ncol)
    fig = ax.figure
    fig.set_size_inches(fig.get_size_inches()[0], fig.get_size_inches()[1] + 0.17 * rows + 0.2)
    fig.legend(handles, labels, fontsize=7, loc="outside lower center", ncol=ncol, frameon=False)


def _log_if_wide(ax: Any, values: np.ndarray) -> None:
    """A log x axis when the values span more than a factor 20 (labelled in plain numbers)."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    v = values[np.isfinite(values)]
    if v.size and v.min() > 0 and v.max() / v.min() > 20:
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}"))
        ax.xaxis.set_minor_formatter(NullFormatter())


def _figure() -> tuple[Figure, Any]:
    fig = new_figure((9, 4.2), layout="constrained")
    return fig, fig.subplots()


def _title(ax: Any, what: str, runs: int, note: str = "") -> None:
    ax.set_title(f"{what} — {runs} run{'s' if runs != 1 else ''}{f' ({note})' if note else ''}", fontsize=10)
    ax.grid(True, alpha=0.3)


# ------------------------------------------------------------------ the figures


def fig_over_time(
    runs: Sequence[LoadedRun],
    what: str,
    ylabel: str,
    lines: list[_Line],
    *,
    bottom: float | None = 0,
    reference: tuple[float | None, str] = (None, ""),
) -> Figure | None:
    """``reference``: (value, label) of a dashed line all runs share (the bottleneck rate, the base RTT)."""
    if not lines:
        return None
    fig, ax = _figure()
    note = _draw(ax, lines)
    if reference[0] is not None:
        ax.axhline(reference[0], color="grey", ls="--", lw=0.8, label=reference[1])
    ax.set_xlabel("time (s)")
    ax.set_ylabel(ylabel)
    if bottom is not None:
        ax.set_ylim(bottom=bottom)
    _title(ax, what, len(runs), note)
    legend(ax)
    return fig


def _per_flow(runs: Sequence[LoadedRun]) -> bool:
    """Lines per flow while the flows of all runs together fit one legend."""
    return sum(len(r.configured_flows) for r in runs) <= MAX_LINES


def _shared(runs: Sequence[LoadedRun], key: str) -> float | None:
    """A scenario fact (summary.json ``scenario``) when every run has the same value, else None."""
    values = {(r.ref.summary.get("scenario") or {}).get(key) for r in runs}
    value = values.pop() if len(values) == 1 else None
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def fig_goodput(runs: Sequence[LoadedRun]) -> Figure | None:
    lines = _flow_lines(runs, "goodput_bps", "sum", _per_flow(runs), lambda v: v / 1e6)
    rate = _shared(runs, "bottleneck_rate_bps")
    return fig_over_time(
        runs, "goodput", "goodput (Mbit/s)", lines, reference=(rate / 1e6 if rate else None, "bottleneck rate")
    )


def fig_cwnd(runs: Sequence[LoadedRun]) -> Figure | None:
    lines = _flow_lines(runs, "cwnd_bytes", "mean", _per_flow(runs), lambda v: v / 1e3)
    return fig_over_time(runs, "congestion window", "cwnd (KB)", lines)


def fig_rtt(runs: Sequence[LoadedRun]) -> Figure | None:
    # Before its first RTT sample a flow's srtt is 0: blank it rather than draw a dive to 0.
    lines = _flow_lines(runs, "srtt_ms", "mean", _per_flow(runs), lambda v: v.where(v > 0))
    return fig_over_time(runs, "smoothed RTT", "srtt (ms)", lines, reference=(_shared(runs, "rtt_ms"), "base RTT"))


def _queue_delay(run: LoadedRun) -> tuple[np.ndarray, np.ndarray] | None:
    q = main_queue(run.result.queue)
    if q.empty or run.rate_bps is None or "mean_occupancy_bytes" not in q:
        return None
    return q["t_s"].to_numpy(), queue_delay_ms(q["mean_occupancy_bytes"], run.rate_bps)


def fig_queue_delay(runs: Sequence[LoadedRun]) -> Figure | None:
    return fig_over_time(
        runs,
        "bottleneck queueing delay (time-weighted mean per interval)",
        "queueing delay (ms)",
        _run_lines(runs, _queue_delay),
    )


def fig_jain(runs: Sequence[LoadedRun]) -> Figure | None:
    fig = fig_over_time(
        runs, "Jain's fairness index among running flows", "Jain's index", _run_lines(runs, jain_over_time), bottom=None
    )
    if fig is not None:
        fig.axes[0].set_ylim(0, 1.05)
    return fig


def _pause_frames(run: LoadedRun) -> tuple[np.ndarray, np.ndarray] | None:
    q = main_queue(run.result.queue)
    if q.empty or "pause_frames" not in q:
        return None
    return q["t_s"].to_numpy(), q["pause_frames"].to_numpy(dtype=float)


def fig_pause(runs: Sequence[LoadedRun]) -> Figure | None:
    lossless = [r for r in runs if (r.ref.summary.get("scenario") or {}).get("lossless")]
    return fig_over_time(
        lossless,
        "PAUSE + XON frames sent by the bottleneck switch port (lossless runs)",
        "frames (cumulative)",
        _run_lines(lossless, _pause_frames),
    )


def fig_throughput_delay(points: pd.DataFrame) -> Figure | None:
    """Pantheon's summary plot: one marker per run (sweep point) per algorithm."""
    points = points[np.isfinite(points["rtt_p95_ms"].astype(float))]
    if points.empty:
        return None
    fig, ax = _figure()
    colours = _palette(list(points["cc"]))
    for cc, rows in points.groupby("cc", sort=False):
        x, y = rows["rtt_p95_ms"].to_numpy(float), rows["throughput_bps"].to_numpy(float) / 1e6
        xerr = [x - rows["rtt_p95_min_ms"].to_numpy(float), rows["rtt_p95_max_ms"].to_numpy(float) - x]
        yerr = [
            y - rows["throughput_min_bps"].to_numpy(float) / 1e6,
            rows["throughput_max_bps"].to_numpy(float) / 1e6 - y,
        ]
        seeded = bool((rows["seeds"] > 1).any())
        ax.errorbar(
            x,
            y,
            xerr=xerr if seeded else None,
            yerr=yerr if seeded else None,
            fmt="o",
            ms=6,
            color=colours[cc],
            ecolor=colours[cc],
            elinewidth=0.8,
            capsize=2,
            label=str(cc),
        )
    labels = list(dict.fromkeys(points["label"]))
    if len(labels) <= MAX_LINES:
        # Runs are numbered at their markers and named in a key below: names beside the markers
        # would run into each other wherever points crowd.
        number = {label: i + 1 for i, label in enumerate(labels)}
        for row in points.itertuples():
            ax.annotate(
                str(number[row.label]),
                (row.rtt_p95_ms, row.throughput_bps / 1e6),
                fontsize=7,
                xytext=(4, 3),
                textcoords="offset points",
            )
        key = "\n".join(f"{number[label]}: {label}" for label in labels)
        fig.set_size_inches(9, 4.2 + 0.14 * len(labels) + 0.2)
        fig.text(0.02, 0.0, key, fontsize=7, va="bottom", ha="left", family="monospace")
        key_height = 0.14 * len(labels) / fig.get_size_inches()[1] + 0.02  # of the figure's height
        engine = fig.get_layout_engine()
        assert isinstance(engine, ConstrainedLayoutEngine)  # new_figure(layout="constrained") above
        engine.set(rect=(0, key_height, 1, 1 - key_height))  # left, bottom, width, height
    _log_if_wide(ax, points["rtt_p95_ms"].to_numpy(float))  # as Pantheon's: DC and WAN delays on one axis
    ax.invert_xaxis()  # Pantheon: lower delay to the right, so better is up and right
    ax.set_xlabel("95th-percentile RTT (ms; axis inverted: better →)")
    ax.set_ylabel("throughput (Mbit/s; the algorithm's flows together)")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=7, loc="best", title="algorithm", title_fontsize=7)
    seeds = int(points["seeds"].max())
    note = f"mean of up to {seeds} seeds, bars min–max" if seeds > 1 else ""
    _title(ax, "throughput vs delay", int(points["label"].nunique()), note)
    return fig


def fig_cdf(
    runs: Sequence[LoadedRun],
    what: str,
    xlabel: str,
    values: Callable[[LoadedRun], Iterator[tuple[str, str, Any]]],
    *,
    log_x: bool = False,
) -> Figure | None:
    lines = []
    seen = []  # (run label, cc) of the runs with data: the title counts those, not all runs given
    for run in runs:
        for name, cc, v in values(run):
            x, y = cdf(v)
            if x.size:
                seen.append((run.ref.label, cc))
                # Start the step at 0 so a one-sample CDF is still a visible step up to 1.
                lines.append(_Line(name, cc, np.concatenate([[x[0]], x]), np.concatenate([[0.0], y])))
    if not lines:
        return None
    fig, ax = _figure()
    note = _draw(ax, lines, step=True)
    legend(ax)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("fraction ≤ x")
    ax.set_ylim(0, 1.02)
    if log_x:
        _log_if_wide(ax, np.concatenate([line.t for line in lines]))
    _title(ax, f"CDF of {what}", len({label for label, _ in seen}), note)
    return fig


def _rtt_samples(run: LoadedRun) -> Iterator[tuple[str, str, Any]]:
    ts = run.result.timeseries
    if ts.empty or "rtt_ms" not in ts:
        return
    ts = ts[ts["flow"].isin(run.configured_flows["flow"])]
    ccs = ts["cc"].astype(str) if "cc" in ts else pd.Series("", index=ts.index)
    many = ccs.nunique() > 1
    for cc, rows in ts.groupby(ccs, sort=False):
        v = rows["rtt_ms"].to_numpy(dtype=float)
        yield (f"{run.ref.label} · {cc}" if many else run.ref.label), str(cc), v[v > 0]


def _fct(run: LoadedRun) -> Iterator[tuple[str, str, Any]]:
    flows = run.result.flows
    if "fct_s" in flows:
        yield run.ref.label, "+".join(run.ref.algorithms), flows["fct_s"].to_numpy(dtype=float) * 1e3


def _query(run: LoadedRun) -> Iterator[tuple[str, str, Any]]:
    ev = run.result.events
    if not ev.empty and "response_time_s" in ev:
        flows = run.result.flows
        apps = flows[flows["spec"] == APP_TRANSFER_SPEC] if "spec" in flows and "cc" in flows else flows.iloc[0:0]
        cc = "+".join(dict.fromkeys(apps["cc"].astype(str))) if len(apps) else "+".join(run.ref.algorithms)
        yield run.ref.label, cc, ev["response_time_s"].to_numpy(dtype=float) * 1e3


# ------------------------------------------------------------------ the entry point


def load_runs(
    refs: Sequence[RunRef], progress: ProgressFn | None = None, warn: Callable[[str], None] | None = None
) -> list[LoadedRun]:
    out = []
    for i, ref in enumerate(refs):
        result = Result.load(ref.path)
        for name, why in result.damaged.items():
            if warn:
                warn(f"{ref.path / name} is damaged ({why}); left out")
        out.append(LoadedRun(ref, result))
        if progress:
            progress(i + 1, len(refs))
    return out


def plot_runs(
    paths: Sequence[str | Path],
    out_dir: str | Path,
    *,
    labels: dict[str, str] | None = None,
    progress: ProgressFn | None = None,
    warn: Callable[[str], None] | None = None,
    overlays: bool = True,
) -> list[Path]:
    """Draw the across-runs figures of the runs ``paths`` name (runs, sweeps, directories of runs;
    see `bbrlab.runs.runset`) into ``out_dir``; returns the files written. ``labels``: {PATH: legend
    text} for the runs under PATH. ``overlays``: False draws only the throughput-delay summary, not
    the runs' time series and CDFs laid over each other (loading no run's tables)."""
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out}: a file, not a directory")
    refs = find_runs(list(paths), labels, warn)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UserError(f"--out {out}: cannot create the directory ({e.strerror})") from None
    total = len(refs) + (10 if overlays else 1)
    runs = load_runs(refs, (lambda done, _: progress(done, total)) if progress else None, warn) if overlays else []
    points = throughput_delay_points(refs)
    figures: list[tuple[str, Callable[[], Figure | None]]] = [
        ("goodput.png", lambda: fig_goodput(runs)),
        ("cwnd.png", lambda: fig_cwnd(runs)),
        ("rtt.png", lambda: fig_rtt(runs)),
        ("queue_delay.png", lambda: fig_queue_delay(runs)),
        ("jain.png", lambda: fig_jain(runs)),
        ("pause.png", lambda: fig_pause(runs)),
        ("throughput_delay.png", lambda: fig_throughput_delay(points)),
        (
            "cdf_rtt.png",
            lambda: fig_cdf(runs, "RTT samples", "RTT, per-interval mean of each flow's samples (ms)", _rtt_samples),
        ),
        ("cdf_fct.png", lambda: fig_cdf(runs, "flow completion times", "flow completion time (ms)", _fct, log_x=True)),
        (
            "cdf_query.png",
            lambda: fig_cdf(runs, "query response times", "query response time (ms)", _query, log_x=True),
        ),
    ]
    if not overlays:
        figures = [f for f in figures if f[0] == "throughput_delay.png"]
    written = []
    try:
        for i, (name, draw) in enumerate(figures):
            fig = draw()
            if fig is not None:
                # Constrained layout already fits the figure: "tight" would draw it twice.
                written.append(save(fig, out / name, tight=False))
            if progress:
                progress(len(refs) + i + 1, total)
        if len(points):
            points.to_csv(out / "throughput_delay.csv", index=False)
            written.append(out / "throughput_delay.csv")
    except OSError as e:
        raise UserError(f"{e.filename or out}: cannot write ({e.strerror})") from None
    return written
