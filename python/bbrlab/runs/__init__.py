"""Saved runs taken together: finding them, listing them, drawing them in one set of figures.

- ``runset.py``: which runs a set of paths names (run, sweep or any directory) and their labels.
- ``catalog.py``: `bbrlab ls`, the catalog of runs under a directory (and its SQL layer).
- ``multiplot.py``: `bbrlab plot`, figures across runs and sweeps.
"""
