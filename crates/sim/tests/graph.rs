//! The network graph (`topology.kind = "graph"` and its presets): routes and ECMP, the one-line
//! errors, and its physics — a graph shaped as a dumbbell runs as the dumbbell, no flow set
//! exceeds a link's ceiling, every packet is accounted for, and the measured shares follow the
//! max-min shares the topology gives.

mod common;

use common::graphs::*;
use common::{ceiling_bps, col_f64, col_i64};
use serde_json::{json, Value};
use sim::config::Config;

#[test]
fn a_graph_shaped_as_the_dumbbell_runs_as_the_dumbbell() {
    let (_, d) = run_json(&dumbbell(&json!({})));
    let (_, g) = run_json(&dumbbell_as_graph(&json!({})));
    let (dd, gd) = (col_i64(&d.flows, "delivered_bytes"), col_i64(&g.flows, "delivered_bytes"));
    println!("dumbbell {dd:?}\ngraph    {gd:?}");
    assert!(dd.iter().all(|&b| b > 0));
    for (a, b) in dd.iter().zip(&gd) {
        // The same links, queues and flows: the same deliveries to the byte.
        assert_eq!(a, b, "delivered bytes differ: dumbbell {dd:?}, graph {gd:?}");
    }
    assert_eq!(d.drops, g.drops);
    assert_eq!(col_i64(&d.flows, "retransmits"), col_i64(&g.flows, "retransmits"));
    // The bottleneck's queue row carries the link's name.
    assert!(g.queue_labels.iter().any(|q| q == "bottleneck"), "{:?}", g.queue_labels);
    assert!(g.queue_labels.iter().any(|q| q == "bottleneck-rev"), "{:?}", g.queue_labels);
    assert!(
        g.queue_labels.iter().any(|q| q == "s0-r1") && g.queue_labels.iter().any(|q| q == "r1-s0")
    );
}

/// A parking lot of `n` bottlenecks at 100 Mbit/s, 5 ms each; flows given as (src, dst, cc).
fn parking_lot(n: u32, flows: &[(&str, &str, &str)], dur_ns: u64) -> Value {
    let flows: Vec<Value> =
        flows.iter().map(|(s, d, cc)| json!({"cc": cc, "src": s, "dst": d})).collect();
    json!({"seed": 1, "duration_ns": dur_ns, "sample_interval_ns": 100_000_000,
        "topology": {"kind": "parking_lot", "bottlenecks": n, "rate_bps": RATE, "delay_ns": 5_000_000u64,
            "ports": {"buffer": {"bytes": 125_000}}},
        "flows": flows})
}

#[test]
fn parking_lot_routes_and_max_min_shares() {
    let v = parking_lot(
        2,
        &[
            ("long_src", "long_dst", "cubic"),
            ("x0_src", "x0_dst", "cubic"),
            ("x0_src", "x0_dst", "cubic"),
            ("x1_src", "x1_dst", "cubic"),
        ],
        100_000_000,
    );
    let cfg = Config::from_json(&v.to_string()).unwrap();
    let d = cfg.derived();
    let paths: Vec<&str> = d.routes.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "long_src-r0>r0-r1>r1-r2>r2-long_dst",
            "x0_src-r0>r0-r1>r1-x0_dst",
            "x0_src-r0>r0-r1>r1-x0_dst",
            "x1_src-r1>r1-r2>r2-x1_dst"
        ]
    );
    // Hop 0 has three flows: each a third; hop 1 gives the cross flow what the long one leaves.
    let share: Vec<f64> =
        d.routes.iter().map(|r| r.maxmin_goodput_bps / ceiling_bps(RATE as f64)).collect();
    let want = [1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0, 2.0 / 3.0];
    for (s, w) in share.iter().zip(want) {
        assert!((s - w).abs() < 1e-9, "{share:?}");
    }
    assert_eq!(d.main_queue, "r0-r1");
    assert_eq!(d.base_rtt_ns, 20_000_000, "long flow: two 5 ms links each way");
}

