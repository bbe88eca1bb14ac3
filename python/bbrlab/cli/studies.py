"""The commands on studies and saved runs as a whole: `reproduce` (run the source studies and
their reports), `plot` (figures over several run directories) and `report` (a run's HTML report)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ..errors import UserError
from .common import _count_bar, _stderr_console, _step_progress, _warn, backend_option, count_option, out_option


@click.command()
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
@out_option("Output directory.", default="reproduce")
@count_option("--jobs", "-j", most=256, help="Parallel simulations (default: CPU count).")
@backend_option(
    "emu: a study's kernel plan on real Linux (root), beside the simulator on the same points (nsperf, bql-vs-bbr)."
)
def reproduce(
    studies: tuple[str, ...], list_only: bool, size: str | None, quick: bool, out: str, jobs: int | None, backend: str
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
    progress = _step_progress(console, eta=True)

    def on_progress(label: str, done: int, total: int) -> None:
        if label not in bars:
            bars[label] = progress.add_task(label, total=total)
        progress.update(bars[label], completed=done, total=total)

    if backend == "emu":
        from ..emu.netns import check_environment

        check_environment()  # no root / no namespaces: one line, exit 2, before anything runs
    with progress:
        done = run_studies(names, Path(out), size=chosen, jobs=jobs, progress=on_progress, backend=backend)
    for st, report, wall in done:
        click.echo(f"{st.name}: {report} ({wall:.0f} s)")
    click.echo(f"index: {Path(out) / 'index.html'}")


@click.command("plot")
@click.argument("paths", metavar="RUN_OR_SWEEP...", nargs=-1, required=True)
@out_option("Directory for the PNGs (default: SWEEP/plots for one sweep, else runs/plots-<timestamp>).")
@click.option(
    "--label",
    "labels",
    metavar="PATH=TEXT",
    multiple=True,
    help="Legend text for the runs under PATH (as given, or its directory name). Repeatable.",
)
@click.option("--x", "x", metavar="AXIS", default=None, help="A sweep's axis (path or short name) for the x axis.")
@click.option(
    "--y",
    "y",
    metavar="METRIC",
    default=None,
    help="A points-table column to draw against --x (e.g. cubic.share, rtt_p95_ms, jain); default: the key "
    "metrics (goodput and share per algorithm, p95 RTT, retransmission rate, Jain's index).",
)
@click.option("--hue", "hue", metavar="AXIS", default=None, help="Another axis: a line per value.")
@click.option("--col", "col", metavar="AXIS", default=None, help="Another axis: a panel per value.")
@click.option(
    "--timeseries",
    is_flag=True,
    help="For a sweep, also the runs' time series and CDFs laid over each other (drawn by default for runs).",
)
def plot_command(
    paths: tuple[str, ...],
    out: str | None,
    labels: tuple[str, ...],
    x: str | None,
    y: str | None,
    hue: str | None,
    col: str | None,
    timeseries: bool,
) -> None:
    """Figures across runs and sweeps.

    A sweep: its metrics against each axis, mean ± sd over the seeds (by_<axis>.png; --x/--y/--hue/--col
    choose one figure), and throughput vs p95 RTT per algorithm. Runs, and a sweep with --timeseries:
    goodput, cwnd, RTT, queueing delay, Jain's index over time; CDFs of RTT, flow completion and query
    times.
    """
    from ..results.provenance import default_run_dir
    from ..runs.multiplot import plot_runs
    from ..runs.runset import is_sweep_dir, parse_labels
    from ..runs.sweepplot import plot_sweep_metrics

    sweeps = [p for p in paths if is_sweep_dir(Path(p))]
    chosen = [f"--{n}" for n, v in (("x", x), ("y", y), ("hue", hue), ("col", col)) if v is not None]
    if chosen and (len(paths) != 1 or not sweeps):
        raise UserError(f"{chosen[0]}: draws a sweep's metrics against its axes; give one sweep directory")
    if out is None:
        one_sweep = len(paths) == 1 and bool(sweeps)
        out = str(Path(paths[0]) / "plots") if one_sweep else str(default_run_dir("plots"))
    files: list[Path] = []
    if len(paths) == 1 and sweeps:
        files += plot_sweep_metrics(paths[0], out, x=x, y=y, hue=hue, col=col)
    if not chosen:
        overlays = timeseries or len(sweeps) < len(paths) or not files  # a sweep without axes: its runs
        bar, progress = _count_bar("plot")
        with bar:
            files += plot_runs(
                list(paths), out, labels=parse_labels(labels), progress=progress, warn=_warn, overlays=overlays
            )
    for f in files:
        click.echo(f"wrote {f}")


@click.command("report")
@click.argument("path", metavar="RUN|SWEEP|STUDY_DIR")
@out_option("HTML file (default DIR/report.html; a reproduce output directory gets DIR/index.html).", metavar="FILE")
@click.option(
    "--self-contained",
    "self_contained",
    is_flag=True,
    help="A sweep's page embeds its runs' summaries and figures (links to them stay inside the file), "
    "so the one file can be sent on its own.",
)
def report_command(path: str, out: str | None, self_contained: bool) -> None:
    """Write one self-contained HTML page (figures embedded) for a run, a sweep or a study."""
    from ..report import write_report

    bar, progress = _count_bar("report")
    with bar:
        written = write_report(path, out, progress=progress, warn=_warn, self_contained=self_contained)
    click.echo(f"wrote {written}")
