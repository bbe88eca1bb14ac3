//! The SACK scoreboard (RFC 2018, RFC 6675 §4-5; Linux's retransmit queue and its `sacked` tag
//! bits, `tcp_sacktag_write_queue`).
//!
//! Model. Sequence numbers count segments. Every segment in [snd_una, snd_nxt) has a [`Seg`] in
//! a ring indexed by `seq - snd_una`, tagged with Linux's bits (tcp_input.c, "This procedure tags
//! the retransmission queue when SACKs arrive"):
//!
//! ```text
//!   tags   in flight  meaning
//!   -      1          the original is in flight
//!   S      0          SACKed: the original (or a retransmission) reached the receiver
//!   L      0          lost, not retransmitted yet (waiting in `lost_queue`)
//!   L|R    1          lost, its retransmission is in flight
//!   R      2          retransmitted without being marked lost (a tail loss probe)
//! ```
//!
//! `F_EVER_RETRANS` remembers any retransmission (Karn: no RTT sample from it). The counters
//! live in `tp` (`packets_out`, `sacked_out`, `lost_out`, `retrans_out`) because the algorithms
//! read them; [`Scoreboard::check_invariants`] recounts them from the tags.
//!
//! Segments in flight are also linked, oldest transmission first, in a list threaded through the
//! ring (Linux `tsorted_sent_queue`, which RACK walks): scoreboard/in_flight.rs.
//!
//! SACK blocks are applied only where they differ from the previous ACK's blocks (Linux
//! `recv_sack_cache`), so each segment is tagged once: O(1) amortised per ACK.
//!
//! Loss marking has one entry point, [`Scoreboard::mark_lost`] (Linux `tcp_mark_skb_lost`), used
//! by RACK and by the RTO.

mod in_flight;
mod sack_blocks;

use crate::chunk_deque::{per_chunk, ChunkDeque};
use crate::MAX_SACK_BLOCKS;
use cc::rate::{self, PacketRateState, RateSample};
use cc::{Cc, Nanos, TcpCc};
use in_flight::{link_from, link_to, next_from, prev_from};
use std::collections::VecDeque;

/// SACKed (Linux `TCPCB_SACKED_ACKED`).
pub(crate) const F_SACKED: u8 = 1;
/// Marked lost (Linux `TCPCB_LOST`).
pub(crate) const F_LOST: u8 = 2;
/// A retransmission of this segment is believed to be in flight (Linux `TCPCB_SACKED_RETRANS`).
pub(crate) const F_RETRANS: u8 = 4;
/// Ever retransmitted (Linux `TCPCB_EVER_RETRANS`; Karn: no RTT sample from it).
pub(crate) const F_EVER_RETRANS: u8 = 8;
/// Linked in the time-sorted in-flight list.
const F_LINKED: u8 = 16;

/// Segments at the head `Scoreboard::prefetch_head` asks for (a delayed ACK takes two).
const HEAD_PREFETCH_SEGS: usize = 2;

/// Scoreboard segments per chunk of the segment store.
const SEGS_PER_CHUNK: usize = per_chunk(std::mem::size_of::<Seg>());

/// "No segment" in the list links.
const NIL: u64 = u64::MAX;

/// One segment's state: 64 bytes, one cache line (a 100 Gbit/s × 150 ms path keeps ~2.5 M of
/// them). The delivery-rate snapshot is kept without the two fields the segment already has —
/// its send time is `xmit_ns` and its sequence number its place in the scoreboard — and the list
/// links are 32-bit distances from the segment itself (a window is far below 2³¹ segments).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Seg {
    /// Time of the latest transmission (also the rate snapshot's `sent_ns`).
    pub(crate) xmit_ns: Nanos,
    /// Delivery-rate snapshot of the latest transmission (Linux `TCP_SKB_CB(skb)->tx`), less
    /// `sent_ns` and `seq`: see [`Scoreboard::rate_of`].
    first_tx_mstamp_ns: Nanos,
    delivered_mstamp_ns: Nanos,
    delivered: u64,
    delivered_ce: u64,
    lost: u64,
    tx_in_flight: u32,
    accounted: bool,
    is_app_limited: bool,
    is_retrans: bool,
    pub(crate) flags: u8,
    /// Time-sorted list links as distances in segments (NIL_DELTA: none).
    prev_delta: i32,
    next_delta: i32,
}

/// "No neighbour" in a segment's list links.
const NIL_DELTA: i32 = i32::MIN;

