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
//! Units and arithmetic follow the family (`bbr/units.rs`, Linux fixed point): volumes in packets,
//! bandwidth in packets/µs << 24, time in ns. Gains use a 2^16 fixed point (`GAIN_UNIT`), finer
//! than Linux's 2^8, so that the draft's 0.90/0.7/0.15/2 % are represented to 1e-5; the Linux
//! variant's constants are Linux's 2^8 values shifted left by 8, i.e. bit-for-bit Linux's ratios
//! (e.g. 232/256 = 0.906 for "0.91", 5/256 = 1.95 % for "2 %").
//!
//! `Variant::Draft` vs `Variant::Linux` (everything else is the draft's algorithm in both; the
//! per-variant constants and switches are the [`Params`] table, `params.rs`):
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
//!   `.skb_marked_lost`): the transport's one `mark_lost` (RACK and RTO alike) calls
//!   [`Bbr3::skb_marked_lost`] with the lost packet's send-time `PacketRateState`, which does
//!   NoteLoss and the inflight-at-loss crossing point. Per ACK, as Linux's
//!   `bbr_adapt_upper_bounds`, the rate sample also decides "too high" with `rs.tx_in_flight`, and
//!   an ACK with new losses notes the loss again (idempotent within a round).
//! - `RS.lost` (§Per-ACK Rate Sample State: lost between the send and the ACK of the sampled
//!   packet) is taken as `rs.lost + rs.losses`: the shared sampler snapshots `rs.lost` while
//!   tagging deliveries, before this ACK's RACK marking, so losses declared by this very ACK would
//!   otherwise be missed.
//! - Fast path (Linux `bbr_run_fast_path`, the Google BBRv2 slides' optimisation 1), on unless
//!   `tp.fast_path` is false: once cwnd has reached its target (`try_fast_path`), an
//!   app-limited ACK whose sample is below max_bw, in a round without loss or CE, runs only
//!   CheckDrainDone, the ProbeBW cycle and UpdateMinRTT; if neither the state nor min_rtt
//!   changed it skips the rest of the model and the control update (counted in
//!   `tp.cc_fast_acks`, which the simulator's host model charges no algorithm CPU for),
//!   otherwise only the rest of the model. PLB rehashing is not implemented (path selection).
//!   TLP-repaired loss (`CA_EVENT_TLP_RECOVERY`) has no event
//!   in `CwndEvent`.
//! - The Linux variant keeps the draft's 3-round Drain timeout and its undo-to-REFILL/Startup;
//!   Linux v3 has neither (it only restores bw_lo/inflight_lo/inflight_hi).
//! - Random probe timing comes from a SplitMix64 generator seeded by `Bbr3::new(seed, _)`.

mod control;
mod model;
mod params;
mod probe_bw;
mod probe_rtt;
mod startup;
#[cfg(test)]
mod tests;

pub use params::{EcnResponse, Params, SendQuantumBase, Variant, TEST_MUTATION_ENV};

use super::aggregation::AckAggregation;
use super::ecn::EcnState;
use super::fast_path::{self, fast_path_accessors, FastPathModel};
use super::inflight::{self, InflightCap};
use super::pacing::Pacer;
use super::probe_bw::ProbeBwClock;
use super::probe_rtt::{self as shared_probe_rtt, MinRtt, ProbeRttHold, ProbeRttModel};
use super::round::RoundCounter;
use super::signals::CongestionSignals;
use super::startup::FullBw;
use super::tso;
use super::undo::{save_state_upon_loss, UndoBounds};
use super::units::{
    bw_bytes_per_sec, bw_ceil, gain_f64, Clock, BBR_UNIT, GAIN_UNIT, INF_BW, INF_PKTS,
};
use super::windowed_filter::TwoSlotMax;
use crate::rate::PacketRateState;
use crate::rng::SplitMix64;
use crate::{
    CaState, CcStateSample, CongestionOps, CwndEvent, RateSample, TcpCc, TCP_INFINITE_SSTHRESH,
};

