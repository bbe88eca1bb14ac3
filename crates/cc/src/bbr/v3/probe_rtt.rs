//! v3's min_rtt and ProbeRTT on the family's driver (`bbr/probe_rtt.rs`; §BBR.min_rtt Min
//! Filter, §ProbeRTT): the 5 s `probe_rtt_min` sub-window schedules ProbeRTT (a sample equal to
//! its minimum does not refresh it: draft and Linux v3 `<`), cwnd = max(BDP/2, 4) is held for
//! 200 ms and a round, then the flow goes to CRUISE (via DOWN) or back to Startup.

use super::{Bbr3, State};
use crate::bbr::probe_bw::AckPhase;
use crate::bbr::probe_rtt::{probe_rtt_bookkeeping, ProbeRttModel, PROBE_RTT_CWND_GAIN};
use crate::bbr::units::GAIN_UNIT;
use crate::{RateSample, TcpCc};

impl ProbeRttModel for Bbr3 {
    /// §UpdateMinRTT (draft-06 / Linux 5 s sub-window feeding the 10 s min_rtt).
    #[inline]
    fn update_min_rtt_filters(&mut self, tp: &TcpCc, rs: &RateSample) -> bool {
        let win = self.p.probe_rtt_interval_ns;
        self.probe_rtt_min.update_sub_window(&mut self.min_rtt, tp.now_ns, rs, win, false)
    }

    /// §EnterProbeRTT (a probe cut short in UP still advances the max_bw filter).
    #[inline]
    fn enter_probe_rtt(&mut self, tp: &mut TcpCc) {
        if self.state == State::ProbeBwUp {
            self.max_bw_advance_pending = true;
        }
        self.state = State::ProbeRtt;
        self.pacing_gain = GAIN_UNIT;
        self.cwnd_gain = PROBE_RTT_CWND_GAIN;
        self.probe_bw.start_ack_phase(AckPhase::ProbeStopping, &mut self.round, tp.delivered);
    }

    /// §ExitProbeRTT.
    #[inline]
    fn exit_probe_rtt(&mut self, tp: &TcpCc) {
        self.reset_short_term_model();
        if self.full_bw.reached {
            self.start_probe_bw_down(tp);
            self.start_probe_bw_cruise();
        } else {
            self.enter_startup();
        }
    }

    /// ProbeRTT cwnd = max(ProbeRTTCwndGain · BDP, MinPipeCwnd) (§Modulating cwnd in ProbeRTT).
    #[inline]
    fn probe_rtt_cwnd(&self) -> u32 {
        self.bdp_multiple(self.bw(), PROBE_RTT_CWND_GAIN).max(self.p.probe_rtt_cwnd_floor)
    }

    probe_rtt_bookkeeping!(window: probe_rtt_min, state: state == State::ProbeRtt);
}
