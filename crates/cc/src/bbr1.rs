//! BBRv1 (Bottleneck Bandwidth and Round-trip propagation time) as Linux mainline
//! `net/ipv4/tcp_bbr.c` runs it.
//!
//! Model. On every ACK BBR updates a two-parameter model of the path from the delivery-rate sample
//! (`rate.rs`) and sets its controls from it:
//!
//! ```text
//! max_bw   = windowed max of delivery-rate samples over the last 10 packet-timed round trips
//! min_rtt  = minimum RTT seen over the last 10 s
//! BDP      = max_bw · min_rtt
//! pacing   = pacing_gain · max_bw · (1 − 1 %)
//! cwnd     = cwnd_gain · BDP + extra_acked (ACK aggregation) + quantization budget (offload)
//! ```
//!
//! A state machine varies the gains: STARTUP (pacing and cwnd gain 2/ln 2 ≈ 2.885, doubling the
//! sending rate per round like slow start) until the bandwidth stops growing by 25 % for 3
//! non-app-limited rounds ("full pipe"); DRAIN (pacing gain 1/2.885) until the packets in flight
//! fall to one BDP; PROBE_BW, cycling the pacing gain through {5/4, 3/4, 1, 1, 1, 1, 1, 1}, one
//! phase per min_rtt, to probe for more bandwidth and then drain the queue the probe made (cwnd
//! gain 2); PROBE_RTT when min_rtt has not been refreshed for 10 s: cwnd 4 packets for at least
//! 200 ms and one round, to let the queue drain and measure the propagation delay, then back to
//! PROBE_BW (or STARTUP if the pipe was never filled). Losses do not drive the model; they cut
//! cwnd through packet conservation in the first round of recovery, and a "long-term" (policer)
//! estimator switches the bandwidth to the average delivery rate of two lossy (≥ 20 %) intervals
//! of consistent rate, pacing at gain 1 for 48 rounds.
//!
//! Units and arithmetic: Linux's fixed point. Bandwidth is packets per microsecond scaled by
//! 2^24 (`BW_SCALE`), gains are scaled by 2^8 (`BBR_SCALE`), exactly as tcp_bbr.c, so gains,
//! rounding (e.g. ceil of the BDP, the 739/256 high gain and 88/256 drain gain) and comparisons
//! reproduce Linux's integer results; intermediates are u128 so nothing overflows. Reason: bbrlab
//! is compared against Linux, and thresholds such as "full pipe = bw ≥ 1.25·full_bw" or "inflight
//! ≤ BDP" flip on rounding. Time is kept in nanoseconds (Linux: µs for rate and cycle stamps,
//! jiffies for min_rtt and PROBE_RTT stamps), so a bandwidth sample is
//! `delivered · 2^24 · 1000 / interval_ns` and the BDP uses `min_rtt_ns / 1000` — the same units as
//! Linux with finer time resolution.
//!
//! Where bbrlab deliberately differs from Linux:
//! - Time resolution: ns everywhere (Linux: µs stamps; the 10 s min_rtt window and the 200 ms
//!   PROBE_RTT hold are in jiffies; the long-term interval length in ms).
//! - The ACK-aggregation estimate (`extra_acked`) is kept in u32, not u16 (Linux would truncate
//!   above 65535 packets).
//! - `set_state(Loss)` also applies the cwnd cut that Linux makes in `tcp_enter_loss`
//!   (`cwnd = packets_in_flight + 1`) if the transport has not applied it yet, so the algorithm
//!   behaves the same when driven alone; if the transport already did it this is a no-op. As in
//!   Linux, the cwnd to restore is saved only by `ssthresh()` (`bbr_save_cwnd`), which the caller
//!   must invoke on entering Recovery/Loss exactly where Linux does (`tcp_init_cwnd_reduction`,
//!   `tcp_enter_loss`) and before `set_state`.
//! - `sample().bw_bps` reports `bbr_bw()` (lt_bw while the policer model is in use, else max_bw),
//!   as Linux's `bbr_get_info` does.
//! - `tso_segs()` returns `bbr_tso_segs_goal` (the 4.x-era `.tso_segs_goal` hook); current
//!   mainline exports only `bbr_min_tso_segs` and lets `tcp_tso_autosize` do the rest.
//! - The random PROBE_BW start phase comes from a SplitMix64 generator seeded by `Bbr1::new(seed)`
//!   (Linux: `get_random_u32_below`), so runs are reproducible.

use crate::filter::WindowedFilter;
use crate::{
    CaState, CcStateSample, CongestionOps, CwndEvent, Nanos, RateSample, TcpCc, NSEC_PER_MSEC,
    NSEC_PER_SEC, NSEC_PER_USEC, TCP_INFINITE_SSTHRESH,
};

/// Bandwidth fixed point: packets per µs << 24 (≈ 715 bit/s resolution at 1500 B packets).
const BW_SCALE: u32 = 24;
const BW_UNIT: u128 = 1 << BW_SCALE;
/// Gain fixed point: 1.0 = 256.
const BBR_SCALE: u32 = 8;
const BBR_UNIT: u32 = 1 << BBR_SCALE;

/// Phases in a PROBE_BW gain cycle.
const CYCLE_LEN: usize = 8;
/// Window of the max-bw filter in round trips: a full gain cycle plus 2, so the filter always
/// holds the sample from the last 5/4 probe.
const BW_RTTS: u64 = CYCLE_LEN as u64 + 2;
/// Window of the min_rtt filter: 10 s (paths rarely change faster; PROBE_RTT costs ~2 % per 10 s).
const MIN_RTT_WIN_NS: Nanos = 10 * NSEC_PER_SEC;
/// Time held at `CWND_MIN_TARGET` in PROBE_RTT: 200 ms, long enough to drain the queue and see the
/// propagation delay on most paths, short enough to cost ~2 % (200 ms / 10 s).
const PROBE_RTT_MODE_NS: Nanos = 200 * NSEC_PER_MSEC;
/// Below this pacing rate (bit/s) use 1-segment bursts: offload batching is pointless there.
const MIN_TSO_RATE_BPS: u64 = 1_200_000;
/// Pace 1 % below the estimated bandwidth on average, to keep the bottleneck queue from growing.
const PACING_MARGIN_PERCENT: u64 = 1;
/// STARTUP gain 2/ln 2 ≈ 2.885 (+1 to round up in fixed point): the smallest gain that doubles the
/// delivery rate each round, like slow start, while pacing smoothly.
const HIGH_GAIN: u32 = BBR_UNIT * 2885 / 1000 + 1;
/// DRAIN gain 1/2.885: drains in about one round the queue STARTUP built.
const DRAIN_GAIN: u32 = BBR_UNIT * 1000 / 2885;
/// Steady-state cwnd gain 2: tolerates delayed and stretched ACKs while pacing at bw.
const CWND_GAIN: u32 = BBR_UNIT * 2;
/// PROBE_BW pacing gains: probe (5/4), drain the probe's queue (3/4), cruise at 1 for 6 phases.
const PACING_GAIN: [u32; CYCLE_LEN] = [
    BBR_UNIT * 5 / 4,
    BBR_UNIT * 3 / 4,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
];
/// The start phase of PROBE_BW is random over this many phases (all but the 3/4 phase).
const CYCLE_RAND: u32 = 7;
/// Minimum cwnd and PROBE_RTT cwnd: 4 packets keep an ACK-every-other-packet receiver busy.
const CWND_MIN_TARGET: u32 = 4;
/// Full pipe: bw grew by less than 5/4 …
const FULL_BW_THRESH: u32 = BBR_UNIT * 5 / 4;
/// … for 3 rounds (1: receive-window autotuning grows, 2: sender fills it, 3: higher samples).
const FULL_BW_CNT: u32 = 3;
/// Long-term sampling interval: at least 4 rounds …
const LT_INTVL_MIN_RTTS: u32 = 4;
/// … with a loss ratio of at least 50/256 ≈ 20 % (a policer dropping the excess).
const LT_LOSS_THRESH: u64 = 50;
/// Two intervals are "consistent" if their rates differ by at most 1/8 …
const LT_BW_RATIO: u128 = BBR_UNIT as u128 / 8;
/// … or by at most 4 kbit/s (in bytes/s here).
const LT_BW_DIFF_BYTES: u64 = 4000 / 8;
/// Use the long-term rate for 48 rounds, then re-probe.
const LT_BW_MAX_RTTS: u32 = 48;
/// Weight of the ACK-aggregation estimate in the cwnd target (1.0).
const EXTRA_ACKED_GAIN: u32 = BBR_UNIT;
/// The extra_acked max filter has 2 slots of 5 rounds each (window 5–10 rounds).
const EXTRA_ACKED_WIN_RTTS: u32 = 5;
/// Restart the aggregation epoch after this many packets acked (stale epoch).
const ACK_EPOCH_ACKED_RESET_THRESH: u32 = 1 << 20;
/// Cap the aggregation allowance at 100 ms worth of bandwidth.
const EXTRA_ACKED_MAX_US: u128 = 100_000;
/// Linux `TCP_INIT_CWND`: the cwnd cap before any RTT sample.
const TCP_INIT_CWND: u32 = 10;
/// Linux `sk_pacing_shift` default: offload bursts hold ~1 ms (2^-10 s) of data.
const PACING_SHIFT: u32 = 10;
/// `GSO_LEGACY_MAX_SIZE - 1 - MAX_TCP_HEADER` (64 KiB − 1 − 320 on x86-64 builds).
const GSO_MAX_BYTES: u64 = 65_536 - 1 - 320;
/// Burst cap in segments (Linux `0x7F`).
const TSO_SEGS_MAX: u32 = 0x7F;

