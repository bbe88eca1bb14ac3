//! BBRv2 as Google's Linux "v2alpha" runs it (`google/bbr`, branch v2alpha,
//! `net/ipv4/tcp_bbr2.c`), plus — behind `many_flows` ("bbr2_new") — the experimental
//! many-flows ECN changes of the Google BBRv2 slides (Google's 2019 "BBR v2 … Performance
//! Optimizations").
//!
//! # Model
//!
//! BBRv2 keeps BBRv1's two-parameter path model (max delivery rate, min RTT; see `v1`) and
//! bounds it with what loss and ECN say about the path:
//!
//! ```text
//! max_bw      = max delivery-rate sample over the last 1–2 PROBE_BW cycles (2-slot filter; the
//!               slot advances one round after each bandwidth probe ends)
//! bw_hi       = long-term upper bound on the rate (∞ in v2alpha; bbr2_new: max rate that showed a
//!               tolerable ECN mark rate, see below)
//! bw_lo       = short-term lower bound on the rate: cut per round with loss (·0.7, not below the
//!               rate delivered in that round) while not probing; reset to ∞ when probing starts
//! bbr_bw      = min(max_bw, bw_lo, bw_hi)                       (pacing and BDP use this)
//! inflight_hi = long-term upper bound on data in flight: set by a bandwidth probe that saw > 2 %
//!               loss (or ≥ 50 % CE) to max(tx_in_flight of that sample, 0.7·target_inflight),
//!               raised by any sample that was safe, grown 1, 2, 4, 8… packets per round in UP
//! inflight_lo = short-term lower bound on data in flight: per round with loss ·0.7 (not below
//!               what was delivered in that round), per round with CE ·(1 − α·ecn_factor)
//!               (bbr2_new: bw_lo too, outside PROBE_RTT)
//! cwnd        = min(2·BDP + aggregation + offload budget, phase cap(inflight_hi), inflight_lo)
//! ```
//!
//! STARTUP (pacing and cwnd gain 2/ln 2 ≈ 2.885) ends when the bandwidth plateaus (3 rounds with
//! < 25 % growth, as v1), or at the end of a round in Recovery with ≥ 8 separate loss events
//! (`full_loss_cnt`) and a loss rate > 2 %, or after 2 rounds with CE ≥ 50 % (`full_ecn_cnt`); the
//! last two also set inflight_hi to one BDP. DRAIN (pacing gain 1/2.885) runs until inflight ≤ BDP.
//! PROBE_BW is then a cycle of four phases, not v1's eight fixed ones:
//!
//! ```text
//! DOWN   (pacing 0.75) until inflight ≤ min(BDP, inflight_hi − 15 % headroom)  → CRUISE
//! CRUISE (pacing 1.0, cwnd ≤ inflight_hi − headroom) until it is time to probe  → REFILL
//!        time to probe = 2–3 s of wall clock since DOWN began (random, "BBR-native" scale)
//!                     or min(63, target_inflight) packet-timed rounds ("Reno coexistence")
//! REFILL (pacing 1.0, bw_lo/inflight_lo reset to ∞) for one round               → UP
//! UP     (pacing 1.25, cwnd ≤ inflight_hi growing 1,2,4,8… packets per round) until
//!        inflight ≥ 1.25·BDP after ≥ min_rtt, or inflight hits the previous too-high
//!        inflight_hi, or a sample shows loss > 2 % / CE ≥ 50 % (cuts inflight_hi) → DOWN
//! ```
//!
//! PROBE_RTT is entered when no RTT sample matched the 5-s minimum (`probe_rtt_win_ms`) for 5 s:
//! cwnd = max(4, 0.5·BDP) for max(200 ms, 1 round) after inflight reached it, then back to
//! PROBE_BW (DOWN→CRUISE) or STARTUP. min_rtt itself is a 10-s windowed minimum.
//!
//! ECN (DCTCP/L4S-style; v2alpha compiles it in but leaves it off, `bbr_ecn_enable = false`; here it
//! is on when the flow negotiated ECN, `tp.ecn_ok`, as the Google BBRv2 slides' experiments ran
//! with it on): `ecn_alpha` is an EWMA (gain 1/16, initial 1.0) of the per-round fraction of
//! delivered packets that were CE-marked; it is "eligible" to act only when min_rtt ≤ 5 ms
//! (`ecn_max_rtt_us`).
//!
//! # bbr2_new: the Google BBRv2 slides' "pacing to scale to num_flows ≫ BDP", as read here
//!
//! Slide text (quoted) → what this file does:
//! 1. "At end of each round trip with ECN marks: inflight_lo = (1 - alpha*ecn_factor) * inflight_lo;
//!    bw_lo = (1 - alpha*ecn_factor) * bw_lo // <- NEW", "Reduce bw_lo multiplicatively, in
//!    proportion to EWMA ECN mark rate", "Use ECN to adjust both rate and volume, as with loss" →
//!    in the per-round lower-bound update (only outside bandwidth probing, only if ECN-eligible and
//!    the round carried CE), bw_lo (initialised from max_bw if unset) is multiplied by the same
//!    factor as inflight_lo. No Linux release has this rule: v2alpha cuts only inflight_lo on ECN,
//!    and so does v3 (`google/bbr` `net/ipv4/tcp_bbr.c`, `bbr_adapt_lower_bounds` →
//!    `bbr_ecn_lower_bounds`, whose only bw_lo bound is `bw_lo = max(1U, bw_lo)`).
//!    *Except in PROBE_RTT* (our choice; the slides say nothing about it): as written the cut has no
//!    floor (the loss cut stops at the round's delivery rate, `bw_latest`), and with many flows
//!    every round of PROBE_RTT is marked — N flows × 4 packets stay queued above the threshold —
//!    while nothing resets bw_lo until PROBE_RTT ends. bw_lo then fell ~0.5× per round to
//!    ~kbit/s within ~10 ms (N = 160, 50 Gbit/s, 50 µs: 49 of 160 flows below 1 Mbit/s), and a
//!    flow paced that slowly cannot collect the round of ACKs PROBE_RTT's exit needs: flows sat
//!    there 0.2–0.6 s+ sending a packet per ~0.5 s, their srtt ~5 ms (the receiver's 40 ms
//!    delayed ACK), link utilisation ~70 %. In PROBE_RTT cwnd already pins the volume and bw_lo is
//!    discarded on exit, so there the ECN response is inflight_lo only, as in v2alpha.
//! 2. "Increase ecn_factor from 0.3 to 0.5 (similar to DCTCP)" → `ECN_FACTOR_NEW` = 1/2 (v2alpha's
//!    1/3, which the slide rounds to 0.3, stays for bbr2).
//! 3. "Decouple bw_hi from max bw sample" → in v2alpha "bw_hi" *is* the 2-slot max filter; here the
//!    filter is `max_bw` and `bw_hi` is a separate bound, ∞ until a bandwidth probe ends with a
//!    too-high ECN rate (Linux's later layout, `max_bw[2]` + `bw_hi`).
//! 4. "Refine bw_hi to be the maximum bw that showed tolerable ECN mark rate" → once set, bw_hi is
//!    raised to any rate sample whose loss rate ≤ 2 % and CE rate < `ecn_thresh` (½); samples with
//!    intolerable marks never raise it.
//! 5. "Multiplicative cut to bw_hi if no bw sample has ECN mark rate < ecn_thresh" → when a
//!    bandwidth probe (REFILL/UP samples) is declared too high and *no* sample of that probe was
//!    tolerable (`got_ok_bw_probe_sample` false), bw_hi (max_bw if unset) is multiplied by
//!    (1 − α·ecn_factor). Not in v2alpha, nor in v3's `bbr_handle_inflight_too_high`.
//! 6. "Additive increase to rate and volume of inflight data when starting bw probing:
//!    inflight_hi += 1pkt; bw_hi += 1pkt/min_rtt" → on entering REFILL (the start of every probe),
//!    inflight_hi += 1 packet if set (Linux `bbr_refill_add_inc = 1`) and bw_hi += 1 packet per
//!    min_rtt if set (not in any Linux version: implemented from the slide).
//!
//! # Names
//!
//! The code uses the BBR draft's names (draft-ietf-ccwg-bbr), as v3 does; this header and
//! the slides quoted above use v2alpha's. Where they differ:
//!
//! | draft (code)                     | v2alpha (`tcp_bbr2.c`)             |
//! |----------------------------------|------------------------------------|
//! | `State` (STARTUP … PROBE_RTT)    | `enum bbr_mode`                    |
//! | `round.round_count`, `round.next_round_delivered` | `next_rtt_delivered` (no count) |
//! | `bw_shortterm`                   | `bw_lo`                            |
//! | `inflight_longterm`              | `inflight_hi`                      |
//! | `inflight_shortterm`             | `inflight_lo`                      |
//! | `reset_short_term_model`         | `bbr2_reset_lower_bounds`          |
//! | `start_probe_bw_{down,cruise,refill,up}` | `bbr2_start_bw_probe_*`    |
//! | `check_drain_done`               | `bbr2_check_drain`                 |
//! | `update_probe_bw_cycle_phase`    | `bbr2_update_cycle_phase`          |
//! | `cycle_stamp_ns`                 | `cycle_mstamp`                     |
//! | `bw_probe_wait_ns`               | `probe_wait_us`                    |
//! | `rounds_since_bw_probe`          | `rounds_since_probe`               |
//!
//! # Units and arithmetic
//!
//! Linux's fixed point, as in the whole family (`bbr/units.rs`): bandwidth in packets/µs << 24,
//! fractions scaled by 256, so e.g. loss_thresh is 5/256 = 1.95 %, beta 76/256, headroom 38/256,
//! ecn_factor 85/256 (bbr2) or 128/256 (bbr2_new); gains are Linux's 2^8 values carried in the
//! family's 2^16 gain field (bit-exact). Time is ns (Linux: µs stamps, jiffies for the PROBE_RTT
//! clocks), except the EDT interval of `bbr_packets_in_net_at_edt`, truncated to µs as Linux does
//! (`EDT_CLOCK`). Bandwidths are u64 and `u64::MAX` / `u32::MAX` stand for Linux's `~0U`
//! ("unset").
//!
//! # Deliberate differences from v2alpha
//!
//! - ECN is enabled by `tp.ecn_ok` (the flow negotiated ECN) instead of the global
//!   `bbr_ecn_enable` module parameter (off by default in v2alpha).
//! - `rs->is_ece` (this ACK carried ECE) is not in [`RateSample`]; it is derived as "this ACK
//!   raised `tp.delivered_ce`", which is what an accurate-ECN / DCTCP-style receiver conveys.
//! - v2 does not implement the transport's `skb_marked_lost` hook (BBRv3 does). Its bookkeeping
//!   (start a loss round at the first loss, `loss_in_round`, `loss_in_cycle`) is done at the start
//!   of `cong_control` for an ACK with `rs.losses > 0`; without the per-lost-packet inflight_hi
//!   refinement (`bbr2_inflight_hi_from_lost_skb`), excess loss is detected only from the ACK's
//!   rate sample (`rs.lost` vs `rs.tx_in_flight`), as `bbr2_adapt_upper_bounds` also does.
//! - The ACK-aggregation epoch (`bbr_update_ack_aggregation`) is measured in ns like every
//!   clock of the family (Linux: µs; this file truncated to µs before the family shared one
//!   implementation).
//! - Fast path (Google BBRv2 slides optimisation 1, v2alpha `bbr2_run_fast_path`), on unless
//!   `tp.fast_path` is false: once cwnd stands at its target (`try_fast_path`), an app-limited
//!   ACK whose sample is below max_bw, in a round without loss or CE, runs only check_drain,
//!   the ProbeBW cycle and the min_rtt update; if neither the mode nor min_rtt changed, it skips
//!   the rest of the model and the control update (counted in `tp.cc_fast_acks`: the simulator's
//!   host model charges those ACKs no algorithm CPU), otherwise the rest of the model only.
//! - The receiver-side `CA_EVENT_ECN_IS_CE/NO_CE` handling (`dctcp_ece_ack_update`) and
//!   `fast_ack_mode` (Google BBRv2 slides optimisation 3) belong to bbrlab's receiver, not to this
//!   file.
//! - TSO autosizing (Google BBRv2 slides optimisation 2) follows `bbr_tso_segs_generic`; the
//!   min_rtt term is dropped when `tp.tso_minrtt_autosize` is false (Linux: `tso_rtt_shift = 0`).
//! - The random draws (probe wait, Reno round offset) come from a SplitMix64 generator seeded by
//!   `Bbr2::new(seed, _)`, so runs are reproducible.

