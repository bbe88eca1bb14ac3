use super::*;
use crate::cubic::Cubic;
use crate::CongestionOps;

const MS: u64 = NSEC_PER_MSEC;

/// Drive one round of a window-limited flow through `Cubic` with HyStart++: every segment in
/// flight at the round start is acked (one ACK per segment, all with RTT `rtt`), and each ACK
/// refills the window. Returns how many ACKs were processed.
fn run_round(cc: &mut Cubic, tp: &mut TcpCc, rtt: u64) -> u32 {
    let n = tp.packets_out;
    let spacing = rtt / n.max(1) as u64;
    for _ in 0..n {
        tp.now_ns += spacing;
        tp.packets_out -= 1;
        tp.delivered += 1;
        cc.pkts_acked(tp, 1, Some(rtt));
        cc.cong_avoid(tp, 1);
        tp.packets_out = tp.snd_cwnd; // the sender refills the window
        tp.max_packets_out = tp.max_packets_out.max(tp.packets_out);
    }
    n
}

/// `rounds` rounds of [`run_round`] at the same RTT.
fn run_rounds(cc: &mut Cubic, tp: &mut TcpCc, rounds: usize, rtt: u64) {
    for _ in 0..rounds {
        run_round(cc, tp, rtt);
    }
}

/// One [`run_round`] per RTT in `rtts`; the HyStart++ phase after each round.
fn phases_over(cc: &mut Cubic, tp: &mut TcpCc, rtts: &[u64]) -> Vec<HyStartPhase> {
    rtts.iter()
        .map(|&rtt| {
            run_round(cc, tp, rtt);
            cc.hystart_phase()
        })
        .collect()
}

fn start() -> (Cubic, TcpCc) {
    let mut tp = TcpCc::new(1448, 10);
    let mut cc = Cubic::new(HyStartMode::PlusPlus);
    cc.init(&mut tp);
    tp.packets_out = tp.snd_cwnd;
    tp.max_packets_out = tp.packets_out;
    (cc, tp)
}

#[test]
fn flat_rtt_stays_in_slow_start_and_doubles() {
    let (mut cc, mut tp) = start();
    for round in 0..8 {
        let before = tp.snd_cwnd;
        run_round(&mut cc, &mut tp, 50 * MS);
        // Standard slow start: one segment per segment acked, so cwnd doubles per round.
        assert_eq!(tp.snd_cwnd, 2 * before, "round {round}");
        assert_eq!(cc.hystart_phase(), HyStartPhase::SlowStart);
        assert_eq!(cc.sample(&tp).phase, "ss");
    }
    assert_eq!(tp.snd_ssthresh, TCP_INFINITE_SSTHRESH);
}

#[test]
fn rtt_rise_enters_css_after_eight_samples_then_ca_after_five_rounds() {
    let (mut cc, mut tp) = start();
    run_rounds(&mut cc, &mut tp, 3, 50 * MS);
    // Next round: RTT up by 10 ms > RttThresh = clamp(50/8 = 6.25 ms, 4, 16) ms.
    // The first 7 samples must not trigger; the 8th must.
    let rtt = 60 * MS;
    let mut acks = 0;
    let mut entered_at = None;
    let n = tp.packets_out;
    for _ in 0..n {
        tp.now_ns += rtt / n as u64;
        tp.packets_out -= 1;
        tp.delivered += 1;
        cc.pkts_acked(&mut tp, 1, Some(rtt));
        acks += 1;
        if entered_at.is_none() && cc.hystart_phase() == HyStartPhase::Css {
            entered_at = Some(acks);
        }
        cc.cong_avoid(&mut tp, 1);
        tp.packets_out = tp.snd_cwnd;
    }
    assert_eq!(entered_at, Some(8), "CSS must start at the 8th sample of the round (N_RTT_SAMPLE)");
    assert_eq!(cc.sample(&tp).phase, "css");
    // In CSS a full round of N ACKs grows cwnd by N/4 (not N).
    let before = tp.snd_cwnd;
    let acked = run_round(&mut cc, &mut tp, rtt);
    let grown = tp.snd_cwnd - before;
    assert!((grown as i64 - (acked / 4) as i64).abs() <= 1, "CSS growth {grown} for {acked} acked");
    // The partial round of entry plus that round are 2 CSS rounds; three more full rounds
    // complete CSS_ROUNDS = 5 and the next round boundary enters CA with ssthresh = cwnd.
    for _ in 0..3 {
        run_round(&mut cc, &mut tp, rtt);
        assert_eq!(tp.snd_ssthresh, TCP_INFINITE_SSTHRESH, "left CSS too early");
        assert_eq!(cc.hystart_phase(), HyStartPhase::Css);
    }
    // First ACK of the next round: CSS is complete.
    tp.now_ns += MS;
    tp.packets_out -= 1;
    tp.delivered += 1;
    cc.pkts_acked(&mut tp, 1, Some(rtt));
    assert_eq!(tp.snd_ssthresh, tp.snd_cwnd, "exit to CA must set ssthresh = cwnd");
    assert!(!tp.in_slow_start());
    assert_eq!(cc.sample(&tp).phase, "ca");
}

