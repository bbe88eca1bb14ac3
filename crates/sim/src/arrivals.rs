//! The flow-size workload (`[[apps]] kind = "workload"`): flows arriving as a Poisson process
//! at a target load of a link, sizes drawn from a CDF (`cdf.rs`), and each flow's completion
//! time and slowdown.
//!
//! Model:
//! - Arrivals: exponential gaps of mean `mean_size · 8 / (load · link_rate)`, so the offered
//!   payload is `load` of the link's rate (the DCTCP and pFabric papers' definition).
//! - Each flow is a new connection (fresh congestion state, initial window) of the drawn size,
//!   from the app's sender hosts in turn (`hosts`; their NICs built with the network) to the
//!   receiver. It sends from its arrival: no handshake in the FCT (as the data-center papers'
//!   simulators measure it).
//! - FCT: arrival to the receiver holding the last byte. Ideal FCT: the same on an empty network,
//!   handshake excluded too — a store-and-forward pipeline: the data path's propagation, the
//!   first segment's serialization at the hops before the slowest, every byte (headers and
//!   framing included) at the slowest, the last segment's after it (`ideal_fct_ns`). Slowdown = FCT / ideal (≥ 1 up to rounding).
//!   One row per completed flow in the `fct` table; flows still running at the end have none.

use crate::cdf::Cdf;
use crate::rng::Rng;
use crate::topology::Path;
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
    /// The sender hosts' paths (data, ACK, base RTT).
    hosts: Vec<(Path, Path, Nanos)>,
    next_host: usize,
    template: config::Flow,
}

impl Workload {
    /// App `i`'s workload over a link of `link_rate_bps`, from `hosts` (their paths).
    pub(crate) fn new(
        cfg: config::WorkloadApp,
        link_rate_bps: u64,
        hosts: Vec<(Path, Path, Nanos)>,
        seed: u64,
        i: usize,
    ) -> Workload {
        let cdf = cfg.cdf.parse().expect("validated");
        let per_s = cfg.load * link_rate_bps as f64 / (8.0 * cdf.mean_bytes());
        let template = Self::flow_template(&cfg.cc, None);
        Workload {
            mean_gap_ns: 1e9 / per_s,
            cdf,
            rng: Rng::new(seed, ARRIVAL_STREAM + i as u64),
            hosts,
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
    /// Flow `fi`'s FCT on an empty network for `wire_total` bytes on the wire in segments whose
    /// first is `first` and last `last` bytes: a store-and-forward pipeline through its data
    /// path — every hop's propagation; before the slowest hop, the first segment's
    /// serialization; at the slowest hop, every byte back to back; after it, the last segment's.
    fn ideal_fct_ns(&self, fi: usize, wire_total: u64, first: u64, last: u64) -> Nanos {
        let hops = self.flows[fi].data_path.hops();
        let rate = |l: &u32| self.links[*l as usize].rate_bps;
        let slowest = (0..hops.len()).min_by_key(|&k| rate(&hops[k])).unwrap_or(0);
        let ns = |bytes: u64, rate: u64| (bytes as u128 * 8_000_000_000 / rate as u128) as Nanos;
        hops.iter()
            .enumerate()
            .map(|(k, l)| {
                let bytes = match k.cmp(&slowest) {
                    std::cmp::Ordering::Less => first,
                    std::cmp::Ordering::Equal => wire_total,
                    std::cmp::Ordering::Greater => last,
                };
                self.links[*l as usize].delay_ns + ns(bytes, rate(l))
            })
            .sum()
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
    pub(crate) fn on_workload_arrival(&mut self, wi: usize) {
        let now = self.now;
        let w = &mut self.workloads[wi];
        let size = w.cdf.sample(w.rng.next_f64());
        let (dp, ap, base_rtt) = w.hosts[w.next_host];
        w.next_host = (w.next_host + 1) % w.hosts.len();
        let mut f = w.template.clone();
        f.bytes = Some(size);
        f.start_ns = now;
        let idx = self.flows.len();
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
        let wire_total = size + segs * per_seg;
        let first = mss.min(size) + per_seg;
        let last = size - (segs - 1) * mss + per_seg;
        let ideal = self.ideal_fct_ns(fi, wire_total, first, last);
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
}
