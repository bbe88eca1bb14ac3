//! Links: one direction of a wire, as the parts it has — the egress queue and its discipline
//! (`queue/`'s native chain, or a path-model discipline: `aqm.rs`), the transmitter, the
//! propagation pipe, and in some fabrics PFC (`pfc.rs`) and the switch's shared buffer
//! (`pool.rs`). What a link does with a packet (enqueue, serialize, propagate, hand over) is in
//! `network.rs`; the speed-up state lives apart (`speedup/`).

pub(crate) mod aqm;
pub(crate) mod path;
pub(crate) mod pool;
pub(crate) mod queue;

use crate::pfc::LinkPfc;
use crate::rng::Rng;
use crate::serializer;
use crate::speedup::FastPath;
use crate::EvKind;
use cc::Nanos;
use queue::Qdisc;
use std::collections::VecDeque;
use transport::Packet;

pub(crate) type LinkId = u32;

/// Where a link delivers its packets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum NodeKind {
    /// A router: forward along the packet's route.
    Router,
    /// A host: hand to the flow's endpoint.
    Host,
}

/// Per-queue counters.
#[derive(Clone, Debug, Default)]
pub struct QueueStats {
    /// Every packet the queue dropped: at a full buffer (or shared pool), or by its discipline.
    pub drops: u64,
    /// Of `drops`, those the discipline chose (RED's early drops; an AQM's control law).
    pub drops_aqm: u64,
    pub random_losses: u64,
    pub ce_marks: u64,
    pub tx_bytes: u64,
    /// Packets a policer dropped before the queue (`path.rs`).
    pub policer_drops: u64,
    /// PAUSE/XON frames sent (switch output port) or received (paused link); see `pfc.rs`.
    pub pause_frames: u64,
    pub max_bytes_interval: u64,
    /// Integral of occupancy (bytes · ns) since the last sample.
    pub(crate) occ_integral: u128,
    pub(crate) last_change_ns: Nanos,
    pub(crate) busy_ns_interval: u64,
}

/// One direction of a wire: its parts are the egress queue (packets, bytes, the discipline
/// that decides what enters), the transmitter (one packet serializing at `rate_bps`, or a
/// timestamped schedule), and the propagation pipe to the far end. A link in a lossless
/// fabric also has PFC state (`pfc.rs`), a switch port may draw on the shared buffer
/// (`pool.rs`), and the speed-up machinery keeps its per-link state apart (`speedup/`).
pub(crate) struct Link {
    pub(crate) rate_bps: u64,
    pub(crate) delay_ns: Nanos,
    pub(crate) to: NodeKind,
    /// The link is a host NIC: its departures release TSQ budget of the sending flow, as
    /// events (a lazily counted NIC's are counted when TSQ looks: `FastPath::lazy_tsq`).
    pub(crate) is_sender_nic: bool,
    /// Bernoulli loss of every packet offered, before the queue discipline sees it.
    pub(crate) loss: f64,
    /// The link's random stream: its losses, its disciplines' draws (RED) and its jitter.
    pub(crate) rng: Rng,

    // The egress queue.
    /// What the queue decides about the packets it is offered (`link/queue/`): drop-tail,
    /// RED, step ECN marking; none on most links.
    pub(crate) qdisc: Qdisc,
    /// A queue discipline of the path model that holds the packets itself and decides at
    /// enqueue and dequeue time (`aqm.rs`); the link is then event-driven, and `qdisc` and
    /// `queue` stay empty. None on every link whose queue is the native drop-tail FIFO.
    pub(crate) aqm: Option<Box<aqm::LinkAqm>>,
    /// Packets waiting (an event-driven link; a timestamped one's wait in `ser`).
    pub(crate) queue: VecDeque<Packet>,
    pub(crate) q_bytes: u64,
    /// When the link last went idle (queue and serializer empty), for RED's idle decay.
    pub(crate) idle_since_ns: Nanos,
    pub(crate) stats: QueueStats,

