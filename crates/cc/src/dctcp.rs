//! DCTCP (RFC 8257) as Linux `net/ipv4/tcp_dctcp.c` runs it.
//!
//! Model. Switches CE-mark packets when their instantaneous queue exceeds a small threshold K; the
//! receiver echoes every mark; the sender keeps
//!
//! ```text
//! alpha ← (1 − g)·alpha + g·F        once per window of data, g = 1/16        (RFC 8257 §3.3)
//! ```
//!
//! where F is the fraction of the segments delivered in that window that were CE-marked, and on
//! congestion (the first ECE of a window) sets `ssthresh = cwnd·(1 − alpha/2)` and reduces cwnd to
//! it (§3.3: "cwnd ← cwnd × (1 − DCTCP.Alpha / 2)"), at most once per window. A queue persistently
//! above K gives alpha → 1 and Reno's halving; a queue that touches K briefly gives small cuts, so
//! the queue oscillates tightly around K with high utilisation. Growth is Reno's; loss is
//! answered as Reno does (halve, §3.5).
//!
//! Linux, which this follows hook for hook:
//! - `dctcp_init`: alpha = `dctcp_alpha_on_init` = `DCTCP_MAX_ALPHA` (1024 = 1.0), so the first
//!   reductions are Reno-sized until alpha has learnt the marking level; ECN is required
//!   (`TCP_CONG_NEEDS_ECN`), so `init` sets `tp.ecn_ok`.
//! - `dctcp_update_alpha` (`in_ack_event`): once the window that was outstanding at the last update
//!   has been delivered, `alpha -= min_not_zero(alpha, alpha >> g_shift)` then
//!   `alpha += (delivered_ce << (10 − g_shift)) / delivered`, clamped to 1024, with `delivered` and
//!   `delivered_ce` the window's increments of `tp.delivered` / `tp.delivered_ce` (segments, as
//!   Linux ≥ 5.1; RFC 8257 counts bytes — with full-sized segments the same thing).
//!   Fixed point with 10 fractional bits, exactly as Linux: alpha values and rounding match
//!   `ss -ti`'s `dctcp:(ce_state,alpha,…)`.
//! - `dctcp_ssthresh`: `max(cwnd − (cwnd·alpha >> 11), 2)`, remembering `loss_cwnd` for undo.
//!   The transport enters CWR on the first ACK carrying new CE marks and stays there until the
//!   window outstanding at that moment is acknowledged (Linux `tcp_enter_cwr`, PRR down to
//!   ssthresh): one reduction per window.
//! - `dctcp_react_to_loss` on entering Recovery (`dctcp_state`) and on RTO
//!   (`CA_EVENT_LOSS`): `ssthresh = max(cwnd/2, 2)` — RFC 8257 §3.5.
//! - `dctcp_cwnd_undo`: `max(cwnd, loss_cwnd)`.
//! - `cong_avoid` = `tcp_reno_cong_avoid`.
//!
//! Differences from Linux:
//! - "Once per window" is counted in delivered segments: the window ends when `tp.delivered` has
//!   grown by the `packets_out` of the previous update (TcpCc has no `snd_una`/`snd_nxt`; Linux
//!   waits for `snd_una ≥ snd_nxt` at the last update). Identical without loss; with SACKed
//!   segments above a hole it can end slightly earlier.
//! - The receiver's half of `dctcp_ece_ack_update` (immediate ACK on a CE-state change, sending
//!   the delayed ACK of the prior state first) lives in the transport's receiver
//!   (`ReceiverConfig::ce_state_ack`), since bbrlab's receiver is not driven by the algorithm.
//!   The echo itself is an exact cumulative CE count (accurate-ECN style), so F is exact.
//! - No PLB (Protective Load Balancing) rehash and no `dctcp_clamp_alpha_on_loss` (default 0).
//!
//! The real-Linux backend runs `python/bbrlab/emu/bpf/src/dctcp.bpf.c`, a BPF struct_ops port of
//! the same kernel file (a stock kernel here has no tcp_dctcp module); its header lists where
//! it and this file differ (window end by snd_una there, the one-bit ECE echo, no TCP_CC_INFO).

use crate::reno::{phase_of, Reno};
use crate::{AckFlags, CaState, CcStateSample, CongestionOps, CwndEvent, TcpCc};

