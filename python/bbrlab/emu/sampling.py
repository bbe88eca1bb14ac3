"""The sampling loop of an emu run: every 10 ms (or the sample interval if shorter) it reads each
connected flow's TCP_INFO (and BBR info, and the phase of a BPF algorithm) — or, for a
``transport = "udp"`` flow, the latest status its transport wrote itself (udptraffic.py) —, and at each sample
interval appends one timeseries row per flow — the simulator's timeseries columns that the kernel
reports (the others are filled from the table's spec when the results are assembled); it stops the run when the emulator exits or a flow fails,
and at the end reads each flow's final TCP_INFO (sender and receiver) for the flows table."""

from __future__ import annotations

import math
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import SimulationError
from .phase import kernel_phase
from .rtt import RttReads
from .traffic import FlowState, Traffic, bbr_info, tcp_info

#: Bit of TCP_INFO's flags byte (offset 7): tcpi_delivery_rate_app_limited, the mark of the last
#: delivery-rate sample (include/uapi/linux/tcp.h's first bitfield there).
TCPI_DELIVERY_RATE_APP_LIMITED = 1

#: The kernel's TCP_INFO is read at least this often (ns): the RTT statistics are over these reads.
RTT_TICK_NS = 10_000_000

#: One flow's reading at a tick: its TCP_INFO, its BBR info (kernel bbr only) and its phase code
#: (BPF algorithms with a phase port), or None before it connects or when the read failed.
FlowInfo = tuple[dict[str, int], dict[str, float] | None, int | None]


@dataclass
class _Sampler:
    """What the sampling loop carries from one tick to the next, per flow: the timeseries columns
    built so far, every RTT read (for the flows table) with the bytes acknowledged since the read
    before it, and those of the current interval, and the counters whose change an interval
    reports (bytes delivered, rwnd- and sndbuf-limited time).

    The simulator's flow RTT statistics are over every per-ACK sample; reads of ``tcpi_rtt`` at a
    fixed tick weigh each stretch of time alike instead, so a run whose rate changes (a 10x step
    down) would weigh its slow, queue-filled stretch ten times more than the simulator does.
    Weighting each read by the bytes acknowledged since the last one estimates the per-ACK
    statistics (see ``rtt_stats``)."""

    states: list[FlowState]
    interval_ns: int
    phase_ports: dict[str, Any]
    cols: dict[str, list[Any]] = field(init=False)
    rtt_samples: list[list[float]] = field(init=False)
    rtt_weights: list[list[float]] = field(init=False)
    last_acked: list[int] = field(init=False)
    interval_rtts: list[list[float]] = field(init=False)
    last_delivered: list[int] = field(init=False)
    last_rwnd: list[int] = field(init=False)
    last_sndbuf: list[int] = field(init=False)
    # transport = "udp" flows: the sender's latest status, and the sum and count of its per-ACK
    # RTT samples in the current interval (the simulator's rtt_ms, exactly).
    udp_latest: list[dict[str, Any] | None] = field(init=False)
    udp_interval: list[list[int]] = field(init=False)
    # Kernel TCP flows: the current interval's reads whose last delivery-rate sample was marked
    # app-limited (tcpi_delivery_rate_app_limited), and all its reads: the simulator's
    # app_limited (the fraction of the interval's samples so marked), over the reads instead.
    app_limited: list[list[int]] = field(init=False)

    def __post_init__(self) -> None:
        n = len(self.states)
        # The timeseries columns the kernel reports, with the phase as its name (coded in
        # _assemble); a column written here that the table's spec lacks fails there.
        self.cols = defaultdict(list)
        self.rtt_samples = [[] for _ in range(n)]
        self.rtt_weights = [[] for _ in range(n)]
        self.last_acked = [0] * n
        self.interval_rtts = [[] for _ in range(n)]
        self.last_delivered = [0] * n
        self.last_rwnd = [0] * n
        self.last_sndbuf = [0] * n
        self.udp_latest = [None] * n
        self.udp_interval = [[0, 0] for _ in range(n)]
        self.app_limited = [[0, 0] for _ in range(n)]

    def rtt_reads(self) -> list[RttReads]:
        """Every flow's RTT reads with their weights, for the flows table."""
        return [RttReads(r, w) for r, w in zip(self.rtt_samples, self.rtt_weights)]

    def read_infos(self) -> list[FlowInfo | None]:
        """Every connected flow's TCP_INFO now; its RTT joins the flow's samples."""
        infos: list[FlowInfo | None] = []
        for i, s in enumerate(self.states):
            info = None
            if s.udp is not None:
                self._read_udp(i, s)
            elif s.sock is not None and s.connected_ns is not None:
                try:
                    ti = tcp_info(s.sock)
                    bi = bbr_info(s.sock) if s.kernel_cc == "bbr" else None
                    port = self.phase_ports.get(s.cc)
                    info = (ti, bi, port.phase_code(s.sock.fileno()) if port is not None else None)
                    if ti["delivery_rate"] > 0:  # a delivery-rate sample exists
                        self.app_limited[i][0] += ti["flags"] & TCPI_DELIVERY_RATE_APP_LIMITED
                        self.app_limited[i][1] += 1
                    if ti["rtt"] > 0 and ti["bytes_acked"] > 1:
                        self.rtt_samples[i].append(ti["rtt"] / 1000.0)
                        self.rtt_weights[i].append(float(max(0, ti["bytes_acked"] - self.last_acked[i])))
                        self.last_acked[i] = ti["bytes_acked"]
                        self.interval_rtts[i].append(ti["rtt"] / 1000.0)
                except OSError:
                    info = None
            infos.append(info)
        return infos

    def _read_udp(self, i: int, s: FlowState) -> None:
        """A UDP flow's latest status; its per-ACK RTT samples join the interval's and, as one
        read weighted by their count, the flow's (the flows table's statistics)."""
        latest, rtt_sum_ns, rtt_count = s.udp.take()
        self.udp_latest[i] = latest
        if rtt_count > 0:
            self.udp_interval[i][0] += rtt_sum_ns
            self.udp_interval[i][1] += rtt_count
            self.rtt_samples[i].append(rtt_sum_ns / rtt_count / 1e6)
            self.rtt_weights[i].append(float(rtt_count))

    def sample(self, t_s: float, infos: list[FlowInfo | None]) -> None:
        """One timeseries row per flow at `t_s`, from the latest reads."""
        cols = self.cols
        for i, s in enumerate(self.states):
            d = s.received
            cols["t_s"].append(t_s)
            cols["flow"].append(i)
            cols["delivered_bytes"].append(d)
            cols["goodput_bps"].append((d - self.last_delivered[i]) * 8 / (self.interval_ns / 1e9))
            self.last_delivered[i] = d
            marked, reads = self.app_limited[i]
            cols["app_limited"].append(marked / reads if reads else math.nan)
            self.app_limited[i] = [0, 0]
            if s.udp is not None:
                rsum, rcount = self.udp_interval[i]
                cols["rtt_ms"].append(rsum / rcount / 1e6 if rcount else math.nan)
                self.udp_interval[i] = [0, 0]
                latest = self.udp_latest[i]
                if latest is None:
                    self._append_unknown()
                else:
                    self._append_udp(latest)
                continue
            rt = self.interval_rtts[i]
            cols["rtt_ms"].append(sum(rt) / len(rt) if rt else math.nan)
            self.interval_rtts[i] = []
            info = infos[i]
            if info is None:
                self._append_unknown()
            else:
                self._append_info(i, s, info)

    def _append_unknown(self) -> None:
        """The row of a flow with no TCP_INFO (not connected yet, or the read failed)."""
        cols = self.cols
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

    def _append_udp(self, st: dict[str, Any]) -> None:
        """The row of a UDP flow from its transport's own status line (crates/udpflow: the same
        quantities the simulator samples, named as its columns)."""
        cols = self.cols
        mss = int(st["mss"])
        cols["cwnd_pkts"].append(int(st["cwnd_pkts"]))
        cols["cwnd_bytes"].append(int(st["cwnd_pkts"]) * mss)
        cols["inflight_bytes"].append(int(st["inflight_bytes"]))
        cols["pacing_rate_bps"].append(float(st["pacing_rate_bps"]))
        cols["delivery_rate_bps"].append(float(st["delivery_rate_bps"]))
        cols["srtt_ms"].append(st["srtt_ns"] / 1e6)
        cols["min_rtt_ms"].append(math.nan if st.get("min_rtt_ns") is None else st["min_rtt_ns"] / 1e6)
        cols["retransmits"].append(int(st["retransmits"]))
        cols["ssthresh_pkts"].append(-1 if st.get("ssthresh_pkts") is None else int(st["ssthresh_pkts"]))
        cols["phase"].append(str(st["phase"]) or "-")
        for k in ("bw_bps", "pacing_gain", "cwnd_gain"):
            cols[k].append(float(st[k]))
        cols["ca_state"].append(min(int(st["ca_state"]), 4))
        cols["rwnd_limited"].append(int(bool(st["rwnd_limited"])))
        cols["sndbuf_limited"].append(int(bool(st["sndbuf_limited"])))

    def _append_info(self, i: int, s: FlowState, info: FlowInfo) -> None:
        """The row of flow `i` from its TCP_INFO (and BBR info and phase code)."""
        cols = self.cols
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
        cols["rwnd_limited"].append(1 if ti["rwnd_limited"] > self.last_rwnd[i] else 0)
        cols["sndbuf_limited"].append(1 if ti["sndbuf_limited"] > self.last_sndbuf[i] else 0)
        self.last_rwnd[i], self.last_sndbuf[i] = ti["rwnd_limited"], ti["sndbuf_limited"]


