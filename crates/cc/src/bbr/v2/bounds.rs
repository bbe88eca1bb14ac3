//! v2's loss/ECN model: congestion signals per round, the short-term lower bounds (bw_lo,
//! inflight_lo), the long-term upper bounds (inflight_hi, bbr2_new's bw_hi), the ECN alpha, and
//! the STARTUP exits on loss and ECN; and `bbr2_update_model`, run through the fast path.

use super::{Bbr2, Phase, State};
use crate::bbr::ecn::{self, ECN_THRESH};
use crate::bbr::fast_path::{fast_path_accessors, FastPathModel};
use crate::bbr::probe_bw::inflight_hi_slope;
use crate::bbr::units::{bw_floor, BBR_SCALE, BBR_UNIT, GAIN_UNIT, INF_BW, INF_PKTS};
use crate::{RateSample, TcpCc};

/// Cut bounds by 30 % on loss (`bbr_beta`): multiplicative decrease like CUBIC's 0.7.
const BETA: u32 = BBR_UNIT * 30 / 100;
/// A probe went too far if a sample's loss rate exceeds 2/100 (5/256 = 1.95 % in fixed point).
const LOSS_THRESH: u32 = BBR_UNIT * 2 / 100;
/// STARTUP exits on loss after ≥ 8 loss events in a Recovery round (and loss > loss_thresh).
pub(super) const FULL_LOSS_CNT: u32 = 8;

impl Bbr2 {
    /// `bbr2_target_inflight`: BDP, unless congestion cut cwnd.
    pub(super) fn target_inflight(&self, tp: &TcpCc) -> u32 {
        self.inflight(tp, self.bw(), GAIN_UNIT).min(tp.snd_cwnd)
    }

    /// `bbr2_is_probing_bandwidth`.
    pub(super) fn is_probing_bw(&self) -> bool {
        self.state == State::Startup
            || (self.state == State::ProbeBw && matches!(self.cycle, Phase::Refill | Phase::Up))
    }

    /// `bbr2_handle_queue_too_high_in_startup`.
    fn handle_queue_too_high_in_startup(&mut self, tp: &TcpCc) {
        self.full_bw.reached = true;
        self.inflight_longterm = self.inflight(tp, self.max_bw(), GAIN_UNIT);
    }

    /// `bbr2_update_ecn_alpha`: once per round, alpha ← (1 − g)·alpha + g·(CE / delivered)
    /// (v2alpha updates alpha whether or not the flow is ECN-eligible), then
    /// `bbr2_check_ecn_too_high_in_startup`.
    pub(super) fn update_ecn_alpha(&mut self, tp: &TcpCc) {
        let Some(ce_ratio) = self.ecn.fold_round(tp) else {
            return; // nothing delivered since the last update
        };
        // v2alpha: `bbr_ecn_enable && min_rtt_us <= ecn_max_rtt_us`; here the flow's ECN.
        self.ecn.refresh_eligible(tp, self.min_rtt.rtt_ns);
        if !self.full_bw.reached && self.ecn.eligible && self.ecn.startup_too_high(ce_ratio) {
            self.handle_queue_too_high_in_startup(tp);
        }
    }

    /// `bbr2_raise_inflight_hi_slope`: each round of PROBE_UP doubles the growth of
    /// inflight_longterm (1, 2, 4, 8 … packets per round): one increment per cwnd / 2^rounds
    /// packets acked.
    pub(super) fn raise_inflight_hi_slope(&mut self, tp: &TcpCc) {
        self.bw_probe_up_cnt = inflight_hi_slope(tp.snd_cwnd, &mut self.bw_probe_up_rounds);
    }

    /// `bbr2_probe_inflight_hi_upward`: grow inflight_longterm only while it limits us.
    fn probe_inflight_hi_upward(&mut self, tp: &TcpCc, rs: &RateSample) {
        if !tp.is_cwnd_limited || tp.snd_cwnd < self.inflight_longterm {
            self.bw_probe_up_acks = 0; // don't accumulate unused credits
            return;
        }
        self.bw_probe_up_acks += rs.acked_sacked;
        if self.bw_probe_up_acks >= self.bw_probe_up_cnt {
            let delta = self.bw_probe_up_acks / self.bw_probe_up_cnt;
            self.bw_probe_up_acks -= delta * self.bw_probe_up_cnt;
            self.inflight_longterm = self.inflight_longterm.saturating_add(delta);
        }
        if self.round.round_start {
            self.raise_inflight_hi_slope(tp);
        }
    }

    /// `bbr2_is_inflight_too_high`: loss rate > 2 % or CE rate ≥ 50 % in this sample.
    fn is_inflight_too_high(
        &self,
        rs_lost: u64,
        tx_in_flight: u32,
        delivered: i64,
        delivered_ce: i64,
    ) -> bool {
        if rs_lost > 0 && tx_in_flight > 0 {
            let loss_thresh = (tx_in_flight as u64 * LOSS_THRESH as u64) >> BBR_SCALE;
            if rs_lost > loss_thresh {
                return true;
            }
        }
        if delivered_ce > 0 && delivered > 0 && self.ecn.eligible {
            let ecn_thresh = (delivered as u64 * ECN_THRESH as u64) >> BBR_SCALE;
            if delivered_ce as u64 >= ecn_thresh {
                return true;
            }
        }
        false
    }

