"""Compile a BPF congestion control on first use, into a per-user cache.

``build(name)`` returns ``<cache>/bbrlab/bpf/<key>.o`` (cache = ``$XDG_CACHE_HOME`` or
``~/.cache``), where key is the SHA-256 of the source, every shared header in ``src/`` and the
running kernel's BTF: a new kernel, or an edited source, compiles afresh, and nothing else does.
The kernel's types come from its BTF, ``bpftool btf dump file /sys/kernel/btf/vmlinux format c``,
written into the cache as ``vmlinux-<btf hash>.h`` (the sources ``#include "vmlinux.h"``).
Files appear atomically (written aside, then renamed), so concurrent runs share the cache.

The tools (clang, bpftool, libbpf's headers and libbpf.so.1) are needed only here, only when a
run asks for a ported algorithm on the emu backend; without them :func:`check_tools` raises one
line naming the Debian packages to install (exit status 2).
"""

from __future__ import annotations

import ctypes.util
import hashlib
import os
import platform
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import IO, Any

from ...errors import SimulationError, UserError
from . import SRC_DIR, ported, source

__all__ = ["BpfUnavailable", "build", "cache_dir", "check_tools", "kernel_btf_id", "DEBIAN_PACKAGES", "KERNEL_BTF"]

KERNEL_BTF = Path("/sys/kernel/btf/vmlinux")
#: What provides the tools on Debian/Ubuntu (.ci/run installs the same list).
DEBIAN_PACKAGES = "clang llvm libbpf-dev bpftool"
LIBBPF_HEADER = Path("/usr/include/bpf/bpf_helpers.h")
# clang's __TARGET_ARCH_* for the libbpf tracing macros (BPF_PROG reads arguments per arch).
_TARGET_ARCH = {"x86_64": "x86", "aarch64": "arm64"}
_CLANG_FLAGS = ["-O2", "-g", "-target", "bpf", "-Wall", "-Wno-unused-function"]


class BpfUnavailable(UserError):
    """A BPF congestion control was asked for on a machine that cannot build or load it."""

    exit_code = 2


def check_tools(algorithm: str) -> None:
    """Raise :class:`BpfUnavailable` (one line) unless this machine can build and load ports."""
    missing = [t for t in ("clang", "bpftool") if shutil.which(t) is None]
    if not LIBBPF_HEADER.exists() or not (ctypes.util.find_library("bpf") or _has_libbpf_so1()):
        missing.append("libbpf")
    if missing:
        raise BpfUnavailable(
            f"--backend emu runs {algorithm!r} as a BPF congestion control, which needs {', '.join(missing)}: "
            f"install them with `apt-get install -y {DEBIAN_PACKAGES}` (Debian/Ubuntu)"
        )
    if not KERNEL_BTF.exists():
        raise BpfUnavailable(
            f"--backend emu runs {algorithm!r} as a BPF congestion control, which needs a kernel with BTF "
            f"({KERNEL_BTF} is missing: CONFIG_DEBUG_INFO_BTF=y)"
        )
    if platform.machine() not in _TARGET_ARCH:
        raise BpfUnavailable(
            f"BPF congestion controls are supported on {', '.join(_TARGET_ARCH)} only, not {platform.machine()}"
        )


def _has_libbpf_so1() -> bool:
    try:
        ctypes.CDLL("libbpf.so.1")
        return True
    except OSError:
        return False


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "bbrlab" / "bpf"


@lru_cache(maxsize=1)
def kernel_btf_id() -> str:
    """SHA-256 of the running kernel's BTF (identifies the types the objects were built for)."""
    return hashlib.sha256(KERNEL_BTF.read_bytes()).hexdigest()


def _atomic_write(path: Path, produce: Callable[[Path], None]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    os.close(fd)
    try:
        produce(Path(tmp))
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _run(cmd: list[str], what: str, stdout: IO[Any] | None = None) -> None:
    r = subprocess.run(cmd, stdout=stdout if stdout is not None else subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        tail = " ".join((r.stderr or "").split())[-400:]
        raise SimulationError(f"{what} failed: {tail}")


def _vmlinux_h(cache: Path) -> Path:
    """The directory holding this kernel's ``vmlinux.h`` (generated once per kernel BTF)."""
    d = cache / f"vmlinux-{kernel_btf_id()[:16]}"
    header = d / "vmlinux.h"
    if not header.exists():

        def dump(tmp: Path) -> None:
            with open(tmp, "w") as f:
                _run(["bpftool", "btf", "dump", "file", str(KERNEL_BTF), "format", "c"], "bpftool btf dump", stdout=f)

        _atomic_write(header, dump)
    return d


def object_key(name: str) -> str:
    """The cache key of ``name``'s object: source, shared headers, kernel BTF, compiler flags."""
    h = hashlib.sha256()
    for p in [source(name), *sorted(SRC_DIR.glob("*.h"))]:
        h.update(p.name.encode() + b"\0" + p.read_bytes() + b"\0")
    h.update(kernel_btf_id().encode())
    h.update(" ".join(_CLANG_FLAGS).encode())
    return h.hexdigest()


def build(name: str) -> Path:
    """The compiled object of ported algorithm ``name``, compiling it if the cache lacks it."""
    if name not in ported():
        raise ValueError(f"{name!r} has no BPF port (ported: {', '.join(sorted(ported()))})")
    check_tools(name)
    cache = cache_dir()
    obj = cache / f"{object_key(name)}.o"
    if obj.exists():
        return obj
    inc = _vmlinux_h(cache)
    arch = _TARGET_ARCH[platform.machine()]

    def compile_(tmp: Path) -> None:
        _run(
            [
                "clang",
                *_CLANG_FLAGS,
                f"-D__TARGET_ARCH_{arch}",
                "-I",
                str(inc),
                "-I",
                str(SRC_DIR),
                "-c",
                str(source(name)),
                "-o",
                str(tmp),
            ],
            f"compiling {source(name).name}",
        )

    _atomic_write(obj, compile_)
    return obj
