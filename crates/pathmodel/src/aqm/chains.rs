//! Many FIFOs in one arena (FQ-CoDel's per-flow queues): every waiting packet sits in a slot of
//! one `Vec`, and each queue is a chain of slots from its head to its tail, linked by index.
//! A freed slot goes to the head of a free chain and is the next one filled.
//!
//! Why not one `VecDeque` per queue: with a 1514-byte quantum FQ-CoDel serves another flow with
//! every packet, so each enqueue wrote to the tail of another flow's ring, a line last touched
//! when that ring went round — 1000 rings of each flow's peak length are megabytes, and most of
//! those writes missed the cache. Here an enqueue fills the slot the last dequeue freed (still
//! in cache), and all the queues together span only as many slots as packets were ever waiting
//! at once.

use crate::Nanos;

/// No slot: the end of a chain, or an empty one.
pub(crate) const NIL: u32 = u32::MAX;

/// One waiting packet with the time it entered, and the next packet of its chain.
struct Slot<P> {
    entered_ns: Nanos,
    next: u32,
    /// None while the slot is free.
    p: Option<P>,
}

/// One queue's ends in the arena ([`NIL`] both when it is empty).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Chain {
    head: u32,
    tail: u32,
}

impl Default for Chain {
    fn default() -> Chain {
        Chain { head: NIL, tail: NIL }
    }
}

impl Chain {
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.head == NIL
    }
}

/// The slots of every chain, and the free ones.
pub(crate) struct Chains<P> {
    slots: Vec<Slot<P>>,
    /// The most recently freed slot, linked through `next` to the others.
    free: u32,
}

impl<P> Chains<P> {
    pub(crate) fn new() -> Chains<P> {
        Chains { slots: Vec::new(), free: NIL }
    }

    /// `p`, entered at `entered_ns`, joins the tail of `c`.
    #[inline]
    pub(crate) fn push_back(&mut self, c: &mut Chain, entered_ns: Nanos, p: P) {
        let slot = Slot { entered_ns, next: NIL, p: Some(p) };
        let i = if self.free != NIL {
            let i = self.free;
            let s = &mut self.slots[i as usize];
            self.free = s.next;
            *s = slot;
            i
        } else {
            let i = u32::try_from(self.slots.len()).expect("fewer than 2^32 - 1 packets waiting");
            self.slots.push(slot);
            i
        };
        if c.tail == NIL {
            c.head = i;
        } else {
            self.slots[c.tail as usize].next = i;
        }
        c.tail = i;
    }

    /// The head of `c` with the time it entered, removed (its slot freed).
    #[inline]
    pub(crate) fn pop_front(&mut self, c: &mut Chain) -> Option<(Nanos, P)> {
        if c.head == NIL {
            return None;
        }
        let i = c.head;
        let s = &mut self.slots[i as usize];
        let p = s.p.take().expect("a chained slot holds a packet");
        c.head = s.next;
        if c.head == NIL {
            c.tail = NIL;
        }
        s.next = self.free;
        self.free = i;
        Some((s.entered_ns, p))
    }

    /// Start loading `c`'s head packet into the cache (a hint: nothing if `c` is empty).
    #[inline]
    pub(crate) fn prefetch_head(&self, c: &Chain) {
        if let Some(s) = self.slots.get(c.head as usize) {
            prefetch(s);
        }
    }

    /// Packets in `c` (a walk along it: for the rare overflow of zero-byte packets only).
    pub(crate) fn len(&self, c: &Chain) -> usize {
        let (mut n, mut i) = (0, c.head);
        while i != NIL {
            n += 1;
            i = self.slots[i as usize].next;
        }
        n
    }
}

/// Ask the CPU to load the cache line at `r` now, so that a read of it later finds it there
/// (x86-64's `prefetcht0`; elsewhere nothing). Only a hint: no result depends on it.
#[inline(always)]
pub(crate) fn prefetch<T>(r: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads nothing architecturally and cannot fault; `r` is a valid
    // reference besides.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((r as *const T).cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = r;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chains_keep_their_own_order_and_reuse_freed_slots() {
        let mut arena = Chains::new();
        let (mut a, mut b) = (Chain::default(), Chain::default());
        for k in 0..3u64 {
            arena.push_back(&mut a, k, k);
            arena.push_back(&mut b, 10 + k, 100 + k);
        }
        assert_eq!((arena.len(&a), arena.len(&b)), (3, 3));
        assert_eq!(arena.pop_front(&mut a), Some((0, 0)));
        assert_eq!(arena.pop_front(&mut b), Some((10, 100)));
        // The two freed slots are filled again before the arena grows.
        arena.push_back(&mut a, 3, 3);
        arena.push_back(&mut a, 4, 4);
        assert_eq!(arena.slots.len(), 6);
        let drain = |arena: &mut Chains<u64>, c: &mut Chain| {
            std::iter::from_fn(|| arena.pop_front(c).map(|(_, p)| p)).collect::<Vec<_>>()
        };
        assert_eq!(drain(&mut arena, &mut a), [1, 2, 3, 4]);
        assert_eq!(drain(&mut arena, &mut b), [101, 102]);
        assert!(a.is_empty() && b.is_empty() && arena.len(&a) == 0);
        // An emptied chain starts again from nothing.
        arena.push_back(&mut b, 7, 7);
        assert_eq!(drain(&mut arena, &mut b), [7]);
    }
}
