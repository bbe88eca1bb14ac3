//! BBR's windowed max filters (draft-ietf-ccwg-bbr §BBR.max_bw Max Filter, §BBR.extra_acked;
//! Linux `bbr_take_max_bw_sample` / `bbr_advance_max_bw_filter`, `bbr_update_ack_aggregation`'s
//! `extra_acked[2]`).
//!
//! Two forms, each written once:
//!
//! - [`TwoSlotMax`]: the max over the current window and the previous one, advanced by an event
//!   the version chooses. v2 and v3 advance BBR.max_bw once per ProbeBW cycle (window 1–2
//!   cycles, a virtual clock, BBR.cycle_count) and skip an advance into an empty window
//!   (`advance_if_sampled`); the ACK-aggregation estimate advances every 5 rounds (window 5–10
//!   rounds) unconditionally (`advance`). The draft:
//!
//!   ```text
//!   BBRAdvanceMaxBwFilter():
//!     BBR.cycle_count++
//!   BBRUpdateMaxBw():
//!     if (rs.delivery_rate >= BBR.max_bw || !rs.is_app_limited)
//!       BBR.max_bw = UpdateWindowedMaxFilter(filter=BBR.MaxBwFilter, value=rs.delivery_rate,
//!                                            time=BBR.cycle_count, window_length=MaxBwFilterLen)
//!   ```
//!
//! - [`MaxFilter`]: Kathleen Nichols' sliding-window max (`lib/win_minmax.c`, `crate::filter`),
//!   the draft's general form, on a round-count clock: v1's 10-round max_bw and the draft
//!   variant's 10-round extra_acked.

pub use crate::filter::MaxFilter;

/// The max of two adjacent windows: `slots[0]` the previous, `slots[1]` the current one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TwoSlotMax<T> {
    slots: [T; 2],
    /// Advances so far (the draft's BBR.cycle_count for BBR.max_bw).
    pub advances: u64,
}

impl<T: Copy + Ord + Default> TwoSlotMax<T> {
    /// The windowed max (Linux `bbr_max_bw`: max of the two slots).
    #[inline]
    pub fn get(&self) -> T {
        self.slots[0].max(self.slots[1])
    }

    /// Keep `v` in the current window's max.
    #[inline]
    pub fn update(&mut self, v: T) {
        self.slots[1] = self.slots[1].max(v);
    }

    /// Start a new window: the current one becomes the previous, the oldest is forgotten.
    #[inline]
    pub fn advance(&mut self) {
        self.advances += 1;
        self.slots[0] = self.slots[1];
        self.slots[1] = T::default();
    }

    /// As [`advance`](Self::advance), unless the current window has no sample: then the old
    /// window is kept (Linux `bbr_advance_max_bw_filter`: "no samples in this window; remember
    /// the old one").
    #[inline]
    pub fn advance_if_sampled(&mut self) {
        if self.slots[1] != T::default() {
            self.advance();
        }
    }
}
