//! Queue disciplines that hold their own packets and decide at enqueue and at dequeue time —
//! one trait, one file per discipline beside its spec:
//!
//! | file | discipline | reference |
//! |---|---|---|
//! | `fifo.rs` | drop-tail FIFO, optional step ECN marking (DCTCP's K) | — |
//! | `codel.rs` | CoDel, with `ce_threshold` | RFC 8289; Linux `include/net/codel_impl.h` |
//! | `fq_codel.rs` | FQ-CoDel: DRR over per-flow CoDel queues, new/old lists | RFC 8290; Linux `sch_fq_codel.c` |
//! | `pie.rs` | PIE: a PI controller of the queueing delay, drop/mark at enqueue | RFC 8033; Linux `sch_pie.c` |
//! | `dualpi2.rs` | DualPI2: L4S queue (ECT(1)/CE) with a step threshold, coupled classic PI² | RFC 9332; Linux `sch_dualpi2.c` |
//! | `fq.rs` | fq: per-flow queues, each paced (its sender's EDT stamps, its pacing rate, `maxrate`), DRR among the flows due | Linux `sch_fq.c` |
//!
//! A link calls [`Aqm::enqueue`] for every packet that reaches its queue (after random loss and
//! any policer), and [`Aqm::dequeue`] whenever its transmitter is free. A discipline keeps the
//! time each packet entered (its sojourn is measured at dequeue), and in a [`Held`] what it
//! holds, its buffer limit ([`Limit`]: every discipline tail-drops beyond it) and its counters
//! ([`AqmStats`]).
//!
//! Adding a discipline: one file here with a type that implements [`Aqm`] and is built from its
//! parameters, and one line in the `registry!` below (its `QdiscSpec` variant, the `AnyAqm`
//! variant, static dispatch by a match).

/// The [`Aqm`] accessors of a discipline that keeps its [`Held`] in its field `held`.
macro_rules! held_in_field {
    () => {
        fn held(&self) -> &Held {
            &self.held
        }
        fn held_mut(&mut self) -> &mut Held {
            &mut self.held
        }
    };
}

mod backlog;
mod chains;
pub mod codel;
pub mod dualpi2;
pub mod fifo;
pub mod fq;
pub mod fq_codel;
pub mod pie;
mod stats;
#[cfg(test)]
mod testbed;
#[cfg(test)]
mod testbed_pie;

pub use backlog::Held;
pub use stats::{AqmStats, ClassStats, SojournHist};

use crate::{Nanos, PathPacket, Random};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Why a packet did not make it through a queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DropCause {
    /// The buffer was full (tail drop at the limit; FQ-CoDel's drop from the fattest flow).
    Overflow,
    /// The discipline chose to drop it (CoDel's control law, PIE's or DualPI2's probability).
    Aqm,
}

/// A buffer limit: bytes and/or packets (a packet that would exceed either is dropped).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Limit {
    pub bytes: Option<u64>,
    pub packets: Option<u64>,
}

impl Limit {
    /// Whether a packet of `wire_bytes` fits beside `bytes`/`packets` already queued.
    #[inline]
    pub fn admits(&self, bytes: u64, packets: u64, wire_bytes: u32) -> bool {
        self.bytes.is_none_or(|l| bytes + wire_bytes as u64 <= l)
            && self.packets.is_none_or(|l| packets < l)
    }
}

/// What a discipline may use besides its own state while it enqueues or dequeues: the link's
/// random numbers, and where it puts the packets it drops other than the one offered.
pub struct AqmIo<'a, P> {
    pub rng: &'a mut dyn Random,
    pub dropped: &'a mut Vec<(P, DropCause)>,
}

impl<'a, P> AqmIo<'a, P> {
    pub fn new(rng: &'a mut dyn Random, dropped: &'a mut Vec<(P, DropCause)>) -> AqmIo<'a, P> {
        AqmIo { rng, dropped }
    }
}

