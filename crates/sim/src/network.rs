//! Links at work: enqueueing (drop-tail, shared buffer, ECN step marking, RED, PFC), the
//! serializer, propagation, and arrival at a router or a host.

use crate::link::queue::Verdict;
use crate::*;

impl Simulation {
    /// Hand a packet to a link's egress: random loss, its queue discipline's stages
    /// (`link/queue/`), the shared buffer, PFC's ingress accounting, then queue or send.
    pub(crate) fn enqueue(&mut self, lid: LinkId, mut p: Packet) {
        let now = self.now;
        if self.links[lid as usize].fast.passive {
            // Nothing to decide or record: the packet's times follow from the serializer's.
            let link = &mut self.links[lid as usize];
            let dt = link.tx_time_ns(p.wire_bytes);
            let arrive = link.ser.pass(now, dt) + link.delay_ns;
            if link.fast.fold {
                self.fold_into_next(arrive, p);
            } else {
                self.into_pipe(lid, arrive, p, p.hop + 1);
            }
            return;
        }
        // An ingress-accounted switch port charges the packet to the port it came in on.
        let ingress_from =
            if self.links[lid as usize].ingress_acct() { Some(self.came_in_on(&p)) } else { None };
        let link = &mut self.links[lid as usize];
        if link.fast.timestamped {
            // The queue as it is now: starts and departures since the last packet.
            link.replay(now, self.metrics.last_sample_ns);
        }
        if link.loss > 0.0 && link.rng.next_f64() < link.loss {
            link.stats.random_losses += 1;
            if p.is_data {
                self.flows[p.flow as usize].data_dropped += 1;
            }
            return;
        }
        let idle = link.is_idle(now);
        if !link.qdisc.is_empty() {
            // The arrival stage (RED) sees every arrival, also those that find the link idle.
            let idle_ns = if idle { now.saturating_sub(link.idle_since_ns).max(1) } else { 0 };
            match link.qdisc.on_arrival(link.occupancy(), idle_ns, &p, &mut link.rng) {
                Verdict::Accept => {}
                Verdict::Mark => {
                    p.ce = true;
                    link.stats.ce_marks += 1;
                }
                Verdict::Drop => {
                    count_drop(link, &mut self.flows, &p);
                    return;
                }
            }
        }
        if idle && link.paused_until <= now {
            // Idle link: start serializing at once; nothing waits.
            link.note_occupancy(now);
            self.start_tx(lid, p);
            return;
        }
        if let Some(from) = ingress_from {
            if !self.ingress_admit(from, p.wire_bytes) {
                count_drop(&mut self.links[lid as usize], &mut self.flows, &p);
                return;
            }
        }
        let link = &mut self.links[lid as usize];
        let q = link.occupancy();
        // The admission stage: the discipline's buffer (drop-tail), then the switch's shared
        // buffer. (Ingress accounting replaces both: `pfc.rs`.)
        if ingress_from.is_none()
            && (!link.qdisc.admits(q, p.wire_bytes)
                || (link.in_pool && !self.pool.admits(link.q_bytes, p.wire_bytes)))
        {
            count_drop(link, &mut self.flows, &p);
            return;
        }
        // The enqueue stage (step marking).
        if link.qdisc.on_enqueue(q, &p) == Verdict::Mark {
            p.ce = true;
            link.stats.ce_marks += 1;
        }
        link.note_occupancy(now);
        link.count_queued(p.wire_bytes);
        if link.in_pool {
            self.pool.bytes += p.wire_bytes as u64;
        }
        if link.fast.timestamped {
            self.start_tx(lid, p); // its start and departure times are fixed now
            return;
        }
        link.queue.push_back(p);
        if link.pfc.as_deref().is_some_and(|p| p.port.is_some()) {
            self.pfc_after_enqueue(lid);
        }
        if let Some(from) = ingress_from {
            self.ingress_after_enqueue(from);
        }
    }

    /// The link that brought packet `p` to the switch whose output port it is entering.
    #[inline]
    fn came_in_on(&self, p: &Packet) -> LinkId {
        let f = &self.flows[p.flow as usize];
        let path = if p.is_data { &f.data_path } else { &f.ack_path };
        path.links[p.hop as usize - 1]
    }

