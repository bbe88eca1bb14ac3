//! The simulator checked against physics and published response functions, not against itself.

mod common;

use common::{
    assert_fills_clean_link, bdp_dumbbell, ceiling_bps, col_f64, col_i32, col_i64, simulate,
    wan_dumbbell, Buffer, Dumbbell, FlowSpec, Run, MSS_F,
};

const MS: u64 = 1_000_000;

#[test]
fn every_algorithm_fills_a_clean_link_to_95_percent_of_the_ceiling() {
    for cc in ["reno", "cubic", "bbr1"] {
        let (_, r) = simulate(wan_dumbbell(100_000_000, 40, 1.0, 0.0, 60, &[cc]));
        assert_fills_clean_link(cc, col_f64(&r.flows, "goodput_bps")[0], 100e6);
    }
}

#[test]
fn link_rate_is_a_hard_ceiling_for_many_flows() {
    let (_, r) = simulate(wan_dumbbell(1_000_000_000, 10, 1.0, 0.0, 5, &["cubic"; 10]));
    let total: f64 = col_f64(&r.flows, "goodput_bps").iter().sum();
    // Flows are active for the whole run, so the sum of goodputs is bounded by the ceiling.
    assert!(total <= ceiling_bps(1e9) * 1.0001, "aggregate {:.1} Mbit/s", total / 1e6);
    assert!(total >= 0.9 * ceiling_bps(1e9), "aggregate {:.1} Mbit/s", total / 1e6);
}

/// Mathis et al. 1997: BW = (MSS/RTT)·sqrt(3/2)/sqrt(p) for Reno-style AIMD (Linux counts acked
/// segments, not ACKs, so delayed ACKs do not halve the growth and the constant is sqrt(3/2)).
fn mathis_bps(rtt_s: f64, p: f64) -> f64 {
    MSS_F * 8.0 / rtt_s * (1.5f64).sqrt() / p.sqrt()
}

/// RFC 9438 §5.1: average CUBIC window = max(cubic, Reno-friendly) where
/// cubic = (C(3+β)/(4(1−β)))^¼ · RTT^¾ / p^¾ and Reno-friendly = sqrt(3/(2p)) (α = 3(1−β)/(1+β)).
fn cubic_response_bps(rtt_s: f64, p: f64) -> f64 {
    let (c, beta) = (0.4f64, 0.7f64);
    let w_cubic =
        (c * (3.0 + beta) / (4.0 * (1.0 - beta))).powf(0.25) * rtt_s.powf(0.75) / p.powf(0.75);
    let w_reno = (1.5f64 / p).sqrt();
    w_cubic.max(w_reno) * MSS_F * 8.0 / rtt_s
}

#[test]
fn reno_and_cubic_follow_their_loss_response_functions() {
    let rtt_ms = 40;
    for &p in &[0.001, 0.01, 0.03] {
        for cc in ["reno", "cubic"] {
            // A link far faster than the response function so only loss limits the flow, and a
            // run long enough for thousands of loss events.
            let (_, r) = simulate(wan_dumbbell(1_000_000_000, rtt_ms, 1.0, p, 200, &[cc]));
            let g = col_f64(&r.flows, "goodput_bps")[0];
            let model =
                if cc == "reno" { mathis_bps(0.040, p) } else { cubic_response_bps(0.040, p) };
            let err = (g - model).abs() / model;
            println!(
                "{cc} p={p}: sim {:.3} Mbit/s, model {:.3} Mbit/s, error {:.1} %",
                g / 1e6,
                model / 1e6,
                err * 100.0
            );
            assert!(
                err <= 0.35,
                "{cc} p={p}: {:.3} vs model {:.3} Mbit/s ({:.0} % off)",
                g / 1e6,
                model / 1e6,
                err * 100.0
            );
        }
    }
}

#[test]
fn bbr1_keeps_most_of_the_link_under_random_loss() {
    let (_, r) = simulate(wan_dumbbell(100_000_000, 40, 1.0, 0.015, 60, &["bbr1"]));
    let g = col_f64(&r.flows, "goodput_bps")[0];
    assert!(g >= 0.85 * ceiling_bps(100e6), "bbr1 at 1.5 % loss: {:.1} Mbit/s", g / 1e6);
    let (_, r) = simulate(wan_dumbbell(100_000_000, 40, 1.0, 0.015, 60, &["cubic"]));
    let gc = col_f64(&r.flows, "goodput_bps")[0];
    assert!(
        gc < 0.2 * ceiling_bps(100e6),
        "cubic at 1.5 % loss should collapse, got {:.1} Mbit/s",
        gc / 1e6
    );
}

