//! Lossless Ethernet: IEEE 802.3x PAUSE back-pressure (one traffic class, as on the Waterloo DC
//! study's Mellanox SX1012 with global flow control; PFC's per-priority pause is the same mechanism
//! for a single priority).
//!
//! - A switch output port whose queue rises above XOFF bytes sends a PAUSE frame with
//!   `pause_quanta` (× 512 bit times of the receiving link) to every ingress link that feeds it.
//!   The frame arrives one propagation delay plus a 64-byte serialization later.
//! - A paused link finishes the packet it is serializing and starts no new one until the pause
//!   expires or an XON (PAUSE with quanta 0) arrives; its host NIC queue grows meanwhile (TSQ
//!   still bounds each flow's share of it). Nothing is ever dropped for lack of buffer.
//! - While paused (queue above XON) the port re-sends PAUSE every half quantum so the pause never
//!   lapses; once the queue falls below XON it sends XON to every ingress link.
//! - Every PAUSE and XON frame is counted: at the sending output port (frames sent, one per
//!   ingress link) and at the receiving link (frames received): the `pause_frames` column.
//!
//! The switch queue is therefore bounded by XOFF plus what is already committed when the pause
//! takes effect: per ingress link, the packet in serialization, the packets on the wire, and
//! what it sends during the PAUSE frame's trip (≈ 2 × MTU + rate × 2 × delay).
//!
//! That is the *egress* form (`pfc.accounting = "egress"`, bbrlab's earlier model). Switches
//! account PFC per *ingress* port instead (`"ingress"`; the Mellanox SwitchX generation of seed
//! 000's SX1012 buffers packets per ingress port, and the later shared-buffer generation
//! (Spectrum) still counts each ingress port/priority group against its own thresholds):
//!
//! - every packet waiting in an output queue is charged to the ingress port it came in on
//!   (`IngressPort::bytes`); it is released when the packet leaves the queue;
//! - an ingress port above XOFF sends PAUSE to *its own* upstream transmitter only (the host
//!   NIC), re-sent every half quantum while above XON, and XON once below XON; other ports keep
//!   sending into the same output queue;
//! - up to XOFF a port's bytes come from the shared pool (`shared_buffer_bytes`, if set; without
//!   one each port has its own buffer, as on SwitchX); above XOFF from the port's reserved
//!   headroom (`headroom_bytes`), which absorbs what was already on its way when the PAUSE took
//!   effect. A packet is dropped when the pool or the headroom cannot take it, never at the
//!   output port;
//! - the output queue is served first come, first served, so a port that keeps more bytes in the
//!   buffer than the others is paused while they are not: the share of the port follows what
//!   each sender keeps queued, not the number of senders.
//!
//! Host NICs act on a PAUSE `nic_pause_delay` after it arrives, or ignore it
//! (`nic_honours_pause = false`).

use crate::link::LinkId;
use crate::{EvKind, Simulation};
use cc::Nanos;

/// One switch ingress port's buffer accounting, kept on the link that feeds it.
pub(crate) struct IngressPort {
    /// Bytes that came in on this port and wait in an output queue.
    pub bytes: u64,
    xoff: u64,
    xon: u64,
    headroom: u64,
    /// PAUSE frame latency to the host (and its NIC's reaction delay).
    latency: Nanos,
    pause: Pauser,
    /// Packets dropped because the headroom above XOFF was full / the shared pool was.
    pub drops_headroom: u64,
    pub drops_pool: u64,
    /// Most bytes ever held.
    pub max_bytes: u64,
}

impl IngressPort {
    pub(crate) fn new(
        xoff: u64,
        xon: u64,
        headroom: u64,
        quanta_ns: Nanos,
        latency: Nanos,
    ) -> IngressPort {
        IngressPort {
            bytes: 0,
            xoff,
            xon,
            headroom,
            latency,
            pause: Pauser::new(quanta_ns),
            drops_headroom: 0,
            drops_pool: 0,
            max_bytes: 0,
        }
    }

    /// The part of `bytes` that draws on the shared pool (up to XOFF).
    #[inline]
    fn shared(&self, bytes: u64) -> u64 {
        bytes.min(self.xoff)
    }
}

