"""What the dc-query statistics say when compared: what a statistic rests on where not every query
finished, BBR/CUBIC ratios as the sentences write them, and whether BBR's mean latency is above or
below CUBIC's at each n (significantly, 95 % Welch's t, and by at least `MATERIAL`). The verdicts,
the prose and the report's table read them."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd

from ...results.display import fmt_seconds
from .. import dc_common as dc
from ..analysis import Estimate, sign_of_difference, value


def rests_on(st: pd.DataFrame, **where: object) -> str:
    """ "" when every requested query finished, else what a statistic rests on: "rests on 1 of 10
    queries; 1 censored at the run's end (≥ 2.1 s); 8 never started"."""
    done, req = value(st, "completed", **where), value(st, "requested", **where)
    if not math.isfinite(done + req) or done == req:
        return ""  # not run, or every query finished
    done, req = int(done), int(req)
    cens, never = int(value(st, "censored", **where)), int(value(st, "not_started", **where))
    parts = [f"rests on {done} of {req} queries"]
    if cens:
        parts.append(f"{cens} censored at the run's end (≥ {fmt_seconds(value(st, 'censored_min_s', **where))})")
    if never:
        parts.append(f"{never} never started")
    return "; ".join(parts)


def _ratio(st: pd.DataFrame, fabric: str, bg: bool, n: int, col: str = "mean_s") -> float:
    """BBR / CUBIC of a statistic."""
    return value(st, col, fabric=fabric, bg=bg, cc=dc.BBR, n=n) / value(st, col, fabric=fabric, bg=bg, cc="cubic", n=n)


def _fmt_ratio(r: float) -> str:
    """A ratio in a sentence; "–" where one algorithm finished no query (its basis says so)."""
    return f"{r:.2f}" if math.isfinite(r) else "–"


def _basis(st: pd.DataFrame, fabric: str, bg: bool, n: int) -> str:
    """What a BBR/CUBIC ratio rests on where not every query finished: "; BBR: rests on 1 of 10 …"."""
    parts = [f"{dc.CC_NAME[cc]}: {b}" for cc in dc.CCS if (b := rests_on(st, fabric=fabric, bg=bg, cc=cc, n=n))]
    return "".join(f"; {x}" for x in parts)


def _estimate(st: pd.DataFrame, fabric: str, bg: bool, cc: str, n: int) -> Estimate:
    """Mean query latency with its 95 % CI over the completed queries, as `_stats` computed it."""
    done = value(st, "completed", fabric=fabric, bg=bg, cc=cc, n=n)
    return Estimate(
        value(st, "mean_s", fabric=fabric, bg=bg, cc=cc, n=n),
        value(st, "ci_s", fabric=fabric, bg=bg, cc=cc, n=n),
        int(done) if math.isfinite(done) else 0,
    )


#: A latency difference counts when significant (95 %, Welch's t) and at least this share of CUBIC's
#: mean: the 1 % within which the lossless fabric is called algorithm-blind.
MATERIAL = 0.01


def _bbr_vs_cubic(st: pd.DataFrame, fabric: str, bg: bool, ns: Sequence[int]) -> dict[int, int | None]:
    """Per n: +1 when BBR's mean latency is above CUBIC's (significantly, by ≥ 1 %), −1 below, 0 neither."""
    return {
        n: sign_of_difference(
            _estimate(st, fabric, bg, dc.BBR, n), _estimate(st, fabric, bg, "cubic", n), min_rel=MATERIAL
        )
        for n in ns
    }


def _mean(st: pd.DataFrame, fabric: str, bg: bool, cc: str, n: int) -> float:
    """Mean query latency over the completed queries at one point."""
    return value(st, "mean_s", fabric=fabric, bg=bg, cc=cc, n=n)
