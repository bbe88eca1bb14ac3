//! The host model's receive path: a packet into its core's ring, interrupts and NAPI polls,
//! GRO, the receiver's and the sender's work charged to their cores, PAUSE to the switch.

use super::*;

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
    #[inline(never)]
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
                        && p.ce() == hm.gro[i].last.ce()
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
