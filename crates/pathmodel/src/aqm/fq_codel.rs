//! FQ-CoDel (RFC 8290, Linux `net/sched/sch_fq_codel.c`): packets are hashed by flow into
//! `flows` FIFO queues, each managed by its own CoDel state machine (`codel.rs`), and served by
//! deficit round robin with a priority list for flows that just became active.
//!
//! The model, following Linux's functions:
//!
//! - Classify (`fq_codel_hash()`, RFC 8290 §4.1): the packet's flow key picks one of `flows`
//!   queues. Linux scales a 32-bit skb hash onto the table by a multiply-shift
//!   (`reciprocal_scale`); our flow keys may be small integers, so they are first spread by a
//!   Fibonacci multiply ([`FIB_HASH_MUL`]) whose top 32 bits play the skb hash. Two flows may
//!   share a queue, as in Linux.
//! - Enqueue (`fq_codel_enqueue()`, RFC 8290 §4.1): the packet joins its queue's tail with its
//!   arrival time. A queue that was on neither list joins the tail of `new_flows` with a
//!   deficit of one quantum. Then, if the discipline holds more than its limit, it drops from
//!   the head of the queue holding the most bytes (`fq_codel_drop()`, RFC 8290 §4.1): up to
//!   `drop_batch_packets` packets, stopping once half that queue's bytes are gone, and adds
//!   the number dropped to that queue's CoDel `count` ("tell codel to increase its signal
//!   strength"). If that drops the arriving packet itself, it is handed back as the
//!   overflow drop.
//! - Dequeue (`fq_codel_dequeue()`, RFC 8290 §4.2): take the first queue of `new_flows`, or
//!   else of `old_flows`. Its deficit spent (≤ 0), it gets another quantum and moves to the
//!   tail of `old_flows`. Otherwise CoDel dequeues from it (dropping or marking on the way,
//!   with the backlog term measured on the whole discipline, Linux's
//!   `sch->qstats.backlog`); the packet's bytes come off the deficit. A queue found empty
//!   leaves its list — but an empty queue from `new_flows` goes to the tail of `old_flows`
//!   while that is not empty, so a flow cannot starve the old ones by staying "new" (Linux's
//!   variant of RFC 8290 §4.2, which always moves it).
//!
//! Where this model differs from Linux, and why:
//!
//! - The limit is the link's buffer (bytes and/or packets) on wire bytes; Linux counts packets
//!   against `limit` (default 10240, used here when the link sets no buffer) and the skbs'
//!   truesize against `memory_limit` (32 MB), which the path model does not have. When a byte
//!   limit is still exceeded after one batch (a large packet arrived), further batches follow
//!   until the discipline fits; Linux drops one batch per arrival.
//! - CoDel itself differs from Linux as `codel.rs` says (exact control law, ns clock, largest
//!   packet seen instead of the device MTU).
//! - Linux's external classifiers, `skb->priority` overrides and DSCP-selected `ce_threshold`
//!   are not modelled.
//!
//! Cost: no allocation per packet once as many packets as ever waited at once have been held
//! (the flows' queues are chains in one arena, `chains.rs`, whose freed slots are filled
//! again; the two lists are `VecDeque<u32>` of flow indices, reserved for every flow), no map
//! lookup (the multiply-shift hash), and a scan of the per-flow byte counts only on overflow,
//! amortized by the batch drop as in Linux. Serving another flow with every packet, the
//! discipline's cost is in cache misses more than in instructions: each flow's state is one
//! cache line ([`Flow`]), and an arriving packet takes the slot the last one sent left.

use super::backlog::Occupancy;
use super::chains::{prefetch, Chain, Chains};
use super::codel::{CodelParams, CodelSource, CodelVars};
use super::{Aqm, AqmIo, DropCause, Held, LinkContext, QdiscSpec};
use crate::{Nanos, PathPacket};
use std::collections::VecDeque;

