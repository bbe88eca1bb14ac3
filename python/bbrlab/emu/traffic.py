"""Kernel TCP traffic for the emu backend: bulk senders, counting receivers, TCP_INFO sampling.

All traffic lives in one Python process: each sender/receiver thread first moves itself into its
namespace with setns(2) (which acts per thread), then creates its sockets there. So there are no
helper processes to leak, and sockets are readable from the sampler thread whatever its namespace.

TCP_INFO layout relied on (``struct tcp_info``, include/uapi/linux/tcp.h; byte offsets, native
endianness). Fields beyond what the running kernel returns are treated as absent::

     0 u8  state, ca_state, retransmits, probes, backoff, options, wscale, app_limited/fastopen
     8 u32 rto, ato, snd_mss, rcv_mss, unacked, sacked, lost, retrans, fackets,
           last_data_sent, last_ack_sent, last_data_recv, last_ack_recv, pmtu, rcv_ssthresh,
    68     rtt (us), rttvar, snd_ssthresh, snd_cwnd, advmss, reordering, rcv_rtt, rcv_space,
   100     total_retrans
   104 u64 pacing_rate (B/s), max_pacing_rate, bytes_acked, bytes_received
   136 u32 segs_out, segs_in, notsent_bytes, min_rtt (us), data_segs_in, data_segs_out
   160 u64 delivery_rate (B/s), busy_time, rwnd_limited (us), sndbuf_limited (us)
   192 u32 delivered, delivered_ce
   200 u64 bytes_sent, bytes_retrans
   216 u32 dsack_dups, reord_seen, rcv_ooopack, snd_wnd, rcv_wnd, rehash
   240 u16 total_rto, total_rto_recoveries; u32 total_rto_time       (Linux >= 6.7)

TCP_CC_INFO for bbr (``struct tcp_bbr_info``): u32 bw_lo, bw_hi (bytes/s), min_rtt (us),
pacing_gain, cwnd_gain (both << 8, BBR_UNIT = 256).
"""

from __future__ import annotations

import os
import socket
import struct
import threading
import time
from dataclasses import dataclass
from typing import Any

from .netns import enter_netns

TCP_INFO = getattr(socket, "TCP_INFO", 11)
TCP_CONGESTION = getattr(socket, "TCP_CONGESTION", 13)
TCP_CC_INFO = 26
SO_MAX_PACING_RATE = 47
# tcpi_options bits (include/uapi/linux/tcp.h): ECN negotiated; a CE/ECE/CWR seen on this connection.
TCPI_OPT_ECN = 8
TCPI_OPT_ECN_SEEN = 16
#: SCHED_FIFO priority of the sender and receiver threads, below the emulator's
#: (network.EMU_RT_PRIORITY, 10), as for the UDP transport's halves (udptraffic.UDP_RT_PRIORITY).
#: A thread preempted inside send()/recv() owns its socket: packets arriving meanwhile wait in the
#: socket's backlog, coalesced, and leave as one cumulative ACK (receiver) or are answered all at
#: once (sender). On a loaded 2-core machine a normally scheduled receiver sent no ACK for 22 ms
#: while data arrived, then one for 105 segments; the sender answered with a 105-segment
#: line-rate burst (docs/fidelity.md, the policer). ``BBRLAB_TCP_RT_PRIORITY=0`` turns it off.
TCP_RT_PRIORITY = int(os.environ.get("BBRLAB_TCP_RT_PRIORITY", "5"))


def realtime_thread(priority: int) -> bool:
    """Put the calling thread under SCHED_FIFO at ``priority`` (0: leave it); False if refused."""
    if priority <= 0:
        return False
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))
    except (OSError, AttributeError):
        return False
    return True


