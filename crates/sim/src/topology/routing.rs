//! Routes on a graph (`config/graph.rs`), computed once before the run, and the max-min fair
//! share of every flow.
//!
//! Directed links: each configured link gives its `from` → `to` direction, then (duplex) its
//! `to` → `from` direction, in the config's order; the builder creates the simulator's links in
//! this order, so a route's directed-link indices are its links.
//!
//! Shortest paths: per destination, a Dijkstra over the reversed links gives every node its
//! cost to the destination, the cost being (hops, 0) or (delay, hops) compared in that order —
//! the hop count as second key makes every step of an equal-cost walk strictly shorter, so no
//! zero-delay cycle can trap it. Only switches forward: a host is never a path's interior.
//!
//! ECMP: walking from the source, each node picks among its links that lie on a shortest path
//! by a hash of (seed, flow id, node) — a switch hashing the flow's 5-tuple, a different
//! function per switch so that the choices at successive switches are independent. A flow's
//! ACKs take its data path's links backwards when every one has a way back, else their own
//! shortest path.
//!
//! Max-min fair share (Bertsekas & Gallager, "Data Networks", §6.5.2, progressive filling):
//! every flow's rate grows at the same pace; a link whose capacity is used up freezes the
//! flows through it; repeat until every flow is frozen. Every flow counts as backlogged for the
//! whole run (a flow that starts late or stops early is still given its share).

use crate::config::{self, ConfigError, Graph, NodeRole, Routing};
use std::collections::{BTreeMap, BinaryHeap, HashMap};

/// One direction of a configured link.
#[derive(Clone, Debug)]
pub(crate) struct DirLink {
    /// Index of the configured link.
    pub link: usize,
    pub from: usize,
    pub to: usize,
    pub rate_bps: u64,
    pub delay_ns: u64,
    pub name: String,
}

/// A graph's nodes and directed links, indexed.
#[derive(Clone)]
pub(crate) struct Net {
    pub names: Vec<String>,
    pub roles: Vec<NodeRole>,
    pub dir: Vec<DirLink>,
    /// Per node, its outgoing directed links in index order.
    out: Vec<Vec<usize>>,
    /// Per node, its incoming directed links.
    into: Vec<Vec<usize>>,
    /// The way back of each directed link, if the link is duplex.
    back: Vec<Option<usize>>,
    index: HashMap<String, usize>,
    routing: Routing,
}

fn err<T>(path: impl Into<String>, msg: impl Into<String>) -> Result<T, ConfigError> {
    Err(ConfigError::new(path, msg))
}

