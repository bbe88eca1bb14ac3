"""What a study runs with: its size, where it writes, and a way to run many scenarios."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

import pandas as pd

from . import pool
from .claims import Claim, write_claims_csv
from .report import write_report
from .scenarios import StudyRun
from .sources import Source


class Size(str, Enum):
    """How big a study runs. Every study says what each size means in one table, ``PLANS``."""

    TINY = "tiny"  # seconds: every step of the study (runs, analysis, figures, report), for tests
    QUICK = "quick"  # minutes: indicative numbers (`--quick`, CI)
    FULL = "full"  # the study as a user runs it


@dataclass
class StudyContext:
    """What a study gets: where to write, how big to be, and a way to run many scenarios."""

    out_dir: Path
    size: Size = Size.FULL
    jobs: int = field(default_factory=lambda: os.cpu_count() or 1)
    progress: Callable[[str, int, int], None] | None = None
    #: "sim", or "emu": real Linux through bbrlab's link emulator, one run at a time (a study that
    #: has a kernel plan: `catalog.run_studies` refuses the others).
    backend: str = "sim"
    started: float = field(default_factory=time.perf_counter)
    #: per `run_many` label with ``keep_timeseries``: [(tags, timeseries, queue)] in run order
    series: dict[str, list[tuple[dict[str, Any], pd.DataFrame, pd.DataFrame]]] = field(default_factory=dict)

    def run_many(self, label: str, runs: Sequence[StudyRun], *, keep_timeseries: bool = False) -> pd.DataFrame:
        """Run the scenarios in parallel; return one row per flow per run.

        Each row carries its run's ``tags`` as columns, then ``run`` (the index in ``runs``) and the
        run-level columns (aggregate goodput, Jain, queue, wall time, packets, PAUSE frames, drops).
        """
        progress = self.progress
        report = (lambda done, total: progress(label, done, total)) if progress else None
        rows, series = pool.run_scenarios(
            runs,
            jobs=self.jobs if self.backend == "sim" else 1,  # emu: real time, one run at a time
            keep_timeseries=keep_timeseries,
            progress=report,
            backend=self.backend,
        )
        if keep_timeseries:
            self.series[label] = series
        return rows

    @property
    def elapsed_s(self) -> float:
        return time.perf_counter() - self.started

    def write_report(
        self, title: str, sections: Sequence[tuple[str, str]], *, source: Source, packets: int, claims: Sequence[Claim]
    ) -> Path:
        """``REPORT.md`` in the study's directory (title, source, sections, size and cost of the run)
        and ``claims.csv`` beside it: every claim the sections' tables print, in their order."""
        write_claims_csv(self.out_dir / "claims.csv", claims)
        return write_report(
            self.out_dir / "REPORT.md",
            title,
            sections,
            source=source,
            size=self.size.value,
            wall_s=self.elapsed_s,
            packets=packets,
        )
