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
//! The chunks sit in a ring of chunk slots addressed by absolute chunk number (position /
//! `N`, masked by the ring's power-of-two size), so an index is a shift, a mask and two loads:
//! no wrap-around arithmetic and, with `N` a constant power of two, no bounds check inside a
//! chunk (a `VecDeque` of boxed slices cost ~10 more instructions per access, and a flow's
//! scoreboard is indexed a dozen times per segment). Pushing and popping at the ends stay O(1).

/// Target size of one chunk: 32 scoreboard segments. A flow in flight holds at least one chunk
/// (and a spare), so the chunk is what a flow with a small window pays: 8 KiB chunks were
/// 800 MB at 10⁵ flows of ~10 segments. Smaller chunks cross a boundary more often (1 KiB
/// measured ~2 % slower at 1 Gbit/s; the spare keeps crossings free of allocation).
pub const CHUNK_BYTES: usize = 2048;

/// Entries per chunk for elements of `elem_bytes`: the largest power of two that fits
/// `CHUNK_BYTES`, at least 16 — what a `ChunkDeque`'s `N` is meant to be.
pub const fn per_chunk(elem_bytes: usize) -> usize {
    let n = CHUNK_BYTES / if elem_bytes == 0 { 1 } else { elem_bytes };
    let p = if n < 16 { 16 } else { n };
    1 << (usize::BITS - 1 - p.leading_zeros())
}

/// A FIFO of `T` in chunks of `N` entries (`N` a power of two: see [`per_chunk`]).
pub struct ChunkDeque<T: Copy + Default, const N: usize> {
    /// Chunk slots: chunk number `c` (positions `c·N .. (c+1)·N`) lives in slot `c & (len - 1)`;
    /// the length is 0 or a power of two at least the number of chunks in use. Slots of no
    /// chunk in use are `None`.
    slots: Vec<Option<Box<[T; N]>>>,
    /// Position of the first element (positions restart at 0 when the queue empties).
    head: usize,
    len: usize,
    /// A chunk given back by the front, kept for the back's next one.
    spare: Option<Box<[T; N]>>,
}

impl<T: Copy + Default, const N: usize> Default for ChunkDeque<T, N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Copy + Default, const N: usize> ChunkDeque<T, N> {
    const N_IS_A_POWER_OF_TWO: () =
        assert!(N.is_power_of_two(), "ChunkDeque: N must be a power of two");

