//! A graph link has everything a link has elsewhere (issue 32): a dumbbell bottleneck's path
//! model (schedule, traces, policer, aggregation, jitter, reordering, burst loss). A graph
//! shaped as the dumbbell, its bottleneck link given the bottleneck's keys, runs as the
//! dumbbell; a scheduled rate moves a parking lot's flows to the max-min shares of the new
//! rate; a policer caps its flow at the token rate; bad keys are refused in the bottleneck's
//! one-line errors, at the graph link's path.

mod common;

use common::graphs::*;
use common::{ceiling_bps, col_f64, col_i32, col_num};
use serde_json::{json, Value};
use sim::config::Config;
use sim::Results;

/// Per flow: delivered bytes, retransmits; and the run's drops.
fn outcome(r: &Results) -> (Vec<f64>, Vec<f64>, u64) {
    (col_num(&r.flows, "delivered_bytes"), col_num(&r.flows, "retransmits"), r.drops)
}

/// Each mechanism of the path model on the graph's bottleneck link, and the dumbbell's
/// bottleneck with the same keys (its `rtt` where the graph link has `delay`, one way): the
/// same deliveries to the byte. The keys' random streams differ between the two builders, so
/// the mechanisms compared are the deterministic ones.
#[test]
fn a_graph_link_with_the_bottlenecks_path_keys_runs_as_the_dumbbell() {
    let sched = |delay_key: &str, delay: u64| {
        json!({"schedule": [
            {"at_ns": 500 * MS, "rate_bps": 40_000_000},
            {"at_ns": 900 * MS, delay_key: delay, "buffer_bytes": 60_000},
            {"at_ns": 1300 * MS, "rate_bps": 150_000_000},
        ]})
    };
    let policer = json!({"policer": {"rate_bps": 30_000_000, "burst_bytes": 30_000}});
    let aggregation = json!({"aggregation": {"direction": "data", "bytes": 16_000,
        "timeout_ns": 2_000_000}});
    let cases = [
        ("schedule", sched("rtt_ns", 2 * RTT), sched("delay_ns", RTT)),
        ("policer", policer.clone(), policer),
        ("aggregation", aggregation.clone(), aggregation),
    ];
    for (what, on_dumbbell, on_graph) in cases {
        let (_, d) = run_json(&dumbbell(&on_dumbbell));
        // The way back at the bottleneck's rate, as the dumbbell's ACK direction, which its
        // schedule's `rate` leaves.
        let mut on_graph = on_graph;
        on_graph["reverse_rate_bps"] = RATE.into();
        let g = run_json(&dumbbell_as_graph(&on_graph)).1;
        println!("{what}: dumbbell {:?}\n{what}: graph    {:?}", outcome(&d), outcome(&g));
        assert!(col_num(&d.flows, "delivered_bytes").iter().all(|&b| b > 0.0), "{what}");
        assert_eq!(outcome(&d), outcome(&g), "{what}");
        let clean = run_json(&dumbbell(&json!({}))).1;
        assert_ne!(outcome(&clean), outcome(&d), "{what} changes the run");
    }
}

/// The parking-lot preset of `n` bottlenecks written out as its graph, bottleneck 0 given
/// `keys`; flows as (src, dst, cc).
fn parking_lot_graph(keys: &Value, flows: &[(&str, &str, &str)], dur_ns: u64) -> Value {
    let preset = json!({"seed": 1, "duration_ns": dur_ns, "sample_interval_ns": 100 * MS,
        "topology": {"kind": "parking_lot", "bottlenecks": 2, "rate_bps": RATE,
            "delay_ns": 5 * MS, "ports": {"buffer": {"bytes": 250_000}}},
        "flows": flows.iter().map(|(s, d, cc)| json!({"cc": cc, "src": s, "dst": d}))
            .collect::<Vec<_>>()});
    let cfg = Config::from_json(&preset.to_string()).unwrap();
    let mut graph = serde_json::to_value(cfg.topology.graph().unwrap().as_ref()).unwrap();
    graph["kind"] = "graph".into();
    let links = graph["links"].as_array_mut().unwrap();
    let b0 = links.iter_mut().find(|l| l["from"] == "r0" && l["to"] == "r1").unwrap();
    merge(b0, keys);
    // The cross flows' RTT made the long flow's (two bottlenecks' delay), so that the shares
    // the algorithms reach do not depend on RTT unfairness.
    for host in ["x0_src", "x1_src"] {
        let access = links.iter_mut().find(|l| l["from"] == host).unwrap();
        access["delay_ns"] = (5 * MS).into();
    }
    let mut v = preset;
    v["topology"] = graph;
    v
}

