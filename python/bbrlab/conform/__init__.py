"""`bbrlab conform`: the BBR draft's example test cases (draft-ietf-ccwg-bbr, Appendix A) as
checks of bbrlab's BBR implementations on the simulator.

- ``scenarios.py``: the runs the cases need, as core configs (one flow with ``trace = true``);
- ``trace.py``: a run's tables and the phase episodes of its per-ACK state trace;
- ``rules.py``: which rules each algorithm is held to (draft, Linux v3, v2alpha, Linux v1);
- ``cases.py``: A.1–A.21, each a scenario and a check returning pass / fail / not applicable.

:func:`conform` runs each needed scenario once per algorithm (cases share runs) and returns one
:class:`Row` per case and algorithm. docs/conformance.md describes the cases and criteria.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from ..errors import UserError
from .cases import CASE_IDS, CASES, Case, outcome
from .rules import ALGORITHMS, RULES
from .scenarios import build
from .trace import Run, run_config

__all__ = ["ALGORITHMS", "CASE_IDS", "Row", "conform", "select_cases", "write_csv", "CSV_COLUMNS"]

CSV_COLUMNS = ("case", "algorithm", "backend", "verdict", "observed", "criterion")


@dataclass(frozen=True)
class Row:
    case: str
    algorithm: str
    backend: str
    verdict: str
    observed: str
    criterion: str


def select_cases(ids: Iterable[str] | None) -> list[Case]:
    """The cases named by ``ids`` ("A.1" or "1"), in appendix order; all when None."""
    if ids is None:
        return list(CASES)
    want = []
    for raw in ids:
        i = raw.strip().upper()
        if not i:
            continue
        i = i if i.startswith("A.") else f"A.{i}"
        if i not in CASE_IDS:
            raise UserError(f"--cases: no case {raw!r}; the cases are {', '.join(CASE_IDS)}")
        want.append(i)
    return [c for c in CASES if c.id in want]


def conform(
    algorithms: Sequence[str] = ALGORITHMS,
    cases: Sequence[Case] | None = None,
    *,
    progress: Callable[[str, str], None] | None = None,
) -> list[Row]:
    """Run ``cases`` (all by default) for each algorithm; one row per case and algorithm, in
    case order then algorithm order. ``progress(scenario, algorithm)`` is called before each run."""
    for a in algorithms:
        if a not in RULES:
            raise UserError(f"conform: {a!r} is not a BBR this suite checks; use {', '.join(RULES)}")
    chosen = list(CASES) if cases is None else list(cases)
    runs: dict[tuple[str, str], Run] = {}
    for alg in algorithms:
        for scn in dict.fromkeys(c.scenario for c in chosen if c.scenario is not None):
            if progress is not None:
                progress(scn, alg)
            runs[(scn, alg)] = run_config(build(scn, alg))
    rows = []
    for case in chosen:
        for alg in algorithms:
            run = runs.get((case.scenario, alg)) if case.scenario is not None else None
            o = outcome(case, alg, run)
            rows.append(Row(case.id, alg, "sim", o.verdict, o.observed, o.criterion))
    return rows


def write_csv(rows: Sequence[Row], path: Path) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(CSV_COLUMNS))
        w.writeheader()
        for r in rows:
            w.writerow(asdict(r))
    return path
