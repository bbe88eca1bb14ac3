"""The star topology, lossless/PFC and query-app scenario fields: validation and resolution."""

from __future__ import annotations

import copy

import pytest
from bbrlab.errors import ScenarioError
from bbrlab.scenario import parse_scenario

BASE = {
    "duration": "2s",
    "topology": {
        "kind": "star",
        "workers": 21,
        "rate": "1Gbps",
        "delay": "10us",
        "lossless": True,
        "forwarding": "cut-through",
    },
    "flows": [{"cc": "cubic", "sender": 20}],
    "apps": [{"kind": "query", "workers": 20, "size": "1MiB", "repetitions": 5, "gap": "20ms", "flow": {"cc": "bbr"}}],
}


def _err(mutate=None, overrides=()):
    raw = copy.deepcopy(BASE)
    if mutate:
        mutate(raw)
    with pytest.raises(ScenarioError) as e:
        parse_scenario(raw, overrides=overrides)
    msg = str(e.value)
    assert "\n" not in msg, msg  # one line
    return msg


def test_star_resolves_to_the_core_config():
    cfg = parse_scenario(copy.deepcopy(BASE)).resolve()
    star = cfg["topology"]
    assert star["kind"] == "star"
    assert star["workers"] == 21 and star["rate_bps"] == 10**9 and star["delay_ns"] == 10_000
    assert star["aggregator_rate_bps"] == 10**9  # defaults to rate
    assert star["forwarding"] == "cut-through" and star["lossless"] is True
    # The defaults: the Waterloo DC study's thresholds, PAUSE triggered by the egress queue
    # (bbrlab's first model), headroom 0 = the per-port PAUSE round trip, NICs and switches that
    # obey PAUSE at once.
    assert star["pfc"] == {
        "xoff_bytes": 64_000,
        "xon_bytes": 32_000,
        "quanta": 65535,
        "accounting": "egress",
        "headroom_bytes": 0,
        "nic_honours_pause": True,
        "nic_pause_delay_ns": 0,
        "switches_honour_pause": True,
    }
    assert star["buffer_bytes"] is None  # lossless: unlimited
    app = cfg["apps"][0]
    assert app["size_bytes"] == 1 << 20 and app["workers"] == 20 and app["gap_ns"] == 20_000_000
    assert app["flow"]["cc"] == "bbr1"
    assert cfg["flows"][0]["sender"] == 20


def test_store_and_forward_default_buffer_and_toml_round_trip():
    raw = copy.deepcopy(BASE)
    raw["topology"].update(lossless=False, forwarding="store-and-forward")
    sc = parse_scenario(raw)
    assert sc.resolve()["topology"]["buffer_bytes"] == 128_000
    assert sc.resolve()["topology"]["lossless"] is False
    import tomllib

    again = parse_scenario(tomllib.loads(sc.to_toml()))
    assert again.resolve() == sc.resolve()


def test_set_turns_lossless_off_although_the_file_has_a_pfc_table():
    raw = copy.deepcopy(BASE)
    raw["topology"]["pfc"] = {"xoff": "64KB", "xon": "32KB"}
    from bbrlab.errors import ScenarioWarning

    with pytest.warns(ScenarioWarning, match="topology.pfc is ignored"):
        sc = parse_scenario(raw, overrides=["topology.lossless=false"])
    assert sc.resolve()["topology"]["lossless"] is False
    assert sc.resolve()["topology"]["buffer_bytes"] == 128_000  # a drop-tail port's default


def test_set_reaches_star_fields():
    sc = parse_scenario(copy.deepcopy(BASE), overrides=["topology.pfc.xoff=100KB", "apps.0.repetitions=7"])
    cfg = sc.resolve()
    assert cfg["topology"]["pfc"]["xoff_bytes"] == 100_000
    assert cfg["apps"][0]["repetitions"] == 7


