//! Shared by the simulator's integration tests: the wire constants (from the transport's
//! exported header sizes), one typed scenario builder, the runner and column accessors.
//!
//! Scenarios are built from typed specs ([`Dumbbell`], [`Star`], [`FlowSpec`], [`QueryApp`]) into
//! `serde_json::json!` values in one function per topology ([`dumbbell_json`], [`star_json`])
//! plus one per nested object ([`FlowSpec::json`], [`QueryApp::json`]), and reach the simulator
//! only through `sim::config::Config`'s deserialization, as a scenario file does. A change of
//! the config's field names therefore touches this file alone.

#![allow(dead_code)]

pub mod graphs;

use serde_json::{json, Value};
use sim::config::Config;
use sim::metrics::{Column, Table};
use sim::{Results, Simulation};
use transport::{DEFAULT_MSS_BYTES, ETHERNET_OVERHEAD_BYTES, TCP_IP_HEADER_BYTES};

/// Payload bytes per full segment (the scenario default `mss_bytes`).
pub const MSS: u64 = DEFAULT_MSS_BYTES as u64;
/// Wire bytes per full data segment: payload + TCP/IP with timestamps + Ethernet framing.
pub const WIRE: u64 = MSS + FRAME_OVERHEAD;
/// Wire bytes a segment adds to its payload (TCP/IP with timestamps + Ethernet framing); also
/// the size of a pure ACK without SACK blocks.
pub const FRAME_OVERHEAD: u64 = TCP_IP_HEADER_BYTES as u64 + ETHERNET_OVERHEAD_BYTES as u64;
pub const MSS_F: f64 = MSS as f64;
pub const WIRE_F: f64 = WIRE as f64;

/// Goodput ceiling of a link: the payload share of the wire bytes.
pub fn ceiling_bps(rate_bps: f64) -> f64 {
    rate_bps * MSS_F / WIRE_F
}

/// A single flow on a clean link must reach 95 % of the goodput ceiling and never exceed it
/// (the link's rate is a hard limit).
pub fn assert_fills_clean_link(label: &str, goodput_bps: f64, rate_bps: f64) {
    let ceil = ceiling_bps(rate_bps);
    println!(
        "{label}: goodput {:.2} Mbit/s = {:.1} % of ceiling {:.2}",
        goodput_bps / 1e6,
        100.0 * goodput_bps / ceil,
        ceil / 1e6
    );
    assert!(
        goodput_bps >= 0.95 * ceil,
        "{label}: goodput {:.2} Mbit/s < 95 % of ceiling {:.2}",
        goodput_bps / 1e6,
        ceil / 1e6
    );
    assert!(
        goodput_bps <= ceil * 1.0001,
        "{label}: goodput {:.3} Mbit/s above the ceiling {:.3}",
        goodput_bps / 1e6,
        ceil / 1e6
    );
}

/// Serialization time of one full data frame at `rate_bps`, seconds.
pub fn frame_s(rate_bps: f64) -> f64 {
    WIRE_F * 8.0 / rate_bps
}

/// Seed, length and sampling of a run.
#[derive(Clone, Copy, Debug)]
pub struct Run {
    pub seed: u64,
    pub duration_ns: u64,
    pub sample_interval_ns: u64,
}

impl Run {
    pub fn new(seed: u64, duration_ns: u64, sample_interval_ns: u64) -> Run {
        Run { seed, duration_ns, sample_interval_ns }
    }

    /// `seed`, `dur_s` seconds, samples every 100 ms.
    pub fn secs(seed: u64, dur_s: u64) -> Run {
        Run::new(seed, dur_s * 1_000_000_000, 100_000_000)
    }
}

/// The drop-tail limit of a queue.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Buffer {
    /// The scenario default (one BDP).
    #[default]
    Default,
    Bytes(u64),
    Packets(u64),
}

/// Marking at the bottleneck.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Marking {
    #[default]
    None,
    /// DCTCP step marking: CE when more than K bytes wait.
    ThresholdBytes(u64),
    /// DCTCP step marking: CE when more than K packets wait.
    ThresholdPackets(u64),
    /// RED on the averaged queue (marks ECT, drops the rest).
    Red { min_th_bytes: u64, max_th_bytes: u64, max_p: f64, weight: f64 },
}

