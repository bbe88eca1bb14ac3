//! The network (`[topology]`): a dumbbell (senders → bottleneck → receiver, with RED and ECN
//! marking on its shared link) or a star (top-of-rack switches, their buffers, cut-through
//! forwarding and 802.3x PAUSE). Defaults that depend on other fields (an access rate, a star's
//! buffer) are filled in `resolve.rs`.

use super::backends::*;
use super::*;
pub use pathmodel::aqm::QdiscSpec;
use pathmodel::impair::spec::{
    AggregationSpec, Direction, JitterSpec, LossModelSpec, PolicerSpec, ReorderSpec,
    ScheduleEntrySpec,
};
use pathmodel::impair::Trace;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The network.
// A run holds one config, read once: the dumbbell's path model (schedules, traces) makes its
// variant larger than the star's, which costs nothing worth a Box and its indirection.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Topology {
    /// N senders → router → bottleneck → router → receiver.
    #[schemars(title = "Dumbbell")]
    Dumbbell(Dumbbell),
    /// One top-of-rack switch, `workers` hosts on their own links and one aggregator host behind
    /// the switch's output port (the Waterloo data-center study's fabric).
    #[schemars(title = "Star")]
    #[schemars(extend("x-backends" = emu_refuses("dumbbell only")))]
    Star(Star),
    /// Any topology: named hosts and switches, named links, shortest-path routes with ECMP
    /// (`graph.rs`); flows name their `src` and `dst` hosts.
    #[schemars(title = "Graph")]
    #[schemars(extend("x-backends" = BOTH))]
    Graph(Graph),
    /// N bottlenecks in a row, a long flow group's hosts across all, a cross group's per hop
    /// (expands into a graph; `presets.rs`).
    #[schemars(title = "ParkingLot")]
    #[schemars(extend("x-backends" = BOTH))]
    ParkingLot(ParkingLot),
    /// Leaves and spines, every leaf linked to every spine (expands into a graph).
    #[schemars(title = "LeafSpine")]
    #[schemars(extend("x-backends" = BOTH))]
    LeafSpine(LeafSpine),
    /// The k-ary fat-tree (expands into a graph).
    #[schemars(title = "FatTree")]
    #[schemars(extend("x-backends" = BOTH))]
    FatTree(FatTree),
}

impl Topology {
    /// The graph this topology is or expands into (None: a dumbbell or a star, which keep their
    /// own builders).
    pub fn graph(&self) -> Option<std::borrow::Cow<'_, Graph>> {
        use std::borrow::Cow;
        match self {
            Topology::Graph(g) => Some(Cow::Borrowed(g)),
            Topology::ParkingLot(p) => Some(Cow::Owned(p.graph())),
            Topology::LeafSpine(l) => Some(Cow::Owned(l.graph())),
            Topology::FatTree(f) => Some(Cow::Owned(f.graph())),
            Topology::Dumbbell(_) | Topology::Star(_) => None,
        }
    }
}

/// Why the emu backend refuses a `red` table (a dumbbell's bottleneck, a graph's link).
pub(crate) const EMU_NO_RED: &str = "the emu backend's link emulator has no RED (drop-tail and \
     ECN step marking only); use --backend sim";

/// N sender hosts → router R1 → bottleneck → router R2 → one receiver host.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Dumbbell {
    /// The link every flow crosses.
    #[schemars(extend("x-backends" = BOTH))]
    pub bottleneck: Bottleneck,
    /// Every host's NIC / access link (default: 10 × the bottleneck rate).
    #[serde(default)]
    #[schemars(range(min = 1, max = MAX_RATE_BPS))]
    #[schemars(extend("x-backends" = emu_ignores("--backend emu has no access links (the \
         senders' veth and TUN devices are not rate-limited), so it has no effect there")))]
    pub access_rate_bps: Option<u64>,
    /// Every sender host's egress qdisc: `kind = "pfifo_fast"` (the default: a FIFO; TCP
    /// paces itself where its algorithm asks, Linux's internal pacing) or `"fq"` (Linux
    /// `sch_fq`: every flow is paced by fq at the departure times TCP stamps from its pacing
    /// rate, as BBR is deployed; `maxrate` caps each flow).
    #[serde(default)]
    #[schemars(extend("x-backends" = emu_refuses("--backend emu would need the kernel's fq \
         qdisc on the senders' egress and this kernel has none; use --backend sim")))]
    pub sender_qdisc: Option<QdiscSpec>,
}

