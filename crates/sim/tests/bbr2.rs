//! BBRv2 (v2alpha) and bbr2_new end to end on the simulator, checked against physics and against
//! the published claims they are meant to reproduce (Google's BBRv2 slides, seed 001).

use sim::Simulation;

const MSS: f64 = 1448.0;
/// Wire bytes per full data segment: payload + TCP/IP with timestamps + Ethernet framing.
const WIRE: f64 = 1448.0 + 52.0 + 38.0;

fn run(json: &str) -> sim::Results {
    let mut s = Simulation::from_json(json).expect("valid config");
    s.run_until(u64::MAX);
    s.check_conservation().expect("packets conserved");
    s.results()
}

fn col(t: &sim::metrics::Table, n: &str) -> Vec<f64> {
    let c = t.get(n).unwrap_or_else(|| panic!("no column {n}"));
    match c.as_f64() {
        Some(v) => v.to_vec(),
        None => c.as_i64().unwrap().iter().map(|&x| x as f64).collect(),
    }
}

fn sum(v: &[f64]) -> f64 {
    v.iter().sum()
}

fn mean(v: &[f64]) -> f64 {
    sum(v) / v.len() as f64
}

/// A dumbbell with `flows` identical flows; `buffer_bdp` of the bottleneck BDP as drop-tail buffer.
fn dumbbell(rate_bps: u64, rtt_ns: u64, buffer_bdp: f64, dur_s: u64, flows: &[String], extra: &str) -> String {
    let buf = (rate_bps as f64 * rtt_ns as f64 / 1e9 / 8.0 * buffer_bdp) as u64;
    format!(
        r#"{{"seed":7,"duration_ns":{},"sample_interval_ns":100000000,
        "topology":{{"kind":"dumbbell","bottleneck":{{"rate_bps":{rate_bps},"rtt_ns":{rtt_ns},"buffer":{{"bytes":{buf}}}{extra}}}{access}}},
        "flows":[{}]}}"#,
        dur_s * 1_000_000_000,
        flows.join(","),
        access = if rate_bps > 1_000_000_000 { r#","access_rate_bps":50000000000"# } else { "" },
    )
}

#[test]
fn one_bbr2_flow_fills_a_clean_link_to_95_percent_of_the_goodput_ceiling() {
    for cc in ["bbr2", "bbr2_new"] {
        let f = vec![format!(r#"{{"cc":"{cc}"}}"#)];
        let r = run(&dumbbell(100_000_000, 40_000_000, 1.0, 60, &f, ""));
        let g = col(&r.flows, "goodput_bps")[0];
        let ceil = 100e6 * MSS / WIRE;
        println!("{cc}: goodput {:.2} Mbit/s = {:.1} % of ceiling {:.2}", g / 1e6, 100.0 * g / ceil, ceil / 1e6);
        assert!(g >= 0.95 * ceil, "{cc}: goodput {:.2} Mbit/s < 95 % of {:.2}", g / 1e6, ceil / 1e6);
        assert!(g <= ceil * 1.0001, "{cc}: above the physical ceiling");
    }
}

/// Seed 001 / IETF 104–105: "Much lower loss rates for cases where bottleneck queue < 1.5·BDP".
#[test]
fn ten_flows_in_a_tiny_buffer_bbr2_retransmits_far_less_than_bbr1() {
    let mut rates = Vec::new();
    for cc in ["bbr2", "bbr1"] {
        let f: Vec<String> = (0..10).map(|_| format!(r#"{{"cc":"{cc}"}}"#)).collect();
        let r = run(&dumbbell(1_000_000_000, 40_000_000, 0.02, 30, &f, ""));
        let sent = sum(&col(&r.flows, "data_packets_sent"));
        let retr = sum(&col(&r.flows, "retransmits"));
        let good = sum(&col(&r.flows, "goodput_bps"));
        let rate = retr / sent;
        println!(
            "{cc}: 10 flows, 0.02 BDP buffer: retrans rate {:.3} %, aggregate goodput {:.1} Mbit/s, mean RTT {:.2} ms",
            rate * 100.0,
            good / 1e6,
            mean(&col(&r.flows, "rtt_mean_ms"))
        );
        rates.push(rate);
    }
    let (v2, v1) = (rates[0], rates[1]);
    assert!(v2 <= 0.05, "bbr2 retransmission rate {:.2} % > 5 %", v2 * 100.0);
    assert!(v1 >= 2.0 * v2, "bbr1 {:.2} % is not ≥ 2× bbr2 {:.2} %", v1 * 100.0, v2 * 100.0);
}

/// Seed 001's many-flows experiment, scaled down: DCTCP-style marking (CE iff queue > 80 KB),
/// N = 100 ECN flows from two sender hosts; bbr2_new must not queue or retransmit more than bbr2.
#[test]
fn many_ecn_flows_bbr2_new_keeps_rtt_and_retransmissions_no_higher_than_bbr2() {
    let mut out = Vec::new();
    for cc in ["bbr2", "bbr2_new"] {
        let f: Vec<String> = (0..100).map(|i| format!(r#"{{"cc":"{cc}","ecn":true,"sender":{}}}"#, i % 2)).collect();
        let r = run(&dumbbell(10_000_000_000, 100_000, 10.0, 5, &f, r#","ecn_threshold_bytes":80000"#));
        let sent = sum(&col(&r.flows, "data_packets_sent"));
        let retr = sum(&col(&r.flows, "retransmits"));
        let ce = sum(&col(&r.flows, "ce_packets"));
        let thr = sum(&col(&r.flows, "goodput_bps"));
        let rtt = mean(&col(&r.flows, "rtt_mean_ms"));
        let p95 = mean(&col(&r.flows, "rtt_p95_ms"));
        println!(
            "{cc}: N=100 throughput {:.2} Gbit/s, retrans {:.3} %, RTT mean {:.3} ms, p95 {:.3} ms (flow means), CE {:.0} pkts = {:.1} % of sent",
            thr / 1e9,
            retr / sent * 100.0,
            rtt,
            p95,
            ce,
            ce / sent * 100.0
        );
        out.push((thr, retr / sent, rtt, p95));
    }
    let (old, new) = (out[0], out[1]);
    assert!(new.2 <= old.2, "bbr2_new mean RTT {:.3} ms > bbr2 {:.3} ms", new.2, old.2);
    assert!(new.1 <= old.1, "bbr2_new retrans {:.3} % > bbr2 {:.3} %", new.1 * 100.0, old.1 * 100.0);
    // Both still use the link (the slides: "All variants have similar throughputs").
    let ceil = 10e9 * MSS / WIRE;
    assert!(new.0 >= 0.8 * ceil && old.0 >= 0.8 * ceil, "throughput {:.2} / {:.2} Gbit/s", old.0 / 1e9, new.0 / 1e9);
}
