//! The sending half of a connection: its public API and the per-packet paths.
//!
//! A [`Sender`] composes the parts of the other modules, each owning one job:
//!
//! ```text
//!   Sender
//!   ├─ tp: TcpCc          what the congestion-control algorithm sees (Linux tcp_sock fields)
//!   ├─ cc: Cc             the algorithm
//!   ├─ stream             what the application has written            (stream.rs)
//!   ├─ sb: Scoreboard     per-segment tags, in-flight list, lost queue (scoreboard.rs)
//!   ├─ rtt                SRTT/RTTVAR/RTO/back-off                     (rtt.rs)
//!   ├─ rack, rec          RACK, TLP, recovery, PRR, ECN, undo          (recovery.rs)
//!   ├─ pacer              EDT pacing, TSO bursts                       (pacing.rs)
//!   ├─ timers             RTO, TLP and reordering deadlines            (timers.rs)
//!   └─ stats, rtt_hist    results                                      (stats.rs)
//! ```
//!
//! The per-packet paths, in Linux's order:
//! - `poll_transmit` (Linux `tcp_write_xmit` + `tcp_xmit_retransmit_queue`): a pending loss
//!   probe first (no cwnd or pacing check), then cwnd, the pacer, retransmissions before new
//!   data, the receive window and the send buffer.
//! - `on_ack` (Linux `tcp_ack`; in ack.rs): SACK tagging, cumulative ACK, ECN echo, RTT sample,
//!   RACK, the recovery state machine, the rate sample, then the algorithm (`cong_control`, or
//!   PRR / `cong_avoid` and the default pacing rate), then the loss-probe timer.
//! - `on_timeout`: a due loss probe wins over the RTO (RFC 8985 §7.3), then the RTO, then
//!   RACK's reordering timer.

use crate::pacing::Pacer;
use crate::recovery::{Probe, Rack, Recovery, Reordering};
use crate::rtt::RttEstimator;
use crate::scoreboard::{Scoreboard, F_RETRANS, F_SACKED};
use crate::stream::SendStream;
use crate::timers::Timers;
use crate::{
    Ecn, EcnMode, Packet, RttHistogram, SenderStats, DEFAULT_MSS_BYTES, ETHERNET_OVERHEAD_BYTES,
    TCP_IP_HEADER_BYTES,
};
use cc::rate;
use cc::{CaState, Cc, CwndEvent, Nanos, TcpCc, NSEC_PER_MSEC};

/// Sender configuration.
#[derive(Clone, Debug)]
pub struct SenderConfig {
    pub mss: u32,
    pub initial_cwnd: u32,
    /// Payload bytes to send; None = unlimited (bulk).
    pub total_bytes: Option<u64>,
    /// None: pace if the algorithm asks for it (BBR); Some(b) forces pacing on or off.
    pub pacing: Option<bool>,
    /// SO_MAX_PACING_RATE, bytes/s.
    pub max_pacing_rate_bytes_per_s: Option<u64>,
    /// Limit on unacknowledged + unsent bytes held by the socket (None = unlimited).
    pub sndbuf_bytes: Option<u64>,
    /// TSO-style bursts.
    pub tso: bool,
    /// Linux's TSO deferral (`tcp_tso_should_defer`) for unpaced senders: new data waits for a
    /// fuller offload frame (see `Sender::tso_defer`); false: send whatever the windows allow.
    pub tso_defer: bool,
    pub min_rto_ns: Nanos,
    /// ECN: off, or on with data sent as ECT(0) (classic, RFC 3168) or ECT(1) (L4S, RFC 9331).
    /// An algorithm that needs ECN (DCTCP) turns it on whatever this says, with ECT(0) unless
    /// ECT(1) is asked for.
    pub ecn: EcnMode,
    /// BBRv2/v3's min_rtt-based TSO autosizing (see `TcpCc::tso_minrtt_autosize`).
    pub tso_minrtt_autosize: bool,
    /// BBRv2/v3's fast path (see `TcpCc::fast_path`).
    pub fast_path: bool,
    /// The application writes the stream piece by piece with [`Sender::write`] (nothing is
    /// written at the start, and the connection never completes); false: `total_bytes` or bulk.
    pub app_writes: bool,
    /// The qdisc below paces (Linux `fq`): the sender stamps each burst with its earliest
    /// departure time (`Packet::ts_ns`, EDT) from the pacing rate, whatever the algorithm
    /// asks, and hands it down at once (Linux: `sk_pacing_status` is `SK_PACING_FQ`, so
    /// `tcp_needs_internal_pacing()` is false). False: it paces itself if it paces.
    pub paced_by_qdisc: bool,
}

