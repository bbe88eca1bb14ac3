//! Property-based fuzzing of the core's config and event loop (proptest), sized for CI.
//!
//! A few valid configs are mutated at random places with random values (in range, at the
//! bounds, absurd, of the wrong type). Whatever comes out, `Config::from_value` returns an error
//! naming a field or a config; it never panics. A config it accepts builds a simulation that runs
//! a bounded number of events without a panic or a livelock and conserves packets.
//! `PROPTEST_CASES=5000 cargo test --release -p bbrlab-sim --test fuzz_config` is the long run.

use proptest::prelude::*;
use serde_json::{json, Value};
use sim::config::Config;
use sim::Simulation;

fn bases() -> Vec<Value> {
    vec![
        json!({"duration_ns": 200_000_000u64, "sample_interval_ns": 50_000_000u64,
               "topology": {"kind": "dumbbell", "bottleneck": {"rate_bps": 20_000_000u64, "rtt_ns": 20_000_000u64,
                            "buffer": {"bdp": 1.0}, "loss": 0.01}},
               "flows": [{"cc": "cubic"}, {"cc": "bbr1", "start_ns": 50_000_000u64, "mss_bytes": 1448, "tso": true}]}),
        json!({"duration_ns": 200_000_000u64, "sample_interval_ns": 50_000_000u64,
               "topology": {"kind": "star", "workers": 4, "rate_bps": 1_000_000_000u64, "lossless": true,
                            "pfc": {"xoff_bytes": 64_000, "xon_bytes": 32_000, "quanta": 65535}},
               "flows": [{"cc": "dctcp", "ecn": true, "sender": 3}],
               "apps": [{"kind": "query", "workers": 3, "size_bytes": 300_000, "repetitions": 2,
                         "flow": {"cc": "bbr3_linux"}}]}),
        json!({"duration_ns": 200_000_000u64, "sample_interval_ns": 50_000_000u64,
               "topology": {"kind": "dumbbell", "bottleneck": {"rate_bps": 50_000_000u64, "rtt_ns": 5_000_000u64,
                            "buffer": {"packets": 100}, "red": {"min_th_bytes": 20_000, "max_th_bytes": 60_000}}},
               "flows": [{"cc": "bbr2_new", "count": 3, "ecn": true, "rpc": {"size_bytes": 10_000, "gap_ns": 1_000_000}},
                         {"cc": "bql", "bytes": 200_000, "tso": true}]}),
    ]
}

/// JSON pointers of every leaf and table of `v`.
fn pointers(v: &Value, at: String, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            out.push(at.clone());
            for (k, x) in m {
                pointers(x, format!("{at}/{k}"), out);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                pointers(x, format!("{at}/{i}"), out);
            }
        }
        _ => out.push(at),
    }
}

fn value() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!(0)),
        Just(json!(1)),
        Just(json!(-1)),
        Just(json!(64)),
        Just(json!(1500)),
        Just(json!(32_769)),
        Just(json!(65_000)),
        Just(json!(65_536)),
        Just(json!(u32::MAX)),
        Just(json!(u64::MAX)),
        Just(json!(i64::MIN)),
        Just(json!(10_000_000_000_000u64)),
        Just(json!(0.0)),
        Just(json!(0.999_999_999_999_999_9)),
        Just(json!(1.0)),
        Just(json!(1e300)),
        Just(json!(-0.5)),
        Just(json!(true)),
        Just(json!(null)),
        Just(json!("auto")),
        Just(json!("cut-through")),
        Just(json!("ictcp")),
        Just(json!("bbr")),
        Just(json!("")),
        Just(json!([])),
        Just(json!({})),
        Just(json!({"bdp": 0.001})),
        Just(json!({"packets": 1})),
        Just(json!({"bytes": 1})),
        (0u64..20_000_000_000u64).prop_map(|n| json!(n)),
        (0u32..70_000u32).prop_map(|n| json!(n)),
        (-1.0f64..2.0f64).prop_map(|x| json!(x)),
    ]
}

