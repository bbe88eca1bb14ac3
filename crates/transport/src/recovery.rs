//! Loss detection and the congestion response to it: RACK, the tail loss probe, the RTO, the
//! recovery state machine with PRR, classic ECN (CWR) and Eifel undo.
//!
//! Model:
//! - RACK (RFC 8985 §6; Linux `tcp_rack_detect_loss`): remember the most recently *sent*
//!   segment among those delivered (`Rack::xmit_ns`/`seq`) and its RTT; a segment sent before it
//!   and still unacknowledged `rack_rtt + reo_wnd` after its transmission is lost. The walk goes
//!   over the time-sorted in-flight list oldest first and stops at the first segment not yet
//!   due, arming the reordering timer for it. `reo_wnd` is Linux's: 0 in recovery or with
//!   dupthresh SACKed segments unless reordering was seen, else a number of steps of min_rtt/4
//!   (capped at SRTT) that D-SACKs widen (recovery/reordering.rs).
//! - Tail loss probe (RFC 8985 §7): in Open state with data outstanding, PTO = 2·SRTT plus 2 ms
//!   (200 ms with a single segment out, for a delayed ACK), never after the RTO. When it fires:
//!   one probe, new data if the window allows, else the last segment again; the probe bypasses
//!   cwnd and pacing (Linux `tcp_send_loss_probe`).
//! - RTO (RFC 6298 §5; Linux `tcp_retransmit_timer` → `tcp_enter_loss`): reduce once per window
//!   (ssthresh from the algorithm, `CA_EVENT_LOSS`), mark everything not SACKed lost, cwnd =
//!   in_flight + 1, state Loss until `high_seq` (snd_nxt at the RTO) is acknowledged; back off.
//! - Recovery (Linux `tcp_fastretrans_alert`, RFC 6675): lost segments in Open/Disorder enter
//!   Recovery (ssthresh from the algorithm, once per window); it ends when `high_seq` is
//!   acknowledged, with cwnd = ssthresh for algorithms without `cong_control`
//!   (`tcp_end_cwnd_reduction`).
//! - PRR (RFC 9937 §6; Linux `tcp_cwnd_reduction` with RecoverFS = prior_cwnd) sets cwnd on each
//!   ACK in Recovery and CWR for algorithms without `cong_control`.
//! - ECN (RFC 3168 §6.1.2, RFC 8257 §3.3; Linux `tcp_enter_cwr`/`tcp_try_to_open`): an ACK with
//!   newly CE-marked segments in Open/Disorder enters CWR; CWR ends once data sent after the
//!   reduction is acknowledged, so there is one reduction per window.
//! - Eifel undo (RFC 3522 with timestamps; Linux `tcp_packet_delayed`, `tcp_try_undo_loss`,
//!   `tcp_try_undo_recovery`, `tcp_try_undo_partial`): an ACK echoing a timestamp older than
//!   the episode's first retransmission shows the original arrived, so the reduction was
//!   spurious: restore cwnd and ssthresh (after an RTO also unmark the segments marked lost).
//!   In recovery, before its end, such an ACK also shows reordering; the undo then waits until
//!   no retransmission is in flight.
//! - D-SACK undo (RFC 3708; Linux `tcp_try_undo_dsack`, `tcp_may_undo`): each D-SACK for a
//!   segment retransmitted in the episode takes one off `undo_retrans` (reordering.rs); at 0
//!   every retransmission was spurious and the reduction is undone — in the episode, or after
//!   it ended (Linux keeps `undo_marker` until the next episode).

mod reordering;

pub(crate) use reordering::{is_dsack, without_dsack, Reordering};

use crate::scoreboard::{F_RETRANS, F_SACKED};
use crate::{Packet, Sender, DUPTHRESH, TLP_EXTRA_NS, TLP_SINGLE_SEG_EXTRA_NS};
use cc::{CaState, CwndEvent, Nanos};

/// What a pending tail loss probe sends.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Probe {
    NewData,
    Retrans(u64),
}

