use super::*;
use crate::NSEC_PER_MSEC;

const MS: u64 = NSEC_PER_MSEC;

/// RFC 9438 §4.2 with the real-valued constants (not the implementation's).
fn w_cubic(t: f64, w_max: f64, cwnd_epoch: f64) -> f64 {
    let k = ((w_max - cwnd_epoch) / 0.4).cbrt();
    0.4 * (t - k).powi(3) + w_max
}

/// ACK clock of a fixed RTT: a full window of ACKs per RTT, evenly spaced, each acking one
/// segment with an RTT sample of `rtt`. Runs until `until_ns`, calling `probe` after each ACK.
fn ack_clock(
    cc: &mut Cubic,
    tp: &mut TcpCc,
    rtt: u64,
    until_ns: u64,
    mut probe: impl FnMut(&TcpCc),
) {
    while tp.now_ns < until_ns {
        let w = tp.snd_cwnd as u64;
        tp.now_ns += rtt / w;
        tp.delivered += 1;
        cc.pkts_acked(tp, 1, Some(rtt));
        cc.cong_avoid(tp, 1);
        tp.packets_out = tp.snd_cwnd;
        probe(tp);
    }
}

/// A fresh cwnd-limited connection (HyStart off) with RTT samples of `rtt`.
fn cwnd_limited(rtt: u64) -> (Cubic, TcpCc) {
    let mut tp = TcpCc::new(1448, 10);
    let mut cc = Cubic::new(HyStartMode::Off);
    cc.init(&mut tp);
    tp.is_cwnd_limited = true;
    tp.srtt_ns = rtt;
    tp.min_rtt_ns = rtt;
    (cc, tp)
}

/// A connection in congestion avoidance that just lost at W_max = `w_max` and finished
/// recovery with cwnd = ssthresh (the transport's part).
fn after_loss(w_max: u32, rtt: u64) -> (Cubic, TcpCc) {
    let (mut cc, mut tp) = cwnd_limited(rtt);
    tp.now_ns = 1_000 * MS;
    cc.pkts_acked(&mut tp, 1, Some(rtt)); // delay_min seeded during slow start
    tp.snd_cwnd = w_max;
    let ss = cc.ssthresh(&tp);
    tp.snd_ssthresh = ss;
    tp.snd_cwnd = ss;
    tp.packets_out = ss;
    (cc, tp)
}

#[test]
fn cwnd_follows_the_cubic_curve_after_loss() {
    let rtt = 100 * MS;
    let w_max = 1000u32;
    let (mut cc, mut tp) = after_loss(w_max, rtt);
    let cwnd_epoch = tp.snd_cwnd as f64;
    let t0 = tp.now_ns; // the epoch starts with the next ACK (within rtt/cwnd of t0)
    let checkpoints = [1.0, 2.0, 4.0, 6.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0];
    let mut got = Vec::new();
    let mut next = 0;
    ack_clock(&mut cc, &mut tp, rtt, t0 + 13 * NSEC_PER_SEC + 1, |tp| {
        if next < checkpoints.len() && tp.now_ns >= t0 + (checkpoints[next] * 1e9) as u64 {
            got.push((checkpoints[next], tp.snd_cwnd as f64));
            next += 1;
        }
    });
    assert_eq!(got.len(), checkpoints.len());
    for (t, cwnd) in got {
        // cwnd aims at W(t + RTT) one RTT ahead, so it tracks W(t) itself.
        let w = w_cubic(t, w_max as f64, cwnd_epoch);
        assert!((cwnd - w).abs() / w < 0.02, "t={t}s cwnd {cwnd} vs W(t) {w:.1}");
    }
}

