//! The scenario the core runs: one typed schema, the single definition of every scenario field.
//!
//! A scenario file (TOML, human units: `rate = "2.5Gbps"`) and this config (JSON, integer SI
//! units: `rate_bps = 2500000000`) have the same shape and the same fields; a field's name here
//! is its scenario name plus its unit (`_bps` bit/s, `_ns` nanoseconds, `_bytes` bytes, `_segs`
//! segments), and `f64` fields are fractions. Everything else is derived from these types:
//!
//! - the JSON Schema ([`schema`]) with each field's description, default and bounds — from it the
//!   Python front generates its scenario model (`python/bbrlab/scenario/model.py`) and the docs
//!   their field tables, and tests check both are current;
//! - the bounds check ([`check`]), which walks the schema, so a bound written here is enforced by
//!   the core and by the front alike; relations between fields are checked in `check.rs` only;
//! - defaults: written once here, as serde defaults (the schema carries them to the front);
//!   defaults that depend on other fields (a dumbbell's access rate, a star's buffer) are filled
//!   by [`Config::resolved`].
//!
//! Bounds are physical limits, not taste: they keep every value in a range where the simulator's
//! integer arithmetic is exact and its memory bounded (see the constants below).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub mod check;
pub mod human;
mod resolve;

pub use check::ConfigError;
pub use resolve::{max_frame_bytes, pfc_headroom_bytes, Derived};

/// 10 Tbit/s: well above any link the studies model (100G and 400G paths); keeps rate × time
/// products in u128 and serialization times ≥ 1 ps per byte.
pub const MAX_RATE_BPS: u64 = 10_000_000_000_000;
/// 10⁶ s of simulated time (11.6 days): longer runs are never needed and would overflow the
/// sample buffers' bounds long before.
pub const MAX_DURATION_NS: u64 = 1_000_000 * 1_000_000_000;
/// 100 s: far beyond any terrestrial or satellite path (GEO ≈ 0.6 s), keeps RTT × rate products
/// exact.
pub const MAX_DELAY_NS: u64 = 100 * 1_000_000_000;
/// 1 TB: no switch, NIC or socket buffer comes near it.
pub const MAX_BUFFER_BYTES: u64 = 1_000_000_000_000;
/// 1 PB: the largest transfer a run can move at MAX_RATE_BPS in MAX_DURATION_NS is larger, but no
/// study needs more than this and byte counters stay far from i64::MAX.
pub const MAX_TRANSFER_BYTES: u64 = 1_000_000_000_000_000;
/// A sample every µs is already finer than any queue or RTT effect the tables resolve.
pub const MIN_SAMPLE_INTERVAL_NS: u64 = 1_000;
/// Flows after expanding `count`: the simulator's per-flow state is sized for 10⁵ flows.
pub const MAX_FLOWS: u64 = 100_000;
/// Hosts on a star: its queue and host tables are indexed densely.
pub const MAX_WORKERS: u32 = 10_000;
/// Rows of the sampled tables (timeseries + queue) a run may produce: each row costs about 160
/// bytes in the core and ~340 bytes at the peak of a whole `bbrlab run` (decode, Parquet), so
/// this bounds a run's memory whatever `sample_interval` and `duration` say (3.59 GB measured
/// at 9.99 M rows).
pub const MAX_SAMPLE_ROWS: u64 = 10_000_000;

/// One scenario: the network, the flows and the applications on it.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Run name (used for the run directory): letters, digits, `.`, `_`, `-`; at most 100.
    #[serde(default = "default_name")]
    pub name: String,
    /// Seed of every random stream (loss, BBR's phase choice); the same seed gives bit-identical
    /// results.
    #[serde(default = "default_seed")]
    #[schemars(range(max = 9_223_372_036_854_775_807u64))]
    pub seed: u64,
    /// Simulated time.
    #[schemars(range(min = 1, max = MAX_DURATION_NS))]
    pub duration_ns: u64,
    /// Sampling period of the time series.
    #[serde(default = "default_sample")]
    #[schemars(range(min = MIN_SAMPLE_INTERVAL_NS, max = MAX_DURATION_NS))]
    pub sample_interval_ns: u64,
    /// The network: `kind = "dumbbell"` or `"star"`.
    pub topology: Topology,
    /// Bulk or sized transfers, each `count` times.
    #[serde(default)]
    pub flows: Vec<Flow>,
    /// Applications the core expands into transfers (partition/aggregate queries on a star).
    #[serde(default)]
    pub apps: Vec<App>,
    /// End hosts' CPUs, NIC receive queues and receive offload (`host.rs`; the `hosts` table);
    /// none: hosts cost nothing and every packet reaches TCP the moment it arrives.
    #[serde(default)]
    pub hosts: Option<Hosts>,
}

