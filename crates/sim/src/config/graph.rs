//! A network graph (`topology.kind = "graph"`): named hosts and switches joined by named links,
//! each link a wire in both directions (unless `duplex = false`) with its own rate, delay,
//! buffer, queue discipline and loss — the keys a dumbbell's bottleneck has. Flows name their
//! source and destination hosts; routes are shortest paths computed once, before the run
//! (`topology/routing.rs`). The presets (`presets.rs`) expand into one.

use super::backends::*;
use super::*;
use pathmodel::impair::spec::{
    AggregationSpec, JitterSpec, LossModelSpec, PolicerSpec, ReorderSpec, ScheduleEntrySpec,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A graph link's buffer when none is given: Linux's default `txqueuelen`, 1000 packets (a
/// graph link has no RTT of its own to size a BDP from).
pub const GRAPH_DEFAULT_BUFFER_PACKETS: u64 = 1000;

/// Why the emu backend refuses a graph's `[topology.fabric]`.
const EMU_NO_FABRIC: &str = "the emu backend's link emulator has no PAUSE, shared buffer, \
     cut-through or host model on a graph (its links are drop-tail, ECN or qdisc queues); use \
     --backend sim";

/// A graph link's path model on the emu backend: refused (its graph links carry rate, delay,
/// buffer, loss, ECN thresholds and `qdisc`; the path model runs on a dumbbell's bottleneck).
const GRAPH_PATH_EMU: Backends = emu_refuses(
    "the emu backend runs a path model (schedules, traces, policer, aggregation, jitter, \
     reordering, burst loss) on a dumbbell's bottleneck only, not on a graph's links; use \
     --backend sim",
);

/// Any topology: hosts and switches joined by links; flows name `src` and `dst` hosts.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Graph {
    /// The nodes: `{ name = "s1", kind = "host" }` or `kind = "switch"`. Only switches forward;
    /// a host is where flows start and end.
    #[schemars(length(min = 2, max = MAX_GRAPH_NODES))]
    #[schemars(extend("x-backends" = BOTH))]
    pub nodes: Vec<GraphNode>,
    /// The links (`[[topology.links]]`), each both directions unless `duplex = false`.
    #[schemars(length(min = 1, max = MAX_GRAPH_LINKS))]
    #[schemars(extend("x-backends" = BOTH))]
    pub links: Vec<GraphLink>,
    /// Shortest paths by `"hops"` (the default) or by `"delay"` (the sum of the links' delays,
    /// hops breaking ties). Equal-cost paths are spread over the flows by a per-flow hash at
    /// each switch (ECMP).
    #[serde(default)]
    #[schemars(extend("x-backends" = BOTH))]
    pub routing: Routing,
    /// What a star sets for its switch and its hosts, for every switch and host of the graph:
    /// PAUSE, the shared buffer, cut-through forwarding, the hosts' NIC clocks and jitter
    /// (none: store-and-forward, lossy switches with per-port buffers, exact host clocks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-backends" = emu_refuses(EMU_NO_FABRIC), "default" = null))]
    pub fabric: Option<GraphFabricKeys>,
}

shared_buffer! {
/// The switches' and hosts' options of a graph (`[topology.fabric]`), each as the star's key of
/// the same name (`topology.rs`), on every switch and host alike: one PAUSE configuration, one
/// shared buffer pool for all switch output ports (as a star's racks share one), one
/// forwarding mode.
#[derive(Default)]
GraphFabricKeys {
    /// As a star's `forwarding`: a switch hands a packet on once it has all of it, or once its
    /// `header` has arrived (from a link at least as fast as the output and without a path
    /// model).
    #[serde(default)]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub forwarding: Forwarding,
    /// Cut-through: bytes that must arrive before a packet is forwarded (default 64).
    #[serde(default)]
    #[schemars(range(min = 1, max = 65_535))]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub header_bytes: Option<u32>,
    /// As a star's `lossless`: IEEE 802.3x PAUSE back-pressure at every switch (thresholds in
    /// `pfc`). With ingress accounting, the switches' output ports drop nothing: the ingress
    /// ports' budgets decide.
    #[serde(default)]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub lossless: bool,
    /// PAUSE thresholds, used when `lossless` is true (as a star's `pfc`).
    #[serde(default)]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub pfc: Pfc,
}
then {
    /// As a star's `clock_ppm`: each host link's rate is scaled by a seeded uniform draw within
    /// ± this many ppm (default 0: exact clocks).
    #[serde(default)]
    #[schemars(range(max = 1000))]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub clock_ppm: u32,
    /// As a star's `host_jitter`: each packet a host sends reaches the far end up to this late
    /// (uniform, order kept; default 0).
    #[serde(default)]
    #[schemars(range(max = 1_000_000_000))]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub host_jitter_ns: u64,
}
}

/// Nodes of a graph: its tables are indexed densely.
pub const MAX_GRAPH_NODES: u32 = 10_000;
/// Links of a graph.
pub const MAX_GRAPH_LINKS: u32 = 100_000;

/// A node of the graph.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GraphNode {
    /// Its name (links and flows refer to it).
    #[schemars(extend("x-backends" = BOTH))]
    pub name: String,
    /// `host` (flows start and end here; never forwards) or `switch` (forwards).
    #[schemars(extend("x-backends" = BOTH))]
    pub kind: NodeRole,
}

/// What a node does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NodeRole {
    /// An end host: its links out are NICs (TSQ), flows start and end here.
    Host,
    /// A switch: forwards along the routes; its links out are output ports.
    Switch,
}

/// How routes are chosen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Routing {
    /// Fewest links.
    #[default]
    Hops,
    /// Least propagation delay (fewest links among equal delays).
    Delay,
}

