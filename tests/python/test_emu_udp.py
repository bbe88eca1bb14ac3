"""Flows with ``transport = "udp"``: bbrlab's own transport over UDP (crates/udpflow) on the emu
backend, the simulator's acceptance of the same field, the bad inputs, and clean-up after a
SIGKILL of the runner. The transport itself is tested on loopback in crates/udpflow/tests.

Tests that need root and network namespaces skip with the reason when those are missing."""

from __future__ import annotations

import math

import pytest
from bbrlab.core.algorithms import lookup
from test_emu import _assert_clean, _check_sigkill_leaves_no_helper_behind, _cli, _write, needs_emu

LINK = '[topology]\nbottleneck = { rate = "20Mbps", rtt = "20ms", buffer = "1bdp" }\n'


# ------------------------------------------------------------------ no privileges needed


@pytest.mark.parametrize(
    ("flow", "field", "says"),
    [
        ('cc = "kernel:cubic"\ntransport = "udp"', "cc", "kernel module"),
        ('cc = "dctcp"\ntransport = "udp"', "cc", "needs ECN"),
        ('cc = "bql"\ntransport = "udp"\necn = "ect0"', "ecn", "carries no ECN"),
    ],
)
@pytest.mark.parametrize("backend", ["sim", "emu"])
def test_what_the_udp_transport_cannot_run_is_one_line_and_exit_2(tmp_path, flow, field, says, backend):
    path = _write(tmp_path, f'duration = "1s"\n{LINK}[[flows]]\n{flow}\n')
    r = _cli("run", str(path), "--backend", backend, "--out", str(tmp_path / "o"), "-q")
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2, r.stderr
    assert len(lines) == 1 and field in lines[0] and says in lines[0], r.stderr
    assert not (tmp_path / "o").exists()


def test_the_simulator_runs_its_own_transport_for_udp_flows(tmp_path):
    """The simulator's transport is the sans-IO code the UDP transport runs: a udp flow there is
    the same flow as a tcp one, result for result."""
    from bbrlab.engine.runner import run
    from bbrlab.scenario import load_scenario

    base = f'duration = "2s"\n{LINK}[[flows]]\ncc = "bql"\n'
    tcp = run(load_scenario(_write(tmp_path, base, "tcp")), backend="sim")
    udp = run(load_scenario(_write(tmp_path, base + 'transport = "udp"\n', "udp")), backend="sim")
    assert udp.flows["goodput_bps"].iloc[0] > 0
    assert tcp.flows.equals(udp.flows)
    assert tcp.timeseries.equals(udp.timeseries)


# ------------------------------------------------------------------ emu


@needs_emu
def test_bql_over_udp_runs_through_the_emulator(tmp_path):
    from bbrlab.engine.runner import run
    from bbrlab.scenario import load_scenario

    res = run(
        load_scenario(_write(tmp_path, f'duration = "6s"\n{LINK}[[flows]]\ncc = "bql"\ntransport = "udp"\n')),
        backend="emu",
    )
    f = res.flows.iloc[0]
    payload_rate = 20e6 * 1448 / 1538
    print(
        f"goodput {f['goodput_bps'] / 1e6:.2f} Mbit/s, rtt mean {f['rtt_mean_ms']:.2f} ms, retrans {f['retransmits']}"
    )
    assert 0.8 * payload_rate < f["goodput_bps"] <= 1.01 * payload_rate
    # RTT statistics over the transport's per-ACK samples: at least the path's 20 ms.
    assert 19.5 < f["rtt_mean_ms"] < 20 + 2 * 20 * 1.0 + 5
    ts = res.timeseries
    late = ts[ts["t_s"] > 2.0]
    # The transport's own state in the simulator's columns: cwnd, pacing rate, its algorithm's
    # phases by the registry's names.
    assert (late["cwnd_pkts"] > 0).all() and late["pacing_rate_bps"].notna().all()
    alg = lookup("bql")
    assert alg is not None
    assert set(late["phase"]) <= set(alg.phases) and len(set(late["phase"])) >= 1
    assert late["rtt_ms"].notna().mean() > 0.9
    udp = res.summary["run"]["emu"]["udp"]["flows"][0]
    assert udp["sender_cpu_s"] > 0 and udp["receiver_cpu_s"] > 0
    assert not math.isnan(res.queue["mean_occupancy_bytes"].mean())
    _assert_clean()


@needs_emu
def test_sigkill_of_the_runner_leaves_no_udp_transport_behind(tmp_path):
    path = _write(
        tmp_path, f'duration = "30s"\n{LINK}[[flows]]\ncc = "bql"\ntransport = "udp"\n[[flows]]\ncc = "cubic"\n'
    )
    _check_sigkill_leaves_no_helper_behind(path, tmp_path, "bbrlab-udpflow", 2)
