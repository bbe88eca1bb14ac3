//! Topology builders: the dumbbell (every flow crosses one bottleneck link) and the star (one
//! top-of-rack switch with n worker hosts and one aggregator; the Waterloo DC study's data-center
//! fabric).
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

use crate::config::{self, Config};
use crate::link::queue::{droptail::DropTail, red::Red, step_ecn::StepEcn};
use crate::link::{Link, LinkId, NodeKind};
use crate::pfc;
use crate::rng::Rng;
use cc::Nanos;

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
    /// Per worker: data path, ACK path, base RTT (propagation).
    paths: Vec<(Path, Path, Nanos)>,
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
    /// Its dynamic threshold (alpha), if any.
    pub pool_alpha: Option<f64>,
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
    bn.loss = b.loss;
    // The chain's order is the order the disciplines act in (`link/queue/mod.rs`): RED at
    // arrival, the buffer at admission, step marking at enqueue.
    if let Some(r) = &b.red {
        bn.qdisc.push(Red::new(r.min_th_bytes, r.max_th_bytes, r.max_p, r.weight, b.rate_bps));
    }
    let buffer = DropTail::new(derived.buffer_bytes, derived.buffer_packets);
    if let Some(d) = buffer.clone() {
        bn.qdisc.push(d);
    }
    if let Some(m) = StepEcn::new(b.ecn_threshold_bytes, b.ecn_threshold_packets) {
        bn.qdisc.push(m);
    }
    let mut bn_rev =
        Link::new(b.rate_bps, b.rtt_ns - half_rtt, NodeKind::Router, Rng::new(seed, 2));
    if let Some(d) = buffer {
        bn_rev.qdisc.push(d);
    }
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
        pool_alpha: None,
    }
}

fn build_star(cfg: &Config, st: &config::Star, links: &mut Vec<Link>) -> Built {
    let ports = StarPorts::of(st, cfg.seed);
    let hosts = star_hosts(st, cfg.seed, &ports, links);
    let mut monitored = hosts.monitored.clone();
    let (rack_links, core) = star_racks(st, &ports, links, &mut monitored);
    let paths: Vec<(Path, Path, Nanos)> = hosts
        .workers
        .iter()
        .enumerate()
        .map(|(w, &(nic, down))| match (st.rack_of(w), core) {
            (0, _) | (_, None) => (
                Path::new(&[nic, hosts.to_agg]),
                Path::new(&[hosts.agg_nic, down]),
                4 * st.delay_ns,
            ),
            (r, Some((down0, up0))) => {
                let (up, rdown) = rack_links[r - 1].expect("a rack with a worker has its ToR");
                (
                    Path::new(&[nic, up, down0, hosts.to_agg]),
                    Path::new(&[hosts.agg_nic, up0, rdown, down]),
                    8 * st.delay_ns,
                )
            }
        })
        .collect();
    if st.lossless {
        let trunks: Vec<LinkId> = rack_links
            .iter()
            .flatten()
            .flat_map(|&(up, down)| [up, down])
            .chain(core.into_iter().flat_map(|(d, u)| [d, u]))
            .collect();
        wire_pfc(cfg, st, &ports, &hosts, &trunks, &paths, links);
    }
    Built {
        fabric: Fabric::Star(StarFabric { paths }),
        monitored,
        receiver_rate_bps: ports.agg_rate,
        pool_limit: st.shared_buffer_bytes.unwrap_or(u64::MAX),
        pool_alpha: st.shared_buffer_alpha,
    }
}

/// What every switch output port of a star shares.
struct StarPorts {
    seed: u64,
    agg_rate: u64,
    /// Ingress accounting: lossless traffic is never dropped at an output port; the ingress
    /// ports' budgets (and the pool, if any) decide (`pfc.rs`).
    ingress_pfc: bool,
    port_limit: Option<u64>,
    pooled: bool,
    cut_through: bool,
}

