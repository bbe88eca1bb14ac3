"""Non-TCP sources (``[[traffic]]``: ``udp_cbr``, ``udp_onoff``, ``ping``) on the emu backend.

Each source gets a sender-side host of its own (a namespace and TUN after the flows', with no
extra delay: its packets cross the bottleneck as a flow's do, both ways), as the simulator gives
it a flow entry with a host of its own. Its processes (``python -m bbrlab.emu.sourceproc``, see
there for what each does and how it keeps the simulator's schedule) are started with
``ip netns exec`` from the runner's main thread, so they die with it (PR_SET_PDEATHSIG) and the
guardian kills whatever is left in the namespaces after a SIGKILL, as for the UDP transport:

- ``udp_cbr`` / ``udp_onoff``: a sink on the receiving host (the receiver; the source's host
  with ``reverse``), then the sender on the sending host;
- ``ping``: one process on the sending host; the far host's kernel answers.

They run from the run's t0 to its end and then a grace (the time the network can still hold a
packet: both directions' full queues and the RTT), so the packets still inside at the end are
counted as the simulator counts them (neither received nor lost). The ``traffic`` and ``pings``
tables are then built in the simulator's columns (``crates/sim/src/metrics/tables``).

What a real host measures differently: a UDP source's packets leave on the schedule as far as
the process wakes on time (a late wake-up sends what is due at once: the rate holds, the
spacing does not; the largest lateness is in the run's facts); a ping's RTT includes the far
kernel's answer (microseconds) and the TUN hops of both hosts.
"""

from __future__ import annotations

import contextlib
import math
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ScenarioError, SimulationError
from .helperprocs import HelperProcs
from .launch import PACKAGE_PARENT, Launch

__all__ = ["KIND_LABELS", "SOURCE_START_LEAD_NS", "Sources", "check_sources", "grace_ns", "source_launch"]

#: The ``traffic`` table's ``kind_code`` labels, in code order (``traffic.rs``'s KIND_LABELS).
KIND_LABELS = ["udp_cbr", "udp_onoff", "ping"]
#: UDP sink of source i listens on SINK_PORT_BASE + i (clear of the TCP flows' 5201 + i and the
#: UDP transport's 6201 + i).
SINK_PORT_BASE = 7201
#: ICMP echo identifier of ping source i: PING_ID_BASE + i (raw sockets see every echo reply of
#: their namespace; reverse pings share the receiver's).
PING_ID_BASE = 0x4200
#: Real-time priority of the sources' processes: the UDP transport's (below the emulator's).
SOURCE_RT_PRIORITY = 5
#: How long the sources may take to open their sockets (s): a Python start on the loaded 2-core
#: machine (load 15) once took more than 10 s.
READY_TIMEOUT_S = 30.0
#: With sources the run starts this long after the set-up (ns), so that their processes are
#: up before it (a late one sends what fell due at once; ``max_late_ms`` in the run's facts).
SOURCE_START_LEAD_NS = 3_000_000_000
#: Margin on top of the network's holding time before the sources end (ns).
GRACE_MARGIN_NS = 100_000_000
#: Longest grace (ns): a huge buffer at a slow rate must not hold the run for minutes.
MAX_GRACE_NS = 3_000_000_000
#: After their own end, how long the runner waits for the processes before SIGTERM (s).
STOP_TIMEOUT_S = 5.0


def source_launch() -> Launch:
    """How a source's process starts: this interpreter, this very package."""
    return Launch(
        argv=[sys.executable, "-m", "bbrlab.emu.sourceproc"],
        cwd=str(PACKAGE_PARENT),
        description=f"{sys.executable} -m bbrlab.emu.sourceproc",
    )


def check_sources(cfg: dict[str, Any]) -> None:
    """One line (naming the field) for a source this backend cannot run: sources on a graph."""
    if cfg.get("traffic") and cfg["topology"]["kind"] != "dumbbell":
        raise ScenarioError(
            "traffic.0",
            f"--backend emu runs UDP and ping sources on a dumbbell only (this is a {cfg['topology']['kind']}); "
            "use --backend sim",
        )


