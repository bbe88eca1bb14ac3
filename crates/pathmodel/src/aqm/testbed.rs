//! Test support: a discipline behind a constant-rate transmitter, fed by a list of arrivals,
//! recording what it sent (and when), dropped (and when, and why) and marked. Any discipline's
//! tests can drive it (`AnyAqm<TestPacket>` or the type itself).
//!
//! The transmitter asks the discipline for a packet whenever it is free, as a link does: at
//! the end of the previous packet's service, or at an arrival that finds it idle. A packet's
//! service takes `bytes * 8 / rate` (or a fixed time per packet). Ties: a dequeue due at the
//! same time as an arrival happens first.

use super::{Aqm, AqmIo, DropCause};
use crate::{Nanos, TestPacket, TestRng};

/// How long the transmitter takes per packet.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Service {
    /// A line rate in bit/s.
    RateBps(u64),
    /// The same time for every packet, whatever its size.
    PerPacketNs(Nanos),
}

impl Service {
    pub(crate) fn time_ns(self, bytes: u32) -> Nanos {
        match self {
            Service::RateBps(r) => (bytes as u128 * 8 * 1_000_000_000 / r as u128) as Nanos,
            Service::PerPacketNs(t) => t,
        }
    }
}

/// A packet the transmitter sent: when its service started (the dequeue) and the packet.
#[derive(Clone, Debug)]
pub(crate) struct Sent {
    pub at_ns: Nanos,
    pub pkt: TestPacket,
}

/// A packet the discipline dropped: when (arrival or dequeue time), why, and the packet.
#[derive(Clone, Debug)]
pub(crate) struct Dropped {
    pub at_ns: Nanos,
    pub cause: DropCause,
    pub pkt: TestPacket,
}

pub(crate) struct Testbed<Q> {
    pub q: Q,
    pub service: Service,
    pub rng: TestRng,
    pub sent: Vec<Sent>,
    pub dropped: Vec<Dropped>,
    /// When the transmitter is next free to dequeue (None: idle, waiting for an arrival).
    free_at: Option<Nanos>,
    scratch: Vec<(TestPacket, DropCause)>,
}

impl<Q: Aqm<TestPacket>> Testbed<Q> {
    pub(crate) fn new(q: Q, service: Service) -> Testbed<Q> {
        Testbed {
            q,
            service,
            rng: TestRng(1),
            sent: Vec::new(),
            dropped: Vec::new(),
            free_at: None,
            scratch: Vec::new(),
        }
    }

    fn take_drops(&mut self, at_ns: Nanos) {
        for (pkt, cause) in self.scratch.drain(..) {
            self.dropped.push(Dropped { at_ns, cause, pkt });
        }
    }

    /// Transmit everything due up to and including `t`.
    pub(crate) fn run_until(&mut self, t: Nanos) {
        while let Some(at) = self.free_at.filter(|&at| at <= t) {
            let p = self.q.dequeue(at, &mut AqmIo::new(&mut self.rng, &mut self.scratch));
            self.take_drops(at);
            match p {
                Some(pkt) => {
                    self.free_at = Some(at + self.service.time_ns(pkt.bytes));
                    self.sent.push(Sent { at_ns: at, pkt });
                }
                None => self.free_at = None,
            }
        }
    }

    /// A packet arrives at `t` (not before the previous arrival).
    pub(crate) fn arrive(&mut self, t: Nanos, pkt: TestPacket) {
        self.run_until(t);
        if let Err((pkt, cause)) =
            self.q.enqueue(t, pkt, &mut AqmIo::new(&mut self.rng, &mut self.scratch))
        {
            self.dropped.push(Dropped { at_ns: t, cause, pkt });
        }
        self.take_drops(t);
        if self.free_at.is_none() {
            self.free_at = Some(t);
        }
    }

    /// Feed `arrivals` (in time order), transmitting in between.
    pub(crate) fn run(&mut self, arrivals: impl IntoIterator<Item = (Nanos, TestPacket)>) {
        for (t, p) in arrivals {
            self.arrive(t, p);
        }
    }

    /// Transmit until the discipline is empty.
    pub(crate) fn drain(&mut self) {
        self.run_until(Nanos::MAX);
    }
}

/// Arrivals of one flow at a constant spacing from `start_ns` (inclusive) to `end_ns`
/// (exclusive), sequence numbers from `first_seq`.
pub(crate) fn cbr(
    flow: u64,
    bytes: u32,
    ecn: crate::Ecn,
    start_ns: Nanos,
    end_ns: Nanos,
    every_ns: Nanos,
    first_seq: u64,
) -> Vec<(Nanos, TestPacket)> {
    (0..)
        .map(|i| start_ns + i * every_ns)
        .take_while(|&t| t < end_ns)
        .enumerate()
        .map(|(i, t)| (t, TestPacket { bytes, ecn, flow, seq: first_seq + i as u64 }))
        .collect()
}

/// Merge arrival lists into one in time order (stable: equal times keep list order).
pub(crate) fn merge(lists: Vec<Vec<(Nanos, TestPacket)>>) -> Vec<(Nanos, TestPacket)> {
    let mut all: Vec<_> = lists.into_iter().flatten().collect();
    all.sort_by_key(|(t, _)| *t);
    all
}
