"""Removes a run's namespaces when the runner dies without cleaning up (SIGKILL, OOM kill).

``python -m bbrlab.emu.guardian OWNER_PID``, started by :class:`bbrlab.emu.netns.Testbed` in its
own session (terminal signals do not reach it), reads lines from the runner on stdin:
``ns NAME`` for each namespace the runner created, ``dir PATH`` for each scratch directory,
``done`` once the runner has removed them itself. When stdin reaches end of file — the runner
exited, however — without ``done``, the guardian does what ``Testbed.close`` would: kills every
process still inside those namespaces (a ``transport = "udp"`` flow's two transport processes,
which also die with the runner by PR_SET_PDEATHSIG), deletes them and the directories. Everything
else dies with the runner by itself: the emulator through PR_SET_PDEATHSIG (its TUN devices with
it), the kernel TCP traffic (threads of the runner), and a BPF congestion control (the kernel
closes the runner's link descriptor and unregisters it).

It imports nothing of bbrlab's but this module, so it is up in tens of milliseconds.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time

#: How long the guardian keeps trying to delete a busy namespace.
DELETE_RETRY_S = 5.0


def remove_namespaces(names: list[str]) -> list[str]:
    """Kill what runs inside each namespace, then delete it; returns the ones left (errors)."""
    left = []
    for ns in names:
        if not os.path.exists(f"/var/run/netns/{ns}"):
            continue
        pids = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout.split()
        for pid in pids:
            try:
                os.kill(int(pid), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass
        end = time.monotonic() + DELETE_RETRY_S
        while True:
            r = subprocess.run(["ip", "netns", "delete", ns], capture_output=True, text=True)
            if r.returncode == 0 or not os.path.exists(f"/var/run/netns/{ns}"):
                break
            if time.monotonic() > end:
                left.append(ns)
                break
            time.sleep(0.05)
    return left


def main() -> int:
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    names: list[str] = []
    dirs: list[str] = []
    for line in sys.stdin:
        cmd, _, arg = line.strip().partition(" ")
        if cmd == "ns" and arg:
            names.append(arg)
        elif cmd == "dir" and arg:
            dirs.append(arg)
        elif cmd == "done":
            return 0
    for d in dirs:
        shutil.rmtree(d, ignore_errors=True)
    left = remove_namespaces(names)
    return 1 if left else 0


if __name__ == "__main__":
    sys.exit(main())