/// Payload goodput of each flow over (t0, t1] seconds, from the cumulative deliveries.
fn goodputs_between(r: &Results, flows: usize, t0: f64, t1: f64) -> Vec<f64> {
    let (t, f) = (col_f64(&r.timeseries, "t_s"), col_i32(&r.timeseries, "flow"));
    let d = col_num(&r.timeseries, "delivered_bytes");
    let at = |i: usize, s: f64| {
        (0..t.len()).rev().find(|&k| f[k] as usize == i && t[k] <= s + 1e-9).map_or(0.0, |k| d[k])
    };
    (0..flows).map(|i| (at(i, t1) - at(i, t0)) * 8.0 / (t1 - t0)).collect()
}

/// Bottleneck 0 of a two-bottleneck parking lot (100 Mbit/s) is scheduled to 30 Mbit/s at
/// 2 s, 10 at 8 s and 20 at 16 s; the long flow crosses both, a cross flow bottleneck 1 alone
/// (RTTs made equal). Max-min shares: the long flow gets bottleneck 0's scheduled rate, the
/// cross flow the rest of bottleneck 1. Each flow's goodput over the settled part of each
/// interval is within 5 % of its share's goodput ceiling, and bottleneck 1 is full. (The
/// scheduled rate stays below half of bottleneck 1, so each flow has one bottleneck: where two
/// flows meet at one link or a flow crosses two congested ones, TCP's shares are not max-min.)
#[test]
fn a_scheduled_rate_moves_a_parking_lots_flows_to_the_new_max_min_shares() {
    let keys = json!({"schedule": [
        {"at_ns": 2 * S, "rate_bps": 30_000_000},
        {"at_ns": 8 * S, "rate_bps": 10_000_000},
        {"at_ns": 16 * S, "rate_bps": 20_000_000},
    ]});
    let flows = [("long_src", "long_dst", "cubic"), ("x1_src", "x1_dst", "cubic")];
    let (_, r) = run_json(&parking_lot_graph(&keys, &flows, 24 * S));
    // (interval, b0's rate, shares of long, x0, x1 in Mbit/s)
    let phases = [
        (5.0, 8.0, 30.0, [30.0, 70.0]),
        (11.0, 16.0, 10.0, [10.0, 90.0]),
        (19.0, 24.0, 20.0, [20.0, 80.0]),
    ];
    for (t0, t1, b0, shares) in phases {
        let g = goodputs_between(&r, 2, t0, t1);
        let mbps: Vec<String> = g.iter().map(|x| format!("{:.2}", x / 1e6)).collect();
        println!("({t0}, {t1}] s, b0 at {b0} Mbit/s: goodput {mbps:?} Mbit/s, shares {shares:?}");
        for (i, (&got, share)) in g.iter().zip(shares).enumerate() {
            let want = ceiling_bps(share * 1e6);
            assert!((got / want - 1.0).abs() < 0.05, "flow {i}: {got} vs share {want}");
        }
        let b1_sum = g[0] + g[1];
        assert!((b1_sum / ceiling_bps(RATE as f64) - 1.0).abs() < 0.05, "b1 carries {b1_sum}");
    }
}

