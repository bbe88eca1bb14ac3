//! The time-sorted in-flight list of the scoreboard.
//!
//! Segments in flight are also linked, oldest transmission first, in a doubly linked list threaded
//! through the ring (Linux `tsorted_sent_queue`), which RACK walks from the oldest. A segment leaves
//! the list when it is SACKed, cumulatively ACKed or marked lost, and rejoins at the tail when it
//! is retransmitted. (Linux leaves lost segments on its list and skips them in the walk; unlinking
//! them here keeps the walk to segments that can still be lost.)
//!
//! Two links are implicit, so that the common case (segments sent in order, acknowledged from
//! the head) touches no neighbour: a back link below `snd_una` names a segment that left as the
//! list's head under a cumulative ACK (its successor's back link is not rewritten: the head has
//! no predecessor), and the tail's forward link names `snd_nxt`, the next new segment (sending
//! it does not rewrite the tail). Neither is a neighbour until that segment is sent.

use super::{Scoreboard, F_LINKED, NIL, NIL_DELTA};

/// A list link of segment `seq` to absolute, and back.
#[inline]
pub(super) fn link_from(seq: u64, delta: i32) -> u64 {
    if delta == NIL_DELTA {
        NIL
    } else {
        seq.wrapping_add_signed(delta as i64)
    }
}

/// A back link of segment `seq`: none if it names a segment below `snd_una` (the list's head
/// when it was cumulatively acknowledged; its successor's back link was left as it was).
#[inline]
pub(super) fn prev_from(seq: u64, delta: i32, snd_una: u64) -> u64 {
    let p = link_from(seq, delta);
    if p < snd_una {
        NIL
    } else {
        p
    }
}

/// A forward link of segment `seq`: none if it names `snd_nxt` or beyond (the tail's link to the
/// next new segment, written before that segment is sent).
#[inline]
pub(super) fn next_from(seq: u64, delta: i32, snd_nxt: u64) -> u64 {
    let n = link_from(seq, delta);
    if n >= snd_nxt {
        NIL
    } else {
        n
    }
}

#[inline]
pub(super) fn link_to(seq: u64, other: u64) -> i32 {
    if other == NIL {
        NIL_DELTA
    } else {
        let d = other.wrapping_sub(seq) as i64;
        i32::try_from(d).expect("in-flight segments within 2^31 of each other")
    }
}

impl Scoreboard {
    #[inline]
    pub(super) fn ts_unlink(&mut self, seq: u64) {
        let (una, nxt) = (self.snd_una, self.snd_nxt);
        let s = self.seg_mut(seq);
        let Some((prev, next)) = s.links(seq, una, nxt) else { return };
        s.flags &= !F_LINKED;
        s.prev_delta = NIL_DELTA;
        s.next_delta = NIL_DELTA;
        self.ts_bridge(prev, next);
    }

    /// Join the list around a segment taken out of it: `prev` and `next` were its neighbours.
    /// A new tail's forward link names `snd_nxt` (the next new segment joins there). Always
    /// inlined: as a call (which the compiler chose) it cost as much again as its few loads and
    /// stores.
    #[inline(always)]
    pub(super) fn ts_bridge(&mut self, prev: u64, next: u64) {
        if prev != NIL {
            let to = if next == NIL { self.snd_nxt } else { next };
            self.seg_mut(prev).next_delta = link_to(prev, to);
        } else {
            self.ts_head = next;
        }
        if next != NIL {
            self.seg_mut(next).prev_delta = link_to(next, prev);
        } else {
            self.ts_tail = prev;
        }
    }

    #[inline]
    pub(super) fn ts_push_tail(&mut self, seq: u64) {
        let (tail, nxt) = (self.ts_tail, self.snd_nxt);
        {
            let s = self.seg_mut(seq);
            s.prev_delta = link_to(seq, tail);
            s.next_delta = link_to(seq, nxt);
            s.flags |= F_LINKED;
        }
        if tail != NIL {
            self.seg_mut(tail).next_delta = link_to(tail, seq);
        } else {
            self.ts_head = seq;
        }
        self.ts_tail = seq;
    }

    /// The in-flight segment sent longest ago, if any.
    #[inline]
    pub(crate) fn oldest_in_flight(&self) -> Option<u64> {
        (self.ts_head != NIL).then_some(self.ts_head)
    }

    /// The in-flight segment sent after `seq` (which must be in the list).
    #[inline]
    pub(crate) fn sent_after(&self, seq: u64) -> Option<u64> {
        let n = next_from(seq, self.seg(seq).next_delta, self.snd_nxt);
        (n != NIL).then_some(n)
    }

    pub(super) fn check_in_flight_list(&self) -> Result<(), String> {
        let tagged = self.segs.iter().filter(|s| s.flags & F_LINKED != 0).count();
        let (mut walked, mut prev, mut cur) = (0usize, NIL, self.ts_head);
        while cur != NIL {
            if cur < self.snd_una || cur >= self.snd_nxt {
                return Err(format!(
                    "in-flight list reaches {cur}, outside [{}, {})",
                    self.snd_una, self.snd_nxt
                ));
            }
            let s = self.seg(cur);
            if s.flags & F_LINKED == 0 || prev_from(cur, s.prev_delta, self.snd_una) != prev {
                return Err(format!("in-flight list broken at {cur}"));
            }
            walked += 1;
            if walked > self.segs.len() {
                return Err("in-flight list has a cycle".into());
            }
            (prev, cur) = (cur, next_from(cur, s.next_delta, self.snd_nxt));
        }
        if prev != self.ts_tail || walked != tagged {
            return Err(format!(
                "in-flight list reaches {walked} segments, {tagged} are tagged linked"
            ));
        }
        Ok(())
    }
}