mod bounds;
mod control;
mod params;
mod probe_bw;
mod probe_rtt;
#[cfg(test)]
mod tests;

pub use params::{Params, Variant};

use super::aggregation::{AckAggregation, EXTRA_ACKED_WIN_RTTS};
use super::ecn::EcnState;
use super::fast_path;
use super::inflight::{self, InflightCap};
use super::pacing::Pacer;
use super::probe_bw::{ProbeBwClock, PACING_GAIN_UP};
use super::probe_rtt::{self as shared_probe_rtt, MinRtt, ProbeRttHold, ProbeRttModel};
use super::round::RoundCounter;
use super::signals::CongestionSignals;
use super::startup::{FullBw, DRAIN_GAIN, HIGH_GAIN};
use super::tso;
use super::undo::{save_state_upon_loss, UndoBounds};
use super::units::{
    bw_bytes_per_sec, bw_ceil, gain_f64, linux_gain, Clock, BBR_UNIT, GAIN_UNIT, INF_BW, INF_PKTS,
};
use super::windowed_filter::TwoSlotMax;
use crate::rng::SplitMix64;
use crate::{
    CaState, CcStateSample, CongestionOps, CwndEvent, RateSample, TcpCc, TCP_INFINITE_SSTHRESH,
};

/// STARTUP cwnd gain: v2alpha keeps 2.885 (`bbr_startup_cwnd_gain`; v3 lowered it to 2).
const STARTUP_CWND_GAIN: u64 = HIGH_GAIN;
/// PROBE_BW cwnd gain 2: room for delayed/stretched ACKs while pacing at bw.
const CWND_GAIN: u64 = 2 * GAIN_UNIT;
/// PROBE_BW DOWN pacing gain 3/4: drains what UP queued.
const PACING_GAIN_DOWN: u64 = linux_gain(BBR_UNIT * 3 / 4);
/// Leave 15 % of inflight_longterm unused while cruising, for other flows' convergence.
const INFLIGHT_HEADROOM: u64 = linux_gain(BBR_UNIT * 15 / 100);
/// v2alpha floors the pacing rate at 1 B/s (`bbr_rate_bytes_per_sec`: `max(rate, 1ULL)`).
const PACING_RATE_FLOOR: u64 = 1;
/// v2alpha's `bbr_packets_in_net_at_edt` truncates the EDT interval to µs, as Linux (`div_u64(edt_ns
/// − now_ns, NSEC_PER_USEC)`); v1 and v3 here keep ns.
const EDT_CLOCK: Clock = Clock::Us;
/// `init_cwnd` bound (Linux keeps it in 7 bits).
const INIT_CWND_MAX: u32 = 0x7F;

