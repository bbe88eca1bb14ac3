//! Per-flow transport options of seed 001's many-flows study that go beyond a bulk flow: the
//! RPC workload (`rpc`), the receiver application's read delay (`app_read_delay_ns`) and the
//! faster-ACK rule (`faster_acks`), (their result columns are in the `flows`
//! table, `metrics.rs`). The mechanisms live in the transport (`transport::RpcConfig`,
//! `transport::receiver`); this module only maps config to them and counters to columns.

use crate::config;
use transport::RpcConfig;

/// The sender's RPC application for a flow: messages rounded up to whole segments.
pub fn rpc(f: &config::Flow) -> Option<RpcConfig> {
    f.rpc.as_ref().map(|r| RpcConfig { segs: r.size_bytes.div_ceil(f.mss_bytes as u64).max(1), gap_ns: r.gap_ns })
}

/// Message size in segments for the receiver's message-boundary answers.
pub fn msg_segs(f: &config::Flow) -> Option<u64> {
    rpc(f).map(|r| r.segs)
}

