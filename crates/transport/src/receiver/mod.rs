//! The receiving half of a connection: reassembly, SACK generation, delayed ACKs, window, ECN echo.
//!
//! ACK policy as Linux `__tcp_ack_snd_check`: ACK at once when more than one full segment is
//! unacknowledged (every second segment), when in quick-ACK mode (the first 16 segments of a
//! connection, Linux `TCP_MAX_QUICKACKS`), when data arrives out of order or fills a hole, and when
//! a duplicate arrives; otherwise arm the delayed-ACK timer (40 ms, Linux `TCP_DELACK_MIN`).
//!
//! D-SACK (RFC 2883; Linux `tcp_dsack_set`, `tcp_dsack_extend`): a duplicate segment — below
//! rcv_nxt, or inside an out-of-order block already held — is reported by the first SACK block
//! of the ACK it triggers (sent at once), followed by at most two ordinary blocks; duplicates
//! of one receive-offload skb extend one block. The report is sent once (Linux clears
//! `rx_opt.dsack` when `tcp_options_write` has written it).
//!
//! Faster ACKs (Google BBRv2 slides, optimisation 3; `ReceiverConfig::faster_acks`). Before the
//! fix, Linux's `__tcp_ack_snd_check` ACKed every second segment only if (1) more than one full
//! segment was unacknowledged AND (2) the window it would offer now (`__tcp_select_window`) was at
//! least the window offered last (`rcv_wnd`). When the receive window stops growing — the buffer is
//! clamped and the application has not yet read what arrived — (2) fails, and the ACK waits for the
//! application's read (`tcp_cleanup_rbuf`) or the delayed-ACK timer. `faster_acks = true`
//! (default) is the fix: check (2) removed. `false` restores the old rule. The rule only bites
//! with a finite window (`rcvbuf_bytes`) and an application that does not read at once.
//!
//! Application reads (`ReceiverConfig::app_read_delay_ns`): by default the application reads
//! in-order data the moment it arrives (the buffer holds only out-of-order data). With a read
//! delay, the application is woken `delay` after the first unread data arrives and then reads
//! everything in order (a reader thread's scheduling latency / batching); unread bytes occupy
//! `rcvbuf_bytes` and shrink the offered window. After a read, as Linux `tcp_cleanup_rbuf`: ACK
//! if an ACK is pending with more than one full segment unacknowledged, or if the window that
//! can now be offered is at least twice what is left of the advertised one.
//!
//! Message boundaries (`ReceiverConfig::msg_segs`, the RPC workload): when the application has
//! read a complete message it answers at once, and the answer carries an ACK for everything
//! received (the response itself is not modelled as data).
//!
//! Receive window: `rcvbuf_bytes` (minus out-of-order data held) or, when set, a window chosen from
//! outside ([`Receiver::set_window_override`], e.g. a receiver-side controller such as ICTCP); the
//! smaller applies. With a window set from outside, as Linux `tcp_select_window`, the right edge
//! `rcv_nxt + window` never moves back: a smaller window takes effect as in-order data advances
//! the left edge.
//!
//! Window updates: with a window set from outside, an in-order segment is ACKed at once when the
//! window that can now be offered is at least twice what is left of the advertised one (Linux
//! `tcp_cleanup_rbuf` after the application reads, with the override as `window_clamp`); with
//! a 2-segment window that is every segment, so a transfer's last odd segment does not wait for
//! the 40 ms delayed-ACK timer. The rcvbuf-only rule is left as it was.
//!
//! DCTCP receiver (`ce_state_ack`, Linux `dctcp_ece_ack_update` on CA_EVENT_ECN_IS_CE /
//! CA_EVENT_ECN_NO_CE): when a segment's CE state differs from the previous segment's, ACK at once,
//! and if a delayed ACK was pending send it first, for the data before the change (RFC 8257 §3.2:
//! the ACKs then tell exactly which segments were marked). The echo is a cumulative CE count
//! (accurate-ECN style), so the sender's marked fraction is exact either way; the state machine
//! reproduces DCTCP's ACK timing and ACK count.

