//! DCTCP, switch ECN marking (step K, RED) and ICTCP, checked against what the papers and RFCs
//! promise, end to end through the simulator.

mod common;

use common::{
    ceiling_bps, col_f64, col_i64, queue_rows, run, Buffer, Dumbbell, FlowSpec, Marking, Run,
    WIRE_F,
};
use sim::config::Config;

/// Rows of the queue table for the bottleneck, after `from_s`: (mean occupancy bytes, max
/// occupancy bytes, utilization).
fn bottleneck_rows(r: &sim::Results, from_s: f64) -> Vec<(f64, f64, f64)> {
    let q = &r.queue;
    let t = col_f64(q, "t_s");
    let mean = col_f64(q, "mean_occupancy_bytes");
    let max = col_i64(q, "max_occupancy_bytes");
    let util = col_f64(q, "utilization");
    queue_rows(r, "bottleneck")
        .into_iter()
        .filter(|&i| t[i] > from_s)
        .map(|i| (mean[i], max[i] as f64, util[i]))
        .collect()
}

fn last_bottleneck(r: &sim::Results, col: &str) -> i64 {
    let v = col_i64(&r.queue, col);
    queue_rows(r, "bottleneck").last().map(|&i| v[i]).unwrap()
}

/// 10 Gbit/s, 100 µs, buffer ≫ K, `n` flows of `cc`.
fn dc_bulk(cc: &str, ecn: bool, n: usize, marking: Marking, buffer_pkts: u64) -> Config {
    let d = Dumbbell::new(10_000_000_000, 100_000, Buffer::Packets(buffer_pkts)).marking(marking);
    common::dumbbell(
        Run::new(3, 2_000_000_000, 10_000_000),
        &d,
        &vec![FlowSpec { ecn, ..FlowSpec::new(cc) }; n],
    )
}

/// DCTCP paper §3.4 / RFC 8257: with K ≈ 65 packets at 10 Gbit/s the queue stays around K and
/// the link stays full. Measured after a 100 ms warm-up.
#[test]
fn dctcp_holds_the_queue_near_k_at_full_utilization_and_cubic_does_not() {
    let k_pkts = 65u64;
    let k_bytes = k_pkts as f64 * WIRE_F;
    let marking = Marking::ThresholdPackets(k_pkts);
    let r = run(dc_bulk("dctcp", true, 10, marking, 1000));
    let rows = bottleneck_rows(&r, 0.1);
    let mean_q = rows.iter().map(|x| x.0).sum::<f64>() / rows.len() as f64;
    let max_q = rows.iter().map(|x| x.1).fold(0.0, f64::max);
    let util = rows.iter().map(|x| x.2).sum::<f64>() / rows.len() as f64;
    let goodput: f64 = col_f64(&r.flows, "goodput_bps").iter().sum();
    let ceiling = ceiling_bps(10e9);
    let marks = last_bottleneck(&r, "ce_marks");
    let drops = last_bottleneck(&r, "drops");
    let alpha: Vec<f64> = col_f64(&r.timeseries, "ecn_alpha");
    let mean_alpha =
        alpha.iter().skip(alpha.len() / 2).sum::<f64>() / (alpha.len() - alpha.len() / 2) as f64;
    println!(
        "dctcp: K = {k_pkts} pkts = {:.0} KB; mean queue {:.1} KB ({:.2} K), max {:.1} KB; utilization {:.4}; \
         goodput {:.3} Gbit/s = {:.2} % of the {:.3} Gbit/s ceiling; CE marks {marks}, drops {drops}, mean alpha {mean_alpha:.3}",
        k_bytes / 1e3,
        mean_q / 1e3,
        mean_q / k_bytes,
        max_q / 1e3,
        util,
        goodput / 1e9,
        100.0 * goodput / ceiling,
        ceiling / 1e9
    );
    assert!(
        mean_q >= 0.3 * k_bytes && mean_q <= 2.0 * k_bytes,
        "mean queue {:.1} KB vs K {:.1} KB",
        mean_q / 1e3,
        k_bytes / 1e3
    );
    assert!(util >= 0.95, "bottleneck utilization {util:.4}");
    assert!(goodput >= 0.95 * ceiling, "goodput {:.3} Gbit/s", goodput / 1e9);
    assert!(marks > 0);
    assert_eq!(drops, 0, "DCTCP with buffer ≫ K should not overflow the buffer");
    assert!(mean_alpha > 0.0 && mean_alpha < 0.5, "alpha {mean_alpha}: small, not Reno's 1");

    // CUBIC (no ECN) on the same link fills the buffer instead.
    let rc = run(dc_bulk("cubic", false, 10, marking, 1000));
    let rows_c = bottleneck_rows(&rc, 0.1);
    let mean_c = rows_c.iter().map(|x| x.0).sum::<f64>() / rows_c.len() as f64;
    let util_c = rows_c.iter().map(|x| x.2).sum::<f64>() / rows_c.len() as f64;
    println!(
        "cubic: mean queue {:.1} KB ({:.1}× DCTCP's), utilization {util_c:.4}",
        mean_c / 1e3,
        mean_c / mean_q
    );
    assert!(
        mean_c >= 3.0 * mean_q,
        "cubic mean queue {:.1} KB vs dctcp {:.1} KB",
        mean_c / 1e3,
        mean_q / 1e3
    );
}