impl Default for SenderConfig {
    fn default() -> Self {
        SenderConfig {
            mss: DEFAULT_MSS_BYTES,
            initial_cwnd: 10,
            total_bytes: None,
            pacing: None,
            max_pacing_rate_bytes_per_s: None,
            sndbuf_bytes: None,
            tso: true,
            tso_defer: true,
            min_rto_ns: 200 * NSEC_PER_MSEC,
            ecn: EcnMode::Off,
            tso_minrtt_autosize: true,
            fast_path: true,
            app_writes: false,
            paced_by_qdisc: false,
        }
    }
}

/// The sending half of a connection.
pub struct Sender {
    pub cfg: SenderConfig,
    /// The flow id written into every packet sent (the simulator's flow index). Written when
    /// the packet is built: patching it into a packet just before the packet is copied whole
    /// stalls the copy (a narrow store cannot be forwarded to wide loads).
    pub flow_id: u32,
    pub tp: TcpCc,
    pub cc: Cc,
    pub(crate) stream: SendStream,
    pub(crate) sb: Scoreboard,
    pub(crate) rtt: RttEstimator,
    pub(crate) rack: Rack,
    pub(crate) reo: Reordering,
    pub(crate) rec: Recovery,
    pub(crate) pacer: Pacer,
    pub(crate) timers: Timers,
    /// Receiver window right edge (segments).
    pub(crate) rwnd_end: u64,
    /// RFC 7323 TS.Recent: the TSval of the latest ACK (`Packet::seq`), echoed in every data
    /// segment (`Packet::ack`) for the receiver's RTT measurement.
    pub(crate) ts_recent_ns: Nanos,
    /// End of the current cwnd-usage round (Linux tp->cwnd_usage_seq).
    cwnd_usage_seq: u64,
    /// Stop writing new data at this time (stop_ns); None = never.
    pub stop_ns: Option<Nanos>,
    /// Time when the last byte was acknowledged (transfer complete).
    pub completed_ns: Option<Nanos>,
    pub stats: SenderStats,
    /// Record per-ACK RTT samples into this histogram.
    pub rtt_hist: RttHistogram,
    started: bool,
}

impl Sender {
    pub fn new(cfg: SenderConfig, cc: Cc) -> Sender {
        let mut tp = TcpCc::new(cfg.mss, cfg.initial_cwnd);
        tp.ecn_ok = cfg.ecn != EcnMode::Off;
        tp.tso_minrtt_autosize = cfg.tso_minrtt_autosize;
        tp.fast_path = cfg.fast_path;
        if let Some(r) = cfg.max_pacing_rate_bytes_per_s {
            tp.max_pacing_rate_bytes_per_s = r;
        }
        Sender {
            flow_id: 0,
            stream: SendStream::new(cfg.mss, cfg.total_bytes, cfg.app_writes),
            rtt: RttEstimator::new(cfg.min_rto_ns),
            cfg,
            tp,
            cc,
            sb: Scoreboard::new(),
            rack: Rack::default(),
            reo: Reordering::default(),
            rec: Recovery::default(),
            pacer: Pacer::default(),
            timers: Timers::default(),
            rwnd_end: u64::MAX,
            ts_recent_ns: 0,
            cwnd_usage_seq: 0,
            stop_ns: None,
            completed_ns: None,
            stats: SenderStats::default(),
            rtt_hist: RttHistogram::new(),
            started: false,
        }
    }

