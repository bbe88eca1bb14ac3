//! BBRv1 (Bottleneck Bandwidth and Round-trip propagation time) as Linux mainline
//! `net/ipv4/tcp_bbr.c` runs it, and as Linux 4.13 did (`bbr1_linux413`: no ACK-aggregation
//! term, no pacing margin, no EDT accounting; the switches are `params.rs`).
//!
//! Model. On every ACK BBR updates a two-parameter model of the path from the delivery-rate sample
//! (`rate.rs`) and sets its controls from it:
//!
//! ```text
//! max_bw   = windowed max of delivery-rate samples over the last 10 packet-timed round trips
//! min_rtt  = minimum RTT seen over the last 10 s
//! BDP      = max_bw · min_rtt
//! pacing   = pacing_gain · max_bw · (1 − 1 %)
//! cwnd     = cwnd_gain · BDP + extra_acked (ACK aggregation) + quantization budget (offload)
//! ```
//!
//! A state machine varies the gains: STARTUP (pacing and cwnd gain 2/ln 2 ≈ 2.885, doubling the
//! sending rate per round like slow start) until the bandwidth stops growing by 25 % for 3
//! non-app-limited rounds ("full pipe"); DRAIN (pacing gain 1/2.885) until the packets in flight
//! fall to one BDP; PROBE_BW, cycling the pacing gain through {5/4, 3/4, 1, 1, 1, 1, 1, 1}, one
//! phase per min_rtt, to probe for more bandwidth and then drain the queue the probe made (cwnd
//! gain 2); PROBE_RTT when min_rtt has not been refreshed for 10 s: cwnd 4 packets for at least
//! 200 ms and one round, to let the queue drain and measure the propagation delay, then back to
//! PROBE_BW (or STARTUP if the pipe was never filled). Losses do not drive the model; they cut
//! cwnd through packet conservation in the first round of recovery, and a "long-term" (policer)
//! estimator switches the bandwidth to the average delivery rate of two lossy (≥ 20 %) intervals
//! of consistent rate, pacing at gain 1 for 48 rounds (`lt_bw.rs`).
//!
//! Units and arithmetic: Linux's fixed point (`bbr/units.rs`). Bandwidth is packets per
//! microsecond scaled by 2^24 (`BW_SCALE`); gains are Linux's 2^8 (`BBR_SCALE`) values carried in
//! the family's 2^16 gain field, which gives tcp_bbr.c's integer results bit for bit, so gains,
//! rounding (e.g. ceil of the BDP, the 739/256 high gain and 88/256 drain gain) and comparisons
//! reproduce Linux's; intermediates are u128 so nothing overflows. Reason: bbrlab is compared
//! against Linux, and thresholds such as "full pipe = bw ≥ 1.25·full_bw" or "inflight ≤ BDP" flip
//! on rounding. Time is kept in nanoseconds (Linux: µs for rate and cycle stamps, jiffies for
//! min_rtt and PROBE_RTT stamps), so a bandwidth sample is `delivered · 2^24 · 1000 / interval_ns`
//! and the BDP uses `min_rtt_ns / 1000` — the same units as Linux with finer time resolution.
//!
//! Where bbrlab deliberately differs from Linux:
//! - Time resolution: ns everywhere (Linux: µs stamps; the 10 s min_rtt window and the 200 ms
//!   PROBE_RTT hold are in jiffies; the long-term interval length in ms).
//! - The ACK-aggregation estimate (`extra_acked`) is kept in u32, not u16 (Linux would truncate
//!   above 65535 packets).
//! - `set_state(Loss)` also applies the cwnd cut that Linux makes in `tcp_enter_loss`
//!   (`cwnd = packets_in_flight + 1`) if the transport has not applied it yet, so the algorithm
//!   behaves the same when driven alone; if the transport already did it this is a no-op. As in
//!   Linux, the cwnd to restore is saved only by `ssthresh()` (`bbr_save_cwnd`), which the caller
//!   must invoke on entering Recovery/Loss exactly where Linux does (`tcp_init_cwnd_reduction`,
//!   `tcp_enter_loss`) and before `set_state`.
//! - `sample().bw_bps` reports `bbr_bw()` (lt_bw while the policer model is in use, else max_bw),
//!   as Linux's `bbr_get_info` does.
//! - `tso_segs()` returns `bbr_tso_segs_goal` (the 4.x-era `.tso_segs_goal` hook); current
//!   mainline exports only `bbr_min_tso_segs` and lets `tcp_tso_autosize` do the rest.
//! - The random PROBE_BW start phase comes from a SplitMix64 generator seeded by `Bbr1::new(seed)`
//!   (Linux: `get_random_u32_below`), so runs are reproducible.

