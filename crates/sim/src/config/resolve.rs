//! Defaults that depend on other fields, and the facts several places derive from a config (the
//! BDP, the bottleneck's byte limit): defined here once, used by the simulator's topology
//! builders, the front's summaries and the real-Linux backend alike.

use super::*;
use serde::Serialize;

/// A star switch port's drop-tail limit when none is given (a commodity 1 GbE ToR's per-port
/// share, the Waterloo study's drop-tail comparison point). Lossless ports have none.
pub const STAR_DEFAULT_BUFFER_BYTES: u64 = 128_000;
/// A dumbbell host's access link is this many times the bottleneck rate unless given, so the
/// bottleneck is the bottleneck.
pub const ACCESS_RATE_FACTOR: u64 = 10;

/// Facts derived from a config.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Derived {
    /// Rate of the link every flow shares: the dumbbell's bottleneck, the star's aggregator port.
    pub bottleneck_rate_bps: u64,
    /// Propagation RTT of a flow without extra delay (star: worker → aggregator → worker).
    pub base_rtt_ns: u64,
    /// bottleneck rate × base RTT, whole bytes (floor).
    pub bdp_bytes: u64,
    /// The shared queue's limit in bytes (None: unlimited, or a packet limit).
    pub buffer_bytes: Option<u64>,
    /// The shared queue's limit in packets (None: a byte limit or unlimited).
    pub buffer_packets: Option<u64>,
    /// Name of the shared queue in the `queue` table.
    pub main_queue: &'static str,
    /// Simulated flows (`count` expanded).
    pub flow_count: u64,
    /// Rows the sampled tables will hold: timeseries (flows × samples) plus queue (monitored
    /// queues × samples).
    pub sample_rows: u64,
    /// On a graph: every flow's hosts, path and max-min fair share (flow-id order; empty on
    /// the other topologies). The front adds them to the flows table.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub routes: Vec<RouteInfo>,
    /// On a graph: every link direction, in the simulator's order (each configured link's
    /// `from` → `to`, then its way back): the queue table's rows and the emu backend's links.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<LinkDirInfo>,
}

/// One direction of a graph's link, as the emu backend builds it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LinkDirInfo {
    /// Its name (the queue table's, a path's).
    pub name: String,
    /// Index of the configured link (`topology.links`).
    pub link: usize,
    /// The configured link's way back (`to` → `from`).
    pub reverse: bool,
}

/// A flow's route on a graph, as the flows table shows it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RouteInfo {
    pub src: String,
    pub dst: String,
    /// The data path's link names joined by ">".
    pub path: String,
    /// The ACK path's link names joined by ">" (the emu backend forwards ACKs along it).
    pub ack_path: String,
    /// The flow's max-min fair share of the links' capacities, as goodput (payload bit/s;
    /// `topology/routing.rs`).
    pub maxmin_goodput_bps: f64,
}

/// What a graph's derived facts come from: the link that max-min fairness fills first (the
/// tightest share), flow 0's propagation RTT, the routes.
struct GraphFacts {
    rate_bps: u64,
    rtt_ns: u64,
    buffer: (Option<u64>, Option<u64>),
    main_queue: &'static str,
    queues: u64,
    routes: Vec<RouteInfo>,
    links: Vec<LinkDirInfo>,
}

