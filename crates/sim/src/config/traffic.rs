//! Non-TCP traffic (`[[traffic]]`): UDP constant-bit-rate and on/off sources and ping probes.
//! They take a flow's route (a dumbbell sender host to the receiver, a star's worker to the
//! aggregator; `reverse` the other way) and their packets share every queue with TCP's.

use super::backends::*;
use super::*;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One non-TCP source: `kind = "udp_cbr" | "udp_onoff" | "ping"`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Traffic {
    /// UDP at a constant rate: one packet every `packet_size · 8 / rate`.
    #[schemars(title = "UdpCbr")]
    UdpCbr(UdpCbr),
    /// UDP at `rate` during on periods, silent during off periods.
    #[schemars(title = "UdpOnoff")]
    UdpOnoff(UdpOnoff),
    /// An echo request every `interval`; the far host answers at once; one RTT per echo in the
    /// `pings` table.
    #[schemars(title = "Ping")]
    Ping(Ping),
}

/// Declares a source's struct: its own fields, then the fields every kind shares (where it sends
/// from and to, and when). One list, so the kinds cannot drift apart.
macro_rules! source {
    ($(#[$m:meta])* $name:ident { $($body:tt)* }) => {
        active_time! {
            $(#[$m])* $name {
                $($body)*
                /// The sending host by name; only on topologies that name hosts (a dumbbell or
                /// star does not: leave it out, and set `reverse` for the receiver-to-sender
                /// direction).
                #[serde(default)]
                #[schemars(extend("x-backends" = BOTH))]
                pub src: Option<String>,
                /// The receiving host by name (as `src`).
                #[serde(default)]
                #[schemars(extend("x-backends" = BOTH))]
                pub dst: Option<String>,
                /// Send from the receiver side to the sender side (a dumbbell's reverse bottleneck,
                /// a star's aggregator to the worker), against the TCP data.
                #[serde(default)]
                #[schemars(extend("x-backends" = BOTH))]
                pub reverse: bool,
                /// As a flow's `sender`: sources and flows with the same index share one sender
                /// host and its NIC (none: a host of its own; on a star, worker 0).
                #[serde(default)]
                #[schemars(range(max = MAX_FLOWS))]
                #[schemars(extend("x-backends" = emu_ignores("--backend emu gives every source \
                     a namespace and NIC of its own; shared sender hosts are the simulator's")))]
                pub sender: Option<u32>,
            }
            start: " When the first packet leaves.",
            stop: " When the source stops sending (none: at the end of the run)."
        }
    };
}

/// Where a source sends from and to, and when (the fields every kind shares).
#[derive(Clone, Copy, Debug)]
pub struct TrafficRoute<'a> {
    pub src: Option<&'a str>,
    pub dst: Option<&'a str>,
    pub reverse: bool,
    pub sender: Option<u32>,
    pub start_ns: u64,
    pub stop_ns: Option<u64>,
}

