//! BBRv3 as specified by draft-ietf-ccwg-bbr-06 ("the draft", section names cited as §Name), with
//! a variant carrying Google's Linux v3 constants and ECN response (`google/bbr` v3 branch,
//! `net/ipv4/tcp_bbr.c`).
//!
//! Model. On every ACK BBR updates a model of the path from the delivery-rate sample (`rate.rs`)
//! and derives its three controls from it (§Network Path Model Overview, §Updating Control
//! Parameters):
//!
//! ```text
//! max_bw             = max delivery rate over the last 2 ProbeBW cycles (virtual clock cycle_count)
//! min_rtt            = min RTT over 10 s (ProbeRTT is scheduled by a 5 s sub-window, see below)
//! inflight_longterm  = loss-bounded max inflight, learned while probing     (Linux: inflight_hi)
//! bw_shortterm       = loss-adapted rate, cut by 0.7 per lossy round         (Linux: bw_lo)
//! inflight_shortterm = loss-adapted volume, cut by 0.7 per lossy round       (Linux: inflight_lo)
//! bw                 = min(max_bw, bw_shortterm)
//! pacing_rate        = pacing_gain · bw · 0.99
//! cwnd               = min(cwnd_gain · bw · min_rtt + extra_acked (+offload budget),
//!                          phase cap from inflight_longterm / inflight_shortterm)
//! send_quantum       = pacing_rate · 1 ms, 2 segments .. 64 KB
//! ```
//!
//! State machine (§State Transition Diagram):
//!
//! ```text
//! Startup --(bw plateau 3 rounds <25 %, or loss >2 % with 6 loss events in a recovery round)--> Drain
//! Drain --(inflight <= BDP, or > 3 rounds)--> ProbeBW_DOWN
//! DOWN --(inflight <= min(BDP, 0.85·inflight_longterm))--> CRUISE
//! DOWN/CRUISE --(2 + U(0,1) s wall clock, or min(BDP, 63) rounds)--> REFILL
//! REFILL --(1 round)--> UP
//! UP --(bw plateau | loss >2 % | precautionary: reached inflight_longterm)--> DOWN
//! any --(no RTT sample at or below the 5 s min for 5 s, unless restarting from idle)--> ProbeRTT
//! ProbeRTT --(cwnd = max(BDP/2, 4) for 200 ms and 1 round)--> CRUISE, or Startup if never full
//! ```
//!
//! Loss is a model input, not only a cwnd trigger. While probing (REFILL/UP samples) a round trip
//! whose loss exceeds 2 % of the data in flight when the lost data was sent marks the probe "too
//! high": inflight_longterm = max(tx_in_flight, 0.7·target), leave UP. While not probing (Drain,
//! DOWN, CRUISE, ProbeRTT) each lossy round cuts the short-term model by Beta but never below what
//! the last round actually delivered; REFILL forgets the short-term model. The long-term bound
//! grows again in UP by 1, 2, 4, … packets per round (O(log BDP) rounds to find a 10× increase).
//!
//! Units and arithmetic follow `bbr1.rs` (Linux fixed point): volumes in packets, bandwidth in
//! packets/µs << 24, time in ns. Gains use a 2^16 fixed point (`UNIT`), finer than Linux's 2^8,
//! so that the draft's 0.90/0.7/0.15/2 % are represented to 1e-5; the Linux variant's constants
//! are Linux's 2^8 values shifted left by 8, i.e. bit-for-bit Linux's ratios (e.g. 232/256 =
//! 0.906 for "0.91", 5/256 = 1.95 % for "2 %").
//!
//! `Variant::Draft` vs `Variant::Linux` (everything else is the draft's algorithm in both):
//!
//! | what                       | Draft (draft-06)          | Linux (tcp_bbr.c v3)             |
//! |----------------------------|---------------------------|----------------------------------|
//! | Startup pacing / cwnd gain | 2.77 / 2.0                | 710/256 = 2.773 / 2.0            |
//! | Drain pacing gain          | 0.5                       | 88/256 = 1/2.885                 |
//! | ProbeBW_DOWN pacing gain   | 0.90                      | 232/256 ("91/100")               |
//! | LossThresh, Beta, Headroom | 2 %, 0.7, 0.15            | 5/256, 180/256, 38/256           |
//! | extra_acked window         | 10 rounds (1 in Startup)  | 2 slots of 5 rounds (1 in Startup), capped at 100 ms of bw |
//! | full-bw plateau check      | sample at round start     | every non-app-limited ACK raises the baseline, counted per round |
//! | inflight for DOWN/Drain exits | C.inflight             | packets in network at next EDT (`bbr_packets_in_net_at_edt`) |
//! | send quantum base          | pacing_rate · 1 ms        | pacing_rate >> 10 (sk_pacing_shift) |
//! | ECN                        | CE counted as congestion (see below) | DCTCP-style: alpha EWMA 1/16, inflight_lo ·= 1 − alpha/3, probe too high at CE > 50 %, Startup exit after 2 rounds with CE ≥ 50 %, re-probe at inflight_hi/2 after ECN-only cycles; only if ECN negotiated and min_rtt ≤ 5 ms |
//! | RTO (`set_state(Loss)`)    | cwnd = inflight + 1       | also reset full-bw detector and seed inflight_lo = max(cwnd, prior_cwnd) when not probing |
//!
//! ECN in the Draft variant: §ECN specifies no response but says CE "MUST be treated as
//! congestion". With `tp.ecn_ok`, an ACK that brings new CE marks is handled like a loss event:
//! it marks the round lossy (short-term model cut by Beta once per round when not probing), and
//! CE-marked deliveries count as lost in IsInflightTooHigh (so > 2 % CE while probing ends UP and
//! bounds inflight_longterm). CE does not exit Startup (the draft's Startup exit needs recovery).
//!
//! Where bbrlab deliberately differs from the draft / Linux:
//! - ProbeRTT scheduling follows draft-06 and Linux: a 5 s `probe_rtt_min` sub-window inside the
//!   10 s min_rtt window (ProbeRTT every 5 s, `ProbeRTTCwnd = max(0.5·BDP, 4)` computed from the
//!   10 s min_rtt, which the inflated entry sample cannot replace). The editors' HEAD text moved to
//!   a 10 s interval with a snapshotted ProbeRTT cwnd; not followed.
//! - max_bw filter clock (the haproxy "max bandwidth oscillation" pitfall). The draft advances
//!   `cycle_count` on the first round start in ack_phase PROBE_STOPPING, a phase also entered from
//!   Drain and on ProbeRTT entry/exit, and an advance with no sample in the new slot, or during an
//!   app-limited round, forgets the max and lets the estimate (hence pacing) collapse and regrow.
//!   Here the filter advances exactly once per bandwidth probe: one packet-timed round after
//!   leaving ProbeBW_UP (as §Tracking Time for the BBR.max_bw Max Filter says), only in a ProbeBW
//!   state, deferred (not dropped) while samples are app-limited, and never onto an empty slot
//!   (Linux `bbr_advance_max_bw_filter` also keeps the old window when the new one is empty).
//!   ack_phase is still kept for the precautionary-probing and is_bw_probe_sample bookkeeping.
//! - Per-packet loss (§Probing for Bandwidth In ProbeBW, `HandleLostPacket`, Linux
//!   `.skb_marked_lost`) needs a hook the transport does not have: `cc::Cc` has no per-lost-packet
//!   call and the transport's `mark_lost` does not pass the lost packet's `PacketRateState`.
//!   [`Bbr3::skb_marked_lost`] implements it (inflight-at-loss crossing point included) and the
//!   unit-test simulator calls it; in the real transport BBRv3 falls back to what Linux also does
//!   per ACK (`bbr_adapt_upper_bounds`): the ACK's rate sample decides "too high" with
//!   `rs.tx_in_flight`, and each ACK with new losses is a NoteLoss event.
//! - `RS.lost` (§Per-ACK Rate Sample State: lost between the send and the ACK of the sampled
//!   packet) is taken as `rs.lost + rs.losses`: the shared sampler snapshots `rs.lost` while
//!   tagging deliveries, before this ACK's RACK marking, so losses declared by this very ACK would
//!   otherwise be missed.
//! - Fast path (Linux `bbr_run_fast_path`) and PLB rehashing are not implemented (CPU / path
//!   selection, no effect on the model). TLP-repaired loss (`CA_EVENT_TLP_RECOVERY`) has no event
//!   in `CwndEvent`.
//! - The Linux variant keeps the draft's 3-round Drain timeout and its undo-to-REFILL/Startup;
//!   Linux v3 has neither (it only restores bw_lo/inflight_lo/inflight_hi).
//! - Random probe timing comes from a SplitMix64 generator seeded by `Bbr3::new(seed, _)`.

use crate::filter::WindowedFilter;
use crate::rate::PacketRateState;
use crate::{CaState, CcStateSample, CongestionOps, CwndEvent, Nanos, RateSample, TcpCc, NSEC_PER_MSEC, NSEC_PER_SEC, NSEC_PER_USEC, TCP_INFINITE_SSTHRESH};

/// Bandwidth fixed point as Linux: packets per µs << 24.
const BW_SCALE: u32 = 24;
const BW_UNIT: u128 = 1 << BW_SCALE;
/// Gain fixed point: 1.0 = 2^16.
const GAIN_SHIFT: u32 = 16;
const UNIT: u64 = 1 << GAIN_SHIFT;
/// Linux's 2^8 gain unit, for the ECN alpha (kept in Linux's scale) and the Linux constants.
const BBR_UNIT: u64 = 256;
/// "Infinity" for volumes (packets) and rates.
const INF_PKTS: u32 = u32::MAX;
const INF_BW: u64 = u64::MAX;

/// §Minimum cwnd for Pipelining: MinPipeCwnd = 4 packets keeps an ACK-every-other-packet receiver
/// pipelined (2 data packets + ACKs for 2 in flight).
const MIN_PIPE_CWND: u32 = 4;
/// §Terminology: DefaultCwndGain = 2, the smallest cwnd gain that lets the rate double per round
/// and tolerates delayed/stretched ACKs.
const DEFAULT_CWND_GAIN: u64 = 2 * UNIT;
/// §ProbeBW_UP: pacing gain 1.25 (probe 25 % above bw) …
const UP_PACING_GAIN: u64 = UNIT * 5 / 4;
/// … and cwnd gain 2.25 so the probe is not cwnd-limited (Linux: cwnd_gain + 1/4).
const UP_CWND_GAIN: u64 = UNIT * 9 / 4;
/// §ProbeRTT: ProbeRTTCwndGain = 0.5 (inflight to half a BDP drains the queue) at pacing gain 1.
const PROBE_RTT_CWND_GAIN: u64 = UNIT / 2;
/// §Pacing Rate: PacingMarginPercent = 1, pace 1 % below bw to keep the queue from creeping up.
const PACING_MARGIN_PERCENT: u64 = 1;
/// §Exiting Acceleration Based on Bandwidth Plateau: growth below 25 % …
const FULL_BW_THRESH: u64 = UNIT * 5 / 4;
/// … for 3 non-app-limited rounds (receive-window autotuning needs 3) = pipe full.
const FULL_BW_COUNT: u32 = 3;
/// §Exiting Startup Based on Packet Loss: StartupFullLossCnt = 6 discontiguous lost ranges in a
/// recovery round (Linux `bbr_full_loss_cnt` = 6 loss-marking events).
const STARTUP_FULL_LOSS_CNT: u32 = 6;
/// §Drain: leave Drain after 3 rounds even if inflight is still above the BDP (bw over-estimated).
const DRAIN_MAX_ROUNDS: u64 = 3;
/// §BBR.min_rtt Min Filter: MinRTTFilterLen = 10 s.
const MIN_RTT_FILTER_NS: Nanos = 10 * NSEC_PER_SEC;
/// draft-06 / Linux `bbr_probe_rtt_win_ms`: ProbeRTT when no RTT sample refreshed the 5 s
/// sub-window (cost 0.5·0.2/5 + 4.8/5 ≈ 98 % of bw).
const PROBE_RTT_INTERVAL_NS: Nanos = 5 * NSEC_PER_SEC;
/// §ProbeRTT: ProbeRTTDuration = 200 ms, long enough for flows of different RTTs to overlap.
const PROBE_RTT_DURATION_NS: Nanos = 200 * NSEC_PER_MSEC;
/// §Time Scale for Bandwidth Probing: T_bbr = 2 s + U(0, 1) s (≥ 1.9 s lets a 25 Mbit/s 30 ms
/// Reno flow recover between probes; ≤ 3 s finds freed bandwidth on human time scales) …
const PROBE_WAIT_BASE_NS: Nanos = 2 * NSEC_PER_SEC;
const PROBE_WAIT_RAND_NS: u64 = NSEC_PER_SEC;
/// … and T_reno = min(BDP, 63) rounds (Reno at 25 Mbit/s·30 ms has a BDP of ~62 packets), with
/// rounds_since_probe_up starting at U{0, 1}.
const PROBE_MAX_ROUNDS: u64 = 63;
const PROBE_RAND_ROUNDS: u32 = 2;
/// §RaiseInflightLongtermSlope: the per-round increment doubles at most 30 times.
const MAX_PROBE_UP_ROUNDS: u32 = 30;
/// Linux `bbr_extra_acked_max_us`: cap the aggregation allowance at 100 ms of bw (Linux variant).
const EXTRA_ACKED_MAX_NS: u128 = 100 * NSEC_PER_MSEC as u128;
/// Linux `TCP_INIT_CWND`, used when the connection gives no initial cwnd.
const TCP_INIT_CWND: u32 = 10;
/// Linux `GSO_LEGACY_MAX_SIZE` (64 KB): the min_rtt-based TSO allowance halves per 512 µs.
const GSO_LEGACY_MAX_SIZE: u64 = 65_536;
/// Linux `bbr_tso_rtt_shift`: 2^9 µs.
const TSO_RTT_SHIFT: u32 = 9;
/// §Send Quantum: at most 64 KB (Linux: GSO_LEGACY_MAX_SIZE − 1 − MAX_TCP_HEADER) …
const SEND_QUANTUM_MAX_BYTES: u64 = 65_536 - 1 - 320;
/// … and at least 2 segments.
const SEND_QUANTUM_MIN_SEGS: u32 = 2;
/// Linux `sk_pacing_shift`: ~1 ms (2^-10 s) of the pacing rate per burst.
const PACING_SHIFT: u32 = 10;
/// Linux v3 ECN (lab use, shallow-threshold marking): alpha gain 1/16, initial alpha 1.0 (react at
/// once if the bottleneck is already congested), cut factor 1/3, "too high" at CE ratio > 1/2,
/// Startup exit after 2 rounds at ≥ 1/2, only at min_rtt ≤ 5 ms, re-probe at inflight_hi/2.
const ECN_ALPHA_GAIN: u64 = BBR_UNIT / 16;
const ECN_ALPHA_INIT: u64 = BBR_UNIT;
const ECN_FACTOR: u64 = BBR_UNIT / 3;
const ECN_THRESH: u64 = BBR_UNIT / 2;
const FULL_ECN_CNT: u32 = 2;
const ECN_MAX_RTT_NS: u64 = 5 * NSEC_PER_MSEC;
const ECN_REPROBE_GAIN: u64 = BBR_UNIT / 2;

/// Which constants (and ECN response) to use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// draft-ietf-ccwg-bbr-06.
    Draft,
    /// Google's Linux v3 `tcp_bbr.c` constants and ECN response.
    Linux,
}

/// Per-variant constants, gains in `UNIT`.
#[derive(Clone, Copy, Debug)]
struct Params {
    startup_pacing_gain: u64,
    startup_cwnd_gain: u64,
    drain_pacing_gain: u64,
    down_pacing_gain: u64,
    /// LossThresh as a ratio num/den (compared exactly, as Linux's `(tx·5) >> 8` is).
    loss_thresh: (u64, u64),
    beta: u64,
    headroom: u64,
    extra_acked_win_rounds: u64,
}

