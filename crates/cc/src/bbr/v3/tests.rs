//! Checked against the draft's rules and the link's physics (the appendix "BBR Example Test
//! Cases"), never against numbers this implementation produced for itself.
use super::*;
use crate::bbr::probe_rtt_check;
use crate::bbr::units::BW_UNIT;
use crate::testkit::{CwndLimited, Ev, KitCc, Policer, Recovery, Sim, MS, MSS, SEC};
use crate::NSEC_PER_USEC;

impl KitCc for Bbr3 {
    fn round_start(&self) -> bool {
        self.round.round_start
    }
}

/// The shared bottleneck as the draft's tests need it: the hooks in the transport's order plus
/// the per-packet loss hook (`skb_marked_lost`), restart-from-idle events, recovery extended by
/// every loss (its retransmission is sent now), and C.is_cwnd_limited as the draft defines it:
/// cwnd fully used at any point in the last packet-timed round (Linux tcp_cwnd_validate), not
/// just on the latest send.
fn sim_with(rate_pps: u64, prop_ns: u64, variant: Variant, ecn: bool) -> Sim<Bbr3> {
    let mut tp = TcpCc::new(MSS, 10);
    tp.ecn_ok = ecn;
    let mut sim = Sim::with_tp(Bbr3::new(42, variant), tp, rate_pps, prop_ns);
    sim.recovery = Recovery::ExtendedByEachLoss;
    sim.cwnd_limited = CwndLimited::Round;
    sim.tx_start_events = true;
    sim
}

fn new_sim(rate_pps: u64, prop_ms: u64, variant: Variant) -> Sim<Bbr3> {
    sim_with(rate_pps, prop_ms * MS, variant, false)
}

impl Sim<Bbr3> {
    fn max_bw_pps(&self) -> f64 {
        self.cc.max_bw() as f64 / BW_UNIT as f64 * 1e6
    }

    fn bw_pps(&self) -> f64 {
        self.cc.bw() as f64 / BW_UNIT as f64 * 1e6
    }

    fn gain(&self) -> f64 {
        self.cc.pacing_gain as f64 / GAIN_UNIT as f64
    }

    /// The bandwidth sample of the latest ACK.
    fn last_sample_bw(&self) -> u64 {
        Bbr3::bw_sample(&self.last_rs)
    }

    fn run_into_probe_bw(&mut self) {
        self.run_until(|s, _| s.cc.is_in_probe_bw(), 20 * SEC);
    }
}

/// 2000 packets/s (24 Mbit/s), 40 ms: BDP ≈ 80 packets.
fn link(v: Variant) -> Sim<Bbr3> {
    new_sim(2000, 40, v)
}

const BOTH: [Variant; 2] = [Variant::Draft, Variant::Linux];

/// A fresh bbr3_linux connection that negotiated ECN.
fn linux_ecn_flow() -> (TcpCc, Bbr3) {
    let mut tp = TcpCc::new(MSS, 10);
    tp.ecn_ok = true;
    let mut b = Bbr3::new(1, Variant::Linux);
    b.init(&mut tp);
    (tp, b)
}

/// A 2-BDP buffer (probes do not overflow it), in PROBE_BW.
fn deep_link_in_probe_bw(v: Variant) -> Sim<Bbr3> {
    let mut sim = link(v);
    sim.buf_pkts = 160;
    sim.run_into_probe_bw();
    sim
}

/// On the deep link, the connection and the algorithm at the first PROBE_BW UP.
fn first_probe_up(v: Variant) -> (TcpCc, Bbr3) {
    let mut sim = deep_link_in_probe_bw(v);
    sim.run_until(|s, _| s.cc.state == State::ProbeBwUp, 20 * SEC);
    (sim.tp, sim.cc)
}

fn drain_gain(v: Variant) -> f64 {
    if v == Variant::Draft {
        0.5
    } else {
        1.0 / 2.885
    }
}

fn down_gain(v: Variant) -> f64 {
    if v == Variant::Draft {
        0.90
    } else {
        0.91
    }
}

/// Startup: §Exiting Startup on Bandwidth Plateau.
#[test]
fn startup_exits_after_three_rounds_without_25_percent_growth_with_max_bw_within_2_percent() {
    for v in BOTH {
        let mut sim = link(v);
        // (sample bw, app-limited, round start) of every ACK, to replay the full-pipe rule.
        let mut samples: Vec<(u64, bool, bool)> = Vec::new();
        let mut gains_ok = true;
        sim.run_until(
            |s, ev| {
                if matches!(ev, Ev::Ack { .. }) {
                    if s.last_rs.interval_ns > 0 {
                        samples.push((
                            s.last_sample_bw(),
                            s.last_rs.is_app_limited,
                            s.cc.round.round_start,
                        ));
                    }
                    if s.cc.state == State::Startup {
                        gains_ok &=
                            (s.gain() - 2.77).abs() < 0.005 && s.cc.cwnd_gain == 2 * GAIN_UNIT;
                    }
                    return s.cc.state != State::Startup;
                }
                false
            },
            10 * SEC,
        );
        // §CheckFullBWReached: baseline reset on ≥ 25 % growth (Draft: round-start samples
        // only; Linux: any sample), otherwise one more round without growth; full at 3.
        let (mut full_bw, mut cnt, mut exit_at) = (0f64, 0, None);
        for (i, &(bw, app, rstart)) in samples.iter().enumerate() {
            if app || (v == Variant::Draft && !rstart) {
                continue;
            }
            if bw as f64 >= 1.25 * full_bw {
                full_bw = bw as f64;
                cnt = 0;
            } else if rstart {
                cnt += 1;
                if cnt == 3 {
                    exit_at = Some(i);
                    break;
                }
            }
        }
        assert_eq!(
            exit_at,
            Some(samples.len() - 1),
            "{v:?}: exit on the ACK where the spec's rule says full"
        );
        assert!(gains_ok, "{v:?}: Startup gains are 2.77 pacing / 2.0 cwnd");
        assert_eq!(sim.cc.state, State::Drain, "{v:?}");
        assert!(sim.cc.full_bw.now && sim.cc.full_bw.reached);
        assert_eq!(sim.cc.full_bw.cnt, 3);
        let est = sim.max_bw_pps();
        assert!((est - 2000.0).abs() / 2000.0 < 0.02, "{v:?}: max_bw {est} pkt/s vs link 2000");
        assert!((sim.gain() - drain_gain(v)).abs() < 0.005, "{v:?}: drain gain {}", sim.gain());
        assert_eq!(sim.tp.snd_ssthresh, sim.cc.inflight(&sim.tp, sim.cc.max_bw(), GAIN_UNIT));
    }
}

