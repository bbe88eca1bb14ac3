//! bbrlab's deterministic packet-level discrete-event simulator.
//!
//! The event loop spends its time on packets (as htsim does), not on framework:
//! - Time is integer nanoseconds; the event queue is a 4-ary heap ordered by (time, kind, id),
//!   so ties resolve the same way on every run, whatever was scheduled when.
//! - A link is an egress queue, a serializer and a propagation "pipe". Packets in propagation
//!   travel in FIFO order, so a link keeps them in a ring and only its head packet has an event:
//!   the heap holds O(links + flows) entries however many packets are in flight.
//! - A link that nothing pauses or watches (every link but host NICs, PFC-paused, pooled,
//!   cut-through or jittered ones) is *timestamped* (`serializer.rs`): a FIFO at a fixed rate
//!   fixes a packet's departure the moment it is accepted, so the packet goes straight into the
//!   pipe and the hop costs one event (its arrival) instead of two; the queue's state is
//!   replayed from the timestamps when someone reads it. A sender NIC keeps its `TxDone` (TSQ
//!   reacts to it); with no propagation delay it hands the packet on in the same event.
//! - A router hop into a *passive* link (timestamped, and it drops, marks or reports nothing)
//!   fed by one link alone costs no event: the feeding link hands the packet on when it accepts
//!   it, at the time it will reach the router (`speedup/fold.rs`; exact, as that link's arrivals are
//!   a FIFO's departures). In a dumbbell the receiver's access link and the senders' downlinks
//!   fold.
//! - A packet entering the passive link into its receiver host, or a passive link onto a
//!   watched link only it feeds (a receiver's NIC into the reverse bottleneck), is handed over
//!   at once, with the clock set to its arrival time, when nothing can run in between that
//!   would see the difference (`speedup/ahead.rs`: no sample, receiver timer or earlier
//!   packet before it). A delivered data packet then costs ≈ 1.5 events in a dumbbell: its
//!   departure from the sender's NIC and half its ACK's arrival at the sender.
//! - Packets are plain `Copy` structs in rings; nothing is allocated per packet or per event once
//!   the rings have grown to the working set.
//! - Each endpoint's timers are one slot each in an indexed heap (`timer_queue.rs`): a deadline
//!   moves where it sits. A timer that moves later keeps its earlier deadline, which re-arms
//!   itself when it fires early (lazy: ACKs move the RTO on every packet).
//! - Metrics are sampled on a timer into columnar buffers; nothing is logged per packet.
//!
//! Topology (dumbbell): every sender host has its own access link (NIC) into router R1; R1 → R2
//! is the bottleneck (rate, half the base RTT, drop-tail buffer, Bernoulli loss, optional CE
//! marking); R2 → the receiver host. ACKs return over mirror links. A flow's `extra_rtt` sits on
//! its sender's access links.
//!
//! ECN marking at the bottleneck: step marking on the instantaneous queue (DCTCP's K, in bytes
//! and/or packets: an ECT packet arriving when more than K waits is CE-marked) and/or RED on the
//! averaged queue (`link/queue/red.rs`: marks ECT packets, drops others). Flows with
//! `receiver_window = "ictcp"` get their advertised window from the receiver host's ICTCP
//! controller (`ictcp.rs`), which sees every data packet arriving at the host.
//!
//! The code, by component (`Simulation`, here, holds the components and wires them in the
//! event loop; a component's own work is a method of its type):
//!
//! | module | job |
//! |---|---|
//! | `event_loop.rs` | the event heap and `advance` (event and wall-clock budgets, livelock guard) |
//! | `timer_queue.rs` | the endpoints' timers: one movable deadline per flow and direction |
//! | `link/` | `Link`: its queue, transmitter and pipe; `pool.rs` the switch's shared buffer |
//! | `link/queue/` | queue disciplines (drop-tail, RED, step ECN): one trait, one file each |
//! | `network.rs` | links at work: enqueue, serialize, propagate, arrive at a router or host |
//! | `serializer.rs` | a timestamped link's service schedule, replayed lazily |
//! | `speedup/` | timestamped links, folded router hops (`fold.rs`), arrivals served ahead (`ahead.rs`), a discipline's departures served lazily (`lazy.rs`) |
//! | `endpoints.rs` | building flows; delivering data and ACKs; TSQ-limited sending; endpoint timers |
//! | `host/` | optional end hosts: cores, receive rings and interrupts, GRO, CPU costs, per-skb TSQ |
//! | `sampling.rs` | the per-interval samples of flows and queues |
//! | `results.rs` | conservation checks, per-flow summaries, the result tables |
//! | `topology.rs`, `pfc.rs`, `ictcp.rs`, `traffic.rs`, `apps.rs`, `rpc.rs`, `writer.rs`, `gaps.rs` | the fabric and its mechanisms |
//! | `config/`, `metrics/` | the scenario schema and the result-table schema |

