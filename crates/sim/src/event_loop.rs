//! The event loop: the heap of (time, sequence) events and `advance`, which runs them with
//! an event and wall-clock budget (so a caller can be interrupted) and a livelock guard.

use crate::*;

/// More events than this at one instant means the model is stuck (a timer re-arming itself at
/// `now`); stop with a diagnosis instead of spinning forever.
const LIVELOCK_EVENTS: u64 = 10_000_000;

/// How often `advance` looks at the wall clock: 1024 events are ≈0.1–1 ms of work, and a
/// clock read per 1024 events costs nothing measurable.
const WALL_CHECK_EVENTS: u64 = 1024;

impl Simulation {
    #[inline]
    pub(crate) fn push(&mut self, t: Nanos, kind: EvKind, id: u32) {
        self.ev_seq += 1;
        self.heap.push(Reverse(Event { t, seq: self.ev_seq, kind, id }));
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
    pub fn advance(&mut self, t_ns: Nanos, max_events: u64, max_wall: Option<std::time::Duration>) -> Result<bool, String> {
        let limit = t_ns.min(self.end_ns);
        let mut budget = max_events;
        let deadline = max_wall.map(|w| std::time::Instant::now() + w);
        while let Some(Reverse(ev)) = self.heap.peek().copied() {
            if ev.t > limit {
                break;
            }
            if budget == 0 {
                return Ok(self.is_complete()); // time stays at the last event processed
            }
            budget -= 1;
            if budget % WALL_CHECK_EVENTS == 0 && deadline.is_some_and(|d| std::time::Instant::now() >= d) {
                return Ok(self.is_complete());
            }
            self.heap.pop();
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
            self.now = ev.t;
            self.events += 1;
            self.events_by_kind[ev.kind as usize] += 1;
            match ev.kind {
                EvKind::TxDone => self.on_tx_done(ev.id),
                EvKind::Arrive => self.on_arrive(ev.id),
                EvKind::SenderTimer => self.on_sender_timer(ev.id as usize, ev.t),
                EvKind::ReceiverTimer => self.on_receiver_timer(ev.id as usize, ev.t),
                EvKind::FlowStart => {
                    let f = ev.id as usize;
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
                    flow.sender.set_handshake_rtt(self.now, rtt);
                    flow.sender.start(self.now);
                    if let Some(app) = flow.rpc.as_mut() {
                        app.start(self.now, &mut flow.sender);
                    }
                    self.pump(f);
                }
                EvKind::PauseOn => self.on_pause(ev.id, true),
                EvKind::PauseOff => self.on_pause(ev.id, false),
                EvKind::Resume => self.on_resume(ev.id),
                EvKind::PfcRefresh => self.on_pfc_refresh(ev.id),
                EvKind::AppQuery => self.on_app_query(ev.id as usize),
                EvKind::Sample => {
                    self.take_sample();
                    self.next_sample_ns += self.cfg.sample_interval_ns;
                    if self.next_sample_ns <= self.end_ns {
                        let t = self.next_sample_ns;
                        self.push(t, EvKind::Sample, 0);
                    }
                }
            }
        }
        if limit > self.now {
            self.now = limit;
        }
        Ok(self.is_complete())
    }
}
