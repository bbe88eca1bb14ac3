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

import json
import os
import select
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import SimulationError

__all__ = ["ECN_MODES", "Launch", "TUN_TXQUEUELEN", "ecn_mode", "emulator_launch", "start_emulator", "wait_ready"]

PACKAGE_PARENT = Path(__file__).resolve().parents[2]  # the directory holding this bbrlab package


@dataclass(frozen=True)
class Launch:
    """A helper program's command line (``--config`` is appended by the caller) and its directory:
    the emulator, the UDP transport's halves, the traffic sources."""

    argv: list[str]
    cwd: str | None
    description: str  # recorded in summary.json (run.emu.linkemu)

    def start_in_netns(self, spawn: Any, ns: str, scratch: Path, name: str, cfg: dict[str, Any]) -> tuple[Any, Any]:
        """Start the program in namespace ``ns`` through ``spawn`` (the testbed's, which tracks the
        process for clean-up) with ``cfg`` written to ``scratch/NAME.json``; its stdout is piped
        (status lines), its stderr goes to ``scratch/NAME.stderr``, read when it exits. Returns the
        process and that stderr file."""
        path = scratch / f"{name}.json"
        path.write_text(json.dumps(cfg))
        err = open(scratch / f"{name}.stderr", "w+b")  # noqa: SIM115  # read at exit
        p = spawn(
            ["ip", "netns", "exec", ns, *self.argv, "--config", f"@{path}"],
            cwd=self.cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=err,
        )
        return p, err


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


def start_emulator(tb: Any, launch: Launch, emu_cfg: dict[str, Any], tmp: Path) -> tuple[Any, dict[str, Any], Any]:
    """Start the link emulator of ``launch`` with ``emu_cfg`` (through a file: a trace's text can
    exceed the kernel's limit on one argument, 128 KiB) under the testbed ``tb``, and wait for
    its ready line. Returns (process, ready line, emu_error): ``emu_error(what)`` is a
    SimulationError with the tail of the emulator's stderr, for any failure later in the run."""
    stderr_f = open(tmp / "emu.stderr", "w+b")  # noqa: SIM115  # read by emu_error() all run
    cfg_path = tmp / "emu.json"
    cfg_path.write_text(json.dumps(emu_cfg))
    emu = tb.spawn(
        [*launch.argv, "--config", f"@{cfg_path}"],
        cwd=launch.cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=stderr_f,
    )

    def emu_error(what: str) -> SimulationError:
        tail = stderr_tail(stderr_f)
        return SimulationError(f"{what}{': ' + tail if tail else ''}")

    try:
        ready = wait_ready(emu, 10.0)
    except SimulationError:
        raise emu_error("the link emulator did not start") from None
    return emu, ready, emu_error


#: The end of a helper program's stderr an error message quotes, characters.
STDERR_TAIL_CHARS = 300


def stderr_tail(err: Any) -> str:
    """The last words of a helper program's stderr file (written so far), whitespace folded."""
    err.flush()
    err.seek(0)
    return " ".join(err.read().decode(errors="replace").split())[-STDERR_TAIL_CHARS:]


def wait_ready(proc: Any, timeout: float) -> dict[str, Any]:
    end = time.monotonic() + timeout
    buf = b""
    fd = proc.stdout.fileno()
    while time.monotonic() < end:
        r, _, _ = select.select([fd], [], [], 0.1)
        if r:
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            buf += chunk
            if b"\n" in buf:
                return json.loads(buf.split(b"\n", 1)[0])
        if proc.poll() is not None:
            break
    raise SimulationError("the link emulator did not start")


# Shared by the dumbbell's and the graph's network set-up (network.py, graph.py).
# The TUN's own ring (txqueuelen packets) absorbs bursts the emulator cannot read at once; at the
# default 500 a CPU-starved emulator let the TUN drop packets (seen at 500 Mbit/s under load).
TUN_TXQUEUELEN = 10000
# A flow's ECN codepoint (the core's flow field ``ecn``; pathmodel's EcnMode).
ECN_MODES = ("off", "ect0", "ect1")


def ecn_mode(value: Any) -> str:
    """A flow's ``ecn`` as ``"off"``, ``"ect0"`` or ``"ect1"``; the core's field was a bool
    before it named the codepoint (``True``: classic ECN, ECT(0))."""
    if value is None or value is False:
        return "off"
    if value is True:
        return "ect0"
    if value in ECN_MODES:
        return str(value)
    raise ValueError(f"flow ecn {value!r}: expected one of {', '.join(ECN_MODES)} or a bool")
