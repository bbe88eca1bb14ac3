//! CoDel (Controlled Delay, RFC 8289): a FIFO that watches how long each packet waited (its
//! sojourn, measured at dequeue) and drops — or, with `ecn`, CE-marks — at dequeue time once the
//! sojourn has stayed at or above `target` for a whole `interval`.
//!
//! The model, as Linux implements it (`include/net/codel_impl.h`, `codel_should_drop()` and
//! `codel_dequeue()`; RFC 8289 §5's pseudocode, `dodequeue()` and `dequeue()`):
//!
//! - Estimator (RFC 8289 §3, `dodequeue()`): each dequeued packet's sojourn is compared with
//!   `target`. Below target, or with no more than one maximum-sized packet left in the queue
//!   (the backlog term: a link too slow to drain an MTU within target must not be starved),
//!   `first_above_time` is cleared. The first packet above starts the clock:
//!   `first_above_time = now + interval`; a packet dequeued strictly after that time says
//!   "ok to drop" (`codel_time_after`).
//! - Dropping state (RFC 8289 §3, `dequeue()`): the first "ok to drop" drops (or marks) that
//!   packet and enters the state with `drop_next = now + interval/sqrt(count)`. In the state,
//!   each dequeue at or after `drop_next` drops the packet, increments `count`, dequeues the next
//!   one and schedules `drop_next += interval/sqrt(count)` — from the previous `drop_next`, not
//!   from now, so the drop rate grows as sqrt(count) (the control law, `control_law()`). A
//!   packet that is not "ok to drop" (sojourn fell below target) leaves the state, and so does
//!   an empty queue.
//! - Re-entry (`dequeue()`, which RFC 8289 calls "the Linux version"): entering it again, with
//!   `delta = count - lastcount > 1` drops in the previous episode and the last scheduled drop
//!   less than 16 intervals ago (`RESUME_WINDOW_INTERVALS`), resumes at `count = delta` instead
//!   of 1: the drop rate that controlled the queue last time is a good start.
//! - ECN (Linux `params->ecn`): an ECN-capable packet (ECT(0), ECT(1) or already CE) that the
//!   law would drop is CE-marked and sent instead; in the dropping state a mark ends that
//!   dequeue's drop loop, as in Linux's `goto end`.
//! - `ce_threshold` (Linux `codel_dequeue()`'s `end:` block): independent of the control law,
//!   an ECN-capable packet whose sojourn exceeds it (strictly) is CE-marked. Linux's DSCP
//!   selector/mask for this mark is not modelled.
//!
//! Where this model differs from Linux, and why:
//!
//! - Time is integer ns (Linux: u32 ticks of 1024 ns with wrap-around compares), so targets and
//!   intervals are exact rather than rounded down to 1.024 µs.
//! - The control law is the exact `interval / sqrt(count)` (RFC 8289 `control_law()`), not
//!   Linux's 16-bit fixed-point Newton iteration of 1/sqrt(count) (`codel_Newton_step()`),
//!   which tracks it closely once converged but is coarse right after a re-entry at
//!   `count = delta`.
//! - The backlog term compares with the largest packet seen so far (RFC 8289's `maxpacket`,
//!   the older Linux `stats->maxpacket`) instead of the device MTU (`params->mtu`,
//!   `psched_mtu()`): the path model has no device, and both agree once a full-sized packet
//!   has been through.
//! - Counters: drops are `drops_aqm`; marks by the control law and by `ce_threshold` are both
//!   `ce_marks` (Linux: `ecn_mark` and `ce_mark`), one count per packet even when both apply.
//!   A packet that arrives already CE counts when CoDel "marks" it, as Linux's
//!   `INET_ECN_set_ce()` reports success for it.
//!
//! The state machine ([`CodelVars`], [`CodelParams::dequeue`]) reads its packets through
//! [`CodelSource`], so FQ-CoDel (`fq_codel.rs`) runs the same code on each flow's queue. The
//! discipline [`Codel`] here is Linux `sch_codel`: one such queue, tail drop at the limit
//! (`codel_qdisc_enqueue()`), 1000 packets by default.

