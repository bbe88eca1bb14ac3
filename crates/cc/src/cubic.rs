//! CUBIC (RFC 9438) as Linux `net/ipv4/tcp_cubic.c` runs it, with Linux's classic HyStart as the
//! slow-start exit (scenario name `cubic`) or RFC 9406 HyStart++ instead (`cubic_hspp`); see
//! `hystart.rs`.
//!
//! Model. After a congestion event at window W_max, CUBIC grows cwnd along
//!
//! ```text
//! W_cubic(t) = C·(t − K)³ + W_max,      K = cbrt((W_max − cwnd_epoch) / C)      (RFC 9438 §4.2)
//! ```
//!
//! where t is the time since the current congestion-avoidance epoch began and cwnd_epoch the cwnd
//! at that moment: concave up to W_max (the last saturation point), a plateau around it, then
//! convex probing beyond it. Each ACK moves cwnd toward `target = W_cubic(t + RTT)` clamped to
//! [cwnd, 1.5·cwnd] (§4.4, §4.5), at the rate of one segment per `cnt = cwnd / (target − cwnd)`
//! segments acked (Linux `bictcp_update` → `tcp_cong_avoid_ai`). So that CUBIC is never slower
//! than Reno, it also runs a Reno-like estimate W_est that grows by α_cubic = 3(1−β)/(1+β) segments
//! per RTT — the AIMD rate with the same average throughput as Reno under β = 0.7; when W_est is
//! above cwnd, cwnd grows toward W_est instead (the "Reno-friendly region"). Linux keeps α at
//! ≈ 0.53 for the whole epoch (RFC 9438 §4.3 would switch to 1 once W_est ≥ cwnd_prior; see below). On a congestion event ssthresh = β·cwnd and
//! W_max = cwnd, or (1+β)/2·cwnd if cwnd had not regained the previous W_max ("fast convergence",
//! §4.7, releasing bandwidth to newer flows). After an RTO (Loss state) all state is forgotten
//! (§4.8, Linux `cubictcp_state` → `bictcp_reset`). After idle, the epoch start is shifted by the
//! idle time so cwnd stays on the curve instead of jumping (Linux `cubictcp_cwnd_event`).
//! Growth happens only while the flow is cwnd-limited (RFC 9438 §4.9 / RFC 7661; Linux
//! `tcp_is_cwnd_limited`).
//!
//! Arithmetic: floating point (f64) for the curve. Reason: bbrlab compares against RFC 9438's
//! formula, and f64 evaluates it directly in seconds and segments without Linux's 1/1024 s time
//! quantum, its 41/1024 approximation of C/10 (C = 0.4004) and the `cube_factor` overflow limits;
//! results are deterministic for a given platform (only +, −, ×, ÷ and `cbrt`). Integer state that
//! Linux keeps in integers stays integer where rounding is observable: ssthresh uses Linux's
//! `cwnd · 717 / 1024` exactly (an f64 `0.7 · cwnd` would floor 21 to 20 for cwnd = 30), and cwnd
//! itself grows through the shared `snd_cwnd_cnt` counter as in Linux.
//!
//! Reno-friendly region as Linux has it, not as RFC 9438 §4.3 words it (fidelity fix, see
//! docs/DESIGN.md): W_est is Linux's integer `tcp_cwnd`, set to cwnd at the epoch start and raised
//! by one every `(cwnd · beta_scale) >> 3` segments acked (`beta_scale` = 15, so α = 8/15 ≈ 0.53,
//! for the whole epoch), and it only pulls cwnd up once it is a whole segment above it
//! (`max_cnt = cwnd / (tcp_cwnd − cwnd)`). RFC 9438 §4.3's switch to α = 1 once W_est ≥ cwnd_prior
//! was proposed for Linux in 2024 ("tcp_cubic: fix to match Reno additive increment", adding
//! `bictcp.cwnd_prior`) but is not in the kernels we compare with: 6.18's BTF has no `cwnd_prior`
//! member in `struct bictcp`. At loss-limited windows of 5–20 segments (1–2 % loss) the switch and
//! the fractional W_est made the simulator 20–40 % faster than the kernel.
//!
//! Deliberate differences from Linux `tcp_cubic.c`:
//! - No 1/32 s rate limit on recomputing the target (`last_time` check in `bictcp_update`): that is a
//!   CPU optimisation whose effect depends on jiffies; bbrlab recomputes on every ACK.
//! - `cubic_hspp` replaces Linux's HyStart by HyStart++ (RFC 9406, see `hystart.rs`); `cubic`
//!   runs Linux's classic HyStart (its own deviations are listed in `hystart.rs`).
//! - The idle shift needs `tp.lsndtime_ns` (Linux `tp->lsndtime`); while it is 0 (a transport
//!   that does not report send times) the epoch is not shifted.
//! - The RTT in W_cubic(t + RTT) is the minimum RTT seen (Linux `delay_min`), not RFC 9438's
//!   smoothed RTT; before any sample it falls back to the transport's min RTT, then srtt, then 0.