mod ack;
mod config;
mod reassembly;

pub use config::ReceiverConfig;

use crate::rcv_space::RcvSpace;
use crate::{Packet, MAX_SACK_BLOCKS};
use cc::{Nanos, NSEC_PER_MSEC};

/// Linux TCP_DELACK_MIN.
pub const DELACK_NS: Nanos = 40 * NSEC_PER_MSEC;
/// Linux TCP_MAX_QUICKACKS.
pub const QUICKACKS: u32 = 16;

/// One connection's receiving end. Laid out by use (`repr(C)`, cache-line aligned): with many
/// flows interleaved at a queue (FQ-CoDel serves one packet per flow in turn) each delivery
/// finds the receiver cold, and every 64-byte line it reads is a miss. The fields an in-order
/// segment touches fill the first three lines, those an ACK adds the fourth; the rest follow.
#[repr(C, align(64))]
pub struct Receiver {
    // Line 1: what every in-order segment reads and writes.
    /// Next expected segment.
    pub rcv_nxt: u64,
    /// Data segments received (including duplicates).
    pub segs_received: u64,
    /// Payload bytes delivered in order to the application.
    pub delivered_bytes: u64,
    /// rcv_nxt carried by the last ACK sent (RFC 7323 Last.ACK.sent, Linux rcv_wup).
    last_ack_sent: u64,
    /// RFC 7323 TS.Recent.
    ts_recent: Nanos,
    /// Right edge advertised last (segments); the edge never moves back.
    last_rwnd_end: u64,
    /// Window set from outside (bytes), None = rcvbuf rule only.
    rwnd_override_bytes: Option<u64>,
    // Line 2: the reassembly state's emptiness and the timers every segment checks.
    /// Out-of-order ranges [start, end) above rcv_nxt, sorted, disjoint, non-adjacent. A deque:
    /// after a mass loss (10^5 holes at 100 Gbit/s) retransmissions fill the holes front first,
    /// and a Vec's remove(0)/merge would shift every range each time.
    ooo: std::collections::BTreeMap<u64, u64>,
    delack_deadline: Option<Nanos>,
    /// When the application will next read.
    read_at: Option<Nanos>,
    /// Segments received since the last ACK was sent.
    unacked_segs: u32,
    quickacks_left: u32,
    // Line 3: the configuration's flags and the per-skb state.
    pub cfg: ReceiverConfig,
    /// CE state of the last data segment (DCTCP `ce_state`).
    ce_state: bool,
    /// A segment of the receive-offload skb being processed asked for an immediate ACK.
    skb_wants_ack: bool,
    /// `pending_ack.is_some()`, kept here so that a segment with no pending ACK (nearly all)
    /// reads no cold line to learn so.
    pending_ack_set: bool,
    /// No window limit at all (no buffer, no autotuning, no window set from outside): every
    /// ACK's `rwnd_end` is u64::MAX. Kept as it changes (`new`, `set_window_override`).
    rwnd_unlimited: bool,
    /// The flow id written into every ACK (the simulator's flow index; see `Sender::flow_id`).
    pub flow_id: u32,
    // Line 4: what building an ACK (every second segment) adds.
    pub acks_sent: u64,
    /// Window (segments; u64::MAX = unlimited) offered by the last ACK (Linux `rcv_wnd`).
    last_wnd_segs: u64,
    n_recent: usize,
    /// The duplicate range the next ACK reports first (Linux `duplicate_sack[0]`).
    dsack: Option<(u64, u64)>,
    /// Complete messages already answered (message-boundary reads).
    msgs_answered: u64,
    /// Cumulative CE-marked segments received.
    pub ce_count: u64,
    // Line 5 and on: SACK history, counters, and what only loss, CE or slow reads touch.
    /// Starts of the SACK blocks reported last, most recent first.
    recent: [u64; MAX_SACK_BLOCKS],
    ooo_segs: u64,
    pub dup_segs: u64,
    /// ACKs that carried a D-SACK block.
    pub dsacks_sent: u64,
    /// In-order bytes the application has not read yet (only with `app_read_delay_ns`).
    pub unread_bytes: u64,
    /// Every-2nd-segment ACKs the old rule withheld (faster_acks = false).
    pub acks_withheld: u64,
    /// ACKs sent because the application read (tcp_cleanup_rbuf) or answered a message.
    pub acks_on_read: u64,
    /// A short (final) segment held out of order: (seq, payload bytes). Only the last segment
    /// of a stream can be shorter than the MSS.
    ooo_short: Option<(u64, u32)>,
    /// An ACK produced by `on_data` in addition to its return value (DCTCP state change: the
    /// delayed ACK of the prior CE state), to be sent before it.
    pending_ack: Option<Packet>,
    /// Receive-window autotuning (`cfg.autotune`; its own cache line).
    pub rcv_space: RcvSpace,
}

