//! BQL end to end on the simulator's dumbbell, against the claims of the Anhalt BQL paper (Mareev
//! et al., "Efficiency of BQL Congestion Control under High Bandwidth-Delay Product Network
//! Conditions") and against physics (the link's goodput ceiling), with BBRv1 on the same path as
//! the yardstick. Paper setting: 1 Gbit/s bottleneck, 80 MB drop-tail buffer, RTT 100 / 1000 ms,
//! random loss 1 %. Run with `cargo test --release -p bbrlab-sim --test bql -- --nocapture` to see
//! the numbers.

mod common;

use common::{
    ceiling_bps, col_f64, col_i32, col_i64, col_u8, queue_rows, Buffer, Dumbbell, FlowSpec,
};
use sim::config::Config;

const GBIT: u64 = 1_000_000_000;
/// The paper's bottleneck buffer: 80 MB drop-tail.
const BUFFER: u64 = 80_000_000;

fn config(rate_bps: u64, rtt_ms: u64, loss: f64, dur_s: u64, flows: &[&str]) -> Config {
    config_staggered(rate_bps, rtt_ms, loss, dur_s, flows, 0)
}

/// Flow i starts at i × `stagger_s`.
fn config_staggered(
    rate_bps: u64,
    rtt_ms: u64,
    loss: f64,
    dur_s: u64,
    flows: &[&str],
    stagger_s: u64,
) -> Config {
    let fl: Vec<FlowSpec> = flows
        .iter()
        .enumerate()
        .map(|(i, cc)| FlowSpec {
            start_ns: i as u64 * stagger_s * 1_000_000_000,
            ..FlowSpec::new(cc)
        })
        .collect();
    let d = Dumbbell::new(rate_bps, rtt_ms * 1_000_000, Buffer::Bytes(BUFFER)).loss(loss);
    common::dumbbell(common::Run::secs(3, dur_s), &d, &fl)
}

struct Run {
    /// Per-flow goodput over the whole run, bit/s.
    goodput: Vec<f64>,
    /// Time-weighted mean and peak occupancy of the bottleneck queue, bytes.
    mean_q: f64,
    peak_q: f64,
    /// Mean bottleneck queue over the second half of the run, bytes.
    mean_q_late: f64,
    /// Per-flow goodput over the second half of the run, bit/s.
    goodput_late: Vec<f64>,
    retrans: Vec<i64>,
    /// Bottleneck buffer-overflow drops over the run.
    drops: i64,
}

fn run(cfg: Config) -> Run {
    let r = common::run(cfg);
    let goodput = col_f64(&r.flows, "goodput_bps");
    let retrans = col_i64(&r.flows, "retransmits");
    // Bottleneck queue rows.
    let rows = queue_rows(&r, "bottleneck");
    let qt = col_f64(&r.queue, "t_s");
    let qmean = col_f64(&r.queue, "mean_occupancy_bytes");
    let qmax = col_i64(&r.queue, "max_occupancy_bytes");
    let end = rows.iter().map(|&i| qt[i]).fold(0.0, f64::max);
    let mean_q = rows.iter().map(|&i| qmean[i]).sum::<f64>() / rows.len() as f64;
    let peak_q = rows.iter().map(|&i| qmax[i] as f64).fold(0.0, f64::max);
    let drops_col = col_i64(&r.queue, "drops");
    let drops = rows.iter().map(|&i| drops_col[i]).max().unwrap_or(0);
    let late: Vec<usize> = rows.iter().copied().filter(|&i| qt[i] > end / 2.0).collect();
    let mean_q_late = late.iter().map(|&i| qmean[i]).sum::<f64>() / late.len() as f64;
    // Per-flow goodput over the second half, from the time series.
    let ts = &r.timeseries;
    let flow = col_i32(ts, "flow");
    let t = col_f64(ts, "t_s");
    let gp = col_f64(ts, "goodput_bps");
    if std::env::var("BQL_TRACE").is_ok() {
        let phase = col_u8(ts, "phase_code");
        let pr = col_f64(ts, "pacing_rate_bps");
        let bw = col_f64(ts, "bw_bps");
        let rtt = col_f64(ts, "rtt_ms");
        let qocc = col_i64(&r.queue, "occupancy_bytes");
        for i in 0..t.len() {
            let qi = rows.iter().copied().find(|&j| (qt[j] - t[i]).abs() < 1e-9).unwrap_or(0);
            eprintln!(
                "t={:6.1} f{} {:>8} gp={:7.1} pace={:7.1} bw={:7.1} rtt={:8.2} q={:9.0} qmean={:9.0}",
                t[i], flow[i], r.phase_labels[phase[i] as usize], gp[i] / 1e6, pr[i] / 1e6, bw[i] / 1e6, rtt[i],
                qocc[qi] as f64, qmean[qi]
            );
        }
    }
    let n = goodput.len();
    let mut goodput_late = vec![0.0; n];
    let mut cnt = vec![0usize; n];
    for i in 0..t.len() {
        if t[i] > end / 2.0 {
            goodput_late[flow[i] as usize] += gp[i];
            cnt[flow[i] as usize] += 1;
        }
    }
    for f in 0..n {
        goodput_late[f] /= cnt[f].max(1) as f64;
    }
    Run { goodput, mean_q, peak_q, mean_q_late, goodput_late, retrans, drops }
}

