//! BQL ("Bottleneck Queue Level"): the delay-based congestion control of the RMDT protocol
//! (Future Internet Lab Anhalt; Mareev, Kachan, Karpov, Syzov, Siemens, "Efficiency of BQL
//! Congestion Control under High Bandwidth-Delay Product Network Conditions", the Anhalt BQL
//! paper).
//!
//! **This is bbrlab's reconstruction from the paper, not RMDT's code.** No public description of
//! the algorithm's equations exists (docs/sources.md, Anhalt BQL paper: RMDT's code is not public
//! either; searches of public documentation and code for "RMDT", "Mareev" and the paper's state
//! names found none). The paper gives the structure
//! and the targets only: "a modified PID controller to keep [the] link always slightly congested",
//! a Gain state "to quickly reach [the] bottleneck bandwidth limit" and a Control state "to keep
//! [the] bottleneck slightly congested", "paired modified PID controllers" that stay stable "up
//! to 1000 ms of RTT delay with nearly 200 KB" of bottleneck queue, "more accurate delay metrics",
//! losses not used as a congestion signal (1 % at 1 Gbit/s, 0.7 % at 10 Gbit/s tolerated), and
//! measured results (1 Gbit/s, 80 MB drop-tail: mean queue 158 KB at 100 ms and 387 KB at 1000 ms
//! RTT vs BBR's 705 KB / 3.6 MB; 994.6 / 972.9 Mbit/s; queue jitter < 200 KB in Control). Every
//! equation and constant below is ours, chosen to meet those claims with a controller whose
//! behaviour can be argued from first principles.
//!
//! # Model
//!
//! A rate-based sender: the pacing rate `x` is the actuator; cwnd is only a safety cap. Bytes and
//! bytes/s are f64 (there is no Linux reference to match bit for bit).
//!
//! ```text
//! min_rtt     minimum RTT sample over MIN_RTT_WIN = 10 s (value + stamp, as BBR), refreshed below
//! bw_max      windowed max of delivery-rate samples over BW_WIN_ROUNDS = 10 rounds (Gain only)
//! c           the flow's bottleneck (delivery) rate: EWMA (time constant T_f) of the ACK-side
//!             delivery rate  delivered·mss / rcv_interval.  While the bottleneck queue is
//!             non-empty — which Control keeps it — the ACKs leave at the bottleneck rate
//!             whatever the sender does, so c measures the capacity (for N flows: the flow's
//!             share). Hence c follows a sample downwards only if that sample's q_meas ≥ Q*/2
//!             (queue busy); upwards always (an achieved rate is a lower bound of the capacity).
//! q_meas      = max(0, rtt_sample − min_rtt) · c                 [bytes; "delay metric"]
//!             the flow's own bytes in the bottleneck queue when the sampled packet crossed it
//!             (FIFO: a flow's share of a queue of delay d is d × its rate)
//! q_pred      = q_meas + (Δin_flight + Δdelivered) · mss − c · rtt_sample          [Smith]
//! Q*          = clamp(c · min_rtt / 16, 30 KB, 150 KB)           [target queue, bytes]
//! ```
//!
//! ## The delay of the feedback: a Smith predictor from in-flight accounting
//! `q_meas` is one RTT old: it describes the queue when the sampled packet P crossed the
//! bottleneck. Everything sent since then is invisible to it, and a controller acting on it alone
//! is an integrator behind a dead time of one RTT — stable only with gain·RTT < π/2 and without
//! overshoot only with gain·RTT < 1/e, i.e. ever slower as RTT grows (the failure the paper says
//! earlier BQL versions had). The Smith predictor adds the queue the sender has already committed
//! but not yet seen: the bytes sent since P minus what the bottleneck drains over the time the
//! queue needs to receive them (P's round trip, r):
//!
//! ```text
//! q_pred = q_meas + sent_since_P · mss − c · r,     sent_since_P = Δin_flight + Δdelivered
//! ```
//!
//! (Δ = now minus when P was sent: `packets_in_flight() − rs.tx_in_flight` and `rs.delivered`;
//! every transmission ends delivered, marked lost or still in flight, and the packets marked lost
//! in the window ≈ those dropped before the queue in it, so lost packets need no term.) While the
//! queue is busy Δdelivered·mss = C·r and the correction is just Δin_flight — it needs no
//! precise C·RTT (a 0.1 % error in C·RTT at 1 Gbit/s × 1 s is 125 KB, the size of the target,
//! which is why `inflight − bw·min_rtt` is no substitute); when the queue has run empty it tells
//! the truth too (the pipe is filling, not the queue). With it the loop sees the queue one RTT
//! ahead and behaves like a delay-free first-order system whose speed is set by T_q, not by the
//! RTT: the unit tests show the same step response at 100 ms and 1 s.
//!
//! ## Paired controllers (Control state)
//! (1) the rate controller: `c` tracks the measured bottleneck delivery rate (its set point); it is
//!     the feed-forward part of the command and, because it follows the ACK rate, it also acts as
//!     the integrator that lets the rate climb when the queue is empty (then ACK rate = send rate).
//! (2) the queue-level controller, PI on the queue with the rate as the D-like part:
//! ```text
//! e_p   = Q* − q_pred_f          (predicted error, P term)     q_pred_f: EWMA of q_pred, T_f
//! e_m   = Q* − q_meas_f          (measured error, I term)      q_meas_f: EWMA of q_meas, T_f
//! I    += e_m · dt / T_i        only if |e_m| ≤ Q*, |q_pred_f − q_meas_f| ≤ Q*/4, not saturating
//! I     = clamp(I, −2·Q*, 2·Q*)
//! u     = clamp((e_p + I) / T_q, −DOWN_MAX·c, +UP_MAX·c)
//! x     = c + u                                                  → pacing rate
//! T_q   = max(srtt, 1 ms)        T_i = 4·T_q        T_f = clamp(srtt/8, 50 µs, 10 ms)
//! ```
//! With a perfect predictor dq_pred/dt = x − C = (Q* − q_pred)/T_q: the predicted queue relaxes to
//! Q* with time constant T_q = one RTT, i.e. within ~4 RTTs, without overshoot at any RTT. T_q =
//! srtt (not shorter) keeps the loop robust to what the predictor cannot see (random drops, ACK
//! noise): the residual error then acts on a loop that would be stable even unpredicted (gain·RTT
//! = 1 < π/2). The I term only removes the steady offset left by a biased c or predictor (it
//! integrates the *measured* queue, so what settles at Q* is the real queue), slowly (T_i = 4 T_q)
//! so its own loop through the one-RTT-old measurement stays well damped. Anti-windup
//! (conditional integration): the I term integrates only near the set point (|e_m| ≤ Q*), only
//! when no transient is in flight (|q_pred_f − q_meas_f| ≤ Q*/4: the predicted and the measured
//! queue agree), not while the command is clamped in the direction it would push, never in
//! Gain/Drain/refresh, and it is bounded by ±2 Q*; so a bandwidth step or a burst, which produce
//! queue errors of many Q*, leave no integral to unwind. Rate steps are bounded by the clamp:
//! x ∈ [0.5·c, 1.25·c].
//!
//! Fairness follows from controlling the flow's *own share* of the queue (q = delay × own rate):
//! at equilibrium every flow keeps Q* bytes queued, so delay·x_i = Q* for all i and the rates are
//! equal (the FAST-TCP / Vegas argument); the queue is N·Q*.
//!
//! Q*: the paper reports ~158 KB at 1 Gbit/s and "nearly 200 KB" at up to 1000 ms. The queue must
//! absorb the sender's own burstiness (TSO bursts of up to 64 KB arrive at the access rate) and
//! the measurement noise without emptying, or the link idles: two 64 KB bursts plus margin ≈ 150
//! KB — the cap. On small-BDP paths a fixed 150 KB would dominate the delay, so Q* ≤ BDP/16 (≤ 6 %
//! extra delay), but not below 30 KB (≈ 20 packets) so the link stays busy.
//!
//! ## Gain state
//! A smooth exponential ramp: x(t) = x0 · 2^((t − t0)/min_rtt), x0 = 2.77 · cwnd / srtt at the
//! first RTT sample, never above GAIN_PACING = 2.77 × bw_max (BBRv3's startup gain; it caps the
//! rate at ~2.77 C should the delay signal not come) and never decreasing. cwnd grows by 2 per
//! acked packet up to 3·BDP, so pacing, not ACK clocking, shapes the ramp. Why smooth: a rate
//! that crosses C keeps growing for the RTT the queue signal needs to return; a smooth doubling
//! overshoots by C·RTT·(1/ln 2 − 1) ≈ 0.44 BDP per RTT of lag, an ACK-clocked doubling (bursts at
//! twice the ACK rate) by a full BDP — 125 MB at 1 Gbit/s × 1 s, more than the paper's 80 MB
//! buffer. Exit to Drain when the measured queue q_meas_f (filter ≤ 2 ms here: lag is overshoot)
//! exceeds Q*, or when bw_max grew < 25 % for 3 rounds (BBR's full-pipe rule, for paths where no
//! delay builds). Reaching the rate takes ~log2(BDP/IW) rounds.
//!
//! Drain: the Control law with the I term frozen; with the big initial error it runs at the
//! clamp (0.5·c) until q_pred_f falls to 2·Q*, then Control takes over. Gain is re-entered from
//! Control when the measured queue stayed below Q*/4 for 3 rounds (capacity was freed: the ACK
//! rate no longer pins c to a full link); a re-entered Gain grows smoothly by at most
//! PROBE_GROWTH = 1.25 per min_rtt from the current rate (overshoot ≈ 0.12 BDP instead of 0.44).
//!
//! ## min_rtt
//! Samples come only from packets never retransmitted (the transport applies Karn's rule), so
//! random loss does not disturb it. A sample ≤ min_rtt + 2 packet times restamps it. Control keeps
//! Q* queued, so after MIN_RTT_WIN = 10 s without such a sample a *refresh* runs (phase "drain"):
//! pace at REFRESH_DRAIN_GAIN = 0.75·c until the predicted own queue is 0 (Q*/(0.25·c) ≈ 5 ms at
//! 1 Gbit/s), hold at exactly c for one round so packets cross an empty queue, then set min_rtt
//! to the minimum seen during the refresh (which may be higher: path change) and return to
//! Control with the I term kept. Cost: about one round at queue ≈ 0 per 10 s, no idle link in
//! principle. Flows sharing a bottleneck refresh together when their stamps are synchronised
//! (e.g. they started together); an unsynchronised refresh sees the other flows' queue and so
//! over-estimates min_rtt by their share — the Vegas/FAST late-comer limitation, not solved here.
//!
//! ## Known limitations (of this reconstruction)
//! - c is the flow's own delivery rate while the queue is busy, so a short burst of foreign
//!   traffic that takes the link for a while lowers c with it; when the burst is gone the flow
//!   needs a few RTTs (upward c tracking, then Gain re-entry) to fill the link again.
//! - min_rtt late-comer bias (see above) when refreshes of flows sharing a queue are not aligned.
//! - The Gain overshoot is that of a smooth doubling stopped one RTT (+ the time to build Q*)
//!   after the link filled: ≈ 0.5 BDP at 1 Gbit/s × 1 s, ≈ 1 BDP when Q* is a large fraction of
//!   the BDP (the Smith predictor cannot help before the capacity is known).
//!
//! ## Loss
//! Ignored as a congestion signal: `ssthresh` changes nothing, there is no packet conservation;
//! the transport retransmits within the paced rate. After an RTO (the transport sets cwnd =
//! in_flight + 1) cwnd grows back by the acked count per ACK to its cap.
//!
//! ## cwnd (safety cap only)
//! Control/Drain: 2·c·min_rtt + 2·Q* + 3 offload bursts (min 4 packets); Gain: 3·bw_max·min_rtt +
//! 3 bursts. Reached by growth of `acked` (2·acked in Gain) per ACK, cut immediately.
//!
//! Exported phases: 0 "gain", 1 "drain", 2 "control"; `bw_bps` = c (bw_max in Gain);
//! `pacing_gain` = pacing rate / bw estimate; `cwnd_gain` = cwnd / BDP estimate.
//!
//! ## Layout
//! This file: the model's constants, the state, the public accessors and `CongestionOps` (one
//! `cong_control` per ACK: estimators, transitions, then Gain or the controller, then cwnd).
//! `estimators`: rounds, min_rtt, rates, queue filters. `states`: Gain, Drain, Control and the
//! transitions. `control`: the queue controller and the min_rtt refresh, the cwnd cap.

