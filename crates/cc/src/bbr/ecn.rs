//! DCTCP/L4S-style ECN response of v2alpha and Linux v3 (`bbr_update_ecn_alpha`,
//! `bbr_ecn_lower_bounds`): an EWMA `ecn_alpha` of the per-round fraction of delivered packets that
//! were CE-marked; per round with CE the short-term volume bound is cut by `alpha · ecn_factor`; a
//! bandwidth probe is "too high" at ≥/> 50 % CE; STARTUP ends after 2 rounds at ≥ 50 % CE. Linux
//! keeps all of it in its 2^8 fixed point ([`BBR_UNIT`]), and so do we, so the truncations match.
//!
//! Only for shallow-threshold marking (datacenter / L4S): it acts only when the flow negotiated ECN
//! and min_rtt ≤ 5 ms.

use super::units::{BBR_SCALE, BBR_UNIT};
use crate::{Nanos, TcpCc, NSEC_PER_MSEC};

/// alpha EWMA gain 1/16 (as DCTCP's g).
pub const ECN_ALPHA_GAIN: u32 = BBR_UNIT / 16;
/// alpha starts at 1.0, so a flow that starts into a congested bottleneck reacts at once.
pub const ECN_ALPHA_INIT: u32 = BBR_UNIT;
/// inflight_lo ·= 1 − alpha·ecn_factor per round with CE: 1/3 in v2alpha and v3.
pub const ECN_FACTOR: u32 = BBR_UNIT / 3;
/// A probe went too far if half of a sample's delivered packets were CE-marked.
pub const ECN_THRESH: u32 = BBR_UNIT / 2;
/// STARTUP exits after 2 consecutive rounds with CE ratio ≥ ecn_thresh.
pub const FULL_ECN_CNT: u32 = 2;
/// ECN logic only when min_rtt ≤ 5 ms: shallow-threshold marking is a datacenter/L4S signal.
pub const ECN_MAX_RTT_NS: Nanos = 5 * NSEC_PER_MSEC;

/// `bbr_update_ecn_alpha`'s eligibility test: ECN negotiated and min_rtt ≤ 5 ms (v2alpha's
/// `bbr_ecn_enable` module parameter is the flow's `tp.ecn_ok` here).
#[inline]
pub fn is_eligible(tp: &TcpCc, min_rtt_ns: Nanos) -> bool {
    tp.ecn_ok && min_rtt_ns <= ECN_MAX_RTT_NS
}

/// CE-marked fraction of `delivered` packets, 2^8.
#[inline]
pub fn ce_ratio(delivered: u64, delivered_ce: u64) -> u64 {
    (delivered_ce << BBR_SCALE) / delivered
}

/// alpha ← (1 − g)·alpha + g·ce_ratio, truncated twice as Linux does, at most 1.0.
#[inline]
pub fn next_alpha(alpha: u32, ce_ratio: u64) -> u32 {
    let g = ECN_ALPHA_GAIN as u64;
    let a = (((BBR_UNIT as u64 - g) * alpha as u64) >> BBR_SCALE) + ((g * ce_ratio) >> BBR_SCALE);
    a.min(BBR_UNIT as u64) as u32
}

/// The per-round cut `1 − alpha · ecn_factor` (2^8).
#[inline]
pub fn cut(alpha: u32, ecn_factor: u32) -> u32 {
    BBR_UNIT - ((alpha * ecn_factor) >> BBR_SCALE)
}

/// A flow's ECN state.
#[derive(Clone, Copy, Debug)]
pub struct EcnState {
    /// ECN negotiated and min_rtt ≤ 5 ms, seen at some round start (then for good).
    pub eligible: bool,
    /// 2^8.
    pub alpha: u32,
    /// `tp.delivered` / `tp.delivered_ce` when alpha was last updated.
    pub alpha_last_delivered: u64,
    pub alpha_last_delivered_ce: u64,
    /// `tp.delivered_ce` at the previous ACK, to derive `rs->is_ece`.
    pub last_delivered_ce: u64,
    /// Consecutive rounds in STARTUP with CE ratio ≥ ecn_thresh.
    pub startup_rounds: u32,
}

impl Default for EcnState {
    fn default() -> Self {
        EcnState {
            eligible: false,
            alpha: ECN_ALPHA_INIT,
            alpha_last_delivered: 0,
            alpha_last_delivered_ce: 0,
            last_delivered_ce: 0,
            startup_rounds: 0,
        }
    }
}

impl EcnState {
    /// `rs->is_ece`: this ACK reported newly CE-marked deliveries (bbrlab's [`RateSample`] has no
    /// ECE flag; an accurate-ECN / DCTCP-style receiver conveys exactly this).
    ///
    /// [`RateSample`]: crate::RateSample
    #[inline]
    pub fn ack_raised_ce(&mut self, tp: &TcpCc) -> bool {
        let raised = tp.delivered_ce > self.last_delivered_ce;
        self.last_delivered_ce = tp.delivered_ce;
        raised
    }

    /// Become eligible once ECN is negotiated and min_rtt ≤ 5 ms.
    #[inline]
    pub fn refresh_eligible(&mut self, tp: &TcpCc, min_rtt_ns: Nanos) {
        if !self.eligible && is_eligible(tp, min_rtt_ns) {
            self.eligible = true;
        }
    }

    /// Once per round: fold the round's CE fraction into alpha; returns that fraction (2^8), or
    /// None if nothing was delivered since the last update.
    #[inline]
    pub fn fold_round(&mut self, tp: &TcpCc) -> Option<u64> {
        let delivered = tp.delivered.saturating_sub(self.alpha_last_delivered);
        let delivered_ce = tp.delivered_ce.saturating_sub(self.alpha_last_delivered_ce);
        if delivered == 0 {
            return None;
        }
        let ratio = ce_ratio(delivered, delivered_ce);
        self.alpha = next_alpha(self.alpha, ratio);
        self.alpha_last_delivered = tp.delivered;
        self.alpha_last_delivered_ce = tp.delivered_ce;
        Some(ratio)
    }

    /// STARTUP's ECN exit (`bbr2_check_ecn_too_high_in_startup`): true after FULL_ECN_CNT
    /// consecutive rounds with CE ratio ≥ ecn_thresh.
    #[inline]
    pub fn startup_too_high(&mut self, ce_ratio: u64) -> bool {
        if ce_ratio >= ECN_THRESH as u64 {
            self.startup_rounds += 1;
        } else {
            self.startup_rounds = 0;
        }
        self.startup_rounds >= FULL_ECN_CNT
    }
}
