//! STARTUP and DRAIN pieces shared by the family: the gains, and the full-pipe ("full
//! bandwidth") detector that ends STARTUP when the bandwidth stops growing.
//!
//! The plateau rule (Linux `bbr_check_full_bw_reached`, draft §Exiting Acceleration Based on
//! Bandwidth Plateau): if the estimate did not grow by 25 % in 3 non-app-limited rounds, the pipe
//! is full. Round 1 lets receive-window autotuning open the window, round 2 lets the sender fill
//! it, round 3 gives the higher delivery-rate samples a chance; 25 % is well below STARTUP's 2×
//! per round, so a growing pipe is never mistaken for a full one.

use super::units::{linux_gain, BBR_UNIT, GAIN_SHIFT, GAIN_UNIT};

/// STARTUP gain 2/ln 2 ≈ 2.885 (+1 to round up in Linux's 2^8 fixed point): the smallest gain
/// that doubles the delivery rate each round, like slow start, while pacing smoothly
/// (`bbr_high_gain`; v1 and v2alpha, pacing and cwnd).
pub const HIGH_GAIN: u64 = linux_gain(BBR_UNIT * 2885 / 1000 + 1);
/// DRAIN gain 1/2.885: drains in about one round the queue STARTUP built (`bbr_drain_gain`;
/// v1, v2alpha and Linux v3).
pub const DRAIN_GAIN: u64 = linux_gain(BBR_UNIT * 1000 / 2885);
/// Full pipe: bw grew by less than 5/4 …
pub const FULL_BW_THRESH: u64 = GAIN_UNIT * 5 / 4;
/// … for 3 rounds.
pub const FULL_BW_CNT: u32 = 3;

/// The full-pipe estimator's state.
#[derive(Clone, Copy, Debug, Default)]
pub struct FullBw {
    /// Baseline: the estimate that last grew by ≥ 25 %.
    pub bw: u64,
    /// Rounds without 25 % growth over `bw`.
    pub cnt: u32,
    /// The pipe was filled at least once (persistent; ends STARTUP).
    pub reached: bool,
    /// BBRv3: a plateau was detected in the current probe (reset when a probe starts).
    pub now: bool,
}

impl FullBw {
    /// §ResetFullBW: forget the baseline and the plateau count (not `reached`).
    #[inline]
    pub fn reset(&mut self) {
        self.bw = 0;
        self.cnt = 0;
        self.now = false;
    }

    /// §ResetFullBW and start measuring growth from `bw`.
    #[inline]
    pub fn restart_from(&mut self, bw: u64) {
        self.reset();
        self.bw = bw;
    }

    #[inline]
    fn grew(&self, bw: u64) -> bool {
        bw as u128 >= (self.bw as u128 * FULL_BW_THRESH as u128) >> GAIN_SHIFT
    }

    /// Linux v1/v2alpha `bbr_check_full_bw_reached`: at each non-app-limited round start compare
    /// the max-bw estimate with the baseline.
    #[inline]
    pub fn check_max_bw(&mut self, round_start: bool, is_app_limited: bool, max_bw: u64) {
        if self.reached || !round_start || is_app_limited {
            return;
        }
        if self.grew(max_bw) {
            self.bw = max_bw;
            self.cnt = 0;
            return;
        }
        self.cnt += 1;
        self.reached = self.cnt >= FULL_BW_CNT;
    }

    /// BBRv3 §CheckFullBWReached with a bandwidth *sample*. `every_ack` (Linux v3): every
    /// non-app-limited sample may raise the baseline, rounds without growth are counted at round
    /// starts; otherwise (the draft) only the round-start sample counts and a zero sample never
    /// raises the baseline. `rounds_needed`: the plateau's length ([`FULL_BW_CNT`]; another
    /// value only in a conformance test's mutation).
    #[inline]
    pub fn check_sample(
        &mut self,
        round_start: bool,
        is_app_limited: bool,
        sample_bw: u64,
        every_ack: bool,
        rounds_needed: u32,
    ) {
        if self.now || is_app_limited {
            return;
        }
        if !every_ack && !round_start {
            return;
        }
        if self.grew(sample_bw) && (every_ack || sample_bw > 0) {
            self.restart_from(sample_bw); // still growing
            return;
        }
        if !round_start {
            return;
        }
        self.cnt += 1;
        self.now = self.cnt >= rounds_needed;
        if self.now {
            self.reached = true;
        }
    }
}
