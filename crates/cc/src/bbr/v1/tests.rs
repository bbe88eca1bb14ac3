//! BBRv1 unit tests, on the shared bottleneck (`testkit`): checked against Linux's rules and the
//! link's physics, never against numbers this implementation produced for itself.

use super::probe_bw::CYCLE_LEN;
use super::*;
use crate::bbr::probe_rtt_check;
use crate::bbr::units::BW_UNIT;
use crate::testkit::{Ev, KitCc, Policer, Sim, MS, MSS};
use crate::NSEC_PER_SEC;

impl KitCc for Bbr1 {
    fn round_start(&self) -> bool {
        self.round.round_start
    }
}

impl Sim<Bbr1> {
    fn max_bw_pps(&self) -> f64 {
        self.cc.max_bw() as f64 / BW_UNIT as f64 * 1e6
    }

    fn gain(&self) -> f64 {
        self.cc.pacing_gain as f64 / GAIN_UNIT as f64
    }
}

/// Link: 2000 packets/s (24 Mbit/s at 1500 B), 40 ms propagation: BDP ≈ 80 packets.
fn link(seed: u64) -> Sim<Bbr1> {
    Sim::new(Bbr1::new(seed), 2000, 40 * MS)
}

/// `link(seed)` in PROBE_BW, then one more second so the gain cycle has settled.
fn settled_in_probe_bw(seed: u64) -> Sim<Bbr1> {
    let mut sim = link(seed);
    sim.run_until(|s, _| s.cc.mode == Mode::ProbeBw, 10 * NSEC_PER_SEC);
    let end = sim.now + NSEC_PER_SEC;
    sim.run_until(|s, _| s.now >= end, end + NSEC_PER_SEC);
    sim
}

#[test]
fn startup_exits_after_three_rounds_without_growth_with_bw_at_link_rate() {
    let mut sim = link(1);
    let mut rounds: Vec<(u64, u64)> = Vec::new(); // (round, max_bw) at each round start
    let mut exit_round = None;
    sim.run_until(
        |s, ev| {
            if let Ev::Ack { .. } = ev {
                if s.cc.round.round_start {
                    rounds.push((s.cc.round.round_count, s.cc.max_bw()));
                }
                if s.cc.mode != Mode::Startup {
                    exit_round = Some(s.cc.round.round_count);
                    return true;
                }
            }
            false
        },
        10 * NSEC_PER_SEC,
    );
    let exit_round = exit_round.unwrap();
    // Replay the full-pipe rule of the spec over the observed per-round estimates.
    let (mut full_bw, mut cnt, mut expected_exit, mut last_growth) = (0u64, 0, None, 0);
    for &(r, bw) in &rounds {
        if bw as f64 >= full_bw as f64 * 1.25 {
            full_bw = bw;
            cnt = 0;
            last_growth = r;
        } else {
            cnt += 1;
            if cnt == 3 {
                expected_exit = Some(r);
                break;
            }
        }
    }
    assert_eq!(Some(exit_round), expected_exit, "rounds: {rounds:?}");
    assert_eq!(exit_round - last_growth, 3, "exit 3 rounds after the last ≥25 % growth");
    // Physics: the estimate is the bottleneck rate.
    let est = sim.max_bw_pps();
    assert!((est - 2000.0).abs() / 2000.0 < 0.02, "max_bw {est} pkt/s vs link 2000");
    assert_eq!(sim.cc.mode, Mode::Drain);
    assert!((sim.gain() - 1.0 / 2.885).abs() < 0.005, "drain gain {}", sim.gain());
    // STARTUP used the high gain for cwnd and pacing.
    assert_eq!(sim.cc.cwnd_gain, HIGH_GAIN);
}

