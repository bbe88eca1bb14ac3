"""The package version, from the installed metadata (pyproject.toml) when there is one."""

from __future__ import annotations

from importlib import metadata

try:
    __version__: str = metadata.version("bbrlab")
except metadata.PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.1.0+source"
