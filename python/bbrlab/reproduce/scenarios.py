"""Typed scenario construction for the studies.

A study describes a run with these dataclasses in integer SI units (bit/s, bytes) and seconds,
and `study_run` turns it into a validated `bbrlab.Scenario` through the public API
(`bbrlab.parse_scenario`), so a mistake fails when the study builds its list, not in a worker.
This module is the only place in the studies that writes the scenario format's unit strings; it
writes every value in its base unit ("2500000000bps", "140000000ns", "6291456B"), so nothing is
rounded on the way: the scenario holds exactly the integers the study computed.

Times are seconds (float) in, whole nanoseconds out (`round(t * 1e9)`), the simulator's clock.
A study that needs a coarser grid (a start time to the microsecond) rounds before it calls.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from .. import Scenario, parse_scenario  # the public API: stable while the scenario model is reorganized

__all__ = ["Dumbbell", "Flow", "Pfc", "QueryApp", "QueueLimit", "Rpc", "Star", "StudyRun", "study_run"]


def _bps(rate_bps: int) -> str:
    return f"{_whole(rate_bps, 'a rate')}bps"


def _bytes(n: int) -> str:
    return f"{_whole(n, 'a size')}B"


def _ns(t_s: float) -> str:
    if not math.isfinite(t_s) or t_s < 0:
        raise ValueError(f"{t_s!r} s is not a time")
    return f"{round(t_s * 1e9)}ns"


def _whole(v: int, what: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"{what} must be a whole number in base units, got {v!r}")
    return v


@dataclass(frozen=True)
class QueueLimit:
    """A drop-tail limit in one of the three units a scenario accepts."""

    value: int | float
    unit: Literal["B", "pkts", "bdp"]

    @classmethod
    def of_bytes(cls, n: int) -> QueueLimit:
        return cls(_whole(n, "a buffer"), "B")

    @classmethod
    def of_packets(cls, n: int) -> QueueLimit:
        return cls(_whole(n, "a buffer"), "pkts")

    @classmethod
    def of_bdp(cls, multiple: float) -> QueueLimit:
        return cls(multiple, "bdp")

    def raw(self) -> str:
        v = self.value
        return f"{int(v) if float(v).is_integer() else v!r}{self.unit}"


@dataclass(frozen=True)
class Rpc:
    """Request/response workload of a flow: messages of `size_bytes`, `gap_s` apart."""

    size_bytes: int
    gap_s: float

    def raw(self) -> dict[str, Any]:
        return {"size": _bytes(self.size_bytes), "gap": _ns(self.gap_s)}


@dataclass(frozen=True)
class Flow:
    """One flow (or a query app's response template). None leaves the scenario default."""

    cc: str
    start_s: float | None = None
    stop_s: float | None = None
    sender: int | None = None
    ecn: bool | None = None
    rcvbuf_bytes: int | None = None
    max_pacing_rate_bps: int | None = None
    gap_histogram: bool | None = None
    tso_minrtt_autosize: bool | None = None
    faster_acks: bool | None = None
    app_read_delay_s: float | None = None
    rpc: Rpc | None = None
    fast_path: bool | None = None
    #: "udp": bbrlab's own transport over UDP on the emu backend (the simulator runs its own
    #: transport either way); None: the scenario default, the kernel's TCP.
    transport: Literal["tcp", "udp"] | None = None

    def raw(self) -> dict[str, Any]:
        out: dict[str, Any] = {"cc": self.cc}
        settings: tuple[tuple[str, Any, Callable[[Any], str] | None], ...] = (
            ("start", self.start_s, _ns),
            ("stop", self.stop_s, _ns),
            ("sender", self.sender, None),
            ("ecn", self.ecn, None),
            ("rcvbuf", self.rcvbuf_bytes, _bytes),
            ("max_pacing_rate", self.max_pacing_rate_bps, _bps),
            ("gap_histogram", self.gap_histogram, None),
            ("tso_minrtt_autosize", self.tso_minrtt_autosize, None),
            ("faster_acks", self.faster_acks, None),
            ("app_read_delay", self.app_read_delay_s, _ns),
            ("fast_path", self.fast_path, None),
            ("transport", self.transport, None),
        )
        for key, value, unit in settings:
            if value is not None:
                out[key] = unit(value) if unit else value
        if self.rpc is not None:
            out["rpc"] = self.rpc.raw()
        return out


@dataclass(frozen=True)
class Dumbbell:
    """Senders -> one bottleneck -> receivers. `access_rate_bps` None: the scenario's default
    (10x the bottleneck); set it to the bottleneck rate to put the queue in the sending host."""

    rate_bps: int
    rtt_s: float
    buffer: QueueLimit
    loss: float = 0.0  # random loss probability on the bottleneck
    ecn_threshold_bytes: int | None = None
    access_rate_bps: int | None = None
    #: The bottleneck's queue discipline as the scenario's `qdisc` table (scenario units).
    qdisc: Mapping[str, Any] | None = None

    def raw(self) -> dict[str, Any]:
        bn: dict[str, Any] = {
            "rate": _bps(self.rate_bps),
            "rtt": _ns(self.rtt_s),
            "buffer": self.buffer.raw(),
            "loss": self.loss,
        }
        if self.ecn_threshold_bytes is not None:
            bn["ecn_threshold"] = _bytes(self.ecn_threshold_bytes)
        if self.qdisc is not None:
            bn["qdisc"] = dict(self.qdisc)
        out: dict[str, Any] = {"kind": "dumbbell", "bottleneck": bn}
        if self.access_rate_bps is not None:
            out["access_rate"] = _bps(self.access_rate_bps)
        return out


@dataclass(frozen=True)
class Pfc:
    """802.3x PAUSE thresholds of a lossless switch port."""

    xoff_bytes: int
    xon_bytes: int
    quanta: int
    #: "egress": an output queue over XOFF pauses every link feeding it; "ingress": each ingress
    #: port's bytes in the buffer are counted and only the port over XOFF is paused.
    accounting: Literal["egress", "ingress"] = "egress"
    headroom_bytes: int | None = None  # ingress: reserved above XOFF (default: the PAUSE round trip)
    nic_honours_pause: bool = True  # false: host NICs ignore PAUSE (flow control off)
    switches_honour_pause: bool = True  # false: inter-switch ports ignore PAUSE (racks)

    def raw(self) -> dict[str, Any]:
        out: dict[str, Any] = {"xoff": _bytes(self.xoff_bytes), "xon": _bytes(self.xon_bytes), "quanta": self.quanta}
        if self.accounting != "egress":
            out["accounting"] = self.accounting
        if self.headroom_bytes is not None:
            out["headroom"] = _bytes(self.headroom_bytes)
        if not self.nic_honours_pause:
            out["nic_honours_pause"] = False
        if not self.switches_honour_pause:
            out["switches_honour_pause"] = False
        return out


@dataclass(frozen=True)
class Star:
    """One top-of-rack switch: `workers` hosts and an aggregator. `pfc` set: lossless."""

    workers: int
    rate_bps: int
    delay_s: float  # one way, per host link
    forwarding: Literal["store-and-forward", "cut-through"]
    buffer_bytes: int | None = None  # per output port
    shared_buffer_bytes: int | None = None  # the switch's shared pool
    shared_buffer_alpha: float | None = None  # its dynamic threshold
    hosts_per_rack: int | None = None  # racks under one aggregation switch (aggregator in rack 0)
    worker_racks: tuple[int, ...] | None = None  # each worker's rack in turn (default: fill in order)
    pfc: Pfc | None = None
    clock_ppm: int | None = None
    host_jitter_s: float | None = None

    def raw(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": "star",
            "workers": self.workers,
            "rate": _bps(self.rate_bps),
            "delay": _ns(self.delay_s),
            "forwarding": self.forwarding,
        }
        if self.clock_ppm is not None:
            out["clock_ppm"] = self.clock_ppm
        if self.host_jitter_s is not None:
            out["host_jitter"] = _ns(self.host_jitter_s)
        if self.buffer_bytes is not None:
            out["buffer"] = _bytes(self.buffer_bytes)
        if self.shared_buffer_bytes is not None:
            out["shared_buffer"] = _bytes(self.shared_buffer_bytes)
        if self.shared_buffer_alpha is not None:
            out["shared_buffer_alpha"] = self.shared_buffer_alpha
        if self.hosts_per_rack is not None:
            out["hosts_per_rack"] = self.hosts_per_rack
        if self.worker_racks is not None:
            out["worker_racks"] = list(self.worker_racks)
        if self.pfc is not None:
            out.update(lossless=True, pfc=self.pfc.raw())
        return out


@dataclass(frozen=True)
class QueryApp:
    """Partition/aggregate queries: `workers` each answer `size_bytes / workers`."""

    workers: int
    size_bytes: int
    repetitions: int
    start_s: float
    gap_s: float
    jitter_s: float
    flow: Flow

    def raw(self) -> dict[str, Any]:
        return {
            "kind": "query",
            "workers": self.workers,
            "size": _bytes(self.size_bytes),
            "repetitions": self.repetitions,
            "start": _ns(self.start_s),
            "gap": _ns(self.gap_s),
            "jitter": _ns(self.jitter_s),
            "flow": self.flow.raw(),
        }


@dataclass(frozen=True)
class StudyRun:
    """A validated scenario and the study's labels for it (`tags`: become columns of its rows)."""

    scenario: Scenario
    tags: dict[str, Any] = field(default_factory=dict)


def study_run(
    name: str,
    *,
    duration_s: float,
    seed: int,
    sample_interval_s: float,
    topology: Dumbbell | Star,
    flows: Sequence[Flow] = (),
    apps: Sequence[QueryApp] = (),
    tags: Mapping[str, Any],
    hosts: Mapping[str, Any] | None = None,
) -> StudyRun:
    """The one place a study's description becomes a scenario (validated: raises ScenarioError).
    ``hosts``: the scenario's ``[hosts]`` table (scenario field names and units), None: no host model."""
    raw = {
        "name": name,
        "duration": _ns(duration_s),
        "seed": seed,
        "sample_interval": _ns(sample_interval_s),
        "topology": topology.raw(),
        "flows": [f.raw() for f in flows],
        "apps": [a.raw() for a in apps],
    }
    if hosts is not None:
        raw["hosts"] = dict(hosts)
    return StudyRun(parse_scenario(raw, default_name=name), dict(tags))