#[test]
fn startup_never_lowers_the_pacing_rate() {
    let mut sim = link(11);
    let mut last = 0u64;
    let mut acks = 0;
    sim.run_until(
        |s, ev| {
            if matches!(ev, Ev::Ack { .. }) {
                acks += 1;
                // The first ACK brings the first RTT sample, which re-initialises the rate from
                // srtt (bbr_init_pacing_rate_from_rtt); after that it may only grow.
                if acks == 1 {
                    // Not below high_gain × IW / srtt (× 0.99) set from the first RTT sample.
                    let init = 2.885 * 0.99 * 10.0 * MSS as f64 / (s.tp.srtt_ns as f64 / 1e9);
                    let got = s.tp.pacing_rate_bytes_per_s as f64;
                    assert!(got >= init * 0.995, "first-ACK pacing {got} below {init}");
                }
                if acks > 1 && !s.cc.full_bw.reached {
                    assert!(
                        s.tp.pacing_rate_bytes_per_s >= last,
                        "pacing lowered in STARTUP at ACK {acks}"
                    );
                }
                last = s.tp.pacing_rate_bytes_per_s;
            }
            s.cc.full_bw.reached
        },
        10 * NSEC_PER_SEC,
    );
    assert!(acks > 100);
}

#[test]
fn app_limited_samples_never_lower_max_bw_but_expired_ones_do() {
    let mut tp = TcpCc::new(MSS, 10);
    let mut b = Bbr1::new(0);
    b.init(&mut tp);
    let feed = |b: &mut Bbr1, tp: &mut TcpCc, delivered: i64, app_limited: bool| {
        // One round per sample: the sample's packet was sent after the last round began.
        tp.now_ns += 40 * MS;
        tp.delivered += delivered as u64;
        tp.delivered_mstamp_ns = tp.now_ns;
        let mut rs = sample(b.round.next_round_delivered, 1, 0, 10);
        rs.delivered = delivered;
        rs.interval_ns = 40 * MS as i64;
        rs.is_app_limited = app_limited;
        b.update_bw(tp, &rs);
        assert!(b.round.round_start);
    };
    feed(&mut b, &mut tp, 80, false); // 80 packets per 40 ms = 2000 pkt/s
    let full = b.max_bw();
    let r0 = b.round.round_count;
    // Non-app-limited samples at a quarter of the rate: the peak holds for the 10-round
    // window (bbr_bw_rtts) and is gone in round r0 + 11.
    while b.round.round_count < r0 + 10 {
        feed(&mut b, &mut tp, 20, false);
        assert_eq!(b.max_bw(), full, "peak expired early at round {}", b.round.round_count - r0);
    }
    feed(&mut b, &mut tp, 20, false);
    let pps = b.max_bw() as f64 / BW_UNIT as f64 * 1e6;
    assert!((pps - 500.0).abs() < 5.0, "max_bw {pps} pkt/s after the window");
    feed(&mut b, &mut tp, 80, false);
    let full = b.max_bw();
    for _ in 0..30 {
        feed(&mut b, &mut tp, 20, true); // app-limited at a quarter of the rate
    }
    assert_eq!(b.max_bw(), full, "app-limited samples lowered max_bw");
}

#[test]
fn long_term_intervals_must_agree_within_an_eighth_and_are_averaged() {
    let pps = |p: f64| (p / 1e6 * BW_UNIT as f64) as u64;
    let tp = TcpCc::new(MSS, 10);
    let mut b = Bbr1::new(0);
    b.lt_bw_interval_done(&tp, pps(800.0));
    assert!(!b.lt_use_bw, "one interval is not enough");
    b.lt_bw_interval_done(&tp, pps(1000.0)); // 25 % apart, 2.4 Mbit/s apart: inconsistent
    assert!(!b.lt_use_bw);
    b.lt_bw_interval_done(&tp, pps(1080.0)); // 8 % from 1000: consistent
    assert!(b.lt_use_bw);
    assert_eq!(b.pacing_gain, GAIN_UNIT);
    let got = b.lt_bw as f64 / BW_UNIT as f64 * 1e6;
    assert!((got - 1040.0).abs() < 1.0, "lt_bw {got} is not the mean of 1000 and 1080");
}

