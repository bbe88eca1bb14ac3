//! The senders' egress qdisc (`[topology.sender_qdisc]`): Linux fq paces every flow at the
//! departure times TCP stamps, as BBR is deployed, and `maxrate` caps each flow.

mod common;

use common::{col_f64, col_i64, run};
use serde_json::{json, Value};
use sim::config::Config;

const MS: u64 = 1_000_000;

/// One flow per algorithm in `ccs` over 100 Mbit/s × 40 ms (2 BDP of buffer) for `dur_s`,
/// with the senders' egress qdisc `sender_qdisc` (None: the default).
fn scenario(ccs: &[&str], sender_qdisc: Option<Value>, dur_s: u64) -> Value {
    let mut topo = json!({"kind": "dumbbell", "bottleneck": {
        "rate_bps": 100_000_000u64, "rtt_ns": 40 * MS, "buffer": {"bdp": 2.0}}});
    if let Some(q) = sender_qdisc {
        topo["sender_qdisc"] = q;
    }
    let flows: Vec<Value> = ccs.iter().map(|cc| json!({"cc": cc})).collect();
    json!({"seed": 3, "duration_ns": dur_s * 1000 * MS, "sample_interval_ns": 100 * MS,
           "topology": topo, "flows": flows})
}

fn cfg(v: Value) -> Config {
    Config::from_value(v.clone()).unwrap_or_else(|e| panic!("{e}\n{v}"))
}

/// (goodput in bit/s, mean RTT in ms) of flow 0.
fn goodput_rtt(v: Value) -> (f64, f64) {
    let r = run(cfg(v));
    (col_f64(&r.flows, "goodput_bps")[0], col_f64(&r.flows, "rtt_mean_ms")[0])
}

/// Pacing is pacing: BBRv1 paced by fq at the NIC gets what it gets pacing itself.
#[test]
fn bbr1_paced_by_fq_matches_internal_pacing() {
    let (g_int, rtt_int) = goodput_rtt(scenario(&["bbr1"], None, 10));
    let (g_fq, rtt_fq) = goodput_rtt(scenario(&["bbr1"], Some(json!({"kind": "fq"})), 10));
    eprintln!("bbr1 internal {g_int:.0} b/s {rtt_int:.2} ms; fq {g_fq:.0} b/s {rtt_fq:.2} ms");
    assert!(g_int > 90e6, "internal pacing fills the link: {g_int}");
    assert!((g_fq / g_int - 1.0).abs() < 0.03, "goodput fq {g_fq} vs internal {g_int}");
    assert!((rtt_fq / rtt_int - 1.0).abs() < 0.05, "RTT fq {rtt_fq} vs internal {rtt_int}");
}

/// fq's `maxrate` caps every flow, whatever its algorithm's pacing rate.
#[test]
fn maxrate_caps_each_flow() {
    let q = json!({"kind": "fq", "maxrate_bps": 20_000_000u64});
    for cc in ["bbr1", "cubic"] {
        let (g, _) = goodput_rtt(scenario(&[cc], Some(q.clone()), 5));
        eprintln!("{cc} under 20 Mbit/s maxrate: {g:.0} b/s");
        // 20 Mbit/s of wire bytes: payload goodput a little under it (1448 of 1538 bytes).
        assert!(g < 20e6 * 1448.0 / 1538.0 * 1.01 && g > 15e6, "{cc}: {g}");
    }
}

/// Without fq a CUBIC sender leaves its NIC in line-rate bursts that queue at the bottleneck
/// while the link is still far from full; fq paces it at its pacing rate (2× cwnd/srtt in
/// slow start), so the bottleneck queue in the first round trips stays shorter.
#[test]
fn cubic_is_paced_by_fq() {
    let early_max_queue = |q: Option<Value>| {
        let mut v = scenario(&["cubic"], q, 1);
        v["duration_ns"] = json!(200 * MS);
        v["sample_interval_ns"] = json!(10 * MS);
        v["topology"]["bottleneck"]["buffer"] = json!({"bdp": 20.0});
        let r = run(cfg(v));
        *col_i64(&r.queue, "max_occupancy_bytes").iter().max().unwrap()
    };
    let (fifo, fq) = (early_max_queue(None), early_max_queue(Some(json!({"kind": "fq"}))));
    eprintln!("cubic slow start, bottleneck max queue: pfifo_fast {fifo} B, fq {fq} B");
    assert!(fq * 2 < fifo, "fq {fq} vs pfifo_fast {fifo}");
}

#[test]
fn a_bad_sender_qdisc_is_one_line() {
    for (q, path, says) in [
        (json!({"kind": "codel"}), "topology.sender_qdisc.kind", "not a sender's qdisc"),
        (json!({"kind": "fq", "quantum_bytes": 10}), "topology.sender_qdisc", "quantum_bytes"),
        (json!({"kind": "fq", "flows": 10}), "topology", "unknown field `flows`"),
        (json!({"kind": "fqq"}), "topology.sender_qdisc", "fqq"),
    ] {
        let e = Config::from_value(scenario(&["bbr1"], Some(q.clone()), 1)).unwrap_err();
        eprintln!("{q}: {e}");
        assert!(e.path.starts_with(path), "{q}: {}", e.path);
        assert!(e.to_string().contains(says) && !e.to_string().contains('\n'), "{q}: {e}");
    }
}

/// Losses (retransmissions, loss probes stamped behind the flow's queue), two flows sharing
/// one sender host's fq, and the host model's per-skb TSQ accounting: every packet is accounted
/// for (`run` checks conservation) and both flows move data.
#[test]
fn fq_conserves_packets_with_losses_a_shared_host_and_the_host_model() {
    let mut v = scenario(&["bbr1", "cubic"], Some(json!({"kind": "fq"})), 3);
    v["topology"]["bottleneck"]["loss"] = json!(0.01);
    v["flows"][0]["sender"] = json!(0);
    v["flows"][1]["sender"] = json!(0);
    v["hosts"] = json!({});
    let r = run(cfg(v));
    let g = col_f64(&r.flows, "goodput_bps");
    eprintln!("goodputs with 1 % loss through one host's fq: {g:?}");
    assert!(g.iter().all(|&x| x > 1e6), "{g:?}");
    assert!(col_i64(&r.flows, "retransmits").iter().all(|&n| n > 0));
}
