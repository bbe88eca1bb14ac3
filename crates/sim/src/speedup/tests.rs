//! The speed-ups change nothing: timestamped links, folded router hops and timestamped sender
//! NICs against the event-driven model, over whole runs (the same result tables, fewer
//! events), and a timestamped link's replayed queue against what it was fed.

use crate::speedup::ahead::Ahead;
use crate::*;
use transport::Packet;

/// What a finished run must reproduce whichever speed-ups it used: the result tables (as text),
/// the events, the data packets delivered and the TSQ wake-ups (packets must be conserved).
pub(super) fn run_outcome(sim: &mut Simulation) -> Outcome {
    sim.check_conservation().unwrap();
    let r = sim.results();
    (
        format!("{:?} {:?} {:?}", r.flows, r.timeseries, r.queue),
        r.events,
        r.data_packets_delivered,
        sim.tsq_wakeups,
    )
}

/// A run's result tables (as text), events, data packets delivered and TSQ wake-ups.
pub(super) type Outcome = (String, u64, u64, u64);

/// A scenario run sped up (`run(true)`) and event-driven (`run(false)`): the sped-up run
/// changed nothing. It moves data (more than `min_packets` delivered), with the same result
/// tables and packets delivered as the event-driven one. Returns both outcomes.
pub(crate) fn sped_up_changes_nothing(
    run: impl Fn(bool) -> Outcome,
    min_packets: u64,
    what: &str,
) -> (Outcome, Outcome) {
    let (fast, slow) = (run(true), run(false));
    assert!(fast.2 > min_packets, "the scenario moves data: {}", fast.2);
    assert!(fast.0 == slow.0, "result tables differ: {what}");
    assert_eq!(fast.2, slow.2, "packets delivered: {what}");
    (fast, slow)
}

/// The sped-up run saved at least `num / den` events per data packet delivered.
pub(crate) fn assert_saves_events(fast: &Outcome, slow: &Outcome, (num, den): (u64, u64)) {
    assert!(
        fast.1 + fast.2 * num / den < slow.1,
        "fewer events: {} vs {} for {} packets",
        fast.1,
        slow.1,
        fast.2
    );
}

/// A 1 Gbit/s, 10 ms dumbbell with a 100 kB buffer; `extra` is spliced into the bottleneck.
fn dumbbell(flows: &str, extra: &str) -> Simulation {
    dumbbell_buffer(flows, r#"{"bytes":100000}"#, extra)
}

fn dumbbell_buffer(flows: &str, buffer: &str, extra: &str) -> Simulation {
    Simulation::from_json(&format!(
        r#"{{"seed":3,"duration_ns":2000000000,"sample_interval_ns":10000000,
            "topology":{{"kind":"dumbbell","bottleneck":{{"rate_bps":1000000000,"rtt_ns":10000000,
            "buffer":{buffer}{extra}}}}},"flows":[{flows}]}}"#
    ))
    .unwrap()
}

fn data(wire_bytes: u32) -> Packet {
    Packet { is_data: true, wire_bytes, ..Packet::empty(0) }
}

