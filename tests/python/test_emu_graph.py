"""A graph on the emu backend: the plan the emulator gets (no root needed); a 2-bottleneck
parking lot with CUBIC on real Linux TCP, each link carried by the emulator, checked against the
links' capacities and the simulator's split; a fat-tree whose flows take the simulator's ECMP
paths on the kernel too; and clean-up of every namespace, TUN and process a graph run creates,
after an exception, the emulator's death, Ctrl-C and a SIGKILL of the runner. (The one-line
refusals of what emu cannot host on a graph are in test_graph.py.)

The kernel tests need root and network namespaces; they skip with the reason where those are
missing, as test_emu.py's do.
"""

from __future__ import annotations

import signal
import time

import numpy as np
import pytest
from bbrlab.emu import netns
from test_emu import (
    _assert_clean,
    _check_cleanup_after_exception_and_emulator_death,
    _linkemu_pids,
    _scenario,
    _start_cli_run,
    needs_emu,
)

#: Payload share of a 1448-byte segment's frame (1448 + 52 TCP/IP + 38 Ethernet).
PAYLOAD = 1448 / 1538
RATE_BPS = 50e6

#: Two 50 Mbit/s bottlenecks (r0-r1, r1-r2; 5 ms each way), a long flow across both, one cross
#: flow each: max-min gives every flow half of a bottleneck.
PARKING_LOT = """
duration = "{duration}"
[topology]
kind = "parking_lot"
bottlenecks = 2
rate = "50Mbps"
delay = "5ms"
ports = {{ buffer = "62500B" }}
[[flows]]
cc = "cubic"
src = "long_src"
dst = "long_dst"
[[flows]]
cc = "cubic"
src = "x0_src"
dst = "x0_dst"
[[flows]]
cc = "cubic"
src = "x1_src"
dst = "x1_dst"
"""


def _long_share(flows) -> float:
    """The long flow's goodput over the sum at its first bottleneck (long + cross flow 0)."""
    g = np.asarray(flows["goodput_bps"], dtype=float)
    return float(g[0] / (g[0] + g[1]))


#: How far the kernel's long-flow share may sit from the simulator's. One kernel run of 15 s
#: spread 0.235-0.336 over six runs on the idle machine (2026-11-29) against the simulator's
#: 0.236 (nothing random in this scenario): CUBIC's few loss epochs in 15 s decide the split,
#: and a fresh-clone CI run (a loaded machine) failed at 0.367. Over 30 s four runs gave 0.190-0.293 against
#: 0.228, at most 0.065 apart, so the test runs 30 s. 0.1 keeps the test's point: a long flow
#: routed over its first bottleneck only would split it evenly (near 0.5), and the two flows
#: swapped would read 0.76.
SHARE_TOLERANCE = 0.1


def test_the_emulator_plan_is_the_simulators_graph_and_routes(tmp_path):
    """No root needed: the plan the emulator gets. Every link direction by the simulator's name
    and in its order; per flow a data route and an ACK route by link index, keyed by the flow's
    port; switch ports keep their buffer, a host's own link out has none (docs/emu.md)."""
    from bbrlab.emu.graph import FIRST_PORT, graph_plan
    from bbrlab.emu.plan import emu_config

    scn, _ = _scenario(tmp_path, PARKING_LOT.format(duration="1s"), "pl")
    cfg = emu_config(scn)
    plan = graph_plan(cfg, ["off"] * 3)
    names = [link["name"] for link in plan["links"]]
    assert names[:4] == ["r0-r1", "r1-r0", "r1-r2", "r2-r1"]
    assert set(names) == {f"{a}-{b}" for a, b in _link_pairs()}
    by_name = {link["name"]: link["params"] for link in plan["links"]}
    assert by_name["r0-r1"]["limit_bytes"] == 62500 and by_name["r0-r1"]["rate_bps"] == 50_000_000
    assert by_name["r0-long_src"]["limit_bytes"] == 62500, "a switch's port to a host keeps it"
    assert by_name["long_src-r0"].get("limit_bytes") is None, "a host's NIC has no limit"
    assert by_name["long_src-r0"]["rate_bps"] == 500_000_000  # access: 10 x the bottleneck
    hosts = [h["addr"] for h in plan["hosts"]]
    assert len(hosts) == 6 == len(set(hosts))
    data, ack = plan["routes"][0], plan["routes"][1]
    assert [names[i] for i in data["links"]] == ["long_src-r0", "r0-r1", "r1-r2", "r2-long_dst"]
    assert [names[i] for i in ack["links"]] == ["long_dst-r2", "r2-r1", "r1-r0", "r0-long_src"]
    assert (data["src"], data["dst"]) == (ack["dst"], ack["src"])
    assert data["port"] == ack["port"] == FIRST_PORT and (data["origin"], ack["origin"]) == (0, 3)