    // The transmitter.
    /// Packet being serialized, if any (an event-driven link).
    pub(crate) in_tx: Option<Packet>,
    pub(crate) tx_start_ns: Nanos,
    /// Serialization times at `rate_bps`, exact over many packets.
    pub(crate) tx_clock: TxClock,
    /// 802.3x: the transmitter starts no new packet before this time (PAUSE frames from the
    /// switch, `pfc.rs`, or from the host it feeds, `host.rs`).
    pub(crate) paused_until: Nanos,
    /// A timestamped link's service schedule (unused otherwise; `serializer.rs`).
    pub(crate) ser: serializer::Serializer,

    // The far end.
    /// Packets propagating, with their arrival times (FIFO because the delay is constant).
    pub(crate) pipe: VecDeque<(Nanos, Packet)>,
    /// Host transmit timing jitter: each packet reaches the far end up to this much later
    /// (uniform, FIFO kept); 0 = exact. See `topology.rs`.
    pub(crate) jitter_ns: u64,
    /// This link's far end is a cut-through switch: packets are handed over once this many
    /// bytes have arrived (0 = store-and-forward; `topology.rs`).
    pub(crate) cut_through_bytes: u32,

    // Parts a link has in some fabrics only.
    /// Lossless fabric: pausing, being paused, ingress accounting (`pfc.rs`).
    pub(crate) pfc: Option<Box<LinkPfc>>,
    /// The queue draws on the switch's shared buffer (`pool.rs`).
    pub(crate) in_pool: bool,
    /// The link feeds a host whose NIC may pause it (`host.rs`, `flow_control`).
    pub(crate) host_paused: bool,

    /// The speed-up machinery's view of the link (`speedup/`): timestamped, passive, folded,
    /// served ahead. Set once the topology and the flows are built.
    pub(crate) fast: FastPath,

    /// A timed link's state (`speedup/timed.rs`); None on every other link.
    pub(crate) timed: Option<Box<crate::speedup::timed::TimedWire>>,

    /// Schedules, traces, policer, burst loss, jitter, reordering, aggregation (`path.rs`);
    /// none on most links.
    pub(crate) path: Option<Box<path::PathParts>>,
    /// A capture of what leaves the link (`capture.links`): its capture point's code in the
    /// `packets` table (`capture::TAP_SENDER`, 0, is no link: not captured). A captured link
    /// is event-driven, so that each departure is a moment of the run (`on_tx_done`).
    pub(crate) tap: u16,
}

/// Serialization times at a link's rate, carrying the sub-nanosecond remainder in picoseconds
/// so that rounding never accumulates into a rate error (1 ns per packet would be 0.8 % at
/// 100 Gbit/s).
#[derive(Clone, Debug, Default)]
pub(crate) struct TxClock {
    residual_ps: u64,
    /// The last packet size serialized and its exact time, in whole ns and the ps left over.
    memo_bytes: u32,
    memo_ns: Nanos,
    memo_rem_ps: u64,
}

impl TxClock {
    /// Serialization time of `bytes` at `rate_bps` in ns, carrying the picosecond remainder:
    /// the exact time plus the remainder carried, in whole ns, and the new remainder. The memo
    /// keeps the exact time split into ns and ps, so that this is an add and a compare, not a
    /// division by 1000 (a multiply-and-shift on the path to every arrival time, ~1.5 % of a
    /// run).
    #[inline]
    pub(crate) fn tx_time_ns(&mut self, rate_bps: u64, bytes: u32) -> Nanos {
        if bytes != self.memo_bytes {
            // A 128-bit division is a tenth of a packet's cost; a link carries one or two sizes.
            let ps = (bytes as u128 * 8 * 1_000_000_000_000u128 / rate_bps as u128) as u64;
            self.memo_bytes = bytes;
            self.memo_ns = ps / 1000;
            self.memo_rem_ps = ps % 1000;
        }
        // (memo_ns·1000 + memo_rem + residual) / 1000, with memo_rem and residual below 1000.
        let rem = self.memo_rem_ps + self.residual_ps;
        let carry = rem >= 1000;
        self.residual_ps = if carry { rem - 1000 } else { rem };
        self.memo_ns + carry as u64
    }
}

