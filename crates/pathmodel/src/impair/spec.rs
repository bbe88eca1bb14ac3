//! How a scenario names the impairments (`[topology.bottleneck]`'s `policer`, `aggregation`,
//! `jitter`, `reorder`, `loss_model`, `[[…schedule]]`): serde + JSON-schema types, one per
//! mechanism, each with a `build` into the sans-IO type of its own file. Units are in the
//! names (`_bps`, `_bytes`, `_ns`); the Python front writes them without the suffix and with
//! units (`rate = "50Mbps"` → `rate_bps`). Every field carries its `x-backends` mark (see
//! `crates/sim/src/config/backends.rs`). Trace files are not here: whoever reads the file
//! passes its text to [`super::Trace::parse`].

use super::{
    Aggregator, Change, GilbertElliott, Jitter, ParamError, Reorderer, Schedule, ScheduleError,
    TokenBucket,
};
use crate::aqm::Limit;
use crate::PathPacket;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

// Physical bounds, the same as the simulator's config limits (`crates/sim/src/config/mod.rs`):
// they keep rate × time products exact in its integer arithmetic.
/// 10 Tbit/s (the simulator's MAX_RATE_BPS).
const MAX_RATE_BPS: u64 = 10_000_000_000_000;
/// 100 s of delay (MAX_DELAY_NS).
const MAX_DELAY_NS: u64 = 100 * 1_000_000_000;
/// 1 TB (MAX_BUFFER_BYTES).
const MAX_BYTES: u64 = 1_000_000_000_000;
/// 10⁶ s, the longest run (MAX_DURATION_NS).
const MAX_AT_NS: u64 = 1_000_000 * 1_000_000_000;

/// A token-bucket policer on the data direction: conforming packets pass, the others are
/// dropped before the queue (no queue of its own).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PolicerSpec {
    /// Token rate: the long-run rate the policer lets through.
    #[schemars(range(min = 1, max = MAX_RATE_BPS))]
    #[schemars(extend("x-backends" = {"sim": "honoured", "emu": "honoured"}))]
    pub rate_bps: u64,
    /// Bucket size: the largest burst that passes at once (at least one 1500-byte packet).
    #[schemars(range(min = 1500, max = MAX_BYTES))]
    #[schemars(extend("x-backends" = {"sim": "honoured", "emu": "honoured"}))]
    pub burst_bytes: u64,
}

impl PolicerSpec {
    pub fn build(&self) -> Result<TokenBucket, ParamError> {
        TokenBucket::new(self.rate_bps, self.burst_bytes)
    }
}

/// A direction of the bottleneck.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Senders → receiver.
    Data,
    /// Receiver → senders.
    Ack,
}

/// Hold packets and release them together (Wi-Fi A-MPDU, cellular grants, ACK compression).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AggregationSpec {
    /// Which direction's packets are aggregated.
    #[schemars(extend("x-backends" = {"sim": "honoured", "emu": "honoured"}))]
    pub direction: Direction,
    /// Release the batch when the bytes held reach this (none: by time only).
    #[serde(default)]
    #[schemars(range(min = 1, max = MAX_BYTES))]
    #[schemars(extend("x-backends" = {"sim": "honoured", "emu": "honoured"}))]
    pub bytes: Option<u64>,
    /// Release the batch this long after its first packet arrived, if `bytes` was not reached.
    #[schemars(range(min = 1, max = MAX_DELAY_NS))]
    #[schemars(extend("x-backends" = {"sim": "honoured", "emu": "honoured"}))]
    pub timeout_ns: u64,
}

impl AggregationSpec {
    pub fn build<P: PathPacket>(&self) -> Result<Aggregator<P>, ParamError> {
        Aggregator::new(self.bytes, self.timeout_ns)
    }
}

/// Extra per-packet delay on the data direction, uniform in [0, max].
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JitterSpec {
    /// The largest extra delay; each packet's is uniform in [0, max].
    #[schemars(range(max = MAX_DELAY_NS))]
    #[schemars(extend("x-backends" = {"sim": "honoured", "emu": "honoured"}))]
    pub max_ns: u64,
    /// Let a packet overtake an earlier one with a larger jitter (false: packets keep their
    /// order, a late one holds back those behind it).
    #[serde(default)]
    #[schemars(extend("x-backends" = {"sim": "honoured", "emu": "honoured"}))]
    pub reorder: bool,
}

impl JitterSpec {
    pub fn build<P>(&self) -> Jitter<P> {
        Jitter::new(self.max_ns, self.reorder)
    }
}

fn default_reorder_timeout() -> u64 {
    super::reorder::REORDER_TIMEOUT_NS
}