    /// Start the connection at `now` (the handshake is not modelled: the first RTT sample comes
    /// from the first data ACK, as with TCP Fast Open; RTO starts at 1 s as in Linux).
    pub fn start(&mut self, now: Nanos) {
        self.tp.now_ns = now;
        self.cc.init(&mut self.tp);
        if let Some(p) = self.cfg.pacing {
            self.tp.pacing_enabled = p;
        }
        if self.tp.pacing_rate_bytes_per_s == 0 {
            self.update_default_pacing_rate();
        }
        self.pacer.next_send_ns = now;
        self.started = true;
    }

    /// The receive window of the handshake (SYN-ACK), as a right edge in segments: limits the
    /// first flight before any ACK has arrived (u64::MAX = unlimited, the default).
    pub fn set_initial_rwnd_end(&mut self, rwnd_end: u64) {
        if self.sb.snd_nxt == 0 {
            self.rwnd_end = rwnd_end;
        }
    }

    /// Seed the RTT estimator with the handshake's measurement, as Linux does from the SYN-ACK
    /// (tcp_synack_rtt_meas → tcp_ack_update_rtt): srtt, RTO and min_rtt start from the path's
    /// RTT rather than from nothing. Call before `start`. Without it the first RTO is the 1 s
    /// initial value, which fires spuriously on paths of ≥ 1 s RTT, and BBR's initial pacing rate
    /// assumes a 1 ms RTT.
    pub fn set_handshake_rtt(&mut self, now: Nanos, rtt_ns: Nanos) {
        self.rtt.on_sample(&mut self.tp, now, rtt_ns);
    }

    pub fn is_started(&self) -> bool {
        self.started
    }

    /// First unacknowledged segment.
    pub fn snd_una(&self) -> u64 {
        self.sb.snd_una
    }

    /// Next new segment to send.
    pub fn snd_nxt(&self) -> u64 {
        self.sb.snd_nxt
    }

    /// Free the scoreboard's memory once the transfer is complete and idle (the simulator keeps
    /// finished short connections around for their statistics; thousands of them add up).
    pub fn release_buffers(&mut self) {
        self.sb.release_buffers();
    }

    /// Data is waiting to be (re)sent.
    #[inline]
    fn has_data_to_send(&self) -> bool {
        self.has_unsent() || self.tp.lost_out > self.tp.retrans_out
    }

    /// Congestion window allowance in segments right now.
    #[inline]
    fn cwnd_allows(&self) -> bool {
        self.tp.packets_in_flight() < self.tp.snd_cwnd
    }

