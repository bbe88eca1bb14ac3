"""The `ls` command: the saved runs under a directory, one table row each."""

from __future__ import annotations

import json

import click

from ..errors import UserError
from .common import _stdout_console


@click.command("ls")
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
