//! v3's control parameters (§UpdateControlParameters): the send quantum and quantization
//! budget, Inflight(gain), the pacing rate, cwnd (§SetCwnd, bounded for ProbeRTT and by the
//! model), the ACK-aggregation term, and the gains of each state.

use super::*;

impl Bbr3 {
    /// §Send Quantum (SetSendQuantum), with Linux v3's min_rtt-based allowance when
    /// `tp.tso_minrtt_autosize`: pacing_rate·1 ms (+ 64 KB >> (min_rtt_us >> 9)), 2 segs .. 64 KB.
    pub fn send_quantum_segs(&self, tp: &TcpCc) -> u32 {
        let mut bytes = match self.p.send_quantum_base {
            SendQuantumBase::Millisecond => tp.pacing_rate_bytes_per_s / 1000,
            SendQuantumBase::PacingShift => tso::pacing_burst_bytes(tp.pacing_rate_bytes_per_s),
        };
        if tp.tso_minrtt_autosize {
            bytes += tso::min_rtt_burst_bytes(self.min_rtt.rtt_ns);
        }
        let bytes = bytes.min(tso::GSO_MAX_BYTES);
        ((bytes / tp.mss.max(1) as u64) as u32).max(SEND_QUANTUM_MIN_SEGS)
    }

    /// §QuantizationBudget: at least 3 send quanta (TCP offload budget) and MinPipeCwnd, +2 in UP.
    pub(super) fn quantization_budget(&self, tp: &TcpCc, inflight: u32) -> u32 {
        tso::quantization_budget_floor(
            inflight,
            self.send_quantum_segs(tp),
            self.state == State::ProbeBwUp,
        )
    }

    /// §Inflight(gain) with a given bw.
    pub(super) fn inflight(&self, tp: &TcpCc, bw: u64, gain: u64) -> u32 {
        self.quantization_budget(tp, self.bdp_multiple(bw, gain))
    }

    /// §TargetInflight: min(BDP, cwnd).
    pub(super) fn target_inflight(&self, tp: &TcpCc) -> u32 {
        self.bdp_multiple(self.bw(), GAIN_UNIT).min(tp.snd_cwnd)
    }

    /// §InflightWithHeadroom: inflight_longterm minus max(1, 15 %), floor MinPipeCwnd.
    pub(super) fn inflight_with_headroom(&self) -> u32 {
        inflight::inflight_with_headroom(self.inflight_longterm, self.p.headroom)
    }

    /// The inflight the exit checks compare: C.inflight (draft) or Linux's EDT estimate
    /// (`bbr_packets_in_net_at_edt`: inflight when the next packet departs).
    pub(super) fn inflight_for_checks(&self, tp: &TcpCc, inflight_now: u32) -> u32 {
        if !self.p.inflight_at_edt {
            return inflight_now;
        }
        let burst = if self.pacing_gain > GAIN_UNIT { self.send_quantum_segs(tp) } else { 0 };
        inflight::packets_in_net_at_edt(tp, self.bw(), inflight_now, burst, EDT_CLOCK)
    }

    /// §SetPacingRateWithGain: never lower the rate before the pipe was filled.
    pub(super) fn set_pacing_rate_with_gain(&mut self, tp: &mut TcpCc, gain: u64) {
        let bw = self.bw();
        self.pacer.set(tp, bw, gain, self.full_bw.reached);
    }

    /// §SetCwnd + BoundCwndForProbeRTT + BoundCwndForModel, with §Modulating cwnd in Loss
    /// Recovery (restore the saved cwnd on leaving recovery; no packet conservation in v3).
    pub(super) fn set_cwnd(&mut self, tp: &mut TcpCc, rs: &RateSample) {
        let mut cwnd = tp.snd_cwnd;
        if self.prev_ca_state >= CaState::Recovery && tp.ca_state < CaState::Recovery {
            cwnd = cwnd.max(self.prior_cwnd); // RestoreCwnd on exiting recovery
        }
        let acked = rs.acked_sacked;
        if acked > 0 {
            // §UpdateMaxInflight.
            let max_inflight = self.quantization_budget(
                tp,
                self.bdp_multiple(self.bw(), self.cwnd_gain).saturating_add(self.extra_acked()),
            );
            // Linux: the fast path may be tried once cwnd stands at its target.
            let early = tp.delivered < self.init_cwnd as u64;
            (cwnd, self.try_fast_path) =
                inflight::grow_cwnd(cwnd, acked, max_inflight, self.full_bw.reached, early);
        }
        self.set_cwnd_bounded(tp, cwnd);
        self.cur_cwnd = tp.snd_cwnd;
        self.bound_cwnd_for_model(tp);
    }

    /// §BoundCwndForModel.
    pub(super) fn bound_cwnd_for_model(&mut self, tp: &mut TcpCc) {
        let cap = match self.state {
            State::ProbeBwCruise | State::ProbeRtt => InflightCap::HiWithHeadroom,
            State::ProbeBwDown | State::ProbeBwRefill | State::ProbeBwUp => InflightCap::Hi,
            State::Startup | State::Drain => InflightCap::None,
        };
        inflight::bound_cwnd_for_inflight_model(
            tp,
            cap,
            self.inflight_longterm,
            self.inflight_shortterm,
            self.p.headroom,
        );
        self.cur_cwnd = tp.snd_cwnd;
    }

    /// §UpdateACKAggregation. Draft: max filter over 10 rounds (1 in Startup); Linux: two 5-round
    /// slots (1 in Startup). The epochs run on Now() as the draft says (Linux:
    /// tp->delivered_mstamp, the same instant whenever an ACK delivers data).
    pub(super) fn update_ack_aggregation(&mut self, tp: &TcpCc, rs: &RateSample) {
        let win = if self.full_bw.reached { self.p.extra_acked_win_rounds } else { 1 };
        self.agg.update(rs, &self.round, win as u32, self.bw(), tp.now_ns, tp.snd_cwnd);
    }

    /// §BBR.extra_acked (Linux: capped at 100 ms of bw).
    pub(super) fn extra_acked(&self) -> u32 {
        self.agg.allowance(self.bw())
    }

    /// Gains of the current state (§Summary of Control Behavior in the State Machine).
    pub(super) fn update_gains(&mut self) {
        let (p, c) = match self.state {
            State::Startup => (self.p.startup_pacing_gain, self.p.startup_cwnd_gain),
            State::Drain => (self.p.drain_pacing_gain, DEFAULT_CWND_GAIN),
            State::ProbeBwDown => (self.p.down_pacing_gain, DEFAULT_CWND_GAIN),
            State::ProbeBwCruise | State::ProbeBwRefill => (GAIN_UNIT, DEFAULT_CWND_GAIN),
            State::ProbeBwUp => (crate::bbr::probe_bw::PACING_GAIN_UP, UP_CWND_GAIN),
            State::ProbeRtt => (GAIN_UNIT, crate::bbr::probe_rtt::PROBE_RTT_CWND_GAIN),
        };
        self.pacing_gain = p;
        self.cwnd_gain = c;
    }
}
