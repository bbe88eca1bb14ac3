//! Flows at their hosts: building a flow's sender and receiver, delivering data and ACKs to
//! them, letting a sender put packets on its NIC (TSQ) and the senders' and receivers' timers.

use crate::arrivals::NOT_WORKLOAD;
use crate::topology::Path;
use crate::{config, ictcp, rpc, workload, writer, Flow, Simulation};
use cc::{registry, Nanos};
use std::collections::VecDeque;
use transport::{Packet, Receiver, Sender};

impl Simulation {
    /// A flow (sender + receiver) for configured flow `f` with index `i` on the given paths.
    pub(crate) fn new_flow(
        seed: u64,
        f: &config::Flow,
        i: usize,
        data_path: Path,
        ack_path: Path,
        base_rtt_ns: Nanos,
        ictcp_ctl: Option<&mut ictcp::Ictcp>,
    ) -> Flow {
        let alg = registry::lookup(&f.cc).expect("validated");
        let mut algo = (alg.new)(seed ^ (0x5EED_0000 + i as u64));
        if let Ok(spec) = std::env::var(cc::bbr::v3::TEST_MUTATION_ENV) {
            // A conformance test's mutated BBRv3 (never set by a user: `Params::mutate`).
            if let Err(e) = algo.mutate_for_test(&spec) {
                panic!("{}={spec}: {e}", cc::bbr::v3::TEST_MUTATION_ENV);
            }
        }
        let scfg = transport::SenderConfig {
            mss: f.mss_bytes,
            initial_cwnd: f.initial_cwnd_segs,
            total_bytes: f.bytes,
            pacing: f.pacing.forced(),
            max_pacing_rate_bytes_per_s: f.max_pacing_rate_bps.map(|r| r / 8),
            sndbuf_bytes: f.sndbuf_bytes,
            tso: f.tso,
            tso_defer: f.tso_defer,
            min_rto_ns: f.min_rto_ns,
            ecn: f.ecn,
            tso_minrtt_autosize: f.tso_minrtt_autosize,
            fast_path: f.fast_path,
            app_writes: f.rpc.is_some() || f.app.is_some(),
            // Set by the simulation when the senders' egress is fq (`Simulation::new`).
            paced_by_qdisc: false,
        };
        let mut sender = Sender::new(scfg, algo);
        sender.flow_id = i as u32;
        sender.stop_ns = f.stop_ns;
        let rcfg = transport::receiver::ReceiverConfig {
            mss: f.mss_bytes,
            rcvbuf_bytes: f.rcvbuf_bytes,
            delayed_ack: f.delayed_ack,
            // Linux runs the receiver's half of DCTCP in the same module (dctcp_ece_ack_update).
            ce_state_ack: alg.receiver_ce_ack,
            faster_acks: f.faster_acks,
            autotune: f.receiver_window == config::ReceiverWindow::Autotune,
            app_read_delay_ns: f.app_read_delay_ns,
            msg_segs: workload::msg_segs(f),
        };
        let ictcp_id = match (ictcp_ctl, f.receiver_window) {
            (Some(ic), config::ReceiverWindow::Ictcp) => Some(ic.add_conn(
                f.mss_bytes,
                f.mss_bytes + transport::TCP_IP_HEADER_BYTES + transport::ETHERNET_OVERHEAD_BYTES,
                f.rcvbuf_bytes,
                base_rtt_ns,
            )),
            _ => None,
        };
        let cc_name = alg.name;
        let mut receiver = Receiver::new(rcfg);
        receiver.flow_id = i as u32;
        Flow {
            spec: -1,
            sender,
            receiver,
            cc_name,
            data_path,
            ack_path,
            start_ns: f.start_ns,
            stop_ns: f.stop_ns,
            nic_bytes: 0,
            nic_departures: VecDeque::new(),
            lazy_nic: false,
            tsq_throttled: false,
            sender_timer_at: None,
            receiver_timer_at: None,
            rx_deadline: Nanos::MAX,
            data_tx: 0,
            data_rx: 0,
            data_dropped: 0,
            last_delivered_bytes: 0,
            last_delivery_ns: None,
            ictcp: ictcp_id,
            gaps: f.gap_histogram.then(Box::default),
            trace: f.trace,
            capture: f.pcap.then_some(crate::capture::ByteMap {
                mss_bytes: f.mss_bytes,
                total_bytes: f.bytes,
            }),
            drop_segments: f.drop_segments.as_ref().map(|d| {
                let mut d = d.clone();
                d.sort_unstable();
                d.into_boxed_slice()
            }),
            base_rtt_ns,
            app: None,
            sampled: true,
            rx_done_ns: None,
            rpc: f.rpc.as_ref().map(|r| rpc::RpcApp::new(r.size_bytes, r.gap_ns)),
            writer: f.app.clone().map(|a| Box::new(writer::Writer::new(a, f.mss_bytes))),
            tx_core: u32::MAX,
            rx_core: u32::MAX,
            tx_skbs: VecDeque::new(),
            traffic: crate::traffic::NOT_TRAFFIC,
            workload: crate::arrivals::NOT_WORKLOAD,
        }
    }

