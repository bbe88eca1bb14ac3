//! The path-model discipline on a link against the native queue: the FIFO (`AnyAqm::Droptail`)
//! forced onto the bottleneck (`FORCE_AQM`) must give the runs the native drop-tail gives;
//! ECT(1) is as ECN-capable as ECT(0) for a FIFO; packets are conserved through a discipline.

use crate::link::aqm::FORCE_AQM;
use crate::metrics::Table;
use crate::speedup::tests::{assert_saves_events, sped_up_changes_nothing};
use crate::*;
use transport::Ecn;

/// A 1 Gbit/s dumbbell run for 1 s; `flows` and `bottleneck` (its fields after the rate: the
/// RTT first) are spliced in. `forced`: the bottleneck's queue is the path model's FIFO.
fn dumbbell(flows: &str, bottleneck: &str, forced: bool) -> Simulation {
    FORCE_AQM.with(|f| f.set(forced));
    let sim = Simulation::from_json(&format!(
        r#"{{"seed":5,"duration_ns":1000000000,"sample_interval_ns":10000000,
            "topology":{{"kind":"dumbbell","bottleneck":{{"rate_bps":1000000000,
            {bottleneck}}}}},"flows":[{flows}]}}"#
    ));
    FORCE_AQM.with(|f| f.set(false));
    sim.unwrap()
}

fn bottleneck_of(sim: &Simulation) -> usize {
    sim.flows[0].data_path.links[1] as usize
}

/// A table as text, without the columns only a discipline measures (sojourn, L4S class).
fn shown(t: &Table) -> String {
    let kept = t.columns.iter().filter(|(n, _)| !n.starts_with("sojourn") && !n.starts_with("l4s"));
    kept.map(|(n, c)| format!("{n}: {c:?}\n")).collect()
}

/// Run to the end, checking conservation; the result tables as text, and the results.
fn finish(sim: &mut Simulation) -> (String, results::Results) {
    sim.run_until(u64::MAX);
    sim.check_conservation().unwrap();
    let r = sim.results();
    (format!("{}{}{}", shown(&r.flows), shown(&r.timeseries), shown(&r.queue)), r)
}

/// A run's outcome for comparing speed-ups: the result tables with the bottleneck's p99 sojourn
/// (as text, `extra` appended), its events, data packets delivered and drops.
type Outcome = (String, u64, u64, u64);

fn outcome(sim: &mut Simulation, extra: &str) -> Outcome {
    let (tables, r) = finish(sim);
    let sojourn = format!("{:?}", r.queue.get("sojourn_p99_ms").unwrap());
    (tables + &sojourn + extra, r.events, r.data_packets_delivered, r.drops)
}

/// A sped-up run against the event-driven one (`run(true)`, `run(false)`): the same result
/// tables and packets delivered, more than `min` of them (packets, drops), and `per_packet`
/// events saved per data packet.
fn same_with_fewer_events(
    run: impl Fn(bool) -> Outcome,
    min: (u64, u64),
    per_packet: (u64, u64),
    what: &str,
) {
    let (fast, slow) = sped_up_changes_nothing(run, min.0, what);
    assert!(fast.3 > min.1, "drops {}: {what}", fast.3);
    assert_saves_events(&fast, &slow, per_packet);
}

fn column_f64(t: &Table, name: &str) -> Vec<f64> {
    t.get(name).unwrap().as_f64().unwrap().to_vec()
}

fn column_i64(t: &Table, name: &str) -> Vec<i64> {
    t.get(name).unwrap().as_i64().unwrap().to_vec()
}

/// The bottleneck's rows of the queue table (code 0, listed first).
fn bottleneck_rows<T: Copy>(r: &results::Results, v: &[T]) -> Vec<T> {
    let codes = r.queue.get("queue_code").unwrap().as_codes().unwrap();
    v.iter().zip(codes).filter(|(_, c)| *c == 0).map(|(x, _)| *x).collect()
}

