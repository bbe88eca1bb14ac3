use super::*;
use pathmodel::aqm::{DropCause, QdiscSpec};

fn params(rate_bps: u64, delay_ns: u64) -> LinkParams {
    LinkParams { rate_bps, delay_ns, ..LinkParams::delay_line(0) }
}

/// An arrival of `ip_len` bytes from `origin`, ECT(0) when `ect`.
fn arr(ip_len: u32, ect: bool, origin: u16) -> Arrival {
    Arrival { ip_len, ecn: if ect { Ecn::Ect0 } else { Ecn::NotEct }, flow_key: 1, origin }
}

/// Everything delivered by `now`: (payload, due time, origin, CE).
fn deliver(l: &mut Link<u32>, now: u64) -> Vec<(u32, u64, u16, bool)> {
    std::iter::from_fn(|| l.pop_ready(now).map(|d| (d.payload, d.due_ns, d.origin, d.ce))).collect()
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
        assert_eq!(l.enqueue(0, i, arr(1000, false, 0)), Ok(()));
    }
    assert_eq!(l.next_deadline(), Some(1_000_000));
    // Called late (at 50 ms): the departures still keep their exact times.
    let got = deliver(&mut l, 50_000_000);
    let want = [(0, 11_000_000, 0, false), (1, 12_000_000, 0, false), (2, 13_000_000, 0, false)];
    assert_eq!(got, want);
    assert_eq!(l.stats.tx_bytes, 3000);
}

#[test]
fn nothing_is_delivered_early() {
    let mut l: Link<u32> = Link::new(params(8_000_000, 5_000_000), 1);
    l.enqueue(0, 7, arr(1000, false, 0)).unwrap();
    assert_eq!(l.pop_ready(5_999_999), None);
    assert_eq!(l.next_deadline(), Some(6_000_000));
    assert_eq!(deliver(&mut l, 6_000_000), [(7, 6_000_000, 0, false)]);
    assert_eq!(l.next_deadline(), None);
}

#[test]
fn drop_tail_counts_in_service_packet_and_overhead() {
    let mut p = params(8_000_000, 0);
    p.limit_bytes = Some(3 * 1038);
    p.overhead_bytes = 38;
    let mut l: Link<u32> = Link::new(p, 1);
    for i in 0..3 {
        assert!(l.enqueue(0, i, arr(1000, false, 0)).is_ok());
    }
    let dropped = Err((Verdict::Dropped(DropCause::Overflow), 3));
    assert_eq!(l.enqueue(0, 3, arr(1000, false, 2)), dropped);
    assert_eq!((l.stats.drops, l.stats.drops_overflow, l.stats.drops_aqm), (1, 1, 0));
    assert_eq!(l.per_origin[2].drops, 1);
    // After the first packet finishes (1038 B at 8 Mbit/s = 1.038 ms) there is room again.
    assert!(l.enqueue(1_038_000, 4, arr(1000, false, 0)).is_ok());
    assert_eq!(l.occupancy_pkts(), 3);
}

#[test]
fn packet_limit() {
    let mut p = params(1_000_000, 0);
    p.limit_packets = Some(2);
    let mut l: Link<u32> = Link::new(p, 1);
    assert!(l.enqueue(0, 0, arr(100, false, 0)).is_ok());
    assert!(l.enqueue(0, 1, arr(100, false, 0)).is_ok());
    assert!(l.enqueue(0, 2, arr(100, false, 0)).is_err());
}

/// Packets 0..n of `ip_len` bytes at t = 0, ECT(0) except `not_ect`; returns each one's CE on
/// delivery (payload order) and the marks the link counted.
fn marks_at_zero(p: LinkParams, ip_len: u32, n: u32, not_ect: u32) -> (Vec<bool>, u64) {
    let mut l: Link<u32> = Link::new(p, 1);
    for i in 0..n {
        assert_eq!(l.enqueue(0, i, arr(ip_len, i != not_ect, 0)), Ok(()));
    }
    let got = deliver(&mut l, u64::MAX);
    assert_eq!(got.iter().map(|d| d.0).collect::<Vec<_>>(), (0..n).collect::<Vec<_>>());
    (got.iter().map(|d| d.3).collect(), l.stats.ce_marks)
}

