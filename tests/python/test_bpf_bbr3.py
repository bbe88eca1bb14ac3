"""The BPF port of bbr3_linux (python/bbrlab/emu/bpf/src/bbr3_linux.bpf.c) on the running kernel.

It is compiled with clang against this kernel's BTF, loaded (the verifier must accept every
program), registered under a name unique to this test process, used by a real TCP connection
over loopback, and unregistered again. Skips with the reason without root, clang, bpftool or
kernel BTF (CI has them: `.ci/run` installs clang/libbpf/bpftool).

Registration here is bpftool's (no BPF link), so the test removes it in `finally`; the emu
backend's loader holds a link instead, which the kernel drops even after SIGKILL.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import struct
import subprocess
import threading
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "python/bbrlab/emu/bpf/src/bbr3_linux.bpf.c"
BTF = Path("/sys/kernel/btf/vmlinux")
AVAILABLE = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")
#: TCP_INFO offsets (include/uapi/linux/tcp.h): tcpi_snd_cwnd (u32) and tcpi_pacing_rate (u64).
TCPI_SND_CWND_OFF, TCPI_PACING_RATE_OFF = 80, 104
#: What the connection sends: enough for many rounds of ACKs on loopback.
TRANSFER_BYTES = 16 << 20


def _unavailable() -> str | None:
    if os.geteuid() != 0:
        return "needs root (BPF struct_ops registration)"
    for tool in ("clang", "bpftool"):
        if shutil.which(tool) is None:
            return f"{tool} not installed (apt-get install clang llvm libbpf-dev bpftool)"
    if not BTF.exists():
        return f"kernel has no BTF ({BTF})"
    if not AVAILABLE.exists():
        return f"no {AVAILABLE}"
    return None


_REASON = _unavailable()
pytestmark = pytest.mark.skipif(_REASON is not None, reason=f"BPF unavailable: {_REASON}")


def _run(*cmd: str) -> str:
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise AssertionError(f"{' '.join(cmd[:4])}… failed ({r.returncode}): {(r.stderr or r.stdout)[-3000:]}")
    return r.stdout


def _registered_map_ids(tcp_name: str) -> list[int]:
    """Struct_ops map ids whose TCP name is ``tcp_name`` (bpftool's JSON alternates a map's info
    and its value)."""
    r = subprocess.run(["bpftool", "-j", "struct_ops", "dump", "name", "bbr3_linux"], capture_output=True, text=True)
    if r.returncode != 0 or not r.stdout.strip():
        return []
    ids, map_id = [], None
    for entry in json.loads(r.stdout):
        if "bpf_map_info" in entry:
            map_id = entry["bpf_map_info"]["id"]
        ops = entry.get("bpf_struct_ops_tcp_congestion_ops")
        if ops and ops["data"]["name"] == tcp_name and map_id is not None:
            ids.append(map_id)
    return ids


def _bulk_transfer(tcp_name: str) -> tuple[int, int]:
    """Send TRANSFER_BYTES over loopback with ``tcp_name``; return the sender's (cwnd, pacing
    rate B/s) from TCP_INFO just before it closes."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    received = []

    def sink() -> None:
        conn, _ = srv.accept()
        with conn:
            n = 0
            while chunk := conn.recv(1 << 20):
                n += len(chunk)
            received.append(n)

    t = threading.Thread(target=sink, daemon=True)
    t.start()
    try:
        with socket.socket() as s:
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, tcp_name.encode())
            s.connect(srv.getsockname())
            assert s.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).rstrip(b"\0").decode() == tcp_name
            block = b"\0" * (1 << 20)
            for _ in range(TRANSFER_BYTES // len(block)):
                s.sendall(block)
            info = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 232)
            cwnd = struct.unpack_from("I", info, TCPI_SND_CWND_OFF)[0]
            pacing = struct.unpack_from("Q", info, TCPI_PACING_RATE_OFF)[0]
        t.join(timeout=30)
    finally:
        srv.close()
    assert received == [TRANSFER_BYTES], f"receiver got {received}, expected {TRANSFER_BYTES} bytes"
    return cwnd, pacing


def test_bbr3_linux_loads_registers_carries_a_connection_and_unregisters(tmp_path: Path) -> None:
    tcp_name = f"bbr3t{os.getpid() % 100000}"
    vmlinux = tmp_path / "vmlinux.h"
    vmlinux.write_text(_run("bpftool", "btf", "dump", "file", str(BTF), "format", "c"))
    # libbpf names the object's .bss map after the file (first 8 characters): unique per process.
    obj_stem = f"t{os.getpid() % 10000000}"
    obj = tmp_path / f"{obj_stem}.o"
    _run("clang", "-O2", "-g", "-target", "bpf", "-D__TARGET_ARCH_x86", "-mcpu=v3", "-Wall", "-Werror",
         f"-I{tmp_path}", f'-DBBRLAB_CA_NAME="{tcp_name}"', "-c", str(SRC), "-o", str(obj))
    before = AVAILABLE.read_text().split()
    assert tcp_name not in before
    try:
        # Loading runs the verifier on every program; registration needs all of them.
        _run("bpftool", "struct_ops", "register", str(obj))
        assert tcp_name in AVAILABLE.read_text().split()
        cwnd, pacing = _bulk_transfer(tcp_name)
        # init set SK_PACING_NEEDED and a pacing rate (the kernel's default is ~0 = unpaced),
        # and cong_control grew cwnd from the initial 10 packets as ACKs arrived.
        assert 0 < pacing < (1 << 63), f"pacing rate {pacing} B/s: the program did not pace"
        assert cwnd > 10, f"cwnd {cwnd}: cong_control did not grow it"
        diag = json.loads(_run("bpftool", "-j", "map", "dump", "name", f"{obj_stem}.bss"))
        last = diag[0]["formatted"]["value"][".bss"][0]["bbr3_last_ack"]
        assert last["stamp_us"] > 0 and last["bw"] > 0, f"no per-ACK model update recorded: {last}"
    finally:
        for map_id in _registered_map_ids(tcp_name):
            subprocess.run(["bpftool", "struct_ops", "unregister", "id", str(map_id)], capture_output=True)
    assert tcp_name not in AVAILABLE.read_text().split(), "the test's algorithm is still registered"
