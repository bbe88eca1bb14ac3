//! Paths that change (issue 30), against physics and the algorithms' own models: a 10× rate
//! step down and up, a token-bucket policer, Gilbert–Elliott burst loss, a trace-driven link.
//! Runs are short (a few simulated seconds at ≤ 100 Mbit/s) so the file fits a 2-core machine.

mod common;

use common::*;
use serde_json::{json, Value};
use sim::Results;

const MBPS: u64 = 1_000_000;
const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;

/// A one-flow dumbbell of `rate_bps` (or a trace) and `rtt_ms` with the bottleneck's JSON
/// extended by `extra` (the path model's fields), sampled every `sample_ms`.
fn path_run(cc: &str, rate_bps: u64, rtt_ms: u64, dur_ns: u64, sample_ms: u64, extra: Value) -> Results {
    let d = Dumbbell::new(rate_bps, rtt_ms * MS, Buffer::Default);
    let mut v = dumbbell_json(Run::new(1, dur_ns, sample_ms * MS), &d, &[FlowSpec::new(cc)]);
    let b = v["topology"]["bottleneck"].as_object_mut().unwrap();
    for (k, x) in extra.as_object().unwrap() {
        if x.is_null() {
            b.remove(k);
        } else {
            b.insert(k.clone(), x.clone());
        }
    }
    run(config(v))
}

/// (time s, cumulative delivered bytes) of flow 0 at each sample.
fn delivered(r: &Results) -> Vec<(f64, f64)> {
    let t = col_f64(&r.timeseries, "t_s");
    let d = col_num(&r.timeseries, "delivered_bytes");
    t.into_iter().zip(d).collect()
}

/// Payload goodput of flow 0 over (t0, t1] seconds, from the cumulative deliveries.
fn goodput_between(r: &Results, t0: f64, t1: f64) -> f64 {
    let d = delivered(r);
    let at = |t: f64| d.iter().rev().find(|(s, _)| *s <= t + 1e-9).map_or(0.0, |x| x.1);
    (at(t1) - at(t0)) * 8.0 / (t1 - t0)
}

/// The bottleneck's queue table rows: (t s, occupancy B, tx bytes cumulative, rate bit/s).
fn bottleneck(r: &Results) -> Vec<(f64, f64, f64, f64)> {
    let rows = queue_rows(r, "bottleneck");
    let t = col_f64(&r.queue, "t_s");
    let occ = col_num(&r.queue, "occupancy_bytes");
    let tx = col_num(&r.queue, "tx_bytes");
    let rate = col_num(&r.queue, "rate_bps");
    rows.iter().map(|&i| (t[i], occ[i], tx[i], rate[i])).collect()
}

/// 100 → 10 Mbit/s at 10 s on a 40 ms path: the link never sends faster than its new rate,
/// the receiver gets no more than the new capacity plus what was queued and propagating at
/// the step, and 2 s later every algorithm delivers within 10 % of the new capacity.
#[test]
fn a_tenfold_step_down_is_followed_within_two_seconds() {
    let step = json!({"schedule": [{"at_ns": 10 * S, "rate_bps": 10 * MBPS}]});
    for cc in ["cubic", "bbr1", "bbr3"] {
        let r = path_run(cc, 100 * MBPS, 40, 14 * S, 100, step.clone());
        let q = bottleneck(&r);
        let k = q.iter().position(|x| (x.0 - 10.0).abs() < 1e-6).expect("a sample at 10 s");
        assert_eq!(q[k - 1].3, 100e6, "{cc}: the queue table shows the rate before");
        assert_eq!(q[k + 1].3, 10e6, "{cc}: the queue table shows the rate after");
        // The serializer: at most the new rate per interval (+ the frame that straddles).
        for w in q[k..].windows(2) {
            let sent = w[1].2 - w[0].2;
            let cap = 10e6 / 8.0 * (w[1].0 - w[0].0) + WIRE_F;
            assert!(sent <= cap, "{cc}: {sent} B sent in the interval to {} s > {cap}", w[1].0);
        }
        // The receiver: new capacity × time + the queue and the pipe it drained.
        let (t0, q0) = (q[k].0, q[k].1);
        let pipe0 = 100e6 / 8.0 * 0.020; // the data direction's one-way delay at the old rate
        for &(t1, _, _, _) in &q[k + 1..] {
            let got = goodput_between(&r, t0, t1) / 8.0 * (t1 - t0);
            let cap = ceiling_bps(10e6) / 8.0 * (t1 - t0) + q0 + pipe0;
            assert!(got <= cap, "{cc}: {got:.0} B delivered in ({t0}, {t1}] s > {cap:.0}");
        }
        // 2 s later: the link's delivered rate (wire bytes out of the bottleneck) over the
        // next second. (The flow's in-order goodput in a window can exceed the link's rate
        // when a recovery releases data the receiver held out of order.)
        let at = |t: f64| q.iter().find(|x| (x.0 - t).abs() < 1e-6).expect("a sample").2;
        let link_bps = (at(13.0) - at(12.0)) * 8.0;
        let g = goodput_between(&r, 12.0, 13.0);
        println!(
            "{cc}: 12–13 s: link {:.2} Mbit/s, goodput {:.2} (ceiling {:.2}); queue at 10 s {:.0} B",
            link_bps / 1e6,
            g / 1e6,
            ceiling_bps(10e6) / 1e6,
            q0
        );
        assert!(
            (link_bps - 10e6).abs() <= 0.10 * 10e6,
            "{cc}: the link delivers {:.2} Mbit/s 2 s after the step, not within 10 % of 10",
            link_bps / 1e6
        );
    }
}
