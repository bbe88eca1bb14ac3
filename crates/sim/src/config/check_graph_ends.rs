//! Checks of what a graph's traffic sources and workload apps name (`traffic.rs`,
//! `workload_app.rs`): hosts that exist, a link that exists, a route between every pair they
//! can draw. Every error names one field in one line.

use super::check::{err, Check};
use super::*;
use crate::topology::routing::{flow_key, host_named, Net, Router};

impl Config {
    /// Traffic source `p` (`t`'s route) on a graph: `src` and `dst` name two hosts with a route.
    pub(super) fn validate_graph_traffic(&self, p: &str, t: TrafficRoute<'_>) -> Check {
        let Some(g) = self.topology.graph() else { return Ok(()) };
        let net = Net::of(&g)?;
        if t.sender.is_some() {
            return err(
                format!("{p}.sender"),
                "is not used on a graph: sources from one src host share its link",
            );
        }
        let host = |key: &str, name: Option<&str>| match name {
            None => Err(ConfigError::new(
                format!("{p}.{key}"),
                "a source on a graph names its hosts (src and dst)",
            )),
            Some(name) => host_named(&net, format!("{p}.{key}"), name),
        };
        let (src, dst) = (host("src", t.src)?, host("dst", t.dst)?);
        if src == dst {
            return err(format!("{p}.dst"), format!("is the source's src ({:?})", net.names[src]));
        }
        let mut router = Router::new(net);
        match router.pair(src, dst, flow_key(self.seed, 0)) {
            Ok(_) => Ok(()),
            Err(e) => Err(e.error(&router.net, format!("{p}.dst"))),
        }
    }

    /// Workload app `p` on a graph: its hosts exist, its link exists, every pair it can draw
    /// has a route (equal-cost paths have equal lengths, so one per pair is enough).
    pub(super) fn validate_graph_workload(&self, p: &str, w: &WorkloadApp) -> Check {
        let Some(g) = self.topology.graph() else { return Ok(()) };
        let net = Net::of(&g)?;
        if let Some(l) = &w.link {
            if !net.dir.iter().any(|d| &d.name == l) {
                return err(
                    format!("{p}.link"),
                    format!("unknown link {l:?}: no direction of any link has this name"),
                );
            }
        }
        let set = |key: &str, names: &Option<Vec<String>>| -> Result<Vec<usize>, ConfigError> {
            match names {
                None => Ok(net.hosts()),
                Some(names) => names
                    .iter()
                    .enumerate()
                    .map(|(j, n)| host_named(&net, format!("{p}.{key}.{j}"), n))
                    .collect(),
            }
        };
        let (srcs, dsts) = (set("src", &w.src)?, set("dst", &w.dst)?);
        if srcs.iter().all(|s| dsts.iter().all(|d| d == s)) {
            return err(
                format!("{p}.dst"),
                "leaves no destination other than the source; name another host",
            );
        }
        let mut router = Router::new(net);
        for &s in &srcs {
            for &d in dsts.iter().filter(|&&d| d != s) {
                if let Err(e) = router.pair(s, d, flow_key(self.seed, 0)) {
                    return Err(e.error(&router.net, format!("{p}.dst")));
                }
            }
        }
        Ok(())
    }
}
