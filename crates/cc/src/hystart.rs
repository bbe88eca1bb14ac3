//! Slow-start exits used by CUBIC: Linux's classic HyStart ([`LinuxHyStart`], the default, as
//! `net/ipv4/tcp_cubic.c` runs it) and HyStart++ (RFC 9406, [`HyStart`]); [`HyStartMode`] selects.
//!
//! # Linux classic HyStart (Ha & Rhee 2008/2011, mainline `tcp_cubic.c`)
//!
//! Model. Slow start doubles cwnd every round trip and overshoots the path by up to a window. Two
//! detectors (`hystart_detect = HYSTART_ACK_TRAIN | HYSTART_DELAY`) look for the point where the
//! window reaches the path's capacity, and on detection set `ssthresh = cwnd`, i.e. go straight to
//! congestion avoidance:
//! - ACK train: during a round, ACKs that arrive no more than `hystart_ack_delta_us` = 2 ms apart
//!   form a train (the bottleneck spaces them by its service time). When the train started at the
//!   round start spans more than half the minimum RTT, the window in flight fills at least half
//!   the pipe, and the next doubling fills it; exit. Mainline refinements: the threshold is
//!   `(delay_min + hystart_ack_delay) / 2`, where `hystart_ack_delay = min(1 ms, 4·GSO_max/pacing
//!   rate)` is a cushion for TSO/GRO aggregation, and it is not halved for paced sockets (pacing
//!   spreads a round's packets over up to RTT/2 during slow start).
//! - Delay: after `HYSTART_MIN_SAMPLES` = 8 RTT samples of a round, exit when the round's minimum
//!   RTT exceeds the connection's minimum RTT (`delay_min`) by more than
//!   `clamp(delay_min / 8, 4 ms, 16 ms)`: a standing queue has formed.
//!
//! Neither runs below `hystart_low_window` = 16 segments. A round starts (`bictcp_hystart_reset`)
//! on the first ACK beyond `end_seq`, the `snd_nxt` recorded at the previous round start (mainline:
//! `after(tp->snd_una, ca->end_seq)` at the top of `hystart_update`); bbrlab uses the same
//! segment-count snapshot `tp.delivered + tp.packets_in_flight()` as HyStart++ below (see
//! "Rounds"). Detection is one-shot: `found` stays set until `bictcp_reset` (connection start and
//! RTO), so later slow starts after an RTO run HyStart again, but a spurious undo does not.
//! Inputs come from `cubictcp_acked` (`pkts_acked`): per ACK with an RTT sample, after CUBIC has
//! updated `delay_min` with it, and only while in slow start; times are `tp.now_ns`
//! (`bictcp_clock_us` = `tp->tcp_mstamp`).
//!
//! Deliberate differences from Linux (classic HyStart):
//! - Times are kept in nanoseconds, not microseconds (comparisons differ only below 1 µs).
//! - "Paced" (`sk->sk_pacing_status != SK_PACING_NONE`) is `tp.pacing_enabled` or a finite
//!   `tp.max_pacing_rate_bytes_per_s` (SO_MAX_PACING_RATE turns on TCP's internal pacing), the
//!   transport's own test; Linux also counts the fq qdisc having seen the socket.
//! - `sk_gso_max_size` is taken as the legacy 64 KiB (`GSO_LEGACY_MAX_SIZE`), i.e. no BIG TCP.
//!
//! # HyStart++ (RFC 9406)
//!
//! Model. Slow start doubles cwnd every round trip and so usually overshoots the path's capacity by
//! up to a whole window, which costs a burst of losses. HyStart++ watches the minimum RTT seen in
//! each round (at least `N_RTT_SAMPLE` samples per round): when this round's minimum exceeds the
//! previous round's by more than `RttThresh = clamp(lastRoundMinRTT / 8, 4 ms, 16 ms)`, a queue is
//! building, and the sender moves to Conservative Slow Start (CSS): still exponential, but a
//! quarter as fast (`CSS_GROWTH_DIVISOR`). If, in CSS, a round's minimum RTT falls back below the
//! RTT that triggered CSS (`cssBaselineMinRtt`), the exit was spurious and normal slow start
//! resumes; after `CSS_ROUNDS` rounds of CSS the sender enters congestion avoidance with
//! `ssthresh = cwnd` (RFC 9406 §4.2). Loss or ECN in slow start or CSS ends HyStart++: the owning
//! algorithm's loss response sets ssthresh.
//!
//! Rounds. RFC 9406 starts a round when an ACK covers `windowEnd = SND.NXT` of the previous round
//! start. bbrlab counts segments, not sequence numbers, so a round ends when `tp.delivered` (which
//! counts every (S)ACKed segment once) passes `round_end_delivered`, a snapshot of
//! `tp.delivered + tp.packets_in_flight()` taken when the round starts: everything in the network
//! at the round start has then been delivered and this ACK is for data sent in the new round (as
//! Linux's `after(ack, end_seq)`). Lost segments are not in `packets_in_flight`, so a
//! lossy round is not stretched by segments that will never be delivered (equivalent to SND.NXT
//! after the loss is repaired). This relies on `tp.delivered` already counting the current ACK
//! when `pkts_acked` is called, as in Linux (`tcp_clean_rtx_queue` counts delivery before calling
//! `pkts_acked`).
//!
//! Where it runs. RFC 9406 §4.1: HyStart++ SHOULD be used only for the initial slow start (while
//! ssthresh is still infinite); later slow starts (after an RTO) are standard. bbrlab therefore
//! activates it only while `tp.snd_ssthresh == TCP_INFINITE_SSTHRESH`; an undo that restores the
//! infinite ssthresh re-arms it. The owner resets it on every congestion event (`reset`).
//!
//! HyStart++ is not what Linux runs (Linux's `tcp_cubic.c` ships the classic HyStart above, the
//! `cubic` default; HyStart++ is the `cubic_hspp` scenario name). It is implemented as RFC 9406
//! specifies, with no low-window threshold (RFC 9406 has none).
//! The L limit of RFC 9406 §4.2 (`cwnd += min(N, L*SMSS)` per ACK, L = 8 for a non-paced sender,
//! infinite for a paced one) is applied; Linux's `tcp_slow_start` has no such cap.