impl Dumbbell {
    /// The senders' egress is Linux fq: the NIC paces, TCP stamps departure times.
    pub fn sender_fq(&self) -> Option<&QdiscSpec> {
        self.sender_qdisc.as_ref().filter(|q| matches!(q, QdiscSpec::Fq { .. }))
    }
}

ecn_step_marking! {
/// The dumbbell's shared link.
Bottleneck {
    /// Link rate (exclusive with `trace`; one of the two is required).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = MAX_RATE_BPS))]
    #[schemars(extend("x-backends" = BOTH, "default" = null))]
    pub rate_bps: Option<u64>,
    /// Two-way base propagation delay.
    #[schemars(range(max = MAX_DELAY_NS))]
    #[schemars(extend("x-backends" = BOTH))]
    pub rtt_ns: u64,
    /// Drop-tail limit: a size, a multiple of the bandwidth-delay product (with a `trace`: the
    /// BDP at the trace's mean rate), or packets.
    #[serde(default)]
    #[schemars(extend("x-backends" = BOTH))]
    pub buffer: Buffer,
    /// Bernoulli loss on the data direction (as netem on the sender).
    #[serde(default)]
    #[schemars(range(min = 0.0), extend("exclusiveMaximum" = 1.0))]
    #[schemars(extend("x-backends" = BOTH))]
    pub loss: f64,
    /// Bernoulli loss on the ACK direction.
    #[serde(default)]
    #[schemars(range(min = 0.0), extend("exclusiveMaximum" = 1.0))]
    #[schemars(extend("x-backends" = BOTH))]
    pub ack_loss: f64,
}
backends: BOTH,
then {
    /// RED on the averaged queue: marks ECN-capable packets, drops others (Linux sch_red with
    /// `ecn`).
    #[serde(default)]
    #[schemars(extend("x-backends" = emu_refuses(EMU_NO_RED)))]
    pub red: Option<Red>,
    /// The data direction's queue discipline (`kind` = "droptail", …; pathmodel's registry),
    /// with `buffer` as its limit. None or "droptail": the FIFO with the step ECN marking
    /// above. A discipline other than drop-tail is the whole queue model: it takes neither
    /// `red` nor the `ecn_threshold` fields.
    #[serde(default)]
    #[schemars(extend("x-backends" = BOTH))]
    pub qdisc: Option<QdiscSpec>,
},
path_model: PATH_EMU,
schedule: " Changes of `rate`, `rtt`, `loss` and `buffer` at given times, in increasing order \
    (`rate` and `loss` act on the data direction, `rtt` on both, `buffer` on the data \
    direction's queue). A changing delay keeps packets in order.",
trace_reverse: " The ACK direction's trace (default: the ACK direction runs at the data \
    direction's rate, or the data trace's mean rate)."
}

/// The path model runs on both backends from the same code (`crates/pathmodel`: the
/// simulator's `link/path.rs`, the emulator's `crates/emu/src/path.rs`).
const PATH_EMU: Backends = BOTH;

/// A trace file as the front passes it: its name (for messages, and `.csv` selects the CSV
/// format) and its contents (so the run's cache id follows the contents, not the path).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TraceFile {
    /// The file's path as the scenario gives it.
    #[schemars(extend("x-backends" = BOTH))]
    pub file: String,
    /// The file's contents.
    #[schemars(extend("x-backends" = BOTH))]
    pub text: String,
}

impl TraceFile {
    /// The parsed trace; the error names the file and the line.
    pub fn parse(&self) -> Result<Trace, String> {
        Trace::parse(&self.file, &self.text).map_err(|e| format!("{}: {e}", self.file))
    }
}

impl Bottleneck {
    /// The data direction's rate: `rate`, or the trace's mean rate (0 if neither is usable;
    /// `validate` refuses such a config).
    pub fn rate_bps(&self) -> u64 {
        self.path_keys().rate_bps(self.rate_bps)
    }

    /// The ACK direction's rate: the reverse trace's mean, else the data direction's.
    pub fn reverse_rate_bps(&self) -> u64 {
        self.path_keys().reverse_rate_bps(self.rate_bps())
    }
}

