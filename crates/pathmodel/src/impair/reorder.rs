//! Reordering by displacement (`reorder = { probability, displacement }`): with probability
//! `probability` a packet is held back and delivered right after the `displacement`-th packet
//! that arrives after it, so exactly `displacement` packets overtake it, and a receiver sees
//! a reordering of that degree (RFC 4737's reordering extent; what TCP's RACK, RFC 8985, must
//! tolerate without a spurious retransmission).
//!
//! If fewer than `displacement` packets follow within `timeout_ns` (the sender went quiet: the
//! end of a window, an application pause), the held packet is released at its arrival +
//! `timeout_ns`: reordering must not turn into loss. The default, [`REORDER_TIMEOUT_NS`], is
//! 10 ms: far below TCP's 200 ms minimum RTO (Linux `TCP_RTO_MIN`), so a held tail packet is
//! never the cause of a timeout, and long enough for 3 followers of 1500 bytes at any rate
//! above 3.6 Mbit/s.
//!
//! Followers are counted by arrival, held or not. A follower that is itself held still counts
//! (so a held packet is overtaken by `displacement` packets minus those held among them).
//!
//! netem's `reorder P gap G` is a different process: every G-th packet, or one with
//! probability P, is sent at once and the others take netem's delay, so the displacement
//! depends on the delay and the rate. A fixed displacement keeps the degree of reordering one
//! number, whatever the link's rate.
//!
//! Stage API as in `jitter.rs`: `push` in arrival order, `next_due`, `pop_due`.

use super::{check_probability, ParamError, Stage};
use crate::{Nanos, Random, MS};
use std::collections::VecDeque;

/// How long a held packet waits for its followers at most (see the header).
pub const REORDER_TIMEOUT_NS: Nanos = 10 * MS;

pub struct Reorderer<P> {
    probability: f64,
    displacement: u64,
    timeout_ns: Nanos,
    /// Arrivals so far (the next arrival's number).
    arrivals: u64,
    /// Held packets in arrival order: (released after arrival number, deadline, packet);
    /// both keys grow with the arrival order.
    held: VecDeque<(u64, Nanos, P)>,
    /// Released packets, in order, with their release times (nondecreasing).
    ready: VecDeque<(Nanos, P)>,
    held_total: u64,
}

impl<P> Reorderer<P> {
    pub fn new(
        probability: f64,
        displacement: u32,
        timeout_ns: Nanos,
    ) -> Result<Reorderer<P>, ParamError> {
        check_probability("probability", probability)?;
        if displacement == 0 {
            let why = "must be ≥ 1 (packets that overtake a held one)".to_string();
            return Err(ParamError { field: "displacement", why });
        }
        if timeout_ns == 0 {
            let why = "must be > 0 (how long a held packet waits for followers)".to_string();
            return Err(ParamError { field: "timeout_ns", why });
        }
        Ok(Reorderer {
            probability,
            displacement: displacement as u64,
            timeout_ns,
            arrivals: 0,
            held: VecDeque::new(),
            ready: VecDeque::new(),
            held_total: 0,
        })
    }

    /// Release held packets whose deadline has come by `now`, at their deadlines.
    fn expire(&mut self, now: Nanos) {
        while self.held.front().is_some_and(|h| h.1 <= now) {
            let (_, deadline, p) = self.held.pop_front().unwrap();
            self.ready.push_back((deadline, p));
        }
    }

    /// Packets held back so far.
    pub fn held_total(&self) -> u64 {
        self.held_total
    }
}

impl<P> Stage<P> for Reorderer<P> {
    fn push(&mut self, now: Nanos, p: P, rng: &mut dyn Random) {
        self.expire(now);
        let n = self.arrivals;
        self.arrivals += 1;
        let hold = rng.next_f64() < self.probability;
        let mut to_hold = None;
        if hold {
            self.held_total += 1;
            to_hold = Some(p);
        } else {
            self.ready.push_back((now, p));
        }
        // Packets whose `displacement`-th follower this is go right after it.
        while self.held.front().is_some_and(|h| h.0 <= n) {
            let (_, _, q) = self.held.pop_front().unwrap();
            self.ready.push_back((now, q));
        }
        if let Some(p) = to_hold {
            self.held.push_back((n + self.displacement, now + self.timeout_ns, p));
        }
    }