/// BBR modes (Linux `enum bbr_mode`), also the exported phase codes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Startup = 0,
    Drain = 1,
    ProbeBw = 2,
    ProbeRtt = 3,
}

#[derive(Clone, Debug)]
pub struct Bbr1 {
    rng: u64,
    mode: Mode,
    /// min RTT in the 10 s window, ns (u64::MAX = none).
    min_rtt_ns: Nanos,
    min_rtt_stamp_ns: Nanos,
    /// End of the PROBE_RTT hold, once inflight reached the PROBE_RTT cwnd.
    probe_rtt_done_stamp: Option<Nanos>,
    probe_rtt_round_done: bool,
    /// Max delivery rate over BW_RTTS rounds, pkts/µs << 24; time axis = `rtt_cnt`.
    bw: WindowedFilter,
    rtt_cnt: u64,
    next_rtt_delivered: u64,
    round_start: bool,
    /// Start of the current PROBE_BW phase (a `delivered_mstamp`).
    cycle_mstamp_ns: Nanos,
    cycle_idx: usize,
    prev_ca_state: CaState,
    packet_conservation: bool,
    idle_restart: bool,
    pacing_gain: u32,
    cwnd_gain: u32,
    full_bw_reached: bool,
    full_bw_cnt: u32,
    full_bw: u64,
    has_seen_rtt: bool,
    /// cwnd saved on entering recovery or PROBE_RTT.
    prior_cwnd: u32,
    // Long-term (policer) model.
    lt_is_sampling: bool,
    lt_rtt_cnt: u32,
    lt_use_bw: bool,
    lt_bw: u64,
    lt_last_delivered: u64,
    lt_last_stamp_ns: Nanos,
    lt_last_lost: u64,
    // ACK aggregation.
    ack_epoch_mstamp_ns: Nanos,
    ack_epoch_acked: u32,
    extra_acked: [u32; 2],
    extra_acked_win_rtts: u32,
    extra_acked_win_idx: usize,
}

impl Bbr1 {
    pub fn new(seed: u64) -> Self {
        Bbr1 {
            rng: seed,
            mode: Mode::Startup,
            min_rtt_ns: u64::MAX,
            min_rtt_stamp_ns: 0,
            probe_rtt_done_stamp: None,
            probe_rtt_round_done: false,
            bw: WindowedFilter::new_max(),
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            round_start: false,
            cycle_mstamp_ns: 0,
            cycle_idx: 0,
            prev_ca_state: CaState::Open,
            packet_conservation: false,
            idle_restart: false,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            full_bw_reached: false,
            full_bw_cnt: 0,
            full_bw: 0,
            has_seen_rtt: false,
            prior_cwnd: 0,
            lt_is_sampling: false,
            lt_rtt_cnt: 0,
            lt_use_bw: false,
            lt_bw: 0,
            lt_last_delivered: 0,
            lt_last_stamp_ns: 0,
            lt_last_lost: 0,
            ack_epoch_mstamp_ns: 0,
            ack_epoch_acked: 0,
            extra_acked: [0; 2],
            extra_acked_win_rtts: 0,
            extra_acked_win_idx: 0,
        }
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// SplitMix64 step (Steele, Lea & Flood 2014): tiny, seedable, good enough for a phase pick.
    fn next_u64(&mut self) -> u64 {
        self.rng = self.rng.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, n), by multiply-shift like Linux `get_random_u32_below`.
    fn rand_below(&mut self, n: u32) -> u32 {
        (((self.next_u64() >> 32) * n as u64) >> 32) as u32
    }

    /// `bbr_max_bw`.
    #[inline]
    fn max_bw(&self) -> u64 {
        self.bw.get()
    }

    /// `bbr_bw`: the estimate in use.
    #[inline]
    fn bw(&self) -> u64 {
        if self.lt_use_bw {
            self.lt_bw
        } else {
            self.max_bw()
        }
    }

    /// `bbr_extra_acked`: max over the two 5-round slots.
    #[inline]
    fn extra_acked(&self) -> u32 {
        self.extra_acked[0].max(self.extra_acked[1])
    }

    /// `bbr_rate_bytes_per_sec`: rate (pkts/µs << 24) × gain × (1 − margin), in bytes/s.
    fn rate_bytes_per_sec(mss: u32, rate: u64, gain: u32) -> u64 {
        let mut r = rate as u128 * mss as u128;
        r = (r * gain as u128) >> BBR_SCALE;
        r *= (1_000_000 / 100 * (100 - PACING_MARGIN_PERCENT)) as u128;
        (r >> BW_SCALE) as u64
    }

    /// `bbr_bw_to_pacing_rate`.
    fn bw_to_pacing_rate(tp: &TcpCc, bw: u64, gain: u32) -> u64 {
        Self::rate_bytes_per_sec(tp.mss, bw, gain).min(tp.max_pacing_rate_bytes_per_s)
    }

    /// `bbr_init_pacing_rate_from_rtt`: high_gain × cwnd / (srtt or 1 ms).
    fn init_pacing_rate_from_rtt(&mut self, tp: &mut TcpCc) {
        let rtt_ns = if tp.srtt_ns != 0 {
            self.has_seen_rtt = true;
            tp.srtt_ns.max(NSEC_PER_USEC)
        } else {
            NSEC_PER_MSEC
        };
        let bw = (tp.snd_cwnd as u128 * BW_UNIT * NSEC_PER_USEC as u128 / rtt_ns as u128) as u64;
        tp.pacing_rate_bytes_per_s = Self::bw_to_pacing_rate(tp, bw, HIGH_GAIN);
    }

    /// `bbr_set_pacing_rate`: never lower the rate before the pipe is full.
    fn set_pacing_rate(&mut self, tp: &mut TcpCc, bw: u64, gain: u32) {
        let rate = Self::bw_to_pacing_rate(tp, bw, gain);
        if !self.has_seen_rtt && tp.srtt_ns != 0 {
            self.init_pacing_rate_from_rtt(tp);
        }
        if self.full_bw_reached || rate > tp.pacing_rate_bytes_per_s {
            tp.pacing_rate_bytes_per_s = rate;
        }
    }

    /// `bbr_min_tso_segs`.
    fn min_tso_segs(tp: &TcpCc) -> u32 {
        if tp.pacing_rate_bytes_per_s < MIN_TSO_RATE_BPS / 8 {
            1
        } else {
            2
        }
    }

    /// `bbr_tso_segs_goal`: ~1 ms of data per burst, ≥ min_tso_segs, ≤ 64 KB and 127 segments.
    pub fn tso_segs_goal(tp: &TcpCc) -> u32 {
        let bytes = (tp.pacing_rate_bytes_per_s >> PACING_SHIFT).min(GSO_MAX_BYTES);
        let segs = ((bytes / tp.mss.max(1) as u64) as u32).max(Self::min_tso_segs(tp));
        segs.min(TSO_SEGS_MAX)
    }

    /// `bbr_save_cwnd`: remember the last known good cwnd.
    fn save_cwnd(&mut self, tp: &TcpCc) {
        if self.prev_ca_state < CaState::Recovery && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = tp.snd_cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(tp.snd_cwnd);
        }
    }

    /// `bbr_bdp`: ceil(bw × min_rtt × gain) in packets.
    fn bdp(&self, bw: u64, gain: u32) -> u32 {
        if self.min_rtt_ns == u64::MAX {
            return TCP_INIT_CWND; // no RTT sample yet: be safe
        }
        let w = bw as u128 * self.min_rtt_ns as u128; // (pkts/µs << 24) × ns
        let unit = BW_UNIT * NSEC_PER_USEC as u128;
        (((w * gain as u128) >> BBR_SCALE) + unit - 1).checked_div(unit).unwrap_or(0).min(u32::MAX as u128) as u32
    }

