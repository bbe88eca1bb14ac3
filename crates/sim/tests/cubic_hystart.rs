//! CUBIC's slow-start exit end to end: Linux's classic HyStart (`cubic`, as `tcp_cubic.c`) and
//! RFC 9406 HyStart++ (`cubic_hspp`), checked against what Linux's HyStart rules imply on two
//! paths that were measured with the kernel:
//!
//! - 2.5 Gbit/s, 140 ms, 1000-packet queue, 6 MiB receive buffer, 30 s (kernel cubic:
//!   347 Mbit/s, near the receive-window limit 6 MiB / 140 ms ≈ 359 Mbit/s).
//! - 500 Mbit/s, 10 ms, 1000-packet queue (kernel cubic left slow start much earlier than
//!   bbrlab's HyStart++ cubic).
//!
//! Linux's rules (hystart_update): the ACK train exits once a round's ACKs, no more than 2 ms
//! apart, span more than delay_min/2 (unpaced; delay_min + ≤ 1 ms when paced); the delay detector
//! needs the round's minimum RTT above delay_min + clamp(delay_min/8, 4 ms, 16 ms).

mod common;

use common::{ceiling_bps, col_f64, col_i64, Buffer, Dumbbell, FlowSpec, MSS_F, WIRE_F};
use sim::config::Config;

const SAMPLE_NS: u64 = 10_000_000;

struct Path {
    rate_bps: u64,
    rtt_ns: u64,
    buffer_pkts: u64,
    rcvbuf_bytes: Option<u64>,
    /// Force pacing (Linux with the fq qdisc, `sk_pacing_status = SK_PACING_FQ`); None = the
    /// algorithm decides (CUBIC does not pace).
    pacing: Option<bool>,
    duration_s: u64,
}

const LONG_FAT: Path = Path {
    rate_bps: 2_500_000_000,
    rtt_ns: 140_000_000,
    buffer_pkts: 1000,
    rcvbuf_bytes: Some(6_291_456), // 6 MiB
    pacing: None,
    duration_s: 30,
};

fn scenario(p: &Path, cc: &str) -> Config {
    let d = Dumbbell::new(p.rate_bps, p.rtt_ns, Buffer::Packets(p.buffer_pkts))
        .access_rate(10_000_000_000);
    let flow = FlowSpec { rcvbuf_bytes: p.rcvbuf_bytes, pacing: p.pacing, ..FlowSpec::new(cc) };
    common::dumbbell(common::Run::new(1, p.duration_s * 1_000_000_000, SAMPLE_NS), &d, &[flow])
}

struct Outcome {
    goodput_bps: f64,
    retransmits: i64,
    drops_total: i64,
    /// First sample with a finite ssthresh (slow start over): (t_s, ssthresh, bottleneck drops
    /// so far, retransmits so far). None = still in slow start at the end.
    ss_exit: Option<(f64, i64, i64, i64)>,
}

fn run(p: &Path, cc: &str) -> Outcome {
    let r = common::run(scenario(p, cc));
    assert_eq!(r.cc_labels, vec![cc.to_string()], "Cc::name must be the scenario name");
    let goodput_bps = col_f64(&r.flows, "goodput_bps")[0];
    let retransmits = col_i64(&r.flows, "retransmits")[0];

    let ts_t = col_f64(&r.timeseries, "t_s");
    let ssthresh = col_i64(&r.timeseries, "ssthresh_pkts");
    let ts_retrans = col_i64(&r.timeseries, "retransmits");
    // Bottleneck drops (cumulative) by sample time.
    let q_t = col_f64(&r.queue, "t_s");
    let q_code = r.queue.get("queue_code").and_then(|c| c.as_codes()).expect("queue_code");
    let q_drops = col_i64(&r.queue, "drops");
    let bottleneck =
        r.queue_labels.iter().position(|l| l == "bottleneck").expect("bottleneck queue");
    let drops_at = |t: f64| -> i64 {
        (0..q_t.len())
            .filter(|&i| q_code[i] == bottleneck && q_t[i] <= t + 1e-9)
            .map(|i| q_drops[i])
            .max()
            .unwrap_or(0)
    };
    let ss_exit = ssthresh
        .iter()
        .position(|&x| x >= 0)
        .map(|i| (ts_t[i], ssthresh[i], drops_at(ts_t[i]), ts_retrans[i]));
    Outcome { goodput_bps, retransmits, drops_total: drops_at(f64::INFINITY), ss_exit }
}

fn show(label: &str, o: &Outcome, limit_bps: f64) {
    let exit = match o.ss_exit {
        Some((t, ss, d, r)) => {
            format!("slow start over at {t:.2} s, ssthresh {ss} pkts (bottleneck drops by then {d}, retransmits {r})")
        }
        None => "never left slow start".into(),
    };
    println!(
        "{label:>22}: goodput {:.1} Mbit/s ({:.1} % of {:.1} Mbit/s), {exit}; drops {}, retransmits {}",
        o.goodput_bps / 1e6,
        100.0 * o.goodput_bps / limit_bps,
        limit_bps / 1e6,
        o.drops_total,
        o.retransmits
    );
}