// The lines as laid out above (a reordering that spills a hot field into the next line fails here).
const _: () = {
    use std::mem::offset_of;
    assert!(offset_of!(Receiver, ooo) == 64);
    assert!(offset_of!(Receiver, cfg) == 128);
    assert!(offset_of!(Receiver, acks_sent) == 192);
    assert!(offset_of!(Receiver, recent) == 256);
};

impl Receiver {
    pub fn new(mut cfg: ReceiverConfig) -> Receiver {
        // A set receive buffer is fixed (Linux: SO_RCVBUF locks autotuning).
        cfg.autotune &= cfg.rcvbuf_bytes.is_none();
        let (rcv_space, syn_window_segs) = RcvSpace::new(0, cfg.mss, 0);
        let rwnd_unlimited = Self::window_unlimited(&cfg, None);
        Receiver {
            rcv_space,
            // Autotuned: the SYN-ACK's window, until `establish` says when and with what RTT.
            last_rwnd_end: if cfg.autotune { syn_window_segs } else { 0 },
            cfg,
            flow_id: 0,
            rcv_nxt: 0,
            ooo: std::collections::BTreeMap::new(),
            ooo_segs: 0,
            ooo_short: None,
            recent: [0; MAX_SACK_BLOCKS],
            n_recent: 0,
            ts_recent: 0,
            last_ack_sent: 0,
            unacked_segs: 0,
            quickacks_left: QUICKACKS,
            delack_deadline: None,
            ce_count: 0,
            delivered_bytes: 0,
            segs_received: 0,
            dup_segs: 0,
            acks_sent: 0,
            dsacks_sent: 0,
            dsack: None,
            rwnd_override_bytes: None,
            ce_state: false,
            pending_ack: None,
            pending_ack_set: false,
            rwnd_unlimited,
            unread_bytes: 0,
            read_at: None,
            last_wnd_segs: u64::MAX,
            msgs_answered: 0,
            acks_withheld: 0,
            acks_on_read: 0,
            skb_wants_ack: false,
        }
    }

    /// The connection is established at `now` after a handshake that measured `rtt_ns`: starts
    /// autotuning (`cfg.autotune`) and returns the SYN-ACK's window as a right edge in segments
    /// (None: no limit).
    pub fn establish(&mut self, now: Nanos, rtt_ns: Nanos) -> Option<u64> {
        if !self.cfg.autotune {
            return None;
        }
        let (space, syn_window_segs) = RcvSpace::new(now, self.cfg.mss, rtt_ns);
        self.rcv_space = space;
        self.last_rwnd_end = syn_window_segs;
        Some(syn_window_segs)
    }

    /// Bytes the receive buffer holds: unread in-order data and out-of-order data.
    #[inline]
    fn held_bytes(&self) -> u64 {
        self.ooo_segs * self.cfg.mss as u64 + self.unread_bytes
    }