    pub(super) fn rs_too_high(&self, rs: &RateSample) -> bool {
        self.is_inflight_too_high(rs.lost, rs.tx_in_flight, rs.delivered, rs.delivered_ce)
    }

    /// `bbr2_ecn_cut`: 1 − α·ecn_factor (fixed point).
    fn ecn_cut(&self) -> u32 {
        ecn::cut(self.ecn.alpha, self.p.ecn_factor)
    }

    /// `bbr2_adapt_lower_bounds`: once per round, outside bandwidth probing, cut the short-term
    /// bounds (v2alpha's bw_lo, inflight_lo): loss → bw_shortterm/inflight_shortterm =
    /// max(latest, 0.7·lo); CE → inflight_shortterm ·= 1 − α·factor (bbr2_new: bw_shortterm too,
    /// Google BBRv2 slides "bw_lo = (1 - alpha*ecn_factor) * bw_lo // <- NEW", except in PROBE_RTT — see the
    /// header, "bbr2_new" item 1).
    fn adapt_lower_bounds(&mut self, tp: &TcpCc) {
        if self.is_probing_bw() {
            return;
        }
        // Modelling choice (not in the slides): no ECN rate cut in PROBE_RTT. There cwnd already
        // pins the volume, bw_shortterm is discarded on exit, and with many flows the marks do
        // not stop (N·4 packets stay queued), so per-round cuts would drive bw_shortterm towards 0
        // and the flow could not pace out the ACKs that end PROBE_RTT.
        let ecn_cuts_bw_lo = self.p.ecn_cuts_bw_lo && self.state != State::ProbeRtt;
        let mut ecn_inflight_lo = INF_PKTS;
        let mut ecn_bw_lo = INF_BW;
        if self.signals.ecn_in_round && self.ecn.eligible && self.p.ecn_factor != 0 {
            let cut = self.ecn_cut() as u128;
            if ecn_cuts_bw_lo && self.bw_shortterm == INF_BW {
                self.bw_shortterm = self.max_bw();
            }
            if self.inflight_shortterm == INF_PKTS {
                self.inflight_shortterm = tp.snd_cwnd;
            }
            ecn_inflight_lo = ((self.inflight_shortterm as u128 * cut) >> BBR_SCALE) as u32;
            if ecn_cuts_bw_lo {
                ecn_bw_lo = ((self.bw_shortterm as u128 * cut) >> BBR_SCALE) as u64;
            }
        }
        if self.signals.loss_in_round {
            if self.bw_shortterm == INF_BW {
                self.bw_shortterm = self.max_bw();
            }
            if self.inflight_shortterm == INF_PKTS {
                self.inflight_shortterm = tp.snd_cwnd;
            }
            let keep = (BBR_UNIT - BETA) as u128;
            self.bw_shortterm = self
                .signals
                .bw_latest
                .max(((self.bw_shortterm as u128 * keep) >> BBR_SCALE) as u64);
            self.inflight_shortterm = self
                .signals
                .inflight_latest
                .max(((self.inflight_shortterm as u128 * keep) >> BBR_SCALE) as u32);
        }
        self.inflight_shortterm = self.inflight_shortterm.min(ecn_inflight_lo);
        self.bw_shortterm = self.bw_shortterm.min(ecn_bw_lo); // ∞ unless bbr2_new's ECN cut applied
    }

    /// `bbr2_reset_lower_bounds`.
    pub(super) fn reset_short_term_model(&mut self) {
        self.bw_shortterm = INF_BW;
        self.inflight_shortterm = INF_PKTS;
    }

    /// `bbr2_update_congestion_signals`: max bw filter, per-round latest rate/volume, and the
    /// per-round lower-bound adaptation.
    pub(super) fn update_congestion_signals(&mut self, tp: &TcpCc, rs: &RateSample) {
        self.signals.loss_round_start = false;
        if rs.interval_ns <= 0 || rs.acked_sacked == 0 {
            return; // not a valid observation
        }
        let bw = self.sample_bw;
        if !rs.is_app_limited || bw >= self.max_bw() {
            self.max_bw_filter.update(bw); // `bbr2_take_max_bw_sample`
        }
        self.signals.loss_in_round |= rs.losses > 0;
        self.signals.update_latest(rs, bw);
        if !self.signals.check_loss_round_end(rs, tp.delivered) {
            return; // not the end of a loss round yet
        }
        self.adapt_lower_bounds(tp);
        self.signals.loss_in_round = false;
        self.signals.ecn_in_round = false;
        self.signals.advance_latest(rs, bw);
    }

