//! PROBE_BW pieces v2 and v3 share: the four-phase cycle's timing constants, the ACK phase of
//! a bandwidth probe, and the 1, 2, 4, 8 … packets-per-round growth of inflight_hi in UP.
//!
//! ```text
//! DOWN → CRUISE → (time to probe) → REFILL (1 round) → UP (pacing 5/4) → DOWN …
//! time to probe = 2 s + U[0, 1 s) of wall clock since DOWN ("BBR-native" scale), or
//!                 min(63, BDP) packet-timed rounds ("Reno coexistence"), from U{0, 1}
//! ```
//!
//! v1's eight-phase gain cycle is in `v1`.

use super::units::GAIN_UNIT;
use crate::{Nanos, NSEC_PER_SEC};

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
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckPhase {
    Init,
    Refilling,
    ProbeStarting,
    ProbeFeedback,
    ProbeStopping,
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