use crate::hystart::{HyStart, HyStartMode, HyStartPhase, LinuxHyStart};
use crate::reno::phase_of;
use crate::{
    tcp_cong_avoid_ai, tcp_slow_start, CaState, CcStateSample, CongestionOps, CwndEvent, Nanos,
    TcpCc, NSEC_PER_SEC,
};

/// C, in segments / s³ (RFC 9438 §5.1): the aggressiveness of the cubic curve. 0.4 makes CUBIC
/// as fast as Reno at about 1 Gbit/s × 100 ms scales and keeps K in seconds for common W_max.
pub const C: f64 = 0.4;
/// β numerator in Linux's 1/1024 fixed point (`beta = 717`, tcp_cubic.c): 717/1024 ≈ 0.7002, the
/// RFC 9438 §4.6 β_cubic = 0.7 (a 30 % cut: less than Reno's 50 %, for high-BDP utilisation).
pub const BETA_NUM: u32 = 717;
/// Linux `BICTCP_BETA_SCALE`.
pub const BETA_SCALE: u32 = 1024;
/// β_cubic as a real number (= 717/1024).
pub const BETA: f64 = BETA_NUM as f64 / BETA_SCALE as f64;
/// Linux `fast_convergence = 1` (RFC 9438 §4.7 SHOULD).
const FAST_CONVERGENCE: bool = true;
/// Linux: while no W_max is known (after startup), grow at least 5 % per RTT (`cnt` ≤ 20), since
/// the available bandwidth is unknown and the cubic origin is the current cwnd.
const MAX_CNT_WITHOUT_WMAX: u32 = 20;
/// Linux `bictcp_update`: `cnt = 100 * cwnd` when the target is not above cwnd (almost no growth).
const CNT_NO_GROWTH_FACTOR: u32 = 100;
/// Linux `cubictcp_acked`: RTT samples during the first second of an epoch are not used for the
/// delay minimum (they may still carry the queue built before recovery).
const DELAY_MIN_HOLDOFF_NS: Nanos = NSEC_PER_SEC;

/// Linux `beta_scale = 8·(BICTCP_BETA_SCALE + beta) / 3 / (BICTCP_BETA_SCALE − beta)` = 15 in
/// integer arithmetic: W_est grows one segment per `(cwnd · 15) >> 3` segments acked, α = 8/15.
const BETA_SCALE_RENO: u32 = 8 * (BETA_SCALE + BETA_NUM) / 3 / (BETA_SCALE - BETA_NUM);

/// α_cubic = 3(1 − β)/(1 + β) (RFC 9438 §4.3) ≈ 0.529 for β = 0.7.
#[inline]
pub fn alpha_cubic() -> f64 {
    3.0 * (1.0 - BETA) / (1.0 + BETA)
}

