"""`bbrlab ls`: the catalog of past runs under a directory, one row per complete run directory.

The plain listing reads only each run's summary.json (no Parquet; it imports neither pandas
nor the simulator), so listing hundreds of runs takes a fraction of a second. The optional query layer (``--where``, ``--sql``,
DuckDB: ``pip install 'bbrlab[query]'``) adds SQL over the same catalog (view ``runs``) and over
every listed run's tables (views ``flows``, ``timeseries``, ``queue``, each with a ``run`` column
holding the run's path, as in ``runs.path``). DuckDB reads the Parquet files only when a query
touches those views.
"""

from __future__ import annotations

import datetime as _dt
import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..results.rundir import configured_flows, find_runs, read_summary

__all__ = ["COLUMNS", "catalog", "sort_runs", "runs_table", "rows_table", "to_csv", "where", "sql", "QUERY_VIEWS"]

#: The catalog's columns, in order (what --json/--csv write and --sort/--where/--sql name).
COLUMNS: tuple[str, ...] = (
    "created",
    "name",
    "backend",
    "seed",
    "overrides",
    "flows",
    "ccs",
    "goodput_bps",
    "link_share",
    "jain",
    "retrans_rate",
    "rtt_mean_ms",
    "wall_s",
    "duration_s",
    "scenario_file",
    "git_commit",
    "bbrlab_version",
    "path",
)
QUERY_VIEWS = ("runs", "flows", "timeseries", "queue")


def _num(x: Any) -> float | None:
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) else None


def _rtt_mean_ms(flows: list[dict[str, Any]]) -> float | None:
    """The run's mean RTT: the configured flows' mean RTTs weighted by their data packets (each
    flow's mean is over its RTT samples, which come with its ACKs), so a flow that sent little
    weighs little."""
    pairs = [(_num(f.get("rtt_mean_ms")), _num(f.get("data_packets_sent")) or 0.0) for f in configured_flows(flows)]
    known = [(r, w) for r, w in pairs if r is not None]
    total = sum(w for _, w in known)
    if total > 0:
        return sum(r * w for r, w in known) / total
    return sum(r for r, _ in known) / len(known) if known else None


def _record(path: Path, summary: dict[str, Any]) -> dict[str, Any]:
    run, agg, flows = summary.get("run", {}), summary.get("aggregate", {}), summary.get("flows", [])
    created = run.get("created")
    if not isinstance(created, str):  # a run from before summaries said when
        mtime = (path / "summary.json").stat().st_mtime
        created = _dt.datetime.fromtimestamp(mtime, _dt.timezone.utc).isoformat(timespec="seconds")
    overrides = run.get("overrides")
    configured = configured_flows(flows)
    return {
        "created": created,
        "name": summary.get("name", path.name),
        "backend": run.get("backend"),
        "seed": run.get("seed"),
        "overrides": [str(o) for o in overrides] if isinstance(overrides, list) else [],
        "flows": len(configured),
        "ccs": ",".join(dict.fromkeys(str(f.get("cc", "")) for f in configured)),
        "goodput_bps": _num(agg.get("goodput_bps")),
        "link_share": _num(agg.get("link_share")),
        "jain": _num(agg.get("jain")),
        "retrans_rate": _num(agg.get("retrans_rate")),
        "rtt_mean_ms": _rtt_mean_ms(flows),
        "wall_s": _num(run.get("wall_s")),
        "duration_s": _num(summary.get("scenario", {}).get("duration_s", run.get("sim_end_s"))),
        "scenario_file": run.get("scenario_file"),
        "git_commit": run.get("git_commit"),
        "bbrlab_version": run.get("bbrlab_version"),
        "path": str(path),
    }


