//! A sans-IO reliable byte-stream endpoint with TCP's sender and receiver behaviour as Linux has it.
//!
//! The endpoint is driven, never drives (as quinn-proto and smoltcp): the caller passes `now` and
//! packets in, and asks for packets and the next deadline:
//!
//! ```text
//!   Sender::on_ack(now, &ack)          Receiver::on_data(now, &seg) -> Option<ack>
//!   Sender::on_timeout(now)            Receiver::on_timeout(now)    -> Option<ack>
//!   Sender::poll_transmit(now) -> Option<Packet>
//!   Sender::next_timeout() / Receiver::next_timeout() -> Option<Nanos>
//! ```
//!
//! Sequence space: the stream is cut into segments of `mss` payload bytes (the last may be shorter)
//! and sequence numbers count segments, not bytes. Bulk and partition/aggregate workloads only ever
//! send full segments, so nothing is lost by this and every per-segment structure becomes an index.
//!
//! What is modelled, and where it comes from:
//! - SACK scoreboard (RFC 2018/6675) in a ring indexed by `seq - snd_una`; SACK blocks are applied
//!   only where they differ from the previous ACK's blocks (Linux `recv_sack_cache`), so each
//!   segment is tagged once: O(1) amortised per ACK, never a scan of the window.
//! - RACK-TLP loss detection (RFC 8985; Linux `tcp_recovery.c`) over a time-ordered list of
//!   in-flight segments (Linux `tsorted_sent_queue`), with Linux's `reo_wnd` rule (0 once in
//!   recovery or dupthresh SACKs when no reordering was seen, else min_rtt/4).
//! - Tail loss probe (RFC 8985 §7): PTO = 2·SRTT (+200 ms with one segment out), one probe.
//! - RTO (RFC 6298; Linux `__tcp_set_rto`): RTO = SRTT + max(4·RTTVAR, rto_min), exponential
//!   backoff; entering Loss marks everything outstanding lost (Linux `tcp_enter_loss`).
//! - Recovery state machine of Linux `tcp_fastretrans_alert` (Open/Disorder/CWR/Recovery/Loss), PRR
//!   (RFC 9937; Linux `tcp_cwnd_reduction` with RecoverFS = prior_cwnd) for algorithms without
//!   `cong_control`, and Eifel undo with timestamps (RFC 3522; Linux `tcp_packet_delayed`).
//! - Delivery-rate samples (cc::rate, Linux `tcp_rate.c`) handed to `cong_control` algorithms.
//! - Pacing with earliest-departure-time semantics (Linux `tcp_update_skb_after_send`), TSO-style
//!   bursts (Linux `tcp_tso_autosize`: pacing_rate·1 ms, 2 segments to 64 KB, or the algorithm's
//!   `tso_segs`), receive window and send-buffer limits.
//! - Receiver: delayed ACKs (every 2 full segments, 40 ms timer, quick-ACK for the first 16
//!   segments, immediate ACK on out-of-order data or a filled hole), SACK blocks in recency order,
//!   RFC 7323 timestamp echo, cumulative CE counts (accurate-ECN style echo); optionally DCTCP's
//!   immediate ACK on a CE-state change (`ReceiverConfig::ce_state_ack`).
//! - ECN for window-based algorithms (RFC 3168 §6.1.2, RFC 8257 §3.3; Linux `tcp_enter_cwr`): an
//!   ACK carrying newly CE-marked segments in Open/Disorder enters CWR with the algorithm's
//!   ssthresh and PRR down to it; CWR lasts until data sent after the reduction is acknowledged,
//!   so there is at most one reduction per window and marks on the reduced window are not
//!   reacted to again.

use cc::rate::{self, PacketRateState, RateSample};
use cc::{AckFlags, CaState, Cc, CwndEvent, Nanos, TcpCc, NSEC_PER_MSEC, NSEC_PER_SEC};
use std::collections::VecDeque;

pub mod receiver;
pub use receiver::Receiver;

/// Bytes of IPv4 + TCP header with the timestamp option on every segment.
pub const TCP_IP_HEADER_BYTES: u32 = 52;
/// Ethernet framing on the wire: 14 header + 4 FCS + 8 preamble + 12 inter-frame gap. With a
/// 1448-byte MSS a data packet occupies 1538 bytes of wire time, so 1 GbE carries at most
/// 941.5 Mbit/s of goodput — the ceiling iperf and seed 000 report.
pub const ETHERNET_OVERHEAD_BYTES: u32 = 38;
/// Maximum SACK blocks per ACK with timestamps on (40 bytes of options: 10 TS + 2 + 3·8 + pad).
pub const MAX_SACK_BLOCKS: usize = 3;
/// Linux `TCP_RTO_MAX`.
pub const RTO_MAX_NS: Nanos = 120 * NSEC_PER_SEC;
/// Linux `TCP_TIMEOUT_INIT` (RFC 6298 initial RTO).
pub const RTO_INIT_NS: Nanos = NSEC_PER_SEC;
/// Largest TSO/GSO burst (Linux `GSO_LEGACY_MAX_SIZE` 64 KB).
pub const TSO_MAX_BYTES: u64 = 65536;
/// Linux `sk_pacing_shift` = 10: TSO bursts and TSQ budgets hold about 1 ms of the pacing rate.
pub const PACING_SHIFT: u32 = 10;
/// Linux `TCP_RTO_MIN` — also the extra PTO wait when a single segment is outstanding.
pub const TLP_SINGLE_SEG_EXTRA_NS: Nanos = 200 * NSEC_PER_MSEC;
/// Linux `TCP_TIMEOUT_MIN` (2 jiffies) added to PTO otherwise.
pub const TLP_EXTRA_NS: Nanos = 2 * NSEC_PER_MSEC;
/// Dupthresh (`tp->reordering` initial value, RFC 6675 DupThresh).
pub const DUPTHRESH: u32 = 3;
/// Window of the transport's own min_rtt filter (Linux `sysctl_tcp_min_rtt_wlen` = 300 s).
pub const MIN_RTT_WLEN_NS: Nanos = 300 * NSEC_PER_SEC;

/// A packet on the wire. Data and ACKs share one plain-old-data struct so the simulator can keep
/// them in flat queues without boxing.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Packet {
    /// Flow (connection) index.
    pub flow: u32,
    /// Hop index along the flow's route (owned by the simulator).
    pub hop: u16,
    /// Data (true) or pure ACK (false).
    pub is_data: bool,
    /// Wire size in bytes (payload + TCP/IP + Ethernet framing).
    pub wire_bytes: u32,
    /// Data: segment index. ACK: unused.
    pub seq: u64,
    /// Data: payload bytes.
    pub payload_bytes: u32,
    /// Data: TSval (transmission time). ACK: TSecr (echoed TSval, RFC 7323 TS.Recent).
    pub ts_ns: Nanos,
    /// Data: this transmission is a retransmission.
    pub is_retrans: bool,
    /// ECN-capable transport (ECT(0)).
    pub ect: bool,
    /// Congestion Experienced mark (set by a queue).
    pub ce: bool,
    /// ACK: next expected segment (cumulative).
    pub ack: u64,
    /// ACK: SACK blocks [start, end) in segments, most recent first.
    pub sack: [(u64, u64); MAX_SACK_BLOCKS],
    pub n_sack: u8,
    /// ACK: right edge of the receive window, in segments (ack + rwnd / mss).
    pub rwnd_end: u64,
    /// ACK: cumulative count of CE-marked data segments received.
    pub ce_count: u64,
    /// ACK: the receiver delayed this ACK (timer) rather than sending it at once.
    pub delayed: bool,
}

impl Packet {
    pub fn empty(flow: u32) -> Packet {
        Packet {
            flow,
            hop: 0,
            is_data: false,
            wire_bytes: 0,
            seq: 0,
            payload_bytes: 0,
            ts_ns: 0,
            is_retrans: false,
            ect: false,
            ce: false,
            ack: 0,
            sack: [(0, 0); MAX_SACK_BLOCKS],
            n_sack: 0,
            rwnd_end: u64::MAX,
            ce_count: 0,
            delayed: false,
        }
    }
}

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
    pub min_rto_ns: Nanos,
    pub ecn: bool,
    /// BBRv2/v3's min_rtt-based TSO autosizing (see `TcpCc::tso_minrtt_autosize`).
    pub tso_minrtt_autosize: bool,
    /// Request/response workload instead of a byte stream (see [`RpcConfig`]); None = bulk or
    /// `total_bytes`.
    pub rpc: Option<RpcConfig>,
}

/// An RPC-style application on the sender: write one message of `segs` full segments, wait until
/// all of it is acknowledged, wait `gap_ns`, write the next, and so on. Each message's latency
/// (write to full acknowledgement) goes into [`Sender::rpc_hist`]. The response is not modelled
/// as data: the receiver's application answers a complete message at once, and the answer
/// carries the ACK (see `ReceiverConfig::msg_segs`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RpcConfig {
    pub segs: u64,
    pub gap_ns: Nanos,
}

impl Default for SenderConfig {
    fn default() -> Self {
        SenderConfig {
            mss: 1448,
            initial_cwnd: 10,
            total_bytes: None,
            pacing: None,
            max_pacing_rate_bytes_per_s: None,
            sndbuf_bytes: None,
            tso: true,
            min_rto_ns: 200 * NSEC_PER_MSEC,
            ecn: false,
            tso_minrtt_autosize: true,
            rpc: None,
        }
    }
}

