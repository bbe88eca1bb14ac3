//! A FIFO of `Copy` values in fixed chunks of 2 KiB: what a flow's scoreboard is kept in.
//!
//! Why not `VecDeque`: a ring buffer's capacity is a power of two that only grows, and every
//! slot of it is eventually written as the ring wraps, so a ring holds up to twice its peak
//! content for the rest of the run, and each doubling copies. Measured on 8 BBRv3 streams at
//! 100 Gbit/s × 150 ms: the scoreboards' rings held 604 MB at the peak for ~2.5 M segments in
//! flight (~260 MB of segments). Here memory follows the content: a chunk is taken when the
//! back fills one and given back when the front empties one (one spare is kept, so a queue
//! that hovers around a chunk boundary does not allocate per element). An empty queue holds
//! no chunk at all, which matters at 10⁵ mostly idle flows.
//!
//! Indexing costs one more dependent load than a ring's (the chunk table, which stays in
//! cache); pushing and popping at the ends stay O(1).

use std::collections::VecDeque;

/// Target size of one chunk: 32 scoreboard segments. A flow in flight holds at least one chunk
/// (and a spare), so the chunk is what a flow with a small window pays: 8 KiB chunks were
/// 800 MB at 10⁵ flows of ~10 segments. Smaller chunks cross a boundary more often (1 KiB
/// measured ~2 % slower at 1 Gbit/s; the spare keeps crossings free of allocation).
const CHUNK_BYTES: usize = 2048;

pub struct ChunkDeque<T: Copy + Default> {
    chunks: VecDeque<Box<[T]>>,
    /// Index of the first element within `chunks[0]`.
    head: usize,
    len: usize,
    /// A chunk given back by the front, kept for the back's next one.
    spare: Option<Box<[T]>>,
}

impl<T: Copy + Default> Default for ChunkDeque<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Copy + Default> ChunkDeque<T> {
    /// Entries per chunk: a power of two (indexing is a shift and a mask), at least 16.
    const PER_CHUNK: usize = {
        let n = CHUNK_BYTES
            / if std::mem::size_of::<T>() == 0 {
                1
            } else {
                std::mem::size_of::<T>()
            };
        let p = if n < 16 { 16 } else { n };
        // The largest power of two ≤ p.
        1 << (usize::BITS - 1 - p.leading_zeros())
    };
    const SHIFT: u32 = Self::PER_CHUNK.trailing_zeros();
    const MASK: usize = Self::PER_CHUNK - 1;

    pub const fn new() -> Self {
        ChunkDeque {
            chunks: VecDeque::new(),
            head: 0,
            len: 0,
            spare: None,
        }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes of chunks held (content, free slots of the end chunks, the spare).
    pub fn allocated_bytes(&self) -> usize {
        (self.chunks.len() + self.spare.is_some() as usize)
            * Self::PER_CHUNK
            * std::mem::size_of::<T>()
    }

    #[inline]
    pub fn push_back(&mut self, v: T) {
        let pos = self.head + self.len;
        if pos >> Self::SHIFT == self.chunks.len() {
            self.add_chunk();
        }
        // The back element always lives in the last chunk.
        match self.chunks.back_mut() {
            Some(chunk) => chunk[pos & Self::MASK] = v,
            None => unreachable!("a chunk was just added"),
        }
        self.len += 1;
    }

    #[cold]
    #[inline(never)]
    fn add_chunk(&mut self) {
        let chunk = self
            .spare
            .take()
            .unwrap_or_else(|| vec![T::default(); Self::PER_CHUNK].into_boxed_slice());
        self.chunks.push_back(chunk);
    }

    #[inline]
    pub fn pop_front(&mut self) -> Option<T> {
        let v = *self.chunks.front()?.get(self.head)?;
        self.head += 1;
        self.len -= 1;
        if self.head == Self::PER_CHUNK || self.len == 0 {
            self.front_chunk_done();
        }
        Some(v)
    }

    /// The front chunk is used up, or the queue is empty: give the chunk back (an emptied
    /// queue starts its next chunk at slot 0).
    #[cold]
    #[inline(never)]
    fn front_chunk_done(&mut self) {
        let chunk = self.chunks.pop_front().expect("front chunk");
        if self.spare.is_none() {
            self.spare = Some(chunk);
        }
        self.head = 0;
    }

    #[inline]
    pub fn front(&self) -> Option<&T> {
        self.get(0)
    }

    #[inline]
    pub fn back(&self) -> Option<&T> {
        self.len.checked_sub(1).and_then(|i| self.get(i))
    }

    #[inline]
    pub fn get(&self, i: usize) -> Option<&T> {
        if i >= self.len {
            return None;
        }
        let pos = self.head + i;
        Some(&self.chunks[pos >> Self::SHIFT][pos & Self::MASK])
    }

    #[inline]
    pub fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        if i >= self.len {
            return None;
        }
        let pos = self.head + i;
        Some(&mut self.chunks[pos >> Self::SHIFT][pos & Self::MASK])
    }

