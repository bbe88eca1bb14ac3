//! draft-06 vs Linux v3: the constants and switches that differ (the header's table), chosen
//! once per flow.

use super::startup::DRAIN_MAX_ROUNDS;
use crate::bbr::aggregation::ExtraAckedMax;
use crate::bbr::inflight::CWND_MIN_TARGET;
use crate::bbr::probe_rtt::PROBE_RTT_WIN_NS;
use crate::bbr::startup::{DRAIN_GAIN, FULL_BW_CNT};
use crate::bbr::units::{linux_gain, BBR_UNIT, GAIN_UNIT};
use crate::{Nanos, NSEC_PER_SEC};

/// Which constants (and ECN response) to use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// draft-ietf-ccwg-bbr-06.
    Draft,
    /// Google's Linux v3 `tcp_bbr.c` constants and ECN response.
    Linux,
}

/// What a CE mark means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EcnResponse {
    /// Draft §ECN: "MUST be treated as congestion" — a CE-carrying ACK is a loss event, and CE
    /// counts as lost in IsInflightTooHigh.
    AsCongestion,
    /// Linux v3: DCTCP-style alpha, inflight_lo cut per round, probe too high at > 50 % CE,
    /// Startup exit on CE, ECN re-probe (`bbr/ecn.rs`).
    Dctcp,
}

/// What a send quantum is made of before the min_rtt allowance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendQuantumBase {
    /// §Send Quantum: pacing_rate · 1 ms.
    Millisecond,
    /// Linux: pacing_rate >> sk_pacing_shift (2^-10 s).
    PacingShift,
}

/// Per-variant constants, gains in 2^16.
#[derive(Clone, Copy, Debug)]
pub struct Params {
    pub name: &'static str,
    pub startup_pacing_gain: u64,
    pub startup_cwnd_gain: u64,
    pub drain_pacing_gain: u64,
    pub down_pacing_gain: u64,
    /// LossThresh as a ratio num/den (compared exactly, as Linux's `(tx·5) >> 8` is).
    pub loss_thresh: (u64, u64),
    pub beta: u64,
    pub headroom: u64,
    /// extra_acked window: the draft's max filter length, or Linux's rounds per slot.
    pub extra_acked_win_rounds: u64,
    /// extra_acked in Linux's 2 slots capped at 100 ms of bw (`bbr_extra_acked`), or the draft's
    /// uncapped windowed max filter.
    pub extra_acked_max: ExtraAckedMax,
    /// §CheckFullBWReached: every non-app-limited ACK may raise the baseline (Linux), or only the
    /// round-start sample (draft).
    pub full_bw_every_ack: bool,
    /// Drain/DOWN/UP exits compare Linux's estimate of inflight at the next departure
    /// (`bbr_packets_in_net_at_edt`) instead of the draft's C.inflight.
    pub inflight_at_edt: bool,
    pub send_quantum_base: SendQuantumBase,
    pub ecn: EcnResponse,
    /// RTO (`set_state(Loss)`) also resets the full-bw detector and seeds inflight_lo from cwnd
    /// when not probing (Linux `bbr_set_state`).
    pub rto_resets_model: bool,
    /// §ProbeRTTInterval: no lower RTT sample for this long starts ProbeRTT (5 s in both;
    /// `PROBE_RTT_WIN_NS`). A field so that a conformance test can mutate it.
    pub probe_rtt_interval_ns: Nanos,
    /// ProbeRTT's cwnd floor, MinPipeCwnd (`CWND_MIN_TARGET`, 4 in both). A field so that a
    /// conformance test can mutate it.
    pub probe_rtt_cwnd_floor: u32,
    /// DRAIN's time limit in rounds after its start (§CheckDrainDone: 3, `DRAIN_MAX_ROUNDS`). A
    /// field so that a conformance test can mutate it.
    pub drain_max_rounds: u64,
    /// Rounds of < 25 % growth that make a plateau (§CheckFullBWReached: 3, `FULL_BW_CNT`). A
    /// field so that a conformance test can mutate it.
    pub full_bw_cnt: u32,
    /// PROBE_REFILL ends only on a round start whose rate sample is not app-limited (false: on
    /// any round start, §UpdateProbeBWCyclePhase). A wrong rule that a conformance test (A.21)
    /// sets to show its check catches it.
    pub refill_needs_unlimited_round: bool,
    /// HandleInflightTooHigh also sets inflight_longterm from an app-limited sample (false: not,
    /// §HandleInflightTooHigh). A wrong rule that a conformance test (A.6) sets.
    pub longterm_from_app_limited: bool,
    /// A spurious-loss undo restores the bounds but not the phase (Google's Linux v3; false: also
    /// the phase, §HandleSpuriousLossDetection, which both variants here follow). A rule that a
    /// conformance test (A.18) sets to show its check tells the two apart.
    pub undo_keeps_phase: bool,
}

