"""The scenario model: defaults, write-back, resolve(), --set overrides."""

from __future__ import annotations

from pathlib import Path

import pytest
import tomllib
from bbrlab import ScenarioError, load_scenario, parse_scenario
from bbrlab.scenario import apply_overrides
from bbrlab.scenario.overrides import add_flow_override
from scenario_files import write_scenario

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

MINIMAL = """
duration = "10s"
[topology]
bottleneck = { rate = "100Mbps", rtt = "40ms" }
[[flows]]
cc = "bbr"
"""


def test_defaults_are_filled(tmp_path: Path) -> None:
    s = load_scenario(write_scenario(tmp_path, MINIMAL, "my-test.toml"))
    assert s.name == "my-test"  # from the file name when absent
    assert s.seed == 1
    assert s.sample_interval == 100_000_000
    b = s.topology.bottleneck
    assert (b.loss, b.ack_loss, b.ecn_threshold) == (0.0, 0.0, None)
    assert str(b.buffer) == "1bdp"
    assert s.topology.access_rate == 10 * 100_000_000
    f = s.flows[0]
    assert (f.start, f.stop, f.count, f.mss, f.initial_cwnd, f.pacing) == (0, None, 1, 1448, 10, "auto")
    assert (f.ecn, f.tso, f.delayed_ack, f.min_rto) == ("off", True, True, 200_000_000)


def test_defaults_written_back_in_human_units(tmp_path: Path) -> None:
    s = load_scenario(write_scenario(tmp_path, MINIMAL))
    text = s.to_toml(header="resolved")
    assert text.startswith("# resolved\n")
    back = tomllib.loads(text)
    assert back["duration"] == "10s"
    assert back["sample_interval"] == "100ms"
    assert back["seed"] == 1
    assert back["topology"]["kind"] == "dumbbell"
    assert back["topology"]["access_rate"] == "1Gbps"
    assert back["topology"]["bottleneck"] == {
        "rate": "100Mbps",
        "rtt": "40ms",
        "buffer": "1bdp",
        "loss": "0%",
        "ack_loss": "0%",
        "qdisc": {"kind": "droptail"},
    }
    flow = back["flows"][0]
    assert flow["cc"] == "bbr"  # stored as written; the alias is resolved for the core only
    assert flow["min_rto"] == "200ms" and flow["start"] == "0s" and flow["mss"] == "1448B"
    # The written-back file is itself a valid scenario that resolves to the same core config.
    again = load_scenario(write_scenario(tmp_path, text, "again.toml"))
    assert again.resolve() == s.resolve()


def test_resolve_matches_the_core_contract(tmp_path: Path) -> None:
    s = load_scenario(
        write_scenario(tmp_path, MINIMAL),
        overrides=[
            "topology.bottleneck.loss=1.5%",
            "flows.0.count=3",
            "flows+=cc=cubic,start=2s,pacing=on,bytes=10MB",
            "topology.bottleneck.ecn_threshold=30KB",
        ],
    )
    c = s.resolve()
    assert c["seed"] == 1 and c["duration_ns"] == 10**10 and c["sample_interval_ns"] == 10**8
    b = c["topology"]["bottleneck"]
    assert b == {
        "rate_bps": 100_000_000,
        "rtt_ns": 40_000_000,
        "buffer": {"bdp": 1.0},
        "loss": 0.015,
        "ack_loss": 0.0,
        "ecn_threshold_bytes": 30_000,
        "ecn_threshold_packets": None,
        "red": None,
        "qdisc": {"kind": "droptail"},  # none named: the drop-tail FIFO
    }
    assert c["topology"]["access_rate_bps"] == 1_000_000_000  # a default that depends on the rate
    assert s.derived()["buffer_bytes"] == 500_000 and s.derived()["flow_count"] == 4
    # One entry per [[flows]] table (the core expands count), algorithms by their canonical name.
    assert [(f["cc"], f["count"]) for f in c["flows"]] == [("bbr1", 3), ("cubic", 1)]
    f0, f1 = c["flows"]
    assert set(f0) == {
        "cc",
        "count",
        "start_ns",
        "stop_ns",
        "bytes",
        "extra_rtt_ns",
        "mss_bytes",
        "initial_cwnd_segs",
        "transport",
        "pacing",
        "max_pacing_rate_bps",
        "sndbuf_bytes",
        "rcvbuf_bytes",
        "ecn",
        "tso",
        "tso_defer",
        "min_rto_ns",
        "delayed_ack",
        "tso_minrtt_autosize",
        "fast_path",
        "receiver_window",
        "gap_histogram",
        "pcap",
        "trace",
        "drop_segments",
        "faster_acks",
        "app_read_delay_ns",
        "rpc",
        "sender",
        "app",
    }
    assert f0["pacing"] == "auto" and f1["pacing"] == "on"
    assert f1["start_ns"] == 2 * 10**9 and f1["bytes"] == 10_000_000
    assert s.expanded_flows()[3][0] == 1
    # The core denies unknown fields: the resolved dict must be exactly what it accepts.
    import json

    from bbrlab import _core

    _core.Simulation(json.dumps(c))