use super::backlog::{Backlog, Occupancy};
use super::{Aqm, AqmIo, ClassStats, DropCause, Held, LinkContext, QdiscSpec};
use crate::{Nanos, PathPacket, MS};

/// RFC 8289 §4 (TARGET) and Linux `codel_params_init()`: 5 ms, 5–10 % of the interval.
pub const DEFAULT_TARGET_NS: Nanos = 5 * MS;
/// RFC 8289 §4 (INTERVAL) and Linux `codel_params_init()`: 100 ms, a worst-case RTT of the
/// paths the queue serves (the time a sender needs to react to a drop).
pub const DEFAULT_INTERVAL_NS: Nanos = 100 * MS;
/// Linux `sch_codel` `DEFAULT_CODEL_LIMIT`: 1000 packets when the link sets no buffer.
pub const DEFAULT_LIMIT_PACKETS: u64 = 1000;
/// Re-entry resumes the previous episode's drop rate only if its last scheduled drop was less
/// than this many intervals ago (Linux `codel_dequeue()`: `16 * params->interval`; RFC 8289's
/// `dequeue()` keeps the same constant).
const RESUME_WINDOW_INTERVALS: u64 = 16;

pub(crate) fn default_target_ns() -> Nanos {
    DEFAULT_TARGET_NS
}
pub(crate) fn default_interval_ns() -> Nanos {
    DEFAULT_INTERVAL_NS
}

/// CoDel's settings and the one quantity its queues share (Linux `struct codel_params` plus
/// `codel_stats.maxpacket`, which FQ-CoDel's flows share as Linux's `q->cstats`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct CodelParams {
    pub target_ns: Nanos,
    pub interval_ns: Nanos,
    pub ce_threshold_ns: Option<Nanos>,
    /// Mark ECN-capable packets instead of dropping them.
    pub ecn: bool,
    /// The largest packet seen (bytes): a backlog at most this large is never above target.
    pub max_packet_bytes: u32,
}

/// One queue's CoDel state (Linux `struct codel_vars`; RFC 8289 §5's member variables).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct CodelVars {
    /// Drops (and marks) since entering the dropping state, or the resumed rate.
    pub count: u32,
    /// `count` when the dropping state was last entered.
    pub lastcount: u32,
    pub dropping: bool,
    /// When the sojourn will have been above target for an interval (None: it is below).
    pub first_above_time: Option<Nanos>,
    /// When the next drop is due (in the dropping state), or the last one was due.
    pub drop_next: Nanos,
}

/// The FIFO CoDel dequeues from: a whole queue (CoDel) or one flow's queue (FQ-CoDel).
pub(crate) trait CodelSource<P> {
    /// Remove the head packet with its enqueue time, updating the owner's byte counts.
    fn pop(&mut self) -> Option<(Nanos, P)>;
    /// Bytes still waiting in the whole discipline after the pop (Linux `sch->qstats.backlog`,
    /// which is the qdisc's, not the flow's, also under FQ-CoDel).
    fn backlog_bytes(&self) -> u64;
}

/// A packet CoDel is looking at: its sojourn and whether a mark was already counted for it.
struct Head<P> {
    p: P,
    sojourn_ns: Nanos,
    marked: bool,
}

impl CodelParams {
    /// The settings a spec gives, no packet seen yet.
    pub(crate) fn new(
        target_ns: Nanos,
        interval_ns: Nanos,
        ce_threshold_ns: Option<Nanos>,
        ecn: bool,
    ) -> CodelParams {
        CodelParams { target_ns, interval_ns, ce_threshold_ns, ecn, max_packet_bytes: 0 }
    }