fn graph_facts(cfg: &Config, g: &Graph) -> GraphFacts {
    use crate::topology::routing::{max_min_goodput, routes, Net};
    let Ok(net) = Net::of(g) else {
        // Refused by the check, which calls this first for the table rows.
        return GraphFacts {
            rate_bps: 0,
            rtt_ns: 0,
            buffer: (None, None),
            main_queue: "",
            queues: 0,
            routes: Vec::new(),
            links: Vec::new(),
        };
    };
    let queues = net.dir.len() as u64;
    let rs = routes(cfg, &net).unwrap_or_default();
    let mut users = vec![0u64; net.dir.len()];
    for r in &rs {
        for &d in &r.data {
            users[d] += 1;
        }
    }
    // The tightest link: least capacity per flow crossing it (the first one on a tie).
    let tight = (0..net.dir.len())
        .filter(|&d| users[d] > 0)
        .min_by(|&a, &b| {
            let share = |d: usize| net.dir[d].rate_bps as f64 / users[d] as f64;
            share(a).total_cmp(&share(b))
        })
        .unwrap_or(0);
    let goodput = max_min_goodput(cfg, &net, &rs);
    let rtt_ns =
        rs.first().map_or(0, |r| r.data.iter().chain(&r.ack).map(|&d| net.dir[d].delay_ns).sum());
    let dl = &net.dir[tight];
    let names = |p: &[usize]| p.iter().map(|&d| net.dir[d].name.as_str()).collect::<Vec<_>>();
    let routes = rs
        .iter()
        .zip(goodput)
        .map(|(r, g)| RouteInfo {
            src: net.names[r.src].clone(),
            dst: net.names[r.dst].clone(),
            path: names(&r.data).join(">"),
            ack_path: names(&r.ack).join(">"),
            maxmin_goodput_bps: g,
        })
        .collect();
    // A configured link's first direction is `from` → `to` (routing.rs builds them in order).
    let links = net
        .dir
        .iter()
        .map(|d| LinkDirInfo {
            name: d.name.clone(),
            link: d.link,
            reverse: g.links[d.link].from != net.names[d.from],
        })
        .collect();
    GraphFacts {
        rate_bps: dl.rate_bps,
        rtt_ns,
        buffer: g.links[dl.link].limits(),
        main_queue: crate::topology::intern(dl.name.clone()),
        queues,
        routes,
        links,
    }
}

/// The byte limit `buffer` sets on a path with this BDP (None for a packet limit).
pub(crate) fn buffer_limit_bytes(buffer: &Buffer, bdp_bytes: u64) -> Option<u64> {
    match *buffer {
        Buffer::Bytes(b) => Some(b),
        Buffer::Packets(_) => None,
        Buffer::Bdp(x) => Some(check::buffer_bytes_of_bdp(x, bdp_bytes)),
    }
}

impl Config {
    /// The config with every default that depends on other fields filled in and every
    /// algorithm by its canonical name (`bbr` → `bbr1`).
    pub fn resolved(&self) -> Config {
        let mut c = self.clone();
        let canonical = |f: &mut Flow| {
            if let Some(a) = cc::registry::lookup(&f.cc) {
                f.cc = a.name.to_string();
            }
        };
        c.flows.iter_mut().for_each(canonical);
        for a in &mut c.apps {
            match a {
                App::Query(q) => canonical(&mut q.flow),
                App::Workload(w) => {
                    if let Some(alg) = cc::registry::lookup(&w.cc) {
                        w.cc = alg.name.to_string();
                    }
                }
            }
        }
        match &mut c.topology {
            Topology::Dumbbell(d) => {
                let rate = d.bottleneck.rate_bps();
                d.access_rate_bps
                    .get_or_insert(rate.saturating_mul(ACCESS_RATE_FACTOR).min(MAX_RATE_BPS));
                // The discipline every backend reads: none named is the drop-tail FIFO.
                d.bottleneck.qdisc.get_or_insert_with(QdiscSpec::default);
            }
            Topology::ParkingLot(_) | Topology::LeafSpine(_) | Topology::FatTree(_) => {
                // A preset is the graph it expands into.
                let g = c.topology.graph().expect("a preset").into_owned();
                c.topology = Topology::Graph(g);
            }
            Topology::Graph(_) => {}
            Topology::Star(s) => {
                s.aggregator_rate_bps.get_or_insert(s.rate_bps);
                if let (Some(h), None) = (s.hosts_per_rack, s.uplink_rate_bps) {
                    s.uplink_rate_bps = Some(s.rate_bps.saturating_mul(h as u64).min(MAX_RATE_BPS));
                }
                if s.buffer_bytes.is_none() && !s.lossless {
                    s.buffer_bytes = Some(STAR_DEFAULT_BUFFER_BYTES);
                }
            }
        }
        c.red_qdisc_to_native();
        c
    }

    /// `qdisc = { kind = "red", … }` becomes the `red` table it means (thresholds in bytes at
    /// the largest frame), so that one native RED serves both forms on every backend.
    fn red_qdisc_to_native(&mut self) {
        let frame_bytes = max_frame_bytes(self);
        let native = |red: &mut Option<Red>, qdisc: &mut Option<QdiscSpec>, droptail| {
            if let Some(r) = qdisc.as_ref().and_then(|q| Red::of_qdisc(q, frame_bytes)) {
                *red = Some(r);
                *qdisc = droptail;
            }
        };
        match &mut self.topology {
            Topology::Dumbbell(d) => {
                let b = &mut d.bottleneck;
                native(&mut b.red, &mut b.qdisc, Some(QdiscSpec::default()));
            }
            Topology::Graph(g) => {
                for l in &mut g.links {
                    native(&mut l.red, &mut l.qdisc, None);
                }
            }
            _ => {}
        }
    }

