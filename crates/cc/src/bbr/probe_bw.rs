//! PROBE_BW pieces v2 and v3 share: the four-phase cycle's timing constants and clocks (when
//! the phase began, when to probe next, the ACK phase of a bandwidth probe), and the 1, 2, 4,
//! 8 … packets-per-round growth of inflight_hi in UP.
//!
//! ```text
//! DOWN → CRUISE → (time to probe) → REFILL (1 round) → UP (pacing 5/4) → DOWN …
//! time to probe = 2 s + U[0, 1 s) of wall clock since DOWN ("BBR-native" scale), or
//!                 min(63, BDP) packet-timed rounds ("Reno coexistence"), from U{0, 1}
//! ```
//!
//! v1's eight-phase gain cycle is in `v1`.

use super::round::RoundCounter;
use super::units::{Clock, GAIN_UNIT};
use crate::rng::SplitMix64;
use crate::{Nanos, TcpCc, NSEC_PER_SEC, NSEC_PER_USEC};

/// PROBE_UP pacing gain 5/4: probe 25 % above the estimate.
pub const PACING_GAIN_UP: u64 = GAIN_UNIT * 5 / 4;
/// BBR-native probe interval: 2 s + U[0, 1 s) of wall clock (≥ 1.9 s lets a 25 Mbit/s, 30 ms
/// Reno flow recover between probes; ≤ 3 s finds freed bandwidth on human time scales) …
pub const BW_PROBE_BASE_NS: Nanos = 2 * NSEC_PER_SEC;
pub const BW_PROBE_RAND_NS: Nanos = NSEC_PER_SEC;
/// … or Reno coexistence: at most 63 rounds (fair to a 25 Mbit/s, 30 ms Reno flow: BDP ≈ 62
/// packets), …
pub const BW_PROBE_MAX_ROUNDS: u32 = 63;
/// … with a random head start of 0 or 1 round.
pub const BW_PROBE_RAND_ROUNDS: u32 = 2;
/// Max `bw_probe_up_rounds`: growth 2^30 per round is plenty.
pub const BW_PROBE_UP_ROUNDS_MAX: u32 = 30;

/// How the incoming ACKs relate to bandwidth probing (Linux `enum bbr_ack_phase`, §ProbeBW State).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AckPhase {
    #[default]
    Init,
    Refilling,
    ProbeStarting,
    ProbeFeedback,
    ProbeStopping,
}

/// The PROBE_BW cycle's clocks (§ProbeBW State; v2alpha's names in parentheses), the same in
/// v2 and v3; which phase the cycle is in stays in the version's state.
#[derive(Clone, Copy, Debug, Default)]
pub struct ProbeBwClock {
    /// BBR.ack_phase: how the incoming ACKs relate to the current probe.
    pub ack_phase: AckPhase,
    /// BBR.cycle_stamp (`cycle_mstamp`): when the current phase (DOWN, UP) began.
    pub cycle_stamp_ns: Nanos,
    /// BBR.bw_probe_wait (`probe_wait_us`): wall-clock time from DOWN to the next probe.
    pub bw_probe_wait_ns: Nanos,
    /// BBR.rounds_since_bw_probe (`rounds_since_probe`); each version counts it at its round
    /// start (v2alpha saturates it at 255, v3 at u32::MAX: either is only compared with at most
    /// `BW_PROBE_MAX_ROUNDS`).
    pub rounds_since_bw_probe: u32,
}

impl ProbeBwClock {
    /// A phase whose ACKs are `ack_phase` (REFILL: `Refilling`, UP: `ProbeStarting`, DOWN and
    /// PROBE_RTT: `ProbeStopping`) begins, and with it a packet-timed round, so the version
    /// knows when the ACKs of data sent from now on arrive.
    #[inline]
    pub fn start_ack_phase(
        &mut self,
        ack_phase: AckPhase,
        round: &mut RoundCounter,
        delivered: u64,
    ) {
        self.ack_phase = ack_phase;
        round.start_round(delivered);
    }