/// A dumbbell: per-sender access links into R1, the bottleneck R1 → R2, R2 → the receiver.
#[derive(Clone, Copy, Debug, Default)]
pub struct Dumbbell {
    pub rate_bps: u64,
    pub rtt_ns: u64,
    pub buffer: Buffer,
    pub loss: f64,
    pub marking: Marking,
    /// None: the simulator's default (10× the bottleneck).
    pub access_rate_bps: Option<u64>,
}

impl Dumbbell {
    pub fn new(rate_bps: u64, rtt_ns: u64, buffer: Buffer) -> Dumbbell {
        Dumbbell { rate_bps, rtt_ns, buffer, ..Default::default() }
    }

    /// A drop-tail buffer of `bdp_fraction` of the bandwidth-delay product, in bytes.
    pub fn with_bdp_buffer(rate_bps: u64, rtt_ns: u64, bdp_fraction: f64) -> Dumbbell {
        let bytes = (rate_bps as f64 * rtt_ns as f64 / 1e9 / 8.0 * bdp_fraction) as u64;
        Dumbbell::new(rate_bps, rtt_ns, Buffer::Bytes(bytes))
    }

    pub fn loss(self, loss: f64) -> Dumbbell {
        Dumbbell { loss, ..self }
    }

    pub fn marking(self, marking: Marking) -> Dumbbell {
        Dumbbell { marking, ..self }
    }

    pub fn access_rate(self, access_rate_bps: u64) -> Dumbbell {
        Dumbbell { access_rate_bps: Some(access_rate_bps), ..self }
    }
}

/// One top-of-rack switch: `workers` hosts and one aggregator behind its output port.
#[derive(Clone, Copy, Debug, Default)]
pub struct Star {
    pub workers: u32,
    pub rate_bps: u64,
    pub delay_ns: u64,
    /// Per output port (None = unlimited).
    pub buffer_bytes: Option<u64>,
    pub cut_through: bool,
    /// Lossless mode: 802.3x PAUSE with (XOFF, XON) bytes.
    pub pfc: Option<(u64, u64)>,
    pub clock_ppm: u32,
}

/// One flow; what is left None takes the scenario default.
#[derive(Clone, Debug, Default)]
pub struct FlowSpec {
    pub cc: String,
    pub start_ns: u64,
    pub stop_ns: Option<u64>,
    pub bytes: Option<u64>,
    pub ecn: bool,
    pub sender: Option<u32>,
    pub rcvbuf_bytes: Option<u64>,
    pub pacing: Option<bool>,
    /// "static" or "ictcp" (None = default).
    pub receiver_window: Option<&'static str>,
    /// RPC application: (message size in bytes, gap in ns).
    pub rpc: Option<(u64, u64)>,
}

impl FlowSpec {
    pub fn new(cc: &str) -> FlowSpec {
        FlowSpec { cc: cc.to_string(), ..Default::default() }
    }

    /// The flow as the config's `flows` entry.
    pub fn json(&self) -> Value {
        let mut f = json!({ "cc": self.cc, "start_ns": self.start_ns, "ecn": self.ecn });
        let o = f.as_object_mut().unwrap();
        let mut opt = |k: &str, v: Option<Value>| {
            if let Some(v) = v {
                o.insert(k.to_string(), v);
            }
        };
        opt("stop_ns", self.stop_ns.map(Value::from));
        opt("bytes", self.bytes.map(Value::from));
        opt("sender", self.sender.map(Value::from));
        opt("rcvbuf_bytes", self.rcvbuf_bytes.map(Value::from));
        opt("pacing", self.pacing.map(|on| Value::from(if on { "on" } else { "off" })));
        opt("receiver_window", self.receiver_window.map(Value::from));
        opt(
            "rpc",
            self.rpc
                .map(|(size_bytes, gap_ns)| json!({ "size_bytes": size_bytes, "gap_ns": gap_ns })),
        );
        f
    }
}

/// `n` identical flows of `cc`.
pub fn flows(cc: &str, n: usize) -> Vec<FlowSpec> {
    vec![FlowSpec::new(cc); n]
}

