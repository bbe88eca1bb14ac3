"""HTML reports (`bbrlab report`): one self-contained page per run, sweep or study, and the index
of a `bbrlab reproduce` output directory.

A page embeds its images as data URIs and its CSS inline and makes no request when opened, so it
can be mailed or attached as one file. What a directory is decides the page:

- a run directory (`results.is_complete_run`): the summary tables, the run's figures, how it ran
  (seed, backend, git commit, overrides), the resolved scenario;
- a sweep directory (sweep.json / points.parquet): its facts, the points table, the figures
  across its runs (`bbrlab.runs.multiplot`);
- a study directory (`bbrlab reproduce`'s OUT/<study>/, with REPORT.md): the claims with their
  verdicts, REPORT.md rendered, the figures;
- a reproduce output directory (its index.html, written by `bbrlab reproduce`, says so):
  index.html again, every study with its claims, linking to each study's report.html (written too).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..errors import UserError
from ..results.results import is_complete_run
from ..runs.runset import is_sweep_dir
from .html import is_index, write_page
from .pages import index_page, run_page, study_dirs, study_page, sweep_page

__all__ = ["write_report", "write_index", "report_kind", "REPORT_NAME", "INDEX_NAME"]

REPORT_NAME = "report.html"
INDEX_NAME = "index.html"


def report_kind(path: Path) -> str:
    """ "run", "sweep", "study" or "studies" (a reproduce output directory)."""
    if not path.exists():
        raise UserError(f"{path}: no such directory")
    if not path.is_dir():
        raise UserError(f"{path}: not a directory; give a run, sweep or study directory")
    if is_complete_run(path):
        return "run"
    if is_sweep_dir(path):
        return "sweep"
    if (path / "REPORT.md").is_file() or (path / "claims.csv").is_file():
        return "study"
    if is_index(path / INDEX_NAME):
        return "studies"
    if study_dirs(path):
        # Writing a page into every subdirectory of an arbitrary folder (say /tmp) would be a
        # surprise: only a directory `bbrlab reproduce` has indexed counts as its output.
        raise UserError(
            f"{path}: holds study directories but no index.html from `bbrlab reproduce`; give one "
            f"study's directory (bbrlab report {path / study_dirs(path)[0].name}) or rerun bbrlab reproduce "
            "with --out here"
        )
    raise UserError(
        f"{path}: not a run directory (summary.json), a sweep (sweep.json, points.parquet), a study "
        "(REPORT.md) or a reproduce output directory (study directories)"
    )


def write_report(
    path: str | Path,
    out: str | Path | None = None,
    *,
    progress: Callable[[int, int], None] | None = None,
    warn: Callable[[str], None] | None = None,
    self_contained: bool = False,
) -> Path:
    """Write the report page of ``path`` (see the module docstring) to ``out`` (default
    ``path/report.html``; ``path/index.html`` for a reproduce output directory); returns it.
    ``self_contained``: a sweep's page embeds its runs' summaries and figures and links to them
    instead of to the run directories (a run's page stands alone already)."""
    p = Path(path)
    kind = report_kind(p)
    if self_contained and kind not in ("run", "sweep"):
        raise UserError(f"--self-contained: for a run or a sweep; {p} is a {kind} (its pages link to its files)")
    if kind == "studies":
        if out is not None:
            raise UserError(
                f"--out: {p} is a reproduce output directory; its pages are written inside it "
                f"({INDEX_NAME} and each study's {REPORT_NAME}), so --out does not apply"
            )
        return write_index(p)
    target = Path(out) if out is not None else p / REPORT_NAME
    if target.is_dir():
        raise UserError(f"--out {target}: a directory; give the HTML file to write, e.g. {target / REPORT_NAME}")
    if kind == "run":
        html = run_page(p, target)
    elif kind == "sweep":
        html = sweep_page(p, target, progress=progress, warn=warn, self_contained=self_contained)
    else:
        html = study_page(p, target)
    return write_page(target, html)


def write_index(out_dir: str | Path) -> Path:
    """A reproduce output directory's index.html, and each study's report.html it links to."""
    d = Path(out_dir)
    for study in study_dirs(d):
        write_page(study / REPORT_NAME, study_page(study, study / REPORT_NAME))
    return write_page(d / INDEX_NAME, index_page(d, d / INDEX_NAME, REPORT_NAME))
