"""The dumbbell's network: the link emulator process and one namespace per host.

:func:`open_network` starts the emulator (one process owns every TUN, so the bottleneck queue
is shared by all flows) and moves each TUN into its host's namespace, addressed and routed, with
the host's TCP sysctls. A graph's network is built by graph.py; the emulator's process settings
(:func:`emu_process`) are shared by both.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import SimulationError
from .launch import TUN_TXQUEUELEN, Launch, ecn_mode, emulator_launch, start_emulator
from .netns import Testbed

__all__ = ["EMU_RT_PRIORITY", "RECEIVER_IP", "Network", "emu_process", "open_network", "sender_address"]

RECEIVER_IP = "10.77.255.1"
# The emulator runs SCHED_FIFO (it is root anyway): on a loaded 2-core machine a normally
# scheduled emulator woke up to 18 ms late (mean 0.7 ms); see the report in bbrlab.emu.
EMU_RT_PRIORITY = int(os.environ.get("BBRLAB_EMU_RT_PRIORITY", "10"))
EMU_SPIN_NS = int(os.environ.get("BBRLAB_EMU_SPIN_NS", "0"))
# Timed wake-ups are rounded up to this grid (ns; 0 = exact). Exact per-packet wake-ups cost a
# clock-event reprogramming each (a VM exit when virtualized) and kept the emulator at ~95 % CPU
# at 1 Gbit/s, where RT throttling then stalled it for 50 ms every second (goodput -4.5 %).
EMU_TIMER_NS = int(os.environ.get("BBRLAB_EMU_TIMER_NS", "20000"))


def sender_address(i: int) -> str:
    """The IPv4 address of sender host ``i`` (flows first, then the [[traffic]] sources)."""
    return f"10.77.{i // 250}.{i % 250 + 2}"


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
        return sender_address(i)


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
    source_ips = [sender_address(n + i) for i in range(n_src)]
    recv_tun = tb.tun_name("r")
    emu_cfg = {
        "senders": sender_tuns + source_tuns,
        "sender_addrs": [sender_address(i) for i in range(n)] + source_ips,
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
            f"addr add {sender_address(i)}/32 dev {sender_tuns[i]}",
            route,
        )
        rroute = f"route add {sender_address(i)}/32 dev {recv_tun}"
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
