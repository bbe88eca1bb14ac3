"""How the link emulator process is started (and nothing else).

The emulator is compiled into ``bbrlab._core`` (``crates/emu``, linked into the extension), so an
installed wheel has it: no Rust toolchain, no build step, no cache directory, no network at run
time. It runs as a child process, ``sys.executable -m bbrlab.emu.linkemu --config JSON``, rather
than a thread of the runner: it takes real-time priority, dies with its parent
(PR_SET_PDEATHSIG), turns SIGTERM/SIGINT into a clean stop, and holds the only descriptors of
the non-persistent TUN devices, which therefore vanish when it exits; and it keeps the GIL and
the runner's own threads out of its timing.

The child runs in the directory that holds this very ``bbrlab`` package, which ``-m`` puts first
on the child's ``sys.path``: it imports the same package as its parent (source tree, editable
install or wheel) whatever the caller's working directory or ``sys.path`` tweaks.

``BBRLAB_LINKEMU=/path/to/bbrlab-linkemu`` runs that binary instead (the same code as a
standalone program, ``cargo build --release -p bbrlab-emu``; handy when working on the emulator
without rebuilding the extension).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

from ..errors import SimulationError

__all__ = ["Launch", "emulator_launch"]

PACKAGE_PARENT = Path(__file__).resolve().parents[2]  # the directory holding this bbrlab package


@dataclass(frozen=True)
class Launch:
    """The emulator's command line (``--config`` is appended by the caller) and its directory."""

    argv: list[str]
    cwd: str | None
    description: str  # recorded in summary.json (run.emu.linkemu)


def emulator_launch() -> Launch:
    """How to start the emulator here; one-line SimulationError if it cannot be."""
    env = os.environ.get("BBRLAB_LINKEMU")
    if env:
        if not (os.path.isfile(env) and os.access(env, os.X_OK)):
            raise SimulationError(
                f"BBRLAB_LINKEMU={env}: not an executable file (unset it to use the built-in emulator)"
            )
        return Launch(argv=[env], cwd=None, description=env)
    try:
        from .. import _core
    except ImportError as e:
        raise SimulationError(f"bbrlab's compiled core is missing ({e}); reinstall bbrlab: pip install .") from None
    if not hasattr(_core, "linkemu_main"):
        raise SimulationError(
            "this build of bbrlab._core predates the built-in link emulator; rebuild it: pip install ."
        )
    if not sys.executable:
        raise SimulationError(
            "cannot start the link emulator: this Python does not know its executable; set BBRLAB_LINKEMU"
        )
    return Launch(
        argv=[sys.executable, "-m", "bbrlab.emu.linkemu"],
        cwd=str(PACKAGE_PARENT),
        description=f"{sys.executable} -m bbrlab.emu.linkemu (built into bbrlab._core)",
    )