/// Reordering on the data direction: a packet held back until `displacement` packets have
/// overtaken it.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReorderSpec {
    /// Probability that a packet is held back.
    #[schemars(range(min = 0.0, max = 1.0))]
    #[schemars(extend("x-backends" = {"sim": "honoured", "emu": "honoured"}))]
    pub probability: f64,
    /// How many later packets overtake a held one.
    #[schemars(range(min = 1, max = 1_000_000))]
    #[schemars(extend("x-backends" = {"sim": "honoured", "emu": "honoured"}))]
    pub displacement: u32,
    /// A held packet leaves after this long even if fewer packets followed it (the sender
    /// went quiet), so reordering never becomes loss.
    #[serde(default = "default_reorder_timeout")]
    #[schemars(range(min = 1, max = MAX_DELAY_NS))]
    #[schemars(extend("x-backends" = {"sim": "honoured", "emu": "honoured"}))]
    pub timeout_ns: u64,
}

impl ReorderSpec {
    pub fn build<P>(&self) -> Result<Reorderer<P>, ParamError> {
        Reorderer::new(self.probability, self.displacement, self.timeout_ns)
    }
}

/// A loss process on the data direction, in addition to the link's Bernoulli `loss`.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum LossModelSpec {
    /// netem's Gilbert–Elliott model (`loss gemodel p r 1-h 1-k`): a good and a bad state.
    #[schemars(title = "GilbertElliott")]
    GilbertElliott {
        /// Probability of going from the good to the bad state, per packet.
        #[schemars(range(min = 0.0, max = 1.0))]
        #[schemars(extend("x-backends" = {"sim": "honoured", "emu": "honoured"}))]
        p: f64,
        /// Probability of going from the bad to the good state, per packet (the mean bad
        /// period is 1/r packets).
        #[schemars(range(min = 0.0, max = 1.0))]
        #[schemars(extend("x-backends" = {"sim": "honoured", "emu": "honoured"}))]
        r: f64,
        /// Probability that a packet gets through in the bad state (netem's h; it is lost
        /// with 1 − h).
        #[schemars(range(min = 0.0, max = 1.0))]
        #[schemars(extend("x-backends" = {"sim": "honoured", "emu": "honoured"}))]
        h: f64,
        /// Probability that a packet gets through in the good state (netem's k; it is lost
        /// with 1 − k).
        #[serde(default = "default_k")]
        #[schemars(range(min = 0.0, max = 1.0))]
        #[schemars(extend("x-backends" = {"sim": "honoured", "emu": "honoured"}))]
        k: f64,
    },
}

/// netem's default 1 − k = 0: no loss in the good state.
fn default_k() -> f64 {
    1.0
}

impl LossModelSpec {
    pub fn build(&self) -> Result<GilbertElliott, ParamError> {
        match *self {
            LossModelSpec::GilbertElliott { p, r, h, k } => GilbertElliott::new(p, r, h, k),
        }
    }
}

/// One change of a link's parameters at a given time; the others keep their values. A link
/// takes the delay key it has: a dumbbell's bottleneck `rtt`, a graph's link `delay`.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScheduleEntrySpec {
    /// When the change applies, from the start of the run (entries in increasing order).
    #[schemars(range(max = MAX_AT_NS))]
    #[schemars(extend("x-backends" = {"sim": "honoured", "emu": "honoured"}))]
    pub at_ns: u64,
    /// The new link rate (packets already on the wire keep the old one).
    #[serde(default)]
    #[schemars(range(min = 1, max = MAX_RATE_BPS))]
    #[schemars(extend("x-backends" = {"sim": "honoured", "emu": "honoured"}))]
    pub rate_bps: Option<u64>,
    /// The new two-way base propagation delay.
    #[serde(default)]
    #[schemars(range(max = MAX_DELAY_NS))]
    #[schemars(extend("x-backends" = {"sim": "honoured", "emu": "honoured"}))]
    pub rtt_ns: Option<u64>,
    /// The new one-way propagation delay (a graph link's; a bottleneck has `rtt`).
    #[serde(default)]
    #[schemars(range(max = MAX_DELAY_NS))]
    #[schemars(extend("x-backends" = {"sim": "honoured", "emu": "honoured"}))]
    pub delay_ns: Option<u64>,
    /// The new Bernoulli loss on the data direction.
    #[serde(default)]
    #[schemars(range(min = 0.0), extend("exclusiveMaximum" = 1.0))]
    #[schemars(extend("x-backends" = {"sim": "honoured", "emu": "honoured"}))]
    pub loss: Option<f64>,
    /// The new buffer size (packets already queued stay).
    #[serde(default)]
    #[schemars(range(min = 1, max = MAX_BYTES))]
    #[schemars(extend("x-backends" = {"sim": "honoured", "emu": "honoured"}))]
    pub buffer_bytes: Option<u64>,
}

impl ScheduleEntrySpec {
    pub fn change(&self) -> Change {
        Change {
            at_ns: self.at_ns,
            rate_bps: self.rate_bps,
            rtt_ns: self.rtt_ns,
            delay_ns: self.delay_ns,
            loss: self.loss,
            limit: self.buffer_bytes.map(|b| Limit { bytes: Some(b), packets: None }),
        }
    }

