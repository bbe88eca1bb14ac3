"""The dc-incast simulations and their tables: one run per (fabric, algorithm, n, repetition) with
n synchronized bulk flows into one receiver, the per-point statistics over the samples (mean and
95 % CI of the aggregator's reading and of the exact throughput, the slowest quarter), and the
Waterloo study's own CSV schema written beside ours."""

from __future__ import annotations

import math
import random
from pathlib import Path

import numpy as np
import pandas as pd

from .. import dc_common as dc
from ..analysis import mean_ci
from ..scenarios import Flow, StudyRun, study_run
from .plan import LINK_75_BPS


def _slowest_quarter(readings: pd.Series) -> float:
    """Mean reading of a sample's ⌊n/4⌋ slowest flows (NaN below n = 4)."""
    k = len(readings) // 4
    return float(np.sort(readings.to_numpy())[:k].mean()) if k else math.nan


def _scenario(fabric: str, cc: str, n: int, rep: int, dur_s: float) -> StudyRun:
    seed = 10_000 * n + rep
    rng = random.Random(seed)
    return study_run(
        f"dc-incast-{fabric}-{cc}-n{n}-r{rep}",
        duration_s=dur_s,
        seed=seed,
        sample_interval_s=1.0,
        topology=dc.topology(fabric, n),
        flows=[Flow(cc, start_s=rng.randrange(0, 1000) * 1e-6) for _ in range(n)],
        tags={"fabric": fabric, "cc": cc, "n": n, "rep": rep, "dur_s": dur_s},
    )


def stats(runs: pd.DataFrame) -> pd.DataFrame:
    """Per (fabric, algorithm, n): mean and 95 % CI of the samples as the Waterloo DC study's tool
    read them (``mean_bps``, ``ci_bps``, ``frac75``: what the claims compare with the paper) and of
    the exact aggregate (``true_*``), and what limited them."""
    st = []
    for key, g in runs.groupby(["fabric", "cc", "n"]):
        m, ci = mean_ci(g["tool_bps"])
        tm, tci = mean_ci(g["throughput_bps"])
        st.append(
            dict(
                zip(["fabric", "cc", "n"], key),
                mean_bps=m,
                ci_bps=ci,
                samples=len(g),
                frac75=float((g["tool_bps"] >= LINK_75_BPS).mean()),
                true_mean_bps=tm,
                true_ci_bps=tci,
                true_frac75=float((g["throughput_bps"] >= LINK_75_BPS).mean()),
                rto=float(g["rto"].mean()),
                drops=float(g["drops"].mean()),
                min_flow_bps=float(g["min_flow"].mean()),
                slow_quarter_bps=float(g["slow_quarter_bps"].mean()),
            )
        )
    return pd.DataFrame(st)


def _seed_csvs(rows: pd.DataFrame, out_dir: Path) -> None:
    # The Waterloo study's CSV schema, as its aggregator wrote it: per sample one 'total' row per
    # flow (socket_fd: here the worker) and one 'all' row, in whole Mbit/s (`tool_reading_bps`).
    for fabric in dc.fabrics_in(rows):
        for cc in dc.CCS:
            out = []
            d = rows[(rows["fabric"] == fabric) & (rows["cc"] == cc)]
            for (n, _), g in d.groupby(["n", "rep"], sort=True):
                mbps = (g["tool_bps"] / 1e6).round().astype(int).tolist()
                out += [(n, w, v, "total") for w, v in enumerate(mbps)] + [(n, "all", sum(mbps), "total")]
            pd.DataFrame(out, columns=["num_flows", "socket_fd", "throughput", "time"]).to_csv(
                out_dir / f"thru_{dc.CSV_CC[cc]}_{fabric}.csv", index=False
            )
