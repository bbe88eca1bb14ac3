//! Topology builders: the dumbbell (every flow crosses one bottleneck link) and the star (one
//! top-of-rack switch with n worker hosts and one aggregator; seed 000's data-center fabric).
//!
//! A builder creates the links and tells each flow its data and ACK paths (first hop first; a
//! packet's `hop` indexes them). Paths are small fixed arrays: no allocation per flow or packet.
//!
//! Star links (all at `rate_bps` unless the aggregator's differs, each with `delay_ns`):
//! - `nic_w`: worker w's NIC into the switch (the sender NIC: TSQ, PFC-pausable);
//! - `tor_to_agg`: the switch's output port to the aggregator (the bottleneck of incast);
//! - `agg_nic`: the aggregator's NIC into the switch (ACKs, requests);
//! - `tor_to_w`: the switch's output port to worker w (ACKs).
//!
//! Data: nic_w → tor_to_agg → aggregator. ACKs: agg_nic → tor_to_w → worker w.
//!
//! Forwarding: store-and-forward hands a packet to the output port once its last bit has
//! arrived. Cut-through (approximation): a packet from an ingress link whose rate is at least
//! the output port's is handed over once its first `header_bytes` have arrived, i.e. the ingress
//! link delivers it `(wire − header) · 8 / rate` earlier. With equal rates this is exactly what
//! a cut-through switch achieves when the output port is idle; when the port is busy the packet
//! queues and leaves when the port frees, which at equal rates can never outrun its own tail, so
//! the early hand-over changes no departure a store-and-forward switch would not also allow
//! except by the saved latency. Faster output ports fall back to store-and-forward (as real
//! switches do, to avoid underrun).

use super::*;

/// Longest path a builder produces (dumbbell: 3 hops; star: 2).
pub(crate) const MAX_HOPS: usize = 4;

/// A flow's route: links in order, first hop first.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Path {
    pub links: [LinkId; MAX_HOPS],
    pub len: u8,
}

impl Path {
    pub fn new(hops: &[LinkId]) -> Path {
        let mut links = [0; MAX_HOPS];
        links[..hops.len()].copy_from_slice(hops);
        Path { links, len: hops.len() as u8 }
    }
    #[inline]
    pub fn first(&self) -> LinkId {
        self.links[0]
    }
    pub fn hops(&self) -> &[LinkId] {
        &self.links[..self.len as usize]
    }
}

pub(crate) struct DumbbellFabric {
    bottleneck: LinkId,
    bottleneck_rev: LinkId,
    recv_in: LinkId,
    recv_nic: LinkId,
    access_rate: u64,
    rtt_ns: Nanos,
    /// Sender hosts: (sender index, NIC, downlink).
    hosts: Vec<(Option<u32>, LinkId, LinkId)>,
}

pub(crate) struct StarFabric {
    pub to_agg: LinkId,
    pub agg_nic: LinkId,
    /// Per worker: (NIC into the switch, switch port to the worker).
    pub workers: Vec<(LinkId, LinkId)>,
    pub delay_ns: Nanos,
}

pub(crate) enum Fabric {
    Dumbbell(DumbbellFabric),
    Star(StarFabric),
}

/// What a builder returns besides the links it pushed.
pub(crate) struct Built {
    pub fabric: Fabric,
    pub monitored: Vec<(LinkId, &'static str)>,
    /// Capacity of the receiver host's link (ICTCP's reference).
    pub receiver_rate_bps: u64,
    /// Limit of the switch's shared buffer (u64::MAX = none).
    pub pool_limit: u64,
}

fn add(links: &mut Vec<Link>, l: Link) -> LinkId {
    links.push(l);
    (links.len() - 1) as LinkId
}

/// A `&'static str` for a generated queue name, leaked once per distinct name per process.
pub(crate) fn intern(name: String) -> &'static str {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static NAMES: OnceLock<Mutex<HashMap<String, &'static str>>> = OnceLock::new();
    let mut m = NAMES.get_or_init(|| Mutex::new(HashMap::new())).lock().unwrap();
    if let Some(s) = m.get(&name) {
        return s;
    }
    let s: &'static str = Box::leak(name.clone().into_boxed_str());
    m.insert(name, s);
    s
}