#[test]
fn k_matches_rfc_formula_and_plateau_is_centred_at_k() {
    let rtt = 100 * MS;
    let (mut cc, mut tp) = after_loss(1000, rtt);
    let t0 = tp.now_ns;
    // W(t) is point-symmetric about (K, W_max): it crosses W_max − 50 at K − 5 s and
    // W_max + 50 at K + 5 s (0.4·5³ = 50). The midpoint of the crossings measures K.
    let (mut down, mut up) = (None, None);
    ack_clock(&mut cc, &mut tp, rtt, t0 + 16 * NSEC_PER_SEC, |tp| {
        if down.is_none() && tp.snd_cwnd >= 950 {
            down = Some(tp.now_ns);
        }
        if up.is_none() && tp.snd_cwnd >= 1050 {
            up = Some(tp.now_ns);
        }
    });
    // RFC 9438 §4.2 with cwnd_epoch = β·W_max: K = cbrt(W_max (1 − β) / C).
    let k_rfc = (1000.0 * (1.0 - 0.7) / 0.4f64).cbrt();
    assert!((cc.k_seconds() - k_rfc).abs() / k_rfc < 0.005, "K {} vs {k_rfc}", cc.k_seconds());
    let (down, up) = (down.expect("reached 950"), up.expect("reached 1050"));
    let secs = |t: u64| (t - t0) as f64 / 1e9;
    let k_seen = (secs(down) + secs(up)) / 2.0;
    assert!((k_seen - k_rfc).abs() < 0.3, "plateau centred at {k_seen}s, K = {k_rfc}s");
    assert!(
        ((secs(up) - secs(down)) - 10.0).abs() < 0.5,
        "crossings {} s apart",
        secs(up) - secs(down)
    );
}

#[test]
fn fast_convergence_lowers_w_max() {
    let mut tp = TcpCc::new(1448, 10);
    let mut cc = Cubic::new(HyStartMode::Off);
    cc.init(&mut tp);
    tp.snd_cwnd = 1000;
    cc.ssthresh(&tp);
    assert_eq!(cc.w_max(), 1000.0);
    // Loss again before regaining W_max: W_max = cwnd (1 + β)/2 = 0.85 cwnd.
    tp.snd_cwnd = 800;
    cc.ssthresh(&tp);
    assert!((cc.w_max() - 0.85 * 800.0).abs() <= 0.5, "W_max {}", cc.w_max());
    // Loss above the previous W_max: W_max = cwnd.
    tp.snd_cwnd = 900;
    cc.ssthresh(&tp);
    assert_eq!(cc.w_max(), 900.0);
}

#[test]
fn ssthresh_is_seven_tenths_of_cwnd() {
    let mut tp = TcpCc::new(1448, 10);
    let mut cc = Cubic::new(HyStartMode::Off);
    for cwnd in 1..3000u32 {
        tp.snd_cwnd = cwnd;
        let ss = cc.ssthresh(&tp) as f64;
        let want = (0.7 * cwnd as f64).max(2.0);
        assert!((ss - want).abs() <= 1.0, "cwnd {cwnd}: ssthresh {ss} vs {want}");
        assert!(ss >= 2.0);
    }
}

