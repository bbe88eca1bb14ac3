"""The `bbrlab` command: a thin layer over the Python API.

Exit codes: 0 success; 2 bad input (scenario, --set, paths), printed as one line `error: …` without a
traceback; 1 the simulator failed or is missing, or a run's [checks] failed (`bbrlab run`, after
writing the run directory); 130 interrupted (Ctrl-C).
"""

# The commands live in modules by group — run_show (run, validate, cc, show), sweep_compare (sweep,
# compare), studies (reproduce, plot, report), ls, conform — on the helpers of common; this module
# keeps the click group, whose one-line errors and exit codes every command shares, and the entry
# point.

from __future__ import annotations

import os
import sys
import threading
import warnings
from typing import Any

import click

from ..errors import UserError
from . import common
from .common import (
    EXIT_INTERRUPTED,
    EXIT_TERMINATED,
    _fail,
    _on_sigterm,
    _report_bug,
    _show_warning,
    _Terminated,
)
from .conform import conform_command
from .ls import ls_command
from .run_show import cc_command, run, show, validate
from .studies import plot_command, report_command, reproduce
from .sweep_compare import compare, sweep

__all__ = ["cli", "main"]


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


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    """--version, as click's version_option prints it, reading the version only when asked (the
    package metadata costs every other command a tenth of a second to import)."""
    if not value or ctx.resilient_parsing:
        return
    from .._version import __version__

    click.echo(f"bbrlab, version {__version__}")
    ctx.exit()


@click.group(cls=_Cli, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_version,
    help="Show the version and exit.",
)
def cli() -> None:
    """bbrlab: a congestion-control laboratory (BBR, CUBIC, Reno, ...) in a packet-level simulator."""


for _command in (
    run,
    validate,
    cc_command,
    show,
    ls_command,
    sweep,
    compare,
    reproduce,
    plot_command,
    report_command,
    conform_command,
):
    cli.add_command(_command)


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
        if argv is None and common.nothing_left_at_exit and e.code in (0, None):
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            except (OSError, ValueError):  # a closed pipe: let the interpreter report it as usual
                raise e from None
            os._exit(0)
        raise


if __name__ == "__main__":
    main()
