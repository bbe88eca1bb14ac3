"""Where scenarios execute.

- ``runner.py``: ``bbrlab.run(scenario)``: one scenario on the embedded simulator core (in
  slices, interruptible) or on the emu backend (``bbrlab.emu``), returning a ``Result``.
- ``parallel.py``: the one process pool, through which `bbrlab sweep` and `bbrlab reproduce` run
  many scenarios and stop cleanly on Ctrl-C.
"""
