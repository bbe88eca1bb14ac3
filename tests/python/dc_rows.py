"""Made-up rows of the datacenter studies' tables, for tests that feed a study's claims and
answers numbers chosen to make a verdict or a sentence come out one way."""

from __future__ import annotations

from typing import Any


def convergence_levels(fabric: str, cc: str, jain: float) -> list[dict[str, Any]]:
    """dc-convergence's levels rows of one fabric and algorithm: 1 to 5 active flows, each level
    with Jain index ``jain`` (a flow counted as starved when it is under 0.7)."""
    return [
        dict(
            fabric=fabric,
            cc=cc,
            T=10.0,
            level=active,
            active=active,
            jain_level=jain,
            jain_per_second=jain,
            total_bps=9e8,
            min_share=0.2,
            starved_flows=1 if jain < 0.7 else 0,
        )
        for active in range(1, 6)
    ]