mod control;
mod estimators;
mod states;

use crate::filter::MaxFilter;
use crate::{
    CaState, CcStateSample, CongestionOps, Nanos, RateSample, TcpCc, NSEC_PER_MSEC, NSEC_PER_SEC,
    NSEC_PER_USEC,
};

/// Gain-state pacing gain (BBRv3 startup 2.77): doubles the delivery rate per round.
const GAIN_PACING: f64 = 2.77;
/// Gain-state cwnd cap in BDPs: above the ~2 BDP a doubling pacer needs, so pacing shapes the ramp.
const GAIN_CWND_GAIN: f64 = 3.0;
/// Gain grows at most this much per min_rtt, smoothly in time, from the first rate sample.
const GAIN_GROWTH: f64 = 2.0;
/// Re-entered Gain grows at most this much per min_rtt from the rate it started at.
const PROBE_GROWTH: f64 = 1.25;
/// Plateau test (BBR full pipe): growth below 25 % …
const FULL_BW_THRESH: f64 = 1.25;
/// … for 3 rounds.
const FULL_BW_CNT: u32 = 3;
/// Window of the Gain-state max-bw filter, rounds.
const BW_WIN_ROUNDS: u64 = 10;
/// Gain exits when the measured queue exceeds this many targets …
const GAIN_EXIT_Q: f64 = 1.0;
/// … filtered with a time constant of at most this (the exit lag costs C·lag of extra queue).
const GAIN_TF_MAX_NS: Nanos = 2 * NSEC_PER_MSEC;
/// Drain ends when the predicted queue is below this many targets.
const DRAIN_EXIT_Q: f64 = 2.0;
/// Target queue: BDP / 16, clamped to [30 KB, 150 KB].
const Q_TARGET_BDP_DIV: f64 = 16.0;
const Q_TARGET_MIN: f64 = 30_000.0;
const Q_TARGET_MAX: f64 = 150_000.0;
/// Rate command bounds around c: x ∈ [(1 − DOWN_MAX)·c, (1 + UP_MAX)·c].
const DOWN_MAX: f64 = 0.5;
const UP_MAX: f64 = 0.25;
/// Integral time in units of T_q.
const TI_OVER_TQ: f64 = 4.0;
/// The I term is bounded by ±I_BAND·Q*.
const I_BAND: f64 = 2.0;
/// … and integrates only while |e_m| ≤ Q* and |q_pred_f − q_meas_f| ≤ SETTLED_FRAC·Q*.
const SETTLED_FRAC: f64 = 0.25;
/// A queue sample above BUSY_FRAC·Q* means the bottleneck was busy: its ACK rate is the capacity.
const BUSY_FRAC: f64 = 0.5;
/// T_q floor.
const TQ_MIN_NS: Nanos = NSEC_PER_MSEC;
/// T_f = clamp(srtt / 8, 50 µs, 10 ms).
const TF_DIV: u64 = 8;
const TF_MIN_NS: Nanos = 50 * NSEC_PER_USEC;
const TF_MAX_NS: Nanos = 10 * NSEC_PER_MSEC;
/// Re-enter Gain after this many rounds with the measured queue below Q*/4 …
const LOW_Q_ROUNDS: u32 = 3;
const LOW_Q_FRAC: f64 = 0.25;
/// … but not in the first rounds after entering Control.
const CONTROL_SETTLE_ROUNDS: u32 = 4;
/// min_rtt window before a refresh.
const MIN_RTT_WIN_NS: Nanos = 10 * NSEC_PER_SEC;
/// Refresh: drain the own queue at this gain.
const REFRESH_DRAIN_GAIN: f64 = 0.75;
/// cwnd floor, packets.
const CWND_MIN: u32 = 4;