mod lt_bw;
mod params;
mod probe_bw;
#[cfg(test)]
mod tests;

pub use params::{Params, Variant};

use super::aggregation::{AckAggregation, EXTRA_ACKED_WIN_RTTS};
use super::inflight::{self, CWND_MIN_TARGET};
use super::pacing::Pacer;
use super::probe_rtt::{
    self, probe_rtt_bookkeeping, MinRtt, ProbeRttHold, ProbeRttModel, MIN_RTT_WIN_NS,
};
use super::round::RoundCounter;
use super::startup::{FullBw, DRAIN_GAIN, HIGH_GAIN};
use super::tso;
use super::units::{bw_bytes_per_sec, bw_floor, gain_f64, Clock, GAIN_UNIT};
use super::windowed_filter::MaxFilter;
use crate::rng::SplitMix64;
use crate::{
    CaState, CcStateSample, CongestionOps, CwndEvent, Nanos, RateSample, TcpCc,
    TCP_INFINITE_SSTHRESH,
};

/// Linux `TCP_INIT_CWND`: the BDP assumed before any RTT sample.
const TCP_INIT_CWND: u32 = 10;
/// Steady-state cwnd gain 2: tolerates delayed and stretched ACKs while pacing at bw.
const CWND_GAIN: u64 = 2 * GAIN_UNIT;
/// Burst cap in segments (Linux `0x7F`).
const TSO_SEGS_MAX: u32 = 0x7F;
/// Mainline v1 has no floor under the pacing rate (v2alpha/v3: 1 B/s).
const PACING_RATE_FLOOR: u64 = 0;
/// Clock of the EDT interval (ns, the family rule).
const EDT_CLOCK: Clock = Clock::Ns;

/// BBR modes (Linux `enum bbr_mode`), also the exported phase codes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Startup = 0,
    Drain = 1,
    ProbeBw = 2,
    ProbeRtt = 3,
}

#[derive(Clone, Debug)]
pub struct Bbr1 {
    /// Which kernel's tcp_bbr.c (`params.rs`).
    p: Params,
    rng: SplitMix64,
    mode: Mode,
    /// min RTT in the 10 s window (u64::MAX = none).
    min_rtt: MinRtt,
    probe_rtt: ProbeRttHold,
    /// Max delivery rate over BW_RTTS rounds, pkts/µs << 24; time axis = `rtt_cnt`.
    bw: MaxFilter,
    /// Packet-timed rounds (`rtt_cnt`, `next_rtt_delivered`, `round_start`).
    round: RoundCounter,
    /// Start of the current PROBE_BW phase (a `delivered_mstamp`).
    cycle_mstamp_ns: Nanos,
    cycle_idx: usize,
    prev_ca_state: CaState,
    packet_conservation: bool,
    idle_restart: bool,
    /// Gains, 2^16.
    pacing_gain: u64,
    cwnd_gain: u64,
    full_bw: FullBw,
    pacer: Pacer<PACING_RATE_FLOOR>,
    /// cwnd saved on entering recovery or PROBE_RTT.
    prior_cwnd: u32,
    // Long-term (policer) model, `lt_bw.rs`.
    lt_is_sampling: bool,
    lt_rtt_cnt: u32,
    lt_use_bw: bool,
    lt_bw: u64,
    lt_last_delivered: u64,
    lt_last_stamp_ns: Nanos,
    lt_last_lost: u64,
    agg: AckAggregation,
}

