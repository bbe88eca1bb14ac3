//! Shared by the transport's integration tests: the wire constants (the transport's own) and one
//! programmable two-way wire on which a `Sender` and a `Receiver` talk.
//!
//! The wire: data packets cross one bottleneck that serializes each in `tx_ns` (a FIFO queue in
//! front of it), then a fixed one-way delay; ACKs take the fixed delay back. It can drop given
//! data transmissions, delay one, freeze the forward link (a PAUSE storm), black-hole ACKs for a
//! while, and CE-mark ECT packets (when more than `mark_above_pkts` wait, or all sent in a time
//! window). Events are processed in time order; the sender's scoreboard invariants are checked
//! after every ACK.
//!
//! Reordering (`Wire::reorder`): each data transmission is, with a given probability, held at
//! the receiving end until `displacement` later packets have arrived (segment i is delivered
//! after segment i + displacement), or for at most `max_hold_ns` when fewer follow (a tail, a
//! paced or idle link). Without it the wire is FIFO.

#![allow(dead_code)]

use cc::{CaState, Cc, CcKind};
use std::collections::VecDeque;
use transport::receiver::ReceiverConfig;
use transport::{
    Packet, Receiver, Sender, SenderConfig, DEFAULT_MSS_BYTES, ETHERNET_OVERHEAD_BYTES,
    TCP_IP_HEADER_BYTES,
};

pub const MS: u64 = 1_000_000;
/// Payload bytes per full segment (the transport's default MSS).
pub const MSS: u64 = DEFAULT_MSS_BYTES as u64;
/// Wire bytes per full data segment: payload + TCP/IP with timestamps + Ethernet framing.
pub const WIRE: u64 = MSS + TCP_IP_HEADER_BYTES as u64 + ETHERNET_OVERHEAD_BYTES as u64;

/// A sender running `cc`, seeded with nothing (no handshake RTT), started at 0.
pub fn sender(cc: &str, cfg: SenderConfig) -> Sender {
    let algo = Cc::new(&CcKind::from_name(cc).unwrap_or_else(|| panic!("unknown cc {cc}")), 1);
    let mut s = Sender::new(cfg, algo);
    s.start(0);
    s
}

/// The reordering channel's parameters and its deterministic random draws.
pub struct Reorder {
    /// Probability, per data transmission, that it is overtaken.
    pub prob: f64,
    /// How many later packets overtake it.
    pub displacement: u32,
    /// The longest it is held waiting for them.
    pub max_hold_ns: u64,
    /// xorshift64 state.
    pub rng: u64,
}

impl Reorder {
    pub fn new(prob: f64, displacement: u32, max_hold_ns: u64, seed: u64) -> Reorder {
        Reorder { prob, displacement, max_hold_ns, rng: seed | 1 }
    }

    fn draw(&mut self) -> bool {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        ((self.rng >> 11) as f64 / (1u64 << 53) as f64) < self.prob
    }
}

/// A packet held back by the reordering channel.
struct Held {
    /// Later packets still to arrive before it.
    behind: u32,
    /// Released then at the latest.
    deadline: u64,
    packet: Packet,
}

pub struct Wire {
    pub now: u64,
    pub sender: Sender,
    pub receiver: Receiver,
    /// (arrival time, packet, to be overtaken) forward; (arrival time, packet) back.
    fwd: VecDeque<(u64, Packet, bool)>,
    rev: VecDeque<(u64, Packet)>,
    pub one_way_ns: u64,
    /// Serialization time per data packet (sets the bottleneck rate).
    pub tx_ns: u64,
    /// Departure times of the packets in the bottleneck (queue + serializer), oldest first.
    departures: VecDeque<u64>,
    /// Data transmissions (by order of sending, counting from 0) to drop.
    pub drop_tx: Vec<u64>,
    /// Extra delay for a given data transmission number.
    pub delay_tx: Option<(u64, u64)>,
    /// The forward link is frozen: nothing starts serializing between these times.
    freeze: Option<(u64, u64)>,
    pub drop_all_acks_until: u64,
    /// CE-mark an ECT packet arriving when more than this many packets wait (usize::MAX: never).
    pub mark_above_pkts: usize,
    /// Instead: CE-mark every ECT packet sent in [from, to) ns.
    pub mark_window: Option<(u64, u64)>,
    pub tx_count: u64,
    /// (time, seq, is_retrans) of every data transmission.
    pub data_sent: Vec<(u64, u64, bool)>,
    /// Reordering channel (None: FIFO).
    pub reorder: Option<Reorder>,
    held: Vec<Held>,
    /// Send times of the transmissions the channel reordered.
    pub reordered_sent: Vec<u64>,
}

impl Wire {
    pub fn new(sender: Sender, receiver: ReceiverConfig, one_way_ns: u64, tx_ns: u64) -> Wire {
        Wire {
            now: 0,
            sender,
            receiver: Receiver::new(receiver),
            fwd: VecDeque::new(),
            rev: VecDeque::new(),
            one_way_ns,
            tx_ns,
            departures: VecDeque::new(),
            drop_tx: vec![],
            delay_tx: None,
            freeze: None,
            drop_all_acks_until: 0,
            mark_above_pkts: usize::MAX,
            mark_window: None,
            tx_count: 0,
            data_sent: vec![],
            reorder: None,
            held: vec![],
            reordered_sent: vec![],
        }
    }