def grace_ns(bottleneck: dict[str, Any]) -> int:
    """How long the network can still hold a packet after the end: a full queue each way at the
    link's rate plus the RTT, and a margin (at most MAX_GRACE_NS)."""
    rate = max(1, int(bottleneck["rate_bps"]))
    buf = bottleneck.get("buffer_bytes")
    if buf is None:
        buf = (bottleneck.get("buffer_packets") or 0) * 1538
    drain = 2 * int(buf) * 8 * 1_000_000_000 // rate
    return min(MAX_GRACE_NS, drain + int(bottleneck["rtt_ns"]) + GRACE_MARGIN_NS)


@dataclass
class _Source:
    """One source's processes and what they reported."""

    index: int
    cfg: dict[str, Any]
    finals: dict[str, dict[str, Any]] = field(default_factory=dict)  # role -> its final line
    ready: dict[str, threading.Event] = field(default_factory=dict)
    error: str | None = None

    @property
    def kind(self) -> str:
        return str(self.cfg["kind"])


class Sources(HelperProcs):
    """A run's sources: start them, wait for them, and build their tables."""

    def __init__(
        self, spawn: Any, launch: Launch, scratch: Path | None, t0: int, duration_ns: int, grace: int, seed: int
    ) -> None:
        super().__init__(spawn, launch, scratch, t0, duration_ns)
        self.grace = grace
        self.seed = seed
        self.sources: list[_Source] = []

    def _spawn(self, src: _Source, role: str, ns: str, cfg: dict[str, Any]) -> None:
        src.ready[role] = threading.Event()

        def on_line(d: Any) -> None:
            if "ready" in d:
                src.ready[role].set()
            elif "final" in d:
                src.finals[role] = d["final"]

        what = f"traffic.{src.index}: its {role} process"
        self.start_reading(ns, f"src{src.index}-{role}", cfg, on_line, src, what)

    def start(
        self,
        traffic: list[dict[str, Any]],
        source_ns: list[str],
        source_ips: list[str],
        receiver_ns: str,
        receiver_ip: str,
    ) -> None:
        """Start every source's processes (sinks first) and wait until each has its socket."""
        for i, (t, ns, ip) in enumerate(zip(traffic, source_ns, source_ips)):
            src = _Source(i, t)
            self.sources.append(src)
            # The sending and receiving hosts: the source's own to the receiver, or back.
            (snd_ns, snd_ip), (rcv_ns, rcv_ip) = (ns, ip), (receiver_ns, receiver_ip)
            if t.get("reverse"):
                (snd_ns, snd_ip), (rcv_ns, rcv_ip) = (rcv_ns, rcv_ip), (snd_ns, snd_ip)
            common = {
                "realtime_priority": SOURCE_RT_PRIORITY,
                "source": i,
                "seed": self.seed,
                "t0_ns": self.t0,
                "end_ns": self.duration_ns,
                "grace_ns": self.grace,
                "start_ns": t["start_ns"],
                "stop_ns": t.get("stop_ns"),
                "packet_size_bytes": t["packet_size_bytes"],
            }
            if src.kind == "ping":
                cfg = dict(common, role="ping", local=snd_ip, peer=rcv_ip, interval_ns=t["interval_ns"])
                self._spawn(src, "ping", snd_ns, dict(cfg, icmp_id=PING_ID_BASE + i))
                continue
            port = SINK_PORT_BASE + i
            self._spawn(src, "udp_sink", rcv_ns, dict(common, role="udp_sink", local=rcv_ip, port=port))
            onoff = {}
            if src.kind == "udp_onoff":
                onoff = {"on_ns": t["on_ns"], "off_ns": t["off_ns"], "exponential": t["durations"] == "exponential"}
            cfg = dict(common, role="udp_send", local=snd_ip, peer=rcv_ip, port=port, rate_bps=t["rate_bps"], **onoff)
            self._spawn(src, "udp_send", snd_ns, cfg)
        end = time.monotonic() + READY_TIMEOUT_S
        for src in self.sources:
            for role, ev in src.ready.items():
                if not ev.wait(max(0.0, end - time.monotonic())):
                    raise SimulationError(src.error or f"traffic.{src.index}: its {role} process did not start")

    def errors(self) -> list[str]:
        return [s.error for s in self.sources if s.error]

    def close(self) -> None:
        """Wait until the processes end by themselves (the run's end and the grace), or stop
        them (SIGTERM: each writes its final line), and their readers."""
        deadline = (self.t0 + self.duration_ns + self.grace) / 1e9 + STOP_TIMEOUT_S
        for p in self.procs:
            try:
                p.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                self.stopping = True
                with contextlib.suppress(ProcessLookupError):
                    p.terminate()
                try:
                    p.wait(timeout=STOP_TIMEOUT_S)
                except subprocess.TimeoutExpired:
                    p.kill()
        self.stopping = True
        self.join_readers()

    def stop_now(self) -> None:
        """Stop every process at once (the run failed or was interrupted)."""
        self.terminate_all()
        self.close()

    def tables(self, first_flow: int, duration_ns: int) -> tuple[dict[str, list[Any]], dict[str, list[Any]]]:
        """The ``traffic`` and ``pings`` tables' columns (``first_flow``: the internal flow id of
        source 0, after the TCP flows)."""
        return traffic_columns(self.sources, first_flow, duration_ns), ping_columns(self.sources)

    def facts(self) -> list[dict[str, Any]]:
        """Per source: what its processes said of themselves (the sender's lateness, send errors)."""
        out = []
        for s in self.sources:
            snd = s.finals.get("udp_send", {})
            out.append(
                {
                    "source": s.index,
                    "kind": s.kind,
                    "send_errors": snd.get("send_errors"),
                    "max_late_ms": snd["max_late_ns"] / 1e6 if "max_late_ns" in snd else None,
                    "after_end_packets": (s.finals.get("udp_sink") or s.finals.get("ping") or {}).get(
                        "after_end_packets"
                    ),
                }
            )
        return out