/// Linux `DCTCP_MAX_ALPHA`: alpha's fixed-point scale (1024 = 1.0).
pub const DCTCP_MAX_ALPHA: u32 = 1024;
/// Linux `dctcp_shift_g` = 4: g = 1/16 (RFC 8257 §4.2 recommends g = 1/16).
pub const DCTCP_SHIFT_G: u32 = 4;
/// Linux `dctcp_alpha_on_init` default: start at alpha = 1.0.
pub const DCTCP_ALPHA_ON_INIT: u32 = DCTCP_MAX_ALPHA;

#[derive(Clone, Debug)]
pub struct Dctcp {
    reno: Reno,
    /// alpha · 1024.
    alpha: u32,
    /// The current observation window ends once `tp.delivered` reaches this.
    next_delivered: u64,
    old_delivered: u64,
    old_delivered_ce: u64,
    /// cwnd before the last reduction (undo).
    loss_cwnd: u32,
}

impl Default for Dctcp {
    fn default() -> Self {
        Dctcp::new()
    }
}

impl Dctcp {
    pub fn new() -> Self {
        Dctcp {
            reno: Reno::new(),
            alpha: DCTCP_ALPHA_ON_INIT.min(DCTCP_MAX_ALPHA),
            next_delivered: 0,
            old_delivered: 0,
            old_delivered_ce: 0,
            loss_cwnd: 0,
        }
    }

    /// alpha as a real number in [0, 1].
    pub fn alpha(&self) -> f64 {
        self.alpha as f64 / DCTCP_MAX_ALPHA as f64
    }

    /// Linux `dctcp_reset`: start a new observation window at the current send point.
    fn reset(&mut self, tp: &TcpCc) {
        self.next_delivered = tp.delivered + tp.packets_out as u64;
        self.old_delivered = tp.delivered;
        self.old_delivered_ce = tp.delivered_ce;
    }

    /// Linux `dctcp_react_to_loss`: RFC 8257 §3.5, loss is answered as Reno does.
    fn react_to_loss(&mut self, tp: &mut TcpCc) {
        self.loss_cwnd = tp.snd_cwnd;
        tp.snd_ssthresh = (tp.snd_cwnd >> 1).max(2);
    }
}

impl CongestionOps for Dctcp {
    fn init(&mut self, tp: &mut TcpCc) {
        tp.ecn_ok = true;
        self.alpha = DCTCP_ALPHA_ON_INIT.min(DCTCP_MAX_ALPHA);
        self.loss_cwnd = 0;
        self.reset(tp);
    }

    fn ssthresh(&mut self, tp: &TcpCc) -> u32 {
        self.loss_cwnd = tp.snd_cwnd;
        let cut = ((tp.snd_cwnd as u64 * self.alpha as u64) >> 11) as u32;
        (tp.snd_cwnd - cut).max(2)
    }

    fn cong_avoid(&mut self, tp: &mut TcpCc, acked: u32) {
        self.reno.cong_avoid(tp, acked)
    }

    fn set_state(&mut self, tp: &mut TcpCc, new_state: CaState) {
        // The transport calls this before updating tp.ca_state, as Linux's tcp_set_ca_state does.
        if new_state == CaState::Recovery && tp.ca_state != CaState::Recovery {
            self.react_to_loss(tp);
        }
    }

    fn undo_cwnd(&mut self, tp: &mut TcpCc) -> u32 {
        tp.snd_cwnd.max(self.loss_cwnd)
    }

    fn cwnd_event(&mut self, tp: &mut TcpCc, ev: CwndEvent) {
        if ev == CwndEvent::Loss {
            self.react_to_loss(tp);
        }
    }

    /// Linux `dctcp_update_alpha`.
    fn in_ack_event(&mut self, tp: &mut TcpCc, _flags: AckFlags) {
        if tp.delivered < self.next_delivered {
            return;
        }
        let delivered = tp.delivered - self.old_delivered;
        let delivered_ce = tp.delivered_ce - self.old_delivered_ce;
        let mut alpha = self.alpha;
        // alpha -= min_not_zero(alpha, alpha >> g)
        let dec = alpha >> DCTCP_SHIFT_G;
        alpha -= if dec == 0 { alpha } else { dec };
        if delivered_ce > 0 {
            let inc = (delivered_ce << (10 - DCTCP_SHIFT_G)) / delivered.max(1);
            alpha = (alpha as u64 + inc).min(DCTCP_MAX_ALPHA as u64) as u32;
        }
        self.alpha = alpha;
        self.reset(tp);
    }

