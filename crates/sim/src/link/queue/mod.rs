//! Queue disciplines: what a link's egress queue decides about each packet it is offered.
//!
//! A link's queue holds the packets waiting for its serializer (`Link`); its discipline is a
//! chain of the mechanisms configured on it, each in its own file beside its reference:
//!
//! | file | discipline | decides |
//! |---|---|---|
//! | `droptail.rs` | a finite buffer, in bytes and/or packets | drop when full |
//! | `red.rs` | RED (Floyd & Jacobson 1993) on the averaged queue | mark ECT / drop others early |
//! | `step_ecn.rs` | step marking on the instantaneous queue (DCTCP's K) | mark ECT |
//!
//! The link offers a packet to its chain at three moments, in this order:
//!
//! ```text
//! on_arrival   every arrival, also one that finds the link idle     Accept | Mark | Drop
//!   (an idle, unpaused link starts serializing the packet here; nothing waits)
//! admits       the packet would wait: does it fit?                   bool (false: tail drop)
//!   (then the switch's shared buffer, `pool.rs`, and PFC's ingress accounting)
//! on_enqueue   the packet will wait                                  Accept | Mark
//! ```
//!
//! Each stage runs every discipline of the chain in configuration order; a `Drop` ends the
//! packet, a `Mark` sets CE. The occupancy a discipline sees is the queue as this packet finds
//! it (`Occupancy`: bytes and packets waiting, not counting the one serializing); a
//! timestamped link's queue is replayed to the packet's arrival first (`serializer.rs`). The
//! link counts drops and marks (`QueueStats`) and keeps the queue's bytes, packets and the time
//! it last went idle (RED's idle decay); a discipline keeps only its own state.
//!
//! A link with a discipline decides something about its packets, so it is never passive: no
//! packet is folded through it or served ahead past it (`speedup.rs`); it stays timestamped.
//! Disciplines that hold their packets and act at dequeue time (CoDel, FQ-CoDel, PIE, DualPI2)
//! are the path model's (`pathmodel::aqm`), shared with the link emulator; a link runs one of
//! those instead of this chain, event-driven (`link/aqm.rs`).
//!
//! Adding a discipline: one file here with a type that implements `QueueDiscipline`, and one
//! line in the `disciplines!` registry below (which declares the module, adds the variant to
//! `Discipline` and dispatches to it statically: a match, no virtual call, on the path of
//! every packet a bottleneck accepts). The scenario schema (`config/`) says which link gets it.

use crate::rng::Rng;
use cc::Nanos;
use transport::Packet;

/// What a discipline decides about a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    Accept,
    /// Set CE (only ever returned for an ECN-capable packet).
    Mark,
    Drop,
}

/// The queue a packet finds: bytes and packets waiting, not counting the one serializing.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Occupancy {
    pub bytes: u64,
    pub packets: u64,
}

/// One queue discipline (see the module header for when each hook runs). Every hook has a
/// default that decides nothing, so a discipline implements only the stages it acts at.
pub(crate) trait QueueDiscipline {
    /// The stages the discipline acts at: a link runs a stage only if one of its disciplines
    /// does (a bottleneck with a drop-tail buffer alone runs the admission stage only).
    const ON_ARRIVAL: bool = false;
    const ADMITS: bool = false;
    const ON_ENQUEUE: bool = false;

    /// Every arrival, before the link looks at its buffer. `idle_ns` > 0: the link had been
    /// idle (nothing waiting or serializing) that long; 0: it is busy.
    #[inline(always)]
    fn on_arrival(
        &mut self,
        _q: Occupancy,
        _idle_ns: Nanos,
        _p: &Packet,
        _rng: &mut Rng,
    ) -> Verdict {
        Verdict::Accept
    }

    /// The packet would wait, `wire_bytes` long: whether it fits.
    #[inline(always)]
    fn admits(&self, _q: Occupancy, _wire_bytes: u32) -> bool {
        true
    }

    /// The packet waits (it was admitted).
    #[inline(always)]
    fn on_enqueue(&mut self, _q: Occupancy, _p: &Packet) -> Verdict {
        Verdict::Accept
    }

    /// The discipline bounds the queue (a link into a host without a bound of its own gets the
    /// bottleneck's buffer when hosts can pause it: `host.rs`).
    fn bounds_queue(&self) -> bool {
        false
    }
}

