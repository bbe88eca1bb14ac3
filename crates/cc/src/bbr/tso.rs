//! Offload burst sizing (TSO/GSO autosizing, draft §Send Quantum) and the cwnd allowance for it
//! (`bbr_quantization_budget`).
//!
//! A paced sender still leaves in bursts: the NIC's segmentation offload sends one large buffer
//! at line rate. BBR sizes the burst to ~1 ms of the pacing rate (`sk_pacing_shift` = 10), at
//! least 1–2 segments, at most 64 KB; v2alpha/v3 add `64 KB >> (min_rtt / 512 µs)` so short-RTT
//! (datacenter) flows get big bursts and save CPU (Google BBRv2 slides, optimisation 2). cwnd must
//! leave room for about 3 such bursts in flight or the sender stalls at small BDPs.

use crate::{Nanos, GSO_LEGACY_MAX_SIZE, NSEC_PER_USEC, PACING_SHIFT};
/// Burst byte cap `GSO_LEGACY_MAX_SIZE - 1 - MAX_TCP_HEADER` (320 B on x86-64 builds).
pub const GSO_MAX_BYTES: u64 = GSO_LEGACY_MAX_SIZE - 1 - 320;
/// Below this pacing rate (bit/s) bursts are 1 segment (`bbr_min_tso_rate`): batching is pointless.
pub const MIN_TSO_RATE_BPS: u64 = 1_200_000;
/// The min_rtt allowance halves per 2^9 µs = 512 µs of min_rtt (`bbr_tso_rtt_shift`), so it is
/// below one 1500-B packet from ~3 ms: big bursts only where the RTT is datacenter-short.
pub const TSO_RTT_SHIFT: u32 = 9;
/// Offload bursts the cwnd leaves room for (`bbr_quantization_budget`'s `3 * tso_segs_goal`).
pub const QUANTA_IN_FLIGHT: u32 = 3;
/// Extra cwnd while probing up, so inflight can exceed the BDP even when it is a few packets.
pub const PROBE_UP_EXTRA_CWND: u32 = 2;

/// `bbr_min_tso_segs`: 1 segment below 1.2 Mbit/s, else 2.
#[inline]
pub fn min_tso_segs(pacing_rate_bytes_per_s: u64) -> u32 {
    if pacing_rate_bytes_per_s < MIN_TSO_RATE_BPS / 8 {
        1
    } else {
        2
    }
}

/// `pacing_rate >> sk_pacing_shift`: about 1 ms of data.
#[inline]
pub fn pacing_burst_bytes(pacing_rate_bytes_per_s: u64) -> u64 {
    pacing_rate_bytes_per_s >> PACING_SHIFT
}

/// The min_rtt burst allowance `64 KB >> (min_rtt_us >> 9)` (v2alpha `bbr_tso_segs_generic`, v3;
/// Google BBRv2 slides "r = min_rtt >> K_r; size += 0xFFFF >> r"); 0 before any RTT sample (Linux's
/// `min_rtt_us = ~0U` shifts it away).
#[inline]
pub fn min_rtt_burst_bytes(min_rtt_ns: Nanos) -> u64 {
    if min_rtt_ns == u64::MAX {
        return 0;
    }
    let r = (min_rtt_ns / NSEC_PER_USEC) >> TSO_RTT_SHIFT;
    if r < 64 {
        GSO_LEGACY_MAX_SIZE >> r
    } else {
        0
    }
}

/// Mainline `bbr_quantization_budget`: cwnd + 3 bursts, rounded up to even (delayed ACKs ack
/// pairs), + 2 in the 5/4 probe phase.
#[inline]
pub fn quantization_budget_even(cwnd: u32, tso_segs: u32, probing_up: bool) -> u32 {
    let mut cwnd = cwnd.saturating_add(QUANTA_IN_FLIGHT * tso_segs);
    cwnd = (cwnd + 1) & !1u32;
    if probing_up {
        cwnd += PROBE_UP_EXTRA_CWND;
    }
    cwnd
}

/// v2alpha (`bbr_cwnd_tso_budget = 1`, "flooring") and v3 / draft §QuantizationBudget: at least 3
/// bursts and 4 packets, + 2 in PROBE_UP.
#[inline]
pub fn quantization_budget_floor(cwnd: u32, tso_segs: u32, probing_up: bool) -> u32 {
    let mut cwnd = cwnd.max(QUANTA_IN_FLIGHT * tso_segs).max(super::inflight::CWND_MIN_TARGET);
    if probing_up {
        cwnd = cwnd.saturating_add(PROBE_UP_EXTRA_CWND);
    }
    cwnd
}
