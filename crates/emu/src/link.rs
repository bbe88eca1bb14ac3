//! One direction of an emulated link, the pure model (no I/O, no clock: time is passed in):
//!
//! ```text
//! arrival -> Bernoulli loss -> queue discipline (pathmodel::aqm) -> transmitter at the rate
//!         -> one-way delay -> delivery
//! ```
//!
//! The queue is the shared path model's discipline ([`AnyAqm`], the same code the simulator
//! runs), holding an [`Entry`] per packet: the caller's payload (a packet-pool slot) and what the
//! discipline needs from the IP header, read once on arrival (wire size, ECN codepoint, flow
//! key). The discipline decides at enqueue (tail drop, step marking, PIE) and at dequeue (CoDel);
//! either way a CE decision is recorded in the entry and travels with the packet to
//! [`Departure::ce`], so the caller sets CE in the bytes when the packet leaves.
//!
//! Service model: the transmitter takes the next packet from the discipline as soon as it is
//! free — at the previous packet's serialization end, not at the event loop's (later) wake-up —
//! so the sojourn a discipline measures is the wait before service, and back-to-back packets
//! keep the exact rate whatever the loop's latency. The packet being serialized has left the
//! discipline: step ECN thresholds count only what waits, as the simulator's do. The buffer
//! limit (`limit_bytes`/`limit_packets`) keeps its documented meaning, queued + in service: the
//! discipline's limit is lowered by the packet in service while there is one.

use std::collections::VecDeque;

use pathmodel::aqm::{AnyAqm, Aqm, DropCause, Limit, LinkContext, QdiscSpec, SojournHist};
use pathmodel::{Ecn, PathPacket};

use crate::XorShift64Star;

/// One direction of an emulated link.
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkParams {
    /// Serialization rate in bit/s; 0 = infinitely fast (a pure delay line).
    #[serde(default)]
    pub rate_bps: u64,
    /// One-way propagation delay added after serialization.
    #[serde(default)]
    pub delay_ns: u64,
    /// Bernoulli loss probability applied on arrival, before the buffer.
    #[serde(default)]
    pub loss: f64,
    /// Buffer limit in wire bytes (queued + in service); None = unlimited. Every discipline
    /// tail-drops beyond it.
    #[serde(default)]
    pub limit_bytes: Option<u64>,
    /// Buffer limit in packets (queued + in service); None = unlimited.
    #[serde(default)]
    pub limit_packets: Option<u64>,
    /// Drop-tail FIFO only: mark ECN-capable packets CE when more than this many bytes wait on
    /// arrival (DCTCP's K). "Wait" excludes the packet in service, as the simulator counts.
    #[serde(default)]
    pub ecn_threshold_bytes: Option<u64>,
    /// The same threshold in packets (a packet is marked if either threshold is exceeded).
    #[serde(default)]
    pub ecn_threshold_packets: Option<u64>,
    /// Bytes added to each IP packet's length for serialization and buffer accounting
    /// (38 = Ethernet header + FCS + preamble + inter-frame gap, as the simulator charges).
    #[serde(default)]
    pub overhead_bytes: u32,
    /// The queue discipline, as a scenario names it (`{"kind": "droptail"}` when absent).
    #[serde(default)]
    pub qdisc: QdiscSpec,
}

impl LinkParams {
    pub fn delay_line(delay_ns: u64) -> Self {
        LinkParams {
            rate_bps: 0,
            delay_ns,
            loss: 0.0,
            limit_bytes: None,
            limit_packets: None,
            ecn_threshold_bytes: None,
            ecn_threshold_packets: None,
            overhead_bytes: 0,
            qdisc: QdiscSpec::default(),
        }
    }

    fn limit(&self) -> Limit {
        Limit { bytes: self.limit_bytes, packets: self.limit_packets }
    }
}

/// Why the link handed a packet back on arrival.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Random (Bernoulli) loss.
    Lost,
    /// Refused by the queue discipline (buffer overflow, or PIE's/DualPI2's drop at enqueue).
    Dropped(DropCause),
}

/// What the link needs to know of an arriving packet (read from its IP header by the caller).
#[derive(Clone, Copy, Debug)]
pub struct Arrival {
    /// IP packet length (the link adds `overhead_bytes`).
    pub ip_len: u32,
    /// The ECN codepoint in the IP header.
    pub ecn: Ecn,
    /// A hash of the packet's 5-tuple ([`crate::flow_key`]).
    pub flow_key: u64,
    /// The sender host it came from or goes to (per-origin counters).
    pub origin: u16,
}

/// A packet in the link's queue discipline.
pub struct Entry<T> {
    payload: T,
    wire: u32,
    origin: u16,
    ecn: Ecn,
    flow_key: u64,
    /// The discipline set CE: the caller must set it in the packet's bytes.
    marked: bool,
    /// L4S by its codepoint on arrival (ECT(1) or CE: DualPI2's classifier, RFC 9332 §2.3).
    l4s: bool,
    enqueued_ns: u64,
}

