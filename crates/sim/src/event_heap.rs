//! The event queue: a 4-ary min-heap of 128-bit (time, kind, id) keys (`EventKey`).
//!
//! Why not `std`'s binary heap: the queue holds O(links + flows) entries (tens in the benchmark
//! scenarios) and every packet event pops one and pushes one. A 4-ary heap is half as deep, and
//! its four children of 16 bytes sit in one 64-byte cache line, so a pop compares four keys per
//! level in one line instead of two keys per level over twice the levels. Keys are unique per
//! pending event, so any correct heap pops the same sequence: the order is the keys' alone.

/// Children per node.
const ARITY: usize = 4;

#[derive(Debug, Default)]
pub(crate) struct EventHeap {
    keys: Vec<u128>,
}

impl EventHeap {
    pub fn with_capacity(n: usize) -> EventHeap {
        EventHeap { keys: Vec::with_capacity(n) }
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    #[inline]
    pub fn peek(&self) -> Option<u128> {
        self.keys.first().copied()
    }

    #[inline]
    pub fn push(&mut self, key: u128) {
        let mut i = self.keys.len();
        self.keys.push(key);
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
        let last = self.keys.pop()?;
        let n = self.keys.len();
        if n == 0 {
            return Some(last);
        }
        let top = self.keys[0];
        // Sift `last` down from the root: move the smallest child up into the hole.
        let mut i = 0;
        loop {
            let first = ARITY * i + 1;
            if first >= n {
                break;
            }
            let end = (first + ARITY).min(n);
            let mut best = first;
            let mut best_key = self.keys[first];
            for c in first + 1..end {
                let k = self.keys[c];
                if k < best_key {
                    best = c;
                    best_key = k;
                }
            }
            if last <= best_key {
                break;
            }
            self.keys[i] = best_key;
            i = best;
        }
        self.keys[i] = last;
        Some(top)
    }

    /// Every key, in no particular order.
    #[cfg(test)]
    pub fn iter(&self) -> impl Iterator<Item = u128> + '_ {
        self.keys.iter().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random pushes and pops interleaved: the heap pops exactly what a sorted list would.
    #[test]
    fn pops_in_key_order_like_a_sorted_list() {
        let mut rng = crate::rng::Rng::new(7, 1);
        let mut heap = EventHeap::default();
        let mut model: Vec<u128> = Vec::new();
        for round in 0..20_000 {
            if model.is_empty() || rng.next_u64() % 3 != 0 {
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