/// BQL states; the value is the exported phase code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Gain = 0,
    Drain = 1,
    Control = 2,
}

/// min_rtt refresh progress.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Refresh {
    Off,
    /// Draining the own queue to 0.
    Draining,
    /// Pacing at c until this round ends (a packet sent after the hold began is acked).
    Holding {
        round_end_delivered: u64,
    },
}

#[derive(Clone, Debug)]
pub struct Bql {
    phase: Phase,
    // Path model.
    min_rtt_ns: Nanos,
    min_rtt_stamp_ns: Nanos,
    /// Gain-state max delivery rate, bytes/s, over BW_WIN_ROUNDS rounds.
    bw_max: MaxFilter,
    /// Bottleneck (own delivery) rate estimate, bytes/s; 0 = none yet.
    c: f64,
    // Rounds.
    round_count: u64,
    next_round_delivered: u64,
    round_start: bool,
    // Gain plateau detection.
    full_bw: f64,
    full_bw_cnt: u32,
    /// Gain ramp: (start rate, start time, growth per min_rtt); None until the first sample.
    ramp: Option<(f64, Nanos, f64)>,
    // Queue estimates, bytes.
    q_meas_f: f64,
    q_pred_f: f64,
    q_pred_raw: f64,
    /// The latest raw q_meas sample, bytes (-1: none on this ACK).
    q_meas_raw: f64,
    have_q: bool,
    last_update_ns: Nanos,
    // Queue controller.
    integ: f64,
    /// Current rate command, bytes/s.
    rate: f64,
    // Control-state bookkeeping.
    control_rounds: u32,
    low_q_rounds: u32,
    round_max_q: f64,
    // min_rtt refresh.
    refresh: Refresh,
    refresh_min_ns: Nanos,
}

