//! A synthetic cellular-like link trace, written in Mahimahi's format (see `trace.rs`), for
//! examples and tests that should not depend on a recorded trace.
//!
//! The process ([`CellularTraceParams`]): time advances in steps of `step_ms`; the rate holds
//! within a step. At each step boundary the rate moves by an increment drawn uniformly from
//! [−max_change_bps, +max_change_bps] and is reflected back into [min_rate_bps, max_rate_bps]
//! (a bounded random walk; reflection rather than clamping, so the walk does not stick to its
//! bounds). Independently, with probability `outage_probability` per step an outage starts:
//! the rate is 0 for `outage_ms` (a handover or a deep fade), after which the walk resumes
//! where it was. The rate becomes delivery opportunities by accumulating credit every ms,
//! rate × 1 ms, and writing the ms once per full [`MAHIMAHI_OPPORTUNITY_BYTES`] of credit. The
//! last line is `duration_ms` (added if the process left that ms empty), so the trace's
//! period is exactly the duration.
//!
//! Random numbers come from the caller's seeded stream: one seed, one trace.

use super::trace::MAHIMAHI_OPPORTUNITY_BYTES;
use super::{check_probability, ParamError};
use crate::Random;
use std::fmt::Write;

/// The random walk with outages described in the module header.
#[derive(Clone, Debug, PartialEq)]
pub struct CellularTraceParams {
    pub duration_ms: u64,
    pub step_ms: u64,
    pub min_rate_bps: u64,
    pub max_rate_bps: u64,
    pub start_rate_bps: u64,
    pub max_change_bps: u64,
    pub outage_probability: f64,
    pub outage_ms: u64,
}

impl CellularTraceParams {
    /// A 60 s LTE-like downlink: 1–30 Mbit/s, starting at 10, moving up to ±3 Mbit/s every
    /// 100 ms, an outage of 200 ms every ~20 s. Mahimahi's recorded LTE downlinks average
    /// 5.0 (Verizon-LTE-short), 5.2 (ATT-LTE-driving) and 12.8 Mbit/s (TMobile-LTE-driving).
    pub fn lte_example() -> CellularTraceParams {
        CellularTraceParams {
            duration_ms: 60_000,
            step_ms: 100,
            min_rate_bps: 1_000_000,
            max_rate_bps: 30_000_000,
            start_rate_bps: 10_000_000,
            max_change_bps: 3_000_000,
            outage_probability: 0.005,
            outage_ms: 200,
        }
    }

    fn validate(&self) -> Result<(), ParamError> {
        let err = |field, why: &str| Err(ParamError { field, why: why.to_string() });
        if self.duration_ms == 0 {
            return err("duration_ms", "must be > 0");
        }
        if self.step_ms == 0 {
            return err("step_ms", "must be > 0");
        }
        if self.min_rate_bps > self.max_rate_bps || self.max_rate_bps == 0 {
            return err("max_rate_bps", "must be > 0 and ≥ min_rate_bps");
        }
        if !(self.min_rate_bps..=self.max_rate_bps).contains(&self.start_rate_bps) {
            return err("start_rate_bps", "must lie in [min_rate_bps, max_rate_bps]");
        }
        check_probability("outage_probability", self.outage_probability)?;
        Ok(())
    }
}

/// Reflect `x` into [lo, hi] (as many times as needed).
fn reflect(mut x: i128, lo: i128, hi: i128) -> i128 {
    if lo == hi {
        return lo;
    }
    loop {
        if x < lo {
            x = 2 * lo - x;
        } else if x > hi {
            x = 2 * hi - x;
        } else {
            return x;
        }
    }
}