    /// `bbr2_handle_inflight_too_high_via_ecn` (bbr2_new only, Google BBRv2 slides "Multiplicative
    /// cut to bw_hi if no bw sample has ECN mark rate < ecn_thresh").
    fn handle_inflight_too_high_via_ecn(&mut self) {
        if self.p.ecn_cuts_bw_hi && self.ecn.eligible && !self.got_ok_bw_probe_sample {
            if self.bw_hi == INF_BW {
                self.bw_hi = self.max_bw();
            }
            self.bw_hi = ((self.bw_hi as u128 * self.ecn_cut() as u128) >> BBR_SCALE) as u64;
        }
    }

    /// `bbr2_handle_inflight_too_high`: once per probe, inflight_longterm = max(tx_in_flight,
    /// 0.7·target_inflight), and leave PROBE_UP.
    fn handle_inflight_too_high(&mut self, tp: &TcpCc, is_app_limited: bool, tx_in_flight: u32) {
        self.prev_probe_too_high = true;
        self.bw_probe_samples = false; // only react once per probe
        if !is_app_limited {
            let keep = (BBR_UNIT - BETA) as u64;
            let t = ((self.target_inflight(tp) as u64 * keep) >> BBR_SCALE) as u32;
            self.inflight_longterm = tx_in_flight.max(t);
            self.handle_inflight_too_high_via_ecn();
        }
        if self.state == State::ProbeBw && self.cycle == Phase::Up {
            self.start_probe_bw_down(tp);
        }
    }

    /// `bbr2_adapt_upper_bounds`. Returns true if it decided a state transition.
    pub(super) fn adapt_upper_bounds(&mut self, tp: &TcpCc, rs: &RateSample) -> bool {
        if self.probe_bw.advance_ack_phase(self.round.round_start) {
            // End of samples from the bw probing phase.
            self.bw_probe_samples = false;
            // Best time to forget the previous cycle's samples.
            if self.state == State::ProbeBw && !rs.is_app_limited {
                self.max_bw_filter.advance_if_sampled(); // `bbr2_advance_max_bw_filter`
            }
            // Reached the previous too-high inflight_longterm without high loss/ECN: probe again.
            if self.state == State::ProbeBw && self.stopped_risky_probe && !self.prev_probe_too_high
            {
                self.start_probe_bw_refill(tp, 0);
                return true;
            }
        }
        if self.rs_too_high(rs) {
            if self.bw_probe_samples {
                self.handle_inflight_too_high(tp, rs.is_app_limited, rs.tx_in_flight);
            }
        } else {
            // Loss/ECN rate declared safe: adjust the upper bounds upward.
            self.got_ok_bw_probe_sample |= self.bw_probe_samples;
            if self.inflight_longterm == INF_PKTS && self.bw_hi == INF_BW {
                return false; // no excess-queue signals yet
            }
            if self.inflight_longterm != INF_PKTS && rs.tx_in_flight > self.inflight_longterm {
                self.inflight_longterm = rs.tx_in_flight;
            }
            if self.bw_hi != INF_BW && self.sample_bw > self.bw_hi {
                self.bw_hi = self.sample_bw;
            }
            if self.state == State::ProbeBw && self.cycle == Phase::Up {
                self.probe_inflight_hi_upward(tp, rs);
            }
        }
        false
    }

    /// `bbr2_check_loss_too_high_in_startup`: at the end of a round in Recovery with ≥ 8 loss
    /// events and loss rate > 2 %, the pipe is full.
    pub(super) fn check_loss_too_high_in_startup(&mut self, tp: &TcpCc, rs: &RateSample) {
        if self.full_bw.reached {
            return;
        }
        let too_high = self.rs_too_high(rs);
        if self.signals.startup_loss_too_high(rs, tp.ca_state, FULL_LOSS_CNT, || too_high) {
            self.handle_queue_too_high_in_startup(tp);
        }
    }

    /// bbr2_new's `bw_hi += 1 packet per min_rtt` (packets/µs << 24) when a probe starts.
    pub(super) fn refill_bw_hi_increment(&self) -> u64 {
        bw_floor(1, self.min_rtt.rtt_ns.max(1))
    }
}

/// The fast path (`bbr2_run_fast_path`, `bbr/fast_path.rs`) over `bbr2_update_model`.
impl FastPathModel for Bbr2 {
    type Ack = ();

    /// `bbr2_update_model`.
    #[inline]
    fn update_model(&mut self, tp: &mut TcpCc, rs: &RateSample, _: ()) {
        self.update_congestion_signals(tp, rs);
        self.update_ack_aggregation(tp, rs);
        self.check_loss_too_high_in_startup(tp, rs);
        self.full_bw.check_max_bw(self.round.round_start, rs.is_app_limited, self.max_bw());
        self.update_model_fast(tp, rs, ());
    }

    #[inline]
    fn update_model_fast(&mut self, tp: &mut TcpCc, rs: &RateSample, _: ()) {
        self.check_drain_done(tp);
        self.update_probe_bw_cycle_phase(tp, rs);
        crate::bbr::probe_rtt::update_min_rtt_and_probe_rtt(self, tp, rs);
    }

    fast_path_accessors!();

    #[inline]
    fn sample_bw(&self, _: ()) -> u64 {
        self.sample_bw
    }

    #[inline]
    fn max_bw(&self) -> u64 {
        Bbr2::max_bw(self)
    }
}