    /// `bbr_quantization_budget`: room for 3 offload bursts, even cwnd, +2 while probing.
    fn quantization_budget(&self, tp: &TcpCc, cwnd: u32) -> u32 {
        let mut cwnd = cwnd.saturating_add(3 * Self::tso_segs_goal(tp));
        cwnd = (cwnd + 1) & !1u32;
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            cwnd += 2;
        }
        cwnd
    }

    /// `bbr_inflight`.
    fn inflight(&self, tp: &TcpCc, bw: u64, gain: u32) -> u32 {
        let bdp = self.bdp(bw, gain);
        self.quantization_budget(tp, bdp)
    }

    /// `bbr_packets_in_net_at_edt`: inflight expected when the next packet departs (EDT).
    fn packets_in_net_at_edt(&self, tp: &TcpCc, inflight_now: u32) -> u32 {
        let now = tp.now_ns;
        let edt = tp.wstamp_ns.max(now);
        let interval_ns = (edt - now) as u128;
        let interval_delivered = (self.bw() as u128 * interval_ns / (BW_UNIT * NSEC_PER_USEC as u128)) as u64;
        let mut inflight_at_edt = inflight_now as u64;
        if self.pacing_gain > BBR_UNIT {
            inflight_at_edt += Self::tso_segs_goal(tp) as u64; // include the EDT burst
        }
        inflight_at_edt.saturating_sub(interval_delivered) as u32
    }

    /// `bbr_ack_aggregation_cwnd`.
    fn ack_aggregation_cwnd(&self) -> u32 {
        if EXTRA_ACKED_GAIN == 0 || !self.full_bw_reached {
            return 0;
        }
        let max_aggr = (self.bw() as u128 * EXTRA_ACKED_MAX_US / BW_UNIT) as u64;
        let aggr = (EXTRA_ACKED_GAIN as u64 * self.extra_acked() as u64) >> BBR_SCALE;
        aggr.min(max_aggr) as u32
    }

    /// `bbr_set_cwnd_to_recover_or_restore`: packet conservation in the first round of recovery,
    /// restore on exit. Returns (conserving, cwnd).
    fn set_cwnd_to_recover_or_restore(&mut self, tp: &TcpCc, rs: &RateSample, acked: u32) -> (bool, u32) {
        let prev_state = self.prev_ca_state;
        let state = tp.ca_state;
        let mut cwnd = tp.snd_cwnd;
        // An ACK for P packets releases at most 2P: deduct losses here, slow-start in set_cwnd.
        if rs.losses > 0 {
            cwnd = (cwnd as i64 - rs.losses as i64).max(1) as u32;
        }
        if state == CaState::Recovery && prev_state != CaState::Recovery {
            // First round of recovery: packet conservation, starting a round now.
            self.packet_conservation = true;
            self.next_rtt_delivered = tp.delivered;
            cwnd = tp.packets_in_flight() + acked; // cut unused cwnd
        } else if prev_state >= CaState::Recovery && state < CaState::Recovery {
            // Leaving recovery / loss: restore the cwnd saved before it.
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca_state = state;
        if self.packet_conservation {
            return (true, cwnd.max(tp.packets_in_flight() + acked));
        }
        (false, cwnd)
    }

    /// `bbr_set_cwnd`: slow-start toward the target, or snap down to it once the pipe is full.
    fn set_cwnd(&mut self, tp: &mut TcpCc, rs: &RateSample, acked: u32, bw: u64, gain: u32) {
        let mut cwnd = tp.snd_cwnd;
        if acked != 0 {
            let (conserving, c) = self.set_cwnd_to_recover_or_restore(tp, rs, acked);
            cwnd = c;
            if !conserving {
                let mut target = self.bdp(bw, gain);
                target = target.saturating_add(self.ack_aggregation_cwnd());
                target = self.quantization_budget(tp, target);
                if self.full_bw_reached {
                    cwnd = cwnd.saturating_add(acked).min(target);
                } else if cwnd < target || tp.delivered < TCP_INIT_CWND as u64 {
                    cwnd = cwnd.saturating_add(acked);
                }
                cwnd = cwnd.max(CWND_MIN_TARGET);
            }
        }
        tp.snd_cwnd = cwnd.min(tp.snd_cwnd_clamp);
        if self.mode == Mode::ProbeRtt {
            tp.snd_cwnd = tp.snd_cwnd.min(CWND_MIN_TARGET); // drain queue, refresh min_rtt
        }
    }

    /// `bbr_is_next_cycle_phase`.
    fn is_next_cycle_phase(&self, tp: &TcpCc, rs: &RateSample) -> bool {
        let is_full_length = tp.delivered_mstamp_ns.saturating_sub(self.cycle_mstamp_ns) > self.min_rtt_ns;
        if self.pacing_gain == BBR_UNIT {
            return is_full_length; // cruise phases: wall clock only
        }
        let inflight = self.packets_in_net_at_edt(tp, rs.prior_in_flight);
        let bw = self.max_bw();
        if self.pacing_gain > BBR_UNIT {
            // Probe until inflight reaches gain × BDP (may take > min_rtt), unless losses say the
            // path cannot hold it.
            return is_full_length && (rs.losses > 0 || inflight >= self.inflight(tp, bw, self.pacing_gain));
        }
        // Drain phase: done at min_rtt or as soon as the probe's queue is gone.
        is_full_length || inflight <= self.inflight(tp, bw, BBR_UNIT)
    }

    /// `bbr_advance_cycle_phase`.
    fn advance_cycle_phase(&mut self, tp: &TcpCc) {
        self.cycle_idx = (self.cycle_idx + 1) & (CYCLE_LEN - 1);
        self.cycle_mstamp_ns = tp.delivered_mstamp_ns;
    }

    /// `bbr_update_cycle_phase`.
    fn update_cycle_phase(&mut self, tp: &TcpCc, rs: &RateSample) {
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(tp, rs) {
            self.advance_cycle_phase(tp);
        }
    }

    /// `bbr_reset_probe_bw_mode`: random start phase, never the 3/4 phase.
    fn reset_probe_bw_mode(&mut self, tp: &TcpCc) {
        self.mode = Mode::ProbeBw;
        self.cycle_idx = CYCLE_LEN - 1 - self.rand_below(CYCLE_RAND) as usize; // 1..=7
        self.advance_cycle_phase(tp); // → 2..=7 or 0
    }

    /// `bbr_reset_mode`.
    fn reset_mode(&mut self, tp: &TcpCc) {
        if !self.full_bw_reached {
            self.mode = Mode::Startup;
        } else {
            self.reset_probe_bw_mode(tp);
        }
    }

    /// `bbr_reset_lt_bw_sampling_interval`.
    fn reset_lt_bw_sampling_interval(&mut self, tp: &TcpCc) {
        self.lt_last_stamp_ns = tp.delivered_mstamp_ns;
        self.lt_last_delivered = tp.delivered;
        self.lt_last_lost = tp.lost;
        self.lt_rtt_cnt = 0;
    }

    /// `bbr_reset_lt_bw_sampling`.
    fn reset_lt_bw_sampling(&mut self, tp: &TcpCc) {
        self.lt_bw = 0;
        self.lt_use_bw = false;
        self.lt_is_sampling = false;
        self.reset_lt_bw_sampling_interval(tp);
    }

    /// `bbr_lt_bw_interval_done`: two consistent lossy intervals → policed.
    fn lt_bw_interval_done(&mut self, tp: &TcpCc, bw: u64) {
        if self.lt_bw != 0 {
            let diff = bw.abs_diff(self.lt_bw);
            if diff as u128 * BBR_UNIT as u128 <= LT_BW_RATIO * self.lt_bw as u128
                || Self::rate_bytes_per_sec(tp.mss, diff, BBR_UNIT) <= LT_BW_DIFF_BYTES
            {
                self.lt_bw = (bw + self.lt_bw) >> 1; // average of the 2 intervals
                self.lt_use_bw = true;
                self.pacing_gain = BBR_UNIT; // try to avoid drops
                self.lt_rtt_cnt = 0;
                return;
            }
        }
        self.lt_bw = bw;
        self.reset_lt_bw_sampling_interval(tp);
    }

    /// `bbr_lt_bw_sampling`: token-bucket policer detection.
    fn lt_bw_sampling(&mut self, tp: &TcpCc, rs: &RateSample) {
        if self.lt_use_bw {
            if self.mode == Mode::ProbeBw && self.round_start {
                self.lt_rtt_cnt += 1;
                if self.lt_rtt_cnt >= LT_BW_MAX_RTTS {
                    self.reset_lt_bw_sampling(tp); // stop using lt_bw
                    self.reset_probe_bw_mode(tp); // restart gain cycling
                }
            }
            return;
        }
        // Start sampling at the first loss: the policer's bucket is empty by then.
        if !self.lt_is_sampling {
            if rs.losses == 0 {
                return;
            }
            self.reset_lt_bw_sampling_interval(tp);
            self.lt_is_sampling = true;
        }
        if rs.is_app_limited {
            self.reset_lt_bw_sampling(tp); // running out of data would under-estimate
            return;
        }
        if self.round_start {
            self.lt_rtt_cnt += 1;
        }
        if self.lt_rtt_cnt < LT_INTVL_MIN_RTTS {
            return;
        }
        if self.lt_rtt_cnt > 4 * LT_INTVL_MIN_RTTS {
            self.reset_lt_bw_sampling(tp); // interval too long
            return;
        }
        // End the interval at a loss (tokens exhausted).
        if rs.losses == 0 {
            return;
        }
        let lost = tp.lost - self.lt_last_lost;
        let delivered = tp.delivered - self.lt_last_delivered;
        if delivered == 0 || (lost << BBR_SCALE) < LT_LOSS_THRESH * delivered {
            return; // not lossy enough
        }
        let t_ns = tp.delivered_mstamp_ns.saturating_sub(self.lt_last_stamp_ns);
        if t_ns < NSEC_PER_MSEC {
            return; // interval under 1 ms: wait
        }
        let bw = (delivered as u128 * BW_UNIT * NSEC_PER_USEC as u128 / t_ns as u128) as u64;
        self.lt_bw_interval_done(tp, bw);
    }

    /// `bbr_update_bw`: round counting, lt sampling, max-bw filter.
    fn update_bw(&mut self, tp: &TcpCc, rs: &RateSample) {
        self.round_start = false;
        if rs.delivered < 0 || rs.interval_ns <= 0 {
            return; // not a valid sample
        }
        if rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = tp.delivered;
            self.rtt_cnt += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        self.lt_bw_sampling(tp, rs);
        let bw = (rs.delivered as u128 * BW_UNIT * NSEC_PER_USEC as u128 / rs.interval_ns as u128) as u64;
        // App-limited samples only count if they do not lower the estimate.
        if !rs.is_app_limited || bw >= self.max_bw() {
            self.bw.update(BW_RTTS, self.rtt_cnt, bw);
        }
    }

    /// `bbr_update_ack_aggregation`: excess of acked data over bw × time in the current epoch.
    fn update_ack_aggregation(&mut self, tp: &TcpCc, rs: &RateSample) {
        if EXTRA_ACKED_GAIN == 0 || rs.acked_sacked == 0 || rs.delivered < 0 || rs.interval_ns <= 0 {
            return;
        }
        if self.round_start {
            self.extra_acked_win_rtts = (self.extra_acked_win_rtts + 1).min(0x1F);
            if self.extra_acked_win_rtts >= EXTRA_ACKED_WIN_RTTS {
                self.extra_acked_win_rtts = 0;
                self.extra_acked_win_idx ^= 1;
                self.extra_acked[self.extra_acked_win_idx] = 0;
            }
        }
        let epoch_ns = tp.delivered_mstamp_ns.saturating_sub(self.ack_epoch_mstamp_ns) as u128;
        let mut expected = (self.bw() as u128 * epoch_ns / (BW_UNIT * NSEC_PER_USEC as u128)).min(u32::MAX as u128) as u32;
        // Reset the epoch if ACKs arrive slower than expected, or after very many packets.
        if self.ack_epoch_acked <= expected
            || self.ack_epoch_acked + rs.acked_sacked >= ACK_EPOCH_ACKED_RESET_THRESH
        {
            self.ack_epoch_acked = 0;
            self.ack_epoch_mstamp_ns = tp.delivered_mstamp_ns;
            expected = 0;
        }
        self.ack_epoch_acked = (self.ack_epoch_acked + rs.acked_sacked).min(0xFFFFF);
        let extra = (self.ack_epoch_acked - expected).min(tp.snd_cwnd);
        if extra > self.extra_acked[self.extra_acked_win_idx] {
            self.extra_acked[self.extra_acked_win_idx] = extra;
        }
    }

    /// `bbr_check_full_bw_reached`.
    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || rs.is_app_limited {
            return;
        }
        let thresh = (self.full_bw as u128 * FULL_BW_THRESH as u128) >> BBR_SCALE;
        if self.max_bw() as u128 >= thresh {
            self.full_bw = self.max_bw();
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= FULL_BW_CNT;
    }

    /// `bbr_check_drain`.
    fn check_drain(&mut self, tp: &mut TcpCc) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            tp.snd_ssthresh = self.inflight(tp, self.max_bw(), BBR_UNIT);
        }
        if self.mode == Mode::Drain
            && self.packets_in_net_at_edt(tp, tp.packets_in_flight()) <= self.inflight(tp, self.max_bw(), BBR_UNIT)
        {
            self.reset_probe_bw_mode(tp); // queue drained
        }
    }

    /// `bbr_check_probe_rtt_done`.
    fn check_probe_rtt_done(&mut self, tp: &mut TcpCc) {
        match self.probe_rtt_done_stamp {
            Some(done) if tp.now_ns > done => {}
            _ => return,
        }
        self.min_rtt_stamp_ns = tp.now_ns; // wait a while until the next PROBE_RTT
        tp.snd_cwnd = tp.snd_cwnd.max(self.prior_cwnd);
        self.reset_mode(tp);
    }

    /// `bbr_update_min_rtt`: 10 s min filter and PROBE_RTT.
    fn update_min_rtt(&mut self, tp: &mut TcpCc, rs: &RateSample) {
        let now = tp.now_ns;
        let filter_expired = now > self.min_rtt_stamp_ns.saturating_add(MIN_RTT_WIN_NS);
        if rs.rtt_ns >= 0 && ((rs.rtt_ns as u64) <= self.min_rtt_ns || (filter_expired && !rs.is_ack_delayed)) {
            self.min_rtt_ns = rs.rtt_ns as u64;
            self.min_rtt_stamp_ns = now;
        }
        if filter_expired && !self.idle_restart && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt; // dip, drain queue
            self.save_cwnd(tp);
            self.probe_rtt_done_stamp = None;
        }
        if self.mode == Mode::ProbeRtt {
            // Ignore low-rate samples during this mode.
            let v = tp.delivered + tp.packets_in_flight() as u64;
            tp.app_limited = if v == 0 { 1 } else { v };
            // Hold the minimum inflight for max(200 ms, 1 round).
            if self.probe_rtt_done_stamp.is_none() && tp.packets_in_flight() <= CWND_MIN_TARGET {
                self.probe_rtt_done_stamp = Some(now + PROBE_RTT_MODE_NS);
                self.probe_rtt_round_done = false;
                self.next_rtt_delivered = tp.delivered;
            } else if self.probe_rtt_done_stamp.is_some() {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(tp);
                }
            }
        }
        // Idle restart ends once a new S/ACK for data is processed.
        if rs.delivered > 0 {
            self.idle_restart = false;
        }
    }

    /// `bbr_update_gains`.
    fn update_gains(&mut self) {
        let (p, c) = match self.mode {
            Mode::Startup => (HIGH_GAIN, HIGH_GAIN),
            Mode::Drain => (DRAIN_GAIN, HIGH_GAIN), // slow pacing, keep cwnd
            Mode::ProbeBw => (if self.lt_use_bw { BBR_UNIT } else { PACING_GAIN[self.cycle_idx] }, CWND_GAIN),
            Mode::ProbeRtt => (BBR_UNIT, BBR_UNIT),
        };
        self.pacing_gain = p;
        self.cwnd_gain = c;
    }

    /// `bbr_update_model`.
    fn update_model(&mut self, tp: &mut TcpCc, rs: &RateSample) {
        self.update_bw(tp, rs);
        self.update_ack_aggregation(tp, rs);
        self.update_cycle_phase(tp, rs);
        self.check_full_bw_reached(rs);
        self.check_drain(tp);
        self.update_min_rtt(tp, rs);
        self.update_gains();
    }
}

