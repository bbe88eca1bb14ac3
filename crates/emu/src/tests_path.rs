//! The path model through [`Link`] (issue 30): schedules, traces, the policer, burst loss and
//! the timing stages, each against what the mechanism must do to a saturating or paced input.

use super::*;
use pathmodel::aqm::DropCause;
use pathmodel::impair::spec::{
    AggregationSpec, Direction, JitterSpec, PolicerSpec, ReorderSpec, ScheduleEntrySpec,
};

const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;

fn params(rate_bps: u64, delay_ns: u64) -> LinkParams {
    LinkParams { rate_bps, delay_ns, ..LinkParams::default() }
}

fn arr(ip_len: u32) -> Arrival {
    Arrival { ip_len, ecn: Ecn::NotEct, flow_key: 1, origin: 0 }
}

fn at(at_ns: u64) -> ScheduleEntrySpec {
    ScheduleEntrySpec {
        at_ns,
        rate_bps: None,
        rtt_ns: None,
        delay_ns: None,
        loss: None,
        buffer_bytes: None,
    }
}

/// Run a link as the event loop does: arrivals at their times, wake-ups at `next_deadline`;
/// returns every delivery as (payload, due time).
fn drive(l: &mut Link<u32>, arrivals: &[(u64, u32)], until: u64) -> Vec<(u32, u64)> {
    let mut out = vec![];
    let mut next = 0;
    loop {
        let a = arrivals.get(next).map(|x| x.0);
        let now = match (l.next_deadline(), a) {
            (None, None) => break,
            (d, a) => d.unwrap_or(u64::MAX).min(a.unwrap_or(u64::MAX)),
        };
        if now > until {
            break;
        }
        while let Some(d) = l.pop_ready(now) {
            assert!(d.due_ns <= now);
            out.push((d.payload, d.due_ns));
        }
        while arrivals.get(next).is_some_and(|x| x.0 == now) {
            let _ = l.enqueue(now, next as u32, arr(arrivals[next].1));
            next += 1;
        }
        while let Some(d) = l.pop_ready(now) {
            out.push((d.payload, d.due_ns));
        }
    }
    out
}

#[test]
fn rate_step_departures_follow_the_new_rate_from_the_change() {
    // 1500 B at 12 Mbit/s = 1 ms; at 100.5 ms the rate drops 10x to 1.2 Mbit/s (10 ms each).
    let mut p = params(12_000_000, 0);
    p.schedule = vec![ScheduleEntrySpec { rate_bps: Some(1_200_000), ..at(100 * MS + MS / 2) }];
    let mut l: Link<u32> = Link::new(p, 1);
    l.start_run(0);
    let arrivals: Vec<(u64, u32)> = (0..200).map(|_| (0, 1500)).collect();
    let out = drive(&mut l, &arrivals, 2 * S);
    let due: Vec<u64> = out.iter().map(|x| x.1).collect();
    // Packets 0..=99 end at 1..=100 ms; packet 100 started at 100 ms, before the change,
    // and keeps the old rate (ends at 101 ms); every later one takes 10 ms.
    assert_eq!(&due[..3], &[MS, 2 * MS, 3 * MS]);
    assert_eq!(due[100], 101 * MS);
    assert!(due[101..].windows(2).all(|w| w[1] - w[0] == 10 * MS), "{:?}", &due[99..105]);
    assert_eq!(due[101], 111 * MS);
    let s = l.sample(2 * S);
    assert_eq!(s.rate_bps, 1_200_000);
}

#[test]
fn a_change_is_a_deadline_and_waits_for_the_run_to_start() {
    let mut p = params(8_000_000, 10 * MS);
    p.schedule = vec![ScheduleEntrySpec { rtt_ns: Some(40 * MS), loss: Some(0.5), ..at(5 * MS) }];
    let mut l: Link<u32> = Link::new(p, 1);
    assert_eq!(l.next_deadline(), None, "no change before the run's time 0 is known");
    l.start_run(1000 * MS);
    assert_eq!(l.next_deadline(), Some(1005 * MS));
    l.advance(1005 * MS);
    assert_eq!((l.p.delay_ns, l.p.loss), (20 * MS, 0.5));
    assert_eq!(l.next_deadline(), None);
}

