//! The RPC (request/response) application of the Google BBRv2 slides' many-flows study, driving one
//! flow's sender through the transport's application interface (`Sender::write`).
//!
//! Model: the application writes one message of `size_bytes`, waits until all of it is
//! acknowledged, waits `gap_ns`, writes the next, and so on until the flow's stop time. A
//! message's latency runs from its write to the ACK that acknowledges its last segment (the
//! receiver's application answers a complete message at once and the answer carries that ACK;
//! see `ReceiverConfig::msg_segs`; the response is not modelled as data). The transport cuts
//! each write into whole segments, so a message occupies `ceil(size_bytes / mss)` full segments.
//!
//! The simulator calls in at three points, in this order within an instant:
//! - flow start, after `Sender::start`: the first message is written (`start`);
//! - after every `Sender::on_ack`: a fully acknowledged message is recorded, and the next one
//!   written at once (gap 0) or scheduled (`on_ack`);
//! - on the flow's sender timer, before `Sender::on_timeout`: a scheduled write that is due
//!   (`on_timer`); `next_write_ns` is folded into that timer's deadline.
//!
//! If the flow stops writing (`stop_ns`) before the whole message went out, the sender's
//! `write_end` drops to what was sent, and the truncated message counts when that is
//! acknowledged.

use cc::Nanos;
use transport::{RttHistogram, Sender};

pub(crate) struct RpcApp {
    size_bytes: u64,
    gap_ns: Nanos,
    /// When the current message was written.
    issue_ns: Nanos,
    /// When the next message will be written (after the gap), if scheduled.
    next_write_ns: Option<Nanos>,
    /// The sender's `write_end` when the last recorded message completed.
    recorded_end: u64,
    /// Completed messages, the sum of their latencies and their distribution.
    pub(crate) count: u64,
    pub(crate) latency_sum_ns: u128,
    pub(crate) latency_hist: RttHistogram,
}

impl RpcApp {
    pub(crate) fn new(size_bytes: u64, gap_ns: Nanos) -> RpcApp {
        RpcApp {
            size_bytes,
            gap_ns,
            issue_ns: 0,
            next_write_ns: None,
            recorded_end: 0,
            count: 0,
            latency_sum_ns: 0,
            latency_hist: RttHistogram::new(),
        }
    }

    /// The flow has started: write the first message.
    pub(crate) fn start(&mut self, now: Nanos, sender: &mut Sender) {
        self.write(now, sender);
    }

    /// After `Sender::on_ack`: if the current message is now fully acknowledged, record its
    /// latency and write the next one now or after the gap.
    pub(crate) fn on_ack(&mut self, now: Nanos, sender: &mut Sender) {
        if !sender.is_done() || self.recorded_end >= sender.write_end() {
            return;
        }
        self.recorded_end = sender.write_end();
        let latency_ns = now - self.issue_ns;
        self.latency_hist.record(latency_ns);
        self.count += 1;
        self.latency_sum_ns += latency_ns as u128;
        if self.gap_ns == 0 {
            self.write(now, sender);
        } else {
            self.next_write_ns = Some(now + self.gap_ns);
        }
    }

    /// When the application next wants to run (a scheduled write).
    #[inline]
    pub(crate) fn next_deadline(&self) -> Option<Nanos> {
        self.next_write_ns
    }

    /// On the flow's sender timer: write the next message if its time has come.
    pub(crate) fn on_timer(&mut self, now: Nanos, sender: &mut Sender) {
        if self.next_write_ns.is_some_and(|t| now >= t) {
            self.write(now, sender);
        }
    }

    /// Write the next message, unless the flow has stopped writing.
    fn write(&mut self, now: Nanos, sender: &mut Sender) {
        self.next_write_ns = None;
        if sender.write(now, self.size_bytes) {
            self.issue_ns = now;
        }
    }
}
