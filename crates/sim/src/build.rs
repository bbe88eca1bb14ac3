//! Building a `Simulation`'s parts from a checked config, in the order `from_checked` wires them:
//! the TCP flows on their paths, the non-TCP sources on flow entries after them, the optional
//! host model, and the applications (queries, flow-size workloads). Each part takes the links and
//! the fabric it routes over; none runs anything (the event loop starts after all are built).

use crate::link::{self, Link, NodeKind};
use crate::topology::{self, Fabric};
use crate::{apps, arrivals, config, host, ictcp, traffic, Flow, Simulation};

/// The configured flows, in order (flow i has id i), each on its routed data and ACK paths.
pub(crate) fn tcp_flows(
    cfg: &config::Config,
    fabric: &mut Fabric,
    links: &mut Vec<Link>,
    mut ictcp_ctl: Option<&mut ictcp::Ictcp>,
) -> Vec<Flow> {
    let seed = cfg.seed;
    let mut flows = Vec::with_capacity(cfg.flow_count() as usize);
    for (i, (spec, f)) in cfg.expanded_flows().enumerate() {
        let (dp, ap, base_rtt_ns) = fabric.flow_paths(links, f, i, seed);
        let ctl = ictcp_ctl.as_deref_mut();
        let mut flow = Simulation::new_flow(seed, f, i, dp, ap, base_rtt_ns, ctl);
        flow.spec = spec as i32;
        // Its NIC's fq paces it (Linux: fq sets the socket's SK_PACING_FQ).
        flow.sender.cfg.paced_by_qdisc = links[dp.first() as usize].aqm.is_some();
        flows.push(flow);
    }
    flows
}

/// Non-TCP sources ride on flow entries of their own after the configured flows, so the flows
/// keep their ids; a source takes a flow's route (reversed with `reverse`).
pub(crate) fn traffic_sources(
    cfg: &config::Config,
    fabric: &mut Fabric,
    links: &mut Vec<Link>,
    flows: &mut Vec<Flow>,
) -> Vec<traffic::Source> {
    let seed = cfg.seed;
    let mut sources = Vec::with_capacity(cfg.traffic.len());
    for (si, t) in cfg.traffic.iter().enumerate() {
        let r = t.route();
        let mut f: config::Flow = serde_json::from_str(r#"{"cc":"reno"}"#).expect("a minimal flow");
        f.sender = match &cfg.topology {
            // A star's flows are its workers' (flow i: worker i): a source is worker 0's.
            config::Topology::Star(_) => Some(r.sender.unwrap_or(0)),
            _ => r.sender,
        };
        f.start_ns = r.start_ns;
        f.stop_ns = r.stop_ns;
        let i = flows.len();
        let (dp, ap, base_rtt_ns) = match (&mut *fabric, r.src, r.dst) {
            // On a graph a source names its hosts and is routed as a flow of its id.
            (Fabric::Graph(g), Some(src), Some(dst)) => {
                let (src, dst) = (g.host(src), g.host(dst));
                g.pair_paths(src, dst, topology::routing::flow_key(seed, i as u64))
            }
            _ => fabric.flow_paths(links, &f, i, seed),
        };
        let (dp, ap) = if r.reverse { (ap, dp) } else { (dp, ap) };
        let mut flow = Simulation::new_flow(seed, &f, i, dp, ap, base_rtt_ns, None);
        flow.sampled = false;
        flow.traffic = si as u32;
        flows.push(flow);
        sources.push(traffic::Source::new(t.clone(), i as u32, seed, si));
    }
    sources
}

/// The optional end-host model: each flow's transmit and receive cores, and with flow control
/// the links into hosts made pausable.
pub(crate) fn hosts(
    cfg: &config::Config,
    links: &mut [Link],
    flows: &mut [Flow],
) -> Option<Box<host::Hosts>> {
    let mut hosts = cfg.hosts.clone().map(|h| Box::new(host::Hosts::new(h)));
    if let Some(hm) = hosts.as_mut() {
        for (i, f) in flows.iter_mut().enumerate() {
            f.tx_core = hm.core_for(f.data_path.first(), true, i);
            f.rx_core = hm.core_for(f.ack_path.first(), false, i);
        }
        if hm.cfg.flow_control {
            // The links into hosts can be paused; a port without a limit of its own (a
            // dumbbell's access ports) gets the bottleneck's buffer, as a switch port has one.
            let (lim_bytes, lim_pkts) = match &cfg.topology {
                config::Topology::Dumbbell(_) => {
                    let d = cfg.derived();
                    (d.buffer_bytes, d.buffer_packets)
                }
                _ => (None, None),
            };
            for link in links.iter_mut().filter(|l| l.to == NodeKind::Host) {
                link.host_paused = true;
                if !link.qdisc.bounds_queue() {
                    if let Some(d) = link::queue::droptail::DropTail::new(lim_bytes, lim_pkts) {
                        link.qdisc.push(d);
                    }
                }
            }
        }
    }
    hosts
}

/// The applications: query apps, and flow-size workloads with the ends their flows run between.
/// `n_flows` counts the flow entries built so far (a dumbbell workload's sender hosts are routed
/// under ids after them).
pub(crate) fn apps(
    cfg: &config::Config,
    fabric: &mut Fabric,
    links: &mut Vec<Link>,
    n_flows: usize,
) -> (Vec<apps::QueryApp>, Vec<arrivals::Workload>) {
    let seed = cfg.seed;
    let mut apps = Vec::new();
    let mut workloads = Vec::new();
    for (i, a) in cfg.apps.iter().enumerate() {
        match a {
            config::App::Query(q) => apps.push(apps::QueryApp::new(q.clone(), seed, i)),
            config::App::Workload(w) => {
                let (ends, rate) = match (&mut *fabric, &cfg.topology) {
                    (Fabric::Graph(g), _) => arrivals::graph_ends(g, w),
                    (_, config::Topology::Dumbbell(d)) => {
                        // The sender hosts, built with the network (their paths fixed now).
                        let hosts = (0..w.hosts)
                            .map(|h| {
                                let f = arrivals::Workload::flow_template(&w.cc, Some((i, h)));
                                let id = n_flows + i * 1_000 + h as usize;
                                fabric.flow_paths(links, &f, id, seed)
                            })
                            .collect();
                        (arrivals::Ends::Hosts(hosts), d.bottleneck.rate_bps())
                    }
                    _ => unreachable!("validated: workloads run on a dumbbell or a graph"),
                };
                workloads.push(arrivals::Workload::new(w.clone(), rate, ends, seed, i));
            }
        }
    }
    (apps, workloads)
}
