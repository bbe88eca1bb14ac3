//! Relations between a link's path-model fields (issue 30: schedules, traces, the policer,
//! aggregation, jitter, reordering, burst loss; a dumbbell's bottleneck and a graph's links),
//! checked before anything runs: each problem is one line naming the field and the form it
//! accepts.

use super::check::ConfigError;
use super::human;
use super::PathKeys;
use pathmodel::impair::spec::ScheduleEntrySpec;

type Check = Result<(), ConfigError>;

fn err(path: impl Into<String>, message: impl Into<String>) -> Check {
    Err(ConfigError::new(path, message))
}

/// Which delay key a link has, so a schedule can change it: a dumbbell's bottleneck has
/// `rtt` (both ways), a graph's link `delay` (one way, each direction).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DelayKey {
    Rtt,
    Delay,
}

/// A link's path model (`p`: its path in the config, `k` its path-model keys, `rate_bps` its
/// `rate`): `rate` xor `trace`, parseable traces, a schedule in strictly increasing time that
/// names the link's own delay key, a policer bucket of at least one frame, parameters in range.
pub(crate) fn check_link_path(
    p: &str,
    k: &PathKeys<'_>,
    rate_bps: Option<u64>,
    delay: DelayKey,
    frame_bytes: u32,
) -> Check {
    match (rate_bps, k.trace) {
        (Some(_), Some(_)) => {
            return err(
                format!("{p}.trace"),
                "cannot be combined with rate: give either rate = \"100Mbps\" or trace = \
                 \"traces/down.mahimahi\"",
            )
        }
        (None, None) => {
            return err(
                format!("{p}.rate_bps"),
                "missing: give rate = \"100Mbps\" or trace = \"traces/down.mahimahi\"",
            )
        }
        _ => {}
    }
    for (key, t) in [("trace", k.trace), ("trace_reverse", k.trace_reverse)] {
        if let Some(t) = t {
            if let Err(e) = t.parse() {
                return err(format!("{p}.{key}"), e);
            }
        }
    }
    if let Err(e) = ScheduleEntrySpec::build(k.schedule) {
        return err(format!("{p}.schedule"), e.to_string());
    }
    let (own, other) = match delay {
        DelayKey::Rtt => ("rtt", "delay"),
        DelayKey::Delay => ("delay", "rtt"),
    };
    let names_other = |e: &ScheduleEntrySpec| match delay {
        DelayKey::Rtt => e.delay_ns.is_some(),
        DelayKey::Delay => e.rtt_ns.is_some(),
    };
    if let Some(i) = k.schedule.iter().position(names_other) {
        return err(
            format!("{p}.schedule.{i}.{other}_ns"),
            format!("this link has no {other}: its delay key is {own}; schedule {own} instead"),
        );
    }
    if k.trace.is_some() {
        if let Some(i) = k.schedule.iter().position(|e| e.rate_bps.is_some()) {
            return err(
                format!("{p}.schedule.{i}.rate_bps"),
                "a trace link's rate comes from its trace; drop rate from the schedule",
            );
        }
    }
    if let Some(b) = k.policer {
        if b.burst_bytes < frame_bytes as u64 {
            return err(
                format!("{p}.policer.burst_bytes"),
                format!(
                    "{} is below one full frame ({} B): no packet could pass; give burst = \
                     \"64KB\" or more",
                    human::size(b.burst_bytes),
                    frame_bytes
                ),
            );
        }
        if let Err(e) = b.build() {
            return err(format!("{p}.policer.{}", e.field), e.why);
        }
    }
    if let Some(a) = k.aggregation {
        if let Err(e) = a.build::<transport::Packet>() {
            return err(format!("{p}.aggregation.{}", e.field), e.why);
        }
    }
    if let Some(r) = k.reorder {
        if let Err(e) = r.build::<transport::Packet>() {
            return err(format!("{p}.reorder.{}", e.field), e.why);
        }
    }
    if let Some(l) = k.loss_model {
        if let Err(e) = l.build() {
            return err(format!("{p}.loss_model.{}", e.field), e.why);
        }
    }
    Ok(())
}
