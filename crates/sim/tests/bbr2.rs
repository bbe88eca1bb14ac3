//! BBRv2 (v2alpha) and bbr2_new end to end on the simulator, checked against physics and against
//! the published claims they are meant to reproduce (the Google BBRv2 slides).

mod common;

use common::{
    assert_fills_clean_link, ceiling_bps, col_num, mean, retrans_rate, run, sum, Dumbbell,
    FlowSpec, Marking, Run,
};
use sim::config::Config;

/// A dumbbell with `buffer_bdp` of the bottleneck BDP as drop-tail buffer (and 50 Gbit/s access
/// links above 1 Gbit/s, so that the senders' NICs never limit).
fn dumbbell(
    rate_bps: u64,
    rtt_ns: u64,
    buffer_bdp: f64,
    dur_s: u64,
    flows: &[FlowSpec],
    marking: Marking,
) -> Config {
    let mut d = Dumbbell::with_bdp_buffer(rate_bps, rtt_ns, buffer_bdp).marking(marking);
    if rate_bps > 1_000_000_000 {
        d = d.access_rate(50_000_000_000);
    }
    common::dumbbell(Run::secs(7, dur_s), &d, flows)
}

#[test]
fn one_bbr2_flow_fills_a_clean_link_to_95_percent_of_the_goodput_ceiling() {
    for cc in ["bbr2", "bbr2_new"] {
        let r =
            run(dumbbell(100_000_000, 40_000_000, 1.0, 60, &[FlowSpec::new(cc)], Marking::None));
        assert_fills_clean_link(cc, col_num(&r.flows, "goodput_bps")[0], 100e6);
    }
}

/// Google BBRv2 slides / IETF 104–105: "Much lower loss rates for cases where bottleneck queue <
/// 1.5·BDP".
#[test]
fn ten_flows_in_a_tiny_buffer_bbr2_retransmits_far_less_than_bbr1() {
    let mut rates = Vec::new();
    for cc in ["bbr2", "bbr1"] {
        let r = run(dumbbell(
            1_000_000_000,
            40_000_000,
            0.02,
            30,
            &common::flows(cc, 10),
            Marking::None,
        ));
        let good = sum(&col_num(&r.flows, "goodput_bps"));
        let rate = retrans_rate(&r);
        println!(
            "{cc}: 10 flows, 0.02 BDP buffer: retrans rate {:.3} %, aggregate goodput {:.1} Mbit/s, mean RTT {:.2} ms",
            rate * 100.0,
            good / 1e6,
            mean(&col_num(&r.flows, "rtt_mean_ms"))
        );
        rates.push(rate);
    }
    let (v2, v1) = (rates[0], rates[1]);
    assert!(v2 <= 0.05, "bbr2 retransmission rate {:.2} % > 5 %", v2 * 100.0);
    assert!(v1 >= 2.0 * v2, "bbr1 {:.2} % is not ≥ 2× bbr2 {:.2} %", v1 * 100.0, v2 * 100.0);
}

/// The Google BBRv2 slides' many-flows experiment, scaled down: DCTCP-style marking (CE iff queue >
/// 80 KB), N = 100 ECN flows from two sender hosts; bbr2_new must not queue or retransmit more than
/// bbr2.
#[test]
fn many_ecn_flows_bbr2_new_keeps_rtt_and_retransmissions_no_higher_than_bbr2() {
    let mut out = Vec::new();
    for cc in ["bbr2", "bbr2_new"] {
        let f: Vec<FlowSpec> = (0..100)
            .map(|i| FlowSpec { ecn: true, sender: Some(i % 2), ..FlowSpec::new(cc) })
            .collect();
        let r =
            run(dumbbell(10_000_000_000, 100_000, 10.0, 5, &f, Marking::ThresholdBytes(80_000)));
        let sent = sum(&col_num(&r.flows, "data_packets_sent"));
        let retr = sum(&col_num(&r.flows, "retransmits"));
        let ce = sum(&col_num(&r.flows, "ce_packets"));
        let thr = sum(&col_num(&r.flows, "goodput_bps"));
        let rtt = mean(&col_num(&r.flows, "rtt_mean_ms"));
        let p95 = mean(&col_num(&r.flows, "rtt_p95_ms"));
        println!(
            "{cc}: N=100 throughput {:.2} Gbit/s, retrans {:.3} %, RTT mean {:.3} ms, p95 {:.3} ms (flow means), CE {:.0} pkts = {:.1} % of sent",
            thr / 1e9,
            retr / sent * 100.0,
            rtt,
            p95,
            ce,
            ce / sent * 100.0
        );
        out.push((thr, retr / sent, rtt, p95));
    }
    let (old, new) = (out[0], out[1]);
    assert!(new.2 <= old.2, "bbr2_new mean RTT {:.3} ms > bbr2 {:.3} ms", new.2, old.2);
    assert!(
        new.1 <= old.1,
        "bbr2_new retrans {:.3} % > bbr2 {:.3} %",
        new.1 * 100.0,
        old.1 * 100.0
    );
    // Both still use the link (the slides: "All variants have similar throughputs").
    let ceil = ceiling_bps(10e9);
    assert!(
        new.0 >= 0.8 * ceil && old.0 >= 0.8 * ceil,
        "throughput {:.2} / {:.2} Gbit/s",
        old.0 / 1e9,
        new.0 / 1e9
    );
}
