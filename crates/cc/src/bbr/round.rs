//! Packet-timed round trips (draft-ietf-ccwg-bbr §Tracking Packet-Timed Round Trips;
//! Linux `bbr_update_round_start` / v1's part of `bbr_update_bw`).
//!
//! BBR counts time in round trips measured by the data itself: a round ends when a packet sent
//! after the round began is delivered. The draft:
//!
//! ```text
//! BBRUpdateRound():
//!   if (packet.delivered >= BBR.next_round_delivered)
//!     BBRStartRound()
//!     BBR.round_count++
//!     BBR.rounds_since_bw_probe++
//!     BBR.round_start = true
//!   else
//!     BBR.round_start = false
//!
//! BBRStartRound():
//!   BBR.next_round_delivered = C.delivered
//! ```
//!
//! `packet.delivered` is the rate sample's `prior_delivered` (C.delivered when the acked packet
//! was sent). Which samples may end a round differs by version (v1: `rs.delivered ≥ 0` and a
//! positive interval; v2alpha: a positive interval; v3: also a prior packet): each version
//! passes its own validity test to [`RoundCounter::update`].

use crate::RateSample;

/// BBR.round_count, BBR.next_round_delivered, BBR.round_start (Linux: `rtt_cnt`,
/// `next_rtt_delivered`, `round_start`).
#[derive(Clone, Copy, Debug, Default)]
pub struct RoundCounter {
    /// Rounds since the flow started (Linux v1 `rtt_cnt`).
    pub round_count: u64,
    /// C.delivered at which the current round ends (Linux `next_rtt_delivered`).
    pub next_round_delivered: u64,
    /// The latest ACK ended a round.
    pub round_start: bool,
}

impl RoundCounter {
    /// §BBRStartRound: the round that ends when data sent from now on is delivered starts now.
    #[inline]
    pub fn start_round(&mut self, delivered: u64) {
        self.next_round_delivered = delivered;
    }

    /// §BBRUpdateRound for an ACK whose sample is `valid` (the version's rule); `delivered` is
    /// C.delivered after the ACK. Returns `round_start`.
    #[inline]
    pub fn update(&mut self, valid: bool, rs: &RateSample, delivered: u64) -> bool {
        self.round_start = valid && rs.prior_delivered >= self.next_round_delivered;
        if self.round_start {
            self.start_round(delivered);
            self.round_count += 1;
        }
        self.round_start
    }
}
