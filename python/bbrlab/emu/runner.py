"""Run a dumbbell scenario on real Linux TCP: ``run_emu(scenario) -> raw results``.

Topology (one emulator process owns every TUN; the bottleneck queue is shared by all flows)::

    ns bbrlab-<tag>-s0: tun bl<short>s0 10.77.0.2 ─┐
    ns bbrlab-<tag>-s1: tun bl<short>s1 10.77.0.3 ─┼─ bbrlab-linkemu (root ns) ─ tun bl<short>r 10.77.255.1 : ns bbrlab-<tag>-r
    ...                                            ┘   bottleneck / bottleneck_rev

Each flow is one sender host (namespace). A flow with ``transport = "udp"`` runs on bbrlab's own
transport over UDP instead of the kernel's TCP (udptraffic.py). The raw results dict has exactly the layout of
``_core.Simulation.results()`` (docs/core-api.md), so results.py and the plots work unchanged.

What the kernel measures differently from the simulator (documented in the run summary too):
RTT statistics are over ``tcpi_rtt`` (the kernel's smoothed RTT) sampled every 10 ms, not over every
ACK; ``lost_packets``/``ce_packets`` come from the emulator's per-sender counters; flows pay a
3-way handshake (one RTT) before data, which the simulator does not model.

This module is the run's sequence, each step a function below ``run_emu``; the parts it calls each
have their own module: ``plan`` (the resolved config, sysctls and link parameters), ``ccplan`` (the
flows' algorithms and their BPF registrations), ``network`` / ``graph`` (the emulator and the
namespaces), ``sampling`` and ``assemble`` (the measurements and the raw results), ``facts``
(summary.json's ``run.emu``).
"""

from __future__ import annotations

import subprocess
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import ScenarioError, ScenarioWarning, SimulationError
from ..scenario import Scenario
from .assemble import QUEUE_LABELS, _assemble, _read_stats
from .ccplan import CcPlan, plan_algorithms, registered_algorithms
from .facts import run_facts
from .graph import check_graph, open_graph_network
from .launch import Launch, emulator_launch
from .mib import read_mib
from .netns import Testbed, check_environment
from .network import RECEIVER_IP, emu_process, open_network, sender_address
from .plan import emu_config, emu_settings, is_udp
from .rtt import RttReads
from .sampling import RTT_TICK_NS, _sample_loop
from .sources import SOURCE_START_LEAD_NS, Sources, check_sources, grace_ns, source_launch
from .stalls import late_wake_note, stall_drops_of_run, stalls_from_final
from .support import check_supported
from .traffic import FlowState, Traffic
from .udptraffic import UdpFlows, UdpStatus, udpflow_launch

__all__ = ["run_emu", "MAX_FLOWS"]

MAX_FLOWS = 64
# With transport = "udp" flows the run starts this long after the set-up (ns): each flow's two
# transport processes (Python interpreter + _core, ~0.1 s each on a loaded machine) start first.
UDP_START_LEAD_NS = 1_500_000_000
# A graph run warns when the emulator delivered packets later than this on average: every hop
# of every packet is its work, and a machine short of CPU falls behind (a k = 4 fat-tree with
# 5 x 200 Mbit/s flows on the 2-core machine: 0.86 ms; a 3-bottleneck 100 Mbit/s parking lot:
# 27 us, docs/emu.md). 100 us is most of a 1500-byte packet's time at 100 Mbit/s.
GRAPH_LATE_WARN_NS = 100_000


