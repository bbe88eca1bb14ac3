//! ACK aggregation (`extra_acked`): how much more data the ACKs of an "epoch" announced than the
//! bandwidth estimate explains, so cwnd can cover the gaps of aggregated or stretched ACKs (Wi-Fi,
//! offload, delayed ACKs) without being mistaken for a larger BDP (Linux
//! `bbr_update_ack_aggregation`, draft §BBR.extra_acked).
//!
//! ```text
//! epoch        starts when ACKs arrive no faster than bw predicts (or after 2^20 packets)
//! expected     = bw · (now − epoch start)
//! extra_acked  = min(acked in epoch − expected, cwnd)
//! allowance    = windowed max of extra_acked, capped at 100 ms of bw
//! ```
//!
//! The max is kept in two slots of 5 rounds (Linux; window 5–10 rounds), 1 round in STARTUP where
//! the version does so (v2alpha `bbr_extra_acked_in_startup`, v3), or, in the draft's form
//! ([`ExtraAckedMax::DraftFilter`]), in a windowed max filter over 10 rounds, used uncapped:
//!
//! ```text
//! BBR.extra_acked = UpdateWindowedMaxFilter(filter=BBR.ExtraACKedFilter, value=extra,
//!                     time=BBR.round_count, window_length=BBRExtraAckedFilterLen)
//! ``` Time is ns (the family rule,
//! see `bbr/mod.rs`): Linux computes the epoch in µs.

use super::round::RoundCounter;
use super::units::{packets_in, BW_UNIT, GAIN_SHIFT, GAIN_UNIT};
use super::windowed_filter::MaxFilter;
use super::windowed_filter::TwoSlotMax;
use crate::{Nanos, RateSample};

/// Weight of the aggregation estimate in the cwnd target (1.0, Linux `bbr_extra_acked_gain`).
pub const EXTRA_ACKED_GAIN: u64 = GAIN_UNIT;
/// Rounds per slot of the 2-slot max filter (window 5–10 rounds).
pub const EXTRA_ACKED_WIN_RTTS: u32 = 5;
/// Cap the allowance at 100 ms worth of bandwidth (`bbr_extra_acked_max_us`): a sender stalled
/// longer than that had an idle path, not aggregation.
pub const EXTRA_ACKED_MAX_US: u128 = 100_000;
/// Restart the epoch after this many packets acked (a stale epoch would overestimate).
pub const ACK_EPOCH_ACKED_RESET_THRESH: u32 = 1 << 20;
/// Linux keeps `ack_epoch_acked` in a 20-bit field.
const ACK_EPOCH_ACKED_MAX: u32 = 0xFFFFF;
/// Linux keeps `extra_acked_win_rtts` in a 5-bit field.
const WIN_RTTS_MAX: u32 = 0x1F;

/// How the windowed max of extra_acked is kept and turned into a cwnd term.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ExtraAckedMax {
    /// Linux `bbr_extra_acked` / `bbr_ack_aggregation_cwnd`: two slots of `win_rtts` rounds;
    /// the cwnd term is gain · max, capped at 100 ms of bw.
    #[default]
    LinuxSlots,
    /// Draft §BBR.extra_acked: a windowed max filter over `win_rtts` rounds, used as it is.
    DraftFilter,
}

#[derive(Clone, Debug)]
pub struct AckAggregation {
    /// Start of the current aggregation epoch.
    pub epoch_start_ns: Nanos,
    /// Packets acked in the epoch.
    pub epoch_acked: u32,
    /// Max extra_acked of the previous and current slot (Linux `extra_acked[2]`).
    slots: TwoSlotMax<u32>,
    /// Rounds in the current slot.
    win_rtts: u32,
    form: ExtraAckedMax,
    /// The draft form's filter (time: round count).
    round_max: MaxFilter,
}

impl AckAggregation {
    /// Nothing measured; the first epoch starts at `now`.
    pub fn new(now: Nanos) -> Self {
        Self::with_form(now, ExtraAckedMax::LinuxSlots)
    }

