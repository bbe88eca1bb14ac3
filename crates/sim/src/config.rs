//! The resolved scenario the core runs (JSON, integer SI units), as docs/core-api.md specifies.
//! The Python front validates human-unit scenario files and produces this; the checks here guard
//! the core against direct callers and name the field path on every error.

use serde::Deserialize;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default = "default_seed")]
    pub seed: u64,
    pub duration_ns: u64,
    #[serde(default = "default_sample")]
    pub sample_interval_ns: u64,
    pub topology: Topology,
    #[serde(default)]
    pub flows: Vec<Flow>,
    /// Applications the core expands into timed transfers (`apps.rs`), e.g. partition/aggregate
    /// queries on the star topology.
    #[serde(default)]
    pub apps: Vec<App>,
}

fn default_seed() -> u64 {
    1
}
fn default_sample() -> u64 {
    100_000_000
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Topology {
    pub kind: String,
    /// The dumbbell's bottleneck (required for kind "dumbbell"; unused by "star").
    #[serde(default)]
    pub bottleneck: Bottleneck,
    #[serde(default)]
    pub access_rate_bps: Option<u64>,
    /// The star (ToR) topology (required for kind "star"; see `topology.rs`).
    #[serde(default)]
    pub star: Option<Star>,
}

/// One top-of-rack switch: `workers` hosts each with its own link into the switch, and one
/// aggregator/receiver host behind the switch's output port.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Star {
    pub workers: u32,
    /// Rate of every host link (both directions).
    pub rate_bps: u64,
    /// Rate of the aggregator's link (default: rate_bps).
    #[serde(default)]
    pub aggregator_rate_bps: Option<u64>,
    /// One-way propagation delay of every host <-> switch link.
    pub delay_ns: u64,
    /// Drop-tail limit of each switch output port, bytes (None = unlimited).
    #[serde(default)]
    pub buffer_bytes: Option<u64>,
    /// Limit on the bytes queued in all output ports together (None = no shared limit).
    #[serde(default)]
    pub shared_buffer_bytes: Option<u64>,
    /// "store_and_forward" or "cut_through".
    #[serde(default = "default_forwarding")]
    pub forwarding: String,
    /// Cut-through: bytes that must arrive before a packet can be forwarded.
    #[serde(default = "default_header_bytes")]
    pub header_bytes: u32,
    /// DCTCP step marking at the switch output ports (bytes).
    #[serde(default)]
    pub ecn_threshold_bytes: Option<u64>,
    /// Lossless mode: IEEE 802.3x PAUSE back-pressure (None = drop-tail).
    #[serde(default)]
    pub pfc: Option<Pfc>,
    /// Host NIC clocks deviate from the switch's by up to ± this many ppm (IEEE 802.3 allows
    /// ±100): each host link's rate is scaled by a seeded uniform draw in [−ppm, +ppm]. Without
    /// it, equal-rate links stay phase-locked and a drop-tail port can lock a flow out forever.
    #[serde(default)]
    pub clock_ppm: u32,
    /// Host transmit timing jitter (NIC DMA, PCIe): each packet from a host reaches the switch
    /// up to this many ns late (uniform, order kept). 0 = exact.
    #[serde(default)]
    pub host_jitter_ns: u64,
}

fn default_forwarding() -> String {
    "store_and_forward".to_string()
}
fn default_header_bytes() -> u32 {
    64
}

/// 802.3x PAUSE: an output queue above `xoff_bytes` pauses every link feeding it for
/// `pause_quanta` x 512 bit times (re-sent while above XOFF); below `xon_bytes` it resumes them.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pfc {
    pub xoff_bytes: u64,
    pub xon_bytes: u64,
    #[serde(default = "default_quanta")]
    pub pause_quanta: u32,
}

fn default_quanta() -> u32 {
    65535
}

