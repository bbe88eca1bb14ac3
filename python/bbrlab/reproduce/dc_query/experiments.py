"""The dc-query simulations and their tables: one run per (fabric, algorithm, n, background) with
its queries in sequence, one row per query that started (a query still running at the run's end
counted as censored), the per-point statistics over the completed queries and how many they rest
on, and the Waterloo study's own CSV schema written beside ours."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from .. import dc_common as dc
from ..analysis import mean_ci, p95
from ..scenarios import Flow, QueryApp, StudyRun, study_run
from .plan import GAP_S, JITTER_S, QUERY_BYTES, QUERY_START_S, Plan


def _scenario(fabric: str, cc: str, n: int, reps: int, bg: bool, seed: int) -> StudyRun:
    # Budget per query for the run's length: generous where queries can hit RTOs; queries still
    # running at the end are counted as censored, those never started as such.
    per_query = 0.1 if dc.is_lossless(fabric) else (1.0 if bg else 2.0)
    duration_s = round(QUERY_START_S + reps * (GAP_S + per_query), 3)  # to the millisecond
    return study_run(
        f"dc-query-{fabric}-{cc}-n{n}{'-bg' if bg else ''}",
        duration_s=duration_s,
        seed=seed,
        sample_interval_s=0.1 if bg else 1.0,
        topology=dc.topology(fabric, n + 1),
        flows=[Flow(cc, sender=n)] if bg else [],
        apps=[
            QueryApp(
                workers=n,
                size_bytes=QUERY_BYTES,
                repetitions=reps,
                start_s=QUERY_START_S,
                gap_s=GAP_S,
                jitter_s=JITTER_S,
                flow=Flow(cc),
            )
        ],
        tags={"fabric": fabric, "cc": cc, "n": n, "bg": bg, "reps": reps},
    )


def _queries(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per query that started: fabric, bg, cc, n, run, query, response_s, censored.

    A query still running when the run ends is *censored*: its response time is only known to be
    at least ``response_s`` = the run's end − its first transfer's start (a lower bound, since the
    transfers start after the query). Queries that never started (the previous one had not
    finished) have no row; `_stats` counts them from the requested number."""
    a = rows[rows["app"] >= 0]
    q = a.groupby(["fabric", "bg", "cc", "n", "run", "query"], as_index=False).agg(
        response_s=("query_response_s", "first"), first_start_s=("start_s", "min"), last_end_s=("end_s", "max")
    )
    q["censored"] = ~np.isfinite(q["response_s"])
    # An unfinished transfer's end_s is the run's end (the flows table's definition).
    q.loc[q["censored"], "response_s"] = q["last_end_s"] - q["first_start_s"]
    return q.drop(columns=["first_start_s", "last_end_s"])


def completed(q: pd.DataFrame) -> pd.DataFrame:
    """The queries that finished (the only ones with a response time; the Waterloo DC study's CSVs
    hold these)."""
    return q[~q["censored"]]


def _stats(q: pd.DataFrame, rows: pd.DataFrame) -> pd.DataFrame:
    """Per (fabric, bg, cc, n): latency statistics of the completed queries, and how many queries
    they rest on: ``completed`` of ``requested``, ``censored`` (running at the run's end, at least
    ``censored_min_s`` each) and ``not_started``."""
    out = []
    reps = rows.groupby(["fabric", "bg", "cc", "n"])["reps"].first()
    for key, g in q.groupby(["fabric", "bg", "cc", "n"]):
        done, cens = g[~g["censored"]]["response_s"], g[g["censored"]]["response_s"]
        m, ci = mean_ci(done) if len(done) else (math.nan, math.nan)
        out.append(
            dict(
                zip(["fabric", "bg", "cc", "n"], key),
                mean_s=m,
                ci_s=ci,
                p95_s=p95(done) if len(done) else math.nan,
                median_s=float(done.median()) if len(done) else math.nan,
                completed=len(done),
                censored=len(cens),
                censored_min_s=float(cens.min()) if len(cens) else math.nan,
                not_started=int(reps[key]) - len(g),
                requested=int(reps[key]),
            )
        )
    return pd.DataFrame(out)


def _waterloo_csvs(q: pd.DataFrame, p: Plan, out: Path) -> None:
    """The completed queries ``q`` in the Waterloo study's own CSV schema, a file per (fabric,
    background, algorithm): num_workers,query_size,response_time (µs)."""
    for fabric in p.fabrics:
        for bg in (False, True):
            for cc in dc.CCS:
                d = q[(q["fabric"] == fabric) & (q["bg"] == bg) & (q["cc"] == cc)]
                pd.DataFrame(
                    {
                        "num_workers": d["n"],
                        "query_size": QUERY_BYTES,
                        "response_time": (d["response_s"] * 1e6).round().astype(int),
                    }
                ).to_csv(out / f"query_{dc.CSV_CC[cc]}{'_bg' if bg else ''}_{fabric}.csv", index=False)