#[test]
fn a_timestamped_link_delivers_in_order_at_departure_plus_delay() {
    let mut sim = dumbbell(r#"{"cc":"cubic"}"#, "");
    let nic = sim.flows[0].data_path.first();
    let bn = sim.flows[0].data_path.links[1];
    // A sender NIC without propagation delay is timestamped too, but never folds: each of
    // its departures is an event, which TSQ sees.
    assert!(sim.links[nic as usize].fast.timestamped && !sim.links[nic as usize].fast.fold);
    assert!(sim.links[bn as usize].fast.timestamped);
    // The bottleneck folds into the receiver's access link (`fold_into_next`); here its own
    // pipe is under test.
    assert!(sim.links[bn as usize].fast.fold);
    sim.links[bn as usize].fast.fold = false;
    // Three 1500-byte packets at t = 0 serialize back to back, 12 µs each at 1 Gbit/s.
    for _ in 0..3 {
        sim.enqueue(bn, data(1500));
    }
    let link = &sim.links[bn as usize];
    let arrivals: Vec<Nanos> = link.pipe.iter().map(|&(t, _)| t).collect();
    assert_eq!(arrivals, vec![12_000 + 5_000_000, 24_000 + 5_000_000, 36_000 + 5_000_000]);
    assert_eq!((link.q_bytes, link.waiting_pkts()), (3000, 2));
    // Only the pipe's head has an event: the arrival of the first packet.
    assert_eq!(
        sim.heap
            .iter()
            .map(|k| EventKey(k).event())
            .filter(|e| e.kind == EvKind::Arrive && e.id == bn)
            .count(),
        1
    );
    // At 20 µs the first has left, the second serializes since 12 µs and the third waits;
    // the queue is replayed on read.
    sim.now = 20_000;
    sim.links[bn as usize].replay(20_000, 0);
    let link = &sim.links[bn as usize];
    assert_eq!((link.q_bytes, link.waiting_pkts(), link.stats.tx_bytes), (1500, 1, 1500));
    assert_eq!(link.serving_since(), Some(12_000));
    // At 36 µs all three have left; the link is idle from then on.
    sim.links[bn as usize].replay(36_000, 0);
    let link = &sim.links[bn as usize];
    assert_eq!((link.q_bytes, link.waiting_pkts(), link.stats.tx_bytes), (0, 0, 4500));
    assert!(link.is_idle(36_000) && link.serving_since().is_none());
}

#[test]
fn a_timestamped_link_drops_at_its_tail_and_conserves_packets() {
    let mut sim = dumbbell(r#"{"cc":"cubic"}"#, "");
    let bn = sim.flows[0].data_path.links[1];
    sim.links[bn as usize].fast.fold = false;
    // One packet serializes at once; 66 × 1500 B fit in the 100 kB buffer behind it.
    for _ in 0..100 {
        sim.enqueue(bn, data(1500));
    }
    let link = &sim.links[bn as usize];
    assert_eq!((link.stats.drops, link.pipe.len(), link.q_bytes), (33, 67, 66 * 1500));
    assert_eq!(sim.flows[0].data_dropped, 33);
}

/// Run `sim` to its end with its links timestamped and folded as built, or not; returns the
/// result tables (as text), the events and the data packets delivered.
fn run_with(mut sim: Simulation, timestamped: bool, fold: bool) -> (String, u64, u64) {
    assert!(
        sim.links.iter().any(|l| l.fast.fold),
        "the dumbbell folds its receivers' access links"
    );
    if !timestamped {
        // (Nothing is served ahead either: that needs passive, timestamped links.)
        without_lazy_nics(&mut sim);
        sim.links.iter_mut().for_each(|l| {
            l.fast.set_timestamped(false);
            (l.fast.passive, l.fast.ahead) = (false, Ahead::No);
            l.fast.nic_flow = crate::speedup::NO_FLOW;
        });
        sim.rx_ahead_on = false;
    }
    if !fold {
        sim.links.iter_mut().for_each(|l| l.fast.fold = false);
    }
    sim.run_until(u64::MAX);
    let (tables, events, delivered, _) = run_outcome(&mut sim);
    (tables, events, delivered)
}

/// The whole run three ways — every link event-driven; timestamped links; timestamped links
/// with folded router hops (the default) — the same packets at the same times, so the same
/// result tables (ties at one nanosecond aside, which these scenarios do not have).
fn same_results_both_ways(flows: &str, buffer: &str, extra: &str) {
    let run = |timestamped: bool, fold: bool| {
        run_with(dumbbell_buffer(flows, buffer, extra), timestamped, fold)
    };
    let (lean, unfolded, slow) = (run(true, true), run(true, false), run(false, false));
    assert!(lean.2 > 10_000, "the scenario moves data");
    // (The event-driven run still hands zero-delay NIC hops on without an Arrive.)
    assert!(unfolded.1 < slow.1 * 8 / 10, "fewer events: {} vs {}", unfolded.1, slow.1);
    // A folded hop saves the router's Arrive: one per data packet and one per ACK.
    assert!(lean.1 < unfolded.1 * 3 / 4, "fewer events folded: {} vs {}", lean.1, unfolded.1);
    assert!(unfolded.0 == slow.0, "result tables differ (timestamped links)");
    assert!(lean.0 == unfolded.0, "result tables differ (folded hops)");
}

const BYTES_100K: &str = r#"{"bytes":100000}"#;

/// Linux's `tcp_wfree` runs the sender again on a TX completion only if TSQ throttled it: a
/// cwnd-limited flow behind a fast access link is driven by its ACKs, not by its NIC's
/// departures; a flow whose own NIC is the bottleneck is throttled, and its departures must
/// keep it going (no stall: it fills the link).
#[test]
fn nic_departures_run_only_a_throttled_sender() {
    let ceiling = 1e9 * 1448.0 / 1538.0;
    let goodput = |sim: &Simulation| -> f64 {
        sim.results().flows.get("goodput_bps").unwrap().as_f64().unwrap()[0]
    };
    let mut fast_nic = dumbbell_buffer(r#"{"cc":"cubic"}"#, r#"{"bytes":1000000}"#, "");
    fast_nic.run_until(u64::MAX);
    let packets = fast_nic.data_packets_delivered;
    assert!(packets > 100_000, "{packets}");
    assert!(
        fast_nic.tsq_wakeups * 100 < packets,
        "{} wake-ups for {packets} packets",
        fast_nic.tsq_wakeups
    );
    assert!(goodput(&fast_nic) > 0.9 * ceiling);
    for cc in ["cubic", "bbr1"] {
        let mut nic_bound = Simulation::from_json(&format!(
            r#"{{"seed":3,"duration_ns":2000000000,"sample_interval_ns":10000000,
                "topology":{{"kind":"dumbbell","access_rate_bps":1000000000,"bottleneck":{{"rate_bps":1000000000,
                "rtt_ns":10000000,"buffer":{{"bytes":1000000}}}}}},"flows":[{{"cc":"{cc}"}}]}}"#
        ))
        .unwrap();
        nic_bound.run_until(u64::MAX);
        assert!(
            nic_bound.tsq_wakeups > 1_000,
            "{cc}: the NIC drives the throttled sender: {}",
            nic_bound.tsq_wakeups
        );
        assert!(goodput(&nic_bound) > 0.9 * ceiling, "{cc}: {}", goodput(&nic_bound));
    }
}

/// A timestamped sender NIC (its departures are its pipe's events) against an event-driven
/// one: the same packets at the same times — flows TSQ throttles (the NIC is the
/// bottleneck), paced and unpaced ones, losses, the host model's skb accounting.
#[test]
fn timestamped_sender_nics_change_no_result() {
    let scenarios = [
        // NIC-bound: TSQ throttles both flows, their departures drive them.
        r#"{"seed":3,"duration_ns":1000000000,"sample_interval_ns":10000000,
            "topology":{"kind":"dumbbell","access_rate_bps":1000000000,"bottleneck":{"rate_bps":1000000000,
            "rtt_ns":10000000,"buffer":{"bytes":1000000}}},"flows":[{"cc":"cubic"},{"cc":"bbr1","start_ns":200000000}]}"#,
        // Fast NICs, paced and unpaced flows, random loss.
        r#"{"seed":4,"duration_ns":1000000000,"sample_interval_ns":10000000,
            "topology":{"kind":"dumbbell","bottleneck":{"rate_bps":1000000000,"rtt_ns":20000000,
            "buffer":{"bytes":200000},"loss":0.001}},"flows":[{"cc":"bbr3"},{"cc":"cubic"},{"cc":"reno","start_ns":300000000}]}"#,
        // The host model: a departure frees TSQ budget once its whole skb has left.
        r#"{"seed":2,"duration_ns":500000000,"sample_interval_ns":100000000,
            "topology":{"kind":"dumbbell","bottleneck":{"rate_bps":10000000000,"rtt_ns":200000,"buffer":{"bytes":400000},
            "ecn_threshold_bytes":60000}},
            "flows":[{"cc":"bbr2","ecn":true},{"cc":"dctcp","ecn":true},{"cc":"cubic","start_ns":100000000}],"hosts":{}}"#,
    ];
    for (i, json) in scenarios.into_iter().enumerate() {
        let run = |nic_timestamped: bool| {
            let mut sim = Simulation::from_json(json).unwrap();
            let nics: Vec<usize> =
                (0..sim.links.len()).filter(|&l| sim.links[l].is_sender_nic).collect();
            assert!(
                !nics.is_empty() && nics.iter().all(|&l| sim.links[l].fast.timestamped),
                "sender NICs are timestamped"
            );
            if !nic_timestamped {
                nics.iter().for_each(|&l| {
                    let link = &mut sim.links[l];
                    link.fast.set_timestamped(false);
                    (link.fast.passive, link.fast.ahead) = (false, Ahead::No);
                    link.fast.nic_flow = crate::speedup::NO_FLOW;
                });
            }
            sim.run_until(u64::MAX);
            run_outcome(&mut sim)
        };
        let (stamped, driven) = sped_up_changes_nothing(run, 20_000, json);
        assert_eq!((stamped.1, stamped.3), (driven.1, driven.3), "events and TSQ wake-ups: {json}");
        if i == 0 {
            assert!(
                stamped.3 > 1_000,
                "the NIC-bound flows are woken by departures: {}",
                stamped.3
            );
        }
    }
}

