//! min_rtt and PROBE_RTT, shared by the family.
//!
//! min_rtt is a windowed minimum kept as (value, stamp): a sample at or below the minimum, or any
//! sample once the window expired, replaces it (Linux keeps it this way, not in a Nichols filter,
//! because the stamp also schedules PROBE_RTT). v1 has one 10 s window and enters PROBE_RTT when
//! it expires; v2/v3 keep a 5 s `probe_rtt_min` sub-window that schedules PROBE_RTT and feed the
//! 10 s min_rtt from it (draft §BBR.min_rtt Min Filter).
//!
//! PROBE_RTT holds cwnd at a small target (v1: 4 packets, v2/v3: max(4, BDP/2)) for
//! max(200 ms, one round) after inflight first fell to it, so the queue drains and the propagation
//! delay is seen; the version then restores cwnd and decides where to go.

use super::inflight;
use super::round::RoundCounter;
use super::units::GAIN_UNIT;
use crate::{CaState, Nanos, RateSample, TcpCc, NSEC_PER_MSEC, NSEC_PER_SEC};

/// min_rtt window: 10 s (`bbr_min_rtt_win_sec`, draft MinRTTFilterLen). Paths rarely change
/// faster, and PROBE_RTT costs ~2 % per window.
pub const MIN_RTT_WIN_NS: Nanos = 10 * NSEC_PER_SEC;
/// v2/v3: PROBE_RTT when no sample refreshed the 5 s `probe_rtt_min` sub-window
/// (`bbr_probe_rtt_win_ms`; with a BDP/2 dip instead of v1's 4 packets the cost stays ~2 %).
pub const PROBE_RTT_WIN_NS: Nanos = 5 * NSEC_PER_SEC;
/// Time held at the PROBE_RTT cwnd: 200 ms, long enough to drain the queue and see the
/// propagation delay on most paths (and for flows of different RTTs to overlap), short enough to
/// cost ~2 % (`bbr_probe_rtt_mode_ms`, draft ProbeRTTDuration).
pub const PROBE_RTT_MODE_NS: Nanos = 200 * NSEC_PER_MSEC;
/// v2/v3 PROBE_RTT cwnd = max(4, 0.5·BDP) (`bbr_probe_rtt_cwnd_gain`, draft ProbeRTTCwndGain):
/// half a BDP drains the queue while keeping half the rate, so a dip every 5 s costs
/// ~0.5·0.2/5 = 2 %, like v1's 4-packet dip every 10 s.
pub const PROBE_RTT_CWND_GAIN: u64 = GAIN_UNIT / 2;

/// A windowed minimum RTT: the value and when it was last refreshed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MinRtt {
    /// ns; `u64::MAX` = no sample.
    pub rtt_ns: Nanos,
    pub stamp_ns: Nanos,
}

impl MinRtt {
    pub const NONE: MinRtt = MinRtt { rtt_ns: u64::MAX, stamp_ns: 0 };

    /// Seeded from the transport's min RTT at `now` (`bbr_init`).
    pub fn new(rtt_ns: Nanos, now: Nanos) -> Self {
        MinRtt { rtt_ns, stamp_ns: now }
    }

    /// Take this ACK's RTT sample into a `win_ns` window; returns whether the window had expired.
    /// A sample equal to the minimum refreshes the stamp only if `refresh_on_equal` (v2alpha and
    /// Linux v1 before 5.10 `<=`; draft, Linux v1 since 5.10 and v3 `<`). An expired window takes
    /// any sample not from a delayed ACK.
    #[inline]
    pub fn update(
        &mut self,
        now: Nanos,
        rs: &RateSample,
        win_ns: Nanos,
        refresh_on_equal: bool,
    ) -> bool {
        self.update_with(now, rs, win_ns, refresh_on_equal, true)
    }

    /// [`MinRtt::update`], with the expired window taking delayed-ACK samples too unless
    /// `expiry_skips_delayed_acks` (Linux v1 before 4.17 took them).
    #[inline]
    pub fn update_with(
        &mut self,
        now: Nanos,
        rs: &RateSample,
        win_ns: Nanos,
        refresh_on_equal: bool,
        expiry_skips_delayed_acks: bool,
    ) -> bool {
        let expired = now > self.stamp_ns.saturating_add(win_ns);
        if rs.rtt_ns >= 0 {
            let rtt = rs.rtt_ns as u64;
            let lower = if refresh_on_equal { rtt <= self.rtt_ns } else { rtt < self.rtt_ns };
            if lower || (expired && !(expiry_skips_delayed_acks && rs.is_ack_delayed)) {
                self.rtt_ns = rtt;
                self.stamp_ns = now;
            }
        }
        expired
    }