impl Default for Bql {
    fn default() -> Self {
        Bql {
            phase: Phase::Gain,
            min_rtt_ns: u64::MAX,
            min_rtt_stamp_ns: 0,
            bw_max: MaxFilter::new_max(),
            c: 0.0,
            round_count: 0,
            next_round_delivered: 0,
            round_start: false,
            full_bw: 0.0,
            full_bw_cnt: 0,
            ramp: None,
            q_meas_f: 0.0,
            q_pred_f: 0.0,
            q_pred_raw: 0.0,
            q_meas_raw: -1.0,
            have_q: false,
            last_update_ns: 0,
            integ: 0.0,
            rate: 0.0,
            control_rounds: 0,
            low_q_rounds: 0,
            round_max_q: 0.0,
            refresh: Refresh::Off,
            refresh_min_ns: u64::MAX,
        }
    }
}

impl Bql {
    pub fn new() -> Self {
        Bql::default()
    }

    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// Bottleneck-rate estimate in use, bytes/s.
    pub fn bw(&self) -> f64 {
        match self.phase {
            Phase::Gain => self.bw_max.get() as f64,
            _ => self.c,
        }
    }

    /// Target queue Q*, bytes.
    pub fn q_target(&self) -> f64 {
        let bw = self.bw();
        if self.min_rtt_ns == u64::MAX || bw <= 0.0 {
            return Q_TARGET_MIN;
        }
        (bw * self.min_rtt_ns as f64 / 1e9 / Q_TARGET_BDP_DIV).clamp(Q_TARGET_MIN, Q_TARGET_MAX)
    }