/// BBR modes (Linux `enum bbr_mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

/// PROBE_BW phases (Linux `enum bbr_pacing_gain_phase`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Up,
    Down,
    Cruise,
    Refill,
}

#[derive(Clone, Debug)]
pub struct Bbr2 {
    variant: Variant,
    /// The constants that differ between bbr2 and bbr2_new.
    p: Params,
    rng: SplitMix64,

    state: State,
    cycle: Phase,
    /// When the phase began, when to probe next, the ACK phase.
    probe_bw: ProbeBwClock,
    /// 10 s min_rtt, fed by the 5 s `probe_rtt_min` sub-window that schedules PROBE_RTT.
    min_rtt: MinRtt,
    probe_rtt_min: MinRtt,
    probe_rtt: ProbeRttHold,
    /// Packet-timed rounds (BBR.round_count, BBR.next_round_delivered, BBR.round_start).
    round: RoundCounter,
    prev_ca_state: CaState,
    idle_restart: bool,
    /// Gains, 2^16.
    pacing_gain: u64,
    cwnd_gain: u64,
    full_bw: FullBw,
    pacer: Pacer<PACING_RATE_FLOOR>,
    init_cwnd: u32,
    prior_cwnd: u32,
    agg: AckAggregation,
    // v2 model.
    /// BBR.max_bw over the last 1–2 probe cycles (Linux `bw_hi[2]` / `max_bw[2]`).
    max_bw_filter: TwoSlotMax<u64>,
    bw_hi: u64,
    /// BBR.bw_shortterm (v2alpha `bw_lo`).
    bw_shortterm: u64,
    /// BBR.inflight_longterm (v2alpha `inflight_hi`).
    inflight_longterm: u32,
    /// BBR.inflight_shortterm (v2alpha `inflight_lo`).
    inflight_shortterm: u32,
    /// The bounds saved on entering Recovery/Loss, for undo.
    undo_bounds: UndoBounds,
    bw_probe_up_cnt: u32,
    bw_probe_up_acks: u32,
    bw_probe_up_rounds: u32,
    bw_probe_samples: bool,
    prev_probe_too_high: bool,
    stopped_risky_probe: bool,
    got_ok_bw_probe_sample: bool,
    /// Per-round loss/ECN signals and latest rate/volume.
    signals: CongestionSignals,
    /// DCTCP-style ECN state (alpha, eligibility, STARTUP's ECN exit).
    ecn: EcnState,
    /// Bandwidth sample of the current ACK (`ctx->sample_bw`).
    sample_bw: u64,
    /// cwnd reached its target on the last ACK that delivered data (`try_fast_path`).
    try_fast_path: bool,
}