/// `cfg` is resolved ([`Config::resolved`]): no default is left to fill here.
pub(crate) fn build(cfg: &Config, links: &mut Vec<Link>) -> Built {
    match &cfg.topology {
        config::Topology::Star(st) => build_star(cfg, st, links),
        config::Topology::Dumbbell(d) => build_dumbbell(cfg, d, links),
    }
}

/// Every sender host has its own access link (NIC) into router R1; R1 → R2 is the bottleneck;
/// R2 → the receiver host. ACKs return over mirror links. Hosts are created per flow in
/// `flow_paths` (flows with the same `sender` share one).
fn build_dumbbell(cfg: &Config, d: &config::Dumbbell, links: &mut Vec<Link>) -> Built {
    let b = &d.bottleneck;
    let seed = cfg.seed;
    let access_rate = d.access_rate_bps.expect("resolved");
    let half_rtt = b.rtt_ns / 2;
    let derived = cfg.derived();
    let mut bn = Link::new(b.rate_bps, half_rtt, NodeKind::Router, Rng::new(seed, 1));
    bn.limit_bytes = derived.buffer_bytes.unwrap_or(u64::MAX);
    bn.limit_pkts = derived.buffer_packets.unwrap_or(u64::MAX);
    bn.loss = b.loss;
    bn.ecn_k_bytes = b.ecn_threshold_bytes;
    bn.ecn_k_pkts = b.ecn_threshold_packets;
    if let Some(r) = &b.red {
        bn.red = Some(Box::new(red::Red::new(r.min_th_bytes, r.max_th_bytes, r.max_p, r.weight, b.rate_bps)));
    }
    let mut bn_rev = Link::new(b.rate_bps, b.rtt_ns - half_rtt, NodeKind::Router, Rng::new(seed, 2));
    bn_rev.limit_bytes = bn.limit_bytes;
    bn_rev.limit_pkts = bn.limit_pkts;
    bn_rev.loss = b.ack_loss;
    let bottleneck = add(links, bn);
    let bottleneck_rev = add(links, bn_rev);
    // One receiver host for all flows.
    let recv_in = add(links, Link::new(access_rate, 0, NodeKind::Host, Rng::new(seed, 3)));
    let recv_nic = add(links, Link::new(access_rate, 0, NodeKind::Router, Rng::new(seed, 4)));
    Built {
        fabric: Fabric::Dumbbell(DumbbellFabric {
            bottleneck,
            bottleneck_rev,
            recv_in,
            recv_nic,
            access_rate,
            rtt_ns: b.rtt_ns,
            hosts: Vec::new(),
        }),
        monitored: vec![(bottleneck, "bottleneck"), (bottleneck_rev, "bottleneck_rev")],
        receiver_rate_bps: access_rate,
        pool_limit: u64::MAX,
    }
}

