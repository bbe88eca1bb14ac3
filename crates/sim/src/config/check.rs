//! Checking a config: bounds from the schema, types by serde, relations between fields by hand.
//!
//! 1. [`check_bounds`] walks the JSON value beside the core's own JSON Schema and enforces every
//!    `minimum`/`maximum` (inclusive or exclusive) and `enum` there: the bounds written once on the
//!    types in `mod.rs`. The Python front enforces the same schema bounds before it calls the
//!    core, so both sides accept the same values by construction.
//! 2. [`deserialize`] reports type errors and unknown or missing fields with their path.
//! 3. [`Config::validate`] checks what one field alone cannot say (stop after start, a buffer
//!    of at least one packet, a query app's workers on the star, …) in the scenario's own terms.
//!
//! Every error carries the path of the field in this config (`flows.1.mss_bytes`); the front
//! turns it into the scenario's path (`flows.1.mss`) by dropping the unit suffix.

use super::check_queue::{check_ecn, check_qdisc, check_red, check_sender_qdisc};
use super::check_star::{check_star_buffers, check_star_racks};
use super::*;
use serde_json::{Map, Value};
use std::sync::OnceLock;

/// A config error: the field path (config names, `.`-separated, list items by index; empty for
/// the whole config) and what is wrong with it, in human units.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigError {
    pub path: String,
    pub message: String,
}

impl ConfigError {
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> ConfigError {
        ConfigError { path: path.into(), message: message.into() }
    }
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

impl std::error::Error for ConfigError {}

fn the_schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(schema)
}

/// Enforce the schema's numeric bounds and string enums on a raw config value.
pub fn check_bounds(value: &Value) -> Result<(), ConfigError> {
    let root = the_schema();
    // Borrowed, not cloned: a copy of the schema's definitions cost every run 2.9 M
    // instructions (0.25 % of `bbrlab-bench` (a)).
    let no_defs = Map::new();
    let defs = root.get("$defs").and_then(Value::as_object).unwrap_or(&no_defs);
    walk(value, root, defs, &mut Vec::new())
}

fn resolve<'a>(s: &'a Value, defs: &'a Map<String, Value>) -> &'a Value {
    match s.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix("#/$defs/")) {
        Some(name) => defs.get(name).map_or(s, |d| resolve(d, defs)),
        None => s,
    }
}

/// The strings a schema admits (`const` or `enum`, also across `oneOf` alternatives, as schemars
/// writes an enum whose variants have descriptions); empty if it admits any string.
fn allowed_strings<'a>(s: &'a Value, defs: &'a Map<String, Value>) -> Vec<&'a str> {
    let s = resolve(s, defs);
    let mut out: Vec<&str> = s.get("const").and_then(Value::as_str).into_iter().collect();
    out.extend(
        s.get("enum").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str),
    );
    for alt in
        s.get("oneOf").or_else(|| s.get("anyOf")).and_then(Value::as_array).into_iter().flatten()
    {
        out.extend(allowed_strings(alt, defs));
    }
    out
}

/// The alternative of a `oneOf`/`anyOf` that `v` takes: the tagged variant whose `kind` matches,
/// the externally tagged variant whose key `v` has, or the first non-null one.
fn pick<'a>(
    v: &Value,
    alts: &'a [Value],
    defs: &'a Map<String, Value>,
) -> Result<Option<&'a Value>, String> {
    let alts: Vec<&Value> = alts
        .iter()
        .map(|a| resolve(a, defs))
        .filter(|a| a.get("type") != Some(&Value::from("null")))
        .collect();
    let tags: Vec<&str> = alts
        .iter()
        .filter_map(|a| a.pointer("/properties/kind/const").and_then(Value::as_str))
        .collect();
    if !tags.is_empty() {
        let Some(kind) = v.get("kind") else { return Ok(None) };
        return match alts.iter().find(|a| a.pointer("/properties/kind/const") == Some(kind)) {
            Some(a) => Ok(Some(a)),
            None => Err(format!("kind: {kind} is not one of {}", tags.join(", "))),
        };
    }
    if let Some(obj) = v.as_object() {
        for a in &alts {
            let req = a.get("required").and_then(Value::as_array);
            if let Some([Value::String(key)]) = req.map(|r| r.as_slice()) {
                if obj.contains_key(key) {
                    return Ok(Some(a));
                }
            }
        }
    }
    Ok(alts.first().copied())
}