#[test]
fn drain_ends_when_inflight_falls_to_bdp() {
    let mut sim = link(2);
    sim.run_until(|s, _| s.cc.mode == Mode::Drain, 10 * NSEC_PER_SEC);
    let bdp = sim.bdp_phys();
    // Drain target: BDP plus the quantization budget (3 bursts of 2 segments, even).
    let target = (bdp.ceil() as u32 + 3 * Bbr1::tso_segs_goal(&sim.tp) + 1) & !1;
    let mut saw_drain_ack = false;
    sim.run_until(
        |s, ev| {
            if let Ev::Ack { .. } = ev {
                let inflight = s.tp.packets_in_flight();
                if s.cc.mode == Mode::Drain {
                    saw_drain_ack = true;
                    assert!(
                        inflight > target - 2,
                        "still draining at inflight {inflight} ≤ target {target}"
                    );
                } else {
                    assert_eq!(s.cc.mode, Mode::ProbeBw);
                    assert!(inflight <= target + 1, "left drain at inflight {inflight} > {target}");
                    return true;
                }
            }
            false
        },
        10 * NSEC_PER_SEC,
    );
    assert!(saw_drain_ack);
}

#[test]
fn probe_bw_never_starts_in_the_drain_phase() {
    let tp = TcpCc::new(MSS, 10);
    let mut seen = [0u32; CYCLE_LEN];
    for seed in 0..2000u64 {
        let mut b = Bbr1::new(seed);
        b.reset_probe_bw_mode(&tp);
        seen[b.cycle_idx] += 1;
        // And repeated re-entries from one generator.
        b.reset_probe_bw_mode(&tp);
        seen[b.cycle_idx] += 1;
    }
    assert_eq!(seen[1], 0, "started in the 3/4 phase");
    for (i, &n) in seen.iter().enumerate() {
        if i != 1 {
            // 4000 draws over 7 phases: ≈ 571 each.
            assert!((450..700).contains(&n), "phase {i} drawn {n} times: {seen:?}");
        }
    }
}

/// Run the link sim into steady PROBE_BW and record (time, cycle_idx, gain) at each phase change.
fn probe_bw_trace(seed: u64, secs: u64) -> (Sim<Bbr1>, Vec<(u64, usize, f64)>) {
    let mut sim = link(seed);
    sim.run_until(|s, _| s.cc.mode == Mode::ProbeBw, 10 * NSEC_PER_SEC);
    let mut phases = vec![(sim.now, sim.cc.cycle_idx, sim.gain())];
    let end = sim.now + secs * NSEC_PER_SEC;
    // Inflight target of the 3/4 phase: one BDP plus the quantization budget (even).
    let target = (sim.bdp_phys().ceil() as u32 + 3 * Bbr1::tso_segs_goal(&sim.tp) + 1) & !1;
    sim.run_until(
        |s, ev| {
            assert_eq!(s.cc.mode, Mode::ProbeBw);
            if matches!(ev, Ev::Ack { .. }) && s.cc.cycle_idx == 1 && phases.last().unwrap().1 == 0
            {
                // Just left the 5/4 phase (no losses here): inflight had reached 5/4 BDP plus
                // the budget (+2 while probing), counting the burst due at the next departure.
                let prior = s.tp.packets_in_flight() + 1 + Bbr1::tso_segs_goal(&s.tp);
                let target125 =
                    (((1.25 * s.bdp_phys()).ceil() as u32 + 3 * Bbr1::tso_segs_goal(&s.tp) + 1)
                        & !1)
                        + 2;
                assert!(prior + 1 >= target125, "left the probe at inflight {prior} < {target125}");
            }
            if matches!(ev, Ev::Ack { .. })
                && s.cc.cycle_idx == 1
                && s.cc.cycle_idx == phases.last().unwrap().1
            {
                // Still in the 3/4 phase after this ACK: inflight before it was above target.
                let prior = s.tp.packets_in_flight() + 1;
                assert!(
                    prior + 1 > target,
                    "3/4 phase persisted at inflight {prior} ≤ BDP target {target}"
                );
            }
            if s.cc.cycle_idx != phases.last().unwrap().1 {
                phases.push((s.now, s.cc.cycle_idx, s.gain()));
            }
            s.now >= end
        },
        end + NSEC_PER_SEC,
    );
    (sim, phases)
}