impl Seg {
    fn new(xmit_ns: Nanos, r: &PacketRateState) -> Seg {
        let mut s = Seg { xmit_ns, prev_delta: NIL_DELTA, next_delta: NIL_DELTA, ..Seg::default() };
        s.set_rate(r);
        s
    }

    /// The delivery-rate snapshot as `cc::rate` reads it (see [`Scoreboard::rate_of`]).
    #[inline]
    fn rate(&self, seq: u64) -> PacketRateState {
        PacketRateState {
            sent_ns: self.xmit_ns,
            first_tx_mstamp_ns: self.first_tx_mstamp_ns,
            delivered_mstamp_ns: self.delivered_mstamp_ns,
            accounted: self.accounted,
            delivered: self.delivered,
            delivered_ce: self.delivered_ce,
            lost: self.lost,
            tx_in_flight: self.tx_in_flight,
            is_app_limited: self.is_app_limited,
            is_retrans: self.is_retrans,
            seq,
        }
    }

    /// This segment (number `seq`) is delivered: the tag counters and the rate sample (Linux
    /// `tcp_sacktag_one` / `tcp_clean_rtx_queue` with `tcp_rate_skb_delivered`). Reads and
    /// writes the segment in place: the rest of its rate snapshot is read only when it becomes
    /// the sample's packet. The caller checks that it was not SACKed before and sets its tags.
    #[inline(always)]
    fn deliver(&mut self, tp: &mut TcpCc, seq: u64, rs: &mut RateSample) -> Delivered {
        let f = self.flags;
        if f & F_LOST != 0 {
            tp.lost_out -= 1;
        }
        if f & F_RETRANS != 0 {
            tp.retrans_out -= 1;
        }
        tp.delivered += 1;
        // `rate::on_packet_delivered`, on the segment's own fields.
        if !self.accounted {
            if rate::is_newer_than_sample(rs, self.xmit_ns, seq) {
                rate::take_sample(tp, &self.rate(seq), rs);
            }
            self.accounted = true;
        }
        Delivered { xmit_ns: self.xmit_ns, ever_retrans: f & F_EVER_RETRANS != 0 }
    }

    /// The in-flight list neighbours (previous, next) of this segment, number `seq`, if it is
    /// linked, with the scoreboard's `snd_una` and `snd_nxt` (see `prev_from`, `next_from`).
    #[inline]
    fn links(&self, seq: u64, snd_una: u64, snd_nxt: u64) -> Option<(u64, u64)> {
        (self.flags & F_LINKED != 0).then(|| {
            (prev_from(seq, self.prev_delta, snd_una), next_from(seq, self.next_delta, snd_nxt))
        })
    }

    fn set_rate(&mut self, r: &PacketRateState) {
        debug_assert_eq!(
            r.sent_ns, self.xmit_ns,
            "a rate snapshot is taken when the segment is sent"
        );
        self.first_tx_mstamp_ns = r.first_tx_mstamp_ns;
        self.delivered_mstamp_ns = r.delivered_mstamp_ns;
        self.delivered = r.delivered;
        self.delivered_ce = r.delivered_ce;
        self.lost = r.lost;
        self.tx_in_flight = r.tx_in_flight;
        self.accounted = r.accounted;
        self.is_app_limited = r.is_app_limited;
        self.is_retrans = r.is_retrans;
    }
}

/// What tagging a segment delivered tells the RTT estimator and RACK.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Delivered {
    /// Time of the latest transmission of the segment.
    pub(crate) xmit_ns: Nanos,
    /// The segment was retransmitted at some point (its ACK is ambiguous, RFC 6298 §3 / Karn).
    pub(crate) ever_retrans: bool,
}

pub(crate) struct Scoreboard {
    /// First unacknowledged segment.
    pub(crate) snd_una: u64,
    /// Next new segment to send.
    pub(crate) snd_nxt: u64,
    /// One entry per segment of [snd_una, snd_nxt).
    segs: ChunkDeque<Seg, SEGS_PER_CHUNK>,
    /// Time-sorted in-flight list (oldest transmission first).
    ts_head: u64,
    ts_tail: u64,
    /// Lost segments awaiting retransmission, in marking order (entries may be stale: a segment
    /// SACKed or acknowledged since is skipped when it comes up).
    lost_queue: VecDeque<u64>,
    /// SACK blocks of the last ACK processed (Linux `recv_sack_cache`), the first
    /// `n_sack_cache` of them (the others are (0, 0)).
    sack_cache: [(u64, u64); MAX_SACK_BLOCKS],
    n_sack_cache: usize,
    /// One past the highest segment ever SACKed (Linux `tcp_highest_sack_seq` while anything
    /// is SACKed; see `Sender::fack`).
    pub(crate) highest_sacked_end: u64,
    /// Retransmissions marked lost again (Linux TCPLostRetransmit): a counter for results,
    /// kept here because `mark_lost` is where a lost retransmission is seen.
    pub(crate) lost_retrans: u64,
}

