"""How big the dc-query study runs: the query (1 MiB in all, its requests 20 ms apart with up to
50 µs of thread start-up each, from 0.3 s), what counts as a collapsed query and as the port's
per-ingress share, and per size (tiny, quick, full) the queries per point, the worker counts with and
without the background flow, the n of the CDF figures and the fabrics. Everything else in the study
reads its numbers from here."""

from __future__ import annotations

from dataclasses import dataclass

from .. import dc_common as dc
from ..context import Size
from ..sources import WATERLOO_DC

SOURCE = WATERLOO_DC


QUERY_BYTES = 1 << 20
GAP_S = 0.02
JITTER_S = 50e-6
QUERY_START_S = 0.3
#: A query slower than this counts as collapsed (an RTO is 200 ms; the wire time 8.9 ms).
COLLAPSE_S = 0.05
#: A background-flow query mean this close to n/(n+1) of the port's wire time counts as that share.
SHARE_TOLERANCE = 0.15


@dataclass(frozen=True)
class Plan:
    reps: int  # queries per (fabric, algorithm, n, background)
    ns_nobg: tuple[int, ...]
    ns_bg: tuple[int, ...]
    n_cdf: int  # the n of the CDF figures (the study's: 20)
    fabrics: tuple[str, ...] = tuple(dc.FABRICS)


PLANS = {
    # 6 queries: the shortest run (lossless, no background) still spans one 1-s sample.
    Size.TINY: Plan(reps=6, ns_nobg=(1, 20), ns_bg=(1, 20), n_cdf=20),
    Size.QUICK: Plan(reps=10, ns_nobg=(1, 5, 10, 20), ns_bg=(1, 5, 10, 20), n_cdf=20, fabrics=dc.QUICK_FABRICS),
    Size.FULL: Plan(
        reps=100,
        ns_nobg=(1, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 24, 28, 32, 36, 40),
        ns_bg=(1, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20),
        n_cdf=20,
    ),
}
