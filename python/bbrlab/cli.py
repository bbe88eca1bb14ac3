"""The `bbrlab` command: a thin layer over the Python API.

Exit codes: 0 success; 2 bad input (scenario, --set, paths), printed as one line `error: …` without a
traceback; 1 the simulator failed or is missing; 130 interrupted (Ctrl-C).
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from ._version import __version__
from .errors import UserError
from .units import UnitError, parse_time

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
    _fail(f"internal error ({type(e).__name__}: {_one_line(str(e))[:200]}); this is a bug in bbrlab — "
          f"please report it with the command, the scenario and {path}", EXIT_INTERNAL)


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _fail(message: str, code: int) -> None:
    click.echo(f"error: {_one_line(message)}", err=True)
    sys.exit(code)


class _Cli(click.Group):
    """A group whose errors are one line on stderr, with the exit codes documented above."""

    def main(self, args: Any = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, **extra: Any) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        import signal

        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, _on_sigterm)
            # Past `ulimit -f` a write fails with EFBIG (a one-line error) instead of the
            # signal killing the process mid-write.
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        try:
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
        except Exception as e:  # noqa: BLE001 - anything else is a bug: say so in one line
            _report_bug(e)
        sys.exit(rv if isinstance(rv, int) else 0)


def _stderr_console(quiet: bool = False) -> Console:
    return Console(stderr=True, quiet=quiet)


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


def _default_out(name: str) -> Path:
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    base = Path("runs") / f"{name}-{stamp}"
    out, n = base, 1
    while out.exists() or out.with_name(out.name + ".incomplete").exists():
        n += 1
        out = base.with_name(f"{base.name}-{n}")
    return out


_SET_HELP = "Override a field: PATH=VALUE, e.g. flows.0.cc=bbr, duration=30s, topology.bottleneck.loss=1%. Repeatable."


@click.group(cls=_Cli, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="bbrlab")
def cli() -> None:
    """bbrlab: a congestion-control laboratory (BBR, CUBIC, Reno, ...) in a packet-level simulator."""


@cli.command()
@click.argument("scenario", metavar="SCENARIO")
@click.option("--out", "out", metavar="DIR", default=None, help="Run directory (default runs/<name>-<timestamp>).")
@click.option("--set", "sets", metavar="PATH=VALUE", multiple=True, help=_SET_HELP)
@click.option("--seed", type=int, default=None, help="Random seed (same as --set seed=N).")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar and no table; print only the run directory.")
@click.option(
    "--backend",
    type=click.Choice(["sim", "emu"]),
    default="sim",
    show_default=True,
    help="sim: the embedded simulator. emu: real Linux TCP in network namespaces through bbrlab's link emulator (root).",
)
def run(scenario: str, out: str | None, sets: tuple[str, ...], seed: int | None, quiet: bool, backend: str) -> None:
    """Run SCENARIO (a TOML file) and write a run directory."""
    from .display import print_summary
    from .plotworker import PlotWorker
    from .rundir import check_out_dir, expected_bytes
    from .runner import run as run_scenario
    from .scenario import load_scenario

    if backend == "emu":
        from .emu.netns import check_environment

        check_environment()  # no root / no namespaces: one line, exit 2, before anything else
    # Started first: another process loads matplotlib while this one validates and simulates.
    draw_plots = click.get_current_context().with_resource(PlotWorker())
    overrides = list(sets) + ([f"seed={seed}"] if seed is not None else [])
    scn = load_scenario(scenario, overrides=overrides)
    # Before simulating: a run that cannot be written must not cost the simulation first.
    out_dir = check_out_dir(out if out is not None else _default_out(scn.name),
                            expected_bytes(scn.derived()["sample_rows"], 0))
    progress = _Progress(_stderr_console(), scn.name, enabled=not quiet)
    try:
        result = run_scenario(scn, progress=progress, backend=backend)
    finally:
        progress.close()
    if not quiet:
        print_summary(result.summary, Console())  # the numbers are final; the plots follow
    path = result.save(out_dir, plots=draw_plots)
    click.echo(str(path) if quiet else f"wrote {path}")


@cli.command()
@click.argument("scenario", metavar="SCENARIO")
@click.option("--set", "sets", metavar="PATH=VALUE", multiple=True, help=_SET_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print the core's resolved JSON config instead of TOML.")
def validate(scenario: str, sets: tuple[str, ...], as_json: bool) -> None:
    """Check SCENARIO and print it resolved (every default filled in)."""
    from .scenario import load_scenario
    from .units import format_size

    scn = load_scenario(scenario, overrides=list(sets))
    if as_json:
        click.echo(json.dumps(scn.resolve(), indent=2))
        return
    d = scn.derived()
    if d["buffer_bytes"] is not None:
        buf = format_size(d["buffer_bytes"])
    elif d["buffer_packets"] is not None:
        buf = f"{d['buffer_packets']} packets"
    else:
        buf = "unlimited"
    header = f"{scenario}: valid. {d['flow_count']} flow(s); BDP {format_size(d['bdp_bytes'])}; buffer {buf}"
    click.echo(scn.to_toml(header=header), nl=False)


@cli.command("cc")
def cc_command() -> None:
    """List the congestion-control algorithms."""
    from .algorithms import registry

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
def show(run_dir: str, ss: bool, at: str | None) -> None:
    """Print the summary of RUN_DIR again, or the flows' state with --ss."""
    from .display import print_summary
    from .results import Result

    if at is not None and not ss:
        raise UserError("--at: only meaningful with --ss")
    at_s: float | None = None
    if at is not None:
        if at.strip().startswith("-"):
            raise UserError(f'--at {at}: a time in the run must be >= 0, e.g. "12.5s"')
        try:
            # A bare number is seconds here: on the command line "12.5" can only mean that.
            at_s = float(at) if at.strip().replace(".", "", 1).isdigit() else parse_time(at) / 1e9
        except UnitError as e:
            raise UserError(f"--at: {e}") from None
    result = Result.load(run_dir)
    for name, why in result.damaged.items():
        click.echo(f"warning: {Path(run_dir) / name} is damaged ({why}); it is left out", err=True)
    if ss:
        from .sstable import ss_lines

        if "timeseries.parquet" in result.damaged:
            raise UserError(f"{Path(run_dir) / 'timeseries.parquet'} is damaged; --ss needs it (the summary still shows without --ss)")
        for line in ss_lines(result.timeseries, result.queue, at_s, result.flows):
            click.echo(line)
    else:
        print_summary(result.summary, Console())