/// K in bytes and K in packets are the same threshold for full-sized packets.
#[test]
fn k_in_bytes_and_k_in_packets_agree_for_full_segments() {
    let by_pkts = run(dc_bulk("dctcp", true, 4, Marking::ThresholdPackets(40), 1000));
    // q_bytes > 40.5 full frames  ⟺  more than 40 packets waiting.
    let by_bytes =
        run(dc_bulk("dctcp", true, 4, Marking::ThresholdBytes((40.5 * WIRE_F) as u64), 1000));
    let m1 = last_bottleneck(&by_pkts, "ce_marks");
    let m2 = last_bottleneck(&by_bytes, "ce_marks");
    println!("marks with K = 40 pkts: {m1}; with K = 40.5 frames in bytes: {m2}");
    assert!(m1 > 0);
    assert_eq!(m1, m2, "the two thresholds should mark the same packets");
}

/// RED (Floyd & Jacobson 1993) on the bottleneck: ECN-capable flows are marked, not dropped, and
/// the averaged queue is held between the thresholds; non-ECN flows are dropped early instead,
/// long before the (much larger) buffer fills.
#[test]
fn red_marks_ect_and_drops_the_rest_holding_the_queue_between_the_thresholds() {
    let (min_th, max_th, max_p) = (60_000u64, 180_000u64, 0.1);
    let red = Marking::Red { min_th_bytes: min_th, max_th_bytes: max_th, max_p, weight: 0.002 };
    let mut fractions = Vec::new();
    for n in [2usize, 16] {
        let r = run(dc_bulk("reno", true, n, red, 2000));
        let rows = bottleneck_rows(&r, 0.2);
        let mean_q = rows.iter().map(|x| x.0).sum::<f64>() / rows.len() as f64;
        let util = rows.iter().map(|x| x.2).sum::<f64>() / rows.len() as f64;
        let marks = last_bottleneck(&r, "ce_marks") as f64;
        let drops = last_bottleneck(&r, "drops");
        let pkts = last_bottleneck(&r, "tx_bytes") as f64 / WIRE_F;
        let frac = marks / pkts;
        println!(
            "RED, {n} ECN reno flows: mean queue {:.1} KB (thresholds {:.0}–{:.0} KB), marked {:.4} of packets, drops {drops}, utilization {util:.3}",
            mean_q / 1e3,
            min_th as f64 / 1e3,
            max_th as f64 / 1e3,
            frac
        );
        assert_eq!(drops, 0, "ECT packets are marked, not dropped");
        assert!(marks > 0.0);
        // The queue settles on the ramp, below max_th (the buffer is 3 MB).
        assert!(
            mean_q > 0.5 * min_th as f64 && mean_q < max_th as f64,
            "mean queue {:.1} KB",
            mean_q / 1e3
        );
        // Below max_th the count-spaced marking acts on about 2·p_b ≤ 2·max_p of the packets.
        assert!(frac < 2.0 * max_p, "marked fraction {frac}");
        fractions.push(frac);
    }
    // More flows need a higher marking rate (each needs its own marks to hold its window): the
    // ramp is climbed.
    assert!(fractions[1] > 2.0 * fractions[0], "marking fractions {fractions:?}");

    let r = run(dc_bulk("reno", false, 16, red, 2000));
    let rows = bottleneck_rows(&r, 0.2);
    let mean_q = rows.iter().map(|x| x.0).sum::<f64>() / rows.len() as f64;
    let max_q = rows.iter().map(|x| x.1).fold(0.0, f64::max);
    let drops = last_bottleneck(&r, "drops");
    let marks = last_bottleneck(&r, "ce_marks");
    println!("RED, 16 non-ECN reno flows: mean queue {:.1} KB, max {:.1} KB, drops {drops}, marks {marks}", mean_q / 1e3, max_q / 1e3);
    assert_eq!(marks, 0, "non-ECT packets cannot be marked");
    assert!(drops > 0);
    assert!(max_q < 2000.0 * WIRE_F * 0.5, "early drops keep the queue far from the 3 MB buffer");
}

