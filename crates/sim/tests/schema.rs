//! The config schema and the result tables as definitions: every field documented and bounded,
//! configs round-trip, bounds are enforced where they are written, and a run's tables are exactly
//! what their specs say.

use serde_json::{json, Value};
use sim::config::{self, Config};
use sim::metrics::{Dtype, TABLES};
use sim::Simulation;

fn defs(schema: &Value) -> &serde_json::Map<String, Value> {
    schema["$defs"].as_object().unwrap()
}

/// Every object schema's properties, with a path for messages. The single field of an
/// externally tagged variant (`{"bytes": n}`) takes the variant's description.
fn properties(schema: &Value) -> Vec<(String, Value)> {
    fn walk(s: &Value, at: &str, out: &mut Vec<(String, Value)>) {
        if let Some(props) = s.get("properties").and_then(Value::as_object) {
            for (k, p) in props {
                let mut p = p.clone();
                if props.len() == 1 && p.get("description").is_none() {
                    p["description"] = s.get("description").cloned().unwrap_or(Value::Null);
                }
                out.push((format!("{at}.{k}"), p));
            }
        }
        for alt in s.get("oneOf").and_then(Value::as_array).into_iter().flatten() {
            walk(alt, at, out);
        }
    }
    let mut out = Vec::new();
    walk(schema, "Config", &mut out);
    for (name, d) in defs(schema) {
        walk(d, name, &mut out);
    }
    out
}

#[test]
fn every_field_is_described_and_every_integer_bounded() {
    let schema = config::schema();
    for (path, p) in properties(&schema) {
        if path.ends_with(".kind") {
            continue; // a union's tag
        }
        assert!(
            p.get("description").and_then(Value::as_str).is_some_and(|d| !d.is_empty()),
            "{path} has no description"
        );
        let types = p.get("type").map(|t| t.to_string()).unwrap_or_default();
        if types.contains("integer") {
            assert!(
                p.get("maximum").is_some(),
                "{path} has no maximum: a physical bound belongs in the schema"
            );
        }
    }
}

/// The backends a field must be marked for (`config::backends`), in `x-backends`.
const BACKENDS: [&str; 2] = ["sim", "emu"];

/// A mark's name, if it is one (`"honoured"`, `{"refused": why}`, ...; a why must be given).
fn mark_name(m: &Value) -> Option<&str> {
    match m {
        Value::String(s) if ["honoured", "model-switch", "within"].contains(&s.as_str()) => Some(s),
        Value::Object(o) if o.len() == 1 => {
            let (k, why) = o.iter().next()?;
            let known = ["refused", "ignored"].contains(&k.as_str());
            (known && why.as_str().is_some_and(|w| !w.is_empty())).then_some(k.as_str())
        }
        _ => None,
    }
}

/// Walk every field reachable from `s`; `within[b]`: inside a table or variant that backend b
/// refuses or ignores as a whole. Returns the fields seen (a definition reached again in the
/// same state is not walked again).
fn check_marks(
    s: &Value,
    defs: &serde_json::Map<String, Value>,
    at: &str,
    within: [bool; 2],
    seen: &mut std::collections::HashSet<(String, [bool; 2])>,
) -> usize {
    let mut fields = 0;
    if let Some(name) = s.get("$ref").and_then(Value::as_str) {
        let name = name.trim_start_matches("#/$defs/");
        if seen.insert((name.to_string(), within)) {
            fields += check_marks(&defs[name], defs, &format!("{at}<{name}>"), within, seen);
        }
    }
    let covers = |s: &Value, within: [bool; 2]| {
        let mut out = within;
        for (b, backend) in BACKENDS.iter().enumerate() {
            let m = s.get("x-backends").and_then(|x| x.get(*backend));
            out[b] |= m.and_then(mark_name).is_some_and(|n| n == "refused" || n == "ignored");
        }
        out
    };
    for key in ["oneOf", "anyOf"] {
        for alt in s.get(key).and_then(Value::as_array).into_iter().flatten() {
            fields += check_marks(alt, defs, at, covers(alt, within), seen);
        }
    }
    if let Some(items) = s.get("items") {
        fields += check_marks(items, defs, at, within, seen);
    }
    for (k, p) in s.get("properties").and_then(Value::as_object).into_iter().flatten() {
        if k == "kind" && p.get("const").is_some() {
            continue; // a union's tag
        }
        let path = format!("{at}.{k}");
        for (b, backend) in BACKENDS.iter().enumerate() {
            let m = p.get("x-backends").and_then(|x| x.get(*backend));
            let name = m.and_then(mark_name);
            assert!(name.is_some(), "{path} has no valid x-backends mark for {backend}: {m:?}");
            assert!(
                name != Some("within") || within[b],
                "{path} is marked within for {backend}, outside anything {backend} refuses or ignores"
            );
        }
        fields += 1 + check_marks(p, defs, &path, covers(p, within), seen);
    }
    fields
}