/// RACK state (RFC 8985 §6.1).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Rack {
    /// Transmission time and number of the most recently sent segment delivered so far
    /// (RACK.xmit_ts, RACK.end_seq).
    pub(crate) xmit_ns: Nanos,
    pub(crate) seq: u64,
    /// RTT of that segment's delivery (RACK.rtt), ns.
    pub(crate) rtt_ns: u64,
    pub(crate) valid: bool,
}

impl Rack {
    /// RFC 8985 §6.2 step 2 (RACK_update): a delivered segment sent later than the one
    /// remembered becomes RACK's reference. A retransmitted segment acked sooner than min_rtt
    /// after its retransmission may be the original's ACK: it must not advance RACK.
    #[inline]
    pub(crate) fn on_delivered(
        &mut self,
        now: Nanos,
        seq: u64,
        xmit_ns: Nanos,
        ever_retrans: bool,
        min_rtt_ns: u64,
    ) {
        let rtt = now.saturating_sub(xmit_ns);
        let ambiguous = ever_retrans && min_rtt_ns != u64::MAX && rtt < min_rtt_ns;
        if !ambiguous
            && (!self.valid
                || xmit_ns > self.xmit_ns
                || (xmit_ns == self.xmit_ns && seq > self.seq))
        {
            self.xmit_ns = xmit_ns;
            self.seq = seq;
            self.rtt_ns = rtt;
            self.valid = true;
        }
    }

    /// Segment `seq`, sent at `xmit_ns`, was sent before RACK's segment: only such a segment
    /// can be deemed lost (RFC 8985 §6.2 step 5, RACK_sent_after in reverse).
    #[inline]
    fn sent_before(&self, xmit_ns: Nanos, seq: u64) -> bool {
        xmit_ns < self.xmit_ns || (xmit_ns == self.xmit_ns && seq < self.seq)
    }
}

/// Recovery, undo, ECN and loss-probe state.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Recovery {
    /// snd_nxt when Recovery or Loss was entered (Linux `high_seq`): the episode ends when it is
    /// acknowledged.
    pub(crate) high_seq: u64,
    /// ssthresh before the reduction, restored by an undo (Linux `prior_ssthresh`).
    pub(crate) prior_ssthresh: u32,
    /// PRR (RFC 9937): segments delivered and sent since the reduction began.
    pub(crate) prr_delivered: u32,
    pub(crate) prr_out: u32,
    /// Time of the first retransmission of the current episode (Linux `retrans_stamp`); 0 = none.
    pub(crate) retrans_stamp_ns: Nanos,
    /// The current reduction may be undone (Linux `undo_marker` set).
    pub(crate) undo_marker: bool,
    /// snd_una when the reduction began (Linux `undo_marker`'s value): D-SACKs for data below
    /// it do not count.
    pub(crate) undo_seq: u64,
    /// Retransmissions of the episode not yet shown spurious by a D-SACK (Linux
    /// `undo_retrans`; -1: none sent yet).
    pub(crate) undo_retrans: i32,
    /// snd_nxt when the last loss probe went out (Linux `tlp_high_seq`; 0: none).
    pub(crate) tlp_high_seq: u64,
    /// Cumulative CE count last seen from the receiver.
    pub(crate) ce_seen: u64,
    /// snd_nxt when CWR was entered.
    pub(crate) cwr_high_seq: u64,
    /// The ACK being processed carried newly CE-marked segments (ECE, Linux `FLAG_ECE`).
    pub(crate) ece_this_ack: bool,
    /// A loss probe was sent and not yet answered by an ACK of new data.
    pub(crate) tlp_outstanding: bool,
    /// A tail loss probe waiting to go out (sent by poll_transmit regardless of cwnd and pacing).
    pub(crate) pending_probe: Option<Probe>,
}

/// Why a reduction was undone (for the counters).
#[derive(Clone, Copy, Debug, PartialEq)]
enum UndoKind {
    /// A timestamp echo showed an original arrived (Eifel, RFC 3522).
    Eifel,
    /// D-SACKs showed every retransmission of the episode arrived twice (RFC 3708).
    Dsack,
}

impl Sender {
    /// Linux tcp_init_undo: the reduction beginning now may be undone.
    fn init_undo(&mut self) {
        self.rec.undo_marker = true;
        self.rec.undo_seq = self.sb.snd_una;
        self.rec.undo_retrans =
            if self.tp.retrans_out > 0 { self.tp.retrans_out as i32 } else { -1 };
    }