    /// The clocks' part of §StartProbeBW_DOWN (`bbr2_start_bw_probe_down`): pick when to probe
    /// next, stamp the cycle's start, and stop probing.
    #[inline]
    pub fn start_down(
        &mut self,
        tp: &TcpCc,
        round: &mut RoundCounter,
        rng: &mut SplitMix64,
        wait_clock: Clock,
    ) {
        self.pick_probe_wait(rng, wait_clock);
        self.cycle_stamp_ns = tp.now_ns;
        self.start_ack_phase(AckPhase::ProbeStopping, round, tp.delivered);
    }

    /// The clocks' part of §StartProbeBW_UP (`bbr2_start_bw_probe_up`): the probe starts now;
    /// its own samples arrive after a round.
    #[inline]
    pub fn start_up(&mut self, tp: &TcpCc, round: &mut RoundCounter) {
        self.start_ack_phase(AckPhase::ProbeStarting, round, tp.delivered);
        self.cycle_stamp_ns = tp.now_ns;
    }

    /// The wall-clock wait for the next probe, picked in DOWN, is over.
    #[inline]
    pub fn probe_wait_elapsed(&self, now: Nanos) -> bool {
        self.has_elapsed_in_phase(now, self.bw_probe_wait_ns)
    }

    /// §PickProbeWait (`bbr2_pick_probe_wait`): a random head start of 0 or 1 round, and a
    /// wall-clock wait of 2 s + U[0, 1 s) drawn in `wait_clock` units (v2alpha draws µs as
    /// Linux does, v3 ns as the draft).
    #[inline]
    fn pick_probe_wait(&mut self, rng: &mut SplitMix64, wait_clock: Clock) {
        self.rounds_since_bw_probe = rng.below(BW_PROBE_RAND_ROUNDS);
        let rand_ns = match wait_clock {
            Clock::Ns => rng.below(BW_PROBE_RAND_NS as u32) as u64,
            Clock::Us => {
                rng.below((BW_PROBE_RAND_NS / NSEC_PER_USEC) as u32) as u64 * NSEC_PER_USEC
            }
        };
        self.bw_probe_wait_ns = BW_PROBE_BASE_NS + rand_ns;
    }

    /// `bbr2_has_elapsed_in_phase`: more than `interval_ns` since the phase began.
    #[inline]
    pub fn has_elapsed_in_phase(&self, now: Nanos, interval_ns: Nanos) -> bool {
        now > self.cycle_stamp_ns.saturating_add(interval_ns)
    }

    /// The ACK-phase part of §AdaptLongTermModel (`bbr2_adapt_upper_bounds`) at a round start:
    /// a probe's own samples start arriving (STARTING → FEEDBACK), or the last samples of a
    /// probe that stopped have arrived (STOPPING → INIT; returns true).
    #[inline]
    pub fn advance_ack_phase(&mut self, round_start: bool) -> bool {
        if !round_start {
            return false;
        }
        match self.ack_phase {
            AckPhase::ProbeStarting => self.ack_phase = AckPhase::ProbeFeedback,
            AckPhase::ProbeStopping => {
                self.ack_phase = AckPhase::Init;
                return true;
            }
            _ => {}
        }
        false
    }
}

/// `bbr_raise_inflight_hi_slope` (§RaiseInflightLongtermSlope): each round of PROBE_UP doubles
/// the growth of inflight_hi (1, 2, 4, 8 … packets per round). Advances `probe_up_rounds` and
/// returns how many packets must be acked per one-packet increment (cwnd / 2^rounds, ≥ 1).
#[inline]
pub fn inflight_hi_slope(cwnd: u32, probe_up_rounds: &mut u32) -> u32 {
    let growth_this_round = 1u32 << *probe_up_rounds;
    *probe_up_rounds = (*probe_up_rounds + 1).min(BW_PROBE_UP_ROUNDS_MAX);
    (cwnd / growth_this_round).max(1)
}
