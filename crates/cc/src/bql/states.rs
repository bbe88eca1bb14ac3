//! BQL's state machine: Gain (the paced ramp and its exit tests), Drain, Control, and the
//! transitions between them (re-entering Gain, starting a min_rtt refresh).

use super::{
    Bql, Phase, Refresh, CONTROL_SETTLE_ROUNDS, DRAIN_EXIT_Q, FULL_BW_CNT, FULL_BW_THRESH,
    GAIN_EXIT_Q, GAIN_GROWTH, GAIN_PACING, LOW_Q_FRAC, LOW_Q_ROUNDS, MIN_RTT_WIN_NS, PROBE_GROWTH,
};
use crate::{RateSample, TcpCc, NSEC_PER_MSEC};

impl Bql {
    fn enter_gain(&mut self, tp: &TcpCc, probe: bool) {
        self.phase = Phase::Gain;
        self.full_bw = 0.0;
        self.full_bw_cnt = 0;
        self.refresh = Refresh::Off;
        if probe {
            self.ramp = Some((self.rate.max(self.c), tp.now_ns, PROBE_GROWTH));
            self.bw_max.reset(self.round_count, self.c as u64);
        } else {
            self.ramp = None;
        }
    }

    fn enter_drain(&mut self) {
        self.phase = Phase::Drain;
        if self.c <= 0.0 {
            self.c = self.bw_max.get() as f64;
        } else {
            self.c = self.c.max(self.bw_max.get() as f64);
        }
        self.ramp = None;
    }

    fn enter_control(&mut self) {
        self.phase = Phase::Control;
        self.control_rounds = 0;
        self.low_q_rounds = 0;
        self.round_max_q = 0.0;
    }

    /// Gain state: pacing and exit tests.
    pub(super) fn gain(&mut self, tp: &mut TcpCc, rs: &RateSample) {
        let bw_max = self.bw_max.get() as f64;
        // Plateau (full pipe) per round.
        if self.round_start && !rs.is_app_limited && bw_max > 0.0 {
            if bw_max >= self.full_bw * FULL_BW_THRESH {
                self.full_bw = bw_max;
                self.full_bw_cnt = 0;
            } else {
                self.full_bw_cnt += 1;
            }
        }
        let queue_full = self.have_q && self.q_meas_f > GAIN_EXIT_Q * self.q_target();
        if queue_full || self.full_bw_cnt >= FULL_BW_CNT {
            self.enter_drain();
            return;
        }
        // The initial rate: GAIN_PACING × cwnd / srtt (1 ms before any RTT sample), as BBR.
        let rtt = if tp.srtt_ns > 0 { tp.srtt_ns } else { NSEC_PER_MSEC };
        let initial = GAIN_PACING * tp.snd_cwnd as f64 * tp.mss as f64 * 1e9 / rtt as f64;
        let ramping = self.ramp.is_some();
        let mut rate = match self.ramp {
            None => {
                // The ramp starts at the first RTT sample, from the initial rate.
                if tp.srtt_ns > 0 && self.min_rtt_ns != u64::MAX {
                    self.ramp = Some((initial, tp.now_ns, GAIN_GROWTH));
                }
                initial
            }
            Some((x0, t0, growth)) => {
                let periods = tp.now_ns.saturating_sub(t0) as f64 / self.min_rtt_ns.max(1) as f64;
                let ramp = x0 * growth.powf(periods.min(60.0));
                // Never more than GAIN_PACING × the measured delivery rate: if the delay signal
                // fails to come, the rate stops at ~2.77 C and the plateau rule ends Gain.
                ramp.min((GAIN_PACING * bw_max).max(x0))
            }
        };
        // Never lower the rate once the ramp runs (before it: the initial rate from IW / srtt).
        if ramping {
            rate = rate.max(self.rate);
        }
        self.set_pacing(tp, rate);
    }

    /// Phase transitions out of Drain / Control, refresh bookkeeping.
    pub(super) fn transitions(&mut self, tp: &mut TcpCc, rs: &RateSample) {
        let qt = self.q_target();
        match self.phase {
            Phase::Gain => {}
            Phase::Drain => {
                if let Refresh::Holding { round_end_delivered } = self.refresh {
                    if rs.has_prior && rs.prior_delivered >= round_end_delivered {
                        // A packet sent after the hold began crossed an empty queue: done.
                        if self.refresh_min_ns != u64::MAX {
                            self.min_rtt_ns = self.refresh_min_ns;
                        }
                        self.min_rtt_stamp_ns = tp.now_ns;
                        self.refresh = Refresh::Off;
                        self.enter_control();
                    }
                } else if self.refresh == Refresh::Off && self.q_pred_f <= DRAIN_EXIT_Q * qt {
                    self.enter_control();
                }
            }
            Phase::Control => {
                if self.round_start {
                    self.control_rounds = self.control_rounds.saturating_add(1);
                    if self.round_max_q < LOW_Q_FRAC * qt && !rs.is_app_limited {
                        self.low_q_rounds += 1;
                    } else {
                        self.low_q_rounds = 0;
                    }
                    self.round_max_q = 0.0;
                }
                self.round_max_q = self.round_max_q.max(self.q_meas_f);
                if self.control_rounds >= CONTROL_SETTLE_ROUNDS && self.low_q_rounds >= LOW_Q_ROUNDS
                {
                    self.enter_gain(tp, true);
                    return;
                }
                if tp.now_ns.saturating_sub(self.min_rtt_stamp_ns) > MIN_RTT_WIN_NS
                    && !rs.is_app_limited
                {
                    self.phase = Phase::Drain;
                    self.refresh = Refresh::Draining;
                    self.refresh_min_ns = u64::MAX;
                }
            }
        }
    }
}
