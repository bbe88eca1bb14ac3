//! First in, first out, with a drop-tail limit and optional step ECN marking on the bytes or
//! packets waiting when a packet arrives (DCTCP's K, RFC 8257 §3.1): the discipline every
//! other one is measured against.

use super::backlog::Backlog;
use super::{Aqm, AqmIo, DropCause, Held, LinkContext, QdiscSpec};
use crate::{Nanos, PathPacket};

pub struct Fifo<P> {
    q: Backlog<P>,
    held: Held,
    mark_bytes: Option<u64>,
    mark_packets: Option<u64>,
}

impl<P: PathPacket> Fifo<P> {
    pub fn new(_spec: &QdiscSpec, ctx: &LinkContext) -> Fifo<P> {
        Fifo {
            q: Backlog::new(),
            held: Held::new(ctx.limit, None, 1),
            mark_bytes: ctx.ecn_threshold_bytes,
            mark_packets: ctx.ecn_threshold_packets,
        }
    }
}

impl<P: PathPacket> Aqm<P> for Fifo<P> {
    fn enqueue(&mut self, now: Nanos, p: P, _io: &mut AqmIo<'_, P>) -> Result<(), (P, DropCause)> {
        let (bytes, packets) = (self.held.bytes(), self.held.packets());
        let mut p = self.held.tail_drop(0, p)?;
        let c = &mut self.held.stats.classes[0];
        let over = self.mark_bytes.is_some_and(|k| bytes > k)
            || self.mark_packets.is_some_and(|k| packets > k);
        if over && p.ecn().is_ect() {
            p.set_ce();
            c.ce_marks += 1;
        }
        self.q.push(now, p, &mut self.held.occupancy, c);
        Ok(())
    }

    fn dequeue(&mut self, now: Nanos, _io: &mut AqmIo<'_, P>) -> Option<P> {
        let held = &mut self.held;
        self.q.dequeue(now, &mut held.occupancy, &mut held.stats.classes[0])
    }

    held_in_field!();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::AnyAqm;
    use crate::aqm::Limit;
    use crate::{Ecn, TestPacket, TestRng};

    fn pkt(seq: u64, ecn: Ecn) -> TestPacket {
        TestPacket { bytes: 1500, ecn, flow: 1, seq }
    }

    #[test]
    fn tail_drops_at_limit_marks_above_threshold_keeps_order() {
        let ctx = LinkContext {
            rate_bps: 1_000_000,
            limit: Limit { bytes: Some(4500), packets: None },
            ecn_threshold_bytes: Some(1500),
            ecn_threshold_packets: None,
        };
        let mut q: AnyAqm<TestPacket> = AnyAqm::build(&QdiscSpec::Droptail {}, &ctx);
        let (mut rng, mut dropped) = (TestRng(1), Vec::new());
        for s in 0..4 {
            let r = q.enqueue(s * 10, pkt(s, Ecn::Ect0), &mut AqmIo::new(&mut rng, &mut dropped));
            assert_eq!(r.is_err(), s == 3, "seq {s}");
        }
        let out: Vec<_> =
            std::iter::from_fn(|| q.dequeue(100, &mut AqmIo::new(&mut rng, &mut dropped)))
                .collect();
        assert_eq!(out.iter().map(|p| p.seq).collect::<Vec<_>>(), [0, 1, 2]);
        // Only the third found more than 1500 bytes waiting.
        assert_eq!(out.iter().map(|p| p.ecn).collect::<Vec<_>>(), [Ecn::Ect0, Ecn::Ect0, Ecn::Ce]);
        let s = &q.stats().classes[0];
        assert_eq!((s.drops_overflow, s.ce_marks, s.dequeued), (1, 1, 3));
        assert_eq!(s.sojourn.max_ns(), 100);
    }
}
