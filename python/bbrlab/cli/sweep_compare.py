"""The commands over many runs of one scenario: `sweep` (a grid of overrides, run in parallel,
one table row per point) and `compare` (the same scenario on the simulator and on real kernel TCP in
network namespaces, asking before any kernel run unless --yes or a terminal says so)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from ..errors import UserError
from .common import (
    _SET_HELP,
    _fail,
    _overrides,
    _stderr_console,
    _stdout_console,
    _step_progress,
    _Terminated,
    add_flow_option,
    choice_option,
    count_option,
    out_option,
)

#: The most seeds per point that --seeds accepts.
MAX_SEEDS = 1000


def seeds_option(help: str, *, default: int | None = None) -> Any:
    """The --seeds option of sweep and compare: runs per point, seeds seed..seed+N-1; a
    ``default`` is shown in the help, else ``help`` says what is chosen."""
    return count_option("--seeds", "seeds", most=MAX_SEEDS, help=help, default=default)


@click.command()
@click.argument("scenario", metavar="SCENARIO")
@click.option(
    "--grid",
    "grid",
    metavar="PATH=V1,V2,...",
    multiple=True,
    help="An axis: any field --set reaches, with its values (e.g. topology.bottleneck.loss=0%,1%), or a short "
    "name: rate, rtt, buffer, loss, cc (every flow's algorithm). Repeatable; the points are the cartesian "
    "product; wins over the scenario's [sweep] table for the same PATH.",
)
@click.option("--set", "sets", metavar="PATH=VALUE", multiple=True, help=_SET_HELP)
@add_flow_option
@seeds_option("Seeds per point: seed..seed+N-1 (default: the [sweep] table's seeds, else 1).")
@count_option(
    "--jobs",
    "-j",
    most=4096,
    help="Parallel runs (local default: CPU count; ray default: as many as the cluster takes).",
)
@out_option("Sweep directory (default sweeps/<name>-<timestamp>, or the newest one of the same sweep: it resumes).")
@choice_option(
    "--engine", ("local", "ray"), "local: a process pool on this machine. ray: Ray tasks (pip install 'bbrlab[ray]')."
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
    add_flows: tuple[str, ...],
    seeds: int | None,
    jobs: int | None,
    out: str | None,
    engine: str,
    address: str | None,
    no_plots: bool,
) -> None:
    """Run SCENARIO over a grid of field values and seeds; write DIR/points.parquet (+ .csv) and runs/,
    and print a table of the points: the axes, then the key metrics as mean ± sd over the seeds.

    Runs already in DIR (same resolved scenario, same bbrlab) are not run again: the same command
    resumes an interrupted sweep. Exit code 1 when a run failed (see the table's error column).
    """
    from ..sweep import plan_sweep, run_sweep

    plan = plan_sweep(scenario, grid=list(grid), sets=_overrides(sets, add_flows), seeds=seeds)
    console = _stderr_console()
    bar = _step_progress(console, eta=True)
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
    from ..sweep.summary import terminal_table

    _stdout_console().print(terminal_table(outcome.table, [a.path for a in plan.axes]))
    click.echo(outcome.summary_line)
    if outcome.failed:
        _fail(f"{outcome.failed} run(s) failed; their errors are in the table's error column", 1)


def _stdin_is_terminal() -> bool:
    return sys.stdin.isatty()


@click.command()
@click.argument("scenario", metavar="SCENARIO")
@out_option("Output directory (default runs/compare-<name>-<timestamp>).")
@click.option("--set", "sets", metavar="PATH=VALUE", multiple=True, help=_SET_HELP)
@click.option(
    "--grid",
    "grid",
    metavar="AXIS=V1,V2,...",
    multiple=True,
    help="Grid axis over rate, rtt, loss, buffer, by short name or full path (e.g. --grid rate=50Mbps,200Mbps "
    "--grid topology.bottleneck.loss=0%,1%), or cc=A,B (a point per algorithm, as --cc A --cc B); "
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
    "--head-to-head",
    "head_to_head",
    is_flag=True,
    help="The --cc algorithms in one run, sharing the bottleneck: flow i runs the i-th algorithm (round robin "
    "over the scenario's flows; flows are added when it has fewer than algorithms). Default: each alone.",
)
@add_flow_option
@click.option(
    "--duration", "duration", metavar="TIME", default=None, help='Override duration for every point, e.g. "20s".'
)
@seeds_option("Simulator runs per point (seeds seed..seed+N-1); the table shows their mean and min-max.", default=3)
@count_option(
    "--emu-runs",
    "emu_runs",
    most=100,
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
    head_to_head: bool,
    add_flows: tuple[str, ...],
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
    from ..sweep.compare_args import compare_grid
    from ..sweep.compare_args import head_to_head as head_to_head_overrides

    grid_list, grid_ccs = compare_grid(grid)
    if grid_ccs and ccs:
        raise UserError("--grid cc=…: the same as --cc; give the algorithms one way")
    ccs = ccs or tuple(grid_ccs)
    sets = tuple(_overrides(sets, add_flows))
    if head_to_head:
        sets, ccs = (*sets, *head_to_head_overrides(scenario, sets, ccs)), ()
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
        grid=grid_list,
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
