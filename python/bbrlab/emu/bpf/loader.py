"""Register a compiled BPF congestion control with the kernel for one run, as a struct_ops *link*.

A struct_ops map created with ``BPF_F_LINK`` is only a description; the algorithm is registered
by a BPF link (``BPF_LINK_CREATE``, attach type ``BPF_STRUCT_OPS``) and unregistered when the last
descriptor of that link closes. The runner process holds the only one, so however it ends —
success, error, Ctrl-C, SIGTERM or SIGKILL — the kernel unregisters the algorithm (with
SIGKILL, when the kernel closes the dead process's files). ``bpftool struct_ops register`` and
the legacy ``SEC(".struct_ops")`` registration instead leave the algorithm registered after
their process exits.

Steps, with libbpf (``libbpf.so.1``) through ctypes:

1. read the object and replace the ops' placeholder name (``BBRLAB_CA_NAME`` in
   ``src/bbrlab_tcp_ca.h``) with the run's unique name (at most 15 bytes: TCP_CA_NAME_MAX is
   16 with the NUL); libbpf 1.1 offers no way to change a struct_ops map's data before load
   (``bpf_map__initial_value`` covers only mmap-able maps until 1.3), so the bytes are
   patched and the object opened from memory (``bpf_object__open_mem``);
2. set ``BPF_F_LINK`` on the struct_ops map (what libbpf >= 1.2 does for a
   ``SEC(".struct_ops.link")`` map; libbpf 1.1, Debian 12's, does not know that section name, so
   our sources use ``SEC(".struct_ops")`` and the flag is set here), ``bpf_object__load``;
3. ``bpf_map__attach_struct_ops``: libbpf >= 1.2 creates the link itself; libbpf 1.1 only
   writes the map's value (which, for a BPF_F_LINK map, registers nothing) and returns a
   pseudo-link whose descriptor is the map's — then we create the link with the bpf(2) syscall.

A port whose algorithm has phases keeps each socket's phase code at offset 0 of its one
sk-storage map's value ("Phases" in ``src/bbrlab_tcp_ca.h``): :meth:`StructOpsLink.phase_code`
reads it with ``bpf_map_lookup_elem`` keyed by the socket's descriptor (the kernel's
``bpf_fd_sk_storage_lookup_elem``), which works from the process that owns the socket.

:class:`StructOpsLink` undoes all of it in :meth:`~StructOpsLink.close` (link destroyed, object
closed), which ``with`` runs on every exit path the interpreter sees.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import itertools
import os
import platform
import sys
from pathlib import Path
from typing import Any

from ...errors import SimulationError

__all__ = ["StructOpsLink", "NameTaken", "run_ca_name", "CA_NAME_PLACEHOLDER", "TCP_CA_NAME_MAX", "CA_NAME_PREFIX"]

#: The bytes every source's ops name starts as (src/bbrlab_tcp_ca.h BBRLAB_CA_NAME).
CA_NAME_PLACEHOLDER = b"bbrlab_ca_name_"
#: Linux TCP_CA_NAME_MAX: the name field's size, NUL included.
TCP_CA_NAME_MAX = 16
#: How every name this module registers begins (leftover checks look for it).
CA_NAME_PREFIX = "bl"
BPF_F_LINK = 1 << 13  # include/uapi/linux/bpf.h
BPF_LINK_CREATE = 28  # enum bpf_cmd
BPF_STRUCT_OPS = 44  # enum bpf_attach_type
BPF_MAP_TYPE_SK_STORAGE = 24  # enum bpf_map_type
BPF_MAP_TYPE_STRUCT_OPS = 26
# __NR_bpf per architecture (build.py compiles for the same two).
_SYS_BPF = {"x86_64": 321, "aarch64": 280}
_counter = itertools.count()

_lib: Any = None
_messages: list[str] = []
_printer: Any = None  # libbpf's log callback (ctypes frees a callback nothing refers to)


def _libbpf() -> Any:
    """libbpf.so.1 with the prototypes used here; its log goes into ``_messages``."""
    global _lib, _printer
    if _lib is not None:
        return _lib
    name = ctypes.util.find_library("bpf") or "libbpf.so.1"
    lib = ctypes.CDLL(name, use_errno=True)
    vp, cp, sz = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t
    lib.bpf_object__open_mem.restype = vp
    lib.bpf_object__open_mem.argtypes = [cp, sz, vp]
    lib.bpf_object__load.argtypes = [vp]
    lib.bpf_object__close.argtypes = [vp]
    lib.bpf_object__next_map.restype = vp
    lib.bpf_object__next_map.argtypes = [vp, vp]
    lib.bpf_map__type.argtypes = [vp]
    lib.bpf_map__map_flags.restype = ctypes.c_uint32
    lib.bpf_map__map_flags.argtypes = [vp]
    lib.bpf_map__set_map_flags.argtypes = [vp, ctypes.c_uint32]
    lib.bpf_map__fd.argtypes = [vp]
    lib.bpf_map__name.restype = cp
    lib.bpf_map__name.argtypes = [vp]
    lib.bpf_map__value_size.restype = ctypes.c_uint32
    lib.bpf_map__value_size.argtypes = [vp]
    lib.bpf_map_lookup_elem.argtypes = [ctypes.c_int, vp, vp]
    lib.bpf_map__attach_struct_ops.restype = vp
    lib.bpf_map__attach_struct_ops.argtypes = [vp]
    lib.bpf_link__fd.argtypes = [vp]
    lib.bpf_link__disconnect.argtypes = [vp]
    lib.bpf_link__destroy.argtypes = [vp]
    # libbpf's log: int (*)(enum libbpf_print_level, const char *fmt, va_list) — formatted with
    # libc's vsnprintf (va_list is a pointer-sized array argument on x86_64).
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    libc.vsnprintf.argtypes = [cp, sz, cp, vp]
    printer_t = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int, cp, vp)

    def _print(level: int, fmt: bytes, args: int) -> int:
        buf = ctypes.create_string_buffer(1024)
        libc.vsnprintf(buf, len(buf), fmt, args)
        _messages.append(buf.value.decode(errors="replace").strip())
        del _messages[:-20]
        return 0

    _printer = printer_t(_print)  # kept alive while libbpf holds the pointer
    lib.libbpf_set_print.restype = vp
    lib.libbpf_set_print.argtypes = [printer_t]
    lib.libbpf_set_print(_printer)
    _lib = lib
    return lib


def run_ca_name(algorithm: str) -> str:
    """A name for ``algorithm`` unique to this process and call, at most 15 bytes:
    ``bl`` + 7 characters of the algorithm + pid (4 digits) + a counter (2 digits)."""
    n = next(_counter)
    stem = "".join(c for c in algorithm if c.isalnum())[:7]
    name = f"{CA_NAME_PREFIX}{stem}{os.getpid() % 10000:04d}{n % 100:02d}"
    assert len(name) < TCP_CA_NAME_MAX, name
    return name


class NameTaken(SimulationError):
    """The kernel already has a congestion control by this name (EEXIST on registration)."""


def _fail(what: str) -> SimulationError:
    e = ctypes.get_errno()
    log = " | ".join(m for m in _messages if m)[-400:]
    _messages.clear()
    cls = NameTaken if e == errno.EEXIST else SimulationError
    return cls(f"{what}: {os.strerror(e) if e else 'failed'}{' (libbpf: ' + log + ')' if log else ''}")


class _LinkCreateAttr(ctypes.Structure):
    # union bpf_attr, the BPF_LINK_CREATE member's first fields (the rest zero).
    _fields_ = [
        ("prog_fd", ctypes.c_uint32),
        ("target_fd", ctypes.c_uint32),
        ("attach_type", ctypes.c_uint32),
        ("flags", ctypes.c_uint32),
        ("pad", ctypes.c_uint8 * 112),
    ]


def _link_create(map_fd: int) -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    attr = _LinkCreateAttr(prog_fd=map_fd, target_fd=0, attach_type=BPF_STRUCT_OPS, flags=0)
    fd = libc.syscall(_SYS_BPF[platform.machine()], BPF_LINK_CREATE, ctypes.byref(attr), ctypes.sizeof(attr))
    if fd < 0:
        raise _fail("BPF_LINK_CREATE for the struct_ops map")
    os.set_inheritable(fd, False)
    return fd


class StructOpsLink:
    """One registered congestion control: ``with StructOpsLink(obj_path, name) as l: ...``.
    The algorithm is in ``tcp_available_congestion_control`` as ``name`` until :meth:`close`."""

    def __init__(self, object_path: Path, name: str) -> None:
        if not 0 < len(name.encode()) < TCP_CA_NAME_MAX:
            raise ValueError(f"congestion-control name {name!r} must be 1..{TCP_CA_NAME_MAX - 1} bytes")
        self.name = name
        self._obj: int | None = None
        self._link: int | None = None
        self._link_fd: int | None = None
        #: (descriptor, value size) of the sk-storage map holding each socket's phase code.
        self._phase_map: tuple[int, int] | None = None
        lib = _libbpf()
        data = Path(object_path).read_bytes()
        if data.count(CA_NAME_PLACEHOLDER) != 1:
            raise SimulationError(f"{object_path}: the ops name placeholder must occur exactly once")
        data = data.replace(CA_NAME_PLACEHOLDER, name.encode().ljust(len(CA_NAME_PLACEHOLDER), b"\0"))
        self._buf = ctypes.create_string_buffer(data, len(data))  # libbpf keeps pointers into it
        try:
            obj = lib.bpf_object__open_mem(self._buf, len(data), None)
            if not obj:
                raise _fail(f"libbpf could not open {object_path}")
            self._obj = obj
            maps, storage = [], []
            m = lib.bpf_object__next_map(obj, None)
            while m:
                if lib.bpf_map__type(m) == BPF_MAP_TYPE_STRUCT_OPS:
                    maps.append(m)
                elif lib.bpf_map__type(m) == BPF_MAP_TYPE_SK_STORAGE:
                    storage.append(m)
                m = lib.bpf_object__next_map(obj, m)
            if len(storage) > 1:
                raise SimulationError(f"{object_path}: more than one sk-storage map (which holds the phase?)")
            if len(maps) != 1:
                raise SimulationError(f"{object_path}: expected one struct_ops map, found {len(maps)}")
            smap = maps[0]
            lib.bpf_map__set_map_flags(smap, lib.bpf_map__map_flags(smap) | BPF_F_LINK)
            if lib.bpf_object__load(obj) != 0:
                raise _fail(f"the kernel refused {Path(object_path).name}")
            if storage:
                self._phase_map = (lib.bpf_map__fd(storage[0]), lib.bpf_map__value_size(storage[0]))
            link = lib.bpf_map__attach_struct_ops(smap)
            if not link:
                raise _fail(f"registering {name}")
            self._link = link
            if lib.bpf_link__fd(link) == lib.bpf_map__fd(smap):
                # libbpf 1.1: a pseudo-link over the map (its "detach" deletes the map element,
                # which a BPF_F_LINK map refuses); create the real link ourselves.
                lib.bpf_link__disconnect(link)
                lib.bpf_link__destroy(link)
                self._link = None
                self._link_fd = _link_create(lib.bpf_map__fd(smap))
        except BaseException:
            self.close()
            raise

    @property
    def has_phases(self) -> bool:
        """The port exports its phase per socket (its object has a sk-storage map)."""
        return self._phase_map is not None

    def phase_code(self, sock_fd: int) -> int | None:
        """The phase code the port holds for the socket with descriptor ``sock_fd`` (an index into
        the registry's phase table of the algorithm), or None when it has none (the port has no
        phase map, or the socket has no state yet: before init, or the kernel refused it)."""
        if self._phase_map is None or self._obj is None:
            return None
        fd, size = self._phase_map
        key = ctypes.c_int(sock_fd)
        value = ctypes.create_string_buffer(size)
        if _libbpf().bpf_map_lookup_elem(fd, ctypes.byref(key), value) != 0:
            return None
        return int.from_bytes(value.raw[:4], sys.byteorder)  # a u32 in the kernel's byte order

    def close(self) -> None:
        """Unregister (destroy the link) and free the object; safe to call twice."""
        lib = _libbpf()
        if self._link_fd is not None:
            os.close(self._link_fd)
            self._link_fd = None
        if self._link is not None:
            lib.bpf_link__destroy(self._link)
            self._link = None
        if self._obj is not None:
            lib.bpf_object__close(self._obj)
            self._obj = None
        self._phase_map = None

    def __enter__(self) -> StructOpsLink:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
