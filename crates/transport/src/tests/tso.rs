//! Offload-chunk accounting (TSO bursts and the autosizing goal).

use crate::*;
use cc::{Cc, CcKind};

fn sender(cc: &str, cfg: SenderConfig) -> Sender {
    let mut s = Sender::new(cfg, Cc::new(&CcKind::from_name(cc).unwrap(), 1));
    s.set_handshake_rtt(0, 100_000);
    s.start(0);
    s
}

#[test]
fn segments_sent_at_one_instant_are_chunked_by_the_sizing_rule() {
    let mut s = sender("cubic", SenderConfig { initial_cwnd: 100, ..Default::default() });
    let chunk = s.tso_segs();
    assert!(chunk >= 2);
    let mut n = 0u64;
    while s.poll_transmit(0).is_some() {
        n += 1;
    }
    assert_eq!(n, 100);
    assert_eq!(s.stats.tso_burst_segs, 100);
    assert_eq!(s.stats.tso_bursts, 100u64.div_ceil(chunk as u64), "chunk {chunk}");
}

#[test]
fn segments_sent_at_different_instants_are_separate_chunks_and_no_tso_means_one_segment() {
    let mut s = sender("cubic", SenderConfig { initial_cwnd: 10, ..Default::default() });
    for t in 0..10 {
        assert!(s.poll_transmit(t).is_some());
    }
    assert_eq!((s.stats.tso_bursts, s.stats.tso_burst_segs), (10, 10));
    let mut s = sender("cubic", SenderConfig { initial_cwnd: 10, tso: false, ..Default::default() });
    while s.poll_transmit(0).is_some() {}
    assert_eq!((s.stats.tso_bursts, s.stats.tso_burst_segs), (10, 10));
}

#[test]
fn paced_bbr2_chunks_follow_its_tso_goal_and_minrtt_autosizing_enlarges_them() {
    // 100 µs min_rtt: the min_rtt term adds 64 KB >> 0, so chunks are ~44 segments with it
    // and only the rate term (3 segments here) without.
    let mut means = Vec::new();
    for auto in [true, false] {
        let mut s = sender("bbr2", SenderConfig { initial_cwnd: 200, tso_minrtt_autosize: auto, ..Default::default() });
        // A fair share of 40 Mbit/s: the rate term alone is 4.9 KB, 3 segments.
        s.tp.pacing_rate_bytes_per_s = 5_000_000;
        let mut t = 0;
        while s.stats.tso_burst_segs < 150 {
            while s.poll_transmit(t).is_some() {}
            t = s.next_send_time().unwrap_or(t + 1000).max(t + 1);
        }
        means.push(s.stats.tso_burst_segs as f64 / s.stats.tso_bursts as f64);
    }
    assert!(means[0] >= 40.0, "with autosizing: {means:?}");
    assert!(means[1] <= 3.0, "without autosizing: {means:?}");
}