#[test]
fn same_seed_gives_bit_identical_series_and_different_seed_differs() {
    let scenario =
        |seed| bdp_dumbbell(seed, 50_000_000, 20, 0.5, 0.005, 8, &["cubic", "bbr1", "reno"]);
    let (_, r1) = simulate(scenario(7));
    let (_, r2) = simulate(scenario(7));
    for (name, c) in &r1.timeseries.columns {
        let c2 = r2.timeseries.get(name).unwrap();
        assert_eq!(
            c.to_le_bytes(),
            c2.to_le_bytes(),
            "column {name} differs between identical runs"
        );
    }
    let (_, r3) = simulate(scenario(8));
    assert_ne!(
        r1.timeseries.get("delivered_bytes").unwrap().to_le_bytes(),
        r3.timeseries.get("delivered_bytes").unwrap().to_le_bytes(),
        "a different seed should change the random losses"
    );
}

#[test]
fn goodput_series_integrates_to_delivered_bytes() {
    let (_, r) = simulate(wan_dumbbell(20_000_000, 30, 1.0, 0.0, 10, &["cubic", "reno"]));
    let ts = &r.timeseries;
    let gp = col_f64(ts, "goodput_bps");
    let flow = col_i32(ts, "flow");
    let delivered = col_i64(&r.flows, "delivered_bytes");
    for f in 0..2 {
        let sum_bytes: f64 =
            gp.iter().zip(&flow).filter(|(_, &fl)| fl == f).map(|(g, _)| g * 0.1 / 8.0).sum();
        assert!(
            (sum_bytes - delivered[f as usize] as f64).abs() < 1.0 + 1e-9 * sum_bytes,
            "flow {f}: {sum_bytes} vs {}",
            delivered[f as usize]
        );
    }
}

#[test]
fn queue_never_exceeds_its_buffer_and_drop_tail_drops_when_full() {
    let buffer = 100_000u64;
    let d = Dumbbell::new(100_000_000, 20 * MS, Buffer::Bytes(buffer));
    let (_, r) = simulate(common::dumbbell(
        Run::new(1, 5_000 * MS, 10 * MS),
        &d,
        &[FlowSpec::new("cubic"), FlowSpec::new("reno")],
    ));
    let maxq = col_i64(&r.queue, "max_occupancy_bytes");
    assert!(maxq.iter().all(|&q| q as u64 <= buffer), "queue above its buffer");
    let drops = col_i64(&r.queue, "drops");
    assert!(*drops.iter().max().unwrap() > 0, "loss-based flows must overflow a drop-tail queue");
}

#[test]
fn finite_transfer_completes_with_exact_bytes_and_fct_above_physics() {
    // 1 MB over 100 Mbit/s, 10 ms RTT: at least 1 RTT + serialization; slow start from IW10.
    let d = Dumbbell::new(100_000_000, 10 * MS, Buffer::Default);
    let flow = FlowSpec { bytes: Some(1_000_000), ..FlowSpec::new("cubic") };
    let (_, r) = simulate(common::dumbbell(Run::secs(1, 5), &d, &[flow]));
    let delivered = col_i64(&r.flows, "delivered_bytes")[0];
    assert_eq!(delivered, 1_000_000);
    let fct = col_f64(&r.flows, "fct_s")[0];
    let floor = 0.010 + 1_000_000.0 * 8.0 / ceiling_bps(100e6);
    assert!(fct >= floor, "fct {fct} below the physical floor {floor}");
    // Slow start from 10 segments needs ~log2(691/10) ≈ 6-7 round trips.
    assert!(fct < floor + 0.010 * 9.0, "fct {fct} too slow");
}

#[test]
fn heavy_random_loss_never_stalls_the_simulation() {
    // Regression: a paced sender whose TSQ budget was full re-armed its pacing timer at `now`
    // forever (the livelock guard turns such a stall into a panic). High loss drives BBR into
    // long RTO/Loss episodes where that happened.
    for cc in ["bbr1", "cubic", "reno"] {
        for &p in &[0.05, 0.15, 0.3] {
            let (_, r) = simulate(wan_dumbbell(100_000_000, 100, 1.0, p, 20, &[cc]));
            let g = col_f64(&r.flows, "goodput_bps")[0];
            // Whatever the algorithm, goodput cannot exceed the link's ceiling times (1 − p).
            assert!(g <= ceiling_bps(100e6) * (1.0 - p) * 1.02, "{cc} p={p}: {g}");
            assert!(r.complete, "{cc} p={p} did not complete");
        }
    }
}

#[test]
fn the_shared_wire_constants_are_the_scenario_defaults() {
    // common::MSS is the transport's default; a scenario's default mss_bytes must agree, or every
    // ceiling computed from it would be off.
    let cfg = wan_dumbbell(100_000_000, 10, 1.0, 0.0, 1, &["cubic"]);
    assert_eq!(cfg.flows[0].mss_bytes as f64, MSS_F);
    assert_eq!(
        common::WIRE,
        1538,
        "1448 payload + 52 TCP/IP with timestamps + 38 Ethernet framing"
    );
}