    pub const fn new() -> Self {
        #[allow(clippy::let_unit_value)]
        let () = Self::N_IS_A_POWER_OF_TWO;
        ChunkDeque { slots: Vec::new(), head: 0, len: 0, spare: None }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Chunks holding elements.
    fn chunks_in_use(&self) -> usize {
        if self.len == 0 {
            0
        } else {
            (self.head + self.len - 1) / N - self.head / N + 1
        }
    }

    /// Bytes of chunks held (content, free slots of the end chunks, the spare).
    pub fn allocated_bytes(&self) -> usize {
        (self.chunks_in_use() + self.spare.is_some() as usize) * N * std::mem::size_of::<T>()
    }

    /// The chunk holding position `pos` (which must be in use).
    #[inline(always)]
    fn chunk(&self, pos: usize) -> &[T; N] {
        let mask = self.slots.len().wrapping_sub(1);
        match &self.slots[(pos / N) & mask] {
            Some(c) => c,
            None => unreachable!("position {pos} is in a chunk in use"),
        }
    }

    #[inline(always)]
    fn chunk_mut(&mut self, pos: usize) -> &mut [T; N] {
        let mask = self.slots.len().wrapping_sub(1);
        match &mut self.slots[(pos / N) & mask] {
            Some(c) => c,
            None => unreachable!("position {pos} is in a chunk in use"),
        }
    }

    #[inline]
    pub fn push_back(&mut self, v: T) {
        let pos = self.head + self.len;
        if pos.is_multiple_of(N) {
            self.add_chunk(pos / N);
        }
        self.chunk_mut(pos)[pos % N] = v;
        self.len += 1;
    }

    /// Chunk number `c` starts: take the spare (or a new chunk) into its slot, doubling the
    /// slots first when every one is in use.
    #[cold]
    #[inline(never)]
    fn add_chunk(&mut self, c: usize) {
        let in_use = self.chunks_in_use();
        if in_use + 1 > self.slots.len() {
            let size = (2 * self.slots.len()).max(4);
            let mut slots: Vec<Option<Box<[T; N]>>> = (0..size).map(|_| None).collect();
            let first = self.head / N;
            let old_mask = self.slots.len().wrapping_sub(1);
            for k in first..first + in_use {
                slots[k & (size - 1)] = self.slots[k & old_mask].take();
            }
            self.slots = slots;
        }
        let chunk = self.spare.take().unwrap_or_else(|| Box::new([T::default(); N]));
        let mask = self.slots.len() - 1;
        debug_assert!(self.slots[c & mask].is_none());
        self.slots[c & mask] = Some(chunk);
    }

    #[inline]
    pub fn pop_front(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        let v = self.chunk(self.head)[self.head % N];
        self.head += 1;
        self.len -= 1;
        if self.head.is_multiple_of(N) || self.len == 0 {
            self.front_chunk_done();
        }
        Some(v)
    }

    /// The front chunk is used up, or the queue is empty: give the chunk back (an emptied
    /// queue starts its next chunk at position 0).
    #[cold]
    #[inline(never)]
    fn front_chunk_done(&mut self) {
        let mask = self.slots.len() - 1;
        let chunk = self.slots[((self.head - 1) / N) & mask].take().expect("front chunk");
        if self.spare.is_none() {
            self.spare = Some(chunk);
        }
        if self.len == 0 {
            self.head = 0;
        }
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
        Some(&self.chunk(pos)[pos % N])
    }

    #[inline]
    pub fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        if i >= self.len {
            return None;
        }
        let pos = self.head + i;
        Some(&mut self.chunk_mut(pos)[pos % N])
    }

    /// A hint to the CPU: element `i` (if any) will be read soon. No effect on the content.
    #[inline]
    pub fn prefetch(&self, i: usize) {
        #[cfg(target_arch = "x86_64")]
        if let Some(v) = self.get(i) {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            // SAFETY: SSE is part of the x86_64 baseline, and a prefetch reads nothing
            // architecturally and never faults.
            unsafe { _mm_prefetch::<_MM_HINT_T0>((v as *const T).cast::<i8>()) };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = i;
    }

    pub fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        (0..self.len).map(move |i| &self[i])
    }

    /// Drop every element and every chunk (a finished connection's scoreboard).
    pub fn release(&mut self) {
        *self = Self::new();
    }
}

impl<T: Copy + Default, const N: usize> std::ops::Index<usize> for ChunkDeque<T, N> {
    type Output = T;
    #[inline]
    fn index(&self, i: usize) -> &T {
        match self.get(i) {
            Some(v) => v,
            None => panic!("ChunkDeque index {i} out of range (len {})", self.len),
        }
    }
}

impl<T: Copy + Default, const N: usize> std::ops::IndexMut<usize> for ChunkDeque<T, N> {
    #[inline]
    fn index_mut(&mut self, i: usize) -> &mut T {
        let len = self.len;
        match self.get_mut(i) {
            Some(v) => v,
            None => panic!("ChunkDeque index {i} out of range (len {len})"),
        }
    }
}

impl<T: Copy + Default + std::fmt::Debug, const N: usize> std::fmt::Debug for ChunkDeque<T, N> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::VecDeque;

    proptest! {
        /// The same answers as `VecDeque` for any sequence of pushes, pops and reads, across
        /// chunk boundaries and through empty.
        #[test]
        fn behaves_as_a_vecdeque(ops in proptest::collection::vec((0u8..4, any::<u32>()), 1..3000)) {
            let mut q: ChunkDeque<u64, 16> = ChunkDeque::new();
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
        const PER: usize = per_chunk(32);
        let mut q: ChunkDeque<[u64; 4], PER> = ChunkDeque::new();
        let per = PER;
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
