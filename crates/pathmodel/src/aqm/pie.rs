//! PIE, Proportional Integral controller Enhanced (RFC 8033; Linux `net/sched/sch_pie.c` with
//! `include/net/pie.h`): one FIFO whose arrivals are dropped (or CE-marked) at random with a
//! probability p that a PI controller of the queueing delay sets.
//!
//! The model, as Linux runs it with its defaults (`dq_rate_estimator` off, `bytemode` off):
//!
//! - Delay estimate (RFC 8033 §4.3, the timestamp variant; Linux `pie_process_dequeue`): each
//!   packet is stamped at enqueue; at dequeue `qdelay` becomes the sojourn of the packet just
//!   dequeued, or 0 if the queue is now empty. So the controller sees the *last dequeued
//!   packet's* sojourn, held until the next dequeue. The rate-based estimate of RFC 8033 §5.2
//!   (Linux `dq_rate_estimator` on) is not modelled, so `set_rate` is not needed.
//! - Controller (RFC 8033 §4.2; Linux `pie_calculate_probability`), every `tupdate`:
//!   `p += a·(qdelay − target) + b·(qdelay − qdelay_old)` with delays in seconds, where a and b
//!   are `alpha` and `beta` scaled down while p is small (RFC 8033 §4.2 auto-tuning: ÷2 below
//!   10 %, then ÷4 more per decade below 1 %, down to 0.0001 %, so ÷2048 at most). Linux's
//!   guards are kept: a rise is capped at 2 % per update once p ≥ 10 %; p rises by a further
//!   2 % per update while qdelay > 250 ms; p decays by 1/64 per update once qdelay and
//!   qdelay_old are both 0; and when both are below target/2 with p = 0 the state is reset
//!   (burst allowance restored, `pie_vars_init`).
//! - Burst allowance (RFC 8033 §4.4): no early drop until `max_burst` has run out; Linux counts
//!   it down by the time between successive dequeues.
//! - Early drop at enqueue (RFC 8033 §4.1; Linux `pie_drop_early`): none while burst allowance
//!   is left, while qdelay < target/2 and p < 20 %, or while fewer than two MTUs are queued.
//!   Otherwise de-randomized (RFC 8033 §5.4): the probabilities of successive arrivals add up
//!   in `accu_prob`; no drop below 0.85, a certain drop from 8.5, a draw of p between.
//! - ECN (RFC 8033 §5.1): with `ecn` on, an ECN-capable packet chosen for an early drop is
//!   CE-marked and queued instead while p ≤ `mark_ecn_threshold` (Linux: 10 %, fixed).
//! - Tail drop at the buffer limit (the link's buffer; Linux's default 1000 packets without).
//!
//! Time-driven updates without a timer: Linux runs `pie_calculate_probability` from a timer.
//! Here every enqueue and dequeue first performs the updates whose times have passed (several
//! after a quiet spell), each with the state it would have seen then — nothing changes the
//! state between two calls, so this is exact. After an idle spell the updates reach a fixed
//! point (p = 0, qdelay = 0, state reset) and the rest are skipped. The first update is
//! `tupdate` after creation (Linux arms its first timer at HZ/2).
//!
//! Deviations: p is an `f64` rather than Linux's 56-bit fixed point; `accu_prob` is cleared by
//! every early-drop decision, also the certain one (≥ 8.5) that becomes a CE mark — Linux
//! keeps it there, and then marks every ECN packet until a real drop clears it. `bytemode`
//! (smaller packets dropped less) is not modelled.

use super::backlog::Backlog;
use super::{Aqm, AqmIo, DropCause, Held, LinkContext, QdiscSpec};
use crate::{Nanos, PathPacket, Random, MS};

/// The MTU on the wire that Linux's `psched_mtu()` gives for an Ethernet-sized device: PIE's
/// and DualPI2's "fewer than two MTUs queued: no AQM action" floor, and DualPI2's WRR credit.
pub(crate) const MTU_BYTES: u64 = 1500;