#[test]
fn a_buffer_change_applies_to_later_arrivals() {
    let mut p = params(8_000_000, 0);
    p.limit_bytes = Some(100_000);
    p.schedule = vec![ScheduleEntrySpec { buffer_bytes: Some(3000), ..at(MS / 2) }];
    let mut l: Link<u32> = Link::new(p, 1);
    l.start_run(0);
    for i in 0..5 {
        assert!(l.enqueue(0, i, arr(1000)).is_ok());
    }
    // At 0.6 ms: the 5 kB queued stay, a new arrival finds 5 kB > 3 kB and is dropped.
    let r = l.enqueue(MS / 2 + MS / 10, 9, arr(1000));
    assert_eq!(r, Err((Verdict::Dropped(DropCause::Overflow), 9)));
    assert_eq!(l.occupancy_bytes(), 5000);
}

/// A Mahimahi trace of 100 ms: 2, 3, 1, 2, 3, 1, ... opportunities per ms (1 + ms % 3): 200.
fn mahimahi_100ms() -> String {
    (1..=100u64)
        .flat_map(|ms| std::iter::repeat_n(ms, 1 + (ms % 3) as usize))
        .map(|ms| format!("{ms}\n"))
        .collect()
}

#[test]
fn trace_delivered_rate_is_the_trace_mean_for_a_saturated_input() {
    let text = mahimahi_100ms();
    let opportunities = text.lines().count() as u64; // 200 in 100 ms: 24 Mbit/s of 1500 B
    assert_eq!(opportunities, 200);
    let mut p = params(0, 5 * MS);
    p.trace = Some(TraceSpec { file: "cell.mahimahi".into(), text });
    let mut l: Link<u32> = Link::new(p, 1);
    assert_eq!(l.p.rate_bps, 24_000_000, "before the run: the trace's mean");
    l.start_run(0);
    // Saturated: 1500-byte packets arriving faster than any opportunity (every 0.1 ms).
    let arrivals: Vec<(u64, u32)> = (0..30_000).map(|i| (i * MS / 10, 1500)).collect();
    let out = drive(&mut l, &arrivals, 2 * S + 5 * MS);
    // Delivered in [5 ms, 2.005 s): the 20 laps' opportunities, one packet each.
    assert_eq!(out.len() as u64, 20 * opportunities, "{}", out.len());
    let mean_bps = out.len() as f64 * 1500.0 * 8.0 / 2.0;
    assert!((mean_bps - 24e6).abs() < 1e-6 * 24e6, "{mean_bps}");
    // Each departure is at an opportunity: a whole ms, + the delay.
    assert!(out.iter().all(|x| (x.1 - 5 * MS).is_multiple_of(MS)));
    let s = l.sample(2 * S);
    assert!(s.rate_bps.abs_diff(24_000_000) < 24_000_000 / 20, "{}", s.rate_bps);
}

#[test]
fn a_bad_trace_is_one_line_naming_file_and_line() {
    let mut p = params(0, 0);
    p.trace = Some(TraceSpec { file: "up.mahimahi".into(), text: "1\n2\nx\n".into() });
    let e = Link::<u32>::try_new(p, 1).err().unwrap();
    assert!(e.contains("up.mahimahi") && e.contains("line 3"), "{e}");
    assert!(!e.contains('\n'));
}

