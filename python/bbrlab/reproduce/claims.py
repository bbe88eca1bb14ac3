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
  reads "not checked at this size" (`verdicts_unchecked`);
- ``reason``: why, in words, from the same numbers and the same rule that gave the verdict: where
  the rule holds and where it does not, with the deciding numbers ("holds for 100, 500 and
  1000 ms; fails for 0 ms (150 µs): BQL's goodput is 81.8 % of BBR's (rule: ≥ 98 %)"); for a
  claim not tested, the numbers that are missing; at size tiny, the same sentence after a note
  that tiny's runs test nothing.

Why a verdict is what it is
---------------------------
A rule is a list of `Check`s, one per point it tests (an RTT, an n, a fabric) or per condition: a
check holds or not (None: undecided, a number is missing) and says, in words, the number it
tested against its limit (`check`, `check_within`, `check_sign`). `verdict` (one check) and
`verdict_of_all` (several) turn the checks into an `Outcome`: the verdict and its reason, worded
by `reason` from the checks alone, so no reason is written by hand and none can contradict the
numbers.

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
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

from ..report.cells import (  # noqa: F401  # the studies build their cells from here
    SHOWN_DIGITS,
    Num,
    by_setting,
    cell,
    num,
    parse_cell,
    shown_cell,
    shown_items,
    shown_number,
)
from .report import md_table

__all__ = [
    "CSV_COLUMNS",
    "Check",
    "all_of",
    "Claim",
    "Num",
    "Outcome",
    "TINY_REASON",
    "Verdict",
    "above",
    "at_least",
    "below",
    "cell",
    "check",
    "check_sign",
    "check_within",
    "pct",
    "reason",
    "shown_reason",
    "times",
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
    "shown_number",
    "within",
    "write_claims_csv",
]

CSV_COLUMNS = ("claim", "paper_value", "bbrlab_value", "rule", "verdict", "reason")


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


#: What a reason says before the rule's own reason when the size's numbers are not a finding.
TINY_REASON = "size tiny's runs (a few seconds) test nothing; its numbers: "


def shown_reason(o: Outcome) -> str:
    """The reason a report shows for ``o``: inside `verdicts_unchecked` (size tiny) the rule's
    reason follows a note that these numbers test nothing (the verdict shows "not checked"); a
    claim not tested says what is missing, at any size."""
    if o.verdict == Verdict.UNTESTED or not _UNCHECKED.get():
        return o.reason
    return TINY_REASON + o.reason


@dataclass(frozen=True)
class Claim:
    claim: str  # what the source claims (and where we test it, when we test it in several settings)
    source: str  # the source's value or wording, as the report prints it
    ours: str  # our numbers, as the report prints them
    rule: str  # the test applied to our numbers, in words
    outcome: Outcome  # the rule's verdict and why (`verdict`, `verdict_of_all`)
    paper_value: str = field(kw_only=True)  # the source's value as a machine-readable cell (`cell`)
    bbrlab_value: str = field(kw_only=True)  # ours, the same way

    @property
    def verdict(self) -> Verdict:
        return self.outcome.verdict

    @property
    def reason(self) -> str:
        return self.outcome.reason

    def csv_row(self) -> dict[str, str]:
        return {
            "claim": self.claim,
            "paper_value": self.paper_value,
            "bbrlab_value": self.bbrlab_value,
            "rule": self.rule,
            "verdict": shown_verdict(self.verdict).value,
            "reason": shown_reason(self.outcome),
        }


def untested(claim: str, source: str, rule: str, why: str, *, paper_value: str) -> Claim:
    """A claim this run cannot test (e.g. its N or RTT is not in this size's grid): listed all the
    same, so every size reports the same claims. ``why`` names what is missing and is the reason
    (the study computes it from its grid: "no n ≥ 10 in this size's grid (1, 4)")."""
    return Claim(claim, source, "—", rule, Outcome(Verdict.UNTESTED, why), paper_value=paper_value, bbrlab_value="")


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


def is_sign(sign: int | None, want: int) -> bool | None:
    """The outcome of a significance test (`analysis.sign_of_difference`: +1, 0, −1, None) as a
    rule's result: whether it is ``want``; None when it could not be decided."""
    return None if sign is None else sign == want


# ------------------------------------------------------------------ checks: a rule's tests, with their numbers


def pct(x: float) -> str:
    """A share as a reason prints it: 0.8183 → "81.8 %" (`SHOWN_DIGITS` significant digits)."""
    return f"{shown_number(100 * x)} %"


def times(x: float) -> str:
    """A ratio as a reason prints it: 2.6612 → "2.66×"."""
    return f"{shown_number(x)}×"


def _unit(unit: str) -> Callable[[float], str]:
    return lambda x: f"{shown_number(x)} {unit}".rstrip()


@dataclass(frozen=True)
class Check:
    """One test a rule makes: whether it holds (None: undecided, a number is missing), the number
    tested against its limit in words (``said``), and the point it is made at (``where``: "0 ms",
    "n = 10", "lossy"; "" when it is a condition of its own, not one point of several). ``margin``:
    how far inside its limit the number is, relative (negative: outside), so that a reason can
    name the point nearest to failing; None when the test has no such measure (a sign)."""

    holds: bool | None
    said: str
    where: str = ""
    margin: float | None = None

    def __post_init__(self) -> None:
        # A comparison of numpy numbers gives numpy's bool, which is neither True nor False by `is`.
        if self.holds is not None:
            object.__setattr__(self, "holds", bool(self.holds))


@dataclass(frozen=True)
class Outcome:
    """A claim's verdict and why, both from the same checks."""

    verdict: Verdict
    reason: str


_OPS: dict[str, Callable[[float, float], bool | None]] = {
    "<": below,
    ">": above,
    "≥": at_least,
    "≤": lambda a, b: at_least(b, a),
}


def check(
    value: float,
    op: str,
    limit: float,
    said: str,
    fmt: Callable[[float], str] | str = "",
    *,
    where: str = "",
    rule: str | None = None,
) -> Check:
    """``value op limit`` (op: "<", ">", "≥", "≤"), told by ``said``: a sentence with ``{}`` where
    the value goes ("BQL's goodput is {} of BBR's"), and ``{limit}`` where the limit goes when the
    limit is a number of ours too ("BBR's spread {} vs CUBIC's {limit}"); without ``{limit}`` the
    rule's limit is added as "(rule: ≥ 98 %)" (``rule`` words it otherwise). ``fmt`` prints the
    numbers (`pct`, `times`, a formatter, or a unit: "ms"); a missing number prints "—" and
    leaves the check undecided."""
    show = _unit(fmt) if isinstance(fmt, str) else fmt
    holds = _OPS[op](value, limit)
    text = said.format(_shown(value, show), limit=_shown(limit, show))
    if rule is not None:
        text += f" (rule: {rule})"
    elif "{limit}" not in said:
        text += f" (rule: {op} {_rounded(_shown(limit, show))})"
    margin = None
    if holds is not None and _known(limit):
        scale = abs(limit) or abs(value) or 1.0
        margin = (value - limit) / scale * (1 if op in (">", "≥") else -1)
    return Check(holds, text, where, margin)


def check_within(
    value: float, lo: float, hi: float, said: str, fmt: Callable[[float], str] | str = "", *, where: str = ""
) -> Check:
    """lo ≤ value ≤ hi, told as `check` tells it; the rule added as "(rule: lo to hi)"."""
    show = _unit(fmt) if isinstance(fmt, str) else fmt
    holds = within(value, lo, hi)
    text = said.format(_shown(value, show)) + f" (rule: {_rounded(_shown(lo, show))} to {_rounded(_shown(hi, show))})"
    margin = None
    if holds is not None:
        margin = min((value - lo) / (abs(lo) or 1.0), (hi - value) / (abs(hi) or 1.0))
    return Check(holds, text, where, margin)


def check_sign(sign: int | None, want: int, said: str, *, where: str = "") -> Check:
    """A significance test's outcome (`is_sign`), told by ``said`` (the caller words the
    difference and its interval, e.g. with `sentences.compare`)."""
    return Check(is_sign(sign, want), said, where)


def all_of(*checks: Check, where: str = "") -> Check:
    """Several conditions that must all hold at one point (a smaller queue and no lower rate),
    as one check: it holds when every one does, fails when one fails (and tells the ones that
    fail), and is undecided otherwise."""
    held = [c.holds for c in checks]
    holds = False if False in held else (None if None in held else True)
    told = [c for c in checks if c.holds is False] if holds is False else list(checks)
    margins = [c.margin for c in told if c.margin is not None]
    return Check(holds, " and ".join(c.said for c in told), where, min(margins) if margins else None)


def _shown(x: float, show: Callable[[float], str]) -> str:
    return show(x) if _known(x) and not (isinstance(x, float) and math.isinf(x)) else shown_number(float(x))


def _rounded(text: str) -> str:
    """A rule's limit without the trailing zeros a measured number keeps: "98.0 %" → "98 %"."""
    text = re.sub(r"(\d)\.0+(?!\d)", r"\1", text)
    return re.sub(r"(\.\d*?[1-9])0+(?!\d)", r"\1", text)


def verdict(c: Check) -> Outcome:
    """One test: agrees when it holds, disagrees when not, untested when it could not be decided."""
    return verdict_of_all([c])


def verdict_of_all(checks: Iterable[Check]) -> Outcome:
    """A test made at several points (every N, every fabric): agrees when it holds at every decided
    point, disagrees at none, partly in between; untested when no point could be decided. The
    reason (`reason`) says which points hold and which do not, with their numbers."""
    cs = list(checks)
    decided = [c.holds for c in cs if c.holds is not None]
    if not decided:
        v = Verdict.UNTESTED
    elif all(decided):
        v = Verdict.AGREES
    else:
        v = Verdict.DISAGREES if not any(decided) else Verdict.PARTLY
    return Outcome(v, reason(cs))


#: Points a reason tells one by one; beyond it, it names them and tells the deciding one.
REASON_POINTS = 3


def reason(checks: Sequence[Check]) -> str:
    """Why a rule's checks give their verdict: "holds for 100, 500 and 1000 ms — nearest its limit,
    100 ms: …; fails for 0 ms (150 µs): BQL's goodput is 81.8 % of BBR's (rule: ≥ 98 %)". Points
    that hold are named, with the one nearest its limit told (each told when there is no margin
    to pick it by); points that fail are told (up to `REASON_POINTS`, else named, with the
    furthest told); undecided points are told the same way (their number shows as "—", or
    their own words say why); conditions on one number with
    graded limits are told once (`_graded`)."""
    if not checks:
        return "no test could be made"
    if len(checks) == 1 and not checks[0].where:
        c = checks[0]
        return c.said + ("" if c.holds is not None else " (undecided)")

    def told(c: Check) -> str:
        return f"{c.where}: {c.said}" if c.where else c.said

    def group(cs: list[Check], verb: str, pick_name: str) -> str:
        named = [c for c in cs if c.where]
        text = [told(c) for c in cs if not c.where]
        marked = [c for c in named if c.margin is not None]
        # Points that hold are told one by one only when they have no margin to pick the deciding one.
        if len(named) <= (1 if verb == "holds" and marked else REASON_POINTS):
            points = "; for ".join(told(c) for c in named)
            return "; ".join([f"{verb} for {points}", *text] if named else [f"{verb}: {text[0]}", *text[1:]])
        head = f"{verb} for {_places([c.where for c in named])}"
        if marked:
            head += f" — {pick_name}, {told(min(marked, key=lambda c: c.margin or 0.0))}"
        else:
            head += f" — e.g. {told(named[0])}"
        return "; ".join([head, *text])

    checks, graded = _graded(checks)
    ok = [c for c in checks if c.holds]
    no = [c for c in checks if c.holds is False]
    unknown = [c for c in checks if c.holds is None]
    parts = graded
    if ok:
        parts.append(group(ok, "holds", "nearest its limit"))
    if no:
        parts.append(group(no, "fails", "furthest"))
    if unknown:
        parts.append(group(unknown, "undecided", ""))
    return "; ".join(parts)


def _graded(checks: Sequence[Check]) -> tuple[list[Check], list[str]]:
    """A graded rule tests one number against several limits (Jain ≥ 0.7: partly, ≥ 0.9: agrees):
    conditions (no ``where``) that say the same number are told once, each limit with its outcome
    ("per-second Jain 0.85: ≥ 0.7 holds, ≥ 0.9 fails"). Returns the other checks and those texts."""
    stems: dict[str, list[Check]] = {}
    for c in checks:
        stem, sep, _ = c.said.partition(" (rule: ")
        if not c.where and sep and c.said.endswith(")"):
            stems.setdefault(stem, []).append(c)
    graded = {stem: cs for stem, cs in stems.items() if len(cs) > 1}
    told = [
        f"{stem}: " + ", ".join(f"{c.said[len(stem) + len(' (rule: ') : -1]} {_OUTCOME[c.holds]}" for c in cs)
        for stem, cs in graded.items()
    ]
    rest = [c for c in checks if not any(c in cs for cs in graded.values())]
    return rest, told


def join(items: Iterable[str], last: str = "and") -> str:
    """ "a", "a and b", "a, b and c"; "" for none."""
    xs = [str(x) for x in items]
    if len(xs) <= 1:
        return "".join(xs)
    return f"{', '.join(xs[:-1])} {last} {xs[-1]}"


_OUTCOME = {True: "holds", False: "fails", None: "undecided"}


def _places(wheres: Sequence[str]) -> str:
    """Points named once: "100, 500 and 1000 ms" for ["100 ms", "500 ms", "1000 ms"], "n = 10
    and 20" for ["n = 10", "n = 20"], else joined as they are."""
    ws = list(wheres)
    if len(ws) > 1:
        unit = ws[0].rsplit(" ", 1)[-1]
        if " " in ws[0] and all(w.endswith(" " + unit) and " " not in w[: -len(unit) - 1] for w in ws):
            return f"{join(w[: -len(unit) - 1] for w in ws)} {unit}"
        var = ws[0].split(" = ", 1)[0] + " = "
        if " = " in ws[0] and all(w.startswith(var) for w in ws):
            return var + join(w[len(var) :] for w in ws)
    return join(ws)


def _md_setting_cell(g: dict[str, str] | None) -> str:
    """A pivoted REPORT.md cell: our value, the verdict in bold, then the reason."""
    if g is None:
        return ""
    return f"{g['bbrlab_value']}: **{g['verdict']}**" + (f" — {g['reason']}" if g["reason"] else "")


def claims_table(claims: Sequence[Claim], *, source_header: str = "source", ours_header: str = "bbrlab") -> str:
    """REPORT.md's claims table. A claim checked in several settings ("<claim> — <fabric>", the
    same source value and rule in each) is one row with a column per setting, as on the HTML
    page (`by_setting`): each cell bbrlab's value, its verdict and the reason."""
    rows = [
        {
            "claim": c.claim,
            "paper_value": shown_cell(c.source),
            "bbrlab_value": shown_cell(c.ours),
            "rule": c.rule,
            "verdict": shown_verdict(c.verdict).value,
            "reason": shown_reason(c.outcome),
        }
        for c in claims
    ]
    pivot = by_setting(rows)
    if pivot is not None:
        settings, groups = pivot
        body = [
            [f"{claim} (rule: {first['rule']})", first["paper_value"], *(_md_setting_cell(g) for g in per_setting)]
            for claim, first, per_setting in groups
        ]
        return md_table(["claim", source_header, *(f"{ours_header}: {s}" for s in settings)], body)
    return md_table(
        ["claim", source_header, ours_header, "rule", "verdict", "why"],
        [[r["claim"], r["paper_value"], r["bbrlab_value"], r["rule"], r["verdict"], r["reason"]] for r in rows],
    )