use crate::{CcStateSample, Nanos, TcpCc, NSEC_PER_MSEC, TCP_INFINITE_SSTHRESH};

/// Lower clamp of RttThresh (RFC 9406 §4.3): below 4 ms, jitter would trigger false exits.
pub const MIN_RTT_THRESH_NS: Nanos = 4 * NSEC_PER_MSEC;
/// Upper clamp of RttThresh (RFC 9406 §4.3): a 16 ms rise is a queue on any path.
pub const MAX_RTT_THRESH_NS: Nanos = 16 * NSEC_PER_MSEC;
/// RttThresh = lastRoundMinRTT / 8, i.e. a 12.5 % RTT increase (RFC 9406 §4.3).
pub const MIN_RTT_DIVISOR: u64 = 8;
/// RTT samples needed in a round before its minimum is trusted (RFC 9406 §4.3).
pub const N_RTT_SAMPLE: u32 = 8;
/// CSS grows cwnd at 1/4 of the slow-start rate (RFC 9406 §4.3).
pub const CSS_GROWTH_DIVISOR: u32 = 4;
/// Rounds of CSS before entering congestion avoidance (RFC 9406 §4.3).
pub const CSS_ROUNDS: u32 = 5;
/// Per-ACK increase limit L for non-paced senders, in segments (RFC 9406 §4.2, §4.3).
pub const NON_PACED_L: u32 = 8;

const NO_RTT: Nanos = u64::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HyStartPhase {
    /// Standard slow start with delay-increase detection.
    SlowStart,
    /// Conservative Slow Start.
    Css,
}

