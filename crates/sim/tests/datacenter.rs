//! The data-center fabric (the Waterloo DC study): the star topology, 802.3x PAUSE (lossless mode),
//! cut-through forwarding and the partition/aggregate query application.

mod common;

use common::{col_f64, col_i64, queue_rows, simulate, FlowSpec, QueryApp, Run, Star, WIRE};
use sim::config::Config;
use sim::Simulation;

const RATE: u64 = 1_000_000_000;
const DELAY: u64 = 10_000;
const MTU_WIRE: u64 = WIRE;

struct Fabric {
    workers: u32,
    pfc: Option<(u64, u64)>,
    buffer: Option<u64>,
    cut_through: bool,
}

fn star_of(fab: &Fabric) -> Star {
    Star {
        workers: fab.workers,
        rate_bps: RATE,
        delay_ns: DELAY,
        buffer_bytes: fab.buffer,
        cut_through: fab.cut_through,
        pfc: fab.pfc,
        clock_ppm: 0,
    }
}

/// Max occupancy of queue `name` over the run.
fn max_occupancy(r: &sim::Results, name: &str) -> i64 {
    let max = col_i64(&r.queue, "max_occupancy_bytes");
    queue_rows(r, name).into_iter().map(|i| max[i]).max().unwrap()
}

fn incast(cc: &str, fab: &Fabric, dur_ns: u64) -> Config {
    let flows: Vec<FlowSpec> = (0..fab.workers)
        .map(|i| FlowSpec { start_ns: i as u64 * 1000, ..FlowSpec::new(cc) })
        .collect();
    common::star(Run::new(3, dur_ns, 10_000_000), &star_of(fab), &flows, &[])
}

#[test]
fn lossless_incast_40_to_1_drops_nothing_and_bounds_the_queue() {
    for cc in ["cubic", "bbr1"] {
        let (xoff, xon) = (64_000, 32_000);
        let fab = Fabric { workers: 40, pfc: Some((xoff, xon)), buffer: None, cut_through: true };
        let (_, r) = simulate(incast(cc, &fab, 500_000_000));
        assert_eq!(r.drops, 0, "{cc}: lossless mode dropped packets");
        assert!(
            col_i64(&r.flows, "lost_packets").iter().all(|&l| l == 0),
            "{cc}: a flow lost packets"
        );
        assert!(r.pause_frames > 0, "{cc}: a 40-to-1 incast must trigger PAUSE");
        // Bound: XOFF + per ingress link what is committed when the PAUSE lands (the packet in
        // serialization, one started during the PAUSE's trip, the wire's contents).
        let headroom = 40 * (2 * MTU_WIRE + RATE * 2 * DELAY / 8 / 1_000_000_000 + MTU_WIRE);
        let max = max_occupancy(&r, "tor_to_agg");
        assert!(
            max as u64 <= xoff + headroom,
            "{cc}: switch queue {max} > XOFF {xoff} + headroom {headroom}"
        );
        assert!(max as u64 > xoff, "{cc}: the queue should reach XOFF ({max})");
        // The bottleneck stays busy: ≥ 90 % of the 941.5 Mbit/s goodput ceiling.
        let total: f64 = col_f64(&r.flows, "goodput_bps").iter().sum();
        assert!(total > 0.9 * 941.5e6, "{cc}: aggregate goodput {total}");
        // PAUSE frames counted on both ends.
        let frames = col_i64(&r.queue, "pause_frames");
        assert!(frames.iter().any(|&f| f > 0));
    }
}

#[test]
fn star_drop_tail_drops_under_incast() {
    let fab = Fabric { workers: 40, pfc: None, buffer: Some(64_000), cut_through: false };
    let (_, r) = simulate(incast("cubic", &fab, 300_000_000));
    assert!(r.drops > 0, "a 64 KB drop-tail port must overflow under a 40-to-1 incast");
    assert_eq!(r.pause_frames, 0);
    let lost: i64 = col_i64(&r.flows, "lost_packets").iter().sum();
    assert!(lost > 0);
    assert!(max_occupancy(&r, "tor_to_agg") <= 64_000);
}

/// Delivery time of a one-packet transfer from worker 0.
fn one_packet_latency(cut_through: bool) -> f64 {
    let fab = Fabric { workers: 2, pfc: None, buffer: None, cut_through };
    let flow = FlowSpec { bytes: Some(common::MSS), ..FlowSpec::new("cubic") };
    let (_, r) =
        simulate(common::star(Run::new(1, 10_000_000, 1_000_000), &star_of(&fab), &[flow], &[]));
    col_f64(&r.flows, "rx_done_s")[0]
}

