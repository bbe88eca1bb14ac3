//! ICTCP: receiver-side incast congestion control (Wu, Feng, Guo, Zhang, "ICTCP: Incast
//! Congestion Control for TCP in Data Center Networks", ACM CoNEXT 2010).
//!
//! Incast collapses the last hop before a receiver: many synchronized senders each start with a
//! full initial window and overflow the shallow switch buffer, and the losses end in RTOs. ICTCP
//! lives at the receiver host, which sees that last hop's load, and paces each connection through
//! its advertised receive window (rwnd), before any loss happens. One controller per receiver
//! host, shared by all of its ICTCP connections:
//!
//! **Available bandwidth (global, per time slot).** Time is cut into slots of 2T, each two
//! subslots of T. In the first subslot the host measures its total incoming traffic BW_T (all
//! connections, wire bytes) and at its end computes
//!
//! ```text
//! BW_A = max(0, α·C − BW_T),      α = 0.9,   C = capacity of the receiver's link
//! ```
//!
//! BW_A is the quota for window *increases* in the second subslot: an increase of Δ segments on
//! connection i is allowed only if Δ·(wire bytes per segment)/RTT_i fits in what is left of the
//! quota, and consumes it. T = Σ_i w_i·RTT_i with w_i connection i's share of the traffic of the
//! previous slot (the mean RTT when there was none).
//!
//! **Per connection, every RTT_i:** sample throughput b_s = bytes received in the last RTT / RTT,
//! and keep
//!
//! ```text
//! b_m ← max(b_s, β·b_m + (1 − β)·b_s)          measured (EWMA, follows increases at once)
//! b_e = max(b_m, rwnd/RTT)                      expected
//! d   = (b_e − b_m)/b_e ∈ [0, 1)                throughput difference ratio
//! ```
//!
//! **Window adjustment, at most once per 2·RTT_i** (one RTT for a new rwnd to take effect, one to
//! measure it):
//! - d ≤ γ1 (or d ≤ MSS/rwnd, i.e. the difference is under one segment): increase rwnd, but only
//!   in a second subslot and only if the quota allows — by one segment, or by doubling while the
//!   connection is still in its slow-start phase (a connection leaves slow start the first time
//!   the quota, or d, does not allow an increase);
//! - d > γ2 three times in a row: decrease rwnd by one segment (never below 2 segments; one
//!   segment at a time so the window's right edge need not move back);
//! - otherwise keep rwnd.
//!
//! Constants: α = 0.9, γ1 = 0.1, γ2 = 0.5, minimum rwnd 2 MSS, initial rwnd 2 MSS, three
//! consecutive over-γ2 checks (the paper, §4, as summarised in the ns-3 ICTCP models
//! `tcp-ictcp.h`; slot/quota/slow-start mechanics, 2-MSS initial/minimum window and the
//! Δ·MSS/RTT quota cost as in Wei Bai's Linux ICTCP kernel module, `ictcp.c`).
//!
//! Our choices where those sources are silent or could not be checked against the paper's text:
//! - β = 0.75 (the paper's EWMA weight; value not verified).
//! - The paper's fairness rule for many connections (decreasing windows above the average when
//!   BW_A is small) is not implemented.
//! - RTT_i: the receiver measures it with TCP timestamps in the paper; here the sender's smoothed
//!   RTT (the same path RTT; before the first sample, the configured base RTT).
//! - Decreases are not restricted to a subslot; an increase that is due in a first subslot waits
//!   for the second.
//! - The handshake advertises the initial 2-MSS window, so even the first flight is limited.
//! - No upper bound besides `rcvbuf_bytes` (Bai's module caps at 40 MSS).

use cc::Nanos;

/// α: share of the receiver link's capacity ICTCP lets connections use.
pub const ALPHA: f64 = 0.9;
/// γ1: increase when the throughput difference ratio is at most this.
pub const GAMMA1: f64 = 0.1;
/// γ2: decrease when the ratio exceeds this three times in a row.
pub const GAMMA2: f64 = 0.5;
/// EWMA weight of the measured throughput.
pub const BETA: f64 = 0.75;
/// Minimum (and initial) receive window, segments.
pub const MIN_RWND_SEGS: u32 = 2;
/// Consecutive over-γ2 checks before a decrease.
pub const DECREASE_AFTER: u32 = 3;

