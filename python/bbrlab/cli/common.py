"""What every `bbrlab` command shares: the exit codes, the one-line error and warning (and the
crash file of an internal error), SIGTERM raised as an exception so clean-up runs, time options in
seconds, the stdout and stderr consoles, the progress bars (a run's simulated time, counted steps),
the --set help, and the flag a command sets when nothing is left for the interpreter's shutdown."""

from __future__ import annotations

import os
import sys
import time
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import click

from ..errors import ScenarioWarning, UserError
from ..units import UnitError, parse_time

if TYPE_CHECKING:
    from rich.console import Console

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

    from .._version import __version__

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
    from rich.console import Console  # here, not at the top: `bbrlab cc` and the like need no rich

    return Console(stderr=True, quiet=quiet)


def _stdout_console() -> Console:
    """Tables on stdout: as wide as the terminal; piped or redirected, as wide as they need (rich
    would otherwise wrap them at a made-up 80 columns)."""
    from rich.console import Console

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


_ADD_FLOW_HELP = (
    "Add a flow after the scenario's: its fields as KEY=VALUE,..., e.g. cc=cubic,start=5s. Repeatable; "
    "applied before --set (so --set flows.N.… reaches it). --set never adds a flow."
)


def out_option(help: str, *, metavar: str = "DIR", default: str | None = None, dest: str = "out") -> Any:
    """The --out option of a command that writes files: where to (``metavar`` DIR or FILE) into
    the parameter ``dest``; a ``default`` is shown in the help, else ``help`` says what is chosen."""
    return click.option("--out", dest, metavar=metavar, default=default, show_default=default is not None, help=help)


def choice_option(name: str, choices: Sequence[str], help: str) -> Any:
    """An option that picks one of ``choices`` by name; the first is the default, shown in the help."""
    return click.option(name, type=click.Choice(list(choices)), default=choices[0], show_default=True, help=help)


def backend_option(help: str) -> Any:
    """The --backend option of the commands that run on either backend: sim (the simulator, the
    default) or emu (real Linux TCP through the link emulator); ``help`` says what each does there."""
    return choice_option("--backend", ("sim", "emu"), help)


def count_option(*decls: str, most: int, help: str, default: int | None = None) -> Any:
    """An option that counts (runs, seeds, parallel workers): an integer from 1 to ``most``; a
    ``default`` is shown in the help, else ``help`` says what is chosen."""
    return click.option(
        *decls, type=click.IntRange(1, most), default=default, show_default=default is not None, help=help
    )


def add_flow_option(command: Any) -> Any:
    """The --add-flow option (``add_flows``) of the commands that take --set."""
    return click.option("--add-flow", "add_flows", metavar="KEY=VALUE,...", multiple=True, help=_ADD_FLOW_HELP)(command)


def _overrides(sets: Sequence[str], add_flows: Sequence[str]) -> list[str]:
    """The overrides of --add-flow (first: --set may then set the new flows' fields) and --set."""
    from ..scenario.overrides import add_flow_override

    return [*(add_flow_override(a) for a in add_flows), *sets]


def _step_progress(console: Any, *, eta: bool, transient: bool = False) -> Any:
    """A rich progress display of work counted in steps (its label, bar, done/total, elapsed time,
    and with ``eta`` the time remaining), drawn only when ``console`` is a terminal."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        ProgressColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    columns: list[ProgressColumn] = [
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    ]
    if eta:
        columns += [TextColumn("eta"), TimeRemainingColumn()]
    return Progress(*columns, console=console, transient=transient, disable=not console.is_terminal)


def _count_bar(label: str) -> tuple[Any, Any]:
    """A rich bar for work counted in steps (runs loaded, figures drawn), on a terminal only;
    returns (progress context, callback(done, total))."""
    bar = _step_progress(_stderr_console(), eta=False, transient=True)
    task = bar.add_task(label, total=None)
    return bar, lambda done, total: bar.update(task, completed=done, total=total)


def _warn(message: str) -> None:
    click.echo(f"warning: {_one_line(message)}", err=True)


def _note_sweep_table(scenario: str, scn: Any) -> None:
    if scn.has_sweep_table:
        click.echo(
            f"note: {scenario} has a [sweep] table; this runs the base scenario (`bbrlab sweep` runs the grid)",
            err=True,
        )


#: Set by a command that, once done, leaves nothing for the interpreter's shutdown to do (see main).
nothing_left_at_exit = False
