"""The nsperf study: its full plan holds nsperf's parameters exactly (the buffers in packets as
run_tests.sh computes them, restated in shared/reference/bbr-test-suites.md), its runs are built
as nsperf starts its flows, and the tiny study writes every figure and table."""

from __future__ import annotations

import pandas as pd
import pytest
from bbrlab.reproduce import Size
from bbrlab.reproduce.nsperf.experiments import runs_of
from bbrlab.reproduce.nsperf.plan import FULL, KERNEL_PLAN, PLANS, buffer_packets


@pytest.mark.parametrize(
    ("name", "packets"),
    [
        ("coexist", [12, 123, 247, 495, 990, 1981]),
        ("bufferbloat", [123, 1238, 6192, 12384]),
    ],
)
def test_swept_buffers_are_nsperfs_packet_counts(name: str, packets: list[int]) -> None:
    sc = next(s for s in FULL.scenarios() if s.name == name)
    assert [buffer_packets(sc.rate_bps, sc.rtt_s, x) for x in sc.sweep] == packets


def test_fixed_buffers_and_sweeps() -> None:
    assert buffer_packets(FULL.random_loss.rate_bps, FULL.random_loss.rtt_s, 1) == 8256
    assert buffer_packets(FULL.shallow.rate_bps, FULL.shallow.rtt_s, FULL.shallow.buffer_bdp) == 165
    assert (
        FULL.random_loss.sweep[0] == 0.00001 and FULL.random_loss.sweep[-1] == 20 and len(FULL.random_loss.sweep) == 13
    )
    assert FULL.shallow.sweep == (1, 10, 30, 60, 100) and FULL.ecn_bulk.sweep == (1, 4, 10, 40, 100)
    assert (FULL.random_loss.reps, FULL.ecn_bulk.reps) == (10, 10)
    assert [s.duration_s for s in FULL.scenarios()] == [180, 60, 300, 120, 10]


def test_coexist_runs_cubic_then_bbr_two_seconds_later() -> None:
    runs = runs_of(FULL.coexist)
    assert len(runs) == len(FULL.coexist.ccs) * 6
    sc = runs[0].scenario
    assert [f.cc for f in sc.flows] == ["cubic", FULL.coexist.ccs[0]]
    assert [f.start for f in sc.flows] == [0, 2_000_000_000]
    assert [f.stop for f in sc.flows] == [180_000_000_000, 182_000_000_000]
    assert sc.duration == 182_000_000_000
    assert sc.derived()["buffer_packets"] == 12


def test_ecn_bulk_marks_with_codel_and_ecn_flows() -> None:
    sc = runs_of(PLANS[Size.TINY].ecn_bulk)[0].scenario
    q = sc.topology.bottleneck.qdisc
    assert q.kind == "codel" and q.ce_threshold == 242_000 and q.target == 100_000_000 and q.ecn
    assert all(f.ecn for f in sc.flows)
    assert [f.start for f in sc.flows] == [i * 5_000_000 for i in range(len(sc.flows))]


def test_kernel_plan_keeps_nsperfs_rates() -> None:
    assert [s.rate_bps for s in KERNEL_PLAN.scenarios()] == [s.rate_bps for s in FULL.scenarios()]
    assert "bbr3_linux" in KERNEL_PLAN.shallow.ccs and KERNEL_PLAN.reduced


def test_tiny_study_draws_every_figure(tiny_study) -> None:
    d = tiny_study("nsperf")
    points = pd.read_csv(d / "points.csv")
    assert set(points["scenario"]) == {"coexist", "random_loss", "shallow", "bufferbloat", "ecn_bulk"}
    for f in ("coexist", "random_loss", "shallow", "bufferbloat", "ecn_bulk_rtt", "ecn_bulk_retrans"):
        assert (d / f"{f}.png").stat().st_size > 1000
    # A throughput is the link's at most (goodput over the run, not each flow's own span summed).
    tiny = PLANS[Size.TINY]
    rate = {s.name: s.rate_bps for s in tiny.scenarios()}
    assert (points["throughput_bps"] <= points["scenario"].map(rate)).all()
    assert (points["p50_srtt_ms"] > 0).all()


def test_only_a_study_with_a_kernel_plan_runs_on_the_kernel(tmp_path) -> None:
    from bbrlab.errors import UserError
    from bbrlab.reproduce import run_studies

    with pytest.raises(UserError, match="wan-loss has no kernel plan"):
        run_studies(["nsperf", "wan-loss"], tmp_path, size=Size.TINY, backend="emu")
    assert not any(tmp_path.iterdir())  # refused before anything ran


def test_senders_sit_on_host_speed_links_as_nsperfs_veths() -> None:
    """nsperf's senders are namespaces on unshaped veths: every run's access links are at host
    speed, in the range where coexist no longer depends on them (>= 10 Gbit/s)."""
    for sc in FULL.scenarios():
        for run in runs_of(sc)[:1]:
            assert run.scenario.topology.access_rate >= 10_000_000_000


def test_unpaced_bursts_at_host_speed_lose_more_at_a_full_drop_tail_queue() -> None:
    """Why the access rate matters in coexist: CUBIC (unpaced) sends its window in bursts; at 10x
    the bottleneck rate a burst reaches a full drop-tail queue spread out enough for some of it to
    be drained in between, at host speed it arrives at once and more of it is dropped. So CUBIC
    loses more, backs off more, and the paced BBR flow beside it gets more of the link."""
    from bbrlab import run
    from bbrlab.scenario import parse_scenario

    def coexist(access_rate: str) -> list[dict]:
        scn = parse_scenario(
            {
                "name": "coexist-access",
                "duration": "12s",
                "topology": {
                    "kind": "dumbbell",
                    "access_rate": access_rate,
                    "bottleneck": {"rate": "50Mbps", "rtt": "30ms", "buffer": "123pkts"},
                },
                "flows": [{"cc": "cubic"}, {"cc": "bbr3_linux", "start": "2s"}],
            }
        )
        return run(scn).summary["flows"]

    slow, fast = coexist("500Mbps"), coexist("17Gbps")
    assert fast[0]["retransmits"] > 1.5 * slow[0]["retransmits"]
    assert fast[1]["goodput_bps"] > slow[1]["goodput_bps"]