fn build_star(cfg: &Config, st: &config::Star, links: &mut Vec<Link>) -> Built {
    let seed = cfg.seed;
    let agg_rate = st.aggregator_rate_bps.expect("resolved");
    let port_limit = st.buffer_bytes.unwrap_or(u64::MAX);
    let pooled = st.shared_buffer_bytes.is_some();
    let cut_through = st.forwarding == config::Forwarding::CutThrough;
    let mk_port = |rate: u64, stream: u64| {
        let mut l = Link::new(rate, st.delay_ns, NodeKind::Host, Rng::new(seed, stream));
        l.limit_bytes = port_limit;
        l.ecn_k_bytes = st.ecn_threshold_bytes;
        l.in_pool = pooled;
        l
    };
    // Host clocks: ±clock_ppm around the nominal rate (the switch ports are the reference).
    let mut clock = Rng::new(seed, 9_000);
    let mut skew = |rate: u64| -> u64 {
        if st.clock_ppm == 0 {
            return rate;
        }
        let u = clock.next_f64() * 2.0 - 1.0;
        (rate as f64 * (1.0 + u * st.clock_ppm as f64 * 1e-6)).round() as u64
    };
    let to_agg = add(links, mk_port(agg_rate, 1));
    let mut agg_nic_l = Link::new(skew(agg_rate), st.delay_ns, NodeKind::Router, Rng::new(seed, 2));
    let mut workers = Vec::with_capacity(st.workers as usize);
    let mut monitored = vec![(to_agg, "tor_to_agg")];
    let mut worker_nics = Vec::new();
    for w in 0..st.workers as u64 {
        let mut nic = Link::new(skew(st.rate_bps), st.delay_ns, NodeKind::Router, Rng::new(seed, 100 + 2 * w));
        nic.is_sender_nic = true;
        nic.jitter_ns = st.host_jitter_ns;
        if cut_through && st.rate_bps + st.rate_bps / 1000 >= agg_rate {
            nic.cut_through_bytes = st.header_bytes;
        }
        let nic = add(links, nic);
        let down = add(links, mk_port(st.rate_bps, 101 + 2 * w));
        workers.push((nic, down));
        worker_nics.push(nic);
    }
    agg_nic_l.jitter_ns = st.host_jitter_ns;
    if cut_through && agg_rate + agg_rate / 1000 >= st.rate_bps {
        agg_nic_l.cut_through_bytes = st.header_bytes;
    }
    let agg_nic = add(links, agg_nic_l);
    monitored.push((agg_nic, "agg_nic"));
    for (w, &(nic, _)) in workers.iter().enumerate() {
        monitored.push((nic, intern(format!("nic_{w}"))));
    }
    if st.lossless {
        let p = &st.pfc;
        // Every output port pauses the ingress links that feed it. The PAUSE frame travels on
        // the switch's transmit side of the ingress port: one propagation delay plus a
        // 64-byte control frame's serialization.
        let pause_latency = |rate: u64| st.delay_ns + (64u128 * 8 * 1_000_000_000 / rate as u128) as Nanos;
        let quanta_ns = |rate: u64| (p.quanta as u128 * 512 * 1_000_000_000 / rate as u128) as Nanos;
        let up: Vec<(LinkId, Nanos)> = worker_nics.iter().map(|&l| (l, pause_latency(st.rate_bps))).collect();
        links[to_agg as usize].pfc = Some(Box::new(pfc::PortPfc::new(p.xoff_bytes, p.xon_bytes, quanta_ns(st.rate_bps), up)));
        for &(_, down) in &workers {
            let up = vec![(agg_nic, pause_latency(agg_rate))];
            links[down as usize].pfc = Some(Box::new(pfc::PortPfc::new(p.xoff_bytes, p.xon_bytes, quanta_ns(agg_rate), up)));
        }
        for &l in &worker_nics {
            links[l as usize].pause_quanta_ns = quanta_ns(st.rate_bps);
        }
        links[agg_nic as usize].pause_quanta_ns = quanta_ns(agg_rate);
    }
    Built {
        fabric: Fabric::Star(StarFabric { to_agg, agg_nic, workers, delay_ns: st.delay_ns }),
        monitored,
        receiver_rate_bps: agg_rate,
        pool_limit: st.shared_buffer_bytes.unwrap_or(u64::MAX),
    }
}

impl Fabric {
    /// Data path, ACK path and base RTT (propagation) of configured flow `i`.
    pub(crate) fn flow_paths(&mut self, links: &mut Vec<Link>, f: &config::Flow, i: usize, seed: u64) -> (Path, Path, Nanos) {
        match self {
            Fabric::Dumbbell(d) => {
                let existing = f.sender.and_then(|s| d.hosts.iter().find(|h| h.0 == Some(s)).map(|h| (h.1, h.2)));
                let (nic, down) = match existing {
                    Some(x) => x,
                    None => {
                        let dl = f.extra_rtt_ns / 2;
                        let mut nic = Link::new(d.access_rate, dl, NodeKind::Router, Rng::new(seed, 100 + 2 * i as u64));
                        nic.is_sender_nic = true;
                        let nic = add(links, nic);
                        let down = add(
                            links,
                            Link::new(d.access_rate, f.extra_rtt_ns - dl, NodeKind::Host, Rng::new(seed, 101 + 2 * i as u64)),
                        );
                        d.hosts.push((f.sender, nic, down));
                        (nic, down)
                    }
                };
                (
                    Path::new(&[nic, d.bottleneck, d.recv_in]),
                    Path::new(&[d.recv_nic, d.bottleneck_rev, down]),
                    d.rtt_ns + f.extra_rtt_ns,
                )
            }
            Fabric::Star(s) => {
                let w = f.sender.unwrap_or(i as u32) as usize;
                s.worker_paths(w)
            }
        }
    }
}

impl StarFabric {
    pub(crate) fn worker_paths(&self, w: usize) -> (Path, Path, Nanos) {
        let (nic, down) = self.workers[w];
        (Path::new(&[nic, self.to_agg]), Path::new(&[self.agg_nic, down]), 4 * self.delay_ns)
    }
}
