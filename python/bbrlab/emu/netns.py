"""Network namespaces, the emulator process and their clean-up.

Everything a run creates is registered with a :class:`Testbed` the moment it exists, and
:meth:`Testbed.close` removes it: processes first (by PID, also any process still inside one of
our namespaces — deleting a namespace does not kill them), then the namespaces. TUN devices are
non-persistent: they disappear when the emulator process (their only fd holder) exits.

``close`` runs on normal exit, on any exception, on Ctrl-C (KeyboardInterrupt), on SIGTERM/SIGHUP
(turned into an exception in the main thread while a testbed is open) and from ``atexit`` as a
last resort. When the runner cannot run it (SIGKILL), a guardian process (:mod:`.guardian`,
one per testbed, told each namespace as it is made) deletes the namespaces once the runner is
gone. Names carry a per-run tag (``bbrlab-<pid>-<n>-...``) so concurrent runs never collide
and leftovers are recognisable (:func:`leftovers`).
"""

from __future__ import annotations

import atexit
import ctypes
import ctypes.util
import itertools
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from ..errors import UserError
from .launch import PACKAGE_PARENT  # `-m bbrlab.emu.guardian` runs there: it imports this bbrlab

__all__ = [
    "EmuUnavailable",
    "check_environment",
    "Testbed",
    "enter_netns",
    "leftovers",
    "ns_prefix",
    "tun_prefix",
    "scratch_prefix",
    "NS_PREFIX",
]

NS_PREFIX = "bbrlab-"
#: A run's scratch directory (the emulator's queue log, its stderr) in the system's temp dir.
SCRATCH_PREFIX = "bbrlab-emu-"
TUN_PREFIX = "bl"
_counter = itertools.count()
_open_testbeds: list[Testbed] = []
_lock = threading.Lock()


class EmuUnavailable(UserError):
    """The machine cannot run the emu backend (not Linux, not root, no netns/TUN); exit code 2."""

    exit_code = 2


def check_environment() -> None:
    """Fail at once, with one line naming what is missing, unless emu can run here."""
    if platform.system() != "Linux":
        raise EmuUnavailable(f"--backend emu needs Linux network namespaces; this is {platform.system()}")
    if os.geteuid() != 0:
        raise EmuUnavailable(
            "--backend emu needs root (it creates network namespaces and TUN devices); run it as root, e.g. with sudo"
        )
    if shutil.which("ip") is None:
        raise EmuUnavailable("--backend emu needs the `ip` tool (iproute2); install iproute2")
    if not os.path.exists("/proc/self/ns/net"):
        raise EmuUnavailable("--backend emu needs network namespaces, which this kernel does not offer")
    if not os.path.exists("/dev/net/tun"):
        raise EmuUnavailable("--backend emu needs TUN devices (/dev/net/tun is missing; modprobe tun)")


