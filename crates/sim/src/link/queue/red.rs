//! RED (Floyd & Jacobson, "Random Early Detection Gateways for Congestion Avoidance", IEEE/ACM
//! ToN 1993), as an ECN marker: the algorithm of the paper's Figure 2.
//!
//! ```text
//! on each arrival:
//!   busy link:  avg ← (1 − w_q)·avg + w_q·q                         q = bytes waiting
//!   idle link:  avg ← (1 − w_q)^m · avg,  m = idle time / s           s = transmission time of a
//!                                                                       1500-byte packet
//!   avg < min_th:            no action, count ← −1
//!   min_th ≤ avg < max_th:   count ← count + 1
//!                            p_b = max_p·(avg − min_th)/(max_th − min_th)
//!                            p_a = p_b / (1 − count·p_b)          (1 once count·p_b ≥ 1)
//!                            with probability p_a: act, count ← 0
//!   avg ≥ max_th:            act, count ← 0
//! ```
//!
//! "Act" marks CE on ECN-capable (ECT) packets and drops the others, as Linux `sch_red` with the
//! `ecn` flag (without `harddrop`) does, also above max_th. The `count` rule spaces the actions
//! uniformly (paper §7): with a constant p_b and count as in Figure 2 (reset to 0 at an action,
//! incremented before p_a is computed, as ns-2 does), P(gap > n) = (1 − (n+1)·p_b)/(1 − p_b): the
//! gap is uniform on 1..1/p_b − 1 and about 2·p_b of the packets are acted on. Thresholds are in
//! bytes (Linux RED counts bytes). No "gentle" mode.

use super::{Occupancy, QueueDiscipline, Verdict};
use crate::rng::Rng;
use cc::Nanos;
use transport::Packet;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RedAction {
    Pass,
    /// Mark CE (ECT packet) or drop (non-ECT).
    Act,
}

#[derive(Clone, Debug)]
pub struct Red {
    min_th: f64,
    max_th: f64,
    max_p: f64,
    w: f64,
    /// Transmission time of a typical (1500-byte) packet, ns: the unit of idle decay.
    s_ns: f64,
    /// EWMA of the queue, bytes.
    pub avg: f64,
    count: i64,
}

impl Red {
    pub fn new(
        min_th_bytes: u64,
        max_th_bytes: u64,
        max_p: f64,
        weight: f64,
        rate_bps: u64,
    ) -> Red {
        Red {
            min_th: min_th_bytes as f64,
            max_th: max_th_bytes as f64,
            max_p,
            w: weight,
            s_ns: 1500.0 * 8.0 * 1e9 / rate_bps as f64,
            avg: 0.0,
            count: -1,
        }
    }

    /// Update the average for an arrival that finds `q_bytes` waiting (`idle_ns` > 0: the link had
    /// been idle that long) and decide.
    #[inline]
    pub fn average_and_decide(&mut self, q_bytes: u64, idle_ns: Nanos, rng: &mut Rng) -> RedAction {
        if idle_ns > 0 {
            if self.w == 1.0 {
                // The instantaneous queue (DCTCP's marking): (1 - w)^m is 0 for any idle time,
                // exactly what `powf` gives, without its ~125 instructions per arrival at an
                // idle port (3 % of the DCTCP Fig. 17 run).
                self.avg = 0.0;
            } else {
                let m = idle_ns as f64 / self.s_ns;
                self.avg *= (1.0 - self.w).powf(m);
            }
        } else {
            self.avg += self.w * (q_bytes as f64 - self.avg);
        }
        self.decide(rng)
    }

    #[inline]
    fn decide(&mut self, rng: &mut Rng) -> RedAction {
        if self.avg < self.min_th {
            self.count = -1;
            return RedAction::Pass;
        }
        if self.avg >= self.max_th {
            self.count = 0;
            return RedAction::Act;
        }
        self.count += 1;
        let p_b = self.max_p * (self.avg - self.min_th) / (self.max_th - self.min_th);
        let denom = 1.0 - self.count as f64 * p_b;
        let p_a = if denom <= 0.0 { 1.0 } else { (p_b / denom).min(1.0) };
        if rng.next_f64() < p_a {
            self.count = 0;
            RedAction::Act
        } else {
            RedAction::Pass
        }
    }
}