#[test]
fn probe_bw_cycles_through_the_eight_gains_in_order() {
    for seed in [3u64, 4, 5] {
        let (sim, phases) = probe_bw_trace(seed, 3);
        assert_ne!(phases[0].1, 1, "started in the 3/4 phase");
        let min_rtt = sim.cc.min_rtt.rtt_ns;
        let gains = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
        for w in phases.windows(2) {
            let ((t0, i0, g0), (t1, i1, _)) = (w[0], w[1]);
            assert_eq!(i1, (i0 + 1) % 8, "phase order");
            assert!((g0 - gains[i0]).abs() < 1e-9, "phase {i0} gain {g0}");
            let d = t1 - t0;
            match i0 {
                // Probe: at least min_rtt (and until inflight reaches 5/4 BDP).
                0 => assert!(d >= min_rtt, "probe phase {d} ns < min_rtt"),
                // Drain: at most about min_rtt.
                1 => assert!(d <= min_rtt + 2 * MS, "drain phase {d} ns"),
                // Cruise: one min_rtt (to within an ACK spacing or two).
                _ => assert!(
                    d >= min_rtt && d <= min_rtt + 2 * MS,
                    "cruise phase {d} ns vs {min_rtt}"
                ),
            }
        }
        assert!(phases.len() > 40, "only {} phase changes in 3 s", phases.len());
        assert!(!sim.cc.lt_use_bw, "no policer here");
    }
}

#[test]
fn steady_state_cwnd_is_two_bdp_plus_quantization_and_pacing_follows_gain() {
    let mut sim = settled_in_probe_bw(6);
    let bdp = sim.bdp_phys();
    let link_bytes = sim.rate_pps() * MSS as f64;
    let quanta = 3 * Bbr1::tso_segs_goal(&sim.tp);
    let end = sim.now + 2 * NSEC_PER_SEC;
    let mut checked = [0u32; 3];
    let (mut max_cwnd_probe, mut max_cwnd_cruise) = (0, 0);
    sim.run_until(
        |s, ev| {
            if !matches!(ev, Ev::Ack { .. }) {
                return false;
            }
            let g = s.gain();
            // Pacing = gain × bw × 0.99, bw = the link rate.
            let want = link_bytes * 0.99 * g;
            let got = s.tp.pacing_rate_bytes_per_s as f64;
            assert!((got - want).abs() / want < 0.004, "pacing {got} vs {want} at gain {g}");
            checked[if g > 1.0 {
                0
            } else if g < 1.0 {
                1
            } else {
                2
            }] += 1;
            if g > 1.0 {
                max_cwnd_probe = max_cwnd_probe.max(s.tp.snd_cwnd);
            } else if g == 1.0 {
                max_cwnd_cruise = max_cwnd_cruise.max(s.tp.snd_cwnd);
            }
            if g == 1.0 {
                // cwnd = 2·BDP + ACK-aggregation allowance + 3 bursts, rounded up to even.
                let cwnd = s.tp.snd_cwnd as f64;
                let lo = 2.0 * bdp + quanta as f64;
                let hi = 2.0 * bdp * 1.02 + quanta as f64 + 2.0 + s.cc.agg.extra_acked() as f64;
                assert!(cwnd >= lo - 1.0 && cwnd <= hi + 1.0, "cwnd {cwnd} not in [{lo}, {hi}]");
                assert!(
                    s.cc.agg.extra_acked() <= 4,
                    "smooth ACKs: extra_acked {}",
                    s.cc.agg.extra_acked()
                );
            }
            s.now >= end
        },
        end + NSEC_PER_SEC,
    );
    assert!(checked.iter().all(|&n| n > 0), "all gains seen: {checked:?}");
    // The 5/4 phase gets 2 more packets of cwnd so inflight can exceed the BDP.
    assert_eq!(
        max_cwnd_probe,
        max_cwnd_cruise + 2,
        "probe cwnd {max_cwnd_probe} vs cruise {max_cwnd_cruise}"
    );
    // And the exported sample agrees.
    let smp = sim.cc.sample(&sim.tp);
    assert_eq!(smp.phase, "probe_bw");
    assert_eq!(smp.phase_code, 2);
    assert!((smp.bw_bps - link_bytes * 8.0).abs() / (link_bytes * 8.0) < 0.02);
    assert_eq!(smp.cwnd_gain, 2.0);
}

