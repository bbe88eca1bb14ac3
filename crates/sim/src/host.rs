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

use crate::*;

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

impl Simulation {
    /// A packet reaches a host with the host model on: into its core's receive ring, and an
    /// interrupt armed if none is pending.
    pub(crate) fn host_receive(&mut self, p: Packet, from: LinkId) {
        let now = self.now;
        let f = &self.flows[p.flow as usize];
        let core = if p.is_data { f.rx_core } else { f.tx_core };
        let hm = self.hosts.as_mut().expect("host model on");
        let (ring_max, delay, frames) =
            (hm.cfg.rx_ring_pkts as usize, hm.cfg.irq_delay_ns, hm.cfg.irq_frames as usize);
        let free_at = hm.cores[core as usize].busy_until_ns.max(now);
        let h = hm.host_of(core);
        let q = &mut hm.queues[core as usize];
        if q.ring.len() >= ring_max {
            hm.hosts[h].stats.rx_ring_drops += 1;
            if p.is_data {
                self.flows[p.flow as usize].data_dropped += 1;
            }
            return;
        }
        q.ring.push_back(p);
        if hm.cfg.flow_control && !q.fc_over && q.ring.len() * 4 >= ring_max * 3 {
            q.fc_over = true;
            let host = &mut hm.hosts[h];
            if !host.fc_links.contains(&from) {
                host.fc_links.push(from);
            }
            host.fc_rings_over += 1;
            if host.fc_rings_over == 1 {
                self.host_pause(h, true);
            }
        }
        let hm = self.hosts.as_mut().expect("host model on");
        let q = &mut hm.queues[core as usize];
        let want = if q.ring.len() >= frames { free_at } else { (now + delay).max(free_at) };
        match q.poll_at {
            None => {
                q.poll_at = Some(want);
                q.repoll = false;
                self.push(want, EvKind::HostPoll, core);
            }
            Some(t) if want < t && !q.repoll => {
                // rx-frames reached: the interrupt comes earlier (the old event goes stale).
                q.poll_at = Some(want);
                self.push(want, EvKind::HostPoll, core);
            }
            Some(_) => {}
        }
    }

    /// An interrupt or NAPI re-poll on `core`: hand up to `napi_budget` packets to TCP, data
    /// through GRO.
    pub(crate) fn on_host_poll(&mut self, core: u32, t: Nanos) {
        let now = self.now;
        let hm = self.hosts.as_mut().expect("host model on");
        let q = &mut hm.queues[core as usize];
        if q.poll_at != Some(t) {
            return; // superseded by an earlier interrupt
        }
        q.poll_at = None;
        let repoll = std::mem::take(&mut q.repoll);
        let n = q.ring.len().min(hm.cfg.napi_budget as usize);
        let h = hm.host_of(core);
        let st = &mut hm.hosts[h].stats;
        st.polls += 1;
        st.packets_polled += n as u64;
        let mut ns = 0;
        if !repoll {
            st.interrupts += 1;
            ns += hm.cfg.irq_cost_ns;
        }
        ns += n as u64 * hm.cfg.rx_segment_cost_ns;
        hm.charge(core, now, ns);
        let (gro, gro_max) = (hm.cfg.gro, hm.cfg.gro_max_bytes);
        for _ in 0..n {
            let hm = self.hosts.as_mut().expect("host model on");
            let p = hm.queues[core as usize].ring.pop_front().expect("counted");
            if !p.is_data {
                self.host_ack(core, p);
                continue;
            }
            let open = hm.gro.iter().position(|o| o.flow == p.flow);
            match open {
                Some(i)
                    if gro
                        && p.seq == hm.gro[i].last.seq + 1
                        && p.ce == hm.gro[i].last.ce
                        && hm.gro[i].bytes + p.payload_bytes as u64 <= gro_max =>
                {
                    let prev = std::mem::replace(&mut hm.gro[i].last, p);
                    hm.gro[i].bytes += p.payload_bytes as u64;
                    self.host_data(core, prev, false);
                }
                Some(i) => {
                    let old = hm.gro.remove(i);
                    self.host_data(core, old.last, true);
                    self.open_skb(p);
                }
                None => {
                    if hm.gro.len() == MAX_GRO_FLOWS {
                        let old = hm.gro.remove(0);
                        self.host_data(core, old.last, true);
                    }
                    self.open_skb(p);
                }
            }
        }
        // The poll's end flushes every open skb.
        while let Some(o) =
            self.hosts.as_mut().and_then(|hm| (!hm.gro.is_empty()).then(|| hm.gro.remove(0)))
        {
            self.host_data(core, o.last, true);
        }
        let hm = self.hosts.as_mut().expect("host model on");
        let free_at = hm.cores[core as usize].busy_until_ns.max(now);
        let ring_max = hm.cfg.rx_ring_pkts as usize;
        let h = hm.host_of(core);
        let q = &mut hm.queues[core as usize];
        if q.fc_over && q.ring.len() * 2 <= ring_max {
            q.fc_over = false;
            hm.hosts[h].fc_rings_over -= 1;
            if hm.hosts[h].fc_rings_over == 0 {
                self.host_pause(h, false);
            }
        }
        let hm = self.hosts.as_mut().expect("host model on");
        let q = &mut hm.queues[core as usize];
        if !q.ring.is_empty() && q.poll_at.is_none() {
            // Budget used up: NAPI polls again once this poll's work is done.
            q.poll_at = Some(free_at);
            q.repoll = true;
            self.push(free_at, EvKind::HostPoll, core);
        }
    }