impl Bbr2 {
    pub fn new(seed: u64, variant: Variant) -> Self {
        Self::with_rng(SplitMix64::new(seed), variant)
    }

    fn with_rng(rng: SplitMix64, variant: Variant) -> Self {
        Bbr2 {
            variant,
            p: variant.params(),
            rng,
            state: State::Startup,
            cycle: Phase::Up,
            probe_bw: ProbeBwClock::default(),
            min_rtt: MinRtt::NONE,
            probe_rtt_min: MinRtt::NONE,
            probe_rtt: ProbeRttHold::default(),
            round: RoundCounter::default(),
            prev_ca_state: CaState::Open,
            idle_restart: false,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: STARTUP_CWND_GAIN,
            full_bw: FullBw::default(),
            pacer: Pacer::new(HIGH_GAIN),
            init_cwnd: 10,
            prior_cwnd: 0,
            agg: AckAggregation::new(0),
            max_bw_filter: TwoSlotMax::default(),
            bw_hi: INF_BW,
            bw_shortterm: INF_BW,
            inflight_longterm: INF_PKTS,
            inflight_shortterm: INF_PKTS,
            undo_bounds: UndoBounds::default(),
            bw_probe_up_cnt: INF_PKTS,
            bw_probe_up_acks: 0,
            bw_probe_up_rounds: 0,
            bw_probe_samples: false,
            prev_probe_too_high: false,
            stopped_risky_probe: false,
            got_ok_bw_probe_sample: false,
            signals: CongestionSignals::default(),
            ecn: EcnState::default(),
            sample_bw: 0,
            try_fast_path: false,
        }
    }