/// A token bucket of 30 Mbit/s on bottleneck 0 caps the long flow at the token rate (its
/// goodput ceiling plus the burst spread over the run), with the excess dropped by the policer,
/// while the link would carry 100 Mbit/s.
#[test]
fn a_policer_on_a_graph_link_caps_its_flow_at_the_token_rate() {
    let token_bps = 30_000_000.0;
    let burst_bytes = 60_000.0;
    let keys =
        json!({"policer": {"rate_bps": token_bps as u64, "burst_bytes": burst_bytes as u64}});
    let (_, r) = run_json(&parking_lot_graph(&keys, &[("long_src", "long_dst", "cubic")], 10 * S));
    let got = goodputs_between(&r, 1, 0.0, 10.0)[0];
    let cap = ceiling_bps(token_bps) + burst_bytes * 8.0 / 10.0;
    let rows = common::queue_rows(&r, "r0-r1");
    let policed = col_num(&r.queue, "policer_drops");
    let drops: f64 = rows.iter().map(|&i| policed[i]).fold(0.0, f64::max);
    println!("goodput {:.2} Mbit/s, cap {:.2}, policer drops {drops}", got / 1e6, cap / 1e6);
    assert!(got <= cap, "{got} above the token rate's ceiling {cap}");
    assert!(got >= 0.6 * cap, "{got}: the policer starves the flow");
    assert!(drops > 0.0);
}

/// The bottleneck's errors, one line each, at the graph link's path: the same messages.
#[test]
fn bad_path_keys_on_a_graph_link_are_refused_as_on_the_bottleneck() {
    let trace = json!({"file": "t.mahimahi", "text": "1\n2\n3\n"});
    let cases = [
        ("trace", json!({"trace": trace})),
        ("trace", json!({"trace": {"file": "bad.mahimahi", "text": "x\n"}, "rate_bps": null})),
        ("schedule", json!({"schedule": [{"at_ns": 5, "loss": 0.1}, {"at_ns": 5, "loss": 0.2}]})),
        ("schedule", json!({"schedule": [{"at_ns": 5}]})),
        (
            "schedule.0.rate_bps",
            json!({"trace": trace, "rate_bps": null,
            "schedule": [{"at_ns": 5, "rate_bps": 1000}]}),
        ),
        ("policer.burst_bytes", json!({"policer": {"rate_bps": 1000, "burst_bytes": 100}})),
        ("rate_bps", json!({"rate_bps": null})),
    ];
    for (field, keys) in cases {
        let d = error_of(&dumbbell(&keys));
        let g = error_of(&dumbbell_as_graph(&keys));
        println!("{d}\n{g}");
        let d = d.strip_prefix(&format!("topology.bottleneck.{field}: ")).expect(&d).to_owned();
        let g = g.strip_prefix(&format!("topology.links.0.{field}: ")).expect(&g).to_owned();
        assert_eq!(d, g);
        assert!(!d.contains('\n'));
    }
    // A schedule names the link's own delay key.
    let e = error_of(&dumbbell_as_graph(&json!({"schedule": [{"at_ns": 5, "rtt_ns": 1000}]})));
    assert!(e.starts_with("topology.links.0.schedule.0.rtt_ns: this link has no rtt"), "{e}");
    let e = error_of(&dumbbell(&json!({"schedule": [{"at_ns": 5, "delay_ns": 1000}]})));
    assert!(
        e.starts_with("topology.bottleneck.schedule.0.delay_ns: this link has no delay"),
        "{e}"
    );
    // What acts on the way back needs one, at its own rate.
    let e = error_of(&dumbbell_as_graph(&json!({"duplex": false, "trace_reverse": trace})));
    assert!(e.starts_with("topology.links.0.trace_reverse: acts on the way back"), "{e}");
    let both = json!({"trace_reverse": trace, "reverse_rate_bps": RATE});
    let e = error_of(&dumbbell_as_graph(&both));
    assert!(e.starts_with("topology.links.0.trace_reverse: cannot be combined with reverse_rate"));
    let ok = json!({"trace_reverse": trace});
    assert_eq!(error_of(&dumbbell_as_graph(&ok)), "");
}

