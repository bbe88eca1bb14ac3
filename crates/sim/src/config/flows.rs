//! The traffic (`[[flows]]`, `[[apps]]`): each flow's transfer and TCP settings (algorithm,
//! segment size, pacing, buffers, the simulator's transport switches, an RPC workload), and the
//! applications the core expands into flows (partition/aggregate queries on a star).

use super::backends::*;
use super::*;
pub use pathmodel::ecn::EcnMode;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// An application the core expands into transfers.
// A workload carries its CDF's points inline; a config is read once per run, so the size
// difference between variants costs nothing worth a Box.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum App {
    /// Partition/aggregate (the Waterloo study's §4.1): the aggregator asks workers 0..n−1 for
    /// size/n bytes each over new connections; the response time runs until all n responses are
    /// complete; `repetitions` queries, each `gap` after the previous one ended (the `events`
    /// table).
    #[schemars(title = "QueryApp")]
    Query(QueryApp),
    /// Flows arriving as a Poisson process at `load` of a link's rate, sizes from a CDF file;
    /// FCT and slowdown per flow in the `fct` table.
    #[schemars(title = "WorkloadApp")]
    Workload(WorkloadApp),
}

/// Partition/aggregate (the Waterloo study's §4.1): the aggregator asks workers 0..n−1 for
/// size/n bytes each over new connections; the response time runs until all n responses are
/// complete; `repetitions` queries, each `gap` after the previous one ended (the `events` table).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QueryApp {
    /// Workers asked per query (workers 0..n−1).
    #[schemars(range(min = 1, max = MAX_WORKERS))]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub workers: u32,
    /// Bytes per query, split evenly (integer division) among the workers.
    #[serde(default = "default_query_size")]
    #[schemars(range(min = 1, max = MAX_TRANSFER_BYTES))]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub size_bytes: u64,
    /// Queries in a row.
    #[serde(default = "default_repetitions")]
    #[schemars(range(min = 1, max = 1_000_000))]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub repetitions: u32,
    /// When the first query starts.
    #[serde(default)]
    #[schemars(range(max = MAX_DURATION_NS))]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub start_ns: u64,
    /// Pause between the end of a query and the next.
    #[serde(default = "default_query_gap")]
    #[schemars(range(max = MAX_DURATION_NS))]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub gap_ns: u64,
    /// Each request leaves the aggregator after a uniform random delay up to this.
    #[serde(default)]
    #[schemars(range(max = MAX_DURATION_NS))]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub jitter_ns: u64,
    /// Open the connections inside the timed query (SYN, SYN-ACK before the request); false =
    /// opened before the clock starts, as the Waterloo DC study's aggregator did.
    #[serde(default)]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub handshake: bool,
    /// Transport settings of every response (cc, min_rto, …); start, stop, bytes, count and
    /// sender are set by the app.
    #[schemars(extend("x-backends" = EMU_WITHIN))]
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