    /// What the flow's handshake measures at its start: propagation both ways, the
    /// serialization of a SYN-sized packet (78 bytes on the wire) at every hop, and the wait
    /// behind each reported queue's backlog at the last sample, at the link's rate. Linux seeds
    /// srtt, the RTO and min_rtt from the SYN-ACK (tcp_synack_rtt_meas), so a flow that joins a
    /// standing queue starts with that queue in its RTT; BBR keeps it in min_rtt until a lower
    /// sample comes (nsperf's coexist case: a BBR flow joining CUBIC's queue). The sampled
    /// backlog, not the queue at this instant: it is the same whichever speed-ups run (a folded
    /// or served-ahead link holds packets early), at most one sample interval old, and it does
    /// not include the first windows of flows starting at the same moment. Native FIFO
    /// backlogs only: a path-model discipline holds its packets itself (an FQ scheduler serves
    /// a new flow's SYN at once).
    pub(crate) fn handshake_rtt_ns(&self, fi: usize) -> Nanos {
        const SYN_WIRE_BITS: u128 = 78 * 8;
        let f = &self.flows[fi];
        f.data_path
            .hops()
            .iter()
            .chain(f.ack_path.hops().iter())
            .map(|&l| {
                let link = &self.links[l as usize];
                let queued = self.sampled_queue_bytes[l as usize];
                let bits = SYN_WIRE_BITS + queued as u128 * 8;
                link.delay_ns + (bits * 1_000_000_000 / link.rate_bps as u128) as Nanos
            })
            .sum()
    }

    /// A data segment reaches its receiver (alone: no receive offload).
    #[inline]
    pub(crate) fn deliver_data(&mut self, p: Packet) {
        let si = self.flows[p.flow as usize].traffic;
        if si != crate::traffic::NOT_TRAFFIC {
            return self.traffic_rx(si as usize, p); // a datagram or an echo request
        }
        self.deliver_data_in_skb(p, true)
    }

    /// A data segment reaches its receiver as part of a GRO skb (`host.rs`); `last`: it ends
    /// the skb, and the receiver decides then whether to ACK. (Inlined: without hosts it is the
    /// per-packet delivery, and a call here measured 2 % of a 1 Gbit/s run.)
    #[inline]
    pub(crate) fn deliver_data_in_skb(&mut self, p: Packet, last: bool) {
        let fi = p.flow as usize;
        let now = self.now;
        let flow = &mut self.flows[fi];
        flow.data_rx += 1;
        self.data_packets_delivered += 1;
        if let Some(ic) = self.ictcp.as_mut() {
            // The receiver host's ICTCP sees all incoming traffic; its connections get their
            // window set before the ACK for this segment is built.
            ic.on_host_rx(now, p.wire_bytes);
            if let Some(id) = flow.ictcp {
                let rtt = if flow.sender.tp.srtt_ns > 0 {
                    flow.sender.tp.srtt_ns
                } else {
                    flow.base_rtt_ns
                };
                let w = ic.on_conn_rx(id, now, p.payload_bytes, rtt);
                flow.receiver.set_window_override(Some(w));
            }
        }
        let before = flow.receiver.delivered_bytes;
        let ack = flow.receiver.on_data_in_skb(now, &p, last);
        let mut transfer_done = false;
        if flow.receiver.delivered_bytes > before {
            flow.last_delivery_ns = Some(now);
            if flow.rx_done_ns.is_none()
                && flow.sender.cfg.total_bytes.is_some_and(|b| flow.receiver.delivered_bytes >= b)
            {
                flow.rx_done_ns = Some(now);
                transfer_done = flow.app.is_some() || flow.workload != NOT_WORKLOAD;
            }
        }
        // DCTCP's delayed ACK of the previous CE state goes out first.
        let pending = flow.receiver.take_pending_ack();
        let first = flow.ack_path.first();
        // The timer first: it does not depend on the ACKs' way out, and it leaves the ACK just
        // built a moment to reach the cache (copied at once, a packet written field by field
        // stalls the copy: narrow stores cannot be forwarded to its wide loads).
        self.arm_receiver_timer(fi);
        if let Some(a) = pending {
            self.enqueue(first, a);
        }
        if let Some(a) = ack {
            self.enqueue(first, a);
        }
        if transfer_done {
            self.on_transfer_done(fi);
        }
    }

