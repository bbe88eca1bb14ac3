//! A link that changes (issue 30): the path model's mechanisms (`pathmodel::impair`) at work
//! on the dumbbell's bottleneck, in both directions, and on any graph link that names them.
//! All of a link's path state is one optional part, [`PathParts`]; a link without it runs
//! exactly as before.
//!
//! Where each mechanism acts, following a packet:
//!
//! - on arrival, before the queue discipline: the policer ([`TokenBucket`]: a non-conforming
//!   packet is dropped, counted in `policer_drops`), the burst-loss model ([`GilbertElliott`],
//!   counted with the Bernoulli losses), and, when the schedule changes the buffer, the buffer
//!   limit in force (drop-tail on the bytes or packets waiting, as `queue/droptail.rs`);
//! - at the transmitter: a rate from the schedule (the link's `rate_bps`, through its
//!   `TxClock`) or from a trace ([`TraceService::serve`]: when the packet's last bit leaves);
//! - after the transmitter, the timing stages, in this order: jitter, reordering, aggregation
//!   (each a [`Stage`]); a packet released by the last one enters the propagation pipe;
//! - the pipe stays FIFO: a packet arrives at max(release + delay, the previous arrival), so a
//!   delay that shrinks (an `rtt` change) never lets a packet overtake (only the stages
//!   reorder).
//!
//! The link's wake-ups (a schedule change, a stage's release) are `PathWake` events; `armed_ns`
//! is the earliest one pending, so each instant is scheduled once. A wake-up that finds nothing
//! due does nothing.

use super::{DataHeld, Link, LinkId, TxClock};
use crate::config::{PathKeys, TraceFile};
use crate::link::aqm::LinkRandom;
use crate::{EvKind, Simulation};
use cc::Nanos;
use pathmodel::impair::spec::Direction;
use pathmodel::impair::{Change, GilbertElliott, Schedule, Stage, TokenBucket, TraceService};
use transport::Packet as PathPkt;
use transport::Packet;

/// A link's path-model state (`Link::path`).
pub(crate) struct PathParts {
    /// Changes of rate, delay, loss and buffer still to come (the data direction's).
    schedule: Schedule,
    /// The transmitter follows this trace instead of `rate_bps`.
    trace: Option<TraceService>,
    policer: Option<TokenBucket>,
    loss_model: Option<GilbertElliott>,
    /// Timing stages after the transmitter, in the order a packet meets them.
    stages: Vec<Box<dyn Stage<PathPkt> + Send + Sync>>,
    /// When each stage last took a packet (a stage's arrivals must not go back in time).
    pushed_ns: Vec<Nanos>,
    /// The buffer limit in force when the schedule changes it (bytes, packets waiting);
    /// the link then has no drop-tail discipline of its own (`topology`).
    limit: Option<(u64, u64)>,
    /// The other direction's link: an `rtt` change sets both one-way delays.
    reverse: Option<LinkId>,
    /// The earliest `PathWake` event pending (Nanos::MAX: none).
    armed_ns: Nanos,
    /// Data packets of each flow held in the stages.
    pub(crate) held_data: DataHeld,
}

impl PathParts {
    /// The data direction's parts of a link with path-model keys `k` (checked): `schedule`
    /// its changes; `reverse`, the link an `rtt` change also sets (the bottleneck's ACK
    /// direction); `limit`, the buffer in force at the start if the schedule changes it.
    pub(crate) fn data(
        k: &PathKeys<'_>,
        schedule: Schedule,
        reverse: Option<LinkId>,
        limit: Option<(u64, u64)>,
    ) -> PathParts {
        let mut stages: Vec<Box<dyn Stage<PathPkt> + Send + Sync>> = Vec::new();
        if let Some(j) = k.jitter {
            stages.push(Box::new(j.build::<PathPkt>()));
        }
        if let Some(r) = k.reorder {
            stages.push(Box::new(r.build::<PathPkt>().expect("checked")));
        }
        if let Some(a) = k.aggregation.filter(|a| a.direction == Direction::Data) {
            stages.push(Box::new(a.build::<PathPkt>().expect("checked")));
        }
        let mut pp = PathParts::new(schedule, k.trace, stages, limit);
        pp.policer = k.policer.map(|p| p.build().expect("checked"));
        pp.loss_model = k.loss_model.map(|l| l.build().expect("checked"));
        pp.reverse = reverse;
        pp
    }

