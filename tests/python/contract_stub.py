"""A stand-in for `bbrlab._core` that follows docs/core-api.md to the letter, with made-up numbers.

It is NOT a simulator and is never used by bbrlab itself. It exists so the Python pipeline (slicing,
progress, Ctrl-C, decoding columns, Parquet, plots, --ss) can be tested independently of the Rust
core. Everything that needs real simulated numbers is tested against the real core in
test_core_run.py (those tests fail, not skip, when the core is missing).
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

ALGORITHMS = [("reno", "Reno (stub)"), ("cubic", "CUBIC (stub)"), ("bbr1", "BBR v1 (stub)")]
PHASES = ["startup", "drain", "probe_bw", "probe_rtt", "slow_start", "congestion_avoidance"]


def version() -> str:
    return "stub-0"


def algorithms() -> list[tuple[str, str]]:
    return list(ALGORITHMS)


def _cols(**cols: np.ndarray) -> dict[str, tuple[str, bytes]]:
    return {k: (v.dtype.str, v.tobytes()) for k, v in cols.items()}


class Simulation:
    #: set by tests to raise KeyboardInterrupt after N slices (simulates Ctrl-C between slices)
    interrupt_after: int | None = None

    def __init__(self, config_json: str) -> None:
        self.config: dict[str, Any] = json.loads(config_json)
        for i, f in enumerate(self.config["flows"]):
            if f["cc"] not in {n for n, _ in ALGORITHMS}:
                raise ValueError(f"flows.{i}.cc: unknown algorithm {f['cc']!r}")
        self.end_ns = int(self.config["duration_ns"])
        self.now_ns = 0
        self.slices = 0

    def run_until(self, t_ns: int) -> bool:
        self.slices += 1
        if self.interrupt_after is not None and self.slices > self.interrupt_after:
            raise KeyboardInterrupt
        self.now_ns = min(max(self.now_ns, int(t_ns)), self.end_ns)
        return self.now_ns >= self.end_ns

    def results(self) -> dict[str, Any]:
        c = self.config
        rng = np.random.default_rng(c["seed"])
        n = len(c["flows"])
        interval = c["sample_interval_ns"]
        samples = -(-self.end_ns // interval)
        t_s = (np.arange(1, samples + 1) * interval).clip(max=self.end_ns) / 1e9
        rate = c["topology"]["bottleneck"]["rate_bps"]
        rtt_ms = c["topology"]["bottleneck"]["rtt_ns"] / 1e6
        starts = np.array([f["start_ns"] / 1e9 for f in c["flows"]])
        cc_names = [name for name, _ in ALGORITHMS]
        cc_codes = np.array([cc_names.index(f["cc"]) for f in c["flows"]], dtype=np.uint8)

        # Goodput per sample: the link shared equally by the active flows, with some noise.
        active = t_s[None, :] > starts[:, None]
        share = active / np.maximum(active.sum(axis=0), 1)
        goodput = share * rate * 0.9 * rng.uniform(0.8, 1.0, size=share.shape)
        dt = np.diff(np.concatenate([[0.0], t_s]))
        delivered_step = np.floor(goodput * dt / 8).astype(np.int64)
        delivered = np.cumsum(delivered_step, axis=1)
        goodput = delivered_step * 8 / dt  # consistent with delivered_bytes by construction

        flat = lambda a: np.ascontiguousarray(a).reshape(-1)  # noqa: E731 - row order: time-major
        rows = n * samples
        ts = _cols(
            t_s=np.tile(t_s, (n, 1)).T.reshape(-1).astype("<f8"),
            flow=np.tile(np.arange(n, dtype="<i4"), samples),
            delivered_bytes=flat(delivered.T).astype("<i8"),
            goodput_bps=flat(goodput.T).astype("<f8"),
            cwnd_pkts=np.full(rows, 100, dtype="<i8"),
            cwnd_bytes=np.full(rows, 144800, dtype="<i8"),
            inflight_bytes=np.full(rows, 100000, dtype="<i8"),
            pacing_rate_bps=np.full(rows, rate / max(n, 1), dtype="<f8"),
            delivery_rate_bps=np.full(rows, rate / max(n, 1), dtype="<f8"),
            srtt_ms=np.full(rows, rtt_ms * 1.1, dtype="<f8"),
            min_rtt_ms=np.full(rows, rtt_ms, dtype="<f8"),
            rtt_ms=np.full(rows, rtt_ms * 1.1, dtype="<f8"),
            retransmits=np.zeros(rows, dtype="<i8"),
            ssthresh_pkts=np.full(rows, -1, dtype="<i8"),
            phase_code=np.full(rows, 2, dtype="<u1"),
            bw_bps=np.full(rows, rate / max(n, 1), dtype="<f8"),
            pacing_gain=np.full(rows, 1.25, dtype="<f8"),
            cwnd_gain=np.full(rows, 2.0, dtype="<f8"),
            w_max_pkts=np.full(rows, np.nan, dtype="<f8"),
            inflight_hi_pkts=np.full(rows, np.nan, dtype="<f8"),
            inflight_lo_pkts=np.full(rows, np.nan, dtype="<f8"),
            ecn_alpha=np.full(rows, np.nan, dtype="<f8"),
            ca_state=np.zeros(rows, dtype="<u1"),
            rwnd_limited=np.zeros(rows, dtype="<u1"),
            sndbuf_limited=np.zeros(rows, dtype="<u1"),
        )
        total = delivered[:, -1]
        end_s = np.full(n, self.end_ns / 1e9)
        flows = _cols(
            flow=np.arange(n, dtype="<i4"),
            cc_code=cc_codes,
            start_s=starts.astype("<f8"),
            end_s=end_s.astype("<f8"),
            fct_s=np.full(n, np.nan, dtype="<f8"),
            delivered_bytes=total.astype("<i8"),
            goodput_bps=(total * 8 / (end_s - starts)).astype("<f8"),
            data_packets_sent=(total // 1448 + 1).astype("<i8"),
            retransmits=np.zeros(n, dtype="<i8"),
            retrans_rate=np.zeros(n, dtype="<f8"),
            lost_packets=np.zeros(n, dtype="<i8"),
            rtt_mean_ms=np.full(n, rtt_ms * 1.1, dtype="<f8"),
            rtt_p50_ms=np.full(n, rtt_ms * 1.1, dtype="<f8"),
            rtt_p95_ms=np.full(n, rtt_ms * 1.3, dtype="<f8"),
            rtt_p99_ms=np.full(n, rtt_ms * 1.4, dtype="<f8"),
            rto_count=np.zeros(n, dtype="<i8"),
            ce_packets=np.zeros(n, dtype="<i8"),
        )
        queue = _cols(
            t_s=t_s.astype("<f8"),
            queue_code=np.zeros(samples, dtype="<u1"),
            occupancy_bytes=np.full(samples, 30000, dtype="<i8"),
            occupancy_pkts=np.full(samples, 20, dtype="<i8"),
            mean_occupancy_bytes=np.full(samples, 25000.0, dtype="<f8"),
            max_occupancy_bytes=np.full(samples, 60000, dtype="<i8"),
            drops=np.zeros(samples, dtype="<i8"),
            random_losses=np.zeros(samples, dtype="<i8"),
            ce_marks=np.zeros(samples, dtype="<i8"),
            tx_bytes=np.cumsum(np.full(samples, rate * interval // 8 // 10**9, dtype="<i8")),
            utilization=np.full(samples, 0.95, dtype="<f8"),
        )
        packets = int(total.sum() // 1448)
        return {
            "flows": flows,
            "timeseries": ts,
            "queue": queue,
            "labels": {"phase": PHASES, "cc": cc_names, "queue": ["bottleneck"]},
            "run": {
                "events": packets * 4,
                "data_packets_delivered": packets,
                "data_packets_sent": packets,
                "sim_end_ns": self.now_ns,
                "complete": self.now_ns >= self.end_ns,
            },
        }
