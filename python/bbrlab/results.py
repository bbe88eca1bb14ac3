"""Results: the core's columns as pandas tables, the summary, and the run directory on disk.

A run directory holds::

    scenario.toml       the scenario, every default filled, human units
    summary.json        per-flow and aggregate figures, run facts (seed, wall time, versions)
    flows.parquet       one row per flow
    timeseries.parquet  one row per flow per sample interval
    queue.parquet       one row per queue per sample interval
    gaps.parquet        NIC inter-departure gap histograms (only when a flow set gap_histogram)
    events.parquet      application events: one row per completed query (only with [[apps]])
    *.png               plots (see plots.py)

It is written atomically: everything goes into ``<dir>.incomplete/`` (with an ``INCOMPLETE`` marker
file) and is renamed to ``<dir>`` only once the last file is written; if anything fails or the user
presses Ctrl-C, the partial directory is removed. A directory named without ``.incomplete`` that has
a summary.json is therefore always complete.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import platform
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ._version import __version__
from .errors import ScenarioWarning, SimulationError, UserError
from .provenance import git_commit
# What a run directory is (complete or not, its summary.json) lives with where one may go, in
# rundir, a module light enough for `bbrlab ls`; the names stay importable from here.
from .rundir import INCOMPLETE_MARKER, _one_line, find_runs, is_complete_run
from .rundir import read_summary as _read_summary

if TYPE_CHECKING:
    from .scenario import Scenario

__all__ = ["Result", "jain_index", "decode_table", "RUN_FILES", "INCOMPLETE_MARKER", "is_complete_run", "find_runs",
           "CA_STATES"]

TABLES = ("flows", "timeseries", "queue")
RUN_FILES = ("scenario.toml", "summary.json", "flows.parquet", "timeseries.parquet", "queue.parquet")

#: timeseries.ca_state: Linux's congestion-avoidance states (TCP_CA_Open …) in the order of their
#: codes (crates/cc/src/lib.rs `CaState`). The core exports the codes without labels (it has
#: labels for phase, cc and queue only), so the one table of names is this one.
CA_STATES = ("Open", "Disorder", "CWR", "Recovery", "Loss")


def _ca_state_category(codes: Any) -> pd.Categorical:
    """ca_state codes (0..4) as a categorical of :data:`CA_STATES` (an unknown code: NaN)."""
    c = np.asarray(codes, dtype=np.int64)
    c = np.where((c >= 0) & (c < len(CA_STATES)), c, -1)
    return pd.Categorical.from_codes(c, categories=pd.Index(CA_STATES, dtype=object))


def jain_index(values: Any) -> float:
    """Jain's fairness index (sum x)^2 / (n * sum x^2): 1 = equal shares, 1/n = one flow takes all.

    NaN when undefined (no flows, or every flow got nothing).
    """
    x = np.asarray(values, dtype=float)
    x = x[np.isfinite(x)]
    if x.size == 0:
        return math.nan
    denom = x.size * float(np.sum(x * x))
    if denom == 0:
        return math.nan
    return float(np.sum(x)) ** 2 / denom


def decode_table(name: str, columns: dict[str, Any], labels: dict[str, list[str]]) -> pd.DataFrame:
    """Wrap the core's ``{column: (dtype, bytes)}`` as a DataFrame; ``*_code`` become categoricals."""
    data: dict[str, Any] = {}
    length: int | None = None
    for col, spec in columns.items():
        try:
            dtype, buf = spec
            arr = np.frombuffer(buf, dtype=np.dtype(dtype))
        except (TypeError, ValueError) as e:
            raise SimulationError(f"the core returned an unreadable column {name}.{col}: {e}") from None
        if length is None:
            length = len(arr)
        elif len(arr) != length:
            raise SimulationError(f"the core returned {name}.{col} with {len(arr)} rows, expected {length}")
        if col.endswith("_code"):
            key = col[: -len("_code")]
            cats = list(labels.get(key, []))
            codes = arr.astype(np.int64)
            if codes.size and (codes.min() < 0 or codes.max() >= len(cats)):
                raise SimulationError(f"the core returned {name}.{col} codes outside labels.{key} ({len(cats)} labels)")
            data[key] = pd.Categorical.from_codes(codes, categories=pd.Index(cats, dtype=object))
        else:
            data[col] = arr
    return pd.DataFrame(data)


def _json_clean(value: Any) -> Any:
    """NaN/inf -> null and numpy scalars -> Python, so summary.json is strict JSON."""
    if isinstance(value, dict):
        return {str(k): _json_clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_clean(v) for v in value]
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating, float)):
        f = float(value)
        return f if math.isfinite(f) else None
    if isinstance(value, np.bool_):
        return bool(value)
    return value


