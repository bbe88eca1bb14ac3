"""``[[traffic]]`` sources (UDP CBR, UDP on/off, ping) and the flows' application models (``app``:
rate, onoff) on the emu backend: the sources keep the simulator's schedule (the same packets, the
same on/off draws), the writers the simulator's writer, what the backend cannot run is one line,
and a run with sources measures what the simulator reports and leaves nothing behind, also after
a SIGKILL of the runner.

Tests that need root and network namespaces skip with the reason when those are missing."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from bbrlab.emu.sourceproc import PROCESS_NAME, Schedule
from bbrlab.emu.sources import _Source, traffic_columns
from bbrlab.emu.traffic import AppWriter
from test_emu import (
    HEAVY_PACKAGES,
    _assert_clean,
    _check_imports_nothing_heavy,
    _check_sigkill_leaves_no_helper_behind,
    _cli,
    _write,
    needs_emu,
)

LINK = '[topology]\nbottleneck = { rate = "50Mbps", rtt = "20ms" }\n'


def _source_pids() -> list[int]:
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if (d / "comm").read_bytes().strip() == PROCESS_NAME:
                    out.append(int(d.name))
            except OSError:
                pass
    return out


# ------------------------------------------------------------------ no privileges needed


def _schedule_count(cfg: dict) -> int:
    sched = Schedule(cfg)
    n = 0
    while sched.next_ns is not None:
        n += 1
        sched.advance()
    return n


@pytest.mark.parametrize(
    "source",
    [
        '{ kind = "udp_cbr", rate = "30Mbps" }',
        '{ kind = "udp_onoff", rate = "10Mbps", on = "50ms", off = "150ms", durations = "exponential" }',
        '{ kind = "udp_onoff", rate = "7Mbps", on = "30ms", off = "70ms", packet_size = "1000B", start = "1s" }',
    ],
)
def test_the_emu_sender_sends_the_simulators_packets(tmp_path, source):
    """The emu sender's schedule (its on/off draws from the simulator's random stream) gives the
    same number of packets as the simulator sent: a different draw or spacing would not."""
    from bbrlab.emu.plan import emu_config
    from bbrlab.engine.runner import run
    from bbrlab.scenario import load_scenario

    scenario = load_scenario(
        _write(
            tmp_path,
            f'duration = "10s"\nseed = 11\n{LINK}[[flows]]\ncc = "cubic"\n[[traffic]]\n{source[2:-2].replace(", ", chr(10))}\n',
        )
    )
    sim = run(scenario, backend="sim").traffic.iloc[0]
    t = emu_config(scenario)["traffic"][0]
    cfg = {
        "packet_size_bytes": t["packet_size_bytes"],
        "rate_bps": t["rate_bps"],
        "seed": 11,
        "source": 0,
        "start_ns": t["start_ns"],
        "stop_ns": t.get("stop_ns"),
        "end_ns": 10_000_000_000,
    }
    if t["kind"] == "udp_onoff":
        cfg |= {"on_ns": t["on_ns"], "off_ns": t["off_ns"], "exponential": t["durations"] == "exponential"}
    assert _schedule_count(cfg) == sim["sent_packets"]


def test_the_writers_offer_what_the_simulators_writer_does():
    mss = 1448
    rate = AppWriter({"kind": "rate", "rate_bps": 20_000_000}, mss, start_ns=1_000)
    # 100 ms at 20 Mbit/s: 250 000 B due, in whole segments (172 of them).
    assert rate.offered(1_000 + 100_000_000) == 250_000 // mss * mss
    # The next write is due when the next segment's last byte is.
    assert rate.next_ns == 1_000 + math.ceil((173 * mss) * 8e9 / 20e6)
    onoff = AppWriter({"kind": "onoff", "bytes": 100_000, "period_ns": 100_000_000}, mss, start_ns=0)
    per_burst = math.ceil(100_000 / mss) * mss
    assert onoff.offered(0) == per_burst
    assert onoff.offered(99_999_999) == per_burst
    assert onoff.offered(250_000_000) == 3 * per_burst  # a late wake-up writes every burst due
    assert AppWriter(None, mss, 0).offered(0) > 1 << 60  # bulk


def test_app_limited_is_the_fraction_of_the_intervals_reads_the_kernel_marked(monkeypatch):
    """timeseries.app_limited from TCP_INFO's tcpi_delivery_rate_app_limited (flags bit 0): the
    marked share of the interval's reads that had a delivery-rate sample; NaN without one."""
    from bbrlab.emu import sampling
    from bbrlab.emu.traffic import _NAMES, FlowState

    reads = iter([1, 0, 1, 1, None, None])

    def fake_info(sock):
        flags = next(reads)
        info = dict.fromkeys(_NAMES, 0)
        info |= {"snd_mss": 1448, "rtt": 20_000, "min_rtt": 19_000, "snd_ssthresh": 0x7FFFFFFF}
        info |= {"delivery_rate": 0 if flags is None else 1_000_000, "flags": flags or 0}
        return info

    monkeypatch.setattr(sampling, "tcp_info", fake_info)
    state = FlowState(index=0, cc="cubic", kernel_cc="cubic", port=5201, start_ns=0, stop_ns=None, total_bytes=None)
    state.sock, state.connected_ns = object(), 1  # type: ignore[assignment]
    sampler = sampling._Sampler([state], 100_000_000, {})
    for _ in range(4):
        infos = sampler.read_infos()
    sampler.sample(0.1, infos)
    for _ in range(2):
        infos = sampler.read_infos()
    sampler.sample(0.2, infos)
    assert sampler.cols["app_limited"][0] == 0.75
    assert math.isnan(sampler.cols["app_limited"][1])