/// §Terminology: DefaultCwndGain = 2, the smallest cwnd gain that lets the rate double per round
/// and tolerates delayed/stretched ACKs.
const DEFAULT_CWND_GAIN: u64 = 2 * GAIN_UNIT;
/// §ProbeBW_UP: cwnd gain 2.25 so the probe (pacing gain 1.25) is not cwnd-limited (Linux:
/// cwnd_gain + 1/4).
const UP_CWND_GAIN: u64 = GAIN_UNIT * 9 / 4;
/// Linux `TCP_INIT_CWND`, used when the connection gives no initial cwnd.
const TCP_INIT_CWND: u32 = 10;
/// §Send Quantum: at least 2 segments.
const SEND_QUANTUM_MIN_SEGS: u32 = 2;
/// v3 (draft §Pacing Rate, Linux) floors the pacing rate at 1 B/s.
const PACING_RATE_FLOOR: u64 = 1;
/// Clock of the EDT interval (ns, the family rule).
const EDT_CLOCK: Clock = Clock::Ns;
/// `init_cwnd` bound (Linux keeps it in 7 bits).
const INIT_CWND_MAX: u32 = 0x7F;

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
        crate::phases::BBR2_3[self as usize]
    }
}

#[derive(Clone, Debug)]
pub struct Bbr3 {
    variant: Variant,
    p: Params,
    rng: SplitMix64,
    state: State,
    /// Gains, 2^16.
    pacing_gain: u64,
    cwnd_gain: u64,
    init_cwnd: u32,
    pacer: Pacer<PACING_RATE_FLOOR>,
    prev_ca_state: CaState,
    prior_cwnd: u32,
    /// §BBR.round_count, BBR.next_round_delivered, BBR.round_start.
    round: RoundCounter,
    idle_restart: bool,
    // §BBR.max_bw: two slots, [previous cycle, current cycle].
    max_bw_filter: TwoSlotMax<u64>,
    max_bw_advance_pending: bool,
    // Short/long-term model (§Updating the Model Upon Packet Loss).
    bw_shortterm: u64,
    inflight_shortterm: u32,
    inflight_longterm: u32,
    /// Per-round loss/CE signals and latest rate/volume.
    signals: CongestionSignals,
    // §Startup full-pipe estimator.
    full_bw: FullBw,
    drain_start_round: u64,
    // §ProbeBW State.
    /// When the phase began, when to probe next, the ACK phase.
    probe_bw: ProbeBwClock,
    is_bw_probe_sample: bool,
    prev_probe_too_high: bool,
    prev_probe_precautionary: bool,
    bw_probe_up_rounds: u32,
    bw_probe_up_acked: u32,
    probe_up_acked_per_inc: u32,
    // §Undo State.
    undo_state: Option<State>,
    /// The bounds saved on entering Recovery/Loss, for undo.
    undo_bounds: UndoBounds,
    // §ProbeRTT and min_rtt: the 10 s min_rtt fed by the 5 s probe_rtt_min sub-window.
    min_rtt: MinRtt,
    probe_rtt_min: MinRtt,
    probe_rtt: ProbeRttHold,
    // §BBR.extra_acked: epochs (and Linux's 2-slot max), or the draft's max filter.
    agg: AckAggregation,
    /// Linux's DCTCP-style ECN state (alpha, eligibility, Startup's ECN exit).
    ecn: EcnState,
    /// Draft variant with ECN negotiated: CE counts as congestion.
    ecn_as_congestion: bool,
    /// C.cwnd as of the current hook (InitLowerBounds reads it).
    cur_cwnd: u32,
    /// cwnd reached its target on the last ACK that delivered data (Linux `try_fast_path`).
    try_fast_path: bool,
}

impl Bbr3 {
    pub fn new(seed: u64, variant: Variant) -> Self {
        Self::with_params(SplitMix64::new(seed), variant, Params::of(variant))
    }

