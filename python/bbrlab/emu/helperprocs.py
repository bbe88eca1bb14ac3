"""A run's helper processes of one kind: the UDP transport's halves, the traffic sources.

Each is started in a namespace through the testbed (``Launch.start_in_netns``: the testbed stops
it too, whatever happens) and gets a reader thread of its own that hands every JSON line of its
stdout to the caller's handler. When the process exits with a non-zero status that the runner did
not ask for (``stopping`` is still False), the reader records one line, with the end of the
process's stderr, on the flow or source it serves (its ``error``; the first failure wins), which
the runner raises as the run's error.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from .launch import Launch, stderr_tail

__all__ = ["HelperProcs"]


class _ErrorHolder(Protocol):
    """What a helper process serves (a flow's state, a source): where its failure is recorded."""

    error: str | None


class HelperProcs:
    """The helper processes of one kind in a run, their reader threads and the stop flag."""

    def __init__(self, spawn: Any, launch: Launch, scratch: Path | None, t0: int, duration_ns: int) -> None:
        self.spawn = spawn  # Testbed.spawn: the testbed stops them too, whatever happens
        self.launch = launch
        self.scratch = scratch  # the processes' config and stderr files
        self.t0 = t0
        self.duration_ns = duration_ns
        self.procs: list[subprocess.Popen[bytes]] = []
        self.readers: list[threading.Thread] = []
        self.stopping = False  # set before the runner stops them: a non-zero exit is then no failure

    def start_reading(
        self,
        ns: str,
        name: str,
        cfg: dict[str, Any],
        on_line: Callable[[Any], None],
        owner: _ErrorHolder,
        what: str,
    ) -> subprocess.Popen[bytes]:
        """Start the program in namespace ``ns`` with ``cfg`` (files ``scratch/NAME.*``) and a
        reader thread (named ``name``) that passes each JSON line to ``on_line``; a failure is
        recorded on ``owner`` as "WHAT exited with status N: <stderr's end>"."""
        assert self.scratch is not None, "a run with helper processes has a scratch directory"
        p, err = self.launch.start_in_netns(self.spawn, ns, self.scratch, name, cfg)
        self.procs.append(p)
        t = threading.Thread(target=self._read, args=(p, err, on_line, owner, what), daemon=True, name=name)
        t.start()
        self.readers.append(t)
        return p

    def _read(self, p: Any, err: Any, on_line: Callable[[Any], None], owner: _ErrorHolder, what: str) -> None:
        assert p.stdout is not None
        for raw in p.stdout:
            try:
                on_line(json.loads(raw))
            except ValueError:
                continue
        rc = p.wait()
        if rc != 0 and not self.stopping and owner.error is None:
            owner.error = f"{what} exited with status {rc}: {stderr_tail(err)}"

    def terminate_all(self) -> None:
        """SIGTERM to every process (each writes its final line); their exits are no failures."""
        self.stopping = True
        for p in self.procs:
            with contextlib.suppress(ProcessLookupError):
                p.terminate()

    def join_readers(self) -> None:
        """Wait (a little) for the reader threads: their processes have ended."""
        for t in self.readers:
            t.join(timeout=1.0)
