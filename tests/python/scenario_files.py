"""Scenario files written for a test: TOML text under the test's temporary directory."""

from __future__ import annotations

from pathlib import Path


def write_scenario(tmp_path: Path, text: str, name: str = "s.toml") -> Path:
    """``text`` written to tmp_path/name; returns the file's path."""
    p = tmp_path / name
    p.write_text(text)
    return p


def bottleneck_scenario(name: str, *ccs: str) -> str:
    """A one-second scenario ``name`` on a 20 Mbit/s, 20 ms bottleneck with one flow of each
    algorithm of ``ccs``, in that order (its TOML text)."""
    flows = "".join(f'\n[[flows]]\ncc = "{cc}"\n' for cc in ccs)
    return f'name = "{name}"\nduration = "1s"\n\n[topology]\nbottleneck = {{ rate = "20Mbps", rtt = "20ms" }}\n{flows}'
