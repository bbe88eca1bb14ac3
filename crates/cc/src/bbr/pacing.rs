//! Pacing rate: `pacing_rate = pacing_gain · bw · (1 − margin)` (Linux `bbr_set_pacing_rate`,
//! draft §Pacing Rate), the same in every version (margin 1 %; v1 as Linux 4.13 had it: none).
//!
//! Before the first RTT sample the rate comes from the initial window over an assumed 1 ms RTT,
//! and it is re-derived from srtt when the first sample arrives (`bbr_init_pacing_rate_from_rtt`).
//! Until the pipe is full the rate is never lowered: STARTUP's estimate only grows, and a low
//! sample (an ACK burst, an app-limited stretch) must not stall the ramp.

use super::units::{bw_floor, BW_SCALE, GAIN_SHIFT};
use crate::{TcpCc, NSEC_PER_MSEC, NSEC_PER_USEC};

/// Pace 1 % below the estimated bandwidth on average, to keep the bottleneck queue from growing
/// (Linux `bbr_pacing_margin_percent`, draft `PacingMarginPercent`).
pub const PACING_MARGIN_PERCENT: u64 = 1;

/// `bbr_rate_bytes_per_sec`: `bw` (packets/µs << 24) × mss × gain (2^16) × (1 − margin), bytes/s.
#[inline]
pub fn rate_bytes_per_sec(bw: u64, mss: u32, gain: u64, margin_percent: u64) -> u64 {
    let r = (bw as u128 * mss as u128 * gain as u128) >> GAIN_SHIFT;
    ((r * (1_000_000 / 100 * (100 - margin_percent)) as u128) >> BW_SCALE) as u64
}

/// `bbr_bw_to_pacing_rate`: the rate for `bw` at `gain`, `margin_percent` below it (1 %, none
/// in v1 before Linux 4.20), not below `floor_bytes_per_s` (mainline v1: 0; v2alpha and v3 floor
/// it at 1 B/s) and not above `SO_MAX_PACING_RATE`.
#[inline]
pub fn bw_to_pacing_rate(
    tp: &TcpCc,
    bw: u64,
    gain: u64,
    floor_bytes_per_s: u64,
    margin_percent: u64,
) -> u64 {
    rate_bytes_per_sec(bw, tp.mss, gain, margin_percent)
        .max(floor_bytes_per_s)
        .min(tp.max_pacing_rate_bytes_per_s)
}

/// The pacing-rate model of a flow: whether the first RTT sample re-derived the initial rate yet.
/// `FLOOR` is the lowest rate ever set, bytes/s (see [`bw_to_pacing_rate`]), a constant of the
/// version so the per-ACK path does not load it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Pacer<const FLOOR: u64> {
    pub has_seen_rtt: bool,
    /// Gain of the initial rate (the version's STARTUP pacing gain), 2^16.
    pub startup_gain: u64,
    /// Pace this much below gain × bw (`PACING_MARGIN_PERCENT`, or 0 for v1 before Linux 4.20).
    pub margin_percent: u64,
}

impl<const FLOOR: u64> Pacer<FLOOR> {
    pub const fn new(startup_gain: u64) -> Self {
        Pacer { has_seen_rtt: false, startup_gain, margin_percent: PACING_MARGIN_PERCENT }
    }

    pub const fn with_margin(startup_gain: u64, margin_percent: u64) -> Self {
        Pacer { has_seen_rtt: false, startup_gain, margin_percent }
    }

    /// `bbr_init_pacing_rate_from_rtt`: startup gain × cwnd / (srtt, or 1 ms before any sample).
    pub fn init_from_rtt(&mut self, tp: &mut TcpCc) {
        let rtt_ns = if tp.srtt_ns != 0 {
            self.has_seen_rtt = true;
            tp.srtt_ns.max(NSEC_PER_USEC)
        } else {
            NSEC_PER_MSEC
        };
        let bw = bw_floor(tp.snd_cwnd as u64, rtt_ns);
        tp.pacing_rate_bytes_per_s =
            bw_to_pacing_rate(tp, bw, self.startup_gain, FLOOR, self.margin_percent);
    }

    /// `bbr_set_pacing_rate`: pace at `gain · bw`, but never lower the rate before the pipe is full.
    #[inline]
    pub fn set(&mut self, tp: &mut TcpCc, bw: u64, gain: u64, full_bw_reached: bool) {
        let rate = bw_to_pacing_rate(tp, bw, gain, FLOOR, self.margin_percent);
        if !self.has_seen_rtt && tp.srtt_ns != 0 {
            self.init_from_rtt(tp);
        }
        if full_bw_reached || rate > tp.pacing_rate_bytes_per_s {
            tp.pacing_rate_bytes_per_s = rate;
        }
    }
}