/// Every field says how each backend treats it (`x-backends`, written beside the field): a new
/// field cannot be silently ignored by the emu backend.
#[test]
fn every_field_is_marked_for_every_backend() {
    let schema = config::schema();
    let fields = check_marks(&schema, defs(&schema), "Config", [false; 2], &mut Default::default());
    assert!(fields > 100, "only {fields} fields walked");
    // The walk can fail: a field without its mark is found.
    let mut unmarked = schema.clone();
    unmarked["$defs"]["Flow"]["properties"]["mss_bytes"]
        .as_object_mut()
        .unwrap()
        .remove("x-backends");
    let found = std::panic::catch_unwind(|| {
        check_marks(&unmarked, defs(&unmarked), "Config", [false; 2], &mut Default::default())
    });
    assert!(found.is_err(), "an unmarked field went unnoticed");
}

fn base() -> Value {
    json!({
        "duration_ns": 2_000_000_000u64,
        "topology": {"kind": "dumbbell", "bottleneck": {"rate_bps": 100_000_000u64, "rtt_ns": 20_000_000u64}},
        "flows": [{"cc": "bbr", "count": 2}, {"cc": "cubic", "start_ns": 500_000_000u64, "pacing": "on"}]
    })
}

#[test]
fn a_config_round_trips_and_resolving_is_idempotent() {
    let cfg = Config::from_value(base()).unwrap();
    let text = serde_json::to_string(&cfg).unwrap();
    let again = Config::from_json(&text).unwrap();
    assert_eq!(serde_json::to_value(&again).unwrap(), serde_json::to_value(&cfg).unwrap());
    let r = cfg.resolved();
    assert_eq!(serde_json::to_value(r.resolved()).unwrap(), serde_json::to_value(&r).unwrap());
    r.validate().unwrap();
    assert_eq!(r.flows[0].cc, "bbr1", "aliases resolve to the canonical name");
    let config::Topology::Dumbbell(d) = &r.topology else { panic!() };
    assert_eq!(d.access_rate_bps, Some(1_000_000_000));
    assert_eq!(cfg.flow_count(), 3);
    assert_eq!(cfg.expanded_flows().map(|(i, _)| i).collect::<Vec<_>>(), vec![0, 0, 1]);
}

/// Set the value at a JSON pointer, creating the last key.
fn set(v: &mut Value, pointer: &str, value: Value) {
    let (parent, key) = pointer.rsplit_once('/').unwrap();
    v.pointer_mut(parent).unwrap_or_else(|| panic!("{parent}"))[key] = value;
}

#[test]
fn bounds_written_on_the_types_are_enforced_with_the_path() {
    let cases: &[(&str, Value, &str)] = &[
        ("/flows/0/mss_bytes", json!(10), "flows.0.mss_bytes"),
        ("/topology/bottleneck/loss", json!(1.0), "topology.bottleneck.loss"),
        (
            "/topology/bottleneck/rate_bps",
            json!(10_000_000_000_000_000u64),
            "topology.bottleneck.rate_bps",
        ),
        ("/topology/bottleneck/buffer", json!({"bdp": 0.0}), "topology.bottleneck.buffer.bdp"),
        ("/flows/1/pacing", json!("sometimes"), "flows.1.pacing"),
        ("/flows/1/cc", json!("vegas"), "flows.1.cc"),
        ("/topology/kind", json!("ring"), "topology.kind"),
        ("/duration_ns", json!(0), "duration_ns"),
        ("/sample_interval_ns", json!(1), "sample_interval_ns"),
    ];
    for (pointer, value, path) in cases {
        let mut v = base();
        set(&mut v, pointer, value.clone());
        let e = Config::from_value(v).expect_err(pointer);
        assert_eq!(e.path, *path, "{pointer}: {e}");
    }
    // Just inside the bounds is accepted.
    let mut v = base();
    set(&mut v, "/topology/bottleneck/loss", json!(0.999_999_999));
    set(&mut v, "/flows/0/mss_bytes", json!(64));
    Config::from_value(v).unwrap();
}