/// A link's path-model keys as the check (`check_path.rs`) and the builder (`link/path.rs`)
/// read them: a dumbbell's bottleneck's or a graph link's (`path_keys()`, declared with the
/// keys by `ecn_step_marking!`). The data direction is the bottleneck's, or a graph link's
/// `from` → `to`; the ACK direction is the way back.
#[derive(Clone, Copy, Debug)]
pub struct PathKeys<'a> {
    pub schedule: &'a [ScheduleEntrySpec],
    pub trace: Option<&'a TraceFile>,
    pub trace_reverse: Option<&'a TraceFile>,
    pub policer: Option<&'a PolicerSpec>,
    pub aggregation: Option<&'a AggregationSpec>,
    pub jitter: Option<&'a JitterSpec>,
    pub reorder: Option<&'a ReorderSpec>,
    pub loss_model: Option<&'a LossModelSpec>,
}

impl PathKeys<'_> {
    /// Whether the data direction uses any of the path model's mechanisms (`link/path.rs`).
    pub fn any(&self) -> bool {
        !self.schedule.is_empty()
            || self.trace.is_some()
            || self.policer.is_some()
            || self.aggregation.is_some()
            || self.jitter.is_some()
            || self.reorder.is_some()
            || self.loss_model.is_some()
    }

    /// Whether the ACK direction has mechanisms of its own (its trace, or aggregation there).
    pub fn any_reverse(&self) -> bool {
        self.trace_reverse.is_some()
            || self.aggregation.is_some_and(|a| a.direction == Direction::Ack)
    }

    /// The data direction's rate: the link's `rate`, or its trace's mean rate (0 if neither
    /// is usable; `validate` refuses such a config).
    pub fn rate_bps(&self, rate_bps: Option<u64>) -> u64 {
        match (rate_bps, self.trace) {
            (Some(r), _) => r,
            (None, Some(t)) => mean_rate_bps(t),
            (None, None) => 0,
        }
    }

    /// The ACK direction's rate: the reverse trace's mean, else `otherwise`.
    pub fn reverse_rate_bps(&self, otherwise: u64) -> u64 {
        self.trace_reverse.map_or(otherwise, mean_rate_bps)
    }
}

/// A trace's mean rate, rounded (0 if it does not parse; `validate` refuses it).
fn mean_rate_bps(t: &TraceFile) -> u64 {
    t.parse().map(|t| t.mean_rate_bps().round() as u64).unwrap_or(0)
}

/// A drop-tail limit as written: bytes, packets, or a multiple of the path's BDP.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Buffer {
    /// A size in bytes.
    Bytes(#[schemars(range(min = 1, max = MAX_BUFFER_BYTES), extend("x-backends" = BOTH))] u64),
    /// A number of packets.
    Packets(#[schemars(range(min = 1, max = 1_000_000_000), extend("x-backends" = BOTH))] u64),
    /// A multiple of rate × rtt (rounded to whole bytes, ties to even).
    Bdp(
        #[schemars(extend("exclusiveMinimum" = 0.0, "x-backends" = BOTH), range(max = 1000.0))] f64,
    ),
}

impl Default for Buffer {
    /// One bandwidth-delay product: the classic rule of thumb for a single long flow.
    fn default() -> Buffer {
        Buffer::Bdp(1.0)
    }
}

/// RED parameters (Floyd & Jacobson 1993): thresholds on the EWMA of the queue.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Red {
    /// Average queue where marking starts.
    #[schemars(range(min = 1, max = MAX_BUFFER_BYTES))]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub min_th_bytes: u64,
    /// Average queue where the marking probability reaches `max_p`.
    #[schemars(range(min = 1, max = MAX_BUFFER_BYTES))]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub max_th_bytes: u64,
    /// Marking probability at `max_th`.
    #[serde(default = "default_red_max_p")]
    #[schemars(range(max = 1.0), extend("exclusiveMinimum" = 0.0))]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub max_p: f64,
    /// EWMA weight w_q.
    #[serde(default = "default_red_weight")]
    #[schemars(range(max = 1.0), extend("exclusiveMinimum" = 0.0))]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub weight: f64,
}

fn default_red_max_p() -> f64 {
    pathmodel::aqm::red_defaults::max_p()
}
fn default_red_weight() -> f64 {
    pathmodel::aqm::red_defaults::weight()
}

impl Red {
    /// The native RED a `qdisc = { kind = "red", … }` names (None for another discipline), its
    /// packet thresholds at `frame_bytes` each: the same queue as the `red` table.
    pub fn of_qdisc(q: &QdiscSpec, frame_bytes: u32) -> Option<Red> {
        match *q {
            QdiscSpec::Red { min_th, max_th, max_p, weight } => Some(Red {
                min_th_bytes: min_th.bytes(frame_bytes),
                max_th_bytes: max_th.bytes(frame_bytes),
                max_p,
                weight,
            }),
            _ => None,
        }
    }
}