// Scoreboard flags per segment.
const F_SACKED: u8 = 1;
const F_LOST: u8 = 2;
/// A retransmission of this segment is believed to be in flight (Linux TCPCB_SACKED_RETRANS).
const F_RETRANS: u8 = 4;
/// Ever retransmitted (Karn: no RTT sample from it).
const F_EVER_RETRANS: u8 = 8;
/// Linked in the time-sorted in-flight list.
const F_LINKED: u8 = 16;

const NIL: u64 = u64::MAX;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Probe {
    NewData,
    Retrans(u64),
}

#[derive(Clone, Copy, Debug)]
struct Seg {
    rate: PacketRateState,
    /// Time of the latest transmission.
    xmit_ns: Nanos,
    flags: u8,
    /// Time-sorted list links (segment indices).
    prev: u64,
    next: u64,
}

/// Per-flow counters kept by the sender for results.
#[derive(Clone, Debug, Default)]
pub struct SenderStats {
    pub data_packets_sent: u64,
    pub retransmits: u64,
    pub tlp_probes: u64,
    pub rto_count: u64,
    pub spurious_undos: u64,
    pub recoveries: u64,
    pub rtt_sum_ns: u128,
    pub rtt_count: u64,
    /// Latest valid delivery-rate sample, bytes/s.
    pub last_delivery_rate_bytes_per_s: u64,
    /// Sum and count of RTT samples since the metrics collector last read them.
    pub interval_rtt_sum_ns: u128,
    pub interval_rtt_count: u64,
    /// Why sending stopped the last time `poll_transmit` returned None with data waiting.
    pub rwnd_limited: bool,
    pub sndbuf_limited: bool,
    /// Offload chunks ("TSO bursts") and the segments in them: segments handed to the NIC back to
    /// back at one instant, up to the chunk size the sizing rule allows then (`tso_segs`), count
    /// as one chunk — what Linux would build into one TSO/GSO skb. Loss probes are not counted.
    pub tso_bursts: u64,
    pub tso_burst_segs: u64,
    /// Sum over chunks of the chunk size the sizing rule allowed when the chunk started (the
    /// autosizing goal, which cwnd, TSQ or ACK clocking may cut short).
    pub tso_goal_segs: u64,
    /// Completed RPC messages and the sum of their latencies (RPC workload only).
    pub rpc_count: u64,
    pub rpc_sum_ns: u128,
}

/// The sending half of a connection.
pub struct Sender {
    pub cfg: SenderConfig,
    pub tp: TcpCc,
    pub cc: Cc,
    /// First unacknowledged segment.
    pub snd_una: u64,
    /// Next new segment to send.
    pub snd_nxt: u64,
    /// End of the data the application has written (segments); u64::MAX for bulk.
    write_end: u64,
    /// Payload bytes of the last segment when total_bytes is set.
    last_seg_bytes: u32,
    /// Scoreboard for [snd_una, snd_nxt).
    segs: VecDeque<Seg>,
    /// Time-sorted in-flight list (oldest transmission first).
    ts_head: u64,
    ts_tail: u64,
    /// Lost segments awaiting retransmission, in marking order (entries may be stale).
    lost_queue: VecDeque<u64>,
    /// SACK blocks of the last ACK processed (Linux recv_sack_cache).
    sack_cache: [(u64, u64); MAX_SACK_BLOCKS],
    /// Receiver window right edge (segments).
    rwnd_end: u64,
    // RTT estimation (RFC 6298), ns.
    rttvar_ns: u64,
    rto_ns: u64,
    rto_backoff: u32,
    min_rtt_filter: cc::filter::WindowedFilter,
    // RACK state (RFC 8985 §6).
    rack_xmit_ns: Nanos,
    rack_seq: u64,
    rack_rtt_ns: u64,
    rack_valid: bool,
    reord_seen: bool,
    // Timers (absolute deadlines).
    rto_deadline: Option<Nanos>,
    tlp_deadline: Option<Nanos>,
    reo_deadline: Option<Nanos>,
    tlp_outstanding: bool,
    /// Earliest departure time of the next burst (pacing).
    next_send_ns: Nanos,
    /// Segments left in the current TSO burst.
    burst_left: u32,
    // Recovery.
    high_seq: u64,
    prior_ssthresh: u32,
    prr_delivered: u32,
    prr_out: u32,
    /// Time of the first retransmission of the current episode (Linux retrans_stamp); 0 = none.
    retrans_stamp: Nanos,
    undo_marker: bool,
    /// Cumulative CE count last seen from the receiver.
    ce_seen: u64,
    cwr_high_seq: u64,
    /// The ACK being processed carried newly CE-marked segments (ECE, Linux FLAG_ECE).
    ece_this_ack: bool,
    /// End of the current cwnd-usage round (Linux tp->cwnd_usage_seq).
    cwnd_usage_seq: u64,
    /// A tail loss probe waiting to go out (sent by poll_transmit regardless of cwnd and pacing).
    pending_probe: Option<Probe>,
    /// Stop writing new data at this time (stop_ns); None = never.
    pub stop_ns: Option<Nanos>,
    /// Time when the last byte was acknowledged (transfer complete).
    pub completed_ns: Option<Nanos>,
    pub stats: SenderStats,
    /// Record per-ACK RTT samples into this histogram.
    pub rtt_hist: RttHistogram,
    started: bool,
    /// Segments left in the current offload chunk and when it started (stats only).
    chunk_left: u32,
    chunk_ns: Nanos,
    /// RPC workload: when the current message was written, when the next one will be, and the
    /// end of the last message whose latency was recorded.
    rpc_issue_ns: Nanos,
    rpc_next_ns: Option<Nanos>,
    rpc_recorded_end: u64,
    /// Latency of every completed RPC message (RPC workload only).
    pub rpc_hist: RttHistogram,
}