impl Params {
    fn of(v: Variant) -> Params {
        match v {
            // §Terminology / §State Machine Operation constants.
            Variant::Draft => Params {
                // 4·ln 2: the smallest gain that doubles the rate per round like slow start.
                startup_pacing_gain: UNIT * 277 / 100,
                startup_cwnd_gain: DEFAULT_CWND_GAIN,
                // ≤ 1/StartupCwndGain drains Startup's queue in about a round (§Drain, -06).
                drain_pacing_gain: UNIT / 2,
                // Smallest gain giving bandwidth convergence against UP's 1.25 (§ProbeBW_DOWN).
                down_pacing_gain: UNIT * 90 / 100,
                loss_thresh: (2, 100),
                beta: UNIT * 7 / 10,
                headroom: UNIT * 15 / 100,
                extra_acked_win_rounds: 10,
            },
            // tcp_bbr.c v3, same 2^8 ratios.
            Variant::Linux => Params {
                startup_pacing_gain: (BBR_UNIT * 277 / 100 + 1) << 8,
                startup_cwnd_gain: (BBR_UNIT * 2) << 8,
                drain_pacing_gain: (BBR_UNIT * 1000 / 2885) << 8,
                down_pacing_gain: (BBR_UNIT * 91 / 100) << 8,
                loss_thresh: (BBR_UNIT * 2 / 100, BBR_UNIT),
                beta: (BBR_UNIT - BBR_UNIT * 30 / 100) << 8,
                headroom: (BBR_UNIT * 15 / 100) << 8,
                extra_acked_win_rounds: 5,
            },
        }
    }
}

/// BBR states (§State Transition Diagram); the value is the exported phase code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum State {
    Startup = 0,
    Drain = 1,
    ProbeBwDown = 2,
    ProbeBwCruise = 3,
    ProbeBwRefill = 4,
    ProbeBwUp = 5,
    ProbeRtt = 6,
}

impl State {
    fn name(self) -> &'static str {
        match self {
            State::Startup => "startup",
            State::Drain => "drain",
            State::ProbeBwDown => "probe_down",
            State::ProbeBwCruise => "probe_cruise",
            State::ProbeBwRefill => "probe_refill",
            State::ProbeBwUp => "probe_up",
            State::ProbeRtt => "probe_rtt",
        }
    }
}

/// §ProbeBW State: what the incoming ACKs say about the bandwidth probe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AckPhase {
    Init,
    Refilling,
    ProbeStarting,
    ProbeFeedback,
    ProbeStopping,
}

#[derive(Clone, Debug)]
pub struct Bbr3 {
    variant: Variant,
    p: Params,
    rng: u64,
    state: State,
    pacing_gain: u64,
    cwnd_gain: u64,
    init_cwnd: u32,
    has_seen_rtt: bool,
    prev_ca_state: CaState,
    prior_cwnd: u32,
    // §BBR.round_count.
    round_count: u64,
    next_round_delivered: u64,
    round_start: bool,
    idle_restart: bool,
    // §BBR.max_bw: two slots, [previous cycle, current cycle].
    max_bw_slots: [u64; 2],
    max_bw_advance_pending: bool,
    cycle_count: u64,
    // Short/long-term model (§Updating the Model Upon Packet Loss).
    bw_shortterm: u64,
    inflight_shortterm: u32,
    inflight_longterm: u32,
    bw_latest: u64,
    inflight_latest: u32,
    loss_round_delivered: u64,
    loss_round_start: bool,
    loss_in_round: bool,
    loss_events_in_round: u32,
    loss_in_cycle: bool,
    // §Startup full-pipe estimator.
    full_bw: u64,
    full_bw_count: u32,
    full_bw_now: bool,
    full_bw_reached: bool,
    drain_start_round: u64,
    // §ProbeBW State.
    ack_phase: AckPhase,
    is_bw_probe_sample: bool,
    prev_probe_too_high: bool,
    prev_probe_precautionary: bool,
    bw_probe_up_rounds: u32,
    bw_probe_up_acked: u32,
    probe_up_acked_per_inc: u32,
    rounds_since_probe_up: u64,
    bw_probe_wait_ns: Nanos,
    cycle_stamp_ns: Nanos,
    // §Undo State.
    undo_state: Option<State>,
    undo_bw_shortterm: u64,
    undo_inflight_shortterm: u32,
    undo_inflight_longterm: u32,
    // §ProbeRTT and min_rtt.
    min_rtt_ns: Nanos,
    min_rtt_stamp_ns: Nanos,
    probe_rtt_min_ns: Nanos,
    probe_rtt_min_stamp_ns: Nanos,
    probe_rtt_done_stamp_ns: Option<Nanos>,
    probe_rtt_round_done: bool,
    // §BBR.extra_acked.
    extra_acked_interval_start_ns: Nanos,
    extra_acked_delivered: u64,
    extra_acked_filter: WindowedFilter,
    extra_acked_slots: [u32; 2],
    extra_acked_win_rounds: u32,
    extra_acked_win_idx: usize,
    // ECN.
    ecn_eligible: bool,
    ecn_alpha: u64,
    alpha_last_delivered: u64,
    alpha_last_delivered_ce: u64,
    ecn_in_round: bool,
    ecn_in_cycle: bool,
    startup_ecn_rounds: u32,
    last_delivered_ce: u64,
    /// Draft variant with ECN negotiated: CE counts as congestion.
    ecn_as_congestion: bool,
    /// C.cwnd as of the current hook (InitLowerBounds reads it).
    cur_cwnd: u32,
}

impl Bbr3 {
    pub fn new(seed: u64, variant: Variant) -> Self {
        let p = Params::of(variant);
        Bbr3 {
            variant,
            p,
            rng: seed,
            state: State::Startup,
            pacing_gain: p.startup_pacing_gain,
            cwnd_gain: p.startup_cwnd_gain,
            init_cwnd: TCP_INIT_CWND,
            has_seen_rtt: false,
            prev_ca_state: CaState::Open,
            prior_cwnd: 0,
            round_count: 0,
            next_round_delivered: 0,
            round_start: false,
            idle_restart: false,
            max_bw_slots: [0; 2],
            max_bw_advance_pending: false,
            cycle_count: 0,
            bw_shortterm: INF_BW,
            inflight_shortterm: INF_PKTS,
            inflight_longterm: INF_PKTS,
            bw_latest: 0,
            inflight_latest: 0,
            loss_round_delivered: 0,
            loss_round_start: false,
            loss_in_round: false,
            loss_events_in_round: 0,
            loss_in_cycle: false,
            full_bw: 0,
            full_bw_count: 0,
            full_bw_now: false,
            full_bw_reached: false,
            drain_start_round: 0,
            ack_phase: AckPhase::Init,
            is_bw_probe_sample: false,
            prev_probe_too_high: false,
            prev_probe_precautionary: false,
            bw_probe_up_rounds: 0,
            bw_probe_up_acked: 0,
            probe_up_acked_per_inc: INF_PKTS,
            rounds_since_probe_up: 0,
            bw_probe_wait_ns: 0,
            cycle_stamp_ns: 0,
            undo_state: None,
            undo_bw_shortterm: 0,
            undo_inflight_shortterm: 0,
            undo_inflight_longterm: 0,
            min_rtt_ns: u64::MAX,
            min_rtt_stamp_ns: 0,
            probe_rtt_min_ns: u64::MAX,
            probe_rtt_min_stamp_ns: 0,
            probe_rtt_done_stamp_ns: None,
            probe_rtt_round_done: false,
            extra_acked_interval_start_ns: 0,
            extra_acked_delivered: 0,
            extra_acked_filter: WindowedFilter::new_max(),
            extra_acked_slots: [0; 2],
            extra_acked_win_rounds: 0,
            extra_acked_win_idx: 0,
            ecn_eligible: false,
            ecn_alpha: ECN_ALPHA_INIT,
            alpha_last_delivered: 0,
            alpha_last_delivered_ce: 0,
            ecn_in_round: false,
            ecn_in_cycle: false,
            startup_ecn_rounds: 0,
            last_delivered_ce: 0,
            ecn_as_congestion: false,
            cur_cwnd: TCP_INIT_CWND,
        }
    }

