"""The commands on one scenario or one run: `run` (simulate it, or run it on the emu backend,
and save the run directory), `validate` (check a scenario without running it), `cc` (the congestion
controls available) and `show` (a saved run's summary, `ss`-style lines or interval table)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from ..errors import ScenarioError, UserError
from ..results.taps import TAP_SENDER
from . import common
from .common import (
    _SET_HELP,
    _note_sweep_table,
    _overrides,
    _Progress,
    _seconds,
    _stderr_console,
    _stdout_console,
    add_flow_option,
    backend_option,
    out_option,
)


def _pcap_taps(ctx: click.Context, param: click.Parameter, value: str | None) -> tuple[str, ...] | None:
    """--pcap's capture points (``sender`` and link names), or None without --pcap. A value that
    is a scenario file is --pcap without a value written before SCENARIO: say so."""
    if value is None:
        return None
    if value.endswith(".toml") or Path(value).is_file():
        raise click.BadParameter(
            f"{value!r} is a file, not a link; write --pcap=LINK, or put --pcap after SCENARIO", ctx, param
        )
    taps = tuple(t.strip() for t in value.split(",") if t.strip())
    if not taps:
        raise click.BadParameter("names no link; write --pcap=bottleneck, or --pcap alone", ctx, param)
    return taps


@click.command()
@click.argument("scenario", metavar="SCENARIO")
@out_option(
    "Run directory (default runs/<name>-<overrides>-<timestamp>, e.g. runs/quick-flows.0.cc=cubic,loss=1%-20261123-101500)."
)
@click.option("--set", "sets", metavar="PATH=VALUE", multiple=True, help=_SET_HELP)
@add_flow_option
@click.option("--seed", type=int, default=None, help="Random seed (same as --set seed=N).")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar and no table; print only the run directory.")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the summary (summary.json with run_dir added) as JSON on stdout, and nothing else there.",
)
@backend_option(
    "sim: the embedded simulator. emu: real Linux TCP in network namespaces through bbrlab's link emulator (root)."
)
@click.option(
    "--pcap",
    "pcap",
    is_flag=False,
    flag_value=TAP_SENDER,
    default=None,
    metavar="[=LINK,…]",
    callback=_pcap_taps,
    help="Capture TCP headers as pcap files that tcpdump -r, tshark and Wireshark read. --pcap alone: every "
    "[[flows]] flow's at its sender (pcap = true on each), in RUN_DIR/packets.pcap. --pcap=LINK[,LINK…]: "
    "every segment leaving each named link (its name in the queue table: bottleneck, bottleneck_rev, "
    "a graph's a-b; added to [capture] links), in RUN_DIR/LINK.pcap; 'sender' in the list is the former. "
    "Write the value with '=' (or put --pcap after SCENARIO when it has none): '--pcap FILE' would "
    "take FILE as the link.",
)
def run(
    scenario: str,
    out: str | None,
    sets: tuple[str, ...],
    add_flows: tuple[str, ...],
    seed: int | None,
    quiet: bool,
    as_json: bool,
    backend: str,
    pcap: tuple[str, ...] | None,
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
    overrides = _overrides(sets, add_flows) + ([f"seed={seed}"] if seed is not None else [])
    scn = load_scenario(scenario, overrides=overrides)
    default_dir = default_run_dir(scn.name, overrides)  # named by the experiment, not the capture
    if pcap is not None:
        if backend != "sim":
            raise UserError("--pcap: only the sim backend captures packets; on emu, run tcpdump in its namespaces")
        capture = [f"flows.{i}.pcap=true" for i in range(len(scn.flows))] if TAP_SENDER in pcap else []
        links = list(dict.fromkeys([*scn.capture.links, *(t for t in pcap if t != TAP_SENDER)]))
        if links != list(scn.capture.links):
            capture.append(f"capture.links={json.dumps(links)}")  # names: a JSON list is a TOML array
        try:
            scn = load_scenario(scenario, overrides=overrides + capture)
        except ScenarioError as e:
            if e.path.startswith("capture.links"):  # the scenario's own links passed: one of --pcap's
                raise UserError(f"--pcap: {e.message}") from None
            raise
    _note_sweep_table(scenario, scn)
    # Before simulating: a run that cannot be written must not cost the simulation first.
    out_dir = check_out_dir(
        out if out is not None else default_dir,
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
        common.nothing_left_at_exit = True
    failed = [c for c in result.summary.get("checks", []) if not c.get("passed")]
    if failed:  # the scenario's [checks]: a table of what failed, exit 1 (usable in CI)
        from ..results.display import failed_checks_table

        _stderr_console().print(failed_checks_table(failed, len(result.summary["checks"])))
        click.get_current_context().exit(1)


@click.command()
@click.argument("scenario", metavar="SCENARIO")
@click.option("--set", "sets", metavar="PATH=VALUE", multiple=True, help=_SET_HELP)
@add_flow_option
@click.option("--json", "as_json", is_flag=True, help="Print the core's resolved JSON config instead of TOML.")
def validate(scenario: str, sets: tuple[str, ...], add_flows: tuple[str, ...], as_json: bool) -> None:
    """Check SCENARIO and print it resolved (every default filled in)."""
    from ..results.display import buffer_phrase
    from ..scenario import load_scenario
    from ..units import format_size

    sets = tuple(_overrides(sets, add_flows))
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


@click.command("cc")
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


@click.command()
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
    if not ss and interval_s is None:
        summary = _summary_only(Path(run_dir))
        if summary is not None:
            if as_json:
                click.echo(json.dumps({"run_dir": str(run_dir), **summary}, indent=2, allow_nan=False))
            else:
                print_summary(summary, _stdout_console())
            return
    from ..results.results import Result

    result = Result.load(run_dir)  # for --ss / --intervals, or to say what is wrong with run_dir
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


def _summary_only(path: Path) -> dict[str, Any] | None:
    """A complete run's summary.json, which is all plain `show` prints, read without the tables
    (pandas and pyarrow cost a second to import): tables whose bytes are plainly not Parquet
    (no ``PAR1`` at both ends) are warned about, as `Result.load` would. None: not a complete run."""
    from ..results.rundir import is_complete_run, read_summary

    if not is_complete_run(path):
        return None
    summary = read_summary(path / "summary.json")
    for f in sorted(path.glob("*.parquet")):
        why = _not_parquet(f)
        if why:
            click.echo(f"warning: {f} is damaged ({why}); it is left out", err=True)
    return summary


#: Parquet's magic number, at the start and at the end of every Parquet file.
_PARQUET_MAGIC = b"PAR1"


def _not_parquet(f: Path) -> str | None:
    """Why ``f`` cannot be a Parquet file, read from its first and last four bytes; None if it may be."""
    try:
        with open(f, "rb") as fh:
            head = fh.read(len(_PARQUET_MAGIC))
            size = fh.seek(0, 2)
            if size < 2 * len(_PARQUET_MAGIC):
                return f"{size} bytes: too short for Parquet"
            fh.seek(size - len(_PARQUET_MAGIC))
            tail = fh.read(len(_PARQUET_MAGIC))
    except OSError as e:
        return e.strerror or type(e).__name__
    if head != _PARQUET_MAGIC or tail != _PARQUET_MAGIC:
        return "not a Parquet file (no PAR1 at its start and end)"
    return None
