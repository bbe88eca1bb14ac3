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
//!   recovery or dupthresh SACKs when no reordering was seen, else steps of min_rtt/4 that
//!   D-SACK rounds widen, `tcp_rack_update_reo_wnd`).
//! - Reordering (Linux `tcp_check_sack_reordering`): an original segment delivered below the
//!   highest SACKed one, or echoed by a timestamp in recovery, raises `reord_seen` and dupthresh
//!   (`tp->reordering`); D-SACKs (RFC 2883) count spurious retransmissions.
//! - Tail loss probe (RFC 8985 §7): PTO = 2·SRTT (+200 ms with one segment out), one probe.
//! - RTO (RFC 6298; Linux `__tcp_set_rto`): RTO = SRTT + max(4·RTTVAR, rto_min), exponential
//!   backoff; entering Loss marks everything outstanding lost (Linux `tcp_enter_loss`).
//! - RTT samples (Linux `tcp_clean_rtx_queue`/`tcp_ack_update_rtt`): Karn's rule, the oldest
//!   newly delivered segment for SRTT, the newest for min_rtt and the algorithm; an ACK that
//!   advances snd_una with no such sample takes one from its timestamp echo at the 1-ms TS clock
//!   (`tcp_rtt_tsopt_us`), which can read up to a millisecond below the path's RTT.
//! - Recovery state machine of Linux `tcp_fastretrans_alert` (Open/Disorder/CWR/Recovery/Loss), PRR
//!   (RFC 9937; Linux `tcp_cwnd_reduction` with RecoverFS = prior_cwnd) for algorithms without
//!   `cong_control`, Eifel undo with timestamps (RFC 3522; Linux `tcp_packet_delayed`) and
//!   D-SACK undo (RFC 3708; Linux `tcp_try_undo_dsack`).
//! - Delivery-rate samples (cc::rate, Linux `tcp_rate.c`) handed to `cong_control` algorithms.
//! - Pacing with earliest-departure-time semantics (Linux `tcp_update_skb_after_send`), TSO-style
//!   bursts (Linux `tcp_tso_autosize`: pacing_rate·1 ms, 2 segments to 64 KB, or the algorithm's
//!   `tso_segs`), receive window and send-buffer limits.
//! - Receiver: delayed ACKs (every 2 full segments, 40 ms timer, quick-ACK for the first 16
//!   segments, immediate ACK on out-of-order data or a filled hole), SACK blocks in recency order
//!   after a D-SACK block for a duplicate,
//!   RFC 7323 timestamp echo, cumulative CE counts (accurate-ECN style echo); optionally DCTCP's
//!   immediate ACK on a CE-state change (`ReceiverConfig::ce_state_ack`).
//! - ECN for window-based algorithms (RFC 3168 §6.1.2, RFC 8257 §3.3; Linux `tcp_enter_cwr`): an
//!   ACK carrying newly CE-marked segments in Open/Disorder enters CWR with the algorithm's
//!   ssthresh and PRR down to it; CWR lasts until data sent after the reduction is acknowledged,
//!   so there is at most one reduction per window and marks on the reduced window are not
//!   reacted to again.
//!
//! # Layout
//!
//! The sender is split by job, as quinn-proto splits its connection (pacing, timers, spaces,
//! stats): each module owns one part of the state and the `impl Sender` methods of its job, and
//! `Sender` composes them.
//!
//! | module | owns |
//! | --- | --- |
//! | `sender` | the public API and the send and timer paths (`poll_transmit`, `on_timeout`) |
//! | `ack` | the ACK path (`on_ack`): delivery tagging, RTT samples, the rate sample, the algorithm |
//! | `scoreboard` | the SACK scoreboard, the time-sorted in-flight list, the one `mark_lost` |
//! | `rtt` | SRTT/RTTVAR/min_rtt, the RTO and its back-off (RFC 6298) |
//! | `recovery` | RACK, TLP, RTO handling, the recovery state machine, PRR, ECN/CWR, undo |
//! | `recovery::reordering` | D-SACK accounting, reordering detection, RACK's adaptive reo_wnd |
//! | `pacing` | pacing rate, the EDT pacer, TSO autosizing and offload-chunk counters, TSQ |
//! | `stream` | what the application has written (bulk, a sized transfer, or `Sender::write`) |
//! | `timers` | the loss-recovery deadlines (RTO, TLP, RACK reordering) |
//! | `stats` | per-flow counters and the latency histogram |
//! | `receiver` | the receiving half (`config`, `reassembly`: out-of-order ranges and SACK blocks, `ack`: building an ACK) |
//! | `rcv_space` | the receiver's window autotuning (Linux DRS and `rcv_ssthresh`) |

use cc::{Nanos, NSEC_PER_MSEC, NSEC_PER_SEC};
pub use pathmodel::ecn::EcnMode;
pub use pathmodel::Ecn;

mod ack;
pub mod chunk_deque;
mod pacing;
pub mod rcv_space;
pub mod receiver;
mod recovery;
mod rtt;
mod scoreboard;
mod sender;
mod stats;
mod stream;
mod timers;

pub use pacing::{TSQ_LIMIT_OUTPUT_BYTES, TSQ_MIN_BYTES};
pub use receiver::Receiver;
pub use sender::{Sender, SenderConfig};
pub use stats::{RttHistogram, SenderStats};