/// A PAUSE source's state: whether a PAUSE is in force, and its re-send timer.
pub(crate) struct Pauser {
    /// Pause duration and re-send interval basis (quanta × 512 bit times at the link rate).
    quanta_ns: Nanos,
    /// A PAUSE is in force (sent, no XON since).
    asserted: bool,
    refresh_pending: bool,
}

impl Pauser {
    fn new(quanta_ns: Nanos) -> Pauser {
        Pauser { quanta_ns, asserted: false, refresh_pending: false }
    }
}

/// A link's part in a lossless fabric (`Link::pfc`): as a transmitter it may be paused, as a
/// switch output port it may pause the links that feed it (egress accounting), as a link into a
/// switch it may feed an ingress port that counts its bytes (ingress accounting).
#[derive(Default)]
pub(crate) struct LinkPfc {
    /// Duration of a PAUSE received by this link (its quanta at its rate); 0: none reaches it.
    pub pause_quanta_ns: Nanos,
    /// The transmitter ignores PAUSE frames (a NIC with flow control off).
    pub ignores_pause: bool,
    /// A `Resume` event (the pause's expiry check) is pending for this link. One is pending at
    /// a time: a PAUSE that extends the pause leaves it, and it re-arms itself at the expiry
    /// then in force (`on_pause_expiry`).
    pub expiry_pending: bool,
    /// This output port sends PAUSE frames upstream (egress accounting).
    pub port: Option<PortPfc>,
    /// This link feeds a switch ingress port whose buffer usage is counted for PAUSE.
    pub ingress: Option<IngressPort>,
    /// This output port's packets are charged to the ingress port they came in on.
    pub ingress_acct: bool,
}

impl LinkPfc {
    /// Nothing here stops the link's serializer or watches its departures.
    pub fn lets_link_be_timestamped(&self) -> bool {
        self.port.is_none()
            && self.ingress.is_none()
            && !self.ingress_acct
            && self.pause_quanta_ns == 0
    }

    /// Nothing here but egress accounting's PAUSE sent, which a timed link handles, and PAUSE
    /// received, which keeps it event-driven unless ignored (`speedup/timed.rs`); so does
    /// ingress accounting.
    pub fn lets_link_be_timed(&self) -> bool {
        self.ingress.is_none() && !self.ingress_acct
    }
}

/// Egress accounting: an output port and the links that feed it.
pub(crate) struct PortPfc {
    xoff: u64,
    xon: u64,
    /// (ingress link, PAUSE frame latency to it), by latency, then link.
    upstream: Vec<(LinkId, Nanos)>,
    /// `upstream` cut into runs of one latency: the frames of a run land at one instant, as
    /// one event (`on_pause_event`); a run's end index (see `group`).
    group_ends: Vec<u32>,
    pause: Pauser,
}

/// An event id with this bit set names a group of PAUSE frames an output port sent together
/// (`PauseOn`/`PauseOff`): the port's link id in the bits below `GROUP_SHIFT`, the group's index
/// above. Without it, the id is the one link a frame reaches.
const FRAME_GROUP: u32 = 1 << 31;
const GROUP_SHIFT: u32 = 21;
/// Ports and groups an id can name; a port beyond them sends its frames one event each.
const MAX_GROUP_PORT: LinkId = (1 << GROUP_SHIFT) - 1;
const MAX_GROUPS: usize = 1 << (31 - GROUP_SHIFT);

impl PortPfc {
    /// A PAUSE is in force (sent, no XON since).
    pub(crate) fn pause_asserted(&self) -> bool {
        self.pause.asserted
    }

    /// The queue size below which the port sends XON.
    pub(crate) fn xon_bytes(&self) -> u64 {
        self.xon
    }

    pub(crate) fn new(
        xoff: u64,
        xon: u64,
        quanta_ns: Nanos,
        mut upstream: Vec<(LinkId, Nanos)>,
    ) -> PortPfc {
        upstream.sort_unstable_by_key(|&(l, lat)| (lat, l));
        let group_ends = (1..=upstream.len())
            .filter(|&k| k == upstream.len() || upstream[k].1 != upstream[k - 1].1)
            .map(|k| k as u32)
            .collect();
        PortPfc { xoff, xon, upstream, group_ends, pause: Pauser::new(quanta_ns) }
    }