    /// Start serializing `p` on link `lid` (idle, not paused). A link into a cut-through switch
    /// hands the packet over once its header has arrived (`topology.rs`), so it enters the
    /// propagation pipe now rather than when its last bit leaves.
    #[inline]
    pub(crate) fn start_tx(&mut self, lid: LinkId, p: Packet) {
        let now = self.now;
        let link = &mut self.links[lid as usize];
        let dt = link.tx_time_ns(p.wire_bytes);
        if link.fast.timestamped {
            // Straight into the pipe at its arrival time; no TxDone (`serializer.rs`).
            let arrive = link.ser.accept(now, dt, p.wire_bytes).done_ns + link.delay_ns;
            if link.fast.fold {
                self.fold_into_next(arrive, p);
            } else {
                self.into_pipe(lid, arrive, p, p.hop + 1);
            }
            return;
        }
        link.in_tx = Some(p);
        link.tx_start_ns = now;
        let ct = link.cut_through_bytes;
        let early = if ct > 0 {
            let hdr =
                (ct.min(p.wire_bytes) as u128 * 8 * 1_000_000_000 / link.rate_bps as u128) as Nanos;
            let arrive = link.arrival_time(now + hdr);
            let was_empty = link.pipe.is_empty();
            link.pipe_push(arrive, p, p.hop + 1);
            was_empty.then_some(arrive)
        } else {
            None
        };
        self.push(now + dt, EvKind::TxDone, lid);
        if let Some(t) = early {
            self.push(t, EvKind::Arrive, lid);
        }
    }

    /// Put `p` in link `lid`'s propagation pipe, to arrive at `arrive` with its hop advanced to
    /// `next_hop` (`Link::pipe_push`); the pipe's head has the link's only `Arrive` event.
    #[inline(always)]
    pub(crate) fn into_pipe(&mut self, lid: LinkId, arrive: Nanos, p: Packet, next_hop: u8) {
        let link = &mut self.links[lid as usize];
        if link.fast.ahead != crate::speedup::ahead::Ahead::No {
            self.enter_ahead_pipe(lid, arrive, p, next_hop);
            return;
        }
        let was_empty = link.pipe.is_empty();
        link.pipe_push(arrive, p, next_hop);
        if was_empty {
            let kind = link.pipe_event();
            self.push(arrive, kind, lid);
        }
    }

    /// Take the head of link `lid`'s pipe, whose event (`kind`: `Link::pipe_event`) is being
    /// handled, and schedule the next head's.
    #[inline(always)]
    fn pipe_pop(&mut self, lid: LinkId, kind: EvKind) -> Packet {
        let link = &mut self.links[lid as usize];
        debug_assert!(kind == link.pipe_event());
        let (_, p) = link.pipe.pop_front().expect("a pipe head");
        if let Some(&(t, _)) = link.pipe.front() {
            self.push(t, kind, lid);
        }
        p
    }

    /// Start the next queued packet on link `lid`, if any (the link is idle and not paused).
    #[inline]
    pub(crate) fn next_tx(&mut self, lid: LinkId) {
        let now = self.now;
        let link = &mut self.links[lid as usize];
        if let Some(next) = link.queue.pop_front() {
            link.note_occupancy(now);
            link.q_bytes -= next.wire_bytes as u64;
            if link.in_pool {
                self.pool.bytes -= next.wire_bytes as u64;
            }
            let has_pfc = link.pfc.as_deref().is_some_and(|p| p.port.is_some());
            let release = if link.ingress_acct() {
                Some((self.came_in_on(&next), next.wire_bytes))
            } else {
                None
            };
            self.start_tx(lid, next);
            if has_pfc {
                self.pfc_after_dequeue(lid);
            }
            if let Some((from, bytes)) = release {
                self.ingress_release(from, bytes);
            }
        } else {
            link.idle_since_ns = now;
        }
    }