    /// The control law (RFC 8289 `control_law()`): the next drop `interval/sqrt(count)` after `t`.
    #[inline]
    fn control_law(&self, t: Nanos, count: u32) -> Nanos {
        t + (self.interval_ns as f64 / (count.max(1) as f64).sqrt()) as Nanos
    }

    /// Linux `codel_should_drop()` (RFC 8289 `dodequeue()`'s `ok_to_drop`) for a packet that
    /// has just been popped (None: the queue was empty).
    #[inline]
    fn should_drop<P: PathPacket>(
        &mut self,
        v: &mut CodelVars,
        now: Nanos,
        head: Option<&Head<P>>,
        backlog_bytes: u64,
    ) -> bool {
        let Some(h) = head else {
            v.first_above_time = None;
            return false;
        };
        self.max_packet_bytes = self.max_packet_bytes.max(h.p.wire_bytes());
        if h.sojourn_ns < self.target_ns || backlog_bytes <= self.max_packet_bytes as u64 {
            v.first_above_time = None; // went below: stay below for at least an interval
            return false;
        }
        match v.first_above_time {
            None => {
                v.first_above_time = Some(now + self.interval_ns);
                false
            }
            Some(t) => now > t,
        }
    }

    /// CE-mark `h` for the control law if ECN is on and it is ECN-capable (Linux
    /// `params->ecn && INET_ECN_set_ce(skb)`).
    #[inline]
    fn try_mark<P: PathPacket>(&self, h: &mut Head<P>, stats: &mut ClassStats) -> bool {
        if !(self.ecn && h.p.ecn().is_ect()) {
            return false;
        }
        h.p.set_ce();
        if !h.marked {
            h.marked = true;
            stats.ce_marks += 1;
        }
        true
    }

    /// Linux `codel_dequeue()`: the next packet of `src` to send at `now`, dropping (to
    /// `dropped`, counted as `drops_aqm`) or marking on the way; counts the packet sent and its
    /// sojourn in `stats`.
    pub(crate) fn dequeue<P: PathPacket, S: CodelSource<P>>(
        &mut self,
        v: &mut CodelVars,
        now: Nanos,
        src: &mut S,
        stats: &mut ClassStats,
        dropped: &mut Vec<(P, DropCause)>,
    ) -> Option<P> {
        let pop =
            |src: &mut S| src.pop().map(|(t, p)| Head { p, sojourn_ns: now - t, marked: false });
        let Some(first) = pop(src) else {
            v.dropping = false;
            return None;
        };
        let mut head = Some(first);
        let ok_to_drop = self.should_drop(v, now, head.as_ref(), src.backlog_bytes());
        if v.dropping {
            if !ok_to_drop {
                v.dropping = false; // sojourn below target: leave the dropping state
            } else {
                // Every drop that is due by now (a large backlog may make several due at once).
                while v.dropping && now >= v.drop_next {
                    let mut h = head.take().expect("dropping with a packet in hand");
                    v.count = v.count.wrapping_add(1);
                    if self.try_mark(&mut h, stats) {
                        v.drop_next = self.control_law(v.drop_next, v.count);
                        head = Some(h);
                        break;
                    }
                    stats.drops_aqm += 1;
                    dropped.push((h.p, DropCause::Aqm));
                    head = pop(src);
                    if self.should_drop(v, now, head.as_ref(), src.backlog_bytes()) {
                        v.drop_next = self.control_law(v.drop_next, v.count);
                    } else {
                        v.dropping = false;
                    }
                }
            }
        } else if ok_to_drop {
            let mut h = head.take().expect("ok to drop a packet in hand");
            if self.try_mark(&mut h, stats) {
                head = Some(h);
            } else {
                stats.drops_aqm += 1;
                dropped.push((h.p, DropCause::Aqm));
                head = pop(src);
                // Linux re-evaluates here only for its side effects on first_above_time.
                self.should_drop(v, now, head.as_ref(), src.backlog_bytes());
            }
            v.dropping = true;
            // Resume the last episode's rate if it ended recently.
            let delta = v.count.wrapping_sub(v.lastcount);
            let recent = now.saturating_sub(v.drop_next)
                < RESUME_WINDOW_INTERVALS.saturating_mul(self.interval_ns);
            v.count = if delta > 1 && recent { delta } else { 1 };
            v.lastcount = v.count;
            v.drop_next = self.control_law(now, v.count);
        }
        let mut h = head?;
        if self.ce_threshold_ns.is_some_and(|th| h.sojourn_ns > th) && h.p.ecn().is_ect() {
            h.p.set_ce();
            if !h.marked {
                stats.ce_marks += 1;
            }
        }
        stats.count_dequeue(h.sojourn_ns);
        Some(h.p)
    }
}

