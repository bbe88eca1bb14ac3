//! The flow-size workload (`[[apps]] kind = "workload"`): flows arriving as a Poisson process
//! at a target load of a named link, sizes drawn from a CDF file (`cdf.rs`).

use super::backends::*;
use super::*;
use crate::cdf::Cdf;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Poisson arrivals at `load` of `link`'s rate, sizes from `cdf`; one row per flow in the `fct`
/// table (FCT and slowdown).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkloadApp {
    /// The flow-size distribution: `"websearch"` (the DCTCP paper's), `"datamining"` (VL2's)
    /// or a file of `size_bytes cumulative_probability` lines; the front reads it.
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub cdf: CdfFile,
    /// Offered load: arrival rate × mean size over the link's rate (0 < load < 1).
    #[schemars(range(min = 0.0, max = 1.0))]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub load: f64,
    /// The link whose rate the load refers to (a dumbbell: `"bottleneck"`, the default; a
    /// graph: a directed link's name, or none for the sender hosts' links: each carries `load`
    /// of its rate on average, as the data-center papers define an all-to-all load).
    #[serde(default)]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub link: Option<String>,
    /// Algorithm of every flow.
    #[schemars(extend("enum" = cc::registry::valid_names()))]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub cc: String,
    /// ECN of every flow, as a flow's `ecn` (DCTCP needs "ect0" and queues that mark).
    #[serde(default, deserialize_with = "super::flows::ecn_mode")]
    #[schemars(with = "super::flows::EcnField")]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub ecn: EcnMode,
    /// On a graph: the hosts flows leave from, each flow's drawn uniformly (none: every host).
    #[serde(default)]
    #[schemars(length(min = 1))]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub src: Option<Vec<String>>,
    /// On a graph: the hosts flows go to, each flow's drawn uniformly among them other than its
    /// source (none: every host) — all-to-all random pairs by default.
    #[serde(default)]
    #[schemars(length(min = 1))]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub dst: Option<Vec<String>>,
    /// On a dumbbell: sender hosts the flows leave from, in turn (their NICs are shared as a
    /// host's is).
    #[serde(default = "default_workload_hosts")]
    #[schemars(range(min = 1, max = 1_000))]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub hosts: u32,
    /// When arrivals begin.
    #[serde(default)]
    #[schemars(range(max = MAX_DURATION_NS))]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub start_ns: u64,
    /// When arrivals end (none: at the end of the run); flows under way go on.
    #[serde(default)]
    #[schemars(range(max = MAX_DURATION_NS))]
    #[schemars(extend("x-backends" = EMU_WITHIN))]
    pub stop_ns: Option<u64>,
}

/// 16 sender hosts: a rack's worth, as the data-center studies' traffic generators spread flows.
fn default_workload_hosts() -> u32 {
    16
}

/// A CDF file as the front hands it over: its name and contents (so the contents enter the
/// run's cache id, as a trace's do).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CdfFile {
    /// The file's path as the scenario gives it (or the shipped distribution's name).
    #[schemars(extend("x-backends" = BOTH))]
    pub file: String,
    /// The file's contents.
    #[schemars(extend("x-backends" = BOTH))]
    pub text: String,
}

impl CdfFile {
    /// The parsed distribution; the error names the file and the line.
    pub fn parse(&self) -> Result<Cdf, String> {
        Cdf::parse(&self.text).map_err(|e| format!("{}: {e}", self.file))
    }
}

impl Config {
    /// The workload apps: a parsable CDF, a load below 1, a link the topology has.
    pub(super) fn validate_workloads(&self) -> check::Check {
        use check::err;
        for (i, a) in self.apps.iter().enumerate() {
            let App::Workload(w) = a else { continue };
            let p = format!("apps.{i}");
            if let Err(e) = w.cdf.parse() {
                return err(format!("{p}.cdf"), e);
            }
            if !(w.load > 0.0 && w.load < 1.0) {
                return err(
                    format!("{p}.load"),
                    format!("{} is not a load the link can carry; it must be > 0 and < 1", w.load),
                );
            }
            if cc::registry::lookup(&w.cc).is_none() {
                return err(format!("{p}.cc"), format!("unknown algorithm {:?}", w.cc));
            }
            match &self.topology {
                Topology::Dumbbell(_) => {
                    if let Some(l) = w.link.as_deref().filter(|&l| l != "bottleneck") {
                        return err(
                            format!("{p}.link"),
                            format!("unknown link {l:?}: a dumbbell's is \"bottleneck\""),
                        );
                    }
                }
                Topology::Star(_) => {
                    return err(p, "workload apps run on a dumbbell or a graph (or a preset)");
                }
                _ => self.validate_graph_workload(&p, w)?,
            }
            if matches!(self.topology, Topology::Dumbbell(_)) {
                for (key, set) in [("src", &w.src), ("dst", &w.dst)] {
                    if set.is_some() {
                        return err(
                            format!("{p}.{key}"),
                            "names hosts, which only a graph has (topology.kind = \"graph\" or a \
                             preset); a dumbbell's workload sends from its own hosts",
                        );
                    }
                }
            }
            if w.start_ns >= self.duration_ns {
                return err(
                    format!("{p}.start_ns"),
                    format!("{} is not before the end of the run", human::time(w.start_ns)),
                );
            }
        }
        Ok(())
    }
}
