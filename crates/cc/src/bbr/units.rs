//! Fixed-point units of the BBR family.
//!
//! Bandwidth is Linux's: packets per microsecond scaled by 2^24 (`BW_SCALE`), about 715 bit/s of
//! resolution at 1500-B packets. Time is nanoseconds, so a rate sample is
//! `delivered · 2^24 · 1000 / interval_ns` and "packets in an interval" is
//! `bw · interval_ns / (2^24 · 1000)` ([`BW_NS_UNIT`]): Linux's units with finer time.
//!
//! Gains are 2^16 fixed point ([`GAIN_UNIT`]). Linux's gains are 2^8 (`BBR_SCALE`); they are
//! carried here shifted left by 8 ([`linux_gain`]), which is exact: for integers x and g,
//! `(x · (g << 8)) >> 16 == (x · g) >> 8`, so products, rounding and comparisons give Linux's
//! integer results bit for bit, while the draft's 0.90 / 0.7 / 0.15 (BBRv3) get 1e-5 resolution.
//! Fractions that only Linux-faithful code touches (loss thresholds, ECN alpha, the long-term
//! ratios) stay in Linux's 2^8 ([`BBR_UNIT`]). Intermediates are u128, so nothing overflows.
//!
//! Why fixed point at all: bbrlab is compared against Linux, and thresholds such as "full pipe =
//! bw ≥ 1.25·full_bw" or "inflight ≤ BDP" flip on rounding.

use crate::{Nanos, NSEC_PER_USEC};

/// Bandwidth fixed point: packets per µs << 24 (Linux `BW_SCALE`).
pub const BW_SCALE: u32 = 24;
pub const BW_UNIT: u128 = 1 << BW_SCALE;
/// `bw · interval_ns / BW_NS_UNIT` = packets delivered in the interval at `bw`.
pub const BW_NS_UNIT: u128 = BW_UNIT * NSEC_PER_USEC as u128;
/// Linux's gain and fraction fixed point (`BBR_SCALE`): 1.0 = 256.
pub const BBR_SCALE: u32 = 8;
pub const BBR_UNIT: u32 = 1 << BBR_SCALE;
/// The family's gain fixed point: 1.0 = 2^16.
pub const GAIN_SHIFT: u32 = 16;
pub const GAIN_UNIT: u64 = 1 << GAIN_SHIFT;
/// "Unset" volume and rate bounds (Linux `~0U`).
pub const INF_PKTS: u32 = u32::MAX;
pub const INF_BW: u64 = u64::MAX;

/// A Linux 2^8 gain in the family's 2^16 scale (exact, see the module header).
pub const fn linux_gain(g: u32) -> u64 {
    (g as u64) << (GAIN_SHIFT - BBR_SCALE)
}

/// A gain as a float, for export.
#[inline]
pub fn gain_f64(g: u64) -> f64 {
    g as f64 / GAIN_UNIT as f64
}

/// `delivered / interval` in packets/µs << 24, rounded down (Linux `bbr_update_bw`).
#[inline]
pub fn bw_floor(delivered: u64, interval_ns: Nanos) -> u64 {
    (delivered as u128 * BW_NS_UNIT / interval_ns as u128) as u64
}

/// `delivered / interval` rounded up (v2alpha/v3 `bbr_calculate_bw_sample`, DIV_ROUND_UP, so a
/// low rate can still grow), never the "unset" value. (One u128 division, as Linux's
/// `DIV_ROUND_UP`: `div_ceil` would cost a division and a remainder on the per-ACK path.)
#[allow(clippy::manual_div_ceil)] // one division, as DIV_ROUND_UP (above)
#[inline]
pub fn bw_ceil(delivered: u64, interval_ns: Nanos) -> u64 {
    let interval = interval_ns as u128;
    ((delivered as u128 * BW_NS_UNIT + interval - 1) / interval).min(INF_BW as u128 - 1) as u64
}

/// The clock an interval is read on before it is converted into packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Clock {
    /// ns, the family rule.
    Ns,
    /// Truncated to µs first, as Linux (`div_u64(ns, NSEC_PER_USEC)`).
    Us,
}

