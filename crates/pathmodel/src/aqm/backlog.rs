//! What every discipline keeps the same way ([`Held`]: the bytes and packets it holds, its
//! buffer limit, its counters), and the FIFO of packets with the time each entered (its sojourn
//! is measured from it) that drop-tail, CoDel, PIE and each FQ-CoDel flow keep one of, and
//! DualPI2 two. Tail drop at the limit and the per-class counting of what enters and leaves
//! are here once.

use super::{AqmStats, ClassStats, DropCause, Limit};
use crate::{Nanos, PathPacket};
use std::collections::VecDeque;

/// Bytes and packets a discipline holds, all its queues together.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Occupancy {
    pub(crate) bytes: u64,
    pub(crate) packets: u64,
}

impl Occupancy {
    #[inline]
    pub(crate) fn add(&mut self, wire_bytes: u32) {
        self.bytes += wire_bytes as u64;
        self.packets += 1;
    }
    #[inline]
    pub(crate) fn remove(&mut self, wire_bytes: u32) {
        self.bytes -= wire_bytes as u64;
        self.packets -= 1;
    }
}

/// A discipline's occupancy, buffer limit and counters: the [`super::Aqm`] accessors read
/// them here, so a discipline states only how it enqueues and dequeues.
#[derive(Debug)]
pub struct Held {
    pub(crate) occupancy: Occupancy,
    limit: Limit,
    /// The Linux qdisc's own `limit` (packets), used when the link sets no buffer; None: a
    /// link without a buffer has none.
    default_limit_packets: Option<u64>,
    pub(crate) stats: AqmStats,
}

impl Held {
    /// Nothing held, `limit` (or `default_limit_packets` if it sets none), `classes` counters.
    pub(crate) fn new(limit: Limit, default_limit_packets: Option<u64>, classes: usize) -> Held {
        let mut held = Held {
            occupancy: Occupancy::default(),
            limit,
            default_limit_packets,
            stats: AqmStats::new(classes),
        };
        held.set_limit(limit);
        held
    }
    #[inline]
    pub fn bytes(&self) -> u64 {
        self.occupancy.bytes
    }
    #[inline]
    pub fn packets(&self) -> u64 {
        self.occupancy.packets
    }
    pub fn stats(&self) -> &AqmStats {
        &self.stats
    }
    pub fn limit(&self) -> Limit {
        self.limit
    }
    /// Change the buffer limit; packets already queued stay.
    pub fn set_limit(&mut self, limit: Limit) {
        self.limit = match self.default_limit_packets {
            Some(packets) => limit.or_packets(packets),
            None => limit,
        };
    }
    /// Whether more is held than the limit allows (FQ-CoDel enqueues first, then drops).
    #[inline]
    pub(crate) fn over_limit(&self) -> bool {
        self.limit.bytes.is_some_and(|l| self.occupancy.bytes > l)
            || self.limit.packets.is_some_and(|l| self.occupancy.packets > l)
    }
    /// Whether `p` fits under the limit beside what the discipline holds; a packet that does
    /// not is counted as a tail drop of stats class `class` and handed back.
    #[inline]
    pub(crate) fn tail_drop<P: PathPacket>(
        &mut self,
        class: usize,
        p: P,
    ) -> Result<P, (P, DropCause)> {
        let Occupancy { bytes, packets } = self.occupancy;
        if self.limit.admits(bytes, packets, p.wire_bytes()) {
            Ok(p)
        } else {
            self.stats.classes[class].drops_overflow += 1;
            Err((p, DropCause::Overflow))
        }
    }
}

pub(crate) struct Backlog<P> {
    q: VecDeque<(Nanos, P)>,
}

impl<P: PathPacket> Backlog<P> {
    pub(crate) fn new() -> Backlog<P> {
        Backlog { q: VecDeque::new() }
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
    /// `p` waits from `now` (counted as enqueued in `c`, and held in `held`).
    #[inline]
    pub(crate) fn push(&mut self, now: Nanos, p: P, held: &mut Occupancy, c: &mut ClassStats) {
        c.enqueued += 1;
        held.add(p.wire_bytes());
        self.q.push_back((now, p));
    }
    /// Remove the head packet with the time it entered (no longer in `held`, not yet counted
    /// as dequeued: the discipline may still drop it).
    #[inline]
    pub(crate) fn pop(&mut self, held: &mut Occupancy) -> Option<(Nanos, P)> {
        let (t, p) = self.q.pop_front()?;
        held.remove(p.wire_bytes());
        Some((t, p))
    }
    /// Remove the head packet and count it sent after its sojourn to `now` (a FIFO that drops
    /// nothing at dequeue).
    #[inline]
    pub(crate) fn dequeue(
        &mut self,
        now: Nanos,
        held: &mut Occupancy,
        c: &mut ClassStats,
    ) -> Option<P> {
        let (t, p) = self.pop(held)?;
        c.count_dequeue(now - t);
        Some(p)
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