#[derive(Clone, Debug)]
pub struct HyStart {
    phase: HyStartPhase,
    /// A round is being tracked (false until the first ACK after reset).
    in_round: bool,
    /// Round ends once `tp.delivered` reaches this (the windowEnd of RFC 9406, in segments).
    round_end_delivered: u64,
    last_round_min_rtt: Nanos,
    current_round_min_rtt: Nanos,
    rtt_sample_count: u32,
    css_baseline_min_rtt: Nanos,
    /// CSS rounds begun, counting the partial round in which CSS was entered.
    css_rounds: u32,
    /// Acked segments not yet turned into CSS growth (growth is acked / 4).
    css_acked_remainder: u32,
    /// Rounds completed since reset (exported for tests and traces).
    rounds: u64,
}

impl Default for HyStart {
    fn default() -> Self {
        Self::new()
    }
}

impl HyStart {
    pub fn new() -> Self {
        HyStart {
            phase: HyStartPhase::SlowStart,
            in_round: false,
            round_end_delivered: 0,
            last_round_min_rtt: NO_RTT,
            current_round_min_rtt: NO_RTT,
            rtt_sample_count: 0,
            css_baseline_min_rtt: NO_RTT,
            css_rounds: 0,
            css_acked_remainder: 0,
            rounds: 0,
        }
    }

    /// Forget everything (congestion event, RTO, connection start).
    pub fn reset(&mut self) {
        *self = Self::new();
    }

    /// HyStart++ governs this slow start: the initial one, i.e. ssthresh still infinite
    /// (RFC 9406 §4.1).
    #[inline]
    pub fn is_active(&self, tp: &TcpCc) -> bool {
        tp.snd_ssthresh >= TCP_INFINITE_SSTHRESH && tp.in_slow_start()
    }

    #[inline]
    pub fn phase(&self) -> HyStartPhase {
        self.phase
    }

    #[inline]
    pub fn in_css(&self) -> bool {
        self.phase == HyStartPhase::Css
    }

    /// Per ACK that acked data (from `pkts_acked`): round tracking and the RTT checks of
    /// RFC 9406 §4.3. May end slow start by setting `tp.snd_ssthresh = tp.snd_cwnd`.
    pub fn on_ack(&mut self, tp: &mut TcpCc, rtt_ns: Option<u64>) {
        if !self.is_active(tp) {
            return;
        }
        // Round boundary: everything that was in flight at the round start is delivered.
        // Linux hystart: a new round starts with the first ACK beyond end_seq (`after(ack, end_seq)`),
        // i.e. the first ACK that delivers a segment sent after the previous round started.
        if !self.in_round || tp.delivered > self.round_end_delivered {
            if self.in_round {
                self.rounds += 1;
            }
            if self.phase == HyStartPhase::Css {
                // §4.3: "If CSS_ROUNDS rounds are complete, enter congestion avoidance by setting
                // the ssthresh to the current cwnd." The partial round of entry counts.
                if self.css_rounds >= CSS_ROUNDS {
                    tp.snd_ssthresh = tp.snd_cwnd;
                    self.reset();
                    return;
                }
                self.css_rounds += 1;
            }
            self.in_round = true;
            self.round_end_delivered = tp.delivered + tp.packets_in_flight() as u64;
            self.last_round_min_rtt = self.current_round_min_rtt;
            self.current_round_min_rtt = NO_RTT;
            self.rtt_sample_count = 0;
        }
        let Some(rtt) = rtt_ns else { return };
        self.current_round_min_rtt = self.current_round_min_rtt.min(rtt);
        self.rtt_sample_count += 1;
        if self.rtt_sample_count < N_RTT_SAMPLE {
            return;
        }
        match self.phase {
            HyStartPhase::SlowStart => {
                // §4.3 delay-increase test, once both rounds have valid minima.
                if self.current_round_min_rtt != NO_RTT && self.last_round_min_rtt != NO_RTT {
                    let thresh = (self.last_round_min_rtt / MIN_RTT_DIVISOR)
                        .clamp(MIN_RTT_THRESH_NS, MAX_RTT_THRESH_NS);
                    if self.current_round_min_rtt >= self.last_round_min_rtt.saturating_add(thresh)
                    {
                        self.css_baseline_min_rtt = self.current_round_min_rtt;
                        self.phase = HyStartPhase::Css;
                        self.css_rounds = 1;
                        self.css_acked_remainder = 0;
                    }
                }
            }
            HyStartPhase::Css => {
                // §4.3: RTT fell below the baseline: the exit was spurious, resume slow start.
                if self.current_round_min_rtt < self.css_baseline_min_rtt {
                    self.css_baseline_min_rtt = NO_RTT;
                    self.phase = HyStartPhase::SlowStart;
                    self.css_rounds = 0;
                    self.css_acked_remainder = 0;
                }
            }
        }
    }