impl CongestionOps for Bbr1 {
    fn has_cong_control(&self) -> bool {
        true
    }

    /// `bbr_init`.
    fn init(&mut self, tp: &mut TcpCc) {
        self.prior_cwnd = 0;
        tp.snd_ssthresh = TCP_INFINITE_SSTHRESH;
        self.rtt_cnt = 0;
        self.next_rtt_delivered = tp.delivered;
        self.prev_ca_state = CaState::Open;
        self.packet_conservation = false;
        self.probe_rtt_done_stamp = None;
        self.probe_rtt_round_done = false;
        self.min_rtt_ns = tp.min_rtt_ns;
        self.min_rtt_stamp_ns = tp.now_ns;
        self.bw.reset(self.rtt_cnt, 0);
        self.has_seen_rtt = false;
        self.init_pacing_rate_from_rtt(tp);
        self.round_start = false;
        self.idle_restart = false;
        self.full_bw_reached = false;
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.cycle_mstamp_ns = 0;
        self.cycle_idx = 0;
        self.reset_lt_bw_sampling(tp);
        self.mode = Mode::Startup;
        self.pacing_gain = HIGH_GAIN;
        self.cwnd_gain = HIGH_GAIN;
        self.ack_epoch_mstamp_ns = tp.now_ns;
        self.ack_epoch_acked = 0;
        self.extra_acked_win_rtts = 0;
        self.extra_acked_win_idx = 0;
        self.extra_acked = [0; 2];
        tp.pacing_enabled = true; // SK_PACING_NEEDED
    }

    /// `bbr_ssthresh`: entering recovery/loss; save cwnd, keep ssthresh.
    fn ssthresh(&mut self, tp: &TcpCc) -> u32 {
        self.save_cwnd(tp);
        tp.snd_ssthresh
    }

    /// `bbr_main`.
    fn cong_control(&mut self, tp: &mut TcpCc, rs: &RateSample) {
        self.update_model(tp, rs);
        let bw = self.bw();
        self.set_pacing_rate(tp, bw, self.pacing_gain);
        self.set_cwnd(tp, rs, rs.acked_sacked, bw, self.cwnd_gain);
    }

    /// `bbr_set_state` (+ the `tcp_enter_loss` cwnd cut, see the header).
    fn set_state(&mut self, tp: &mut TcpCc, new_state: CaState) {
        if new_state != CaState::Loss {
            return;
        }
        // tcp_enter_loss's cut (the caller has already called ssthresh(), which saved cwnd, and
        // marked the outstanding data lost); a no-op if the transport already cut.
        let loss_cwnd = tp.packets_in_flight() + 1;
        if tp.snd_cwnd > loss_cwnd {
            tp.set_cwnd(loss_cwnd);
        }
        self.prev_ca_state = CaState::Loss;
        self.full_bw = 0;
        self.round_start = true; // treat the RTO like the end of a round
        let rs = RateSample { losses: 1, ..Default::default() };
        self.lt_bw_sampling(tp, &rs);
    }

    /// `bbr_undo_cwnd`: spurious slow-down; reset full-pipe and policer detection.
    fn undo_cwnd(&mut self, tp: &mut TcpCc) -> u32 {
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.reset_lt_bw_sampling(tp);
        tp.snd_cwnd
    }

    /// `bbr_cwnd_event`: restart from idle.
    fn cwnd_event(&mut self, tp: &mut TcpCc, ev: CwndEvent) {
        if ev == CwndEvent::TxStart && tp.app_limited != 0 {
            self.idle_restart = true;
            self.ack_epoch_mstamp_ns = tp.now_ns;
            self.ack_epoch_acked = 0;
            // Pace at the estimated bw when restarting app-limited: no need for more speed.
            if self.mode == Mode::ProbeBw {
                let bw = self.bw();
                self.set_pacing_rate(tp, bw, BBR_UNIT);
            } else if self.mode == Mode::ProbeRtt {
                self.check_probe_rtt_done(tp);
            }
        }
    }

