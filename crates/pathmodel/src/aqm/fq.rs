//! Linux `fq` (`net/sched/sch_fq.c`), the host qdisc BBR is deployed with: per-flow queues,
//! each flow paced, served by deficit round robin among the flows whose time has come.
//!
//! The model, following Linux's functions:
//!
//! - Classify (`fq_classify()`): one queue per flow key (Linux: per socket). A flow seen for
//!   the first time starts with `initial_quantum` of credit (a burst for new flows).
//! - Enqueue (`fq_enqueue()`): over the discipline's limit (Linux `limit`, 10000 packets) or
//!   the flow's (`flow_limit`, 100) the packet is dropped. Its time to send is the earliest
//!   departure time its sender stamped (EDT, `skb->tstamp`; [`PathPacket::time_to_send_ns`]),
//!   or its arrival if it has none; a stamp more than `horizon` ahead is dropped
//!   (`fq_packet_beyond_horizon()`, `horizon_drop` on). A flow's packets wait sorted by their
//!   time to send (`flow_queue_add()`). A flow on no list (detached) joins the tail of
//!   `new_flows`, and if it was idle longer than `flow_refill_delay` its credit is raised to
//!   at least one quantum.
//! - Dequeue (`fq_dequeue()`): first throttled flows whose time has come go to the tail of
//!   `old_flows` (`fq_check_throttled()`). Then take the first flow of `new_flows`, else of
//!   `old_flows`. Credit spent (≤ 0): it gets a quantum more and moves to the tail of
//!   `old_flows`. Its head packet not due yet (the later of the packet's time to send and the
//!   flow's `time_next_packet`): the flow is throttled (a tree ordered by that time; here a
//!   heap) and the next flow is tried. An empty flow from `new_flows` goes to the tail of
//!   `old_flows` while that is not empty (no starvation of old flows), else it is detached and
//!   its idle time starts. A packet that leaves later than it was due by more than
//!   `ce_threshold` is CE-marked if ECN-capable.
//! - Pacing (`fq_dequeue()`, after the packet is chosen): the packet's bytes come off the
//!   flow's credit. A packet with an EDT stamp is paced by its sender; the flow's own rate is
//!   then only `maxrate`. A packet without one is paced at its socket's pacing rate
//!   ([`PathPacket::pacing_rate_bytes_per_s`], capped by `maxrate`): below 550 kbit/s every
//!   packet is spaced, above, a flow spends its credit first and then waits a quantum's worth
//!   (`plen = max(plen, quantum)`). The wait, len/rate capped at 1 s, is shortened by half at
//!   most for the lateness of the previous release (timer drift), so the flow's next packet may
//!   leave at `now + len`.
//! - Nothing due while packets wait: `dequeue` returns None and [`Aqm::next_ready_ns`] says
//!   when the first throttled flow is (Linux arms its watchdog at `time_next_delayed_flow`).
//!
//! Where this model differs from Linux, and why:
//!
//! - A packet is what the caller enqueues: Linux's skbs hold up to 64 KB of TSO segments, the
//!   simulator enqueues segments, so `limit` and `flow_limit` count segments there.
//! - Flows live as long as the discipline (no garbage collection of detached flows), and
//!   `skb->priority` bands, `orphan_mask` and the low-rate threshold's setting are not modelled.

use super::{Aqm, AqmIo, DropCause, Held, LinkContext, QdiscSpec};
use crate::{Nanos, PathPacket};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};

/// Linux `fq_init()`: `sch->limit = 10000` packets, when the link sets no buffer.
pub const DEFAULT_LIMIT_PACKETS: u64 = 10_000;
/// Linux `fq_init()`: `q->flow_plimit = 100` packets per flow.
pub const DEFAULT_FLOW_LIMIT_PACKETS: u32 = 100;
/// Linux `fq_init()`: `q->quantum = 2 * psched_mtu()`, 2 × 1514 bytes on Ethernet.
pub const DEFAULT_QUANTUM_BYTES: u32 = 2 * 1514;
/// Linux `fq_init()`: `q->initial_quantum = 10 * psched_mtu()`.
pub const DEFAULT_INITIAL_QUANTUM_BYTES: u32 = 10 * 1514;
/// Linux `fq_init()`: `q->flow_refill_delay = msecs_to_jiffies(40)`.
pub const DEFAULT_FLOW_REFILL_DELAY_NS: u64 = 40_000_000;
/// Linux `fq_init()`: `q->horizon = 10 * NSEC_PER_SEC`.
pub const DEFAULT_HORIZON_NS: u64 = 10_000_000_000;
/// Linux `fq_init()`: `q->low_rate_threshold = 550000 / 8` bytes/s: slower flows are paced per
/// packet, faster ones a quantum at a time.
const LOW_RATE_THRESHOLD_BYTES_PER_S: u64 = 550_000 / 8;
/// `fq_dequeue()` clamps one packet's pacing delay to 1 s ("providers of too big packets
/// should be fixed").
const MAX_PACKET_DELAY_NS: u64 = 1_000_000_000;
const NSEC_PER_SEC: u64 = 1_000_000_000;