    /// A retransmission counts towards a D-SACK undo (Linux `tcp_retransmit_skb`; a loss
    /// probe's `__tcp_retransmit_skb` does not).
    pub(crate) fn count_undo_retrans(&mut self) {
        self.rec.undo_retrans = self.rec.undo_retrans.max(0) + 1;
    }

    /// RFC 8985 §6.2 RACK_detect_loss over the time-sorted list; returns segments newly lost.
    ///
    /// Inlined for its common answer: on most ACKs the oldest segment in flight was sent after
    /// RACK's (the ACK delivered the oldest ones), so nothing can be lost and the walk would
    /// stop at once. The walk is a call.
    #[inline(always)]
    pub(crate) fn rack_detect_loss(&mut self, now: Nanos) -> u32 {
        if !self.rack.valid {
            return 0;
        }
        let Some(oldest) = self.sb.oldest_in_flight() else { return 0 };
        if !self.rack.sent_before(self.sb.seg(oldest).xmit_ns, oldest) {
            return 0;
        }
        self.rack_walk(now)
    }

    /// `rack_detect_loss`'s walk, from the oldest segment in flight.
    #[inline(never)]
    fn rack_walk(&mut self, now: Nanos) -> u32 {
        let reo = self.reo_wnd();
        let mut lost = 0;
        let mut cur = self.sb.oldest_in_flight();
        while let Some(seq) = cur {
            let xmit = self.sb.seg(seq).xmit_ns;
            let next = self.sb.sent_after(seq);
            // Only segments sent before the most recently delivered one can be deemed lost.
            if !self.rack.sent_before(xmit, seq) {
                break;
            }
            let deadline = xmit + self.rack.rtt_ns + reo;
            if now >= deadline {
                self.sb.mark_lost(&mut self.tp, &mut self.cc, seq);
                lost += 1;
            } else {
                self.timers.reo_at_ns =
                    Some(self.timers.reo_at_ns.map_or(deadline, |d| d.min(deadline)));
                break;
            }
            cur = next;
        }
        lost
    }

    pub(crate) fn enter_recovery_if_needed(&mut self) {
        if self.tp.lost_out == 0 || self.tp.ca_state >= CaState::Recovery {
            return;
        }
        // Linux tcp_enter_recovery + tcp_init_cwnd_reduction.
        self.stats.recoveries += 1;
        if self.tp.ca_state < CaState::Cwr {
            self.rec.prior_ssthresh = self.current_ssthresh();
            self.init_undo();
            self.rec.retrans_stamp_ns = 0;
            self.tp.prior_cwnd = self.tp.snd_cwnd;
            self.tp.snd_ssthresh = self.cc.ssthresh(&self.tp);
            self.rec.prr_delivered = 0;
            self.rec.prr_out = 0;
        }
        self.rec.high_seq = self.sb.snd_nxt;
        self.rec.tlp_high_seq = 0;
        self.timers.tlp_at_ns = None;
        self.set_ca_state(CaState::Recovery);
    }

    /// The retransmission timer fired (Linux `tcp_retransmit_timer` → `tcp_enter_loss`).
    pub(crate) fn on_rto(&mut self, now: Nanos) {
        self.timers = Default::default();
        if self.tp.packets_out == 0 {
            return;
        }
        self.stats.rto_count += 1;
        self.tp.rto_count += 1;
        // Linux tcp_enter_loss.
        if self.tp.ca_state <= CaState::Disorder || self.tp.ca_state == CaState::Cwr {
            self.rec.prior_ssthresh = self.current_ssthresh();
            self.tp.prior_cwnd = self.tp.snd_cwnd;
            self.tp.snd_ssthresh = self.cc.ssthresh(&self.tp);
            self.cc.cwnd_event(&mut self.tp, CwndEvent::Loss);
            self.init_undo();
            self.rec.retrans_stamp_ns = 0;
        }
        // A timeout in Disorder after dupthresh SACKs suggests the reordering degree is
        // over-estimated (Linux tcp_enter_loss).
        if self.tp.ca_state <= CaState::Disorder && self.tp.sacked_out >= DUPTHRESH {
            self.reo.reordering = self.reo.reordering.min(DUPTHRESH);
        }
        self.sb.timeout_mark_lost(&mut self.tp, &mut self.cc);
        // Linux tcp_enter_loss: cwnd = in_flight + 1, then the state change (the algorithm's
        // set_state hook runs on every RTO, not only on the first).
        self.tp.snd_cwnd = self.tp.packets_in_flight() + 1;
        self.tp.snd_cwnd_cnt = 0;
        self.cc.set_state(&mut self.tp, CaState::Loss);
        self.tp.ca_state = CaState::Loss;
        self.rec.high_seq = self.sb.snd_nxt;
        self.rec.tlp_outstanding = false;
        self.pacer.burst_left_segs = 0;
        self.pacer.next_send_ns = now;
        // Exponential backoff (RFC 6298 §5.5).
        self.rtt.backoff += 1;
        self.timers.rto_at_ns = Some(now + self.rtt.backed_off_rto_ns());
    }