    fn tso_segs(&self, tp: &TcpCc) -> Option<u32> {
        Some(Self::tso_segs_goal(tp))
    }

    /// Phase codes: 0 startup, 1 drain, 2 probe_bw, 3 probe_rtt.
    fn sample(&self, tp: &TcpCc) -> CcStateSample {
        let phase = match self.mode {
            Mode::Startup => "startup",
            Mode::Drain => "drain",
            Mode::ProbeBw => "probe_bw",
            Mode::ProbeRtt => "probe_rtt",
        };
        // bbr_get_info: bw × mss × 1e6 >> 24 bytes/s.
        let bytes_per_s = (self.bw() as u128 * tp.mss as u128 * 1_000_000) >> BW_SCALE;
        CcStateSample {
            phase,
            phase_code: self.mode as u8,
            bw_bps: bytes_per_s as f64 * 8.0,
            min_rtt_ns: self.min_rtt_ns,
            pacing_gain: self.pacing_gain as f64 / BBR_UNIT as f64,
            cwnd_gain: self.cwnd_gain as f64 / BBR_UNIT as f64,
            ..Default::default()
        }
    }
}


#[cfg(test)]
mod tests {
    use super::*;
    use crate::rate::{self, PacketRateState};
    use std::collections::VecDeque;

    const MS: u64 = NSEC_PER_MSEC;
    const MSS: u32 = 1500;

    /// A token-bucket policer in front of the bottleneck.
    struct Policer {
        ns_per_token: u64,
        depth: u64,
        tokens_ns: u64, // tokens scaled by ns_per_token
        last_ns: u64,
    }

    impl Policer {
        fn admit(&mut self, now: u64) -> bool {
            let cap = self.depth * self.ns_per_token;
            self.tokens_ns = (self.tokens_ns + (now - self.last_ns)).min(cap);
            self.last_ns = now;
            if self.tokens_ns >= self.ns_per_token {
                self.tokens_ns -= self.ns_per_token;
                true
            } else {
                false
            }
        }
    }

    struct Pkt {
        seq: u64,
        sent_ns: u64,
        st: PacketRateState,
        /// When its ACK reaches the sender; None = dropped.
        ack_at: Option<u64>,
    }

    /// What the simulator just did.
    #[derive(Clone, Copy, Debug, PartialEq)]
    enum Ev {
        Ack { rtt_ns: u64, losses: u32 },
        Send,
    }

    /// A bulk sender over a single FIFO bottleneck: fixed service time per packet, a buffer limit,
    /// an optional policer, and a fixed propagation delay lumped after the bottleneck. Each packet
    /// is acked individually when it has crossed the bottleneck plus the propagation delay. Lost
    /// packets are detected when a later packet is acked (like RACK/SACK) and are not retransmitted
    /// (the sender moves on to new data; only the congestion-control view matters here). The CA
    /// state goes Open → Recovery on detected loss and back when everything sent before the
    /// recovery started is acked, with the hooks called in Linux's order.
    struct Sim {
        tp: TcpCc,
        bbr: Bbr1,
        now: u64,
        ns_per_pkt: u64,
        prop_ns: u64,
        buf_pkts: usize,
        policer: Option<Policer>,
        pkts: VecDeque<Pkt>,
        departs: VecDeque<u64>,
        link_free: u64,
        next_seq: u64,
        next_send: u64,
        recovery_high: u64,
        min_rtt_seen: u64,
        last_min_rtt_refresh: u64,
    }

    impl Sim {
        fn new(rate_pps: u64, prop_ms: u64, seed: u64) -> Sim {
            let mut tp = TcpCc::new(MSS, 10);
            let mut bbr = Bbr1::new(seed);
            bbr.init(&mut tp);
            Sim {
                tp,
                bbr,
                now: 0,
                ns_per_pkt: NSEC_PER_SEC / rate_pps,
                prop_ns: prop_ms * MS,
                buf_pkts: usize::MAX,
                policer: None,
                pkts: VecDeque::new(),
                departs: VecDeque::new(),
                link_free: 0,
                next_seq: 0,
                next_send: 0,
                recovery_high: 0,
                min_rtt_seen: u64::MAX,
                last_min_rtt_refresh: 0,
            }
        }

        fn rate_pps(&self) -> f64 {
            NSEC_PER_SEC as f64 / self.ns_per_pkt as f64
        }

        /// Physical BDP in packets: bottleneck rate × (propagation + one service time).
        fn bdp_phys(&self) -> f64 {
            self.rate_pps() * (self.prop_ns + self.ns_per_pkt) as f64 / 1e9
        }

        fn step(&mut self) -> Ev {
            let next_ack = self.pkts.iter().find_map(|p| p.ack_at);
            let can_send = self.tp.packets_in_flight() < self.tp.snd_cwnd;
            let t_send = if can_send { self.next_send.max(self.now) } else { u64::MAX };
            match next_ack {
                Some(t_ack) if t_ack <= t_send => {
                    self.now = t_ack;
                    self.on_ack()
                }
                _ => {
                    assert!(t_send != u64::MAX, "deadlock: nothing to send or ack");
                    self.now = t_send;
                    self.send();
                    Ev::Send
                }
            }
        }

        fn send(&mut self) {
            let now = self.now;
            self.tp.now_ns = now;
            let first = self.tp.packets_in_flight() == 0;
            self.tp.packets_out += 1;
            let seq = self.next_seq;
            self.next_seq += 1;
            let st = rate::on_packet_sent(&mut self.tp, now, seq, false, first);
            let mut admitted = self.policer.as_mut().is_none_or(|p| p.admit(now));
            while self.departs.front().is_some_and(|&d| d <= now) {
                self.departs.pop_front();
            }
            if self.departs.len() >= self.buf_pkts {
                admitted = false;
            }
            let ack_at = admitted.then(|| {
                let depart = self.link_free.max(now) + self.ns_per_pkt;
                self.link_free = depart;
                self.departs.push_back(depart);
                depart + self.prop_ns
            });
            self.pkts.push_back(Pkt { seq, sent_ns: now, st, ack_at });
            self.tp.lsndtime_ns = now;
            self.tp.data_segs_out += 1;
            let rate = self.tp.pacing_rate_bytes_per_s.max(1);
            let len_ns = (MSS as u128 * NSEC_PER_SEC as u128 / rate as u128) as u64;
            self.next_send = self.next_send.max(now) + len_ns;
            self.tp.wstamp_ns = self.next_send;
            self.tp.is_cwnd_limited = self.tp.packets_in_flight() >= self.tp.snd_cwnd;
        }

        fn on_ack(&mut self) -> Ev {
            let now = self.now;
            self.tp.now_ns = now;
            let prior_in_flight = self.tp.packets_in_flight();
            // Packets before the acked one that were dropped are now detected lost.
            let mut losses = 0u32;
            while self.pkts.front().is_some_and(|p| p.ack_at.is_none()) {
                self.pkts.pop_front();
                losses += 1;
                self.tp.packets_out -= 1;
                self.tp.lost += 1;
            }
            let mut p = self.pkts.pop_front().expect("acked packet");
            self.tp.packets_out -= 1;
            self.tp.delivered += 1;
            // RTT first (tcp_ack_update_rtt precedes tcp_rate_gen).
            let rtt = now - p.sent_ns;
            self.tp.srtt_ns = if self.tp.srtt_ns == 0 { rtt } else { (7 * self.tp.srtt_ns + rtt) / 8 };
            self.tp.min_rtt_ns = self.tp.min_rtt_ns.min(rtt);
            if rtt <= self.min_rtt_seen {
                self.min_rtt_seen = rtt;
                self.last_min_rtt_refresh = now;
            }
            let mut rs = RateSample::default();
            rate::on_packet_delivered(&mut self.tp, &mut p.st, &mut rs);
            // Loss recovery state machine (tcp_fastretrans_alert) before tcp_cong_control.
            if losses > 0 && self.tp.ca_state < CaState::Recovery {
                self.bbr.ssthresh(&self.tp);
                self.tp.prior_cwnd = self.tp.snd_cwnd;
                self.bbr.set_state(&mut self.tp, CaState::Recovery);
                self.tp.ca_state = CaState::Recovery;
                self.recovery_high = self.next_seq;
            } else if self.tp.ca_state == CaState::Recovery && p.seq >= self.recovery_high {
                self.bbr.set_state(&mut self.tp, CaState::Open);
                self.tp.ca_state = CaState::Open;
            }
            rate::generate(&mut self.tp, now, 1, losses, &mut rs);
            rs.rtt_ns = rtt as i64;
            rs.prior_in_flight = prior_in_flight;
            self.bbr.cong_control(&mut self.tp, &rs);
            Ev::Ack { rtt_ns: rtt, losses }
        }

        fn run_until(&mut self, mut stop: impl FnMut(&Sim, Ev) -> bool, limit_ns: u64) {
            while self.now < limit_ns {
                let ev = self.step();
                if stop(self, ev) {
                    return;
                }
            }
            panic!("condition not reached by {} ms", limit_ns / MS);
        }

        fn max_bw_pps(&self) -> f64 {
            self.bbr.max_bw() as f64 / BW_UNIT as f64 * 1e6
        }

