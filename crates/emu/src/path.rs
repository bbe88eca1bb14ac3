//! A link direction's path model besides its queue (issue 30): the shared crate's
//! `pathmodel::impair` mechanisms, the same code the simulator runs, plumbed into [`Link`]:
//!
//! ```text
//! arrival -> Bernoulli loss -> policer -> burst loss (Gilbert-Elliott) -> queue discipline
//!         -> transmitter (constant rate, or a trace's delivery opportunities)
//!         -> one-way delay -> jitter -> reorder -> aggregation -> delivery
//! ```
//!
//! Time. The emulator's clock is CLOCK_MONOTONIC; a schedule's `at` and a trace's time 0 are
//! the run's start, which the parent gives with `start <t0>` ([`Link::start_run`]). Before it
//! the schedule waits and a trace link runs at its constant `rate_bps` (the runner passes the
//! trace's mean rate there): only the namespace set-up's stray packets pass then.
//!
//! Order. Changes of the schedule apply at their exact time, between two packets' service:
//! a packet on the wire keeps the rate it started with (`pathmodel::impair::schedule`). The
//! delay line stays FIFO when the delay steps down (a packet never leaves before the one
//! serialized ahead of it, as on one fibre) unless the link lets packets overtake anyway
//! (`jitter.reorder` or `reorder`); then a delivery is inserted at its own time. Random draws
//! come from a stream of their own, so adding jitter does not change which packets the
//! Bernoulli loss picks.
//!
//! [`Link`]: crate::Link
//! [`Link::start_run`]: crate::Link::start_run

use std::collections::VecDeque;

use pathmodel::impair::spec::{
    AggregationSpec, LossModelSpec, PolicerSpec, ReorderSpec, ScheduleEntrySpec,
};
use pathmodel::impair::{
    Change, GilbertElliott, Schedule, Stage, TokenBucket, Trace, TraceService,
};
use pathmodel::{Ecn, PathPacket};

use crate::{LinkParams, XorShift64Star};

/// A trace as the runner passes it: the file's name (for messages; `.csv` selects the CSV
/// format) and its contents. The same form as the core config's `trace`.
#[derive(Clone, Debug, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceSpec {
    pub file: String,
    pub text: String,
}

impl TraceSpec {
    /// The parsed trace; the error is one line naming the file and the line.
    pub fn parse(&self) -> Result<Trace, String> {
        Trace::parse(&self.file, &self.text).map_err(|e| format!("trace {}: {e}", self.file))
    }
}

/// Seed offset of the impairments' random stream (apart from the link's Bernoulli/AQM one).
const IMPAIR_SEED_XOR: u64 = 0x1D8E_4E27_C47D_124F;

/// A packet after the transmitter: what the timing stages and the delivery need.
pub struct Sent<T> {
    pub payload: T,
    pub wire: u32,
    pub origin: u16,
    /// The queue marked it: the caller sets CE as it leaves.
    pub ce: bool,
}

impl<T> PathPacket for Sent<T> {
    fn wire_bytes(&self) -> u32 {
        self.wire
    }
    fn ecn(&self) -> Ecn {
        // Marking is over by now: no stage after the transmitter marks.
        Ecn::NotEct
    }
    fn set_ce(&mut self) {
        self.ce = true;
    }
    fn flow_key(&self) -> u64 {
        0
    }
}

/// Why the path model refused an arriving packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The burst-loss model lost it.
    Lost,
    /// The policer found too few tokens.
    Policed,
}

/// The built mechanisms of one direction.
pub struct Path<T> {
    /// The run's time 0 (None until the run starts).
    origin_ns: Option<u64>,
    schedule: Schedule,
    trace: Option<TraceService>,
    policer: Option<TokenBucket>,
    loss_model: Option<GilbertElliott>,
    /// Jitter, reorder, aggregation: those configured, in that order.
    stages: Vec<Box<dyn Stage<Sent<T>>>>,
    /// Released by the last stage, for `pop_ready`.
    ready: VecDeque<(u64, Sent<T>)>,
    rng: XorShift64Star,
    /// Packets may overtake each other (jitter with reorder, or a reorder stage).
    pub may_reorder: bool,
}

/// The mechanism an optional spec describes, if it is given; an error names the spec's key.
fn build_optional<S, M, E: std::fmt::Display>(
    key: &str,
    spec: &Option<S>,
    build: impl FnOnce(&S) -> Result<M, E>,
) -> Result<Option<M>, String> {
    spec.as_ref().map(build).transpose().map_err(|e| format!("{key}: {e}"))
}

