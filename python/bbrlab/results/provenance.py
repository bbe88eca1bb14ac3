"""Where a run came from: bbrlab's own source commit, and run-directory names that tell
overrides apart.

``git_commit()`` is recorded in every summary.json (``run.git_commit``) so a number can be traced
to the code that produced it. It asks git about the directory this package was imported from —
not the caller's working directory, which may be a different repository — and only when that
directory is inside a bbrlab checkout; an installed wheel gives None. It costs two short git
processes once per Python process (9–35 ms measured in this repository on the 2-core VM at a
load of 5–7; cached after that) and never fails a run: no git, a timeout or an error all give None.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import os
import re
import subprocess
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

__all__ = ["git_commit", "short_overrides", "overrides_slug", "default_run_dir", "SLUG_MAX"]

_PACKAGE_DIR = Path(__file__).resolve().parents[1]
_GIT_TIMEOUT_S = 2.0

#: Longest slug in a default run directory's name. With a name (at most 100 characters), the
#: timestamp, a "-N" counter and the ".incomplete" suffix of a run being written, the directory
#: name stays far below NAME_MAX (255 bytes) on every file system.
SLUG_MAX = 60
#: Characters kept in a slug: safe in file names on Linux, macOS and Windows and in a shell
#: without quoting (no "/", no spaces, no quotes, no "*?:<>|\\").
_UNSAFE = re.compile(r"[^A-Za-z0-9._=,%+-]+")


def _git(*args: str) -> str | None:
    try:
        r = subprocess.run(
            ["git", "-C", str(_PACKAGE_DIR), *args],
            capture_output=True,
            text=True,
            timeout=_GIT_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
            # A read-only question must not take the index lock from a concurrent git.
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"},
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return r.stdout if r.returncode == 0 else None


@lru_cache(maxsize=1)
def git_commit() -> str | None:
    """The commit of bbrlab's source tree ("+dirty" when it has changes), or None when this
    package is not running from a git checkout of bbrlab."""
    out = _git("rev-parse", "--show-toplevel", "HEAD")
    if out is None or len(out.split()) != 2:
        return None
    top, head = out.split()
    # A wheel installed into a virtualenv that sits inside some other repository must not report
    # that repository's commit: the checkout has to be bbrlab's (its Python package dir is ours).
    if (Path(top) / "python" / "bbrlab").resolve() != _PACKAGE_DIR:
        return None
    status = _git("status", "--porcelain")
    if status is None:
        return None
    return head + ("+dirty" if status.strip() else "")


def _min_depth(path: list[str]) -> int:
    """Parts of ``path`` a short name keeps at least: from the list before its last index on."""
    indices = [i for i, p in enumerate(path) if p.isdigit()]
    return len(path) - max(indices[-1] - 1, 0) if indices else 1


def _key_names(paths: list[list[str]]) -> list[str]:
    """The shortest tail of each override path that tells it apart from the others:
    ["topology.bottleneck.loss", "flows.0.cc"] -> ["loss", "flows.0.cc"]. A path through a list
    index keeps the list and the index: "cc" alone would name flow 0's and flow 1's alike, two
    different experiments under one label."""
    depth = [_min_depth(p) for p in paths]
    while True:
        names = [".".join(p[-d:]) for p, d in zip(paths, depth)]
        clash = {n for n in names if names.count(n) > 1}
        grow = [i for i, n in enumerate(names) if n in clash and depth[i] < len(paths[i])]
        if not grow:
            return names
        for i in grow:
            depth[i] += 1


def short_overrides(overrides: Sequence[str]) -> list[str]:
    """Overrides with each path cut to the tail that tells it apart:
    ["flows.0.cc=cubic", "topology.bottleneck.loss=1%"] -> ["cc=cubic", "loss=1%"]; the last
    value given for a path is the one that counts (as in apply_overrides)."""
    last: dict[tuple[str, int], str] = {}
    for i, o in enumerate(overrides):
        path, _, value = o.partition("=")
        # "flows+=…" adds an entry each time it is given: every one counts.
        key = (path.strip(), i if path.strip().endswith("+") else 0)
        last.pop(key, None)
        last[key] = value.strip()
    names = _key_names([p.split(".") for p, _ in last])
    return [f"{n}={v}" for n, v in zip(names, last.values())]


def overrides_slug(overrides: Sequence[str], max_len: int = SLUG_MAX) -> str:
    """A short, file-system-safe text for a list of "PATH=VALUE" overrides:
    ["flows.0.cc=cubic", "topology.bottleneck.loss=1%"] -> "cc=cubic,loss=1%". Longer than
    ``max_len``: cut, with a hash of the whole list so that different lists stay different."""
    if not overrides:
        return ""
    slug = _UNSAFE.sub("_", ",".join(short_overrides(overrides))).strip("._-") or "set"
    if len(slug) > max_len:
        digest = hashlib.sha1("\n".join(overrides).encode()).hexdigest()[:8]
        slug = slug[: max_len - 9].rstrip("._-,") + "+" + digest
    return slug


def default_run_dir(
    name: str, overrides: Sequence[str] = (), root: str | Path = "runs", now: _dt.datetime | None = None
) -> Path:
    """``runs/<name>[-<overrides slug>]-<YYYYmmdd-HHMMSS>``, with "-2", "-3"… when taken."""
    stamp = (now or _dt.datetime.now()).strftime("%Y%m%d-%H%M%S")
    slug = overrides_slug(overrides)
    base = Path(root) / "-".join(p for p in (name, slug, stamp) if p)
    out, n = base, 1
    while out.exists() or out.with_name(out.name + ".incomplete").exists():
        n += 1
        out = base.with_name(f"{base.name}-{n}")
    return out
