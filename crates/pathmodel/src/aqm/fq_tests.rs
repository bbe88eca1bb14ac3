//! fq's pacing (EDT stamps, socket rate, `maxrate`), its round robin and its new-flow burst.

use super::*;
use crate::aqm::AnyAqm;
use crate::{Ecn, TestRng};

/// A packet with what fq reads of a sender's: an EDT stamp or a socket pacing rate.
#[derive(Clone, Debug)]
struct Pkt {
    flow: u64,
    seq: u64,
    edt_ns: Option<Nanos>,
    rate_bytes_per_s: Option<u64>,
}

impl PathPacket for Pkt {
    fn wire_bytes(&self) -> u32 {
        1500
    }
    fn ecn(&self) -> Ecn {
        Ecn::NotEct
    }
    fn set_ce(&mut self) {}
    fn flow_key(&self) -> u64 {
        self.flow
    }
    fn time_to_send_ns(&self) -> Option<Nanos> {
        self.edt_ns
    }
    fn pacing_rate_bytes_per_s(&self) -> Option<u64> {
        self.rate_bytes_per_s
    }
}

fn spec(maxrate_bps: Option<u64>) -> QdiscSpec {
    QdiscSpec::Fq {
        quantum_bytes: DEFAULT_QUANTUM_BYTES,
        initial_quantum_bytes: DEFAULT_INITIAL_QUANTUM_BYTES,
        flow_refill_delay_ns: DEFAULT_FLOW_REFILL_DELAY_NS,
        maxrate_bps,
        ce_threshold_ns: None,
        flow_limit_packets: 1000,
        horizon_ns: DEFAULT_HORIZON_NS,
    }
}

fn fq(maxrate_bps: Option<u64>) -> AnyAqm<Pkt> {
    AnyAqm::build(&spec(maxrate_bps), &LinkContext::default())
}

/// Drain `q` as a transmitter that is always free would: dequeue, and when nothing is due,
/// jump to `next_ready_ns`. Returns (time, flow, seq) of each departure.
fn drain(q: &mut AnyAqm<Pkt>, mut now: Nanos) -> Vec<(Nanos, u64, u64)> {
    let (mut rng, mut dropped) = (TestRng(1), Vec::new());
    let mut out = Vec::new();
    loop {
        match q.dequeue(now, &mut AqmIo::new(&mut rng, &mut dropped)) {
            Some(p) => out.push((now, p.flow, p.seq)),
            None => match q.next_ready_ns() {
                Some(t) => {
                    assert!(t > now, "next_ready_ns {t} not after {now}");
                    now = t;
                }
                None => break,
            },
        }
    }
    assert_eq!(q.packets(), 0);
    out
}

fn push(q: &mut AnyAqm<Pkt>, now: Nanos, p: Pkt) {
    let (mut rng, mut dropped) = (TestRng(1), Vec::new());
    assert!(q.enqueue(now, p, &mut AqmIo::new(&mut rng, &mut dropped)).is_ok());
}

#[test]
fn a_socket_rate_spaces_a_flow_a_quantum_at_a_time_after_its_first_burst() {
    // 12.5 MB/s (100 Mbit/s): a 3028-byte quantum is 242.24 µs.
    let mut q = fq(None);
    for s in 0..30 {
        push(&mut q, 0, Pkt { flow: 1, seq: s, edt_ns: None, rate_bytes_per_s: Some(12_500_000) });
    }
    let out = drain(&mut q, 0);
    let times: Vec<Nanos> = out.iter().map(|o| o.0).collect();
    // The initial quantum (15140 bytes) lets 11 packets out at once (credit stays > 0 until
    // the 11th), then one quantum's wait per 2 packets (a quantum of credit each round).
    assert!(times[..11].iter().all(|&t| t == 0), "{times:?}");
    let gaps: Vec<Nanos> = times.windows(2).map(|w| w[1] - w[0]).filter(|&g| g > 0).collect();
    assert!(gaps.iter().all(|&g| g == 242_240), "{gaps:?}");
    // 19 packets after the burst, two per wait: 10 waits.
    assert_eq!(*times.last().unwrap(), 10 * 242_240);
}

#[test]
fn edt_stamps_hold_each_packet_until_its_time() {
    let mut q = fq(None);
    for s in 0..10 {
        let edt = Some(s * 120_000);
        push(&mut q, 0, Pkt { flow: 7, seq: s, edt_ns: edt, rate_bytes_per_s: None });
    }
    let out = drain(&mut q, 0);
    let want: Vec<(Nanos, u64, u64)> = (0..10).map(|s| (s * 120_000, 7, s)).collect();
    assert_eq!(out, want);
}