/// §Pacing Rate: never lower the pacing rate before full_bw_reached.
#[test]
fn startup_never_lowers_the_pacing_rate() {
    let mut sim = link(Variant::Draft);
    let mut last = 0;
    let mut acks = 0;
    sim.run_until(
        |s, ev| {
            if matches!(ev, Ev::Ack { .. }) {
                acks += 1;
                if acks > 1 && !s.cc.full_bw.reached {
                    assert!(s.tp.pacing_rate_bytes_per_s >= last, "lowered at ACK {acks}");
                }
                last = s.tp.pacing_rate_bytes_per_s;
            }
            s.cc.full_bw.reached
        },
        10 * SEC,
    );
}

/// §Exiting STARTUP on Loss When Application-Limited, and §Never Exiting STARTUP When
/// Application-Limited With No Loss.
#[test]
fn startup_exits_on_loss_even_when_app_limited_but_never_without_loss() {
    for v in BOTH {
        // App-limited at 60 % of the link, 5 % random loss: > 2 % and many loss events per round.
        let mut sim = link(v);
        // App-limited at 80 % of the link (64 packets per round), 15 % random loss: > 2 % and
        // more than 6 loss events per round.
        sim.set_app_rate(Some(1600.0));
        sim.loss_p = 0.15;
        let mut app_limited_samples = 0;
        sim.run_until(
            |s, ev| {
                if matches!(ev, Ev::Ack { .. }) && s.tp.app_limited != 0 {
                    app_limited_samples += 1;
                }
                s.cc.state != State::Startup
            },
            20 * SEC,
        );
        assert!(app_limited_samples > 10, "the flow was app-limited");
        assert!(
            matches!(sim.cc.state, State::Drain | State::ProbeBwDown | State::ProbeBwCruise),
            "{v:?}: {:?}",
            sim.cc.state
        );
        assert!(sim.cc.full_bw.reached && sim.cc.full_bw.now);
        assert_eq!(sim.tp.ca_state, CaState::Recovery, "exit at the end of a recovery round");
        assert_eq!(sim.cc.undo_state, Some(State::Startup));
        // inflight_longterm = max(BDP, inflight_latest): at least the estimated BDP.
        let bdp = sim.cc.inflight(&sim.tp, sim.cc.max_bw(), GAIN_UNIT);
        assert!(sim.cc.inflight_longterm >= bdp && sim.cc.inflight_longterm != INF_PKTS);

        // Same app limit, no loss: Startup forever (until the 5 s ProbeRTT, which returns to
        // Startup: §Entering and Exiting PROBE_RTT During STARTUP).
        let mut sim = link(v);
        sim.set_app_rate(Some(1200.0));
        let mut seen_probe_rtt = false;
        let end = 12 * SEC;
        sim.run_until(
            |s, _| {
                assert!(
                    matches!(s.cc.state, State::Startup | State::ProbeRtt),
                    "{v:?} left Startup: {:?}",
                    s.cc.state
                );
                seen_probe_rtt |= s.cc.state == State::ProbeRtt;
                s.now >= end
            },
            end + SEC,
        );
        assert!(!sim.cc.full_bw.reached);
        assert!(seen_probe_rtt, "ProbeRTT after 5 s in Startup");
        assert_eq!(sim.cc.state, State::Startup, "ProbeRTT in Startup returns to Startup");
    }
}

/// §Exiting DRAIN Based on Inflight.
#[test]
fn drain_exits_when_inflight_reaches_the_bdp() {
    for v in BOTH {
        let mut sim = link(v);
        sim.run_until(|s, _| s.cc.state == State::Drain, 10 * SEC);
        let mut drain_acks = 0;
        sim.run_until(
            |s, ev| {
                if !matches!(ev, Ev::Ack { .. }) {
                    return false;
                }
                // BDP of the physical link plus the quantization budget (3 quanta).
                let target = s.bdp_phys() * 1.02 + 3.0 * s.cc.send_quantum_segs(&s.tp) as f64 + 1.0;
                let inflight = s.tp.packets_in_flight() as f64;
                if s.cc.state == State::Drain {
                    drain_acks += 1;
                    assert!((s.gain() - drain_gain(v)).abs() < 0.005);
                    return false;
                }
                // Drain → ProbeBW_DOWN (which may pass to CRUISE on the same ACK: inflight is
                // already at the BDP).
                assert!(
                    matches!(s.cc.state, State::ProbeBwDown | State::ProbeBwCruise),
                    "{v:?}: Drain → {:?}",
                    s.cc.state
                );
                assert_eq!(s.cc.probe_bw.cycle_stamp_ns, s.now, "ProbeBW_DOWN started on this ACK");
                assert!(
                    inflight <= target + s.cc.send_quantum_segs(&s.tp) as f64,
                    "{v:?}: left Drain at inflight {inflight} > {target}"
                );
                assert!(
                    s.cc.round.round_count <= s.cc.drain_start_round + 3,
                    "{v:?}: not by the timeout"
                );
                true
            },
            10 * SEC,
        );
        assert!(drain_acks > 0);
    }
}

/// §Exiting DRAIN Based on Time: inflight held above Inflight(1.0) (as after a 10 % bandwidth
/// drop on entering Drain); Drain must end in the first round after 3 rounds in Drain.
#[test]
fn drain_exits_after_three_rounds_if_inflight_stays_high() {
    for v in BOTH {
        let mut sim = link(v);
        sim.run_until(|s, _| s.cc.state == State::Drain, 10 * SEC);
        let (mut tp, mut b) = (sim.tp.clone(), sim.cc.clone());
        let start = b.drain_start_round;
        let target = b.inflight(&tp, b.max_bw(), GAIN_UNIT);
        tp.packets_out = 3 * target; // inflight stays above the BDP
        tp.lost_out = 0;
        tp.sacked_out = 0;
        for r in 1..=4u64 {
            tp.now_ns += 45 * MS;
            tp.delivered += 10;
            let rs = RateSample {
                has_prior: true,
                prior_delivered: b.round.next_round_delivered, // each ACK ends a round
                delivered: 90,
                interval_ns: 45 * MS as i64,
                rtt_ns: 80 * MS as i64,
                acked_sacked: 10,
                tx_in_flight: 3 * target,
                prior_in_flight: 3 * target,
                ..Default::default()
            };
            b.cong_control(&mut tp, &rs);
            assert!(b.round.round_start);
            assert_eq!(b.round.round_count, start + r);
            if r <= 3 {
                assert_eq!(b.state, State::Drain, "{v:?}: left Drain after {r} rounds");
            } else {
                assert_eq!(b.state, State::ProbeBwDown, "{v:?}: still in Drain after {r} rounds");
            }
        }
    }
}

