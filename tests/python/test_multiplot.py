"""`bbrlab plot`: figures across runs and sweeps, checked against the runs' own tables and physics."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import plotruns
import pytest
from bbrlab.cli import cli
from bbrlab.errors import UserError
from bbrlab.plots.figures import new_figure
from bbrlab.runs.multiplot import (
    MAX_LINES,
    _draw,
    _Line,
    _rtt_samples,
    cdf,
    fig_cdf,
    fig_pause,
    fig_throughput_delay,
    jain_over_time,
    legend,
    load_runs,
    main_queue,
    plot_runs,
    queue_delay_ms,
    throughput_delay_points,
)
from bbrlab.runs.runset import find_runs
from click.testing import CliRunner


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("plot-runs")
    return {
        "mixed": plotruns.bbr_vs_cubic(root / "mixed", []),
        "cubic": plotruns.bbr_vs_cubic(root / "cubic", ["flows.0.cc=cubic"]),
        "incast": plotruns.incast(root / "incast"),
        "query": plotruns.query(root / "query"),
        "sweep": plotruns.sweep(root / "sweep"),
    }


def _per_algorithm_goodput(run_dir: Path) -> dict[str, float]:
    """Each algorithm's goodput in a run, summed over its flows, from flows.parquet."""
    flows = pd.read_parquet(run_dir / "flows.parquet")
    flows = flows[flows["spec"] != -1]
    return {str(k): float(v) for k, v in flows.groupby(flows["cc"].astype(str))["goodput_bps"].sum().items()}


def test_plot_writes_every_figure_and_one_scatter_point_per_run_per_algorithm(runs, tmp_path):
    files = plot_runs([runs["mixed"], runs["cubic"], runs["incast"], runs["query"], runs["sweep"]], tmp_path / "out")
    names = {f.name for f in files}
    assert {
        "goodput.png",
        "cwnd.png",
        "rtt.png",
        "queue_delay.png",
        "jain.png",
        "pause.png",
        "throughput_delay.png",
        "cdf_rtt.png",
        "cdf_fct.png",
        "cdf_query.png",
        "throughput_delay.csv",
    } <= names
    for f in files:
        assert f.stat().st_size > 1000, f
    pts = pd.read_csv(tmp_path / "out" / "throughput_delay.csv")
    # mixed: bbr1 + cubic; cubic: cubic; incast: cubic; query: cubic (the app's dctcp transfers are
    # not configured flows); sweep: 2 points × (bbr1, cubic), seeds averaged.
    assert len(pts) == 2 + 1 + 1 + 1 + 2 * 2
    sweep_rows = pts[pts["seeds"] == 2]
    assert len(sweep_rows) == 4 and set(pts["seeds"]) == {1, 2}
    # The sweep's markers are the mean over the seeds' run directories (read here from flows.parquet).
    points = pd.read_parquet(runs["sweep"] / "points.parquet")
    for _point, rows in points.groupby("point"):
        per_seed = [_per_algorithm_goodput(runs["sweep"] / d) for d in rows["run_dir"]]
        label = next(lbl for lbl in sweep_rows["label"] if rows["topology.bottleneck.buffer"].iloc[0] in lbl)
        for cc in ("bbr1", "cubic"):
            got = sweep_rows[(sweep_rows["label"] == label) & (sweep_rows["cc"] == cc)].iloc[0]
            values = [g[cc] for g in per_seed]
            assert got["throughput_bps"] == pytest.approx(np.mean(values))
            assert got["throughput_min_bps"] == pytest.approx(min(values))
            assert got["throughput_max_bps"] == pytest.approx(max(values))
    assert len(set(sweep_rows["throughput_min_bps"] - sweep_rows["throughput_max_bps"])) > 1  # seeds differ


def test_scatter_figure_has_a_marker_per_point_and_pantheons_inverted_delay_axis(runs):
    refs = find_runs([runs["mixed"], runs["cubic"], runs["sweep"]])
    points = throughput_delay_points(refs)
    fig = fig_throughput_delay(points)
    ax = fig.axes[0]
    markers = sum(len(line.get_xdata()) for line in ax.lines if line.get_marker() == "o")  # not the bars' caps
    assert markers == len(points) == 3 + 4
    left, right = ax.get_xlim()
    assert left > right, "delay axis not inverted (Pantheon: lower delay to the right)"
    assert sorted(t.get_text() for t in ax.get_legend().get_texts()) == ["bbr1", "cubic"]


def test_cdf_is_monotone_and_ends_at_one(runs):
    x, y = cdf([3.0, np.nan, 1.0, 2.0, np.inf])
    assert list(x) == [1.0, 2.0, 3.0] and list(y) == pytest.approx([1 / 3, 2 / 3, 1.0])
    loaded = load_runs(find_runs([runs["mixed"], runs["sweep"]]))
    fig = fig_cdf(loaded, "RTT samples", "RTT (ms)", _rtt_samples)
    lines = fig.axes[0].lines
    assert len(lines) >= 2
    for line in lines:
        xs, ys = np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)
        assert np.all(np.diff(xs) >= 0) and np.all(np.diff(ys) >= 0)
        assert ys[0] == 0 and ys[-1] == pytest.approx(1.0)
        assert xs[0] >= 40.0 - 0.5  # no RTT below the 40 ms base RTT