@cli.command()
@click.argument("scenario", metavar="SCENARIO")
@click.option("--out", "out", metavar="DIR", default=None, help="Output directory (default runs/compare-<name>-<timestamp>).")
@click.option("--set", "sets", metavar="PATH=VALUE", multiple=True, help=_SET_HELP)
@click.option(
    "--grid",
    "grid",
    metavar="AXIS=V1,V2,...",
    multiple=True,
    help='Grid axis over rate, rtt, loss, buffer (e.g. --grid rate=50Mbps,200Mbps --grid loss=0%,1%); '
    '"--grid fidelity" is the built-in 8-point grid. Repeatable; points are the cartesian product.',
)
@click.option("--cc", "ccs", metavar="ALG", multiple=True, help="Algorithms to compare (default: the scenario's flows as written).")
@click.option("--duration", "duration", metavar="TIME", default=None, help='Override duration for every point, e.g. "20s".')
@click.option("--seeds", "seeds", type=click.IntRange(1, 1000), default=3, show_default=True,
              help="Simulator runs per point (seeds seed..seed+N-1); the table shows their mean and min-max.")
@click.option("--emu-runs", "emu_runs", type=click.IntRange(1, 100), default=1, show_default=True,
              help="Kernel (emu) runs per point, seeded like --seeds; the table shows their mean and min-max.")
def compare(scenario: str, out: str | None, sets: tuple[str, ...], grid: tuple[str, ...], ccs: tuple[str, ...],
            duration: str | None, seeds: int, emu_runs: int) -> None:
    """Run SCENARIO on both backends (sim and emu) and tabulate the differences per algorithm."""
    from .emu.compare import run_compare
    from .emu.netns import check_environment
    from .runner import run as run_scenario

    check_environment()
    table, path = run_compare(scenario, sets=list(sets), grid=list(grid), ccs=list(ccs), duration=duration,
                              out=Path(out) if out else None, run_fn=run_scenario, echo=click.echo, seeds=seeds,
                              emu_runs=emu_runs)
    click.echo(f"wrote {path}")


@cli.command()
@click.argument("studies", metavar="[STUDY]...", nargs=-1)
@click.option("--list", "list_only", is_flag=True, help="List the studies and exit.")
@click.option("--size", type=click.Choice(["tiny", "quick", "full"]), default=None,
              help="tiny: seconds, every step of a study (tests); quick: minutes, indicative numbers (CI); "
                   "full (default): the study.")
@click.option("--quick", is_flag=True, help="The same as --size quick.")
@click.option("--out", "out", metavar="DIR", default="reproduce", show_default=True, help="Output directory.")
@click.option("--jobs", "-j", type=click.IntRange(1, 256), default=None, help="Parallel simulations (default: CPU count).")
def reproduce(studies: tuple[str, ...], list_only: bool, size: str | None, quick: bool, out: str,
              jobs: int | None) -> None:
    """Reproduce the seed studies: run their scenarios, redraw their figures, write REPORT.md.

    STUDY is a name from --list, or "all" (the default).
    """
    from .reproduce import Size, get_study, list_studies, run_studies

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
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        TextColumn("eta"), TimeRemainingColumn(), console=console, disable=not console.is_terminal)

    def on_progress(label: str, done: int, total: int) -> None:
        if label not in bars:
            bars[label] = progress.add_task(label, total=total)
        progress.update(bars[label], completed=done, total=total)

    with progress:
        done = run_studies(names, Path(out), size=chosen, jobs=jobs, progress=on_progress)
    for st, report, wall in done:
        click.echo(f"{st.name}: {report} ({wall:.0f} s)")


def main(argv: list[str] | None = None) -> None:
    """Entry point of the `bbrlab` script."""
    cli.main(args=argv, prog_name="bbrlab")


if __name__ == "__main__":
    main()
