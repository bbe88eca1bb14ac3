//! Topologies that expand into a graph (`graph.rs`) when the config is resolved: a parking lot
//! (bottlenecks in a row), a leaf-spine fabric and a k-ary fat-tree. Their hosts and switches
//! get fixed names, which the flows' `src` and `dst` use (docs/topologies.md lists them).

use super::backends::*;
use super::*;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Most bottlenecks of a parking lot: its long flows cross them all plus two host links, and a
/// path holds at most `topology::MAX_HOPS` links.
pub const MAX_PARKING_LOT_BOTTLENECKS: u32 = 6;
/// Largest fat-tree arity: k³/4 hosts (1024 at k = 16), already more than a run needs.
pub const MAX_FAT_TREE_K: u32 = 16;

/// What every link of a preset shares besides its rate and delay.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PresetPorts {
    /// Drop-tail limit of every link's queue (default 1000 packets, as a graph link's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-backends" = BOTH, "default" = null))]
    pub buffer: Option<Buffer>,
    /// CE-mark ECN-capable packets arriving when more than this many bytes wait (every link).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = MAX_BUFFER_BYTES))]
    #[schemars(extend("x-backends" = BOTH, "default" = null))]
    pub ecn_threshold_bytes: Option<u64>,
    /// Every link's queue discipline (as a graph link's `qdisc`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-backends" = BOTH, "default" = null))]
    pub qdisc: Option<QdiscSpec>,
}

impl PresetPorts {
    fn link(&self, from: &str, to: &str, rate_bps: u64, delay_ns: u64) -> GraphLink {
        let mut l = GraphLink::new(from, to, rate_bps, delay_ns);
        if let Some(b) = self.buffer {
            l.buffer = b;
        }
        l.ecn_threshold_bytes = self.ecn_threshold_bytes;
        l.qdisc = self.qdisc.clone();
        l
    }
}

fn node(name: String, kind: NodeRole) -> GraphNode {
    GraphNode { name, kind }
}

/// Switches `r0` … `rN` in a row; the links `r0-r1` … are the N bottlenecks. Hosts:
/// `long_src` on `r0` and `long_dst` on `rN` (the long flows cross every bottleneck); for each
/// hop i, `x{i}_src` on `r{i}` and `x{i}_dst` on `r{i+1}` (the cross traffic of bottleneck i).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ParkingLot {
    /// Bottleneck links in a row.
    #[schemars(range(min = 1, max = MAX_PARKING_LOT_BOTTLENECKS))]
    #[schemars(extend("x-backends" = BOTH))]
    pub bottlenecks: u32,
    /// Rate of every bottleneck link.
    #[schemars(range(min = 1, max = MAX_RATE_BPS))]
    #[schemars(extend("x-backends" = BOTH))]
    pub rate_bps: u64,
    /// One-way delay of every bottleneck link (host links have none).
    #[schemars(range(max = MAX_DELAY_NS))]
    #[schemars(extend("x-backends" = BOTH))]
    pub delay_ns: u64,
    /// Every host's link (default: 10 × `rate`, so the bottlenecks are the bottlenecks).
    #[serde(default)]
    #[schemars(range(min = 1, max = MAX_RATE_BPS))]
    #[schemars(extend("x-backends" = BOTH))]
    pub access_rate_bps: Option<u64>,
    /// Queues of every link.
    #[serde(default)]
    #[schemars(extend("x-backends" = BOTH))]
    pub ports: PresetPorts,
}

impl ParkingLot {
    pub fn graph(&self) -> Graph {
        let n = self.bottlenecks as usize;
        let access =
            self.access_rate_bps.unwrap_or(self.rate_bps.saturating_mul(10).min(MAX_RATE_BPS));
        let mut nodes: Vec<GraphNode> =
            (0..=n).map(|i| node(format!("r{i}"), NodeRole::Switch)).collect();
        let mut links: Vec<GraphLink> = (0..n)
            .map(|i| {
                self.ports.link(
                    &format!("r{i}"),
                    &format!("r{}", i + 1),
                    self.rate_bps,
                    self.delay_ns,
                )
            })
            .collect();
        let mut host = |name: String, at: String| {
            links.push(self.ports.link(&name, &at, access, 0));
            nodes.push(node(name, NodeRole::Host));
        };
        host("long_src".into(), "r0".into());
        host("long_dst".into(), format!("r{n}"));
        for i in 0..n {
            host(format!("x{i}_src"), format!("r{i}"));
            host(format!("x{i}_dst"), format!("r{}", i + 1));
        }
        Graph { nodes, links, routing: Routing::Hops, fabric: None }
    }
}

