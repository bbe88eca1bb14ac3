"""Where a sweep's runs execute: ``local`` (bbrlab's process pool) or ``ray`` (a Ray cluster).

Both run the same function for a run (:func:`make_run`: simulate, record how the run was made,
save the run directory) and yield ``(index, None)`` for a run whose directory is now complete or
``(index, exception)`` for one that failed.

Ray: each run is a task that makes the run directory in a scratch directory *on the worker* and
returns its files (bytes); the driver writes them under the sweep directory, atomically. So a Ray
cluster needs no shared file system (most have none), the CPU-heavy parts — the simulation, the
Parquet encoding, the plots — run on the workers, and the sweep directory, its cache and its
atomic run directories live on the driver's disk exactly as with the local engine.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import socket
import tempfile
import threading
from collections.abc import Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._version import __version__
from ..engine.parallel import imap_unordered
from ..errors import UserError
from ..results.rundir import write_atomically
from ..scenario import Scenario

__all__ = ["RunTask", "make_run", "ENGINES", "local_engine", "ray_engine"]

ENGINES = ("local", "ray")


@dataclass(frozen=True)
class RunTask:
    scenario: Scenario
    run_dir: Path  # the final run directory on the driver's disk
    plots: bool
    overrides: tuple[str, ...]
    scenario_file: str


def make_run(task: RunTask, dest: Path | None = None) -> Path:
    """Simulate the task's scenario and save its run directory at ``dest`` (default: its run_dir)."""
    from ..engine.runner import run

    result = run(task.scenario)
    # How to make this run again with `bbrlab run` (the fields `bbrlab run` records too).
    result.summary["run"]["overrides"] = list(task.overrides)
    result.summary["run"]["scenario_file"] = task.scenario_file
    return result.save(dest if dest is not None else task.run_dir, plots=task.plots)


def _local_run(task: RunTask) -> None:
    make_run(task)


def local_engine(
    tasks: Sequence[RunTask], *, jobs: int, address: str | None = None
) -> Iterator[tuple[int, BaseException | None]]:
    """Run the tasks in bbrlab's process pool, ``jobs`` at a time (``address``: Ray's only)."""
    with closing(imap_unordered(_local_run, tasks, jobs=jobs)) as results:
        for i, value in results:
            yield i, value if isinstance(value, BaseException) else None


# ------------------------------------------------------------------ Ray


def _ray_run(task: RunTask) -> tuple[str, dict[str, bytes]]:
    """On a Ray worker: the run directory's files, made in a scratch directory there."""
    scratch = Path(tempfile.mkdtemp(prefix="bbrlab-ray-"))
    try:
        d = make_run(task, scratch / "run")
        return __version__, {p.name: p.read_bytes() for p in sorted(d.iterdir()) if p.is_file()}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _write_run_dir(final: Path, files: dict[str, bytes]) -> None:
    """A run directory from its files, atomically (as Result.save writes one)."""

    def write(d: Path) -> None:
        # summary.json last: its presence is what "complete" means to readers that skip the suffix.
        for name in sorted(files, key=lambda n: n == "summary.json"):
            (d / name).write_bytes(files[name])

    write_atomically(final, write)


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise UserError("--engine ray: Ray is not installed; install it with pip install 'bbrlab[ray]'") from None
    return ray


#: How long to wait for a TCP connection to a given Ray head before saying it cannot be reached
#: (ray.init itself retries for minutes and prints a log line per try).
_REACH_TIMEOUT_S = 5.0


def check_ray_address(address: str) -> None:
    """A ``HOST:PORT`` address must answer a TCP connection within a few seconds, or one
    UserError says so (other forms, "auto" and "ray://…", are left to Ray)."""
    if address == "auto" or "://" in address:
        return
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise UserError(f"--address {address}: expected HOST:PORT, e.g. --address 10.0.0.5:6379 (the head's GCS port)")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=_REACH_TIMEOUT_S).close()
    except OSError as e:
        why = "no answer" if isinstance(e, TimeoutError) else (e.strerror or str(e))
        raise UserError(
            f"--address {address}: cannot reach a Ray head there ({why}); start one with "
            "`ray start --head --port 6379` on that machine"
        ) from None


