"""The Waterloo DC study's claims on incast checked on the dc-incast numbers: whether the
throughput falls with n per fabric, and whether BBR is significantly ahead of CUBIC, with the
thresholds (material change, significance) that a difference must pass."""

from __future__ import annotations

import math

import pandas as pd

from .. import dc_common as dc
from ..analysis import Estimate, difference, sign_of_difference, value
from ..claims import Claim, cell, check, check_sign, num, pct, untested, verdict_of_all
from ..sentences import change, direction


def _estimate(st: pd.DataFrame, fabric: str, cc: str, n: int) -> Estimate:
    """The mean aggregate throughput at n with its 95 % CI, as `stats` computed it."""
    samples = value(st, "samples", fabric=fabric, cc=cc, n=n)
    return Estimate(
        value(st, "mean_bps", fabric=fabric, cc=cc, n=n),
        value(st, "ci_bps", fabric=fabric, cc=cc, n=n),
        int(samples) if math.isfinite(samples) else 0,
    )


#: A change or lead in throughput counts when it is significant (95 %, Welch's t) and at least this
#: share of the reference mean: near the link's ceiling the samples' intervals shrink to a fraction
#: of a Mbit/s, and a significant 0.1 % is no decline.
MATERIAL = 0.02


SIGNIFICANT = f"significant (95 %, Welch's t) and ≥ {MATERIAL * 100:g} %"

#: A lead's sign (`sign_of_difference`) in a reason's words.
LEAD_WORDS = {
    1: "a significant lead",
    -1: "significantly behind",
    0: f"not a lead ({SIGNIFICANT} needed)",
    None: "cannot be compared",
}


def _trend(st: pd.DataFrame, fabric: str, cc: str, n_max: int) -> int | None:
    """Sign of the change of the mean from n = 1 to n_max (−1: falls), significant and material."""
    return direction(_estimate(st, fabric, cc, 1), _estimate(st, fabric, cc, n_max), tolerance=MATERIAL)


def _lead(st: pd.DataFrame, fabric: str, n: int) -> tuple[float, float, int | None]:
    """BBR − CUBIC mean throughput at n, the half-width of its 95 % CI (Welch), and its sign
    (significant and material)."""
    b, c = _estimate(st, fabric, dc.BBR, n), _estimate(st, fabric, "cubic", n)
    d, hw = difference(b, c)
    return d, hw, sign_of_difference(b, c, min_rel=MATERIAL)


def _big(ns: list[int]) -> list[int]:
    """The n of the Waterloo study's BBR-lead claim (n ≥ 10) in this size's grid."""
    return [n for n in ns if n >= 10]


def claims(st: pd.DataFrame, ns: list[int]) -> list[Claim]:
    """The Waterloo study's §4.2 claims, checked on each fabric."""
    n_cdf = max(ns)
    big = _big(ns)
    out = []
    for fabric in dc.fabrics_in(st):

        def g(col: str, cc: str, n: int, fabric: str = fabric) -> float:
            return value(st, col, fabric=fabric, cc=cc, n=n)

        where = f" — {dc.FABRIC_LABEL[fabric]}"
        out.append(
            Claim(
                "throughput falls as n grows, for both" + where,
                "yes",
                f"CUBIC {dc.fmt_mbps(g('mean_bps', 'cubic', 1))} → {dc.fmt_mbps(g('mean_bps', 'cubic', n_cdf))}, "
                f"BBR {dc.fmt_mbps(g('mean_bps', dc.BBR, 1))} → {dc.fmt_mbps(g('mean_bps', dc.BBR, n_cdf))} (n = 1 → {n_cdf})",
                f"the Waterloo DC study's reading: mean at n = {n_cdf} below n = 1, the drop {SIGNIFICANT} of the n = 1 mean, per "
                "algorithm",
                verdict_of_all(
                    check_sign(
                        _trend(st, fabric, cc, n_cdf),
                        -1,
                        change(
                            "the mean",
                            g("mean_bps", cc, 1),
                            g("mean_bps", cc, n_cdf),
                            dc.fmt_mbps,
                            sign=_trend(st, fabric, cc, n_cdf),
                            where_a="at n = 1",
                            where_b=f"at n = {n_cdf}",
                        ),
                        where=dc.CC_NAME[cc],
                    )
                    for cc in dc.CCS
                ),
                paper_value="falls",
                bbrlab_value=cell(
                    num(
                        g("mean_bps", cc, 1) / 1e6,
                        "Mbit/s",
                        label=f"{cc} n = 1 → {n_cdf}",
                        to=g("mean_bps", cc, n_cdf) / 1e6,
                    )
                    for cc in dc.CCS
                ),
            )
        )
        claim = "BBR significantly ahead of CUBIC for n ≥ 10" + where
        rule = f"the Waterloo DC study's reading: BBR − CUBIC above 0, {SIGNIFICANT} of CUBIC's mean, at each n ≥ 10"
        if big:
            leads = {n: _lead(st, fabric, n) for n in big}
            out.append(
                Claim(
                    claim,
                    "yes",
                    "BBR − CUBIC: "
                    + ", ".join(f"n = {n}: {d / 1e6:+.0f} ± {hw / 1e6:.0f}" for n, (d, hw, _) in leads.items())
                    + " Mbit/s",
                    rule,
                    verdict_of_all(
                        check_sign(
                            sign,
                            1,
                            f"BBR − CUBIC {d / 1e6:+.0f} ± {hw / 1e6:.0f} Mbit/s, {LEAD_WORDS[sign]}",
                            where=f"n = {n}",
                        )
                        for n, (d, hw, sign) in leads.items()
                    ),
                    paper_value="ahead",
                    bbrlab_value=cell(
                        num(d / 1e6, "Mbit/s", label=f"n = {n}", ci=hw / 1e6) for n, (d, hw, _) in leads.items()
                    ),
                )
            )
        else:
            out.append(untested(claim, "yes", rule, f"no n ≥ 10 in this size's grid ({ns})", paper_value="ahead"))
        f_cubic, f_bbr = g("frac75", "cubic", n_cdf), g("frac75", dc.BBR, n_cdf)
        out.append(
            Claim(
                f"n = {n_cdf}: fraction of samples ≥ 75 % of the link" + where,
                "CUBIC < 50 %, BBR larger",
                f"CUBIC {f_cubic:.0%}, BBR {f_bbr:.0%}",
                "the Waterloo DC study's reading ≥ 750 Mbit/s: CUBIC < 50 % of samples; BBR > CUBIC",
                verdict_of_all(
                    [
                        check(f_cubic, "<", 0.5, "CUBIC {} of samples", pct),
                        check(f_bbr, ">", f_cubic, "BBR {} vs CUBIC {limit}", pct),
                    ]
                ),
                paper_value="CUBIC < 50 %, BBR larger",
                bbrlab_value=cell(num(100 * f_cubic, "%", label="cubic"), num(100 * f_bbr, "%", label=dc.BBR)),
            )
        )
    return out


def _claim(cl: list[Claim], start: str, fabric: str) -> Claim:
    return next(c for c in cl if c.claim.startswith(start) and c.claim.endswith(dc.FABRIC_LABEL[fabric]))