#[test]
fn maxrate_caps_a_flow_with_edt_stamps_per_packet() {
    // 12 Mbit/s = 1.5 MB/s: a 1500-byte packet every 1 ms, although all are stamped now.
    let mut q = fq(Some(12_000_000));
    for s in 0..5 {
        push(&mut q, 0, Pkt { flow: 1, seq: s, edt_ns: Some(0), rate_bytes_per_s: None });
    }
    let times: Vec<Nanos> = drain(&mut q, 0).iter().map(|o| o.0).collect();
    assert_eq!(times, [0, 1_000_000, 2_000_000, 3_000_000, 4_000_000]);
    // Without maxrate they all leave at once.
    let mut q = fq(None);
    for s in 0..5 {
        push(&mut q, 0, Pkt { flow: 1, seq: s, edt_ns: Some(0), rate_bytes_per_s: None });
    }
    assert!(drain(&mut q, 0).iter().all(|o| o.0 == 0));
}

#[test]
fn maxrate_caps_a_faster_socket_rate() {
    let mut fast = fq(Some(8_000_000)); // 1 MB/s cap under a 10 MB/s socket rate
    for s in 0..40 {
        let p = Pkt { flow: 1, seq: s, edt_ns: None, rate_bytes_per_s: Some(10_000_000) };
        push(&mut fast, 0, p);
    }
    let last = drain(&mut fast, 0).last().unwrap().0;
    // After the 11-packet burst, 29 packets at 1 MB/s a quantum (3028 B) per two packets:
    // 15 waits of 3.028 ms.
    assert_eq!(last, 14 * 3_028_000 + 3_028_000);
}

#[test]
fn round_robin_shares_between_unpaced_flows_a_quantum_each() {
    let mut q = fq(None);
    for s in 0..40 {
        for f in [1, 2] {
            push(&mut q, 0, Pkt { flow: f, seq: s, edt_ns: None, rate_bytes_per_s: None });
        }
    }
    let flows: Vec<u64> = drain(&mut q, 0).iter().map(|o| o.1).collect();
    // Each new flow first spends its initial quantum (11 packets), then the two alternate
    // two packets (one quantum) at a time.
    assert_eq!(flows[..22], [[1u64; 11], [2; 11]].concat()[..]);
    for (k, w) in flows[22..62].chunks(4).enumerate() {
        assert_eq!(w.iter().filter(|&&f| f == 1).count(), 2, "round {k}: {w:?}");
    }
}

#[test]
fn paced_flows_each_keep_their_own_rate() {
    // Two flows at 1 and 3 MB/s of EDT stamps: both leave on their own schedules.
    let mut q = fq(None);
    for s in 0..30u64 {
        push(
            &mut q,
            0,
            Pkt { flow: 1, seq: s, edt_ns: Some(s * 1_500_000), rate_bytes_per_s: None },
        );
        push(&mut q, 0, Pkt { flow: 2, seq: s, edt_ns: Some(s * 500_000), rate_bytes_per_s: None });
    }
    let out = drain(&mut q, 0);
    for (t, f, s) in out {
        let want = if f == 1 { s * 1_500_000 } else { s * 500_000 };
        assert_eq!(t, want, "flow {f} seq {s}");
    }
}

#[test]
fn a_flow_idle_past_the_refill_delay_gets_a_quantum_back() {
    let mut q = fq(None);
    let p = |s| Pkt { flow: 1, seq: s, edt_ns: None, rate_bytes_per_s: None };
    for s in 0..11 {
        push(&mut q, 0, p(s)); // spends the initial quantum to ≤ 0
    }
    drain(&mut q, 0);
    let AnyAqm::Fq(f) = &q else { unreachable!() };
    // 15140 − 11 × 1500 < 0, then one quantum more when it came up again, empty.
    assert_eq!(f.flows[0].credit, 15140 - 16500 + 3028);
    // Back within 40 ms: the credit stays spent. Idle 50 ms: at least a quantum again.
    push(&mut q, 30_000_000, p(11));
    let AnyAqm::Fq(f) = &q else { unreachable!() };
    assert_eq!(f.flows[0].credit, 1668, "no refill within 40 ms");
    drain(&mut q, 30_000_000);
    push(&mut q, 80_000_001, p(12));
    let AnyAqm::Fq(f) = &q else { unreachable!() };
    assert_eq!(f.flows[0].credit, DEFAULT_QUANTUM_BYTES as i64);
}
