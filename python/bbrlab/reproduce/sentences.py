"""Sentences built from numbers: the one place a study's commentary gets its wording.

A report's prose states what its tables show ("falls from X to Y", "stays within 1 %", "BBRv1 is
ahead at n = 10 and behind at n = 20"). Each builder here takes the numbers (a series, two
algorithms' estimates, the sign of a difference at each point) and returns the sentence, so the
wording changes when the numbers do, and a study states a verdict in prose only through the same
function of the numbers that its claim's rule uses. Empty sets are never printed ("for n in
none"): a builder says "at no n" or leaves the part out.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .analysis import Estimate, sign_of_difference
from .claims import Verdict, join  # join: defined beside the claims' reasons, which use it

__all__ = ["at", "between", "change", "compare", "direction", "join", "reproduces"]

#: A change that is not significant is told as "stays within Z %" below this relative size, and as
#: "changes from X to Y, not significantly" above it (the reader should see a large noisy change).
STAYS = 0.05


def _value(x: Any) -> str:
    return f"{x:g}" if isinstance(x, float) else str(x)


def at(var: str, xs: Sequence[Any], among: Sequence[Any] | None = None) -> str:
    """Where something holds: "at n = 10", "at n = 10 and 20", "at every n (10, 20)", "at no n"."""
    xs = list(xs)
    if not xs:
        return f"at no {var}"
    if among is not None and len(among) > 1 and list(xs) == list(among):
        return f"at every {var} ({', '.join(_value(x) for x in xs)})"
    return f"at {var} = {join(_value(x) for x in xs)}"


def direction(a: Estimate | float, b: Estimate | float, *, tolerance: float = 0.0) -> int | None:
    """The sign of b − a: +1 rises, −1 falls, 0 no change. The change must exceed ``tolerance`` ×
    |a| and, with `Estimate`s, be significant too (95 %, Welch's t). None when it cannot be
    decided."""
    if isinstance(a, Estimate) and isinstance(b, Estimate):
        return sign_of_difference(b, a, min_rel=tolerance)
    a, b = float(a), float(b)  # type: ignore[arg-type]  # one Estimate, one float: float() raises, the caller's error
    if not (math.isfinite(a) and math.isfinite(b)):
        return None
    d = b - a
    return 0 if abs(d) <= tolerance * abs(a) else (1 if d > 0 else -1)


def change(
    subject: str,
    a: float,
    b: float,
    fmt: Callable[[float], str],
    *,
    sign: int | None,
    where_a: str = "",
    where_b: str = "",
    significance: str = "",
) -> str:
    """ "<subject> falls from X<where_a> to Y<where_b>", "... rises ...", or, when the change is not
    significant (sign 0), "<subject> stays within Z % (X → Y)" — or "changes from X to Y, not
    significantly<significance>" when the relative change is `STAYS` or more."""
    wa, wb = (f" {where_a}" if where_a else ""), (f" {where_b}" if where_b else "")
    if sign == -1:
        return f"{subject} falls from {fmt(a)}{wa} to {fmt(b)}{wb}"
    if sign == 1:
        return f"{subject} rises from {fmt(a)}{wa} to {fmt(b)}{wb}"
    if sign is None:
        return f"{subject} cannot be compared ({fmt(a)}{wa}, {fmt(b)}{wb})"
    rel = abs(b - a) / abs(a) if a else math.inf
    if rel < STAYS:
        pct = max(1, math.ceil(rel * 100 - 1e-9))
        return f"{subject} stays within {pct} % ({fmt(a)}{wa} → {fmt(b)}{wb})"
    return f"{subject} changes from {fmt(a)}{wa} to {fmt(b)}{wb}, not significantly{significance}"


def compare(
    a_name: str,
    b_name: str,
    signs: Mapping[Any, int | None],
    var: str = "n",
    *,
    more: str = "significantly ahead of",
    less: str = "significantly behind",
    same: str = "not significantly different from",
) -> str:
    """Where A is above, below, level with B, from the sign of A − B at each point (+1, −1, 0;
    None: undecided): "A is significantly ahead of B at n = 10 and significantly behind it at
    n = 20", "A is not significantly different from B at any n (10, 20)". Only the cases that
    occur are named; undecided points are named last."""
    xs = list(signs)
    groups = [(phrase, [x for x in xs if signs[x] == s]) for phrase, s in ((more, 1), (less, -1), (same, 0))]
    parts: list[str] = []
    for phrase, g in groups:
        if not g:
            continue
        # "not different from B at any n"; "level with B at every n"
        where = (
            f"at any {var} ({', '.join(_value(x) for x in g)})"
            if phrase == same and same.startswith("not ") and g == xs and len(xs) > 1
            else at(var, g, xs)
        )
        parts.append(f"{phrase} {b_name if not parts else 'it'} {where}")
    unknown = [x for x in xs if signs[x] is None]
    if not parts:
        return f"{a_name} and {b_name} cannot be compared {at(var, unknown) if unknown else f'at any {var}'}"
    return f"{a_name} is {join(parts)}" + (f" (undecided {at(var, unknown)})" if unknown else "")


def between(a: float, b: float, fmt: Callable[[float], str]) -> str:
    """A range as the report prints it: "9.0 ms to 18.3 ms", or "9.0 ms" when both ends print alike."""
    fa, fb = fmt(a), fmt(b)
    return fa if fa == fb else f"{fa} to {fb}"


def reproduces(v: Verdict) -> str:
    """The verb phrase for a claim's verdict: "reproduces", "reproduces only partly", "does not
    reproduce", "cannot test" — so a sentence about a claim says what its table row says."""
    return {
        Verdict.AGREES: "reproduces",
        Verdict.PARTLY: "reproduces only partly",
        Verdict.DISAGREES: "does not reproduce",
        Verdict.UNTESTED: "cannot test",
    }[v]
