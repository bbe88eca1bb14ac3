"""The source's figure beside bbrlab's: what a reproduction page sets next to each redrawn figure.

A study redraws figures of its source document. A reader of the page wants the source's figure
next to ours, as a paper's evaluation would show it. The source documents are text (their
figures survive as captions, the numbers their text gives, and tables), so a `SourceFigure` is

- the figure as the source names it ("Figure 4", a slide's title) and what it shows, in words
  taken from the document: its axes and the values its text gives;
- where the source gives numbers: those numbers as `SourcePanel`s, re-plotted by `draw` as black
  outlined, hatched bars (one PNG per source figure, labelled with the source's short name), or,
  where the study's own figure already draws them on its axes, a note saying how they appear
  there (``on_bbrlab_axes``).

The numbers are never typed in twice: a study builds its panels from the constants its claims
use. `beside` writes the pair into REPORT.md as one block: the source's side, then bbrlab's, each
opened by a marker line (`bbrlab.report.markdown`'s `BESIDE_SOURCE`, `BESIDE_BBRLAB`,
`BESIDE_END`: HTML comments, so markdown viewers show the two parts one after the other; the
report page turns the block into two columns side by side).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from ..plots.figures import save, subplots
from ..report.markdown import BESIDE_BBRLAB, BESIDE_END, BESIDE_SOURCE
from .sources import Source

__all__ = [
    "BESIDE_BBRLAB",
    "BESIDE_END",
    "BESIDE_SOURCE",
    "SourceFigure",
    "SourcePanel",
    "SourceSeries",
    "beside",
    "draw",
    "draw_all",
    "source_plot",
]

#: Hatches of the source's series, in order (the source's bars are outlined black, unfilled, so
#: they never read as one of bbrlab's coloured series).
_HATCHES = ("//", "..", "\\\\", "xx", "--", "++")


@dataclass(frozen=True)
class SourceSeries:
    """One series the source gives: its label as the source uses it, and a value per category."""

    label: str
    values: tuple[float, ...]


@dataclass(frozen=True)
class SourcePanel:
    """One panel of numbers from the source: categories on x (an RTT, a configuration), one bar
    per series and category, in ``y_label``'s unit."""

    y_label: str
    categories: tuple[str, ...]
    series: tuple[SourceSeries, ...]
    log_y: bool = False
    title: str = ""


@dataclass(frozen=True)
class SourceFigure:
    """A figure (or table, or slide) of the source, as a reproduction page shows it beside ours."""

    source: Source
    #: how the source names it: "Figure 4", "slide “Cubic vs BBRv3”, 100G table"
    figure: str
    #: the source's caption or title, quoted from the document ("" when it has none)
    caption: str
    #: what it shows, from the document's text: axes, series, the values its text gives
    shows: str
    #: the numbers the source gives, re-plotted by `draw` (empty: the figure is described only)
    panels: tuple[SourcePanel, ...] = ()
    #: where bbrlab's own figure already draws the source's numbers on its axes: how ("grey bars
    #: labelled ESnet slides"); `draw` then draws nothing
    on_bbrlab_axes: str = ""
    #: where ``panels``' numbers come from, for the re-plotted figure's title and alt text
    numbers_from: str = "the numbers its text gives"

    @property
    def stem(self) -> str:
        """The re-plotted figure's file name without ".png": source-<figure, as a slug>."""
        return "source-" + re.sub(r"[^a-z0-9]+", "-", self.figure.lower()).strip("-")

    @property
    def png(self) -> str | None:
        """The re-plotted figure's file name, None when the source's numbers are not re-plotted."""
        return f"{self.stem}.png" if self.panels and not self.on_bbrlab_axes else None

    @property
    def alt(self) -> str:
        """The re-plotted figure's alt text: whose figure, from what, showing what."""
        what = "; ".join(
            f"{p.y_label} of {', '.join(s.label for s in p.series)} at {', '.join(p.categories)}" for p in self.panels
        )
        return f"{self.source.name}, {self.figure}, re-plotted from {self.numbers_from}: {what}"


def source_plot(sf: SourceFigure) -> Figure:
    """The source's numbers as a figure: one panel per `SourcePanel`, a hatched, black-outlined
    bar per series and category, its value written on it. What `draw` saves; the tests read the
    bars' heights back from it."""
    n = len(sf.panels)
    fig, axes = subplots(1, n, figsize=(4.6 * n, 3.6), squeeze=False)
    for ax, panel in zip(axes[0], sf.panels):
        x = np.arange(len(panel.categories))
        k = len(panel.series)
        width = 0.8 / k
        for i, s in enumerate(panel.series):
            bars = ax.bar(
                x + (i - (k - 1) / 2) * width,
                s.values,
                width,
                facecolor="white",
                edgecolor="black",
                hatch=_HATCHES[i % len(_HATCHES)],
                label=f"{s.label} ({sf.source.name})",
            )
            ax.bar_label(bars, labels=[f"{v:g}" for v in s.values], fontsize=7, padding=1)
        ax.set_xticks(x, panel.categories, fontsize=8)
        ax.set_ylabel(panel.y_label)
        values = [v for s in panel.series for v in s.values if v > 0]
        if panel.log_y and values:
            ax.set_yscale("log")
            ax.set_ylim(min(values) / 3, max(values) * 3)  # room for the labels above the bars
        else:
            ax.set_ylim(0, max(values, default=1) * 1.15)
        if panel.title:
            ax.set_title(panel.title, fontsize=9)
        # Below the axes: a legend inside would hide the bars.
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=min(k, 3), frameon=False)
    fig.suptitle(f"{sf.source.name}, {sf.figure}: {sf.numbers_from}, re-plotted", fontsize=10)
    return fig


def draw(sf: SourceFigure, out_dir: Path) -> Path | None:
    """Write the re-plotted source figure into ``out_dir``; None when it is described only."""
    if sf.png is None:
        return None
    return save(source_plot(sf), out_dir / sf.png)


def draw_all(figures: Iterable[SourceFigure], out_dir: Path) -> None:
    for sf in figures:
        draw(sf, out_dir)


def beside(sf: SourceFigure, bbrlab_md: str, what: str = "") -> str:
    """The markdown block of the source's figure beside bbrlab's: the source's side (which figure,
    its caption, what it shows, and its numbers re-plotted or where they are drawn) and bbrlab's
    (``bbrlab_md``: its image(s), or why there is none at this size). ``what``: one phrase on
    what bbrlab's side is, when it is not simply the same figure redrawn."""
    caption = f" (“{sf.caption}”)" if sf.caption else ""
    source = [f"**{sf.source.name}, {sf.figure}**{caption}: {sf.shows}"]
    if sf.on_bbrlab_axes:
        source.append(f"Its numbers are re-plotted on bbrlab's figure: {sf.on_bbrlab_axes}.")
    elif sf.png is not None:
        source.append(f"![{sf.alt}]({sf.png})")
    else:
        source.append("*The document gives no numbers for this figure: described from its text.*")
    ours = f"**bbrlab**: {what or f'the same figure redrawn from this run ({sf.figure} of the source)'}."
    return "\n\n".join([BESIDE_SOURCE, *source, BESIDE_BBRLAB, ours, bbrlab_md.strip(), BESIDE_END])