impl Sender {
    pub fn new(cfg: SenderConfig, cc: Cc) -> Sender {
        let mut tp = TcpCc::new(cfg.mss, cfg.initial_cwnd);
        tp.ecn_ok = cfg.ecn;
        tp.tso_minrtt_autosize = cfg.tso_minrtt_autosize;
        if let Some(r) = cfg.max_pacing_rate_bytes_per_s {
            tp.max_pacing_rate_bytes_per_s = r;
        }
        let (write_end, last_seg_bytes) = match cfg.total_bytes {
            None if cfg.rpc.is_some() => (cfg.rpc.map_or(1, |r| r.segs.max(1)), cfg.mss),
            None => (u64::MAX, cfg.mss),
            Some(b) => {
                let n = b.div_ceil(cfg.mss as u64).max(1);
                let last = (b - (n - 1) * cfg.mss as u64) as u32;
                (n, last.max(1))
            }
        };
        Sender {
            cfg,
            tp,
            cc,
            snd_una: 0,
            snd_nxt: 0,
            write_end,
            last_seg_bytes,
            segs: VecDeque::with_capacity(1024),
            ts_head: NIL,
            ts_tail: NIL,
            lost_queue: VecDeque::new(),
            sack_cache: [(0, 0); MAX_SACK_BLOCKS],
            rwnd_end: u64::MAX,
            rttvar_ns: 0,
            rto_ns: RTO_INIT_NS,
            rto_backoff: 0,
            min_rtt_filter: cc::filter::WindowedFilter::new_min(),
            rack_xmit_ns: 0,
            rack_seq: 0,
            rack_rtt_ns: 0,
            rack_valid: false,
            reord_seen: false,
            rto_deadline: None,
            tlp_deadline: None,
            reo_deadline: None,
            tlp_outstanding: false,
            next_send_ns: 0,
            burst_left: 0,
            high_seq: 0,
            prior_ssthresh: 0,
            prr_delivered: 0,
            prr_out: 0,
            retrans_stamp: 0,
            undo_marker: false,
            ce_seen: 0,
            cwr_high_seq: 0,
            ece_this_ack: false,
            pending_probe: None,
            cwnd_usage_seq: 0,
            stop_ns: None,
            completed_ns: None,
            stats: SenderStats::default(),
            rtt_hist: RttHistogram::new(),
            started: false,
            chunk_left: 0,
            chunk_ns: 0,
            rpc_issue_ns: 0,
            rpc_next_ns: None,
            rpc_recorded_end: 0,
            rpc_hist: RttHistogram::new(),
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
        self.next_send_ns = now;
        self.rpc_issue_ns = now;
        self.started = true;
    }

    /// RPC workload: the current message is fully acknowledged; record its latency and write
    /// the next one now or after the gap.
    fn rpc_on_ack(&mut self, now: Nanos) {
        let Some(rpc) = self.cfg.rpc else { return };
        if self.snd_una < self.write_end || self.rpc_recorded_end >= self.write_end {
            return;
        }
        self.rpc_recorded_end = self.write_end;
        let lat = now - self.rpc_issue_ns;
        self.rpc_hist.record(lat);
        self.stats.rpc_count += 1;
        self.stats.rpc_sum_ns += lat as u128;
        if rpc.gap_ns == 0 {
            self.rpc_write(now);
        } else {
            self.rpc_next_ns = Some(now + rpc.gap_ns);
        }
    }

    /// RPC workload: the application writes its next message (unless it has stopped).
    fn rpc_write(&mut self, now: Nanos) {
        self.rpc_next_ns = None;
        if self.stop_ns.is_some_and(|s| now >= s) {
            return;
        }
        if let Some(rpc) = self.cfg.rpc {
            self.write_end += rpc.segs.max(1);
            self.rpc_issue_ns = now;
        }
    }

    /// The receive window of the handshake (SYN-ACK), as a right edge in segments: limits the
    /// first flight before any ACK has arrived (u64::MAX = unlimited, the default).
    pub fn set_initial_rwnd_end(&mut self, rwnd_end: u64) {
        if self.snd_nxt == 0 {
            self.rwnd_end = rwnd_end;
        }
    }

    /// Seed the RTT estimator with the handshake's measurement, as Linux does from the SYN-ACK
    /// (tcp_synack_rtt_meas → tcp_ack_update_rtt): srtt, RTO and min_rtt start from the path's
    /// RTT rather than from nothing. Call before `start`. Without it the first RTO is the 1 s
    /// initial value, which fires spuriously on paths of ≥ 1 s RTT, and BBR's initial pacing rate
    /// assumes a 1 ms RTT.
    pub fn set_handshake_rtt(&mut self, now: Nanos, rtt_ns: Nanos) {
        self.rtt_sample(now, rtt_ns);
    }

    pub fn is_started(&self) -> bool {
        self.started
    }

    /// All data written has been acknowledged.
    pub fn is_done(&self) -> bool {
        self.snd_una >= self.write_end
    }

    /// Segment payload size for `seq`.
    #[inline]
    fn seg_payload(&self, seq: u64) -> u32 {
        if seq + 1 == self.write_end && self.cfg.total_bytes.is_some() {
            self.last_seg_bytes
        } else {
            self.cfg.mss
        }
    }

    /// Stop offering new data (application stop time). Outstanding data still completes.
    pub fn stop_writing(&mut self) {
        if self.write_end > self.snd_nxt {
            self.write_end = self.snd_nxt;
            if self.cfg.total_bytes.is_some() {
                self.last_seg_bytes = self.cfg.mss;
            }
        }
    }

    /// Free the scoreboard's memory once the transfer is complete and idle (the simulator keeps
    /// finished short connections around for their statistics; thousands of them add up).
    pub fn release_buffers(&mut self) {
        if self.segs.is_empty() {
            self.segs = VecDeque::new();
        }
        if self.lost_queue.is_empty() {
            self.lost_queue = VecDeque::new();
        }
    }

    /// Payload bytes acknowledged so far.
    pub fn bytes_acked(&self) -> u64 {
        if self.cfg.total_bytes.is_some() && self.snd_una >= self.write_end && self.write_end > 0 {
            (self.write_end - 1) * self.cfg.mss as u64 + self.last_seg_bytes as u64
        } else {
            self.snd_una * self.cfg.mss as u64
        }
    }

    #[inline]
    fn seg(&self, seq: u64) -> &Seg {
        &self.segs[(seq - self.snd_una) as usize]
    }
    #[inline]
    fn seg_mut(&mut self, seq: u64) -> &mut Seg {
        let i = (seq - self.snd_una) as usize;
        &mut self.segs[i]
    }

    // ---- time-sorted in-flight list (Linux tsorted_sent_queue) ----
    fn ts_unlink(&mut self, seq: u64) {
        let (prev, next, linked) = {
            let s = self.seg(seq);
            (s.prev, s.next, s.flags & F_LINKED != 0)
        };
        if !linked {
            return;
        }
        if prev != NIL {
            self.seg_mut(prev).next = next;
        } else {
            self.ts_head = next;
        }
        if next != NIL {
            self.seg_mut(next).prev = prev;
        } else {
            self.ts_tail = prev;
        }
        let s = self.seg_mut(seq);
        s.flags &= !F_LINKED;
        s.prev = NIL;
        s.next = NIL;
    }

    fn ts_push_tail(&mut self, seq: u64) {
        let tail = self.ts_tail;
        {
            let s = self.seg_mut(seq);
            s.prev = tail;
            s.next = NIL;
            s.flags |= F_LINKED;
        }
        if tail != NIL {
            self.seg_mut(tail).next = seq;
        } else {
            self.ts_head = seq;
        }
        self.ts_tail = seq;
    }

    // ---- RTT estimation ----
    fn rtt_sample(&mut self, now: Nanos, rtt_ns: u64) {
        let rtt_ns = rtt_ns.max(1);
        // RFC 6298 §2 (Linux tcp_rtt_estimator without the mdev_max refinements).
        if self.tp.srtt_ns == 0 {
            self.tp.srtt_ns = rtt_ns;
            self.rttvar_ns = rtt_ns / 2;
        } else {
            let err = rtt_ns.abs_diff(self.tp.srtt_ns);
            self.rttvar_ns = (3 * self.rttvar_ns + err) / 4;
            self.tp.srtt_ns = (7 * self.tp.srtt_ns + rtt_ns) / 8;
        }
        // Linux __tcp_set_rto: srtt + max(4·mdev, rto_min).
        self.rto_ns = (self.tp.srtt_ns + (4 * self.rttvar_ns).max(self.cfg.min_rto_ns)).min(RTO_MAX_NS);
        self.tp.min_rtt_ns = self.min_rtt_filter.update(MIN_RTT_WLEN_NS, now, rtt_ns);
    }

    fn record_rtt(&mut self, rtt_ns: u64) {
        self.stats.rtt_sum_ns += rtt_ns as u128;
        self.stats.rtt_count += 1;
        self.stats.interval_rtt_sum_ns += rtt_ns as u128;
        self.stats.interval_rtt_count += 1;
        self.rtt_hist.record(rtt_ns);
    }

    /// Linux `tcp_update_pacing_rate` for algorithms without their own pacing model:
    /// rate = mss·cwnd/srtt scaled by 200 % in slow start, 120 % otherwise.
    fn update_default_pacing_rate(&mut self) {
        let srtt = if self.tp.srtt_ns > 0 { self.tp.srtt_ns } else { NSEC_PER_MSEC };
        let ratio: u64 = if self.tp.snd_cwnd < self.tp.snd_ssthresh / 2 { 200 } else { 120 };
        let cwnd = self.tp.snd_cwnd.max(self.tp.packets_out) as u64;
        let rate = (self.tp.mss as u64 * cwnd) as u128 * ratio as u128 * NSEC_PER_SEC as u128 / (100 * srtt as u128);
        self.tp.pacing_rate_bytes_per_s = (rate as u64).min(self.tp.max_pacing_rate_bytes_per_s);
    }

    #[inline]
    fn pacing_rate(&self) -> u64 {
        self.tp.pacing_rate_bytes_per_s.min(self.tp.max_pacing_rate_bytes_per_s).max(1)
    }

    #[inline]
    fn paced(&self) -> bool {
        self.tp.pacing_enabled || self.cfg.max_pacing_rate_bytes_per_s.is_some()
    }

    /// Segments per TSO burst (Linux `tcp_tso_autosize` / the algorithm's `tso_segs`).
    fn tso_segs(&self) -> u32 {
        if !self.cfg.tso {
            return 1;
        }
        if let Some(n) = self.cc.tso_segs(&self.tp) {
            return n.max(1);
        }
        let bytes = (self.pacing_rate() >> PACING_SHIFT).min(TSO_MAX_BYTES);
        ((bytes / self.tp.mss as u64) as u32).clamp(2, (TSO_MAX_BYTES / self.tp.mss as u64) as u32)
    }

    /// Data is waiting to be (re)sent.
    fn has_data_to_send(&self) -> bool {
        self.snd_nxt < self.write_end || self.tp.lost_out > self.tp.retrans_out
    }

    /// Congestion window allowance in segments right now.
    fn cwnd_allows(&self) -> bool {
        self.tp.packets_in_flight() < self.tp.snd_cwnd
    }

    /// The next packet to send now, if the window, the pacer and the data allow one.
    pub fn poll_transmit(&mut self, now: Nanos) -> Option<Packet> {
        if !self.started {
            return None;
        }
        self.tp.now_ns = now;
        if let Some(stop) = self.stop_ns {
            if now >= stop {
                self.stop_writing();
            }
        }
        if let Some(probe) = self.pending_probe.take() {
            if let Some(p) = self.transmit_probe(now, probe) {
                return Some(p);
            }
        }
        if !self.has_data_to_send() {
            if self.write_end != u64::MAX {
                rate::check_app_limited(&mut self.tp, self.write_end.saturating_sub(self.snd_nxt));
            }
            self.cwnd_validate(false);
            return None;
        }
        if !self.cwnd_allows() {
            self.cwnd_validate(true);
            return None;
        }
        // Pacing: a new burst may start once its earliest departure time has come.
        if self.paced() && self.burst_left == 0 {
            if now < self.next_send_ns {
                self.cwnd_validate(false);
                return None;
            }
            self.burst_left = self.tso_segs();
        }
        // Retransmissions first (Linux tcp_xmit_retransmit_queue runs before new data).
        let seq = loop {
            match self.lost_queue.front().copied() {
                Some(s) if s >= self.snd_una && s < self.snd_nxt => {
                    let f = self.seg(s).flags;
                    if f & F_LOST != 0 && f & (F_RETRANS | F_SACKED) == 0 {
                        self.lost_queue.pop_front();
                        break Some(s);
                    }
                    self.lost_queue.pop_front();
                }
                Some(_) => {
                    self.lost_queue.pop_front();
                }
                None => break None,
            }
        };
        let pkt = match seq {
            Some(s) => self.transmit_retrans(now, s),
            None => {
                if self.snd_nxt >= self.write_end {
                    if self.write_end != u64::MAX {
                        rate::check_app_limited(&mut self.tp, 0);
                    }
                    return None;
                }
                // Receive window and send buffer (Linux tcp_snd_wnd_test, sk_stream_memory_free).
                if self.snd_nxt >= self.rwnd_end {
                    self.stats.rwnd_limited = true;
                    self.tp.rwnd_limited = true;
                    self.cwnd_validate(false);
                    return None;
                }
                if let Some(sndbuf) = self.cfg.sndbuf_bytes {
                    if (self.snd_nxt + 1 - self.snd_una) * self.tp.mss as u64 > sndbuf {
                        self.stats.sndbuf_limited = true;
                        self.cwnd_validate(false);
                        return None;
                    }
                }
                self.stats.rwnd_limited = false;
                self.stats.sndbuf_limited = false;
                self.tp.rwnd_limited = false;
                self.transmit_new(now)
            }
        };
        if self.chunk_left == 0 || now != self.chunk_ns {
            self.stats.tso_bursts += 1;
            self.chunk_left = self.tso_segs();
            self.stats.tso_goal_segs += self.chunk_left as u64;
            self.chunk_ns = now;
        }
        self.chunk_left -= 1;
        self.stats.tso_burst_segs += 1;
        if self.paced() {
            // EDT (Linux tcp_update_skb_after_send): each segment pushes the next departure by its
            // payload length at the pacing rate. Linux's internal pacer counts the write-queue
            // skb's length, i.e. payload only, and BBR's rates are payload rates too.
            let len_ns = pkt.payload_bytes as u128 * NSEC_PER_SEC as u128 / self.pacing_rate() as u128;
            self.next_send_ns = self.next_send_ns.max(now.saturating_sub(len_ns as u64)) + len_ns as u64;
            self.tp.wstamp_ns = self.next_send_ns;
            self.burst_left = self.burst_left.saturating_sub(1);
        }
        if self.tp.packets_in_flight() >= self.tp.snd_cwnd {
            self.cwnd_validate(true);
        }
        Some(pkt)
    }

    /// Linux tcp_cwnd_validate: `is_cwnd_limited` latches for a round (until snd_una passes
    /// `cwnd_usage_seq`); `max_packets_out` tracks the peak flight in that round.
    fn cwnd_validate(&mut self, is_cwnd_limited: bool) {
        if self.snd_una >= self.cwnd_usage_seq
            || is_cwnd_limited
            || (!self.tp.is_cwnd_limited && self.tp.packets_out > self.tp.max_packets_out)
        {
            self.tp.is_cwnd_limited = is_cwnd_limited;
            self.tp.max_packets_out = self.tp.packets_out;
            self.cwnd_usage_seq = self.snd_nxt;
        }
    }

    fn make_data(&self, seq: u64, now: Nanos, retrans: bool) -> Packet {
        let payload = self.seg_payload(seq);
        let mut p = Packet::empty(0);
        p.is_data = true;
        p.seq = seq;
        p.payload_bytes = payload;
        p.wire_bytes = payload + TCP_IP_HEADER_BYTES + ETHERNET_OVERHEAD_BYTES;
        p.ts_ns = now;
        p.is_retrans = retrans;
        p.ect = self.tp.ecn_ok;
        p
    }

    fn transmit_new(&mut self, now: Nanos) -> Packet {
        let seq = self.snd_nxt;
        let first_in_flight = self.tp.packets_out == 0;
        if first_in_flight {
            self.cc.cwnd_event(&mut self.tp, CwndEvent::TxStart);
        }
        self.snd_nxt += 1;
        self.tp.packets_out += 1;
        let rs = rate::on_packet_sent(&mut self.tp, now, seq, false, first_in_flight);
        self.segs.push_back(Seg { rate: rs, xmit_ns: now, flags: 0, prev: NIL, next: NIL });
        self.ts_push_tail(seq);
        self.after_transmit(now);
        self.make_data(seq, now, false)
    }

    fn transmit_retrans(&mut self, now: Nanos, seq: u64) -> Packet {
        self.ts_unlink(seq);
        let first_in_flight = self.tp.packets_in_flight() == 0;
        {
            let s = self.seg_mut(seq);
            s.flags |= F_RETRANS | F_EVER_RETRANS;
            s.xmit_ns = now;
        }
        self.tp.retrans_out += 1;
        self.tp.total_retrans += 1;
        self.stats.retransmits += 1;
        if self.retrans_stamp == 0 {
            self.retrans_stamp = now;
        }
        let rs = rate::on_packet_sent(&mut self.tp, now, seq, true, first_in_flight);
        self.seg_mut(seq).rate = rs;
        if seq == self.snd_una {
            // Linux tcp_xmit_retransmit_queue re-arms the RTO when it resends the head: the timer
            // guards the head's latest transmission, not the last cumulative ACK. Without this a
            // head retransmission still in flight triggers a spurious RTO and a go-back-N.
            self.rto_deadline = Some(now + self.current_rto());
        }
        self.ts_push_tail(seq);
        self.after_transmit(now);
        self.make_data(seq, now, true)
    }

    fn after_transmit(&mut self, now: Nanos) {
        // Linux tp->lsndtime (CUBIC's idle detection) and the pacer's next departure time
        // (tcp_wstamp_ns, which BBR uses to count what will still be in the network then).
        self.tp.lsndtime_ns = now;
        if self.tp.ca_state == CaState::Cwr || self.tp.ca_state == CaState::Recovery {
            self.prr_out += 1;
        }
        self.tp.data_segs_out += 1;
        self.stats.data_packets_sent += 1;
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + self.rto_ns);
        }
        self.schedule_tlp(now);
    }

    /// Arm the tail loss probe (RFC 8985 §7.2) when in Open state with data outstanding.
    fn schedule_tlp(&mut self, now: Nanos) {
        if self.tlp_outstanding || self.tp.ca_state != CaState::Open || self.tp.srtt_ns == 0 || self.tp.packets_out == 0 {
            self.tlp_deadline = None;
            return;
        }
        let extra = if self.tp.packets_out == 1 { TLP_SINGLE_SEG_EXTRA_NS } else { TLP_EXTRA_NS };
        let mut pto = now + 2 * self.tp.srtt_ns + extra;
        if let Some(rto) = self.rto_deadline {
            pto = pto.min(rto);
        }
        self.tlp_deadline = Some(pto);
    }

    /// Earliest time at which `on_timeout` or `poll_transmit` has something to do.
    pub fn next_timeout(&self) -> Option<Nanos> {
        match (self.next_timer_deadline(), self.next_send_time()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Earliest deadline of the loss-recovery timers (RTO, TLP, RACK reordering) and the
    /// application's stop time — what `on_timeout` handles.
    pub fn next_timer_deadline(&self) -> Option<Nanos> {
        let mut t = self.rto_deadline;
        for d in [self.tlp_deadline, self.reo_deadline] {
            t = match (t, d) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
        }
        if let Some(stop) = self.stop_ns {
            if self.snd_nxt < self.write_end {
                t = Some(t.map_or(stop, |x| x.min(stop)));
            }
        }
        if let Some(r) = self.rpc_next_ns {
            t = Some(t.map_or(r, |x| x.min(r)));
        }
        t
    }

    /// When the pacer will next let a packet go, if data and window are waiting for it — what
    /// `poll_transmit` needs. A driver that holds the sender back for another reason (TSQ, a
    /// paused NIC) must not spin on this; it polls again when that reason clears.
    pub fn next_send_time(&self) -> Option<Nanos> {
        if self.paced() && self.burst_left == 0 && self.has_data_to_send() && self.cwnd_allows() {
            Some(self.next_send_ns)
        } else {
            None
        }
    }

    /// Fire whichever timers are due.
    pub fn on_timeout(&mut self, now: Nanos) {
        self.tp.now_ns = now;
        if let Some(stop) = self.stop_ns {
            if now >= stop {
                self.stop_writing();
            }
        }
        if self.rpc_next_ns.is_some_and(|r| now >= r) {
            self.rpc_write(now);
        }
        // Linux arms either the loss-probe or the RTO timer, never both: a due probe goes first
        // and re-arms the RTO (RFC 8985 §7.3).
        let tlp_due = self.tlp_deadline.is_some_and(|d| now >= d && self.rto_deadline.is_none_or(|r| d <= r));
        if tlp_due {
            self.tlp_deadline = None;
            self.send_loss_probe(now);
            self.rto_deadline = Some(now + self.rto_ns);
            return;
        }
        if self.rto_deadline.is_some_and(|d| now >= d) {
            self.on_rto(now);
            return;
        }
        if self.reo_deadline.is_some_and(|d| now >= d) {
            self.reo_deadline = None;
            let lost = self.rack_detect_loss(now);
            if lost > 0 {
                self.enter_recovery_if_needed(now);
            }
        }
        if self.tlp_deadline.is_some_and(|d| now >= d) {
            self.tlp_deadline = None;
            self.send_loss_probe(now);
        }
    }

    /// RFC 8985 §7.3: probe with new data if the window allows, else retransmit the last segment.
    fn send_loss_probe(&mut self, _now: Nanos) {
        if self.tp.packets_out == 0 {
            return;
        }
        self.tlp_outstanding = true;
        self.stats.tlp_probes += 1;
        if self.snd_nxt < self.write_end && self.snd_nxt < self.rwnd_end {
            self.pending_probe = Some(Probe::NewData);
            return;
        }
        let last = self.snd_nxt - 1;
        if self.seg(last).flags & (F_SACKED | F_RETRANS) == 0 {
            self.pending_probe = Some(Probe::Retrans(last));
        }
    }

    /// Send a pending probe: bypasses cwnd and pacing, as Linux tcp_send_loss_probe does.
    fn transmit_probe(&mut self, now: Nanos, probe: Probe) -> Option<Packet> {
        match probe {
            Probe::NewData if self.snd_nxt < self.write_end => Some(self.transmit_new(now)),
            Probe::Retrans(seq)
                if seq >= self.snd_una && seq < self.snd_nxt && self.seg(seq).flags & (F_SACKED | F_RETRANS) == 0 =>
            {
                Some(self.transmit_retrans(now, seq))
            }
            _ => None,
        }
    }

    fn on_rto(&mut self, now: Nanos) {
        self.rto_deadline = None;
        self.tlp_deadline = None;
        self.reo_deadline = None;
        if self.tp.packets_out == 0 {
            return;
        }
        self.stats.rto_count += 1;
        self.tp.rto_count += 1;
        // Linux tcp_enter_loss.
        if self.tp.ca_state <= CaState::Disorder || self.tp.ca_state == CaState::Cwr {
            self.prior_ssthresh = self.current_ssthresh();
            self.tp.prior_cwnd = self.tp.snd_cwnd;
            self.tp.snd_ssthresh = self.cc.ssthresh(&self.tp);
            self.cc.cwnd_event(&mut self.tp, CwndEvent::Loss);
            self.undo_marker = true;
            self.retrans_stamp = 0;
        }
        // Everything not SACKed is presumed lost; earlier retransmissions too.
        self.lost_queue.clear();
        let mut seq = self.snd_una;
        while seq < self.snd_nxt {
            let f = self.seg(seq).flags;
            if f & F_SACKED == 0 {
                if f & F_RETRANS != 0 {
                    self.tp.retrans_out -= 1;
                }
                self.ts_unlink(seq);
                self.seg_mut(seq).flags = (f | F_LOST) & !F_RETRANS;
                self.lost_queue.push_back(seq);
                if f & F_LOST == 0 {
                    self.tp.lost_out += 1;
                    self.tp.lost += 1;
                    let p = self.seg(seq).rate;
                    self.cc.skb_marked_lost(&self.tp, &p);
                }
            }
            seq += 1;
        }
        // Linux tcp_enter_loss: cwnd = in_flight + 1, then the state change (the algorithm's
        // set_state hook runs on every RTO, not only on the first).
        self.tp.snd_cwnd = self.tp.packets_in_flight() + 1;
        self.tp.snd_cwnd_cnt = 0;
        self.cc.set_state(&mut self.tp, CaState::Loss);
        self.tp.ca_state = CaState::Loss;
        self.high_seq = self.snd_nxt;
        self.tlp_outstanding = false;
        self.burst_left = 0;
        self.next_send_ns = now;
        // Exponential backoff (RFC 6298 §5.5).
        self.rto_backoff += 1;
        self.rto_deadline = Some(now + self.current_rto());
    }

    /// The RTO with the current exponential back-off applied (Linux icsk_rto).
    fn current_rto(&self) -> Nanos {
        self.rto_ns.saturating_mul(1u64 << self.rto_backoff.min(16)).min(RTO_MAX_NS)
    }

    fn current_ssthresh(&self) -> u32 {
        // Linux tcp_current_ssthresh.
        if self.tp.ca_state >= CaState::Cwr {
            self.tp.snd_ssthresh
        } else {
            self.tp.snd_ssthresh.max((self.tp.snd_cwnd >> 1) + (self.tp.snd_cwnd >> 2))
        }
    }

    fn set_ca_state(&mut self, s: CaState) {
        if self.tp.ca_state != s {
            self.cc.set_state(&mut self.tp, s);
            self.tp.ca_state = s;
        }
    }

    /// Mark a segment lost (Linux tcp_mark_skb_lost).
    fn mark_lost(&mut self, seq: u64) {
        let f = self.seg(seq).flags;
        if f & F_SACKED != 0 {
            return;
        }
        if f & F_RETRANS != 0 {
            // A retransmission was lost too: it goes back to the retransmit queue.
            self.tp.retrans_out -= 1;
        }
        self.seg_mut(seq).flags = (f | F_LOST) & !F_RETRANS;
        self.ts_unlink(seq);
        self.lost_queue.push_back(seq);
        if f & F_LOST == 0 {
            self.tp.lost_out += 1;
            self.tp.lost += 1;
        }
        // Linux tcp_mark_skb_lost → tcp_skb_mark_lost_uncond_verify → ca_ops->skb_marked_lost
        // runs for every packet marked lost, retransmissions included.
        let p = self.seg(seq).rate;
        self.cc.skb_marked_lost(&self.tp, &p);
    }

    /// RACK reordering window (Linux tcp_rack_reo_wnd).
    fn reo_wnd(&self) -> u64 {
        if !self.reord_seen && (self.tp.ca_state >= CaState::Recovery || self.tp.sacked_out >= DUPTHRESH) {
            return 0;
        }
        let min_rtt = if self.tp.min_rtt_ns == u64::MAX { 0 } else { self.tp.min_rtt_ns };
        (min_rtt / 4).min(self.tp.srtt_ns)
    }

    /// RFC 8985 §6.2 RACK_detect_loss over the time-sorted list; returns segments newly lost.
    fn rack_detect_loss(&mut self, now: Nanos) -> u32 {
        if !self.rack_valid {
            return 0;
        }
        let reo = self.reo_wnd();
        let mut lost = 0;
        let mut cur = self.ts_head;
        while cur != NIL {
            let (xmit, next) = {
                let s = self.seg(cur);
                (s.xmit_ns, s.next)
            };
            // Only segments sent before the most recently delivered one can be deemed lost.
            let sent_before = xmit < self.rack_xmit_ns || (xmit == self.rack_xmit_ns && cur < self.rack_seq);
            if !sent_before {
                break;
            }
            let deadline = xmit + self.rack_rtt_ns + reo;
            if now >= deadline {
                self.mark_lost(cur);
                lost += 1;
            } else {
                self.reo_deadline = Some(self.reo_deadline.map_or(deadline, |d| d.min(deadline)));
                break;
            }
            cur = next;
        }
        lost
    }

    fn enter_recovery_if_needed(&mut self, now: Nanos) {
        let _ = now;
        if self.tp.lost_out == 0 || self.tp.ca_state >= CaState::Recovery {
            return;
        }
        // Linux tcp_enter_recovery + tcp_init_cwnd_reduction.
        self.stats.recoveries += 1;
        if self.tp.ca_state < CaState::Cwr {
            self.prior_ssthresh = self.current_ssthresh();
            self.undo_marker = true;
            self.retrans_stamp = 0;
            self.tp.prior_cwnd = self.tp.snd_cwnd;
            self.tp.snd_ssthresh = self.cc.ssthresh(&self.tp);
            self.prr_delivered = 0;
            self.prr_out = 0;
        }
        self.high_seq = self.snd_nxt;
        self.tlp_deadline = None;
        self.set_ca_state(CaState::Recovery);
    }

    /// Process an ACK.
    pub fn on_ack(&mut self, now: Nanos, ack: &Packet) {
        self.tp.now_ns = now;
        if ack.rwnd_end != u64::MAX || self.rwnd_end != u64::MAX {
            self.rwnd_end = ack.rwnd_end;
        }
        if ack.ack > self.snd_nxt {
            return; // acks data never sent: ignore (cannot happen in the simulator)
        }
        let prior_in_flight = self.tp.packets_in_flight();
        let prior_snd_una = self.snd_una;
        let mut rs = RateSample { prior_in_flight, is_ack_delayed: ack.delayed, ..Default::default() };
        let mut delivered: u32 = 0;
        let mut newest_rtt: Option<u64> = None;
        let mut oldest_rtt: Option<u64> = None;
        let mut retrans_acked = false;

        // 1. SACK blocks: tag only what the previous ACK's blocks did not cover.
        let nblocks = ack.n_sack as usize;
        for b in 0..nblocks {
            let (mut s, mut e) = ack.sack[b];
            s = s.max(ack.ack).max(self.snd_una);
            e = e.min(self.snd_nxt);
            if s >= e {
                continue;
            }
            // Subtract cached blocks (already tagged): walk [s, e) in pieces.
            let mut pos = s;
            while pos < e {
                let mut piece_end = e;
                let mut skip_to = None;
                for &(cs, ce) in &self.sack_cache {
                    if cs < ce {
                        if pos >= cs && pos < ce {
                            skip_to = Some(skip_to.map_or(ce, |x: u64| x.max(ce)));
                        } else if cs > pos && cs < piece_end {
                            piece_end = cs;
                        }
                    }
                }
                if let Some(t) = skip_to {
                    pos = t.min(e).max(pos + 0);
                    if pos >= e {
                        break;
                    }
                    continue;
                }
                for seq in pos..piece_end {
                    self.tag_delivered(now, seq, true, &mut rs, &mut delivered, &mut newest_rtt, &mut oldest_rtt, &mut retrans_acked);
                }
                pos = piece_end;
            }
        }
        self.sack_cache = [(0, 0); MAX_SACK_BLOCKS];
        for b in 0..nblocks {
            self.sack_cache[b] = ack.sack[b];
        }

        // 2. Cumulative ACK.
        let acked_new = ack.ack > self.snd_una;
        while self.snd_una < ack.ack {
            let seq = self.snd_una;
            let f = self.segs[0].flags;
            if f & F_SACKED == 0 {
                self.tag_delivered(now, seq, false, &mut rs, &mut delivered, &mut newest_rtt, &mut oldest_rtt, &mut retrans_acked);
            } else {
                self.tp.sacked_out -= 1;
            }
            self.ts_unlink(seq);
            self.segs.pop_front();
            self.tp.packets_out -= 1;
            self.snd_una += 1;
        }
        if acked_new {
            self.rto_backoff = 0;
            if self.tp.packets_out > 0 {
                self.rto_deadline = Some(now + self.rto_ns);
            } else {
                self.rto_deadline = None;
            }
            self.tlp_outstanding = false;
        }
        let ece_new = ack.ce_count > self.ce_seen;
        let newly_ce = ack.ce_count.saturating_sub(self.ce_seen);
        if ece_new {
            self.ce_seen = ack.ce_count;
            self.tp.delivered_ce += newly_ce;
        }
        self.ece_this_ack = ece_new;
        self.cc.in_ack_event(&mut self.tp, AckFlags { ece: ece_new, window_update: acked_new, acked_data: delivered > 0 });

        // 3. RTT samples (Karn: only from segments never retransmitted).
        if let Some(oldest) = oldest_rtt {
            let newest = newest_rtt.unwrap_or(oldest);
            self.rtt_sample(now, oldest);
            self.tp.min_rtt_ns = self.min_rtt_filter.update(MIN_RTT_WLEN_NS, now, newest);
            self.record_rtt(newest);
            rs.rtt_ns = newest as i64;
        }
        if delivered > 0 {
            self.cc.pkts_acked(&mut self.tp, delivered, newest_rtt);
        }

        // 4. Loss detection (RACK), recovery state machine.
        let lost_before = self.tp.lost;
        if delivered > 0 {
            self.rack_detect_loss(now);
        }
        let newly_lost = (self.tp.lost - lost_before) as u32;
        self.update_state(now, ack, prior_snd_una, acked_new);
        rate::generate(&mut self.tp, now, delivered, newly_lost, &mut rs);
        if let Some(r) = rs.delivery_rate_bytes_per_s(self.tp.mss) {
            self.stats.last_delivery_rate_bytes_per_s = r;
        }
        let _ = retrans_acked;

        // 5. Congestion control (Linux tcp_cong_control).
        if self.cc.has_cong_control() {
            self.cc.cong_control(&mut self.tp, &rs);
        } else {
            if self.tp.ca_state == CaState::Recovery || self.tp.ca_state == CaState::Cwr {
                self.prr(delivered, newly_lost, acked_new);
            } else if delivered > 0 && acked_new {
                // Linux tcp_cong_control → tcp_may_raise_cwnd: without high reordering, cwnd
                // grows only on FLAG_DATA_ACKED (snd_una advanced, RFC 5681 "in-order delivery"),
                // not on SACK-only ACKs in Disorder; the ACK that advances snd_una then counts
                // everything newly delivered, SACKed segments included (acked_sacked).
                self.cc.cong_avoid(&mut self.tp, delivered);
            }
            self.update_default_pacing_rate();
        }
        if self.tp.packets_out == 0 {
            self.tlp_deadline = None;
            self.reo_deadline = None;
        } else if acked_new || delivered > 0 {
            self.schedule_tlp(now);
        }
        self.rpc_on_ack(now);
        if self.completed_ns.is_none() && self.is_done() && self.write_end != u64::MAX && self.cfg.rpc.is_none() {
            self.completed_ns = Some(now);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn tag_delivered(
        &mut self,
        now: Nanos,
        seq: u64,
        sacked: bool,
        rs: &mut RateSample,
        delivered: &mut u32,
        newest_rtt: &mut Option<u64>,
        oldest_rtt: &mut Option<u64>,
        retrans_acked: &mut bool,
    ) {
        let idx = (seq - self.snd_una) as usize;
        let f = self.segs[idx].flags;
        if f & F_SACKED != 0 {
            return;
        }
        if f & F_LOST != 0 {
            self.tp.lost_out -= 1;
        }
        if f & F_RETRANS != 0 {
            self.tp.retrans_out -= 1;
        }
        if sacked {
            self.tp.sacked_out += 1;
            self.segs[idx].flags = (f | F_SACKED) & !(F_LOST | F_RETRANS);
            self.ts_unlink(seq);
        } else {
            self.segs[idx].flags = f & !(F_LOST | F_RETRANS);
        }
        *delivered += 1;
        self.tp.delivered += 1;
        let xmit = self.segs[idx].xmit_ns;
        if f & F_EVER_RETRANS == 0 {
            let rtt = now.saturating_sub(xmit);
            *newest_rtt = Some(newest_rtt.map_or(rtt, |r| r.min(rtt)));
            *oldest_rtt = Some(oldest_rtt.map_or(rtt, |r| r.max(rtt)));
        } else {
            *retrans_acked = true;
        }
        // RACK: remember the most recently sent delivered segment (RFC 8985 §6.2 step 2). A
        // retransmitted segment acked sooner than min_rtt after its retransmission may be the
        // original's ACK: do not let it advance RACK.
        let rtt = now.saturating_sub(xmit);
        let ambiguous = f & F_EVER_RETRANS != 0 && self.tp.min_rtt_ns != u64::MAX && rtt < self.tp.min_rtt_ns;
        if !ambiguous && (!self.rack_valid || xmit > self.rack_xmit_ns || (xmit == self.rack_xmit_ns && seq > self.rack_seq)) {
            self.rack_xmit_ns = xmit;
            self.rack_seq = seq;
            self.rack_rtt_ns = rtt;
            self.rack_valid = true;
        }
        let mut p = self.segs[idx].rate;
        rate::on_packet_delivered(&mut self.tp, &mut p, rs);
        self.segs[idx].rate = p;
    }

    /// Linux tcp_fastretrans_alert, reduced to what a FIFO network without reordering needs.
    fn update_state(&mut self, now: Nanos, ack: &Packet, prior_snd_una: u64, acked_new: bool) {
        // Spurious retransmission (Eifel, RFC 3522): the ACK echoes a timestamp older than our
        // first retransmission, so the original transmission arrived.
        let delayed = self.undo_marker && self.retrans_stamp != 0 && ack.ts_ns < self.retrans_stamp;
        match self.tp.ca_state {
            CaState::Loss => {
                if acked_new && delayed {
                    self.undo(true);
                    return;
                }
                if self.snd_una >= self.high_seq {
                    self.finish_recovery();
                }
            }
            CaState::Recovery => {
                if self.snd_una >= self.high_seq {
                    if delayed {
                        self.undo(false);
                    } else {
                        self.finish_recovery();
                    }
                }
            }
            CaState::Cwr => {
                // Linux tcp_fastretrans_alert: CWR ends once something *above* high_seq is
                // acknowledged, so the ACK that ends it covers data sent after the reduction
                // (or once nothing is outstanding: no later data will come to end it).
                if self.snd_una > self.cwr_high_seq || (self.snd_una == self.cwr_high_seq && self.snd_una == self.snd_nxt) {
                    self.finish_recovery();
                }
            }
            _ => {}
        }
        let _ = prior_snd_una;
        if self.tp.ca_state <= CaState::Disorder {
            if self.tp.lost_out > 0 {
                self.enter_recovery_if_needed(now);
            } else if self.tp.ecn_ok && !self.cc.has_cong_control() && self.ece_this_ack {
                // Linux tcp_try_to_open: an ACK with ECE in Open/Disorder enters CWR. CE marks
                // delivered while in CWR/Recovery belong to the window already reduced for and do
                // not trigger a second reduction (RFC 3168 §6.1.2, RFC 8257 §3.3: at most once
                // per window); DCTCP's alpha still counts them (tp.delivered_ce).
                self.enter_cwr();
            } else {
                let s = if self.tp.sacked_out > 0 { CaState::Disorder } else { CaState::Open };
                self.set_ca_state(s);
            }
        }
    }

    /// Classic ECN reaction (RFC 3168 §6.1.2; Linux tcp_enter_cwr), at most once per window.
    fn enter_cwr(&mut self) {
        self.tp.prior_cwnd = self.tp.snd_cwnd;
        self.prior_ssthresh = 0;
        self.undo_marker = false;
        self.tp.snd_ssthresh = self.cc.ssthresh(&self.tp);
        self.prr_delivered = 0;
        self.prr_out = 0;
        self.cwr_high_seq = self.snd_nxt;
        self.set_ca_state(CaState::Cwr);
    }

    fn finish_recovery(&mut self) {
        // Linux tcp_end_cwnd_reduction: algorithms with cong_control manage cwnd themselves.
        if !self.cc.has_cong_control()
            && self.tp.snd_ssthresh < cc::TCP_INFINITE_SSTHRESH
            && (self.tp.ca_state == CaState::Recovery || self.tp.ca_state == CaState::Cwr)
        {
            self.tp.snd_cwnd = self.tp.snd_ssthresh;
        }
        self.undo_marker = false;
        self.retrans_stamp = 0;
        let s = if self.tp.sacked_out > 0 { CaState::Disorder } else { CaState::Open };
        self.set_ca_state(s);
        if self.tp.ca_state == CaState::Open && !self.cc.has_cong_control() {
            self.cc.cwnd_event(&mut self.tp, CwndEvent::CompleteCwr);
        }
    }

    /// Undo a spurious reduction (Linux tcp_undo_cwnd_reduction).
    fn undo(&mut self, unmark_loss: bool) {
        self.stats.spurious_undos += 1;
        if unmark_loss {
            // Segments marked lost by the RTO were not lost: take them off the retransmit queue.
            let mut seq = self.snd_una;
            while seq < self.snd_nxt {
                let f = self.seg(seq).flags;
                if f & F_LOST != 0 {
                    self.tp.lost_out -= 1;
                    self.seg_mut(seq).flags = f & !F_LOST;
                    if f & F_RETRANS == 0 {
                        // Back into the in-flight list, in transmission order (list stays sorted
                        // enough: these were sent before anything retransmitted later).
                        self.ts_push_tail(seq);
                    }
                }
                seq += 1;
            }
            self.lost_queue.clear();
        }
        let cwnd = self.cc.undo_cwnd(&mut self.tp);
        self.tp.snd_cwnd = cwnd.max(1);
        if self.prior_ssthresh > self.tp.snd_ssthresh {
            self.tp.snd_ssthresh = self.prior_ssthresh;
        }
        self.undo_marker = false;
        self.retrans_stamp = 0;
        let s = if self.tp.sacked_out > 0 { CaState::Disorder } else { CaState::Open };
        self.set_ca_state(s);
    }

    /// Proportional Rate Reduction (RFC 9937 §6; Linux tcp_cwnd_reduction with RecoverFS =
    /// prior_cwnd).
    fn prr(&mut self, delivered: u32, newly_lost: u32, una_advanced: bool) {
        if delivered == 0 {
            return;
        }
        self.prr_delivered += delivered;
        let pipe = self.tp.packets_in_flight() as i64;
        let ssthresh = self.tp.snd_ssthresh as i64;
        let recover_fs = self.tp.prior_cwnd.max(1) as i64;
        let sndcnt: i64 = if pipe > ssthresh {
            // Proportional part: ceil(prr_delivered · ssthresh / RecoverFS) − prr_out.
            (ssthresh * self.prr_delivered as i64 + recover_fs - 1) / recover_fs - self.prr_out as i64
        } else {
            // Slow-start reduction bound: rebuild towards ssthresh no faster than slow start.
            let mut n = (self.prr_delivered as i64 - self.prr_out as i64).max(delivered as i64);
            if una_advanced && newly_lost == 0 {
                n += 1;
            }
            n.min(ssthresh - pipe)
        };
        // Force the fast retransmit when recovery starts.
        let sndcnt = sndcnt.max(if self.prr_out == 0 { 1 } else { 0 });
        self.tp.snd_cwnd = (pipe + sndcnt).max(1) as u32;
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
            self.snd_una, self.snd_nxt, self.write_end, self.tp.snd_cwnd, self.tp.snd_ssthresh, self.tp.packets_out,
            self.tp.sacked_out, self.tp.lost_out, self.tp.retrans_out, self.tp.packets_in_flight(), self.tp.ca_state,
            self.tp.pacing_rate_bytes_per_s, self.next_send_ns, self.burst_left, self.rto_deadline, self.tlp_deadline,
            self.reo_deadline, self.lost_queue.len(), self.pending_probe, self.rwnd_end
        )
    }

    /// Check scoreboard invariants (tests and debug builds).
    pub fn check_invariants(&self) -> Result<(), String> {
        let (mut sacked, mut lost, mut retrans) = (0u32, 0u32, 0u32);
        for s in &self.segs {
            if s.flags & F_SACKED != 0 {
                sacked += 1;
            }
            if s.flags & F_LOST != 0 {
                lost += 1;
            }
            if s.flags & F_RETRANS != 0 {
                retrans += 1;
            }
        }
        let n = self.segs.len() as u32;
        if n != self.tp.packets_out {
            return Err(format!("packets_out {} != scoreboard {}", self.tp.packets_out, n));
        }
        if sacked != self.tp.sacked_out || lost != self.tp.lost_out || retrans != self.tp.retrans_out {
            return Err(format!(
                "counters sacked {}/{} lost {}/{} retrans {}/{}",
                self.tp.sacked_out, sacked, self.tp.lost_out, lost, self.tp.retrans_out, retrans
            ));
        }
        Ok(())
    }
}

/// Log-linear histogram of RTTs (HDR-style: 64 sub-buckets per power of two of microseconds,
/// ≤ 1.6 % relative error), so p50/p95/p99 cost O(1) memory per flow regardless of run length.
#[derive(Clone, Debug)]
pub struct RttHistogram {
    counts: Vec<u64>,
    total: u64,
}

const HIST_SUB_BITS: u32 = 6;
const HIST_SUB: u64 = 1 << HIST_SUB_BITS;

impl Default for RttHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl RttHistogram {
    pub fn new() -> Self {
        RttHistogram { counts: Vec::new(), total: 0 }
    }

    #[inline]
    fn bucket(v_ns: u64) -> usize {
        let v = (v_ns / 100).max(1); // 0.1 µs units
        if v < HIST_SUB {
            return v as usize;
        }
        let msb = 63 - v.leading_zeros() as u64; // >= HIST_SUB_BITS
        let shift = msb - HIST_SUB_BITS as u64;
        let sub = (v >> shift) - HIST_SUB; // 0..HIST_SUB
        (HIST_SUB + shift * HIST_SUB + sub) as usize
    }

    fn bucket_value_ns(b: usize) -> f64 {
        let b = b as u64;
        if b < HIST_SUB {
            return b as f64 * 100.0;
        }
        let shift = (b - HIST_SUB) / HIST_SUB;
        let sub = (b - HIST_SUB) % HIST_SUB;
        // Midpoint of the bucket.
        let lo = (HIST_SUB + sub) << shift;
        let width = 1u64 << shift;
        (lo as f64 + width as f64 / 2.0 - 0.5).max(lo as f64) * 100.0
    }

    #[inline]
    pub fn record(&mut self, v_ns: u64) {
        let b = Self::bucket(v_ns);
        if b >= self.counts.len() {
            self.counts.resize(b + 1, 0);
        }
        self.counts[b] += 1;
        self.total += 1;
    }

    pub fn count(&self) -> u64 {
        self.total
    }

    /// Quantile q in [0,1], ns; NaN when empty.
    pub fn quantile_ns(&self, q: f64) -> f64 {
        if self.total == 0 {
            return f64::NAN;
        }
        let rank = ((q * self.total as f64).ceil() as u64).clamp(1, self.total);
        let mut acc = 0;
        for (b, &c) in self.counts.iter().enumerate() {
            acc += c;
            if acc >= rank {
                return Self::bucket_value_ns(b);
            }
        }
        f64::NAN
    }
}

#[cfg(test)]
mod ecn_tests {
    //! The sender's ECN reaction (CWR) on a wire with a marking queue: fixed one-way delay, one
    //! bottleneck serializing `tx_ns` per data packet, CE on arrival when more than `k` packets wait.
    use super::*;
    use crate::receiver::ReceiverConfig;
    use cc::CcKind;

    struct Wire {
        now: Nanos,
        s: Sender,
        r: Receiver,
        fwd: VecDeque<(Nanos, Packet)>,
        rev: VecDeque<(Nanos, Packet)>,
        one_way: Nanos,
        tx_ns: Nanos,
        /// Departure times of packets in the bottleneck (queue + serializer).
        departures: VecDeque<Nanos>,
        k: usize,
        /// Mark only data sent in [from, to) (ns); None = by the queue rule.
        mark_window: Option<(Nanos, Nanos)>,
    }

    impl Wire {
        fn new(cc: &str, ecn: bool, ce_state_ack: bool, k: usize) -> Wire {
            let algo = Cc::new(&CcKind::from_name(cc).unwrap(), 1);
            let mut s = Sender::new(SenderConfig { tso: false, ecn, ..Default::default() }, algo);
            s.start(0);
            Wire {
                now: 0,
                s,
                r: Receiver::new(ReceiverConfig { ce_state_ack, ..Default::default() }),
                fwd: VecDeque::new(),
                rev: VecDeque::new(),
                one_way: 500_000,
                tx_ns: 12_000, // ≈ 1 Gbit/s for 1538-byte frames
                departures: VecDeque::new(),
                k,
                mark_window: None,
            }
        }

        fn pump(&mut self) {
            while let Some(mut p) = self.s.poll_transmit(self.now) {
                while self.departures.front().is_some_and(|&d| d <= self.now) {
                    self.departures.pop_front();
                }
                let waiting = self.departures.len().saturating_sub(1);
                let mark = match self.mark_window {
                    Some((a, b)) => self.now >= a && self.now < b,
                    None => waiting > self.k,
                };
                if mark && p.ect {
                    p.ce = true;
                }
                let start = self.departures.back().copied().unwrap_or(0).max(self.now);
                let dep = start + self.tx_ns;
                self.departures.push_back(dep);
                self.fwd.push_back((dep + self.one_way, p));
            }
        }

        /// Run until `end`, calling `on_ack(sender)` after each ACK.
        fn run(&mut self, end: Nanos, mut on_ack: impl FnMut(&Sender, CaState)) {
            self.pump();
            loop {
                let tf = self.fwd.front().map(|x| x.0);
                let tr = self.rev.front().map(|x| x.0);
                let ts = self.s.next_timeout();
                let trt = self.r.next_timeout();
                let Some(t) = [tf, tr, ts, trt].into_iter().flatten().min() else { break };
                if t > end {
                    break;
                }
                self.now = t.max(self.now);
                if tf == Some(t) {
                    let (_, p) = self.fwd.pop_front().unwrap();
                    let a = self.r.on_data(self.now, &p);
                    if let Some(x) = self.r.take_pending_ack() {
                        self.rev.push_back((self.now + self.one_way, x));
                    }
                    if let Some(a) = a {
                        self.rev.push_back((self.now + self.one_way, a));
                    }
                } else if tr == Some(t) {
                    let (_, a) = self.rev.pop_front().unwrap();
                    let before = self.s.tp.ca_state;
                    self.s.on_ack(self.now, &a);
                    on_ack(&self.s, before);
                } else if trt == Some(t) {
                    if let Some(a) = self.r.on_timeout(self.now) {
                        self.rev.push_back((self.now + self.one_way, a));
                    }
                } else {
                    self.s.on_timeout(self.now);
                }
                self.pump();
            }
        }
    }

    /// Per CWR episode: (snd_una, snd_nxt, prior_cwnd, ssthresh, alpha) at entry.
    type Entry = (u64, u64, u32, u32, f64);

    #[test]
    fn dctcp_cuts_by_alpha_over_two_once_per_window_and_prr_reaches_ssthresh() {
        let mut w = Wire::new("dctcp", false, true, 20);
        assert!(w.s.tp.ecn_ok, "DCTCP turns ECN on");
        let mut entries: Vec<Entry> = Vec::new();
        let mut exits: Vec<(u32, u32)> = Vec::new();
        w.run(2_000_000_000, |s, before| {
            let st = s.cc.sample(&s.tp);
            if before != CaState::Cwr && s.tp.ca_state == CaState::Cwr {
                entries.push((s.snd_una, s.snd_nxt, s.tp.prior_cwnd, s.tp.snd_ssthresh, st.ecn_alpha));
            }
            if before == CaState::Cwr && s.tp.ca_state != CaState::Cwr {
                exits.push((s.tp.snd_cwnd, s.tp.snd_ssthresh));
            }
        });
        assert!(entries.len() > 50, "only {} ECN reductions in 2 s", entries.len());
        assert_eq!(w.s.stats.retransmits, 0, "a marking queue with K ≪ buffer should not lose");
        for pair in entries.windows(2) {
            let (a, b) = (pair[0], pair[1]);
            // The next reduction only after the whole window outstanding at this one was acked.
            assert!(b.0 > a.1, "reduction at snd_una {} inside the window [.., {}) of the previous one", b.0, a.1);
        }
        for &(_, _, prior, ss, alpha) in &entries {
            // RFC 8257 §3.3: cwnd ← cwnd·(1 − alpha/2) (Linux floors the cut, min 2).
            let want = (prior as f64 * (1.0 - alpha / 2.0)).max(2.0);
            assert!((ss as f64 - want).abs() <= 1.0, "ssthresh {ss} after cwnd {prior}, alpha {alpha}: want {want:.1}");
        }
        // Converged alpha is far below 1 (a Reno-sized cut would be alpha = 1).
        let late: Vec<f64> = entries.iter().skip(entries.len() / 2).map(|e| e.4).collect();
        let mean_alpha = late.iter().sum::<f64>() / late.len() as f64;
        assert!(mean_alpha < 0.6, "alpha {mean_alpha}");
        // PRR ends the reduction with cwnd at ssthresh (RFC 9937 §6; +1 for this ACK's growth).
        for &(cwnd, ss) in &exits {
            assert!(cwnd <= ss + 1, "CWR ended with cwnd {cwnd} above ssthresh {ss}");
        }
    }

    #[test]
    fn one_burst_of_marks_gives_exactly_one_reduction() {
        // Reno with classic ECN; every packet sent during 2 ms is marked (about two windows' worth
        // of ACKs carry CE), then nothing. Marks on the window already reduced for must not cause
        // a second reduction one RTT later (RFC 3168 §6.1.2).
        let mut w = Wire::new("reno", true, false, usize::MAX);
        w.mark_window = Some((100_000_000, 102_000_000));
        let mut n = 0;
        w.run(400_000_000, |s, before| {
            if before != CaState::Cwr && s.tp.ca_state == CaState::Cwr {
                n += 1;
            }
        });
        assert!(w.s.tp.delivered_ce > 10, "the marks reached the sender ({})", w.s.tp.delivered_ce);
        assert_eq!(n, 1, "{n} reductions for one burst of marks");
    }
}

#[cfg(test)]
mod burst_and_rpc_tests {
    //! Offload-chunk accounting and the RPC workload, on an ideal wire (fixed one-way delay, no
    //! queue).
    use super::*;
    use crate::receiver::ReceiverConfig;
    use cc::CcKind;

    fn sender(cc: &str, cfg: SenderConfig) -> Sender {
        let mut s = Sender::new(cfg, Cc::new(&CcKind::from_name(cc).unwrap(), 1));
        s.set_handshake_rtt(0, 100_000);
        s.start(0);
        s
    }

    #[test]
    fn segments_sent_at_one_instant_are_chunked_by_the_sizing_rule() {
        let mut s = sender("cubic", SenderConfig { initial_cwnd: 100, ..Default::default() });
        let chunk = s.tso_segs();
        assert!(chunk >= 2);
        let mut n = 0u64;
        while s.poll_transmit(0).is_some() {
            n += 1;
        }
        assert_eq!(n, 100);
        assert_eq!(s.stats.tso_burst_segs, 100);
        assert_eq!(s.stats.tso_bursts, 100u64.div_ceil(chunk as u64), "chunk {chunk}");
    }

    #[test]
    fn segments_sent_at_different_instants_are_separate_chunks_and_no_tso_means_one_segment() {
        let mut s = sender("cubic", SenderConfig { initial_cwnd: 10, ..Default::default() });
        for t in 0..10 {
            assert!(s.poll_transmit(t).is_some());
        }
        assert_eq!((s.stats.tso_bursts, s.stats.tso_burst_segs), (10, 10));
        let mut s = sender("cubic", SenderConfig { initial_cwnd: 10, tso: false, ..Default::default() });
        while s.poll_transmit(0).is_some() {}
        assert_eq!((s.stats.tso_bursts, s.stats.tso_burst_segs), (10, 10));
    }

    #[test]
    fn paced_bbr2_chunks_follow_its_tso_goal_and_minrtt_autosizing_enlarges_them() {
        // 100 µs min_rtt: the min_rtt term adds 64 KB >> 0, so chunks are ~44 segments with it
        // and only the rate term (3 segments here) without.
        let mut means = Vec::new();
        for auto in [true, false] {
            let mut s = sender("bbr2", SenderConfig { initial_cwnd: 200, tso_minrtt_autosize: auto, ..Default::default() });
            // A fair share of 40 Mbit/s: the rate term alone is 4.9 KB, 3 segments.
            s.tp.pacing_rate_bytes_per_s = 5_000_000;
            let mut t = 0;
            while s.stats.tso_burst_segs < 150 {
                while s.poll_transmit(t).is_some() {}
                t = s.next_send_time().unwrap_or(t + 1000).max(t + 1);
            }
            means.push(s.stats.tso_burst_segs as f64 / s.stats.tso_bursts as f64);
        }
        assert!(means[0] >= 40.0, "with autosizing: {means:?}");
        assert!(means[1] <= 3.0, "without autosizing: {means:?}");
    }

    #[test]
    fn rpc_messages_are_written_after_full_ack_and_gap_and_their_latency_is_one_round_trip() {
        let one_way = 50_000;
        let gap = 1_000_000;
        let mut s = sender("cubic", SenderConfig { rpc: Some(RpcConfig { segs: 4, gap_ns: gap }), ..Default::default() });
        let mut r = Receiver::new(ReceiverConfig { msg_segs: Some(4), ..Default::default() });
        let mut now = 0;
        let mut fwd: VecDeque<(Nanos, Packet)> = VecDeque::new();
        let mut rev: VecDeque<(Nanos, Packet)> = VecDeque::new();
        while now < 20_000_000 {
            while let Some(p) = s.poll_transmit(now) {
                fwd.push_back((now + one_way, p));
            }
            let next = [fwd.front().map(|x| x.0), rev.front().map(|x| x.0), s.next_timeout(), r.next_timeout()]
                .into_iter()
                .flatten()
                .min()
                .unwrap();
            now = next.max(now);
            if fwd.front().is_some_and(|x| x.0 <= now) {
                let (_, p) = fwd.pop_front().unwrap();
                if let Some(a) = r.on_data(now, &p) {
                    rev.push_back((now + one_way, a));
                }
            } else if rev.front().is_some_and(|x| x.0 <= now) {
                let (_, a) = rev.pop_front().unwrap();
                s.on_ack(now, &a);
            } else if r.next_timeout().is_some_and(|t| t <= now) {
                if let Some(a) = r.on_timeout(now) {
                    rev.push_back((now + one_way, a));
                }
            } else if s.next_timer_deadline().is_some_and(|t| t <= now) {
                s.on_timeout(now);
            }
        }
        // Each message: one RTT (100 µs) of latency, then the gap: 20 ms / 1.1 ms ≈ 18 messages.
        let n = s.stats.rpc_count;
        assert!((17..=19).contains(&n), "{n} messages");
        let p99 = s.rpc_hist.quantile_ns(0.99);
        assert!((95_000.0..=110_000.0).contains(&p99), "p99 {p99} ns");
        assert_eq!(s.completed_ns, None, "an RPC flow never completes");
    }
}
