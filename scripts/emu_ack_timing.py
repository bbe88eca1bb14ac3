#!/usr/bin/env python3
"""How bunched ACKs reach a sender on the emu backend's path, against the link's payload rate.

A delivery-rate sample (Linux `tcp_rate_gen`) divides the data acknowledged by the time between
ACKs, and keeps only samples spanning at least min_rtt; BBR's max filter then takes the highest.
Exactly spaced ACKs (the simulator's) never give more than the link's payload rate; ACKs that
reach the sender bunched do. This script runs a one-flow scenario on `--backend emu`, captures
the ACKs arriving in the sender's namespace (AF_PACKET, kernel receive timestamps) for a while
after start-up, and prints the gaps between ACKs and the ACK rate over windows of 5 ms and of
one RTT, beside the payload rate (rate x MSS / wire bytes per packet).

    sudo python3 scripts/emu_ack_timing.py [--cc bbr3_linux] [--rate-mbps 100] [--rtt-ms 40]
                                           [--duration 25] [--skip 8] [--capture 8]

Root, network namespaces and TUN are needed (the emu backend's requirements).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

#: What the capture runs inside the sender's namespace: ACK (no payload) arrival times and
#: acknowledgement numbers, kernel-timestamped (SO_TIMESTAMPNS) on receipt.
CAPTURE = r"""
import json, socket, struct, sys, time
secs, out = float(sys.argv[1]), sys.argv[2]
s = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(0x0800))
s.setsockopt(socket.SOL_SOCKET, 35, 1)  # SO_TIMESTAMPNS
s.settimeout(0.5)
rows, end = [], time.monotonic() + secs
while time.monotonic() < end:
    try:
        data, anc, _, addr = s.recvmsg(128, socket.CMSG_SPACE(16))
    except socket.timeout:
        continue
    if addr[2] != socket.PACKET_HOST or data[9] != 6:
        continue
    ts = next((struct.unpack("qq", d[:16]) for lvl, typ, d in anc if lvl == socket.SOL_SOCKET and typ == 35), None)
    ihl = (data[0] & 0x0F) * 4
    payload = struct.unpack("!H", data[2:4])[0] - ihl - (data[ihl + 12] >> 4) * 4
    if ts and payload == 0:
        rows.append((ts[0] * 1_000_000_000 + ts[1], struct.unpack("!I", data[ihl + 8:ihl + 12])[0]))
json.dump(rows, open(out, "w"))
"""

MSS, WIRE = 1448, 1538


def ack_rates(t_ns: np.ndarray, ack: np.ndarray, window_ns: int) -> np.ndarray:
    """ACK rate (bit/s) from each ACK back to the last one at least `window_ns` earlier."""
    j = np.searchsorted(t_ns, t_ns - window_ns, side="right") - 1
    ok = j >= 0
    i = j[ok]
    return (ack[ok] - ack[i]) * 8 / ((t_ns[ok] - t_ns[i]) / 1e9)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cc", default="bbr3_linux")
    ap.add_argument("--rate-mbps", type=float, default=100)
    ap.add_argument("--rtt-ms", type=float, default=40)
    ap.add_argument("--duration", type=int, default=25, help="run length, s")
    ap.add_argument("--skip", type=float, default=8, help="seconds after the namespaces appear before capturing")
    ap.add_argument("--capture", type=float, default=8, help="seconds captured")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        scen = Path(d) / "ack-timing.toml"
        scen.write_text(
            f'name = "ack-timing"\nduration = "{a.duration}s"\nseed = 1\n[topology]\nkind = "dumbbell"\n'
            f'bottleneck = {{ rate = "{a.rate_mbps}Mbps", rtt = "{a.rtt_ms}ms", buffer = "1bdp" }}\n'
            f'[[flows]]\ncc = "{a.cc}"\n'
        )
        run = subprocess.Popen(
            [sys.executable, "-m", "bbrlab", "run", str(scen), "--backend", "emu", "-q", "--out", str(Path(d) / "run")],
            stdout=subprocess.DEVNULL,
        )
        try:
            ns = None
            for _ in range(100):
                names = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split()
                ns = next((n for n in names if n.startswith("bbrlab-") and n.endswith("-s0")), None)
                if ns or run.poll() is not None:
                    break
                time.sleep(0.2)
            if ns is None:
                print("the emu run did not create its sender namespace", file=sys.stderr)
                return 1
            time.sleep(a.skip)
            out = Path(d) / "acks.json"
            subprocess.run(
                ["ip", "netns", "exec", ns, sys.executable, "-c", CAPTURE, str(a.capture), str(out)], check=True
            )
            rows = json.loads(out.read_text())
        finally:
            run.wait()
    t = np.array([r[0] for r in rows], dtype=np.int64)
    ack = np.unwrap(np.array([r[1] for r in rows], dtype=float), period=2.0**32).astype(np.int64)
    o = np.argsort(t, kind="stable")
    t, ack = t[o], ack[o]
    adv = np.r_[True, np.diff(ack) > 0]  # ACKs of new data
    t, ack = t[adv], ack[adv]
    gaps_us = np.diff(t) / 1e3
    payload_bps = a.rate_mbps * 1e6 * MSS / WIRE
    print(
        f"{a.cc}, {a.rate_mbps:g} Mbit/s, {a.rtt_ms:g} ms: {len(t)} ACKs of new data in {a.capture:g} s; "
        f"one packet's serialization {WIRE * 8 / (a.rate_mbps * 1e6) * 1e6:.1f} µs"
    )
    print("gap between ACKs, µs: " + ", ".join(f"p{q} {np.percentile(gaps_us, q):.1f}" for q in (1, 10, 50, 90, 99)))
    for label, w in (("5 ms", 5_000_000), ("one RTT", int(a.rtt_ms * 1e6))):
        r = ack_rates(t, ack, w)
        print(
            f"ACK rate over ≥ {label}: median {np.median(r) / 1e6:.2f}, p99 {np.percentile(r, 99) / 1e6:.2f}, "
            f"max {r.max() / 1e6:.2f} Mbit/s; above the payload rate {payload_bps / 1e6:.2f} in "
            f"{np.mean(r > payload_bps) * 100:.1f} % of windows"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
