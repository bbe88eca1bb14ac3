"""The kernel backend's phase column (bbrlab.emu.phase): no root needed.

Stock bbr's mode is read from the two gains TCP_CC_INFO reports; the expected values below are
restated from Linux net/ipv4/tcp_bbr.c (bbr_high_gain, bbr_drain_gain, bbr_cwnd_gain,
bbr_pacing_gain[], and bbr_update_gains' table), not taken from the module under test.
"""

from __future__ import annotations

import pytest
from bbrlab.core.algorithms import lookup
from bbrlab.emu.phase import bbr1_mode, kernel_phase

# tcp_bbr.c, as integers in BBR_UNIT = 256.
HIGH_GAIN = 739  # BBR_UNIT * 2885 / 1000 + 1
DRAIN_GAIN = 88  # BBR_UNIT * 1000 / 2885
CWND_GAIN = 512  # BBR_UNIT * 2
PACING_GAINS = [320, 192, 256, 256, 256, 256, 256, 256]  # 5/4, 3/4, 1 x 6
# bbr_update_gains: mode -> (pacing_gain, cwnd_gain).
LINUX_GAINS = {
    "startup": [(HIGH_GAIN, HIGH_GAIN)],
    "drain": [(DRAIN_GAIN, HIGH_GAIN)],
    "probe_bw": [(g, CWND_GAIN) for g in PACING_GAINS],  # 256 also while lt_use_bw
    "probe_rtt": [(256, 256)],
}


def _bbr_info(pacing_gain: int, cwnd_gain: int) -> dict[str, float]:
    """What traffic.bbr_info makes of tcp_bbr_info's gains."""
    return {"bw_Bps": 1e6, "min_rtt_us": 10_000.0, "pacing_gain": pacing_gain / 256, "cwnd_gain": cwnd_gain / 256}


_INFO = {"ca_state": 0, "snd_cwnd": 100, "snd_ssthresh": 50}


@pytest.mark.parametrize("mode", list(LINUX_GAINS))
def test_stock_bbr_gains_name_linux_modes_in_the_registry_names(mode: str) -> None:
    bbr1 = lookup("bbr1")
    assert bbr1 is not None
    for pg, cg in LINUX_GAINS[mode]:
        code = bbr1_mode(pg, cg, 1e6)
        assert code is not None and bbr1.phases[code] == mode, (pg, cg)
        assert kernel_phase("bbr1", _INFO, _bbr_info(pg, cg), None) == mode


@pytest.mark.parametrize("pg,cg", [(0, 0), (256, 256)])
def test_stock_bbr_before_its_first_data_ack_is_in_startup(pg: int, cg: int) -> None:
    # bbr_init sets mode STARTUP and empties the bw filter; the gains are still zero, or (1, 1)
    # from the SYN-ACK's bbr_main on the uninitialised state, until the first data ACK.
    info = _bbr_info(pg, cg)
    info["bw_Bps"] = 0.0
    assert kernel_phase("bbr", _INFO, info, None) == "startup"


@pytest.mark.parametrize("pg,cg", [(230, 512), (739, 512), (88, 256), (256, 739), (320, 256)])
def test_gains_mainline_bbr_never_reports_name_no_phase(pg: int, cg: int) -> None:
    # e.g. (230, 512): Google's v3 DOWN gain (0.9) under the name bbr.
    assert bbr1_mode(pg, cg, 1e6) is None
    assert kernel_phase("bbr1", _INFO, _bbr_info(pg, cg), None) == "-"


def test_a_bpf_port_code_indexes_the_registry_table() -> None:
    v3 = lookup("bbr3_linux")
    assert v3 is not None
    got = [kernel_phase("bbr3_linux", _INFO, None, c) for c in range(len(v3.phases))]
    assert got == ["startup", "drain", "probe_down", "probe_cruise", "probe_refill", "probe_up", "probe_rtt"]
    assert kernel_phase("bbr3_linux", _INFO, None, len(v3.phases)) == "-"


@pytest.mark.parametrize(
    "ca_state,cwnd,ssthresh,want",
    [
        (0, 10, 0x7FFFFFFF, "ss"),
        (1, 100, 50, "ca"),
        (2, 100, 50, "cwr"),
        (3, 10, 50, "recovery"),
        (4, 1, 50, "loss"),
    ],
)
def test_loss_based_phases_from_tcp_info(ca_state: int, cwnd: int, ssthresh: int, want: str) -> None:
    info = {"ca_state": ca_state, "snd_cwnd": cwnd, "snd_ssthresh": ssthresh}
    for cc in ("cubic", "reno", "dctcp"):
        assert kernel_phase(cc, info, None, None) == want


# ------------------------------------------------------------------ both backends, one flow each
# Root and network namespaces (and for bbr3_linux the BPF tools) needed; each test skips with the
# reason when they are missing. A kernel run takes its duration in wall time (plus ~1.5 s).


def _emu_unavailable(cc: str) -> str | None:
    from bbrlab.emu import netns
    from bbrlab.emu.bpf import build as bpf_build
    from bbrlab.emu.bpf import ported

    try:
        netns.check_environment()
        if cc in ported():
            bpf_build.check_tools(cc)
    except (netns.EmuUnavailable, bpf_build.BpfUnavailable) as e:
        return str(e)
    return None