    /// The ACK direction's parts: its trace and an ACK-direction aggregation; `schedule` and
    /// `limit` as `data`'s (a graph link's way back changes with its keys; a bottleneck's
    /// ACK direction has no schedule of its own).
    pub(crate) fn ack(
        k: &PathKeys<'_>,
        schedule: Schedule,
        limit: Option<(u64, u64)>,
    ) -> PathParts {
        let mut stages: Vec<Box<dyn Stage<PathPkt> + Send + Sync>> = Vec::new();
        if let Some(a) = k.aggregation.filter(|a| a.direction == Direction::Ack) {
            stages.push(Box::new(a.build::<PathPkt>().expect("checked")));
        }
        PathParts::new(schedule, k.trace_reverse, stages, limit)
    }

    /// Parts with a schedule, a trace and timing stages, and nothing on arrival.
    fn new(
        schedule: Schedule,
        trace: Option<&TraceFile>,
        stages: Vec<Box<dyn Stage<PathPkt> + Send + Sync>>,
        limit: Option<(u64, u64)>,
    ) -> PathParts {
        PathParts {
            schedule,
            trace: trace.map(|t| TraceService::new(t.parse().expect("checked"))),
            policer: None,
            loss_model: None,
            pushed_ns: vec![0; stages.len()],
            stages,
            limit,
            reverse: None,
            armed_ns: Nanos::MAX,
            held_data: DataHeld::default(),
        }
    }