#[test]
fn a_parking_lot_keeps_every_link_under_its_ceiling_and_conserves_packets() {
    let (_, r) = run_json(&parking_lot(
        3,
        &[
            ("long_src", "long_dst", "cubic"),
            ("x0_src", "x0_dst", "cubic"),
            ("x1_src", "x1_dst", "bbr1"),
            ("x2_src", "x2_dst", "cubic"),
        ],
        3_000_000_000,
    ));
    let g = col_f64(&r.flows, "goodput_bps");
    println!("goodput Mbit/s {:?}", g.iter().map(|x| x / 1e6).collect::<Vec<_>>());
    let ceil = ceiling_bps(RATE as f64);
    for hop in 0..3 {
        let through = g[0] + g[1 + hop];
        assert!(through <= ceil * 1.001, "hop {hop}: {through} over the ceiling {ceil}");
        assert!(through > 0.8 * ceil, "hop {hop}: {through} leaves the link idle");
    }
    assert!(g.iter().all(|&x| x > 1e6), "every flow gets some: {g:?}");
    for name in ["r0-r1", "r1-r2", "r2-r3", "r3-r2", "long_src-r0"] {
        assert!(r.queue_labels.iter().any(|q| q == name), "{name} not in {:?}", r.queue_labels);
    }
}

fn leaf_spine(flows: usize) -> Value {
    let flows: Vec<Value> = (0..flows)
        .map(|i| json!({"cc": "dctcp", "ecn": "ect0", "src": format!("h0_{}", i % 4), "dst": format!("h1_{}", i % 4)}))
        .collect();
    json!({"seed": 7, "duration_ns": 100_000_000u64,
        "topology": {"kind": "leaf_spine", "spines": 4, "leaves": 2, "hosts_per_leaf": 4,
            "host_rate_bps": 10_000_000_000u64}, "flows": flows})
}

#[test]
fn ecmp_spreads_flows_over_equal_paths_by_a_per_flow_hash() {
    let cfg = Config::from_json(&leaf_spine(64).to_string()).unwrap();
    let routes = cfg.derived().routes;
    let mut per_spine = [0; 4];
    for r in &routes {
        let links: Vec<&str> = r.path.split('>').collect();
        assert_eq!(links.len(), 4, "{}", r.path);
        let s: usize = links[1].strip_prefix("leaf0-spine").unwrap().parse().unwrap();
        assert_eq!(links[2], format!("spine{s}-leaf1"));
        per_spine[s] += 1;
    }
    // 64 flows over 4 spines: each spine carries some, none most.
    assert!(per_spine.iter().all(|&n| (6..=26).contains(&n)), "{per_spine:?}");
    // Another seed hashes the flows differently.
    let mut other = leaf_spine(64);
    other["seed"] = 8.into();
    let other = Config::from_json(&other.to_string()).unwrap().derived().routes;
    assert_ne!(routes, other);
    // Deterministic: the same config, the same routes.
    assert_eq!(routes, Config::from_json(&leaf_spine(64).to_string()).unwrap().derived().routes);
}

#[test]
fn delay_routing_prefers_the_faster_path_and_hops_the_shorter() {
    // a → b directly with 10 ms, or a → c → b with 1 ms each.
    let v = |routing: &str| {
        json!({"duration_ns": 100_000_000u64,
            "topology": {"kind": "graph", "routing": routing,
                "nodes": [{"name": "h1", "kind": "host"}, {"name": "h2", "kind": "host"},
                    {"name": "a", "kind": "switch"}, {"name": "b", "kind": "switch"}, {"name": "c", "kind": "switch"}],
                "links": [{"from": "h1", "to": "a", "rate_bps": 1_000_000_000u64},
                    {"from": "b", "to": "h2", "rate_bps": 1_000_000_000u64},
                    {"from": "a", "to": "b", "rate_bps": 1_000_000_000u64, "delay_ns": 10_000_000u64},
                    {"from": "a", "to": "c", "rate_bps": 1_000_000_000u64, "delay_ns": 1_000_000u64},
                    {"from": "c", "to": "b", "rate_bps": 1_000_000_000u64, "delay_ns": 1_000_000u64}]},
            "flows": [{"cc": "cubic", "src": "h1", "dst": "h2"}]})
    };
    let path = |routing| {
        Config::from_json(&v(routing).to_string()).unwrap().derived().routes[0].path.clone()
    };
    assert_eq!(path("hops"), "h1-a>a-b>b-h2");
    assert_eq!(path("delay"), "h1-a>a-c>c-b>b-h2");
}

/// A change to a valid scenario.
type Edit = Box<dyn Fn(&mut Value)>;