/// The registry: `Variant: module::Type`, one line per discipline. Declares each module and
/// builds the `Discipline` enum, whose `QueueDiscipline` impl dispatches by a match.
macro_rules! disciplines {
    ($($variant:ident: $module:ident::$ty:ident),* $(,)?) => {
        $(pub(crate) mod $module;)*

        /// Any registered discipline (static dispatch).
        pub(crate) enum Discipline {
            $($variant($module::$ty),)*
        }

        $(impl From<$module::$ty> for Discipline {
            fn from(d: $module::$ty) -> Discipline {
                Discipline::$variant(d)
            }
        })*

        impl Discipline {
            /// The stages this discipline acts at: (arrival, admission, enqueue).
            fn stages(&self) -> (bool, bool, bool) {
                match self {
                    $(Discipline::$variant(_) => (
                        <$module::$ty as QueueDiscipline>::ON_ARRIVAL,
                        <$module::$ty as QueueDiscipline>::ADMITS,
                        <$module::$ty as QueueDiscipline>::ON_ENQUEUE,
                    ),)*
                }
            }
        }

        impl QueueDiscipline for Discipline {
            #[inline(always)]
            fn on_arrival(&mut self, q: Occupancy, idle_ns: Nanos, p: &Packet, rng: &mut Rng)
                -> Verdict {
                match self {
                    $(Discipline::$variant(d) => d.on_arrival(q, idle_ns, p, rng),)*
                }
            }
            #[inline(always)]
            fn admits(&self, q: Occupancy, wire_bytes: u32) -> bool {
                match self {
                    $(Discipline::$variant(d) => d.admits(q, wire_bytes),)*
                }
            }
            #[inline(always)]
            fn on_enqueue(&mut self, q: Occupancy, p: &Packet) -> Verdict {
                match self {
                    $(Discipline::$variant(d) => d.on_enqueue(q, p),)*
                }
            }
            fn bounds_queue(&self) -> bool {
                match self {
                    $(Discipline::$variant(d) => d.bounds_queue(),)*
                }
            }
        }
    };
}

disciplines! {
    DropTail: droptail::DropTail,
    Red: red::Red,
    StepEcn: step_ecn::StepEcn,
}

/// A link's disciplines, in configuration order (empty: the link decides nothing).
#[derive(Default)]
pub(crate) struct Qdisc {
    chain: Vec<Discipline>,
    /// Some discipline acts at the arrival, admission, enqueue stage.
    arrival: bool,
    admission: bool,
    enqueue: bool,
}

impl Qdisc {
    /// Append `d` to the chain.
    pub fn push(&mut self, d: impl Into<Discipline>) {
        let d = d.into();
        let (arrival, admission, enqueue) = d.stages();
        self.arrival |= arrival;
        self.admission |= admission;
        self.enqueue |= enqueue;
        self.chain.push(d);
    }

    /// Some discipline acts at the arrival stage.
    #[inline(always)]
    pub fn has_arrival_stage(&self) -> bool {
        self.arrival
    }

    /// Some discipline acts at the admission stage.
    #[inline(always)]
    pub fn has_admission_stage(&self) -> bool {
        self.admission
    }

    /// Some discipline acts at the enqueue stage.
    #[inline(always)]
    pub fn has_enqueue_stage(&self) -> bool {
        self.enqueue
    }

    /// No discipline: the link decides nothing about its packets.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.chain.is_empty()
    }

    /// Some discipline bounds the queue.
    pub fn bounds_queue(&self) -> bool {
        self.chain.iter().any(|d| d.bounds_queue())
    }

    /// The arrival stage: the first `Drop`, else `Mark` if any marks.
    #[inline]
    pub fn on_arrival(
        &mut self,
        q: Occupancy,
        idle_ns: Nanos,
        p: &Packet,
        rng: &mut Rng,
    ) -> Verdict {
        let mut v = Verdict::Accept;
        for d in &mut self.chain {
            match d.on_arrival(q, idle_ns, p, rng) {
                Verdict::Drop => return Verdict::Drop,
                Verdict::Mark => v = Verdict::Mark,
                Verdict::Accept => {}
            }
        }
        v
    }

    /// The admission stage: every discipline admits the packet.
    #[inline]
    pub fn admits(&self, q: Occupancy, wire_bytes: u32) -> bool {
        self.chain.iter().all(|d| d.admits(q, wire_bytes))
    }

    /// The enqueue stage: `Mark` if any marks.
    #[inline]
    pub fn on_enqueue(&mut self, q: Occupancy, p: &Packet) -> Verdict {
        let mut v = Verdict::Accept;
        for d in &mut self.chain {
            if d.on_enqueue(q, p) == Verdict::Mark {
                v = Verdict::Mark;
            }
        }
        v
    }
}
