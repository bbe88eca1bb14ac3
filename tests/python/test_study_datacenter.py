"""The data-center studies of the Waterloo DC study (dc-query, dc-incast, dc-convergence), at size tiny."""

from __future__ import annotations

import pandas as pd
import pytest

pytest.importorskip("bbrlab._core")

NAMES = ["dc-query", "dc-incast", "dc-convergence"]


@pytest.fixture(scope="module")
def studies(tiny_study):
    dirs = {name: tiny_study(name) for name in NAMES}
    return dirs, {name: d / "REPORT.md" for name, d in dirs.items()}


def test_reports_and_figures(studies):
    roots, reports = studies
    for name, figs in {
        "dc-query": ["fig1-mean-no-bg.png", "fig3-cdf-no-bg.png", "fig6-cdf-bg.png", "queries.csv"],
        "dc-incast": ["fig7-throughput.png", "fig8-cdf.png", "samples.csv"],
        "dc-convergence": ["levels.csv", "bbr_converge_lossless.csv"],
    }.items():
        text = reports[name].read_text()
        assert "The Waterloo study's claims beside ours" in text and "PAUSE" in text
        for f in figs:
            assert (roots[name] / f).stat().st_size > 0, f


def test_lossless_query_latency_has_no_incast_collapse(studies):
    roots, _ = studies
    st = pd.read_csv(roots["dc-query"] / "stats.csv")
    d = st[(st["fabric"] == "lossless") & (~st["bg"])]
    floor = (1 << 20) * 1538 / 1448 * 8 / 1e9
    assert (d["mean_s"] >= floor).all()
    assert (d["mean_s"] < 1.5 * floor).all()  # n up to 20: no RTO anywhere


def test_convergence_csv_has_the_seed_schema(studies):
    roots, _ = studies
    c = pd.read_csv(roots["dc-convergence"] / "cubic_converge_lossless.csv")
    assert list(c.columns) == ["num_flows", "socket_fd", "throughput", "time"]
    assert set(c["socket_fd"]) == {5, 6, 7, 8, 9}
    assert c["throughput"].max() <= 941.5 * 1.01  # lossless: no stalls, so no catch-up bursts above the ceiling
