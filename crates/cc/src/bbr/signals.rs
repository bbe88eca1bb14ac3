//! The per-round congestion signals of v2 and v3 (`bbr2_update_congestion_signals`,
//! draft §Updating the Model Upon Packet Loss).
//!
//! ```text
//! loss round  = from the first loss (or the previous loss round's end) until a packet sent after
//!               it is acked; at its end the short-term model may be cut once
//! bw_latest   = max delivery rate in the round      inflight_latest = max delivered in the round
//!               (the cut never goes below what the round actually delivered)
//! loss/ecn_in_round, loss/ecn_in_cycle: a loss (CE) happened in this round / probe cycle
//! ```

use crate::{CaState, RateSample};

#[derive(Clone, Copy, Debug, Default)]
pub struct CongestionSignals {
    /// `tp.delivered` that ends the current loss round.
    pub loss_round_delivered: u64,
    /// This ACK ended a loss round.
    pub loss_round_start: bool,
    pub loss_in_round: bool,
    pub ecn_in_round: bool,
    pub loss_in_cycle: bool,
    pub ecn_in_cycle: bool,
    /// ACKs with new losses in this loss round (STARTUP's loss exit; Linux keeps 4 bits).
    pub loss_events_in_round: u32,
    pub bw_latest: u64,
    pub inflight_latest: u32,
}

impl CongestionSignals {
    /// §ResetCongestionSignals (`bbr2_reset_congestion_signals`).
    #[inline]
    pub fn reset(&mut self) {
        self.loss_in_round = false;
        self.ecn_in_round = false;
        self.loss_in_cycle = false;
        self.ecn_in_cycle = false;
        self.bw_latest = 0;
        self.inflight_latest = 0;
    }

    /// §NoteLoss (`bbr2_skb_marked_lost`'s bookkeeping): the first loss of a round starts a loss
    /// round of its own, ending when what is delivered now has been acked.
    #[inline]
    pub fn note_loss(&mut self, delivered: u64) {
        if !self.loss_in_round {
            self.loss_round_delivered = delivered;
        }
        self.loss_in_round = true;
        self.loss_in_cycle = true;
    }

    /// Fold a valid sample into the round's latest rate and volume.
    #[inline]
    pub fn update_latest(&mut self, rs: &RateSample, sample_bw: u64) {
        self.bw_latest = self.bw_latest.max(sample_bw);
        self.inflight_latest = self.inflight_latest.max(rs.delivered.max(0) as u32);
    }

    /// Did this sample end the loss round? If so the next one ends at `delivered`.
    #[inline]
    pub fn check_loss_round_end(&mut self, rs: &RateSample, delivered: u64) -> bool {
        if rs.prior_delivered < self.loss_round_delivered {
            return false;
        }
        self.loss_round_delivered = delivered;
        self.loss_round_start = true;
        true
    }

    /// §AdvanceLatestDeliverySignals: a new round starts from this sample.
    #[inline]
    pub fn advance_latest(&mut self, rs: &RateSample, sample_bw: u64) {
        self.bw_latest = sample_bw;
        self.inflight_latest = rs.delivered.max(0) as u32;
    }

    /// STARTUP's loss exit (`bbr_check_loss_too_high_in_startup`, §CheckStartupHighLoss): at the
    /// end of a loss round spent in fast recovery with at least `full_loss_cnt` loss events and a
    /// loss rate that `too_high` confirms, the pipe is full. Counts this ACK's loss event.
    #[inline]
    pub fn startup_loss_too_high(
        &mut self,
        rs: &RateSample,
        ca_state: CaState,
        full_loss_cnt: u32,
        too_high: impl FnOnce() -> bool,
    ) -> bool {
        if rs.losses > 0 {
            self.loss_events_in_round = (self.loss_events_in_round + 1).min(0xF);
        }
        if self.loss_round_start
            && ca_state == CaState::Recovery
            && self.loss_events_in_round >= full_loss_cnt
            && too_high()
        {
            return true;
        }
        if self.loss_round_start {
            self.loss_events_in_round = 0;
        }
        false
    }
}