def catalog(root: str | Path, *, on_skip: Any = None) -> list[dict[str, Any]]:
    """One record (:data:`COLUMNS`) per complete run directory under ``root``, oldest first.
    A run whose summary.json cannot be read is left out; ``on_skip(path, why)`` hears of it."""
    root = Path(root)
    if not root.exists():
        raise UserError(
            f"{root}: no such directory (runs go to runs/ unless --out says otherwise; "
            f"give the directory: bbrlab ls DIR)"
        )
    if not root.is_dir():
        raise UserError(f"{root}: not a directory; bbrlab ls lists the run directories under a directory")
    out = []
    for path in find_runs(root):
        try:
            out.append(_record(path, read_summary(path / "summary.json")))
        except (UserError, OSError) as e:
            if on_skip is not None:
                on_skip(path, str(e))
    return sort_runs(out, "created")


def sort_runs(records: list[dict[str, Any]], key: str, *, reverse: bool = False) -> list[dict[str, Any]]:
    """Records sorted by ``key`` (a catalog column); runs without a value come last."""
    if key not in COLUMNS:
        raise UserError(f"--sort {key}: not a column; use one of {', '.join(COLUMNS)}")
    have = [r for r in records if r.get(key) is not None]
    lacking = [r for r in records if r.get(key) is None]

    def k(r: dict[str, Any]) -> Any:
        v = r[key]
        return " ".join(v) if isinstance(v, list) else v

    return sorted(have, key=k, reverse=reverse) + lacking


# ------------------------------------------------------------------ output


def _local_time(iso: str) -> str:
    try:
        return _dt.datetime.fromisoformat(iso).astimezone().strftime("%Y-%m-%d %H:%M:%S")
    except ValueError:
        return iso


#: The listing's numeric columns: (column, unit shown under its name, factor from the stored
#: value, decimals). One unit per column, so rows compare at a glance; the header is the column's
#: name as --sort, --where and --sql take it.
_SHOWN: tuple[tuple[str, str, float, int], ...] = (
    ("goodput_bps", "Mbit/s", 1e-6, 2),
    ("link_share", "%", 100.0, 1),
    ("jain", "", 1.0, 3),
    ("retrans_rate", "%", 100.0, 2),
    ("rtt_mean_ms", "ms", 1.0, 2),
    ("wall_s", "s", 1.0, 3),
)


def runs_table(records: Sequence[dict[str, Any]], root: str | Path) -> Any:
    """The listing as a rich Table (times in local time; overrides by their short names, in full
    in --json/--csv). Each header is the queryable column name, with its unit beneath."""
    from rich.table import Table

    from ..results.provenance import short_overrides

    table = Table(title=f"{len(records)} run{'s' if len(records) != 1 else ''} under {root}", title_justify="left")
    for name in ("created", "name", "backend"):
        table.add_column(name, overflow="fold")
    table.add_column("seed", justify="right", overflow="fold")
    table.add_column("overrides", overflow="fold")
    table.add_column("flows: ccs", overflow="fold")
    for name, unit, _, _ in _SHOWN:
        table.add_column(f"{name}\n{unit}" if unit else name, justify="right", overflow="fold")
    table.add_column("path", overflow="fold")
    for r in records:
        numbers = ["-" if r[c] is None else f"{r[c] * k:.{d}f}" for c, _, k, d in _SHOWN]
        table.add_row(
            _local_time(r["created"]),
            str(r["name"]),
            str(r["backend"] or "-"),
            str(r["seed"] if r["seed"] is not None else "-"),
            " ".join(short_overrides(r["overrides"])) or "-",
            f"{r['flows']}: {r['ccs']}" if r["ccs"] else str(r["flows"]),
            *numbers,
            r["path"],
        )
    return table


def rows_table(columns: Sequence[str], rows: Sequence[tuple[Any, ...]]) -> Any:
    """A query's result as a rich Table (numbers right-aligned, floats to 6 significant digits)."""
    from rich.table import Table

    table = Table(title=f"{len(rows)} row{'s' if len(rows) != 1 else ''}", title_justify="left")
    numeric = [
        bool(rows) and all(isinstance(r[i], (int, float)) or r[i] is None for r in rows) for i in range(len(columns))
    ]
    for c, right in zip(columns, numeric):
        table.add_column(str(c), justify="right" if right else "left", overflow="fold")
    for r in rows:
        table.add_row(*("-" if v is None else f"{v:.6g}" if isinstance(v, float) else str(v) for v in r))
    return table