/// Linux `pie_drop_early`: no early drop while qdelay < target/2 and p is below this.
const NO_DROP_BELOW_PROB: f64 = 0.2;
/// RFC 8033 §5.5 (cap drop adjustment), Linux `pie_calculate_probability`: a rise of p is
/// capped at this per update once p ≥ 10 %.
const MAX_RISE_PER_UPDATE: f64 = 0.02;
/// Linux/RFC 8033 Appendix B: above this queueing delay p rises by `MAX_RISE_PER_UPDATE` more.
const HIGH_DELAY_NS: Nanos = 250 * MS;
/// De-randomization (RFC 8033 §5.4): no drop before the accumulated probability reaches this…
const ACCU_NO_DROP_BELOW: f64 = 0.85;
/// …and a certain drop once it reaches this.
const ACCU_CERTAIN_DROP: f64 = 8.5;
/// Linux's `limit` default (packets) when the link gives no buffer.
const DEFAULT_LIMIT_PACKETS: u64 = 1000;

// The spec's defaults: Linux `pie_params_init`/`pie_vars_init` (RFC 8033 §4: QDELAY_REF 15 ms,
// T_UPDATE 15 ms, MAX_BURST 150 ms; alpha 0.125 Hz and beta 1.25 Hz, Linux's 2/16 and 20/16).
pub(crate) fn default_target_ns() -> u64 {
    15 * MS
}
pub(crate) fn default_tupdate_ns() -> u64 {
    15 * MS
}
pub(crate) fn default_alpha() -> f64 {
    0.125
}
pub(crate) fn default_beta() -> f64 {
    1.25
}
pub(crate) fn default_max_burst_ns() -> u64 {
    150 * MS
}
/// Linux `pie_qdisc_enqueue`: marks instead of drops only while p ≤ 10 % (RFC 8033 §5.1).
pub(crate) fn default_mark_ecn_threshold() -> f64 {
    0.1
}

pub struct Pie<P> {
    q: Backlog<P>,
    held: Held,
    // Parameters.
    target_ns: Nanos,
    tupdate_ns: Nanos,
    alpha_hz: f64,
    beta_hz: f64,
    max_burst_ns: Nanos,
    ecn: bool,
    mark_ecn_threshold: f64,
    // Controller state (Linux `struct pie_vars`).
    prob: f64,
    accu_prob: f64,
    qdelay_ns: Nanos,
    qdelay_old_ns: Nanos,
    burst_left_ns: Nanos,
    last_dequeue: Option<Nanos>,
    next_update: Nanos,
}

impl<P: PathPacket> Pie<P> {
    pub fn new(spec: &QdiscSpec, ctx: &LinkContext) -> Pie<P> {
        let QdiscSpec::Pie {
            target_ns,
            tupdate_ns,
            alpha,
            beta,
            max_burst_ns,
            ecn,
            mark_ecn_threshold,
        } = *spec
        else {
            unreachable!("Pie::new with {spec:?}")
        };
        Pie {
            q: Backlog::new(),
            held: Held::new(ctx.limit, Some(DEFAULT_LIMIT_PACKETS), 1),
            target_ns,
            tupdate_ns: tupdate_ns.max(1),
            alpha_hz: alpha,
            beta_hz: beta,
            max_burst_ns,
            ecn,
            mark_ecn_threshold,
            prob: 0.0,
            accu_prob: 0.0,
            qdelay_ns: 0,
            qdelay_old_ns: 0,
            burst_left_ns: max_burst_ns,
            last_dequeue: None,
            next_update: tupdate_ns.max(1),
        }
    }

    /// The drop/mark probability p (0..=1).
    pub fn prob(&self) -> f64 {
        self.prob
    }

    /// The queueing delay the controller last saw (the last dequeued packet's sojourn).
    pub fn qdelay_ns(&self) -> Nanos {
        self.qdelay_ns
    }

