//! Arrivals served ahead of the event loop: a packet's arrival at the far end of a link costs
//! no event when nothing can tell the difference.
//!
//! A packet entering a timestamped link has its arrival time `t` fixed at that moment, often
//! milliseconds ahead (a folded bottleneck hands it on when it accepts it). Its arrival is one
//! event whose handler touches a few known things. That handler can run now, with the clock
//! set to `t`, and change nothing, as long as nothing that runs between now and `t` reads or
//! writes what it touches. Two kinds of link qualify (`Ahead`):
//!
//! **Into a receiver host** (`Ahead::Receiver`): the arrival touches the flow's receiver and
//! the host's NIC, where the ACK goes. In between must not run:
//! - the host's other arrivals: they come over the same link, a FIFO, so they are served in
//!   their order — a packet is served ahead only when every packet before it in the link's
//!   pipe has been (`enter_ahead_pipe` serves the pipe first);
//! - the host's receivers' timers: a timer due before `t` may send an ACK into the same NIC
//!   before this packet's ACK, so `t` must not pass the earliest deadline any receiver has
//!   now (`rx_deadline_allows`); a deadline at `t` itself runs after the arrival, as its
//!   event kind orders them.
//!
//! **Into a router, onto a watched link it alone feeds** (`Ahead::Router`): the arrival
//! enqueues the packet on the next link, which decides (drops, marks) and is reported in the
//! queue table, so it cannot be folded (`Link::fold`); but only this link feeds it, in FIFO
//! order, and only the per-interval sample and the run's end read it. A receiver host's NIC
//! into the reverse bottleneck is one: its ACKs then cost one event, at their sender.
//!
//! For both: no sample before `t` (it reads receivers' delivered bytes and watched queues; an
//! arrival at the sample's instant is counted in it, as its kind comes first), nor the time
//! the caller of `advance` asked for (it may read the state then), nor the run's end.
//!
//! Senders are not served ahead: a sender's timers, its NIC's departures (TSQ) and its ACKs
//! interleave at every instant. Sender timers do not matter here: what a sender sends after
//! now reaches these links behind what is already in them.
//!
//! A packet past the horizon waits in the pipe as before, with an `Arrive` event for the
//! pipe's head; the next packet that enters the link once the horizon has moved (after the
//! sample, the timer) serves it and everything behind it. An event whose packet was served
//! ahead in the meantime finds the pipe empty, or a later head, for which it re-arms (its
//! `Arrive` key is the one the head would have had: the same order).
//!
//! Where it applies (`set_ahead`): no host model (receive rings and CPUs order a host's work),
//! no ICTCP (one controller sees every arrival), no applications, RPC workloads or non-TCP
//! sources (their transfers start and answer as data arrives; a ping's echo leaves by the
//! receiver's NIC). A receiver host's link carries only data, is
//! timestamped and is the last link of the flows that use it; the NIC their ACKs leave by is
//! timestamped, carries only those flows' ACKs and is the first link of their ACK paths. A
//! router link is passive, not a sender's NIC, and feeds one timestamped link that no other
//! feeds.
//!
//! The receiver's links need not be passive (a graph's links decide and are reported): the
//! link into the host decided on the packet when it accepted it, before it is served ahead,
//! and its queue's statistics come from its serializer, not its pipe; the ACK NIC that an
//! ACK served ahead enters at `t` is replayed to `t` (`Link::replay`), and nothing else
//! enters it or reads it before `t` (its one receiver host's timers are the horizon, the
//! samples too), so its drops, marks, random draws and statistics are those of the ACK's
//! own time.
//! A port that sends PAUSE takes no packet ahead of its time (`Link::takes_packets_ahead`,
//! `timed.rs`).
//! `serving_ahead_changes_nothing` checks the result tables against event-driven arrivals,
//! with samples, delayed-ACK timers, losses on both bottlenecks and ECN.

use crate::link::{LinkId, NodeKind};
use crate::speedup::fold::{LinkNeighbours, MANY, NONE};
use crate::{EvKind, Simulation};
use cc::Nanos;
use transport::Packet;

