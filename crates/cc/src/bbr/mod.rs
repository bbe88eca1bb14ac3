//! The BBR family: BBRv1 (Linux mainline), BBRv2 (Google's v2alpha, and the Google BBRv2 slides'
//! "bbr2_new"), BBRv3 (draft-ietf-ccwg-bbr, and Google's Linux v3 constants).
//!
//! # What every version shares
//!
//! BBR models the path with two numbers measured on every ACK from the delivery-rate sample
//! (`rate.rs`), and sets its controls from them rather than from loss:
//!
//! ```text
//! max_bw   = windowed max of delivery-rate samples (v1: 10 rounds; v2/v3: 1–2 probe cycles)
//! min_rtt  = windowed min of RTT samples (10 s)
//! BDP      = max_bw · min_rtt
//! pacing   = pacing_gain · bw · (1 − 1 %)
//! cwnd     = cwnd_gain · BDP + extra_acked (ACK aggregation) + offload (quantization) budget
//! ```
//!
//! A state machine varies the gains: STARTUP doubles the rate per round until the bandwidth
//! plateaus (full pipe), DRAIN removes the queue STARTUP built, PROBE_BW cycles the pacing gain
//! above and below 1 to find more bandwidth and drain what the probe queued, PROBE_RTT dips the
//! volume every 5–10 s to re-measure the propagation delay. v2 and v3 add loss/ECN-driven bounds
//! (inflight_longterm/shortterm, bw_shortterm; Linux: inflight_hi/lo, bw_lo); each version's
//! header explains its model.
//!
//! The pieces that are the same in every version live once, here, each beside the spec text it
//! follows (s2n-quic's layout: one module per concern); a version plugs into the generic ones
//! (`probe_rtt`, `fast_path`) through a small trait, statically dispatched:
//!
//! | module            | what (every version uses it unless marked v2/v3)                     |
//! |-------------------|----------------------------------------------------------------------|
//! | `units`           | fixed point: bw packets/µs << 24, gains 2^16 (Linux's 2^8 exact)     |
//! | `round`           | packet-timed rounds: BBR.round_count, next_round_delivered          |
//! | `windowed_filter` | max filters: `TwoSlotMax` (max_bw over 1–2 cycles, extra_acked       |
//! |                   | slots), Nichols' `MaxFilter` on a round clock (v1 max_bw)            |
//! | `aggregation`     | ACK aggregation (extra_acked): epochs, Linux slots or draft filter   |
//! | `startup`         | STARTUP/DRAIN gains and the full-pipe (plateau) detector             |
//! | `probe_rtt`       | min_rtt windows; PROBE_RTT enter, hold, exit (`ProbeRttModel`)       |
//! | `pacing`          | pacing rate from bw and gain, initial rate from the RTT              |
//! | `tso`             | offload burst sizing, the cwnd quantization budget                   |
//! | `inflight`        | BDP, inflight at the next departure (EDT), longterm caps, saved cwnd |
//! | `fast_path`       | v2/v3: skip model/control on quiet app-limited ACKs (`FastPathModel`)|
//! | `signals`         | v2/v3: per-round congestion signals (loss rounds, latest rate/volume)|
//! | `probe_bw`        | v2/v3: four-phase cycle timing, ACK phase, longterm growth slope     |
//! | `ecn`             | v2/v3: DCTCP-style ECN alpha, eligibility, STARTUP exit              |
//! | `undo`            | v2/v3: the loss-adapted bounds saved for a spurious loss's undo      |
//!
//! and the versions beside them (`v1`, `v2`, `v3`), each a directory: its parameter table
//! (`params.rs`: the variants — v1 mainline / Linux 4.13, v2 bbr2 / bbr2_new, v3 draft / Linux —
//! chosen once per flow), the rules that really differ (v1: 8-phase gain cycle, long-term policer
//! model; v2/v3: the loss/ECN bounds, `bounds.rs` / `model.rs`, and their PROBE_BW cycle), each
//! marked with the Linux function or draft section it follows, the control update (v2/v3:
//! `control.rs`), and the unit tests in `tests.rs`, which drive the shared bottleneck simulator
//! (`testkit`). v2 and v3 use the draft's names (BBR.inflight_longterm, not Linux's inflight_hi;
//! `State`, not `Mode`); v1 keeps tcp_bbr.c's. `golden_tests.rs` records every version's per-ACK
//! state over fixed scenarios (`crates/cc/tests/golden/bbr/`): a refactor must leave it unchanged.
//!
//! # Rules common to the family
//!
//! - Linux's fixed-point arithmetic, so thresholds flip where Linux's do (`units`).
//! - Time resolution: ns everywhere (Linux: µs stamps, jiffies for the min_rtt window and the
//!   PROBE_RTT hold), the ACK-aggregation epoch included. One exception is kept: v2alpha's
//!   `bbr_packets_in_net_at_edt` truncates the EDT interval to µs as Linux does (`v2`'s
//!   `EDT_CLOCK`), as bbr2.rs always did; v1 and v3 have used ns there.
//! - Random draws (PROBE_BW start phase, probe timing) come from a SplitMix64 generator seeded by
//!   the flow (`rng`), so runs are reproducible.
//! - Hot path: `cong_control` runs per ACK, so everything is statically dispatched, allocation
//!   free, and the shared helpers are `#[inline]`.