#[test]
fn policer_passes_at_most_rate_plus_burst() {
    // 10 Mbit/s link, 5 Mbit/s offered (1500 B every 2.4 ms), policed at 2 Mbit/s, 15 kB burst.
    let mut p = params(10_000_000, 0);
    p.policer = Some(PolicerSpec { rate_bps: 2_000_000, burst_bytes: 15_000 });
    let mut l: Link<u32> = Link::new(p, 1);
    l.start_run(0);
    let t_end = 2 * S;
    let arrivals: Vec<(u64, u32)> =
        (0..t_end / (24 * MS / 10)).map(|i| (i * 24 * MS / 10, 1500)).collect();
    let out = drive(&mut l, &arrivals, t_end + 10 * MS);
    let passed = out.len() as u64 * 1500;
    let bound = 15_000 + 2_000_000 * 2 / 8;
    assert!(passed <= bound, "{passed} > {bound}");
    assert!(passed as f64 >= 0.95 * 500_000.0, "{passed}");
    let s = l.sample(t_end + 10 * MS);
    assert_eq!(s.policer_drops, arrivals.len() as u64 - out.len() as u64);
    assert_eq!((s.drops, s.random_losses), (0, 0), "policer drops are counted apart");
}

#[test]
fn reorder_displacement_is_observed_at_pop_ready() {
    let mut p = params(12_000_000, MS);
    p.reorder = Some(ReorderSpec { probability: 0.05, displacement: 3, timeout_ns: 10 * MS });
    let mut l: Link<u32> = Link::new(p, 7);
    l.start_run(0);
    let arrivals: Vec<(u64, u32)> = (0..2000).map(|i| (i * MS, 1500)).collect();
    let out = drive(&mut l, &arrivals, 3 * S);
    assert_eq!(out.len(), 2000, "reordering loses nothing");
    // A packet's displacement: how many later packets were delivered before it.
    let mut late = 0;
    for (k, &(seq, _)) in out.iter().enumerate() {
        let overtaken_by = out[..k].iter().filter(|x| x.0 > seq).count();
        assert!(overtaken_by <= 3, "packet {seq} overtaken by {overtaken_by}");
        late += (overtaken_by == 3) as u32;
    }
    assert!((50..=160).contains(&late), "{late} packets displaced by 3 of ~100");
    assert!(out.windows(2).all(|w| w[0].1 <= w[1].1), "deliveries in time order");
}

#[test]
fn aggregation_releases_batches_together() {
    // 1000 B at 8 Mbit/s: one per ms, delay 10 ms; batches of 4 kB.
    let mut p = params(8_000_000, 10 * MS);
    p.aggregation =
        Some(AggregationSpec { direction: Direction::Ack, bytes: Some(4000), timeout_ns: 50 * MS });
    let mut l: Link<u32> = Link::new(p, 1);
    l.start_run(0);
    let arrivals: Vec<(u64, u32)> = (0..40).map(|_| (0, 1000)).collect();
    let out = drive(&mut l, &arrivals, S);
    assert_eq!(out.len(), 40);
    for (b, batch) in out.chunks(4).enumerate() {
        // Packets 4b..4b+3 leave the delay line at 11 + 4b ... 14 + 4b ms: released at the 4th.
        assert!(batch.iter().all(|x| x.1 == (14 + 4 * b as u64) * MS), "{batch:?}");
        assert!(batch.windows(2).all(|w| w[0].0 < w[1].0));
    }
}

/// Back-to-back packets through a delay that steps from 50 to 10 ms at 10.5 ms.
fn delay_step(jitter: Option<JitterSpec>) -> Vec<(u32, u64)> {
    let mut p = params(8_000_000, 50 * MS);
    p.schedule = vec![ScheduleEntrySpec { rtt_ns: Some(20 * MS), ..at(10 * MS + MS / 2) }];
    p.jitter = jitter;
    let mut l: Link<u32> = Link::new(p, 1);
    l.start_run(0);
    let arrivals: Vec<(u64, u32)> = (0..100).map(|_| (0, 1000)).collect();
    drive(&mut l, &arrivals, S)
}

#[test]
fn a_delay_step_down_keeps_fifo_order() {
    let out = delay_step(None);
    assert_eq!(out.len(), 100);
    assert!(out.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1));
    // Packets 0..=9 were sent before the change (due 51..=60 ms); those after would be due
    // earlier (21 ms onwards) and wait for them; from packet 50 on, done + 10 ms is later.
    assert_eq!(out[9].1, 60 * MS);
    assert_eq!(out[10].1, 60 * MS);
    assert_eq!(out[60].1, 71 * MS);
    // With reordering allowed (jitter of 0 that may reorder), packets sent after the change
    // overtake those in flight before it.
    let out = delay_step(Some(JitterSpec { max_ns: 0, reorder: true }));
    assert_eq!(out.len(), 100);
    assert_eq!(out[0], (10, 21 * MS));
    assert!(out.windows(2).all(|w| w[0].1 <= w[1].1));
}

