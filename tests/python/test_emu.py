"""The emu backend: emulator accuracy, the Toonk BBR blog's effect on the kernel, clean-up, errors.

Tests that need root and network namespaces skip with the reason when those are missing (CI runs
as root, so they run there). They are kept short; the whole file takes about 1.5 minutes on 2 cores.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from bbrlab.core.algorithms import lookup
from bbrlab.emu import netns
from bbrlab.emu.traffic import TCP_INFO_LEN, tcp_info

if TYPE_CHECKING:
    from bbrlab.emu.network import Network

REPO = Path(__file__).resolve().parents[2]


def _emu_unavailable() -> str | None:
    try:
        netns.check_environment()
    except netns.EmuUnavailable as e:
        return str(e)
    r = subprocess.run(["ip", "netns", "add", "bbrlab-probe-test"], capture_output=True, text=True)
    if r.returncode != 0:
        return f"`ip netns add` does not work here: {r.stderr.strip()}"
    subprocess.run(["ip", "netns", "delete", "bbrlab-probe-test"], capture_output=True)
    return None


_REASON = _emu_unavailable()
needs_emu = pytest.mark.skipif(_REASON is not None, reason=f"emu backend unavailable: {_REASON}")


def _write(tmp_path: Path, text: str, name: str = "emu-test") -> Path:
    """A scenario file called ``name`` with ``text`` after its name line."""
    p = tmp_path / f"{name}.toml"
    p.write_text(f'name = "{name}"\n' + text)
    return p


def _scenario(tmp_path: Path, text: str, name: str = "emu-test"):
    from bbrlab.scenario import load_scenario

    p = _write(tmp_path, text, name)
    return load_scenario(p), p


def _cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``bbrlab ARGS`` in a child process, its output captured."""
    return subprocess.run([sys.executable, "-m", "bbrlab", *args], capture_output=True, text=True, timeout=timeout)


def _run_pids(comm: str, owner: int | None = None) -> list[int]:
    """Processes called ``comm`` (bbrlab-linkemu, bbrlab-udpflow) of the runs of process ``owner``
    (default: this one), told apart by their config file on their command line, in the owner's
    scratch directory. Other runs on the machine (another checkout's tests) have their own: they
    are neither counted nor killed here."""
    pid = os.getpid() if owner is None else owner
    mark = f"@{tempfile.gettempdir()}/{netns.scratch_prefix(pid)}".encode()
    pids = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if (d / "comm").read_text().strip() == comm and mark in (d / "cmdline").read_bytes():
                    pids.append(int(d.name))
            except OSError:
                pass
    return pids


def _linkemu_pids(owner: int | None = None) -> list[int]:
    """The emulator processes of process ``owner``'s runs (default: this one's)."""
    return _run_pids("bbrlab-linkemu", owner)


def _assert_clean(owner: int | None = None) -> None:
    """Nothing of process ``owner``'s runs (default: this one) is left: namespaces, TUNs, emulators."""
    owner = os.getpid() if owner is None else owner
    left = netns.leftovers(owner)
    assert left == {"netns": [], "tun": [], "scratch": []}, f"left behind: {left}"
    stray = _linkemu_pids(owner)
    assert not stray, f"emulator processes left: {stray}"


def _stop_emulator(net: Network) -> list[str]:
    """Stop the link emulator of ``net`` (an ``open_network`` result) and return the lines of
    its statistics file (one JSON object each, the last one the final counters)."""
    net.emu.stdin.write(b"stop\n")
    net.emu.stdin.flush()
    net.emu.wait(timeout=5)
    return net.stats_path.read_text().splitlines()


# ------------------------------------------------------------------ no privileges needed


def test_tcp_info_layout_size():
    # struct tcp_info up to total_rto_time (Linux 6.7+): 248 bytes.
    assert TCP_INFO_LEN == 248


def test_package_carries_no_rust_source():
    """The emulator is compiled into bbrlab._core; the Python package holds no second copy of it."""
    pkg = REPO / "python" / "bbrlab"
    rust = [
        str(p.relative_to(pkg)) for p in pkg.rglob("*") if p.suffix == ".rs" or p.name in ("Cargo.toml", "Cargo.lock")
    ]
    assert not rust, f"Rust sources inside the Python package: {rust}"


#: What a helper process that must start fast may not import (slow to load).
HEAVY_PACKAGES = ("pydantic", "numpy", "pandas", "matplotlib", "pyarrow")


