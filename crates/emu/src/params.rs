//! A link direction's parameters as the runner writes them (`forward`/`reverse` of the
//! emulator's JSON config, built by `python/bbrlab/emu/runner.py`'s `link_plan`): the constant
//! link (rate, delay, loss, buffer, ECN threshold, queue discipline) and the path model's
//! mechanisms, in the shared crate's spec types (the core config's form, units in the names).

use pathmodel::aqm::{Limit, QdiscSpec};
use pathmodel::impair::spec::{
    AggregationSpec, JitterSpec, LossModelSpec, PolicerSpec, ReorderSpec, ScheduleEntrySpec,
};

use crate::path::TraceSpec;

/// One direction of an emulated link.
#[derive(Clone, Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkParams {
    /// Serialization rate in bit/s; 0 = infinitely fast (a pure delay line).
    #[serde(default)]
    pub rate_bps: u64,
    /// One-way propagation delay added after serialization.
    #[serde(default)]
    pub delay_ns: u64,
    /// Bernoulli loss probability applied on arrival, before the buffer.
    #[serde(default)]
    pub loss: f64,
    /// Buffer limit in wire bytes (queued + in service); None = unlimited. Every discipline
    /// tail-drops beyond it.
    #[serde(default)]
    pub limit_bytes: Option<u64>,
    /// Buffer limit in packets (queued + in service); None = unlimited.
    #[serde(default)]
    pub limit_packets: Option<u64>,
    /// Drop-tail FIFO only: mark ECN-capable packets CE when more than this many bytes wait on
    /// arrival (DCTCP's K). "Wait" excludes the packet in service, as the simulator counts.
    #[serde(default)]
    pub ecn_threshold_bytes: Option<u64>,
    /// The same threshold in packets (a packet is marked if either threshold is exceeded).
    #[serde(default)]
    pub ecn_threshold_packets: Option<u64>,
    /// Bytes added to each IP packet's length for serialization and buffer accounting
    /// (38 = Ethernet header + FCS + preamble + inter-frame gap, as the simulator charges).
    #[serde(default)]
    pub overhead_bytes: u32,
    /// The queue discipline, as a scenario names it (`{"kind": "droptail"}` when absent).
    #[serde(default)]
    pub qdisc: QdiscSpec,
    // The path model's mechanisms (`path.rs`); the specs are pathmodel's, as the core's config
    // writes them.
    /// Changes of rate, RTT (this direction's delay becomes rtt / 2), loss and buffer, at times
    /// since the run's start (`start <t0>`).
    #[serde(default)]
    pub schedule: Vec<ScheduleEntrySpec>,
    /// The transmitter follows this trace instead of `rate_bps`.
    #[serde(default)]
    pub trace: Option<TraceSpec>,
    /// A token-bucket policer before the queue.
    #[serde(default)]
    pub policer: Option<PolicerSpec>,
    /// Burst loss before the queue, beside the Bernoulli `loss`.
    #[serde(default)]
    pub loss_model: Option<LossModelSpec>,
    /// Extra delay per packet after the delay line.
    #[serde(default)]
    pub jitter: Option<JitterSpec>,
    /// Packets held back until others overtook them, after jitter.
    #[serde(default)]
    pub reorder: Option<ReorderSpec>,
    /// Batches released together, last (its `direction` is the runner's business: it gives the
    /// spec to the direction it names).
    #[serde(default)]
    pub aggregation: Option<AggregationSpec>,
}

impl LinkParams {
    pub fn delay_line(delay_ns: u64) -> Self {
        LinkParams { delay_ns, ..LinkParams::default() }
    }

    pub(crate) fn limit(&self) -> Limit {
        Limit { bytes: self.limit_bytes, packets: self.limit_packets }
    }
}
