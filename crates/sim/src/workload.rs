//! Per-flow transport options of seed 001's many-flows study that go beyond a bulk flow: the
//! RPC workload (`rpc`), the receiver application's read delay (`app_read_delay_ns`) and the
//! faster-ACK rule (`faster_acks`), plus the result columns they and the offload-chunk counters
//! add to the `flows` table. The RPC application itself is `rpc.rs`; the receiver's mechanisms
//! live in `transport::receiver`; this module maps config to them and counters to columns.

use crate::config;
use crate::metrics::{Column, Table};

/// Message size in segments for the receiver's message-boundary answers: what the sender's
/// `write` of a `size_bytes` message occupies (whole segments).
pub fn msg_segs(f: &config::Flow) -> Option<u64> {
    f.rpc.as_ref().map(|r| r.size_bytes.div_ceil(f.mss_bytes as u64).max(1))
}

/// Extra `flows` columns: offload chunks and RPC latencies.
pub(crate) fn push_flow_columns(table: &mut Table, flows: &[crate::Flow]) {
    let mut bursts = Vec::with_capacity(flows.len());
    let mut burst_mean = Vec::with_capacity(flows.len());
    let mut goal_mean = Vec::with_capacity(flows.len());
    let (mut rpc_n, mut rpc_mean, mut rpc_p50, mut rpc_p99) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut withheld = Vec::with_capacity(flows.len());
    for f in flows {
        let s = &f.sender.stats;
        bursts.push(s.tso_bursts as i64);
        burst_mean.push(if s.tso_bursts > 0 { s.tso_burst_segs as f64 / s.tso_bursts as f64 } else { f64::NAN });
        goal_mean.push(if s.tso_bursts > 0 { s.tso_goal_segs as f64 / s.tso_bursts as f64 } else { f64::NAN });
        let (n, sum_ns, p50_ns, p99_ns) = match &f.rpc {
            Some(a) => (a.count, a.latency_sum_ns, a.latency_hist.quantile_ns(0.5), a.latency_hist.quantile_ns(0.99)),
            None => (0, 0, f64::NAN, f64::NAN),
        };
        rpc_n.push(n as i64);
        rpc_mean.push(if n > 0 { (sum_ns / n as u128) as f64 / 1e6 } else { f64::NAN });
        rpc_p50.push(p50_ns / 1e6);
        rpc_p99.push(p99_ns / 1e6);
        withheld.push(f.receiver.acks_withheld as i64);
    }
    table.push("tso_bursts", Column::I64(bursts));
    table.push("tso_burst_mean_segs", Column::F64(burst_mean));
    table.push("tso_goal_mean_segs", Column::F64(goal_mean));
    table.push("rpc_count", Column::I64(rpc_n));
    table.push("rpc_mean_ms", Column::F64(rpc_mean));
    table.push("rpc_p50_ms", Column::F64(rpc_p50));
    table.push("rpc_p99_ms", Column::F64(rpc_p99));
    table.push("acks_withheld", Column::I64(withheld));
}
