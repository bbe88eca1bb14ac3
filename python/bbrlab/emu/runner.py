"""Run a dumbbell scenario on real Linux TCP: ``run_emu(scenario) -> raw results``.

Topology (one emulator process owns every TUN; the bottleneck queue is shared by all flows)::

    ns bbrlab-<tag>-s0: tun bl<short>s0 10.77.0.2 ─┐
    ns bbrlab-<tag>-s1: tun bl<short>s1 10.77.0.3 ─┼─ bbrlab-linkemu (root ns) ─ tun bl<short>r 10.77.255.1 : ns bbrlab-<tag>-r
    ...                                            ┘   bottleneck / bottleneck_rev

Each flow is one sender host (namespace). The raw results dict has exactly the layout of
``_core.Simulation.results()`` (docs/core-api.md), so results.py and the plots work unchanged.

What the kernel measures differently from the simulator (documented in the run summary too):
RTT statistics are over ``tcpi_rtt`` (the kernel's smoothed RTT) sampled every 10 ms, not over every
ACK; ``lost_packets``/``ce_packets`` come from the emulator's per-sender counters; flows pay a
3-way handshake (one RTT) before data, which the simulator does not model.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import select
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..core import tables
from ..core.algorithms import lookup
from ..errors import ScenarioError, SimulationError
from ..scenario import Scenario
from ..scenario import core as scenario_core
from ..scenario.fields import kernel_module
from . import bpf
from .launch import Launch, emulator_launch
from .netns import Testbed, check_environment
from .phase import kernel_phase
from .support import check_supported
from .traffic import TCPI_OPT_ECN, TCPI_OPT_ECN_SEEN, FlowState, Traffic, bbr_info, linux_cc_name, tcp_info

__all__ = ["run_emu", "emu_settings", "MAX_FLOWS", "FRAME_OVERHEAD_BYTES"]

MAX_FLOWS = 64
RECEIVER_IP = "10.77.255.1"
FRAME_OVERHEAD_BYTES = 38  # as the simulator charges per packet (Ethernet framing)
RTT_TICK_NS = 10_000_000
# The emulator runs SCHED_FIFO (it is root anyway): on a loaded 2-core machine a normally
# scheduled emulator woke up to 18 ms late (mean 0.7 ms); see the report in bbrlab.emu.
EMU_RT_PRIORITY = int(os.environ.get("BBRLAB_EMU_RT_PRIORITY", "10"))
# The TUN's own ring (txqueuelen packets) absorbs bursts the emulator cannot read at once; at the
# default 500 a CPU-starved emulator let the TUN drop packets (seen at 500 Mbit/s under load).
TUN_TXQUEUELEN = 10000
EMU_SPIN_NS = int(os.environ.get("BBRLAB_EMU_SPIN_NS", "0"))
# Timed wake-ups are rounded up to this grid (ns; 0 = exact). Exact per-packet wake-ups cost a
# clock-event reprogramming each (a VM exit when virtualized) and kept the emulator at ~95 % CPU
# at 1 Gbit/s, where RT throttling then stalled it for 50 ms every second (goodput -4.5 %).
EMU_TIMER_NS = int(os.environ.get("BBRLAB_EMU_TIMER_NS", "20000"))
_MB = 1 << 20
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
    order, each with its ``spec`` (index of its [[flows]] entry), and the bottleneck's limit as
    ``buffer_bytes`` / ``buffer_packets`` (the core's own conversion of a BDP multiple)."""
    cfg, derived = scenario_core.check(scenario)
    cfg["flows"] = [dict(f, spec=i) for i, f in enumerate(cfg["flows"]) for _ in range(f["count"])]
    if cfg["topology"]["kind"] == "dumbbell":
        b = cfg["topology"]["bottleneck"]
        b["buffer_bytes"], b["buffer_packets"] = derived["buffer_bytes"], derived["buffer_packets"]
    return cfg


