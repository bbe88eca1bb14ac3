"""What the checks of several case groups measure on a run's trace: BBRInflight(1.0) with Linux's
offload budget, the inflight that DRAIN's and PROBE_DOWN's exits compare to it, goodput over a span,
and the episode a state-triggered run's trigger fired on.
"""

from __future__ import annotations

import math

import numpy as np

from .outcome import FAIL, Outcome, na
from .rules import Rules
from .trace import MSS_BYTES, Episode, Run

#: Linux's offload budget in BBRInflight: 3 bursts (`bbr_quantization_budget`).
OFFLOAD_BURSTS = 3
#: Linux's smallest offload burst, segments (`bbr_min_tso_segs` at rates ≥ 1.2 Mbit/s).
MIN_TSO_SEGS = 2


def _burst_segs(run: Run, i: int) -> int:
    """Linux's offload burst at row ``i`` (`bbr_tso_segs_goal`): 2^-10 s of the pacing rate, at
    least 2 segments (its min_rtt allowance is nil at the 40-ms default point)."""
    return max(int(run.col("pacing_rate_bps")[i] / 8 / 1024) // MSS_BYTES, MIN_TSO_SEGS)


def bbr_inflight(run: Run, r: Rules, i: int) -> float:
    """BBRInflight(max_bw, 1.0) at row ``i`` under ``r``: the BDP with the offload budget, added
    (Linux v1, rounded up to even) or as a floor (draft, v2alpha, Linux v3)."""
    bdp, budget = run.bdp_at(i), OFFLOAD_BURSTS * _burst_segs(run, i)
    if r.offload_budget_adds:
        return float(2 * math.ceil((math.ceil(bdp) + budget) / 2))
    return max(bdp, float(budget))


def exit_inflight(run: Run, r: Rules, i: int) -> tuple[float, float, str]:
    """What DRAIN's and PROBE_DOWN's exits compare at row ``i``, under ``r``: (inflight,
    BBRInflight(1.0), the measure's name): the draft's C.inflight, or Linux's packets in the
    network at the next departure (inflight less what bw delivers by then)."""
    inflight = float(run.col("inflight_pkts")[i])
    if not r.exit_inflight_at_edt:
        return inflight, bbr_inflight(run, r, i), "inflight"
    ahead_s = float(run.col("next_departure_ms")[i]) / 1e3
    bw_pkts_per_s = float(run.col("bw_bps")[i]) / 8 / MSS_BYTES
    at_edt = max(inflight - bw_pkts_per_s * ahead_s, 0.0)
    return at_edt, bbr_inflight(run, r, i), "inflight at EDT"


def exit_measure(r: Rules) -> str:
    where = "in the network at the next departure" if r.exit_inflight_at_edt else "inflight"
    budget = "BDP + 3 bursts" if r.offload_budget_adds else "max(BDP, 3 bursts)"
    return f"{where} ≤ {budget}"


def goodput_bps(run: Run, t0: float, t1: float) -> float:
    """Payload delivered between ``t0`` and ``t1``, from the trace's delivered count."""
    t, d = run.col("t_s"), run.col("delivered_pkts")
    a, b = np.searchsorted(t, t0), np.searchsorted(t, t1) - 1
    if b <= a:
        return 0.0
    return float(d[b] - d[a]) * MSS_BYTES * 8 / float(t[b] - t[a])


def triggered(run: Run, phase: str, crit: str) -> Episode | Outcome:
    """The ``phase`` episode a state-triggered run's trigger fired on, or the outcome when there is
    none: not applicable when the replay diverged (the simulator's fault, not the algorithm's),
    fail when the algorithm never entered the phase or the trigger's row starts no such episode."""
    row = run.trigger_row
    if row is None:
        if "diverged" in run.trigger_note:
            return na(run.trigger_note)
        return Outcome(FAIL, run.trigger_note, "the trigger phase is entered")
    e = next((e for e in run.episodes_of(phase) if e.start == row), None)
    if e is None:
        return Outcome(FAIL, f"no {phase.upper()} episode at the trigger", crit)
    return e