#[derive(Clone, Debug)]
struct Conn {
    mss: u32,
    /// Wire bytes of a full segment (quota accounting).
    wire_seg: u32,
    max_rwnd_segs: u32,
    rwnd_segs: u32,
    slow_start: bool,
    rtt_ns: Nanos,
    started: bool,
    sample_start: Nanos,
    sample_bytes: u64,
    /// Measured throughput b_m, payload bytes/s; None before the first RTT sample.
    b_m: Option<f64>,
    last_adjust: Nanos,
    over_count: u32,
    /// Payload bytes in the current slot (weights for T).
    slot_bytes: u64,
}

/// One receiver host's ICTCP controller.
#[derive(Clone, Debug)]
pub struct Ictcp {
    capacity_bps: f64,
    conns: Vec<Conn>,
    second_subslot: bool,
    subslot_start: Nanos,
    subslot_end: Nanos,
    /// Wire bytes that arrived at the host in the current subslot.
    subslot_bytes: u64,
    /// Remaining increase quota in the current second subslot, bit/s.
    quota_bps: f64,
    started: bool,
    /// Counters for results/tests.
    pub increases: u64,
    pub decreases: u64,
}

impl Ictcp {
    /// A controller for a host whose link carries `capacity_bps`.
    pub fn new(capacity_bps: u64) -> Ictcp {
        Ictcp {
            capacity_bps: capacity_bps as f64,
            conns: Vec::new(),
            second_subslot: false,
            subslot_start: 0,
            subslot_end: 0,
            subslot_bytes: 0,
            quota_bps: 0.0,
            started: false,
            increases: 0,
            decreases: 0,
        }
    }

    /// Register a connection; returns its id. `max_rwnd_bytes` is the receive buffer, if any.
    pub fn add_conn(
        &mut self,
        mss: u32,
        wire_seg_bytes: u32,
        max_rwnd_bytes: Option<u64>,
        base_rtt_ns: Nanos,
    ) -> usize {
        let max = max_rwnd_bytes.map_or(u32::MAX, |b| ((b / mss as u64) as u32).max(MIN_RWND_SEGS));
        self.conns.push(Conn {
            mss,
            wire_seg: wire_seg_bytes,
            max_rwnd_segs: max,
            rwnd_segs: MIN_RWND_SEGS,
            slow_start: true,
            rtt_ns: base_rtt_ns.max(1),
            started: false,
            sample_start: 0,
            sample_bytes: 0,
            b_m: None,
            last_adjust: 0,
            over_count: 0,
            slot_bytes: 0,
        });
        self.conns.len() - 1
    }

    /// The window connection `id` advertises now, bytes.
    pub fn window_bytes(&self, id: usize) -> u64 {
        let c = &self.conns[id];
        c.rwnd_segs as u64 * c.mss as u64
    }

    pub fn rwnd_segs(&self, id: usize) -> u32 {
        self.conns[id].rwnd_segs
    }

    /// T = Σ w_i·RTT_i over the previous slot's traffic (mean RTT if there was none).
    fn subslot_len(&mut self) -> Nanos {
        let total: u64 = self.conns.iter().map(|c| c.slot_bytes).sum();
        let t = if total > 0 {
            self.conns.iter().map(|c| c.slot_bytes as f64 * c.rtt_ns as f64).sum::<f64>()
                / total as f64
        } else {
            let n = self.conns.len().max(1) as f64;
            self.conns.iter().map(|c| c.rtt_ns as f64).sum::<f64>() / n
        };
        for c in &mut self.conns {
            c.slot_bytes = 0;
        }
        (t as Nanos).max(1_000)
    }

