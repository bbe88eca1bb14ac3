//! Volumes: the BDP, data in flight at the next departure, and the inflight bounds of v2/v3.
//!
//! ```text
//! BDP(gain)          = ceil(gain · bw · min_rtt)                          (bbr_bdp, §BDPMultiple)
//! inflight at EDT    = inflight_now (+ the burst about to leave, while pacing_gain > 1)
//!                      − bw · (EDT − now)                       (bbr_packets_in_net_at_edt)
//! inflight_hi − headroom = inflight_hi − max(1, 15 % of it), ≥ 4       (§InflightWithHeadroom)
//! ```

use super::units::{packets_in_on, Clock, BW_NS_UNIT, GAIN_SHIFT, INF_PKTS};
use crate::{CaState, Nanos, TcpCc};

/// Minimum cwnd (Linux `bbr_cwnd_min_target`, draft `MinPipeCwnd`): 4 packets keep an
/// ACK-every-other-packet receiver pipelined (2 data packets + the ACKs for 2 in flight).
pub const CWND_MIN_TARGET: u32 = 4;

/// `bbr_bdp`: ceil(bw × min_rtt × gain) packets (gain 2^16); `init_cwnd` before any RTT sample
/// (nothing to multiply: be safe). Never the "unset" volume.
// One division rounds up: `div_ceil` would add a u128 remainder per call.
#[allow(clippy::manual_div_ceil)]
#[inline]
pub fn bdp(bw: u64, min_rtt_ns: Nanos, gain: u64, init_cwnd: u32) -> u32 {
    if min_rtt_ns == u64::MAX {
        return init_cwnd;
    }
    // (packets/µs << 24) × ns
    let w = bw as u128 * min_rtt_ns as u128;
    ((((w * gain as u128) >> GAIN_SHIFT) + BW_NS_UNIT - 1) / BW_NS_UNIT).min(INF_PKTS as u128 - 1)
        as u32
}

/// `bbr_packets_in_net_at_edt`: the data in flight when the next packet departs (EDT, the
/// pacer's earliest departure time `tp.wstamp_ns`), counting `edt_burst_segs` about to leave with
/// it and deducting what `bw` delivers until then, the interval read on `clock` (v2alpha reads it
/// in µs as Linux does).
#[inline]
pub fn packets_in_net_at_edt(
    tp: &TcpCc,
    bw: u64,
    inflight_now: u32,
    edt_burst_segs: u32,
    clock: Clock,
) -> u32 {
    let now = tp.now_ns;
    let edt = tp.wstamp_ns.max(now);
    let interval_delivered = packets_in_on(clock, bw, edt - now) as u64;
    (inflight_now as u64 + edt_burst_segs as u64).saturating_sub(interval_delivered) as u32
}

/// Which long-term volume bound applies in the current state (`bbr2_bound_cwnd_for_inflight_model`,
/// §BoundCwndForModel).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InflightCap {
    /// STARTUP, DRAIN: no long-term bound.
    None,
    /// PROBE_BW DOWN / REFILL / UP: probe whether more fits (inflight_hi itself).
    Hi,
    /// CRUISE, PROBE_RTT: leave headroom below inflight_hi for other flows.
    HiWithHeadroom,
}

/// §InflightWithHeadroom (`bbr2_inflight_with_headroom`): inflight_hi less `headroom` (2^16) of
/// it, at least 1 packet less, and not below the minimum cwnd.
#[inline]
pub fn inflight_with_headroom(inflight_hi: u32, headroom: u64) -> u32 {
    if inflight_hi == INF_PKTS {
        return INF_PKTS;
    }
    let headroom_pkts = ((inflight_hi as u64 * headroom) >> GAIN_SHIFT).max(1) as u32;
    inflight_hi.saturating_sub(headroom_pkts).max(CWND_MIN_TARGET)
}

