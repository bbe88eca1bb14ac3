//! Simulator speed benchmark: runs the scenarios ns-3 was measured on (issue 2) and reports
//! delivered data packets per wall-clock second. Run with:
//!   cargo run --release -p bbrlab-sim --bin bbrlab-bench [-- a|c|d|all|FILE.json]
//! Peak memory is best read from the outside (`/usr/bin/time -v`), one scenario per process.
//! `BBRLAB_BENCH_HOSTS=1` runs the built-in scenarios with the host model at its defaults
//! (`"hosts": {}`): the model's own cost.
//! The built-in scenarios' receivers offer an unlimited, fixed window (`receiver_window =
//! "static"`, the default), as ns-3's program sets large fixed socket buffers: the same work,
//! release after release. `BBRLAB_BENCH_AUTOTUNE=1` runs them with Linux's receive-window
//! autotuning (`receiver_window = "autotune"`), for that model's cost.

use sim::Simulation;
use std::time::Instant;

fn scenario(name: &str) -> Option<(String, String)> {
    let (desc, rate, rtt_ms, n, cc, dur_s) = match name {
        "a" => ("(a) CUBIC 100 Mbit/s 40 ms 1 BDP 60 s", 100_000_000u64, 40u64, 1, "cubic", 60u64),
        "c" => ("(c) 10 CUBIC 1 Gbit/s 10 ms 1 BDP 30 s", 1_000_000_000, 10, 10, "cubic", 30),
        "d" => ("(d) BBRv1 1 Gbit/s 100 ms 1 BDP 30 s", 1_000_000_000, 100, 1, "bbr1", 30),
        _ => return None,
    };
    let bdp = rate as u128 * rtt_ms as u128 / 8 / 1000;
    let window = if std::env::var("BBRLAB_BENCH_AUTOTUNE").is_ok() { "autotune" } else { "static" };
    let flows: Vec<String> =
        (0..n).map(|_| format!(r#"{{"cc":"{cc}","receiver_window":"{window}"}}"#)).collect();
    let json = format!(
        r#"{{"seed":1,"duration_ns":{},"sample_interval_ns":100000000,
            "topology":{{"kind":"dumbbell","bottleneck":{{"rate_bps":{rate},"rtt_ns":{},"buffer":{{"bytes":{bdp}}}}}}},
            "flows":[{}]{}}}"#,
        dur_s * 1_000_000_000,
        rtt_ms * 1_000_000,
        flows.join(","),
        if std::env::var("BBRLAB_BENCH_HOSTS").is_ok() { r#","hosts":{}"# } else { "" }
    );
    Some((desc.to_string(), json))
}

fn run(desc: &str, json: &str) {
    let mut sim = Simulation::from_json(json).unwrap_or_else(|e| panic!("{e}"));
    let t0 = Instant::now();
    sim.run_until(u64::MAX);
    let wall = t0.elapsed().as_secs_f64();
    let r = sim.results();
    let goodput: f64 =
        r.flows.get("goodput_bps").and_then(|c| c.as_f64()).map(|v| v.iter().sum()).unwrap_or(0.0);
    println!(
        "{desc}: {} data packets delivered in {:.3} s wall = {:.3} M packets/s; {} events ({:.2} M/s); aggregate goodput {:.1} Mbit/s",
        r.data_packets_delivered,
        wall,
        r.data_packets_delivered as f64 / wall / 1e6,
        r.events,
        r.events as f64 / wall / 1e6,
        goodput / 1e6
    );
    // Where the cost comes from: events per delivered data packet (the model's leanness) and
    // wall time per event (the cost of one event).
    let per_pkt = |n: u64| n as f64 / r.data_packets_delivered.max(1) as f64;
    let kinds: Vec<String> =
        sim.event_counts().iter().map(|(k, n)| format!("{k} {:.2}", per_pkt(*n))).collect();
    println!(
        "  {:.2} events per data packet ({}); {:.1} ns per event, {:.1} ns per data packet",
        per_pkt(r.events),
        kinds.join(", "),
        wall * 1e9 / r.events.max(1) as f64,
        wall * 1e9 / r.data_packets_delivered.max(1) as f64
    );
    if std::env::var("BBRLAB_BENCH_VERBOSE").is_ok() {
        let col = |n: &str| r.flows.get(n).unwrap().clone();
        let (gp, rt, rto, rtt, lost) = (
            col("goodput_bps"),
            col("retransmits"),
            col("rto_count"),
            col("rtt_mean_ms"),
            col("lost_packets"),
        );
        for i in 0..gp.len() {
            println!(
                "  flow {i}: goodput {:.2} Mbit/s retrans {} lost {} rto {} rtt_mean {:.2} ms",
                gp.as_f64().unwrap()[i] / 1e6,
                rt.as_i64().unwrap()[i],
                lost.as_i64().unwrap()[i],
                rto.as_i64().unwrap()[i],
                rtt.as_f64().unwrap()[i]
            );
        }
        if let Err(e) = sim.check_conservation() {
            println!("  CONSERVATION VIOLATED: {e}");
        }
    }
}

fn main() {
    // Per-packet memory: every packet in flight is one of these in a link's ring.
    println!(
        "per-packet state: Packet {} B, pipe entry {} B",
        std::mem::size_of::<transport::Packet>(),
        std::mem::size_of::<(cc::Nanos, transport::Packet)>()
    );
    let arg = std::env::args().nth(1).unwrap_or_else(|| "all".to_string());
    let names: Vec<&str> = if arg == "all" { vec!["a", "c", "d"] } else { vec![arg.as_str()] };
    for n in names {
        match scenario(n) {
            Some((desc, json)) => run(&desc, &json),
            None => {
                let json = std::fs::read_to_string(n).unwrap_or_else(|e| panic!("{n}: {e}"));
                run(n, &json)
            }
        }
    }
}
