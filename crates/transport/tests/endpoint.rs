//! The endpoint on a tiny two-way wire of its own: fixed rate, fixed delay, programmable drops.
//! Checks loss recovery, timers and undo against what RFC 8985/6298/3522 prescribe.

mod common;

use cc::CaState;
use common::{sender, Wire, MS, MSS};
use transport::receiver::ReceiverConfig;
use transport::{Packet, Receiver, SenderConfig};

/// A wire of `one_way_ms` each way and `rate_pps` data packets per second, carrying `cc` without
/// TSO; `total_bytes` None = bulk.
fn wire(cc: &str, total_bytes: Option<u64>, one_way_ms: u64, rate_pps: u64) -> Wire {
    let s = sender(cc, SenderConfig { total_bytes, tso: false, ..Default::default() });
    Wire::new(s, ReceiverConfig::default(), one_way_ms * MS, 1_000_000_000 / rate_pps)
}

/// Full-sized data segment number `seq` of flow 0, as the receiver sees it arrive.
fn data_segment(seq: u64) -> Packet {
    let mut p = Packet::empty(0);
    p.is_data = true;
    p.seq = seq;
    p.payload_bytes = MSS as u32;
    p
}

/// A bulk Reno wire (as [`wire`]) whose receiver offers a window of `rcvbuf_segs` segments.
fn reno_behind_a_receive_window(one_way_ms: u64, rate_pps: u64, rcvbuf_segs: u64) -> Wire {
    let mut w = wire("reno", None, one_way_ms, rate_pps);
    let rcvbuf_bytes = Some(rcvbuf_segs * MSS);
    w.receiver = Receiver::new(ReceiverConfig { rcvbuf_bytes, ..Default::default() });
    w
}

/// The retransmissions by cause (fast, after an RTO, loss probe) and the lost retransmissions,
/// checked to add up to the total the wire saw.
fn causes(w: &Wire) -> (u64, u64, u64, u64) {
    let st = &w.sender.stats;
    assert_eq!(st.retransmits, w.retransmissions().len() as u64);
    assert_eq!(st.retrans_fast + st.retrans_rto + st.retrans_tlp, st.retransmits, "{st:?}");
    (st.retrans_fast, st.retrans_rto, st.retrans_tlp, w.sender.lost_retransmits())
}

#[test]
fn clean_path_has_no_retransmissions_and_delivers_everything() {
    let mut w = wire("cubic", Some(2_000_000), 10, 10_000);
    w.run(10_000 * MS);
    assert!(w.sender.is_done());
    assert_eq!(w.receiver.delivered_bytes, 2_000_000);
    assert!(w.retransmissions().is_empty(), "spurious retransmissions {:?}", w.retransmissions());
}

#[test]
fn single_loss_is_repaired_by_one_fast_retransmit_not_an_rto() {
    let mut w = wire("reno", Some(1_000_000), 20, 5_000);
    w.drop_tx = vec![100];
    w.run(10_000 * MS);
    assert!(w.sender.is_done());
    assert_eq!(w.receiver.delivered_bytes, 1_000_000);
    assert_eq!(w.retransmissions(), vec![100], "exactly the lost segment, once");
    assert_eq!(w.sender.stats.rto_count, 0);
    assert_eq!(w.sender.stats.recoveries, 1);
    assert_eq!(causes(&w), (1, 0, 0, 0), "one fast retransmission");
    // Reno halves its window once for this loss: ssthresh = cwnd/2 at the time of the loss.
    assert!(w.sender.tp.snd_ssthresh < 1000);
}

#[test]
fn lost_retransmission_is_detected_by_rack_without_rto() {
    let mut w = wire("reno", Some(1_500_000), 20, 5_000);
    // Drop segment 200's first transmission; the retransmission is the first one after
    // transmission ~240 — drop a range that includes it, leaving only later ones.
    w.drop_tx = vec![200];
    w.run(500 * MS);
    let first_rtx = w.data_sent.iter().position(|x| x.2).expect("a retransmission");
    let mut w = wire("reno", Some(1_500_000), 20, 5_000);
    w.drop_tx = vec![200, first_rtx as u64];
    w.run(10_000 * MS);
    assert!(w.sender.is_done());
    assert_eq!(w.receiver.delivered_bytes, 1_500_000);
    assert_eq!(w.retransmissions(), vec![200, 200], "RACK re-detects the lost retransmission");
    assert_eq!(w.sender.stats.rto_count, 0, "no RTO needed (RFC 8985 §6)");
    assert_eq!(causes(&w), (2, 0, 0, 1), "two fast retransmissions, the first lost");
}

