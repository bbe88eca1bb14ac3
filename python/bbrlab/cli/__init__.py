"""The `bbrlab` command: a thin layer over the Python API.

Exit codes: 0 success; 2 bad input (scenario, --set, paths), printed as one line `error: …` without a
traceback; 1 the simulator failed or is missing; 130 interrupted (Ctrl-C).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
import warnings
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from .._version import __version__
from ..errors import ScenarioWarning, UserError
from ..units import UnitError, parse_time

__all__ = ["cli", "main"]

EXIT_USAGE = 2
EXIT_INTERNAL = 1
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143


class _Terminated(Exception):
    """SIGTERM, raised in the main thread so that clean-up (``finally``) runs as for Ctrl-C."""


def _on_sigterm(signum: int, frame: Any) -> None:
    raise _Terminated()


def _report_bug(e: BaseException) -> None:
    """An internal error: one line, and the traceback in a file to attach to a bug report."""
    import tempfile
    import traceback

    fd, path = tempfile.mkstemp(prefix="bbrlab-crash-", suffix=".txt")
    with os.fdopen(fd, "w") as f:
        f.write(f"bbrlab {__version__}\nargv: {sys.argv}\n\n")
        traceback.print_exception(e, file=f)
    _fail(
        f"internal error ({type(e).__name__}: {_one_line(str(e))[:200]}); this is a bug in bbrlab — "
        f"please report it with the command, the scenario and {path}",
        EXIT_INTERNAL,
    )


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _fail(message: str, code: int) -> None:
    click.echo(f"error: {_one_line(message)}", err=True)
    sys.exit(code)


class _Cli(click.Group):
    """A group whose errors are one line on stderr, with the exit codes documented above."""

    def main(
        self,
        args: Any = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        import signal

        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, _on_sigterm)
            # Past `ulimit -f` a write fails with EFBIG (a one-line error) instead of the
            # signal killing the process mid-write.
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        try:
            with warnings.catch_warnings():
                warnings.showwarning = _show_warning
                rv = super().main(args, prog_name or "bbrlab", complete_var, standalone_mode=False, **extra)
        except UserError as e:
            _fail(str(e), e.exit_code)
        except (click.exceptions.Abort, KeyboardInterrupt):
            _fail("interrupted", EXIT_INTERRUPTED)
        except _Terminated:
            _fail("terminated", EXIT_TERMINATED)
        except click.exceptions.NoArgsIsHelpError as e:
            click.echo(e.format_message())
            sys.exit(0)
        except click.ClickException as e:
            hint = ""
            if isinstance(e, click.UsageError) and e.ctx is not None:
                hint = f" (see {e.ctx.command_path} --help)"
            _fail(e.format_message() + hint, e.exit_code)
        except Exception as e:  # anything else is a bug: say so in one line
            _report_bug(e)
        sys.exit(rv if isinstance(rv, int) else 0)


def _show_warning(
    message: Any, category: type[Warning], filename: str, lineno: int, file: Any = None, line: str | None = None
) -> None:
    """A ScenarioWarning is about the user's input: one line on stderr, like an error."""
    if issubclass(category, ScenarioWarning):
        click.echo(f"warning: {_one_line(str(message))}", err=True)
    else:
        _python_showwarning(message, category, filename, lineno, file, line)


_python_showwarning = warnings.showwarning


def _seconds(option: str, text: str) -> float:
    """A time option in seconds: "12.5s", "250ms", or a bare number (seconds: on the command line
    "12.5" can only mean that)."""
    if text.strip().startswith("-"):
        raise UserError(f'{option} {text}: a time in the run must be >= 0, e.g. "12.5s"')
    try:
        return float(text) if text.strip().replace(".", "", 1).isdigit() else parse_time(text) / 1e9
    except UnitError as e:
        raise UserError(f"{option}: {e}") from None


def _stderr_console(quiet: bool = False) -> Console:
    return Console(stderr=True, quiet=quiet)


