"""The phase of a kernel flow, in the names the simulator reports for the same algorithm.

Every name comes from the core's registry (``Algorithm.phases``, crates/cc/src/phases.rs), so the
two backends' ``timeseries.phase`` columns can be compared label for label. Where the kernel's
state comes from:

- a BPF port with phases (``bbr3_linux``): the port's own state, the phase code it keeps for the
  socket (:meth:`bbrlab.emu.bpf.loader.StructOpsLink.phase_code`); v2/v3 sub-phases included;
- stock ``bbr`` (BBRv1): Linux's mode, which follows exactly from the two gains TCP_CC_INFO's
  ``tcp_bbr_info`` reports, once the first ACK of data set them (:func:`bbr1_mode`);
- anything else (reno, cubic, the dctcp port): TCP_INFO's ``ca_state`` and cwnd vs ssthresh, as
  the simulator's loss-based algorithms report (crates/cc/src/reno.rs ``phase_of``).
"""

from __future__ import annotations

from ..core.algorithms import lookup

__all__ = [
    "BBR_CWND_GAIN",
    "BBR_DRAIN",
    "BBR_DRAIN_GAIN",
    "BBR_HIGH_GAIN",
    "BBR_PACING_GAIN_CYCLE",
    "BBR_PROBE_BW",
    "BBR_PROBE_RTT",
    "BBR_STARTUP",
    "BBR_UNIT",
    "bbr1_mode",
    "kernel_phase",
]

# Linux net/ipv4/tcp_bbr.c. Gains are fixed point in BBR_UNIT (1 << BBR_SCALE, BBR_SCALE = 8),
# as struct bbr keeps them and bbr_get_info copies them into tcp_bbr_info.
BBR_UNIT = 256
#: bbr_high_gain, 2/ln(2) rounded up (739): STARTUP's pacing and cwnd gain, DRAIN's cwnd gain.
BBR_HIGH_GAIN = BBR_UNIT * 2885 // 1000 + 1
#: bbr_drain_gain, 1/high_gain (88): DRAIN's pacing gain.
BBR_DRAIN_GAIN = BBR_UNIT * 1000 // 2885
#: bbr_cwnd_gain (2): PROBE_BW's cwnd gain.
BBR_CWND_GAIN = BBR_UNIT * 2
#: bbr_pacing_gain[]: PROBE_BW's pacing gain by cycle phase (5/4, 3/4, then 1 for six phases;
#: also 1 while lt_use_bw holds the long-term policed rate).
BBR_PACING_GAIN_CYCLE = (BBR_UNIT * 5 // 4, BBR_UNIT * 3 // 4) + (BBR_UNIT,) * 6
#: enum bbr_mode: also the phase codes of the registry's bbr1 table.
BBR_STARTUP, BBR_DRAIN, BBR_PROBE_BW, BBR_PROBE_RTT = 0, 1, 2, 3

# TCP_INFO's tcpi_ca_state (enum tcp_ca_state) -> the loss-based phase; Open and Disorder report
# slow start or congestion avoidance.
_CA_STATE_PHASE = {2: "cwr", 3: "recovery", 4: "loss"}


def bbr1_mode(pacing_gain: int, cwnd_gain: int, bw_bytes_per_s: float) -> int | None:
    """Linux BBRv1's mode (``enum bbr_mode``) from ``tcp_bbr_info``'s gains, in BBR_UNIT, and its
    bandwidth estimate.

    ``bbr_update_gains`` sets both gains from the mode alone at the end of every ACK's model
    update, so the pair names the mode: STARTUP (high, high), DRAIN (drain, high), PROBE_BW (a
    cycle gain, 2), PROBE_RTT (1, 1). Until the first ACK of data after ``bbr_init``, which sets
    mode STARTUP and empties the max-bw filter, the gains are not the mode's: they are zero, or
    (1, 1) on a connection the kernel opened — the SYN-ACK's ACK runs ``bbr_main`` on the zeroed
    state before ``tcp_init_transfer`` calls ``bbr_init``, and that state's 10-s min_rtt stamp
    (0) has expired, so it enters PROBE_RTT (seen on Linux 6.18: (1, 1) with cwnd 10 for the
    first round trip). A zero bandwidth estimate marks that time: STARTUP. None for any other
    pair: not mainline tcp_bbr.c (a patched ``bbr``, such as Google's v3 tree, has other gains).
    """
    if bw_bytes_per_s == 0:
        return BBR_STARTUP
    if cwnd_gain == BBR_HIGH_GAIN:
        return {BBR_HIGH_GAIN: BBR_STARTUP, BBR_DRAIN_GAIN: BBR_DRAIN}.get(pacing_gain)
    if cwnd_gain == BBR_CWND_GAIN and pacing_gain in BBR_PACING_GAIN_CYCLE:
        return BBR_PROBE_BW
    if (pacing_gain, cwnd_gain) == (BBR_UNIT, BBR_UNIT):
        return BBR_PROBE_RTT
    return None


def _phases(cc: str) -> tuple[str, ...]:
    """The registry's phase table of ``cc``; Reno's for a name the registry does not know (a
    kernel module asked for by name is reported as a loss-based algorithm)."""
    alg = lookup(cc) or lookup("reno")
    assert alg is not None
    return alg.phases


def kernel_phase(cc: str, info: dict[str, int], bbr: dict[str, float] | None, port_code: int | None) -> str:
    """The phase of a kernel flow of algorithm ``cc``: from the BPF port's phase code
    (``port_code``), else from stock bbr's gains (``bbr``: TCP_CC_INFO), else from TCP_INFO
    (``info``). "-" when the state read names no phase of the table."""
    phases = _phases(cc)
    if port_code is not None:
        return phases[port_code] if port_code < len(phases) else "-"
    if bbr is not None:
        # tcp_bbr_info's gains are integers in BBR_UNIT; traffic.bbr_info divided them exactly.
        mode = bbr1_mode(round(bbr["pacing_gain"] * BBR_UNIT), round(bbr["cwnd_gain"] * BBR_UNIT), bbr["bw_Bps"])
        names = _phases("bbr1")
        return names[mode] if mode is not None else "-"
    name = _CA_STATE_PHASE.get(info["ca_state"]) or ("ss" if info["snd_cwnd"] < info["snd_ssthresh"] else "ca")
    return name if name in phases else "-"
