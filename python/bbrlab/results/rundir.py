"""Where a run directory may go — checked before a simulation starts, so a bad ``--out`` costs a
second, not the whole run — and what a finished one is (:func:`is_complete_run`,
:func:`find_runs`, :func:`read_summary`; no pandas here, so `bbrlab ls` starts fast).

A run directory can be written when its name is usable (non-empty, each component within the
file system's 255-byte limit), it does not exist yet, its nearest existing ancestor is a
directory in which we can create one (not a file, not read-only, not /proc), and the file system
has room for the tables the run will produce (and the process's file-size limit allows them).
"""

from __future__ import annotations

import errno
import json
import os
import resource
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import UserError

__all__ = [
    "check_out_dir",
    "expected_bytes",
    "NAME_MAX",
    "INCOMPLETE_MARKER",
    "is_complete_run",
    "find_runs",
    "read_summary",
    "write_atomically",
    "APP_TRANSFER_SPEC",
    "configured_flows",
]

INCOMPLETE_MARKER = "INCOMPLETE"

#: A flow's ``spec`` when it is an application transfer (one query response of an ``[[apps]]``
#: entry) rather than a configured flow (whose ``spec`` is its index in ``[[flows]]``).
APP_TRANSFER_SPEC = -1


def configured_flows(flows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A summary's configured flows: its ``flows`` without the application transfers."""
    return [f for f in flows if f.get("spec", 0) != APP_TRANSFER_SPEC]


NAME_MAX = 255
#: Bytes one row of the timeseries/queue tables takes on disk at most (25 eight-byte columns,
#: uncompressed), and what the plots and small files of a run take.
ROW_BYTES = 200
FIXED_BYTES = 2_000_000


def write_atomically(final: Path, write: Callable[[Path], None]) -> Path:
    """Make the run directory ``final`` with ``write(directory)``, atomically: everything goes
    into ``<final>.incomplete/`` with an INCOMPLETE marker, renamed to ``final`` only once
    ``write`` returned. On any failure, Ctrl-C included, the partial directory is removed (a
    half-written directory must never look like a run); an OSError is the user's to fix (a full
    disk, a file-size limit, a vanished directory) and becomes one UserError line."""
    tmp = final.with_name(final.name + ".incomplete")
    try:
        if tmp.exists():  # left by a crashed earlier attempt at the same directory
            shutil.rmtree(tmp)
        tmp.mkdir(parents=True)
    except OSError as e:
        raise UserError(f"{tmp}: cannot create the run directory: {e.strerror}") from None
    try:
        (tmp / INCOMPLETE_MARKER).write_text(
            "This run directory is being written, or its run failed or was interrupted.\n"
            "A complete run directory has no INCOMPLETE file and no .incomplete suffix.\n"
        )
        write(tmp)
        (tmp / INCOMPLETE_MARKER).unlink()
        os.rename(tmp, final)
    except OSError as e:
        shutil.rmtree(tmp, ignore_errors=True)
        raise UserError(f"{e.filename or final}: cannot write the run directory: {e.strerror}") from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return final


def expected_bytes(timeseries_rows: int, queue_rows: int) -> int:
    """An upper estimate of a run directory's size."""
    return FIXED_BYTES + ROW_BYTES * (timeseries_rows + queue_rows)


def _nearest_existing(p: Path) -> Path:
    for a in [p, *p.parents]:
        if os.path.lexists(a):
            return a
    return Path(".")


def check_out_dir(out: str | Path, needed_bytes: int | None = None) -> Path:
    """The run directory ``out`` as a Path, or a UserError saying why it cannot be written
    (``needed_bytes``: what the run will write, default a small run's)."""
    if needed_bytes is None:
        needed_bytes = FIXED_BYTES
    if str(out).strip() == "":
        raise UserError("--out: an empty path; give a directory, e.g. --out runs/my-run")
    p = Path(out)
    for part in p.parts:
        if len(os.fsencode(part)) > NAME_MAX:
            raise UserError(f"--out: the name {part[:20]!r}… ({len(part)} characters) is longer than {NAME_MAX} bytes")
    if os.path.lexists(p):
        raise UserError(f"--out {p}: already exists; choose another directory")
    base = _nearest_existing(p.parent if p.parent != p else p)
    if not base.is_dir():
        raise UserError(f"--out {p}: {base} is a file, not a directory")
    try:
        probe = tempfile.mkdtemp(prefix=".bbrlab-probe-", dir=base)
        os.rmdir(probe)
    except OSError as e:
        why = {
            errno.EROFS: "is on a read-only file system",
            errno.EACCES: "is not writable",
            errno.EPERM: "is not writable",
        }.get(e.errno or 0, f"cannot hold a directory ({e.strerror})")
        raise UserError(f"--out {p}: {base} {why}") from None
    free = shutil.disk_usage(base).free
    if free < needed_bytes:
        raise UserError(
            f"--out {p}: {free / 1e6:.1f} MB free on its file system; the run needs about {needed_bytes / 1e6:.1f} MB"
        )
    soft, _ = resource.getrlimit(resource.RLIMIT_FSIZE)
    if soft != resource.RLIM_INFINITY and soft < needed_bytes:
        raise UserError(
            f"--out {p}: the file-size limit (ulimit -f) is {soft} bytes; the run's tables need about {needed_bytes / 1e6:.0f} MB"
        )
    return p


def _one_line(e: BaseException) -> str:
    return " ".join(f"{type(e).__name__}: {e}".split())[:200]


def read_summary(f: Path) -> dict[str, Any]:
    """summary.json, checked for the shape everything else relies on."""
    try:
        data = json.loads(f.read_bytes().decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as e:
        raise UserError(f"{f}: damaged ({_one_line(e)})") from None
    problem = None
    if not isinstance(data, dict):
        problem = f"a {type(data).__name__}, not an object"
    elif not isinstance(data.get("flows", []), list) or not all(isinstance(x, dict) for x in data.get("flows", [])):
        problem = "'flows' is not a list of objects"
    elif any(not isinstance(data.get(k, {}), dict) for k in ("aggregate", "run", "scenario")):
        problem = "'aggregate', 'run' or 'scenario' is not an object"
    if problem:
        raise UserError(f"{f}: damaged ({problem})")
    return data


def is_complete_run(path: Path) -> bool:
    """A run directory that is finished: right name, no marker, summary present."""
    return (
        path.is_dir()
        and not path.name.endswith(".incomplete")
        and not (path / INCOMPLETE_MARKER).exists()
        and (path / "summary.json").is_file()
    )


def find_runs(root: str | Path, *, limit: int | None = None) -> list[Path]:
    """Complete run directories under ``root`` (itself included), recursively, in path order; a
    run directory is not searched further. ``limit``: stop after that many."""
    found: list[Path] = []
    for here, dirs, _ in os.walk(root):
        p = Path(here)
        if is_complete_run(p):
            found.append(p)
            dirs[:] = []
            if limit is not None and len(found) >= limit:
                break
        else:
            dirs[:] = sorted(d for d in dirs if not d.endswith(".incomplete"))
    return found