    pub fn name(&self) -> &'static str {
        self.p.name
    }

    pub fn state(&self) -> State {
        self.state
    }

    /// PROBE_BW phase (meaningful in `State::ProbeBw`).
    pub fn phase(&self) -> Phase {
        self.cycle
    }

    /// The model and controls, read-only (tests, tracing).
    pub fn model_view(&self, tp: &TcpCc) -> super::ModelView {
        super::ModelView {
            state_code: self.sample(tp).phase_code,
            max_bw: self.max_bw(),
            bw: self.bw(),
            bw_shortterm: self.bw_shortterm,
            bw_hi: self.bw_hi,
            inflight_longterm: self.inflight_longterm,
            inflight_shortterm: self.inflight_shortterm,
            extra_acked: self.agg.allowance(self.bw()),
            pacing_gain: self.pacing_gain,
            cwnd_gain: self.cwnd_gain,
            prior_cwnd: self.prior_cwnd,
            ecn_alpha: self.ecn.alpha,
            idle_restart: self.idle_restart,
            ..super::ModelView::from_shared_parts(&self.round, &self.min_rtt, &self.full_bw)
        }
    }

    // ------------------------------------------------------------------ model accessors

    /// `bbr_max_bw`: max of the two per-cycle slots.
    #[inline]
    fn max_bw(&self) -> u64 {
        self.max_bw_filter.get()
    }

    /// `bbr_bw`: min(max_bw, bw_shortterm, bw_hi).
    #[inline]
    fn bw(&self) -> u64 {
        self.max_bw().min(self.bw_shortterm).min(self.bw_hi)
    }

    /// `bbr_tso_segs_generic` (Google BBRv2 slides optimisation 2, "Improved TSO autosizing"):
    /// `bytes = pacing_rate >> sk_pacing_shift` (~1 ms of data) `+ 64 KB >> (min_rtt_us >> 9)`
    /// ("r = min_rtt >> K_r; size += 0xFFFF >> r"), capped at 64 KB − headers, ≥ min_tso_segs.
    pub fn tso_segs_goal(&self, tp: &TcpCc) -> u32 {
        let mut bytes = tso::pacing_burst_bytes(tp.pacing_rate_bytes_per_s);
        if tp.tso_minrtt_autosize {
            bytes += tso::min_rtt_burst_bytes(self.min_rtt.rtt_ns);
        }
        bytes = bytes.min(tso::GSO_MAX_BYTES);
        ((bytes / tp.mss.max(1) as u64) as u32).max(tso::min_tso_segs(tp.pacing_rate_bytes_per_s))
    }

    /// `bbr_bdp`: ceil(bw × min_rtt × gain) packets; init_cwnd before any RTT sample.
    fn bdp(&self, bw: u64, gain: u64) -> u32 {
        inflight::bdp(bw, self.min_rtt.rtt_ns, gain, self.init_cwnd)
    }

    /// `bbr2_inflight_with_headroom`: inflight_longterm less 15 % (≥ 1 packet), ≥ 4.
    fn inflight_with_headroom(&self) -> u32 {
        inflight::inflight_with_headroom(self.inflight_longterm, INFLIGHT_HEADROOM)
    }

    /// `bbr_calculate_bw_sample`: delivered / interval, rounded up.
    fn calculate_bw_sample(&mut self, rs: &RateSample) {
        self.sample_bw = 0;
        if rs.interval_ns > 0 && rs.delivered >= 0 {
            self.sample_bw = bw_ceil(rs.delivered as u64, rs.interval_ns as u64);
        }
    }

    /// `bbr_update_ack_aggregation` (in STARTUP the window is 1 round, `bbr_extra_acked_in_startup`).
    fn update_ack_aggregation(&mut self, tp: &TcpCc, rs: &RateSample) {
        let win_rtts = if self.full_bw.reached { EXTRA_ACKED_WIN_RTTS } else { 1 };
        self.agg.update(rs, &self.round, win_rtts, self.bw(), tp.delivered_mstamp_ns, tp.snd_cwnd);
    }

    /// `bbr_check_drain` + `bbr2_check_drain`.
    fn check_drain_done(&mut self, tp: &mut TcpCc) {
        if self.state == State::Startup && self.full_bw.reached {
            self.state = State::Drain;
            tp.snd_ssthresh = self.inflight(tp, self.max_bw(), GAIN_UNIT);
            self.signals.reset();
        }
        if self.state == State::Drain
            && self.packets_in_net_at_edt(tp, tp.packets_in_flight())
                <= self.inflight(tp, self.max_bw(), GAIN_UNIT)
        {
            self.state = State::ProbeBw;
            self.start_probe_bw_down(tp);
        }
    }

    /// `bbr_update_gains`.
    fn update_gains(&mut self) {
        let (p, c) = match self.state {
            State::Startup => (HIGH_GAIN, STARTUP_CWND_GAIN),
            State::Drain => (DRAIN_GAIN, STARTUP_CWND_GAIN), // slow pacing, keep cwnd
            State::ProbeBw => (
                match self.cycle {
                    Phase::Up => PACING_GAIN_UP,
                    Phase::Down => PACING_GAIN_DOWN,
                    Phase::Cruise | Phase::Refill => GAIN_UNIT,
                },
                CWND_GAIN,
            ),
            State::ProbeRtt => (GAIN_UNIT, GAIN_UNIT),
        };
        self.pacing_gain = p;
        self.cwnd_gain = c;
    }
}