def test_queue_delay_is_the_rtt_above_base(tmp_path):
    """A CUBIC flow fills a 2-BDP buffer: the converted queueing delay reaches, and never exceeds,
    the buffer's drain time, and tracks the RTT measured above the base RTT."""
    d = plotruns.quick(tmp_path / "q", ["duration=2s", "flows.0.cc=cubic", "topology.bottleneck.buffer=2bdp"])
    [run] = load_runs(find_runs([d]))
    facts = run.ref.summary["scenario"]
    q = main_queue(run.result.queue)
    delay = queue_delay_ms(q["mean_occupancy_bytes"], facts["bottleneck_rate_bps"])
    drain_ms = facts["buffer_bytes"] * 8 / facts["bottleneck_rate_bps"] * 1e3  # 80 ms
    assert 0.9 * drain_ms < delay.max() <= drain_ms
    excess = run.result.timeseries["rtt_ms"].to_numpy() - facts["rtt_ms"]
    assert np.median(np.abs(excess - delay)) < 5.0


def test_jain_counts_only_running_flows(runs):
    """CUBIC joins at 0.3 s: before, one flow runs and the index is exactly 1, not the 0.5 that
    counting the idle flow would give; after, both count."""
    [run] = load_runs(find_runs([runs["mixed"]]))
    t, jain = jain_over_time(run)
    assert np.all(jain[t <= 0.3 + 1e-9] == 1.0)
    late = jain[t > 0.45]
    assert late.size and np.all((late >= 0.5) & (late <= 1.0)) and np.any(late < 0.999)


def test_pause_curve_is_the_bottleneck_ports_frames(runs):
    assert fig_pause(load_runs(find_runs([runs["mixed"]]))) is None  # no lossless run, no PAUSE figure
    [run] = load_runs(find_runs([runs["incast"]]))
    assert fig_pause([run]) is not None
    q = main_queue(run.result.queue)
    frames = q["pause_frames"].to_numpy()
    assert np.all(np.diff(frames) >= 0) and frames[-1] == run.ref.summary["run"]["pause_frames"] > 0


def test_legend_stays_readable_with_many_lines():
    def legend_entries(n: int) -> int:
        fig = new_figure((4, 3))
        ax = fig.subplots()
        lines = [_Line(f"run {i}", "bbr1" if i % 2 else "cubic", np.arange(3.0), np.arange(3.0)) for i in range(n)]
        _draw(ax, lines)
        legend(ax)
        return sum(len(lg.get_texts()) for lg in [ax.get_legend(), *fig.legends] if lg is not None)

    assert legend_entries(5) == 5
    assert legend_entries(MAX_LINES + 8) == 2  # coloured by algorithm, one entry each


def test_labels_name_runs_by_overrides_and_tell_duplicates_apart(runs, tmp_path):
    a = plotruns.quick(tmp_path / "a", ["duration=0.5s"], record_overrides=False)
    b = plotruns.quick(tmp_path / "b", ["duration=0.5s"], record_overrides=False)
    labels = [r.label for r in find_runs([a, b, runs["cubic"]])]
    assert labels[0] != labels[1] and "[a]" in labels[0] and "[b]" in labels[1]
    assert "flows.0.cc=cubic" in labels[2]
    assert [r.label for r in find_runs([a, b], {"a": "baseline"})][0] == "baseline"
    sweep = find_runs([runs["sweep"]])
    assert len(sweep) == 4 and len({r.group for r in sweep}) == 2 and len({r.label for r in sweep}) == 2
    with pytest.raises(UserError, match="--label"):
        find_runs([a], {"nope": "x"})


def test_cli_plot(runs, tmp_path):
    res = CliRunner().invoke(cli, ["plot", str(runs["sweep"])])
    assert res.exit_code == 0, res.output
    assert (runs["sweep"] / "plots" / "throughput_delay.png").is_file()  # a sweep's default --out
    for args, text in (
        (["plot", str(tmp_path / "missing")], "no such run"),
        (["plot", str(tmp_path)], "no complete run"),
        (["plot", str(runs["mixed"]), "--label", "x"], "PATH=TEXT"),
    ):
        res = CliRunner().invoke(cli, args)
        assert res.exit_code == 2 and "Traceback" not in res.output and text in res.output, res.output


def test_damaged_run_in_a_directory_is_left_out_with_a_warning(runs, tmp_path):
    import shutil

    root = tmp_path / "many"
    shutil.copytree(runs["mixed"], root / "good")
    shutil.copytree(runs["cubic"], root / "bad")
    (root / "bad" / "summary.json").write_text("{not json")
    warned: list[str] = []
    refs = find_runs([root], warn=warned.append)
    assert [r.path.name for r in refs] == ["good"] and "bad" in warned[0]
    assert json.loads((root / "good" / "summary.json").read_text())["name"] == refs[0].summary["name"]