    /// Frame group `g`: its range of `upstream`, and the latency its frames share.
    fn group(&self, g: usize) -> (std::ops::Range<usize>, Nanos) {
        let start = if g == 0 { 0 } else { self.group_ends[g - 1] as usize };
        (start..self.group_ends[g] as usize, self.upstream[start].1)
    }
}

impl Simulation {
    /// After a packet joined output port `lid`'s queue: PAUSE the ingress links above XOFF.
    pub(crate) fn pfc_after_enqueue(&mut self, lid: LinkId) {
        let link = &mut self.links[lid as usize];
        let q = link.q_bytes;
        let pfc = link.pfc.as_deref_mut().and_then(|p| p.port.as_mut()).expect("pfc port");
        if pfc.pause.asserted || q <= pfc.xoff {
            return;
        }
        pfc.pause.asserted = true;
        self.pause_upstream(lid, true);
        self.pause_arm_refresh(lid);
    }

    /// After a packet left output port `lid`'s queue: XON below the XON threshold.
    pub(crate) fn pfc_after_dequeue(&mut self, lid: LinkId) {
        let link = &mut self.links[lid as usize];
        let q = link.q_bytes;
        let pfc = link.pfc.as_deref_mut().and_then(|p| p.port.as_mut()).expect("pfc port");
        if !pfc.pause.asserted || q >= pfc.xon {
            return;
        }
        pfc.pause.asserted = false;
        self.pause_upstream(lid, false);
    }

    /// The PAUSE source keyed by link `lid`: its ingress port (ingress accounting) or its
    /// output port (egress accounting).
    fn pauser(&mut self, lid: LinkId) -> &mut Pauser {
        let pfc = self.links[lid as usize].pfc.as_deref_mut().expect("a PFC link");
        match pfc.ingress.as_mut() {
            Some(port) => &mut port.pause,
            None => &mut pfc.port.as_mut().expect("pfc port").pause,
        }
    }

    /// Send PAUSE (`on`) or XON from the source keyed by `lid`.
    fn pause_upstream(&mut self, lid: LinkId, on: bool) {
        if self.links[lid as usize].pfc.as_deref().is_some_and(|p| p.ingress.is_some()) {
            self.ingress_send(lid, on)
        } else {
            self.pfc_send(lid, on)
        }
    }

    fn pause_arm_refresh(&mut self, lid: LinkId) {
        let now = self.now;
        let p = self.pauser(lid);
        if p.refresh_pending {
            return;
        }
        p.refresh_pending = true;
        let t = now + (p.quanta_ns / 2).max(1);
        self.push(t, EvKind::PfcRefresh, lid);
    }

    /// Re-send PAUSE every half quantum while it is in force, so it never lapses.
    #[inline(never)]
    pub(crate) fn on_pfc_refresh(&mut self, lid: LinkId) {
        let p = self.pauser(lid);
        p.refresh_pending = false;
        if p.asserted {
            self.pause_upstream(lid, true);
            self.pause_arm_refresh(lid);
        }
    }

    /// Send PAUSE (`on`) or XON to every ingress link of output port `lid`. The frames that
    /// land at one instant are one event (a ToR port's twenty host links: one, not twenty),
    /// which delivers them in the order of their links, as one event each would be run; a
    /// frame's landing touches only the link it reaches.
    fn pfc_send(&mut self, lid: LinkId, on: bool) {
        let now = self.now;
        let kind = if on { EvKind::PauseOn } else { EvKind::PauseOff };
        let link = &mut self.links[lid as usize];
        let pfc = link.pfc.as_deref().and_then(|p| p.port.as_ref()).expect("pfc port");
        let n = pfc.upstream.len();
        link.stats.pause_frames += n as u64;
        self.pause_frames_total += n as u64;
        let groups = pfc.group_ends.len();
        for g in 0..groups {
            let (members, lat) = self.egress_port(lid).group(g);
            if members.len() > 1 && lid <= MAX_GROUP_PORT && groups <= MAX_GROUPS {
                self.push(now + lat, kind, FRAME_GROUP | (g as u32) << GROUP_SHIFT | lid);
            } else {
                for k in members {
                    let up = self.egress_port(lid).upstream[k].0;
                    self.push(now + lat, kind, up);
                }
            }
        }
    }

    /// Output port `lid`'s egress PAUSE state.
    fn egress_port(&self, lid: LinkId) -> &PortPfc {
        self.links[lid as usize].pfc.as_deref().and_then(|p| p.port.as_ref()).expect("pfc port")
    }

