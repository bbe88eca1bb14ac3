//! Linux classic HyStart against the rules of mainline `tcp_cubic.c` (`hystart_update`), driven
//! through `Cubic` as the transport drives it (`pkts_acked`, then `cong_avoid`, per ACK).

use super::*;
use crate::cubic::Cubic;
use crate::CongestionOps;

const MS: u64 = NSEC_PER_MSEC;
const US: u64 = 1_000;

struct Flow {
    cc: Cubic,
    tp: TcpCc,
    /// Grow cwnd by slow start on each ACK (false: hold cwnd fixed).
    grow: bool,
}

/// A fresh Linux-HyStart CUBIC flow at t = 1 s with cwnd `cwnd` (ssthresh infinite).
fn flow(cwnd: u32) -> Flow {
    let mut tp = TcpCc::new(1448, 10);
    tp.now_ns = 1_000 * MS;
    let mut cc = Cubic::new(HyStartMode::Linux);
    cc.init(&mut tp);
    tp.snd_cwnd = cwnd;
    tp.is_cwnd_limited = true;
    Flow { cc, tp, grow: true }
}

/// One round trip: the segments sent during the previous round (one per entry of `acks`) are
/// acked one per ACK; entry i = (gap before ACK i, its RTT sample). Before the first ACK
/// exactly those segments are in flight, so that ACK is the first beyond the previous round's
/// end (Linux: the first ACK `after(snd_una, end_seq)`). Returns the index of the ACK on which
/// slow start ended (ssthresh set), if any; checks ssthresh = cwnd at that moment.
fn round(f: &mut Flow, acks: &[(u64, u64)]) -> Option<usize> {
    let mut exit = None;
    f.tp.packets_out = acks.len() as u32;
    for (i, &(gap, rtt)) in acks.iter().enumerate() {
        f.tp.now_ns += gap;
        f.tp.packets_out -= 1;
        f.tp.delivered += 1;
        let was_ss = f.tp.in_slow_start();
        let cwnd = f.tp.snd_cwnd;
        f.cc.pkts_acked(&mut f.tp, 1, Some(rtt));
        if was_ss && !f.tp.in_slow_start() && exit.is_none() {
            exit = Some(i);
            assert_eq!(f.tp.snd_ssthresh, cwnd, "exit must set ssthresh = cwnd");
        }
        if f.grow {
            f.cc.cong_avoid(&mut f.tp, 1);
        }
    }
    exit
}

/// `n` ACKs, the first after `first_gap`, then evenly `spacing` apart, all with RTT `rtt`.
fn train(n: usize, first_gap: u64, spacing: u64, rtt: u64) -> Vec<(u64, u64)> {
    (0..n).map(|i| (if i == 0 { first_gap } else { spacing }, rtt)).collect()
}

#[test]
fn ack_train_longer_than_half_min_rtt_exits_shorter_does_not() {
    // min RTT 100 ms, constant (the delay detector stays quiet). No pacing rate → no TSO
    // cushion: the threshold is exactly delay_min / 2 = 50 ms.
    let mut f = flow(20);
    // 45 ACKs 1 ms apart span 44 ms < 50 ms: no exit, round after round.
    for _ in 0..5 {
        f.grow = false;
        assert_eq!(round(&mut f, &train(45, 60 * MS, MS, 100 * MS)), None);
    }
    assert!(f.tp.in_slow_start());
    // 80 ACKs 1 ms apart: ACK i is i ms after the round start; the first with i ms > 50 ms
    // (strictly) is i = 51.
    f.grow = true;
    let exit = round(&mut f, &train(80, 60 * MS, MS, 100 * MS));
    assert_eq!(exit, Some(51));
    assert_eq!(f.cc.linux_hystart().found(), Some(LinuxHyStartExit::AckTrain));
    assert!(!f.tp.in_slow_start());
    assert_eq!(f.cc.sample(&f.tp).phase, "ca");
}

#[test]
fn ack_train_of_exactly_half_min_rtt_does_not_exit() {
    // 2 ms spacing is still a train (≤ hystart_ack_delta): 26 ACKs span exactly 50 ms, which
    // is not more than delay_min/2; the 27th (52 ms) exits.
    let mut f = flow(30);
    f.grow = false;
    round(&mut f, &train(30, 0, 5 * MS, 100 * MS)); // first round: sets delay_min, no train
    assert_eq!(round(&mut f, &train(26, 60 * MS, 2 * MS, 100 * MS)), None);
    assert_eq!(round(&mut f, &train(40, 60 * MS, 2 * MS, 100 * MS)), Some(26));
}