    pub fn name(&self) -> &'static str {
        if self.variant == Variant::Linux {
            "bbr3_linux"
        } else {
            "bbr3"
        }
    }

    pub fn state(&self) -> State {
        self.state
    }

    // ---------------------------------------------------------------------------------------
    // Helpers.

    /// SplitMix64 (as bbr1.rs).
    fn next_u64(&mut self) -> u64 {
        self.rng = self.rng.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn rand_below(&mut self, n: u64) -> u64 {
        ((self.next_u64() >> 32) * n) >> 32
    }

    fn is_in_probe_bw(&self) -> bool {
        matches!(self.state, State::ProbeBwDown | State::ProbeBwCruise | State::ProbeBwRefill | State::ProbeBwUp)
    }

    /// §ProbeBW Algorithm Details IsProbingBW.
    fn is_probing_bw(&self) -> bool {
        matches!(self.state, State::Startup | State::ProbeBwRefill | State::ProbeBwUp)
    }

    /// §BBR.max_bw: max of the two cycle slots.
    fn max_bw(&self) -> u64 {
        self.max_bw_slots[0].max(self.max_bw_slots[1])
    }

    /// §BoundBWForModel: bw = min(max_bw, bw_shortterm).
    fn bw(&self) -> u64 {
        self.max_bw().min(self.bw_shortterm)
    }

    fn bw_sample(rs: &RateSample) -> u64 {
        if rs.delivered < 0 || rs.interval_ns <= 0 {
            return 0;
        }
        // Round up (Linux DIV_ROUND_UP) so low rates can still grow.
        let num = rs.delivered as u128 * BW_UNIT * NSEC_PER_USEC as u128;
        num.div_ceil(rs.interval_ns as u128).min(u64::MAX as u128) as u64
    }

    /// §Pacing Rate: rate · gain · (1 − margin) in bytes/s.
    fn rate_bytes_per_sec(mss: u32, bw: u64, gain: u64, margin: u64) -> u64 {
        let r = bw as u128 * mss as u128 * gain as u128 >> GAIN_SHIFT;
        let r = r * (1_000_000 / 100 * (100 - margin)) as u128;
        ((r >> BW_SCALE) as u64).max(1)
    }

    /// §BDPMultiple: ceil(gain · bw · min_rtt) packets; InitialCwnd before any RTT sample.
    fn bdp_multiple(&self, bw: u64, gain: u64) -> u32 {
        if self.min_rtt_ns == u64::MAX {
            return self.init_cwnd;
        }
        let w = bw as u128 * self.min_rtt_ns as u128;
        let unit = BW_UNIT * NSEC_PER_USEC as u128;
        ((w * gain as u128 >> GAIN_SHIFT).div_ceil(unit)).min(u32::MAX as u128 - 1) as u32
    }

    /// §Send Quantum (SetSendQuantum), with Linux v3's min_rtt-based allowance when
    /// `tp.tso_minrtt_autosize`: pacing_rate·1 ms (+ 64 KB >> (min_rtt_us >> 9)), 2 segs .. 64 KB.
    pub fn send_quantum_segs(&self, tp: &TcpCc) -> u32 {
        let mut bytes = match self.variant {
            Variant::Draft => tp.pacing_rate_bytes_per_s / 1000,
            Variant::Linux => tp.pacing_rate_bytes_per_s >> PACING_SHIFT,
        };
        if tp.tso_minrtt_autosize && self.min_rtt_ns != u64::MAX {
            let r = (self.min_rtt_ns / NSEC_PER_USEC) >> TSO_RTT_SHIFT;
            if r < 64 {
                bytes += GSO_LEGACY_MAX_SIZE >> r;
            }
        }
        let bytes = bytes.min(SEND_QUANTUM_MAX_BYTES);
        ((bytes / tp.mss.max(1) as u64) as u32).max(SEND_QUANTUM_MIN_SEGS)
    }

    /// §QuantizationBudget: at least 3 send quanta (TCP offload budget) and MinPipeCwnd, +2 in UP.
    fn quantization_budget(&self, tp: &TcpCc, inflight: u32) -> u32 {
        let offload = 3 * self.send_quantum_segs(tp);
        let mut c = inflight.max(offload).max(MIN_PIPE_CWND);
        if self.state == State::ProbeBwUp {
            c = c.saturating_add(2);
        }
        c
    }

    /// §Inflight(gain) with a given bw.
    fn inflight(&self, tp: &TcpCc, bw: u64, gain: u64) -> u32 {
        self.quantization_budget(tp, self.bdp_multiple(bw, gain))
    }

    /// §TargetInflight: min(BDP, cwnd).
    fn target_inflight(&self, tp: &TcpCc) -> u32 {
        self.bdp_multiple(self.bw(), UNIT).min(tp.snd_cwnd)
    }

    /// §InflightWithHeadroom: inflight_longterm minus max(1, 15 %), floor MinPipeCwnd.
    fn inflight_with_headroom(&self) -> u32 {
        if self.inflight_longterm == INF_PKTS {
            return INF_PKTS;
        }
        let headroom = ((self.inflight_longterm as u64 * self.p.headroom) >> GAIN_SHIFT).max(1) as u32;
        self.inflight_longterm.saturating_sub(headroom).max(MIN_PIPE_CWND)
    }

    /// Linux `bbr_packets_in_net_at_edt`: inflight when the next packet departs.
    fn packets_in_net_at_edt(&self, tp: &TcpCc, inflight_now: u32) -> u32 {
        let edt = tp.wstamp_ns.max(tp.now_ns);
        let interval_ns = (edt - tp.now_ns) as u128;
        let delivered = (self.bw() as u128 * interval_ns / (BW_UNIT * NSEC_PER_USEC as u128)) as u64;
        let mut at_edt = inflight_now as u64;
        if self.pacing_gain > UNIT {
            at_edt += self.send_quantum_segs(tp) as u64;
        }
        at_edt.saturating_sub(delivered) as u32
    }

    /// The inflight the exit checks compare: C.inflight (draft) or Linux's EDT estimate.
    fn inflight_for_checks(&self, tp: &TcpCc, inflight_now: u32) -> u32 {
        match self.variant {
            Variant::Draft => inflight_now,
            Variant::Linux => self.packets_in_net_at_edt(tp, inflight_now),
        }
    }

    /// §StartRound.
    fn start_round(&mut self, tp: &TcpCc) {
        self.next_round_delivered = tp.delivered;
    }

    /// §ResetFullBW.
    fn reset_full_bw(&mut self) {
        self.full_bw = 0;
        self.full_bw_count = 0;
        self.full_bw_now = false;
    }

    /// §ResetCongestionSignals.
    fn reset_congestion_signals(&mut self) {
        self.loss_in_round = false;
        self.ecn_in_round = false;
        self.loss_in_cycle = false;
        self.ecn_in_cycle = false;
        self.bw_latest = 0;
        self.inflight_latest = 0;
    }

    /// §ResetShortTermModel.
    fn reset_short_term_model(&mut self) {
        self.bw_shortterm = INF_BW;
        self.inflight_shortterm = INF_PKTS;
    }

    /// §SaveCwnd.
    fn save_cwnd(&mut self, tp: &TcpCc) {
        if self.prev_ca_state < CaState::Recovery && self.state != State::ProbeRtt {
            self.prior_cwnd = tp.snd_cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(tp.snd_cwnd);
        }
    }

    /// §Pacing Rate InitPacingRate: StartupPacingGain · InitialCwnd / (srtt or 1 ms).
    fn init_pacing_rate(&mut self, tp: &mut TcpCc) {
        let rtt_ns = if tp.srtt_ns != 0 {
            self.has_seen_rtt = true;
            tp.srtt_ns.max(NSEC_PER_USEC)
        } else {
            NSEC_PER_MSEC
        };
        let bw = (tp.snd_cwnd as u128 * BW_UNIT * NSEC_PER_USEC as u128 / rtt_ns as u128) as u64;
        tp.pacing_rate_bytes_per_s =
            Self::rate_bytes_per_sec(tp.mss, bw, self.p.startup_pacing_gain, PACING_MARGIN_PERCENT).min(tp.max_pacing_rate_bytes_per_s);
    }

    /// §SetPacingRateWithGain: never lower the rate before the pipe was filled.
    fn set_pacing_rate_with_gain(&mut self, tp: &mut TcpCc, gain: u64) {
        if !self.has_seen_rtt && tp.srtt_ns != 0 {
            self.init_pacing_rate(tp);
        }
        let rate = Self::rate_bytes_per_sec(tp.mss, self.bw(), gain, PACING_MARGIN_PERCENT).min(tp.max_pacing_rate_bytes_per_s);
        if self.full_bw_reached || rate > tp.pacing_rate_bytes_per_s {
            tp.pacing_rate_bytes_per_s = rate;
        }
    }

    // ---------------------------------------------------------------------------------------
    // State entries (§Startup, §Drain, §ProbeBW Algorithm Details, §ProbeRTT).

    /// §EnterStartup.
    fn enter_startup(&mut self) {
        self.state = State::Startup;
        self.pacing_gain = self.p.startup_pacing_gain;
        self.cwnd_gain = self.p.startup_cwnd_gain;
    }

    /// §EnterDrain (+ Linux: ssthresh exported for monitoring, congestion signals reset).
    fn enter_drain(&mut self, tp: &mut TcpCc) {
        self.state = State::Drain;
        self.pacing_gain = self.p.drain_pacing_gain;
        self.cwnd_gain = DEFAULT_CWND_GAIN;
        self.drain_start_round = self.round_count;
        tp.snd_ssthresh = self.inflight(tp, self.max_bw(), UNIT);
        self.reset_congestion_signals();
    }

    /// §PickProbeWait: rounds_since_probe_up = U{0,1}, wait = 2 s + U(0, 1 s).
    fn pick_probe_wait(&mut self) {
        self.rounds_since_probe_up = self.rand_below(PROBE_RAND_ROUNDS as u64);
        self.bw_probe_wait_ns = PROBE_WAIT_BASE_NS + self.rand_below(PROBE_WAIT_RAND_NS);
    }

    /// §StartProbeBW_DOWN. Leaving UP arms the max_bw clock advance (see header).
    fn start_probe_bw_down(&mut self, tp: &TcpCc) {
        if self.state == State::ProbeBwUp {
            self.max_bw_advance_pending = true;
        }
        self.reset_congestion_signals();
        self.probe_up_acked_per_inc = INF_PKTS;
        self.pick_probe_wait();
        self.cycle_stamp_ns = tp.now_ns;
        self.ack_phase = AckPhase::ProbeStopping;
        self.start_round(tp);
        self.state = State::ProbeBwDown;
    }

    /// §StartProbeBW_CRUISE.
    fn start_probe_bw_cruise(&mut self) {
        self.state = State::ProbeBwCruise;
    }

    /// §StartProbeBW_REFILL (Linux: optional initial slope for ECN re-probing).
    fn start_probe_bw_refill(&mut self, tp: &TcpCc, probe_up_rounds: u32) {
        self.reset_short_term_model();
        self.bw_probe_up_rounds = probe_up_rounds;
        self.bw_probe_up_acked = 0;
        self.prev_probe_precautionary = false;
        self.ack_phase = AckPhase::Refilling;
        self.start_round(tp);
        self.state = State::ProbeBwRefill;
    }

    /// §StartProbeBW_UP.
    fn start_probe_bw_up(&mut self, tp: &TcpCc, sample_bw: u64) {
        self.ack_phase = AckPhase::ProbeStarting;
        self.start_round(tp);
        self.reset_full_bw();
        self.full_bw = sample_bw;
        self.cycle_stamp_ns = tp.now_ns;
        self.state = State::ProbeBwUp;
        self.raise_inflight_longterm_slope(tp);
    }

    /// §EnterProbeBW.
    fn enter_probe_bw(&mut self, tp: &TcpCc) {
        self.cwnd_gain = DEFAULT_CWND_GAIN;
        self.start_probe_bw_down(tp);
    }

    /// §ExitProbeRTT.
    fn exit_probe_rtt(&mut self, tp: &TcpCc) {
        self.reset_short_term_model();
        if self.full_bw_reached {
            self.start_probe_bw_down(tp);
            self.start_probe_bw_cruise();
        } else {
            self.enter_startup();
        }
    }

    // ---------------------------------------------------------------------------------------
    // Model updates.

    /// §UpdateRound (Linux `bbr_update_round_start`: valid samples only).
    fn update_round(&mut self, tp: &TcpCc, rs: &RateSample) {
        self.round_start = false;
        if rs.interval_ns > 0 && rs.has_prior && rs.prior_delivered >= self.next_round_delivered {
            self.start_round(tp);
            self.round_count += 1;
            self.rounds_since_probe_up += 1;
            self.round_start = true;
        }
    }

    /// §UpdateLatestDeliverySignals.
    fn update_latest_delivery_signals(&mut self, tp: &TcpCc, rs: &RateSample, sample_bw: u64) {
        self.loss_round_start = false;
        if rs.interval_ns <= 0 || rs.acked_sacked == 0 {
            return;
        }
        self.bw_latest = self.bw_latest.max(sample_bw);
        self.inflight_latest = self.inflight_latest.max(rs.delivered.max(0) as u32);
        if rs.prior_delivered >= self.loss_round_delivered {
            self.loss_round_delivered = tp.delivered;
            self.loss_round_start = true;
        }
    }

    /// §AdvanceLatestDeliverySignals.
    fn advance_latest_delivery_signals(&mut self, rs: &RateSample, sample_bw: u64) {
        if self.loss_round_start {
            self.bw_latest = sample_bw;
            self.inflight_latest = rs.delivered.max(0) as u32;
        }
    }

    /// §NoteLoss: the first loss of a round starts a loss round of its own.
    fn note_loss(&mut self, tp: &TcpCc) {
        if !self.loss_in_round {
            self.loss_round_delivered = tp.delivered;
        }
        self.loss_in_round = true;
        self.loss_in_cycle = true;
    }

    /// §UpdateMaxBw: app-limited samples only count if they raise the estimate.
    fn update_max_bw(&mut self, rs: &RateSample, sample_bw: u64) {
        if sample_bw > 0 && (sample_bw >= self.max_bw() || !rs.is_app_limited) {
            self.max_bw_slots[1] = self.max_bw_slots[1].max(sample_bw);
        }
    }

    /// §AdvanceMaxBwFilter (cycle_count++), keeping the old window if the new one is empty.
    fn advance_max_bw_filter(&mut self) {
        if self.max_bw_slots[1] == 0 {
            return;
        }
        self.cycle_count += 1;
        self.max_bw_slots[0] = self.max_bw_slots[1];
        self.max_bw_slots[1] = 0;
    }

    /// §UpdateCongestionSignals.
    fn update_congestion_signals(&mut self, rs: &RateSample, sample_bw: u64) {
        if rs.interval_ns <= 0 || rs.acked_sacked == 0 {
            return;
        }
        self.update_max_bw(rs, sample_bw);
        if !self.loss_round_start {
            return;
        }
        self.adapt_lower_bounds_from_congestion();
        self.loss_in_round = false;
        self.ecn_in_round = false;
    }

    /// §AdaptLowerBoundsFromCongestion (+ Linux ECN response): once per round, not when probing.
    fn adapt_lower_bounds_from_congestion(&mut self) {
        if self.is_probing_bw() {
            return;
        }
        let mut ecn_inflight = INF_PKTS;
        if self.ecn_in_round && self.variant == Variant::Linux {
            // Linux bbr_ecn_lower_bounds: inflight_lo ·= 1 − alpha·ecn_factor.
            self.init_lower_bounds(false);
            let cut = BBR_UNIT - ((self.ecn_alpha * ECN_FACTOR) >> 8);
            ecn_inflight = ((self.inflight_shortterm as u64 * cut) >> 8) as u32;
        }
        if self.loss_in_round {
            self.init_lower_bounds(true);
            // §LossLowerBounds.
            let bw_cut = (self.bw_shortterm as u128 * self.p.beta as u128 >> GAIN_SHIFT) as u64;
            self.bw_shortterm = self.bw_latest.max(bw_cut);
            let inf_cut = ((self.inflight_shortterm as u64 * self.p.beta) >> GAIN_SHIFT) as u32;
            self.inflight_shortterm = self.inflight_latest.max(inf_cut);
        }
        self.inflight_shortterm = self.inflight_shortterm.min(ecn_inflight);
        self.bw_shortterm = self.bw_shortterm.max(1);
    }

    /// §InitLowerBounds: first congestion of the cycle starts from max_bw / cwnd.
    fn init_lower_bounds(&mut self, init_bw: bool) {
        if init_bw && self.bw_shortterm == INF_BW {
            self.bw_shortterm = self.max_bw();
        }
        if self.inflight_shortterm == INF_PKTS {
            self.inflight_shortterm = self.cur_cwnd;
        }
    }

    /// §IsInflightTooHigh: loss > LossThresh of the data in flight at send (Linux and the Draft
    /// variant's ECN treatment also count CE marks, see the header).
    fn is_inflight_too_high(&self, tx_in_flight: u32, lost: u64, delivered: i64, delivered_ce: i64) -> bool {
        let (num, den) = self.p.loss_thresh;
        if lost > 0 && tx_in_flight > 0 && lost * den > tx_in_flight as u64 * num {
            return true;
        }
        if delivered_ce > 0 && delivered > 0 {
            match self.variant {
                Variant::Linux if self.ecn_eligible => {
                    let thresh = (delivered as u64 * ECN_THRESH) >> 8;
                    if delivered_ce as u64 > thresh {
                        return true;
                    }
                }
                Variant::Draft if self.ecn_as_congestion => {
                    if (lost + delivered_ce as u64) * den > tx_in_flight as u64 * num {
                        return true;
                    }
                }
                _ => {}
            }
        }
        false
    }

    /// §HandleInflightTooHigh.
    fn handle_inflight_too_high(&mut self, tp: &TcpCc, is_app_limited: bool, tx_in_flight: u32) {
        self.prev_probe_too_high = true;
        self.is_bw_probe_sample = false; // react once per probe
        if !is_app_limited {
            let beta_target = ((self.target_inflight(tp) as u64 * self.p.beta) >> GAIN_SHIFT) as u32;
            self.inflight_longterm = tx_in_flight.max(beta_target);
        }
        if self.state == State::ProbeBwUp {
            self.undo_state = Some(State::ProbeBwUp);
            self.start_probe_bw_down(tp);
        }
    }

    /// §InflightAtLoss: the inflight at which losses crossed LossThresh inside packet `P`
    /// (`tx_in_flight` includes P, `lost` includes P): inflight_prev + (thresh·inflight_prev −
    /// lost_prev) / (1 − thresh), rounded up (Linux `bbr_inflight_hi_from_lost_skb`).
    pub fn inflight_at_loss(&self, tx_in_flight: u32, lost: u64, pkt_segs: u32) -> u32 {
        let inflight_prev = tx_in_flight.saturating_sub(pkt_segs) as u64;
        let lost_prev = lost.saturating_sub(pkt_segs as u64);
        let (num, den) = self.p.loss_thresh;
        let budget = (inflight_prev * num).div_ceil(den);
        let prefix = if lost_prev >= budget { 0 } else { (budget - lost_prev) * den / (den - num) };
        (inflight_prev + prefix).min(u32::MAX as u64 - 1) as u32
    }

    /// §HandleLostPacket (Linux `.skb_marked_lost`): called once per packet the transport marks
    /// lost, with the packet's send-time snapshot, after `tp.lost` counts it.
    pub fn on_skb_marked_lost(&mut self, tp: &TcpCc, p: &PacketRateState) {
        self.note_loss(tp);
        if !self.is_bw_probe_sample {
            return; // not sent while probing for bandwidth
        }
        let lost = tp.lost.saturating_sub(p.lost);
        if self.is_inflight_too_high(p.tx_in_flight, lost, 0, 0) {
            let at_loss = self.inflight_at_loss(p.tx_in_flight, lost, 1);
            self.handle_inflight_too_high(tp, p.is_app_limited, at_loss);
        }
    }

    /// §RaiseInflightLongtermSlope: 1, 2, 4, … packets of growth per round.
    fn raise_inflight_longterm_slope(&mut self, tp: &TcpCc) {
        let growth_this_round = 1u32 << self.bw_probe_up_rounds;
        self.bw_probe_up_rounds = (self.bw_probe_up_rounds + 1).min(MAX_PROBE_UP_ROUNDS);
        self.probe_up_acked_per_inc = (tp.snd_cwnd / growth_this_round).max(1);
    }

    /// §ProbeInflightLongtermUpward.
    fn probe_inflight_longterm_upward(&mut self, tp: &TcpCc, rs: &RateSample) {
        if !tp.is_cwnd_limited || tp.snd_cwnd < self.inflight_longterm {
            return; // not fully using inflight_longterm: do not grow it
        }
        self.bw_probe_up_acked = self.bw_probe_up_acked.saturating_add(rs.acked_sacked);
        if self.bw_probe_up_acked >= self.probe_up_acked_per_inc {
            let delta = self.bw_probe_up_acked / self.probe_up_acked_per_inc;
            self.bw_probe_up_acked -= delta * self.probe_up_acked_per_inc;
            self.inflight_longterm = self.inflight_longterm.saturating_add(delta).min(INF_PKTS - 1);
        }
        if self.round_start {
            self.raise_inflight_longterm_slope(tp);
        }
    }

    /// §AdaptLongTermModel (+ Linux `bbr_adapt_upper_bounds`' per-ACK too-high check). Returns
    /// true if it decided a state transition.
    fn adapt_long_term_model(&mut self, tp: &TcpCc, rs: &RateSample, lost: u64) -> bool {
        if self.ack_phase == AckPhase::ProbeStarting && self.round_start {
            self.ack_phase = AckPhase::ProbeFeedback; // probe samples start arriving
        }
        // One round after leaving UP, once per probe (see header on the max_bw clock).
        if self.max_bw_advance_pending && self.round_start && self.is_in_probe_bw() && !rs.is_app_limited {
            self.max_bw_advance_pending = false;
            self.advance_max_bw_filter();
        }
        if self.ack_phase == AckPhase::ProbeStopping && self.round_start {
            // End of the samples from the bandwidth probe.
            self.is_bw_probe_sample = false;
            self.ack_phase = AckPhase::Init;
            // §Precautionary Bandwidth Probing: Acceleration.
            if self.is_in_probe_bw() && self.prev_probe_precautionary && !self.prev_probe_too_high {
                self.start_probe_bw_refill(tp, 0);
                return true;
            }
        }
        if self.is_inflight_too_high(rs.tx_in_flight, lost, rs.delivered, rs.delivered_ce) {
            if self.is_bw_probe_sample {
                self.handle_inflight_too_high(tp, rs.is_app_limited, rs.tx_in_flight);
            }
            return false;
        }
        // Loss rate is safe: raise the long-term bound if a higher level proved safe.
        if self.inflight_longterm == INF_PKTS {
            return false;
        }
        if rs.tx_in_flight > self.inflight_longterm {
            self.inflight_longterm = rs.tx_in_flight;
        }
        if self.state == State::ProbeBwUp {
            self.probe_inflight_longterm_upward(tp, rs);
        }
        false
    }

    /// §IsTimeToProbeBW / IsRenoCoexistenceProbeTime (+ Linux ECN re-probe).
    fn is_time_to_probe_bw(&mut self, tp: &TcpCc) -> bool {
        if self.variant == Variant::Linux
            && self.ecn_eligible
            && self.ecn_in_cycle
            && !self.loss_in_cycle
            && tp.ca_state == CaState::Open
        {
            // After an ECN-only cycle, first round's increment ≈ inflight_hi · reprobe_gain.
            let v = (self.inflight_longterm as u64 * ECN_REPROBE_GAIN) >> 8;
            let n = if v == 0 { 0 } else { 63 - v.leading_zeros() };
            self.start_probe_bw_refill(tp, n.min(MAX_PROBE_UP_ROUNDS));
            return true;
        }
        let elapsed = tp.now_ns > self.cycle_stamp_ns + self.bw_probe_wait_ns;
        let reno_rounds = (self.target_inflight(tp) as u64).min(PROBE_MAX_ROUNDS);
        if elapsed || self.rounds_since_probe_up >= reno_rounds {
            self.start_probe_bw_refill(tp, 0);
            return true;
        }
        false
    }

    /// §IsTimeToCruise.
    fn is_time_to_cruise(&self, tp: &TcpCc, inflight: u32) -> bool {
        if inflight > self.inflight_with_headroom() {
            return false; // not enough headroom
        }
        inflight <= self.inflight(tp, self.max_bw(), UNIT)
    }

    /// §IsTimeToGoDown.
    fn is_time_to_go_down(&mut self, tp: &TcpCc, inflight: u32, sample_bw: u64) -> bool {
        if self.prev_probe_too_high && inflight >= self.inflight_longterm {
            self.prev_probe_precautionary = true; // §Precautionary Bandwidth Probing: Deceleration
            return true;
        }
        if tp.is_cwnd_limited && tp.snd_cwnd >= self.inflight_longterm {
            self.reset_full_bw(); // bw is limited by inflight_longterm
            self.full_bw = sample_bw;
        } else if self.full_bw_now {
            return true; // plateau: we have used the path's bw
        }
        false
    }

    /// §UpdateProbeBWCyclePhase.
    fn update_probe_bw_cycle_phase(&mut self, tp: &TcpCc, rs: &RateSample, sample_bw: u64, lost: u64) {
        if !self.full_bw_reached {
            return;
        }
        if self.adapt_long_term_model(tp, rs, lost) {
            return;
        }
        if !self.is_in_probe_bw() {
            return;
        }
        let inflight_now = match self.variant {
            Variant::Draft => tp.packets_in_flight(),
            Variant::Linux => rs.prior_in_flight,
        };
        let inflight = self.inflight_for_checks(tp, inflight_now);
        match self.state {
            State::ProbeBwDown => {
                if self.is_time_to_probe_bw(tp) {
                    return;
                }
                if self.is_time_to_cruise(tp, inflight) {
                    self.start_probe_bw_cruise();
                }
            }
            State::ProbeBwCruise => {
                self.is_time_to_probe_bw(tp);
            }
            State::ProbeBwRefill => {
                // After one round of REFILL, start UP.
                if self.round_start {
                    self.is_bw_probe_sample = true;
                    self.start_probe_bw_up(tp, sample_bw);
                }
            }
            State::ProbeBwUp => {
                if self.is_time_to_go_down(tp, inflight, sample_bw) {
                    self.prev_probe_too_high = false; // no high loss (yet)
                    self.start_probe_bw_down(tp);
                }
            }
            _ => {}
        }
    }

    /// §CheckFullBWReached. Draft: the round-start sample vs full_bw; Linux: every
    /// non-app-limited sample may raise the baseline, rounds without growth are counted.
    fn check_full_bw_reached(&mut self, rs: &RateSample, sample_bw: u64) {
        if self.full_bw_now || rs.is_app_limited {
            return;
        }
        if self.variant == Variant::Draft && !self.round_start {
            return;
        }
        let thresh = (self.full_bw as u128 * FULL_BW_THRESH as u128 >> GAIN_SHIFT) as u64;
        if sample_bw >= thresh && !(self.variant == Variant::Draft && sample_bw == 0) {
            self.reset_full_bw(); // still growing
            self.full_bw = sample_bw;
            return;
        }
        if !self.round_start {
            return;
        }
        self.full_bw_count += 1;
        self.full_bw_now = self.full_bw_count >= FULL_BW_COUNT;
        if self.full_bw_now {
            self.full_bw_reached = true;
        }
    }

    /// Linux `bbr_handle_queue_too_high_in_startup` / §Exiting Startup Based on Packet Loss.
    fn handle_queue_too_high_in_startup(&mut self, tp: &TcpCc) {
        self.undo_state = Some(State::Startup);
        self.full_bw_reached = true;
        self.full_bw_now = true;
        let bdp = self.inflight(tp, self.max_bw(), UNIT);
        self.inflight_longterm = bdp.max(self.inflight_latest);
    }

    /// §CheckStartupHighLoss (Linux `bbr_check_loss_too_high_in_startup`): at the end of a loss
    /// round spent in fast recovery, ≥ 6 loss events and loss > LossThresh.
    fn check_startup_high_loss(&mut self, tp: &TcpCc, rs: &RateSample, lost: u64) {
        if self.full_bw_reached {
            return;
        }
        if rs.losses > 0 {
            self.loss_events_in_round = (self.loss_events_in_round + 1).min(0xF);
        }
        if self.loss_round_start
            && tp.ca_state == CaState::Recovery
            && self.loss_events_in_round >= STARTUP_FULL_LOSS_CNT
            && self.is_inflight_too_high(rs.tx_in_flight, lost, 0, 0)
        {
            self.handle_queue_too_high_in_startup(tp);
            return;
        }
        if self.loss_round_start {
            self.loss_events_in_round = 0;
        }
    }

    /// §CheckStartupDone.
    fn check_startup_done(&mut self, tp: &mut TcpCc, rs: &RateSample, lost: u64) {
        self.check_startup_high_loss(tp, rs, lost);
        if self.state == State::Startup && self.full_bw_reached {
            self.enter_drain(tp);
        }
    }

    /// §CheckDrainDone.
    fn check_drain_done(&mut self, tp: &TcpCc) {
        if self.state != State::Drain {
            return;
        }
        let inflight = self.inflight_for_checks(tp, tp.packets_in_flight());
        if inflight <= self.inflight(tp, self.max_bw(), UNIT) || self.round_count > self.drain_start_round + DRAIN_MAX_ROUNDS {
            self.enter_probe_bw(tp);
        }
    }

    /// §UpdateACKAggregation. Draft: max filter over 10 rounds (1 in Startup); Linux: two 5-round
    /// slots (1 in Startup).
    fn update_ack_aggregation(&mut self, tp: &TcpCc, rs: &RateSample) {
        if rs.acked_sacked == 0 || rs.delivered < 0 || rs.interval_ns <= 0 {
            return;
        }
        let now = tp.now_ns;
        if self.variant == Variant::Linux && self.round_start {
            self.extra_acked_win_rounds = (self.extra_acked_win_rounds + 1).min(0x1F);
            let thresh = if self.full_bw_reached { self.p.extra_acked_win_rounds as u32 } else { 1 };
            if self.extra_acked_win_rounds >= thresh {
                self.extra_acked_win_rounds = 0;
                self.extra_acked_win_idx ^= 1;
                self.extra_acked_slots[self.extra_acked_win_idx] = 0;
            }
        }
        let interval = now.saturating_sub(self.extra_acked_interval_start_ns) as u128;
        let mut expected = (self.bw() as u128 * interval / (BW_UNIT * NSEC_PER_USEC as u128)).min(u64::MAX as u128) as u64;
        // Reset the interval if the ACK rate fell below the expected rate (or after 2^20 packets).
        if self.extra_acked_delivered <= expected || self.extra_acked_delivered + rs.acked_sacked as u64 >= 1 << 20 {
            self.extra_acked_delivered = 0;
            self.extra_acked_interval_start_ns = now;
            expected = 0;
        }
        self.extra_acked_delivered += rs.acked_sacked as u64;
        let extra = (self.extra_acked_delivered - expected).min(tp.snd_cwnd as u64) as u32;
        match self.variant {
            Variant::Draft => {
                let win = if self.full_bw_reached { self.p.extra_acked_win_rounds } else { 1 };
                self.extra_acked_filter.update(win, self.round_count, extra as u64);
            }
            Variant::Linux => {
                let i = self.extra_acked_win_idx;
                self.extra_acked_slots[i] = self.extra_acked_slots[i].max(extra);
            }
        }
    }

    /// §BBR.extra_acked (Linux: capped at 100 ms of bw).
    fn extra_acked(&self) -> u32 {
        match self.variant {
            Variant::Draft => self.extra_acked_filter.get().min(u32::MAX as u64) as u32,
            Variant::Linux => {
                let cap = (self.bw() as u128 * EXTRA_ACKED_MAX_NS / (BW_UNIT * NSEC_PER_USEC as u128)).min(u32::MAX as u128) as u32;
                self.extra_acked_slots[0].max(self.extra_acked_slots[1]).min(cap)
            }
        }
    }

    /// ProbeRTT cwnd = max(ProbeRTTCwndGain · BDP, MinPipeCwnd) (§Modulating cwnd in ProbeRTT).
    fn probe_rtt_cwnd(&self) -> u32 {
        self.bdp_multiple(self.bw(), PROBE_RTT_CWND_GAIN).max(MIN_PIPE_CWND)
    }

    /// §CheckProbeRTTDone.
    fn check_probe_rtt_done(&mut self, tp: &mut TcpCc) {
        match self.probe_rtt_done_stamp_ns {
            Some(done) if tp.now_ns > done => {}
            _ => return,
        }
        self.probe_rtt_min_stamp_ns = tp.now_ns; // schedule the next ProbeRTT
        tp.snd_cwnd = tp.snd_cwnd.max(self.prior_cwnd); // RestoreCwnd
        self.exit_probe_rtt(tp);
    }

    /// §UpdateMinRTT + §CheckProbeRTT + §HandleProbeRTT (draft-06 / Linux 5 s sub-window).
    fn update_min_rtt_and_probe_rtt(&mut self, tp: &mut TcpCc, rs: &RateSample) {
        let now = tp.now_ns;
        let probe_rtt_expired = now > self.probe_rtt_min_stamp_ns.saturating_add(PROBE_RTT_INTERVAL_NS);
        if rs.rtt_ns >= 0 && ((rs.rtt_ns as u64) < self.probe_rtt_min_ns || (probe_rtt_expired && !rs.is_ack_delayed)) {
            self.probe_rtt_min_ns = rs.rtt_ns as u64;
            self.probe_rtt_min_stamp_ns = now;
        }
        let min_rtt_expired = now > self.min_rtt_stamp_ns.saturating_add(MIN_RTT_FILTER_NS);
        if self.probe_rtt_min_ns <= self.min_rtt_ns || min_rtt_expired {
            self.min_rtt_ns = self.probe_rtt_min_ns;
            self.min_rtt_stamp_ns = self.probe_rtt_min_stamp_ns;
        }
        if probe_rtt_expired && !self.idle_restart && self.state != State::ProbeRtt {
            // §EnterProbeRTT.
            if self.state == State::ProbeBwUp {
                self.max_bw_advance_pending = true;
            }
            self.state = State::ProbeRtt;
            self.pacing_gain = UNIT;
            self.cwnd_gain = PROBE_RTT_CWND_GAIN;
            self.save_cwnd(tp);
            self.probe_rtt_done_stamp_ns = None;
            self.ack_phase = AckPhase::ProbeStopping;
            self.start_round(tp);
        }
        if self.state == State::ProbeRtt {
            // Ignore low-rate samples (MarkConnectionAppLimited).
            let v = tp.delivered + tp.packets_in_flight() as u64;
            tp.app_limited = if v == 0 { 1 } else { v };
            if self.probe_rtt_done_stamp_ns.is_none() && tp.packets_in_flight() <= self.probe_rtt_cwnd() {
                self.probe_rtt_done_stamp_ns = Some(now + PROBE_RTT_DURATION_NS);
                self.probe_rtt_round_done = false;
                self.start_round(tp);
            } else if self.probe_rtt_done_stamp_ns.is_some() {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(tp);
                }
            }
        }
        if rs.delivered > 0 {
            self.idle_restart = false;
        }
    }

    /// Linux `bbr_update_ecn_alpha` (+ Startup ECN exit), once per round.
    fn update_ecn_alpha(&mut self, tp: &TcpCc) {
        if !self.ecn_eligible && tp.ecn_ok && self.min_rtt_ns <= ECN_MAX_RTT_NS {
            self.ecn_eligible = true;
        }
        if !self.ecn_eligible {
            return;
        }
        let delivered = tp.delivered.saturating_sub(self.alpha_last_delivered);
        let ce = tp.delivered_ce.saturating_sub(self.alpha_last_delivered_ce);
        if delivered == 0 {
            return;
        }
        let ce_ratio = (ce << 8) / delivered;
        let alpha = (((BBR_UNIT - ECN_ALPHA_GAIN) * self.ecn_alpha) >> 8) + ((ECN_ALPHA_GAIN * ce_ratio) >> 8);
        self.ecn_alpha = alpha.min(BBR_UNIT);
        self.alpha_last_delivered = tp.delivered;
        self.alpha_last_delivered_ce = tp.delivered_ce;
        // Exit Startup after FULL_ECN_CNT consecutive rounds with CE ratio ≥ 1/2.
        if !self.full_bw_reached {
            if ce_ratio >= ECN_THRESH {
                self.startup_ecn_rounds += 1;
            } else {
                self.startup_ecn_rounds = 0;
            }
            if self.startup_ecn_rounds >= FULL_ECN_CNT {
                self.handle_queue_too_high_in_startup(tp);
            }
        }
    }

    /// §SetCwnd + BoundCwndForProbeRTT + BoundCwndForModel, with §Modulating cwnd in Loss
    /// Recovery (restore the saved cwnd on leaving recovery; no packet conservation in v3).
    fn set_cwnd(&mut self, tp: &mut TcpCc, rs: &RateSample) {
        let mut cwnd = tp.snd_cwnd;
        if self.prev_ca_state >= CaState::Recovery && tp.ca_state < CaState::Recovery {
            cwnd = cwnd.max(self.prior_cwnd); // RestoreCwnd on exiting recovery
        }
        let acked = rs.acked_sacked;
        if acked > 0 {
            // §UpdateMaxInflight.
            let max_inflight = self.quantization_budget(tp, self.bdp_multiple(self.bw(), self.cwnd_gain).saturating_add(self.extra_acked()));
            if self.full_bw_reached {
                cwnd = cwnd.saturating_add(acked).min(max_inflight);
            } else if cwnd < max_inflight || tp.delivered < self.init_cwnd as u64 {
                cwnd = cwnd.saturating_add(acked);
            }
            cwnd = cwnd.max(MIN_PIPE_CWND);
        }
        tp.snd_cwnd = cwnd.min(tp.snd_cwnd_clamp);
        if self.state == State::ProbeRtt {
            tp.snd_cwnd = tp.snd_cwnd.min(self.probe_rtt_cwnd());
        }
        self.cur_cwnd = tp.snd_cwnd;
        self.bound_cwnd_for_model(tp);
    }

    /// §BoundCwndForModel.
    fn bound_cwnd_for_model(&mut self, tp: &mut TcpCc) {
        let mut cap = INF_PKTS;
        if self.is_in_probe_bw() && self.state != State::ProbeBwCruise {
            cap = self.inflight_longterm;
        } else if self.state == State::ProbeRtt || self.state == State::ProbeBwCruise {
            cap = self.inflight_with_headroom();
        }
        cap = cap.min(self.inflight_shortterm).max(MIN_PIPE_CWND);
        tp.snd_cwnd = tp.snd_cwnd.min(cap);
        self.cur_cwnd = tp.snd_cwnd;
    }

    /// Gains of the current state (§Summary of Control Behavior in the State Machine).
    fn update_gains(&mut self) {
        let (p, c) = match self.state {
            State::Startup => (self.p.startup_pacing_gain, self.p.startup_cwnd_gain),
            State::Drain => (self.p.drain_pacing_gain, DEFAULT_CWND_GAIN),
            State::ProbeBwDown => (self.p.down_pacing_gain, DEFAULT_CWND_GAIN),
            State::ProbeBwCruise | State::ProbeBwRefill => (UNIT, DEFAULT_CWND_GAIN),
            State::ProbeBwUp => (UP_PACING_GAIN, UP_CWND_GAIN),
            State::ProbeRtt => (UNIT, PROBE_RTT_CWND_GAIN),
        };
        self.pacing_gain = p;
        self.cwnd_gain = c;
    }
}

