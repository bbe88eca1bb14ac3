//! BQL's queue controller around the rate set point c (Control and Drain, with the min_rtt
//! refresh), and the cwnd safety cap.

use super::{
    Bql, Phase, Refresh, CWND_MIN, DOWN_MAX, GAIN_CWND_GAIN, I_BAND, REFRESH_DRAIN_GAIN,
    SETTLED_FRAC, TI_OVER_TQ, TQ_MIN_NS, UP_MAX,
};
use crate::{Nanos, TcpCc};

impl Bql {
    fn t_q_s(tp: &TcpCc) -> f64 {
        tp.srtt_ns.max(TQ_MIN_NS) as f64 / 1e9
    }

    /// Offload burst in segments, as the transport sizes it for our pacing rate.
    fn burst_segs(tp: &TcpCc) -> u32 {
        crate::tso_autosize(tp.pacing_rate_bytes_per_s, tp.mss)
    }

    /// Control and Drain: the queue controller around the rate set point c.
    pub(super) fn control(&mut self, tp: &mut TcpCc, dt_ns: Nanos) {
        let c = self.c;
        if c <= 0.0 {
            return;
        }
        let qt = self.q_target();
        // min_rtt refresh.
        match self.refresh {
            Refresh::Draining => {
                if self.q_pred_f <= 0.0 {
                    self.refresh = Refresh::Holding { round_end_delivered: tp.delivered };
                    self.set_pacing(tp, c);
                } else {
                    self.set_pacing(tp, REFRESH_DRAIN_GAIN * c);
                }
                return;
            }
            Refresh::Holding { .. } => {
                self.set_pacing(tp, c);
                return;
            }
            Refresh::Off => {}
        }
        let t_q = Self::t_q_s(tp);
        let e_p = qt - self.q_pred_f;
        let e_m = qt - self.q_meas_f;
        let lo = -DOWN_MAX * c;
        let hi = UP_MAX * c;
        let u_unclamped = (e_p + self.integ) / t_q;
        if self.phase == Phase::Control {
            let pushing_hi = u_unclamped >= hi && e_m > 0.0;
            let pushing_lo = u_unclamped <= lo && e_m < 0.0;
            // Conditional integration (anti-windup): near the set point, with no transient in
            // flight (measurement and prediction agree), and not driving a saturated command.
            let settled = (self.q_pred_f - self.q_meas_f).abs() <= SETTLED_FRAC * qt;
            if e_m.abs() <= qt && settled && !pushing_hi && !pushing_lo {
                let dt = dt_ns as f64 / 1e9;
                self.integ += e_m * dt / (TI_OVER_TQ * t_q);
            }
            self.integ = self.integ.clamp(-I_BAND * qt, I_BAND * qt);
        }
        let u = ((e_p + self.integ) / t_q).clamp(lo, hi);
        self.set_pacing(tp, c + u);
    }

    /// cwnd: a safety cap reached by growth, cut at once.
    pub(super) fn set_cwnd(&mut self, tp: &mut TcpCc, acked: u32) {
        let burst = 3 * Self::burst_segs(tp);
        let (target, growth) = match self.phase {
            Phase::Gain => {
                let bdp = self.bdp_pkts(tp, self.bw_max.get() as f64);
                if bdp <= 0.0 {
                    (u32::MAX, acked) // no model yet: slow start
                } else {
                    ((GAIN_CWND_GAIN * bdp).ceil() as u32 + burst, 2 * acked)
                }
            }
            _ => {
                let bdp = self.bdp_pkts(tp, self.c);
                let q = 2.0 * self.q_target() / tp.mss as f64;
                ((2.0 * bdp + q).ceil() as u32 + burst, acked)
            }
        };
        let cwnd = tp.snd_cwnd.saturating_add(growth).min(target).max(CWND_MIN);
        tp.set_cwnd(cwnd);
    }
}
