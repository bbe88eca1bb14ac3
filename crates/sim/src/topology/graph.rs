//! The graph's builder (`topology.kind = "graph"` and the presets): one simulator link per
//! direction of every configured link, in the order `routing.rs` numbers them, each with the
//! queue and path model a dumbbell's bottleneck would have with the same keys; every flow's
//! paths from its route. Links out of a host are its NIC (TSQ); links into a host deliver to it.

use super::routing::{routes, DirLink, Net, Router};
use super::star::wire_pfc;
use super::{add, intern, push_native_chain, scheduled_limit, Built, Fabric, Path};
use crate::config::{self, Config, GraphLink, NodeRole, QdiscSpec};
use crate::link::path::PathParts;
use crate::link::queue::{droptail::DropTail, step_ecn::StepEcn};
use crate::link::{aqm, Link, LinkId, NodeKind};
use crate::rng::Rng;
use cc::Nanos;
use pathmodel::aqm::{Limit, LinkContext};
use pathmodel::impair::{Change, Schedule};

/// First random stream of the graph's links (one per directed link, after every stream the
/// flows and the other builders use).
const GRAPH_LINK_STREAM: u64 = 1 << 40;
/// The random stream of the hosts' NIC clocks (`fabric.clock_ppm`), below the links'.
const GRAPH_HOST_CLOCK_STREAM: u64 = (1 << 40) - 1;

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
    let fabric = g.fabric.clone().unwrap_or_default();
    let ingress_pfc = fabric.lossless && fabric.pfc.accounting == config::PfcAccounting::Ingress;
    // Host clocks: ±clock_ppm around the nominal rate (the switches are the reference).
    let mut clock = Rng::new(cfg.seed, GRAPH_HOST_CLOCK_STREAM);
    for (i, d) in net.dir.iter().enumerate() {
        let switch_port = net.roles[d.from] == NodeRole::Switch;
        // With ingress PFC a switch's output port drops nothing: the ingress ports' budgets
        // (and the pool) decide, as on a star.
        let own_buffer = !(switch_port && ingress_pfc);
        let rng = Rng::new(cfg.seed, GRAPH_LINK_STREAM + i as u64);
        let mut l = port(&g.links[d.link], d, &net, rng, own_buffer);
        if switch_port {
            l.in_pool = fabric.shared_buffer_bytes.is_some() && !ingress_pfc;
            if ingress_pfc {
                l.pfc_mut().ingress_acct = true;
            }
        } else {
            l.rate_bps = skewed_rate(l.rate_bps, fabric.clock_ppm, &mut clock);
            l.jitter_ns = fabric.host_jitter_ns;
        }
        let cut_through = fabric.forwarding == config::Forwarding::CutThrough;
        if cut_through && l.path.is_none() && cuts_through(&net, i) {
            l.cut_through_bytes = fabric.header_bytes.unwrap_or_else(config::default_header_bytes);
        }
        let id = add(links, l);
        monitored.push((id, intern(d.name.clone())));
    }
    let routes = routes(cfg, &net).expect("checked");
    let paths: Vec<(Path, Path, Nanos)> =
        routes.iter().map(|r| paths_of(&net, base, &r.data, &r.ack)).collect();
    if fabric.lossless {
        let id = |d: usize| base + d as LinkId;
        let from_role = |d: usize| net.roles[net.dir[d].from];
        let to_role = |d: usize| net.roles[net.dir[d].to];
        let nics: Vec<(LinkId, u64)> = (0..net.dir.len())
            .filter(|&d| from_role(d) == NodeRole::Host)
            .map(|d| (id(d), net.dir[d].rate_bps))
            .collect();
        let trunks: Vec<LinkId> = (0..net.dir.len())
            .filter(|&d| from_role(d) == NodeRole::Switch && to_role(d) == NodeRole::Switch)
            .map(id)
            .collect();
        let frame_bytes = config::max_frame_bytes(cfg);
        wire_pfc(&fabric.pfc, ingress_pfc, &nics, &trunks, &paths, frame_bytes, links);
    }
    // ICTCP's reference: the link into the first flow's receiver.
    let receiver_rate_bps =
        routes.first().and_then(|r| r.data.last()).map_or(0, |&d| net.dir[d].rate_bps);
    Built {
        fabric: Fabric::Graph(GraphFabric { paths, router: Router::new(net), base }),
        monitored,
        receiver_rate_bps,
        pool_limit: fabric.shared_buffer_bytes.unwrap_or(u64::MAX),
        pool_alpha: fabric.shared_buffer_alpha,
    }
}

