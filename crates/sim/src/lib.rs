//! bbrlab's deterministic packet-level discrete-event simulator.
//!
//! The event loop spends its time on packets (as htsim does), not on framework:
//! - Time is integer nanoseconds; the event queue is a binary heap ordered by (time, insertion
//!   number), so ties resolve the same way on every run.
//! - A link is an egress queue, a serializer and a propagation "pipe". Packets in propagation
//!   travel in FIFO order, so a link keeps them in a ring and only its head packet has an event:
//!   the heap holds O(links + flows) entries however many packets are in flight, and a packet
//!   costs two heap operations per hop.
//! - Packets are plain `Copy` structs in rings; nothing is allocated per packet or per event once
//!   the rings have grown to the working set.
//! - Each endpoint has at most a couple of pending timer entries: a timer that moves later keeps
//!   its earlier heap entry, which re-arms itself when it fires early (lazy cancellation).
//! - Metrics are sampled on a timer into columnar buffers; nothing is logged per packet.
//!
//! Topology (dumbbell): every sender host has its own access link (NIC) into router R1; R1 → R2
//! is the bottleneck (rate, half the base RTT, drop-tail buffer, Bernoulli loss, optional CE
//! marking); R2 → the receiver host. ACKs return over mirror links. A flow's `extra_rtt` sits on
//! its sender's access links.
//!
//! ECN marking at the bottleneck: step marking on the instantaneous queue (DCTCP's K, in bytes
//! and/or packets: an ECT packet arriving when more than K waits is CE-marked) and/or RED on the
//! averaged queue (`red.rs`: marks ECT packets, drops others). Flows with
//! `receiver_window = "ictcp"` get their advertised window from the receiver host's ICTCP
//! controller (`ictcp.rs`), which sees every data packet arriving at the host.

pub mod apps;
pub mod config;
pub mod gaps;
pub mod ictcp;
pub mod metrics;
pub mod pfc;
pub mod red;
pub mod rng;
mod rpc;
pub mod topology;
pub mod workload;

use cc::{Cc, CcKind, Nanos};
use config::{Config, ConfigError};
use metrics::{Column, Table};
use rng::Rng;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use topology::{Fabric, Path};
use transport::{Packet, Receiver, Sender};

type LinkId = u32;

/// Where a link delivers its packets.
#[derive(Clone, Copy, Debug, PartialEq)]
enum NodeKind {
    /// A router: forward along the packet's route.
    Router,
    /// A host: hand to the flow's endpoint.
    Host,
}

/// Per-queue counters.
#[derive(Clone, Debug, Default)]
pub struct QueueStats {
    pub drops: u64,
    pub random_losses: u64,
    pub ce_marks: u64,
    pub tx_bytes: u64,
    /// PAUSE/XON frames sent (switch output port) or received (paused link); see `pfc.rs`.
    pub pause_frames: u64,
    pub max_bytes_interval: u64,
    /// Integral of occupancy (bytes · ns) since the last sample.
    occ_integral: u128,
    last_change_ns: Nanos,
    busy_ns_interval: u64,
}

struct Link {
    rate_bps: u64,
    delay_ns: Nanos,
    /// Drop-tail limits (bytes / packets); u64::MAX = unlimited.
    limit_bytes: u64,
    limit_pkts: u64,
    ecn_k_bytes: Option<u64>,
    ecn_k_pkts: Option<u64>,
    red: Option<Box<red::Red>>,
    /// When the link last went idle (queue and serializer empty), for RED's idle decay.
    idle_since_ns: Nanos,
    loss: f64,
    rng: Rng,
    queue: VecDeque<Packet>,
    q_bytes: u64,
    /// Packet being serialized, if any.
    in_tx: Option<Packet>,
    tx_start_ns: Nanos,
    /// Sub-nanosecond remainder of serialization times, in picoseconds, so that rounding never
    /// accumulates into a rate error (1 ns per packet would be 0.8 % at 100 Gbit/s).
    tx_residual_ps: u64,
    /// Packets propagating, with their arrival times (FIFO because the delay is constant).
    pipe: VecDeque<(Nanos, Packet)>,
    to: NodeKind,
    /// The link is a host NIC: its departures release TSQ budget of the sending flow.
    is_sender_nic: bool,
    stats: QueueStats,
    /// 802.3x: the transmitter starts no new packet before this time (`pfc.rs`).
    paused_until: Nanos,
    /// Duration of a PAUSE received by this link (its quanta at its rate).
    pause_quanta_ns: Nanos,
    /// This link's far end is a cut-through switch: packets are handed over once this many
    /// bytes have arrived (0 = store-and-forward; `topology.rs`).
    cut_through_bytes: u32,
    /// The queue draws on the switch's shared buffer.
    in_pool: bool,
    /// Host transmit timing jitter: each packet reaches the far end up to this much later
    /// (uniform, FIFO kept); 0 = exact. See `topology.rs`.
    jitter_ns: u64,
    /// This output port sends PAUSE frames upstream (lossless mode).
    pfc: Option<Box<pfc::PortPfc>>,
}

