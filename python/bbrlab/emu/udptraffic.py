"""Flows with ``transport = "udp"`` on the emu backend: bbrlab's own transport over UDP.

Each such flow runs as two processes of ``python -m bbrlab.emu.udpflow`` (``crates/udpflow``: the
simulator's sans-IO sender and receiver driving a UDP socket, with the flow's algorithm), the
receiver in the receiver namespace and the sender in the flow's sender namespace, started with
``ip netns exec`` so the runner is their parent (they die with it: PR_SET_PDEATHSIG; the
guardian kills whatever is left in the namespaces after a SIGKILL). Their packets cross the link
emulator as the kernel TCP flows' do.

Both halves write JSON lines on stdout (crates/udpflow/src/lib.rs): the sender every sampling tick
its own state — the simulator's timeseries quantities (cwnd, pacing rate, srtt/min_rtt, the
algorithm's phase, bandwidth estimate and gains) and the per-ACK RTT samples since its last line
as a sum and count — and the receiver its delivered bytes; each ends with ``{"final": {...}}``
(counters, CPU time). A reader thread per process keeps the latest of them for the sampler
(:mod:`bbrlab.emu.sampling`), which builds the flow's rows from them instead of TCP_INFO.

``BBRLAB_UDPFLOW=/path/to/bbrlab-udpflow`` runs that binary instead of the built-in one
(``cargo build --release -p bbrlab-udpflow``), as ``BBRLAB_LINKEMU`` does for the emulator.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from ..errors import SimulationError
from .helperprocs import HelperProcs
from .launch import PACKAGE_PARENT, Launch
from .traffic import TCP_INFO_LEN, FlowState

__all__ = ["UdpFlows", "UdpStatus", "udpflow_launch", "UDP_PORT_BASE"]

#: The receiver's port of UDP flow i is UDP_PORT_BASE + i.
UDP_PORT_BASE = 6201
#: How long the receivers may take to bind before the run gives up (s).
READY_TIMEOUT_S = 10.0
#: The receivers outlive the run's end by this much (ns): the runner stops them itself.
RECEIVER_GRACE_NS = 5_000_000_000
#: SIGTERM -> exit: the halves write their final line and exit at once.
STOP_TIMEOUT_S = 5.0
#: SCHED_FIFO priority of both halves, below the emulator's (network.EMU_RT_PRIORITY, 10): a
#: normally scheduled half on a loaded 2-core machine answered 1-2 ms late, an RTT excess BQL
#: reads as queue (docs/emu.md). ``BBRLAB_UDP_RT_PRIORITY=0`` turns it off.
UDP_RT_PRIORITY = int(os.environ.get("BBRLAB_UDP_RT_PRIORITY", "5"))


def udpflow_launch() -> Launch:
    """How to start the UDP transport here; one-line SimulationError if it cannot be."""
    env = os.environ.get("BBRLAB_UDPFLOW")
    if env:
        if not (os.path.isfile(env) and os.access(env, os.X_OK)):
            raise SimulationError(f"BBRLAB_UDPFLOW={env}: not an executable file (unset it to use the built-in one)")
        return Launch(argv=[env], cwd=None, description=env)
    try:
        from .. import _core
    except ImportError as e:
        raise SimulationError(f"bbrlab's compiled core is missing ({e}); reinstall bbrlab: pip install .") from None
    if not hasattr(_core, "udpflow_main"):
        raise SimulationError("this build of bbrlab._core predates the UDP transport; rebuild it: pip install .")
    return Launch(
        argv=[sys.executable, "-m", "bbrlab.emu.udpflow"],
        cwd=str(PACKAGE_PARENT),
        description=f"{sys.executable} -m bbrlab.emu.udpflow (built into bbrlab._core)",
    )


@dataclass
class UdpStatus:
    """What a UDP flow's reader threads share with the sampler (under ``lock``)."""

    latest: dict[str, Any] | None = None  # the sender's last status line
    rtt_sum_ns: int = 0  # per-ACK RTT samples not yet taken by the sampler
    rtt_count: int = 0
    sender_final: dict[str, Any] | None = None
    receiver_final: dict[str, Any] | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    def take(self) -> tuple[dict[str, Any] | None, int, int]:
        """The latest status and the RTT samples since the last call (then cleared)."""
        with self.lock:
            out = (self.latest, self.rtt_sum_ns, self.rtt_count)
            self.rtt_sum_ns = self.rtt_count = 0
            return out


