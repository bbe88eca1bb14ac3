//! BQL unit tests on the shared bottleneck (`testkit`): one FIFO link with a fixed service time
//! per packet, a propagation delay lumped after it, a per-packet ACK, no recovery state machine
//! (BQL ignores loss). The assertions are about the physical queue and link of this simulator,
//! checked against the paper's claims (queue held at a small level, full utilisation, stability up
//! to 1 s RTT), not against BQL's own estimates.
use super::*;
use crate::rng::Lcg64;
use crate::testkit::{KitCc, Recovery, Sim, MS, MSS};

/// 10 000 packets/s = 120 Mbit/s.
const PPS: u64 = 10_000;

impl KitCc for Bql {}

/// A fresh BQL flow over the 10 000 packet/s link with `prop_ms` of propagation delay.
fn new_sim(prop_ms: u64) -> Sim<Bql> {
    let mut sim = Sim::new(Bql::new(), PPS, prop_ms * MS);
    assert!(sim.tp.pacing_enabled);
    sim.recovery = Recovery::Off;
    sim.rng = Lcg64::new(0x2545_F491_4F6C_DD1D);
    sim
}

/// Keep min_rtt fresh so no refresh runs (isolates the controller in step tests).
fn no_refresh(sim: &mut Sim<Bql>) {
    sim.before_cong_control = Some(|bql, now| bql.min_rtt_stamp_ns = now);
}

impl Sim<Bql> {
    fn rate_bytes(&self) -> f64 {
        MSS as f64 * NSEC_PER_SEC as f64 / self.ns_per_pkt as f64
    }

    /// Physical queue in bytes now (packets waiting or in service at the bottleneck).
    fn queue_bytes(&self) -> f64 {
        (self.queue_pkts() as u64 * MSS as u64) as f64
    }

    /// Run `n` windows of `win_ns` each; per window: (mean, min, max) physical queue sampled
    /// at every event, and link utilisation.
    fn windows(&mut self, win_ns: u64, n: usize) -> Vec<Win> {
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            let end = self.now + win_ns;
            let d0 = self.departed();
            let (mut sum, mut cnt, mut lo, mut hi) = (0.0, 0u64, f64::MAX, 0.0f64);
            while self.now < end {
                self.step();
                let q = self.queue_bytes();
                sum += q;
                cnt += 1;
                lo = lo.min(q);
                hi = hi.max(q);
            }
            let util = (self.departed() - d0) as f64 * self.ns_per_pkt as f64 / win_ns as f64;
            out.push(Win { mean: sum / cnt.max(1) as f64, min: lo, max: hi, util });
        }
        out
    }
}

#[derive(Clone, Copy, Debug)]
struct Win {
    mean: f64,
    min: f64,
    max: f64,
    util: f64,
}

/// The bottleneck estimate c (`bw`, bytes/s) is the link rate within `rel_tol`.
fn assert_bw_is_the_link_rate(sim: &Sim<Bql>, rel_tol: f64) {
    let c = sim.cc.bw();
    assert!(
        (c - sim.rate_bytes()).abs() / sim.rate_bytes() < rel_tol,
        "c {c} vs {}",
        sim.rate_bytes()
    );
}

/// Into Control with the initial transient gone (a few refresh-free RTTs).
fn settled(prop_ms: u64) -> Sim<Bql> {
    let mut sim = new_sim(prop_ms);
    sim.run_until(|s, _| s.cc.phase == Phase::Control, 120 * NSEC_PER_SEC);
    no_refresh(&mut sim);
    let rtt = prop_ms * MS;
    sim.windows(rtt, 12);
    sim
}

