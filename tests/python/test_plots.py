"""A run's plots show what the run measured: the figures' data checked against the tables and
against physics (a 1-BDP buffer drains in one base RTT; PAUSE frames sent = received), on tiny
runs of the real core."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import bbrlab
from bbrlab.plots import FIGURES, PlotData, goodput_figure, plot_all, plot_data, queue_figure

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _run(core, example: str, sets: list[str]) -> bbrlab.Result:  # type: ignore[no-untyped-def]
    return bbrlab.run(bbrlab.load_scenario(EXAMPLES / example, sets))


def _line(ax, label_part: str):  # type: ignore[no-untyped-def]
    found = [ln for ln in ax.get_lines() if label_part in str(ln.get_label())]
    assert len(found) == 1, [ln.get_label() for ln in ax.get_lines()]
    return found[0]


def _note(fig) -> str:  # type: ignore[no-untyped-def]
    return " ".join(t.get_text() for t in fig.texts)


# ------------------------------------------------------------------ queue as delay


def test_queue_is_shown_as_queueing_delay_of_its_drain_rate(core) -> None:  # type: ignore[no-untyped-def]
    scn = bbrlab.load_scenario(EXAMPLES / "quick.toml", ["duration=1s", "sample_interval=10ms"])
    r = bbrlab.run(scn)
    rate_bps = scn.topology.bottleneck.rate  # from the scenario, not from what the plot read
    fig = queue_figure(plot_data(r))
    top = fig.axes[0]
    assert "queueing delay (ms)" in top.get_ylabel()
    q = r.queue[r.queue["queue"] == "bottleneck"]
    mean_ms = _line(top, "time-weighted mean").get_ydata()
    np.testing.assert_allclose(mean_ms, q["mean_occupancy_bytes"].to_numpy() * 8 / rate_bps * 1e3)
    assert q["max_occupancy_bytes"].max() > 0  # the run did queue, so the check above has teeth
    # The buffer is 1 BDP (rate x base RTT): it drains in exactly one base RTT, 40 ms.
    assert _line(top, "buffer limit").get_ydata()[0] == pytest.approx(40.0)
    one_packet_ms = 1538 * 8 / rate_bps * 1e3
    assert _line(top, "max in interval").get_ydata().max() <= 40.0 + one_packet_ms
    # The bytes are still there, on the right-hand axis.
    assert any("KB" in ax.get_ylabel() for ax in fig.axes[0].child_axes)


# ------------------------------------------------------------------ many flows: sums vs capacity


def test_many_flows_goodput_sums_each_algorithm_against_the_link_rate(core) -> None:  # type: ignore[no-untyped-def]
    r = _run(core, "quick.toml", ["duration=1s", "sample_interval=50ms", "flows.0.cc=cubic", "flows.0.count=14"])
    fig = goodput_figure(plot_data(r))
    ax = fig.axes[0]
    line = _line(ax, "cubic")
    assert "sum of 14 flows" in line.get_label() and "mean" not in line.get_label()
    want = r.timeseries.groupby("t_s")["goodput_bps"].sum()
    np.testing.assert_allclose(line.get_xdata(), want.index.to_numpy())
    np.testing.assert_allclose(line.get_ydata(), want.to_numpy() / 1e6)
    # Physics: the per-interval sums average to the aggregate goodput of the whole run.
    assert np.mean(line.get_ydata()) * 1e6 == pytest.approx(r.summary["aggregate"]["goodput_bps"], rel=0.02)
    assert _line(ax, "link rate").get_ydata()[0] == pytest.approx(20.0)


def test_few_flows_are_drawn_one_line_each(core) -> None:  # type: ignore[no-untyped-def]
    r = _run(core, "bbr-vs-cubic.toml", ["duration=1s", "flows.1.start=0.2s"])
    labels = [ln.get_label() for ln in goodput_figure(plot_data(r)).axes[0].get_lines()]
    assert labels[:2] == ["flow 0 (bbr1)", "flow 1 (cubic)"]


# ------------------------------------------------------------------ goodput above the link rate


def test_points_above_the_link_rate_are_explained_in_the_figure(core) -> None:  # type: ignore[no-untyped-def]
    r = _run(core, "quick.toml", ["duration=1s", "sample_interval=10ms"])
    g = r.timeseries["goodput_bps"].to_numpy()
    above = int(np.sum(g > 20e6))
    assert above > 0  # BBR's start-up losses: bytes held behind a hole are released in one interval
    note = _note(goodput_figure(plot_data(r)))
    assert note.startswith(f"{above} of {len(g)} points lie above the link rate")
    # The same run with every point at or below the link rate: no note.
    d = plot_data(r)
    capped = PlotData(d.summary, {**d.timeseries, "goodput_bps": np.minimum(d.timeseries["goodput_bps"], 20e6)}, d.queue, d.flows)
    assert _note(goodput_figure(capped)) == ""


# ------------------------------------------------------------------ lossless fabric: PAUSE frames


def _incast(core, *extra: str) -> bbrlab.Result:  # type: ignore[no-untyped-def]
    return _run(core, "dc-incast.toml", ["duration=0.2s", "sample_interval=20ms", "topology.workers=4",
                                         "flows.0.count=4", *extra])


def test_lossless_fabric_shows_pause_frames_sent_and_received(core) -> None:  # type: ignore[no-untyped-def]
    r = _incast(core)
    assert int(r.queue["drops"].max()) == 0
    panel = queue_figure(plot_data(r)).axes[1]
    assert panel.get_ylabel() == "PAUSE frames / s"
    q = r.queue

    def frames(line) -> float:  # type: ignore[no-untyped-def]
        t = np.asarray(line.get_xdata(), dtype=float)
        return float(np.sum(np.asarray(line.get_ydata()) * np.diff(t, prepend=0.0)))

    sent = _line(panel, "tor_to_agg: sent")
    assert frames(sent) == pytest.approx(int(q[q["queue"] == "tor_to_agg"]["pause_frames"].max()))
    assert frames(sent) > 0
    received = [ln for ln in panel.get_lines() if "received" in str(ln.get_label())]
    assert len(received) == 4
    # Every PAUSE the switch port sends is received by one of the links that feed it.
    assert sum(frames(ln) for ln in received) == pytest.approx(frames(sent))


def test_a_lossy_fabric_shows_its_drops_instead(core) -> None:  # type: ignore[no-untyped-def]
    with pytest.warns(bbrlab.errors.ScenarioWarning, match="pfc is ignored"):  # the example has a pfc table
        r = _incast(core, "topology.lossless=false")
    panel = queue_figure(plot_data(r)).axes[1]
    assert panel.get_ylabel() == "packets"
    drops = _line(panel, "buffer drops")
    q = r.queue
    assert drops.get_ydata()[-1] == int(q[q["queue"] == "tor_to_agg"]["drops"].max()) > 0


# ------------------------------------------------------------------ the files


def test_plot_all_draws_the_same_from_a_result_and_from_its_plot_data(core, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    r = _run(core, "quick.toml", ["duration=1s"])
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    written = plot_all(r, tmp_path / "a")
    assert [p.name for p in written] == list(FIGURES)
    plot_all(plot_data(r), tmp_path / "b")
    for name in FIGURES:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