/// §ProbeBW: DOWN → CRUISE by inflight, DOWN/CRUISE → REFILL by bw_probe_wait or the Reno
/// round bound, REFILL → UP after one round, UP → DOWN; gains per phase.
#[test]
fn probe_bw_cycles_down_cruise_refill_up_with_the_spec_exit_conditions() {
    for v in BOTH {
        let mut sim = deep_link_in_probe_bw(v);
        let mut gains: Vec<(State, f64, f64)> = Vec::new();
        let tr = {
            let mut out = Vec::new();
            let mut prev = sim.cc.state;
            let mut down_entry = (sim.now, sim.cc.round.round_count);
            let end = sim.now + 30 * SEC;
            sim.run_until(
                |s, ev| {
                    if matches!(ev, Ev::Ack { .. }) {
                        gains.push((
                            s.cc.state,
                            s.gain(),
                            s.cc.cwnd_gain as f64 / GAIN_UNIT as f64,
                        ));
                    }
                    if s.cc.state != prev {
                        let (t0, r0) = down_entry;
                        out.push((
                            prev,
                            s.cc.state,
                            s.now - t0,
                            s.cc.round.round_count - r0,
                            s.tp.packets_in_flight(),
                            s.bdp_phys(),
                        ));
                        // A cycle (and its probe clock) starts with StartProbeBW_DOWN, also when
                        // ProbeRTT exits through DOWN straight to CRUISE.
                        if s.cc.state == State::ProbeBwDown || prev == State::ProbeRtt {
                            down_entry = (s.now, s.cc.round.round_count);
                        }
                        prev = s.cc.state;
                    }
                    s.now >= end
                },
                end + SEC,
            );
            out
        };
        let mut seen = std::collections::HashSet::new();
        for &(from, to, since_down, rounds_since_down, inflight, bdp) in &tr {
            seen.insert((from, to));
            match (from, to) {
                (State::ProbeBwDown, State::ProbeBwCruise) => {
                    // inflight ≤ BDP (+ quantization budget) and ≤ headroom target.
                    let q = 3.0 * 2.0 + 1.0;
                    assert!(
                        inflight as f64 <= bdp * 1.02 + q,
                        "{v:?}: cruise at inflight {inflight} > BDP {bdp}"
                    );
                }
                (State::ProbeBwDown | State::ProbeBwCruise, State::ProbeBwRefill) => {
                    // 2–3 s wall clock, or min(BDP, 63) rounds (rounds_since_bw_probe starts
                    // at 0 or 1).
                    let by_time = since_down > 2 * SEC && since_down <= 3 * SEC + 50 * MS;
                    let by_rounds = rounds_since_down + 1 >= 63.min(bdp as u64)
                        && since_down <= 3 * SEC + 50 * MS;
                    assert!(
                        by_time || by_rounds,
                        "{v:?}: REFILL after {since_down} ns / {rounds_since_down} rounds"
                    );
                }
                (State::ProbeBwRefill, State::ProbeBwUp) => {}
                (State::ProbeBwUp, State::ProbeBwDown) => {}
                (_, State::ProbeRtt) | (State::ProbeRtt, State::ProbeBwCruise) => {}
                other => panic!("{v:?}: transition {other:?} not in the state machine"),
            }
        }
        for need in [
            (State::ProbeBwDown, State::ProbeBwCruise),
            (State::ProbeBwCruise, State::ProbeBwRefill),
            (State::ProbeBwRefill, State::ProbeBwUp),
            (State::ProbeBwUp, State::ProbeBwDown),
        ] {
            assert!(seen.contains(&need), "{v:?}: never saw {need:?} in {seen:?}");
        }
        for &(st, pg, cg) in &gains {
            let (wp, wc) = match st {
                State::ProbeBwDown => (down_gain(v), 2.0),
                State::ProbeBwCruise | State::ProbeBwRefill => (1.0, 2.0),
                State::ProbeBwUp => (1.25, 2.25),
                State::ProbeRtt => (1.0, 0.5),
                _ => continue,
            };
            assert!(
                (pg - wp).abs() < 0.005 && (cg - wc).abs() < 1e-9,
                "{v:?} {st:?}: gains {pg}/{cg}"
            );
        }
    }
}

/// §ProbeBW_REFILL: exactly one packet-timed round, then UP with is_bw_probe_sample.
#[test]
fn refill_lasts_one_round_then_up() {
    let mut sim = deep_link_in_probe_bw(Variant::Draft);
    sim.run_until(|s, _| s.cc.state == State::ProbeBwRefill, 10 * SEC);
    let r0 = sim.cc.round.round_count;
    assert!(
        sim.cc.bw_shortterm == INF_BW && sim.cc.inflight_shortterm == INF_PKTS,
        "REFILL resets the short-term model"
    );
    sim.run_until(|s, _| s.cc.state != State::ProbeBwRefill, 10 * SEC);
    assert_eq!(sim.cc.state, State::ProbeBwUp);
    assert_eq!(sim.cc.round.round_count, r0 + 1);
    assert!(sim.cc.is_bw_probe_sample);
}

/// §Exiting PROBE_UP on Bandwidth Plateau: no loss, deep buffer, inflight_longterm unset.
#[test]
fn up_exits_on_bandwidth_plateau_after_three_rounds() {
    let mut sim = link(Variant::Draft);
    sim.run_into_probe_bw();
    let mut checked = 0;
    for _ in 0..3 {
        sim.run_until(|s, _| s.cc.state == State::ProbeBwUp, 20 * SEC);
        let r0 = sim.cc.round.round_count;
        let lost0 = sim.tp.lost;
        sim.run_until(|s, _| s.cc.state != State::ProbeBwUp, 20 * SEC);
        if sim.cc.state != State::ProbeBwDown {
            continue; // interrupted by ProbeRTT
        }
        assert_eq!(sim.tp.lost, lost0, "no loss with an unlimited buffer");
        assert!(!sim.cc.prev_probe_too_high && !sim.cc.prev_probe_precautionary);
        assert!(
            sim.cc.round.round_count - r0 >= 3,
            "UP left after {} rounds",
            sim.cc.round.round_count - r0
        );
        assert_eq!(sim.cc.inflight_longterm, INF_PKTS);
        checked += 1;
    }
    assert!(checked >= 2);
}