def _stdout_console() -> Console:
    """Tables on stdout: as wide as the terminal; piped or redirected, as wide as they need (rich
    would otherwise wrap them at a made-up 80 columns)."""
    return Console() if sys.stdout.isatty() else Console(width=1000)


class _Progress:
    """A rich progress bar that appears only once a run has taken more than a second."""

    def __init__(self, console: Console, label: str, enabled: bool) -> None:
        self.console = console
        self.label = label
        self.enabled = enabled and console.is_terminal
        self.started = time.monotonic()
        self.bar: Any = None
        self.task: Any = None

    def __call__(self, now_ns: int, end_ns: int) -> None:
        if not self.enabled:
            return
        if self.bar is None:
            if time.monotonic() - self.started < 1.0:
                return
            from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

            self.bar = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                TextColumn("{task.fields[sim]}"),
                TimeElapsedColumn(),
                TextColumn("eta"),
                TimeRemainingColumn(),
                console=self.console,
                transient=True,
            )
            self.bar.start()
            self.task = self.bar.add_task(self.label, total=end_ns, sim="")
        self.bar.update(self.task, completed=now_ns, sim=f"{now_ns / 1e9:.1f}/{end_ns / 1e9:g} s sim")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


_SET_HELP = "Override a field: PATH=VALUE, e.g. flows.0.cc=bbr, duration=30s, topology.bottleneck.loss=1%. Repeatable."


@click.group(cls=_Cli, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="bbrlab")
def cli() -> None:
    """bbrlab: a congestion-control laboratory (BBR, CUBIC, Reno, ...) in a packet-level simulator."""


@cli.command()
@click.argument("scenario", metavar="SCENARIO")
@click.option(
    "--out",
    "out",
    metavar="DIR",
    default=None,
    help="Run directory (default runs/<name>-<overrides>-<timestamp>, e.g. runs/quick-cc=cubic,loss=1%-20261123-101500).",
)
@click.option("--set", "sets", metavar="PATH=VALUE", multiple=True, help=_SET_HELP)
@click.option("--seed", type=int, default=None, help="Random seed (same as --set seed=N).")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar and no table; print only the run directory.")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the summary (summary.json with run_dir added) as JSON on stdout, and nothing else there.",
)
@click.option(
    "--backend",
    type=click.Choice(["sim", "emu"]),
    default="sim",
    show_default=True,
    help="sim: the embedded simulator. emu: real Linux TCP in network namespaces through bbrlab's link emulator (root).",
)
def run(
    scenario: str, out: str | None, sets: tuple[str, ...], seed: int | None, quiet: bool, as_json: bool, backend: str
) -> None:
    """Run SCENARIO (a TOML file) and write a run directory."""
    from ..engine.runner import run as run_scenario
    from ..results.display import print_summary
    from ..results.provenance import default_run_dir
    from ..results.rundir import check_out_dir, expected_bytes
    from ..scenario import load_scenario
    from .stdio import stdout_to_stderr

    if backend == "emu":
        from ..emu.netns import check_environment

        check_environment()  # no root / no namespaces: one line, exit 2, before anything else
    overrides = list(sets) + ([f"seed={seed}"] if seed is not None else [])
    scn = load_scenario(scenario, overrides=overrides)
    _note_sweep_table(scenario, scn)
    # Before simulating: a run that cannot be written must not cost the simulation first.
    out_dir = check_out_dir(
        out if out is not None else default_run_dir(scn.name, overrides),
        expected_bytes(scn.derived()["sample_rows"], 0),
    )
    progress = _Progress(_stderr_console(), scn.name, enabled=not quiet)
    with stdout_to_stderr(enabled=as_json):
        try:
            result = run_scenario(scn, progress=progress, backend=backend)
        finally:
            progress.close()
        if not quiet and not as_json:
            print_summary(result.summary, _stdout_console())  # the numbers are final; the plots follow
        # The PNGs on two cores: a fork draws half of them while this process draws the rest and
        # writes the tables (plots.plot_all_forked).
        from ..plots.plots import plot_all_forked

        path = result.save(out_dir, plots=plot_all_forked)
    if as_json:
        click.echo(json.dumps({"run_dir": str(path), **result.summary}, indent=2, allow_nan=False))
    else:
        click.echo(str(path) if quiet else f"wrote {path}")
    if backend == "sim":
        global _nothing_left_at_exit
        _nothing_left_at_exit = True


