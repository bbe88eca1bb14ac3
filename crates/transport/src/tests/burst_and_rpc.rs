//! Offload-chunk accounting and the RPC workload, on an ideal wire (fixed one-way delay, no
//! queue).
use crate::*;
use std::collections::VecDeque;
use cc::{Cc, Nanos};
use crate::receiver::ReceiverConfig;
use cc::CcKind;

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

#[test]
fn rpc_messages_are_written_after_full_ack_and_gap_and_their_latency_is_one_round_trip() {
    let one_way = 50_000;
    let gap = 1_000_000;
    let mut s = sender("cubic", SenderConfig { rpc: Some(RpcConfig { segs: 4, gap_ns: gap }), ..Default::default() });
    let mut r = Receiver::new(ReceiverConfig { msg_segs: Some(4), ..Default::default() });
    let mut now = 0;
    let mut fwd: VecDeque<(Nanos, Packet)> = VecDeque::new();
    let mut rev: VecDeque<(Nanos, Packet)> = VecDeque::new();
    while now < 20_000_000 {
        while let Some(p) = s.poll_transmit(now) {
            fwd.push_back((now + one_way, p));
        }
        let next = [fwd.front().map(|x| x.0), rev.front().map(|x| x.0), s.next_timeout(), r.next_timeout()]
            .into_iter()
            .flatten()
            .min()
            .unwrap();
        now = next.max(now);
        if fwd.front().is_some_and(|x| x.0 <= now) {
            let (_, p) = fwd.pop_front().unwrap();
            if let Some(a) = r.on_data(now, &p) {
                rev.push_back((now + one_way, a));
            }
        } else if rev.front().is_some_and(|x| x.0 <= now) {
            let (_, a) = rev.pop_front().unwrap();
            s.on_ack(now, &a);
        } else if r.next_timeout().is_some_and(|t| t <= now) {
            if let Some(a) = r.on_timeout(now) {
                rev.push_back((now + one_way, a));
            }
        } else if s.next_timer_deadline().is_some_and(|t| t <= now) {
            s.on_timeout(now);
        }
    }
    // Each message: one RTT (100 µs) of latency, then the gap: 20 ms / 1.1 ms ≈ 18 messages.
    let n = s.stats.rpc_count;
    assert!((17..=19).contains(&n), "{n} messages");
    let p99 = s.rpc_hist.quantile_ns(0.99);
    assert!((95_000.0..=110_000.0).contains(&p99), "p99 {p99} ns");
    assert_eq!(s.completed_ns, None, "an RPC flow never completes");
}
