//! The receiver's ACK policy: DCTCP's CE-state ACKs, faster ACKs, application reads and
//! message-boundary answers.

use crate::receiver::*;
use crate::{Ecn, Packet, DEFAULT_MSS_BYTES};
use cc::Nanos;

const MSS: u32 = DEFAULT_MSS_BYTES;

fn seg(seq: u64, ce: bool) -> Packet {
    let mut p = Packet::empty(0);
    p.is_data = true;
    p.seq = seq;
    p.payload_bytes = MSS;
    p.ecn = if ce { Ecn::Ce } else { Ecn::Ect0 };
    p
}

/// Past the quick-ACK phase, so that ACKs are delayed (every second segment).
fn warmed(ce_state_ack: bool) -> Receiver {
    let mut r = Receiver::new(ReceiverConfig { ce_state_ack, ..Default::default() });
    for s in 0..QUICKACKS as u64 {
        assert!(r.on_data(0, &seg(s, false)).is_some());
    }
    r
}

#[test]
fn dctcp_receiver_acks_at_once_on_a_ce_change_and_flushes_the_delayed_ack_first() {
    let mut r = warmed(true);
    let n = QUICKACKS as u64;
    // One unmarked segment: delayed.
    assert!(r.on_data(1, &seg(n, false)).is_none());
    assert!(r.next_timeout().is_some());
    // A CE segment: the delayed ACK of the unmarked one goes first (covering it, no CE),
    // then an immediate ACK covering the CE segment.
    let a = r.on_data(2, &seg(n + 1, true)).expect("immediate ACK on CE change");
    let first = r.take_pending_ack().expect("the delayed ACK of the prior CE state");
    assert_eq!((first.ack, first.ce_count), (n + 1, 0));
    assert_eq!((a.ack, a.ce_count), (n + 2, 1));
    // Same state: back to every second segment.
    assert!(r.on_data(3, &seg(n + 2, true)).is_none());
    let a = r.on_data(4, &seg(n + 3, true)).expect("second segment");
    assert_eq!((a.ack, a.ce_count), (n + 4, 3));
    assert!(r.take_pending_ack().is_none());
    // CE → not CE with nothing pending: a single immediate ACK.
    let a = r.on_data(5, &seg(n + 4, false)).expect("immediate ACK on CE change");
    assert_eq!((a.ack, a.ce_count), (n + 5, 3));
    assert!(r.take_pending_ack().is_none());

    // Without the DCTCP state machine the CE segment is just a second segment.
    let mut r = warmed(false);
    assert!(r.on_data(1, &seg(n, false)).is_none());
    let a = r.on_data(2, &seg(n + 1, true)).unwrap();
    assert!(r.take_pending_ack().is_none());
    assert_eq!((a.ack, a.ce_count), (n + 2, 1));
    assert!(r.on_data(3, &seg(n + 2, false)).is_none());
}

#[test]
fn window_override_limits_the_window_and_never_pulls_the_right_edge_back() {
    let mut r = warmed(false);
    let n = QUICKACKS as u64;
    assert_eq!(r.make_ack(0).rwnd_end, u64::MAX);
    r.set_window_override(Some(10 * MSS as u64));
    assert_eq!(r.make_ack(0).rwnd_end, n + 10);
    // Shrinking the window to 2 segments: the edge stays at n + 10 until the left edge
    // has advanced past n + 8.
    r.set_window_override(Some(2 * MSS as u64));
    assert_eq!(r.make_ack(0).rwnd_end, n + 10);
    for s in n..n + 9 {
        r.on_data(0, &seg(s, false));
    }
    assert_eq!(r.make_ack(0).rwnd_end, n + 11);
    // A window below one segment still offers one.
    r.set_window_override(Some(100));
    assert_eq!(r.window_bytes(), MSS as u64);
    r.set_window_override(None);
    assert_eq!(r.make_ack(0).rwnd_end, u64::MAX);
}