#[test]
fn bad_graphs_are_refused_in_one_line_naming_the_field() {
    let base = || dumbbell_as_graph(&json!({}));
    let cases: Vec<(Edit, &str, &str)> = vec![
        (
            Box::new(|v| v["topology"]["links"][1]["to"] = "nowhere".into()),
            "topology.links.1.to",
            "unknown node \"nowhere\"",
        ),
        (Box::new(|v| v["flows"][0]["dst"] = "nowhere".into()), "flows.0.dst", "unknown node"),
        (Box::new(|v| v["flows"][0]["dst"] = "r2".into()), "flows.0.dst", "is a switch"),
        (Box::new(|v| v["flows"][1]["dst"] = "s1".into()), "flows.1.dst", "is the flow's src"),
        (
            Box::new(|v| v["topology"]["links"][1]["name"] = "bottleneck".into()),
            "topology.links.1.name",
            "two links are named \"bottleneck\"",
        ),
        (
            Box::new(|v| {
                v["flows"][0].as_object_mut().unwrap().remove("src");
            }),
            "flows.0.src",
            "names its host",
        ),
        (
            Box::new(|v| v["topology"]["links"][0]["duplex"] = false.into()),
            "flows.0.dst",
            "no route from \"rx\" to \"s0\"",
        ),
        (
            Box::new(|v| {
                v["topology"]["nodes"]
                    .as_array_mut()
                    .unwrap()
                    .push(json!({"name": "lone", "kind": "switch"}))
            }),
            "topology.links",
            "not connected: node \"lone\"",
        ),
        (
            Box::new(|v| v["topology"]["links"][0]["buffer"] = json!({"bdp": 1.0})),
            "topology.links.0.buffer",
            "needs an RTT",
        ),
        (
            Box::new(|v| v["topology"]["nodes"][1]["name"] = "r1".into()),
            "topology.nodes.1.name",
            "defined twice",
        ),
    ];
    for (edit, path, what) in cases {
        let mut v = base();
        edit(&mut v);
        let e = error_of(&v);
        assert!(
            e.starts_with(&format!("{path}: ")) && e.contains(what),
            "want {path}: …{what}…, got {e:?}"
        );
        assert!(!e.contains('\n'), "one line: {e:?}");
    }
    assert_eq!(error_of(&base()), "");
    // Hosts are named on a graph only.
    let mut d = dumbbell(&json!({}));
    d["flows"][0]["src"] = "s0".into();
    assert!(error_of(&d).starts_with("flows.0.src: names a host"), "{}", error_of(&d));
    // A fat-tree's k is even.
    let ft = json!({"duration_ns": 100_000_000u64, "topology": {"kind": "fat_tree", "k": 3, "rate_bps": 1_000_000_000u64},
        "flows": [{"cc": "cubic", "src": "h0_0_0", "dst": "h1_0_0"}]});
    assert!(error_of(&ft).starts_with("topology.k: 3 is odd"), "{}", error_of(&ft));
}

#[test]
fn a_fat_tree_routes_between_pods_over_six_links() {
    let v = json!({"seed": 2, "duration_ns": 20_000_000u64, "sample_interval_ns": 10_000_000u64,
        "topology": {"kind": "fat_tree", "k": 4, "rate_bps": 1_000_000_000u64},
        "flows": [{"cc": "cubic", "src": "h0_0_0", "dst": "h3_1_1"}, {"cc": "cubic", "src": "h0_0_1", "dst": "h0_0_0"}]});
    let cfg = Config::from_json(&v.to_string()).unwrap();
    let d = cfg.derived();
    assert_eq!(d.routes[0].path.split('>').count(), 6, "{}", d.routes[0].path);
    assert_eq!(d.routes[1].path, "h0_0_1-e0_0>e0_0-h0_0_0");
    // 16 hosts, 20 switches, 48 links: 96 queues.
    let (sim, r) = run_json(&v);
    assert_eq!(r.queue_labels.len(), 96);
    assert!(col_i64(&r.flows, "delivered_bytes").iter().all(|&b| b > 0));
    drop(sim);
}

