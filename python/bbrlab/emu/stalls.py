"""The link emulator's stalls, and the bottleneck drops that fall in them.

The emulator is one thread; when the machine deschedules or throttles it, it delivers nothing
for a while, and then everything it should have delivered at once. A *stall* is a statistics
interval in which a packet left the emulator ``STALL_THRESHOLD_NS`` (1 ms; crates/emu
forward.rs, where the threshold is justified) or more after its due time; the emulator lists them
in its final line (``stalls``: [interval end relative to the start, the interval's largest
lateness, its largest wake-up lateness, its largest sleep overrun], ns, and ``stall_count``) and
the runner copies them into summary.json's ``run.emu.emulator`` as ``stalls`` ([t_s, late_ms,
wake_late_ms, sleep_late_ms]; a run from before wake-up lateness was recorded has [t_s, late_ms]
pairs) and ``stall_count``.

Two causes: the emulator busy or preempted while it ran, or the machine waking it late from an
idle sleep (a VM's vCPU woken late by the hypervisor: the emulator asked to wake at a time and ran
milliseconds after it, nothing else having run there). The emulator measures the second: for each
timed sleep that ended by its timeout, how late it ran against the wake time it asked for (its
*wake-up lateness*). :func:`late_wakes` applies the rule: a stall counts as the machine's late
wake-up when its interval's wake-up lateness is the stall threshold (1 ms) or more — the loop
slept through at least a stall's length. The *sleep overrun* is the same lateness for every timed
sleep, whatever ended it: one that returned late with a packet ready was not running either, but
the packet may have woken it, so it does not count as a late wake-up.

What a stall does to TCP: the ACKs held on the reverse path arrive bunched, and the sender
answers them with a burst of about stall × rate bytes into the bottleneck's queue — on top of
what the queue already holds. With a full, shallow buffer that burst overflows it: drops (and so
retransmissions) the testbed made, not the algorithm. :func:`drops_in_stalls` attributes the
bottleneck's overflow drops to stalls: those of an interval with a stall or of the interval
right after one (the burst lands after the stall, often across the grid point).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

__all__ = [
    "STALL_METRICS",
    "stalls_from_final",
    "drops_in_stalls",
    "late_wakes",
    "late_sleeps",
    "late_wake_note",
    "late_wake_split",
    "run_stalls",
    "run_stall_threshold_ms",
    "stall_drops_of_run",
]

#: The queue whose drops are attributed: the dumbbell's bottleneck (forward direction). A graph
#: run has no queue of that name; its links' drops are summed.
BOTTLENECK = "bottleneck"


def stalls_from_final(final: dict[str, Any], duration_ns: int) -> tuple[list[list[float]], int]:
    """The emulator's final line's stalls within the run (interval end ≤ ``duration_ns``, as the
    queue table's rows) as ``[t_s, late_ms, wake_late_ms, sleep_late_ms]`` (``[t_s, late_ms]``
    from an emulator that did not record wake-up lateness), and how many there were in all within the run (the list
    is capped; stalls after the run's end, while it is being torn down, are left out)."""
    listed = final.get("stalls") or []
    within = [[s[0] / 1e9, *(round(x / 1e6, 3) for x in s[1:4])] for s in listed if s[0] <= duration_ns]
    count = int(final.get("stall_count") or 0) - (len(listed) - len(within))
    return within, max(count, len(within))


def _key(t_s: float) -> int:
    """A grid time as an integer of microseconds: the queue rows' and the stalls' times are both
    ``t_ns / 1e9`` of the same grid, so they meet here exactly."""
    return round(t_s * 1e6)


def drops_in_stalls(t_s: Sequence[float], drops_cum: Sequence[float], stall_t_s: Sequence[float]) -> tuple[int, int]:
    """One queue's overflow drops in stalled intervals, and all of them: ``t_s`` the queue rows'
    interval ends (ascending), ``drops_cum`` its cumulative drops at each, ``stall_t_s`` the ends of
    the intervals with a stall. An interval's drops count when it, or the one before it, stalled."""
    stalled = {_key(t) for t in stall_t_s}
    in_stalls = 0
    prev_drops = 0.0
    prev_t: float | None = None
    for t, d in zip(t_s, drops_cum):
        n = int(d - prev_drops)
        if _key(t) in stalled or (prev_t is not None and _key(prev_t) in stalled):
            in_stalls += n
        prev_drops, prev_t = d, t
    return in_stalls, int(prev_drops)


def late_wakes(stalls: Sequence[Sequence[float]], threshold_ms: float) -> tuple[float, float]:
    """How many of ``stalls`` (``[t_s, late_ms, wake_late_ms]``) were the machine waking the
    emulator late from sleep, and the largest wake-up lateness among them, ms (0 without any).
    The rule: a stall is a late wake-up when its interval's wake-up lateness is ``threshold_ms``
    (the stall threshold, 1 ms) or more. NaN for both when that cannot be told: a stall without
    its wake-up lateness (an older run), or no threshold."""
    if not math.isfinite(threshold_ms) or any(len(s) < 3 for s in stalls):
        return math.nan, math.nan
    wake = [s[2] for s in stalls if s[2] >= threshold_ms]
    return float(len(wake)), float(max(wake, default=0.0))


def late_sleeps(stalls: Sequence[Sequence[float]], threshold_ms: float) -> float:
    """How many of ``stalls`` (``[t_s, late_ms, wake_late_ms, sleep_late_ms]``) were no late
    wake-up but a sleep that overran by ``threshold_ms`` or more, ended with a packet ready: the
    loop was not running then either, but the packet may have woken it. NaN when that cannot be
    told (a stall without its sleep overrun, or no threshold)."""
    if not math.isfinite(threshold_ms) or any(len(s) < 4 for s in stalls):
        return math.nan
    return float(sum(1 for s in stalls if s[2] < threshold_ms <= s[3]))


def late_wake_split(m: Mapping[str, float], digits: int = 0) -> str:
    """How a count of stalls splits, from :func:`stall_drops_of_run`'s ``m`` (or the means of
    several runs', counts then written with ``digits`` decimals): ``K of them the machine waking
    the emulator late from sleep, worst X ms; L more a sleep that returned late with a packet
    ready``; empty without stalls or when not known. The one wording of the split: the run's
    warning, `bbrlab compare`'s line per run and compare.md all use it."""
    k = m["late_wake_stalls"]
    if not (m["stall_count"] and math.isfinite(k)):
        return ""
    worst = f", worst {m['late_wake_max_ms']:.1f} ms" if k else ""
    overran = m["late_sleep_stalls"]
    more = (
        f"; {overran:.{digits}f} more a sleep that returned late with a packet ready" if math.isfinite(overran) else ""
    )
    return f"{k:.{digits}f} of them the machine waking the emulator late from sleep{worst}{more}"


def late_wake_note(m: Mapping[str, float]) -> str:
    """:func:`late_wake_split` in brackets, to follow a count of stalls in the messages (the
    run's warning, `bbrlab compare`'s line per run); empty when there is no split."""
    split = late_wake_split(m)
    return f" ({split})" if split else ""


#: What :func:`stall_drops_of_run` gives per run (compare.csv's ``emu_<name>`` means).
STALL_METRICS = (
    "stall_count",
    "stall_max_ms",
    "late_wake_stalls",
    "late_wake_max_ms",
    "late_sleep_stalls",
    "overflow_drops",
    "stall_drops",
    "stall_drop_share",
)


def _emulator(summary: dict[str, Any]) -> dict[str, Any]:
    """A run summary's ``run.emu.emulator`` (empty for a simulator run)."""
    return ((summary.get("run") or {}).get("emu") or {}).get("emulator") or {}


def run_stalls(summary: dict[str, Any]) -> tuple[list[list[float]], int] | None:
    """A run's stalls and their count from its summary; None for a run without them (the
    simulator, or an emulator run from before they were recorded)."""
    em = _emulator(summary)
    if "stall_count" not in em:
        return None
    return list(em.get("stalls") or []), int(em["stall_count"])


def run_stall_threshold_ms(summary: dict[str, Any]) -> float:
    """A run's stall threshold from its summary, ms (NaN where it has none)."""
    return float(_emulator(summary).get("stall_threshold_ms") or math.nan)


def stall_drops_of_run(
    queue: pd.DataFrame, stalls: list[list[float]], stall_count: int, threshold_ms: float = math.nan
) -> dict[str, float]:
    """The attribution for one run from its queue table (``t_s``, ``queue``, cumulative
    ``drops_overflow``), its stalls (``[t_s, late_ms, wake_late_ms]``) and the stall threshold:
    :data:`STALL_METRICS` — the stalls' count and longest (0 without any), how many were late
    wake-ups and the worst of those (:func:`late_wakes`), how many more overran a sleep
    (:func:`late_sleeps`; NaN without the threshold or the lateness), the overflow drops (the bottleneck's, or every queue's for a graph), those
    in stalled intervals and their share (NaN without drops)."""
    names = set(queue["queue"].astype(str)) if len(queue) else set()
    chosen = [BOTTLENECK] if BOTTLENECK in names else sorted(names)
    stall_t = [s[0] for s in stalls]
    in_stalls = total = 0
    for name in chosen:
        q = queue[queue["queue"].astype(str) == name].sort_values("t_s")
        a, b = drops_in_stalls(q["t_s"].tolist(), q["drops_overflow"].tolist(), stall_t)
        in_stalls += a
        total += b
    late_wake_stalls, late_wake_max_ms = late_wakes(stalls, threshold_ms)
    return {
        "stall_count": float(stall_count),
        "stall_max_ms": float(max((s[1] for s in stalls), default=0.0)),
        "late_wake_stalls": late_wake_stalls,
        "late_wake_max_ms": late_wake_max_ms,
        "late_sleep_stalls": late_sleeps(stalls, threshold_ms),
        "overflow_drops": float(total),
        "stall_drops": float(in_stalls),
        "stall_drop_share": in_stalls / total if total else float("nan"),
    }
