"""Tools for bbrlab's developers, not used by a run.

- ``docgen.py``: ``python -m bbrlab.devtools.docgen`` regenerates the reference tables in
  README.md and docs/core-api.md from the core's definitions (``--check``: exit 1 when stale).
- ``fuzz.py``: ``python -m bbrlab.devtools.fuzz`` mutates scenarios through validation, the core
  and full runs (the property tests use its generator).
"""