shared_buffer! {
/// One top-of-rack switch: `workers` hosts each with its own link into the switch, and one
/// aggregator/receiver host behind the switch's output port. Flow i runs on worker i.
Star {
    /// Worker hosts.
    #[schemars(range(min = 1, max = MAX_WORKERS))]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub workers: u32,
    /// Rate of every host link (both directions).
    #[schemars(range(min = 1, max = MAX_RATE_BPS))]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub rate_bps: u64,
    /// The aggregator's link, the incast bottleneck (default: `rate`).
    #[serde(default)]
    #[schemars(range(min = 1, max = MAX_RATE_BPS))]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub aggregator_rate_bps: Option<u64>,
    /// One-way propagation delay of each host link.
    #[serde(default = "default_star_delay")]
    #[schemars(range(max = MAX_DELAY_NS))]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub delay_ns: u64,
    /// Drop-tail limit of each switch output port (default 128 KB; unlimited when lossless).
    #[serde(default)]
    #[schemars(range(min = 1, max = MAX_BUFFER_BYTES))]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub buffer_bytes: Option<u64>,
}
then {
    /// Hosts per rack, the aggregator first (the Waterloo DC study's cluster: 16): with more hosts,
    /// each rack has its own ToR and the ToRs meet at one aggregation switch, so workers beyond
    /// rack 0 cross it. None: one switch for all.
    #[serde(default)]
    #[schemars(range(min = 2, max = MAX_WORKERS))]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub hosts_per_rack: Option<u32>,
    /// The rack of each worker in turn, repeated over the workers (rack 0 is the aggregator's):
    /// the Waterloo DC study's node list interleaves four racks, its first worker in another rack
    /// than the aggregator's and every fourth in the aggregator's own, `[1, 2, 3, 0]`. Needs
    /// `hosts_per_rack`, which bounds every rack (the aggregator counts in rack 0). None: the
    /// workers fill the racks in order after the aggregator.
    #[serde(default)]
    #[schemars(length(min = 1, max = MAX_WORKERS), inner(range(max = MAX_WORKERS)))]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub worker_racks: Option<Vec<u32>>,
    /// Rate of each ToR's links to and from the aggregation switch (default: `rate` × hosts per
    /// rack, non-blocking).
    #[serde(default)]
    #[schemars(range(min = 1, max = MAX_RATE_BPS))]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub uplink_rate_bps: Option<u64>,
    /// A switch hands a packet on once it has all of it, or once its `header` has arrived.
    #[serde(default)]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub forwarding: Forwarding,
    /// Cut-through: bytes that must arrive before a packet is forwarded.
    #[serde(default = "default_header_bytes")]
    #[schemars(range(min = 1, max = 65_535))]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub header_bytes: u32,
    /// CE-mark above this queue size at the switch's output ports.
    #[serde(default)]
    #[schemars(range(min = 1, max = MAX_BUFFER_BYTES))]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub ecn_threshold_bytes: Option<u64>,
    /// IEEE 802.3x PAUSE back-pressure instead of drops (thresholds in `pfc`).
    #[serde(default)]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub lossless: bool,
    /// PAUSE thresholds, used when `lossless` is true.
    #[serde(default)]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub pfc: Pfc,
    /// Host NIC clocks deviate from the switch's by up to ± this many ppm (IEEE 802.3 allows
    /// ±100): each host link's rate is scaled by a seeded uniform draw. Without it, equal-rate
    /// links stay phase-locked and a drop-tail port can lock a flow out forever.
    #[serde(default = "default_clock_ppm")]
    #[schemars(range(max = 1000))]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub clock_ppm: u32,
    /// Host transmit timing jitter (NIC DMA, PCIe): each packet reaches the switch up to this
    /// late (uniform, order kept).
    #[serde(default = "default_host_jitter")]
    #[schemars(range(max = 1_000_000_000))]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub host_jitter_ns: u64,
}
}

impl Star {
    /// The rack worker `w` is in (0: the aggregator's): where `worker_racks` puts it, or filling
    /// racks of `hosts_per_rack` in order after the aggregator; 0 for all without racks.
    pub fn rack_of(&self, w: usize) -> usize {
        match (self.hosts_per_rack, &self.worker_racks) {
            (None, _) => 0,
            (Some(_), Some(cycle)) if !cycle.is_empty() => cycle[w % cycle.len()] as usize,
            (Some(h), _) => (w + 1) / h as usize,
        }
    }

