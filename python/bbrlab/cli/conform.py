"""`bbrlab conform`: the BBR draft's example test cases (Appendix A) on the simulator, as a table
of verdicts per case and algorithm, and conform.csv."""

from __future__ import annotations

import json
import time
from dataclasses import asdict
from pathlib import Path

import click

from .common import _stderr_console, _stdout_console, backend_option, out_option

#: How each verdict shows in the terminal table.
_CELL = {"pass": "[green]pass[/]", "fail": "[bold red]FAIL[/]", "not applicable": "[dim]n/a[/]"}


@click.command("conform")
@click.argument("algorithms", nargs=-1, metavar="[ALG]...")
@click.option(
    "--cases",
    metavar="A.1,A.10,...",
    default=None,
    help="Only these cases (comma-separated; 'A.10' or '10'). Default: all of A.1–A.21.",
)
@out_option(
    "Directory for conform.csv and, on the simulator, conform.html (the state timeline of each case; "
    "created if missing).",
    default=".",
    dest="out_dir",
)
@backend_option(
    "sim: the simulator (all cases). emu: the kernel through the link emulator (root; bbr3_linux's "
    "BPF port and kernel bbr as bbr1; the cases its sampled phases, gains and cwnd show)."
)
@click.option(
    "--sweep",
    is_flag=True,
    help="Simulator: run the cases whose scenario scales (bulk, idle, aggregation and the triggered ones) at "
    "1, 10, 100 Mbit/s × 10, 40, 200 ms; a cell counts its verdicts over the 9 points.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the rows as JSON instead of the table.")
@click.option("--quiet", "-q", is_flag=True, help="No progress messages.")
def conform_command(
    algorithms: tuple[str, ...],
    cases: str | None,
    out_dir: str,
    backend: str,
    sweep: bool,
    as_json: bool,
    quiet: bool,
) -> None:
    """Check BBR implementations against the draft's example test cases (draft-ietf-ccwg-bbr,
    Appendix A) on the simulator: each case runs a scenario with the per-ACK state trace on and
    checks the criterion on it. ALG: bbr3, bbr3_linux, bbr2, bbr1 (default: all four).

    Verdicts: pass; fail (the observed value against the criterion); not applicable (why: a rule
    the algorithm does not have, or a mechanism the simulator lacks). Each algorithm is held to
    its own source's rules where they differ from the draft (docs/conformance.md). Writes
    DIR/conform.csv with columns case, algorithm, backend, verdict, observed, criterion.

    --backend emu runs on the kernel (root): bbr3_linux (BPF port) and bbr1 (kernel bbr) by
    default, on the cases its 10-ms samples of phase, gains and cwnd show (A.1, A.3, A.10, A.14);
    each kernel run is real time, so choose cases with --cases."""
    from ..conform import ALGORITHMS, KERNEL_DEFAULT, conform, select_cases, write_csv
    from ..conform import sweep as run_sweep
    from ..errors import UserError

    chosen = select_cases(cases.split(",") if cases is not None else None)
    algs = algorithms or (KERNEL_DEFAULT if backend == "emu" else ALGORITHMS)
    err = _stderr_console(quiet=quiet or as_json)
    started = time.perf_counter()
    progress = lambda scn, alg: err.print(f"[dim]running {scn} with {alg}[/]")  # noqa: E731
    if sweep and backend != "sim":
        raise UserError("--sweep runs on the simulator only")
    runs: dict = {}
    if sweep:
        rows = run_sweep(algs, chosen, progress=progress)
    else:
        rows = conform(algs, chosen, progress=progress, backend=backend, keep_runs=runs)
    wall_s = time.perf_counter() - started
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    csv_path = write_csv(rows, out / "conform.csv")
    if runs:  # the simulator at the default point: the state timeline behind each verdict
        from ..conform.html import write_html

        write_html(rows, runs, out / "conform.html")
    if as_json:
        click.echo(json.dumps([asdict(r) for r in rows], indent=1, ensure_ascii=False))
        return
    from rich.table import Table

    where = "the kernel (emu)" if backend == "emu" else "the simulator"
    table = Table(title=f"BBR draft Appendix A on {where} ({wall_s:.1f} s)")
    table.add_column("case")
    table.add_column("name")
    for a in algs:
        table.add_column(a)
    names = {c.id: c.name for c in chosen}
    by_case: dict[str, dict[str, str]] = {}
    for r in rows:
        by_case.setdefault(r.case, {})[r.algorithm] = _CELL.get(r.verdict, r.verdict)
    if sweep:  # a cell counts the verdicts over the grid's points
        for case_id, cells in by_case.items():
            for a in cells:
                got = [r.verdict for r in rows if r.case == case_id and r.algorithm == a]
                cells[a] = ", ".join(f"{got.count(v)} {_CELL[v]}" for v in _CELL if got.count(v))
    for case_id, cells in by_case.items():
        table.add_row(case_id, names[case_id], *(cells[a] for a in algs))
    console = _stdout_console()
    console.print(table)
    fails = [r for r in rows if r.verdict == "fail"]
    for r in fails:
        console.print(f"[bold red]FAIL[/] {r.case} {r.algorithm}: {r.observed}  [dim](criterion: {r.criterion})[/]")
    counts = {v: sum(r.verdict == v for r in rows) for v in ("pass", "fail", "not applicable")}
    console.print(
        f"{counts['pass']} pass, {counts['fail']} fail, {counts['not applicable']} not applicable; "
        f"reasons and observed values in {csv_path}"
    )