/// Bytes of IPv4 + TCP header with the timestamp option on every segment.
pub const TCP_IP_HEADER_BYTES: u32 = 52;
/// Ethernet framing on the wire: 14 header + 4 FCS + 8 preamble + 12 inter-frame gap. With a
/// 1448-byte MSS a data packet occupies 1538 bytes of wire time, so 1 GbE carries at most
/// 941.5 Mbit/s of goodput — the ceiling iperf and the Waterloo DC study report.
pub const ETHERNET_OVERHEAD_BYTES: u32 = 38;
/// The default MSS (payload bytes per segment) of both halves: a 1500-byte MTU less 52 bytes of
/// IPv4 + TCP header with timestamps.
pub const DEFAULT_MSS_BYTES: u32 = 1448;
/// Maximum SACK blocks per ACK with timestamps on (40 bytes of options: 10 TS + 2 + 3·8 + pad).
pub const MAX_SACK_BLOCKS: usize = 3;
/// Linux `TCP_RTO_MAX`.
pub const RTO_MAX_NS: Nanos = 120 * NSEC_PER_SEC;
/// Linux `TCP_TIMEOUT_INIT` (RFC 6298 initial RTO).
pub const RTO_INIT_NS: Nanos = NSEC_PER_SEC;
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
    pub hop: u8,
    /// Data (true) or pure ACK (false).
    pub is_data: bool,
    /// Wire size in bytes (payload + TCP/IP + Ethernet framing).
    pub wire_bytes: u32,
    /// Data: segment index. ACK: TSval, the receiver's clock when it sent the ACK (RFC 7323),
    /// which the sender echoes in its data.
    pub seq: u64,
    /// Data: payload bytes.
    pub payload_bytes: u32,
    /// Data: TSval (transmission time). ACK: TSecr (echoed TSval, RFC 7323 TS.Recent).
    pub ts_ns: Nanos,
    /// Data: this transmission is a retransmission.
    pub is_retrans: bool,
    /// Data: the ECN codepoint (RFC 3168 §5): Not-ECT, ECT(0) or ECT(1) as the sender set it,
    /// CE once a queue marked it. One byte where two flags were: the packet stays as small.
    pub ecn: Ecn,
    /// ACK: next expected segment (cumulative). Data: TSecr, the TSval of the latest ACK the
    /// sender had received (0 before any), from which the receiver measures its RTT.
    pub ack: u64,
    /// ACK: SACK blocks [start, end) as signed offsets from `ack` in segments, most recent first
    /// (read them with [`Packet::sack_block`], add them with [`Packet::push_sack_block`]).
    /// 32-bit offsets halve the ACK's largest field: every packet in flight is one of these, and
    /// a 100 Gbit/s × 150 ms path keeps ~2 M of them in its links' pipes. They are signed
    /// because a D-SACK block (RFC 2883) may lie below `ack`: the first block reports a
    /// duplicate segment, already acknowledged or already SACKed; the sender recognises it as
    /// Linux `tcp_check_dsack` does (below `ack`, or inside the second block), so no flag is
    /// needed and the packet keeps its size.
    pub sack_rel: [(i32, i32); MAX_SACK_BLOCKS],
    pub n_sack: u8,
    /// ACK: right edge of the receive window, in segments (ack + rwnd / mss).
    pub rwnd_end: u64,
    /// ACK: cumulative count of CE-marked data segments received.
    pub ce_count: u64,
    /// ACK: the receiver delayed this ACK (timer) rather than sending it at once.
    pub delayed: bool,
}

impl Default for Packet {
    fn default() -> Packet {
        Packet::empty(0)
    }
}

impl Packet {
    /// A queue marked it Congestion Experienced.
    #[inline(always)]
    pub fn ce(&self) -> bool {
        self.ecn == Ecn::Ce
    }

    /// SACK block `i` (< `n_sack`) as absolute segment numbers [start, end).
    #[inline]
    pub fn sack_block(&self, i: usize) -> (u64, u64) {
        let (s, e) = self.sack_rel[i];
        (self.ack.wrapping_add_signed(s as i64), self.ack.wrapping_add_signed(e as i64))
    }

    /// Append a SACK block [start, end) (set `ack` first). A SACK block is within the receive
    /// window above the cumulative ACK and a D-SACK block within a window below it, so the
    /// offsets fit 32 signed bits (2³¹ segments are 3 TB).
    #[inline]
    pub fn push_sack_block(&mut self, (start, end): (u64, u64)) {
        let rel = |x: u64| {
            i32::try_from(x.wrapping_sub(self.ack) as i64)
                .expect("SACK block 2^31 segments away from the cumulative ACK")
        };
        self.sack_rel[self.n_sack as usize] = (rel(start), rel(end));
        self.n_sack += 1;
    }

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
            ecn: Ecn::NotEct,
            ack: 0,
            sack_rel: [(0, 0); MAX_SACK_BLOCKS],
            n_sack: 0,
            rwnd_end: u64::MAX,
            ce_count: 0,
            delayed: false,
        }
    }
}

/// What the path model (queue disciplines) reads and writes of a packet.
impl pathmodel::PathPacket for Packet {
    #[inline(always)]
    fn wire_bytes(&self) -> u32 {
        self.wire_bytes
    }
    #[inline(always)]
    fn ecn(&self) -> Ecn {
        self.ecn
    }
    #[inline(always)]
    fn set_ce(&mut self) {
        self.ecn = Ecn::Ce;
    }
    /// One key per connection and direction: the flow index, and data or ACK.
    #[inline(always)]
    fn flow_key(&self) -> u64 {
        ((self.flow as u64) << 1) | self.is_data as u64
    }
    /// A data segment's TSval is its earliest departure time (a sender paced by its qdisc
    /// stamps it so: `SenderConfig::paced_by_qdisc`; otherwise it is the time it was sent).
    #[inline(always)]
    fn time_to_send_ns(&self) -> Option<pathmodel::Nanos> {
        self.is_data.then_some(self.ts_ns)
    }
}

#[cfg(test)]
mod tests;