    fn next_due(&self) -> Option<Nanos> {
        self.ready.front().map(|r| r.0).or_else(|| self.held.front().map(|h| h.1))
    }

    released_via_ready!();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TestRng;

    /// A `Random` whose `next_f64` returns the given values in turn.
    struct Draws(Vec<f64>, usize);
    impl Random for Draws {
        fn next_u64(&mut self) -> u64 {
            let v = self.0[self.1 % self.0.len()];
            self.1 += 1;
            ((v * (1u64 << 53) as f64) as u64) << 11
        }
    }

    fn drain<P>(r: &mut Reorderer<P>, now: Nanos, out: &mut Vec<(Nanos, P)>) {
        while let Some(x) = r.pop_due(now) {
            out.push(x);
        }
    }

    #[test]
    fn a_held_packet_comes_right_after_its_displacement_th_follower() {
        // Packet 1 is held (draw 0.0 < 0.5), the others pass; displacement 3.
        let mut r = Reorderer::new(0.5, 3, REORDER_TIMEOUT_NS).unwrap();
        let mut rng = Draws(vec![0.9, 0.0, 0.9, 0.9, 0.9, 0.9], 0);
        let mut out = vec![];
        for seq in 0..6u64 {
            r.push(seq * 1000, seq, &mut rng);
            drain(&mut r, seq * 1000, &mut out);
        }
        let order: Vec<u64> = out.iter().map(|x| x.1).collect();
        assert_eq!(order, [0, 2, 3, 4, 1, 5]);
        assert_eq!(out[4].0, 4000, "released when its third follower arrived");
    }

    #[test]
    fn without_followers_the_held_packet_leaves_at_the_timeout() {
        let mut r = Reorderer::new(0.5, 3, 5 * MS).unwrap();
        let mut rng = Draws(vec![0.0, 0.9], 0);
        r.push(MS, "held", &mut rng);
        r.push(2 * MS, "next", &mut rng);
        let mut out = vec![];
        drain(&mut r, 2 * MS, &mut out);
        assert_eq!(out, [(2 * MS, "next")]);
        assert_eq!(r.next_due(), Some(6 * MS));
        drain(&mut r, 6 * MS - 1, &mut out);
        assert_eq!(out.len(), 1);
        drain(&mut r, 6 * MS, &mut out);
        assert_eq!(out[1], (6 * MS, "held"));
        assert!(r.is_empty());
    }

    #[test]
    fn fraction_reordered_and_displacement_match_the_parameters() {
        let (p, d, n) = (0.01, 3u32, 200_000u64);
        let mut r = Reorderer::new(p, d, REORDER_TIMEOUT_NS).unwrap();
        let mut rng = TestRng(21);
        let mut out = vec![];
        for seq in 0..n {
            r.push(seq * 10_000, seq, &mut rng);
            drain(&mut r, seq * 10_000, &mut out);
        }
        drain(&mut r, u64::MAX, &mut out);
        assert_eq!(out.len() as u64, n);
        let mut pos = vec![0i64; n as usize];
        for (i, &(_, seq)) in out.iter().enumerate() {
            pos[seq as usize] = i as i64;
        }
        // A packet moved later in the output was held; it moved by `d` unless one of the
        // packets that overtook it was held too (then by fewer), never by more.
        let shifts: Vec<i64> = (0..n as usize).map(|s| pos[s] - s as i64).collect();
        let held: Vec<usize> = (0..n as usize).filter(|&s| shifts[s] > 0).collect();
        assert!(held.iter().all(|&s| shifts[s] <= d as i64));
        let exact = held.iter().filter(|&&s| shifts[s] == d as i64).count();
        assert!(exact as f64 > 0.95 * held.len() as f64, "{exact} of {}", held.len());
        // Held packets are those moved later, plus held ones overtaken by no non-held one.
        assert!(held.len() as u64 <= r.held_total());
        let frac = r.held_total() as f64 / n as f64;
        assert!((frac - p).abs() < 0.1 * p, "held fraction {frac}");
    }

    #[test]
    fn parameters_are_checked() {
        assert_eq!(Reorderer::<u8>::new(1.5, 3, 1).err().unwrap().field, "probability");
        assert_eq!(Reorderer::<u8>::new(0.1, 0, 1).err().unwrap().field, "displacement");
        assert_eq!(Reorderer::<u8>::new(0.1, 3, 0).err().unwrap().field, "timeout_ns");
    }
}
