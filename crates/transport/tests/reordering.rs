//! The endpoint on a wire that reorders (issue 30): segment i delivered after segment i + 3
//! with some probability. Linux's sender (RFC 8985 RACK with its adaptive reordering window,
//! RFC 2883 D-SACK, RFC 3708 / RFC 3522 undo) must repair reordering without RTOs, undo the
//! fast recoveries reordering triggers, and widen RACK's window so that later reorderings
//! cause fewer spurious retransmissions; real losses must still be repaired.

mod common;

use common::{sender, Reorder, Wire, MS, MSS};
use transport::receiver::ReceiverConfig;
use transport::SenderConfig;

/// What a run showed, with the retransmissions and reorderings per third of it.
struct Run {
    w: Wire,
    /// Retransmissions and reordered transmissions sent in each third of the run's sending time.
    retrans_thirds: [u64; 3],
    reordered_thirds: [u64; 3],
}

/// Packets that overtake a reordered one.
const DISPLACEMENT: u32 = 3;

/// `segs` segments of `cc` over a wire of `one_way_ms` and `rate_pps` without TSO, reordering
/// with probability `prob` by `DISPLACEMENT` packets (FIFO at 0), dropping the transmissions
/// `drop_tx`.
fn run(cc: &str, segs: u64, one_way_ms: u64, rate_pps: u64, prob: f64, drop_tx: Vec<u64>) -> Run {
    let cfg = SenderConfig { total_bytes: Some(segs * MSS), tso: false, ..Default::default() };
    let tx_ns = 1_000_000_000 / rate_pps;
    let mut w = Wire::new(sender(cc, cfg), ReceiverConfig::default(), one_way_ms * MS, tx_ns);
    if prob > 0.0 {
        // Held for the packets behind it, or 5 ms at most when the link is not busy.
        let max_hold_ns = (5 * MS).max(4 * tx_ns);
        w.reorder = Some(Reorder::new(prob, DISPLACEMENT, max_hold_ns, 0x5eed_1234));
    }
    w.drop_tx = drop_tx;
    w.run(120_000 * MS);
    let end = w.data_sent.last().unwrap().0 + 1;
    let third = |t: u64| ((t * 3) / end).min(2) as usize;
    let mut retrans_thirds = [0; 3];
    for &(t, _, r) in &w.data_sent {
        if r {
            retrans_thirds[third(t)] += 1;
        }
    }
    let mut reordered_thirds = [0; 3];
    for &t in &w.reordered_sent {
        reordered_thirds[third(t)] += 1;
    }
    Run { w, retrans_thirds, reordered_thirds }
}

/// Every retransmission on a lossless wire is spurious; the receiver reports each by a D-SACK.
fn assert_all_delivered(r: &Run, segs: u64) {
    assert!(r.w.sender.is_done(), "transfer stalled");
    assert_eq!(r.w.receiver.delivered_bytes, segs * MSS);
}

#[test]
fn reordering_by_three_is_repaired_without_rtos_and_every_recovery_is_undone() {
    for (cc, one_way_ms, rate_pps, prob) in
        [("cubic", 10, 10_000, 0.01), ("reno", 2, 500, 0.02), ("bbr", 10, 10_000, 0.01)]
    {
        let r = run(cc, 20_000, one_way_ms, rate_pps, prob, vec![]);
        let st = &r.w.sender.stats;
        let ctx = format!("{cc} {one_way_ms} ms {rate_pps} pps: {st:?}");
        assert_all_delivered(&r, 20_000);
        assert!(r.w.reordered_sent.len() > 150, "{ctx}");
        // (a) RACK repairs reordering without the RTO (nothing is lost).
        assert_eq!(st.rto_count, 0, "{ctx}");
        // (b) Reordering did trigger fast recoveries, and each was found spurious and undone,
        // by a timestamp echo or by D-SACKs.
        assert!(st.recoveries >= 1, "{ctx}");
        assert_eq!(st.spurious_undos, st.recoveries, "{ctx}");
        assert_eq!(st.undos_eifel + st.undos_dsack, st.spurious_undos, "{ctx}");
        // Every retransmission reached the receiver twice and was reported by a D-SACK.
        assert_eq!(st.dsack_recv_segs, st.retransmits, "{ctx}");
        assert_eq!(st.dsack_ignored_dubious, 0, "{ctx}");
        assert!(r.w.sender.reord_seen() > 0, "{ctx}");
        assert!(r.w.sender.reordering_segs() >= DISPLACEMENT, "{ctx}");
    }
}