/// A receiver past quick-ACK mode with a clamped buffer and an application that reads
/// `delay` after data arrives.
fn clamped(faster_acks: bool, delay: Option<Nanos>) -> Receiver {
    let mut r = Receiver::new(ReceiverConfig {
        rcvbuf_bytes: Some(20 * MSS as u64),
        faster_acks,
        app_read_delay_ns: delay,
        ..Default::default()
    });
    for s in 0..QUICKACKS as u64 {
        assert!(r.on_data(0, &seg(s, false)).is_some());
    }
    if delay.is_some() {
        // The application catches up (its read may ACK to reopen the window).
        let _ = r.on_timeout(r.next_timeout().unwrap());
        assert_eq!(r.unread_bytes, 0);
        let _ = r.make_ack(0);
    }
    r
}

#[test]
fn old_linux_rule_withholds_the_second_segment_ack_until_the_application_reads() {
    let n = QUICKACKS as u64;
    let t0 = 1_000_000;
    let mut r = clamped(false, Some(50_000));
    let reads_before = r.acks_on_read;
    assert!(r.on_data(t0, &seg(n, false)).is_none());
    // Two full segments unacknowledged, but the unread data shrank the window below the one
    // offered last: no ACK (condition (2) fails).
    assert!(r.on_data(t0 + 1, &seg(n + 1, false)).is_none(), "old rule must withhold");
    assert!(r.on_data(t0 + 2, &seg(n + 2, false)).is_none());
    assert!(r.acks_withheld >= 2);
    // The application's read releases the ACK (tcp_cleanup_rbuf), long before the 40 ms timer.
    let t = r.next_timeout().unwrap();
    assert_eq!(t, t0 + 50_000);
    let a = r.on_timeout(t).expect("ACK released by the application's read");
    assert_eq!(a.ack, n + 3);
    assert_eq!(a.rwnd_end, n + 3 + 20, "the read freed the whole buffer");
    assert_eq!(r.acks_on_read, reads_before + 1);
}

#[test]
fn faster_acks_ack_every_second_segment_even_when_the_window_shrinks() {
    let n = QUICKACKS as u64;
    let t0 = 1_000_000;
    let mut r = clamped(true, Some(50_000));
    assert!(r.on_data(t0, &seg(n, false)).is_none());
    let a = r.on_data(t0 + 1, &seg(n + 1, false)).expect("every second segment");
    assert_eq!(a.ack, n + 2);
    assert_eq!(a.rwnd_end, n + 2 + 18, "two unread segments occupy the buffer");
    assert!(r.on_data(t0 + 2, &seg(n + 2, false)).is_none());
    assert!(r.on_data(t0 + 3, &seg(n + 3, false)).is_some());
    assert_eq!(r.acks_withheld, 0);
}

#[test]
fn old_rule_still_acks_every_second_segment_when_the_application_reads_at_once() {
    // The window does not shrink when data is read on arrival: the check passes.
    let n = QUICKACKS as u64;
    let mut r = clamped(false, None);
    assert!(r.on_data(1, &seg(n, false)).is_none());
    assert!(r.on_data(2, &seg(n + 1, false)).is_some());
    assert_eq!(r.acks_withheld, 0);
}

#[test]
fn a_complete_message_is_answered_and_acked_when_read() {
    let n = QUICKACKS as u64;
    let mut r = Receiver::new(ReceiverConfig { msg_segs: Some(n + 3), ..Default::default() });
    for s in 0..n {
        assert!(r.on_data(0, &seg(s, false)).is_some());
    }
    assert!(r.on_data(1, &seg(n, false)).is_none());
    assert!(r.on_data(2, &seg(n + 1, false)).is_some());
    // The last segment of the message: answered at once instead of a 40 ms delayed ACK.
    let a = r.on_data(3, &seg(n + 2, false)).expect("message answered");
    assert_eq!(a.ack, n + 3);
}