def _check_imports_nothing_heavy(module: str, args: list[str], exit_code: int, heavy: tuple[str, ...]) -> str:
    """Runs ``python -m MODULE ARGS`` (through runpy, in a fresh interpreter), checks that it
    exits with ``exit_code`` having imported none of ``heavy`` (packages, or modules by full
    name), and returns its stdout (the emulator's and the sources' tests share this)."""
    code = (
        f"import sys, runpy; sys.argv = {[module.rsplit('.', 1)[-1], *args]!r}\n"
        f"try:\n    runpy.run_module({module!r}, run_name='__main__')\n"
        f"except SystemExit as e:\n    assert e.code == {exit_code}, e.code\n"
        f"heavy = sorted(m for m in sys.modules if m.split('.')[0] in {heavy!r} or m in {heavy!r})\n"
        "print('HEAVY', heavy)"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().splitlines()[-1] == "HEAVY []", r.stdout
    return r.stdout


def test_emulator_process_imports_only_the_core():
    """`python -m bbrlab.emu.linkemu` must start fast: no pydantic, numpy, pandas or matplotlib."""
    out = _check_imports_nothing_heavy("bbrlab.emu.linkemu", ["--version"], 0, HEAVY_PACKAGES)
    assert "bbrlab-linkemu " in out, out


def test_emulator_errors_are_one_line(monkeypatch, tmp_path):
    from bbrlab.emu.launch import emulator_launch
    from bbrlab.errors import SimulationError

    r = subprocess.run(
        [sys.executable, "-m", "bbrlab.emu.linkemu", "--config", "{}"], capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [
        # The dumbbell's lists (a graph run gives `graph` instead).
        "bbrlab-linkemu: senders and sender_addrs must be non-empty lists of the same length"
    ], r.stderr
    monkeypatch.setenv("BBRLAB_LINKEMU", str(tmp_path / "nowhere"))
    with pytest.raises(SimulationError, match="BBRLAB_LINKEMU=.*not an executable file"):
        emulator_launch()
    # An extension built before the emulator moved into it (a stale editable install).
    import types

    import bbrlab

    monkeypatch.delenv("BBRLAB_LINKEMU")
    monkeypatch.setattr(bbrlab, "_core", types.ModuleType("bbrlab._core"), raising=False)
    monkeypatch.setitem(sys.modules, "bbrlab._core", bbrlab._core)
    with pytest.raises(SimulationError, match="predates the built-in link emulator; rebuild it: pip install ."):
        emulator_launch()


def test_without_root_one_line_error_exit_2(tmp_path):
    scn = tmp_path / "s.toml"
    scn.write_text(
        'duration = "1s"\n[topology]\nbottleneck = { rate = "10Mbps", rtt = "10ms" }\n[[flows]]\ncc = "cubic"\n'
    )
    args = ["run", str(scn), "--backend", "emu", "--out", str(tmp_path / "o")]
    if os.geteuid() == 0:
        # As root, pretend not to be (this machine's Python may not be readable by other users).
        code = f"import os; os.geteuid = lambda: 1000; from bbrlab.cli import main; main({args!r})"
        cmd = [sys.executable, "-c", code]
    else:
        cmd = [sys.executable, "-m", "bbrlab", *args]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and "root" in lines[0], r.stderr
    assert not (tmp_path / "o").exists()


# ------------------------------------------------------------------ accuracy


def _network(tmp_path: Path, toml: str):
    from bbrlab.emu.network import open_network
    from bbrlab.emu.plan import emu_settings

    scn, _ = _scenario(tmp_path, toml)
    tb = netns.Testbed()
    tb.__enter__()
    net = open_network(tb, scn.resolve(), emu_settings(scn), tmp_path)
    return tb, net


def _in_ns(ns: str, fn):
    out: dict = {}

    def run():
        try:
            netns.enter_netns(ns)
            out["v"] = fn()
        except BaseException as e:  # re-raised in the caller
            out["e"] = e

    t = threading.Thread(target=run)
    t.start()
    t.join(60)
    if "e" in out:
        raise out["e"]
    return out["v"]


@needs_emu
@pytest.mark.parametrize("rtt_ms", [10.0, 40.0])
def test_handshake_rtt_matches_configured_rtt(tmp_path, rtt_ms):
    toml = f'duration = "5s"\n[topology]\nbottleneck = {{ rate = "100Mbps", rtt = "{rtt_ms}ms" }}\n[[flows]]\ncc = "cubic"\n'
    tb, net = _network(tmp_path, toml)
    try:
        ls = _in_ns(net.rns, lambda: socket.create_server((net.receiver_ip, 6000), backlog=64))

        def handshakes():
            # The kernel's own measurement of the handshake (SYN -> SYN-ACK, in us, first
            # tcpi_rtt sample after connect) and, for information, the wall time of connect().
            rtts, walls = [], []
            for _ in range(15):
                s = socket.socket()
                t = time.perf_counter()
                s.connect((net.receiver_ip, 6000))
                walls.append((time.perf_counter() - t) * 1e3)
                rtts.append(tcp_info(s)["rtt"] / 1e3)
                s.close()
            return rtts, walls

        rtts, walls = _in_ns(net.sender_ns[0], handshakes)
        print(f"connect() wall time median {statistics.median(walls):.3f} ms")
        ls.close()
    finally:
        tb.close()
    med = statistics.median(rtts)
    tol = max(0.01 * rtt_ms, 0.2)
    print(f"handshake RTT {rtt_ms} ms configured: median {med:.3f} ms, min {min(rtts):.3f}, max {max(rtts):.3f}")
    assert abs(med - rtt_ms) <= tol, f"median handshake RTT {med:.3f} ms vs {rtt_ms} ms (tolerance {tol} ms): {rtts}"
    _assert_clean()


@needs_emu
def test_emulator_child_is_named_realtime_and_runs_the_builtin_core(tmp_path, monkeypatch):
    """The emulator runs as `python -m bbrlab.emu.linkemu` (the core's copy, not a separate
    binary), calls itself bbrlab-linkemu, and keeps the timing set-up it had as a binary."""
    from bbrlab.emu.network import EMU_RT_PRIORITY

    monkeypatch.delenv("BBRLAB_LINKEMU", raising=False)
    tb, net = _network(
        tmp_path,
        'duration = "2s"\n[topology]\nbottleneck = { rate = "10Mbps", rtt = "10ms" }\n[[flows]]\ncc = "cubic"\n',
    )
    try:
        pid = net.emu.pid
        assert net.ready["pid"] == pid
        proc = Path(f"/proc/{pid}")
        comm = (proc / "comm").read_text().strip()
        cmdline = (proc / "cmdline").read_bytes().split(b"\0")
        exe = os.path.realpath(proc / "exe")
        policy, prio = os.sched_getscheduler(pid), os.sched_getparam(pid).sched_priority
        slack = int((proc / "timerslack_ns").read_text()) if (proc / "timerslack_ns").exists() else 1
    finally:
        tb.close()
    assert comm == "bbrlab-linkemu"
    assert cmdline[1:3] == [b"-m", b"bbrlab.emu.linkemu"], cmdline
    assert exe == os.path.realpath(sys.executable)
    assert net.ready["realtime"] is True
    assert (policy, prio) == (os.SCHED_FIFO, EMU_RT_PRIORITY)
    assert slack <= 1  # PR_SET_TIMERSLACK 1 ns (recent kernels report 0 for real-time tasks)
    _assert_clean()


def _udp_counters(ns: str, proto: str = "Udp:") -> dict[str, int]:
    text = subprocess.run(["ip", "netns", "exec", ns, "cat", "/proc/net/snmp"], capture_output=True, text=True).stdout
    lines = [line.split() for line in text.splitlines() if line.startswith(proto)]
    return dict(zip(lines[0][1:], map(int, lines[1][1:])))


@needs_emu
def test_loss_within_binomial_bounds(tmp_path):
    p, n = 0.015, 40_000
    toml = f'duration = "5s"\n[topology]\nbottleneck = {{ rate = "200Mbps", rtt = "2ms", buffer = "20MB", loss = "{p * 100}%" }}\n[[flows]]\ncc = "cubic"\n'
    tb, net = _network(tmp_path, toml)
    try:
        rs = _in_ns(net.rns, lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM))
        _in_ns(net.rns, lambda: rs.bind((net.receiver_ip, 6001)))
        before = _udp_counters(net.rns, "Ip:")

        def blast():
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            payload = b"x" * 100
            sent = 0
            while sent < n:
                for _ in range(100):
                    s.sendto(payload, (net.receiver_ip, 6001))
                    sent += 1
                time.sleep(0.002)  # about 50k packets/s, well under the link and TUN capacity
            return sent

        sent = _in_ns(net.sender_ns[0], blast)
        time.sleep(0.3)
        after = _udp_counters(net.rns, "Ip:")
        rs.close()
        final = [json.loads(line) for line in _stop_emulator(net) if '"final"' in line][0]
    finally:
        tb.close()
    # Arrivals counted by the receiving host's IP layer (the never-read UDP socket overflows on
    # purpose; its counters are not the link's business).
    arrived = after["InReceives"] - before["InReceives"]
    # Loss is judged on what entered the emulator (a packet the sender's own stack dropped is not
    # the link's doing); the emulator's random-loss counter must agree with the end-to-end count.
    entered = min(sent, final["forward_per_sender"][0]["rx_pkts"])
    lost = entered - arrived
    print(f"sent {sent} entered {entered} arrived {arrived}; emulator: {final}")
    assert abs(lost - final["forward_per_sender"][0]["random_losses"]) <= 5 + final["write_errors"]
    mean, sd = n * p, math.sqrt(n * p * (1 - p))
    n = entered
    mean, sd = n * p, math.sqrt(n * p * (1 - p))
    print(f"loss {p:.3%} configured: {lost}/{n} = {lost / n:.3%} measured (expected {mean:.0f} ± {sd:.1f})")
    assert abs(lost - mean) <= 4 * sd, f"{lost} losses of {n}; binomial {mean:.0f} ± 4×{sd:.1f}"
    _assert_clean()


@needs_emu
def test_ect1_rewrite_ce_marks_and_queue_sojourn_reach_the_wire(tmp_path):
    """Sender 0 is an ECT(1) sender (its ECT(0) datagrams leave the emulator as ECT(1)), sender 1
    is not (ECT(0) stays); with an ECN threshold of 0 waiting packets a burst is CE-marked in the
    header; the queue rows carry the discipline's drops by cause and sojourn statistics."""
    from bbrlab.emu.network import open_network
    from bbrlab.emu.plan import emu_settings

    toml = 'duration = "5s"\n[topology]\nbottleneck = { rate = "10Mbps", rtt = "2ms" }\n[[flows]]\ncc = "cubic"\n[[flows]]\ncc = "cubic"\n'
    scn, _ = _scenario(tmp_path, toml)
    settings = emu_settings(scn)
    settings["ect1_senders"] = [0]
    # A buffer for the whole burst (a 2 ms x 10 Mbit/s BDP holds two packets).
    settings["forward"] |= {"qdisc": {"kind": "droptail"}, "ecn_threshold_packets": 0, "limit_bytes": 100_000}
    tb = netns.Testbed()
    tb.__enter__()
    try:
        net = open_network(tb, scn.resolve(), settings, tmp_path)
        net.emu.stdin.write(f"start {time.monotonic_ns()}\n".encode())
        net.emu.stdin.flush()

        def receiver():
            r = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            r.setsockopt(socket.IPPROTO_IP, socket.IP_RECVTOS, 1)
            r.bind((net.receiver_ip, 6002))
            r.settimeout(2.0)
            return r

        rs = _in_ns(net.rns, receiver)

        def send(n: int, gap_s: float) -> None:
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, 0x02)  # ECT(0), as Linux TCP sends
            for i in range(n):
                s.sendto(bytes([i]) * 1000, (net.receiver_ip, 6002))
                time.sleep(gap_s)

        _in_ns(net.sender_ns[1], lambda: send(5, 0.02))  # 0.8 ms each at 10 Mbit/s: none waits
        _in_ns(net.sender_ns[0], lambda: send(30, 0.0))  # a burst: all but the first few wait
        seen: dict[str, list[int]] = {}
        for _ in range(35):
            _, anc, _, (src, _) = rs.recvmsg(2000, socket.CMSG_SPACE(1))
            tos = [d[0] for lvl, typ, d in anc if lvl == socket.IPPROTO_IP and typ == socket.IP_TOS]
            seen.setdefault(src, []).append(tos[0] & 3)
        rs.close()
        time.sleep(0.25)
        rows = [json.loads(line) for line in _stop_emulator(net)]
    finally:
        tb.close()
    s0, s1 = net.sender_ip(0), net.sender_ip(1)
    print(f"codepoints: sender 0 {seen[s0]}, sender 1 {seen[s1]}")
    assert seen[s1] == [2] * 5, "ECT(0) of a classic sender must pass unchanged"
    assert set(seen[s0]) == {1, 3} and seen[s0][0] == 1, "ECT(1) sender: ECT(1), CE once queued"
    q = [r for r in rows if r.get("queue") == "bottleneck"]
    final = [r for r in rows if r.get("final")][0]
    assert sum(seen[s0]) - len(seen[s0]) == 2 * final["forward_per_sender"][0]["ce_marks"]
    assert q[-1]["ce_marks"] == seen[s0].count(3) and q[-1]["drops_aqm"] == 0
    p99 = max(r["sojourn_p99_ns"] or 0 for r in q)
    # 30 datagrams of 1066 B wire size at 10 Mbit/s: the last waits about 29 x 0.85 ms.
    assert 10e6 < p99 < 30e6, p99
    _assert_clean()


