"""nsperf's own statements of what each scenario shows, checked against our points.

nsperf publishes no numbers, but run_tests.sh says in a comment above each scenario what it is
meant to show for BBRv2 (the v2alpha copy, e76d4f89; the v3 copy runs the same scenarios for
`bbr`, v3). Each is checked here with a rule fixed in advance, for the algorithms nsperf ran them
for: `bbr2` (v2alpha) and `bbr3_linux` (v3 as Linux runs it), those of them in the plan.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import pandas as pd

from ..claims import Check, Claim, Num, cell, num, untested, verdict_of_all
from ..sentences import join
from .plan import Config, Scenario

#: A statement's rule on one algorithm's points: its check (where: the algorithm) and the values shown.
Test = Callable[[pd.DataFrame, Scenario, str], tuple[Check, list[Num]]]

#: How each scenario's swept parameter reads in a reason.
SWEPT = {
    "coexist": "BDP buffer",
    "bufferbloat": "BDP buffer",
    "random_loss": "% loss",
    "shallow": "flows",
    "ecn_bulk": "flows",
}


def _every(cc: str, sc: Scenario, tests: dict[float, bool], worst: str, rule: str) -> Check:
    """A rule that must hold at every point of a scenario's sweep, for ``cc``: it names the points
    where it does not (``worst``: the deciding numbers in words, e.g. "lowest share 5 %")."""
    if not tests:
        return Check(None, "no points", cc)
    bad = [x for x, ok in tests.items() if not ok]
    if not bad:
        return Check(True, f"{worst} (rule: {rule} at every point)", cc)
    return Check(
        False, f"{worst}; outside the rule at {join(f'{x:g}' for x in bad)} {SWEPT[sc.name]} (rule: {rule})", cc
    )


#: The algorithms nsperf's statements are about.
JUDGED = ("bbr2", "bbr3_linux")
#: random_loss: BBRv2's design parameter, its loss threshold (BBR.LossThresh, 2 %).
LOSS_THRESH_PCT = 2.0
#: random_loss: "high throughput": at least this share of the link (its goodput ceiling is 94 %).
HIGH_TPUT_SHARE = 0.8
#: coexist: "acceptable": the BBR flow gets neither less nor more than this share of the link.
COEXIST_SHARE = (0.1, 0.9)
#: bufferbloat: "low delay": the median srtt within this multiple of the base RTT.
LOW_DELAY_RTTS = 3.0
#: ecn_bulk: "very low queues": the median queueing delay (srtt - RTT) at most this multiple of
#: DCTCP's, or under the CE threshold's 242 us.
ECN_QUEUE_VS_DCTCP = 2.0
CE_THRESHOLD_MS = 0.242


def _points(points: pd.DataFrame, scenario: str, cc: str) -> pd.DataFrame:
    return points[(points["scenario"] == scenario) & (points["cc"] == cc)].sort_values("x")


def _judge(points: pd.DataFrame, cfg: Config, scenario: str, test: Test) -> tuple[list[Check], list[Num]]:
    sc = next(s for s in cfg.scenarios() if s.name == scenario)
    results: list[Check] = []
    values: list[Num] = []
    for cc in (c for c in JUDGED if c in sc.ccs):
        ok, shown = test(_points(points, scenario, cc), sc, cc)
        results.append(ok)
        values += shown
    return results, values


def claims(points: pd.DataFrame, cfg: Config) -> list[Claim]:
    out: list[Claim] = []

    def add(claim: str, words: str, rule: str, scenario: str, test: Test) -> None:
        results, values = _judge(points, cfg, scenario, test)
        if not results:
            out.append(untested(claim, words, rule, f"{' and '.join(JUDGED)} not in this plan", paper_value=words))
            return
        ours = ", ".join(f"{v.label} {v.value:.3g} {v.unit}".strip() for v in values)
        out.append(
            Claim(claim, words, ours, rule, verdict_of_all(results), paper_value=words, bbrlab_value=cell(values))
        )

    def coexist(d: pd.DataFrame, sc: Scenario, cc: str) -> tuple[Check, list[Num]]:
        share = d["throughput_bps"] / sc.rate_bps
        lo, hi = COEXIST_SHARE
        tests = {x: bool(lo <= v <= hi) for x, v in zip(d["x"], share)}
        worst = f"share {100 * share.min():.0f} % to {100 * share.max():.0f} %" if len(d) else ""
        ok = _every(cc, sc, tests, worst, f"{100 * lo:g} % to {100 * hi:g} %")
        return ok, [num(100 * share.min(), "%", label=f"{cc} min"), num(100 * share.max(), "%", label=f"{cc} max")]

    def random_loss(d: pd.DataFrame, sc: Scenario, cc: str) -> tuple[Check, list[Num]]:
        d = d[d["x"] < LOSS_THRESH_PCT]
        share = d["throughput_bps"] / sc.rate_bps
        tests = {x: bool(v >= HIGH_TPUT_SHARE) for x, v in zip(d["x"], share)}
        worst = f"lowest share {100 * share.min():.0f} %" if len(d) else ""
        ok = _every(cc, sc, tests, worst, f"≥ {100 * HIGH_TPUT_SHARE:g} %")
        return ok, [num(100 * share.min(), "%", label=f"{cc} min below {LOSS_THRESH_PCT:g} % loss")] if len(d) else []

    def shallow(d: pd.DataFrame, sc: Scenario, cc: str) -> tuple[Check, list[Num]]:
        v1 = _points(points, "shallow", "bbr1").set_index("x")["retrans_pct"]
        mine = d.set_index("x")["retrans_pct"]
        common = [x for x in mine.index if x in v1.index]
        tests = {x: bool(mine[x] < v1[x]) for x in common}
        worst = f"retransmits up to {mine.max():.3g} % vs bbr1's up to {v1.max():.3g} %" if common else ""
        ok = _every(cc, sc, tests, worst, "below bbr1's at each point")
        return ok, [num(mine.max(), "%", label=f"{cc} max")] + (
            [num(v1.max(), "%", label="bbr1 max")] if common else []
        )

    def bufferbloat(d: pd.DataFrame, sc: Scenario, cc: str) -> tuple[Check, list[Num]]:
        rtt_ms = sc.rtt_s * 1e3
        tests = {x: bool(v <= LOW_DELAY_RTTS * rtt_ms) for x, v in zip(d["x"], d["p50_srtt_ms"])}
        worst = f"p50 srtt up to {d['p50_srtt_ms'].max():.3g} ms" if len(d) else ""
        ok = _every(cc, sc, tests, worst, f"≤ {LOW_DELAY_RTTS:g} × {rtt_ms:g} ms")
        return ok, [num(d["p50_srtt_ms"].max(), "ms", label=f"{cc} max")]

    def ecn_bulk(d: pd.DataFrame, sc: Scenario, cc: str) -> tuple[Check, list[Num]]:
        rtt_ms = sc.rtt_s * 1e3
        dctcp = _points(points, "ecn_bulk", "dctcp").set_index("x")["p50_srtt_ms"] - rtt_ms
        queue = d.set_index("x")["p50_srtt_ms"] - rtt_ms
        tests = {
            x: bool(
                q <= max(CE_THRESHOLD_MS, ECN_QUEUE_VS_DCTCP * dctcp.get(x, math.nan))
                if math.isfinite(dctcp.get(x, math.nan))
                else q <= CE_THRESHOLD_MS
            )
            for x, q in queue.items()
        }
        worst = f"queueing delay up to {queue.max():.3g} ms (DCTCP's up to {dctcp.max():.3g} ms)" if tests else ""
        ok = _every(cc, sc, tests, worst, f"≤ {ECN_QUEUE_VS_DCTCP:g} × DCTCP's or ≤ {CE_THRESHOLD_MS:g} ms")
        return ok, [num(queue.max(), "ms", label=f"{cc} max queue")]

    add(
        "coexist: acceptable coexistence with CUBIC",
        "show acceptable coexistence w/ cubic",
        f"the BBR flow gets {100 * COEXIST_SHARE[0]:g}-{100 * COEXIST_SHARE[1]:g} % of the link at every buffer",
        "coexist",
        coexist,
    )
    add(
        "random_loss: high throughput up to the design loss rate",
        "show high throughput with random loss up to design parameter",
        f"at least {100 * HIGH_TPUT_SHARE:g} % of the link at every loss rate below {LOSS_THRESH_PCT:g} % (BBR.LossThresh)",
        "random_loss",
        random_loss,
    )
    add(
        "shallow: reasonably low loss in shallow buffers",
        "show reasonably low loss rates in shallow buffers",
        "retransmit % below bbr1's at every flow count",
        "shallow",
        shallow,
    )
    add(
        "bufferbloat: low delay in deep buffers without ECN",
        "show low delay in deep buffers, even without ECN signal",
        f"p50 srtt within {LOW_DELAY_RTTS:g}x the base RTT at every buffer (1-100 BDP)",
        "bufferbloat",
        bufferbloat,
    )
    add(
        "ecn_bulk: ECN keeps queues very low",
        "show ECN support can keep queues very low",
        f"p50 queueing delay (srtt - RTT) at most {ECN_QUEUE_VS_DCTCP:g}x DCTCP's, or under the 242 us CE threshold, "
        "at every flow count",
        "ecn_bulk",
        ecn_bulk,
    )
    return out
