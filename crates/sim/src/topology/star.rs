//! The star fabric (`topology.kind = "star"`): workers on their own links to a top-of-rack
//! switch, the aggregator behind its output port, optionally in racks joined by an aggregation
//! switch, lossless with PAUSE. Built once per run, in a fixed order (link ids and random streams
//! depend on it).

use super::{add, intern, Built, Fabric, Path, StarFabric};
use crate::config::{self, Config};
use crate::link::queue::{droptail::DropTail, step_ecn::StepEcn};
use crate::link::{Link, LinkId, NodeKind};
use crate::pfc;
use crate::rng::Rng;
use cc::Nanos;

pub(super) fn build_star(cfg: &Config, st: &config::Star, links: &mut Vec<Link>) -> Built {
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
        wire_star_pfc(cfg, st, &ports, &hosts, &trunks, &paths, links);
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

/// A lossless star's PAUSE: the host NICs (each worker's and the aggregator's, their nominal
/// rates) and the trunks, wired by `wire_pfc`.
fn wire_star_pfc(
    cfg: &Config,
    st: &config::Star,
    ports: &StarPorts,
    hosts: &StarHosts,
    trunks: &[LinkId],
    paths: &[(Path, Path, Nanos)],
    links: &mut [Link],
) {
    let mut nics: Vec<(LinkId, u64)> =
        hosts.workers.iter().map(|&(nic, _)| (nic, st.rate_bps)).collect();
    nics.push((hosts.agg_nic, ports.agg_rate));
    let frame_bytes = config::max_frame_bytes(cfg);
    wire_pfc(&st.pfc, ports.ingress_pfc, &nics, trunks, paths, frame_bytes, links);
}

/// A lossless fabric's PAUSE (a star's, a graph's switches): who ignores it (`nics`, the host
/// NICs with their nominal rates; `trunks`, the links between switches), each pausing port's
/// thresholds (at the ingress ports with ingress accounting, else at every switch output port,
/// for the links that feed it). Who feeds whom comes from the flows' `paths`.
pub(super) fn wire_pfc(
    p: &config::Pfc,
    ingress_pfc: bool,
    nics: &[(LinkId, u64)],
    trunks: &[LinkId],
    paths: &[(Path, Path, Nanos)],
    frame_bytes: u32,
    links: &mut [Link],
) {
    // The PAUSE frame travels on the reverse link of the one it pauses: one propagation
    // delay plus a 64-byte control frame's serialization; a host NIC acts on it
    // `nic_pause_delay` later. Its quanta are bit times of the paused link.
    let pause_latency = |l: LinkId, rate: u64, links: &[Link]| {
        links[l as usize].delay_ns
            + (64u128 * 8 * 1_000_000_000 / rate as u128) as Nanos
            + p.nic_pause_delay_ns
    };
    let quanta_ns = |rate: u64| (p.quanta as u128 * 512 * 1_000_000_000 / rate as u128) as Nanos;
    for &(l, _) in nics {
        links[l as usize].pfc_mut().ignores_pause = !p.nic_honours_pause;
    }
    for &l in trunks {
        links[l as usize].pfc_mut().ignores_pause = !p.switches_honour_pause;
    }
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
        nics.iter().find(|&&(nic, _)| nic == l).map_or(links[l as usize].rate_bps, |&(_, r)| r)
    };
    for &l in fed.iter().flat_map(|&port| &feeders[port as usize]) {
        let rate = nominal(l, links);
        links[l as usize].pfc_mut().pause_quanta_ns = quanta_ns(rate);
        if ingress_pfc && links[l as usize].pfc.as_deref().is_none_or(|p| p.ingress.is_none()) {
            // Each ingress port counts its own bytes and pauses its own sender.
            let headroom = match p.headroom_bytes {
                0 => config::pfc_headroom_bytes(rate, links[l as usize].delay_ns, frame_bytes),
                h => h,
            };
            links[l as usize].pfc_mut().ingress = Some(pfc::IngressPort::new(
                p.xoff_bytes,
                p.xon_bytes,
                headroom,
                quanta_ns(rate),
                pause_latency(l, rate, links),
            ));
        }
    }
    if !ingress_pfc {
        // Every output port pauses the links that feed it.
        for &port in &fed {
            let up: Vec<(LinkId, Nanos)> = feeders[port as usize]
                .iter()
                .map(|&l| (l, pause_latency(l, nominal(l, links), links)))
                .collect();
            let q = quanta_ns(nominal(up[0].0, links));
            links[port as usize].pfc_mut().port =
                Some(pfc::PortPfc::new(p.xoff_bytes, p.xon_bytes, q, up));
        }
    }
}