    /// Segments of slow-start growth for `acked` newly acked segments (RFC 9406 §4.2/§4.3):
    /// capped at L per ACK when not paced, divided by CSS_GROWTH_DIVISOR in CSS (the remainder is
    /// carried to the next ACK so that no growth is lost to integer division).
    pub fn slow_start_increment(&mut self, tp: &TcpCc, acked: u32) -> u32 {
        let n = if tp.pacing_enabled { acked } else { acked.min(NON_PACED_L) };
        if self.phase != HyStartPhase::Css {
            return n;
        }
        let total = self.css_acked_remainder + n;
        self.css_acked_remainder = total % CSS_GROWTH_DIVISOR;
        total / CSS_GROWTH_DIVISOR
    }

    /// Rounds completed since the last reset.
    pub fn rounds(&self) -> u64 {
        self.rounds
    }

    /// Phase name and code for sampling: CSS of [`crate::phases::CUBIC_HSPP`] while in CSS, else
    /// None (the owner reports ss / ca / recovery).
    pub fn sample_phase(&self, tp: &TcpCc) -> Option<(&'static str, u8)> {
        if self.is_active(tp) && self.in_css() && tp.ca_state == crate::CaState::Open {
            Some(crate::phases::phase(crate::phases::CUBIC_HSPP, crate::phases::CUBIC_HSPP_CSS))
        } else {
            None
        }
    }

    /// Fill the HyStart part of a state sample.
    pub fn annotate(&self, tp: &TcpCc, s: &mut CcStateSample) {
        if let Some((p, c)) = self.sample_phase(tp) {
            s.phase = p;
            s.phase_code = c;
        }
    }
}

/// Which slow-start exit CUBIC uses (selected by the scenario name, see `registry.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum HyStartMode {
    /// Plain slow start until loss (Linux `tcp_cubic` with module parameter `hystart=0`).
    Off,
    /// Linux's classic HyStart, ACK train + delay ([`LinuxHyStart`]); scenario name `cubic`.
    #[default]
    Linux,
    /// RFC 9406 HyStart++ ([`HyStart`]); scenario name `cubic_hspp`.
    PlusPlus,
}