active_time! {
/// A transfer (bulk unless `bytes` or `rpc` is set) and its TCP settings.
Flow {
    /// Algorithm (`bbrlab cc` lists them).
    #[schemars(extend("enum" = cc::registry::valid_names()))]
    #[schemars(extend("x-backends" = BOTH))]
    pub cc: String,
    /// Replicate the flow.
    #[serde(default = "default_count")]
    #[schemars(range(min = 1, max = MAX_FLOWS))]
    #[schemars(extend("x-backends" = BOTH))]
    pub count: u32,
}
start: " When the application starts writing.",
stop: " When the application stops writing (none: at the end of the run).",
then {
    /// Transfer size; the flow completion time is then reported (none: unlimited).
    #[serde(default)]
    #[schemars(range(min = 1, max = MAX_TRANSFER_BYTES))]
    #[schemars(extend("x-backends" = BOTH))]
    pub bytes: Option<u64>,
    /// Added to this flow's RTT (on its access link).
    #[serde(default)]
    #[schemars(range(max = MAX_DELAY_NS))]
    #[schemars(extend("x-backends" = BOTH))]
    pub extra_rtt_ns: u64,
    /// Segment size.
    #[serde(default = "default_mss")]
    #[schemars(range(min = 64, max = 65_000))]
    #[schemars(extend("x-backends" = BOTH))]
    pub mss_bytes: u32,
    /// Initial window.
    #[serde(default = "default_iw")]
    #[schemars(range(min = 1, max = 1_000_000))]
    #[schemars(extend("x-backends" = BOTH))]
    pub initial_cwnd_segs: u32,
    /// What carries the flow on the emu backend: "tcp", the kernel's TCP (the default), or
    /// "udp", bbrlab's own transport over UDP sockets (a user-space process per half running
    /// this simulator's sender and receiver with the flow's algorithm; docs/emu.md). The
    /// simulator always runs its own transport, the same sans-IO code, so both values run alike
    /// here and `compare` sets the two side by side.
    #[serde(default)]
    #[schemars(extend("x-backends" = BOTH))]
    pub transport: FlowTransport,
    /// `auto` (BBR and BQL pace, others not), `on`, `off`.
    #[serde(default)]
    #[schemars(extend("x-backends" = emu_refuses("the kernel paces what its algorithm asks to \
         (the BBR family, BQL) and this backend runs no fq qdisc; leave it \"auto\" or use \
         --backend sim")))]
    pub pacing: Pacing,
    /// Pacing cap, as `SO_MAX_PACING_RATE` / fq `maxrate`.
    #[serde(default)]
    #[schemars(range(min = 1, max = MAX_RATE_BPS))]
    #[schemars(extend("x-backends" = BOTH))]
    pub max_pacing_rate_bps: Option<u64>,
    /// Send buffer: unacknowledged plus unsent data (none: unlimited).
    #[serde(default)]
    #[schemars(range(min = 1, max = MAX_BUFFER_BYTES))]
    #[schemars(extend("x-backends" = BOTH))]
    pub sndbuf_bytes: Option<u64>,
    /// Receive buffer: the advertised window (none: unlimited).
    #[serde(default)]
    #[schemars(range(min = 1, max = MAX_BUFFER_BYTES))]
    #[schemars(extend("x-backends" = BOTH))]
    pub rcvbuf_bytes: Option<u64>,
    /// ECN: "off", "ect0" (classic ECN, RFC 3168: a mark means what a drop would) or "ect1"
    /// (L4S, RFC 9331: for an algorithm with a scalable, per-mark response); `true` is "ect0",
    /// `false` "off".
    #[serde(default, deserialize_with = "ecn_mode")]
    #[schemars(with = "EcnField")]
    #[schemars(extend("x-backends" = BOTH))]
    pub ecn: EcnMode,
    /// TSO-style bursts (≈1 ms of the pacing rate, 2 segments to 64 KB).
    #[serde(default = "default_true")]
    #[schemars(extend("x-backends" = EMU_MODEL_SWITCH))]
    pub tso: bool,
    /// Linux's TSO deferral (`tcp_tso_should_defer`, `tcp_tso_win_divisor` 3) for unpaced flows:
    /// new data waits for a full offload frame or a third of the window unless the next ACK would
    /// come too late; false = send what each ACK frees at once.
    #[serde(default = "default_true")]
    #[schemars(extend("x-backends" = EMU_MODEL_SWITCH))]
    pub tso_defer: bool,
    /// Minimum RTO (Linux's default 200 ms).
    #[serde(default = "default_min_rto")]
    #[schemars(range(min = 1, max = MAX_DELAY_NS))]
    #[schemars(extend("x-backends" = BOTH))]
    pub min_rto_ns: u64,
    /// Receiver ACKs every 2nd segment, 40 ms timer, quick-ACK at start.
    #[serde(default = "default_true")]
    #[schemars(extend("x-backends" = BOTH))]
    pub delayed_ack: bool,
    /// BBRv2/v3 offload sizing adds 64 KB >> (min_rtt / 512 µs) (Google's BBRv2 slides); false =
    /// rate only.
    #[serde(default = "default_true")]
    #[schemars(extend("x-backends" = EMU_MODEL_SWITCH))]
    pub tso_minrtt_autosize: bool,
    /// BBRv2/v3 fast path (Google's BBRv2 slides): app-limited ACKs below max_bw in a round
    /// without loss or CE skip the model and control update; false = the whole algorithm on
    /// every ACK. Its saving shows in the host CPU (`hosts`).
    #[serde(default = "default_true")]
    #[schemars(extend("x-backends" = EMU_MODEL_SWITCH))]
    pub fast_path: bool,
    /// Who sizes the advertised window: `static` (`rcvbuf`, or no limit), `autotune` (Linux's
    /// receive-buffer autotuning, or `rcvbuf` when set), `ictcp` (the receiver host's ICTCP
    /// controller, Wu et al., CoNEXT 2010). The kernel on --backend emu always autotunes. (Its
    /// values carry their own marks: `ictcp` is refused there.)
    #[serde(default)]
    #[schemars(extend("x-backends" = BOTH))]
    pub receiver_window: ReceiverWindow,
    /// Histogram of inter-departure gaps at the sender's NIC (`gaps` table).
    #[serde(default)]
    #[schemars(extend("x-backends" = emu_ignores("--backend emu records no departure gaps (no \
         `gaps` table)")))]
    pub gap_histogram: bool,
    /// Record the algorithm's state after every ACK (`state` table: phase, round, max_bw,
    /// bounds, min_rtt, gains, cwnd, pacing rate, extra_acked, full-bw flags, loss/ECN counts);
    /// for checks of an algorithm's rules (`bbrlab conform`). Costs a row per ACK.
    #[serde(default)]
    #[schemars(extend("x-backends" = emu_ignores("--backend emu records no per-ACK state (no \
         `state` table)")))]
    pub trace: bool,
    /// Capture the headers of the flow's TCP segments at its sender (`packets` table; `bbrlab
    /// run` writes them as packets.pcap): data as it leaves for the NIC, ACKs as they arrive.
    /// Costs a row per segment.
    #[serde(default)]
    #[schemars(extend("x-backends" = emu_ignores("--backend emu captures no packets (no \
         `packets` table); run tcpdump in its namespaces")))]
    pub pcap: bool,
    /// Drop the first transmission of these data segments (numbered from 0 in sequence order)
    /// as they leave the sender, before its first link: losses placed exactly, e.g. the BBR
    /// draft's A.2 (six discontiguous ranges lost in one round). Retransmissions pass.
    #[serde(default)]
    #[schemars(length(min = 1, max = MAX_DROP_SEGMENTS), inner(range(max = MAX_TRANSFER_BYTES)))]
    #[schemars(extend("x-backends" = emu_refuses("the emulator cannot pick a TCP flow's \
         segments to drop; use --backend sim")))]
    pub drop_segments: Option<Vec<u64>>,
    /// Receiver ACKs every 2nd segment even when its offered window shrank (Google's BBRv2
    /// slides' fix); false = the old Linux rule.
    #[serde(default = "default_true")]
    #[schemars(extend("x-backends" = EMU_MODEL_SWITCH))]
    pub faster_acks: bool,
    /// The receiving application reads this long after data arrives (none: at once).
    #[serde(default)]
    #[schemars(range(max = MAX_DELAY_NS))]
    #[schemars(extend("x-backends" = emu_refuses("this backend's receivers read at once; use \
         --backend sim")))]
    pub app_read_delay_ns: Option<u64>,
    /// Request/response workload; per-message latency in the `rpc_*` flow columns.
    #[serde(default)]
    #[schemars(extend("x-backends" = emu_refuses("this backend's senders are bulk writers, not \
         request/response; use --backend sim")))]
    pub rpc: Option<Rpc>,
    /// Flows with the same index share one sender host and its NIC (none: own host; on a star,
    /// the worker with the flow's number).
    #[serde(default)]
    #[schemars(range(max = MAX_FLOWS))]
    #[schemars(extend("x-backends" = emu_ignores("--backend emu gives every flow its own \
         namespace and NIC; shared sender hosts are the simulator's")))]
    pub sender: Option<u32>,
    /// The application writing the flow's data: `{ kind = "rate", rate = "20Mbps" }` or
    /// `{ kind = "onoff", bytes = "1MB", period = "100ms" }` (none: bulk, or `bytes`); its
    /// app-limited time shows in the timeseries' `app_limited` column.
    #[serde(default)]
    #[schemars(extend("x-backends" = BOTH))]
    pub app: Option<FlowApp>,
    /// The host the flow starts at (a graph's node; required there, refused elsewhere).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-backends" = BOTH, "default" = null))]
    pub src: Option<String>,
    /// The host the flow ends at (a graph's node; required there, refused elsewhere).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-backends" = BOTH, "default" = null))]
    pub dst: Option<String>,
}
}