/// Linux `sch_codel`: one FIFO under CoDel, tail drop at the limit.
pub struct Codel<P> {
    q: Backlog<P>,
    held: Held,
    params: CodelParams,
    vars: CodelVars,
}

/// [`CodelSource`] over a whole FIFO.
struct FifoSource<'a, P> {
    q: &'a mut Backlog<P>,
    held: &'a mut Occupancy,
}

impl<P: PathPacket> CodelSource<P> for FifoSource<'_, P> {
    #[inline]
    fn pop(&mut self) -> Option<(Nanos, P)> {
        self.q.pop(self.held)
    }
    #[inline]
    fn backlog_bytes(&self) -> u64 {
        self.held.bytes
    }
}

impl<P: PathPacket> Codel<P> {
    pub fn new(spec: &QdiscSpec, ctx: &LinkContext) -> Codel<P> {
        let QdiscSpec::Codel { target_ns, interval_ns, ce_threshold_ns, ecn } = *spec else {
            panic!("Codel built from {spec:?}");
        };
        Codel {
            q: Backlog::new(),
            held: Held::new(ctx.limit, Some(DEFAULT_LIMIT_PACKETS), 1),
            params: CodelParams::new(target_ns, interval_ns, ce_threshold_ns, ecn),
            vars: CodelVars::default(),
        }
    }
}

impl<P: PathPacket> Aqm<P> for Codel<P> {
    fn enqueue(&mut self, now: Nanos, p: P, _io: &mut AqmIo<'_, P>) -> Result<(), (P, DropCause)> {
        let p = self.held.tail_drop(0, p)?;
        self.q.push(now, p, &mut self.held.occupancy, &mut self.held.stats.classes[0]);
        Ok(())
    }

    fn dequeue(&mut self, now: Nanos, io: &mut AqmIo<'_, P>) -> Option<P> {
        let c = &mut self.held.stats.classes[0];
        let mut src = FifoSource { q: &mut self.q, held: &mut self.held.occupancy };
        self.params.dequeue(&mut self.vars, now, &mut src, c, io.dropped)
    }

    held_in_field!();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::testbed::{cbr, merge, Service, Testbed};
    use crate::aqm::AnyAqm;
    use crate::aqm::Limit;
    use crate::{Ecn, TestPacket};

    /// Every test packet is 1000 bytes and takes 1 ms to send.
    const BYTES: u32 = 1000;
    const SERVICE_NS: Nanos = MS;

    fn codel(ecn: bool, ce_threshold_ns: Option<Nanos>, target_ns: Nanos) -> AnyAqm<TestPacket> {
        let spec =
            QdiscSpec::Codel { target_ns, interval_ns: DEFAULT_INTERVAL_NS, ce_threshold_ns, ecn };
        AnyAqm::build(&spec, &LinkContext::default())
    }