    pub(crate) fn on_tx_done(&mut self, lid: LinkId) {
        if self.links[lid as usize].fast.ahead == crate::speedup::ahead::Ahead::Nic {
            self.on_nic_ahead_departure(lid, self.now);
            return;
        }
        if self.links[lid as usize].fast.timestamped {
            self.on_nic_departure(lid);
            return;
        }
        let now = self.now;
        let link = &mut self.links[lid as usize];
        let p = link.in_tx.take().expect("tx in progress");
        link.stats.tx_bytes += p.wire_bytes as u64;
        link.stats.busy_ns_interval += now - link.tx_start_ns.max(self.metrics.last_sample_ns);
        let arrive = if link.jitter_ns > 0 { link.arrival_time(now) } else { now + link.delay_ns };
        // Cut-through links put the packet in the pipe when it started (`start_tx`).
        let store_fwd = link.cut_through_bytes == 0;
        // A zero-delay hop with nothing ahead in its pipe: the packet is at the far end the
        // moment its last bit leaves, so it is handed over below without an Arrive event.
        let at_once = store_fwd && arrive == now && link.pipe.is_empty();
        let was_empty = store_fwd && !at_once && link.pipe.is_empty();
        if store_fwd && !at_once {
            link.pipe_push(arrive, p, p.hop + 1);
        }
        if link.paused_until <= now {
            self.next_tx(lid);
        }
        let is_nic = self.links[lid as usize].is_sender_nic;
        if was_empty {
            self.push(arrive, EvKind::Arrive, lid);
        }
        if is_nic && p.is_data {
            self.on_nic_data_departure(&p);
        }
        if at_once {
            // After the flow's TSQ pump, as the Arrive event of the same instant would run.
            let mut p = p;
            p.hop += 1; // (as `pipe_push` would have)
            self.hand_over(lid, p);
        }
    }

    /// The head of a timestamped sender NIC's pipe leaves (it has no propagation delay, so it
    /// is at the router now): as `on_tx_done` with a zero-delay hop — the next departure is
    /// scheduled, TSQ runs, then the packet is handed on.
    fn on_nic_departure(&mut self, lid: LinkId) {
        let p = self.pipe_pop(lid, EvKind::TxDone);
        if p.is_data {
            self.on_nic_data_departure(&p);
        }
        self.hand_over(lid, p);
    }

    /// TSQ: a data packet's departure from its sender's NIC lets a throttled flow queue more
    /// (with the host model, once the skb it belongs to has left whole).
    pub(crate) fn on_nic_data_departure(&mut self, p: &Packet) {
        let now = self.now;
        let f = p.flow as usize;
        let flow = &mut self.flows[f];
        if let Some(g) = flow.gaps.as_deref_mut() {
            g.on_departure(now);
        }
        let freed = if self.hosts.is_some() {
            let head = flow.tx_skbs.front_mut().expect("a departing segment belongs to an skb");
            head.0 -= 1;
            if head.0 == 0 {
                flow.tx_skbs.pop_front().map(|(_, b)| b)
            } else {
                None
            }
        } else {
            Some(p.wire_bytes as u64)
        };
        if let Some(b) = freed {
            flow.nic_bytes -= b;
            if flow.tsq_throttled {
                #[cfg(test)]
                {
                    self.tsq_wakeups += 1;
                }
                self.pump(f);
            }
        }
    }

    pub(crate) fn on_arrive(&mut self, lid: LinkId) {
        if self.links[lid as usize].fast.ahead != crate::speedup::ahead::Ahead::No {
            self.on_ahead_arrive(lid, self.now);
            return;
        }
        let p = self.pipe_pop(lid, EvKind::Arrive);
        self.hand_over(lid, p);
    }

    /// Packet `p` has reached the far end of link `lid`: a router forwards it along its path
    /// (`p.hop` already names the next link: `Link::pipe_push`), a host hands it to the flow's
    /// endpoint.
    pub(crate) fn hand_over(&mut self, lid: LinkId, p: Packet) {
        let to = self.links[lid as usize].to;
        match to {
            NodeKind::Router => {
                let f = &self.flows[p.flow as usize];
                let next = if p.is_data {
                    f.data_path.links[p.hop as usize]
                } else {
                    f.ack_path.links[p.hop as usize]
                };
                self.enqueue(next, p);
            }
            NodeKind::Host => {
                if self.hosts.is_some() {
                    self.host_receive(p, lid)
                } else if p.is_data {
                    self.deliver_data(p)
                } else {
                    self.deliver_ack(p)
                }
            }
        }
    }
}