mod aggregation;
mod ecn;
mod fast_path;
mod inflight;
mod pacing;
mod probe_bw;
mod probe_rtt;
mod round;
mod signals;
mod startup;
mod tso;
mod undo;
mod units;
mod windowed_filter;

#[cfg(test)]
mod golden_tests;
#[cfg(test)]
mod probe_rtt_check;
pub mod v1;
pub mod v2;
pub mod v3;

pub use v1::Bbr1;
pub use v2::Bbr2;
pub use v3::Bbr3;

use crate::{CwndEvent, TcpCc};
use aggregation::AckAggregation;

/// `bbr_cwnd_event` (§HandleRestartFromIdle): does this event restart transmission after idle
/// while app-limited? If so, note it (PROBE_RTT waits for the next ACK that delivers data: the
/// idle time was not a stale min_rtt) and start a new aggregation epoch (the idle time is not ACK
/// aggregation). The version then paces at exactly bw in PROBE_BW, or checks whether PROBE_RTT
/// is over.
#[inline]
fn restart_from_idle(
    tp: &TcpCc,
    ev: CwndEvent,
    idle_restart: &mut bool,
    agg: &mut AckAggregation,
) -> bool {
    if ev != CwndEvent::TxStart || tp.app_limited == 0 {
        return false;
    }
    *idle_restart = true;
    agg.restart_epoch(tp.now_ns);
    true
}

/// A read-only view of a BBR flow's model and controls, the same for every version, for tests
/// and tracing (the golden-trace test records it per ACK). Volumes are packets, bandwidths the
/// family's fixed point (`units`); a bound a version does not have reads as "unset"
/// (`u64::MAX` / `u32::MAX`), a field it does not keep as 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModelView {
    /// The exported phase code (`CcStateSample::phase_code`).
    pub state_code: u8,
    /// v1's PROBE_BW gain-cycle index (0 for v2/v3, whose phase is in `state_code`).
    pub cycle_idx: u8,
    /// The latest ACK started a round.
    pub round_start: bool,
    /// BBR.round_count: packet-timed rounds since the flow started.
    pub round_count: u64,
    /// BBR.idle_restart: transmission restarted after idle and no data has been delivered since.
    pub idle_restart: bool,
    /// BBR.max_bw.
    pub max_bw: u64,
    /// BBR.bw, the estimate pacing and the BDP use.
    pub bw: u64,
    pub min_rtt_ns: u64,
    /// BBR.bw_shortterm (Linux bw_lo).
    pub bw_shortterm: u64,
    /// bbr2_new's bw_hi.
    pub bw_hi: u64,
    /// v1's long-term (policer) bandwidth while in use, else 0.
    pub lt_bw: u64,
    /// BBR.inflight_longterm (Linux inflight_hi).
    pub inflight_longterm: u32,
    /// BBR.inflight_shortterm (Linux inflight_lo).
    pub inflight_shortterm: u32,
    /// BBR.extra_acked as the cwnd uses it.
    pub extra_acked: u32,
    pub full_bw_reached: bool,
    pub full_bw: u64,
    pub full_bw_count: u32,
    /// Gains, 2^16.
    pub pacing_gain: u64,
    pub cwnd_gain: u64,
    pub prior_cwnd: u32,
    /// ECN alpha, 2^8 (0 where the version keeps none).
    pub ecn_alpha: u32,
}

impl ModelView {
    /// A bandwidth of the family's fixed point (packets/µs << 24) in bit/s of payload for
    /// segments of `mss` bytes; `u64::MAX` (unset) reads as NaN.
    pub fn bw_bps(bw: u64, mss: u32) -> f64 {
        if bw == u64::MAX {
            return f64::NAN;
        }
        units::bw_bytes_per_sec(bw, mss) as f64 * 8.0
    }

    /// A view with what the family's shared parts hold (the round counter, min_rtt, the
    /// full-pipe detector) filled in, every bound unset and every other field 0; a version's
    /// `model_view` sets its state, bandwidths, gains and what else it keeps on top of it.
    pub(crate) fn from_shared_parts(
        round: &round::RoundCounter,
        min_rtt: &probe_rtt::MinRtt,
        full_bw: &startup::FullBw,
    ) -> Self {
        ModelView {
            state_code: 0,
            cycle_idx: 0,
            round_start: round.round_start,
            round_count: round.round_count,
            idle_restart: false,
            max_bw: 0,
            bw: 0,
            min_rtt_ns: min_rtt.rtt_ns,
            bw_shortterm: u64::MAX,
            bw_hi: u64::MAX,
            lt_bw: 0,
            inflight_longterm: u32::MAX,
            inflight_shortterm: u32::MAX,
            extra_acked: 0,
            full_bw_reached: full_bw.reached,
            full_bw: full_bw.bw,
            full_bw_count: full_bw.cnt,
            pacing_gain: 0,
            cwnd_gain: 0,
            prior_cwnd: 0,
            ecn_alpha: 0,
        }
    }
}