/// A flow's writing application (`writer.rs`).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FlowApp {
    /// Writes at `rate` (payload), in whole segments as they fall due.
    #[schemars(title = "RateApp")]
    Rate(RateApp),
    /// Writes `bytes` at once every `period` (bursts), whether or not the last one has gone.
    #[schemars(title = "OnoffApp")]
    Onoff(OnoffApp),
}

/// Writes at `rate` (payload), in whole segments as they fall due.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RateApp {
    /// Payload rate the application writes at.
    #[schemars(range(min = 1, max = MAX_RATE_BPS))]
    #[schemars(extend("x-backends" = BOTH))]
    pub rate_bps: u64,
    /// Write as a bulk sender (unlimited) until this time, then at `rate` from it (none: at
    /// `rate` from the start): an application that slows down after its start, e.g. the BBR
    /// draft's A.6 and A.21 (app-limited once BBR is probing).
    #[serde(default)]
    #[schemars(range(max = MAX_DURATION_NS))]
    #[schemars(extend("x-backends" = emu_refuses("the kernel cannot take back data a bulk \
         writer has put in its socket; use --backend sim")))]
    pub bulk_until_ns: Option<u64>,
}

/// Writes `bytes` at once every `period`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OnoffApp {
    /// Bytes per burst (whole segments: rounded up to the MSS).
    #[schemars(range(min = 1, max = MAX_TRANSFER_BYTES))]
    #[schemars(extend("x-backends" = BOTH))]
    pub bytes: u64,
    /// Time from one burst's write to the next.
    #[schemars(range(min = 1_000, max = MAX_DURATION_NS))]
    #[schemars(extend("x-backends" = BOTH))]
    pub period_ns: u64,
}

