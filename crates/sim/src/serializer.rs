//! A link's serializer as a timestamped FIFO server: one event per packet per hop.
//!
//! A drop-tail FIFO link serves packets in arrival order at a fixed rate, so the moment a packet
//! is accepted fixes its whole future: it starts when the serializer frees
//! (`max(now, free_at)`), leaves `tx_time` later and reaches the far end one propagation delay
//! after that. Nothing that happens later can change these times — unless something outside
//! the queue stops the serializer (a PAUSE frame, `pfc.rs`) or reacts to departures (a host
//! NIC's TSQ, a shared buffer's pool). Links without those ("timestamped links") therefore put
//! each packet straight into their propagation pipe at its arrival time, and the pipe head is
//! their only heap entry: the `TxDone` event disappears.
//!
//! What the queue looks like at time `now` (bytes and packets waiting, the occupancy
//! integral, the bytes sent, the busy time) is recovered lazily: before anyone reads it,
//! [`Serializer::next_change`] replays the starts and departures that happened up to `now`, in
//! time order. The replay applies each change at its own timestamp, so the statistics are
//! exactly those the event-driven serializer would have recorded.

use cc::Nanos;
use std::collections::VecDeque;

/// One accepted packet's service: when it starts serializing and when its last bit leaves.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Slot {
    pub start_ns: Nanos,
    pub done_ns: Nanos,
    pub wire_bytes: u32,
}

/// A change of the queue's state at or before the time asked about.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Change {
    /// The packet left the queue and began serializing at `start_ns`.
    Start(Slot),
    /// The packet's last bit left at `done_ns`.
    Done(Slot),
}

#[derive(Debug, Default)]
pub(crate) struct Serializer {
    /// When the serializer finishes the last packet accepted so far.
    pub free_at_ns: Nanos,
    /// Accepted packets that had not started at the last replay, in order.
    waiting: VecDeque<Slot>,
    /// The packet serializing at the last replay.
    in_service: Option<Slot>,
}

impl Serializer {
    /// Accept a packet at `now` (after replaying to `now`) that takes `tx_ns` to serialize;
    /// returns its slot. Starts at once on an idle serializer, else after the last one.
    pub fn accept(&mut self, now: Nanos, tx_ns: Nanos, wire_bytes: u32) -> Slot {
        let start_ns = self.free_at_ns.max(now);
        let slot = Slot { start_ns, done_ns: start_ns + tx_ns, wire_bytes };
        self.free_at_ns = slot.done_ns;
        if start_ns == now && self.in_service.is_none() && self.waiting.is_empty() {
            self.in_service = Some(slot);
        } else {
            self.waiting.push_back(slot);
        }
        slot
    }

    /// The packets waiting at the last replay, in order.
    pub fn waiting(&self) -> &VecDeque<Slot> {
        &self.waiting
    }

    /// A passive link's acceptance (no one reads its queue): only the time its last bit leaves,
    /// the same as [`Serializer::accept`]'s `done_ns`, without the schedule kept for a replay.
    #[inline]
    pub fn pass(&mut self, now: Nanos, tx_ns: Nanos) -> Nanos {
        self.free_at_ns = self.free_at_ns.max(now) + tx_ns;
        self.free_at_ns
    }

    /// The next start or departure at or before `now`, oldest first (a departure before the
    /// start it makes room for); None once the state at `now` is reached.
    pub fn next_change(&mut self, now: Nanos) -> Option<Change> {
        if let Some(s) = self.in_service {
            if s.done_ns <= now {
                self.in_service = None;
                return Some(Change::Done(s));
            }
            return None;
        }
        match self.waiting.front() {
            Some(s) if s.start_ns <= now => {
                let s = *s;
                self.waiting.pop_front();
                self.in_service = Some(s);
                Some(Change::Start(s))
            }
            _ => None,
        }
    }

    /// Packets waiting (not serializing) at the last replay.
    pub fn waiting_pkts(&self) -> usize {
        self.waiting.len()
    }

    /// When the packet serializing at the last replay started, if one was.
    pub fn serving_since(&self) -> Option<Nanos> {
        self.in_service.map(|s| s.start_ns)
    }

    /// Nothing serializing or waiting at `now` (after replaying to `now`).
    pub fn is_idle(&self, now: Nanos) -> bool {
        self.free_at_ns <= now
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn replay(s: &mut Serializer, now: Nanos) -> Vec<Change> {
        std::iter::from_fn(|| s.next_change(now)).collect()
    }

    #[test]
    fn back_to_back_packets_start_when_the_previous_one_leaves() {
        let mut s = Serializer::default();
        let a = s.accept(100, 10, 1500);
        let b = s.accept(100, 10, 1500);
        let c = s.accept(105, 10, 64);
        assert_eq!((a.start_ns, a.done_ns), (100, 110));
        assert_eq!((b.start_ns, b.done_ns), (110, 120));
        assert_eq!((c.start_ns, c.done_ns), (120, 130));
        assert_eq!(s.waiting_pkts(), 2);
        // At 120 a and b have left and c starts; a departure comes before the start it allows.
        assert_eq!(
            replay(&mut s, 120),
            vec![Change::Done(a), Change::Start(b), Change::Done(b), Change::Start(c)]
        );
        assert_eq!(s.serving_since(), Some(120));
        assert!(!s.is_idle(129));
        assert_eq!(replay(&mut s, 130), vec![Change::Done(c)]);
        assert!(s.is_idle(130));
        assert_eq!(s.serving_since(), None);
    }

    #[test]
    fn an_idle_serializer_starts_a_late_packet_on_arrival() {
        let mut s = Serializer::default();
        s.accept(0, 10, 100);
        assert_eq!(replay(&mut s, 50).len(), 1);
        let late = s.accept(50, 10, 100);
        assert_eq!((late.start_ns, late.done_ns), (50, 60));
        assert_eq!(s.waiting_pkts(), 0);
        assert_eq!(s.serving_since(), Some(50));
        assert!(replay(&mut s, 59).is_empty());
    }
}
