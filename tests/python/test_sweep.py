"""`bbrlab sweep`: the grid, the [sweep] table, the cache (a second run skips, an interrupted one
resumes), failed runs, Ctrl-C, and the Ray engine giving the same table as the local one."""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import bbrlab
import pandas as pd
import pytest
from bbrlab.cli import cli
from bbrlab.errors import SimulationError, UserError
from bbrlab.sweep import plan_sweep, run_sweep
from bbrlab.sweep.table import WALL_CLOCK
from click.testing import CliRunner
from scenario_files import bottleneck_scenario, write_scenario

ROOT = Path(__file__).resolve().parents[2]
QUICK = ROOT / "examples" / "quick.toml"
# Where this bbrlab lives, for child processes (a source tree or an installed package alike).
PKG_PARENT = str(Path(bbrlab.__file__).resolve().parents[1])

TWO_FLOWS = bottleneck_scenario("pair", "cubic", "bbr1")


# The test's Ray cluster takes only its own token (Ray's token authentication, set explicitly so
# that neither a ~/.ray/auth_token nor its absence changes what the head and the driver expect).
_RAY_TOKEN = secrets.token_hex(32)


def _env() -> dict[str, str]:
    env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0", RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=_RAY_TOKEN)
    env["PYTHONPATH"] = os.pathsep.join([PKG_PARENT, *filter(None, [env.get("PYTHONPATH")])])
    return env


def _session_members(sid: int) -> list[int]:
    """Processes still in session ``sid`` (the children of a command started with start_new_session)."""
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                if os.getsid(int(d)) == sid:
                    out.append(int(d))
            except OSError:
                pass
    return out