/// Linux `fq_codel_init()`: `sch->limit = 10*1024` packets, used when the link sets no buffer.
pub const DEFAULT_LIMIT_PACKETS: u64 = 10 * 1024;
/// Linux `fq_codel_init()`: `q->flows_cnt = 1024`.
pub const DEFAULT_FLOWS: u32 = 1024;
/// Linux's most flows (`fq_codel_change()` refuses more than 65536).
pub const MAX_FLOWS: u32 = 65536;
/// Linux's default quantum, `psched_mtu()` of an Ethernet device: 1500-byte MTU plus its 14-byte
/// header. (Our wire bytes also count FCS, preamble and gap, so a full packet is 1538 bytes
/// here; each flow still sends about one full packet per round.)
pub const DEFAULT_QUANTUM_BYTES: u32 = 1514;
/// Linux's bounds on the quantum (`fq_codel_change()`: `max(256U, quantum)`, at most
/// `FQ_CODEL_QUANTUM_MAX` = 1 << 20).
pub const MIN_QUANTUM_BYTES: u32 = 256;
pub const MAX_QUANTUM_BYTES: u32 = 1 << 20;
/// Linux `fq_codel_init()`: `q->drop_batch_size = 64`.
pub const DEFAULT_DROP_BATCH_PACKETS: u32 = 64;
/// 2^64 / golden ratio: multiplying by it moves every bit of a flow key into the product's top
/// 32 bits (Fibonacci hashing, Knuth TAOCP 6.4), which then serve as the 32-bit flow hash.
pub const FIB_HASH_MUL: u64 = 0x9E37_79B9_7F4A_7C15;

pub(crate) fn default_ecn() -> bool {
    true // Linux fq_codel_init(): q->cparams.ecn = true
}
pub(crate) fn default_quantum_bytes() -> u32 {
    DEFAULT_QUANTUM_BYTES
}
pub(crate) fn default_flows() -> u32 {
    DEFAULT_FLOWS
}
pub(crate) fn default_drop_batch_packets() -> u32 {
    DEFAULT_DROP_BATCH_PACKETS
}

/// One flow queue (Linux `struct fq_codel_flow`): what serving the flow reads and writes, in
/// one cache line (aligned, so that it never straddles two).
#[repr(align(64))]
struct Flow {
    /// Its packets with their arrival times, in `FqCodel::packets`.
    q: Chain,
    /// Bytes it may still send this round (DRR deficit).
    deficit: i64,
    vars: CodelVars,
    /// On `new_flows` or `old_flows` (Linux: `!list_empty(&flow->flowchain)`).
    listed: bool,
}

/// A cache line, as [`Flow`] is laid out for.
const CACHE_LINE_BYTES: usize = 64;
const _: () = assert!(std::mem::size_of::<Flow>() == CACHE_LINE_BYTES);

pub struct FqCodel<P> {
    flows: Vec<Flow>,
    /// Every flow's waiting packets.
    packets: Chains<P>,
    /// Bytes waiting per flow (Linux `q->backlogs[]`), apart from `flows` so that the
    /// overflow scan reads a dense array.
    backlogs: Vec<u64>,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    quantum_bytes: i64,
    drop_batch_packets: u32,
    held: Held,
    params: CodelParams,
}

/// [`CodelSource`] over one flow's queue, keeping the discipline's counts.
struct FlowSource<'a, P> {
    q: &'a mut Chain,
    packets: &'a mut Chains<P>,
    backlog: &'a mut u64,
    held: &'a mut Occupancy,
}

impl<P: PathPacket> CodelSource<P> for FlowSource<'_, P> {
    #[inline]
    fn pop(&mut self) -> Option<(Nanos, P)> {
        let (t, p) = self.packets.pop_front(self.q)?;
        *self.backlog -= p.wire_bytes() as u64;
        self.held.remove(p.wire_bytes());
        Some((t, p))
    }
    #[inline]
    fn backlog_bytes(&self) -> u64 {
        self.held.bytes
    }
}