impl Link {
    fn new(rate_bps: u64, delay_ns: Nanos, to: NodeKind, rng: Rng) -> Link {
        Link {
            rate_bps,
            delay_ns,
            limit_bytes: u64::MAX,
            limit_pkts: u64::MAX,
            ecn_k_bytes: None,
            ecn_k_pkts: None,
            red: None,
            idle_since_ns: 0,
            loss: 0.0,
            rng,
            queue: VecDeque::new(),
            q_bytes: 0,
            in_tx: None,
            tx_start_ns: 0,
            tx_residual_ps: 0,
            pipe: VecDeque::new(),
            to,
            is_sender_nic: false,
            stats: QueueStats::default(),
            paused_until: 0,
            pause_quanta_ns: 0,
            cut_through_bytes: 0,
            in_pool: false,
            jitter_ns: 0,
            pfc: None,
        }
    }

    #[inline]
    fn note_occupancy(&mut self, now: Nanos) {
        let dt = now - self.stats.last_change_ns;
        self.stats.occ_integral += self.q_bytes as u128 * dt as u128;
        self.stats.last_change_ns = now;
    }

    /// When a packet whose last (cut-through: header) bit leaves at `t` reaches the far end:
    /// propagation plus the host's timing jitter, never before the packet ahead of it.
    fn arrival_time(&mut self, t: Nanos) -> Nanos {
        let mut a = t + self.delay_ns;
        if self.jitter_ns > 0 {
            a += self.rng.next_u64() % (self.jitter_ns + 1);
            if let Some(&(last, _)) = self.pipe.back() {
                a = a.max(last);
            }
        }
        a
    }

    /// Serialization time of `bytes` in ns, carrying the picosecond remainder.
    #[inline]
    fn tx_time_ns(&mut self, bytes: u32) -> Nanos {
        let ps = bytes as u128 * 8 * 1_000_000_000_000u128 / self.rate_bps as u128 + self.tx_residual_ps as u128;
        self.tx_residual_ps = (ps % 1000) as u64;
        (ps / 1000) as Nanos
    }
}

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
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Event {
    t: Nanos,
    seq: u64,
    kind: EvKind,
    id: u32,
}

struct Flow {
    sender: Sender,
    receiver: Receiver,
    cc_name: &'static str,
    /// Links of the data path and the ACK path, first hop first.
    data_path: Path,
    ack_path: Path,
    start_ns: Nanos,
    stop_ns: Option<Nanos>,
    /// Bytes of this flow queued in its sender's NIC (TSQ accounting).
    nic_bytes: u64,
    sender_timer_at: Option<Nanos>,
    receiver_timer_at: Option<Nanos>,
    // Conservation accounting (data packets).
    data_tx: u64,
    data_rx: u64,
    data_dropped: u64,
    last_delivered_bytes: u64,
    last_delivery_ns: Option<Nanos>,
    /// Connection id in the receiver host's ICTCP controller.
    ictcp: Option<usize>,
    /// Inter-departure gaps at the sender NIC (`gap_histogram`; None = off, no per-packet cost).
    gaps: Option<Box<gaps::GapHist>>,
    /// Base RTT of the flow's path (ICTCP's RTT before the first sample).
    base_rtt_ns: Nanos,
    /// (app, query) when the flow is an application transfer (`apps.rs`).
    app: Option<(u32, u32)>,
    /// Included in the per-interval timeseries (application transfers are not).
    sampled: bool,
    /// When the receiver held every byte of a sized transfer.
    rx_done_ns: Option<Nanos>,
    /// The flow's RPC application (`rpc.rs`), which writes its data.
    rpc: Option<rpc::RpcApp>,
}

/// The simulation of one scenario.
pub struct Simulation {
    cfg: Config,
    now: Nanos,
    end_ns: Nanos,
    heap: BinaryHeap<Reverse<Event>>,
    ev_seq: u64,
    links: Vec<Link>,
    flows: Vec<Flow>,
    /// Links whose queues are reported in the `queue` table, with their names.
    monitored: Vec<(LinkId, &'static str)>,
    pub events: u64,
    /// Events processed at the current instant (livelock guard).
    events_at_now: u64,
    pub data_packets_delivered: u64,
    metrics: metrics::Recorder,
    next_sample_ns: Nanos,
    /// The receiver host's ICTCP controller, when any flow uses it.
    ictcp: Option<ictcp::Ictcp>,
    /// The topology (`topology.rs`): how flows are routed.
    fabric: Fabric,
    /// Bytes queued in the switch's shared buffer, and its limit (u64::MAX = none).
    pool_bytes: u64,
    pool_limit: u64,
    pause_frames_total: u64,
    apps: Vec<apps::QueryApp>,
    app_events: apps::AppEvents,
}

/// More events than this at one instant means the model is stuck (a timer re-arming itself at
/// `now`); stop with a diagnosis instead of spinning forever.
const LIVELOCK_EVENTS: u64 = 10_000_000;

impl Simulation {
    pub fn from_json(json: &str) -> Result<Simulation, ConfigError> {
        Simulation::new(Config::from_json(json)?)
    }

