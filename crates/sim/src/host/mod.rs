//! End hosts: CPU cores, NIC receive queues with interrupt moderation, receive offload (GRO),
//! and what the stack's work costs (scenario `[hosts]`; off when absent).
//!
//! Model (each piece is what the Google BBRv2 slides' host metrics and ESnet's single-stream
//! ceilings depend on):
//! - **Hosts and cores.** A host is identified by its NIC: flows whose data leave on the same
//!   NIC share a sender host, flows whose ACKs leave on the same NIC share a receiver host. Every
//!   host has `cores` cores; flow `i`'s protocol work runs on core `i mod cores` at both ends
//!   (RSS steers a flow's packets to one receive queue, XPS its transmissions to one transmit
//!   queue, and its softirq work follows), so a single stream cannot use more than one core.
//!   A core is a FIFO server: work is charged at the instant it is done and pushes the core's
//!   `busy_until_ns`; work that finds the core busy waits for it.
//! - **Receive queues and interrupts.** A packet reaching a host waits in its core's ring
//!   (`rx_ring_pkts`; full → dropped, counted in `rx_ring_drops`). The first packet that finds
//!   no interrupt pending arms one `irq_delay` later (`rx-usecs`), or at once when `irq_frames`
//!   packets wait (`rx-frames`) — never before the core is free. The interrupt starts a NAPI
//!   poll that takes up to `napi_budget` packets; a poll that leaves packets behind is followed
//!   by another when the core is free (no new interrupt, as NAPI keeps polling under load).
//!   All packets of a poll are handed over at the poll's start; the work they cost follows it.
//! - **GRO.** Within a poll, a data segment that continues the open skb of its flow (next
//!   sequence number, same CE bit — GRO flushes on a TOS difference — and the skb stays within
//!   `gro_max_bytes`) is merged into it; otherwise the flow's open skb is flushed to TCP and a
//!   new one opened. At most 8 flows hold an open skb (Linux `MAX_GRO_SKBS`); a ninth flushes
//!   the oldest. The poll's end flushes them all. TCP sees one skb: one ACK decision for all of
//!   it (`Receiver::on_data_in_skb`), i.e. stretch ACKs. Pure ACKs are never merged.
//! - **Costs.** Receiver: `irq_cost` per interrupt, `rx_segment_cost` per packet, `rx_skb_cost`
//!   per skb after GRO, the payload at `rx_copy_rate`. Sender: `tx_chunk_cost` per offload
//!   chunk, `tx_segment_cost` per segment, new payload at `tx_copy_rate`, `ack_cost` per ACK,
//!   `cc_ack_cost` per ACK the congestion control does not skip (`TcpCc::cc_fast_acks`), and
//!   `timer_cost` per pacing/retransmission/delayed-ACK timer. A sender whose core is busy starts
//!   no new offload chunk before the core is free (the segments of a chunk leave together).
//! - **TSQ per skb.** The NIC takes whole skbs: TSQ is checked before a chunk starts, not inside
//!   one (Linux `tcp_write_xmit` → `tcp_small_queue_check` per skb), and a flow's budget comes
//!   back when the last segment of an skb has left (TX completion frees the skb whole), not per
//!   segment. Without the host model the budget comes back per segment, so a TSQ-limited flow
//!   sends one-segment chunks (`tsq_tests`).
//!
//! - **Flow control** (`flow_control`, 802.3x as `ethtool -A rx on`): a ring 3/4 full makes the
//!   host pause every link that feeds it until all its rings are at most half full; the quarter
//!   left takes what is already on its way. The last switch port then queues, and drops at its
//!   own limit (a dumbbell's port towards a host gets the bottleneck's buffer).
//!
//! What it leaves out: cache effects (a copy costs the same however long the data waited),
//! interrupts of other devices, the application thread on its own core (its copy is charged
//! to the flow's core), LRO in hardware (GRO's rules are used), and TX completion interrupts.

mod rx;
#[cfg(test)]
mod tests;

use crate::link::LinkId;
use crate::metrics;
use crate::{config, EvKind, Simulation};
use cc::Nanos;
use std::collections::VecDeque;
use transport::Packet;

/// Linux `MAX_GRO_SKBS`: flows holding an open GRO skb at once per NAPI instance.
const MAX_GRO_FLOWS: usize = 8;

/// One core.
#[derive(Clone, Copy, Debug, Default)]
struct Core {
    busy_until_ns: Nanos,
    busy_ns: u64,
}

