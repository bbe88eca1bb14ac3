//! SACK-block bookkeeping (Linux `recv_sack_cache`): an ACK's blocks are applied only where
//! they differ from the previous ACK's, so each segment is tagged once: O(1) amortised per ACK.

use super::Scoreboard;
use crate::{Packet, MAX_SACK_BLOCKS};

impl Scoreboard {
    /// The ranges of this ACK's SACK blocks that the previous ACK's blocks did not cover, clipped
    /// to [max(ack, snd_una), snd_nxt), block by block in the ACK's order. Call before
    /// [`Scoreboard::remember_sack_blocks`] and before the cumulative ACK moves `snd_una`.
    #[inline]
    pub(crate) fn newly_sacked(&self, ack: &Packet) -> NewlySacked {
        let mut blocks = [(0, 0); MAX_SACK_BLOCKS];
        let n = ack.n_sack as usize;
        for (b, blk) in blocks.iter_mut().enumerate().take(n) {
            let (s, e) = ack.sack_block(b);
            *blk = (s.max(ack.ack).max(self.snd_una), e.min(self.snd_nxt));
        }
        NewlySacked { blocks, n, b: 0, pos: 0, end: 0, cache: self.sack_cache }
    }

    /// Keep this ACK's SACK blocks for the next ACK's comparison.
    #[inline]
    pub(crate) fn remember_sack_blocks(&mut self, ack: &Packet) {
        let n = ack.n_sack as usize;
        if n == 0 && self.n_sack_cache == 0 {
            return; // no blocks then, none now
        }
        self.sack_cache = [(0, 0); MAX_SACK_BLOCKS];
        for b in 0..n {
            self.sack_cache[b] = ack.sack_block(b);
        }
        self.n_sack_cache = n;
    }
}

/// Iterator over the newly SACKed ranges [start, end) of one ACK: each block minus the blocks
/// of the previous ACK (at most 4 pieces per block). Holds copies, so the scoreboard can be
/// tagged while iterating.
pub(crate) struct NewlySacked {
    blocks: [(u64, u64); MAX_SACK_BLOCKS],
    n: usize,
    /// Next block to start.
    b: usize,
    /// Walk through the current block: [pos, end).
    pos: u64,
    end: u64,
    cache: [(u64, u64); MAX_SACK_BLOCKS],
}

impl Iterator for NewlySacked {
    type Item = (u64, u64);

    #[inline]
    fn next(&mut self) -> Option<(u64, u64)> {
        loop {
            if self.pos >= self.end {
                if self.b >= self.n {
                    return None;
                }
                (self.pos, self.end) = self.blocks[self.b];
                self.b += 1;
                continue;
            }
            let (pos, e) = (self.pos, self.end);
            // Subtract cached blocks (already tagged): skip past one that covers `pos`, else
            // stop the piece at the next one that starts inside it.
            let mut piece_end = e;
            let mut skip_to = None;
            for &(cs, ce) in &self.cache {
                if cs < ce {
                    if pos >= cs && pos < ce {
                        skip_to = Some(skip_to.map_or(ce, |x: u64| x.max(ce)));
                    } else if cs > pos && cs < piece_end {
                        piece_end = cs;
                    }
                }
            }
            if let Some(t) = skip_to {
                self.pos = t.min(e);
                continue;
            }
            self.pos = piece_end;
            return Some((pos, piece_end));
        }
    }
}
