//! The per-ACK state trace (`trace = true` on a flow, the `state` table): one row per ACK the
//! sender processed, with the algorithm's state after it, and no effect on the run.

mod common;

use common::{col_f64, col_i32, col_i64, col_u8, queue_rows, run};
use serde_json::{json, Value};
use sim::config::Config;

const MS: u64 = 1_000_000;
/// 10 Mbit/s of wire rate; payload capacity = rate · 1448 / 1514 (Ethernet + IP + TCP headers).
const RATE_BPS: u64 = 10_000_000;
const PAYLOAD_BPS: f64 = RATE_BPS as f64 * 1448.0 / 1514.0;

/// Flows `flows` over 10 Mbit/s × 40 ms with 2 BDP of buffer, for `dur_ms`.
fn scenario(flows: Value, dur_ms: u64) -> Config {
    let v = json!({"seed": 1, "duration_ns": dur_ms * MS, "sample_interval_ns": 100 * MS,
        "topology": {"kind": "dumbbell", "bottleneck": {
            "rate_bps": RATE_BPS, "rtt_ns": 40 * MS, "buffer": {"bdp": 2.0}}},
        "flows": flows});
    Config::from_value(v.clone()).unwrap_or_else(|e| panic!("{e}\n{v}"))
}

fn phase_names(r: &sim::Results) -> Vec<String> {
    let codes = col_u8(&r.state, "phase_code");
    codes.iter().map(|&c| r.phase_labels[c as usize].clone()).collect()
}

#[test]
fn a_traced_bbr3_flow_has_a_row_per_ack_with_its_state_machine_and_model() {
    let r = run(scenario(json!([{"cc": "bbr3", "trace": true}]), 3000));
    let t = col_f64(&r.state, "t_s");
    let acks_sent = col_i64(&r.flows, "acks_sent")[0];
    // Every ACK the receiver sent reached the sender except those still on the way back at the
    // end (20 ms of ACKs: about 10 at one ACK per 2 segments; 200 bounds it generously).
    let rows = t.len() as i64;
    assert!(rows <= acks_sent && rows >= acks_sent - 200, "{rows} rows, {acks_sent} ACKs sent");
    assert!(t.windows(2).all(|w| w[0] <= w[1]), "rows in time order");
    assert!(col_i32(&r.state, "flow").iter().all(|&f| f == 0));
    // The state machine as the draft orders it: STARTUP, DRAIN, then PROBE_BW's phases.
    let phases = phase_names(&r);
    let first = |name: &str| phases.iter().position(|p| p == name);
    let (startup, drain, down) = (first("startup"), first("drain"), first("probe_down"));
    assert_eq!(startup, Some(0));
    assert!(drain.unwrap() < down.unwrap(), "drain {drain:?} before probe_down {down:?}");
    // Rounds count up by one at each round start, and the flow sees tens of rounds in 3 s.
    let rounds = col_i64(&r.state, "round_count");
    let starts = col_u8(&r.state, "round_start");
    for i in 1..rounds.len() {
        assert_eq!(rounds[i] - rounds[i - 1], i64::from(starts[i]), "row {i}");
    }
    assert!(*rounds.last().unwrap() > 30, "{} rounds", rounds.last().unwrap());
    // max_bw at the payload capacity (within 2 %, A.1's criterion), reached in STARTUP.
    let max_bw = col_f64(&r.state, "max_bw_bps");
    let at_drain = max_bw[drain.unwrap()];
    assert!((at_drain / PAYLOAD_BPS - 1.0).abs() < 0.02, "max_bw {at_drain} at DRAIN");
    assert_eq!(col_u8(&r.state, "full_bw_reached")[drain.unwrap()], 1);
    // Gains: STARTUP's 2.77 at the start, DRAIN's 0.5.
    let pg = col_f64(&r.state, "pacing_gain");
    assert!((pg[0] - 2.77).abs() < 0.01 && (pg[drain.unwrap()] - 0.5).abs() < 1e-6);
    let min_rtt = col_f64(&r.state, "min_rtt_ms");
    assert!(min_rtt.last().unwrap() >= &40.0 && min_rtt.last().unwrap() < &42.0);
    assert!(col_i64(&r.state, "cwnd_pkts").iter().all(|&c| c >= 4));
}