    /// A `PauseOn`/`PauseOff` event: one frame reaching link `id`, or (`FRAME_GROUP`) a group
    /// of frames an output port sent together, each delivered in its links' order.
    #[inline(never)]
    pub(crate) fn on_pause_event(&mut self, id: u32, on: bool) {
        if id & FRAME_GROUP == 0 {
            return self.on_pause(id, on);
        }
        let lid = id & MAX_GROUP_PORT;
        let g = ((id & !FRAME_GROUP) >> GROUP_SHIFT) as usize;
        let (members, _) = self.egress_port(lid).group(g);
        for k in members {
            let up = self.egress_port(lid).upstream[k].0;
            self.on_pause(up, on);
        }
    }

    /// Ingress accounting: may a packet of `wire` bytes that came in on link `from` be buffered?
    /// If so it is charged to the port (and the pool); if not, the caller drops it.
    pub(crate) fn ingress_admit(&mut self, from: LinkId, wire: u32) -> bool {
        let port = self.links[from as usize]
            .pfc
            .as_deref_mut()
            .and_then(|p| p.ingress.as_mut())
            .expect("ingress port");
        let after = port.bytes + wire as u64;
        if after > port.xoff + port.headroom {
            port.drops_headroom += 1;
            return false;
        }
        let need = port.shared(after) - port.shared(port.bytes);
        if self.pool.bytes + need > self.pool.limit {
            port.drops_pool += 1;
            return false;
        }
        self.pool.bytes += need;
        port.bytes = after;
        port.max_bytes = port.max_bytes.max(after);
        true
    }

    /// After a packet from link `from` joined an output queue: PAUSE that link above XOFF.
    pub(crate) fn ingress_after_enqueue(&mut self, from: LinkId) {
        let port = self.links[from as usize]
            .pfc
            .as_deref_mut()
            .and_then(|p| p.ingress.as_mut())
            .expect("ingress port");
        if port.pause.asserted || port.bytes <= port.xoff {
            return;
        }
        port.pause.asserted = true;
        self.ingress_send(from, true);
        self.pause_arm_refresh(from);
    }

    /// A packet of `wire` bytes that came in on link `from` left its output queue.
    pub(crate) fn ingress_release(&mut self, from: LinkId, wire: u32) {
        let port = self.links[from as usize]
            .pfc
            .as_deref_mut()
            .and_then(|p| p.ingress.as_mut())
            .expect("ingress port");
        let after = port.bytes - wire as u64;
        self.pool.bytes -= port.shared(port.bytes) - port.shared(after);
        port.bytes = after;
        if port.pause.asserted && after < port.xon {
            port.pause.asserted = false;
            self.ingress_send(from, false);
        }
    }

    /// Send PAUSE (`on`) or XON to the transmitter of link `from`.
    fn ingress_send(&mut self, from: LinkId, on: bool) {
        let lat = self.links[from as usize]
            .pfc
            .as_deref()
            .and_then(|p| p.ingress.as_ref())
            .expect("ingress port")
            .latency;
        self.pause_frames_total += 1;
        self.push(self.now + lat, if on { EvKind::PauseOn } else { EvKind::PauseOff }, from);
    }

    /// A PAUSE frame reaches link `lid`'s transmitter.
    #[inline(never)]
    pub(crate) fn on_pause(&mut self, lid: LinkId, on: bool) {
        let now = self.now;
        let link = &mut self.links[lid as usize];
        link.stats.pause_frames += 1;
        if link.pfc.as_deref().is_some_and(|p| p.ignores_pause) {
            return;
        }
        if on {
            link.paused_until = now + link.pfc.as_deref().map_or(0, |p| p.pause_quanta_ns);
            let t = link.paused_until;
            // A pending expiry check is at or before the new expiry (each was armed at an
            // earlier PAUSE's, all of one duration): it re-arms itself there when it runs. So a
            // link paused, released and paused again many times within one pause duration
            // schedules one check per duration, not one per PAUSE.
            match link.pfc.as_deref_mut() {
                Some(pfc) if pfc.expiry_pending => {}
                Some(pfc) => {
                    pfc.expiry_pending = true;
                    self.push(t, EvKind::Resume, lid);
                }
                None => self.push(t, EvKind::Resume, lid),
            }
        } else {
            link.paused_until = now;
            self.on_resume(lid);
        }
    }