/// RED sees every arrival, also one that finds the link idle (its average decays then).
impl QueueDiscipline for Red {
    const ON_ARRIVAL: bool = true;

    #[inline]
    fn on_arrival(&mut self, q: Occupancy, idle_ns: Nanos, p: &Packet, rng: &mut Rng) -> Verdict {
        match self.average_and_decide(q.bytes, idle_ns, rng) {
            RedAction::Pass => Verdict::Accept,
            RedAction::Act if p.ecn.is_ect() => Verdict::Mark,
            // An early drop (counted with the overflow drops).
            RedAction::Act => Verdict::Drop,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fraction of arrivals acted on with the average held at `avg`.
    fn fraction_at(avg: f64) -> f64 {
        let mut red = Red::new(30_000, 90_000, 0.1, 0.002, 1_000_000_000);
        let mut rng = Rng::new(3, 9);
        let n = 400_000;
        let mut acted = 0;
        for _ in 0..n {
            red.avg = avg;
            if red.decide(&mut rng) == RedAction::Act {
                acted += 1;
            }
        }
        acted as f64 / n as f64
    }

    #[test]
    fn marking_ramps_linearly_between_the_thresholds() {
        assert_eq!(fraction_at(29_999.0), 0.0, "nothing below min_th");
        assert_eq!(fraction_at(90_000.0), 1.0, "everything at or above max_th");
        // Floyd & Jacobson Figure 2: P(gap > n) = Π_{k=1..n} (1 − p_b/(1 − k·p_b))
        // = (1 − (n+1)·p_b)/(1 − p_b); the marked fraction is 1 / E[gap].
        for &x in &[0.25, 0.5, 0.75, 0.95] {
            let avg = 30_000.0 + x * 60_000.0;
            let p_b = 0.1 * x;
            let mean_gap: f64 = 1.0
                + (1..1000)
                    .map(|n| ((1.0 - (n as f64 + 1.0) * p_b) / (1.0 - p_b)).max(0.0))
                    .sum::<f64>();
            let want = 1.0 / mean_gap;
            assert!((want - 2.0 * p_b).abs() < 0.2 * p_b, "about 2·p_b");
            let got = fraction_at(avg);
            assert!(
                (got - want).abs() <= 0.05 * want,
                "avg at {x} of the ramp: {got:.4} vs {want:.4}"
            );
        }
    }

    /// Weight 1 (DCTCP's instantaneous marking): the average is the queue the arrival finds,
    /// and after any idle time exactly what the decay formula gives, (1 − 1)^m · avg = 0.
    #[test]
    fn weight_one_averages_the_instantaneous_queue() {
        let mut red = Red::new(30_000, 90_000, 0.1, 1.0, 1_000_000_000);
        let mut rng = Rng::new(1, 1);
        for idle_ns in [1, 999, 12_000, 1_200_000, 1_000_000_000_000] {
            red.average_and_decide(70_000, 0, &mut rng);
            assert_eq!(red.avg, 70_000.0);
            let formula = red.avg * (1.0 - red.w).powf(idle_ns as f64 / red.s_ns);
            red.average_and_decide(0, idle_ns, &mut rng);
            assert_eq!(red.avg.to_bits(), formula.to_bits(), "idle {idle_ns} ns");
            assert_eq!(red.count, -1, "below min_th: no mark, the count reset");
        }
    }

    #[test]
    fn average_is_an_ewma_of_the_queue_and_decays_when_idle() {
        let mut red = Red::new(30_000, 90_000, 0.1, 0.01, 1_000_000_000);
        let mut rng = Rng::new(1, 1);
        for _ in 0..2000 {
            red.average_and_decide(50_000, 0, &mut rng);
        }
        // 1 − (1 − 0.01)^2000 ≈ 1 − 1.9e-9.
        assert!((red.avg - 50_000.0).abs() < 1.0, "avg {}", red.avg);
        // Idle for 100 packet times at 1 Gbit/s (1.2 ms): avg · 0.99^100 ≈ 0.366.
        red.average_and_decide(0, 1_200_000, &mut rng);
        assert!((red.avg / 50_000.0 - 0.99f64.powi(100)).abs() < 1e-3, "avg {}", red.avg);
    }
}