/// Data packets of each flow inside a part of a link that does not list what it holds (a
/// path-model discipline, the path's timing stages), by flow index, grown on demand: the
/// conservation check counts them as still in the network.
#[derive(Clone, Debug, Default)]
pub(crate) struct DataHeld(Vec<u64>);

impl DataHeld {
    /// `p` entered (true) or left (false) the part; ACKs are not counted.
    #[inline]
    pub(crate) fn track(&mut self, p: &Packet, entered: bool) {
        if !p.is_data {
            return;
        }
        let f = p.flow as usize;
        if f >= self.0.len() {
            self.0.resize(f + 1, 0);
        }
        if entered {
            self.0[f] += 1;
        } else {
            self.0[f] -= 1;
        }
    }

    /// Each flow's count added to `n` (indexed by flow).
    pub(crate) fn add_to(&self, n: &mut [u64]) {
        for (f, &k) in self.0.iter().enumerate() {
            n[f] += k;
        }
    }
}

impl Link {
    pub(crate) fn new(rate_bps: u64, delay_ns: Nanos, to: NodeKind, rng: Rng) -> Link {
        Link {
            rate_bps,
            delay_ns,
            to,
            is_sender_nic: false,
            loss: 0.0,
            rng,
            qdisc: Qdisc::default(),
            aqm: None,
            queue: VecDeque::new(),
            q_bytes: 0,
            idle_since_ns: 0,
            stats: QueueStats::default(),
            in_tx: None,
            tx_start_ns: 0,
            tx_clock: TxClock::default(),
            paused_until: 0,
            ser: serializer::Serializer::default(),
            pipe: VecDeque::new(),
            jitter_ns: 0,
            cut_through_bytes: 0,
            pfc: None,
            in_pool: false,
            host_paused: false,
            fast: FastPath::default(),
            timed: None,
            path: None,
            tap: crate::capture::TAP_SENDER,
        }
    }

    /// Whether the link qualifies as timestamped (`FastPath::timestamped`). A sender NIC does if it
    /// has no propagation delay: TSQ reacts to its departures, and a departure is then the
    /// moment its packet reaches the far end, so its pipe head's event is the departure
    /// (`TxDone`, in the departures' place in an instant's order; `on_nic_departure`). With a
    /// delay the departure and the arrival are two moments, and the NIC stays event-driven.
    pub(crate) fn can_be_timestamped(&self) -> bool {
        (!self.is_sender_nic || self.delay_ns == 0) && self.can_be_timestamped_nic()
    }

    /// Whether the link qualifies as *timed* (`speedup/timed.rs`): timestamped though its wire
    /// is cut-through or jittered or it sends PAUSE at egress — every part a link may have but
    /// PAUSE received (unless ignored), ingress accounting, the shared pool, a path-model
    /// discipline, the host model's pause, path stages and capture. With a propagation delay
    /// (an arrival is then always a moment after the departure that fixes it). A sender NIC
    /// qualifies only with its departures counted lazily (`speedup/nic.rs`). Not a jittered
    /// link whose loss or RED draws from its random stream: the jitter, drawn on acceptance,
    /// would take other numbers than at the packet's start.
    pub(crate) fn can_be_timed(&self) -> bool {
        (self.jitter_ns == 0 || (self.loss == 0.0 && !self.qdisc.has_arrival_stage()))
            && !self.may_be_paused()
            && self.aqm.is_none()
            && self.pfc.as_deref().is_none_or(LinkPfc::lets_link_be_timed)
            && self.delay_ns > 0
            && !self.in_pool
            && !self.host_paused
            && self.path.is_none()
            && self.tap == crate::capture::TAP_SENDER
    }

    /// The link has a part that only a timed link handles (`can_be_timed`): cut-through,
    /// jitter, PAUSE sent (or received and ignored).
    pub(crate) fn has_timed_parts(&self) -> bool {
        self.cut_through_bytes > 0
            || self.jitter_ns > 0
            || self.pfc.as_deref().is_some_and(|p| !p.lets_link_be_timestamped())
    }

