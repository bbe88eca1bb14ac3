"""scripts/bench_speed.py (issue 15's side-by-side speed benchmark): its argument and output parsing,
and that the scenarios it gives bbrlab are the ones it gives ns-3. Nothing here runs ns-3 or a
simulation: the benchmark itself is run by hand (docs/performance.md)."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest
from bbrlab.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "bench_speed.py"
NS3_SOURCE = ROOT / "bench" / "ns3" / "dumbbell.cc"


def _load_script():
    spec = importlib.util.spec_from_file_location("bench_speed", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["bench_speed"] = mod  # dataclasses look their module up while the class is built
    spec.loader.exec_module(mod)
    return mod


bs = _load_script()

NS3_OUTPUT = """\
CONFIG cca=TcpCubic flows=1 bw=100000000bps rtt_ms=40.000 buffer=333p buffer_pkts=333 bdp_pkts=333.3 loss=0
FLOW 0 goodput_Mbps=96.000 rx_bytes=720000000 data_segs_tx=499000 retx_segs=300
AGG goodput_Mbps=95.875 util_pct=95.88 retx_segs=300 retx_pct=0.060 queue_drops=300 loss_drops=0
PERF wall_s=20.500 cpu_s=19.800 events=4540000 data_pkts_delivered=497000 ack_pkts=250000 data_pkts_per_wall_s=24244 \
events_per_data_pkt=9.13 ns_per_event=4515.4
"""


def test_only_defaults_big_and_order():
    assert bs.parse_only(None, big=False) == ["a", "c", "d"]
    assert bs.parse_only("d,a", big=False) == ["d", "a"]
    assert bs.parse_only("a", big=True) == ["a", "100g", "1000flows"]
    assert bs.parse_only("1000flows,a,a", big=True) == ["1000flows", "a", "100g"]


@pytest.mark.parametrize(
    "argv, flag",
    [
        (["--only", "a,b"], "--only"),
        (["--only", ","], "--only"),
        (["--repeat", "0"], "--repeat"),
        (["--repeat", "two"], "--repeat"),
        (["--d-seconds", "-1"], "--d-seconds"),
        (["--d-seconds", "inf"], "--d-seconds"),
        (["--install-deps"], "--install-deps"),
    ],
)
def test_bad_arguments_name_the_flag_and_exit_2(argv, flag, capsys):
    assert bs.main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"bench_speed: {flag}:"), err


def test_missing_ns3_program_is_one_line_naming_the_build_flag(tmp_path, capsys):
    assert bs.main(["--only", "a", "--ns3", str(tmp_path / "dumbbell")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--build-ns3" in err[0] and str(tmp_path / "dumbbell") in err[0], err


def test_ns3_output_parsed_and_derived():
    r = bs.derived(bs.parse_ns3_output(NS3_OUTPUT))
    assert r["sim_wall_s"] == 20.5 and r["events"] == 4_540_000 and r["data_pkts_delivered"] == 497_000
    assert r["goodput_bps"] == pytest.approx(95.875e6)
    assert r["events_per_pkt"] == pytest.approx(4_540_000 / 497_000)
    assert r["ns_per_event"] == pytest.approx(20.5e9 / 4_540_000)
    assert r["pkts_per_wall_s"] == pytest.approx(497_000 / 20.5)
    assert r["sim_cpu_s"] == 19.8 and r["pkts_per_cpu_s"] == pytest.approx(497_000 / 19.8)


def test_ns3_output_of_a_program_without_cpu_time_still_parses():
    r = bs.parse_ns3_output(NS3_OUTPUT.replace(" cpu_s=19.800", ""))
    assert r["sim_wall_s"] == 20.5 and r["sim_cpu_s"] != r["sim_cpu_s"]  # NaN


@pytest.mark.parametrize("text", ["", NS3_OUTPUT.replace("PERF", "PREF"), NS3_OUTPUT.replace(" events=", " evts=")])
def test_ns3_output_without_its_figures_is_an_error(text):
    with pytest.raises(ValueError):
        bs.parse_ns3_output(text)


def _ns3_defaults() -> dict[str, float]:
    """The Options defaults written in bench/ns3/dumbbell.cc."""
    src = NS3_SOURCE.read_text()
    body = src[src.index("struct Options") :]
    body = body[: body.index("};")]
    return {m[1]: float(m[2]) for m in re.finditer(r"\b(\w+) = ([0-9.]+);", body)}


@pytest.mark.parametrize("key", ["a", "c", "d"])
def test_bbrlab_scenario_is_the_ns3_scenario(key, tmp_path):
    s = bs.shared_scenarios(5.0)[key]
    p = tmp_path / "s.toml"
    p.write_text(s.toml())
    cfg = load_scenario(p).resolve()
    bn = cfg["topology"]["bottleneck"]
    ns3 = dict(arg[2:].split("=", 1) for arg in s.ns3_args())
    # The same path, buffer (in packets on both sides), duration and number of flows.
    assert bn["rate_bps"] == int(ns3["bw"].removesuffix("bps"))
    assert bn["rtt_ns"] == round(float(ns3["rtt"]) * 1e6)
    assert bn["buffer"] == {"packets": int(ns3["buffer"].removesuffix("p"))}
    assert cfg["duration_ns"] == round(float(ns3["duration"]) * 1e9)
    flows = cfg["flows"]
    assert sum(f["count"] for f in flows) == int(ns3["flows"])
    assert {f["cc"] for f in flows} == {"cubic" if ns3["cca"] == "TcpCubic" else "bbr1"}
    assert bn["loss"] == 0.0
    # bbrlab's defaults are what the ns-3 program hard-codes.
    d = _ns3_defaults()
    for f in flows:
        assert f["mss_bytes"] == d["mss"]
        assert f["initial_cwnd_segs"] == d["initialCwnd"]
        assert f["min_rto_ns"] == d["minRtoMs"] * 1e6
        assert f["delayed_ack"] is True and d["delAck"] == 2
    assert cfg["topology"]["access_rate_bps"] == bn["rate_bps"] * d["accessFactor"]


def test_one_bdp_in_packets():
    a, c, d = (bs.shared_scenarios(5.0)[k] for k in "acd")
    # 100 Mbit/s x 40 ms = 500 kB = 333.3 packets of 1500 B; 1 Gbit/s x 100 ms = 8333.3.
    assert (a.buffer_packets, c.buffer_packets, d.buffer_packets) == (333, 833, 8333)


def test_big_scenarios_exist_and_load():
    for big in bs.BIG.values():
        load_scenario(big.file)