def run_emu(
    scenario: Scenario, progress: Callable[[int, int], None] | None = None
) -> tuple[dict[str, Any], float, dict[str, Any]]:
    """Run ``scenario`` on the kernel; returns (raw results as the core's, wall seconds, emu facts)."""
    ignored = check_supported(scenario)
    cfg = emu_config(scenario)
    _check_flows(cfg)
    check_environment()
    plan = _check_scenario(scenario, cfg)
    launch = emulator_launch()
    udp_launch = udpflow_launch() if any(is_udp(f) for f in cfg["flows"]) else launch
    settings = emu_settings(scenario)
    duration_ns = cfg["duration_ns"]
    wall0 = time.perf_counter()

    graph = cfg["topology"]["kind"] == "graph"
    with Testbed() as tb, registered_algorithms(plan) as (kernel_cc, bpf_facts, phase_ports):
        hosts = _open_hosts(tb, cfg, settings, launch, plan.ecn)
        t0 = time.monotonic_ns() + _start_lead_ns(cfg)
        states = _flow_states(cfg["flows"], kernel_cc, t0)
        workers = _workers(tb, cfg, hosts, states, t0, udp_launch)
        ts, rtt_reads = _drive(workers, cfg, hosts, states, t0, progress, phase_ports)
        queue_rows, final = _stop_emulator(hosts)
        wall_s = time.perf_counter() - wall0
        if graph:
            _warn_if_late(final)
        stalls, stall_count = stalls_from_final(final, duration_ns)
        if stall_count:
            threshold_ms = float(final.get("stall_threshold_ns") or 0) / 1e6
            _warn_stalls(stalls, stall_count, threshold_ms, queue_rows, duration_ns)
        source_tables = workers.sources.tables(len(cfg["flows"]), duration_ns)
        raw = _assemble(cfg, states, ts, rtt_reads, queue_rows, final, t0, hosts.queue_labels, source_tables)
    facts = run_facts(
        launch=launch,
        ready=hosts.ready,
        settings=settings,
        queue_labels=hosts.queue_labels if graph else None,
        final=final,
        stalls=stalls,
        stall_count=stall_count,
        states=states,
        udp_launch=udp_launch if workers.udp_flows else None,
        sources=workers.sources if cfg.get("traffic") else None,
        grace_ns=workers.grace_ns,
        ignored=ignored,
        bpf_facts=bpf_facts,
    )
    return raw, wall_s, facts


def _check_flows(cfg: dict[str, Any]) -> None:
    """ScenarioError (one line, naming the field) for flows and sources this backend cannot run
    on the scenario's topology; said before the machine is checked or touched."""
    udp_on_graph = [i for i, f in enumerate(cfg["flows"]) if is_udp(f)] if cfg["topology"]["kind"] == "graph" else []
    if udp_on_graph:
        raise ScenarioError(
            f"flows.{udp_on_graph[0]}.transport",
            '"udp" runs on a dumbbell only on --backend emu (a graph\'s hosts carry kernel TCP); use --backend sim',
        )
    check_sources(cfg)
    udp_app = [f for f in cfg["flows"] if is_udp(f) and f.get("app") is not None]
    if udp_app:
        raise ScenarioError(
            f"flows.{udp_app[0]['spec']}.app",
            'a transport = "udp" flow is a bulk writer on --backend emu (bbrlab\'s UDP transport has no '
            'application model); use the kernel\'s TCP (transport = "tcp") or --backend sim',
        )
    if cfg["topology"]["kind"] == "graph":
        check_graph(cfg)  # a graph too large for this backend is said before the machine is


def _check_scenario(scenario: Scenario, cfg: dict[str, Any]) -> CcPlan:
    """ScenarioError for a topology or a host count this backend cannot run; the plan of the
    flows' algorithms, its BPF tools checked when it has ports to build."""
    if cfg["topology"]["kind"] not in ("dumbbell", "graph"):
        raise ScenarioError(
            "topology.kind", f'"{cfg["topology"]["kind"]}" is not supported by --backend emu (dumbbell only)'
        )
    hosts = len(cfg["flows"]) + len(cfg.get("traffic") or [])
    if hosts > MAX_FLOWS:
        raise ScenarioError(
            "flows",
            f"{hosts} flows and sources; --backend emu runs at most {MAX_FLOWS} (one namespace each)",
        )
    plan = plan_algorithms(cfg)
    if plan.bpf:
        from .bpf.build import check_tools

        check_tools(plan.bpf[0])
    return plan


@dataclass
class _Hosts:
    """The run's network, dumbbell or graph, as the flows see it: the emulator and, per flow,
    the namespaces it runs between and the receiver's address."""

    emu: Any  # the emulator process (its stdin takes "start T0" and "stop")
    ready: dict[str, Any]  # what the emulator said when it was ready (version, realtime)
    error: Callable[[str], SimulationError]
    stats_path: Path
    queue_labels: list[str]
    sender_ns: list[str]
    receiver_ns: list[str]
    receiver_ips: list[str]
    # [[traffic]] sources (dumbbell only): their hosts and the receiver's namespace they send to.
    source_ns: list[str]
    source_ips: list[str]
    source_receiver_ns: str