def test_the_source_process_imports_only_the_standard_library():
    """`python -m bbrlab.emu.sourceproc` starts before the run's t0: no compiled core, pydantic,
    numpy or pandas."""
    _check_imports_nothing_heavy("bbrlab.emu.sourceproc", [], 2, (*HEAVY_PACKAGES, "bbrlab._core"))


def test_lost_is_sent_less_received_less_still_inside():
    src = _Source(0, {"kind": "udp_cbr", "packet_size_bytes": 1500, "start_ns": 0, "stop_ns": None})
    src.finals = {"udp_send": {"sent_packets": 1000}, "udp_sink": {"received_packets": 900, "after_end_packets": 7}}
    cols = traffic_columns([src], 1, 2_000_000_000)
    assert cols["lost_packets"] == [93] and cols["lost_bytes"] == [93 * 1472]
    assert cols["recv_rate_bps"] == [900 * 1472 * 8 / 2.0]
    assert math.isnan(cols["rtt_mean_ms"][0])


@pytest.mark.parametrize(
    ("extra", "field", "says"),
    [
        (
            '[[flows]]\ncc = "cubic"\napp = { kind = "rate", rate = "5Mbps", bulk_until = "1s" }\n',
            "flows.0.app.bulk_until",
            "take back",
        ),
        (
            '[[flows]]\ncc = "bql"\ntransport = "udp"\napp = { kind = "rate", rate = "5Mbps" }\n',
            "flows.0.app",
            "bulk writer",
        ),
    ],
)
def test_what_emu_cannot_run_is_one_line_naming_the_field(tmp_path, extra, field, says):
    path = _write(tmp_path, f'duration = "1s"\n{LINK}{extra}')
    r = _cli("run", str(path), "--backend", "emu", "--out", str(tmp_path / "o"), "-q")
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2, r.stderr
    assert len(lines) == 1 and field in lines[0] and says in lines[0], r.stderr


def test_sources_on_a_graph_are_refused_on_emu_in_one_line(tmp_path):
    path = _write(
        tmp_path,
        'duration = "1s"\n[topology]\nkind = "parking_lot"\nbottlenecks = 2\nrate = "50Mbps"\ndelay = "5ms"\n'
        '[[flows]]\ncc = "cubic"\nsrc = "long_src"\ndst = "long_dst"\n'
        '[[traffic]]\nkind = "ping"\nsrc = "long_src"\ndst = "long_dst"\n',
    )
    r = _cli("run", str(path), "--backend", "emu", "--out", str(tmp_path / "o"), "-q")
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2, r.stderr
    assert len(lines) == 1 and "traffic" in lines[0] and "dumbbell" in lines[0], r.stderr


# ------------------------------------------------------------------ emu


