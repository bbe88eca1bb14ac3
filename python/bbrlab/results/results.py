"""Results: the core's columns (pandas tables on demand), the summary, and the run directory on disk.

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
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .._version import __version__
from ..errors import ScenarioWarning, SimulationError, UserError
from .columns import Table
from .provenance import git_commit

# What a run directory is (complete or not, its summary.json) lives with where one may go, in
# rundir, a module light enough for `bbrlab ls`; the names stay importable from here.
from .rundir import INCOMPLETE_MARKER, _one_line, find_runs, is_complete_run
from .rundir import read_summary as _read_summary
from .summary import (  # noqa: F401  # re-exported: callers import them from here
    ETHERNET_OVERHEAD_BYTES,
    TCP_IP_HEADER_BYTES,
    _json_clean,
    add_graph_columns,
    decode_table,
    jain_index,
    payload_fraction,
    summarize,
)

if TYPE_CHECKING:
    import pandas as pd

    from ..scenario import Scenario

__all__ = [
    "Result",
    "jain_index",
    "decode_table",
    "RUN_FILES",
    "INCOMPLETE_MARKER",
    "is_complete_run",
    "find_runs",
    "CA_STATES",
]

TABLES = ("flows", "timeseries", "queue")
RUN_FILES = ("scenario.toml", "summary.json", "flows.parquet", "timeseries.parquet", "queue.parquet")

#: timeseries.ca_state: Linux's congestion-avoidance states (TCP_CA_Open …) in the order of their
#: codes (crates/cc/src/lib.rs `CaState`). The core exports the codes without labels (it has
#: labels for phase, cc and queue only), so the one table of names is this one.
CA_STATES = ("Open", "Disorder", "CWR", "Recovery", "Loss")


def _ca_state_codes(codes: Any) -> np.ndarray:
    """ca_state codes (0..4) as codes of :data:`CA_STATES`, an unknown code as -1 (missing)."""
    c = np.asarray(codes, dtype=np.int64)
    return np.where((c >= 0) & (c < len(CA_STATES)), c, -1)


def _ca_state_category(codes: Any) -> pd.Categorical:
    """ca_state codes (0..4) as a categorical of :data:`CA_STATES` (an unknown code: NaN)."""
    import pandas as pd

    return pd.Categorical.from_codes(_ca_state_codes(codes), categories=pd.Index(CA_STATES, dtype=object))


def _load_run_scenario(toml_path: Path) -> Scenario | None:
    """A run's scenario.toml as a Scenario; None, with a warning saying why, when this bbrlab
    cannot read it as one (a run written by another version whose fields differ)."""
    from ..scenario import load_scenario

    try:
        with warnings.catch_warnings():
            # Notes about the settings are for whoever writes a scenario, not for reading a run.
            warnings.simplefilter("ignore", ScenarioWarning)
            return load_scenario(toml_path)
    except UserError as e:
        warnings.warn(
            f"{toml_path}: not a scenario this bbrlab ({__version__}) can read back ({e}); "
            "Result.scenario is None, the text is in Result.scenario_toml",
            ScenarioWarning,
            stacklevel=3,
        )
        return None


#: The tables of a run: the three every run has, then the optional ones (written only when not empty).
ALL_TABLES = (*TABLES, "gaps", "events", "hosts", "state", "traffic", "pings", "fct", "packets")


def _table_property(name: str, doc: str) -> property:
    """:class:`Result`'s table ``name`` as a DataFrame, built from its numpy columns on first read;
    assigning a DataFrame replaces it."""

    def get(self: Result) -> pd.DataFrame:
        return self._frame(name)

    def set_(self: Result, frame: pd.DataFrame) -> None:
        self._set_frame(name, frame)

    return property(get, set_, doc=doc)


class Result:
    """One run: its tables, the summary dict, and the scenario it came from.

    The tables (``flows``, ``timeseries``, ``queue``; ``gaps``: NIC inter-departure gap histograms
    of flows with gap_histogram; ``events``: one row per completed query; ``hosts``: one row per
    end host when the scenario models hosts; ``state``: the per-ACK state trace of flows with
    ``trace = true``) are pandas DataFrames,
    built on first use from the numpy columns a run produced (:meth:`table` gives those without
    pandas). Assigning a DataFrame replaces a table (what :meth:`save` then writes)."""

    def __init__(
        self,
        flows: pd.DataFrame | Table | None = None,
        timeseries: pd.DataFrame | Table | None = None,
        queue: pd.DataFrame | Table | None = None,
        summary: dict[str, Any] | None = None,
        scenario: Scenario | None = None,
        scenario_toml: str | None = None,
        path: Path | None = None,
        gaps: pd.DataFrame | Table | None = None,
        events: pd.DataFrame | Table | None = None,
        damaged: dict[str, str] | None = None,
        hosts: pd.DataFrame | Table | None = None,
        state: pd.DataFrame | Table | None = None,
        traffic: pd.DataFrame | Table | None = None,
        pings: pd.DataFrame | Table | None = None,
        fct: pd.DataFrame | Table | None = None,
        packets: pd.DataFrame | Table | None = None,
    ) -> None:
        self.summary: dict[str, Any] = summary if summary is not None else {}
        self.scenario = scenario
        self.scenario_toml = scenario_toml
        self.path = path
        #: Files of a loaded run directory that could not be read, and why (see :meth:`load`).
        self.damaged: dict[str, str] = damaged if damaged is not None else {}
        # Each table as numpy columns, or as the DataFrame it was given as / built into.
        self._tables: dict[str, Table] = {}
        self._frames: dict[str, pd.DataFrame] = {}
        values = (flows, timeseries, queue, gaps, events, hosts, state, traffic, pings, fct, packets)
        for name, value in zip(ALL_TABLES, values, strict=True):
            if isinstance(value, Table):
                self._tables[name] = value
            elif value is not None:
                self._frames[name] = value
            else:
                self._tables[name] = Table()

    def table(self, name: str) -> Table:
        """Table ``name`` as numpy columns (no pandas needed when the run has not built its DataFrame)."""
        if name in self._frames:
            return Table.from_pandas(self._frames[name])
        return self._tables[name]

    def _frame(self, name: str) -> pd.DataFrame:
        if name not in self._frames:
            self._frames[name] = self._tables.pop(name).to_pandas()
        return self._frames[name]

    def _set_frame(self, name: str, frame: pd.DataFrame) -> None:
        self._tables.pop(name, None)
        self._frames[name] = frame

    flows = _table_property("flows", "One row per flow.")
    timeseries = _table_property("timeseries", "One row per flow per sample interval.")
    queue = _table_property("queue", "One row per queue per sample interval.")
    gaps = _table_property(
        "gaps", "flow, lo_ns, hi_ns, count: NIC inter-departure gap histograms of flows with gap_histogram."
    )
    events = _table_property(
        "events", "app, query, n, bytes, start_s, end_s, response_time_s: one row per completed query."
    )
    hosts = _table_property(
        "hosts",
        "One row per end host (CPU, interrupts, ACKs, chunk and GRO sizes) when the scenario "
        "has [hosts]; empty otherwise.",
    )
    state = _table_property(
        "state",
        "The per-ACK state trace of flows with trace = true (phase, round_count, max_bw_bps, bounds, "
        "min_rtt_ms, gains, cwnd_pkts, pacing_rate_bps, extra_acked_pkts, full-bw flags, loss/ECN "
        "counts); empty otherwise.",
    )

    traffic = _table_property(
        "traffic",
        "One row per non-TCP source ([[traffic]]: udp_cbr, udp_onoff, ping): packets and payload bytes "
        "sent, received and lost, rates, and a ping's RTT percentiles; empty without sources.",
    )
    pings = _table_property(
        "pings", "source, seq, t_s, rtt_ms: one row per ping echo that came back (each probe's RTT series)."
    )

    fct = _table_property(
        "fct",
        "app, flow, size_bytes, start_s, fct_s, ideal_fct_s, slowdown: one row per completed flow of a "
        'workload app ([[apps]] kind = "workload").',
    )

    packets = _table_property(
        "packets",
        "Packet captures, one row per TCP segment per capture point (column tap): 'sender' for flows "
        "with pcap = true (data as it leaves, ACKs as they arrive), a link's name for each link of "
        "[capture] links (every segment leaving the link); byte offsets, SACK blocks, TSval/TSecr, ECN; "
        "empty otherwise. The run directory has them as packets.pcap (sender) and <link>.pcap too.",
    )

    def __repr__(self) -> str:
        rows = ", ".join(
            f"{t}: {len(self.table(t)) if t not in self._frames else len(self._frames[t])} rows" for t in TABLES
        )
        where = f" at {self.path}" if self.path is not None else ""
        return f"<Result {self.summary.get('name', '')!r}{where}: {rows}>"

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
            tables = {t: Table.from_core(t, raw[t], labels) for t in TABLES}
            core_run = dict(raw["run"])
        except KeyError as e:
            raise SimulationError(f"the core's results lack {e}") from None
        flows, ts, queue = tables["flows"], tables["timeseries"], tables["queue"]
        if "ca_state" in ts:
            ts.set("ca_state", _ca_state_codes(ts["ca_state"]), categories=CA_STATES)
        # The tables the core writes only when the scenario asks for them: empty otherwise.
        gaps, app_events, hosts, state, traffic, pings, fct, packets = (
            Table.from_core(t, raw[t], labels) if t in raw else Table()
            for t in ("gaps", "events", "hosts", "state", "traffic", "pings", "fct", "packets")
        )
        if "ca_state" in state:
            state.set("ca_state", _ca_state_codes(state["ca_state"]), categories=CA_STATES)
        if len(app_events) and "query" in flows and "app" in flows:
            # Each application transfer carries its query's response time.
            rt = {
                (int(a), int(q)): float(t)
                for a, q, t in zip(app_events["app"], app_events["query"], app_events["response_time_s"])
            }
            flows.set(
                "query_response_s",
                np.array(
                    [rt.get((int(a), int(q)), math.nan) for a, q in zip(flows["app"], flows["query"])], dtype=float
                ),
            )
        add_graph_columns(flows, scenario)
        if "flow" in ts and "cc" in flows and len(flows):
            # Timeseries rows carry the flow's algorithm too, so groupby("cc") needs no join.
            ids, at = np.unique(ts["flow"], return_inverse=True)
            code_by_flow = dict(zip(flows["flow"].tolist(), flows.codes("cc").tolist()))
            codes = np.array([code_by_flow.get(f, -1) for f in ids.tolist()], dtype=np.int64)[at]
            ts.set("cc", codes, categories=flows.categories.get("cc", ()), after="flow")
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
        summary = summarize(
            scenario,
            flows,
            queue,
            run,
            duration_s=scenario.duration / 1e9,
            app_events=app_events,
            hosts=hosts,
            traffic=traffic,
            fct=fct,
        )
        from .phases import phase_times
        from .transperf import transperf_summary

        # Each BBR flow's time in each phase, from the sampled phase (results/phases.py).
        interval_s = scenario.sample_interval / 1e9
        times = phase_times(ts, flows, interval_s)
        for entry in summary["flows"]:
            if entry["flow"] in times:
                entry["phase_time_s"] = times[entry["flow"]]
        if times:
            summary["run"]["phase_time_resolution_s"] = interval_s

        # transperf's metrics and the scenario's [checks] on them (results/transperf.py).
        summary.update(_json_clean(transperf_summary(scenario, flows, ts, state, header_bytes=TCP_IP_HEADER_BYTES)))
        return cls(
            flows=flows,
            timeseries=ts,
            queue=queue,
            summary=summary,
            scenario=scenario,
            gaps=gaps,
            events=app_events,
            hosts=hosts,
            state=state,
            traffic=traffic,
            pings=pings,
            fct=fct,
            packets=packets,
        )

    @classmethod
    def load(cls, run_dir: str | Path) -> Result:
        """Read a complete run directory back: the tables, the summary, and scenario.toml both as
        text (``scenario_toml``) and as a :class:`Scenario` (``scenario``).

        A damaged table or scenario file does not stop the rest: it loads as empty and is listed
        in ``damaged`` with the reason; a damaged summary.json is an error (nothing else says
        what the run was). A scenario.toml this version cannot validate (a run written by an
        older bbrlab) leaves ``scenario`` None, with a :class:`ScenarioWarning` saying why."""
        import pandas as pd

        path = Path(run_dir)
        if not path.exists():
            raise UserError(f"{path}: no such run directory")
        if not is_complete_run(path):
            if path.is_dir() and (path.name.endswith(".incomplete") or (path / INCOMPLETE_MARKER).exists()):
                raise UserError(f"{path}: incomplete run directory (the run was interrupted or failed)")
            if path.is_dir() and find_runs(path, limit=1):
                raise UserError(
                    f"{path}: a directory of runs, not a run; list them with `bbrlab ls {path}` "
                    "and show one with `bbrlab show RUN_DIR`"
                )
            raise UserError(f"{path}: not a bbrlab run directory (no summary.json)")
        summary = _read_summary(path / "summary.json")
        damaged: dict[str, str] = {}

        def table(name: str) -> pd.DataFrame:
            f = path / f"{name}.parquet"
            if not f.exists():
                return pd.DataFrame()
            try:
                return pd.read_parquet(f)
            except Exception as e:  # pyarrow raises many kinds for a bad file
                damaged[f.name] = _one_line(e)
                return pd.DataFrame()

        tables = {t: table(t) for t in ALL_TABLES}
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
            hosts=tables["hosts"],
            state=tables["state"],
            traffic=tables["traffic"],
            pings=tables["pings"],
            fct=tables["fct"],
            packets=tables["packets"],
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
        ``(result, directory)`` instead of ``plots.plot_all``. If that function returns a callable
        (``plots.plot_all_forked``: drawing still under way in another process), it is called once
        the tables are written, and must finish the drawing before it returns."""
        from .rundir import check_out_dir, write_atomically

        final = write_atomically(check_out_dir(out_dir), lambda d: self._write_files(d, plots=plots))
        self.path = final
        return final

    def _write_files(self, d: Path, *, plots: bool | Callable[[Result, Path], Any]) -> None:
        finish_plots = None
        if plots:
            from ..plots.plots import plot_all

            drawn = (plots if callable(plots) else plot_all)(self, d)
            finish_plots = drawn if callable(drawn) else None
        if self.scenario is not None:
            header = f"resolved by bbrlab {__version__}: every default filled in"
            (d / "scenario.toml").write_text(self.scenario.to_toml(header=header))
        elif self.scenario_toml is not None:
            (d / "scenario.toml").write_text(self.scenario_toml)
        for t in ALL_TABLES:
            if t in self._frames:  # built (and maybe changed) by the caller: written as it is now
                if t in TABLES or len(self._frames[t]):
                    self._frames[t].to_parquet(d / f"{t}.parquet", engine="pyarrow", index=False)
            elif t in TABLES or len(self._tables[t]):
                self._tables[t].write_parquet(d / f"{t}.parquet")
        if len(self.table("packets")):
            from .pcap import write_pcaps

            write_pcaps(self.table("packets"), d)
        if finish_plots is not None:
            finish_plots()
        # summary.json last: its presence is what "complete" means to readers that skip the marker.
        (d / "summary.json").write_text(json.dumps(self.summary, indent=2, allow_nan=False) + "\n")
