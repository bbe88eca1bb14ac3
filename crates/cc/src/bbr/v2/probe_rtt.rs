//! v2's min_rtt and PROBE_RTT on the family's driver (`bbr/probe_rtt.rs`): the 5 s
//! `probe_rtt_min` sub-window schedules PROBE_RTT (a sample equal to its minimum refreshes it:
//! v2alpha's `<=`), cwnd = max(4, BDP/2) is held for 200 ms and a round, then DOWN→CRUISE or
//! STARTUP.

use super::{Bbr2, State};
use crate::bbr::inflight::CWND_MIN_TARGET;
use crate::bbr::probe_bw::AckPhase;
use crate::bbr::probe_rtt::{
    probe_rtt_bookkeeping, ProbeRttModel, PROBE_RTT_CWND_GAIN, PROBE_RTT_WIN_NS,
};
use crate::{RateSample, TcpCc};

impl ProbeRttModel for Bbr2 {
    /// `bbr_update_min_rtt` (v2: the 5 s probe_rtt_min drives PROBE_RTT and feeds the 10 s
    /// min_rtt).
    #[inline]
    fn update_min_rtt_filters(&mut self, tp: &TcpCc, rs: &RateSample) -> bool {
        let win = PROBE_RTT_WIN_NS;
        self.probe_rtt_min.update_sub_window(&mut self.min_rtt, tp.now_ns, rs, win, true)
    }

    /// Dip, drain the queue; the probe cycle stops and a round starts now.
    #[inline]
    fn enter_probe_rtt(&mut self, tp: &mut TcpCc) {
        self.state = State::ProbeRtt;
        self.probe_bw.start_ack_phase(AckPhase::ProbeStopping, &mut self.round, tp.delivered);
    }

    /// `bbr2_exit_probe_rtt`.
    #[inline]
    fn exit_probe_rtt(&mut self, tp: &TcpCc) {
        self.reset_short_term_model();
        if self.full_bw.reached {
            self.state = State::ProbeBw;
            // Schedule the next probe for a friendly random time, then cruise (inflight < BDP).
            self.start_probe_bw_down(tp);
            self.start_probe_bw_cruise();
        } else {
            self.state = State::Startup;
        }
    }

    /// `bbr_probe_rtt_cwnd`: max(4, 0.5·BDP).
    #[inline]
    fn probe_rtt_cwnd(&self) -> u32 {
        CWND_MIN_TARGET.max(self.bdp(self.bw(), PROBE_RTT_CWND_GAIN))
    }

    probe_rtt_bookkeeping!(window: probe_rtt_min, state: state == State::ProbeRtt);
}
