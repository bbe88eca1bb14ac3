//! DualPI2, the coupled dual-queue AQM of L4S (RFC 9332; Linux `net/sched/sch_dualpi2.c`),
//! with Linux's defaults.
//!
//! - Classifier (RFC 9332 §2.3; Linux `dualpi2_skb_classify` with `ecn_mask` ECT(1)): ECT(1)
//!   and CE packets wait in the L (low-latency) queue, all others in the classic (C) queue.
//! - Base probability p' (RFC 9332 §2.4 and Appendix A; Linux `calculate_probability`): every
//!   `tupdate`, `p' += alpha·(qdelay − target) + beta·(qdelay − qdelay_old)` with delays in
//!   seconds, clamped to [0, 1]. alpha = 0.16 and beta = 3.2 are RFC 9332 Figure 2's
//!   `0.1·Tupdate/RTT_max²` and `0.3/RTT_max` for Tupdate 16 ms and RTT_max 100 ms, already
//!   per update (Linux's 41/256 and 819/256). qdelay is the *head packet's* sojourn at the
//!   update time, the larger of the two queues' as Linux takes it (RFC 9332 Appendix A.2's
//!   variant; A.1 uses the C queue's alone) — the L queue's exceeds the C queue's only when
//!   unresponsive L4S traffic overloads it, and then p' must rise for it too.
//! - Coupling (RFC 9332 §2.4): the C queue drops (or, for ECT(0), marks) with p_C = p'² —
//!   two independent draws of p', as Linux `dualpi2_classic_marking` does — and the L queue
//!   marks with p_CL = k·p' (`dualpi2_scalable_marking`), k = `coupling_factor`.
//! - Native L4S AQM (RFC 9332 §2.4, Appendix A.1; Linux `do_step_aqm`): an L packet whose
//!   sojourn exceeds `step_threshold` is marked as well, so an L packet is marked with
//!   max(p_CL, step) — the step is a certainty. Linux's `min_qlen_step` (0: always) is not
//!   modelled.
//! - No AQM action while fewer than two MTUs wait in both queues together (Linux `must_drop`).
//! - Overload (RFC 9332 §4.2 and Appendix A.2; Linux `must_drop`): once k·p' > 1 the coupled
//!   L marking is saturated, so with `drop_overload` L packets are dropped with p'² (and the
//!   survivors all marked), and classic ECT packets are dropped with p'² instead of marked: an
//!   unresponsive or excessive load meets drops in both queues rather than an ever-growing
//!   queue.
//! - Scheduler: Linux's C-queue protection, a weighted round robin by bytes with a credit
//!   (`dequeue_packet`), chosen over the time-shifted FIFO of RFC 9332 Appendix A so that the
//!   model is the qdisc a Linux bottleneck runs. While both queues hold packets the C queue
//!   gets `c_protection_percent` (10 %) of the bytes and the L queue the rest; the credit
//!   starts in the L queue's favour and is reset when both empty.
//! - Marks and drops happen at dequeue (Linux's default `drop_early` off), so a dropped packet
//!   has used its buffer space; the shared limit is the link's buffer (Linux's default 10000
//!   packets without).
//!
//! Time-driven updates without a timer: every enqueue and dequeue first performs the updates
//! whose times have passed, each with the head sojourns at that update's own time — the queues
//! do not change between two calls, so this is exact. With both queues empty and p' = 0 the
//! updates are a fixed point and are skipped. The first update is `tupdate` after creation.
//!
//! Stats: `classes[0]` the C queue, `classes[1]` the L queue. p' is an `f64` (Linux: u32).

use super::backlog::Backlog;
use super::pie::MTU_BYTES;
use super::{Aqm, AqmIo, DropCause, Held, LinkContext, QdiscSpec};
use crate::{Nanos, PathPacket, Random, MS};

/// Linux `dualpi2_reset_default`: limit 10000 packets ("max 125 ms at 1 Gbps").
const DEFAULT_LIMIT_PACKETS: u64 = 10_000;
/// Round-robin weights are percentages that add up to this (Linux `MAX_WC`).
const MAX_WC: i64 = 100;