    /// Overload: one packet every 0.8 ms (1.25× the drain rate) over `[start, end)`, then a
    /// light load (one packet every 2 ms, half the drain rate) until `light_end`.
    fn overload_then_light(
        ecn: Ecn,
        start: Nanos,
        end: Nanos,
        light_end: Nanos,
        first_seq: u64,
    ) -> Vec<(Nanos, TestPacket)> {
        let heavy = cbr(1, BYTES, ecn, start, end, 800_000, first_seq);
        let n = heavy.len() as u64;
        merge(vec![heavy, cbr(1, BYTES, ecn, end, light_end, 2 * MS, first_seq + n)])
    }

    fn run(q: AnyAqm<TestPacket>, arrivals: &[(Nanos, TestPacket)]) -> Testbed<AnyAqm<TestPacket>> {
        let mut tb = Testbed::new(q, Service::PerPacketNs(SERVICE_NS));
        tb.run(arrivals.iter().cloned());
        tb.drain();
        tb
    }

    /// Sojourn of a packet that left at `at_ns`, from the arrival list (seq = index).
    fn sojourn(arrivals: &[(Nanos, TestPacket)], seq: u64, at_ns: Nanos) -> Nanos {
        let (t, p) = &arrivals[seq as usize];
        assert_eq!(p.seq, seq);
        at_ns - t
    }

    /// The drop times the control law schedules after a first drop at `d1` with `count0`:
    /// drop j+1 is due `interval/sqrt(count0 + j - 1)` after drop j's due time.
    fn schedule(d1: Nanos, count0: u32, n: usize) -> Vec<f64> {
        let mut due = vec![d1 as f64];
        for j in 0..n.saturating_sub(1) {
            let count = (count0 + j as u32) as f64;
            due.push(due[j] + DEFAULT_INTERVAL_NS as f64 / count.sqrt());
        }
        due
    }

    /// Each event at `times[j]` is the first dequeue at or after `due[j]`: within one service
    /// time after it (1 µs of slack for the law's rounding to whole ns).
    fn assert_on_schedule(times: &[Nanos], due: &[f64]) {
        for (j, (&t, &d)) in times.iter().zip(due).enumerate() {
            let t = t as f64;
            assert!(t + 1e3 >= d && t < d + SERVICE_NS as f64, "event {j} at {t}, due {d}");
        }
    }

    #[test]
    fn drops_after_an_interval_above_target_at_the_control_law_rate_then_stops() {
        let arrivals = overload_then_light(Ecn::NotEct, 0, 700 * MS, 1400 * MS, 0);
        let tb = run(codel(false, None, DEFAULT_TARGET_NS), &arrivals);
        let drops: Vec<Nanos> = tb.dropped.iter().map(|d| d.at_ns).collect();
        assert!(tb.dropped.iter().all(|d| d.cause == DropCause::Aqm));

        // The first drop: the first dequeue strictly after an interval since the sojourn first
        // reached the target.
        let above = tb.sent.iter().find(|s| sojourn(&arrivals, s.pkt.seq, s.at_ns) >= 5 * MS);
        let first_above = above.expect("the queue builds").at_ns;
        let d1 = drops[0];
        assert!(d1 > first_above + DEFAULT_INTERVAL_NS, "first drop {d1} too early");
        assert!(d1 <= first_above + DEFAULT_INTERVAL_NS + SERVICE_NS, "first drop {d1} late");

        // Then drops come interval/sqrt(count) apart, measured from the previous due time.
        // The sojourn falls below target during the light load: no drop after that.
        let below = tb
            .sent
            .iter()
            .find(|s| s.at_ns > 700 * MS && sojourn(&arrivals, s.pkt.seq, s.at_ns) < 5 * MS)
            .expect("the queue drains")
            .at_ns;
        assert!(drops.iter().all(|&t| t < below), "drops {drops:?} after {below}");
        assert!(drops.len() >= 12, "{drops:?}");
        assert!(drops.iter().any(|&t| t > 700 * MS), "the dropping state outlives the overload");
        assert_on_schedule(&drops, &schedule(d1, 1, drops.len()));
        // Gaps shrink: 100 ms, 70.7 ms, 57.7 ms, ... (not 100/count).
        let gap = |j: usize| drops[j + 1] - drops[j];
        assert!(gap(0) > 99 * MS && gap(1) > 70 * MS && gap(1) < 72 * MS);

        let s = &tb.q.stats().classes[0];
        assert_eq!((s.drops_aqm, s.ce_marks, s.drops_overflow), (drops.len() as u64, 0, 0));
        assert_eq!(s.dequeued, tb.sent.len() as u64);
        assert_eq!(s.sojourn.count(), tb.sent.len() as u64);
        assert_eq!(s.enqueued, arrivals.len() as u64);
        let max_sojourn = tb.sent.iter().map(|x| sojourn(&arrivals, x.pkt.seq, x.at_ns)).max();
        assert_eq!(Some(s.sojourn.max_ns()), max_sojourn);
    }

