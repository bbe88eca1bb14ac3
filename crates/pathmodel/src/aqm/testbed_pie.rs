//! A test bench for PIE's and DualPI2's tests: a constant-rate transmitter that asks the queue
//! for a packet whenever it is free, fed by sources that are either unresponsive (constant
//! rate, optionally for a while only) or a Reno-like AIMD window (halve on a drop or CE mark,
//! once per RTT; one packet more per RTT), whose feedback arrives one base RTT after the queue
//! dropped or delivered the packet. One event loop in time order: feedback, then the
//! transmitter, then arrivals. Test code only (allocations are fine here).

use super::{Aqm, AqmIo, DropCause};
use crate::{Ecn, Nanos, TestPacket, TestRng};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Bytes of every bench packet.
pub(crate) const PKT_BYTES: u32 = 1500;

/// Serialization time of `bytes` at `rate_bps`.
pub(crate) fn tx_ns(bytes: u32, rate_bps: u64) -> Nanos {
    bytes as u64 * 8 * 1_000_000_000 / rate_bps
}

/// What a source hears about one of its packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Fate {
    Delivered { ce: bool },
    Dropped,
}

pub(crate) trait Source {
    /// When it next wants to send (None: not now; the bench asks again after feedback).
    fn next_send(&self) -> Option<Nanos>;
    /// The packet it sends at `now`.
    fn send(&mut self, now: Nanos) -> TestPacket;
    /// Feedback about one of its packets (at the time it reaches the sender).
    fn feedback(&mut self, _now: Nanos, _fate: Fate) {}
    /// How long feedback takes to come back (the base RTT).
    fn feedback_delay_ns(&self) -> Nanos {
        0
    }
}

/// An unresponsive source: one packet every `interval_ns` from `start` until `stop`.
pub(crate) struct ConstRate {
    pub flow: u64,
    pub ecn: Ecn,
    pub interval_ns: Nanos,
    pub next: Nanos,
    pub stop: Nanos,
    pub seq: u64,
}

impl ConstRate {
    /// Sending at `share` of `rate_bps` from `start` to `stop`.
    pub fn new(flow: u64, ecn: Ecn, share: f64, rate_bps: u64, start: Nanos, stop: Nanos) -> Self {
        let interval_ns = (tx_ns(PKT_BYTES, rate_bps) as f64 / share).round() as Nanos;
        ConstRate { flow, ecn, interval_ns, next: start, stop, seq: 0 }
    }
}

impl Source for ConstRate {
    fn next_send(&self) -> Option<Nanos> {
        (self.next < self.stop).then_some(self.next)
    }
    fn send(&mut self, _now: Nanos) -> TestPacket {
        self.next += self.interval_ns;
        self.seq += 1;
        TestPacket { bytes: PKT_BYTES, ecn: self.ecn, flow: self.flow, seq: self.seq }
    }
}

/// A window-based AIMD sender (Reno's congestion avoidance): `cwnd` packets in flight, +1/cwnd
/// per delivered packet, halved on a drop or CE mark at most once per `base_rtt_ns`.
pub(crate) struct Aimd {
    pub flow: u64,
    pub ecn: Ecn,
    pub base_rtt_ns: Nanos,
    pub cwnd: f64,
    pub inflight: u64,
    /// Packets sent after this time may cut the window again (one cut per window of data).
    last_cut: Option<Nanos>,
    now: Nanos,
    seq: u64,
}

impl Aimd {
    pub fn new(flow: u64, ecn: Ecn, base_rtt_ns: Nanos) -> Self {
        Aimd { flow, ecn, base_rtt_ns, cwnd: 2.0, inflight: 0, last_cut: None, now: 0, seq: 0 }
    }
}

impl Source for Aimd {
    fn next_send(&self) -> Option<Nanos> {
        ((self.inflight as f64) < self.cwnd.floor()).then_some(self.now)
    }
    fn send(&mut self, now: Nanos) -> TestPacket {
        self.now = now;
        self.inflight += 1;
        self.seq += 1;
        TestPacket { bytes: PKT_BYTES, ecn: self.ecn, flow: self.flow, seq: self.seq }
    }
    fn feedback(&mut self, now: Nanos, fate: Fate) {
        self.now = now;
        self.inflight -= 1;
        let congested = matches!(fate, Fate::Dropped | Fate::Delivered { ce: true });
        if congested {
            // One cut per round trip: a signal within an RTT of the last cut is the same event.
            if self.last_cut.is_none_or(|t| now >= t + self.base_rtt_ns) {
                self.cwnd = (self.cwnd / 2.0).max(1.0);
                self.last_cut = Some(now);
            }
        } else {
            self.cwnd += 1.0 / self.cwnd;
        }
    }
    fn feedback_delay_ns(&self) -> Nanos {
        self.base_rtt_ns
    }
}

