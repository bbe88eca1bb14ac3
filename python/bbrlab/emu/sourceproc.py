"""A non-TCP source's process on the emu backend: ``python -m bbrlab.emu.sourceproc --config @FILE``.

One process per role of a ``[[traffic]]`` source (``sources.py`` starts them with ``ip netns exec``
in the source's namespaces, as the UDP transport's halves are started):

- ``udp_send``: fixed-size UDP datagrams on the simulator's schedule (``crates/sim/src/traffic.rs``):
  packet k of a burst leaves ``k · wire_bits / rate`` after the burst's start (integer ns, no
  drift), ``wire_bits`` = (IP packet + 38 B of Ethernet framing) · 8, as a link's rate counts
  them. ``udp_cbr`` is one burst from ``start`` to ``stop``; ``udp_onoff`` restarts the clock at
  each on period, its on and off periods fixed or exponential, drawn from the simulator's own
  random stream (the same xoshiro256** seeded as ``Rng::new(seed, 8_000_000 + source)``), so
  both backends send on the same schedule. A wake-up that comes late sends every packet due by
  then at once (the mean rate holds; the spacing of those packets does not).
- ``udp_sink``: counts the datagrams that reach its port by the run's end, and those that come
  after it (still in the network at the end, as the simulator counts them: neither received nor
  lost).
- ``ping``: an ICMP echo request of ``packet_size`` IP bytes every ``interval``; the far host's
  kernel answers it (as the simulator's far host does, at once), so no process of ours stands in
  the echo's path. The RTT is the kernel's receive timestamp of the echo (SO_TIMESTAMPNS) less
  the clock read just before the request's ``sendto``. A raw socket, not the system's ``ping``:
  it needs no package on the host (iputils is not everywhere), and sends on the simulator's
  grid from the run's own clock.

Each writes ``{"ready": true}`` once its socket is up and ``{"final": {...}}`` when it ends (its
time is up, or SIGTERM). It imports nothing but the standard library (it starts fast), runs at
real-time priority below the emulator's, and dies with its parent (PR_SET_PDEATHSIG).
"""

from __future__ import annotations

import ctypes
import json
import math
import os
import select
import signal
import socket
import struct
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

#: The process name (``comm``) the tests and ``ps`` see.
PROCESS_NAME = b"bbrlab-source"
#: Ethernet framing per packet (preamble, header, FCS, gap), as the simulator and emulator charge.
ETHERNET_OVERHEAD_BYTES = 38
#: IP (20 B) + UDP or ICMP (8 B) headers: what a packet carries besides its payload.
IP_L4_HEADER_BYTES = 28
#: The simulator's random stream of source i is TRAFFIC_STREAM + i (crates/sim/src/traffic.rs).
TRAFFIC_STREAM = 8_000_000
#: Socket buffers: a 1 Gbit/s source's 10 ms of packets, so a late reader loses nothing.
SOCKET_BUFFER_BYTES = 4 << 20
#: A sleep is cut this much short and the rest spun (ns): a timed wake-up of a real-time process
#: on a loaded machine came 20-60 us late.
SPIN_NS = 50_000
#: Longest single wait (s): SIGTERM and the end are noticed at least this often.
MAX_WAIT_S = 0.05

_PR_SET_NAME = 15
_PR_SET_PDEATHSIG = 1
_PR_SET_TIMERSLACK = 29
_ICMP_ECHO_REQUEST = 8
_ICMP_ECHO_REPLY = 0
_SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)
_MASK64 = (1 << 64) - 1

_T = TypeVar("_T")


class Xoshiro256:
    """The simulator's random generator (``crates/cc/src/rng.rs``), seeded the same way."""

    def __init__(self, seed: int, stream: int) -> None:
        state = (seed ^ (stream * 0xD1B5_4A32_D192_ED03)) & _MASK64
        s = []
        for _ in range(4):
            state = (state + 0x9E37_79B9_7F4A_7C15) & _MASK64
            z = state
            z = ((z ^ (z >> 30)) * 0xBF58_476D_1CE4_E5B9) & _MASK64
            z = ((z ^ (z >> 27)) * 0x94D0_49BB_1331_11EB) & _MASK64
            s.append(z ^ (z >> 31))
        self.s = s

    def next_u64(self) -> int:
        s = self.s
        x = (s[1] * 5) & _MASK64
        result = ((((x << 7) | (x >> 57)) & _MASK64) * 9) & _MASK64
        t = (s[1] << 17) & _MASK64
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = ((s[3] << 45) | (s[3] >> 19)) & _MASK64
        return result

    def next_f64(self) -> float:
        return (self.next_u64() >> 11) * (1.0 / (1 << 53))


