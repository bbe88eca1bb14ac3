"""The WAN studies (esnet-100g, bql-vs-bbr) at size tiny: report, figures and physical sanity.

The checks are physics, not the studies' own outputs: no goodput above the link's payload ceiling
(1448/1538 of its rate), no negative counts, queues within the drop-tail buffer, a gap histogram
that counts every departure.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("bbrlab._core")

from bbrlab.reproduce import STUDIES, Size  # noqa: E402  # only once the core is known to be there

CEILING = 1448 / 1538


def _report_ok(path: Path, figures: list[str]) -> str:
    assert path.name == "REPORT.md" and path.is_file()
    text = path.read_text()
    for f in figures:
        assert (path.parent / f).is_file() and (path.parent / f).stat().st_size > 1000, f
        assert f"({f})" in text, f"{f} not linked from the report"
    assert "nan" not in text.lower().replace("nanos", "")
    return text


def test_registered():
    assert {"esnet-100g", "bql-vs-bbr"} <= set(STUDIES)


def test_bql_vs_bbr_tiny(tiny_study):
    tmp_path = tiny_study("bql-vs-bbr")
    text = _report_ok(
        tmp_path / "REPORT.md",
        ["fig2-rtt100ms.png", "fig4-summary.png", "fig5-1g-loss1pct.png", "fig6-10g-loss07pct.png"],
    )
    assert "994.6 Mbit/s" in text and "158 KB" in text  # the paper's numbers sit beside ours
    buffer = 80e6
    for csv, rate in (("rtt-sweep.csv", 1e9), ("loss-1g.csv", 1e9), ("loss-10g.csv", 10e9)):
        df = pd.read_csv(tmp_path / csv)
        # The paper ran Linux 4.15, whose BBR had no ACK-aggregation cwnd term.
        assert set(df["cc"]) == {"bql", "bbr1_linux413"}
        assert (df["goodput_bps"] > 0).all()
        assert (df["goodput_bps"] <= rate * CEILING * 1.001).all(), df[["cc", "rtt_ms", "goodput_bps"]]
        assert (df["utilization"] <= 1.001).all()
        assert (df["queue_mean_bytes"] >= 0).all() and (df["queue_max_bytes"] <= buffer + 1600).all()
        assert (df["queue_mean_bytes"] <= df["queue_max_bytes"] + 1).all()
    # The markdown tables carry utilizations as percentages; none may exceed 100 %.
    for pct in re.findall(r"\((\d+\.\d) %\)", text):
        assert float(pct) <= 100.05


def test_esnet_100g_tiny(tiny_study):
    from bbrlab.reproduce import esnet_100g as m

    p = m.PLANS[Size.TINY]
    tmp_path = tiny_study("esnet-100g")
    text = _report_ok(tmp_path / "REPORT.md", ["path-100g-buffer5ms.png", "path-4x10g.png", "packet-gaps.png"])
    assert "22.90" in text and "568,340" in text  # the slides' table sits beside ours
    runs = pd.read_csv(tmp_path / "path-100g-runs.csv")
    assert len(runs) == 2 * 3 * p.seeds * len(p.buffers_ms)
    assert (runs["tput_bps"] > 0).all()
    assert (runs["tput_bps"] <= runs["link_gbps"] * 1e9 * CEILING * 1.001).all()
    assert (runs["retransmits"] >= 0).all()
    flows = pd.read_csv(tmp_path / "path-4x10g-flows.csv")
    # One stream sits on one 10G member (scaled), with the 103 MB window: neither may be exceeded.
    one = flows[flows["streams"] == 1]
    assert (one["goodput_bps"] <= one["link_gbps"] * 1e9 * CEILING * 1.001).all()
    assert (one["goodput_bps"] <= 103e6 * 8 / 0.147 * 1.001).all()
    capped = flows[flows["cap_gbps"] > 0]
    assert (capped["goodput_bps"] <= capped["cap_gbps"] * p.rate_scale * 1e9 * 1.001).all()
    g = pd.read_csv(tmp_path / "gaps.csv")
    assert (g["count"] >= 0).all() and (g["lo_ns"] < g["hi_ns"]).all()
    # Every configuration recorded gaps, and no gap can be shorter than one packet at the NIC rate.
    nic_wire_ns = 1538 * 8 / (100e9 * p.rate_scale) * 1e9
    for _, d in g.groupby(["cc", "pacing_gbps"]):
        assert d["count"].sum() > 10
        assert d.loc[d["hi_ns"] <= nic_wire_ns / 1.3, "count"].sum() == 0


def test_gap_histogram_counts_every_departure():
    """The core's gaps table counts every NIC departure of the flows that ask, and only those."""
    import bbrlab
    from bbrlab.scenario import parse_scenario

    raw = {
        "name": "g",
        "duration": "2s",
        "topology": {"kind": "dumbbell", "bottleneck": {"rate": "100Mbps", "rtt": "20ms"}},
        "flows": [{"cc": "cubic", "gap_histogram": True}, {"cc": "bbr1"}],
    }
    res = bbrlab.run(parse_scenario(raw, default_name="g"))
    assert set(res.gaps["flow"]) == {0}
    sent = int(res.flows.loc[res.flows["flow"] == 0, "data_packets_sent"].iloc[0])
    # Packets still waiting in the NIC at the end (TSQ keeps that to a few) have not departed yet.
    assert sent - 1 - 50 <= int(res.gaps["count"].sum()) <= sent - 1
    # Access link 1 Gbit/s: no two departures closer than one 1538-byte packet (12.3 µs).
    assert res.gaps.loc[res.gaps["hi_ns"] <= 12_000, "count"].sum() == 0
