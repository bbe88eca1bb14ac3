use super::*;

fn params(rate_bps: u64, delay_ns: u64) -> LinkParams {
    LinkParams { rate_bps, delay_ns, ..LinkParams::delay_line(0) }
}

#[test]
fn serialization_is_exact_over_many_packets() {
    // 1500 B at 7 Mbit/s is 1714285.714 ns: the remainder must be carried, not lost.
    let mut l: Link<u32> = Link::new(params(7_000_000, 0), 1);
    let total: u64 = (0..7000).map(|_| l.ser_ns(1500)).sum();
    let exact = 7000.0 * 1500.0 * 8.0 / 7e6 * 1e9;
    assert!((total as f64 - exact).abs() <= 1.0, "{total} vs {exact}");
}

#[test]
fn delivery_time_is_serialization_plus_delay_back_to_back() {
    // 1000 B at 8 Mbit/s = 1 ms each; delay 10 ms; three packets at t=0.
    let mut l: Link<u32> = Link::new(params(8_000_000, 10_000_000), 1);
    for i in 0..3 {
        assert_eq!(l.enqueue(0, i, 1000, false, 0), Ok(Verdict::Queued { ce: false }));
    }
    assert_eq!(l.next_deadline(), Some(1_000_000));
    // Called late (at 50 ms): the departures still keep their exact times.
    let got: Vec<_> = std::iter::from_fn(|| l.pop_ready(50_000_000)).collect();
    assert_eq!(got, vec![(0, 11_000_000, 0), (1, 12_000_000, 0), (2, 13_000_000, 0)]);
    assert_eq!(l.stats.tx_bytes, 3000);
}

#[test]
fn nothing_is_delivered_early() {
    let mut l: Link<u32> = Link::new(params(8_000_000, 5_000_000), 1);
    l.enqueue(0, 7, 1000, false, 0).unwrap();
    assert_eq!(l.pop_ready(5_999_999), None);
    assert_eq!(l.next_deadline(), Some(6_000_000));
    assert_eq!(l.pop_ready(6_000_000), Some((7, 6_000_000, 0)));
    assert_eq!(l.next_deadline(), None);
}

#[test]
fn drop_tail_counts_in_service_packet_and_overhead() {
    let mut p = params(8_000_000, 0);
    p.limit_bytes = Some(3 * 1038);
    p.overhead_bytes = 38;
    let mut l: Link<u32> = Link::new(p, 1);
    for i in 0..3 {
        assert!(l.enqueue(0, i, 1000, false, 0).is_ok());
    }
    assert_eq!(l.enqueue(0, 3, 1000, false, 2), Err((Verdict::Dropped, 3)));
    assert_eq!(l.stats.drops, 1);
    assert_eq!(l.per_origin[2].drops, 1);
    // After the first packet finishes (1038 B at 8 Mbit/s = 1.038 ms) there is room again.
    assert!(l.enqueue(1_038_000, 4, 1000, false, 0).is_ok());
    assert_eq!(l.occupancy_pkts(), 3);
}

#[test]
fn packet_limit() {
    let mut p = params(1_000_000, 0);
    p.limit_packets = Some(2);
    let mut l: Link<u32> = Link::new(p, 1);
    assert!(l.enqueue(0, 0, 100, false, 0).is_ok());
    assert!(l.enqueue(0, 1, 100, false, 0).is_ok());
    assert!(l.enqueue(0, 2, 100, false, 0).is_err());
}

#[test]
fn ecn_marks_only_ect_above_threshold() {
    let mut p = params(8_000_000, 0);
    p.ecn_threshold_bytes = Some(1500);
    let mut l: Link<u32> = Link::new(p, 1);
    assert_eq!(l.enqueue(0, 0, 1000, true, 0), Ok(Verdict::Queued { ce: false })); // in service
    assert_eq!(l.enqueue(0, 1, 1000, true, 0), Ok(Verdict::Queued { ce: false })); // 0 waiting
    assert_eq!(l.enqueue(0, 2, 1000, true, 0), Ok(Verdict::Queued { ce: false })); // 1000 <= K
    assert_eq!(l.enqueue(0, 3, 1000, true, 0), Ok(Verdict::Queued { ce: true })); // 2000 > K
    assert_eq!(l.enqueue(0, 4, 1000, false, 0), Ok(Verdict::Queued { ce: false })); // not ECT
    assert_eq!(l.stats.ce_marks, 1);
}

#[test]
fn ecn_packet_threshold_counts_waiting_packets() {
    let mut p = params(8_000_000, 0);
    p.ecn_threshold_packets = Some(2);
    let mut l: Link<u32> = Link::new(p, 1);
    // One in service, then 0, 1, 2 waiting: not above K = 2; with 3 waiting, marked.
    for i in 0..4 {
        assert_eq!(l.enqueue(0, i, 100, true, 0), Ok(Verdict::Queued { ce: false }), "packet {i}");
    }
    assert_eq!(l.enqueue(0, 4, 100, true, 0), Ok(Verdict::Queued { ce: true }));
    assert_eq!(l.enqueue(0, 5, 100, false, 0), Ok(Verdict::Queued { ce: false }));
    // not ECT
}

#[test]
fn bernoulli_loss_rate_within_binomial_bounds() {
    let mut p = params(0, 0);
    p.loss = 0.015;
    let mut l: Link<u32> = Link::new(p, 42);
    let n = 200_000u64;
    for i in 0..n {
        let _ = l.enqueue(i, 0, 100, false, 0);
        while l.pop_ready(i).is_some() {}
    }
    let k = l.stats.random_losses as f64;
    let (mean, sd) = (n as f64 * 0.015, (n as f64 * 0.015 * 0.985).sqrt());
    assert!((k - mean).abs() < 4.0 * sd, "{k} losses, expected {mean} ± {sd}");
}