impl CongestionOps for Bbr2 {
    fn has_cong_control(&self) -> bool {
        true
    }

    /// `bbr_init` + `bbr2_init`.
    fn init(&mut self, tp: &mut TcpCc) {
        *self = Bbr2::with_rng(self.rng, self.variant);
        self.init_cwnd = tp.snd_cwnd.min(INIT_CWND_MAX);
        self.prior_cwnd = tp.prior_cwnd;
        tp.snd_ssthresh = TCP_INFINITE_SSTHRESH;
        self.round.next_round_delivered = 0;
        self.probe_rtt_min = MinRtt::new(tp.min_rtt_ns, tp.now_ns);
        self.min_rtt = MinRtt::new(tp.min_rtt_ns, tp.now_ns);
        self.pacer.init_from_rtt(tp);
        self.agg = AckAggregation::new(tp.now_ns);
        // Start sampling the ECN mark rate after the first full flight is ACKed.
        self.signals.loss_round_delivered = tp.delivered + 1;
        self.ecn.alpha_last_delivered = 0;
        self.ecn.alpha_last_delivered_ce = 0;
        self.ecn.last_delivered_ce = tp.delivered_ce;
        tp.pacing_enabled = true; // SK_PACING_NEEDED
    }

    // `bbr2_ssthresh`: save cwnd and the loss-adapted bounds for undo; keep ssthresh.
    save_state_upon_loss!();