    /// The validated schedule of a list of entries (errors name the entry's index).
    pub fn build(entries: &[ScheduleEntrySpec]) -> Result<Schedule, ScheduleError> {
        Schedule::new(entries.iter().map(ScheduleEntrySpec::change).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TestPacket;
    use serde_json::{json, Value};

    #[test]
    fn the_scenario_forms_parse_and_build() {
        let p: PolicerSpec =
            serde_json::from_value(json!({"rate_bps": 50_000_000, "burst_bytes": 64_000})).unwrap();
        assert_eq!(p.build().unwrap().burst_bytes(), 64_000);
        let a: AggregationSpec = serde_json::from_value(
            json!({"direction": "ack", "bytes": 16_000, "timeout_ns": 2_000_000}),
        )
        .unwrap();
        assert_eq!(a.direction, Direction::Ack);
        assert!(a.build::<TestPacket>().is_ok());
        let j: JitterSpec = serde_json::from_value(json!({"max_ns": 2_000_000})).unwrap();
        assert!(!j.reorder);
        let r: ReorderSpec =
            serde_json::from_value(json!({"probability": 0.01, "displacement": 3})).unwrap();
        assert_eq!(r.timeout_ns, super::super::reorder::REORDER_TIMEOUT_NS);
        let l: LossModelSpec = serde_json::from_value(
            json!({"kind": "gilbert_elliott", "p": 0.01, "r": 0.3, "h": 0.5, "k": 0.99}),
        )
        .unwrap();
        assert!((l.build().unwrap().mean_loss() - 0.025806).abs() < 1e-5);
        let s: Vec<ScheduleEntrySpec> = serde_json::from_value(json!([
            {"at_ns": 5_000_000_000u64, "rate_bps": 10_000_000},
            {"at_ns": 6_000_000_000u64, "buffer_bytes": 100_000, "rtt_ns": 40_000_000},
        ]))
        .unwrap();
        let sched = ScheduleEntrySpec::build(&s).unwrap();
        assert_eq!(sched.changes()[1].limit.unwrap().bytes, Some(100_000));
        let bad: Vec<ScheduleEntrySpec> =
            serde_json::from_value(json!([{"at_ns": 5, "loss": 0.1}, {"at_ns": 4, "loss": 0.2}]))
                .unwrap();
        assert!(matches!(
            ScheduleEntrySpec::build(&bad),
            Err(ScheduleError::NotIncreasing { index: 1, .. })
        ));
    }

    #[test]
    fn unknown_fields_are_refused() {
        assert!(serde_json::from_value::<PolicerSpec>(
            json!({"rate_bps": 1, "burst_bytes": 1500, "peak_bps": 2})
        )
        .is_err());
        assert!(serde_json::from_value::<LossModelSpec>(
            json!({"kind": "gilbert_elliott", "p": 0.1, "r": 0.1, "h": 0.0, "x": 1})
        )
        .is_err());
        assert!(
            serde_json::from_value::<ScheduleEntrySpec>(json!({"at_ns": 1, "rate": 2})).is_err()
        );
    }

    /// Every property of every object in `v` (recursively).
    fn properties<'a>(v: &'a Value, out: &mut Vec<(String, &'a Value)>) {
        match v {
            Value::Object(m) => {
                if let Some(Value::Object(props)) = m.get("properties") {
                    out.extend(props.iter().map(|(k, p)| (k.clone(), p)));
                }
                m.values().for_each(|x| properties(x, out));
            }
            Value::Array(a) => a.iter().for_each(|x| properties(x, out)),
            _ => {}
        }
    }

    #[test]
    fn every_field_is_marked_for_both_backends_and_documented() {
        let schemas = [
            serde_json::to_value(schemars::schema_for!(PolicerSpec)).unwrap(),
            serde_json::to_value(schemars::schema_for!(AggregationSpec)).unwrap(),
            serde_json::to_value(schemars::schema_for!(JitterSpec)).unwrap(),
            serde_json::to_value(schemars::schema_for!(ReorderSpec)).unwrap(),
            serde_json::to_value(schemars::schema_for!(LossModelSpec)).unwrap(),
            serde_json::to_value(schemars::schema_for!(ScheduleEntrySpec)).unwrap(),
        ];
        let mut n = 0;
        for s in &schemas {
            let mut props = vec![];
            properties(s, &mut props);
            for (name, p) in props {
                if name == "kind" {
                    continue; // the enum's tag
                }
                n += 1;
                let want = json!({"sim": "honoured", "emu": "honoured"});
                assert_eq!(p.get("x-backends"), Some(&want), "{name}: {p}");
                assert!(p.get("description").is_some(), "{name} has no doc comment");
            }
        }
        // A schedule entry: at, rate, rtt, delay (a graph link's), loss, buffer.
        assert_eq!(n, 2 + 3 + 2 + 3 + 4 + 6);
    }
}
