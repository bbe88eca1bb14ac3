//! Key groups that several config structs share, each written once: a struct is declared
//! through the group's macro with its own keys before the group (and, where the schema has
//! more of its own after it, `then { … }`), so the shared keys keep their place in the schema
//! and in the resolved config's JSON. serde's `flatten` would share a struct of them instead,
//! but it does not work with `deny_unknown_fields`.

/// Declares a config struct (the derives and `deny_unknown_fields` every one has): its own keys,
/// then `shared`, keys that several structs have, written once by the macro that shares them
/// (`source!`, `dc_preset!`, `active_time!`, `ecn_step_marking!`, `shared_buffer!`), then,
/// optionally, more of its own keys (`then`).
macro_rules! keys_then_shared {
    ($(#[$m:meta])* $name:ident { $($own:tt)* } shared { $($shared:tt)* }
     $(then { $($after:tt)* })?) => {
        $(#[$m])*
        #[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            $($own)*
            $($shared)*
            $($($after)*)?
        }
    };
}

/// Declares a struct with `start_ns` and `stop_ns`, when something that sends (a flow, a
/// non-TCP source) is active; `check_active_time` checks them alike. `start` and `stop` are
/// their descriptions (what starts and stops).
macro_rules! active_time {
    ($(#[$m:meta])* $name:ident { $($own:tt)* } start: $start:literal, stop: $stop:literal
     $(, then { $($after:tt)* })?) => {
        keys_then_shared! { $(#[$m])* $name { $($own)* } shared {
            #[doc = $start]
            #[serde(default)]
            #[schemars(range(max = MAX_DURATION_NS))]
            #[schemars(extend("x-backends" = BOTH))]
            pub start_ns: u64,
            #[doc = $stop]
            #[serde(default)]
            #[schemars(range(max = MAX_DURATION_NS))]
            #[schemars(extend("x-backends" = BOTH))]
            pub stop_ns: Option<u64>,
        } $(then { $($after)* })? }
    };
}

/// Declares a struct with a switch's shared buffer and its dynamic threshold (a star's switch
/// and a graph's, `[topology.fabric]`), marked for the emulator as the star is.
macro_rules! shared_buffer {
    ($(#[$m:meta])* $name:ident { $($own:tt)* } $(then { $($after:tt)* })?) => {
        keys_then_shared! { $(#[$m])* $name { $($own)* } shared {
            /// Limit on the bytes queued in all output ports together (none by default). With
            /// PFC's ingress accounting: the pool the ingress ports' usage below XOFF draws on
            /// (headroom is reserved per port, outside it).
            #[serde(default)]
            #[schemars(range(min = 1, max = MAX_BUFFER_BYTES))]
            #[schemars(extend("x-backends" = EMU_WITHIN))]
            pub shared_buffer_bytes: Option<u64>,
            /// Dynamic threshold of the shared buffer (Mellanox and Broadcom call it alpha;
            /// Choudhury and Hahne 1998): an output queue takes a packet only while its bytes
            /// stay below `alpha` × the free shared buffer, so one congested queue gets
            /// alpha / (1 + alpha) of the pool. Needs `shared_buffer`; none = first come, first
            /// served up to the pool.
            #[serde(default)]
            #[schemars(range(min = 0.0078125, max = 64.0))]
            #[schemars(extend("x-backends" = EMU_WITHIN))]
            pub shared_buffer_alpha: Option<f64>,
        } $(then { $($after)* })? }
    };
}

/// Declares a link's struct with the drop-tail FIFO's step ECN marking thresholds (a
/// dumbbell's bottleneck and a graph's links mark alike), marked for the backends as
/// `backends` says; with `path_model`, also the path model's keys (issue 30: a schedule, traces,
/// a policer, aggregation, jitter, reordering, burst loss) after its own `then` keys, marked
/// `$pb`, and `path_keys()`, the view of them that the check and the builder read
/// (`PathKeys`). `schedule` and `trace_reverse` are those keys' descriptions (what a schedule
/// changes and what the way back runs at differ between the two links).
macro_rules! ecn_step_marking {
    ($(#[$m:meta])* $name:ident { $($own:tt)* } backends: $backends:ident
     $(, then { $($after:tt)* })?
     $(, path_model: $pb:ident, schedule: $sdoc:literal, trace_reverse: $rdoc:literal)?) => {
        keys_then_shared! { $(#[$m])* $name { $($own)* } shared {
            // The description is one line, as `///` would give it at a shallower indent.
            #[doc = " CE-mark ECN-capable packets arriving when more than this many bytes wait \
                     (DCTCP's K)."]
            #[serde(default)]
            #[schemars(range(min = 1, max = MAX_BUFFER_BYTES))]
            #[schemars(extend("x-backends" = $backends))]
            pub ecn_threshold_bytes: Option<u64>,
            /// The same threshold in packets (a packet is marked if either threshold is exceeded).
            #[serde(default)]
            #[schemars(range(min = 1, max = 1_000_000_000))]
            #[schemars(extend("x-backends" = $backends))]
            pub ecn_threshold_packets: Option<u64>,
        } then { $($($after)*)? $(
            #[doc = $sdoc]
            #[serde(default, skip_serializing_if = "Vec::is_empty")]
            #[schemars(extend("x-backends" = $pb, "default" = []))]
            pub schedule: Vec<ScheduleEntrySpec>,
            /// The data direction's rate follows this trace instead of `rate`: Mahimahi's format
            /// (one line per 1500-byte delivery opportunity, in ms, looping) or, for a `.csv`
            /// file, lines of `t_ms, rate_bps`. The front reads the file (its path relative to
            /// the scenario).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            #[schemars(extend("x-backends" = $pb, "default" = null))]
            pub trace: Option<TraceFile>,
            #[doc = $rdoc]
            #[serde(default, skip_serializing_if = "Option::is_none")]
            #[schemars(extend("x-backends" = $pb, "default" = null))]
            pub trace_reverse: Option<TraceFile>,
            /// A token-bucket policer on the data direction, before the queue: conforming
            /// packets pass, the others are dropped (counted in the queue table's
            /// `policer_drops`).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            #[schemars(extend("x-backends" = $pb, "default" = null))]
            pub policer: Option<PolicerSpec>,
            /// Link-layer aggregation after the transmitter, on the direction it names (`ack`:
            /// the ACK direction's link).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            #[schemars(extend("x-backends" = $pb, "default" = null))]
            pub aggregation: Option<AggregationSpec>,
            /// Delay jitter on the data direction, after the transmitter.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            #[schemars(extend("x-backends" = $pb, "default" = null))]
            pub jitter: Option<JitterSpec>,
            /// Reordering on the data direction, after the transmitter (and after `jitter`).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            #[schemars(extend("x-backends" = $pb, "default" = null))]
            pub reorder: Option<ReorderSpec>,
            /// A burst-loss process on the data direction, before the queue, beside `loss`.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            #[schemars(extend("x-backends" = $pb, "default" = null))]
            pub loss_model: Option<LossModelSpec>,
        )? } }
        $(
        impl $name {
            #[doc = concat!(" Its path-model keys, for the check and the builder (backends: `",
                stringify!($pb), "`).")]
            pub fn path_keys(&self) -> PathKeys<'_> {
                PathKeys {
                    schedule: &self.schedule,
                    trace: self.trace.as_ref(),
                    trace_reverse: self.trace_reverse.as_ref(),
                    policer: self.policer.as_ref(),
                    aggregation: self.aggregation.as_ref(),
                    jitter: self.jitter.as_ref(),
                    reorder: self.reorder.as_ref(),
                    loss_model: self.loss_model.as_ref(),
                }
            }
        }
        )?
    };
}
