"""The notebook API (issue 36, item 5): docs/notebook.md runs as written — a run's tables,
``bbrlab.sweep`` returning the points table, ``bbrlab.plot_sweep`` returning a figure,
``bbrlab.compare`` the comparison's table — and
``bbrlab.sweep`` is both the subpackage and the verb."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import bbrlab
import pandas as pd
import pytest
from conftest import ROOT

DOC = ROOT / "docs" / "notebook.md"


def _blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)


@pytest.fixture
def in_copy(tmp_path: Path) -> Path:
    """A directory laid out as the repository's root (its examples) for the page's paths."""
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    (tmp_path / "sweeps").mkdir()
    (tmp_path / "runs").mkdir()
    old = Path.cwd()
    os.chdir(tmp_path)
    yield tmp_path
    os.chdir(old)


def test_the_notebook_page_runs_as_written(in_copy: Path, core: object) -> None:
    blocks = _blocks()
    assert len(blocks) >= 4
    env: dict = {}
    for code in blocks:
        exec(compile(code, str(DOC), "exec"), env)
    r = env["r"]
    assert isinstance(r.flows, pd.DataFrame) and len(r.flows) == 1
    assert r.flows.cc.tolist() == ["bbr3"]
    points = env["points"]
    assert isinstance(points, pd.DataFrame)
    assert len(points) == 2 * 2 * 2  # cc × buffer × seeds
    assert {"flows.*.cc", "topology.bottleneck.buffer", "seed", "rtt_p95_ms"} <= set(points.columns)
    assert points.attrs["axes"] == ["flows.*.cc", "topology.bottleneck.buffer"]
    assert Path(points.attrs["sweep_dir"]).resolve() == (in_copy / "sweeps/notebook-quick").resolve()
    fig = env["fig"]
    axes = fig.get_axes()
    assert len(axes) == 1 and len(axes[0].get_lines()) >= 2  # a line per algorithm (hue)
    assert (in_copy / "sweeps/notebook-quick/rtt_by_buffer.png").stat().st_size > 0
    table = env["table"]  # compare, head to head, simulator only: one point, both algorithms in it
    assert len(table) == 1 and table.cc.tolist() == ["bbr3,cubic"] and table.sim_runs.tolist() == [2]
    assert (in_copy / "runs/notebook-compare/compare.csv").is_file() and table.attrs["out"] == "runs/notebook-compare"
    # The same figure from the sweep directory alone.
    again = bbrlab.plot_sweep(points.attrs["sweep_dir"], x="buffer", y="rtt_p95_ms", hue="cc")
    assert len(again.get_axes()[0].get_lines()) == len(axes[0].get_lines())


def test_sweep_is_the_package_and_the_verb() -> None:
    import bbrlab.sweep as package

    assert bbrlab.sweep is package
    assert callable(bbrlab.sweep) and callable(bbrlab.plot_sweep) and callable(bbrlab.compare)
    assert package.plan_sweep is not None  # the package's API is still there
    assert {"sweep", "plot_sweep", "compare"} <= set(dir(bbrlab))