/// Linux `hystart_low_window`: neither detector runs while cwnd is below 16 segments (too few
/// ACKs per round for a meaningful train or 8 RTT samples).
pub const HYSTART_LOW_WINDOW: u32 = 16;
/// Linux `hystart_ack_delta_us` = 2000: ACKs closer than this (inclusive) continue the ACK train;
/// a larger gap means the bottleneck idled, i.e. the window does not yet fill the pipe.
pub const HYSTART_ACK_DELTA_NS: Nanos = 2 * NSEC_PER_MSEC;
/// Linux `HYSTART_MIN_SAMPLES`: RTT samples a round must have before its minimum is compared
/// (the check runs on every sample after the 8th).
pub const HYSTART_MIN_SAMPLES: u32 = 8;
/// Linux `HYSTART_DELAY_MIN` (4 ms): lower clamp of the delay threshold, against RTT jitter.
pub const HYSTART_DELAY_MIN_NS: Nanos = 4 * NSEC_PER_MSEC;
/// Linux `HYSTART_DELAY_MAX` (16 ms): upper clamp of the delay threshold on long paths.
pub const HYSTART_DELAY_MAX_NS: Nanos = 16 * NSEC_PER_MSEC;
/// Linux `delay_min >> 3`: the delay threshold is 1/8 of the minimum RTT before clamping.
pub const HYSTART_DELAY_SHIFT: u32 = 3;
/// Linux `hystart_ack_delay`: the TSO/GRO cushion is at most 1 ms (`USEC_PER_MSEC`).
pub const HYSTART_ACK_DELAY_CAP_NS: Nanos = NSEC_PER_MSEC;
/// `sk->sk_gso_max_size` in `hystart_ack_delay`: the legacy 64 KiB GSO limit (no BIG TCP).
pub const GSO_MAX_SIZE_BYTES: u64 = crate::GSO_LEGACY_MAX_SIZE;
/// `hystart_ack_delay`: room for 4 GSO packets (one in GRO, one in the qdisc, ×2 because the
/// slow-start pacing rate is twice the delivery rate).
pub const HYSTART_ACK_DELAY_GSO_PACKETS: u64 = 4;

/// Which detector ended slow start (Linux MIB `TCPHystartTrainDetect` / `TCPHystartDelayDetect`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinuxHyStartExit {
    AckTrain,
    Delay,
}

/// Linux's classic HyStart state (the `round_start`, `end_seq`, `last_ack`, `curr_rtt`,
/// `sample_cnt` and `found` fields of `struct bictcp`). The owner keeps `delay_min`.
#[derive(Clone, Debug)]
pub struct LinuxHyStart {
    /// Exit point found (Linux `found`); cleared only by [`LinuxHyStart::init`] (`bictcp_reset`).
    found: Option<LinuxHyStartExit>,
    /// Start of the current round (Linux `round_start`).
    round_start_ns: Nanos,
    /// The round ends once `tp.delivered` passes this (Linux `end_seq` = `snd_nxt` at round start).
    round_end_delivered: u64,
    /// Arrival of the last ACK of the current train (Linux `last_ack`).
    last_ack_ns: Nanos,
    /// Minimum RTT of the current round (Linux `curr_rtt`).
    curr_rtt_ns: Nanos,
    /// RTT samples taken this round, saturating at `HYSTART_MIN_SAMPLES` (Linux `sample_cnt`).
    sample_cnt: u32,
    /// cwnd when the exit was found (Linux MIB `TCPHystart*Cwnd`), 0 = not yet.
    exit_cwnd: u32,
}

impl Default for LinuxHyStart {
    fn default() -> Self {
        Self::new()
    }
}

impl LinuxHyStart {
    pub fn new() -> Self {
        LinuxHyStart {
            found: None,
            round_start_ns: 0,
            round_end_delivered: 0,
            last_ack_ns: 0,
            curr_rtt_ns: NO_RTT,
            sample_cnt: 0,
            exit_cwnd: 0,
        }
    }

    /// Connection start and RTO (Linux `cubictcp_init` / `cubictcp_state(TCP_CA_Loss)`:
    /// `bictcp_reset` clears `found`, then `bictcp_hystart_reset` starts a round).
    pub fn init(&mut self, tp: &TcpCc) {
        self.found = None;
        self.exit_cwnd = 0;
        self.round_reset(tp);
    }

    /// Linux `bictcp_hystart_reset`: a new round begins now; it ends with the data sent so far.
    fn round_reset(&mut self, tp: &TcpCc) {
        self.round_start_ns = tp.now_ns;
        self.last_ack_ns = tp.now_ns;
        self.round_end_delivered = tp.delivered + tp.packets_in_flight() as u64;
        self.curr_rtt_ns = NO_RTT;
        self.sample_cnt = 0;
    }

    /// The exit found, if any.
    pub fn found(&self) -> Option<LinuxHyStartExit> {
        self.found
    }

    /// cwnd at the exit (0 if none).
    pub fn exit_cwnd(&self) -> u32 {
        self.exit_cwnd
    }