impl StarPorts {
    fn of(st: &config::Star, seed: u64) -> StarPorts {
        let ingress_pfc = st.lossless && st.pfc.accounting == config::PfcAccounting::Ingress;
        StarPorts {
            seed,
            agg_rate: st.aggregator_rate_bps.expect("resolved"),
            ingress_pfc,
            port_limit: if ingress_pfc { None } else { st.buffer_bytes },
            pooled: st.shared_buffer_bytes.is_some() && !ingress_pfc,
            cut_through: st.forwarding == config::Forwarding::CutThrough,
        }
    }

    /// A switch output port at `rate`, its random stream `stream`.
    fn port(&self, st: &config::Star, rate: u64, stream: u64) -> Link {
        let mut l = Link::new(rate, st.delay_ns, NodeKind::Host, Rng::new(self.seed, stream));
        if let Some(d) = DropTail::new(self.port_limit, None) {
            l.qdisc.push(d);
        }
        if let Some(m) = StepEcn::new(st.ecn_threshold_bytes, None) {
            l.qdisc.push(m);
        }
        l.in_pool = self.pooled;
        if self.ingress_pfc {
            l.pfc_mut().ingress_acct = true;
        }
        l
    }
}

/// The star's hosts and their ToR ports: each worker's NIC and the port down to it, the port
/// to the aggregator and the aggregator's NIC.
struct StarHosts {
    to_agg: LinkId,
    agg_nic: LinkId,
    /// Per worker: (its NIC, the ToR's port down to it).
    workers: Vec<(LinkId, LinkId)>,
    monitored: Vec<(LinkId, &'static str)>,
}

impl StarHosts {
    fn is_worker_nic(&self, l: LinkId) -> bool {
        self.workers.iter().any(|&(nic, _)| nic == l)
    }
}

fn star_hosts(st: &config::Star, seed: u64, ports: &StarPorts, links: &mut Vec<Link>) -> StarHosts {
    let agg_rate = ports.agg_rate;
    // Host clocks: ±clock_ppm around the nominal rate (the switch ports are the reference).
    let mut clock = Rng::new(seed, 9_000);
    let mut skew = |rate: u64| -> u64 {
        if st.clock_ppm == 0 {
            return rate;
        }
        let u = clock.next_f64() * 2.0 - 1.0;
        (rate as f64 * (1.0 + u * st.clock_ppm as f64 * 1e-6)).round() as u64
    };
    let to_agg = add(links, ports.port(st, agg_rate, 1));
    let mut agg_nic_l = Link::new(skew(agg_rate), st.delay_ns, NodeKind::Router, Rng::new(seed, 2));
    let mut workers = Vec::with_capacity(st.workers as usize);
    for w in 0..st.workers as u64 {
        let mut nic = Link::new(
            skew(st.rate_bps),
            st.delay_ns,
            NodeKind::Router,
            Rng::new(seed, 100 + 2 * w),
        );
        nic.is_sender_nic = true;
        nic.jitter_ns = st.host_jitter_ns;
        if ports.cut_through && st.rate_bps + st.rate_bps / 1000 >= agg_rate {
            nic.cut_through_bytes = st.header_bytes;
        }
        let nic = add(links, nic);
        let down = add(links, ports.port(st, st.rate_bps, 101 + 2 * w));
        workers.push((nic, down));
    }
    agg_nic_l.jitter_ns = st.host_jitter_ns;
    if ports.cut_through && agg_rate + agg_rate / 1000 >= st.rate_bps {
        agg_nic_l.cut_through_bytes = st.header_bytes;
    }
    let agg_nic = add(links, agg_nic_l);
    let mut monitored = vec![(to_agg, "tor_to_agg"), (agg_nic, "agg_nic")];
    for (w, &(nic, _)) in workers.iter().enumerate() {
        monitored.push((nic, intern(format!("nic_{w}"))));
    }
    StarHosts { to_agg, agg_nic, workers, monitored }
}

/// Racks: the aggregator and workers fill racks of `hosts_per_rack` in order (the aggregator
/// first), or each worker goes where `worker_racks` puts it; a worker outside rack 0 reaches the
/// aggregator over its ToR's uplink, the aggregation switch and rack 0's ToR (links created after
/// every other, so a one-rack star is unchanged). Returns, per rack ≥ 1 that holds a worker,
/// (ToR → aggregation switch, aggregation switch → ToR) — a rack number `worker_racks` skips gets
/// no switch — and (aggregation switch → rack 0's ToR, rack 0's ToR → aggregation switch).
#[allow(clippy::type_complexity)]
fn star_racks(
    st: &config::Star,
    ports: &StarPorts,
    links: &mut Vec<Link>,
    monitored: &mut Vec<(LinkId, &'static str)>,
) -> (Vec<Option<(LinkId, LinkId)>>, Option<(LinkId, LinkId)>) {
    let rack_hosts = st.rack_hosts();
    let racks = rack_hosts.len();
    let mut rack_links: Vec<Option<(LinkId, LinkId)>> = vec![None; racks.saturating_sub(1)];
    if racks <= 1 {
        return (rack_links, None);
    }
    let up_rate = st.uplink_rate_bps.expect("resolved");
    let mk_trunk = |stream: u64| {
        let mut l = ports.port(st, up_rate, stream);
        l.to = NodeKind::Router;
        if ports.cut_through {
            l.cut_through_bytes = st.header_bytes; // never slower than the port it feeds
        }
        l
    };
    let down0 = add(links, mk_trunk(3));
    let up0 = add(links, mk_trunk(4));
    monitored.push((down0, "agg_to_tor0"));
    for r in 1..racks {
        if rack_hosts[r] == 0 {
            continue;
        }
        let up = add(links, mk_trunk(5 + 2 * r as u64));
        let down = add(links, mk_trunk(6 + 2 * r as u64));
        monitored.push((up, intern(format!("tor{r}_to_agg"))));
        rack_links[r - 1] = Some((up, down));
    }
    (rack_links, Some((down0, up0)))
}

/// A lossless star's PAUSE: who ignores it, each pausing port's thresholds (at the ingress ports
/// with ingress accounting, else at every switch output port, for the links that feed it).
fn wire_pfc(
    cfg: &Config,
    st: &config::Star,
    ports: &StarPorts,
    hosts: &StarHosts,
    trunks: &[LinkId],
    paths: &[(Path, Path, Nanos)],
    links: &mut [Link],
) {
    let p = &st.pfc;
    // The PAUSE frame travels on the reverse link of the one it pauses: one propagation
    // delay plus a 64-byte control frame's serialization; a host NIC acts on it
    // `nic_pause_delay` later. Its quanta are bit times of the paused link.
    let pause_latency = |rate: u64| {
        st.delay_ns + (64u128 * 8 * 1_000_000_000 / rate as u128) as Nanos + p.nic_pause_delay_ns
    };
    let quanta_ns = |rate: u64| (p.quanta as u128 * 512 * 1_000_000_000 / rate as u128) as Nanos;
    for l in hosts.workers.iter().map(|&(nic, _)| nic).chain([hosts.agg_nic]) {
        links[l as usize].pfc_mut().ignores_pause = !p.nic_honours_pause;
    }
    for &l in trunks {
        links[l as usize].pfc_mut().ignores_pause = !p.switches_honour_pause;
    }
    let frame_bytes = config::max_frame_bytes(cfg);
    // Who feeds each switch output port, in path order (first feeder first).
    let mut feeders: Vec<Vec<LinkId>> = vec![Vec::new(); links.len()];
    for (dp, ap, _) in paths {
        for path in [dp, ap] {
            for h in path.hops().windows(2) {
                if !feeders[h[1] as usize].contains(&h[0]) {
                    feeders[h[1] as usize].push(h[0]);
                }
            }
        }
    }
    let fed: Vec<LinkId> =
        (0..links.len() as LinkId).filter(|&l| !feeders[l as usize].is_empty()).collect();
    // PAUSE timing uses a link's nominal rate (a host's clock skew aside).
    let nominal = |l: LinkId, links: &[Link]| {
        if l == hosts.agg_nic {
            ports.agg_rate
        } else if hosts.is_worker_nic(l) {
            st.rate_bps
        } else {
            links[l as usize].rate_bps
        }
    };
    for &l in fed.iter().flat_map(|&port| &feeders[port as usize]) {
        let rate = nominal(l, links);
        links[l as usize].pfc_mut().pause_quanta_ns = quanta_ns(rate);
        if ports.ingress_pfc && links[l as usize].pfc.as_deref().is_none_or(|p| p.ingress.is_none())
        {
            // Each ingress port counts its own bytes and pauses its own sender.
            let headroom = match p.headroom_bytes {
                0 => config::pfc_headroom_bytes(rate, st.delay_ns, frame_bytes),
                h => h,
            };
            links[l as usize].pfc_mut().ingress = Some(pfc::IngressPort::new(
                p.xoff_bytes,
                p.xon_bytes,
                headroom,
                quanta_ns(rate),
                pause_latency(rate),
            ));
        }
    }
    if !ports.ingress_pfc {
        // Every output port pauses the links that feed it.
        for &port in &fed {
            let up: Vec<(LinkId, Nanos)> = feeders[port as usize]
                .iter()
                .map(|&l| (l, pause_latency(nominal(l, links))))
                .collect();
            let q = quanta_ns(nominal(up[0].0, links));
            links[port as usize].pfc_mut().port =
                Some(pfc::PortPfc::new(p.xoff_bytes, p.xon_bytes, q, up));
        }
    }
}

impl Fabric {
    /// Data path, ACK path and base RTT (propagation) of configured flow `i`.
    pub(crate) fn flow_paths(
        &mut self,
        links: &mut Vec<Link>,
        f: &config::Flow,
        i: usize,
        seed: u64,
    ) -> (Path, Path, Nanos) {
        match self {
            Fabric::Dumbbell(d) => {
                let existing = f
                    .sender
                    .and_then(|s| d.hosts.iter().find(|h| h.0 == Some(s)).map(|h| (h.1, h.2)));
                let (nic, down) = match existing {
                    Some(x) => x,
                    None => {
                        let dl = f.extra_rtt_ns / 2;
                        let mut nic = Link::new(
                            d.access_rate,
                            dl,
                            NodeKind::Router,
                            Rng::new(seed, 100 + 2 * i as u64),
                        );
                        nic.is_sender_nic = true;
                        let nic = add(links, nic);
                        let down = add(
                            links,
                            Link::new(
                                d.access_rate,
                                f.extra_rtt_ns - dl,
                                NodeKind::Host,
                                Rng::new(seed, 101 + 2 * i as u64),
                            ),
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
        self.paths[w]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Simulation;

    /// The Waterloo DC study's cluster: 16 hosts per rack, 1 GbE, 10 µs per link, `workers` bulk
    /// senders into the aggregator; `pfc` is the lossless fields (or empty).
    fn racks(workers: u32, pfc: &str) -> Simulation {
        let flows = (0..workers)
            .map(|i| format!(r#"{{"cc":"cubic","start_ns":{}}}"#, i * 1000))
            .collect::<Vec<_>>()
            .join(",");
        Simulation::from_json(&format!(
            r#"{{"seed":5,"duration_ns":300000000,"sample_interval_ns":10000000,
                "topology":{{"kind":"star","workers":{workers},"rate_bps":1000000000,"delay_ns":10000,"clock_ppm":0,
                  "host_jitter_ns":0,"forwarding":"cut-through","hosts_per_rack":16{pfc}}},
                "flows":[{flows}]}}"#
        ))
        .unwrap()
    }

    #[test]
    fn workers_beyond_rack_0_cross_the_aggregation_switch() {
        let sim = racks(40, "");
        let Fabric::Star(s) = &sim.fabric else { unreachable!() };
        // Rack 0: the aggregator and workers 0..=14; rack 1: 15..=30; rack 2: 31..=39.
        for w in 0..40 {
            let (dp, ap, rtt) = s.worker_paths(w);
            let remote = w >= 15;
            assert_eq!(dp.len, if remote { 4 } else { 2 }, "worker {w}");
            assert_eq!(ap.len, dp.len);
            assert_eq!(rtt, if remote { 80_000 } else { 40_000 });
            // Every path ends at the aggregator's port and starts at the aggregator's NIC.
            assert_eq!(dp.links[dp.len as usize - 1], s.worker_paths(0).0.links[1]);
            assert_eq!(ap.first(), s.worker_paths(0).1.first());
        }
        let uplink = |w: usize| s.worker_paths(w).0.links[1];
        assert_eq!(uplink(15), uplink(30));
        assert_ne!(uplink(30), uplink(31), "rack 2 has its own uplink");
        // Non-blocking by default: 16 × 1 Gbit/s.
        assert_eq!(sim.links[uplink(20) as usize].rate_bps, 16_000_000_000);
    }

    /// The Waterloo DC study's node list: workers on racks green, red, yellow, then the
    /// aggregator's (blue).
    #[test]
    fn worker_racks_places_each_worker_in_its_rack_in_turn() {
        let flows = (0..8).map(|_| r#"{"cc":"cubic"}"#).collect::<Vec<_>>().join(",");
        let sim = Simulation::from_json(&format!(
            r#"{{"seed":5,"duration_ns":1000000,"sample_interval_ns":1000000,
                "topology":{{"kind":"star","workers":8,"rate_bps":1000000000,"delay_ns":10000,
                  "hosts_per_rack":16,"worker_racks":[1,2,3,0]}},"flows":[{flows}]}}"#
        ))
        .unwrap();
        let Fabric::Star(s) = &sim.fabric else { unreachable!() };
        let uplink = |w: usize| s.worker_paths(w).0.links[1];
        for w in 0..8 {
            let local = w % 4 == 3;
            assert_eq!(s.worker_paths(w).0.len, if local { 2 } else { 4 }, "worker {w}");
        }
        assert_eq!(uplink(0), uplink(4), "workers 0 and 4 share rack 1's uplink");
        assert_ne!(uplink(0), uplink(1));
        assert_ne!(uplink(1), uplink(2));
        assert_eq!(uplink(3), uplink(7), "workers 3 and 7 reach the aggregator's port directly");
        // A rack number far beyond the others builds one ToR, not the empty racks below it.
        let links_with = |racks: &str| {
            let sim = Simulation::from_json(&format!(
                r#"{{"seed":5,"duration_ns":1000000,"sample_interval_ns":1000000,
                    "topology":{{"kind":"star","workers":2,"rate_bps":1000000000,"hosts_per_rack":16,
                    "worker_racks":{racks}}},"flows":[{{"cc":"cubic"}},{{"cc":"cubic"}}]}}"#
            ))
            .unwrap();
            (sim.links.len(), sim.monitored.len())
        };
        assert_eq!(links_with("[9000]"), links_with("[1]"));
    }

    /// Inter-switch ports that ignore PAUSE: the aggregator's ToR pauses its own hosts only; the
    /// trunk keeps sending and its packets are what the port drops, so every loss is a remote
    /// worker's and the local workers, paused while the trunk alone holds the port above XON,
    /// deliver far less than the remote ones.
    #[test]
    fn trunks_that_ignore_pause_are_dropped_and_keep_the_local_hosts_paused() {
        let flows = (0..8)
            .map(|i| format!(r#"{{"cc":"cubic","start_ns":{}}}"#, i * 1000))
            .collect::<Vec<_>>()
            .join(",");
        let mut sim = Simulation::from_json(&format!(
            r#"{{"seed":5,"duration_ns":2000000000,"sample_interval_ns":100000000,
                "topology":{{"kind":"star","workers":8,"rate_bps":1000000000,"delay_ns":10000,"forwarding":"cut-through",
                  "hosts_per_rack":16,"worker_racks":[1,2,3,0],"lossless":true,"buffer_bytes":1000000,
                  "pfc":{{"switches_honour_pause":false}}}},"flows":[{flows}]}}"#
        ))
        .unwrap();
        sim.run_until(u64::MAX);
        sim.check_conservation().unwrap();
        let r = sim.results();
        assert!(r.drops > 0 && r.pause_frames > 0, "drops {} PAUSE {}", r.drops, r.pause_frames);
        let lost = r.flows.get("lost_packets").unwrap().as_i64().unwrap();
        let delivered = r.flows.get("delivered_bytes").unwrap().as_i64().unwrap();
        let local = [3, 7];
        for w in local {
            assert_eq!(lost[w], 0, "a paused host loses nothing (worker {w})");
        }
        assert!(lost.iter().sum::<i64>() > 0);
        let least_remote =
            (0..8).filter(|w| !local.contains(w)).map(|w| delivered[w]).min().unwrap();
        assert!(local.iter().all(|&w| delivered[w] * 10 < least_remote), "{delivered:?}");
        // With the switches obeying PAUSE the same fabric loses nothing.
        let mut honoured = Simulation::from_json(&format!(
            r#"{{"seed":5,"duration_ns":2000000000,"sample_interval_ns":100000000,
                "topology":{{"kind":"star","workers":8,"rate_bps":1000000000,"delay_ns":10000,"forwarding":"cut-through",
                  "hosts_per_rack":16,"worker_racks":[1,2,3,0],"lossless":true,"buffer_bytes":1000000}},"flows":[{flows}]}}"#
        ))
        .unwrap();
        honoured.run_until(u64::MAX);
        assert_eq!(honoured.results().drops, 0);
    }

    #[test]
    fn worker_racks_are_checked_against_the_rack_size() {
        let make = |racks: &str, per_rack: &str| {
            Simulation::from_json(&format!(
                r#"{{"seed":5,"duration_ns":1000000,"sample_interval_ns":1000000,"topology":{{"kind":"star","workers":4,"rate_bps":1000000000
                    {per_rack}{racks}}},"flows":[{{"cc":"cubic"}}]}}"#
            ))
            .err()
            .map_or(String::new(), |e| e.to_string())
        };
        // Rack 0 holds the aggregator and workers 0, 2 (every other): 3 hosts in racks of 2.
        let e = make(r#","worker_racks":[0,1]"#, r#","hosts_per_rack":2"#);
        assert!(e.contains("topology.worker_racks") && e.contains("3 hosts in rack 0"), "{e}");
        let e = make(r#","worker_racks":[1]"#, "");
        assert!(e.contains("needs topology.hosts_per_rack"), "{e}");
        let e = make(r#","worker_racks":[]"#, r#","hosts_per_rack":8"#);
        assert!(e.contains("topology.worker_racks"), "{e}");
        assert_eq!(make(r#","worker_racks":[1,0]"#, r#","hosts_per_rack":4"#), "");
        // A port that PAUSE cannot hold back needs a buffer to drop at (egress accounting).
        let lossless = r#","lossless":true,"pfc":{"switches_honour_pause":false}"#;
        let e = make(lossless, r#","hosts_per_rack":4,"worker_racks":[1,0]"#);
        assert!(
            e.contains("topology.buffer") && e.contains("switches_honour_pause = false"),
            "{e}"
        );
        assert_eq!(
            make(lossless, r#","hosts_per_rack":4,"worker_racks":[1,0],"buffer_bytes":100000"#),
            ""
        );
        // One switch has no trunks: nothing ignores PAUSE there.
        assert_eq!(make(lossless, ""), "");
    }

    #[test]
    fn a_40_to_1_incast_over_three_racks_is_lossless_with_ingress_pfc_and_conserves_packets() {
        for pfc in [r#","lossless":true,"pfc":{"accounting":"ingress"}"#, r#","lossless":true"#] {
            let mut sim = racks(40, pfc);
            sim.run_until(u64::MAX);
            sim.check_conservation().unwrap();
            let r = sim.results();
            assert_eq!(r.drops, 0, "{pfc}: PAUSE must hold every hop lossless");
            assert!(r.pause_frames > 0);
            let total: f64 = r.flows.get("goodput_bps").unwrap().as_f64().unwrap().iter().sum();
            assert!(total > 0.9 * 941.5e6, "{pfc}: aggregate goodput {total}");
            // Workers in racks 1 and 2 delivered data (through the aggregation switch).
            let delivered = r.flows.get("delivered_bytes").unwrap().as_i64().unwrap();
            assert!(delivered[15..].iter().all(|&d| d > 0));
        }
    }
}