@cli.command()
@click.argument("scenario", metavar="SCENARIO")
@click.option("--set", "sets", metavar="PATH=VALUE", multiple=True, help=_SET_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print the core's resolved JSON config instead of TOML.")
def validate(scenario: str, sets: tuple[str, ...], as_json: bool) -> None:
    """Check SCENARIO and print it resolved (every default filled in)."""
    from ..results.display import buffer_phrase
    from ..scenario import load_scenario
    from ..units import format_size

    scn = load_scenario(scenario, overrides=list(sets))
    sweep_plan = None
    if scn.has_sweep_table:  # checked too: every axis, value and run of the grid
        from ..sweep import plan_sweep

        sweep_plan = plan_sweep(scenario, sets=list(sets))
    if as_json:
        click.echo(json.dumps(scn.resolve(), indent=2))
        return
    d = scn.derived()
    buf = buffer_phrase(d, scn.topology)
    header = f"{scenario}: valid. {d['flow_count']} flow(s); BDP {format_size(d['bdp_bytes'])}; buffer {buf}"
    if sweep_plan is not None:
        header += f"\n[sweep] table: valid, {sweep_plan.describe()} (bbrlab sweep runs it)"
    click.echo(scn.to_toml(header=header), nl=False)


@cli.command("cc")
def cc_command() -> None:
    """List the congestion-control algorithms."""
    from ..core.algorithms import registry

    rows = registry()
    width = max((len(a.name) for a in rows), default=4)
    for a in rows:
        click.echo(f"{a.name:<{width}}  {a.summary}")
    for a in rows:
        for alias in a.aliases:
            click.echo(f"{alias:<{width}}  alias of {a.name}")


@cli.command()
@click.argument("run_dir", metavar="RUN_DIR")
@click.option("--ss", is_flag=True, help="Per-flow sender state like `ss -tni` (at the end, or --at).")
@click.option("--at", "at", metavar="TIME", default=None, help='Time for --ss, e.g. "12.5s" (default: end of run).')
@click.option(
    "--intervals",
    "interval",
    metavar="TIME",
    default=None,
    help='iperf3-style report every TIME (e.g. "1s"; the run\'s sample interval or a multiple): '
    "transfer, bitrate, retransmits and cwnd per flow.",
)
@click.option(
    "--flow", "flow_ids", type=int, multiple=True, metavar="N", help="With --intervals: only flow N (repeatable)."
)
@click.option("--json", "as_json", is_flag=True, help="Print the summary (or the --intervals report) as JSON.")
def show(
    run_dir: str, ss: bool, at: str | None, interval: str | None, flow_ids: tuple[int, ...], as_json: bool
) -> None:
    """Print the summary of RUN_DIR again, the flows' state with --ss, or an iperf3-style report with --intervals."""
    from ..results.display import print_summary
    from ..results.results import Result

    if at is not None and not ss:
        raise UserError("--at: only meaningful with --ss")
    if ss and interval is not None:
        raise UserError("--ss and --intervals: choose one")
    if flow_ids and interval is None:
        raise UserError("--flow: only meaningful with --intervals")
    at_s = _seconds("--at", at) if at is not None else None
    interval_s = _seconds("--intervals", interval) if interval is not None else None
    if interval_s is not None and interval_s <= 0:
        raise UserError(f'--intervals {interval}: must be > 0, e.g. "1s"')
    result = Result.load(run_dir)
    for name, why in result.damaged.items():
        click.echo(f"warning: {Path(run_dir) / name} is damaged ({why}); it is left out", err=True)
    if ss:
        from ..results.sstable import ss_lines

        if "timeseries.parquet" in result.damaged:
            raise UserError(
                f"{Path(run_dir) / 'timeseries.parquet'} is damaged; --ss needs it (the summary still shows without --ss)"
            )
        for line in ss_lines(result.timeseries, result.queue, at_s, result.flows):
            click.echo(line)
    elif interval_s is not None:
        from ..results.intervals import interval_lines, intervals

        if "timeseries.parquet" in result.damaged:
            raise UserError(f"{Path(run_dir) / 'timeseries.parquet'} is damaged; --intervals needs it")
        report = intervals(result, interval_s, list(flow_ids) or None)
        if as_json:
            click.echo(json.dumps({"run_dir": str(run_dir), **report.to_json()}, indent=2, allow_nan=False))
        else:
            click.echo("\n".join(interval_lines(report)))
    elif as_json:
        click.echo(json.dumps({"run_dir": str(run_dir), **result.summary}, indent=2, allow_nan=False))
    else:
        print_summary(result.summary, _stdout_console())


@cli.command("ls")
@click.argument("directory", metavar="[DIR]", default="runs")
@click.option("--json", "as_json", is_flag=True, help="Print the listing as JSON (one object per run).")
@click.option("--csv", "as_csv", is_flag=True, help="Print the listing as CSV.")
@click.option(
    "--sort",
    "sort_key",
    metavar="COLUMN",
    default="created",
    show_default=True,
    help="Sort by a column: created, name, goodput_bps, link_share, jain, retrans_rate, rtt_mean_ms, wall_s, ...",
)
@click.option("--reverse", "-r", is_flag=True, help="Reverse the order.")
@click.option(
    "--where",
    "condition",
    metavar="SQL",
    default=None,
    help="Only runs for which a SQL condition on the columns holds, e.g. \"goodput_bps > 50e6 AND backend = 'sim'\" (DuckDB).",
)
@click.option(
    "--sql",
    "query",
    metavar="QUERY",
    default=None,
    help="Run a SQL query over the views runs, flows, timeseries, queue (DuckDB), e.g. "
    '"SELECT cc, avg(goodput_bps) FROM flows GROUP BY cc".',
)
def ls_command(
    directory: str, as_json: bool, as_csv: bool, sort_key: str, reverse: bool, condition: str | None, query: str | None
) -> None:
    """List the complete runs under DIR (default runs/, searched recursively) with their key figures.

    --where and --sql need DuckDB, an optional extra: pip install 'bbrlab[query]'.
    """
    from ..runs import catalog

    if as_json and as_csv:
        raise UserError("--json and --csv: choose one")
    records = catalog.catalog(directory, on_skip=lambda p, why: click.echo(f"warning: {why}; left out", err=True))
    console = _stdout_console()
    if query is not None:
        columns, rows = catalog.sql(records, query)
        if as_json:
            click.echo(json.dumps([dict(zip(columns, r)) for r in rows], indent=2, default=str))
        elif as_csv:
            click.echo(catalog.to_csv([dict(zip(columns, r)) for r in rows], columns), nl=False)
        else:
            console.print(catalog.rows_table(columns, rows))
        return
    if condition is not None:
        records = catalog.where(records, condition)
    records = catalog.sort_runs(records, sort_key, reverse=reverse)
    if as_json:
        click.echo(json.dumps(records, indent=2, allow_nan=False))
    elif as_csv:
        click.echo(catalog.to_csv(records), nl=False)
    elif not records:
        click.echo(f"no runs under {directory}" + (" where that holds" if condition else ""), err=True)
    else:
        console.print(catalog.runs_table(records, directory))


def _note_sweep_table(scenario: str, scn: Any) -> None:
    if scn.has_sweep_table:
        click.echo(
            f"note: {scenario} has a [sweep] table; this runs the base scenario (`bbrlab sweep` runs the grid)",
            err=True,
        )


@cli.command()
@click.argument("scenario", metavar="SCENARIO")
@click.option(
    "--grid",
    "grid",
    metavar="PATH=V1,V2,...",
    multiple=True,
    help="An axis: any field --set reaches, with its values (e.g. topology.bottleneck.loss=0%,1%). Repeatable; "
    "the points are the cartesian product; wins over the scenario's [sweep] table for the same PATH.",
)
@click.option("--set", "sets", metavar="PATH=VALUE", multiple=True, help=_SET_HELP)
@click.option(
    "--seeds",
    type=click.IntRange(1, 1000),
    default=None,
    help="Seeds per point: seed..seed+N-1 (default: the [sweep] table's seeds, else 1).",
)
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(1, 4096),
    default=None,
    help="Parallel runs (local default: CPU count; ray default: as many as the cluster takes).",
)
@click.option(
    "--out",
    "out",
    metavar="DIR",
    default=None,
    help="Sweep directory (default sweeps/<name>-<timestamp>, or the newest one of the same sweep: it resumes).",
)
@click.option(
    "--engine",
    type=click.Choice(["local", "ray"]),
    default="local",
    show_default=True,
    help="local: a process pool on this machine. ray: Ray tasks (pip install 'bbrlab[ray]').",
)
@click.option(
    "--address",
    metavar="HOST:PORT",
    default=None,
    help="With --engine ray: the cluster's head (ray start --head); default: a local Ray.",
)
@click.option("--no-plots", is_flag=True, help="Do not draw each run's PNGs (faster).")
def sweep(
    scenario: str,
    grid: tuple[str, ...],
    sets: tuple[str, ...],
    seeds: int | None,
    jobs: int | None,
    out: str | None,
    engine: str,
    address: str | None,
    no_plots: bool,
) -> None:
    """Run SCENARIO over a grid of field values and seeds; write DIR/points.parquet (+ .csv) and runs/.

    Runs already in DIR (same resolved scenario, same bbrlab) are not run again: the same command
    resumes an interrupted sweep. Exit code 1 when a run failed (see the table's error column).
    """
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from ..sweep import plan_sweep, run_sweep

    plan = plan_sweep(scenario, grid=list(grid), sets=list(sets), seeds=seeds)
    console = _stderr_console()
    bar = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
        console=console,
        disable=not console.is_terminal,
    )
    task = bar.add_task(plan.name, total=len(plan.runs))

    def opened(path: Path, resumed: bool) -> None:
        click.echo(f"{'resuming' if resumed else 'sweep'} {path}: {plan.describe()}", err=True)

    try:
        with bar:
            outcome = run_sweep(
                plan,
                out=out,
                engine_name=engine,
                jobs=jobs,
                address=address,
                plots=not no_plots,
                progress=lambda done, total: bar.update(task, completed=done, total=total),
                on_open=opened,
            )
    except (KeyboardInterrupt, _Terminated):
        click.echo("stopped; the finished runs are kept: the same command resumes the sweep", err=True)
        raise
    click.echo(outcome.summary_line)
    if outcome.failed:
        _fail(f"{outcome.failed} run(s) failed; their errors are in the table's error column", 1)


