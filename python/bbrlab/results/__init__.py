"""One run's results: the core's columns, the summary, the run directory on disk, and what
`bbrlab run` and `bbrlab show` print from them.

- ``results.py``: :class:`Result` (``bbrlab.Result``): tables, summary, saving and loading a run.
- ``columns.py``: a table as the core hands it over (numpy columns; pandas on demand).
- ``rundir.py``: where a run directory may go, and what a complete one is (no pandas).
- ``provenance.py``: where a run came from (bbrlab's git commit) and run-directory names.
- ``display.py``: the summary as a terminal table or HTML, and the one set of number formatters.
- ``sstable.py``, ``intervals.py``: `bbrlab show --ss` and `--intervals`.
- ``transperf.py``: transperf's seven pass/fail metrics (summary.json's ``transperf``).
"""