/// One default flow per algorithm named.
pub fn ccs(names: &[&str]) -> Vec<FlowSpec> {
    names.iter().map(|cc| FlowSpec::new(cc)).collect()
}

/// A partition/aggregate query application on the star (`apps.rs`).
#[derive(Clone, Debug)]
pub struct QueryApp {
    pub workers: u32,
    pub bytes: u64,
    pub repetitions: u32,
    pub start_ns: u64,
    pub gap_ns: u64,
    pub jitter_ns: u64,
    pub flow: FlowSpec,
}

impl QueryApp {
    pub fn json(&self) -> Value {
        json!({
            "kind": "query",
            "workers": self.workers,
            "size_bytes": self.bytes,
            "repetitions": self.repetitions,
            "start_ns": self.start_ns,
            "gap_ns": self.gap_ns,
            "jitter_ns": self.jitter_ns,
            "flow": self.flow.json(),
        })
    }
}

fn scenario_json(run: Run, topology: Value, flows: &[FlowSpec], apps: &[QueryApp]) -> Value {
    json!({
        "seed": run.seed,
        "duration_ns": run.duration_ns,
        "sample_interval_ns": run.sample_interval_ns,
        "topology": topology,
        "flows": flows.iter().map(FlowSpec::json).collect::<Vec<_>>(),
        "apps": apps.iter().map(QueryApp::json).collect::<Vec<_>>(),
    })
}

/// The dumbbell scenario as JSON (see [`dumbbell`]).
pub fn dumbbell_json(run: Run, d: &Dumbbell, flows: &[FlowSpec]) -> Value {
    let mut b = json!({ "rate_bps": d.rate_bps, "rtt_ns": d.rtt_ns, "loss": d.loss });
    let bo = b.as_object_mut().unwrap();
    match d.buffer {
        Buffer::Default => {}
        Buffer::Bytes(n) => {
            bo.insert("buffer".into(), json!({ "bytes": n }));
        }
        Buffer::Packets(n) => {
            bo.insert("buffer".into(), json!({ "packets": n }));
        }
    }
    match d.marking {
        Marking::None => {}
        Marking::ThresholdBytes(k) => {
            bo.insert("ecn_threshold_bytes".into(), k.into());
        }
        Marking::ThresholdPackets(k) => {
            bo.insert("ecn_threshold_packets".into(), k.into());
        }
        Marking::Red { min_th_bytes, max_th_bytes, max_p, weight } => {
            bo.insert(
                "red".into(),
                json!({ "min_th_bytes": min_th_bytes, "max_th_bytes": max_th_bytes, "max_p": max_p, "weight": weight }),
            );
        }
    }
    let mut topo = json!({ "kind": "dumbbell", "bottleneck": b });
    if let Some(a) = d.access_rate_bps {
        topo["access_rate_bps"] = a.into();
    }
    scenario_json(run, topo, flows, &[])
}

/// The star scenario as JSON (see [`star`]).
pub fn star_json(run: Run, s: &Star, flows: &[FlowSpec], apps: &[QueryApp]) -> Value {
    let mut st = json!({
        "workers": s.workers,
        "rate_bps": s.rate_bps,
        "delay_ns": s.delay_ns,
        "forwarding": if s.cut_through { "cut-through" } else { "store-and-forward" },
        "clock_ppm": s.clock_ppm,
        "host_jitter_ns": 0,
    });
    if let Some(b) = s.buffer_bytes {
        st["buffer_bytes"] = b.into();
    }
    if let Some((xoff, xon)) = s.pfc {
        st["lossless"] = true.into();
        st["pfc"] = json!({ "xoff_bytes": xoff, "xon_bytes": xon, "quanta": 65535 });
    }
    st["kind"] = "star".into();
    scenario_json(run, st, flows, apps)
}

/// Read a scenario as the core does, checks included (panics with the error and the JSON if
/// invalid).
pub fn config(v: Value) -> Config {
    Config::from_value(v.clone()).unwrap_or_else(|e| panic!("config: {e}\n{v}"))
}

/// A dumbbell scenario.
pub fn dumbbell(run: Run, d: &Dumbbell, flows: &[FlowSpec]) -> Config {
    config(dumbbell_json(run, d, flows))
}