_FLOW_SUMMARY_COLUMNS = (
    "start_s",
    "end_s",
    "fct_s",
    "delivered_bytes",
    "goodput_bps",
    "data_packets_sent",
    "retransmits",
    "retrans_rate",
    "lost_packets",
    "rtt_mean_ms",
    "rtt_p50_ms",
    "rtt_p95_ms",
    "rtt_p99_ms",
    "rto_count",
    "ce_packets",
)


def summarize(
    scenario: Scenario | None,
    flows: pd.DataFrame,
    queue: pd.DataFrame,
    run: dict[str, Any],
    *,
    duration_s: float,
    app_events: pd.DataFrame | None = None,
) -> dict[str, Any]:
    """Per-flow and aggregate figures (what `bbrlab run` prints and summary.json holds)."""
    per_flow = []
    for row in flows.to_dict("records"):
        entry: dict[str, Any] = {"flow": int(row["flow"]), "cc": str(row.get("cc", ""))}
        if "spec" in row:
            entry["spec"] = int(row["spec"])
        for col in _FLOW_SUMMARY_COLUMNS:
            if col in row:
                entry[col] = row[col]
        per_flow.append(entry)
    delivered = int(flows["delivered_bytes"].sum()) if "delivered_bytes" in flows else 0
    sent = int(flows["data_packets_sent"].sum()) if "data_packets_sent" in flows else 0
    retrans = int(flows["retransmits"].sum()) if "retransmits" in flows else 0
    aggregate: dict[str, Any] = {
        # All flows' bytes over the whole run: the useful throughput of the bottleneck.
        "goodput_bps": delivered * 8 / duration_s if duration_s > 0 else math.nan,
        "delivered_bytes": delivered,
        # Fairness among the configured flows (application transfers are short and sequential).
        "jain": jain_index(flows[flows["app"] < 0]["goodput_bps"] if "app" in flows else flows["goodput_bps"])
        if "goodput_bps" in flows else math.nan,
        "retransmits": retrans,
        "retrans_rate": retrans / sent if sent else 0.0,
        "flows": int(len(flows)),
    }
    derived = scenario.derived() if scenario is not None else None
    if derived is not None and duration_s > 0:
        aggregate["link_share"] = aggregate["goodput_bps"] / derived["bottleneck_rate_bps"]
    if len(queue) and "queue" in queue:
        bq = queue[queue["queue"] == (derived["main_queue"] if derived else "bottleneck")]
        if len(bq):
            if "utilization" in bq:
                aggregate["bottleneck_utilization"] = float(bq["utilization"].mean())
            if "mean_occupancy_bytes" in bq:
                aggregate["queue_mean_bytes"] = float(bq["mean_occupancy_bytes"].mean())
            if "max_occupancy_bytes" in bq:
                aggregate["queue_max_bytes"] = int(bq["max_occupancy_bytes"].max())
            if "drops" in bq:
                aggregate["queue_drops"] = int(bq["drops"].iloc[-1])
            if "ce_marks" in bq:
                aggregate["queue_ce_marks"] = int(bq["ce_marks"].iloc[-1])
    if app_events is not None and len(app_events) and "response_time_s" in app_events:
        rt = app_events["response_time_s"].to_numpy(dtype=float)
        aggregate["queries"] = int(rt.size)
        aggregate["query_mean_s"] = float(rt.mean())
        aggregate["query_p95_s"] = float(np.percentile(rt, 95))
        aggregate["query_max_s"] = float(rt.max())
    summary: dict[str, Any] = {"name": scenario.name if scenario is not None else run.get("name", "")}
    if scenario is not None and derived is not None and scenario.is_star:
        t = scenario.topology
        summary["scenario"] = {
            "duration_s": scenario.duration / 1e9,
            "topology": "star",
            "bottleneck_rate_bps": derived["bottleneck_rate_bps"],
            "rtt_ms": derived["base_rtt_ns"] / 1e6,
            "bdp_bytes": derived["bdp_bytes"],
            "buffer_bytes": derived["buffer_bytes"],
            "workers": t.workers,
            "lossless": t.lossless,
            "forwarding": t.forwarding,
            "flows": scenario.flow_count,
            "apps": len(scenario.apps),
        }
    elif scenario is not None and derived is not None:
        b = scenario.topology.bottleneck
        summary["scenario"] = {
            "duration_s": scenario.duration / 1e9,
            "bottleneck_rate_bps": b.rate,
            "rtt_ms": b.rtt / 1e6,
            "bdp_bytes": derived["bdp_bytes"],
            "buffer_bytes": derived["buffer_bytes"],
            "buffer_packets": derived["buffer_packets"],
            "loss": b.loss,
            "flows": scenario.flow_count,
        }
    summary["run"] = run
    summary["flows"] = per_flow
    summary["aggregate"] = aggregate
    return _json_clean(summary)


