//! Links at work: enqueueing (drop-tail, shared buffer, ECN step marking, RED, PFC; a path-model
//! discipline in `network/aqm.rs`), the serializer, propagation, and arrival at a router or a
//! host.

mod aqm;

use crate::link::queue::{Occupancy, Verdict};
use crate::link::{Link, LinkId, NodeKind};
use crate::speedup::ahead::Ahead;
use crate::speedup::NO_FLOW;
use crate::{EvKind, Flow, Simulation};
use cc::Nanos;
use transport::{Ecn, Packet};

impl Simulation {
    /// Hand a packet to a link's egress: random loss, its queue discipline's stages
    /// (`link/queue/`), the shared buffer, PFC's ingress accounting, then queue or send.
    ///
    /// The hot path tests one flag per kind of link: a passive link (nothing to decide), a
    /// timestamped one (the native chain on a plain link: no path parts, path-model discipline,
    /// PFC, shared buffer; `Link::can_be_timestamped`), then every other link, out of line.
    #[inline]
    pub(crate) fn enqueue(&mut self, lid: LinkId, p: Packet) {
        let now = self.now;
        let link = &mut self.links[lid as usize];
        if link.fast.passive {
            // Nothing to decide or record: the packet's times follow from the serializer's.
            let dt = link.tx_time_ns(p.wire_bytes);
            let arrive = link.ser.pass(now, dt) + link.delay_ns;
            if link.fast.fold {
                self.fold_into_next(arrive, p);
            } else {
                self.enter_pipe(lid, arrive, p, p.hop + 1);
            }
        } else if link.fast.plain {
            self.enqueue_timestamped(lid, p);
        } else {
            self.enqueue_event_driven(lid, p);
        }
    }

    /// `enqueue` on a timestamped link that is not passive: what the general path does, less
    /// the parts such a link never has (path stages, path-model discipline, ingress accounting,
    /// PFC, shared buffer: `Link::can_be_timestamped`); a packet that is not dropped is
    /// accepted by the serializer at once (`start_timestamped_tx`).
    fn enqueue_timestamped(&mut self, lid: LinkId, mut p: Packet) {
        debug_assert!(self.links[lid as usize].can_be_timestamped());
        if self.admit_timestamped(lid, &mut p).is_none() {
            return;
        }
        // Its start and departure times are fixed now.
        let dt = self.links[lid as usize].tx_time_ns(p.wire_bytes);
        self.start_timestamped_tx(lid, dt, p);
    }

    /// A timestamped (plain or timed) link's queue as `p` finds it (replayed to now), then
    /// random loss and the native chain's stages (which may mark `p`): whether `p` waits (is
    /// counted in the queue), or None if it was dropped. (`p` by reference: moved through the
    /// return value, the packet was copied twice more, +0.45 % instructions at bench (a).)
    #[inline(always)]
    pub(crate) fn admit_timestamped(&mut self, lid: LinkId, p: &mut Packet) -> Option<bool> {
        let now = self.now;
        let last_sample_ns = self.metrics.last_sample_ns;
        let link = &mut self.links[lid as usize];
        // The queue as it is now: starts and departures since the last packet.
        link.replay(now, last_sample_ns);
        let occupancy = Link::timestamped_occupancy;
        if lost_at_random(link, &mut self.flows, p) {
            return None;
        }
        let idle = link.ser.is_idle(now);
        if !pass_arrival_stage(link, &mut self.flows, p, now, idle, occupancy) {
            return None;
        }
        let waits = !(idle && link.paused_until <= now);
        if waits {
            // The packet waits: the admission stage (drop-tail), then the enqueue stage.
            if !qdisc_admits(link, p.wire_bytes, occupancy) {
                count_drop(link, &mut self.flows, p);
                return None;
            }
            join_queue(link, p, now, occupancy);
        } else {
            // Idle link: start serializing at once; nothing waits.
            link.note_occupancy(now);
        }
        Some(waits)
    }

    /// A timestamped link's serializer accepts `p`, `dt` ns long: straight into the pipe at its
    /// arrival time (or folded into the next link); no `TxDone` (`serializer.rs`).
    #[inline(always)]
    fn start_timestamped_tx(&mut self, lid: LinkId, dt: Nanos, p: Packet) {
        let now = self.now;
        let link = &mut self.links[lid as usize];
        let arrive = link.ser.accept(now, dt, p.wire_bytes).done_ns + link.delay_ns;
        if link.fast.fold {
            self.fold_into_next(arrive, p);
        } else {
            self.enter_pipe(lid, arrive, p, p.hop + 1);
        }
    }

