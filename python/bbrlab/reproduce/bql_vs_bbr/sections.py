"""The bql-vs-bbr report, one function per section after the study's description: the paper's
1 Gbit/s claims with its Figs. 2 and 3 numbers beside ours, the time figures, the three parts (the
RTT sweep, 1 % loss at 1 Gbit/s, 0.7 % loss at 10 Gbit/s with what our endpoints lack), and where
the real-host column is. Each returns its (title, markdown) section."""

from __future__ import annotations

import pandas as pd

from ...results.display import fmt_bps
from ..claims import Claim, claims_table
from ..report import MSS, WIRE, md_table
from ..source_figures import beside
from .figures import SOURCE_FIGURES
from .metrics import _get, _kb, _util
from .plan import CCS, GIG, PAPER, PaperCase, _rtt_label
from .prose import _tengig_text

Section = tuple[str, str]


def _paper_rate(case: PaperCase) -> str:
    return f"{case.rate_bps / 1e6:.1f} Mbit/s ({round(case.rate_bps / GIG * 100, 1):.1f} %)"


def _paper_queue(case: PaperCase) -> str:
    return f"{case.queue_bytes / 1e3:g} KB" if case.queue_bytes < 1e6 else f"{case.queue_bytes / 1e6:g} MB"


def _sweep_table(df: pd.DataFrame) -> str:
    """One part's numbers: a row per (RTT, algorithm)."""
    rows = []
    for rtt in sorted(df["rtt_ms"].unique()):
        for cc in CCS:
            rows.append(
                [
                    _rtt_label(rtt),
                    cc,
                    _util(df, cc, rtt),
                    _kb(_get(df, cc, rtt, "queue_mean_bytes")),
                    _kb(_get(df, cc, rtt, "queue_max_bytes")),
                    _kb(_get(df, cc, rtt, "queue_jitter_bytes")),
                    f"{_get(df, cc, rtt, 'rtt_p95_ms'):.1f} ms",
                    f"{int(_get(df, cc, rtt, 'retransmits')):,}",
                ]
            )
    return md_table(
        [
            "RTT",
            "cc",
            "goodput (utilization)",
            "mean queue",
            "peak queue",
            "queue jitter (p99−p1)",
            "RTT p95",
            "retransmits",
        ],
        rows,
    )


def claims_section(a: pd.DataFrame, cl: list[Claim]) -> Section:
    """The paper's 1 Gbit/s claims beside ours, and its Figs. 2 and 3 numbers beside ours at the RTTs run."""
    rtts = set(a["rtt_ms"].unique())
    paper_rows = [
        [
            f"{rtt} ms, {cc}",
            prate,
            _util(a, cc, rtt),
            pq,
            _kb(_get(a, cc, rtt, "queue_mean_bytes")),
            pj,
            _kb(_get(a, cc, rtt, "queue_jitter_bytes")),
            _kb(_get(a, cc, rtt, "queue_max_bytes")),
        ]
        for (rtt, cc), case in PAPER.items()
        if rtt in rtts
        for prate, pq, pj in [(_paper_rate(case), _paper_queue(case), case.swing)]
    ]
    return (
        "The paper's claims beside ours (1 Gbit/s, 80 MB drop-tail)",
        claims_table(cl, source_header="Anhalt BQL paper")
        + "\n\n"
        + md_table(
            [
                "case",
                "paper rate",
                "bbrlab goodput (of ceiling)",
                "paper mean queue",
                "bbrlab mean queue",
                "paper queue jitter",
                "bbrlab queue jitter",
                "bbrlab peak queue",
            ],
            paper_rows,
        )
        + f"\n\nThe paper's percentages are of 1 Gbit/s at line level, ours of the {fmt_bps(GIG * MSS / WIRE, 1, unit='Mbit/s')} "
        "TCP payload ceiling.",
    )