class Schedule:
    """When a UDP source's packets leave (ns from the run's t0), as ``traffic.rs``'s ``Source``."""

    def __init__(self, cfg: dict[str, Any]) -> None:
        self.num = (cfg["packet_size_bytes"] + ETHERNET_OVERHEAD_BYTES) * 8_000_000_000
        self.den = cfg["rate_bps"]
        self.onoff = cfg.get("on_ns") is not None
        self.on_ns, self.off_ns = int(cfg.get("on_ns") or 0), int(cfg.get("off_ns") or 0)
        self.exponential = bool(cfg.get("exponential"))
        self.rng = Xoshiro256(cfg["seed"], TRAFFIC_STREAM + cfg["source"])
        self.stop_ns = min(cfg["stop_ns"] if cfg["stop_ns"] is not None else cfg["end_ns"], cfg["end_ns"])
        self.burst_start = 0
        self.burst_pkts = 0
        self.on_until = 1 << 63
        self.next_ns: int | None = None
        self._start_burst(cfg["start_ns"])

    def _period(self, mean_ns: int) -> int:
        if not self.exponential:
            return mean_ns
        u = self.rng.next_f64()
        return max(1, int(-math.log(1.0 - u) * mean_ns))

    def _start_burst(self, t: int) -> None:
        self.burst_start, self.burst_pkts, self.next_ns = t, 0, t
        if self.onoff:
            self.on_until = t + self._period(self.on_ns)

    def advance(self) -> None:
        """A packet left: when the next leaves (None: no more)."""
        self.burst_pkts += 1
        nxt = self.burst_start + self.burst_pkts * self.num // self.den
        if self.onoff and nxt >= self.on_until:
            nxt = self.on_until + self._period(self.off_ns)
            self._start_burst(nxt)
        self.next_ns = nxt if nxt < self.stop_ns else None


class Process:
    """What every role shares: the config, the run's clock and the stop flag."""

    def __init__(self, cfg: dict[str, Any]) -> None:
        self.cfg = cfg
        self.t0 = int(cfg["t0_ns"])
        self.end_abs = self.t0 + int(cfg["end_ns"])
        self.stopping = False
        signal.signal(signal.SIGTERM, self._on_term)
        signal.signal(signal.SIGINT, self._on_term)

    def _on_term(self, signum: int, frame: Any) -> None:
        self.stopping = True

    def wait_until(self, t_abs: int) -> bool:
        """Sleep, then spin, until CLOCK_MONOTONIC ``t_abs``; False if stopped first."""
        while not self.stopping:
            d = t_abs - time.monotonic_ns()
            if d <= 0:
                return True
            if d > SPIN_NS:
                time.sleep(min((d - SPIN_NS) / 1e9, MAX_WAIT_S))
        return False


def _udp_send(p: Process, cfg: dict[str, Any]) -> dict[str, Any]:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SOCKET_BUFFER_BYTES)
    s.bind((cfg["local"], 0))
    s.connect((cfg["peer"], cfg["port"]))
    _ready()
    payload = bytearray(cfg["packet_size_bytes"] - IP_L4_HEADER_BYTES)
    sched = Schedule(cfg)
    sent = errors = 0
    max_late_ns = 0
    while sched.next_ns is not None and p.wait_until(p.t0 + sched.next_ns):
        now = time.monotonic_ns() - p.t0
        max_late_ns = max(max_late_ns, now - sched.next_ns)
        while sched.next_ns is not None and sched.next_ns <= now:
            if len(payload) >= 8:
                struct.pack_into("!Q", payload, 0, sent)
            try:
                s.send(payload)
            except OSError:
                errors += 1  # the host's own queue refused it: sent, and lost before the link
            sent += 1
            sched.advance()
    return {"sent_packets": sent, "send_errors": errors, "max_late_ns": max_late_ns}


def _arrivals(s: socket.socket, timeout_s: float, receive: Callable[[], _T]) -> Iterator[_T]:
    """Wait up to ``timeout_s`` for the (non-blocking) socket ``s`` to become readable, then
    ``receive()`` each packet queued on it, until none is left (or a signal cuts the wait)."""
    try:
        select.select([s], [], [], timeout_s)
    except InterruptedError:
        return
    while True:
        try:
            yield receive()
        except (BlockingIOError, InterruptedError):
            return


def _udp_sink(p: Process, cfg: dict[str, Any]) -> dict[str, Any]:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, SOCKET_BUFFER_BYTES)
    s.bind((cfg["local"], cfg["port"]))
    s.setblocking(False)
    _ready()
    quit_abs = p.end_abs + int(cfg["grace_ns"])
    received = after_end = 0
    first_ns = last_ns = None
    buf = bytearray(65536)
    while not p.stopping and time.monotonic_ns() < quit_abs:
        for _ in _arrivals(s, MAX_WAIT_S, lambda: s.recv_into(buf)):
            now = time.monotonic_ns()
            if now <= p.end_abs:
                received += 1
                first_ns = first_ns if first_ns is not None else now - p.t0
                last_ns = now - p.t0
            else:
                after_end += 1
    return {
        "received_packets": received,
        "after_end_packets": after_end,
        "first_rx_ns": first_ns,
        "last_rx_ns": last_ns,
    }


