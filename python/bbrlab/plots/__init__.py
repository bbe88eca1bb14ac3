"""Drawing: figures as PNG files, beneath everything that makes one.

- ``chart.py``: line charts straight to PNG with Pillow (a run's own figures, in milliseconds).
- ``plots.py``: a run's four PNGs (goodput, cwnd, rtt, queue), described and drawn by ``chart``.
- ``figures.py``: the one way to make a matplotlib figure (`bbrlab plot`, `bbrlab compare`, the
  studies), on its own Agg canvas, without pyplot.

Nothing here reads a run directory: figures across runs are ``bbrlab.runs.multiplot``.
"""