/// §Handling Loss During PROBE_UP After inflight_longterm is Set / HandleInflightTooHigh:
/// loss > 2 % ends UP and sets inflight_longterm = max(tx_in_flight, Beta · TargetInflight).
#[test]
fn loss_above_threshold_in_up_cuts_inflight_longterm_by_beta_and_goes_down() {
    for v in BOTH {
        let beta = if v == Variant::Draft { 0.7 } else { 180.0 / 256.0 };
        for tx in [20u32, 400] {
            let (mut tp, mut b) = first_probe_up(v);
            b.inflight_longterm = 200;
            // Spec inputs: TargetInflight = min(BDP, cwnd) with BDP = bw · min_rtt.
            let bdp = (b.bw() as f64 / BW_UNIT as f64 * 1e6) * (b.min_rtt.rtt_ns as f64 / 1e9);
            let target = bdp.ceil().min(tp.snd_cwnd as f64);
            let lost = (tx as f64 * 0.03).ceil() as u64; // 3 % > 2 %
            tp.delivered += 1;
            let rs = RateSample {
                has_prior: true,
                prior_delivered: tp.delivered - 10,
                delivered: 10,
                interval_ns: 45 * MS as i64,
                rtt_ns: 41 * MS as i64,
                acked_sacked: 1,
                tx_in_flight: tx,
                lost,
                prior_in_flight: tp.packets_in_flight(),
                ..Default::default()
            };
            b.ssthresh(&tp);
            b.cong_control(&mut tp, &rs);
            // StartProbeBW_DOWN ran on this ACK (CRUISE may follow at once: inflight is low).
            assert!(
                matches!(b.state, State::ProbeBwDown | State::ProbeBwCruise),
                "{v:?}: {:?}",
                b.state
            );
            assert_eq!(b.probe_bw.cycle_stamp_ns, tp.now_ns);
            let want = (tx as f64).max((target * beta).floor());
            assert!(
                (b.inflight_longterm as f64 - want).abs() <= 1.0,
                "{v:?} tx {tx}: inflight_longterm {} want {want}",
                b.inflight_longterm
            );
            assert!(b.prev_probe_too_high && !b.is_bw_probe_sample);
            assert_eq!(b.undo_state, Some(State::ProbeBwUp));
            // Exactly at the threshold it is not "too high" (strictly greater, §IsInflightTooHigh).
            assert!(!b.is_inflight_too_high(1000, 19, 0, 0));
            assert!(b.is_inflight_too_high(1000, 21, 0, 0));
        }
    }
}

/// §Precautionary Bandwidth Probing: after a too-high probe, the next UP stops as soon as
/// inflight reaches inflight_longterm; if the following round of feedback has no excess loss
/// the flow goes straight back to REFILL (no CRUISE).
#[test]
fn precautionary_probe_stops_at_inflight_longterm_then_refills_without_cruise() {
    for v in BOTH {
        let (mut tp, mut b) = first_probe_up(v);
        b.prev_probe_too_high = true;
        let hi = 100;
        b.inflight_longterm = hi;
        let ack = |b: &mut Bbr3, tp: &mut TcpCc, inflight: u32, round_end: bool| {
            tp.now_ns += MS;
            tp.wstamp_ns = tp.now_ns;
            tp.delivered += 1;
            tp.packets_out = inflight;
            let rs = RateSample {
                has_prior: true,
                prior_delivered: if round_end {
                    b.round.next_round_delivered
                } else {
                    b.round.next_round_delivered.saturating_sub(5)
                },
                delivered: 80,
                interval_ns: 41 * MS as i64,
                rtt_ns: 41 * MS as i64,
                acked_sacked: 1,
                tx_in_flight: 90,
                prior_in_flight: inflight + 1,
                ..Default::default()
            };
            b.cong_control(tp, &rs);
        };
        // Below inflight_longterm: keep probing.
        ack(&mut b, &mut tp, hi - 10, false);
        assert_eq!(b.state, State::ProbeBwUp, "{v:?}");
        // Inflight reaches inflight_longterm: stop at once (Deceleration).
        ack(&mut b, &mut tp, hi + 1, false);
        assert_eq!(b.state, State::ProbeBwDown, "{v:?}");
        assert!(b.prev_probe_precautionary && !b.prev_probe_too_high);
        // Feedback within the round: stay in DOWN (inflight above the cruise target).
        ack(&mut b, &mut tp, 3 * hi, false);
        assert_eq!(b.state, State::ProbeBwDown);
        // A full round of feedback without excess loss: straight to REFILL (Acceleration).
        ack(&mut b, &mut tp, 3 * hi, true);
        assert_eq!(b.state, State::ProbeBwRefill, "{v:?}: precautionary success skips CRUISE");
    }
}

/// §Entering and Exiting PROBE_RTT: after 5 s without a lower RTT, cwnd = max(0.5·BDP, 4)
/// held for 200 ms and one round once inflight reached it, then CRUISE with the cwnd restored.
#[test]
fn probe_rtt_every_5_s_holds_half_bdp_for_200_ms_and_a_round() {
    for v in BOTH {
        let mut sim = deep_link_in_probe_bw(v);
        let in_probe_rtt = |cc: &Bbr3| cc.state == State::ProbeRtt;
        let (cwnd_before, last_refresh) = probe_rtt_check::run_into_probe_rtt(
            &mut sim,
            in_probe_rtt,
            |s| s.cc.probe_rtt_min.stamp_ns,
            30 * SEC,
        );
        let since = sim.now - last_refresh;
        assert!(
            since > 5 * SEC && since < 5 * SEC + 5 * MS,
            "{v:?}: entered {since} ns after the last refresh"
        );
        assert!((sim.cc.cwnd_gain as f64 / GAIN_UNIT as f64 - 0.5).abs() < 1e-9);
        let cap = ((0.5 * sim.bdp_phys() * 1.02).ceil() as u32).max(4);
        let entered = sim.now;
        let what = format!("{v:?}");
        let reached = probe_rtt_check::run_through_probe_rtt(
            &mut sim,
            in_probe_rtt,
            cap,
            entered + 2 * SEC,
            &what,
        );
        probe_rtt_check::assert_held(&sim, reached, 3 * sim.cc.min_rtt.rtt_ns, &what);
        assert_eq!(sim.cc.state, State::ProbeBwCruise, "{v:?}: exit to DOWN then CRUISE");
        assert!(
            sim.tp.snd_cwnd >= cwnd_before.min(sim.cc.inflight_with_headroom()),
            "{v:?}: cwnd restored"
        );
    }
}