    /// Phases as Reno (0 ss, 1 ca, 2 recovery, 3 loss, 4 cwr); `ecn_alpha` is DCTCP's alpha.
    fn sample(&self, tp: &TcpCc) -> CcStateSample {
        let (phase, code) = phase_of(tp);
        CcStateSample { phase, phase_code: code, ecn_alpha: self.alpha(), ..Default::default() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One window of `w` segments, each delivered by its own ACK; `marked(i)` says whether
    /// segment i of the window carried CE. The connection keeps `w` segments outstanding.
    fn window(d: &mut Dctcp, tp: &mut TcpCc, w: u32, marked: impl Fn(u32) -> bool) {
        tp.packets_out = w;
        for i in 0..w {
            tp.delivered += 1;
            let ece = marked(i);
            if ece {
                tp.delivered_ce += 1;
            }
            d.in_ack_event(tp, AckFlags { ece, window_update: true, acked_data: true });
        }
    }

    fn fresh(w: u32) -> (Dctcp, TcpCc) {
        let mut tp = TcpCc::new(1448, w);
        let mut d = Dctcp::new();
        tp.packets_out = 0;
        d.init(&mut tp);
        // The first ACK closes the (empty) window open at init, as in Linux (next_seq = snd_nxt).
        (d, tp)
    }

    #[test]
    fn init_requires_ecn_and_starts_at_alpha_one() {
        let (d, tp) = fresh(10);
        assert!(tp.ecn_ok, "DCTCP needs ECN (TCP_CONG_NEEDS_ECN)");
        assert_eq!(d.alpha(), 1.0);
        assert_eq!(d.sample(&tp).ecn_alpha, 1.0);
    }

    #[test]
    fn alpha_converges_to_the_marked_fraction() {
        // RFC 8257 §3.3: alpha is an EWMA of F; with F constant it converges to F. With g = 1/16
        // the error shrinks by 15/16 per window: 200 windows leave (15/16)^200 ≈ 2.5e-6 of it.
        for &(every, f) in &[(4u32, 0.25f64), (10, 0.1), (2, 0.5), (1, 1.0)] {
            let (mut d, mut tp) = fresh(40);
            for _ in 0..200 {
                window(&mut d, &mut tp, 40, |i| i % every == 0);
            }
            let a = d.alpha();
            assert!((a - f).abs() <= 0.03, "F = {f}: alpha {a}");
        }
        // F = 0: alpha decays to exactly 0 (Linux's min_not_zero rule clears the last 1/1024s).
        let (mut d, mut tp) = fresh(40);
        for _ in 0..200 {
            window(&mut d, &mut tp, 40, |_| false);
        }
        assert_eq!(d.alpha(), 0.0);
    }

    /// Linux's fixed point below F = 1/4: `alpha -= min_not_zero(alpha, alpha >> 4)` takes all
    /// of an alpha under 16/1024 (its 1/16 rounds to 0), and one window adds only
    /// floor(64·F) / 1024, under 16/1024 while F < 1/4. So an alpha that once fell below
    /// 16/1024 (a stretch without marks) never climbs past one window's increment: at F = 5 %
    /// in windows of 120 segments it sits at 3/1024 ≈ 0.003 (F/16), where the real-valued EWMA
    /// of RFC 8257 gives F — and where alpha coming down from above stays (63/1024: its 1/16,
    /// 3, balances the increment). Under DualPI2's coupled marking this is why Linux DCTCP cuts
    /// by ~0.15 % per marked window (docs/queues.md).
    #[test]
    fn below_a_quarter_marked_alpha_is_trapped_once_it_fell_below_sixteen() {
        let five_percent = |i: u32| i.is_multiple_of(20); // 6 of 120 marked
        let increment = (6u32 << 6) / 120; // Linux: (delivered_ce << (10 - g)) / delivered
        assert_eq!(increment, 3);
        // From alpha = 1 (init) down to the marks' level: it stops where alpha >> 4 = 3.
        let (mut d, mut tp) = fresh(120);
        for _ in 0..200 {
            window(&mut d, &mut tp, 120, five_percent);
        }
        assert_eq!(d.alpha(), 63.0 / 1024.0);
        // After unmarked windows took alpha to 0, the same marks hold it at one increment.
        for _ in 0..200 {
            window(&mut d, &mut tp, 120, |_| false);
        }
        assert_eq!(d.alpha(), 0.0);
        for _ in 0..200 {
            window(&mut d, &mut tp, 120, five_percent);
        }
        assert_eq!(d.alpha(), increment as f64 / 1024.0);
    }

    #[test]
    fn one_alpha_step_per_window_with_g_one_sixteenth() {
        // The first ACK closes the empty window open at init (alpha 1 → 15/16) and opens a
        // window of the 20 segments then outstanding.
        let (mut d, mut tp) = fresh(20);
        tp.packets_out = 20;
        tp.delivered += 1;
        d.in_ack_event(&mut tp, AckFlags::default());
        assert_eq!(d.alpha(), 15.0 / 16.0);
        // Windows with known F: alpha moves only on the ACK that completes a window, by exactly
        // alpha ← (1 − 1/16)·alpha + F/16.
        for (k, &f_marks) in [5u32, 0, 20, 13, 1].iter().enumerate() {
            let before = d.alpha();
            for i in 0..20u32 {
                tp.delivered += 1;
                if i < f_marks {
                    tp.delivered_ce += 1;
                }
                d.in_ack_event(
                    &mut tp,
                    AckFlags { ece: i < f_marks, window_update: true, acked_data: true },
                );
                if i < 19 {
                    assert_eq!(
                        d.alpha(),
                        before,
                        "window {k}: alpha changed inside the window at ACK {i}"
                    );
                }
            }
            let f = f_marks as f64 / 20.0;
            let expect = (1.0 - 1.0 / 16.0) * before + f / 16.0;
            // Linux fixed point: two floors of 1/1024 at most.
            assert!(
                (d.alpha() - expect).abs() <= 2.0 / 1024.0,
                "window {k}: alpha {} expected {expect}",
                d.alpha()
            );
        }
    }

    #[test]
    fn ecn_cut_is_alpha_over_two_and_loss_halves() {
        let (mut d, mut tp) = fresh(100);
        tp.snd_cwnd = 100;
        // alpha = 1: Reno-sized cut.
        assert_eq!(d.ssthresh(&tp), 50);
        // Converge alpha to F = 0.25: cut by 12.5 %.
        for _ in 0..300 {
            window(&mut d, &mut tp, 100, |i| i % 4 == 0);
        }
        let a = d.alpha();
        let ss = d.ssthresh(&tp);
        let want = 100.0 * (1.0 - a / 2.0);
        assert!((ss as f64 - want).abs() <= 1.0, "ssthresh {ss}, cwnd·(1 − alpha/2) = {want}");
        assert!((85..=89).contains(&ss), "alpha ≈ 0.25 should cut about 12.5 %, got ssthresh {ss}");
        // Small windows never go below 2.
        tp.snd_cwnd = 2;
        assert_eq!(d.ssthresh(&tp), 2);
        // Loss (entering Recovery) halves regardless of alpha (RFC 8257 §3.5).
        tp.snd_cwnd = 100;
        tp.ca_state = CaState::Open;
        tp.snd_ssthresh = d.ssthresh(&tp); // the transport asks first…
        d.set_state(&mut tp, CaState::Recovery); // …then the state change overrides it.
        assert_eq!(tp.snd_ssthresh, 50);
        // RTO: CA_EVENT_LOSS halves too.
        tp.snd_cwnd = 80;
        tp.snd_ssthresh = d.ssthresh(&tp);
        d.cwnd_event(&mut tp, CwndEvent::Loss);
        assert_eq!(tp.snd_ssthresh, 40);
        // Undo restores the cwnd before the reduction.
        tp.snd_cwnd = 40;
        assert_eq!(d.undo_cwnd(&mut tp), 80);
    }

    #[test]
    fn growth_is_reno() {
        let (mut d, mut tp) = fresh(10);
        tp.is_cwnd_limited = true;
        tp.snd_ssthresh = 20;
        tp.snd_cwnd = 20;
        for _ in 0..20 {
            d.cong_avoid(&mut tp, 1);
        }
        assert_eq!(tp.snd_cwnd, 21, "one segment per window of ACKs in congestion avoidance");
    }
}
