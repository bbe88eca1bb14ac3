//! A token-bucket policer (`policer = { rate, burst }`): tokens accrue at `rate_bps` up to
//! `burst_bytes`; a packet that finds enough tokens passes and takes its size's worth, any
//! other is dropped at once. No queue: a policer cuts bursts instead of smoothing them, which
//! is what an ISP's or a cellular operator's rate limit does to a flow (the "policed" flows of
//! Flach et al., "An Internet-Wide Analysis of Traffic Policing", SIGCOMM 2016).
//!
//! It follows Linux's `net/sched/act_police.c` (`tcf_police_act`, no peak rate): tokens =
//! min(tokens + elapsed credit, burst); conforming if tokens ≥ the packet's cost. The bucket
//! starts full. Tokens are kept exactly, in "nanobits" (bit/s × ns), so a long run does not
//! drift: the bytes that pass in any interval of length T are at most burst + rate × T / 8.

use super::ParamError;
use crate::Nanos;

/// The smallest burst accepted: one full-size packet (a 1500-byte Ethernet MTU). A bucket that
/// cannot hold one MTU drops every full-size packet, however slow the traffic.
pub const MIN_BURST_BYTES: u64 = 1500;

/// Nanoseconds per second: credit accrues at `rate_bps` bits per 1e9 ns.
const NS_PER_S: u128 = 1_000_000_000;

#[derive(Clone, Debug)]
pub struct TokenBucket {
    rate_bps: u64,
    burst_bytes: u64,
    /// Tokens in bit·1e9 (rate_bps × ns): exact integer credit.
    tokens_nanobits: u128,
    cap_nanobits: u128,
    last_ns: Nanos,
    passed_bytes: u64,
    dropped_bytes: u64,
    dropped_packets: u64,
}

impl TokenBucket {
    /// A full bucket at time 0. Errors: a zero rate, a burst below [`MIN_BURST_BYTES`].
    pub fn new(rate_bps: u64, burst_bytes: u64) -> Result<TokenBucket, ParamError> {
        if rate_bps == 0 {
            return Err(ParamError {
                field: "rate_bps",
                why: "a policer's rate must be > 0".into(),
            });
        }
        if burst_bytes < MIN_BURST_BYTES {
            let why = format!(
                "{burst_bytes} bytes is below one {MIN_BURST_BYTES}-byte packet: every \
                 full-size packet would be dropped"
            );
            return Err(ParamError { field: "burst_bytes", why });
        }
        let cap_nanobits = burst_bytes as u128 * 8 * NS_PER_S;
        Ok(TokenBucket {
            rate_bps,
            burst_bytes,
            tokens_nanobits: cap_nanobits,
            cap_nanobits,
            last_ns: 0,
            passed_bytes: 0,
            dropped_bytes: 0,
            dropped_packets: 0,
        })
    }

    /// Whether a packet of `wire_bytes` arriving at `now` conforms (true: it passes and takes
    /// its tokens; false: drop it). Calls come in nondecreasing `now`.
    #[inline]
    pub fn admit(&mut self, now: Nanos, wire_bytes: u32) -> bool {
        let elapsed_ns = now.saturating_sub(self.last_ns) as u128;
        self.last_ns = self.last_ns.max(now);
        let credit = elapsed_ns * self.rate_bps as u128;
        self.tokens_nanobits = (self.tokens_nanobits + credit).min(self.cap_nanobits);
        let cost = wire_bytes as u128 * 8 * NS_PER_S;
        if self.tokens_nanobits >= cost {
            self.tokens_nanobits -= cost;
            self.passed_bytes += wire_bytes as u64;
            true
        } else {
            self.dropped_bytes += wire_bytes as u64;
            self.dropped_packets += 1;
            false
        }
    }

    /// Tokens now held, in bytes (rounded down; as of the last call).
    pub fn tokens_bytes(&self) -> u64 {
        (self.tokens_nanobits / (8 * NS_PER_S)) as u64
    }
    pub fn rate_bps(&self) -> u64 {
        self.rate_bps
    }
    pub fn burst_bytes(&self) -> u64 {
        self.burst_bytes
    }
    /// Bytes that passed since the start.
    pub fn passed_bytes(&self) -> u64 {
        self.passed_bytes
    }
    /// Bytes and packets dropped since the start.
    pub fn dropped(&self) -> (u64, u64) {
        (self.dropped_bytes, self.dropped_packets)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Random, TestRng, MS};

    #[test]
    fn burst_below_one_mtu_and_zero_rate_are_errors() {
        assert_eq!(TokenBucket::new(1_000_000, 1499).unwrap_err().field, "burst_bytes");
        assert_eq!(TokenBucket::new(0, 64_000).unwrap_err().field, "rate_bps");
        assert!(TokenBucket::new(1_000_000, 1500).is_ok());
    }

    #[test]
    fn starts_full_then_passes_only_the_rate() {
        // 8 Mbit/s = 1 byte/µs; burst 15 000 bytes = 10 packets of 1500.
        let mut tb = TokenBucket::new(8_000_000, 15_000).unwrap();
        let passed = (0..20).filter(|_| tb.admit(0, 1500)).count();
        assert_eq!(passed, 10, "a full bucket passes exactly burst/size packets at once");
        // 1499 µs later: 1499 bytes of tokens, not enough for 1500.
        assert!(!tb.admit(1_499_000, 1500));
        assert!(tb.admit(1_500_000, 1500));
        assert_eq!(tb.tokens_bytes(), 0);
    }

    #[test]
    fn long_run_passed_rate_is_at_most_rate_plus_burst_over_t() {
        // Offered 3× the rate, random sizes and gaps; over T the passed bytes stay within
        // burst + rate × T / 8, and the bucket is not wasteful: above 99 % of rate × T / 8.
        let (rate_bps, burst) = (50_000_000u64, 64_000u64);
        let mut tb = TokenBucket::new(rate_bps, burst).unwrap();
        let mut rng = TestRng(7);
        let mut now = 0;
        let t_end = 10_000 * MS;
        while now < t_end {
            let size = 64 + (rng.next_u64() % 1437) as u32;
            tb.admit(now, size);
            // Mean gap 0.5 × (size × 8 / 150 Mbit/s) × 2: offered ≈ 150 Mbit/s.
            let mean_gap = size as u64 * 8 * 1_000_000_000 / 150_000_000;
            now += rng.next_u64() % (2 * mean_gap + 1);
        }
        let bound = burst + rate_bps * (t_end / MS) / 8 / 1000;
        let passed = tb.passed_bytes();
        assert!(passed <= bound, "passed {passed} > bound {bound}");
        assert!(passed as f64 > 0.99 * (rate_bps * 10 / 8) as f64, "passed {passed}");
        assert!(tb.dropped().1 > 0);
    }
}