    /// Burst allowance left (no early drops while it is above 0).
    pub fn burst_left_ns(&self) -> Nanos {
        self.burst_left_ns
    }

    /// Linux `pie_vars_init`: what a quiet queue restarts from (p itself is kept).
    fn reset_vars(&mut self) {
        self.burst_left_ns = self.max_burst_ns;
        self.last_dequeue = None;
        self.accu_prob = 0.0;
    }

    /// Perform the updates due at or before `now` (see the header: lazy, exact).
    fn catch_up(&mut self, now: Nanos) {
        while self.next_update <= now {
            self.update_prob();
            self.next_update += self.tupdate_ns;
            let quiet = self.prob == 0.0 && self.qdelay_ns == 0 && self.qdelay_old_ns == 0;
            if quiet && self.next_update <= now {
                // A fixed point: further updates change nothing until a packet moves.
                let skipped = (now - self.next_update) / self.tupdate_ns + 1;
                self.next_update += skipped * self.tupdate_ns;
            }
        }
    }

    /// One controller step (RFC 8033 §4.2; Linux `pie_calculate_probability`, timestamp mode).
    fn update_prob(&mut self) {
        let (qdelay, qdelay_old) = (self.qdelay_ns, self.qdelay_old_ns);
        let mut update_prob = !(qdelay == 0 && self.held.bytes() != 0);
        // Auto-tuning: smaller steps while p is small (RFC 8033 §4.2's table).
        let (mut alpha, mut beta) = (self.alpha_hz, self.beta_hz);
        if self.prob < 0.1 {
            alpha /= 2.0;
            beta /= 2.0;
            let mut power = 100u32;
            while self.prob < 1.0 / power as f64 && power <= 1_000_000 {
                alpha /= 4.0;
                beta /= 4.0;
                power *= 10;
            }
        }
        let secs = |ns: Nanos| ns as f64 * 1e-9;
        let mut delta = alpha * (secs(qdelay) - secs(self.target_ns))
            + beta * (secs(qdelay) - secs(qdelay_old));
        if delta > MAX_RISE_PER_UPDATE && self.prob >= 0.1 {
            delta = MAX_RISE_PER_UPDATE;
        }
        if qdelay > HIGH_DELAY_NS {
            delta += MAX_RISE_PER_UPDATE;
        }
        self.prob += delta;
        if self.prob >= 1.0 {
            self.prob = 1.0;
            update_prob = false;
        } else if self.prob < 0.0 {
            self.prob = 0.0;
        }
        if qdelay == 0 && qdelay_old == 0 && update_prob {
            self.prob -= self.prob / 64.0;
        }
        let half = self.target_ns / 2;
        if qdelay < half && qdelay_old < half && self.prob == 0.0 {
            self.reset_vars();
        }
        self.qdelay_old_ns = qdelay;
    }

    /// Linux `pie_drop_early`: whether an arrival of `wire_bytes` is chosen for an early drop.
    fn drop_early(&mut self, rng: &mut dyn Random) -> bool {
        if self.burst_left_ns > 0 {
            return false;
        }
        if self.qdelay_ns < self.target_ns / 2 && self.prob < NO_DROP_BELOW_PROB {
            return false;
        }
        if self.held.bytes() < 2 * MTU_BYTES {
            return false;
        }
        if self.prob == 0.0 {
            self.accu_prob = 0.0;
        } else {
            self.accu_prob += self.prob;
        }
        if self.accu_prob < ACCU_NO_DROP_BELOW {
            return false;
        }
        if self.accu_prob >= ACCU_CERTAIN_DROP || rng.next_f64() < self.prob {
            self.accu_prob = 0.0;
            return true;
        }
        false
    }
}