impl Net {
    /// Index `g`, checking what the indexing relies on: unique node names, links between
    /// known nodes, unique link names, one connected graph.
    pub fn of(g: &Graph) -> Result<Net, ConfigError> {
        let mut index = HashMap::new();
        for (i, n) in g.nodes.iter().enumerate() {
            if n.name.is_empty() || n.name.contains('>') {
                return err(
                    format!("topology.nodes.{i}.name"),
                    format!("{:?} is not a node name (non-empty, without '>')", n.name),
                );
            }
            if index.insert(n.name.clone(), i).is_some() {
                return err(
                    format!("topology.nodes.{i}.name"),
                    format!("node {:?} is defined twice", n.name),
                );
            }
        }
        let known = |i: usize, key: &str, name: &str| -> Result<usize, ConfigError> {
            index.get(name).copied().ok_or_else(|| {
                ConfigError::new(
                    format!("topology.links.{i}.{key}"),
                    format!("unknown node {name:?}; topology.nodes names {}", list(g)),
                )
            })
        };
        let mut dir = Vec::new();
        let mut back = Vec::new();
        let mut names: HashMap<String, usize> = HashMap::new();
        for (i, l) in g.links.iter().enumerate() {
            let (a, b) = (known(i, "from", &l.from)?, known(i, "to", &l.to)?);
            if a == b {
                return err(format!("topology.links.{i}.to"), "a link must join two nodes");
            }
            let mut add = |name: String, from, to, rate_bps| {
                if name.is_empty() || name.contains('>') {
                    return err(
                        format!("topology.links.{i}.name"),
                        format!("{name:?} is not a link name (non-empty, without '>')"),
                    );
                }
                if let Some(j) = names.insert(name.clone(), i) {
                    return err(
                        format!("topology.links.{i}.name"),
                        format!("two links are named {name:?} (topology.links.{j} and this one)"),
                    );
                }
                let delay_ns = l.delay_ns;
                dir.push(DirLink { link: i, from, to, rate_bps, delay_ns, name });
                Ok(dir.len() - 1)
            };
            let f = add(l.forward_name(), a, b, l.rate_bps())?;
            back.push(None);
            if l.duplex {
                let r = add(l.reverse_name(), b, a, l.reverse_rate_bps())?;
                back.push(Some(f));
                back[f] = Some(r);
            } else if l.reverse_rate_bps.is_some() {
                return err(
                    format!("topology.links.{i}.reverse_rate_bps"),
                    "a link with duplex = false has no way back to give a rate",
                );
            }
        }
        let n = g.nodes.len();
        let (mut out, mut into) = (vec![Vec::new(); n], vec![Vec::new(); n]);
        for (d, l) in dir.iter().enumerate() {
            out[l.from].push(d);
            into[l.to].push(d);
        }
        let net = Net {
            names: g.nodes.iter().map(|n| n.name.clone()).collect(),
            roles: g.nodes.iter().map(|n| n.kind).collect(),
            dir,
            out,
            into,
            back,
            index,
            routing: g.routing,
        };
        if let Some(lone) = net.unreached_from_first() {
            return err(
                "topology.links",
                format!(
                    "the graph is not connected: node {:?} has no links to node {:?}",
                    net.names[lone], net.names[0]
                ),
            );
        }
        Ok(net)
    }

    /// A node the first one cannot reach over links in either direction, if any.
    fn unreached_from_first(&self) -> Option<usize> {
        let mut seen = vec![false; self.names.len()];
        let mut stack = vec![0];
        seen[0] = true;
        while let Some(u) = stack.pop() {
            for &d in self.out[u].iter().chain(&self.into[u]) {
                for v in [self.dir[d].from, self.dir[d].to] {
                    if !seen[v] {
                        seen[v] = true;
                        stack.push(v);
                    }
                }
            }
        }
        seen.iter().position(|s| !s)
    }

    /// Every host (node indices, in node order).
    pub fn hosts(&self) -> Vec<usize> {
        (0..self.names.len()).filter(|&n| self.roles[n] == NodeRole::Host).collect()
    }

    pub fn node(&self, name: &str) -> Option<usize> {
        self.index.get(name).copied()
    }

    fn cost(&self, d: usize) -> (u64, u64) {
        match self.routing {
            Routing::Hops => (1, 0),
            Routing::Delay => (self.dir[d].delay_ns, 1),
        }
    }

    /// Every node's cost to `dst` over links only switches forward on (u64::MAX: none).
    fn costs_to(&self, dst: usize) -> Vec<(u64, u64)> {
        let inf = (u64::MAX, u64::MAX);
        let mut cost = vec![inf; self.names.len()];
        cost[dst] = (0, 0);
        let mut heap = BinaryHeap::new();
        heap.push(std::cmp::Reverse(((0u64, 0u64), dst)));
        while let Some(std::cmp::Reverse((c, v))) = heap.pop() {
            if c > cost[v] || (v != dst && self.roles[v] == NodeRole::Host) {
                continue; // stale, or a host: it does not forward towards dst
            }
            for &d in &self.into[v] {
                let u = self.dir[d].from;
                let (a, b) = self.cost(d);
                let cu = (c.0.saturating_add(a), c.1.saturating_add(b));
                if cu < cost[u] {
                    cost[u] = cu;
                    heap.push(std::cmp::Reverse((cu, u)));
                }
            }
        }
        cost
    }