impl Scoreboard {
    pub(crate) fn new() -> Scoreboard {
        Scoreboard {
            snd_una: 0,
            snd_nxt: 0,
            segs: ChunkDeque::new(),
            ts_head: NIL,
            ts_tail: NIL,
            lost_queue: VecDeque::new(),
            sack_cache: [(0, 0); MAX_SACK_BLOCKS],
            n_sack_cache: 0,
            highest_sacked_end: 0,
            lost_retrans: 0,
        }
    }

    #[inline]
    pub(crate) fn seg(&self, seq: u64) -> &Seg {
        &self.segs[(seq - self.snd_una) as usize]
    }

    #[inline]
    fn seg_mut(&mut self, seq: u64) -> &mut Seg {
        let i = (seq - self.snd_una) as usize;
        &mut self.segs[i]
    }

    /// Tags of segment `seq` (in [snd_una, snd_nxt)).
    #[inline]
    pub(crate) fn flags(&self, seq: u64) -> u8 {
        self.seg(seq).flags
    }

    /// Segment `seq`'s delivery-rate snapshot as `cc::rate` reads it.
    #[inline]
    pub(crate) fn rate_of(&self, seq: u64) -> PacketRateState {
        self.seg(seq).rate(seq)
    }

    /// Lost segments are waiting for retransmission (some entries may be stale).
    #[inline]
    pub(crate) fn lost_queue_len(&self) -> usize {
        self.lost_queue.len()
    }

    // ---- transmissions ----

    /// A new segment (`snd_nxt`) goes out now; returns its number.
    #[inline]
    pub(crate) fn on_send_new(&mut self, now: Nanos, rate: PacketRateState) -> u64 {
        let seq = self.snd_nxt;
        self.snd_nxt += 1;
        // `ts_push_tail`, with the new segment's own links written as it is built rather than
        // looked up again in the ring. The tail's forward link already names `seq` (it names
        // `snd_nxt`), and the new segment's names the next one.
        let tail = self.ts_tail;
        let mut s = Seg::new(now, &rate);
        s.prev_delta = link_to(seq, tail);
        s.next_delta = 1;
        s.flags = F_LINKED;
        if tail != NIL {
            debug_assert_eq!(
                link_from(tail, self.seg(tail).next_delta),
                seq,
                "the tail links to snd_nxt"
            );
        } else {
            self.ts_head = seq;
        }
        self.ts_tail = seq;
        self.segs.push_back(s);
        seq
    }

    /// Segment `seq` is about to be retransmitted at `now`: off the in-flight list, tagged R.
    /// [`Scoreboard::on_retransmitted`] puts it back at the tail with its new rate snapshot.
    #[inline]
    pub(crate) fn on_retransmit(&mut self, now: Nanos, seq: u64) {
        self.ts_unlink(seq);
        let s = self.seg_mut(seq);
        s.flags |= F_RETRANS | F_EVER_RETRANS;
        s.xmit_ns = now;
    }

    #[inline]
    pub(crate) fn on_retransmitted(&mut self, seq: u64, rate: PacketRateState) {
        self.seg_mut(seq).set_rate(&rate);
        self.ts_push_tail(seq);
    }

    /// The next lost segment to retransmit (Linux `tcp_xmit_retransmit_queue`: lost and neither
    /// SACKed nor already retransmitted), taken off the queue; stale entries are dropped.
    #[inline]
    pub(crate) fn next_lost(&mut self) -> Option<u64> {
        loop {
            match self.lost_queue.front().copied() {
                Some(s) if s >= self.snd_una && s < self.snd_nxt => {
                    let f = self.seg(s).flags;
                    self.lost_queue.pop_front();
                    if f & F_LOST != 0 && f & (F_RETRANS | F_SACKED) == 0 {
                        return Some(s);
                    }
                }
                Some(_) => {
                    self.lost_queue.pop_front();
                }
                None => return None,
            }
        }
    }

    // ---- ACK processing ----