impl<T: 'static> Path<T> {
    pub fn build(p: &LinkParams, seed: u64) -> Result<Path<T>, String> {
        let schedule =
            ScheduleEntrySpec::build(&p.schedule).map_err(|e| format!("schedule: {e}"))?;
        let trace = p.trace.as_ref().map(TraceSpec::parse).transpose()?.map(TraceService::new);
        let policer = build_optional("policer", &p.policer, PolicerSpec::build)?;
        let loss_model = build_optional("loss_model", &p.loss_model, LossModelSpec::build)?;
        let reorder = build_optional("reorder", &p.reorder, ReorderSpec::build::<Sent<T>>)?;
        let aggregation =
            build_optional("aggregation", &p.aggregation, AggregationSpec::build::<Sent<T>>)?;
        let mut stages: Vec<Box<dyn Stage<Sent<T>>>> = Vec::new();
        if let Some(j) = &p.jitter {
            stages.push(Box::new(j.build::<Sent<T>>()));
        }
        if let Some(r) = reorder {
            stages.push(Box::new(r));
        }
        if let Some(a) = aggregation {
            stages.push(Box::new(a));
        }
        Ok(Path {
            origin_ns: None,
            schedule,
            trace,
            policer,
            loss_model,
            stages,
            ready: VecDeque::new(),
            rng: XorShift64Star::new(seed ^ IMPAIR_SEED_XOR),
            may_reorder: p.jitter.as_ref().is_some_and(|j| j.reorder) || p.reorder.is_some(),
        })
    }

    /// The run starts at `t0_ns`: the schedule's and the trace's time 0.
    pub fn start_run(&mut self, t0_ns: u64) {
        self.origin_ns = Some(t0_ns);
    }

    /// The trace's mean rate (bit/s, rounded), if the link follows one.
    pub fn trace_mean_bps(&self) -> Option<u64> {
        self.trace.as_ref().map(|s| s.trace().mean_rate_bps().round() as u64)
    }

    /// The link's rate at `t` for the queue table: a trace's ([`Trace::rate_at`]), else the
    /// constant (scheduled) one.
    pub fn rate_at(&self, t: u64, constant_bps: u64) -> f64 {
        match (&self.trace, self.origin_ns) {
            (Some(s), Some(o)) => s.trace().rate_at(t.saturating_sub(o)),
            _ => constant_bps as f64,
        }
    }

    /// When the next scheduled change applies (absolute ns; None before the run starts).
    pub fn next_change_at(&self) -> Option<u64> {
        Some(self.origin_ns? + self.schedule.next_change_at()?)
    }

    /// The next change due by `t` (absolute), its time made absolute.
    pub fn take_change(&mut self, t: u64) -> Option<Change> {
        let o = self.origin_ns?;
        let c = self.schedule.take_due(t.checked_sub(o)?)?;
        Some(Change { at_ns: o + c.at_ns, ..c })
    }

    /// When a packet of `wire` bytes whose service may start at `t` has left, if the link
    /// follows a trace and the run has started (None: serialize at the constant rate).
    pub fn serve(&mut self, t: u64, wire: u32) -> Option<u64> {
        let (s, o) = (self.trace.as_mut()?, self.origin_ns?);
        Some(o + s.serve(t.saturating_sub(o), wire))
    }

    /// The arrival checks before the queue, in the simulator's order (`crates/sim` link/path.rs):
    /// the policer, then burst loss (a policed packet makes no loss-model transition).
    pub fn admit(&mut self, now: u64, wire: u32) -> Result<(), Refusal> {
        if let Some(b) = self.policer.as_mut() {
            if !b.admit(now, wire) {
                return Err(Refusal::Policed);
            }
        }
        if let Some(g) = self.loss_model.as_mut() {
            if g.lose(&mut self.rng) {
                return Err(Refusal::Lost);
            }
        }
        Ok(())
    }

    /// Whether packets leaving the delay line pass timing stages.
    pub fn has_stages(&self) -> bool {
        !self.stages.is_empty()
    }

    /// A packet leaves the delay line at `due` (nondecreasing across calls).
    pub fn push(&mut self, due: u64, s: Sent<T>) {
        self.stages[0].push(due, s, &mut self.rng);
    }

    /// Move everything released by `now` through the chain into `ready`.
    pub fn run_stages(&mut self, now: u64) {
        for i in 0..self.stages.len() {
            while let Some((t, p)) = self.stages[i].pop_due(now) {
                match self.stages.get_mut(i + 1) {
                    Some(next) => next.push(t, p, &mut self.rng),
                    None => self.ready.push_back((t, p)),
                }
            }
        }
    }

    pub fn pop_ready(&mut self) -> Option<(u64, Sent<T>)> {
        self.ready.pop_front()
    }

    /// The earliest time a stage releases a packet (or one is ready already).
    pub fn next_due(&self) -> Option<u64> {
        let r = self.ready.front().map(|x| x.0);
        self.stages.iter().filter_map(|s| s.next_due()).chain(r).min()
    }
}
