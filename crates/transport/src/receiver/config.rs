//! What a receiver is configured with: its ACK policy switches, the receive buffer or
//! autotuning, and how the application reads (the module doc of `receiver` explains each rule).

use crate::DEFAULT_MSS_BYTES;
use cc::Nanos;

/// `repr(C)`, the per-segment flags first: the receiver's hot lines hold them (see [`Receiver`]).
#[derive(Clone, Debug)]
#[repr(C)]
pub struct ReceiverConfig {
    pub mss: u32,
    pub delayed_ack: bool,
    /// DCTCP's receiver CE state machine: immediate ACK on a CE-state change (see module doc).
    pub ce_state_ack: bool,
    /// The Google BBRv2 slides' faster-ACK fix (module doc): true = ACK every 2nd segment whatever
    /// the window; false = the old Linux rule that also requires the offered window not to have
    /// shrunk.
    pub faster_acks: bool,
    /// Linux receive-window autotuning when `rcvbuf_bytes` is None (`rcv_space.rs`): the window
    /// grows from the SYN-ACK's with the rate, and a segment that grows it is ACKed at once.
    /// False: no limit at all.
    pub autotune: bool,
    /// Receive buffer: the largest window advertised, bytes (None = unlimited, or autotuned).
    pub rcvbuf_bytes: Option<u64>,
    /// The application reads this long after unread data first arrives (None = at once).
    pub app_read_delay_ns: Option<Nanos>,
    /// Messages of this many segments: a completely read message is answered (and ACKed) at once.
    pub msg_segs: Option<u64>,
}

impl Default for ReceiverConfig {
    fn default() -> Self {
        ReceiverConfig {
            mss: DEFAULT_MSS_BYTES,
            rcvbuf_bytes: None,
            delayed_ack: true,
            ce_state_ack: false,
            faster_acks: true,
            autotune: false,
            app_read_delay_ns: None,
            msg_segs: None,
        }
    }
}