/// A queue discipline that holds its packets.
pub trait Aqm<P: PathPacket> {
    /// Offer packet `p` arriving at `now`. `Ok(())`: it waits (perhaps CE-marked); `Err`: it is
    /// dropped, handed back with the cause (the caller counts it and frees it). A discipline
    /// that drops at enqueue a packet other than `p` (FQ-CoDel's overflow drop from the longest
    /// queue) pushes that one to `io.dropped` and keeps `p`.
    fn enqueue(&mut self, now: Nanos, p: P, io: &mut AqmIo<'_, P>) -> Result<(), (P, DropCause)>;

    /// The next packet to transmit at `now`, or None if the queue is empty. Packets the
    /// discipline drops on the way (CoDel's dequeue drops) are pushed to `io.dropped`.
    fn dequeue(&mut self, now: Nanos, io: &mut AqmIo<'_, P>) -> Option<P>;

    /// What the discipline holds, its limit and its counters.
    fn held(&self) -> &Held;
    fn held_mut(&mut self) -> &mut Held;

    /// Bytes waiting.
    #[inline]
    fn bytes(&self) -> u64 {
        self.held().bytes()
    }
    /// Packets waiting.
    #[inline]
    fn packets(&self) -> u64 {
        self.held().packets()
    }
    /// Counters since the start (drops and marks by cause, sojourn times).
    fn stats(&self) -> &AqmStats {
        self.held().stats()
    }
    /// Change the buffer limit (a schedule's `buffer`); packets already queued stay.
    fn set_limit(&mut self, limit: Limit) {
        self.held_mut().set_limit(limit)
    }
    /// The link's rate changed (a schedule's `rate`); no discipline here reads it yet (PIE's
    /// rate-based delay estimate, RFC 8033 §5.2, is not modelled: it uses timestamps as Linux
    /// does by default).
    fn set_rate(&mut self, _rate_bps: u64) {}
    /// When `dequeue` returned None although packets wait (all of them paced to leave later,
    /// fq's throttled flows): the earliest time one may leave, to try again then. None: no
    /// packet waits, or one is ready now.
    fn next_ready_ns(&self) -> Option<Nanos> {
        None
    }
    /// Whether `dequeue` may return None while packets wait (a pacing discipline: fq). One
    /// that never does serves a packet whenever the transmitter is free, so its departures
    /// follow from its arrivals alone (the simulator then serves them lazily).
    fn holds_packets_back(&self) -> bool {
        false
    }
}

/// Why the emulator refuses fq's parameters: it would need the kernel's own fq on the senders'
/// egress, and this kernel has none.
const FQ_EMU: &str = "--backend emu would need the kernel's fq qdisc on the senders' egress \
     and this kernel has none; use --backend sim";

/// Why the emulator refuses RED: its link emulator has no RED (as for a link's `red` table).
const RED_EMU: &str = "the emu backend's link emulator has no RED (drop-tail and ECN step \
     marking only); use --backend sim";

/// A RED threshold as written: bytes, or packets (the simulator converts packets to bytes at
/// the largest data frame on the wire, 1538 B for a 1448-byte MSS).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum QueueSize {
    /// A size in bytes.
    Bytes(
        #[schemars(range(min = 1, max = 1_000_000_000_000u64))]
        #[schemars(extend("x-backends" = {"sim": "honoured", "emu": {"refused": RED_EMU}}))]
        u64,
    ),
    /// A number of packets.
    Packets(
        #[schemars(range(min = 1, max = 1_000_000_000))]
        #[schemars(extend("x-backends" = {"sim": "honoured", "emu": {"refused": RED_EMU}}))]
        u64,
    ),
}

impl QueueSize {
    /// Bytes, with a packet counting `frame_bytes`.
    pub fn bytes(self, frame_bytes: u32) -> u64 {
        match self {
            QueueSize::Bytes(b) => b,
            QueueSize::Packets(p) => p.saturating_mul(frame_bytes as u64),
        }
    }
}

/// RED's defaults (Floyd & Jacobson 1993's suggestions, as the simulator's `red` table).
pub mod red_defaults {
    /// Marking probability at `max_th`.
    pub fn max_p() -> f64 {
        0.1
    }
    /// EWMA weight w_q.
    pub fn weight() -> f64 {
        0.002
    }
}

/// A queue discipline as a scenario names it: `qdisc = { kind = "…", … }`, times in ns.
/// Each variant's parameters default to the Linux qdisc's defaults.
/// Bounds: a time at most a minute (far beyond any queue's control timescale), a count at
/// most 10⁹, so a typo is refused in one line rather than run.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum QdiscSpec {
    /// First in, first out; drops at the buffer limit (the link's `buffer`), marks ECN-capable
    /// packets above the link's ECN threshold if it has one.
    #[schemars(title = "Droptail")]
    Droptail {},
    /// CoDel (RFC 8289, Linux `sch_codel`): drops, or CE-marks with `ecn`, at dequeue once the
    /// time packets wait has stayed above `target_ns` for `interval_ns`, then ever faster
    /// (interval/sqrt(drops)) until it falls below. Tail-drops at the link's `buffer`
    /// (Linux's 1000 packets if the link sets none).
    #[schemars(title = "Codel")]
    Codel {
        /// Acceptable standing queueing delay (ns): a packet that waited less is never dropped.
        /// Linux's default, 5 ms.
        #[serde(default = "codel::default_target_ns")]
        #[schemars(extend("x-backends" = {"sim": "honoured", "emu": "honoured"}))]
        #[schemars(range(max = 60_000_000_000u64))]
        target_ns: u64,
        /// How long the delay must stay above target before the first drop, and the spacing
        /// of the first drops (ns): about the largest RTT of the flows. Linux's default, 100 ms.
        #[serde(default = "codel::default_interval_ns")]
        #[schemars(extend("x-backends" = {"sim": "honoured", "emu": "honoured"}))]
        #[schemars(range(max = 60_000_000_000u64))]
        interval_ns: u64,
        /// CE-mark every ECN-capable packet that waited longer than this (ns), whatever the
        /// control law says (DCTCP-style shallow marking). Unset (the default): off.
        #[serde(default)]
        #[schemars(extend("x-backends" = {"sim": "honoured", "emu": "honoured"}))]
        #[schemars(range(max = 60_000_000_000u64))]
        ce_threshold_ns: Option<u64>,
        /// CE-mark ECN-capable packets instead of dropping them. Off by default, as in Linux's
        /// `codel` (its `fq_codel` defaults to on).
        #[serde(default)]
        #[schemars(extend("x-backends" = {"sim": "honoured", "emu": "honoured"}))]
        ecn: bool,
    },
    /// FQ-CoDel (RFC 8290, Linux `sch_fq_codel`): packets hashed by flow into `flows` queues,
    /// each under its own CoDel, served by deficit round robin `quantum_bytes` at a time, with
    /// flows that just became active served first. Over the link's `buffer` (Linux's 10240
    /// packets if the link sets none) it drops from the head of the queue holding most bytes.
    #[schemars(title = "FqCodel")]
    FqCodel {
        /// Acceptable standing queueing delay per flow (ns). Linux's default, 5 ms.
        #[serde(default = "codel::default_target_ns")]
        #[schemars(extend("x-backends" = {"sim": "honoured", "emu": "honoured"}))]
        #[schemars(range(max = 60_000_000_000u64))]
        target_ns: u64,
        /// How long a flow's delay must stay above target before its first drop, and the
        /// spacing of the first drops (ns). Linux's default, 100 ms.
        #[serde(default = "codel::default_interval_ns")]
        #[schemars(extend("x-backends" = {"sim": "honoured", "emu": "honoured"}))]
        #[schemars(range(max = 60_000_000_000u64))]
        interval_ns: u64,
        /// CE-mark every ECN-capable packet that waited longer than this (ns), whatever the
        /// control law says. Unset (the default): off.
        #[serde(default)]
        #[schemars(extend("x-backends" = {"sim": "honoured", "emu": "honoured"}))]
        #[schemars(range(max = 60_000_000_000u64))]
        ce_threshold_ns: Option<u64>,
        /// CE-mark ECN-capable packets instead of dropping them. On by default, as in Linux.
        #[serde(default = "fq_codel::default_ecn")]
        #[schemars(extend("x-backends" = {"sim": "honoured", "emu": "honoured"}))]
        ecn: bool,
        /// Bytes a flow may send per round of the round robin (at least 256). Linux's
        /// default: the device MTU with its Ethernet header, 1514.
        #[serde(default = "fq_codel::default_quantum_bytes")]
        #[schemars(range(min = 256, max = 1048576))]
        #[schemars(extend("x-backends" = {"sim": "honoured", "emu": "honoured"}))]
        quantum_bytes: u32,
        /// Number of flow queues that packets are hashed into (1 to 65536; flows that hash
        /// alike share a queue). Linux's default, 1024.
        #[serde(default = "fq_codel::default_flows")]
        #[schemars(range(min = 1, max = 65536))]
        #[schemars(extend("x-backends" = {"sim": "honoured", "emu": "honoured"}))]
        flows: u32,
        /// Most packets dropped at once from the fullest queue when the buffer overflows
        /// (up to half of that queue's bytes; at least 1). Linux's default, 64.
        #[serde(default = "fq_codel::default_drop_batch_packets")]
        #[schemars(range(min = 1, max = 65_536))]
        #[schemars(extend("x-backends" = {"sim": "honoured", "emu": "honoured"}))]
        drop_batch_packets: u32,
    },

