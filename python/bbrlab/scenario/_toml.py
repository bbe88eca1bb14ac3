"""Python's TOML reader: ``tomllib`` from Python 3.11, the same code as the ``tomli`` package on
Python 3.10 (a dependency there only)."""

import sys

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

__all__ = ["tomllib"]