/// A star of `workers` at 1 Gbit/s, 10 µs a link, exact host clocks, `keys` added; flow i
/// (CUBIC) on worker i into the aggregator.
fn star(workers: usize, keys: &Value) -> Value {
    let mut t = json!({"kind": "star", "workers": workers, "rate_bps": 1_000_000_000u64,
        "delay_ns": 10_000, "buffer_bytes": 1_000_000, "clock_ppm": 0, "host_jitter_ns": 0});
    merge(&mut t, keys);
    let flows: Vec<Value> =
        (0..workers).map(|i| json!({"cc": "cubic", "start_ns": i * 1000})).collect();
    json!({"seed": 5, "duration_ns": 300 * MS, "sample_interval_ns": 10 * MS,
        "topology": t, "flows": flows})
}

/// The same star as a graph, its links in the order the star builds its own (the port to the
/// aggregator, each worker's NIC and the port down to it, the aggregator's NIC), `fabric` its
/// switch keys.
fn star_as_graph(workers: usize, fabric: &Value) -> Value {
    let port = |from: &str, to: &str, duplex: bool| {
        json!({"from": from, "to": to, "duplex": duplex, "rate_bps": 1_000_000_000u64,
            "delay_ns": 10_000, "buffer": {"bytes": 1_000_000}})
    };
    let mut nodes =
        vec![json!({"name": "tor", "kind": "switch"}), json!({"name": "agg", "kind": "host"})];
    let mut links = vec![port("tor", "agg", false)];
    let mut flows = vec![];
    for i in 0..workers {
        let w = format!("w{i}");
        nodes.push(json!({"name": w, "kind": "host"}));
        links.push(port(&w, "tor", true));
        flows.push(json!({"cc": "cubic", "start_ns": i * 1000, "src": w, "dst": "agg"}));
    }
    links.push(port("agg", "tor", false));
    json!({"seed": 5, "duration_ns": 300 * MS, "sample_interval_ns": 10 * MS,
        "topology": {"kind": "graph", "nodes": nodes, "links": links, "fabric": fabric},
        "flows": flows})
}

/// A 16-to-1 incast on the star and on the graph written as the star, with the star's switch
/// keys on the graph's switch: PAUSE (egress and ingress accounting) with cut-through, the
/// shared buffer with a dynamic threshold. Same per-flow deliveries, drops and PAUSE frames.
#[test]
fn a_graph_written_as_the_star_with_its_switch_keys_runs_as_the_star() {
    let cases = [
        json!({"lossless": true, "forwarding": "cut-through"}),
        json!({"lossless": true, "pfc": {"accounting": "ingress"}}),
        json!({"shared_buffer_bytes": 200_000, "shared_buffer_alpha": 1.0}),
    ];
    for keys in cases {
        let (_, s) = run_json(&star(16, &keys));
        let (_, g) = run_json(&star_as_graph(16, &keys));
        let of = |r: &Results| (outcome(r), r.pause_frames);
        println!("{keys}\n  star  {:?}\n  graph {:?}", of(&s), of(&g));
        assert_eq!(of(&s), of(&g), "{keys}");
        if keys["lossless"] == true {
            assert!(s.drops == 0 && s.pause_frames > 0, "{keys}: PAUSE holds the incast");
        } else {
            assert!(s.drops > 0, "{keys}: the pool drops");
        }
    }
}

/// A dynamic threshold without the pool it divides is refused alike on the star and on a
/// graph's fabric, each at its own key (one check serves both: `check_alpha_has_pool`).
#[test]
fn alpha_without_a_shared_pool_is_refused_on_the_star_and_on_the_fabric() {
    let keys = json!({"shared_buffer_alpha": 1.0});
    let why = "(the pool the dynamic threshold divides)";
    assert_eq!(
        error_of(&star(2, &keys)),
        format!("topology.shared_buffer_alpha: needs topology.shared_buffer {why}")
    );
    assert_eq!(
        error_of(&star_as_graph(2, &keys)),
        format!("topology.fabric.shared_buffer_alpha: needs topology.fabric.shared_buffer {why}")
    );
    let with_pool = json!({"shared_buffer_bytes": 200_000, "shared_buffer_alpha": 1.0});
    assert_eq!(error_of(&star(2, &with_pool)), "");
    assert_eq!(error_of(&star_as_graph(2, &with_pool)), "");
}
