"""The core's TOML reader (bbrlab._core.parse_toml) against Python's tomllib: where it answers,
its tables are tomllib's, in the same order; where it would differ it answers None and tomllib
reads the file (its errors word every syntax problem)."""

from __future__ import annotations

import math
import subprocess
from pathlib import Path

import pytest
import tomllib
from bbrlab import _core
from bbrlab.errors import ScenarioError
from bbrlab.scenario.load import parse_toml

ROOT = Path(__file__).resolve().parents[2]


def _ordered(v: object) -> object:
    """A value with every table's key order made visible to ==."""
    if isinstance(v, dict):
        return [(k, _ordered(x)) for k, x in v.items()]
    if isinstance(v, list):
        return [_ordered(x) for x in v]
    return v


def _tracked_toml_files() -> list[Path]:
    out = subprocess.run(["git", "-C", str(ROOT), "ls-files", "*.toml"], capture_output=True, text=True, check=True)
    return [ROOT / p for p in out.stdout.split()]


def test_every_tracked_toml_file_reads_as_tomllib_reads_it() -> None:
    answered = 0
    for path in _tracked_toml_files():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        fast = _core.parse_toml(text)
        if fast is None:
            continue
        assert _ordered(fast) == _ordered(tomllib.loads(text)), path
        answered += 1
    assert answered >= 20  # the examples, benchmarks and fixtures: most are answered by the core


def test_values_of_every_kind_and_order() -> None:
    text = """
z = 1
a = "x\\u00e9\\n"
f = 1.5e-3
inf_ = inf
neg = -0.0
b = true
arr = [1, [2, "three"], {k = 4}]
[t.inner]
q = 'literal\\n'
[[flows]]
cc = "bbr"
[[flows]]
cc = "cubic"
count = 3
[t]
later = 2
"""
    fast = _core.parse_toml(text)
    slow = tomllib.loads(text)
    assert fast == slow
    # The one order that differs: a table first made by a sub-table's header ([t.inner]) stands
    # where its own header ([t]) is, where tomllib keeps it where it was first made.
    assert list(fast) == ["z", "a", "f", "inf_", "neg", "b", "arr", "flows", "t"]
    assert list(slow) == ["z", "a", "f", "inf_", "neg", "b", "arr", "t", "flows"]
    assert _ordered(fast["flows"]) == _ordered(slow["flows"])
    assert math.copysign(1.0, fast["neg"]) == -1.0
    text_nan = "x = nan"
    assert math.isnan(_core.parse_toml(text_nan)["x"])


@pytest.mark.parametrize(
    "text",
    [
        "t = 07:32:00",  # a time of day: tomllib makes datetime objects
        "d = 1979-05-27",
        "x = [{ at = 1979-05-27T07:32:00Z }]",
        "big = 9223372036854775808",  # over 64 bits: Python's integers are unbounded
        "a = 1\na = 2",  # not TOML: tomllib words the error
        "t = { a = 1, }",  # TOML 1.1's trailing comma, which TOML 1.0 (tomllib) refuses
    ],
)
def test_what_only_tomllib_answers(text: str) -> None:
    assert _core.parse_toml(text) is None


def test_the_fallback_keeps_tomllib_values_and_errors() -> None:
    assert parse_toml("t = 07:32:00", "x.toml") == tomllib.loads("t = 07:32:00")
    assert parse_toml("big = 9223372036854775808", "x.toml") == {"big": 9223372036854775808}
    with pytest.raises(ScenarioError, match="not valid TOML"):
        parse_toml("a = 1\na = 2", "x.toml")
