"""How big the dc-incast study runs and what it is compared with: per size (tiny, quick, full) the
fabrics, flow counts, repetitions and measurement window; the Waterloo DC study's readings (Figure 7's
means and the 75 Mbit/s link's limit), and `tool_reading_bps`, the study's aggregator reading
(each flow's bytes per microsecond in integer arithmetic, × 8 Mbit/s) that the claims compare."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import dc_common as dc
from ..context import Size
from ..sources import WATERLOO_DC

SOURCE = WATERLOO_DC


@dataclass(frozen=True)
class Plan:
    ns: tuple[int, ...]  # numbers of senders
    reps: int  # samples per (fabric, algorithm, n)
    dur_s: float  # measurement window = run length
    fabrics: tuple[str, ...] = tuple(dc.FABRICS)


PLANS = {
    Size.TINY: Plan(ns=(1, 10), reps=2, dur_s=1.0),
    # The n the claims read (1: the reference of the decline; ≥ 10: BBR's lead; 20: Figure 8's
    # fraction), which are also the n the figures report.
    Size.QUICK: Plan(ns=(1, 10, 20), reps=3, dur_s=2.0, fabrics=dc.QUICK_FABRICS),
    Size.FULL: Plan(ns=(1, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20), reps=20, dur_s=10.0),
}


#: "Most samples reach 75 % of the link" (Figure 8's reading) in bit/s.
LINK_75_BPS = 0.75 * 1e9


#: The Waterloo DC study's own numbers: github.com/chowes/data-center-bbr,
#: tests/results/throughput/thru_cubic.csv and thru_bbr.csv (commit e490c96, "Finished throughput
#: tests", 2017-11-26; 100 samples per n), as the aggregator wrote them (`tool_reading_bps`). Per n:
#: the mean total (Mbit/s), the fraction of samples at ≥ 750 Mbit/s, and the mean reading of a
#: sample's ⌊n/4⌋ slowest flows — the number of workers the Waterloo DC study's node list puts in
#: the aggregator's own rack (``dc_common.SEED_WORKER_RACKS``); None below n = 4.
SEED_READINGS: dict[str, dict[int, tuple[float, float, float | None]]] = {
    "cubic": {
        1: (936.0, 1.0, None),
        2: (933.3, 1.0, None),
        3: (928.9, 1.0, None),
        4: (925.6, 1.0, 135.3),
        5: (920.6, 1.0, 74.5),
        6: (912.2, 1.0, 33.7),
        7: (904.6, 1.0, 12.0),
        8: (902.0, 0.99, 47.1),
        9: (880.3, 0.97, 18.2),
        10: (860.2, 0.94, 4.1),
        11: (845.7, 0.88, 0.6),
        12: (837.6, 0.91, 5.8),
        13: (818.3, 0.88, 1.0),
        14: (801.9, 0.79, 0.0),
        15: (809.4, 0.86, 0.0),
        16: (771.1, 0.70, 0.0),
        17: (764.0, 0.68, 0.0),
        18: (761.9, 0.68, 0.0),
        19: (735.8, 0.54, 0.0),
        20: (698.5, 0.42, 0.0),
    },
    dc.BBR: {
        1: (936.0, 1.0, None),
        2: (931.1, 1.0, None),
        3: (928.7, 1.0, None),
        4: (921.0, 1.0, 15.8),
        5: (914.2, 1.0, 5.2),
        6: (909.5, 1.0, 2.9),
        7: (904.6, 1.0, 1.5),
        8: (891.0, 0.99, 0.6),
        9: (889.2, 1.0, 0.2),
        10: (882.1, 1.0, 0.4),
        11: (877.4, 1.0, 0.5),
        12: (867.4, 1.0, 0.3),
        13: (860.1, 0.99, 0.3),
        14: (855.2, 0.99, 0.2),
        15: (842.3, 0.97, 0.2),
        16: (834.3, 0.93, 0.1),
        17: (826.6, 0.95, 0.2),
        18: (814.2, 0.91, 0.1),
        19: (816.6, 0.90, 0.0),
        20: (805.0, 0.92, 0.1),
    },
}


def tool_reading_bps(delivered_bytes: float | np.ndarray, window_s: float) -> float | np.ndarray:
    """A flow's throughput as the Waterloo DC study's aggregator reports it (src/aggregator.cc,
    ``calc_throughput``: ``bytes / usecs`` in integer arithmetic, × ``USECS_PER_SEC /
    BYTES_PER_MBIT`` = 8), in bit/s: whole bytes per microsecond × 8 Mbit/s. A flow loses what
    its rate has beyond a whole byte per µs, up to 8 Mbit/s, so n equal shares of the 941 Mbit/s
    goodput ceiling read 936 Mbit/s at n = 1 and 800 at n = 20."""
    return 8e6 * np.floor(np.asarray(delivered_bytes, dtype=float) / (window_s * 1e6))
