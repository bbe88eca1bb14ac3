"""Start-up: what the CLI loads. `bbrlab run` writes its Parquet files and PNGs without pandas
or matplotlib (each costs more to import than `bbrlab cc` takes altogether).

No timings (this machine is shared): the tests count what does not depend on load — the modules a
command imports.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import bbrlab
from bbrlab.plots.plots import FIGURES
from bbrlab.results.results import is_complete_run

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
HEAVY = ("pandas", "pyarrow", "matplotlib", "pydantic")
ENV = {
    **os.environ,
    "PYTHONPATH": os.pathsep.join([str(Path(bbrlab.__file__).parents[1]), os.environ.get("PYTHONPATH", "")]),
}


def _loaded_after(code: str) -> dict[str, bool]:
    """Which heavy modules a fresh interpreter has loaded after running ``code``."""
    probe = f"""
import json, sys
try:
{chr(10).join("    " + line for line in code.strip().splitlines())}
except SystemExit as e:
    assert not e.code, e.code
print(json.dumps({{m: m in sys.modules for m in {HEAVY!r}}}))
"""
    out = subprocess.run([sys.executable, "-c", probe], env=ENV, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_cli_and_cc_load_none_of_the_heavy_modules() -> None:
    assert _loaded_after("import bbrlab.cli") == dict.fromkeys(HEAVY, False)
    assert _loaded_after("from bbrlab.cli import main\nmain(['cc'])") == dict.fromkeys(HEAVY, False)


def test_run_writes_its_tables_and_plots_without_pandas_or_matplotlib(core, tmp_path: Path) -> None:
    out = tmp_path / "r"
    loaded = _loaded_after(
        f"from bbrlab.cli import main\nmain(['run', {str(EXAMPLES / 'quick.toml')!r}, "
        f"'--set', 'duration=1s', '--out', {str(out)!r}, '-q'])"
    )
    assert loaded == {"pandas": False, "pyarrow": True, "matplotlib": False, "pydantic": True}
    assert is_complete_run(out) and all((out / name).stat().st_size > 1000 for name in FIGURES)
    # What it wrote reads back as the tables the API builds from the same run.
    import pandas as pd

    again = bbrlab.run(bbrlab.load_scenario(EXAMPLES / "quick.toml", ["duration=1s"]))
    saved = bbrlab.Result.load(out)

    def labels_as_objects(frame: pd.DataFrame) -> pd.DataFrame:
        # Parquet gives a categorical's labels back as pandas' str dtype, the core's are objects.
        return frame.apply(lambda c: c.cat.set_categories(c.cat.categories.astype(object)) if hasattr(c, "cat") else c)

    for t in ("flows", "timeseries", "queue"):
        pd.testing.assert_frame_equal(labels_as_objects(getattr(saved, t)), getattr(again, t))


def test_a_run_that_skips_interpreter_shutdown_still_flushes_everything(core, tmp_path: Path) -> None:
    # `bbrlab run` (sim) ends with os._exit once done: what it printed must all have been written.
    out = tmp_path / "r"
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "bbrlab",
            "run",
            str(EXAMPLES / "quick.toml"),
            "--set",
            "duration=1s",
            "--out",
            str(out),
            "--json",
        ],
        env=ENV,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr
    printed = json.loads(p.stdout)  # the whole document, not a buffer's worth of it
    assert printed["run_dir"] == str(out) and is_complete_run(out)
    # A failing run exits through the interpreter as usual, with its code.
    again = subprocess.run(
        [sys.executable, "-m", "bbrlab", "run", str(EXAMPLES / "quick.toml"), "--out", str(out)],
        env=ENV,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert again.returncode == 2 and "already exists" in again.stderr
