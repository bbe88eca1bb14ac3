"""The study registry: every study's name, title, source, and the module that runs it."""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from ..errors import UserError
from ..report import write_index
from .claims import verdicts_unchecked
from .context import Size, StudyContext
from .sources import ANHALT_BQL, ESNET_BBR3, GOOGLE_BBR2, NSPERF, TOONK_BLOG, WATERLOO_DC, Source


@dataclass(frozen=True)
class Study:
    """One reproducible study: its name, what it reproduces from which source, and its module."""

    name: str
    title: str
    source: Source
    part: str  # which part of the source (sections, figures), "" for the whole document
    module: str  # python module (relative to this package) with a `run(ctx)` function
    #: The module (relative to this package) whose `run(ctx)` takes `--backend emu`, when that is
    #: not `module` itself (a module with a `KERNEL_PLAN` runs both backends).
    kernel_module: str | None = None

    def run(self, ctx: StudyContext) -> Path:
        name = self.kernel_module if ctx.backend != "sim" and self.kernel_module else self.module
        return importlib.import_module(f".{name}", __package__).run(ctx)

    @property
    def has_kernel_plan(self) -> bool:
        """Whether `--backend emu` can run this study."""
        mod = importlib.import_module(f".{self.module}", __package__)
        return self.kernel_module is not None or hasattr(mod, "KERNEL_PLAN")

    @property
    def source_text(self) -> str:
        """One line for listings: the source's short name, its authors, the part reproduced."""
        return f"{self.source.name} ({self.source.authors}){', ' + self.part if self.part else ''}"


STUDIES: dict[str, Study] = {
    s.name: s
    for s in [
        Study(
            "wan-loss",
            "CUBIC vs BBR on long paths with random loss",
            TOONK_BLOG,
            "and the BBR patch series' loss claims",
            "wan_loss",
        ),
        Study(
            "esnet-100g",
            "CUBIC vs BBRv3 on 100G and 4x10G R&E paths; packet spacing at the sender",
            ESNET_BBR3,
            "",
            "esnet_100g",
        ),
        Study(
            "bql-vs-bbr",
            "BQL vs BBRv1 at 1 and 10 Gbit/s, RTT up to 1 s, with and without random loss",
            ANHALT_BQL,
            "",
            "bql_vs_bbr",
            kernel_module="bql_kernel",
        ),
        Study(
            "many-flows-ecn",
            "DCTCP vs bbr2 vs bbr2_new with 10-1000 flows on a 50G ECN switch; TSO autosizing and faster-ACK ablations",
            GOOGLE_BBR2,
            "",
            "many_flows_ecn",
        ),
        Study(
            "dc-query",
            "Partition/aggregate query latency with and without a background flow, lossless vs store-and-forward ToR",
            WATERLOO_DC,
            "§4.1, Figs 1-6",
            "dc_query",
        ),
        Study(
            "dc-incast",
            "Aggregate throughput of n synchronized flows into one receiver, lossless vs store-and-forward ToR",
            WATERLOO_DC,
            "§4.2, Figs 7-8",
            "dc_incast",
        ),
        Study(
            "dc-convergence",
            "Convergence and fairness of 5 staggered flows (T = 30 s, 60 s), lossless vs store-and-forward ToR",
            WATERLOO_DC,
            "§4.3, Figs 9-11, and its open question",
            "dc_convergence",
        ),
        Study(
            "nsperf",
            "Google's nsperf scenarios (coexist, random_loss, shallow, bufferbloat, ecn_bulk), every BBR version and CUBIC",
            NSPERF,
            "run_tests.sh's five scenarios, graph_tests.sh's figures",
            "nsperf",
        ),
    ]
}


def list_studies() -> list[Study]:
    return list(STUDIES.values())


def get_study(name: str) -> Study:
    try:
        return STUDIES[name]
    except KeyError:
        known = ", ".join(STUDIES)
        raise UserError(f"reproduce: unknown study {name!r}; known studies: {known} (or 'all')") from None


def run_studies(
    names: Iterable[str],
    out_dir: Path,
    *,
    size: Size,
    jobs: int | None = None,
    progress: Callable[[str, int, int], None] | None = None,
    backend: str = "sim",
) -> list[tuple[Study, Path, float]]:
    """Run the named studies (or all); returns (study, report path, wall seconds) for each. Ends by
    writing OUT/index.html: every study in OUT with its claims, linking to its report.html."""
    names = list(names)
    studies = list_studies() if not names or names == ["all"] else [get_study(n) for n in names]
    if backend != "sim":
        no_plan = [st.name for st in studies if not st.has_kernel_plan]
        if no_plan:
            raise UserError(f"--backend {backend}: {', '.join(no_plan)} has no kernel plan; run it on the simulator")
    done = []
    for st in studies:
        d = out_dir / st.name
        d.mkdir(parents=True, exist_ok=True)
        ctx = StudyContext(out_dir=d, size=size, jobs=jobs or os.cpu_count() or 1, progress=progress, backend=backend)
        # A tiny study's numbers say nothing about the algorithms: its claims are not verdicts.
        with verdicts_unchecked(size is Size.TINY):
            report = st.run(ctx)
        done.append((st, report, ctx.elapsed_s))
    write_index(out_dir)  # OUT/index.html and each study's report.html
    return done
