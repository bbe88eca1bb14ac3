"""A claim's value cell, as claims.csv holds it and a page shows it: items
``[label: ]value[ → to][ ± ci][ unit]`` joined by "; " (``cell``, ``parse_cell``), shown to
``SHOWN_DIGITS`` significant digits (``shown_cell``, ``shown_items``). Here rather than in
`bbrlab.reproduce.claims`, which writes the cells, so that the report pages read them without
importing the studies (reproduce imports report, not the other way)."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "Num",
    "num",
    "cell",
    "parse_cell",
    "SHOWN_DIGITS",
    "shown_cell",
    "shown_items",
    "shown_number",
    "shown_unit",
    "SETTING_SEP",
    "by_setting",
]


@dataclass(frozen=True)
class Num:
    """One item of a value cell: ``[label: ]value[ → to][ ± ci][ unit]``."""

    value: float
    unit: str = ""
    label: str = ""
    to: float | None = None  # a change from value to `to`
    ci: float | None = None  # 95 % confidence half-width

    def __str__(self) -> str:
        if any(c in self.label for c in ":;") or " " in self.unit:
            raise ValueError(f"label {self.label!r} / unit {self.unit!r} would not parse back")
        s = (f"{self.label}: " if self.label else "") + _number(self.value)
        if self.to is not None:
            s += f" → {_number(self.to)}"
        if self.ci is not None:
            s += f" ± {_number(self.ci)}"
        return s + (f" {self.unit}" if self.unit else "")


def _number(x: float) -> str:
    x = float(x)
    return "nan" if math.isnan(x) else f"{x:.6g}"


def num(value: float, unit: str = "", *, label: str = "", to: float | None = None, ci: float | None = None) -> Num:
    return Num(float(value), unit, label, None if to is None else float(to), None if ci is None else float(ci))


def cell(*items: Num | str | Iterable[Num]) -> str:
    """A value cell from items (`num`), iterables of them, or one phrase."""
    flat: list[Num | str] = []
    for it in items:
        flat.extend(it if not isinstance(it, (Num, str)) else [it])
    if len(flat) == 1 and isinstance(flat[0], str):
        return flat[0]
    if any(isinstance(it, str) for it in flat):
        raise TypeError("a value cell is one phrase or numbers, not both")
    return "; ".join(str(it) for it in flat)


_NUM = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|nan|[-+]?inf"
_ITEM = re.compile(
    rf"^(?:(?P<label>[^:;]+): )?(?P<value>{_NUM})(?: → (?P<to>{_NUM}))?(?: ± (?P<ci>{_NUM}))?"
    rf"(?: (?P<unit>\S+))?$"
)


def parse_cell(text: str) -> list[Num] | None:
    """The items of a value cell, or None when it is a phrase (or empty)."""
    if not text:
        return None
    out = []
    for part in text.split("; "):
        m = _ITEM.match(part)
        if not m:
            return None
        out.append(
            num(
                float(m["value"]),
                m["unit"] or "",
                label=m["label"] or "",
                to=None if m["to"] is None else float(m["to"]),
                ci=None if m["ci"] is None else float(m["ci"]),
            )
        )
    return out


#: Significant digits a claims table shows: the rules compare at ±5 % or coarser, and three digits
#: resolve 1 % at worst (100 vs 101; claims.csv keeps every digit, for machines).
SHOWN_DIGITS = 3


def shown_number(x: float) -> str:
    """A number as a reader sees it: ``SHOWN_DIGITS`` significant digits (whole above), "—"
    when missing, a true minus sign."""
    if math.isnan(x):
        return "—"
    if math.isinf(x):
        return ("−" if x < 0 else "") + "∞"
    text = f"{x:#.{SHOWN_DIGITS}g}" if abs(x) < 10**SHOWN_DIGITS else f"{x:.0f}"
    if "e" not in text:
        text = text.rstrip(".")
    return text.replace("-", "−")


def shown_cell(text: str) -> str:
    """A value cell as a reader sees it: each number to ``SHOWN_DIGITS`` significant digits
    (0.999997 → 1.00, −166.709 → −167), a missing one as "—"; a phrase as it is. A unit that
    every item shares is written once, at the end ("0 ms: −195; 100 ms: 11.7 Mbit/s")."""
    unit = shown_unit(text)
    return "; ".join(shown_items(text, unit=not unit)) + (f" {unit}" if unit else "")


def shown_unit(text: str) -> str:
    """The unit every item of a cell of several items shares, written once for them all (a
    missing number, "—", has none); "" when they differ, when there is one item, or none, or
    when the last item (after which `shown_cell` writes it) is missing."""
    items = parse_cell(text)
    if items is None or len(items) < 2 or _missing(items[-1]):  # "x: — %" would read as a value
        return ""
    units = {n.unit for n in items if not _missing(n)}
    return units.pop() if len(units) == 1 else ""


def _missing(n: Num) -> bool:
    return math.isnan(n.value) and n.to is None


def shown_items(text: str, *, unit: bool = True) -> list[str]:
    """`shown_cell`'s items, one string each (a page may put them on lines of their own); without
    their units when ``unit`` is False (the page writes `shown_unit` once)."""
    items = parse_cell(text)
    if items is None:
        return [text]
    parts = []
    for n in items:
        s = (f"{n.label}: " if n.label else "") + shown_number(n.value)
        if n.to is not None:
            s += f" → {shown_number(n.to)}"
        if n.ci is not None:
            s += f" ± {shown_number(n.ci)}"
        parts.append(s + (f" {n.unit}" if unit and n.unit and not _missing(n) else ""))
    return parts


#: A claim checked in several settings (a fabric, a variant) ends " — <setting>" (the studies'
#: convention): such a table becomes one row per claim with a column per setting.
SETTING_SEP = " — "


def by_setting(
    rows: list[dict[str, str]],
) -> tuple[list[str], list[tuple[str, dict[str, str], list[dict[str, str] | None]]]] | None:
    """The settings, and per claim (claim, its first row, its row per setting or None), when
    every claim reads "<claim> — <setting>", there are two settings or more, and a claim's source
    value and rule are the same in each; else None. Rows are claims.csv's (``claim``,
    ``paper_value``, ``rule``, …). The HTML page and REPORT.md pivot the same way."""
    settings: dict[str, None] = {}
    groups: dict[str, dict[str, dict[str, str]]] = {}
    for r in rows:
        claim, sep, setting = r["claim"].rpartition(SETTING_SEP)
        if not sep or not claim or setting in groups.get(claim, {}):
            return None
        settings.setdefault(setting)
        groups.setdefault(claim, {})[setting] = r
    same = all(len({(g["paper_value"], g["rule"]) for g in group.values()}) == 1 for group in groups.values())
    if len(settings) < 2 or not same:
        return None
    return list(settings), [
        (claim, next(iter(group.values())), [group.get(s) for s in settings]) for claim, group in groups.items()
    ]