/// Declares a UDP source's struct (through [`source!`]): its rate (`rate_doc` says when it
/// sends at it) and packet size first, then its own fields.
macro_rules! udp_source {
    ($(#[$m:meta])* $name:ident, rate_doc: $rate_doc:literal { $($body:tt)* }) => {
        source! {
            $(#[$m])*
            $name {
                #[doc = $rate_doc]
                #[schemars(range(min = 1, max = MAX_RATE_BPS))]
                #[schemars(extend("x-backends" = BOTH))]
                pub rate_bps: u64,
                /// IP packet size (UDP payload + 28 B of IP and UDP headers).
                #[serde(default = "default_udp_packet")]
                #[schemars(range(min = 29, max = 65_000))]
                #[schemars(extend("x-backends" = BOTH))]
                pub packet_size_bytes: u32,
                $($body)*
            }
        }
    };
}

udp_source! {
    /// UDP at a constant rate.
    UdpCbr,
    rate_doc: " Sending rate on the wire (Ethernet framing included, as a link's rate is)." {}
}

/// How on and off periods are drawn.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Durations {
    /// Every period is exactly `on` (or `off`).
    #[default]
    Fixed,
    /// Exponentially distributed with mean `on` (or `off`): a Markov on/off source.
    Exponential,
}

udp_source! {
    /// UDP at `rate` while on.
    UdpOnoff,
    rate_doc: " Sending rate on the wire while on (as `udp_cbr`'s)." {
        /// Length of an on period (the mean, with `durations = "exponential"`).
        #[schemars(range(min = 1, max = MAX_DURATION_NS))]
        #[schemars(extend("x-backends" = BOTH))]
        pub on_ns: u64,
        /// Length of an off period (the mean, with `durations = "exponential"`).
        #[schemars(range(min = 1, max = MAX_DURATION_NS))]
        #[schemars(extend("x-backends" = BOTH))]
        pub off_ns: u64,
        /// `fixed` or `exponential` periods.
        #[serde(default)]
        #[schemars(extend("x-backends" = BOTH))]
        pub durations: Durations,
    }
}

source! {
    /// Echo requests at a fixed interval.
    Ping {
        /// Time between echo requests.
        #[serde(default = "default_ping_interval")]
        #[schemars(range(min = 1_000, max = MAX_DURATION_NS))]
        #[schemars(extend("x-backends" = BOTH))]
        pub interval_ns: u64,
        /// IP packet size of a request and of its echo (`ping -s 56`: 84 B).
        #[serde(default = "default_ping_packet")]
        #[schemars(range(min = 28, max = 65_000))]
        #[schemars(extend("x-backends" = BOTH))]
        pub packet_size_bytes: u32,
    }
}

/// 1500 B: a full Ethernet MTU, as iperf3 `-u` fills it.
fn default_udp_packet() -> u32 {
    1500
}
/// `ping`'s default 56 B of data + 8 B ICMP + 20 B IP.
fn default_ping_packet() -> u32 {
    84
}
/// `ping -i 0.01`-like probing: fine enough to follow a queue that changes every RTT.
fn default_ping_interval() -> u64 {
    10_000_000
}

impl Traffic {
    pub fn route(&self) -> TrafficRoute<'_> {
        macro_rules! route {
            ($t:expr) => {
                TrafficRoute {
                    src: $t.src.as_deref(),
                    dst: $t.dst.as_deref(),
                    reverse: $t.reverse,
                    sender: $t.sender,
                    start_ns: $t.start_ns,
                    stop_ns: $t.stop_ns,
                }
            };
        }
        match self {
            Traffic::UdpCbr(t) => route!(t),
            Traffic::UdpOnoff(t) => route!(t),
            Traffic::Ping(t) => route!(t),
        }
    }

    /// The kind's name, as the scenario writes it.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Traffic::UdpCbr(_) => "udp_cbr",
            Traffic::UdpOnoff(_) => "udp_onoff",
            Traffic::Ping(_) => "ping",
        }
    }

    /// IP packet size of the source's packets.
    pub fn packet_size_bytes(&self) -> u32 {
        match self {
            Traffic::UdpCbr(t) => t.packet_size_bytes,
            Traffic::UdpOnoff(t) => t.packet_size_bytes,
            Traffic::Ping(t) => t.packet_size_bytes,
        }
    }
}

impl Config {
    /// The traffic sources: their hosts exist, they start within the run, stop after they
    /// start; the end-host model does not carry them.
    pub(super) fn validate_traffic(&self) -> check::Check {
        use check::err;
        for (i, t) in self.traffic.iter().enumerate() {
            let p = format!("traffic.{i}");
            let r = t.route();
            if self.topology.graph().is_some() {
                self.validate_graph_traffic(&p, r)?;
            }
            // A dumbbell or star names no hosts: a source runs the flows' way or, with
            // `reverse`, the other way.
            let named = self.topology.graph().is_none();
            for (key, name) in [("src", r.src), ("dst", r.dst)].into_iter().filter(|_| named) {
                if let Some(name) = name {
                    return err(
                        format!("{p}.{key}"),
                        format!(
                            "unknown host {name:?}: a {} names no hosts; leave {key} out (a \
                             source runs from the sender side to the receiver side, or back with \
                             reverse = true)",
                            topology_kind(&self.topology)
                        ),
                    );
                }
            }
            self.check_active_time(&p, r.start_ns, r.stop_ns)?;
            if let Topology::Star(st) = &self.topology {
                let w = r.sender.unwrap_or(0);
                if w >= st.workers {
                    return err(
                        format!("{p}.sender"),
                        format!("worker {w} does not exist: the star has {} workers", st.workers),
                    );
                }
            }
            if self.hosts.is_some() {
                return err(
                    p,
                    "traffic sources are not modelled with [hosts] (the end hosts' CPUs and \
                     rings carry TCP only); leave out one or the other",
                );
            }
        }
        Ok(())
    }
}

/// The topology's `kind` as the scenario writes it.
fn topology_kind(t: &Topology) -> String {
    serde_json::to_value(t)
        .ok()
        .and_then(|v| v.get("kind").and_then(|k| k.as_str()).map(str::to_string))
        .unwrap_or_default()
}