/// Receivers are served ahead only in runs of at most this many flows: the earliest receiver
/// deadline is found by a scan of the flows (`rx_deadline_allows`), and with thousands of
/// flows setting and clearing delayed-ACK deadlines the scans cost more than the events saved
/// (10⁵ flows: 14.5 → ~60 s).
const RX_AHEAD_MAX_FLOWS: usize = 64;

/// Whether a link's arrivals may be served ahead of the event loop, and what serving one does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ahead {
    No,
    /// A timestamped link into a receiver host: the receiver takes the data packet.
    Receiver,
    /// A passive link into a router, onto a watched link only it feeds: that link takes it.
    Router,
    /// A sender's NIC (no delay) that one flow uses and that alone feeds its next link: that
    /// link takes the packet at its departure; TSQ counts the departure when it next looks
    /// (`Flow::nic_departures`), and only a throttled flow gets its departures as events.
    Nic,
}

impl Simulation {
    /// Flag the links whose arrivals may be served ahead (see the module header); called once
    /// the flows and folds are set.
    pub(crate) fn set_ahead(&mut self) {
        self.rx_ahead_on = false;
        for l in &mut self.links {
            l.fast.ahead = Ahead::No;
        }
        if self.hosts.is_some()
            || self.ictcp.is_some()
            || !self.apps.is_empty()
            || !self.traffic.is_empty()
            || !self.workloads.is_empty()
            || self.flows.iter().any(|f| f.rpc.is_some() || f.app.is_some())
        {
            return;
        }
        let Some(receivers) = self.receiver_links() else {
            return;
        };
        for (link, ok) in self.links.iter_mut().zip(&receivers) {
            if *ok {
                link.fast.ahead = Ahead::Receiver;
                self.rx_ahead_on = true;
            }
        }
        let neighbours = self.link_neighbours();
        self.set_router_links_ahead(&receivers, &neighbours);
        self.set_nic_links_ahead(&neighbours);
    }

    /// Per link, whether it is a timestamped link into a receiver host whose arrivals may be
    /// served ahead; None when some flow has no path (then nothing is served ahead).
    fn receiver_links(&self) -> Option<Vec<bool>> {
        let n = self.links.len();
        // Per link: it ends some data path; it is anywhere else in any path; the link into the
        // receiver host whose ACKs it carries first (NONE: none yet, MANY: several).
        let mut ends_data = vec![false; n];
        let mut elsewhere = vec![false; n];
        let mut ack_nic_of = vec![NONE; n];
        for f in &self.flows {
            let (d, a) = (&f.data_path, &f.ack_path);
            let (dl, al) = (d.len as usize, a.len as usize);
            if dl == 0 || al == 0 {
                return None;
            }
            for (i, &l) in d.links[..dl].iter().enumerate() {
                if i + 1 == dl {
                    ends_data[l as usize] = true;
                } else {
                    elsewhere[l as usize] = true;
                }
            }
            for &l in &a.links[1..al] {
                elsewhere[l as usize] = true;
            }
            let (nic, rx_link) = (a.links[0] as usize, d.links[dl - 1]);
            ack_nic_of[nic] = match ack_nic_of[nic] {
                NONE => rx_link,
                x if x == rx_link => x,
                _ => MANY,
            };
        }
        let mut ok = vec![false; n];
        for (l, link) in self.links.iter().enumerate() {
            ok[l] = self.flows.len() <= RX_AHEAD_MAX_FLOWS
                && ends_data[l]
                && !elsewhere[l]
                && link.fast.timestamped
                && link.to == NodeKind::Host;
        }
        // Every flow into such a link must leave by an ACK NIC that serves only that link's
        // host, is timestamped and nothing else uses.
        for f in &self.flows {
            let rx_link = f.data_path.links[f.data_path.len as usize - 1] as usize;
            let nic = f.ack_path.links[0] as usize;
            if ack_nic_of[nic] != rx_link as u32
                || elsewhere[nic]
                || ends_data[nic]
                || !self.links[nic].fast.timestamped
                || !self.links[nic].takes_packets_ahead()
            {
                ok[rx_link] = false;
            }
        }
        Some(ok)
    }

