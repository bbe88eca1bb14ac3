#!/usr/bin/env python3
"""Receiver ACK stalls on the emu backend, and the sender bursts and policer drops that follow.

A kernel receiver whose reading thread is preempted inside recv() owns its socket: the segments
that arrive meanwhile wait in the socket's backlog and are acknowledged by one cumulative ACK
when it lets go, and the sender answers that ACK with a line-rate burst (docs/fidelity.md, the
policer). This script runs a scenario on `--backend emu`, captures with tcpdump in the first
sender's and in the receiver's namespace, and prints:

- receiver: ACKs of new data covering more than `--stretch` segments that do not end a hole
  (the ACK before carried no SACK), with the silence before each and the segments that arrived
  during it;
- sender: burst sizes (packets less than 60 us apart) and, if the scenario has a policer, the
  sender's packets replayed through that token bucket (what it would drop).

    sudo python3 scripts/emu_ack_stalls.py examples/policer.toml [--set flows.0.cc=cubic]
                                           [--skip 3] [--capture 12] [--stretch 8]
    python3 scripts/emu_ack_stalls.py --analyze DIR [--policer 50e6,65536]   # snd.pcap, rcv.pcap

Root, network namespaces, TUN (the emu backend's requirements) and tcpdump/tshark are needed.
`BBRLAB_TCP_RT_PRIORITY=0` runs the kernel flows' threads normally scheduled, as before the fix.
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

MSS = 1448
#: Packets closer than this leave as one burst (a 100 Mbit/s link serializes one in 123 us).
BURST_GAP_S = 60e-6
#: Bytes the emulator charges per packet beyond the IP length (Ethernet framing, as the simulator).
FRAME_OVERHEAD_BYTES = 38
FIELDS = ["frame.time_epoch", "ip.src", "ip.len", "tcp.seq", "tcp.ack", "tcp.len", "tcp.options.sack_le"]


def read_pcap(path: Path) -> tuple[str, np.ndarray, np.ndarray]:
    """(data sender's address, data rows [t, seq, ip_len], ACK rows [t, ack, has_sack])."""
    cmd = ["tshark", "-r", str(path), "-o", "tcp.relative_sequence_numbers:FALSE", "-Y", "tcp.flags.syn == 0"]
    cmd += ["-T", "fields", "-E", "separator=;"] + [a for f in FIELDS for a in ("-e", f)]
    rows = [
        line.split(";") for line in subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.splitlines()
    ]
    payload: dict[str, int] = {}
    for r in rows:
        payload[r[1]] = payload.get(r[1], 0) + int(r[5] or 0)
    snd = max(payload, key=lambda k: payload[k])
    t0 = float(rows[0][0])
    data = np.array([(float(r[0]) - t0, int(r[3]), int(r[2])) for r in rows if r[1] == snd and int(r[5] or 0) > 0])
    acks = np.array([(float(r[0]) - t0, int(r[4]), bool(r[6])) for r in rows if r[1] != snd], dtype=float)
    data[:, 1] = np.unwrap(data[:, 1], period=2.0**32)
    acks[:, 1] = np.unwrap(acks[:, 1], period=2.0**32)
    return snd, data, acks


def receiver_report(pcap: Path, stretch: float) -> None:
    _, data, acks = read_pcap(pcap)
    sack_before = np.r_[False, acks[:-1, 2] > 0]
    new = np.r_[False, np.diff(acks[:, 1]) > 0]
    idx = np.where(new)[0]
    segs = (acks[idx, 1] - acks[idx - 1, 1]) / MSS
    print(f"receiver ({pcap}): {len(data)} segments in, {len(idx)} ACKs of new data out")
    print("  segments per ACK: " + ", ".join(f"p{q} {np.percentile(segs, q):.1f}" for q in (50, 90, 99)))
    stalls = [i for i, s in zip(idx, segs) if s > stretch and not sack_before[i]]
    print(f"  ACKs of more than {stretch:g} segments not ending a hole: {len(stalls)}")
    for i in stalls:
        t, before = acks[i, 0], acks[i - 1, 0]
        arrived = int(np.sum((data[:, 0] > before) & (data[:, 0] <= t)))
        n = (acks[i, 1] - acks[i - 1, 1]) / MSS
        print(
            f"    {t * 1e3:9.2f} ms: {n:.0f} segments after {(t - before) * 1e3:.2f} ms without an ACK ({arrived} arrived)"
        )


def sender_report(pcap: Path, policer: tuple[float, int] | None) -> None:
    _, data, _ = read_pcap(pcap)
    gaps = np.diff(data[:, 0])
    sizes = np.array([len(b) for b in np.split(np.arange(len(data)), np.where(gaps > BURST_GAP_S)[0] + 1)])
    print(f"sender ({pcap}): {len(data)} segments out in {len(sizes)} bursts")
    print(
        "  burst size: "
        + ", ".join(f"p{q} {np.percentile(sizes, q):.0f}" for q in (50, 90, 99))
        + f", max {sizes.max()}"
    )
    if policer is None:
        return
    rate_bps, burst_bytes = policer
    tokens, last, dropped = burst_bytes * 8.0, data[0, 0], []
    for t, _, ip_len in data:
        tokens = min(tokens + (t - last) * rate_bps, burst_bytes * 8.0)
        last = t
        cost = (ip_len + FRAME_OVERHEAD_BYTES) * 8
        if tokens >= cost:
            tokens -= cost
        else:
            dropped.append(t)
    print(f"  replayed through a {rate_bps / 1e6:g} Mbit/s, {burst_bytes} B token bucket: {len(dropped)} dropped")
    episodes: list[list[float]] = []
    for t in dropped:
        if episodes and t - episodes[-1][1] < 0.1:
            episodes[-1][1] = t
            episodes[-1][2] += 1
        else:
            episodes.append([t, t, 1])
    for start, _, n in episodes:
        print(f"    {start * 1e3:9.2f} ms: {n:.0f} dropped")


def capture(scenario: str, sets: list[str], skip: float, secs: float, out: Path) -> None:
    def namespaces() -> set[str]:
        return set(subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split())

    before = namespaces()
    cmd = [sys.executable, "-m", "bbrlab", "run", scenario, "--backend", "emu", "-q", "--out", str(out / "run")]
    run = subprocess.Popen(cmd + [a for s in sets for a in ("--set", s)], stdout=subprocess.DEVNULL)
    try:
        snd = rcv = None
        for _ in range(100):
            new = namespaces() - before
            snd = next((n for n in new if n.endswith("-s0")), None)
            rcv = next((n for n in new if n.endswith("-r")), None)
            if (snd and rcv) or run.poll() is not None:
                break
            time.sleep(0.2)
        if not (snd and rcv):
            raise SystemExit("the emu run did not create its namespaces")
        time.sleep(skip)
        dumps = [
            subprocess.Popen(
                ["ip", "netns", "exec", ns, "timeout", str(secs), "tcpdump", "-i", "any", "-s", "96", "-n", "-q"]
                + ["--time-stamp-precision=nano", "-w", str(out / f"{name}.pcap"), "tcp"],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            for ns, name in ((snd, "snd"), (rcv, "rcv"))
        ]
        for d in dumps:
            d.wait()
    finally:
        run.wait()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("scenario", nargs="?")
    ap.add_argument("--set", action="append", default=[], dest="sets", help="as for bbrlab run")
    ap.add_argument("--skip", type=float, default=3, help="seconds after the namespaces appear before capturing")
    ap.add_argument("--capture", type=float, default=12, help="seconds captured")
    ap.add_argument("--stretch", type=float, default=8, help="report ACKs of more segments than this")
    ap.add_argument("--analyze", type=Path, help="a directory with snd.pcap and rcv.pcap from an earlier capture")
    ap.add_argument("--policer", help="RATE_BPS,BURST_BYTES to replay (default: the scenario's, if any)")
    a = ap.parse_args()
    policer = None
    if a.policer:
        r, b = a.policer.split(",")
        policer = (float(r), int(b))
    if a.analyze:
        out = a.analyze
    elif a.scenario:
        out = Path(tempfile.mkdtemp(prefix="ack-stalls-"))
        capture(a.scenario, a.sets, a.skip, a.capture, out)
        print(f"captures and run directory in {out}")
        if policer is None:
            summary = json.loads((out / "run" / "summary.json").read_text())
            p = summary["run"]["emu"]["link"]["forward"].get("policer")
            policer = (float(p["rate_bps"]), int(p["burst_bytes"])) if p else None
    else:
        ap.error("give a scenario to capture, or --analyze DIR")
    receiver_report(out / "rcv.pcap", a.stretch)
    sender_report(out / "snd.pcap", policer)
    return 0


if __name__ == "__main__":
    sys.exit(main())