def _open_hosts(
    tb: Testbed, cfg: dict[str, Any], settings: dict[str, Any], launch: Launch, ecn_algorithms: set[str]
) -> _Hosts:
    """Start the emulator and build the hosts' namespaces: a graph's (graph.py) or the dumbbell's
    (network.py)."""
    if cfg["topology"]["kind"] == "graph":
        gnet = open_graph_network(
            tb, cfg, settings, tb.scratch_dir(), launch, emu_process(cfg), ecn_algorithms=ecn_algorithms
        )
        return _Hosts(
            emu=gnet.emu,
            ready=gnet.ready,
            error=gnet.error,
            stats_path=gnet.stats_path,
            queue_labels=gnet.queue_labels,
            sender_ns=gnet.sender_ns,
            receiver_ns=gnet.receiver_ns,
            receiver_ips=gnet.receiver_ips,
            # No sources on a graph (check_sources).
            source_ns=[],
            source_ips=[],
            source_receiver_ns="",
        )
    net = open_network(tb, cfg, settings, tb.scratch_dir(), launch, ecn_algorithms=ecn_algorithms)
    n = len(cfg["flows"])
    return _Hosts(
        emu=net.emu,
        ready=net.ready,
        error=net.error,
        stats_path=net.stats_path,
        queue_labels=list(QUEUE_LABELS),
        sender_ns=net.sender_ns,
        receiver_ns=[net.rns] * n,
        receiver_ips=[RECEIVER_IP] * n,
        source_ns=net.source_ns,
        source_ips=net.source_ips,
        source_receiver_ns=net.rns,
    )


def _start_lead_ns(cfg: dict[str, Any]) -> int:
    """How long after the set-up the run starts (ns): the UDP transport's and the sources'
    processes start before it."""
    udp = any(is_udp(f) for f in cfg["flows"])
    return max(UDP_START_LEAD_NS if udp else 300_000_000, SOURCE_START_LEAD_NS if cfg.get("traffic") else 0)


def _flow_states(flows_cfg: list[dict[str, Any]], kernel_cc: dict[str, str], t0: int) -> list[FlowState]:
    """Each flow's shared state for a run that starts at ``t0`` (CLOCK_MONOTONIC ns): the kernel
    name its socket asks for (none for a UDP flow), its port and its absolute start and stop."""
    return [
        FlowState(
            index=i,
            cc=f["cc"],
            kernel_cc=kernel_cc.get(f["cc"], "") if not is_udp(f) else "",
            port=5201 + i,
            start_ns=t0 + f["start_ns"],
            stop_ns=None if f["stop_ns"] is None else t0 + f["stop_ns"],
            total_bytes=f["bytes"],
            udp=UdpStatus() if is_udp(f) else None,
            app=f.get("app"),
        )
        for i, f in enumerate(flows_cfg)
    ]


@dataclass
class _Workers:
    """What moves the run's data: the kernel TCP flows (threads of this process), the
    ``transport = "udp"`` flows' processes and the [[traffic]] sources' processes."""

    traffic: Traffic
    udp: UdpFlows
    udp_flows: list[int]  # the flow indices that run on the UDP transport
    sources: Sources
    grace_ns: int  # how long the sources may still send after the end (0 without sources)


def _workers(
    tb: Testbed, cfg: dict[str, Any], hosts: _Hosts, states: list[FlowState], t0: int, udp_launch: Launch
) -> _Workers:
    """The run's workers, built but not started (their scratch directories made)."""
    flows_cfg = cfg["flows"]
    duration_ns = cfg["duration_ns"]
    udp_flows = [i for i, f in enumerate(flows_cfg) if is_udp(f)]
    traffic_cfg = cfg.get("traffic") or []
    tcp = [i for i in range(len(flows_cfg)) if i not in udp_flows]
    traffic = Traffic(
        [states[i] for i in tcp],
        [hosts.sender_ns[i] for i in tcp],
        [hosts.receiver_ns[i] for i in tcp],
        [hosts.receiver_ips[i] for i in tcp],
        [flows_cfg[i]["mss_bytes"] for i in tcp],
        [flows_cfg[i]["max_pacing_rate_bps"] for i in tcp],
    )
    scratch = tb.scratch_dir() if udp_flows else None  # the transport's config files
    rtt_tick_ns = min(RTT_TICK_NS, cfg["sample_interval_ns"])
    udp = UdpFlows(tb.spawn, udp_launch, scratch, t0, duration_ns, rtt_tick_ns)
    grace = grace_ns(cfg["topology"]["bottleneck"]) if traffic_cfg else 0
    src_scratch = tb.scratch_dir() if traffic_cfg else None  # the sources' config files
    sources = Sources(tb.spawn, source_launch(), src_scratch, t0, duration_ns, grace, cfg["seed"])
    return _Workers(traffic=traffic, udp=udp, udp_flows=udp_flows, sources=sources, grace_ns=grace)


