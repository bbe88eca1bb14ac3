"""`bbrlab conform`: the BBR draft's example test cases (draft-ietf-ccwg-bbr, Appendix A) as
checks of bbrlab's BBR implementations on the simulator.

- ``scenarios.py``: the runs the cases need, as core configs (one flow with ``trace = true``);
- ``trace.py``: a run's tables and the phase episodes of its per-ACK state trace;
- ``rules.py``: which rules each algorithm is held to (draft, Linux v3, v2alpha, Linux v1);
- ``cases.py``: A.1–A.21, each a scenario and a check returning pass / fail / not applicable
  (``outcome.py``); the checks by group: ``startup_drain.py``, ``probe_bw.py``, ``probe_rtt.py``,
  ``path_changes.py``, with what several of them measure in ``measures.py``.

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
from .scenarios import SWEEP_RATES_BPS, SWEEP_RTTS_NS, SWEEPABLE, TRIGGERED, build
from .trace import Run, run_config
from .triggers import replay

__all__ = [
    "ALGORITHMS",
    "CASE_IDS",
    "KERNEL_DEFAULT",
    "Row",
    "conform",
    "sweep",
    "select_cases",
    "write_csv",
    "CSV_COLUMNS",
]

#: The algorithms `--backend emu` checks by default: the kernel BBRs whose phase is readable.
KERNEL_DEFAULT = ("bbr3_linux", "bbr1")

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
    backend: str = "sim",
    point: tuple[int, int] | None = None,
    keep_runs: dict[tuple[str, str], Run] | None = None,
) -> list[Row]:
    """Run ``cases`` (all by default) for each algorithm; one row per case and algorithm, in
    case order then algorithm order. ``progress(scenario, algorithm)`` is called before each run.
    ``backend`` "emu": the kernel (``kernel.py``), for ``bbr3_linux`` and ``bbr1`` only.
    ``point``: (rate_bps, rtt_ns) instead of the default point; only the cases whose scenario is
    swept (``scenarios.SWEEPABLE``) are run, and each row's observed value names the point.
    ``keep_runs``: filled with the simulator runs, by (scenario, algorithm), for the timeline page."""
    if backend == "emu":
        return _conform_kernel(algorithms, list(CASES) if cases is None else list(cases), progress)
    if backend != "sim":
        raise UserError(f"conform: --backend {backend!r}; use sim or emu")
    for a in algorithms:
        if a not in RULES:
            raise UserError(f"conform: {a!r} is not a BBR this suite checks; use {', '.join(RULES)}")
    chosen = list(CASES) if cases is None else list(cases)
    if point is not None:
        chosen = [c for c in chosen if c.scenario in SWEEPABLE]
    runs: dict[tuple[str, str], Run] = {}

    def run_of(scn: str, alg: str) -> Run:
        if (scn, alg) not in runs:
            if scn in TRIGGERED:
                trigger = TRIGGERED[scn][1]
                base = run_of(trigger.base, alg)
                if progress is not None:
                    progress(scn, alg)
                runs[(scn, alg)] = replay(build(trigger.base, alg, point), base, trigger, alg)
            else:
                if progress is not None:
                    progress(scn, alg)
                runs[(scn, alg)] = run_config(build(scn, alg, point))
        return runs[(scn, alg)]

    for alg in algorithms:
        for scn in dict.fromkeys(c.scenario for c in chosen if c.scenario is not None):
            run_of(scn, alg)
    if keep_runs is not None:
        keep_runs.update(runs)
    rows = []
    for case in chosen:
        for alg in algorithms:
            run = runs.get((case.scenario, alg)) if case.scenario is not None else None
            o = outcome(case, alg, run)
            where = "" if point is None else f"[{point[0] / 1e6:g} Mbit/s, {point[1] / 1e6:g} ms] "
            rows.append(Row(case.id, alg, "sim", o.verdict, where + o.observed, o.criterion))
    return rows


def write_csv(rows: Sequence[Row], path: Path) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(CSV_COLUMNS))
        w.writeheader()
        for r in rows:
            w.writerow(asdict(r))
    return path


def _conform_kernel(
    algorithms: Sequence[str], chosen: Sequence[Case], progress: Callable[[str, str], None] | None
) -> list[Row]:
    from .kernel import KERNEL_ALGORITHMS, KERNEL_CASES, kernel_outcome, run_kernel

    for a in algorithms:
        if a not in KERNEL_ALGORITHMS:
            raise UserError(
                f"conform --backend emu: {a!r} has no kernel phase export; use {', '.join(KERNEL_ALGORITHMS)}"
            )
    runs: dict[tuple[str, str], object] = {}
    for alg in algorithms:
        for scn in dict.fromkeys(KERNEL_CASES[c.id][0] for c in chosen if c.id in KERNEL_CASES):
            if progress is not None:
                progress(scn, alg)
            try:
                runs[(scn, alg)] = run_kernel(scn, alg)
            except Exception as e:  # a kernel run that fails is that row's verdict, not the suite's
                runs[(scn, alg)] = e
    rows = []
    for case in chosen:
        for alg in algorithms:
            o = kernel_outcome(case.id, alg, runs)
            rows.append(Row(case.id, alg, "emu", o.verdict, o.observed, o.criterion))
    return rows


def sweep(
    algorithms: Sequence[str] = ALGORITHMS,
    cases: Sequence[Case] | None = None,
    *,
    progress: Callable[[str, str], None] | None = None,
) -> list[Row]:
    """The swept cases at every point of the grid (``SWEEP_RATES_BPS`` × ``SWEEP_RTTS_NS``), the
    default point included: one row per case, algorithm and point."""
    rows: list[Row] = []
    for rate in SWEEP_RATES_BPS:
        for rtt in SWEEP_RTTS_NS:
            rows += conform(algorithms, cases, progress=progress, point=(rate, rtt))
    return rows
