//! The flow-size workload (`[[apps]] kind = "workload"`): flows arriving as a Poisson process
//! at a target load of a link, sizes drawn from a CDF (`cdf.rs`), and each flow's completion
//! time and slowdown.
//!
//! Model:
//! - Arrivals: exponential gaps of mean `mean_size · 8 / (load · link_rate)`, so the offered
//!   payload is `load` of the link's rate (the DCTCP and pFabric papers' definition).
//! - Each flow is a new connection (fresh congestion state, initial window) of the drawn size.
//!   On a dumbbell it goes from the app's sender hosts in turn (`hosts`; their NICs built with
//!   the network) to the receiver. On a graph its source is drawn uniformly from `src` and its
//!   destination from `dst` less the source (all-to-all random pairs by default), and it is
//!   routed as a configured flow, ECMP hashing its flow id. It sends from its arrival: no
//!   handshake in the FCT (as the data-center papers' simulators measure it).
//! - Load on a graph without a named link: of the sender hosts' links, summed — with uniform
//!   sources each host's link carries `load` of its rate on average (the pFabric and HPCC
//!   papers' all-to-all load).
//! - FCT: arrival to the receiver holding the last byte. Ideal FCT: the same on an empty network,
//!   handshake excluded too — a store-and-forward pipeline of every segment (headers and
//!   framing included) through the data path's FIFOs, all held by the sender at the arrival
//!   (`ideal_fct_ns`). Slowdown = FCT / ideal (≥ 1 up to rounding).
//!   One row per completed flow in the `fct` table; flows still running at the end have none.

use crate::cdf::Cdf;
use crate::rng::Rng;
use crate::topology::graph::GraphFabric;
use crate::topology::routing::flow_key;
use crate::topology::{Fabric, Path};
use crate::{config, metrics, EvKind, Simulation};
use cc::Nanos;
use transport::{ETHERNET_OVERHEAD_BYTES, TCP_IP_HEADER_BYTES};

/// `Flow::workload` of a flow that is not a workload's.
pub(crate) const NOT_WORKLOAD: u32 = u32::MAX;

/// Random stream ids of the arrivals (`Rng::new(seed, ARRIVAL_STREAM + app)`), clear of the
/// links', the query apps' and the traffic sources'.
const ARRIVAL_STREAM: u64 = 9_000_000;

/// Sender indices of the workload hosts (`config::Flow::sender`), above any a scenario can give
/// (`MAX_FLOWS`), so they never share a configured flow's host.
const HOST_SENDER_BASE: u32 = 1 << 30;

pub(crate) struct Workload {
    pub cfg: config::WorkloadApp,
    cdf: Cdf,
    rng: Rng,
    /// Mean time between arrivals.
    mean_gap_ns: f64,
    /// Where flows go.
    ends: Ends,
    next_host: usize,
    template: config::Flow,
}

/// Where a workload's flows start and end.
pub(crate) enum Ends {
    /// A dumbbell's sender hosts' paths (data, ACK, base RTT), taken in turn.
    Hosts(Vec<(Path, Path, Nanos)>),
    /// A graph's hosts (node indices): each flow's source drawn from `src`, its destination
    /// from `dst` less the source.
    Pairs { src: Vec<usize>, dst: Vec<usize> },
}

/// A graph workload's ends and the rate its load refers to: the named link's, else the sum of
/// the sender hosts' links.
pub(crate) fn graph_ends(g: &GraphFabric, w: &config::WorkloadApp) -> (Ends, u64) {
    let set = |names: &Option<Vec<String>>| match names {
        Some(names) => names.iter().map(|n| g.host(n)).collect::<Vec<_>>(),
        None => g.hosts(),
    };
    let (src, dst) = (set(&w.src), set(&w.dst));
    let rate = match &w.link {
        Some(l) => g.link_rate_bps(l),
        None => src.iter().map(|&h| g.host_out_rate_bps(h)).sum(),
    };
    (Ends::Pairs { src, dst }, rate)
}

impl Workload {
    /// App `i`'s workload at its load of `link_rate_bps`, between `ends`.
    pub(crate) fn new(
        cfg: config::WorkloadApp,
        link_rate_bps: u64,
        ends: Ends,
        seed: u64,
        i: usize,
    ) -> Workload {
        let cdf = cfg.cdf.parse().expect("validated");
        let per_s = cfg.load * link_rate_bps as f64 / (8.0 * cdf.mean_bytes());
        let mut template = Self::flow_template(&cfg.cc, None);
        template.ecn = cfg.ecn;
        Workload {
            mean_gap_ns: 1e9 / per_s,
            cdf,
            rng: Rng::new(seed, ARRIVAL_STREAM + i as u64),
            ends,
            next_host: 0,
            template,
            cfg,
        }
    }

