"""The researcher's surface of sweeps (issue 36): the sweep's answer on screen and as a figure
(metric against axis, seeds as error bars), one grid language for sweep / [sweep] / compare, and
no flow added by a typo in --set."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from bbrlab.cli import cli
from bbrlab.errors import UserError
from bbrlab.results.provenance import short_overrides
from bbrlab.runs.runset import find_runs
from bbrlab.runs.sweepplot import axis_positions, metric_figure, metric_panels, plot_sweep_metrics
from bbrlab.sweep import plan_sweep
from bbrlab.sweep.aliases import ALIASES, resolve_axis
from bbrlab.sweep.summary import key_metrics, point_stats, table_rows
from click.testing import CliRunner
from scenario_files import bottleneck_scenario, write_scenario

BUFFER = "topology.bottleneck.buffer"

ONE_FLOW = bottleneck_scenario("one", "cubic")
TWO_FLOWS = bottleneck_scenario("two", "cubic", "bbr1")


def _points() -> pd.DataFrame:
    """A points table as `bbrlab sweep` writes one: buffer × 2 seeds, CUBIC's share rising with
    the buffer, seeds apart by a known amount."""
    rows = []
    for buf, share in (("0.5bdp", 0.2), ("1bdp", 0.3), ("4bdp", 0.6)):
        for seed, d in ((1, -0.05), (2, 0.05)):
            rows.append(
                {
                    "point": f"p{buf}",
                    BUFFER: buf,
                    "seed": seed,
                    "run_dir": "",
                    "goodput_bps": 90e6,
                    "jain": 0.9,
                    "retrans_rate": 0.01,
                    "rtt_p95_ms": 50.0 + 10 * share,
                    "bbr1.goodput_bps": 90e6 * (1 - share - d),
                    "bbr1.share": 1 - share - d,
                    "cubic.goodput_bps": 90e6 * (share + d),
                    "cubic.share": share + d,
                    "error": "",
                }
            )
    rows.append({**rows[-1], "seed": 3, "cubic.share": np.nan, "error": "failed"})  # left out
    return pd.DataFrame(rows)


def _sweep_dir(tmp_path: Path) -> Path:
    d = tmp_path / "sw"
    d.mkdir()
    _points().to_parquet(d / "points.parquet", index=False)
    (d / "sweep.json").write_text(json.dumps({"axes": {BUFFER: ["0.5bdp", "1bdp", "4bdp"]}}))
    return d


# ------------------------------------------------------------------ the table at the end of a sweep


def test_point_stats_are_mean_and_sd_over_the_seeds_that_ran() -> None:
    stats = point_stats(_points(), [BUFFER], ["cubic.share"])
    assert list(stats[BUFFER]) == ["0.5bdp", "1bdp", "4bdp"] and list(stats["seeds"]) == [2, 2, 2]
    assert np.allclose(stats["cubic.share"], [0.2, 0.3, 0.6])
    assert np.allclose(stats["cubic.share:sd"], np.std([-0.05, 0.05], ddof=1))


def test_terminal_table_leads_with_axes_then_per_algorithm_metrics_in_one_unit() -> None:
    points = _points()
    metrics = key_metrics(points)
    assert metrics[:4] == ["bbr1.goodput_bps", "cubic.goodput_bps", "bbr1.share", "cubic.share"]
    assert "rtt_p95_ms" in metrics and "retrans_rate" in metrics and "jain" in metrics
    # A cc axis (one algorithm per run): shares are all 100 % and Jain 1, so neither is shown.
    alone = points.assign(**{"bbr1.goodput_bps": np.nan, "bbr1.share": np.nan, "cubic.share": 1.0, "jain": 1.0})
    assert key_metrics(alone) == ["bbr1.goodput_bps", "cubic.goodput_bps", "rtt_p95_ms", "retrans_rate"]
    header, rows = table_rows(point_stats(points, [BUFFER], metrics), [BUFFER], metrics)
    assert header[:5] == [
        "buffer",
        "bbr1 goodput (Mbit/s)",
        "cubic goodput (Mbit/s)",
        "bbr1 share (%)",
        "cubic share (%)",
    ]
    assert rows[2][0] == "4bdp" and rows[2][4] == "60.0 ± 7.1"  # 0.6 ± 0.0707 as %
    assert rows[2][2] == "54.00 ± 6.36"  # 90 Mbit/s × 0.6


def test_cli_sweep_prints_the_points_table(tmp_path: Path, core) -> None:
    f = write_scenario(tmp_path, TWO_FLOWS.replace('"1s"', '"0.3s"'))
    args = ["sweep", str(f), "--grid", "buffer=1bdp,2bdp", "--seeds", "2", "-j", "1", "--no-plots"]
    r = CliRunner().invoke(cli, [*args, "--out", str(tmp_path / "sw")])
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    head = next(i for i, line in enumerate(lines) if "cubic share (%)" in line)
    assert "buffer" in lines[head] and "p95 RTT (ms)" in lines[head]
    t = pd.read_parquet(tmp_path / "sw" / "points.parquet")
    share = t[t[BUFFER] == "2bdp"]["cubic.share"]
    body = next(line for line in lines[head:] if "2bdp" in line)
    assert f"{100 * share.mean():.1f} ± {100 * share.std():.1f}" in body


# ------------------------------------------------------------------ metric against axis


def test_axis_values_with_one_unit_are_drawn_to_scale() -> None:
    scale = axis_positions(["0.25bdp", "1bdp", "16bdp"])
    assert scale.numeric and scale.unit == "bdp" and scale.positions == {"0.25bdp": 0.25, "1bdp": 1.0, "16bdp": 16.0}
    mixed = axis_positions(["1bdp", "64KB", "cubic"])
    assert not mixed.numeric and mixed.positions == {"1bdp": 0.0, "64KB": 1.0, "cubic": 2.0}


def test_metric_figure_has_the_means_and_seed_sd_as_error_bars() -> None:
    fig = metric_figure(_points(), [BUFFER], BUFFER, [["cubic.share"]])
    ax = fig.axes[0]
    line = ax.lines[0]
    assert np.allclose(line.get_xdata(), [0.5, 1, 4]) and np.allclose(line.get_ydata(), [20, 30, 60])
    bars = [c for c in ax.collections if len(c.get_segments()) == 3][0]
    half = [(s[1][1] - s[0][1]) / 2 for s in bars.get_segments()]
    assert np.allclose(half, 100 * np.std([-0.05, 0.05], ddof=1))
    assert ax.get_xscale() == "linear" and "topology.bottleneck.buffer (bdp)" in ax.get_xlabel()
    # Default panels: goodput of every algorithm on one panel, shares on another, then the rest.
    panels = metric_panels(_points(), None)
    assert panels[0] == ["bbr1.goodput_bps", "cubic.goodput_bps"] and panels[1] == ["bbr1.share", "cubic.share"]


def test_cli_plot_x_y_draws_the_metric_and_names_bad_axes(tmp_path: Path) -> None:
    d = _sweep_dir(tmp_path)
    r = CliRunner().invoke(cli, ["plot", str(d), "--x", BUFFER, "--y", "cubic.share"])
    assert r.exit_code == 0, r.output
    assert (d / "plots" / "by_buffer-cubic.share.png").is_file()
    assert [p.name for p in plot_sweep_metrics(d, tmp_path / "o", x="buffer")] == ["by_buffer.png"]  # short name
    for args, text in (
        (["--x", "rtt"], "--x rtt: not an axis of this sweep"),
        (["--x", BUFFER, "--y", "cubic.shar"], "did you mean 'cubic.share'"),
        (["--x", BUFFER, "--hue", BUFFER], "a different axis"),
    ):
        r = CliRunner().invoke(cli, ["plot", str(d), *args])
        assert r.exit_code == 2 and text in r.output and "Traceback" not in r.output, r.output
    with pytest.raises(UserError, match="give one sweep directory"):
        CliRunner().invoke(cli, ["plot", str(d), str(d), "--x", BUFFER], catch_exceptions=False, standalone_mode=False)


def test_plot_sweep_draws_time_series_only_on_request(tmp_path: Path, core) -> None:
    f = write_scenario(tmp_path, TWO_FLOWS.replace('"1s"', '"0.3s"'))
    out = tmp_path / "sw"
    args = ["sweep", str(f), "--grid", "buffer=1bdp,2bdp", "--seeds", "2", "-j", "1", "--no-plots", "--out", str(out)]
    assert CliRunner().invoke(cli, args).exit_code == 0
    # Seeds of one point are one group (averaged in the scatter, one legend entry), named by the point.
    refs = find_runs([out])
    assert len(refs) == 4 and len({r.group for r in refs}) == 2
    assert sorted({r.label for r in refs}) == ["buffer=1bdp", "buffer=2bdp"]
    r = CliRunner().invoke(cli, ["plot", str(out)])
    assert r.exit_code == 0, r.output
    names = {p.name for p in (out / "plots").iterdir()}
    assert "by_buffer.png" in names and "throughput_delay.png" in names and "goodput.png" not in names
    r = CliRunner().invoke(cli, ["plot", str(out), "--timeseries", "--out", str(tmp_path / "ts")])
    assert r.exit_code == 0 and (tmp_path / "ts" / "goodput.png").is_file(), r.output


# ------------------------------------------------------------------ one grid language


def test_short_names_are_aliases_in_grid_and_sweep_table(tmp_path: Path) -> None:
    assert resolve_axis("buffer") == BUFFER and resolve_axis(BUFFER) == BUFFER
    f = write_scenario(tmp_path, TWO_FLOWS)
    plan = plan_sweep(f, grid=["buffer=1bdp,2bdp", "cc=reno,cubic"])
    assert [a.path for a in plan.axes] == [BUFFER, ALIASES["cc"]]
    run = plan.runs[-1]  # cc=cubic sets every flow's algorithm
    assert [fl.cc for fl in run.scenario.flows] == ["cubic", "cubic"]
    assert (
        run.scenario.topology.bottleneck.buffer
        == plan_sweep(f, grid=[f"{BUFFER}=2bdp"]).runs[0].scenario.topology.bottleneck.buffer
    )
    table = TWO_FLOWS + '\n[sweep]\ngrid = { loss = ["0%", "1%"] }\n'
    plan = plan_sweep(write_scenario(tmp_path, table, name="t.toml"))
    assert [a.path for a in plan.axes] == ["topology.bottleneck.loss"]
    # A --grid alias replaces the table's axis of the same path.
    assert plan_sweep(write_scenario(tmp_path, table, name="t.toml"), grid=["topology.bottleneck.loss=2%"]).points == 1


def test_compare_grid_takes_full_paths_and_cc_and_head_to_head_shares_one_run(tmp_path: Path) -> None:
    from bbrlab.sweep.compare_args import compare_grid as _compare_grid
    from bbrlab.sweep.compare_args import head_to_head as _head_to_head

    assert _compare_grid((f"{BUFFER}=1bdp,2bdp", "rtt=10ms", "cc=bbr3,cubic")) == (
        ["buffer=1bdp,2bdp", "rtt=10ms"],
        ["bbr3", "cubic"],
    )
    with pytest.raises(UserError, match="compare's axes are rate"):
        _compare_grid(("duration=1s,2s",))
    f = write_scenario(tmp_path, ONE_FLOW)
    assert _head_to_head(str(f), (), ("bbr3", "cubic")) == ["flows.0.cc=bbr3", "flows+=cc=cubic"]
    r = CliRunner().invoke(cli, ["compare", str(f), "--sim-only", "--head-to-head", "--cc", "bbr3"])
    assert r.exit_code == 2 and "at least two algorithms" in r.output


# ------------------------------------------------------------------ no silent new flow


def test_set_past_the_last_flow_is_an_error_naming_add_flow(tmp_path: Path) -> None:
    f = write_scenario(tmp_path, ONE_FLOW)
    r = CliRunner().invoke(cli, ["validate", str(f), "--set", "flows.1.cc=cubic"])
    assert r.exit_code == 2 and "index 1 is past the end" in r.output and "--add-flow cc=cubic,start=5s" in r.output
    r = CliRunner().invoke(cli, ["validate", str(f), "--add-flow", "cc=reno,start=0.5s", "--set", "flows.1.pacing=on"])
    assert r.exit_code == 0, r.output
    assert r.stdout.count("[[flows]]") == 2 and 'cc = "reno"' in r.stdout


def test_labels_keep_the_flow_index_so_two_experiments_differ() -> None:
    a, b = short_overrides(["flows.0.cc=cubic"]), short_overrides(["flows.1.cc=cubic"])
    assert a != b and a == ["flows.0.cc=cubic"]
    assert short_overrides(["topology.bottleneck.loss=1%", "flows.0.cc=bbr"]) == ["loss=1%", "flows.0.cc=bbr"]
    assert short_overrides(["flows+=cc=cubic", "flows+=cc=reno"]) == ["flows+=cc=cubic", "flows+=cc=reno"]


def test_dir_lists_the_public_api_without_importing_it() -> None:
    import subprocess
    import sys

    code = (
        "import sys, bbrlab; names = dir(bbrlab); "
        "print(all(n in names for n in bbrlab.__all__), 'pandas' in sys.modules or 'pydantic' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["True", "False"]


def test_compare_axes_are_the_alias_tables_paths():
    """compare keeps its own copy of the four path axes (an import of sweep/aliases.py would
    close a cycle): it must name the same paths as the one alias table."""
    from bbrlab.emu.compare import AXES
    from bbrlab.sweep.aliases import ALIASES

    assert all(ALIASES[k] == v for k, v in AXES.items())
