//! The sender's ECN reaction (CWR) on a wire with a marking queue: fixed one-way delay, one
//! bottleneck serializing each data packet, CE on arrival when more than K packets wait.

mod common;

use cc::CaState;
use common::{sender, Wire, MS};
use transport::receiver::ReceiverConfig;
use transport::{EcnMode, SenderConfig};

/// `cc` (without TSO) over 0.5 ms each way and a ≈ 1 Gbit/s bottleneck (12 µs per frame) that
/// marks ECT packets arriving when more than `k` packets wait.
fn wire(cc: &str, ecn: bool, ce_state_ack: bool, k: usize) -> Wire {
    let ecn = if ecn { EcnMode::Ect0 } else { EcnMode::Off };
    let s = sender(cc, SenderConfig { tso: false, ecn, ..Default::default() });
    let mut w = Wire::new(s, ReceiverConfig { ce_state_ack, ..Default::default() }, MS / 2, 12_000);
    w.mark_above_pkts = k;
    w
}

/// Per CWR episode: (snd_una, snd_nxt, prior_cwnd, ssthresh, alpha) at entry.
type Entry = (u64, u64, u32, u32, f64);

#[test]
fn dctcp_cuts_by_alpha_over_two_once_per_window_and_prr_reaches_ssthresh() {
    let mut w = wire("dctcp", false, true, 20);
    assert!(w.sender.tp.ecn_ok, "DCTCP turns ECN on");
    let mut entries: Vec<Entry> = Vec::new();
    let mut exits: Vec<(u32, u32)> = Vec::new();
    w.run_with(2_000_000_000, |s, before| {
        let st = s.cc.sample(&s.tp);
        if before != CaState::Cwr && s.tp.ca_state == CaState::Cwr {
            entries.push((
                s.snd_una(),
                s.snd_nxt(),
                s.tp.prior_cwnd,
                s.tp.snd_ssthresh,
                st.ecn_alpha,
            ));
        }
        if before == CaState::Cwr && s.tp.ca_state != CaState::Cwr {
            exits.push((s.tp.snd_cwnd, s.tp.snd_ssthresh));
        }
    });
    assert!(entries.len() > 50, "only {} ECN reductions in 2 s", entries.len());
    assert_eq!(w.sender.stats.retransmits, 0, "a marking queue with K ≪ buffer should not lose");
    for pair in entries.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        // The next reduction only after the whole window outstanding at this one was acked.
        assert!(
            b.0 > a.1,
            "reduction at snd_una {} inside the window [.., {}) of the previous one",
            b.0,
            a.1
        );
    }
    for &(_, _, prior, ss, alpha) in &entries {
        // RFC 8257 §3.3: cwnd ← cwnd·(1 − alpha/2) (Linux floors the cut, min 2).
        let want = (prior as f64 * (1.0 - alpha / 2.0)).max(2.0);
        assert!(
            (ss as f64 - want).abs() <= 1.0,
            "ssthresh {ss} after cwnd {prior}, alpha {alpha}: want {want:.1}"
        );
    }
    // Converged alpha is far below 1 (a Reno-sized cut would be alpha = 1).
    let late: Vec<f64> = entries.iter().skip(entries.len() / 2).map(|e| e.4).collect();
    let mean_alpha = late.iter().sum::<f64>() / late.len() as f64;
    assert!(mean_alpha < 0.6, "alpha {mean_alpha}");
    // PRR ends the reduction with cwnd at ssthresh (RFC 9937 §6; +1 for this ACK's growth).
    for &(cwnd, ss) in &exits {
        assert!(cwnd <= ss + 1, "CWR ended with cwnd {cwnd} above ssthresh {ss}");
    }
}

#[test]
fn one_burst_of_marks_gives_exactly_one_reduction() {
    // Reno with classic ECN; every packet sent during 2 ms is marked (about two windows' worth
    // of ACKs carry CE), then nothing. Marks on the window already reduced for must not cause
    // a second reduction one RTT later (RFC 3168 §6.1.2).
    let mut w = wire("reno", true, false, usize::MAX);
    w.mark_window = Some((100_000_000, 102_000_000));
    let mut n = 0;
    w.run_with(400_000_000, |s, before| {
        if before != CaState::Cwr && s.tp.ca_state == CaState::Cwr {
            n += 1;
        }
    });
    assert!(
        w.sender.tp.delivered_ce > 10,
        "the marks reached the sender ({})",
        w.sender.tp.delivered_ce
    );
    assert_eq!(n, 1, "{n} reductions for one burst of marks");
}
