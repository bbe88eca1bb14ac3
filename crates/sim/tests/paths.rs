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
fn path_run(
    cc: &str,
    rate_bps: u64,
    rtt_ms: u64,
    dur_ns: u64,
    sample_ms: u64,
    extra: Value,
) -> Results {
    let d = Dumbbell::new(rate_bps, rtt_ms * MS, Buffer::Default);
    let mut v = dumbbell_json(Run::new(1, dur_ns, sample_ms * MS), &d, &[FlowSpec::new(cc)]);
    merge_into_bottleneck(&mut v, &extra);
    run(config(v))
}

/// Set each key of `extra` on the scenario's bottleneck (a null value removes the key).
fn merge_into_bottleneck(v: &mut Value, extra: &Value) {
    let b = v["topology"]["bottleneck"].as_object_mut().unwrap();
    for (k, x) in extra.as_object().unwrap() {
        if x.is_null() {
            b.remove(k);
        } else {
            b.insert(k.clone(), x.clone());
        }
    }
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
            "{cc}: 12–13 s: link {:.2} Mbit/s, goodput {:.2} (ceiling {:.2}); \
             queue at 10 s {:.0} B",
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

/// First sample time after `from` s at which the bottleneck's delivered rate over the last
/// `win` samples reaches `frac` of `rate_bps` (None: never).
fn time_to_reach(
    q: &[(f64, f64, f64, f64)],
    from: f64,
    win: usize,
    frac: f64,
    rate_bps: f64,
) -> Option<f64> {
    (win..q.len()).filter(|&i| q[i - win].0 >= from - 1e-9).find_map(|i| {
        let bps = (q[i].2 - q[i - win].2) * 8.0 / (q[i].0 - q[i - win].0);
        (bps >= frac * rate_bps).then_some(q[i].0)
    })
}

/// 10 → 100 Mbit/s at 10 s on a 40 ms path (buffer: one BDP at 10 Mbit/s, 50 KB): the
/// rounds (base RTTs) each algorithm takes until the link delivers 90 % of the new rate.
///
/// BBR: A.15 of the draft's tests has the UP phase's inflight_longterm increment double each
/// round, so inflight grows from the old BDP (33 packets) to 90 % of the new one (297) in
/// log2(297 − 33) ≈ 8 rounds of UP; PROBE_UP's pacing gain of 1.25 makes the delivery rate
/// grow 1.16× per round (its samples lag one to two round trips behind the pacing rate:
/// tests/python/test_step_up_growth.py), ln 9 / ln 1.16 ≈ 15 rounds, and the wait for the
/// next probe
/// (BBRv3: 2–3 s at most; BBRv1: the 8-phase cycle, and a PROBE_RTT that may fall there)
/// comes before. Bound: 40 rounds (1.6 s).
///
/// CUBIC: from W_max = old BDP + buffer = 66 packets, W(t) = C (t − K)³ + W_max with
/// C = 0.4, K = cbrt(W_max (1 − β) / C), β = 0.7 (Linux), reaches 297 packets
/// (t − K) = cbrt((297 − 66) / 0.4) = 8.3 s after the epoch's plateau; the step falls
/// somewhere in an epoch, so 8.3 s ≤ t ≤ K + 8.3 s = 12.0 s.
#[test]
fn a_tenfold_step_up_is_found() {
    let step = json!({"schedule": [{"at_ns": 10 * S, "rate_bps": 100 * MBPS}]});
    let pkts = |bps: f64| bps * 0.040 / 8.0 / WIRE_F;
    let w_max = 2.0 * pkts(10e6);
    let target = 0.9 * pkts(100e6);
    let k = (w_max * 0.3 / 0.4f64).cbrt();
    let grow = ((target - w_max) / 0.4f64).cbrt();
    println!("cubic prediction: {grow:.2}–{:.2} s (K = {k:.2} s)", k + grow);
    for cc in ["bbr1", "bbr3", "cubic"] {
        let dur = if cc == "cubic" { 25 * S } else { 13 * S };
        let r = path_run(cc, 10 * MBPS, 40, dur, 40, step.clone());
        let q = bottleneck(&r);
        let t = time_to_reach(&q, 10.0, 2, 0.9, 100e6).expect("90 % of the new rate") - 10.0;
        println!("{cc}: 90 % of 100 Mbit/s after {t:.2} s = {:.0} rounds", t / 0.04);
        if cc == "cubic" {
            assert!(
                t >= 0.9 * grow && t <= 1.1 * (k + grow),
                "{cc}: {t:.2} s outside the cubic prediction {grow:.2}–{:.2} s",
                k + grow
            );
        } else {
            assert!(t / 0.04 <= 40.0, "{cc}: {:.0} rounds > 40", t / 0.04);
        }
    }
}

#[test]
#[ignore]
fn print_step_up_trajectory() {
    let step = json!({"schedule": [{"at_ns": 10 * S, "rate_bps": 100 * MBPS}]});
    for cc in ["bbr1", "bbr3"] {
        let r = path_run(cc, 10 * MBPS, 40, 12 * S, 40, step.clone());
        let q = bottleneck(&r);
        let pr = col_num(&r.timeseries, "pacing_rate_bps");
        let line: Vec<String> = q
            .windows(2)
            .enumerate()
            .filter(|(_, w)| w[0].0 >= 9.9)
            .map(|(i, w)| {
                format!(
                    "{:.2}:{:.0}/{:.0}",
                    w[1].0,
                    (w[1].2 - w[0].2) * 8.0 / (w[1].0 - w[0].0) / 1e6,
                    pr[i + 1] / 1e6
                )
            })
            .collect();
        println!("{cc}: {}", line.join(" "));
    }
}

/// A policer at half the link (50 of 100 Mbit/s, 64 KB bucket): no flow's long-run rate
/// exceeds the token rate plus the bucket over the run, and BBRv1/v3 get ≥ 85 % of it.
#[test]
fn a_policer_caps_every_flow_and_bbr_uses_most_of_it() {
    let pol = json!({"policer": {"rate_bps": 50 * MBPS, "burst_bytes": 64_000}});
    let dur_s = 8.0;
    for cc in ["cubic", "bbr1", "bbr3"] {
        let r = path_run(cc, 100 * MBPS, 40, 8 * S, 100, pol.clone());
        let q = bottleneck(&r);
        let wire = q.last().unwrap().2; // wire bytes the link sent (all passed the policer)
        let cap = 50e6 / 8.0 * dur_s + 64_000.0;
        let policed = col_num(&r.queue, "policer_drops");
        let g = goodput_between(&r, 2.0, dur_s);
        println!(
            "{cc}: wire {:.2} Mbit/s over the run (cap {:.2}), goodput 2–8 s {:.2} = {:.1} % of \
             the policer's payload rate, policer drops {}",
            wire * 8.0 / dur_s / 1e6,
            cap * 8.0 / dur_s / 1e6,
            g / 1e6,
            100.0 * g / ceiling_bps(50e6),
            policed.iter().cloned().fold(0.0, f64::max)
        );
        assert!(wire <= cap, "{cc}: {wire} wire bytes > token rate × time + bucket {cap}");
        assert!(policed.iter().any(|&d| d > 0.0), "{cc}: the policer never dropped");
        if cc != "cubic" {
            assert!(g >= 0.85 * ceiling_bps(50e6), "{cc}: {:.2} Mbit/s < 85 %", g / 1e6);
        }
    }
}

/// Gilbert–Elliott loss (p = 1 %, r = 30 %, 1 − h = 50 %, 1 − k = 1 %) on a link the flow
/// does not fill: the share of packets lost is the model's stationary mean,
/// (r (1 − k) + p (1 − h)) / (p + r) = 2.58 %.
#[test]
fn gilbert_elliott_loss_matches_its_formula() {
    let (p, r_, h, k) = (0.01, 0.3, 0.5, 0.99);
    let want = (r_ * (1.0 - k) + p * (1.0 - h)) / (p + r_);
    let ge = json!({"loss_model": {"kind": "gilbert_elliott", "p": p, "r": r_, "h": h, "k": k}});
    let r = path_run("bbr1", 100 * MBPS, 10, 20 * S, 1000, ge);
    let rows = queue_rows(&r, "bottleneck");
    let lost = col_num(&r.queue, "random_losses")[*rows.last().unwrap()];
    let sent = sum(&col_num(&r.flows, "data_packets_sent"));
    let got = lost / sent;
    // Binomial-with-bursts error: bursts of mean 1/r ≈ 3.3 packets, so ≈ 3× the binomial
    // variance; 4 sigma.
    let sigma = (3.0 * want * (1.0 - want) / sent).sqrt();
    println!("GE: {lost} of {sent} lost = {:.3} %, formula {:.3} %", 100.0 * got, 100.0 * want);
    assert!((got - want).abs() <= 4.0 * sigma, "{got} vs {want} (sigma {sigma})");
}

/// A 60 s LTE-like Mahimahi trace (`CellularTraceParams::lte_example`, seed `seed`).
fn lte_trace(seed: u64) -> (String, f64) {
    use pathmodel::impair::{generate_mahimahi, CellularTraceParams, Trace};
    let text =
        generate_mahimahi(&CellularTraceParams::lte_example(), &mut pathmodel::SplitMix64(seed))
            .unwrap();
    let mean = Trace::parse("t.mahimahi", &text).unwrap().mean_rate_bps();
    (text, mean)
}

/// A saturating flow (CUBIC, a 4 MB buffer that never empties) on a trace link: what the link
/// sends over one whole lap of the trace (60 s) is the trace's mean rate × 60 s, within one
/// opportunity per packet size mismatch (1500-byte opportunities carry 1514-byte frames).
#[test]
fn a_trace_link_delivers_the_trace_mean_rate() {
    let (text, mean) = lte_trace(1);
    let tr = json!({
        "rate_bps": null,
        "trace": {"file": "lte.mahimahi", "text": text},
        "buffer": {"bytes": 4_000_000},
    });
    let r = path_run("cubic", 0, 40, 70 * S, 1000, tr);
    let q = bottleneck(&r);
    let at = |t: f64| q.iter().find(|x| (x.0 - t).abs() < 1e-6).expect("a sample");
    let lap = (at(65.0).2 - at(5.0).2) * 8.0 / 60.0;
    let min_q =
        q.iter().filter(|x| x.0 >= 5.0 && x.0 <= 65.0).map(|x| x.1).fold(f64::MAX, f64::min);
    println!(
        "trace mean {:.3} Mbit/s, link over 5–65 s {:.3} Mbit/s ({:+.2} %), smallest sampled \
         queue {min_q:.0} B",
        mean / 1e6,
        lap / 1e6,
        100.0 * (lap / mean - 1.0)
    );
    assert!((lap - mean).abs() <= 0.02 * mean, "{lap} vs the trace's mean {mean}");
}

/// 10 minutes of a BBRv1 flow on a ~10 Mbit/s trace link: the simulation's wall time (the
/// issue's figure is ≤ 2 s; the assertion leaves room for a loaded test machine).
#[test]
fn a_ten_minute_trace_run_is_fast() {
    let (text, mean) = lte_trace(1);
    let tr = json!({"rate_bps": null, "trace": {"file": "lte.mahimahi", "text": text}});
    let t0 = std::time::Instant::now();
    let r = path_run("bbr1", 0, 40, 600 * S, 1000, tr);
    let wall = t0.elapsed().as_secs_f64();
    let g = col_num(&r.flows, "goodput_bps")[0];
    println!(
        "600 s on a {:.2} Mbit/s trace: {wall:.2} s wall, {} events, goodput {:.2} Mbit/s",
        mean / 1e6,
        r.events,
        g / 1e6
    );
    assert!(wall <= 10.0, "{wall} s");
}

/// Bad path input: one line naming the field (and, for a trace, the file and line).
#[test]
fn bad_path_input_is_refused_with_one_line() {
    let d = Dumbbell::new(10 * MBPS, 40 * MS, Buffer::Default);
    let base = dumbbell_json(Run::secs(1, 2), &d, &[FlowSpec::new("cubic")]);
    let cases = [
        (json!({"trace": {"file": "a.mahimahi", "text": "1\n2\n"}}), "topology.bottleneck.trace"),
        (
            json!({"rate_bps": null, "trace": {"file": "a.mahimahi", "text": "1\n2\nx\n"}}),
            "a.mahimahi: line 3",
        ),
        (json!({"rate_bps": null}), "topology.bottleneck.rate_bps"),
        (
            json!({"schedule": [{"at_ns": 5 * S, "rate_bps": 1}, {"at_ns": 4 * S, "rate_bps": 2}]}),
            "schedule entry 1",
        ),
        (
            json!({"policer": {"rate_bps": MBPS, "burst_bytes": 1500}}),
            "topology.bottleneck.policer.burst_bytes",
        ),
    ];
    for (extra, want) in cases {
        let mut v = base.clone();
        merge_into_bottleneck(&mut v, &extra);
        let e = sim::config::Config::from_value(v).expect_err(want).to_string();
        println!("{e}");
        assert!(e.contains(want) && !e.contains('\n'), "{e:?} should name {want}");
    }
}

/// A delay that drops from 40 to 10 ms mid-run keeps packets in order (each arrives no earlier
/// than the one ahead of it): a BBRv1 flow that never overflows its 10-BDP buffer sees no
/// reordering, so it retransmits nothing. With jitter, reordering and ACK aggregation as well,
/// every packet is still accounted for (`simulate` checks conservation) and the flow moves.
#[test]
fn a_shrinking_delay_keeps_order_and_the_stages_conserve_packets() {
    let fifo = json!({
        "buffer": {"bdp": 10.0},
        "schedule": [{"at_ns": 3 * S, "rtt_ns": 10 * MS}],
    });
    let r = path_run("bbr1", 20 * MBPS, 40, 6 * S, 100, fifo);
    let re = col_num(&r.flows, "retransmits")[0];
    println!("rtt 40 → 10 ms: {re} retransmits");
    assert_eq!(re, 0.0, "a delay change reordered packets");
    let all = json!({
        "jitter": {"max_ns": 2 * MS, "reorder": true},
        "reorder": {"probability": 0.01, "displacement": 3},
        "aggregation": {"direction": "ack", "bytes": 16_000, "timeout_ns": 2 * MS},
    });
    let r = path_run("bbr3", 20 * MBPS, 40, 6 * S, 100, all);
    let g = goodput_between(&r, 2.0, 6.0);
    println!("jitter + reorder + ACK aggregation: goodput {:.2} Mbit/s", g / 1e6);
    assert!(g >= 0.5 * ceiling_bps(20e6), "{g}");
}