    /// Smoothed measured / predicted own queue, bytes.
    pub fn queue_estimates(&self) -> (f64, f64) {
        (self.q_meas_f, self.q_pred_f)
    }

    pub fn integral(&self) -> f64 {
        self.integ
    }

    fn bdp_pkts(&self, tp: &TcpCc, bw: f64) -> f64 {
        if self.min_rtt_ns == u64::MAX {
            return 0.0;
        }
        bw * self.min_rtt_ns as f64 / 1e9 / tp.mss as f64
    }

    fn set_pacing(&mut self, tp: &mut TcpCc, rate: f64) {
        self.rate = rate;
        tp.pacing_rate_bytes_per_s = (rate.max(1.0) as u64).min(tp.max_pacing_rate_bytes_per_s);
    }
}

impl CongestionOps for Bql {
    fn has_cong_control(&self) -> bool {
        true
    }

    fn init(&mut self, tp: &mut TcpCc) {
        *self = Bql::default();
        self.min_rtt_ns = tp.min_rtt_ns;
        self.min_rtt_stamp_ns = tp.now_ns;
        self.next_round_delivered = tp.delivered;
        self.last_update_ns = tp.now_ns;
        self.bw_max.reset(0, 0);
        tp.snd_ssthresh = crate::TCP_INFINITE_SSTHRESH;
        tp.pacing_enabled = true;
        let rtt = if tp.srtt_ns > 0 { tp.srtt_ns } else { NSEC_PER_MSEC };
        let rate = GAIN_PACING * tp.snd_cwnd as f64 * tp.mss as f64 * 1e9 / rtt as f64;
        self.set_pacing(tp, rate);
    }

