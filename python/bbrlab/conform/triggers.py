"""Changes triggered by the sender's state (A.4, A.9, A.20: "cut the rate when DRAIN starts",
"drop segments once PROBE_UP starts"), built on the simulator by deterministic replay.

The simulator is deterministic: a run with the same config and seed takes the same steps. So a
triggered scenario runs twice. The first run (its *base*, shared with the cases that run the base
scenario) finds the ACK at which the flow first enters the trigger phase, at or after a given
time; the second run is the base config plus the change, placed at that ACK's time (a bottleneck
``schedule`` entry) or on the segments sent from then on (``drop_segments``). Up to that ACK the
second run is the first one; :func:`replay` checks that (same phases, times and cwnd on every
traced ACK before it) and otherwise reports the replay as diverged, so a check never reads a
trigger that fired somewhere else. This needs no hook in the core, at the cost of one more run
per triggered scenario and algorithm.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .trace import Run, run_config

__all__ = ["Moment", "Trigger", "find_moment", "replay"]


@dataclass(frozen=True)
class Moment:
    """Where the trigger fired in the base run: the row (ACK) that entered the phase, its time,
    the next segment to be sent then (delivered + in flight: the base runs lose nothing before
    it) and the packets in flight."""

    row: int
    t_ns: int
    next_segment: int
    #: Packets in flight on that ACK.
    inflight: int


@dataclass(frozen=True)
class Trigger:
    """A state-triggered change: on the first entry into ``phase`` at or after ``after_s`` in the
    run of scenario ``base``, apply ``change(config, moment, cc)`` (returns the changed config)."""

    base: str
    phase: str
    after_s: float
    change: Callable[[dict[str, Any], Moment, str], dict[str, Any]]


def find_moment(run: Run, phase: str, after_s: float) -> Moment | None:
    """The first ACK at or after ``after_s`` on which the flow enters ``phase`` (None: never)."""
    t = run.col("t_s")
    for e in run.episodes_of(phase):
        if e.start > 0 and t[e.start] >= after_s:
            i = e.start
            inflight = int(run.col("inflight_pkts")[i])
            nxt = int(run.col("delivered_pkts")[i]) + inflight
            return Moment(i, int(round(float(t[i]) * 1e9)), nxt, inflight)
    return None


#: The columns whose equality before the trigger shows the replay took the base run's steps.
_REPLAY_COLUMNS = ("t_s", "phase", "cwnd_pkts", "inflight_pkts", "round_count")


def _same_prefix(a: Run, b: Run, rows: int) -> bool:
    if len(a.phases) < rows or len(b.phases) < rows:
        return False
    return all(np.array_equal(a.col(c)[:rows], b.col(c)[:rows]) for c in _REPLAY_COLUMNS)


def replay(base_config: dict[str, Any], base_run: Run, trigger: Trigger, cc: str) -> Run:
    """Run ``base_config`` again with ``trigger``'s change at its moment in ``base_run``. The
    returned run carries ``trigger_row`` (the row that entered the phase), or ``trigger_note``
    saying why there is none (the phase never came, or the replay diverged before it)."""
    moment = find_moment(base_run, trigger.phase, trigger.after_s)
    if moment is None:
        base_run_copy = copy.copy(base_run)
        base_run_copy.trigger_note = f"the flow never entered {trigger.phase} after {trigger.after_s:g} s"
        return base_run_copy
    run = run_config(trigger.change(copy.deepcopy(base_config), moment, cc))
    if not _same_prefix(base_run, run, moment.row + 1):
        run.trigger_note = f"the replay diverged from its base run before {trigger.phase} began"
        return run
    run.trigger_row = moment.row
    return run