    /// v2/v3 (§UpdateMinRTT): take the sample into the `win_ns` (ProbeRTTInterval,
    /// [`PROBE_RTT_WIN_NS`]) `probe_rtt_min` sub-window (`self`), then let the 10 s `min_rtt`
    /// follow it; returns whether the sub-window expired (time for PROBE_RTT).
    #[inline]
    pub fn update_sub_window(
        &mut self,
        min_rtt: &mut MinRtt,
        now: Nanos,
        rs: &RateSample,
        win_ns: Nanos,
        refresh_on_equal: bool,
    ) -> bool {
        let expired = self.update(now, rs, win_ns, refresh_on_equal);
        min_rtt.follow(self, now);
        expired
    }

    /// The 10 s min_rtt follows the 5 s `probe_rtt_min` sub-window: it takes the sub-window's
    /// value when that is lower or equal, or when its own window expired.
    #[inline]
    pub fn follow(&mut self, sub: &MinRtt, now: Nanos) {
        let expired = now > self.stamp_ns.saturating_add(MIN_RTT_WIN_NS);
        if sub.rtt_ns <= self.rtt_ns || expired {
            *self = *sub;
        }
    }
}

/// `MarkConnectionAppLimited`: ignore the low-rate samples PROBE_RTT itself causes.
#[inline]
pub fn mark_connection_app_limited(tp: &mut TcpCc) {
    let v = tp.delivered + tp.packets_in_flight() as u64;
    tp.app_limited = if v == 0 { 1 } else { v };
}

/// The PROBE_RTT hold: max(200 ms, 1 round) once inflight reached the PROBE_RTT cwnd.
#[derive(Clone, Copy, Debug, Default)]
pub struct ProbeRttHold {
    /// End of the 200 ms hold; None until inflight reached the target.
    pub done_stamp_ns: Option<Nanos>,
    /// A round ended since the hold began.
    pub round_done: bool,
}

/// What the hold asks of the version on this ACK.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProbeRttStep {
    /// Keep holding.
    Hold,
    /// Inflight reached the target: the hold began; start a packet-timed round now.
    StartRound,
    /// A round has passed: check whether the 200 ms are over (`bbr_check_probe_rtt_done`).
    CheckDone,
}

impl ProbeRttHold {
    /// One ACK in PROBE_RTT (the PROBE_RTT part of `bbr_update_min_rtt`, §HandleProbeRTT).
    #[inline]
    pub fn on_ack(&mut self, tp: &mut TcpCc, round_start: bool, cwnd_target: u32) -> ProbeRttStep {
        mark_connection_app_limited(tp);
        if self.done_stamp_ns.is_none() && tp.packets_in_flight() <= cwnd_target {
            self.done_stamp_ns = Some(tp.now_ns + PROBE_RTT_MODE_NS);
            self.round_done = false;
            return ProbeRttStep::StartRound;
        }
        if self.done_stamp_ns.is_some() {
            if round_start {
                self.round_done = true;
            }
            if self.round_done {
                return ProbeRttStep::CheckDone;
            }
        }
        ProbeRttStep::Hold
    }

    /// `bbr_check_probe_rtt_done`: once the 200 ms are over, restore the cwnd saved on entry and
    /// return true (the version then schedules the next PROBE_RTT and leaves).
    #[inline]
    pub fn finish(&self, tp: &mut TcpCc, prior_cwnd: u32) -> bool {
        if !matches!(self.done_stamp_ns, Some(done) if tp.now_ns > done) {
            return false;
        }
        tp.snd_cwnd = tp.snd_cwnd.max(prior_cwnd);
        true
    }
}

/// The parts of a version's state the PROBE_RTT driver works on (disjoint borrows).
pub struct ProbeRttParts<'a> {
    pub hold: &'a mut ProbeRttHold,
    pub round: &'a mut RoundCounter,
    /// BBR.idle_restart: set on restart from idle (`restart_from_idle`).
    pub idle_restart: &'a mut bool,
    /// The cwnd saved on entry to recovery or PROBE_RTT (restored on exit).
    pub prior_cwnd: &'a mut u32,
    /// The ca_state before this ACK (a nested episode keeps the larger saved cwnd).
    pub prev_ca_state: CaState,
}