    /// Router links: a passive link (not a sender's NIC, whose departures TSQ sees) whose every
    /// next link is one timestamped, unfolded-into link it alone feeds.
    fn set_router_links_ahead(&mut self, receivers: &[bool], neighbours: &LinkNeighbours) {
        let LinkNeighbours { feeder, next: next_of } = neighbours;
        for a in 0..self.links.len() {
            let b = next_of[a];
            if b == NONE || b == MANY || receivers[a] {
                continue;
            }
            let (la, lb) = (&self.links[a], &self.links[b as usize]);
            if la.fast.passive
                && !la.fast.fold
                && !la.is_sender_nic
                && !la.fast.lazy_tsq
                && la.to == NodeKind::Router
                && lb.fast.timestamped
                && !lb.fast.passive
                && lb.takes_packets_ahead()
                && feeder[b as usize] == a as u32
            {
                self.links[a].fast.ahead = Ahead::Router;
            }
        }
    }

    /// Sender NICs: timestamped (no delay), passive, the first link of one flow's data path and
    /// of nothing else, feeding one timestamped link alone. (Not with a gap histogram, which
    /// reads each departure as it happens.)
    fn set_nic_links_ahead(&mut self, neighbours: &LinkNeighbours) {
        let LinkNeighbours { feeder, next: next_of } = neighbours;
        let n = self.links.len();
        let mut nic_flow = vec![NONE; n];
        let mut used_else = vec![false; n];
        for (fi, f) in self.flows.iter().enumerate() {
            let d = &f.data_path;
            nic_flow[d.links[0] as usize] = match nic_flow[d.links[0] as usize] {
                NONE if f.gaps.is_none() => fi as u32,
                _ => MANY,
            };
            for &l in d.links[1..d.len as usize]
                .iter()
                .chain(&f.ack_path.links[..f.ack_path.len as usize])
            {
                used_else[l as usize] = true;
            }
        }
        for a in 0..n {
            let (fi, b) = (nic_flow[a], next_of[a]);
            if fi == NONE || fi == MANY || used_else[a] || b == NONE || b == MANY {
                continue;
            }
            let (la, lb) = (&self.links[a], &self.links[b as usize]);
            if la.is_sender_nic
                && la.fast.timestamped
                && la.fast.passive
                && !la.fast.fold
                && lb.fast.timestamped
                && lb.takes_packets_ahead()
                && feeder[b as usize] == a as u32
            {
                self.links[a].fast.ahead = Ahead::Nic;
                self.links[a].fast.nic_flow = fi;
            }
        }
    }

    /// Whether an arrival at `t` on link `lid` may be served now (see the module header).
    #[inline]
    fn may_serve_at(&mut self, lid: LinkId, t: Nanos) -> bool {
        t <= self.limit_ns.min(self.next_sample_ns)
            && (self.links[lid as usize].fast.ahead != Ahead::Receiver
                || self.rx_deadline_allows(t))
    }

    /// No receiver has a deadline before `t`. `rx_min_lb` is a lower bound of the receivers'
    /// deadlines (exact when `rx_min_exact`), lowered as deadlines are set: a deadline is set
    /// and cleared around most segments, and a heap of them cost more than the event this
    /// saves. When `t` passes the bound, the deadlines are looked at again (every delayed-ACK
    /// interval or so).
    #[inline]
    fn rx_deadline_allows(&mut self, t: Nanos) -> bool {
        if t <= self.rx_min_lb {
            return true;
        }
        if self.rx_min_exact {
            return false;
        }
        self.rx_min_lb = self.flows.iter().map(|f| f.rx_deadline).min().unwrap_or(Nanos::MAX);
        self.rx_min_exact = true;
        t <= self.rx_min_lb
    }

    /// `Simulation::enter_pipe` for a link served ahead (`Link::ahead`): serve what waits in the
    /// pipe and then `p`, arriving at `t` with its hop advanced to `next_hop`, at once if the
    /// horizon allows; queue the rest in the pipe.
    pub(crate) fn enter_ahead_pipe(&mut self, lid: LinkId, t: Nanos, mut p: Packet, next_hop: u8) {
        loop {
            let head = self.links[lid as usize].pipe.front().map(|&(tq, _)| tq);
            if !self.may_serve_at(lid, head.unwrap_or(t)) {
                break;
            }
            match head {
                Some(tq) => {
                    let (_, q) = self.links[lid as usize].pipe.pop_front().expect("a pipe head");
                    self.arrive_at(lid, tq, q);
                }
                None => {
                    p.hop = next_hop;
                    self.arrive_at(lid, t, p);
                    return;
                }
            }
        }
        let link = &mut self.links[lid as usize];
        link.pipe_push(t, p, next_hop);
        if link.fast.ahead == Ahead::Nic {
            self.arm_nic(lid);
        } else if !link.fast.pipe_armed {
            link.fast.pipe_armed = true;
            self.push(t, EvKind::Arrive, lid);
        }
    }

