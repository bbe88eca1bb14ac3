//! The unit tests' bottleneck: a tiny deterministic simulator that drives one algorithm through
//! the same hooks, in the same order, as bbrlab's transport, so an algorithm's unit tests can check
//! it against the physics of a known link (its rate, its BDP, its queue) instead of against
//! numbers it produced itself.
//!
//! ```text
//! sender ──(pacing, cwnd, app limit)──▶ [policer] ─▶ [FIFO: buffer limit, random loss, CE] ─▶
//!        service time 1/rate per packet ─▶ propagation delay (may drift) ─▶ per-packet ACK ─▶ sender
//! ```
//!
//! - A bulk sender paced at `tp.pacing_rate_bytes_per_s`, limited by cwnd and optionally by an
//!   application rate / pause ([`Sim::set_app_rate`], [`Sim::pause_until`]); when the window and
//!   pacer allow a send the application cannot fill, the connection is marked app-limited
//!   (`tcp_rate_check_app_limited`).
//! - One FIFO bottleneck: a fixed service time per packet, an optional buffer limit, an optional
//!   token-bucket [`Policer`] in front, optional random loss before the queue, CE marking when
//!   more than `ce_above_pkts` packets wait or with probability `ce_prob`. The propagation delay
//!   is lumped after the bottleneck and may drift upward (a route change the min-RTT filters
//!   cannot see).
//! - Every packet is acked individually once it crossed the bottleneck and the propagation delay.
//!   An ACK accounts the delivered packet into the rate sample, marks every earlier packet that
//!   was dropped as lost (RACK-like; each one through `skb_marked_lost`), runs the recovery state
//!   machine ([`Recovery`]: `ssthresh` then `set_state`, as Linux orders them), generates the
//!   sample and calls `cong_control`. Lost packets are not retransmitted: only the
//!   congestion-control view matters here.
//!
//! Random draws come from `rng::Lcg64`; the simulator is otherwise deterministic.

use crate::rate::{self, PacketRateState};
use crate::rng::Lcg64;
use crate::{
    CaState, CongestionOps, CwndEvent, Nanos, RateSample, TcpCc, NSEC_PER_MSEC, NSEC_PER_SEC,
};
use std::collections::VecDeque;

/// Segment size of every test flow.
pub const MSS: u32 = 1500;
pub const MS: u64 = NSEC_PER_MSEC;
pub const SEC: u64 = NSEC_PER_SEC;

/// An algorithm the kit can drive: the hooks, plus whether the last ACK started a packet-timed
/// round (for [`CwndLimited::Round`]).
pub trait KitCc: CongestionOps {
    fn round_start(&self) -> bool {
        false
    }
}

/// A token-bucket policer in front of the bottleneck.
#[derive(Clone, Debug)]
pub struct Policer {
    pub ns_per_token: u64,
    pub depth: u64,
    /// Tokens scaled by `ns_per_token`.
    pub tokens_ns: u64,
    pub last_ns: u64,
}

impl Policer {
    /// `rate` packets per second, a bucket of `depth` packets, full at time 0.
    pub fn new(rate: u64, depth: u64) -> Policer {
        Policer {
            ns_per_token: NSEC_PER_SEC / rate,
            depth,
            tokens_ns: depth * NSEC_PER_SEC / rate,
            last_ns: 0,
        }
    }

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

/// When the fast-recovery episode the kit models ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recovery {
    /// No recovery state machine: losses are counted, `ca_state` stays Open (BQL ignores loss).
    Off,
    /// Recovery ends when a packet sent after it began is acked (snd_una ≥ high_seq).
    UntilHighSeq,
    /// … and the (virtual) retransmission of the latest loss below high_seq is acked too
    /// (Linux waits for the retransmissions).
    UntilRetransmitsAcked,
    /// Every loss in recovery (its retransmission is sent now) pushes the end out by a round.
    ExtendedByEachLoss,
}

/// How the kit keeps `tp.is_cwnd_limited`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CwndLimited {
    /// The latest send used the whole cwnd.
    AtSend,
    /// cwnd was fully used at any point in this or the previous packet-timed round (the
    /// algorithm's rounds; Linux `tcp_cwnd_validate`, the draft's C.is_cwnd_limited).
    Round,
}

/// What the simulator just did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ev {
    Ack { rtt_ns: u64, losses: u32 },
    Send,
}

struct Pkt {
    seq: u64,
    sent_ns: u64,
    st: PacketRateState,
    /// When its ACK reaches the sender; None = dropped.
    ack_at: Option<u64>,
    ce: bool,
}