    /// A pause's expiry check (the `Resume` event): if a later PAUSE extended the pause, check
    /// again at the expiry now in force; else restart the transmitter if the pause is over. (A
    /// host NIC's PAUSE, which holds until its XON, sets no expiry to wait for.)
    #[inline(never)]
    pub(crate) fn on_pause_expiry(&mut self, lid: LinkId) {
        let now = self.now;
        let link = &mut self.links[lid as usize];
        let until = link.paused_until;
        if let Some(pfc) = link.pfc.as_deref_mut() {
            // Still paused by a PAUSE that extended the pause: the check stays pending, later.
            pfc.expiry_pending = until > now && until != Nanos::MAX;
            if pfc.expiry_pending {
                self.push(until, EvKind::Resume, lid);
                return;
            }
        }
        self.on_resume(lid);
    }

    /// A pause may have ended: restart the transmitter if it has work.
    #[inline(never)]
    pub(crate) fn on_resume(&mut self, lid: LinkId) {
        let link = &self.links[lid as usize];
        if link.in_tx.is_none() && link.paused_until <= self.now && !link.queue.is_empty() {
            self.next_tx(lid);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::Link;
    use crate::test_support::incast_flows;

    const XOFF: u64 = 64_000;
    const XON: u64 = 32_000;
    /// 1 GbE, 10 µs per host link: 2 × 1250 B on the wire + 2 × 1538 B frames + the PAUSE frame.
    const HEADROOM: u64 = 2 * 1250 + 2 * 1538 + 64;

    /// A 1 GbE cut-through star, `workers` hosts, ingress-accounted PFC; `extra` is spliced into
    /// the topology, `flows` is the flows array's contents. No clock skew or jitter: nothing
    /// hides the mechanism.
    fn star(workers: u32, extra: &str, flows: &str) -> Simulation {
        Simulation::from_json(&format!(
            r#"{{"seed":5,"duration_ns":400000000,"sample_interval_ns":10000000,
                "topology":{{"kind":"star","workers":{workers},"rate_bps":1000000000,"delay_ns":10000,
                  "forwarding":"cut-through","clock_ppm":0,"host_jitter_ns":0,"lossless":true,
                  "pfc":{{"xoff_bytes":{XOFF},"xon_bytes":{XON},"accounting":"ingress"{extra}}}}},
                "flows":[{flows}]}}"#
        ))
        .unwrap()
    }

    fn ports(sim: &Simulation) -> impl Iterator<Item = (&Link, &IngressPort)> {
        sim.links
            .iter()
            .filter_map(|l| l.pfc.as_deref().and_then(|p| p.ingress.as_ref()).map(|p| (l, p)))
    }

    /// Run to the end in 20 µs steps, checking after each that the buffer's books balance: the
    /// bytes charged to the ingress ports are exactly the bytes waiting in the output queues,
    /// and the pool holds each port's part up to XOFF.
    fn run_checking_the_books(sim: &mut Simulation) {
        let mut t = 0;
        while !sim.run_until(t) {
            let charged: u64 = ports(sim).map(|(_, p)| p.bytes).sum();
            let queued: u64 =
                sim.links.iter().filter(|l| l.ingress_acct()).map(|l| l.q_bytes).sum();
            assert_eq!(
                charged, queued,
                "t = {t} ns: ingress ports hold {charged} B, output queues {queued} B"
            );
            let shared: u64 = ports(sim).map(|(_, p)| p.bytes.min(p.xoff)).sum();
            assert_eq!(sim.pool.bytes, shared, "t = {t} ns: pool");
            t += 20_000;
        }
        sim.check_conservation().unwrap();
    }