/// `rate` as a host's NIC clock runs it: scaled by a uniform draw within ± `ppm`.
fn skewed_rate(rate: u64, ppm: u32, clock: &mut Rng) -> u64 {
    if ppm == 0 {
        return rate;
    }
    let u = clock.next_f64() * 2.0 - 1.0;
    (rate as f64 * (1.0 + u * ppm as f64 * 1e-6)).round() as u64
}

/// Whether directed link `d` (without a path model, whose stages release a packet after its
/// last bit) may hand its packets over cut-through: it reaches a switch and is at least as
/// fast as every output port of that switch (within a clock's 0.1 %), as a star's links are.
fn cuts_through(net: &Net, d: usize) -> bool {
    let l = &net.dir[d];
    let outs = net.dir.iter().filter(|o| o.from == l.to).map(|o| o.rate_bps);
    net.roles[l.to] == NodeRole::Switch
        && outs.max().is_some_and(|m| l.rate_bps + l.rate_bps / 1000 >= m)
}

/// One direction of link `l`: its rate, delay and loss, its queue as a bottleneck's (a
/// discipline of the path model, else RED at arrival, the buffer, step marking at enqueue), and
/// its path model as a bottleneck's data direction (`from` → `to`) or ACK direction (the way
/// back), with the changes of its schedule that act on this direction.
/// `own_buffer` false: the queue has no drop-tail limit (a lossless port with ingress
/// accounting).
fn port(l: &GraphLink, d: &DirLink, net: &Net, rng: Rng, own_buffer: bool) -> Link {
    let to = match net.roles[d.to] {
        NodeRole::Host => NodeKind::Host,
        NodeRole::Switch => NodeKind::Router,
    };
    let mut link = Link::new(d.rate_bps, d.delay_ns, to, rng);
    link.is_sender_nic = net.roles[d.from] == NodeRole::Host;
    link.loss = l.loss;
    let (bytes, packets) = l.limits();
    let keys = l.path_keys();
    let limit = scheduled_limit(keys.schedule, bytes, packets);
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
            let buffer = DropTail::new(bytes, packets).filter(|_| limit.is_none() && own_buffer);
            let step_ecn = StepEcn::new(l.ecn_threshold_bytes, l.ecn_threshold_packets);
            push_native_chain(&mut link, l.red.as_ref(), buffer, step_ecn);
        }
    }
    let forward = net.names[d.from] == l.from;
    let schedule = direction_schedule(l, forward);
    let parts = if forward && (keys.any() || !schedule.changes().is_empty()) {
        Some(PathParts::data(&keys, schedule, None, limit))
    } else if !forward && (keys.any_reverse() || !schedule.changes().is_empty()) {
        Some(PathParts::ack(&keys, schedule, limit))
    } else {
        None
    };
    link.path = parts.map(Box::new);
    link
}

/// The changes of `l`'s schedule that act on one direction: every key in both, but `rate` on
/// the way back only when the way back runs at the link's `rate` (no `reverse_rate`, no
/// `trace_reverse`); an entry left with nothing to change is left out.
fn direction_schedule(l: &GraphLink, forward: bool) -> Schedule {
    let own_rate = forward || (l.reverse_rate_bps.is_none() && l.trace_reverse.is_none());
    let changes = l
        .schedule
        .iter()
        .map(|e| Change { rate_bps: e.rate_bps.filter(|_| own_rate), ..e.change() })
        .filter(|c| {
            c.rate_bps.is_some() || c.delay_ns.is_some() || c.loss.is_some() || c.limit.is_some()
        })
        .collect();
    Schedule::new(changes).expect("checked")
}
