"""The PROBE_RTT cases: A.10 (PROBE_RTT every ProbeRTTInterval and its exit), A.11 (no PROBE_RTT on a
restart after idle), A.19 (PROBE_RTT entered from STARTUP).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .outcome import FAIL, PROBE_RTT_DURATION_S, Outcome, verdict
from .rules import Rules
from .trace import Run


def _probe_rtt_cwnd(run: Run, r: Rules, i: int) -> float:
    if r.probe_rtt_cwnd_gain is None:
        return 4.0
    return max(r.probe_rtt_cwnd_gain * run.bdp_at(i), 4.0)


@dataclass(frozen=True)
class ProbeRttEntries:
    """A run's completed PROBE_RTTs as A.10 judges them on either backend (the simulator's per-ACK
    trace, the kernel's 10-ms samples): the timeline's times and cwnd, each PROBE_RTT's rows
    [start, end) on it, and the phases they went to (sorted)."""

    t_s: np.ndarray
    cwnd_pkts: np.ndarray
    spans: list[tuple[int, int]]
    nexts: list[str]

    @property
    def gaps_s(self) -> np.ndarray:
        return np.diff([self.t_s[a] for a, _ in self.spans])

    @property
    def held_s(self) -> list[float]:
        return [self.t_s[b] - self.t_s[a] for a, b in self.spans]

    @property
    def cwnd_floors(self) -> list[int]:
        return [int(self.cwnd_pkts[a:b].min()) for a, b in self.spans]

    def too_few(self, crit: str) -> Outcome | None:
        """Fail when fewer than two completed (no interval to judge)."""
        if len(self.spans) >= 2:
            return None
        return Outcome(FAIL, f"{len(self.spans)} completed PROBE_RTTs in {self.t_s[-1]:.0f} s", crit)

    def meet(self, r: Rules, cwnd_targets: list[float], tol_s: float = 0.0) -> bool:
        """A.10's criterion under ``r``: entries ProbeRTTInterval to 0.5 s more apart, each held
        ≥ ProbeRTTDuration with its lowest cwnd within 1 of its target, then PROBE_BW; times within
        ``tol_s`` (a phase change is seen up to a sample late on the kernel)."""
        interval, gaps = r.probe_rtt_interval_s, self.gaps_s
        return (
            bool(np.all((gaps >= interval - tol_s) & (gaps <= interval + 0.5 + tol_s)))
            and min(self.held_s) >= PROBE_RTT_DURATION_S - tol_s
            and all(abs(f - g) <= 1 for f, g in zip(self.cwnd_floors, cwnd_targets))
            and all(n in r.probe_bw_phases for n in self.nexts)
        )

    def observed(self, held_rounds: str, target: str) -> str:
        """How many, how far apart, how long held (and ``held_rounds``: the rounds where the
        trace counts them), their lowest cwnd against ``target``, and where they went."""
        gaps, held, floors = self.gaps_s, self.held_s, self.cwnd_floors
        return (
            f"{len(self.spans)} entries {np.min(gaps):.2f}–{np.max(gaps):.2f} s apart; held "
            f"{min(held) * 1e3:.0f}–{max(held) * 1e3:.0f} ms{held_rounds}; cwnd {min(floors)}–{max(floors)} "
            f"(target {target}); → {', '.join(self.nexts)}"
        )


def check_a10(run: Run, r: Rules) -> Outcome:
    """A.10: PROBE_RTT every ProbeRTTInterval of steady PROBE_BW, at cwnd_gain 0.5 (floor 4),
    held ≥ 200 ms and ≥ 1 round, back to PROBE_BW."""
    interval = r.probe_rtt_interval_s
    crit = (
        f"entries every {interval:.0f}–{interval + 0.5:.1f} s ({r.source}); cwnd "
        f"{'max(0.5·BDP, 4)' if r.probe_rtt_cwnd_gain else '4'}; ≥ 200 ms and ≥ 1 round; → PROBE_BW"
    )
    eps = [e for e in run.episodes_of("probe_rtt") if e.next]
    entries = ProbeRttEntries(
        run.col("t_s"), run.col("cwnd_pkts"), [(e.start, e.end) for e in eps], sorted({e.next for e in eps})
    )
    if (few := entries.too_few(crit)) is not None:
        return few
    rounds = run.col("round_count")
    held_rounds = [int(rounds[e.end] - rounds[e.start]) for e in eps]
    targets = [_probe_rtt_cwnd(run, r, e.start) for e in eps]
    ok = entries.meet(r, [math.floor(g) for g in targets]) and min(held_rounds) >= 1
    return Outcome(verdict(ok), entries.observed(f", ≥ {min(held_rounds)} rounds", f"{min(targets):.1f}"), crit)


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
