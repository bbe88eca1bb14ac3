//! The application's side of the send buffer: how much of the stream it has written.
//!
//! Model. The stream is cut into segments of `mss` payload bytes and `write_end` is the end of
//! what the application has written, in segments. Three kinds of application:
//! - bulk: an endless stream (`write_end = u64::MAX`), never application-limited;
//! - a sized transfer (`total_bytes`): written at once; its last segment may be short; the
//!   transfer completes when it is all acknowledged;
//! - a writer (`app_writes`): nothing at the start; [`Sender::write`] appends at any time (an
//!   RPC application, a chunked video stream …). The connection never completes; whenever all
//!   that was written is acknowledged ([`Sender::is_done`]) the application may write more.
//!
//! Application-limited periods need nothing from the application: when `poll_transmit` finds
//! nothing written and unsent while the window has room, it marks the rate sampler app-limited
//! (Linux `tcp_rate_check_app_limited`, which `tcp_sendmsg` calls; here `poll_transmit` is where
//! the model notices), so delivery-rate samples taken while the writer was idle do not lower
//! BBR's bandwidth estimate.
//!
//! When the writer stops (`stop_ns`), nothing more is offered: `write_end` drops to `snd_nxt`,
//! what is outstanding still completes, and later writes are refused.

use crate::Sender;
use cc::Nanos;

pub(crate) struct SendStream {
    /// End of the data the application has written (segments); u64::MAX for bulk.
    pub(crate) write_end: u64,
    /// Payload bytes of the last segment when `total_bytes` is set.
    last_seg_bytes: u32,
}

impl SendStream {
    pub(crate) fn new(mss: u32, total_bytes: Option<u64>, app_writes: bool) -> SendStream {
        let (write_end, last_seg_bytes) = match total_bytes {
            None if app_writes => (0, mss),
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

    /// Written segments are waiting to be sent (always, for a bulk stream).
    #[inline]
    pub(crate) fn has_unsent(&self) -> bool {
        self.sb.snd_nxt < self.stream.write_end
    }

    /// The application writes `bytes` more at `now` (only with `SenderConfig::app_writes`).
    /// Returns false, writing nothing, once the application has stopped (`stop_ns`).
    ///
    /// The write is appended as whole segments: `ceil(bytes / mss)` of them, each carrying a
    /// full MSS of payload. The model counts segments, and — as an application with
    /// `TCP_NODELAY` writing one message at a time sees — a write's last segment is not
    /// coalesced with the next write; its payload is counted as a full MSS.
    pub fn write(&mut self, now: Nanos, bytes: u64) -> bool {
        debug_assert!(self.cfg.app_writes, "Sender::write needs SenderConfig::app_writes");
        if self.stop_ns.is_some_and(|s| now >= s) {
            return false;
        }
        self.stream.write_end =
            self.stream.write_end.saturating_add(bytes.div_ceil(self.cfg.mss as u64).max(1));
        true
    }

    /// End of the data the application has written, in segments (u64::MAX for bulk).
    pub fn write_end(&self) -> u64 {
        self.stream.write_end
    }
}
