"""The documents the studies reproduce, by the short names code and reports use.

Full citations, and what each document does not state, are in ``docs/sources.md``; each source's
``key`` is its anchor there. Nothing else in bbrlab refers to a source document another way.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

#: docs/sources.md of the source tree this package runs from (absent in a wheel install).
SOURCES_MD = Path(__file__).resolve().parents[3] / "docs" / "sources.md"


@dataclass(frozen=True)
class Source:
    key: str  # anchor in docs/sources.md
    name: str  # short name: what code and reports call the document
    authors: str  # for a one-line mention: "Howes & Muñoz", "Cardwell et al."
    citation: str  # one line: authors, title, venue/date as far as the document states them

    def link(self, from_dir: Path | None = None) -> str:
        """Markdown link to this source's entry in docs/sources.md, relative to ``from_dir``."""
        if SOURCES_MD.is_file():
            target = Path(os.path.relpath(SOURCES_MD, from_dir)) if from_dir is not None else SOURCES_MD
            return f"[{self.name}]({target.as_posix()}#{self.key})"
        return f"{self.name} (bbrlab's docs/sources.md)"


WATERLOO_DC = Source(
    "waterloo-dc-study",
    "Waterloo DC study",
    "Howes & Muñoz",
    "C. Howes and C. Muñoz (University of Waterloo), “TCP BBR – Assessing Performance in a Data Center "
    "Environment”, report (undated; its code and data, github.com/chowes/data-center-bbr, are from 2017)",
)
GOOGLE_BBR2 = Source(
    "google-bbrv2-slides",
    "Google BBRv2 slides",
    "Cardwell et al.",
    "N. Cardwell, Y. Cheng, S. Hassas Yeganeh, P. Jha, Y. Seung, K. Yang, I. Swett, V. Vasiliev, B. Wu, "
    "L. Hsiao, M. Mathis, V. Jacobson (Google), “BBR v2: A Model-based Congestion Control — Performance "
    "Optimizations”, slides (venue and date not stated; after IETF 105, with DCTCP as of 2019-11-10)",
)
TOONK_BLOG = Source(
    "toonk-bbr-blog",
    "Toonk BBR blog",
    "Toonk",
    "A. Toonk, “TCP BBR – Exploring TCP congestion control”, blog post, 15 February 2020",
)
ESNET_BBR3 = Source(
    "esnet-bbrv3-slides",
    "ESnet BBRv3 slides",
    "Dart & Tierney",
    "E. Dart and B. Tierney (ESnet, Berkeley Lab), “BBRv3 Preliminary Results”, LHCONE #52, Catania, Italy, "
    "11 April 2024",
)
ANHALT_BQL = Source(
    "anhalt-bql-paper",
    "Anhalt BQL paper",
    "Mareev et al.",
    "N. Mareev, D. Kachan, K. Karpov, D. Syzov, E. Siemens (Anhalt University of Applied Sciences), "
    "“Efficiency of BQL Congestion Control under High Bandwidth-Delay Product Network Conditions”, paper "
    "(venue and year not stated; 2018 or later)",
)

SOURCES = (WATERLOO_DC, GOOGLE_BBR2, TOONK_BLOG, ESNET_BBR3, ANHALT_BQL)

#: Not one of the five source documents: a test harness, whose scenarios the `nsperf` study runs.
NSPERF = Source(
    "google-nsperf",
    "Google nsperf",
    "Cardwell et al.",
    "Google's BBR test scripts, google/bbr, gtests/net/tcp/bbr/nsperf (run_tests.sh, nsperf.py, graph_tests.sh; "
    "the v3 copy at e7db8639): scenarios and plots, no published numbers",
)