#[test]
fn gap_over_2ms_breaks_the_train_for_the_rest_of_the_round() {
    let mut f = flow(20);
    f.grow = false;
    round(&mut f, &train(20, 0, 5 * MS, 100 * MS));
    // 90 ACKs 1 ms apart except one 2.1 ms gap after ACK 10: the train ends there and is not
    // restarted by the close ACKs that follow (they are compared with the train's last ACK).
    let mut acks = train(90, 60 * MS, MS, 100 * MS);
    acks[10].0 = 2 * MS + 100 * US;
    assert_eq!(round(&mut f, &acks), None);
    // Same round with the gap at exactly 2 ms: still a train, exits once past 50 ms
    // (ACK 50 is at 51 ms).
    let mut acks = train(90, 60 * MS, MS, 100 * MS);
    acks[10].0 = 2 * MS;
    assert_eq!(round(&mut f, &acks), Some(50));
}

#[test]
fn ack_train_threshold_adds_tso_cushion_and_is_not_halved_when_paced() {
    // Pacing rate 524 288 000 B/s: hystart_ack_delay = 4·64 KiB / rate = 500 µs (< 1 ms cap).
    let mut f = flow(20);
    f.grow = false;
    f.tp.pacing_rate_bytes_per_s = 524_288_000;
    assert_eq!(LinuxHyStart::ack_delay_ns(&f.tp), 500 * US);
    round(&mut f, &train(20, 0, 5 * MS, 100 * MS));
    // Threshold (100 + 0.5)/2 = 50.25 ms; ACKs 250 µs apart: ACK 201 is at 50.25 ms (not
    // more), ACK 202 at 50.5 ms exits.
    assert_eq!(round(&mut f, &train(300, 60 * MS, 250 * US, 100 * MS)), Some(202));
    // A slow pacing rate caps the cushion at 1 ms.
    f.tp.pacing_rate_bytes_per_s = 1_000_000;
    assert_eq!(LinuxHyStart::ack_delay_ns(&f.tp), MS);

    // Paced socket: threshold = delay_min + cushion = 100.5 ms, not halved.
    let mut f = flow(20);
    f.grow = false;
    f.tp.pacing_enabled = true;
    f.tp.pacing_rate_bytes_per_s = 524_288_000;
    round(&mut f, &train(20, 0, 5 * MS, 100 * MS));
    assert_eq!(round(&mut f, &train(95, 60 * MS, MS, 100 * MS)), None); // spans 94 ms
    assert_eq!(round(&mut f, &train(120, 60 * MS, MS, 100 * MS)), Some(101));
    // 101 > 100.5
}

/// ACKs 5 ms apart (no ACK train), all with RTT `rtt`.
fn spaced(n: usize, rtt: u64) -> Vec<(u64, u64)> {
    train(n, 50 * MS, 5 * MS, rtt)
}