pub fn default_quantum_bytes() -> u32 {
    DEFAULT_QUANTUM_BYTES
}
pub fn default_initial_quantum_bytes() -> u32 {
    DEFAULT_INITIAL_QUANTUM_BYTES
}
pub fn default_flow_refill_delay_ns() -> u64 {
    DEFAULT_FLOW_REFILL_DELAY_NS
}
pub fn default_flow_limit_packets() -> u32 {
    DEFAULT_FLOW_LIMIT_PACKETS
}
pub fn default_horizon_ns() -> u64 {
    DEFAULT_HORIZON_NS
}

/// Which list a flow is on (Linux: `fq_flow_is_detached()`, `fq_flow_is_throttled()`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum On {
    Detached,
    New,
    Old,
    Throttled,
}

struct Flow<P> {
    /// Waiting packets with their time to send, sorted by it.
    q: VecDeque<(Nanos, Nanos, P)>,
    credit: i64,
    /// The flow's next packet leaves no earlier (Linux `f->time_next_packet`).
    time_next_packet: Nanos,
    /// When it was detached (Linux `f->age`), for the refill delay.
    idle_since_ns: Nanos,
    on: On,
}

pub struct Fq<P> {
    flows: Vec<Flow<P>>,
    by_key: HashMap<u64, u32>,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    /// Throttled flows by `time_next_packet` (Linux's `delayed` rb-tree).
    throttled: BinaryHeap<Reverse<(Nanos, u32)>>,
    quantum: i64,
    initial_quantum: i64,
    flow_refill_delay_ns: Nanos,
    maxrate_bytes_per_s: Option<u64>,
    ce_threshold_ns: Option<Nanos>,
    flow_limit: u32,
    horizon_ns: Nanos,
    held: Held,
}

impl<P: PathPacket> Fq<P> {
    pub fn new(spec: &QdiscSpec, ctx: &LinkContext) -> Fq<P> {
        let QdiscSpec::Fq {
            quantum_bytes,
            initial_quantum_bytes,
            flow_refill_delay_ns,
            maxrate_bps,
            ce_threshold_ns,
            flow_limit_packets,
            horizon_ns,
        } = *spec
        else {
            panic!("Fq built from {spec:?}");
        };
        Fq {
            flows: Vec::new(),
            by_key: HashMap::new(),
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            throttled: BinaryHeap::new(),
            quantum: quantum_bytes as i64,
            initial_quantum: initial_quantum_bytes as i64,
            flow_refill_delay_ns,
            maxrate_bytes_per_s: maxrate_bps.map(|r| (r / 8).max(1)),
            ce_threshold_ns,
            flow_limit: flow_limit_packets.max(1),
            horizon_ns,
            // A schedule's `buffer` replaces the limit as it stands (no default then).
            held: Held::new(ctx.limit.or_packets(DEFAULT_LIMIT_PACKETS), None, 1),
        }
    }

    /// The flow of `key`, created with the initial quantum of credit (`fq_classify()`).
    fn classify(&mut self, key: u64) -> u32 {
        if let Some(&i) = self.by_key.get(&key) {
            return i;
        }
        let i = self.flows.len() as u32;
        self.flows.push(Flow {
            q: VecDeque::new(),
            credit: self.initial_quantum,
            time_next_packet: 0,
            idle_since_ns: 0,
            on: On::Detached,
        });
        self.by_key.insert(key, i);
        i
    }

    /// Throttled flows whose time has come join the tail of `old_flows`.
    fn check_throttled(&mut self, now: Nanos) {
        while let Some(&Reverse((t, i))) = self.throttled.peek() {
            if t > now {
                break;
            }
            self.throttled.pop();
            self.flows[i as usize].on = On::Old;
            self.old_flows.push_back(i);
        }
    }

