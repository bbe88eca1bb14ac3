//! Relations between the bottleneck's path-model fields (issue 30: schedules, traces, the
//! policer, aggregation, jitter, reordering, burst loss), checked before anything runs: each
//! problem is one line naming the field and the form it accepts.

use super::check::ConfigError;
use super::human;
use super::Bottleneck;
use pathmodel::impair::spec::ScheduleEntrySpec;

type Check = Result<(), ConfigError>;

fn err(path: impl Into<String>, message: impl Into<String>) -> Check {
    Err(ConfigError::new(path, message))
}

const B: &str = "topology.bottleneck";

/// The bottleneck's path model: `rate` xor `trace`, parseable traces, a schedule in strictly
/// increasing time, a policer bucket of at least one frame, parameters in range.
pub(crate) fn check_bottleneck_path(b: &Bottleneck, frame_bytes: u32) -> Check {
    match (b.rate_bps, &b.trace) {
        (Some(_), Some(_)) => {
            return err(
                format!("{B}.trace"),
                "cannot be combined with rate: give either rate = \"100Mbps\" or trace = \
                 \"traces/down.mahimahi\"",
            )
        }
        (None, None) => {
            return err(
                format!("{B}.rate_bps"),
                "missing: give rate = \"100Mbps\" or trace = \"traces/down.mahimahi\"",
            )
        }
        _ => {}
    }
    for (key, t) in [("trace", &b.trace), ("trace_reverse", &b.trace_reverse)] {
        if let Some(t) = t {
            if let Err(e) = t.parse() {
                return err(format!("{B}.{key}"), e);
            }
        }
    }
    if let Err(e) = ScheduleEntrySpec::build(&b.schedule) {
        return err(format!("{B}.schedule"), e.to_string());
    }
    if b.trace.is_some() {
        if let Some(i) = b.schedule.iter().position(|e| e.rate_bps.is_some()) {
            return err(
                format!("{B}.schedule.{i}.rate_bps"),
                "a trace link's rate comes from its trace; drop rate from the schedule",
            );
        }
    }
    if let Some(p) = &b.policer {
        if p.burst_bytes < frame_bytes as u64 {
            return err(
                format!("{B}.policer.burst_bytes"),
                format!(
                    "{} is below one full frame ({} B): no packet could pass; give burst = \
                     \"64KB\" or more",
                    human::size(p.burst_bytes),
                    frame_bytes
                ),
            );
        }
        if let Err(e) = p.build() {
            return err(format!("{B}.policer.{}", e.field), e.why);
        }
    }
    if let Some(a) = &b.aggregation {
        if let Err(e) = a.build::<transport::Packet>() {
            return err(format!("{B}.aggregation.{}", e.field), e.why);
        }
    }
    if let Some(r) = &b.reorder {
        if let Err(e) = r.build::<transport::Packet>() {
            return err(format!("{B}.reorder.{}", e.field), e.why);
        }
    }
    if let Some(l) = &b.loss_model {
        if let Err(e) = l.build() {
            return err(format!("{B}.loss_model.{}", e.field), e.why);
        }
    }
    Ok(())
}
