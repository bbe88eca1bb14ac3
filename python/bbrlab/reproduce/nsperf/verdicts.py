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

from ..claims import Claim, Num, cell, num, untested, verdict_of_all
from .plan import Config, Scenario

#: A statement's rule on one algorithm's points: (holds, or None when undecided; values shown).
Test = Callable[[pd.DataFrame, Scenario, str], tuple[bool | None, list[Num]]]

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


def _judge(points: pd.DataFrame, cfg: Config, scenario: str, test: Test) -> tuple[list[bool | None], list[Num]]:
    sc = next(s for s in cfg.scenarios() if s.name == scenario)
    results: list[bool | None] = []
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

    def coexist(d: pd.DataFrame, sc: Scenario, cc: str) -> tuple[bool | None, list[Num]]:
        share = d["throughput_bps"] / sc.rate_bps
        lo, hi = COEXIST_SHARE
        ok = bool(((share >= lo) & (share <= hi)).all()) if len(d) else None
        return ok, [num(100 * share.min(), "%", label=f"{cc} min"), num(100 * share.max(), "%", label=f"{cc} max")]

    def random_loss(d: pd.DataFrame, sc: Scenario, cc: str) -> tuple[bool | None, list[Num]]:
        d = d[d["x"] < LOSS_THRESH_PCT]
        share = d["throughput_bps"] / sc.rate_bps
        ok = bool((share >= HIGH_TPUT_SHARE).all()) if len(d) else None
        return ok, [num(100 * share.min(), "%", label=f"{cc} min below {LOSS_THRESH_PCT:g} % loss")] if len(d) else []

    def shallow(d: pd.DataFrame, sc: Scenario, cc: str) -> tuple[bool | None, list[Num]]:
        v1 = _points(points, "shallow", "bbr1").set_index("x")["retrans_pct"]
        mine = d.set_index("x")["retrans_pct"]
        common = [x for x in mine.index if x in v1.index]
        ok = all(mine[x] < v1[x] for x in common) if common else None
        return ok, [num(mine.max(), "%", label=f"{cc} max")] + (
            [num(v1.max(), "%", label="bbr1 max")] if common else []
        )

    def bufferbloat(d: pd.DataFrame, sc: Scenario, cc: str) -> tuple[bool | None, list[Num]]:
        rtt_ms = sc.rtt_s * 1e3
        ok = bool((d["p50_srtt_ms"] <= LOW_DELAY_RTTS * rtt_ms).all()) if len(d) else None
        return ok, [num(d["p50_srtt_ms"].max(), "ms", label=f"{cc} max")]

    def ecn_bulk(d: pd.DataFrame, sc: Scenario, cc: str) -> tuple[bool | None, list[Num]]:
        rtt_ms = sc.rtt_s * 1e3
        dctcp = _points(points, "ecn_bulk", "dctcp").set_index("x")["p50_srtt_ms"] - rtt_ms
        queue = d.set_index("x")["p50_srtt_ms"] - rtt_ms
        tests = [
            q <= max(CE_THRESHOLD_MS, ECN_QUEUE_VS_DCTCP * dctcp.get(x, math.nan))
            if math.isfinite(dctcp.get(x, math.nan))
            else q <= CE_THRESHOLD_MS
            for x, q in queue.items()
        ]
        ok = all(tests) if tests else None
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