    /// Move the slot clock to `now`.
    fn advance(&mut self, now: Nanos) {
        if !self.started {
            self.started = true;
            self.second_subslot = false;
            self.subslot_start = now;
            self.subslot_end = now + self.subslot_len();
            return;
        }
        while now >= self.subslot_end {
            if !self.second_subslot {
                // End of the measuring subslot: BW_A = max(0, α·C − BW_T).
                let len = (self.subslot_end - self.subslot_start).max(1);
                let bw_t = self.subslot_bytes as f64 * 8e9 / len as f64;
                self.quota_bps = (ALPHA * self.capacity_bps - bw_t).max(0.0);
                self.second_subslot = true;
                self.subslot_start = self.subslot_end;
                self.subslot_end += len;
            } else {
                // A new slot.
                let t = self.subslot_len();
                self.second_subslot = false;
                self.quota_bps = 0.0;
                self.subslot_start = self.subslot_end;
                self.subslot_end += t;
                if now >= self.subslot_end + 2 * t {
                    // Long idle: restart the clock here rather than replaying empty slots.
                    self.subslot_start = now;
                    self.subslot_end = now + t;
                }
            }
            self.subslot_bytes = 0;
        }
    }

    /// A data packet of `wire_bytes` arrived at the host (any connection, ICTCP or not).
    #[inline]
    pub fn on_host_rx(&mut self, now: Nanos, wire_bytes: u32) {
        if now >= self.subslot_end || !self.started {
            self.advance(now);
        }
        self.subslot_bytes += wire_bytes as u64;
    }

