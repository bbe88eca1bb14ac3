"""BPF struct_ops ports of bbrlab's algorithms, for the emu backend on a stock kernel.

A stock kernel offers a few congestion controls (here reno, cubic, bbr); the simulator has more.
For those, ``src/<name>.bpf.c`` is a BPF struct_ops port by the simulator's name (``dctcp`` as
Linux tcp_dctcp.c, ``bbr3_linux`` as Google's BBRv3, ``bbr2`` as Google's BBRv2 v2alpha, ``bql``
as the simulator's BQL reconstruction), compiled on first use (:mod:`.build`)
and registered with the kernel for one run only, under a unique name, through a BPF link the
runner holds (:mod:`.loader`): the kernel unregisters it when the runner ends, even by SIGKILL.

The set of ported algorithms is exactly the set of sources in ``src/`` (:func:`ported`).
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["SRC_DIR", "ported", "source"]

#: The BPF sources (shipped in the wheel): one ``<algorithm>.bpf.c`` per port, shared ``*.h``.
SRC_DIR = Path(__file__).resolve().parent / "src"
_SUFFIX = ".bpf.c"


def ported() -> frozenset[str]:
    """The registry names that have a BPF port: every ``src/<name>.bpf.c``."""
    return frozenset(p.name[: -len(_SUFFIX)] for p in SRC_DIR.glob(f"*{_SUFFIX}"))


def source(name: str) -> Path:
    """The BPF source of algorithm ``name`` (one of :func:`ported`)."""
    return SRC_DIR / f"{name}{_SUFFIX}"