#[test]
fn rtt_falling_below_baseline_returns_to_slow_start() {
    let (mut cc, mut tp) = start();
    // Three rounds at 50 ms, one at 60 ms enters CSS (baseline 60 ms); a round whose minimum
    // RTT is back at 50 ms (< baseline): spurious exit, back to slow start.
    let rtts = [50 * MS, 50 * MS, 50 * MS, 60 * MS, 50 * MS];
    let phases = phases_over(&mut cc, &mut tp, &rtts);
    assert_eq!(phases[3..], [HyStartPhase::Css, HyStartPhase::SlowStart]);
    assert_eq!(tp.snd_ssthresh, TCP_INFINITE_SSTHRESH);
    // And slow start grows at the full rate again.
    let before = tp.snd_cwnd;
    run_round(&mut cc, &mut tp, 50 * MS);
    assert_eq!(tp.snd_cwnd, 2 * before);
}

/// CSS starts when a round's minimum RTT exceeds the last round's by RttThresh =
/// clamp(last / 8, 4 ms, 16 ms) (RFC 9406 §4.2).
#[test]
fn css_entry_needs_a_rise_above_rtt_thresh_clamped_to_4_and_16_ms() {
    use HyStartPhase::{Css, SlowStart as Ss};
    /// (what, RTT of each round in µs, the phase expected after it).
    type Case = (&'static str, &'static [u64], &'static [HyStartPhase]);
    let cases: [Case; 3] = [
        (
            // Then against the new baseline of 112 ms, a 15 ms rise is above its 14 ms.
            "at 100 ms RttThresh is 12.5 ms: a 12 ms rise is below it",
            &[100_000, 100_000, 112_000, 127_000],
            &[Ss, Ss, Ss, Css],
        ),
        (
            // Then 4.5 ms above the new baseline of 23.5 ms (threshold still 4 ms) is above.
            "base 20 ms: 2.5 ms is clamped up to 4 ms, so a 3.5 ms rise is below it",
            &[20_000, 23_500, 28_000],
            &[Ss, Ss, Css],
        ),
        (
            "base 200 ms: 25 ms is clamped down to 16 ms; a 17 ms rise is above it",
            &[200_000, 217_000],
            &[Ss, Css],
        ),
    ];
    for (what, rtts_us, want) in cases {
        let (mut cc, mut tp) = start();
        let rtts: Vec<u64> = rtts_us.iter().map(|us| us * 1_000).collect();
        assert_eq!(phases_over(&mut cc, &mut tp, &rtts), want, "{what}");
    }
}

#[test]
fn non_paced_growth_is_capped_at_l_per_ack() {
    let (mut cc, mut tp) = start();
    tp.packets_out = 40;
    tp.delivered += 20;
    cc.pkts_acked(&mut tp, 20, Some(50 * MS));
    cc.cong_avoid(&mut tp, 20); // a stretch ACK for 20 segments
                                // L = 8 for a non-paced sender.
    assert_eq!(tp.snd_cwnd, 10 + 8);
    // A paced sender has no L cap (RFC 9406 §4.2: L = infinity).
    let (mut cc, mut tp) = start();
    tp.pacing_enabled = true;
    tp.packets_out = 40;
    tp.delivered += 20;
    cc.pkts_acked(&mut tp, 20, Some(50 * MS));
    cc.cong_avoid(&mut tp, 20);
    assert_eq!(tp.snd_cwnd, 30);
}
