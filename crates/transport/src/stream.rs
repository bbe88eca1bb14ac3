//! The application's side of the send buffer: how much of the stream it has written.
//!
//! Model. The stream is cut into segments of `mss` payload bytes and `write_end` is the end of
//! what the application has written, in segments. Three kinds of application:
//! - bulk: an endless stream (`write_end = u64::MAX`), never application-limited;
//! - a sized transfer (`total_bytes`): written at once; its last segment may be short; the
//!   transfer completes when it is all acknowledged;
//! - an RPC application (`rpc`): writes one message, waits until all of it is acknowledged, waits
//!   `gap_ns`, writes the next. Each message's latency (write to full acknowledgement) goes into
//!   [`Sender::rpc_hist`].
//!
//! When the writer stops (`stop_ns`), nothing more is offered: `write_end` drops to `snd_nxt`,
//! and what is outstanding still completes.

use crate::Sender;
use cc::Nanos;

pub(crate) struct SendStream {
    /// End of the data the application has written (segments); u64::MAX for bulk.
    pub(crate) write_end: u64,
    /// Payload bytes of the last segment when `total_bytes` is set.
    last_seg_bytes: u32,
}

impl SendStream {
    pub(crate) fn new(mss: u32, total_bytes: Option<u64>, rpc_segs: Option<u64>) -> SendStream {
        let (write_end, last_seg_bytes) = match total_bytes {
            None if rpc_segs.is_some() => (rpc_segs.map_or(1, |s| s.max(1)), mss),
            None => (u64::MAX, mss),
            Some(b) => {
                let n = b.div_ceil(mss as u64).max(1);
                let last = (b - (n - 1) * mss as u64) as u32;
                (n, last.max(1))
            }
        };
        SendStream { write_end, last_seg_bytes }
    }
}

impl Sender {
    /// Payload bytes of segment `seq`.
    #[inline]
    pub(crate) fn seg_payload(&self, seq: u64) -> u32 {
        if seq + 1 == self.stream.write_end && self.cfg.total_bytes.is_some() {
            self.stream.last_seg_bytes
        } else {
            self.cfg.mss
        }
    }

    /// Stop offering new data (application stop time). Outstanding data still completes.
    pub fn stop_writing(&mut self) {
        if self.stream.write_end > self.sb.snd_nxt {
            self.stream.write_end = self.sb.snd_nxt;
            if self.cfg.total_bytes.is_some() {
                self.stream.last_seg_bytes = self.cfg.mss;
            }
        }
    }

    /// Stop writing if the application's stop time has come.
    #[inline]
    pub(crate) fn check_stop(&mut self, now: Nanos) {
        if let Some(stop) = self.stop_ns {
            if now >= stop {
                self.stop_writing();
            }
        }
    }

    /// All data written has been acknowledged.
    pub fn is_done(&self) -> bool {
        self.sb.snd_una >= self.stream.write_end
    }

    /// Payload bytes acknowledged so far.
    pub fn bytes_acked(&self) -> u64 {
        let write_end = self.stream.write_end;
        if self.cfg.total_bytes.is_some() && self.sb.snd_una >= write_end && write_end > 0 {
            (write_end - 1) * self.cfg.mss as u64 + self.stream.last_seg_bytes as u64
        } else {
            self.sb.snd_una * self.cfg.mss as u64
        }
    }

    /// Written segments not sent yet (0 for a bulk stream: never application-limited).
    #[inline]
    pub(crate) fn has_unsent(&self) -> bool {
        self.sb.snd_nxt < self.stream.write_end
    }

    /// RPC workload: the current message is fully acknowledged; record its latency and write
    /// the next one now or after the gap.
    pub(crate) fn rpc_on_ack(&mut self, now: Nanos) {
        let Some(rpc) = self.cfg.rpc else { return };
        if self.sb.snd_una < self.stream.write_end || self.rpc_recorded_end >= self.stream.write_end {
            return;
        }
        self.rpc_recorded_end = self.stream.write_end;
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
    pub(crate) fn rpc_write(&mut self, now: Nanos) {
        self.rpc_next_ns = None;
        if self.stop_ns.is_some_and(|s| now >= s) {
            return;
        }
        if let Some(rpc) = self.cfg.rpc {
            self.stream.write_end += rpc.segs.max(1);
            self.rpc_issue_ns = now;
        }
    }
}