    /// Tag segment `seq` SACKed: counters, rate sample, off the in-flight list. None if it was
    /// SACKed before (already counted).
    #[inline]
    pub(crate) fn tag_sacked(
        &mut self,
        tp: &mut TcpCc,
        seq: u64,
        rs: &mut RateSample,
    ) -> Option<Delivered> {
        let (una, nxt) = (self.snd_una, self.snd_nxt);
        let s = self.seg_mut(seq);
        let f = s.flags;
        if f & F_SACKED != 0 {
            return None;
        }
        let d = s.deliver(tp, seq, rs);
        tp.sacked_out += 1;
        let links = s.links(seq, una, nxt);
        s.flags = (f | F_SACKED) & !(F_LOST | F_RETRANS | F_LINKED);
        if let Some((prev, next)) = links {
            s.prev_delta = NIL_DELTA;
            s.next_delta = NIL_DELTA;
            self.ts_bridge(prev, next);
        }
        self.highest_sacked_end = self.highest_sacked_end.max(seq + 1);
        Some(d)
    }

    /// Ask the CPU to fetch the first segments (the next ACK's) ahead of their use.
    #[inline]
    pub(crate) fn prefetch_head(&self) {
        for i in 0..HEAD_PREFETCH_SEGS {
            self.segs.prefetch(i);
        }
    }

    /// The head segment (`snd_una`) is cumulatively acknowledged: tag it delivered unless it was
    /// SACKed before (then None: already counted), and drop it. The segment is looked up once,
    /// and, as it leaves the ring, only its list neighbours' links are rewritten; as the list's
    /// head (the common case) none: its successor's back link names it, below `snd_una` once
    /// it is gone, which reads as no predecessor.
    #[inline]
    pub(crate) fn ack_head(&mut self, tp: &mut TcpCc, rs: &mut RateSample) -> Option<Delivered> {
        let seq = self.snd_una;
        let s = &mut self.segs[0];
        let d = if s.flags & F_SACKED != 0 {
            tp.sacked_out -= 1;
            None
        } else {
            Some(s.deliver(tp, seq, rs))
        };
        if let Some((prev, next)) = s.links(seq, self.snd_una, self.snd_nxt) {
            if prev == NIL {
                self.ts_head = next;
                if next == NIL {
                    self.ts_tail = NIL;
                }
            } else {
                self.ts_bridge(prev, next);
            }
        }
        self.segs.pop_front();
        tp.packets_out -= 1;
        self.snd_una += 1;
        d
    }

    // ---- loss marking ----

    /// Mark segment `seq` lost: Linux `tcp_mark_skb_lost`, the one way both RACK (RFC 8985 §6.2,
    /// `tcp_rack_detect_loss`) and the RTO (`tcp_timeout_mark_lost`) mark a segment.
    ///
    /// ```text
    ///   tags before  after  counters                      loss event (algorithm told)
    ///   S            S      -                             no: it was delivered
    ///   -  or  R     L      lost_out + 1 (R: retrans_out − 1)   yes: newly lost
    ///   L|R          L      retrans_out − 1               yes: a retransmission was lost again
    ///   L            L      -                             no: already counted, not resent yet
    /// ```
    ///
    /// The segment leaves the in-flight list and joins the retransmit queue. On a loss event the
    /// algorithm's `skb_marked_lost` hook runs with the segment's send-time snapshot (Linux
    /// `tcp_notify_skb_loss_event`, where BBRv3's tree calls `ca_ops->skb_marked_lost`); returns
    /// whether it ran. `tp.lost` counts newly lost segments only. (Linux's
    /// `tcp_notify_skb_loss_event` also counts a lost retransmission in `tp->lost`, so that
    /// `rs->losses` includes it; this model has never done that, on either path, and changing it
    /// would change every algorithm's loss rate, so it is left for a change of its own.)
    #[inline]
    pub(crate) fn mark_lost(&mut self, tp: &mut TcpCc, cc: &mut Cc, seq: u64) -> bool {
        let f = self.seg(seq).flags;
        if f & F_SACKED != 0 {
            return false;
        }
        if f & F_RETRANS != 0 {
            // A retransmission was lost too: it goes back to the retransmit queue.
            tp.retrans_out -= 1;
            self.lost_retrans += 1;
        }
        // Tags first, then unlink: `ts_unlink` clears F_LINKED in the tags it finds, so writing
        // tags computed before the unlink would set F_LINKED again on an unlinked segment.
        self.seg_mut(seq).flags = (f | F_LOST) & !F_RETRANS;
        self.ts_unlink(seq);
        self.lost_queue.push_back(seq);
        if f & F_LOST == 0 {
            tp.lost_out += 1;
            tp.lost += 1;
        }
        let loss_event = f & F_LOST == 0 || f & F_RETRANS != 0;
        if loss_event {
            let p = self.rate_of(seq);
            cc.skb_marked_lost(tp, &p);
        }
        loss_event
    }