    /// Hosts in each rack up to the highest one used, the aggregator counted in rack 0 (a rack
    /// `worker_racks` skips holds 0).
    pub fn rack_hosts(&self) -> Vec<u64> {
        let mut hosts = vec![1];
        for w in 0..self.workers as usize {
            let r = self.rack_of(w);
            if r >= hosts.len() {
                hosts.resize(r + 1, 0);
            }
            hosts[r] += 1;
        }
        hosts
    }

    /// Racks up to the highest one used (1 = a single switch).
    pub fn racks(&self) -> usize {
        self.rack_hosts().len()
    }
}

fn default_star_delay() -> u64 {
    10_000
}
/// Cut-through's header: 64 bytes, a minimum Ethernet frame (the forwarding decision needs the
/// headers, and a switch waits for at least a minimum frame to rule out a runt).
pub fn default_header_bytes() -> u32 {
    64
}
fn default_clock_ppm() -> u32 {
    100
}
fn default_host_jitter() -> u64 {
    1_000
}

/// How a switch forwards.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Forwarding {
    /// Forward once the last bit has arrived.
    #[default]
    StoreAndForward,
    /// Forward once the header has arrived (when the output is not faster than the input).
    CutThrough,
}

/// 802.3x PAUSE: an output queue above `xoff` pauses every link feeding it for `quanta` × 512
/// bit times (re-sent while above XOFF); below `xon` it resumes them.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Pfc {
    /// Queue size that sends PAUSE.
    #[serde(default = "default_xoff")]
    #[schemars(range(min = 1, max = MAX_BUFFER_BYTES))]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub xoff_bytes: u64,
    /// Queue size that sends XON.
    #[serde(default = "default_xon")]
    #[schemars(range(min = 1, max = MAX_BUFFER_BYTES))]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub xon_bytes: u64,
    /// PAUSE duration in 512-bit-time quanta.
    #[serde(default = "default_quanta")]
    #[schemars(range(min = 1, max = 65_535))]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub quanta: u32,
    /// What the thresholds count: the bytes an output queue holds (egress: every link feeding
    /// it is paused at once) or, as switches account PFC, the bytes each ingress port has in
    /// the buffer (ingress: only the port over XOFF is paused; `pfc.rs`).
    #[serde(default)]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub accounting: PfcAccounting,
    /// Ingress accounting: bytes an ingress port may still take once it is over XOFF, for what
    /// is already on its way when the PAUSE takes effect; beyond it the packet is dropped.
    /// 0 (default): per port, 2 × (its rate × delay) + 2 full frames + the PAUSE frame (IEEE
    /// 802.1Qbb's headroom).
    #[serde(default)]
    #[schemars(range(max = MAX_BUFFER_BYTES))]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub headroom_bytes: u64,
    /// Host NICs act on a PAUSE this long after it arrives (0: at once; a NIC's MAC must within
    /// 512 bit times, firmware-handled NICs take longer).
    #[serde(default)]
    #[schemars(range(max = MAX_DELAY_NS))]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub nic_pause_delay_ns: u64,
    /// Host NICs obey PAUSE (false: they ignore it, as NICs with flow control off do).
    #[serde(default = "default_true")]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub nic_honours_pause: bool,
    /// With racks: the switches obey PAUSE on their inter-switch links. False: those ports
    /// ignore it (802.3x is set per port, and "receive off" is a common default), so
    /// back-pressure reaches the hosts of the congested switch only and the trunk's packets are
    /// dropped at the port (egress accounting: past `buffer`) or past their ingress headroom.
    #[serde(default = "default_true")]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub switches_honour_pause: bool,
}

impl Default for Pfc {
    fn default() -> Pfc {
        Pfc {
            xoff_bytes: default_xoff(),
            xon_bytes: default_xon(),
            quanta: default_quanta(),
            accounting: PfcAccounting::default(),
            headroom_bytes: 0,
            nic_pause_delay_ns: 0,
            nic_honours_pause: true,
            switches_honour_pause: true,
        }
    }
}

/// Where PAUSE thresholds are counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum PfcAccounting {
    /// An output queue over XOFF pauses every link feeding it (bbrlab's earlier model).
    #[default]
    Egress,
    /// Each ingress port's bytes in the buffer are counted; the port over XOFF is paused alone.
    Ingress,
}

fn default_xoff() -> u64 {
    64_000
}
fn default_xon() -> u64 {
    32_000
}
fn default_quanta() -> u32 {
    65_535
}
