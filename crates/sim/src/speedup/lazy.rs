//! Lazy departures: a discipline's link (CoDel, FQ-CoDel, PIE, DualPI2: `link/aqm.rs`) serves
//! its departures when it is next looked at, not each at its own `TxDone` event.
//!
//! Such a link is event-driven because its discipline decides at dequeue time which packet
//! leaves next (FQ-CoDel's round robin, CoDel's drops), and that depends on what arrives before
//! then: the departure is not fixed when a packet is accepted, so the link cannot be
//! timestamped (`serializer.rs`). But what a departure at `t` does depends only on the link's
//! arrivals before `t` (and at `t`, which come after it: an instant runs its departures first),
//! and its effects show only later: the packet reaches the far end `delay_ns` after it leaves,
//! and the link's counters are read by the sample and the run's end. So the departure at `t`
//! can run at any moment between `t` and the first of
//! - the link's next arrival (`enqueue_event_driven`), which must find the queue as it is then;
//! - a sample or the time the caller of `advance` asked for (they read the counters);
//! - the packet's arrival at the far end, `t + delay_ns` — a *deadline* event, one per link at
//!   a time, keeps this: it runs every departure up to its time and re-arms for the next.
//!
//! A departure run late runs with the clock set to its own time (`serve_departures_to`), so it
//! does exactly what its event would have done: the same dequeue decision and drops, the same
//! busy time, the packet in the pipe (or folded into the next link) at the same arrival time.
//! A busy link then costs one event per `delay_ns` instead of one per packet (FQ-CoDel with
//! 1000 flows at 10 Gbit/s: 3.65 → 2.65 events per data packet).
//!
//! Ties. The departure at `t` comes before whatever else happens at `t`. That is the event
//! order when the arrival at `t` is an `Arrive` event (departures come first in an instant), or
//! the departure of a feeding link with a higher id (a zero-delay NIC's departure hands its
//! packet on at once: `TxDone` events of one instant run by link id). `set_lazy_departures`
//! keeps event-driven any link a lower-numbered zero-delay link feeds, so the order is always
//! the event-driven one and the results are the same (`lazy_departures_change_no_result`).
//!
//! Where it applies: a discipline that never holds packets back (not fq's pacing, which needs
//! wake-ups), on a link that is otherwise timestamped (no PFC, shared pool, cut-through,
//! jitter, host pause, path stages or capture), with a propagation delay, not a sender NIC,
//! and not in runs whose applications or workloads add paths while they run.

use crate::link::aqm::LazyTimes;
use crate::link::LinkId;
use crate::{EvKind, Simulation};
use cc::Nanos;
use pathmodel::aqm::Aqm;
use transport::Packet;

impl Simulation {
    /// Decide which links serve their departures lazily (module header) and list them.
    pub(crate) fn set_lazy_departures(&mut self) {
        self.lazy_links.clear();
        for l in &mut self.links {
            l.fast.lazy_departures = false;
        }
        if !self.apps.is_empty() || !self.workloads.is_empty() {
            return;
        }
        let mut ok: Vec<bool> = self
            .links
            .iter()
            .map(|l| {
                l.aqm.as_deref().is_some_and(|a| !a.q.holds_packets_back())
                    && l.timestamped_but_for_its_discipline()
                    && l.delay_ns > 0
                    && !l.is_sender_nic
                    && !l.fast.lazy_tsq
                    && !l.may_be_paused()
            })
            .collect();
        for f in &self.flows {
            for path in [&f.data_path, &f.ack_path] {
                let links = &path.links[..path.len as usize];
                if let Some(&first) = links.first() {
                    ok[first as usize] = false; // a path's first link: a host sends into it
                }
                for w in links.windows(2) {
                    let (a, b) = (w[0] as usize, w[1] as usize);
                    // A zero-delay feeder hands its packet on in its departure's event, which
                    // runs before `b`'s departure of the same instant if its id is lower.
                    if self.links[a].delay_ns == 0 && a < b {
                        ok[b] = false;
                    }
                }
            }
        }
        for (lid, on) in ok.into_iter().enumerate() {
            if on {
                self.links[lid].fast.lazy_departures = true;
                self.lazy_links.push(lid as LinkId);
            }
        }
    }

    /// The times of lazy link `lid` (`LinkAqm::lazy`).
    #[inline(always)]
    fn lazy_times(&mut self, lid: LinkId) -> &mut LazyTimes {
        &mut self.links[lid as usize].aqm.as_deref_mut().expect("a lazy link's discipline").lazy
    }

    /// The departure time of the packet serializing on lazy link `lid`, if one is and it
    /// leaves by `t`.
    #[inline(always)]
    fn lazy_departure_by(&mut self, lid: LinkId, t: Nanos) -> Option<Nanos> {
        self.links[lid as usize].in_tx.as_ref()?;
        Some(self.lazy_times(lid).tx_end_ns).filter(|&end| end <= t)
    }

    /// Run lazy link `lid`'s departures up to `t` (inclusive), each at its own time, in order.
    pub(crate) fn serve_departures_to(&mut self, lid: LinkId, t: Nanos) {
        let now = self.now;
        while let Some(end) = self.lazy_departure_by(lid, t) {
            self.now = end;
            self.departure(lid);
        }
        self.now = now;
    }

    /// Every lazy link's departures up to `t` (a sample, or the caller of `advance`, reads
    /// the links then).
    pub(crate) fn serve_all_departures_to(&mut self, t: Nanos) {
        for i in 0..self.lazy_links.len() {
            self.serve_departures_to(self.lazy_links[i], t);
        }
    }

    /// `start_tx` on a lazy link (idle, never paused): `p` serializes from now, with no event
    /// of its own; a deadline event will run its departure before it reaches the far end.
    #[inline]
    pub(crate) fn start_lazy_tx(&mut self, lid: LinkId, p: Packet) {
        let now = self.now;
        let link = &mut self.links[lid as usize];
        debug_assert!(link.path.is_none() && link.cut_through_bytes == 0);
        let end = now + link.tx_time_ns(p.wire_bytes);
        link.in_tx = Some(p);
        link.tx_start_ns = now;
        let times = self.lazy_times(lid);
        times.tx_end_ns = end;
        if times.deadline_ns == Nanos::MAX {
            self.arm_lazy_deadline(lid, end);
        }
    }

    /// The deadline event for the departure at `end`: when its packet reaches the far end.
    fn arm_lazy_deadline(&mut self, lid: LinkId, end: Nanos) {
        let t = end + self.links[lid as usize].delay_ns;
        self.lazy_times(lid).deadline_ns = t;
        self.push(t, EvKind::TxDone, lid);
    }

    /// Lazy link `lid`'s deadline event: run its departures up to now, and re-arm for the one
    /// serializing, if any.
    pub(crate) fn on_lazy_deadline(&mut self, lid: LinkId) {
        let now = self.now;
        self.serve_departures_to(lid, now);
        let busy = self.links[lid as usize].in_tx.is_some();
        let times = self.lazy_times(lid);
        times.deadline_ns = Nanos::MAX;
        if busy {
            let end = times.tx_end_ns;
            self.arm_lazy_deadline(lid, end);
        }
    }
}