impl<P: PathPacket> FqCodel<P> {
    pub fn new(spec: &QdiscSpec, ctx: &LinkContext) -> FqCodel<P> {
        let QdiscSpec::FqCodel {
            target_ns,
            interval_ns,
            ce_threshold_ns,
            ecn,
            quantum_bytes,
            flows,
            drop_batch_packets,
        } = *spec
        else {
            panic!("FqCodel built from {spec:?}");
        };
        // Linux refuses a flow count outside 1..=65536 and raises a quantum below 256; the
        // scenario schema states the same bounds, so clamping only guards the arithmetic.
        let n = flows.clamp(1, MAX_FLOWS) as usize;
        let mut new_flows = VecDeque::new();
        let mut old_flows = VecDeque::new();
        new_flows.reserve(n);
        old_flows.reserve(n);
        FqCodel {
            flows: (0..n)
                .map(|_| Flow {
                    q: Chain::default(),
                    deficit: 0,
                    vars: CodelVars::default(),
                    listed: false,
                })
                .collect(),
            packets: Chains::new(),
            backlogs: vec![0; n],
            new_flows,
            old_flows,
            quantum_bytes: quantum_bytes.clamp(MIN_QUANTUM_BYTES, MAX_QUANTUM_BYTES) as i64,
            drop_batch_packets: drop_batch_packets.max(1),
            held: Held::new(ctx.limit, Some(DEFAULT_LIMIT_PACKETS), 1),
            params: CodelParams::new(target_ns, interval_ns, ce_threshold_ns, ecn),
        }
    }

    /// The queue a flow key maps to: Fibonacci hash, then Linux's `reciprocal_scale`.
    #[inline]
    fn bucket(&self, flow_key: u64) -> usize {
        let hash32 = flow_key.wrapping_mul(FIB_HASH_MUL) >> 32;
        ((hash32 * self.flows.len() as u64) >> 32) as usize
    }

    /// Start loading what the next dequeues will read, while the packet just dequeued from
    /// the first flow of `list` is sent: with a quantum near one packet the next dequeue
    /// serves the flow behind it, and the one after that the third. The second flow's line
    /// was asked for by the previous call, so reading its head index here seldom waits.
    /// A hint only: the order of service does not depend on it.
    #[inline]
    fn prefetch_next_flows(&self, from_new: bool) {
        let list = if from_new { &self.new_flows } else { &self.old_flows };
        if let Some(&second) = list.get(1) {
            self.packets.prefetch_head(&self.flows[second as usize].q);
        }
        if let Some(&third) = list.get(2) {
            prefetch(&self.flows[third as usize]);
        }
    }

    /// Linux `fq_codel_drop()`: drop from the head of the queue with the most bytes, up to a
    /// batch or half its bytes. Returns the packet that arrived into queue `arriving` if it
    /// was among them (it is that queue's tail); pushes the others to `dropped`.
    fn drop_from_fattest(
        &mut self,
        arriving: usize,
        dropped: &mut Vec<(P, DropCause)>,
    ) -> Option<P> {
        let (mut idx, mut max) = (0, 0);
        for (i, &b) in self.backlogs.iter().enumerate() {
            if b > max {
                (idx, max) = (i, b);
            }
        }
        if max == 0 {
            // Only zero-byte packets wait: take the longest queue instead.
            let len = |i: usize| self.packets.len(&self.flows[i].q);
            idx = (0..self.flows.len()).max_by_key(|&i| len(i)).unwrap_or(0);
        }
        let threshold = max / 2; // Linux: "drop half of this fat flow backlog"
        let f = &mut self.flows[idx];
        let (mut len, mut n) = (0u64, 0u32);
        let mut own = None;
        while let Some((_, p)) = self.packets.pop_front(&mut f.q) {
            len += p.wire_bytes() as u64;
            n += 1;
            if idx == arriving && f.q.is_empty() {
                own = Some(p);
            } else {
                dropped.push((p, DropCause::Overflow));
            }
            if n >= self.drop_batch_packets || len >= threshold {
                break;
            }
        }
        f.vars.count = f.vars.count.wrapping_add(n);
        self.backlogs[idx] -= len;
        self.held.occupancy.bytes -= len;
        self.held.occupancy.packets -= n as u64;
        self.held.stats.classes[0].drops_overflow += n as u64;
        own
    }
}