    /// Freeze the forward link for `dur_ns` from now (an 802.3x PAUSE storm): nothing starts
    /// serializing until then, and what is already on the way arrives that much later.
    pub fn freeze_forward(&mut self, dur_ns: u64) {
        self.freeze = Some((self.now, self.now + dur_ns));
        for (t, _, _) in self.fwd.iter_mut() {
            *t += dur_ns;
        }
        for d in self.departures.iter_mut() {
            *d += dur_ns;
        }
    }

    fn pump(&mut self) {
        while let Some(mut p) = self.sender.poll_transmit(self.now) {
            let n = self.tx_count;
            self.tx_count += 1;
            self.data_sent.push((self.now, p.seq, p.is_retrans));
            while self.departures.front().is_some_and(|&d| d <= self.now) {
                self.departures.pop_front();
            }
            let waiting = self.departures.len().saturating_sub(1);
            let mark = match self.mark_window {
                Some((a, b)) => self.now >= a && self.now < b,
                None => waiting > self.mark_above_pkts,
            };
            if mark && p.ecn.is_ect() {
                p.ecn = transport::Ecn::Ce;
            }
            let mut start = self.departures.back().copied().unwrap_or(0).max(self.now);
            if let Some((a, b)) = self.freeze {
                if start >= a && start < b {
                    start = b;
                }
            }
            let departure = start + self.tx_ns;
            self.departures.push_back(departure);
            if self.drop_tx.contains(&n) {
                continue;
            }
            let extra = match self.delay_tx {
                Some((k, d)) if k == n => d,
                _ => 0,
            };
            let t = departure + self.one_way_ns + extra;
            let overtaken = self.reorder.as_mut().is_some_and(|r| r.draw());
            if overtaken {
                self.reordered_sent.push(self.now);
            }
            // Keep the queue sorted by arrival (a delayed packet is overtaken).
            let pos = self.fwd.partition_point(|(a, _, _)| *a <= t);
            self.fwd.insert(pos, (t, p, overtaken));
        }
    }

    /// Run until `end_ns`, processing events in time order.
    pub fn run(&mut self, end_ns: u64) {
        self.run_with(end_ns, |_, _| {});
    }

    /// Run until `end_ns`, calling `on_ack(sender, state before the ACK)` after each ACK.
    pub fn run_with(&mut self, end_ns: u64, mut on_ack: impl FnMut(&Sender, CaState)) {
        self.pump();
        loop {
            let tf = self.fwd.front().map(|x| x.0);
            let tr = self.rev.front().map(|x| x.0);
            let ts = self.sender.next_timeout();
            let trt = self.receiver.next_timeout();
            let th = self.held.iter().map(|h| h.deadline).min();
            let Some(t) = [tf, tr, ts, trt, th].into_iter().flatten().min() else { break };
            if t > end_ns {
                break;
            }
            self.now = t.max(self.now);
            if tf == Some(t) {
                let (_, p, overtaken) = self.fwd.pop_front().unwrap();
                if overtaken {
                    let r = self.reorder.as_ref().unwrap();
                    let (behind, deadline) = (r.displacement, self.now + r.max_hold_ns);
                    self.held.push(Held { behind, deadline, packet: p });
                } else {
                    self.deliver(p);
                    for h in self.held.iter_mut() {
                        h.behind -= 1;
                    }
                    self.release_held(|h| h.behind == 0);
                }
            } else if th == Some(t) {
                let now = self.now;
                self.release_held(|h| h.deadline <= now);
            } else if tr == Some(t) {
                let (_, a) = self.rev.pop_front().unwrap();
                let before = self.sender.tp.ca_state;
                self.sender.on_ack(self.now, &a);
                self.sender.check_invariants().unwrap();
                on_ack(&self.sender, before);
            } else if trt == Some(t) {
                if let Some(a) = self.receiver.on_timeout(self.now) {
                    self.send_ack(a);
                }
            } else {
                self.sender.on_timeout(self.now);
            }
            self.pump();
        }
        self.now = end_ns;
    }

    fn deliver(&mut self, p: Packet) {
        let a = self.receiver.on_data(self.now, &p);
        if let Some(first) = self.receiver.take_pending_ack() {
            self.send_ack(first);
        }
        if let Some(a) = a {
            self.send_ack(a);
        }
    }

    /// Deliver the held packets `due` picks, in the order they were held.
    fn release_held(&mut self, due: impl Fn(&Held) -> bool) {
        let (now_due, rest): (Vec<Held>, Vec<Held>) = self.held.drain(..).partition(|h| due(h));
        self.held = rest;
        for h in now_due {
            self.deliver(h.packet);
        }
    }

    fn send_ack(&mut self, a: Packet) {
        if self.now < self.drop_all_acks_until {
            return;
        }
        self.rev.push_back((self.now + self.one_way_ns, a));
    }

    /// Sequence numbers of the retransmissions, in order.
    pub fn retransmissions(&self) -> Vec<u64> {
        self.data_sent.iter().filter(|x| x.2).map(|x| x.1).collect()
    }
}