/// Folding changes no result also where events tie at one nanosecond: access links as fast
/// as the bottleneck (the wan-loss study's host-NIC bottleneck) put a packet's arrival at
/// the receiver at the very instant the next one reaches the router, in every round trip.
#[test]
fn folded_hops_change_no_result_when_events_tie() {
    for (cc, loss) in [("bbr1", 0.0), ("bbr1", 0.015), ("cubic", 0.0)] {
        let json = format!(
            r#"{{"seed":1,"duration_ns":1000000000,"sample_interval_ns":100000000,
                "topology":{{"kind":"dumbbell","access_rate_bps":2500000000,
                "bottleneck":{{"rate_bps":2500000000,"rtt_ns":10000000,"buffer":{{"packets":1000}},"loss":{loss}}}}},
                "flows":[{{"cc":"{cc}","rcvbuf_bytes":6291456}}]}}"#
        );
        folding_changes_nothing(&json, &format!("{cc}, loss {loss}"));
    }
}

/// The scenario `json` run folded and unfolded: fewer events, the same result tables.
fn folding_changes_nothing(json: &str, what: &str) {
    let run = |fold: bool| run_with(Simulation::from_json(json).unwrap(), true, fold);
    let (folded, unfolded) = (run(true), run(false));
    assert!(folded.2 > 50_000, "{what}: the scenario moves data");
    assert!(folded.1 < unfolded.1, "{what}: fewer events folded");
    assert!(folded.0 == unfolded.0, "{what}: result tables differ");
}