#[derive(Clone, Debug)]
pub struct Cubic {
    hystart_mode: HyStartMode,
    /// RFC 9406 state, used when `hystart_mode == PlusPlus`.
    hystart: HyStart,
    /// Linux classic HyStart state, used when `hystart_mode == Linux`.
    linux_hystart: LinuxHyStart,
    /// Segments acked per one segment of cwnd increase (Linux `ca->cnt`).
    cnt: u32,
    /// W_max, segments (Linux `last_max_cwnd`); 0 = none yet.
    w_max: f64,
    /// Start of the current congestion-avoidance epoch (Linux `epoch_start`, 0 = none).
    epoch_start: Option<Nanos>,
    /// cwnd at the epoch start.
    cwnd_epoch: f64,
    /// K, seconds from epoch start to the plateau (Linux `bic_K`).
    k_s: f64,
    /// Plateau of the curve (Linux `bic_origin_point`).
    origin: f64,
    /// Reno-friendly estimate W_est, segments (Linux `tcp_cwnd`, an integer).
    w_est: u32,
    /// Segments acked not yet turned into W_est growth (Linux `ack_cnt`).
    ack_cnt: u32,
    /// Minimum RTT seen, ns (Linux `delay_min`); 0 = none.
    delay_min_ns: Nanos,
}

impl Cubic {
    pub fn new(hystart: HyStartMode) -> Self {
        Cubic {
            hystart_mode: hystart,
            hystart: HyStart::new(),
            linux_hystart: LinuxHyStart::new(),
            cnt: 0,
            w_max: 0.0,
            epoch_start: None,
            cwnd_epoch: 0.0,
            k_s: 0.0,
            origin: 0.0,
            w_est: 0,
            ack_cnt: 0,
            delay_min_ns: 0,
        }
    }

    /// Linux `bictcp_reset`: forget the curve, W_max and the delay minimum.
    fn reset(&mut self) {
        self.cnt = 0;
        self.w_max = 0.0;
        self.epoch_start = None;
        self.cwnd_epoch = 0.0;
        self.k_s = 0.0;
        self.origin = 0.0;
        self.w_est = 0;
        self.ack_cnt = 0;
        self.delay_min_ns = 0;
    }

    /// W_max in segments (0 before the first congestion event).
    pub fn w_max(&self) -> f64 {
        self.w_max
    }

    /// K of the current epoch, seconds.
    pub fn k_seconds(&self) -> f64 {
        self.k_s
    }

    pub fn hystart_phase(&self) -> HyStartPhase {
        self.hystart.phase()
    }

    pub fn hystart_mode(&self) -> HyStartMode {
        self.hystart_mode
    }

    /// Linux classic HyStart state (meaningful when the mode is `Linux`).
    pub fn linux_hystart(&self) -> &LinuxHyStart {
        &self.linux_hystart
    }

    /// Minimum RTT held by CUBIC (Linux `delay_min`), ns; 0 = none.
    pub fn delay_min_ns(&self) -> Nanos {
        self.delay_min_ns
    }

