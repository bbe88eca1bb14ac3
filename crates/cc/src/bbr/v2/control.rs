//! v2's control update: the offload budget, `bbr_inflight`, the EDT inflight estimate, cwnd
//! (`bbr_set_cwnd`, then bounded by the inflight model).

use super::*;

impl Bbr2 {
    /// `bbr_quantization_budget` with v2alpha's `bbr_cwnd_tso_budget = 1` ("flooring"): at least
    /// 3 offload bursts and 4 packets, +2 in PROBE_UP so inflight gets above BDP on small BDPs.
    pub(super) fn quantization_budget(&self, tp: &TcpCc, cwnd: u32) -> u32 {
        tso::quantization_budget_floor(
            cwnd,
            self.tso_segs_goal(tp),
            self.state == State::ProbeBw && self.cycle == Phase::Up,
        )
    }

    /// `bbr_inflight`.
    pub(super) fn inflight(&self, tp: &TcpCc, bw: u64, gain: u64) -> u32 {
        self.quantization_budget(tp, self.bdp(bw, gain))
    }

    /// `bbr_packets_in_net_at_edt`.
    pub(super) fn packets_in_net_at_edt(&self, tp: &TcpCc, inflight_now: u32) -> u32 {
        let burst = if self.pacing_gain > GAIN_UNIT { self.tso_segs_goal(tp) } else { 0 };
        inflight::packets_in_net_at_edt(tp, self.bw(), inflight_now, burst, EDT_CLOCK)
    }

    /// `bbr_set_cwnd` (v2alpha: no packet conservation in recovery).
    pub(super) fn set_cwnd(&mut self, tp: &mut TcpCc, acked: u32, bw: u64, gain: u64) {
        let mut cwnd = tp.snd_cwnd;
        if acked != 0 {
            let mut target = self.bdp(bw, gain);
            // `bbr_ack_aggregation_cwnd` (v2alpha: also in STARTUP, `bbr_extra_acked_in_startup`).
            target = target.saturating_add(self.agg.allowance(self.bw()));
            target = self.quantization_budget(tp, target);
            let early = cwnd < 2 * self.init_cwnd;
            (cwnd, self.try_fast_path) =
                inflight::grow_cwnd(cwnd, acked, target, self.full_bw.reached, early);
        }
        self.set_cwnd_bounded(tp, cwnd);
    }

    /// `bbr2_bound_cwnd_for_inflight_model`.
    pub(super) fn bound_cwnd_for_inflight_model(&self, tp: &mut TcpCc) {
        let cap = match (self.state, self.cycle) {
            (State::ProbeBw, Phase::Cruise) | (State::ProbeRtt, _) => InflightCap::HiWithHeadroom,
            (State::ProbeBw, _) => InflightCap::Hi, // probe to see if more packets fit in the path
            _ => InflightCap::None,
        };
        inflight::bound_cwnd_for_inflight_model(
            tp,
            cap,
            self.inflight_longterm,
            self.inflight_shortterm,
            INFLIGHT_HEADROOM,
        );
    }
}
