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
"""

from __future__ import annotations

import contextlib
import os
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ..core.algorithms import lookup
from ..errors import ScenarioError, ScenarioWarning, SimulationError
from ..scenario import Scenario
from ..scenario import core as scenario_core
from ..scenario.fields import kernel_module
from . import bpf
from .assemble import QUEUE_LABELS, _assemble, _read_stats
from .graph import check_graph, open_graph_network
from .launch import ECN_MODES, TUN_TXQUEUELEN, Launch, ecn_mode, emulator_launch, start_emulator  # noqa: F401  # re-exported
from .mib import read_mib
from .netns import Testbed, check_environment
from .sampling import RTT_TICK_NS, _sample_loop
from .sources import SOURCE_START_LEAD_NS, Sources, check_sources, grace_ns, source_launch
from .stalls import late_wake_note, stall_drops_of_run, stalls_from_final
from .support import check_supported
from .traffic import TCPI_OPT_ECN, TCPI_OPT_ECN_SEEN, FlowState, Traffic, linux_cc_name
from .udptraffic import UdpFlows, UdpStatus, udpflow_launch

__all__ = ["run_emu", "emu_settings", "link_plan", "ecn_mode", "MAX_FLOWS", "FRAME_OVERHEAD_BYTES"]

MAX_FLOWS = 64
RECEIVER_IP = "10.77.255.1"
FRAME_OVERHEAD_BYTES = 38  # as the simulator charges per packet (Ethernet framing)
# The emulator runs SCHED_FIFO (it is root anyway): on a loaded 2-core machine a normally
# scheduled emulator woke up to 18 ms late (mean 0.7 ms); see the report in bbrlab.emu.
EMU_RT_PRIORITY = int(os.environ.get("BBRLAB_EMU_RT_PRIORITY", "10"))
EMU_SPIN_NS = int(os.environ.get("BBRLAB_EMU_SPIN_NS", "0"))
# Timed wake-ups are rounded up to this grid (ns; 0 = exact). Exact per-packet wake-ups cost a
# clock-event reprogramming each (a VM exit when virtualized) and kept the emulator at ~95 % CPU
# at 1 Gbit/s, where RT throttling then stalled it for 50 ms every second (goodput -4.5 %).
EMU_TIMER_NS = int(os.environ.get("BBRLAB_EMU_TIMER_NS", "20000"))
_MB = 1 << 20
# With transport = "udp" flows the run starts this long after the set-up (ns): each flow's two
# transport processes (Python interpreter + _core, ~0.1 s each on a loaded machine) start first.
UDP_START_LEAD_NS = 1_500_000_000
# A graph run warns when the emulator delivered packets later than this on average: every hop
# of every packet is its work, and a machine short of CPU falls behind (a k = 4 fat-tree with
# 5 x 200 Mbit/s flows on the 2-core machine: 0.86 ms; a 3-bottleneck 100 Mbit/s parking lot:
# 27 us, docs/emu.md). 100 us is most of a 1500-byte packet's time at 100 Mbit/s.
GRAPH_LATE_WARN_NS = 100_000
# Names tried when registering a BPF congestion control before giving up (see registered_algorithms).
REGISTER_ATTEMPTS = 5


def _sender_ip(i: int) -> str:
    return f"10.77.{i // 250}.{i % 250 + 2}"


def kernel_algorithms() -> list[str]:
    try:
        return Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split()
    except OSError:
        return []


def emu_config(scenario: Scenario) -> dict[str, Any]:
    """The core's resolved config as this backend uses it: flows expanded (``count``) in flow-id
    order, each with its ``spec`` (index of its [[flows]] entry), the bottleneck's limit as
    ``buffer_bytes`` / ``buffer_packets`` (the core's own conversion of a BDP multiple), and, for
    a bottleneck that follows a trace instead of a rate, ``rate_bps`` = the trace's mean rate as
    the core computes it (what the ACK direction runs at without a ``trace_reverse``). On a graph
    (presets expanded) it adds ``routes`` and ``graph_links``, the core's routes and link
    directions, and ``path_buffer``, the limit (bytes, packets) of the link max-min fairness
    fills first."""
    cfg, derived = scenario_core.check(scenario)
    cfg["flows"] = [dict(f, spec=i) for i, f in enumerate(cfg["flows"]) for _ in range(f["count"])]
    if cfg["topology"]["kind"] == "graph":
        # The core's routes (each flow's data and ACK path) and link directions (graph.py).
        cfg["routes"], cfg["graph_links"] = derived.get("routes", []), derived.get("links", [])
        cfg["path_buffer"] = derived["buffer_bytes"], derived["buffer_packets"]
    if cfg["topology"]["kind"] == "dumbbell":
        b = cfg["topology"]["bottleneck"]
        b["buffer_bytes"], b["buffer_packets"] = derived["buffer_bytes"], derived["buffer_packets"]
        if b.get("rate_bps") is None:
            b["rate_bps"] = derived["bottleneck_rate_bps"]
    return cfg


def emu_settings(scenario: Scenario) -> dict[str, Any]:
    """Socket-buffer sysctls and link parameters a run will use (also recorded in the summary)."""
    cfg = emu_config(scenario)
    if cfg["topology"]["kind"] == "graph":
        buf_bytes, buf_packets = cfg["path_buffer"]
    else:
        b = cfg["topology"]["bottleneck"]
        buf_bytes, buf_packets = b["buffer_bytes"], b["buffer_packets"]
    flows = cfg["flows"]
    buf_bytes = buf_bytes if buf_bytes is not None else (buf_packets or 0) * 1538
    path_bytes = scenario.bdp_bytes + buf_bytes
    # Default maxima: 4x (BDP + buffer) so neither socket buffer limits a bulk flow even after
    # the kernel's skb truesize overhead (about 2x payload), with a floor at the stock values.
    def_w = max(4 * _MB, 4 * path_bytes)
    def_r = max(6 * _MB, 4 * path_bytes)
    wmem = []
    for f in flows:
        # The simulator's sndbuf limits unacked+unsent payload; the kernel's tcp_wmem counts skb
        # memory (about twice the payload), hence the factor 2.
        wmax = 2 * f["sndbuf_bytes"] if f["sndbuf_bytes"] else def_w
        wmem.append(f"4096 {min(262144, wmax)} {wmax}")
    rcv = [f["rcvbuf_bytes"] for f in flows if f["rcvbuf_bytes"]]
    rmax = 2 * max(rcv) if rcv else def_r
    rmem = f"4096 {min(131072, rmax)} {rmax}"
    if cfg["topology"]["kind"] == "graph":
        return {"tcp_wmem": wmem, "tcp_rmem": rmem}  # the links: graph.py
    return {"tcp_wmem": wmem, "tcp_rmem": rmem, **link_plan(cfg)}


def link_plan(cfg: dict[str, Any]) -> dict[str, Any]:
    """The emulator's link parameters for resolved config ``cfg`` (dumbbell; flows expanded as
    :func:`emu_config` does): ``forward`` (data direction) and ``reverse`` (ACK direction) as
    ``LinkParams`` JSON, each sender's extra one-way delay, and ``ect1_senders``, the senders
    (flow indices) whose ECT(0) packets the emulator rewrites to ECT(1) (docs/emu.md).

    The bottleneck's ``qdisc`` (a ``QdiscSpec`` dict, e.g. ``{"kind": "codel", ...}``; absent or
    None: drop-tail) is its egress queue on the data direction only: the ACK direction stays a
    drop-tail FIFO with the same buffer and step-ECN threshold, as it always was."""
    b = cfg["topology"]["bottleneck"]
    flows = cfg["flows"]
    link = {
        "rate_bps": b["rate_bps"],
        "delay_ns": b["rtt_ns"] // 2,
        "limit_bytes": b["buffer_bytes"],
        "limit_packets": b["buffer_packets"],
        "ecn_threshold_bytes": b["ecn_threshold_bytes"],
        "ecn_threshold_packets": b["ecn_threshold_packets"],
        "overhead_bytes": FRAME_OVERHEAD_BYTES,
    }
    forward = dict(link, loss=b["loss"])
    if b.get("qdisc") is not None:
        forward["qdisc"] = b["qdisc"]
    fwd_path, rev_path = path_model_plan(b)
    return {
        "forward": forward | fwd_path,
        "reverse": dict(link, loss=b["ack_loss"]) | rev_path,
        "sender_extra_delay_ns": [f["extra_rtt_ns"] // 2 for f in flows],
        "ect1_senders": [i for i, f in enumerate(flows) if ecn_mode(f.get("ecn")) == "ect1"],
    }


def emulator_trace(trace: dict[str, Any]) -> dict[str, Any]:
    """A trace as the emulator takes it (``{"file", "text"}``: the name for messages and the
    format, the contents to parse) from the core config's ``trace``/``trace_reverse``. The one
    place that knows the core's form."""
    return {"file": str(trace["file"]), "text": str(trace["text"])}


