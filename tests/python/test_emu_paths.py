"""The emu backend's path model (issue 30) on real kernel TCP: a scheduled 10x rate step down
in the link emulator, which runs the simulator's `pathmodel::impair` code (crates/emu path.rs).

The scenario front does not take `schedule` on this branch yet, so the test gives the emulator
its link parameters directly (as ``link_plan`` would write them) and drives one TCP flow from
the sender's namespace to the receiver's with plain sockets. Skips where test_emu.py's tests do.
"""

from __future__ import annotations

import json
import socket
import threading
import time

from bbrlab.emu import netns
from test_emu import _assert_clean, _scenario, needs_emu

# The step: 40 -> 4 Mbit/s at 3 s; goodput judged over [5 s, 8 s), 2 s after the change.
RATE_BEFORE_BPS, RATE_AFTER_BPS = 40_000_000, 4_000_000
STEP_AT_S, JUDGE_FROM_S, RUN_S = 3.0, 5.0, 8.0
# The payload share of the link rate: 1448 B of payload per 1500 B IP packet + 38 B framing.
PAYLOAD_SHARE = 1448 / 1538


@needs_emu
def test_kernel_tcp_follows_a_10x_rate_step_down(tmp_path):
    from bbrlab.emu.runner import emu_settings, open_network

    toml = (
        'duration = "8s"\n[topology]\nbottleneck = { rate = "40Mbps", rtt = "20ms", buffer = "1bdp" }\n'
        '[[flows]]\ncc = "cubic"\n'
    )
    scn, _ = _scenario(tmp_path, toml)
    settings = emu_settings(scn)
    settings["forward"]["schedule"] = [{"at_ns": int(STEP_AT_S * 1e9), "rate_bps": RATE_AFTER_BPS}]
    tb = netns.Testbed()
    tb.__enter__()
    marks: list[tuple[float, int]] = []  # (seconds since t0, bytes received so far)
    try:
        net = open_network(tb, scn.resolve(), settings, tmp_path)
        port = 6100
        ready = threading.Event()
        t0_ns = time.monotonic_ns() + 200_000_000

        def receive() -> None:
            netns.enter_netns(net.rns)
            ls = socket.create_server((net.receiver_ip, port))
            ready.set()
            c, _ = ls.accept()
            got = 0
            while True:
                b = c.recv(1 << 16)
                if not b:
                    break
                got += len(b)
                marks.append(((time.monotonic_ns() - t0_ns) / 1e9, got))
            c.close()
            ls.close()

        def send() -> None:
            netns.enter_netns(net.sender_ns[0])
            s = socket.create_connection((net.receiver_ip, port))
            buf = b"x" * (1 << 16)
            s.settimeout(1.0)
            while time.monotonic_ns() < t0_ns + int(RUN_S * 1e9):
                try:
                    s.send(buf)
                except TimeoutError:
                    pass
            s.close()

        rt = threading.Thread(target=receive)
        rt.start()
        assert ready.wait(10)
        net.emu.stdin.write(f"start {t0_ns}\n".encode())
        net.emu.stdin.flush()
        while time.monotonic_ns() < t0_ns:
            time.sleep(0.01)
        st = threading.Thread(target=send)
        st.start()
        st.join(RUN_S + 10)
        rt.join(10)
        net.emu.stdin.write(b"stop\n")
        net.emu.stdin.flush()
        net.emu.wait(timeout=5)
        rows = [json.loads(line) for line in net.stats_path.read_text().splitlines()]
    finally:
        tb.close()

    def received_by(t_s: float) -> int:
        return max((b for t, b in marks if t <= t_s), default=0)

    before = (received_by(STEP_AT_S) - received_by(1.0)) * 8 / (STEP_AT_S - 1.0)
    after = (received_by(RUN_S) - received_by(JUDGE_FROM_S)) * 8 / (RUN_S - JUDGE_FROM_S)
    want_before, want_after = RATE_BEFORE_BPS * PAYLOAD_SHARE, RATE_AFTER_BPS * PAYLOAD_SHARE
    print(
        f"goodput before the step {before / 1e6:.3f} Mbit/s (payload rate {want_before / 1e6:.3f}), "
        f"from 2 s after it {after / 1e6:.3f} Mbit/s (payload rate {want_after / 1e6:.3f}, "
        f"{after / want_after - 1:+.2%})"
    )
    assert abs(after / want_after - 1) <= 0.10, f"{after / 1e6:.3f} Mbit/s after the step"
    assert before > 0.8 * want_before, f"{before / 1e6:.3f} Mbit/s before the step"
    # The queue table's rate follows the schedule.
    q = [r for r in rows if r.get("queue") == "bottleneck"]
    rates = {round(r["t_ns"] / 1e9, 1): r["rate_bps"] for r in q}
    assert rates[1.0] == RATE_BEFORE_BPS and rates[4.0] == RATE_AFTER_BPS, rates
    _assert_clean()


def test_a_bad_trace_is_one_line_naming_file_and_line_before_any_device(tmp_path):
    """No root needed: the emulator parses its traces before it creates a TUN device."""
    import subprocess
    import sys

    link = {"rate_bps": 0, "delay_ns": 5_000_000, "trace": {"file": "cell-down.mahimahi", "text": "1\n2\nx\n"}}
    cfg = {
        "senders": ["bltestbad0"],
        "sender_addrs": ["10.77.0.2"],
        "receiver": "bltestbadr",
        "forward": link,
        "reverse": {"rate_bps": 10_000_000},
    }
    path = tmp_path / "emu.json"
    path.write_text(json.dumps(cfg))
    r = subprocess.run(
        [sys.executable, "-m", "bbrlab.emu.linkemu", "--config", f"@{path}"], capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert "cell-down.mahimahi" in lines[0] and "line 3" in lines[0], lines[0]