@needs_emu
def test_udp_cbr_and_ping_beside_cubic_on_the_kernel(tmp_path):
    """The issue's first figure, short: a 30 Mbit/s CBR source beside CUBIC on 50 Mbit/s. The
    sender sends the schedule's packets, the sink counts them, CUBIC gets about the rest, and the
    ping's RTTs are at least the path's and follow the queue."""
    from bbrlab.engine.runner import run
    from bbrlab.scenario import load_scenario

    text = (
        f'duration = "8s"\nsample_interval = "100ms"\n{LINK}[[flows]]\ncc = "cubic"\n'
        '[[traffic]]\nkind = "udp_cbr"\nrate = "30Mbps"\n[[traffic]]\nkind = "ping"\ninterval = "10ms"\n'
    )
    res = run(load_scenario(_write(tmp_path, text)), backend="emu")
    t = res.traffic
    cbr, ping = t.iloc[0], t.iloc[1]
    print(t.to_string())
    assert cbr["sent_packets"] == 30_000_000 * 8 // (1538 * 8) + 1
    assert cbr["received_packets"] + cbr["lost_packets"] <= cbr["sent_packets"]
    assert cbr["received_packets"] > 0.9 * cbr["sent_packets"]
    # CUBIC after its start-up against the rest of the link (payload), as the simulator's test.
    ts = res.timeseries
    cubic = ts[(ts["flow"] == 0) & (ts["t_s"] > 2.0)]["goodput_bps"].mean()
    rest = (50e6 - cbr["received_packets"] * 1538 * 8 / 8.0) * 1448 / 1538
    print(f"CUBIC {cubic / 1e6:.2f} Mbit/s, the rest {rest / 1e6:.2f} Mbit/s")
    assert abs(cubic - rest) / rest < 0.15
    p = res.pings
    assert ping["sent_packets"] == 800 and len(p) >= 0.95 * 800
    assert p["rtt_ms"].min() >= 20.0 and p["rtt_ms"].max() < 20 + 2 * 20 + 10
    assert list(p["seq"]) == sorted(p["seq"])
    assert res.summary["run"]["emu"]["traffic"]["sources"][0]["kind"] == "udp_cbr"
    _assert_clean()
    assert not _source_pids()


@needs_emu
def test_onoff_reverse_source_and_app_limited_writers_on_the_kernel(tmp_path):
    """A reverse on/off source arrives at the sender side; a rate writer gets its rate and is
    app-limited in the timeseries, an on/off writer its bursts' average."""
    from bbrlab.engine.runner import run
    from bbrlab.scenario import load_scenario

    text = (
        f'duration = "5s"\n{LINK}'
        '[[flows]]\ncc = "cubic"\napp = { kind = "rate", rate = "5Mbps" }\n'
        '[[flows]]\ncc = "cubic"\napp = { kind = "onoff", bytes = "100KB", period = "100ms" }\n'
        '[[traffic]]\nkind = "udp_onoff"\nrate = "10Mbps"\non = "50ms"\noff = "150ms"\nreverse = true\n'
    )
    res = run(load_scenario(_write(tmp_path, text)), backend="emu")
    src = res.traffic.iloc[0]
    assert src["reverse"] == 1
    # On a quarter of the time at 10 Mbit/s of 1538 B frames for 5 s: 1016 packets.
    assert abs(src["sent_packets"] - 10e6 * 5 / 4 / (1538 * 8)) < 30
    assert src["received_packets"] > 0.95 * src["sent_packets"]
    ts = res.timeseries
    late = ts[ts["t_s"] > 1.0]
    rate_flow, onoff_flow = late[late["flow"] == 0], late[late["flow"] == 1]
    print(res.flows[["flow", "goodput_bps"]], rate_flow["app_limited"].mean(), onoff_flow["app_limited"].mean())
    assert abs(rate_flow["goodput_bps"].mean() - 5e6) < 0.1 * 5e6
    onoff_rate = math.ceil(100_000 / 1448) * 1448 * 8 / 0.1
    assert abs(onoff_flow["goodput_bps"].mean() - onoff_rate) < 0.15 * onoff_rate
    assert rate_flow["app_limited"].mean() > 0.5
    _assert_clean()
    assert not _source_pids()


@needs_emu
def test_sigkill_of_the_runner_leaves_no_source_behind(tmp_path):
    path = _write(
        tmp_path,
        f'duration = "30s"\n{LINK}[[flows]]\ncc = "cubic"\n'
        '[[traffic]]\nkind = "udp_cbr"\nrate = "10Mbps"\n[[traffic]]\nkind = "ping"\n',
    )
    _check_sigkill_leaves_no_helper_behind(path, tmp_path, PROCESS_NAME.decode(), 3)