#[test]
fn tracing_changes_nothing_and_untraced_flows_have_no_rows() {
    let flows = |trace: bool| json!([{"cc": "bbr2", "trace": trace}, {"cc": "cubic"}]);
    let plain = run(scenario(flows(false), 2000));
    let traced = run(scenario(flows(true), 2000));
    assert!(col_f64(&plain.state, "t_s").is_empty());
    // (Debug text: NaN columns compare equal there.)
    let text = |t: &sim::metrics::Table| format!("{:?}", t.columns);
    assert_eq!(text(&plain.flows), text(&traced.flows), "same per-flow results");
    // The phase codes index the run's labels, which the trace may fill in another order: the
    // timeseries compares by phase name.
    let ts_text = |r: &sim::Results| {
        let cols: Vec<_> =
            r.timeseries.columns.iter().filter(|(n, _)| *n != "phase_code").collect();
        let codes = col_u8(&r.timeseries, "phase_code");
        let names: Vec<&str> = codes.iter().map(|&c| r.phase_labels[c as usize].as_str()).collect();
        format!("{cols:?} {names:?}")
    };
    assert_eq!(ts_text(&plain), ts_text(&traced));
    assert_eq!(plain.events, traced.events);
    let flow = col_i32(&traced.state, "flow");
    assert!(!flow.is_empty() && flow.iter().all(|&f| f == 0), "only the traced flow");
}

#[test]
fn a_traced_loss_based_flow_leaves_the_bbr_columns_unset() {
    let r = run(scenario(json!([{"cc": "cubic", "trace": true}]), 1000));
    assert!(!col_f64(&r.state, "t_s").is_empty());
    assert!(col_f64(&r.state, "max_bw_bps").iter().all(|x| x.is_nan()));
    assert!(col_i64(&r.state, "round_count").iter().all(|&x| x == -1));
    assert!(col_i64(&r.state, "cwnd_pkts").iter().any(|&c| c > 10), "slow start grew cwnd");
}

#[test]
fn placed_drops_lose_exactly_the_listed_first_transmissions() {
    let dropped = [20u64, 22, 24, 26, 28, 30];
    let flows = json!([{"cc": "bbr3", "trace": true, "drop_segments": dropped}]);
    let r = run(scenario(flows, 2000));
    // A 4-BDP buffer never overflows in STARTUP: the listed segments are the only losses.
    assert_eq!(col_i64(&r.flows, "lost_packets")[0], dropped.len() as i64);
    assert!(col_i64(&r.flows, "retransmits")[0] >= dropped.len() as i64);
    let lost = col_i64(&r.state, "lost_pkts");
    assert_eq!(*lost.last().unwrap(), dropped.len() as i64, "the sender marked each lost");
    let none = run(scenario(json!([{"cc": "bbr3"}]), 2000));
    assert_eq!(col_i64(&none.flows, "lost_packets")[0], 0);
}

/// A flow's handshake crosses the queues present at its start (Linux seeds srtt and min_rtt
/// from the SYN-ACK): a BBRv1 flow joining 3 s after a CUBIC flow that fills 8 BDP of buffer
/// starts with min_rtt = base RTT + that queue's delay, and its first RTT samples agree with it
/// (they wait in the same queue). Without the queue in the handshake, min_rtt starts at 40 ms.
#[test]
fn a_late_flow_starts_with_the_standing_queue_in_its_rtt() {
    let v = json!({"seed": 1, "duration_ns": 4000 * MS, "sample_interval_ns": 100 * MS,
        "topology": {"kind": "dumbbell", "bottleneck": {
            "rate_bps": RATE_BPS, "rtt_ns": 40 * MS, "buffer": {"bdp": 8.0}}},
        "flows": [{"cc": "cubic"}, {"cc": "bbr1", "trace": true, "start_ns": 3000 * MS}]});
    let r = run(Config::from_value(v).unwrap());
    // The queue's delay when the BBR flow starts: the bottleneck's occupancy in the sample
    // interval before 3 s (CUBIC alone), at the link's rate.
    let t = col_f64(&r.queue, "t_s");
    let occ = col_f64(&r.queue, "mean_occupancy_bytes");
    let rows = queue_rows(&r, "bottleneck");
    let i = *rows.iter().find(|&&i| (t[i] - 3.0).abs() < 1e-9).expect("a sample at 3 s");
    let queue_ms = occ[i] * 8.0 / RATE_BPS as f64 * 1e3;
    assert!(queue_ms > 100.0, "CUBIC keeps a standing queue: {queue_ms:.1} ms");
    let first_min_rtt = col_f64(&r.state, "min_rtt_ms")[0];
    let expected = 40.0 + queue_ms;
    assert!(
        (first_min_rtt / expected - 1.0).abs() < 0.15,
        "first min_rtt {first_min_rtt:.1} ms, base + queue {expected:.1} ms"
    );
}