    pub(crate) fn deliver_ack(&mut self, p: Packet) {
        let fi = p.flow as usize;
        let now = self.now;
        let flow = &mut self.flows[fi];
        let si = flow.traffic;
        if si != crate::traffic::NOT_TRAFFIC {
            return self.traffic_echo(si as usize, p); // a ping's echo
        }
        if let Some(map) = flow.capture {
            self.packets.push(crate::capture::ack_row(now, crate::capture::TAP_SENDER, &p, map));
        }
        flow.sender.on_ack(now, &p);
        if let Some(app) = flow.rpc.as_mut() {
            app.on_ack(now, &mut flow.sender);
        }
        if flow.trace {
            let s = &flow.sender;
            let rate_bps = s.stats.last_delivery_rate_bytes_per_s as f64 * 8.0;
            let (sample, view) = (s.cc.sample(&s.tp), s.cc.model_view(&s.tp));
            self.metrics.state_row(now, fi as i32, &s.tp, &sample, view.as_ref(), rate_bps);
        }
        #[cfg(debug_assertions)]
        if let Err(e) = self.flows[fi].sender.check_invariants() {
            panic!("flow {fi} scoreboard invariant broken at {now} ns: {e}");
        }
        self.pump(fi);
        let f = &mut self.flows[fi];
        if (f.app.is_some() || f.workload != NOT_WORKLOAD) && f.sender.completed_ns.is_some() {
            // A finished short connection keeps its statistics, not its scoreboard memory.
            f.sender.release_buffers();
        }
    }

    /// Let a flow's sender put packets on its NIC while TSQ allows (and, with the host model,
    /// while its core is free when a new offload chunk would start), then re-arm its timer.
    #[inline]
    pub(crate) fn pump(&mut self, fi: usize) {
        // Two compiled loops: the hot path without hosts carries none of their checks.
        if self.pump_general {
            self.pump_general(fi)
        } else {
            self.pump_loop::<false, false>(fi)
        }
    }

    /// `pump` in a run with the host model or lazily counted NICs (`speedup/nic.rs`): one
    /// test on the hot path for both.
    #[inline(never)]
    fn pump_general(&mut self, fi: usize) {
        if self.hosts.is_some() {
            self.pump_loop::<true, false>(fi)
        } else if self.flows[fi].lazy_nic {
            self.pump_loop::<false, true>(fi)
        } else {
            self.pump_loop::<false, false>(fi)
        }
    }

    /// (`LAZY`: the flow's NIC is lazily counted; `speedup/nic.rs`.)
    fn pump_loop<const HOSTS: bool, const LAZY: bool>(&mut self, fi: usize) {
        let now = self.now;
        let mut tsq_blocked = false;
        let core = self.flows[fi].tx_core;
        let mut cpu_free_at = None;
        if !self.flows[fi].nic_departures.is_empty() {
            self.count_nic_departures(fi, now);
        }
        loop {
            let flow = &mut self.flows[fi];
            let tsq_limit = flow.sender.tsq_limit_bytes();
            // With the host model the NIC takes whole skbs: TSQ is checked before a chunk, not
            // inside one (Linux tcp_write_xmit checks tcp_small_queue_check per skb).
            if flow.nic_bytes >= tsq_limit && !(HOSTS && flow.sender.chunk_open(now)) {
                tsq_blocked = true;
                break;
            }
            let chunks_before = flow.sender.stats.tso_bursts;
            if HOSTS && !flow.sender.chunk_open(now) {
                // The segments of an offload chunk leave together; a new chunk needs the core.
                cpu_free_at = self.hosts.as_ref().and_then(|hm| hm.busy_until(core, now));
                if cpu_free_at.is_some() {
                    break;
                }
            }
            match flow.sender.poll_transmit(now) {
                Some(p) => {
                    debug_assert!(p.flow == fi as u32 && p.hop == 0);
                    flow.data_tx += 1;
                    if let Some(d) = flow.drop_segments.as_deref() {
                        if !p.is_retrans && d.binary_search(&p.seq).is_ok() {
                            flow.data_dropped += 1; // placed loss, before the NIC
                            continue;
                        }
                    }
                    if let Some(map) = flow.capture {
                        self.packets.push(crate::capture::data_row(
                            now,
                            crate::capture::TAP_SENDER,
                            &p,
                            map,
                        ));
                    }
                    flow.nic_bytes += p.wire_bytes as u64;
                    let nic = flow.data_path.first();
                    if HOSTS {
                        let new_chunk = flow.sender.stats.tso_bursts != chunks_before;
                        if let Some(hm) = self.hosts.as_mut() {
                            hm.charge_tx(core, now, &p, new_chunk);
                        }
                        // The skb this segment belongs to (its TX completion frees TSQ budget).
                        match flow.tx_skbs.back_mut() {
                            Some(b) if !new_chunk => {
                                b.0 += 1;
                                b.1 += p.wire_bytes as u64;
                            }
                            _ => flow.tx_skbs.push_back((1, p.wire_bytes as u64)),
                        }
                    }
                    if LAZY {
                        let (dropped, bytes) = (flow.data_dropped, p.wire_bytes as u64);
                        self.enqueue(nic, p);
                        self.note_lazy_departure(fi, nic, dropped, bytes);
                    } else {
                        self.enqueue(nic, p);
                    }
                }
                None => break,
            }
        }
        self.flows[fi].tsq_throttled = tsq_blocked;
        if tsq_blocked {
            let nic = self.flows[fi].data_path.first();
            if LAZY || self.links[nic as usize].fast.ahead == crate::speedup::ahead::Ahead::Nic {
                self.arm_nic(nic);
            }
        }
        self.arm_sender_timer(fi, tsq_blocked, cpu_free_at);
    }

