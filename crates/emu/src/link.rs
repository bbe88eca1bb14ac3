//! One direction of an emulated link, the pure model (no I/O, no clock: time is passed in):
//!
//! ```text
//! arrival -> Bernoulli loss -> queue discipline (pathmodel::aqm) -> transmitter at the rate
//!         -> one-way delay -> delivery
//! ```
//!
//! with the shared path model's impairments around it when the parameters name them (a
//! schedule, a trace, a policer, burst loss, jitter, reordering, aggregation: `path.rs`).
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

use pathmodel::aqm::{AnyAqm, Aqm, AqmIo, DropCause, Limit, LinkContext, SojournHist};
use pathmodel::{Ecn, PathPacket};

use crate::path::{Path, Refusal, Sent};
use crate::{LinkParams, XorShift64Star};

/// Why the link handed a packet back on arrival.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Random (Bernoulli) loss.
    Lost,
    /// Refused by the queue discipline (buffer overflow, or PIE's/DualPI2's drop at enqueue).
    Dropped(DropCause),
    /// Dropped by the policer (no tokens).
    Policed,
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

/// Cumulative counters and sojourn histograms (since the last [`Link::reset_counters`]) and the
/// current interval's integrals (since the last [`Link::sample`]).
#[derive(Clone, Debug, Default)]
pub struct LinkStats {
    pub rx_pkts: u64,
    /// Packets the queue discipline dropped, all causes (`drops_overflow + drops_aqm`).
    pub drops: u64,
    /// Tail drops at the buffer limit.
    pub drops_overflow: u64,
    /// Drops the discipline chose (CoDel's control law, PIE's or DualPI2's probability).
    pub drops_aqm: u64,
    /// Bernoulli and burst (Gilbert-Elliott) losses on arrival.
    pub random_losses: u64,
    /// Packets the policer dropped (not in `drops`: no queue refused them).
    pub policer_drops: u64,
    pub ce_marks: u64,
    pub tx_pkts: u64,
    pub tx_bytes: u64,
    /// Sojourns of the packets that entered service since the run's start: all, and the L4S
    /// class (cumulative, as the simulator's queue table reports them).
    sojourn: SojournHist,
    l4s_sojourn: SojournHist,
    // interval
    occ_integral: u128,
    max_occ_bytes: u64,
    busy_ns: u64,
    last_change_ns: u64,
    interval_start_ns: u64,
}

/// One sample of a link's queue (a row of the `queue` table). Counters and sojourn statistics
/// are cumulative since the run's start (sojourns NaN until a packet entered service, as the
/// simulator's); occupancy integrals are over the interval since the previous sample.
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
    /// The link's rate at `t_ns` (bit/s, rounded): the scheduled constant rate, or the trace's
    /// (a Mahimahi trace's over the 100 ms around it, `Trace::rate_at`).
    pub rate_bps: u64,
    /// Packets the policer dropped (cumulative).
    pub policer_drops: u64,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct OriginCounters {
    pub rx_pkts: u64,
    /// Queue drops, all causes.
    pub drops: u64,
    pub random_losses: u64,
    pub policer_drops: u64,
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
    /// Serialized packets in propagation, by delivery time.
    delay: VecDeque<(u64, Sent<T>)>,
    /// The latest delivery time given so far: with a FIFO path, a delay that steps down does
    /// not let a packet overtake the one before it.
    last_due_ns: u64,
    /// Schedule, trace, policer, burst loss and the timing stages.
    path: Path<T>,
    /// What the discipline drops inside enqueue/dequeue, before it is counted and recycled.
    aqm_dropped: Vec<(Entry<T>, DropCause)>,
    /// Payloads dropped by the discipline, for the caller to recycle ([`Link::drain_dropped`]).
    dropped: Vec<T>,
    pub stats: LinkStats,
    pub per_origin: Vec<OriginCounters>,
}