    /// A flow of the workload: algorithm `cc`, defaults elsewhere, on sender `host`.
    pub(crate) fn flow_template(cc: &str, host: Option<(usize, u32)>) -> config::Flow {
        let mut f: config::Flow =
            serde_json::from_value(serde_json::json!({ "cc": cc })).expect("a minimal flow");
        f.sender = host.map(|(app, h)| HOST_SENDER_BASE + app as u32 * 1_000 + h);
        f
    }

    fn next_gap_ns(&mut self) -> Nanos {
        let u = self.rng.next_f64();
        (-(1.0 - u).ln() * self.mean_gap_ns).round() as Nanos
    }
}

impl Simulation {
    /// Flow `fi`'s FCT on an empty network for `segs` segments of `full` bytes on the wire, the
    /// last of `last` bytes: a store-and-forward pipeline through its data path, every segment
    /// at the sender's NIC at once. The segments before the last are alike, so the second-last
    /// leaves hop h (1-based) at `Σ_{k≤h} full/r_k + (segs − 2)·full/min_{k≤h} r_k` after the
    /// hops' propagation (a tandem of FIFOs: the slowest hop so far spaces them); the last
    /// leaves hop h when both it has arrived and the second-last has left, plus its own
    /// serialization. On equal rates this is `Σ segments + (hops − 1)·full` (the proportionate
    /// flow shop), not `Σ + (hops − 1)·last`: a short last segment waits behind the full one.
    fn ideal_fct_ns(&self, fi: usize, segs: u64, full: u64, last: u64) -> Nanos {
        let hops = self.flows[fi].data_path.hops();
        let ser_ns = |bytes: u64, rate: u64| bytes as f64 * 8e9 / rate as f64;
        let (mut full_sum_ns, mut min_rate) = (0.0, u64::MAX);
        // When the last segment arrives at the next hop (the sender holds it from time 0).
        let mut last_at_ns = 0.0;
        for &l in hops {
            let link = &self.links[l as usize];
            let (rate, delay) = (link.rate_bps, link.delay_ns as f64);
            min_rate = min_rate.min(rate);
            full_sum_ns += ser_ns(full, rate);
            let second_last_done = if segs >= 2 {
                full_sum_ns + (segs - 2) as f64 * ser_ns(full, min_rate)
            } else {
                0.0
            };
            last_at_ns = second_last_done.max(last_at_ns) + ser_ns(last, rate) + delay;
            full_sum_ns += delay;
        }
        last_at_ns.round() as Nanos
    }

    /// Schedule workload `wi`'s first arrival.
    pub(crate) fn workload_start(&mut self, wi: usize) {
        let t = self.workloads[wi].cfg.start_ns + self.workloads[wi].next_gap_ns();
        self.push_arrival(wi, t);
    }

    fn push_arrival(&mut self, wi: usize, t: Nanos) {
        let stop = self.workloads[wi].cfg.stop_ns.unwrap_or(self.end_ns).min(self.end_ns);
        if t < stop {
            self.push(t, EvKind::WorkloadArrival, wi as u32);
        }
    }

    /// A flow of workload `wi` arrives now: start it, and schedule the next arrival.
    #[inline(never)]
    pub(crate) fn on_workload_arrival(&mut self, wi: usize) {
        let now = self.now;
        let w = &mut self.workloads[wi];
        let size = w.cdf.sample(w.rng.next_f64());
        let idx = self.flows.len();
        let (dp, ap, base_rtt) = match &w.ends {
            Ends::Hosts(hosts) => {
                let p = hosts[w.next_host];
                w.next_host = (w.next_host + 1) % hosts.len();
                p
            }
            Ends::Pairs { src, dst } => {
                let s = src[(w.rng.next_f64() * src.len() as f64) as usize % src.len()];
                // Uniform over `dst` less `s` (checked to leave one): draw among the others.
                let others = dst.len() - dst.iter().filter(|&&d| d == s).count();
                let k = (w.rng.next_f64() * others as f64) as usize % others;
                let d = *dst.iter().filter(|&&d| d != s).nth(k).expect("checked: one other");
                let Fabric::Graph(g) = &mut self.fabric else { unreachable!("pairs: a graph") };
                g.pair_paths(s, d, flow_key(self.cfg.seed, idx as u64))
            }
        };
        let w = &mut self.workloads[wi];
        let mut f = w.template.clone();
        f.bytes = Some(size);
        f.start_ns = now;
        let mut flow = Self::new_flow(self.cfg.seed, &f, idx, dp, ap, base_rtt, None);
        flow.sampled = false;
        flow.workload = wi as u32;
        flow.sender.cfg.paced_by_qdisc = self.links[dp.first() as usize].aqm.is_some();
        self.flows.push(flow);
        self.push(now, EvKind::FlowStart, idx as u32);
        let gap = self.workloads[wi].next_gap_ns();
        self.push_arrival(wi, now + gap.max(1));
    }