    /// The route of flow `flow` from `src` to `dst` given `dst`'s costs (None: no route).
    fn walk(&self, cost: &[(u64, u64)], src: usize, dst: usize, key: u64) -> Option<Vec<usize>> {
        if cost[src].0 == u64::MAX {
            return None;
        }
        let mut path = Vec::new();
        let mut u = src;
        while u != dst {
            let ties: Vec<usize> = self.out[u]
                .iter()
                .copied()
                .filter(|&d| {
                    let v = self.dir[d].to;
                    let (a, b) = self.cost(d);
                    cost[v].0 != u64::MAX
                        && (v == dst || self.roles[v] == NodeRole::Switch)
                        && (cost[v].0 + a, cost[v].1 + b) == cost[u]
                })
                .collect();
            let d = ties[(ecmp_hash(key, u as u64) % ties.len() as u64) as usize];
            path.push(d);
            u = self.dir[d].to;
        }
        Some(path)
    }
}

fn list(g: &Graph) -> String {
    let names: Vec<&str> = g.nodes.iter().take(8).map(|n| n.name.as_str()).collect();
    let more = if g.nodes.len() > 8 { ", …" } else { "" };
    format!("{}{more}", names.join(", "))
}

/// splitmix64 (Steele, Lea & Flood 2014) of the flow's key and the node: the switch's hash.
fn ecmp_hash(key: u64, node: u64) -> u64 {
    let mut z = key ^ node.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A flow's routes: directed-link indices, first hop first.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct FlowRoute {
    pub src: usize,
    pub dst: usize,
    pub data: Vec<usize>,
    pub ack: Vec<usize>,
}

/// The ECMP key of the flow with simulator id `flow_id`: a switch's 5-tuple hash input.
pub(crate) fn flow_key(seed: u64, flow_id: u64) -> u64 {
    seed ^ flow_id.wrapping_mul(0xD6E8_FEB8_6659_FD93)
}

/// Routes between any two hosts, each destination's costs computed once, when first asked for
/// (a workload's flows and the traffic sources are routed as the configured flows are).
pub(crate) struct Router {
    pub net: Net,
    by_dst: HashMap<usize, Vec<(u64, u64)>>,
}

/// Why a pair of hosts has no usable route.
pub(crate) enum NoRoute {
    /// No path at all: (from, to).
    Unreachable(usize, usize),
    /// A shortest path longer than a path holds: (from, to, links).
    TooLong(usize, usize, usize),
}

impl NoRoute {
    /// The error, in words, for the field `p`.
    pub fn error(&self, net: &Net, p: String) -> ConfigError {
        match *self {
            NoRoute::Unreachable(from, to) => ConfigError::new(
                p,
                format!(
                    "no route from {:?} to {:?} (only switches forward; check the links' \
                     directions)",
                    net.names[from], net.names[to]
                ),
            ),
            NoRoute::TooLong(from, to, n) => ConfigError::new(
                p,
                format!(
                    "the route from {:?} to {:?} has {n} links; a path holds at most {}",
                    net.names[from],
                    net.names[to],
                    super::MAX_HOPS
                ),
            ),
        }
    }
}

impl Router {
    pub fn new(net: Net) -> Router {
        Router { net, by_dst: HashMap::new() }
    }

    /// One way from `from` to `to` for the flow of ECMP key `key`.
    fn one_way(&mut self, from: usize, to: usize, key: u64) -> Result<Vec<usize>, NoRoute> {
        let net = &self.net;
        let cost = self.by_dst.entry(to).or_insert_with(|| net.costs_to(to));
        let path = net.walk(cost, from, to, key).ok_or(NoRoute::Unreachable(from, to))?;
        if path.len() > super::MAX_HOPS {
            return Err(NoRoute::TooLong(from, to, path.len()));
        }
        Ok(path)
    }