    /// The next packet to send now, if the window, the pacer and the data allow one.
    pub fn poll_transmit(&mut self, now: Nanos) -> Option<Packet> {
        if !self.started {
            return None;
        }
        self.tp.now_ns = now;
        self.check_stop(now);
        if let Some(probe) = self.rec.pending_probe.take() {
            if let Some(p) = self.transmit_probe(now, probe) {
                return Some(p);
            }
        }
        if !self.has_data_to_send() {
            if self.stream.write_end != u64::MAX {
                rate::check_app_limited(
                    &mut self.tp,
                    self.stream.write_end.saturating_sub(self.sb.snd_nxt),
                );
            }
            self.cwnd_validate(false);
            return None;
        }
        if !self.cwnd_allows() {
            self.cwnd_validate(true);
            return None;
        }
        // Pacing: a new burst may start once its earliest departure time has come.
        if !self.pacer_allows(now) {
            self.cwnd_validate(false);
            return None;
        }
        // Paced by the qdisc, the segment's send time is its burst's departure time (EDT), as
        // Linux's `skb_mstamp_ns`: its RTT and delivery-rate samples start when it leaves.
        let sent_ns = if self.cfg.paced_by_qdisc { self.pacer.burst_edt_ns } else { now };
        // Retransmissions first (Linux tcp_xmit_retransmit_queue runs before new data).
        let (seq, retrans) = match self.sb.next_lost() {
            Some(s) => {
                self.transmit_retrans(sent_ns, s);
                self.count_undo_retrans();
                // Linux tcp_xmit_retransmit_queue: TCPSlowStartRetrans in Loss, else
                // TCPFastRetrans.
                if self.tp.ca_state == CaState::Loss {
                    self.stats.retrans_rto += 1;
                } else {
                    self.stats.retrans_fast += 1;
                }
                (s, true)
            }
            None => {
                if !self.has_unsent() {
                    if self.stream.write_end != u64::MAX {
                        rate::check_app_limited(&mut self.tp, 0);
                    }
                    return None;
                }
                // Receive window and send buffer (Linux tcp_snd_wnd_test, sk_stream_memory_free).
                if self.sb.snd_nxt >= self.rwnd_end {
                    self.stats.rwnd_limited = true;
                    self.tp.rwnd_limited = true;
                    self.cwnd_validate(false);
                    return None;
                }
                if let Some(sndbuf) = self.cfg.sndbuf_bytes {
                    if (self.sb.snd_nxt + 1 - self.sb.snd_una) * self.tp.mss as u64 > sndbuf {
                        self.stats.sndbuf_limited = true;
                        self.cwnd_validate(false);
                        return None;
                    }
                }
                self.stats.rwnd_limited = false;
                self.stats.sndbuf_limited = false;
                self.tp.rwnd_limited = false;
                if let Some(cwnd_limited) = self.tso_defer(now) {
                    self.cwnd_validate(cwnd_limited);
                    return None;
                }
                (self.transmit_new(sent_ns), false)
            }
        };
        self.on_paced_send(now, self.seg_payload(seq));
        if self.tp.packets_in_flight() >= self.tp.snd_cwnd {
            self.cwnd_validate(true);
        }
        // The packet is built last, where it is returned (not built, then copied: 88 bytes).
        // Paced by the qdisc, it carries its departure time (EDT) for the qdisc.
        Some(self.make_data(seq, sent_ns, retrans))
    }

    /// Linux tcp_cwnd_validate: `is_cwnd_limited` latches for a round (until snd_una passes
    /// `cwnd_usage_seq`); `max_packets_out` tracks the peak flight in that round.
    fn cwnd_validate(&mut self, is_cwnd_limited: bool) {
        if self.sb.snd_una >= self.cwnd_usage_seq
            || is_cwnd_limited
            || (!self.tp.is_cwnd_limited && self.tp.packets_out > self.tp.max_packets_out)
        {
            self.tp.is_cwnd_limited = is_cwnd_limited;
            self.tp.max_packets_out = self.tp.packets_out;
            self.cwnd_usage_seq = self.sb.snd_nxt;
        }
    }

    #[inline]
    fn make_data(&self, seq: u64, now: Nanos, retrans: bool) -> Packet {
        let payload = self.seg_payload(seq);
        let mut p = Packet::empty(self.flow_id);
        p.is_data = true;
        p.seq = seq;
        p.payload_bytes = payload;
        p.wire_bytes = payload + TCP_IP_HEADER_BYTES + ETHERNET_OVERHEAD_BYTES;
        p.ts_ns = now;
        p.ack = self.ts_recent_ns;
        p.is_retrans = retrans;
        // The codepoint the flow asked for; ECT(0) when the algorithm turned ECN on itself.
        p.ecn = match (self.tp.ecn_ok, self.cfg.ecn) {
            (false, _) => Ecn::NotEct,
            (true, EcnMode::Ect1) => Ecn::Ect1,
            (true, _) => Ecn::Ect0,
        };
        p
    }