    fn current_ssthresh(&self) -> u32 {
        // Linux tcp_current_ssthresh.
        if self.tp.ca_state >= CaState::Cwr {
            self.tp.snd_ssthresh
        } else {
            self.tp.snd_ssthresh.max((self.tp.snd_cwnd >> 1) + (self.tp.snd_cwnd >> 2))
        }
    }

    fn set_ca_state(&mut self, s: CaState) {
        if self.tp.ca_state != s {
            self.cc.set_state(&mut self.tp, s);
            self.tp.ca_state = s;
        }
    }

    /// Linux tcp_fastretrans_alert with RACK (no dupack counting); `prior_snd_una` is snd_una
    /// before this ACK.
    pub(crate) fn update_state(&mut self, ack: &Packet, acked_new: bool, prior_snd_una: u64) {
        match self.tp.ca_state {
            CaState::Loss => {
                let (delayed, dsacked, kind) = self.undo_evidence(ack);
                if acked_new && (delayed || dsacked) {
                    self.undo(true, kind);
                    return;
                }
                if self.sb.snd_una >= self.rec.high_seq {
                    self.finish_recovery();
                }
            }
            CaState::Recovery if self.sb.snd_una >= self.rec.high_seq => {
                let (delayed, dsacked, kind) = self.undo_evidence(ack);
                if delayed || dsacked {
                    self.undo(false, kind);
                } else {
                    self.finish_recovery();
                }
            }
            CaState::Recovery => {
                let (delayed, dsacked, _) = self.undo_evidence(ack);
                if acked_new && delayed {
                    // Linux tcp_try_undo_partial: the hole was filled by the original, which
                    // was reordered, not lost. Undo only once no retransmission is in flight.
                    self.check_sack_reordering(prior_snd_una, true);
                    if self.tp.retrans_out > 0 {
                        return;
                    }
                    self.undo(true, UndoKind::Eifel);
                } else if dsacked {
                    self.undo(false, UndoKind::Dsack); // Linux tcp_try_undo_dsack
                }
            }
            CaState::Cwr => {
                // Linux tcp_fastretrans_alert: CWR ends once something *above* high_seq is
                // acknowledged, so the ACK that ends it covers data sent after the reduction
                // (or once nothing is outstanding: no later data will come to end it).
                let (una, nxt) = (self.sb.snd_una, self.sb.snd_nxt);
                if una > self.rec.cwr_high_seq || (una == self.rec.cwr_high_seq && una == nxt) {
                    self.finish_recovery();
                }
            }
            _ => {}
        }
        if self.tp.ca_state <= CaState::Disorder {
            if self.rec.undo_marker && self.rec.undo_retrans == 0 {
                // Linux tcp_try_undo_dsack after the episode ended (CWR clears undo_marker).
                self.undo(false, UndoKind::Dsack);
            }
            if self.tp.lost_out > 0 {
                self.enter_recovery_if_needed();
            } else if self.tp.ecn_ok && !self.cc.has_cong_control() && self.rec.ece_this_ack {
                // Linux tcp_try_to_open: an ACK with ECE in Open/Disorder enters CWR. CE marks
                // delivered while in CWR/Recovery belong to the window already reduced for and do
                // not trigger a second reduction (RFC 3168 §6.1.2, RFC 8257 §3.3: at most once
                // per window); DCTCP's alpha still counts them (tp.delivered_ce).
                self.enter_cwr();
            } else {
                let s = if self.tp.sacked_out > 0 { CaState::Disorder } else { CaState::Open };
                self.set_ca_state(s);
            }
        }
    }

