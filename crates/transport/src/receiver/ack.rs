//! Building an ACK: the window it offers (never pulling back an autotuned or externally set
//! right edge), its D-SACK and SACK blocks, its timestamps, and its size on the wire.

use super::Receiver;
use crate::{Packet, ETHERNET_OVERHEAD_BYTES, MAX_SACK_BLOCKS, TCP_IP_HEADER_BYTES};
use cc::Nanos;

impl Receiver {
    /// Build an ACK for the current state, sent at `now` (its TSval, carried in `seq`).
    ///
    /// The receiver's own state is updated first and the packet built last, in one piece, so
    /// that it is written where it is returned rather than built aside and copied (88 bytes).
    pub fn make_ack(&mut self, now: Nanos) -> Packet {
        self.unacked_segs = 0;
        self.acks_sent += 1;
        self.last_ack_sent = self.rcv_nxt;
        let rwnd_end = if self.rwnd_unlimited {
            u64::MAX
        } else {
            // Out-of-order data occupies the buffer; in-order data is read at once. An autotuned
            // window or one set from outside never pulls the right edge back (Linux
            // tcp_select_window does not shrink the offered window); the rcvbuf-only rule keeps
            // its historical behaviour.
            let mut end = self.rcv_nxt + self.window_bytes() / self.cfg.mss as u64;
            if self.rwnd_override_bytes.is_some() || self.cfg.autotune {
                end = end.max(self.last_rwnd_end);
            }
            self.last_rwnd_end = end;
            end
        };
        self.last_wnd_segs = rwnd_end.saturating_sub(self.rcv_nxt);
        // The recently reported blocks still held (none without out-of-order data), gathered
        // aside: the ACK itself is written once, where it is returned.
        let mut sacks = Packet { ack: self.rcv_nxt, ..Packet::empty(0) };
        if let Some(d) = self.dsack.take() {
            // RFC 2883 §4: the D-SACK block comes first.
            sacks.push_sack_block(d);
            self.dsacks_sent += 1;
        }
        if !self.ooo.is_empty() {
            for k in 0..self.n_recent {
                if let Some(b) = self.block_of(self.recent[k]) {
                    if b.0 > self.rcv_nxt && (sacks.n_sack as usize) < MAX_SACK_BLOCKS {
                        sacks.push_sack_block(b);
                    }
                }
            }
        }
        // SACK option: 2 bytes + 8 per block, padded to 4.
        let n = sacks.n_sack as u32;
        let opt = if n > 0 { (2 + 8 * n).div_ceil(4) * 4 } else { 0 };
        Packet {
            seq: now,
            ack: self.rcv_nxt,
            ts_ns: self.ts_recent,
            ce_count: self.ce_count,
            rwnd_end,
            sack_rel: sacks.sack_rel,
            n_sack: sacks.n_sack,
            wire_bytes: TCP_IP_HEADER_BYTES + ETHERNET_OVERHEAD_BYTES + opt,
            ..Packet::empty(self.flow_id)
        }
    }
}