/// §Skipping PROBE_RTT Due to Application-Limited Sending (idle).
#[test]
fn idle_longer_than_the_probe_rtt_interval_skips_probe_rtt() {
    let mut sim = link(Variant::Draft);
    sim.run_into_probe_bw();
    sim.run_for(SEC);
    // Application pauses for 6 s; the flow goes idle.
    sim.pause_until = sim.now + 6 * SEC;
    sim.run_until(|s, _| s.tp.packets_in_flight() == 0, sim.now + SEC);
    let mut saw_idle_restart = false;
    sim.run_until(
        |s, ev| {
            if ev == Ev::Send && s.cc.idle_restart {
                saw_idle_restart = true;
            }
            assert_ne!(s.cc.state, State::ProbeRtt, "ProbeRTT entered after idle");
            s.now > s.pause_until + SEC
        },
        sim.pause_until + 3 * SEC,
    );
    assert!(saw_idle_restart, "TX start after idle sets idle_restart");
    assert!(
        sim.cc.probe_rtt_min.stamp_ns > sim.pause_until,
        "the first RTT after idle refreshed the 5 s window"
    );
}

/// §Correctly Managing Sub-Packet BDPs: cwnd floor 4, pacing at the link rate.
#[test]
fn sub_packet_bdp_keeps_cwnd_at_least_four_and_paces_at_link_rate() {
    // 100 pkt/s (1.2 Mbit/s), 4 ms: BDP ≈ 0.5 packets.
    let mut sim = new_sim(100, 4, Variant::Draft);
    assert!(sim.bdp_phys() < 1.5);
    sim.run_into_probe_bw();
    let end = sim.now + 10 * SEC;
    sim.run_until(
        |s, ev| {
            if matches!(ev, Ev::Ack { .. }) && s.cc.is_in_probe_bw() {
                assert!(s.tp.snd_cwnd >= 4, "cwnd {}", s.tp.snd_cwnd);
            }
            s.now >= end
        },
        end + SEC,
    );
    assert!((sim.max_bw_pps() - 100.0).abs() / 100.0 < 0.03, "max_bw {}", sim.max_bw_pps());
    sim.run_until(|s, _| s.cc.state == State::ProbeBwCruise, sim.now + 10 * SEC);
    sim.run_until(
        |s, ev| matches!(ev, Ev::Ack { .. }) && s.cc.state == State::ProbeBwCruise,
        sim.now + SEC,
    );
    let want = sim.bw_pps() * MSS as f64 * 0.99;
    let got = sim.tp.pacing_rate_bytes_per_s as f64;
    assert!((got - want).abs() / want < 0.01, "pacing {got} vs {want}");
}

/// §Increasing Bandwidth 10x: inflight_longterm grows by 1, 2, 4, … per round in UP and the
/// new bandwidth is found in O(log BDP) rounds of probing.
#[test]
fn ten_fold_bandwidth_increase_grows_inflight_longterm_exponentially() {
    let mut sim = new_sim(500, 40, Variant::Draft);
    sim.buf_pkts = 8; // shallow: probes overflow, inflight_longterm gets set
    sim.run_into_probe_bw();
    sim.run_until(
        |s, _| s.cc.inflight_longterm != INF_PKTS && s.cc.state == State::ProbeBwCruise,
        60 * SEC,
    );
    sim.ns_per_pkt /= 10; // 5000 pkt/s
    sim.buf_pkts = 80;
    let t0 = sim.now;
    sim.run_until(|s, _| s.cc.state == State::ProbeBwUp, t0 + 5 * SEC);
    let up_start = sim.now;
    // Per-round increments of inflight_longterm while cwnd-limited in this UP.
    let mut incs: Vec<i64> = Vec::new();
    let mut last = sim.cc.inflight_longterm as i64;
    sim.run_until(
        |s, _| {
            if s.cc.state != State::ProbeBwUp {
                return true;
            }
            if s.cc.round.round_start {
                incs.push(s.cc.inflight_longterm as i64 - last);
                last = s.cc.inflight_longterm as i64;
            }
            false
        },
        up_start + 10 * SEC,
    );
    // The step doubles per cwnd-limited round (1, 2, 4, 8, …): in rounds where inflight_longterm
    // grew, the k-th growth is ~2^k, so the largest is at least 2^(k−2).
    let full: Vec<i64> = incs.iter().copied().filter(|&d| d > 0).collect();
    assert!(full.len() >= 4, "too few growth rounds: {incs:?}");
    let max = *full.iter().max().unwrap();
    assert!(max as f64 >= 2f64.powi(full.len() as i32 - 2), "growth not exponential: {incs:?}");
    assert!(*full.last().unwrap() >= 8 * full[0], "growth not exponential: {incs:?}");
    // O(log BDP) rounds: the rate can grow at most 1.25× per round (pacing gain) and the
    // volume doubles per cwnd-limited round; when they alternate (a round is cwnd-limited only
    // if cwnd was used up in it) the probe needs ≤ 2·(log_1.25 10 + log2 BDP) rounds.
    let bdp = sim.bdp_phys();
    let budget = (2.0 * (10f64.ln() / 1.25f64.ln() + bdp.log2())).ceil() as u64 + 6;
    assert!(incs.len() as u64 <= budget, "UP took {} rounds > {budget}", incs.len());
    sim.run_for(3 * SEC);
    assert!(sim.max_bw_pps() >= 0.9 * 5000.0, "max_bw {} after the probe", sim.max_bw_pps());
}

/// §Decreasing Bandwidth 10x: bw_shortterm adapts within rounds; max_bw expires after two
/// ProbeBW cycles.
#[test]
fn ten_fold_bandwidth_decrease_adapts_short_term_then_max_bw_expires() {
    let mut sim = new_sim(5000, 40, Variant::Draft);
    sim.buf_pkts = 100;
    sim.run_into_probe_bw();
    sim.run_until(|s, _| s.cc.state == State::ProbeBwCruise, 20 * SEC);
    let old = sim.cc.max_bw();
    sim.ns_per_pkt *= 10; // 500 pkt/s
    sim.buf_pkts = 20;
    let t0 = sim.now;
    sim.run_until(|s, _| s.cc.bw_shortterm != INF_BW && s.bw_pps() < 1.3 * 500.0, t0 + 3 * SEC);
    assert!(sim.now - t0 < 2 * SEC, "bw_shortterm took {} ms", (sim.now - t0) / MS);
    assert_eq!(
        sim.cc.max_bw(),
        old,
        "max_bw is the long-term model: kept until the filter advances"
    );
    // Two UP exits (+ one round each) later the old samples are gone.
    let mut ups = 0;
    let mut was_up = false;
    sim.run_until(
        |s, _| {
            let up = s.cc.state == State::ProbeBwUp;
            if was_up && !up {
                ups += 1;
            }
            was_up = up;
            ups >= 2 && s.cc.state == State::ProbeBwCruise
        },
        t0 + 30 * SEC,
    );
    let est = sim.max_bw_pps();
    assert!((est - 500.0).abs() / 500.0 < 0.05, "max_bw {est} pkt/s after two cycles");
}