@cli.command()
@click.argument("scenario", metavar="SCENARIO")
@click.option(
    "--out", "out", metavar="DIR", default=None, help="Output directory (default runs/compare-<name>-<timestamp>)."
)
@click.option("--set", "sets", metavar="PATH=VALUE", multiple=True, help=_SET_HELP)
@click.option(
    "--grid",
    "grid",
    metavar="AXIS=V1,V2,...",
    multiple=True,
    help="Grid axis over rate, rtt, loss, buffer (e.g. --grid rate=50Mbps,200Mbps --grid loss=0%,1%); "
    '"--grid fidelity" is the built-in 8-point grid. Repeatable; points are the cartesian product.',
)
@click.option(
    "--cc",
    "ccs",
    metavar="ALG",
    multiple=True,
    help="Algorithms to compare (default: the scenario's flows as written).",
)
@click.option(
    "--duration", "duration", metavar="TIME", default=None, help='Override duration for every point, e.g. "20s".'
)
@click.option(
    "--seeds",
    "seeds",
    type=click.IntRange(1, 1000),
    default=3,
    show_default=True,
    help="Simulator runs per point (seeds seed..seed+N-1); the table shows their mean and min-max.",
)
@click.option(
    "--emu-runs",
    "emu_runs",
    type=click.IntRange(1, 100),
    default=None,
    help="Kernel (emu) runs per point, seeded like --seeds; the table shows their mean and min-max.  [default: 1]",
)
@click.option(
    "--sim-only",
    is_flag=True,
    help="The simulator alone (no root, no kernel runs): its figures per point and algorithm.",
)
@click.option("--yes", "-y", is_flag=True, help="Start the kernel runs without asking (needed without a terminal).")
def compare(
    scenario: str,
    out: str | None,
    sets: tuple[str, ...],
    grid: tuple[str, ...],
    ccs: tuple[str, ...],
    duration: str | None,
    seeds: int,
    emu_runs: int | None,
    sim_only: bool,
    yes: bool,
) -> None:
    """Run SCENARIO on both backends (sim and emu) and tabulate the differences per algorithm.

    Asks before the kernel runs start (--yes skips the question); --sim-only runs the simulator alone.
    """
    from ..emu.compare import run_compare
    from ..engine.runner import run as run_scenario

    if sim_only and emu_runs is not None:
        raise UserError("--emu-runs: there are no kernel runs with --sim-only; drop one of them")
    if not sim_only:
        if not yes and not _stdin_is_terminal():
            raise UserError(
                "compare: the kernel runs need confirmation and there is no terminal to ask; "
                "pass --yes (or --sim-only for the simulator alone)"
            )
        from ..emu.netns import check_environment

        check_environment()
    table, path = run_compare(
        scenario,
        sets=list(sets),
        grid=list(grid),
        ccs=list(ccs),
        duration=duration,
        out=Path(out) if out else None,
        run_fn=run_scenario,
        echo=click.echo,
        seeds=seeds,
        emu_runs=emu_runs or 1,
        sim_only=sim_only,
        confirm=None if yes else (lambda q: click.confirm(q, default=False, err=True)),
    )
    click.echo(f"wrote {path}")


