//! The graph's builder (`topology.kind = "graph"` and the presets): one simulator link per
//! direction of every configured link, in the order `routing.rs` numbers them, each with the
//! queue a dumbbell's bottleneck would have with the same keys; every flow's paths from its
//! route. Links out of a host are its NIC (TSQ); links into a host deliver to it.

use super::routing::{routes, DirLink, Net, Router};
use super::{add, intern, push_native_chain, Built, Fabric, Path};
use crate::config::{self, Config, GraphLink, NodeRole, QdiscSpec};
use crate::link::queue::{droptail::DropTail, step_ecn::StepEcn};
use crate::link::{aqm, Link, LinkId, NodeKind};
use crate::rng::Rng;
use cc::Nanos;
use pathmodel::aqm::{Limit, LinkContext};

/// First random stream of the graph's links (one per directed link, after every stream the
/// flows and the other builders use).
const GRAPH_LINK_STREAM: u64 = 1 << 40;

/// Per flow: data path, ACK path, base RTT (propagation); and the routes between any two
/// hosts, for the traffic sources and a workload's flows.
pub(crate) struct GraphFabric {
    paths: Vec<(Path, Path, Nanos)>,
    router: Router,
    /// The simulator id of directed link 0.
    base: LinkId,
}

impl GraphFabric {
    pub(crate) fn flow_paths(&self, i: usize) -> (Path, Path, Nanos) {
        self.paths[i]
    }

    /// The node index of host `name` (checked to exist).
    pub(crate) fn host(&self, name: &str) -> usize {
        self.router.net.node(name).expect("checked")
    }

    /// Data path, ACK path and base RTT of the flow of ECMP key `key` from host `src` to host
    /// `dst` (node indices; a route checked to exist).
    pub(crate) fn pair_paths(&mut self, src: usize, dst: usize, key: u64) -> (Path, Path, Nanos) {
        let Ok(r) = self.router.pair(src, dst, key) else { panic!("checked: a route") };
        paths_of(&self.router.net, self.base, &r.data, &r.ack)
    }

    /// Every host (node indices, in node order).
    pub(crate) fn hosts(&self) -> Vec<usize> {
        self.router.net.hosts()
    }

    /// The rate of the directed link named `name` (checked to exist).
    pub(crate) fn link_rate_bps(&self, name: &str) -> u64 {
        self.router.net.dir.iter().find(|d| d.name == name).expect("checked").rate_bps
    }

    /// The rate of host `h`'s links out, summed (its NICs).
    pub(crate) fn host_out_rate_bps(&self, h: usize) -> u64 {
        self.router.net.dir.iter().filter(|d| d.from == h).map(|d| d.rate_bps).sum()
    }
}

/// Simulator paths and base RTT (propagation both ways) of a route's directed links.
fn paths_of(net: &Net, base: LinkId, data: &[usize], ack: &[usize]) -> (Path, Path, Nanos) {
    let ids = |r: &[usize]| r.iter().map(|&d| base + d as LinkId).collect::<Vec<_>>();
    let rtt: Nanos = data.iter().chain(ack).map(|&d| net.dir[d].delay_ns).sum();
    (Path::new(&ids(data)), Path::new(&ids(ack)), rtt)
}

pub(super) fn build_graph(cfg: &Config, g: &config::Graph, links: &mut Vec<Link>) -> Built {
    let net = Net::of(g).expect("checked");
    let base = links.len() as LinkId;
    let mut monitored = Vec::with_capacity(net.dir.len());
    for (i, d) in net.dir.iter().enumerate() {
        let l = port(&g.links[d.link], d, &net, Rng::new(cfg.seed, GRAPH_LINK_STREAM + i as u64));
        let id = add(links, l);
        monitored.push((id, intern(d.name.clone())));
    }
    let routes = routes(cfg, &net).expect("checked");
    let paths: Vec<(Path, Path, Nanos)> =
        routes.iter().map(|r| paths_of(&net, base, &r.data, &r.ack)).collect();
    // ICTCP's reference: the link into the first flow's receiver.
    let receiver_rate_bps =
        routes.first().and_then(|r| r.data.last()).map_or(0, |&d| net.dir[d].rate_bps);
    Built {
        fabric: Fabric::Graph(GraphFabric { paths, router: Router::new(net), base }),
        monitored,
        receiver_rate_bps,
        pool_limit: u64::MAX,
        pool_alpha: None,
    }
}

/// One direction of link `l`: its rate, delay and loss, and its queue as a bottleneck's (a
/// discipline of the path model, else RED at arrival, the buffer, step marking at enqueue).
fn port(l: &GraphLink, d: &DirLink, net: &Net, rng: Rng) -> Link {
    let to = match net.roles[d.to] {
        NodeRole::Host => NodeKind::Host,
        NodeRole::Switch => NodeKind::Router,
    };
    let mut link = Link::new(d.rate_bps, d.delay_ns, to, rng);
    link.is_sender_nic = net.roles[d.from] == NodeRole::Host;
    link.loss = l.loss;
    let (bytes, packets) = l.limits();
    match l.qdisc.as_ref().filter(|q| !matches!(q, QdiscSpec::Droptail { .. })) {
        Some(spec) => {
            let ctx = LinkContext {
                rate_bps: d.rate_bps,
                limit: Limit { bytes, packets },
                ecn_threshold_bytes: l.ecn_threshold_bytes,
                ecn_threshold_packets: l.ecn_threshold_packets,
            };
            link.aqm = Some(Box::new(aqm::LinkAqm::new(spec, &ctx)));
        }
        None => {
            let buffer = DropTail::new(bytes, packets);
            let step_ecn = StepEcn::new(l.ecn_threshold_bytes, l.ecn_threshold_packets);
            push_native_chain(&mut link, l.red.as_ref(), buffer, step_ecn);
        }
    }
    link
}
