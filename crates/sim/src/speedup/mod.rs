//! The speed-up machinery: ways to run the same model with fewer events, each exact where it
//! is switched on, kept apart from the model it accelerates. The model (`link/`, `network.rs`,
//! `endpoints.rs`) is what an event-driven run does; a run with these on gives the same
//! packets at the same times (the tests in `network.rs` and `ahead.rs` compare the two).
//!
//! - `../serializer.rs`: a *timestamped* link's `TxDone` events (a FIFO at a fixed rate fixes a
//!   packet's departure when it accepts it);
//! - `fold.rs`: a router hop into a *passive* link fed by one link alone (the feeding link
//!   hands the packet on when it accepts it);
//! - `ahead.rs`: an arrival into a receiver host, or onto a watched link only one link feeds,
//!   served before its time where nothing can tell;
//! - `nic.rs`: host NICs with a propagation delay, timestamped: a receiver's (it carries no
//!   data), and a sender's whose departures TSQ counts when it next looks;
//! - `timed.rs`: cut-through and jittered links and ports that send PAUSE, timestamped all the
//!   same;
//! - `lazy.rs`: a discipline's departures (CoDel, FQ-CoDel, PIE, DualPI2) served when the link is
//!   next looked at, not each at its own event;
//! - `tests.rs`: each against the event-driven model, over whole runs.
//!
//! Each link's part in this is its `FastPath`, decided once the topology and the flows are
//! built (`Simulation::new`: `mark_data_nics`, timestamped, `set_lazy_nics`, `set_timed`, then
//! `set_folds`, then `set_ahead`, then `set_lazy_departures`).

pub(crate) mod ahead;
pub(crate) mod fold;
pub(crate) mod lazy;
pub(crate) mod nic;
#[cfg(test)]
pub(crate) mod tests;
pub(crate) mod timed;

use ahead::Ahead;
use cc::Nanos;

/// `FastPath::nic_flow` of a link whose departures TSQ sees as events.
pub(crate) const NO_FLOW: u32 = u32::MAX;

/// A link's speed-up state (see the module header).
#[derive(Clone, Debug)]
pub(crate) struct FastPath {
    /// Nothing stops this link's serializer or reacts to its departures (no PAUSE, TSQ, shared
    /// pool, cut-through or jitter): its packets' times are fixed on acceptance and it needs
    /// no `TxDone` events (`serializer.rs`; `Link::can_be_timestamped`).
    pub timestamped: bool,
    /// A timestamped link without timed parts (`Link::has_timed_parts`): `enqueue`'s short
    /// path. The other timestamped links are `timed`.
    pub plain: bool,
    /// A timestamped link with a cut-through or jittered wire, or that sends PAUSE
    /// (`timed.rs`): its packets' times are decided on acceptance all the same.
    pub timed: bool,
    /// A timestamped link that decides and reports nothing (`Link::is_passive`): nobody reads
    /// its queue, so it keeps only its serializer's free time (`Serializer::pass`), not the
    /// replayable schedule and statistics.
    pub passive: bool,
    /// A timestamped link (or one only its discipline keeps event-driven) into a router whose
    /// every next link is passive and fed by this link alone: a packet it accepts (that one:
    /// sends) enters its next link at once, at the time it will reach the router (`fold.rs`),
    /// and the router hop costs no `Arrive` event.
    pub fold: bool,
    /// Whether arrivals may be served ahead of the event loop (`ahead.rs`).
    pub ahead: Ahead,
    /// A timestamped sender NIC with a propagation delay whose departures TSQ counts when it
    /// next looks, with events only while its flow is throttled (`nic.rs`).
    pub lazy_tsq: bool,
    /// (`Ahead::Nic`, `lazy_tsq`) The flow that uses the NIC, whose TSQ counts its departures
    /// when it looks (`NO_FLOW`: none; its `TxDone` events are `on_nic_ahead_departure`'s),
    /// and the time of its earliest pending `TxDone` event (Nanos::MAX: none;
    /// `Simulation::arm_nic`).
    pub nic_flow: u32,
    pub nic_armed_at: Nanos,
    /// (Links served ahead) An `Arrive` event for the pipe is pending; it may have been
    /// outrun by packets served ahead, and re-arms or lapses when it runs.
    pub pipe_armed: bool,
    /// A discipline's link whose departures are served when it is next looked at (`lazy.rs`;
    /// its times are its discipline's: `LinkAqm::lazy`).
    pub lazy_departures: bool,
}

impl FastPath {
    /// (Tests) Make the link timestamped or event-driven, `plain` and `timed` in step.
    #[cfg(test)]
    pub fn set_timestamped(&mut self, on: bool) {
        self.timed &= on;
        (self.timestamped, self.plain) = (on, on && !self.timed);
    }
}

impl Default for FastPath {
    /// Event-driven: nothing sped up until the topology and the flows say so.
    fn default() -> FastPath {
        FastPath {
            timestamped: false,
            plain: false,
            timed: false,
            passive: false,
            fold: false,
            ahead: Ahead::No,
            lazy_tsq: false,
            nic_flow: NO_FLOW,
            nic_armed_at: Nanos::MAX,
            pipe_armed: false,
            lazy_departures: false,
        }
    }
}