#: The sender's final counters (crates/udpflow) under the TCP_INFO names the flows table reads.
TCP_INFO_OF_FINAL = {
    "data_segs_out": "data_packets_sent",
    "total_retrans": "retransmits",
    "total_rto": "rto_count",
    "dsack_dups": "dsack_recv_segs",
}
#: The sender's final counters under the TCP MIB names the flows table reads (mib.py).
MIB_OF_FINAL = {
    "TcpExt.TCPFastRetrans": "retrans_fast",
    "TcpExt.TCPSlowStartRetrans": "retrans_rto",
    "TcpExt.TCPLossProbes": "tlp_probes",
    "TcpExt.TCPLostRetransmit": "lost_retrans",
    "TcpExt.TCPSackRecovery": "recoveries",
    "TcpExt.TCPFullUndo": "spurious_undos",
    "TcpExt.TCPSpuriousRTOs": "spurious_rtos",
}


def renamed_counters(final: dict[str, Any], names: dict[str, str]) -> dict[str, int]:
    """The sender's final counters under other names (``names``: new name -> final's key; an
    absent counter is 0)."""
    return {name: int(final.get(key, 0)) for name, key in names.items()}


class UdpFlows(HelperProcs):
    """The UDP flows of a run: their processes, reader threads and shared status."""

    def __init__(
        self,
        spawn: Any,
        launch: Launch,
        scratch: Any,
        t0: int,
        duration_ns: int,
        status_interval_ns: int,
    ) -> None:
        super().__init__(spawn, launch, scratch, t0, duration_ns)
        self.status_interval_ns = status_interval_ns

    def _start(self, ns: str, role: str, index: int, cfg: dict[str, Any], on_line: Any, state: FlowState) -> Any:
        what = f"flow {state.index}: the UDP transport's {role}"
        return self.start_reading(ns, f"udp{index}-{role}", cfg, on_line, state, what)

    def start(
        self,
        states: list[FlowState],
        flows_cfg: list[dict[str, Any]],
        sender_ns: list[str],
        receiver_ns: str,
        receiver_ip: str,
        sender_ips: list[str],
        seed: int,
    ) -> None:
        """Start every receiver, wait until each has bound its port, then every sender."""
        ready: list[threading.Event] = []
        for s, f in zip(states, flows_cfg):
            st = s.udp
            assert st is not None
            ev = threading.Event()
            ready.append(ev)
            cfg = {
                "role": "recv",
                "realtime_priority": UDP_RT_PRIORITY,
                "local": f"{receiver_ip}:{UDP_PORT_BASE + s.index}",
                "t0_ns": self.t0,
                "end_ns": self.duration_ns + RECEIVER_GRACE_NS,
                "status_interval_ns": self.status_interval_ns,
                "mss_bytes": f["mss_bytes"],
                "delayed_ack": f["delayed_ack"],
                "rcvbuf_bytes": f["rcvbuf_bytes"],
            }
            self._start(receiver_ns, "recv", s.index, cfg, self._receiver_line(s, st, ev), s)
        end = time.monotonic() + READY_TIMEOUT_S
        for s, ev in zip(states, ready):
            if not ev.wait(max(0.0, end - time.monotonic())):
                raise SimulationError(s.error or f"flow {s.index}: the UDP transport's receiver did not start")
        for s, f, ns, ip in zip(states, flows_cfg, sender_ns, sender_ips):
            st = s.udp
            assert st is not None
            cfg = {
                "role": "send",
                "realtime_priority": UDP_RT_PRIORITY,
                "local": f"{ip}:0",
                "peer": f"{receiver_ip}:{UDP_PORT_BASE + s.index}",
                "cc": f["cc"],
                "seed": (seed ^ (0x5EED_0000 + s.index)) & (2**64 - 1),
                "mss_bytes": f["mss_bytes"],
                "initial_cwnd_segs": f["initial_cwnd_segs"],
                "bytes": f["bytes"],
                "t0_ns": self.t0,
                "start_ns": f["start_ns"],
                "stop_ns": f["stop_ns"],
                "end_ns": self.duration_ns,
                "status_interval_ns": self.status_interval_ns,
                "max_pacing_rate_bps": f["max_pacing_rate_bps"],
                "min_rto_ns": f["min_rto_ns"],
                "sndbuf_bytes": f["sndbuf_bytes"],
            }
            self._start(ns, "send", s.index, cfg, self._sender_line(s, st), s)

    def _receiver_line(self, s: FlowState, st: UdpStatus, ready: threading.Event) -> Any:
        def on_line(d: dict[str, Any]) -> None:
            if "ready" in d:
                ready.set()
                return
            if "final" in d:
                st.receiver_final = d["final"]
                delivered = int(d["final"]["delivered_bytes"])
                at = time.monotonic_ns()
            else:
                delivered = int(d["delivered_bytes"])
                at = self.t0 + int(d["t_ns"])
            if delivered > 0 and s.first_byte_ns is None:
                s.first_byte_ns = at
            s.received = max(s.received, delivered)
            if s.total_bytes is not None and s.received >= s.total_bytes and s.complete_ns is None:
                s.complete_ns = at

        return on_line

    @staticmethod
    def _sender_line(s: FlowState, st: UdpStatus) -> Any:
        def on_line(d: dict[str, Any]) -> None:
            with st.lock:
                if "final" in d:
                    st.sender_final = d["final"]
                    return
                st.latest = d
                st.rtt_sum_ns += int(d.get("rtt_sum_ns", 0))
                st.rtt_count += int(d.get("rtt_count", 0))
            if s.connected_ns is None:
                s.connected_ns = time.monotonic_ns()

        return on_line

    def close(self, states: list[FlowState]) -> None:
        """Stop every half (SIGTERM: each writes its final line), wait for them and their
        readers, and give each flow its final counters in the TCP_INFO/MIB names the flows table
        reads."""
        self.terminate_all()
        end = time.monotonic() + STOP_TIMEOUT_S
        for p in self.procs:
            try:
                p.wait(timeout=max(0.1, end - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
        self.join_readers()
        for s in states:
            final = s.udp.sender_final if s.udp is not None else None
            if final is not None:
                # `_len` as a full TCP_INFO read: every field present.
                s.final_info = renamed_counters(final, TCP_INFO_OF_FINAL) | {"_len": TCP_INFO_LEN}
                s.final_mib = renamed_counters(final, MIB_OF_FINAL)

    @staticmethod
    def facts(states: list[FlowState]) -> list[dict[str, Any]]:
        """Per UDP flow: the CPU time each half used, whether the sender sent with GSO, its
        sendmmsg calls and handshake RTT (recorded in the run's summary)."""
        out = []
        for s in states:
            st = s.udp
            if st is None:
                continue
            sf, rf = st.sender_final or {}, st.receiver_final or {}
            out.append(
                {
                    "flow": s.index,
                    "sender_cpu_s": (sf.get("cpu_user_ns", 0) + sf.get("cpu_sys_ns", 0)) / 1e9 if sf else None,
                    "receiver_cpu_s": (rf.get("cpu_user_ns", 0) + rf.get("cpu_sys_ns", 0)) / 1e9 if rf else None,
                    "gso": sf.get("gso"),
                    "send_calls": sf.get("send_calls"),
                    "data_packets_sent": sf.get("data_packets_sent"),
                    "acks_sent": rf.get("acks_sent"),
                    "handshake_rtt_ms": (sf["handshake_rtt_ns"] / 1e6) if sf.get("handshake_rtt_ns") else None,
                }
            )
        return out