impl<T: 'static> Link<T> {
    /// A link with parameters that must be valid (tests, the access delay lines).
    pub fn new(p: LinkParams, seed: u64) -> Self {
        Link::try_new(p, seed).unwrap_or_else(|e| panic!("{e}"))
    }

    /// A link, or one line saying which parameter is wrong (a trace: its file and line).
    pub fn try_new(mut p: LinkParams, seed: u64) -> Result<Self, String> {
        let path = Path::build(&p, seed)?;
        if let Some(mean) = path.trace_mean_bps().filter(|_| p.rate_bps == 0) {
            // Before the run starts (and for the disciplines' context) a trace link runs at
            // its trace's mean rate.
            p.rate_bps = mean.max(1);
        }
        let ctx = LinkContext {
            rate_bps: p.rate_bps,
            limit: p.limit(),
            ecn_threshold_bytes: p.ecn_threshold_bytes,
            ecn_threshold_packets: p.ecn_threshold_packets,
        };
        Ok(Link {
            aqm: AnyAqm::build(&p.qdisc, &ctx),
            p,
            rng: XorShift64Star::new(seed),
            in_service: None,
            carry: 0,
            delay: VecDeque::new(),
            last_due_ns: 0,
            path,
            aqm_dropped: Vec::new(),
            dropped: Vec::new(),
            stats: LinkStats::default(),
            per_origin: Vec::new(),
        })
    }

    /// The run starts at `t0_ns` (CLOCK_MONOTONIC): the schedule's and the trace's time 0.
    pub fn start_run(&mut self, t0_ns: u64) {
        self.path.start_run(t0_ns);
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
        let next = self.aqm.dequeue(t, &mut AqmIo::new(&mut self.rng, &mut self.aqm_dropped));
        self.collect_dropped();
        self.in_service = next.map(|e| {
            let sojourn = t - e.enqueued_ns;
            self.stats.sojourn.record(sojourn);
            if e.l4s && self.aqm.stats().classes.len() > 1 {
                self.stats.l4s_sojourn.record(sojourn);
            }
            let done_ns = match self.path.serve(t, e.wire) {
                Some(done) => done,
                None => t + self.ser_ns(e.wire),
            };
            self.stats.busy_ns += done_ns - t;
            InService { entry: e, done_ns }
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
        loop {
            let done = self.in_service.as_ref().map(|s| s.done_ns).filter(|&d| d <= now);
            // A change at a packet's end applies to the next packet (it starts at or after it).
            if let Some(c) = self.path.take_change(done.unwrap_or(now)) {
                self.apply(c);
                continue;
            }
            let Some(done) = done else { break };
            self.account_occ(done);
            let e = self.in_service.take().unwrap().entry;
            self.stats.tx_pkts += 1;
            self.stats.tx_bytes += e.wire as u64;
            let sent = Sent { payload: e.payload, wire: e.wire, origin: e.origin, ce: e.marked };
            self.propagate(done + self.p.delay_ns, sent);
            self.start_next(done);
        }
    }

    /// A scheduled change, at its time: later services, deliveries and arrivals see it.
    fn apply(&mut self, c: pathmodel::impair::Change) {
        if let Some(r) = c.rate_bps {
            self.p.rate_bps = r;
            self.carry = 0; // a remainder of the old rate's division
            self.aqm.set_rate(r);
        }
        if let Some(rtt) = c.rtt_ns {
            self.p.delay_ns = rtt / 2; // each direction carries half the base RTT
        }
        if let Some(loss) = c.loss {
            self.p.loss = loss;
        }
        if let Some(l) = c.limit {
            (self.p.limit_bytes, self.p.limit_packets) = (l.bytes, l.packets);
            let limit = self.waiting_limit();
            self.aqm.set_limit(limit);
        }
    }

    /// Into the delay line, due at `due`: after the packet before it unless packets may
    /// overtake (a FIFO path keeps its order when the delay steps down).
    fn propagate(&mut self, due: u64, s: Sent<T>) {
        if !self.path.may_reorder {
            let due = due.max(self.last_due_ns);
            self.last_due_ns = due;
            self.delay.push_back((due, s));
            return;
        }
        let at = self.delay.iter().rposition(|x| x.0 <= due).map_or(0, |i| i + 1);
        self.delay.insert(at, (due, s));
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
        let wire = a.ip_len + self.p.overhead_bytes;
        match self.path.admit(now, wire) {
            Ok(()) => {}
            Err(Refusal::Lost) => {
                self.stats.random_losses += 1;
                self.origin(a.origin).random_losses += 1;
                return Err((Verdict::Lost, payload));
            }
            Err(Refusal::Policed) => {
                self.stats.policer_drops += 1;
                self.origin(a.origin).policer_drops += 1;
                return Err((Verdict::Policed, payload));
            }
        }
        let e = Entry {
            payload,
            wire,
            origin: a.origin,
            ecn: a.ecn,
            flow_key: a.flow_key,
            marked: false,
            l4s: a.ecn.is_l4s(),
            enqueued_ns: now,
        };
        self.account_occ(now);
        let marks = self.aqm_marks();
        let r = self.aqm.enqueue(now, e, &mut AqmIo::new(&mut self.rng, &mut self.aqm_dropped));
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
        if !self.path.has_stages() {
            if self.delay.front().is_some_and(|x| x.0 <= now) {
                let (due_ns, s) = self.delay.pop_front().unwrap();
                let Sent { payload, origin, ce, .. } = s;
                return Some(Departure { payload, due_ns, origin, ce });
            }
            return None;
        }
        // Through the timing stages, each packet entering at its delivery time.
        while self.delay.front().is_some_and(|x| x.0 <= now) {
            let (due_ns, s) = self.delay.pop_front().unwrap();
            self.path.push(due_ns, s);
        }
        self.path.run_stages(now);
        let (due_ns, Sent { payload, origin, ce, .. }) = self.path.pop_ready()?;
        Some(Departure { payload, due_ns, origin, ce })
    }

    /// When something next happens on this link (a serialization ends, a delivery or a stage's
    /// release is due, or the schedule changes the link).
    pub fn next_deadline(&self) -> Option<u64> {
        let a = self.in_service.as_ref().map(|s| s.done_ns);
        let b = self.delay.front().map(|x| x.0);
        [a, b, self.path.next_due(), self.path.next_change_at()].into_iter().flatten().min()
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
            rate_bps: self.path.rate_at(now, self.p.rate_bps).round() as u64,
            policer_drops: st.policer_drops,
        };
        self.stats.occ_integral = 0;
        self.stats.max_occ_bytes = s.occupancy_bytes;
        self.stats.busy_ns = future;
        self.stats.interval_start_ns = now;
        s
    }
}