/// The trace's text: one line per delivery opportunity (see the module header).
pub fn generate_mahimahi(
    params: &CellularTraceParams,
    rng: &mut dyn Random,
) -> Result<String, ParamError> {
    params.validate()?;
    let (lo, hi) = (params.min_rate_bps as i128, params.max_rate_bps as i128);
    let span = 2 * params.max_change_bps as u128 + 1;
    let mut rate = params.start_rate_bps as i128;
    let mut outage_left_ms = 0u64;
    // Credit in bits × 1000 (rate_bps × 1 ms = rate_bps bit·ms / 1000).
    let mut credit = 0u128;
    let per_opportunity = MAHIMAHI_OPPORTUNITY_BYTES as u128 * 8 * 1000;
    let mut out = String::new();
    let mut last_ms = 0;
    for ms in 1..=params.duration_ms {
        if (ms - 1) % params.step_ms == 0 && ms > 1 {
            let change = (rng.next_u64() as u128 % span) as i128 - params.max_change_bps as i128;
            rate = reflect(rate + change, lo, hi);
            if outage_left_ms == 0 && rng.next_f64() < params.outage_probability {
                outage_left_ms = params.outage_ms;
            }
        }
        if outage_left_ms > 0 {
            outage_left_ms -= 1;
        } else {
            credit += rate as u128;
        }
        while credit >= per_opportunity {
            credit -= per_opportunity;
            writeln!(out, "{ms}").unwrap();
            last_ms = ms;
        }
    }
    if last_ms != params.duration_ms {
        writeln!(out, "{}", params.duration_ms).unwrap();
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::impair::Trace;
    use crate::{TestRng, MS};

    #[test]
    fn a_constant_walk_is_one_opportunity_per_ms_at_12_mbps() {
        let p = CellularTraceParams {
            duration_ms: 1000,
            step_ms: 10,
            min_rate_bps: 12_000_000,
            max_rate_bps: 12_000_000,
            start_rate_bps: 12_000_000,
            max_change_bps: 1_000_000,
            outage_probability: 0.0,
            outage_ms: 0,
        };
        let text = generate_mahimahi(&p, &mut TestRng(1)).unwrap();
        let want: String = (1..=1000).map(|ms| format!("{ms}\n")).collect();
        assert_eq!(text, want);
    }

    #[test]
    fn the_walk_stays_in_its_bounds_and_moves() {
        let p =
            CellularTraceParams { outage_probability: 0.0, ..CellularTraceParams::lte_example() };
        let trace =
            Trace::parse_mahimahi(&generate_mahimahi(&p, &mut TestRng(5)).unwrap()).unwrap();
        assert_eq!(trace.period_ns(), Some(60_000 * MS));
        let (mut lo, mut hi) = (f64::MAX, 0f64);
        // Each 100 ms step at a constant rate r gives r × 100 ms ± one opportunity.
        let slack = 12_000.0 / 0.1;
        for step in 0..600 {
            let r = trace.mean_rate_between(step * 100 * MS, (step + 1) * 100 * MS);
            assert!(r >= 1e6 - slack && r <= 30e6 + slack, "step {step}: {r}");
            lo = lo.min(r);
            hi = hi.max(r);
        }
        assert!(hi - lo > 10e6, "the walk hardly moved: {lo}..{hi}");
    }

    #[test]
    fn outages_are_silent_and_as_frequent_as_asked() {
        // 1000 s, p = 0.01 per 100 ms step: ~100 outages of 200 ms, no opportunity in them.
        let p = CellularTraceParams {
            duration_ms: 1_000_000,
            outage_probability: 0.01,
            ..CellularTraceParams::lte_example()
        };
        let text = generate_mahimahi(&p, &mut TestRng(9)).unwrap();
        let trace = Trace::parse_mahimahi(&text).unwrap();
        // Count 100 ms steps without any opportunity (step s holds ms 100 s + 1 ..= 100 s +
        // 100): each outage silences exactly two steps.
        let step = |s: u64| (s * 100 + 1) * MS;
        let silent = (0..10_000u64)
            .filter(|&s| trace.mean_rate_between(step(s), step(s + 1)) == 0.0)
            .count();
        let outages = silent as f64 / 2.0;
        // Expected ≈ 10 000 × 0.01 × (steps not in an outage ≈ 98 %) ≈ 98; ±30 %.
        assert!((70.0..130.0).contains(&outages), "{outages} outages");
    }

    #[test]
    fn one_seed_one_trace() {
        let p = CellularTraceParams::lte_example();
        let a = generate_mahimahi(&p, &mut TestRng(3)).unwrap();
        assert_eq!(a, generate_mahimahi(&p, &mut TestRng(3)).unwrap());
        assert_ne!(a, generate_mahimahi(&p, &mut TestRng(4)).unwrap());
        let bad = CellularTraceParams { start_rate_bps: 40_000_000, ..p };
        assert_eq!(generate_mahimahi(&bad, &mut TestRng(3)).unwrap_err().field, "start_rate_bps");
    }
}