fn jain(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    let s2: f64 = x.iter().map(|v| v * v).sum();
    s * s / (x.len() as f64 * s2)
}

/// Paper Fig. 2 (1 Gbit/s, 100 ms, 80 MB): BQL 994.6 Mbit/s with a mean queue of 158 KB; BBR 705 KB.
#[test]
fn bql_fills_1g_100ms_with_a_queue_well_below_bbr1() {
    let ceil = ceiling_bps(1e9);
    let bql = run(config(GBIT, 100, 0.0, 60, &["bql"]));
    let bbr = run(config(GBIT, 100, 0.0, 60, &["bbr1"]));
    println!(
        "1 Gbit/s 100 ms: BQL {:.1} Mbit/s ({:.2} % of ceiling), mean queue {:.0} KB (2nd half {:.0} KB), peak {:.0} KB, retrans {}, drops {} | paper: 994.6 Mbit/s, 158 KB",
        bql.goodput[0] / 1e6, 100.0 * bql.goodput[0] / ceil, bql.mean_q / 1e3, bql.mean_q_late / 1e3, bql.peak_q / 1e3, bql.retrans[0], bql.drops
    );
    println!(
        "1 Gbit/s 100 ms: BBRv1 {:.1} Mbit/s ({:.2} % of ceiling), mean queue {:.0} KB (2nd half {:.0} KB), peak {:.0} KB | paper: 964.2 Mbit/s, 705 KB",
        bbr.goodput[0] / 1e6, 100.0 * bbr.goodput[0] / ceil, bbr.mean_q / 1e3, bbr.mean_q_late / 1e3, bbr.peak_q / 1e3
    );
    assert!(
        bql.goodput[0] >= 0.95 * ceil,
        "BQL goodput {:.1} Mbit/s < 95 % of {:.1}",
        bql.goodput[0] / 1e6,
        ceil / 1e6
    );
    assert!(bql.goodput[0] <= ceil * 1.0001);
    assert!(
        bql.mean_q <= 0.5 * bbr.mean_q,
        "BQL mean queue {:.0} KB not ≤ half of BBRv1's {:.0} KB",
        bql.mean_q / 1e3,
        bbr.mean_q / 1e3
    );
    // Loss is not BQL's signal, and even its Gain overshoot fits the 80 MB buffer.
    assert_eq!(bql.drops, 0, "BQL overflowed the 80 MB buffer");
}