    /// What `ack` shows of the episode's retransmissions (Loss and Recovery only: the other
    /// states need none of it, and most ACKs come in Open): whether the originals arrived
    /// (`delayed`), whether every retransmission was D-SACKed, and so which undo that is.
    #[inline(always)]
    fn undo_evidence(&self, ack: &Packet) -> (bool, bool, UndoKind) {
        // Spurious retransmission (Eifel, RFC 3522; Linux tcp_packet_delayed): the ACK echoes a
        // timestamp older than our first retransmission, so the original transmission arrived;
        // or nothing was retransmitted (the original arrived before its retransmission left,
        // e.g. held by pacing). Linux clears retrans_stamp only with no retransmission out;
        // this model also clears it when a new episode follows one at once, with the previous
        // one's retransmissions still out, so "nothing" also asks `undo_retrans` (-1: none
        // out when the episode began, none sent since).
        let nothing_retransmitted = self.rec.retrans_stamp_ns == 0 && self.rec.undo_retrans < 0;
        let delayed = self.rec.undo_marker
            && (nothing_retransmitted || ack.ts_ns < self.rec.retrans_stamp_ns);
        // Every retransmission of the episode was D-SACKed (RFC 3708; Linux tcp_may_undo).
        let dsacked = self.rec.undo_marker && self.rec.undo_retrans == 0;
        let kind = if dsacked { UndoKind::Dsack } else { UndoKind::Eifel };
        (delayed, dsacked, kind)
    }

    /// Classic ECN reaction (RFC 3168 §6.1.2; Linux tcp_enter_cwr), at most once per window.
    fn enter_cwr(&mut self) {
        self.tp.prior_cwnd = self.tp.snd_cwnd;
        self.rec.prior_ssthresh = 0;
        self.rec.undo_marker = false;
        self.tp.snd_ssthresh = self.cc.ssthresh(&self.tp);
        self.rec.prr_delivered = 0;
        self.rec.prr_out = 0;
        self.rec.cwr_high_seq = self.sb.snd_nxt;
        self.set_ca_state(CaState::Cwr);
    }

    fn finish_recovery(&mut self) {
        // Linux tcp_end_cwnd_reduction: algorithms with cong_control manage cwnd themselves.
        if !self.cc.has_cong_control()
            && self.tp.snd_ssthresh < cc::TCP_INFINITE_SSTHRESH
            && (self.tp.ca_state == CaState::Recovery || self.tp.ca_state == CaState::Cwr)
        {
            self.tp.snd_cwnd = self.tp.snd_ssthresh;
        }
        // Linux tcp_try_undo_recovery: a recovery that was not undone shortens the time a
        // widened reordering window persists. `undo_marker` stays: D-SACKs arriving after the
        // episode may still show it spurious (tcp_try_undo_dsack).
        if self.tp.ca_state == CaState::Recovery || self.tp.ca_state == CaState::Loss {
            self.reo.reo_wnd_persist = self.reo.reo_wnd_persist.saturating_sub(1);
        }
        self.rec.retrans_stamp_ns = 0;
        let s = if self.tp.sacked_out > 0 { CaState::Disorder } else { CaState::Open };
        self.set_ca_state(s);
        if self.tp.ca_state == CaState::Open && !self.cc.has_cong_control() {
            self.cc.cwnd_event(&mut self.tp, CwndEvent::CompleteCwr);
        }
    }

