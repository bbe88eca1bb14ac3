"""The esnet-100g study's figures: per path, our throughputs and retransmits beside the
slides' (bars with standard deviations), and the histograms of packet spacing at the send host's NIC."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ...plots.figures import save, subplots
from ..analysis import row
from .plan import BBR, CC_SEED


def _bar_figure(s: pd.DataFrame, seed: dict, path: Path, title: str, **sel: Any) -> None:
    keys = list(seed)
    fig, (a1, a2) = subplots(1, 2, figsize=(12, 4))
    x = np.arange(len(keys))
    ours = [(row(s, cc_name=cc, streams=st, cap_gbps=pc, **sel)) for st, cc, pc in keys]
    a1.bar(
        x - 0.2, [seed[k][0] for k in keys], 0.4, yerr=[seed[k][1] for k in keys], label="ESnet slides", color="gray"
    )
    a1.bar(
        x + 0.2,
        [(o["tput_mean"] / 1e9 if o is not None else np.nan) for o in ours],
        0.4,
        yerr=[(o["tput_std"] / 1e9 if o is not None else 0) for o in ours],
        label="bbrlab",
        color="tab:blue",
    )
    a2.bar(x - 0.2, [seed[k][3] for k in keys], 0.4, label="ESnet slides", color="gray")
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
    save(fig, path)


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