/// An application expanded by the core into transfers (`apps.rs`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct App {
    /// "query": partition/aggregate. The aggregator asks workers 0..workers-1 for bytes/workers
    /// bytes each (integer division, as the seed's code); the response time runs until all
    /// responses are complete; `repetitions` queries, each `gap_ns` after the previous one ended.
    pub kind: String,
    pub workers: u32,
    pub bytes: u64,
    #[serde(default = "default_reps")]
    pub repetitions: u32,
    #[serde(default)]
    pub start_ns: u64,
    #[serde(default)]
    pub gap_ns: u64,
    /// Each request leaves the aggregator after a uniform random delay in [0, jitter_ns].
    #[serde(default)]
    pub jitter_ns: u64,
    /// Open the connections inside the timed query (SYN, SYN-ACK before the request); false =
    /// connections opened before the clock starts, as the seed's aggregator did.
    #[serde(default)]
    pub handshake: bool,
    /// The transport settings of every response transfer (start/stop/bytes/sender are ignored).
    pub flow: Flow,
}

fn default_reps() -> u32 {
    1
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Bottleneck {
    pub rate_bps: u64,
    pub rtt_ns: u64,
    #[serde(default)]
    pub buffer_bytes: Option<u64>,
    #[serde(default)]
    pub buffer_packets: Option<u64>,
    #[serde(default)]
    pub loss: f64,
    #[serde(default)]
    pub ack_loss: f64,
    /// CE-mark ECN-capable packets arriving when more than K bytes wait (DCTCP step marking).
    #[serde(default)]
    pub ecn_threshold_bytes: Option<u64>,
    /// The same with K in packets (either or both; a packet is marked if either threshold is exceeded).
    #[serde(default)]
    pub ecn_threshold_packets: Option<u64>,
    /// RED on the bottleneck queue (Floyd & Jacobson 1993), marking ECT packets and dropping
    /// non-ECT ones as Linux sch_red with the `ecn` flag does.
    #[serde(default)]
    pub red: Option<Red>,
}

/// RED parameters: thresholds on the EWMA of the queue in bytes.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Red {
    pub min_th_bytes: u64,
    pub max_th_bytes: u64,
    /// Marking probability at max_th (float).
    pub max_p: f64,
    /// EWMA weight w_q (float), e.g. 0.002.
    pub weight: f64,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Flow {
    pub cc: String,
    #[serde(default)]
    pub start_ns: u64,
    #[serde(default)]
    pub stop_ns: Option<u64>,
    #[serde(default)]
    pub bytes: Option<u64>,
    #[serde(default)]
    pub extra_rtt_ns: u64,
    #[serde(default = "default_mss")]
    pub mss_bytes: u32,
    #[serde(default = "default_iw")]
    pub initial_cwnd_segs: u32,
    #[serde(default)]
    pub pacing: Option<bool>,
    #[serde(default)]
    pub max_pacing_rate_bps: Option<u64>,
    #[serde(default)]
    pub sndbuf_bytes: Option<u64>,
    #[serde(default)]
    pub rcvbuf_bytes: Option<u64>,
    #[serde(default)]
    pub ecn: bool,
    #[serde(default = "default_true")]
    pub tso: bool,
    #[serde(default = "default_min_rto")]
    pub min_rto_ns: u64,
    #[serde(default = "default_true")]
    pub delayed_ack: bool,
    /// BBRv2/v3 min_rtt-based TSO autosizing (seed 001); off = rate-only sizing.
    #[serde(default = "default_true")]
    pub tso_minrtt_autosize: bool,
    /// Sender host index (flows with the same index share a host and its NIC); None = own host.
    #[serde(default)]
    pub sender: Option<u32>,
    /// Receive window policy: "static" (rcvbuf_bytes, if set) or "ictcp" (the receiver host's
    /// ICTCP controller sets the advertised window; see `ictcp.rs`).
    #[serde(default = "default_receiver_window")]
    pub receiver_window: String,
    /// Record a histogram of this flow's inter-departure gaps at its sender NIC (`gaps.rs`).
    #[serde(default)]
    pub gap_histogram: bool,
    /// Seed 001's faster-ACK fix at the receiver (false = old Linux rule; `transport::receiver`).
    #[serde(default = "default_true")]
    pub faster_acks: bool,
    /// The receiving application reads this long after unread data arrives (None = at once).
    #[serde(default)]
    pub app_read_delay_ns: Option<u64>,
    /// Request/response workload (`workload.rs`): messages of `size_bytes`, next one `gap_ns`
    /// after the previous one is fully acknowledged.
    #[serde(default)]
    pub rpc: Option<Rpc>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rpc {
    pub size_bytes: u64,
    #[serde(default)]
    pub gap_ns: u64,
}

fn default_receiver_window() -> String {
    "static".to_string()
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

/// A config error: the field path and what is wrong with it.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigError(pub String);

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl Config {
    pub fn from_json(s: &str) -> Result<Config, ConfigError> {
        let cfg: Config = serde_json::from_str(s).map_err(|e| ConfigError(format!("config: {e}")))?;
        cfg.validate()?;
        Ok(cfg)
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        let err = |p: &str, m: &str| Err(ConfigError(format!("{p}: {m}")));
        if self.duration_ns == 0 {
            return err("duration_ns", "must be > 0");
        }
        if self.sample_interval_ns == 0 || self.sample_interval_ns > self.duration_ns {
            return err("sample_interval_ns", "must be > 0 and <= duration_ns");
        }
        match self.topology.kind.as_str() {
            "dumbbell" => self.validate_dumbbell()?,
            "star" => self.validate_star()?,
            _ => return err("topology.kind", "must be \"dumbbell\" or \"star\""),
        }
        if self.flows.is_empty() && self.apps.is_empty() {
            return err("flows", "at least one flow (or app) is required");
        }
        for (i, f) in self.flows.iter().enumerate() {
            self.validate_flow(&format!("flows.{i}"), f, false)?;
        }
        for (i, a) in self.apps.iter().enumerate() {
            let p = format!("apps.{i}");
            if a.kind != "query" {
                return err(&format!("{p}.kind"), "must be \"query\"");
            }
            if self.topology.kind != "star" {
                return err(&format!("{p}.kind"), "query apps need topology.kind = \"star\"");
            }
            let workers = self.topology.star.as_ref().map_or(0, |s| s.workers);
            if a.workers == 0 || a.workers > workers {
                return err(&format!("{p}.workers"), &format!("must be in 1..={workers} (the star's workers)"));
            }
            if a.bytes < a.workers as u64 {
                return err(&format!("{p}.bytes"), "must be at least one byte per worker");
            }
            if a.repetitions == 0 {
                return err(&format!("{p}.repetitions"), "must be > 0");
            }
            if a.start_ns >= self.duration_ns {
                return err(&format!("{p}.start_ns"), "must be before the end of the run");
            }
            self.validate_flow(&format!("{p}.flow"), &a.flow, true)?;
        }
        Ok(())
    }

    fn validate_star(&self) -> Result<(), ConfigError> {
        let err = |p: &str, m: &str| Err(ConfigError(format!("{p}: {m}")));
        let Some(st) = &self.topology.star else {
            return err("topology.star", "required for kind \"star\"");
        };
        let p = "topology.star";
        if st.workers == 0 || st.workers > 10_000 {
            return err(&format!("{p}.workers"), "must be in 1..=10000");
        }
        if st.rate_bps == 0 {
            return err(&format!("{p}.rate_bps"), "must be > 0");
        }
        if st.aggregator_rate_bps == Some(0) {
            return err(&format!("{p}.aggregator_rate_bps"), "must be > 0");
        }
        if st.buffer_bytes == Some(0) {
            return err(&format!("{p}.buffer_bytes"), "must be > 0");
        }
        if st.shared_buffer_bytes == Some(0) {
            return err(&format!("{p}.shared_buffer_bytes"), "must be > 0");
        }
        if st.forwarding != "store_and_forward" && st.forwarding != "cut_through" {
            return err(&format!("{p}.forwarding"), "must be \"store_and_forward\" or \"cut_through\"");
        }
        if st.clock_ppm > 1000 {
            return err(&format!("{p}.clock_ppm"), "must be <= 1000");
        }
        if st.header_bytes == 0 {
            return err(&format!("{p}.header_bytes"), "must be > 0");
        }
        if let Some(pfc) = &st.pfc {
            if pfc.xoff_bytes == 0 {
                return err(&format!("{p}.pfc.xoff_bytes"), "must be > 0");
            }
            if pfc.xon_bytes >= pfc.xoff_bytes {
                return err(&format!("{p}.pfc.xon_bytes"), "must be < xoff_bytes");
            }
            if pfc.pause_quanta == 0 || pfc.pause_quanta > 65535 {
                return err(&format!("{p}.pfc.pause_quanta"), "must be in 1..=65535");
            }
        }
        for (i, f) in self.flows.iter().enumerate() {
            let w = f.sender.unwrap_or(i as u32);
            if w >= st.workers {
                return err(
                    &format!("flows.{i}.sender"),
                    &format!("worker {w} does not exist (the star has {} workers; sender defaults to the flow index)", st.workers),
                );
            }
            if f.extra_rtt_ns != 0 {
                return err(&format!("flows.{i}.extra_rtt_ns"), "not supported on the star topology");
            }
        }
        Ok(())
    }

    fn validate_dumbbell(&self) -> Result<(), ConfigError> {
        let err = |p: &str, m: &str| Err(ConfigError(format!("{p}: {m}")));
        let b = &self.topology.bottleneck;
        if b.rate_bps == 0 {
            return err("topology.bottleneck.rate_bps", "must be > 0");
        }
        if !(0.0..1.0).contains(&b.loss) {
            return err("topology.bottleneck.loss", "must be in [0, 1)");
        }
        if !(0.0..1.0).contains(&b.ack_loss) {
            return err("topology.bottleneck.ack_loss", "must be in [0, 1)");
        }
        if b.buffer_bytes == Some(0) || b.buffer_packets == Some(0) {
            return err("topology.bottleneck.buffer_bytes", "must be > 0");
        }
        if let Some(r) = &b.red {
            let p = "topology.bottleneck.red";
            if r.min_th_bytes >= r.max_th_bytes {
                return err(&format!("{p}.min_th_bytes"), "must be < max_th_bytes");
            }
            if !(r.max_p > 0.0 && r.max_p <= 1.0) {
                return err(&format!("{p}.max_p"), "must be in (0, 1]");
            }
            if !(r.weight > 0.0 && r.weight <= 1.0) {
                return err(&format!("{p}.weight"), "must be in (0, 1]");
            }
        }
        if self.topology.access_rate_bps == Some(0) {
            return err("topology.access_rate_bps", "must be > 0");
        }
        Ok(())
    }

    fn validate_flow(&self, p: &str, f: &Flow, template: bool) -> Result<(), ConfigError> {
        let err = |q: &str, m: &str| Err(ConfigError(format!("{p}.{q}: {m}")));
        if cc::CcKind::from_name(&f.cc).is_none() {
            return err("cc", &format!("unknown algorithm {:?}", f.cc));
        }
        if template {
            return self.validate_flow_common(p, f);
        }
        if f.start_ns >= self.duration_ns {
            return err("start_ns", "must be before the end of the run");
        }
        if let Some(s) = f.stop_ns {
            if s <= f.start_ns {
                return err("stop_ns", "must be after start_ns");
            }
        }
        if f.bytes == Some(0) {
            return err("bytes", "must be > 0");
        }
        self.validate_flow_common(p, f)
    }

    fn validate_flow_common(&self, p: &str, f: &Flow) -> Result<(), ConfigError> {
        let err = |q: &str, m: &str| Err(ConfigError(format!("{p}.{q}: {m}")));
        if f.mss_bytes < 64 || f.mss_bytes > 65000 {
            return err("mss_bytes", "must be in 64..=65000");
        }
        if f.initial_cwnd_segs == 0 {
            return err("initial_cwnd_segs", "must be > 0");
        }
        if f.max_pacing_rate_bps == Some(0) {
            return err("max_pacing_rate_bps", "must be > 0");
        }
        if f.receiver_window != "static" && f.receiver_window != "ictcp" {
            return err("receiver_window", "must be \"static\" or \"ictcp\"");
        }
        if let Some(r) = &f.rpc {
            if r.size_bytes == 0 {
                return err("rpc.size_bytes", "must be > 0");
            }
            if f.bytes.is_some() {
                return err("rpc", "cannot be combined with bytes");
            }
        }
        Ok(())
    }
}
