"""The kernel backend's flow RTT statistics weigh each TCP_INFO read by the bytes acknowledged
since the read before it, as the simulator's are over per-ACK samples (no root needed)."""

from __future__ import annotations

import math

import pytest
from bbrlab.emu.rtt import RttReads, rtt_stats


def test_a_rate_step_counts_each_stretch_by_the_data_it_acknowledged() -> None:
    # 10 s at 100 Mbit/s with 40 ms, then 10 s at 10 Mbit/s with a 400 ms queue, read every
    # 100 ms: per acknowledged byte, the fast stretch counts ten times more.
    fast, slow = 100e6 / 8 * 0.1, 10e6 / 8 * 0.1
    reads = RttReads([40.0] * 100 + [400.0] * 100, [fast] * 100 + [slow] * 100)
    stats = rtt_stats(reads)
    want = (40.0 * fast + 400.0 * slow) / (fast + slow)
    assert stats["rtt_mean_ms"] == pytest.approx(want)  # 72.7, not the reads' 220
    assert stats["rtt_p50_ms"] == 40.0
    assert stats["rtt_p95_ms"] == 400.0


def test_reads_with_nothing_acknowledged_carry_no_weight() -> None:
    stats = rtt_stats(RttReads([50.0, 900.0, 50.0], [1000.0, 0.0, 1000.0]))
    assert stats["rtt_mean_ms"] == 50.0
    assert stats["rtt_p99_ms"] == 50.0


def test_without_any_weight_every_read_counts_alike_and_none_gives_nan() -> None:
    assert rtt_stats(RttReads([10.0, 30.0], [0.0, 0.0]))["rtt_mean_ms"] == 20.0
    assert all(math.isnan(v) for v in rtt_stats(RttReads([], [])).values())