def _link_pairs() -> list[tuple[str, str]]:
    """Both directions of every link of the 2-bottleneck parking lot."""
    one_way = [("r0", "r1"), ("r1", "r2"), ("long_src", "r0"), ("long_dst", "r2"), ("x0_src", "r0")]
    one_way += [("x0_dst", "r1"), ("x1_src", "r1"), ("x1_dst", "r2")]
    return one_way + [(b, a) for a, b in one_way]


def test_flows_between_one_pair_of_hosts_must_agree_on_per_route_settings(tmp_path):
    """Linux keeps the initial window per route: two flows between one pair that ask for
    different ones are refused in one line naming the second flow's field."""
    from bbrlab.emu.graph import check_graph
    from bbrlab.emu.plan import emu_config
    from bbrlab.errors import ScenarioError

    text = PARKING_LOT.format(duration="1s") + '[[flows]]\ncc = "cubic"\nsrc = "x0_src"\n'
    text += 'dst = "x0_dst"\ninitial_cwnd = 4\n'
    scn, _ = _scenario(tmp_path, text, "pl")
    with pytest.raises(ScenarioError, match="initial_cwnd") as e:
        check_graph(emu_config(scn))
    assert "flows.3.initial_cwnd" in str(e.value) and "per route" in str(e.value)


@needs_emu
def test_parking_lot_on_the_kernel_respects_the_links_and_splits_as_the_simulator(tmp_path):
    from bbrlab.engine.runner import run

    duration_s = 30.0
    scn, _ = _scenario(tmp_path, PARKING_LOT.format(duration=f"{duration_s:g}s"), "pl")
    emu = run(scn, backend="emu")
    _assert_clean()
    sim = run(scn, backend="sim")
    for r in (emu, sim):
        assert list(r.flows["path"]) == [
            "long_src-r0>r0-r1>r1-r2>r2-long_dst",
            "x0_src-r0>r0-r1>r1-x0_dst",
            "x1_src-r1>r1-r2>r2-x1_dst",
        ]
    # Goodput from the bytes received by the run's end (the timeseries' last sample; the flows
    # table also counts what arrives while the traffic is being stopped).
    ts = emu.timeseries
    got = ts[ts["t_s"] == ts["t_s"].max()].sort_values("flow")["delivered_bytes"]
    g = np.asarray(got, dtype=float) * 8 / float(ts["t_s"].max())
    assert len(g) == 3 and (g > 1e6).all(), g
    # Each bottleneck's flows together within its payload capacity (each flow pays its
    # handshake before data, so no slack is needed).
    assert g[0] + g[1] <= RATE_BPS * PAYLOAD, g
    assert g[0] + g[2] <= RATE_BPS * PAYLOAD, g
    # And used: CUBIC fills both.
    assert g[0] + g[1] >= 0.85 * RATE_BPS * PAYLOAD and g[0] + g[2] >= 0.85 * RATE_BPS * PAYLOAD, g
    # Every link direction is a row of the queue table, by the simulator's name; none carried
    # more than its rate (wire bytes, cumulative at the last sample).
    q = emu.queue
    assert set(q["queue"]) == set(sim.queue["queue"])
    for name in ("r0-r1", "r1-r2"):
        rows = q[q["queue"] == name]
        tx_bps = float(rows["tx_bytes"].iloc[-1]) * 8 / float(rows["t_s"].iloc[-1])
        assert 0.85 * RATE_BPS <= tx_bps <= RATE_BPS * 1.001, (name, tx_bps)
    assert float(q[q["queue"] == "r0-r1"]["t_s"].iloc[-1]) == pytest.approx(duration_s, abs=0.2)
    # The long flow's share of a bottleneck: twice the cross flows' RTT and two bottlenecks to
    # lose packets at put CUBIC's long flow well under the max-min half, on both backends alike.
    s_emu, s_sim = _long_share(emu.flows), _long_share(sim.flows)
    assert s_emu < 0.4 and s_sim < 0.4, (s_emu, s_sim)
    assert abs(s_emu - s_sim) <= SHARE_TOLERANCE, (s_emu, s_sim)


