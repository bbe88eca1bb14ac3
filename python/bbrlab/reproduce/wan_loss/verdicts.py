"""The blog's and the BBR patch series' claims checked on the wan-loss study's numbers, each a `Claim`
with its rule and verdict: the blog's 140 ms rates and BBR's lead under 1.5 % loss (`claims`), the
patch series' 10 Gbit/s example (`patch_claims`) and its random-loss claims on the sweep
(`sweep_claims`). The tolerances that turn a single run's rate into a verdict are named here, with
how the claims, the prose and the report read and write a rate."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from ...results.display import fmt_bps
from ..analysis import value
from ..claims import (
    Check,
    Claim,
    cell,
    check,
    check_within,
    num,
    pct,
    shown_number,
    times,
    untested,
    verdict,
    verdict_of_all,
)
from ..report import MSS, WIRE
from .plan import BLOG_140MS, PATCH_BBR_BPS, PATCH_CUBIC_BPS, SWEEP_RATE_BPS


def _goodput(df: pd.DataFrame, **equal: Any) -> float:
    return value(df, "goodput_bps", **equal)


def _rate(bps: float) -> str:
    return fmt_bps(bps, sig=3)


#: A rate "as the blog measured" (its single iperf3 runs; ours single runs too).
RATE_TOLERANCE = 0.25
#: CUBIC under 1.5 % loss delivers a few Mbit/s at most; single runs spread widely: a factor 2.
COLLAPSE_TOLERANCE = 2.0


#: "BBR keeps far more than CUBIC under loss": the blog's 153 vs 1.23 Mbit/s is 124×; we ask for 10×.
FAR_AHEAD = 10.0


def _close_rule(theirs: float) -> str:
    """`_close`'s rule in words: "within ±25% of", "within 2× of"."""
    return f"within {COLLAPSE_TOLERANCE:g}× of" if theirs < 10e6 else f"within ±{RATE_TOLERANCE:.0%} of"


def _close(ours: float, theirs: float, whose: str, *, where: str = "") -> Check:
    """The blog's and the patch series' single runs against ours (`_close_rule`). A rate of a few
    Mbit/s (CUBIC under loss) spreads widely between single runs: within a factor 2."""
    said = f"{_rate(ours)} is {{}} {whose} {_rate(theirs)}"
    if theirs < 10e6:
        return check_within(ours / theirs, 1 / COLLAPSE_TOLERANCE, COLLAPSE_TOLERANCE, said, times, where=where)
    return check_within(
        ours / theirs - 1, -RATE_TOLERANCE, RATE_TOLERANCE, said.replace("{}", "{} off"), pct, where=where
    )


def claims(a: pd.DataFrame) -> list[Claim]:
    """The blog's 140 ms numbers against ours with its host buffers (unlimited buffers beside)."""
    out = []
    for case, cc, loss, blog_bps in BLOG_140MS:
        ours = _goodput(a, cc=cc, loss_pct=loss, rtt_ms=140, buffers="blog")
        unl = _goodput(a, cc=cc, loss_pct=loss, rtt_ms=140, buffers="unlimited")
        ok = _close(ours, blog_bps, "the blog's")
        out.append(
            Claim(
                f"140 ms, {case}",
                _rate(blog_bps),
                f"{_rate(ours)} (unlimited buffers: {_rate(unl)})",
                f"{_close_rule(blog_bps)} the blog's (blog host buffers)",
                verdict(ok),
                paper_value=cell(num(blog_bps / 1e6, "Mbit/s")),
                bbrlab_value=cell(
                    num(ours / 1e6, "Mbit/s", label="blog buffers"), num(unl / 1e6, "Mbit/s", label="unlimited buffers")
                ),
            )
        )
    c15, b15 = (_goodput(a, cc=cc, loss_pct=1.5, rtt_ms=140, buffers="blog") for cc in ("cubic", "bbr1"))
    blog_x = BLOG_140MS[3][3] / BLOG_140MS[2][3]
    out.append(
        Claim(
            "140 ms, 1.5 % loss: BBR keeps far more throughput than CUBIC",
            f"{blog_x:.0f}×",
            f"{b15 / c15:,.1f}× ({_rate(b15)} vs {_rate(c15)})",
            f"BBR ≥ {FAR_AHEAD:g}× CUBIC (blog host buffers)",
            verdict(check(b15 / c15, ">", FAR_AHEAD, "BBR's goodput is {} CUBIC's", times)),
            paper_value=cell(num(blog_x, "×")),
            bbrlab_value=cell(num(b15 / c15, "×")),
        )
    )
    return out