/// Incast: `n` synchronized senders each send `bytes` to one receiver behind a 1 Gbit/s link with
/// a shallow buffer. Returns (total drops, total RTOs, completion time of the last flow, s).
fn incast(
    cc: &str,
    n: usize,
    bytes: u64,
    buffer_bytes: u64,
    window: &'static str,
) -> (i64, i64, f64) {
    let d = Dumbbell::new(1_000_000_000, 100_000, Buffer::Bytes(buffer_bytes))
        .access_rate(1_000_000_000);
    let flow = FlowSpec { bytes: Some(bytes), receiver_window: Some(window), ..FlowSpec::new(cc) };
    let r = run(common::dumbbell(Run::new(5, 5_000_000_000, 10_000_000), &d, &vec![flow; n]));
    let drops: i64 = col_i64(&r.flows, "lost_packets").iter().sum();
    let rtos: i64 = col_i64(&r.flows, "rto_count").iter().sum();
    let fct = col_f64(&r.flows, "fct_s");
    assert!(fct.iter().all(|x| x.is_finite()), "{cc}/{window}: not every flow completed: {fct:?}");
    (drops, rtos, fct.iter().cloned().fold(0.0, f64::max))
}

/// ICTCP (Wu et al., CoNEXT 2010): receiver-window control keeps incast free of drops and
/// timeouts, where the senders' own congestion control overflows the buffer and times out.
#[test]
fn ictcp_receiver_windows_prevent_incast_drops_and_timeouts() {
    for (n, bytes, buffer) in [(24usize, 128 * 1024u64, 128 * 1024u64), (16, 64 * 1024, 64 * 1024)]
    {
        // Ideal: every frame back to back at the link rate, plus one base RTT.
        let full = bytes / common::MSS;
        let tail = bytes - full * common::MSS;
        let wire_bytes = full as f64 * WIRE_F
            + if tail > 0 { (tail + common::FRAME_OVERHEAD) as f64 } else { 0.0 };
        let ideal = n as f64 * wire_bytes * 8.0 / 1e9 + 100e-6;
        for cc in ["reno", "cubic"] {
            let (d0, r0, t0) = incast(cc, n, bytes, buffer, "static");
            let (d1, r1, t1) = incast(cc, n, bytes, buffer, "ictcp");
            println!(
                "incast {n} × {} KB into 1 Gbit/s, {} KB buffer, {cc}: static rwnd: drops {d0}, RTOs {r0}, completion {:.2} ms; \
                 ICTCP: drops {d1}, RTOs {r1}, completion {:.2} ms; ideal {:.2} ms",
                bytes / 1024,
                buffer / 1024,
                t0 * 1e3,
                t1 * 1e3,
                ideal * 1e3
            );
            assert!(
                d0 > 0 && r0 > 0,
                "{cc} alone should suffer incast drops and timeouts (drops {d0}, RTOs {r0})"
            );
            assert_eq!(r1, 0, "{cc} with ICTCP: RTOs");
            assert!(d1 <= 2, "{cc} with ICTCP: {d1} drops");
            assert!(
                t1 >= ideal * 0.999,
                "faster than the link allows: {:.3} ms < {:.3} ms",
                t1 * 1e3,
                ideal * 1e3
            );
            assert!(
                t1 <= 1.25 * ideal,
                "{cc} with ICTCP: completion {:.2} ms vs ideal {:.2} ms",
                t1 * 1e3,
                ideal * 1e3
            );
            assert!(t1 < t0, "ICTCP should finish before the timeouts do");
        }
    }
}
