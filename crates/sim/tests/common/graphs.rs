//! The graph tests' shared networks (`graph.rs`, `graph_links.rs`): the dumbbell and the same
//! network written as a graph, with keys added to its bottleneck; the runner and the checker.

use serde_json::{json, Value};
use sim::config::Config;
use sim::{Results, Simulation};

pub const MS: u64 = 1_000_000;
pub const S: u64 = 1_000_000_000;

pub fn run_json(v: &Value) -> (Simulation, Results) {
    let mut sim = Simulation::from_json(&v.to_string()).expect("a valid scenario");
    sim.run_until(u64::MAX);
    sim.check_conservation().unwrap();
    let r = sim.results();
    (sim, r)
}

pub fn error_of(v: &Value) -> String {
    match Config::check_json(&v.to_string()) {
        Ok(_) => String::new(),
        Err(e) => e.to_string(),
    }
}

pub const RATE: u64 = 100_000_000;
pub const ACCESS: u64 = 1_000_000_000;
pub const RTT: u64 = 20_000_000;
pub const BUFFER: u64 = 250_000;

pub fn three_flows() -> Vec<Value> {
    vec![
        json!({"cc": "cubic"}),
        json!({"cc": "bbr1", "start_ns": 200 * MS}),
        json!({"cc": "reno", "start_ns": 400 * MS}),
    ]
}

/// The dumbbell, its bottleneck with `keys` added.
pub fn dumbbell(keys: &Value) -> Value {
    let mut b = json!({"rate_bps": RATE, "rtt_ns": RTT, "buffer": {"bytes": BUFFER}});
    merge(&mut b, keys);
    json!({"seed": 3, "duration_ns": 2 * S, "sample_interval_ns": 100 * MS,
        "topology": {"kind": "dumbbell", "access_rate_bps": ACCESS, "bottleneck": b},
        "flows": three_flows()})
}

/// The same network as a graph (sender hosts → r1 → r2 → receiver, access links at 1 Gbit/s
/// with no delay and unlimited queues, as the dumbbell's), its bottleneck link given `keys`.
pub fn dumbbell_as_graph(keys: &Value) -> Value {
    let big = json!({"packets": 1_000_000_000u64});
    let mut nodes = vec![
        json!({"name": "r1", "kind": "switch"}),
        json!({"name": "r2", "kind": "switch"}),
        json!({"name": "rx", "kind": "host"}),
    ];
    let mut b = json!({"from": "r1", "to": "r2", "name": "bottleneck", "rate_bps": RATE,
        "delay_ns": RTT / 2, "buffer": {"bytes": BUFFER}});
    merge(&mut b, keys);
    let mut links = vec![b, json!({"from": "r2", "to": "rx", "rate_bps": ACCESS, "buffer": big})];
    let mut flows = three_flows();
    for (i, f) in flows.iter_mut().enumerate() {
        let h = format!("s{i}");
        nodes.push(json!({"name": h, "kind": "host"}));
        links.push(json!({"from": h, "to": "r1", "rate_bps": ACCESS, "buffer": big}));
        f["src"] = h.into();
        f["dst"] = "rx".into();
    }
    json!({"seed": 3, "duration_ns": 2 * S, "sample_interval_ns": 100 * MS,
        "topology": {"kind": "graph", "nodes": nodes, "links": links}, "flows": flows})
}

pub fn merge(into: &mut Value, keys: &Value) {
    for (k, x) in keys.as_object().unwrap() {
        into[k] = x.clone();
    }
}