impl<T> PathPacket for Entry<T> {
    fn wire_bytes(&self) -> u32 {
        self.wire
    }
    fn ecn(&self) -> Ecn {
        self.ecn
    }
    fn set_ce(&mut self) {
        self.ecn = Ecn::Ce;
        self.marked = true;
    }
    fn flow_key(&self) -> u64 {
        self.flow_key
    }
}

/// A packet whose delivery time has come.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Departure<T> {
    pub payload: T,
    /// Its scheduled delivery time (serialization end + delay), ≤ the time it was popped.
    pub due_ns: u64,
    pub origin: u16,
    /// The queue marked it: set CE in its IP header.
    pub ce: bool,
}

/// Cumulative counters (since the last [`Link::reset_counters`]) and the current interval's
/// integrals and sojourn histograms (since the last [`Link::sample`]).
#[derive(Clone, Debug, Default)]
pub struct LinkStats {
    pub rx_pkts: u64,
    /// Packets the queue discipline dropped, all causes (`drops_overflow + drops_aqm`).
    pub drops: u64,
    /// Tail drops at the buffer limit.
    pub drops_overflow: u64,
    /// Drops the discipline chose (CoDel's control law, PIE's or DualPI2's probability).
    pub drops_aqm: u64,
    pub random_losses: u64,
    pub ce_marks: u64,
    pub tx_pkts: u64,
    pub tx_bytes: u64,
    // interval
    occ_integral: u128,
    max_occ_bytes: u64,
    busy_ns: u64,
    last_change_ns: u64,
    interval_start_ns: u64,
    /// Sojourns of the packets that entered service in the interval: all, and the L4S class.
    sojourn: SojournHist,
    l4s_sojourn: SojournHist,
}

/// One sample of a link's queue (a row of the `queue` table). Counters are cumulative since the
/// run's start; occupancy integrals and sojourn statistics are over the interval since the
/// previous sample (NaN when no packet entered service in it).
#[derive(Clone, Debug, PartialEq)]
pub struct QueueSample {
    pub t_ns: u64,
    pub occupancy_bytes: u64,
    pub occupancy_pkts: u64,
    pub mean_occupancy_bytes: f64,
    pub max_occupancy_bytes: u64,
    pub drops: u64,
    pub drops_overflow: u64,
    pub drops_aqm: u64,
    pub random_losses: u64,
    pub ce_marks: u64,
    pub tx_bytes: u64,
    pub utilization: f64,
    pub sojourn_mean_ns: f64,
    pub sojourn_p50_ns: f64,
    pub sojourn_p99_ns: f64,
    /// The L4S class's sojourns (two-class disciplines: DualPI2; NaN for the others).
    pub l4s_sojourn_mean_ns: f64,
    pub l4s_sojourn_p50_ns: f64,
    pub l4s_sojourn_p99_ns: f64,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct OriginCounters {
    pub rx_pkts: u64,
    /// Queue drops, all causes.
    pub drops: u64,
    pub random_losses: u64,
    pub ce_marks: u64,
}

struct InService<T> {
    entry: Entry<T>,
    done_ns: u64,
}

/// A link direction carrying payloads of type `T` (the emulator uses packet-pool slot indices).
pub struct Link<T> {
    pub p: LinkParams,
    rng: XorShift64Star,
    aqm: AnyAqm<Entry<T>>,
    /// The packet being serialized, until `done_ns`.
    in_service: Option<InService<T>>,
    /// Fractional nanoseconds of serialization carried between packets (exact long-run rate).
    carry: u64,
    /// Serialized packets in propagation: (delivery time, payload, origin, CE to set).
    delay: VecDeque<(u64, T, u16, bool)>,
    /// What the discipline drops inside enqueue/dequeue, before it is counted and recycled.
    aqm_dropped: Vec<(Entry<T>, DropCause)>,
    /// Payloads dropped by the discipline, for the caller to recycle ([`Link::drain_dropped`]).
    dropped: Vec<T>,
    pub stats: LinkStats,
    pub per_origin: Vec<OriginCounters>,
}

impl<T> Link<T> {
    pub fn new(p: LinkParams, seed: u64) -> Self {
        let ctx = LinkContext {
            rate_bps: p.rate_bps,
            limit: p.limit(),
            ecn_threshold_bytes: p.ecn_threshold_bytes,
            ecn_threshold_packets: p.ecn_threshold_packets,
        };
        Link {
            aqm: AnyAqm::build(&p.qdisc, &ctx),
            p,
            rng: XorShift64Star::new(seed),
            in_service: None,
            carry: 0,
            delay: VecDeque::new(),
            aqm_dropped: Vec::new(),
            dropped: Vec::new(),
            stats: LinkStats::default(),
            per_origin: Vec::new(),
        }
    }