/// Hosts as their CPUs and NICs shape a transfer. Every host has `cores` cores; a flow's
/// protocol work runs on core (flow id mod cores) at its sender and at its receiver (RSS/XPS
/// keep a flow on one queue and core, so one stream has a ceiling). Packets arriving at a host
/// wait in that core's receive ring until an interrupt (moderated by `irq_delay`/`irq_frames`)
/// starts a NAPI poll, which merges in-order segments of a flow into one skb (GRO) and hands
/// them to TCP: one ACK per merged skb (stretch ACKs). The costs are CPU time per event; a busy
/// core delays the next poll and the next offload chunk. Defaults: a 2020s server core with a
/// 100G NIC (mlx5's moderation and ring defaults; costs of the order Cai et al., "Understanding
/// Host Network Stack Overheads", SIGCOMM 2021, measured: one core receives a single 1500-byte
/// MTU stream at a few tens of Gbit/s, the copy to the application the largest share).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Hosts {
    /// Cores per host.
    #[serde(default = "default_cores")]
    #[schemars(range(min = 1, max = 1024))]
    pub cores: u32,
    /// Interrupt moderation (`ethtool -C rx-usecs`): the interrupt fires this long after the first
    /// packet that finds none pending (mlx5 default 8 µs).
    #[serde(default = "default_irq_delay")]
    #[schemars(range(max = MAX_DELAY_NS))]
    pub irq_delay_ns: u64,
    /// ... or as soon as this many packets wait (`rx-frames`, mlx5 default 128).
    #[serde(default = "default_irq_frames")]
    #[schemars(range(min = 1, max = 1_000_000))]
    pub irq_frames: u32,
    /// Packets one NAPI poll takes (Linux `NAPI_POLL_WEIGHT`); GRO flushes at the end of a poll.
    #[serde(default = "default_napi_budget")]
    #[schemars(range(min = 1, max = 1_000_000))]
    pub napi_budget: u32,
    /// Receive offload: a poll merges a flow's in-order segments (same CE bit) into one skb.
    #[serde(default = "default_true")]
    pub gro: bool,
    /// Largest merged skb (Linux `gro_max_size`, 64 KB).
    #[serde(default = "default_gro_max")]
    #[schemars(range(min = 1, max = MAX_BUFFER_BYTES))]
    pub gro_max_bytes: u64,
    /// Receive ring per core (packets; mlx5 default 1024); a packet that finds it full is dropped.
    #[serde(default = "default_ring")]
    #[schemars(range(min = 1, max = 10_000_000))]
    pub rx_ring_pkts: u32,
    /// 802.3x flow control (`ethtool -A rx on`): a host with a ring 3/4 full pauses the link that
    /// feeds it until every ring is at most half full, so the last switch port queues (a
    /// dumbbell's port towards the host then has the bottleneck's buffer) instead of the ring
    /// dropping.
    #[serde(default)]
    pub flow_control: bool,
    /// CPU per interrupt (entry, softirq, NAPI poll set-up).
    #[serde(default = "default_irq_cost")]
    #[schemars(range(max = MAX_DELAY_NS))]
    pub irq_cost_ns: u64,
    /// CPU per packet received (driver descriptor, buffer, GRO merge).
    #[serde(default = "default_rx_segment_cost")]
    #[schemars(range(max = MAX_DELAY_NS))]
    pub rx_segment_cost_ns: u64,
    /// CPU per skb handed to TCP after GRO (IP/TCP receive, building the ACK, waking the reader).
    #[serde(default = "default_rx_skb_cost")]
    #[schemars(range(max = MAX_DELAY_NS))]
    pub rx_skb_cost_ns: u64,
    /// Copy to the application (cache-cold DMA'd data), as a rate.
    #[serde(default = "default_rx_copy_rate")]
    #[schemars(range(min = 1, max = MAX_RATE_BPS))]
    pub rx_copy_rate_bps: u64,
    /// CPU per offload chunk sent (tcp_write_xmit, IP output, qdisc, driver doorbell).
    #[serde(default = "default_tx_chunk_cost")]
    #[schemars(range(max = MAX_DELAY_NS))]
    pub tx_chunk_cost_ns: u64,
    /// CPU per segment of a chunk (TSO descriptors).
    #[serde(default = "default_tx_segment_cost")]
    #[schemars(range(max = MAX_DELAY_NS))]
    pub tx_segment_cost_ns: u64,
    /// Copy from the application (warm buffer), as a rate; new data only.
    #[serde(default = "default_tx_copy_rate")]
    #[schemars(range(min = 1, max = MAX_RATE_BPS))]
    pub tx_copy_rate_bps: u64,
    /// CPU per ACK processed by the sender (tcp_ack: clean the retransmit queue, RTT and rate
    /// samples, loss detection).
    #[serde(default = "default_ack_cost")]
    #[schemars(range(max = MAX_DELAY_NS))]
    pub ack_cost_ns: u64,
    /// CPU of the congestion control's per-ACK work, charged on ACKs it does not skip (BBRv2/v3's
    /// fast path, the window algorithms' not-cwnd-limited return).
    #[serde(default = "default_cc_ack_cost")]
    #[schemars(range(max = MAX_DELAY_NS))]
    pub cc_ack_cost_ns: u64,
    /// CPU per timer that fires (pacing, retransmission, delayed ACK).
    #[serde(default = "default_timer_cost")]
    #[schemars(range(max = MAX_DELAY_NS))]
    pub timer_cost_ns: u64,
}

