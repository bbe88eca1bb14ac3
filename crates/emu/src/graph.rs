//! A graph run: every host a TUN device (in its own namespace), every link direction of the
//! graph a [`Link`] in this one process, and each packet forwarded hop by hop along its route:
//!
//! ```text
//! host TUN a --link 0--> (switch) --link 3--> (switch) --link 5--> host TUN b
//! ```
//!
//! Switches exist only as the places where one link's delivery enters the next link's queue;
//! they add no delay of their own (the simulator's switches neither: a frame enters the next
//! port's queue when it has arrived).
//!
//! Routes are the simulator's (`crates/sim/src/topology/routing.rs`, computed once there and
//! handed over by the runner), per flow: the data path from `src` to `dst` and the ACK path back,
//! each keyed by the flow's listening port. A packet read from host `a` for the address of host
//! `b` takes the route (a, b, its destination port), else (a, b, its source port): the data
//! packets carry the flow's port as their destination, the ACKs as their source, so ECMP splits
//! flows exactly as the simulator's per-flow hash did. A packet with neither is counted as
//! unroutable and dropped.
//!
//! Time order across links: [`GraphEmu::run_timers`] always serves the link whose deadline is
//! earliest, so a packet leaving one link enters the next one at its delivery time, before that
//! link has been moved past it. Each link's deadline is cached (refreshed when the link is
//! touched), so finding the earliest is a scan of one integer per link direction rather than a
//! query of every link's state at every hop.
//!
//! Per-flow counters: a flow's data packets count as origin `flow`, its ACKs as `flows + flow`,
//! summed over every link they cross in the final line's `forward_per_sender` /
//! `reverse_per_sender` (the runner's per-flow drops and CE marks).

use std::collections::HashMap;
use std::os::fd::RawFd;

use crate::forward::{now_ns, origin_json, Forwarder, LoopStats, Pool};
use crate::run::parse_ipv4;
use crate::{
    ect0_to_ect1, flow_key, ipv4_dst, packet_ecn, set_ce, Arrival, Departure, Link, LinkParams,
    OriginCounters, QueueSample,
};