#[test]
fn probe_rtt_after_ten_seconds_holds_four_packets_then_restores() {
    let mut sim = link(7);
    sim.run_until(|s, _| s.cc.mode == Mode::ProbeBw, 10 * NSEC_PER_SEC);
    let (cwnd_before, last_refresh) = probe_rtt_check::run_into_probe_rtt(
        &mut sim,
        |cc| cc.mode == Mode::ProbeRtt,
        |s| s.last_min_rtt_drop,
        30 * NSEC_PER_SEC,
    );
    // Entered on the first ACK more than 10 s after the RTT last fell to a new minimum (samples
    // equal to it do not postpone PROBE_RTT: Linux 1b9e2a8c99a5, v5.10).
    let since = sim.now - last_refresh;
    assert!(
        since > 10 * NSEC_PER_SEC && since < 10 * NSEC_PER_SEC + 5 * MS,
        "entered {since} ns after refresh"
    );
    let entered = sim.now;
    // Hold: cwnd ≤ 4; find when inflight first reaches 4, then require ≥ 200 ms and ≥ 1 round.
    let in_probe_rtt = |cc: &Bbr1| cc.mode == Mode::ProbeRtt;
    let what = "PROBE_RTT at 4 packets";
    let reached = probe_rtt_check::run_through_probe_rtt(
        &mut sim,
        in_probe_rtt,
        4,
        entered + 2 * NSEC_PER_SEC,
        what,
    );
    let t4 = probe_rtt_check::assert_held(&sim, reached, 2 * sim.cc.min_rtt.rtt_ns, what);
    // Exit: back to PROBE_BW with the cwnd from before PROBE_RTT.
    assert_eq!(sim.cc.mode, Mode::ProbeBw);
    assert!(
        sim.tp.snd_cwnd >= cwnd_before,
        "cwnd {} not restored to {cwnd_before}",
        sim.tp.snd_cwnd
    );
    // The min RTT was re-measured at the propagation delay.
    assert_eq!(sim.cc.min_rtt.rtt_ns, sim.min_rtt_seen);
    assert!(sim.cc.min_rtt.stamp_ns >= t4);
}

/// A valid rate sample for hand-driven ACKs.
fn sample(prior_delivered: u64, acked: u32, losses: u32, prior_in_flight: u32) -> RateSample {
    RateSample {
        has_prior: true,
        prior_delivered,
        delivered: 40,
        interval_ns: 40 * MS as i64,
        rtt_ns: 45 * MS as i64,
        acked_sacked: acked,
        losses,
        prior_in_flight,
        ..Default::default()
    }
}

#[test]
fn packet_conservation_in_first_round_of_recovery_then_restore() {
    let sim = settled_in_probe_bw(8);
    let (mut tp, mut bbr) = (sim.tp.clone(), sim.cc.clone());
    let cwnd0 = tp.snd_cwnd;
    // Loss detected: 5 segments marked lost, the transport enters Recovery.
    bbr.ssthresh(&tp);
    bbr.set_state(&mut tp, CaState::Recovery);
    tp.ca_state = CaState::Recovery;
    tp.packets_out = 100;
    tp.lost_out = 5;
    tp.lost += 5;
    let d0 = tp.delivered;
    // First ACK of recovery: cwnd = inflight + acked (RFC 6937 / Linux packet conservation).
    tp.packets_out -= 1;
    tp.delivered += 1;
    let before = tp.packets_in_flight();
    bbr.cong_control(&mut tp, &sample(d0 - 60, 1, 5, before + 1));
    assert_eq!(tp.snd_cwnd, tp.packets_in_flight() + 1);
    assert!(tp.snd_cwnd < cwnd0);
    // Rest of the first round: each ACK releases exactly what it acked (inflight + acked),
    // minus nothing else; cwnd never exceeds inflight + acked.
    for i in 0..20 {
        tp.packets_out -= 1;
        tp.delivered += 1;
        let losses = if i == 5 { 2 } else { 0 };
        tp.lost_out += losses;
        let cw_before = tp.snd_cwnd;
        let rs = sample(d0 - 50 + i, 1, losses, tp.packets_in_flight() + 1);
        bbr.cong_control(&mut tp, &rs);
        let want = (cw_before - losses).max(tp.packets_in_flight() + 1);
        assert_eq!(tp.snd_cwnd, want, "ACK {i} in the conservation round");
        tp.packets_out += 1; // sender sends what cwnd allows: one for one
    }
    // A sample of a packet sent after recovery started ends the round: from now on cwnd
    // grows by up to the acked count per ACK (slow start toward the target).
    tp.packets_out -= 1;
    tp.delivered += 1;
    let cw = tp.snd_cwnd;
    let rs = sample(d0 + 1, 2, 0, tp.packets_in_flight() + 2);
    bbr.cong_control(&mut tp, &rs);
    assert!(!bbr.packet_conservation);
    assert_eq!(tp.snd_cwnd, cw + 2);
    // Recovery ends: the cwnd saved at entry comes back.
    tp.ca_state = CaState::Open;
    tp.lost_out = 0;
    bbr.set_state(&mut tp, CaState::Open);
    tp.delivered += 1;
    let rs = sample(d0 + 2, 1, 0, tp.packets_in_flight() + 1);
    bbr.cong_control(&mut tp, &rs);
    assert!(tp.snd_cwnd >= cwnd0, "cwnd {} not restored to {cwnd0}", tp.snd_cwnd);
}

