"""A stand-in for `bbrlab._core` that returns made-up numbers in the core's exact table layout.

It is NOT a simulator and is never used by bbrlab itself. It exists so the Python pipeline (slicing,
progress, Ctrl-C, decoding columns, Parquet, plots, --ss) can be tested independently of the Rust
core. Its definitions — config schema and checks, result schema, algorithm registry — are the real
core's, so the stub cannot drift from the contract; only `Simulation` is fake. Everything that
needs real simulated numbers is tested against the real core in test_core_run.py.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
from bbrlab import _core as _real  # imported before the stub replaces it
from bbrlab.core.tables import encode

ConfigError = _real.ConfigError
algorithms = _real.algorithms
config_schema = _real.config_schema
check_config = _real.check_config
CheckedConfig = _real.CheckedConfig
result_schema = _real.result_schema
#: Every flow reports this made-up phase code throughout: its algorithm's phase table (the
#: registry's, as the real core) at this index (BBRv1's probe_bw, the loss-based algorithms'
#: recovery).
PHASE_CODE = 2


def _real_phases(cc: str) -> list[str]:
    """The registry's phase table of algorithm ``cc`` (canonical name or alias)."""
    low = cc.strip().lower()
    return next(a["phases"] for a in algorithms() if low == a["name"] or low in a["aliases"])


def version() -> str:
    return "stub-0"


class Simulation:
    #: set by tests to raise KeyboardInterrupt after N slices (simulates Ctrl-C between slices)
    interrupt_after: int | None = None

    def __init__(self, config: str | Any) -> None:
        # As the real one: a config the real core checked already, or JSON it checks now.
        checked = config if isinstance(config, CheckedConfig) else check_config(config)
        self.config: dict[str, Any] = json.loads(checked.resolved)
        self.derived: dict[str, Any] = json.loads(checked.derived)
        self.end_ns = int(self.config["duration_ns"])
        self.now_ns = 0
        self.slices = 0

    @property
    def events(self) -> int:
        return self.slices

    def run_until(self, t_ns: int, max_events: int | None = None, max_wall_s: float | None = None) -> bool:
        """A slice covers at most a tenth of the run (as a wall-time bound would cut it)."""
        self.slices += 1
        if self.interrupt_after is not None and self.slices > self.interrupt_after:
            raise KeyboardInterrupt
        target = min(int(t_ns), self.end_ns)
        if max_wall_s is not None:
            target = min(target, self.now_ns + max(1, self.end_ns // 10))
        self.now_ns = max(self.now_ns, target)
        return self.now_ns >= self.end_ns

    def results(self) -> dict[str, Any]:
        c = self.config
        rng = np.random.default_rng(c["seed"])
        flows_cfg = [(i, f) for i, f in enumerate(c["flows"]) for _ in range(f["count"])]
        n = len(flows_cfg)
        interval = c["sample_interval_ns"]
        samples = -(-self.end_ns // interval)
        t_s = (np.arange(1, samples + 1) * interval).clip(max=self.end_ns) / 1e9
        rate = self.derived["bottleneck_rate_bps"]
        rtt_ms = self.derived["base_rtt_ns"] / 1e6
        starts = np.array([f["start_ns"] / 1e9 for _, f in flows_cfg])
        cc_names = sorted({f["cc"] for _, f in flows_cfg}, key=[f["cc"] for _, f in flows_cfg].index)
        # As the core: labels.phase lists the names the run reported, in order of appearance.
        flow_phase = [_real_phases(f["cc"])[PHASE_CODE] for _, f in flows_cfg]
        phase_labels = sorted(set(flow_phase), key=flow_phase.index)

        # Goodput per sample: the link shared equally by the active flows, with some noise.
        active = t_s[None, :] > starts[:, None]
        share = active / np.maximum(active.sum(axis=0), 1)
        goodput = share * rate * 0.9 * rng.uniform(0.8, 1.0, size=share.shape)
        dt = np.diff(np.concatenate([[0.0], t_s]))
        delivered_step = np.floor(goodput * dt / 8).astype(np.int64)
        delivered = np.cumsum(delivered_step, axis=1)
        goodput = delivered_step * 8 / dt  # consistent with delivered_bytes by construction

        def flat(a: np.ndarray) -> np.ndarray:  # row order: time-major
            return np.ascontiguousarray(a).reshape(-1)

        rows = n * samples

        def const(v: object) -> np.ndarray:
            return np.full(rows, v)

        ts = encode(
            "timeseries",
            {
                "t_s": np.tile(t_s, (n, 1)).T.reshape(-1),
                "flow": np.tile(np.arange(n), samples),
                "delivered_bytes": flat(delivered.T),
                "goodput_bps": flat(goodput.T),
                "cwnd_pkts": const(100),
                "cwnd_bytes": const(144800),
                "inflight_bytes": const(100000),
                "pacing_rate_bps": const(rate / max(n, 1)),
                "delivery_rate_bps": const(rate / max(n, 1)),
                "srtt_ms": const(rtt_ms * 1.1),
                "min_rtt_ms": const(rtt_ms),
                "rtt_ms": const(rtt_ms * 1.1),
                "ssthresh_pkts": const(-1),
                "phase_code": np.tile([phase_labels.index(p) for p in flow_phase], samples),
                "bw_bps": const(rate / max(n, 1)),
                "pacing_gain": const(1.25),
                "cwnd_gain": const(2.0),
            },
            rows,
        )
        total = delivered[:, -1]
        end_s = np.full(n, self.end_ns / 1e9)
        flows = encode(
            "flows",
            {
                "flow": np.arange(n),
                "spec": [i for i, _ in flows_cfg],
                "cc_code": [cc_names.index(f["cc"]) for _, f in flows_cfg],
                "start_s": starts,
                "end_s": end_s,
                "delivered_bytes": total,
                "goodput_bps": total * 8 / (end_s - starts),
                "data_packets_sent": total // 1448 + 1,
                "retrans_rate": np.zeros(n),
                "rtt_mean_ms": np.full(n, rtt_ms * 1.1),
                "rtt_p50_ms": np.full(n, rtt_ms * 1.1),
                "rtt_p95_ms": np.full(n, rtt_ms * 1.3),
                "rtt_p99_ms": np.full(n, rtt_ms * 1.4),
            },
            n,
            fill={"app": -1, "query": -1},
        )
        queue = encode(
            "queue",
            {
                "t_s": t_s,
                "queue_code": np.zeros(samples),
                "occupancy_bytes": np.full(samples, 30000),
                "occupancy_pkts": np.full(samples, 20),
                "mean_occupancy_bytes": np.full(samples, 25000.0),
                "max_occupancy_bytes": np.full(samples, 60000),
                "tx_bytes": np.cumsum(np.full(samples, rate * interval // 8 // 10**9)),
                "utilization": np.full(samples, 0.95),
            },
            samples,
        )
        packets = int(total.sum() // 1448)
        return {
            "flows": flows,
            "timeseries": ts,
            "queue": queue,
            "gaps": encode("gaps", {}, 0),
            "events": encode("events", {}, 0),
            "labels": {"phase": phase_labels, "cc": cc_names, "queue": [self.derived["main_queue"]]},
            "run": {
                "events": packets * 4,
                "data_packets_delivered": packets,
                "data_packets_sent": packets,
                "sim_end_ns": self.now_ns,
                "complete": self.now_ns >= self.end_ns,
                "pause_frames": 0,
                "drops": 0,
            },
        }
