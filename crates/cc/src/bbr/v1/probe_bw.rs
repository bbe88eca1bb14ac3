//! v1's PROBE_BW: an eight-phase pacing-gain cycle {5/4, 3/4, 1, 1, 1, 1, 1, 1}, one phase per
//! min_rtt. The 5/4 phase probes for more bandwidth (and lasts until inflight reached 5/4 BDP or
//! loss says the path cannot hold it); the 3/4 phase drains the queue the probe made (and ends
//! early once it is gone); six cruise phases at 1.0 hold the estimate. Flows start the cycle at a
//! random phase so that flows sharing a bottleneck do not probe in lockstep.

use super::{Bbr1, Mode};
use crate::bbr::units::{linux_gain, BBR_UNIT, GAIN_UNIT};
use crate::{RateSample, TcpCc};

/// Phases in a PROBE_BW gain cycle.
pub(super) const CYCLE_LEN: usize = 8;
/// Window of the max-bw filter in round trips: a full gain cycle plus 2, so the filter always
/// holds the sample from the last 5/4 probe.
pub(super) const BW_RTTS: u64 = CYCLE_LEN as u64 + 2;
/// PROBE_BW pacing gains: probe (5/4), drain the probe's queue (3/4), cruise at 1 for 6 phases.
pub(super) const PACING_GAIN: [u64; CYCLE_LEN] = [
    linux_gain(BBR_UNIT * 5 / 4),
    linux_gain(BBR_UNIT * 3 / 4),
    GAIN_UNIT,
    GAIN_UNIT,
    GAIN_UNIT,
    GAIN_UNIT,
    GAIN_UNIT,
    GAIN_UNIT,
];
/// The start phase of PROBE_BW is random over this many phases (all but the 3/4 phase).
const CYCLE_RAND: u32 = 7;

impl Bbr1 {
    /// `bbr_is_next_cycle_phase`.
    fn is_next_cycle_phase(&self, tp: &TcpCc, rs: &RateSample) -> bool {
        let is_full_length =
            tp.delivered_mstamp_ns.saturating_sub(self.cycle_mstamp_ns) > self.min_rtt.rtt_ns;
        if self.pacing_gain == GAIN_UNIT {
            return is_full_length; // cruise phases: wall clock only
        }
        let inflight = self.packets_in_net_at_edt(tp, rs.prior_in_flight);
        let bw = self.max_bw();
        if self.pacing_gain > GAIN_UNIT {
            // Probe until inflight reaches gain × BDP (may take > min_rtt), unless losses say the
            // path cannot hold it.
            return is_full_length
                && (rs.losses > 0 || inflight >= self.inflight(tp, bw, self.pacing_gain));
        }
        // Drain phase: done at min_rtt or as soon as the probe's queue is gone.
        is_full_length || inflight <= self.inflight(tp, bw, GAIN_UNIT)
    }

    /// `bbr_advance_cycle_phase`.
    fn advance_cycle_phase(&mut self, tp: &TcpCc) {
        self.cycle_idx = (self.cycle_idx + 1) & (CYCLE_LEN - 1);
        self.cycle_mstamp_ns = tp.delivered_mstamp_ns;
    }

    /// `bbr_update_cycle_phase`.
    pub(super) fn update_cycle_phase(&mut self, tp: &TcpCc, rs: &RateSample) {
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(tp, rs) {
            self.advance_cycle_phase(tp);
        }
    }

    /// `bbr_reset_probe_bw_mode`: random start phase, never the 3/4 phase.
    pub(super) fn reset_probe_bw_mode(&mut self, tp: &TcpCc) {
        self.mode = Mode::ProbeBw;
        self.cycle_idx = CYCLE_LEN - 1 - self.rng.below(CYCLE_RAND) as usize; // 1..=7
        self.advance_cycle_phase(tp); // → 2..=7 or 0
    }

    /// `bbr_reset_mode`.
    pub(super) fn reset_mode(&mut self, tp: &TcpCc) {
        if !self.full_bw.reached {
            self.mode = Mode::Startup;
        } else {
            self.reset_probe_bw_mode(tp);
        }
    }
}
