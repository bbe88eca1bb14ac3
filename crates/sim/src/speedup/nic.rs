//! Host NICs without per-packet departure events (issue 38). A graph's host links have a
//! propagation delay (`delay = "10us"` on every link of the DCTCP paper's Fig. 17), so a
//! sender's NIC cannot be timestamped the way a zero-delay NIC is (`Link::can_be_timestamped`):
//! TSQ reacts to its departures, and a departure and the arrival one delay later are two
//! moments. Two cases need no departure events all the same:
//!
//! - **A host link that carries no data** (a receiver's NIC: ACKs only). TSQ counts only data
//!   packets (`on_nic_data_departure`), so such a link is a plain link to the switch, not a
//!   sender NIC (`mark_data_nics`), and is timestamped like any switch port.
//! - **A sender NIC that one flow alone uses** (`FastPath::lazy_tsq`). The NIC is timestamped:
//!   a packet's departure `d` and arrival `d + delay` are fixed when the NIC accepts it; the
//!   arrival is the pipe head's `Arrive` event, the departure goes into the flow's
//!   `nic_departures` (`pump` notes it: `note_lazy_departure`, so the links' hot path carries
//!   no test for it), which TSQ reads when it next looks (`count_nic_departures`, at the top
//!   of every `pump`), as `Ahead::Nic` does. Only a flow that TSQ throttles needs its
//!   departures as they happen (each may let it send): `arm_nic` keeps a `TxDone` event at its
//!   next departure while it is throttled, with the key the event-driven departure had.
//!
//! Exact: a departure's only effects are the NIC's queue statistics (replayed from the
//! serializer, as on every timestamped link), TSQ's byte count (read only by `pump`, which
//! counts the departures up to `now` first; a departure at `now` is counted, as its `TxDone`
//! ran before any other kind of event at `now`) and the throttled flow's wake-up (kept as an
//! event). Off with the host model (its TX completions free whole skbs), a gap histogram
//! (reads each departure as it happens), and the run-time flows of applications, workloads and
//! non-TCP sources. `lazy_nics_change_no_result` (`tests.rs`) compares whole runs.

use crate::link::LinkId;
use crate::speedup::fold::{MANY, NONE};
use crate::Simulation;

impl Simulation {
    /// A host link is a sender NIC (`Link::is_sender_nic`) only if some flow's data leaves by
    /// it: a receiver's NIC carries ACKs, which TSQ does not count. Called before the links'
    /// `timestamped` is decided; only where every path is known at the start.
    pub(crate) fn mark_data_nics(&mut self) {
        if !self.static_paths() {
            return;
        }
        let mut carries_data = vec![false; self.links.len()];
        for f in &self.flows {
            for &l in f.data_path.hops() {
                carries_data[l as usize] = true;
            }
        }
        for (l, &data) in self.links.iter_mut().zip(&carries_data) {
            l.is_sender_nic &= data;
        }
    }

    /// Flag the sender NICs whose departures TSQ counts lazily (see the module header) and
    /// timestamp them; called once the other links' `timestamped` is decided.
    pub(crate) fn set_lazy_nics(&mut self) {
        for l in &mut self.links {
            l.fast.lazy_tsq = false;
        }
        self.pump_general = self.hosts.is_some();
        if !self.static_paths() || self.hosts.is_some() {
            return;
        }
        let n = self.links.len();
        // Per link: the one flow whose data it carries first (NONE, MANY); used otherwise.
        let mut nic_flow = vec![NONE; n];
        let mut used_else = vec![false; n];
        for (fi, f) in self.flows.iter().enumerate() {
            if f.data_path.len == 0 {
                return; // (a flow without a path: nothing is sped up)
            }
            let first = f.data_path.first() as usize;
            // An ACK handed to the sender at a departure event (an event-driven link with no
            // delay into it) would run TSQ between two departures of the same instant, where
            // the NIC's own departure may not have run yet: not lazily counted.
            let acks_arrive = f.ack_path.hops().last().is_some_and(|&l| {
                let l = &self.links[l as usize];
                l.delay_ns > 0 || l.fast.timestamped
            });
            nic_flow[first] = match nic_flow[first] {
                NONE if f.gaps.is_none() && acks_arrive => fi as u32,
                _ => MANY,
            };
            for &l in f.data_path.hops()[1..].iter().chain(f.ack_path.hops()) {
                used_else[l as usize] = true;
            }
        }
        for (a, link) in self.links.iter_mut().enumerate() {
            let fi = nic_flow[a];
            if fi == NONE || fi == MANY || used_else[a] {
                continue;
            }
            let timed = self.timed_links && link.can_be_timed(); // (`timed.rs`)
            if link.is_sender_nic && link.delay_ns > 0 && (link.can_be_timestamped_nic() || timed) {
                // No longer a NIC whose departures are events (`Link::pipe_event`): its pipe
                // holds arrivals; TSQ's part is the flow's `nic_departures`.
                link.is_sender_nic = false;
                link.fast.timestamped = true;
                link.fast.lazy_tsq = true;
                link.fast.nic_flow = fi;
                self.flows[fi as usize].lazy_nic = true;
                self.pump_general = true;
            }
        }
    }

    /// (`pump`) Flow `fi` handed a data packet of `bytes` to its lazily counted NIC `nic`,
    /// whose drops it had counted `dropped_before`: unless the NIC dropped it, it leaves when
    /// the NIC's serializer frees (the packet is the last it accepted).
    #[inline]
    pub(crate) fn note_lazy_departure(
        &mut self,
        fi: usize,
        nic: LinkId,
        dropped_before: u64,
        bytes: u64,
    ) {
        let flow = &mut self.flows[fi];
        if flow.data_dropped == dropped_before {
            let done = self.links[nic as usize].ser.free_at_ns;
            flow.nic_departures.push_back((done, bytes));
        }
    }

    /// Every flow's paths are known when the run starts and no source outside TCP's pump
    /// sends (applications, workloads and non-TCP sources add flows or packets as it runs).
    fn static_paths(&self) -> bool {
        self.apps.is_empty()
            && self.workloads.is_empty()
            && self.traffic.is_empty()
            && self.flows.iter().all(|f| f.rpc.is_none() && f.app.is_none())
    }
}
