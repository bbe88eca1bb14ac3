"""What the compiled core (``bbrlab._core``) defines, read from it rather than restated.

- ``algorithms.py``: the congestion-control registry (names, aliases, sources, kernel names).
- ``tables.py``: the result tables' columns (dtype, unit, meaning), ``encode`` and ``check_raw``.

Both sit beneath the backends (``bbrlab.emu`` builds its tables and picks its kernel modules from
them) and above ``bbrlab.scenario``, whose ``load_core`` imports the core.
"""
