"""Keeping stdout for machine-readable output (`bbrlab run --json`).

While a run works, anything that would reach stdout — Python code printing, a library, a child
process such as the emu backend's `ip` and emulator, Rust code in the core — goes to stderr
instead, at the file-descriptor level; once the work is done, stdout is restored and holds the
JSON document alone, so ``bbrlab run … --json | jq`` works whatever was said on the way.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Iterator

__all__ = ["stdout_to_stderr"]


def _fd(stream: object) -> int | None:
    try:
        return stream.fileno()  # type: ignore[attr-defined]  # any object: one without fileno() is caught below
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return None  # not a real file (a test runner's capture buffer)


@contextlib.contextmanager
def stdout_to_stderr(enabled: bool = True) -> Iterator[None]:
    """Within the block, stdout (sys.stdout and, when it is a real file, descriptor 1) is stderr."""
    if not enabled:
        yield
        return
    out, err = sys.stdout, sys.stderr
    out.flush()
    out_fd, err_fd = _fd(out), _fd(err)
    saved = os.dup(out_fd) if out_fd is not None and err_fd is not None else None
    try:
        if saved is not None and err_fd is not None and out_fd is not None:  # (saved implies both)
            os.dup2(err_fd, out_fd)
        sys.stdout = err
        yield
    finally:
        sys.stdout = out
        with contextlib.suppress(Exception):
            err.flush()
        if saved is not None and out_fd is not None:
            os.dup2(saved, out_fd)
            os.close(saved)
