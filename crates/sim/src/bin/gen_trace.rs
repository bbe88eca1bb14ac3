//! Writes a synthetic cellular-like Mahimahi trace to stdout (`pathmodel::impair::trace_gen`:
//! a random walk of the rate with outages, from a stated seed), for the example scenarios'
//! `examples/traces/cell-down.mahimahi` and `cell-up.mahimahi`:
//!
//! ```text
//! cd examples/traces
//! cargo run --release -p bbrlab-sim --bin bbrlab-gen-trace -- down 1 > cell-down.mahimahi
//! cargo run --release -p bbrlab-sim --bin bbrlab-gen-trace -- up 2 > cell-up.mahimahi
//! ```
//!
//! `down`: `CellularTraceParams::lte_example` (60 s, 1–30 Mbit/s from 10, ±3 Mbit/s per
//! 100 ms, 200 ms outages with probability 0.5 % per step). `up`: the same process at a
//! third of the rates (0.33–10 Mbit/s from 3.3, ±1 Mbit/s per step), an LTE uplink's share.

use pathmodel::impair::{generate_mahimahi, CellularTraceParams};
use pathmodel::SplitMix64;

/// An uplink's rates are this fraction of the downlink's.
const UPLINK_SHARE_DIVISOR: u64 = 3;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: bbrlab-gen-trace down|up SEED > FILE.mahimahi";
    let (Some(kind), Some(seed)) = (args.first(), args.get(1).and_then(|s| s.parse().ok())) else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let mut p = CellularTraceParams::lte_example();
    match kind.as_str() {
        "down" => {}
        "up" => {
            let d = UPLINK_SHARE_DIVISOR;
            p.min_rate_bps /= d;
            p.max_rate_bps /= d;
            p.start_rate_bps /= d;
            p.max_change_bps /= d;
        }
        _ => {
            eprintln!("{usage}");
            std::process::exit(2);
        }
    }
    match generate_mahimahi(&p, &mut SplitMix64(seed)) {
        Ok(text) => print!("{text}"),
        Err(e) => {
            eprintln!("bbrlab-gen-trace: {e}");
            std::process::exit(2);
        }
    }
}