    /// Workload flow `fi`'s receiver holds its last byte: its FCT row.
    pub(crate) fn workload_flow_done(&mut self, fi: usize) {
        let f = &self.flows[fi];
        let size = f.sender.cfg.total_bytes.expect("a sized transfer");
        let mss = f.sender.cfg.mss as u64;
        let fct = f.rx_done_ns.expect("done") - f.start_ns;
        // Every segment carries headers and framing; the last may be short.
        let per_seg = (TCP_IP_HEADER_BYTES + ETHERNET_OVERHEAD_BYTES) as u64;
        let segs = size.div_ceil(mss);
        let full = mss.min(size) + per_seg;
        let last = size - (segs - 1) * mss + per_seg;
        let ideal = self.ideal_fct_ns(fi, segs, full, last);
        let f = &self.flows[fi];
        self.fct.push(metrics::FctRow {
            app: f.workload as i32,
            flow: fi as i32,
            size_bytes: size as i64,
            start_s: f.start_ns as f64 / 1e9,
            fct_s: fct as f64 / 1e9,
            ideal_fct_s: ideal as f64 / 1e9,
            slowdown: fct as f64 / ideal as f64,
        });
    }
}

#[cfg(test)]
mod tests {
    use crate::test_support::{f64s, run_to_end};
    use crate::Simulation;

    fn run(cdf: &str, load: f64, secs: u64) -> crate::Results {
        let cfg = serde_json::json!({
            "seed": 11, "duration_ns": secs * 1_000_000_000, "sample_interval_ns": 100_000_000u64,
            "topology": {"kind": "dumbbell",
                "bottleneck": {"rate_bps": 1_000_000_000u64, "rtt_ns": 100_000u64}},
            "apps": [{"kind": "workload", "cdf": {"file": "test", "text": cdf}, "load": load,
                      "cc": "cubic"}],
        });
        run_to_end(&cfg.to_string())
    }

    /// Flows within the initial window (≤ 10 segments) leave at once: on a nearly idle link
    /// (1 % load) most complete in their ideal FCT, a slowdown of 1 to within the nanoseconds
    /// rounding leaves, and none faster — a check of the FCT and of the ideal alike.
    #[test]
    fn flows_alone_on_the_link_complete_in_their_ideal_time() {
        let r = run("1000 0\n14000 1\n", 0.01, 5);
        let s = f64s(&r.fct, "slowdown");
        let alone = s.iter().filter(|&&x| (x - 1.0).abs() < 1e-3).count();
        let min = s.iter().cloned().fold(f64::INFINITY, f64::min);
        println!("{} flows, {alone} at slowdown 1 (±0.1 %), min {min:.5}", s.len());
        // 1.25 MB/s of 7.5 kB flows for 5 s: about 830.
        assert!(s.len() > 700, "{}", s.len());
        assert!(min > 0.999, "a flow beat its ideal: {min}");
        // (88 % measured: the rest met another flow or waited on TSQ at their NIC.)
        assert!(alone as f64 > 0.8 * s.len() as f64, "{alone} of {}", s.len());
    }

    /// The offered load is what was asked: the sizes of the flows that arrived over the run,
    /// over the link's capacity, within 3 % (≈ 2300 flows of 10–100 kB at half a 1 Gbit/s link).
    #[test]
    fn arrivals_offer_the_asked_load_and_queueing_slows_flows_down() {
        let r = run("10000 0\n100000 1\n", 0.5, 2);
        let sizes = r.fct.get("size_bytes").unwrap().as_i64().unwrap();
        let offered = sizes.iter().sum::<i64>() as f64 * 8.0 / 2.0 / 1e9;
        let s = f64s(&r.fct, "slowdown");
        let mut sorted = s.clone();
        sorted.sort_by(f64::total_cmp);
        let p50 = sorted[sorted.len() / 2];
        println!("{} flows, offered load {offered:.4}, slowdown p50 {p50:.3}", s.len());
        assert!((offered / 0.5 - 1.0).abs() < 0.03, "offered {offered}");
        assert!(sorted[0] > 0.999);
        // At half load flows beyond the initial window meet each other's queues.
        assert!(p50 > 1.05, "median slowdown {p50}");
    }