    /// Scenario name: `cubic` (Linux HyStart; also for `Off`, which has no scenario name and is
    /// Linux `tcp_cubic` with `hystart=0`) or `cubic_hspp` (HyStart++).
    pub fn name(&self) -> &'static str {
        match self.hystart_mode {
            HyStartMode::PlusPlus => "cubic_hspp",
            HyStartMode::Linux | HyStartMode::Off => "cubic",
        }
    }

    fn rtt_for_target(&self, tp: &TcpCc) -> Nanos {
        if self.delay_min_ns > 0 {
            self.delay_min_ns
        } else if tp.min_rtt_ns != u64::MAX {
            tp.min_rtt_ns
        } else {
            tp.srtt_ns
        }
    }

    /// Linux `bictcp_update` / RFC 9438 §4.2–4.5: recompute `cnt` for this ACK.
    fn update(&mut self, tp: &TcpCc, acked: u32) {
        let cwnd = tp.snd_cwnd as f64;
        let now = tp.now_ns;
        let epoch_start = match self.epoch_start {
            Some(t) => t,
            None => {
                // §4.2: a new epoch begins with the first ACK of congestion avoidance.
                self.epoch_start = Some(now);
                self.cwnd_epoch = cwnd;
                self.w_est = tp.snd_cwnd; // §4.3: W_est = cwnd_epoch at the epoch start
                self.ack_cnt = 0; // Linux: ack_cnt = acked, added below
                if self.w_max <= cwnd {
                    self.k_s = 0.0;
                    self.origin = cwnd;
                } else {
                    self.k_s = ((self.w_max - cwnd) / C).cbrt();
                    self.origin = self.w_max;
                }
                now
            }
        };

        // §4.2 / §4.4: target = W_cubic(t + RTT).
        let t = (now.saturating_sub(epoch_start) + self.rtt_for_target(tp)) as f64
            / NSEC_PER_SEC as f64;
        let offs = t - self.k_s;
        let target = self.origin + C * offs * offs * offs;

        // §4.4/§4.5: grow by (target − cwnd)/cwnd per segment acked, i.e. one segment per
        // cwnd/(target − cwnd) acked; almost nothing when target ≤ cwnd.
        let no_growth = CNT_NO_GROWTH_FACTOR.saturating_mul(tp.snd_cwnd).max(1);
        let mut cnt = if target > cwnd {
            let c = cwnd / (target - cwnd);
            if c >= no_growth as f64 {
                no_growth
            } else {
                c as u32
            }
        } else {
            no_growth
        };
        // Linux: no W_max known yet (left slow start without loss): at least 5 % per RTT.
        if self.w_max == 0.0 && cnt > MAX_CNT_WITHOUT_WMAX {
            cnt = MAX_CNT_WITHOUT_WMAX;
        }

        // §4.3 Reno-friendly region, as Linux `bictcp_update` (tcp_friendliness) computes it:
        // W_est (`tcp_cwnd`) += 1 per `(cwnd · beta_scale) >> 3` segments acked, i.e. α = 8/15 per
        // RTT for the whole epoch (no switch to α = 1 at cwnd_prior, see the module comment), and
        // it pulls cwnd up only once it is at least one whole segment above it.
        self.ack_cnt = self.ack_cnt.saturating_add(acked);
        let delta = ((tp.snd_cwnd as u64 * BETA_SCALE_RENO as u64) >> 3).max(1) as u32;
        while self.ack_cnt > delta {
            self.ack_cnt -= delta;
            self.w_est += 1;
        }
        if self.w_est > tp.snd_cwnd {
            let max_cnt = tp.snd_cwnd / (self.w_est - tp.snd_cwnd);
            cnt = cnt.min(max_cnt);
        }

        // §4.4 clamp target ≤ 1.5·cwnd ⇔ at most one segment per 2 acked (Linux `max(cnt, 2)`).
        self.cnt = cnt.max(2);
    }
}

impl CongestionOps for Cubic {
    fn init(&mut self, tp: &mut TcpCc) {
        // Linux `cubictcp_init`: reset, hystart reset; initial_ssthresh = 0 (infinite).
        self.reset();
        self.hystart.reset();
        self.linux_hystart.init(tp);
    }

    /// Linux `cubictcp_recalc_ssthresh` / RFC 9438 §4.6–4.7.
    fn ssthresh(&mut self, tp: &TcpCc) -> u32 {
        self.epoch_start = None; // end of epoch
        let cwnd = tp.snd_cwnd as f64;
        // §4.7 fast convergence: still below the previous W_max → release some bandwidth.
        self.w_max = if FAST_CONVERGENCE && cwnd < self.w_max {
            cwnd * (BETA_SCALE + BETA_NUM) as f64 / (2 * BETA_SCALE) as f64
        } else {
            cwnd
        };
        // A congestion event ends HyStart++ (RFC 9406 §4.3); re-armed only if an undo restores
        // the infinite ssthresh.
        self.hystart.reset();
        ((tp.snd_cwnd as u64 * BETA_NUM as u64 / BETA_SCALE as u64) as u32).max(2)
    }

