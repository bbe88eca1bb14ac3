//! The end of a run: packet conservation, per-flow summaries and the result tables.

use crate::metrics::{self, Table};
use crate::{gaps, Simulation};
use cc::Nanos;
use transport::Packet;

impl Simulation {
    /// One line per flow describing its sender's state (debugging aid).
    pub fn debug_flows(&self) -> Vec<String> {
        self.flows
            .iter()
            .map(|f| format!("nic_bytes={} {}", f.nic_bytes, f.sender.debug_state()))
            .collect()
    }

    /// Data packets of every flow inside the network (queues, serializers, pipes), in one pass
    /// over the links (a check of all flows stays linear in flows + packets, also with 100 000
    /// flows).
    fn data_packets_in_network_per_flow(&self) -> Vec<u64> {
        self.in_network_per_flow(false)
    }

    /// Packets of every flow inside the network, data and ACKs (echoes) alike. (A discipline
    /// or a path link's timing stage reports the data it holds only.)
    fn packets_in_network_per_flow(&self) -> Vec<u64> {
        self.in_network_per_flow(true)
    }

    fn in_network_per_flow(&self, acks_too: bool) -> Vec<u64> {
        let mut n = vec![0u64; self.flows.len()];
        let mut count = |p: &Packet| {
            if p.is_data || acks_too {
                n[p.flow as usize] += 1;
            }
        };
        for l in &self.links {
            l.queue.iter().for_each(&mut count);
            l.pipe.iter().for_each(|(_, p)| count(p));
            if l.cut_through_bytes == 0 {
                // (A cut-through link's packet in serialization is already in its pipe.)
                l.in_tx.iter().for_each(&mut count);
            }
        }
        for a in self.links.iter().filter_map(|l| l.aqm.as_deref()) {
            a.data_inside.add_to(&mut n); // held by a discipline (`link/aqm.rs`)
        }
        for pp in self.links.iter().filter_map(|l| l.path.as_deref()) {
            pp.held_data.add_to(&mut n); // in a path link's timing stages (`link/path.rs`)
        }
        if let Some(hm) = self.hosts.as_ref() {
            hm.count_waiting(&mut n); // in receive rings, not yet polled
        }
        n
    }

    /// Conservation of packets for every flow: sent = received + dropped + in the network.
    pub fn check_conservation(&self) -> Result<(), String> {
        let in_network = self.data_packets_in_network_per_flow();
        for (fi, f) in self.flows.iter().enumerate() {
            let inside = in_network[fi];
            if f.data_tx != f.data_rx + f.data_dropped + inside {
                return Err(format!(
                    "flow {fi}: sent {} != received {} + dropped {} + in network {}",
                    f.data_tx, f.data_rx, f.data_dropped, inside
                ));
            }
            if f.traffic == crate::traffic::NOT_TRAFFIC
                && f.sender.stats.data_packets_sent != f.data_tx
            {
                return Err(format!(
                    "flow {fi}: transport sent {} but NIC saw {}",
                    f.sender.stats.data_packets_sent, f.data_tx
                ));
            }
            // The receiver cannot have more in-order bytes than the sender has had acknowledged
            // plus what is in flight, nor fewer than acknowledged.
            let acked = f.sender.bytes_acked();
            if f.receiver.delivered_bytes < acked {
                return Err(format!(
                    "flow {fi}: receiver has {} bytes but sender saw {} acked",
                    f.receiver.delivered_bytes, acked
                ));
            }
        }
        Ok(())
    }

    /// The `flows` table row of flow `i`, whose algorithm has label code `cc_code`.
    pub(crate) fn flow_summary(&self, i: usize, cc_code: u8) -> metrics::FlowSummaryRow {
        let f = &self.flows[i];
        let start = f.start_ns.min(self.now);
        let end = match f.sender.completed_ns {
            Some(c) => c,
            None => f.stop_ns.unwrap_or(self.now).min(self.now),
        };
        let d = f.receiver.delivered_bytes;
        let active = end.saturating_sub(start);
        let s = &f.sender.stats;
        let per = |num: f64, den: u64| if den > 0 { num / den as f64 } else { f64::NAN };
        metrics::FlowSummaryRow {
            flow: i as i32,
            spec: f.spec,
            cc_code,
            start_s: start as f64 / 1e9,
            end_s: end as f64 / 1e9,
            fct_s: f.sender.completed_ns.map_or(f64::NAN, |c| (c - f.start_ns) as f64 / 1e9),
            delivered_bytes: d as i64,
            goodput_bps: if active > 0 { d as f64 * 8e9 / active as f64 } else { 0.0 },
            data_packets_sent: s.data_packets_sent as i64,
            retransmits: s.retransmits as i64,
            retrans_rate: if s.data_packets_sent > 0 {
                s.retransmits as f64 / s.data_packets_sent as f64
            } else {
                0.0
            },
            lost_packets: f.data_dropped as i64,
            rtt_mean_ms: if s.rtt_count > 0 {
                (s.rtt_sum_ns / s.rtt_count as u128) as f64 / 1e6
            } else {
                f64::NAN
            },
            rtt_p50_ms: f.sender.rtt_hist.quantile_ns(0.5) / 1e6,
            rtt_p95_ms: f.sender.rtt_hist.quantile_ns(0.95) / 1e6,
            rtt_p99_ms: f.sender.rtt_hist.quantile_ns(0.99) / 1e6,
            rto_count: s.rto_count as i64,
            retrans_fast: s.retrans_fast as i64,
            retrans_rto: s.retrans_rto as i64,
            retrans_tlp: s.retrans_tlp as i64,
            tlp_probes: s.tlp_probes as i64,
            lost_retrans: f.sender.lost_retransmits() as i64,
            recoveries: s.recoveries as i64,
            undos: s.spurious_undos as i64,
            spurious_rtos: s.spurious_rtos as i64,
            dsack_dups: s.dsack_recv_segs as i64,
            ce_packets: f.receiver.ce_count as i64,
            tso_bursts: s.tso_bursts as i64,
            tso_burst_mean_segs: per(s.tso_burst_segs as f64, s.tso_bursts),
            tso_goal_mean_segs: per(s.tso_goal_segs as f64, s.tso_bursts),
            rpc_count: f.rpc.as_ref().map_or(0, |a| a.count as i64),
            rpc_mean_ms: f
                .rpc
                .as_ref()
                .filter(|a| a.count > 0)
                .map_or(f64::NAN, |a| (a.latency_sum_ns / a.count as u128) as f64 / 1e6),
            rpc_p50_ms: f.rpc.as_ref().map_or(f64::NAN, |a| a.latency_hist.quantile_ns(0.5) / 1e6),
            rpc_p99_ms: f.rpc.as_ref().map_or(f64::NAN, |a| a.latency_hist.quantile_ns(0.99) / 1e6),
            acks_withheld: f.receiver.acks_withheld as i64,
            acks_sent: f.receiver.acks_sent as i64,
            cc_fast_acks: f.sender.tp.cc_fast_acks as i64,
            app: f.app.map_or(-1, |a| a.0 as i32),
            query: f.app.map_or(-1, |a| a.1 as i32),
            rx_done_s: f.rx_done_ns.map_or(f64::NAN, |t| t as f64 / 1e9),
        }
    }