/// §Handling Token Bucket Policers: loss when the bucket is exhausted drives the short-term
/// model; the flow settles near the token rate without continuous heavy loss.
#[test]
fn token_bucket_policer_short_term_model_converges_to_the_token_rate() {
    let mut sim = link(Variant::Draft);
    let rate = 800.0;
    sim.policer = Some(Policer::new(800, 40));
    sim.run_into_probe_bw();
    let mut short_set = false;
    let t_mid = sim.now + 10 * SEC;
    sim.run_until(
        |s, _| {
            short_set |= s.cc.bw_shortterm != INF_BW && s.cc.inflight_shortterm != INF_PKTS;
            s.now >= t_mid
        },
        t_mid + SEC,
    );
    assert!(short_set, "policer drops drive bw_shortterm / inflight_shortterm");
    let (d0, l0, t0) = (sim.tp.delivered, sim.tp.lost, sim.now);
    sim.run_for(20 * SEC);
    let dt = (sim.now - t0) as f64 / 1e9;
    let delivered_rate = (sim.tp.delivered - d0) as f64 / dt;
    let loss = (sim.tp.lost - l0) as f64 / (sim.tp.delivered - d0 + sim.tp.lost - l0) as f64;
    println!("policer 800 pkt/s: delivered {delivered_rate:.0} pkt/s, loss {:.2} %", loss * 100.0);
    assert!(
        delivered_rate >= 0.85 * rate && delivered_rate <= 1.01 * rate,
        "delivered {delivered_rate}"
    );
    assert!(loss <= 0.05, "loss {:.1} %", loss * 100.0);
}

/// §Handling Spurious Fast Recovery / RTO: undo restores the short- and long-term model and
/// returns to the state the loss made the flow leave.
#[test]
fn spurious_loss_undo_restores_model_and_returns_to_refill_or_startup() {
    for v in BOTH {
        // From UP.
        let (mut tp, mut b) = first_probe_up(v);
        b.inflight_longterm = 150;
        b.inflight_shortterm = 120;
        let cwnd0 = tp.snd_cwnd;
        b.ssthresh(&tp); // entering recovery: SaveCwnd + SaveStateUponLoss
        b.set_state(&mut tp, CaState::Recovery);
        tp.ca_state = CaState::Recovery;
        b.handle_inflight_too_high(&tp, false, 60);
        assert_eq!(b.state, State::ProbeBwDown);
        assert!(b.inflight_longterm < 150);
        b.inflight_shortterm = 50;
        b.full_bw.bw = 12345;
        let mut b_no_state = b.clone();
        let cwnd = b.undo_cwnd(&mut tp);
        assert!(cwnd >= cwnd0, "{v:?}: cwnd {cwnd} < saved {cwnd0}");
        assert_eq!(b.inflight_longterm, 150);
        // Restored to ≥ 120, then StartProbeBW_REFILL resets the short-term model.
        assert_eq!(b.inflight_shortterm, INF_PKTS);
        assert_eq!(b.full_bw.bw, 0);
        assert_eq!(b.state, State::ProbeBwRefill, "{v:?}: back to probing via REFILL");
        assert_eq!(b.undo_state, None);
        // Without a loss-induced state change the short-term model itself is restored.
        b_no_state.undo_state = None;
        let st = b_no_state.state;
        b_no_state.undo_cwnd(&mut tp);
        assert_eq!(b_no_state.inflight_shortterm, 120);
        assert_eq!(b_no_state.inflight_longterm, 150);
        assert_eq!(b_no_state.state, st);

        // From Startup (loss exit).
        let mut sim = link(v);
        sim.run_until(|s, _| s.tp.delivered > 50, 5 * SEC);
        let (mut tp, mut b) = (sim.tp.clone(), sim.cc.clone());
        b.ssthresh(&tp);
        b.handle_queue_too_high_in_startup(&tp);
        b.enter_drain(&mut tp);
        let cwnd = b.undo_cwnd(&mut tp);
        assert!(cwnd >= tp.snd_cwnd);
        assert_eq!(b.state, State::Startup);
        assert!(!b.full_bw.reached);
        assert_eq!(b.inflight_longterm, INF_PKTS, "long-term bound restored to its pre-loss value");
    }
}

/// §Never Exiting PROBE_UP When Application-Limited With No Loss.
#[test]
fn app_limited_up_without_loss_never_exits() {
    let mut sim = deep_link_in_probe_bw(Variant::Draft);
    sim.run_until(|s, _| s.cc.state == State::ProbeBwRefill, 20 * SEC);
    sim.set_app_rate(Some(1000.0)); // half the link
    sim.run_until(|s, _| s.cc.state == State::ProbeBwUp, sim.now + SEC);
    let end = sim.now + 3 * SEC;
    sim.run_until(
        |s, _| {
            if s.cc.state != State::ProbeRtt {
                assert_eq!(s.cc.state, State::ProbeBwUp, "left UP while app-limited without loss");
            }
            s.now >= end || s.cc.state == State::ProbeRtt
        },
        end + SEC,
    );
    assert_eq!(sim.tp.lost, 0);
}

/// §Handling Application-Limited Sending During PROBE_REFILL.
#[test]
fn app_limited_refill_keeps_max_bw_and_moves_to_up_after_a_round() {
    let mut sim = link(Variant::Draft);
    sim.run_into_probe_bw();
    sim.run_until(|s, _| s.cc.state == State::ProbeBwRefill, 20 * SEC);
    let max0 = sim.cc.max_bw();
    let r0 = sim.cc.round.round_count;
    sim.set_app_rate(Some(400.0));
    sim.run_until(|s, _| s.cc.state != State::ProbeBwRefill, sim.now + 2 * SEC);
    assert_eq!(sim.cc.state, State::ProbeBwUp);
    assert_eq!(sim.cc.round.round_count, r0 + 1);
    assert!(sim.cc.max_bw() >= max0, "app-limited samples lowered max_bw");
    sim.run_for(SEC);
    assert!(sim.cc.max_bw() >= max0);
}