/// The common WAN experiment: a dumbbell of `rate_bps` and `rtt_ms` with a drop-tail buffer
/// of `buffer_bdp` bandwidth-delay products and random loss `loss`, one default flow per
/// algorithm in `ccs`, `dur_s` seconds sampled every 100 ms.
pub fn bdp_dumbbell(
    seed: u64,
    rate_bps: u64,
    rtt_ms: u64,
    buffer_bdp: f64,
    loss: f64,
    dur_s: u64,
    ccs_: &[&str],
) -> Config {
    let d = Dumbbell::with_bdp_buffer(rate_bps, rtt_ms * 1_000_000, buffer_bdp).loss(loss);
    dumbbell(Run::secs(seed, dur_s), &d, &ccs(ccs_))
}

/// The seed the single-run WAN tests share: any fixed seed would do; 7 keeps their checked
/// figures where they were measured.
pub const WAN_SEED: u64 = 7;

/// [`bdp_dumbbell`] with [`WAN_SEED`].
pub fn wan_dumbbell(
    rate_bps: u64,
    rtt_ms: u64,
    buffer_bdp: f64,
    loss: f64,
    dur_s: u64,
    ccs: &[&str],
) -> Config {
    bdp_dumbbell(WAN_SEED, rate_bps, rtt_ms, buffer_bdp, loss, dur_s, ccs)
}

/// A star scenario with flows and applications.
pub fn star(run: Run, s: &Star, flows: &[FlowSpec], apps: &[QueryApp]) -> Config {
    config(star_json(run, s, flows, apps))
}

/// Run to the end; packets must be conserved.
pub fn simulate(cfg: Config) -> (Simulation, Results) {
    let mut s = Simulation::new(cfg).unwrap_or_else(|e| panic!("{e}"));
    s.run_until(u64::MAX);
    s.check_conservation().expect("packets conserved");
    let r = s.results();
    (s, r)
}

/// Run to the end and return the results.
pub fn run(cfg: Config) -> Results {
    simulate(cfg).1
}

fn column<'a>(t: &'a Table, name: &str) -> &'a Column {
    t.get(name).unwrap_or_else(|| panic!("no column {name}"))
}

pub fn col_f64(t: &Table, name: &str) -> Vec<f64> {
    column(t, name).as_f64().unwrap_or_else(|| panic!("{name} is not f64")).to_vec()
}

pub fn col_i64(t: &Table, name: &str) -> Vec<i64> {
    column(t, name).as_i64().unwrap_or_else(|| panic!("{name} is not i64")).to_vec()
}

pub fn col_i32(t: &Table, name: &str) -> Vec<i32> {
    match column(t, name) {
        Column::I32(v) => v.clone(),
        _ => panic!("{name} is not i32"),
    }
}

pub fn col_u8(t: &Table, name: &str) -> Vec<u8> {
    match column(t, name) {
        Column::U8(v) => v.clone(),
        _ => panic!("{name} is not u8"),
    }
}

/// A numeric column as f64, whatever its type.
pub fn col_num(t: &Table, name: &str) -> Vec<f64> {
    let c = column(t, name);
    match c.as_f64() {
        Some(v) => v.to_vec(),
        None => c
            .as_i64()
            .unwrap_or_else(|| panic!("{name} is not numeric"))
            .iter()
            .map(|&x| x as f64)
            .collect(),
    }
}

/// Rows of the `queue` table that belong to queue `name` (e.g. "bottleneck").
pub fn queue_rows(r: &Results, name: &str) -> Vec<usize> {
    let code =
        r.queue_labels.iter().position(|l| l == name).unwrap_or_else(|| panic!("no queue {name}"));
    let codes = column(&r.queue, "queue_code").as_codes().expect("queue_code is a code column");
    codes.iter().enumerate().filter(|(_, &c)| c == code).map(|(i, _)| i).collect()
}

/// Retransmitted share of the data segments sent, all flows together.
pub fn retrans_rate(r: &Results) -> f64 {
    sum(&col_num(&r.flows, "retransmits")) / sum(&col_num(&r.flows, "data_packets_sent"))
}

pub fn sum(v: &[f64]) -> f64 {
    v.iter().sum()
}

pub fn mean(v: &[f64]) -> f64 {
    sum(v) / v.len() as f64
}
