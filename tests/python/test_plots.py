"""A run's plots show what the run measured: the figures' data checked against the tables and
against physics (a 1-BDP buffer drains in one base RTT; PAUSE frames sent = received), on tiny
runs of the real core."""

from __future__ import annotations

from pathlib import Path

import bbrlab
import numpy as np
import pytest
from bbrlab.plots.chart import Chart, Panel, Series
from bbrlab.plots.plots import FIGURES, PlotData, goodput_figure, plot_all, plot_all_forked, plot_data, queue_figure

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _run(core, example: str, sets: list[str]) -> bbrlab.Result:
    return bbrlab.run(bbrlab.load_scenario(EXAMPLES / example, sets))


def _line(panel: Panel, label_part: str) -> Series:
    found = [s for s in panel.series if label_part in str(s.label)]
    assert len(found) == 1, [s.label for s in panel.series]
    return found[0]


def _hline(panel: Panel, label_part: str) -> float:
    found = [h.y for h in panel.hlines if label_part in str(h.label)]
    assert len(found) == 1, [h.label for h in panel.hlines]
    return found[0]


def _note(chart: Chart) -> str:
    return chart.note or ""


# ------------------------------------------------------------------ queue as delay


def test_queue_is_shown_as_queueing_delay_of_its_drain_rate(core) -> None:
    scn = bbrlab.load_scenario(EXAMPLES / "quick.toml", ["duration=1s", "sample_interval=10ms"])
    r = bbrlab.run(scn)
    rate_bps = scn.topology.bottleneck.rate  # from the scenario, not from what the plot read
    fig = queue_figure(plot_data(r))
    top = fig.panels[0]
    assert "queueing delay (ms)" in top.ylabel
    q = r.queue[r.queue["queue"] == "bottleneck"]
    mean_ms = _line(top, "time-weighted mean").y
    np.testing.assert_allclose(mean_ms, q["mean_occupancy_bytes"].to_numpy() * 8 / rate_bps * 1e3)
    assert q["max_occupancy_bytes"].max() > 0  # the run did queue, so the check above has teeth
    # The buffer is 1 BDP (rate x base RTT): it drains in exactly one base RTT, 40 ms.
    assert _hline(top, "buffer limit") == pytest.approx(40.0)
    one_packet_ms = 1538 * 8 / rate_bps * 1e3
    assert _line(top, "max in interval").y.max() <= 40.0 + one_packet_ms
    # The bytes are still there, on the right-hand axis: KB per ms of queueing delay at the rate.
    assert top.right_axis is not None and "KB" in top.right_axis[0]
    assert top.right_axis[1] == pytest.approx(rate_bps / 8 / 1e3 / 1e3)


# ------------------------------------------------------------------ many flows: sums vs capacity


def test_many_flows_goodput_sums_each_algorithm_against_the_link_rate(core) -> None:
    r = _run(core, "quick.toml", ["duration=1s", "sample_interval=50ms", "flows.0.cc=cubic", "flows.0.count=14"])
    fig = goodput_figure(plot_data(r))
    ax = fig.panels[0]
    line = _line(ax, "cubic")
    assert "sum of 14 flows" in str(line.label) and "mean" not in str(line.label)
    want = r.timeseries.groupby("t_s")["goodput_bps"].sum()
    np.testing.assert_allclose(line.x, want.index.to_numpy())
    np.testing.assert_allclose(line.y, want.to_numpy() / 1e6)
    # Physics: the per-interval sums average to the aggregate goodput of the whole run.
    assert np.mean(line.y) * 1e6 == pytest.approx(r.summary["aggregate"]["goodput_bps"], rel=0.02)
    assert _hline(ax, "link rate") == pytest.approx(20.0)


def test_few_flows_are_drawn_one_line_each(core) -> None:
    r = _run(core, "bbr-vs-cubic.toml", ["duration=1s", "flows.1.start=0.2s"])
    labels = goodput_figure(plot_data(r)).panels[0].labels()
    assert labels[:2] == ["flow 0 (bbr1)", "flow 1 (cubic)"]


# ------------------------------------------------------------------ goodput above the link rate


def test_points_above_the_link_rate_are_explained_in_the_figure(core) -> None:
    r = _run(core, "quick.toml", ["duration=1s", "sample_interval=10ms"])
    g = r.timeseries["goodput_bps"].to_numpy()
    above = int(np.sum(g > 20e6))
    assert above > 0  # BBR's start-up losses: bytes held behind a hole are released in one interval
    note = _note(goodput_figure(plot_data(r)))
    assert note.startswith(f"{above} of {len(g)} points lie above the link rate")
    # The same run with every point at or below the link rate: no note.
    d = plot_data(r)
    capped = PlotData(
        d.summary, {**d.timeseries, "goodput_bps": np.minimum(d.timeseries["goodput_bps"], 20e6)}, d.queue, d.flows
    )
    assert _note(goodput_figure(capped)) == ""


