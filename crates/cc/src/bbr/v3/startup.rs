//! v3's Startup and Drain (§Startup, §Drain): entering them, the loss and (Linux) ECN exits from
//! Startup, and Drain's inflight / 3-round exit. The bandwidth-plateau exit is the family's
//! full-pipe detector (`bbr/startup.rs`).

use super::{Bbr3, State, DEFAULT_CWND_GAIN};
use crate::bbr::units::GAIN_UNIT;
use crate::{RateSample, TcpCc};

/// §Exiting Startup Based on Packet Loss: StartupFullLossCnt = 6 discontiguous lost ranges in a
/// recovery round (Linux `bbr_full_loss_cnt` = 6 loss-marking events).
const STARTUP_FULL_LOSS_CNT: u32 = 6;
/// §Drain: leave Drain after 3 rounds even if inflight is still above the BDP (bw over-estimated).
pub(super) const DRAIN_MAX_ROUNDS: u64 = 3;

impl Bbr3 {
    /// §EnterStartup.
    pub(super) fn enter_startup(&mut self) {
        self.state = State::Startup;
        self.pacing_gain = self.p.startup_pacing_gain;
        self.cwnd_gain = self.p.startup_cwnd_gain;
    }

    /// §EnterDrain (+ Linux: ssthresh exported for monitoring, congestion signals reset).
    pub(super) fn enter_drain(&mut self, tp: &mut TcpCc) {
        self.state = State::Drain;
        self.pacing_gain = self.p.drain_pacing_gain;
        self.cwnd_gain = DEFAULT_CWND_GAIN;
        self.drain_start_round = self.round.round_count;
        tp.snd_ssthresh = self.inflight(tp, self.max_bw(), GAIN_UNIT);
        self.signals.reset();
    }

    /// Linux `bbr_handle_queue_too_high_in_startup` / §Exiting Startup Based on Packet Loss.
    pub(super) fn handle_queue_too_high_in_startup(&mut self, tp: &TcpCc) {
        self.undo_state = Some(State::Startup);
        self.full_bw.reached = true;
        self.full_bw.now = true;
        let bdp = self.inflight(tp, self.max_bw(), GAIN_UNIT);
        self.inflight_longterm = bdp.max(self.signals.inflight_latest);
    }

    /// §CheckStartupHighLoss (Linux `bbr_check_loss_too_high_in_startup`): at the end of a loss
    /// round spent in fast recovery, ≥ 6 loss events and loss > LossThresh.
    fn check_startup_high_loss(&mut self, tp: &TcpCc, rs: &RateSample, lost: u64) {
        if self.full_bw.reached {
            return;
        }
        let too_high = self.is_inflight_too_high(rs.tx_in_flight, lost, 0, 0);
        if self.signals.startup_loss_too_high(rs, tp.ca_state, STARTUP_FULL_LOSS_CNT, || too_high) {
            self.handle_queue_too_high_in_startup(tp);
        }
    }

    /// §CheckStartupDone.
    pub(super) fn check_startup_done(&mut self, tp: &mut TcpCc, rs: &RateSample, lost: u64) {
        self.check_startup_high_loss(tp, rs, lost);
        if self.state == State::Startup && self.full_bw.reached {
            self.enter_drain(tp);
        }
    }

    /// §CheckDrainDone.
    pub(super) fn check_drain_done(&mut self, tp: &TcpCc) {
        if self.state != State::Drain {
            return;
        }
        let inflight = self.inflight_for_checks(tp, tp.packets_in_flight());
        if inflight <= self.inflight(tp, self.max_bw(), GAIN_UNIT)
            || self.round.round_count > self.drain_start_round + self.p.drain_max_rounds
        {
            self.enter_probe_bw(tp);
        }
    }

    /// Linux `bbr_update_ecn_alpha` (+ Startup ECN exit), once per round.
    /// (Linux v3 folds the CE fraction into alpha only once the flow is ECN-eligible.)
    pub(super) fn update_ecn_alpha(&mut self, tp: &TcpCc) {
        self.ecn.refresh_eligible(tp, self.min_rtt.rtt_ns);
        if !self.ecn.eligible {
            return;
        }
        let Some(ce_ratio) = self.ecn.fold_round(tp) else {
            return; // nothing delivered since the last update
        };
        // Exit Startup after FULL_ECN_CNT consecutive rounds with CE ratio ≥ 1/2.
        if !self.full_bw.reached && self.ecn.startup_too_high(ce_ratio) {
            self.handle_queue_too_high_in_startup(tp);
        }
    }
}
