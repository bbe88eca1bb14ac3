//! Path impairments besides the queue: what a link does to its packets' rate, timing, order
//! and survival. Each is a small sans-IO type with one job, beside the reference it follows:
//!
//! | file | mechanism | reference |
//! |---|---|---|
//! | `schedule.rs` | rate, RTT, loss, buffer changes at given times | — |
//! | `trace.rs` | rate from a trace (Mahimahi, `t, rate` CSV) | mahimahi `link_queue.cc` |
//! | `trace_gen.rs` | a synthetic cellular-like Mahimahi trace | — |
//! | `policer.rs` | token-bucket policer, no queue | Linux `act_police.c` |
//! | `gilbert_elliott.rs` | 4-parameter Gilbert–Elliott burst loss | Linux `sch_netem.c` |
//! | `jitter.rs` | per-packet delay jitter, FIFO or overtaking | netem `delay … jitter` |
//! | `reorder.rs` | a packet held until `displacement` others overtook it | — |
//! | `aggregation.rs` | packets held, released together (A-MPDU, grants) | — |
//! | `stage.rs` | the `Stage` trait the three timing stages share | — |
//! | `spec.rs` | how a scenario names them (serde, JSON schema) | — |
//!
//! How a link uses them. On arrival, a packet meets the policer ([`TokenBucket::admit`]) and
//! the loss models ([`GilbertElliott::lose`]) before the queue discipline. The transmitter
//! asks a [`TraceService`] (instead of `bytes × 8 / rate`) when a packet's last bit has left.
//! After the transmitter, the timing stages [`Jitter`], [`Reorderer`] and [`Aggregator`] share
//! one API (the [`Stage`] trait): `push(now, packet)` in arrival order, `next_due()` (the time
//! the caller must come back: the simulator's next event for the link, the emulator's poll
//! deadline) and `pop_due(now)` (the packets released by then, in order, with their release
//! times). A [`Schedule`] says when the link's own parameters change (`next_change_at`,
//! `take_due`).

/// The [`Stage`] methods `pop_due` and `len` of a stage that keeps the packets it holds in
/// `held` and those it released in `ready` (release times nondecreasing), and moves them from
/// one to the other in its `expire(now)`.
macro_rules! released_via_ready {
    () => {
        fn pop_due(&mut self, now: Nanos) -> Option<(Nanos, P)> {
            self.expire(now);
            super::stage::pop_released(&mut self.ready, now)
        }

        fn len(&self) -> usize {
            self.held.len() + self.ready.len()
        }
    };
}

pub mod aggregation;
pub mod gilbert_elliott;
pub mod jitter;
pub mod policer;
pub mod reorder;
pub mod schedule;
pub mod spec;
pub mod stage;
pub mod trace;
pub mod trace_gen;

pub use aggregation::Aggregator;
pub use gilbert_elliott::GilbertElliott;
pub use jitter::Jitter;
pub use policer::TokenBucket;
pub use reorder::Reorderer;
pub use schedule::{Change, Schedule, ScheduleError};
pub use stage::Stage;
pub use trace::{Trace, TraceError, TraceService};
pub use trace_gen::{generate_mahimahi, CellularTraceParams};

use std::fmt;

/// A parameter out of its range, named as the scenario names it.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamError {
    /// The field (`burst_bytes`, `p`, …).
    pub field: &'static str,
    /// What is wrong with it, with the value.
    pub why: String,
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.why)
    }
}

impl std::error::Error for ParamError {}

/// A probability field in [0, 1].
pub(crate) fn check_probability(field: &'static str, v: f64) -> Result<f64, ParamError> {
    if (0.0..=1.0).contains(&v) {
        Ok(v)
    } else {
        Err(ParamError { field, why: format!("{v} is not a probability in [0, 1]") })
    }
}