#[test]
fn rto_cuts_cwnd_to_inflight_plus_one_and_restores_after() {
    let mut sim = link(9);
    sim.run_until(|s, _| s.cc.mode == Mode::ProbeBw, 10 * NSEC_PER_SEC);
    let (mut tp, mut bbr) = (sim.tp.clone(), sim.cc.clone());
    let cwnd0 = tp.snd_cwnd;
    // RTO (tcp_enter_loss): ssthresh() saves cwnd, everything outstanding is marked lost.
    bbr.ssthresh(&tp);
    tp.lost_out = tp.packets_out;
    bbr.set_state(&mut tp, CaState::Loss);
    tp.ca_state = CaState::Loss;
    assert_eq!(tp.snd_cwnd, 1);
    assert_eq!(bbr.full_bw.bw, 0);
    // Back to Open after the retransmissions are acked: saved cwnd restored.
    tp.ca_state = CaState::Open;
    tp.lost_out = 0;
    tp.packets_out = 1;
    tp.delivered += 1;
    let rs = sample(tp.delivered - 1, 1, 0, 2);
    bbr.cong_control(&mut tp, &rs);
    assert!(
        tp.snd_cwnd >= cwnd0.min(bbr.inflight(&tp, bbr.bw(), CWND_GAIN)),
        "cwnd {} vs {cwnd0}",
        tp.snd_cwnd
    );
}

#[test]
fn policer_engages_long_term_bw_at_the_policed_rate_with_gain_one() {
    // Link 2000 pkt/s, policer 800 pkt/s with a 40-packet bucket.
    let mut sim = link(10);
    let policed = 800.0;
    sim.policer = Some(Policer::new(800, 40));
    let (mut lost_at_start, mut delivered_at_start) = (0, 0);
    sim.run_until(
        |s, _| {
            if !s.cc.lt_is_sampling {
                lost_at_start = s.tp.lost;
                delivered_at_start = s.tp.delivered;
            }
            s.cc.lt_use_bw
        },
        20 * NSEC_PER_SEC,
    );
    // The loss pattern that engaged it: ≥ 20 % loss at a consistent delivery rate.
    let lost = sim.tp.lost - lost_at_start;
    let delivered = sim.tp.delivered - delivered_at_start;
    assert!(lost as f64 >= 0.19 * delivered as f64, "lost {lost} of {delivered}");
    let lt_pps = sim.cc.lt_bw as f64 / BW_UNIT as f64 * 1e6;
    assert!((lt_pps - policed).abs() / policed < 0.05, "lt_bw {lt_pps} pkt/s vs policer {policed}");
    // While lt_bw is in use: PROBE_BW at gain 1 (no 5/4 probing), pacing at 0.99·lt_bw.
    sim.run_until(|s, _| s.cc.mode == Mode::ProbeBw, sim.now + 10 * NSEC_PER_SEC);
    let end = sim.now + NSEC_PER_SEC;
    let mut checked = 0;
    sim.run_until(
        |s, ev| {
            if matches!(ev, Ev::Ack { .. }) && s.cc.mode == Mode::ProbeBw && s.cc.lt_use_bw {
                checked += 1;
                assert_eq!(s.cc.pacing_gain, GAIN_UNIT);
                let want = s.cc.lt_bw as f64 / BW_UNIT as f64 * 1e6 * MSS as f64 * 0.99;
                let got = s.tp.pacing_rate_bytes_per_s as f64;
                assert!((got - want).abs() / want < 0.01, "pacing {got} vs {want}");
            }
            s.now >= end
        },
        end + NSEC_PER_SEC,
    );
    assert!(checked > 500, "only {checked} ACKs in PROBE_BW with lt_bw");
    assert!(sim.cc.lt_use_bw);
    let smp = sim.cc.sample(&sim.tp);
    assert_eq!(smp.pacing_gain, 1.0);
    assert!((smp.bw_bps - policed * MSS as f64 * 8.0).abs() / (policed * MSS as f64 * 8.0) < 0.05);
}