/// Linux v3 ECN: alpha = (1 − 1/16)·alpha + CE_fraction/16 per round, from 1.0.
#[test]
fn linux_ecn_alpha_is_a_1_16_ewma_of_the_ce_fraction_per_round() {
    let (mut tp, mut b) = linux_ecn_flow();
    b.min_rtt.rtt_ns = 2 * MS;
    assert_eq!(b.ecn.alpha, 256);
    let mut alpha = 1.0f64;
    b.full_bw.reached = true; // isolate the EWMA from the Startup exit
    for (delivered, ce) in [(100u64, 0u64), (100, 50), (200, 20), (100, 100)] {
        tp.delivered += delivered;
        tp.delivered_ce += ce;
        b.update_ecn_alpha(&tp);
        alpha = alpha * 15.0 / 16.0 + (ce as f64 / delivered as f64) / 16.0;
        assert!(
            (b.ecn.alpha as f64 / 256.0 - alpha).abs() < 2.0 / 256.0,
            "alpha {} vs {alpha}",
            b.ecn.alpha
        );
    }
    assert!(b.ecn.eligible);
    // Not eligible above 5 ms min_rtt, nor without negotiated ECN.
    let mut b2 = Bbr3::new(1, Variant::Linux);
    b2.init(&mut tp);
    b2.min_rtt.rtt_ns = 6 * MS;
    b2.update_ecn_alpha(&tp);
    assert!(!b2.ecn.eligible);
    let mut tp3 = TcpCc::new(MSS, 10);
    let mut b3 = Bbr3::new(1, Variant::Linux);
    b3.init(&mut tp3);
    b3.min_rtt.rtt_ns = MS;
    b3.update_ecn_alpha(&tp3);
    assert!(!b3.ecn.eligible);
}

/// Linux v3 ECN: inflight_lo ·= (1 − alpha/3) once per round with CE when not probing; CE
/// ratio > 50 % means "too high" while probing.
#[test]
fn linux_ecn_cuts_inflight_lo_and_flags_probes_above_half_marked() {
    let (_, mut b) = linux_ecn_flow();
    b.ecn.eligible = true;
    b.state = State::ProbeBwCruise;
    b.inflight_shortterm = 100;
    b.ecn.alpha = 128; // 0.5
    b.signals.ecn_in_round = true;
    b.adapt_lower_bounds_from_congestion();
    let want = 100.0 * (1.0 - 0.5 / 3.0);
    assert!(
        (b.inflight_shortterm as f64 - want).abs() <= 1.0,
        "inflight_lo {} want {want}",
        b.inflight_shortterm
    );
    assert_eq!(b.bw_shortterm, INF_BW, "ECN does not cut bw_lo");
    // Probing (UP): no short-term cut.
    b.state = State::ProbeBwUp;
    b.inflight_shortterm = 100;
    b.adapt_lower_bounds_from_congestion();
    assert_eq!(b.inflight_shortterm, 100);
    assert!(b.is_inflight_too_high(100, 0, 100, 51));
    assert!(!b.is_inflight_too_high(100, 0, 100, 50));
    b.ecn.eligible = false;
    assert!(!b.is_inflight_too_high(100, 0, 100, 90));
}

/// Linux v3 ECN: Startup ends after 2 consecutive rounds with CE ≥ 50 % (low-RTT path with a
/// shallow marking threshold), before any loss.
#[test]
fn linux_ecn_startup_exits_after_two_highly_marked_rounds() {
    // 20000 pkt/s, 1 ms: BDP 20 packets; mark above 5 queued packets; no drops.
    let mut sim = sim_with(20_000, MS, Variant::Linux, true);
    sim.ce_above_pkts = 4; // CE at ≥ 5 queued
    let mut ce_rounds = Vec::new();
    let (mut d0, mut c0) = (0u64, 0u64);
    sim.run_until(
        |s, ev| {
            if matches!(ev, Ev::Ack { .. }) && s.cc.round.round_start {
                let (d, c) = (s.tp.delivered - d0, s.tp.delivered_ce - c0);
                ce_rounds.push(c as f64 / d.max(1) as f64);
                d0 = s.tp.delivered;
                c0 = s.tp.delivered_ce;
            }
            s.cc.state != State::Startup
        },
        5 * SEC,
    );
    assert!(matches!(sim.cc.state, State::Drain | State::ProbeBwDown | State::ProbeBwCruise));
    assert_eq!(sim.tp.lost, 0);
    assert!(sim.cc.ecn.startup_rounds >= 2, "exit by ECN: {ce_rounds:?}");
    let n = ce_rounds.len();
    assert!(
        ce_rounds[n - 1] >= 0.5 && ce_rounds[n - 2] >= 0.5,
        "last two rounds ≥ 50 % CE: {ce_rounds:?}"
    );
    // The Draft variant has no ECN Startup exit.
    let mut sim = sim_with(20_000, MS, Variant::Draft, true);
    sim.ce_above_pkts = 4; // CE at ≥ 5 queued
    sim.run_until(|s, _| s.cc.state != State::Startup, 5 * SEC);
    assert_eq!(sim.cc.ecn.startup_rounds, 0);
}

/// Draft variant: CE is congestion (§ECN): a CE-marked round cuts the short-term model by
/// Beta when not probing; > 2 % CE while probing is "too high".
#[test]
fn draft_treats_ce_as_congestion() {
    let mut sim = sim_with(20_000, MS, Variant::Draft, true);
    sim.ce_above_pkts = 9; // CE at ≥ 10 queued
    sim.run_into_probe_bw();
    sim.run_for(2 * SEC);
    assert_eq!(sim.tp.lost, 0, "marking, not dropping");
    assert!(
        sim.cc.inflight_shortterm != INF_PKTS || sim.cc.inflight_longterm != INF_PKTS,
        "CE shaped the model"
    );
    let b = &sim.cc;
    assert!(b.is_inflight_too_high(100, 0, 100, 3));
    assert!(!b.is_inflight_too_high(100, 0, 100, 2));
    assert_eq!(b.sample(&sim.tp).ecn_alpha, 0.0);
}

