"""A study's comparisons with its source, as data: the claim, the source's value, ours, the rule.

A study builds its `Claim`s from its result tables with a rule (a small function of the numbers
it reports) and the report prints them as one table. The verdict is never written by hand: the
same code with other numbers gives another verdict (the tests feed contrary numbers).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum

from .report import md_table

__all__ = ["Claim", "Verdict", "above", "below", "claims_table", "verdict", "verdict_of_all"]


class Verdict(Enum):
    AGREES = "agrees"
    PARTLY = "partly"
    DISAGREES = "disagrees"
    UNTESTED = "not tested"  # the numbers the rule needs are missing (e.g. not in this size's grid)


@dataclass(frozen=True)
class Claim:
    claim: str  # what the source claims (and where we test it, when we test it in several settings)
    source: str  # the source's value or wording
    ours: str  # our numbers, as the report prints them
    rule: str  # the test applied to our numbers, in words
    verdict: Verdict


def _known(*xs: float) -> bool:
    return all(x is not None and not (isinstance(x, float) and math.isnan(x)) for x in xs)


def below(a: float, b: float) -> bool | None:
    """a < b; None when either is missing."""
    return a < b if _known(a, b) else None


def above(a: float, b: float) -> bool | None:
    """a > b; None when either is missing."""
    return a > b if _known(a, b) else None


def verdict(holds: bool | None) -> Verdict:
    """One test: agrees when it holds, disagrees when not, untested when it could not be decided."""
    return Verdict.UNTESTED if holds is None else (Verdict.AGREES if holds else Verdict.DISAGREES)


def verdict_of_all(results: Iterable[bool | None]) -> Verdict:
    """A test made at several points (every N, every fabric): agrees when it holds at every decided
    point, disagrees at none, partly in between; untested when no point could be decided."""
    decided = [r for r in results if r is not None]
    if not decided:
        return Verdict.UNTESTED
    if all(decided):
        return Verdict.AGREES
    return Verdict.DISAGREES if not any(decided) else Verdict.PARTLY


def claims_table(claims: Sequence[Claim], *, source_header: str = "source", ours_header: str = "bbrlab") -> str:
    return md_table(["claim", source_header, ours_header, "rule", "verdict"],
                    [[c.claim, c.source, c.ours, c.rule, c.verdict.value] for c in claims])
