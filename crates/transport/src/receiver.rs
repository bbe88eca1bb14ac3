//! The receiving half of a connection: reassembly, SACK generation, delayed ACKs, window, ECN echo.
//!
//! ACK policy as Linux `__tcp_ack_snd_check`: ACK at once when more than one full segment is
//! unacknowledged (every second segment), when in quick-ACK mode (the first 16 segments of a
//! connection, Linux `TCP_MAX_QUICKACKS`), when data arrives out of order or fills a hole, and when
//! a duplicate arrives; otherwise arm the delayed-ACK timer (40 ms, Linux `TCP_DELACK_MIN`).
//! Linux also requires that the offered window not shrink before ACKing every second segment;
//! seed 001's "faster ACKs" fix removed that check. Our receiver window only grows, so the rule
//! behaves as after the fix.

use crate::{Packet, ETHERNET_OVERHEAD_BYTES, MAX_SACK_BLOCKS, TCP_IP_HEADER_BYTES};
use cc::{Nanos, NSEC_PER_MSEC};

/// Linux TCP_DELACK_MIN.
pub const DELACK_NS: Nanos = 40 * NSEC_PER_MSEC;
/// Linux TCP_MAX_QUICKACKS.
pub const QUICKACKS: u32 = 16;

#[derive(Clone, Debug)]
pub struct ReceiverConfig {
    pub mss: u32,
    /// Receive buffer: the largest window advertised, bytes (None = unlimited).
    pub rcvbuf_bytes: Option<u64>,
    pub delayed_ack: bool,
}

impl Default for ReceiverConfig {
    fn default() -> Self {
        ReceiverConfig { mss: 1448, rcvbuf_bytes: None, delayed_ack: true }
    }
}

pub struct Receiver {
    pub cfg: ReceiverConfig,
    /// Next expected segment.
    pub rcv_nxt: u64,
    /// Out-of-order ranges [start, end) above rcv_nxt, sorted, disjoint, non-adjacent.
    ooo: Vec<(u64, u64)>,
    ooo_segs: u64,
    /// A short (final) segment held out of order: (seq, payload bytes). Only the last segment
    /// of a stream can be shorter than the MSS.
    ooo_short: Option<(u64, u32)>,
    /// Starts of the SACK blocks reported last, most recent first.
    recent: [u64; MAX_SACK_BLOCKS],
    n_recent: usize,
    /// RFC 7323 TS.Recent.
    ts_recent: Nanos,
    /// Segments received since the last ACK was sent.
    unacked_segs: u32,
    quickacks_left: u32,
    delack_deadline: Option<Nanos>,
    /// Cumulative CE-marked segments received.
    pub ce_count: u64,
    /// Payload bytes delivered in order to the application.
    pub delivered_bytes: u64,
    /// Data segments received (including duplicates).
    pub segs_received: u64,
    pub dup_segs: u64,
    pub acks_sent: u64,
}

impl Receiver {
    pub fn new(cfg: ReceiverConfig) -> Receiver {
        Receiver {
            cfg,
            rcv_nxt: 0,
            ooo: Vec::new(),
            ooo_segs: 0,
            ooo_short: None,
            recent: [0; MAX_SACK_BLOCKS],
            n_recent: 0,
            ts_recent: 0,
            unacked_segs: 0,
            quickacks_left: QUICKACKS,
            delack_deadline: None,
            ce_count: 0,
            delivered_bytes: 0,
            segs_received: 0,
            dup_segs: 0,
            acks_sent: 0,
        }
    }

    pub fn next_timeout(&self) -> Option<Nanos> {
        self.delack_deadline
    }

    /// Delayed-ACK timer.
    pub fn on_timeout(&mut self, now: Nanos) -> Option<Packet> {
        match self.delack_deadline {
            Some(d) if now >= d => {
                self.delack_deadline = None;
                if self.unacked_segs > 0 {
                    let mut a = self.make_ack();
                    a.delayed = true;
                    Some(a)
                } else {
                    None
                }
            }
            _ => None,
        }
    }