def test_buffer_in_packets_and_bytes(tmp_path: Path) -> None:
    p = write_scenario(tmp_path, MINIMAL)

    def limits(buffer: str) -> tuple[int | None, int | None]:
        return load_scenario(p, [f"topology.bottleneck.buffer={buffer}"]).buffer_limits()

    assert limits("100pkts") == (None, 100)
    assert limits("0.5bdp") == (250_000, None)
    assert limits("4MiB") == (4 * 2**20, None)


def test_set_overrides_types(tmp_path: Path) -> None:
    p = write_scenario(tmp_path, MINIMAL)
    s = load_scenario(
        p,
        [
            "duration=30s",
            "seed=7",
            "flows.0.cc=cubic",
            "flows.0.ecn=true",
            "flows.0.mss=8948",
            "topology.bottleneck.loss=0.01",
            "name=other",
            "flows.0.pacing=false",
        ],
    )
    assert s.duration == 30 * 10**9 and s.seed == 7 and s.name == "other"
    f = s.flows[0]
    assert (f.cc, f.ecn, f.mss, f.pacing) == ("cubic", True, 8948, "off")
    assert s.topology.bottleneck.loss == 0.01


def test_set_past_the_last_flow_is_refused_and_names_add_flow(tmp_path: Path) -> None:
    # A typo in a flow index used to add a flow: a different experiment, labelled like the intended one.
    f = write_scenario(tmp_path, MINIMAL)
    with pytest.raises(ScenarioError, match=r"flows has 1 entry \(flows.0\); index 1 is past the end.*--add-flow"):
        load_scenario(f, ["flows.1.cc=reno"])


def test_add_flow_appends_one_flow_per_use(tmp_path: Path) -> None:
    s = load_scenario(
        write_scenario(tmp_path, MINIMAL),
        [add_flow_override("cc=reno,start=1s"), add_flow_override("cc=cubic"), "flows.1.pacing=on"],
    )
    assert [(f.cc, f.start) for f in s.flows] == [("bbr", 0), ("reno", 10**9), ("cubic", 0)]
    assert s.flows[1].pacing == "on"
    for bad, text in (("cc", "expected KEY=VALUE"), ("nope=1", "unknown key 'nope'"), ("", "expected KEY=VALUE")):
        with pytest.raises(ScenarioError, match=text):
            load_scenario(write_scenario(tmp_path, MINIMAL), [add_flow_override(bad)])