    /// Linux `cubictcp_cong_avoid`.
    fn cong_avoid(&mut self, tp: &mut TcpCc, acked: u32) {
        if !tp.is_cwnd_limited() {
            return;
        }
        let mut acked = acked;
        if tp.in_slow_start() {
            if self.hystart_mode == HyStartMode::PlusPlus && self.hystart.is_active(tp) {
                // RFC 9406 §4.2/4.3: L cap and CSS divisor; ssthresh is infinite, so all of it is
                // slow-start growth and nothing is left for congestion avoidance.
                let inc = self.hystart.slow_start_increment(tp, acked);
                tcp_slow_start(tp, inc);
                return;
            }
            acked = tcp_slow_start(tp, acked);
            if acked == 0 {
                return;
            }
        }
        self.update(tp, acked);
        tcp_cong_avoid_ai(tp, self.cnt, acked);
    }

    /// Linux `cubictcp_state`: an RTO forgets everything.
    fn set_state(&mut self, tp: &mut TcpCc, new_state: CaState) {
        if new_state == CaState::Loss {
            self.reset();
            self.hystart.reset();
            self.linux_hystart.init(tp); // bictcp_reset (found = 0) + bictcp_hystart_reset
        }
    }

    /// Linux uses `tcp_reno_undo_cwnd` for CUBIC (no private undo state).
    fn undo_cwnd(&mut self, tp: &mut TcpCc) -> u32 {
        tp.snd_cwnd.max(tp.prior_cwnd)
    }

    /// Linux `cubictcp_acked`: track the delay minimum; feed HyStart (Linux: after the delay
    /// minimum, with the same sample filter) or HyStart++ (every ACK, for its round tracking).
    fn pkts_acked(&mut self, tp: &mut TcpCc, _acked: u32, rtt_ns: Option<u64>) {
        if self.hystart_mode == HyStartMode::PlusPlus {
            self.hystart.on_ack(tp, rtt_ns);
        }
        let Some(rtt) = rtt_ns else { return };
        if let Some(start) = self.epoch_start {
            if tp.now_ns.saturating_sub(start) < DELAY_MIN_HOLDOFF_NS {
                return; // discard delay samples right after fast recovery
            }
        }
        let delay = rtt.max(1);
        if self.delay_min_ns == 0 || self.delay_min_ns > delay {
            self.delay_min_ns = delay;
        }
        if self.hystart_mode == HyStartMode::Linux {
            self.linux_hystart.on_rtt_sample(tp, delay, self.delay_min_ns);
        }
    }

    /// Linux `cubictcp_cwnd_event`: after idle, shift the epoch by the idle time so that cwnd
    /// continues along the curve rather than jumping by the idle time's growth.
    fn cwnd_event(&mut self, tp: &mut TcpCc, ev: CwndEvent) {
        if ev != CwndEvent::TxStart {
            return;
        }
        let now = tp.now_ns;
        // lsndtime_ns == 0: the transport does not report send times; shifting by `now` would
        // restart the curve, so leave the epoch alone.
        if tp.lsndtime_ns == 0 {
            return;
        }
        if let Some(start) = self.epoch_start {
            let idle = now.saturating_sub(tp.lsndtime_ns);
            if idle > 0 {
                self.epoch_start = Some((start + idle).min(now));
            }
        }
    }

    fn sample(&self, tp: &TcpCc) -> CcStateSample {
        let (phase, code) = phase_of(tp);
        let mut s =
            CcStateSample { phase, phase_code: code, w_max_segs: self.w_max, ..Default::default() };
        if self.hystart_mode == HyStartMode::PlusPlus {
            self.hystart.annotate(tp, &mut s);
        }
        s
    }
}

#[cfg(test)]
mod tests;
