//! The scoreboard's loss marking: one `mark_lost` for RACK and the RTO, with Linux
//! `tcp_mark_skb_lost`'s accounting, and an in-flight list that stays whole through an RTO.

use crate::scoreboard::{Scoreboard, F_LOST, F_RETRANS, F_SACKED};
use cc::rate::{PacketRateState, RateSample};
use cc::{Cc, CcKind, TcpCc};

/// `n` segments sent at 0, 1, 2, … ns.
fn sent(n: u64) -> (Scoreboard, TcpCc, Cc) {
    let mut sb = Scoreboard::new();
    let mut tp = TcpCc::new(crate::DEFAULT_MSS_BYTES, 10);
    for t in 0..n {
        tp.packets_out += 1;
        sb.on_send_new(t, PacketRateState { sent_ns: t, ..PacketRateState::default() });
    }
    (sb, tp, Cc::new(&CcKind::from_name("reno").unwrap(), 1))
}

fn retransmit(sb: &mut Scoreboard, tp: &mut TcpCc, now: u64, seq: u64) {
    sb.on_retransmit(now, seq);
    tp.retrans_out += 1;
    sb.on_retransmitted(seq, PacketRateState { sent_ns: now, ..PacketRateState::default() });
}

fn sack(sb: &mut Scoreboard, tp: &mut TcpCc, seq: u64) {
    let mut rs = RateSample::default();
    assert!(sb.tag_sacked(tp, seq, &mut rs).is_some());
}

/// The in-flight list from the oldest transmission.
fn in_flight(sb: &Scoreboard) -> Vec<u64> {
    let mut v = vec![];
    let mut cur = sb.oldest_in_flight();
    while let Some(s) = cur {
        v.push(s);
        cur = sb.sent_after(s);
    }
    v
}

#[test]
fn loss_events_follow_tcp_mark_skb_lost() {
    let (mut sb, mut tp, mut cc) = sent(4);
    sack(&mut sb, &mut tp, 3);
    // A segment in flight: newly lost, counted, the algorithm is told.
    assert!(sb.mark_lost(&mut tp, &mut cc, 0));
    assert_eq!((tp.lost_out, tp.lost, sb.flags(0) & F_LOST), (1, 1, F_LOST));
    // Marked again before its retransmission: already counted, nothing to tell.
    assert!(!sb.mark_lost(&mut tp, &mut cc, 0));
    assert_eq!((tp.lost_out, tp.lost), (1, 1));
    // Its retransmission is lost too: out of retrans_out, and a loss event (Linux
    // "Account for retransmits that are lost again"); still one lost segment.
    retransmit(&mut sb, &mut tp, 10, 0);
    assert_eq!(sb.flags(0) & (F_LOST | F_RETRANS), F_LOST | F_RETRANS);
    assert!(sb.mark_lost(&mut tp, &mut cc, 0));
    assert_eq!((tp.lost_out, tp.retrans_out, tp.lost), (1, 0, 1));
    assert_eq!(sb.flags(0) & F_RETRANS, 0);
    // A probe retransmission (R without L) that is lost: newly lost, out of retrans_out.
    retransmit(&mut sb, &mut tp, 11, 2);
    assert!(sb.mark_lost(&mut tp, &mut cc, 2));
    assert_eq!((tp.lost_out, tp.retrans_out, tp.lost), (2, 0, 2));
    // A SACKed segment is never lost.
    assert!(!sb.mark_lost(&mut tp, &mut cc, 3));
    assert_eq!(sb.flags(3) & (F_SACKED | F_LOST), F_SACKED);
    assert_eq!(in_flight(&sb), vec![1]);
    sb.check_invariants(&tp).unwrap();
}

#[test]
fn rto_marks_every_unsacked_segment_through_mark_lost() {
    let (mut sb, mut tp, mut cc) = sent(10);
    sack(&mut sb, &mut tp, 5);
    // Segment 2 lost (RACK) and retransmitted, segment 7 lost and waiting.
    assert!(sb.mark_lost(&mut tp, &mut cc, 2));
    retransmit(&mut sb, &mut tp, 20, 2);
    assert!(sb.mark_lost(&mut tp, &mut cc, 7));
    sb.timeout_mark_lost(&mut tp, &mut cc);
    assert_eq!((tp.sacked_out, tp.lost_out, tp.retrans_out, tp.lost), (1, 9, 0, 9));
    assert_eq!(in_flight(&sb), Vec::<u64>::new(), "nothing is in flight after an RTO");
    sb.check_invariants(&tp).unwrap();
    // The retransmit queue is rebuilt in sequence order, without the SACKed segment.
    let order: Vec<u64> = std::iter::from_fn(|| sb.next_lost()).collect();
    assert_eq!(order, vec![0, 1, 2, 3, 4, 6, 7, 8, 9]);
}

#[test]
fn retransmissions_after_an_rto_stay_in_the_in_flight_list() {
    // The RTO's marking used to leave F_LINKED on every segment it unlinked; the first
    // retransmission then emptied the list and each next one replaced it, so RACK saw only the
    // newest transmission.
    let (mut sb, mut tp, mut cc) = sent(6);
    sb.timeout_mark_lost(&mut tp, &mut cc);
    for (now, seq) in [(100, 0), (101, 1), (102, 2)] {
        assert_eq!(sb.next_lost(), Some(seq));
        retransmit(&mut sb, &mut tp, now, seq);
        sb.check_invariants(&tp).unwrap();
    }
    assert_eq!(in_flight(&sb), vec![0, 1, 2]);
    // The head is acknowledged; the other retransmissions remain, and RACK can mark one lost.
    let mut rs = RateSample::default();
    assert!(sb.ack_head(&mut tp, &mut rs).is_some());
    assert_eq!(in_flight(&sb), vec![1, 2]);
    assert!(sb.mark_lost(&mut tp, &mut cc, 1));
    assert_eq!(in_flight(&sb), vec![2]);
    sb.check_invariants(&tp).unwrap();
}

/// A segment is one cache line, and what `cc::rate` reads back is what it wrote: the snapshot's
/// send time and sequence number come from the segment itself.
#[test]
fn a_segment_keeps_its_rate_snapshot_in_one_cache_line() {
    assert_eq!(std::mem::size_of::<crate::scoreboard::Seg>(), 64);
    let mut sb = Scoreboard::new();
    let mut tp = TcpCc::new(crate::DEFAULT_MSS_BYTES, 10);
    for seq in 0..3u64 {
        tp.delivered = 100 + seq;
        tp.delivered_ce = 7;
        tp.lost = 3 + seq;
        tp.app_limited = seq;
        tp.packets_out += 1;
        let sent = cc::rate::on_packet_sent(&mut tp, 1_000 * seq + 5, seq, seq == 1, seq == 0);
        sb.on_send_new(1_000 * seq + 5, sent);
        assert_eq!(sb.rate_of(seq), sent);
    }
    // A retransmission replaces the snapshot; the list links survive the move to the tail.
    sb.on_retransmit(9_000, 1);
    let resent = cc::rate::on_packet_sent(&mut tp, 9_000, 1, true, false);
    sb.on_retransmitted(1, resent);
    assert_eq!(sb.rate_of(1), resent);
    assert_eq!(in_flight(&sb), vec![0, 2, 1]);
}
