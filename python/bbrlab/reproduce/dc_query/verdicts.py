"""The Waterloo DC study's §4.1 claims checked on the dc-query study's numbers, on each fabric, each
a `Claim` with its rule and verdict: no incast collapse without background traffic, a background
flow raising mean latency and variance drastically, and BBR below CUBIC with the background flow,
most at small n. A function per claim; `claims` lists them in the report's order."""

from __future__ import annotations

from functools import partial

import pandas as pd

from ...results.display import fmt_seconds
from .. import dc_common as dc
from ..claims import Claim, all_of, cell, check, check_sign, check_within, num, times, verdict_of_all
from ..sentences import compare
from .metrics import _basis, _bbr_vs_cubic, _estimate, _fmt_ratio, _mean, _ratio
from .plan import Plan


def claims(st: pd.DataFrame, p: Plan) -> list[Claim]:
    """The Waterloo study's §4.1 claims, checked on each fabric."""
    nmax, bgmax = max(p.ns_nobg), max(p.ns_bg)
    mid = min(p.ns_bg, key=lambda n: abs(n - 5))
    shown = sorted({1, mid, bgmax})
    out = []
    for fabric in dc.fabrics_in(st):
        where = f" — {dc.FABRIC_LABEL[fabric]}"
        out += [
            _no_collapse_claim(st, fabric, nmax, where),
            _background_claim(st, fabric, where),
            _bbr_lower_claim(st, fabric, bgmax, shown, where),
        ]
    return out


def _no_collapse_claim(st: pd.DataFrame, fabric: str, nmax: int, where: str) -> Claim:
    """Without background traffic: the mean at the largest n against n = 1, and BBR against CUBIC there."""
    mean = partial(_mean, st, fabric)
    grow = {cc: mean(False, cc, nmax) / mean(False, cc, 1) for cc in dc.CCS}
    same = _ratio(st, fabric, False, nmax)
    return Claim(
        "no incast collapse without background traffic (n up to 40)" + where,
        "same latency for n = 1..40, BBR ≈ CUBIC",
        f"n = {nmax}: CUBIC {fmt_seconds(mean(False, 'cubic', nmax))}, BBR {fmt_seconds(mean(False, dc.BBR, nmax))}: "
        f"{grow['cubic']:.2f}× (CUBIC) and {grow[dc.BBR]:.2f}× (BBR) the n = 1 mean; BBR/CUBIC = {same:.2f}",
        f"mean at n = {nmax} ≤ 1.5× the n = 1 mean, per algorithm; BBR/CUBIC there within 1.5× either way",
        verdict_of_all(
            [
                check_within(g, 0, 1.5, f"mean at n = {nmax} is {{}} the n = 1 mean", times, where=dc.CC_NAME[cc])
                for cc, g in grow.items()
            ]
            + [check_within(same, 1 / 1.5, 1.5, f"BBR/CUBIC at n = {nmax} is {{}}", times, where="BBR/CUBIC")]
        ),
        paper_value="same latency for n = 1..40, BBR ≈ CUBIC",
        bbrlab_value=cell(
            num(1e3 * mean(False, cc, 1), "ms", label=f"{cc} n = 1 → {nmax}", to=1e3 * mean(False, cc, nmax))
            for cc in dc.CCS
        ),
    )