_INFO_FMT = "=8B 24I 4Q 6I 4Q 2I 2Q 6I 2H I"
TCP_INFO_LEN = struct.calcsize(_INFO_FMT)  # 248
_NAMES = [
    "state",
    "ca_state",
    "retransmits",
    "probes",
    "backoff",
    "options",
    "wscale",
    "flags",
    "rto",
    "ato",
    "snd_mss",
    "rcv_mss",
    "unacked",
    "sacked",
    "lost",
    "retrans",
    "fackets",
    "last_data_sent",
    "last_ack_sent",
    "last_data_recv",
    "last_ack_recv",
    "pmtu",
    "rcv_ssthresh",
    "rtt",
    "rttvar",
    "snd_ssthresh",
    "snd_cwnd",
    "advmss",
    "reordering",
    "rcv_rtt",
    "rcv_space",
    "total_retrans",
    "pacing_rate",
    "max_pacing_rate",
    "bytes_acked",
    "bytes_received",
    "segs_out",
    "segs_in",
    "notsent_bytes",
    "min_rtt",
    "data_segs_in",
    "data_segs_out",
    "delivery_rate",
    "busy_time",
    "rwnd_limited",
    "sndbuf_limited",
    "delivered",
    "delivered_ce",
    "bytes_sent",
    "bytes_retrans",
    "dsack_dups",
    "reord_seen",
    "rcv_ooopack",
    "snd_wnd",
    "rcv_wnd",
    "rehash",
    "total_rto",
    "total_rto_recoveries",
    "total_rto_time",
]
assert len(_NAMES) == len(struct.unpack(_INFO_FMT, bytes(TCP_INFO_LEN)))


def tcp_info(sock: socket.socket) -> dict[str, int]:
    raw = sock.getsockopt(socket.IPPROTO_TCP, TCP_INFO, TCP_INFO_LEN)
    have = len(raw)
    info = dict(zip(_NAMES, struct.unpack(_INFO_FMT, raw.ljust(TCP_INFO_LEN, b"\0"))))
    info["_len"] = have
    return info


def bbr_info(sock: socket.socket) -> dict[str, float] | None:
    try:
        raw = sock.getsockopt(socket.IPPROTO_TCP, TCP_CC_INFO, 20)
    except OSError:
        return None
    if len(raw) < 20:
        return None
    lo, hi, min_rtt, pg, cg = struct.unpack("=5I", raw)
    return {
        "bw_Bps": float((hi << 32) | lo),
        "min_rtt_us": float(min_rtt),
        "pacing_gain": pg / 256,
        "cwnd_gain": cg / 256,
    }


def linux_cc_name(cc: str) -> str:
    """The kernel's name for a scenario algorithm (the registry's ``kernel_name``: bbr1 -> bbr)."""
    from ..core.algorithms import lookup

    a = lookup(cc)
    return a.kernel_name or a.name if a is not None else cc


@dataclass
class FlowState:
    """What the threads share with the sampler for one flow (plain attributes, GIL-protected)."""

    index: int
    cc: str  # the scenario's name
    kernel_cc: str  # what the socket asks the kernel for (TCP_CONGESTION): stock or a run's BPF name
    port: int
    start_ns: int  # absolute CLOCK_MONOTONIC
    stop_ns: int | None
    total_bytes: int | None
    sock: socket.socket | None = None
    connected_ns: int | None = None
    send_done_ns: int | None = None
    received: int = 0
    first_byte_ns: int | None = None
    complete_ns: int | None = None
    error: str | None = None
    rcv_sock: socket.socket | None = None
    final_info: dict[str, int] | None = None  # TCP_INFO at the end of the run (sender; receiver)
    final_rcv_info: dict[str, int] | None = None
    # The sender namespace's TCP MIB counters at the end of the run (mib.py; None: unread).
    final_mib: dict[str, int] | None = None
    # A transport = "udp" flow: its processes' shared status (udptraffic.UdpStatus); None: kernel TCP.
    udp: Any = None
    # The flow's writing application (the core config's ``app``: rate or onoff); None: bulk.
    app: dict[str, Any] | None = None


#: An application writer sleeps at least this long between writes (s): one write per segment
#: at tens of Mbit/s would wake this process thousands of times a second, beside the sampler.
MIN_WRITE_GAP_S = 0.0005
#: And at most this long, so that the end of the run is noticed.
MAX_WRITE_GAP_S = 0.05