    /// The data and ACK (or echo) routes between hosts `src` and `dst` of the flow of ECMP key
    /// `key`: the ACKs take the data path's links backwards when every one has a way back,
    /// else their own shortest path.
    pub fn pair(&mut self, src: usize, dst: usize, key: u64) -> Result<FlowRoute, NoRoute> {
        let data = self.one_way(src, dst, key)?;
        let back = data.iter().rev().map(|&d| self.net.back[d]).collect::<Option<Vec<usize>>>();
        let ack = match back {
            Some(ack) => ack,
            None => self.one_way(dst, src, key)?,
        };
        Ok(FlowRoute { src, dst, data, ack })
    }
}

/// The host named `name` for the field `p`: it exists and is a host.
pub(crate) fn host_named(net: &Net, p: String, name: &str) -> Result<usize, ConfigError> {
    match net.node(name) {
        None => err(p, format!("unknown host {name:?}")),
        Some(n) if net.roles[n] != NodeRole::Host => {
            err(p, format!("{name:?} is a switch; traffic starts and ends at hosts"))
        }
        Some(n) => Ok(n),
    }
}

/// Every simulated flow's route on `cfg`'s graph `g` (flows in flow-id order); the error names
/// the flow's field.
pub(crate) fn routes(cfg: &config::Config, net: &Net) -> Result<Vec<FlowRoute>, ConfigError> {
    let mut router = Router { net: net.clone(), by_dst: HashMap::new() };
    let mut out = Vec::with_capacity(cfg.flow_count() as usize);
    for (id, (i, f)) in cfg.expanded_flows().enumerate() {
        let host = |key: &str, name: &Option<String>| -> Result<usize, ConfigError> {
            let p = format!("flows.{i}.{key}");
            let Some(name) = name else {
                return err(p, "a flow on a graph names its host (src and dst)");
            };
            match net.node(name) {
                None => err(p, format!("unknown node {name:?}")),
                Some(n) if net.roles[n] != NodeRole::Host => {
                    err(p, format!("{name:?} is a switch; flows start and end at hosts"))
                }
                Some(n) => Ok(n),
            }
        };
        let (src, dst) = (host("src", &f.src)?, host("dst", &f.dst)?);
        if src == dst {
            return err(
                format!("flows.{i}.dst"),
                format!("is the flow's src ({:?})", net.names[src]),
            );
        }
        let key = flow_key(cfg.seed, id as u64);
        let r = router.pair(src, dst, key).map_err(|e| e.error(net, format!("flows.{i}.dst")))?;
        out.push(r);
    }
    Ok(out)
}

/// Max-min fair rates (bit/s on the wire) of flows crossing `paths` (directed-link indices)
/// over links of capacity `capacity_bps`, by progressive filling.
pub(crate) fn max_min_rates(capacity_bps: &[f64], paths: &[Vec<usize>]) -> Vec<f64> {
    let mut rate = vec![0.0; paths.len()];
    let mut frozen = vec![false; paths.len()];
    let mut left: Vec<f64> = capacity_bps.to_vec();
    // Links in use and the flows through each (a BTreeMap: a fixed order, exact results).
    let mut users: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (f, p) in paths.iter().enumerate() {
        for &l in p {
            users.entry(l).or_default().push(f);
        }
    }
    loop {
        // The smallest equal increment that fills some link.
        let mut step = f64::INFINITY;
        for (&l, fs) in &users {
            let n = fs.iter().filter(|&&f| !frozen[f]).count();
            if n > 0 {
                step = step.min(left[l] / n as f64);
            }
        }
        if !step.is_finite() {
            return rate;
        }
        for (f, r) in rate.iter_mut().enumerate() {
            if !frozen[f] && !paths[f].is_empty() {
                *r += step;
            }
        }
        for (&l, fs) in &users {
            let n = fs.iter().filter(|&&f| !frozen[f]).count();
            left[l] -= step * n as f64;
        }
        // Freeze the flows of every link now full (to a relative 1e-9: float residue).
        let full: Vec<usize> =
            users.keys().copied().filter(|&l| left[l] <= 1e-9 * capacity_bps[l]).collect();
        for l in full {
            for &f in &users[&l] {
                frozen[f] = true;
            }
        }
    }
}