/// ... and with the host model, whose receive rings and GRO sit at the folded link's far end.
#[test]
fn folded_hops_change_no_result_with_hosts() {
    folding_changes_nothing(
        r#"{"seed":2,"duration_ns":500000000,"sample_interval_ns":100000000,
            "topology":{"kind":"dumbbell","bottleneck":{"rate_bps":10000000000,"rtt_ns":200000,"buffer":{"bytes":400000},
            "ecn_threshold_bytes":60000}},
            "flows":[{"cc":"bbr2","ecn":true},{"cc":"dctcp","ecn":true},{"cc":"cubic","start_ns":100000000}],"hosts":{}}"#,
        "hosts",
    );
}

#[test]
fn timestamped_links_change_no_result_drop_tail() {
    same_results_both_ways(
        r#"{"cc":"cubic"},{"cc":"bbr1","start_ns":300000000}"#,
        BYTES_100K,
        r#","loss":0.0001"#,
    );
    // A buffer in packets counts the packets waiting, which a timestamped link replays.
    same_results_both_ways(
        r#"{"cc":"cubic"},{"cc":"cubic","start_ns":100000000}"#,
        r#"{"packets":40}"#,
        "",
    );
}

#[test]
fn timestamped_links_change_no_result_ecn_and_red() {
    let dctcp = r#"{"cc":"dctcp","ecn":true},{"cc":"dctcp","ecn":true}"#;
    same_results_both_ways(dctcp, BYTES_100K, r#","ecn_threshold_bytes":30000"#);
    same_results_both_ways(dctcp, r#"{"packets":200}"#, r#","ecn_threshold_packets":20"#);
    same_results_both_ways(
        r#"{"cc":"cubic","ecn":true},{"cc":"reno"}"#,
        BYTES_100K,
        r#","red":{"min_th_bytes":20000,"max_th_bytes":60000,"max_p":0.1,"weight":0.002}"#,
    );
}

/// Make `sim`'s lazily counted NICs (`nic.rs`) event-driven sender NICs again.
fn without_lazy_nics(sim: &mut Simulation) {
    for l in &mut sim.links {
        if l.fast.lazy_tsq {
            l.fast.set_timestamped(false);
            l.fast.lazy_tsq = false;
            (l.is_sender_nic, l.fast.nic_flow) = (true, crate::speedup::NO_FLOW);
        }
    }
    sim.flows.iter_mut().for_each(|f| f.lazy_nic = false);
}

/// A graph in the DCTCP paper's Fig. 17 shape, scaled down: `s1_*` and `s3` send to `r1`
/// behind `t2`, `s2_*` to their own `r2_*` over the `t1`–`t2` trunk; every link has RED at
/// `red` (or none), the host links `host_loss` and `host_delay_ns`; every flow runs `cc`.
fn fig17_like(cc: &str, red: bool, host_loss: f64, host_delay_ns: u64) -> String {
    let hosts = ["s1_0", "s1_1", "s2_0", "s2_1", "s3", "r1", "r2_0", "r2_1"];
    let red = if red {
        r#","red":{"min_th_bytes":30760,"max_th_bytes":92280,"max_p":0.02,"weight":1.0}"#
    } else {
        ""
    };
    let link = |from: &str, to: &str, rate: u64, delay: u64, loss: f64| {
        format!(
            r#"{{"from":"{from}","to":"{to}","rate_bps":{rate},"delay_ns":{delay},
                "buffer":{{"packets":200}},"loss":{loss}{red}}}"#
        )
    };
    let mut links = vec![link("t1", "t2", 10_000_000_000, 10_000, 0.0)];
    for h in hosts {
        let sw = if h.starts_with("s1") || h.starts_with("s2") { "t1" } else { "t2" };
        links.push(link(h, sw, 1_000_000_000, host_delay_ns, host_loss));
    }
    let nodes: Vec<String> = ["t1", "t2"]
        .iter()
        .map(|n| format!(r#"{{"name":"{n}","kind":"switch"}}"#))
        .chain(hosts.iter().map(|n| format!(r#"{{"name":"{n}","kind":"host"}}"#)))
        .collect();
    let ecn = if cc == "dctcp" { r#","ecn":"ect0""# } else { "" };
    let pairs = [("s1_0", "r1"), ("s1_1", "r1"), ("s3", "r1"), ("s2_0", "r2_0"), ("s2_1", "r2_1")];
    let flows: Vec<String> = pairs
        .iter()
        .enumerate()
        .map(|(i, (s, d))| {
            format!(r#"{{"cc":"{cc}"{ecn},"src":"{s}","dst":"{d}","start_ns":{}}}"#, i * 10_000_000)
        })
        .collect();
    format!(
        r#"{{"seed":11,"duration_ns":300000000,"sample_interval_ns":10000000,
            "topology":{{"kind":"graph","nodes":[{}],"links":[{}]}},"flows":[{}]}}"#,
        nodes.join(","),
        links.join(","),
        flows.join(",")
    )
}

/// Host NICs with a propagation delay without departure events (`nic.rs`): receivers' NICs
/// (ACKs only) timestamped, senders' NICs counted lazily by TSQ, and receivers served ahead
/// over links that decide and are reported (`ahead.rs`), against all three event-driven as
/// before — the same result tables, the same TSQ wake-ups, fewer events. DCTCP with RED on
/// every link, CUBIC and paced BBR with random loss at the NICs (drops give TSQ's budget
/// back), zero-delay host links (where the NICs were timestamped already), and CUBIC flows
/// that TSQ throttles.
#[test]
fn lazy_nics_change_no_result() {
    let scenarios = [
        (fig17_like("dctcp", true, 0.0, 10_000), true),
        (fig17_like("cubic", false, 0.001, 10_000), true),
        (fig17_like("bbr1", true, 0.002, 20_000), true),
        (fig17_like("cubic", true, 0.0, 0), false),
        // 1 ms host links: CUBIC's window outgrows TSQ's budget and the NIC-bound flows
        // (s2_*: 1 Gbit/s all the way) are throttled, woken by their departures.
        (fig17_like("cubic", false, 0.0, 1_000_000), true),
    ];
    let mut wakeups = 0;
    for (json, lazy) in scenarios {
        let run = |sped_up: bool| {
            let mut sim = Simulation::from_json(&json).unwrap();
            let lazy_nics = sim.links.iter().filter(|l| l.fast.lazy_tsq).count();
            assert_eq!(lazy_nics, if lazy { 5 } else { 0 }, "one per sender: {json}");
            // Every receiver's NIC (the first link of an ACK path) carries no data.
            let ack_nics: Vec<usize> =
                sim.flows.iter().map(|f| f.ack_path.first() as usize).collect();
            assert!(ack_nics.iter().all(|&l| !sim.links[l].is_sender_nic));
            assert!(ack_nics.iter().all(|&l| sim.links[l].fast.timestamped));
            if lazy {
                // Every receiver is served ahead (`ahead.rs`): its links are timestamped.
                let rx = sim.links.iter().filter(|l| l.fast.ahead == Ahead::Receiver).count();
                assert_eq!(rx, 3, "r1, r2_0, r2_1: {json}");
            }
            if !sped_up {
                sim.rx_ahead_on = false;
                without_lazy_nics(&mut sim);
                sim.links.iter_mut().for_each(|l| l.fast.ahead = Ahead::No);
                for &l in &ack_nics {
                    let link = &mut sim.links[l];
                    link.is_sender_nic = true;
                    let on = link.can_be_timestamped();
                    link.fast.set_timestamped(on);
                }
            }
            sim.run_until(u64::MAX);
            run_outcome(&mut sim)
        };
        let (fast, slow) = sped_up_changes_nothing(run, 20_000, &json);
        assert_eq!(fast.3, slow.3, "TSQ wake-ups: {json}");
        wakeups += fast.3;
        if lazy {
            // A data packet's NIC departure and (mostly) its arrival at the receiver go, and
            // half an ACK's departure (one per two segments): up to 2.5 events per packet.
            assert_saves_events(&fast, &slow, (3, 2));
        }
    }
    assert!(wakeups > 1_000, "TSQ throttles some flows, their departures wake them: {wakeups}");
}