ecn_step_marking! {
/// One link of the graph: `from` → `to`, and `to` → `from` with the same parameters unless
/// `duplex = false` (`reverse_rate` gives the way back its own rate). Its path-model keys are
/// a bottleneck's, the data direction being `from` → `to` and the ACK direction the way back.
GraphLink {
    /// The node the link leaves.
    #[schemars(extend("x-backends" = BOTH))]
    pub from: String,
    /// The node it reaches.
    #[schemars(extend("x-backends" = BOTH))]
    pub to: String,
    /// Its name in the queue table and in a flow's path (default `"from-to"`; the way back is
    /// `"to-from"`, or `"<name>-rev"` for a named link).
    #[serde(default)]
    #[schemars(extend("x-backends" = BOTH))]
    pub name: Option<String>,
    /// Both directions (false: `from` → `to` only).
    #[serde(default = "default_true")]
    #[schemars(extend("x-backends" = BOTH))]
    pub duplex: bool,
    /// Link rate (exclusive with `trace`; one of the two is required).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = MAX_RATE_BPS))]
    #[schemars(extend("x-backends" = BOTH, "default" = null))]
    pub rate_bps: Option<u64>,
    /// The way back's rate (default: `rate`).
    #[serde(default)]
    #[schemars(range(min = 1, max = MAX_RATE_BPS))]
    #[schemars(extend("x-backends" = BOTH))]
    pub reverse_rate_bps: Option<u64>,
    /// One-way propagation delay.
    #[serde(default)]
    #[schemars(range(max = MAX_DELAY_NS))]
    #[schemars(extend("x-backends" = BOTH))]
    pub delay_ns: u64,
    /// Drop-tail limit of each direction's queue: a size or packets (default 1000 packets,
    /// Linux's `txqueuelen`; a BDP multiple needs an RTT, which a link alone does not have).
    #[serde(default = "default_graph_buffer")]
    #[schemars(extend("x-backends" = BOTH))]
    pub buffer: Buffer,
    /// Bernoulli loss of every packet offered, each direction.
    #[serde(default)]
    #[schemars(range(min = 0.0), extend("exclusiveMaximum" = 1.0))]
    #[schemars(extend("x-backends" = BOTH))]
    pub loss: f64,
}
backends: BOTH,
then {
    /// RED (as a bottleneck's `red`): marks ECN-capable packets, drops others; `weight = 1`
    /// acts on the instantaneous queue.
    #[serde(default)]
    #[schemars(extend("x-backends" = emu_refuses(EMU_NO_RED)))]
    pub red: Option<Red>,
    /// The queue discipline of each direction (as a bottleneck's `qdisc`), with `buffer` as its
    /// limit; a discipline other than drop-tail takes neither `red` nor the ECN thresholds.
    #[serde(default)]
    #[schemars(extend("x-backends" = BOTH))]
    pub qdisc: Option<QdiscSpec>,
},
path_model: GRAPH_PATH_EMU,
schedule: " Changes of the link's `rate`, `delay`, `loss` and `buffer` at given times, in \
    increasing order: each sets its key in every direction the key governs (`rate` the data \
    direction, and the way back unless `reverse_rate` is given; `delay`, `loss` and `buffer` \
    both). A changing delay keeps packets in order.",
trace_reverse: " The way back's trace (default: the way back runs at `reverse_rate`, else at \
    the data direction's rate or the data trace's mean rate)."
}

fn default_graph_buffer() -> Buffer {
    Buffer::Packets(GRAPH_DEFAULT_BUFFER_PACKETS)
}

impl GraphLink {
    /// A link with the given ends, rate and delay and every other parameter at its default.
    pub fn new(from: &str, to: &str, rate_bps: u64, delay_ns: u64) -> GraphLink {
        GraphLink {
            from: from.to_string(),
            to: to.to_string(),
            name: None,
            duplex: true,
            rate_bps: Some(rate_bps),
            reverse_rate_bps: None,
            delay_ns,
            buffer: default_graph_buffer(),
            loss: 0.0,
            ecn_threshold_bytes: None,
            ecn_threshold_packets: None,
            red: None,
            qdisc: None,
            schedule: Vec::new(),
            trace: None,
            trace_reverse: None,
            policer: None,
            aggregation: None,
            jitter: None,
            reorder: None,
            loss_model: None,
        }
    }

    /// The data direction's rate: `rate`, or the trace's mean rate.
    pub fn rate_bps(&self) -> u64 {
        self.path_keys().rate_bps(self.rate_bps)
    }

    /// The way back's rate: its trace's mean, else `reverse_rate`, else the data direction's.
    pub fn reverse_rate_bps(&self) -> u64 {
        self.path_keys().reverse_rate_bps(self.reverse_rate_bps.unwrap_or(self.rate_bps()))
    }

    /// Name of the `from` → `to` direction.
    pub fn forward_name(&self) -> String {
        self.name.clone().unwrap_or_else(|| format!("{}-{}", self.from, self.to))
    }

    /// Name of the `to` → `from` direction.
    pub fn reverse_name(&self) -> String {
        match &self.name {
            Some(n) => format!("{n}-rev"),
            None => format!("{}-{}", self.to, self.from),
        }
    }

    /// The byte and packet limits of each direction's queue.
    pub fn limits(&self) -> (Option<u64>, Option<u64>) {
        match self.buffer {
            Buffer::Bytes(b) => (Some(b), None),
            Buffer::Packets(p) => (None, Some(p)),
            Buffer::Bdp(_) => (None, None), // refused by the check
        }
    }
}

impl Graph {
    /// The node named `name`, if any.
    pub fn node(&self, name: &str) -> Option<&GraphNode> {
        self.nodes.iter().find(|n| n.name == name)
    }
}