/// The goodput share (payload bit/s) max-min fairness gives each flow: the wire rate scaled by
/// the payload's part of its frames.
pub(crate) fn max_min_goodput(cfg: &config::Config, net: &Net, routes: &[FlowRoute]) -> Vec<f64> {
    let cap: Vec<f64> = net.dir.iter().map(|d| d.rate_bps as f64).collect();
    let paths: Vec<Vec<usize>> = routes.iter().map(|r| r.data.clone()).collect();
    let wire = max_min_rates(&cap, &paths);
    cfg.expanded_flows()
        .zip(wire)
        .map(|((_, f), w)| {
            let frame =
                f.mss_bytes + transport::TCP_IP_HEADER_BYTES + transport::ETHERNET_OVERHEAD_BYTES;
            w * f.mss_bytes as f64 / frame as f64
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progressive_filling_gives_the_textbook_max_min_rates() {
        // Links 0 (10) and 1 (4): flow 0 crosses both, flow 1 link 0, flow 2 link 1.
        // Link 1 fills first at 2 each; flow 1 takes what is left of link 0: 8.
        let r = max_min_rates(&[10.0, 4.0], &[vec![0, 1], vec![0], vec![1]]);
        assert_eq!(r, vec![2.0, 8.0, 2.0]);
        // One link, three flows: a third each; a flow on no link gets nothing.
        let r = max_min_rates(&[9.0], &[vec![0], vec![0], vec![0], vec![]]);
        assert_eq!(r, vec![3.0, 3.0, 3.0, 0.0]);
    }

    #[test]
    fn acks_take_the_data_links_backwards_unless_a_link_is_one_way() {
        let cfg = |duplex: bool| {
            let v = serde_json::json!({"duration_ns": 100_000_000u64,
                "topology": {"kind": "graph",
                    "nodes": [{"name": "a", "kind": "host"}, {"name": "s", "kind": "switch"},
                        {"name": "t", "kind": "switch"}, {"name": "b", "kind": "host"}],
                    "links": [{"from": "a", "to": "s", "rate_bps": 1000},
                        {"from": "s", "to": "b", "rate_bps": 1000, "duplex": duplex},
                        {"from": "b", "to": "t", "rate_bps": 1000, "duplex": false},
                        {"from": "t", "to": "s", "rate_bps": 1000, "duplex": false}]},
                "flows": [{"cc": "cubic", "src": "a", "dst": "b"}]});
            config::Config::from_json(&v.to_string()).unwrap()
        };
        let c = cfg(true);
        let Some(g) = c.topology.graph() else { unreachable!() };
        let net = Net::of(&g).unwrap();
        let r = &routes(&c, &net).unwrap()[0];
        let names = |p: &[usize]| p.iter().map(|&d| net.dir[d].name.as_str()).collect::<Vec<_>>();
        assert_eq!(names(&r.data), ["a-s", "s-b"]);
        assert_eq!(names(&r.ack), ["b-s", "s-a"]);
        let c = cfg(false);
        let Some(g) = c.topology.graph() else { unreachable!() };
        let net = Net::of(&g).unwrap();
        let r = &routes(&c, &net).unwrap()[0];
        let names = |p: &[usize]| p.iter().map(|&d| net.dir[d].name.as_str()).collect::<Vec<_>>();
        assert_eq!(names(&r.ack), ["b-t", "t-s", "s-a"], "its own route home");
    }
}