    /// Advertise at most `bytes` of window from now on (None: back to the rcvbuf rule). Used by
    /// receiver-side window controllers (ICTCP). Rounded down to whole segments, at least one.
    #[inline]
    pub fn set_window_override(&mut self, bytes: Option<u64>) {
        self.rwnd_override_bytes = bytes;
        self.rwnd_unlimited = Self::window_unlimited(&self.cfg, bytes);
    }

    /// No window limit at all: no buffer, no autotuning, no window set from outside.
    fn window_unlimited(cfg: &ReceiverConfig, override_bytes: Option<u64>) -> bool {
        cfg.rcvbuf_bytes.is_none() && !cfg.autotune && override_bytes.is_none()
    }

    /// The window the receiver would advertise now (bytes; u64::MAX = unlimited), e.g. for the
    /// handshake: the sender's first flight is limited by the window of the SYN-ACK.
    pub fn window_bytes(&self) -> u64 {
        let buf = match self.cfg.rcvbuf_bytes {
            None if self.cfg.autotune => self.rcv_space.window_bytes(self.held_bytes()),
            None => u64::MAX,
            Some(buf) => buf.saturating_sub(self.held_bytes()),
        };
        match self.rwnd_override_bytes {
            None => buf,
            Some(o) => buf.min(o.max(self.cfg.mss as u64)),
        }
    }

    /// An extra ACK `on_data` produced, to be sent before the one it returned (see `ce_state_ack`).
    #[inline]
    pub fn take_pending_ack(&mut self) -> Option<Packet> {
        if !std::mem::take(&mut self.pending_ack_set) {
            return None;
        }
        self.pending_ack.take()
    }