    /// A leaf-spine of 2 spines, 2 leaves, 2 hosts per leaf (h{leaf}_{i}) at 1 Gbit/s,
    /// 10 µs per link; `apps` and `traffic` as JSON.
    fn leaf_spine(secs: u64, apps: serde_json::Value, traffic: serde_json::Value) -> String {
        serde_json::json!({
            "seed": 3, "duration_ns": secs * 1_000_000_000, "sample_interval_ns": 100_000_000u64,
            "topology": {"kind": "leaf_spine", "spines": 2, "leaves": 2, "hosts_per_leaf": 2,
                "host_rate_bps": 1_000_000_000u64, "delay_ns": 10_000},
            "apps": apps, "traffic": traffic,
        })
        .to_string()
    }

    /// On a graph a workload draws random pairs of hosts (every host sends and receives), its
    /// flows follow the routes (ECMP spreads the cross-leaf ones over both spines), the offered
    /// load is `load` of the sender hosts' links summed, and flows alone on their path complete
    /// in their ideal time.
    #[test]
    fn a_graph_workload_draws_random_pairs_at_the_load_of_the_host_links() {
        // Flows within the initial window (≤ 10 segments), as on the dumbbell.
        let apps = serde_json::json!([{"kind": "workload",
            "cdf": {"file": "t", "text": "1000 0\n14000 1\n"}, "load": 0.2, "cc": "cubic"}]);
        let mut sim = Simulation::from_json(&leaf_spine(2, apps, serde_json::json!([]))).unwrap();
        sim.run_until(u64::MAX);
        sim.check_conservation().unwrap();
        let r = sim.results();
        let sizes = r.fct.get("size_bytes").unwrap().as_i64().unwrap();
        // 4 hosts × 1 Gbit/s × 0.2 over 2 s: 200 MB, ≈ 27 000 flows of 7.5 kB.
        let offered = sizes.iter().sum::<i64>() as f64 * 8.0 / 2.0 / 4e9;
        assert!((offered / 0.2 - 1.0).abs() < 0.03, "offered {offered}");
        let s = f64s(&r.fct, "slowdown");
        assert!(s.iter().all(|&x| x > 0.999), "a flow beat its ideal");
        let alone = s.iter().filter(|&&x| x < 1.001).count();
        println!("{} flows, {alone} at slowdown 1 (±0.1 %)", s.len());
        // (41 % measured: random pairs meet at a shared receiver's link as well as at the NIC.)
        assert!(alone * 3 > s.len(), "{alone} of {} at their ideal", s.len());
        // Every host is a source and a destination; no flow goes to its own host; both spines
        // carry cross-leaf flows.
        let name = |l: u32| sim.monitored.iter().find(|m| m.0 == l).map(|m| m.1).unwrap();
        let (mut srcs, mut dsts, mut spines) = (Vec::new(), Vec::new(), Vec::new());
        for f in sim.flows.iter().filter(|f| f.workload == 0) {
            let hops = f.data_path.hops();
            let (first, last) = (name(hops[0]), name(hops[hops.len() - 1]));
            let (src, dst) = (first.split('-').next().unwrap(), last.split('-').nth(1).unwrap());
            assert_ne!(src, dst);
            srcs.push(src);
            dsts.push(dst);
            spines.extend(hops.iter().map(|&l| name(l)).filter(|n| n.contains("spine")));
        }
        for set in [&mut srcs, &mut dsts] {
            set.sort();
            set.dedup();
            assert_eq!(set.len(), 4, "{set:?}");
        }
        assert!(spines.iter().any(|n| n.contains("spine0")));
        assert!(spines.iter().any(|n| n.contains("spine1")));
    }

    /// Sets of hosts: flows go from `src` to `dst` only; `link` makes the load that link's.
    #[test]
    fn a_graph_workload_keeps_to_its_hosts_and_its_link() {
        let apps = serde_json::json!([{"kind": "workload",
            "cdf": {"file": "t", "text": "10000 0\n100000 1\n"}, "load": 0.3, "cc": "cubic",
            "src": ["h0_0", "h0_1"], "dst": ["h1_1"], "link": "leaf1-h1_1"}]);
        let mut sim = Simulation::from_json(&leaf_spine(1, apps, serde_json::json!([]))).unwrap();
        sim.run_until(u64::MAX);
        let r = sim.results();
        let sizes = r.fct.get("size_bytes").unwrap().as_i64().unwrap();
        let offered = sizes.iter().sum::<i64>() as f64 * 8.0 / 1e9;
        assert!((offered / 0.3 - 1.0).abs() < 0.08, "offered {offered}");
        let down = sim.monitored.iter().find(|m| m.1 == "leaf1-h1_1").unwrap().0;
        for f in sim.flows.iter().filter(|f| f.workload == 0) {
            assert_eq!(*f.data_path.hops().last().unwrap(), down);
        }
    }