impl CongestionOps for Bbr3 {
    fn has_cong_control(&self) -> bool {
        true
    }

    fn skb_marked_lost(&mut self, tp: &TcpCc, p: &PacketRateState) {
        self.on_skb_marked_lost(tp, p)
    }

    /// §Initialization OnInit.
    fn init(&mut self, tp: &mut TcpCc) {
        let seed = self.rng;
        *self = Bbr3::new(seed, self.variant);
        self.init_cwnd = tp.snd_cwnd.clamp(1, 0x7F);
        self.prior_cwnd = tp.prior_cwnd;
        tp.snd_ssthresh = TCP_INFINITE_SSTHRESH;
        self.next_round_delivered = tp.delivered;
        // Start sampling the loss round after the first flight is acked (Linux).
        self.loss_round_delivered = tp.delivered + 1;
        self.min_rtt_ns = tp.min_rtt_ns;
        self.min_rtt_stamp_ns = tp.now_ns;
        self.probe_rtt_min_ns = tp.min_rtt_ns;
        self.probe_rtt_min_stamp_ns = tp.now_ns;
        self.extra_acked_interval_start_ns = tp.now_ns;
        self.alpha_last_delivered = tp.delivered;
        self.alpha_last_delivered_ce = tp.delivered_ce;
        self.last_delivered_ce = tp.delivered_ce;
        self.cur_cwnd = tp.snd_cwnd;
        self.ecn_as_congestion = self.variant == Variant::Draft && tp.ecn_ok;
        self.init_pacing_rate(tp);
        self.enter_startup();
        tp.pacing_enabled = true;
    }

    /// Entering Recovery/Loss (§OnEnterFastRecovery / OnEnterRTO): SaveCwnd + SaveStateUponLoss.
    fn ssthresh(&mut self, tp: &TcpCc) -> u32 {
        self.save_cwnd(tp);
        self.undo_bw_shortterm = self.bw_shortterm;
        self.undo_inflight_shortterm = self.inflight_shortterm;
        self.undo_inflight_longterm = self.inflight_longterm;
        tp.snd_ssthresh
    }

