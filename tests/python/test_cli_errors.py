"""Malformed scenarios through the real CLI: exit 2, one line `error: <field path>: …`, no traceback,
and no run directory that looks complete.

Each file in bad_scenarios/ says what it expects in its first lines:
    # expect: <text the error must name — the field path (or the file for non-TOML)>
    # expect-text: <another substring the message must contain> (optional)
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from bbrlab.cli import cli
from bbrlab.results.results import is_complete_run
from click.testing import CliRunner

HERE = Path(__file__).resolve().parent
BAD = sorted((HERE / "bad_scenarios").glob("*.toml"))
GOOD = HERE.parents[1] / "examples" / "quick.toml"

# Files that cannot carry a comment header.
SPECIAL_EXPECT = {"binary-garbage.toml": ["binary-garbage.toml", "not a TOML file"]}


def expectations(path: Path) -> list[str]:
    if path.name in SPECIAL_EXPECT:
        return SPECIAL_EXPECT[path.name]
    found = re.findall(r"^# expect(?:-text)?: (.+)$", path.read_text(), flags=re.M)
    assert found, f"{path.name} has no '# expect:' line"
    return found


def assert_user_error(result, must_contain: list[str]) -> None:
    out = result.output
    assert result.exit_code == 2, f"exit {result.exit_code}: {out!r} {result.exception!r}"
    assert "Traceback" not in out
    lines = [line for line in out.splitlines() if line.strip()]
    assert len(lines) == 1, f"expected one line, got: {out!r}"
    assert lines[0].startswith("error: "), lines[0]
    for text in must_contain:
        assert text in lines[0], f"{text!r} not in {lines[0]!r}"
    # A user error is not an exception escaping the CLI.
    assert result.exception is None or isinstance(result.exception, SystemExit)


def assert_no_complete_run(root: Path) -> None:
    for d in root.rglob("*"):
        if d.is_dir():
            assert not is_complete_run(d), f"{d} looks like a complete run"
            assert not (d / "summary.json").exists(), d


def test_there_are_enough_bad_scenarios() -> None:
    assert len(BAD) >= 20


@pytest.mark.parametrize("path", BAD, ids=[p.stem for p in BAD])
def test_bad_scenario_run(path: Path, in_tmp: Path) -> None:
    result = CliRunner().invoke(cli, ["run", str(path), "--out", str(in_tmp / "out")])
    assert_user_error(result, expectations(path))
    assert not (in_tmp / "out").exists()
    assert_no_complete_run(in_tmp)


@pytest.mark.parametrize("path", BAD, ids=[p.stem for p in BAD])
def test_bad_scenario_validate(path: Path) -> None:
    result = CliRunner().invoke(cli, ["validate", str(path)])
    assert_user_error(result, expectations(path))


BAD_SETS = [
    (["--set", "topology.bottleneck.rate=2.5Gbs"], ["topology.bottleneck.rate", 'try "2.5Gbps"']),
    (["--set", "topology.bottlneck.rate=1Gbps"], ["topology.bottlneck", "did you mean 'bottleneck'?"]),
    (["--set", "flows.0.ccc=cubic"], ["flows.0.ccc", "did you mean 'cc'?"]),
    (["--set", "flows.3.cc=cubic"], ["flows.3.cc", "past the end", "--add-flow"]),
    (["--set", "flows.0.cc=vegas"], ["flows.0.cc", "unknown algorithm"]),
    (["--set", "duration=0s"], ["duration"]),
    (["--set", "duration=ten"], ["duration", "not a time"]),
    (["--set", "topology.bottleneck.loss=150%"], ["topology.bottleneck.loss"]),
    (["--set", "flows.0.stop=0s"], ["flows.0.stop"]),
    (["--set", "seed=-1"], ["seed"]),
    (["--set", "nonsense"], ["--set nonsense", "path=value"]),
    (["--set", "flows.0.mss=big"], ["flows.0.mss", "not a size"]),
    (["--seed", "-3"], ["seed"]),
]


@pytest.mark.parametrize(("args", "must"), BAD_SETS, ids=[" ".join(a) for a, _ in BAD_SETS])
def test_bad_set(args: list[str], must: list[str], in_tmp: Path) -> None:
    result = CliRunner().invoke(cli, ["run", str(GOOD), "--out", str(in_tmp / "out"), *args])
    assert_user_error(result, must)
    assert not (in_tmp / "out").exists()
    assert_no_complete_run(in_tmp)


def test_missing_file(in_tmp: Path) -> None:
    result = CliRunner().invoke(cli, ["run", "nope.toml"])
    assert_user_error(result, ["nope.toml", "no such scenario file"])


def test_directory_instead_of_file(in_tmp: Path) -> None:
    result = CliRunner().invoke(cli, ["validate", str(in_tmp)])
    assert_user_error(result, ["is a directory"])


def test_existing_out_dir_is_refused(in_tmp: Path) -> None:
    (in_tmp / "taken").mkdir()
    result = CliRunner().invoke(cli, ["run", str(GOOD), "--out", "taken"])
    assert_user_error(result, ["taken", "already exists"])


def test_unknown_option_and_command_are_one_line() -> None:
    assert_user_error(CliRunner().invoke(cli, ["run", "--frobnicate"]), ["--frobnicate"])
    assert_user_error(CliRunner().invoke(cli, ["frobnicate"]), ["frobnicate"])


def test_show_errors(in_tmp: Path) -> None:
    assert_user_error(CliRunner().invoke(cli, ["show", "nowhere"]), ["nowhere", "no such run directory"])
    (in_tmp / "x.incomplete").mkdir()
    assert_user_error(CliRunner().invoke(cli, ["show", "x.incomplete"]), ["incomplete"])
    (in_tmp / "empty").mkdir()
    assert_user_error(CliRunner().invoke(cli, ["show", "empty"]), ["not a bbrlab run directory"])


def test_validate_prints_the_resolved_scenario() -> None:
    result = CliRunner().invoke(cli, ["validate", str(GOOD), "--set", "flows.0.cc=cubic"])
    assert result.exit_code == 0, result.output
    assert 'cc = "cubic"' in result.output
    assert 'buffer = "1bdp"' in result.output and 'min_rto = "200ms"' in result.output
    js = CliRunner().invoke(cli, ["validate", str(GOOD), "--json"])
    assert js.exit_code == 0 and '"duration_ns": 10000000000' in js.output


def test_misspelt_algorithm_gets_did_you_mean(tmp_path):
    """`bbrv3` is a common misspelling of the registry's `bbr3`: the one-line error suggests it."""
    import subprocess
    import sys

    p = tmp_path / "s.toml"
    p.write_text(
        'name = "x"\nduration = "1s"\n[topology]\nkind = "dumbbell"\n[topology.bottleneck]\n'
        'rate = "10Mbps"\nrtt = "10ms"\n[[flows]]\ncc = "bbrv3"\n'
    )
    r = subprocess.run([sys.executable, "-m", "bbrlab", "run", str(p)], capture_output=True, text=True)
    assert r.returncode == 2
    assert "did you mean 'bbr3'?" in r.stderr and r.stderr.count("\n") == 1
