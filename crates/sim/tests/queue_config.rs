//! The queue model and ECN fields of a scenario: a flow's `ecn` in both of its forms, `ect1`
//! only with a scalable ECN response, and a bottleneck's `qdisc` (the discipline's own
//! refusals of fields that would make a second queue model).

use serde_json::{json, Value};
use sim::config::{Config, ConfigError, EcnMode, QdiscSpec, Topology};

/// A dumbbell scenario with `flows` and extra bottleneck fields (`bottleneck`, merged in).
fn scenario(flows: Value, bottleneck: Value) -> Value {
    let mut b = json!({"rate_bps": 100_000_000u64, "rtt_ns": 20_000_000u64});
    b.as_object_mut().unwrap().extend(bottleneck.as_object().unwrap().clone());
    json!({"duration_ns": 1_000_000_000u64, "topology": {"kind": "dumbbell", "bottleneck": b},
           "flows": flows})
}

fn check(v: Value) -> Result<Config, ConfigError> {
    Config::from_value(v)
}

#[test]
fn ecn_takes_a_mode_or_the_old_bool_and_resolves_to_the_mode() {
    for (given, mode, shown) in [
        (json!(true), EcnMode::Ect0, "ect0"),
        (json!(false), EcnMode::Off, "off"),
        (json!("ect0"), EcnMode::Ect0, "ect0"),
        (json!("ect1"), EcnMode::Ect1, "ect1"),
        (json!("off"), EcnMode::Off, "off"),
    ] {
        let cfg = check(scenario(json!([{"cc": "dctcp", "ecn": given}]), json!({}))).unwrap();
        assert_eq!(cfg.flows[0].ecn, mode, "{given}");
        let resolved = serde_json::to_value(cfg.resolved()).unwrap();
        assert_eq!(resolved["flows"][0]["ecn"], shown, "{given}");
    }
    let absent = check(scenario(json!([{"cc": "cubic"}]), json!({}))).unwrap();
    assert_eq!(absent.flows[0].ecn, EcnMode::Off);
    let bad = check(scenario(json!([{"cc": "dctcp", "ecn": "ect2"}]), json!({}))).unwrap_err();
    assert_eq!(bad.path, "flows.0.ecn");
    assert!(bad.message.contains("off, ect0, ect1"), "{}", bad.message);
}

/// ECT(1) asks an L4S queue for shallow, frequent marks: only an algorithm that reduces per mark
/// may send it.
#[test]
fn ect1_is_refused_without_a_scalable_ecn_response() {
    for cc in ["dctcp", "bbr2", "bbr2_new", "bbr3", "bbr3_linux"] {
        check(scenario(json!([{"cc": cc, "ecn": "ect1"}]), json!({}))).unwrap();
    }
    for cc in ["cubic", "reno", "bbr1", "bql"] {
        let e = check(scenario(json!([{"cc": "dctcp"}, {"cc": cc, "ecn": "ect1"}]), json!({})))
            .unwrap_err();
        assert_eq!(e.path, "flows.1.ecn", "{cc}");
        let (scalable, rest) = e.message.split_once("; ").unwrap();
        assert!(scalable.contains("bbr2, ") && scalable.contains("dctcp"), "{}", e.message);
        assert!(!scalable.contains(cc) && rest.starts_with(cc), "{}", e.message);
        assert!(!e.message.contains('\n'));
        // The classic codepoint is fine: the algorithm reacts to a mark as to a loss.
        check(scenario(json!([{"cc": cc, "ecn": "ect0"}]), json!({}))).unwrap();
    }
}

/// The kinds the registry offers, from the schema (so a discipline added later is covered).
fn qdisc_kinds() -> Vec<String> {
    let schema = sim::config::schema();
    let alts = schema["$defs"]["QdiscSpec"]["oneOf"].as_array().unwrap().clone();
    alts.iter().map(|a| a["properties"]["kind"]["const"].as_str().unwrap().to_string()).collect()
}

#[test]
fn a_discipline_other_than_droptail_takes_no_red_nor_step_marking() {
    let red = json!({"min_th_bytes": 30000, "max_th_bytes": 90000});
    // The FIFO keeps the native chain: RED and the threshold go with it.
    for extra in [json!({"red": red}), json!({"ecn_threshold_bytes": 30000})] {
        let mut b = extra.clone();
        b["qdisc"] = json!({"kind": "droptail"});
        check(scenario(json!([{"cc": "cubic"}]), b)).unwrap();
    }
    let kinds = qdisc_kinds();
    assert!(kinds.contains(&"droptail".to_string()), "{kinds:?}");
    for kind in kinds.iter().filter(|k| *k != "droptail") {
        for (field, value) in [
            ("red", red.clone()),
            ("ecn_threshold_bytes", json!(30000)),
            ("ecn_threshold_packets", json!(20)),
        ] {
            let mut q = json!({"kind": kind});
            if kind == "red" {
                q["min_th"] = json!({"packets": 20});
                q["max_th"] = json!({"packets": 60});
            }
            let b = json!({"qdisc": q, field: value});
            if kind == "red" && field != "red" {
                // The native RED: step marking stands beside it, as beside the `red` table.
                check(scenario(json!([{"cc": "cubic"}]), b)).unwrap();
                continue;
            }
            let e = check(scenario(json!([{"cc": "cubic"}]), b)).unwrap_err();
            assert_eq!(e.path, format!("topology.bottleneck.{field}"), "{kind}");
            assert!(e.message.contains(&format!("qdisc \"{kind}\"")), "{}", e.message);
        }
    }
}

#[test]
fn an_unknown_qdisc_kind_names_the_kinds() {
    let b = json!({"qdisc": {"kind": "drop_tail"}});
    let e = check(scenario(json!([{"cc": "cubic"}]), b)).unwrap_err();
    assert_eq!(e.path, "topology.bottleneck.qdisc.kind", "{e}");
    assert!(e.message.contains("droptail"), "{e}");
}

/// None named resolves to the drop-tail FIFO, which every backend then reads.
#[test]
fn qdisc_resolves_to_droptail() {
    let cfg = check(scenario(json!([{"cc": "cubic"}]), json!({}))).unwrap();
    let Topology::Dumbbell(d) = &cfg.topology else { unreachable!() };
    assert_eq!(d.bottleneck.qdisc, None);
    let resolved = serde_json::to_value(cfg.resolved()).unwrap();
    assert_eq!(resolved["topology"]["bottleneck"]["qdisc"], json!({"kind": "droptail"}));
    let Topology::Dumbbell(d) = &cfg.resolved().topology else { unreachable!() };
    assert_eq!(d.bottleneck.qdisc, Some(QdiscSpec::Droptail {}));
}
