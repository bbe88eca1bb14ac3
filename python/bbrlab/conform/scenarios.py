"""The paths and senders the conformance cases run on, as core configs (integer SI units).

Each case names one of these; cases that need the same run share it (the bulk run serves A.1,
A.3, A.5, A.8 and A.10). The default point is the draft's older build's: 10 Mbit/s, 40 ms, a
buffer deep enough that STARTUP's queue never overflows (4 BDP: STARTUP's cwnd gain of 2 queues
at most one BDP, plus offload bursts). Durations cover what each case waits for: four 5-s
PROBE_RTT intervals, a rate step after STARTUP has settled, 5 s of idle.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .rules import RULES
from .triggers import Moment, Trigger

__all__ = ["SCENARIOS", "SWEEPABLE", "SWEEP_RATES_BPS", "SWEEP_RTTS_NS", "TRIGGERED", "build"]

MS = 1_000_000
S = 1_000_000_000
#: The draft's default point.
RATE_BPS = 10_000_000
RTT_NS = 40 * MS
#: Buffer of the default point, in BDPs: deep enough that STARTUP never overflows it.
DEEP_BUFFER_BDP = 4.0
#: ACK aggregation of A.12/A.13: the ACK direction releases what it holds every 10 ms (a
#: cellular uplink grant's period), i.e. 12.5 KB of ACKed data at 10 Mbit/s per burst.
AGGREGATION_NS = 10 * MS
#: A.14: 1 Mbit/s × 1 ms = 125 B, a tenth of a segment.
SUB_PACKET_RATE_BPS = 1_000_000
SUB_PACKET_RTT_NS = 1 * MS
#: A.15/A.16: the 10× steps, at 10 s (after STARTUP and a few PROBE_BW cycles).
STEP_AT_NS = 10 * S
#: A.17: a token bucket at half the link rate with a 16 KB burst (about 11 segments).
POLICER_RATE_BPS = 5_000_000
POLICER_BURST_BYTES = 16_000
#: A.7/A.19: an application that writes 30 KB, waits for it to be acknowledged, pauses 10 ms
#: (about 4.5 Mbit/s at 40 ms: app-limited at 10 Mbit/s).
APP_MESSAGE_BYTES = 30_000
APP_GAP_NS = 10 * MS
#: A.2: 60 KB writes (42 segments; app-limited like A.7's, which stays in STARTUP without loss),
#: and every sixth segment of the 11th write dropped: six discontiguous losses, 14 % of that
#: round's data, in STARTUP, far enough apart to be marked by six ACKs (six loss events).
A2_MESSAGE_BYTES = 60_000
A2_DROPPED_SEGMENTS = tuple(420 + 3 + 6 * i for i in range(6))
#: A.19: at the draft's lowest rate each round is seconds long, so STARTUP is still running when
#: ProbeRTTInterval expires.
SLOW_RATE_BPS = 64_000
#: A.11: 100 KB messages 6 s apart: every restart follows more than ProbeRTTInterval (5 s) of
#: idle, and BBRv1's 10-s window expires every other one.
IDLE_MESSAGE_BYTES = 100_000
IDLE_GAP_NS = 6 * S


def _config(
    cc: str,
    duration_ns: int,
    *,
    rate_bps: int = RATE_BPS,
    rtt_ns: int = RTT_NS,
    buffer: dict[str, Any] | None = None,
    flow: dict[str, Any] | None = None,
    **bottleneck: Any,
) -> dict[str, Any]:
    return {
        "name": "conform",
        "seed": 1,
        "duration_ns": duration_ns,
        "sample_interval_ns": 100 * MS,
        "topology": {
            "kind": "dumbbell",
            "bottleneck": {
                "rate_bps": rate_bps,
                "rtt_ns": rtt_ns,
                "buffer": buffer if buffer is not None else {"bdp": DEEP_BUFFER_BDP},
                **bottleneck,
            },
        },
        "flows": [{"cc": cc, "trace": True, **(flow or {})}],
    }


def _bdp_bytes(rate_bps: int, rtt_ns: int) -> int:
    return rate_bps * rtt_ns // 8 // S


SCENARIOS: dict[str, tuple[str, Callable[[str], dict[str, Any]]]] = {
    "bulk": (
        "bulk, 10 Mbit/s, 40 ms, 4 BDP, 22 s",
        lambda cc: _config(cc, 22 * S),
    ),
    "app_limited": (
        "30 KB writes 10 ms apart (≈4.5 Mbit/s), 10 Mbit/s, 40 ms, 12 s",
        lambda cc: _config(cc, 12 * S, flow={"rpc": {"size_bytes": APP_MESSAGE_BYTES, "gap_ns": APP_GAP_NS}}),
    ),
    "slow_startup": (
        "bulk, 64 kbit/s (the draft's lowest rate), 40 ms, 200 packets, 16 s: STARTUP outlasts 5 s",
        lambda cc: _config(cc, 16 * S, rate_bps=SLOW_RATE_BPS, buffer={"packets": 200}),
    ),
    "app_limited_loss": (
        "60 KB writes 10 ms apart, 6 of the 42 segments of the 11th dropped (discontiguous), 4 s",
        lambda cc: _config(
            cc,
            4 * S,
            flow={
                "rpc": {"size_bytes": A2_MESSAGE_BYTES, "gap_ns": APP_GAP_NS},
                "drop_segments": list(A2_DROPPED_SEGMENTS),
            },
        ),
    ),
    "idle": (
        "100 KB writes 6 s apart, 10 Mbit/s, 40 ms, 20 s",
        lambda cc: _config(cc, 20 * S, flow={"rpc": {"size_bytes": IDLE_MESSAGE_BYTES, "gap_ns": IDLE_GAP_NS}}),
    ),
    "aggregation": (
        "bulk, ACKs released every 10 ms, 10 Mbit/s, 40 ms, 15 s",
        lambda cc: _config(
            cc,
            15 * S,
            aggregation={"direction": "ack", "timeout_ns": AGGREGATION_NS},
        ),
    ),
    "sub_packet": (
        "bulk, 1 Mbit/s, 1 ms (BDP 0.09 segment), delayed ACKs, 10 s",
        lambda cc: _config(cc, 10 * S, rate_bps=SUB_PACKET_RATE_BPS, rtt_ns=SUB_PACKET_RTT_NS, buffer={"packets": 100}),
    ),
    "step_up": (
        "bulk, 10 → 100 Mbit/s at 10 s, 40 ms, 2 BDP of 100 Mbit/s, 20 s",
        lambda cc: _config(
            cc,
            20 * S,
            buffer={"bytes": 2 * _bdp_bytes(100_000_000, RTT_NS)},
            schedule=[{"at_ns": STEP_AT_NS, "rate_bps": 100_000_000}],
        ),
    ),
    "step_down": (
        "bulk, 100 → 10 Mbit/s at 10 s, 40 ms, 1 BDP of 100 Mbit/s, 20 s",
        lambda cc: _config(
            cc,
            20 * S,
            rate_bps=100_000_000,
            buffer={"bytes": _bdp_bytes(100_000_000, RTT_NS)},
            schedule=[{"at_ns": STEP_AT_NS, "rate_bps": RATE_BPS}],
        ),
    ),
    "policer": (
        "bulk, 10 Mbit/s link, 5 Mbit/s token bucket (16 KB burst), 40 ms, 20 s",
        lambda cc: _config(cc, 20 * S, policer={"rate_bps": POLICER_RATE_BPS, "burst_bytes": POLICER_BURST_BYTES}),
    ),
}


#: A.4: the rate on DRAIN's entry is cut to this share. The draft's example cuts 10 %; that
#: cut leaves the link faster than DRAIN's pacing (0.5 or 0.35 × max_bw), which empties the
#: queue and ends DRAIN on inflight within its 3 rounds, so the timeout is never exercised. A cut
#: below the DRAIN gain (0.3) makes the queue grow while DRAIN lasts: only the timeout ends it.
A4_RATE_SHARE = 0.3
#: A.9: the first PROBE_DOWN at or after this time triggers the cut: after the first PROBE_RTT
#: (at ~5.2 s), so that the next one (5 s later) does not interrupt the up to 3 s DOWN can last.
A9_AFTER_S = 5.5
#: A.9: the rate drops to this share of DOWN's pacing gain (draft: 0.9 × 0.97 ≈ −13 %, the
#: draft's −10 % less 3 %). At exactly DOWN's gain the link would match DOWN's pacing and the
#: probe's queue would stay as it is, or drain a little at the pacer's 1 % margin (Linux), and
#: the inflight exit could still fire; a link slightly slower than DOWN's pacing makes the queue
#: grow, so only the time limit can end DOWN.
A9_GAIN_SHARE = 0.97
#: A.20: PROBE_UP entries at or after this time (after the first PROBE_RTT) trigger the drops:
#: every second segment from the second after the next one to be sent on UP's entry, discontiguous
#: losses numbering A20_LOSS_SHARE of the inflight then (at least A20_MIN_DROPS): well above
#: LossThresh (2 %) of UP's tx_in_flight at any rate and RTT, before UP can reach its plateau.
A20_AFTER_S = 3.0
A20_LOSS_SHARE = 0.05
A20_MIN_DROPS = 4
#: A.6 and A.21: the application that slows down on the trigger: from the next nanosecond it
#: writes at this share of the link rate (a rate writer with ``bulk_until``): far below max_bw,
#: so that the sender runs dry and its samples are app-limited and below max_bw.
APP_SLOW_SHARE = 0.25
#: A.21: the first PROBE_REFILL at or after this time (after DRAIN and a few cycles) slows the
#: application.
A21_AFTER_S = 3.0
#: A.6: the first PROBE_UP at or after this time slows the application and drops segments it
#: writes from then on: every second one after the segments the entering ACK itself may still
#: send in bulk (``_a6_skip``), as many as A.20 drops (A20_LOSS_SHARE of the inflight then, at
#: least A20_MIN_DROPS): > LossThresh (2 %) of any inflight the slowed sender can have.
A6_AFTER_S = 3.0
#: UP's pacing gain, and the offload burst's bounds (the simulator's `tso`: about 1 ms of the
#: pacing rate, 2 segments to 64 KB; Linux's min_rtt allowance is nil at RTTs ≥ 10 ms).
UP_PACING_GAIN = 1.25
BURST_MIN_SEGMENTS = 2
BURST_MAX_SEGMENTS = 65_536 // 1448


def _a6_skip(rate_bps: int) -> int:
    """Two offload bursts at UP's pacing rate (of the wire rate: an upper bound) and one: what
    the ACK that entered UP may still send in bulk, not app-limited, before the slow-down."""
    burst = math.ceil(UP_PACING_GAIN * rate_bps / 8 / 1000 / 1448)
    return 2 * min(max(burst, BURST_MIN_SEGMENTS), BURST_MAX_SEGMENTS) + 1


def _cut_rate(share: Callable[[str], float]) -> Callable[[dict[str, Any], Moment, str], dict[str, Any]]:
    """A change that sets the bottleneck rate to ``share(cc)`` of the scenario's at the moment."""

    def change(config: dict[str, Any], m: Moment, cc: str) -> dict[str, Any]:
        b = config["topology"]["bottleneck"]
        b["schedule"] = [*b.get("schedule", []), {"at_ns": m.t_ns, "rate_bps": int(b["rate_bps"] * share(cc))}]
        return config

    return change