class AppWriter:
    """What a flow's application has written by a time (the simulator's ``writer.rs``): bulk
    (no ``app``: unlimited), ``rate`` (``rate · (t − start) / 8`` in whole segments as each falls
    due) or ``onoff`` (``bytes``, rounded up to whole segments, at the start and every
    ``period``, whether or not the last burst has gone). The clock starts when the connection
    is up (the simulator's flow starts without a handshake); the kernel's socket buffer holds
    what is written and unsent, and a writer with nothing left to hand it is app-limited."""

    def __init__(self, app: dict[str, Any] | None, mss: int, start_ns: int) -> None:
        self.app = app
        self.mss = max(1, mss)
        self.start_ns = start_ns
        self.written = 0
        self.next_ns = start_ns

    def offered(self, now: int) -> int:
        """Bytes written by ``now`` (a bulk writer: unlimited)."""
        app = self.app
        if app is None:
            return 1 << 62
        if now >= self.next_ns:
            if app["kind"] == "rate":
                rate = int(app["rate_bps"])
                due = rate * (now - self.start_ns) // 8_000_000_000
                self.written += (due - self.written) // self.mss * self.mss
                # The next segment's last byte is due at start + (written + mss) · 8 / rate.
                self.next_ns = self.start_ns - (-(self.written + self.mss) * 8_000_000_000 // rate)
            else:
                while now >= self.next_ns:
                    self.written += -(-int(app["bytes"]) // self.mss) * self.mss
                    self.next_ns += int(app["period_ns"])
        return self.written

    def wait_s(self, now: int) -> float:
        """How long to sleep before the next write is due."""
        return min(MAX_WRITE_GAP_S, max(MIN_WRITE_GAP_S, (self.next_ns - now) / 1e9))


class Traffic:
    """Bulk TCP flows, each from its sender namespace to its receiver namespace and address (a
    dumbbell: every flow to the one receiver; a graph: between the flow's hosts)."""

    def __init__(
        self,
        flows: list[FlowState],
        sender_ns: list[str],
        receiver_ns: list[str],
        receiver_ip: list[str],
        mss: list[int],
        max_pacing: list[int | None],
    ) -> None:
        self.flows = flows
        self.sender_ns = sender_ns
        self.receiver_ns = receiver_ns
        self.receiver_ip = receiver_ip
        self.mss = mss
        self.max_pacing = max_pacing
        self.stop = threading.Event()
        self.threads: list[threading.Thread] = []
        self.listeners: list[socket.socket] = []
        self._ready: list[threading.Event] = []
        self._listen_error: str | None = None

    # -------------------------------------------------------------- receiver

    def _listen(self, ns: str, indices: list[int], ready: threading.Event) -> None:
        """Listen for flows ``indices`` in namespace ``ns`` (this thread enters it), then read
        each accepted connection in a thread of its own (which inherits the namespace)."""
        mine: list[tuple[FlowState, socket.socket]] = []
        try:
            enter_netns(ns)
            for i in indices:
                f = self.flows[i]
                ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                # The receiver runs the flow's algorithm too (accepted sockets inherit it), as
                # in a real deployment: DCTCP's receiver half (its CE-state ACKs) lives there.
                ls.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, f.kernel_cc.encode())
                self.listeners.append(ls)
                ls.bind((self.receiver_ip[i], f.port))
                ls.listen(4)
                ls.settimeout(0.2)
                mine.append((f, ls))
        except OSError as e:
            self._listen_error = str(e)
        finally:
            ready.set()
        for f, ls in mine:
            t = threading.Thread(target=self._accept_and_read, args=(f, ls), daemon=True, name=f"rcv{f.index}")
            t.start()
            self.threads.append(t)

    def _accept_and_read(self, f: FlowState, ls: socket.socket) -> None:
        conn = None
        while not self.stop.is_set():
            try:
                conn, _ = ls.accept()
                break
            except TimeoutError:
                continue
            except OSError:
                return
        if conn is None:
            return
        f.rcv_sock = conn
        realtime_thread(TCP_RT_PRIORITY)
        conn.settimeout(0.2)
        buf = bytearray(4 << 20)
        mv = memoryview(buf)
        while not self.stop.is_set():
            try:
                n = conn.recv_into(mv)
            except TimeoutError:
                continue
            except OSError:
                break
            if n == 0:
                if f.total_bytes is not None and f.received >= f.total_bytes:
                    f.complete_ns = f.complete_ns or time.monotonic_ns()
                break
            if f.first_byte_ns is None:
                f.first_byte_ns = time.monotonic_ns()
            f.received += n
            if f.total_bytes is not None and f.received >= f.total_bytes and f.complete_ns is None:
                f.complete_ns = time.monotonic_ns()

    # -------------------------------------------------------------- sender

    def _send(self, f: FlowState, ns: str, mss: int, max_pacing: int | None) -> None:
        try:
            enter_netns(ns)
            while not self.stop.is_set():
                d = f.start_ns - time.monotonic_ns()
                if d <= 0:
                    break
                time.sleep(min(d / 1e9, 0.05))
            if self.stop.is_set():
                return
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, f.kernel_cc.encode())
            if mss != 1448:
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, mss)
            if max_pacing:
                s.setsockopt(socket.SOL_SOCKET, SO_MAX_PACING_RATE, max(1, max_pacing // 8))
            f.sock = s
            s.settimeout(5.0)
            s.connect((self.receiver_ip[f.index], f.port))
            f.connected_ns = connected_ns = time.monotonic_ns()
            realtime_thread(TCP_RT_PRIORITY)
            s.settimeout(0.1)
            writer = AppWriter(f.app, mss, connected_ns)
            chunk = memoryview(bytearray(1 << 20))
            sent = 0  # bytes the kernel took
            while not self.stop.is_set():
                now = time.monotonic_ns()
                if f.stop_ns is not None and now >= f.stop_ns:
                    break
                offered = writer.offered(now)
                if f.total_bytes is not None:
                    offered = min(offered, f.total_bytes)
                    if sent >= f.total_bytes:
                        break
                if offered <= sent:  # app-limited: nothing written and unsent
                    time.sleep(writer.wait_s(now))
                    continue
                try:
                    sent += s.send(chunk[: min(len(chunk), offered - sent)])
                except TimeoutError:
                    continue
            f.send_done_ns = time.monotonic_ns()
            try:
                s.shutdown(socket.SHUT_WR)
            except OSError:
                pass
        except OSError as e:
            if not self.stop.is_set():
                f.error = f"flow {f.index}: {e}"

    # -------------------------------------------------------------- control

    def start(self) -> None:
        by_ns: dict[str, list[int]] = {}
        for i, ns in enumerate(self.receiver_ns):
            by_ns.setdefault(ns, []).append(i)
        for k, (ns, indices) in enumerate(by_ns.items()):
            ready = threading.Event()
            self._ready.append(ready)
            t = threading.Thread(target=self._listen, args=(ns, indices, ready), daemon=True, name=f"listen{k}")
            t.start()
            self.threads.append(t)
        for ready in self._ready:
            ready.wait(10)
        if self._listen_error:
            raise RuntimeError(f"receiver could not listen: {self._listen_error}")
        for f, ns, mss, mp in zip(self.flows, self.sender_ns, self.mss, self.max_pacing):
            t = threading.Thread(target=self._send, args=(f, ns, mss, mp), daemon=True, name=f"snd{f.index}")
            t.start()
            self.threads.append(t)

    def close(self) -> None:
        """Stop every thread (they poll ``stop`` at least every 0.2 s), then close the sockets."""
        self.stop.set()
        for t in self.threads:
            t.join(timeout=1.0)
        for f in self.flows:
            for s in (f.sock, f.rcv_sock):
                if s is not None:
                    try:
                        s.close()
                    except OSError:
                        pass
        for ls in self.listeners:
            try:
                ls.close()
            except OSError:
                pass