    /// The `Arrive` event at `t` of a link served ahead: its pipe's head arrives, unless it was
    /// served ahead (the pipe is empty, or its head is later: re-arm for it).
    pub(crate) fn on_ahead_arrive(&mut self, lid: LinkId, t: Nanos) {
        let link = &mut self.links[lid as usize];
        match link.pipe.front() {
            None => link.fast.pipe_armed = false,
            Some(&(head, _)) if head > t => self.push(head, EvKind::Arrive, lid),
            Some(_) => {
                let (_, p) = link.pipe.pop_front().expect("a pipe head");
                match link.pipe.front() {
                    Some(&(next, _)) => self.push(next, EvKind::Arrive, lid),
                    None => link.fast.pipe_armed = false,
                }
                self.hand_over(lid, p);
            }
        }
    }

    /// Packet `p` reaches the far end of link `lid` at `t`: hand it over as its arrival event
    /// would (a NIC's: as its departure would, TSQ's count aside). Inlined into its two call
    /// sites: the graph merge's growth elsewhere left it an out-of-line call that cost 29 M
    /// instructions (+2.6 %) of bench (a).
    #[inline(always)]
    fn arrive_at(&mut self, lid: LinkId, t: Nanos, p: Packet) {
        if self.links[lid as usize].fast.ahead == Ahead::Nic {
            self.flows[p.flow as usize].nic_departures.push_back((t, p.wire_bytes as u64));
        }
        let now = std::mem::replace(&mut self.now, t);
        self.hand_over(lid, p);
        self.now = now;
    }

    /// TSQ's view of flow `fi`'s NIC at `t`: the departures served ahead that have happened by
    /// `t` leave its count (as their departure events did). Returns whether any did.
    #[inline]
    pub(crate) fn count_nic_departures(&mut self, fi: usize, t: Nanos) -> bool {
        let flow = &mut self.flows[fi];
        let mut any = false;
        while let Some(&(d, bytes)) = flow.nic_departures.front() {
            if d > t {
                break;
            }
            flow.nic_departures.pop_front();
            flow.nic_bytes -= bytes;
            any = true;
        }
        any
    }

    /// Make sure an `Ahead::Nic` link has a `TxDone` event at its next departure that needs
    /// one: its pipe's head (a packet held back by the horizon), or, while its flow is
    /// throttled, the next departure served ahead (TSQ runs the flow then). Events made
    /// needless by an earlier one lapse (`nic_armed_at`).
    pub(crate) fn arm_nic(&mut self, lid: LinkId) {
        let link = &self.links[lid as usize];
        let flow = &self.flows[link.fast.nic_flow as usize];
        // (A lazily counted NIC's pipe holds arrivals, which have their own events.)
        let mut next = if link.fast.lazy_tsq {
            Nanos::MAX
        } else {
            link.pipe.front().map_or(Nanos::MAX, |&(t, _)| t)
        };
        if flow.tsq_throttled {
            if let Some(&(d, _)) = flow.nic_departures.front() {
                next = next.min(d);
            }
        }
        if next < link.fast.nic_armed_at {
            self.links[lid as usize].fast.nic_armed_at = next;
            self.push(next, EvKind::TxDone, lid);
        }
    }