def _stdin_is_terminal() -> bool:
    return sys.stdin.isatty()


@cli.command()
@click.argument("studies", metavar="[STUDY]...", nargs=-1)
@click.option("--list", "list_only", is_flag=True, help="List the studies and exit.")
@click.option(
    "--size",
    type=click.Choice(["tiny", "quick", "full"]),
    default=None,
    help="tiny: seconds, every step of a study (tests); quick: minutes, indicative numbers (CI); "
    "full (default): the study.",
)
@click.option("--quick", is_flag=True, help="The same as --size quick.")
@click.option("--out", "out", metavar="DIR", default="reproduce", show_default=True, help="Output directory.")
@click.option(
    "--jobs", "-j", type=click.IntRange(1, 256), default=None, help="Parallel simulations (default: CPU count)."
)
def reproduce(
    studies: tuple[str, ...], list_only: bool, size: str | None, quick: bool, out: str, jobs: int | None
) -> None:
    """Reproduce the studies of the source documents: run their scenarios, redraw their figures,
    write REPORT.md.

    STUDY is a name from --list, or "all" (the default).
    """
    from ..reproduce import Size, get_study, list_studies, run_studies

    if list_only:
        for st in list_studies():
            click.echo(f"{st.name:<16} {st.title}\n{'':<16} source: {st.source_text}")
        click.echo("\nFull citations: docs/sources.md")
        return
    if quick and size not in (None, "quick"):
        raise UserError(f"--quick is --size quick; it contradicts --size {size}")
    chosen = Size(size or ("quick" if quick else "full"))
    names = list(studies) or ["all"]
    if names != ["all"]:
        for n in names:
            get_study(n)  # unknown names fail before anything runs
    console = _stderr_console()
    bars: dict[str, Any] = {}
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    progress = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
        console=console,
        disable=not console.is_terminal,
    )

    def on_progress(label: str, done: int, total: int) -> None:
        if label not in bars:
            bars[label] = progress.add_task(label, total=total)
        progress.update(bars[label], completed=done, total=total)

    with progress:
        done = run_studies(names, Path(out), size=chosen, jobs=jobs, progress=on_progress)
    for st, report, wall in done:
        click.echo(f"{st.name}: {report} ({wall:.0f} s)")
    click.echo(f"index: {Path(out) / 'index.html'}")


