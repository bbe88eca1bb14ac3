"""A study's comparisons with its source, as data: the claim, the source's value, ours, the rule.

A study builds its `Claim`s from its result tables with a rule (a small function of the numbers
it reports); the report prints them as one table (`claims_table`) and `write_claims_csv` writes
the same objects to ``claims.csv`` beside ``REPORT.md``. The verdict is never written by hand: the
same code with other numbers gives another verdict (the tests feed contrary numbers). The prose
around the tables is built from the same numbers by `sentences`.

``claims.csv`` has one row per claim and the columns ``CSV_COLUMNS``:

- ``claim``: what the source claims (and where we test it);
- ``paper_value``, ``bbrlab_value``: the source's and our numbers, machine-readable (below);
- ``rule``: the test applied to our numbers, in words;
- ``verdict``: agrees / partly / disagrees / not tested (`Verdict`); at size tiny every claim
  reads "not checked at this size" (`verdicts_unchecked`).

A value cell is either a phrase (the source's own words where it gives no number: "yes",
"drastic increase"; empty when the claim was not tested) or items separated by ``"; "``, each
``[LABEL: ]X[ → Y][ ± H][ UNIT]``: an optional label (no ``:`` or ``;`` in it), a number, an
optional second number (a change from X to Y: n = 1 → 10, unpaced → paced), an optional 95 %
confidence half-width, and an optional unit (one word: ``Mbit/s``, ``ms``, ``KB``, ``%``, ``×``;
none for a pure ratio or index). Numbers are Python float literals (``941.5``, ``1.23e-05``,
``nan`` for a value the run could not give), never with thousands separators. `cell` and `num`
write them, `parse_cell` reads them back.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

from ..report.cells import (  # noqa: F401  # the studies build their cells from here
    SHOWN_DIGITS,
    Num,
    cell,
    num,
    parse_cell,
    shown_cell,
    shown_items,
)
from .report import md_table

__all__ = [
    "CSV_COLUMNS",
    "Claim",
    "Num",
    "Verdict",
    "above",
    "at_least",
    "below",
    "cell",
    "claims_table",
    "is_sign",
    "num",
    "parse_cell",
    "read_claims_csv",
    "untested",
    "verdict",
    "verdict_of_all",
    "verdicts_unchecked",
    "shown_verdict",
    "shown_cell",
    "shown_items",
    "within",
    "write_claims_csv",
]

CSV_COLUMNS = ("claim", "paper_value", "bbrlab_value", "rule", "verdict")


class Verdict(Enum):
    AGREES = "agrees"
    PARTLY = "partly"
    DISAGREES = "disagrees"
    UNTESTED = "not tested"  # the numbers the rule needs are missing (e.g. not in this size's grid)
    # The study ran at a size whose numbers say nothing about the algorithms (tiny: a few seconds
    # to exercise every step): the rule ran, but its outcome is not a finding either way.
    NOT_CHECKED = "not checked at this size"


#: Whether the study being written ran at a size whose verdicts mean nothing (`verdicts_unchecked`).
_UNCHECKED: ContextVar[bool] = ContextVar("bbrlab_verdicts_unchecked", default=False)


@contextmanager
def verdicts_unchecked(unchecked: bool = True) -> Iterator[None]:
    """While inside, every claim is shown (REPORT.md's tables, claims.csv) as
    `Verdict.NOT_CHECKED` whatever its rule gave: `run_studies` at size tiny."""
    token = _UNCHECKED.set(unchecked)
    try:
        yield
    finally:
        _UNCHECKED.reset(token)


def shown_verdict(v: Verdict) -> Verdict:
    """The verdict a report shows for a rule's ``v``: NOT_CHECKED inside `verdicts_unchecked`,
    except for a claim the run did not test at all (it stays "not tested": there is nothing of
    ours to show, at any size)."""
    if v == Verdict.UNTESTED:
        return v
    return Verdict.NOT_CHECKED if _UNCHECKED.get() else v


@dataclass(frozen=True)
class Claim:
    claim: str  # what the source claims (and where we test it, when we test it in several settings)
    source: str  # the source's value or wording, as the report prints it
    ours: str  # our numbers, as the report prints them
    rule: str  # the test applied to our numbers, in words
    verdict: Verdict
    paper_value: str = field(kw_only=True)  # the source's value as a machine-readable cell (`cell`)
    bbrlab_value: str = field(kw_only=True)  # ours, the same way

    def csv_row(self) -> dict[str, str]:
        return {
            "claim": self.claim,
            "paper_value": self.paper_value,
            "bbrlab_value": self.bbrlab_value,
            "rule": self.rule,
            "verdict": shown_verdict(self.verdict).value,
        }


def untested(claim: str, source: str, rule: str, why: str, *, paper_value: str) -> Claim:
    """A claim this run cannot test (e.g. its N or RTT is not in this size's grid): listed all the
    same, so every size reports the same claims."""
    return Claim(claim, source, why, rule, Verdict.UNTESTED, paper_value=paper_value, bbrlab_value="")


# ------------------------------------------------------------------ machine-readable values


def write_claims_csv(path: Path, claims: Sequence[Claim]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=CSV_COLUMNS)
        w.writeheader()
        w.writerows(c.csv_row() for c in claims)
    return path


def read_claims_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


# ------------------------------------------------------------------ rules


def _known(*xs: float | None) -> bool:
    return all(x is not None and not (isinstance(x, float) and math.isnan(x)) for x in xs)


def below(a: float, b: float) -> bool | None:
    """a < b; None when either is missing."""
    return a < b if _known(a, b) else None


def above(a: float, b: float) -> bool | None:
    """a > b; None when either is missing."""
    return a > b if _known(a, b) else None


def at_least(a: float, b: float) -> bool | None:
    """a ≥ b; None when either is missing."""
    return a >= b if _known(a, b) else None


def within(x: float, lo: float, hi: float) -> bool | None:
    """lo ≤ x ≤ hi; None when x is missing."""
    return lo <= x <= hi if _known(x) else None


def verdict(holds: bool | None) -> Verdict:
    """One test: agrees when it holds, disagrees when not, untested when it could not be decided."""
    return Verdict.UNTESTED if holds is None else (Verdict.AGREES if holds else Verdict.DISAGREES)


def is_sign(sign: int | None, want: int) -> bool | None:
    """The outcome of a significance test (`analysis.sign_of_difference`: +1, 0, −1, None) as a
    rule's result: whether it is ``want``; None when it could not be decided."""
    return None if sign is None else sign == want


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
    return md_table(
        ["claim", source_header, ours_header, "rule", "verdict"],
        [[c.claim, shown_cell(c.source), shown_cell(c.ours), c.rule, shown_verdict(c.verdict).value] for c in claims],
    )
