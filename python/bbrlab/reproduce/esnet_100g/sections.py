"""The esnet-100g report, one function per section after the study's description: the scaled-rates
note, the 100G path per buffer, the buffer axis, the 4×10G LAG path, the host model, the packet
spacing at the send host and the simulator's cost. Each returns its (title, markdown) section and,
where the section checks the slides' notes, the claims it tabulated."""

from __future__ import annotations

import os
from typing import Any

import pandas as pd

from ..claims import Claim, claims_table
from ..report import md_table
from ..source_figures import beside
from .figures import SOURCE_FIGURES
from .plan import SEED_4X10G, SEED_100G, Plan
from .tables import _gap_summary, _host_table, _seed_table, _window_text
from .verdicts import buffer_claims, claims, gap_claims, host_claims

Section = tuple[str, str]
SOURCE_HEADER = "ESnet BBRv3 slides"


def scaled_rates_section(p: Plan) -> Section:
    return (
        "Scaled rates",
        f"This configuration runs every rate (links, pacing caps, NICs) at "
        f"{p.rate_scale:g}× ESnet's: throughputs below are in Gbit/s of the scaled paths (the "
        f"100G path is {100 * p.rate_scale:g}G), so compare ratios and orderings with the slides, not "
        "absolute rates. The full study runs ESnet's rates.",
    )


def path_100g_sections(a: pd.DataFrame, p: Plan) -> tuple[list[Section], list[Claim]]:
    """One section per buffer of the 100G path: our table beside the slides', their notes checked."""
    sections: list[Section] = []
    all_claims: list[Claim] = []
    for buf in p.buffers_ms:
        sel = {"buffer_ms": buf}
        cl = claims(a, 12.0, "100G", f" — buffer {buf:g} ms", **sel)
        all_claims += cl
        sections.append(
            (
                f"100G path, 150 ms, buffer {buf:g} ms of line rate ({100 * p.rate_scale * buf / 8:g} MB)",
                _seed_table(a, SEED_100G, 12.0, **sel)
                + "\n\nThe slides' notes, checked on our numbers:\n\n"
                + claims_table(cl, source_header=SOURCE_HEADER)
                + "\n\n"
                + beside(
                    SOURCE_FIGURES["100G"],
                    f"![bbrlab (blue) beside the ESnet slides' table (grey): throughput ± stddev and retransmits per "
                    f"configuration on the 100G path, buffer {buf:g} ms](path-100g-buffer{buf:g}ms.png)",
                    "the slide's table re-run, bbrlab's bars beside the slides' on the same axes",
                ),
            )
        )
    return sections, all_claims


def buffer_section(a: pd.DataFrame, p: Plan) -> tuple[Section, list[Claim]]:
    cl = buffer_claims(a, p.buffers_ms)
    return (
        "100G path: the buffer axis",
        'The slides conclude that BBRv3 brings "only minor improvements … '
        'on clean paths with large buffered devices".\n\n' + claims_table(cl, source_header=SOURCE_HEADER),
    ), cl


def lag_section(b: pd.DataFrame, p: Plan) -> tuple[Section, list[Claim]]:
    cl = claims(b, 11.0, "4×10G")
    return (
        "4×10G LAG path, 147 ms, receive window 103 MB",
        _seed_table(b, SEED_4X10G, 11.0)
        + "\n\n"
        + claims_table(cl, source_header=SOURCE_HEADER)
        + "\n\n"
        + _window_text(p)
        + "\n\n"
        + beside(
            SOURCE_FIGURES["4x10G"],
            "![bbrlab (blue) beside the ESnet slides' table (grey): throughput ± stddev and retransmits per "
            "configuration on the 4×10G LAG path](path-4x10g.png)",
            "the slide's table re-run, bbrlab's bars beside the slides' on the same axes",
        ),
    ), cl


def hosts_section(d: pd.DataFrame, d_hosts: pd.DataFrame, hm: dict[str, Any], p: Plan) -> tuple[Section, list[Claim]]:
    host_cl = host_claims(d, p)
    return (
        "The hosts instead of fitted path parameters (host model)",
        "The same configurations with no random loss and no receive-window limit, the hosts modelled "
        f"(`[hosts]`: {', '.join(f'{k} = {v}' for k, v in hm.items())}; one seed). The throughput column is scaled back "
        "to ESnet's rates. A stream's work stays on one core at each end, so a busiest core near 100 % marks a "
        "host-limited stream; with NIC flow control on (as fasterdata recommends) a ring 3/4 full pauses the last "
        "switch port, whose queue (the path's buffer) then takes what the stream's core cannot, so ring drops stay "
        "zero and the losses, if any, are the port's.\n\n"
        + _host_table(d, d_hosts, p)
        + "\n\n"
        + claims_table(host_cl, source_header=SOURCE_HEADER),
    ), host_cl


def gaps_section(gs: pd.DataFrame, same_bbr: bool, p: Plan) -> tuple[Section, list[Claim]]:
    """`same_bbr`: BBR's paced and unpaced gap histograms are identical (the cap never binds)."""
    gap_cl = gap_claims(gs)
    return (
        'Packet spacing at the send host (slides: "Histogram of Packet Spacing from tcpdump on Send Host")',
        "One stream on the 4×10G path's member (10 Gbit/s), the DTN's 100G NIC, unpaced and paced at 10 Gbit/s "
        '(the slides: "pacing for these tests 10G"). The gap is between consecutive data packets of the flow finishing '
        "serialization on the NIC, as a hardware transmit timestamp records it (the new `gap_histogram` flow field; "
        "`gaps` table, docs/core-api.md). TSO bursts leave back to back at the NIC's line rate; what differs between "
        "the algorithms is how long the bursts are and how long the pauses between them.\n\n"
        + _gap_summary(gs, 100 * p.rate_scale)
        + (
            f"\n\nBBR's paced and unpaced histograms are identical: the {10 * p.rate_scale:g} Gbit/s cap never binds, "
            "because BBR already paces itself below it (its bandwidth estimate is the window-limited rate) — the slides' "
            '"BBR has pacing built in".'
            if same_bbr
            else "\n\nBBR's paced and unpaced histograms differ: the cap binds at times."
        )
        + "\n\nThe slides' notes, checked on our numbers:\n\n"
        + claims_table(gap_cl, source_header=SOURCE_HEADER)
        + "\n\n"
        + beside(
            SOURCE_FIGURES["gaps"],
            "![bbrlab's histograms of the gap between consecutive data packets leaving the sender NIC, BBRv3 and "
            "CUBIC, unpaced and paced](packet-gaps.png)",
            "the same histograms from the simulated NIC's transmit timestamps",
        ),
    ), gap_cl


def cost_section(a: pd.DataFrame, p: Plan, jobs: int, peak_rss_mb: float) -> Section:
    big = a[(a["streams"] == 8)]
    perf = md_table(
        ["configuration", "slowest run wall (s)"],
        [
            [f"buffer {r['buffer_ms']:g} ms, 8×{r['cc_name']}, cap {r['cap_gbps']:g}", f"{r['wall_max']:.1f}"]
            for _, r in big.iterrows()
        ],
    )
    return (
        "Simulator cost of the 100G runs",
        f"Simulated {p.dur_s:g} s of {100 * p.rate_scale:g} Gbit/s × 150 ms with 8 streams, one core per run, "
        f"{jobs} at a time on a {os.cpu_count()}-core machine:\n\n{perf}\n\nPeak resident memory of a worker process: {peak_rss_mb:,.0f} MB.",
    )
