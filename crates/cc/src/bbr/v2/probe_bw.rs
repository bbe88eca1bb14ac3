//! v2's PROBE_BW state machine: DOWN → CRUISE → REFILL → UP → DOWN (see the header), and the
//! exit from PROBE_RTT into it.

use super::{Bbr2, Phase, State};
use crate::bbr::probe_bw::{AckPhase, BW_PROBE_MAX_ROUNDS};
use crate::bbr::units::{linux_gain, Clock, BBR_UNIT, GAIN_SHIFT, GAIN_UNIT, INF_BW, INF_PKTS};
use crate::{RateSample, TcpCc};

/// PROBE_UP pushes inflight to 1.25·BDP (`bbr_bw_probe_pif_gain`).
pub(super) const BW_PROBE_PIF_GAIN: u64 = linux_gain(BBR_UNIT * 5 / 4);
/// Reno-coexistence probe interval = 1.0 × BDP (in packets) round trips (at most 63).
const BW_PROBE_RENO_GAIN: u64 = GAIN_UNIT;

impl Bbr2 {
    /// `bbr2_is_reno_coexistence_probe_time`: probe after min(63, target_inflight) rounds.
    fn is_reno_coexistence_probe_time(&self, tp: &TcpCc) -> bool {
        let inflight = self.target_inflight(tp);
        let reno_rounds = ((inflight as u64 * BW_PROBE_RENO_GAIN) >> GAIN_SHIFT) as u32;
        let rounds = BW_PROBE_MAX_ROUNDS.min(reno_rounds);
        self.probe_bw.rounds_since_bw_probe >= rounds
    }

    /// `bbr2_start_bw_probe_refill`: reset the short-term bounds and refill the pipe for a round.
    /// bbr2_new (Google BBRv2 slides, "Additive increase to rate and volume of inflight data when starting bw
    /// probing: inflight_hi += 1pkt; bw_hi += 1pkt/min_rtt") adds one packet to inflight_longterm
    /// (Linux `refill_add_inc`) and one packet per min_rtt to bw_hi (slide only).
    pub(super) fn start_probe_bw_refill(&mut self, tp: &TcpCc, bw_probe_up_rounds: u32) {
        self.reset_short_term_model();
        if self.inflight_longterm != INF_PKTS {
            self.inflight_longterm = self.inflight_longterm.saturating_add(self.p.refill_add_inc);
        }
        if self.p.refill_adds_bw && self.bw_hi != INF_BW && self.min_rtt.rtt_ns != u64::MAX {
            let inc = self.refill_bw_hi_increment();
            self.bw_hi = self.bw_hi.saturating_add(inc.max(1)).min(INF_BW - 1);
        }
        self.bw_probe_up_rounds = bw_probe_up_rounds;
        self.bw_probe_up_acks = 0;
        self.stopped_risky_probe = false;
        self.got_ok_bw_probe_sample = false;
        self.probe_bw.start_ack_phase(AckPhase::Refilling, &mut self.round, tp.delivered);
        self.cycle = Phase::Refill;
    }

    /// `bbr2_start_bw_probe_up`.
    pub(super) fn start_probe_bw_up(&mut self, tp: &TcpCc) {
        self.probe_bw.start_up(tp, &mut self.round);
        self.cycle = Phase::Up;
        self.raise_inflight_hi_slope(tp);
    }

    /// `bbr2_start_bw_probe_down`: start a new cycle and pick when to probe next.
    pub(super) fn start_probe_bw_down(&mut self, tp: &TcpCc) {
        self.signals.reset();
        self.bw_probe_up_cnt = INF_PKTS;
        // v2alpha draws the probe wait in µs.
        self.probe_bw.start_down(tp, &mut self.round, &mut self.rng, Clock::Us);
        self.cycle = Phase::Down;
    }

    /// `bbr2_start_bw_probe_cruise`.
    pub(super) fn start_probe_bw_cruise(&mut self) {
        if self.inflight_shortterm != INF_PKTS {
            self.inflight_shortterm = self.inflight_shortterm.min(self.inflight_longterm);
        }
        self.cycle = Phase::Cruise;
    }

    /// `bbr2_check_time_to_probe_bw` (ecn_reprobe_gain is 0 in v2alpha: no ECN re-probe).
    fn check_time_to_probe_bw(&mut self, tp: &TcpCc) -> bool {
        if self.probe_bw.probe_wait_elapsed(tp.now_ns) || self.is_reno_coexistence_probe_time(tp) {
            self.start_probe_bw_refill(tp, 0);
            return true;
        }
        false
    }

    /// `bbr2_check_time_to_cruise` (`bbr_drain_to_target` on: hold DOWN until inflight ≤ BDP).
    fn check_time_to_cruise(&self, tp: &TcpCc, inflight: u32, bw: u64) -> bool {
        if inflight > self.inflight_with_headroom() {
            return false;
        }
        inflight <= self.inflight(tp, bw, GAIN_UNIT)
    }

    /// `bbr2_update_cycle_phase`: the PROBE_BW state machine.
    pub(super) fn update_probe_bw_cycle_phase(&mut self, tp: &TcpCc, rs: &RateSample) {
        if !self.full_bw.reached {
            return;
        }
        if self.adapt_upper_bounds(tp, rs) {
            return;
        }
        if self.state != State::ProbeBw {
            return;
        }
        let inflight = self.packets_in_net_at_edt(tp, rs.prior_in_flight);
        let bw = self.max_bw();
        match self.cycle {
            Phase::Cruise => {
                self.check_time_to_probe_bw(tp);
            }
            Phase::Refill => {
                if self.round.round_start {
                    // One round of REFILL done: samples now reflect the probe.
                    self.bw_probe_samples = true;
                    self.start_probe_bw_up(tp);
                }
            }
            Phase::Up => {
                let mut is_risky = false;
                let mut is_queuing = false;
                if self.prev_probe_too_high && inflight >= self.inflight_longterm {
                    self.stopped_risky_probe = true;
                    is_risky = true;
                } else if self.probe_bw.has_elapsed_in_phase(tp.now_ns, self.min_rtt.rtt_ns)
                    && inflight >= self.inflight(tp, bw, BW_PROBE_PIF_GAIN)
                {
                    is_queuing = true;
                }
                if is_risky || is_queuing {
                    self.prev_probe_too_high = false; // no loss/ECN (yet)
                    self.start_probe_bw_down(tp);
                }
            }
            Phase::Down => {
                if self.check_time_to_probe_bw(tp) {
                    return;
                }
                if self.check_time_to_cruise(tp, inflight, bw) {
                    self.start_probe_bw_cruise();
                }
            }
        }
    }
}