        fn gain(&self) -> f64 {
            self.bbr.pacing_gain as f64 / 256.0
        }
    }

    /// Link: 2000 packets/s (24 Mbit/s at 1500 B), 40 ms propagation: BDP ≈ 80 packets.
    fn link(seed: u64) -> Sim {
        Sim::new(2000, 40, seed)
    }

    #[test]
    fn startup_exits_after_three_rounds_without_growth_with_bw_at_link_rate() {
        let mut sim = link(1);
        let mut rounds: Vec<(u64, u64)> = Vec::new(); // (round, max_bw) at each round start
        let mut exit_round = None;
        sim.run_until(
            |s, ev| {
                if let Ev::Ack { .. } = ev {
                    if s.bbr.round_start {
                        rounds.push((s.bbr.rtt_cnt, s.bbr.max_bw()));
                    }
                    if s.bbr.mode != Mode::Startup {
                        exit_round = Some(s.bbr.rtt_cnt);
                        return true;
                    }
                }
                false
            },
            10 * NSEC_PER_SEC,
        );
        let exit_round = exit_round.unwrap();
        // Replay the full-pipe rule of the spec over the observed per-round estimates.
        let (mut full_bw, mut cnt, mut expected_exit, mut last_growth) = (0u64, 0, None, 0);
        for &(r, bw) in &rounds {
            if bw as f64 >= full_bw as f64 * 1.25 {
                full_bw = bw;
                cnt = 0;
                last_growth = r;
            } else {
                cnt += 1;
                if cnt == 3 {
                    expected_exit = Some(r);
                    break;
                }
            }
        }
        assert_eq!(Some(exit_round), expected_exit, "rounds: {rounds:?}");
        assert_eq!(exit_round - last_growth, 3, "exit 3 rounds after the last ≥25 % growth");
        // Physics: the estimate is the bottleneck rate.
        let est = sim.max_bw_pps();
        assert!((est - 2000.0).abs() / 2000.0 < 0.02, "max_bw {est} pkt/s vs link 2000");
        assert_eq!(sim.bbr.mode, Mode::Drain);
        assert!((sim.gain() - 1.0 / 2.885).abs() < 0.005, "drain gain {}", sim.gain());
        // STARTUP used the high gain for cwnd and pacing.
        assert_eq!(sim.bbr.cwnd_gain, HIGH_GAIN);
    }

    #[test]
    fn startup_never_lowers_the_pacing_rate() {
        let mut sim = link(11);
        let mut last = 0u64;
        let mut acks = 0;
        sim.run_until(
            |s, ev| {
                if matches!(ev, Ev::Ack { .. }) {
                    acks += 1;
                    // The first ACK brings the first RTT sample, which re-initialises the rate from
                    // srtt (bbr_init_pacing_rate_from_rtt); after that it may only grow.
                    if acks == 1 {
                        // Not below high_gain × IW / srtt (× 0.99) set from the first RTT sample.
                        let init = 2.885 * 0.99 * 10.0 * MSS as f64 / (s.tp.srtt_ns as f64 / 1e9);
                        let got = s.tp.pacing_rate_bytes_per_s as f64;
                        assert!(got >= init * 0.995, "first-ACK pacing {got} below {init}");
                    }
                    if acks > 1 && !s.bbr.full_bw_reached {
                        assert!(s.tp.pacing_rate_bytes_per_s >= last, "pacing lowered in STARTUP at ACK {acks}");
                    }
                    last = s.tp.pacing_rate_bytes_per_s;
                }
                s.bbr.full_bw_reached
            },
            10 * NSEC_PER_SEC,
        );
        assert!(acks > 100);
    }

    #[test]
    fn app_limited_samples_never_lower_max_bw_but_expired_ones_do() {
        let mut tp = TcpCc::new(MSS, 10);
        let mut b = Bbr1::new(0);
        b.init(&mut tp);
        let feed = |b: &mut Bbr1, tp: &mut TcpCc, delivered: i64, app_limited: bool| {
            // One round per sample: the sample's packet was sent after the last round began.
            tp.now_ns += 40 * MS;
            tp.delivered += delivered as u64;
            tp.delivered_mstamp_ns = tp.now_ns;
            let mut rs = sample(b.next_rtt_delivered, 1, 0, 10);
            rs.delivered = delivered;
            rs.interval_ns = 40 * MS as i64;
            rs.is_app_limited = app_limited;
            b.update_bw(tp, &rs);
            assert!(b.round_start);
        };
        feed(&mut b, &mut tp, 80, false); // 80 packets per 40 ms = 2000 pkt/s
        let full = b.max_bw();
        let r0 = b.rtt_cnt;
        // Non-app-limited samples at a quarter of the rate: the peak holds for the 10-round
        // window (bbr_bw_rtts) and is gone in round r0 + 11.
        while b.rtt_cnt < r0 + 10 {
            feed(&mut b, &mut tp, 20, false);
            assert_eq!(b.max_bw(), full, "peak expired early at round {}", b.rtt_cnt - r0);
        }
        feed(&mut b, &mut tp, 20, false);
        let pps = b.max_bw() as f64 / BW_UNIT as f64 * 1e6;
        assert!((pps - 500.0).abs() < 5.0, "max_bw {pps} pkt/s after the window");
        feed(&mut b, &mut tp, 80, false);
        let full = b.max_bw();
        for _ in 0..30 {
            feed(&mut b, &mut tp, 20, true); // app-limited at a quarter of the rate
        }
        assert_eq!(b.max_bw(), full, "app-limited samples lowered max_bw");
    }

    #[test]
    fn long_term_intervals_must_agree_within_an_eighth_and_are_averaged() {
        let pps = |p: f64| (p / 1e6 * BW_UNIT as f64) as u64;
        let tp = TcpCc::new(MSS, 10);
        let mut b = Bbr1::new(0);
        b.lt_bw_interval_done(&tp, pps(800.0));
        assert!(!b.lt_use_bw, "one interval is not enough");
        b.lt_bw_interval_done(&tp, pps(1000.0)); // 25 % apart, 2.4 Mbit/s apart: inconsistent
        assert!(!b.lt_use_bw);
        b.lt_bw_interval_done(&tp, pps(1080.0)); // 8 % from 1000: consistent
        assert!(b.lt_use_bw);
        assert_eq!(b.pacing_gain, BBR_UNIT);
        let got = b.lt_bw as f64 / BW_UNIT as f64 * 1e6;
        assert!((got - 1040.0).abs() < 1.0, "lt_bw {got} is not the mean of 1000 and 1080");
    }

    #[test]
    fn drain_ends_when_inflight_falls_to_bdp() {
        let mut sim = link(2);
        sim.run_until(|s, _| s.bbr.mode == Mode::Drain, 10 * NSEC_PER_SEC);
        let bdp = sim.bdp_phys();
        // Drain target: BDP plus the quantization budget (3 bursts of 2 segments, even).
        let target = (bdp.ceil() as u32 + 3 * Bbr1::tso_segs_goal(&sim.tp) + 1) & !1;
        let mut saw_drain_ack = false;
        sim.run_until(
            |s, ev| {
                if let Ev::Ack { .. } = ev {
                    let inflight = s.tp.packets_in_flight();
                    if s.bbr.mode == Mode::Drain {
                        saw_drain_ack = true;
                        assert!(inflight > target - 2, "still draining at inflight {inflight} ≤ target {target}");
                    } else {
                        assert_eq!(s.bbr.mode, Mode::ProbeBw);
                        assert!(inflight <= target + 1, "left drain at inflight {inflight} > {target}");
                        return true;
                    }
                }
                false
            },
            10 * NSEC_PER_SEC,
        );
        assert!(saw_drain_ack);
    }

    #[test]
    fn probe_bw_never_starts_in_the_drain_phase() {
        let tp = TcpCc::new(MSS, 10);
        let mut seen = [0u32; CYCLE_LEN];
        for seed in 0..2000u64 {
            let mut b = Bbr1::new(seed);
            b.reset_probe_bw_mode(&tp);
            seen[b.cycle_idx] += 1;
            // And repeated re-entries from one generator.
            b.reset_probe_bw_mode(&tp);
            seen[b.cycle_idx] += 1;
        }
        assert_eq!(seen[1], 0, "started in the 3/4 phase");
        for (i, &n) in seen.iter().enumerate() {
            if i != 1 {
                // 4000 draws over 7 phases: ≈ 571 each.
                assert!((450..700).contains(&n), "phase {i} drawn {n} times: {seen:?}");
            }
        }
    }

