"""What a kernel run records of itself: summary.json's ``run.emu`` (docs/emu.md).

The testbed's own side of a result: the emulator's version and what it was given, how faithfully
it kept time (late deliveries, late wake-ups, stalls), the sysctls, the helper processes of UDP
flows and [[traffic]] sources, the BPF registrations and each flow's negotiated ECN. Kept apart
from the run (runner.py) because it only reads what the run collected.
"""

from __future__ import annotations

import os
from typing import Any

from .launch import Launch
from .sources import Sources, source_launch
from .traffic import TCPI_OPT_ECN, TCPI_OPT_ECN_SEEN, FlowState
from .udptraffic import UdpFlows

__all__ = ["run_facts"]

# The emulator's final counters copied into the facts as they are.
_EMULATOR_COUNTERS = (
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


def run_facts(
    *,
    launch: Launch,
    ready: dict[str, Any],
    settings: dict[str, Any],
    queue_labels: list[str] | None,
    final: dict[str, Any],
    stalls: list[list[float]],
    stall_count: int,
    states: list[FlowState],
    udp_launch: Launch | None,
    sources: Sources | None,
    grace_ns: int,
    ignored: list[str],
    bpf_facts: dict[str, Any],
) -> dict[str, Any]:
    """The run's facts. ``queue_labels``: a graph's link directions (None on a dumbbell, whose
    links are ``settings``' own); ``udp_launch`` / ``sources``: None when the run had no
    ``transport = "udp"`` flow / no [[traffic]] source."""
    return {
        "linkemu": launch.description,
        "linkemu_version": ready.get("version", ""),
        "linkemu_realtime": bool(ready.get("realtime", False)),
        "kernel": os.uname().release,
        "sysctls": {"tcp_wmem": settings["tcp_wmem"], "tcp_rmem": settings["tcp_rmem"]},
        "link": {"graph_links": queue_labels}
        if queue_labels is not None
        else {
            "forward": _without_trace_text(settings["forward"]),
            "reverse": _without_trace_text(settings["reverse"]),
            "ect1_senders": settings["ect1_senders"],
        },
        "emulator": {
            **{k: final.get(k) for k in _EMULATOR_COUNTERS},
            # The statistics intervals in which the emulator stalled (bbrlab.emu.stalls).
            "stall_threshold_ms": (final.get("stall_threshold_ns") or 0) / 1e6,
            "stall_count": stall_count,
            "stalls": stalls,
        },
        "rtt_stats_from": "tcpi_rtt (smoothed RTT) sampled every 10 ms"
        + ("; transport = udp flows: every per-ACK RTT sample of the transport" if udp_launch is not None else ""),
        # transport = "udp" flows: the transport's processes and what they used (udptraffic.py).
        "udp": {"launch": udp_launch.description, "flows": UdpFlows.facts(states)} if udp_launch is not None else None,
        "flow_errors": [s.error for s in states if s.error],
        # [[traffic]] sources: their processes and what they said of themselves (sources.py).
        "traffic": {"launch": source_launch().description, "grace_ms": grace_ns / 1e6, "sources": sources.facts()}
        if sources is not None
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


def _without_trace_text(link: dict[str, Any]) -> dict[str, Any]:
    """A direction's parameters for the run's facts: a trace by its name and size, not its text."""
    t = link.get("trace")
    if t is None:
        return link
    return dict(link, trace={"file": t["file"], "bytes": len(t["text"].encode())})


def _options(s: FlowState, which: str) -> int:
    return int((getattr(s, which, None) or {}).get("options", 0))