impl<P: PathPacket> Aqm<P> for FqCodel<P> {
    fn enqueue(&mut self, now: Nanos, p: P, io: &mut AqmIo<'_, P>) -> Result<(), (P, DropCause)> {
        let idx = self.bucket(p.flow_key());
        let len = p.wire_bytes() as u64;
        let f = &mut self.flows[idx];
        self.packets.push_back(&mut f.q, now, p);
        if !f.listed {
            f.listed = true;
            f.deficit = self.quantum_bytes;
            self.new_flows.push_back(idx as u32);
        }
        self.backlogs[idx] += len;
        self.held.occupancy.add(len as u32);
        let mut own = None;
        while self.held.over_limit() {
            own = own.or(self.drop_from_fattest(idx, io.dropped));
        }
        match own {
            Some(p) => Err((p, DropCause::Overflow)),
            None => {
                self.held.stats.classes[0].enqueued += 1;
                Ok(())
            }
        }
    }

    fn dequeue(&mut self, now: Nanos, io: &mut AqmIo<'_, P>) -> Option<P> {
        loop {
            let (from_new, idx) = match (self.new_flows.front(), self.old_flows.front()) {
                (Some(&i), _) => (true, i as usize),
                (None, Some(&i)) => (false, i as usize),
                (None, None) => return None,
            };
            let f = &mut self.flows[idx];
            let list = if from_new { &mut self.new_flows } else { &mut self.old_flows };
            if f.deficit <= 0 {
                f.deficit += self.quantum_bytes;
                list.pop_front();
                self.old_flows.push_back(idx as u32);
                continue;
            }
            let mut src = FlowSource {
                q: &mut f.q,
                packets: &mut self.packets,
                backlog: &mut self.backlogs[idx],
                held: &mut self.held.occupancy,
            };
            let c = &mut self.held.stats.classes[0];
            if let Some(p) = self.params.dequeue(&mut f.vars, now, &mut src, c, io.dropped) {
                f.deficit -= p.wire_bytes() as i64;
                self.prefetch_next_flows(from_new);
                return Some(p);
            }
            list.pop_front();
            if from_new && !self.old_flows.is_empty() {
                self.old_flows.push_back(idx as u32); // one pass through old_flows first
            } else {
                f.listed = false;
            }
        }
    }

    held_in_field!();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::codel::{DEFAULT_INTERVAL_NS, DEFAULT_TARGET_NS};
    use crate::aqm::testbed::{cbr, merge, Service, Testbed};
    use crate::aqm::AnyAqm;
    use crate::aqm::Limit;
    use crate::{Ecn, TestPacket, TestRng, MS};

    /// FQ-CoDel with Linux's defaults but for the given fields.
    struct Fq {
        target_ns: Nanos,
        ecn: bool,
        quantum_bytes: u32,
        drop_batch_packets: u32,
        limit: Limit,
    }

    impl Default for Fq {
        fn default() -> Fq {
            Fq {
                target_ns: DEFAULT_TARGET_NS,
                ecn: true,
                quantum_bytes: DEFAULT_QUANTUM_BYTES,
                drop_batch_packets: DEFAULT_DROP_BATCH_PACKETS,
                limit: Limit::default(),
            }
        }
    }

    impl Fq {
        fn build(self) -> FqCodel<TestPacket> {
            let spec = QdiscSpec::FqCodel {
                target_ns: self.target_ns,
                interval_ns: DEFAULT_INTERVAL_NS,
                ce_threshold_ns: None,
                ecn: self.ecn,
                quantum_bytes: self.quantum_bytes,
                flows: DEFAULT_FLOWS,
                drop_batch_packets: self.drop_batch_packets,
            };
            FqCodel::new(&spec, &LinkContext { limit: self.limit, ..Default::default() })
        }
    }

    fn pkt(flow: u64, bytes: u32, seq: u64) -> TestPacket {
        TestPacket { bytes, ecn: Ecn::NotEct, flow, seq }
    }

