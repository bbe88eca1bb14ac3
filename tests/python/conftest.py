"""Shared fixtures for the Python tests.

`core` is the compiled simulator. Tests that take it are the real end-to-end checks; when
`bbrlab._core` cannot be imported they FAIL (they are never skipped), so a broken build cannot hide
behind a green suite. Find them with `pytest -m needs_core`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"

try:  # an installed bbrlab (pip install -e . or a wheel) wins; else test the source tree
    import bbrlab  # noqa: F401  # imported only to learn whether it can be
except ImportError:
    sys.path.insert(0, str(ROOT / "python"))
    import bbrlab  # noqa: F401  # now from the source tree


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "needs_core: runs the compiled simulator (bbrlab._core); fails without it")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "core" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.needs_core)


@pytest.fixture
def core() -> ModuleType:
    try:
        from bbrlab import _core
    except ImportError as e:
        pytest.fail(
            f"bbrlab._core is not built ({e}); build it with `pip install -e .` — this test must not be skipped"
        )
    return _core


@pytest.fixture
def stub_core(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """The contract stub installed as `bbrlab._core` (pipeline tests only; see contract_stub.py)."""
    sys.path.insert(0, str(Path(__file__).parent))
    import contract_stub

    monkeypatch.setitem(sys.modules, "bbrlab._core", contract_stub)
    monkeypatch.setattr(bbrlab, "_core", contract_stub, raising=False)
    yield contract_stub
    contract_stub.Simulation.interrupt_after = None


@pytest.fixture(scope="session")
def tiny_study(tmp_path_factory: pytest.TempPathFactory):
    """`tiny_study(name)`: the output directory of study `name` run at size tiny, once per session."""
    from bbrlab.reproduce import Size, run_studies

    done: dict[str, Path] = {}

    def get(name: str) -> Path:
        if name not in done:
            [(_, report, _)] = run_studies([name], tmp_path_factory.mktemp(f"tiny-{name}"), size=Size.TINY, jobs=2)
            done[name] = report.parent
        return done[name]

    return get


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run the test in a fresh directory (for commands that write `runs/` under the cwd)."""
    monkeypatch.chdir(tmp_path)
    return tmp_path
