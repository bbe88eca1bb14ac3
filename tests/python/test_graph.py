"""A network graph through the front: a parking lot runs in a second and its flows table carries
each flow's hosts, path and max-min share; every link's queue is a row of the queue table by its
name; the emu backend says in one line that it cannot run a graph. (The one-line errors of a bad
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


def test_emu_refuses_a_graph_in_one_line(tmp_path: Path) -> None:
    f = tmp_path / "pl.toml"
    f.write_text(PARKING_LOT)
    out = CliRunner().invoke(cli, ["run", "--backend", "emu", str(f), "--out", str(tmp_path / "r")])
    assert out.exit_code == 2, out.output
    lines = [line for line in out.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "graph scenarios cannot run there yet" in lines[0], out.output