# ------------------------------------------------------------------ lossless fabric: PAUSE frames


def _incast(core, *extra: str) -> bbrlab.Result:
    return _run(
        core,
        "dc-incast.toml",
        ["duration=0.2s", "sample_interval=20ms", "topology.workers=4", "flows.0.count=4", *extra],
    )


def test_lossless_fabric_shows_pause_frames_sent_and_received(core) -> None:
    r = _incast(core)
    assert int(r.queue["drops"].max()) == 0
    panel = queue_figure(plot_data(r)).panels[1]
    assert panel.ylabel == "PAUSE frames / s"
    q = r.queue

    def frames(line: Series) -> float:
        return float(np.sum(line.y * np.diff(line.x, prepend=0.0)))

    sent = _line(panel, "tor_to_agg: sent")
    assert frames(sent) == pytest.approx(int(q[q["queue"] == "tor_to_agg"]["pause_frames"].max()))
    assert frames(sent) > 0
    received = [s for s in panel.series if "received" in str(s.label)]
    assert len(received) == 4
    # Every PAUSE the switch port sends is received by one of the links that feed it, but those
    # still on the wire when the run ends: a link is microseconds long, so a frame or two each.
    in_flight = frames(sent) - sum(frames(ln) for ln in received)
    assert 0 <= round(in_flight) <= 2 * len(received), in_flight


def test_a_lossy_fabric_shows_its_drops_instead(core) -> None:
    with pytest.warns(bbrlab.errors.ScenarioWarning, match="pfc is ignored"):  # the example has a pfc table
        r = _incast(core, "topology.lossless=false")
    panel = queue_figure(plot_data(r)).panels[1]
    assert panel.ylabel == "packets"
    drops = _line(panel, "buffer drops")
    q = r.queue
    assert drops.y[-1] == int(q[q["queue"] == "tor_to_agg"]["drops"].max()) > 0


# ------------------------------------------------------------------ the files


def test_plot_all_draws_the_same_from_a_result_and_from_its_plot_data(core, tmp_path: Path) -> None:
    r = _run(core, "quick.toml", ["duration=1s"])
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    written = plot_all(r, tmp_path / "a")
    assert [p.name for p in written] == list(FIGURES)
    plot_all(plot_data(r), tmp_path / "b")
    for name in FIGURES:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name


# ------------------------------------------------------------------ drawing on two cores (the CLI's way)


def test_forked_drawing_writes_what_plot_all_writes(core, tmp_path: Path) -> None:
    r = _run(core, "quick.toml", ["duration=1s"])
    (tmp_path / "serial").mkdir()
    (tmp_path / "forked").mkdir()
    plot_all(r, tmp_path / "serial")
    children_before = _children()
    finish = plot_all_forked(r, tmp_path / "forked")
    finish()
    assert _children() == children_before  # the fork is reaped
    for name in FIGURES:
        assert (tmp_path / "serial" / name).read_bytes() == (tmp_path / "forked" / name).read_bytes(), name


def _children() -> set[int]:
    import os

    kids = Path(f"/proc/{os.getpid()}/task/{os.getpid()}/children")
    return {int(p) for p in kids.read_text().split()} if kids.exists() else set()


def test_a_failed_fork_costs_no_plot(core, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    r = _run(core, "quick.toml", ["duration=1s"])

    def crash(*a: object) -> None:  # runs in the fork only
        raise RuntimeError("the fork fails")

    monkeypatch.setattr("bbrlab.plots.plots._draw_forked", crash)
    plot_all_forked(r, tmp_path)()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(FIGURES)


def test_ctrl_c_while_the_fork_draws_kills_it(core, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import signal
    import time

    r = _run(core, "quick.toml", ["duration=1s"])
    monkeypatch.setattr("bbrlab.plots.plots._draw_forked", lambda *a: time.sleep(60))

    def interrupt(*a: object) -> None:
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGALRM, interrupt)
    try:
        finish = plot_all_forked(r, tmp_path)
        forks = _children()
        assert len(forks) == 1  # the fork is still sleeping
        signal.setitimer(signal.ITIMER_REAL, 0.3)  # Ctrl-C while finish() waits for it
        t0 = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            finish()
        assert time.monotonic() - t0 < 10
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    assert _children() == set()  # killed and reaped, not left to sleep out its minute