/// The integration: the same packets, drops, marks and times through the path model's FIFO
/// (event-driven, one `TxDone` per departure) as through the native drop-tail (timestamped),
/// for loss-based, model-based and ECN flows — exactly, since both FIFOs admit and mark by the
/// same rule on the same bytes waiting, and the link's random stream is drawn the same.
#[test]
fn the_path_model_fifo_runs_as_the_native_drop_tail() {
    let cases = [
        (
            r#"{"cc":"cubic"},{"cc":"cubic","start_ns":50000000}"#,
            r#""rtt_ns":10000000,"buffer":{"bytes":100000},"loss":0.0005"#,
        ),
        (r#"{"cc":"bbr1"},{"cc":"cubic"}"#, r#""rtt_ns":10000000,"buffer":{"packets":40}"#),
        (
            r#"{"cc":"dctcp","ecn":true,"count":2},{"cc":"cubic","ecn":true}"#,
            r#""rtt_ns":1000000,"buffer":{"bytes":200000},"ecn_threshold_bytes":30000"#,
        ),
    ];
    for (flows, bottleneck) in cases {
        let mut native = dumbbell(flows, bottleneck, false);
        let mut forced = dumbbell(flows, bottleneck, true);
        let bn = bottleneck_of(&native);
        assert!(native.links[bn].aqm.is_none() && native.links[bn].fast.timestamped);
        assert!(forced.links[bn].aqm.is_some() && !forced.links[bn].fast.timestamped);
        let (a, ra) = finish(&mut native);
        let (b, rb) = finish(&mut forced);
        assert!(ra.data_packets_delivered > 10_000, "{flows}: {}", ra.data_packets_delivered);
        let marks = column_i64(&ra.queue, "ce_marks").into_iter().max().unwrap_or(0);
        assert!(ra.drops as i64 + marks > 100, "{flows}: the queue drops or marks");
        assert!(a == b, "{flows} {bottleneck}: the runs differ");
        assert!(rb.events > ra.events, "the forced bottleneck is event-driven");
        // Only the discipline times its packets: the native queue's sojourn is NaN.
        let (p99_a, p99_b) =
            (column_f64(&ra.queue, "sojourn_p99_ms"), column_f64(&rb.queue, "sojourn_p99_ms"));
        assert!(p99_a.iter().all(|x| x.is_nan()));
        let p99_b = bottleneck_rows(&rb, &p99_b);
        // The buffer's delay bound at 1 Gbit/s: 200 kB is 1.6 ms (+ one bin's 4.4 %).
        assert!(p99_b.last().is_some_and(|&x| x > 0.05 && x < 1.7), "{p99_b:?}");
        let drops = bottleneck_rows(&rb, &column_i64(&rb.queue, "drops"));
        let overflow = bottleneck_rows(&rb, &column_i64(&rb.queue, "drops_overflow"));
        assert_eq!(drops, overflow, "a FIFO drops only at its limit");
    }
}

/// ECT(1) is ECN-capable: a FIFO with a step threshold marks it as it marks ECT(0), so a DCTCP
/// flow that sends ECT(1) runs as one that sends ECT(0), on either queue.
#[test]
fn ect1_dctcp_runs_as_ect0_through_a_step_threshold() {
    let bottleneck = r#""rtt_ns":1000000,"buffer":{"bytes":200000},"ecn_threshold_packets":20"#;
    for forced in [false, true] {
        let flows = |mode: &str| format!(r#"{{"cc":"dctcp","ecn":"{mode}","count":2}}"#);
        let mut ect0 = dumbbell(&flows("ect0"), bottleneck, forced);
        let mut ect1 = dumbbell(&flows("ect1"), bottleneck, forced);
        // The senders do put ECT(1) on the wire: look at the bottleneck's pipe mid-run.
        ect1.run_until(300_000_000);
        let pipes = ect1.links.iter().flat_map(|l| l.pipe.iter());
        let data: Vec<Ecn> = pipes.filter(|(_, p)| p.is_data).map(|(_, p)| p.ecn).collect();
        assert!(!data.is_empty() && data.iter().all(|e| matches!(e, Ecn::Ect1 | Ecn::Ce)));
        assert!(data.contains(&Ecn::Ect1));
        let (a, ra) = finish(&mut ect0);
        let (b, _) = finish(&mut ect1);
        let marks = column_i64(&ra.queue, "ce_marks");
        assert!(marks.iter().any(|&m| m > 100), "the threshold marks: {marks:?}");
        assert!(a == b, "forced {forced}: ECT(1) ran otherwise than ECT(0)");
    }
}

/// Every data packet sent is delivered, dropped (random loss, the discipline) or still in the
/// network — counting those the discipline holds — at every moment of a run with drops.
#[test]
fn packets_are_conserved_through_a_discipline() {
    let flows = r#"{"cc":"cubic","count":3},{"cc":"bbr1"}"#;
    let mut sim =
        dumbbell(flows, r#""rtt_ns":10000000,"buffer":{"packets":30},"loss":0.001"#, true);
    let bn = bottleneck_of(&sim);
    let mut held = 0;
    for t in (1..=100).map(|i| i * 10_000_000 + 123_457) {
        sim.run_until(t);
        sim.check_conservation().unwrap();
        held = held.max(sim.links[bn].waiting_pkts());
    }
    let r = sim.results();
    let q = &sim.links[bn].stats;
    assert!(held > 10, "the discipline held packets at a check ({held})");
    assert!(q.drops > 100 && q.random_losses > 10, "drops {} losses {}", q.drops, q.random_losses);
    let lost: i64 = column_i64(&r.flows, "lost_packets").iter().sum();
    assert_eq!(lost as u64, q.drops + q.random_losses, "every drop is a flow's loss");
}

/// A discipline's link folds its router hop (`speedup/fold.rs`): each packet enters the
/// receiver's access link when it leaves the bottleneck, not on an `Arrive` at the router.
/// The same tables as with the hop unfolded — FQ-CoDel's drops, marks and sojourns included
/// — and one event fewer per data packet.
#[test]
fn a_link_with_a_discipline_folds_its_router_hop_exactly() {
    let flows = r#"{"cc":"cubic","count":6},{"cc":"bbr1","ecn":true},{"cc":"dctcp","ecn":true}"#;
    let bottleneck = r#""rtt_ns":10000000,"buffer":{"bytes":400000},"loss":0.0002,
        "qdisc":{"kind":"fq_codel","target_ns":500000,"interval_ns":10000000}"#;
    let run = |fold: bool| {
        let mut sim = dumbbell(flows, bottleneck, false);
        let bn = bottleneck_of(&sim);
        assert!(sim.links[bn].aqm.is_some() && sim.links[bn].fast.fold);
        sim.links[bn].fast.fold = fold;
        outcome(&mut sim, "")
    };
    same_with_fewer_events(run, (20_000, 100), (9, 10), "folded");
}

/// Make every lazily served link (`speedup/lazy.rs`) event-driven again: a `TxDone` event per
/// departure.
fn without_lazy_departures(sim: &mut Simulation) {
    sim.links.iter_mut().for_each(|l| l.fast.lazy_departures = false);
    sim.lazy_links.clear();
}

/// A discipline's departures served lazily (`speedup/lazy.rs`) change nothing: for CoDel,
/// FQ-CoDel (ECN, random loss, a CE threshold), PIE, DualPI2 with an ECT(1) flow and the path
/// model's FIFO, the same result tables — sojourns, drops and marks included — as with a
/// `TxDone` event per departure, about one event fewer per data packet; and a run advanced in
/// uneven slices finds the bottleneck as the event-driven run does between them (its caller
/// may read the links then).
#[test]
fn lazy_departures_change_no_result() {
    let mixed = r#"{"cc":"cubic","count":4},{"cc":"bbr1","ecn":true},{"cc":"dctcp","ecn":true}"#;
    let l4s = r#"{"cc":"dctcp","ecn":"ect1"},{"cc":"cubic"},{"cc":"bbr3","ecn":"ect1"}"#;
    let cases = [
        (mixed, r#""qdisc":{"kind":"codel","target_ns":1000000,"interval_ns":20000000}"#, false),
        (
            mixed,
            r#""loss":0.0002,"qdisc":{"kind":"fq_codel","target_ns":500000,
                "interval_ns":10000000,"ce_threshold_ns":300000}"#,
            false,
        ),
        (mixed, r#""qdisc":{"kind":"pie"}"#, false),
        (l4s, r#""qdisc":{"kind":"dualpi2"}"#, false),
        (mixed, r#""ecn_threshold_packets":40"#, true),
    ];
    for (flows, qdisc, forced) in cases {
        let bottleneck = format!(r#""rtt_ns":10000000,"buffer":{{"bytes":400000}},{qdisc}"#);
        let run = |lazy: bool, slices: bool| {
            let mut sim = dumbbell(flows, &bottleneck, forced);
            let bn = bottleneck_of(&sim);
            assert!(sim.links[bn].fast.lazy_departures, "the bottleneck is lazy: {qdisc}");
            if !lazy {
                without_lazy_departures(&mut sim);
            }
            // What the caller of `advance` reads between slices: the bottleneck's bytes sent
            // and packets waiting.
            let mut seen = String::new();
            if slices {
                for t in (1..200).map(|i| i * 4_999_999 + i * i * 1009) {
                    sim.run_until(t);
                    sim.check_conservation().unwrap();
                    let l = &sim.links[bn];
                    seen += &format!("{} {} {:?};", l.stats.tx_bytes, l.waiting_pkts(), l.in_tx);
                }
            }
            outcome(&mut sim, &seen)
        };
        same_with_fewer_events(|lazy| run(lazy, false), (20_000, 100), (9, 10), qdisc);
        let (sliced, sliced_driven) = (run(true, true), run(false, true));
        assert!(sliced.0 == sliced_driven.0, "a sliced run differs: {qdisc}");
    }
}

/// A graph whose every link runs FQ-CoDel: four senders behind switch `a` send to two receivers
/// behind `b` over one 1 Gbit/s trunk, listed last (the highest link ids); host links of
/// `host_delay_ns`.
fn fq_codel_graph(host_delay_ns: u64) -> Simulation {
    let qdisc = r#""qdisc":{"kind":"fq_codel","target_ns":200000,"interval_ns":5000000}"#;
    let link = |from: &str, to: &str, rate: u64, delay: u64| {
        format!(
            r#"{{"from":"{from}","to":"{to}","rate_bps":{rate},"delay_ns":{delay},
                "buffer":{{"packets":300}},{qdisc}}}"#
        )
    };
    let (senders, receivers) = (["s0", "s1", "s2", "s3"], ["r0", "r1"]);
    let mut links: Vec<String> =
        senders.iter().map(|s| link(s, "a", 10_000_000_000, host_delay_ns)).collect();
    links.extend(receivers.iter().map(|r| link(r, "b", 10_000_000_000, host_delay_ns)));
    links.push(link("a", "b", 1_000_000_000, 100_000));
    let nodes: Vec<String> = ["a", "b"]
        .iter()
        .map(|n| format!(r#"{{"name":"{n}","kind":"switch"}}"#))
        .chain(
            senders.iter().chain(&receivers).map(|n| format!(r#"{{"name":"{n}","kind":"host"}}"#)),
        )
        .collect();
    let flows: Vec<String> = senders
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let cc = ["cubic", "dctcp", "bbr1", "cubic"][i];
            let ecn = if cc == "dctcp" { r#","ecn":"ect0""# } else { "" };
            format!(
                r#"{{"cc":"{cc}"{ecn},"src":"{s}","dst":"r{}","start_ns":{}}}"#,
                i % 2,
                i * 3_000_000
            )
        })
        .collect();
    Simulation::from_json(&format!(
        r#"{{"seed":7,"duration_ns":400000000,"sample_interval_ns":10000000,
            "topology":{{"kind":"graph","nodes":[{}],"links":[{}]}},"flows":[{}]}}"#,
        nodes.join(","),
        links.join(","),
        flows.join(",")
    ))
    .unwrap()
}

/// On a graph, lazy departures change nothing either, and a link fed by a zero-delay link with
/// a lower id stays event-driven: that feeder hands its packet on in its own departure's event,
/// which runs before the link's departure of the same instant (`speedup/lazy.rs`, "Ties").
#[test]
fn lazy_departures_on_a_graph_change_no_result() {
    for (host_delay_ns, lazy_links) in [(20_000, 8), (0, 0)] {
        let run = |lazy: bool| {
            let mut sim = fq_codel_graph(host_delay_ns);
            // With a delay: the trunk both ways and the switches' links to the hosts (the hosts'
            // own links are the first of a path). Without: every link a host feeds at once.
            assert_eq!(sim.lazy_links.len(), lazy_links, "host delay {host_delay_ns}");
            if !lazy {
                without_lazy_departures(&mut sim);
            }
            outcome(&mut sim, "")
        };
        let what = format!("host delay {host_delay_ns}");
        if lazy_links == 0 {
            // Nothing lazy: both runs are the one event-driven run.
            assert!(run(true) == run(false), "{what}");
        } else {
            same_with_fewer_events(run, (10_000, 50), (1, 2), &what);
        }
    }
}