/// A flow's `ecn` as a scenario writes it: a mode, or a bool (`true` = "ect0", `false` = "off").
#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)] // a schema only
pub(super) enum EcnField {
    Bool(bool),
    Mode(EcnMode),
}

/// Read a flow's `ecn`: `true` → ECT(0), `false` → off, or a mode's name.
pub(super) fn ecn_mode<'de, D: serde::Deserializer<'de>>(d: D) -> Result<EcnMode, D::Error> {
    struct V;
    impl serde::de::Visitor<'_> for V {
        type Value = EcnMode;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("\"off\", \"ect0\", \"ect1\", true (= \"ect0\") or false (= \"off\")")
        }
        fn visit_bool<E: serde::de::Error>(self, b: bool) -> Result<EcnMode, E> {
            Ok(if b { EcnMode::Ect0 } else { EcnMode::Off })
        }
        fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<EcnMode, E> {
            EcnMode::deserialize(serde::de::value::StrDeserializer::<E>::new(s))
        }
    }
    d.deserialize_any(V)
}

/// Longest `drop_segments` list (a test's placed losses, not a loss model).
const MAX_DROP_SEGMENTS: u32 = 100_000;

fn default_count() -> u32 {
    1
}
fn default_mss() -> u32 {
    1448
}
fn default_iw() -> u32 {
    10
}
fn default_min_rto() -> u64 {
    200_000_000
}

/// What carries a flow on the emu backend (the simulator runs its own transport for both).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FlowTransport {
    /// The kernel's TCP, with the flow's algorithm as a stock module or bbrlab's BPF port.
    #[default]
    Tcp,
    /// bbrlab's transport over UDP (`crates/udpflow`): the simulator's sender and receiver.
    Udp,
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
    /// `rcvbuf`, if set; otherwise no window limit, and ACKs every second segment after the
    /// first 16 however fast the rate grows.
    #[default]
    Static,
    /// Linux receive-buffer autotuning (`transport/src/rcv_space.rs`): the window starts at the
    /// SYN-ACK's 45 segments and grows with the rate, and a segment that grows it is ACKed at
    /// once, as the kernel's receiver does (docs/queues.md). With `rcvbuf` set, that fixed
    /// window instead (as SO_RCVBUF).
    Autotune,
    /// The receiver host's ICTCP controller (`ictcp.rs`).
    #[schemars(extend("x-backends" = emu_refuses("the kernel has no ICTCP receiver; use \
         --backend sim")))]
    Ictcp,
}

/// Request/response workload: write `size` (rounded up to whole segments), wait for the full ACK,
/// wait `gap`, repeat.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Rpc {
    /// Message size.
    #[schemars(range(min = 1, max = MAX_TRANSFER_BYTES))]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub size_bytes: u64,
    /// Pause after a message is fully acknowledged.
    #[serde(default)]
    #[schemars(range(max = MAX_DELAY_NS))]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub gap_ns: u64,
}
