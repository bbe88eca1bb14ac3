//! Per-flow transport options of the Google BBRv2 slides' many-flows study that go beyond a bulk
//! flow: the RPC workload (`rpc`), the receiver application's read delay (`app_read_delay_ns`) and
//! the faster-ACK rule (`faster_acks`); their result columns are in the `flows` table
//! (`metrics/tables/flows.toml`). The RPC application itself is `rpc.rs`; the receiver's mechanisms live in
//! `transport::receiver`; this module maps config to them.

use crate::config;

/// Message size in segments for the receiver's message-boundary answers: what the sender's
/// `write` of a `size_bytes` message occupies (whole segments).
pub fn msg_segs(f: &config::Flow) -> Option<u64> {
    f.rpc.as_ref().map(|r| r.size_bytes.div_ceil(f.mss_bytes as u64).max(1))
}
