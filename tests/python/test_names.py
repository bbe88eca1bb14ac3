"""The five source documents are called by their short names (docs/sources.md), never by number.

The project's notes once numbered them ("seed 000" … "seed 004"); those numbers were never defined
for a user and read like the scenario's random `seed`. Every tracked text file is checked, so a
number that comes back in code, docs, examples or generated files fails here.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: "seed 001", "Seed 000's", "seeds 000 and 001", "seed_003", "seed-004", "seed000".
NUMBERED = re.compile(r"\bseeds?[ _-]?0{2}[0-4]\b|\bseeds? 0{2}[0-4](?:,? (?:and|or) 0{2}[0-4])*", re.I)
SHORT_NAMES = (
    "Waterloo DC study",
    "Google BBRv2 slides",
    "Toonk BBR blog",
    "ESnet BBRv3 slides",
    "Anhalt BQL paper",
)
SELF = Path(__file__).resolve()


def _tracked_text_files() -> list[Path]:
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: nothing to list")
    files = []
    for rel in out.decode().split("\0"):
        if not rel or rel.startswith("shared/"):
            continue
        path = ROOT / rel
        if path.resolve() == SELF or not path.is_file():
            continue
        files.append(path)
    return files


def _numbered_mentions(text: str) -> list[str]:
    return [m.group(0) for m in NUMBERED.finditer(text)]


def test_the_pattern_finds_every_numbered_form() -> None:
    # The check can fail: each form the old notes used is caught, and the random seed is not.
    for form in (
        "seed 000",
        "Seed 001's slides",
        "seeds 000 and 001",
        "seed_003",
        "seed-004",
        "seed002",
    ):
        assert _numbered_mentions(form), form
    for fine in (
        "seed = 1",
        "--seed 7",
        "seeds 3",
        "the seed 1000",
        "seed 0",
        "seed 10",
        "Waterloo DC study",
    ):
        assert not _numbered_mentions(fine), fine


def test_no_tracked_file_names_a_source_document_by_number() -> None:
    hits = []
    for path in _tracked_text_files():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # binary (images, Parquet)
        for lineno, line in enumerate(text.splitlines(), 1):
            for m in _numbered_mentions(line):
                hits.append(f"{path.relative_to(ROOT)}:{lineno}: {m!r}")
    assert not hits, "use the short names of docs/sources.md " + str(SHORT_NAMES) + ":\n" + "\n".join(hits)


def test_the_short_names_are_those_of_the_sources_page() -> None:
    # The replacement names must exist where the docs point: docs/sources.md's table.
    sources = (ROOT / "docs" / "sources.md").read_text()
    for name in SHORT_NAMES:
        assert f"[{name}](#" in sources, name