// The spec's defaults: Linux `dualpi2_reset_default` (RFC 9332 Appendix A.1 Figure 2).
pub(crate) fn default_target_ns() -> u64 {
    15 * MS
}
pub(crate) fn default_tupdate_ns() -> u64 {
    16 * MS
}
pub(crate) fn default_alpha() -> f64 {
    0.16
}
pub(crate) fn default_beta() -> f64 {
    3.2
}
pub(crate) fn default_step_threshold_ns() -> u64 {
    MS
}
/// k = 2: window fairness between Reno-friendly and scalable flows of equal RTT (RFC 9332 §2.1).
pub(crate) fn default_coupling_factor() -> f64 {
    2.0
}
pub(crate) fn default_c_protection_percent() -> u8 {
    10
}
pub(crate) fn default_drop_overload() -> bool {
    true
}

/// Queue indices, also the stats classes.
const C: usize = 0;
const L: usize = 1;

/// What the coupled AQM does to a dequeued packet.
enum Verdict {
    Pass,
    Mark,
    Drop,
}

pub struct DualPi2<P> {
    /// The classic and the L queue, indexed by `C` and `L`: (enqueue time, packet).
    queues: [Backlog<P>; 2],
    held: Held,
    // Parameters.
    target_ns: Nanos,
    tupdate_ns: Nanos,
    alpha_hz: f64,
    beta_hz: f64,
    step_threshold_ns: Nanos,
    coupling: f64,
    weight_c: i64,
    weight_l: i64,
    drop_overload: bool,
    // State.
    /// The base probability p'.
    prob: f64,
    last_qdelay_ns: Nanos,
    next_update: Nanos,
    /// WRR credit in weighted bytes: the L queue is served while it is ≤ 0.
    credit: i64,
    credit_init: i64,
}

impl<P: PathPacket> DualPi2<P> {
    pub fn new(spec: &QdiscSpec, ctx: &LinkContext) -> DualPi2<P> {
        let QdiscSpec::DualPi2 {
            target_ns,
            tupdate_ns,
            alpha,
            beta,
            step_threshold_ns,
            coupling_factor,
            c_protection_percent,
            drop_overload,
        } = *spec
        else {
            unreachable!("DualPi2::new with {spec:?}")
        };
        let weight_c = (c_protection_percent as i64).min(MAX_WC);
        let weight_l = MAX_WC - weight_c;
        // Linux `dualpi2_calculate_c_protection`: an MTU's worth of the weight difference.
        let credit_init = MTU_BYTES as i64 * (weight_c - weight_l);
        DualPi2 {
            queues: [Backlog::new(), Backlog::new()],
            held: Held::new(ctx.limit, Some(DEFAULT_LIMIT_PACKETS), 2),
            target_ns,
            tupdate_ns: tupdate_ns.max(1),
            alpha_hz: alpha,
            beta_hz: beta,
            step_threshold_ns,
            coupling: coupling_factor,
            weight_c,
            weight_l,
            drop_overload,
            prob: 0.0,
            last_qdelay_ns: 0,
            next_update: tupdate_ns.max(1),
            credit: credit_init,
            credit_init,
        }
    }

    /// The base probability p' (classic: p'², L4S: k·p').
    pub fn base_prob(&self) -> f64 {
        self.prob
    }

    /// Packets waiting in the classic (0) or L (1) queue.
    pub fn queue_packets(&self, class: usize) -> u64 {
        self.queues[class].packets()
    }

    #[cfg(test)]
    pub(crate) fn limit_packets(&self) -> Option<u64> {
        self.held.limit().packets
    }

    #[cfg(test)]
    pub(crate) fn set_base_prob(&mut self, p: f64) {
        self.prob = p;
    }

    /// The head packet's sojourn in queue `i` at `t` (0 if empty).
    fn head_sojourn(&self, i: usize, t: Nanos) -> Nanos {
        self.queues[i].head_time().map_or(0, |e| t.saturating_sub(e))
    }