fn path_of(path: &[String]) -> String {
    path.join(".")
}

fn walk(
    v: &Value,
    s: &Value,
    defs: &Map<String, Value>,
    path: &mut Vec<String>,
) -> Result<(), ConfigError> {
    let s = resolve(s, defs);
    if let Value::String(text) = v {
        let allowed = allowed_strings(s, defs);
        if !allowed.is_empty() && !allowed.contains(&text.as_str()) {
            return Err(ConfigError::new(
                path_of(path),
                format!("{text:?} is not one of {}", allowed.join(", ")),
            ));
        }
        return Ok(());
    }
    if let Some(alts) = s.get("oneOf").or_else(|| s.get("anyOf")).and_then(Value::as_array) {
        if v.is_null() {
            return Ok(());
        }
        return match pick(v, alts, defs) {
            Ok(Some(alt)) => walk(v, alt, defs, path),
            Ok(None) => Ok(()), // serde reports what is missing
            Err(msg) => {
                let (field, msg) = msg.split_once(": ").unwrap_or(("", &msg));
                let mut p = path.clone();
                p.push(field.to_string());
                Err(ConfigError::new(path_of(&p), msg))
            }
        };
    }
    match v {
        Value::Number(n) => check_number(n, s, path),
        Value::Object(obj) => {
            let props = s.get("properties").and_then(Value::as_object);
            for (k, item) in obj {
                if let Some(ps) = props.and_then(|p| p.get(k)) {
                    path.push(k.clone());
                    walk(item, ps, defs, path)?;
                    path.pop();
                }
            }
            Ok(())
        }
        Value::Array(items) => {
            if let Some(is) = s.get("items") {
                for (i, item) in items.iter().enumerate() {
                    path.push(i.to_string());
                    walk(item, is, defs, path)?;
                    path.pop();
                }
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// Compare a JSON number with a bound exactly when both are integers, else as f64.
fn cmp(n: &serde_json::Number, bound: &Value) -> Option<std::cmp::Ordering> {
    let b = bound.as_number()?;
    match (n.as_i128(), b.as_i128()) {
        (Some(x), Some(y)) => Some(x.cmp(&y)),
        _ => n.as_f64()?.partial_cmp(&b.as_f64()?),
    }
}

fn check_number(n: &serde_json::Number, s: &Value, path: &[String]) -> Result<(), ConfigError> {
    use std::cmp::Ordering::*;
    let bound = |key: &str| s.get(key).filter(|b| b.is_number());
    let (lo, xlo, hi, xhi) =
        (bound("minimum"), bound("exclusiveMinimum"), bound("maximum"), bound("exclusiveMaximum"));
    let below = lo.is_some_and(|b| cmp(n, b) == Some(Less))
        || xlo.is_some_and(|b| matches!(cmp(n, b), Some(Less | Equal)));
    let above = hi.is_some_and(|b| cmp(n, b) == Some(Greater))
        || xhi.is_some_and(|b| matches!(cmp(n, b), Some(Greater | Equal)));
    if !(below || above) {
        return Ok(());
    }
    // The message only (every number of every flow passes through here).
    let field = path.last().map_or("", String::as_str);
    let show = |b: &Value| match b.as_u64() {
        Some(u) => human::value(field, u),
        None => b.to_string(),
    };
    let shown = match n.as_u64() {
        Some(u) => human::value(field, u),
        None => n.to_string(),
    };
    // The same wording as the front's (fields.Bounds): "in [a, b)", ">= a", "< b".
    let rule = match (lo.or(xlo), hi.or(xhi)) {
        (Some(l), Some(h)) => format!(
            "in {}{}, {}{}",
            if xlo.is_some() { "(" } else { "[" },
            show(l),
            show(h),
            if xhi.is_some() { ")" } else { "]" }
        ),
        (Some(l), None) => format!("{} {}", if xlo.is_some() { ">" } else { ">=" }, show(l)),
        (None, Some(h)) => format!("{} {}", if xhi.is_some() { "<" } else { "<=" }, show(h)),
        (None, None) => unreachable!(),
    };
    Err(ConfigError::new(path_of(path), format!("{shown} is out of range; it must be {rule}")))
}

/// Deserialize with the path of any type error, unknown or missing field.
pub fn deserialize(value: Value) -> Result<Config, ConfigError> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path: Vec<String> = e
            .path()
            .iter()
            .filter_map(|seg| match seg {
                serde_path_to_error::Segment::Seq { index } => Some(index.to_string()),
                serde_path_to_error::Segment::Map { key } => Some(key.clone()),
                serde_path_to_error::Segment::Enum { variant } => Some(variant.clone()),
                serde_path_to_error::Segment::Unknown => None,
            })
            .collect();
        ConfigError::new(path.join("."), e.into_inner().to_string())
    })
}

/// Scenario names become directory names: portable characters, no leading dot or dash.
fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphanumeric())
        && name.len() <= 100
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

