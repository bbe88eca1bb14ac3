//! The event queue: a 4-ary min-heap of 128-bit (time, kind, id) keys (`EventKey`).
//!
//! Why not `std`'s binary heap: the queue holds O(links + flows) entries (tens in the benchmark
//! scenarios) and every packet event pops one and pushes one. A 4-ary heap is half as deep, and
//! its four children of 16 bytes sit in one 64-byte cache line, so a pop compares four keys per
//! level in one line instead of two keys per level over twice the levels. Keys are unique per
//! pending event, so any correct heap pops the same sequence: the order is the keys' alone.

/// Children per node.
const ARITY: usize = 4;

/// The key of no event: fills every slot past the heap's end, so each node has four children to
/// compare whether or not they exist. No event has it (an event's kind is below 2³²−1).
const VACANT: u128 = u128::MAX;

#[derive(Debug, Default)]
pub(crate) struct EventHeap {
    /// The heap in `keys[..len]`, then `VACANT` in every slot a node below `len` could name as
    /// a child (`keys.len() > ARITY · len`).
    keys: Vec<u128>,
    len: usize,
}

impl EventHeap {
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub fn peek(&self) -> Option<u128> {
        if self.len == 0 {
            None
        } else {
            Some(self.keys[0])
        }
    }

    #[inline]
    pub fn push(&mut self, key: u128) {
        debug_assert!(key != VACANT);
        let mut i = self.len;
        self.len += 1;
        if self.keys.len() <= ARITY * self.len {
            self.keys.resize(2 * ARITY * self.len + 1, VACANT);
        }
        // Sift up: move parents down into the hole until the key fits.
        while i > 0 {
            let parent = (i - 1) / ARITY;
            let p = self.keys[parent];
            if p <= key {
                break;
            }
            self.keys[i] = p;
            i = parent;
        }
        self.keys[i] = key;
    }

    /// Remove and return the smallest key.
    #[inline]
    pub fn pop(&mut self) -> Option<u128> {
        if self.len == 0 {
            return None;
        }
        self.len -= 1;
        let last = std::mem::replace(&mut self.keys[self.len], VACANT);
        if self.len == 0 {
            return Some(last);
        }
        let top = self.keys[0];
        self.sift_down_from_root(last);
        Some(top)
    }

    /// Remove the smallest key and insert `key` in one sift (a pop then a push would sift
    /// twice): the link whose pipe head just arrived schedules its next arrival. The heap
    /// must not be empty.
    #[inline]
    pub fn replace_top(&mut self, key: u128) {
        debug_assert!(self.len > 0 && key != VACANT);
        self.sift_down_from_root(key);
    }

    /// Put `key` in the root's place (the root's key is dropped) and sift it down: move the
    /// smallest child up into the hole until the key fits. The smallest of four children is
    /// picked without branches (which child wins is a coin toss to a branch predictor, and
    /// mispredicted picks were a fifth of a run's mispredicted branches); vacant children
    /// never win against a key.
    #[inline]
    fn sift_down_from_root(&mut self, key: u128) {
        let (keys, n) = (&mut self.keys[..], self.len);
        let mut i = 0;
        loop {
            let first = ARITY * i + 1;
            if first >= n {
                break; // a leaf (the heap's depth is steady: a well-predicted test)
            }
            let c = &keys[first..first + ARITY];
            let (a, ka) = if c[1] < c[0] { (1, c[1]) } else { (0, c[0]) };
            let (b, kb) = if c[3] < c[2] { (3, c[3]) } else { (2, c[2]) };
            let (best, best_key) = if kb < ka { (b, kb) } else { (a, ka) };
            if key <= best_key {
                break;
            }
            keys[i] = best_key;
            i = first + best;
        }
        keys[i] = key;
    }

    /// Every key, in no particular order.
    #[cfg(test)]
    pub fn iter(&self) -> impl Iterator<Item = u128> + '_ {
        self.keys[..self.len].iter().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random pushes, pops and root replacements interleaved: the heap pops exactly what a sorted
    /// list would.
    #[test]
    fn pops_in_key_order_like_a_sorted_list() {
        let mut rng = crate::rng::Rng::new(7, 1);
        let mut heap = EventHeap::default();
        let mut model: Vec<u128> = Vec::new();
        for round in 0..20_000 {
            let r = rng.next_u64() % 6;
            if !model.is_empty() && r == 5 {
                // Replace the smallest key by a new one, as an arriving pipe head does.
                model.sort_unstable();
                model.remove(0);
                let k = ((rng.next_u64() % 64) as u128) << 64 | (rng.next_u64() % 8) as u128;
                heap.replace_top(k);
                model.push(k);
            } else if model.is_empty() || !r.is_multiple_of(3) {
                // Keys drawn from a small range so that equal times (and equal keys) occur.
                let k = ((rng.next_u64() % 64) as u128) << 64 | (rng.next_u64() % 8) as u128;
                heap.push(k);
                model.push(k);
            } else {
                model.sort_unstable();
                let want = model.remove(0);
                assert_eq!(heap.pop(), Some(want), "round {round}");
            }
            assert_eq!(heap.len(), model.len());
            assert_eq!(heap.peek(), model.iter().copied().min());
        }
        model.sort_unstable();
        for want in model {
            assert_eq!(heap.pop(), Some(want));
        }
        assert_eq!(heap.pop(), None);
    }
}