fn default_cores() -> u32 {
    8
}
fn default_irq_delay() -> u64 {
    8_000
}
fn default_irq_frames() -> u32 {
    128
}
fn default_napi_budget() -> u32 {
    64
}
fn default_gro_max() -> u64 {
    65_536
}
fn default_ring() -> u32 {
    1024
}
fn default_irq_cost() -> u64 {
    1_000
}
fn default_rx_segment_cost() -> u64 {
    100
}
fn default_rx_skb_cost() -> u64 {
    1_000
}
fn default_rx_copy_rate() -> u64 {
    80_000_000_000
}
fn default_tx_chunk_cost() -> u64 {
    1_500
}
fn default_tx_segment_cost() -> u64 {
    20
}
fn default_tx_copy_rate() -> u64 {
    160_000_000_000
}
fn default_ack_cost() -> u64 {
    500
}
fn default_cc_ack_cost() -> u64 {
    50
}
fn default_timer_cost() -> u64 {
    500
}

impl Default for Hosts {
    fn default() -> Hosts {
        serde_json::from_value(serde_json::json!({})).expect("every field has a default")
    }
}

fn default_name() -> String {
    "scenario".to_string()
}
fn default_seed() -> u64 {
    1
}
fn default_sample() -> u64 {
    100_000_000
}

/// The network.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Topology {
    /// N senders → router → bottleneck → router → receiver.
    #[schemars(title = "Dumbbell")]
    Dumbbell(Dumbbell),
    /// One top-of-rack switch, `workers` hosts on their own links and one aggregator host behind
    /// the switch's output port (the Waterloo data-center study's fabric).
    #[schemars(title = "Star")]
    Star(Star),
}

/// N sender hosts → router R1 → bottleneck → router R2 → one receiver host.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Dumbbell {
    /// The link every flow crosses.
    pub bottleneck: Bottleneck,
    /// Every host's NIC / access link (default: 10 × the bottleneck rate).
    #[serde(default)]
    #[schemars(range(min = 1, max = MAX_RATE_BPS))]
    pub access_rate_bps: Option<u64>,
}