def patch_claims(b: pd.DataFrame | None) -> list[Claim]:
    """The BBR patch series' 10 Gbit/s example (part B: the full study only)."""
    claim = "10 Gbit/s, 100 ms, 1 % loss: BBR near the link rate, CUBIC a few Mbit/s"
    source = f"BBR {_rate(PATCH_BBR_BPS)}, CUBIC {_rate(PATCH_CUBIC_BPS)}"
    paper = cell(num(PATCH_BBR_BPS / 1e6, "Mbit/s", label="bbr1"), num(PATCH_CUBIC_BPS / 1e6, "Mbit/s", label="cubic"))
    rule = f"BBR {_close_rule(PATCH_BBR_BPS)} the patch series' rate and CUBIC {_close_rule(PATCH_CUBIC_BPS)} its rate"
    if b is None:
        return [untested(claim, source, rule, "not run at this size (the full study runs it)", paper_value=paper)]
    bb, cb = _goodput(b, cc="bbr1"), _goodput(b, cc="cubic")
    return [
        Claim(
            claim,
            source,
            f"BBR {_rate(bb)}, CUBIC {_rate(cb)}",
            rule,
            verdict_of_all(
                [
                    _close(bb, PATCH_BBR_BPS, "the series'", where="BBR"),
                    _close(cb, PATCH_CUBIC_BPS, "the series'", where="CUBIC"),
                ]
            ),
            paper_value=paper,
            bbrlab_value=cell(num(bb / 1e6, "Mbit/s", label="bbr1"), num(cb / 1e6, "Mbit/s", label="cubic")),
        )
    ]


def sweep_claims(c: pd.DataFrame, ccs: tuple[str, ...], losses: tuple[float, ...]) -> list[Claim]:
    """The BBR patch series' random-loss claims on the sweep."""
    link = SWEEP_RATE_BPS * MSS / WIRE
    below15 = [p for p in losses if p < 15]
    share = {p: _goodput(c, cc="bbr1", loss_pct=p) / (link * (1 - p / 100)) for p in below15}
    out = [
        Claim(
            "below 15 % loss BBR fully uses the path, link · (1 − p)",
            "yes",
            "BBRv1 / link·(1−p) (%), per loss rate: "
            + "; ".join(f"{p:g} %: {shown_number(100 * v)}" for p, v in share.items()),
            "≥ 90 % at every loss rate below 15 %",
            verdict_of_all(
                check(v, "≥", 0.9, "BBR gets {} of link · (1 − p)", pct, where=f"{p:g} %") for p, v in share.items()
            ),
            paper_value="fully uses the path",
            bbrlab_value=cell(num(100 * v, "%", label=f"{p:g} % loss") for p, v in share.items()),
        )
    ]
    claim, rule_of = (
        "CUBIC drops by orders of magnitude",
        "at least 100× lower at {hi:g} % than at {lo:g} % (10×: partly)",
    )
    lo, hi = min(losses, default=math.nan), max(losses, default=math.nan)
    if "cubic" in ccs and lo < hi:
        c_lo, c_hi = _goodput(c, cc="cubic", loss_pct=lo), _goodput(c, cc="cubic", loss_pct=hi)
        out.append(
            Claim(
                claim,
                "yes",
                f"CUBIC {_rate(c_lo)} at {lo:g} % → {_rate(c_hi)} at {hi:g} % ({c_lo / c_hi:,.0f}×)",
                rule_of.format(lo=lo, hi=hi),
                verdict_of_all(
                    check(c_lo / c_hi, ">", k, f"CUBIC's goodput at {lo:g} % is {{}} that at {hi:g} %", times)
                    for k in (10, 100)
                ),
                paper_value="orders of magnitude",
                bbrlab_value=cell(num(c_lo / 1e6, "Mbit/s", label=f"{lo:g} % → {hi:g} % loss", to=c_hi / 1e6)),
            )
        )
    else:
        out.append(
            untested(
                claim,
                "yes",
                rule_of.format(lo=lo, hi=hi),
                "needs CUBIC at two loss rates",
                paper_value="orders of magnitude",
            )
        )
    return out
