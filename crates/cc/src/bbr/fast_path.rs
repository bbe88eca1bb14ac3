//! The fast path of Google's BBRv2/v3 Linux code (`bbr2_run_fast_path` / `bbr_run_fast_path`;
//! the "BBRv2 slides" optimisation 1), shared by v2 and v3; v1 has none.
//!
//! ```text
//! fast path eligible = tp.fast_path (bbrlab's switch)
//!                      && cwnd stood at its target on the last ACK that delivered data
//!                         (try_fast_path, set by the version's set_cwnd)
//!                      && the sample is app-limited and below max_bw
//!                      && no loss and no CE in this round
//! eligible:  run only the drain check, the PROBE_BW cycle and min_rtt / PROBE_RTT; if neither the
//!            state nor min_rtt changed (and try_fast_path still holds), skip the control update
//!            too (counted in tp.cc_fast_acks, which the simulator's host model charges nothing)
//! otherwise: the whole model update, then the control update
//! ```
//!
//! Such an ACK can neither raise max_bw nor cut a bound, so the skipped work could not change
//! the model: the fast path saves CPU, not behaviour.

use super::signals::CongestionSignals;
use crate::{RateSample, TcpCc};

/// What a version gives the fast path.
pub(crate) trait FastPathModel {
    /// This ACK's inputs beside the rate sample (e.g. its bandwidth sample).
    type Ack: Copy;
    /// The full model update (`bbr_update_model`).
    fn update_model(&mut self, tp: &mut TcpCc, rs: &RateSample, ack: Self::Ack);
    /// The part of the model update the fast path keeps: drain check, PROBE_BW cycle, min_rtt
    /// and PROBE_RTT.
    fn update_model_fast(&mut self, tp: &mut TcpCc, rs: &RateSample, ack: Self::Ack);
    /// What the control update depends on besides the skipped model: (state code, min_rtt_ns).
    fn control_inputs(&self) -> (u8, u64);
    /// cwnd reached its target on the last ACK that delivered data (Linux `try_fast_path`).
    fn try_fast_path(&self) -> bool;
    /// This ACK's delivery-rate sample.
    fn sample_bw(&self, ack: Self::Ack) -> u64;
    fn max_bw(&self) -> u64;
    fn signals(&self) -> &CongestionSignals;
}

/// The [`FastPathModel`] accessors v2 and v3 write alike, from the fields both keep (`state`,
/// `min_rtt`, `try_fast_path`, `signals`). The control inputs are (state, min_rtt): v2alpha's
/// state has one PROBE_BW, so its phase is not compared; v3's state names the phase.
macro_rules! fast_path_accessors {
    () => {
        #[inline]
        fn control_inputs(&self) -> (u8, u64) {
            (self.state as u8, self.min_rtt.rtt_ns)
        }

        #[inline]
        fn try_fast_path(&self) -> bool {
            self.try_fast_path
        }

        #[inline]
        fn signals(&self) -> &$crate::bbr::signals::CongestionSignals {
            &self.signals
        }
    };
}
pub(crate) use fast_path_accessors;

/// `bbr_run_fast_path` + `bbr_update_model`: runs the model update the ACK needs; returns true
/// when the control update (pacing, cwnd) is skipped too.
#[inline]
pub fn run<M: FastPathModel>(m: &mut M, tp: &mut TcpCc, rs: &RateSample, ack: M::Ack) -> bool {
    let eligible = tp.fast_path
        && m.try_fast_path()
        && rs.is_app_limited
        && m.sample_bw(ack) < m.max_bw()
        && !m.signals().loss_in_round
        && !m.signals().ecn_in_round;
    if !eligible {
        m.update_model(tp, rs, ack);
        return false;
    }
    let before = m.control_inputs();
    m.update_model_fast(tp, rs, ack);
    let skip_control = m.control_inputs() == before && m.try_fast_path();
    if skip_control {
        tp.cc_fast_acks += 1;
    }
    skip_control
}