/// The dumbbell's shared link.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Bottleneck {
    /// Link rate.
    #[schemars(range(min = 1, max = MAX_RATE_BPS))]
    pub rate_bps: u64,
    /// Two-way base propagation delay.
    #[schemars(range(max = MAX_DELAY_NS))]
    pub rtt_ns: u64,
    /// Drop-tail limit: a size, a multiple of the bandwidth-delay product, or packets.
    #[serde(default)]
    pub buffer: Buffer,
    /// Bernoulli loss on the data direction (as netem on the sender).
    #[serde(default)]
    #[schemars(range(min = 0.0), extend("exclusiveMaximum" = 1.0))]
    pub loss: f64,
    /// Bernoulli loss on the ACK direction.
    #[serde(default)]
    #[schemars(range(min = 0.0), extend("exclusiveMaximum" = 1.0))]
    pub ack_loss: f64,
    /// CE-mark ECN-capable packets arriving when more than this many bytes wait (DCTCP's K).
    #[serde(default)]
    #[schemars(range(min = 1, max = MAX_BUFFER_BYTES))]
    pub ecn_threshold_bytes: Option<u64>,
    /// The same threshold in packets (a packet is marked if either threshold is exceeded).
    #[serde(default)]
    #[schemars(range(min = 1, max = 1_000_000_000))]
    pub ecn_threshold_packets: Option<u64>,
    /// RED on the averaged queue: marks ECN-capable packets, drops others (Linux sch_red with
    /// `ecn`).
    #[serde(default)]
    pub red: Option<Red>,
}

