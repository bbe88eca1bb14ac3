//! v3's ProbeBW cycle (§ProbeBW Algorithm Details): DOWN → CRUISE → REFILL → UP → DOWN, with
//! the draft's exit conditions, precautionary probing, and Linux's ECN re-probe.

use super::{Bbr3, EcnResponse, State, DEFAULT_CWND_GAIN};
use crate::bbr::probe_bw::{AckPhase, BW_PROBE_MAX_ROUNDS, BW_PROBE_UP_ROUNDS_MAX};
use crate::bbr::units::{Clock, BBR_SCALE, BBR_UNIT, GAIN_UNIT, INF_PKTS};
use crate::{CaState, RateSample, TcpCc};

/// Linux v3 ECN re-probe: after a cycle with ECN but no loss, the first round of UP grows
/// inflight_hi by about inflight_hi · 1/2 (`bbr_ecn_reprobe_gain`).
const ECN_REPROBE_GAIN: u64 = BBR_UNIT as u64 / 2;

impl Bbr3 {
    /// §StartProbeBW_DOWN. Leaving UP arms the max_bw clock advance (see header).
    pub(super) fn start_probe_bw_down(&mut self, tp: &TcpCc) {
        if self.state == State::ProbeBwUp {
            self.max_bw_advance_pending = true;
        }
        self.signals.reset();
        self.probe_up_acked_per_inc = INF_PKTS;
        // §PickProbeWait draws the wait in ns.
        self.probe_bw.start_down(tp, &mut self.round, &mut self.rng, Clock::Ns);
        self.state = State::ProbeBwDown;
    }

    /// §StartProbeBW_CRUISE.
    pub(super) fn start_probe_bw_cruise(&mut self) {
        self.state = State::ProbeBwCruise;
    }

    /// §StartProbeBW_REFILL (Linux: optional initial slope for ECN re-probing).
    pub(super) fn start_probe_bw_refill(&mut self, tp: &TcpCc, probe_up_rounds: u32) {
        self.reset_short_term_model();
        self.bw_probe_up_rounds = probe_up_rounds;
        self.bw_probe_up_acked = 0;
        self.prev_probe_precautionary = false;
        self.probe_bw.start_ack_phase(AckPhase::Refilling, &mut self.round, tp.delivered);
        self.state = State::ProbeBwRefill;
    }

    /// §StartProbeBW_UP.
    fn start_probe_bw_up(&mut self, tp: &TcpCc, sample_bw: u64) {
        self.probe_bw.start_up(tp, &mut self.round);
        self.full_bw.restart_from(sample_bw);
        self.state = State::ProbeBwUp;
        self.raise_inflight_longterm_slope(tp);
    }

    /// §EnterProbeBW.
    pub(super) fn enter_probe_bw(&mut self, tp: &TcpCc) {
        self.cwnd_gain = DEFAULT_CWND_GAIN;
        self.start_probe_bw_down(tp);
    }

    /// §IsTimeToProbeBW / IsRenoCoexistenceProbeTime (+ Linux ECN re-probe).
    fn is_time_to_probe_bw(&mut self, tp: &TcpCc) -> bool {
        if self.p.ecn == EcnResponse::Dctcp
            && self.ecn.eligible
            && self.signals.ecn_in_cycle
            && !self.signals.loss_in_cycle
            && tp.ca_state == CaState::Open
        {
            // After an ECN-only cycle, first round's increment ≈ inflight_hi · reprobe_gain.
            let v = (self.inflight_longterm as u64 * ECN_REPROBE_GAIN) >> BBR_SCALE;
            let n = if v == 0 { 0 } else { 63 - v.leading_zeros() };
            self.start_probe_bw_refill(tp, n.min(BW_PROBE_UP_ROUNDS_MAX));
            return true;
        }
        let elapsed = self.probe_bw.probe_wait_elapsed(tp.now_ns);
        let reno_rounds = self.target_inflight(tp).min(BW_PROBE_MAX_ROUNDS);
        if elapsed || self.probe_bw.rounds_since_bw_probe >= reno_rounds {
            self.start_probe_bw_refill(tp, 0);
            return true;
        }
        false
    }

    /// §IsTimeToCruise.
    fn is_time_to_cruise(&self, tp: &TcpCc, inflight: u32) -> bool {
        if inflight > self.inflight_with_headroom() {
            return false; // not enough headroom
        }
        inflight <= self.inflight(tp, self.max_bw(), GAIN_UNIT)
    }

    /// §IsTimeToGoDown.
    fn is_time_to_go_down(&mut self, tp: &TcpCc, inflight: u32, sample_bw: u64) -> bool {
        if self.prev_probe_too_high && inflight >= self.inflight_longterm {
            self.prev_probe_precautionary = true; // §Precautionary Bandwidth Probing: Deceleration
            return true;
        }
        if tp.is_cwnd_limited && tp.snd_cwnd >= self.inflight_longterm {
            self.full_bw.restart_from(sample_bw); // bw is limited by inflight_longterm
        } else if self.full_bw.now {
            return true; // plateau: we have used the path's bw
        }
        false
    }

    /// §UpdateProbeBWCyclePhase.
    pub(super) fn update_probe_bw_cycle_phase(
        &mut self,
        tp: &TcpCc,
        rs: &RateSample,
        sample_bw: u64,
        lost: u64,
    ) {
        if !self.full_bw.reached {
            return;
        }
        if self.adapt_long_term_model(tp, rs, lost) {
            return;
        }
        if !self.is_in_probe_bw() {
            return;
        }
        // Linux estimates from the inflight before this ACK (rs.prior_in_flight); the draft uses
        // C.inflight.
        let inflight_now =
            if self.p.inflight_at_edt { rs.prior_in_flight } else { tp.packets_in_flight() };
        let inflight = self.inflight_for_checks(tp, inflight_now);
        let state = self.state; // a copy: the guards below may change self
        match state {
            State::ProbeBwDown => {
                if self.is_time_to_probe_bw(tp) {
                    return;
                }
                if self.is_time_to_cruise(tp, inflight) {
                    self.start_probe_bw_cruise();
                }
            }
            State::ProbeBwCruise => {
                self.is_time_to_probe_bw(tp);
            }
            // After one round of REFILL, start UP (app-limited or not).
            State::ProbeBwRefill
                if self.round.round_start
                    && !(self.p.refill_needs_unlimited_round && rs.is_app_limited) =>
            {
                self.is_bw_probe_sample = true;
                self.start_probe_bw_up(tp, sample_bw);
            }
            State::ProbeBwUp if self.is_time_to_go_down(tp, inflight, sample_bw) => {
                self.prev_probe_too_high = false; // no high loss (yet)
                self.start_probe_bw_down(tp);
            }
            _ => {}
        }
    }
}