    /// The `TxDone` event at `t` of an `Ahead::Nic` link: what departs at `t` — a packet held
    /// in the pipe (handed on, TSQ as in `on_nic_departure`), or one served ahead (TSQ runs a
    /// throttled flow, as its departure event did) — then the next event. A lazily counted
    /// NIC's (`speedup/nic.rs`) is the second kind only.
    pub(crate) fn on_nic_ahead_departure(&mut self, lid: LinkId, t: Nanos) {
        if self.links[lid as usize].fast.nic_armed_at != t {
            return; // made needless by an earlier event
        }
        self.links[lid as usize].fast.nic_armed_at = Nanos::MAX;
        let fi = self.links[lid as usize].fast.nic_flow as usize;
        let counted = self.count_nic_departures(fi, t);
        let link = &mut self.links[lid as usize];
        if link.pipe.front().is_some_and(|&(h, _)| h == t) && !link.fast.lazy_tsq {
            let (_, p) = link.pipe.pop_front().expect("a pipe head");
            // Handed on before TSQ runs the flow (`on_nic_departure` does it the other way
            // round; the two are independent): what the flow sends now may be served ahead,
            // and must reach the next link behind this packet.
            self.hand_over(lid, p);
            self.on_nic_data_departure(&p);
        } else if counted && self.flows[fi].tsq_throttled {
            #[cfg(test)]
            {
                self.tsq_wakeups += 1;
            }
            self.pump(fi);
        }
        self.arm_nic(lid);
    }

    /// Flow `fi`'s receiver's next deadline is `deadline` (it may have changed): keep the
    /// bound `rx_deadline_allows` reads.
    #[inline]
    pub(crate) fn note_rx_deadline(&mut self, fi: usize, deadline: Option<Nanos>) {
        let d = deadline.unwrap_or(Nanos::MAX);
        let old = std::mem::replace(&mut self.flows[fi].rx_deadline, d);
        if d < self.rx_min_lb {
            self.rx_min_lb = d;
        } else if d > old && old == self.rx_min_lb {
            // The earliest deadline moved later or went: the bound may now be below the minimum.
            self.rx_min_exact = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::speedup::tests::{
        assert_saves_events, run_outcome, sped_up_changes_nothing, Outcome,
    };

    fn kinds(sim: &Simulation, k: Ahead) -> usize {
        sim.links.iter().filter(|l| l.fast.ahead == k).count()
    }

    /// Run `json` to its end in steps of `step_ns` (u64::MAX: at once), serving arrivals ahead
    /// or not.
    fn run(json: &str, early: bool, step_ns: Nanos) -> Outcome {
        let mut sim = Simulation::from_json(json).unwrap();
        assert!(
            sim.rx_ahead_on && kinds(&sim, Ahead::Receiver) == 1,
            "the scenario serves its receivers ahead"
        );
        assert_eq!(
            kinds(&sim, Ahead::Router),
            1,
            "and its receiver's NIC's ACKs onto the reverse bottleneck"
        );
        if !early {
            sim.rx_ahead_on = false;
            sim.links.iter_mut().for_each(|l| {
                if l.fast.ahead == Ahead::Nic {
                    l.fast.nic_flow = crate::speedup::NO_FLOW;
                }
                l.fast.ahead = Ahead::No;
            });
        }
        let mut t: Nanos = 0;
        while !sim.run_until(t) {
            t = t.saturating_add(step_ns);
        }
        run_outcome(&mut sim)
    }

    /// Serving arrivals ahead changes no result, and saves an event per data packet and one per
    /// ACK served: samples every 10 ms (their boundaries hold packets back), random loss of data
    /// and of ACKs (the reverse bottleneck draws in arrival order), delayed ACKs whose timers fire
    /// (short transfers, a receive-window-limited flow, an application that reads late), SACK
    /// recovery, DCTCP's pending ACKs, BBR's pacing; run at once and in slices of 7 ms (the
    /// caller's horizon).
    #[test]
    fn serving_ahead_changes_nothing() {
        let scenarios = [
            r#"{"seed":5,"duration_ns":1000000000,"sample_interval_ns":10000000,
                "topology":{"kind":"dumbbell","bottleneck":{"rate_bps":200000000,"rtt_ns":20000000,
                "buffer":{"bytes":150000},"loss":0.005,"ack_loss":0.01}},
                "flows":[{"cc":"cubic"},{"cc":"bbr1","start_ns":50000000},{"cc":"reno","bytes":300000,"start_ns":20000000},
                         {"cc":"cubic","rcvbuf_bytes":30000,"extra_rtt_ns":3000000},
                         {"cc":"bbr3","app_read_delay_ns":2000000,"start_ns":100000000}]}"#,
            r#"{"seed":6,"duration_ns":300000000,"sample_interval_ns":10000000,
                "topology":{"kind":"dumbbell","bottleneck":{"rate_bps":10000000000,"rtt_ns":200000,
                "buffer":{"bytes":400000},"ecn_threshold_bytes":60000}},
                "flows":[{"cc":"dctcp","ecn":true},{"cc":"bbr2","ecn":true},{"cc":"dctcp","ecn":true,"bytes":70001,"start_ns":5000000,"count":3}]}"#,
        ];
        for json in scenarios {
            let at_once = |early| run(json, early, u64::MAX);
            let (ahead, event_driven) = sped_up_changes_nothing(at_once, 10_000, json);
            // Most arrivals served ahead.
            assert_saves_events(&ahead, &event_driven, (2, 3));
            let sliced = run(json, true, 7_000_000);
            assert!(sliced.0 == ahead.0, "result tables differ when run in slices: {json}");
        }
    }