    /// The host's NIC sends PAUSE (`on`) or XON to every link feeding it; a paused link starts
    /// nothing until the XON (the NIC re-sends PAUSE before its quanta run out).
    fn host_pause(&mut self, h: usize, on: bool) {
        let now = self.now;
        let hm = self.hosts.as_mut().expect("host model on");
        hm.hosts[h].stats.pause_frames += 1;
        let links = hm.hosts[h].fc_links.clone();
        for l in links {
            self.pause_frames_total += 1;
            let link = &mut self.links[l as usize];
            link.stats.pause_frames += 1;
            if on {
                link.paused_until = Nanos::MAX;
            } else {
                link.paused_until = now;
                self.on_resume(l);
            }
        }
    }

    fn open_skb(&mut self, p: Packet) {
        let hm = self.hosts.as_mut().expect("host model on");
        let bytes = p.payload_bytes as u64;
        let gro = hm.cfg.gro;
        hm.gro.push(OpenSkb { flow: p.flow, last: p, bytes });
        if !gro {
            // Without GRO every segment is its own skb.
            let o = hm.gro.pop().expect("just pushed");
            let core = self.flows[p.flow as usize].rx_core;
            self.host_data(core, o.last, true);
        }
    }

    /// Hand one segment of a GRO skb to TCP (`last`: it ends the skb) and charge its work.
    fn host_data(&mut self, core: u32, p: Packet, last: bool) {
        let hm = self.hosts.as_mut().expect("host model on");
        let h = hm.host_of(core);
        let st = &mut hm.hosts[h].stats;
        st.data_segs_rx += 1;
        let mut ns = 0;
        if last {
            st.skbs_rx += 1;
            ns += hm.cfg.rx_skb_cost_ns;
        }
        let before = self.flows[p.flow as usize].receiver.delivered_bytes;
        let now = self.now;
        self.deliver_data_in_skb(p, last);
        let hm = self.hosts.as_mut().expect("host model on");
        let copied = self.flows[p.flow as usize].receiver.delivered_bytes - before;
        hm.hosts[h].stats.payload_rx_bytes += copied;
        ns += copied * hm.rx_copy_ps_per_byte / 1000;
        hm.charge(core, now, ns);
    }