pub(super) type Check = Result<(), ConfigError>;

pub(super) fn err(path: impl Into<String>, message: impl Into<String>) -> Check {
    Err(ConfigError::new(path, message))
}

impl Config {
    /// Relations between fields (bounds and types are checked by [`Config::from_json`]); the
    /// first problem wins.
    pub fn validate(&self) -> Check {
        if !valid_name(&self.name) {
            return err("name", format!("{:?} is not a usable name; use letters, digits, \".\", \"_\" or \"-\" (at most 100, e.g. \"bbr-vs-cubic\")", self.name));
        }
        // The sampling period and the run's length, as the sampling errors say them (formatted
        // only for an error).
        let every_and_run =
            || (human::time(self.sample_interval_ns), human::time(self.duration_ns));
        if self.sample_interval_ns > self.duration_ns {
            let (every, run) = every_and_run();
            return err(
                "sample_interval_ns",
                format!("{every} is longer than the run ({run}); it must be <= duration"),
            );
        }
        if self.flows.is_empty() && self.apps.is_empty() && self.traffic.is_empty() {
            return err(
                "flows",
                "there are no flows; add at least one [[flows]] table with cc = \"cubic\"",
            );
        }
        if self.flow_count() > MAX_FLOWS {
            return err(
                "flows",
                format!(
                    "{} flows after expanding count; the limit is {MAX_FLOWS}",
                    self.flow_count()
                ),
            );
        }
        for (i, f) in self.flows.iter().enumerate() {
            self.validate_flow(&format!("flows.{i}"), f)?;
        }
        self.validate_traffic()?;
        let rows = self.derived().sample_rows;
        if rows > MAX_SAMPLE_ROWS {
            let (every, run) = every_and_run();
            return err(
                "sample_interval_ns",
                format!("{every} over {run} gives {rows} table rows (flows and queues × samples), more than the {MAX_SAMPLE_ROWS} a run may hold; sample less often or run shorter"),
            );
        }
        match &self.topology {
            Topology::Dumbbell(d) => self.check_no_hosts_named().and(self.validate_dumbbell(d)),
            Topology::Star(s) => self.check_no_hosts_named().and(self.validate_star(s)),
            _ => self.validate_graph(),
        }?;
        self.validate_capture()
    }