    /// The pacing that follows a packet of `plen` bytes leaving flow `f` at `now`.
    fn pace(&mut self, f: usize, now: Nanos, plen: u32, edt: bool, socket_rate: Option<u64>) {
        let fl = &mut self.flows[f];
        let mut plen = plen as u64;
        let mut rate = self.maxrate_bytes_per_s;
        if !edt {
            rate = match (socket_rate, rate) {
                (Some(s), Some(m)) => Some(s.min(m)),
                (s, m) => s.or(m),
            };
            let Some(r) = rate else { return };
            if r <= LOW_RATE_THRESHOLD_BYTES_PER_S {
                fl.credit = 0;
            } else {
                plen = plen.max(self.quantum as u64);
                if fl.credit > 0 {
                    return;
                }
            }
        }
        let Some(r) = rate else { return };
        let mut len = (plen * NSEC_PER_SEC / r.max(1)).min(MAX_PACKET_DELAY_NS);
        if fl.time_next_packet > 0 {
            len -= (len / 2).min(now.saturating_sub(fl.time_next_packet));
        }
        fl.time_next_packet = now + len;
    }
}

impl<P: PathPacket> Aqm<P> for Fq<P> {
    fn enqueue(&mut self, now: Nanos, p: P, _io: &mut AqmIo<'_, P>) -> Result<(), (P, DropCause)> {
        let p = self.held.tail_drop(0, p)?;
        let time_to_send = match p.time_to_send_ns() {
            Some(t) if t > now + self.horizon_ns => {
                self.held.stats.classes[0].drops_aqm += 1;
                return Err((p, DropCause::Aqm));
            }
            Some(t) => t.max(now),
            None => now,
        };
        let i = self.classify(p.flow_key());
        let (quantum, refill) = (self.quantum, self.flow_refill_delay_ns);
        let fl = &mut self.flows[i as usize];
        if fl.q.len() >= self.flow_limit as usize {
            self.held.stats.classes[0].drops_overflow += 1;
            return Err((p, DropCause::Overflow));
        }
        if fl.on == On::Detached {
            self.new_flows.push_back(i);
            fl.on = On::New;
            if now > fl.idle_since_ns + refill {
                fl.credit = fl.credit.max(quantum);
            }
        }
        // Sorted by time to send; an earlier stamp (a probe sent unpaced) goes before later ones.
        let at = if fl.q.back().is_none_or(|b| b.0 <= time_to_send) {
            fl.q.len()
        } else {
            fl.q.partition_point(|e| e.0 <= time_to_send)
        };
        self.held.occupancy.add(p.wire_bytes());
        self.held.stats.classes[0].enqueued += 1;
        fl.q.insert(at, (time_to_send, now, p));
        Ok(())
    }

    fn dequeue(&mut self, now: Nanos, _io: &mut AqmIo<'_, P>) -> Option<P> {
        self.check_throttled(now);
        loop {
            let from_new = !self.new_flows.is_empty();
            let &i = if from_new { self.new_flows.front()? } else { self.old_flows.front()? };
            let f = i as usize;
            let fl = &mut self.flows[f];
            if fl.credit <= 0 {
                fl.credit += self.quantum;
                fl.on = On::Old;
                self.pop_list(from_new);
                self.old_flows.push_back(i);
                continue;
            }
            let Some(&(t_send, _, _)) = fl.q.front() else {
                self.pop_list(from_new);
                if from_new && !self.old_flows.is_empty() {
                    self.flows[f].on = On::Old;
                    self.old_flows.push_back(i);
                } else {
                    self.flows[f].on = On::Detached;
                    self.flows[f].idle_since_ns = now;
                }
                continue;
            };
            let due = t_send.max(fl.time_next_packet);
            if now < due {
                fl.time_next_packet = due;
                fl.on = On::Throttled;
                self.pop_list(from_new);
                self.throttled.push(Reverse((due, i)));
                continue;
            }
            let (_, entered, mut p) = fl.q.pop_front().expect("a head packet");
            let plen = p.wire_bytes();
            fl.credit -= plen as i64;
            self.held.occupancy.remove(plen);
            let c = &mut self.held.stats.classes[0];
            if self.ce_threshold_ns.is_some_and(|k| now - due > k) && p.ecn().is_ect() {
                p.set_ce();
                c.ce_marks += 1;
            }
            c.count_dequeue(now - entered);
            let edt = p.time_to_send_ns().is_some();
            self.pace(f, now, plen, edt, p.pacing_rate_bytes_per_s());
            return Some(p);
        }
    }

    fn holds_packets_back(&self) -> bool {
        true // flows paced to leave later wait with the transmitter free
    }

    fn next_ready_ns(&self) -> Option<Nanos> {
        if self.new_flows.is_empty() && self.old_flows.is_empty() {
            self.throttled.peek().map(|Reverse((t, _))| *t)
        } else {
            None
        }
    }

    held_in_field!();
}

impl<P> Fq<P> {
    fn pop_list(&mut self, from_new: bool) {
        if from_new {
            self.new_flows.pop_front();
        } else {
            self.old_flows.pop_front();
        }
    }
}

#[cfg(test)]
#[path = "fq_tests.rs"]
mod tests;
