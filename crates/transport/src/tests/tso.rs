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
    let mut s =
        sender("cubic", SenderConfig { initial_cwnd: 10, tso: false, ..Default::default() });
    while s.poll_transmit(0).is_some() {}
    assert_eq!((s.stats.tso_bursts, s.stats.tso_burst_segs), (10, 10));
}

#[test]
fn paced_bbr2_chunks_follow_its_tso_goal_and_minrtt_autosizing_enlarges_them() {
    // 100 µs min_rtt: the min_rtt term adds 64 KB >> 0, so chunks are ~44 segments with it
    // and only the rate term (3 segments here) without.
    let mut means = Vec::new();
    for auto in [true, false] {
        let mut s = sender(
            "bbr2",
            SenderConfig { initial_cwnd: 200, tso_minrtt_autosize: auto, ..Default::default() },
        );
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
fn autosizing_is_linux_tcp_tso_autosize_and_a_jumbo_mss_gets_two_segment_bursts() {
    // max(min(rate >> 10, 64 KB) / mss, 2): 1 Gbit/s = 125 MB/s → 122 KB per ms, capped at 64 KB.
    assert_eq!(cc::tso_autosize(125_000_000, 1448), (65_536 / 1448) as u32);
    assert_eq!(cc::tso_autosize(1_000_000, 1448), 2, "976 B per ms is below 2 segments");
    assert_eq!(cc::tso_autosize(10_000_000, 1448), (10_000_000u64 >> 10) as u32 / 1448);
    // One segment above half of 64 KB: Linux's floor of 2 segments still holds (no upper
    // bound in segments); this used to panic in `clamp(2, 1)`.
    for mss in [32_769, 65_000, 65_535, 1_000_000] {
        assert_eq!(cc::tso_autosize(125_000_000, mss), 2, "mss {mss}");
    }
    for cc in ["cubic", "reno", "dctcp", "bql"] {
        let mut s =
            sender(cc, SenderConfig { mss: 32_769, initial_cwnd: 10, ..Default::default() });
        assert_eq!(s.tso_segs(), 2, "{cc}");
        while s.poll_transmit(0).is_some() {}
        // Paced algorithms (bql) send less at t = 0; every burst is at most 2 segments.
        assert!(
            s.stats.tso_burst_segs >= 2 && s.stats.tso_burst_segs <= 2 * s.stats.tso_bursts,
            "{cc}: {:?}",
            s.stats
        );
    }
}

/// Linux `tcp_tso_should_defer`: an unpaced ACK-clocked sender does not send the two segments
/// each ACK frees; it waits until a full offload frame (or a third of the window) fits, then
/// sends it as one burst. Without deferral it sends what each ACK frees.
#[test]
fn an_unpaced_sender_defers_new_data_to_full_offload_frames() {
    const RTT: u64 = 10_000_000;
    let bursts = |defer: bool| -> (Vec<u64>, u32, u32) {
        let mut s = sender(
            "dctcp",
            SenderConfig { initial_cwnd: 300, tso_defer: defer, ..Default::default() },
        );
        s.set_handshake_rtt(0, RTT);
        let mut sent = 0u64;
        while s.poll_transmit(0).is_some() {
            sent += 1;
        }
        assert_eq!(sent, 300);
        let (frame, third) = (s.tso_segs(), s.tp.snd_cwnd / 3);
        // One RTT later the ACKs come back, each for two segments, 24 µs apart (1 Gbit/s).
        let mut out = Vec::new();
        for i in 1..=60u64 {
            let now = RTT + i * 24_000;
            s.on_ack(now, &Packet { ack: 2 * i, ts_ns: 1, ..Packet::empty(0) });
            let mut n = 0;
            while s.poll_transmit(now).is_some() {
                n += 1;
            }
            out.push(n);
        }
        (out, frame, third)
    };
    let (eager, _, _) = bursts(false);
    assert!(eager.iter().all(|&n| n >= 2), "without deferral every ACK sends: {eager:?}");
    let (deferred, frame, third) = bursts(true);
    let want = frame.min(third) as u64;
    assert!(want > 4, "the frame ({frame}) and a third of cwnd ({third}) exceed one ACK's worth");
    // The first ACK comes 10 ms after the last write: Linux defers only after a recent write.
    assert!(deferred[0] > 0, "{deferred:?}");
    let later = &deferred[1..];
    assert!(
        later.iter().filter(|&&n| n == 0).count() > later.len() * 3 / 4,
        "most ACKs send nothing: {deferred:?}"
    );
    assert!(later.iter().all(|&n| n == 0 || n >= want), "bursts of at least {want}: {deferred:?}");
    // Nothing is lost to deferral but the frame still being filled.
    let (e, d) = (eager.iter().sum::<u64>(), deferred.iter().sum::<u64>());
    assert!(d <= e && e - d < want, "{e} sent eagerly, {d} deferring");
}
