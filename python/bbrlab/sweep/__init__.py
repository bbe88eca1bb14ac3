"""`bbrlab sweep`: a scenario over a grid of field values and seeds, each run a run directory.

- ``grid.py``: the plan — axes from ``--grid`` and the ``[sweep]`` table, seeds, every run validated.
- ``cache.py``: the sweep directory, run ids (a hash of the resolved scenario), resuming.
- ``engines.py``: where runs execute — ``local`` (bbrlab.engine.parallel's process pool) or ``ray``.
- ``table.py``: the points table (points.parquet, points.csv).
- ``run.py``: the whole: plan → cached runs skipped → engine → table.
- ``api.py``: ``bbrlab.sweep(...)`` (this package, called): the whole, returning the points table.
- ``compare_args.py``: `bbrlab compare`'s grid in the same language, and its head-to-head overrides.

From Python::

    from bbrlab.sweep import plan_sweep, run_sweep
    plan = plan_sweep("examples/quick.toml", grid=["flows.0.cc=bbr,cubic"], sets=["duration=2s"], seeds=2)
    outcome = run_sweep(plan, out="sweeps/quick-cc")
    outcome.table.groupby("flows.0.cc").goodput_bps.mean()
"""

from __future__ import annotations

import sys
import types
from typing import Any

from .grid import SweepPlan, plan_sweep
from .run import SweepOutcome, run_sweep

__all__ = ["SweepPlan", "SweepOutcome", "plan_sweep", "run_sweep"]


class _CallableModule(types.ModuleType):
    """``bbrlab.sweep`` names this package and, in a notebook, the verb: ``bbrlab.sweep(...)`` is
    :func:`bbrlab.sweep.api.sweep` (an attribute of that name would be replaced by the package the
    first time anything imports it)."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from .api import sweep

        return sweep(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