def _run(cmd: list[str], *, input: str | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
    r = subprocess.run(cmd, input=input, capture_output=True, text=True)
    if check and r.returncode != 0:
        raise RuntimeError(f"`{' '.join(cmd)}` failed: {r.stderr.strip() or r.stdout.strip()}")
    return r


_libc: Any = None


def enter_netns(name: str) -> None:
    """Move the *calling thread* into namespace ``name`` (setns(2) acts per thread)."""
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    fd = os.open(f"/var/run/netns/{name}", os.O_RDONLY | os.O_CLOEXEC)
    try:
        if _libc.setns(fd, 0x40000000) != 0:  # CLONE_NEWNET
            e = ctypes.get_errno()
            raise OSError(e, f"setns({name}): {os.strerror(e)}")
    finally:
        os.close(fd)


def ns_prefix(pid: int) -> str:
    """How the names of the namespaces created by process ``pid`` begin."""
    return f"{NS_PREFIX}{pid % 100000}-"


def tun_prefix(pid: int) -> str:
    """How the names of the TUN devices created by process ``pid`` begin (names are <= 15 bytes)."""
    return f"{TUN_PREFIX}{pid % 10000:04d}"


def scratch_prefix(pid: int) -> str:
    """How the scratch directories of process ``pid``'s runs are named (in the system's temp dir)."""
    return f"{SCRATCH_PREFIX}{pid}-"


def leftovers(owner_pid: int | None = None) -> dict[str, list[str]]:
    """bbrlab namespaces, TUN devices and scratch directories that exist now (for tests and
    diagnostics): all of them, or only those of process ``owner_pid``'s runs (other runs on the
    machine have their own)."""
    ns = [line.split()[0] for line in _run(["ip", "netns", "list"], check=False).stdout.splitlines() if line.strip()]
    links = [
        line.split(":")[1].strip().split("@")[0]
        for line in _run(["ip", "-o", "link", "show"], check=False).stdout.splitlines()
        if ":" in line
    ]
    nsp = NS_PREFIX if owner_pid is None else ns_prefix(owner_pid)
    tunp = TUN_PREFIX if owner_pid is None else tun_prefix(owner_pid)
    scratchp = SCRATCH_PREFIX if owner_pid is None else scratch_prefix(owner_pid)
    tmp = Path(tempfile.gettempdir())
    return {
        "netns": [n for n in ns if n.startswith(nsp)],
        "tun": [link for link in links if link.startswith(tunp) and link[len(TUN_PREFIX) :][:1].isdigit()],
        "scratch": sorted(str(d) for d in tmp.glob(f"{scratchp}*") if d.is_dir()),
    }


class _Terminated(KeyboardInterrupt):
    """SIGTERM/SIGHUP during a run; handled like Ctrl-C (clean-up, then exit)."""


class Testbed:
    """Owner of a run's namespaces and processes. Use as a context manager."""

    def __init__(self) -> None:
        n = next(_counter)
        self.ns_base = f"{ns_prefix(os.getpid())}{n}-"
        self.tun_base = f"{tun_prefix(os.getpid())}{n % 100:02d}"
        self.namespaces: list[str] = []
        self.scratch_dirs: list[Path] = []
        self.procs: list[subprocess.Popen[Any]] = []
        self.guardian: subprocess.Popen[Any] | None = None
        self.closed = False
        self._old_handlers: dict[int, Any] = {}

    # -------------------------------------------------------------- naming

    def ns_name(self, role: str) -> str:
        return f"{self.ns_base}{role}"

    def tun_name(self, role: str) -> str:
        name = f"{self.tun_base}{role}"
        assert len(name) < 16, name
        return name

    # -------------------------------------------------------------- lifecycle

    def __enter__(self) -> Testbed:
        with _lock:
            _open_testbeds.append(self)
        # Its own session: a Ctrl-C at the terminal must not stop it before the runner's clean-up.
        self.guardian = subprocess.Popen(
            [sys.executable, "-m", "bbrlab.emu.guardian", str(os.getpid())],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=str(PACKAGE_PARENT),
            start_new_session=True,
            text=True,
        )
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGHUP):
                try:
                    self._old_handlers[sig] = signal.signal(sig, self._on_signal)
                except (ValueError, OSError):
                    pass
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _on_signal(self, signum: int, frame: Any) -> None:
        raise _Terminated(f"signal {signum}")

    def _tell_guardian(self, line: str) -> None:
        if self.guardian is not None and self.guardian.stdin is not None:
            self.guardian.stdin.write(line + "\n")
            self.guardian.stdin.flush()

    def add_netns(self, role: str) -> str:
        name = self.ns_name(role)
        # The guardian hears of it first: a SIGKILL between the two leaves nothing behind.
        self._tell_guardian(f"ns {name}")
        _run(["ip", "netns", "add", name])
        self.namespaces.append(name)
        return name

    def scratch_dir(self) -> Path:
        """A new directory for the run's files, removed with the namespaces (by the guardian too,
        after a SIGKILL)."""
        d = Path(tempfile.mkdtemp(prefix=scratch_prefix(os.getpid())))
        self._tell_guardian(f"dir {d}")
        self.scratch_dirs.append(d)
        return d

    def ip(self, ns: str | None, *commands: str) -> None:
        """Run ``ip`` commands (one per string) in namespace ``ns`` (None = root namespace)."""
        base = ["ip"] + (["-n", ns] if ns else []) + ["-batch", "-"]
        _run(base, input="\n".join(commands) + "\n")

    def sysctl(self, ns: str, values: dict[str, str]) -> None:
        args = [f"{k}={v}" for k, v in values.items()]
        _run(["ip", "netns", "exec", ns, "sysctl", "-q", "-w", *args])

    def spawn(self, cmd: list[str], **kw: Any) -> subprocess.Popen[Any]:
        p = subprocess.Popen(cmd, **kw)
        self.procs.append(p)
        return p

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        errors: list[str] = []
        for p in self.procs:
            # A process that outlives SIGKILL (seen under heavy load) must not stop the cleanup.
            if not _stop_process(p):
                errors.append(f"process {p.pid} did not exit after SIGKILL")
        for ns in self.namespaces:
            # Anything still inside (a process someone started there) goes first.
            pids = _run(["ip", "netns", "pids", ns], check=False).stdout.split()
            for pid in pids:
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except (ProcessLookupError, ValueError):
                    pass
            for _attempt in range(20):
                r = _run(["ip", "netns", "delete", ns], check=False)
                if r.returncode == 0 or not Path(f"/var/run/netns/{ns}").exists():
                    break
                time.sleep(0.05)
            else:
                errors.append(f"{ns}: {r.stderr.strip()}")
        for d in self.scratch_dirs:
            shutil.rmtree(d, ignore_errors=True)
        if self.guardian is not None:
            try:
                self._tell_guardian("done" if not errors else "")
                if self.guardian.stdin is not None:  # spawned with a pipe: always
                    self.guardian.stdin.close()
                self.guardian.wait(timeout=10)
            except (OSError, ValueError, subprocess.TimeoutExpired):
                pass
        for sig, h in self._old_handlers.items():
            try:
                signal.signal(sig, h)
            except (ValueError, OSError, TypeError):
                pass
        with _lock:
            if self in _open_testbeds:
                _open_testbeds.remove(self)
        if errors:
            raise RuntimeError("could not remove namespaces: " + "; ".join(errors))


def _stop_process(p: subprocess.Popen[Any]) -> bool:
    """SIGTERM, then SIGKILL; True once the process has exited."""
    if p.poll() is not None:
        return True
    try:
        p.terminate()
        p.wait(timeout=2)
        return True
    except subprocess.TimeoutExpired:
        pass
    except ProcessLookupError:
        return True
    try:
        p.kill()
        p.wait(timeout=10)
        return True
    except ProcessLookupError:
        return True
    except subprocess.TimeoutExpired:
        return False


@atexit.register
def _close_all() -> None:
    for tb in list(_open_testbeds):
        try:
            tb.close()
        except Exception:
            pass