impl Bbr1 {
    /// Mainline BBRv1.
    pub fn new(seed: u64) -> Self {
        Self::with_variant(seed, Variant::Mainline)
    }

    pub fn with_variant(seed: u64, variant: Variant) -> Self {
        let p = Params::of(variant);
        Bbr1 {
            p,
            rng: SplitMix64::new(seed),
            mode: Mode::Startup,
            min_rtt: MinRtt::NONE,
            probe_rtt: ProbeRttHold::default(),
            bw: MaxFilter::new_max(),
            round: RoundCounter::default(),
            cycle_mstamp_ns: 0,
            cycle_idx: 0,
            prev_ca_state: CaState::Open,
            packet_conservation: false,
            idle_restart: false,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            full_bw: FullBw::default(),
            pacer: Pacer::with_margin(HIGH_GAIN, p.pacing_margin_percent),
            prior_cwnd: 0,
            lt_is_sampling: false,
            lt_rtt_cnt: 0,
            lt_use_bw: false,
            lt_bw: 0,
            lt_last_delivered: 0,
            lt_last_stamp_ns: 0,
            lt_last_lost: 0,
            agg: AckAggregation::new(0),
        }
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The model and controls, read-only (tests, tracing).
    pub fn model_view(&self) -> super::ModelView {
        super::ModelView {
            state_code: self.mode as u8,
            cycle_idx: self.cycle_idx as u8,
            max_bw: self.max_bw(),
            bw: self.bw(),
            lt_bw: if self.lt_use_bw { self.lt_bw } else { 0 },
            extra_acked: self.ack_aggregation_cwnd(),
            pacing_gain: self.pacing_gain,
            cwnd_gain: self.cwnd_gain,
            prior_cwnd: self.prior_cwnd,
            idle_restart: self.idle_restart,
            ..super::ModelView::from_shared_parts(&self.round, &self.min_rtt, &self.full_bw)
        }
    }

    /// `bbr_max_bw`.
    #[inline]
    fn max_bw(&self) -> u64 {
        self.bw.get()
    }

    /// `bbr_bw`: the estimate in use.
    #[inline]
    fn bw(&self) -> u64 {
        if self.lt_use_bw {
            self.lt_bw
        } else {
            self.max_bw()
        }
    }

    /// `bbr_tso_segs_goal`: ~1 ms of data per burst, ≥ min_tso_segs, ≤ 64 KB and 127 segments.
    pub fn tso_segs_goal(tp: &TcpCc) -> u32 {
        let bytes = tso::pacing_burst_bytes(tp.pacing_rate_bytes_per_s).min(tso::GSO_MAX_BYTES);
        let segs = ((bytes / tp.mss.max(1) as u64) as u32)
            .max(tso::min_tso_segs(tp.pacing_rate_bytes_per_s));
        segs.min(TSO_SEGS_MAX)
    }

    /// `bbr_bdp`: ceil(bw × min_rtt × gain) in packets.
    fn bdp(&self, bw: u64, gain: u64) -> u32 {
        inflight::bdp(bw, self.min_rtt.rtt_ns, gain, TCP_INIT_CWND)
    }

    /// `bbr_quantization_budget`: room for 3 offload bursts, even cwnd, +2 while probing.
    fn quantization_budget(&self, tp: &TcpCc, cwnd: u32) -> u32 {
        let probing_up =
            self.p.probe_up_extra_cwnd && self.mode == Mode::ProbeBw && self.cycle_idx == 0;
        tso::quantization_budget_even(cwnd, Self::tso_segs_goal(tp), probing_up)
    }

    /// `bbr_inflight`.
    fn inflight(&self, tp: &TcpCc, bw: u64, gain: u64) -> u32 {
        let bdp = self.bdp(bw, gain);
        self.quantization_budget(tp, bdp)
    }

    /// `bbr_packets_in_net_at_edt`: inflight expected when the next packet departs (EDT),
    /// including the EDT burst while probing (Linux 4.13: `inflight_now` as it is).
    fn packets_in_net_at_edt(&self, tp: &TcpCc, inflight_now: u32) -> u32 {
        if !self.p.edt_inflight {
            return inflight_now;
        }
        let burst = if self.pacing_gain > GAIN_UNIT { Self::tso_segs_goal(tp) } else { 0 };
        inflight::packets_in_net_at_edt(tp, self.bw(), inflight_now, burst, EDT_CLOCK)
    }

    /// `bbr_ack_aggregation_cwnd` (mainline: only once the pipe is full; Linux 4.13: never).
    fn ack_aggregation_cwnd(&self) -> u32 {
        if !self.p.ack_aggregation || !self.full_bw.reached {
            return 0;
        }
        self.agg.allowance(self.bw())
    }

    /// `bbr_set_cwnd_to_recover_or_restore`: packet conservation in the first round of recovery,
    /// restore on exit. Returns (conserving, cwnd).
    fn set_cwnd_to_recover_or_restore(
        &mut self,
        tp: &TcpCc,
        rs: &RateSample,
        acked: u32,
    ) -> (bool, u32) {
        let prev_state = self.prev_ca_state;
        let state = tp.ca_state;
        let mut cwnd = tp.snd_cwnd;
        // An ACK for P packets releases at most 2P: deduct losses here, slow-start in set_cwnd.
        if rs.losses > 0 {
            cwnd = (cwnd as i64 - rs.losses as i64).max(1) as u32;
        }
        if state == CaState::Recovery && prev_state != CaState::Recovery {
            // First round of recovery: packet conservation, starting a round now.
            self.packet_conservation = true;
            self.round.start_round(tp.delivered);
            cwnd = tp.packets_in_flight() + acked; // cut unused cwnd
        } else if prev_state >= CaState::Recovery && state < CaState::Recovery {
            // Leaving recovery / loss: restore the cwnd saved before it.
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca_state = state;
        if self.packet_conservation {
            return (true, cwnd.max(tp.packets_in_flight() + acked));
        }
        (false, cwnd)
    }

    /// `bbr_set_cwnd`: slow-start toward the target, or snap down to it once the pipe is full.
    fn set_cwnd(&mut self, tp: &mut TcpCc, rs: &RateSample, acked: u32, bw: u64, gain: u64) {
        let mut cwnd = tp.snd_cwnd;
        if acked != 0 {
            let (conserving, c) = self.set_cwnd_to_recover_or_restore(tp, rs, acked);
            cwnd = c;
            if !conserving {
                let mut target = self.bdp(bw, gain);
                target = target.saturating_add(self.ack_aggregation_cwnd());
                target = self.quantization_budget(tp, target);
                let early = tp.delivered < TCP_INIT_CWND as u64;
                (cwnd, _) = inflight::grow_cwnd(cwnd, acked, target, self.full_bw.reached, early);
            }
        }
        self.set_cwnd_bounded(tp, cwnd);
    }

    /// `bbr_update_bw`: round counting, lt sampling, max-bw filter.
    fn update_bw(&mut self, tp: &TcpCc, rs: &RateSample) {
        let valid = rs.delivered >= 0 && rs.interval_ns > 0;
        if self.round.update(valid, rs, tp.delivered) {
            self.packet_conservation = false;
        }
        if !valid {
            return; // not a valid sample
        }
        self.lt_bw_sampling(tp, rs);
        let bw = bw_floor(rs.delivered as u64, rs.interval_ns as u64);
        // App-limited samples only count if they do not lower the estimate.
        if !rs.is_app_limited || bw >= self.max_bw() {
            self.bw.update(probe_bw::BW_RTTS, self.round.round_count, bw);
        }
    }

    /// `bbr_check_drain`.
    fn check_drain(&mut self, tp: &mut TcpCc) {
        if self.mode == Mode::Startup && self.full_bw.reached {
            self.mode = Mode::Drain;
            tp.snd_ssthresh = self.inflight(tp, self.max_bw(), GAIN_UNIT);
        }
        if self.mode == Mode::Drain
            && self.packets_in_net_at_edt(tp, tp.packets_in_flight())
                <= self.inflight(tp, self.max_bw(), GAIN_UNIT)
        {
            self.reset_probe_bw_mode(tp); // queue drained
        }
    }

    /// `bbr_update_gains`.
    fn update_gains(&mut self) {
        let (p, c) = match self.mode {
            Mode::Startup => (HIGH_GAIN, HIGH_GAIN),
            Mode::Drain => (DRAIN_GAIN, HIGH_GAIN), // slow pacing, keep cwnd
            Mode::ProbeBw => (
                if self.lt_use_bw { GAIN_UNIT } else { probe_bw::PACING_GAIN[self.cycle_idx] },
                CWND_GAIN,
            ),
            Mode::ProbeRtt => (GAIN_UNIT, GAIN_UNIT),
        };
        self.pacing_gain = p;
        self.cwnd_gain = c;
    }

    /// `bbr_update_model`.
    fn update_model(&mut self, tp: &mut TcpCc, rs: &RateSample) {
        self.update_bw(tp, rs);
        // `bbr_update_ack_aggregation`: excess of acked data over bw × time in the epoch.
        if self.p.ack_aggregation {
            self.agg.update(
                rs,
                &self.round,
                EXTRA_ACKED_WIN_RTTS,
                self.bw(),
                tp.delivered_mstamp_ns,
                tp.snd_cwnd,
            );
        }
        self.update_cycle_phase(tp, rs);
        self.full_bw.check_max_bw(self.round.round_start, rs.is_app_limited, self.max_bw());
        self.check_drain(tp);
        probe_rtt::update_min_rtt_and_probe_rtt(self, tp, rs);
        self.update_gains();
    }
}

/// PROBE_RTT (`bbr/probe_rtt.rs`) as v1 runs it: the 10 s min_rtt itself schedules it, cwnd
/// 4 packets.
impl ProbeRttModel for Bbr1 {
    /// `bbr_update_min_rtt`'s filter: 10 s window, the variant's rules for equal and
    /// delayed-ACK samples.
    #[inline]
    fn update_min_rtt_filters(&mut self, tp: &TcpCc, rs: &RateSample) -> bool {
        self.min_rtt.update_with(
            tp.now_ns,
            rs,
            MIN_RTT_WIN_NS,
            self.p.min_rtt_refresh_on_equal,
            self.p.expiry_skips_delayed_acks,
        )
    }

    /// Dip, drain the queue.
    #[inline]
    fn enter_probe_rtt(&mut self, _tp: &mut TcpCc) {
        self.mode = Mode::ProbeRtt;
    }

    /// `bbr_reset_mode`.
    #[inline]
    fn exit_probe_rtt(&mut self, tp: &TcpCc) {
        self.reset_mode(tp);
    }

    #[inline]
    fn probe_rtt_cwnd(&self) -> u32 {
        CWND_MIN_TARGET
    }

    probe_rtt_bookkeeping!(window: min_rtt, state: mode == Mode::ProbeRtt);

    /// Idle restart ends once a new S/ACK for data is processed (Linux 4.13: any ACK).
    #[inline]
    fn idle_restart_ends(&self, rs: &RateSample) -> bool {
        rs.delivered > 0 || !self.p.idle_restart_needs_data
    }
}

impl CongestionOps for Bbr1 {
    fn has_cong_control(&self) -> bool {
        true
    }

    /// `bbr_init`.
    fn init(&mut self, tp: &mut TcpCc) {
        self.prior_cwnd = 0;
        tp.snd_ssthresh = TCP_INFINITE_SSTHRESH;
        self.round.round_count = 0;
        self.round.start_round(tp.delivered);
        self.prev_ca_state = CaState::Open;
        self.packet_conservation = false;
        self.probe_rtt = ProbeRttHold::default();
        self.min_rtt = MinRtt::new(tp.min_rtt_ns, tp.now_ns);
        self.bw.reset(self.round.round_count, 0);
        self.pacer.has_seen_rtt = false;
        self.pacer.init_from_rtt(tp);
        self.round.round_start = false;
        self.idle_restart = false;
        self.full_bw = FullBw::default();
        self.cycle_mstamp_ns = 0;
        self.cycle_idx = 0;
        self.reset_lt_bw_sampling(tp);
        self.mode = Mode::Startup;
        self.pacing_gain = HIGH_GAIN;
        self.cwnd_gain = HIGH_GAIN;
        self.agg = AckAggregation::new(tp.now_ns);
        tp.pacing_enabled = true; // SK_PACING_NEEDED
    }

    /// `bbr_ssthresh`: entering recovery/loss; save cwnd, keep ssthresh.
    fn ssthresh(&mut self, tp: &TcpCc) -> u32 {
        self.save_cwnd(tp);
        tp.snd_ssthresh
    }

    /// `bbr_main`.
    fn cong_control(&mut self, tp: &mut TcpCc, rs: &RateSample) {
        self.update_model(tp, rs);
        let bw = self.bw();
        self.pacer.set(tp, bw, self.pacing_gain, self.full_bw.reached);
        self.set_cwnd(tp, rs, rs.acked_sacked, bw, self.cwnd_gain);
    }

    /// `bbr_set_state` (+ the `tcp_enter_loss` cwnd cut, see the header).
    fn set_state(&mut self, tp: &mut TcpCc, new_state: CaState) {
        if new_state != CaState::Loss {
            return;
        }
        // tcp_enter_loss's cut (the caller has already called ssthresh(), which saved cwnd, and
        // marked the outstanding data lost).
        inflight::enter_loss_cwnd_cut(tp);
        self.prev_ca_state = CaState::Loss;
        self.full_bw.bw = 0;
        self.round.round_start = true; // treat the RTO like the end of a round
        let rs = RateSample { losses: 1, ..Default::default() };
        self.lt_bw_sampling(tp, &rs);
    }

    /// `bbr_undo_cwnd`: spurious slow-down; reset full-pipe and policer detection.
    fn undo_cwnd(&mut self, tp: &mut TcpCc) -> u32 {
        self.full_bw.reset(); // `now` is v3's: always false here
        self.reset_lt_bw_sampling(tp);
        tp.snd_cwnd
    }

    /// `bbr_cwnd_event`: restart from idle.
    fn cwnd_event(&mut self, tp: &mut TcpCc, ev: CwndEvent) {
        if !super::restart_from_idle(tp, ev, &mut self.idle_restart, &mut self.agg) {
            return;
        }
        match self.mode {
            // Pace at the estimated bw when restarting app-limited: no need for more speed.
            Mode::ProbeBw => self.pacer.set(tp, self.bw(), GAIN_UNIT, self.full_bw.reached),
            Mode::ProbeRtt => probe_rtt::check_probe_rtt_done(self, tp),
            Mode::Startup | Mode::Drain => {}
        }
    }

    fn tso_segs(&self, tp: &TcpCc) -> Option<u32> {
        Some(Self::tso_segs_goal(tp))
    }

    /// Phase codes: 0 startup, 1 drain, 2 probe_bw, 3 probe_rtt.
    fn sample(&self, tp: &TcpCc) -> CcStateSample {
        let (phase, phase_code) = crate::phases::phase(crate::phases::BBR1, self.mode as u8);
        // bbr_get_info: bw × mss × 1e6 >> 24 bytes/s.
        CcStateSample {
            phase,
            phase_code,
            bw_bps: bw_bytes_per_sec(self.bw(), tp.mss) as f64 * 8.0,
            min_rtt_ns: self.min_rtt.rtt_ns,
            pacing_gain: gain_f64(self.pacing_gain),
            cwnd_gain: gain_f64(self.cwnd_gain),
            ..Default::default()
        }
    }
}