/// The dumbbell written as a graph with DCTCP (ECN-capable) and CUBIC (not) flows, and
/// `queue` (RED in one of its forms) on the bottleneck link.
fn red_graph(queue: Value) -> Value {
    let mut v = dumbbell_as_graph(&json!({}));
    v["flows"][0] = json!({"cc": "dctcp", "ecn": "ect0", "src": "s0", "dst": "rx"});
    v["flows"][1]["cc"] = "dctcp".into();
    v["flows"][1]["ecn"] = "ect0".into();
    let bottleneck = &mut v["topology"]["links"][0];
    for (k, x) in queue.as_object().unwrap() {
        bottleneck[k] = x.clone();
    }
    v
}

/// The flows and queue tables of a run, to compare runs whole.
fn tables_of(v: &Value) -> (String, String, u64) {
    let (_, r) = run_json(v);
    (format!("{:?}", r.flows), format!("{:?}", r.queue), r.drops)
}

/// `qdisc = { kind = "red", … }` is the `red` table: the same native RED, its packet thresholds
/// at 1538 bytes each (a 1448-byte segment's frame), so the same flows and queue tables.
#[test]
fn a_red_qdisc_in_packets_runs_as_the_red_table_in_bytes() {
    let table = red_graph(json!({"red":
        {"min_th_bytes": 20 * 1538, "max_th_bytes": 60 * 1538, "max_p": 0.02, "weight": 1.0}}));
    let qdisc = red_graph(json!({"qdisc": {"kind": "red", "min_th": {"packets": 20},
        "max_th": {"packets": 60}, "max_p": 0.02, "weight": 1.0}}));
    let by_table = tables_of(&table);
    assert_eq!(by_table, tables_of(&qdisc));
    // Bytes in the qdisc form, and defaults (max_p 0.1, weight 0.002) as the table's.
    let table_defaults =
        red_graph(json!({"red": {"min_th_bytes": 30_000, "max_th_bytes": 90_000}}));
    let qdisc_defaults = red_graph(json!({"qdisc": {"kind": "red",
        "min_th": {"bytes": 30_000}, "max_th": {"bytes": 90_000}}}));
    assert_eq!(tables_of(&table_defaults), tables_of(&qdisc_defaults));
    // RED acts here: without it (drop-tail only) or a packet more at min_th, the runs differ.
    assert_ne!(by_table, tables_of(&red_graph(json!({}))));
    let shifted = red_graph(json!({"qdisc": {"kind": "red", "min_th": {"packets": 21},
        "max_th": {"packets": 60}, "max_p": 0.02, "weight": 1.0}}));
    assert_ne!(by_table, tables_of(&shifted));
}

/// The dumbbell's bottleneck takes the same `qdisc` form.
#[test]
fn a_red_qdisc_on_the_dumbbell_runs_as_the_red_table() {
    let with = |q: Value| {
        let mut v = dumbbell(&json!({}));
        v["flows"][0] = json!({"cc": "dctcp", "ecn": "ect0"});
        for (k, x) in q.as_object().unwrap() {
            v["topology"]["bottleneck"][k] = x.clone();
        }
        tables_of(&v)
    };
    let table = with(json!({"red": {"min_th_bytes": 20 * 1538, "max_th_bytes": 60 * 1538}}));
    let qdisc = with(json!({"qdisc": {"kind": "red", "min_th": {"packets": 20},
        "max_th": {"packets": 60}}}));
    assert_eq!(table, qdisc);
    assert_ne!(table, with(json!({})));
}

/// RED in both forms on one link, thresholds in the wrong order, a RED parameter under another
/// discipline: one line naming the field.
#[test]
fn bad_red_qdiscs_are_refused_in_one_line() {
    let red = json!({"min_th": {"packets": 20}, "max_th": {"packets": 60}});
    let mut both = red.clone();
    both["kind"] = "red".into();
    let cases = [
        (
            json!({"qdisc": both, "red": {"min_th_bytes": 30_000, "max_th_bytes": 90_000}}),
            "topology.links.0.red: conflicts with qdisc \"red\"",
        ),
        (
            json!({"qdisc": {"kind": "red", "min_th": {"packets": 60}, "max_th": {"bytes": 92_280}}}),
            "topology.links.0.qdisc.max_th: must be larger than min_th (92280 B <= 92280 B",
        ),
        (json!({"qdisc": {"kind": "codel", "min_th": {"packets": 20}}}), "min_th"),
    ];
    for (queue, want) in cases {
        let e = error_of(&red_graph(queue));
        assert!(e.contains(want), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }
}