def _percentile(sorted_ms: list[float], q: float) -> float:
    """The q-quantile (0..1) of sorted values, linearly interpolated; NaN when empty."""
    if not sorted_ms:
        return math.nan
    pos = q * (len(sorted_ms) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(sorted_ms) - 1)
    return sorted_ms[lo] + (sorted_ms[hi] - sorted_ms[lo]) * (pos - lo)


def traffic_columns(sources: list[_Source], first_flow: int, duration_ns: int) -> dict[str, list[Any]]:
    """One row per source, the simulator's ``traffic`` columns (payload = IP packet − 28 B)."""
    cols: dict[str, list[Any]] = {}

    def put(k: str, v: Any) -> None:
        cols.setdefault(k, []).append(v)

    for s in sources:
        t = s.cfg
        payload = t["packet_size_bytes"] - 28
        is_ping = s.kind == "ping"
        if is_ping:
            f = s.finals.get("ping", {})
            sent, recv, inside = f.get("sent_packets", 0), f.get("received_packets", 0), f.get("after_end_packets", 0)
            rtts = sorted(r[2] / 1e6 for r in f.get("echoes", []))
        else:
            sent = s.finals.get("udp_send", {}).get("sent_packets", 0)
            sink = s.finals.get("udp_sink", {})
            recv, inside = sink.get("received_packets", 0), sink.get("after_end_packets", 0)
            rtts = []
        start = min(t["start_ns"], duration_ns)
        stop = min(t["stop_ns"] if t.get("stop_ns") is not None else duration_ns, duration_ns)
        active = max(0, stop - start)
        lost = max(0, sent - recv - inside)
        put("source", s.index)
        put("kind_code", KIND_LABELS.index(s.kind))
        put("reverse", int(bool(t.get("reverse"))))
        put("flow", first_flow + s.index)
        put("sent_packets", sent)
        put("sent_bytes", sent * payload)
        put("received_packets", recv)
        put("received_bytes", recv * payload)
        put("lost_packets", lost)
        put("lost_bytes", lost * payload)
        put("send_rate_bps", sent * payload * 8e9 / active if active else math.nan)
        put("recv_rate_bps", recv * payload * 8e9 / active if active and not is_ping else math.nan)
        put("rtt_mean_ms", sum(rtts) / len(rtts) if rtts else math.nan)
        put("rtt_p50_ms", _percentile(rtts, 0.5))
        put("rtt_p99_ms", _percentile(rtts, 0.99))
    return cols


def ping_columns(sources: list[_Source]) -> dict[str, list[Any]]:
    """The ``pings`` table: every echo that came back by the end, per probe in arrival order."""
    cols: dict[str, list[Any]] = {"source": [], "seq": [], "t_s": [], "rtt_ms": []}
    for s in sources:
        for seq, sent_ns, rtt_ns in s.finals.get("ping", {}).get("echoes", []):
            cols["source"].append(s.index)
            cols["seq"].append(seq)
            cols["t_s"].append(sent_ns / 1e9)
            cols["rtt_ms"].append(rtt_ns / 1e6)
    return cols