pub mod apps;
mod arrivals;
mod capture;
pub mod cdf;
pub mod config;
pub mod gaps;
pub mod ictcp;
pub mod metrics;
pub mod pfc;
pub mod rng;
mod rpc;
pub mod topology;
pub mod traffic;
pub mod workload;
mod writer;

mod build;
mod endpoints;
mod event_heap;
mod event_loop;
mod host;
mod link;
mod network;
mod results;
mod sampling;
mod serializer;
mod speedup;
#[cfg(test)]
mod test_support;
mod timer_queue;

pub use results::Results;

use cc::Nanos;
use config::{Config, ConfigError};
use link::{Link, LinkId};
use std::collections::VecDeque;
use topology::{Fabric, Path};
use transport::{Receiver, Sender};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum EvKind {
    TxDone = 0,
    Arrive = 1,
    SenderTimer = 2,
    ReceiverTimer = 3,
    FlowStart = 4,
    Sample = 5,
    /// A PAUSE frame (quanta > 0) reaches a link's transmitter.
    PauseOn = 6,
    /// An XON (PAUSE with quanta 0) reaches a link's transmitter.
    PauseOff = 7,
    /// A pause may have expired.
    Resume = 8,
    /// An output port re-sends PAUSE while it stays paused.
    PfcRefresh = 9,
    /// An application starts its next query.
    AppQuery = 10,
    /// A host's interrupt or NAPI re-poll on one core (`host.rs`).
    HostPoll = 11,
    /// A path link's schedule change or timing-stage release is due (`link/path.rs`).
    PathWake = 12,
    /// A link's discipline held packets back (fq's pacing): its transmitter tries again.
    QdiscWake = 13,
    /// A workload's next flow arrives (`arrivals.rs`).
    WorkloadArrival = 14,
}

/// Number of event kinds (the per-kind counters' length).
const EV_KINDS: usize = 15;

impl EvKind {
    /// Names of the kinds in discriminant order (the benchmark's per-kind breakdown).
    const NAMES: [&'static str; EV_KINDS] = [
        "tx_done",
        "arrive",
        "sender_timer",
        "receiver_timer",
        "flow_start",
        "sample",
        "pause_on",
        "pause_off",
        "resume",
        "pfc_refresh",
        "app_query",
        "host_poll",
        "path_wake",
        "qdisc_wake",
        "workload_arrival",
    ];

    /// Every kind in discriminant order.
    const ALL: [EvKind; EV_KINDS] = [
        EvKind::TxDone,
        EvKind::Arrive,
        EvKind::SenderTimer,
        EvKind::ReceiverTimer,
        EvKind::FlowStart,
        EvKind::Sample,
        EvKind::PauseOn,
        EvKind::PauseOff,
        EvKind::Resume,
        EvKind::PfcRefresh,
        EvKind::AppQuery,
        EvKind::HostPoll,
        EvKind::PathWake,
        EvKind::QdiscWake,
        EvKind::WorkloadArrival,
    ];
}

/// Events run in (time, kind, id) order — the fields' order here — so ties at one nanosecond
/// resolve by what happens to which object, never by when an event was scheduled: leaving out
/// an event that changes nothing (a folded router hop, `FastPath::fold`) cannot reorder the rest.
/// At one instant departures (`TxDone`) come before arrivals, arrivals before timers, and the
/// sample last but for PFC, application and host events. Two entries of one (time, kind, id)
/// are the same event (a handler sees nothing else), so their order cannot matter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Event {
    t: Nanos,
    kind: EvKind,
    id: u32,
}

/// An event as the heap keeps it: (t, kind, id) in one 128-bit number whose order is the
/// event's, so an entry is 16 bytes and a comparison one wide compare (the heap's sifting is
/// most of what an event costs beyond its handler).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct EventKey(u128);

impl EventKey {
    #[inline]
    fn new(e: Event) -> EventKey {
        EventKey(((e.t as u128) << 64) | ((e.kind as u128) << 32) | e.id as u128)
    }

    #[inline]
    fn event(self) -> Event {
        Event {
            t: (self.0 >> 64) as Nanos,
            kind: EvKind::ALL[(self.0 >> 32) as u32 as usize],
            id: self.0 as u32,
        }
    }
}