    /// Perform the PI updates due at or before `now` (see the header: lazy, exact).
    fn catch_up(&mut self, now: Nanos) {
        while self.next_update <= now {
            let t = self.next_update;
            let qdelay = self.head_sojourn(C, t).max(self.head_sojourn(L, t));
            let secs = |ns: Nanos| ns as f64 * 1e-9;
            let delta = self.alpha_hz * (secs(qdelay) - secs(self.target_ns))
                + self.beta_hz * (secs(qdelay) - secs(self.last_qdelay_ns));
            self.last_qdelay_ns = qdelay;
            self.prob = (self.prob + delta).clamp(0.0, 1.0);
            if !self.drop_overload {
                // Linux: cap k·p' at 1 to keep window fairness when not dropping on overload.
                self.prob = self.prob.min(1.0 / self.coupling);
            }
            self.next_update += self.tupdate_ns;
            if self.prob == 0.0 && qdelay == 0 && self.next_update <= now {
                // Both queues empty and p' = 0: a fixed point until a packet arrives.
                let skipped = (now - self.next_update) / self.tupdate_ns + 1;
                self.next_update += skipped * self.tupdate_ns;
            }
        }
    }

    /// Linux `must_drop` with `dualpi2_classic_marking`/`dualpi2_scalable_marking`.
    fn coupled_aqm(&self, queue: usize, ect: bool, rng: &mut dyn Random) -> Verdict {
        if self.bytes() < 2 * MTU_BYTES {
            return Verdict::Pass;
        }
        let p = self.prob;
        let p_cl = self.coupling * p;
        let overload = p_cl > 1.0;
        let mut roll = |prob: f64| rng.next_f64() < prob;
        if queue == C {
            if roll(p) && roll(p) {
                return if overload || !ect { Verdict::Drop } else { Verdict::Mark };
            }
            return Verdict::Pass;
        }
        if overload {
            return if self.drop_overload && roll(p) && roll(p) {
                Verdict::Drop
            } else {
                Verdict::Mark
            };
        }
        if roll(p_cl) {
            return if ect { Verdict::Mark } else { Verdict::Drop };
        }
        Verdict::Pass
    }
}

impl<P: PathPacket> Aqm<P> for DualPi2<P> {
    fn enqueue(&mut self, now: Nanos, p: P, _io: &mut AqmIo<'_, P>) -> Result<(), (P, DropCause)> {
        self.catch_up(now);
        let i = if p.ecn().is_l4s() { L } else { C };
        let p = self.held.tail_drop(i, p)?;
        self.queues[i].push(now, p, &mut self.held.occupancy, &mut self.held.stats.classes[i]);
        Ok(())
    }

    fn dequeue(&mut self, now: Nanos, io: &mut AqmIo<'_, P>) -> Option<P> {
        self.catch_up(now);
        loop {
            // Linux `dequeue_packet`: L while the credit allows or C is empty.
            let (l_len, c_len) = (self.queues[L].packets(), self.queues[C].packets());
            let (i, weight) = if l_len > 0 && (c_len == 0 || self.credit <= 0) {
                (L, if c_len > 0 { self.weight_c } else { 0 })
            } else if c_len > 0 {
                (C, if l_len > 0 { -self.weight_l } else { 0 })
            } else {
                self.credit = self.credit_init;
                return None;
            };
            let popped = self.queues[i].pop(&mut self.held.occupancy);
            let (t, mut p) = popped.expect("queue checked non-empty");
            let wire = p.wire_bytes();
            let ect = p.ecn().is_ect();
            let mut mark = match self.coupled_aqm(i, ect, io.rng) {
                Verdict::Drop => {
                    self.held.stats.classes[i].drops_aqm += 1;
                    io.dropped.push((p, DropCause::Aqm));
                    continue;
                }
                Verdict::Mark => true,
                Verdict::Pass => false,
            };
            let sojourn = now - t;
            // The L queue's own step AQM; the classifier admits only ECN-capable packets there.
            mark |= i == L && sojourn > self.step_threshold_ns;
            let c = &mut self.held.stats.classes[i];
            if mark && ect {
                p.set_ce();
                c.ce_marks += 1;
            }
            self.credit += weight * wire as i64;
            c.count_dequeue(sojourn);
            return Some(p);
        }
    }

    held_in_field!();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::testbed_pie::{lazy_vs_ticked, window_mean_ns, Bench, ConstRate, PKT_BYTES};
    use crate::{Ecn, TestPacket, TestRng};

    /// 100 Mb/s: 120 µs per 1500-byte packet.
    const RATE_BPS: u64 = 100_000_000;

    fn dualpi2(json: &str) -> DualPi2<TestPacket> {
        let spec: QdiscSpec = serde_json::from_str(json).unwrap();
        DualPi2::new(&spec, &LinkContext { rate_bps: RATE_BPS, ..Default::default() })
    }

