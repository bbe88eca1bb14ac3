"""`bbrlab reproduce`: the studies that reproduce published results, each redrawn with bbrlab.

A study module builds its scenarios in code (`scenarios`: typed, validated), runs them in parallel
(`StudyContext.run_many`), reads the tables (`analysis`), draws the figures the way the source drew
them (`bbrlab.plots.figures`), states its comparisons with the source as data (`claims`), words its
commentary from the numbers (`sentences`) and writes ``REPORT.md`` (`report`) and ``claims.csv``
(one row per claim: ``claim, paper_value, bbrlab_value, rule, verdict, reason``; format in
`claims`). It says what each `Size` means in one table, ``PLANS``: ``tiny`` for tests, ``quick`` for CI
(``--quick``), ``full`` for the study a user runs; a study may also have a ``KERNEL_PLAN``, which
``--backend emu`` runs on real Linux (`context.StudyContext.backend`), or a module of its own for
that backend (`catalog.Study.kernel_module`: bql-vs-bbr's ``bql_kernel``). The sources are named
as in `sources` (full citations: docs/sources.md).
"""

from __future__ import annotations

from .catalog import STUDIES, Study, get_study, list_studies, run_studies
from .context import Size, StudyContext

__all__ = ["STUDIES", "Size", "Study", "StudyContext", "get_study", "list_studies", "run_studies"]