    /// Loss is not a congestion signal: nothing changes.
    fn ssthresh(&mut self, tp: &TcpCc) -> u32 {
        tp.snd_ssthresh
    }

    fn cong_control(&mut self, tp: &mut TcpCc, rs: &RateSample) {
        let now = tp.now_ns;
        let dt = now.saturating_sub(self.last_update_ns);
        self.last_update_ns = now;
        self.update_round(tp, rs);
        if rs.rtt_ns >= 0 {
            self.update_min_rtt(tp, rs.rtt_ns as u64);
        }
        self.update_queue(tp, rs, dt);
        self.update_rates(tp, rs, dt);
        self.transitions(tp, rs);
        match self.phase {
            Phase::Gain => self.gain(tp, rs),
            Phase::Drain | Phase::Control => self.control(tp, dt),
        }
        self.set_cwnd(tp, rs.acked_sacked);
    }

    fn set_state(&mut self, _tp: &mut TcpCc, _new_state: CaState) {}

    fn undo_cwnd(&mut self, tp: &mut TcpCc) -> u32 {
        tp.snd_cwnd.max(tp.prior_cwnd)
    }

    /// Phase codes: 0 gain, 1 drain, 2 control.
    fn sample(&self, tp: &TcpCc) -> CcStateSample {
        let (phase, phase_code) = crate::phases::phase(crate::phases::BQL, self.phase as u8);
        let bw = self.bw();
        let bdp = self.bdp_pkts(tp, bw);
        CcStateSample {
            phase,
            phase_code,
            bw_bps: bw * 8.0,
            min_rtt_ns: self.min_rtt_ns,
            pacing_gain: if bw > 0.0 { tp.pacing_rate_bytes_per_s as f64 / bw } else { 0.0 },
            cwnd_gain: if bdp > 0.0 { tp.snd_cwnd as f64 / bdp } else { 0.0 },
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod tests;