    #[test]
    fn default_headroom_is_the_pause_round_trip() {
        let sim = star(2, "", r#"{"cc":"cubic"}"#);
        assert!(ports(&sim).all(|(_, p)| p.headroom == HEADROOM));
    }

    #[test]
    fn incast_40_to_1_conserves_bytes_and_drops_nothing_while_headroom_suffices() {
        for cc in ["cubic", "bbr1"] {
            let flows = (0..40)
                .map(|i| format!(r#"{{"cc":"{cc}","start_ns":{}}}"#, i * 1000))
                .collect::<Vec<_>>()
                .join(",");
            let mut sim = star(40, "", &flows);
            run_checking_the_books(&mut sim);
            let r = sim.results();
            assert_eq!(
                r.drops, 0,
                "{cc}: the headroom covers the PAUSE round trip, so nothing may be dropped"
            );
            assert!(r.pause_frames > 0, "{cc}: a 40-to-1 incast must cross XOFF somewhere");
            for (_, p) in ports(&sim) {
                assert!(
                    p.max_bytes <= XOFF + HEADROOM,
                    "{cc}: a port held {} B > XOFF + headroom",
                    p.max_bytes
                );
            }
            // The aggregator's port stays busy: ≥ 90 % of the 941.5 Mbit/s goodput ceiling.
            let total: f64 = r.flows.get("goodput_bps").unwrap().as_f64().unwrap().iter().sum();
            assert!(total > 0.9 * 941.5e6, "{cc}: aggregate goodput {total}");
        }
    }

    #[test]
    fn a_headroom_shorter_than_the_round_trip_drops() {
        // One frame of headroom cannot hold what is on the wire when the PAUSE lands.
        let flows = incast_flows(8);
        let mut sim = star(8, r#","headroom_bytes":1538"#, &flows);
        run_checking_the_books(&mut sim);
        let dropped: u64 = ports(&sim).map(|(_, p)| p.drops_headroom).sum();
        assert!(dropped > 0 && sim.results().drops == dropped);
    }

    #[test]
    fn pause_goes_only_to_the_port_over_xoff() {
        // Worker 0 keeps a bulk transfer backlogged; worker 1 sends 20 KB transfers (never more
        // than 14 frames in the buffer, below XOFF). Both feed the aggregator's port.
        let mut sim = star(
            2,
            "",
            r#"{"cc":"cubic","sender":0},{"cc":"cubic","sender":1,"bytes":20000,"count":5,"start_ns":50000000}"#,
        );
        run_checking_the_books(&mut sim);
        let (bulk, small) = (sim.flows[0].data_path.first(), sim.flows[1].data_path.first());
        let port = |l: LinkId| {
            sim.links[l as usize].pfc.as_deref().and_then(|p| p.ingress.as_ref()).unwrap()
        };
        assert!(port(bulk).max_bytes > XOFF, "the bulk sender's port must cross XOFF");
        assert!(sim.links[bulk as usize].stats.pause_frames > 0);
        assert!(
            port(small).max_bytes <= XOFF,
            "the small transfers stay below XOFF ({})",
            port(small).max_bytes
        );
        assert_eq!(
            sim.links[small as usize].stats.pause_frames, 0,
            "a port below XOFF is never paused"
        );
        // And in general: only links whose port crossed XOFF ever received a PAUSE.
        for (l, p) in ports(&sim) {
            assert!(l.stats.pause_frames == 0 || p.max_bytes > XOFF);
        }
    }

    /// Egress accounting: the aggregator's port pauses its 20 host links with frames that land
    /// at one instant, one event a send; each link still counts the frames it received, and a
    /// link paused and released many times within one pause duration has its expiry checked
    /// about once a duration, not once a PAUSE.
    #[test]
    fn a_ports_frames_to_its_host_links_land_as_one_event() {
        let flows = incast_flows(20);
        let mut sim = Simulation::from_json(&format!(
            r#"{{"seed":5,"duration_ns":300000000,"sample_interval_ns":10000000,
                "topology":{{"kind":"star","workers":20,"rate_bps":1000000000,"delay_ns":10000,
                  "forwarding":"cut-through","clock_ppm":0,"host_jitter_ns":0,"lossless":true,
                  "pfc":{{"xoff_bytes":{XOFF},"xon_bytes":{XON},"accounting":"egress"}}}},
                "flows":[{flows}]}}"#
        ))
        .unwrap();
        while !sim.run_until(sim.end_ns) {}
        let nics = sim.links.iter().filter(|l| {
            l.pfc.as_deref().is_some_and(|p| p.pause_quanta_ns > 0 && p.port.is_none())
        });
        let received: u64 = nics.map(|l| l.stats.pause_frames).sum();
        let ev = |k: EvKind| sim.events_by_kind[k as usize];
        let landings = ev(EvKind::PauseOn) + ev(EvKind::PauseOff);
        assert!(received > 1000, "a 20-to-1 incast pauses the host links often ({received})");
        // Frames still on their way at the end are counted as sent only.
        assert!(received <= sim.pause_frames_total && received + 40 >= sim.pause_frames_total);
        assert!(
            landings * 20 <= received + 40,
            "{landings} landing events for {received} frames: one per send, 20 frames each"
        );
        let durations = sim.end_ns.div_ceil(quanta_ns_of(&sim)) + 1;
        assert!(
            ev(EvKind::Resume) <= 21 * durations,
            "{} expiry checks over 21 links and {durations} pause durations",
            ev(EvKind::Resume)
        );
    }

    fn quanta_ns_of(sim: &Simulation) -> Nanos {
        sim.links.iter().filter_map(|l| l.pfc.as_deref()).map(|p| p.pause_quanta_ns).max().unwrap()
    }

    #[test]
    fn a_nic_that_ignores_pause_overruns_the_headroom() {
        let flows = incast_flows(8);
        let mut honours = star(8, "", &flows);
        run_checking_the_books(&mut honours);
        let mut ignores = star(8, r#","nic_honours_pause":false"#, &flows);
        run_checking_the_books(&mut ignores);
        assert_eq!(honours.results().drops, 0);
        assert!(ignores.results().drops > 0, "with PAUSE ignored the ingress ports must overflow");
    }

    #[test]
    fn a_shared_pool_exhausted_below_xoff_drops() {
        // 8 ports × 64 KB of XOFF cannot all fit in a 100 KB pool: drops come from the pool.
        let flows = incast_flows(8);
        let mut sim = Simulation::from_json(&format!(
            r#"{{"seed":5,"duration_ns":300000000,"sample_interval_ns":10000000,
                "topology":{{"kind":"star","workers":8,"rate_bps":1000000000,"delay_ns":10000,"clock_ppm":0,
                  "host_jitter_ns":0,"lossless":true,"shared_buffer_bytes":100000,
                  "pfc":{{"xoff_bytes":{XOFF},"xon_bytes":{XON},"accounting":"ingress"}}}},
                "flows":[{flows}]}}"#
        ))
        .unwrap();
        run_checking_the_books(&mut sim);
        assert!(sim.pool.bytes <= 100_000);
        assert!(ports(&sim).map(|(_, p)| p.drops_pool).sum::<u64>() > 0);
    }
}

#[cfg(test)]
mod dynamic_threshold_tests {
    use crate::test_support::{incast_flows, run_to_end};

