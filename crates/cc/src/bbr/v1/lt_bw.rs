//! v1's long-term ("policer") bandwidth model (Linux `bbr_lt_bw_sampling`).
//!
//! A token-bucket policer passes the bucket's burst at line rate and then drops everything above
//! the token rate: the max-bw filter sees the burst rate, and probing at 5/4 of it only causes
//! drops. So from the first loss BBR samples the delivery rate over intervals of 4–16 rounds that
//! end at a loss; two consecutive lossy (≥ 20 %) intervals whose rates agree within 1/8 (or
//! 4 kbit/s) mean "policed": bw becomes their average and PROBE_BW runs at gain 1 for 48 rounds,
//! then the model is dropped and probing resumes.

use super::{Bbr1, Mode};
use crate::bbr::pacing::rate_bytes_per_sec;
use crate::bbr::units::{bw_floor, BBR_SCALE, BBR_UNIT, GAIN_UNIT};
use crate::{RateSample, TcpCc, NSEC_PER_MSEC};

/// Long-term sampling interval: at least 4 rounds …
const LT_INTVL_MIN_RTTS: u32 = 4;
/// … with a loss ratio of at least 50/256 ≈ 20 % (a policer dropping the excess).
const LT_LOSS_THRESH: u64 = 50;
/// Two intervals are "consistent" if their rates differ by at most 1/8 …
const LT_BW_RATIO: u128 = BBR_UNIT as u128 / 8;
/// … or by at most 4 kbit/s (in bytes/s here).
const LT_BW_DIFF_BYTES: u64 = 4000 / 8;
/// Use the long-term rate for 48 rounds, then re-probe.
const LT_BW_MAX_RTTS: u32 = 48;

impl Bbr1 {
    /// `bbr_reset_lt_bw_sampling_interval`.
    fn reset_lt_bw_sampling_interval(&mut self, tp: &TcpCc) {
        self.lt_last_stamp_ns = tp.delivered_mstamp_ns;
        self.lt_last_delivered = tp.delivered;
        self.lt_last_lost = tp.lost;
        self.lt_rtt_cnt = 0;
    }

    /// `bbr_reset_lt_bw_sampling`.
    pub(super) fn reset_lt_bw_sampling(&mut self, tp: &TcpCc) {
        self.lt_bw = 0;
        self.lt_use_bw = false;
        self.lt_is_sampling = false;
        self.reset_lt_bw_sampling_interval(tp);
    }

    /// `bbr_lt_bw_interval_done`: two consistent lossy intervals → policed.
    pub(super) fn lt_bw_interval_done(&mut self, tp: &TcpCc, bw: u64) {
        if self.lt_bw != 0 {
            let diff = bw.abs_diff(self.lt_bw);
            if diff as u128 * BBR_UNIT as u128 <= LT_BW_RATIO * self.lt_bw as u128
                || rate_bytes_per_sec(diff, tp.mss, GAIN_UNIT, self.p.pacing_margin_percent)
                    <= LT_BW_DIFF_BYTES
            {
                self.lt_bw = (bw + self.lt_bw) >> 1; // average of the 2 intervals
                self.lt_use_bw = true;
                self.pacing_gain = GAIN_UNIT; // try to avoid drops
                self.lt_rtt_cnt = 0;
                return;
            }
        }
        self.lt_bw = bw;
        self.reset_lt_bw_sampling_interval(tp);
    }

    /// `bbr_lt_bw_sampling`: token-bucket policer detection.
    pub(super) fn lt_bw_sampling(&mut self, tp: &TcpCc, rs: &RateSample) {
        if self.lt_use_bw {
            if self.mode == Mode::ProbeBw && self.round.round_start {
                self.lt_rtt_cnt += 1;
                if self.lt_rtt_cnt >= LT_BW_MAX_RTTS {
                    self.reset_lt_bw_sampling(tp); // stop using lt_bw
                    self.reset_probe_bw_mode(tp); // restart gain cycling
                }
            }
            return;
        }
        // Start sampling at the first loss: the policer's bucket is empty by then.
        if !self.lt_is_sampling {
            if rs.losses == 0 {
                return;
            }
            self.reset_lt_bw_sampling_interval(tp);
            self.lt_is_sampling = true;
        }
        if rs.is_app_limited {
            self.reset_lt_bw_sampling(tp); // running out of data would under-estimate
            return;
        }
        if self.round.round_start {
            self.lt_rtt_cnt += 1;
        }
        if self.lt_rtt_cnt < LT_INTVL_MIN_RTTS {
            return;
        }
        if self.lt_rtt_cnt > 4 * LT_INTVL_MIN_RTTS {
            self.reset_lt_bw_sampling(tp); // interval too long
            return;
        }
        // End the interval at a loss (tokens exhausted).
        if rs.losses == 0 {
            return;
        }
        let lost = tp.lost - self.lt_last_lost;
        let delivered = tp.delivered - self.lt_last_delivered;
        if delivered == 0 || (lost << BBR_SCALE) < LT_LOSS_THRESH * delivered {
            return; // not lossy enough
        }
        let t_ns = tp.delivered_mstamp_ns.saturating_sub(self.lt_last_stamp_ns);
        if t_ns < NSEC_PER_MSEC {
            return; // interval under 1 ms: wait
        }
        self.lt_bw_interval_done(tp, bw_floor(delivered, t_ns));
    }
}
