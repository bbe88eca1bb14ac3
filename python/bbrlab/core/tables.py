"""The result tables as the core defines them (``crates/sim/src/metrics/``): every table's
columns with their dtype, unit and meaning, exported by the core. The real-Linux backend builds
its tables with :func:`encode`, the docs and the test stub are generated from :func:`schema`, and
:func:`check_raw` holds a backend's output to it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

__all__ = ["ColumnSpec", "TableSpec", "schema", "encode", "check_raw", "FLOW_SUMMARY_COLUMNS"]

# The flows table's measured columns that a run's summary reports per flow, in the core's order:
# summary.json's per-flow entries carry these, and the real-Linux backend measures exactly these
# (the rest of its flows table is filled as unmeasured).
FLOW_SUMMARY_COLUMNS = (
    "start_s",
    "end_s",
    "fct_s",
    "delivered_bytes",
    "goodput_bps",
    "data_packets_sent",
    "retransmits",
    "retrans_rate",
    "lost_packets",
    "rtt_mean_ms",
    "rtt_p50_ms",
    "rtt_p95_ms",
    "rtt_p99_ms",
    "rto_count",
    "retrans_fast",
    "retrans_rto",
    "retrans_tlp",
    "tlp_probes",
    "lost_retrans",
    "recoveries",
    "undos",
    "spurious_rtos",
    "dsack_dups",
    "ce_packets",
)


@dataclass(frozen=True)
class ColumnSpec:
    name: str
    dtype: str  # numpy dtype string
    unit: str
    description: str


@dataclass(frozen=True)
class TableSpec:
    name: str
    description: str
    columns: tuple[ColumnSpec, ...]

    def column(self, name: str) -> ColumnSpec:
        return next(c for c in self.columns if c.name == name)


@lru_cache(maxsize=1)
def schema() -> dict[str, TableSpec]:
    """Every result table by name, columns in the core's order."""
    from ..scenario.core import load_core

    return {
        t["name"]: TableSpec(t["name"], t["description"], tuple(ColumnSpec(**c) for c in t["columns"]))
        for t in load_core().result_schema()
    }


def _fill(dtype: str) -> Any:
    """What a backend that cannot measure a column writes: NaN for floats, 0 otherwise."""
    return np.nan if np.dtype(dtype).kind == "f" else 0


def encode(
    table: str, columns: dict[str, Any], rows: int, *, fill: dict[str, Any] | None = None
) -> dict[str, tuple[str, bytes]]:
    """A table in the core's raw form (``{column: (dtype, bytes)}``, the core's column order) from
    per-column values; a column not given is filled (``fill[name]`` or NaN / 0)."""
    spec = schema()[table]
    unknown = set(columns) - {c.name for c in spec.columns}
    if unknown:
        raise KeyError(f"{table} has no column(s) {sorted(unknown)}")
    out: dict[str, tuple[str, bytes]] = {}
    for c in spec.columns:
        if c.name in columns:
            values = np.asarray(columns[c.name], dtype=np.dtype(c.dtype))
            if values.shape != (rows,):
                raise ValueError(f"{table}.{c.name}: {values.shape[0] if values.ndim else 1} values for {rows} rows")
        else:
            values = np.full(rows, (fill or {}).get(c.name, _fill(c.dtype)), dtype=np.dtype(c.dtype))
        out[c.name] = (c.dtype, values.tobytes())
    return out


def check_raw(raw: dict[str, Any]) -> list[str]:
    """Differences between a backend's raw results and the schema (names, order, dtypes)."""
    problems = []
    for name, spec in schema().items():
        got = raw.get(name)
        if got is None:
            problems.append(f"missing table {name}")
            continue
        want = [(c.name, c.dtype) for c in spec.columns]
        have = [(k, v[0]) for k, v in got.items()]
        if have != want:
            problems.append(f"{name}: columns {have} != schema {want}")
    return problems