#[test]
fn reno_friendly_region_grows_at_alpha_for_the_whole_epoch() {
    // Small W_max and a short RTT: the cubic curve is far too slow, W_est dominates.
    let rtt = 10 * MS;
    let (mut cc, mut tp) = after_loss(20, rtt);
    let cwnd_epoch = tp.snd_cwnd as f64; // 14
    let alpha = 3.0 * (1.0 - 0.7) / (1.0 + 0.7);
    // Linux tcp_cubic (tcp_friendliness): W_est grows 1 per (cwnd·15)>>3 acked, α = 8/15 per
    // RTT, also after it passes cwnd_prior = 20 (RFC 9438 §4.3 would switch to 1 there), and
    // cwnd follows it one whole segment behind.
    let expect = |n: f64| cwnd_epoch + alpha * n;
    let t0 = tp.now_ns;
    let mut at = Vec::new();
    let marks = [5u64, 10, 20, 40];
    let mut next = 0;
    ack_clock(&mut cc, &mut tp, rtt, t0 + 40 * rtt + 1, |tp| {
        if next < marks.len() && tp.now_ns >= t0 + marks[next] * rtt {
            at.push((marks[next] as f64, tp.snd_cwnd as f64));
            next += 1;
        }
    });
    for (n, cwnd) in &at {
        // The cubic curve at this time is far below (W(0.4 s) ≈ 16), so this is W_est.
        assert!(w_cubic(n * 0.01 + 0.01, 20.0, cwnd_epoch) < cwnd - 1.0 || *n < 12.0);
        let e = expect(*n);
        assert!((cwnd - e).abs() <= 1.5, "after {n} RTTs cwnd {cwnd} vs W_est {e:.2}");
    }
    // Slopes: ≈ α per RTT over rounds 0–10 and still over rounds 20–40 (past cwnd_prior).
    let slope1 = (at[1].1 - cwnd_epoch) / 10.0;
    let slope2 = (at[3].1 - at[2].1) / 20.0;
    assert!((slope1 - alpha).abs() < 0.15, "early slope {slope1} vs α {alpha}");
    assert!(
        (slope2 - alpha).abs() < 0.1,
        "late slope {slope2} vs α {alpha} (Linux keeps α past cwnd_prior)"
    );
}

#[test]
fn without_w_max_growth_is_at_least_five_percent_per_rtt() {
    // Slow start ended without loss (e.g. HyStart++): W_max unknown, cubic origin = cwnd.
    let rtt = 100 * MS;
    let (mut cc, mut tp) = cwnd_limited(rtt);
    tp.snd_cwnd = 200;
    tp.snd_ssthresh = 200;
    let t0 = tp.now_ns;
    ack_clock(&mut cc, &mut tp, rtt, t0 + rtt, |_| {});
    // Linux tcp_cubic: cnt ≤ 20 while last_max_cwnd == 0, i.e. +cwnd/20 per RTT.
    assert!((209..=211).contains(&tp.snd_cwnd), "cwnd {} after one RTT from 200", tp.snd_cwnd);
}

#[test]
fn no_growth_when_not_cwnd_limited() {
    let (mut cc, mut tp) = after_loss(100, 50 * MS);
    tp.is_cwnd_limited = false;
    let before = tp.snd_cwnd;
    for _ in 0..10_000 {
        tp.now_ns += MS;
        cc.cong_avoid(&mut tp, 1);
    }
    assert_eq!(tp.snd_cwnd, before);
}

#[test]
fn idle_shifts_the_epoch_by_the_idle_time() {
    let rtt = 100 * MS;
    let (mut cc, mut tp) = after_loss(1000, rtt);
    let t0 = tp.now_ns;
    ack_clock(&mut cc, &mut tp, rtt, t0 + 2 * NSEC_PER_SEC, |_| {});
    let start = cc.epoch_start.unwrap();
    let cwnd = tp.snd_cwnd;
    // Last send at +2 s, idle for 5 s, then transmission restarts.
    tp.lsndtime_ns = tp.now_ns;
    tp.now_ns += 5 * NSEC_PER_SEC;
    cc.cwnd_event(&mut tp, CwndEvent::TxStart);
    assert_eq!(cc.epoch_start.unwrap(), start + 5 * NSEC_PER_SEC);
    // The next ACK computes the target at the pre-idle point of the curve: no jump.
    let until = tp.now_ns + rtt;
    ack_clock(&mut cc, &mut tp, rtt, until, |_| {});
    assert!(tp.snd_cwnd <= cwnd + 20, "cwnd jumped from {cwnd} to {}", tp.snd_cwnd);
}

#[test]
fn rto_forgets_state_and_undo_restores_prior_cwnd() {
    let (mut cc, mut tp) = after_loss(1000, 100 * MS);
    cc.set_state(&mut tp, CaState::Loss);
    assert_eq!(cc.w_max(), 0.0);
    tp.prior_cwnd = 1000;
    tp.snd_cwnd = 1;
    assert_eq!(cc.undo_cwnd(&mut tp), 1000);
}