/// A packet dropped at `link`'s queue (overflow or RED): the link counts it; a data packet also
/// counts at its flow, and at a sender NIC gives back the flow's TSQ budget.
fn count_drop(link: &mut Link, flows: &mut [Flow], p: &Packet) {
    link.stats.drops += 1;
    if p.is_data {
        let flow = &mut flows[p.flow as usize];
        flow.data_dropped += 1;
        if link.is_sender_nic {
            flow.nic_bytes -= p.wire_bytes as u64;
            // (Host model) the segment just queued is the newest skb's last: it will not leave.
            if let Some(b) = flow.tx_skbs.back_mut() {
                b.0 -= 1;
                b.1 -= p.wire_bytes as u64;
                if b.0 == 0 {
                    flow.tx_skbs.pop_back();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 1 Gbit/s, 10 ms dumbbell with a 100 kB buffer; `extra` is spliced into the bottleneck.
    fn dumbbell(flows: &str, extra: &str) -> Simulation {
        dumbbell_buffer(flows, r#"{"bytes":100000}"#, extra)
    }

    fn dumbbell_buffer(flows: &str, buffer: &str, extra: &str) -> Simulation {
        Simulation::from_json(&format!(
            r#"{{"seed":3,"duration_ns":2000000000,"sample_interval_ns":10000000,
                "topology":{{"kind":"dumbbell","bottleneck":{{"rate_bps":1000000000,"rtt_ns":10000000,
                "buffer":{buffer}{extra}}}}},"flows":[{flows}]}}"#
        ))
        .unwrap()
    }

    fn data(wire_bytes: u32) -> Packet {
        Packet { is_data: true, wire_bytes, ..Packet::empty(0) }
    }

    #[test]
    fn a_timestamped_link_delivers_in_order_at_departure_plus_delay() {
        let mut sim = dumbbell(r#"{"cc":"cubic"}"#, "");
        let nic = sim.flows[0].data_path.first();
        let bn = sim.flows[0].data_path.links[1];
        // A sender NIC without propagation delay is timestamped too, but never folds: each of
        // its departures is an event, which TSQ sees.
        assert!(sim.links[nic as usize].fast.timestamped && !sim.links[nic as usize].fast.fold);
        assert!(sim.links[bn as usize].fast.timestamped);
        // The bottleneck folds into the receiver's access link (`fold_into_next`); here its own
        // pipe is under test.
        assert!(sim.links[bn as usize].fast.fold);
        sim.links[bn as usize].fast.fold = false;
        // Three 1500-byte packets at t = 0 serialize back to back, 12 µs each at 1 Gbit/s.
        for _ in 0..3 {
            sim.enqueue(bn, data(1500));
        }
        let link = &sim.links[bn as usize];
        let arrivals: Vec<Nanos> = link.pipe.iter().map(|&(t, _)| t).collect();
        assert_eq!(arrivals, vec![12_000 + 5_000_000, 24_000 + 5_000_000, 36_000 + 5_000_000]);
        assert_eq!((link.q_bytes, link.waiting_pkts()), (3000, 2));
        // Only the pipe's head has an event: the arrival of the first packet.
        assert_eq!(
            sim.heap
                .iter()
                .map(|k| EventKey(k).event())
                .filter(|e| e.kind == EvKind::Arrive && e.id == bn)
                .count(),
            1
        );
        // At 20 µs the first has left, the second serializes since 12 µs and the third waits;
        // the queue is replayed on read.
        sim.now = 20_000;
        sim.links[bn as usize].replay(20_000, 0);
        let link = &sim.links[bn as usize];
        assert_eq!((link.q_bytes, link.waiting_pkts(), link.stats.tx_bytes), (1500, 1, 1500));
        assert_eq!(link.serving_since(), Some(12_000));
        // At 36 µs all three have left; the link is idle from then on.
        sim.links[bn as usize].replay(36_000, 0);
        let link = &sim.links[bn as usize];
        assert_eq!((link.q_bytes, link.waiting_pkts(), link.stats.tx_bytes), (0, 0, 4500));
        assert!(link.is_idle(36_000) && link.serving_since().is_none());
    }

    #[test]
    fn a_timestamped_link_drops_at_its_tail_and_conserves_packets() {
        let mut sim = dumbbell(r#"{"cc":"cubic"}"#, "");
        let bn = sim.flows[0].data_path.links[1];
        sim.links[bn as usize].fast.fold = false;
        // One packet serializes at once; 66 × 1500 B fit in the 100 kB buffer behind it.
        for _ in 0..100 {
            sim.enqueue(bn, data(1500));
        }
        let link = &sim.links[bn as usize];
        assert_eq!((link.stats.drops, link.pipe.len(), link.q_bytes), (33, 67, 66 * 1500));
        assert_eq!(sim.flows[0].data_dropped, 33);
    }

    /// Run `sim` to its end with its links timestamped and folded as built, or not; returns the
    /// result tables (as text), the events and the data packets delivered.
    fn run_with(mut sim: Simulation, timestamped: bool, fold: bool) -> (String, u64, u64) {
        assert!(
            sim.links.iter().any(|l| l.fast.fold),
            "the dumbbell folds its receivers' access links"
        );
        if !timestamped {
            // (Nothing is served ahead either: that needs passive, timestamped links.)
            sim.links.iter_mut().for_each(|l| {
                (l.fast.timestamped, l.fast.passive, l.fast.ahead) =
                    (false, false, crate::speedup::ahead::Ahead::No)
            });
            sim.rx_ahead_on = false;
        }
        if !fold {
            sim.links.iter_mut().for_each(|l| l.fast.fold = false);
        }
        sim.run_until(u64::MAX);
        sim.check_conservation().unwrap();
        let r = sim.results();
        (
            format!("{:?} {:?} {:?}", r.flows, r.timeseries, r.queue),
            r.events,
            r.data_packets_delivered,
        )
    }

    /// The whole run three ways — every link event-driven; timestamped links; timestamped links
    /// with folded router hops (the default) — the same packets at the same times, so the same
    /// result tables (ties at one nanosecond aside, which these scenarios do not have).
    fn same_results_both_ways(flows: &str, buffer: &str, extra: &str) {
        let run = |timestamped: bool, fold: bool| {
            run_with(dumbbell_buffer(flows, buffer, extra), timestamped, fold)
        };
        let (lean, unfolded, slow) = (run(true, true), run(true, false), run(false, false));
        assert!(lean.2 > 10_000, "the scenario moves data");
        // (The event-driven run still hands zero-delay NIC hops on without an Arrive.)
        assert!(unfolded.1 < slow.1 * 8 / 10, "fewer events: {} vs {}", unfolded.1, slow.1);
        // A folded hop saves the router's Arrive: one per data packet and one per ACK.
        assert!(lean.1 < unfolded.1 * 3 / 4, "fewer events folded: {} vs {}", lean.1, unfolded.1);
        assert!(unfolded.0 == slow.0, "result tables differ (timestamped links)");
        assert!(lean.0 == unfolded.0, "result tables differ (folded hops)");
    }

    const BYTES_100K: &str = r#"{"bytes":100000}"#;

    /// Linux's `tcp_wfree` runs the sender again on a TX completion only if TSQ throttled it: a
    /// cwnd-limited flow behind a fast access link is driven by its ACKs, not by its NIC's
    /// departures; a flow whose own NIC is the bottleneck is throttled, and its departures must
    /// keep it going (no stall: it fills the link).
    #[test]
    fn nic_departures_run_only_a_throttled_sender() {
        let ceiling = 1e9 * 1448.0 / 1538.0;
        let goodput = |sim: &Simulation| -> f64 {
            sim.results().flows.get("goodput_bps").unwrap().as_f64().unwrap()[0]
        };
        let mut fast_nic = dumbbell_buffer(r#"{"cc":"cubic"}"#, r#"{"bytes":1000000}"#, "");
        fast_nic.run_until(u64::MAX);
        let packets = fast_nic.data_packets_delivered;
        assert!(packets > 100_000, "{packets}");
        assert!(
            fast_nic.tsq_wakeups * 100 < packets,
            "{} wake-ups for {packets} packets",
            fast_nic.tsq_wakeups
        );
        assert!(goodput(&fast_nic) > 0.9 * ceiling);
        for cc in ["cubic", "bbr1"] {
            let mut nic_bound = Simulation::from_json(&format!(
                r#"{{"seed":3,"duration_ns":2000000000,"sample_interval_ns":10000000,
                    "topology":{{"kind":"dumbbell","access_rate_bps":1000000000,"bottleneck":{{"rate_bps":1000000000,
                    "rtt_ns":10000000,"buffer":{{"bytes":1000000}}}}}},"flows":[{{"cc":"{cc}"}}]}}"#
            ))
            .unwrap();
            nic_bound.run_until(u64::MAX);
            assert!(
                nic_bound.tsq_wakeups > 1_000,
                "{cc}: the NIC drives the throttled sender: {}",
                nic_bound.tsq_wakeups
            );
            assert!(goodput(&nic_bound) > 0.9 * ceiling, "{cc}: {}", goodput(&nic_bound));
        }
    }

    /// A timestamped sender NIC (its departures are its pipe's events) against an event-driven
    /// one: the same packets at the same times — flows TSQ throttles (the NIC is the
    /// bottleneck), paced and unpaced ones, losses, the host model's skb accounting.
    #[test]
    fn timestamped_sender_nics_change_no_result() {
        let scenarios = [
            // NIC-bound: TSQ throttles both flows, their departures drive them.
            r#"{"seed":3,"duration_ns":1000000000,"sample_interval_ns":10000000,
                "topology":{"kind":"dumbbell","access_rate_bps":1000000000,"bottleneck":{"rate_bps":1000000000,
                "rtt_ns":10000000,"buffer":{"bytes":1000000}}},"flows":[{"cc":"cubic"},{"cc":"bbr1","start_ns":200000000}]}"#,
            // Fast NICs, paced and unpaced flows, random loss.
            r#"{"seed":4,"duration_ns":1000000000,"sample_interval_ns":10000000,
                "topology":{"kind":"dumbbell","bottleneck":{"rate_bps":1000000000,"rtt_ns":20000000,
                "buffer":{"bytes":200000},"loss":0.001}},"flows":[{"cc":"bbr3"},{"cc":"cubic"},{"cc":"reno","start_ns":300000000}]}"#,
            // The host model: a departure frees TSQ budget once its whole skb has left.
            r#"{"seed":2,"duration_ns":500000000,"sample_interval_ns":100000000,
                "topology":{"kind":"dumbbell","bottleneck":{"rate_bps":10000000000,"rtt_ns":200000,"buffer":{"bytes":400000},
                "ecn_threshold_bytes":60000}},
                "flows":[{"cc":"bbr2","ecn":true},{"cc":"dctcp","ecn":true},{"cc":"cubic","start_ns":100000000}],"hosts":{}}"#,
        ];
        for (i, json) in scenarios.into_iter().enumerate() {
            let run = |nic_timestamped: bool| {
                let mut sim = Simulation::from_json(json).unwrap();
                let nics: Vec<usize> =
                    (0..sim.links.len()).filter(|&l| sim.links[l].is_sender_nic).collect();
                assert!(
                    !nics.is_empty() && nics.iter().all(|&l| sim.links[l].fast.timestamped),
                    "sender NICs are timestamped"
                );
                if !nic_timestamped {
                    nics.iter().for_each(|&l| {
                        let link = &mut sim.links[l];
                        (link.fast.timestamped, link.fast.passive, link.fast.ahead) =
                            (false, false, crate::speedup::ahead::Ahead::No);
                    });
                }
                sim.run_until(u64::MAX);
                sim.check_conservation().unwrap();
                let r = sim.results();
                (
                    format!("{:?} {:?} {:?}", r.flows, r.timeseries, r.queue),
                    r.events,
                    r.data_packets_delivered,
                    sim.tsq_wakeups,
                )
            };
            let (stamped, driven) = (run(true), run(false));
            assert!(stamped.2 > 20_000, "the scenario moves data: {}", stamped.2);
            assert!(stamped.0 == driven.0, "result tables differ: {json}");
            assert_eq!(
                (stamped.1, stamped.3),
                (driven.1, driven.3),
                "events and TSQ wake-ups: {json}"
            );
            if i == 0 {
                assert!(
                    stamped.3 > 1_000,
                    "the NIC-bound flows are woken by departures: {}",
                    stamped.3
                );
            }
        }
    }

    /// Folding changes no result also where events tie at one nanosecond: access links as fast
    /// as the bottleneck (the wan-loss study's host-NIC bottleneck) put a packet's arrival at
    /// the receiver at the very instant the next one reaches the router, in every round trip.
    #[test]
    fn folded_hops_change_no_result_when_events_tie() {
        for (cc, loss) in [("bbr1", 0.0), ("bbr1", 0.015), ("cubic", 0.0)] {
            let json = format!(
                r#"{{"seed":1,"duration_ns":1000000000,"sample_interval_ns":100000000,
                    "topology":{{"kind":"dumbbell","access_rate_bps":2500000000,
                    "bottleneck":{{"rate_bps":2500000000,"rtt_ns":10000000,"buffer":{{"packets":1000}},"loss":{loss}}}}},
                    "flows":[{{"cc":"{cc}","rcvbuf_bytes":6291456}}]}}"#
            );
            folding_changes_nothing(&json, &format!("{cc}, loss {loss}"));
        }
    }

    /// The scenario `json` run folded and unfolded: fewer events, the same result tables.
    fn folding_changes_nothing(json: &str, what: &str) {
        let run = |fold: bool| run_with(Simulation::from_json(json).unwrap(), true, fold);
        let (folded, unfolded) = (run(true), run(false));
        assert!(folded.2 > 50_000, "{what}: the scenario moves data");
        assert!(folded.1 < unfolded.1, "{what}: fewer events folded");
        assert!(folded.0 == unfolded.0, "{what}: result tables differ");
    }

    /// ... and with the host model, whose receive rings and GRO sit at the folded link's far end.
    #[test]
    fn folded_hops_change_no_result_with_hosts() {
        folding_changes_nothing(
            r#"{"seed":2,"duration_ns":500000000,"sample_interval_ns":100000000,
                "topology":{"kind":"dumbbell","bottleneck":{"rate_bps":10000000000,"rtt_ns":200000,"buffer":{"bytes":400000},
                "ecn_threshold_bytes":60000}},
                "flows":[{"cc":"bbr2","ecn":true},{"cc":"dctcp","ecn":true},{"cc":"cubic","start_ns":100000000}],"hosts":{}}"#,
            "hosts",
        );
    }

    #[test]
    fn timestamped_links_change_no_result_drop_tail() {
        same_results_both_ways(
            r#"{"cc":"cubic"},{"cc":"bbr1","start_ns":300000000}"#,
            BYTES_100K,
            r#","loss":0.0001"#,
        );
        // A buffer in packets counts the packets waiting, which a timestamped link replays.
        same_results_both_ways(
            r#"{"cc":"cubic"},{"cc":"cubic","start_ns":100000000}"#,
            r#"{"packets":40}"#,
            "",
        );
    }

    #[test]
    fn timestamped_links_change_no_result_ecn_and_red() {
        let dctcp = r#"{"cc":"dctcp","ecn":true},{"cc":"dctcp","ecn":true}"#;
        same_results_both_ways(dctcp, BYTES_100K, r#","ecn_threshold_bytes":30000"#);
        same_results_both_ways(dctcp, r#"{"packets":200}"#, r#","ecn_threshold_packets":20"#);
        same_results_both_ways(
            r#"{"cc":"cubic","ecn":true},{"cc":"reno"}"#,
            BYTES_100K,
            r#","red":{"min_th_bytes":20000,"max_th_bytes":60000,"max_p":0.1,"weight":0.002}"#,
        );
    }
}