impl<P: PathPacket> Aqm<P> for Pie<P> {
    fn enqueue(&mut self, now: Nanos, p: P, io: &mut AqmIo<'_, P>) -> Result<(), (P, DropCause)> {
        self.catch_up(now);
        let tail = self.held.tail_drop(0, p);
        let mut p = tail.inspect_err(|_| self.accu_prob = 0.0)?;
        if self.drop_early(io.rng) {
            if self.ecn && self.prob <= self.mark_ecn_threshold && p.ecn().is_ect() {
                p.set_ce();
                self.held.stats.classes[0].ce_marks += 1;
            } else {
                self.held.stats.classes[0].drops_aqm += 1;
                return Err((p, DropCause::Aqm));
            }
        }
        self.q.push(now, p, &mut self.held.occupancy, &mut self.held.stats.classes[0]);
        Ok(())
    }

    fn dequeue(&mut self, now: Nanos, _io: &mut AqmIo<'_, P>) -> Option<P> {
        self.catch_up(now);
        let held = &mut self.held;
        let entered = self.q.head_time()?;
        let p = self.q.dequeue(now, &mut held.occupancy, &mut held.stats.classes[0])?;
        let sojourn = now - entered;
        // Linux `pie_process_dequeue`, timestamp mode.
        self.qdelay_ns = if held.bytes() == 0 { 0 } else { sojourn };
        let dtime = self.last_dequeue.map_or(0, |t| now - t);
        self.last_dequeue = Some(now);
        self.burst_left_ns = self.burst_left_ns.saturating_sub(dtime);
        Some(p)
    }

    held_in_field!();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::testbed_pie::{lazy_vs_ticked, tx_ns, window_mean_ns};
    use crate::aqm::testbed_pie::{Aimd, Bench, ConstRate, PKT_BYTES};
    use crate::aqm::AnyAqm;
    use crate::aqm::Limit;
    use crate::{Ecn, TestPacket, TestRng};

    /// 100 Mb/s: 120 µs per 1500-byte packet.
    const RATE_BPS: u64 = 100_000_000;

    fn pie(json: &str, limit_packets: u64) -> Pie<TestPacket> {
        let spec: QdiscSpec = serde_json::from_str(json).unwrap();
        let limit = Limit { bytes: None, packets: Some(limit_packets) };
        Pie::new(&spec, &LinkContext { rate_bps: RATE_BPS, limit, ..Default::default() })
    }