impl Params {
    pub fn of(v: Variant) -> Params {
        match v {
            // §Terminology / §State Machine Operation constants.
            Variant::Draft => Params {
                name: "bbr3",
                // 4·ln 2: the smallest gain that doubles the rate per round like slow start.
                startup_pacing_gain: GAIN_UNIT * 277 / 100,
                startup_cwnd_gain: super::DEFAULT_CWND_GAIN,
                // ≤ 1/StartupCwndGain drains Startup's queue in about a round (§Drain, -06).
                drain_pacing_gain: GAIN_UNIT / 2,
                // Smallest gain giving bandwidth convergence against UP's 1.25 (§ProbeBW_DOWN).
                down_pacing_gain: GAIN_UNIT * 90 / 100,
                loss_thresh: (2, 100),
                beta: GAIN_UNIT * 7 / 10,
                headroom: GAIN_UNIT * 15 / 100,
                extra_acked_win_rounds: 10,
                extra_acked_max: ExtraAckedMax::DraftFilter,
                full_bw_every_ack: false,
                inflight_at_edt: false,
                send_quantum_base: SendQuantumBase::Millisecond,
                ecn: EcnResponse::AsCongestion,
                rto_resets_model: false,
                probe_rtt_interval_ns: PROBE_RTT_WIN_NS,
                probe_rtt_cwnd_floor: CWND_MIN_TARGET,
                drain_max_rounds: DRAIN_MAX_ROUNDS,
                full_bw_cnt: FULL_BW_CNT,
                refill_needs_unlimited_round: false,
                longterm_from_app_limited: false,
                undo_keeps_phase: false,
            },
            // tcp_bbr.c v3: the draft's rules but these, its gains as the same 2^8 ratios.
            Variant::Linux => Params {
                name: "bbr3_linux",
                startup_pacing_gain: linux_gain(BBR_UNIT * 277 / 100 + 1),
                startup_cwnd_gain: linux_gain(BBR_UNIT * 2),
                drain_pacing_gain: DRAIN_GAIN,
                down_pacing_gain: linux_gain(BBR_UNIT * 91 / 100),
                loss_thresh: ((BBR_UNIT * 2 / 100) as u64, BBR_UNIT as u64),
                beta: linux_gain(BBR_UNIT - BBR_UNIT * 30 / 100),
                headroom: linux_gain(BBR_UNIT * 15 / 100),
                extra_acked_win_rounds: 5,
                extra_acked_max: ExtraAckedMax::LinuxSlots,
                full_bw_every_ack: true,
                inflight_at_edt: true,
                send_quantum_base: SendQuantumBase::PacingShift,
                ecn: EcnResponse::Dctcp,
                rto_resets_model: true,
                ..Params::of(Variant::Draft)
            },
        }
    }
}

/// The environment variable a conformance test sets to run BBRv3 with one rule changed (the
/// simulator reads it when it builds a flow; `Params::mutate`). Not a user setting: it exists so
/// that a test can show a conformance check catches the change.
pub const TEST_MUTATION_ENV: &str = "BBRLAB_TEST_MUTATION";

