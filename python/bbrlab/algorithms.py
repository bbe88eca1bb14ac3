"""Congestion-control algorithms: the core's registry (``crates/cc/src/registry.rs``), the one
list of names, aliases, descriptions, sources and kernel names."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["Algorithm", "registry", "lookup", "valid_names", "KERNEL_PREFIX", "kernel_module", "KERNEL_FORM"]

#: ``kernel:NAME`` names a congestion control of the running kernel by its own name (any entry
#: of tcp_available_congestion_control, e.g. ``kernel:htcp``): only the emu backend runs it.
KERNEL_PREFIX = "kernel:"
#: How the accepted form reads in messages.
KERNEL_FORM = "kernel:NAME (a name in the kernel's tcp_available_congestion_control; --backend emu only)"
# A kernel name: TCP_CA_NAME_MAX is 16 bytes with the NUL; the kernel's names are [a-z0-9_].
_KERNEL_NAME = re.compile(r"[A-Za-z0-9_-]{1,15}")


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


@lru_cache(maxsize=1)
def registry() -> tuple[Algorithm, ...]:
    """Every algorithm the core implements, in `bbrlab cc` order."""
    from .scenario.core import load_core

    return tuple(
        Algorithm(a["name"], tuple(a["aliases"]), a["summary"], a["source"], a["kernel_name"], a["needs_ecn"])
        for a in load_core().algorithms()
    )


def lookup(name: str) -> Algorithm | None:
    """The algorithm ``name`` names (canonical or alias, any case), or None."""
    low = name.strip().lower()
    return next((a for a in registry() if low == a.name or low in a.aliases), None)


def valid_names() -> list[str]:
    """Every name a scenario may use: canonical names, then aliases."""
    return [a.name for a in registry()] + [x for a in registry() for x in a.aliases]


def kernel_module(cc: str) -> str | None:
    """NAME when ``cc`` is the form ``kernel:NAME`` (None otherwise); ValueError when the form is
    used with a NAME the kernel could not have."""
    if not cc.strip().lower().startswith(KERNEL_PREFIX):
        return None
    name = cc.strip()[len(KERNEL_PREFIX):]
    if not _KERNEL_NAME.fullmatch(name):
        raise ValueError(f'"{cc}": {KERNEL_FORM}, NAME 1-15 letters, digits or _')
    return name