    /// Run the link sim into steady PROBE_BW and record (time, cycle_idx, gain) at each phase change.
    fn probe_bw_trace(seed: u64, secs: u64) -> (Sim, Vec<(u64, usize, f64)>) {
        let mut sim = link(seed);
        sim.run_until(|s, _| s.bbr.mode == Mode::ProbeBw, 10 * NSEC_PER_SEC);
        let mut phases = vec![(sim.now, sim.bbr.cycle_idx, sim.gain())];
        let end = sim.now + secs * NSEC_PER_SEC;
        // Inflight target of the 3/4 phase: one BDP plus the quantization budget (even).
        let target = (sim.bdp_phys().ceil() as u32 + 3 * Bbr1::tso_segs_goal(&sim.tp) + 1) & !1;
        sim.run_until(
            |s, ev| {
                assert_eq!(s.bbr.mode, Mode::ProbeBw);
                if matches!(ev, Ev::Ack { .. }) && s.bbr.cycle_idx == 1 && phases.last().unwrap().1 == 0 {
                    // Just left the 5/4 phase (no losses here): inflight had reached 5/4 BDP plus
                    // the budget (+2 while probing), counting the burst due at the next departure.
                    let prior = s.tp.packets_in_flight() + 1 + Bbr1::tso_segs_goal(&s.tp);
                    let target125 = (((1.25 * s.bdp_phys()).ceil() as u32 + 3 * Bbr1::tso_segs_goal(&s.tp) + 1) & !1) + 2;
                    assert!(prior + 1 >= target125, "left the probe at inflight {prior} < {target125}");
                }
                if matches!(ev, Ev::Ack { .. }) && s.bbr.cycle_idx == 1 && s.bbr.cycle_idx == phases.last().unwrap().1 {
                    // Still in the 3/4 phase after this ACK: inflight before it was above target.
                    let prior = s.tp.packets_in_flight() + 1;
                    assert!(prior + 1 > target, "3/4 phase persisted at inflight {prior} ≤ BDP target {target}");
                }
                if s.bbr.cycle_idx != phases.last().unwrap().1 {
                    phases.push((s.now, s.bbr.cycle_idx, s.gain()));
                }
                s.now >= end
            },
            end + NSEC_PER_SEC,
        );
        (sim, phases)
    }

    #[test]
    fn probe_bw_cycles_through_the_eight_gains_in_order() {
        for seed in [3u64, 4, 5] {
            let (sim, phases) = probe_bw_trace(seed, 3);
            assert_ne!(phases[0].1, 1, "started in the 3/4 phase");
            let min_rtt = sim.bbr.min_rtt_ns;
            let gains = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
            for w in phases.windows(2) {
                let ((t0, i0, g0), (t1, i1, _)) = (w[0], w[1]);
                assert_eq!(i1, (i0 + 1) % 8, "phase order");
                assert!((g0 - gains[i0]).abs() < 1e-9, "phase {i0} gain {g0}");
                let d = t1 - t0;
                match i0 {
                    // Probe: at least min_rtt (and until inflight reaches 5/4 BDP).
                    0 => assert!(d >= min_rtt, "probe phase {d} ns < min_rtt"),
                    // Drain: at most about min_rtt.
                    1 => assert!(d <= min_rtt + 2 * MS, "drain phase {d} ns"),
                    // Cruise: one min_rtt (to within an ACK spacing or two).
                    _ => assert!(d >= min_rtt && d <= min_rtt + 2 * MS, "cruise phase {d} ns vs {min_rtt}"),
                }
            }
            assert!(phases.len() > 40, "only {} phase changes in 3 s", phases.len());
            assert!(!sim.bbr.lt_use_bw, "no policer here");
        }
    }

    #[test]
    fn steady_state_cwnd_is_two_bdp_plus_quantization_and_pacing_follows_gain() {
        let mut sim = link(6);
        sim.run_until(|s, _| s.bbr.mode == Mode::ProbeBw, 10 * NSEC_PER_SEC);
        let warm = sim.now + NSEC_PER_SEC;
        sim.run_until(|s, _| s.now >= warm, warm + NSEC_PER_SEC);
        let bdp = sim.bdp_phys();
        let link_bytes = sim.rate_pps() * MSS as f64;
        let quanta = 3 * Bbr1::tso_segs_goal(&sim.tp);
        let end = sim.now + 2 * NSEC_PER_SEC;
        let mut checked = [0u32; 3];
        let (mut max_cwnd_probe, mut max_cwnd_cruise) = (0, 0);
        sim.run_until(
            |s, ev| {
                if !matches!(ev, Ev::Ack { .. }) {
                    return false;
                }
                let g = s.gain();
                // Pacing = gain × bw × 0.99, bw = the link rate.
                let want = link_bytes * 0.99 * g;
                let got = s.tp.pacing_rate_bytes_per_s as f64;
                assert!((got - want).abs() / want < 0.004, "pacing {got} vs {want} at gain {g}");
                checked[if g > 1.0 { 0 } else if g < 1.0 { 1 } else { 2 }] += 1;
                if g > 1.0 {
                    max_cwnd_probe = max_cwnd_probe.max(s.tp.snd_cwnd);
                } else if g == 1.0 {
                    max_cwnd_cruise = max_cwnd_cruise.max(s.tp.snd_cwnd);
                }
                if g == 1.0 {
                    // cwnd = 2·BDP + ACK-aggregation allowance + 3 bursts, rounded up to even.
                    let cwnd = s.tp.snd_cwnd as f64;
                    let lo = 2.0 * bdp + quanta as f64;
                    let hi = 2.0 * bdp * 1.02 + quanta as f64 + 2.0 + s.bbr.extra_acked() as f64;
                    assert!(cwnd >= lo - 1.0 && cwnd <= hi + 1.0, "cwnd {cwnd} not in [{lo}, {hi}]");
                    assert!(s.bbr.extra_acked() <= 4, "smooth ACKs: extra_acked {}", s.bbr.extra_acked());
                }
                s.now >= end
            },
            end + NSEC_PER_SEC,
        );
        assert!(checked.iter().all(|&n| n > 0), "all gains seen: {checked:?}");
        // The 5/4 phase gets 2 more packets of cwnd so inflight can exceed the BDP.
        assert_eq!(max_cwnd_probe, max_cwnd_cruise + 2, "probe cwnd {max_cwnd_probe} vs cruise {max_cwnd_cruise}");
        // And the exported sample agrees.
        let smp = sim.bbr.sample(&sim.tp);
        assert_eq!(smp.phase, "probe_bw");
        assert_eq!(smp.phase_code, 2);
        assert!((smp.bw_bps - link_bytes * 8.0).abs() / (link_bytes * 8.0) < 0.02);
        assert_eq!(smp.cwnd_gain, 2.0);
    }

    #[test]
    fn probe_rtt_after_ten_seconds_holds_four_packets_then_restores() {
        let mut sim = link(7);
        sim.run_until(|s, _| s.bbr.mode == Mode::ProbeBw, 10 * NSEC_PER_SEC);
        let mut cwnd_before = 0;
        let mut last_refresh = 0;
        sim.run_until(
            |s, _| {
                if s.bbr.mode == Mode::ProbeRtt {
                    return true;
                }
                cwnd_before = s.tp.snd_cwnd;
                last_refresh = s.last_min_rtt_refresh;
                false
            },
            30 * NSEC_PER_SEC,
        );
        // Entered on the first ACK more than 10 s after the last sample at the minimum RTT.
        let since = sim.now - last_refresh;
        assert!(since > 10 * NSEC_PER_SEC && since < 10 * NSEC_PER_SEC + 5 * MS, "entered {since} ns after refresh");
        let entered = sim.now;
        // Hold: cwnd ≤ 4; find when inflight first reaches 4, then require ≥ 200 ms and ≥ 1 round.
        let mut reached: Option<(u64, u64, u32)> = None; // (time, delivered, inflight)
        sim.run_until(
            |s, ev| {
                if s.bbr.mode != Mode::ProbeRtt {
                    return true;
                }
                assert!(s.tp.snd_cwnd <= 4, "cwnd {} in PROBE_RTT", s.tp.snd_cwnd);
                if reached.is_none() && matches!(ev, Ev::Ack { .. }) && s.tp.packets_in_flight() <= 4 {
                    reached = Some((s.now, s.tp.delivered, s.tp.packets_in_flight()));
                }
                false
            },
            entered + 2 * NSEC_PER_SEC,
        );
        let (t4, d4, f4) = reached.expect("inflight reached 4");
        assert!(sim.now - t4 >= 200 * MS, "held only {} ms", (sim.now - t4) / MS);
        assert!(sim.tp.delivered - d4 >= f4 as u64, "less than one round at 4 packets");
        assert!(sim.now - t4 < 200 * MS + 2 * sim.bbr.min_rtt_ns, "held too long");
        // Exit: back to PROBE_BW with the cwnd from before PROBE_RTT.
        assert_eq!(sim.bbr.mode, Mode::ProbeBw);
        assert!(sim.tp.snd_cwnd >= cwnd_before, "cwnd {} not restored to {cwnd_before}", sim.tp.snd_cwnd);
        // The min RTT was re-measured at the propagation delay.
        assert_eq!(sim.bbr.min_rtt_ns, sim.min_rtt_seen);
        assert!(sim.bbr.min_rtt_stamp_ns >= t4);
    }

    /// A valid rate sample for hand-driven ACKs.
    fn sample(prior_delivered: u64, acked: u32, losses: u32, prior_in_flight: u32) -> RateSample {
        RateSample {
            has_prior: true,
            prior_delivered,
            delivered: 40,
            interval_ns: 40 * MS as i64,
            rtt_ns: 45 * MS as i64,
            acked_sacked: acked,
            losses,
            prior_in_flight,
            ..Default::default()
        }
    }