    /// Serialization time of `wire` bytes at the rate, carrying the remainder.
    pub fn ser_ns(&mut self, wire: u32) -> u64 {
        if self.p.rate_bps == 0 {
            return 0;
        }
        let num = wire as u128 * 8 * 1_000_000_000 + self.carry as u128;
        let r = self.p.rate_bps as u128;
        self.carry = (num % r) as u64;
        (num / r) as u64
    }

    /// Bytes queued and in service.
    pub fn occupancy_bytes(&self) -> u64 {
        self.aqm.bytes() + self.in_service.as_ref().map_or(0, |s| s.entry.wire as u64)
    }
    /// Packets queued and in service.
    pub fn occupancy_pkts(&self) -> u64 {
        self.aqm.packets() + self.in_service.is_some() as u64
    }
    pub fn in_propagation(&self) -> usize {
        self.delay.len()
    }

    /// Payloads the queue discipline dropped since the last call (the caller frees them).
    pub fn drain_dropped(&mut self) -> std::vec::Drain<'_, T> {
        self.dropped.drain(..)
    }

    fn origin(&mut self, o: u16) -> &mut OriginCounters {
        let i = o as usize;
        if self.per_origin.len() <= i {
            self.per_origin.resize(i + 1, OriginCounters::default());
        }
        &mut self.per_origin[i]
    }

    fn account_occ(&mut self, t: u64) {
        let t = t.max(self.stats.last_change_ns);
        let dt = (t - self.stats.last_change_ns) as u128;
        self.stats.occ_integral += self.occupancy_bytes() as u128 * dt;
        self.stats.last_change_ns = t;
    }

    fn count_drop(&mut self, origin: u16, cause: DropCause) {
        self.stats.drops += 1;
        match cause {
            DropCause::Overflow => self.stats.drops_overflow += 1,
            DropCause::Aqm => self.stats.drops_aqm += 1,
        }
        self.origin(origin).drops += 1;
    }

    /// Count and set aside what the discipline dropped inside its last call.
    fn collect_dropped(&mut self) {
        let mut v = std::mem::take(&mut self.aqm_dropped);
        for (e, cause) in v.drain(..) {
            self.count_drop(e.origin, cause);
            self.dropped.push(e.payload);
        }
        self.aqm_dropped = v;
    }

    /// CE marks the discipline has set so far (its own counter, all classes).
    fn aqm_marks(&self) -> u64 {
        self.aqm.stats().classes.iter().map(|c| c.ce_marks).sum()
    }

    fn count_marks(&mut self, before: u64, origin: u16) {
        let m = self.aqm_marks() - before;
        if m > 0 {
            self.stats.ce_marks += m;
            self.origin(origin).ce_marks += m;
        }
    }

    /// The discipline's limit: the link's, less the packet in service.
    fn waiting_limit(&self) -> Limit {
        let full = self.p.limit();
        match &self.in_service {
            None => full,
            Some(s) => Limit {
                bytes: full.bytes.map(|b| b.saturating_sub(s.entry.wire as u64)),
                packets: full.packets.map(|n| n.saturating_sub(1)),
            },
        }
    }

    /// The transmitter is free at `t`: take the next packet from the discipline.
    fn start_next(&mut self, t: u64) {
        let marks = self.aqm_marks();
        let next = self.aqm.dequeue(t, &mut self.rng, &mut self.aqm_dropped);
        self.collect_dropped();
        self.in_service = next.map(|e| {
            let sojourn = t - e.enqueued_ns;
            self.stats.sojourn.record(sojourn);
            if e.l4s && self.aqm.stats().classes.len() > 1 {
                self.stats.l4s_sojourn.record(sojourn);
            }
            let s = self.ser_ns(e.wire);
            self.stats.busy_ns += s;
            InService { entry: e, done_ns: t + s }
        });
        if let Some(o) = self.in_service.as_ref().map(|s| s.entry.origin) {
            self.count_marks(marks, o);
        }
        let limit = self.waiting_limit();
        self.aqm.set_limit(limit);
    }

    /// Move packets whose serialization has finished by `now` into the delay line, starting
    /// the next one at the previous one's end (back to back: the rate stays exact however late
    /// we are called).
    pub fn advance(&mut self, now: u64) {
        while let Some(done) = self.in_service.as_ref().map(|s| s.done_ns).filter(|&d| d <= now) {
            self.account_occ(done);
            let e = self.in_service.take().unwrap().entry;
            self.stats.tx_pkts += 1;
            self.stats.tx_bytes += e.wire as u64;
            self.delay.push_back((done + self.p.delay_ns, e.payload, e.origin, e.marked));
            self.start_next(done);
        }
    }