def _stop_session(proc: subprocess.Popen, timeout: float = 30) -> None:
    """SIGTERM the command, then SIGKILL whatever of its session is left; by process id only."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    deadline = time.monotonic() + 5
    while _session_members(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    for pid in _session_members(proc.pid):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _without_wall_clock(path: Path) -> pd.DataFrame:
    return pd.read_parquet(path / "points.parquet").drop(columns=list(WALL_CLOCK))


# ------------------------------------------------------------------ the plan


def test_plan_is_the_cartesian_product_with_seeds_and_file_axes_lose_to_grid(tmp_path: Path) -> None:
    f = write_scenario(
        tmp_path,
        TWO_FLOWS + '\n[sweep]\ngrid = { "topology.bottleneck.loss" = ["0%", "1%"], '
        '"flows.0.cc" = ["reno", "dctcp"] }\nseeds = 3\n',
    )
    plan = plan_sweep(f, grid=["flows.0.cc=cubic,bbr2", "topology.bottleneck.rtt=10ms,40ms"], sets=["seed=7"])
    # the file's flows.0.cc axis is replaced in place; the new axis comes after
    assert plan.axes_dict() == {
        "topology.bottleneck.loss": ["0%", "1%"],
        "flows.0.cc": ["cubic", "bbr2"],
        "topology.bottleneck.rtt": ["10ms", "40ms"],
    }
    assert plan.seeds == [7, 8, 9]  # the table's seeds = 3, from the base seed
    assert len(plan.runs) == 2 * 2 * 2 * 3
    first = plan.runs[0]
    assert first.overrides == [
        "seed=7",
        "topology.bottleneck.loss=0%",
        "flows.0.cc=cubic",
        "topology.bottleneck.rtt=10ms",
        "seed=7",
    ]
    # each run is the scenario it says: the core config carries its values
    for r in plan.runs:
        cfg = r.scenario.resolve()
        assert cfg["seed"] == r.seed
        assert cfg["flows"][0]["cc"] == r.values["flows.0.cc"]
        assert (
            cfg["topology"]["bottleneck"]["rtt_ns"]
            == {"10ms": 10_000_000, "40ms": 40_000_000}[r.values["topology.bottleneck.rtt"]]
        )
        assert cfg["topology"]["bottleneck"]["loss"] == {"0%": 0.0, "1%": 0.01}[r.values["topology.bottleneck.loss"]]
    assert len({r.key for r in plan.runs}) == len(plan.runs)
    # --seeds wins over the table
    assert plan_sweep(f, seeds=1).seeds == [1]


def test_cache_key_follows_the_resolved_scenario_and_the_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = write_scenario(tmp_path, TWO_FLOWS)
    key = plan_sweep(f).runs[0].key
    # the same scenario written differently (a default spelt out, another unit) is the same run
    f2 = write_scenario(tmp_path, TWO_FLOWS.replace('rtt = "20ms"', 'rtt = "0.02s", buffer = "1bdp"'), "s2.toml")
    assert plan_sweep(f2).runs[0].key == key
    assert plan_sweep(f, sets=["duration=2s"]).runs[0].key != key
    import bbrlab.sweep.cache as cache

    monkeypatch.setattr(cache, "__version__", "9.9.9")
    cache.code_identity.cache_clear()
    assert plan_sweep(f).runs[0].key != key  # another version
    monkeypatch.undo()
    cache.code_identity.cache_clear()
    assert plan_sweep(f).runs[0].key == key
    # The same version with one source file changed (a development checkout after an edit).
    real_read_bytes = Path.read_bytes

    def edited(self: Path) -> bytes:
        data = real_read_bytes(self)
        return data + b"# edited" if self.name == "event_loop.py" or self.name == "runner.py" else data

    monkeypatch.setattr(Path, "read_bytes", edited)
    cache.code_identity.cache_clear()
    try:
        assert plan_sweep(f).runs[0].key != key
    finally:
        monkeypatch.undo()
        cache.code_identity.cache_clear()


@pytest.mark.parametrize(
    ("table", "grid", "expected"),
    [
        (
            'grid = { "topology.bottleneck.los" = ["0%"] }',
            [],
            "[sweep] grid topology.bottleneck.los: unknown key 'los'",
        ),
        ("", ["topology.bottleneck.los=0%,1%"], "--grid topology.bottleneck.los: unknown key 'los'"),
        (
            'grid = { "topology.bottleneck.loss" = ["0%", "2x%"] }',
            [],
            'topology.bottleneck.loss (from [sweep] grid): "2x%"',
        ),
        (
            "",
            ["topology.bottleneck.rate=10Mbps,2.5Gbs"],
            'topology.bottleneck.rate (from --grid): "2.5Gbs" is not a rate',
        ),
        ("", ["flows.0.cc=cubic,bogus"], "flows.0.cc (from --grid)"),
        ("seeds = 0", [], "sweep.seeds: 0 is not a whole number"),
        ("seed = 2", [], "sweep.seed: unknown key 'seed' in [sweep]; did you mean 'seeds'?"),
        ('grid = { "flows.0.cc" = [] }', [], 'sweep.grid."flows.0.cc": write a non-empty list'),
        ("", ["seed=1,2"], "use --seeds N"),
        ("", ["flows.0.cc=cubic,cubic"], 'the value "cubic" is listed twice'),
        ("", ["duration"], "--grid duration: expected PATH=V1,V2"),
    ],
)
def test_bad_axes_fail_in_one_line_naming_axis_and_value(
    tmp_path: Path, table: str, grid: list[str], expected: str
) -> None:
    f = write_scenario(tmp_path, TWO_FLOWS + (f"\n[sweep]\n{table}\n" if table else ""))
    with pytest.raises(UserError) as e:
        plan_sweep(f, grid=grid)
    assert expected in str(e.value) and "\n" not in str(e.value)
    r = CliRunner().invoke(
        cli, ["sweep", str(f), *(a for g in grid for a in ("--grid", g)), "--out", str(tmp_path / "o")]
    )
    assert r.exit_code == 2 and expected in r.output and "Traceback" not in r.output
    assert not (tmp_path / "o").exists()  # nothing ran, nothing was written


def test_set_and_grid_of_one_field_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="also given with --set"):
        plan_sweep(QUICK, grid=["flows.0.cc=bbr,cubic"], sets=["flows.0.cc=reno"])


def test_run_and_validate_on_a_file_with_a_sweep_table(tmp_path: Path, in_tmp: Path) -> None:
    f = write_scenario(tmp_path, TWO_FLOWS + '\n[sweep]\ngrid = { "flows.0.cc" = ["reno", "dctcp"] }\nseeds = 2\n')
    r = CliRunner().invoke(cli, ["validate", str(f)])
    assert r.exit_code == 0, r.output
    assert "[sweep] table: valid, 2 points × 2 seeds = 4 runs" in r.stdout
    assert "[sweep]" not in r.stdout.split("\n\n", 1)[1]  # the resolved scenario has no such table

    r = CliRunner().invoke(cli, ["run", str(f), "-q", "--out", str(tmp_path / "run")])
    assert r.exit_code == 0, r.stderr
    assert "has a [sweep] table; this runs the base scenario" in r.stderr
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert [fl["cc"] for fl in summary["flows"]] == ["cubic", "bbr1"]  # the base, not a grid point

    bad = write_scenario(tmp_path, TWO_FLOWS + '\n[sweep]\ngrid = { "flows.0.cc" = ["reno", "nope"] }\n', "bad.toml")
    for extra in ([], ["--json"]):
        r = CliRunner().invoke(cli, ["validate", str(bad), *extra])
        assert r.exit_code == 2 and "flows.0.cc (from [sweep] grid)" in r.output


# ------------------------------------------------------------------ running


def test_sweep_runs_caches_and_resumes(tmp_path: Path, core) -> None:
    f = write_scenario(tmp_path, TWO_FLOWS)
    plan = plan_sweep(f, grid=["topology.bottleneck.loss=0%,3%", "flows.1.cc=bbr1,cubic"], seeds=2)
    out = tmp_path / "sw"
    first = run_sweep(plan, out=out, jobs=2, plots=False)
    assert (first.ran, first.cached, first.failed) == (8, 0, 0)
    t = pd.read_parquet(out / "points.parquet")
    assert len(t) == 8 and list(t.columns[:5]) == ["point", "topology.bottleneck.loss", "flows.1.cc", "seed", "run_dir"]
    assert t["error"].eq("").all()
    pd.testing.assert_frame_equal(
        t,
        pd.read_csv(
            out / "points.csv",
            keep_default_na=False,
            na_values=[""],
            dtype={"topology.bottleneck.loss": str, "flows.1.cc": str, "error": str},
        ).fillna({"error": ""}),
        check_dtype=False,
    )
    # every row is its run directory's summary, and the physics holds
    for r in t.to_dict("records"):
        s = json.loads((out / r["run_dir"] / "summary.json").read_text())
        assert s["run"]["seed"] == r["seed"] and s["run"]["overrides"][-1] == f"seed={r['seed']}"
        assert r["goodput_bps"] == s["aggregate"]["goodput_bps"] <= 20e6
        ccs = {"bbr1", "cubic"} if r["flows.1.cc"] == "bbr1" else {"cubic"}
        assert sum(r[f"{cc}.goodput_bps"] for cc in ccs) == pytest.approx(r["goodput_bps"])
        assert sum(r[f"{cc}.share"] for cc in ccs) == pytest.approx(1.0)
    # two CUBIC flows under 3 % random loss get a fraction of the link (Mathis: ~1.2 MSS/(RTT sqrt p))
    cubic = t[t["flows.1.cc"] == "cubic"].groupby("topology.bottleneck.loss")["goodput_bps"].mean()
    assert cubic["3%"] < 0.5 * cubic["0%"]
    # at 3 % loss two seeds are two different runs
    assert t[t["topology.bottleneck.loss"] == "3%"].groupby("flows.1.cc")["goodput_bps"].nunique().min() == 2

    mtimes = {p.name: p.stat().st_mtime_ns for p in (out / "runs").iterdir()}
    again = run_sweep(plan, out=out, jobs=2, plots=False)
    assert (again.ran, again.cached, again.failed, again.resumed) == (0, 8, 0, True)
    assert {p.name: p.stat().st_mtime_ns for p in (out / "runs").iterdir()} == mtimes  # nothing was rewritten
    pd.testing.assert_frame_equal(_without_wall_clock(out), t.drop(columns=list(WALL_CLOCK)))

    # a run lost (as if interrupted before it finished) is the only one run again
    import shutil

    victim = t["point"].iloc[3]
    shutil.rmtree(out / "runs" / victim)
    (out / "runs" / f"{victim}.incomplete").mkdir()  # what a killed worker leaves
    resumed = run_sweep(plan, out=out, jobs=1, plots=False)
    assert (resumed.ran, resumed.cached) == (1, 7)
    assert not list((out / "runs").glob("*.incomplete"))
    pd.testing.assert_frame_equal(_without_wall_clock(out), t.drop(columns=list(WALL_CLOCK)))

    # another sweep in the same directory is refused
    with pytest.raises(UserError, match="holds another sweep"):
        run_sweep(plan_sweep(f, grid=["topology.bottleneck.loss=0%"]), out=out)


def test_failed_run_is_recorded_and_the_rest_go_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, core) -> None:
    import bbrlab.engine.runner as runner

    real = runner.simulate

    def flaky(config, progress=None, scenario=None):
        if scenario.seed == 2:  # config: the scenario's checked config (core.Verdict)
            raise SimulationError("the simulator failed at t=0.5s: injected")
        return real(config, progress, scenario)

    monkeypatch.setattr(runner, "simulate", flaky)  # forked pool workers inherit it
    f = write_scenario(tmp_path, TWO_FLOWS)
    out = tmp_path / "sw"
    sweep_args = ["sweep", str(f), "--grid", "flows.0.cc=reno,cubic", "--seeds", "2", "-j", "2"]
    sweep_args += ["--no-plots", "--out", str(out)]
    r = CliRunner().invoke(cli, sweep_args)
    assert r.exit_code == 1, r.stderr
    assert "4 runs: 2 ran, 0 cached, 2 failed" in r.stdout and "2 run(s) failed" in r.stderr
    t = pd.read_parquet(out / "points.parquet")
    failed = t[t["seed"] == 2]
    assert failed["error"].str.contains("injected").all() and failed["goodput_bps"].isna().all()
    assert (failed["run_dir"] == "").all()
    assert t[t["seed"] == 1]["error"].eq("").all() and t[t["seed"] == 1]["goodput_bps"].gt(0).all()

    monkeypatch.setattr(runner, "simulate", real)  # fixed: the same command runs the failed ones only
    r = CliRunner().invoke(cli, sweep_args)
    assert r.exit_code == 0 and "2 ran, 2 cached, 0 failed" in r.stdout


def test_default_out_resumes_the_same_sweep_and_draws_plots(tmp_path: Path, in_tmp: Path, core) -> None:
    f = write_scenario(tmp_path, TWO_FLOWS.replace('duration = "1s"', 'duration = "0.5s"'))
    args = ["sweep", str(f), "--grid", "flows.0.cc=reno,cubic", "-j", "1"]
    r1 = CliRunner().invoke(cli, args)
    assert r1.exit_code == 0, r1.stderr
    dirs = list((in_tmp / "sweeps").iterdir())
    assert len(dirs) == 1 and dirs[0].name.startswith("pair-")
    runs = list((dirs[0] / "runs").iterdir())
    assert all((d / "goodput.png").stat().st_size > 0 for d in runs)  # plots by default
    r2 = CliRunner().invoke(cli, args)
    assert r2.exit_code == 0 and "0 ran, 2 cached" in r2.stdout and f"resuming sweeps/{dirs[0].name}" in r2.stderr
    assert list((in_tmp / "sweeps").iterdir()) == dirs
    # another sweep (more seeds): a new directory, which takes the runs it shares with the first one
    r3 = CliRunner().invoke(cli, [*args, "--seeds", "2", "--no-plots"])
    assert r3.exit_code == 0 and "4 runs: 2 ran, 2 cached" in r3.stdout
    new = next(d for d in (in_tmp / "sweeps").iterdir() if d != dirs[0])
    t1, t2 = _without_wall_clock(dirs[0]), _without_wall_clock(new)
    pd.testing.assert_frame_equal(t1, t2[t2["seed"] == 1].reset_index(drop=True))


def test_engine_options_are_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    r = CliRunner().invoke(cli, ["sweep", str(QUICK), "--address", "127.0.0.1:1", "--out", str(tmp_path / "a")])
    assert r.exit_code == 2 and "--address: only with --engine ray" in r.output
    monkeypatch.setitem(sys.modules, "ray", None)  # as if Ray were not installed
    r = CliRunner().invoke(
        cli, ["sweep", str(QUICK), "--set", "duration=0.5s", "--engine", "ray", "--out", str(tmp_path / "b")]
    )
    assert r.exit_code == 2 and "pip install 'bbrlab[ray]'" in r.output and "Traceback" not in r.output


def test_ctrl_c_stops_the_workers_and_the_sweep_resumes(tmp_path: Path, core) -> None:
    # Runs with plots take ~1-2 s each here: long enough to interrupt some in flight.
    f = write_scenario(tmp_path, TWO_FLOWS)
    out = tmp_path / "sw"
    cmd = [
        sys.executable,
        "-m",
        "bbrlab",
        "sweep",
        str(f),
        "--grid",
        "flows.0.cc=reno,cubic,bbr1,bbr2,bbr3,dctcp",
        "-j",
        "2",
        "--out",
        str(out),
    ]
    proc = subprocess.Popen(
        cmd, env=_env(), start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 120

        # A finished run: its directory renamed from `<id>.incomplete`, which holds a summary.json
        # while the plots are still being drawn (and is removed if interrupted then).
        def finished() -> bool:
            return any(not p.parent.name.endswith(".incomplete") for p in (out / "runs").glob("*/summary.json"))

        while not finished() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert proc.poll() is None, "the sweep ended before it could be interrupted"
        os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole process group
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == 130, err
        assert "error: interrupted" in err and "the same command resumes" in err and "Traceback" not in err
        time.sleep(0.3)
        assert _session_members(proc.pid) == [], "a worker outlived the sweep"
        assert not list((out / "runs").glob("*.incomplete"))
        kept = len(list((out / "runs").iterdir()))
        assert 1 <= kept < 6
    finally:
        _stop_session(proc)
    done = subprocess.run([*cmd, "--no-plots"], env=_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert f"{6 - kept} ran, {kept} cached, 0 failed" in done.stdout
    assert len(pd.read_parquet(out / "points.parquet")) == 6


# ------------------------------------------------------------------ Ray


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_ray_engine_gives_the_local_table(tmp_path: Path, core) -> None:
    pytest.importorskip("ray", reason="Ray is not installed (pip install 'bbrlab[ray]'; scripts/test.sh installs it)")
    f = write_scenario(tmp_path, TWO_FLOWS)
    args = ["sweep", str(f), "--grid", "topology.bottleneck.loss=0%,2%", "--no-plots"]
    port = _free_port()
    # A short temp dir: Ray's unix socket paths must stay under 108 bytes.
    ray_tmp = tempfile.mkdtemp(prefix="bbrlab-ray-", dir="/tmp")
    head = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ray.scripts.scripts",
            "start",
            "--head",
            "--block",
            f"--port={port}",
            "--num-cpus=2",
            "--include-dashboard=false",
            "--disable-usage-stats",
            f"--temp-dir={ray_tmp}",
            "--node-ip-address=127.0.0.1",
            "--object-store-memory=100000000",
        ],
        env=_env(),
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        # The local sweep while the head starts; in another parent directory than the Ray sweep,
        # whose runs it would otherwise lend it.
        local = subprocess.run(
            [sys.executable, "-m", "bbrlab", *args, "--out", str(tmp_path / "l" / "local")],
            env=_env(),
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert local.returncode == 0, local.stderr
        on_ray = subprocess.run(
            [
                sys.executable,
                "-m",
                "bbrlab",
                *args,
                "--engine",
                "ray",
                "--address",
                f"127.0.0.1:{port}",
                "--out",
                str(tmp_path / "r" / "ray"),
            ],
            env=_env(),
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert on_ray.returncode == 0, on_ray.stderr
        assert "2 ran, 0 cached, 0 failed" in on_ray.stdout
    finally:
        _stop_session(head)
        import shutil

        shutil.rmtree(ray_tmp, ignore_errors=True)
    assert _session_members(head.pid) == [], "a Ray process outlived the test"
    a, b = _without_wall_clock(tmp_path / "l" / "local"), _without_wall_clock(tmp_path / "r" / "ray")
    assert len(a) == 2 and a["goodput_bps"].nunique() == 2
    pd.testing.assert_frame_equal(a, b)
    # the run directories are the same files (the wall-clock facts and the host aside)
    for rd in a["run_dir"]:
        pd.testing.assert_frame_equal(
            pd.read_parquet(tmp_path / "l" / "local" / rd / "timeseries.parquet"),
            pd.read_parquet(tmp_path / "r" / "ray" / rd / "timeseries.parquet"),
        )


def test_an_unreachable_ray_address_is_one_line_not_minutes_of_retries(tmp_path: Path) -> None:
    pytest.importorskip("ray", reason="the ray extra is not installed (scripts/test.sh installs it)")
    f = write_scenario(tmp_path, TWO_FLOWS)
    with socket.socket() as s:  # a port nobody listens on: bound, never listening
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        started = time.monotonic()
        res = CliRunner().invoke(
            cli,
            [
                "sweep",
                str(f),
                "--grid",
                "duration=1s,2s",
                "--engine",
                "ray",
                "--address",
                f"127.0.0.1:{port}",
                "--out",
                str(tmp_path / "sw"),
            ],
        )
    assert res.exit_code == 2, res.output
    assert f"--address 127.0.0.1:{port}: cannot reach a Ray head there" in res.output
    assert time.monotonic() - started < 30  # ray.init alone retries for minutes
    res = CliRunner().invoke(
        cli, ["sweep", str(f), "--grid", "duration=1s,2s", "--engine", "ray", "--address", "nocolon"]
    )
    assert res.exit_code == 2 and "expected HOST:PORT" in res.output, res.output