#[test]
fn gain_reaches_the_link_rate_in_log_bdp_rounds() {
    let mut rounds = Vec::new();
    for prop_ms in [10u64, 100, 1000] {
        let mut sim = new_sim(prop_ms);
        sim.run_until(|s, _| s.cc.phase != Phase::Gain, 120 * NSEC_PER_SEC);
        let bdp = PPS as f64 * prop_ms as f64 / 1000.0;
        let r = sim.now as f64 / (prop_ms * MS) as f64;
        // Doubling per round from IW: log2(BDP / IW) rounds, plus the first RTT sample, the
        // round the queue signal needs to come back, and slack for the ramp's start.
        let bound = (bdp / 10.0).log2() + 5.0;
        println!(
            "prop {prop_ms} ms, BDP {bdp} pkts: Gain left after {r:.1} rounds (bound {bound:.1})"
        );
        assert!(r <= bound, "BDP {bdp}: {r:.1} rounds > {bound:.1}");
        // Left Gain because the link is full: in the next round the link is busy, and by its
        // end the bottleneck estimate is the link rate.
        let w = sim.windows(prop_ms * MS, 1)[0];
        assert!(w.util > 0.99, "utilisation {:.3} in the round after Gain", w.util);
        assert_bw_is_the_link_rate(&sim, 0.02);
        rounds.push(r);
    }
    // Logarithmic, not linear: 100× the BDP costs about log2(100) ≈ 6.6 more rounds.
    assert!(rounds[2] - rounds[0] <= 6.6 + 3.0, "rounds {rounds:?}");
}

/// A rate x = C·2^(t/R) that crosses C at t = 0 builds the queue
/// Q(t) = C·R·(2^(t/R) − 1)/ln 2 − C·t; it reaches Q* at t_Q ≈ sqrt(2·R·Q*/(C·ln 2)) and the
/// sender sees that one RTT later, at L = R + t_Q. A Gain state that ramps smoothly and leaves
/// at the first signal overshoots by Q(L); an ACK-clocked doubling (bursts at twice the ACK
/// rate) or BBR's 2.89 cwnd gain overshoot far more (up to 1 and 1.89 BDP).
#[test]
fn gain_overshoot_is_that_of_a_smooth_doubling_stopped_at_the_first_signal() {
    for prop_ms in [100u64, 1000] {
        let mut sim = new_sim(prop_ms);
        let mut peak = 0.0f64;
        sim.run_until(
            |s, _| {
                peak = peak.max(s.queue_bytes());
                s.cc.phase == Phase::Control
            },
            120 * NSEC_PER_SEC,
        );
        let (c, r) = (sim.rate_bytes(), prop_ms as f64 / 1000.0);
        let bdp = c * r;
        let qt = sim.cc.q_target();
        let t_q = (2.0 * r * qt / (c * std::f64::consts::LN_2)).sqrt();
        let l = r + t_q;
        let model = c * r * ((l / r).exp2() - 1.0) / std::f64::consts::LN_2 - c * l;
        println!(
            "prop {prop_ms} ms: Gain peak queue {:.2} BDP, smooth-doubling model {:.2} BDP",
            peak / bdp,
            model / bdp
        );
        assert!(
            peak < 1.15 * model,
            "peak queue {:.2} BDP > 1.15 × {:.2}",
            peak / bdp,
            model / bdp
        );
        assert!(peak < 1.1 * bdp);
    }
}

/// The step response: a burst of 6·Q* lands in the queue; the controller must
/// bring the queue back to Q* within a few RTTs — at 100 ms and at 1000 ms RTT alike (the
/// Smith predictor makes the loop's speed independent of the feedback delay) — without the
/// deviation growing from one RTT to the next and without emptying the link.
#[test]
fn queue_step_response_converges_without_oscillation_up_to_1s_rtt() {
    for prop_ms in [100u64, 1000] {
        let mut sim = settled(prop_ms);
        let qt = sim.cc.q_target();
        let rtt = prop_ms * MS;
        let before = sim.windows(rtt, 3);
        for w in &before {
            assert!(
                (w.mean - qt).abs() < 0.3 * qt,
                "prop {prop_ms}: steady queue {:.0} vs Q* {qt:.0}",
                w.mean
            );
            assert!(w.util > 0.995, "prop {prop_ms}: utilisation {:.4}", w.util);
            // The paper: queue jitter under 200 KB in the Control state.
            assert!(w.max - w.min < 200_000.0, "jitter {:.0}", w.max - w.min);
        }
        // A 6·Q* burst of the flow's own packets, released at once (an unpaced application
        // burst): the queue steps from Q* to 7·Q*.
        let n = (6.0 * qt / MSS as f64) as u64;
        for _ in 0..n {
            sim.next_send = sim.now;
            sim.send();
        }
        let after = sim.windows(rtt, 16);
        let dev: Vec<f64> = after.iter().map(|w| (w.mean - qt).abs() / qt).collect();
        println!(
            "prop {prop_ms} ms: Q* {qt:.0} B, per-RTT |mean − Q*|/Q* after the step: {:?}",
            dev.iter().map(|d| (d * 100.0).round() / 100.0).collect::<Vec<_>>()
        );
        // Within 8 RTTs back to ±40 % for good.
        let k = dev.iter().rposition(|&d| d >= 0.4).map_or(0, |i| i + 1);
        assert!(k <= 8, "prop {prop_ms}: settled only after {k} RTTs: {dev:?}");
        // No growing oscillation: the late deviation is no larger than the early one.
        let early = dev[2..8].iter().cloned().fold(0.0, f64::max);
        let late = dev[8..].iter().cloned().fold(0.0, f64::max);
        assert!(late <= early + 0.1, "prop {prop_ms}: oscillation grows {early:.2} → {late:.2}");
        // The link never idles while the foreign burst drains (no overshoot into an empty queue).
        for w in &after {
            assert!(w.util > 0.99, "prop {prop_ms}: utilisation {:.4} after the step", w.util);
        }
    }
}

