//! RTT samples from the timestamp echo (Linux `tcp_ack_update_rtt`'s fallback when Karn's rule
//! leaves an ACK without one).

use crate::*;
use cc::{Cc, CcKind};

/// One RTT on the path: 40 ms of propagation and 130 µs of serialization.
const PATH_RTT_NS: u64 = 40_130_000;

/// A CUBIC sender whose segment 0 of 10 was lost: the receiver SACKed 1..10 at one RTT, the
/// sender retransmitted 0 then. Returns the sender and the retransmission's send time.
fn after_fast_retransmit() -> (Sender, Nanos) {
    let mut s = Sender::new(
        SenderConfig { initial_cwnd: 10, ..Default::default() },
        Cc::new(&CcKind::from_name("cubic").unwrap(), 1),
    );
    s.set_handshake_rtt(0, 40_100_000);
    s.start(0);
    let sent: Vec<Packet> = std::iter::from_fn(|| s.poll_transmit(0)).take(10).collect();
    assert_eq!(sent.len(), 10);
    let t = PATH_RTT_NS;
    let mut sack = Packet { ack: 0, ts_ns: 1, ..Packet::empty(0) };
    sack.push_sack_block((1, 10));
    s.on_ack(t, &sack);
    let rtx = s.poll_transmit(t).expect("segment 0 is retransmitted");
    assert!(rtx.is_retrans && rtx.seq == 0, "{rtx:?}");
    (s, t)
}

#[test]
fn an_ack_of_only_a_retransmission_takes_its_rtt_from_the_echoed_timestamp_in_whole_ms() {
    let (mut s, t_rtx) = after_fast_retransmit();
    let samples_before = s.stats.rtt_count;
    let min_before = s.tp.min_rtt_ns;
    assert!((40_100_000..=PATH_RTT_NS).contains(&min_before), "min_rtt {min_before}");
    // The cumulative ACK echoes the retransmission's TSval. 40.13 ms → 80.26 ms spans 40 whole
    // milliseconds of the TS clock: Linux reads 40 ms, below every true sample of the path.
    let now = t_rtx + PATH_RTT_NS;
    s.on_ack(now, &Packet { ack: 10, ts_ns: t_rtx, ..Packet::empty(0) });
    assert_eq!(s.snd_una(), 10);
    assert_eq!(s.tp.min_rtt_ns, 40_000_000, "the min_rtt filter takes the timestamp sample");
    assert_eq!(s.stats.rtt_count, samples_before, "the run's RTT statistics measure the path only");
}

#[test]
fn without_an_echoed_timestamp_karn_leaves_the_ack_without_a_sample() {
    let (mut s, t_rtx) = after_fast_retransmit();
    let (srtt, min) = (s.tp.srtt_ns, s.tp.min_rtt_ns);
    s.on_ack(t_rtx + PATH_RTT_NS, &Packet { ack: 10, ts_ns: 0, ..Packet::empty(0) });
    assert_eq!(s.snd_una(), 10);
    assert_eq!((s.tp.srtt_ns, s.tp.min_rtt_ns), (srtt, min));
}

#[test]
fn the_timestamp_rtt_counts_whole_ticks_and_at_least_one() {
    // A sub-millisecond data-center RTT reads as one tick (tcp_rtt_tsopt_us(tp, 1)).
    assert_eq!(crate::ack::tsopt_rtt_ns(5_000_050, 5_000_000), 1_000_000);
    assert_eq!(crate::ack::tsopt_rtt_ns(5_999_999 + 50_000, 5_999_999), 1_000_000);
    // A 40.13-ms RTT reads as 40 or 41 ms depending on where in a tick it starts.
    assert_eq!(crate::ack::tsopt_rtt_ns(100_000 + PATH_RTT_NS, 100_000), 40_000_000);
    assert_eq!(crate::ack::tsopt_rtt_ns(900_000 + PATH_RTT_NS, 900_000), 41_000_000);
}
