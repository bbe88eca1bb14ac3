//! Folded router hops: a packet that a timestamped link accepts into a router whose next link
//! is passive (it decides and reports nothing) and fed by that link alone enters the next link
//! at once, at the time it will reach the router, so the router hop costs no `Arrive` event.
//! Exact, because the next link's arrivals are the feeding link's departures, in their order,
//! and nothing else reads its state in between (`FastPath::fold`). A link that a discipline
//! keeps event-driven (`link/aqm.rs`) folds the same way, at each departure (`on_tx_done`),
//! when that is all that keeps it from being timestamped.

use crate::link::NodeKind;
use crate::Simulation;
use cc::Nanos;
use transport::Packet;

impl Simulation {
    /// Packet `p` will reach the router at the far end of a `fold` link at `t`: enter its next
    /// link now, as `hand_over` and `enqueue` would at `t`. Exact: the next link is passive and
    /// fed by that link alone, a FIFO, so it sees the same arrivals in the same order, only
    /// earlier in wall-clock terms; nothing else reads its state in between. Folds on through
    /// a chain of such links.
    pub(crate) fn fold_into_next(&mut self, mut t: Nanos, p: Packet) {
        let mut hop = p.hop;
        loop {
            hop += 1;
            let f = &self.flows[p.flow as usize];
            let next = if p.is_data {
                f.data_path.links[hop as usize]
            } else {
                f.ack_path.links[hop as usize]
            };
            let link = &mut self.links[next as usize];
            // As `enqueue` does on a passive link (a fold's next links are passive).
            debug_assert!(link.fast.passive);
            let dt = link.tx_time_ns(p.wire_bytes);
            t = link.ser.pass(t, dt) + link.delay_ns;
            if !link.fast.fold {
                self.enter_pipe(next, t, p, hop + 1);
                return;
            }
        }
    }

    /// Decide which links fold (`Link::fold`): every link into a router whose next links (over
    /// all flows' paths) are passive and fed by it alone. Off with applications, whose
    /// transfers add paths while the simulation runs.
    pub(crate) fn set_folds(&mut self) {
        let n = self.links.len();
        let mut monitored = vec![false; n];
        for &(m, _) in &self.monitored {
            monitored[m as usize] = true;
        }
        for (l, &m) in self.links.iter_mut().zip(&monitored) {
            l.fast.passive = l.is_passive(m);
        }
        if !self.apps.is_empty() || !self.workloads.is_empty() {
            return;
        }
        let LinkNeighbours { feeder, next } = self.link_neighbours();
        // (Not a sender NIC: TSQ must see each of its departures, which is its event.)
        let mut fold: Vec<bool> = (0..n)
            .map(|a| {
                let l = &self.links[a];
                next[a] != NONE
                    && (l.fast.timestamped || l.timestamped_but_for_its_discipline())
                    && !l.is_sender_nic
                    && !l.fast.lazy_tsq
                    && l.to == NodeKind::Router
            })
            .collect();
        for f in &self.flows {
            for path in [&f.data_path, &f.ack_path] {
                for w in path.links[..path.len as usize].windows(2) {
                    let (a, b) = (w[0] as usize, w[1] as usize);
                    // Every link fed from `a` must be fed by `a` alone, and passive.
                    if feeder[b] != a as u32 || !self.links[b].fast.passive {
                        fold[a] = false;
                    }
                }
            }
        }
        for (l, f) in self.links.iter_mut().zip(fold) {
            l.fast.fold = f;
        }
    }

    /// Over all flows' paths: the link that feeds each link, and the link each one feeds
    /// (`NONE`, or `MANY` when there are several) — what `set_folds` and `set_ahead` decide by.
    pub(crate) fn link_neighbours(&self) -> LinkNeighbours {
        let one_or_many = |cur: u32, l: u32| match cur {
            NONE => l,
            x if x == l => x,
            _ => MANY,
        };
        let n = self.links.len();
        let (mut feeder, mut next) = (vec![NONE; n], vec![NONE; n]);
        for f in &self.flows {
            for path in [&f.data_path, &f.ack_path] {
                for w in path.links[..path.len as usize].windows(2) {
                    let (a, b) = (w[0], w[1]);
                    next[a as usize] = one_or_many(next[a as usize], b);
                    feeder[b as usize] = one_or_many(feeder[b as usize], a);
                }
            }
        }
        LinkNeighbours { feeder, next }
    }
}

/// No link (in `LinkNeighbours`).
pub(crate) const NONE: u32 = u32::MAX;
/// Several links (in `LinkNeighbours`).
pub(crate) const MANY: u32 = u32::MAX - 1;

/// Each link's feeding link and fed link over all flows' paths (`Simulation::link_neighbours`).
pub(crate) struct LinkNeighbours {
    pub feeder: Vec<u32>,
    pub next: Vec<u32>,
}
