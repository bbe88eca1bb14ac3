"""Scenario files written for a test: TOML text under the test's temporary directory."""

from __future__ import annotations

from pathlib import Path


def write_scenario(tmp_path: Path, text: str, name: str = "s.toml") -> Path:
    """``text`` written to tmp_path/name; returns the file's path."""
    p = tmp_path / name
    p.write_text(text)
    return p