    /// Hand an ACK to its sender and charge the ACK's and the algorithm's work.
    fn host_ack(&mut self, core: u32, p: Packet) {
        let fi = p.flow as usize;
        let fast_before = self.flows[fi].sender.tp.cc_fast_acks;
        let now = self.now;
        self.deliver_ack(p);
        let skipped = self.flows[fi].sender.tp.cc_fast_acks > fast_before;
        let hm = self.hosts.as_mut().expect("host model on");
        let h = hm.host_of(core);
        hm.hosts[h].stats.acks_rx += 1;
        let ns = hm.cfg.ack_cost_ns + if skipped { 0 } else { hm.cfg.cc_ack_cost_ns };
        hm.charge(core, now, ns);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::Column;

    /// `flows` on a 10 Gbit/s, 1 ms dumbbell with a 2 MB buffer, with `hosts` (JSON object body).
    pub(super) fn run(flows: &str, hosts: &str, secs: u64) -> Simulation {
        let mut sim = Simulation::from_json(&format!(
            r#"{{"seed":5,"duration_ns":{},"sample_interval_ns":100000000,
                "topology":{{"kind":"dumbbell","bottleneck":{{"rate_bps":10000000000,"rtt_ns":1000000,
                "buffer":{{"bytes":2000000}}}}}},"flows":[{flows}],"hosts":{{{hosts}}}}}"#,
            secs * 1_000_000_000
        ))
        .unwrap();
        sim.run_until(u64::MAX);
        sim.check_conservation().unwrap();
        sim
    }

    pub(super) fn col(t: &metrics::Table, name: &str) -> Vec<f64> {
        match t.get(name).unwrap_or_else(|| panic!("no column {name}")) {
            Column::F64(v) => v.clone(),
            Column::I64(v) => v.iter().map(|&x| x as f64).collect(),
            Column::I32(v) => v.iter().map(|&x| x as f64).collect(),
            Column::U16(v) => v.iter().map(|&x| x as f64).collect(),
            Column::U8(v) => v.iter().map(|&x| x as f64).collect(),
        }
    }

    pub(super) fn goodput_bps(sim: &Simulation) -> f64 {
        col(&sim.results().flows, "goodput_bps").iter().sum()
    }

    #[test]
    fn gro_merges_segments_and_the_receiver_sends_stretch_acks() {
        let with = run(r#"{"cc":"cubic"}"#, "", 1);
        let without = run(r#"{"cc":"cubic"}"#, r#""gro":false"#, 1);
        let (rw, ro) = (with.results(), without.results());
        let segs = |s: &Simulation| s.flows[0].receiver.segs_received as f64;
        let acks = |s: &Simulation| s.flows[0].receiver.acks_sent as f64;
        let gro_w = col(&rw.hosts, "gro_mean_segs")[1];
        let gro_o = col(&ro.hosts, "gro_mean_segs")[1];
        eprintln!(
            "gro {gro_w:.2} vs {gro_o:.2}; acks/seg {:.3} vs {:.3}; goodput {:.3e} vs {:.3e}",
            acks(&with) / segs(&with),
            acks(&without) / segs(&without),
            goodput_bps(&with),
            goodput_bps(&without)
        );
        // Without GRO every segment is its own skb: an ACK per 2 segments (delayed ACKs).
        assert_eq!(gro_o, 1.0);
        assert!((acks(&without) / segs(&without) - 0.5).abs() < 0.05);
        // 8 µs of moderation at 10 Gbit/s gathers ~7 segments: merged skbs, one ACK each.
        assert!(gro_w > 3.0, "GRO merged {gro_w} segments per skb");
        assert!(acks(&with) / segs(&with) < 0.3);
        assert!((acks(&with) / segs(&with) - 1.0 / gro_w).abs() < 0.1, "one ACK per merged skb");
        // The ACK clock: an unpaced, cwnd-limited sender that does not defer (`tso_defer`
        // false) sends what each ACK frees, so with about one stretch ACK per sender interrupt
        // (57k ACKs/s, 8 µs moderation) its realized offload chunks follow the receiver's GRO.
        // Linux's TSO deferral (the default) waits for a full 64-KB frame instead: 45 segments.
        let eager = run(r#"{"cc":"cubic","tso_defer":false}"#, "", 1).results();
        let chunk_e = col(&eager.hosts, "chunk_mean_segs")[0];
        let chunk_w = col(&rw.hosts, "chunk_mean_segs")[0];
        eprintln!("chunks {chunk_e:.2} eager, {chunk_w:.2} deferring");
        assert!((chunk_e / gro_w - 1.0).abs() < 0.3, "chunks of {chunk_e} for skbs of {gro_w}");
        assert!(chunk_w > 0.9 * (65_536 / 1448) as f64, "deferred chunks of {chunk_w}");
    }
}

#[cfg(test)]
mod ceiling_tests {
    use super::tests_support::*;

    /// Only the receive copy costs CPU: 1 ns per byte, i.e. a core copies 8 Gbit/s. One stream
    /// (one core) cannot deliver faster; two streams on two cores can.
    const COPY_ONLY: &str = r#""rx_copy_rate_bps":8000000000,"irq_cost_ns":0,"rx_segment_cost_ns":0,"rx_skb_cost_ns":0,
        "tx_chunk_cost_ns":0,"tx_segment_cost_ns":0,"ack_cost_ns":0,"cc_ack_cost_ns":0,"timer_cost_ns":0,
        "tx_copy_rate_bps":10000000000000"#;

    #[test]
    fn one_stream_is_capped_by_its_core_and_two_streams_use_two() {
        let one = run(r#"{"cc":"bbr3"}"#, COPY_ONLY, 2);
        let two = run(r#"{"cc":"bbr3","count":2}"#, COPY_ONLY, 2);
        let (g1, g2) = (goodput_bps(&one), goodput_bps(&two));
        let busiest = col(&one.results().hosts, "cpu_util_max_core")[1];
        eprintln!("one {g1:.3e} two {g2:.3e} busiest core {busiest:.3}");
        // Payload at 8 Gbit/s of copy is the ceiling (startup included, so below it).
        assert!(g1 <= 8.0e9 * 1.001, "one stream delivered {g1} bit/s past its core's copy rate");
        assert!(g1 > 6.0e9, "one stream delivered only {g1} bit/s");
        assert!(busiest > 0.85, "the stream's receiver core was busy {busiest}");
        // Two streams: flows 0 and 1 run on cores 0 and 1; the 10 Gbit/s link is the limit.
        assert!(g2 > 8.5e9, "two streams delivered only {g2} bit/s");
    }
}

#[cfg(test)]
mod tests_support {
    pub(super) use super::tests::{col, goodput_bps, run};
}

#[cfg(test)]
mod fast_path_tests {
    use super::tests_support::*;

    /// App-limited BBR (an RPC every 100 µs, 64 KB each, ~5 Gbit/s on a 10 Gbit/s path): the
    /// fast path answers most ACKs, saves their algorithm CPU and changes nothing else much.
    #[test]
    fn the_fast_path_skips_app_limited_acks_and_saves_sender_cpu() {
        for cc in ["bbr2", "bbr3"] {
            let flow = |fp: bool| {
                format!(
                    r#"{{"cc":"{cc}","fast_path":{fp},"rpc":{{"size_bytes":65536,"gap_ns":100000}}}}"#
                )
            };
            let on = run(&flow(true), r#""cc_ack_cost_ns":1000"#, 1);
            let off = run(&flow(false), r#""cc_ack_cost_ns":1000"#, 1);
            let (ron, roff) = (on.results(), off.results());
            let fast_on = col(&ron.flows, "cc_fast_acks")[0];
            let fast_off = col(&roff.flows, "cc_fast_acks")[0];
            let acks = on.flows[0].receiver.acks_sent as f64;
            let cpu = |r: &crate::Results| col(&r.hosts, "cpu_ns_per_mb")[0];
            let rpc = |r: &crate::Results| col(&r.flows, "rpc_mean_ms")[0];
            eprintln!("{cc}: fast acks {fast_on} of {acks}; cpu/MB {:.0} vs {:.0} ns; rpc {:.4} vs {:.4} ms",
                cpu(&ron), cpu(&roff), rpc(&ron), rpc(&roff));
            assert_eq!(fast_off, 0.0, "{cc}: fast path off, yet ACKs took it");
            assert!(fast_on > 0.3 * acks, "{cc}: only {fast_on} of {acks} ACKs took the fast path");
            assert!(cpu(&ron) < cpu(&roff), "{cc}: the fast path saved no CPU");
            assert!((rpc(&ron) / rpc(&roff) - 1.0).abs() < 0.1, "{cc}: RPC latency moved");
        }
    }
}

#[cfg(test)]
mod tsq_tests {
    use super::tests_support::*;
    use crate::Simulation;

    fn nic_bottleneck(hosts: Option<&str>) -> Simulation {
        let hosts = hosts.map_or(String::new(), |h| format!(r#","hosts":{{{h}}}"#));
        let mut sim = Simulation::from_json(&format!(
            r#"{{"seed":5,"duration_ns":1000000000,"sample_interval_ns":100000000,
                "topology":{{"kind":"dumbbell","access_rate_bps":10000000000,"bottleneck":{{"rate_bps":40000000000,
                "rtt_ns":1000000,"buffer":{{"bytes":4000000}}}}}},"flows":[{{"cc":"bbr2","count":20,"sender":0}}]{hosts}}}"#
        ))
        .unwrap();
        sim.run_until(u64::MAX);
        sim.check_conservation().unwrap();
        sim
    }

    fn chunks(sim: &Simulation) -> (f64, f64) {
        let f = sim.results().flows;
        let (n, segs, goal) =
            (col(&f, "tso_bursts"), col(&f, "tso_burst_mean_segs"), col(&f, "tso_goal_mean_segs"));
        let total: f64 = n.iter().sum();
        let w = |v: &[f64]| v.iter().zip(&n).map(|(a, b)| a * b).sum::<f64>() / total;
        (w(&segs), w(&goal))
    }

    /// 20 paced flows share one 10 Gbit/s sender NIC (the bottleneck): TSQ holds each back. Linux
    /// frees TSQ budget when an skb's TX completes, whole, and checks TSQ per skb; freeing it per
    /// departing segment (no host model) lets a flow in one segment at a time.
    #[test]
    fn tsq_limited_flows_send_whole_chunks_with_the_host_model() {
        let (per_seg, goal0) = chunks(&nic_bottleneck(None));
        let sim = nic_bottleneck(Some(
            r#""rx_copy_rate_bps":10000000000000,"tx_copy_rate_bps":10000000000000"#,
        ));
        let (per_skb, goal1) = chunks(&sim);
        eprintln!(
            "realized {per_seg:.2} of {goal0:.1} per segment; {per_skb:.2} of {goal1:.1} per skb"
        );
        assert!(per_seg < 2.0, "per-segment TSQ release realized {per_seg}");
        assert!(per_skb > 3.0 * per_seg, "per-skb TSQ release realized only {per_skb}");
        assert!(per_skb <= goal1 + 1e-9);
        assert!(goodput_bps(&sim) > 0.9 * 10e9 * 1448.0 / 1538.0, "the NIC stays busy");
    }
}

#[cfg(test)]
mod flow_control_tests {
    use super::tests_support::*;

    /// The receiver's core copies 4 Gbit/s and its ring holds 64 packets; a 10 Gbit/s path.
    /// Without flow control the ring drops what the core cannot take; with it the NIC pauses the
    /// port towards it and the port's queue (the bottleneck's 2 MB here) takes the excess.
    #[test]
    fn flow_control_moves_the_excess_from_the_ring_to_the_switch_port() {
        let host = r#""rx_copy_rate_bps":4000000000,"rx_ring_pkts":64"#;
        let off = run(r#"{"cc":"cubic"}"#, host, 1);
        let on = run(r#"{"cc":"cubic"}"#, &format!(r#"{host},"flow_control":true"#), 1);
        let (ro, rn) = (off.results(), on.results());
        let drops = |r: &crate::Results| col(&r.hosts, "rx_ring_drops")[1];
        let pauses = |r: &crate::Results| col(&r.hosts, "pause_frames")[1];
        eprintln!(
            "ring drops {} vs {}; pauses {} vs {}; goodput {:.3e} vs {:.3e}",
            drops(&ro),
            drops(&rn),
            pauses(&ro),
            pauses(&rn),
            goodput_bps(&off),
            goodput_bps(&on)
        );
        assert!(drops(&ro) > 0.0, "the ring must overflow without flow control");
        assert_eq!(pauses(&ro), 0.0);
        assert_eq!(drops(&rn), 0.0, "a quarter of the ring is room for what is on its way");
        assert!(pauses(&rn) > 0.0);
        // The core is the bottleneck either way: at most its copy rate.
        assert!(goodput_bps(&on) <= 4.0e9 * 1.001 && goodput_bps(&on) > 3.0e9);
    }
}
