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
    pub flows: Vec<Flow>,
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
    pub bottleneck: Bottleneck,
    #[serde(default)]
    pub access_rate_bps: Option<u64>,
}

#[derive(Clone, Debug, Deserialize)]
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
        if self.topology.kind != "dumbbell" {
            return err("topology.kind", "must be \"dumbbell\"");
        }
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
        if self.flows.is_empty() {
            return err("flows", "at least one flow is required");
        }
        for (i, f) in self.flows.iter().enumerate() {
            if cc::CcKind::from_name(&f.cc).is_none() {
                return err(&format!("flows.{i}.cc"), &format!("unknown algorithm {:?}", f.cc));
            }
            if f.mss_bytes < 64 || f.mss_bytes > 65000 {
                return err(&format!("flows.{i}.mss_bytes"), "must be in 64..=65000");
            }
            if f.initial_cwnd_segs == 0 {
                return err(&format!("flows.{i}.initial_cwnd_segs"), "must be > 0");
            }
            if f.start_ns >= self.duration_ns {
                return err(&format!("flows.{i}.start_ns"), "must be before the end of the run");
            }
            if let Some(s) = f.stop_ns {
                if s <= f.start_ns {
                    return err(&format!("flows.{i}.stop_ns"), "must be after start_ns");
                }
            }
            if f.bytes == Some(0) {
                return err(&format!("flows.{i}.bytes"), "must be > 0");
            }
            if f.max_pacing_rate_bps == Some(0) {
                return err(&format!("flows.{i}.max_pacing_rate_bps"), "must be > 0");
            }
            if f.receiver_window != "static" && f.receiver_window != "ictcp" {
                return err(&format!("flows.{i}.receiver_window"), "must be \"static\" or \"ictcp\"");
            }
        }
        Ok(())
    }
}