/// What each version supplies to the one PROBE_RTT driver ([`update_min_rtt_and_probe_rtt`],
/// [`check_probe_rtt_done`]): its min_rtt filters, its state, and where it goes on entry and exit.
pub trait ProbeRttModel {
    /// §UpdateMinRTT: take the ACK's RTT sample into the min_rtt filter(s); true when the filter
    /// that schedules PROBE_RTT expired (v1: the 10 s min_rtt, v2/v3: the 5 s probe_rtt_min).
    fn update_min_rtt_filters(&mut self, tp: &TcpCc, rs: &RateSample) -> bool;
    /// The filter that schedules PROBE_RTT starts a new window now (the stamp after the probe).
    fn schedule_next_probe_rtt(&mut self, now: Nanos);
    fn in_probe_rtt(&self) -> bool;
    /// §EnterProbeRTT: the version's state change (state, gains, and what else it resets);
    /// the driver then saves cwnd and starts the hold.
    fn enter_probe_rtt(&mut self, tp: &mut TcpCc);
    /// §ExitProbeRTT: where the version goes after the hold (cwnd already restored).
    fn exit_probe_rtt(&mut self, tp: &TcpCc);
    /// The PROBE_RTT cwnd (v1: 4 packets; v2/v3: max(4, BDP/2)).
    fn probe_rtt_cwnd(&self) -> u32;
    fn probe_rtt_parts(&mut self) -> ProbeRttParts<'_>;
    /// §SaveCwnd (`bbr_save_cwnd`), on entry to recovery or PROBE_RTT.
    #[inline]
    fn save_cwnd(&mut self, tp: &TcpCc) {
        let in_probe_rtt = self.in_probe_rtt();
        let parts = self.probe_rtt_parts();
        *parts.prior_cwnd =
            inflight::saved_cwnd(*parts.prior_cwnd, tp.snd_cwnd, parts.prev_ca_state, in_probe_rtt);
    }
    /// The end of `bbr_set_cwnd` (§BoundCwndForProbeRTT): cwnd within the transport's clamp and,
    /// in PROBE_RTT, the PROBE_RTT cwnd (drain the queue, refresh min_rtt).
    #[inline]
    fn set_cwnd_bounded(&self, tp: &mut TcpCc, cwnd: u32) {
        tp.snd_cwnd = cwnd.min(tp.snd_cwnd_clamp);
        if self.in_probe_rtt() {
            tp.snd_cwnd = tp.snd_cwnd.min(self.probe_rtt_cwnd());
        }
    }
    /// Does this ACK end an idle restart? An ACK that delivers data (Linux 4.13: any ACK).
    #[inline]
    fn idle_restart_ends(&self, rs: &RateSample) -> bool {
        rs.delivered > 0
    }
}

/// The [`ProbeRttModel`] methods every version writes alike, from the field names the family
/// shares (`probe_rtt`, `round`, `idle_restart`, `prior_cwnd`, `prev_ca_state`): `window` is the
/// min_rtt filter whose stamp schedules PROBE_RTT (v1: `min_rtt`, v2/v3: `probe_rtt_min`),
/// `state == value` the version's PROBE_RTT state.
macro_rules! probe_rtt_bookkeeping {
    (window: $window:ident, state: $state:ident == $probe_rtt:path) => {
        #[inline]
        fn schedule_next_probe_rtt(&mut self, now: $crate::Nanos) {
            self.$window.stamp_ns = now;
        }

        #[inline]
        fn in_probe_rtt(&self) -> bool {
            self.$state == $probe_rtt
        }

        #[inline]
        fn probe_rtt_parts(&mut self) -> $crate::bbr::probe_rtt::ProbeRttParts<'_> {
            $crate::bbr::probe_rtt::ProbeRttParts {
                hold: &mut self.probe_rtt,
                round: &mut self.round,
                idle_restart: &mut self.idle_restart,
                prior_cwnd: &mut self.prior_cwnd,
                prev_ca_state: self.prev_ca_state,
            }
        }
    };
}
pub(crate) use probe_rtt_bookkeeping;