def time_section(figs: list[tuple[int, int]]) -> Section:
    """Figs. 2 and 3 of the paper beside ours (``figs``: the (figure, RTT) pairs drawn at this size)."""
    return (
        "Figs. 2 and 3: rate and buffer load over time",
        "\n\n".join(_time_pair(no, rtt, dict(figs)) for no, rtt in ((2, 100), (3, 1000))),
    )


def fig4_section(a: pd.DataFrame) -> Section:
    """Part 1: the 1 Gbit/s RTT sweep without loss, with Fig. 4 beside ours."""
    return (
        "Fig. 4: 1 Gbit/s RTT sweep",
        _sweep_table(a)
        + "\n\n"
        + beside(
            SOURCE_FIGURES[4],
            "![bbrlab's Fig. 4: mean goodput and mean buffer load of BQL and BBR against RTT, 1 Gbit/s, "
            "80 MB drop-tail, with the paper's values as black-outlined diamonds](fig4-summary.png)",
            "the same figure redrawn from this run, the paper's values at the RTTs run here drawn on its bars "
            "as black-outlined diamonds (the paper's rates are at line level: a full link is 1000 Mbit/s for its "
            "diamonds, the dashed goodput ceiling for bbrlab's bars)",
        ),
    )


def fig5_section(b: pd.DataFrame) -> Section:
    """Part 2: 1 Gbit/s with 1 % random loss, with Fig. 5 beside ours."""
    return (
        "Fig. 5: 1 Gbit/s, 1 % random loss",
        "The paper: both algorithms keep high rates under 1 % loss (neither uses loss as a congestion signal); "
        "the gap in BQL's favour grows with RTT (both checked in the claims table above).\n\n"
        + _sweep_table(b)
        + "\n\n"
        + beside(
            SOURCE_FIGURES[5],
            "![bbrlab's Fig. 5: mean goodput and buffer load of BQL and BBR against RTT, 1 Gbit/s, 1 % random "
            "loss](fig5-1g-loss1pct.png)",
        ),
    )


def fig6_section(c: pd.DataFrame, tengig: list[Claim]) -> Section:
    """Part 3: 10 Gbit/s with 0.7 % random loss, its claim and what our endpoints lack, with Fig. 6 beside ours."""
    return (
        "Fig. 6: 10 Gbit/s, 0.7 % random loss",
        claims_table(tengig, source_header="Anhalt BQL paper")
        + "\n\n"
        + _tengig_text(c, tengig[0])
        + "\n\n"
        + _sweep_table(c)
        + "\n\n"
        + beside(
            SOURCE_FIGURES[6],
            "![bbrlab's Fig. 6: mean goodput and buffer load of BQL and BBR against RTT, 10 Gbit/s, 0.7 % "
            "random loss](fig6-10g-loss07pct.png)",
        ),
    )


def _time_pair(no: int, rtt_ms: int, drawn: dict[int, int]) -> str:
    """Fig. 2 or 3 of the paper beside ours, or why ours is not drawn at this size."""
    ours = (
        f"![bbrlab's Fig. {no}: goodput and bottleneck buffer load over time of BQL and BBR, 1 Gbit/s, base RTT "
        f"{_rtt_label(rtt_ms)}](fig{no}-rtt{rtt_ms}ms.png)"
        if no in drawn
        else f"*Not drawn at this size: its RTT ({_rtt_label(rtt_ms)}) is not in this size's grid.*"
    )
    return beside(SOURCE_FIGURES[no], ours)


def _kernel_plan_section() -> tuple[str, str]:
    """Where the real-host column is (bql_kernel.py, which builds on this package)."""
    return (
        "The real-host column (`--backend emu`)",
        "`bbrlab reproduce bql-vs-bbr --backend emu` runs the points the link emulator can carry on real "
        "Linux and on the simulator, one page with both: BQL over bbrlab's UDP transport, BQL over kernel "
        "TCP (its BPF port) and the kernel's BBR at 0 ms and 1 Gbit/s, and at 100 ms scaled to 300 Mbit/s; "
        "that page lists the points and why each is carried or scaled (docs/reproduce.md).",
    )