#[test]
fn a_retransmission_lost_after_an_rto_is_detected_by_rack_not_a_second_rto() {
    // The whole flight from transmission 40 on is lost, the tail loss probe too, so the RTO
    // fires and marks everything lost. Find where its go-back-N retransmissions start.
    let mut w = wire("reno", Some(300 * MSS), 5, 10_000);
    w.drop_tx = (40..100_000).collect();
    w.run(1_000 * MS);
    assert_eq!(w.sender.stats.tlp_probes, 1);
    let first_rtx = w.data_sent.iter().position(|x| x.2).expect("the RTO retransmits") as u64;
    // Now let the retransmissions through but the third after the RTO's. RACK runs in Loss
    // state too (RFC 8985 §6.2; Linux tcp_identify_packet_loss): the later ones delivered, it
    // must mark that one lost again, without waiting for a second RTO.
    let mut w = wire("reno", Some(300 * MSS), 5, 10_000);
    w.drop_tx = (40..first_rtx).chain([first_rtx + 3]).collect();
    w.run(10_000 * MS);
    assert!(w.sender.is_done());
    assert_eq!(w.receiver.delivered_bytes, 300 * MSS);
    assert_eq!(w.sender.stats.rto_count, 1, "the lost retransmission must not need another RTO");
    // Every retransmission went out in the Loss state (the probe sent new data); the one lost
    // again counts as a lost retransmission.
    let (fast, rto, tlp, lost_retrans) = causes(&w);
    assert_eq!((fast, tlp), (0, 0));
    assert_eq!(rto, w.retransmissions().len() as u64);
    assert!(lost_retrans >= 1, "{lost_retrans}");
    let lost_again = w.data_sent[(first_rtx + 3) as usize].1;
    assert_eq!(
        w.retransmissions().iter().filter(|&&s| s == lost_again).count(),
        2,
        "{lost_again} resent once more"
    );
}

#[test]
fn tail_loss_is_repaired_by_the_loss_probe() {
    // 20 segments; the last one is lost: no later segment can trigger RACK, TLP must probe.
    let mut w = wire("cubic", Some(20 * MSS), 20, 5_000);
    w.drop_tx = vec![19];
    w.run(5_000 * MS);
    assert!(w.sender.is_done());
    assert_eq!(w.sender.stats.tlp_probes, 1);
    assert_eq!(w.sender.stats.rto_count, 0);
    assert_eq!(causes(&w), (0, 0, 1, 0), "the probe resent the last segment");
    // RFC 8985 §7.2: PTO = 2·SRTT, plus the worst-case delayed-ACK time (200 ms) when a single
    // segment is outstanding, but never later than the RTO would fire (srtt + 200 ms after the
    // last ACK) — the probe replaces the RTO and spares the window collapse.
    let probe = w.data_sent.iter().find(|x| x.2).unwrap();
    let last_new = w.data_sent[19].0;
    let srtt = w.sender.tp.srtt_ns;
    assert!(
        probe.0 >= last_new + 2 * srtt,
        "probe at {} too early (last send {last_new}, srtt {srtt})",
        probe.0
    );
    assert!(
        probe.0 <= last_new + srtt + 200 * MS + 2 * srtt,
        "probe at {} later than the RTO",
        probe.0
    );
    assert!(w.sender.tp.snd_cwnd >= 10, "a probe must not collapse cwnd like an RTO");
}

#[test]
fn rto_fires_after_rto_min_and_backs_off_exponentially() {
    let mut w = wire("reno", Some(200 * MSS), 5, 10_000);
    // Let the connection get RTT samples, then black-hole all ACKs for 3 s.
    w.run(30 * MS);
    assert!(!w.sender.is_done());
    w.drop_all_acks_until = 3_000 * MS;
    w.run(3_000 * MS);
    let rtos = w.sender.stats.rto_count;
    // srtt ≈ 10 ms so RTO = srtt + 200 ms; back-off doubles: fires at ~0.21, 0.63, 1.47, 3.15 s.
    assert!((3..=4).contains(&rtos), "rto count {rtos}");
    assert_eq!(w.sender.tp.ca_state, CaState::Loss);
    assert_eq!(w.sender.tp.snd_cwnd, 1, "RTO collapses the window to one segment (RFC 5681 §3.1)");
    w.run(20_000 * MS);
    assert!(w.sender.is_done());
    assert_eq!(w.receiver.delivered_bytes, 200 * MSS);
}

#[test]
fn spurious_rto_from_a_delay_spike_is_undone_by_timestamps() {
    // A receive window below the BDP keeps the wire's queue empty, so SRTT ≈ 10 ms.
    let mut w = reno_behind_a_receive_window(5, 10_000, 40);
    w.run(300 * MS);
    let before = w.sender.tp.snd_cwnd;
    assert!(before > 20 && w.sender.tp.srtt_ns < 15 * MS);
    // The forward link freezes for 400 ms (a PAUSE storm): the RTO fires, but the originals
    // arrive before the retransmission is acked — Eifel (RFC 3522) must undo the reduction.
    w.freeze_forward(400 * MS);
    w.run(1_500 * MS);
    assert!(w.sender.stats.rto_count >= 1, "the delay must cause an RTO");
    assert!(w.sender.stats.spurious_undos >= 1, "the RTO must be detected as spurious");
    assert!(
        w.sender.tp.snd_cwnd >= before / 2,
        "cwnd {} restored (was {before})",
        w.sender.tp.snd_cwnd
    );
}