    /// The earliest time the link must wake: its next schedule change or stage release.
    fn next_wake(&self) -> Option<Nanos> {
        let stages = self.stages.iter().filter_map(|s| s.next_due()).min();
        match (self.schedule.next_change_at(), stages) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

impl Link {
    /// Serialization time of `bytes` starting now on a path link: from its trace, else at its
    /// (scheduled) rate.
    pub(crate) fn path_tx_time_ns(&mut self, now: Nanos, bytes: u32) -> Nanos {
        match self.path.as_deref_mut().and_then(|pp| pp.trace.as_mut()) {
            Some(t) => t.serve(now, bytes) - now,
            None => self.tx_time_ns(bytes),
        }
    }

    /// The transmitter's rate now, for the queue table: the trace's (averaged over its window)
    /// or the link's.
    pub(crate) fn current_rate_bps(&self, now: Nanos) -> u64 {
        match self.path.as_deref().and_then(|pp| pp.trace.as_ref()) {
            Some(t) => t.trace().rate_at(now).round() as u64,
            None => self.rate_bps,
        }
    }
}

impl Simulation {
    /// Arm link `lid`'s first wake-up (its first schedule change), at the start of the run.
    pub(crate) fn path_start(&mut self, lid: LinkId) {
        self.path_rearm(lid);
    }

    /// The path's arrival stage for `p` on link `lid`: policer, burst loss, the scheduled
    /// buffer. False: the packet is dropped (and counted).
    pub(crate) fn path_admit(&mut self, lid: LinkId, p: &Packet) -> bool {
        let now = self.now;
        let link = &mut self.links[lid as usize];
        let pp = link.path.as_deref_mut().expect("a path link");
        let policed = pp.policer.as_mut().is_some_and(|tb| !tb.admit(now, p.wire_bytes));
        let lost = !policed
            && pp.loss_model.as_mut().is_some_and(|ge| ge.lose(&mut LinkRandom(&mut link.rng)));
        let full = !policed
            && !lost
            && link.in_tx.is_some()
            && pp.limit.is_some_and(|(bytes, pkts)| {
                link.q_bytes + p.wire_bytes as u64 > bytes || link.queue.len() as u64 + 1 > pkts
            });
        if policed {
            link.stats.policer_drops += 1;
        } else if lost {
            link.stats.random_losses += 1;
        } else if full {
            link.stats.drops += 1;
        } else {
            return true;
        }
        if p.is_data {
            self.flows[p.flow as usize].data_dropped += 1;
        }
        false
    }

    /// A path link's transmitter is done with its packet: count it, hand it to the timing
    /// stages (or the pipe), start the next one (`on_tx_done` for links without a path).
    pub(crate) fn path_tx_done(&mut self, lid: LinkId) {
        let now = self.now;
        let p = self.depart(lid);
        let link = &mut self.links[lid as usize];
        let is_nic_data = link.is_sender_nic && p.is_data;
        let pp = link.path.as_deref_mut().expect("a path link");
        if pp.stages.is_empty() {
            self.path_to_pipe(lid, now, p);
        } else {
            pp.pushed_ns[0] = now;
            pp.held_data.track(&p, true);
            pp.stages[0].push(now, p, &mut LinkRandom(&mut link.rng));
            self.path_run(lid);
        }
        if self.links[lid as usize].paused_until <= now {
            self.next_tx(lid);
        }
        if is_nic_data {
            // A graph host's link with a path model: TSQ, as `on_tx_done` runs it.
            self.on_nic_data_departure(&p);
        }
    }

    /// A `PathWake` event: apply the schedule's due changes, move the stages' due packets on.
    #[inline(never)]
    pub(crate) fn on_path_wake(&mut self, lid: LinkId) {
        let now = self.now;
        let pp = self.links[lid as usize].path.as_deref_mut().expect("a path link");
        if pp.armed_ns == now {
            pp.armed_ns = Nanos::MAX;
        }
        while let Some(c) =
            self.links[lid as usize].path.as_deref_mut().and_then(|pp| pp.schedule.take_due(now))
        {
            self.path_apply(lid, c);
        }
        self.path_run(lid);
    }

    /// Apply one schedule change to link `lid` (the data direction) and its reverse link.
    fn path_apply(&mut self, lid: LinkId, c: Change) {
        let link = &mut self.links[lid as usize];
        if let Some(r) = c.rate_bps {
            link.rate_bps = r;
            link.tx_clock = TxClock::default(); // its memo holds times at the old rate
        }
        if let Some(l) = c.loss {
            link.loss = l;
        }
        let pp = link.path.as_deref_mut().expect("a path link");
        if let Some(l) = c.limit {
            pp.limit = Some((l.bytes.unwrap_or(u64::MAX), l.packets.unwrap_or(u64::MAX)));
        }
        if let Some(d) = c.delay_ns {
            link.delay_ns = d; // one way: a graph link's direction
        }
        if let Some(rtt) = c.rtt_ns {
            let reverse = pp.reverse;
            link.delay_ns = rtt / 2;
            if let Some(r) = reverse {
                self.links[r as usize].delay_ns = rtt - rtt / 2;
            }
        }
    }

    /// Move every packet the stages release by now to the next stage or the pipe, and arm the
    /// next wake-up.
    fn path_run(&mut self, lid: LinkId) {
        let now = self.now;
        let n = self.links[lid as usize].path.as_deref().map_or(0, |pp| pp.stages.len());
        for i in 0..n {
            loop {
                let link = &mut self.links[lid as usize];
                let pp = link.path.as_deref_mut().expect("a path link");
                let Some((t, p)) = pp.stages[i].pop_due(now) else { break };
                if i + 1 < n {
                    let t = t.max(pp.pushed_ns[i + 1]);
                    pp.pushed_ns[i + 1] = t;
                    pp.stages[i + 1].push(t, p, &mut LinkRandom(&mut link.rng));
                } else {
                    pp.held_data.track(&p, false);
                    self.path_to_pipe(lid, t, p);
                }
            }
        }
        self.path_rearm(lid);
    }

    /// Schedule link `lid`'s next `PathWake` if it is earlier than the one pending.
    fn path_rearm(&mut self, lid: LinkId) {
        let pp = self.links[lid as usize].path.as_deref_mut().expect("a path link");
        if let Some(t) = pp.next_wake().filter(|&t| t < pp.armed_ns) {
            pp.armed_ns = t;
            self.push(t.max(self.now), EvKind::PathWake, lid);
        }
    }

    /// Packet `p`, released at `t`, propagates: it arrives after the link's delay, never
    /// before the packet ahead of it.
    fn path_to_pipe(&mut self, lid: LinkId, t: Nanos, p: Packet) {
        let link = &self.links[lid as usize];
        let mut arrive = t + link.delay_ns;
        if let Some(&(last, _)) = link.pipe.back() {
            arrive = arrive.max(last);
        }
        self.enter_pipe(lid, arrive, p, p.hop + 1);
    }
}
