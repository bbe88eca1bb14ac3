"""The wan-loss report's sections after the blog's claims: the blog's grid with its heatmaps, the BBR
patch series' 10 Gbit/s example beside ours (full study only), and the random-loss sweep beside
link · (1 − loss) with the patch series' claims. Each returns its (title, markdown) section."""

from __future__ import annotations

import pandas as pd

from ..claims import Claim, claims_table
from ..report import MSS, WIRE, md_table
from ..source_figures import beside
from .figures import _RESULTS_TABLE
from .plan import PATCH_BBR_BPS, PATCH_CUBIC_BPS, SWEEP_RATE_BPS, Plan
from .verdicts import _goodput, _rate


def _grid_section(a: pd.DataFrame, p: Plan, ccs: list[str]) -> tuple[str, str]:
    """The blog's grid, one row per (host buffers, RTT, loss), with the heatmaps."""
    table_rows = [
        [mode, f"{rtt} ms", f"{loss:g} %"]
        + [_rate(_goodput(a, cc=cc, rtt_ms=rtt, loss_pct=loss, buffers=mode)) for cc in ccs]
        for mode in ("blog", "unlimited")
        for rtt in p.rtts_ms
        for loss in p.losses_pct
    ]
    return (
        "The grid",
        md_table(["host buffers", "RTT", "loss"] + ccs, table_rows)
        + "\n\n"
        + beside(
            _RESULTS_TABLE,
            "![bbrlab's goodput heatmap (Mbit/s) over RTT × random loss per algorithm, 2.5 Gbit/s path, the blog's "
            "host buffers (rcvbuf 6 MiB)](heatmap-blog.png)\n\n"
            "![bbrlab's goodput heatmap (Mbit/s) over RTT × random loss per algorithm, 2.5 Gbit/s path, unlimited "
            "socket buffers](heatmap-unlimited.png)",
            "the blog's grid run here, goodput per RTT × loss, with the blog's host buffers and with unlimited ones",
        ),
    )


def _patch_section(b: pd.DataFrame) -> tuple[str, str]:
    """The BBR patch series' 10G example beside ours."""
    return (
        "The BBR patch series' example (10 Gbit/s, 100 ms, 1 % loss)",
        md_table(
            ["algorithm", "netdev 2016 (E. Dumazet)", "bbrlab"],
            [
                ["cubic", _rate(PATCH_CUBIC_BPS), _rate(_goodput(b, cc="cubic"))],
                ["bbr", _rate(PATCH_BBR_BPS), _rate(_goodput(b, cc="bbr1"))],
            ],
        ),
    )


def _sweep_section(c: pd.DataFrame, p: Plan, patch_series: list[Claim]) -> tuple[str, str]:
    """The random-loss sweep beside link · (1 − loss), with the patch series' claims."""
    sweep_ccs = list(p.sweep_ccs)
    sweep_rows = [
        [f"{loss:g} %"]
        + [_rate(_goodput(c, cc=cc, loss_pct=loss)) for cc in sweep_ccs]
        + [_rate(SWEEP_RATE_BPS * MSS / WIRE * (1 - loss / 100))]
        for loss in p.sweep_losses_pct
    ]
    return (
        "Random-loss sweep (100 Mbit/s, 100 ms, 1 BDP)",
        "The BBR patch series states that below 15 % loss BBR fully uses the path "
        "(link · (1 − loss)), while CUBIC drops by orders of magnitude; its 10 Gbit/s example is part B "
        "(the full study).\n\n"
        + claims_table(patch_series, source_header="BBR patch series")
        + "\n\n"
        + md_table(["loss"] + sweep_ccs + ["link·(1−p)"], sweep_rows)
        + "\n\n![sweep](loss-sweep.png)",
    )