def _drive(
    w: _Workers,
    cfg: dict[str, Any],
    hosts: _Hosts,
    states: list[FlowState],
    t0: int,
    progress: Callable[[int, int], None] | None,
    phase_ports: dict[str, Any],
) -> tuple[dict[str, list[Any]], list[RttReads]]:
    """Start the emulator's run at ``t0`` and the workers, sample the flows to the end and close
    the workers; returns the sampled columns and the RTT reads."""
    flows_cfg = cfg["flows"]
    traffic_cfg = cfg.get("traffic") or []
    sender_ns = hosts.sender_ns
    finished = False
    assert hosts.emu.stdin is not None
    hosts.emu.stdin.write(f"start {t0}\n".encode())
    hosts.emu.stdin.flush()
    try:
        if w.udp_flows:
            w.udp.start(
                [states[i] for i in w.udp_flows],
                [flows_cfg[i] for i in w.udp_flows],
                [sender_ns[i] for i in w.udp_flows],
                hosts.receiver_ns[0],
                RECEIVER_IP,
                [sender_address(i) for i in w.udp_flows],
                cfg["seed"],
            )
        if traffic_cfg:
            w.sources.start(traffic_cfg, hosts.source_ns, hosts.source_ips, hosts.source_receiver_ns, RECEIVER_IP)
        w.traffic.start()
        ts, rtt_reads = _sample_loop(
            w.traffic,
            states,
            hosts.emu,
            t0,
            cfg["duration_ns"],
            cfg["sample_interval_ns"],
            progress,
            hosts.error,
            phase_ports,
        )
        # The namespaces' MIB counters beside the final TCP_INFO, before the sockets close
        # (not for a host that sends several flows: its counters are theirs together; a UDP
        # flow's come from its transport, below).
        for s, ns in zip(states, sender_ns):
            if s.udp is None:
                s.final_mib = read_mib(ns) if sender_ns.count(ns) == 1 else None
        finished = True
    finally:
        w.traffic.close()
        w.udp.close(states)
        # The sources end by themselves after the grace (the emulator still runs), unless
        # the run failed.
        if finished:
            w.sources.close()
        else:
            w.sources.stop_now()
    if w.sources.errors():
        raise SimulationError(w.sources.errors()[0])
    return ts, rtt_reads


def _stop_emulator(hosts: _Hosts) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Ask the emulator for its final counters, then let it exit (its TUNs go with it); returns
    its statistics rows and its final counters."""
    emu = hosts.emu
    try:
        emu.stdin.write(b"stop\n")
        emu.stdin.flush()
        emu.stdin.close()
        emu.wait(timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        pass
    queue_rows, final = _read_stats(hosts.stats_path)
    if final is None:
        raise hosts.error("the link emulator exited without its final statistics")
    return queue_rows, final


def _warn_if_late(final: dict[str, Any]) -> None:
    """Warn when the emulator delivered a graph's packets late on average (GRAPH_LATE_WARN_NS);
    the warning points at run_emu's caller."""
    late_ns = float(final.get("late_mean_ns") or 0.0)
    if late_ns > GRAPH_LATE_WARN_NS:
        warnings.warn(
            f"the link emulator delivered packets {late_ns / 1e3:.0f} us late on average (more than "
            f"{GRAPH_LATE_WARN_NS // 1000} us): this machine could not carry the graph's traffic "
            "faithfully; lower the rates or the flows",
            ScenarioWarning,
            stacklevel=3,
        )


def _warn_stalls(
    stalls: list[list[float]], count: int, threshold_ms: float, queue_rows: list[dict[str, Any]], duration_ns: int
) -> None:
    """Say that the emulator stalled, and how many of the bottleneck's overflow drops fell in
    those intervals: drops the testbed's bursts made (bbrlab.emu.stalls)."""
    rows = [r for r in queue_rows if r["t_ns"] <= duration_ns]
    queue = pd.DataFrame(
        {
            "t_s": [r["t_ns"] / 1e9 for r in rows],
            "queue": [r["queue"] for r in rows],
            "drops_overflow": [r.get("drops_overflow") or 0 for r in rows],
        }
    )
    f = stall_drops_of_run(queue, stalls, count, threshold_ms)
    warnings.warn(
        f"the link emulator stalled (a packet {threshold_ms:g} ms or more late) in {count} statistics "
        f"interval{'s' * (count != 1)}{late_wake_note(f)}, the longest {f['stall_max_ms']:.1f} ms; {f['stall_drops']:.0f} of the "
        f"{f['overflow_drops']:.0f} overflow drops fell in them or right after (drops there may be the "
        "testbed's rather than the algorithm's; summary.json run.emu.emulator.stalls)",
        ScenarioWarning,
        stacklevel=3,
    )
