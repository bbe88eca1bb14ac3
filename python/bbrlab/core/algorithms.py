"""Congestion-control algorithms: the core's registry (``crates/cc/src/registry.rs``), the one
list of names, aliases, descriptions, sources, kernel names and phase names."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

__all__ = ["Algorithm", "registry", "lookup", "valid_names"]


@dataclass(frozen=True)
class Algorithm:
    name: str
    aliases: tuple[str, ...]
    summary: str
    source: str
    #: The name in the kernel's tcp_available_congestion_control (None: a stock kernel has none).
    kernel_name: str | None
    #: Works only with ECN (Linux TCP_CONG_NEEDS_ECN).
    needs_ecn: bool
    #: The phases its timeseries may show, indexed by the algorithm's phase code (the core's
    #: crates/cc/src/phases.rs; the emu backend reports the kernel's state with the same names).
    phases: tuple[str, ...]


@lru_cache(maxsize=1)
def registry() -> tuple[Algorithm, ...]:
    """Every algorithm the core implements, in `bbrlab cc` order."""
    from ..scenario.core import load_core

    return tuple(
        Algorithm(
            a["name"],
            tuple(a["aliases"]),
            a["summary"],
            a["source"],
            a["kernel_name"],
            a["needs_ecn"],
            tuple(a["phases"]),
        )
        for a in load_core().algorithms()
    )


def lookup(name: str) -> Algorithm | None:
    """The algorithm ``name`` names (canonical or alias, any case), or None."""
    low = name.strip().lower()
    return next((a for a in registry() if low == a.name or low in a.aliases), None)


def valid_names() -> list[str]:
    """Every name a scenario may use: canonical names, then aliases."""
    return [a.name for a in registry()] + [x for a in registry() for x in a.aliases]