def _run_emu(tmp_path, toml, name="emu-test"):
    from bbrlab.engine.runner import run

    scn, _ = _scenario(tmp_path, toml, name)
    return run(scn, backend="emu")


def _fifo_threads() -> list[int]:
    """rt_priority of this process's threads under SCHED_FIFO (proc(5): stat fields 40, 41)."""
    prios = []
    for task in Path("/proc/self/task").iterdir():
        try:
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # the thread ended
        rt_priority, policy = int(fields[37]), int(fields[38])
        if policy == os.SCHED_FIFO:
            prios.append(rt_priority)
    return prios


@needs_emu
def test_traffic_threads_run_realtime_below_the_emulator(tmp_path):
    # A sender or receiver thread preempted inside send()/recv() owns its socket, and the
    # packets arriving meanwhile are answered together (a 105-segment ACK after a 22 ms stall
    # at load 17: docs/fidelity.md, the policer). Both threads run SCHED_FIFO, below the
    # emulator, as the UDP transport's halves do.
    from bbrlab.emu.network import EMU_RT_PRIORITY
    from bbrlab.emu.traffic import TCP_RT_PRIORITY

    seen: list[int] = []
    done = threading.Event()

    def watch():
        while not done.is_set():
            seen[:] = max(seen, _fifo_threads(), key=len)
            time.sleep(0.05)

    w = threading.Thread(target=watch)
    w.start()
    try:
        _run_emu(
            tmp_path,
            'duration = "2s"\n[topology]\nbottleneck = { rate = "20Mbps", rtt = "10ms" }\n[[flows]]\ncc = "cubic"\n',
        )
    finally:
        done.set()
        w.join()
    assert 0 < TCP_RT_PRIORITY < EMU_RT_PRIORITY
    assert seen == [TCP_RT_PRIORITY, TCP_RT_PRIORITY], f"SCHED_FIFO threads' priorities during the run: {seen}"
    assert _fifo_threads() == [], "the caller's own thread must stay normally scheduled"