    /// `bbr2_main`.
    fn cong_control(&mut self, tp: &mut TcpCc, rs: &RateSample) {
        // `bbr2_skb_marked_lost` bookkeeping (see header): the stack marked packets lost on this
        // ACK before calling us; the first loss of a round starts a loss round.
        if rs.losses > 0 {
            self.signals.note_loss(tp.delivered);
        }
        let is_ece = self.ecn.ack_raised_ce(tp);

        // §UpdateRound (`bbr_update_round_start`: samples with a positive interval).
        self.round.update(rs.interval_ns > 0, rs, tp.delivered);
        if self.round.round_start {
            self.probe_bw.rounds_since_bw_probe =
                (self.probe_bw.rounds_since_bw_probe + 1).min(0xFF);
            self.update_ecn_alpha(tp);
        }
        self.signals.ecn_in_round |= is_ece;
        self.calculate_bw_sample(rs);

        if !fast_path::run(self, tp, rs, ()) {
            self.update_gains();
            let bw = self.bw();
            self.pacer.set(tp, bw, self.pacing_gain, self.full_bw.reached);
            self.set_cwnd(tp, rs.acked_sacked, bw, self.cwnd_gain);
            self.bound_cwnd_for_inflight_model(tp);
        }

        self.prev_ca_state = tp.ca_state;
        self.signals.loss_in_cycle |= rs.lost > 0;
        self.signals.ecn_in_cycle |= rs.delivered_ce > 0;
    }