def _drop_after(config: dict[str, Any], m: Moment, cc: str) -> dict[str, Any]:
    n = max(A20_MIN_DROPS, math.ceil(A20_LOSS_SHARE * m.inflight))
    config["flows"][0]["drop_segments"] = [m.next_segment + 2 * (k + 1) for k in range(n)]
    return config


def _slow_app(config: dict[str, Any], m: Moment, cc: str) -> dict[str, Any]:
    """The application writes as a bulk sender until just after the moment, then at
    ``APP_SLOW_SHARE`` of the link rate."""
    rate = int(config["topology"]["bottleneck"]["rate_bps"] * APP_SLOW_SHARE)
    config["flows"][0]["app"] = {"kind": "rate", "rate_bps": rate, "bulk_until_ns": m.t_ns + 1}
    return config


def _slow_app_and_drop(config: dict[str, Any], m: Moment, cc: str) -> dict[str, Any]:
    config = _slow_app(config, m, cc)
    first = m.next_segment + _a6_skip(config["topology"]["bottleneck"]["rate_bps"])
    n = max(A20_MIN_DROPS, math.ceil(A20_LOSS_SHARE * m.inflight))
    config["flows"][0]["drop_segments"] = [first + 2 * k for k in range(n)]
    return config


#: A.18: on the first PROBE_UP at or after this time the path's RTT jumps to A18_SPIKE_RTT_NS (or
#: A18_SPIKE_RTTS times the path's, if longer) for A18_SPIKE_NS: the data and ACKs sent then take
#: that long, no ACK comes for about half of it, longer than the RTO (200 ms + the RTT, and
#: more: 12 RTTs), so the RTO fires and marks UP's inflight lost; the
#: originals then arrive (the pipe stays FIFO, so before their retransmissions) and the ACKs show
#: the RTO was spurious (timestamps, then D-SACKs).
A18_AFTER_S = 3.0
A18_SPIKE_RTT_NS = 1 * S
A18_SPIKE_RTTS = 25
A18_SPIKE_NS = 100 * MS


