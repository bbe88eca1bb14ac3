//! Aggregation (`aggregation = { direction, bytes, timeout }`): packets are held and released
//! together, when the bytes held reach `bytes` or `timeout_ns` after the first of them arrived,
//! whichever comes first. It models a link layer that sends in bursts: Wi-Fi's A-MPDU (one
//! channel access carries up to 64 KiB in 802.11n, IEEE 802.11-2020 §10.12), a cellular
//! scheduler's grants (the data of a TTI is delivered at once), and, on the ACK direction, the
//! ACK compression that BBR's `extra_acked` estimator was written for (Linux `tcp_bbr.c`,
//! `bbr_update_ack_aggregation`).
//!
//! A released batch leaves in arrival order, all at the release time. `bytes = None` releases
//! by time only.
//!
//! Stage API as in `jitter.rs`: `push` in arrival order, `next_due`, `pop_due`.

use super::{ParamError, Stage};
use crate::{Nanos, PathPacket, Random};
use std::collections::VecDeque;

pub struct Aggregator<P> {
    bytes: Option<u64>,
    timeout_ns: Nanos,
    /// The batch being built, its bytes, and when its first packet arrived.
    held: Vec<P>,
    held_bytes: u64,
    first_ns: Nanos,
    /// Released packets with their release times (nondecreasing).
    ready: VecDeque<(Nanos, P)>,
    batches: u64,
}

impl<P: PathPacket> Aggregator<P> {
    pub fn new(bytes: Option<u64>, timeout_ns: Nanos) -> Result<Aggregator<P>, ParamError> {
        if bytes == Some(0) {
            return Err(ParamError { field: "bytes", why: "must be > 0".into() });
        }
        if timeout_ns == 0 {
            let why = "must be > 0 (0 would release every packet alone)".into();
            return Err(ParamError { field: "timeout_ns", why });
        }
        Ok(Aggregator {
            bytes,
            timeout_ns,
            held: Vec::new(),
            held_bytes: 0,
            first_ns: 0,
            ready: VecDeque::new(),
            batches: 0,
        })
    }

    fn release(&mut self, at_ns: Nanos) {
        self.ready.extend(self.held.drain(..).map(|p| (at_ns, p)));
        self.held_bytes = 0;
        self.batches += 1;
    }

    /// Release the batch if its timeout has come by `now`.
    fn expire(&mut self, now: Nanos) {
        if !self.held.is_empty() && self.first_ns + self.timeout_ns <= now {
            self.release(self.first_ns + self.timeout_ns);
        }
    }

    /// A packet arriving at `now` (nondecreasing across calls); the stage's `push`, which
    /// draws nothing.
    pub fn push(&mut self, now: Nanos, p: P) {
        self.expire(now);
        if self.held.is_empty() {
            self.first_ns = now;
        }
        self.held_bytes += p.wire_bytes() as u64;
        self.held.push(p);
        if self.bytes.is_some_and(|b| self.held_bytes >= b) {
            self.release(now);
        }
    }

    /// Batches released so far.
    pub fn batches(&self) -> u64 {
        self.batches
    }
}

impl<P: PathPacket> Stage<P> for Aggregator<P> {
    fn push(&mut self, now: Nanos, p: P, _rng: &mut dyn Random) {
        Aggregator::push(self, now, p);
    }

    fn next_due(&self) -> Option<Nanos> {
        match self.ready.front() {
            Some(r) => Some(r.0),
            None if self.held.is_empty() => None,
            None => Some(self.first_ns + self.timeout_ns),
        }
    }

    released_via_ready!();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Ecn, TestPacket, MS};

    fn pkt(seq: u64, bytes: u32) -> TestPacket {
        TestPacket { bytes, ecn: Ecn::NotEct, flow: 0, seq }
    }

    fn drain(a: &mut Aggregator<TestPacket>, now: Nanos, out: &mut Vec<(Nanos, u64)>) {
        while let Some((t, p)) = a.pop_due(now) {
            out.push((t, p.seq));
        }
    }

    #[test]
    fn batches_close_at_the_byte_threshold() {
        // 16 KB batches of 1500-byte packets every 100 µs: 11 packets reach 16 500 ≥ 16 000,
        // at the 11th's arrival (1 ms after the first), before the 2 ms timeout.
        let mut a = Aggregator::new(Some(16_000), 2 * MS).unwrap();
        let mut out = vec![];
        for seq in 0..33 {
            let now = seq * 100_000;
            a.push(now, pkt(seq, 1500));
            drain(&mut a, now, &mut out);
        }
        assert_eq!(out.len(), 33);
        assert_eq!(a.batches(), 3);
        for (i, &(t, seq)) in out.iter().enumerate() {
            assert_eq!(seq, i as u64, "arrival order");
            assert_eq!(t, (seq / 11 * 11 + 10) * 100_000, "packet {seq}");
        }
    }

    #[test]
    fn a_slow_batch_closes_at_the_timeout_after_its_first_packet() {
        let mut a = Aggregator::new(Some(16_000), 2 * MS).unwrap();
        let mut out = vec![];
        a.push(MS, pkt(0, 100));
        a.push(2 * MS, pkt(1, 100));
        assert_eq!(a.next_due(), Some(3 * MS));
        drain(&mut a, 3 * MS - 1, &mut out);
        assert!(out.is_empty());
        // A packet at 3.5 ms starts a new batch; the first was released at 3 ms.
        a.push(3 * MS + MS / 2, pkt(2, 100));
        drain(&mut a, 3 * MS + MS / 2, &mut out);
        assert_eq!(out, [(3 * MS, 0), (3 * MS, 1)]);
        assert_eq!(a.next_due(), Some(5 * MS + MS / 2));
        drain(&mut a, u64::MAX, &mut out);
        assert_eq!(out[2], (5 * MS + MS / 2, 2));
        assert_eq!(a.next_due(), None);
    }

    #[test]
    fn time_only_batches_and_checks() {
        // No byte threshold: packets every 300 µs, timeout 1 ms → batches of 4 (0, .3, .6,
        // .9 ms), released 1 ms after each batch's first packet.
        let mut a = Aggregator::new(None, MS).unwrap();
        let mut out = vec![];
        for seq in 0..12 {
            a.push(seq * 300_000, pkt(seq, 60_000));
            drain(&mut a, seq * 300_000, &mut out);
        }
        drain(&mut a, u64::MAX, &mut out);
        let times: Vec<Nanos> = out.iter().map(|x| x.0).collect();
        let want: Vec<Nanos> = (0..12).map(|s| (s / 4) * 1_200_000 + MS).collect();
        assert_eq!(times, want);
        assert!(Aggregator::<TestPacket>::new(Some(0), MS).is_err());
        assert!(Aggregator::<TestPacket>::new(None, 0).is_err());
    }
}