#[test]
fn rng_streams_differ_by_seed_and_are_reproducible() {
    let a: Vec<u64> = {
        let mut r = XorShift64Star::new(1);
        (0..4).map(|_| r.next_u64()).collect()
    };
    let b: Vec<u64> = {
        let mut r = XorShift64Star::new(1);
        (0..4).map(|_| r.next_u64()).collect()
    };
    let c: Vec<u64> = {
        let mut r = XorShift64Star::new(2);
        (0..4).map(|_| r.next_u64()).collect()
    };
    assert_eq!(a, b);
    assert_ne!(a, c);
    let mut r = XorShift64Star::new(0);
    let m: f64 = (0..100_000).map(|_| r.next_f64()).sum::<f64>() / 1e5;
    assert!((m - 0.5).abs() < 0.01);
}

#[test]
fn queue_sample_mean_max_and_utilization() {
    // 1000 B at 8 Mbit/s = 1 ms; two packets at t=0 -> occupancy 2000 for 1 ms, 1000 for 1 ms.
    let mut l: Link<u32> = Link::new(params(8_000_000, 0), 1);
    l.reset_counters(0);
    l.enqueue(0, 0, 1000, false, 0).unwrap();
    l.enqueue(0, 1, 1000, false, 0).unwrap();
    let s = l.sample(4_000_000);
    assert_eq!(s.max_occupancy_bytes, 2000);
    assert!((s.mean_occupancy_bytes - 750.0).abs() < 1e-9, "{}", s.mean_occupancy_bytes);
    assert!((s.utilization - 0.5).abs() < 1e-9);
    assert_eq!(s.tx_bytes, 2000);
    assert_eq!(s.occupancy_bytes, 0);
    // A packet in service across a sample boundary credits only the part before it.
    l.enqueue(4_500_000, 2, 1000, false, 0).unwrap();
    let s2 = l.sample(5_000_000);
    assert!((s2.utilization - 0.5).abs() < 1e-9, "{}", s2.utilization);
    let s3 = l.sample(6_000_000);
    assert!((s3.utilization - 0.5).abs() < 1e-9, "{}", s3.utilization);
}

#[test]
fn wake_time_rounds_up_never_early() {
    assert_eq!(wake_time(1_000_000, 0, 0), 1_000_000);
    assert_eq!(wake_time(1_000_000, 0, 1), 1_000_000);
    assert_eq!(wake_time(1_000_001, 0, 20_000), 1_020_000);
    assert_eq!(wake_time(1_020_000, 0, 20_000), 1_020_000);
    assert_eq!(wake_time(1_030_000, 5_000, 20_000), 1_040_000);
    assert_eq!(wake_time(3_000, 5_000, 20_000), 0);
    let mut r = XorShift64Star::new(9);
    for _ in 0..10_000 {
        let (d, spin, q) = (r.next_u64() >> 4, r.next_u64() % 100_000, r.next_u64() % 50_000);
        let w = wake_time(d, spin, q);
        assert!(w >= d - spin && w < d - spin + q.max(1), "{d} {spin} {q} -> {w}");
        assert_eq!(w % q.max(1), 0);
    }
}

#[test]
fn only_long_sleeps_and_their_own_deadline_get_the_idle_spin() {
    let now = 10_000_000;
    // Busy link: the next packet is 12 us away — no spin beyond the configured one.
    assert_eq!(spin_window(now + 12_000, now, 0, 0), 0);
    assert_eq!(spin_window(now + 12_000, now, 5_000, 0), 5_000);
    // Nearly idle: a lone packet 5 ms away — wake IDLE_SPIN_NS early.
    assert_eq!(spin_window(now + 5_000_000, now, 0, 0), IDLE_SPIN_NS);
    // Woken early for that deadline: keep polling towards it, even once it is close.
    let d = now + 5_000_000;
    assert_eq!(spin_window(d, d - 60_000, 0, d), IDLE_SPIN_NS);
    // Another, nearer deadline than the one woken for: no spin.
    assert_eq!(spin_window(d - 1_000, d - 60_000, 0, d), 0);
    // A larger configured spin wins.
    assert_eq!(spin_window(now + 5_000_000, now, 200_000, 0), 200_000);
}

#[test]
fn ce_rewrite_fixes_ipv4_checksum() {
    let mut h = [
        0x45u8, 0x02, 0x00, 0x54, 0x12, 0x34, 0x40, 0x00, 0x40, 0x06, 0, 0, 10, 0, 0, 1, 10, 0, 0,
        2,
    ];
    let c = ipv4_checksum(&h);
    h[10..12].copy_from_slice(&c.to_be_bytes());
    assert_eq!(ipv4_checksum(&h), 0);
    assert_eq!(ecn_bits(&h), Some(2));
    assert!(set_ce(&mut h));
    assert_eq!(ecn_bits(&h), Some(3));
    assert_eq!(ipv4_checksum(&h), 0, "checksum must verify after the rewrite");
    assert!(!set_ce(&mut h), "already CE");
    let mut not_ect = h;
    not_ect[1] &= !3;
    assert!(!set_ce(&mut not_ect));
    assert_eq!(ipv4_dst(&h), Some(0x0a00_0002));
}