/// One core's receive queue.
#[derive(Debug, Default)]
struct RxQueue {
    ring: VecDeque<Packet>,
    /// When the pending interrupt or poll runs (None: none pending); an event for another time
    /// is stale.
    poll_at: Option<Nanos>,
    /// The pending poll follows a poll that left packets (no interrupt cost).
    repoll: bool,
    /// Flow control: this ring is over XOFF (3/4 full) and has not yet drained to XON (1/2).
    fc_over: bool,
}

/// A flow's open GRO skb: its last segment is held back until the skb is flushed, so the
/// receiver learns which segment ends it.
#[derive(Clone, Copy, Debug)]
struct OpenSkb {
    flow: u32,
    last: Packet,
    bytes: u64,
}

/// What one host did over the run (the `hosts` table).
#[derive(Clone, Debug, Default)]
pub(crate) struct HostStats {
    pub interrupts: u64,
    pub polls: u64,
    pub packets_polled: u64,
    pub data_segs_rx: u64,
    pub skbs_rx: u64,
    pub payload_rx_bytes: u64,
    pub acks_rx: u64,
    pub data_segs_tx: u64,
    pub chunks_tx: u64,
    pub payload_tx_bytes: u64,
    pub timers: u64,
    pub rx_ring_drops: u64,
    /// PAUSE and XON frames the host's NIC sent (flow control).
    pub pause_frames: u64,
}

pub(crate) struct Host {
    pub name: String,
    pub is_sender: bool,
    pub stats: HostStats,
    /// Flow control: the links that feed the host (seen so far) and how many of its rings are
    /// over XOFF; while any is, those links are paused.
    fc_links: Vec<LinkId>,
    fc_rings_over: u32,
}

/// The hosts of a run and their cores; core `c` of host `h` is `h · cores + c`, and so is its
/// receive queue.
pub(crate) struct Hosts {
    pub cfg: config::Hosts,
    pub hosts: Vec<Host>,
    cores: Vec<Core>,
    queues: Vec<RxQueue>,
    /// Open GRO skbs of the poll under way (reused).
    gro: Vec<OpenSkb>,
    /// The sender or receiver host already made for a NIC link.
    by_nic: std::collections::HashMap<(LinkId, bool), u32>,
    /// ps of CPU per payload byte copied, received and sent.
    rx_copy_ps_per_byte: u64,
    tx_copy_ps_per_byte: u64,
}

impl Hosts {
    pub(crate) fn new(cfg: config::Hosts) -> Hosts {
        let ps_per_byte = |rate_bps: u64| (8_000_000_000_000u128 / rate_bps as u128) as u64;
        Hosts {
            rx_copy_ps_per_byte: ps_per_byte(cfg.rx_copy_rate_bps),
            tx_copy_ps_per_byte: ps_per_byte(cfg.tx_copy_rate_bps),
            cfg,
            hosts: Vec::new(),
            cores: Vec::new(),
            queues: Vec::new(),
            gro: Vec::with_capacity(MAX_GRO_FLOWS),
            by_nic: Default::default(),
        }
    }

    /// The core flow `fi` runs on at the host whose NIC is `nic` (a sender host when
    /// `is_sender`), making the host on first use.
    pub(crate) fn core_for(&mut self, nic: LinkId, is_sender: bool, fi: usize) -> u32 {
        let cores = self.cfg.cores;
        let n_hosts = self.hosts.len() as u32;
        let h = *self.by_nic.entry((nic, is_sender)).or_insert(n_hosts);
        if h == n_hosts {
            let k = self.hosts.iter().filter(|x| x.is_sender == is_sender).count();
            let name = format!("{}{k}", if is_sender { "sender" } else { "receiver" });
            self.hosts.push(Host {
                name,
                is_sender,
                stats: HostStats::default(),
                fc_links: Vec::new(),
                fc_rings_over: 0,
            });
            self.cores.extend((0..cores).map(|_| Core::default()));
            self.queues.extend((0..cores).map(|_| RxQueue::default()));
        }
        h * cores + (fi as u32 % cores)
    }

    #[inline]
    fn host_of(&self, core: u32) -> usize {
        (core / self.cfg.cores) as usize
    }

    /// The core is busy past `now`: when it is free.
    #[inline]
    pub(crate) fn busy_until(&self, core: u32, now: Nanos) -> Option<Nanos> {
        let t = self.cores[core as usize].busy_until_ns;
        (t > now).then_some(t)
    }