    pub fn new(cfg: Config) -> Result<Simulation, ConfigError> {
        cfg.validate()?;
        let seed = cfg.seed;
        let mut links: Vec<Link> = Vec::new();
        let built = topology::build(&cfg, &mut links);
        let mut fabric = built.fabric;
        let mut flows = Vec::with_capacity(cfg.flows.len());
        // ICTCP runs on the receiver host and knows the capacity of its link.
        let mut ictcp_ctl = if cfg.flows.iter().any(|f| f.receiver_window == "ictcp") {
            Some(ictcp::Ictcp::new(built.receiver_rate_bps))
        } else {
            None
        };
        for (i, f) in cfg.flows.iter().enumerate() {
            let (dp, ap, base_rtt_ns) = fabric.flow_paths(&mut links, f, i, seed);
            flows.push(Self::new_flow(seed, f, i, dp, ap, base_rtt_ns, ictcp_ctl.as_mut()));
        }
        let apps = cfg.apps.iter().enumerate().map(|(i, a)| apps::QueryApp::new(a.clone(), seed, i)).collect();
        let end_ns = cfg.duration_ns;
        let metrics = metrics::Recorder::new(flows.len(), built.monitored.len(), (end_ns / cfg.sample_interval_ns) as usize + 1);
        let mut sim = Simulation {
            now: 0,
            end_ns,
            heap: BinaryHeap::with_capacity(4 * links.len() + 4 * flows.len() + 16),
            ev_seq: 0,
            links,
            flows,
            monitored: built.monitored,
            events: 0,
            events_at_now: 0,
            data_packets_delivered: 0,
            metrics,
            next_sample_ns: cfg.sample_interval_ns,
            ictcp: ictcp_ctl,
            fabric,
            pool_bytes: 0,
            pool_limit: built.pool_limit,
            pause_frames_total: 0,
            apps,
            app_events: apps::AppEvents::default(),
            cfg,
        };
        for a in 0..sim.apps.len() {
            let t = sim.apps[a].cfg.start_ns;
            sim.push(t, EvKind::AppQuery, a as u32);
        }
        for i in 0..sim.flows.len() {
            let t = sim.flows[i].start_ns;
            sim.push(t, EvKind::FlowStart, i as u32);
        }
        let t = sim.next_sample_ns;
        sim.push(t, EvKind::Sample, 0);
        Ok(sim)
    }