    /// Linux `hystart_ack_delay`: TSO/GRO cushion added to `delay_min` for the ACK-train threshold,
    /// `min(1 ms, 4·GSO_max_size / pacing_rate)`; 0 while there is no pacing rate.
    pub fn ack_delay_ns(tp: &TcpCc) -> Nanos {
        let rate = tp.pacing_rate_bytes_per_s;
        if rate == 0 {
            return 0;
        }
        let d = (GSO_MAX_SIZE_BYTES * HYSTART_ACK_DELAY_GSO_PACKETS) as u128
            * crate::NSEC_PER_SEC as u128
            / rate as u128;
        (d.min(HYSTART_ACK_DELAY_CAP_NS as u128)) as Nanos
    }

    /// Linux `sk->sk_pacing_status != SK_PACING_NONE`, as the transport decides pacing.
    #[inline]
    fn paced(tp: &TcpCc) -> bool {
        tp.pacing_enabled || tp.max_pacing_rate_bytes_per_s != u64::MAX
    }

    /// The tail of Linux `cubictcp_acked`: an RTT sample `delay_ns` (already folded into the
    /// owner's `delay_min_ns`) on an ACK arriving at `tp.now_ns`. Runs `hystart_update` while no
    /// exit has been found and the flow is in slow start. On an exit sets `ssthresh = cwnd`.
    pub fn on_rtt_sample(&mut self, tp: &mut TcpCc, delay_ns: Nanos, delay_min_ns: Nanos) {
        if self.found.is_none() && tp.in_slow_start() {
            self.update(tp, delay_ns, delay_min_ns);
        }
    }

    /// Linux `hystart_update`.
    fn update(&mut self, tp: &mut TcpCc, delay_ns: Nanos, delay_min_ns: Nanos) {
        // `after(tp->snd_una, ca->end_seq)`: everything sent before the round start is delivered.
        if tp.delivered > self.round_end_delivered {
            self.round_reset(tp);
        }
        // "hystart triggers when cwnd is larger than some threshold".
        if tp.snd_cwnd < HYSTART_LOW_WINDOW {
            return;
        }
        // HYSTART_ACK_TRAIN.
        let now = tp.now_ns;
        if now.saturating_sub(self.last_ack_ns) <= HYSTART_ACK_DELTA_NS {
            self.last_ack_ns = now;
            let mut threshold = delay_min_ns + Self::ack_delay_ns(tp);
            // Unpaced: the train must exceed delay_min / 2. Paced: pacing may already have
            // spread the round over RTT/2, so the whole (cushioned) delay_min is required.
            if !Self::paced(tp) {
                threshold >>= 1;
            }
            if now.saturating_sub(self.round_start_ns) > threshold {
                self.exit(tp, LinuxHyStartExit::AckTrain);
            }
        }
        // HYSTART_DELAY: the round's minimum RTT against delay_min + clamp(delay_min/8, 4, 16 ms).
        self.curr_rtt_ns = self.curr_rtt_ns.min(delay_ns);
        if self.sample_cnt < HYSTART_MIN_SAMPLES {
            self.sample_cnt += 1;
        } else {
            let thresh = (delay_min_ns >> HYSTART_DELAY_SHIFT)
                .clamp(HYSTART_DELAY_MIN_NS, HYSTART_DELAY_MAX_NS);
            if self.curr_rtt_ns > delay_min_ns + thresh {
                self.exit(tp, LinuxHyStartExit::Delay);
            }
        }
    }

    /// `ca->found = 1; tp->snd_ssthresh = tcp_snd_cwnd(tp);` (the first detector to fire is
    /// recorded; Linux may count both in its MIBs on the same ACK).
    fn exit(&mut self, tp: &mut TcpCc, why: LinuxHyStartExit) {
        if self.found.is_none() {
            self.found = Some(why);
            self.exit_cwnd = tp.snd_cwnd;
        }
        tp.snd_ssthresh = tp.snd_cwnd;
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod linux_tests;