    /// `enqueue` on an event-driven link, with every part a link may have.
    #[inline(never)]
    fn enqueue_event_driven(&mut self, lid: LinkId, mut p: Packet) {
        let now = self.now;
        if self.links[lid as usize].fast.lazy_departures {
            self.serve_departures_to(lid, now); // the queue as it is now (`speedup/lazy.rs`)
        }
        if self.links[lid as usize].path.is_some() && !self.path_admit(lid, &p) {
            return; // policed or lost before the queue (`link/path.rs`)
        }
        // An ingress-accounted switch port charges the packet to the port it came in on.
        let ingress_from =
            if self.links[lid as usize].ingress_acct() { Some(self.came_in_on(&p)) } else { None };
        let link = &mut self.links[lid as usize];
        if link.fast.timed {
            self.enqueue_timed(lid, p); // (`speedup/timed.rs`)
            return;
        }
        debug_assert!(!link.fast.timestamped);
        if lost_at_random(link, &mut self.flows, &p) {
            return;
        }
        if link.aqm.is_some() {
            self.aqm_enqueue(lid, p);
            return;
        }
        let idle = link.is_idle(now);
        if !pass_arrival_stage(link, &mut self.flows, &mut p, now, idle, Link::occupancy) {
            return;
        }
        // (Not past packets a pause held: at the instant it ends they start first, before
        // their `Resume` event runs, FIFO.)
        if idle && link.paused_until <= now && link.queue.is_empty() {
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
        // The admission stage: the discipline's buffer (drop-tail), then the switch's shared
        // buffer. (Ingress accounting replaces both: `pfc.rs`.)
        if ingress_from.is_none()
            && (!qdisc_admits(link, p.wire_bytes, Link::occupancy)
                || (link.in_pool && !self.pool.admits(link.q_bytes, p.wire_bytes)))
        {
            count_drop(link, &mut self.flows, &p);
            return;
        }
        // The enqueue stage (step marking).
        join_queue(link, &mut p, now, Link::occupancy);
        if link.in_pool {
            self.pool.bytes += p.wire_bytes as u64;
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
        let dt = if link.path.is_some() {
            link.path_tx_time_ns(now, p.wire_bytes) // a trace or a scheduled rate
        } else {
            link.tx_time_ns(p.wire_bytes)
        };
        if link.fast.timestamped {
            self.start_timestamped_tx(lid, dt, p);
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
    pub(crate) fn enter_pipe(&mut self, lid: LinkId, arrive: Nanos, p: Packet, next_hop: u8) {
        let link = &mut self.links[lid as usize];
        if link.fast.ahead != Ahead::No {
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
        if link.aqm.is_some() {
            self.aqm_next_tx(lid);
            return;
        }
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
        if self.links[lid as usize].fast.nic_flow != NO_FLOW {
            // `Ahead::Nic`, or a lazily counted NIC's throttled flow's wake-up at its next
            // departure (`speedup/nic.rs`).
            self.on_nic_ahead_departure(lid, self.now);
            return;
        }
        if self.links[lid as usize].fast.timed {
            self.on_xon_check(lid); // an egress port's (`speedup/timed.rs`)
            return;
        }
        if self.links[lid as usize].fast.timestamped {
            self.on_nic_departure(lid);
            return;
        }
        if self.links[lid as usize].path.is_some() {
            self.path_tx_done(lid); // into the timing stages (`link/path.rs`)
            return;
        }
        if self.links[lid as usize].fast.lazy_departures {
            self.on_lazy_deadline(lid); // (`speedup/lazy.rs`)
            return;
        }
        self.departure(lid);
    }

    /// The packet serializing on event-driven link `lid` leaves now: into the pipe (or folded
    /// into the next link, or handed over at once over a zero-delay hop), and the next starts.
    pub(crate) fn departure(&mut self, lid: LinkId) {
        let now = self.now;
        let p = self.depart(lid);
        let link = &mut self.links[lid as usize];
        let arrive = if link.jitter_ns > 0 { link.arrival_time(now) } else { now + link.delay_ns };
        if link.fast.fold {
            // A discipline's link (event-driven, `link/aqm.rs`) folding its router hop: its
            // departure, now, fixes when the packet reaches the router (`speedup/fold.rs`).
            if link.paused_until <= now {
                self.next_tx(lid);
            }
            self.fold_into_next(arrive, p);
            return;
        }
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

    /// The last bit of the packet serializing on event-driven link `lid` leaves now: the link
    /// counts it, a capture of the link records it (`capture.rs`), and it is the caller's.
    #[inline(always)]
    pub(crate) fn depart(&mut self, lid: LinkId) -> Packet {
        let now = self.now;
        let link = &mut self.links[lid as usize];
        let p = link.in_tx.take().expect("tx in progress");
        link.stats.tx_bytes += p.wire_bytes as u64;
        link.stats.busy_ns_interval += now - link.tx_start_ns.max(self.metrics.last_sample_ns);
        let tap = link.tap;
        if tap != crate::capture::TAP_SENDER {
            self.capture_departure(tap, &p);
        }
        p
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
        if self.links[lid as usize].fast.ahead != Ahead::No {
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

// The native chain's stages (`link/queue/`), shared by timestamped and event-driven links. They
// differ only in how the queue is measured (`occupancy`: `Link::timestamped_occupancy` or
// `Link::occupancy`), which is asked only when a stage is there (monomorphised: no call).
// `flows` is the Vec, not a slice: a slice argument is loaded (pointer, length) on every packet,
// where the flows are only touched on a drop (+0.1 % instructions at bench (a)).

/// The link's random (Bernoulli) loss: true if `p` is lost there (counted at link and flow).
#[allow(clippy::ptr_arg)] // `flows` the Vec: see above
#[inline(always)]
fn lost_at_random(link: &mut Link, flows: &mut Vec<Flow>, p: &Packet) -> bool {
    let lost = link.loss > 0.0 && link.rng.next_f64() < link.loss;
    if lost {
        link.stats.random_losses += 1;
        if p.is_data {
            flows[p.flow as usize].data_dropped += 1;
        }
    }
    lost
}

/// The arrival stage (RED), which sees every arrival, also those that find the link `idle`:
/// marks `p`, or drops it (false; counted).
#[allow(clippy::ptr_arg)] // `flows` the Vec: see above
#[inline(always)]
fn pass_arrival_stage(
    link: &mut Link,
    flows: &mut Vec<Flow>,
    p: &mut Packet,
    now: Nanos,
    idle: bool,
    occupancy: impl Fn(&Link) -> Occupancy,
) -> bool {
    if !link.qdisc.has_arrival_stage() {
        return true;
    }
    let idle_ns = if idle { now.saturating_sub(link.idle_since_ns).max(1) } else { 0 };
    let q = occupancy(link);
    match link.qdisc.on_arrival(q, idle_ns, p, &mut link.rng) {
        Verdict::Accept => {}
        Verdict::Mark => {
            p.ecn = Ecn::Ce;
            link.stats.ce_marks += 1;
        }
        Verdict::Drop => {
            link.stats.drops_aqm += 1;
            count_drop(link, flows, p);
            return false;
        }
    }
    true
}

/// The admission stage (drop-tail): room for `wire_bytes` more in the discipline's buffer.
#[inline(always)]
fn qdisc_admits(link: &Link, wire_bytes: u32, occupancy: impl Fn(&Link) -> Occupancy) -> bool {
    !link.qdisc.has_admission_stage() || link.qdisc.admits(occupancy(link), wire_bytes)
}

/// An admitted `p` joins the queue at `now`: the enqueue stage (step marking), then the queue
/// counts it.
#[inline(always)]
fn join_queue(link: &mut Link, p: &mut Packet, now: Nanos, occupancy: impl Fn(&Link) -> Occupancy) {
    if link.qdisc.has_enqueue_stage() && link.qdisc.on_enqueue(occupancy(link), p) == Verdict::Mark
    {
        p.ecn = Ecn::Ce;
        link.stats.ce_marks += 1;
    }
    link.note_occupancy(now);
    link.count_queued(p.wire_bytes);
}

/// A packet dropped at `link`'s queue (overflow, RED, a discipline's choice): the link counts it;
/// a data packet also counts at its flow, and at a sender NIC gives back the flow's TSQ budget.
pub(crate) fn count_drop(link: &mut Link, flows: &mut [Flow], p: &Packet) {
    link.stats.drops += 1;
    if p.is_data {
        let flow = &mut flows[p.flow as usize];
        flow.data_dropped += 1;
        if link.is_sender_nic || link.fast.lazy_tsq {
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
