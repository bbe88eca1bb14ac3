"""`bbrlab reproduce`: the catalog of studies from the seed papers, each redrawn with bbrlab.

A study builds its scenarios in code, runs them (in parallel, with progress), draws the figures
the way the source drew them, and writes ``REPORT.md`` with the source's claims beside our
numbers. ``--quick`` shrinks durations, grids and repetitions for CI; the default is the full
study a user would run.
"""

from __future__ import annotations

from .catalog import STUDIES, Study, StudyContext, get_study, list_studies, run_studies

__all__ = ["STUDIES", "Study", "StudyContext", "get_study", "list_studies", "run_studies"]
