#!/usr/bin/env python3
"""Speed of bbrlab's link emulator: the highest rate at which it delivers a bulk TCP flow within
3 % of the configured rate with 20 ms of delay (20 ms RTT, 10 ms each way), 1 BDP buffer.

    sudo python scripts/bench_emu.py [--rates 200,500,1000,1500,2000] [--duration 8] [--cc cubic]

"Delivered within 3 %" = steady-state receiver goodput (after 3 s) >= 97 % of the payload share of
the rate (rate x 1448/1538: the emulator charges IP length + 38 B framing, like the simulator).
Accuracy and speed depend on CPU contention: report `uptime` load with the figure.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

from bbrlab.engine.runner import run  # noqa: E402  # after the sys.path insert above
from bbrlab.scenario import load_scenario  # noqa: E402  # likewise


def measure(rate_mbps: float, duration: int, cc: str, rtt: str) -> dict:
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "bench.toml"
        p.write_text(
            f'name = "bench-emu"\nduration = "{duration}s"\n[topology]\n'
            f'bottleneck = {{ rate = "{rate_mbps}Mbps", rtt = "{rtt}", buffer = "1bdp" }}\n[[flows]]\ncc = "{cc}"\n'
        )
        res = run(load_scenario(p), backend="emu")
    ts = res.timeseries
    steady = float(ts[ts["t_s"] > 3.0]["goodput_bps"].mean())
    expected = rate_mbps * 1e6 * 1448 / 1538
    emu = res.summary["run"]["emu"]["emulator"]
    q = res.queue[res.queue["queue"] == "bottleneck"]
    return {
        "rate_mbps": rate_mbps,
        "goodput_mbps": steady / 1e6,
        "ratio": steady / expected,
        "util": float(q["utilization"].iloc[30:].mean()),
        "late_mean_us": (emu.get("late_mean_ns") or 0) / 1e3,
        "late_max_us": (emu.get("late_max_ns") or 0) / 1e3,
        "srtt_ms": float(res.flows["rtt_mean_ms"].iloc[0]),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rates", default="200,500,800,1000,1200,1500,2000")
    ap.add_argument("--duration", type=int, default=8)
    ap.add_argument("--cc", default="bbr")  # fills the pipe within ~1 s whatever HyStart does
    ap.add_argument("--rtt", default="20ms")
    a = ap.parse_args()
    print(f"load average before: {os.getloadavg()}")
    best = None
    print(f"{'rate':>8} {'goodput':>9} {'ratio':>7} {'util':>6} {'late mean':>10} {'late max':>9} {'RTT mean':>9}")
    for r in [float(x) for x in a.rates.split(",")]:
        m = measure(r, a.duration, a.cc, a.rtt)
        ok = m["ratio"] >= 0.97
        print(
            f"{r:>6.0f}Mb {m['goodput_mbps']:>8.1f}M {m['ratio']:>7.3f} {m['util']:>6.3f} {m['late_mean_us']:>8.1f}us "
            f"{m['late_max_us']:>7.0f}us {m['srtt_ms']:>7.2f}ms {'ok' if ok else 'MISS'}",
            flush=True,
        )
        if ok:
            best = r
    print(f"load average after: {os.getloadavg()}")
    print(f"highest rate delivered within 3 % at {a.rtt} RTT: {best} Mbit/s" if best else "no rate within 3 %")


if __name__ == "__main__":
    main()
