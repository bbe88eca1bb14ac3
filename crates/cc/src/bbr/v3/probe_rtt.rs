//! v3's min_rtt and ProbeRTT (§BBR.min_rtt Min Filter, §ProbeRTT): the 5 s `probe_rtt_min`
//! sub-window schedules ProbeRTT, cwnd = max(BDP/2, 4) is held for 200 ms and a round, then the
//! flow goes to CRUISE (via DOWN) or back to Startup.

use super::{Bbr3, State};
use crate::bbr::inflight::CWND_MIN_TARGET;
use crate::bbr::probe_bw::AckPhase;
use crate::bbr::probe_rtt::{ProbeRttStep, PROBE_RTT_CWND_GAIN, PROBE_RTT_WIN_NS};
use crate::bbr::units::GAIN_UNIT;
use crate::{RateSample, TcpCc};

impl Bbr3 {
    /// ProbeRTT cwnd = max(ProbeRTTCwndGain · BDP, MinPipeCwnd) (§Modulating cwnd in ProbeRTT).
    pub(super) fn probe_rtt_cwnd(&self) -> u32 {
        self.bdp_multiple(self.bw(), PROBE_RTT_CWND_GAIN).max(CWND_MIN_TARGET)
    }

    /// §CheckProbeRTTDone: RestoreCwnd, schedule the next ProbeRTT.
    pub(super) fn check_probe_rtt_done(&mut self, tp: &mut TcpCc) {
        if self.probe_rtt.finish(tp, self.prior_cwnd) {
            self.probe_rtt_min.stamp_ns = tp.now_ns;
            self.exit_probe_rtt(tp);
        }
    }

    /// §ExitProbeRTT.
    fn exit_probe_rtt(&mut self, tp: &TcpCc) {
        self.reset_short_term_model();
        if self.full_bw.reached {
            self.start_probe_bw_down(tp);
            self.start_probe_bw_cruise();
        } else {
            self.enter_startup();
        }
    }

    /// §UpdateMinRTT + §CheckProbeRTT + §HandleProbeRTT (draft-06 / Linux 5 s sub-window; a
    /// sample equal to the sub-window's minimum does not refresh it, draft and Linux v3 `<`).
    pub(super) fn update_min_rtt_and_probe_rtt(&mut self, tp: &mut TcpCc, rs: &RateSample) {
        let probe_rtt_expired = self.probe_rtt_min.update(tp.now_ns, rs, PROBE_RTT_WIN_NS, false);
        self.min_rtt.follow(&self.probe_rtt_min, tp.now_ns);
        if probe_rtt_expired && !self.idle_restart && self.state != State::ProbeRtt {
            // §EnterProbeRTT.
            if self.state == State::ProbeBwUp {
                self.max_bw_advance_pending = true;
            }
            self.state = State::ProbeRtt;
            self.pacing_gain = GAIN_UNIT;
            self.cwnd_gain = PROBE_RTT_CWND_GAIN;
            self.save_cwnd(tp);
            self.probe_rtt.done_stamp_ns = None;
            self.ack_phase = AckPhase::ProbeStopping;
            self.round.start_round(tp.delivered);
        }
        if self.state == State::ProbeRtt {
            // Ignore low-rate samples (MarkConnectionAppLimited).
            match self.probe_rtt.on_ack(tp, self.round.round_start, self.probe_rtt_cwnd()) {
                ProbeRttStep::StartRound => self.round.start_round(tp.delivered),
                ProbeRttStep::CheckDone => self.check_probe_rtt_done(tp),
                ProbeRttStep::Hold => {}
            }
        }
        if rs.delivered > 0 {
            self.idle_restart = false;
        }
    }
}
