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
//!   by [`Config::resolved`];
//! - what each backend does with a field (honoured, refused, ignored with a warning): marked
//!   beside every field as `x-backends` ([`backends`]); the emu backend acts on the marks.
//!
//! The types are split by the scenario's sections: [`Config`] and the limits here, the network
//! in `topology.rs`, flows and applications in `flows.rs`, the end hosts in `hosts.rs`; key
//! groups that several of them share are written once, in `keys.rs`.
//!
//! Bounds are physical limits, not taste: they keep every value in a range where the simulator's
//! integer arithmetic is exact and its memory bounded (see the constants below).

use backends::*;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[macro_use]
mod keys;

pub mod backends;
pub mod check;
mod check_graph;
mod check_graph_ends;
mod check_path;
mod check_queue;
mod check_star;
mod flows;
mod graph;
mod hosts;
pub mod human;
mod presets;
mod resolve;
mod topology;
mod traffic;
mod workload_app;

pub use check::ConfigError;
pub use flows::*;
pub use graph::*;
pub use hosts::*;
pub use presets::*;
pub use resolve::{max_frame_bytes, pfc_headroom_bytes, Derived, RouteInfo};
pub use topology::*;
pub use traffic::*;
pub use workload_app::*;

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
    #[schemars(extend("x-backends" = BOTH))]
    pub name: String,
    /// Seed of every random stream (loss, BBR's phase choice); the same seed gives bit-identical
    /// results.
    #[serde(default = "default_seed")]
    #[schemars(range(max = 9_223_372_036_854_775_807u64))]
    #[schemars(extend("x-backends" = BOTH))]
    pub seed: u64,
    /// Simulated time.
    #[schemars(range(min = 1, max = MAX_DURATION_NS))]
    #[schemars(extend("x-backends" = BOTH))]
    pub duration_ns: u64,
    /// Sampling period of the time series.
    #[serde(default = "default_sample")]
    #[schemars(range(min = MIN_SAMPLE_INTERVAL_NS, max = MAX_DURATION_NS))]
    #[schemars(extend("x-backends" = BOTH))]
    pub sample_interval_ns: u64,
    /// The network: `kind = "dumbbell"`, `"star"`, `"graph"` or a preset that expands into a
    /// graph (`"parking_lot"`, `"leaf_spine"`, `"fat_tree"`).
    #[schemars(extend("x-backends" = BOTH))]
    pub topology: Topology,
    /// Bulk or sized transfers, each `count` times.
    #[serde(default)]
    #[schemars(extend("x-backends" = BOTH))]
    pub flows: Vec<Flow>,
    /// Non-TCP sources beside the flows: UDP constant-bit-rate and on/off, ping probes (on
    /// --backend emu: a dumbbell's, as processes in namespaces of their own, docs/emu.md).
    #[serde(default)]
    #[schemars(extend("x-backends" = BOTH))]
    pub traffic: Vec<Traffic>,
    /// Applications the core expands into transfers (partition/aggregate queries on a star,
    /// Poisson workloads with sizes from a CDF on any topology).
    #[serde(default)]
    #[schemars(extend("x-backends" = emu_refuses("queries and workloads are expanded into \
         transfers by the simulator's core, which --backend emu does not run; use --backend sim")))]
    pub apps: Vec<App>,
    /// End hosts' CPUs, NIC receive queues and receive offload (`host.rs`; the `hosts` table);
    /// none: hosts cost nothing and every packet reaches TCP the moment it arrives.
    #[serde(default)]
    #[schemars(extend("x-backends" = emu_ignores("the simulator's model of the end hosts; \
         --backend emu runs real ones, so it is ignored")))]
    pub hosts: Option<Hosts>,
    /// Packet captures on links (`capture.rs`).
    #[serde(default)]
    #[schemars(extend("x-backends" = emu_refuses("the emulator captures no packets; run \
         tcpdump in its namespaces")))]
    pub capture: Capture,
}

/// Captures at links: what a tap on the wire just downstream of a link's queue records.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Capture {
    /// Links to capture, by their names in the `queue` table (dumbbell: `bottleneck`,
    /// `bottleneck_rev`; star: `tor_to_agg`, `agg_nic`, `nic_<w>`, …; graph: `a-b`): every TCP
    /// segment that leaves the link, when its last bit leaves — the data of every flow crossing
    /// it and, on a link that carries ACKs, the ACKs — as rows of the `packets` table (`tap` =
    /// the link's name); `bbrlab run` writes each as `<link>.pcap`. Packets the queue drops and
    /// packets the link's random loss takes (it acts as a packet is offered, before the queue)
    /// never leave, so they are not there. Costs a row per packet on each link, and the link's
    /// speed-ups (its departures become events; the results do not change).
    #[serde(default)]
    #[schemars(length(max = MAX_CAPTURED_LINKS))]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub links: Vec<String>,
}

/// Links one run may capture: each costs a row per packet crossing it, and more than this is a
/// capture no pcap reader opens whole; also keeps a capture point's code (`u16`) far from its
/// limit.
pub const MAX_CAPTURED_LINKS: u64 = 64;

fn default_name() -> String {
    "scenario".to_string()
}
fn default_seed() -> u64 {
    1
}
fn default_sample() -> u64 {
    100_000_000
}

/// Serde default of the switches that are on unless turned off.
fn default_true() -> bool {
    true
}

/// Serde default of a key whose default is a plain number its doc gives and explains (the
/// host model's): `default = "const_u64::<8_000>"` states the value at the key instead of in a
/// function of its own.
fn const_u64<const N: u64>() -> u64 {
    N
}
/// As `const_u64`, for `u32` keys.
fn const_u32<const N: u32>() -> u32 {
    N
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