    /// Flows 1, 2 and 3 hash to different queues (the tests rely on it).
    #[test]
    fn test_flows_hash_apart_and_keys_spread() {
        let q = Fq::default().build();
        let b: Vec<usize> = (1..=3).map(|k| q.bucket(k)).collect();
        assert!(b[0] != b[1] && b[1] != b[2] && b[0] != b[2], "{b:?}");
        // 10000 consecutive keys fill the 1024 queues about evenly (multiply-shift hashing).
        let mut load = vec![0u32; DEFAULT_FLOWS as usize];
        (0..10_000u64).for_each(|k| load[q.bucket(k)] += 1);
        let (lo, hi) = (load.iter().min().unwrap(), load.iter().max().unwrap());
        assert!(*lo >= 2 && *hi <= 20, "queue loads {lo}..{hi}");
    }

    #[test]
    fn a_sparse_flow_is_served_before_a_bulk_backlog() {
        let bulk: Vec<_> = (0..20).map(|s| (0, pkt(1, 1000, s))).collect();
        let sparse = vec![(5 * MS + MS / 2, pkt(2, 1000, 100))];
        let mut tb = Testbed::new(Fq::default().build(), Service::PerPacketNs(MS));
        tb.run(merge(vec![bulk, sparse]));
        tb.drain();
        let order: Vec<u64> = tb.sent.iter().map(|s| s.pkt.seq).collect();
        // Six bulk packets left by 5 ms; the sparse one, arriving at 5.5 ms, goes next (a
        // FIFO would send it 20th).
        assert_eq!(order[..8], [0, 1, 2, 3, 4, 5, 100, 6]);
        assert_eq!(tb.sent[6].at_ns, 6 * MS);
        assert_eq!(tb.q.packets(), 0);
    }

    /// Serve two backlogged flows (packets of `a` and `b` bytes); check the bytes each has
    /// sent differ by less than two quanta and a packet at every dequeue while both wait.
    fn drr_shares(a: u32, b: u32, quantum_bytes: u32) {
        let mut q = Fq { target_ns: 10_000 * MS, quantum_bytes, ..Fq::default() }.build();
        let (mut rng, mut dropped) = (TestRng(1), Vec::new());
        for s in 0..(300_000 / a as u64) {
            q.enqueue(0, pkt(1, a, s), &mut AqmIo::new(&mut rng, &mut dropped)).unwrap();
        }
        for s in 0..(300_000 / b as u64) {
            q.enqueue(0, pkt(2, b, s), &mut AqmIo::new(&mut rng, &mut dropped)).unwrap();
        }
        let mut sent = [0i64; 2];
        let bound = 2 * quantum_bytes as i64 + a.max(b) as i64;
        while let Some(p) = q.dequeue(0, &mut AqmIo::new(&mut rng, &mut dropped)) {
            sent[p.flow as usize - 1] += p.bytes as i64;
            if sent[0] < 280_000 && sent[1] < 280_000 {
                assert!((sent[0] - sent[1]).abs() <= bound, "{sent:?} (quantum {quantum_bytes})");
            }
        }
        assert_eq!(sent, [300_000, 300_000]);
        assert!(dropped.is_empty());
    }

    #[test]
    fn backlogged_flows_get_equal_bytes_whatever_their_packet_sizes() {
        drr_shares(1500, 300, DEFAULT_QUANTUM_BYTES);
        drr_shares(1500, 100, 300);
        drr_shares(600, 1000, 5000);
    }

    #[test]
    fn overflow_drops_half_the_fattest_queue_from_its_head() {
        let (mut rng, mut dropped) = (TestRng(1), Vec::new());
        let limit = Limit { bytes: None, packets: Some(10) };
        for (batch, want) in [(DEFAULT_DROP_BATCH_PACKETS, vec![0, 1, 2, 3]), (1, vec![0])] {
            let mut q = Fq { drop_batch_packets: batch, limit, ..Fq::default() }.build();
            for s in 0..8 {
                q.enqueue(0, pkt(1, 1000, s), &mut AqmIo::new(&mut rng, &mut dropped)).unwrap();
            }
            for s in 100..103 {
                q.enqueue(0, pkt(2, 1000, s), &mut AqmIo::new(&mut rng, &mut dropped)).unwrap();
            }
            // The 11th packet (flow 2's) overflows; flow 1 holds the most bytes.
            let got: Vec<u64> = dropped
                .drain(..)
                .map(|(p, c)| {
                    assert_eq!((p.flow, c), (1, DropCause::Overflow));
                    p.seq
                })
                .collect();
            assert_eq!(got, want, "batch {batch}");
            assert_eq!(q.packets(), 11 - want.len() as u64);
            assert_eq!(q.bytes(), q.packets() * 1000);
            let s = &q.stats().classes[0];
            assert_eq!((s.drops_overflow, s.enqueued), (want.len() as u64, 11));
            // Linux adds the drops to the fat flow's CoDel count.
            assert_eq!(q.flows[q.bucket(1)].vars.count, want.len() as u32);
        }
    }