    #[test]
    fn marks_ecn_capable_packets_where_it_would_drop() {
        let not_ect = overload_then_light(Ecn::NotEct, 0, 700 * MS, 1400 * MS, 0);
        let dropping = run(codel(true, None, DEFAULT_TARGET_NS), &not_ect);
        let ect = overload_then_light(Ecn::Ect0, 0, 700 * MS, 1400 * MS, 0);
        let marking = run(codel(true, None, DEFAULT_TARGET_NS), &ect);
        // Not ECN-capable: dropped even with ECN on.
        let drops: Vec<Nanos> = dropping.dropped.iter().map(|d| d.at_ns).collect();
        assert!(drops.len() >= 12);
        // ECN-capable: marked and sent, never dropped, on the same schedule (marks do not
        // shorten the queue, so the sojourn stays above target through the overload).
        assert!(marking.dropped.is_empty());
        let marks: Vec<Nanos> =
            marking.sent.iter().filter(|s| s.pkt.ecn == Ecn::Ce).map(|s| s.at_ns).collect();
        let in_overload = drops.iter().filter(|&&t| t < 700 * MS).count();
        assert_eq!(marks[..in_overload], drops[..in_overload]);
        assert_on_schedule(&marks, &schedule(marks[0], 1, marks.len()));
        let s = &marking.q.stats().classes[0];
        assert_eq!((s.drops_aqm, s.ce_marks), (0, marks.len() as u64));
        // ECN off: ECN-capable packets are dropped like the others.
        let ecn_off = run(codel(false, None, DEFAULT_TARGET_NS), &ect);
        assert_eq!(ecn_off.dropped.iter().map(|d| d.at_ns).collect::<Vec<_>>(), drops);
        assert!(ecn_off.sent.iter().all(|s| s.pkt.ecn == Ecn::Ect0));
    }

    #[test]
    fn ce_threshold_marks_ect_packets_above_it_only() {
        let threshold = 3 * MS;
        // Every third packet not ECN-capable; the control law out of reach (target 1 s).
        let mut arrivals = cbr(1, BYTES, Ecn::Ect0, 0, 200 * MS, 800_000, 0);
        for (_, p) in arrivals.iter_mut().filter(|(_, p)| p.seq % 3 == 1) {
            p.ecn = Ecn::NotEct;
        }
        let tb = run(codel(false, Some(threshold), 1_000 * MS), &arrivals);
        assert!(tb.dropped.is_empty());
        let mut marked = 0;
        for s in &tb.sent {
            let (sj, was) =
                (sojourn(&arrivals, s.pkt.seq, s.at_ns), arrivals[s.pkt.seq as usize].1.ecn);
            let want = if was == Ecn::Ect0 && sj > threshold { Ecn::Ce } else { was };
            assert_eq!(s.pkt.ecn, want, "seq {} sojourn {sj}", s.pkt.seq);
            marked += (s.pkt.ecn == Ecn::Ce) as u64;
        }
        // Packet 15 waited exactly 3 ms (arrived at 12 ms, left at 15 ms): not above.
        assert_eq!(sojourn(&arrivals, 15, tb.sent[15].at_ns), threshold);
        assert_eq!(tb.sent[15].pkt.ecn, Ecn::Ect0);
        assert!(marked > 50);
        assert_eq!(tb.q.stats().classes[0].ce_marks, marked);
    }