    pub fn next_timeout(&self) -> Option<Nanos> {
        match (self.delack_deadline, self.read_at) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Complete messages received in order so far (message-boundary reads).
    fn msgs_complete(&self) -> u64 {
        self.cfg.msg_segs.map_or(0, |m| self.rcv_nxt / m.max(1))
    }

    /// The application reads everything in order; returns an ACK if `tcp_cleanup_rbuf` would
    /// send one (or a complete message is answered).
    fn app_read(&mut self, now: Nanos) -> Option<Packet> {
        self.read_at = None;
        self.unread_bytes = 0;
        if self.cfg.autotune {
            let span = self.ooo_span_bytes();
            self.rcv_space.on_read(now, self.delivered_bytes, span);
        }
        let mut ack = false;
        if self.msgs_complete() > self.msgs_answered {
            self.msgs_answered = self.msgs_complete();
            ack = self.unacked_segs > 0 || self.rcv_nxt > self.last_ack_sent;
        }
        // An ACK is scheduled and more than one full segment is unacknowledged.
        if self.delack_deadline.is_some() && self.rcv_nxt > self.last_ack_sent + 1 {
            ack = true;
        }
        // The window can be raised "significantly" (at least doubled).
        if !ack && self.last_rwnd_end != 0 && self.last_rwnd_end != u64::MAX {
            let left = self.last_rwnd_end.saturating_sub(self.rcv_nxt);
            let new = self.window_bytes() / self.cfg.mss as u64;
            if new >= 2 * left.max(1) {
                ack = true;
            }
        }
        if ack {
            self.acks_on_read += 1;
            self.delack_deadline = None;
            Some(self.make_ack(now))
        } else {
            None
        }
    }

    /// Delayed-ACK timer and application reads.
    pub fn on_timeout(&mut self, now: Nanos) -> Option<Packet> {
        if self.read_at.is_some_and(|r| now >= r) {
            if let Some(a) = self.app_read(now) {
                return Some(a);
            }
        }
        match self.delack_deadline {
            Some(d) if now >= d => {
                self.delack_deadline = None;
                if self.unacked_segs > 0 {
                    let mut a = self.make_ack(now);
                    a.delayed = true;
                    Some(a)
                } else {
                    None
                }
            }
            _ => None,
        }
    }

    /// A data segment arrived; returns an ACK to send now, if any.
    #[inline]
    pub fn on_data(&mut self, now: Nanos, seg: &Packet) -> Option<Packet> {
        self.on_data_in_skb(now, seg, true)
    }

    /// A data segment arrived as part of a receive-offload (GRO/LRO) skb: the stack sees the skb
    /// once, so the ACK decision is taken at its last segment (`last`), for all of it — one
    /// stretch ACK for an in-order skb of two or more segments (`__tcp_ack_snd_check`: more
    /// than one full segment unacknowledged). Segments before the last only update the
    /// reassembly state; a reason to ACK at once that one of them found (a duplicate, a hole,
    /// a CE-state change, quick-ACK mode) carries to the skb's end.
    #[inline]
    pub fn on_data_in_skb(&mut self, now: Nanos, seg: &Packet, last: bool) -> Option<Packet> {
        self.segs_received += 1;
        let mut immediate = false;
        if self.cfg.ce_state_ack && seg.ce() != self.ce_state {
            // dctcp_ece_ack_update: a delayed ACK pending (ICSK_ACK_TIMER) goes out first, for the
            // data before this segment (prior rcv_nxt, prior CE count); then ACK now.
            if self.delack_deadline.is_some() && self.unacked_segs > 0 {
                self.pending_ack = Some(self.make_ack(now));
                self.pending_ack_set = true;
            }
            self.ce_state = seg.ce();
            immediate = true;
        }
        if seg.ce() {
            self.ce_count += 1;
        }
        let seq = seg.seq;
        // RFC 7323 §4.3 (Linux tcp_replace_ts_recent): TS.Recent takes the TSval of a segment at
        // or left of the last ACK sent, and never moves backwards (PAWS). Without the second rule
        // an original segment arriving after its hole was repaired would echo a timestamp older
        // than the retransmission, and the sender's Eifel check would undo a real loss response.
        if seq <= self.last_ack_sent && seg.ts_ns >= self.ts_recent {
            self.ts_recent = seg.ts_ns;
        }
        if seq < self.rcv_nxt || self.in_ooo(seq) {
            self.dup_segs += 1;
            self.dsack_extend(seq);
            immediate = true;
        } else if seq == self.rcv_nxt {
            immediate |= self.take_in_order(now, seg);
        } else {
            if seg.payload_bytes < self.cfg.mss {
                self.ooo_short = Some((seq, seg.payload_bytes));
            }
            self.insert_ooo(seq);
            if self.cfg.autotune {
                self.autotune_ooo(seg);
            }
            immediate = true;
        }
        self.unacked_segs += 1;
        if self.quickacks_left > 0 {
            self.quickacks_left -= 1;
            immediate = true;
        }
        if !self.cfg.delayed_ack {
            immediate = true;
        } else if self.unacked_segs >= 2 && !immediate && last {
            // Every second segment; before the Google BBRv2 slides' fix only if the window offered
            // now is not smaller than the one offered last (Linux `__tcp_select_window() >=
            // rcv_wnd`).
            let wnd_now = if self.rwnd_unlimited {
                u64::MAX
            } else {
                self.window_bytes() / self.cfg.mss as u64
            };
            if self.cfg.faster_acks || wnd_now >= self.last_wnd_segs {
                immediate = true;
            } else {
                self.acks_withheld += 1;
            }
        }
        if !last {
            self.skb_wants_ack |= immediate;
            return None;
        }
        if std::mem::take(&mut self.skb_wants_ack) {
            immediate = true;
        }
        if immediate {
            self.delack_deadline = None;
            return Some(self.make_ack(now));
        }
        if self.delack_deadline.is_none() {
            self.delack_deadline = Some(now + DELACK_NS);
        }
        None
    }

    /// The segment at rcv_nxt: deliver it and any out-of-order run it makes contiguous, let the
    /// application read, and say whether that calls for an immediate ACK (a hole filled, holes
    /// left, a message answered, a window to open).
    #[inline(always)]
    fn take_in_order(&mut self, now: Nanos, seg: &Packet) -> bool {
        let mut immediate = false;
        let before = self.delivered_bytes;
        self.rcv_nxt += 1;
        self.delivered_bytes += seg.payload_bytes as u64;
        // Pull in any out-of-order run that is now contiguous.
        if let Some((&s, &e)) = if self.ooo.is_empty() { None } else { self.ooo.first_key_value() }
        {
            if s == self.rcv_nxt {
                self.ooo.pop_first();
                self.ooo_segs -= e - s;
                self.delivered_bytes += (e - s) * self.cfg.mss as u64;
                if let Some((q, b)) = self.ooo_short {
                    if q >= s && q < e {
                        self.delivered_bytes -= (self.cfg.mss - b) as u64;
                        self.ooo_short = None;
                    }
                }
                self.rcv_nxt = e;
                immediate = true; // a hole was filled
            }
        }
        if !self.ooo.is_empty() {
            immediate = true; // still holes: keep the sender informed
        }
        match self.cfg.app_read_delay_ns {
            Some(d) => {
                self.unread_bytes += self.delivered_bytes - before;
                if self.read_at.is_none() {
                    self.read_at = Some(now + d);
                }
            }
            None => {
                // Read at once: a completed message is answered (and ACKed) now.
                if self.msgs_complete() > self.msgs_answered {
                    self.msgs_answered = self.msgs_complete();
                    immediate = true;
                }
            }
        }
        if self.cfg.autotune {
            immediate |= self.autotune_in_order(now, seg);
        }
        if self.rwnd_override_bytes.is_some() && self.last_rwnd_end != 0 {
            // Linux tcp_cleanup_rbuf: the application has read the data; if the window that
            // can now be offered is at least twice what is left of the one advertised (and
            // that is at most half the largest window), ACK now to open it. With the small
            // windows of a receiver-side controller this ACKs every segment.
            let left = self.last_rwnd_end.saturating_sub(self.rcv_nxt);
            let new = self.window_bytes() / self.cfg.mss as u64;
            // (window_clamp is the override itself, so Linux's `2·left ≤ clamp` is implied.)
            if new >= 2 * left {
                immediate = true;
            }
        }
        immediate
    }

    /// Autotuning's share of an in-order segment (`rcv_space.rs`): the receiver's RTT from its
    /// timestamp echo, the window's growth (an immediate ACK when it grew), the application's
    /// read (DRS) and, as Linux `tcp_cleanup_rbuf` after it, an immediate ACK when the window
    /// that can now be offered is at least twice what is left of the advertised one.
    #[inline(never)]
    fn autotune_in_order(&mut self, now: Nanos, seg: &Packet) -> bool {
        let mss = self.cfg.mss;
        let drained = self.unread_bytes == 0;
        self.rcv_space.rtt_sample(now, seg.ack, seg.payload_bytes >= mss, drained);
        let held = self.held_bytes();
        let mut immediate = self.rcv_space.grow_window(seg.payload_bytes, mss, held);
        if self.cfg.app_read_delay_ns.is_none() {
            let span = self.ooo_span_bytes();
            self.rcv_space.on_read(now, self.delivered_bytes, span);
            let left = self.last_rwnd_end.saturating_sub(self.rcv_nxt) * mss as u64;
            if 2 * left <= self.rcv_space.window_clamp_bytes
                && self.rcv_space.window_bytes(held) >= 2 * left.max(1)
            {
                immediate = true;
            }
        }
        immediate
    }

    /// Out-of-order data with autotuning (Linux `tcp_data_queue_ofo`): the window grows as for
    /// in-order data, and the buffer makes room for what the out-of-order data spans.
    #[cold]
    fn autotune_ooo(&mut self, seg: &Packet) {
        let held = self.held_bytes();
        self.rcv_space.grow_window(seg.payload_bytes, self.cfg.mss, held);
        let span = self.ooo_span_bytes();
        self.rcv_space.on_ooo(span);
    }
}
