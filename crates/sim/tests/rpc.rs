//! The RPC application (`rpc.rs`) end to end: on an idle path a message's latency is the path's
//! physics (one round trip plus the message's serialization at the bottleneck), the next
//! message follows the full acknowledgement after the gap, and the writer stops at `stop_ns`.

mod common;

use common::{col_num, run, Buffer, Dumbbell, FlowSpec, Run, MSS, WIRE};

const RATE: u64 = 1_000_000_000;
const RTT: u64 = 100_000;

fn rpc_flow(size_bytes: u64, gap_ns: u64, dur_ns: u64, stop_ns: Option<u64>) -> sim::Results {
    let d = Dumbbell::new(RATE, RTT, Buffer::Bytes(1_000_000));
    let flow = FlowSpec { rpc: Some((size_bytes, gap_ns)), stop_ns, ..FlowSpec::new("cubic") };
    run(common::dumbbell(Run::new(1, dur_ns, 1_000_000), &d, &[flow]))
}

fn get(r: &sim::Results, col: &str) -> f64 {
    col_num(&r.flows, col)[0]
}

/// One round trip plus the serialization of a message's `segs` frames at the bottleneck.
fn latency_floor_ns(segs: u64) -> f64 {
    RTT as f64 + (segs * WIRE * 8) as f64 * 1e9 / RATE as f64
}

#[test]
fn message_latency_is_the_path_physics_and_messages_follow_ack_plus_gap() {
    let (segs, gap, dur) = (4u64, 1_000_000u64, 20_000_000u64);
    let r = rpc_flow(segs * MSS, gap, dur, None);
    let floor = latency_floor_ns(segs);
    let mean_ns = get(&r, "rpc_mean_ms") * 1e6;
    // Above the floor only by the access links' serialization (10× the bottleneck rate) and
    // the ACK's: well under 5 µs.
    assert!(
        mean_ns >= floor && mean_ns <= floor + 5_000.0,
        "mean latency {mean_ns} ns, floor {floor} ns"
    );
    let p99_ns = get(&r, "rpc_p99_ms") * 1e6;
    assert!(p99_ns <= 1.05 * floor, "p99 latency {p99_ns} ns");
    // Message k is written at k·(latency + gap) and completes one latency later.
    let n = get(&r, "rpc_count");
    let want = ((dur as f64 - mean_ns) / (mean_ns + gap as f64)).floor() + 1.0;
    assert!((n - want).abs() <= 1.0, "{n} messages completed, {want} expected");
    assert!(get(&r, "fct_s").is_nan(), "an RPC flow never completes");
}

#[test]
fn an_odd_sized_message_is_answered_at_once_not_after_the_delayed_ack_timer() {
    // Three segments: after the quick-ACK phase the receiver ACKs every second segment, so the
    // third would wait 40 ms for the delayed-ACK timer, but the answer to the complete message
    // carries its ACK at once.
    let segs = 3u64;
    let r = rpc_flow(segs * MSS, 500_000, 50_000_000, None);
    assert!(get(&r, "rpc_count") >= 50.0);
    let p99_ns = get(&r, "rpc_p99_ms") * 1e6;
    assert!(p99_ns <= 1.05 * latency_floor_ns(segs), "p99 latency {p99_ns} ns");
}

#[test]
fn back_to_back_messages_stop_with_the_writer() {
    // Gap 0: the next message is written by the ACK that completes the previous one.
    let segs = 8u64;
    let (dur, stop) = (40_000_000u64, 20_000_000u64);
    let r = rpc_flow(segs * MSS, 0, dur, Some(stop));
    let lat = get(&r, "rpc_mean_ms") * 1e6;
    assert!(lat >= latency_floor_ns(segs), "mean latency {lat} ns");
    // Messages written before the stop complete; none is written after it.
    let n = get(&r, "rpc_count");
    let by_stop = (stop as f64 / lat).ceil();
    assert!(
        n >= by_stop - 1.0 && n <= by_stop + 1.0,
        "{n} messages, {by_stop} written before the stop"
    );
}
