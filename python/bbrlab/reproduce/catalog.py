"""The study registry and the context a study runs in."""

from __future__ import annotations

import importlib
import os
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import UserError
from . import pool


@dataclass(frozen=True)
class Study:
    """One reproducible study: its name, where it comes from, and the function that runs it."""

    name: str
    title: str
    source: str
    module: str  # python module (relative to this package) with a `run(ctx)` function

    def run(self, ctx: "StudyContext") -> Path:
        mod = importlib.import_module(f".{self.module}", __package__)
        return mod.run(ctx)


STUDIES: dict[str, Study] = {
    s.name: s
    for s in [
        Study(
            "wan-loss",
            "CUBIC vs BBR on long paths with random loss",
            "seed 002 (A. Toonk, 'TCP BBR - Exploring TCP congestion control', 2020) and the BBR "
            "patch series' loss claims",
            "wan_loss",
        ),
        Study(
            "esnet-100g",
            "CUBIC vs BBRv3 on 100G and 4x10G R&E paths; packet spacing at the sender",
            "seed 003 (E. Dart, B. Tierney, ESnet, 'BBRv3 Preliminary Results', LHCONE #52, 2024)",
            "esnet_100g",
        ),
        Study(
            "bql-vs-bbr",
            "BQL vs BBRv1 at 1 and 10 Gbit/s, RTT up to 1 s, with and without random loss",
            "seed 004 (Mareev et al., 'Efficiency of BQL Congestion Control under High Bandwidth-Delay "
            "Product Network Conditions')",
            "bql_vs_bbr",
        ),
        Study(
            "many-flows-ecn",
            "DCTCP vs bbr2 vs bbr2_new with 10-1000 flows on a 50G ECN switch; TSO autosizing and faster-ACK ablations",
            "seed 001 (N. Cardwell et al., 'BBR v2: A Model-based Congestion Control: Performance "
            "Optimizations', IETF 106, 2019)",
            "many_flows_ecn",
        ),
        Study(
            "dc-query",
            "Partition/aggregate query latency with and without a background flow, lossless vs store-and-forward ToR",
            "seed 000 (C. Howes, C. Muñoz, 'TCP BBR - Assessing Performance in a Data Center Environment', "
            "U. Waterloo, 2017), Figs 1-6",
            "dc_query",
        ),
        Study(
            "dc-incast",
            "Aggregate throughput of n synchronized flows into one receiver, lossless vs store-and-forward ToR",
            "seed 000 (Howes & Muñoz 2017), Figs 7-8",
            "dc_incast",
        ),
        Study(
            "dc-convergence",
            "Convergence and fairness of 5 staggered flows (T = 30 s, 60 s), lossless vs store-and-forward ToR",
            "seed 000 (Howes & Muñoz 2017), Figs 9-11, and its open question",
            "dc_convergence",
        ),
    ]
}


def list_studies() -> list[Study]:
    return list(STUDIES.values())


def get_study(name: str) -> Study:
    try:
        return STUDIES[name]
    except KeyError:
        known = ", ".join(STUDIES)
        raise UserError(f"reproduce: unknown study {name!r}; known studies: {known} (or 'all')") from None


@dataclass
class StudyContext:
    """What a study gets: where to write, how big to be, and a way to run many scenarios."""

    out_dir: Path
    quick: bool
    jobs: int = field(default_factory=lambda: os.cpu_count() or 1)
    progress: Callable[[str, int, int], None] | None = None
    started: float = field(default_factory=time.perf_counter)

    def run_many(self, label: str, scenarios: Sequence[dict[str, Any]], *, keep_timeseries: bool = False) -> pd.DataFrame:
        """Run raw scenario dicts in parallel; return one row per flow per scenario.

        Each row carries the scenario's ``tags`` (a dict the study attached to the raw scenario
        under the key ``"tags"``, removed before validation) plus the flow's summary columns.
        With ``keep_timeseries`` the per-run time series are kept in ``self.series[label]``.
        """
        rows, series = pool.run_scenarios(scenarios, jobs=self.jobs, keep_timeseries=keep_timeseries,
                                          progress=(lambda d, n: self.progress(label, d, n)) if self.progress else None)
        if keep_timeseries:
            self.series[label] = series
        return rows

    series: dict[str, list[tuple[dict[str, Any], pd.DataFrame, pd.DataFrame]]] = field(default_factory=dict)

    @property
    def elapsed_s(self) -> float:
        return time.perf_counter() - self.started


def run_studies(names: Iterable[str], out_dir: Path, *, quick: bool, jobs: int | None = None,
                progress: Callable[[str, int, int], None] | None = None) -> list[tuple[Study, Path, float]]:
    """Run the named studies (or all); returns (study, report path, wall seconds) for each."""
    names = list(names)
    if not names or names == ["all"]:
        studies = list_studies()
    else:
        studies = [get_study(n) for n in names]
    done = []
    for st in studies:
        d = out_dir / st.name
        d.mkdir(parents=True, exist_ok=True)
        ctx = StudyContext(out_dir=d, quick=quick, jobs=jobs or os.cpu_count() or 1, progress=progress)
        report = st.run(ctx)
        done.append((st, report, ctx.elapsed_s))
    return done