#[test]
fn rack_widens_its_reordering_window_so_spurious_retransmissions_fall() {
    // Three packets at 500 packets/s take 6 ms, more than min_rtt/4 (~1.5 ms) on a 4-ms path:
    // until D-SACKs have widened reo_wnd, RACK marks the reordered segment lost.
    let r = run("cubic", 20_000, 2, 500, 0.02, vec![]);
    let st = &r.w.sender.stats;
    assert_all_delivered(&r, 20_000);
    let (first, last) = (r.retrans_thirds[0], r.retrans_thirds[2]);
    let per_event = |retrans: u64, reordered: u64| retrans as f64 / reordered as f64;
    assert!(first >= 2, "too few early spurious retransmissions to show adaptation: {st:?}");
    assert!(
        per_event(last, r.reordered_thirds[2]) < per_event(first, r.reordered_thirds[0]) / 4.0,
        "spurious retransmissions per reordering: first third {first}/{}, last {last}/{}",
        r.reordered_thirds[0],
        r.reordered_thirds[2]
    );
    // The window grew beyond one step of min_rtt/4, by D-SACK rounds (Linux
    // tcp_rack_update_reo_wnd), and stays open in recovery once reordering was seen.
    let quarter_min_rtt = r.w.sender.tp.min_rtt_ns / 4;
    let reo_wnd = r.w.sender.rack_reo_wnd_ns();
    assert!(reo_wnd > quarter_min_rtt, "reo_wnd {reo_wnd} ns, min_rtt/4 {quarter_min_rtt} ns");
    assert!(st.dsack_recv >= 2, "{st:?}");

    // On the fast path one step suffices: after the first reordering, none costs a
    // retransmission.
    let r = run("cubic", 20_000, 10, 10_000, 0.01, vec![]);
    assert_all_delivered(&r, 20_000);
    assert!(r.w.sender.rack_reo_wnd_ns() >= r.w.sender.tp.min_rtt_ns / 4);
    assert_eq!(r.retrans_thirds[1..], [0, 0], "{:?}", r.retrans_thirds);
}

#[test]
fn real_losses_are_still_repaired_on_a_reordering_path() {
    let drops: Vec<u64> = (1..40).map(|k| k * 487).collect();
    for cc in ["cubic", "bbr"] {
        let r = run(cc, 20_000, 10, 10_000, 0.01, drops.clone());
        let st = &r.w.sender.stats;
        assert_all_delivered(&r, 20_000);
        // Every dropped segment was resent.
        let resent = r.w.retransmissions();
        for &n in &drops {
            let seq = r.w.data_sent[n as usize].1;
            assert!(resent.contains(&seq), "{cc}: dropped segment {seq} never resent: {st:?}");
        }
        // Losses are not all undone: at least the recoveries they caused stand.
        assert!(st.recoveries > st.spurious_undos, "{cc}: {st:?}");
        assert_eq!(st.rto_count, 0, "{cc}: {st:?}");
    }
}

#[test]
fn a_segment_delayed_past_its_retransmission_is_undone_by_dsack() {
    // FIFO but for one segment held 30 ms on a 10-ms path: RACK resends it, the
    // retransmission fills the hole (its timestamp echo is no older than itself, so Eifel
    // cannot tell), then the original arrives: the receiver D-SACKs it below the cumulative
    // ACK, which shows the only retransmission of the episode was spurious (RFC 3708). A
    // receive window below the BDP keeps the queue empty, so the retransmission does overtake.
    let cfg = SenderConfig { total_bytes: Some(3_000 * MSS), tso: false, ..Default::default() };
    let rcv = ReceiverConfig { rcvbuf_bytes: Some(40 * MSS), ..Default::default() };
    let mut w = Wire::new(sender("reno", cfg), rcv, 10 * MS, 100_000);
    w.delay_tx = Some((1_000, 30 * MS));
    w.run(5_000 * MS);
    let st = &w.sender.stats;
    assert!(w.sender.is_done());
    assert_eq!(w.retransmissions().len(), 1, "{st:?}");
    assert_eq!((st.recoveries, st.dsack_recv, st.dsack_recv_segs), (1, 1, 1), "{st:?}");
    assert_eq!((st.undos_dsack, st.undos_eifel, st.rto_count), (1, 0, 0), "{st:?}");
    assert_eq!(w.receiver.dsacks_sent, 1);
}

#[test]
fn fifo_paths_see_no_reordering_and_no_dsack() {
    let r = run("cubic", 20_000, 10, 10_000, 0.0, vec![487, 974]);
    let st = &r.w.sender.stats;
    assert_all_delivered(&r, 20_000);
    assert_eq!((st.sack_reorder, st.ts_reorder, st.dsack_recv, st.spurious_undos), (0, 0, 0, 0));
    assert_eq!(r.w.sender.reord_seen(), 0);
    assert_eq!(r.w.sender.reordering_segs(), 3);
    assert_eq!(r.w.receiver.dsacks_sent, 0);
}
