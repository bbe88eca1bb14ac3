"""The BPF port of bbr3_linux (python/bbrlab/emu/bpf/src/bbr3_linux.bpf.c) on the running kernel.

It is compiled with clang against this kernel's BTF, loaded (the verifier must accept every
program), registered under a name unique to this test process, used by a real TCP connection
over loopback, and unregistered again. Skips with the reason without root, clang, bpftool or
kernel BTF (CI has them: `.ci/run` installs clang/libbpf/bpftool).

Registration is the emu backend's (bbrlab.emu.bpf.loader): a struct_ops link this process holds,
which the kernel drops when it closes, even after SIGKILL.
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
    if not any(Path(d, "libbpf.so.1").exists() for d in ("/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib")):
        return "libbpf.so.1 not installed (apt-get install libbpf-dev)"
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


def _bulk_transfer(tcp_name: str) -> tuple[list[int], int]:
    """Send TRANSFER_BYTES over loopback with ``tcp_name``; return the sender's cwnd after each
    1-MB block and its pacing rate (B/s) just before it closes, both from TCP_INFO."""
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
            cwnds = []
            for _ in range(TRANSFER_BYTES // len(block)):
                s.sendall(block)
                info = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 232)
                cwnds.append(struct.unpack_from("I", info, TCPI_SND_CWND_OFF)[0])
            pacing = struct.unpack_from("Q", info, TCPI_PACING_RATE_OFF)[0]
        t.join(timeout=30)
    finally:
        srv.close()
    assert received == [TRANSFER_BYTES], f"receiver got {received}, expected {TRANSFER_BYTES} bytes"
    return cwnds, pacing


def _bss_map_ids() -> set[int]:
    out = json.loads(_run("bpftool", "-j", "map", "show") or "[]")
    return {m["id"] for m in out if str(m.get("name", "")).endswith(".bss")}


def test_bbr3_linux_loads_registers_carries_a_connection_and_unregisters() -> None:
    from bbrlab.emu.bpf.build import build
    from bbrlab.emu.bpf.loader import StructOpsLink, run_ca_name

    obj = build("bbr3_linux")  # compiled as the emu backend compiles it (clang, this kernel's BTF)
    before = AVAILABLE.read_text().split()
    maps_before = _bss_map_ids()
    name = run_ca_name("bbr3_linux")
    # Registered through a link this process holds, as the emu backend does: the kernel drops it
    # when the process dies, even by SIGKILL. Loading runs the verifier on every program.
    with StructOpsLink(obj, name):
        assert name in AVAILABLE.read_text().split()
        cwnds, pacing = _bulk_transfer(name)
        # init set SK_PACING_NEEDED and a pacing rate (the kernel's default is ~0 = unpaced),
        # and cong_control moved cwnd off the initial 10 packets as ACKs arrived. Not "grew":
        # with loopback's 64-KB segments and microsecond RTT the BDP is a packet or two, so
        # BBR's cwnd (2 BDP plus ACK-aggregation headroom) may end below 10 (CI saw 6).
        # With a struct_ops cong_control the kernel runs no cwnd logic of its own, so a
        # program that never wrote cwnd would leave it at 10 throughout.
        assert 0 < pacing < (1 << 63), f"pacing rate {pacing} B/s: the program did not pace"
        assert any(c != 10 for c in cwnds), f"cwnd {cwnds}: cong_control never set it"
        ours = sorted(_bss_map_ids() - maps_before)
        assert ours, "the object's .bss map is not loaded"
        diag = json.loads(_run("bpftool", "-j", "map", "dump", "id", str(ours[-1])))
        last = diag[0]["formatted"]["value"][".bss"][0]["bbr3_last_ack"]
        assert last["stamp_us"] > 0 and last["bw"] > 0, f"no per-ACK model update recorded: {last}"
    assert AVAILABLE.read_text().split() == before, "the test's algorithm is still registered"