#[test]
fn init_paces_at_high_gain_times_initial_window_over_rtt() {
    let mut tp = TcpCc::new(MSS, 10);
    let mut b = Bbr1::new(0);
    b.init(&mut tp);
    assert!(tp.pacing_enabled);
    // No RTT yet: 10 packets per 1 ms × 2.885 × 0.99.
    let want = 10.0 * MSS as f64 / 1e-3 * 2.885 * 0.99;
    let got = tp.pacing_rate_bytes_per_s as f64;
    assert!((got - want).abs() / want < 0.005, "{got} vs {want}");
    // With srtt = 20 ms.
    tp.srtt_ns = 20 * MS;
    b.init(&mut tp);
    let want = 10.0 * MSS as f64 / 20e-3 * 2.885 * 0.99;
    let got = tp.pacing_rate_bytes_per_s as f64;
    assert!((got - want).abs() / want < 0.005, "{got} vs {want}");
}

#[test]
fn quantization_budget_adds_three_bursts_rounds_to_even_and_two_when_probing() {
    let mut tp = TcpCc::new(MSS, 10);
    tp.pacing_rate_bytes_per_s = 1_000_000; // burst goal 2 segments
    let mut b = Bbr1::new(0);
    b.init(&mut tp);
    tp.pacing_rate_bytes_per_s = 1_000_000;
    assert_eq!(b.quantization_budget(&tp, 101), 108); // 101 + 6 = 107 → even 108
    assert_eq!(b.quantization_budget(&tp, 100), 106);
    b.mode = Mode::ProbeBw;
    b.cycle_idx = 0;
    assert_eq!(b.quantization_budget(&tp, 101), 110); // + 2 in the 5/4 phase
    b.cycle_idx = 1;
    assert_eq!(b.quantization_budget(&tp, 101), 108);
}

#[test]
fn tso_goal_is_a_millisecond_of_data_within_bounds() {
    let mut tp = TcpCc::new(MSS, 10);
    tp.pacing_rate_bytes_per_s = 100_000; // < 1.2 Mbit/s
    assert_eq!(Bbr1::tso_segs_goal(&tp), 1);
    tp.pacing_rate_bytes_per_s = 1_000_000; // 8 Mbit/s: 976 B per ms → minimum 2
    assert_eq!(Bbr1::tso_segs_goal(&tp), 2);
    tp.pacing_rate_bytes_per_s = 30_720_000; // 30000 B per 1/1024 s = 20 segments
    assert_eq!(Bbr1::tso_segs_goal(&tp), 20);
    tp.pacing_rate_bytes_per_s = 10_000_000_000; // capped by 64 KB
    assert_eq!(Bbr1::tso_segs_goal(&tp), (65_536 - 1 - 320) / MSS);
    tp.mss = 100;
    assert_eq!(Bbr1::tso_segs_goal(&tp), 127);
}