def ray_engine(
    tasks: Sequence[RunTask], *, jobs: int | None, address: str | None
) -> Iterator[tuple[int, BaseException | None]]:
    """Run the tasks as Ray tasks (one CPU each) on the cluster at ``address`` (host:port), or on a
    local Ray (attached if one runs, started otherwise). At most ``jobs`` tasks are in flight
    (default: all; Ray queues them by free CPUs). Ctrl-C cancels every task and disconnects (a
    local Ray this started stops)."""
    ray = _import_ray()
    if address:
        check_ray_address(address)
    # A Ray started here reports nothing home (bbrlab makes no network traffic of its own), and
    # its crash handler, which would print a stack dump on SIGTERM, stays out of the driver.
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    os.environ.setdefault("RAY_DISABLE_FAILURE_SIGNAL_HANDLER", "1")
    main = threading.current_thread() is threading.main_thread()
    sigterm = signal.getsignal(signal.SIGTERM) if main else None
    try:
        ray.init(
            address=address,
            logging_level=logging.ERROR,
            log_to_driver=False,
            include_dashboard=False,
            configure_logging=True,
        )
    except (ConnectionError, ValueError, RuntimeError) as e:
        where = f"--address {address}" if address else "--engine ray"
        raise UserError(
            f"{where}: cannot start or reach Ray ({' '.join(str(e).split())[:200]}); "
            "start a cluster with `ray start --head` and pass --address HOST:6379"
        ) from None
    finally:
        if main:
            # ray.init makes SIGTERM exit at once; the caller's handler (the CLI's clean stop) comes back.
            signal.signal(signal.SIGTERM, sigterm)
    remote = ray.remote(num_cpus=1, max_retries=0)(_ray_run)
    limit = jobs or len(tasks)
    pending: dict[Any, int] = {}
    try:
        nxt = 0
        while nxt < len(tasks) or pending:
            while nxt < len(tasks) and len(pending) < limit:
                pending[remote.remote(tasks[nxt])] = nxt
                nxt += 1
            try:
                # Short waits: Python runs a signal's handler between them rather than inside Ray.
                ready, _ = ray.wait(list(pending), num_returns=1, timeout=0.5)
            except SystemError as e:
                # A signal handler that raised inside Ray's compiled wait (the CLI's SIGTERM) comes
                # back as "returned a result with an exception set": hand on the handler's exception.
                if e.__context__ is not None:
                    raise e.__context__ from None
                raise
            for ref in ready:
                i = pending.pop(ref)
                try:
                    version, files = ray.get(ref)
                except ray.exceptions.RayTaskError as e:  # the task raised: hand on its own exception
                    cause = getattr(e, "cause", None)
                    yield i, cause if isinstance(cause, BaseException) else RuntimeError(str(e).splitlines()[0])
                    continue
                except ray.exceptions.RayError as e:  # the worker died, the node went away, ...
                    yield i, RuntimeError(f"Ray: {type(e).__name__}: {' '.join(str(e).split())[:200]}")
                    continue
                if version != __version__:
                    yield (
                        i,
                        UserError(
                            f"a Ray worker runs bbrlab {version}, this driver {__version__}; "
                            "install the same bbrlab on every node"
                        ),
                    )
                    continue
                _write_run_dir(tasks[i].run_dir, files)
                yield i, None
    finally:
        # Not force=True: a task gets KeyboardInterrupt and removes its scratch directory (a killed
        # worker would leave it behind); the wait gives it the moment that takes.
        for ref in pending:
            ray.cancel(ref, force=False)
        if pending:
            ray.wait(list(pending), num_returns=len(pending), timeout=5)
        ray.shutdown()


def engine(name: str) -> Any:
    if name not in ENGINES:
        raise UserError(f"--engine {name}: use one of {', '.join(ENGINES)}")
    return local_engine if name == "local" else ray_engine