    /// A PAUSE frame may stop this link's transmitter.
    pub(crate) fn may_be_paused(&self) -> bool {
        self.pfc.as_deref().is_some_and(|p| p.pause_quanta_ns > 0 && !p.ignores_pause)
    }

    /// `can_be_timestamped` but for a sender NIC's delay: nothing stops the serializer or
    /// watches its departures but TSQ, which a lazily counted NIC serves without departure
    /// events (`speedup/nic.rs`).
    pub(crate) fn can_be_timestamped_nic(&self) -> bool {
        self.aqm.is_none() && self.timestamped_but_for_its_discipline()
    }

    /// `can_be_timestamped_nic` but for a discipline of the path model (`aqm.rs`), which keeps
    /// the transmitter event-driven: otherwise its packets leave in the order it serves them
    /// and reach the far end `delay_ns` after they leave, watched by nothing on the way (no
    /// PFC, shared pool, cut-through, jitter, host pause, path stages or capture), so such a
    /// link may fold its router hop too (`speedup/fold.rs`).
    pub(crate) fn timestamped_but_for_its_discipline(&self) -> bool {
        self.pfc.as_deref().is_none_or(LinkPfc::lets_link_be_timestamped)
            && !self.in_pool
            && self.cut_through_bytes == 0
            && self.jitter_ns == 0
            && !self.host_paused
            && self.path.is_none()
            && self.tap == crate::capture::TAP_SENDER
    }

    /// A timestamped link that decides nothing about the packets it carries — no loss, no
    /// queue discipline (buffer limit, ECN, RED), not in the shared pool, not reported in the
    /// queue table (`monitored`): its queue is a pure function of its arrivals, so it can
    /// accept a packet ahead of time from the single link that feeds it (`speedup/fold.rs`).
    pub(crate) fn is_passive(&self, monitored: bool) -> bool {
        self.fast.timestamped
            && !self.fast.timed
            && !monitored
            && self.loss == 0.0
            && self.qdisc.is_empty()
    }

    /// A packet of `wire_bytes` joins the queue (waits behind the one serializing).
    #[inline(always)]
    pub(crate) fn count_queued(&mut self, wire_bytes: u32) {
        self.q_bytes += wire_bytes as u64;
        if self.q_bytes > self.stats.max_bytes_interval {
            self.stats.max_bytes_interval = self.q_bytes;
        }
    }

    /// Bring a timestamped link's queue state to `now`: apply every start (the queue shrinks)
    /// and departure (bytes sent, busy time) up to `now` at its own time, as the event-driven
    /// serializer would have. `last_sample_ns` bounds the busy time counted in this interval.
    pub(crate) fn replay(&mut self, now: Nanos, last_sample_ns: Nanos) {
        while let Some(c) = self.ser.next_change(now) {
            match c {
                serializer::Change::Start(s) => {
                    self.note_occupancy(s.start_ns);
                    self.q_bytes -= s.wire_bytes as u64;
                }
                serializer::Change::Done(s) => {
                    self.stats.tx_bytes += s.wire_bytes as u64;
                    self.stats.busy_ns_interval +=
                        s.done_ns.saturating_sub(s.start_ns.max(last_sample_ns));
                    self.idle_since_ns = s.done_ns;
                }
            }
        }
    }

    /// The queue as an arriving packet finds it (a timestamped link: replayed to now).
    #[inline(always)]
    pub(crate) fn occupancy(&self) -> queue::Occupancy {
        queue::Occupancy { bytes: self.q_bytes, packets: self.waiting_pkts() as u64 }
    }

    /// `occupancy` of a timestamped link (replayed to now), without asking which kind it is.
    #[inline(always)]
    pub(crate) fn timestamped_occupancy(&self) -> queue::Occupancy {
        debug_assert!(self.fast.timestamped);
        queue::Occupancy { bytes: self.q_bytes, packets: self.ser.waiting_pkts() as u64 }
    }