    #[test]
    fn overflow_hands_back_the_arrival_when_its_queue_is_the_fattest() {
        let (mut rng, mut dropped) = (TestRng(1), Vec::new());
        let mut q = Fq { limit: Limit { bytes: None, packets: Some(1) }, ..Fq::default() }.build();
        q.enqueue(0, pkt(1, 100, 0), &mut AqmIo::new(&mut rng, &mut dropped)).unwrap();
        let r = q.enqueue(0, pkt(2, 1500, 1), &mut AqmIo::new(&mut rng, &mut dropped));
        assert_eq!(r.map_err(|(p, c)| (p.seq, c)), Err((1, DropCause::Overflow)));
        assert!(dropped.is_empty());
        assert_eq!((q.packets(), q.bytes()), (1, 100));
        // A byte limit: a large arrival may need more than one batch.
        let limit = Limit { bytes: Some(5000), packets: None };
        let mut q = Fq { drop_batch_packets: 1, limit, ..Fq::default() }.build();
        for s in 0..5 {
            q.enqueue(0, pkt(1, 1000, s), &mut AqmIo::new(&mut rng, &mut dropped)).unwrap();
        }
        q.enqueue(0, pkt(2, 2500, 9), &mut AqmIo::new(&mut rng, &mut dropped)).unwrap();
        let seqs: Vec<u64> = dropped.iter().map(|(p, _)| p.seq).collect();
        assert_eq!((seqs, q.bytes()), (vec![0, 1, 2], 4500));
        // A flow emptied by overflow drops still leaves the lists cleanly.
        let out: Vec<u64> =
            std::iter::from_fn(|| q.dequeue(0, &mut AqmIo::new(&mut rng, &mut dropped)))
                .map(|p| p.seq)
                .collect();
        // Flow 1 is still new with 514 bytes of its quantum left after packet 3: it sends 4.
        assert_eq!(out, [3, 4, 9]);
        assert_eq!((q.packets(), q.bytes()), (0, 0));
    }

    /// A bulk flow at 1.25× the link rate beside a sparse flow (one small packet each 10 ms),
    /// on an 8 Mbit/s link (a 1000-byte packet takes 1 ms).
    fn bulk_and_sparse(bulk_ecn: Ecn) -> Testbed<FqCodel<TestPacket>> {
        let bulk = cbr(1, 1000, bulk_ecn, 0, 800 * MS, 800_000, 0);
        let sparse = cbr(2, 100, Ecn::NotEct, 0, 800 * MS, 10 * MS, 10_000);
        let mut tb = Testbed::new(Fq::default().build(), Service::RateBps(8_000_000));
        tb.run(merge(vec![bulk, sparse]));
        tb.drain();
        tb
    }

    #[test]
    fn each_flow_has_its_own_codel() {
        let tb = bulk_and_sparse(Ecn::NotEct);
        // The bulk flow builds a standing queue and CoDel drops from it...
        assert!(tb.dropped.len() >= 10, "{} drops", tb.dropped.len());
        assert!(tb.dropped.iter().all(|d| d.pkt.flow == 1 && d.cause == DropCause::Aqm));
        // ...while the sparse flow's packets all pass, each within one bulk packet's service
        // of its arrival (arrivals at multiples of 10 ms, seq 10000 + k). The first arrives
        // when the bulk flow is new too, with part of its first quantum left: one more.
        let sparse: Vec<_> = tb.sent.iter().filter(|s| s.pkt.flow == 2).collect();
        assert_eq!(sparse.len(), 80);
        for s in sparse {
            let arrived = (s.pkt.seq - 10_000) * 10 * MS;
            let bound = if arrived == 0 { 2 * MS } else { MS };
            assert!(s.at_ns - arrived <= bound, "seq {} waited {}", s.pkt.seq, s.at_ns - arrived);
        }
        // ECN on (the default): an ECN-capable bulk flow is marked instead.
        let tb = bulk_and_sparse(Ecn::Ect0);
        assert!(tb.dropped.is_empty());
        let marks = tb.sent.iter().filter(|s| s.pkt.ecn == Ecn::Ce).count() as u64;
        assert!(marks >= 10);
        assert_eq!(tb.q.stats().classes[0].ce_marks, marks);
    }