/// A drop-tail limit as written: bytes, packets, or a multiple of the path's BDP.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Buffer {
    /// A size in bytes.
    Bytes(#[schemars(range(min = 1, max = MAX_BUFFER_BYTES))] u64),
    /// A number of packets.
    Packets(#[schemars(range(min = 1, max = 1_000_000_000))] u64),
    /// A multiple of rate × rtt (rounded to whole bytes, ties to even).
    Bdp(#[schemars(extend("exclusiveMinimum" = 0.0), range(max = 1000.0))] f64),
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
    pub min_th_bytes: u64,
    /// Average queue where the marking probability reaches `max_p`.
    #[schemars(range(min = 1, max = MAX_BUFFER_BYTES))]
    pub max_th_bytes: u64,
    /// Marking probability at `max_th`.
    #[serde(default = "default_red_max_p")]
    #[schemars(range(max = 1.0), extend("exclusiveMinimum" = 0.0))]
    pub max_p: f64,
    /// EWMA weight w_q.
    #[serde(default = "default_red_weight")]
    #[schemars(range(max = 1.0), extend("exclusiveMinimum" = 0.0))]
    pub weight: f64,
}

fn default_red_max_p() -> f64 {
    0.1
}
fn default_red_weight() -> f64 {
    0.002
}

/// One top-of-rack switch: `workers` hosts each with its own link into the switch, and one
/// aggregator/receiver host behind the switch's output port. Flow i runs on worker i.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Star {
    /// Worker hosts.
    #[schemars(range(min = 1, max = MAX_WORKERS))]
    pub workers: u32,
    /// Rate of every host link (both directions).
    #[schemars(range(min = 1, max = MAX_RATE_BPS))]
    pub rate_bps: u64,
    /// The aggregator's link, the incast bottleneck (default: `rate`).
    #[serde(default)]
    #[schemars(range(min = 1, max = MAX_RATE_BPS))]
    pub aggregator_rate_bps: Option<u64>,
    /// One-way propagation delay of each host link.
    #[serde(default = "default_star_delay")]
    #[schemars(range(max = MAX_DELAY_NS))]
    pub delay_ns: u64,
    /// Drop-tail limit of each switch output port (default 128 KB; unlimited when lossless).
    #[serde(default)]
    #[schemars(range(min = 1, max = MAX_BUFFER_BYTES))]
    pub buffer_bytes: Option<u64>,
    /// Limit on the bytes queued in all output ports together (none by default). With PFC's
    /// ingress accounting: the pool the ingress ports' usage below XOFF draws on (headroom is
    /// reserved per port, outside it).
    #[serde(default)]
    #[schemars(range(min = 1, max = MAX_BUFFER_BYTES))]
    pub shared_buffer_bytes: Option<u64>,
    /// Dynamic threshold of the shared buffer (Mellanox and Broadcom call it alpha; Choudhury
    /// and Hahne 1998): an output queue takes a packet only while its bytes stay below
    /// `alpha` × the free shared buffer, so one congested queue gets alpha / (1 + alpha) of the
    /// pool. Needs `shared_buffer`; none = first come, first served up to the pool.
    #[serde(default)]
    #[schemars(range(min = 0.0078125, max = 64.0))]
    pub shared_buffer_alpha: Option<f64>,
    /// Hosts per rack, the aggregator first (seed 000's cluster: 16): with more hosts, each rack
    /// has its own ToR and the ToRs meet at one aggregation switch, so workers beyond rack 0
    /// cross it. None: one switch for all.
    #[serde(default)]
    #[schemars(range(min = 2, max = MAX_WORKERS))]
    pub hosts_per_rack: Option<u32>,
    /// The rack of each worker in turn, repeated over the workers (rack 0 is the aggregator's):
    /// seed 000's node list interleaves four racks, its first worker in another rack than the
    /// aggregator's and every fourth in the aggregator's own, `[1, 2, 3, 0]`. Needs
    /// `hosts_per_rack`, which bounds every rack (the aggregator counts in rack 0). None: the
    /// workers fill the racks in order after the aggregator.
    #[serde(default)]
    #[schemars(length(min = 1, max = MAX_WORKERS), inner(range(max = MAX_WORKERS)))]
    pub worker_racks: Option<Vec<u32>>,
    /// Rate of each ToR's links to and from the aggregation switch (default: `rate` × hosts per
    /// rack, non-blocking).
    #[serde(default)]
    #[schemars(range(min = 1, max = MAX_RATE_BPS))]
    pub uplink_rate_bps: Option<u64>,
    /// A switch hands a packet on once it has all of it, or once its `header` has arrived.
    #[serde(default)]
    pub forwarding: Forwarding,
    /// Cut-through: bytes that must arrive before a packet is forwarded.
    #[serde(default = "default_header_bytes")]
    #[schemars(range(min = 1, max = 65_535))]
    pub header_bytes: u32,
    /// CE-mark above this queue size at the switch's output ports.
    #[serde(default)]
    #[schemars(range(min = 1, max = MAX_BUFFER_BYTES))]
    pub ecn_threshold_bytes: Option<u64>,
    /// IEEE 802.3x PAUSE back-pressure instead of drops (thresholds in `pfc`).
    #[serde(default)]
    pub lossless: bool,
    /// PAUSE thresholds, used when `lossless` is true.
    #[serde(default)]
    pub pfc: Pfc,
    /// Host NIC clocks deviate from the switch's by up to ± this many ppm (IEEE 802.3 allows
    /// ±100): each host link's rate is scaled by a seeded uniform draw. Without it, equal-rate
    /// links stay phase-locked and a drop-tail port can lock a flow out forever.
    #[serde(default = "default_clock_ppm")]
    #[schemars(range(max = 1000))]
    pub clock_ppm: u32,
    /// Host transmit timing jitter (NIC DMA, PCIe): each packet reaches the switch up to this
    /// late (uniform, order kept).
    #[serde(default = "default_host_jitter")]
    #[schemars(range(max = 1_000_000_000))]
    pub host_jitter_ns: u64,
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
fn default_header_bytes() -> u32 {
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
    pub xoff_bytes: u64,
    /// Queue size that sends XON.
    #[serde(default = "default_xon")]
    #[schemars(range(min = 1, max = MAX_BUFFER_BYTES))]
    pub xon_bytes: u64,
    /// PAUSE duration in 512-bit-time quanta.
    #[serde(default = "default_quanta")]
    #[schemars(range(min = 1, max = 65_535))]
    pub quanta: u32,
    /// What the thresholds count: the bytes an output queue holds (egress: every link feeding
    /// it is paused at once) or, as switches account PFC, the bytes each ingress port has in
    /// the buffer (ingress: only the port over XOFF is paused; `pfc.rs`).
    #[serde(default)]
    pub accounting: PfcAccounting,
    /// Ingress accounting: bytes an ingress port may still take once it is over XOFF, for what
    /// is already on its way when the PAUSE takes effect; beyond it the packet is dropped.
    /// 0 (default): per port, 2 × (its rate × delay) + 2 full frames + the PAUSE frame (IEEE
    /// 802.1Qbb's headroom).
    #[serde(default)]
    #[schemars(range(max = MAX_BUFFER_BYTES))]
    pub headroom_bytes: u64,
    /// Host NICs act on a PAUSE this long after it arrives (0: at once; a NIC's MAC must within
    /// 512 bit times, firmware-handled NICs take longer).
    #[serde(default)]
    #[schemars(range(max = MAX_DELAY_NS))]
    pub nic_pause_delay_ns: u64,
    /// Host NICs obey PAUSE (false: they ignore it, as NICs with flow control off do).
    #[serde(default = "default_true")]
    pub nic_honours_pause: bool,
    /// With racks: the switches obey PAUSE on their inter-switch links. False: those ports
    /// ignore it (802.3x is set per port, and "receive off" is a common default), so
    /// back-pressure reaches the hosts of the congested switch only and the trunk's packets are
    /// dropped at the port (egress accounting: past `buffer`) or past their ingress headroom.
    #[serde(default = "default_true")]
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

/// An application the core expands into transfers.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum App {
    /// Partition/aggregate (the Waterloo study's §4.1): the aggregator asks workers 0..n−1 for
    /// size/n bytes each over new connections; the response time runs until all n responses are
    /// complete; `repetitions` queries, each `gap` after the previous one ended (the `events`
    /// table).
    #[schemars(title = "QueryApp")]
    Query(QueryApp),
}

/// Partition/aggregate (the Waterloo study's §4.1): the aggregator asks workers 0..n−1 for
/// size/n bytes each over new connections; the response time runs until all n responses are
/// complete; `repetitions` queries, each `gap` after the previous one ended (the `events` table).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QueryApp {
    /// Workers asked per query (workers 0..n−1).
    #[schemars(range(min = 1, max = MAX_WORKERS))]
    pub workers: u32,
    /// Bytes per query, split evenly (integer division) among the workers.
    #[serde(default = "default_query_size")]
    #[schemars(range(min = 1, max = MAX_TRANSFER_BYTES))]
    pub size_bytes: u64,
    /// Queries in a row.
    #[serde(default = "default_repetitions")]
    #[schemars(range(min = 1, max = 1_000_000))]
    pub repetitions: u32,
    /// When the first query starts.
    #[serde(default)]
    #[schemars(range(max = MAX_DURATION_NS))]
    pub start_ns: u64,
    /// Pause between the end of a query and the next.
    #[serde(default = "default_query_gap")]
    #[schemars(range(max = MAX_DURATION_NS))]
    pub gap_ns: u64,
    /// Each request leaves the aggregator after a uniform random delay up to this.
    #[serde(default)]
    #[schemars(range(max = MAX_DURATION_NS))]
    pub jitter_ns: u64,
    /// Open the connections inside the timed query (SYN, SYN-ACK before the request); false =
    /// opened before the clock starts, as the seed's aggregator did.
    #[serde(default)]
    pub handshake: bool,
    /// Transport settings of every response (cc, min_rto, …); start, stop, bytes, count and
    /// sender are set by the app.
    pub flow: Flow,
}

fn default_query_size() -> u64 {
    1 << 20
}
fn default_repetitions() -> u32 {
    100
}
fn default_query_gap() -> u64 {
    50_000_000
}

/// A transfer (bulk unless `bytes` or `rpc` is set) and its TCP settings.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Flow {
    /// Algorithm (`bbrlab cc` lists them).
    #[schemars(extend("enum" = cc::registry::valid_names()))]
    pub cc: String,
    /// Replicate the flow.
    #[serde(default = "default_count")]
    #[schemars(range(min = 1, max = MAX_FLOWS))]
    pub count: u32,
    /// When the application starts writing.
    #[serde(default)]
    #[schemars(range(max = MAX_DURATION_NS))]
    pub start_ns: u64,
    /// When the application stops writing (none: at the end of the run).
    #[serde(default)]
    #[schemars(range(max = MAX_DURATION_NS))]
    pub stop_ns: Option<u64>,
    /// Transfer size; the flow completion time is then reported (none: unlimited).
    #[serde(default)]
    #[schemars(range(min = 1, max = MAX_TRANSFER_BYTES))]
    pub bytes: Option<u64>,
    /// Added to this flow's RTT (on its access link).
    #[serde(default)]
    #[schemars(range(max = MAX_DELAY_NS))]
    pub extra_rtt_ns: u64,
    /// Segment size.
    #[serde(default = "default_mss")]
    #[schemars(range(min = 64, max = 65_000))]
    pub mss_bytes: u32,
    /// Initial window.
    #[serde(default = "default_iw")]
    #[schemars(range(min = 1, max = 1_000_000))]
    pub initial_cwnd_segs: u32,
    /// `auto` (BBR and BQL pace, others not), `on`, `off`.
    #[serde(default)]
    pub pacing: Pacing,
    /// Pacing cap, as `SO_MAX_PACING_RATE` / fq `maxrate`.
    #[serde(default)]
    #[schemars(range(min = 1, max = MAX_RATE_BPS))]
    pub max_pacing_rate_bps: Option<u64>,
    /// Send buffer: unacknowledged plus unsent data (none: unlimited).
    #[serde(default)]
    #[schemars(range(min = 1, max = MAX_BUFFER_BYTES))]
    pub sndbuf_bytes: Option<u64>,
    /// Receive buffer: the advertised window (none: unlimited).
    #[serde(default)]
    #[schemars(range(min = 1, max = MAX_BUFFER_BYTES))]
    pub rcvbuf_bytes: Option<u64>,
    /// Negotiate ECN.
    #[serde(default)]
    pub ecn: bool,
    /// TSO-style bursts (≈1 ms of the pacing rate, 2 segments to 64 KB).
    #[serde(default = "default_true")]
    pub tso: bool,
    /// Linux's TSO deferral (`tcp_tso_should_defer`, `tcp_tso_win_divisor` 3) for unpaced flows:
    /// new data waits for a full offload frame or a third of the window unless the next ACK would
    /// come too late; false = send what each ACK frees at once.
    #[serde(default = "default_true")]
    pub tso_defer: bool,
    /// Minimum RTO (Linux's default 200 ms).
    #[serde(default = "default_min_rto")]
    #[schemars(range(min = 1, max = MAX_DELAY_NS))]
    pub min_rto_ns: u64,
    /// Receiver ACKs every 2nd segment, 40 ms timer, quick-ACK at start.
    #[serde(default = "default_true")]
    pub delayed_ack: bool,
    /// BBRv2/v3 offload sizing adds 64 KB >> (min_rtt / 512 µs) (Google's BBRv2 slides); false =
    /// rate only.
    #[serde(default = "default_true")]
    pub tso_minrtt_autosize: bool,
    /// BBRv2/v3 fast path (Google's BBRv2 slides): app-limited ACKs below max_bw in a round
    /// without loss or CE skip the model and control update; false = the whole algorithm on
    /// every ACK. Its saving shows in the host CPU (`hosts`).
    #[serde(default = "default_true")]
    pub fast_path: bool,
    /// `ictcp`: the receiver host sizes windows with ICTCP (Wu et al., CoNEXT 2010).
    #[serde(default)]
    pub receiver_window: ReceiverWindow,
    /// Histogram of inter-departure gaps at the sender's NIC (`gaps` table).
    #[serde(default)]
    pub gap_histogram: bool,
    /// Receiver ACKs every 2nd segment even when its offered window shrank (Google's BBRv2
    /// slides' fix); false = the old Linux rule.
    #[serde(default = "default_true")]
    pub faster_acks: bool,
    /// The receiving application reads this long after data arrives (none: at once).
    #[serde(default)]
    #[schemars(range(max = MAX_DELAY_NS))]
    pub app_read_delay_ns: Option<u64>,
    /// Request/response workload; per-message latency in the `rpc_*` flow columns.
    #[serde(default)]
    pub rpc: Option<Rpc>,
    /// Flows with the same index share one sender host and its NIC (none: own host; on a star,
    /// the worker with the flow's number).
    #[serde(default)]
    #[schemars(range(max = MAX_FLOWS))]
    pub sender: Option<u32>,
}