/// The link: a transmitter at `rate_bps` draining a discipline, and the feedback in flight.
pub(crate) struct Bench {
    pub rate_bps: u64,
    pub now: Nanos,
    free_at: Nanos,
    /// (time, source, fate) of feedback on its way back.
    pending: BinaryHeap<Reverse<(Nanos, usize, Fate)>>,
    pub rng: TestRng,
    dropped: Vec<(TestPacket, DropCause)>,
}

impl Bench {
    pub fn new(rate_bps: u64, seed: u64) -> Bench {
        Bench {
            rate_bps,
            now: 0,
            free_at: 0,
            pending: BinaryHeap::new(),
            rng: TestRng(seed),
            dropped: Vec::new(),
        }
    }

    /// Run every event up to `until` (then `now = until`). Sources are indexed by their
    /// packets' `flow`.
    pub fn run<Q: Aqm<TestPacket>>(
        &mut self,
        q: &mut Q,
        sources: &mut [&mut dyn Source],
        until: Nanos,
    ) {
        loop {
            let t_fb = self.pending.peek().map(|r| r.0 .0);
            let t_tx = (q.packets() > 0).then(|| self.free_at.max(self.now));
            let arrival = sources
                .iter()
                .enumerate()
                .filter_map(|(i, s)| s.next_send().map(|t| (t.max(self.now), i)))
                .min();
            let t_arr = arrival.map(|a| a.0);
            let Some(t) = [t_fb, t_tx, t_arr].into_iter().flatten().min() else { break };
            if t > until {
                break;
            }
            self.now = t;
            if t_fb == Some(t) {
                let Reverse((_, i, fate)) = self.pending.pop().unwrap();
                sources[i].feedback(t, fate);
            } else if t_tx == Some(t) {
                let p = q.dequeue(t, &mut AqmIo::new(&mut self.rng, &mut self.dropped));
                for (d, _) in std::mem::take(&mut self.dropped) {
                    self.notify(sources, d.flow as usize, t, Fate::Dropped);
                }
                if let Some(p) = p {
                    self.free_at = t + tx_ns(p.bytes, self.rate_bps);
                    let fate = Fate::Delivered { ce: p.ecn == Ecn::Ce };
                    self.notify(sources, p.flow as usize, self.free_at, fate);
                }
            } else {
                let i = arrival.unwrap().1;
                let p = sources[i].send(t);
                if let Err((d, _)) =
                    q.enqueue(t, p, &mut AqmIo::new(&mut self.rng, &mut self.dropped))
                {
                    self.notify(sources, d.flow as usize, t, Fate::Dropped);
                }
                for (d, _) in std::mem::take(&mut self.dropped) {
                    self.notify(sources, d.flow as usize, t, Fate::Dropped);
                }
            }
        }
        self.now = until;
    }

    fn notify(&mut self, sources: &[&mut dyn Source], i: usize, t: Nanos, fate: Fate) {
        self.pending.push(Reverse((t + sources[i].feedback_delay_ns(), i, fate)));
    }
}

/// Mean sojourn (ns) of the packets dequeued between two snapshots of a class's counters.
pub(crate) fn window_mean_ns(before: &super::ClassStats, after: &super::ClassStats) -> f64 {
    let sum = |c: &super::ClassStats| c.sojourn.mean_ns() * c.sojourn.count() as f64;
    let n = after.sojourn.count() - before.sojourn.count();
    let s = sum(after) - if before.sojourn.count() == 0 { 0.0 } else { sum(before) };
    s / n as f64
}

/// The lazy updates against a timer: overload for 1 s, 20 s idle, overload again for 1 s,
/// once with nothing touching the queue while it is idle and once with an (empty) dequeue
/// every millisecond, which performs each update on time. Both must end in the same state:
/// (drops, marks, dequeued, sojourn sum) of each run's classes together.
pub(crate) fn lazy_vs_ticked<Q: Aqm<TestPacket>>(
    make: impl Fn() -> Q,
) -> [(u64, u64, u64, f64); 2] {
    let rate_bps = 100_000_000;
    let ms = crate::MS;
    [false, true].map(|ticked| {
        let mut q = make();
        let mut bench = Bench::new(rate_bps, 9);
        let mut a = ConstRate::new(0, Ecn::NotEct, 1.2, rate_bps, 0, 1000 * ms);
        bench.run(&mut q, &mut [&mut a], 2000 * ms);
        if ticked {
            let (mut rng, mut dropped) = (TestRng(1), Vec::new());
            for t in 2000..21_000 {
                assert!(q.dequeue(t * ms, &mut AqmIo::new(&mut rng, &mut dropped)).is_none());
            }
        }
        let mut b = ConstRate::new(0, Ecn::NotEct, 1.2, rate_bps, 21_000 * ms, 22_000 * ms);
        bench.run(&mut q, &mut [&mut b], 23_000 * ms);
        let s = q.stats().total();
        let sum = s.sojourn.mean_ns() * s.sojourn.count() as f64;
        (s.drops_aqm, s.ce_marks, s.dequeued, sum)
    })
}
