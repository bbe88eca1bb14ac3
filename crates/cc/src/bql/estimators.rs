//! BQL's estimators: rounds, min_rtt, the bottleneck rate (bw_max and the ACK-side c) and the
//! own queue (measured from delay, and its Smith-predicted value), with their EWMA filters.

use super::{
    Bql, Phase, Refresh, BUSY_FRAC, BW_WIN_ROUNDS, GAIN_TF_MAX_NS, TF_DIV, TF_MAX_NS, TF_MIN_NS,
};
use crate::{Nanos, RateSample, TcpCc};

impl Bql {
    fn t_f_ns(tp: &TcpCc) -> Nanos {
        (tp.srtt_ns / TF_DIV).clamp(TF_MIN_NS, TF_MAX_NS)
    }

    /// Round counting on delivered packets (a round ends when a packet sent after it began is acked).
    pub(super) fn update_round(&mut self, tp: &TcpCc, rs: &RateSample) {
        self.round_start = false;
        if rs.has_prior && rs.prior_delivered >= self.next_round_delivered {
            self.next_round_delivered = tp.delivered;
            self.round_count += 1;
            self.round_start = true;
        }
    }

    /// min_rtt: take lower samples at once, restamp on samples near it.
    pub(super) fn update_min_rtt(&mut self, tp: &TcpCc, rtt: Nanos) {
        if rtt < self.min_rtt_ns {
            self.min_rtt_ns = rtt;
            self.min_rtt_stamp_ns = tp.now_ns;
        } else if self.c > 0.0 {
            let slack = (2.0 * tp.mss as f64 / self.c * 1e9) as Nanos;
            if rtt <= self.min_rtt_ns.saturating_add(slack) {
                self.min_rtt_stamp_ns = tp.now_ns;
            }
        }
        if self.refresh != Refresh::Off {
            self.refresh_min_ns = self.refresh_min_ns.min(rtt);
        }
    }

    /// Delivery-rate samples: bw_max (max of send/ACK interval rate) and c (ACK-side rate).
    pub(super) fn update_rates(&mut self, tp: &TcpCc, rs: &RateSample, dt_ns: Nanos) {
        // Valid samples only, and only over at least one min_rtt of our own: shorter intervals
        // come from ACK compression or from retransmissions after a spurious RTO (at 1 s RTT the
        // initial 1 s RTO fires before the first ACK) and would overstate the rate.
        if rs.delivered <= 0 || rs.interval_ns <= 0 || self.min_rtt_ns == u64::MAX {
            return;
        }
        if (rs.interval_ns as u64) < self.min_rtt_ns {
            return;
        }
        let bytes = rs.delivered as f64 * tp.mss as f64;
        let bw = bytes * 1e9 / rs.interval_ns as f64;
        if !rs.is_app_limited || bw >= self.bw_max.get() as f64 {
            self.bw_max.update(BW_WIN_ROUNDS, self.round_count, bw as u64);
        }
        // The ACK-side interval spans about one RTT in steady state; a much shorter one (ACKs
        // of retransmissions sent long after the packets they replace) says nothing about C.
        if rs.rcv_interval_ns <= 0 || (rs.rcv_interval_ns as u64) < self.min_rtt_ns / 4 * 3 {
            return;
        }
        let ack_rate = bytes * 1e9 / rs.rcv_interval_ns as f64;
        if self.c <= 0.0 {
            self.c = ack_rate;
            return;
        }
        if ack_rate < self.c && (rs.is_app_limited || self.q_meas_raw < BUSY_FRAC * self.q_target())
        {
            // The application or an idle bottleneck, not the capacity, set this rate: an ACK
            // rate is the capacity only while the queue is busy (or it is a higher rate).
            return;
        }
        let a = (dt_ns as f64 / Self::t_f_ns(tp) as f64).min(1.0);
        self.c += a * (ack_rate - self.c);
    }

    /// Queue samples: delay-based measurement and its Smith-predicted value; EWMA filters.
    pub(super) fn update_queue(&mut self, tp: &TcpCc, rs: &RateSample, dt_ns: Nanos) {
        self.q_meas_raw = -1.0;
        if rs.rtt_ns < 0 || self.min_rtt_ns == u64::MAX {
            return;
        }
        let rate = match self.phase {
            Phase::Gain => (self.bw_max.get() as f64).max(self.c),
            _ => self.c,
        };
        if rate <= 0.0 {
            return;
        }
        let dq_s = (rs.rtt_ns as u64).saturating_sub(self.min_rtt_ns) as f64 / 1e9;
        let q_meas = dq_s * rate;
        self.q_meas_raw = q_meas;
        // Smith correction: sent since P (Δin_flight + Δdelivered) minus what the bottleneck
        // drains at c over P's round trip.
        let q_pred = if rs.has_prior && rs.delivered > 0 {
            let sent = tp.packets_in_flight() as f64 - rs.tx_in_flight as f64 + rs.delivered as f64;
            q_meas + sent * tp.mss as f64 - rate * rs.rtt_ns as f64 / 1e9
        } else {
            q_meas
        };
        self.q_pred_raw = q_pred;
        if !self.have_q {
            self.q_meas_f = q_meas;
            self.q_pred_f = q_pred;
            self.have_q = true;
            return;
        }
        let t_f = match self.phase {
            Phase::Gain => Self::t_f_ns(tp).min(GAIN_TF_MAX_NS),
            _ => Self::t_f_ns(tp),
        };
        let a = (dt_ns as f64 / t_f as f64).min(1.0);
        self.q_meas_f += a * (q_meas - self.q_meas_f);
        self.q_pred_f += a * (q_pred - self.q_pred_f);
    }
}