    /// §Per-ACK Steps UpdateOnACK.
    fn cong_control(&mut self, tp: &mut TcpCc, rs: &RateSample) {
        self.cur_cwnd = tp.snd_cwnd;
        self.ecn_as_congestion = self.variant == Variant::Draft && tp.ecn_ok;
        let ce_now = tp.delivered_ce > self.last_delivered_ce;
        self.last_delivered_ce = tp.delivered_ce;
        let lost = rs.lost + rs.losses as u64; // RS.lost incl. this ACK's marking (header)
        let sample_bw = Self::bw_sample(rs);

        self.update_round(tp, rs);
        if self.round_start && self.variant == Variant::Linux {
            self.update_ecn_alpha(tp);
        }
        self.ecn_in_round |= self.ecn_eligible && ce_now;
        self.update_latest_delivery_signals(tp, rs, sample_bw);
        // NoteLoss per loss event (the per-packet hook is missing, header); the Draft variant
        // treats new CE marks as congestion.
        if rs.losses > 0 || (self.ecn_as_congestion && ce_now) {
            self.note_loss(tp);
        }
        self.update_congestion_signals(rs, sample_bw);
        self.update_ack_aggregation(tp, rs);
        self.check_full_bw_reached(rs, sample_bw);
        self.check_startup_done(tp, rs, lost);
        self.check_drain_done(tp);
        self.update_probe_bw_cycle_phase(tp, rs, sample_bw, lost);
        self.update_min_rtt_and_probe_rtt(tp, rs);
        self.advance_latest_delivery_signals(rs, sample_bw);
        self.update_gains();

        // §UpdateControlParameters.
        self.set_pacing_rate_with_gain(tp, self.pacing_gain);
        self.set_cwnd(tp, rs);
        if self.prev_ca_state >= CaState::Recovery && tp.ca_state < CaState::Recovery {
            self.undo_state = None; // the loss episode is over
        }
        self.prev_ca_state = tp.ca_state;
        self.loss_in_cycle |= lost > 0;
        self.ecn_in_cycle |= rs.delivered_ce > 0;
    }

    /// RTO: §OnEnterRTO cwnd = inflight + 1 (no-op if the transport already cut); Linux variant
    /// also resets the full-bw detector and seeds inflight_lo (`bbr_set_state`).
    fn set_state(&mut self, tp: &mut TcpCc, new_state: CaState) {
        if new_state != CaState::Loss {
            return;
        }
        let loss_cwnd = tp.packets_in_flight() + 1;
        if tp.snd_cwnd > loss_cwnd {
            tp.set_cwnd(loss_cwnd);
        }
        if self.variant == Variant::Linux {
            self.reset_full_bw();
            if !self.is_probing_bw() && self.inflight_shortterm == INF_PKTS {
                self.inflight_shortterm = tp.snd_cwnd.max(self.prior_cwnd);
            }
        }
        self.prev_ca_state = CaState::Loss;
    }

    /// §HandleSpuriousLossDetection.
    fn undo_cwnd(&mut self, tp: &mut TcpCc) -> u32 {
        self.loss_in_round = false;
        self.reset_full_bw();
        self.bw_shortterm = self.bw_shortterm.max(self.undo_bw_shortterm);
        self.inflight_shortterm = self.inflight_shortterm.max(self.undo_inflight_shortterm);
        self.inflight_longterm = self.inflight_longterm.max(self.undo_inflight_longterm);
        match self.undo_state {
            Some(State::Startup) if self.state != State::Startup => {
                self.full_bw_reached = false;
                if self.state != State::ProbeRtt {
                    self.enter_startup();
                }
            }
            Some(State::ProbeBwUp) if self.state != State::ProbeBwUp => {
                if self.state != State::ProbeRtt {
                    self.start_probe_bw_refill(tp, 0);
                }
            }
            _ => {}
        }
        self.undo_state = None;
        tp.snd_cwnd.max(self.prior_cwnd) // RestoreCwnd
    }

    /// §HandleRestartFromIdle.
    fn cwnd_event(&mut self, tp: &mut TcpCc, ev: CwndEvent) {
        if ev == CwndEvent::TxStart && tp.app_limited != 0 {
            self.idle_restart = true;
            self.extra_acked_interval_start_ns = tp.now_ns;
            self.extra_acked_delivered = 0;
            if self.is_in_probe_bw() {
                self.set_pacing_rate_with_gain(tp, UNIT); // pace at exactly bw
            } else if self.state == State::ProbeRtt {
                self.check_probe_rtt_done(tp);
            }
        }
    }

    /// §Send Quantum.
    fn tso_segs(&self, tp: &TcpCc) -> Option<u32> {
        Some(self.send_quantum_segs(tp))
    }

