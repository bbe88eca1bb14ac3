"""The run catalog (`bbrlab ls`), run provenance in summary.json (overrides, scenario file, bbrlab's
git commit), run-directory names that tell overrides apart, and `bbrlab validate`'s buffer line.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import bbrlab
import pytest
from bbrlab.cli import cli
from bbrlab.results import provenance
from bbrlab.results.rundir import NAME_MAX
from bbrlab.runs.catalog import COLUMNS
from click.testing import CliRunner

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
QUICK = EXAMPLES / "quick.toml"


def _invoke(*args: str):
    r = CliRunner().invoke(cli, list(args))
    assert "Traceback" not in r.output, r.output
    return r


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """runs/ with three complete runs written by the CLI (one nested deeper, as a sweep nests
    them), an interrupted one and one whose summary.json is damaged."""
    root = tmp_path_factory.mktemp("cwd")
    old = os.getcwd()
    os.chdir(root)
    try:
        for args in (
            ["--set", "duration=0.5s"],
            ["--set", "duration=0.5s", "--set", "flows.0.cc=cubic", "--seed", "2"],
            ["--set", "duration=0.5s", "--set", "topology.bottleneck.loss=1%", "--out", "runs/sweep/runs/p1"],
        ):
            r = _invoke("run", str(QUICK), "-q", *args)
            assert r.exit_code == 0, r.output
    finally:
        os.chdir(old)
    first = sorted((root / "runs").glob("quick-*"))[0]
    shutil.copytree(first, root / "runs" / "crashed.incomplete")
    shutil.copytree(first, root / "runs" / "damaged")
    (root / "runs" / "damaged" / "summary.json").write_text("{")
    return root / "runs"


def _stdout(r) -> str:
    """What went to stdout (older click mixes stderr into it: its warning lines are dropped)."""
    return "".join(line for line in r.stdout.splitlines(keepends=True) if not line.startswith("warning: "))


def _ls(runs: Path, *args: str) -> list[dict]:
    r = _invoke("ls", str(runs), "--json", *args)
    assert r.exit_code == 0, r.output
    return json.loads(_stdout(r))


def test_ls_lists_complete_runs_with_their_figures(runs: Path) -> None:
    listed = _ls(runs)
    paths = sorted(Path(r["path"]).relative_to(runs).as_posix() for r in listed)
    assert len(paths) == 3 and "sweep/runs/p1" in paths, paths
    assert not any("incomplete" in p or "damaged" in p for p in paths)
    for r in listed:
        s = json.loads((Path(r["path"]) / "summary.json").read_text())
        assert r["goodput_bps"] == s["aggregate"]["goodput_bps"] and r["seed"] == s["run"]["seed"]
        assert r["overrides"] == s["run"]["overrides"] and r["created"] == s["run"]["created"]
        assert r["rtt_mean_ms"] == pytest.approx(s["flows"][0]["rtt_mean_ms"])  # one flow: its own mean
        assert list(r) == list(COLUMNS)
    assert [r["created"] for r in listed] == sorted(r["created"] for r in listed)
    assert "summary.json: damaged" in _invoke("ls", str(runs)).output  # said, and left out


def test_ls_sort_csv_and_table(runs: Path) -> None:
    by_goodput = [r["goodput_bps"] for r in _ls(runs, "--sort", "goodput_bps")]
    assert by_goodput == sorted(by_goodput)
    assert [r["goodput_bps"] for r in _ls(runs, "--sort", "goodput_bps", "-r")] == sorted(by_goodput, reverse=True)
    rows = list(csv.DictReader(io.StringIO(_stdout(_invoke("ls", str(runs), "--csv")))))
    assert len(rows) == 3 and set(rows[0]) == set(COLUMNS)
    table = _invoke("ls", str(runs)).output
    assert "cc=cubic seed=2" in table and "loss=1%" in table  # overrides by their short names
    # Each header is a column name --sort/--where take, with one unit per column beneath.
    for name in ("goodput_bps", "link_share", "jain", "retrans_rate", "rtt_mean_ms", "wall_s"):
        assert name in table and name in COLUMNS, name
    listed = _ls(runs)
    assert all(f"{r['goodput_bps'] / 1e6:.2f}" in table and f"{r['wall_s']:.3f}" in table for r in listed)
    assert " Mbit/s " in table and "Mbit/s │" not in table  # the unit in the header, not in each cell
    bad = _invoke("ls", str(runs), "--sort", "speed")
    assert bad.exit_code == 2 and "--sort speed: not a column" in bad.output


def test_ls_where_and_sql_with_duckdb(runs: Path) -> None:
    pytest.importorskip(
        "duckdb", reason="DuckDB is the optional query extra; the test extra installs it, so CI runs this"
    )
    assert [r["seed"] for r in _ls(runs, "--where", "seed = 2")] == [2]
    # overrides is text: searchable as printed, and `<> ''` is no cast error.
    assert len(_ls(runs, "--where", "contains(overrides, 'topology.bottleneck.loss=1%')")) == 1
    assert len(_ls(runs, "--where", "overrides <> ''")) == 3
    q = _invoke(
        "ls",
        str(runs),
        "--sql",
        "SELECT r.seed, count(*) AS n, sum(t.delivered_bytes) FILTER (WHERE t.t_s = 0.5) "
        "AS bytes FROM timeseries t JOIN runs r ON t.run = r.path GROUP BY r.seed "
        "ORDER BY r.seed",
        "--json",
    )
    assert q.exit_code == 0, q.output
    got = json.loads(_stdout(q))
    assert [g["n"] for g in got] == [10, 5]  # seed 1: two runs × one flow × five 100 ms samples
    delivered = {}
    for r in _ls(runs):
        delivered[r["seed"]] = (
            delivered.get(r["seed"], 0)
            + json.loads((Path(r["path"]) / "summary.json").read_text())["aggregate"]["delivered_bytes"]
        )
    assert {g["seed"]: g["bytes"] for g in got} == delivered
    bad = _invoke("ls", str(runs), "--sql", "SELECT nope FROM runs")
    errors = [line for line in bad.output.splitlines() if not line.startswith("warning: ")]
    assert bad.exit_code == 2 and len(errors) == 1 and errors[0].startswith("error: --sql:"), bad.output


def test_ls_without_duckdb_still_lists_and_says_how_to_get_it(runs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "duckdb", None)  # import duckdb now raises ImportError
    assert len(_ls(runs)) == 3
    r = _invoke("ls", str(runs), "--where", "seed = 2")
    assert r.exit_code == 2 and "pip install 'bbrlab[query]'" in r.output


def test_ls_and_show_on_the_wrong_kind_of_directory(runs: Path, tmp_path: Path) -> None:
    r = _invoke("show", str(runs))
    assert r.exit_code == 2 and "a directory of runs, not a run" in r.output and f"bbrlab ls {runs}" in r.output
    missing = _invoke("ls", str(tmp_path / "nope"))
    assert missing.exit_code == 2 and "no such directory" in missing.output
    empty = _invoke("ls", str(tmp_path), "--json")
    assert empty.exit_code == 0 and json.loads(empty.output) == []
    assert _invoke("show", str(tmp_path)).output.count("not a bbrlab run directory") == 1


def test_ls_plain_listing_imports_neither_pandas_nor_duckdb(runs: Path) -> None:
    code = (
        "import sys; from bbrlab.cli import main\n"
        "try:\n    main(['ls', sys.argv[1]])\nexcept SystemExit:\n    pass\n"
        "print('LOADED', 'pandas' in sys.modules, 'duckdb' in sys.modules)"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO / "python")}
    p = subprocess.run([sys.executable, "-c", code, str(runs)], capture_output=True, text=True, env=env, timeout=60)
    assert "LOADED False False" in p.stdout, p.stdout + p.stderr


# ------------------------------------------------------------------ provenance


def test_summary_records_overrides_file_and_commit(runs: Path) -> None:
    seeded = next(r for r in _ls(runs) if r["seed"] == 2)
    s = json.loads((Path(seeded["path"]) / "summary.json").read_text())["run"]
    assert s["overrides"] == ["duration=0.5s", "flows.0.cc=cubic", "seed=2"]
    assert s["scenario_file"] == str(QUICK)
    assert s["git_commit"] == provenance.git_commit()
    # The API records the same without the CLI; a scenario built in code has no file.
    api = bbrlab.run(bbrlab.load_scenario(QUICK, ["duration=0.5s"])).summary["run"]
    assert api["overrides"] == ["duration=0.5s"] and api["scenario_file"] == str(QUICK)
    built = bbrlab.parse_scenario(
        {"duration": "0.5s", "topology": {"bottleneck": {"rate": "10Mbps", "rtt": "10ms"}}, "flows": [{"cc": "reno"}]}
    )
    assert built.source_file is None and built.overrides == ()


def test_git_commit_is_this_checkouts_head() -> None:
    expected = None
    if shutil.which("git"):
        pkg = Path(bbrlab.__file__).parent
        head = subprocess.run(["git", "-C", str(pkg), "rev-parse", "HEAD"], capture_output=True, text=True)
        if head.returncode == 0:
            dirty = subprocess.run(
                ["git", "-C", str(pkg), "status", "--porcelain"], capture_output=True, text=True
            ).stdout
            expected = head.stdout.strip() + ("+dirty" if dirty.strip() else "")
    provenance.git_commit.cache_clear()
    assert provenance.git_commit() == expected


@pytest.fixture
def fake_checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    if not shutil.which("git"):
        pytest.skip("git is not installed (.ci/run installs it)")
    top = tmp_path / "repo"
    pkg = top / "python" / "bbrlab"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    for cmd in (["init", "-q"], ["add", "."], ["commit", "-qm", "x"]):
        subprocess.run(["git", "-C", str(top), *cmd], check=True, env=env, capture_output=True)
    monkeypatch.setattr(provenance, "_PACKAGE_DIR", pkg.resolve())
    provenance.git_commit.cache_clear()
    yield top
    provenance.git_commit.cache_clear()


def test_git_commit_clean_dirty_foreign_and_missing(fake_checkout: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    head = subprocess.run(
        ["git", "-C", str(fake_checkout), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    assert provenance.git_commit() == head
    (fake_checkout / "python" / "bbrlab" / "new.py").write_text("x = 1\n")
    provenance.git_commit.cache_clear()
    assert provenance.git_commit() == head + "+dirty"
    # A package that sits in some other repository (a venv inside a project) is not that project.
    other = fake_checkout / "venv" / "site-packages" / "bbrlab"
    other.mkdir(parents=True)
    monkeypatch.setattr(provenance, "_PACKAGE_DIR", other.resolve())
    provenance.git_commit.cache_clear()
    assert provenance.git_commit() is None
    monkeypatch.setattr(provenance, "_PACKAGE_DIR", (fake_checkout / "python" / "bbrlab").resolve())
    monkeypatch.setenv("PATH", "/nonexistent")  # no git at all: no commit, and no failure
    provenance.git_commit.cache_clear()
    assert provenance.git_commit() is None


def test_run_names_tell_overrides_apart_and_stay_safe(tmp_path: Path) -> None:
    # A flow's field keeps its index: "cc=cubic" would read the same for flow 0 and flow 1.
    assert provenance.overrides_slug(["flows.0.cc=cubic", "topology.bottleneck.loss=1%"]) == "flows.0.cc=cubic,loss=1%"
    assert provenance.overrides_slug(["flows.0.cc=bbr", "flows.1.cc=cubic"]) == "flows.0.cc=bbr,flows.1.cc=cubic"
    assert provenance.overrides_slug(["topology.bottleneck.rate=100Mbit/s"]) == "rate=100Mbit_s"
    many = [f"flows.{i}.extra_rtt={i}ms" for i in range(40)]
    a, b = provenance.overrides_slug(many), provenance.overrides_slug(many[:-1] + ["flows.39.extra_rtt=1ms"])
    assert a != b and len(a) <= provenance.SLUG_MAX and len(b) <= provenance.SLUG_MAX
    for slug in (a, b, provenance.overrides_slug(['x="a b"/\\*?:<>|é'])):
        assert re.fullmatch(r"[A-Za-z0-9._=,%+-]+", slug), slug
    # The longest name a scenario may have, a long slug, a counter and ".incomplete": still a name.
    d = provenance.default_run_dir("n" * 100, many, root=tmp_path)
    assert len(os.fsencode(d.name + "-99.incomplete")) <= NAME_MAX
    (tmp_path / (d.name + "-99.incomplete")).mkdir()
    first = provenance.default_run_dir("quick", ["seed=2"], root=tmp_path)
    first.mkdir()
    assert provenance.default_run_dir("quick", ["seed=2"], root=tmp_path) != first
    assert provenance.default_run_dir("quick", ["seed=3"], root=tmp_path).name.startswith("quick-seed=3-")
    assert re.fullmatch(r"quick-\d{8}-\d{6}", provenance.default_run_dir("quick", [], root=tmp_path).name)


# ------------------------------------------------------------------ validate's buffer line


@pytest.mark.parametrize(
    "args, expect",
    [
        ([str(EXAMPLES / "dc-incast.toml")], "buffer unlimited per switch port; lossless: PAUSE above 64KB"),
        ([str(EXAMPLES / "dc-incast.toml"), "--set", "topology.lossless=false"], "buffer 128KB per switch port"),
        ([str(EXAMPLES / "dc-incast.toml"), "--set", "topology.shared_buffer=1MB"], "; 1MB shared by all ports"),
        ([str(QUICK), "--set", "topology.bottleneck.buffer=100pkts"], "buffer 100 packets"),
        ([str(QUICK)], "BDP 100KB; buffer 100KB"),
    ],
)
def test_validate_says_what_limits_the_queue(args: list[str], expect: str) -> None:
    r = _invoke("validate", *args)
    assert r.exit_code == 0, r.output
    header = next(line for line in r.output.splitlines() if line.startswith("# ") and "valid." in line)
    assert expect in header and "None" not in header, header