    /// The RTO fired (Linux `tcp_enter_loss` → `tcp_timeout_mark_lost`): every segment not SACKed
    /// is presumed lost, earlier retransmissions too, and the retransmit queue is rebuilt in
    /// sequence order.
    ///
    /// This used to inline its own marking, which differed from `mark_lost` in two ways. (1) It
    /// wrote tags computed before unlinking the segment from the in-flight list, which put
    /// F_LINKED back on every segment that had been in flight: the list's head and tail were
    /// right but those segments claimed to be linked with null links, so the next unlink of one
    /// of them (its retransmission, or a cumulative ACK) reset the head and tail and cut every
    /// segment sent since out of the list. RACK walks that list, so after an RTO it could no
    /// longer see lost retransmissions or later new data, and losses it should have found took
    /// another RTO. (2) It told the algorithm only of segments not marked lost before, not of a
    /// lost retransmission (L|R), where Linux's `tcp_mark_skb_lost` does; only BBRv3 listens.
    /// Linux uses `tcp_mark_skb_lost` on both paths; so does this model now.
    ///
    /// Not modelled: Linux, as RFC 8985 §6.3 (upon RTO expiration) has it, marks only the head
    /// and the segments sent at least a RACK RTT ago (`tcp_rack_skb_timeout(tp, skb, 0) > 0`
    /// spares the others), and handles SACK reneging (a SACKed head); here every unSACKed
    /// segment is marked and the receiver never reneges.
    pub(crate) fn timeout_mark_lost(&mut self, tp: &mut TcpCc, cc: &mut Cc) {
        self.lost_queue.clear();
        for seq in self.snd_una..self.snd_nxt {
            self.mark_lost(tp, cc, seq);
        }
    }

    /// Eifel undo after a spurious RTO (Linux `tcp_undo_cwnd_reduction` with `unmark_loss`): the
    /// segments marked lost were not; take them off the retransmit queue and, unless a
    /// retransmission of them is in flight (still linked), back into the in-flight list.
    pub(crate) fn unmark_lost(&mut self, tp: &mut TcpCc) {
        let mut seq = self.snd_una;
        while seq < self.snd_nxt {
            let f = self.seg(seq).flags;
            if f & F_LOST != 0 {
                tp.lost_out -= 1;
                self.seg_mut(seq).flags = f & !F_LOST;
                if f & F_RETRANS == 0 {
                    // Back into the in-flight list, in transmission order (list stays sorted
                    // enough: these were sent before anything retransmitted later).
                    self.ts_push_tail(seq);
                }
            }
            seq += 1;
        }
        self.lost_queue.clear();
    }

    /// Free the ring's memory once nothing is outstanding.
    pub(crate) fn release_buffers(&mut self) {
        if self.segs.is_empty() {
            self.segs.release();
        }
        if self.lost_queue.is_empty() {
            self.lost_queue = VecDeque::new();
        }
    }

    /// Recount the tag counters from the tags, and walk the in-flight list: it must reach
    /// exactly the segments tagged F_LINKED, with consistent back links.
    pub(crate) fn check_invariants(&self, tp: &TcpCc) -> Result<(), String> {
        self.check_in_flight_list()?;
        let (mut sacked, mut lost, mut retrans) = (0u32, 0u32, 0u32);
        for s in self.segs.iter() {
            if s.flags & F_SACKED != 0 {
                sacked += 1;
            }
            if s.flags & F_LOST != 0 {
                lost += 1;
            }
            if s.flags & F_RETRANS != 0 {
                retrans += 1;
            }
        }
        let n = self.segs.len() as u32;
        if n != tp.packets_out {
            return Err(format!("packets_out {} != scoreboard {}", tp.packets_out, n));
        }
        if sacked != tp.sacked_out || lost != tp.lost_out || retrans != tp.retrans_out {
            return Err(format!(
                "counters sacked {}/{} lost {}/{} retrans {}/{}",
                tp.sacked_out, sacked, tp.lost_out, lost, tp.retrans_out, retrans
            ));
        }
        Ok(())
    }
}