/// One connection in the simulator. `repr(C)`, laid out by use: with many flows interleaved at a
/// queue each packet finds its flow cold, so the fields that a data segment's arrival reads sit
/// in the line after the receiver (cache-line aligned, `transport::Receiver`), and those an ACK's
/// arrival reads just before the sender.
#[repr(C)]
struct Flow {
    // What an ACK's arrival and the sender's pump read beside the sender (its NIC, hooks, path).
    /// Bytes of this flow queued in its sender's NIC (TSQ accounting).
    nic_bytes: u64,
    /// Data packets the sender handed on (conservation accounting, with `data_rx` and
    /// `data_dropped`).
    data_tx: u64,
    /// Data packets dropped anywhere on the way (conservation accounting; the lazily counted
    /// NIC's pump reads it per packet).
    data_dropped: u64,
    sender_timer_at: Option<Nanos>,
    /// Departures from an `Ahead::Nic` NIC served ahead, or from a lazily counted NIC, not
    /// yet taken off `nic_bytes`: (time, bytes), in order (`Simulation::count_nic_departures`).
    nic_departures: VecDeque<(Nanos, u64)>,
    /// Segments whose first transmission is dropped leaving the sender (`drop_segments`,
    /// sorted; None = none, no per-packet cost beyond one branch).
    drop_segments: Option<Box<[u64]>>,
    /// Record a `packets` row per data segment sent and per ACK received (`pcap`,
    /// `capture.rs`), with the flow's segment numbers in bytes; None = off.
    capture: Option<capture::ByteMap>,
    /// With the host model (`host.rs`): the core the flow runs on at its sender and at its
    /// receiver (u32::MAX without).
    tx_core: u32,
    /// The flow's NIC is lazily counted (`speedup/nic.rs`): `pump` notes each packet's
    /// departure as the NIC accepts it.
    lazy_nic: bool,
    /// TSQ held the sender back at its last pump (Linux's TSQF_THROTTLED): only then does a
    /// departure from the NIC run the sender again (`tcp_wfree` schedules `tcp_write_xmit` for a
    /// throttled socket only; otherwise ACKs and the pacing timer drive it).
    tsq_throttled: bool,
    /// Record a `state` row after every ACK (`trace`).
    trace: bool,
    /// Links of the data path and the ACK path, first hop first.
    data_path: Path,
    sender: Sender,
    receiver: Receiver,
    // What a data segment's arrival reads beside the receiver: one line, then its ACK's way out.
    /// The non-TCP source this flow entry carries (`traffic.rs`), or `traffic::NOT_TRAFFIC`.
    traffic: u32,
    /// The workload app this flow is a transfer of (`arrivals.rs`), or `NOT_WORKLOAD`.
    workload: u32,
    /// Data packets delivered to the receiver (conservation accounting).
    data_rx: u64,
    last_delivery_ns: Option<Nanos>,
    /// When the receiver held every byte of a sized transfer.
    rx_done_ns: Option<Nanos>,
    receiver_timer_at: Option<Nanos>,
    ack_path: Path,
    rx_core: u32,
    /// The receiver's next deadline, when `rx_ahead_on` (Nanos::MAX: none).
    rx_deadline: Nanos,
    /// Connection id in the receiver host's ICTCP controller.
    ictcp: Option<usize>,
    // The rest: set up once, or read by rare paths and at the end.
    /// Index of the `flows` entry this flow was expanded from (−1: an application transfer).
    spec: i32,
    cc_name: &'static str,
    start_ns: Nanos,
    stop_ns: Option<Nanos>,
    last_delivered_bytes: u64,
    /// Inter-departure gaps at the sender NIC (`gap_histogram`; None = off, no per-packet cost).
    gaps: Option<Box<gaps::GapHist>>,
    /// Base RTT of the flow's path (ICTCP's RTT before the first sample).
    base_rtt_ns: Nanos,
    /// (app, query) when the flow is an application transfer (`apps.rs`).
    app: Option<(u32, u32)>,
    /// Included in the per-interval timeseries (application transfers are not).
    sampled: bool,
    /// The flow's RPC application (`rpc.rs`), which writes its data.
    rpc: Option<rpc::RpcApp>,
    /// The flow's rate-limited or on/off writer (`writer.rs`), which writes its data.
    writer: Option<Box<writer::Writer>>,
    /// With the host model: the flow's skbs in its NIC, oldest first, as (segments not yet
    /// sent, bytes). TSQ budget comes back when an skb's last segment leaves (TX completion
    /// frees the whole skb), not per segment.
    tx_skbs: VecDeque<(u32, u64)>,
}