def emu_settings(scenario: Scenario) -> dict[str, Any]:
    """Socket-buffer sysctls and link parameters a run will use (also recorded in the summary)."""
    cfg = emu_config(scenario)
    b = cfg["topology"]["bottleneck"]
    flows = cfg["flows"]
    buf_bytes = b["buffer_bytes"] if b["buffer_bytes"] is not None else (b["buffer_packets"] or 0) * 1538
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
    link = {
        "rate_bps": b["rate_bps"],
        "delay_ns": b["rtt_ns"] // 2,
        "limit_bytes": b["buffer_bytes"],
        "limit_packets": b["buffer_packets"],
        "ecn_threshold_bytes": b["ecn_threshold_bytes"],
        "ecn_threshold_packets": b["ecn_threshold_packets"],
        "overhead_bytes": FRAME_OVERHEAD_BYTES,
    }
    return {
        "tcp_wmem": wmem,
        "tcp_rmem": rmem,
        "forward": dict(link, loss=b["loss"]),
        "reverse": dict(link, loss=b["ack_loss"]),
        "sender_extra_delay_ns": [f["extra_rtt_ns"] // 2 for f in flows],
    }


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


def _check_scenario(scenario: Scenario, cfg: dict[str, Any]) -> CcPlan:
    if cfg["topology"]["kind"] != "dumbbell":
        raise ScenarioError(
            "topology.kind", f'"{cfg["topology"]["kind"]}" is not supported by --backend emu (dumbbell only)'
        )
    if len(cfg["flows"]) > MAX_FLOWS:
        raise ScenarioError(
            "flows", f"{len(cfg['flows'])} flows; --backend emu runs at most {MAX_FLOWS} (one namespace each)"
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


def _wait_ready(proc: Any, timeout: float) -> dict[str, Any]:
    end = time.monotonic() + timeout
    buf = b""
    fd = proc.stdout.fileno()
    while time.monotonic() < end:
        r, _, _ = select.select([fd], [], [], 0.1)
        if r:
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            buf += chunk
            if b"\n" in buf:
                return json.loads(buf.split(b"\n", 1)[0])
        if proc.poll() is not None:
            break
    raise SimulationError("the link emulator did not start")


def run_emu(
    scenario: Scenario, progress: Callable[[int, int], None] | None = None
) -> tuple[dict[str, Any], float, dict[str, Any]]:
    """Run ``scenario`` on the kernel; returns (raw results as the core's, wall seconds, emu facts)."""
    ignored = check_supported(scenario)
    check_environment()
    cfg = emu_config(scenario)
    plan = _check_scenario(scenario, cfg)
    launch = emulator_launch()
    settings = emu_settings(scenario)
    flows_cfg = cfg["flows"]
    duration_ns = cfg["duration_ns"]
    interval_ns = cfg["sample_interval_ns"]
    wall0 = time.perf_counter()

    with Testbed() as tb, registered_algorithms(plan) as (kernel_cc, bpf_facts, phase_ports):
        net = open_network(tb, cfg, settings, tb.scratch_dir(), launch, ecn_algorithms=plan.ecn)
        emu, ready, sender_ns, rns, emu_error = net.emu, net.ready, net.sender_ns, net.rns, net.error
        stats_path = net.stats_path
        t0 = time.monotonic_ns() + 300_000_000
        states = [
            FlowState(
                index=i,
                cc=f["cc"],
                kernel_cc=kernel_cc[f["cc"]],
                port=5201 + i,
                start_ns=t0 + f["start_ns"],
                stop_ns=None if f["stop_ns"] is None else t0 + f["stop_ns"],
                total_bytes=f["bytes"],
            )
            for i, f in enumerate(flows_cfg)
        ]
        traffic = Traffic(
            states,
            sender_ns,
            rns,
            RECEIVER_IP,
            [f["mss_bytes"] for f in flows_cfg],
            [f["max_pacing_rate_bps"] for f in flows_cfg],
        )
        assert emu.stdin is not None
        emu.stdin.write(f"start {t0}\n".encode())
        emu.stdin.flush()
        try:
            traffic.start()
            ts, rtt_samples = _sample_loop(
                traffic, states, emu, t0, duration_ns, interval_ns, progress, emu_error, phase_ports
            )
        finally:
            traffic.close()
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
        raw = _assemble(cfg, states, ts, rtt_samples, queue_rows, final, t0)
    facts = {
        "linkemu": launch.description,
        "linkemu_version": ready.get("version", ""),
        "linkemu_realtime": bool(ready.get("realtime", False)),
        "kernel": os.uname().release,
        "sysctls": {"tcp_wmem": settings["tcp_wmem"], "tcp_rmem": settings["tcp_rmem"]},
        "link": {"forward": settings["forward"], "reverse": settings["reverse"]},
        "emulator": {
            k: final.get(k) for k in ("late_mean_ns", "late_max_ns", "write_errors", "unroutable", "max_batch", "reads")
        },
        "rtt_stats_from": "tcpi_rtt (smoothed RTT) sampled every 10 ms",
        "flow_errors": [s.error for s in states if s.error],
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

    def sender_ip(self, i: int) -> str:
        return _sender_ip(i)


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
    import subprocess

    launch = launch or emulator_launch()
    flows_cfg = cfg["flows"]
    n = len(flows_cfg)
    stats_path = tmp / "queue.jsonl"
    sender_tuns = [tb.tun_name(f"s{i}") for i in range(n)]
    recv_tun = tb.tun_name("r")
    emu_cfg = {
        "senders": sender_tuns,
        "sender_addrs": [_sender_ip(i) for i in range(n)],
        "receiver": recv_tun,
        "forward": settings["forward"],
        "reverse": settings["reverse"],
        "sender_extra_delay_ns": settings["sender_extra_delay_ns"],
        "seed": cfg["seed"],
        "stats_interval_ns": cfg["sample_interval_ns"],
        "stats_path": str(stats_path),
        "mtu": 1500,
        "realtime_priority": EMU_RT_PRIORITY,
        "spin_ns": EMU_SPIN_NS,
        "timer_quantum_ns": EMU_TIMER_NS,
    }
    stderr_f = open(tmp / "emu.stderr", "w+b")  # noqa: SIM115  # outlives this function: emu_error() reads it all run
    emu = tb.spawn(
        [*launch.argv, "--config", json.dumps(emu_cfg)],
        cwd=launch.cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=stderr_f,
    )

    def emu_error(what: str) -> SimulationError:
        stderr_f.flush()
        stderr_f.seek(0)
        tail = " ".join(stderr_f.read().decode(errors="replace").split())[-300:]
        return SimulationError(f"{what}{': ' + tail if tail else ''}")

    try:
        ready = _wait_ready(emu, 10.0)
    except SimulationError:
        raise emu_error("the link emulator did not start") from None

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
        ecn = f["ecn"] or f["cc"] in ecn_algorithms
        sysctls = {
            "net.ipv4.tcp_wmem": settings["tcp_wmem"][i],
            "net.ipv4.tcp_rmem": settings["tcp_rmem"],
            "net.ipv4.tcp_no_metrics_save": "1",
            "net.ipv4.tcp_ecn": "1" if ecn else "0",
        }
        tb.sysctl(sns, sysctls)
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
    return Network(emu=emu, ready=ready, sender_ns=sender_ns, rns=rns, stats_path=stats_path, error=emu_error)


def _sample_loop(
    traffic: Traffic,
    states: list[FlowState],
    emu: Any,
    t0: int,
    duration_ns: int,
    interval_ns: int,
    progress: Callable[[int, int], None] | None,
    emu_error: Callable[[str], SimulationError],
    phase_ports: dict[str, Any],
) -> tuple[dict[str, list[Any]], list[list[float]]]:
    n = len(states)
    # The timeseries columns, with the phase as its name (coded in _assemble).
    cols: dict[str, list[Any]] = {
        ("phase" if c.name == "phase_code" else c.name): [] for c in tables.schema()["timeseries"].columns
    }
    rtt_samples: list[list[float]] = [[] for _ in range(n)]
    interval_rtts: list[list[float]] = [[] for _ in range(n)]
    last_delivered = [0] * n
    last_rwnd = [0] * n
    last_sndbuf = [0] * n
    tick = min(RTT_TICK_NS, interval_ns)
    next_tick = t0
    next_sample = t0 + interval_ns
    end = t0 + duration_ns
    while True:
        now = time.monotonic_ns()
        if now < next_tick:
            time.sleep((next_tick - now) / 1e9)
        now = time.monotonic_ns()
        if emu.poll() is not None:
            raise emu_error(f"the link emulator exited unexpectedly (status {emu.returncode})")
        errs = [s.error for s in states if s.error]
        if errs:
            raise SimulationError(errs[0])
        infos: list[tuple[dict[str, int], dict[str, float] | None, int | None] | None] = []
        for i, s in enumerate(states):
            info = None
            if s.sock is not None and s.connected_ns is not None:
                try:
                    ti = tcp_info(s.sock)
                    bi = bbr_info(s.sock) if s.kernel_cc == "bbr" else None
                    port = phase_ports.get(s.cc)
                    info = (ti, bi, port.phase_code(s.sock.fileno()) if port is not None else None)
                    if ti["rtt"] > 0 and ti["bytes_acked"] > 1:
                        rtt_samples[i].append(ti["rtt"] / 1000.0)
                        interval_rtts[i].append(ti["rtt"] / 1000.0)
                except OSError:
                    info = None
            infos.append(info)
        while now >= next_sample and next_sample <= end:
            t_s = (next_sample - t0) / 1e9
            for i, s in enumerate(states):
                d = s.received
                cols["t_s"].append(t_s)
                cols["flow"].append(i)
                cols["delivered_bytes"].append(d)
                cols["goodput_bps"].append((d - last_delivered[i]) * 8 / (interval_ns / 1e9))
                last_delivered[i] = d
                rt = interval_rtts[i]
                cols["rtt_ms"].append(sum(rt) / len(rt) if rt else math.nan)
                interval_rtts[i] = []
                info = infos[i]
                if info is None:
                    for k in ("cwnd_pkts", "cwnd_bytes", "inflight_bytes", "retransmits", "ssthresh_pkts"):
                        cols[k].append(0 if k != "ssthresh_pkts" else -1)
                    for k in (
                        "pacing_rate_bps",
                        "delivery_rate_bps",
                        "srtt_ms",
                        "min_rtt_ms",
                        "bw_bps",
                        "pacing_gain",
                        "cwnd_gain",
                    ):
                        cols[k].append(math.nan)
                    cols["phase"].append("-")
                    cols["ca_state"].append(0)
                    cols["rwnd_limited"].append(0)
                    cols["sndbuf_limited"].append(0)
                else:
                    ti, bi, port_code = info
                    mss = ti["snd_mss"] or 1448
                    cols["cwnd_pkts"].append(ti["snd_cwnd"])
                    cols["cwnd_bytes"].append(ti["snd_cwnd"] * mss)
                    in_flight = max(0, ti["unacked"] - ti["sacked"] - ti["lost"] + ti["retrans"])
                    cols["inflight_bytes"].append(in_flight * mss)
                    cols["pacing_rate_bps"].append(ti["pacing_rate"] * 8.0 if ti["pacing_rate"] < 2**63 else math.nan)
                    cols["delivery_rate_bps"].append(ti["delivery_rate"] * 8.0)
                    cols["srtt_ms"].append(ti["rtt"] / 1000.0)
                    cols["min_rtt_ms"].append(ti["min_rtt"] / 1000.0 if ti["min_rtt"] != 0xFFFFFFFF else math.nan)
                    cols["retransmits"].append(ti["total_retrans"])
                    cols["ssthresh_pkts"].append(-1 if ti["snd_ssthresh"] >= 0x7FFFFFFF else ti["snd_ssthresh"])
                    cols["phase"].append(kernel_phase(s.cc, ti, bi, port_code))
                    cols["bw_bps"].append(bi["bw_Bps"] * 8.0 if bi else math.nan)
                    cols["pacing_gain"].append(bi["pacing_gain"] if bi else math.nan)
                    cols["cwnd_gain"].append(bi["cwnd_gain"] if bi else math.nan)
                    cols["ca_state"].append(min(ti["ca_state"], 4))
                    cols["rwnd_limited"].append(1 if ti["rwnd_limited"] > last_rwnd[i] else 0)
                    cols["sndbuf_limited"].append(1 if ti["sndbuf_limited"] > last_sndbuf[i] else 0)
                    last_rwnd[i], last_sndbuf[i] = ti["rwnd_limited"], ti["sndbuf_limited"]
                for k in ("w_max_pkts", "inflight_hi_pkts", "inflight_lo_pkts", "ecn_alpha"):
                    cols[k].append(math.nan)
            next_sample += interval_ns
        if progress is not None:
            progress(min(now - t0, duration_ns), duration_ns) if now >= t0 else None
        if next_sample > end:
            break
        next_tick += tick
        if next_tick < time.monotonic_ns() - tick:  # fell behind (CPU contention): do not burst
            next_tick = time.monotonic_ns()
    # Final TCP_INFO per flow for the flows table (and the receiver's, for its ECN flags).
    for s in states:
        s.final_info = None
        s.final_rcv_info = None
        if s.sock is not None and s.connected_ns is not None:
            try:
                s.final_info = tcp_info(s.sock)
            except OSError:
                pass
        if s.rcv_sock is not None:
            try:
                s.final_rcv_info = tcp_info(s.rcv_sock)
            except OSError:
                pass
    return cols, rtt_samples


def _read_stats(path: Path) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    rows: list[dict[str, Any]] = []
    final = None
    if not path.exists():
        return rows, None
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        d = json.loads(line)
        if d.get("final"):
            final = d
        else:
            rows.append(d)
    return rows, final


def _assemble(
    cfg: dict[str, Any],
    states: list[FlowState],
    ts: dict[str, list[Any]],
    rtt_samples: list[list[float]],
    queue_rows: list[dict[str, Any]],
    final: dict[str, Any],
    t0: int,
) -> dict[str, Any]:
    duration_s = cfg["duration_ns"] / 1e9
    cc_labels: list[str] = []
    for s in states:
        if s.cc not in cc_labels:
            cc_labels.append(s.cc)
    fwd = final.get("forward_per_sender", [])
    fl: dict[str, list[Any]] = {
        k: []
        for k in [
            "flow",
            "spec",
            "cc_code",
            "start_s",
            "end_s",
            "fct_s",
            "delivered_bytes",
            "goodput_bps",
            "data_packets_sent",
            "retransmits",
            "retrans_rate",
            "lost_packets",
            "rtt_mean_ms",
            "rtt_p50_ms",
            "rtt_p95_ms",
            "rtt_p99_ms",
            "rto_count",
            "ce_packets",
        ]
    }
    for i, s in enumerate(states):
        f = cfg["flows"][i]
        start_s = f["start_ns"] / 1e9
        if s.total_bytes is not None and s.complete_ns is not None:
            end_s = (s.complete_ns - t0) / 1e9
            fct = end_s - start_s
        else:
            end_s = min(duration_s, f["stop_ns"] / 1e9) if f["stop_ns"] is not None else duration_s
            fct = math.nan
        info = getattr(s, "final_info", None) or {}
        sent = int(info.get("data_segs_out", 0))
        retr = int(info.get("total_retrans", 0))
        r = np.asarray(rtt_samples[i], dtype=float)
        pc = fwd[i] if i < len(fwd) else {}
        fl["flow"].append(i)
        fl["spec"].append(f["spec"])
        fl["cc_code"].append(cc_labels.index(s.cc))
        fl["start_s"].append(start_s)
        fl["end_s"].append(end_s)
        fl["fct_s"].append(fct)
        fl["delivered_bytes"].append(s.received)
        active = end_s - start_s
        fl["goodput_bps"].append(s.received * 8 / active if active > 0 else math.nan)
        fl["data_packets_sent"].append(sent)
        fl["retransmits"].append(retr)
        fl["retrans_rate"].append(retr / sent if sent else 0.0)
        fl["lost_packets"].append(int(pc.get("drops", 0)) + int(pc.get("random_losses", 0)))
        fl["rtt_mean_ms"].append(float(r.mean()) if r.size else math.nan)
        for q, k in ((50, "rtt_p50_ms"), (95, "rtt_p95_ms"), (99, "rtt_p99_ms")):
            fl[k].append(float(np.percentile(r, q)) if r.size else math.nan)
        fl["rto_count"].append(int(info.get("total_rto", 0)) if info.get("_len", 0) >= 242 else 0)
        fl["ce_packets"].append(int(pc.get("ce_marks", 0)))
    # What the kernel does not report (offload chunks, RPCs, applications) is NaN / 0 / −1.
    # ACK and fast-path counts are the simulator's; the kernel's sockets do not report them (−1).
    flows = tables.encode("flows", fl, len(states), fill={"app": -1, "query": -1, "acks_sent": -1, "cc_fast_acks": -1})
    phases: list[str] = []
    codes = []
    for p in ts["phase"]:
        if p not in phases:
            phases.append(p)
        codes.append(phases.index(p))
    ts_cols = {("phase_code" if k == "phase" else k): (codes if k == "phase" else v) for k, v in ts.items()}
    timeseries = tables.encode("timeseries", ts_cols, len(codes))
    qlabels = ["bottleneck", "bottleneck_rev"]
    qrows = [r for r in queue_rows if r["t_ns"] <= cfg["duration_ns"]]
    qcols: dict[str, list[Any]] = {
        "t_s": [r["t_ns"] / 1e9 for r in qrows],
        "queue_code": [qlabels.index(r["queue"]) for r in qrows],
        "utilization": [math.nan if r["utilization"] is None else r["utilization"] for r in qrows],
    }
    for k in (
        "occupancy_bytes",
        "occupancy_pkts",
        "mean_occupancy_bytes",
        "max_occupancy_bytes",
        "drops",
        "random_losses",
        "ce_marks",
        "tx_bytes",
    ):
        qcols[k] = [r[k] for r in qrows]
    queue = tables.encode("queue", qcols, len(qrows))
    delivered_pkts = int(final.get("forward_tx_pkts", 0))
    return {
        "flows": flows,
        "timeseries": timeseries,
        "queue": queue,
        "gaps": tables.encode("gaps", {}, 0),
        "events": tables.encode("events", {}, 0),
        "hosts": tables.encode("hosts", {}, 0),
        "labels": {"phase": phases, "cc": cc_labels, "queue": qlabels, "host": []},
        "run": {
            "events": int(final.get("reads", 0)),
            "data_packets_delivered": delivered_pkts,
            "data_packets_sent": int(
                sum(int((getattr(s, "final_info", None) or {}).get("data_segs_out", 0)) for s in states)
            ),
            "sim_end_ns": cfg["duration_ns"],
            "complete": True,
        },
    }
