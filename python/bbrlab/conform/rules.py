"""Which rules each algorithm is held to, where the draft and the code it follows differ.

`bbr3` is the draft (draft-ietf-ccwg-bbr) and is held to the draft's constants. The others are
held to their own sources' rules: `bbr3_linux` to Google's Linux v3 tcp_bbr.c, `bbr2` to the
v2alpha tcp_bbr2.c, `bbr1` to Linux's tcp_bbr.c (docs/conformance.md lists each difference)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ALGORITHMS", "RULES", "Rules"]

#: The algorithms `bbrlab conform` checks by default, in table order.
ALGORITHMS = ("bbr3", "bbr3_linux", "bbr2", "bbr1")

#: Linux's DRAIN gain, bbr_drain_gain = BBR_UNIT · 1000 / 2885 = 88 in 2^8 (1/2.885, the
#: inverse of STARTUP's gain), in every Linux BBR.
LINUX_DRAIN_GAIN = 88 / 256


@dataclass(frozen=True)
class Rules:
    """What one algorithm is checked against."""

    #: Whose rules these are, for the criterion text.
    source: str
    #: DRAIN's pacing gain.
    drain_gain: float
    #: PROBE_BW_DOWN's pacing gain; None: no DOWN sub-phase (BBRv1's 8-phase gain cycle).
    down_gain: float | None
    #: Time without a lower RTT sample before PROBE_RTT, s.
    probe_rtt_interval_s: float
    #: PROBE_RTT's cwnd as a fraction of the BDP (floored at 4); None: 4 segments.
    probe_rtt_cwnd_gain: float | None
    #: PROBE_BW's phases as the trace names them.
    probe_bw_phases: tuple[str, ...]
    #: PROBE_UP ends on the draft's 3-round bandwidth plateau (v3); False: v2alpha's rule (one
    #: min_rtt at 1.25 × BDP of inflight).
    up_exits_on_plateau: bool
    #: DRAIN and PROBE_DOWN end on Linux's measure: packets in the network at the next departure
    #: (`bbr_packets_in_net_at_edt`); False: the draft's C.inflight.
    exit_inflight_at_edt: bool
    #: BBRInflight's offload budget (`bbr_quantization_budget`) is added to the BDP (Linux v1:
    #: BDP + 3 bursts, rounded up to even); False: a floor, max(BDP, 3 bursts) (draft, v2alpha's
    #: bbr_cwnd_tso_budget = 1, Linux v3), which is the BDP at the default point.
    offload_budget_adds: bool
    #: extra_acked is added to cwnd in STARTUP too (v1 adds it only once the pipe is full).
    extra_acked_in_startup: bool
    #: STARTUP also ends on loss (> 2 % in a round in recovery) after this many loss events
    #: (StartupFullLossCnt: 6; v2alpha's bbr_full_loss_cnt: 8); None: no loss exit (v1).
    startup_full_loss_cnt: int | None = 6
    #: DRAIN also ends this many rounds after it began (the draft's 3); None: only on inflight
    #: (Linux v1 and v2alpha). bbrlab's `bbr3_linux` keeps the draft's timeout, which Google's
    #: Linux v3 does not have (docs/conformance.md).
    drain_max_rounds: int | None = 3
    #: The plateau's baseline may be raised by any ACK's non-app-limited bandwidth sample (Linux
    #: v3's bbr_check_full_bw_reached on every ACK); False: by max_bw at round starts (draft, v1,
    #: v2alpha).
    full_bw_every_ack: bool = False
    #: A spurious-loss undo restores the phase as well as bw_shortterm, inflight_shortterm and
    #: inflight_longterm (the draft's BBRHandleSpuriousLossDetection: a lost UP is re-entered);
    #: False: the bounds only (v2alpha, Google's Linux v3); None: no bounds to restore (v1).
    undo_restores_phase: bool | None = True


_V23_PROBE_BW = ("probe_down", "probe_cruise", "probe_refill", "probe_up")

RULES: dict[str, Rules] = {
    "bbr3": Rules("draft", 0.5, 0.90, 5.0, 0.5, _V23_PROBE_BW, True, False, False, True),
    # Linux v3: DRAIN 1/2.885, DOWN 232/256 ("0.91").
    "bbr3_linux": Rules(
        "Linux v3",
        LINUX_DRAIN_GAIN,
        232 / 256,
        5.0,
        0.5,
        _V23_PROBE_BW,
        True,
        True,
        False,
        True,
        full_bw_every_ack=True,
    ),
    # v2alpha: DOWN 3/4 (bbr_pacing_gain[BBR_BW_PROBE_DOWN] = BBR_UNIT · 3 / 4).
    "bbr2": Rules(
        "v2alpha",
        LINUX_DRAIN_GAIN,
        0.75,
        5.0,
        0.5,
        _V23_PROBE_BW,
        False,
        True,
        False,
        True,
        8,
        None,
        undo_restores_phase=False,
    ),
    # Linux v1: min_rtt window 10 s, PROBE_RTT at bbr_cwnd_min_target = 4, extra_acked only
    # once full_bw_reached (bbr_ack_aggregation_cwnd).
    "bbr1": Rules(
        "Linux v1",
        LINUX_DRAIN_GAIN,
        None,
        10.0,
        None,
        ("probe_bw",),
        False,
        True,
        True,
        False,
        None,
        None,
        undo_restores_phase=None,
    ),
}