/// The delay exit: after a baseline round at `delay_min`, rounds of ACKs 5 ms apart (no ACK
/// train); the exit comes when the round's minimum RTT exceeds delay_min by more than
/// clamp(delay_min / 8, 4 ms, 16 ms).
#[test]
fn delay_exit_when_the_rise_over_delay_min_exceeds_the_clamped_threshold() {
    /// (what, delay_min, then per round: ACKs, their RTT, the ACK the flow left slow start on).
    type Case = (&'static str, u64, [(usize, u64, Option<usize>); 2]);
    let cases: [Case; 4] = [
        (
            // Threshold 12.5 ms. At 13 ms the round's first 8 samples only fill curr_rtt; the
            // check runs from the 9th sample on (index 8).
            "a 12 ms rise never exits, a 13 ms rise on the 9th sample",
            100 * MS,
            [(30, 112 * MS, None), (30, 113 * MS, Some(8))],
        ),
        (
            // Linux compares with delay_min: no round rose by more than 8 ms over the previous.
            "the rise is measured from delay_min, not the last round: 100 → 108 → 114 ms exits",
            100 * MS,
            [(20, 108 * MS, None), (20, 114 * MS, Some(8))],
        ),
        (
            "delay_min 20 ms: 2.5 ms is clamped to 4 ms (0.1 ms below: no exit, above: exit)",
            20 * MS,
            [(20, 24 * MS - 100 * US, None), (20, 24 * MS + 100 * US, Some(8))],
        ),
        (
            "delay_min 200 ms: 25 ms is clamped to 16 ms (0.1 ms below: no exit, above: exit)",
            200 * MS,
            [(20, 216 * MS - 100 * US, None), (20, 216 * MS + 100 * US, Some(8))],
        ),
    ];
    for (what, delay_min, rounds) in cases {
        let mut f = flow(20);
        round(&mut f, &spaced(20, delay_min));
        for (acks, rtt, exit) in rounds {
            assert_eq!(round(&mut f, &spaced(acks, rtt)), exit, "{what}: round at {rtt} ns");
        }
        assert_eq!(f.cc.linux_hystart().found(), Some(LinuxHyStartExit::Delay), "{what}");
    }
}

#[test]
fn one_low_sample_in_the_round_keeps_the_delay_detector_quiet() {
    // curr_rtt is the round's minimum: one sample near delay_min masks the rest.
    let mut f = flow(20);
    round(&mut f, &spaced(20, 100 * MS));
    let mut acks = spaced(20, 130 * MS);
    acks[3].1 = 101 * MS;
    assert_eq!(round(&mut f, &acks), None);
}

#[test]
fn no_hystart_below_cwnd_16() {
    // cwnd 15, held: neither a 80 ms train nor a 50 % RTT rise ends slow start.
    let mut f = flow(15);
    f.grow = false;
    round(&mut f, &spaced(20, 100 * MS));
    assert_eq!(round(&mut f, &train(80, 60 * MS, MS, 100 * MS)), None);
    assert_eq!(round(&mut f, &spaced(20, 150 * MS)), None);
    assert!(f.tp.in_slow_start());
    // At cwnd 16 the same rounds exit.
    f.tp.snd_cwnd = 16;
    assert_eq!(round(&mut f, &train(80, 60 * MS, MS, 100 * MS)), Some(51));

    let mut f = flow(16);
    f.grow = false;
    round(&mut f, &spaced(20, 100 * MS));
    assert_eq!(round(&mut f, &spaced(20, 150 * MS)), Some(8));
}

#[test]
fn growing_window_exits_with_ssthresh_equal_to_cwnd_and_stays_out() {
    // Slow start from cwnd 10 on a 100 ms path whose bottleneck spaces ACKs 0.5 ms apart
    // (one ACK per segment): a round of N ACKs spans N/2 ms, so the train exceeds 50 ms once
    // a round carries more than 100 ACKs; the exit is on the 102nd ACK of that round
    // (at 50.5 ms), with cwnd grown by one per ACK until then.
    let mut f = flow(10);
    let mut n = 10usize;
    let mut exit = None;
    for _ in 0..10 {
        let cwnd_before = f.tp.snd_cwnd;
        if let Some(i) = round(&mut f, &train(n, 100 * MS, 500 * US, 100 * MS)) {
            exit = Some((n, i, cwnd_before));
            break;
        }
        n = f.tp.snd_cwnd as usize; // everything the window allowed was sent
    }
    let (n, i, cwnd_before) = exit.expect("ACK train must end slow start");
    assert_eq!((n, i), (160, 101));
    // cwnd at exit = cwnd at round start + 101 (ACKs 0..100 grew it) = ssthresh.
    assert_eq!(f.cc.linux_hystart().exit_cwnd(), cwnd_before + 101);
    assert_eq!(f.tp.snd_ssthresh, cwnd_before + 101);
    // Congestion avoidance from here on: later rounds never touch ssthresh again.
    let ss = f.tp.snd_ssthresh;
    for _ in 0..3 {
        round(&mut f, &train(200, 100 * MS, 500 * US, 130 * MS));
    }
    assert_eq!(f.tp.snd_ssthresh, ss);
}

#[test]
fn rto_rearms_hystart_but_recovery_does_not() {
    let mut f = flow(20);
    f.grow = false;
    round(&mut f, &spaced(20, 100 * MS));
    assert_eq!(round(&mut f, &spaced(20, 150 * MS)), Some(8));
    // RTO: bictcp_reset clears `found`; a later slow start (ssthresh now finite) runs HyStart.
    f.cc.set_state(&mut f.tp, crate::CaState::Loss);
    assert_eq!(f.cc.linux_hystart().found(), None);
    f.tp.snd_ssthresh = 1000;
    f.tp.snd_cwnd = 20;
    round(&mut f, &spaced(20, 100 * MS));
    assert_eq!(round(&mut f, &spaced(20, 150 * MS)), Some(8));
}

#[test]
fn scenario_names_select_the_mode() {
    use crate::{Cc, CcKind};
    for (name, mode) in [("cubic", HyStartMode::Linux), ("cubic_hspp", HyStartMode::PlusPlus)] {
        match Cc::new(&CcKind::from_name(name).unwrap(), 1) {
            Cc::Cubic(c) => assert_eq!(c.hystart_mode(), mode, "{name}"),
            other => panic!("{name} built {other:?}"),
        }
    }
}