    /// Per-flow summary and the columnar tables.
    pub fn results(&self) -> Results {
        let mut flows = metrics::FlowSummaryCols::default();
        let mut cc_labels: Vec<String> = Vec::new();
        for i in 0..self.flows.len() {
            if self.flows[i].traffic != crate::traffic::NOT_TRAFFIC {
                continue; // a UDP or ping source's route: its row is in the traffic table
            }
            let name = self.flows[i].cc_name;
            let code = cc_labels.iter().position(|c| c == name).unwrap_or_else(|| {
                cc_labels.push(name.to_string());
                cc_labels.len() - 1
            });
            flows
                .push(self.flow_summary(i, u8::try_from(code).expect("fewer than 256 algorithms")));
        }
        let flows = flows.table();
        let (timeseries, phase_labels) = self.metrics.timeseries_table();
        let queue = self.metrics.queue_table();
        let data_sent: u64 = self.flows.iter().map(|f| f.sender.stats.data_packets_sent).sum();
        Results {
            flows,
            timeseries,
            queue,
            gaps: gaps::table(self.flows.iter().enumerate().map(|(i, f)| (i, f.gaps.as_deref()))),
            app_events: self.app_events.table(),
            state: self.metrics.state_table(),
            traffic: self.traffic_table(&self.packets_in_network_per_flow()),
            pings: self.pings.table(),
            fct: self.fct.table(),
            packets: self.packets.table(),
            tap_labels: self.tap_labels(),
            kind_labels: crate::traffic::KIND_LABELS.iter().map(|s| s.to_string()).collect(),
            hosts: self.hosts.as_ref().map_or_else(
                || metrics::HostCols::default().table(),
                |hm| {
                    hm.table(self.now, self.flows.iter().map(|f| (f.rx_core, f.receiver.acks_sent)))
                },
            ),
            host_labels: self
                .hosts
                .as_ref()
                .map_or_else(Vec::new, |hm| hm.hosts.iter().map(|h| h.name.clone()).collect()),
            pause_frames: self.pause_frames_total,
            drops: self.links.iter().map(|l| l.stats.drops).sum(),
            cc_labels,
            phase_labels,
            queue_labels: self.metrics.queue_labels(),
            events: self.events,
            data_packets_delivered: self.data_packets_delivered,
            data_packets_sent: data_sent,
            sim_end_ns: self.now,
            complete: self.is_complete(),
        }
    }
}

/// Everything a run produces.
pub struct Results {
    pub flows: Table,
    pub timeseries: Table,
    pub queue: Table,
    /// Per-flow NIC inter-departure gap histograms (`gaps.rs`), for flows with `gap_histogram`.
    pub gaps: Table,
    /// One row per completed application query (`apps.rs`); Python calls it `events`.
    pub app_events: Table,
    /// One row per end host (`host.rs`; empty without the host model).
    pub hosts: Table,
    /// The per-ACK state trace of flows with `trace` (`metrics::STATE`).
    pub state: Table,
    pub host_labels: Vec<String>,
    /// One row per non-TCP source (`traffic.rs`), and one per ping echo.
    pub traffic: Table,
    pub pings: Table,
    /// One row per completed workload flow (`arrivals.rs`).
    pub fct: Table,
    /// The headers of flows with `pcap`, captured at their senders, and of every segment
    /// leaving a captured link (`capture.rs`).
    pub packets: Table,
    /// The packets table's `tap_code` labels: "sender", then the captured links.
    pub tap_labels: Vec<String>,
    /// The traffic table's `kind_code` labels.
    pub kind_labels: Vec<String>,
    /// PAUSE/XON frames sent by all switch ports (lossless mode).
    pub pause_frames: u64,
    /// Packets dropped for lack of buffer (and RED early drops) on all links.
    pub drops: u64,
    pub cc_labels: Vec<String>,
    pub phase_labels: Vec<String>,
    pub queue_labels: Vec<String>,
    pub events: u64,
    pub data_packets_delivered: u64,
    pub data_packets_sent: u64,
    pub sim_end_ns: Nanos,
    pub complete: bool,
}