    /// PIE (RFC 8033, Linux `sch_pie`): drops arrivals at random with a probability that a PI
    /// controller of the queueing delay updates every `tupdate_ns`; a queue that was quiet lets
    /// a burst of up to `max_burst_ns` through. Drops at the link's buffer (1000 packets if the
    /// link has none).
    #[schemars(title = "Pie")]
    Pie {
        /// Queueing delay the controller holds (ns; Linux `target`, 15 ms).
        #[serde(default = "pie::default_target_ns")]
        #[schemars(extend("x-backends" = {"sim": "honoured", "emu": "honoured"}))]
        #[schemars(range(max = 60_000_000_000u64))]
        target_ns: u64,
        /// Interval between probability updates (ns; Linux `tupdate`, 15 ms).
        #[serde(default = "pie::default_tupdate_ns")]
        #[schemars(extend("x-backends" = {"sim": "honoured", "emu": "honoured"}))]
        #[schemars(range(max = 60_000_000_000u64))]
        tupdate_ns: u64,
        /// Integral gain, per second of delay above target (Hz; Linux `alpha` 2 = 0.125 Hz),
        /// scaled down while the probability is small (RFC 8033 §4.2).
        #[serde(default = "pie::default_alpha")]
        #[schemars(extend("x-backends" = {"sim": "honoured", "emu": "honoured"}))]
        alpha: f64,
        /// Proportional gain, per second of delay change (Hz; Linux `beta` 20 = 1.25 Hz).
        #[serde(default = "pie::default_beta")]
        #[schemars(extend("x-backends" = {"sim": "honoured", "emu": "honoured"}))]
        beta: f64,
        /// Burst allowance: no early drop for this long after the queue was quiet (ns; 150 ms).
        #[serde(default = "pie::default_max_burst_ns")]
        #[schemars(extend("x-backends" = {"sim": "honoured", "emu": "honoured"}))]
        #[schemars(range(max = 60_000_000_000u64))]
        max_burst_ns: u64,
        /// CE-mark ECN-capable packets instead of dropping them while the probability is at or
        /// below `mark_ecn_threshold` (Linux `ecn`, off).
        #[serde(default)]
        #[schemars(extend("x-backends" = {"sim": "honoured", "emu": "honoured"}))]
        ecn: bool,
        /// Probability (0..1) above which ECN-capable packets are dropped too (Linux: 0.1).
        #[serde(default = "pie::default_mark_ecn_threshold")]
        #[schemars(extend("x-backends" = {"sim": "honoured", "emu": "honoured"}))]
        mark_ecn_threshold: f64,
    },
    /// DualPI2 (RFC 9332, Linux `sch_dualpi2`): ECT(1) and CE packets wait in a low-latency
    /// queue marked at a step threshold and with k·p', the others in a classic queue dropped or
    /// marked with p'², p' from a PI controller of the queueing delay; a weighted round robin
    /// gives the L queue priority. Both share the link's buffer (10000 packets if none).
    #[schemars(title = "DualPI2")]
    #[serde(rename = "dualpi2")]
    DualPi2 {
        /// Classic queueing delay the PI controller holds (ns; Linux `target`, 15 ms).
        #[serde(default = "dualpi2::default_target_ns")]
        #[schemars(extend("x-backends" = {"sim": "honoured", "emu": "honoured"}))]
        #[schemars(range(max = 60_000_000_000u64))]
        target_ns: u64,
        /// Interval between updates of the base probability p' (ns; Linux `tupdate`, 16 ms).
        #[serde(default = "dualpi2::default_tupdate_ns")]
        #[schemars(extend("x-backends" = {"sim": "honoured", "emu": "honoured"}))]
        #[schemars(range(max = 60_000_000_000u64))]
        tupdate_ns: u64,
        /// Integral gain, p' per second of delay above target per update (Hz; 0.16).
        #[serde(default = "dualpi2::default_alpha")]
        #[schemars(extend("x-backends" = {"sim": "honoured", "emu": "honoured"}))]
        alpha: f64,
        /// Proportional gain, p' per second of delay change per update (Hz; 3.2).
        #[serde(default = "dualpi2::default_beta")]
        #[schemars(extend("x-backends" = {"sim": "honoured", "emu": "honoured"}))]
        beta: f64,
        /// L-queue sojourn above which an L4S packet is CE-marked (ns; Linux `step_thresh`, 1 ms).
        #[serde(default = "dualpi2::default_step_threshold_ns")]
        #[schemars(extend("x-backends" = {"sim": "honoured", "emu": "honoured"}))]
        #[schemars(range(max = 60_000_000_000u64))]
        step_threshold_ns: u64,
        /// Coupling factor k: the L queue's coupled marking probability is k·p' (Linux 2).
        #[serde(default = "dualpi2::default_coupling_factor")]
        #[schemars(extend("x-backends" = {"sim": "honoured", "emu": "honoured"}))]
        coupling_factor: f64,
        /// Classic queue's share of the round robin while both queues wait, in percent (Linux
        /// `c_protection`, 10): the L queue gets the rest.
        #[serde(default = "dualpi2::default_c_protection_percent")]
        #[schemars(extend("x-backends" = {"sim": "honoured", "emu": "honoured"}))]
        c_protection_percent: u8,
        /// When k·p' exceeds 1 (overload), drop L4S packets with p'² instead of only marking
        /// them, and drop classic ECN packets rather than mark them (Linux `drop_overload`, on).
        #[serde(default = "dualpi2::default_drop_overload")]
        #[schemars(extend("x-backends" = {"sim": "honoured", "emu": "honoured"}))]
        drop_overload: bool,
    },
    /// Linux's default host qdisc, `pfifo_fast`, as every packet of one priority band sees it:
    /// a FIFO that drops at the link's buffer.
    #[schemars(title = "PfifoFast")]
    PfifoFast {},
    /// Linux `fq` (`sch_fq`), the host qdisc BBR is deployed with: a queue per flow, each
    /// paced — at the earliest departure times its sender stamped (TCP since Linux 4.20), else
    /// at its socket's pacing rate — and capped at `maxrate_bps`; deficit round robin among
    /// the flows whose packets are due. Drops at the link's buffer (10000 packets if none).
    #[schemars(title = "Fq")]
    Fq {
        /// Bytes a flow may send per round of the round robin (Linux `quantum`, 2 × 1514).
        #[serde(default = "fq::default_quantum_bytes")]
        #[schemars(range(min = 256, max = 1048576))]
        #[schemars(extend("x-backends" = {"sim": "honoured", "emu": {"refused": FQ_EMU}}))]
        quantum_bytes: u32,
        /// Credit of a flow seen for the first time: its first burst (Linux `initial_quantum`,
        /// 10 × 1514).
        #[serde(default = "fq::default_initial_quantum_bytes")]
        #[schemars(range(max = 1073741824))]
        #[schemars(extend("x-backends" = {"sim": "honoured", "emu": {"refused": FQ_EMU}}))]
        initial_quantum_bytes: u32,
        /// A flow idle longer than this (ns) gets at least a quantum of credit back when it
        /// sends again (Linux `flow_refill_delay`, 40 ms).
        #[serde(default = "fq::default_flow_refill_delay_ns")]
        #[schemars(range(max = 10_000_000_000u64))]
        #[schemars(extend("x-backends" = {"sim": "honoured", "emu": {"refused": FQ_EMU}}))]
        flow_refill_delay_ns: u64,
        /// Every flow's rate cap (bit/s; Linux `maxrate`). Unset (the default): none.
        #[serde(default)]
        #[schemars(range(min = 1, max = 10_000_000_000_000u64))]
        #[schemars(extend("x-backends" = {"sim": "honoured", "emu": {"refused": FQ_EMU}}))]
        maxrate_bps: Option<u64>,
        /// CE-mark an ECN-capable packet that leaves later than it was due by more than this
        /// (ns; Linux `ce_threshold`). Unset (the default): off.
        #[serde(default)]
        #[schemars(range(max = 10_000_000_000u64))]
        #[schemars(extend("x-backends" = {"sim": "honoured", "emu": {"refused": FQ_EMU}}))]
        ce_threshold_ns: Option<u64>,
        /// Packets one flow may hold (Linux `flow_limit`, 100). The simulator enqueues
        /// segments where Linux enqueues TSO skbs of up to 64 KB: raise it where TSQ lets a
        /// flow hold more than 100 segments (1 ms of pacing rate above ~1.2 Gbit/s).
        #[serde(default = "fq::default_flow_limit_packets")]
        #[schemars(range(min = 1, max = 1_000_000))]
        #[schemars(extend("x-backends" = {"sim": "honoured", "emu": {"refused": FQ_EMU}}))]
        flow_limit_packets: u32,
        /// A packet stamped to leave more than this far ahead (ns) is dropped (Linux
        /// `horizon`, 10 s, with `horizon_drop`).
        #[serde(default = "fq::default_horizon_ns")]
        #[schemars(range(min = 1, max = 3_600_000_000_000u64))]
        #[schemars(extend("x-backends" = {"sim": "honoured", "emu": {"refused": FQ_EMU}}))]
        horizon_ns: u64,
    },
    /// RED (Floyd & Jacobson 1993) on the EWMA of the queue, as a link's `red` table: the
    /// simulator runs that same native RED (marks ECN-capable packets, drops others, as Linux
    /// `sch_red` with `ecn`; `weight = 1` acts on the instantaneous queue), with `buffer` as the
    /// limit. Thresholds in bytes or packets.
    #[schemars(title = "RedQdisc")]
    Red {
        /// Average queue where marking starts: a size ("30KB") or packets ("20pkts").
        #[schemars(extend("x-backends" = {"sim": "honoured", "emu": {"refused": RED_EMU}}))]
        min_th: QueueSize,
        /// Average queue where the marking probability reaches `max_p`.
        #[schemars(extend("x-backends" = {"sim": "honoured", "emu": {"refused": RED_EMU}}))]
        max_th: QueueSize,
        /// Marking probability at `max_th` (default 0.1).
        #[serde(default = "red_defaults::max_p")]
        #[schemars(range(max = 1.0), extend("exclusiveMinimum" = 0.0))]
        #[schemars(extend("x-backends" = {"sim": "honoured", "emu": {"refused": RED_EMU}}))]
        max_p: f64,
        /// EWMA weight w_q (default 0.002).
        #[serde(default = "red_defaults::weight")]
        #[schemars(range(max = 1.0), extend("exclusiveMinimum" = 0.0))]
        #[schemars(extend("x-backends" = {"sim": "honoured", "emu": {"refused": RED_EMU}}))]
        weight: f64,
    },
}