// A data arrival's fields start a line (the receiver is aligned and a whole number of lines)
// and end in it.
const _: () = {
    use std::mem::offset_of;
    assert!(offset_of!(Flow, traffic) % 64 == 0);
    assert!(offset_of!(Flow, ack_path) - offset_of!(Flow, traffic) <= 64);
};

/// The simulation of one scenario.
pub struct Simulation {
    cfg: Config,
    now: Nanos,
    end_ns: Nanos,
    heap: event_heap::EventHeap,
    /// The heap's root is the event being handled, already spent (`Simulation::push`).
    head_spent: bool,
    /// The endpoints' timers (`timer_queue.rs`): slot 2·flow is the sender's, 2·flow + 1 the
    /// receiver's.
    timers: timer_queue::TimerQueue,
    links: Vec<Link>,
    flows: Vec<Flow>,
    /// Links whose queues are reported in the `queue` table, with their names.
    monitored: Vec<(LinkId, &'static str)>,
    pub events: u64,
    /// Events processed, by kind (`EvKind` discriminant): where the events per packet come from.
    events_by_kind: [u64; EV_KINDS],
    /// Events processed at the current instant (livelock guard).
    events_at_now: u64,
    /// NIC departures that ran their flow's sender (TSQ had throttled it; `on_tx_done`).
    #[cfg(test)]
    tsq_wakeups: u64,
    pub data_packets_delivered: u64,
    metrics: metrics::Recorder,
    next_sample_ns: Nanos,
    /// The time `advance` was asked to reach (nothing is served ahead past it: `ahead.rs`).
    limit_ns: Nanos,
    /// Some link serves its receivers ahead (`ahead.rs`).
    rx_ahead_on: bool,
    /// The links that serve their departures lazily (`speedup/lazy.rs`).
    lazy_links: Vec<link::LinkId>,
    /// A lower bound of the receivers' next deadlines, and whether it is the minimum, when
    /// `rx_ahead_on` (`Simulation::rx_deadline_allows`).
    rx_min_lb: Nanos,
    rx_min_exact: bool,
    /// The receiver host's ICTCP controller, when any flow uses it.
    ictcp: Option<ictcp::Ictcp>,
    /// The topology (`topology.rs`): how flows are routed.
    fabric: Fabric,
    /// The switch's shared buffer (`link/pool.rs`).
    pool: link::pool::SharedPool,
    /// Per link: the bytes waiting in its queue at the last sample (0 before the first and on
    /// links not reported), what a starting flow's handshake waits behind (`endpoints.rs`).
    sampled_queue_bytes: Vec<u64>,
    pause_frames_total: u64,
    /// `pump` takes its general path: the host model, or lazily counted NICs
    /// (`speedup/nic.rs`).
    pump_general: bool,
    /// Links with timed parts (cut-through, jitter, PAUSE sent) are timestamped
    /// (`speedup/timed.rs`); off only to compare with the event-driven model in tests.
    timed_links: bool,
    apps: Vec<apps::QueryApp>,
    app_events: apps::AppEvents,
    /// The end hosts' CPUs and receive queues (`host.rs`), when the scenario models them.
    hosts: Option<Box<host::Hosts>>,
    /// Non-TCP sources (`traffic.rs`), each carried by a flow entry after the configured flows.
    traffic: Vec<traffic::Source>,
    /// Ping echoes back (the `pings` table).
    pings: metrics::PingCols,
    /// The `packets` table: segments of flows with `pcap`, and of captured links
    /// (`capture.rs`).
    packets: metrics::PacketCols,
    /// Flow-size workloads (`arrivals.rs`) and their completed flows (the `fct` table).
    workloads: Vec<arrivals::Workload>,
    fct: metrics::FctCols,
}

impl Simulation {
    pub fn from_json(json: &str) -> Result<Simulation, ConfigError> {
        Simulation::from_checked(Config::check_json(json)?)
    }

    pub fn new(cfg: Config) -> Result<Simulation, ConfigError> {
        Simulation::from_checked(config::Checked::new(cfg)?)
    }

    /// Build from a config that passed every check (it is not checked again).
    pub fn from_checked(cfg: config::Checked) -> Result<Simulation, ConfigError> {
        Simulation::build(cfg, true)
    }

    /// `from_json` with the links that have timed parts timestamped (`timed_links`) or
    /// event-driven: the model the timed links must reproduce.
    #[cfg(test)]
    pub(crate) fn from_json_timing(json: &str, timed_links: bool) -> Simulation {
        Simulation::build(Config::check_json(json).unwrap(), timed_links).unwrap()
    }