pub struct Sim<A> {
    pub tp: TcpCc,
    pub cc: A,
    pub now: u64,
    // The path.
    pub ns_per_pkt: u64,
    pub prop_ns: u64,
    /// Propagation delay growth, ns per second of simulated time.
    pub drift_ns_per_s: u64,
    pub buf_pkts: usize,
    pub policer: Option<Policer>,
    /// Drop probability before the queue.
    pub loss_p: f64,
    /// CE-mark a packet that arrives when more than this many packets wait (usize::MAX: never).
    pub ce_above_pkts: usize,
    /// CE-mark each admitted packet with this probability (independent of the queue).
    pub ce_prob: f64,
    pub rng: Lcg64,
    // The sender.
    /// Application supplies one packet per this many ns (None: unlimited).
    pub app_ns_per_pkt: Option<u64>,
    pub app_next_data: u64,
    /// No data from the application before this time.
    pub pause_until: u64,
    pub recovery: Recovery,
    pub cwnd_limited: CwndLimited,
    /// Call `cwnd_event(TxStart)` when sending with nothing outstanding (restart from idle).
    pub tx_start_events: bool,
    /// Runs just before each `cong_control` (e.g. to pin a state a test isolates).
    pub before_cong_control: Option<fn(&mut A, Nanos)>,
    pub next_seq: u64,
    pub next_send: u64,
    // What happened.
    /// Lowest RTT seen, and when a sample first went below the previous lowest (what restarts
    /// mainline BBRv1's 10-s min_rtt window; an equal sample does not since Linux 5.10).
    pub min_rtt_seen: u64,
    pub last_min_rtt_drop: u64,
    /// The latest ACK's rate sample, as handed to `cong_control`.
    pub last_rs: RateSample,
    pkts: VecDeque<Pkt>,
    /// Departure times of the packets admitted to the bottleneck (oldest first).
    departs: VecDeque<u64>,
    admitted: u64,
    link_free: u64,
    recovery_high: u64,
    retx_high: u64,
    cwnd_hit_this_round: bool,
    cwnd_hit_last_round: bool,
}

impl<A: KitCc> Sim<A> {
    /// `cc` on a fresh connection (IW 10) over a `rate_pps` bottleneck with `prop_ns` of
    /// propagation delay, unlimited buffer, no loss, no marking.
    pub fn new(cc: A, rate_pps: u64, prop_ns: u64) -> Sim<A> {
        Self::with_tp(cc, TcpCc::new(MSS, 10), rate_pps, prop_ns)
    }

    /// As [`Sim::new`], on a connection prepared by the caller (e.g. ECN negotiated before init).
    pub fn with_tp(mut cc: A, mut tp: TcpCc, rate_pps: u64, prop_ns: u64) -> Sim<A> {
        cc.init(&mut tp);
        Sim {
            tp,
            cc,
            now: 0,
            ns_per_pkt: NSEC_PER_SEC / rate_pps,
            prop_ns,
            drift_ns_per_s: 0,
            buf_pkts: usize::MAX,
            policer: None,
            loss_p: 0.0,
            ce_above_pkts: usize::MAX,
            ce_prob: 0.0,
            rng: Lcg64::new(1),
            app_ns_per_pkt: None,
            app_next_data: 0,
            pause_until: 0,
            recovery: Recovery::UntilHighSeq,
            cwnd_limited: CwndLimited::AtSend,
            tx_start_events: false,
            before_cong_control: None,
            next_seq: 0,
            next_send: 0,
            min_rtt_seen: u64::MAX,
            last_min_rtt_drop: 0,
            last_rs: RateSample::default(),
            pkts: VecDeque::new(),
            departs: VecDeque::new(),
            admitted: 0,
            link_free: 0,
            recovery_high: 0,
            retx_high: 0,
            cwnd_hit_this_round: false,
            cwnd_hit_last_round: false,
        }
    }

    pub fn rate_pps(&self) -> f64 {
        NSEC_PER_SEC as f64 / self.ns_per_pkt as f64
    }

    /// Propagation delay of a packet leaving the bottleneck at `t`.
    pub fn prop_at(&self, t: u64) -> u64 {
        self.prop_ns + (self.drift_ns_per_s as u128 * t as u128 / NSEC_PER_SEC as u128) as u64
    }

    /// Physical BDP in packets: bottleneck rate × (propagation now + one service time).
    pub fn bdp_phys(&self) -> f64 {
        self.rate_pps() * (self.prop_at(self.now) + self.ns_per_pkt) as f64 / 1e9
    }