def _rtt_spike(config: dict[str, Any], m: Moment, cc: str) -> dict[str, Any]:
    b = config["topology"]["bottleneck"]
    at = m.t_ns + 1
    spike_rtt_ns = max(A18_SPIKE_RTT_NS, A18_SPIKE_RTTS * b["rtt_ns"])
    spike = [{"at_ns": at, "rtt_ns": spike_rtt_ns}, {"at_ns": at + A18_SPIKE_NS, "rtt_ns": b["rtt_ns"]}]
    b["schedule"] = [*b.get("schedule", []), *spike]
    return config


#: Scenarios whose change is triggered by the sender's state (``triggers.py``): each is its base
#: scenario replayed with the change at the ACK that entered the phase.
TRIGGERED: dict[str, tuple[str, Trigger]] = {
    "drain_cut": (
        f"bulk; on DRAIN's entry the rate drops to {A4_RATE_SHARE:.0%}",
        Trigger("bulk", "drain", 0.0, _cut_rate(lambda cc: A4_RATE_SHARE)),
    ),
    "down_cut": (
        f"bulk; on the first PROBE_DOWN after {A9_AFTER_S:g} s the rate drops to {A9_GAIN_SHARE:.0%} of "
        "the DOWN gain's share (draft: 0.873), so DOWN's pacing no longer drains the queue",
        Trigger(
            "bulk",
            "probe_down",
            A9_AFTER_S,
            _cut_rate(lambda cc: (RULES[cc].down_gain or 1.0) * A9_GAIN_SHARE),
        ),
    ),
    "up_loss": (
        f"bulk; on the first PROBE_UP after {A20_AFTER_S:g} s every second segment from the next one sent is "
        f"dropped, {A20_LOSS_SHARE:.0%} of the inflight (at least {A20_MIN_DROPS})",
        Trigger("bulk", "probe_up", A20_AFTER_S, _drop_after),
    ),
    "up_app_loss": (
        f"bulk; on the first PROBE_UP after {A6_AFTER_S:g} s the application slows to {APP_SLOW_SHARE:.0%} of the "
        "link and every second segment it writes past two offload bursts is dropped, "
        f"{A20_LOSS_SHARE:.0%} of the inflight (at least {A20_MIN_DROPS})",
        Trigger("bulk", "probe_up", A6_AFTER_S, _slow_app_and_drop),
    ),
    "up_rtt_spike": (
        f"bulk; on the first PROBE_UP after {A18_AFTER_S:g} s the RTT jumps to {A18_SPIKE_RTT_NS / S:g} s "
        f"(or {A18_SPIKE_RTTS} × the path's) for "
        f"{A18_SPIKE_NS / MS:g} ms: a spurious RTO, undone",
        Trigger("bulk", "probe_up", A18_AFTER_S, _rtt_spike),
    ),
    "refill_app_slow": (
        f"bulk; on the first PROBE_REFILL after {A21_AFTER_S:g} s the application slows to "
        f"{APP_SLOW_SHARE:.0%} of the link",
        Trigger("bulk", "probe_refill", A21_AFTER_S, _slow_app),
    ),
}


