"""FCT slowdown by flow-size bucket for several runs of one workload, as the data-center papers
draw it (DCTCP, pFabric, HPCC): per bucket, the median and the 99th-percentile slowdown of each
run (algorithm) side by side, on a log scale. The buckets are summary.json's ``fct``
(``results.fct_buckets``), so the figure shows exactly what the runs reported.

    python -m bbrlab.plots.fct OUT.png DCTCP=runs/a CUBIC=runs/b BBRv3=runs/c
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from .figures import save, subplots


def load_buckets(run_dir: Path) -> list[dict[str, Any]]:
    """The run's FCT buckets (summary.json's ``fct``)."""
    summary = json.loads((run_dir / "summary.json").read_text())
    buckets: list[dict[str, Any]] = summary.get("fct", [])
    return buckets


def plot_fct_slowdown(runs: dict[str, list[dict[str, Any]]], out: Path, title: str = "") -> None:
    """Two panels (median, p99) of grouped bars: one group per size bucket, one bar per run."""
    labels = [b["bucket"] for b in max(runs.values(), key=len)]
    fig, axes = subplots(1, 2, figsize=(11, 4), sharex=True)
    width = 0.8 / max(len(runs), 1)
    for ax, key, name in zip(axes, ("slowdown_p50", "slowdown_p99"), ("median", "99th percentile"), strict=True):
        for k, (run, buckets) in enumerate(runs.items()):
            by = {b["bucket"]: b for b in buckets}
            xs = [i + (k - (len(runs) - 1) / 2) * width for i in range(len(labels))]
            ys = [by[lb][key] if lb in by else float("nan") for lb in labels]
            ax.bar(xs, ys, width, label=run)
        ax.set_yscale("log")
        ax.set_title(f"{name} FCT slowdown")
        ax.set_xticks(range(len(labels)))
        ax.set_xticklabels(labels, rotation=20, fontsize=8)
        ax.set_xlabel("flow size")
        ax.grid(axis="y", which="both", alpha=0.3)
    axes[0].set_ylabel("slowdown (FCT / ideal FCT)")
    axes[0].legend()
    if title:
        fig.suptitle(title, fontsize=10)
    save(fig, out, dpi=120)


def main(argv: list[str]) -> None:
    out, *pairs = argv
    runs = {label: load_buckets(Path(d)) for label, d in (p.split("=", 1) for p in pairs)}
    plot_fct_slowdown(runs, Path(out))


if __name__ == "__main__":
    main(sys.argv[1:])