    /// Packets in the bottleneck now (waiting or in service).
    pub fn queue_pkts(&self) -> usize {
        self.departs.len() - self.departs.partition_point(|&d| d <= self.now)
    }

    /// Packets that have left the bottleneck so far.
    pub fn departed(&self) -> u64 {
        self.admitted - self.queue_pkts() as u64
    }

    /// From now on the application supplies `pps` packets per second (None: unlimited).
    pub fn set_app_rate(&mut self, pps: Option<f64>) {
        self.app_ns_per_pkt = pps.map(|p| (1e9 / p) as u64);
        self.app_next_data = self.now;
    }

    /// When the application next has data.
    fn data_time(&self) -> u64 {
        let t = if self.app_ns_per_pkt.is_some() { self.app_next_data } else { 0 };
        t.max(self.pause_until)
    }

    /// Advance to the next event (an ACK arriving, or a send the window, pacer and application
    /// allow), ACKs first on ties.
    pub fn step(&mut self) -> Ev {
        let next_ack = self.pkts.iter().find_map(|p| p.ack_at);
        let can_send = self.tp.packets_in_flight() < self.tp.snd_cwnd;
        let t_send =
            if can_send { self.next_send.max(self.now).max(self.data_time()) } else { u64::MAX };
        match next_ack {
            Some(t_ack) if t_ack <= t_send => {
                self.now = t_ack;
                self.on_ack()
            }
            _ => {
                assert!(t_send != u64::MAX, "deadlock: nothing to send or ack");
                // The window and pacer allowed a send earlier but the application had no data:
                // the connection was app-limited (tcp_rate_check_app_limited).
                if self.data_time() > self.next_send.max(self.now) {
                    self.tp.now_ns = self.next_send.max(self.now);
                    rate::check_app_limited(&mut self.tp, 0);
                }
                self.now = t_send;
                self.send();
                Ev::Send
            }
        }
    }

    /// Send one packet now (whatever cwnd and the pacer say).
    pub fn send(&mut self) {
        let now = self.now;
        self.tp.now_ns = now;
        let first = self.tp.packets_in_flight() == 0;
        if self.tx_start_events && first && self.tp.packets_out == 0 {
            self.cc.cwnd_event(&mut self.tp, CwndEvent::TxStart);
        }
        self.tp.packets_out += 1;
        let seq = self.next_seq;
        self.next_seq += 1;
        if let Some(a) = self.app_ns_per_pkt {
            self.app_next_data = self.app_next_data.max(now.saturating_sub(a)) + a;
        }
        let st = rate::on_packet_sent(&mut self.tp, now, seq, false, first);
        let mut admitted = self.policer.as_mut().is_none_or(|p| p.admit(now));
        while self.departs.front().is_some_and(|&d| d <= now) {
            self.departs.pop_front();
        }
        let queued = self.departs.len();
        if queued >= self.buf_pkts {
            admitted = false;
        }
        if admitted && self.loss_p > 0.0 && self.rng.next_f64() < self.loss_p {
            admitted = false;
        }
        let ce = admitted
            && (queued > self.ce_above_pkts
                || (self.ce_prob > 0.0 && self.rng.next_f64() < self.ce_prob));
        let ack_at = admitted.then(|| {
            let depart = self.link_free.max(now) + self.ns_per_pkt;
            self.link_free = depart;
            self.departs.push_back(depart);
            self.admitted += 1;
            depart + self.prop_at(depart)
        });
        self.pkts.push_back(Pkt { seq, sent_ns: now, st, ack_at, ce });
        self.tp.lsndtime_ns = now;
        self.tp.data_segs_out += 1;
        let rate = self.tp.pacing_rate_bytes_per_s.max(1);
        let len_ns = (self.tp.mss as u128 * NSEC_PER_SEC as u128 / rate as u128) as u64;
        self.next_send = self.next_send.max(now) + len_ns;
        self.tp.wstamp_ns = self.next_send;
        let hit = self.tp.packets_in_flight() >= self.tp.snd_cwnd;
        self.tp.is_cwnd_limited = match self.cwnd_limited {
            CwndLimited::AtSend => hit,
            CwndLimited::Round => {
                self.cwnd_hit_this_round |= hit;
                self.cwnd_hit_this_round || self.cwnd_hit_last_round
            }
        };
    }

    fn enter_recovery(&mut self) {
        self.tp.snd_ssthresh = self.cc.ssthresh(&self.tp);
        self.tp.prior_cwnd = self.tp.snd_cwnd;
        self.cc.set_state(&mut self.tp, CaState::Recovery);
        self.tp.ca_state = CaState::Recovery;
    }