impl QdiscSpec {
    /// Whether this is RED, which no discipline here implements: the simulator runs it as its
    /// native RED (the same as a link's `red` table), the emulator refuses it.
    pub fn is_red(&self) -> bool {
        matches!(self, QdiscSpec::Red { .. })
    }
}

impl Default for QdiscSpec {
    fn default() -> QdiscSpec {
        QdiscSpec::Droptail {}
    }
}

/// What every discipline is built with besides its own parameters.
#[derive(Clone, Copy, Debug, Default)]
pub struct LinkContext {
    /// The link's rate at the start (bit/s).
    pub rate_bps: u64,
    /// The link's buffer.
    pub limit: Limit,
    /// Step ECN marking of the FIFO (bytes waiting above which an ECN-capable arrival is marked).
    pub ecn_threshold_bytes: Option<u64>,
    pub ecn_threshold_packets: Option<u64>,
}

macro_rules! registry {
    ($($variant:ident => $module:ident::$ty:ident),* $(,)?) => {
        /// Any registered discipline (static dispatch: a match, no virtual call).
        pub enum AnyAqm<P> {
            $($variant($module::$ty<P>),)*
        }

        impl<P: PathPacket> AnyAqm<P> {
            /// The discipline `spec` names, on a link described by `ctx`.
            pub fn build(spec: &QdiscSpec, ctx: &LinkContext) -> AnyAqm<P> {
                match spec {
                    $(QdiscSpec::$variant { .. } => AnyAqm::$variant($module::$ty::new(spec, ctx)),)*
                    // The simulator maps RED to its native queue before building a discipline;
                    // the emulator's backend checks refuse it.
                    QdiscSpec::Red { .. } => panic!("RED is the simulator's native queue"),
                }
            }
        }

        impl<P: PathPacket> Aqm<P> for AnyAqm<P> {
            #[inline]
            fn enqueue(&mut self, now: Nanos, p: P, io: &mut AqmIo<'_, P>)
                -> Result<(), (P, DropCause)> {
                match self { $(AnyAqm::$variant(q) => q.enqueue(now, p, io),)* }
            }
            #[inline]
            fn dequeue(&mut self, now: Nanos, io: &mut AqmIo<'_, P>) -> Option<P> {
                match self { $(AnyAqm::$variant(q) => q.dequeue(now, io),)* }
            }
            #[inline]
            fn held(&self) -> &Held {
                match self { $(AnyAqm::$variant(q) => q.held(),)* }
            }
            fn held_mut(&mut self) -> &mut Held {
                match self { $(AnyAqm::$variant(q) => q.held_mut(),)* }
            }
            fn set_rate(&mut self, rate_bps: u64) {
                match self { $(AnyAqm::$variant(q) => q.set_rate(rate_bps),)* }
            }
            #[inline]
            fn next_ready_ns(&self) -> Option<Nanos> {
                match self { $(AnyAqm::$variant(q) => q.next_ready_ns(),)* }
            }
            fn holds_packets_back(&self) -> bool {
                match self { $(AnyAqm::$variant(q) => q.holds_packets_back(),)* }
            }
        }
    };
}

registry! {
    Droptail => fifo::Fifo,
    Codel => codel::Codel,
    FqCodel => fq_codel::FqCodel,
    Pie => pie::Pie,
    DualPi2 => dualpi2::DualPi2,
    PfifoFast => fifo::Fifo,
    Fq => fq::Fq,
}

#[cfg(test)]
mod tests {
    use super::QdiscSpec;

    /// Every parameter of every discipline carries its backends mark (the simulator's schema
    /// test reads them), and every discipline but drop-tail has parameters.
    #[test]
    fn every_field_says_which_backends_honour_it() {
        let schema = serde_json::to_value(schemars::schema_for!(QdiscSpec)).unwrap();
        let variants = schema["oneOf"].as_array().expect("a tagged union");
        assert_eq!(
            variants.len(),
            8,
            "droptail, codel, fq_codel, pie, dualpi2, pfifo_fast, fq, red"
        );
        for v in variants {
            let props = v["properties"].as_object().unwrap();
            let kind = v["properties"]["kind"].to_string();
            let mut fields = 0;
            for (name, f) in props {
                if name == "kind" {
                    continue;
                }
                let marks = &f["x-backends"];
                assert_eq!(marks["sim"], "honoured", "{kind}.{name}");
                // fq is a sender's qdisc, which the emulator would need the kernel's fq for.
                if kind.contains("\"fq\"") || kind.contains("\"red\"") {
                    assert!(marks["emu"]["refused"].is_string(), "{kind}.{name}");
                } else {
                    assert_eq!(marks["emu"], "honoured", "{kind}.{name}");
                }
                fields += 1;
            }
            let bare = kind.contains("droptail") || kind.contains("pfifo_fast");
            assert!(fields > 0 || bare, "{kind} has no parameters");
        }
    }
}