/// Paper Fig. 3 (1 Gbit/s, 1000 ms, 80 MB): BQL 972.9 Mbit/s, queue 0.387 MB; BBR 821.6 Mbit/s, 3.6 MB.
#[test]
fn bql_keeps_90_percent_at_1000ms_rtt() {
    let ceil = ceiling_bps(1e9);
    let dur = 200;
    let bql = run(config(GBIT, 1000, 0.0, dur, &["bql"]));
    let bbr = run(config(GBIT, 1000, 0.0, dur, &["bbr1"]));
    println!(
        "1 Gbit/s 1000 ms ({dur} s): BQL {:.1} Mbit/s ({:.2} %), 2nd half {:.1} Mbit/s, mean queue {:.0} KB (2nd half {:.0} KB), peak {:.1} MB, drops {} | paper: 972.9 Mbit/s, 387 KB",
        bql.goodput[0] / 1e6, 100.0 * bql.goodput[0] / ceil, bql.goodput_late[0] / 1e6, bql.mean_q / 1e3, bql.mean_q_late / 1e3, bql.peak_q / 1e6, bql.drops
    );
    println!(
        "1 Gbit/s 1000 ms ({dur} s): BBRv1 {:.1} Mbit/s ({:.2} %), 2nd half {:.1} Mbit/s, mean queue {:.0} KB (2nd half {:.0} KB), peak {:.1} MB | paper: 821.6 Mbit/s, 3633 KB",
        bbr.goodput[0] / 1e6, 100.0 * bbr.goodput[0] / ceil, bbr.goodput_late[0] / 1e6, bbr.mean_q / 1e3, bbr.mean_q_late / 1e3, bbr.peak_q / 1e6
    );
    assert!(
        bql.goodput[0] >= 0.90 * ceil,
        "BQL goodput {:.1} Mbit/s < 90 % of {:.1}",
        bql.goodput[0] / 1e6,
        ceil / 1e6
    );
    // Stable, not decaying: the second half is at least as good.
    assert!(
        bql.goodput_late[0] >= 0.95 * ceil,
        "BQL 2nd-half goodput {:.1} Mbit/s",
        bql.goodput_late[0] / 1e6
    );
    // The paper's claim: a queue of the order of a few hundred KB, not MB, once in Control.
    assert!(
        bql.mean_q_late <= 1_000_000.0,
        "BQL 2nd-half mean queue {:.0} KB",
        bql.mean_q_late / 1e3
    );
    // Gain overshoots by ~0.5 BDP at 1 s (a smooth doubling stopped at the first signal): that
    // must fit the paper's 80 MB buffer (0.64 BDP here) — no congestion drop at all.
    assert_eq!(bql.drops, 0, "BQL overflowed the 80 MB buffer (peak {:.1} MB)", bql.peak_q / 1e6);
}

/// Paper Fig. 5 (1 Gbit/s, PLR 1 %): losses are not a congestion signal for BQL.
#[test]
fn bql_keeps_90_percent_under_1_percent_random_loss() {
    let ceil = ceiling_bps(1e9);
    let bql = run(config(GBIT, 100, 0.01, 60, &["bql"]));
    println!(
        "1 Gbit/s 100 ms 1 % loss: BQL {:.1} Mbit/s ({:.2} % of ceiling), mean queue {:.0} KB, retrans {}",
        bql.goodput[0] / 1e6, 100.0 * bql.goodput[0] / ceil, bql.mean_q / 1e3, bql.retrans[0]
    );
    assert!(
        bql.goodput[0] >= 0.90 * ceil,
        "BQL at 1 % loss: {:.1} Mbit/s < 90 % of {:.1}",
        bql.goodput[0] / 1e6,
        ceil / 1e6
    );
}

/// Two BQL flows on one bottleneck: each keeps its own share of the queue at Q*, so the rates
/// equalise — also when the second joins 10 s later, after the first has settled in Control.
#[test]
fn two_bql_flows_share_fairly() {
    for stagger in [0u64, 10] {
        two_flows(stagger);
    }
}

fn two_flows(stagger_s: u64) {
    let ceil = ceiling_bps(1e9);
    let r = run(config_staggered(GBIT, 100, 0.0, 60, &["bql", "bql"], stagger_s));
    let j = jain(&r.goodput_late);
    let total: f64 = r.goodput_late.iter().sum();
    println!(
        "2 × BQL 1 Gbit/s 100 ms, 2nd starts at {stagger_s} s: 2nd half {:.1} + {:.1} Mbit/s = {:.1} ({:.1} % of ceiling), Jain {:.4}, mean queue {:.0} KB (2nd half {:.0} KB)",
        r.goodput_late[0] / 1e6, r.goodput_late[1] / 1e6, total / 1e6, 100.0 * total / ceil, j, r.mean_q / 1e3, r.mean_q_late / 1e3
    );
    assert!(j >= 0.9, "Jain index {j:.3} over the second half");
    assert!(total >= 0.9 * ceil, "aggregate {:.1} Mbit/s", total / 1e6);
}