@needs_emu
def test_graph_run_cleans_up_after_exception_and_emulator_death(tmp_path):
    scn, _ = _scenario(tmp_path, PARKING_LOT.format(duration="5s"), "pl")
    _check_cleanup_after_exception_and_emulator_death(scn)


@needs_emu
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL])
def test_graph_run_cleans_up_after_ctrl_c_and_sigkill(tmp_path, sig):
    _, path = _scenario(tmp_path, PARKING_LOT.format(duration="30s"), "pl")
    p = _start_cli_run(path, tmp_path)
    # Six hosts with flows: six namespaces, then traffic.
    deadline = time.time() + 30
    while time.time() < deadline and len(netns.leftovers(p.pid)["netns"]) < 6:
        time.sleep(0.1)
    assert len(netns.leftovers(p.pid)["netns"]) == 6, netns.leftovers(p.pid)
    time.sleep(1.5)
    p.send_signal(sig)
    _, err = p.communicate(timeout=30)
    if sig == signal.SIGINT:
        assert p.returncode == 130, err
    deadline = time.time() + 15  # after SIGKILL the guardian cleans up
    while time.time() < deadline and (any(netns.leftovers(p.pid).values()) or _linkemu_pids(p.pid)):
        time.sleep(0.1)
    assert not (tmp_path / "o").exists()
    _assert_clean(p.pid)


#: A k = 4 fat-tree (four equal paths between pods, ECMP per flow) with four flows between pods.
FAT_TREE = """
duration = "3s"
[topology]
kind = "fat_tree"
k = 4
rate = "50Mbps"
[[flows]]
cc = "cubic"
src = "h0_0_0"
dst = "h2_0_0"
[[flows]]
cc = "cubic"
src = "h0_0_1"
dst = "h3_1_0"
[[flows]]
cc = "cubic"
src = "h1_0_0"
dst = "h2_1_1"
[[flows]]
cc = "cubic"
src = "h1_1_1"
dst = "h3_0_1"
"""


@needs_emu
def test_ecmp_on_the_kernel_carries_traffic_on_exactly_the_simulators_links(tmp_path):
    """The emulator forwards each flow along the simulator's route (ECMP's per-flow choice
    included): the link directions that carried anything are the same on both backends."""
    from bbrlab.engine.runner import run

    scn, _ = _scenario(tmp_path, FAT_TREE, "ft")
    used = {}
    for backend in ("sim", "emu"):
        q = run(scn, backend=backend).queue
        last = q.groupby("queue", observed=True)["tx_bytes"].last()
        used[backend] = set(last[last > 0].index)
    _assert_clean()
    # 6 links each way per flow, no direction shared: 48 of the fabric's 96 (another ECMP
    # choice for any flow would change the set).
    assert len(used["sim"]) == 4 * 6 * 2
    assert used["emu"] == used["sim"]
