//! Checks of a graph (`graph.rs`) and of its flows: every error names one field in one line
//! (an unknown node, a name used twice, a graph in pieces, a flow without a route).

use super::check::{err, Check};
use super::check_path::{check_link_path, DelayKey};
use super::check_queue::check_red;
use super::check_star::check_alpha_has_pool;
use super::*;
use crate::topology::routing::{routes, Net};
use pathmodel::impair::spec::Direction;

impl Config {
    /// A graph topology (or a preset, expanded), its links and its flows' routes.
    pub(super) fn validate_graph(&self) -> Check {
        if let Topology::FatTree(f) = &self.topology {
            if f.k % 2 == 1 {
                return err("topology.k", format!("{} is odd; a fat-tree's k is even", f.k));
            }
        }
        let Some(g) = self.topology.graph() else {
            return Ok(());
        };
        if let Some(i) = self.apps.iter().position(|a| matches!(a, App::Query(_))) {
            return err(
                format!("apps.{i}"),
                "query apps need a star topology (topology.kind = \"star\")",
            );
        }
        let net = Net::of(&g)?;
        let mss = self.flows.iter().map(|f| f.mss_bytes).max().unwrap_or(0) as u64;
        let frame_bytes = resolve::max_frame_bytes(self);
        for (i, l) in g.links.iter().enumerate() {
            check_graph_link(&format!("topology.links.{i}"), l, mss, frame_bytes)?;
        }
        check_graph_fabric(&g)?;
        for (i, f) in self.flows.iter().enumerate() {
            if f.sender.is_some() {
                return err(
                    format!("flows.{i}.sender"),
                    "is not used on a graph: flows from one src host share its link",
                );
            }
            if f.extra_rtt_ns > 0 {
                return err(
                    format!("flows.{i}.extra_rtt_ns"),
                    "is not used on a graph: give the links delays",
                );
            }
        }
        routes(self, &net)?;
        self.validate_workloads()
    }

    /// Flows name hosts only on a graph.
    pub(super) fn check_no_hosts_named(&self) -> Check {
        for (i, f) in self.flows.iter().enumerate() {
            for (key, v) in [("src", &f.src), ("dst", &f.dst)] {
                if v.is_some() {
                    return err(
                        format!("flows.{i}.{key}"),
                        "names a host, which only a graph has (topology.kind = \"graph\" or a \
                         preset)",
                    );
                }
            }
        }
        Ok(())
    }
}

/// One link's queue: a buffer a link can size alone, a discipline without RED or step marking
/// beside it, RED's thresholds in order; its path model as a bottleneck's, with a way back for
/// what acts on the way back.
fn check_graph_link(p: &str, l: &GraphLink, mss: u64, frame_bytes: u32) -> Check {
    let keys = l.path_keys();
    check_link_path(p, &keys, l.rate_bps, DelayKey::Delay, frame_bytes)?;
    let ack_aggregation = keys.aggregation.is_some_and(|a| a.direction == Direction::Ack);
    let way_back =
        [("trace_reverse", keys.trace_reverse.is_some()), ("aggregation", ack_aggregation)];
    if let Some((key, _)) = way_back.iter().find(|(_, on)| *on) {
        if !l.duplex {
            return err(
                format!("{p}.{key}"),
                "acts on the way back, which a link with duplex = false does not have",
            );
        }
    }
    if keys.trace_reverse.is_some() && l.reverse_rate_bps.is_some() {
        return err(
            format!("{p}.trace_reverse"),
            "cannot be combined with reverse_rate: the way back's rate comes from its trace",
        );
    }
    match l.buffer {
        Buffer::Bdp(_) => {
            return err(
                format!("{p}.buffer"),
                "a BDP multiple needs an RTT, which a link alone does not have; give a size like \
                 \"64KB\" or \"100pkts\"",
            )
        }
        Buffer::Bytes(b) if b < mss => {
            return err(
                format!("{p}.buffer"),
                format!(
                    "{} is smaller than one packet ({mss} B); every packet would be dropped",
                    human::size(b)
                ),
            )
        }
        _ => {}
    }
    if let Some(q) = l.qdisc.as_ref().filter(|q| !matches!(q, QdiscSpec::Droptail { .. })) {
        // RED in the qdisc form is the native RED: step marking may stand beside it.
        let red = q.is_red();
        let set = [
            ("red", l.red.is_some()),
            ("ecn_threshold_bytes", l.ecn_threshold_bytes.is_some() && !red),
            ("ecn_threshold_packets", l.ecn_threshold_packets.is_some() && !red),
        ];
        if let Some((field, _)) = set.iter().find(|(_, on)| *on) {
            let kind = serde_json::to_value(q).ok();
            let kind = kind.as_ref().and_then(|v| v["kind"].as_str()).unwrap_or("?").to_owned();
            return err(
                format!("{p}.{field}"),
                format!(
                    "conflicts with qdisc \"{kind}\": the discipline is the link's whole queue \
                     model; remove {field} or the qdisc"
                ),
            );
        }
    }
    check_red(p, l.red.as_ref(), l.qdisc.as_ref(), frame_bytes)
}

/// The fabric's keys as a star's: one switch's shared pool (the simulator has one), alpha with
/// a pool, a lossless switch's buffers above XOFF.
fn check_graph_fabric(g: &Graph) -> Check {
    let Some(f) = &g.fabric else { return Ok(()) };
    let switches = g.nodes.iter().filter(|n| n.kind == NodeRole::Switch).count();
    if f.shared_buffer_bytes.is_some() && switches > 1 {
        return err(
            "topology.fabric.shared_buffer_bytes",
            format!("is one switch's pool; this graph has {switches} switches, leave it out"),
        );
    }
    check_alpha_has_pool("topology.fabric", f.shared_buffer_bytes, f.shared_buffer_alpha)?;
    if !f.lossless {
        return Ok(());
    }
    let xoff = f.pfc.xoff_bytes;
    let below =
        |bytes: u64| format!("{} is below pfc.xoff ({})", human::size(bytes), human::size(xoff));
    if let Some(b) = f.shared_buffer_bytes.filter(|&b| b < xoff) {
        if f.pfc.accounting == PfcAccounting::Ingress {
            return err(
                "topology.fabric.shared_buffer_bytes",
                format!("{}; no ingress port could reach XOFF", below(b)),
            );
        }
    }
    if f.pfc.accounting == PfcAccounting::Egress {
        for (i, l) in g.links.iter().enumerate() {
            let from_switch = g.node(&l.from).is_some_and(|n| n.kind == NodeRole::Switch);
            let to_switch = g.node(&l.to).is_some_and(|n| n.kind == NodeRole::Switch);
            if let (Some(b), true) =
                (l.limits().0.filter(|&b| b < xoff), from_switch || (to_switch && l.duplex))
            {
                return err(
                    format!("topology.links.{i}.buffer"),
                    format!("{}; a lossless switch's port needs room above XOFF", below(b)),
                );
            }
        }
    }
    Ok(())
}