/// A mutation: at which place (index into the places), and what goes there.
#[derive(Clone, Debug)]
enum Change {
    /// A value of the same JSON type as the one there (numbers: from edge values or a range).
    SameType(usize),
    /// Anything at all.
    Any(Value),
    /// Remove the key.
    Delete,
}

const NUMBERS: [f64; 14] =
    [0.0, 1.0, 2.0, 64.0, 255.0, 256.0, 1448.0, 32_769.0, 65_000.0, 1e6, 1e9, 1e12, 0.5, 0.999_999];

/// (base index, [(place index, change)]).
fn mutation() -> impl Strategy<Value = (usize, Vec<(usize, Change)>)> {
    let change = prop_oneof![
        6 => any::<usize>().prop_map(Change::SameType),
        3 => value().prop_map(Change::Any),
        1 => Just(Change::Delete),
    ];
    (0usize..3, prop::collection::vec((any::<usize>(), change), 1..4))
}

fn same_type(old: &Value, pick: usize) -> Value {
    match old {
        Value::Number(n) if n.is_f64() => json!(NUMBERS[pick % NUMBERS.len()].min(1.0) * 0.999),
        Value::Number(_) => json!(NUMBERS[pick % NUMBERS.len()].round() as u64),
        Value::Bool(_) => json!(pick.is_multiple_of(2)),
        Value::String(_) => {
            json!(["cubic", "bbr", "bbr3", "dctcp", "auto", "on", "off", "ictcp"][pick % 8])
        }
        other => other.clone(),
    }
}

fn apply(base: &Value, muts: &[(usize, Change)]) -> Value {
    let mut v = base.clone();
    for (i, change) in muts {
        let mut ptrs = Vec::new();
        pointers(&v, String::new(), &mut ptrs);
        let p = &ptrs[i % ptrs.len()];
        if p.is_empty() {
            continue;
        }
        let new = match change {
            Change::SameType(pick) => Some(same_type(v.pointer(p).unwrap_or(&Value::Null), *pick)),
            Change::Any(x) => Some(x.clone()),
            Change::Delete => None,
        };
        let new = &new;
        let (parent, key) = p.rsplit_once('/').unwrap();
        match (v.pointer_mut(parent), new) {
            (Some(Value::Object(m)), Some(x)) => {
                m.insert(key.to_string(), x.clone());
            }
            (Some(Value::Object(m)), None) => {
                m.remove(key);
            }
            (Some(Value::Array(a)), Some(x)) => {
                if let Ok(idx) = key.parse::<usize>() {
                    a[idx] = x.clone();
                }
            }
            _ => {}
        }
    }
    v
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn any_config_is_accepted_or_refused_with_a_path_and_an_accepted_one_runs((base, muts) in mutation()) {
        let cfg = apply(&bases()[base], &muts);
        match Config::from_value(cfg.clone()) {
            Err(e) => prop_assert!(!e.message.is_empty(), "empty message for {cfg}"),
            Ok(c) => {
                // Resolving is idempotent and stays valid.
                let r = c.resolved();
                prop_assert!(r.validate().is_ok(), "resolved config invalid: {cfg}");
                let mut sim = Simulation::new(c).unwrap_or_else(|e| panic!("accepted then refused: {e}: {cfg}"));
                let res = sim.advance(u64::MAX, 300_000, None);
                prop_assert!(res.is_ok(), "{res:?}: {cfg}");
                prop_assert!(sim.check_conservation().is_ok(), "conservation: {:?}: {cfg}", sim.check_conservation());
                let r = sim.results();
                prop_assert_eq!(r.flows.columns.len(), sim::metrics::FLOWS.columns.len());
            }
        }
    }
}

#[test]
fn the_mutations_reach_both_accepted_and_refused_configs() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let (mut ok, mut bad) = (0, 0);
    for _ in 0..400 {
        let (base, muts) = mutation().new_tree(&mut runner).unwrap().current();
        match Config::from_value(apply(&bases()[base], &muts)) {
            Ok(_) => ok += 1,
            Err(_) => bad += 1,
        }
    }
    // A fuzzer that only produces rejections never exercises the event loop.
    assert!(ok >= 40 && bad >= 40, "accepted {ok}, refused {bad}");
}
