"""Ctrl-C latency of `bbrlab run`: send SIGINT to a running simulation at several moments and
time how long the process takes to exit (the issue's bound: 0.5 s whatever the scenario).

    python scripts/interrupt_latency.py            # prints one line per case and the worst

Cases: a run that starts idle and then turns busy (the slice-growing trap), 2000 flows, and a
plain busy 5 Gbit/s run; each interrupted at 0.5, 1.5, 3 and 5 s.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "quick.toml"
CASES = {
    "idle-then-busy": ["duration=30s", "flows.0.start=20s", "topology.bottleneck.rate=2Gbps"],
    "many-flows": ["duration=20s", "flows.0.count=2000", "topology.bottleneck.rate=10Gbps"],
    "busy": ["duration=60s", "topology.bottleneck.rate=5Gbps"],
}


def interrupt_after(delay_s: float, overrides: list[str], out: Path) -> float | None:
    """Seconds from SIGINT to exit, or None if the run ended before `delay_s`."""
    sets = [a for o in overrides for a in ("--set", o)]
    p = subprocess.Popen(
        [sys.executable, "-m", "bbrlab", "run", str(EXAMPLE), "-q", "--out", str(out), *sets],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(delay_s)
    if p.poll() is not None:
        return None
    t0 = time.monotonic()
    p.send_signal(signal.SIGINT)
    p.wait()
    return time.monotonic() - t0


def main() -> int:
    worst = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for name, overrides in CASES.items():
            for delay in (0.5, 1.5, 3.0, 5.0):
                dt = interrupt_after(delay, overrides, Path(tmp) / name)
                if dt is None:
                    print(f"{name:15s} after {delay:3.1f} s: finished before the signal")
                    continue
                worst = max(worst, dt)
                print(f"{name:15s} after {delay:3.1f} s: exited in {dt * 1000:.0f} ms")
    print(f"worst {worst * 1000:.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
