"""The PROBE_RTT cases: A.10 (PROBE_RTT every ProbeRTTInterval and its exit), A.11 (no PROBE_RTT on a
restart after idle), A.19 (PROBE_RTT entered from STARTUP).
"""

from __future__ import annotations

import math

import numpy as np

from .outcome import FAIL, PROBE_RTT_DURATION_S, Outcome, verdict
from .rules import Rules
from .trace import Run


def _probe_rtt_cwnd(run: Run, r: Rules, i: int) -> float:
    if r.probe_rtt_cwnd_gain is None:
        return 4.0
    return max(r.probe_rtt_cwnd_gain * run.bdp_at(i), 4.0)


def check_a10(run: Run, r: Rules) -> Outcome:
    """A.10: PROBE_RTT every ProbeRTTInterval of steady PROBE_BW, at cwnd_gain 0.5 (floor 4),
    held ≥ 200 ms and ≥ 1 round, back to PROBE_BW."""
    interval = r.probe_rtt_interval_s
    crit = (
        f"entries every {interval:.0f}–{interval + 0.5:.1f} s ({r.source}); cwnd "
        f"{'max(0.5·BDP, 4)' if r.probe_rtt_cwnd_gain else '4'}; ≥ 200 ms and ≥ 1 round; → PROBE_BW"
    )
    eps = [e for e in run.episodes_of("probe_rtt") if e.next]
    if len(eps) < 2:
        return Outcome(FAIL, f"{len(eps)} completed PROBE_RTTs in {run.col('t_s')[-1]:.0f} s", crit)
    t, rounds, cwnd = run.col("t_s"), run.col("round_count"), run.col("cwnd_pkts")
    gaps = np.diff([t[e.start] for e in eps])
    held = [t[e.end] - t[e.start] for e in eps]
    held_rounds = [int(rounds[e.end] - rounds[e.start]) for e in eps]
    floors = [int(cwnd[e.start : e.end].min()) for e in eps]
    targets = [_probe_rtt_cwnd(run, r, e.start) for e in eps]
    nexts = sorted({e.next for e in eps})
    ok = (
        bool(np.all((gaps >= interval) & (gaps <= interval + 0.5)))
        and min(held) >= PROBE_RTT_DURATION_S
        and min(held_rounds) >= 1
        and all(abs(f - math.floor(g)) <= 1 for f, g in zip(floors, targets))
        and all(n in r.probe_bw_phases for n in nexts)
    )
    return Outcome(
        verdict(ok),
        f"{len(eps)} entries {np.min(gaps):.2f}–{np.max(gaps):.2f} s apart; held "
        f"{min(held) * 1e3:.0f}–{max(held) * 1e3:.0f} ms, ≥ {min(held_rounds)} rounds; cwnd "
        f"{min(floors)}–{max(floors)} (target {min(targets):.1f}); → {', '.join(nexts)}",
        crit,
    )


def check_a11(run: Run, r: Rules) -> Outcome:
    """A.11: a restart after more than ProbeRTTInterval of idle does not enter PROBE_RTT."""
    crit = "no PROBE_RTT on restarts after ≥ 5 s of idle (idle_restart)"
    t = run.col("t_s")
    restarts = int(np.sum(np.diff(t) >= 5.0)) if len(t) else 0
    if restarts == 0:
        return Outcome(FAIL, "no restart after ≥ 5 s of idle", crit)
    n = len(run.episodes_of("probe_rtt"))
    return Outcome(verdict(n == 0), f"{restarts} restarts after ≥ 5 s idle; {n} PROBE_RTTs", crit)


def check_a19(run: Run, r: Rules) -> Outcome:
    """A.19: PROBE_RTT entered from STARTUP returns to STARTUP after ≥ 200 ms and ≥ 1 round."""
    crit = "a PROBE_RTT entered from STARTUP → startup after ≥ 200 ms and ≥ 1 round"
    eps = run.episodes()
    from_startup = [e for i, e in enumerate(eps) if e.phase == "probe_rtt" and i and eps[i - 1].phase == "startup"]
    done = [e for e in from_startup if e.next]
    if not done:
        return Outcome(FAIL, f"{len(from_startup)} PROBE_RTTs from STARTUP completed in the run", crit)
    t, rounds = run.col("t_s"), run.col("round_count")
    held = [t[e.end] - t[e.start] for e in done]
    held_rounds = [int(rounds[e.end] - rounds[e.start]) for e in done]
    nexts = sorted({e.next for e in done})
    ok = nexts == ["startup"] and min(held) >= PROBE_RTT_DURATION_S and min(held_rounds) >= 1
    return Outcome(
        verdict(ok),
        f"{len(done)} PROBE_RTTs from STARTUP, held ≥ {min(held) * 1e3:.0f} ms and ≥ {min(held_rounds)} "
        f"rounds → {', '.join(nexts)}",
        crit,
    )