#[test]
fn the_path_fields_parse_in_the_runners_json_form() {
    let j = serde_json::json!({
        "rate_bps": 10_000_000, "delay_ns": 10_000_000,
        "schedule": [
            {"at_ns": 5_000_000_000u64, "rate_bps": 1_000_000},
            {"at_ns": 6_000_000_000u64, "rtt_ns": 40_000_000},
        ],
        "trace": {"file": "down.mahimahi", "text": "1\n2\n"},
        "policer": {"rate_bps": 5_000_000, "burst_bytes": 64_000},
        "loss_model": {"kind": "gilbert_elliott", "p": 0.01, "r": 0.3, "h": 0.5, "k": 0.99},
        "jitter": {"max_ns": 2_000_000, "reorder": false},
        "reorder": {"probability": 0.01, "displacement": 3},
        "aggregation": {"direction": "ack", "bytes": 16_000, "timeout_ns": 2_000_000},
    });
    let p: LinkParams = serde_json::from_value(j.clone()).unwrap();
    assert_eq!(p.schedule.len(), 2);
    assert!(Link::<u32>::try_new(p, 1).is_ok());
    let mut bad = j;
    bad["trace"]["path"] = "x".into();
    assert!(serde_json::from_value::<LinkParams>(bad).is_err());
}

#[test]
fn burst_loss_counts_as_random_loss() {
    // Always in the bad state after the first packet (p = 1, r = 0), losing all there (h = 0).
    let mut p = params(10_000_000, 0);
    p.loss_model = serde_json::from_value(
        serde_json::json!({"kind": "gilbert_elliott", "p": 1.0, "r": 0.0, "h": 0.0}),
    )
    .unwrap();
    let mut l: Link<u32> = Link::new(p, 1);
    let lost = (0..100).filter(|&i| l.enqueue(i as u64 * MS, i, arr(1000)).is_err()).count();
    assert!(lost >= 99, "{lost}");
    assert_eq!(l.stats.random_losses, lost as u64);
}

#[test]
fn the_policer_acts_before_burst_loss_as_in_the_simulator() {
    // A bucket of one packet that never refills, and a loss model that loses everything once
    // bad: 100 packets at once. The policer sees them all first (99 policed), the loss model
    // only the one that passed.
    let mut p = params(10_000_000, 0);
    p.policer = Some(PolicerSpec { rate_bps: 1, burst_bytes: 1500 });
    p.loss_model = serde_json::from_value(
        serde_json::json!({"kind": "gilbert_elliott", "p": 1.0, "r": 0.0, "h": 0.0}),
    )
    .unwrap();
    let mut l: Link<u32> = Link::new(p, 1);
    for i in 0..100 {
        let _ = l.enqueue(0, i, arr(1500));
    }
    assert_eq!(l.stats.policer_drops, 99);
    assert!(l.stats.random_losses <= 1);
    assert_eq!(l.stats.drops, 0);
}

#[test]
fn an_aggregation_timeout_is_a_deadline_of_the_link() {
    // By time only: packets leave the delay line at 11, 12, 13 ms and the batch at 11 + 5 ms.
    let mut p = params(8_000_000, 10 * MS);
    p.aggregation =
        Some(AggregationSpec { direction: Direction::Data, bytes: None, timeout_ns: 5 * MS });
    let mut l: Link<u32> = Link::new(p, 1);
    let arrivals: Vec<(u64, u32)> = (0..3).map(|_| (0, 1000)).collect();
    let out = drive(&mut l, &arrivals, S);
    assert_eq!(out, vec![(0, 16 * MS), (1, 16 * MS), (2, 16 * MS)]);
    assert_eq!(l.next_deadline(), None);
}
