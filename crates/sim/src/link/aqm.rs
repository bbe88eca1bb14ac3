//! A link's queue as a discipline of the path model (`pathmodel::aqm`: drop-tail, and whatever
//! else its registry holds): the discipline holds the waiting packets and decides at enqueue
//! and at dequeue time, so the link is event-driven (its packets' departures are not fixed when
//! they arrive; `Link::can_be_timestamped`). The link's own parts stay as they are: random loss
//! before the discipline, the transmitter, the pipe, the queue table's occupancy (the
//! discipline's bytes) and the drop and mark counters (`QueueStats`). What the link does with
//! it is in `network/aqm.rs`.
//!
//! A scenario's `qdisc = { kind = "droptail" }` (or none) keeps the native FIFO of `queue/`,
//! which a timestamped link runs without an event per departure; every other kind comes here.
//! Tests route the native drop-tail through here too ([`FORCE_AQM`]) to check that both give
//! the same runs.

use super::DataHeld;
use crate::config::{Bottleneck, Derived, QdiscSpec};
use crate::rng::Rng;
use pathmodel::aqm::{AnyAqm, Aqm, AqmStats, DropCause, Limit, LinkContext};
use transport::Packet;

#[cfg(test)]
thread_local! {
    /// Tests: give the bottleneck's native drop-tail (with its step ECN marking) to the path
    /// model's FIFO (`AnyAqm::Droptail`), event-driven, as if the scenario named a discipline.
    pub(crate) static FORCE_AQM: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The discipline the bottleneck `b` runs through this path: the one it names, unless that is
/// the native drop-tail (None: the link keeps `queue/`'s chain).
pub(crate) fn spec_for(b: &Bottleneck) -> Option<QdiscSpec> {
    #[cfg(test)]
    if FORCE_AQM.with(|f| f.get()) {
        return Some(b.qdisc.clone().unwrap_or_default());
    }
    b.qdisc.clone().filter(|q| !matches!(q, QdiscSpec::Droptail { .. }))
}

/// What a discipline on bottleneck `b` is built with: its rate, its buffer (`derived`: the
/// resolved `buffer`) and the FIFO's step marking threshold.
pub(crate) fn context(b: &Bottleneck, derived: &Derived) -> LinkContext {
    LinkContext {
        rate_bps: b.rate_bps(),
        limit: Limit { bytes: derived.buffer_bytes, packets: derived.buffer_packets },
        ecn_threshold_bytes: b.ecn_threshold_bytes,
        ecn_threshold_packets: b.ecn_threshold_packets,
    }
}

/// The link's discipline and what the link keeps beside it.
pub(crate) struct LinkAqm {
    pub(crate) q: AnyAqm<Packet>,
    /// Packets the discipline dropped during one call (a buffer reused across calls).
    pub(crate) dropped: Vec<(Packet, DropCause)>,
    /// The discipline's CE marks already added to the link's `QueueStats::ce_marks`.
    marks_counted: u64,
    /// Data packets of each flow inside the discipline.
    pub(crate) data_inside: DataHeld,
    /// When the pending `QdiscWake` of a discipline that holds packets back will come.
    pub(crate) wake_at_ns: Option<cc::Nanos>,
    /// (A link that serves its departures lazily: `speedup/lazy.rs`) when the packet now
    /// serializing leaves, and when the pending deadline event comes.
    pub(crate) lazy: LazyTimes,
}

/// A lazily served link's two times (`speedup/lazy.rs`).
pub(crate) struct LazyTimes {
    pub(crate) tx_end_ns: cc::Nanos,
    /// Nanos::MAX: no deadline event pending.
    pub(crate) deadline_ns: cc::Nanos,
}

impl LinkAqm {
    pub(crate) fn new(spec: &QdiscSpec, ctx: &LinkContext) -> LinkAqm {
        LinkAqm {
            q: AnyAqm::build(spec, ctx),
            dropped: Vec::new(),
            marks_counted: 0,
            data_inside: DataHeld::default(),
            wake_at_ns: None,
            lazy: LazyTimes { tx_end_ns: cc::Nanos::MAX, deadline_ns: cc::Nanos::MAX },
        }
    }

    pub(crate) fn packets(&self) -> usize {
        self.q.packets() as usize
    }

    /// CE marks the discipline set since this was last asked.
    pub(crate) fn take_new_marks(&mut self) -> u64 {
        let all: u64 = self.q.stats().classes.iter().map(|c| c.ce_marks).sum();
        let new = all - self.marks_counted;
        self.marks_counted = all;
        new
    }
}

/// A queue's sojourn and per-class columns in the `queue` table, from its discipline's
/// counters since the start (`AqmStats`: class 0 is classic or all, class 1 L4S).
pub(crate) struct SojournColumns {
    pub mean_ms: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub l4s_p99_ms: f64,
    pub l4s_drops: i64,
    pub l4s_ce_marks: i64,
}

impl SojournColumns {
    /// None: the native drop-tail, which does not time its packets (NaN and 0).
    pub(crate) fn of(aqm: Option<&LinkAqm>) -> SojournColumns {
        let mut c = SojournColumns {
            mean_ms: f64::NAN,
            p50_ms: f64::NAN,
            p99_ms: f64::NAN,
            l4s_p99_ms: f64::NAN,
            l4s_drops: 0,
            l4s_ce_marks: 0,
        };
        let Some(a) = aqm else { return c };
        let stats: &AqmStats = a.q.stats();
        let merged;
        let all = match stats.classes.as_slice() {
            [one] => &one.sojourn,
            _ => {
                merged = stats.total();
                &merged.sojourn
            }
        };
        (c.mean_ms, c.p50_ms, c.p99_ms) =
            (all.mean_ns() / 1e6, all.quantile_ns(0.5) / 1e6, all.quantile_ns(0.99) / 1e6);
        if let Some(l4s) = stats.classes.get(1) {
            c.l4s_p99_ms = l4s.sojourn.quantile_ns(0.99) / 1e6;
            c.l4s_drops = (l4s.drops_overflow + l4s.drops_aqm) as i64;
            c.l4s_ce_marks = l4s.ce_marks as i64;
        }
        c
    }
}

/// The link's random stream as the path model draws from it (`pathmodel::Random`; a wrapper,
/// since neither the trait nor the generator is this crate's).
pub(crate) struct LinkRandom<'a>(pub(crate) &'a mut Rng);

impl pathmodel::Random for LinkRandom<'_> {
    #[inline]
    fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }
    #[inline]
    fn next_f64(&mut self) -> f64 {
        self.0.next_f64()
    }
}