    /// Charge `ns` of work done at `now` to `core`.
    #[inline]
    pub(crate) fn charge(&mut self, core: u32, now: Nanos, ns: u64) {
        let c = &mut self.cores[core as usize];
        c.busy_until_ns = c.busy_until_ns.max(now) + ns;
        c.busy_ns += ns;
    }

    /// CPU of sending one data segment (`new_chunk`: it opens an offload chunk).
    #[inline]
    pub(crate) fn charge_tx(&mut self, core: u32, now: Nanos, p: &Packet, new_chunk: bool) {
        let mut ns = self.cfg.tx_segment_cost_ns;
        let h = self.host_of(core);
        let st = &mut self.hosts[h].stats;
        st.data_segs_tx += 1;
        if new_chunk {
            ns += self.cfg.tx_chunk_cost_ns;
            st.chunks_tx += 1;
        }
        if !p.is_retrans {
            st.payload_tx_bytes += p.payload_bytes as u64;
            ns += p.payload_bytes as u64 * self.tx_copy_ps_per_byte / 1000;
        }
        self.charge(core, now, ns);
    }

    /// A timer fired on `core`.
    #[inline]
    pub(crate) fn charge_timer(&mut self, core: u32, now: Nanos) {
        let h = self.host_of(core);
        self.hosts[h].stats.timers += 1;
        self.charge(core, now, self.cfg.timer_cost_ns);
    }

    /// The `hosts` table at the end of a run that lasted `run_ns`. Work charged past the end
    /// (a core's backlog) is not counted, so utilisations stay ≤ 1.
    /// `acks_sent`: (receiver core, ACKs sent) of every flow.
    pub(crate) fn table(
        &self,
        run_ns: Nanos,
        acks_sent: impl Iterator<Item = (u32, u64)>,
    ) -> metrics::Table {
        let mut acks_tx = vec![0u64; self.hosts.len()];
        for (core, n) in acks_sent {
            acks_tx[self.host_of(core)] += n;
        }
        let mut t = metrics::HostCols::default();
        let n = self.cfg.cores as usize;
        let secs = run_ns.max(1) as f64 / 1e9;
        let per = |num: u64, den: u64| if den > 0 { num as f64 / den as f64 } else { f64::NAN };
        // Senders first, then receivers, each in order of first flow.
        let order = (0..self.hosts.len())
            .filter(|&h| self.hosts[h].is_sender)
            .chain((0..self.hosts.len()).filter(|&h| !self.hosts[h].is_sender));
        for h in order {
            let host = &self.hosts[h];
            let busy: Vec<u64> = self.cores[h * n..(h + 1) * n]
                .iter()
                .map(|c| c.busy_ns.saturating_sub(c.busy_until_ns.saturating_sub(run_ns)))
                .collect();
            let total: u64 = busy.iter().sum();
            let st = &host.stats;
            let (data, acks, payload) = if host.is_sender {
                (st.data_segs_tx, st.acks_rx, st.payload_tx_bytes)
            } else {
                (st.data_segs_rx, acks_tx[h], st.payload_rx_bytes)
            };
            t.push(metrics::HostRow {
                host_code: h as i32,
                is_sender: host.is_sender as u8,
                cores: n as i32,
                cpu_util: total as f64 / (n as f64 * run_ns.max(1) as f64),
                cpu_util_max_core: busy.iter().copied().max().unwrap_or(0) as f64
                    / run_ns.max(1) as f64,
                cpu_ns_per_mb: per(total * 1_000_000, payload),
                interrupts_per_s: st.interrupts as f64 / secs,
                packets_per_interrupt: per(st.packets_polled, st.polls),
                data_packets_per_s: data as f64 / secs,
                acks_per_s: acks as f64 / secs,
                chunk_mean_segs: if host.is_sender {
                    per(st.data_segs_tx, st.chunks_tx)
                } else {
                    f64::NAN
                },
                gro_mean_segs: if host.is_sender {
                    f64::NAN
                } else {
                    per(st.data_segs_rx, st.skbs_rx)
                },
                timers_per_s: st.timers as f64 / secs,
                rx_ring_drops: st.rx_ring_drops as i64,
                pause_frames: st.pause_frames as i64,
                payload_bytes: payload as i64,
            });
        }
        t.table()
    }

    /// Data packets of each flow waiting in receive rings (conservation).
    pub(crate) fn count_waiting(&self, n: &mut [u64]) {
        for q in &self.queues {
            for p in q.ring.iter().filter(|p| p.is_data) {
                n[p.flow as usize] += 1;
            }
        }
    }
}