    fn pkt(seq: u64, ecn: Ecn) -> TestPacket {
        TestPacket { bytes: PKT_BYTES, ecn, flow: 0, seq }
    }

    #[test]
    fn l4s_codepoints_take_the_l_queue_first_and_are_marked_above_the_step() {
        let mut q = dualpi2(r#"{"kind": "dualpi2"}"#);
        let (mut rng, mut dropped) = (TestRng(1), Vec::new());
        for (seq, ecn) in [(1, Ecn::Ect1), (2, Ecn::Ce), (3, Ecn::Ect0), (4, Ecn::Ect1)] {
            assert!(q.enqueue(0, pkt(seq, ecn), &mut AqmIo::new(&mut rng, &mut dropped)).is_ok());
        }
        assert_eq!((q.queue_packets(C), q.queue_packets(L)), (1, 3));
        // 0.5 ms: below the 1 ms step; 1.5 ms: above it (p' is 0: no coupled marks).
        let mut out = vec![q.dequeue(MS / 2, &mut AqmIo::new(&mut rng, &mut dropped)).unwrap()];
        out.extend(std::iter::from_fn(|| {
            q.dequeue(3 * MS / 2, &mut AqmIo::new(&mut rng, &mut dropped))
        }));
        let got: Vec<_> = out.iter().map(|p| (p.seq, p.ecn)).collect();
        assert_eq!(got, [(1, Ecn::Ect1), (2, Ecn::Ce), (4, Ecn::Ce), (3, Ecn::Ect0)]);
        let s = q.stats();
        assert_eq!((s.classes[L].enqueued, s.classes[L].ce_marks), (3, 2));
        assert_eq!((s.classes[C].enqueued, s.classes[C].ce_marks), (1, 0));
        assert!(dropped.is_empty());
    }

    /// With p' held at `p` (no updates for 1000 s), 40000 dequeues of `ecn` packets from a
    /// standing queue of 20 (a run of drops never takes it below the 2-MTU floor), all at
    /// time 0 (no sojourn, so no step marks): (dropped, marked) fractions of the packets the
    /// queue decided on.
    fn coupled_fractions(p: f64, ecn: Ecn, json: &str) -> (f64, f64) {
        let mut q = dualpi2(json);
        q.set_base_prob(p);
        let (mut rng, mut dropped) = (TestRng(5), Vec::new());
        let mut seq = 0;
        for _ in 0..40_000 {
            while q.packets() < 20 {
                seq += 1;
                assert!(q
                    .enqueue(0, pkt(seq, ecn), &mut AqmIo::new(&mut rng, &mut dropped))
                    .is_ok());
            }
            q.dequeue(0, &mut AqmIo::new(&mut rng, &mut dropped));
        }
        let s = q.stats().total();
        let decided = (s.dequeued + s.drops_aqm) as f64;
        (s.drops_aqm as f64 / decided, s.ce_marks as f64 / decided)
    }

    #[test]
    fn classic_sees_p_squared_l4s_sees_k_p() {
        let fixed = r#"{"kind": "dualpi2", "tupdate_ns": 1000000000000}"#;
        let close = |got: f64, want: f64| (got - want).abs() < 0.01;
        // p' = 0.3: classic p_C = 0.09 (a drop, or a mark for ECT(0)); L4S p_CL = 0.6.
        let (d, m) = coupled_fractions(0.3, Ecn::NotEct, fixed);
        assert!(close(d, 0.09) && m == 0.0, "classic not-ECT: drop {d} mark {m}");
        let (d, m) = coupled_fractions(0.3, Ecn::Ect0, fixed);
        assert!(d == 0.0 && close(m, 0.09), "classic ECT(0): drop {d} mark {m}");
        let (d, m) = coupled_fractions(0.3, Ecn::Ect1, fixed);
        assert!(d == 0.0 && close(m, 0.6), "L4S: drop {d} mark {m}");
        // The coupling follows k: 1.5 gives p_CL = 0.45.
        let k15 = r#"{"kind": "dualpi2", "tupdate_ns": 1000000000000, "coupling_factor": 1.5}"#;
        let (_, m) = coupled_fractions(0.3, Ecn::Ect1, k15);
        assert!(close(m, 0.45), "L4S with k = 1.5: mark {m}");
        // Overload (k·p' = 1.4 > 1): ECN-capable packets of both queues are dropped with p'².
        let (d, m) = coupled_fractions(0.7, Ecn::Ect0, fixed);
        assert!(close(d, 0.49) && m == 0.0, "overloaded classic ECT(0): drop {d} mark {m}");
        let (d, m) = coupled_fractions(0.7, Ecn::Ect1, fixed);
        assert!(close(d, 0.49) && close(m, 0.51), "overloaded L4S: drop {d} mark {m}");
    }

    #[test]
    fn l_queue_keeps_its_delay_while_the_classic_queue_is_controlled() {
        // Unresponsive: classic at 0.9× the link rate, L4S at 0.2×.
        let mut q = dualpi2(r#"{"kind": "dualpi2"}"#);
        let mut bench = Bench::new(RATE_BPS, 2);
        let end = 8000 * MS;
        let mut c = ConstRate::new(0, Ecn::NotEct, 0.9, RATE_BPS, 0, end);
        let mut l = ConstRate::new(1, Ecn::Ect1, 0.2, RATE_BPS, 0, end);
        bench.run(&mut q, &mut [&mut c, &mut l], 3000 * MS);
        let a = q.stats().classes.clone();
        bench.run(&mut q, &mut [&mut c, &mut l], end);
        let b = q.stats().classes.clone();
        let c_ms = window_mean_ns(&a[C], &b[C]) / 1e6;
        assert!((10.0..20.0).contains(&c_ms), "classic mean delay {c_ms} ms");
        // An L packet waits at most for the classic packet being sent and the L ones before it.
        assert!(b[L].sojourn.max_ns() < MS / 2, "L max delay {} ns", b[L].sojourn.max_ns());
        assert!(b[C].drops_aqm > 0 && b[L].drops_aqm == 0 && b[L].ce_marks > 0);
        // The classic queue loses what does not fit: 0.1 of 0.9; p_C = p'² ≈ 1/9.
        let c_drop = (b[C].drops_aqm - a[C].drops_aqm) as f64
            / (b[C].drops_aqm - a[C].drops_aqm + b[C].dequeued - a[C].dequeued) as f64;
        assert!((c_drop - 1.0 / 9.0).abs() < 0.01, "classic drop fraction {c_drop}");
        assert!((q.base_prob() - (1.0f64 / 9.0).sqrt()).abs() < 0.05, "p' {}", q.base_prob());
    }

    #[test]
    fn lazy_updates_after_idle_match_updates_on_time() {
        let [lazy, ticked] = lazy_vs_ticked(|| dualpi2(r#"{"kind": "dualpi2"}"#));
        assert!(lazy.0 > 1000, "the overloads meet drops: {lazy:?}");
        assert_eq!(lazy, ticked);
    }

    /// ECT(0) and ECT(1) each at the link rate, 6 s: the queues' counters.
    fn ecn_overload(json: &str) -> Vec<super::super::ClassStats> {
        let mut q = dualpi2(json);
        let mut bench = Bench::new(RATE_BPS, 4);
        let mut c = ConstRate::new(0, Ecn::Ect0, 1.0, RATE_BPS, 0, 6000 * MS);
        let mut l = ConstRate::new(1, Ecn::Ect1, 1.0, RATE_BPS, 0, 6000 * MS);
        bench.run(&mut q, &mut [&mut c, &mut l], 6000 * MS);
        q.stats().classes.clone()
    }

    #[test]
    fn overload_drops_ecn_packets_instead_of_filling_the_buffer() {
        let s = ecn_overload(r#"{"kind": "dualpi2"}"#);
        assert!(s[C].drops_aqm > 0 && s[L].drops_aqm > 0, "{s:?}");
        assert_eq!(s[C].drops_overflow + s[L].drops_overflow, 0);
        // Without overload dropping, marks alone cannot slow unresponsive senders: the shared
        // 10000-packet buffer fills and tail-drops.
        let s = ecn_overload(r#"{"kind": "dualpi2", "drop_overload": false}"#);
        assert_eq!(s[C].drops_aqm + s[L].drops_aqm, 0);
        assert!(s[C].drops_overflow + s[L].drops_overflow > 0, "{s:?}");
    }
}