    /// `capture.links`: each names a link of the `queue` table, once. The names are the
    /// topology builder's (`Built::monitored`), so the network is built to read them — only
    /// when a capture is asked for, once the rest of the config is known good.
    fn validate_capture(&self) -> Check {
        let wanted = &self.capture.links;
        if wanted.is_empty() {
            return Ok(());
        }
        let names = crate::topology::queue_names(&self.resolved());
        for (i, l) in wanted.iter().enumerate() {
            if !names.contains(&l.as_str()) {
                return err(
                    format!("capture.links.{i}"),
                    format!("unknown link {l:?}; the links are {}", name_list(&names)),
                );
            }
            if wanted[..i].contains(l) {
                return err(format!("capture.links.{i}"), format!("{l:?} is named twice"));
            }
        }
        Ok(())
    }

    /// When a flow or a traffic source at `p` sends: it starts before the end of the run and,
    /// if it stops, stops after it starts.
    pub(super) fn check_active_time(&self, p: &str, start_ns: u64, stop_ns: Option<u64>) -> Check {
        if start_ns >= self.duration_ns {
            return err(
                format!("{p}.start_ns"),
                format!(
                    "{} is not before the end of the run ({}); it must be < duration",
                    human::time(start_ns),
                    human::time(self.duration_ns)
                ),
            );
        }
        if let Some(stop) = stop_ns.filter(|&s| s <= start_ns) {
            return err(
                format!("{p}.stop_ns"),
                format!(
                    "{} is not after start ({}); it must be > start",
                    human::time(stop),
                    human::time(start_ns)
                ),
            );
        }
        Ok(())
    }

    fn validate_flow(&self, p: &str, f: &Flow) -> Check {
        if cc::registry::lookup(&f.cc).is_none() {
            let names = cc::registry::valid_names().join(", ");
            return err(
                format!("{p}.cc"),
                format!("unknown algorithm {:?}; valid names: {names}", f.cc),
            );
        }
        self.check_active_time(p, f.start_ns, f.stop_ns)?;
        for (key, buf) in [("sndbuf_bytes", f.sndbuf_bytes), ("rcvbuf_bytes", f.rcvbuf_bytes)] {
            if let Some(b) = buf.filter(|&b| b < f.mss_bytes as u64) {
                return err(
                    format!("{p}.{key}"),
                    format!(
                        "{} is smaller than one segment ({} B): the flow could never send",
                        human::size(b),
                        f.mss_bytes
                    ),
                );
            }
        }
        check_ecn(p, f)?;
        if f.app.is_some() && (f.rpc.is_some() || f.bytes.is_some()) {
            return err(
                format!("{p}.app"),
                "cannot be combined with rpc or bytes (the application writes the flow's data)",
            );
        }
        if f.rpc.is_some() && f.bytes.is_some() {
            return err(
                format!("{p}.rpc"),
                "cannot be combined with bytes (an RPC flow sends messages until the run ends)",
            );
        }
        Ok(())
    }

    fn validate_dumbbell(&self, d: &Dumbbell) -> Check {
        self.validate_workloads()?;
        if self.apps.iter().any(|a| matches!(a, App::Query(_))) {
            return err("apps", "query apps need a star topology (topology.kind = \"star\")");
        }
        let b = &d.bottleneck;
        check_qdisc(b)?;
        super::check_path::check_link_path(
            "topology.bottleneck",
            &b.path_keys(),
            b.rate_bps,
            super::check_path::DelayKey::Rtt,
            resolve::max_frame_bytes(self),
        )?;
        check_sender_qdisc(d.sender_qdisc.as_ref())?;
        let frame_bytes = resolve::max_frame_bytes(self);
        check_red("topology.bottleneck", b.red.as_ref(), b.qdisc.as_ref(), frame_bytes)?;
        let bdp = self.derived().bdp_bytes;
        if let Buffer::Bdp(x) = b.buffer {
            let bytes = buffer_bytes_of_bdp(x, bdp);
            if bytes == 0 {
                let why = if b.rtt_ns == 0 { " because rtt is 0 so the BDP is 0" } else { "" };
                return err("topology.bottleneck.buffer", format!("{x}bdp is 0 bytes{why}; a buffer must be > 0: give a size like \"64KB\" or \"100pkts\""));
            }
        }
        if let Some(bytes) = resolve::buffer_limit_bytes(&b.buffer, bdp) {
            let mss = self.flows.iter().map(|f| f.mss_bytes).max().unwrap_or(0) as u64;
            if bytes < mss {
                return err(
                    "topology.bottleneck.buffer",
                    format!(
                        "{} is smaller than one packet ({mss} B); every packet would be dropped",
                        human::size(bytes)
                    ),
                );
            }
        }
        Ok(())
    }