/// `bbr2_bound_cwnd_for_inflight_model` / §BoundCwndForModel: cwnd ≤ the state's long-term bound
/// and ≤ inflight_lo (what loss/ECN allowed since the last probe), ≥ the minimum cwnd.
#[inline]
pub fn bound_cwnd_for_inflight_model(
    tp: &mut TcpCc,
    cap: InflightCap,
    inflight_hi: u32,
    inflight_lo: u32,
    headroom: u64,
) {
    let cap = match cap {
        InflightCap::None => INF_PKTS,
        InflightCap::Hi => inflight_hi,
        InflightCap::HiWithHeadroom => inflight_with_headroom(inflight_hi, headroom),
    };
    tp.snd_cwnd = tp.snd_cwnd.min(cap.min(inflight_lo).max(CWND_MIN_TARGET));
}

/// `bbr_set_cwnd`'s step toward `target_pkts` on an ACK of `acked` packets (§SetCwnd): once the
/// pipe was filled, grow by `acked` but snap down to the target; before, grow while below the
/// target or `early` (the version's "initial window not yet used" test), else hold. Returns the
/// new cwnd (at least [`CWND_MIN_TARGET`]) and whether it stands at its target, when Linux may
/// take the fast path on the next ACK (`try_fast_path`).
#[inline]
pub fn grow_cwnd(
    cwnd: u32,
    acked: u32,
    target_pkts: u32,
    full_bw_reached: bool,
    early: bool,
) -> (u32, bool) {
    let (cwnd, at_target) = if full_bw_reached {
        let grown = cwnd.saturating_add(acked);
        if grown >= target_pkts {
            (target_pkts, true)
        } else {
            (grown, false)
        }
    } else if cwnd < target_pkts || early {
        (cwnd.saturating_add(acked), false)
    } else {
        (cwnd, true)
    };
    (cwnd.max(CWND_MIN_TARGET), at_target)
}

/// `bbr_save_cwnd`: the cwnd to restore after recovery or PROBE_RTT — the current one if this is
/// the start of such an episode, else the larger of the two (a nested episode must not save the
/// already-reduced cwnd).
#[inline]
pub fn saved_cwnd(prior_cwnd: u32, cwnd: u32, prev_ca_state: CaState, in_probe_rtt: bool) -> u32 {
    if prev_ca_state < CaState::Recovery && !in_probe_rtt {
        cwnd
    } else {
        prior_cwnd.max(cwnd)
    }
}

/// `tcp_enter_loss`'s cut, cwnd = packets in flight + 1, made by `set_state(Loss)` so an algorithm
/// driven alone behaves as under Linux; a no-op if the transport already cut.
#[inline]
pub fn enter_loss_cwnd_cut(tp: &mut TcpCc) {
    let loss_cwnd = tp.packets_in_flight() + 1;
    if tp.snd_cwnd > loss_cwnd {
        tp.set_cwnd(loss_cwnd);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bbr::units::{linux_gain, GAIN_UNIT};

    #[test]
    fn bdp_is_the_ceiling_of_gain_bw_min_rtt_and_init_cwnd_before_a_sample() {
        // 2000 packets/s = 0.002 packets/µs; 40 ms: 80 packets, ceil of a value just below 80.
        let bw = (0.002 * (1u64 << 24) as f64) as u64;
        assert_eq!(bdp(bw, 40_000_000, GAIN_UNIT, 10), 80);
        assert_eq!(bdp(bw, 40_000_000, 2 * GAIN_UNIT, 10), 160);
        assert_eq!(bdp(bw, u64::MAX, GAIN_UNIT, 10), 10, "no RTT sample yet");
        for (bw, rtt, g) in [
            (1u64, 1u64, GAIN_UNIT),
            (33_555, 40_000_123, linux_gain(739)),
            (1 << 40, 7, linux_gain(88)),
        ] {
            let exact =
                ((bw as u128 * rtt as u128 * g as u128) >> GAIN_SHIFT).div_ceil(BW_NS_UNIT) as u32;
            assert_eq!(bdp(bw, rtt, g, 10), exact);
        }
    }
}
