//! The event loop: the heap of (time, kind, id) events and `advance`, which runs them with
//! an event and wall-clock budget (so a caller can be interrupted) and a livelock guard.

use crate::{traffic, EvKind, Event, EventKey, Simulation};
use cc::Nanos;

/// More events than this at one instant means the model is stuck (a timer re-arming itself at
/// `now`); stop with a diagnosis instead of spinning forever.
const LIVELOCK_EVENTS: u64 = 10_000_000;

/// How often `advance` looks at the wall clock: 1024 events are ≈0.1–1 ms of work, and a
/// clock read per 1024 events costs nothing measurable.
const WALL_CHECK_EVENTS: u64 = 1024;

impl Simulation {
    /// Schedule an event. The first event a heap event's handler schedules takes the handled
    /// event's place at the heap's root (one sift instead of a pop and a push): a link's next
    /// departure or next arrival, scheduled as the current one runs, is the common case.
    #[inline]
    pub(crate) fn push(&mut self, t: Nanos, kind: EvKind, id: u32) {
        let key = EventKey::new(Event { t, kind, id }).0;
        if self.head_spent {
            self.head_spent = false;
            self.heap.replace_top(key);
        } else {
            self.heap.push(key);
        }
    }

    /// Arm endpoint timer `slot` (`timer_queue.rs`) at `t`; it runs as the event
    /// (t, SenderTimer or ReceiverTimer, flow) would.
    #[inline]
    pub(crate) fn arm_timer(&mut self, slot: u32, t: Nanos) {
        self.timers.set(slot, t);
    }

    /// The next event: the event heap's head or the timer queue's, whichever is first.
    #[inline]
    fn next_event(&self) -> Option<Event> {
        let ev = self.heap.peek().map(|k| EventKey(k).event());
        let timer = self.timers.peek().map(|t| {
            let kind = if t.slot % 2 == 0 { EvKind::SenderTimer } else { EvKind::ReceiverTimer };
            Event { t: t.t, kind, id: t.slot / 2 }
        });
        match (ev, timer) {
            (Some(e), Some(t)) => Some(e.min(t)),
            (e, t) => e.or(t),
        }
    }