#[test]
fn ecn_marks_only_ect_above_threshold() {
    let mut p = params(8_000_000, 0);
    p.ecn_threshold_bytes = Some(1500);
    // In service; 0 waiting; 1000 <= K; 2000 > K: marked; not ECT.
    let (ce, marks) = marks_at_zero(p, 1000, 5, 4);
    assert_eq!(ce, [false, false, false, true, false]);
    assert_eq!(marks, 1);
}

#[test]
fn ecn_packet_threshold_counts_waiting_packets() {
    let mut p = params(8_000_000, 0);
    p.ecn_threshold_packets = Some(2);
    // One in service, then 0, 1, 2 waiting: not above K = 2; with 3 waiting, marked; not ECT.
    let (ce, marks) = marks_at_zero(p, 100, 6, 5);
    assert_eq!(ce, [false, false, false, false, true, false]);
    assert_eq!(marks, 1);
}

#[test]
fn bernoulli_loss_rate_within_binomial_bounds() {
    let mut p = params(0, 0);
    p.loss = 0.015;
    let mut l: Link<u32> = Link::new(p, 42);
    let n = 200_000u64;
    for i in 0..n {
        let _ = l.enqueue(i, 0, arr(100, false, 0));
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
    l.enqueue(0, 0, arr(1000, false, 0)).unwrap();
    l.enqueue(0, 1, arr(1000, false, 0)).unwrap();
    let s = l.sample(4_000_000);
    assert_eq!(s.max_occupancy_bytes, 2000);
    assert!((s.mean_occupancy_bytes - 750.0).abs() < 1e-9, "{}", s.mean_occupancy_bytes);
    assert!((s.utilization - 0.5).abs() < 1e-9);
    assert_eq!(s.tx_bytes, 2000);
    assert_eq!(s.occupancy_bytes, 0);
    // A packet in service across a sample boundary credits only the part before it.
    l.enqueue(4_500_000, 2, arr(1000, false, 0)).unwrap();
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

#[test]
fn sojourn_is_the_wait_before_service_since_the_start() {
    // 1000 B at 8 Mbit/s = 1 ms each, three at t = 0: they wait 0, 1 and 2 ms for the
    // transmitter, however late the link is looked at. ECT(1), but a one-class discipline
    // reports no L4S class.
    let mut l: Link<u32> = Link::new(params(8_000_000, 0), 1);
    l.reset_counters(0);
    for i in 0..3 {
        let a = Arrival { ecn: Ecn::Ect1, ..arr(1000, false, 0) };
        l.enqueue(0, i, a).unwrap();
    }
    let s = l.sample(4_000_000);
    assert!((s.sojourn_mean_ns - 1_000_000.0).abs() < 1e-6, "{}", s.sojourn_mean_ns);
    // Percentiles come from log-spaced bins (within 4.4 %), capped by the largest sojourn.
    assert!((s.sojourn_p50_ns / 1e6 - 1.0).abs() < 0.045, "{}", s.sojourn_p50_ns);
    assert_eq!(s.sojourn_p99_ns, 2_000_000.0);
    assert!(s.l4s_sojourn_p99_ns.is_nan() && s.l4s_sojourn_mean_ns.is_nan());
    // The next interval serves nothing: the statistics since the start, and the counters, carry
    // on (the simulator's queue table counts sojourns since the start too).
    let s2 = l.sample(5_000_000);
    assert_eq!((s2.sojourn_mean_ns, s2.sojourn_p99_ns), (s.sojourn_mean_ns, s.sojourn_p99_ns));
    assert_eq!(s2.tx_bytes, 3000);
    // A fresh run (reset_counters) starts them anew.
    l.reset_counters(6_000_000);
    assert!(l.sample(7_000_000).sojourn_mean_ns.is_nan());
}

#[test]
fn link_params_json_is_backward_compatible() {
    let old = r#"{"rate_bps": 1000, "limit_bytes": 3000, "ecn_threshold_bytes": 1500}"#;
    let p: LinkParams = serde_json::from_str(old).unwrap();
    assert_eq!(p.qdisc, QdiscSpec::Droptail {});
    assert_eq!((p.limit_bytes, p.ecn_threshold_bytes), (Some(3000), Some(1500)));
    let new = r#"{"rate_bps": 1000, "qdisc": {"kind": "droptail"}}"#;
    assert_eq!(serde_json::from_str::<LinkParams>(new).unwrap().qdisc, QdiscSpec::Droptail {});
    assert!(serde_json::from_str::<LinkParams>(r#"{"qdisc": {"kind": "nope"}}"#).is_err());
    assert!(serde_json::from_str::<LinkParams>(r#"{"rate": 1}"#).is_err());
}

/// Every discipline the path model registers, with its defaults (`{"kind": NAME}`), read from
/// `QdiscSpec`'s JSON schema so a new discipline is tested here without a change.
fn registered_qdiscs() -> Vec<(String, QdiscSpec)> {
    fn kinds(v: &serde_json::Value, out: &mut Vec<String>) {
        if let Some(k) = v.pointer("/properties/kind") {
            let listed = k.get("enum").and_then(|e| e.as_array()).cloned().unwrap_or_default();
            let consts = k.get("const").cloned().into_iter().chain(listed);
            out.extend(consts.filter_map(|c| c.as_str().map(String::from)));
        }
        match v {
            serde_json::Value::Object(m) => m.values().for_each(|x| kinds(x, out)),
            serde_json::Value::Array(a) => a.iter().for_each(|x| kinds(x, out)),
            _ => {}
        }
    }
    let schema = serde_json::to_value(schemars::schema_for!(QdiscSpec)).unwrap();
    let mut names = Vec::new();
    kinds(&schema, &mut names);
    names.sort();
    names.dedup();
    // RED is not one of the path model's disciplines: the simulator runs it as its native queue
    // and the emulator refuses it before a link is built (`QdiscSpec::is_red`).
    let specs = names.into_iter().filter(|k| k != "red").map(|k| {
        let spec = serde_json::from_value(serde_json::json!({ "kind": k })).unwrap();
        (k, spec)
    });
    specs.collect()
}

/// Two flows at 1.5x the rate of a 10 Mbit/s link with a 200-packet buffer for 3 s through
/// discipline `spec`: an ECN-capable one (ECT(1): L4S for DualPI2) and a not-ECT one.
/// Every packet must come back exactly once (delivered, refused, or dropped inside the
/// discipline and drained), the counters must add up, marks must reach the departing packets
/// of the ECN-capable flow only, both flows must see congestion (a drop or a mark), the link
/// must stay busy, and no sojourn can exceed what the buffer holds. Returns the CE marks the
/// ECN-capable flow's departing packets carried (Linux's CoDel defaults to ECN off: drops only).
fn overload_through(name: &str, spec: QdiscSpec) -> u64 {
    const WIRE: u64 = 1538;
    const LIMIT_PKTS: u64 = 200;
    let mut p = params(10_000_000, 1_000_000);
    p.overhead_bytes = 38;
    p.limit_bytes = Some(LIMIT_PKTS * WIRE);
    p.ecn_threshold_bytes = Some(20 * WIRE); // the FIFO's step marking; others ignore it
    p.qdisc = spec;
    let mut l: Link<u32> = Link::new(p, 7);
    l.reset_counters(0);
    let (gap_ns, end_ns, interval_ns) = (820_000u64, 3_000_000_000u64, 100_000_000u64);
    let mut fate = vec![0u8; (end_ns / gap_ns + 1) as usize]; // 1 delivered, 2 refused, 3 drained
    let (mut ce_by_origin, mut samples) = ([0u64; 2], Vec::new());
    let mut settle = |l: &mut Link<u32>, now: u64, fate: &mut Vec<u8>| {
        for d in deliver(l, now) {
            assert_eq!(fate[d.0 as usize], 0, "{name}: packet {} twice", d.0);
            fate[d.0 as usize] = 1;
            ce_by_origin[d.2 as usize] += d.3 as u64;
        }
        for i in l.drain_dropped() {
            assert_eq!(fate[i as usize], 0, "{name}: packet {i} twice");
            fate[i as usize] = 3;
        }
    };
    let (mut t, mut i, mut next_sample) = (0u64, 0u32, interval_ns);
    while t < end_ns {
        while next_sample <= t {
            settle(&mut l, next_sample, &mut fate);
            samples.push(l.sample(next_sample));
            next_sample += interval_ns;
        }
        let origin = (i % 2) as u16;
        let ecn = if origin == 0 { Ecn::Ect1 } else { Ecn::NotEct };
        let a = Arrival { ip_len: 1500, ecn, flow_key: 100 + origin as u64, origin };
        if let Err((_, j)) = l.enqueue(t, i, a) {
            fate[j as usize] = 2;
        }
        settle(&mut l, t, &mut fate);
        (t, i) = (t + gap_ns, i + 1);
    }
    settle(&mut l, u64::MAX / 2, &mut fate);
    assert_eq!((l.occupancy_pkts(), l.in_propagation()), (0, 0), "{name}");
    assert!(fate[..i as usize].iter().all(|&f| f != 0), "{name}: a packet was lost track of");
    let count = |f: u8| fate.iter().filter(|&&x| x == f).count() as u64;
    let st = &l.stats;
    assert_eq!(st.rx_pkts, i as u64, "{name}");
    assert_eq!(st.tx_pkts, count(1), "{name}");
    assert_eq!(st.drops, count(2) + count(3), "{name}");
    assert_eq!(st.drops, st.drops_overflow + st.drops_aqm, "{name}");
    assert!(st.drops > 0, "{name}: 1.5x overload for 3 s must drop");
    let per_origin_drops: u64 = l.per_origin.iter().map(|o| o.drops).sum();
    assert_eq!(per_origin_drops, st.drops, "{name}");
    assert_eq!(ce_by_origin[1], 0, "{name}: a not-ECT packet was marked");
    assert!(ce_by_origin[0] + l.per_origin[0].drops > 0, "{name}: flow 0 saw no congestion");
    assert!(l.per_origin[1].drops > 0, "{name}: the not-ECT flow saw no drop");
    assert!(ce_by_origin[0] <= st.ce_marks && st.ce_marks == l.per_origin[0].ce_marks, "{name}");
    let max_sojourn_ns = (LIMIT_PKTS * WIRE * 8 * 1_000_000_000 / 10_000_000) as f64;
    for s in &samples[2..] {
        assert!(s.utilization > 0.99, "{name}: link idle under overload at {}", s.t_ns);
        assert!(s.sojourn_p50_ns <= s.sojourn_p99_ns, "{name}");
        assert!(s.sojourn_p99_ns <= max_sojourn_ns * 1.045, "{name}: {}", s.sojourn_p99_ns);
        let l4s = s.l4s_sojourn_p99_ns;
        assert!(l4s.is_nan() || l4s <= max_sojourn_ns * 1.045, "{name}");
    }
    ce_by_origin[0]
}

#[test]
fn every_registered_discipline_runs_through_the_link() {
    let specs = registered_qdiscs();
    assert!(specs.iter().any(|(k, _)| k == "droptail"), "{specs:?}");
    for (name, spec) in specs {
        let marked = overload_through(&name, spec);
        // The FIFO's step threshold (20 packets) is crossed: its marks reach the packets.
        assert!(name != "droptail" || marked > 0, "droptail marked {marked}");
    }
}

#[test]
fn ect1_rewrite_and_flow_key_read_the_header() {
    let mut h = [
        0x45u8, 0x02, 0x00, 0x54, 0x12, 0x34, 0x40, 0x00, 0x40, 0x06, 0, 0, 10, 0, 0, 1, 10, 0, 0,
        2, 0x13, 0x89, 0xc3, 0x50, 0, 0, 0, 0,
    ];
    let c = ipv4_checksum(&h[..20]);
    h[10..12].copy_from_slice(&c.to_be_bytes());
    assert_eq!(packet_ecn(&h), Ecn::Ect0);
    let key = flow_key(&h);
    assert!(ect0_to_ect1(&mut h));
    assert_eq!(packet_ecn(&h), Ecn::Ect1);
    assert_eq!(ipv4_checksum(&h[..20]), 0, "checksum must verify after the rewrite");
    assert!(!ect0_to_ect1(&mut h), "only ECT(0) is rewritten");
    assert!(set_ce(&mut h) && packet_ecn(&h) == Ecn::Ce && ipv4_checksum(&h[..20]) == 0);
    // The codepoint is not part of the flow; the ports are.
    assert_eq!(flow_key(&h), key);
    let mut other_port = h;
    other_port[23] ^= 1;
    assert_ne!(flow_key(&other_port), key);
    let mut reverse = h;
    reverse[12..16].copy_from_slice(&h[16..20]);
    reverse[16..20].copy_from_slice(&h[12..16]);
    assert_ne!(flow_key(&reverse), key, "each direction is its own flow");
    assert_eq!(flow_key(&[0u8; 10]), 0);
}

// ------------------------------------------------------------------ stalls

use crate::forward::{Emu, Forwarder, LoopStats, Pool, MAX_STALLS_LISTED, STALL_THRESHOLD_NS};

const MS: u64 = 1_000_000;

#[test]
fn a_stall_is_the_interval_its_late_packets_left_in() {
    let t0 = 1_000 * MS;
    let mut s = LoopStats::default();
    // Interval (t0, t0+100 ms]: on time, then 0.9 ms late (jitter, not a stall).
    s.note_late(t0 + 10 * MS, t0 + 10 * MS);
    s.note_late(t0 + 50 * MS, t0 + 50 * MS - 900_000);
    // The loop sleeps from 98 to 103 ms: the packets due meanwhile leave at 103 ms, after the
    // grid point, so the 100 ms interval is clean and the next one has the stall.
    s.note_late(t0 + 103 * MS, t0 + 98 * MS);
    s.note_late(t0 + 103 * MS, t0 + 102 * MS);
    s.close_interval(t0 + 100 * MS, t0);
    assert_eq!(s.stall_count, 0, "{:?}", s.stalls);
    s.note_late(t0 + 150 * MS, t0 + 150 * MS);
    s.close_interval(t0 + 200 * MS, t0);
    // A stall at exactly the threshold, delivered exactly at the grid point: that interval.
    s.note_late(t0 + 300 * MS, t0 + 300 * MS - STALL_THRESHOLD_NS);
    s.close_interval(t0 + 300 * MS, t0);
    // An interval with no packet at all is no stall.
    s.close_interval(t0 + 400 * MS, t0);
    assert_eq!(s.stalls, [(200 * MS, 5 * MS, 0, 0), (300 * MS, STALL_THRESHOLD_NS, 0, 0)]);
    assert_eq!(s.stall_count, 2);
    assert_eq!(s.late_max_ns, 5 * MS);
    assert_eq!(
        s.stalls_json(),
        format!(
            "\"stall_threshold_ns\":{MS},\"stall_count\":2,\"stalls\":[[{},{},0,0],[{},{},0,0]]",
            200 * MS,
            5 * MS,
            300 * MS,
            MS
        )
    );
}

#[test]
fn stalls_before_the_start_are_forgotten_and_the_list_is_capped() {
    let mut s = LoopStats::default();
    s.note_late(5 * MS, 0); // during set-up
    s.start_intervals();
    s.close_interval(10 * MS, 9 * MS);
    assert_eq!(s.stall_count, 0);
    let n = MAX_STALLS_LISTED as u64 + 3;
    for i in 1..=n {
        let t = 10 * MS + i * 100 * MS;
        s.note_late(t - MS, t - 3 * MS);
        s.close_interval(t, 10 * MS);
    }
    assert_eq!(s.stall_count, n);
    assert_eq!(s.stalls.len(), MAX_STALLS_LISTED);
    assert_eq!(s.stalls[0], (100 * MS, 2 * MS, 0, 0));
}

#[test]
fn a_stall_tells_a_late_wake_up_from_a_busy_loop() {
    let t0 = 1_000 * MS;
    let mut s = LoopStats::default();
    s.start_intervals();
    // Interval 1: the loop asked to wake at 40 ms for a packet due then, and the machine woke
    // it 14.4 ms late: the packets due meanwhile leave at once.
    s.note_sleep(t0 + 54_400_000, t0 + 40 * MS, true);
    s.note_late(t0 + 54_400_000, t0 + 40 * MS);
    s.note_late(t0 + 54_400_000, t0 + 54 * MS);
    s.close_interval(t0 + 100 * MS, t0);
    // Interval 2: its sleeps end on time (20 us late; one a packet ended early), but at 153 ms
    // a wake-up after no sleep delivers a packet due at 150 ms: the loop ran behind, busy or
    // preempted while it ran. A stall, not a late wake-up.
    s.note_sleep(t0 + 120 * MS + 20_000, t0 + 120 * MS, true);
    s.note_late(t0 + 120 * MS + 20_000, t0 + 120 * MS);
    s.note_sleep(t0 + 130 * MS, t0 + 131 * MS, false);
    s.note_late(t0 + 153 * MS, t0 + 150 * MS);
    s.close_interval(t0 + 200 * MS, t0);
    // Interval 3: a 2 ms late wake-up that delivered nothing late enough is no stall; the one
    // after it, across the grid point, is the next interval's, with its packets.
    s.note_sleep(t0 + 250 * MS, t0 + 248 * MS, true);
    s.note_sleep(t0 + 301 * MS, t0 + 299 * MS - 500_000, true);
    s.note_late(t0 + 301 * MS, t0 + 299 * MS - 500_000);
    s.close_interval(t0 + 300 * MS, t0);
    s.close_interval(t0 + 400 * MS, t0);
    // Interval 5: a sleep that returned 3 ms late with a packet ready: an overrun, but not
    // counted a late wake-up (the packet, not the late timer, may have woken it).
    s.note_sleep(t0 + 463 * MS, t0 + 460 * MS, false);
    s.note_late(t0 + 463 * MS, t0 + 460 * MS);
    s.close_interval(t0 + 500 * MS, t0);
    assert_eq!(
        s.stalls,
        [
            (100 * MS, 14_400_000, 14_400_000, 14_400_000),
            (200 * MS, 3 * MS, 20_000, 20_000),
            (400 * MS, 2_500_000, 2_500_000, 2_500_000),
            (500 * MS, 3 * MS, 0, 3 * MS)
        ]
    );
    assert_eq!((s.timed_wakes, s.late_wakes, s.wake_late_max_ns), (4, 3, 14_400_000));
    let mean = (14_400_000 + 20_000 + 2 * MS + 2_500_000) as f64 / 4.0;
    assert_eq!(
        s.wakes_json(),
        format!(
            "\"timed_wakes\":4,\"late_wakes\":3,\"wake_late_mean_ns\":{mean:.1},\
             \"wake_late_max_ns\":14400000"
        )
    );
    assert!(s.stalls_json().ends_with(
        ",\"stalls\":[[100000000,14400000,14400000,14400000],\
         [200000000,3000000,20000,20000],[400000000,2500000,2500000,2500000],\
         [500000000,3000000,0,3000000]]"
    ));
}

/// A datagram socket pair standing in for a TUN: (the emulator's end, the host's).
fn tun_pair() -> (i32, i32) {
    let mut fds = [0; 2];
    let kind = libc::SOCK_SEQPACKET | libc::SOCK_NONBLOCK;
    assert_eq!(unsafe { libc::socketpair(libc::AF_UNIX, kind, 0, fds.as_mut_ptr()) }, 0);
    (fds[0], fds[1])
}

/// A 40-byte IPv4 TCP packet from 10.77.0.2 to 10.77.255.1.
fn data_packet() -> Vec<u8> {
    let mut p = vec![0u8; 40];
    p[0] = 0x45;
    p[2..4].copy_from_slice(&40u16.to_be_bytes());
    p[9] = 6;
    p[12..16].copy_from_slice(&[10, 77, 0, 2]);
    p[16..20].copy_from_slice(&[10, 77, 255, 1]);
    p
}

#[test]
fn the_dumbbell_lists_its_stalls_in_the_final_line() {
    let (s_emu, s_host) = tun_pair();
    let (r_emu, r_host) = tun_pair();
    let mut emu = Emu {
        pool: Pool::new(2048),
        sender_fds: vec![s_emu],
        recv_fd: r_emu,
        addr_to_sender: [(0x0a4d_0002, 0u16)].into_iter().collect(),
        ect1: vec![false],
        access_fwd: vec![None],
        access_rev: vec![None],
        fwd: Link::new(LinkParams::delay_line(MS), 1),
        rev: Link::new(LinkParams::delay_line(MS), 2),
        stats: LoopStats::default(),
    };
    let t0 = forward::now_ns();
    emu.start_run(t0);
    let p = data_packet();
    let send = |p: &[u8]| unsafe { libc::write(s_host, p.as_ptr() as *const _, p.len()) };
    let recv = || {
        let mut b = [0u8; 64];
        unsafe { libc::read(r_host, b.as_mut_ptr() as *mut _, 64) }
    };
    // Read between `before` and `after`: due 1 ms later. Delivered 0.5 ms late: no stall.
    assert_eq!(send(&p), 40);
    let before = forward::now_ns();
    emu.drain_input(0);
    let after = forward::now_ns();
    emu.run_timers(after + MS + MS / 2);
    assert_eq!(recv(), 40);
    emu.close_interval(t0 + 100 * MS, t0, &mut |_, _| {});
    // Delivered 4 ms late (plus the read's own time): a stall in the second interval.
    assert_eq!(send(&p), 40);
    let before2 = forward::now_ns();
    emu.drain_input(0);
    let after2 = forward::now_ns();
    emu.run_timers(after2 + 5 * MS);
    assert_eq!(recv(), 40);
    emu.close_interval(t0 + 200 * MS, t0, &mut |_, _| {});
    let fin = emu.final_json("stop");
    let v: serde_json::Value = serde_json::from_str(&fin).unwrap();
    assert_eq!(v["stall_count"], 1, "{fin}");
    assert_eq!(v["stalls"][0][0], 200 * MS, "{fin}");
    let late = v["stalls"][0][1].as_u64().unwrap();
    assert!((4 * MS..=4 * MS + (after2 - before2)).contains(&late), "{fin}");
    assert!(v["late_max_ns"].as_u64().unwrap() >= late);
    // No timed sleep here: the stall's wake-up lateness is 0, as are the run's.
    assert_eq!(v["stalls"][0][2], 0, "{fin}");
    assert_eq!((v["timed_wakes"].as_u64(), v["wake_late_max_ns"].as_u64()), (Some(0), Some(0)));
    assert!(after - before < MS / 2, "the first read took too long to tell");
    for fd in [s_emu, s_host, r_emu, r_host] {
        unsafe { libc::close(fd) };
    }
}