def test_set_reaches_the_fields_of_a_tagged_entrys_own_kind() -> None:
    # [[apps]] holds query apps and workloads: --set apps.N.KEY resolves KEY against entry N's
    # kind (it used to take the first kind's fields and refuse a workload's `cc`).
    raw = {"apps": [{"kind": "query", "workers": 2}, {"kind": "workload", "cdf": "websearch", "load": 0.3}]}
    out = apply_overrides(raw, ["apps.1.cc=cubic", "apps.0.workers=3"])
    assert out["apps"][1]["cc"] == "cubic" and out["apps"][0]["workers"] == 3
    with pytest.raises(ScenarioError, match=r"unknown key 'workers' in \[apps.1\]"):
        apply_overrides(raw, ["apps.1.workers=3"])
    with pytest.raises(ScenarioError, match=r"unknown key 'cc' in \[apps.0\]"):
        apply_overrides(raw, ["apps.0.cc=cubic"])


def test_set_does_not_mutate_its_input() -> None:
    raw = tomllib.loads(MINIMAL)
    apply_overrides(raw, ["flows.0.cc=cubic"])
    assert raw["flows"][0]["cc"] == "bbr"


@pytest.mark.parametrize(
    ("override", "expected"),
    [
        ("durration=1s", "--set durration: unknown key 'durration' at the top level; did you mean 'duration'?"),
        ("topology.bottleneck.bufer=1bdp", "did you mean 'buffer'?"),
        ("flows.7.cc=reno", "--set flows.7.cc: flows has 1 entry (flows.0); index 7 is past the end"),
        ("flows.x.cc=reno", "--set flows.x.cc: 'x' is not an index"),
        ("duration.s=1", "--set duration.s: 'duration' is a value"),
        ("flows.0=reno", "--set flows.0: cannot replace a whole flow"),
        ("duration", "--set duration: expected path=value"),
        ("=5", "--set (empty): not a field path"),
        ("duration=", "--set duration: has no value"),
        ("flows.0.cc=vegas", 'flows.0.cc (from --set): unknown algorithm "vegas"'),
        ("topology.bottleneck.rate=fast", 'topology.bottleneck.rate (from --set): "fast" is not a rate'),
    ],
)
def test_bad_set(tmp_path: Path, override: str, expected: str) -> None:
    with pytest.raises(ScenarioError) as info:
        load_scenario(write_scenario(tmp_path, MINIMAL), [override])
    assert expected in str(info.value)


def test_examples_are_valid() -> None:
    for path in sorted(EXAMPLES.glob("*.toml")):
        s = load_scenario(path)
        assert s.flow_count >= 1 or s.apps, path  # a workload-only example runs its apps' flows
    s = load_scenario(EXAMPLES / "bbr-vs-cubic.toml")
    assert [f.cc for f in s.flows] == ["bbr1", "cubic"] and s.flows[1].start == 5 * 10**9
    assert s.bdp_bytes == 500_000 and s.duration == 60 * 10**9
    wan = load_scenario(EXAMPLES / "wan-loss.toml", ["flows.0.cc=bbr"])
    assert wan.topology.bottleneck.loss == 0.015 and wan.topology.bottleneck.rtt == 140_000_000
    assert load_scenario(EXAMPLES / "quick.toml").duration == 10 * 10**9


def test_parse_scenario_from_dict() -> None:
    raw = tomllib.loads(MINIMAL)
    s = parse_scenario(raw, default_name="from-dict")
    assert s.name == "from-dict"


def test_scenario_error_survives_a_worker_process() -> None:
    # Studies run scenarios in a process pool. They validate their scenarios when they build them,
    # so a user's error is raised before any worker starts; one the simulator raises inside a
    # worker must still come back as the same one-line ScenarioError, not as BrokenProcessPool.
    from bbrlab.errors import ScenarioError
    from bbrlab.reproduce.pool import run_scenarios
    from bbrlab.reproduce.scenarios import StudyRun

    raw = tomllib.loads(MINIMAL)
    raw["duration"] = "1s"
    good = parse_scenario(raw)
    # An algorithm name past validation (model_copy does not validate): only the core can reject it.
    bad = good.model_copy(update={"flows": [good.flows[0].model_copy(update={"cc": "bbrr"})]})
    with pytest.raises(ScenarioError, match=r'^flows\.0\.cc: "bbrr" is not one of reno, '):
        run_scenarios([StudyRun(good), StudyRun(bad)], jobs=2)