    /// Max bytes the aggregator's port held in a lossy incast through a shared pool with `alpha`.
    fn max_queue(alpha: f64, pool: u64) -> u64 {
        let flows = incast_flows(10);
        let r = run_to_end(&format!(
            r#"{{"seed":5,"duration_ns":300000000,"sample_interval_ns":10000000,
                "topology":{{"kind":"star","workers":10,"rate_bps":1000000000,"delay_ns":10000,
                  "buffer_bytes":10000000,"shared_buffer_bytes":{pool},"shared_buffer_alpha":{alpha}}},
                "flows":[{flows}]}}"#
        ));
        assert!(r.drops > 0, "the threshold must bind");
        let code = r.queue_labels.iter().position(|l| l == "tor_to_agg").unwrap();
        let codes = r.queue.get("queue_code").unwrap().as_codes().unwrap();
        let max = r.queue.get("max_occupancy_bytes").unwrap().as_i64().unwrap();
        codes.iter().zip(max).filter(|(&c, _)| c == code).map(|(_, &m)| m as u64).max().unwrap()
    }

    #[test]
    fn one_congested_queue_gets_alpha_over_one_plus_alpha_of_the_pool() {
        // Admit while q < alpha · (B − q): the queue settles at alpha / (1 + alpha) · B, give or
        // take the packet that crosses it.
        let pool = 300_000u64;
        for alpha in [0.5, 1.0, 2.0] {
            let want = alpha / (1.0 + alpha) * pool as f64;
            let got = max_queue(alpha, pool) as f64;
            assert!(
                got <= want + 1538.0 && got >= want - 2.0 * 1538.0,
                "alpha {alpha}: max queue {got} vs {want}"
            );
        }
    }
}