def to_csv(records: Iterable[dict[str, Any]], columns: Sequence[str] = COLUMNS) -> str:
    """CSV text, one row per record; a list (overrides) is written space-separated."""
    import csv
    import io

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(columns)
    for r in records:
        w.writerow(
            ["" if r.get(c) is None else " ".join(r[c]) if isinstance(r.get(c), list) else r[c] for c in columns]
        )
    return buf.getvalue()


# ------------------------------------------------------------------ the query layer (DuckDB)


def _duckdb(option: str) -> Any:
    try:
        import duckdb
    except ImportError:
        raise UserError(
            f"{option} needs DuckDB, an optional extra: pip install 'bbrlab[query]' (or pip install duckdb); "
            "the plain listing works without it"
        ) from None
    return duckdb


def _connect(records: Sequence[dict[str, Any]], option: str) -> Any:
    """An in-memory DuckDB with the catalog as ``runs`` and the runs' tables as lazy views."""
    import pyarrow as pa

    duckdb = _duckdb(option)
    con = duckdb.connect(":memory:")
    # overrides as text (space-separated, as --csv writes them): `overrides LIKE '%loss=1%%'`
    # and `overrides <> ''` work as a reader expects of what the table prints.
    runs = pa.Table.from_pylist(
        [{c: " ".join(r[c]) if c == "overrides" else r.get(c) for c in COLUMNS} for r in records],
        schema=pa.schema(
            [
                (
                    c,
                    pa.int64()
                    if c in ("seed", "flows")
                    else pa.float64()
                    if c.endswith(("_bps", "_share", "_rate", "_ms", "_s")) or c == "jain"
                    else pa.string(),
                )
                for c in COLUMNS
            ]
        ),
    )
    con.register("runs", runs)
    for table in QUERY_VIEWS[1:]:
        files = [
            str(Path(r["path"]) / f"{table}.parquet")
            for r in records
            if (Path(r["path"]) / f"{table}.parquet").is_file()
        ]
        if not files:
            con.execute(f"CREATE VIEW {table} AS SELECT NULL::VARCHAR AS run WHERE false")
            continue
        listing = ", ".join("'" + f.replace("'", "''") + "'" for f in files)
        # The run a row belongs to: its file's directory, spelled as runs.path spells it.
        con.execute(
            f"CREATE VIEW {table} AS SELECT parse_dirpath(filename) AS run, * EXCLUDE (filename) "
            f"FROM read_parquet([{listing}], filename = true, union_by_name = true)"
        )
    return con


def where(records: Sequence[dict[str, Any]], condition: str) -> list[dict[str, Any]]:
    """The records for which a SQL condition over the catalog's columns holds
    (``goodput_bps > 50e6 AND backend = 'sim'``)."""
    con = _connect(records, "--where")
    try:
        keep = {row[0] for row in con.execute(f"SELECT path FROM runs WHERE {condition}").fetchall()}
    except Exception as e:  # duckdb's error classes vary by version; all are the query's fault
        raise UserError(f"--where: {' '.join(str(e).split())[:300]}") from None
    finally:
        con.close()
    return [r for r in records if r["path"] in keep]


def sql(records: Sequence[dict[str, Any]], query: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    """(column names, rows) of a SQL query over the views ``runs``, ``flows``, ``timeseries``, ``queue``."""
    con = _connect(records, "--sql")
    try:
        cur = con.execute(query)
        if cur.description is None:
            return [], []
        return [d[0] for d in cur.description], cur.fetchall()
    except Exception as e:  # as in where()
        raise UserError(f"--sql: {' '.join(str(e).split())[:300]} (views: {', '.join(QUERY_VIEWS)})") from None
    finally:
        con.close()
