//! Reordering: how the sender notices it and adapts to it, and the D-SACK bookkeeping that
//! feeds both and the undo of spurious recoveries (Linux tcp_input.c, tcp_recovery.c; RFC 8985
//! §6.2, RFC 2883, RFC 3708).
//!
//! Model:
//! - D-SACK (Linux `tcp_check_dsack`, `tcp_dsack_seen`): the ACK's first SACK block is a
//!   D-SACK when it lies below the cumulative ACK or inside the second block. It reports a
//!   duplicate arrival, which the sender trusts only while it has not been told of more
//!   duplicates than it retransmitted (`dsack_dups <= total_retrans`). Each D-SACKed segment
//!   that was retransmitted since the episode began takes one off `undo_retrans`; when none is
//!   left every retransmission of the episode was spurious and the reduction is undone
//!   (`tcp_try_undo_dsack`, recovery.rs). The block is then left out of the SACK tagging.
//! - Reordering (Linux `tcp_check_sack_reordering`; RFC 8985 §6.2 step 3): a segment never
//!   retransmitted that is newly SACKed or cumulatively ACKed below the highest SACKed one
//!   (`fack`, the prior `tcp_highest_sack_seq`) arrived out of order; so did the original whose
//!   timestamp an ACK echoes in recovery (`tcp_try_undo_partial`). Each such event counts in
//!   `reord_seen`, and the distance `fack - seq` raises `reordering` (Linux `tp->reordering`,
//!   the dupthresh, capped at `sysctl_tcp_max_reordering`).
//! - With RACK (Linux's default), `reordering` decides only RACK's window before any reordering
//!   is seen (`tcp_rack_reo_wnd`: 0 once `sacked_out >= reordering`) and whether cwnd grows on
//!   SACK-only ACKs (`tcp_may_raise_cwnd`); `tcp_time_to_recover` enters recovery on a RACK
//!   loss only. Once reordering was seen, RACK waits `reo_wnd` even in recovery.
//! - reo_wnd (Linux `tcp_rack_reo_wnd`, `tcp_rack_update_reo_wnd`; RFC 8985 §6.2 step 4):
//!   reo_wnd = min(reo_wnd_steps · min_rtt/4, SRTT). A D-SACK after reordering was seen
//!   (`dsack_seen`, not for a loss probe) adds a step, at most once per round trip; the
//!   widened window persists for `RACK_RECOVERY_THRESH` recoveries (one more for each D-SACK
//!   undo, one less for each recovery that was not undone), then falls back to one step.
//!
//! Not modelled: D-SACKed segments are not counted as delivered (Linux `sack_delivered`), and a
//! D-SACK for a loss probe does not end the probe episode (`tcp_process_tlp_ack`).

use crate::scoreboard::{F_EVER_RETRANS, F_SACKED};
use crate::{Packet, Sender, DUPTHRESH};
use cc::CaState;

/// Linux `TCP_RACK_RECOVERY_THRESH`: recoveries for which a widened reo_wnd persists.
pub(crate) const RACK_RECOVERY_THRESH: u32 = 16;
/// Linux `sysctl_tcp_max_reordering` default: the largest dupthresh reordering can raise.
pub(crate) const MAX_REORDERING: u32 = 300;
/// Linux keeps `rack.reo_wnd_steps` in a u8.
const MAX_REO_WND_STEPS: u32 = 0xFF;

/// What the sender knows of the path's reordering (Linux `tp->reordering`, `tp->reord_seen`,
/// `tp->dsack_dups` and `tp->rack`'s reo_wnd fields).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Reordering {
    /// Reordering events seen (Linux `tp->reord_seen`; RFC 8985 RACK.reordering_seen).
    pub(crate) reord_seen: u32,
    /// Dupthresh in segments (Linux `tp->reordering`).
    pub(crate) reordering: u32,
    /// A trusted D-SACK arrived since reo_wnd was last widened (Linux `rack.dsack_seen`).
    pub(crate) dsack_seen: bool,
    /// reo_wnd in units of min_rtt/4 (Linux `rack.reo_wnd_steps`).
    pub(crate) reo_wnd_steps: u32,
    /// Recoveries the widened reo_wnd still persists for (Linux `rack.reo_wnd_persist`).
    pub(crate) reo_wnd_persist: u32,
    /// `tp.delivered` when reo_wnd was last widened (Linux `rack.last_delivered`).
    pub(crate) last_delivered: u64,
    /// Segments reported duplicate by D-SACKs (Linux `tp->dsack_dups`).
    pub(crate) dsack_dups: u64,
}

impl Default for Reordering {
    fn default() -> Self {
        // Linux tcp_init_sock: reordering = sysctl_tcp_reordering, reo_wnd_steps = 1.
        Reordering {
            reord_seen: 0,
            reordering: DUPTHRESH,
            dsack_seen: false,
            reo_wnd_steps: 1,
            reo_wnd_persist: 0,
            last_delivered: 0,
            dsack_dups: 0,
        }
    }
}

/// Linux `tcp_check_dsack`'s test: the first SACK block is a D-SACK (RFC 2883 §4).
#[inline]
pub(crate) fn is_dsack(ack: &Packet) -> bool {
    let (s0, e0) = ack.sack_block(0);
    if s0 < ack.ack {
        return true;
    }
    ack.n_sack > 1 && {
        let (s1, e1) = ack.sack_block(1);
        e0 <= e1 && s0 >= s1
    }
}

/// The ACK without its first SACK block (the D-SACK), for the SACK tagging.
pub(crate) fn without_dsack(ack: &Packet) -> Packet {
    let mut p = *ack;
    p.sack_rel.copy_within(1.., 0);
    p.n_sack -= 1;
    p
}