/// Linux receive-window autotuning, against what the emulator's kernel (6.18) did with one CUBIC
/// flow at 10 Mbit/s × 40 ms (docs/queues.md, tcpdump at the receiver): the window stays at
/// 629 × 128 = 80 512 bytes for the first two rounds (10 and 20 segments), ACKed every segment
/// for the 16 quick ACKs and every second one after; in the third round autotuning raises the
/// buffer, and from then on every segment grows the window by 2 × 1448 bytes and is ACKed at
/// once; the window's right edge never moves back.
#[test]
fn autotuning_acks_every_segment_while_the_window_grows_as_the_kernel_did() {
    const MS: Nanos = 1_000_000;
    let mut r = Receiver::new(ReceiverConfig { autotune: true, ..Default::default() });
    assert_eq!(r.establish(0, 40 * MS), Some(45), "SYN-ACK: 65 160 bytes");
    // Data arrives 1.23 ms apart (10 Mbit/s), in rounds of 10, 20 and 40 segments starting
    // 40 ms apart; segments of round k echo an ACK sent 40 ms before they arrive.
    let mut acks_per_round = Vec::new();
    let mut last_edge = 0;
    let mut seq = 0;
    for (round, n) in [10u64, 20, 40].into_iter().enumerate() {
        let start = 40 * MS * (round as u64 + 1);
        let mut acks = Vec::new();
        for i in 0..n {
            let now = start + i * 1_230_000;
            let mut s = seg(seq, false);
            s.ack = now - 40 * MS;
            seq += 1;
            if let Some(a) = r.on_data(now, &s) {
                assert!(a.rwnd_end >= last_edge, "the right edge never moves back");
                last_edge = a.rwnd_end;
                acks.push((a.ack, a.rwnd_end - a.ack));
            }
        }
        acks_per_round.push(acks);
    }
    // Rounds 1-2: 16 quick ACKs, then every second segment; the window is 55 segments.
    assert_eq!(acks_per_round[0].len(), 10);
    assert_eq!(acks_per_round[1].len(), 6 + 7);
    assert!(acks_per_round[1].iter().all(|&(_, w)| w == 55), "{:?}", acks_per_round[1]);
    // Round 3: its first segment finds the buffer as it was (the window grows on arrival, the
    // buffer when the application reads); from the second on, autotuning has grown the buffer
    // (20 segments read in the last round against 10), and each segment grows the window by two
    // and is ACKed at once — but for one that finds the window at the new clamp before the next
    // read grows the buffer again.
    let r3 = &acks_per_round[2];
    assert_eq!(r3.len(), 39, "{r3:?}");
    assert_eq!(r3[0], (32, 57), "{r3:?}");
    let steps: Vec<u64> = r3.windows(2).map(|w| w[1].1 - w[0].1).collect();
    assert_eq!(steps.iter().filter(|&&d| d == 2).count(), 37, "{r3:?}");
    // Once the window has caught up with the buffer, back to every second segment.
    let (clamp, mss) = (r.rcv_space.window_clamp_bytes, u64::from(MSS));
    let mut now = 200 * MS;
    let mut acked = 0;
    for _ in 0..(clamp / mss) {
        let mut s = seg(seq, false);
        s.ack = now - 40 * MS;
        seq += 1;
        now += 1_230_000;
        acked += r.on_data(now, &s).is_some() as u64;
    }
    assert_eq!(r.rcv_space.rcv_ssthresh_bytes, r.rcv_space.window_clamp_bytes);
    let tail: Vec<bool> = (0..10)
        .map(|_| {
            let mut s = seg(seq, false);
            s.ack = now - 40 * MS;
            seq += 1;
            now += 1_230_000;
            r.on_data(now, &s).is_some()
        })
        .collect();
    assert!(acked > 0);
    assert_eq!(tail.iter().filter(|&&a| a).count(), 5, "every second segment: {tail:?}");
}

/// A receiver whose buffer is set (SO_RCVBUF) does not autotune.
#[test]
fn a_set_receive_buffer_turns_autotuning_off() {
    let cfg = ReceiverConfig { autotune: true, rcvbuf_bytes: Some(100_000), ..Default::default() };
    let mut r = Receiver::new(cfg);
    assert_eq!(r.establish(0, 1_000_000), None);
    assert_eq!(r.make_ack(0).rwnd_end, 100_000 / u64::from(MSS));
}