    #[test]
    fn kinds_parse_to_linux_defaults_and_build_through_the_registry() {
        let ctx = LinkContext::default();
        let pie: QdiscSpec = serde_json::from_str(r#"{"kind": "pie"}"#).unwrap();
        let want = QdiscSpec::Pie {
            target_ns: 15_000_000,
            tupdate_ns: 15_000_000,
            alpha: 0.125,
            beta: 1.25,
            max_burst_ns: 150_000_000,
            ecn: false,
            mark_ecn_threshold: 0.1,
        };
        assert_eq!(pie, want);
        assert!(matches!(AnyAqm::<TestPacket>::build(&pie, &ctx), AnyAqm::Pie(_)));
        let dual: QdiscSpec = serde_json::from_str(r#"{"kind": "dualpi2"}"#).unwrap();
        let want = QdiscSpec::DualPi2 {
            target_ns: 15_000_000,
            tupdate_ns: 16_000_000,
            alpha: 0.16,
            beta: 3.2,
            step_threshold_ns: 1_000_000,
            coupling_factor: 2.0,
            c_protection_percent: 10,
            drop_overload: true,
        };
        assert_eq!(dual, want);
        assert!(matches!(AnyAqm::<TestPacket>::build(&dual, &ctx), AnyAqm::DualPi2(_)));
        // Without a buffer on the link, Linux's limits: 1000 and 10000 packets.
        assert_eq!(Pie::<TestPacket>::new(&pie, &ctx).held.limit().packets, Some(1000));
        let q = super::super::dualpi2::DualPi2::<TestPacket>::new(&dual, &ctx);
        assert_eq!(q.limit_packets(), Some(10_000));
    }

    /// Hold the controller's delay at `lag_ms` (one 100-byte packet a millisecond, each dequeued
    /// `lag_ms` after it arrived: the queue never holds 2 MTUs, so nothing is dropped) from
    /// `from_ms` to `to_ms`; p after each update.
    fn hold_delay(q: &mut Pie<TestPacket>, from_ms: u64, to_ms: u64, lag_ms: u64) -> Vec<f64> {
        let (mut rng, mut dropped, mut ps) = (TestRng(7), Vec::new(), Vec::new());
        for k in from_ms..to_ms {
            let now = k * MS;
            let p = TestPacket { bytes: 100, ecn: Ecn::NotEct, flow: 0, seq: k };
            assert!(q.enqueue(now, p, &mut AqmIo::new(&mut rng, &mut dropped)).is_ok());
            while q.q.head_time().is_some_and(|t| now - t >= lag_ms * MS) {
                q.dequeue(now, &mut AqmIo::new(&mut rng, &mut dropped));
            }
            if k % 15 == 0 {
                ps.push(q.prob());
            }
        }
        ps
    }

    #[test]
    fn p_rises_above_target_falls_below_with_auto_tuned_steps() {
        let mut q = pie(r#"{"kind": "pie"}"#, 1000);
        // 29 ms: 14 ms above target; p must rise at every update once the delay is steady.
        let up = hold_delay(&mut q, 0, 3000, 29);
        assert_eq!(q.qdelay_ns(), 29 * MS);
        for w in up[3..].windows(2) {
            assert!(w[1] > w[0], "p fell while the delay was above target: {w:?}");
        }
        // RFC 8033 §4.2's scaling: 0.125 Hz × 14 ms halved for 1 % ≤ p < 10 %, unscaled above.
        let step_at = |lo: f64, hi: f64| {
            let w = up.windows(2).find(|w| w[0] >= lo && w[0] < hi).expect("p crossed the band");
            w[1] - w[0]
        };
        assert!((step_at(0.01, 0.1) - 0.125 / 2.0 * 0.014).abs() < 1e-9);
        assert!((step_at(0.1, 1.0) - 0.125 * 0.014).abs() < 1e-9);
        assert!((step_at(1e-4, 1e-3) - 0.125 / 32.0 * 0.014).abs() < 1e-9);
        assert!(q.prob() > 0.1, "p after 3 s at +14 ms: {}", q.prob());
        // 5 ms: below target; p must fall at every update until it reaches 0.
        let down = hold_delay(&mut q, 3000, 9000, 5);
        let down = &down[3..];
        for w in down.windows(2).filter(|w| w[0] > 0.0) {
            assert!(w[1] < w[0], "p rose while the delay was below target: {w:?}");
        }
        assert_eq!(q.prob(), 0.0);
        assert_eq!(q.stats().classes[0].drops_aqm, 0);
    }

    /// A 10× burst for 140 ms into an idle queue. PIE's p rises within the burst (the delay
    /// passes 15 ms after ~17 ms), so without burst allowance the arrivals meet early drops.
    fn burst_drops(json: &str) -> u64 {
        let mut q = pie(json, 100_000);
        let mut bench = Bench::new(RATE_BPS, 1);
        let mut src = ConstRate::new(0, Ecn::NotEct, 10.0, RATE_BPS, 0, 140 * MS);
        bench.run(&mut q, &mut [&mut src], 3000 * MS);
        assert_eq!(q.packets(), 0);
        q.stats().classes[0].drops_aqm
    }

    #[test]
    fn burst_allowance_lets_a_short_burst_through() {
        assert_eq!(burst_drops(r#"{"kind": "pie"}"#), 0);
        let without = burst_drops(r#"{"kind": "pie", "max_burst_ns": 0}"#);
        assert!(without > 10, "drops without burst allowance: {without}");
    }

    #[test]
    fn unresponsive_overload_dropped_to_link_rate_at_target_delay() {
        // 1.2× the link rate: in steady state 1/6 of the arrivals must go, at ~15 ms delay.
        let mut q = pie(r#"{"kind": "pie"}"#, 10_000);
        let mut bench = Bench::new(RATE_BPS, 3);
        let mut src = ConstRate::new(0, Ecn::NotEct, 1.2, RATE_BPS, 0, 10_000 * MS);
        bench.run(&mut q, &mut [&mut src], 5000 * MS);
        let (a, sent_a) = (q.stats().classes[0].clone(), src.seq);
        bench.run(&mut q, &mut [&mut src], 10_000 * MS);
        let b = q.stats().classes[0].clone();
        let drop_frac = (b.drops_aqm - a.drops_aqm) as f64 / (src.seq - sent_a) as f64;
        assert!((drop_frac - 1.0 / 6.0).abs() < 0.01, "drop fraction {drop_frac}");
        assert_eq!(b.drops_overflow, 0);
        let mean_ms = window_mean_ns(&a, &b) / 1e6;
        assert!((10.0..20.0).contains(&mean_ms), "mean delay {mean_ms} ms");
        assert!(q.prob() > 0.1);
        // Then half the link rate: the queue drains and p decays to 0.
        let mut slow = ConstRate::new(0, Ecn::NotEct, 0.5, RATE_BPS, 10_000 * MS, 13_000 * MS);
        bench.run(&mut q, &mut [&mut slow], 13_000 * MS);
        assert_eq!(q.prob(), 0.0);
    }

    #[test]
    fn lazy_updates_after_idle_match_updates_on_time() {
        let [lazy, ticked] = lazy_vs_ticked(|| pie(r#"{"kind": "pie"}"#, 10_000));
        assert!(lazy.0 > 1000, "the overloads meet drops: {lazy:?}");
        assert_eq!(lazy, ticked);
    }

    /// Four AIMD flows, 40 ms base RTT, through PIE at 10 Mb/s; mean sojourn and utilization
    /// from 10 s to 40 s, and the queue's counters.
    fn aimd_run(json: &str, ecn: Ecn) -> (f64, f64, super::super::ClassStats) {
        let rate_bps = 10_000_000;
        let spec: QdiscSpec = serde_json::from_str(json).unwrap();
        let ctx = LinkContext { rate_bps, ..Default::default() };
        let mut q: Pie<TestPacket> = Pie::new(&spec, &ctx);
        let mut bench = Bench::new(rate_bps, 11);
        let mut flows: Vec<Aimd> = (0..4).map(|i| Aimd::new(i, ecn, 40 * MS)).collect();
        let mut srcs: Vec<&mut dyn crate::aqm::testbed_pie::Source> =
            flows.iter_mut().map(|f| f as _).collect();
        bench.run(&mut q, &mut srcs, 10_000 * MS);
        let a = q.stats().classes[0].clone();
        bench.run(&mut q, &mut srcs, 40_000 * MS);
        let b = q.stats().classes[0].clone();
        let busy = (b.dequeued - a.dequeued) * tx_ns(PKT_BYTES, rate_bps);
        (window_mean_ns(&a, &b) / 1e6, busy as f64 / (30_000 * MS) as f64, b)
    }

    #[test]
    fn aimd_flows_settle_near_target_delay() {
        let (mean_ms, util, s) = aimd_run(r#"{"kind": "pie"}"#, Ecn::NotEct);
        assert!((7.5..22.5).contains(&mean_ms), "mean delay {mean_ms} ms");
        assert!(util > 0.9, "utilization {util}");
        assert!(s.drops_aqm > 0 && s.drops_overflow == 0, "{s:?}");
        // With ECN the same control loop runs on marks instead of drops.
        let (mean_ms, util, s) = aimd_run(r#"{"kind": "pie", "ecn": true}"#, Ecn::Ect0);
        assert!((7.5..22.5).contains(&mean_ms), "mean delay with ECN {mean_ms} ms");
        assert!(util > 0.9, "utilization with ECN {util}");
        assert!(s.ce_marks > 0 && s.drops_aqm == 0, "{s:?}");
    }
}
