"""Start-up: what the CLI loads, and the plot process that keeps matplotlib off `bbrlab run`'s path.

No timings (this machine is shared): the tests count what does not depend on load — the modules a
command imports — and check the plot process's behaviour: it draws exactly what plot_all draws,
a failure of it never loses a plot, and it never outlives the command (Ctrl-C, kill -9).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import bbrlab
from bbrlab.plotworker import FORKED, PlotWorker, _draw
from bbrlab.plots import FIGURES, PLOTS, plot_all, plot_data
from bbrlab.results import is_complete_run

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
HEAVY = ("pandas", "pyarrow", "matplotlib", "pydantic")
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(bbrlab.__file__).parents[1]), os.environ.get("PYTHONPATH", "")])}


def _loaded_after(code: str) -> dict[str, bool]:
    """Which heavy modules a fresh interpreter has loaded after running ``code``."""
    probe = f"""
import json, sys
try:
{chr(10).join('    ' + line for line in code.strip().splitlines())}
except SystemExit as e:
    assert not e.code, e.code
print(json.dumps({{m: m in sys.modules for m in {HEAVY!r}}}))
"""
    out = subprocess.run([sys.executable, "-c", probe], env=ENV, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_cli_and_cc_load_none_of_the_heavy_modules() -> None:
    assert _loaded_after("import bbrlab.cli") == dict.fromkeys(HEAVY, False)
    assert _loaded_after("from bbrlab.cli import main\nmain(['cc'])") == dict.fromkeys(HEAVY, False)


def test_run_leaves_matplotlib_to_the_plot_process(core, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "r"
    loaded = _loaded_after(f"from bbrlab.cli import main\nmain(['run', {str(EXAMPLES / 'quick.toml')!r}, "
                           f"'--set', 'duration=1s', '--out', {str(out)!r}, '-q'])")
    assert loaded == {"pandas": True, "pyarrow": True, "matplotlib": False, "pydantic": True}
    assert is_complete_run(out) and all((out / name).stat().st_size > 1000 for name in FIGURES)


@pytest.fixture
def tiny_result(core) -> bbrlab.Result:  # type: ignore[no-untyped-def]
    return bbrlab.run(bbrlab.load_scenario(EXAMPLES / "quick.toml", ["duration=1s"]))


def _never_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*a: object, **k: object) -> None:
        raise AssertionError("drawn in this process, not by the plot process")

    monkeypatch.setattr("bbrlab.plots.plot_all", refuse)


def test_plot_process_draws_what_plot_all_draws(tiny_result, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "here").mkdir()
    (tmp_path / "there").mkdir()
    plot_all(tiny_result, tmp_path / "here")
    _never_in_process(monkeypatch)
    with PlotWorker() as draw:
        written = draw(tiny_result, tmp_path / "there")
    assert [p.name for p in written] == list(FIGURES)
    for name in FIGURES:
        assert (tmp_path / "here" / name).read_bytes() == (tmp_path / "there" / name).read_bytes(), name


def _drawn_here(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names plot_all draws in this process from now on."""
    import bbrlab.plots

    names: list[str] = []
    real = bbrlab.plots.plot_all

    def spy(data, out_dir, which=PLOTS):  # type: ignore[no-untyped-def]
        names.extend(which)
        return real(data, out_dir, which)

    monkeypatch.setattr("bbrlab.plots.plot_all", spy)
    return names


def test_the_plot_process_shares_the_drawing_with_a_fork(tiny_result, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "ref").mkdir()
    (tmp_path / "out").mkdir()
    plot_all(tiny_result, tmp_path / "ref")
    here = _drawn_here(monkeypatch)
    written = _draw(plot_data(tiny_result), tmp_path / "out")
    assert [p.name for p in written] == list(PLOTS)
    assert set(here) == set(PLOTS) - set(FORKED) and FORKED  # the rest came from the fork
    for name in PLOTS:
        assert (tmp_path / "ref" / name).read_bytes() == (tmp_path / "out" / name).read_bytes(), name


def test_a_failed_fork_costs_no_plot(tiny_result, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    def broken(*a: object, **k: object) -> bytes:
        raise RuntimeError("only the fork renders to bytes")

    monkeypatch.setattr("bbrlab.figures.png_bytes", broken)
    here = _drawn_here(monkeypatch)
    _draw(plot_data(tiny_result), tmp_path)
    assert sorted(here) == sorted(PLOTS) and sorted(p.name for p in tmp_path.iterdir()) == sorted(PLOTS)


def test_a_dead_plot_process_costs_no_plot(tiny_result, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    with PlotWorker() as draw:
        assert draw.proc is not None
        draw.proc.kill()
        draw.proc.wait()
        draw(tiny_result, tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(FIGURES)


def test_a_write_error_in_the_plot_process_is_reported_as_such(tiny_result, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    _never_in_process(monkeypatch)  # the OSError must come from the plot process, not a second try here
    with PlotWorker() as draw, pytest.raises(FileNotFoundError):
        draw(tiny_result, tmp_path / "missing")


def test_a_big_run_is_drawn_here_rather_than_copied_to_the_plot_process(tiny_result, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    drawn_here = []
    monkeypatch.setattr("bbrlab.plotworker.MAX_PAYLOAD_BYTES", 1000)  # the tiny run's plot data is larger
    monkeypatch.setattr("bbrlab.plots.plot_all", lambda data, out: drawn_here.append(out) or [])
    with PlotWorker() as draw:
        proc = draw.proc
        draw(tiny_result, tmp_path)
    assert drawn_here == [tmp_path] and proc is not None and proc.returncode is not None


# ------------------------------------------------------------------ the plot process never outlives the CLI


def _group_members(pgid: int) -> list[int]:
    pids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            pids.append(int(stat.parent.name))
    return pids


def _start_run(tmp_path: Path) -> subprocess.Popen[bytes]:
    # A run long enough to be caught while simulating; its own process group, to find its children.
    return subprocess.Popen([sys.executable, "-m", "bbrlab", "run", str(EXAMPLES / "quick.toml"), "--set", "duration=3000s",
                             "--out", str(tmp_path / "r"), "-q"], env=ENV, cwd=tmp_path, start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _wait_for(cond, timeout_s: float) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.05)
    return cond()


@pytest.mark.parametrize("how", ["ctrl-c", "kill -9"])
def test_the_plot_process_ends_with_the_cli(core, tmp_path: Path, how: str) -> None:  # type: ignore[no-untyped-def]
    proc = _start_run(tmp_path)
    try:
        assert _wait_for(lambda: len(_group_members(proc.pid)) >= 2, 60), "the plot process never started"
        if how == "ctrl-c":
            proc.send_signal(signal.SIGINT)  # to the CLI alone: it must stop its plot process itself
            _, err = proc.communicate(timeout=60)
            assert proc.returncode == 130 and b"Traceback" not in err, err
            # Stopped and reaped by the CLI before it exits, not left to notice on its own.
            assert _group_members(proc.pid) == []
        else:
            proc.kill()
            proc.wait(timeout=60)
            # Nobody to stop it: it sees its input close and exits.
            assert _wait_for(lambda: not _group_members(proc.pid), 60), "the plot process outlived the CLI"
        assert not (tmp_path / "r").exists()
    finally:
        for pid in _group_members(proc.pid):
            os.kill(pid, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