def _load_run_scenario(toml_path: Path) -> Scenario | None:
    """A run's scenario.toml as a Scenario; None, with a warning saying why, when this bbrlab
    cannot read it as one (a run written by another version whose fields differ)."""
    from .scenario import load_scenario

    try:
        with warnings.catch_warnings():
            # Notes about the settings are for whoever writes a scenario, not for reading a run.
            warnings.simplefilter("ignore", ScenarioWarning)
            return load_scenario(toml_path)
    except UserError as e:
        warnings.warn(f"{toml_path}: not a scenario this bbrlab ({__version__}) can read back ({e}); "
                      "Result.scenario is None, the text is in Result.scenario_toml", ScenarioWarning, stacklevel=3)
        return None


@dataclass
class Result:
    """One run: pandas tables, the summary dict, and the scenario it came from."""

    flows: pd.DataFrame
    timeseries: pd.DataFrame
    queue: pd.DataFrame
    summary: dict[str, Any]
    scenario: Scenario | None = None
    scenario_toml: str | None = None
    path: Path | None = field(default=None, compare=False)
    #: flow, lo_ns, hi_ns, count: NIC inter-departure gap histograms of flows with gap_histogram.
    gaps: pd.DataFrame = field(default_factory=pd.DataFrame, compare=False)
    #: app, query, n, bytes, start_s, end_s, response_time_s: one row per completed query.
    events: pd.DataFrame = field(default_factory=pd.DataFrame, compare=False)
    #: Files of a loaded run directory that could not be read, and why (see :meth:`load`).
    damaged: dict[str, str] = field(default_factory=dict, compare=False)

    # ------------------------------------------------------------ construction

    @classmethod
    def from_core(
        cls,
        scenario: Scenario,
        raw: dict[str, Any],
        *,
        wall_s: float,
        core_version: str = "",
        backend: str = "sim",
        run_extra: dict[str, Any] | None = None,
    ) -> Result:
        labels = raw.get("labels", {})
        try:
            tables = {t: decode_table(t, raw[t], labels) for t in TABLES}
            core_run = dict(raw["run"])
        except KeyError as e:
            raise SimulationError(f"the core's results lack {e}") from None
        flows, ts, queue = tables["flows"], tables["timeseries"], tables["queue"]
        if "ca_state" in ts:
            ts["ca_state"] = _ca_state_category(ts["ca_state"])
        gaps = decode_table("gaps", raw["gaps"], labels) if "gaps" in raw else pd.DataFrame()
        app_events = decode_table("events", raw["events"], labels) if "events" in raw else pd.DataFrame()
        if len(app_events) and "query" in flows and "app" in flows:
            # Each application transfer carries its query's response time.
            rt = {
                (int(a), int(q)): float(t)
                for a, q, t in zip(app_events["app"], app_events["query"], app_events["response_time_s"])
            }
            flows["query_response_s"] = [rt.get((int(a), int(q)), math.nan) for a, q in zip(flows["app"], flows["query"])]
        if "flow" in ts and "cc" in flows and len(flows):
            # Timeseries rows carry the flow's algorithm too, so groupby("cc") needs no join.
            cc_by_flow = dict(zip(flows["flow"].tolist(), flows["cc"].astype(str).tolist()))
            cats = list(flows["cc"].cat.categories) if isinstance(flows["cc"].dtype, pd.CategoricalDtype) else None
            ts.insert(ts.columns.get_loc("flow") + 1, "cc", pd.Categorical(ts["flow"].map(cc_by_flow), categories=cats))
        delivered = int(core_run.get("data_packets_delivered", 0))
        events = int(core_run.get("events", 0))
        run = {
            "backend": backend,
            "seed": scenario.seed,
            "wall_s": wall_s,
            "sim_end_s": int(core_run.get("sim_end_ns", scenario.duration)) / 1e9,
            "complete": bool(core_run.get("complete", False)),
            "events": events,
            "data_packets_delivered": delivered,
            "data_packets_sent": int(core_run.get("data_packets_sent", 0)),
            "pause_frames": int(core_run.get("pause_frames", 0)),
            "drops": int(core_run.get("drops", 0)),
            "packets_per_wall_s": delivered / wall_s if wall_s > 0 else math.nan,
            "events_per_wall_s": events / wall_s if wall_s > 0 else math.nan,
            "bbrlab_version": __version__,
            "core_version": core_version,
            "python": platform.python_version(),
            "platform": platform.platform(terse=True),
            "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            # How to run it again: the file and the --set overrides as given (--seed N as seed=N),
            # and the commit of the bbrlab that ran it.
            "scenario_file": scenario.source_file,
            "overrides": list(scenario.overrides),
            "git_commit": git_commit(),
        }
        if run_extra:
            run.update(run_extra)
        summary = summarize(scenario, flows, queue, run, duration_s=scenario.duration / 1e9, app_events=app_events)
        return cls(flows=flows, timeseries=ts, queue=queue, summary=summary, scenario=scenario, gaps=gaps,
                   events=app_events)

    @classmethod
    def load(cls, run_dir: str | Path) -> Result:
        """Read a complete run directory back: the tables, the summary, and scenario.toml both as
        text (``scenario_toml``) and as a :class:`Scenario` (``scenario``).

        A damaged table or scenario file does not stop the rest: it loads as empty and is listed
        in ``damaged`` with the reason; a damaged summary.json is an error (nothing else says
        what the run was). A scenario.toml this version cannot validate (a run written by an
        older bbrlab) leaves ``scenario`` None, with a :class:`ScenarioWarning` saying why."""
        path = Path(run_dir)
        if not path.exists():
            raise UserError(f"{path}: no such run directory")
        if not is_complete_run(path):
            if path.is_dir() and (path.name.endswith(".incomplete") or (path / INCOMPLETE_MARKER).exists()):
                raise UserError(f"{path}: incomplete run directory (the run was interrupted or failed)")
            if path.is_dir() and find_runs(path, limit=1):
                raise UserError(f"{path}: a directory of runs, not a run; list them with `bbrlab ls {path}` "
                                "and show one with `bbrlab show RUN_DIR`")
            raise UserError(f"{path}: not a bbrlab run directory (no summary.json)")
        summary = _read_summary(path / "summary.json")
        damaged: dict[str, str] = {}

        def table(name: str) -> pd.DataFrame:
            f = path / f"{name}.parquet"
            if not f.exists():
                return pd.DataFrame()
            try:
                return pd.read_parquet(f)
            except Exception as e:  # noqa: BLE001 - pyarrow raises many kinds for a bad file
                damaged[f.name] = _one_line(e)
                return pd.DataFrame()

        tables = {t: table(t) for t in (*TABLES, "gaps", "events")}
        ts = tables["timeseries"]
        if "ca_state" in ts and not isinstance(ts["ca_state"].dtype, pd.CategoricalDtype):
            try:  # a run from before ca_state was a category
                ts["ca_state"] = _ca_state_category(ts["ca_state"].fillna(-1))
            except (TypeError, ValueError) as e:
                damaged["timeseries.parquet"] = f"ca_state is not a state code ({_one_line(e)})"
        scenario_toml = None
        scenario = None
        toml_path = path / "scenario.toml"
        if toml_path.exists():
            try:
                scenario_toml = toml_path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as e:
                damaged[toml_path.name] = _one_line(e)
            else:
                scenario = _load_run_scenario(toml_path)
        return cls(
            scenario=scenario,
            events=tables["events"],
            gaps=tables["gaps"],
            flows=tables["flows"],
            timeseries=tables["timeseries"],
            queue=tables["queue"],
            summary=summary,
            scenario_toml=scenario_toml,
            path=path,
            damaged=damaged,
        )

    def _repr_html_(self) -> str:
        """The summary table in a notebook (the same rows as `bbrlab show`, HTML-escaped)."""
        from .display import summary_html

        return summary_html(self.summary)

    # ------------------------------------------------------------ saving

    def save(self, out_dir: str | Path, *, plots: bool | Callable[[Result, Path], Any] = True) -> Path:
        """Write the run directory atomically (see the module docstring); returns its path.

        ``plots``: draw the PNGs (True), not (False), or draw them with this function of
        ``(result, directory)`` instead of ``plots.plot_all`` (the CLI's PlotWorker)."""
        from .rundir import check_out_dir, write_atomically

        final = write_atomically(check_out_dir(out_dir), lambda d: self._write_files(d, plots=plots))
        self.path = final
        return final

    def _write_files(self, d: Path, *, plots: bool | Callable[[Result, Path], Any]) -> None:
        if self.scenario is not None:
            header = f"resolved by bbrlab {__version__}: every default filled in"
            (d / "scenario.toml").write_text(self.scenario.to_toml(header=header))
        elif self.scenario_toml is not None:
            (d / "scenario.toml").write_text(self.scenario_toml)
        for t in TABLES:
            getattr(self, t).to_parquet(d / f"{t}.parquet", engine="pyarrow", index=False)
        if len(self.gaps):
            self.gaps.to_parquet(d / "gaps.parquet", engine="pyarrow", index=False)
        if len(self.events):
            self.events.to_parquet(d / "events.parquet", engine="pyarrow", index=False)
        if plots:
            from .plots import plot_all

            (plots if callable(plots) else plot_all)(self, d)
        # summary.json last: its presence is what "complete" means to readers that skip the marker.
        (d / "summary.json").write_text(json.dumps(self.summary, indent=2, allow_nan=False) + "\n")