/// Declares a data-centre fabric preset's struct: its own keys, then the two every such
/// fabric shares (one delay for every link, a data centre's by default, and every link's
/// queues). One list, so the presets cannot drift apart.
macro_rules! dc_preset {
    ($(#[$m:meta])* $name:ident { $($body:tt)* }) => {
        keys_then_shared! {
            $(#[$m])* $name { $($body)* }
            shared {
                /// One-way delay of every link.
                #[serde(default = "default_dc_delay")]
                #[schemars(range(max = MAX_DELAY_NS))]
                #[schemars(extend("x-backends" = BOTH))]
                pub delay_ns: u64,
                /// Queues of every link.
                #[serde(default)]
                #[schemars(extend("x-backends" = BOTH))]
                pub ports: PresetPorts,
            }
        }
    };
}

dc_preset! {
    /// A two-tier Clos fabric: every leaf switch `leaf{l}` is linked to every spine `spine{s}`;
    /// hosts `h{l}_{i}` hang off leaf l. Paths between leaves tie over the spines (ECMP).
    LeafSpine {
        /// Spine switches.
        #[schemars(range(min = 1, max = 1000))]
        #[schemars(extend("x-backends" = BOTH))]
        pub spines: u32,
        /// Leaf (top-of-rack) switches.
        #[schemars(range(min = 1, max = 1000))]
        #[schemars(extend("x-backends" = BOTH))]
        pub leaves: u32,
        /// Hosts per leaf.
        #[schemars(range(min = 1, max = 1000))]
        #[schemars(extend("x-backends" = BOTH))]
        pub hosts_per_leaf: u32,
        /// Rate of every host link.
        #[schemars(range(min = 1, max = MAX_RATE_BPS))]
        #[schemars(extend("x-backends" = BOTH))]
        pub host_rate_bps: u64,
        /// Rate of every leaf–spine link (default: host rate × hosts per leaf / spines, a
        /// non-blocking fabric; lower it for oversubscription).
        #[serde(default)]
        #[schemars(range(min = 1, max = MAX_RATE_BPS))]
        #[schemars(extend("x-backends" = BOTH))]
        pub fabric_rate_bps: Option<u64>,
    }
}

fn default_dc_delay() -> u64 {
    10_000
}

impl LeafSpine {
    pub fn graph(&self) -> Graph {
        let fabric = self.fabric_rate_bps.unwrap_or_else(|| {
            (self.host_rate_bps.saturating_mul(self.hosts_per_leaf as u64) / self.spines as u64)
                .clamp(1, MAX_RATE_BPS)
        });
        let mut nodes = Vec::new();
        let mut links = Vec::new();
        for s in 0..self.spines {
            nodes.push(node(format!("spine{s}"), NodeRole::Switch));
        }
        for l in 0..self.leaves {
            let leaf = format!("leaf{l}");
            nodes.push(node(leaf.clone(), NodeRole::Switch));
            for s in 0..self.spines {
                links.push(self.ports.link(&leaf, &format!("spine{s}"), fabric, self.delay_ns));
            }
            for i in 0..self.hosts_per_leaf {
                let h = format!("h{l}_{i}");
                links.push(self.ports.link(&h, &leaf, self.host_rate_bps, self.delay_ns));
                nodes.push(node(h, NodeRole::Host));
            }
        }
        Graph { nodes, links, routing: Routing::Hops, fabric: None }
    }
}

dc_preset! {
    /// The k-ary fat-tree (Al-Fares et al., SIGCOMM 2008): k pods of k/2 edge switches
    /// `e{p}_{j}` and k/2 aggregation switches `a{p}_{j}`, (k/2)² core switches `c{i}`, k/2 hosts
    /// `h{p}_{j}_{h}` per edge switch; every link at `rate`. Hosts in different pods have (k/2)²
    /// equal paths (ECMP).
    FatTree {
        /// Ports per switch (even).
        #[schemars(range(min = 2, max = MAX_FAT_TREE_K))]
        #[schemars(extend("x-backends" = BOTH))]
        pub k: u32,
        /// Rate of every link.
        #[schemars(range(min = 1, max = MAX_RATE_BPS))]
        #[schemars(extend("x-backends" = BOTH))]
        pub rate_bps: u64,
    }
}

impl FatTree {
    pub fn graph(&self) -> Graph {
        let half = (self.k / 2) as usize;
        let (rate, delay) = (self.rate_bps, self.delay_ns);
        let mut nodes = Vec::new();
        let mut links = Vec::new();
        for c in 0..half * half {
            nodes.push(node(format!("c{c}"), NodeRole::Switch));
        }
        for p in 0..self.k as usize {
            for j in 0..half {
                let agg = format!("a{p}_{j}");
                nodes.push(node(agg.clone(), NodeRole::Switch));
                // Aggregation switch j of every pod reaches cores j·k/2 … j·k/2 + k/2 − 1.
                for c in 0..half {
                    links.push(self.ports.link(&agg, &format!("c{}", j * half + c), rate, delay));
                }
            }
            for j in 0..half {
                let edge = format!("e{p}_{j}");
                nodes.push(node(edge.clone(), NodeRole::Switch));
                for a in 0..half {
                    links.push(self.ports.link(&edge, &format!("a{p}_{a}"), rate, delay));
                }
                for h in 0..half {
                    let host = format!("h{p}_{j}_{h}");
                    links.push(self.ports.link(&host, &edge, rate, delay));
                    nodes.push(node(host, NodeRole::Host));
                }
            }
        }
        Graph { nodes, links, routing: Routing::Hops, fabric: None }
    }
}