    /// A fresh flow with the variant's constants `p` (`Params::of`, or a test's mutation of it).
    fn with_params(rng: SplitMix64, variant: Variant, p: Params) -> Self {
        Bbr3 {
            variant,
            p,
            rng,
            state: State::Startup,
            pacing_gain: p.startup_pacing_gain,
            cwnd_gain: p.startup_cwnd_gain,
            init_cwnd: TCP_INIT_CWND,
            pacer: Pacer::new(p.startup_pacing_gain),
            prev_ca_state: CaState::Open,
            prior_cwnd: 0,
            round: RoundCounter::default(),
            idle_restart: false,
            max_bw_filter: TwoSlotMax::default(),
            max_bw_advance_pending: false,
            bw_shortterm: INF_BW,
            inflight_shortterm: INF_PKTS,
            inflight_longterm: INF_PKTS,
            signals: CongestionSignals::default(),
            full_bw: FullBw::default(),
            drain_start_round: 0,
            probe_bw: ProbeBwClock::default(),
            is_bw_probe_sample: false,
            prev_probe_too_high: false,
            prev_probe_precautionary: false,
            bw_probe_up_rounds: 0,
            bw_probe_up_acked: 0,
            probe_up_acked_per_inc: INF_PKTS,
            undo_state: None,
            undo_bounds: UndoBounds::default(),
            min_rtt: MinRtt::NONE,
            probe_rtt_min: MinRtt::NONE,
            probe_rtt: ProbeRttHold::default(),
            agg: AckAggregation::with_form(0, p.extra_acked_max),
            ecn: EcnState::default(),
            ecn_as_congestion: false,
            cur_cwnd: TCP_INIT_CWND,
            try_fast_path: false,
        }
    }

    pub fn name(&self) -> &'static str {
        self.p.name
    }

    pub fn state(&self) -> State {
        self.state
    }

    /// Run with one rule changed, for a conformance test ([`Params::mutate`]).
    pub fn mutate_for_test(&mut self, spec: &str) -> Result<(), String> {
        self.p.mutate(spec)
    }

    /// The model and controls, read-only (tests, tracing).
    pub fn model_view(&self) -> super::ModelView {
        super::ModelView {
            state_code: self.state as u8,
            max_bw: self.max_bw(),
            bw: self.bw(),
            bw_shortterm: self.bw_shortterm,
            inflight_longterm: self.inflight_longterm,
            inflight_shortterm: self.inflight_shortterm,
            extra_acked: self.extra_acked(),
            pacing_gain: self.pacing_gain,
            cwnd_gain: self.cwnd_gain,
            prior_cwnd: self.prior_cwnd,
            ecn_alpha: if self.p.ecn == EcnResponse::Dctcp { self.ecn.alpha } else { 0 },
            idle_restart: self.idle_restart,
            ..super::ModelView::from_shared_parts(&self.round, &self.min_rtt, &self.full_bw)
        }
    }

    // ---------------------------------------------------------------------------------------
    // Helpers.

    fn is_in_probe_bw(&self) -> bool {
        matches!(
            self.state,
            State::ProbeBwDown | State::ProbeBwCruise | State::ProbeBwRefill | State::ProbeBwUp
        )
    }

    /// §ProbeBW Algorithm Details IsProbingBW.
    fn is_probing_bw(&self) -> bool {
        matches!(self.state, State::Startup | State::ProbeBwRefill | State::ProbeBwUp)
    }

    /// §BBR.max_bw: max of the two cycle slots.
    fn max_bw(&self) -> u64 {
        self.max_bw_filter.get()
    }

    /// §BoundBWForModel: bw = min(max_bw, bw_shortterm).
    fn bw(&self) -> u64 {
        self.max_bw().min(self.bw_shortterm)
    }

    /// The delivery rate of a valid sample, rounded up (Linux DIV_ROUND_UP) so low rates can
    /// still grow; 0 for an invalid one.
    fn bw_sample(rs: &RateSample) -> u64 {
        if rs.delivered < 0 || rs.interval_ns <= 0 {
            return 0;
        }
        bw_ceil(rs.delivered as u64, rs.interval_ns as u64)
    }

    /// §BDPMultiple: ceil(gain · bw · min_rtt) packets; InitialCwnd before any RTT sample.
    fn bdp_multiple(&self, bw: u64, gain: u64) -> u32 {
        inflight::bdp(bw, self.min_rtt.rtt_ns, gain, self.init_cwnd)
    }
}

/// This ACK's inputs to the model besides the rate sample.
#[derive(Clone, Copy, Debug)]
pub(crate) struct AckInputs {
    /// The delivery-rate sample (`bw_sample`).
    sample_bw: u64,
    /// RS.lost including this ACK's marking (header).
    lost: u64,
    /// This ACK raised the CE count.
    ce_now: bool,
}