def _count_bar(label: str) -> tuple[Any, Any]:
    """A rich bar for work counted in steps (runs loaded, figures drawn), on a terminal only;
    returns (progress context, callback(done, total))."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = _stderr_console()
    bar = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
        disable=not console.is_terminal,
    )
    task = bar.add_task(label, total=None)
    return bar, lambda done, total: bar.update(task, completed=done, total=total)


def _warn(message: str) -> None:
    click.echo(f"warning: {_one_line(message)}", err=True)


@cli.command("plot")
@click.argument("paths", metavar="RUN_OR_SWEEP...", nargs=-1, required=True)
@click.option(
    "--out",
    "out",
    metavar="DIR",
    default=None,
    help="Directory for the PNGs (default: SWEEP/plots for one sweep, else runs/plots-<timestamp>).",
)
@click.option(
    "--label",
    "labels",
    metavar="PATH=TEXT",
    multiple=True,
    help="Legend text for the runs under PATH (as given, or its directory name). Repeatable.",
)
def plot_command(paths: tuple[str, ...], out: str | None, labels: tuple[str, ...]) -> None:
    """Figures across runs and sweeps: goodput, cwnd, RTT, queueing delay, Jain's index over time;
    throughput vs p95 RTT per algorithm; CDFs of RTT, flow completion and query times."""
    from ..results.provenance import default_run_dir
    from ..runs.multiplot import plot_runs
    from ..runs.runset import is_sweep_dir, parse_labels

    if out is None:
        one_sweep = len(paths) == 1 and is_sweep_dir(Path(paths[0]))
        out = str(Path(paths[0]) / "plots") if one_sweep else str(default_run_dir("plots"))
    bar, progress = _count_bar("plot")
    with bar:
        files = plot_runs(list(paths), out, labels=parse_labels(labels), progress=progress, warn=_warn)
    for f in files:
        click.echo(f"wrote {f}")


@cli.command("report")
@click.argument("path", metavar="RUN|SWEEP|STUDY_DIR")
@click.option(
    "--out",
    "out",
    metavar="FILE",
    default=None,
    help="HTML file (default DIR/report.html; a reproduce output directory gets DIR/index.html).",
)
def report_command(path: str, out: str | None) -> None:
    """Write one self-contained HTML page (figures embedded) for a run, a sweep or a study."""
    from ..report import write_report

    bar, progress = _count_bar("report")
    with bar:
        written = write_report(path, out, progress=progress, warn=_warn)
    click.echo(f"wrote {written}")


#: Set by a command that, once done, leaves nothing for the interpreter's shutdown to do (see main).
_nothing_left_at_exit = False


def main(argv: list[str] | None = None) -> None:
    """Entry point of the `bbrlab` script."""
    try:
        cli.main(args=argv, prog_name="bbrlab")
    except SystemExit as e:
        # Tearing down the interpreter (every module's objects: numpy, pydantic, pyarrow …) took
        # 130-170 ms after a tiny `bbrlab run` had written everything — a sixth of its wall time.
        # A simulator run that succeeded has closed its files and reaped its fork, and registers
        # nothing to run at exit, so the process ends here. Only for the process itself (argv None),
        # never for a caller's in-process main([...]).
        if argv is None and _nothing_left_at_exit and e.code in (0, None):
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            except (OSError, ValueError):  # a closed pipe: let the interpreter report it as usual
                raise e from None
            os._exit(0)
        raise


if __name__ == "__main__":
    main()