@pytest.mark.parametrize(
    "mutate, field",
    [
        (lambda r: r["topology"].update(workers=0), "topology.workers"),
        (lambda r: r["topology"].update(wokers=3), "topology.wokers"),
        (lambda r: r["topology"].update(forwarding="fast"), "topology.forwarding"),
        (lambda r: r["topology"].update(kind="ring"), "topology.kind"),
        (lambda r: r["topology"].update(pfc={"xoff": "10KB", "xon": "20KB"}), "topology.pfc.xon"),
        (lambda r: r["topology"].update(pfc={"quanta": 70000}), "topology.pfc.quanta"),
        (lambda r: r["topology"].update(delay="10 parsecs"), "topology.delay"),
        (lambda r: r["apps"][0].update(workers=30), "apps.0.workers"),
        (lambda r: r["apps"][0].update(kind="bulk"), "apps.0.kind"),
        (lambda r: r["apps"][0].update(size="abc"), "apps.0.size"),
        (lambda r: r["apps"][0].update(repetitions=0), "apps.0.repetitions"),
        (lambda r: r["apps"][0]["flow"].update(cc="foo"), "apps.0.flow.cc"),
        (lambda r: r["apps"][0]["flow"].update(bytes="1MB"), "apps.0.flow.bytes"),
        (lambda r: r["flows"][0].update(sender=21), "flows.0.sender"),
        (lambda r: r["flows"][0].update(extra_rtt="1ms"), "flows.0.extra_rtt"),
        (lambda r: r.update(flows=[], apps=[]), "flows"),
        (lambda r: r["topology"].update(worker_racks=[1, 0]), "topology.worker_racks"),  # no hosts_per_rack
        (lambda r: r["topology"].update(worker_racks="x", hosts_per_rack=16), "topology.worker_racks"),
        (lambda r: r["topology"].update(worker_racks=[0], hosts_per_rack=16), "topology.worker_racks"),  # 22 in rack 0
        (lambda r: r["topology"].update(worker_racks=[1] * 10001, hosts_per_rack=32), "topology.worker_racks"),
        (
            lambda r: r["topology"].update(
                worker_racks=[1, 0], hosts_per_rack=16, pfc={"switches_honour_pause": False}
            ),
            "topology.buffer",
        ),
    ],
)
def test_bad_star_fields_name_the_field(mutate, field):
    msg = _err(mutate)
    assert msg.startswith(field + ":") or msg.startswith(field + " "), msg


def test_worker_racks_messages_say_what_to_write():
    msg = _err(lambda r: r["topology"].update(worker_racks="x", hosts_per_rack=16))
    assert "write the items in brackets, e.g. [1, 2, 3, 0]" in msg
    msg = _err(lambda r: r["topology"].update(worker_racks=[0], hosts_per_rack=16))
    assert "puts 22 hosts in rack 0 (the aggregator's, counting it), more than hosts_per_rack (16)" in msg
    ok = parse_scenario(
        {**copy.deepcopy(BASE), "topology": {**BASE["topology"], "hosts_per_rack": 16, "worker_racks": [1, 2, 3, 0]}}
    ).resolve()
    assert ok["topology"]["worker_racks"] == [1, 2, 3, 0]


def test_query_app_needs_a_star():
    raw = {
        "duration": "1s",
        "topology": {"kind": "dumbbell", "bottleneck": {"rate": "1Gbps", "rtt": "1ms"}},
        "apps": [{"kind": "query", "workers": 2, "flow": {"cc": "cubic"}}],
    }
    with pytest.raises(ScenarioError) as e:
        parse_scenario(raw)
    assert str(e.value).startswith("apps")


def test_star_run_has_events_pause_frames_and_no_drops():
    pytest.importorskip("bbrlab._core")
    from bbrlab.engine.runner import run

    raw = copy.deepcopy(BASE)
    raw["duration"] = "0.5s"
    raw["apps"][0]["repetitions"] = 3
    res = run(parse_scenario(raw))
    assert len(res.events) == 3
    assert (res.events["response_time_s"] > (1 << 20) * 8 / 1e9).all()
    assert res.summary["run"]["drops"] == 0
    assert res.summary["run"]["pause_frames"] > 0
    assert "pause_frames" in res.queue and "tor_to_agg" in set(res.queue["queue"].astype(str))
    assert res.summary["aggregate"]["queries"] == 3
    assert "query_response_s" in res.flows