/// The fast path (Linux `bbr_run_fast_path`, `bbr/fast_path.rs`) over §UpdateOnACK's model
/// update.
impl FastPathModel for Bbr3 {
    type Ack = AckInputs;

    /// The model update of §UpdateOnACK (Linux `bbr_update_model`), after the round and the
    /// latest delivery signals.
    #[inline]
    fn update_model(&mut self, tp: &mut TcpCc, rs: &RateSample, ack: AckInputs) {
        // NoteLoss for an ACK with new losses (the per-packet hook has already noted them; this
        // is idempotent within a round); the Draft variant treats new CE marks as congestion.
        if rs.losses > 0 || (self.ecn_as_congestion && ack.ce_now) {
            self.signals.note_loss(tp.delivered);
        }
        self.update_congestion_signals(rs, ack.sample_bw);
        self.update_ack_aggregation(tp, rs);
        self.full_bw.check_sample(
            self.round.round_start,
            rs.is_app_limited,
            ack.sample_bw,
            self.p.full_bw_every_ack,
            self.p.full_bw_cnt,
        );
        self.check_startup_done(tp, rs, ack.lost);
        self.update_model_fast(tp, rs, ack);
    }

    #[inline]
    fn update_model_fast(&mut self, tp: &mut TcpCc, rs: &RateSample, ack: AckInputs) {
        self.check_drain_done(tp);
        self.update_probe_bw_cycle_phase(tp, rs, ack.sample_bw, ack.lost);
        shared_probe_rtt::update_min_rtt_and_probe_rtt(self, tp, rs);
    }

    fast_path_accessors!();

    #[inline]
    fn sample_bw(&self, ack: AckInputs) -> u64 {
        ack.sample_bw
    }

    #[inline]
    fn max_bw(&self) -> u64 {
        Bbr3::max_bw(self)
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
        *self = Bbr3::with_params(self.rng, self.variant, self.p);
        self.init_cwnd = tp.snd_cwnd.clamp(1, INIT_CWND_MAX);
        self.prior_cwnd = tp.prior_cwnd;
        tp.snd_ssthresh = TCP_INFINITE_SSTHRESH;
        self.round.start_round(tp.delivered);
        // Start sampling the loss round after the first flight is acked (Linux).
        self.signals.loss_round_delivered = tp.delivered + 1;
        self.min_rtt = MinRtt::new(tp.min_rtt_ns, tp.now_ns);
        self.probe_rtt_min = MinRtt::new(tp.min_rtt_ns, tp.now_ns);
        self.agg = AckAggregation::with_form(tp.now_ns, self.p.extra_acked_max);
        self.ecn.alpha_last_delivered = tp.delivered;
        self.ecn.alpha_last_delivered_ce = tp.delivered_ce;
        self.ecn.last_delivered_ce = tp.delivered_ce;
        self.cur_cwnd = tp.snd_cwnd;
        self.ecn_as_congestion = self.p.ecn == EcnResponse::AsCongestion && tp.ecn_ok;
        self.pacer.init_from_rtt(tp);
        self.enter_startup();
        tp.pacing_enabled = true;
    }

    // Entering Recovery/Loss (§OnEnterFastRecovery / OnEnterRTO): SaveCwnd + SaveStateUponLoss.
    save_state_upon_loss!();

    /// §Per-ACK Steps UpdateOnACK.
    fn cong_control(&mut self, tp: &mut TcpCc, rs: &RateSample) {
        self.cur_cwnd = tp.snd_cwnd;
        self.ecn_as_congestion = self.p.ecn == EcnResponse::AsCongestion && tp.ecn_ok;
        let ce_now = self.ecn.ack_raised_ce(tp);
        let lost = rs.lost + rs.losses as u64; // RS.lost incl. this ACK's marking (header)
        let sample_bw = Self::bw_sample(rs);

        self.update_round(tp, rs);
        if self.round.round_start && self.p.ecn == EcnResponse::Dctcp {
            self.update_ecn_alpha(tp);
        }
        self.signals.ecn_in_round |= self.ecn.eligible && ce_now;
        self.update_latest_delivery_signals(tp, rs, sample_bw);
        let ack = AckInputs { sample_bw, lost, ce_now };
        if !fast_path::run(self, tp, rs, ack) {
            self.update_gains();
            // §UpdateControlParameters.
            self.set_pacing_rate_with_gain(tp, self.pacing_gain);
            self.set_cwnd(tp, rs);
            if self.prev_ca_state >= CaState::Recovery && tp.ca_state < CaState::Recovery {
                self.undo_state = None; // the loss episode is over
            }
        }
        self.advance_latest_delivery_signals(rs, sample_bw);
        self.prev_ca_state = tp.ca_state;
        self.signals.loss_in_cycle |= lost > 0;
        self.signals.ecn_in_cycle |= rs.delivered_ce > 0;
    }

