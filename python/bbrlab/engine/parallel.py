"""Run a function over many items in a process pool (one core each), and stop cleanly.

The one pool of bbrlab: `bbrlab reproduce` (``reproduce.pool``) and `bbrlab sweep`
(``sweep.engines``) both run their simulations through :func:`imap_unordered`.

Why a wrapper around ``ProcessPoolExecutor``: its own shutdown waits for every running task, so
Ctrl-C (or SIGTERM) during a long run would leave the user waiting, or leave workers running when
the parent is gone. Here the workers ignore SIGINT (the terminal sends it to the whole process
group; only the parent decides what an interrupt means) and die on SIGTERM, and when the consumer
stops early — an interrupt, an error, a ``break`` — the pool's processes are terminated and
reaped before the exception goes on. Nothing of the pool survives the call.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Generator, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Any, TypeVar

__all__ = ["imap_unordered", "default_jobs"]

T = TypeVar("T")


def default_jobs() -> int:
    """Parallel simulations when the user does not say: one per CPU."""
    return os.cpu_count() or 1


def _worker_init() -> None:
    # The CLI's SIGTERM handler raises an exception, which a worker would catch as a failed task
    # and carry on; a worker must simply die on SIGTERM, and leave SIGINT to the parent.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _stop(ex: ProcessPoolExecutor) -> None:
    """Cancel what has not started, terminate what is running, reap every worker."""
    procs = list((getattr(ex, "_processes", None) or {}).values())
    ex.shutdown(wait=False, cancel_futures=True)
    for p in procs:
        if p.is_alive():
            p.terminate()
    for p in procs:
        p.join(timeout=5)
        if p.is_alive():
            p.kill()
            p.join()


def imap_unordered(fn: Callable[[T], Any], items: Iterable[T], *, jobs: int) -> Generator[tuple[int, Any], None, None]:
    """Yield ``(index, fn(item))`` as each call finishes; a call that raised an ``Exception``
    yields it instead of a value (the caller decides whether that stops everything).

    ``jobs`` <= 1 (or a single item) runs the calls in this process, in order. At most ``jobs``
    calls are submitted at a time, so an interrupted run has nothing queued to throw away.
    ``fn`` and the items must pickle (a module-level function; fork workers inherit the rest).
    """
    todo = list(items)
    if jobs <= 1 or len(todo) <= 1:
        for i, item in enumerate(todo):
            try:
                value = fn(item)
            except Exception as e:  # handed to the caller, who decides
                value = e
            yield i, value
        return
    ex = ProcessPoolExecutor(max_workers=min(jobs, len(todo)), initializer=_worker_init)
    finished = False
    try:
        pending: dict[Future[Any], int] = {}
        nxt = 0
        while nxt < len(todo) or pending:
            while nxt < len(todo) and len(pending) < jobs:
                pending[ex.submit(fn, todo[nxt])] = nxt
                nxt += 1
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                i = pending.pop(fut)
                try:
                    value = fut.result()
                except Exception as e:  # handed to the caller (BrokenProcessPool too)
                    value = e
                yield i, value
        finished = True
    finally:
        if finished:
            ex.shutdown(wait=True)
        else:
            _stop(ex)