/// Anti-windup: the bottleneck rate halves. The queue error is tens of Q*; the I term must not
/// integrate it, so after the queue is drained the rate does not undershoot (link kept busy)
/// and the queue settles at Q* again.
#[test]
fn bandwidth_step_down_recovers_without_windup() {
    let mut sim = settled(100);
    let rtt = 100 * MS;
    sim.ns_per_pkt *= 2; // 5000 pkt/s from now on
    let qt = sim.cc.q_target();
    let mut max_i = 0.0f64;
    let mut peak = 0.0f64;
    let ws: Vec<Win> = (0..30)
        .map(|_| {
            let w = sim.windows(rtt, 1)[0];
            max_i = max_i.max(sim.cc.integral().abs());
            peak = peak.max(w.max);
            w
        })
        .collect();
    let qt2 = sim.cc.q_target();
    println!(
        "step down: peak {peak:.0} B, Q* {qt:.0} → {qt2:.0}, per-RTT mean queue {:?}",
        ws.iter().map(|w| w.mean.round()).collect::<Vec<_>>()
    );
    assert!(peak > 5.0 * qt, "the step should have built a large queue ({peak:.0})");
    assert!(max_i <= I_BAND * qt.max(qt2) + 1.0, "integral {max_i:.0} beyond its bound");
    // Back to the target band within 12 RTTs and kept.
    let k = ws.iter().position(|w| (w.mean - qt2).abs() < 0.3 * qt2).expect("never back at Q*");
    assert!(k <= 12, "back at Q* only after {k} RTTs");
    assert!(ws[k..].iter().all(|w| (w.mean - qt2).abs() < 0.4 * qt2), "left the band again");
    // No undershoot: the link stays busy throughout.
    for (i, w) in ws.iter().enumerate() {
        assert!(w.util > 0.99, "RTT {i}: utilisation {:.4}", w.util);
    }
    assert_bw_is_the_link_rate(&sim, 0.01);
}

/// Capacity doubles: the queue empties, Control sees it for 3 rounds and re-enters Gain, which
/// grows to the new rate in a few rounds (1.25× per RTT: log(2)/log(1.25) ≈ 3.1 rounds).
#[test]
fn bandwidth_step_up_is_reclaimed_by_gain() {
    let mut sim = settled(100);
    let rtt = 100 * MS;
    sim.ns_per_pkt /= 2;
    let ws = sim.windows(rtt, 20);
    let utils: Vec<f64> = ws.iter().map(|w| (w.util * 100.0).round() / 100.0).collect();
    println!("step up: per-RTT utilisation {utils:?}");
    let k = ws.iter().position(|w| w.util > 0.98).expect("never reclaimed");
    assert!(k <= 12, "new capacity reclaimed only after {k} RTTs");
    assert!(ws[k + 3..].iter().all(|w| w.util > 0.98));
    assert_eq!(sim.cc.phase, Phase::Control);
}

