//! Per-flow histogram of inter-departure gaps at the sender's NIC (the ESnet BBRv3 slides' "packet
//! spacing histogram from tcpdump on the send host", taken with NIC hardware timestamps).
//!
//! A flow that asks for it (`gap_histogram = true`) gets a [`GapHist`]; every time one of its data
//! packets finishes leaving its sender host's NIC (the end of serialization, which is what a NIC
//! hardware timestamp on transmit records up to a constant) the gap since its previous data packet
//! left is counted in a log-spaced bucket. Flows that do not ask for it hold `None`: the
//! simulator's only cost for them is one branch per NIC departure.
//!
//! Buckets: `BUCKETS_PER_DECADE` per decade from `MIN_NS` to `MAX_NS`; bucket 0 holds gaps below
//! `MIN_NS` (lower edge 0) and the last bucket gaps of `MAX_NS` or more (upper edge +inf).
//! Exported as the `gaps` table (docs/core-api.md): one row per requesting flow per bucket,
//! zero counts included, so a flow's rows sum to its data packets sent minus one.

use crate::metrics::{GapCols, GapRow, Table};
use cc::Nanos;

/// Smallest resolved gap (1 ns: below one packet at 1 Tbit/s is 12 ns).
pub const MIN_NS: f64 = 1.0;
/// Largest resolved gap (10 s); above goes to the overflow bucket.
pub const MAX_NS: f64 = 1e10;
pub const BUCKETS_PER_DECADE: usize = 10;
/// Decades between MIN_NS and MAX_NS.
const DECADES: usize = 10;
/// Underflow + resolved + overflow.
pub const N_BUCKETS: usize = DECADES * BUCKETS_PER_DECADE + 2;

/// Lower and upper edge (ns) of bucket `i`.
pub fn bucket_edges(i: usize) -> (f64, f64) {
    let edge = |k: usize| MIN_NS * 10f64.powf(k as f64 / BUCKETS_PER_DECADE as f64);
    match i {
        0 => (0.0, MIN_NS),
        _ if i == N_BUCKETS - 1 => (MAX_NS, f64::INFINITY),
        _ => (edge(i - 1), edge(i)),
    }
}

/// Bucket of a gap in ns.
#[inline]
pub fn bucket_of(gap_ns: Nanos) -> usize {
    let g = gap_ns as f64;
    if g < MIN_NS {
        return 0;
    }
    if g >= MAX_NS {
        return N_BUCKETS - 1;
    }
    let k = ((g / MIN_NS).log10() * BUCKETS_PER_DECADE as f64).floor() as usize;
    // Guard the float at exact edges (log10(1000) may come out as 2.9999…).
    let mut k = k.min(N_BUCKETS - 3);
    if g >= bucket_edges(k + 2).0 {
        k += 1;
    } else if g < bucket_edges(k + 1).0 {
        k = k.saturating_sub(1);
    }
    (k + 1).min(N_BUCKETS - 2)
}

/// One flow's histogram.
#[derive(Clone, Debug)]
pub struct GapHist {
    last_ns: Option<Nanos>,
    pub counts: [u64; N_BUCKETS],
}

impl Default for GapHist {
    fn default() -> Self {
        GapHist { last_ns: None, counts: [0; N_BUCKETS] }
    }
}

impl GapHist {
    /// A data packet of the flow left the NIC at `now`.
    #[inline]
    pub fn on_departure(&mut self, now: Nanos) {
        if let Some(last) = self.last_ns {
            self.counts[bucket_of(now - last)] += 1;
        }
        self.last_ns = Some(now);
    }
}

/// The `gaps` table: flow, lo_ns, hi_ns, count for every flow with a histogram.
pub fn table<'a>(hists: impl Iterator<Item = (usize, Option<&'a GapHist>)>) -> Table {
    let mut t = GapCols::default();
    for (fi, h) in hists {
        for (i, &c) in h.into_iter().flat_map(|h| h.counts.iter().enumerate()) {
            let (lo_ns, hi_ns) = bucket_edges(i);
            t.push(GapRow { flow: fi as i32, lo_ns, hi_ns, count: c as i64 });
        }
    }
    t.table()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_log_spaced_and_contain_their_gaps() {
        for g in [1u64, 2, 9, 10, 11, 99, 100, 123, 1000, 12_345, 999_999, 1_000_000, 9_999_999_999]
        {
            let b = bucket_of(g);
            let (lo, hi) = bucket_edges(b);
            assert!(lo <= g as f64 && (g as f64) < hi, "gap {g} in bucket {b} [{lo}, {hi})");
        }
        assert_eq!(bucket_of(0), 0);
        assert_eq!(bucket_of(20_000_000_000), N_BUCKETS - 1);
        let (lo, hi) = bucket_edges(31);
        assert!((hi / lo - 10f64.powf(0.1)).abs() < 1e-9);
    }

    #[test]
    fn counts_gaps_between_departures() {
        let mut h = GapHist::default();
        for t in [0u64, 123, 246, 10_246] {
            h.on_departure(t);
        }
        assert_eq!(h.counts.iter().sum::<u64>(), 3);
        assert_eq!(h.counts[bucket_of(123)], 2);
        assert_eq!(h.counts[bucket_of(10_000)], 1);
    }
}