fn default_count() -> u32 {
    1
}
fn default_mss() -> u32 {
    1448
}
fn default_iw() -> u32 {
    10
}
fn default_true() -> bool {
    true
}
fn default_min_rto() -> u64 {
    200_000_000
}

/// Whether the flow paces.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Pacing {
    /// Rate-based algorithms pace (they ask for it, as Linux's `SK_PACING_NEEDED`), others not.
    #[default]
    Auto,
    On,
    Off,
}

impl Pacing {
    /// The transport's setting: forced on, forced off, or left to the algorithm.
    pub fn forced(self) -> Option<bool> {
        match self {
            Pacing::Auto => None,
            Pacing::On => Some(true),
            Pacing::Off => Some(false),
        }
    }
}

/// Who sizes the advertised window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReceiverWindow {
    /// `rcvbuf`, if set.
    #[default]
    Static,
    /// The receiver host's ICTCP controller (`ictcp.rs`).
    Ictcp,
}

/// Request/response workload: write `size` (rounded up to whole segments), wait for the full ACK,
/// wait `gap`, repeat.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Rpc {
    /// Message size.
    #[schemars(range(min = 1, max = MAX_TRANSFER_BYTES))]
    pub size_bytes: u64,
    /// Pause after a message is fully acknowledged.
    #[serde(default)]
    #[schemars(range(max = MAX_DELAY_NS))]
    pub gap_ns: u64,
}