    fn validate_star(&self, st: &Star) -> Check {
        self.validate_workloads()?;
        self.check_star_flows(st)?;
        check_star_racks(st)?;
        check_star_buffers(st)?;
        self.check_query_apps(st)
    }

    /// Every flow's sender is one of the star's workers; no per-flow extra delay.
    fn check_star_flows(&self, st: &Star) -> Check {
        let mut flow_id = 0u64;
        for (i, f) in self.flows.iter().enumerate() {
            for _ in 0..f.count {
                let w = f.sender.map_or(flow_id, u64::from);
                if w >= st.workers as u64 {
                    return err(
                        format!("flows.{i}.sender"),
                        format!(
                            "worker {w} does not exist: the star has {} workers (0..{}); a flow without sender uses the worker with its flow number",
                            st.workers,
                            st.workers - 1
                        ),
                    );
                }
                flow_id += 1;
            }
            if f.extra_rtt_ns != 0 {
                return err(
                    format!("flows.{i}.extra_rtt_ns"),
                    "is not supported on a star; set topology.delay instead",
                );
            }
        }
        Ok(())
    }

    /// The query apps: their workers exist, their sizes and start fit the run, and their flow
    /// template leaves to the app what the app sets.
    fn check_query_apps(&self, st: &Star) -> Check {
        for (i, a) in self.apps.iter().enumerate() {
            let App::Query(a) = a else { continue };
            let p = format!("apps.{i}");
            if a.workers > st.workers {
                return err(
                    format!("{p}.workers"),
                    format!("{} is more than the star's {} workers", a.workers, st.workers),
                );
            }
            if a.size_bytes < a.workers as u64 {
                return err(
                    format!("{p}.size_bytes"),
                    format!("{} is less than one byte per worker", human::size(a.size_bytes)),
                );
            }
            if a.start_ns >= self.duration_ns {
                return err(
                    format!("{p}.start_ns"),
                    format!("{} is not before the end of the run", human::time(a.start_ns)),
                );
            }
            let f = &a.flow;
            let set_by_app = [
                ("start_ns", f.start_ns != 0),
                ("stop_ns", f.stop_ns.is_some()),
                ("bytes", f.bytes.is_some()),
                ("sender", f.sender.is_some()),
                ("rpc", f.rpc.is_some()),
                ("app", f.app.is_some()),
            ];
            if let Some((key, _)) = set_by_app.iter().find(|(_, set)| *set) {
                return err(format!("{p}.flow.{key}"), "is set by the query app; leave it out");
            }
            if f.count != 1 {
                return err(
                    format!("{p}.flow.count"),
                    "is set by the query app (one flow per worker); leave it out",
                );
            }
            if cc::registry::lookup(&f.cc).is_none() {
                return err(format!("{p}.flow.cc"), format!("unknown algorithm {:?}", f.cc));
            }
        }
        Ok(())
    }
}

/// `x` BDPs in whole bytes, ties to even (as the front's decimal arithmetic rounds).
pub(crate) fn buffer_bytes_of_bdp(x: f64, bdp_bytes: u64) -> u64 {
    (x * bdp_bytes as f64).round_ties_even() as u64
}

/// Names for an error message: all of them, or the first few and how many there are (a star
/// of 10 000 workers has 10 002 queues).
fn name_list(names: &[&str]) -> String {
    const SHOWN: usize = 12;
    if names.len() <= SHOWN {
        return names.join(", ");
    }
    format!("{}, … ({} in all)", names[..SHOWN].join(", "), names.len())
}
