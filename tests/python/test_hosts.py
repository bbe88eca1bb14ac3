"""The host model through the Python front: the hosts table, summary.json's hosts, the studies' roll-up."""

from __future__ import annotations

import math

import pytest
from bbrlab import run
from bbrlab.reproduce.esnet_100g import Plan, host_model
from bbrlab.reproduce.pool import host_columns
from bbrlab.scenario import parse_scenario

MSS = 1448


def _scenario(hosts: dict | None, flows: int = 2, rate: str = "10Gbps"):
    raw = {
        "name": "hosts",
        "duration": "300ms",
        "topology": {"kind": "dumbbell", "bottleneck": {"rate": rate, "rtt": "1ms", "buffer": "2MB"}},
        "flows": [{"cc": "cubic", "count": flows}],
    }
    if hosts is not None:
        raw["hosts"] = hosts
    return parse_scenario(raw)


def test_without_hosts_there_is_no_hosts_table():
    r = run(_scenario(None))
    assert len(r.hosts) == 0 and "hosts" not in r.summary


def test_hosts_table_and_summary_agree_with_the_flows():
    r = run(_scenario({}))
    h = r.hosts
    # two flows, own sender hosts, one receiver: senders first
    assert list(h["host"].astype(str)) == ["sender0", "sender1", "receiver0"]
    assert list(h["is_sender"]) == [1, 1, 0]
    # the receiver's payload is what the flows delivered; the senders' what they sent (new data)
    recv = h[h["is_sender"] == 0].iloc[0]
    assert recv["payload_bytes"] == r.flows["delivered_bytes"].sum()
    sent = h[h["is_sender"] == 1]["payload_bytes"].sum()
    assert sent >= recv["payload_bytes"]
    # ACKs the receiver host sent are the flows' ACKs; per second of a 0.3 s run
    assert recv["acks_per_s"] == pytest.approx(r.flows["acks_sent"].sum() / 0.3)
    # GRO at 10 Gbit/s with 8 µs moderation merges segments: fewer ACKs than every other segment
    assert recv["gro_mean_segs"] > 2
    assert r.flows["acks_sent"].sum() < r.flows["data_packets_sent"].sum() / 2
    s = r.summary["hosts"]
    assert [x["host"] for x in s] == ["sender0", "sender1", "receiver0"]
    assert s[2]["cpu_util"] == pytest.approx(float(recv["cpu_util"]))


def test_a_bad_hosts_field_names_the_field():
    from bbrlab.errors import UserError

    with pytest.raises(UserError, match="hosts.cores"):
        _scenario({"cores": 0})
    with pytest.raises(UserError, match="hosts.irq_delay"):
        _scenario({"irq_delay": "fast"})


def test_host_columns_roll_up_by_role():
    hosts = [
        {
            "is_sender": 1,
            "payload_bytes": 2_000_000,
            "cpu_ns_per_mb": 100.0,
            "cpu_util": 0.2,
            "cpu_util_max_core": 0.5,
            "interrupts_per_s": 10.0,
            "data_packets_per_s": 300.0,
            "acks_per_s": 50.0,
            "timers_per_s": 1.0,
            "rx_ring_drops": 0,
            "chunk_mean_segs": 3.0,
            "gro_mean_segs": math.nan,
        },
        {
            "is_sender": 1,
            "payload_bytes": 1_000_000,
            "cpu_ns_per_mb": 400.0,
            "cpu_util": 0.4,
            "cpu_util_max_core": 0.9,
            "interrupts_per_s": 30.0,
            "data_packets_per_s": 100.0,
            "acks_per_s": 10.0,
            "timers_per_s": 2.0,
            "rx_ring_drops": 2,
            "chunk_mean_segs": 1.0,
            "gro_mean_segs": math.nan,
        },
    ]
    c = host_columns(hosts)
    # CPU per MB over the payload together: (100·2 + 400·1) / 3
    assert c["sender_cpu_ns_per_mb"] == pytest.approx(200.0)
    assert c["sender_cpu_util"] == pytest.approx(0.3) and c["sender_cpu_util_max_core"] == 0.9
    assert c["sender_interrupts_per_s"] == 40.0 and c["sender_rx_ring_drops"] == 2
    # segments per chunk over all chunks: 400 segments / (100 + 100) chunks
    assert c["sender_chunk_mean_segs"] == pytest.approx(2.0)
    assert not any(k.startswith("receiver_") for k in c)


def _as_ns(v: str) -> int:
    """A scenario time ("1234ns") in ns."""
    return int(v.removesuffix("ns"))


def _as_bps(v: str) -> int:
    """A scenario rate ("1234bps") in bit/s."""
    return int(v.removesuffix("bps"))


def test_scaled_esnet_hosts_are_slower_by_the_rate_scale():
    full, fifth = host_model(Plan()), host_model(Plan(rate_scale=0.2))
    assert _as_ns(fifth["irq_cost"]) == 5 * _as_ns(full["irq_cost"])
    assert _as_ns(fifth["irq_delay"]) == 5 * _as_ns(full["irq_delay"])
    assert _as_bps(fifth["rx_copy_rate"]) * 5 == pytest.approx(_as_bps(full["rx_copy_rate"]), abs=5)
    # and the scenario accepts them
    _scenario(fifth)


def test_esnet_hosts_receive_one_stream_at_esnets_figure():
    # A full poll of full GRO skbs: per segment the driver, a 45th of an skb, a 64th of an
    # interrupt and the copy; one core then receives ESnet's ~30 Gbit/s per stream.
    h = host_model(Plan())
    per_seg_ns = (
        _as_ns(h["rx_segment_cost"])
        + _as_ns(h["rx_skb_cost"]) / (65536 // MSS)
        + _as_ns(h["irq_cost"]) / 64
        + MSS * 8 / int(h["rx_copy_rate"].removesuffix("bps")) * 1e9
    )
    assert MSS * 8 / per_seg_ns * 1e9 == pytest.approx(30e9, rel=1e-6)
    assert h["rx_ring_pkts"] == 8192 and h["flow_control"] is True