    #[test]
    fn packet_conservation_in_first_round_of_recovery_then_restore() {
        let mut sim = link(8);
        sim.run_until(|s, _| s.bbr.mode == Mode::ProbeBw, 10 * NSEC_PER_SEC);
        let end = sim.now + NSEC_PER_SEC;
        sim.run_until(|s, _| s.now >= end, end + NSEC_PER_SEC);
        let (mut tp, mut bbr) = (sim.tp.clone(), sim.bbr.clone());
        let cwnd0 = tp.snd_cwnd;
        // Loss detected: 5 segments marked lost, the transport enters Recovery.
        bbr.ssthresh(&tp);
        bbr.set_state(&mut tp, CaState::Recovery);
        tp.ca_state = CaState::Recovery;
        tp.packets_out = 100;
        tp.lost_out = 5;
        tp.lost += 5;
        let d0 = tp.delivered;
        // First ACK of recovery: cwnd = inflight + acked (RFC 6937 / Linux packet conservation).
        tp.packets_out -= 1;
        tp.delivered += 1;
        let before = tp.packets_in_flight();
        bbr.cong_control(&mut tp, &sample(d0 - 60, 1, 5, before + 1));
        assert_eq!(tp.snd_cwnd, tp.packets_in_flight() + 1);
        assert!(tp.snd_cwnd < cwnd0);
        // Rest of the first round: each ACK releases exactly what it acked (inflight + acked),
        // minus nothing else; cwnd never exceeds inflight + acked.
        for i in 0..20 {
            tp.packets_out -= 1;
            tp.delivered += 1;
            let losses = if i == 5 { 2 } else { 0 };
            tp.lost_out += losses;
            let cw_before = tp.snd_cwnd;
            let rs = sample(d0 - 50 + i, 1, losses, tp.packets_in_flight() + 1);
            bbr.cong_control(&mut tp, &rs);
            let want = (cw_before - losses).max(tp.packets_in_flight() + 1);
            assert_eq!(tp.snd_cwnd, want, "ACK {i} in the conservation round");
            tp.packets_out += 1; // sender sends what cwnd allows: one for one
        }
        // A sample of a packet sent after recovery started ends the round: from now on cwnd
        // grows by up to the acked count per ACK (slow start toward the target).
        tp.packets_out -= 1;
        tp.delivered += 1;
        let cw = tp.snd_cwnd;
        let rs = sample(d0 + 1, 2, 0, tp.packets_in_flight() + 2);
        bbr.cong_control(&mut tp, &rs);
        assert!(!bbr.packet_conservation);
        assert_eq!(tp.snd_cwnd, cw + 2);
        // Recovery ends: the cwnd saved at entry comes back.
        tp.ca_state = CaState::Open;
        tp.lost_out = 0;
        bbr.set_state(&mut tp, CaState::Open);
        tp.delivered += 1;
        let rs = sample(d0 + 2, 1, 0, tp.packets_in_flight() + 1);
        bbr.cong_control(&mut tp, &rs);
        assert!(tp.snd_cwnd >= cwnd0, "cwnd {} not restored to {cwnd0}", tp.snd_cwnd);
    }

    #[test]
    fn rto_cuts_cwnd_to_inflight_plus_one_and_restores_after() {
        let mut sim = link(9);
        sim.run_until(|s, _| s.bbr.mode == Mode::ProbeBw, 10 * NSEC_PER_SEC);
        let (mut tp, mut bbr) = (sim.tp.clone(), sim.bbr.clone());
        let cwnd0 = tp.snd_cwnd;
        // RTO (tcp_enter_loss): ssthresh() saves cwnd, everything outstanding is marked lost.
        bbr.ssthresh(&tp);
        tp.lost_out = tp.packets_out;
        bbr.set_state(&mut tp, CaState::Loss);
        tp.ca_state = CaState::Loss;
        assert_eq!(tp.snd_cwnd, 1);
        assert_eq!(bbr.full_bw, 0);
        // Back to Open after the retransmissions are acked: saved cwnd restored.
        tp.ca_state = CaState::Open;
        tp.lost_out = 0;
        tp.packets_out = 1;
        tp.delivered += 1;
        let rs = sample(tp.delivered - 1, 1, 0, 2);
        bbr.cong_control(&mut tp, &rs);
        assert!(tp.snd_cwnd >= cwnd0.min(bbr.inflight(&tp, bbr.bw(), CWND_GAIN)), "cwnd {} vs {cwnd0}", tp.snd_cwnd);
    }

    #[test]
    fn policer_engages_long_term_bw_at_the_policed_rate_with_gain_one() {
        // Link 2000 pkt/s, policer 800 pkt/s with a 40-packet bucket.
        let mut sim = link(10);
        let policed = 800.0;
        sim.policer = Some(Policer { ns_per_token: NSEC_PER_SEC / 800, depth: 40, tokens_ns: 40 * NSEC_PER_SEC / 800, last_ns: 0 });
        let (mut lost_at_start, mut delivered_at_start) = (0, 0);
        sim.run_until(
            |s, _| {
                if !s.bbr.lt_is_sampling {
                    lost_at_start = s.tp.lost;
                    delivered_at_start = s.tp.delivered;
                }
                s.bbr.lt_use_bw
            },
            20 * NSEC_PER_SEC,
        );
        // The loss pattern that engaged it: ≥ 20 % loss at a consistent delivery rate.
        let lost = sim.tp.lost - lost_at_start;
        let delivered = sim.tp.delivered - delivered_at_start;
        assert!(lost as f64 >= 0.19 * delivered as f64, "lost {lost} of {delivered}");
        let lt_pps = sim.bbr.lt_bw as f64 / BW_UNIT as f64 * 1e6;
        assert!((lt_pps - policed).abs() / policed < 0.05, "lt_bw {lt_pps} pkt/s vs policer {policed}");
        // While lt_bw is in use: PROBE_BW at gain 1 (no 5/4 probing), pacing at 0.99·lt_bw.
        sim.run_until(|s, _| s.bbr.mode == Mode::ProbeBw, sim.now + 10 * NSEC_PER_SEC);
        let end = sim.now + NSEC_PER_SEC;
        let mut checked = 0;
        sim.run_until(
            |s, ev| {
                if matches!(ev, Ev::Ack { .. }) && s.bbr.mode == Mode::ProbeBw && s.bbr.lt_use_bw {
                    checked += 1;
                    assert_eq!(s.bbr.pacing_gain, BBR_UNIT);
                    let want = s.bbr.lt_bw as f64 / BW_UNIT as f64 * 1e6 * MSS as f64 * 0.99;
                    let got = s.tp.pacing_rate_bytes_per_s as f64;
                    assert!((got - want).abs() / want < 0.01, "pacing {got} vs {want}");
                }
                s.now >= end
            },
            end + NSEC_PER_SEC,
        );
        assert!(checked > 500, "only {checked} ACKs in PROBE_BW with lt_bw");
        assert!(sim.bbr.lt_use_bw);
        let smp = sim.bbr.sample(&sim.tp);
        assert_eq!(smp.pacing_gain, 1.0);
        assert!((smp.bw_bps - policed * MSS as f64 * 8.0).abs() / (policed * MSS as f64 * 8.0) < 0.05);
    }

    #[test]
    fn init_paces_at_high_gain_times_initial_window_over_rtt() {
        let mut tp = TcpCc::new(MSS, 10);
        let mut b = Bbr1::new(0);
        b.init(&mut tp);
        assert!(tp.pacing_enabled);
        // No RTT yet: 10 packets per 1 ms × 2.885 × 0.99.
        let want = 10.0 * MSS as f64 / 1e-3 * 2.885 * 0.99;
        let got = tp.pacing_rate_bytes_per_s as f64;
        assert!((got - want).abs() / want < 0.005, "{got} vs {want}");
        // With srtt = 20 ms.
        tp.srtt_ns = 20 * MS;
        b.init(&mut tp);
        let want = 10.0 * MSS as f64 / 20e-3 * 2.885 * 0.99;
        let got = tp.pacing_rate_bytes_per_s as f64;
        assert!((got - want).abs() / want < 0.005, "{got} vs {want}");
    }

    #[test]
    fn quantization_budget_adds_three_bursts_rounds_to_even_and_two_when_probing() {
        let mut tp = TcpCc::new(MSS, 10);
        tp.pacing_rate_bytes_per_s = 1_000_000; // burst goal 2 segments
        let mut b = Bbr1::new(0);
        b.init(&mut tp);
        tp.pacing_rate_bytes_per_s = 1_000_000;
        assert_eq!(b.quantization_budget(&tp, 101), 108); // 101 + 6 = 107 → even 108
        assert_eq!(b.quantization_budget(&tp, 100), 106);
        b.mode = Mode::ProbeBw;
        b.cycle_idx = 0;
        assert_eq!(b.quantization_budget(&tp, 101), 110); // + 2 in the 5/4 phase
        b.cycle_idx = 1;
        assert_eq!(b.quantization_budget(&tp, 101), 108);
    }

    #[test]
    fn tso_goal_is_a_millisecond_of_data_within_bounds() {
        let mut tp = TcpCc::new(MSS, 10);
        tp.pacing_rate_bytes_per_s = 100_000; // < 1.2 Mbit/s
        assert_eq!(Bbr1::tso_segs_goal(&tp), 1);
        tp.pacing_rate_bytes_per_s = 1_000_000; // 8 Mbit/s: 976 B per ms → minimum 2
        assert_eq!(Bbr1::tso_segs_goal(&tp), 2);
        tp.pacing_rate_bytes_per_s = 30_720_000; // 30000 B per 1/1024 s = 20 segments
        assert_eq!(Bbr1::tso_segs_goal(&tp), 20);
        tp.pacing_rate_bytes_per_s = 10_000_000_000; // capped by 64 KB
        assert_eq!(Bbr1::tso_segs_goal(&tp), (65_536 - 1 - 320) / MSS);
        tp.mss = 100;
        assert_eq!(Bbr1::tso_segs_goal(&tp), 127);
    }
}