@needs_emu
def test_bulk_goodput_matches_rate(tmp_path):
    res = _run_emu(
        tmp_path,
        'duration = "6s"\n[topology]\nbottleneck = { rate = "100Mbps", rtt = "20ms", buffer = "1bdp" }\n[[flows]]\ncc = "cubic"\n',
    )
    ts = res.timeseries
    # The median interval, not the mean: the link's rate is what is checked, and one loss episode of
    # the kernel's TCP (an RTO on a busy CI machine cost a mean 11 % once, every interval but a few
    # at the full rate) is TCP's, not the emulator's. A wrong rate moves every interval.
    after = ts[ts["t_s"] > 2.0]["goodput_bps"]
    steady = after.median()
    # The emulator charges IP length + 38 B framing per packet (as the simulator); with 1448 B of
    # payload per 1500 B IP packet the payload share of the link rate is 1448/1538.
    expected = 100e6 * 1448 / 1538
    print(
        f"goodput median {steady / 1e6:.2f} Mbit/s (mean {after.mean() / 1e6:.2f}) vs payload rate "
        f"{expected / 1e6:.2f} Mbit/s ({steady / expected - 1:+.2%}); per interval: "
        + " ".join(f"{x / 1e6:.1f}" for x in after)
    )
    assert abs(steady / expected - 1) <= 0.03
    q = res.queue[res.queue["queue"] == "bottleneck"]
    assert q["utilization"].iloc[25:].median() > 0.97
    assert res.summary["run"]["backend"] == "emu"
    assert res.summary["run"]["emu"]["sysctls"]["tcp_wmem"]
    # The loop sleeps on its timer between packets: those sleeps' wake-up lateness is measured,
    # and every stall listed carries its interval's, and its sleep overrun (bbrlab.emu.stalls).
    em = res.summary["run"]["emu"]["emulator"]
    print({k: em[k] for k in ("timed_wakes", "late_wakes", "wake_late_mean_ns", "wake_late_max_ns", "stalls")})
    assert em["timed_wakes"] > 1000 and 0 < em["wake_late_mean_ns"] <= em["wake_late_max_ns"]
    assert all(len(s) == 4 for s in em["stalls"])
    _assert_clean()