    /// `bbr2_set_state`.
    fn set_state(&mut self, tp: &mut TcpCc, new_state: CaState) {
        if new_state == CaState::Loss {
            self.prev_ca_state = CaState::Loss;
            self.full_bw.bw = 0;
            if !self.is_probing_bw() && self.inflight_shortterm == INF_PKTS {
                // adapt_lower_bounds needs the cwnd from before the RTO.
                self.inflight_shortterm = self.prior_cwnd;
            }
        } else if self.prev_ca_state == CaState::Loss {
            tp.snd_cwnd = tp.snd_cwnd.max(self.prior_cwnd);
        }
    }

    /// `bbr2_undo_cwnd`: spurious recovery; restore the bounds saved in ssthresh().
    fn undo_cwnd(&mut self, _tp: &mut TcpCc) -> u32 {
        self.try_fast_path = false; // take the slow path to set cwnd and pacing again
        self.full_bw.reset(); // `now` is v3's: always false here
        self.signals.loss_in_round = false;
        self.undo_bounds.restore(
            &mut self.bw_shortterm,
            &mut self.inflight_shortterm,
            &mut self.inflight_longterm,
        );
        self.prior_cwnd
    }

    /// `bbr_cwnd_event`: restart from idle.
    fn cwnd_event(&mut self, tp: &mut TcpCc, ev: CwndEvent) {
        if !super::restart_from_idle(tp, ev, &mut self.idle_restart, &mut self.agg) {
            return;
        }
        match self.state {
            State::ProbeBw => self.pacer.set(tp, self.bw(), GAIN_UNIT, self.full_bw.reached),
            State::ProbeRtt => shared_probe_rtt::check_probe_rtt_done(self, tp),
            State::Startup | State::Drain => {}
        }
    }

    /// `bbr_tso_segs`.
    fn tso_segs(&self, tp: &TcpCc) -> Option<u32> {
        Some(self.tso_segs_goal(tp))
    }

    /// Phase codes: 0 startup, 1 drain, 2 probe_down, 3 probe_cruise, 4 probe_refill,
    /// 5 probe_up, 6 probe_rtt.
    fn sample(&self, tp: &TcpCc) -> CcStateSample {
        let code = match (self.state, self.cycle) {
            (State::Startup, _) => 0,
            (State::Drain, _) => 1,
            (State::ProbeBw, Phase::Down) => 2,
            (State::ProbeBw, Phase::Cruise) => 3,
            (State::ProbeBw, Phase::Refill) => 4,
            (State::ProbeBw, Phase::Up) => 5,
            (State::ProbeRtt, _) => 6,
        };
        let (phase, code) = crate::phases::phase(crate::phases::BBR2_3, code);
        // bbr2_get_info: bbr_bw in bytes/s.
        let pkts = |v: u32| if v == INF_PKTS { 0.0 } else { v as f64 };
        CcStateSample {
            phase,
            phase_code: code,
            bw_bps: bw_bytes_per_sec(self.bw(), tp.mss) as f64 * 8.0,
            min_rtt_ns: self.min_rtt.rtt_ns,
            pacing_gain: gain_f64(self.pacing_gain),
            cwnd_gain: gain_f64(self.cwnd_gain),
            inflight_hi_segs: pkts(self.inflight_longterm),
            inflight_lo_segs: pkts(self.inflight_shortterm),
            ecn_alpha: self.ecn.alpha as f64 / BBR_UNIT as f64,
            ..Default::default()
        }
    }
}