def _checksum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    total = (total >> 16) + (total & 0xFFFF)
    total += total >> 16
    return ~total & 0xFFFF


def _echo_request(ident: int, seq: int, payload: bytes) -> bytes:
    head = struct.pack("!BBHHH", _ICMP_ECHO_REQUEST, 0, 0, ident, seq & 0xFFFF)
    return struct.pack("!BBHHH", _ICMP_ECHO_REQUEST, 0, _checksum(head + payload), ident, seq & 0xFFFF) + payload


def _ping(p: Process, cfg: dict[str, Any]) -> dict[str, Any]:
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, SOCKET_BUFFER_BYTES)
    s.setsockopt(socket.SOL_SOCKET, _SO_TIMESTAMPNS, 1)
    s.bind((cfg["local"], 0))
    s.setblocking(False)
    _ready()
    ident = int(cfg["icmp_id"]) & 0xFFFF
    payload = bytes(cfg["packet_size_bytes"] - IP_L4_HEADER_BYTES)
    interval = int(cfg["interval_ns"])
    stop = min(cfg["stop_ns"] if cfg["stop_ns"] is not None else cfg["end_ns"], cfg["end_ns"])
    quit_abs = p.end_abs + int(cfg["grace_ns"])
    next_ns: int | None = int(cfg["start_ns"])
    # Per request: (monotonic send time from t0, realtime send time); echoes by full sequence.
    sent: list[tuple[int, int]] = []
    rows: list[list[int]] = []  # [seq, sent at (ns from t0), rtt ns], in arrival order
    after_end = 0
    while not p.stopping:
        now_abs = time.monotonic_ns()
        if next_ns is not None and now_abs >= p.t0 + next_ns:
            seq = len(sent)
            t_rt = time.time_ns()
            t_mono = time.monotonic_ns() - p.t0
            try:
                s.sendto(_echo_request(ident, seq, payload), (cfg["peer"], 0))
            except OSError:
                pass  # lost before the link: counted sent, never echoed
            sent.append((t_mono, t_rt))
            k = len(sent)
            nxt = int(cfg["start_ns"]) + k * interval
            next_ns = nxt if nxt < stop else None
            continue
        if next_ns is None and now_abs >= quit_abs:
            break
        wake = p.t0 + next_ns if next_ns is not None else quit_abs
        timeout = max(0.0, min((wake - now_abs) / 1e9, MAX_WAIT_S))
        for data, anc, _flags, _addr in _arrivals(s, timeout, lambda: s.recvmsg(65536, 64)):
            rx_mono = time.monotonic_ns()
            ihl = (data[0] & 0x0F) * 4
            if len(data) < ihl + 8:
                continue
            typ, _code, _ck, rid, rseq = struct.unpack_from("!BBHHH", data, ihl)
            if typ != _ICMP_ECHO_REPLY or rid != ident or not sent:
                continue
            # The full number: the latest request with these low 16 bits.
            top = len(sent) - 1
            seq = top - ((top - rseq) & 0xFFFF)
            if seq < 0:
                continue
            rx_rt = next((struct.unpack("=qq", d[:16]) for lvl, typ2, d in anc if typ2 == _SO_TIMESTAMPNS), None)
            rx_rt_ns = rx_rt[0] * 1_000_000_000 + rx_rt[1] if rx_rt else time.time_ns()
            if rx_mono > p.end_abs:
                after_end += 1
                continue
            t_mono, t_rt = sent[seq]
            rows.append([seq, t_mono, rx_rt_ns - t_rt])
    return {"sent_packets": len(sent), "received_packets": len(rows), "after_end_packets": after_end, "echoes": rows}


ROLES = {"udp_send": _udp_send, "udp_sink": _udp_sink, "ping": _ping}


def _ready() -> None:
    sys.stdout.write(json.dumps({"ready": True}) + "\n")
    sys.stdout.flush()


def _setup(cfg: dict[str, Any]) -> None:
    """Name the process, die with the parent, sleep to the ns, and take real-time priority."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_NAME, ctypes.c_char_p(PROCESS_NAME), 0, 0, 0)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        libc.prctl(_PR_SET_TIMERSLACK, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    if os.getppid() == 1:  # the parent died before PR_SET_PDEATHSIG
        sys.exit(1)
    prio = int(cfg.get("realtime_priority", 0))
    if prio > 0:
        try:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(prio))
        except (OSError, AttributeError):
            pass


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2 or args[0] != "--config" or not args[1].startswith("@"):
        sys.stderr.write("usage: python -m bbrlab.emu.sourceproc --config @FILE\n")
        return 2
    with open(args[1][1:]) as f:
        cfg = json.load(f)
    _setup(cfg)
    p = Process(cfg)
    try:
        final = ROLES[cfg["role"]](p, cfg)
    except OSError as e:
        sys.stderr.write(f"{cfg['role']}: {e}\n")
        return 1
    sys.stdout.write(json.dumps({"final": final}) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