    /// RTO: §OnEnterRTO cwnd = inflight + 1 (no-op if the transport already cut); Linux variant
    /// also resets the full-bw detector and seeds inflight_lo (`bbr_set_state`).
    fn set_state(&mut self, tp: &mut TcpCc, new_state: CaState) {
        if new_state != CaState::Loss {
            return;
        }
        inflight::enter_loss_cwnd_cut(tp);
        if self.p.rto_resets_model {
            self.full_bw.reset();
            if !self.is_probing_bw() && self.inflight_shortterm == INF_PKTS {
                self.inflight_shortterm = tp.snd_cwnd.max(self.prior_cwnd);
            }
        }
        self.prev_ca_state = CaState::Loss;
    }

    /// §HandleSpuriousLossDetection.
    fn undo_cwnd(&mut self, tp: &mut TcpCc) -> u32 {
        self.try_fast_path = false; // Linux: take the slow path to set cwnd and pacing again
        self.signals.loss_in_round = false;
        self.full_bw.reset();
        self.undo_bounds.restore(
            &mut self.bw_shortterm,
            &mut self.inflight_shortterm,
            &mut self.inflight_longterm,
        );
        let undo_state = if self.p.undo_keeps_phase { None } else { self.undo_state };
        match undo_state {
            Some(State::Startup) if self.state != State::Startup => {
                self.full_bw.reached = false;
                if self.state != State::ProbeRtt {
                    self.enter_startup();
                }
            }
            Some(State::ProbeBwUp)
                if self.state != State::ProbeBwUp && self.state != State::ProbeRtt =>
            {
                self.start_probe_bw_refill(tp, 0);
            }
            _ => {}
        }
        self.undo_state = None;
        tp.snd_cwnd.max(self.prior_cwnd) // RestoreCwnd
    }

    /// §HandleRestartFromIdle.
    fn cwnd_event(&mut self, tp: &mut TcpCc, ev: CwndEvent) {
        if !super::restart_from_idle(tp, ev, &mut self.idle_restart, &mut self.agg) {
            return;
        }
        if self.is_in_probe_bw() {
            self.set_pacing_rate_with_gain(tp, GAIN_UNIT); // pace at exactly bw
        } else if self.state == State::ProbeRtt {
            shared_probe_rtt::check_probe_rtt_done(self, tp);
        }
    }

    /// §Send Quantum.
    fn tso_segs(&self, tp: &TcpCc) -> Option<u32> {
        Some(self.send_quantum_segs(tp))
    }

    /// Phase codes: 0 startup, 1 drain, 2 probe_down, 3 probe_cruise, 4 probe_refill, 5 probe_up,
    /// 6 probe_rtt.
    fn sample(&self, tp: &TcpCc) -> CcStateSample {
        let finite = |v: u32| if v == INF_PKTS { 0.0 } else { v as f64 };
        CcStateSample {
            phase: self.state.name(),
            phase_code: self.state as u8,
            bw_bps: bw_bytes_per_sec(self.bw().min(u64::MAX >> 8), tp.mss) as f64 * 8.0,
            min_rtt_ns: self.min_rtt.rtt_ns,
            pacing_gain: gain_f64(self.pacing_gain),
            cwnd_gain: gain_f64(self.cwnd_gain),
            inflight_hi_segs: finite(self.inflight_longterm),
            inflight_lo_segs: finite(self.inflight_shortterm),
            ecn_alpha: if self.p.ecn == EcnResponse::Dctcp {
                self.ecn.alpha as f64 / BBR_UNIT as f64
            } else {
                0.0
            },
            ..Default::default()
        }
    }
}