    /// Two overload episodes; returns the first two drop times of the second and the number
    /// of drops in the first.
    fn second_episode(gap_ns: Nanos) -> (Nanos, Nanos, usize) {
        let ep1 = overload_then_light(Ecn::NotEct, 0, 400 * MS, 800 * MS, 0);
        let start2 = 800 * MS + gap_ns;
        let ep2 = overload_then_light(Ecn::NotEct, start2, start2 + 400 * MS, start2 + 800 * MS, 0);
        let n1 = ep1.len() as u64;
        let ep2 = ep2.into_iter().map(|(t, mut p)| {
            p.seq += n1;
            (t, p)
        });
        let arrivals: Vec<_> = ep1.into_iter().chain(ep2).collect();
        let tb = run(codel(false, None, DEFAULT_TARGET_NS), &arrivals);
        let first: Vec<_> = tb.dropped.iter().filter(|d| d.at_ns < start2).collect();
        let second: Vec<_> = tb.dropped.iter().filter(|d| d.at_ns >= start2).collect();
        (second[0].at_ns, second[1].at_ns, first.len())
    }

    #[test]
    fn reentry_soon_after_resumes_at_count_minus_lastcount() {
        // Back above target within 16 intervals of the last scheduled drop: the episode's
        // count resumes at delta = count - lastcount = (drops in episode 1) - 1.
        let (d1, d2, n1) = second_episode(0);
        assert!(n1 >= 4, "{n1} drops in the first episode");
        let want = DEFAULT_INTERVAL_NS as f64 / ((n1 - 1) as f64).sqrt();
        let got = (d2 - d1) as f64;
        assert!(got + 1e3 >= want && got < want + SERVICE_NS as f64, "gap {got}, want {want}");
        // Long after (more than 16 intervals): it starts over at count 1, a full interval.
        let (d1, d2, _) = second_episode(2_000 * MS);
        assert!((d2 - d1).abs_diff(DEFAULT_INTERVAL_NS) < SERVICE_NS, "gap {}", d2 - d1);
    }

    #[test]
    fn tail_drops_at_the_link_buffer_or_the_linux_default() {
        let spec = QdiscSpec::Codel {
            target_ns: DEFAULT_TARGET_NS,
            interval_ns: DEFAULT_INTERVAL_NS,
            ce_threshold_ns: None,
            ecn: false,
        };
        let pkt = |seq| TestPacket { bytes: BYTES, ecn: Ecn::NotEct, flow: 1, seq };
        let (mut rng, mut dropped) = (crate::TestRng(1), Vec::new());
        let ctx = LinkContext {
            limit: Limit { bytes: Some(3 * BYTES as u64), packets: None },
            ..Default::default()
        };
        let mut q: AnyAqm<TestPacket> = AnyAqm::build(&spec, &ctx);
        let r: Vec<bool> = (0..4)
            .map(|s| q.enqueue(0, pkt(s), &mut AqmIo::new(&mut rng, &mut dropped)).is_ok())
            .collect();
        assert_eq!(r, [true, true, true, false]);
        assert_eq!(q.stats().classes[0].drops_overflow, 1);
        let mut q: AnyAqm<TestPacket> = AnyAqm::build(&spec, &LinkContext::default());
        let ok = (0..1001)
            .filter(|&s| q.enqueue(0, pkt(s), &mut AqmIo::new(&mut rng, &mut dropped)).is_ok())
            .count();
        assert_eq!(ok as u64, DEFAULT_LIMIT_PACKETS);
    }
}
