//! Reassembly and the SACK blocks an ACK reports: the out-of-order ranges held above rcv_nxt,
//! the order in which recently changed blocks are reported (RFC 2018 §4: the block holding the
//! latest segment first), and the pending D-SACK block (RFC 2883; Linux `tcp_dsack_set`,
//! `tcp_dsack_extend`).
//!
//! The methods are `Receiver`'s own: the ranges and the recent-block list are fields laid out in
//! the receiver's cache lines (see [`Receiver`]), not a separate structure.

use super::Receiver;
use crate::MAX_SACK_BLOCKS;

impl Receiver {
    /// How far out-of-order data reaches past rcv_nxt, bytes (0 without any).
    #[inline]
    pub(super) fn ooo_span_bytes(&self) -> u64 {
        match self.ooo.last_key_value() {
            Some((_, &e)) => (e - self.rcv_nxt) * self.cfg.mss as u64,
            None => 0,
        }
    }

    /// Report duplicate segment `seq` in the next ACK's D-SACK block: extend the pending block
    /// when `seq` touches it, else replace it (Linux `tcp_dsack_extend` / `tcp_dsack_set`).
    pub(super) fn dsack_extend(&mut self, seq: u64) {
        self.dsack = Some(match self.dsack {
            Some((s, e)) if seq + 1 >= s && seq <= e => (s.min(seq), e.max(seq + 1)),
            _ => (seq, seq + 1),
        });
    }

    #[inline]
    pub(super) fn in_ooo(&self, seq: u64) -> bool {
        self.block_of(seq).is_some()
    }

    pub(super) fn insert_ooo(&mut self, seq: u64) {
        self.ooo_segs += 1;
        // Extend the range ending at seq (merging the one starting at seq+1), or the one
        // starting at seq+1, or insert. (An ordered map: filling a hole between two of
        // thousands of ranges after a burst of losses is O(log n), not a shift of the rest.)
        if let Some(mut last) = self.ooo.last_entry() {
            // New data above the highest block (most arrivals while a hole is open).
            if *last.get() == seq {
                *last.get_mut() = seq + 1;
                let start = *last.key();
                // Nothing merged: if this block is already reported first, the list stands
                // (entries whose block has since been delivered are skipped by `make_ack`).
                if self.n_recent == 0 || self.recent[0] != start {
                    self.note_recent(start);
                }
                return;
            }
        }
        let next = self.ooo.remove(&(seq + 1));
        match self.ooo.range_mut(..seq).next_back() {
            Some((_, e)) if *e == seq => *e = next.unwrap_or(seq + 1),
            _ => {
                self.ooo.insert(seq, next.unwrap_or(seq + 1));
            }
        }
        let start = self.block_of(seq).map_or(seq, |b| b.0);
        self.note_recent(start);
    }

    /// The block starting at `start` now holds the latest segment: it is reported first
    /// (RFC 2018 §4), followed by the other recently reported blocks still held.
    fn note_recent(&mut self, start: u64) {
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

    /// The out-of-order block holding `seq`, if any.
    ///
    /// Inlined for its common answer, None with no out-of-order data (every in-order segment
    /// asks); the search is a call.
    #[inline]
    pub(super) fn block_of(&self, seq: u64) -> Option<(u64, u64)> {
        // The length is inline; looking at the last key reads the map's root node, which a map
        // emptied after a recovery keeps (a cache miss per segment with a thousand flows).
        if self.ooo.is_empty() {
            return None;
        }
        self.find_block(seq)
    }

    /// `block_of` when there are out-of-order blocks.
    #[inline(never)]
    fn find_block(&self, seq: u64) -> Option<(u64, u64)> {
        if let Some((&s, &e)) = self.ooo.last_key_value() {
            if seq >= s {
                return (seq < e).then_some((s, e));
            }
        }
        self.ooo.range(..=seq).next_back().filter(|&(_, &e)| e > seq).map(|(&s, &e)| (s, e))
    }
}
