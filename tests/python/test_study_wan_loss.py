"""The wan-loss study (Toonk BBR blog) end to end, quick version: files, physics, and the blog's effect."""

from __future__ import annotations

import pandas as pd
import pytest
from bbrlab.reproduce import Size, run_studies

CEILING = 1448 / 1538  # payload share of the wire


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    out = tmp_path_factory.mktemp("repro")
    [(st, report, wall)] = run_studies(["wan-loss"], out, size=Size.QUICK, jobs=2)
    return out / "wan-loss", report


def test_report_and_figures_exist(study):
    d, report = study
    text = report.read_text()
    assert "Toonk BBR blog" in text and "Random-loss sweep" in text
    for f in ("heatmap-blog.png", "heatmap-unlimited.png", "loss-sweep.png", "grid.csv", "loss-sweep.csv"):
        assert (d / f).stat().st_size > 0, f


def test_no_goodput_above_the_link_ceiling(study):
    d, _ = study
    grid = pd.read_csv(d / "grid.csv")
    assert (grid["goodput_bps"] <= 2.5e9 * CEILING * 1.001).all()
    sweep = pd.read_csv(d / "loss-sweep.csv")
    assert (sweep["goodput_bps"] <= 100e6 * CEILING * (1 - sweep["loss_pct"] / 100) * 1.02).all()


def test_cubic_collapses_under_loss_while_bbr_keeps_a_large_share(study):
    d, _ = study
    g = pd.read_csv(d / "grid.csv")
    lossy = g[(g["rtt_ms"] == 140) & (g["loss_pct"] == 1.5) & (g["buffers"] == "unlimited")]
    cubic = float(lossy[lossy["cc"] == "cubic"]["goodput_bps"].iloc[0])
    bbr = float(lossy[lossy["cc"] == "bbr1"]["goodput_bps"].iloc[0])
    # The blog: CUBIC ~1 Mbit/s (the Mathis bound at 140 ms, 1.5 % is ~1.2 Mbit/s), BBR far above.
    assert cubic < 5e6
    assert bbr > 100 * cubic


def test_blog_buffers_cap_goodput_at_the_window_limit(study):
    d, _ = study
    g = pd.read_csv(d / "grid.csv")
    blog = g[(g["rtt_ms"] == 140) & (g["loss_pct"] == 0) & (g["buffers"] == "blog")]
    window_limit_bps = 6 * 2**20 * 8 / 0.140
    assert (blog["goodput_bps"] <= window_limit_bps * 1.01).all()