#: BBRv3's state machine (draft-ietf-ccwg-bbr §4.3), as the phase samples see it: DRAIN hands
#: over to DOWN, which may end before a sample catches it; DOWN goes straight to REFILL when the
#: probe's wait runs out before inflight has fallen to the cruise level (the draft's
#: BBRUpdateProbeBWCyclePhase: in DOWN, `if (BBRIsTimeToProbeBW()) return`, which starts REFILL;
#: Linux `bbr_update_cycle_phase`; seen on the kernel under load); PROBE_RTT may start from any
#: state and ends in CRUISE (full pipe) or STARTUP.
_V3_BW = ("probe_down", "probe_cruise", "probe_refill", "probe_up")
V3_EDGES = {
    ("startup", "drain"),
    ("drain", "probe_down"),
    ("drain", "probe_cruise"),
    ("probe_down", "probe_cruise"),
    ("probe_down", "probe_refill"),
    ("probe_cruise", "probe_refill"),
    ("probe_refill", "probe_up"),
    ("probe_up", "probe_down"),
    ("probe_rtt", "probe_cruise"),
    ("probe_rtt", "probe_down"),
    ("probe_rtt", "startup"),
    *((p, "probe_rtt") for p in ("startup", "drain", *_V3_BW)),
}


def _sequence(ts) -> list[str]:
    """The phases a flow went through: consecutive repeats collapsed, and a phase held for a
    single sample dropped (one that short may fall between the samples of either backend: v3's
    DOWN after DRAIN ends on the next ACKs, so either backend may catch it or not)."""
    runs: list[list] = []  # [phase, samples]
    for p in ts["phase"].astype(str):
        if p == "-":  # the kernel flow before its handshake completed
            continue
        if runs and runs[-1][0] == p:
            runs[-1][1] += 1
        else:
            runs.append([p, 1])
    out: list[str] = []
    for p, n in runs:
        if n > 1 and (not out or out[-1] != p):
            out.append(p)
    return out


@pytest.mark.parametrize(
    "cc,duration,expect",
    [
        # BBRv1 enters PROBE_RTT after 10 s without a lower RTT, beyond this short run (its mapping is
        # unit-tested above); the run shows STARTUP -> DRAIN -> PROBE_BW.
        ("bbr1", "3s", ["startup", "drain", "probe_bw"]),
        # BBRv3: a probe every min(BDP, 63) = 63 rounds (~1.6 s at 25 ms; sooner than the 2-3 s
        # timer), then PROBE_RTT at 5 s (its 5-s probe_rtt_min window), 0.7 s after the second
        # probe's DOWN ended: far enough apart that the kernel's few ms of lag cannot swap them.
        (
            "bbr3_linux",
            "5.5s",
            [
                "startup",
                "drain",
                "probe_cruise",
                "probe_refill",
                "probe_up",
                "probe_down",
                "probe_cruise",
                "probe_refill",
                "probe_up",
                "probe_down",
                "probe_cruise",
                "probe_rtt",
                "probe_cruise",
            ],
        ),
    ],
)
def test_sim_and_kernel_go_through_the_same_phases(tmp_path, cc: str, duration: str, expect: list[str]) -> None:
    """One flow, 50 Mbit/s x 25 ms, buffer 2 BDP, phases sampled every 5 ms: the simulator's
    sequence of phases and the kernel's (stock bbr / the bbr3_linux BPF port, read through
    bbrlab.emu.phase) are the same, sub-phases of v3's PROBE_BW included, and are the
    algorithm's expected path on this link."""
    reason = _emu_unavailable(cc)
    if reason is not None:
        pytest.skip(f"emu backend unavailable for {cc}: {reason}")
    import bbrlab
    from bbrlab.scenario import load_scenario

    path = tmp_path / "phases.toml"
    path.write_text(
        f'name = "phases"\nduration = "{duration}"\nsample_interval = "5ms"\n[topology]\n'
        f'bottleneck = {{ rate = "50Mbps", rtt = "25ms", buffer = "2bdp" }}\n[[flows]]\ncc = "{cc}"\n'
    )
    scn = load_scenario(path)
    sim = _sequence(bbrlab.run(scn, backend="sim").timeseries)
    emu = _sequence(bbrlab.run(scn, backend="emu").timeseries)
    print(f"{cc}: sim {sim}\n{' ' * len(cc)}  emu {emu}")
    assert sim == expect
    if cc == "bbr1":
        # The kernel's transitions come a few ms later (handshake, timer grid): the run may end
        # just before its last one, never more.
        assert emu == sim or emu == sim[:-1], (sim, emu)
        return
    # BBRv3: the same first probe (startup → drain → cruise → refill → up → down) and PROBE_RTT
    # within the run on both; in between, the kernel's probes may come at other times (the
    # BPF port draws its 2-3 s probe wait from the kernel's random numbers, and its first probe
    # has been seen to start a round-trip grid later), so the kernel may fit one cycle fewer
    # before PROBE_RTT. Every step it takes must be an edge of v3's state machine.
    assert emu[:6] == sim[:6], (sim, emu)
    assert "probe_rtt" in emu, (sim, emu)
    steps = set(zip(emu, emu[1:]))
    assert steps <= V3_EDGES, (steps - V3_EDGES, emu)