    /// Arm the flow's timer for its next recovery deadline and, unless TSQ holds it back (a NIC
    /// departure will pump it again), its next pacing departure — not before its core is free
    /// (`cpu_free_at`: the host model's core was busy when a chunk would have started).
    pub(crate) fn arm_sender_timer(
        &mut self,
        fi: usize,
        tsq_blocked: bool,
        cpu_free_at: Option<Nanos>,
    ) {
        let s = &self.flows[fi].sender;
        let mut want = s.next_timer_deadline();
        if let Some(t) = self.flows[fi].rpc.as_ref().and_then(|a| a.next_deadline()) {
            want = Some(want.map_or(t, |w| w.min(t)));
        }
        if let Some(t) = self.flows[fi].writer.as_ref().and_then(|a| a.next_deadline()) {
            want = Some(want.map_or(t, |w| w.min(t)));
        }
        if !tsq_blocked {
            let send_at = match (s.next_send_time(), cpu_free_at) {
                (Some(t), c) => Some(c.map_or(t, |c| t.max(c))),
                // Held back by the core: look again when it is free.
                (None, c) => c,
            };
            if let Some(t) = send_at {
                want = Some(want.map_or(t, |w| w.min(t)));
            }
        }
        if let Some(t) = want {
            let t = t.max(self.now);
            let cur = self.flows[fi].sender_timer_at;
            if cur.is_none_or(|c| t < c) {
                self.flows[fi].sender_timer_at = Some(t);
                self.arm_timer(2 * fi as u32, t);
            }
        }
    }

    pub(crate) fn arm_receiver_timer(&mut self, fi: usize) {
        let next = self.flows[fi].receiver.next_timeout();
        if self.rx_ahead_on {
            self.note_rx_deadline(fi, next);
        }
        if let Some(t) = next {
            let cur = self.flows[fi].receiver_timer_at;
            if cur.is_none_or(|c| t < c) {
                self.flows[fi].receiver_timer_at = Some(t);
                self.arm_timer(2 * fi as u32 + 1, t);
            }
        }
    }

    pub(crate) fn on_sender_timer(&mut self, fi: usize, t: Nanos) {
        if self.flows[fi].sender_timer_at != Some(t) {
            return; // superseded by an earlier entry that already fired
        }
        self.flows[fi].sender_timer_at = None;
        if self.flows[fi].traffic != crate::traffic::NOT_TRAFFIC {
            return self.traffic_timer(self.flows[fi].traffic as usize);
        }
        let now = self.now;
        let flow = &mut self.flows[fi];
        if let Some(app) = flow.rpc.as_mut() {
            app.on_timer(now, &mut flow.sender);
        }
        if let Some(w) = flow.writer.as_mut() {
            w.on_timer(now, &mut flow.sender);
        }
        // A pacing or recovery timer (not a wake-up for a core that was busy) costs CPU.
        let mut real_timer = flow.sender.next_send_time() == Some(now);
        if flow.sender.next_timer_deadline().is_some_and(|d| d <= now) {
            flow.sender.on_timeout(now);
            real_timer = true;
        }
        self.pump(fi);
        if let (Some(hm), true) = (self.hosts.as_mut(), real_timer) {
            hm.charge_timer(self.flows[fi].tx_core, now);
        }
    }

    pub(crate) fn on_receiver_timer(&mut self, fi: usize, t: Nanos) {
        if self.flows[fi].receiver_timer_at != Some(t) {
            return;
        }
        self.flows[fi].receiver_timer_at = None;
        let now = self.now;
        if let Some(hm) = self.hosts.as_mut() {
            hm.charge_timer(self.flows[fi].rx_core, now);
        }
        let flow = &mut self.flows[fi];
        if let Some(a) = flow.receiver.on_timeout(now) {
            let first = flow.ack_path.first();
            self.enqueue(first, a);
        }
        self.arm_receiver_timer(fi);
    }
}