    /// Send new data (`snd_nxt`): the scoreboard, the counters and the timers; returns its
    /// number, for `make_data`.
    fn transmit_new(&mut self, now: Nanos) -> u64 {
        let seq = self.sb.snd_nxt;
        let first_in_flight = self.tp.packets_out == 0;
        if first_in_flight {
            self.cc.cwnd_event(&mut self.tp, CwndEvent::TxStart);
        }
        self.tp.packets_out += 1;
        let rs = rate::on_packet_sent(&mut self.tp, now, seq, false, first_in_flight);
        self.sb.on_send_new(now, rs);
        self.after_transmit(now);
        seq
    }

    /// Resend segment `seq` (the scoreboard, the counters and the timers), for `make_data`.
    fn transmit_retrans(&mut self, now: Nanos, seq: u64) {
        self.sb.on_retransmit(now, seq);
        let first_in_flight = self.tp.packets_in_flight() == 0;
        self.tp.retrans_out += 1;
        self.tp.total_retrans += 1;
        self.stats.retransmits += 1;
        if self.rec.retrans_stamp_ns == 0 {
            self.rec.retrans_stamp_ns = now;
        }
        let rs = rate::on_packet_sent(&mut self.tp, now, seq, true, first_in_flight);
        if seq == self.sb.snd_una {
            // Linux tcp_xmit_retransmit_queue re-arms the RTO when it resends the head: the timer
            // guards the head's latest transmission, not the last cumulative ACK. Without this a
            // head retransmission still in flight triggers a spurious RTO and a go-back-N.
            self.timers.rto_at_ns = Some(now + self.rtt.backed_off_rto_ns());
        }
        self.sb.on_retransmitted(seq, rs);
        self.after_transmit(now);
    }

    fn after_transmit(&mut self, now: Nanos) {
        // Linux tp->lsndtime (CUBIC's idle detection) and the pacer's next departure time
        // (tcp_wstamp_ns, which BBR uses to count what will still be in the network then).
        self.tp.lsndtime_ns = now;
        if self.tp.ca_state == CaState::Cwr || self.tp.ca_state == CaState::Recovery {
            self.rec.prr_out += 1;
        }
        self.tp.data_segs_out += 1;
        self.stats.data_packets_sent += 1;
        if self.timers.rto_at_ns.is_none() {
            self.timers.rto_at_ns = Some(now + self.rtt.rto_ns);
        }
        self.schedule_tlp(now);
    }

    /// Send a pending probe: bypasses cwnd and pacing, as Linux tcp_send_loss_probe does.
    fn transmit_probe(&mut self, now: Nanos, probe: Probe) -> Option<Packet> {
        // Paced by the qdisc, a probe is stamped as Linux stamps every skb, at the later of now
        // and the next departure time (`tcp_wstamp_ns`): it queues behind the flow's segments.
        let now = if self.cfg.paced_by_qdisc { now.max(self.pacer.next_send_ns) } else { now };
        match probe {
            Probe::NewData if self.has_unsent() => {
                let seq = self.transmit_new(now);
                Some(self.make_data(seq, now, false))
            }
            Probe::Retrans(seq)
                if seq >= self.sb.snd_una
                    && seq < self.sb.snd_nxt
                    && self.sb.flags(seq) & (F_SACKED | F_RETRANS) == 0 =>
            {
                self.transmit_retrans(now, seq);
                self.stats.retrans_tlp += 1;
                Some(self.make_data(seq, now, true))
            }
            _ => None,
        }
    }