    /// A flow alone on its NIC, which alone feeds the bottleneck: its departures are served
    /// ahead too, and TSQ counts them late, with events only while the flow is throttled (the
    /// NIC as fast as the bottleneck: TSQ throttles it all the time). The same tables and the
    /// same TSQ wake-ups as event-driven departures; run at once and in slices.
    #[test]
    fn serving_nic_departures_ahead_changes_nothing() {
        let scenarios = [
            (
                r#"{"seed":7,"duration_ns":800000000,"sample_interval_ns":10000000,
                "topology":{"kind":"dumbbell","access_rate_bps":1000000000,"bottleneck":{"rate_bps":1000000000,"rtt_ns":10000000,
                "buffer":{"bytes":1000000},"loss":0.0005}},"flows":[{"cc":"cubic"}]}"#,
                true,
            ),
            (
                r#"{"seed":8,"duration_ns":800000000,"sample_interval_ns":10000000,
                "topology":{"kind":"dumbbell","access_rate_bps":1000000000,"bottleneck":{"rate_bps":1000000000,"rtt_ns":20000000,
                "buffer":{"bytes":500000},"loss":0.001,"ack_loss":0.01}},"flows":[{"cc":"bbr3"}]}"#,
                true,
            ),
            (
                r#"{"seed":9,"duration_ns":800000000,"sample_interval_ns":10000000,
                "topology":{"kind":"dumbbell","bottleneck":{"rate_bps":300000000,"rtt_ns":30000000,
                "buffer":{"bytes":300000},"loss":0.002}},"flows":[{"cc":"bbr1","bytes":40000000}]}"#,
                false,
            ),
        ];
        for (json, throttled) in scenarios {
            let sim = Simulation::from_json(json).unwrap();
            assert_eq!(kinds(&sim, Ahead::Nic), 1, "the flow's NIC is served ahead");
            let at_once = |early| run(json, early, u64::MAX);
            let (ahead, event_driven) = sped_up_changes_nothing(at_once, 10_000, json);
            assert_eq!(ahead.3, event_driven.3, "TSQ wake-ups");
            assert_eq!(ahead.3 > 1_000, throttled, "TSQ wake-ups: {}", ahead.3);
            assert!(
                ahead.1 * 2 < event_driven.1,
                "fewer events: {} vs {}",
                ahead.1,
                event_driven.1
            );
            let sliced = run(json, true, 7_000_000);
            assert!(
                sliced.0 == ahead.0 && sliced.3 == ahead.3,
                "results differ when run in slices: {json}"
            );
        }
    }

    /// Where serving ahead would reorder what a host does, it is off: the host model, ICTCP,
    /// and a link into a host that also carries ACKs.
    #[test]
    fn serving_ahead_is_off_where_it_would_reorder() {
        let on = |extra: &str, flow: &str| {
            let json = format!(
                r#"{{"seed":1,"duration_ns":100000000,"topology":{{"kind":"dumbbell","bottleneck":{{"rate_bps":1000000000,
                    "rtt_ns":1000000,"buffer":{{"bytes":100000}}}}}},"flows":[{{"cc":"cubic"{flow}}}]{extra}}}"#
            );
            Simulation::from_json(&json).unwrap().rx_ahead_on
        };
        assert!(on("", ""));
        assert!(!on(r#","hosts":{}"#, ""));
        assert!(!on("", r#","receiver_window":"ictcp""#));
    }
}