@needs_emu
@pytest.mark.parametrize("cc,check", [("cubic", lambda g: g < 5e6), ("bbr", lambda g: g > 80e6)])
def test_blog_effect_cubic_collapses_bbr_holds_at_1_5_percent_loss(tmp_path, cc, check):
    # 100 Mbit/s, 40 ms, 1 BDP, 1.5 % loss. 10 s instead of 20-30 s: cubic is at its loss-limited
    # rate within the first second and bbr leaves startup after about 0.5 s, so 10 s averages are
    # already an order of magnitude apart; the full-length version is `bbrlab compare`.
    res = _run_emu(
        tmp_path,
        'duration = "10s"\n[topology]\nbottleneck = { rate = "100Mbps", rtt = "40ms", buffer = "1bdp", loss = "1.5%" }\n'
        f'[[flows]]\ncc = "{cc}"\n',
        name=f"blog-{cc}",
    )
    g = float(res.flows["goodput_bps"].iloc[0])
    print(f"{cc}: {g / 1e6:.2f} Mbit/s at 1.5 % loss")
    assert check(g), f"{cc} got {g / 1e6:.2f} Mbit/s"
    # Retransmissions by cause from the sender namespace's MIB (bbrlab.emu.mib): random loss is
    # repaired by fast retransmits in recovery episodes, and the causes account for the socket's
    # total_retrans (TCPFastRetrans counts a split skb's segments a little differently).
    f = res.flows.iloc[0]
    causes = {c: int(f[c]) for c in ("retrans_fast", "retrans_rto", "retrans_tlp", "tlp_probes", "recoveries")}
    print(f"{cc}: retransmits {int(f['retransmits'])} by cause {causes}, lost_retrans {int(f['lost_retrans'])}")
    assert causes["retrans_fast"] > 0 and causes["recoveries"] > 0
    assert min(int(f[c]) for c in ("lost_retrans", "undos", "spurious_rtos", "dsack_dups")) >= 0
    by_cause = causes["retrans_fast"] + causes["retrans_rto"] + causes["retrans_tlp"]
    assert abs(by_cause - int(f["retransmits"])) <= 0.01 * int(f["retransmits"]) + 3
    _assert_clean()


