"""Traffic beside TCP (UDP, ping), flow applications and flow-size workloads, end to end through
the front: the scenario forms, the result tables, summary.json and the errors (one line, exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import bbrlab
import numpy as np
import pytest
from bbrlab.cli import cli
from click.testing import CliRunner

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "udp-cbr-ping.toml"


def test_the_example_reports_udp_ping_and_app_limited_flows() -> None:
    r = bbrlab.run(bbrlab.load_scenario(EXAMPLE, ["duration=5s"]))
    t = r.traffic
    assert list(t["kind"]) == ["udp_cbr", "ping", "udp_onoff"]
    cbr = t.iloc[0]
    # 30 Mbit/s on the wire of 1538 B frames: 1472 B of payload each.
    assert cbr.send_rate_bps == pytest.approx(30e6 * 1472 / 1538, rel=0.001)
    assert cbr.received_packets + cbr.lost_packets <= cbr.sent_packets
    pings = r.pings
    assert len(pings) > 450 and (pings["rtt_ms"] >= 20.0).all()  # 20 ms base RTT at least
    assert r.summary["traffic"][1]["kind"] == "ping"
    ts = r.timeseries
    assert np.nanmean(ts[ts.flow == 1]["app_limited"]) > 0.5  # the 5 Mbit/s writer
    assert np.nanmean(ts[ts.flow == 0]["app_limited"]) < 0.1


def test_a_workload_reports_slowdown_by_size_bucket(tmp_path: Path) -> None:
    (tmp_path / "s.toml").write_text(
        'duration = "2s"\n[topology.bottleneck]\nrate = "1Gbps"\nrtt = "100us"\n'
        '[[apps]]\nkind = "workload"\ncdf = "websearch"\nload = 0.3\ncc = "dctcp"\n'
    )
    r = bbrlab.run(bbrlab.load_scenario(tmp_path / "s.toml"))
    assert len(r.fct) > 20 and (r.fct["slowdown"] > 0.999).all()
    buckets = r.summary["fct"]
    assert sum(b["flows"] for b in buckets) == len(r.fct)
    assert all(b["slowdown_p99"] >= b["slowdown_p50"] >= 0.999 for b in buckets)


@pytest.mark.parametrize(
    ("cdf", "load", "expect"),
    [
        ("100 0\n50 0.5\n300 1\n", 0.3, "line 2"),
        ("100 0\n300 0.9\n", 0.3, "must reach 1"),
        ("100 0\n300 1\n", 1.0, "apps.0.load"),
    ],
)
def test_bad_workloads_are_one_line_naming_the_field(tmp_path: Path, cdf: str, load: float, expect: str) -> None:
    (tmp_path / "sizes.txt").write_text(cdf)
    (tmp_path / "s.toml").write_text(
        'duration = "1s"\n[topology.bottleneck]\nrate = "1Gbps"\nrtt = "100us"\n'
        f'[[apps]]\nkind = "workload"\ncdf = "sizes.txt"\nload = {load}\ncc = "cubic"\n'
    )
    res = CliRunner().invoke(cli, ["run", str(tmp_path / "s.toml"), "--out", str(tmp_path / "out")])
    assert res.exit_code == 2, res.output
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and expect in lines[0] and "apps.0" in lines[0], lines


def test_a_cdf_file_enters_the_core_config(tmp_path: Path) -> None:
    (tmp_path / "sizes.txt").write_text("100 0\n300 1\n")
    (tmp_path / "s.toml").write_text(
        'duration = "1s"\n[topology.bottleneck]\nrate = "1Gbps"\nrtt = "100us"\n'
        '[[apps]]\nkind = "workload"\ncdf = "sizes.txt"\nload = 0.3\ncc = "cubic"\n'
    )
    a = json.dumps(bbrlab.load_scenario(tmp_path / "s.toml").resolve(), sort_keys=True)
    (tmp_path / "sizes.txt").write_text("100 0\n400 1\n")
    b = json.dumps(bbrlab.load_scenario(tmp_path / "s.toml").resolve(), sort_keys=True)
    assert a != b and "400 1" in b


GRAPH = (
    'duration = "20ms"\nsample_interval = "10ms"\n[topology]\nkind = "leaf_spine"\nspines = 2\nleaves = 2\nhosts_per_leaf = 2\n'
    'host_rate = "1Gbps"\n'
)


@pytest.mark.parametrize(
    ("extra", "expect"),
    [
        ('[[traffic]]\nkind = "ping"\nsrc = "h0_0"\ndst = "h7_7"\n', 'traffic.0.dst: unknown host "h7_7"'),
        ('[[traffic]]\nkind = "udp_cbr"\nrate = "1Mbps"\ndst = "h1_0"\n', "traffic.0.src"),
        (
            '[[apps]]\nkind = "workload"\ncdf = "websearch"\nload = 0.3\ncc = "cubic"\nsrc = ["h0_0", "nope"]\n',
            'apps.0.src.1: unknown host "nope"',
        ),
    ],
)
def test_graph_sources_to_unknown_hosts_are_one_line_naming_the_field(tmp_path: Path, extra: str, expect: str) -> None:
    (tmp_path / "s.toml").write_text(GRAPH + extra)
    res = CliRunner().invoke(cli, ["run", str(tmp_path / "s.toml"), "--out", str(tmp_path / "out")])
    assert res.exit_code == 2, res.output
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and expect in lines[0], lines


def test_a_workload_and_a_ping_run_on_a_graph(tmp_path: Path) -> None:
    (tmp_path / "s.toml").write_text(
        GRAPH.replace("20ms", "200ms")
        + '[[apps]]\nkind = "workload"\ncdf = "websearch"\nload = 0.3\ncc = "cubic"\n'
        + '[[traffic]]\nkind = "ping"\nsrc = "h0_0"\ndst = "h1_1"\ninterval = "1ms"\n'
    )
    r = bbrlab.run(bbrlab.load_scenario(tmp_path / "s.toml"))
    # 4 hosts x 1 Gbit/s x 0.3 of ~1.6 MB flows: ~ 19 arrivals in 200 ms.
    assert len(r.fct) > 8 and (r.fct["slowdown"] > 0.999).all()
    assert len(r.pings) > 150
    from bbrlab.plots.fct import plot_fct_slowdown

    plot_fct_slowdown({"cubic": r.summary["fct"]}, tmp_path / "f.png")
    assert (tmp_path / "f.png").stat().st_size > 1000
