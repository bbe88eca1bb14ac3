"""The esnet-100g study's figures: per path, our throughputs and retransmits beside the
slides' (bars with standard deviations), and the histograms of packet spacing at the send host's NIC;
and the slides these redraw (`SOURCE_FIGURES`), as the report shows them beside ours."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ...plots.figures import save, subplots
from ..analysis import row
from ..source_figures import SourceFigure
from .plan import BBR, CC_SEED, SOURCE

#: The label of the slides' bars on `bar_plot`'s axes.
SLIDES_LABEL = "ESnet slides"

_TABLE_SLIDE = (
    "a table: per number of streams (1, 8), algorithm (bbr = BBRv3, cubic) and pacing per stream (0 = "
    "unpaced), the mean throughput (Gbps), its standard deviation over n runs, and the retransmitted "
    "segments (RXMTs)."
)
_ON_AXES = (
    f"the grey bars labelled “{SLIDES_LABEL}”: the table's throughput with its standard deviation (left) and "
    "its retransmits (right), beside bbrlab's blue ones"
)

#: The slides this study redraws (each study has this table: the report tests read it).
SOURCE_FIGURES = {
    "100G": SourceFigure(
        SOURCE,
        "slide “Cubic vs BBRv3”, 100G path",
        "lbl-dev-dtn1.es.net to cern773-ps-tp.es.net (100G) RTT = 150ms",
        _TABLE_SLIDE + " Its notes: throughput slightly better with BBR; BBR more consistent with 8 streams; "
        "pacing helps parallel CUBIC flows; BBR has about 10× more retransmits than CUBIC.",
        on_bbrlab_axes=_ON_AXES,
    ),
    "4x10G": SourceFigure(
        SOURCE,
        "slide “Cubic vs BBRv3”, 4×10G path",
        "lbl-dev-dtn1.es.net to pygrid-sonar2.lancs.ac.uk (4×10G, RTT = 147ms)",
        _TABLE_SLIDE + " Its notes: throughput considerably better with BBR; low throughput because the "
        "receive host's TCP window limited it.",
        on_bbrlab_axes=_ON_AXES,
    ),
    "gaps": SourceFigure(
        SOURCE,
        "slide “Packet Spacing Histograms”",
        "Histogram of Packet Spacing from tcpdump on Send Host",
        "histograms of the gap between consecutive packets on the send host (tcpdump with nanosecond adapter "
        "timestamps), CUBIC vs BBRv3, unpaced vs paced at 10G. The slides give no numbers; their notes: BBR "
        "unpaced is similar to CUBIC paced; BBR's packet gaps are larger than CUBIC's on the send host; fq-rate "
        "and tc pacing seem equivalent.",
    ),
}


def bar_plot(s: pd.DataFrame, seed: dict, title: str, **sel: Any) -> Figure:
    """The slides' table (``seed``) as grey bars beside bbrlab's (``s``, the rows ``sel`` picks):
    throughput ± stddev and retransmits per configuration."""
    keys = list(seed)
    fig, (a1, a2) = subplots(1, 2, figsize=(12, 4))
    x = np.arange(len(keys))
    ours = [(row(s, cc_name=cc, streams=st, cap_gbps=pc, **sel)) for st, cc, pc in keys]
    a1.bar(x - 0.2, [seed[k][0] for k in keys], 0.4, yerr=[seed[k][1] for k in keys], label=SLIDES_LABEL, color="gray")
    a1.bar(
        x + 0.2,
        [(o["tput_mean"] / 1e9 if o is not None else np.nan) for o in ours],
        0.4,
        yerr=[(o["tput_std"] / 1e9 if o is not None else 0) for o in ours],
        label="bbrlab",
        color="tab:blue",
    )
    a2.bar(x - 0.2, [seed[k][3] for k in keys], 0.4, label=SLIDES_LABEL, color="gray")
    a2.bar(
        x + 0.2, [(o["retr_mean"] if o is not None else np.nan) for o in ours], 0.4, label="bbrlab", color="tab:blue"
    )
    labels = [f"{st}×{CC_SEED[cc]}\n{'pace ' + format(pc, 'g') if pc else 'unpaced'}" for st, cc, pc in keys]
    for ax in (a1, a2):
        ax.set_xticks(x, labels, fontsize=8)
        ax.legend(fontsize=8)
    a1.set_ylabel("throughput (Gbit/s)")
    a2.set_ylabel("retransmitted segments")
    a2.set_yscale("log")
    fig.suptitle(title)
    return fig


def _bar_figure(s: pd.DataFrame, seed: dict, path: Path, title: str, **sel: Any) -> None:
    save(bar_plot(s, seed, title, **sel), path)


def _gap_figure(hists: list[tuple[dict[str, Any], pd.DataFrame]], path: Path, title: str) -> None:
    fig, ax = subplots(figsize=(8, 4.5))
    for tags, g in hists:
        d = g.groupby(["lo_ns", "hi_ns"], as_index=False)["count"].sum().sort_values("lo_ns")
        tot = d["count"].sum()
        if tot == 0:
            continue
        d = d[(d["lo_ns"] > 0) & np.isfinite(d["hi_ns"])]
        centers = np.sqrt(d["lo_ns"] * d["hi_ns"])
        style = "-" if tags["cc_name"] == BBR else "--"
        lab = f"{CC_SEED[tags['cc_name']]} ({tags['cc_name']}), {'paced ' + format(tags['cap_gbps'], 'g') + 'G' if tags['cap_gbps'] else 'unpaced'}"
        ax.step(centers / 1e3, d["count"] / tot, where="mid", ls=style, label=lab)
    ax.set_xscale("log")
    ax.set_xlabel("gap between consecutive data packets leaving the sender NIC (µs)")
    ax.set_ylabel("fraction of gaps")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    save(fig, path)