#[test]
fn receiver_acks_every_second_segment_and_sacks_out_of_order_data() {
    let mut r = Receiver::new(ReceiverConfig::default());
    // Quick-ACK for the first 16 segments.
    for s in 0..16 {
        assert!(r.on_data(s * MS, &data_segment(s)).is_some(), "quick ack {s}");
    }
    // Then every second segment, with the 40 ms timer for an odd one.
    assert!(r.on_data(20 * MS, &data_segment(16)).is_none());
    assert!(r.on_data(21 * MS, &data_segment(17)).is_some());
    assert!(r.on_data(22 * MS, &data_segment(18)).is_none());
    assert_eq!(r.next_timeout(), Some(62 * MS));
    let a = r.on_timeout(62 * MS).expect("delayed ack");
    assert!(a.delayed);
    assert_eq!(a.ack, 19);
    // A hole at 19: segments 20, 21 are acked at once with SACK blocks; most recent block first.
    let a = r.on_data(70 * MS, &data_segment(20)).unwrap();
    assert_eq!((a.ack, a.n_sack, a.sack_block(0)), (19, 1, (20, 21)));
    let a = r.on_data(71 * MS, &data_segment(21)).unwrap();
    assert_eq!(a.sack_block(0), (20, 22));
    let a = r.on_data(72 * MS, &data_segment(25)).unwrap();
    assert_eq!(a.n_sack, 2);
    assert_eq!(a.sack_block(0), (25, 26));
    assert_eq!(a.sack_block(1), (20, 22));
    // Filling the hole acks everything contiguous at once.
    let a = r.on_data(73 * MS, &data_segment(19)).unwrap();
    assert_eq!(a.ack, 22);
    assert_eq!(a.sack_block(0), (25, 26));
    assert_eq!(r.delivered_bytes, 22 * MSS);
}

#[test]
fn receive_window_limits_the_sender() {
    let mut w = reno_behind_a_receive_window(50, 100_000, 64);
    w.run(3_000 * MS);
    // 64 segments per 100 ms RTT whatever cwnd says.
    let rate = w.receiver.delivered_bytes as f64 / 3.0;
    let limit = (64 * MSS) as f64 / 0.1;
    assert!(rate <= limit * 1.02 && rate >= limit * 0.85, "rate {rate} vs rwnd limit {limit}");
    assert!(w.sender.stats.rwnd_limited);
}

#[test]
fn pacing_spaces_packets_at_the_pacing_rate() {
    let mut s =
        sender("reno", SenderConfig { pacing: Some(true), tso: false, ..Default::default() });
    s.tp.pacing_rate_bytes_per_s = 1000 * MSS; // 1000 segments/s
    let mut times = vec![];
    let mut now = 0;
    while times.len() < 5 {
        if let Some(_p) = s.poll_transmit(now) {
            times.push(now);
        } else {
            now = s.next_timeout().unwrap().max(now + 1);
        }
    }
    for w in times.windows(2) {
        let gap = w[1] - w[0];
        assert!((999_000..=1_001_000).contains(&gap), "gap {gap} ns");
    }
}

#[test]
fn receiver_reports_duplicates_in_a_dsack_block_first_and_once() {
    let mut r = Receiver::new(ReceiverConfig::default());
    for s in 0..10 {
        r.on_data(s * MS, &data_segment(s));
    }
    // A duplicate below rcv_nxt (RFC 2883 §4.1.1): the D-SACK block lies below the ACK.
    let a = r.on_data(20 * MS, &data_segment(4)).expect("a duplicate is acknowledged at once");
    assert_eq!((a.ack, a.n_sack, a.sack_block(0)), (10, 1, (4, 5)));
    // Reported once: the next ACK carries no D-SACK.
    let a = r.on_data(21 * MS, &data_segment(12)).unwrap();
    assert_eq!((a.ack, a.n_sack, a.sack_block(0)), (10, 1, (12, 13)));
    let a = r.on_data(22 * MS, &data_segment(13)).unwrap();
    assert_eq!((a.n_sack, a.sack_block(0)), (1, (12, 14)));
    // A duplicate of out-of-order data (RFC 2883 §4.1.2): the D-SACK block comes first and
    // lies inside the second, the block holding it.
    let a = r.on_data(23 * MS, &data_segment(12)).unwrap();
    assert_eq!((a.ack, a.n_sack), (10, 2));
    assert_eq!((a.sack_block(0), a.sack_block(1)), ((12, 13), (12, 14)));
    // With three out-of-order blocks, the D-SACK leaves room for the two most recent.
    r.on_data(24 * MS, &data_segment(16));
    r.on_data(25 * MS, &data_segment(18));
    let a = r.on_data(26 * MS, &data_segment(3)).unwrap();
    assert_eq!(a.n_sack, 3);
    assert_eq!((a.sack_block(0), a.sack_block(1), a.sack_block(2)), ((3, 4), (18, 19), (16, 17)));
    assert_eq!((r.dsacks_sent, r.dup_segs), (3, 3));
}