    fn build(cfg: config::Checked, timed_links: bool) -> Result<Simulation, ConfigError> {
        let cfg = cfg.resolved();
        let mut links: Vec<Link> = Vec::new();
        let built = topology::build(&cfg, &mut links);
        let mut fabric = built.fabric;
        // ICTCP runs on the receiver host and knows the capacity of its link.
        let mut ictcp_ctl =
            if cfg.flows.iter().any(|f| f.receiver_window == config::ReceiverWindow::Ictcp) {
                Some(ictcp::Ictcp::new(built.receiver_rate_bps))
            } else {
                None
            };
        let mut flows = build::tcp_flows(&cfg, &mut fabric, &mut links, ictcp_ctl.as_mut());
        let sources = build::traffic_sources(&cfg, &mut fabric, &mut links, &mut flows);
        let hosts = build::hosts(&cfg, &mut links, &mut flows);
        let (apps, workloads) = build::apps(&cfg, &mut fabric, &mut links, flows.len());
        let end_ns = cfg.duration_ns;
        let metrics = metrics::Recorder::new(
            flows.len(),
            built.monitored.len(),
            (end_ns / cfg.sample_interval_ns) as usize + 1,
        );
        let n_links = links.len();
        let mut sim = Simulation {
            now: 0,
            end_ns,
            // Grows with its content (a heap of 10⁵ flows' worth of slots would be touched
            // memory: the vacant padding is written).
            heap: event_heap::EventHeap::default(),
            head_spent: false,
            timers: timer_queue::TimerQueue::with_slots(2 * flows.len()),
            links,
            flows,
            monitored: built.monitored,
            events: 0,
            events_by_kind: [0; EV_KINDS],
            events_at_now: 0,
            #[cfg(test)]
            tsq_wakeups: 0,
            data_packets_delivered: 0,
            metrics,
            next_sample_ns: cfg.sample_interval_ns,
            limit_ns: 0,
            rx_ahead_on: false,
            lazy_links: Vec::new(),
            rx_min_lb: Nanos::MAX,
            rx_min_exact: true,
            ictcp: ictcp_ctl,
            fabric,
            pool: link::pool::SharedPool::new(built.pool_limit, built.pool_alpha),
            sampled_queue_bytes: vec![0; n_links],
            pause_frames_total: 0,
            pump_general: false,
            timed_links,
            apps,
            app_events: apps::AppEvents::default(),
            hosts,
            traffic: sources,
            pings: metrics::PingCols::default(),
            packets: metrics::PacketCols::default(),
            workloads,
            fct: metrics::FctCols::default(),
            cfg,
        };
        // Captured links (`capture.rs`): named in the queue table (`Config::validate_capture`).
        for (i, name) in sim.cfg.capture.links.iter().enumerate() {
            let &(lid, _) =
                sim.monitored.iter().find(|m| m.1 == name).expect("a checked link name");
            sim.links[lid as usize].tap = (i + 1) as u16;
        }
        sim.mark_data_nics();
        for l in &mut sim.links {
            l.fast.timestamped = l.can_be_timestamped();
        }
        sim.set_lazy_nics();
        sim.set_timed();
        sim.set_folds();
        sim.set_ahead();
        sim.set_lazy_departures();
        for lid in 0..sim.links.len() as LinkId {
            if sim.links[lid as usize].path.is_some() {
                sim.path_start(lid);
            }
        }
        for a in 0..sim.apps.len() {
            let t = sim.apps[a].cfg.start_ns;
            sim.push(t, EvKind::AppQuery, a as u32);
        }
        for w in 0..sim.workloads.len() {
            sim.workload_start(w);
        }
        for i in 0..sim.flows.len() {
            let t = sim.flows[i].start_ns;
            sim.push(t, EvKind::FlowStart, i as u32);
        }
        let t = sim.next_sample_ns;
        sim.push(t, EvKind::Sample, 0);
        Ok(sim)
    }

    pub fn now_ns(&self) -> Nanos {
        self.now
    }
    pub fn end_ns(&self) -> Nanos {
        self.end_ns
    }
    pub fn is_complete(&self) -> bool {
        self.now >= self.end_ns
    }
    /// Events processed so far, by kind (name, count), kinds that never ran left out.
    pub fn event_counts(&self) -> Vec<(&'static str, u64)> {
        EvKind::NAMES
            .iter()
            .zip(self.events_by_kind)
            .filter(|(_, n)| *n > 0)
            .map(|(k, n)| (*k, n))
            .collect()
    }
}