    pub fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        (0..self.len).map(move |i| &self[i])
    }

    /// Drop every element and every chunk (a finished connection's scoreboard).
    pub fn release(&mut self) {
        *self = Self::new();
    }
}

impl<T: Copy + Default> std::ops::Index<usize> for ChunkDeque<T> {
    type Output = T;
    #[inline]
    fn index(&self, i: usize) -> &T {
        match self.get(i) {
            Some(v) => v,
            None => panic!("ChunkDeque index {i} out of range (len {})", self.len),
        }
    }
}

impl<T: Copy + Default> std::ops::IndexMut<usize> for ChunkDeque<T> {
    #[inline]
    fn index_mut(&mut self, i: usize) -> &mut T {
        let len = self.len;
        match self.get_mut(i) {
            Some(v) => v,
            None => panic!("ChunkDeque index {i} out of range (len {len})"),
        }
    }
}

impl<T: Copy + Default + std::fmt::Debug> std::fmt::Debug for ChunkDeque<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The same answers as `VecDeque` for any sequence of pushes, pops and reads, across
        /// chunk boundaries and through empty.
        #[test]
        fn behaves_as_a_vecdeque(ops in proptest::collection::vec((0u8..4, any::<u32>()), 1..3000)) {
            let mut q: ChunkDeque<u64> = ChunkDeque::new();
            let mut model: VecDeque<u64> = VecDeque::new();
            for (op, v) in ops {
                match op {
                    0 | 1 => { q.push_back(v as u64); model.push_back(v as u64); }
                    2 => prop_assert_eq!(q.pop_front(), model.pop_front()),
                    _ => if !model.is_empty() {
                        let i = v as usize % model.len();
                        q[i] ^= 1;
                        model[i] ^= 1;
                    },
                }
                prop_assert_eq!(q.len(), model.len());
                prop_assert_eq!(q.front(), model.front());
                prop_assert_eq!(q.back(), model.back());
            }
            prop_assert!(q.iter().eq(model.iter()));
        }
    }

    #[test]
    fn memory_follows_the_content() {
        let mut q: ChunkDeque<[u64; 4]> = ChunkDeque::new();
        let per = ChunkDeque::<[u64; 4]>::PER_CHUNK;
        assert_eq!(per, CHUNK_BYTES / 32);
        assert_eq!(q.allocated_bytes(), 0);
        for i in 0..100 * per {
            q.push_back([i as u64; 4]);
        }
        assert_eq!(q.allocated_bytes(), 100 * CHUNK_BYTES);
        // Drain to one element: the chunks go (one spare stays).
        for _ in 0..100 * per - 1 {
            q.pop_front();
        }
        assert_eq!(q.len(), 1);
        assert_eq!(q.allocated_bytes(), 2 * CHUNK_BYTES);
        assert_eq!(q.front(), Some(&[100 * per as u64 - 1; 4]));
        q.pop_front();
        assert!(q.is_empty() && q.front().is_none());
        assert_eq!(q.allocated_bytes(), CHUNK_BYTES, "the spare");
        q.release();
        assert_eq!(q.allocated_bytes(), 0);
        // A FIFO that stays short reuses its chunks rather than allocating per element.
        for i in 0..10_000u64 {
            q.push_back([i; 4]);
            if q.len() > 3 {
                q.pop_front();
            }
        }
        assert!(q.allocated_bytes() <= 3 * CHUNK_BYTES);
    }
}
