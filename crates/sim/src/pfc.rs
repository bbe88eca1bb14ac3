//! Lossless Ethernet: IEEE 802.3x PAUSE back-pressure (one traffic class, as on seed 000's
//! Mellanox SX1012 with global flow control; PFC's per-priority pause is the same mechanism for
//! a single priority).
//!
//! - A switch output port whose queue rises above XOFF bytes sends a PAUSE frame with
//!   `pause_quanta` (× 512 bit times of the receiving link) to every ingress link that feeds it.
//!   The frame arrives one propagation delay plus a 64-byte serialization later.
//! - A paused link finishes the packet it is serializing and starts no new one until the pause
//!   expires or an XON (PAUSE with quanta 0) arrives; its host NIC queue grows meanwhile (TSQ
//!   still bounds each flow's share of it). Nothing is ever dropped for lack of buffer.
//! - While paused (queue above XON) the port re-sends PAUSE every half quantum so the pause never
//!   lapses; once the queue falls below XON it sends XON to every ingress link.
//! - Every PAUSE and XON frame is counted: at the sending output port (frames sent, one per
//!   ingress link) and at the receiving link (frames received): the `pause_frames` column.
//!
//! The switch queue is therefore bounded by XOFF plus what is already committed when the pause
//! takes effect: per ingress link, the packet in serialization, the packets on the wire, and
//! what it sends during the PAUSE frame's trip (≈ 2 × MTU + rate × 2 × delay).

use super::*;

pub(crate) struct PortPfc {
    xoff: u64,
    xon: u64,
    /// Pause duration and re-send interval basis (quanta × 512 bit times at the link rate).
    quanta_ns: Nanos,
    /// (ingress link, PAUSE frame latency to it).
    upstream: Vec<(LinkId, Nanos)>,
    /// A PAUSE is in force (sent, no XON since).
    asserted: bool,
    refresh_pending: bool,
}

impl PortPfc {
    pub(crate) fn new(xoff: u64, xon: u64, quanta_ns: Nanos, upstream: Vec<(LinkId, Nanos)>) -> PortPfc {
        PortPfc { xoff, xon, quanta_ns, upstream, asserted: false, refresh_pending: false }
    }
}

impl Simulation {
    /// After a packet joined output port `lid`'s queue: PAUSE the ingress links above XOFF.
    pub(crate) fn pfc_after_enqueue(&mut self, lid: LinkId) {
        let link = &mut self.links[lid as usize];
        let q = link.q_bytes;
        let pfc = link.pfc.as_deref_mut().expect("pfc port");
        if pfc.asserted || q <= pfc.xoff {
            return;
        }
        pfc.asserted = true;
        self.pfc_send(lid, true);
        self.pfc_arm_refresh(lid);
    }

    /// After a packet left output port `lid`'s queue: XON below the XON threshold.
    pub(crate) fn pfc_after_dequeue(&mut self, lid: LinkId) {
        let link = &mut self.links[lid as usize];
        let q = link.q_bytes;
        let pfc = link.pfc.as_deref_mut().expect("pfc port");
        if !pfc.asserted || q >= pfc.xon {
            return;
        }
        pfc.asserted = false;
        self.pfc_send(lid, false);
    }

    fn pfc_arm_refresh(&mut self, lid: LinkId) {
        let pfc = self.links[lid as usize].pfc.as_deref_mut().expect("pfc port");
        if pfc.refresh_pending {
            return;
        }
        pfc.refresh_pending = true;
        let t = self.now + (pfc.quanta_ns / 2).max(1);
        self.push(t, EvKind::PfcRefresh, lid);
    }

    pub(crate) fn on_pfc_refresh(&mut self, lid: LinkId) {
        let pfc = self.links[lid as usize].pfc.as_deref_mut().expect("pfc port");
        pfc.refresh_pending = false;
        if pfc.asserted {
            self.pfc_send(lid, true);
            self.pfc_arm_refresh(lid);
        }
    }

    /// Send PAUSE (`on`) or XON to every ingress link of output port `lid`.
    fn pfc_send(&mut self, lid: LinkId, on: bool) {
        let now = self.now;
        let link = &mut self.links[lid as usize];
        let pfc = link.pfc.as_deref().expect("pfc port");
        let n = pfc.upstream.len();
        link.stats.pause_frames += n as u64;
        self.pause_frames_total += n as u64;
        for k in 0..n {
            let (up, lat) = self.links[lid as usize].pfc.as_deref().unwrap().upstream[k];
            self.push(now + lat, if on { EvKind::PauseOn } else { EvKind::PauseOff }, up);
        }
    }

    /// A PAUSE frame reaches link `lid`'s transmitter.
    pub(crate) fn on_pause(&mut self, lid: LinkId, on: bool) {
        let now = self.now;
        let link = &mut self.links[lid as usize];
        link.stats.pause_frames += 1;
        if on {
            link.paused_until = now + link.pause_quanta_ns;
            let t = link.paused_until;
            self.push(t, EvKind::Resume, lid);
        } else {
            link.paused_until = now;
            self.on_resume(lid);
        }
    }

    /// A pause may have ended: restart the transmitter if it has work.
    pub(crate) fn on_resume(&mut self, lid: LinkId) {
        let link = &self.links[lid as usize];
        if link.in_tx.is_none() && link.paused_until <= self.now && !link.queue.is_empty() {
            self.next_tx(lid);
        }
    }
}