# ------------------------------------------------------------------ clean-up


def _start_cli_run(path: Path, tmp_path: Path) -> subprocess.Popen[str]:
    """``bbrlab run PATH --backend emu --out tmp_path/o -q`` started in ``tmp_path``, its output
    piped, for a test to interrupt (the dumbbell's and the graph's clean-up tests share this)."""
    return subprocess.Popen(
        [sys.executable, "-m", "bbrlab", "run", str(path), "--backend", "emu", "--out", str(tmp_path / "o"), "-q"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )


def _check_sigkill_leaves_no_helper_behind(path: Path, tmp_path: Path, comm: str, count: int) -> None:
    """Starts ``bbrlab run PATH --backend emu``, waits until it has started ``count`` helper
    processes called ``comm`` (the UDP transport's halves, the traffic sources), SIGKILLs the runner
    with traffic flowing, and checks that the guardian leaves nothing of the run behind:
    namespaces, TUNs, scratch directories and those processes (the UDP and traffic tests share this)."""
    p = _start_cli_run(path, tmp_path)
    deadline = time.time() + 60
    while time.time() < deadline and len(_run_pids(comm, p.pid)) < count:
        time.sleep(0.1)
    if len(_run_pids(comm, p.pid)) < count:
        p.kill()
        pytest.fail(f"the run never started its {comm} processes: {p.communicate()[1][-500:]}")
    time.sleep(2.0)  # traffic flowing
    p.send_signal(signal.SIGKILL)
    p.wait(timeout=30)
    deadline = time.time() + 15
    while time.time() < deadline and (any(netns.leftovers(p.pid).values()) or _run_pids(comm, p.pid)):
        time.sleep(0.1)
    assert netns.leftovers(p.pid) == {"netns": [], "tun": [], "scratch": []}
    assert not _run_pids(comm, p.pid)


def _check_cleanup_after_exception_and_emulator_death(scn) -> None:
    """Runs ``scn`` (at least a second long) twice on the emu backend: once raising from the
    progress callback, once SIGKILLing the emulators half a second in. Each run must fail with
    its own error and leave nothing behind (the dumbbell's and the graph's tests share this)."""
    from bbrlab.emu.runner import run_emu
    from bbrlab.errors import SimulationError

    def boom(now, end):
        if now > 0.5e9:
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        run_emu(scn, progress=boom)
    _assert_clean()

    def kill_emulator(now, end):
        if now > 0.5e9:
            for pid in _linkemu_pids():
                os.kill(pid, signal.SIGKILL)

    with pytest.raises(SimulationError, match="emulator exited"):
        run_emu(scn, progress=kill_emulator)
    _assert_clean()


@needs_emu
def test_cleanup_after_exception_and_after_emulator_death(tmp_path):
    scn, _ = _scenario(
        tmp_path,
        'duration = "5s"\n[topology]\nbottleneck = { rate = "50Mbps", rtt = "20ms" }\n[[flows]]\ncc = "bbr"\n[[flows]]\ncc = "cubic"\n',
    )

    _check_cleanup_after_exception_and_emulator_death(scn)


@needs_emu
def test_cleanup_after_sigint_to_cli(tmp_path):
    _, path = _scenario(
        tmp_path,
        'duration = "30s"\n[topology]\nbottleneck = { rate = "50Mbps", rtt = "20ms" }\n[[flows]]\ncc = "cubic"\n',
    )
    p = _start_cli_run(path, tmp_path)
    deadline = time.time() + 30
    while time.time() < deadline and not netns.leftovers(p.pid)["netns"]:
        time.sleep(0.1)
    assert netns.leftovers(p.pid)["netns"], "the run never created its namespaces"
    time.sleep(1.5)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=30)
    assert p.returncode == 130, err
    assert err.strip().splitlines()[-1] == "error: interrupted"
    assert not (tmp_path / "o").exists()
    _assert_clean(p.pid)