#[test]
fn variant_gains_differ_as_specified() {
    let d = Params::of(Variant::Draft);
    let l = Params::of(Variant::Linux);
    let g = |x: u64| x as f64 / GAIN_UNIT as f64;
    assert!(
        (g(d.startup_pacing_gain) - 2.77).abs() < 1e-4
            && (g(l.startup_pacing_gain) - 2.77).abs() < 0.005
    );
    assert_eq!(d.startup_cwnd_gain, 2 * GAIN_UNIT);
    assert_eq!(l.startup_cwnd_gain, 2 * GAIN_UNIT);
    assert!((g(d.drain_pacing_gain) - 0.5).abs() < 1e-4);
    assert_eq!(d.loss_thresh, (2, 100));
    assert_eq!(l.loss_thresh, (5, 256));
    assert!((g(l.drain_pacing_gain) - 1.0 / 2.885).abs() < 0.005);
    assert!((g(d.down_pacing_gain) - 0.90).abs() < 1e-4);
    assert!((g(l.down_pacing_gain) - 0.91).abs() < 0.005);
    assert!((g(d.beta) - 0.7).abs() < 1e-4 && (g(d.headroom) - 0.15).abs() < 1e-4);
    assert_eq!((d.extra_acked_win_rounds, l.extra_acked_win_rounds), (10, 5));
    assert_eq!(Bbr3::new(0, Variant::Draft).name(), "bbr3");
    assert_eq!(Bbr3::new(0, Variant::Linux).name(), "bbr3_linux");
}

/// §InflightAtLoss: lost_prefix = (thresh·inflight_prev − lost_prev) / (1 − thresh).
#[test]
fn inflight_at_loss_is_the_2_percent_crossing_point() {
    let b = Bbr3::new(0, Variant::Draft);
    // 1000 in flight before the lost packet, 2 lost before it: (20 − 2)/0.98 = 18.4 more.
    let spec = |prev: f64, lost_prev: f64| prev + (0.02 * prev - lost_prev) / 0.98;
    assert!((b.inflight_at_loss(1001, 3, 1) as f64 - spec(1000.0, 2.0)).abs() < 1.0);
    assert!((b.inflight_at_loss(1010, 21, 1) as f64 - spec(1009.0, 20.0)).abs() < 1.0);
    // Earlier losses already crossed the threshold: the crossing is before this packet.
    assert_eq!(b.inflight_at_loss(101, 5, 1), 100);
    // Per-packet hook: only samples sent while probing count.
    let mut tp = TcpCc::new(MSS, 10);
    let mut b = Bbr3::new(0, Variant::Draft);
    b.init(&mut tp);
    b.full_bw.reached = true;
    b.state = State::ProbeBwUp;
    b.min_rtt.rtt_ns = 40 * MS;
    let bw = ((80u128 * BW_UNIT) / 40_000) as u64;
    b.max_bw_filter.update(bw);
    b.max_bw_filter.advance();
    b.max_bw_filter.update(bw);
    tp.snd_cwnd = 100;
    tp.lost = 30;
    // 21 lost of 1010 in flight (> 2 %), 20 of them before this packet.
    let p = PacketRateState { tx_in_flight: 1010, lost: 9, ..Default::default() };
    b.skb_marked_lost(&tp, &p);
    assert_eq!(b.state, State::ProbeBwUp, "not a probe sample: no reaction");
    assert!(b.signals.loss_in_round);
    b.is_bw_probe_sample = true;
    b.skb_marked_lost(&tp, &p);
    assert_eq!(b.state, State::ProbeBwDown);
    assert!(
        (b.inflight_longterm as f64 - spec(1009.0, 20.0)).abs() < 1.0,
        "{}",
        b.inflight_longterm
    );
}

/// §Send Quantum: pacing_rate · 1 ms in [2 segments, 64 KB], + 64 KB >> (min_rtt_us >> 9).
#[test]
fn send_quantum_is_a_millisecond_of_pacing_plus_the_min_rtt_allowance() {
    let mut tp = TcpCc::new(MSS, 10);
    let mut b = Bbr3::new(0, Variant::Draft);
    b.init(&mut tp);
    tp.tso_minrtt_autosize = false;
    tp.pacing_rate_bytes_per_s = 10_000_000; // 10 kB per ms
    assert_eq!(b.send_quantum_segs(&tp), 6);
    tp.pacing_rate_bytes_per_s = 100_000;
    assert_eq!(b.send_quantum_segs(&tp), 2);
    tp.pacing_rate_bytes_per_s = 10_000_000_000;
    assert_eq!(b.send_quantum_segs(&tp), (65_536 - 1 - 320) / MSS);
    tp.tso_minrtt_autosize = true;
    tp.pacing_rate_bytes_per_s = 10_000_000;
    b.min_rtt.rtt_ns = 40 * MS; // 40 ms >> 9 µs: allowance 0
    assert_eq!(b.send_quantum_segs(&tp), 6);
    b.min_rtt.rtt_ns = 100 * NSEC_PER_USEC; // < 512 µs: + 64 KB, capped at 64 KB
    assert_eq!(b.send_quantum_segs(&tp), (65_536 - 1 - 320) / MSS);
    b.min_rtt.rtt_ns = 1100 * NSEC_PER_USEC; // 2 × 512 µs: + 16 KB
    assert_eq!(b.send_quantum_segs(&tp), (10_000 + 16_384) / MSS);
    assert_eq!(b.tso_segs(&tp), Some((10_000 + 16_384) / MSS));
}

#[test]
fn sample_exports_phase_names_codes_and_model() {
    let mut sim = link(Variant::Linux);
    let s = sim.cc.sample(&sim.tp);
    assert_eq!((s.phase, s.phase_code), ("startup", 0));
    assert_eq!(s.inflight_hi_segs, 0.0);
    assert_eq!(s.ecn_alpha, 1.0);
    sim.run_into_probe_bw();
    sim.run_for(SEC);
    let s = sim.cc.sample(&sim.tp);
    let names =
        ["startup", "drain", "probe_down", "probe_cruise", "probe_refill", "probe_up", "probe_rtt"];
    assert_eq!(names[s.phase_code as usize], s.phase);
    assert!((s.bw_bps - 2000.0 * MSS as f64 * 8.0).abs() / (2000.0 * MSS as f64 * 8.0) < 0.02);
    assert_eq!(s.min_rtt_ns, sim.cc.min_rtt.rtt_ns);
    for st in [
        State::Drain,
        State::ProbeBwDown,
        State::ProbeBwCruise,
        State::ProbeBwRefill,
        State::ProbeBwUp,
        State::ProbeRtt,
    ] {
        assert_eq!(names[st as usize], st.name());
    }
}