    /// A data segment arrived; returns an ACK to send now, if any.
    pub fn on_data(&mut self, now: Nanos, seg: &Packet) -> Option<Packet> {
        self.segs_received += 1;
        if seg.ce {
            self.ce_count += 1;
        }
        let seq = seg.seq;
        // RFC 7323 §4.3: TS.Recent follows the segment at the left edge of the window.
        if seq <= self.rcv_nxt {
            self.ts_recent = seg.ts_ns;
        }
        let mut immediate = false;
        if seq < self.rcv_nxt || self.in_ooo(seq) {
            self.dup_segs += 1;
            immediate = true;
        } else if seq == self.rcv_nxt {
            self.rcv_nxt += 1;
            self.delivered_bytes += seg.payload_bytes as u64;
            // Pull in any out-of-order run that is now contiguous.
            if let Some(&(s, e)) = self.ooo.first() {
                if s == self.rcv_nxt {
                    self.ooo.remove(0);
                    self.ooo_segs -= e - s;
                    self.delivered_bytes += (e - s) * self.cfg.mss as u64;
                    if let Some((q, b)) = self.ooo_short {
                        if q >= s && q < e {
                            self.delivered_bytes -= (self.cfg.mss - b) as u64;
                            self.ooo_short = None;
                        }
                    }
                    self.rcv_nxt = e;
                    immediate = true; // a hole was filled
                }
            }
            if !self.ooo.is_empty() {
                immediate = true; // still holes: keep the sender informed
            }
        } else {
            if seg.payload_bytes < self.cfg.mss {
                self.ooo_short = Some((seq, seg.payload_bytes));
            }
            self.insert_ooo(seq);
            immediate = true;
        }
        self.unacked_segs += 1;
        if self.quickacks_left > 0 {
            self.quickacks_left -= 1;
            immediate = true;
        }
        if !self.cfg.delayed_ack || self.unacked_segs >= 2 {
            immediate = true;
        }
        if immediate {
            self.delack_deadline = None;
            return Some(self.make_ack());
        }
        if self.delack_deadline.is_none() {
            self.delack_deadline = Some(now + DELACK_NS);
        }
        None
    }

    fn in_ooo(&self, seq: u64) -> bool {
        let i = self.ooo.partition_point(|&(_, e)| e <= seq);
        i < self.ooo.len() && self.ooo[i].0 <= seq
    }

    fn insert_ooo(&mut self, seq: u64) {
        self.ooo_segs += 1;
        let i = self.ooo.partition_point(|&(_, e)| e < seq);
        // Extend the range ending at seq, or the one starting at seq+1, or insert.
        if i < self.ooo.len() && self.ooo[i].1 == seq {
            self.ooo[i].1 = seq + 1;
            if i + 1 < self.ooo.len() && self.ooo[i + 1].0 == seq + 1 {
                self.ooo[i].1 = self.ooo[i + 1].1;
                self.ooo.remove(i + 1);
            }
        } else if i < self.ooo.len() && self.ooo[i].0 == seq + 1 {
            self.ooo[i].0 = seq;
        } else {
            self.ooo.insert(i, (seq, seq + 1));
        }
        // The block holding this segment is reported first (RFC 2018 §4).
        let start = self.block_of(seq).map_or(seq, |b| b.0);
        let mut new_recent = [0u64; MAX_SACK_BLOCKS];
        new_recent[0] = start;
        let mut n = 1;
        for k in 0..self.n_recent {
            let s = self.recent[k];
            if n < MAX_SACK_BLOCKS {
                if let Some(b) = self.block_of(s) {
                    if b.0 != start && !new_recent[..n].contains(&b.0) {
                        new_recent[n] = b.0;
                        n += 1;
                    }
                }
            }
        }
        self.recent = new_recent;
        self.n_recent = n;
    }

    fn block_of(&self, seq: u64) -> Option<(u64, u64)> {
        let i = self.ooo.partition_point(|&(_, e)| e <= seq);
        if i < self.ooo.len() && self.ooo[i].0 <= seq {
            Some(self.ooo[i])
        } else {
            None
        }
    }

    /// Build an ACK for the current state.
    pub fn make_ack(&mut self) -> Packet {
        self.unacked_segs = 0;
        self.acks_sent += 1;
        let mut a = Packet::empty(0);
        a.ack = self.rcv_nxt;
        a.ts_ns = self.ts_recent;
        a.ce_count = self.ce_count;
        let mut n = 0;
        for k in 0..self.n_recent {
            if let Some(b) = self.block_of(self.recent[k]) {
                if b.0 > self.rcv_nxt && n < MAX_SACK_BLOCKS {
                    a.sack[n] = b;
                    n += 1;
                }
            }
        }
        a.n_sack = n as u8;
        a.rwnd_end = match self.cfg.rcvbuf_bytes {
            None => u64::MAX,
            Some(buf) => {
                // Out-of-order data occupies the buffer; in-order data is read at once.
                let free = buf.saturating_sub(self.ooo_segs * self.cfg.mss as u64);
                self.rcv_nxt + free / self.cfg.mss as u64
            }
        };
        // SACK option: 2 bytes + 8 per block, padded to 4.
        let opt = if n > 0 { (2 + 8 * n as u32).div_ceil(4) * 4 } else { 0 };
        a.wire_bytes = TCP_IP_HEADER_BYTES + ETHERNET_OVERHEAD_BYTES + opt;
        a
    }
}