def path_model_plan(b: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The bottleneck's path model (issue 30) as the emulator's two directions take it (fields of
    ``LinkParams``, the core config's spec forms): (data direction, ACK direction).

    The data direction gets the ``schedule`` (rate, rtt, loss, buffer), ``trace``, ``policer``,
    ``loss_model``, ``jitter`` and ``reorder``; the ACK direction gets the schedule's ``rtt``
    changes only (each direction's delay becomes rtt / 2, so the RTT changes whole; rate, loss
    and buffer act on the data direction, as in the simulator) and ``trace_reverse``;
    ``aggregation`` goes to the direction it names (``data`` or ``ack``). Absent fields are
    left out (the emulator's defaults: none of them)."""
    fwd: dict[str, Any] = {}
    rev: dict[str, Any] = {}
    schedule = b.get("schedule") or []
    if schedule:
        fwd["schedule"] = [dict(e) for e in schedule]
        rtt_changes = [{"at_ns": e["at_ns"], "rtt_ns": e["rtt_ns"]} for e in schedule if e.get("rtt_ns") is not None]
        if rtt_changes:
            rev["schedule"] = rtt_changes
    for key in ("policer", "loss_model", "jitter", "reorder"):
        if b.get(key) is not None:
            fwd[key] = b[key]
    if b.get("trace") is not None:
        fwd["trace"] = emulator_trace(b["trace"])
        fwd["rate_bps"] = 0  # the trace's rate (the emulator runs at its mean before the run)
    if b.get("trace_reverse") is not None:
        rev["trace"] = emulator_trace(b["trace_reverse"])
        rev["rate_bps"] = 0
    aggregation = b.get("aggregation")
    if aggregation is not None:
        direction = aggregation.get("direction")
        if direction not in ("data", "ack"):
            raise ValueError(f"aggregation direction {direction!r}: expected 'data' or 'ack'")
        (fwd if direction == "data" else rev)["aggregation"] = aggregation
    return fwd, rev


def _without_trace_text(link: dict[str, Any]) -> dict[str, Any]:
    """A direction's parameters for the run's facts: a trace by its name and size, not its text."""
    t = link.get("trace")
    if t is None:
        return link
    return dict(link, trace={"file": t["file"], "bytes": len(t["text"].encode())})


@dataclass
class CcPlan:
    """How the run's algorithms reach the kernel: ``bpf`` are scenario names run as this
    package's BPF ports (registered for the run, :mod:`bbrlab.emu.bpf`), ``stock`` maps the
    others to the kernel's own names (the registry's kernel_name, or NAME of ``kernel:NAME``)."""

    bpf: list[str] = field(default_factory=list)
    stock: dict[str, str] = field(default_factory=dict)
    ecn: set[str] = field(default_factory=set)  # scenario names that need ECN


def plan_algorithms(cfg: dict[str, Any]) -> CcPlan:
    """Which flows run a BPF port and which a stock kernel algorithm; ScenarioError (one line,
    naming the flow's field) for a name this kernel cannot run. Every registry algorithm with a
    BPF port (``bpf.ported()``) runs the port, so results do not depend on the modules a machine
    happens to have; ``kernel:NAME`` asks for the kernel's own module instead."""
    avail = kernel_algorithms()
    ported = bpf.ported()
    plan = CcPlan()
    for f in cfg["flows"]:
        cc, where = f["cc"], f"flows.{f['spec']}.cc"
        if is_udp(f):
            continue  # bbrlab's own transport runs it (udptraffic.py); checked by check_udp_flows
        module = kernel_module(cc)
        alg = lookup(cc) if module is None else None
        if alg is not None and alg.needs_ecn:
            plan.ecn.add(cc)
        if alg is not None and alg.name in ported:
            if cc not in plan.bpf:
                plan.bpf.append(cc)
            continue
        name = module if module is not None else linux_cc_name(cc)
        if avail and name not in avail:
            ports = f"; bbrlab's BPF ports: {', '.join(sorted(ported))}" if ported else ""
            raise ScenarioError(
                where,
                f'"{cc}" is not available in this kernel (tcp_available_congestion_control: {" ".join(avail)}{ports})',
            )
        plan.stock[cc] = name
    return plan


def is_udp(f: dict[str, Any]) -> bool:
    """The flow asks for bbrlab's UDP transport (``transport = "udp"``) rather than kernel TCP."""
    return f.get("transport", "tcp") == "udp"


def _check_scenario(scenario: Scenario, cfg: dict[str, Any]) -> CcPlan:
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


def _port_name(cc: str) -> str:
    """The registry name of a flow's BPF port (plan_algorithms plans only registry algorithms)."""
    alg = lookup(cc)
    assert alg is not None, cc
    return alg.name


@contextlib.contextmanager
def registered_algorithms(plan: CcPlan) -> Any:
    """Build and register the plan's BPF ports for the duration of the ``with`` block; yields
    scenario name -> the kernel name every flow's socket asks for, the registrations' facts, and
    scenario name -> the registration of each port that exports its phases (read per socket).
    Each port is registered under a unique name through a link this process holds (unregistered
    on leaving the block, and by the kernel if the process dies)."""
    from .bpf.build import build
    from .bpf.loader import NameTaken, StructOpsLink, run_ca_name

    objects = {cc: build(_port_name(cc)) for cc in plan.bpf}
    names = dict(plan.stock)
    facts: dict[str, Any] = {}
    phase_ports: dict[str, StructOpsLink] = {}
    with contextlib.ExitStack() as stack:
        for cc, obj in objects.items():
            # A name is unique to this process (pid and a counter); another process whose pid
            # matches in its last 4 digits could hold it: take the next.
            for attempt in range(REGISTER_ATTEMPTS):
                try:
                    link = stack.enter_context(StructOpsLink(obj, run_ca_name(_port_name(cc))))
                    break
                except NameTaken:
                    if attempt == REGISTER_ATTEMPTS - 1:
                        raise
            names[cc] = link.name
            if link.has_phases:
                phase_ports[cc] = link
            facts[cc] = {"registered_as": link.name, "object": obj.name, "source": bpf.source(_port_name(cc)).name}
        yield names, facts, phase_ports


def run_emu(
    scenario: Scenario, progress: Callable[[int, int], None] | None = None
) -> tuple[dict[str, Any], float, dict[str, Any]]:
    """Run ``scenario`` on the kernel; returns (raw results as the core's, wall seconds, emu facts)."""
    ignored = check_supported(scenario)
    cfg = emu_config(scenario)
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
    check_environment()
    plan = _check_scenario(scenario, cfg)
    launch = emulator_launch()
    udp_launch = udpflow_launch() if any(is_udp(f) for f in cfg["flows"]) else launch
    settings = emu_settings(scenario)
    flows_cfg = cfg["flows"]
    duration_ns = cfg["duration_ns"]
    interval_ns = cfg["sample_interval_ns"]
    wall0 = time.perf_counter()

    graph = cfg["topology"]["kind"] == "graph"
    with Testbed() as tb, registered_algorithms(plan) as (kernel_cc, bpf_facts, phase_ports):
        if graph:
            gnet = open_graph_network(
                tb, cfg, settings, tb.scratch_dir(), launch, emu_process(cfg), ecn_algorithms=plan.ecn
            )
            emu, ready, sender_ns, emu_error = gnet.emu, gnet.ready, gnet.sender_ns, gnet.error
            receivers, receiver_ips, stats_path = gnet.receiver_ns, gnet.receiver_ips, gnet.stats_path
            queue_labels = gnet.queue_labels
            source_ns, source_ips, receiver_ns = [], [], ""  # no sources on a graph (check_sources)
        else:
            net = open_network(tb, cfg, settings, tb.scratch_dir(), launch, ecn_algorithms=plan.ecn)
            emu, ready, sender_ns, emu_error = net.emu, net.ready, net.sender_ns, net.error
            receivers, receiver_ips = [net.rns] * len(flows_cfg), [RECEIVER_IP] * len(flows_cfg)
            stats_path, queue_labels = net.stats_path, list(QUEUE_LABELS)
            source_ns, source_ips, receiver_ns = net.source_ns, net.source_ips, net.rns
        udp_flows = [i for i, f in enumerate(flows_cfg) if is_udp(f)]
        traffic_cfg = cfg.get("traffic") or []
        # The run starts this long from now: the UDP transport's and the sources' processes
        # start before it.
        lead_ns = max(UDP_START_LEAD_NS if udp_flows else 300_000_000, SOURCE_START_LEAD_NS if traffic_cfg else 0)
        t0 = time.monotonic_ns() + lead_ns
        states = [
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
        tcp = [i for i in range(len(flows_cfg)) if i not in udp_flows]
        traffic = Traffic(
            [states[i] for i in tcp],
            [sender_ns[i] for i in tcp],
            [receivers[i] for i in tcp],
            [receiver_ips[i] for i in tcp],
            [flows_cfg[i]["mss_bytes"] for i in tcp],
            [flows_cfg[i]["max_pacing_rate_bps"] for i in tcp],
        )
        scratch = tb.scratch_dir() if udp_flows else None  # the transport's config files
        udp = UdpFlows(tb.spawn, udp_launch, scratch, t0, duration_ns, min(RTT_TICK_NS, interval_ns))
        grace = grace_ns(cfg["topology"]["bottleneck"]) if traffic_cfg else 0
        src_scratch = tb.scratch_dir() if traffic_cfg else None  # the sources' config files
        sources = Sources(tb.spawn, source_launch(), src_scratch, t0, duration_ns, grace, cfg["seed"])
        finished = False
        assert emu.stdin is not None
        emu.stdin.write(f"start {t0}\n".encode())
        emu.stdin.flush()
        try:
            if udp_flows:
                udp.start(
                    [states[i] for i in udp_flows],
                    [flows_cfg[i] for i in udp_flows],
                    [sender_ns[i] for i in udp_flows],
                    receivers[0],
                    RECEIVER_IP,
                    [_sender_ip(i) for i in udp_flows],
                    cfg["seed"],
                )
            if traffic_cfg:
                sources.start(traffic_cfg, source_ns, source_ips, receiver_ns, RECEIVER_IP)
            traffic.start()
            ts, rtt_reads = _sample_loop(
                traffic, states, emu, t0, duration_ns, interval_ns, progress, emu_error, phase_ports
            )
            # The namespaces' MIB counters beside the final TCP_INFO, before the sockets close
            # (not for a host that sends several flows: its counters are theirs together; a UDP
            # flow's come from its transport, below).
            for s, ns in zip(states, sender_ns):
                if s.udp is None:
                    s.final_mib = read_mib(ns) if sender_ns.count(ns) == 1 else None
            finished = True
        finally:
            traffic.close()
            udp.close(states)
            # The sources end by themselves after the grace (the emulator still runs), unless
            # the run failed.
            if finished:
                sources.close()
            else:
                sources.stop_now()
        if sources.errors():
            raise SimulationError(sources.errors()[0])
        final_info = []
        # Ask the emulator for its final counters, then let it exit (its TUNs go with it).
        import subprocess

        try:
            emu.stdin.write(b"stop\n")
            emu.stdin.flush()
            emu.stdin.close()
            emu.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            pass
        queue_rows, final = _read_stats(stats_path)
        if final is None:
            raise emu_error("the link emulator exited without its final statistics")
        final_info.append(final)
        wall_s = time.perf_counter() - wall0
        late_ns = float(final.get("late_mean_ns") or 0.0)
        if graph and late_ns > GRAPH_LATE_WARN_NS:
            warnings.warn(
                f"the link emulator delivered packets {late_ns / 1e3:.0f} us late on average (more than "
                f"{GRAPH_LATE_WARN_NS // 1000} us): this machine could not carry the graph's traffic "
                "faithfully; lower the rates or the flows",
                ScenarioWarning,
                stacklevel=2,
            )
        stalls, stall_count = stalls_from_final(final, cfg["duration_ns"])
        if stall_count:
            threshold_ms = float(final.get("stall_threshold_ns") or 0) / 1e6
            _warn_stalls(stalls, stall_count, threshold_ms, queue_rows, cfg["duration_ns"])
        raw = _assemble(
            cfg, states, ts, rtt_reads, queue_rows, final, t0, queue_labels, sources.tables(len(flows_cfg), duration_ns)
        )
    facts = {
        "linkemu": launch.description,
        "linkemu_version": ready.get("version", ""),
        "linkemu_realtime": bool(ready.get("realtime", False)),
        "kernel": os.uname().release,
        "sysctls": {"tcp_wmem": settings["tcp_wmem"], "tcp_rmem": settings["tcp_rmem"]},
        "link": {"graph_links": queue_labels}
        if graph
        else {
            "forward": _without_trace_text(settings["forward"]),
            "reverse": _without_trace_text(settings["reverse"]),
            "ect1_senders": settings["ect1_senders"],
        },
        "emulator": {
            **{
                k: final.get(k)
                for k in (
                    "late_mean_ns",
                    "late_max_ns",
                    # How late its timed sleeps woke against the time asked for (bbrlab.emu.stalls).
                    "timed_wakes",
                    "late_wakes",
                    "wake_late_mean_ns",
                    "wake_late_max_ns",
                    "write_errors",
                    "unroutable",
                    "max_batch",
                    "reads",
                )
            },
            # The statistics intervals in which the emulator stalled (bbrlab.emu.stalls).
            "stall_threshold_ms": (final.get("stall_threshold_ns") or 0) / 1e6,
            "stall_count": stall_count,
            "stalls": stalls,
        },
        "rtt_stats_from": "tcpi_rtt (smoothed RTT) sampled every 10 ms"
        + ("; transport = udp flows: every per-ACK RTT sample of the transport" if udp_flows else ""),
        # transport = "udp" flows: the transport's processes and what they used (udptraffic.py).
        "udp": {"launch": udp_launch.description, "flows": UdpFlows.facts(states)} if udp_flows else None,
        "flow_errors": [s.error for s in states if s.error],
        # [[traffic]] sources: their processes and what they said of themselves (sources.py).
        "traffic": {"launch": source_launch().description, "grace_ms": grace / 1e6, "sources": sources.facts()}
        if traffic_cfg
        else None,
        "ignored_fields": ignored,  # the simulator's model switches the kernel run could not honour
        "bpf": bpf_facts,
        # Per flow, from the last TCP_INFO's tcpi_options (ss's "ecn", "ecnseen"): ECN negotiated
        # (sender), ECT/CE data seen by the receiver.
        "ecn": [
            {
                "negotiated": bool(_options(s, "final_info") & TCPI_OPT_ECN),
                "seen_by_receiver": bool(_options(s, "final_rcv_info") & TCPI_OPT_ECN_SEEN),
            }
            for s in states
        ],
    }
    return raw, wall_s, facts


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


def _options(s: FlowState, which: str) -> int:
    return int((getattr(s, which, None) or {}).get("options", 0))


@dataclass
class Network:
    """A running dumbbell: the emulator process and the namespaces (owned by a Testbed)."""

    emu: Any
    ready: dict[str, Any]
    sender_ns: list[str]
    rns: str
    stats_path: Path
    error: Callable[[str], SimulationError]
    receiver_ip: str = RECEIVER_IP
    # [[traffic]] sources' hosts (sources.py): namespaces and addresses, after the flows'.
    source_ns: list[str] = field(default_factory=list)
    source_ips: list[str] = field(default_factory=list)

    def sender_ip(self, i: int) -> str:
        return _sender_ip(i)


def emu_process(cfg: dict[str, Any]) -> dict[str, Any]:
    """The emulator's settings every run shares (dumbbell or graph): seed, statistics grid, MTU,
    priority and timing."""
    return {
        "seed": cfg["seed"],
        "stats_interval_ns": cfg["sample_interval_ns"],
        "mtu": 1500,
        "realtime_priority": EMU_RT_PRIORITY,
        "spin_ns": EMU_SPIN_NS,
        "timer_quantum_ns": EMU_TIMER_NS,
    }


def open_network(
    tb: Testbed,
    cfg: dict[str, Any],
    settings: dict[str, Any],
    tmp: Path,
    launch: Launch | None = None,
    ecn_algorithms: set[str] | frozenset[str] = frozenset(),
) -> Network:
    """Start the emulator and build the namespaces for resolved config ``cfg`` (see run_emu).
    Hosts whose flow asks for ECN or runs one of ``ecn_algorithms`` (DCTCP) get
    ``net.ipv4.tcp_ecn=1``, and so does the receiver when any flow does (DCTCP's receiver half)."""

    launch = launch or emulator_launch()
    flows_cfg = cfg["flows"]
    n = len(flows_cfg)
    n_src = len(cfg.get("traffic") or [])
    stats_path = tmp / "queue.jsonl"
    sender_tuns = [tb.tun_name(f"s{i}") for i in range(n)]
    # A source's host comes after the flows' (sender index n + i), with no extra delay.
    source_tuns = [tb.tun_name(f"t{i}") for i in range(n_src)]
    source_ips = [_sender_ip(n + i) for i in range(n_src)]
    recv_tun = tb.tun_name("r")
    emu_cfg = {
        "senders": sender_tuns + source_tuns,
        "sender_addrs": [_sender_ip(i) for i in range(n)] + source_ips,
        "receiver": recv_tun,
        "forward": settings["forward"],
        "reverse": settings["reverse"],
        "sender_extra_delay_ns": settings["sender_extra_delay_ns"] + [0] * n_src,
        "ect1_senders": settings.get("ect1_senders", []),
        **emu_process(cfg),
        "stats_path": str(stats_path),
    }
    emu, ready, emu_error = start_emulator(tb, launch, emu_cfg, tmp)

    # Namespaces: move each TUN into its namespace, address it, route through it.
    rns = tb.add_netns("r")
    tb.ip(None, f"link set {recv_tun} netns {rns}")
    recv_cmds = [
        "link set lo up",
        f"link set {recv_tun} mtu 1500 txqueuelen {TUN_TXQUEUELEN} up",
        f"addr add {RECEIVER_IP}/32 dev {recv_tun}",
    ]
    sender_ns = []
    for i, f in enumerate(flows_cfg):
        sns = tb.add_netns(f"s{i}")
        sender_ns.append(sns)
        tb.ip(None, f"link set {sender_tuns[i]} netns {sns}")
        route = f"route add {RECEIVER_IP}/32 dev {sender_tuns[i]} initcwnd {f['initial_cwnd_segs']}"
        if f["min_rto_ns"] != 200_000_000:
            route += f" rto_min {max(1, f['min_rto_ns'] // 1_000_000)}ms"
        tb.ip(
            sns,
            "link set lo up",
            f"link set {sender_tuns[i]} mtu 1500 txqueuelen {TUN_TXQUEUELEN} up",
            f"addr add {_sender_ip(i)}/32 dev {sender_tuns[i]}",
            route,
        )
        rroute = f"route add {_sender_ip(i)}/32 dev {recv_tun}"
        if not f["delayed_ack"]:
            rroute += " quickack 1"
        recv_cmds.append(rroute)
        ecn = ecn_mode(f.get("ecn")) != "off" or f["cc"] in ecn_algorithms
        sysctls = {
            "net.ipv4.tcp_wmem": settings["tcp_wmem"][i],
            "net.ipv4.tcp_rmem": settings["tcp_rmem"],
            "net.ipv4.tcp_no_metrics_save": "1",
            "net.ipv4.tcp_ecn": "1" if ecn else "0",
        }
        tb.sysctl(sns, sysctls)
    source_ns = []
    for i in range(n_src):
        tns = tb.add_netns(f"t{i}")
        source_ns.append(tns)
        tb.ip(None, f"link set {source_tuns[i]} netns {tns}")
        tb.ip(
            tns,
            "link set lo up",
            f"link set {source_tuns[i]} mtu 1500 txqueuelen {TUN_TXQUEUELEN} up",
            f"addr add {source_ips[i]}/32 dev {source_tuns[i]}",
            f"route add {RECEIVER_IP}/32 dev {source_tuns[i]}",
        )
        recv_cmds.append(f"route add {source_ips[i]}/32 dev {recv_tun}")
    tb.ip(rns, *recv_cmds)
    tb.sysctl(
        rns,
        {
            "net.ipv4.tcp_rmem": settings["tcp_rmem"],
            "net.ipv4.tcp_wmem": settings["tcp_wmem"][0],
            "net.ipv4.tcp_no_metrics_save": "1",
            # 2 = accept ECN when asked; 1 also when the receiver runs an ECN algorithm.
            "net.ipv4.tcp_ecn": "1" if any(f["cc"] in ecn_algorithms for f in flows_cfg) else "2",
        },
    )
    return Network(
        emu=emu,
        ready=ready,
        sender_ns=sender_ns,
        rns=rns,
        stats_path=stats_path,
        error=emu_error,
        source_ns=source_ns,
        source_ips=source_ips,
    )