    /// A ping and a UDP source on a graph take their hosts' route: the ping's RTT is at least
    /// the path's propagation and serialization, its echo comes back over the way back.
    #[test]
    fn pings_and_udp_on_a_graph_follow_their_hosts_route() {
        let traffic = serde_json::json!([
            {"kind": "ping", "src": "h0_0", "dst": "h1_0", "interval_ns": 1_000_000},
            {"kind": "udp_cbr", "src": "h1_1", "dst": "h0_1", "rate_bps": 100_000_000u64}]);
        let mut sim =
            Simulation::from_json(&leaf_spine(1, serde_json::json!([]), traffic)).unwrap();
        sim.run_until(u64::MAX);
        sim.check_conservation().unwrap();
        let r = sim.results();
        let rtt = f64s(&r.pings, "rtt_ms");
        assert!(rtt.len() > 990, "{}", rtt.len());
        // 4 links each way, 10 µs each, + 84 B + 38 B framing at 1 Gbit/s per hop, 8 hops.
        let base_ms = 8.0 * (10e-3 + 122.0 * 8.0 / 1e9 * 1e3);
        assert!(rtt.iter().all(|&x| x >= base_ms - 1e-9), "{base_ms} {rtt:?}");
        // At most one UDP frame ahead of the echo at each of the two links both cross.
        let udp_frame_ms = 1538.0 * 8.0 / 1e9 * 1e3;
        assert!(rtt.iter().all(|&x| x <= base_ms + 2.0 * udp_frame_ms + 1e-9), "{rtt:?}");
        let rx = r.traffic.get("received_packets").unwrap().as_i64().unwrap();
        assert!(rx[1] > 8000, "{rx:?}");
        let src_nic = sim.monitored.iter().find(|m| m.1 == "h1_1-leaf1").unwrap().0;
        let udp = sim.flows.iter().find(|f| f.traffic == 1).unwrap();
        assert_eq!(udp.data_path.first(), src_nic);
    }

    /// What a graph's sources and workloads name is checked: one line naming the field.
    #[test]
    fn unknown_hosts_and_links_on_a_graph_name_the_field() {
        let e = |apps: serde_json::Value, traffic: serde_json::Value| {
            let m = Simulation::from_json(&leaf_spine(1, apps, traffic)).err().unwrap().to_string();
            assert_eq!(m.lines().count(), 1, "{m}");
            m
        };
        let none = serde_json::json!([]);
        let cdf = serde_json::json!({"file": "t", "text": "10000 0\n100000 1\n"});
        let msg =
            e(none.clone(), serde_json::json!([{"kind": "ping", "src": "h0_0", "dst": "h9"}]));
        assert!(msg.contains("traffic.0.dst") && msg.contains("unknown host \"h9\""), "{msg}");
        let msg = e(none.clone(), serde_json::json!([{"kind": "ping", "dst": "h1_0"}]));
        assert!(msg.contains("traffic.0.src"), "{msg}");
        let msg =
            e(none.clone(), serde_json::json!([{"kind": "ping", "src": "h0_0", "dst": "leaf0"}]));
        assert!(msg.contains("traffic.0.dst") && msg.contains("switch"), "{msg}");
        let w = |extra: serde_json::Value| {
            let mut a = serde_json::json!({"kind": "workload", "cdf": cdf, "load": 0.3,
                "cc": "cubic"});
            a.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
            serde_json::json!([a])
        };
        let msg = e(w(serde_json::json!({"src": ["h0_0", "hx"]})), none.clone());
        assert!(msg.contains("apps.0.src.1") && msg.contains("unknown host"), "{msg}");
        let msg = e(w(serde_json::json!({"link": "nowhere"})), none.clone());
        assert!(msg.contains("apps.0.link") && msg.contains("unknown link"), "{msg}");
        let msg = e(w(serde_json::json!({"src": ["h0_0"], "dst": ["h0_0"]})), none.clone());
        assert!(msg.contains("apps.0.dst"), "{msg}");
    }
}
