"""What a case's check returns: pass, fail (what was observed against the criterion) or not
applicable (why); and the tolerances and draft constants that checks of several groups compare to.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PASS", "FAIL", "NA", "Outcome", "na", "verdict", "mbps"]

PASS, FAIL, NA = "pass", "fail", "not applicable"

#: Gains are compared to this absolute tolerance (the Linux gains are 2^-8 steps; the draft's
#: 2^-16 steps).
GAIN_TOL = 0.005
#: PROBE_RTT: ProbeRTTDuration.
PROBE_RTT_DURATION_S = 0.2
#: A.1: max_bw at STARTUP's exit within this fraction of the payload capacity.
FULL_BW_TOL = 0.02
#: The draft's plateau: growth under 25 % in 3 rounds.
PLATEAU_GROWTH = 1.25
PLATEAU_ROUNDS = 3


@dataclass(frozen=True)
class Outcome:
    verdict: str
    observed: str
    criterion: str


def na(why: str) -> Outcome:
    return Outcome(NA, "", why)


def verdict(ok: bool) -> str:
    return PASS if ok else FAIL


def mbps(bps: float) -> str:
    return f"{bps / 1e6:.2f} Mbit/s"
