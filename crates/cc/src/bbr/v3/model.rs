//! v3's model updates: rounds, the max_bw filter, the latest delivery signals, loss (and CE) as
//! congestion, the short-term model (bw_shortterm / inflight_shortterm) and the long-term bound
//! (inflight_longterm) learned while probing (§Updating the Model Upon Packet Loss).

use super::{Bbr3, EcnResponse, State};
use crate::bbr::ecn::{self, ECN_FACTOR, ECN_THRESH};
use crate::bbr::probe_bw::inflight_hi_slope;
use crate::bbr::units::{BBR_SCALE, GAIN_SHIFT, INF_BW, INF_PKTS};
use crate::rate::PacketRateState;
use crate::{RateSample, TcpCc};

impl Bbr3 {
    /// §UpdateRound (Linux `bbr_update_round_start`: valid samples only).
    pub(super) fn update_round(&mut self, tp: &TcpCc, rs: &RateSample) {
        if self.round.update(rs.interval_ns > 0 && rs.has_prior, rs, tp.delivered) {
            let rounds = self.probe_bw.rounds_since_bw_probe;
            self.probe_bw.rounds_since_bw_probe = rounds.saturating_add(1); // compared with ≤ 63
        }
    }

    /// §UpdateLatestDeliverySignals.
    pub(super) fn update_latest_delivery_signals(
        &mut self,
        tp: &TcpCc,
        rs: &RateSample,
        sample_bw: u64,
    ) {
        self.signals.loss_round_start = false;
        if rs.interval_ns <= 0 || rs.acked_sacked == 0 {
            return;
        }
        self.signals.update_latest(rs, sample_bw);
        self.signals.check_loss_round_end(rs, tp.delivered);
    }

    /// §AdvanceLatestDeliverySignals.
    pub(super) fn advance_latest_delivery_signals(&mut self, rs: &RateSample, sample_bw: u64) {
        if self.signals.loss_round_start {
            self.signals.advance_latest(rs, sample_bw);
        }
    }

    /// §UpdateMaxBw: app-limited samples only count if they raise the estimate.
    fn update_max_bw(&mut self, rs: &RateSample, sample_bw: u64) {
        if sample_bw > 0 && (sample_bw >= self.max_bw() || !rs.is_app_limited) {
            self.max_bw_filter.update(sample_bw);
        }
    }

    /// §UpdateCongestionSignals.
    pub(super) fn update_congestion_signals(&mut self, rs: &RateSample, sample_bw: u64) {
        if rs.interval_ns <= 0 || rs.acked_sacked == 0 {
            return;
        }
        self.update_max_bw(rs, sample_bw);
        if !self.signals.loss_round_start {
            return;
        }
        self.adapt_lower_bounds_from_congestion();
        self.signals.loss_in_round = false;
        self.signals.ecn_in_round = false;
    }

    /// §ResetShortTermModel.
    pub(super) fn reset_short_term_model(&mut self) {
        self.bw_shortterm = INF_BW;
        self.inflight_shortterm = INF_PKTS;
    }

    /// §AdaptLowerBoundsFromCongestion (+ Linux ECN response): once per round, not when probing.
    pub(super) fn adapt_lower_bounds_from_congestion(&mut self) {
        if self.is_probing_bw() {
            return;
        }
        let mut ecn_inflight = INF_PKTS;
        if self.signals.ecn_in_round && self.p.ecn == EcnResponse::Dctcp {
            // Linux bbr_ecn_lower_bounds: inflight_lo ·= 1 − alpha·ecn_factor.
            self.init_lower_bounds(false);
            let cut = ecn::cut(self.ecn.alpha, ECN_FACTOR) as u64;
            ecn_inflight = ((self.inflight_shortterm as u64 * cut) >> BBR_SCALE) as u32;
        }
        if self.signals.loss_in_round {
            self.init_lower_bounds(true);
            // §LossLowerBounds.
            let bw_cut = ((self.bw_shortterm as u128 * self.p.beta as u128) >> GAIN_SHIFT) as u64;
            self.bw_shortterm = self.signals.bw_latest.max(bw_cut);
            let inf_cut = ((self.inflight_shortterm as u64 * self.p.beta) >> GAIN_SHIFT) as u32;
            self.inflight_shortterm = self.signals.inflight_latest.max(inf_cut);
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
    pub(super) fn is_inflight_too_high(
        &self,
        tx_in_flight: u32,
        lost: u64,
        delivered: i64,
        delivered_ce: i64,
    ) -> bool {
        let (num, den) = self.p.loss_thresh;
        if lost > 0 && tx_in_flight > 0 && lost * den > tx_in_flight as u64 * num {
            return true;
        }
        if delivered_ce > 0 && delivered > 0 {
            match self.p.ecn {
                EcnResponse::Dctcp if self.ecn.eligible => {
                    let thresh = (delivered as u64 * ECN_THRESH as u64) >> BBR_SCALE;
                    if delivered_ce as u64 > thresh {
                        return true;
                    }
                }
                EcnResponse::AsCongestion
                    if self.ecn_as_congestion
                        && (lost + delivered_ce as u64) * den > tx_in_flight as u64 * num =>
                {
                    return true;
                }
                _ => {}
            }
        }
        false
    }

    /// §HandleInflightTooHigh.
    pub(super) fn handle_inflight_too_high(
        &mut self,
        tp: &TcpCc,
        is_app_limited: bool,
        tx_in_flight: u32,
    ) {
        self.prev_probe_too_high = true;
        self.is_bw_probe_sample = false; // react once per probe
        if !is_app_limited || self.p.longterm_from_app_limited {
            let beta_target =
                ((self.target_inflight(tp) as u64 * self.p.beta) >> GAIN_SHIFT) as u32;
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
        self.signals.note_loss(tp.delivered); // §NoteLoss
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
    pub(super) fn raise_inflight_longterm_slope(&mut self, tp: &TcpCc) {
        self.probe_up_acked_per_inc = inflight_hi_slope(tp.snd_cwnd, &mut self.bw_probe_up_rounds);
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
        if self.round.round_start {
            self.raise_inflight_longterm_slope(tp);
        }
    }

    /// §AdaptLongTermModel (+ Linux `bbr_adapt_upper_bounds`' per-ACK too-high check). Returns
    /// true if it decided a state transition.
    pub(super) fn adapt_long_term_model(&mut self, tp: &TcpCc, rs: &RateSample, lost: u64) -> bool {
        // Probe samples start arriving, or the last ones of a stopped probe have arrived.
        let probe_samples_ended = self.probe_bw.advance_ack_phase(self.round.round_start);
        // One round after leaving UP, once per probe (see header on the max_bw clock).
        if self.max_bw_advance_pending
            && self.round.round_start
            && self.is_in_probe_bw()
            && !rs.is_app_limited
        {
            self.max_bw_advance_pending = false;
            self.max_bw_filter.advance_if_sampled(); // §AdvanceMaxBwFilter
        }
        if probe_samples_ended {
            self.is_bw_probe_sample = false;
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
}