impl Sender {
    /// RACK reordering window, ns (Linux `tcp_rack_reo_wnd`).
    pub(crate) fn reo_wnd(&self) -> u64 {
        if self.reo.reord_seen == 0
            && (self.tp.ca_state >= CaState::Recovery || self.tp.sacked_out >= self.reo.reordering)
        {
            return 0;
        }
        let min_rtt = if self.tp.min_rtt_ns == u64::MAX { 0 } else { self.tp.min_rtt_ns };
        ((min_rtt / 4) * self.reo.reo_wnd_steps as u64).min(self.tp.srtt_ns)
    }

    /// RACK's reordering window as it stands now, ns (for results and tests).
    pub fn rack_reo_wnd_ns(&self) -> u64 {
        self.reo_wnd()
    }

    /// Reordering events seen so far (Linux `tp->reord_seen`).
    pub fn reord_seen(&self) -> u32 {
        self.reo.reord_seen
    }

    /// The dupthresh reordering has raised (Linux `tp->reordering`), segments.
    pub fn reordering_segs(&self) -> u32 {
        self.reo.reordering
    }

    /// The highest SACKed sequence (Linux `tcp_highest_sack_seq`): one past the highest SACKed
    /// segment, snd_una when nothing is SACKed.
    #[inline]
    pub(crate) fn fack(&self) -> u64 {
        if self.tp.sacked_out == 0 {
            self.sb.snd_una
        } else {
            self.sb.highest_sacked_end.max(self.sb.snd_una)
        }
    }

    /// The ACK's D-SACK block (Linux `tcp_check_dsack`, `tcp_dsack_seen`, and the `dup_sack`
    /// part of `tcp_sacktag_one`), before the cumulative ACK moves snd_una. Returns the lowest
    /// D-SACKed segment that was SACKed before and retransmitted: a reordering candidate.
    #[cold]
    pub(crate) fn on_dsack(&mut self, ack: &Packet) -> Option<u64> {
        let (start, end) = ack.sack_block(0);
        if start < ack.ack {
            self.stats.dsack_recv += 1;
        } else {
            self.stats.dsack_ofo_recv += 1;
        }
        if start >= end {
            self.stats.dsack_ignored_dubious += 1;
            return None;
        }
        let dup_segs = end - start;
        self.reo.dsack_dups += dup_segs;
        // Skip a D-SACK for more duplicates than were ever retransmitted.
        if self.reo.dsack_dups > self.tp.total_retrans {
            self.stats.dsack_ignored_dubious += 1;
            return None;
        }
        self.stats.dsack_recv_segs += dup_segs;
        // RACK widens its window on D-SACKs that reordering may explain, not on a loss probe's
        // (timer-driven, not RACK-triggered).
        let tlp = dup_segs == 1 && self.rec.tlp_high_seq != 0 && self.rec.tlp_high_seq == end;
        if self.reo.reord_seen > 0 && !tlp {
            self.reo.dsack_seen = true;
        }
        let prior_snd_una = self.sb.snd_una;
        let counts = |r: &crate::recovery::Recovery, seg_end: u64| {
            r.undo_marker && r.undo_retrans > 0 && seg_end > r.undo_seq
        };
        if end <= prior_snd_una {
            // Data already cumulatively acknowledged: "dumb counting" (tcp_check_dsack).
            if counts(&self.rec, end) {
                self.rec.undo_retrans = (self.rec.undo_retrans - dup_segs as i32).max(0);
            }
            return None;
        }
        let mut reord = None;
        for seq in start.max(prior_snd_una)..end.min(self.sb.snd_nxt) {
            let f = self.sb.flags(seq);
            if f & F_EVER_RETRANS != 0 {
                if counts(&self.rec, seq + 1) {
                    self.rec.undo_retrans -= 1;
                }
                if f & F_SACKED != 0 {
                    reord = Some(reord.map_or(seq, |r: u64| r.min(seq)));
                }
            }
        }
        reord
    }

    /// A segment at `low_seq` arrived out of order (Linux `tcp_check_sack_reordering`); `ts`:
    /// seen from a timestamp echo rather than from SACKs.
    #[cold]
    pub(crate) fn check_sack_reordering(&mut self, low_seq: u64, ts: bool) {
        let fack = self.fack();
        if low_seq >= fack {
            return;
        }
        let metric = (fack - low_seq).min(u32::MAX as u64) as u32;
        if metric > self.reo.reordering {
            self.reo.reordering = metric.min(MAX_REORDERING);
        }
        self.reo.reord_seen += 1;
        if ts {
            self.stats.ts_reorder += 1;
        } else {
            self.stats.sack_reorder += 1;
        }
    }

    /// Widen or reset RACK's reordering window after an ACK (Linux `tcp_rack_update_reo_wnd`):
    /// `prior_delivered` is the rate sample's (0: the ACK delivered nothing).
    #[inline]
    pub(crate) fn rack_update_reo_wnd(&mut self, prior_delivered: u64) {
        let r = &mut self.reo;
        // Nothing to do (most ACKs): no D-SACK to act on, and the window is at one step or
        // still persists.
        if prior_delivered == 0
            || (!r.dsack_seen && (r.reo_wnd_persist != 0 || r.reo_wnd_steps == 1))
        {
            return;
        }
        // Disregard a D-SACK if a round trip has not passed since reo_wnd was widened.
        if prior_delivered < r.last_delivered {
            r.dsack_seen = false;
        }
        if r.dsack_seen {
            r.reo_wnd_steps = (r.reo_wnd_steps + 1).min(MAX_REO_WND_STEPS);
            r.dsack_seen = false;
            r.last_delivered = self.tp.delivered;
            r.reo_wnd_persist = RACK_RECOVERY_THRESH;
        } else if r.reo_wnd_persist == 0 {
            r.reo_wnd_steps = 1;
        }
    }
}
