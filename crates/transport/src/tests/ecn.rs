//! The sender's ECN reaction (CWR) on a wire with a marking queue: fixed one-way delay, one
//! bottleneck serializing `tx_ns` per data packet, CE on arrival when more than `k` packets wait.

use crate::receiver::ReceiverConfig;
use crate::*;
use cc::{CaState, Cc, CcKind, Nanos};
use std::collections::VecDeque;

struct Wire {
    now: Nanos,
    s: Sender,
    r: Receiver,
    fwd: VecDeque<(Nanos, Packet)>,
    rev: VecDeque<(Nanos, Packet)>,
    one_way: Nanos,
    tx_ns: Nanos,
    /// Departure times of packets in the bottleneck (queue + serializer).
    departures: VecDeque<Nanos>,
    k: usize,
    /// Mark only data sent in [from, to) (ns); None = by the queue rule.
    mark_window: Option<(Nanos, Nanos)>,
}

impl Wire {
    fn new(cc: &str, ecn: bool, ce_state_ack: bool, k: usize) -> Wire {
        let algo = Cc::new(&CcKind::from_name(cc).unwrap(), 1);
        let mut s = Sender::new(SenderConfig { tso: false, ecn, ..Default::default() }, algo);
        s.start(0);
        Wire {
            now: 0,
            s,
            r: Receiver::new(ReceiverConfig { ce_state_ack, ..Default::default() }),
            fwd: VecDeque::new(),
            rev: VecDeque::new(),
            one_way: 500_000,
            tx_ns: 12_000, // ≈ 1 Gbit/s for 1538-byte frames
            departures: VecDeque::new(),
            k,
            mark_window: None,
        }
    }

    fn pump(&mut self) {
        while let Some(mut p) = self.s.poll_transmit(self.now) {
            while self.departures.front().is_some_and(|&d| d <= self.now) {
                self.departures.pop_front();
            }
            let waiting = self.departures.len().saturating_sub(1);
            let mark = match self.mark_window {
                Some((a, b)) => self.now >= a && self.now < b,
                None => waiting > self.k,
            };
            if mark && p.ect {
                p.ce = true;
            }
            let start = self.departures.back().copied().unwrap_or(0).max(self.now);
            let dep = start + self.tx_ns;
            self.departures.push_back(dep);
            self.fwd.push_back((dep + self.one_way, p));
        }
    }

    /// Run until `end`, calling `on_ack(sender)` after each ACK.
    fn run(&mut self, end: Nanos, mut on_ack: impl FnMut(&Sender, CaState)) {
        self.pump();
        loop {
            let tf = self.fwd.front().map(|x| x.0);
            let tr = self.rev.front().map(|x| x.0);
            let ts = self.s.next_timeout();
            let trt = self.r.next_timeout();
            let Some(t) = [tf, tr, ts, trt].into_iter().flatten().min() else { break };
            if t > end {
                break;
            }
            self.now = t.max(self.now);
            if tf == Some(t) {
                let (_, p) = self.fwd.pop_front().unwrap();
                let a = self.r.on_data(self.now, &p);
                if let Some(x) = self.r.take_pending_ack() {
                    self.rev.push_back((self.now + self.one_way, x));
                }
                if let Some(a) = a {
                    self.rev.push_back((self.now + self.one_way, a));
                }
            } else if tr == Some(t) {
                let (_, a) = self.rev.pop_front().unwrap();
                let before = self.s.tp.ca_state;
                self.s.on_ack(self.now, &a);
                on_ack(&self.s, before);
            } else if trt == Some(t) {
                if let Some(a) = self.r.on_timeout(self.now) {
                    self.rev.push_back((self.now + self.one_way, a));
                }
            } else {
                self.s.on_timeout(self.now);
            }
            self.pump();
        }
    }
}

/// Per CWR episode: (snd_una, snd_nxt, prior_cwnd, ssthresh, alpha) at entry.
type Entry = (u64, u64, u32, u32, f64);

#[test]
fn dctcp_cuts_by_alpha_over_two_once_per_window_and_prr_reaches_ssthresh() {
    let mut w = Wire::new("dctcp", false, true, 20);
    assert!(w.s.tp.ecn_ok, "DCTCP turns ECN on");
    let mut entries: Vec<Entry> = Vec::new();
    let mut exits: Vec<(u32, u32)> = Vec::new();
    w.run(2_000_000_000, |s, before| {
        let st = s.cc.sample(&s.tp);
        if before != CaState::Cwr && s.tp.ca_state == CaState::Cwr {
            entries.push((s.snd_una(), s.snd_nxt(), s.tp.prior_cwnd, s.tp.snd_ssthresh, st.ecn_alpha));
        }
        if before == CaState::Cwr && s.tp.ca_state != CaState::Cwr {
            exits.push((s.tp.snd_cwnd, s.tp.snd_ssthresh));
        }
    });
    assert!(entries.len() > 50, "only {} ECN reductions in 2 s", entries.len());
    assert_eq!(w.s.stats.retransmits, 0, "a marking queue with K ≪ buffer should not lose");
    for pair in entries.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        // The next reduction only after the whole window outstanding at this one was acked.
        assert!(b.0 > a.1, "reduction at snd_una {} inside the window [.., {}) of the previous one", b.0, a.1);
    }
    for &(_, _, prior, ss, alpha) in &entries {
        // RFC 8257 §3.3: cwnd ← cwnd·(1 − alpha/2) (Linux floors the cut, min 2).
        let want = (prior as f64 * (1.0 - alpha / 2.0)).max(2.0);
        assert!((ss as f64 - want).abs() <= 1.0, "ssthresh {ss} after cwnd {prior}, alpha {alpha}: want {want:.1}");
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
    let mut w = Wire::new("reno", true, false, usize::MAX);
    w.mark_window = Some((100_000_000, 102_000_000));
    let mut n = 0;
    w.run(400_000_000, |s, before| {
        if before != CaState::Cwr && s.tp.ca_state == CaState::Cwr {
            n += 1;
        }
    });
    assert!(w.s.tp.delivered_ce > 10, "the marks reached the sender ({})", w.s.tp.delivered_ce);
    assert_eq!(n, 1, "{n} reductions for one burst of marks");
}