    #[test]
    fn one_flow_behaves_as_codel() {
        // Same drops, same departures as CoDel on the same arrivals (a heavy then light load).
        let heavy = cbr(7, 1000, Ecn::NotEct, 0, 700 * MS, 800_000, 0);
        let arrivals =
            merge(vec![heavy, cbr(7, 1000, Ecn::NotEct, 700 * MS, 1400 * MS, 2 * MS, 875)]);
        let codel = QdiscSpec::Codel {
            target_ns: DEFAULT_TARGET_NS,
            interval_ns: DEFAULT_INTERVAL_NS,
            ce_threshold_ns: None,
            ecn: false,
        };
        let mut a =
            Testbed::new(Fq { ecn: false, ..Fq::default() }.build(), Service::PerPacketNs(MS));
        let q: AnyAqm<TestPacket> = AnyAqm::build(&codel, &LinkContext::default());
        let mut b = Testbed::new(q, Service::PerPacketNs(MS));
        a.run(arrivals.iter().cloned());
        b.run(arrivals.iter().cloned());
        a.drain();
        b.drain();
        let key = |tb: &[crate::aqm::testbed::Sent]| {
            tb.iter().map(|s| (s.at_ns, s.pkt.seq)).collect::<Vec<_>>()
        };
        assert!(a.dropped.len() >= 12);
        assert_eq!(key(&a.sent), key(&b.sent));
        let drops = |d: &[crate::aqm::testbed::Dropped]| {
            d.iter().map(|d| (d.at_ns, d.pkt.seq)).collect::<Vec<_>>()
        };
        assert_eq!(drops(&a.dropped), drops(&b.dropped));
    }

    #[test]
    fn spec_defaults_are_linux_and_unknown_fields_are_refused() {
        let fq: QdiscSpec = serde_json::from_str(r#"{"kind": "fq_codel"}"#).unwrap();
        let linux_fq = QdiscSpec::FqCodel {
            target_ns: 5 * MS,
            interval_ns: 100 * MS,
            ce_threshold_ns: None,
            ecn: true,
            quantum_bytes: 1514,
            flows: 1024,
            drop_batch_packets: 64,
        };
        assert_eq!(fq, linux_fq);
        let codel: QdiscSpec = serde_json::from_str(r#"{"kind": "codel"}"#).unwrap();
        let linux_codel = QdiscSpec::Codel {
            target_ns: 5 * MS,
            interval_ns: 100 * MS,
            ce_threshold_ns: None,
            ecn: false,
        };
        assert_eq!(codel, linux_codel);
        let set: QdiscSpec =
            serde_json::from_str(r#"{"kind": "fq_codel", "ce_threshold_ns": 1000}"#).unwrap();
        assert!(matches!(set, QdiscSpec::FqCodel { ce_threshold_ns: Some(1000), .. }));
        assert!(serde_json::from_str::<QdiscSpec>(r#"{"kind": "codel", "target": 1}"#).is_err());
        let q: AnyAqm<TestPacket> = AnyAqm::build(&codel, &LinkContext::default());
        assert!(matches!(q, AnyAqm::Codel(_)));
        let q: AnyAqm<TestPacket> = AnyAqm::build(&fq, &LinkContext::default());
        assert!(matches!(q, AnyAqm::FqCodel(_)));
        // No link buffer: Linux's default limit.
        let q = FqCodel::<TestPacket>::new(&fq, &LinkContext::default());
        assert_eq!(q.held.limit().packets, Some(DEFAULT_LIMIT_PACKETS));
    }
}