    /// BDP, the shared queue's limit and the like.
    pub fn derived(&self) -> Derived {
        let graph = self.topology.graph().map(|g| graph_facts(self, &g));
        let (rate, rtt, buffer_bytes, buffer_packets, main_queue) = match &self.topology {
            Topology::Graph(_)
            | Topology::ParkingLot(_)
            | Topology::LeafSpine(_)
            | Topology::FatTree(_) => {
                let g = graph.as_ref().expect("a graph");
                (g.rate_bps, g.rtt_ns, g.buffer.0, g.buffer.1, g.main_queue)
            }
            Topology::Dumbbell(d) => {
                let b = &d.bottleneck;
                // With a trace: the BDP at its mean rate (`Bottleneck::rate_bps`).
                let rate = b.rate_bps();
                let bdp = bdp_bytes(rate, b.rtt_ns);
                let packets = if let Buffer::Packets(p) = b.buffer { Some(p) } else { None };
                (rate, b.rtt_ns, buffer_limit_bytes(&b.buffer, bdp), packets, "bottleneck")
            }
            Topology::Star(s) => {
                let r = self.resolved();
                let Topology::Star(rs) = &r.topology else { unreachable!() };
                (
                    rs.aggregator_rate_bps.unwrap_or(s.rate_bps),
                    4 * s.delay_ns,
                    rs.buffer_bytes,
                    None,
                    "tor_to_agg",
                )
            }
        };
        let samples = self.duration_ns / self.sample_interval_ns.max(1) + 1;
        let queues = match &self.topology {
            Topology::Dumbbell(_) => 2,
            Topology::Star(s) => s.workers as u64 + 2,
            _ => graph.as_ref().map_or(0, |g| g.queues),
        };
        Derived {
            sample_rows: (self.flow_count() + queues).saturating_mul(samples),
            bottleneck_rate_bps: rate,
            base_rtt_ns: rtt,
            bdp_bytes: bdp_bytes(rate, rtt),
            buffer_bytes,
            buffer_packets,
            main_queue,
            flow_count: self.flow_count(),
            links: graph.as_ref().map_or_else(Vec::new, |g| g.links.clone()),
            routes: graph.map_or_else(Vec::new, |g| g.routes),
        }
    }
}

/// The largest frame on the wire: the largest MSS of any flow or application + TCP/IP headers +
/// Ethernet framing.
pub fn max_frame_bytes(cfg: &Config) -> u32 {
    let mss = cfg
        .flows
        .iter()
        .map(|f| f.mss_bytes)
        .chain(cfg.apps.iter().filter_map(|a| match a {
            App::Query(q) => Some(q.flow.mss_bytes),
            App::Workload(_) => None,
        }))
        .max();
    mss.unwrap_or(transport::DEFAULT_MSS_BYTES)
        + transport::TCP_IP_HEADER_BYTES
        + transport::ETHERNET_OVERHEAD_BYTES
}

/// Bytes that reach an ingress port after it crossed XOFF (IEEE 802.1Qbb Annex O's headroom):
/// the PAUSE frame waits behind at most one frame leaving the switch's port and takes
/// `delay_ns` to reach the host, the host finishes the frame it is sending, and what the host
/// sent meanwhile is on the wire for another `delay_ns`: 2 × rate × delay + 2 frames + the
/// 64-byte PAUSE frame itself (rounded up).
pub fn pfc_headroom_bytes(rate_bps: u64, delay_ns: u64, frame_bytes: u32) -> u64 {
    const PAUSE_FRAME_BYTES: u64 = 64;
    2 * (rate_bps as u128 * delay_ns as u128).div_ceil(8 * 1_000_000_000) as u64
        + 2 * frame_bytes as u64
        + PAUSE_FRAME_BYTES
}

/// rate × rtt in whole bytes (floor).
pub fn bdp_bytes(rate_bps: u64, rtt_ns: u64) -> u64 {
    (rate_bps as u128 * rtt_ns as u128 / 8 / 1_000_000_000) as u64
}