/// A config that passed every check: bounds, types and the relations between fields. The
/// simulator is built from one (`Simulation::from_checked`), so a config checked once (the front
/// checks it when it reads the scenario) is never checked again on its way to the run.
#[derive(Clone, Debug)]
pub struct Checked(Config);

impl Checked {
    /// Check the relations between the fields of a config whose bounds and types are known good
    /// (a typed [`Config`] built in Rust).
    pub fn new(cfg: Config) -> Result<Checked, ConfigError> {
        cfg.validate()?;
        Ok(Checked(cfg))
    }

    pub fn into_config(self) -> Config {
        self.0
    }
}

impl std::ops::Deref for Checked {
    type Target = Config;
    fn deref(&self) -> &Config {
        &self.0
    }
}

impl Config {
    /// Parse and check a config (unknown fields, types, bounds, relations); every error names
    /// the field.
    pub fn check_json(s: &str) -> Result<Checked, ConfigError> {
        let value: serde_json::Value = serde_json::from_str(s)
            .map_err(|e| ConfigError::new("", format!("not valid JSON: {e}")))?;
        Config::check_value(value)
    }

    /// As [`check_json`](Config::check_json), from a parsed JSON value.
    pub fn check_value(value: serde_json::Value) -> Result<Checked, ConfigError> {
        check::check_bounds(&value)?;
        let cfg: Config = check::deserialize(value)?;
        Checked::new(cfg)
    }

    /// As [`check_json`](Config::check_json), for callers that keep the plain config.
    pub fn from_json(s: &str) -> Result<Config, ConfigError> {
        Config::check_json(s).map(Checked::into_config)
    }

    /// As [`check_value`](Config::check_value), for callers that keep the plain config.
    pub fn from_value(value: serde_json::Value) -> Result<Config, ConfigError> {
        Config::check_value(value).map(Checked::into_config)
    }

    /// Every simulated flow in flow-id order: (index of its `flows` entry, the entry).
    pub fn expanded_flows(&self) -> impl Iterator<Item = (usize, &Flow)> {
        self.flows
            .iter()
            .enumerate()
            .flat_map(|(i, f)| std::iter::repeat_n((i, f), f.count as usize))
    }

    /// Number of simulated flows (`count` expanded).
    pub fn flow_count(&self) -> u64 {
        self.flows.iter().map(|f| f.count as u64).sum()
    }
}

/// The core's JSON Schema of [`Config`] (draft 2020-12).
pub fn schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(Config)).expect("a schema is JSON")
}