def _background_claim(st: pd.DataFrame, fabric: str, where: str) -> Claim:
    """One background flow against none at n = 1: the mean's growth and a larger standard deviation."""
    mean = partial(_mean, st, fabric)
    slow = {cc: mean(True, cc, 1) / mean(False, cc, 1) for cc in dc.CCS}
    sd = {(cc, bg): _estimate(st, fabric, bg, cc, 1).sd for cc in dc.CCS for bg in (False, True)}
    return Claim(
        "a background flow raises mean latency and variance drastically" + where,
        "drastic increase",
        f"n = 1: CUBIC {fmt_seconds(mean(True, 'cubic', 1))}, BBR {fmt_seconds(mean(True, dc.BBR, 1))}: mean "
        f"×{slow['cubic']:.2f} (CUBIC), ×{slow[dc.BBR]:.2f} (BBR) of the mean without; standard deviation "
        + ", ".join(
            f"{fmt_seconds(sd[(cc, False)])} → {fmt_seconds(sd[(cc, True)])} ({dc.CC_NAME[cc]})" for cc in dc.CCS
        ),
        "n = 1 mean with background ≥ 1.5× (raises) and ≥ 5× (drastically) the mean without, and a larger "
        "standard deviation, per algorithm",
        verdict_of_all(
            [
                check(
                    x,
                    "≥",
                    1.5,
                    "mean with background {} the mean without",
                    times,
                    where=f"{dc.CC_NAME[cc]} raises",
                )
                for cc, x in slow.items()
            ]
            + [
                check(
                    x,
                    "≥",
                    5,
                    "mean with background {} the mean without",
                    times,
                    where=f"{dc.CC_NAME[cc]} drastically",
                )
                for cc, x in slow.items()
            ]
            + [
                check(
                    sd[(cc, True)],
                    ">",
                    sd[(cc, False)],
                    "standard deviation {} with background vs {limit} without",
                    fmt_seconds,
                    where=f"{dc.CC_NAME[cc]} variance",
                )
                for cc in dc.CCS
            ]
        ),
        paper_value="drastic increase",
        bbrlab_value=cell(
            [num(slow[cc], "×", label=f"{cc} mean with/without") for cc in dc.CCS]
            + [
                num(
                    1e3 * sd[(cc, False)],
                    "ms",
                    label=f"{cc} standard deviation without → with",
                    to=1e3 * sd[(cc, True)],
                )
                for cc in dc.CCS
            ]
        ),
    )


def _bbr_lower_claim(st: pd.DataFrame, fabric: str, bgmax: int, shown: list[int], where: str) -> Claim:
    """With the background flow: BBR/CUBIC in mean and p95 at n = 1, and its lead there against the largest n."""
    r1, r1p, rmax = (
        _ratio(st, fabric, True, 1),
        _ratio(st, fabric, True, 1, "p95_s"),
        _ratio(st, fabric, True, bgmax),
    )
    lower1 = _bbr_vs_cubic(st, fabric, True, [1])[1]
    return Claim(
        "with background: BBR below CUBIC in mean and p95, most at small n" + where,
        "BBR significantly lower",
        "BBR/CUBIC mean = "
        + ", ".join(f"{_fmt_ratio(_ratio(st, fabric, True, n))} (n = {n}{_basis(st, fabric, True, n)})" for n in shown)
        + f"; p95 {_fmt_ratio(r1p)} (n = 1)",
        f"at n = 1 BBR/CUBIC < 0.9 in mean (and significantly lower, 95 %, Welch's t) and in p95; BBR's lead "
        f"(mean ratio < 1) at n = 1 at least as large as at n = {bgmax}",
        verdict_of_all(
            [
                all_of(
                    check(r1, "<", 0.9, "BBR/CUBIC mean {}", _fmt_ratio),
                    check_sign(
                        lower1,
                        -1,
                        compare(
                            "BBR's mean",
                            "CUBIC's",
                            {1: lower1},
                            more="significantly above",
                            less="significantly below",
                        ),
                    ),
                    where="n = 1 mean",
                ),
                check(r1p, "<", 0.9, "BBR/CUBIC p95 {}", _fmt_ratio, where="n = 1 p95"),
                all_of(
                    check(r1, "<", 1, "BBR/CUBIC mean {} at n = 1", _fmt_ratio),
                    check(r1, "≤", rmax, f"BBR/CUBIC mean {{}} at n = 1 vs {{limit}} at n = {bgmax}", _fmt_ratio),
                    where="lead most at small n",
                ),
            ]
        ),
        paper_value="BBR significantly lower",
        bbrlab_value=cell(
            [num(_ratio(st, fabric, True, n), label=f"BBR/CUBIC mean n = {n}") for n in shown]
            + [num(r1p, label="BBR/CUBIC p95 n = 1")]
        ),
    )