    /// Undo a spurious reduction (Linux tcp_undo_cwnd_reduction).
    fn undo(&mut self, unmark_loss: bool, kind: UndoKind) {
        self.stats.spurious_undos += 1;
        match kind {
            UndoKind::Eifel => self.stats.undos_eifel += 1,
            UndoKind::Dsack => {
                self.stats.undos_dsack += 1;
                // Linux tcp_try_undo_dsack: the widened reordering window persists longer.
                self.reo.reo_wnd_persist =
                    (self.reo.reo_wnd_persist + 1).min(reordering::RACK_RECOVERY_THRESH);
            }
        }
        if self.tp.ca_state == CaState::Loss {
            // The RTO was spurious (Linux counts TCPSpuriousRTOs for F-RTO's undo, the role
            // Eifel and D-SACK play here).
            self.stats.spurious_rtos += 1;
        }
        if unmark_loss {
            // Segments marked lost were not lost: take them off the retransmit queue.
            self.sb.unmark_lost(&mut self.tp);
        }
        if self.rec.prior_ssthresh != 0 {
            let cwnd = self.cc.undo_cwnd(&mut self.tp);
            self.tp.snd_cwnd = cwnd.max(1);
            if self.rec.prior_ssthresh > self.tp.snd_ssthresh {
                self.tp.snd_ssthresh = self.rec.prior_ssthresh;
            }
        }
        self.rec.undo_marker = false;
        self.rec.retrans_stamp_ns = 0;
        let s = if self.tp.sacked_out > 0 { CaState::Disorder } else { CaState::Open };
        self.set_ca_state(s);
    }

    /// Proportional Rate Reduction (RFC 9937 §6; Linux tcp_cwnd_reduction with RecoverFS =
    /// prior_cwnd).
    pub(crate) fn prr(&mut self, delivered: u32, newly_lost: u32, una_advanced: bool) {
        if delivered == 0 {
            return;
        }
        self.rec.prr_delivered += delivered;
        let pipe = self.tp.packets_in_flight() as i64;
        let ssthresh = self.tp.snd_ssthresh as i64;
        let recover_fs = self.tp.prior_cwnd.max(1) as i64;
        let (prr_delivered, prr_out) = (self.rec.prr_delivered as i64, self.rec.prr_out as i64);
        let sndcnt: i64 = if pipe > ssthresh {
            // Proportional part: ceil(prr_delivered · ssthresh / RecoverFS) − prr_out.
            (ssthresh * prr_delivered + recover_fs - 1) / recover_fs - prr_out
        } else {
            // Slow-start reduction bound: rebuild towards ssthresh no faster than slow start.
            let mut n = (prr_delivered - prr_out).max(delivered as i64);
            if una_advanced && newly_lost == 0 {
                n += 1;
            }
            n.min(ssthresh - pipe)
        };
        // Force the fast retransmit when recovery starts.
        let sndcnt = sndcnt.max(if self.rec.prr_out == 0 { 1 } else { 0 });
        self.tp.snd_cwnd = (pipe + sndcnt).max(1) as u32;
    }

    /// Arm the tail loss probe (RFC 8985 §7.2) when in Open state with data outstanding.
    pub(crate) fn schedule_tlp(&mut self, now: Nanos) {
        if self.rec.tlp_outstanding
            || self.tp.ca_state != CaState::Open
            || self.tp.srtt_ns == 0
            || self.tp.packets_out == 0
        {
            self.timers.tlp_at_ns = None;
            return;
        }
        let extra = if self.tp.packets_out == 1 { TLP_SINGLE_SEG_EXTRA_NS } else { TLP_EXTRA_NS };
        let mut pto = now + 2 * self.tp.srtt_ns + extra;
        if let Some(rto) = self.timers.rto_at_ns {
            pto = pto.min(rto);
        }
        self.timers.tlp_at_ns = Some(pto);
    }

    /// RFC 8985 §7.3: probe with new data if the window allows, else retransmit the last segment.
    pub(crate) fn send_loss_probe(&mut self) {
        if self.tp.packets_out == 0 {
            return;
        }
        self.rec.tlp_outstanding = true;
        self.rec.tlp_high_seq = self.sb.snd_nxt;
        self.stats.tlp_probes += 1;
        if self.has_unsent() && self.sb.snd_nxt < self.rwnd_end {
            self.rec.pending_probe = Some(Probe::NewData);
            return;
        }
        let last = self.sb.snd_nxt - 1;
        if self.sb.flags(last) & (F_SACKED | F_RETRANS) == 0 {
            self.rec.pending_probe = Some(Probe::Retrans(last));
        }
    }
}