impl Params {
    /// Change one rule for a conformance test: `drain_gain=G`, `down_gain=G`,
    /// `probe_rtt_interval_s=S`, `probe_rtt_cwnd_floor=N`, `drain_max_rounds=N`, `full_bw_cnt=N`,
    /// `loss_thresh=F`, `refill_needs_unlimited_round=1`, `longterm_from_app_limited=1` or
    /// `undo_keeps_phase=1` (G a gain such as 0.75; F a fraction such as 0.5; 1 switches a wrong
    /// or other rule on).
    pub fn mutate(&mut self, spec: &str) -> Result<(), String> {
        let (key, value) =
            spec.split_once('=').ok_or_else(|| format!("{spec:?}: not KEY=VALUE"))?;
        let num: f64 = value.trim().parse().map_err(|_| format!("{spec:?}: not a number"))?;
        if !(num.is_finite() && num >= 0.0) {
            return Err(format!("{spec:?}: not a non-negative number"));
        }
        let gain = (num * GAIN_UNIT as f64).round() as u64;
        match key.trim() {
            "drain_gain" => self.drain_pacing_gain = gain,
            "down_gain" => self.down_pacing_gain = gain,
            "probe_rtt_interval_s" => {
                self.probe_rtt_interval_ns = (num * NSEC_PER_SEC as f64).round() as Nanos
            }
            "probe_rtt_cwnd_floor" => self.probe_rtt_cwnd_floor = num as u32,
            "drain_max_rounds" => self.drain_max_rounds = num as u64,
            "full_bw_cnt" => self.full_bw_cnt = (num as u32).max(1),
            "loss_thresh" => self.loss_thresh = ((num * 10_000.0).round() as u64, 10_000),
            "refill_needs_unlimited_round" => self.refill_needs_unlimited_round = num != 0.0,
            "longterm_from_app_limited" => self.longterm_from_app_limited = num != 0.0,
            "undo_keeps_phase" => self.undo_keeps_phase = num != 0.0,
            k => {
                return Err(format!(
                    "{k:?}: no such mutation (drain_gain, down_gain, probe_rtt_interval_s, \
                 probe_rtt_cwnd_floor, drain_max_rounds, full_bw_cnt, loss_thresh, \
                 refill_needs_unlimited_round, longterm_from_app_limited, undo_keeps_phase)"
                ))
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mutation_changes_the_one_rule_it_names_and_bad_ones_are_refused() {
        let base = Params::of(Variant::Draft);
        let mut p = base;
        p.mutate("drain_gain=0.75").unwrap();
        assert_eq!(p.drain_pacing_gain, GAIN_UNIT * 3 / 4);
        assert_eq!(p.down_pacing_gain, base.down_pacing_gain);
        p.mutate("probe_rtt_interval_s=10").unwrap();
        assert_eq!(p.probe_rtt_interval_ns, 10 * NSEC_PER_SEC);
        p.mutate("probe_rtt_cwnd_floor=2").unwrap();
        assert_eq!(p.probe_rtt_cwnd_floor, 2);
        p.mutate("drain_max_rounds=1000").unwrap();
        assert_eq!(p.drain_max_rounds, 1000);
        p.mutate("full_bw_cnt=1").unwrap();
        assert_eq!((p.full_bw_cnt, base.full_bw_cnt), (1, 3));
        p.mutate("loss_thresh=0.5").unwrap();
        assert_eq!(p.loss_thresh, (5_000, 10_000));
        p.mutate("refill_needs_unlimited_round=1").unwrap();
        p.mutate("longterm_from_app_limited=1").unwrap();
        p.mutate("undo_keeps_phase=1").unwrap();
        assert!(
            p.refill_needs_unlimited_round && p.longterm_from_app_limited && p.undo_keeps_phase
        );
        assert!(!base.refill_needs_unlimited_round && !base.longterm_from_app_limited);
        assert!(!base.undo_keeps_phase);
        assert_eq!(base.probe_rtt_interval_ns, PROBE_RTT_WIN_NS);
        for bad in ["drain_gain", "drain_gain=x", "drain_gain=-1", "cwnd=3"] {
            assert!(p.mutate(bad).is_err(), "{bad}");
        }
    }
}