/// `bbr_update_min_rtt` (§UpdateMinRTT, §CheckProbeRTT, §HandleProbeRTT): update min_rtt, enter
/// PROBE_RTT when its filter expired (not right after an idle restart: the idle time refreshed
/// nothing but proved nothing either), hold the PROBE_RTT cwnd for max(200 ms, one round) once
/// inflight reached it, then leave.
///
/// ```text
/// if (probe_rtt_expired && !BBR.idle_restart && BBR.state != ProbeRTT)
///   BBREnterProbeRTT(); BBRSaveCwnd(); BBR.probe_rtt_done_stamp = 0
/// if (BBR.state == ProbeRTT) BBRHandleProbeRTT()
/// if (rs.delivered > 0) BBR.idle_restart = false
/// ```
#[inline]
pub fn update_min_rtt_and_probe_rtt<M: ProbeRttModel>(m: &mut M, tp: &mut TcpCc, rs: &RateSample) {
    let expired = m.update_min_rtt_filters(tp, rs);
    if expired && !*m.probe_rtt_parts().idle_restart && !m.in_probe_rtt() {
        m.enter_probe_rtt(tp);
        m.save_cwnd(tp);
        m.probe_rtt_parts().hold.done_stamp_ns = None;
    }
    if m.in_probe_rtt() {
        // Hold the PROBE_RTT inflight; ignore the low-rate samples the dip causes.
        let target = m.probe_rtt_cwnd();
        let parts = m.probe_rtt_parts();
        match parts.hold.on_ack(tp, parts.round.round_start, target) {
            ProbeRttStep::StartRound => parts.round.start_round(tp.delivered),
            ProbeRttStep::CheckDone => check_probe_rtt_done(m, tp),
            ProbeRttStep::Hold => {}
        }
    }
    if m.idle_restart_ends(rs) {
        *m.probe_rtt_parts().idle_restart = false;
    }
}

/// `bbr_check_probe_rtt_done` (§CheckProbeRTTDone): once the hold is over, restore cwnd, start
/// the next PROBE_RTT window and leave (§ExitProbeRTT).
#[inline]
pub fn check_probe_rtt_done<M: ProbeRttModel>(m: &mut M, tp: &mut TcpCc) {
    let parts = m.probe_rtt_parts();
    if parts.hold.finish(tp, *parts.prior_cwnd) {
        m.schedule_next_probe_rtt(tp.now_ns);
        m.exit_probe_rtt(tp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Nanos = 1_000_000_000;

    fn sample(rtt_ns: i64, delayed: bool) -> RateSample {
        RateSample { rtt_ns, is_ack_delayed: delayed, ..Default::default() }
    }

    /// Linux 1b9e2a8c99a5 (v5.10): a recovery's RTT samples come from 1-ms timestamps, so many
    /// equal the minimum; with `<=` they kept postponing PROBE_RTT. Mainline BBRv1 and v3 take
    /// only a lower sample, 4.13 and v2alpha an equal one too.
    #[test]
    fn an_equal_sample_restarts_the_window_only_under_the_old_rule() {
        for (refresh_on_equal, want_stamp) in [(false, 0), (true, 3 * S)] {
            let mut m = MinRtt::new(40_000_000, 0);
            let expired = m.update(3 * S, &sample(40_000_000, false), 10 * S, refresh_on_equal);
            assert!(!expired);
            assert_eq!(
                (m.rtt_ns, m.stamp_ns),
                (40_000_000, want_stamp),
                "refresh_on_equal {refresh_on_equal}"
            );
            // A lower sample restarts it under both rules.
            m.update(4 * S, &sample(39_000_000, false), 10 * S, refresh_on_equal);
            assert_eq!((m.rtt_ns, m.stamp_ns), (39_000_000, 4 * S));
        }
    }

    /// Once the window expired a higher sample replaces the minimum, but not one from a delayed
    /// ACK (since v4.17; 4.13 took it).
    #[test]
    fn an_expired_window_skips_delayed_ack_samples_unless_told_not_to() {
        for (skip, want) in [(true, 40_000_000), (false, 45_000_000)] {
            let mut m = MinRtt::new(40_000_000, 0);
            let expired = m.update_with(11 * S, &sample(45_000_000, true), 10 * S, false, skip);
            assert!(expired);
            assert_eq!(m.rtt_ns, want, "skip {skip}");
        }
    }
}