    /// Advance the simulation to `t_ns` (or its end). Returns true when the run is complete.
    /// Panics if the model livelocks (see [`Simulation::advance`]).
    pub fn run_until(&mut self, t_ns: Nanos) -> bool {
        self.advance(t_ns, u64::MAX, None).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Advance the simulation to `t_ns` (or its end), processing at most `max_events` events and
    /// returning early once `max_wall` of wall-clock time has passed (checked every
    /// `WALL_CHECK_EVENTS` events). A caller that must stay responsive (Ctrl-C, a progress bar)
    /// bounds each call by wall time: the cost of a simulated second varies by orders of
    /// magnitude, within a run too. Where a call stops never changes the results (the model
    /// does not see the slicing). Returns whether the run is complete, or the diagnosis of a
    /// livelock (more than `LIVELOCK_EVENTS` at one instant: a timer re-arming itself at `now`).
    pub fn advance(
        &mut self,
        t_ns: Nanos,
        max_events: u64,
        max_wall: Option<std::time::Duration>,
    ) -> Result<bool, String> {
        let limit = t_ns.min(self.end_ns);
        self.limit_ns = limit;
        let mut budget = max_events;
        let deadline = max_wall.map(|w| std::time::Instant::now() + w);
        while let Some(ev) = self.next_event() {
            if ev.t > limit {
                break;
            }
            if budget == 0 {
                return Ok(self.is_complete()); // time stays at the last event processed
            }
            budget -= 1;
            if budget.is_multiple_of(WALL_CHECK_EVENTS)
                && deadline.is_some_and(|d| std::time::Instant::now() >= d)
            {
                return Ok(self.is_complete());
            }
            if ev.t == self.now {
                self.events_at_now += 1;
                if self.events_at_now > LIVELOCK_EVENTS {
                    return Err(format!(
                        "simulation livelock: {} events at t = {} ns without time advancing; flows: {}",
                        self.events_at_now,
                        self.now,
                        self.debug_flows().join("; ")
                    ));
                }
            } else {
                self.events_at_now = 0;
            }
            match ev.kind {
                EvKind::SenderTimer | EvKind::ReceiverTimer => {
                    self.timers.pop();
                }
                // The handled event stays at the root until the handler's first `push`
                // replaces it, or is popped after the handler (nothing reads the heap between).
                _ => self.head_spent = true,
            }
            self.now = ev.t;
            self.events += 1;
            self.events_by_kind[ev.kind as usize] += 1;
            match ev.kind {
                EvKind::TxDone => self.on_tx_done(ev.id),
                EvKind::Arrive => self.on_arrive(ev.id),
                EvKind::SenderTimer => self.on_sender_timer(ev.id as usize, ev.t),
                EvKind::ReceiverTimer => self.on_receiver_timer(ev.id as usize, ev.t),
                EvKind::FlowStart if self.flows[ev.id as usize].traffic != traffic::NOT_TRAFFIC => {
                    self.traffic_start(self.flows[ev.id as usize].traffic as usize)
                }
                EvKind::FlowStart => self.on_flow_start(ev.id as usize),
                EvKind::PauseOn => self.on_pause_event(ev.id, true),
                EvKind::PauseOff => self.on_pause_event(ev.id, false),
                EvKind::Resume => self.on_pause_expiry(ev.id),
                EvKind::PfcRefresh => self.on_pfc_refresh(ev.id),
                EvKind::AppQuery => self.on_app_query(ev.id as usize),
                EvKind::WorkloadArrival => self.on_workload_arrival(ev.id as usize),
                EvKind::HostPoll => self.on_host_poll(ev.id, ev.t),
                EvKind::PathWake => self.on_path_wake(ev.id),
                EvKind::QdiscWake => self.on_qdisc_wake(ev.id),
                EvKind::Sample => {
                    self.take_sample();
                    self.next_sample_ns += self.cfg.sample_interval_ns;
                    if self.next_sample_ns <= self.end_ns {
                        let t = self.next_sample_ns;
                        self.push(t, EvKind::Sample, 0);
                    }
                }
            }
            if self.head_spent {
                self.head_spent = false;
                self.heap.pop();
            }
        }
        if !self.lazy_links.is_empty() {
            self.serve_all_departures_to(limit); // the caller may read the links now
        }
        if limit > self.now {
            self.now = limit;
        }
        Ok(self.is_complete())
    }

    /// A flow's start (its handshake done): ICTCP's or autotuning's initial window, the
    /// handshake's RTT, the
    /// application, then the first transmissions. Once per flow, kept out of the event loop's
    /// hot code (`advance` inlines its per-packet handlers).
    #[inline(never)]
    fn on_flow_start(&mut self, f: usize) {
        if let (Some(ic), Some(id)) = (&self.ictcp, self.flows[f].ictcp) {
            // The handshake already advertises ICTCP's initial window.
            let w = ic.window_bytes(id);
            let flow = &mut self.flows[f];
            flow.receiver.set_window_override(Some(w));
            let segs = flow.receiver.window_bytes() / flow.sender.cfg.mss as u64;
            flow.sender.set_initial_rwnd_end(segs);
        }
        let rtt = self.handshake_rtt_ns(f);
        let flow = &mut self.flows[f];
        // An autotuning receiver's SYN-ACK offers its initial window (45 segments at 1448 B).
        if let Some(segs) = flow.receiver.establish(self.now, rtt) {
            flow.sender.set_initial_rwnd_end(segs);
        }
        flow.sender.set_handshake_rtt(self.now, rtt);
        flow.sender.start(self.now);
        if let Some(app) = flow.rpc.as_mut() {
            app.start(self.now, &mut flow.sender);
        }
        if let Some(w) = flow.writer.as_mut() {
            w.start(self.now, &mut flow.sender);
        }
        self.pump(f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A heap key decodes to the event it was made from, for every kind (`EvKind::ALL` must list
    /// the kinds in discriminant order), and keys order as events do.
    #[test]
    fn event_keys_round_trip_and_keep_the_order() {
        let events: Vec<Event> = EvKind::ALL
            .iter()
            .flat_map(|&kind| {
                [(0, 0), (5, u32::MAX), (u64::MAX, 7)].map(|(t, id)| Event { t, kind, id })
            })
            .collect();
        for &e in &events {
            assert_eq!(EventKey::new(e).event(), e);
            for &f in &events {
                assert_eq!(EventKey::new(e).cmp(&EventKey::new(f)), e.cmp(&f), "{e:?} vs {f:?}");
            }
        }
    }

    /// Paced BBR flows move their timers on every departure and every ACK; the queues must hold
    /// O(links + flows) entries all the same (the event heap used to collect thousands of
    /// superseded timer entries on a long path, and every packet event paid for sifting them).
    #[test]
    fn the_event_queues_stay_as_small_as_the_network() {
        let mut sim = Simulation::from_json(
            r#"{"seed":1,"duration_ns":1500000000,"sample_interval_ns":100000000,
                "topology":{"kind":"dumbbell","bottleneck":{"rate_bps":1000000000,"rtt_ns":100000000,"buffer":{"bytes":12500000}}},
                "flows":[{"cc":"bbr3"},{"cc":"bbr1","start_ns":300000000},{"cc":"cubic","start_ns":600000000}]}"#,
        )
        .unwrap();
        let bound = 4 * sim.links.len() + 4 * sim.flows.len() + 16;
        let (mut most, mut t) = (0, 0);
        while !sim.run_until_step(&mut t) {
            most = most.max(sim.heap.len() + sim.timers.len());
        }
        assert!(
            sim.data_packets_delivered > 30_000,
            "the scenario moves data: {}",
            sim.data_packets_delivered
        );
        assert!(
            most <= bound,
            "{most} queued entries for {} links and {} flows",
            sim.links.len(),
            sim.flows.len()
        );
    }

    impl Simulation {
        /// Advance by 1 ms of simulated time; true when the run is complete.
        fn run_until_step(&mut self, t: &mut Nanos) -> bool {
            *t += 1_000_000;
            self.run_until(*t)
        }
    }
}
