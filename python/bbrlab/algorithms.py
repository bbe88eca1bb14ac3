"""Congestion-control algorithm names: what the core implements, plus the aliases users type.

The core is the authority (``_core.algorithms()``). When the core is not built yet, scenario
validation still works against the names the core contract documents, so ``bbrlab validate`` is
usable on a machine without the compiled simulator; ``bbrlab run`` needs the core anyway.
"""

from __future__ import annotations

from functools import lru_cache

__all__ = ["ALIASES", "available", "canonical", "valid_names", "from_core"]

# Linux calls BBRv1 "bbr"; scenarios may too. Stored as written, resolved to the core's name.
ALIASES: dict[str, str] = {"bbr": "bbr1"}

# Names documented in docs/core-api.md, used only when the core cannot be imported.
_CONTRACT_FALLBACK: tuple[tuple[str, str], ...] = (
    ("reno", "TCP Reno / NewReno (RFC 5681, RFC 6582)"),
    ("cubic", "CUBIC (RFC 9438), the Linux default"),
    ("bbr1", "BBR v1 (Linux tcp_bbr.c, draft-cardwell-iccrg-bbr-congestion-control-00)"),
)


@lru_cache(maxsize=1)
def _listing() -> tuple[tuple[tuple[str, str], ...], bool]:
    try:
        from bbrlab import _core  # type: ignore[attr-defined]
    except ImportError:
        return _CONTRACT_FALLBACK, False
    return tuple((str(n), str(d)) for n, d in _core.algorithms()), True


def available() -> list[tuple[str, str]]:
    """(name, one-line description) for every algorithm the core implements."""
    return list(_listing()[0])


def from_core() -> bool:
    """True when the list comes from the compiled core (not the documented fallback)."""
    return _listing()[1]


def valid_names() -> list[str]:
    """Every name a scenario may use: the core's names and the aliases whose target exists."""
    names = [n for n, _ in available()]
    return names + [a for a, target in ALIASES.items() if target in names and a not in names]


def canonical(name: str) -> str | None:
    """The core's name for ``name`` (case-insensitive, aliases resolved), or None if unknown."""
    names = {n for n, _ in available()}
    low = name.strip().lower()
    if low in names:
        return low
    target = ALIASES.get(low)
    if target is not None and target in names:
        return target
    return None