    /// As [`new`](Self::new), keeping the max in `form`.
    pub fn with_form(now: Nanos, form: ExtraAckedMax) -> Self {
        AckAggregation {
            epoch_start_ns: now,
            epoch_acked: 0,
            slots: TwoSlotMax::default(),
            win_rtts: 0,
            form,
            round_max: MaxFilter::new_max(),
        }
    }

    /// A new epoch from `now` (restart after idle: the idle time is not aggregation).
    #[inline]
    pub fn restart_epoch(&mut self, now: Nanos) {
        self.epoch_start_ns = now;
        self.epoch_acked = 0;
    }

    /// At a round start: move to the other slot every `win_rtts` rounds, forgetting its old max.
    #[inline]
    fn advance_window(&mut self, win_rtts: u32) {
        self.win_rtts = (self.win_rtts + 1).min(WIN_RTTS_MAX);
        if self.win_rtts >= win_rtts {
            self.win_rtts = 0;
            self.slots.advance();
        }
    }

    /// Account an ACK of `acked` packets at `stamp_ns`; returns this ACK's extra_acked (packets
    /// beyond what `bw` explains since the epoch began, at most `cwnd`).
    #[inline]
    fn epoch_extra_acked(&mut self, bw: u64, stamp_ns: Nanos, acked: u32, cwnd: u32) -> u32 {
        let epoch_ns = stamp_ns.saturating_sub(self.epoch_start_ns);
        let mut expected = packets_in(bw, epoch_ns).min(u32::MAX as u128) as u32;
        // Reset the epoch if ACKs arrive slower than expected, or after very many packets.
        if self.epoch_acked <= expected || self.epoch_acked + acked >= ACK_EPOCH_ACKED_RESET_THRESH
        {
            self.restart_epoch(stamp_ns);
            expected = 0;
        }
        self.epoch_acked = (self.epoch_acked + acked).min(ACK_EPOCH_ACKED_MAX);
        (self.epoch_acked - expected).min(cwnd)
    }

    /// `bbr_update_ack_aggregation` for one ACK: skip invalid samples, at a round start move to
    /// the other slot every `win_rtts` rounds, account the ACK in the epoch and keep its
    /// extra_acked (returned) in the current slot.
    #[inline]
    pub fn update(
        &mut self,
        rs: &RateSample,
        round: &RoundCounter,
        win_rtts: u32,
        bw: u64,
        stamp_ns: Nanos,
        cwnd: u32,
    ) -> Option<u32> {
        if rs.acked_sacked == 0 || rs.delivered < 0 || rs.interval_ns <= 0 {
            return None;
        }
        if round.round_start {
            self.advance_window(win_rtts);
        }
        let extra = self.epoch_extra_acked(bw, stamp_ns, rs.acked_sacked, cwnd);
        self.record(extra);
        if self.form == ExtraAckedMax::DraftFilter {
            self.round_max.update(win_rtts as u64, round.round_count, extra as u64);
        }
        Some(extra)
    }

    /// Keep `extra` in the current slot's max.
    #[inline]
    fn record(&mut self, extra: u32) {
        self.slots.update(extra);
    }

    /// `bbr_extra_acked`: the max over the two slots.
    #[inline]
    pub fn extra_acked(&self) -> u32 {
        self.slots.get()
    }

    /// `bbr_ack_aggregation_cwnd`: gain × extra_acked, at most 100 ms of `bw`.
    #[inline]
    pub fn cwnd_allowance(&self, bw: u64) -> u32 {
        let max_aggr = (bw as u128 * EXTRA_ACKED_MAX_US / BW_UNIT).min(u32::MAX as u128) as u32;
        let aggr = ((EXTRA_ACKED_GAIN * self.extra_acked() as u64) >> GAIN_SHIFT) as u32;
        aggr.min(max_aggr)
    }

    /// The cwnd term (§BBR.extra_acked in §UpdateMaxInflight; Linux `bbr_ack_aggregation_cwnd`).
    #[inline]
    pub fn allowance(&self, bw: u64) -> u32 {
        match self.form {
            ExtraAckedMax::LinuxSlots => self.cwnd_allowance(bw),
            ExtraAckedMax::DraftFilter => self.round_max.get().min(u32::MAX as u64) as u32,
        }
    }
}