/// Packets delivered at `bw` over `interval_ns`, rounded down.
#[inline]
pub fn packets_in(bw: u64, interval_ns: Nanos) -> u128 {
    bw as u128 * interval_ns as u128 / BW_NS_UNIT
}

/// [`packets_in`] on `clock`: Linux's `bw · interval_us >> BW_SCALE` for [`Clock::Us`].
#[inline]
pub fn packets_in_on(clock: Clock, bw: u64, interval_ns: Nanos) -> u128 {
    match clock {
        Clock::Ns => packets_in(bw, interval_ns),
        Clock::Us => (bw as u128 * (interval_ns / NSEC_PER_USEC) as u128) >> BW_SCALE,
    }
}

/// `bw` in bytes per second for `mss`-byte packets (`bbr_get_info`: bw · mss · 1e6 >> 24).
#[inline]
pub fn bw_bytes_per_sec(bw: u64, mss: u32) -> u128 {
    (bw as u128 * mss as u128 * 1_000_000) >> BW_SCALE
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linux_gains_in_the_2_16_scale_give_linux_results_bit_for_bit() {
        // Every 2^8 gain Linux uses (high gain 739, drain 88, 5/4 = 320, 3/4 = 192, …) against a
        // spread of multiplicands, including ones where the low bits matter.
        for g in [739u32, 88, 320, 192, 256, 512, 128, 232, 710, 38, 180] {
            for x in [0u128, 1, 255, 256, 257, 12345, 1 << 40, (1 << 60) + 12345, u64::MAX as u128]
            {
                assert_eq!(
                    (x * linux_gain(g) as u128) >> GAIN_SHIFT,
                    (x * g as u128) >> BBR_SCALE,
                    "g {g} x {x}"
                );
            }
        }
    }

    #[test]
    fn bw_conversions_round_as_documented() {
        // 80 packets in 40 ms = 2 packets/ms = 0.002 packets/µs.
        let bw = bw_floor(80, 40_000_000);
        assert_eq!(bw, (80u128 * (1 << 24) * 1000 / 40_000_000) as u64);
        assert_eq!(
            bw_ceil(80, 40_000_000),
            bw + 1,
            "0.002·2^24 is not an integer: ceil is one more"
        );
        assert_eq!(bw_ceil(1, 1000), bw_floor(1, 1000), "exact quotients are not rounded up");
        assert_eq!(packets_in(bw, 40_000_000), 79, "floor(bw) loses a fraction of a packet");
        assert_eq!(packets_in(bw_ceil(80, 40_000_000), 40_000_000), 80);
        // 1 packet/µs at 1500 B = 1.5e9 B/s.
        assert_eq!(bw_bytes_per_sec(1 << 24, 1500), 1_500_000_000);
    }

    #[test]
    fn the_us_clock_is_the_ns_formula_on_a_truncated_interval() {
        for bw in [1u64, 33_554, 70_000_000, 1 << 40] {
            for ns in [0u64, 999, 1_000, 1_999, 40_000_000, 123_456_789] {
                assert_eq!(
                    packets_in_on(Clock::Us, bw, ns),
                    packets_in(bw, ns / 1000 * 1000),
                    "bw {bw} ns {ns}"
                );
                assert_eq!(packets_in_on(Clock::Ns, bw, ns), packets_in(bw, ns));
            }
        }
        assert_ne!(
            packets_in_on(Clock::Us, 1 << 40, 1_999),
            packets_in(1 << 40, 1_999),
            "µs truncation loses bw·999 ns"
        );
    }

    #[test]
    fn bw_ceil_is_div_ceil() {
        for d in [0u64, 1, 7, 80, 1 << 30] {
            for t in [1u64, 3, 1000, 40_000_000, 999_999_937] {
                let exact = (d as u128 * BW_NS_UNIT).div_ceil(t as u128) as u64;
                assert_eq!(bw_ceil(d, t), exact, "d {d} t {t}");
            }
        }
    }
}
