"""A scenario's ``[checks]`` table: pass/fail bounds on a run's transperf metrics.

::

    [checks]
    tput = ">= 80"              # % of the bottleneck's rate
    rtt_med = ">= 40"           # 100 * minRTT / medRTT
    convergence_sec = "<= 4"    # seconds
    loss_avoid = 99             # a bare number: transperf's direction (>= for a score, <= for time)

The table belongs to the front end, like ``[sweep]``: it is taken out of the raw tables before the
model and the core see the scenario (the core never needs it, so a run's cache key, the core's
config, is the same with or without checks), kept on the Scenario (:attr:`ScenarioBase.checks`)
and written back into the run directory's scenario.toml. ``bbrlab run`` evaluates it against the
summary's ``transperf`` block (``results/transperf.py``) and exits 1 when a bound fails.

The keys are the seven transperf metrics; a check's value is ``"OP NUMBER"`` with OP one of
``>=``, ``>``, ``<=``, ``<`` (``convergence_sec`` also takes ``"<= 4s"``), or a bare number.
Anything else is refused at load time in one line naming the key and the accepted form.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import ScenarioError, did_you_mean

__all__ = [
    "CHECKS_TABLE",
    "METRICS",
    "Check",
    "CheckOutcome",
    "parse_checks",
    "split_checks",
    "evaluate",
    "bound",
    "checks_to_toml",
]

CHECKS_TABLE = "checks"

#: The metrics a check may bound, each with transperf's direction for a bare number: a score
#: (0-100, higher is better) passes at or above its target, convergence_sec at or below.
METRICS: dict[str, str] = {
    "tput": ">=",
    "rtt_med": ">=",
    "lock_on_bw": ">=",
    "loss_avoid": ">=",
    "fairness": ">=",
    "convergence_fairness": ">=",
    "convergence_sec": "<=",
}

_OPS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge,
    ">": operator.gt,
    "<=": operator.le,
    "<": operator.lt,
}

_EXPR = re.compile(r"^\s*(>=|<=|>|<)\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(s?)\s*$")

FORM = '"OP NUMBER" with OP one of >=, >, <=, < (e.g. ">= 80"), or a bare number'


@dataclass(frozen=True)
class Check:
    """One bound: ``metric OP value``."""

    metric: str
    op: str
    value: float

    @property
    def expression(self) -> str:
        return f"{self.op} {self.value:g}"

    def passes(self, measured: float | None) -> bool:
        """Whether ``measured`` meets the bound; a missing or NaN value never does."""
        if measured is None or not math.isfinite(measured):
            return False
        return _OPS[self.op](measured, self.value)


@dataclass(frozen=True)
class CheckOutcome:
    check: Check
    measured: float | None
    passed: bool
    #: Why it could not be measured, if it could not (e.g. "one flow: no fairness").
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "metric": self.check.metric,
            "check": self.check.expression,
            "measured": self.measured,
            "passed": self.passed,
            **({"note": self.note} if self.note else {}),
        }


def _parse_one(key: str, value: Any) -> Check:
    where = f"{CHECKS_TABLE}.{key}"
    if isinstance(value, bool):
        raise ScenarioError(where, f"{value!r} is not a check; write {FORM}")
    if isinstance(value, (int, float)):
        if not math.isfinite(value):
            raise ScenarioError(where, f"{value!r} is not a finite number; write {FORM}")
        return Check(key, METRICS[key], float(value))
    if not isinstance(value, str):
        raise ScenarioError(where, f"a {type(value).__name__} is not a check; write {FORM}")
    m = _EXPR.match(value)
    if m is None or (m.group(3) and key != "convergence_sec"):
        raise ScenarioError(where, f"{value!r} is not a check; write {FORM}")
    number = float(m.group(2))
    if not math.isfinite(number):
        raise ScenarioError(where, f"{value!r}: the bound is not a finite number; write {FORM}")
    return Check(key, m.group(1), number)


def parse_checks(table: Any) -> tuple[Check, ...]:
    """The ``[checks]`` table as checks, in the table's order, or one ScenarioError."""
    if table is None:
        return ()
    if not isinstance(table, dict):
        raise ScenarioError(CHECKS_TABLE, f'not a table; write [checks] with lines such as tput = ">= 80" ({FORM})')
    checks = []
    for key, value in table.items():
        if key not in METRICS:
            raise ScenarioError(f"{CHECKS_TABLE}.{key}", f"unknown metric '{key}'{did_you_mean(key, METRICS)}")
        checks.append(_parse_one(key, value))
    return tuple(checks)


def split_checks(raw: dict[str, Any]) -> tuple[dict[str, Any], tuple[Check, ...]]:
    """(the scenario's tables without ``[checks]``, its checks)."""
    if CHECKS_TABLE not in raw:
        return raw, ()
    rest = dict(raw)
    return rest, parse_checks(rest.pop(CHECKS_TABLE))


def checks_to_toml(checks: tuple[Check, ...]) -> dict[str, str]:
    """The checks as the ``[checks]`` table writes them (always with the operator)."""
    return {c.metric: c.expression for c in checks}


def bound(checks: tuple[Check, ...], metric: str) -> float | None:
    """The value the checks give ``metric`` (its first check's), or None: the transperf metrics
    take their targets from the checks where transperf's scores dict would."""
    return next((c.value for c in checks if c.metric == metric), None)


def evaluate(checks: tuple[Check, ...], metrics: dict[str, Any]) -> list[CheckOutcome]:
    """Each check against the summary's ``transperf`` block (``metrics``)."""
    notes = metrics.get("notes", {}) if isinstance(metrics.get("notes"), dict) else {}
    out = []
    for c in checks:
        value = metrics.get(c.metric)
        measured = float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
        out.append(CheckOutcome(c, measured, c.passes(measured), str(notes.get(c.metric, ""))))
    return out