    /// Nothing serializing (a timestamped link: nor waiting) at `now`.
    pub(crate) fn is_idle(&self, now: Nanos) -> bool {
        if self.fast.timestamped {
            self.ser.is_idle(now)
        } else {
            self.in_tx.is_none()
        }
    }

    /// Packets waiting in the queue (not serializing).
    pub(crate) fn waiting_pkts(&self) -> usize {
        if self.fast.timestamped {
            self.ser.waiting_pkts()
        } else if let Some(a) = self.aqm.as_deref() {
            a.packets()
        } else {
            self.queue.len()
        }
    }

    /// When the packet now serializing started, if one is.
    pub(crate) fn serving_since(&self) -> Option<Nanos> {
        if self.fast.timestamped {
            self.ser.serving_since()
        } else {
            self.in_tx.map(|_| self.tx_start_ns)
        }
    }

    #[inline]
    pub(crate) fn note_occupancy(&mut self, now: Nanos) {
        let dt = now - self.stats.last_change_ns;
        self.stats.occ_integral += self.q_bytes as u128 * dt as u128;
        self.stats.last_change_ns = now;
    }

    /// When a packet whose last (cut-through: header) bit leaves at `t` reaches the far end:
    /// propagation plus the host's timing jitter, never before the packet ahead of it.
    pub(crate) fn arrival_time(&mut self, t: Nanos) -> Nanos {
        let mut a = t + self.delay_ns;
        if self.jitter_ns > 0 {
            a += self.rng.next_u64() % (self.jitter_ns + 1);
            if let Some(&(last, _)) = self.pipe.back() {
                a = a.max(last);
            }
        }
        a
    }

    /// The event a packet at the head of this link's pipe has: its arrival at the far end, or,
    /// for a timestamped sender NIC (no propagation delay), its departure — which TSQ must see,
    /// and which takes the departures' place in an instant's order. (A lazily counted NIC is
    /// no `is_sender_nic`: its pipe holds arrivals; `speedup/nic.rs`.)
    #[inline]
    pub(crate) fn pipe_event(&self) -> EvKind {
        if self.is_sender_nic && self.fast.timestamped {
            EvKind::TxDone
        } else {
            EvKind::Arrive
        }
    }

    /// Put `p` in the propagation pipe, to arrive at `arrive`, its hop advanced to `next_hop`
    /// (the index of the link it enters next, which `hand_over` reads). The hop is written into
    /// the pipe's copy, not into `p` before the copy: a one-byte store into a packet that is
    /// then copied whole stalls the copy (a narrow store cannot be forwarded to the wide loads
    /// that read it back).
    #[inline(always)]
    pub(crate) fn pipe_push(&mut self, arrive: Nanos, p: Packet, next_hop: u8) {
        if self.pipe.len() == self.pipe.capacity() {
            self.grow_pipe();
        }
        self.pipe.push_back((arrive, p));
        if let Some((_, q)) = self.pipe.back_mut() {
            q.hop = next_hop;
        }
    }

    /// A full pipe grows by a quarter, not twice over (`VecDeque`'s own step): a long pipe's
    /// ring is most of a 100 Gbit/s × 150 ms run's memory, and doubling left up to half of it
    /// unused for the rest of the run.
    #[cold]
    #[inline(never)]
    pub(crate) fn grow_pipe(&mut self) {
        let c = self.pipe.capacity();
        self.pipe.reserve_exact((c / 4).max(4));
    }

    /// Serialization time of `bytes` in ns (`TxClock`).
    #[inline(always)]
    pub(crate) fn tx_time_ns(&mut self, bytes: u32) -> Nanos {
        self.tx_clock.tx_time_ns(self.rate_bps, bytes)
    }

    /// This output port charges its packets to the ingress port they came in on (`pfc.rs`).
    #[inline(always)]
    pub(crate) fn ingress_acct(&self) -> bool {
        self.pfc.as_deref().is_some_and(|p| p.ingress_acct)
    }

    /// The link's PFC part, created on first use (the topology's lossless set-up).
    pub(crate) fn pfc_mut(&mut self) -> &mut LinkPfc {
        self.pfc.get_or_insert_with(Box::default)
    }
}
