"""How fast BBR finds a 10x rate increase (the BBR draft's A.15), against a model of its
delivery-rate estimator rather than a number read off a run.

In PROBE_UP (BBRv3; BBRv1's 1.25 phase, which lasts while inflight stays under 1.25 x the
estimated BDP) the sender paces at g = 1.25 x max_bw. A delivery-rate sample taken at the ACK
of packet P counts the data sent between the send of the packet delivered just before P left
and P's own send: one round trip of sending, at the rates of one to two round trips before
the ACK. While the link has room, max_bw is the newest sample, so with r(t) the pacing rate

    r(t) = g * mean of r over [t - 2 RTT, t - RTT].

An exponential r = x^(t / RTT) solves this when g (x - 1) / (x^2 ln x) = 1: for g = 1.25,
x = 1.16 per round, not 1.25. From the old rate to 90 % of the new one therefore takes
ln(0.9 x 10) / ln 1.16 = 15 rounds of PROBE_UP, after the wait for the next probe.

The draft's A.15 says the increment to inflight_longterm doubles each round of UP (1, 2, 4, 8
packets ...): with inflight_longterm set (a startup that ended in loss) that doubling is seen
while cwnd is what limits, and from 67 packets it passes the pacing-limited need within ~5
rounds, so the pacing gain, through the estimator, is what sets the pace in both cases.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from bbrlab.conform.scenarios import STEP_AT_NS, build
from bbrlab.conform.trace import Run, payload_bps, run_config

PROBE_UP_PACING_GAIN = 1.25
NEW_RATE_BPS = 100e6
#: The share of the new capacity under which the link still has room (the model holds only
#: while no queue builds and max_bw is the newest sample).
UNSATURATED_SHARE = 0.8


def growth_per_round(gain: float) -> float:
    """The root x > 1 of gain (x - 1) / (x^2 ln x) = 1 (bisection)."""

    def f(x: float) -> float:
        return gain * (x - 1.0) / (x * x * math.log(x)) - 1.0

    lo, hi = 1.0 + 1e-9, gain
    for _ in range(100):
        mid = (lo + hi) / 2
        if f(mid) > 0:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def _per_round(run: Run, first: int, last: int, col: str) -> dict[int, float]:
    """The value of ``col`` at the last ACK of each round from row ``first`` to ``last``."""
    rounds = run.col("round_count")
    values = run.col(col)
    out: dict[int, float] = {}
    for i in range(first, last + 1):
        out[int(rounds[i])] = float(values[i])
    return out


def _up_probe(run: Run) -> tuple[int, int]:
    """Rows of the first ACK in the first up-probe after the step and of the first ACK at which
    max_bw reaches 90 % of the new payload capacity."""
    t, max_bw = run.col("t_s"), run.col("max_bw_bps")
    step = int(np.searchsorted(t, STEP_AT_NS / 1e9))
    probing = run.col("pacing_gain")[step:] >= PROBE_UP_PACING_GAIN - 1e-9
    up0 = step + int(np.flatnonzero(probing)[0])
    reached = np.flatnonzero(max_bw[step:] >= 0.9 * payload_bps(NEW_RATE_BPS))
    assert len(reached), "max_bw never reached 90 % of the new capacity"
    return up0, step + int(reached[0])


def test_the_growth_model_root() -> None:
    # Its limits: a gain of 1 holds the rate; the root lies between 1 and the gain.
    x = growth_per_round(PROBE_UP_PACING_GAIN)
    assert 1.0 < x < PROBE_UP_PACING_GAIN
    assert PROBE_UP_PACING_GAIN * (x - 1) / (x * x * math.log(x)) == pytest.approx(1.0, abs=1e-9)


@pytest.mark.parametrize("cc", ["bbr1", "bbr3", "bbr3_linux"])
def test_bbr_finds_a_tenfold_increase_at_the_estimators_pace(cc: str) -> None:
    run = run_config(build("step_up", cc))
    up0, hit = _up_probe(run)
    x = growth_per_round(PROBE_UP_PACING_GAIN)
    max_bw = _per_round(run, up0, hit, "max_bw_bps")
    rounds = sorted(max_bw)
    # Every round of the probe from its second on, while the link still has room.
    ratios = [
        max_bw[b] / max_bw[a]
        for a, b in zip(rounds[1:-1], rounds[2:])
        if max_bw[b] < UNSATURATED_SHARE * payload_bps(NEW_RATE_BPS)
    ]
    assert len(ratios) >= 8, f"{cc}: only {len(ratios)} rounds of growth"
    median = float(np.median(ratios))
    assert median == pytest.approx(x, rel=0.03), f"{cc}: max_bw grew {median:.3f}x per round, model {x:.3f}x"
    start_bps = max_bw[rounds[0]]
    predicted = math.ceil(math.log(0.9 * payload_bps(NEW_RATE_BPS) / start_bps) / math.log(x))
    taken = rounds[-1] - rounds[0]
    assert predicted - 2 <= taken <= predicted + 2, f"{cc}: {taken} rounds of probing, model {predicted}"


def test_inflight_longterm_increment_doubles_each_round_of_up() -> None:
    # A buffer of one BDP at 10 Mbit/s: STARTUP ends in loss and sets inflight_longterm.
    config = build("step_up", "bbr3")
    config["topology"]["bottleneck"]["buffer"] = {"bytes": 50_000}
    run = run_config(config)
    up0, hit = _up_probe(run)
    hi = _per_round(run, up0, hit, "inflight_hi_pkts")
    values = [hi[r] for r in sorted(hi)]
    assert all(np.isfinite(values)), "inflight_longterm was not set by STARTUP's losses"
    steps = [b - a for a, b in zip(values, values[1:]) if b > a]
    assert len(steps) >= 4, f"inflight_longterm rose in only {len(steps)} rounds: {values}"
    # 1 << bw_probe_up_rounds per round (the first rounds of UP may pass while cwnd does not
    # limit, when the slope is not applied): each rise twice the one before.
    assert [b / a for a, b in zip(steps[:4], steps[1:4])] == [2.0, 2.0, 2.0], steps
