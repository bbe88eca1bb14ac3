"""The draft's example test cases (Appendix A, A.1–A.21), each a scenario and a check.

A check reads the run's per-ACK state trace (:class:`~.trace.Run`) and returns an
:class:`Outcome`: pass, fail (what was observed against the criterion) or not applicable (why).
A case the simulator could not set up would have no scenario and name the missing piece
(``Case.missing``); none is left. docs/conformance.md lists every case, its criterion and the
rules each algorithm is held to (`rules.py`).

The checks, by group: ``startup_drain.py`` (A.1–A.4, A.7), ``probe_bw.py`` (A.5, A.6, A.8, A.9,
A.20, A.21), ``probe_rtt.py`` (A.10, A.11, A.19), ``path_changes.py`` (A.12–A.17), ``undo.py``
(A.18); what several groups measure is in ``measures.py``, the outcome and the shared
tolerances in ``outcome.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .outcome import FAIL, NA, PASS, Outcome, na
from .path_changes import check_a12, check_a13, check_a14, check_a15, check_a16, check_a17
from .probe_bw import check_a5, check_a6, check_a8, check_a9, check_a20, check_a21
from .probe_rtt import check_a10, check_a11, check_a19
from .rules import RULES, Rules
from .startup_drain import check_a1, check_a2, check_a3, check_a4, check_a7
from .trace import Run
from .undo import check_a18

__all__ = ["CASES", "CASE_IDS", "Case", "Outcome", "PASS", "FAIL", "NA", "outcome"]


Check = Callable[[Run, Rules], Outcome]


@dataclass(frozen=True)
class Case:
    """One appendix case: the scenario it runs (None: not applicable to any algorithm) and its
    check."""

    id: str
    name: str
    scenario: str | None
    check: Check | None = None
    #: Why the case cannot run (``scenario`` None).
    missing: str = ""


CASES: tuple[Case, ...] = (
    Case("A.1", "Exit STARTUP on a bandwidth plateau", "bulk", check_a1),
    Case("A.2", "Exit STARTUP on loss while app-limited", "app_limited_loss", check_a2),
    Case("A.3", "Exit DRAIN on inflight", "bulk", check_a3),
    Case("A.4", "Exit DRAIN on time (3 rounds)", "drain_cut", check_a4),
    Case("A.5", "Exit PROBE_UP on a plateau", "bulk", check_a5),
    Case("A.6", "Exit PROBE_UP on loss while app-limited", "up_app_loss", check_a6),
    Case("A.7", "Stay in STARTUP while app-limited and lossless", "app_limited", check_a7),
    Case("A.8", "Exit PROBE_DOWN on inflight", "bulk", check_a8),
    Case("A.9", "Exit PROBE_DOWN on its maximum time", "down_cut", check_a9),
    Case("A.10", "PROBE_RTT and its exit", "bulk", check_a10),
    Case("A.11", "Skip PROBE_RTT after idle", "idle", check_a11),
    Case("A.12", "STARTUP bandwidth with ACK aggregation", "aggregation", check_a12),
    Case("A.13", "PROBE_BW with ACK aggregation", "aggregation", check_a13),
    Case("A.14", "Sub-packet BDP", "sub_packet", check_a14),
    Case("A.15", "10× bandwidth increase", "step_up", check_a15),
    Case("A.16", "10× bandwidth decrease", "step_down", check_a16),
    Case("A.17", "Token-bucket policer", "policer", check_a17),
    Case("A.18", "Spurious loss recovery (undo)", "up_rtt_spike", check_a18),
    Case("A.19", "PROBE_RTT during STARTUP", "slow_startup", check_a19),
    Case("A.20", "Loss in PROBE_UP with inflight_longterm set", "up_loss", check_a20),
    Case("A.21", "App-limited in PROBE_REFILL", "refill_app_slow", check_a21),
)

CASE_IDS = tuple(c.id for c in CASES)


def outcome(case: Case, alg: str, run: Run | None) -> Outcome:
    """Case ``case``'s verdict for ``alg`` on ``run`` (None when the case has no scenario)."""
    if case.scenario is None or case.check is None or run is None:
        return na(f"needs {case.missing}")
    if not len(run.phases):
        return Outcome(FAIL, "no ACKs traced", "")
    return case.check(run, RULES[alg])