/// BBRv1 in PROBE_BW with the pipe full, a 2000 packets/s bandwidth estimate and a 40 ms min_rtt,
/// whose ACK-aggregation estimate has just seen one ACK for 30 packets at once.
fn after_an_aggregated_ack(variant: Variant) -> (Bbr1, TcpCc, u32) {
    let mut tp = TcpCc::new(MSS, 10);
    let mut b = Bbr1::with_variant(0, variant);
    b.init(&mut tp);
    let bw = (2000u128 * BW_UNIT / 1_000_000) as u64; // packets/µs << 24
    b.bw.update(probe_bw::BW_RTTS, 0, bw);
    b.min_rtt.rtt_ns = 40 * MS;
    b.full_bw.reached = true;
    b.mode = Mode::ProbeBw;
    b.cycle_idx = 2; // a cruise phase
    tp.pacing_rate_bytes_per_s = 1_000_000; // 2-segment bursts
    tp.snd_cwnd = 1000; // far above any target: set_cwnd snaps down to the target
    tp.delivered_mstamp_ns = 5 * NSEC_PER_SEC;
    let burst = RateSample {
        acked_sacked: 30,
        delivered: 30,
        interval_ns: MS as i64,
        ..Default::default()
    };
    b.agg.update(
        &burst,
        &crate::bbr::round::RoundCounter::default(),
        crate::bbr::aggregation::EXTRA_ACKED_WIN_RTTS,
        bw,
        tp.delivered_mstamp_ns,
        tp.snd_cwnd,
    );
    // cwnd = 2·BDP (2 · 80 packets) + 3 bursts of 2, even, without any aggregation allowance.
    let without = b.quantization_budget(&tp, b.bdp(bw, CWND_GAIN));
    let rs =
        RateSample { acked_sacked: 1, delivered: 1, interval_ns: MS as i64, ..Default::default() };
    b.set_cwnd(&mut tp, &rs, 1, bw, CWND_GAIN);
    (b, tp, without)
}

#[test]
fn linux_413_has_no_ack_aggregation_term_in_cwnd() {
    // Mainline (since 78dc70ebaa38, v5.1) adds the 30-packet excess to the target; 4.13 does not.
    let (main, tp_main, without) = after_an_aggregated_ack(Variant::Mainline);
    assert_eq!(without, 166);
    assert_eq!(main.agg.extra_acked(), 30);
    assert_eq!(tp_main.snd_cwnd, without + 30);
    let (_, tp_413, without_413) = after_an_aggregated_ack(Variant::Linux413);
    assert_eq!(without_413, without);
    assert_eq!(tp_413.snd_cwnd, without, "Linux 4.13's cwnd target has no extra_acked term");
}

#[test]
fn linux_413_paces_at_gain_times_bw_without_margin_and_no_probe_extra() {
    let (mut main, mut tp_main, _) = after_an_aggregated_ack(Variant::Mainline);
    let (mut old, mut tp_old, _) = after_an_aggregated_ack(Variant::Linux413);
    let bw = main.bw();
    main.pacer.set(&mut tp_main, bw, GAIN_UNIT, true);
    old.pacer.set(&mut tp_old, bw, GAIN_UNIT, true);
    // 2000 packets/s × MSS: 4.13 at that rate (fq paces whole packets at bw), mainline 1 % below
    // (within the 2^-24 packets/µs truncation of the estimate).
    let link = 2000.0 * MSS as f64;
    let (old_rate, main_rate) =
        (tp_old.pacing_rate_bytes_per_s as f64, tp_main.pacing_rate_bytes_per_s as f64);
    assert!((old_rate - link).abs() / link < 1e-4, "{old_rate} vs {link}");
    assert!((main_rate - 0.99 * link).abs() / link < 1e-4, "{main_rate} vs {}", 0.99 * link);
    // The 5/4 phase: mainline's +2 packets, none in 4.13.
    main.cycle_idx = 0;
    old.cycle_idx = 0;
    assert_eq!(main.quantization_budget(&tp_main, 101), 110);
    assert_eq!(old.quantization_budget(&tp_old, 101), 108);
}