/// A graph as the runner writes it (`python/bbrlab/emu/graph.py`).
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct GraphSpec {
    /// One per host: its TUN device and address.
    pub hosts: Vec<HostSpec>,
    /// Every link direction, in the simulator's order (the queue table's rows).
    pub links: Vec<LinkSpec>,
    /// Every flow's data route and ACK route.
    pub routes: Vec<RouteSpec>,
    /// Flows: origins below this are data packets, the others ACKs (`flows + flow`).
    pub flows: u16,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct HostSpec {
    pub tun: String,
    /// IPv4, dotted.
    pub addr: String,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LinkSpec {
    /// The simulator's name of this direction (`r0-r1`, `r1-r0`, …).
    pub name: String,
    pub params: LinkParams,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RouteSpec {
    /// Host indices.
    pub src: u16,
    pub dst: u16,
    /// The flow's port: the destination port of its data packets, the source port of its ACKs.
    pub port: u16,
    /// Link indices, first hop first.
    pub links: Vec<u32>,
    /// Per-flow counters' index (`flow` for data, `flows + flow` for ACKs).
    pub origin: u16,
    /// Rewrite the packets' ECT(0) to ECT(1) as they are read (an `ecn = "ect1"` flow's data).
    #[serde(default)]
    pub ect1: bool,
}

impl GraphSpec {
    /// Every link direction, built (one line naming the link on a bad parameter); each its own
    /// random stream.
    pub fn build_links(&self, seed: u64) -> Result<Vec<Link<u32>>, String> {
        self.links
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let s = seed ^ (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                Link::try_new(l.params.clone(), s).map_err(|e| format!("link {}: {e}", l.name))
            })
            .collect()
    }
}

/// A link's next deadline, u64::MAX for none.
fn deadline_of(l: &Link<u32>) -> u64 {
    l.next_deadline().unwrap_or(u64::MAX)
}

/// The TCP/UDP source and destination ports of an IPv4 packet (None for anything else).
fn ipv4_ports(p: &[u8]) -> Option<(u16, u16)> {
    if p.len() < 20 || p[0] >> 4 != 4 || !matches!(p[9], 6 | 17) {
        return None;
    }
    let l4 = (p[0] & 0x0f) as usize * 4;
    let q = p.get(l4..l4 + 4)?;
    Some((u16::from_be_bytes([q[0], q[1]]), u16::from_be_bytes([q[2], q[3]])))
}

/// The graph's forwarding state.
pub(crate) struct GraphEmu {
    pool: Pool,
    host_fds: Vec<RawFd>,
    addr_to_host: HashMap<u32, u16>,
    names: Vec<String>,
    links: Vec<Link<u32>>,
    /// Each link's next deadline (u64::MAX: none), as of the last time it was touched.
    deadline: Vec<u64>,
    routes: Vec<RouteSpec>,
    /// (src host, dst host, port) -> route.
    route_of: HashMap<(u16, u16, u16), u32>,
    flows: u16,
    /// Per pool slot: the route its packet follows and the hop it is on.
    slot_route: Vec<u32>,
    slot_hop: Vec<u8>,
    stats: LoopStats,
    /// Data packets and their wire bytes delivered to their destination host.
    data_delivered_pkts: u64,
    data_delivered_bytes: u64,
}

impl GraphEmu {
    pub fn new(
        g: GraphSpec,
        links: Vec<Link<u32>>,
        host_fds: Vec<RawFd>,
        pool: Pool,
    ) -> Result<GraphEmu, String> {
        let nh = g.hosts.len();
        let mut route_of = HashMap::new();
        for (i, r) in g.routes.iter().enumerate() {
            if r.src as usize >= nh || r.dst as usize >= nh || r.src == r.dst {
                return Err(format!("graph: route {i} joins hosts {} and {}", r.src, r.dst));
            }
            if r.links.is_empty() || r.links.len() > u8::MAX as usize {
                return Err(format!("graph: route {i} has {} links", r.links.len()));
            }
            if let Some(&l) = r.links.iter().find(|&&l| l as usize >= links.len()) {
                return Err(format!("graph: route {i} names link {l} of {}", links.len()));
            }
            if route_of.insert((r.src, r.dst, r.port), i as u32).is_some() {
                return Err(format!(
                    "graph: two routes from host {} to {} for port {}",
                    r.src, r.dst, r.port
                ));
            }
        }
        let addr_to_host = g
            .hosts
            .iter()
            .enumerate()
            .map(|(i, h)| parse_ipv4(&h.addr).map(|a| (a, i as u16)))
            .collect::<Result<_, _>>()?;
        Ok(GraphEmu {
            pool,
            host_fds,
            addr_to_host,
            names: g.links.into_iter().map(|l| l.name).collect(),
            deadline: vec![u64::MAX; links.len()],
            links,
            routes: g.routes,
            route_of,
            flows: g.flows,
            slot_route: Vec::new(),
            slot_hop: Vec::new(),
            stats: LoopStats::default(),
            data_delivered_pkts: 0,
            data_delivered_bytes: 0,
        })
    }

    /// The route of a packet read from host `src`: by its destination port, else its source
    /// port (module header).
    fn route_for(&mut self, src: u16, i: u32) -> Option<u32> {
        let p = self.pool.pkt(i);
        let dst = *self.addr_to_host.get(&ipv4_dst(p)?)?;
        let (sport, dport) = ipv4_ports(p)?;
        self.route_of
            .get(&(src, dst, dport))
            .or_else(|| self.route_of.get(&(src, dst, sport)))
            .copied()
    }

    /// Packet `i` enters hop `hop` of route `r` at `now`; a refused packet goes back to the pool.
    fn enter(&mut self, now: u64, i: u32, r: u32, hop: u8) {
        let slot = i as usize;
        if self.slot_route.len() <= slot {
            self.slot_route.resize(slot + 1, 0);
            self.slot_hop.resize(slot + 1, 0);
        }
        self.slot_route[slot] = r;
        self.slot_hop[slot] = hop;
        let route = &self.routes[r as usize];
        let link = &mut self.links[route.links[hop as usize] as usize];
        let a = {
            let p = self.pool.pkt(i);
            let origin = route.origin;
            Arrival { ip_len: p.len() as u32, ecn: packet_ecn(p), flow_key: flow_key(p), origin }
        };
        let refused = link.enqueue(now, i, a).err();
        self.deadline[route.links[hop as usize] as usize] = deadline_of(link);
        if let Some((_, i)) = refused {
            self.pool.put(i);
        }
    }

    /// Every link's deadline again (after something touched them all: sampling, the start).
    fn refresh_all(&mut self) {
        for (d, l) in self.deadline.iter_mut().zip(&self.links) {
            *d = deadline_of(l);
        }
    }

    /// A packet left a link: on to its route's next link, or out to its destination host.
    fn forward(&mut self, now: u64, d: Departure<u32>) {
        let i = d.payload;
        if d.ce {
            set_ce(self.pool.pkt(i));
        }
        let (r, hop) = (self.slot_route[i as usize], self.slot_hop[i as usize] + 1);
        let route = &self.routes[r as usize];
        if (hop as usize) < route.links.len() {
            self.enter(d.due_ns, i, r, hop);
            return;
        }
        let fd = self.host_fds[route.dst as usize];
        let data = route.origin < self.flows;
        self.stats.note_late(now, d.due_ns);
        let n = self.pool.len[i as usize] as usize;
        if data {
            self.data_delivered_pkts += 1;
            self.data_delivered_bytes += n as u64;
        }
        let buf = self.pool.buf(i);
        if unsafe { libc::write(fd, buf.as_ptr() as *const _, n) } < 0 {
            self.stats.write_errors += 1;
        }
        self.pool.put(i);
    }

    fn recycle_dropped(&mut self) {
        for l in &mut self.links {
            for i in l.drain_dropped() {
                self.pool.put(i);
            }
        }
    }

    /// Per flow, `OriginCounters` summed over every link for origins `base + flow`.
    fn per_flow_json(&self, base: usize) -> String {
        (0..self.flows as usize)
            .map(|f| {
                let mut c = OriginCounters::default();
                for l in &self.links {
                    let o = l.per_origin.get(base + f).copied().unwrap_or_default();
                    c.rx_pkts += o.rx_pkts;
                    c.drops += o.drops;
                    c.random_losses += o.random_losses;
                    c.ce_marks += o.ce_marks;
                    c.policer_drops += o.policer_drops;
                }
                origin_json(&c)
            })
            .collect::<Vec<_>>()
            .join(",")
    }
}

impl Forwarder for GraphEmu {
    fn inputs(&self) -> Vec<RawFd> {
        self.host_fds.clone()
    }

    fn drain_input(&mut self, h: usize) {
        let fd = self.host_fds[h];
        let mut n = 0;
        while n < 64 {
            let Some(i) = self.pool.read_from(fd) else { break };
            self.stats.reads += 1;
            n += 1;
            let Some(route) = self.route_for(h as u16, i) else {
                self.stats.unroutable += 1;
                self.pool.put(i);
                continue;
            };
            if self.routes[route as usize].ect1 {
                ect0_to_ect1(self.pool.pkt(i));
            }
            self.enter(now_ns(), i, route, 0);
        }
        self.recycle_dropped();
        self.stats.max_batch = self.stats.max_batch.max(n);
    }

    /// Serve deadlines in time order across the links (module header) until none is due.
    fn run_timers(&mut self, now: u64) {
        while let Some((l, &d)) = self.deadline.iter().enumerate().min_by_key(|&(_, d)| d) {
            if d > now {
                break;
            }
            let dep = self.links[l].pop_ready(d);
            self.deadline[l] = deadline_of(&self.links[l]);
            match dep {
                Some(dep) => self.forward(now, dep),
                // A serialization ended (the packet is now propagating): the link's deadline
                // moved on. Guard against one that did not (it would spin).
                None if self.deadline[l] == d => break,
                None => {}
            }
        }
        self.recycle_dropped();
    }

    fn next_deadline(&self) -> Option<u64> {
        self.deadline.iter().copied().min().filter(|&d| d != u64::MAX)
    }

    fn sample(&mut self, t: u64, row: &mut dyn FnMut(&str, &QueueSample)) {
        for (l, name) in self.links.iter_mut().zip(&self.names) {
            row(name, &l.sample(t));
        }
        self.refresh_all();
    }

    fn start_run(&mut self, t: u64) {
        for l in &mut self.links {
            l.reset_counters(t.min(now_ns()));
            l.start_run(t);
        }
        self.stats.start_intervals();
        self.refresh_all();
    }

    fn loop_stats(&mut self) -> &mut LoopStats {
        &mut self.stats
    }

    fn final_json(&self, exit_reason: &str) -> String {
        let late_mean = self.stats.late_mean_ns();
        format!(
            "{{\"final\":true,\"reason\":\"{exit_reason}\",\"forward_per_sender\":[{}],\
             \"reverse_per_sender\":[{}],\"forward_tx_bytes\":{},\"forward_tx_pkts\":{},\
             \"write_errors\":{},\"unroutable\":{},\"reads\":{},\"max_batch\":{},\
             \"late_mean_ns\":{late_mean:.1},\"late_max_ns\":{},{},{},\"pool_slots\":{}}}",
            self.per_flow_json(0),
            self.per_flow_json(self.flows as usize),
            self.data_delivered_bytes,
            self.data_delivered_pkts,
            self.stats.write_errors,
            self.stats.unroutable,
            self.stats.reads,
            self.stats.max_batch,
            self.stats.late_max_ns,
            self.stats.wakes_json(),
            self.stats.stalls_json(),
            self.pool.len.len()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A datagram socket pair standing in for a host's TUN: (the emulator's end, the host's).
    fn host_pair() -> (RawFd, RawFd) {
        let mut fds = [0; 2];
        let kind = libc::SOCK_SEQPACKET | libc::SOCK_NONBLOCK;
        assert_eq!(unsafe { libc::socketpair(libc::AF_UNIX, kind, 0, fds.as_mut_ptr()) }, 0);
        (fds[0], fds[1])
    }

    /// An IPv4 TCP header from `src` to `dst` (last octets of 10.77.0.x) with these ports.
    fn tcp_packet(src: u8, dst: u8, sport: u16, dport: u16) -> Vec<u8> {
        let mut p = vec![0u8; 40];
        p[0] = 0x45;
        p[2..4].copy_from_slice(&40u16.to_be_bytes());
        p[9] = 6;
        p[12..16].copy_from_slice(&[10, 77, 0, src]);
        p[16..20].copy_from_slice(&[10, 77, 0, dst]);
        p[20..22].copy_from_slice(&sport.to_be_bytes());
        p[22..24].copy_from_slice(&dport.to_be_bytes());
        p
    }

    fn send(fd: RawFd, p: &[u8]) {
        assert_eq!(unsafe { libc::write(fd, p.as_ptr() as *const _, p.len()) }, p.len() as isize);
    }

    fn recv(fd: RawFd) -> Option<Vec<u8>> {
        let mut b = vec![0u8; 2048];
        let r = unsafe { libc::read(fd, b.as_mut_ptr() as *mut _, b.len()) };
        (r > 0).then(|| b[..r as usize].to_vec())
    }

    /// Hosts a (10.77.0.2) and b (10.77.0.3) through a switch: links a-s (1 ms) and s-b
    /// (2 ms) and their ways back; one flow a -> b on port 5201.
    fn two_hop_graph() -> (GraphEmu, [RawFd; 2]) {
        let spec = serde_json::json!({
            "hosts": [{"tun": "a", "addr": "10.77.0.2"}, {"tun": "b", "addr": "10.77.0.3"}],
            "links": [
                {"name": "a-s", "params": {"delay_ns": 1_000_000}},
                {"name": "s-a", "params": {"delay_ns": 1_000_000}},
                {"name": "s-b", "params": {"delay_ns": 2_000_000}},
                {"name": "b-s", "params": {"delay_ns": 2_000_000}}],
            "routes": [
                {"src": 0, "dst": 1, "port": 5201, "links": [0, 2], "origin": 0},
                {"src": 1, "dst": 0, "port": 5201, "links": [3, 1], "origin": 1}],
            "flows": 1
        });
        let g: GraphSpec = serde_json::from_value(spec).unwrap();
        let links = g.build_links(1).unwrap();
        let (a, a_host) = host_pair();
        let (b, b_host) = host_pair();
        (GraphEmu::new(g, links, vec![a, b], Pool::new(2048)).unwrap(), [a_host, b_host])
    }

    #[test]
    fn data_and_acks_follow_their_routes_hop_by_hop() {
        let (mut emu, [a, b]) = two_hop_graph();
        let data = tcp_packet(2, 3, 40000, 5201);
        send(a, &data);
        let t0 = now_ns();
        emu.drain_input(0);
        let t1 = now_ns();
        // Both delays in turn: not there before 3 ms, there at 3 ms after it was read.
        emu.run_timers(t0 + 2_900_000);
        assert_eq!(recv(b), None, "delivered before the second hop's delay");
        emu.run_timers(t1 + 3_000_000);
        assert_eq!(recv(b).as_deref(), Some(&data[..]));
        assert_eq!(recv(a), None);
        // The ACK goes back by the flow's port as its source port.
        let ack = tcp_packet(3, 2, 5201, 40000);
        send(b, &ack);
        emu.drain_input(1);
        emu.run_timers(now_ns() + 3_000_000);
        assert_eq!(recv(a).as_deref(), Some(&ack[..]));
        let fin = emu.final_json("stop");
        assert!(fin.contains("\"forward_tx_pkts\":1,"), "{fin}");
        assert!(fin.contains("\"unroutable\":0,"), "{fin}");
    }

    #[test]
    fn a_late_delivery_is_a_stall_in_the_final_line() {
        let (mut emu, [a, b]) = two_hop_graph();
        let t0 = now_ns();
        emu.start_run(t0);
        send(a, &tcp_packet(2, 3, 40000, 5201));
        let before = now_ns();
        emu.drain_input(0);
        let after = now_ns();
        // Due 3 ms after it was read (both hops); delivered 2.5 ms after that.
        emu.run_timers(after + 3_000_000 + 2_500_000);
        assert!(recv(b).is_some());
        emu.close_interval(t0 + 100_000_000, t0, &mut |_, _| {});
        let v: serde_json::Value = serde_json::from_str(&emu.final_json("stop")).unwrap();
        assert_eq!(v["stall_count"], 1);
        assert_eq!(v["stalls"][0][0], 100_000_000u64);
        let late = v["stalls"][0][1].as_u64().unwrap();
        assert!((2_500_000..=2_500_000 + after - before).contains(&late), "{late}");
    }

    #[test]
    fn a_packet_of_no_flow_is_unroutable() {
        let (mut emu, [a, b]) = two_hop_graph();
        send(a, &tcp_packet(2, 3, 40000, 6000));
        send(a, &tcp_packet(2, 9, 40000, 5201)); // no host 10.77.0.9
        emu.drain_input(0);
        emu.run_timers(now_ns() + 10_000_000);
        assert_eq!(recv(b), None);
        assert!(emu.final_json("stop").contains("\"unroutable\":2,"));
    }

    #[test]
    fn ports_are_read_from_tcp_and_udp_only() {
        let mut p = vec![0u8; 40];
        p[0] = 0x45;
        p[9] = 6;
        p[20..24].copy_from_slice(&[0x14, 0x51, 0x80, 0x00]);
        assert_eq!(ipv4_ports(&p), Some((5201, 32768)));
        p[9] = 1; // ICMP
        assert_eq!(ipv4_ports(&p), None);
        p[9] = 17;
        assert_eq!(ipv4_ports(&p[..22]), None, "truncated");
    }
}