    fn exit_recovery(&mut self) {
        self.cc.set_state(&mut self.tp, CaState::Open);
        self.tp.ca_state = CaState::Open;
    }

    /// The recovery state machine (`tcp_fastretrans_alert`) for an ACK of `seq` that detected
    /// `losses`, the lowest of them `lowest_lost`.
    fn recovery(&mut self, seq: u64, losses: u32, lowest_lost: Option<u64>) {
        let in_recovery = self.tp.ca_state == CaState::Recovery;
        if self.recovery == Recovery::Off {
            return;
        }
        if losses > 0 && self.tp.ca_state < CaState::Recovery {
            self.enter_recovery();
            self.recovery_high = self.next_seq;
            self.retx_high = self.next_seq;
            return;
        }
        match self.recovery {
            Recovery::UntilRetransmitsAcked
                if losses > 0 && lowest_lost.is_some_and(|l| l < self.recovery_high) =>
            {
                self.retx_high = self.next_seq;
            }
            Recovery::ExtendedByEachLoss if losses > 0 => self.recovery_high = self.next_seq,
            Recovery::UntilRetransmitsAcked
                if in_recovery && seq >= self.recovery_high.max(self.retx_high) =>
            {
                self.exit_recovery()
            }
            Recovery::UntilHighSeq | Recovery::ExtendedByEachLoss
                if in_recovery && seq >= self.recovery_high =>
            {
                self.exit_recovery()
            }
            _ => {}
        }
    }

    fn on_ack(&mut self) -> Ev {
        let now = self.now;
        self.tp.now_ns = now;
        let prior_in_flight = self.tp.packets_in_flight();
        let idx = self.pkts.iter().position(|p| p.ack_at.is_some()).expect("acked packet");
        let mut p = self.pkts.remove(idx).unwrap();
        self.tp.packets_out -= 1;
        self.tp.delivered += 1;
        if p.ce {
            self.tp.delivered_ce += 1;
        }
        // RTT first (tcp_ack_update_rtt precedes tcp_rate_gen).
        let rtt = now - p.sent_ns;
        self.tp.srtt_ns = if self.tp.srtt_ns == 0 { rtt } else { (7 * self.tp.srtt_ns + rtt) / 8 };
        self.tp.min_rtt_ns = self.tp.min_rtt_ns.min(rtt);
        if rtt < self.min_rtt_seen {
            self.min_rtt_seen = rtt;
            self.last_min_rtt_drop = now;
        }
        let mut rs = RateSample::default();
        rate::on_packet_delivered(&mut self.tp, &mut p.st, &mut rs);
        // Loss marking after the delivery tagging, as the transport's RACK pass: everything sent
        // before the acked packet and still outstanding was dropped.
        let mut losses = 0u32;
        let mut lowest_lost = None;
        for _ in 0..idx {
            let l = self.pkts.pop_front().unwrap();
            lowest_lost.get_or_insert(l.seq);
            losses += 1;
            self.tp.packets_out -= 1;
            self.tp.lost += 1;
            self.cc.skb_marked_lost(&self.tp, &l.st);
        }
        self.recovery(p.seq, losses, lowest_lost);
        rate::generate(&mut self.tp, now, 1, losses, &mut rs);
        rs.rtt_ns = rtt as i64;
        rs.prior_in_flight = prior_in_flight;
        if let Some(f) = self.before_cong_control {
            f(&mut self.cc, now);
        }
        self.cc.cong_control(&mut self.tp, &rs);
        if self.cwnd_limited == CwndLimited::Round && self.cc.round_start() {
            self.cwnd_hit_last_round = self.cwnd_hit_this_round;
            self.cwnd_hit_this_round = false;
        }
        self.last_rs = rs;
        Ev::Ack { rtt_ns: rtt, losses }
    }

    /// Step until `stop` says so; panics if `limit_ns` passes first.
    pub fn run_until(&mut self, mut stop: impl FnMut(&Sim<A>, Ev) -> bool, limit_ns: u64) {
        while self.now < limit_ns {
            let ev = self.step();
            if stop(self, ev) {
                return;
            }
        }
        panic!("condition not reached by {} ms", limit_ns / NSEC_PER_MSEC);
    }

    /// Run for `ns` of simulated time.
    pub fn run_for(&mut self, ns: u64) {
        let end = self.now + ns;
        self.run_until(|s, _| s.now >= end, end + NSEC_PER_SEC);
    }
}
