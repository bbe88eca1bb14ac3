//! HyStart++ (RFC 9406): a delay-based exit from the initial slow start, used by CUBIC.
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
//! Deliberate differences from Linux: Linux's `tcp_cubic.c` ships the older HyStart (ACK-train and
//! delay detection, `hystart_low_window` 16) and exits straight to congestion avoidance; bbrlab
//! implements RFC 9406 as specified instead, with no low-window threshold (RFC 9406 has none).
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
                    if self.current_round_min_rtt >= self.last_round_min_rtt.saturating_add(thresh) {
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

    /// Phase name and code for sampling: "css" (5) while in CSS, else None (the owner reports
    /// ss / ca / recovery).
    pub fn sample_phase(&self, tp: &TcpCc) -> Option<(&'static str, u8)> {
        if self.is_active(tp) && self.in_css() && tp.ca_state == crate::CaState::Open {
            Some(("css", 5))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cubic::Cubic;
    use crate::CongestionOps;

    const MS: u64 = NSEC_PER_MSEC;

    /// Drive one round of a window-limited flow through `Cubic` with HyStart++: every segment in
    /// flight at the round start is acked (one ACK per segment, all with RTT `rtt`), and each ACK
    /// refills the window. Returns how many ACKs were processed.
    fn run_round(cc: &mut Cubic, tp: &mut TcpCc, rtt: u64) -> u32 {
        let n = tp.packets_out;
        let spacing = rtt / n.max(1) as u64;
        for _ in 0..n {
            tp.now_ns += spacing;
            tp.packets_out -= 1;
            tp.delivered += 1;
            cc.pkts_acked(tp, 1, Some(rtt));
            cc.cong_avoid(tp, 1);
            tp.packets_out = tp.snd_cwnd; // the sender refills the window
            tp.max_packets_out = tp.max_packets_out.max(tp.packets_out);
        }
        n
    }

    fn start() -> (Cubic, TcpCc) {
        let mut tp = TcpCc::new(1448, 10);
        let mut cc = Cubic::new(true);
        cc.init(&mut tp);
        tp.packets_out = tp.snd_cwnd;
        tp.max_packets_out = tp.packets_out;
        (cc, tp)
    }

    #[test]
    fn flat_rtt_stays_in_slow_start_and_doubles() {
        let (mut cc, mut tp) = start();
        for round in 0..8 {
            let before = tp.snd_cwnd;
            run_round(&mut cc, &mut tp, 50 * MS);
            // Standard slow start: one segment per segment acked, so cwnd doubles per round.
            assert_eq!(tp.snd_cwnd, 2 * before, "round {round}");
            assert_eq!(cc.hystart_phase(), HyStartPhase::SlowStart);
            assert_eq!(cc.sample(&tp).phase, "ss");
        }
        assert_eq!(tp.snd_ssthresh, TCP_INFINITE_SSTHRESH);
    }

    #[test]
    fn rtt_rise_enters_css_after_eight_samples_then_ca_after_five_rounds() {
        let (mut cc, mut tp) = start();
        for _ in 0..3 {
            run_round(&mut cc, &mut tp, 50 * MS);
        }
        // Next round: RTT up by 10 ms > RttThresh = clamp(50/8 = 6.25 ms, 4, 16) ms.
        // The first 7 samples must not trigger; the 8th must.
        let rtt = 60 * MS;
        let mut acks = 0;
        let mut entered_at = None;
        let n = tp.packets_out;
        for _ in 0..n {
            tp.now_ns += rtt / n as u64;
            tp.packets_out -= 1;
            tp.delivered += 1;
            cc.pkts_acked(&mut tp, 1, Some(rtt));
            acks += 1;
            if entered_at.is_none() && cc.hystart_phase() == HyStartPhase::Css {
                entered_at = Some(acks);
            }
            cc.cong_avoid(&mut tp, 1);
            tp.packets_out = tp.snd_cwnd;
        }
        assert_eq!(entered_at, Some(8), "CSS must start at the 8th sample of the round (N_RTT_SAMPLE)");
        assert_eq!(cc.sample(&tp).phase, "css");
        // In CSS a full round of N ACKs grows cwnd by N/4 (not N).
        let before = tp.snd_cwnd;
        let acked = run_round(&mut cc, &mut tp, rtt);
        let grown = tp.snd_cwnd - before;
        assert!(
            (grown as i64 - (acked / 4) as i64).abs() <= 1,
            "CSS growth {grown} for {acked} acked"
        );
        // The partial round of entry plus that round are 2 CSS rounds; three more full rounds
        // complete CSS_ROUNDS = 5 and the next round boundary enters CA with ssthresh = cwnd.
        for _ in 0..3 {
            run_round(&mut cc, &mut tp, rtt);
            assert_eq!(tp.snd_ssthresh, TCP_INFINITE_SSTHRESH, "left CSS too early");
            assert_eq!(cc.hystart_phase(), HyStartPhase::Css);
        }
        // First ACK of the next round: CSS is complete.
        tp.now_ns += MS;
        tp.packets_out -= 1;
        tp.delivered += 1;
        cc.pkts_acked(&mut tp, 1, Some(rtt));
        assert_eq!(tp.snd_ssthresh, tp.snd_cwnd, "exit to CA must set ssthresh = cwnd");
        assert!(!tp.in_slow_start());
        assert_eq!(cc.sample(&tp).phase, "ca");
    }

    #[test]
    fn rtt_falling_below_baseline_returns_to_slow_start() {
        let (mut cc, mut tp) = start();
        for _ in 0..3 {
            run_round(&mut cc, &mut tp, 50 * MS);
        }
        run_round(&mut cc, &mut tp, 60 * MS);
        assert_eq!(cc.hystart_phase(), HyStartPhase::Css);
        // A round whose minimum RTT is back at 50 ms (< baseline 60 ms): spurious exit.
        run_round(&mut cc, &mut tp, 50 * MS);
        assert_eq!(cc.hystart_phase(), HyStartPhase::SlowStart);
        assert_eq!(tp.snd_ssthresh, TCP_INFINITE_SSTHRESH);
        // And slow start grows at the full rate again.
        let before = tp.snd_cwnd;
        run_round(&mut cc, &mut tp, 50 * MS);
        assert_eq!(tp.snd_cwnd, 2 * before);
    }

    #[test]
    fn small_rtt_rise_below_threshold_does_not_trigger() {
        let (mut cc, mut tp) = start();
        for _ in 0..2 {
            run_round(&mut cc, &mut tp, 100 * MS);
        }
        // RttThresh at 100 ms is 12.5 ms; a 12 ms rise is below it.
        run_round(&mut cc, &mut tp, 112 * MS);
        assert_eq!(cc.hystart_phase(), HyStartPhase::SlowStart);
        // Against the new baseline of 112 ms, a 15 ms rise is above its 14 ms threshold.
        run_round(&mut cc, &mut tp, 127 * MS); // threshold now 112/8 = 14 ms
        assert_eq!(cc.hystart_phase(), HyStartPhase::Css);
    }

    #[test]
    fn rtt_threshold_is_clamped_to_4_and_16_ms() {
        // Base 20 ms: 20/8 = 2.5 ms, clamped up to 4 ms. A 3.5 ms rise must not trigger …
        let (mut cc, mut tp) = start();
        run_round(&mut cc, &mut tp, 20 * MS);
        run_round(&mut cc, &mut tp, 23 * MS + 500_000);
        assert_eq!(cc.hystart_phase(), HyStartPhase::SlowStart);
        // … but 4.5 ms above the new baseline of 23.5 ms (threshold still 4 ms) must.
        run_round(&mut cc, &mut tp, 28 * MS);
        assert_eq!(cc.hystart_phase(), HyStartPhase::Css);
        // Base 200 ms: 200/8 = 25 ms, clamped down to 16 ms. A 17 ms rise must trigger.
        let (mut cc, mut tp) = start();
        run_round(&mut cc, &mut tp, 200 * MS);
        run_round(&mut cc, &mut tp, 217 * MS);
        assert_eq!(cc.hystart_phase(), HyStartPhase::Css);
    }

    #[test]
    fn non_paced_growth_is_capped_at_l_per_ack() {
        let (mut cc, mut tp) = start();
        tp.packets_out = 40;
        tp.delivered += 20;
        cc.pkts_acked(&mut tp, 20, Some(50 * MS));
        cc.cong_avoid(&mut tp, 20); // a stretch ACK for 20 segments
        assert_eq!(tp.snd_cwnd, 10 + 8); // L = 8 for a non-paced sender
        // A paced sender has no L cap (RFC 9406 §4.2: L = infinity).
        let (mut cc, mut tp) = start();
        tp.pacing_enabled = true;
        tp.packets_out = 40;
        tp.delivered += 20;
        cc.pkts_acked(&mut tp, 20, Some(50 * MS));
        cc.cong_avoid(&mut tp, 20);
        assert_eq!(tp.snd_cwnd, 30);
    }
}