    /// A data segment of `payload` bytes arrived on connection `id` (after `on_host_rx`), whose
    /// RTT is now `rtt_ns`. Runs the per-connection measurement and window adjustment; returns the
    /// window to advertise (bytes).
    pub fn on_conn_rx(&mut self, id: usize, now: Nanos, payload: u32, rtt_ns: Nanos) -> u64 {
        let second = self.second_subslot;
        let c = &mut self.conns[id];
        c.rtt_ns = rtt_ns.max(1);
        c.slot_bytes += payload as u64;
        if !c.started {
            c.started = true;
            c.sample_start = now;
            c.last_adjust = now;
        }
        c.sample_bytes += payload as u64;
        // Throughput sample once per RTT.
        let elapsed = now - c.sample_start;
        if elapsed >= c.rtt_ns {
            let b_s = c.sample_bytes as f64 * 1e9 / elapsed as f64;
            c.b_m = Some(match c.b_m {
                None => b_s,
                Some(b_m) => b_s.max(BETA * b_m + (1.0 - BETA) * b_s),
            });
            c.sample_start = now;
            c.sample_bytes = 0;
        }
        // Adjustment at most once per 2 RTT.
        let Some(b_m) = c.b_m else { return c.rwnd_segs as u64 * c.mss as u64 };
        if now - c.last_adjust < 2 * c.rtt_ns {
            return c.rwnd_segs as u64 * c.mss as u64;
        }
        let rwnd_bytes = c.rwnd_segs as f64 * c.mss as f64;
        let b_e = b_m.max(rwnd_bytes * 1e9 / c.rtt_ns as f64);
        let d = if b_e > 0.0 { (b_e - b_m) / b_e } else { 0.0 };
        if d <= GAMMA1 || d <= 1.0 / c.rwnd_segs as f64 {
            c.over_count = 0;
            if second {
                c.last_adjust = now;
                let step = if c.slow_start { c.rwnd_segs } else { 1 };
                let step = step.min(c.max_rwnd_segs.saturating_sub(c.rwnd_segs));
                let cost = step as f64 * c.wire_seg as f64 * 8e9 / c.rtt_ns as f64;
                if step > 0 && cost <= self.quota_bps {
                    self.quota_bps -= cost;
                    c.rwnd_segs += step;
                    self.increases += 1;
                } else {
                    c.slow_start = false;
                }
            }
            // In a first subslot the increase waits for the second.
        } else {
            c.last_adjust = now;
            c.slow_start = false;
            if d > GAMMA2 {
                c.over_count += 1;
                if c.over_count >= DECREASE_AFTER {
                    c.over_count = 0;
                    if c.rwnd_segs > MIN_RWND_SEGS {
                        c.rwnd_segs -= 1;
                        self.decreases += 1;
                    }
                }
            } else {
                c.over_count = 0;
            }
        }
        c.rwnd_segs as u64 * c.mss as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: u64 = 1_000;

    /// Feed connection `id` a steady stream at `rate_bps` (payload) for `dur` from `t0`, in
    /// 1448-byte segments; returns the time reached.
    fn stream(
        ic: &mut Ictcp,
        ids: &[usize],
        rate_bps: f64,
        t0: Nanos,
        dur: Nanos,
        rtt: Nanos,
    ) -> Nanos {
        let gap = (1448.0 * 8.0 * 1e9 / rate_bps) as Nanos;
        let mut t = t0;
        let mut k = 0;
        while t < t0 + dur {
            let id = ids[k % ids.len()];
            ic.on_host_rx(t, 1538);
            ic.on_conn_rx(id, t, 1448, rtt);
            t += gap;
            k += 1;
        }
        t
    }

    #[test]
    fn windows_grow_only_while_the_link_has_headroom() {
        // A connection receiving exactly rwnd/RTT (window-limited: d = 0) on an idle 1 Gbit/s
        // host may grow; the same connection when the host is already at 95 % of C may not.
        let mut ic = Ictcp::new(1_000_000_000);
        let a = ic.add_conn(1448, 1538, None, 100 * US);
        // rwnd 2 segments at 100 µs = 231.7 Mbit/s of payload: feed exactly that.
        let t = stream(&mut ic, &[a], 2.0 * 1448.0 * 8.0 / 100e-6, 0, 2_000 * US, 100 * US);
        assert!(ic.rwnd_segs(a) > 2, "idle link: window should grow, got {}", ic.rwnd_segs(a));
        let mut ic2 = Ictcp::new(1_000_000_000);
        let b = ic2.add_conn(1448, 1538, None, 100 * US);
        let other = ic2.add_conn(1448, 1538, None, 100 * US);
        // The host also receives 950 Mbit/s of other traffic: BW_A = max(0, 900 − 950) = 0.
        let gap_other = (1538.0 * 8.0 * 1e9 / 950e6) as Nanos;
        let gap_b = (1448.0 * 8.0 * 1e9 / 231.7e6) as Nanos;
        let (mut to, mut tb) = (0, 0);
        while to.min(tb) < t {
            if to <= tb {
                ic2.on_host_rx(to, 1538);
                ic2.on_conn_rx(other, to, 1448, 100 * US);
                to += gap_other;
            } else {
                ic2.on_host_rx(tb, 1538);
                ic2.on_conn_rx(b, tb, 1448, 100 * US);
                tb += gap_b;
            }
        }
        assert_eq!(ic2.rwnd_segs(b), 2, "no quota: no increase");
    }

    #[test]
    fn a_connection_far_below_its_window_shrinks_one_segment_per_three_checks() {
        let mut ic = Ictcp::new(10_000_000_000);
        let a = ic.add_conn(1448, 1538, None, 100 * US);
        // Let it grow on an idle 10 Gbit/s host first.
        stream(&mut ic, &[a], 2e9, 0, 5_000 * US, 100 * US);
        let big = ic.rwnd_segs(a);
        assert!(big >= 10, "window {big}");
        // Now it receives far less than rwnd/RTT (d ≫ γ2): the window must come down by one
        // segment per three 2-RTT checks, i.e. about one per 600 µs.
        let dec0 = ic.decreases;
        stream(&mut ic, &[a], 50e6, 5_000 * US, 6_000 * US, 100 * US);
        let dec = ic.decreases - dec0;
        assert!(ic.rwnd_segs(a) < big, "window did not shrink");
        // 6 ms / (3 checks · ≥ 200 µs) ≤ 10 decreases (checks come with arrivals: fewer at low rate).
        assert!((1..=10).contains(&dec), "{dec} decreases in 6 ms");
        // Never below 2 segments.
        stream(&mut ic, &[a], 5e6, 11_000 * US, 200_000 * US, 100 * US);
        assert_eq!(ic.rwnd_segs(a), MIN_RWND_SEGS);
    }
}
