//! Delay jitter (`jitter = { max, reorder }`): each packet gets an extra delay drawn uniformly
//! from [0, max_ns], on top of the link's propagation delay.
//!
//! - `reorder = false` keeps the link FIFO: a packet leaves the stage at max(t + jitter, the
//!   previous packet's release), so jitter only stretches gaps and bunches packets behind a
//!   late one (what a wireless hop's retransmissions do to a flow);
//! - `reorder = true` lets packets overtake: each leaves at t + jitter.
//!
//! What netem offers: `delay TIME JITTER [CORRELATION] [distribution uniform|normal|pareto|
//! paretonormal]` draws the delay around TIME (uniform: in [TIME − JITTER, TIME + JITTER]; the
//! others from iproute2's tables), with a correlation to the previous draw; netem's tfifo
//! queue sorts packets by their send time, so jitter reorders unless a `rate` is set. Here,
//! uniform in [0, max_ns] is netem's uniform with TIME = base + max/2 and JITTER = max/2; no
//! correlation, no other distribution (nothing in the scenarios needs them yet).
//!
//! A stage of the link's delivery path, in the API shared with `reorder.rs` and
//! `aggregation.rs`: `push` packets in their order of arrival, `next_due` is when the caller
//! must come back, `pop_due` hands out the released ones in release order (ties: arrival order).

use super::Stage;
use crate::{Nanos, Random};
use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, VecDeque};

pub struct Jitter<P> {
    max_ns: Nanos,
    reorder: bool,
    /// reorder = false: releases are nondecreasing in arrival order.
    fifo: VecDeque<(Nanos, P)>,
    last_release_ns: Nanos,
    /// reorder = true: by (release, arrival number).
    heap: BinaryHeap<Reverse<Entry<P>>>,
    pushed: u64,
}

struct Entry<P> {
    release_ns: Nanos,
    seq: u64,
    p: P,
}

impl<P> PartialEq for Entry<P> {
    fn eq(&self, o: &Self) -> bool {
        (self.release_ns, self.seq) == (o.release_ns, o.seq)
    }
}
impl<P> Eq for Entry<P> {}
impl<P> PartialOrd for Entry<P> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<P> Ord for Entry<P> {
    fn cmp(&self, o: &Self) -> Ordering {
        (self.release_ns, self.seq).cmp(&(o.release_ns, o.seq))
    }
}

impl<P> Jitter<P> {
    pub fn new(max_ns: Nanos, reorder: bool) -> Jitter<P> {
        Jitter {
            max_ns,
            reorder,
            fifo: VecDeque::new(),
            last_release_ns: 0,
            heap: BinaryHeap::new(),
            pushed: 0,
        }
    }
}

impl<P> Stage<P> for Jitter<P> {
    fn push(&mut self, now: Nanos, p: P, rng: &mut dyn Random) {
        let jitter_ns = if self.max_ns == 0 { 0 } else { rng.next_u64() % (self.max_ns + 1) };
        let mut release_ns = now + jitter_ns;
        if self.reorder {
            self.heap.push(Reverse(Entry { release_ns, seq: self.pushed, p }));
        } else {
            release_ns = release_ns.max(self.last_release_ns);
            self.last_release_ns = release_ns;
            self.fifo.push_back((release_ns, p));
        }
        self.pushed += 1;
    }

    fn next_due(&self) -> Option<Nanos> {
        if self.reorder {
            self.heap.peek().map(|e| e.0.release_ns)
        } else {
            self.fifo.front().map(|e| e.0)
        }
    }

    fn pop_due(&mut self, now: Nanos) -> Option<(Nanos, P)> {
        if self.next_due()? > now {
            return None;
        }
        if self.reorder {
            self.heap.pop().map(|Reverse(e)| (e.release_ns, e.p))
        } else {
            self.fifo.pop_front()
        }
    }

    fn len(&self) -> usize {
        self.fifo.len() + self.heap.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{TestRng, MS};

    /// Push `n` packets 100 µs apart through a 2 ms jitter; (release, seq) in output order.
    fn run(reorder: bool, n: u64) -> Vec<(Nanos, u64)> {
        let mut j = Jitter::new(2 * MS, reorder);
        let mut rng = TestRng(11);
        let mut out = vec![];
        for seq in 0..n {
            let now = seq * 100_000;
            while let Some(x) = j.pop_due(now) {
                out.push(x);
            }
            j.push(now, seq, &mut rng);
        }
        while let Some(x) = j.pop_due(u64::MAX) {
            out.push(x);
        }
        out
    }

    #[test]
    fn fifo_jitter_keeps_order_and_never_releases_early() {
        let out = run(false, 100_000);
        assert!(out.windows(2).all(|w| w[0].1 < w[1].1 && w[0].0 <= w[1].0));
        // Each release is at least its arrival and, in FIFO, at most arrival + max plus the
        // wait behind an earlier one (which was itself ≤ its arrival + max).
        for &(t, seq) in &out {
            assert!(t >= seq * 100_000 && t <= seq * 100_000 + 2 * MS);
        }
    }

    #[test]
    fn reordering_jitter_is_uniform_and_lets_packets_overtake() {
        let out = run(true, 100_000);
        assert!(out.windows(2).all(|w| w[0].0 <= w[1].0), "released in time order");
        let overtaken = out.windows(2).filter(|w| w[0].1 > w[1].1).count();
        // 100 µs apart with a 0–2 ms uniform delay: the next packet overtakes this one when
        // its delay is > 100 µs less: P = (1 − 0.05)² / 2 ≈ 0.45 of adjacent pairs.
        let frac = overtaken as f64 / 100_000.0;
        assert!(frac > 0.3, "overtaken {frac}");
        // The delay is uniform on [0, 2 ms]: mean 1 ms, and each fifth of the range holds 20 %.
        let delays: Vec<u64> = out.iter().map(|&(t, s)| t - s * 100_000).collect();
        let mean = delays.iter().sum::<u64>() as f64 / delays.len() as f64;
        assert!((mean - 1e6).abs() < 0.01e6, "mean {mean}");
        for k in 0..5 {
            let lo = k * 2 * MS / 5;
            let in_bin = delays.iter().filter(|&&d| d >= lo && d < lo + 2 * MS / 5).count();
            assert!((in_bin as f64 / 1e5 - 0.2).abs() < 0.01, "bin {k}: {in_bin}");
        }
    }
}