/// min_rtt refresh every 10 s: it re-measures the propagation delay and costs no throughput.
#[test]
fn min_rtt_refresh_keeps_the_true_minimum_and_the_link_busy() {
    let mut sim = new_sim(100);
    sim.run_until(|s, _| s.cc.phase == Phase::Control, 20 * NSEC_PER_SEC);
    let prop = 100 * MS + sim.ns_per_pkt;
    let mut refreshes = 0;
    let mut was = false;
    let ws_total = {
        let mut v = Vec::new();
        for _ in 0..250 {
            v.push(sim.windows(100 * MS, 1)[0]);
            let r = sim.cc.refresh != Refresh::Off;
            if r && !was {
                refreshes += 1;
            }
            was = r;
        }
        v
    };
    assert!(refreshes >= 2, "{refreshes} refreshes in 25 s");
    assert!(
        sim.cc.min_rtt_ns >= prop && sim.cc.min_rtt_ns <= prop + 2 * sim.ns_per_pkt,
        "min_rtt {} vs {prop}",
        sim.cc.min_rtt_ns
    );
    let util = ws_total.iter().map(|w| w.util).sum::<f64>() / ws_total.len() as f64;
    let q = ws_total.iter().map(|w| w.mean).sum::<f64>() / ws_total.len() as f64;
    println!(
        "25 s with refreshes: utilisation {util:.4}, mean queue {q:.0} B (Q* {:.0})",
        sim.cc.q_target()
    );
    assert!(util > 0.995, "utilisation {util:.4}");
}

/// 1 % random loss before the queue: the rate is not cut (loss is not a signal) and the
/// queue stays at its target.
#[test]
fn random_loss_is_not_a_congestion_signal() {
    let mut sim = new_sim(100);
    sim.loss_p = 0.01;
    sim.run_until(|s, _| s.cc.phase == Phase::Control, 30 * NSEC_PER_SEC);
    no_refresh(&mut sim);
    sim.windows(100 * MS, 10);
    let ws = sim.windows(100 * MS, 50);
    let util = ws.iter().map(|w| w.util).sum::<f64>() / ws.len() as f64;
    let q = ws.iter().map(|w| w.mean).sum::<f64>() / ws.len() as f64;
    let qt = sim.cc.q_target();
    println!("1 % loss: utilisation {util:.4}, mean queue {q:.0} B, Q* {qt:.0} B");
    assert!(util > 0.99, "utilisation {util:.4}");
    assert!((q - qt).abs() < 0.3 * qt, "mean queue {q:.0} vs Q* {qt:.0}");
}

#[test]
fn target_queue_is_a_sixteenth_of_the_bdp_within_30_and_150_kb() {
    let mut b = Bql::new();
    b.phase = Phase::Control;
    b.min_rtt_ns = 100 * MS;
    b.c = 125_000_000.0; // 1 Gbit/s: BDP 12.5 MB → cap
    assert_eq!(b.q_target(), Q_TARGET_MAX);
    b.c = 12_500_000.0; // 100 Mbit/s: BDP 1.25 MB → 78 KB
    assert!((b.q_target() - 1_250_000.0 / 16.0).abs() < 1.0);
    b.min_rtt_ns = MS; // 12.5 KB BDP → floor
    assert_eq!(b.q_target(), Q_TARGET_MIN);
}

#[test]
fn init_paces_and_exports_the_gain_phase() {
    let mut tp = TcpCc::new(MSS, 10);
    let mut b = Bql::new();
    b.init(&mut tp);
    assert!(tp.pacing_enabled);
    let want = GAIN_PACING * 10.0 * MSS as f64 / 1e-3;
    assert!((tp.pacing_rate_bytes_per_s as f64 - want).abs() / want < 1e-6);
    let s = b.sample(&tp);
    assert_eq!((s.phase, s.phase_code), ("gain", 0));
    b.phase = Phase::Drain;
    assert_eq!(b.sample(&tp).phase_code, 1);
    b.phase = Phase::Control;
    b.c = 1e6;
    b.min_rtt_ns = 10 * MS;
    tp.pacing_rate_bytes_per_s = 1_100_000;
    let s = b.sample(&tp);
    assert_eq!((s.phase, s.phase_code), ("control", 2));
    assert_eq!(s.bw_bps, 8e6);
    assert!((s.pacing_gain - 1.1).abs() < 1e-9);
    assert_eq!(s.min_rtt_ns, 10 * MS);
}
