"""A network graph through the front: a parking lot runs in a second and its flows table carries
each flow's hosts, path and max-min share; every link's queue is a row of the queue table by its
name; the emu backend says in one line what of a graph it cannot host. (The one-line errors of a bad
graph are files in bad_scenarios/, run by test_cli_errors.py.)"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from bbrlab.cli import cli
from bbrlab.engine.runner import run
from bbrlab.scenario import load_scenario
from click.testing import CliRunner

PARKING_LOT = """
name = "pl"
duration = "1s"
[topology]
kind = "parking_lot"
bottlenecks = 2
rate = "50Mbps"
delay = "2ms"
ports = { buffer = "100pkts" }
[[flows]]
cc = "cubic"
src = "long_src"
dst = "long_dst"
[[flows]]
cc = "cubic"
src = "x0_src"
dst = "x0_dst"
count = 2
[[flows]]
cc = "bbr1"
src = "x1_src"
dst = "x1_dst"
"""

#: Payload share of a 1448-byte segment's frame (1448 + 52 TCP/IP + 38 Ethernet).
PAYLOAD = 1448 / 1538


def test_a_parking_lot_reports_paths_and_max_min_shares(tmp_path: Path) -> None:
    f = tmp_path / "pl.toml"
    f.write_text(PARKING_LOT)
    result = run(load_scenario(f))
    flows = result.flows
    assert list(flows["src"]) == ["long_src", "x0_src", "x0_src", "x1_src"]
    assert list(flows["path"]) == [
        "long_src-r0>r0-r1>r1-r2>r2-long_dst",
        "x0_src-r0>r0-r1>r1-x0_dst",
        "x0_src-r0>r0-r1>r1-x0_dst",
        "x1_src-r1>r1-r2>r2-x1_dst",
    ]
    # Hop 0 carries three flows (a third each), hop 1 two: the cross flow there gets 2/3.
    want = np.array([1 / 3, 1 / 3, 1 / 3, 2 / 3]) * 50e6 * PAYLOAD
    np.testing.assert_allclose(flows["maxmin_goodput_bps"], want, rtol=1e-9)
    # Measured: every flow moves data, no link carries more than its payload capacity.
    g = np.asarray(flows["goodput_bps"], dtype=float)
    assert (g > 0).all()
    assert g[0] + g[1] + g[2] <= 50e6 * PAYLOAD * 1.001
    assert g[0] + g[3] <= 50e6 * PAYLOAD * 1.001
    queues = set(result.queue["queue"])
    assert {"r0-r1", "r1-r0", "r1-r2", "long_src-r0", "r2-long_dst"} <= queues
    assert result.summary["scenario"]["bottleneck"] == "r0-r1"


def _emu_error(tmp_path: Path, text: str) -> str:
    """The one line ``bbrlab run --backend emu`` prints for a scenario it refuses (exit 2)."""
    f = tmp_path / "g.toml"
    f.write_text(text)
    out = CliRunner().invoke(cli, ["run", "--backend", "emu", str(f), "--out", str(tmp_path / "r")])
    assert out.exit_code == 2, out.output
    lines = [line for line in out.output.splitlines() if line.strip()]
    assert len(lines) == 1, out.output
    return lines[0]


def test_emu_refuses_what_it_cannot_host_on_a_graph_in_one_line(tmp_path: Path) -> None:
    # RED on a link (the emulator has none), named by its field.
    red = RED_GRAPH.format(red='red = { min_th = "30760B", max_th = "92280B", weight = 1.0 }')
    line = _emu_error(tmp_path, red)
    assert "topology.links.2.red" in line and "no RED" in line, line
    # A graph whose link directions exceed what one emulator process serves (a k = 6 fat-tree).
    big = 'name = "ft"\nduration = "1s"\n[topology]\nkind = "fat_tree"\nk = 6\nrate = "1Gbps"\n'
    big += '[[flows]]\ncc = "cubic"\nsrc = "h0_0_0"\ndst = "h1_0_0"\n'
    line = _emu_error(tmp_path, big)
    assert line.startswith("error: topology:") and "324 link directions" in line, line
    # A graph link's path model and the switches' fabric keys are the simulator's.
    line = _emu_error(tmp_path, RED_GRAPH.format(red='policer = { rate = "500Mbps", burst = "64KB" }'))
    assert "topology.links.2.policer" in line and "path model" in line and "{" not in line, line
    fabric = RED_GRAPH.format(red="") + "[topology.fabric]\nlossless = true\n"
    line = _emu_error(tmp_path, fabric)
    assert "topology.fabric" in line and "PAUSE" in line, line


RED_GRAPH = """
name = "red"
duration = "500ms"
[topology]
kind = "graph"
nodes = [
    {{ name = "s1", kind = "host" }},
    {{ name = "s2", kind = "host" }},
    {{ name = "t1", kind = "switch" }},
    {{ name = "r1", kind = "host" }},
]
[[topology.links]]
from = "s1"
to = "t1"
rate = "1Gbps"
delay = "10us"
[[topology.links]]
from = "s2"
to = "t1"
rate = "1Gbps"
delay = "10us"
[[topology.links]]
from = "t1"
to = "r1"
rate = "1Gbps"
delay = "10us"
{red}
[[flows]]
cc = "dctcp"
ecn = true
src = "s1"
dst = "r1"
[[flows]]
cc = "cubic"
src = "s2"
dst = "r1"
"""


def test_a_red_qdisc_in_packets_runs_as_the_red_table_in_bytes(tmp_path: Path) -> None:
    """The issue's form, ``qdisc = { kind = "red", min_th = "20pkts", … }``, is the ``red`` table
    at 1538 B a packet: the same flows and queue tables (and RED acts: without it they differ)."""

    def tables(red: str) -> tuple[str, str]:
        f = tmp_path / "g.toml"
        f.write_text(RED_GRAPH.format(red=red))
        r = run(load_scenario(f))
        return r.flows.to_string(), r.queue.to_string()

    qdisc = tables('qdisc = { kind = "red", min_th = "20pkts", max_th = "60pkts", weight = 1.0 }')
    assert qdisc == tables('red = { min_th = "30760B", max_th = "92280B", weight = 1.0 }')
    assert qdisc != tables("")