    /// Earliest time at which `on_timeout` or `poll_transmit` has something to do.
    pub fn next_timeout(&self) -> Option<Nanos> {
        match (self.next_timer_deadline(), self.next_send_time()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Earliest deadline of the loss-recovery timers (RTO, TLP, RACK reordering) and the
    /// application's stop time — what `on_timeout` handles. (An application that writes later,
    /// see [`Sender::write`], keeps its own timer.)
    pub fn next_timer_deadline(&self) -> Option<Nanos> {
        let mut t = self.timers.earliest();
        if let Some(stop) = self.stop_ns {
            if self.has_unsent() {
                t = Some(t.map_or(stop, |x| x.min(stop)));
            }
        }
        t
    }

    /// When the pacer will next let a packet go, if data and window are waiting for it — what
    /// `poll_transmit` needs. A driver that holds the sender back for another reason (TSQ, a
    /// paused NIC) must not spin on this; it polls again when that reason clears.
    pub fn next_send_time(&self) -> Option<Nanos> {
        if self.paced()
            && !self.cfg.paced_by_qdisc
            && self.pacer.burst_left_segs == 0
            && self.has_data_to_send()
            && self.cwnd_allows()
        {
            Some(self.pacer.next_send_ns)
        } else {
            None
        }
    }

    /// Fire whichever timers are due.
    pub fn on_timeout(&mut self, now: Nanos) {
        self.tp.now_ns = now;
        self.check_stop(now);
        // Linux arms either the loss-probe or the RTO timer, never both: a due probe goes first
        // and re-arms the RTO (RFC 8985 §7.3).
        let rto_at = self.timers.rto_at_ns;
        let tlp_due =
            self.timers.tlp_at_ns.is_some_and(|d| now >= d && rto_at.is_none_or(|r| d <= r));
        if tlp_due {
            self.timers.tlp_at_ns = None;
            self.send_loss_probe();
            self.timers.rto_at_ns = Some(now + self.rtt.rto_ns);
            return;
        }
        if self.timers.rto_at_ns.is_some_and(|d| now >= d) {
            self.on_rto(now);
            return;
        }
        if self.timers.reo_at_ns.is_some_and(|d| now >= d) {
            self.timers.reo_at_ns = None;
            let lost = self.rack_detect_loss(now);
            if lost > 0 {
                self.enter_recovery_if_needed();
            }
        }
        if self.timers.tlp_at_ns.is_some_and(|d| now >= d) {
            self.timers.tlp_at_ns = None;
            self.send_loss_probe();
        }
    }

    /// Bytes in flight (payload) for sampling.
    pub fn inflight_bytes(&self) -> u64 {
        self.tp.packets_in_flight() as u64 * self.tp.mss as u64
    }

    /// A one-line dump of the sender's state, for debugging.
    pub fn debug_state(&self) -> String {
        format!(
            "una={} nxt={} write_end={} cwnd={} ssthresh={} out={} sacked={} lost={} retrans={} inflight={} ca={:?} \
             pacing={}B/s next_send={} burst_left={} rto={:?} tlp={:?} reo={:?} lost_queue={} probe={:?} rwnd_end={}",
            self.sb.snd_una,
            self.sb.snd_nxt,
            self.stream.write_end,
            self.tp.snd_cwnd,
            self.tp.snd_ssthresh,
            self.tp.packets_out,
            self.tp.sacked_out,
            self.tp.lost_out,
            self.tp.retrans_out,
            self.tp.packets_in_flight(),
            self.tp.ca_state,
            self.tp.pacing_rate_bytes_per_s,
            self.pacer.next_send_ns,
            self.pacer.burst_left_segs,
            self.timers.rto_at_ns,
            self.timers.tlp_at_ns,
            self.timers.reo_at_ns,
            self.sb.lost_queue_len(),
            self.rec.pending_probe,
            self.rwnd_end
        )
    }

    /// Retransmissions marked lost again (Linux TCPLostRetransmit), by RACK or by an RTO.
    pub fn lost_retransmits(&self) -> u64 {
        self.sb.lost_retrans
    }

    /// Check scoreboard invariants (tests and debug builds).
    pub fn check_invariants(&self) -> Result<(), String> {
        self.sb.check_invariants(&self.tp)
    }
}