@needs_emu
def test_cli_run_writes_emu_run_directory(tmp_path):
    _, path = _scenario(
        tmp_path,
        'duration = "2s"\n[topology]\nbottleneck = { rate = "20Mbps", rtt = "20ms" }\n[[flows]]\ncc = "bbr"\n[[flows]]\ncc = "cubic"\nstart = "0.5s"\n',
    )
    out = tmp_path / "run"
    p = subprocess.Popen(
        [sys.executable, "-m", "bbrlab", "run", str(path), "--backend", "emu", "--out", str(out), "-q"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    _, err = p.communicate(timeout=120)
    assert p.returncode == 0, err
    s = json.loads((out / "summary.json").read_text())
    assert s["run"]["backend"] == "emu"
    assert [f["cc"] for f in s["flows"]] == ["bbr1", "cubic"]
    from bbrlab.results.results import Result

    res = Result.load(out)
    ts = res.timeseries
    bbr = ts[ts["flow"] == 0]
    phases = set(bbr["phase"].astype(str)) - {"-"}  # "-": before the handshake completed
    assert (bbr["bw_bps"].dropna() > 0).any() and "startup" in phases and phases <= set(lookup("bbr1").phases)
    assert len(ts) == 2 * 20 and set(res.queue["queue"].astype(str)) == {"bottleneck", "bottleneck_rev"}
    assert (out / "goodput.png").exists()
    _assert_clean(p.pid)


# ------------------------------------------------------------------ the installed wheel


def _without_rust_path(stub_dir: Path, marker: Path) -> str:
    """PATH with cargo/rustc/rustup gone: directories holding them are dropped (unless they also
    hold `ip`, a system directory), and stubs that record any call and fail come first."""
    names = ("cargo", "rustc", "rustup")
    for name in names:
        stub = stub_dir / name
        stub.write_text(f'#!/bin/sh\necho "{name} $*" >> "{marker}"\nexit 127\n')
        stub.chmod(0o755)
    keep = [
        d
        for d in os.environ.get("PATH", "").split(os.pathsep)
        if d and (not any((Path(d) / n).exists() for n in names) or (Path(d) / "ip").exists())
    ]
    return os.pathsep.join([str(stub_dir), *keep])


@pytest.fixture(scope="session")
def wheel(tmp_path_factory) -> Path:
    """The package built as a wheel, once per session, as a user would: `pip wheel . --no-deps`.

    Reuses maturin from this environment when it has it (no download; cargo's target/ from the
    editable install makes it an incremental build: seconds); otherwise pip fetches maturin."""
    import importlib.util

    out = tmp_path_factory.mktemp("wheel")
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "wheel",
        str(REPO),
        "-w",
        str(out),
        "--no-deps",
        "-q",
        "--disable-pip-version-check",
    ]
    if importlib.util.find_spec("maturin") is not None:
        cmd.append("--no-build-isolation")
    t = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0, f"building the wheel failed:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    wheels = list(out.glob("bbrlab-*.whl"))
    assert len(wheels) == 1, wheels
    print(f"wheel built in {time.perf_counter() - t:.1f} s: {wheels[0].name}")
    return wheels[0]


@needs_emu
def test_wheel_runs_emu_backend_without_rust_cache_or_network(tmp_path, wheel):
    """A wheel in a new venv, with no cargo/rustc on PATH, an empty HOME and (with `unshare`) no
    network, runs `bbrlab run examples/quick.toml --backend emu`: the emulator is in the wheel."""
    import zipfile

    names = zipfile.ZipFile(wheel).namelist()
    assert not [n for n in names if n.endswith(".rs") or n.endswith("Cargo.toml")], "Rust source in the wheel"
    assert any(n.startswith("bbrlab/_core") for n in names)
    # The BPF ports are compiled on the user's machine: their sources travel in the wheel.
    from bbrlab.emu import bpf

    for src in [*bpf.SRC_DIR.glob("*.bpf.c"), *bpf.SRC_DIR.glob("*.h")]:
        assert f"bbrlab/emu/bpf/src/{src.name}" in names, f"{src.name} is not in the wheel"
    assert "bbrlab/emu/bpf/src/dctcp.bpf.c" in names

    import pip

    venv = tmp_path / "venv"
    py = venv / "bin" / "python"
    # pip >= 22.3 installs into another environment (--python): a venv without its own pip, 8 s faster.
    outer_pip = tuple(int(x) for x in pip.__version__.split(".")[:2]) >= (22, 3)
    subprocess.run(
        [sys.executable, "-m", "venv", *(["--without-pip"] if outer_pip else []), str(venv)], check=True, timeout=300
    )
    installer = [sys.executable, "-m", "pip", "--python", str(py)] if outer_pip else [str(py), "-m", "pip"]
    subprocess.run(
        [*installer, "install", "-q", "--disable-pip-version-check", "--no-deps", "--no-index", str(wheel)],
        check=True,
        timeout=300,
    )
    # The runtime dependencies (pydantic, numpy, pandas, ...) come from this environment's
    # site-packages, listed *after* the venv's own in a .pth: plain path entries, so an editable
    # bbrlab there (a .pth of its own) is not processed, and the wheel's bbrlab comes first anyway.
    import site

    venv_site = Path(
        subprocess.run(
            [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    deps = [p for p in site.getsitepackages() if Path(p).is_dir()]
    (venv_site / "zz_bbrlab_test_deps.pth").write_text("\n".join(deps) + "\n")

    home, mpl, cwd, stubs = (tmp_path / d for d in ("home", "mpl", "cwd", "stubs"))
    for d in (home, mpl, cwd, stubs):
        d.mkdir()
    marker = tmp_path / "rust-called"
    path = f"{venv / 'bin'}{os.pathsep}{_without_rust_path(stubs, marker)}"
    env = {"PATH": path, "HOME": str(home), "MPLCONFIGDIR": str(mpl), "LANG": "C.UTF-8"}
    for tool in ("cargo", "rustc"):
        assert shutil.which(tool, path=path) == str(stubs / tool)

    r = subprocess.run(
        [str(py), "-c", "import bbrlab, bbrlab._core as c; print(bbrlab.__file__); print(c.__file__)"],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    for f in r.stdout.split():
        assert Path(f).is_relative_to(venv_site), f"bbrlab imported from {f}, not from the wheel in {venv_site}"

    unshare = ["unshare", "--net", "--"] if shutil.which("unshare") else []
    cmd = [
        *unshare,
        str(venv / "bin" / "bbrlab"),
        "run",
        str(REPO / "examples" / "quick.toml"),
        "--backend",
        "emu",
        "--set",
        "duration=3s",
        "--out",
        str(cwd / "run"),
        "-q",
    ]
    t = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=cwd)
    out, err = p.communicate(timeout=300)  # unshare execs bbrlab: p.pid is the run's pid
    print(f"{'unshare --net: ' if unshare else ''}run took {time.perf_counter() - t:.1f} s")
    assert p.returncode == 0, f"rc {p.returncode}\n{out[-2000:]}\n{err[-2000:]}"
    assert not marker.exists(), f"cargo/rustc was called: {marker.read_text()}"
    assert list(home.iterdir()) == [], f"files written under HOME (a cache?): {list(home.rglob('*'))}"

    s = json.loads((cwd / "run" / "summary.json").read_text())
    emu = s["run"]["emu"]
    assert s["run"]["backend"] == "emu"
    exe, _, rest = emu["linkemu"].partition(" ")
    assert Path(exe).parent == venv / "bin" and rest.startswith("-m bbrlab.emu.linkemu"), emu["linkemu"]
    assert emu["linkemu_realtime"] is True
    assert s["flows"][0]["goodput_bps"] > 0.5 * 20e6, s["flows"][0]
    _assert_clean(p.pid)