#[test]
fn type_errors_and_unknown_fields_name_the_field() {
    let mut v = base();
    set(&mut v, "/flows/1/ecn", json!("yes"));
    assert_eq!(Config::from_value(v).unwrap_err().path, "flows.1.ecn");
    let mut v = base();
    v["flows"][0]["mss"] = json!(1500);
    let e = Config::from_value(v).unwrap_err();
    assert!(e.path.starts_with("flows.0") && e.message.contains("mss"), "{e}");
}

#[test]
fn relations_between_fields_are_checked_in_scenario_terms() {
    let mut v = base();
    v["flows"][1]["start_ns"] = json!(2_000_000_000u64);
    let e = Config::from_value(v).unwrap_err();
    assert_eq!(e.path, "flows.1.start_ns");
    assert!(e.message.contains("2s") && e.message.contains("duration"), "{e}");
    let mut v = base();
    v["topology"]["bottleneck"]["rtt_ns"] = json!(0);
    let e = Config::from_value(v).unwrap_err();
    assert_eq!(e.path, "topology.bottleneck.buffer");
    assert!(e.message.contains("rtt is 0"), "{e}");
}

fn dtype_of(c: &sim::metrics::Column) -> Dtype {
    c.dtype()
}

#[test]
fn every_table_of_a_run_is_exactly_its_spec() {
    let dumbbell = json!({
        "duration_ns": 300_000_000u64, "sample_interval_ns": 50_000_000u64,
        "topology": {"kind": "dumbbell", "bottleneck": {"rate_bps": 50_000_000u64, "rtt_ns": 10_000_000u64}},
        "flows": [{"cc": "cubic", "gap_histogram": true}, {"cc": "bbr1", "rpc": {"size_bytes": 10_000u64}, "trace": true, "pcap": true}],
        "traffic": [{"kind": "ping", "interval_ns": 10_000_000u64}, {"kind": "udp_cbr", "rate_bps": 1_000_000u64}]
    });
    let star = json!({
        "duration_ns": 300_000_000u64, "sample_interval_ns": 50_000_000u64,
        "topology": {"kind": "star", "workers": 4, "rate_bps": 1_000_000_000u64, "lossless": true},
        "flows": [{"cc": "cubic", "sender": 3}],
        "apps": [{"kind": "query", "workers": 3, "size_bytes": 300_000u64, "repetitions": 2, "flow": {"cc": "dctcp"}}]
    });
    for cfg in [dumbbell, star] {
        let mut sim = Simulation::from_json(&cfg.to_string()).unwrap();
        sim.run_until(u64::MAX);
        let r = sim.results();
        let tables = [
            &r.flows,
            &r.timeseries,
            &r.queue,
            &r.gaps,
            &r.app_events,
            &r.hosts,
            &r.state,
            &r.traffic,
            &r.pings,
            &r.fct,
            &r.packets,
        ];
        assert_eq!(tables.len(), TABLES.len());
        for (spec, table) in TABLES.iter().zip(tables) {
            let got: Vec<(&str, Dtype)> =
                table.columns.iter().map(|(n, c)| (*n, dtype_of(c))).collect();
            let want: Vec<(&str, Dtype)> = spec.columns.iter().map(|c| (c.name, c.dtype)).collect();
            assert_eq!(got, want, "table {}", spec.name);
            let rows: Vec<usize> = table.columns.iter().map(|(_, c)| c.len()).collect();
            assert!(
                rows.windows(2).all(|w| w[0] == w[1]),
                "{}: ragged columns {rows:?}",
                spec.name
            );
            assert!(spec.columns.iter().all(|c| !c.description.is_empty()), "{}", spec.name);
        }
        assert!(!r.timeseries.columns[0].1.is_empty() && !r.queue.columns[0].1.is_empty());
    }
}
