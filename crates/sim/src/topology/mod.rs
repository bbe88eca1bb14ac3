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
use crate::link::path::PathParts;
use crate::link::queue::{droptail::DropTail, red::Red, step_ecn::StepEcn};
use crate::link::{aqm, Link, LinkId, NodeKind};
use crate::rng::Rng;
use cc::Nanos;
use pathmodel::aqm::LinkContext;
use pathmodel::impair::spec::ScheduleEntrySpec;
use pathmodel::impair::Schedule;

pub(crate) mod graph;
pub(crate) mod routing;
pub(crate) mod star;
use graph::{build_graph, GraphFabric};
use star::build_star;

/// Longest path a builder produces (dumbbell: 3 hops; star: 4 with racks; graph: checked
/// against this): a 3-bottleneck parking lot's long flows take 5, a fat-tree's inter-pod flows
/// 6. Two paths per flow: raising it costs 4 bytes per hop per path and flow, nothing per packet.
pub(crate) const MAX_HOPS: usize = 8;

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
    /// The senders' egress qdisc when it is fq (`[topology.sender_qdisc]`), else None.
    sender_fq: Option<config::QdiscSpec>,
}

pub(crate) struct StarFabric {
    /// Per worker: data path, ACK path, base RTT (propagation).
    paths: Vec<(Path, Path, Nanos)>,
}

pub(crate) enum Fabric {
    Dumbbell(DumbbellFabric),
    Star(StarFabric),
    Graph(GraphFabric),
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

/// A link's native discipline chain (`link/queue/`) in the order its stages act: RED at
/// arrival (at the link's rate), the buffer at admission, step marking at enqueue.
fn push_native_chain(
    link: &mut Link,
    red: Option<&config::Red>,
    buffer: Option<DropTail>,
    step_ecn: Option<StepEcn>,
) {
    if let Some(r) = red {
        let rate_bps = link.rate_bps;
        link.qdisc.push(Red::new(r.min_th_bytes, r.max_th_bytes, r.max_p, r.weight, rate_bps));
    }
    if let Some(d) = buffer {
        link.qdisc.push(d);
    }
    if let Some(m) = step_ecn {
        link.qdisc.push(m);
    }
}

/// The buffer limit a link's path part enforces when its schedule changes the buffer (bytes,
/// packets waiting; `u64::MAX`: no limit of that kind), its queue then having no drop-tail
/// of its own; None when the schedule leaves the buffer alone.
fn scheduled_limit(
    schedule: &[ScheduleEntrySpec],
    bytes: Option<u64>,
    packets: Option<u64>,
) -> Option<(u64, u64)> {
    let changes_buffer = schedule.iter().any(|e| e.buffer_bytes.is_some());
    changes_buffer.then(|| (bytes.unwrap_or(u64::MAX), packets.unwrap_or(u64::MAX)))
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
        // A preset is resolved into its graph; `graph()` covers both.
        t => build_graph(cfg, &t.graph().expect("a graph"), links),
    }
}

/// The names of the links a config's network reports in the `queue` table (`Built::monitored`,
/// in its order), which `capture.links` names; `cfg` is resolved.
pub(crate) fn queue_names(cfg: &Config) -> Vec<&'static str> {
    let mut links = Vec::new();
    build(cfg, &mut links).monitored.into_iter().map(|(_, name)| name).collect()
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
    let mut bn = Link::new(b.rate_bps(), half_rtt, NodeKind::Router, Rng::new(seed, 1));
    bn.loss = b.loss;
    let buffer = DropTail::new(derived.buffer_bytes, derived.buffer_packets);
    let keys = b.path_keys();
    let limit = scheduled_limit(keys.schedule, derived.buffer_bytes, derived.buffer_packets);
    if let Some(spec) = aqm::spec_for(b) {
        // A discipline of the path model is the whole queue (`link/aqm.rs`).
        bn.aqm = Some(Box::new(aqm::LinkAqm::new(&spec, &aqm::context(b, &derived))));
    } else {
        let own_buffer = buffer.clone().filter(|_| limit.is_none());
        let step_ecn = StepEcn::new(b.ecn_threshold_bytes, b.ecn_threshold_packets);
        push_native_chain(&mut bn, b.red.as_ref(), own_buffer, step_ecn);
    }
    let mut bn_rev =
        Link::new(b.reverse_rate_bps(), b.rtt_ns - half_rtt, NodeKind::Router, Rng::new(seed, 2));
    if let Some(d) = buffer {
        bn_rev.qdisc.push(d);
    }
    bn_rev.loss = b.ack_loss;
    let bottleneck = add(links, bn);
    let bottleneck_rev = add(links, bn_rev);
    if keys.any() {
        // Both directions: the ACK direction's delay follows `rtt` changes in order too.
        let schedule = ScheduleEntrySpec::build(keys.schedule).expect("checked");
        let data = PathParts::data(&keys, schedule, Some(bottleneck_rev), limit);
        links[bottleneck as usize].path = Some(Box::new(data));
        let ack = PathParts::ack(&keys, Schedule::default(), None);
        links[bottleneck_rev as usize].path = Some(Box::new(ack));
    }
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
            sender_fq: d.sender_fq().cloned(),
        }),
        monitored: vec![(bottleneck, "bottleneck"), (bottleneck_rev, "bottleneck_rev")],
        receiver_rate_bps: access_rate,
        pool_limit: u64::MAX,
        pool_alpha: None,
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
                        if let Some(spec) = &d.sender_fq {
                            // The host's fq: the NIC is event-driven and paces (`link/aqm.rs`).
                            let ctx = LinkContext { rate_bps: d.access_rate, ..Default::default() };
                            nic.aqm = Some(Box::new(aqm::LinkAqm::new(spec, &ctx)));
                        }
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
            Fabric::Graph(g) => g.flow_paths(i),
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