#: Scenarios that `--sweep` runs at other rates and RTTs (their buffer is in BDPs and nothing in
#: them is tuned to the default point). The others set their own rate (sub_packet, slow_startup,
#: step_up, step_down, policer) or place their losses and app-limitation for the default point
#: (app_limited_loss, app_limited: 30 KB writes are not app-limited at 1 Mbit/s).
SWEEPABLE = frozenset({"bulk", "idle", "aggregation", *TRIGGERED})
#: The sweep's grid, within the draft's ranges (64 kbit/s–10 Gbit/s, < 1 ms–1 s): three rates
#: a decade apart around the default, three RTTs from a metro to a satellite-like path.
SWEEP_RATES_BPS = (1_000_000, 10_000_000, 100_000_000)
SWEEP_RTTS_NS = (10 * MS, 40 * MS, 200 * MS)


def build(scenario: str, cc: str, point: tuple[int, int] | None = None) -> dict[str, Any]:
    """The core config of ``scenario`` for algorithm ``cc`` (a triggered scenario's: its base's),
    at the default point or at ``point`` = (rate_bps, rtt_ns) for a :data:`SWEEPABLE` one."""
    if point is not None and scenario not in SWEEPABLE:
        raise ValueError(f"scenario {scenario!r} is not swept")
    if scenario in TRIGGERED:
        scenario = TRIGGERED[scenario][1].base
    config = SCENARIOS[scenario][1](cc)
    if point is not None:
        b = config["topology"]["bottleneck"]
        b["rate_bps"], b["rtt_ns"] = point
    return config