def _check_alive(states: list[FlowState], emu: Any, emu_error: Callable[[str], SimulationError]) -> None:
    """Raise if the emulator exited or a flow's traffic failed."""
    if emu.poll() is not None:
        raise emu_error(f"the link emulator exited unexpectedly (status {emu.returncode})")
    errs = [s.error for s in states if s.error]
    if errs:
        raise SimulationError(errs[0])


def _read_final_infos(states: list[FlowState]) -> None:
    """Final TCP_INFO per flow for the flows table (and the receiver's, for its ECN flags)."""
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
) -> tuple[dict[str, list[Any]], list[RttReads]]:
    sampler = _Sampler(states, interval_ns, phase_ports)
    tick = min(RTT_TICK_NS, interval_ns)
    next_tick = t0
    next_sample = t0 + interval_ns
    end = t0 + duration_ns
    while True:
        now = time.monotonic_ns()
        if now < next_tick:
            time.sleep((next_tick - now) / 1e9)
        now = time.monotonic_ns()
        _check_alive(states, emu, emu_error)
        infos = sampler.read_infos()
        while now >= next_sample and next_sample <= end:
            sampler.sample((next_sample - t0) / 1e9, infos)
            next_sample += interval_ns
        if progress is not None:
            progress(min(now - t0, duration_ns), duration_ns) if now >= t0 else None
        if next_sample > end:
            break
        next_tick += tick
        if next_tick < time.monotonic_ns() - tick:  # fell behind (CPU contention): do not burst
            next_tick = time.monotonic_ns()
    _read_final_infos(states)
    return sampler.cols, sampler.rtt_reads()