#[test]
fn cut_through_saves_one_serialization_per_switch_hop() {
    let sf = one_packet_latency(false);
    let ct = one_packet_latency(true);
    // Store-and-forward: 2 serializations (12.304 µs each) + 2 propagation delays.
    let ser = MTU_WIRE as f64 * 8.0 / RATE as f64;
    assert!(
        (sf - (2.0 * ser + 2.0 * DELAY as f64 / 1e9)).abs() < 1e-8,
        "store-and-forward latency {sf}"
    );
    // Cut-through saves the serialization of everything after the 64-byte header.
    let saved = (MTU_WIRE - 64) as f64 * 8.0 / RATE as f64;
    assert!(((sf - ct) - saved).abs() < 1e-8, "cut-through saved {} s, expected {saved}", sf - ct);
}

fn query(cc: &str, n: u32, fab: &Fabric, reps: u32, background: bool) -> Config {
    let bg: Vec<FlowSpec> = background
        .then(|| FlowSpec { sender: Some(fab.workers - 1), ..FlowSpec::new(cc) })
        .into_iter()
        .collect();
    let app = QueryApp {
        workers: n,
        bytes: 1_048_576,
        repetitions: reps,
        start_ns: 100_000_000,
        gap_ns: 20_000_000,
        jitter_ns: 20_000,
        flow: FlowSpec::new(cc),
    };
    common::star(Run::secs(5, 5), &star_of(fab), &bg, &[app])
}

#[test]
fn query_response_time_respects_the_physical_floor() {
    for (cc, lossless) in [("cubic", true), ("bbr1", true), ("cubic", false), ("bbr1", false)] {
        for n in [1u32, 10, 40] {
            let fab = Fabric {
                workers: 41,
                pfc: lossless.then_some((64_000, 32_000)),
                buffer: (!lossless).then_some(128_000),
                cut_through: lossless,
            };
            let (sim, r) = simulate(query(cc, n, &fab, 8, false));
            assert_eq!(sim.queries_completed(), 8, "{cc} n={n}: queries did not all complete");
            let rt = col_f64(&r.app_events, "response_time_s");
            // 1 MiB of payload at the 1448/1538 goodput ceiling, plus one RTT (request out,
            // last byte back).
            let per = 1_048_576 / n as u64;
            let wire = (per * n as u64) as f64 * MTU_WIRE as f64 / common::MSS_F;
            let floor = wire * 8.0 / RATE as f64 + 4.0 * DELAY as f64 / 1e9;
            for &t in &rt {
                assert!(t >= floor, "{cc} n={n}: response {t} below the floor {floor}");
                assert!(t < 1.0, "{cc} n={n}: response {t} absurdly long");
            }
            if lossless {
                assert_eq!(r.drops, 0);
            }
            // One flow per sub-query, each complete.
            let done = col_f64(&r.flows, "rx_done_s");
            assert_eq!(done.len(), (8 * n) as usize);
            assert!(done.iter().all(|d| d.is_finite()));
        }
    }
}

#[test]
fn query_with_background_flow_is_lossless_and_slower() {
    let fab = Fabric { workers: 21, pfc: Some((64_000, 32_000)), buffer: None, cut_through: true };
    let (sim, r) = simulate(query("cubic", 20, &fab, 10, true));
    assert_eq!(sim.queries_completed(), 10);
    assert_eq!(r.drops, 0);
    let with_bg: f64 = col_f64(&r.app_events, "response_time_s").iter().sum::<f64>() / 10.0;
    let (_, r0) = simulate(query("cubic", 20, &fab, 10, false));
    let without: f64 = col_f64(&r0.app_events, "response_time_s").iter().sum::<f64>() / 10.0;
    assert!(with_bg > without, "background traffic must slow queries ({with_bg} vs {without})");
}

#[test]
fn star_config_errors_name_the_field() {
    let bad = [
        (r#""workers":0,"rate_bps":1000000000,"delay_ns":1000"#, "topology.workers"),
        (
            r#""workers":2,"rate_bps":1000000000,"delay_ns":1000,"forwarding":"x""#,
            "topology.forwarding",
        ),
        (
            r#""workers":2,"rate_bps":1000000000,"delay_ns":1000,"pfc":{"xoff_bytes":10,"xon_bytes":20}"#,
            "topology.pfc.xon_bytes",
        ),
    ];
    for (star, field) in bad {
        let json = format!(
            r#"{{"duration_ns":1000000000,"topology":{{"kind":"star",{star}}},"flows":[{{"cc":"cubic"}}]}}"#
        );
        let e = Simulation::from_json(&json).err().expect("must fail");
        assert_eq!(e.path, field, "{e}");
    }
    let json = r#"{"duration_ns":1000000000,"topology":{"kind":"star","workers":2,"rate_bps":1000000000,"delay_ns":1000},
        "flows":[{"cc":"cubic","sender":5}]}"#;
    assert_eq!(Simulation::from_json(json).err().unwrap().path, "flows.0.sender");
    let json = r#"{"duration_ns":1000000000,"topology":{"kind":"star","workers":2,"rate_bps":1000000000,"delay_ns":1000},
        "apps":[{"kind":"query","workers":3,"size_bytes":1000,"flow":{"cc":"cubic"}}]}"#;
    assert_eq!(Simulation::from_json(json).err().unwrap().path, "apps.0.workers");
}