    /// A packet arrives at `now`. On `Ok` the link keeps `payload`; on `Err` it is handed back
    /// so the caller can recycle it. Other packets the discipline drops meanwhile are collected
    /// for [`Link::drain_dropped`].
    pub fn enqueue(&mut self, now: u64, payload: T, a: Arrival) -> Result<(), (Verdict, T)> {
        self.advance(now);
        self.stats.rx_pkts += 1;
        self.origin(a.origin).rx_pkts += 1;
        if self.p.loss > 0.0 && self.rng.next_f64() < self.p.loss {
            self.stats.random_losses += 1;
            self.origin(a.origin).random_losses += 1;
            return Err((Verdict::Lost, payload));
        }
        let e = Entry {
            payload,
            wire: a.ip_len + self.p.overhead_bytes,
            origin: a.origin,
            ecn: a.ecn,
            flow_key: a.flow_key,
            marked: false,
            l4s: a.ecn.is_l4s(),
            enqueued_ns: now,
        };
        self.account_occ(now);
        let marks = self.aqm_marks();
        let r = self.aqm.enqueue(now, e, &mut self.rng, &mut self.aqm_dropped);
        self.collect_dropped();
        if let Err((e, cause)) = r {
            self.count_drop(e.origin, cause);
            return Err((Verdict::Dropped(cause), e.payload));
        }
        self.count_marks(marks, a.origin);
        if self.in_service.is_none() {
            self.start_next(now);
        }
        self.stats.max_occ_bytes = self.stats.max_occ_bytes.max(self.occupancy_bytes());
        Ok(())
    }

    /// The next packet whose delivery time has come.
    pub fn pop_ready(&mut self, now: u64) -> Option<Departure<T>> {
        self.advance(now);
        if self.delay.front().is_some_and(|&(t, _, _, _)| t <= now) {
            let (due_ns, payload, origin, ce) = self.delay.pop_front().unwrap();
            return Some(Departure { payload, due_ns, origin, ce });
        }
        None
    }

    /// When something next happens on this link (a serialization ends or a delivery is due).
    pub fn next_deadline(&self) -> Option<u64> {
        let a = self.in_service.as_ref().map(|s| s.done_ns);
        let b = self.delay.front().map(|&(t, _, _, _)| t);
        match (a, b) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, None) => x,
            (None, y) => y,
        }
    }

    /// Zero the cumulative counters and start a new interval at `now` (the run's time 0).
    pub fn reset_counters(&mut self, now: u64) {
        self.advance(now);
        self.stats = LinkStats {
            last_change_ns: now,
            interval_start_ns: now,
            max_occ_bytes: self.occupancy_bytes(),
            ..Default::default()
        };
        self.per_origin.clear();
    }

    /// Close the interval ending at `now` and return its row.
    pub fn sample(&mut self, now: u64) -> QueueSample {
        self.advance(now);
        self.account_occ(now);
        let len = now.saturating_sub(self.stats.interval_start_ns).max(1);
        // Busy time is credited when a packet starts service; cap what spills into the future.
        let future = self.in_service.as_ref().map_or(0, |s| s.done_ns.saturating_sub(now));
        let busy = self.stats.busy_ns.saturating_sub(future);
        let st = &self.stats;
        let s = QueueSample {
            t_ns: now,
            occupancy_bytes: self.occupancy_bytes(),
            occupancy_pkts: self.occupancy_pkts(),
            mean_occupancy_bytes: st.occ_integral as f64 / len as f64,
            max_occupancy_bytes: st.max_occ_bytes,
            drops: st.drops,
            drops_overflow: st.drops_overflow,
            drops_aqm: st.drops_aqm,
            random_losses: st.random_losses,
            ce_marks: st.ce_marks,
            tx_bytes: st.tx_bytes,
            utilization: if self.p.rate_bps == 0 {
                f64::NAN
            } else {
                (busy as f64 / len as f64).min(1.0)
            },
            sojourn_mean_ns: st.sojourn.mean_ns(),
            sojourn_p50_ns: st.sojourn.quantile_ns(0.5),
            sojourn_p99_ns: st.sojourn.quantile_ns(0.99),
            l4s_sojourn_mean_ns: st.l4s_sojourn.mean_ns(),
            l4s_sojourn_p50_ns: st.l4s_sojourn.quantile_ns(0.5),
            l4s_sojourn_p99_ns: st.l4s_sojourn.quantile_ns(0.99),
        };
        self.stats.occ_integral = 0;
        self.stats.max_occ_bytes = s.occupancy_bytes;
        self.stats.busy_ns = future;
        self.stats.interval_start_ns = now;
        self.stats.sojourn = SojournHist::default();
        self.stats.l4s_sojourn = SojournHist::default();
        s
    }
}
