//! The packets a FIFO holds, each with the time it entered (its sojourn is measured from it),
//! and their bytes: the queue drop-tail, CoDel and PIE each keep one of, and DualPI2 two.
//! Tail drop at the limit and the per-class counting of what enters and leaves are here once.

use super::{ClassStats, DropCause, Limit};
use crate::{Nanos, PathPacket};
use std::collections::VecDeque;

pub(crate) struct Backlog<P> {
    q: VecDeque<(Nanos, P)>,
    bytes: u64,
}

impl<P: PathPacket> Backlog<P> {
    pub(crate) fn new() -> Backlog<P> {
        Backlog { q: VecDeque::new(), bytes: 0 }
    }
    #[inline]
    pub(crate) fn bytes(&self) -> u64 {
        self.bytes
    }
    #[inline]
    pub(crate) fn packets(&self) -> u64 {
        self.q.len() as u64
    }
    /// When the head packet entered, if there is one.
    #[inline]
    pub(crate) fn head_time(&self) -> Option<Nanos> {
        self.q.front().map(|&(t, _)| t)
    }
    /// Whether `p` fits under `limit` beside `bytes`/`packets` waiting (the whole discipline's,
    /// which may hold more than this FIFO); a packet that does not is counted as a tail drop
    /// in `c` and handed back.
    #[inline]
    pub(crate) fn tail_drop(
        limit: &Limit,
        bytes: u64,
        packets: u64,
        p: P,
        c: &mut ClassStats,
    ) -> Result<P, (P, DropCause)> {
        if limit.admits(bytes, packets, p.wire_bytes()) {
            Ok(p)
        } else {
            c.drops_overflow += 1;
            Err((p, DropCause::Overflow))
        }
    }
    /// `p` waits from `now` (counted as enqueued in `c`).
    #[inline]
    pub(crate) fn push(&mut self, now: Nanos, p: P, c: &mut ClassStats) {
        c.enqueued += 1;
        self.bytes += p.wire_bytes() as u64;
        self.q.push_back((now, p));
    }
    /// Remove the head packet with the time it entered (not yet counted as dequeued: the
    /// discipline may still drop it).
    #[inline]
    pub(crate) fn pop(&mut self) -> Option<(Nanos, P)> {
        let (t, p) = self.q.pop_front()?;
        self.bytes -= p.wire_bytes() as u64;
        Some((t, p))
    }
}

impl ClassStats {
    /// A packet leaves for the transmitter after waiting `sojourn_ns`.
    #[inline]
    pub(crate) fn count_dequeue(&mut self, sojourn_ns: Nanos) {
        self.dequeued += 1;
        self.sojourn.record(sojourn_ns);
    }
}

impl Limit {
    /// This limit, or `default_packets` if it sets none (a Linux qdisc's own `limit` default,
    /// used when the link has no buffer of its own).
    pub(crate) fn or_packets(self, default_packets: u64) -> Limit {
        if self.bytes.is_none() && self.packets.is_none() {
            Limit { bytes: None, packets: Some(default_packets) }
        } else {
            self
        }
    }
}