    /// Phase codes: 0 startup, 1 drain, 2 probe_down, 3 probe_cruise, 4 probe_refill, 5 probe_up,
    /// 6 probe_rtt.
    fn sample(&self, tp: &TcpCc) -> CcStateSample {
        let bytes_per_s = (self.bw().min(u64::MAX >> 8) as u128 * tp.mss as u128 * 1_000_000) >> BW_SCALE;
        let finite = |v: u32| if v == INF_PKTS { 0.0 } else { v as f64 };
        CcStateSample {
            phase: self.state.name(),
            phase_code: self.state as u8,
            bw_bps: bytes_per_s as f64 * 8.0,
            min_rtt_ns: self.min_rtt_ns,
            pacing_gain: self.pacing_gain as f64 / UNIT as f64,
            cwnd_gain: self.cwnd_gain as f64 / UNIT as f64,
            inflight_hi_segs: finite(self.inflight_longterm),
            inflight_lo_segs: finite(self.inflight_shortterm),
            ecn_alpha: if self.variant == Variant::Linux { self.ecn_alpha as f64 / BBR_UNIT as f64 } else { 0.0 },
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod tests {
    //! Checked against the draft's rules and the link's physics (the appendix "BBR Example Test
    //! Cases"), never against numbers this implementation produced for itself.
    use super::*;
    use crate::rate::{self, PacketRateState};
    use std::collections::VecDeque;

    const MS: u64 = NSEC_PER_MSEC;
    const SEC: u64 = NSEC_PER_SEC;
    const MSS: u32 = 1500;

    struct Policer {
        ns_per_token: u64,
        depth: u64,
        tokens_ns: u64,
        last_ns: u64,
    }

    impl Policer {
        fn admit(&mut self, now: u64) -> bool {
            let cap = self.depth * self.ns_per_token;
            self.tokens_ns = (self.tokens_ns + (now - self.last_ns)).min(cap);
            self.last_ns = now;
            if self.tokens_ns >= self.ns_per_token {
                self.tokens_ns -= self.ns_per_token;
                true
            } else {
                false
            }
        }
    }

    struct Pkt {
        seq: u64,
        sent_ns: u64,
        st: PacketRateState,
        ack_at: Option<u64>,
        ce: bool,
    }

    #[derive(Clone, Copy, Debug, PartialEq)]
    enum Ev {
        Ack { losses: u32 },
        Send,
    }

    /// bbr1.rs's synthetic bottleneck (FIFO with a service time, buffer limit, optional policer,
    /// propagation delay after the bottleneck, per-packet ACKs, loss detected when a later packet
    /// is acked, no retransmission), with the hooks called in the transport's order (deliveries
    /// tagged, then loss marking, `ssthresh`/`set_state`, `rate::generate`, `cong_control`), plus:
    /// the per-packet loss hook the transport lacks (`skb_marked_lost`), an application rate
    /// limit / pause, random loss, ECN marking above a queue threshold, and link-rate changes.
    struct Sim {
        tp: TcpCc,
        bbr: Bbr3,
        now: u64,
        ns_per_pkt: u64,
        prop_ns: u64,
        buf_pkts: usize,
        policer: Option<Policer>,
        pkts: VecDeque<Pkt>,
        departs: VecDeque<u64>,
        link_free: u64,
        next_seq: u64,
        next_send: u64,
        recovery_high: u64,
        /// Application supplies one packet per this many ns (None: unlimited).
        app_ns_per_pkt: Option<u64>,
        app_next_data: u64,
        pause_until: u64,
        loss_p: f64,
        rng: u64,
        ecn_k: Option<usize>,
        lost_total: u64,
        /// C.is_cwnd_limited as the draft defines it: cwnd fully used at any point in the last
        /// packet-timed round (Linux tcp_cwnd_validate), not just on the latest send.
        cwnd_hit_this_round: bool,
        cwnd_hit_last_round: bool,
        last_sample_bw: u64,
        last_rs: RateSample,
    }

    impl Sim {
        fn new(rate_pps: u64, prop_ms: u64, variant: Variant) -> Sim {
            Self::with(rate_pps, prop_ms * MS, variant, false)
        }

        fn with(rate_pps: u64, prop_ns: u64, variant: Variant, ecn: bool) -> Sim {
            let mut tp = TcpCc::new(MSS, 10);
            tp.ecn_ok = ecn;
            let mut bbr = Bbr3::new(42, variant);
            bbr.init(&mut tp);
            Sim {
                tp,
                bbr,
                now: 0,
                ns_per_pkt: NSEC_PER_SEC / rate_pps,
                prop_ns,
                buf_pkts: usize::MAX,
                policer: None,
                pkts: VecDeque::new(),
                departs: VecDeque::new(),
                link_free: 0,
                next_seq: 0,
                next_send: 0,
                recovery_high: 0,
                app_ns_per_pkt: None,
                app_next_data: 0,
                pause_until: 0,
                loss_p: 0.0,
                rng: 1,
                ecn_k: None,
                lost_total: 0,
                cwnd_hit_this_round: false,
                cwnd_hit_last_round: false,
                last_sample_bw: 0,
                last_rs: RateSample::default(),
            }
        }

        fn rate_pps(&self) -> f64 {
            NSEC_PER_SEC as f64 / self.ns_per_pkt as f64
        }

        /// Physical BDP in packets: rate × (propagation + one service time).
        fn bdp_phys(&self) -> f64 {
            self.rate_pps() * (self.prop_ns + self.ns_per_pkt) as f64 / 1e9
        }

        fn set_app_rate(&mut self, pps: Option<f64>) {
            self.app_ns_per_pkt = pps.map(|p| (1e9 / p) as u64);
            self.app_next_data = self.now;
        }

        fn rand(&mut self) -> f64 {
            self.rng = self.rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (self.rng >> 11) as f64 / (1u64 << 53) as f64
        }

        fn data_time(&self) -> u64 {
            let t = if self.app_ns_per_pkt.is_some() { self.app_next_data } else { 0 };
            t.max(self.pause_until)
        }

        fn step(&mut self) -> Ev {
            let next_ack = self.pkts.iter().find_map(|p| p.ack_at);
            let can_send = self.tp.packets_in_flight() < self.tp.snd_cwnd;
            let t_send = if can_send { self.next_send.max(self.now).max(self.data_time()) } else { u64::MAX };
            match next_ack {
                Some(t_ack) if t_ack <= t_send => {
                    self.now = t_ack;
                    self.on_ack()
                }
                _ => {
                    assert!(t_send != u64::MAX, "deadlock");
                    // The window and pacer allowed a send earlier but the application had no
                    // data: the connection was app-limited (tcp_rate_check_app_limited).
                    if self.data_time() > self.next_send.max(self.now) {
                        self.tp.now_ns = self.next_send.max(self.now);
                        rate::check_app_limited(&mut self.tp, 0);
                    }
                    self.now = t_send;
                    self.send();
                    Ev::Send
                }
            }
        }

        fn send(&mut self) {
            let now = self.now;
            self.tp.now_ns = now;
            let first = self.tp.packets_in_flight() == 0;
            if first && self.tp.packets_out == 0 {
                self.bbr.cwnd_event(&mut self.tp, CwndEvent::TxStart);
            }
            self.tp.packets_out += 1;
            let seq = self.next_seq;
            self.next_seq += 1;
            if let Some(a) = self.app_ns_per_pkt {
                self.app_next_data = self.app_next_data.max(now.saturating_sub(a)) + a;
            }
            let st = rate::on_packet_sent(&mut self.tp, now, seq, false, first);
            let mut admitted = self.policer.as_mut().is_none_or(|p| p.admit(now));
            while self.departs.front().is_some_and(|&d| d <= now) {
                self.departs.pop_front();
            }
            if self.departs.len() >= self.buf_pkts {
                admitted = false;
            }
            if admitted && self.loss_p > 0.0 && self.rand() < self.loss_p {
                admitted = false;
            }
            let ce = admitted && self.ecn_k.is_some_and(|k| self.departs.len() >= k);
            let ack_at = admitted.then(|| {
                let depart = self.link_free.max(now) + self.ns_per_pkt;
                self.link_free = depart;
                self.departs.push_back(depart);
                depart + self.prop_ns
            });
            self.pkts.push_back(Pkt { seq, sent_ns: now, st, ack_at, ce });
            self.tp.lsndtime_ns = now;
            let rate = self.tp.pacing_rate_bytes_per_s.max(1);
            let len_ns = (MSS as u128 * NSEC_PER_SEC as u128 / rate as u128) as u64;
            self.next_send = self.next_send.max(now) + len_ns;
            self.tp.wstamp_ns = self.next_send;
            self.cwnd_hit_this_round |= self.tp.packets_in_flight() >= self.tp.snd_cwnd;
            self.tp.is_cwnd_limited = self.cwnd_hit_this_round || self.cwnd_hit_last_round;
        }

        fn on_ack(&mut self) -> Ev {
            let now = self.now;
            self.tp.now_ns = now;
            let prior_in_flight = self.tp.packets_in_flight();
            let idx = self.pkts.iter().position(|p| p.ack_at.is_some()).unwrap();
            let mut p = self.pkts.remove(idx).unwrap();
            self.tp.packets_out -= 1;
            self.tp.delivered += 1;
            if p.ce {
                self.tp.delivered_ce += 1;
            }
            let mut rs = RateSample::default();
            rate::on_packet_delivered(&mut self.tp, &mut p.st, &mut rs);
            let rtt = now - p.sent_ns;
            self.tp.srtt_ns = if self.tp.srtt_ns == 0 { rtt } else { (7 * self.tp.srtt_ns + rtt) / 8 };
            self.tp.min_rtt_ns = self.tp.min_rtt_ns.min(rtt);
            // Loss marking (RACK-like: everything sent before the acked packet and not acked).
            let mut losses = 0u32;
            for _ in 0..idx {
                let l = self.pkts.pop_front().unwrap();
                losses += 1;
                self.tp.packets_out -= 1;
                self.tp.lost += 1;
                self.lost_total += 1;
                self.bbr.skb_marked_lost(&self.tp, &l.st);
            }
            if losses > 0 && self.tp.ca_state < CaState::Recovery {
                self.tp.snd_ssthresh = self.bbr.ssthresh(&self.tp);
                self.tp.prior_cwnd = self.tp.snd_cwnd;
                self.bbr.set_state(&mut self.tp, CaState::Recovery);
                self.tp.ca_state = CaState::Recovery;
                self.recovery_high = self.next_seq;
            } else if losses > 0 {
                // Retransmissions of these are sent now: recovery lasts at least another round.
                self.recovery_high = self.next_seq;
            } else if self.tp.ca_state == CaState::Recovery && p.seq >= self.recovery_high {
                self.bbr.set_state(&mut self.tp, CaState::Open);
                self.tp.ca_state = CaState::Open;
            }
            rate::generate(&mut self.tp, now, 1, losses, &mut rs);
            rs.rtt_ns = rtt as i64;
            rs.prior_in_flight = prior_in_flight;
            self.bbr.cong_control(&mut self.tp, &rs);
            if self.bbr.round_start {
                self.cwnd_hit_last_round = self.cwnd_hit_this_round;
                self.cwnd_hit_this_round = false;
            }
            self.last_sample_bw = Bbr3::bw_sample(&rs);
            self.last_rs = rs;
            Ev::Ack { losses }
        }

        fn run_until(&mut self, mut stop: impl FnMut(&Sim, Ev) -> bool, limit_ns: u64) {
            while self.now < limit_ns {
                let ev = self.step();
                if stop(self, ev) {
                    return;
                }
            }
            panic!("condition not reached by {} ms", limit_ns / MS);
        }

        fn run_for(&mut self, ns: u64) {
            let end = self.now + ns;
            self.run_until(|s, _| s.now >= end, end + SEC);
        }

        fn max_bw_pps(&self) -> f64 {
            self.bbr.max_bw() as f64 / BW_UNIT as f64 * 1e6
        }

        fn bw_pps(&self) -> f64 {
            self.bbr.bw() as f64 / BW_UNIT as f64 * 1e6
        }

        fn gain(&self) -> f64 {
            self.bbr.pacing_gain as f64 / UNIT as f64
        }

        fn to_probe_bw(&mut self) {
            self.run_until(|s, _| s.bbr.is_in_probe_bw(), 20 * SEC);
        }
    }

    /// 2000 packets/s (24 Mbit/s), 40 ms: BDP ≈ 80 packets.
    fn link(v: Variant) -> Sim {
        Sim::new(2000, 40, v)
    }

    const BOTH: [Variant; 2] = [Variant::Draft, Variant::Linux];

    fn drain_gain(v: Variant) -> f64 {
        if v == Variant::Draft { 0.5 } else { 1.0 / 2.885 }
    }

    fn down_gain(v: Variant) -> f64 {
        if v == Variant::Draft { 0.90 } else { 0.91 }
    }

    /// Startup: §Exiting Startup on Bandwidth Plateau.
    #[test]
    fn startup_exits_after_three_rounds_without_25_percent_growth_with_max_bw_within_2_percent() {
        for v in BOTH {
            let mut sim = link(v);
            // (sample bw, app-limited, round start) of every ACK, to replay the full-pipe rule.
            let mut samples: Vec<(u64, bool, bool)> = Vec::new();
            let mut gains_ok = true;
            sim.run_until(
                |s, ev| {
                    if matches!(ev, Ev::Ack { .. }) {
                        if s.last_rs.interval_ns > 0 {
                            samples.push((s.last_sample_bw, s.last_rs.is_app_limited, s.bbr.round_start));
                        }
                        if s.bbr.state == State::Startup {
                            gains_ok &= (s.gain() - 2.77).abs() < 0.005 && s.bbr.cwnd_gain == 2 * UNIT;
                        }
                        return s.bbr.state != State::Startup;
                    }
                    false
                },
                10 * SEC,
            );
            // §CheckFullBWReached: baseline reset on ≥ 25 % growth (Draft: round-start samples
            // only; Linux: any sample), otherwise one more round without growth; full at 3.
            let (mut full_bw, mut cnt, mut exit_at) = (0f64, 0, None);
            for (i, &(bw, app, rstart)) in samples.iter().enumerate() {
                if app || (v == Variant::Draft && !rstart) {
                    continue;
                }
                if bw as f64 >= 1.25 * full_bw {
                    full_bw = bw as f64;
                    cnt = 0;
                } else if rstart {
                    cnt += 1;
                    if cnt == 3 {
                        exit_at = Some(i);
                        break;
                    }
                }
            }
            assert_eq!(exit_at, Some(samples.len() - 1), "{v:?}: exit on the ACK where the spec's rule says full");
            assert!(gains_ok, "{v:?}: Startup gains are 2.77 pacing / 2.0 cwnd");
            assert_eq!(sim.bbr.state, State::Drain, "{v:?}");
            assert!(sim.bbr.full_bw_now && sim.bbr.full_bw_reached);
            assert_eq!(sim.bbr.full_bw_count, 3);
            let est = sim.max_bw_pps();
            assert!((est - 2000.0).abs() / 2000.0 < 0.02, "{v:?}: max_bw {est} pkt/s vs link 2000");
            assert!((sim.gain() - drain_gain(v)).abs() < 0.005, "{v:?}: drain gain {}", sim.gain());
            assert_eq!(sim.tp.snd_ssthresh, sim.bbr.inflight(&sim.tp, sim.bbr.max_bw(), UNIT));
        }
    }

    /// §Pacing Rate: never lower the pacing rate before full_bw_reached.
    #[test]
    fn startup_never_lowers_the_pacing_rate() {
        let mut sim = link(Variant::Draft);
        let mut last = 0;
        let mut acks = 0;
        sim.run_until(
            |s, ev| {
                if matches!(ev, Ev::Ack { .. }) {
                    acks += 1;
                    if acks > 1 && !s.bbr.full_bw_reached {
                        assert!(s.tp.pacing_rate_bytes_per_s >= last, "lowered at ACK {acks}");
                    }
                    last = s.tp.pacing_rate_bytes_per_s;
                }
                s.bbr.full_bw_reached
            },
            10 * SEC,
        );
    }

    /// §Exiting STARTUP on Loss When Application-Limited, and §Never Exiting STARTUP When
    /// Application-Limited With No Loss.
    #[test]
    fn startup_exits_on_loss_even_when_app_limited_but_never_without_loss() {
        for v in BOTH {
            // App-limited at 60 % of the link, 5 % random loss: > 2 % and many loss events per round.
            let mut sim = link(v);
            // App-limited at 80 % of the link (64 packets per round), 15 % random loss: > 2 % and
            // more than 6 loss events per round.
            sim.set_app_rate(Some(1600.0));
            sim.loss_p = 0.15;
            let mut app_limited_samples = 0;
            sim.run_until(
                |s, ev| {
                    if matches!(ev, Ev::Ack { .. }) && s.tp.app_limited != 0 {
                        app_limited_samples += 1;
                    }
                    s.bbr.state != State::Startup
                },
                20 * SEC,
            );
            assert!(app_limited_samples > 10, "the flow was app-limited");
            assert!(matches!(sim.bbr.state, State::Drain | State::ProbeBwDown | State::ProbeBwCruise), "{v:?}: {:?}", sim.bbr.state);
            assert!(sim.bbr.full_bw_reached && sim.bbr.full_bw_now);
            assert_eq!(sim.tp.ca_state, CaState::Recovery, "exit at the end of a recovery round");
            assert_eq!(sim.bbr.undo_state, Some(State::Startup));
            // inflight_longterm = max(BDP, inflight_latest): at least the estimated BDP.
            let bdp = sim.bbr.inflight(&sim.tp, sim.bbr.max_bw(), UNIT);
            assert!(sim.bbr.inflight_longterm >= bdp && sim.bbr.inflight_longterm != INF_PKTS);

            // Same app limit, no loss: Startup forever (until the 5 s ProbeRTT, which returns to
            // Startup: §Entering and Exiting PROBE_RTT During STARTUP).
            let mut sim = link(v);
            sim.set_app_rate(Some(1200.0));
            let mut seen_probe_rtt = false;
            let end = 12 * SEC;
            sim.run_until(
                |s, _| {
                    assert!(matches!(s.bbr.state, State::Startup | State::ProbeRtt), "{v:?} left Startup: {:?}", s.bbr.state);
                    seen_probe_rtt |= s.bbr.state == State::ProbeRtt;
                    s.now >= end
                },
                end + SEC,
            );
            assert!(!sim.bbr.full_bw_reached);
            assert!(seen_probe_rtt, "ProbeRTT after 5 s in Startup");
            assert_eq!(sim.bbr.state, State::Startup, "ProbeRTT in Startup returns to Startup");
        }
    }

    /// §Exiting DRAIN Based on Inflight.
    #[test]
    fn drain_exits_when_inflight_reaches_the_bdp() {
        for v in BOTH {
            let mut sim = link(v);
            sim.run_until(|s, _| s.bbr.state == State::Drain, 10 * SEC);
            let mut drain_acks = 0;
            sim.run_until(
                |s, ev| {
                    if !matches!(ev, Ev::Ack { .. }) {
                        return false;
                    }
                    // BDP of the physical link plus the quantization budget (3 quanta).
                    let target = s.bdp_phys() * 1.02 + 3.0 * s.bbr.send_quantum_segs(&s.tp) as f64 + 1.0;
                    let inflight = s.tp.packets_in_flight() as f64;
                    if s.bbr.state == State::Drain {
                        drain_acks += 1;
                        assert!((s.gain() - drain_gain(v)).abs() < 0.005);
                        return false;
                    }
                    // Drain → ProbeBW_DOWN (which may pass to CRUISE on the same ACK: inflight is
                    // already at the BDP).
                    assert!(matches!(s.bbr.state, State::ProbeBwDown | State::ProbeBwCruise), "{v:?}: Drain → {:?}", s.bbr.state);
                    assert_eq!(s.bbr.cycle_stamp_ns, s.now, "ProbeBW_DOWN started on this ACK");
                    assert!(inflight <= target + s.bbr.send_quantum_segs(&s.tp) as f64, "{v:?}: left Drain at inflight {inflight} > {target}");
                    assert!(s.bbr.round_count <= s.bbr.drain_start_round + 3, "{v:?}: not by the timeout");
                    true
                },
                10 * SEC,
            );
            assert!(drain_acks > 0);
        }
    }

    /// §Exiting DRAIN Based on Time: inflight held above Inflight(1.0) (as after a 10 % bandwidth
    /// drop on entering Drain); Drain must end in the first round after 3 rounds in Drain.
    #[test]
    fn drain_exits_after_three_rounds_if_inflight_stays_high() {
        for v in BOTH {
            let mut sim = link(v);
            sim.run_until(|s, _| s.bbr.state == State::Drain, 10 * SEC);
            let (mut tp, mut b) = (sim.tp.clone(), sim.bbr.clone());
            let start = b.drain_start_round;
            let target = b.inflight(&tp, b.max_bw(), UNIT);
            tp.packets_out = 3 * target; // inflight stays above the BDP
            tp.lost_out = 0;
            tp.sacked_out = 0;
            for r in 1..=4u64 {
                tp.now_ns += 45 * MS;
                tp.delivered += 10;
                let rs = RateSample {
                    has_prior: true,
                    prior_delivered: b.next_round_delivered, // each ACK ends a round
                    delivered: 90,
                    interval_ns: 45 * MS as i64,
                    rtt_ns: 80 * MS as i64,
                    acked_sacked: 10,
                    tx_in_flight: 3 * target,
                    prior_in_flight: 3 * target,
                    ..Default::default()
                };
                b.cong_control(&mut tp, &rs);
                assert!(b.round_start);
                assert_eq!(b.round_count, start + r);
                if r <= 3 {
                    assert_eq!(b.state, State::Drain, "{v:?}: left Drain after {r} rounds");
                } else {
                    assert_eq!(b.state, State::ProbeBwDown, "{v:?}: still in Drain after {r} rounds");
                }
            }
        }
    }

    /// §ProbeBW: DOWN → CRUISE by inflight, DOWN/CRUISE → REFILL by bw_probe_wait or the Reno
    /// round bound, REFILL → UP after one round, UP → DOWN; gains per phase.
    #[test]
    fn probe_bw_cycles_down_cruise_refill_up_with_the_spec_exit_conditions() {
        for v in BOTH {
            let mut sim = link(v);
            sim.buf_pkts = 160; // 2 BDP: probes do not overflow
            sim.to_probe_bw();
            let mut gains: Vec<(State, f64, f64)> = Vec::new();
            let tr = {
                let mut out = Vec::new();
                let mut prev = sim.bbr.state;
                let mut down_entry = (sim.now, sim.bbr.round_count);
                let end = sim.now + 30 * SEC;
                sim.run_until(
                    |s, ev| {
                        if matches!(ev, Ev::Ack { .. }) {
                            gains.push((s.bbr.state, s.gain(), s.bbr.cwnd_gain as f64 / UNIT as f64));
                        }
                        if s.bbr.state != prev {
                            let (t0, r0) = down_entry;
                            out.push((prev, s.bbr.state, s.now - t0, s.bbr.round_count - r0, s.tp.packets_in_flight(), s.bdp_phys()));
                            // A cycle (and its probe clock) starts with StartProbeBW_DOWN, also when
                            // ProbeRTT exits through DOWN straight to CRUISE.
                            if s.bbr.state == State::ProbeBwDown || prev == State::ProbeRtt {
                                down_entry = (s.now, s.bbr.round_count);
                            }
                            prev = s.bbr.state;
                        }
                        s.now >= end
                    },
                    end + SEC,
                );
                out
            };
            let mut seen = std::collections::HashSet::new();
            for &(from, to, since_down, rounds_since_down, inflight, bdp) in &tr {
                seen.insert((from, to));
                match (from, to) {
                    (State::ProbeBwDown, State::ProbeBwCruise) => {
                        // inflight ≤ BDP (+ quantization budget) and ≤ headroom target.
                        let q = 3.0 * 2.0 + 1.0;
                        assert!(inflight as f64 <= bdp * 1.02 + q, "{v:?}: cruise at inflight {inflight} > BDP {bdp}");
                    }
                    (State::ProbeBwDown | State::ProbeBwCruise, State::ProbeBwRefill) => {
                        // 2–3 s wall clock, or min(BDP, 63) rounds (rounds_since_probe_up starts at 0 or 1).
                        let by_time = since_down > 2 * SEC && since_down <= 3 * SEC + 50 * MS;
                        let by_rounds = rounds_since_down + 1 >= 63.min(bdp as u64) && since_down <= 3 * SEC + 50 * MS;
                        assert!(by_time || by_rounds, "{v:?}: REFILL after {since_down} ns / {rounds_since_down} rounds");
                    }
                    (State::ProbeBwRefill, State::ProbeBwUp) => {}
                    (State::ProbeBwUp, State::ProbeBwDown) => {}
                    (_, State::ProbeRtt) | (State::ProbeRtt, State::ProbeBwCruise) => {}
                    other => panic!("{v:?}: transition {other:?} not in the state machine"),
                }
            }
            for need in [
                (State::ProbeBwDown, State::ProbeBwCruise),
                (State::ProbeBwCruise, State::ProbeBwRefill),
                (State::ProbeBwRefill, State::ProbeBwUp),
                (State::ProbeBwUp, State::ProbeBwDown),
            ] {
                assert!(seen.contains(&need), "{v:?}: never saw {need:?} in {seen:?}");
            }
            for &(st, pg, cg) in &gains {
                let (wp, wc) = match st {
                    State::ProbeBwDown => (down_gain(v), 2.0),
                    State::ProbeBwCruise | State::ProbeBwRefill => (1.0, 2.0),
                    State::ProbeBwUp => (1.25, 2.25),
                    State::ProbeRtt => (1.0, 0.5),
                    _ => continue,
                };
                assert!((pg - wp).abs() < 0.005 && (cg - wc).abs() < 1e-9, "{v:?} {st:?}: gains {pg}/{cg}");
            }
        }
    }

    /// §ProbeBW_REFILL: exactly one packet-timed round, then UP with is_bw_probe_sample.
    #[test]
    fn refill_lasts_one_round_then_up() {
        let mut sim = link(Variant::Draft);
        sim.buf_pkts = 160;
        sim.to_probe_bw();
        sim.run_until(|s, _| s.bbr.state == State::ProbeBwRefill, 10 * SEC);
        let r0 = sim.bbr.round_count;
        assert!(sim.bbr.bw_shortterm == INF_BW && sim.bbr.inflight_shortterm == INF_PKTS, "REFILL resets the short-term model");
        sim.run_until(|s, _| s.bbr.state != State::ProbeBwRefill, 10 * SEC);
        assert_eq!(sim.bbr.state, State::ProbeBwUp);
        assert_eq!(sim.bbr.round_count, r0 + 1);
        assert!(sim.bbr.is_bw_probe_sample);
    }

    /// §Exiting PROBE_UP on Bandwidth Plateau: no loss, deep buffer, inflight_longterm unset.
    #[test]
    fn up_exits_on_bandwidth_plateau_after_three_rounds() {
        let mut sim = link(Variant::Draft);
        sim.to_probe_bw();
        let mut checked = 0;
        for _ in 0..3 {
            sim.run_until(|s, _| s.bbr.state == State::ProbeBwUp, 20 * SEC);
            let r0 = sim.bbr.round_count;
            let lost0 = sim.lost_total;
            sim.run_until(|s, _| s.bbr.state != State::ProbeBwUp, 20 * SEC);
            if sim.bbr.state != State::ProbeBwDown {
                continue; // interrupted by ProbeRTT
            }
            assert_eq!(sim.lost_total, lost0, "no loss with an unlimited buffer");
            assert!(!sim.bbr.prev_probe_too_high && !sim.bbr.prev_probe_precautionary);
            assert!(sim.bbr.round_count - r0 >= 3, "UP left after {} rounds", sim.bbr.round_count - r0);
            assert_eq!(sim.bbr.inflight_longterm, INF_PKTS);
            checked += 1;
        }
        assert!(checked >= 2);
    }

    /// §Handling Loss During PROBE_UP After inflight_longterm is Set / HandleInflightTooHigh:
    /// loss > 2 % ends UP and sets inflight_longterm = max(tx_in_flight, Beta · TargetInflight).
    #[test]
    fn loss_above_threshold_in_up_cuts_inflight_longterm_by_beta_and_goes_down() {
        for v in BOTH {
            let beta = if v == Variant::Draft { 0.7 } else { 180.0 / 256.0 };
            for tx in [20u32, 400] {
                let mut sim = link(v);
                sim.buf_pkts = 160;
                sim.to_probe_bw();
                sim.run_until(|s, _| s.bbr.state == State::ProbeBwUp, 20 * SEC);
                let (mut tp, mut b) = (sim.tp.clone(), sim.bbr.clone());
                b.inflight_longterm = 200;
                // Spec inputs: TargetInflight = min(BDP, cwnd) with BDP = bw · min_rtt.
                let bdp = (b.bw() as f64 / BW_UNIT as f64 * 1e6) * (b.min_rtt_ns as f64 / 1e9);
                let target = bdp.ceil().min(tp.snd_cwnd as f64);
                let lost = (tx as f64 * 0.03).ceil() as u64; // 3 % > 2 %
                tp.delivered += 1;
                let rs = RateSample {
                    has_prior: true,
                    prior_delivered: tp.delivered - 10,
                    delivered: 10,
                    interval_ns: 45 * MS as i64,
                    rtt_ns: 41 * MS as i64,
                    acked_sacked: 1,
                    tx_in_flight: tx,
                    lost,
                    prior_in_flight: tp.packets_in_flight(),
                    ..Default::default()
                };
                b.ssthresh(&tp);
                b.cong_control(&mut tp, &rs);
                // StartProbeBW_DOWN ran on this ACK (CRUISE may follow at once: inflight is low).
                assert!(matches!(b.state, State::ProbeBwDown | State::ProbeBwCruise), "{v:?}: {:?}", b.state);
                assert_eq!(b.cycle_stamp_ns, tp.now_ns);
                let want = (tx as f64).max((target * beta).floor());
                assert!((b.inflight_longterm as f64 - want).abs() <= 1.0, "{v:?} tx {tx}: inflight_longterm {} want {want}", b.inflight_longterm);
                assert!(b.prev_probe_too_high && !b.is_bw_probe_sample);
                assert_eq!(b.undo_state, Some(State::ProbeBwUp));
                // Exactly at the threshold it is not "too high" (strictly greater, §IsInflightTooHigh).
                assert!(!b.is_inflight_too_high(1000, 19, 0, 0));
                assert!(b.is_inflight_too_high(1000, 21, 0, 0));
            }
        }
    }

    /// §Precautionary Bandwidth Probing: after a too-high probe, the next UP stops as soon as
    /// inflight reaches inflight_longterm; if the following round of feedback has no excess loss
    /// the flow goes straight back to REFILL (no CRUISE).
    #[test]
    fn precautionary_probe_stops_at_inflight_longterm_then_refills_without_cruise() {
        for v in BOTH {
            let mut sim = link(v);
            sim.buf_pkts = 160;
            sim.to_probe_bw();
            sim.run_until(|s, _| s.bbr.state == State::ProbeBwUp, 20 * SEC);
            let (mut tp, mut b) = (sim.tp.clone(), sim.bbr.clone());
            b.prev_probe_too_high = true;
            let hi = 100;
            b.inflight_longterm = hi;
            let ack = |b: &mut Bbr3, tp: &mut TcpCc, inflight: u32, round_end: bool| {
                tp.now_ns += MS;
                tp.wstamp_ns = tp.now_ns;
                tp.delivered += 1;
                tp.packets_out = inflight;
                let rs = RateSample {
                    has_prior: true,
                    prior_delivered: if round_end { b.next_round_delivered } else { b.next_round_delivered.saturating_sub(5) },
                    delivered: 80,
                    interval_ns: 41 * MS as i64,
                    rtt_ns: 41 * MS as i64,
                    acked_sacked: 1,
                    tx_in_flight: 90,
                    prior_in_flight: inflight + 1,
                    ..Default::default()
                };
                b.cong_control(tp, &rs);
            };
            // Below inflight_longterm: keep probing.
            ack(&mut b, &mut tp, hi - 10, false);
            assert_eq!(b.state, State::ProbeBwUp, "{v:?}");
            // Inflight reaches inflight_longterm: stop at once (Deceleration).
            ack(&mut b, &mut tp, hi + 1, false);
            assert_eq!(b.state, State::ProbeBwDown, "{v:?}");
            assert!(b.prev_probe_precautionary && !b.prev_probe_too_high);
            // Feedback within the round: stay in DOWN (inflight above the cruise target).
            ack(&mut b, &mut tp, 3 * hi, false);
            assert_eq!(b.state, State::ProbeBwDown);
            // A full round of feedback without excess loss: straight to REFILL (Acceleration).
            ack(&mut b, &mut tp, 3 * hi, true);
            assert_eq!(b.state, State::ProbeBwRefill, "{v:?}: precautionary success skips CRUISE");
        }
    }

    /// §Entering and Exiting PROBE_RTT: after 5 s without a lower RTT, cwnd = max(0.5·BDP, 4)
    /// held for 200 ms and one round once inflight reached it, then CRUISE with the cwnd restored.
    #[test]
    fn probe_rtt_every_5_s_holds_half_bdp_for_200_ms_and_a_round() {
        for v in BOTH {
            let mut sim = link(v);
            sim.buf_pkts = 160;
            sim.to_probe_bw();
            let mut cwnd_before = 0;
            let mut last_refresh = sim.bbr.probe_rtt_min_stamp_ns;
            sim.run_until(
                |s, _| {
                    if s.bbr.state == State::ProbeRtt {
                        return true;
                    }
                    cwnd_before = s.tp.snd_cwnd;
                    last_refresh = s.bbr.probe_rtt_min_stamp_ns;
                    false
                },
                30 * SEC,
            );
            let since = sim.now - last_refresh;
            assert!(since > 5 * SEC && since < 5 * SEC + 5 * MS, "{v:?}: entered {since} ns after the last refresh");
            assert!((sim.bbr.cwnd_gain as f64 / UNIT as f64 - 0.5).abs() < 1e-9);
            let cap = ((0.5 * sim.bdp_phys() * 1.02).ceil() as u32).max(4);
            let mut reached: Option<(u64, u64, u32)> = None;
            let entered = sim.now;
            sim.run_until(
                |s, ev| {
                    if s.bbr.state != State::ProbeRtt {
                        return true;
                    }
                    assert!(s.tp.snd_cwnd <= cap, "{v:?}: cwnd {} > {cap}", s.tp.snd_cwnd);
                    if reached.is_none() && matches!(ev, Ev::Ack { .. }) && s.tp.packets_in_flight() <= cap {
                        reached = Some((s.now, s.tp.delivered, s.tp.packets_in_flight()));
                    }
                    false
                },
                entered + 2 * SEC,
            );
            let (t, d, f) = reached.expect("inflight reached the ProbeRTT cwnd");
            assert!(sim.now - t >= 200 * MS, "{v:?}: held {} ms", (sim.now - t) / MS);
            assert!(sim.tp.delivered - d >= f as u64, "{v:?}: less than one round");
            assert!(sim.now - t < 200 * MS + 3 * sim.bbr.min_rtt_ns);
            assert_eq!(sim.bbr.state, State::ProbeBwCruise, "{v:?}: exit to DOWN then CRUISE");
            assert!(sim.tp.snd_cwnd >= cwnd_before.min(sim.bbr.inflight_with_headroom()), "{v:?}: cwnd restored");
        }
    }

    /// §Skipping PROBE_RTT Due to Application-Limited Sending (idle).
    #[test]
    fn idle_longer_than_the_probe_rtt_interval_skips_probe_rtt() {
        let mut sim = link(Variant::Draft);
        sim.to_probe_bw();
        sim.run_for(SEC);
        // Application pauses for 6 s; the flow goes idle.
        sim.pause_until = sim.now + 6 * SEC;
        sim.run_until(|s, _| s.tp.packets_in_flight() == 0, sim.now + SEC);
        let mut saw_idle_restart = false;
        sim.run_until(
            |s, ev| {
                if ev == Ev::Send && s.bbr.idle_restart {
                    saw_idle_restart = true;
                }
                assert_ne!(s.bbr.state, State::ProbeRtt, "ProbeRTT entered after idle");
                s.now > s.pause_until + SEC
            },
            sim.pause_until + 3 * SEC,
        );
        assert!(saw_idle_restart, "TX start after idle sets idle_restart");
        assert!(sim.bbr.probe_rtt_min_stamp_ns > sim.pause_until, "the first RTT after idle refreshed the 5 s window");
    }

    /// §Correctly Managing Sub-Packet BDPs: cwnd floor 4, pacing at the link rate.
    #[test]
    fn sub_packet_bdp_keeps_cwnd_at_least_four_and_paces_at_link_rate() {
        // 100 pkt/s (1.2 Mbit/s), 4 ms: BDP ≈ 0.5 packets.
        let mut sim = Sim::new(100, 4, Variant::Draft);
        assert!(sim.bdp_phys() < 1.5);
        sim.to_probe_bw();
        let end = sim.now + 10 * SEC;
        sim.run_until(
            |s, ev| {
                if matches!(ev, Ev::Ack { .. }) && s.bbr.is_in_probe_bw() {
                    assert!(s.tp.snd_cwnd >= 4, "cwnd {}", s.tp.snd_cwnd);
                }
                s.now >= end
            },
            end + SEC,
        );
        assert!((sim.max_bw_pps() - 100.0).abs() / 100.0 < 0.03, "max_bw {}", sim.max_bw_pps());
        sim.run_until(|s, _| s.bbr.state == State::ProbeBwCruise, sim.now + 10 * SEC);
        sim.run_until(|s, ev| matches!(ev, Ev::Ack { .. }) && s.bbr.state == State::ProbeBwCruise, sim.now + SEC);
        let want = sim.bw_pps() * MSS as f64 * 0.99;
        let got = sim.tp.pacing_rate_bytes_per_s as f64;
        assert!((got - want).abs() / want < 0.01, "pacing {got} vs {want}");
    }

    /// §Increasing Bandwidth 10x: inflight_longterm grows by 1, 2, 4, … per round in UP and the
    /// new bandwidth is found in O(log BDP) rounds of probing.
    #[test]
    fn ten_fold_bandwidth_increase_grows_inflight_longterm_exponentially() {
        let mut sim = Sim::new(500, 40, Variant::Draft);
        sim.buf_pkts = 8; // shallow: probes overflow, inflight_longterm gets set
        sim.to_probe_bw();
        sim.run_until(|s, _| s.bbr.inflight_longterm != INF_PKTS && s.bbr.state == State::ProbeBwCruise, 60 * SEC);
        sim.ns_per_pkt /= 10; // 5000 pkt/s
        sim.buf_pkts = 80;
        let t0 = sim.now;
        sim.run_until(|s, _| s.bbr.state == State::ProbeBwUp, t0 + 5 * SEC);
        let up_start = sim.now;
        // Per-round increments of inflight_longterm while cwnd-limited in this UP.
        let mut incs: Vec<i64> = Vec::new();
        let mut last = sim.bbr.inflight_longterm as i64;
        sim.run_until(
            |s, _| {
                if s.bbr.state != State::ProbeBwUp {
                    return true;
                }
                if s.bbr.round_start {
                    incs.push(s.bbr.inflight_longterm as i64 - last);
                    last = s.bbr.inflight_longterm as i64;
                }
                false
            },
            up_start + 10 * SEC,
        );
        // The step doubles per cwnd-limited round (1, 2, 4, 8, …): in rounds where inflight_longterm
        // grew, the k-th growth is ~2^k, so the largest is at least 2^(k−2).
        let full: Vec<i64> = incs.iter().copied().filter(|&d| d > 0).collect();
        assert!(full.len() >= 4, "too few growth rounds: {incs:?}");
        let max = *full.iter().max().unwrap();
        assert!(max as f64 >= 2f64.powi(full.len() as i32 - 2), "growth not exponential: {incs:?}");
        assert!(*full.last().unwrap() >= 8 * full[0], "growth not exponential: {incs:?}");
        // O(log BDP) rounds: the rate can grow at most 1.25× per round (pacing gain) and the
        // volume doubles per cwnd-limited round; when they alternate (a round is cwnd-limited only
        // if cwnd was used up in it) the probe needs ≤ 2·(log_1.25 10 + log2 BDP) rounds.
        let bdp = sim.bdp_phys();
        let budget = (2.0 * (10f64.ln() / 1.25f64.ln() + bdp.log2())).ceil() as u64 + 6;
        assert!(incs.len() as u64 <= budget, "UP took {} rounds > {budget}", incs.len());
        sim.run_for(3 * SEC);
        assert!(sim.max_bw_pps() >= 0.9 * 5000.0, "max_bw {} after the probe", sim.max_bw_pps());
    }

    /// §Decreasing Bandwidth 10x: bw_shortterm adapts within rounds; max_bw expires after two
    /// ProbeBW cycles.
    #[test]
    fn ten_fold_bandwidth_decrease_adapts_short_term_then_max_bw_expires() {
        let mut sim = Sim::new(5000, 40, Variant::Draft);
        sim.buf_pkts = 100;
        sim.to_probe_bw();
        sim.run_until(|s, _| s.bbr.state == State::ProbeBwCruise, 20 * SEC);
        let old = sim.bbr.max_bw();
        sim.ns_per_pkt *= 10; // 500 pkt/s
        sim.buf_pkts = 20;
        let t0 = sim.now;
        sim.run_until(|s, _| s.bbr.bw_shortterm != INF_BW && s.bw_pps() < 1.3 * 500.0, t0 + 3 * SEC);
        assert!(sim.now - t0 < 2 * SEC, "bw_shortterm took {} ms", (sim.now - t0) / MS);
        assert_eq!(sim.bbr.max_bw(), old, "max_bw is the long-term model: kept until the filter advances");
        // Two UP exits (+ one round each) later the old samples are gone.
        let mut ups = 0;
        let mut was_up = false;
        sim.run_until(
            |s, _| {
                let up = s.bbr.state == State::ProbeBwUp;
                if was_up && !up {
                    ups += 1;
                }
                was_up = up;
                ups >= 2 && s.bbr.state == State::ProbeBwCruise
            },
            t0 + 30 * SEC,
        );
        let est = sim.max_bw_pps();
        assert!((est - 500.0).abs() / 500.0 < 0.05, "max_bw {est} pkt/s after two cycles");
    }

    /// §Handling Token Bucket Policers: loss when the bucket is exhausted drives the short-term
    /// model; the flow settles near the token rate without continuous heavy loss.
    #[test]
    fn token_bucket_policer_short_term_model_converges_to_the_token_rate() {
        let mut sim = link(Variant::Draft);
        let rate = 800.0;
        sim.policer = Some(Policer { ns_per_token: SEC / 800, depth: 40, tokens_ns: 40 * SEC / 800, last_ns: 0 });
        sim.to_probe_bw();
        let mut short_set = false;
        let t_mid = sim.now + 10 * SEC;
        sim.run_until(
            |s, _| {
                short_set |= s.bbr.bw_shortterm != INF_BW && s.bbr.inflight_shortterm != INF_PKTS;
                s.now >= t_mid
            },
            t_mid + SEC,
        );
        assert!(short_set, "policer drops drive bw_shortterm / inflight_shortterm");
        let (d0, l0, t0) = (sim.tp.delivered, sim.lost_total, sim.now);
        sim.run_for(20 * SEC);
        let dt = (sim.now - t0) as f64 / 1e9;
        let delivered_rate = (sim.tp.delivered - d0) as f64 / dt;
        let loss = (sim.lost_total - l0) as f64 / (sim.tp.delivered - d0 + sim.lost_total - l0) as f64;
        println!("policer 800 pkt/s: delivered {delivered_rate:.0} pkt/s, loss {:.2} %", loss * 100.0);
        assert!(delivered_rate >= 0.85 * rate && delivered_rate <= 1.01 * rate, "delivered {delivered_rate}");
        assert!(loss <= 0.05, "loss {:.1} %", loss * 100.0);
    }

    /// §Handling Spurious Fast Recovery / RTO: undo restores the short- and long-term model and
    /// returns to the state the loss made the flow leave.
    #[test]
    fn spurious_loss_undo_restores_model_and_returns_to_refill_or_startup() {
        for v in BOTH {
            // From UP.
            let mut sim = link(v);
            sim.buf_pkts = 160;
            sim.to_probe_bw();
            sim.run_until(|s, _| s.bbr.state == State::ProbeBwUp, 20 * SEC);
            let (mut tp, mut b) = (sim.tp.clone(), sim.bbr.clone());
            b.inflight_longterm = 150;
            b.inflight_shortterm = 120;
            let cwnd0 = tp.snd_cwnd;
            b.ssthresh(&tp); // entering recovery: SaveCwnd + SaveStateUponLoss
            b.set_state(&mut tp, CaState::Recovery);
            tp.ca_state = CaState::Recovery;
            b.handle_inflight_too_high(&tp, false, 60);
            assert_eq!(b.state, State::ProbeBwDown);
            assert!(b.inflight_longterm < 150);
            b.inflight_shortterm = 50;
            b.full_bw = 12345;
            let mut b_no_state = b.clone();
            let cwnd = b.undo_cwnd(&mut tp);
            assert!(cwnd >= cwnd0, "{v:?}: cwnd {cwnd} < saved {cwnd0}");
            assert_eq!(b.inflight_longterm, 150);
            // Restored to ≥ 120, then StartProbeBW_REFILL resets the short-term model.
            assert_eq!(b.inflight_shortterm, INF_PKTS);
            assert_eq!(b.full_bw, 0);
            assert_eq!(b.state, State::ProbeBwRefill, "{v:?}: back to probing via REFILL");
            assert_eq!(b.undo_state, None);
            // Without a loss-induced state change the short-term model itself is restored.
            b_no_state.undo_state = None;
            let st = b_no_state.state;
            b_no_state.undo_cwnd(&mut tp);
            assert_eq!(b_no_state.inflight_shortterm, 120);
            assert_eq!(b_no_state.inflight_longterm, 150);
            assert_eq!(b_no_state.state, st);

            // From Startup (loss exit).
            let mut sim = link(v);
            sim.run_until(|s, _| s.tp.delivered > 50, 5 * SEC);
            let (mut tp, mut b) = (sim.tp.clone(), sim.bbr.clone());
            b.ssthresh(&tp);
            b.handle_queue_too_high_in_startup(&tp);
            b.enter_drain(&mut tp);
            let cwnd = b.undo_cwnd(&mut tp);
            assert!(cwnd >= tp.snd_cwnd);
            assert_eq!(b.state, State::Startup);
            assert!(!b.full_bw_reached);
            assert_eq!(b.inflight_longterm, INF_PKTS, "long-term bound restored to its pre-loss value");
        }
    }

    /// §Never Exiting PROBE_UP When Application-Limited With No Loss.
    #[test]
    fn app_limited_up_without_loss_never_exits() {
        let mut sim = link(Variant::Draft);
        sim.buf_pkts = 160;
        sim.to_probe_bw();
        sim.run_until(|s, _| s.bbr.state == State::ProbeBwRefill, 20 * SEC);
        sim.set_app_rate(Some(1000.0)); // half the link
        sim.run_until(|s, _| s.bbr.state == State::ProbeBwUp, sim.now + SEC);
        let end = sim.now + 3 * SEC;
        sim.run_until(
            |s, _| {
                if s.bbr.state != State::ProbeRtt {
                    assert_eq!(s.bbr.state, State::ProbeBwUp, "left UP while app-limited without loss");
                }
                s.now >= end || s.bbr.state == State::ProbeRtt
            },
            end + SEC,
        );
        assert_eq!(sim.lost_total, 0);
    }

    /// §Handling Application-Limited Sending During PROBE_REFILL.
    #[test]
    fn app_limited_refill_keeps_max_bw_and_moves_to_up_after_a_round() {
        let mut sim = link(Variant::Draft);
        sim.to_probe_bw();
        sim.run_until(|s, _| s.bbr.state == State::ProbeBwRefill, 20 * SEC);
        let max0 = sim.bbr.max_bw();
        let r0 = sim.bbr.round_count;
        sim.set_app_rate(Some(400.0));
        sim.run_until(|s, _| s.bbr.state != State::ProbeBwRefill, sim.now + 2 * SEC);
        assert_eq!(sim.bbr.state, State::ProbeBwUp);
        assert_eq!(sim.bbr.round_count, r0 + 1);
        assert!(sim.bbr.max_bw() >= max0, "app-limited samples lowered max_bw");
        sim.run_for(SEC);
        assert!(sim.bbr.max_bw() >= max0);
    }

    /// Linux v3 ECN: alpha = (1 − 1/16)·alpha + CE_fraction/16 per round, from 1.0.
    #[test]
    fn linux_ecn_alpha_is_a_1_16_ewma_of_the_ce_fraction_per_round() {
        let mut tp = TcpCc::new(MSS, 10);
        tp.ecn_ok = true;
        let mut b = Bbr3::new(1, Variant::Linux);
        b.init(&mut tp);
        b.min_rtt_ns = 2 * MS;
        assert_eq!(b.ecn_alpha, 256);
        let mut alpha = 1.0f64;
        b.full_bw_reached = true; // isolate the EWMA from the Startup exit
        for (delivered, ce) in [(100u64, 0u64), (100, 50), (200, 20), (100, 100)] {
            tp.delivered += delivered;
            tp.delivered_ce += ce;
            b.update_ecn_alpha(&tp);
            alpha = alpha * 15.0 / 16.0 + (ce as f64 / delivered as f64) / 16.0;
            assert!((b.ecn_alpha as f64 / 256.0 - alpha).abs() < 2.0 / 256.0, "alpha {} vs {alpha}", b.ecn_alpha);
        }
        assert!(b.ecn_eligible);
        // Not eligible above 5 ms min_rtt, nor without negotiated ECN.
        let mut b2 = Bbr3::new(1, Variant::Linux);
        b2.init(&mut tp);
        b2.min_rtt_ns = 6 * MS;
        b2.update_ecn_alpha(&tp);
        assert!(!b2.ecn_eligible);
        let mut tp3 = TcpCc::new(MSS, 10);
        let mut b3 = Bbr3::new(1, Variant::Linux);
        b3.init(&mut tp3);
        b3.min_rtt_ns = MS;
        b3.update_ecn_alpha(&tp3);
        assert!(!b3.ecn_eligible);
    }

    /// Linux v3 ECN: inflight_lo ·= (1 − alpha/3) once per round with CE when not probing; CE
    /// ratio > 50 % means "too high" while probing.
    #[test]
    fn linux_ecn_cuts_inflight_lo_and_flags_probes_above_half_marked() {
        let mut tp = TcpCc::new(MSS, 10);
        tp.ecn_ok = true;
        let mut b = Bbr3::new(1, Variant::Linux);
        b.init(&mut tp);
        b.ecn_eligible = true;
        b.state = State::ProbeBwCruise;
        b.inflight_shortterm = 100;
        b.ecn_alpha = 128; // 0.5
        b.ecn_in_round = true;
        b.adapt_lower_bounds_from_congestion();
        let want = 100.0 * (1.0 - 0.5 / 3.0);
        assert!((b.inflight_shortterm as f64 - want).abs() <= 1.0, "inflight_lo {} want {want}", b.inflight_shortterm);
        assert_eq!(b.bw_shortterm, INF_BW, "ECN does not cut bw_lo");
        // Probing (UP): no short-term cut.
        b.state = State::ProbeBwUp;
        b.inflight_shortterm = 100;
        b.adapt_lower_bounds_from_congestion();
        assert_eq!(b.inflight_shortterm, 100);
        assert!(b.is_inflight_too_high(100, 0, 100, 51));
        assert!(!b.is_inflight_too_high(100, 0, 100, 50));
        b.ecn_eligible = false;
        assert!(!b.is_inflight_too_high(100, 0, 100, 90));
    }

    /// Linux v3 ECN: Startup ends after 2 consecutive rounds with CE ≥ 50 % (low-RTT path with a
    /// shallow marking threshold), before any loss.
    #[test]
    fn linux_ecn_startup_exits_after_two_highly_marked_rounds() {
        // 20000 pkt/s, 1 ms: BDP 20 packets; mark above 5 queued packets; no drops.
        let mut sim = Sim::with(20_000, MS, Variant::Linux, true);
        sim.ecn_k = Some(5);
        let mut ce_rounds = Vec::new();
        let (mut d0, mut c0) = (0u64, 0u64);
        sim.run_until(
            |s, ev| {
                if matches!(ev, Ev::Ack { .. }) && s.bbr.round_start {
                    let (d, c) = (s.tp.delivered - d0, s.tp.delivered_ce - c0);
                    ce_rounds.push(c as f64 / d.max(1) as f64);
                    d0 = s.tp.delivered;
                    c0 = s.tp.delivered_ce;
                }
                s.bbr.state != State::Startup
            },
            5 * SEC,
        );
        assert!(matches!(sim.bbr.state, State::Drain | State::ProbeBwDown | State::ProbeBwCruise));
        assert_eq!(sim.lost_total, 0);
        assert!(sim.bbr.startup_ecn_rounds >= 2, "exit by ECN: {ce_rounds:?}");
        let n = ce_rounds.len();
        assert!(ce_rounds[n - 1] >= 0.5 && ce_rounds[n - 2] >= 0.5, "last two rounds ≥ 50 % CE: {ce_rounds:?}");
        // The Draft variant has no ECN Startup exit.
        let mut sim = Sim::with(20_000, MS, Variant::Draft, true);
        sim.ecn_k = Some(5);
        sim.run_until(|s, _| s.bbr.state != State::Startup, 5 * SEC);
        assert_eq!(sim.bbr.startup_ecn_rounds, 0);
    }

    /// Draft variant: CE is congestion (§ECN): a CE-marked round cuts the short-term model by
    /// Beta when not probing; > 2 % CE while probing is "too high".
    #[test]
    fn draft_treats_ce_as_congestion() {
        let mut sim = Sim::with(20_000, MS, Variant::Draft, true);
        sim.ecn_k = Some(10);
        sim.to_probe_bw();
        sim.run_for(2 * SEC);
        assert_eq!(sim.lost_total, 0, "marking, not dropping");
        assert!(sim.bbr.inflight_shortterm != INF_PKTS || sim.bbr.inflight_longterm != INF_PKTS, "CE shaped the model");
        let b = &sim.bbr;
        assert!(b.is_inflight_too_high(100, 0, 100, 3));
        assert!(!b.is_inflight_too_high(100, 0, 100, 2));
        assert_eq!(b.sample(&sim.tp).ecn_alpha, 0.0);
    }

    #[test]
    fn variant_gains_differ_as_specified() {
        let d = Params::of(Variant::Draft);
        let l = Params::of(Variant::Linux);
        let g = |x: u64| x as f64 / UNIT as f64;
        assert!((g(d.startup_pacing_gain) - 2.77).abs() < 1e-4 && (g(l.startup_pacing_gain) - 2.77).abs() < 0.005);
        assert_eq!(d.startup_cwnd_gain, 2 * UNIT);
        assert_eq!(l.startup_cwnd_gain, 2 * UNIT);
        assert!((g(d.drain_pacing_gain) - 0.5).abs() < 1e-4);
        assert_eq!(d.loss_thresh, (2, 100));
        assert_eq!(l.loss_thresh, (5, 256));
        assert!((g(l.drain_pacing_gain) - 1.0 / 2.885).abs() < 0.005);
        assert!((g(d.down_pacing_gain) - 0.90).abs() < 1e-4);
        assert!((g(l.down_pacing_gain) - 0.91).abs() < 0.005);
        assert!((g(d.beta) - 0.7).abs() < 1e-4 && (g(d.headroom) - 0.15).abs() < 1e-4);
        assert_eq!((d.extra_acked_win_rounds, l.extra_acked_win_rounds), (10, 5));
        assert_eq!(Bbr3::new(0, Variant::Draft).name(), "bbr3");
        assert_eq!(Bbr3::new(0, Variant::Linux).name(), "bbr3_linux");
    }

    /// §InflightAtLoss: lost_prefix = (thresh·inflight_prev − lost_prev) / (1 − thresh).
    #[test]
    fn inflight_at_loss_is_the_2_percent_crossing_point() {
        let b = Bbr3::new(0, Variant::Draft);
        // 1000 in flight before the lost packet, 2 lost before it: (20 − 2)/0.98 = 18.4 more.
        let spec = |prev: f64, lost_prev: f64| prev + (0.02 * prev - lost_prev) / 0.98;
        assert!((b.inflight_at_loss(1001, 3, 1) as f64 - spec(1000.0, 2.0)).abs() < 1.0);
        assert!((b.inflight_at_loss(1010, 21, 1) as f64 - spec(1009.0, 20.0)).abs() < 1.0);
        // Earlier losses already crossed the threshold: the crossing is before this packet.
        assert_eq!(b.inflight_at_loss(101, 5, 1), 100);
        // Per-packet hook: only samples sent while probing count.
        let mut tp = TcpCc::new(MSS, 10);
        let mut b = Bbr3::new(0, Variant::Draft);
        b.init(&mut tp);
        b.full_bw_reached = true;
        b.state = State::ProbeBwUp;
        b.min_rtt_ns = 40 * MS;
        b.max_bw_slots = [((80u128 * BW_UNIT) / 40_000) as u64; 2];
        tp.snd_cwnd = 100;
        tp.lost = 30;
        // 21 lost of 1010 in flight (> 2 %), 20 of them before this packet.
        let p = PacketRateState { tx_in_flight: 1010, lost: 9, ..Default::default() };
        b.skb_marked_lost(&tp, &p);
        assert_eq!(b.state, State::ProbeBwUp, "not a probe sample: no reaction");
        assert!(b.loss_in_round);
        b.is_bw_probe_sample = true;
        b.skb_marked_lost(&tp, &p);
        assert_eq!(b.state, State::ProbeBwDown);
        assert!((b.inflight_longterm as f64 - spec(1009.0, 20.0)).abs() < 1.0, "{}", b.inflight_longterm);
    }

    /// §Send Quantum: pacing_rate · 1 ms in [2 segments, 64 KB], + 64 KB >> (min_rtt_us >> 9).
    #[test]
    fn send_quantum_is_a_millisecond_of_pacing_plus_the_min_rtt_allowance() {
        let mut tp = TcpCc::new(MSS, 10);
        let mut b = Bbr3::new(0, Variant::Draft);
        b.init(&mut tp);
        tp.tso_minrtt_autosize = false;
        tp.pacing_rate_bytes_per_s = 10_000_000; // 10 kB per ms
        assert_eq!(b.send_quantum_segs(&tp), 6);
        tp.pacing_rate_bytes_per_s = 100_000;
        assert_eq!(b.send_quantum_segs(&tp), 2);
        tp.pacing_rate_bytes_per_s = 10_000_000_000;
        assert_eq!(b.send_quantum_segs(&tp), (65_536 - 1 - 320) / MSS);
        tp.tso_minrtt_autosize = true;
        tp.pacing_rate_bytes_per_s = 10_000_000;
        b.min_rtt_ns = 40 * MS; // 40 ms >> 9 µs: allowance 0
        assert_eq!(b.send_quantum_segs(&tp), 6);
        b.min_rtt_ns = 100 * NSEC_PER_USEC; // < 512 µs: + 64 KB, capped at 64 KB
        assert_eq!(b.send_quantum_segs(&tp), (65_536 - 1 - 320) / MSS);
        b.min_rtt_ns = 1100 * NSEC_PER_USEC; // 2 × 512 µs: + 16 KB
        assert_eq!(b.send_quantum_segs(&tp), (10_000 + 16_384) / MSS);
        assert_eq!(b.tso_segs(&tp), Some((10_000 + 16_384) / MSS));
    }

    #[test]
    fn sample_exports_phase_names_codes_and_model() {
        let mut sim = link(Variant::Linux);
        let s = sim.bbr.sample(&sim.tp);
        assert_eq!((s.phase, s.phase_code), ("startup", 0));
        assert_eq!(s.inflight_hi_segs, 0.0);
        assert_eq!(s.ecn_alpha, 1.0);
        sim.to_probe_bw();
        sim.run_for(SEC);
        let s = sim.bbr.sample(&sim.tp);
        let names = ["startup", "drain", "probe_down", "probe_cruise", "probe_refill", "probe_up", "probe_rtt"];
        assert_eq!(names[s.phase_code as usize], s.phase);
        assert!((s.bw_bps - 2000.0 * MSS as f64 * 8.0).abs() / (2000.0 * MSS as f64 * 8.0) < 0.02);
        assert_eq!(s.min_rtt_ns, sim.bbr.min_rtt_ns);
        for st in [State::Drain, State::ProbeBwDown, State::ProbeBwCruise, State::ProbeBwRefill, State::ProbeBwUp, State::ProbeRtt] {
            assert_eq!(names[st as usize], st.name());
        }
    }
}
