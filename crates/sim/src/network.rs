//! Links at work: enqueueing (drop-tail, shared buffer, ECN step marking, RED, PFC), the
//! serializer, propagation, and arrival at a router or a host.

use crate::*;

impl Simulation {
    /// Hand a packet to a link's egress: random loss, RED, drop-tail, CE marking, then queue or
    /// send.
    pub(crate) fn enqueue(&mut self, lid: LinkId, mut p: Packet) {
        let now = self.now;
        let link = &mut self.links[lid as usize];
        if link.timestamped {
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
        if let Some(red) = link.red.as_deref_mut() {
            // RED sees every arrival, also those that find the link idle.
            let idle_ns = if idle { now.saturating_sub(link.idle_since_ns).max(1) } else { 0 };
            if red.on_arrival(link.q_bytes, idle_ns, &mut link.rng) == red::RedAction::Act {
                if p.ect {
                    p.ce = true;
                    link.stats.ce_marks += 1;
                } else {
                    // An early drop (counted with the overflow drops).
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
        if link.q_bytes + p.wire_bytes as u64 > link.limit_bytes
            || link.queue.len() as u64 + 1 > link.limit_pkts
            || (link.in_pool && self.pool_bytes + p.wire_bytes as u64 > self.pool_limit)
        {
            count_drop(link, &mut self.flows, &p);
            return;
        }
        if p.ect && !p.ce {
            // Step marking (DCTCP): the queue found on arrival exceeds K bytes or K packets.
            let over_bytes = link.ecn_k_bytes.is_some_and(|k| link.q_bytes > k);
            let over_pkts = link.ecn_k_pkts.is_some_and(|k| link.queue.len() as u64 > k);
            if over_bytes || over_pkts {
                p.ce = true;
                link.stats.ce_marks += 1;
            }
        }
        link.note_occupancy(now);
        link.q_bytes += p.wire_bytes as u64;
        if link.q_bytes > link.stats.max_bytes_interval {
            link.stats.max_bytes_interval = link.q_bytes;
        }
        if link.in_pool {
            self.pool_bytes += p.wire_bytes as u64;
        }
        if link.timestamped {
            self.start_tx(lid, p); // its start and departure times are fixed now
            return;
        }
        link.queue.push_back(p);
        if link.pfc.is_some() {
            self.pfc_after_enqueue(lid);
        }
    }

    /// Start serializing `p` on link `lid` (idle, not paused). A link into a cut-through switch
    /// hands the packet over once its header has arrived (`topology.rs`), so it enters the
    /// propagation pipe now rather than when its last bit leaves.
    #[inline]
    pub(crate) fn start_tx(&mut self, lid: LinkId, p: Packet) {
        let now = self.now;
        let link = &mut self.links[lid as usize];
        let dt = link.tx_time_ns(p.wire_bytes);
        if link.timestamped {
            // Straight into the pipe at its arrival time; no TxDone (`serializer.rs`).
            let done = link.ser.accept(now, dt, p.wire_bytes).done_ns;
            let arrive = done + link.delay_ns;
            let was_empty = link.pipe.is_empty();
            link.pipe.push_back((arrive, p));
            if was_empty {
                self.push(arrive, EvKind::Arrive, lid);
            }
            return;
        }
        link.in_tx = Some(p);
        link.tx_start_ns = now;
        let ct = link.cut_through_bytes;
        let early = if ct > 0 {
            let hdr = (ct.min(p.wire_bytes) as u128 * 8 * 1_000_000_000 / link.rate_bps as u128) as Nanos;
            let arrive = link.arrival_time(now + hdr);
            let was_empty = link.pipe.is_empty();
            link.pipe.push_back((arrive, p));
            was_empty.then_some(arrive)
        } else {
            None
        };
        self.push(now + dt, EvKind::TxDone, lid);
        if let Some(t) = early {
            self.push(t, EvKind::Arrive, lid);
        }
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
                self.pool_bytes -= next.wire_bytes as u64;
            }
            let has_pfc = link.pfc.is_some();
            self.start_tx(lid, next);
            if has_pfc {
                self.pfc_after_dequeue(lid);
            }
        } else {
            link.idle_since_ns = now;
        }
    }

    pub(crate) fn on_tx_done(&mut self, lid: LinkId) {
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
            link.pipe.push_back((arrive, p));
        }
        if link.paused_until <= now {
            self.next_tx(lid);
        }
        let is_nic = self.links[lid as usize].is_sender_nic;
        if was_empty {
            self.push(arrive, EvKind::Arrive, lid);
        }
        if is_nic && p.is_data {
            // TSQ: a departure from the NIC lets the flow queue more.
            let f = p.flow as usize;
            self.flows[f].nic_bytes -= p.wire_bytes as u64;
            if let Some(g) = self.flows[f].gaps.as_deref_mut() {
                g.on_departure(now);
            }
            self.pump(f);
        }
        if at_once {
            // After the flow's TSQ pump, as the Arrive event of the same instant would run.
            self.hand_over(lid, p);
        }
    }

    pub(crate) fn on_arrive(&mut self, lid: LinkId) {
        let link = &mut self.links[lid as usize];
        let (_, p) = link.pipe.pop_front().expect("arrival");
        if let Some(&(t, _)) = link.pipe.front() {
            self.push(t, EvKind::Arrive, lid);
        }
        self.hand_over(lid, p);
    }

    /// Packet `p` has reached the far end of link `lid`: a router forwards it along its path,
    /// a host hands it to the flow's endpoint.
    fn hand_over(&mut self, lid: LinkId, mut p: Packet) {
        let to = self.links[lid as usize].to;
        match to {
            NodeKind::Router => {
                p.hop += 1;
                let f = &self.flows[p.flow as usize];
                let next = if p.is_data { f.data_path.links[p.hop as usize] } else { f.ack_path.links[p.hop as usize] };
                self.enqueue(next, p);
            }
            NodeKind::Host => {
                if p.is_data {
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
        }
    }
}