/// Receive-window limit of the long fat path: one 6 MiB window per base RTT, payload bits/s.
fn window_limit_bps(p: &Path) -> f64 {
    p.rcvbuf_bytes.unwrap() as f64 * 8.0 / (p.rtt_ns as f64 / 1e9)
}

/// On the long fat path, unpaced, neither of Linux's detectors can fire before the queue
/// overflows: the ACK train must span > 70 ms = delay_min/2 of bottleneck-spaced ACKs, i.e. a
/// round of > 14 000 segments at 2.5 Gbit/s, but the 6 MiB window caps flight at ≈ 4345 segments
/// (≈ 21 ms of ACKs); the delay detector needs a 16 ms rise (clamp(140/8 ms, 4, 16)) and the
/// 1000-packet queue adds at most 4.9 ms. Unpaced slow start doubles in bursts at twice the
/// bottleneck rate and overflows the queue; so slow start must end with a loss, not a spurious
/// HyStart exit. (The kernel's 347 Mbit/s on this path is reproduced by the paced test below.)
#[test]
fn long_fat_path_unpaced_no_detector_can_fire_before_overflow() {
    let p = &LONG_FAT;
    let limit = window_limit_bps(p);
    let linux = run(p, "cubic");
    show("cubic, unpaced", &linux, limit);
    let hspp = run(p, "cubic_hspp");
    show("cubic_hspp, unpaced", &hspp, limit);
    let (_, ssthresh, drops, retrans) =
        linux.ss_exit.expect("slow start must end (by loss) within 30 s");
    assert!(
        drops > 0 && retrans > 0,
        "cubic: slow start ended before any loss, which Linux's rules cannot do here"
    );
    // The loss came at a window the queue could not absorb, not beyond what the window allowed:
    // ssthresh = 0.7 · cwnd at loss ≤ 0.7 · 2 · (window cap) (cwnd grows to 2·max_packets_out).
    let rwnd_segs = p.rcvbuf_bytes.unwrap() as f64 / MSS_F;
    assert!((ssthresh as f64) <= 0.7 * 2.0 * rwnd_segs + 1.0, "ssthresh {ssthresh}");
}

/// The same path with the sender paced, as Linux paces under the fq qdisc (`SK_PACING_FQ`): slow
/// start at 2·cwnd/RTT never exceeds the bottleneck (2 · 4345 segments / 140 ms ≈ 0.76 Gbit/s),
/// so no queue builds, nothing is lost, and the flow runs at the receive-window limit. This is
/// the kernel's 347 Mbit/s. Linux's HyStart must not fire either: the paced ACK-train threshold is
/// delay_min + ≤ 1 ms, and a window-limited round's ACKs span far less.
#[test]
fn long_fat_path_paced_reaches_the_receive_window_limit_without_loss() {
    let p = &Path { pacing: Some(true), ..LONG_FAT };
    let limit = window_limit_bps(p);
    let linux = run(p, "cubic");
    show("cubic, paced", &linux, limit);
    let hspp = run(p, "cubic_hspp");
    show("cubic_hspp, paced", &hspp, limit);
    assert_eq!(linux.drops_total, 0, "cubic: buffer overflow");
    assert_eq!(linux.retransmits, 0, "cubic: retransmissions");
    assert!(
        linux.goodput_bps >= 0.8 * limit,
        "cubic: {:.1} Mbit/s < 80 % of the window limit {:.1} Mbit/s",
        linux.goodput_bps / 1e6,
        limit / 1e6
    );
}

/// 500 Mbit/s, 10 ms, 1000-packet queue, unpaced: here the ACK train fits in a round. A round's
/// ACKs arrive spaced by the bottleneck, so the train passes delay_min/2 = 5 ms once a round
/// carries more than half the BDP; slow start adds one segment per segment acked, so at the exit
/// cwnd lies between BDP/2 and 1.5·BDP — well before the queue (BDP + 1000 packets) overflows.
/// Hence: slow start ends with no loss and ssthresh = cwnd in [BDP/2, 1.5·BDP].
#[test]
fn short_path_ack_train_exits_slow_start_near_the_bdp_before_any_loss() {
    let p = &Path {
        rate_bps: 500_000_000,
        rtt_ns: 10_000_000,
        buffer_pkts: 1000,
        rcvbuf_bytes: None,
        pacing: None,
        duration_s: 5,
    };
    let bdp_segs = p.rate_bps as f64 * (p.rtt_ns as f64 / 1e9) / 8.0 / WIRE_F;
    let ceiling = ceiling_bps(p.rate_bps as f64);
    let linux = run(p, "cubic");
    show("cubic, 500M/10ms", &linux, ceiling);
    let hspp = run(p, "cubic_hspp");
    show("cubic_hspp, 500M/10ms", &hspp, ceiling);
    let (t, ssthresh, drops, retrans) = linux.ss_exit.expect("slow start must end");
    assert_eq!((drops, retrans), (0, 0), "cubic: slow start ended by loss at {t} s");
    let ss = ssthresh as f64;
    assert!(
        ss >= 0.5 * bdp_segs && ss <= 1.5 * bdp_segs,
        "cubic: ssthresh {ssthresh} outside [BDP/2, 1.5 BDP] with BDP {bdp_segs:.0} segments"
    );
}