    /// A flow (sender + receiver) for configured flow `f` with index `i` on the given paths.
    fn new_flow(
        seed: u64,
        f: &config::Flow,
        i: usize,
        data_path: Path,
        ack_path: Path,
        base_rtt_ns: Nanos,
        ictcp_ctl: Option<&mut ictcp::Ictcp>,
    ) -> Flow {
        let kind = CcKind::from_name(&f.cc).expect("validated");
        let algo = Cc::new(&kind, seed ^ (0x5EED_0000 + i as u64));
        let scfg = transport::SenderConfig {
            mss: f.mss_bytes,
            initial_cwnd: f.initial_cwnd_segs,
            total_bytes: f.bytes,
            pacing: f.pacing,
            max_pacing_rate_bytes_per_s: f.max_pacing_rate_bps.map(|r| r / 8),
            sndbuf_bytes: f.sndbuf_bytes,
            tso: f.tso,
            min_rto_ns: f.min_rto_ns,
            ecn: f.ecn,
            tso_minrtt_autosize: f.tso_minrtt_autosize,
            app_writes: f.rpc.is_some(),
        };
        let mut sender = Sender::new(scfg, algo);
        sender.stop_ns = f.stop_ns;
        let rcfg = transport::receiver::ReceiverConfig {
            mss: f.mss_bytes,
            rcvbuf_bytes: f.rcvbuf_bytes,
            delayed_ack: f.delayed_ack,
            // Linux runs the receiver's half of DCTCP in the same module (dctcp_ece_ack_update).
            ce_state_ack: kind == CcKind::Dctcp,
            faster_acks: f.faster_acks,
            app_read_delay_ns: f.app_read_delay_ns,
            msg_segs: workload::msg_segs(f),
        };
        let ictcp_id = match (ictcp_ctl, f.receiver_window.as_str()) {
            (Some(ic), "ictcp") => Some(ic.add_conn(
                f.mss_bytes,
                f.mss_bytes + transport::TCP_IP_HEADER_BYTES + transport::ETHERNET_OVERHEAD_BYTES,
                f.rcvbuf_bytes,
                base_rtt_ns,
            )),
            _ => None,
        };
        let cc_name = sender.cc.name();
        Flow {
            sender,
            receiver: Receiver::new(rcfg),
            cc_name,
            data_path,
            ack_path,
            start_ns: f.start_ns,
            stop_ns: f.stop_ns,
            nic_bytes: 0,
            sender_timer_at: None,
            receiver_timer_at: None,
            data_tx: 0,
            data_rx: 0,
            data_dropped: 0,
            last_delivered_bytes: 0,
            last_delivery_ns: None,
            ictcp: ictcp_id,
            gaps: f.gap_histogram.then(Box::default),
            base_rtt_ns,
            app: None,
            sampled: true,
            rx_done_ns: None,
            rpc: f.rpc.as_ref().map(|r| rpc::RpcApp::new(r.size_bytes, r.gap_ns)),
        }
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

    #[inline]
    fn push(&mut self, t: Nanos, kind: EvKind, id: u32) {
        self.ev_seq += 1;
        self.heap.push(Reverse(Event { t, seq: self.ev_seq, kind, id }));
    }

    /// Advance the simulation to `t_ns` (or its end). Returns true when the run is complete.
    pub fn run_until(&mut self, t_ns: Nanos) -> bool {
        let limit = t_ns.min(self.end_ns);
        while let Some(Reverse(ev)) = self.heap.peek().copied() {
            if ev.t > limit {
                break;
            }
            self.heap.pop();
            if ev.t == self.now {
                self.events_at_now += 1;
                if self.events_at_now > LIVELOCK_EVENTS {
                    panic!(
                        "simulation livelock: {} events at t = {} ns without time advancing; flows:\n{}",
                        self.events_at_now,
                        self.now,
                        self.debug_flows().join("\n")
                    );
                }
            } else {
                self.events_at_now = 0;
            }
            self.now = ev.t;
            self.events += 1;
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
        self.is_complete()
    }

    /// Hand a packet to a link's egress: random loss, RED, drop-tail, CE marking, then queue or
    /// send.
    fn enqueue(&mut self, lid: LinkId, mut p: Packet) {
        let now = self.now;
        let link = &mut self.links[lid as usize];
        if link.loss > 0.0 && link.rng.next_f64() < link.loss {
            link.stats.random_losses += 1;
            if p.is_data {
                self.flows[p.flow as usize].data_dropped += 1;
            }
            return;
        }
        if let Some(red) = link.red.as_deref_mut() {
            // RED sees every arrival, also those that find the link idle.
            let idle_ns = if link.in_tx.is_none() { now.saturating_sub(link.idle_since_ns).max(1) } else { 0 };
            if red.on_arrival(link.q_bytes, idle_ns, &mut link.rng) == red::RedAction::Act {
                if p.ect {
                    p.ce = true;
                    link.stats.ce_marks += 1;
                } else {
                    // An early drop (counted with the overflow drops).
                    link.stats.drops += 1;
                    if p.is_data {
                        self.flows[p.flow as usize].data_dropped += 1;
                        if link.is_sender_nic {
                            self.flows[p.flow as usize].nic_bytes -= p.wire_bytes as u64;
                        }
                    }
                    return;
                }
            }
        }
        if link.in_tx.is_none() && link.paused_until <= now {
            // Idle link: start serializing at once; nothing waits.
            link.note_occupancy(now);
            self.start_tx(lid, p);
            return;
        }
        if link.q_bytes + p.wire_bytes as u64 > link.limit_bytes
            || link.queue.len() as u64 + 1 > link.limit_pkts
            || (link.in_pool && self.pool_bytes + p.wire_bytes as u64 > self.pool_limit)
        {
            link.stats.drops += 1;
            if p.is_data {
                self.flows[p.flow as usize].data_dropped += 1;
                if link.is_sender_nic {
                    self.flows[p.flow as usize].nic_bytes -= p.wire_bytes as u64;
                }
            }
            return;
        }
        if p.ect && !p.ce {
            // Step marking (DCTCP): the queue found on arrival exceeds K bytes or K packets.
            let over_bytes = link.ecn_k_bytes.is_some_and(|k| link.q_bytes > k);
            let over_pkts = link.ecn_k_pkts.is_some_and(|k| link.queue.len() as u64 > k);
            if over_bytes || over_pkts {
                p.ce = true;
                link.stats.ce_marks += 1;
            }
        }
        link.note_occupancy(now);
        link.q_bytes += p.wire_bytes as u64;
        if link.q_bytes > link.stats.max_bytes_interval {
            link.stats.max_bytes_interval = link.q_bytes;
        }
        if link.in_pool {
            self.pool_bytes += p.wire_bytes as u64;
        }
        link.queue.push_back(p);
        if link.pfc.is_some() {
            self.pfc_after_enqueue(lid);
        }
    }

    /// Start serializing `p` on link `lid` (idle, not paused). A link into a cut-through switch
    /// hands the packet over once its header has arrived (`topology.rs`), so it enters the
    /// propagation pipe now rather than when its last bit leaves.
    #[inline]
    fn start_tx(&mut self, lid: LinkId, p: Packet) {
        let now = self.now;
        let link = &mut self.links[lid as usize];
        let dt = link.tx_time_ns(p.wire_bytes);
        link.in_tx = Some(p);
        link.tx_start_ns = now;
        let ct = link.cut_through_bytes;
        let early = if ct > 0 {
            let hdr = (ct.min(p.wire_bytes) as u128 * 8 * 1_000_000_000 / link.rate_bps as u128) as Nanos;
            let arrive = link.arrival_time(now + hdr);
            let was_empty = link.pipe.is_empty();
            link.pipe.push_back((arrive, p));
            was_empty.then_some(arrive)
        } else {
            None
        };
        self.push(now + dt, EvKind::TxDone, lid);
        if let Some(t) = early {
            self.push(t, EvKind::Arrive, lid);
        }
    }

    /// Start the next queued packet on link `lid`, if any (the link is idle and not paused).
    #[inline]
    fn next_tx(&mut self, lid: LinkId) {
        let now = self.now;
        let link = &mut self.links[lid as usize];
        if let Some(next) = link.queue.pop_front() {
            link.note_occupancy(now);
            link.q_bytes -= next.wire_bytes as u64;
            if link.in_pool {
                self.pool_bytes -= next.wire_bytes as u64;
            }
            let has_pfc = link.pfc.is_some();
            self.start_tx(lid, next);
            if has_pfc {
                self.pfc_after_dequeue(lid);
            }
        } else {
            link.idle_since_ns = now;
        }
    }

    fn on_tx_done(&mut self, lid: LinkId) {
        let now = self.now;
        let link = &mut self.links[lid as usize];
        let p = link.in_tx.take().expect("tx in progress");
        link.stats.tx_bytes += p.wire_bytes as u64;
        link.stats.busy_ns_interval += now - link.tx_start_ns.max(self.metrics.last_sample_ns);
        let arrive = if link.jitter_ns > 0 { link.arrival_time(now) } else { now + link.delay_ns };
        // Cut-through links put the packet in the pipe when it started (`start_tx`).
        let store_fwd = link.cut_through_bytes == 0;
        let was_empty = store_fwd && link.pipe.is_empty();
        if store_fwd {
            link.pipe.push_back((arrive, p));
        }
        if link.paused_until <= now {
            self.next_tx(lid);
        }
        let is_nic = self.links[lid as usize].is_sender_nic;
        if was_empty {
            self.push(arrive, EvKind::Arrive, lid);
        }
        if is_nic && p.is_data {
            // TSQ: a departure from the NIC lets the flow queue more.
            let f = p.flow as usize;
            self.flows[f].nic_bytes -= p.wire_bytes as u64;
            if let Some(g) = self.flows[f].gaps.as_deref_mut() {
                g.on_departure(now);
            }
            self.pump(f);
        }
    }

    fn on_arrive(&mut self, lid: LinkId) {
        let link = &mut self.links[lid as usize];
        let (_, mut p) = link.pipe.pop_front().expect("arrival");
        if let Some(&(t, _)) = link.pipe.front() {
            self.push(t, EvKind::Arrive, lid);
        }
        let to = self.links[lid as usize].to;
        match to {
            NodeKind::Router => {
                p.hop += 1;
                let f = &self.flows[p.flow as usize];
                let next = if p.is_data { f.data_path.links[p.hop as usize] } else { f.ack_path.links[p.hop as usize] };
                self.enqueue(next, p);
            }
            NodeKind::Host => {
                if p.is_data {
                    self.deliver_data(p)
                } else {
                    self.deliver_ack(p)
                }
            }
        }
    }

    fn deliver_data(&mut self, p: Packet) {
        let fi = p.flow as usize;
        let now = self.now;
        let flow = &mut self.flows[fi];
        flow.data_rx += 1;
        self.data_packets_delivered += 1;
        if let Some(ic) = self.ictcp.as_mut() {
            // The receiver host's ICTCP sees all incoming traffic; its connections get their
            // window set before the ACK for this segment is built.
            ic.on_host_rx(now, p.wire_bytes);
            if let Some(id) = flow.ictcp {
                let rtt = if flow.sender.tp.srtt_ns > 0 { flow.sender.tp.srtt_ns } else { flow.base_rtt_ns };
                let w = ic.on_conn_rx(id, now, p.payload_bytes, rtt);
                flow.receiver.set_window_override(Some(w));
            }
        }
        let before = flow.receiver.delivered_bytes;
        let ack = flow.receiver.on_data(now, &p);
        let mut transfer_done = false;
        if flow.receiver.delivered_bytes > before {
            flow.last_delivery_ns = Some(now);
            if flow.rx_done_ns.is_none() && flow.sender.cfg.total_bytes.is_some_and(|b| flow.receiver.delivered_bytes >= b) {
                flow.rx_done_ns = Some(now);
                transfer_done = flow.app.is_some();
            }
        }
        if let Some(mut a) = flow.receiver.take_pending_ack() {
            // DCTCP's delayed ACK of the previous CE state goes out first.
            a.flow = p.flow;
            a.hop = 0;
            let first = flow.ack_path.first();
            self.enqueue(first, a);
        }
        let flow = &mut self.flows[fi];
        if let Some(mut a) = ack {
            a.flow = p.flow;
            a.hop = 0;
            let first = flow.ack_path.first();
            self.enqueue(first, a);
        }
        self.arm_receiver_timer(fi);
        if transfer_done {
            self.on_transfer_done(fi);
        }
    }

    fn deliver_ack(&mut self, p: Packet) {
        let fi = p.flow as usize;
        let now = self.now;
        let flow = &mut self.flows[fi];
        flow.sender.on_ack(now, &p);
        if let Some(app) = flow.rpc.as_mut() {
            app.on_ack(now, &mut flow.sender);
        }
        #[cfg(debug_assertions)]
        if let Err(e) = self.flows[fi].sender.check_invariants() {
            panic!("flow {fi} scoreboard invariant broken at {now} ns: {e}");
        }
        self.pump(fi);
        let f = &mut self.flows[fi];
        if f.app.is_some() && f.sender.completed_ns.is_some() {
            // A finished short connection keeps its statistics, not its scoreboard memory.
            f.sender.release_buffers();
        }
    }

    /// Let a flow's sender put packets on its NIC while TSQ allows, then re-arm its timer.
    fn pump(&mut self, fi: usize) {
        let now = self.now;
        let mut tsq_blocked = false;
        loop {
            let flow = &mut self.flows[fi];
            let tsq_limit = flow.sender.tsq_limit_bytes();
            if flow.nic_bytes >= tsq_limit {
                tsq_blocked = true;
                break;
            }
            match flow.sender.poll_transmit(now) {
                Some(mut p) => {
                    p.flow = fi as u32;
                    p.hop = 0;
                    flow.nic_bytes += p.wire_bytes as u64;
                    flow.data_tx += 1;
                    let nic = flow.data_path.first();
                    self.enqueue(nic, p);
                }
                None => break,
            }
        }
        self.arm_sender_timer(fi, tsq_blocked);
    }

    /// Arm the flow's timer for its next recovery deadline and, unless TSQ holds it back (a NIC
    /// departure will pump it again), its next pacing departure.
    fn arm_sender_timer(&mut self, fi: usize, tsq_blocked: bool) {
        let s = &self.flows[fi].sender;
        let mut want = s.next_timer_deadline();
        if let Some(t) = self.flows[fi].rpc.as_ref().and_then(|a| a.next_deadline()) {
            want = Some(want.map_or(t, |w| w.min(t)));
        }
        if !tsq_blocked {
            if let Some(t) = s.next_send_time() {
                want = Some(want.map_or(t, |w| w.min(t)));
            }
        }
        if let Some(t) = want {
            let t = t.max(self.now);
            let cur = self.flows[fi].sender_timer_at;
            if cur.is_none_or(|c| t < c) {
                self.flows[fi].sender_timer_at = Some(t);
                self.push(t, EvKind::SenderTimer, fi as u32);
            }
        }
    }

    fn arm_receiver_timer(&mut self, fi: usize) {
        if let Some(t) = self.flows[fi].receiver.next_timeout() {
            let cur = self.flows[fi].receiver_timer_at;
            if cur.is_none_or(|c| t < c) {
                self.flows[fi].receiver_timer_at = Some(t);
                self.push(t, EvKind::ReceiverTimer, fi as u32);
            }
        }
    }

    fn on_sender_timer(&mut self, fi: usize, t: Nanos) {
        if self.flows[fi].sender_timer_at != Some(t) {
            return; // superseded by an earlier entry that already fired
        }
        self.flows[fi].sender_timer_at = None;
        let now = self.now;
        let flow = &mut self.flows[fi];
        if let Some(app) = flow.rpc.as_mut() {
            app.on_timer(now, &mut flow.sender);
        }
        if flow.sender.next_timer_deadline().is_some_and(|d| d <= now) {
            flow.sender.on_timeout(now);
        }
        self.pump(fi);
    }

    fn on_receiver_timer(&mut self, fi: usize, t: Nanos) {
        if self.flows[fi].receiver_timer_at != Some(t) {
            return;
        }
        self.flows[fi].receiver_timer_at = None;
        let now = self.now;
        let flow = &mut self.flows[fi];
        if let Some(mut a) = flow.receiver.on_timeout(now) {
            a.flow = fi as u32;
            a.hop = 0;
            let first = flow.ack_path.first();
            self.enqueue(first, a);
        }
        self.arm_receiver_timer(fi);
    }

    fn take_sample(&mut self) {
        let now = self.now;
        let interval = self.cfg.sample_interval_ns;
        for (fi, f) in self.flows.iter_mut().enumerate() {
            if !f.sampled {
                continue;
            }
            let delivered = f.receiver.delivered_bytes;
            let s = &mut f.sender;
            let st = s.cc.sample(&s.tp);
            let rtt_ms = if s.stats.interval_rtt_count > 0 {
                (s.stats.interval_rtt_sum_ns / s.stats.interval_rtt_count as u128) as f64 / 1e6
            } else {
                f64::NAN
            };
            s.stats.interval_rtt_sum_ns = 0;
            s.stats.interval_rtt_count = 0;
            self.metrics.flow_row(metrics::FlowRow {
                t_ns: now,
                flow: fi as i32,
                delivered_bytes: delivered as i64,
                goodput_bps: (delivered - f.last_delivered_bytes) as f64 * 8e9 / interval as f64,
                cwnd_pkts: s.tp.snd_cwnd as i64,
                mss: s.tp.mss as i64,
                inflight_bytes: s.inflight_bytes() as i64,
                pacing_rate_bps: s.tp.pacing_rate_bytes_per_s.min(s.tp.max_pacing_rate_bytes_per_s) as f64 * 8.0,
                delivery_rate_bps: s.stats.last_delivery_rate_bytes_per_s as f64 * 8.0,
                srtt_ms: s.tp.srtt_ns as f64 / 1e6,
                min_rtt_ms: if s.tp.min_rtt_ns == u64::MAX { f64::NAN } else { s.tp.min_rtt_ns as f64 / 1e6 },
                rtt_ms,
                retransmits: s.stats.retransmits as i64,
                ssthresh_pkts: if s.tp.snd_ssthresh >= cc::TCP_INFINITE_SSTHRESH { -1 } else { s.tp.snd_ssthresh as i64 },
                phase: st.phase,
                state: &st,
                ca_state: s.tp.ca_state as u8,
                rwnd_limited: s.stats.rwnd_limited as u8,
                sndbuf_limited: s.stats.sndbuf_limited as u8,
            });
            f.last_delivered_bytes = delivered;
        }
        for &(lid, name) in &self.monitored {
            let link = &mut self.links[lid as usize];
            link.note_occupancy(now);
            let busy = link.stats.busy_ns_interval
                + if link.in_tx.is_some() { now - link.tx_start_ns.max(self.metrics.last_sample_ns) } else { 0 };
            self.metrics.queue_row(metrics::QueueRow {
                t_ns: now,
                name,
                occupancy_bytes: link.q_bytes as i64,
                occupancy_pkts: link.queue.len() as i64,
                mean_occupancy_bytes: link.stats.occ_integral as f64 / interval as f64,
                max_occupancy_bytes: link.stats.max_bytes_interval as i64,
                drops: link.stats.drops as i64,
                random_losses: link.stats.random_losses as i64,
                ce_marks: link.stats.ce_marks as i64,
                tx_bytes: link.stats.tx_bytes as i64,
                utilization: (busy as f64 / interval as f64).min(1.0),
                pause_frames: link.stats.pause_frames as i64,
            });
            link.stats.occ_integral = 0;
            link.stats.max_bytes_interval = link.q_bytes;
            link.stats.busy_ns_interval = 0;
        }
        self.metrics.last_sample_ns = now;
    }

    /// What the flow's handshake would measure on an idle path: propagation both ways plus the
    /// serialization of a SYN-sized packet (78 bytes on the wire) at every hop. Queueing at the
    /// moment of the handshake is not modelled.
    fn handshake_rtt_ns(&self, fi: usize) -> Nanos {
        const SYN_WIRE_BITS: u128 = 78 * 8;
        let f = &self.flows[fi];
        f.data_path
            .hops()
            .iter()
            .chain(f.ack_path.hops().iter())
            .map(|&l| {
                let link = &self.links[l as usize];
                link.delay_ns + (SYN_WIRE_BITS * 1_000_000_000 / link.rate_bps as u128) as Nanos
            })
            .sum()
    }

    /// One line per flow describing its sender's state (debugging aid).
    pub fn debug_flows(&self) -> Vec<String> {
        self.flows.iter().map(|f| format!("nic_bytes={} {}", f.nic_bytes, f.sender.debug_state())).collect()
    }

    /// Data packets of flow `fi` currently inside the network (queues, serializers, pipes).
    pub fn data_packets_in_network(&self, fi: usize) -> u64 {
        let mut n = 0;
        for l in &self.links {
            let is = |p: &Packet| p.is_data && p.flow as usize == fi;
            n += l.queue.iter().filter(|p| is(p)).count() as u64;
            n += l.pipe.iter().filter(|(_, p)| is(p)).count() as u64;
            if l.cut_through_bytes == 0 {
                // (A cut-through link's packet in serialization is already in its pipe.)
                n += l.in_tx.iter().filter(|p| is(p)).count() as u64;
            }
        }
        n
    }

    /// Conservation of packets for every flow: sent = received + dropped + in the network.
    pub fn check_conservation(&self) -> Result<(), String> {
        for (fi, f) in self.flows.iter().enumerate() {
            let inside = self.data_packets_in_network(fi);
            if f.data_tx != f.data_rx + f.data_dropped + inside {
                return Err(format!(
                    "flow {fi}: sent {} != received {} + dropped {} + in network {}",
                    f.data_tx, f.data_rx, f.data_dropped, inside
                ));
            }
            if f.sender.stats.data_packets_sent != f.data_tx {
                return Err(format!("flow {fi}: transport sent {} but NIC saw {}", f.sender.stats.data_packets_sent, f.data_tx));
            }
            // The receiver cannot have more in-order bytes than the sender has had acknowledged
            // plus what is in flight, nor fewer than acknowledged.
            let acked = f.sender.bytes_acked();
            if f.receiver.delivered_bytes < acked {
                return Err(format!("flow {fi}: receiver has {} bytes but sender saw {} acked", f.receiver.delivered_bytes, acked));
            }
        }
        Ok(())
    }

    /// Per-flow summary and the columnar tables.
    pub fn results(&self) -> Results {
        let mut flows = Table::default();
        let n = self.flows.len();
        let mut flow_id = Vec::with_capacity(n);
        let mut cc_code = Vec::with_capacity(n);
        let mut start_s = Vec::with_capacity(n);
        let mut end_s = Vec::with_capacity(n);
        let mut fct_s = Vec::with_capacity(n);
        let mut delivered = Vec::with_capacity(n);
        let mut goodput = Vec::with_capacity(n);
        let mut sent = Vec::with_capacity(n);
        let mut retrans = Vec::with_capacity(n);
        let mut retrans_rate = Vec::with_capacity(n);
        let mut lost = Vec::with_capacity(n);
        let (mut rtt_mean, mut p50, mut p95, mut p99) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut rto = Vec::with_capacity(n);
        let mut ce = Vec::with_capacity(n);
        let mut cc_labels: Vec<String> = Vec::new();
        for (i, f) in self.flows.iter().enumerate() {
            let code = match cc_labels.iter().position(|c| c == f.cc_name) {
                Some(c) => c,
                None => {
                    cc_labels.push(f.cc_name.to_string());
                    cc_labels.len() - 1
                }
            };
            flow_id.push(i as i32);
            cc_code.push(code as u8);
            let start = f.start_ns.min(self.now);
            let end = match f.sender.completed_ns {
                Some(c) => c,
                None => f.stop_ns.unwrap_or(self.now).min(self.now),
            };
            start_s.push(start as f64 / 1e9);
            end_s.push(end as f64 / 1e9);
            fct_s.push(match f.sender.completed_ns {
                Some(c) => (c - f.start_ns) as f64 / 1e9,
                None => f64::NAN,
            });
            let d = f.receiver.delivered_bytes;
            delivered.push(d as i64);
            let active = end.saturating_sub(start);
            goodput.push(if active > 0 { d as f64 * 8e9 / active as f64 } else { 0.0 });
            let s = &f.sender.stats;
            sent.push(s.data_packets_sent as i64);
            retrans.push(s.retransmits as i64);
            retrans_rate.push(if s.data_packets_sent > 0 { s.retransmits as f64 / s.data_packets_sent as f64 } else { 0.0 });
            lost.push(f.data_dropped as i64);
            rtt_mean.push(if s.rtt_count > 0 { (s.rtt_sum_ns / s.rtt_count as u128) as f64 / 1e6 } else { f64::NAN });
            p50.push(f.sender.rtt_hist.quantile_ns(0.5) / 1e6);
            p95.push(f.sender.rtt_hist.quantile_ns(0.95) / 1e6);
            p99.push(f.sender.rtt_hist.quantile_ns(0.99) / 1e6);
            rto.push(s.rto_count as i64);
            ce.push(f.receiver.ce_count as i64);
        }
        flows.push("flow", Column::I32(flow_id));
        flows.push("cc_code", Column::U8(cc_code));
        flows.push("start_s", Column::F64(start_s));
        flows.push("end_s", Column::F64(end_s));
        flows.push("fct_s", Column::F64(fct_s));
        flows.push("delivered_bytes", Column::I64(delivered));
        flows.push("goodput_bps", Column::F64(goodput));
        flows.push("data_packets_sent", Column::I64(sent));
        flows.push("retransmits", Column::I64(retrans));
        flows.push("retrans_rate", Column::F64(retrans_rate));
        flows.push("lost_packets", Column::I64(lost));
        flows.push("rtt_mean_ms", Column::F64(rtt_mean));
        flows.push("rtt_p50_ms", Column::F64(p50));
        flows.push("rtt_p95_ms", Column::F64(p95));
        flows.push("rtt_p99_ms", Column::F64(p99));
        flows.push("rto_count", Column::I64(rto));
        flows.push("ce_packets", Column::I64(ce));
        workload::push_flow_columns(&mut flows, &self.flows);
        self.push_app_columns(&mut flows);
        let (timeseries, phase_labels) = self.metrics.timeseries_table();
        let queue = self.metrics.queue_table();
        let data_sent: u64 = self.flows.iter().map(|f| f.sender.stats.data_packets_sent).sum();
        Results {
            flows,
            timeseries,
            queue,
            gaps: gaps::table(self.flows.iter().enumerate().map(|(i, f)| (i, f.gaps.as_deref()))),
            app_events: self.app_events.table(),
            pause_frames: self.pause_frames_total,
            drops: self.links.iter().map(|l| l.stats.drops).sum(),
            cc_labels,
            phase_labels,
            queue_labels: self.metrics.queue_labels(),
            events: self.events,
            data_packets_delivered: self.data_packets_delivered,
            data_packets_sent: data_sent,
            sim_end_ns: self.now,
            complete: self.is_complete(),
        }
    }
}

/// Everything a run produces.
pub struct Results {
    pub flows: Table,
    pub timeseries: Table,
    pub queue: Table,
    /// Per-flow NIC inter-departure gap histograms (`gaps.rs`), for flows with `gap_histogram`.
    pub gaps: Table,
    /// One row per completed application query (`apps.rs`); Python calls it `events`.
    pub app_events: Table,
    /// PAUSE/XON frames sent by all switch ports (lossless mode).
    pub pause_frames: u64,
    /// Packets dropped for lack of buffer (and RED early drops) on all links.
    pub drops: u64,
    pub cc_labels: Vec<String>,
    pub phase_labels: Vec<String>,
    pub queue_labels: Vec<String>,
    pub events: u64,
    pub data_packets_delivered: u64,
    pub data_packets_sent: u64,
    pub sim_end_ns: Nanos,
    pub complete: bool,
}

/// The algorithms the core offers, with one line each (for `bbrlab cc`).
pub fn algorithms() -> Vec<(&'static str, &'static str)> {
    vec![
        ("reno", "Reno/NewReno AIMD with SACK recovery and PRR (RFC 5681, 6675, 9937)"),
        ("cubic", "CUBIC (RFC 9438) with Linux's classic HyStart, as tcp_cubic.c"),
        ("cubic_hspp", "CUBIC with RFC 9406 HyStart++ instead of Linux's classic HyStart"),
        ("bbr1", "BBRv1 as Linux mainline tcp_bbr.c (alias: bbr)"),
        ("bbr2", "BBRv2 as Google's v2alpha Linux release"),
        ("bbr2_new", "BBRv2 with seed 001's many-flows ECN changes (bw_lo cut by ECN, additive probing)"),
        ("bbr3", "BBRv3 as draft-ietf-ccwg-bbr-06 specifies"),
        ("bbr3_linux", "BBRv3 with Google's Linux v3 constants (drain 1/2.885, DOWN 0.91, DCTCP-style ECN)"),
        ("dctcp", "DCTCP (RFC 8257): cwnd cut by alpha/2 per window of CE marks"),
        ("bql", "BQL: delay-based, paired PID controllers hold a small bottleneck queue (seed 004)"),
    ]
}
