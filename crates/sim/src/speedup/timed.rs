//! Timed links (issue 38): timestamped links whose wire is cut-through or jittered, or which
//! send PAUSE at egress — a data-center star's host links and switch ports. Each packet's
//! start, departure and arrival are decided when the link accepts it, as on a plain
//! timestamped link (`serializer.rs`), so the link needs no `TxDone` events.
//!
//! - **Cut-through and jitter.** A packet reaches the far end its header's serialization
//!   (cut-through) or its own (store-and-forward) after it starts, plus the delay and the host's
//!   jitter, never before the packet ahead of it. The jitter is drawn on acceptance: packets
//!   start in the order they are accepted, so each gets the number the event-driven link drew
//!   at its start or departure — unless its loss or RED draw from the same stream at
//!   acceptance, which would interleave differently: such a link stays event-driven
//!   (`Link::can_be_timed`). A sender NIC is timed only as a lazily counted one (`nic.rs`).
//! - **PAUSE sent** (egress accounting's output port, `pfc.rs`). XOFF is crossed as a packet is
//!   accepted, an event. XON is crossed at a start, which has none: the first start after which
//!   the waiting bytes are below XON, given the packets accepted so far, is where it falls
//!   unless more arrive before it, which only moves it later. The port keeps one check there,
//!   keyed as the event-driven start was (`TxDone`, first in an instant's order), and looks
//!   again when it runs (`on_xon_check`). Such a port takes no packet ahead of its time (no
//!   fold into it, nothing served ahead onto it: `takes_packets_ahead`).
//!
//! A link that PAUSE stops stays event-driven: timing it needs its held packets moved at every
//! PAUSE and XON that lands (those not started by then), and on `dc-incast` twenty NIC queues of
//! ~60 packets would move at each XOFF and XON (docs/performance.md). The event-driven model
//! started a packet that arrived at the very instant a pause ended ahead of those the pause
//! held (their `Resume` event came after arrivals in an instant's order); it now waits behind
//! them (`enqueue_event_driven`), FIFO.
//!
//! `timed_links_change_no_result` runs stars with egress PAUSE and cut-through, jitter,
//! store-and-forward, racks with paused trunks, and ingress accounting, timed against
//! event-driven links: the same result tables.

use crate::link::{Link, LinkId};
use crate::{EvKind, Simulation};
use cc::Nanos;
use transport::Packet;

/// A timed link's own state (`Link::timed`).
#[derive(Debug)]
pub(crate) struct TimedWire {
    /// When the last packet accepted reaches the far end (no packet overtakes it).
    last_arrive_ns: Nanos,
    /// (PAUSE-sending ports) The time of the pending XON check (`Nanos::MAX`: none).
    xon_check_at: Nanos,
}

impl Default for TimedWire {
    fn default() -> TimedWire {
        TimedWire { last_arrive_ns: 0, xon_check_at: Nanos::MAX }
    }
}

impl Link {
    /// A packet of `wire_bytes`, `tx_ns` to serialize, starts: how long after its start it
    /// reaches the far end, the jitter drawn now (`Link::arrival_time`'s draw).
    fn wire_offset_ns(&mut self, wire_bytes: u32, tx_ns: Nanos) -> Nanos {
        let ct = self.cut_through_bytes;
        let on_wire = if ct > 0 {
            (ct.min(wire_bytes) as u128 * 8 * 1_000_000_000 / self.rate_bps as u128) as Nanos
        } else {
            tx_ns
        };
        let mut jitter = 0;
        if self.jitter_ns > 0 {
            jitter = self.rng.next_u64() % (self.jitter_ns + 1);
            if ct > 0 {
                // The event-driven link draws once more at the departure, unused (`on_tx_done`
                // works out a jittered arrival before it sees the packet left at its start):
                // the stream must give the next packet the number it gave there.
                self.rng.next_u64();
            }
        }
        on_wire + self.delay_ns + jitter
    }

    fn wire(&mut self) -> &mut TimedWire {
        self.timed.as_deref_mut().expect("a timed link")
    }

    /// This output port sends PAUSE (egress accounting).
    fn sends_pause(&self) -> bool {
        self.pfc.as_deref().is_some_and(|p| p.port.is_some())
    }

    /// The link may take a packet before its time (served ahead onto it: `ahead.rs`): not
    /// if it sends PAUSE at times its queue decides.
    pub(crate) fn takes_packets_ahead(&self) -> bool {
        !self.sends_pause()
    }
}

impl Simulation {
    /// Decide the timed links (`can_be_timed`, with timed parts) among those not yet
    /// timestamped, unless `timed_links` is off (the event-driven model, for the tests); called
    /// once the lazily counted NICs are (sender NICs are timed only as those).
    pub(crate) fn set_timed(&mut self) {
        for l in &mut self.links {
            if !l.fast.timestamped && self.timed_links && !l.is_sender_nic && l.can_be_timed() {
                l.fast.timestamped = true;
            }
            let timed = l.fast.timestamped && l.has_timed_parts();
            l.fast.timed = timed;
            l.fast.plain = l.fast.timestamped && !timed;
            l.timed = timed.then(Box::default);
        }
    }

    /// `enqueue` on a timed link: the native chain's stages as on a plain timestamped link
    /// (`admit_timestamped`), then the serializer accepts the packet, its arrival fixed with
    /// its jitter, and an egress port past XOFF sends PAUSE.
    #[inline(never)]
    pub(crate) fn enqueue_timed(&mut self, lid: LinkId, mut p: Packet) {
        let now = self.now;
        let Some(queued) = self.admit_timestamped(lid, &mut p) else {
            return;
        };
        let link = &mut self.links[lid as usize];
        let dt = link.tx_time_ns(p.wire_bytes);
        let slot = link.ser.accept(now, dt, p.wire_bytes);
        let offset = link.wire_offset_ns(p.wire_bytes, dt);
        let ahead_ns = link.wire().last_arrive_ns;
        let arrive = fifo_arrival(link.jitter_ns, slot.start_ns, offset, ahead_ns);
        link.wire().last_arrive_ns = arrive;
        if queued && link.sends_pause() {
            self.pfc_after_enqueue(lid);
            self.arm_xon_check(lid);
        }
        if self.links[lid as usize].fast.fold {
            self.fold_into_next(arrive, p);
        } else {
            self.enter_pipe(lid, arrive, p, p.hop + 1);
        }
    }

    /// An egress port that has sent PAUSE: a check at the start after which its queue is
    /// below XON, given what it holds now (see the module header).
    fn arm_xon_check(&mut self, lid: LinkId) {
        let link = &mut self.links[lid as usize];
        let port = link.pfc.as_deref().and_then(|p| p.port.as_ref()).expect("pfc port");
        // A pending check stands: an arrival since only moved the crossing later, and the check
        // looks again when it finds no XON (the scan below at each arrival was ~130
        // instructions per packet on `dc-incast`).
        let pending = link.timed.as_deref().is_some_and(|w| w.xon_check_at != Nanos::MAX);
        if !port.pause_asserted() || pending {
            return;
        }
        let xon = port.xon_bytes();
        let mut q = link.q_bytes;
        let at = link.ser.waiting().iter().find_map(|s| {
            q -= s.wire_bytes as u64;
            (q < xon).then_some(s.start_ns)
        });
        let t = at.expect("the queue drains below XON");
        link.wire().xon_check_at = t;
        self.push(t, EvKind::TxDone, lid);
    }

    /// The XON check of egress port `lid` at `now`: the start it was set for happened; XON if
    /// the queue is below XON now, else a check at the next candidate.
    pub(crate) fn on_xon_check(&mut self, lid: LinkId) {
        let now = self.now;
        let last_sample_ns = self.metrics.last_sample_ns;
        let link = &mut self.links[lid as usize];
        if link.wire().xon_check_at != now {
            return; // superseded
        }
        link.wire().xon_check_at = Nanos::MAX;
        link.replay(now, last_sample_ns);
        self.pfc_after_dequeue(lid);
        self.arm_xon_check(lid);
    }
}

/// The arrival of a packet that starts at `start_ns` and reaches the far end `offset_ns`
/// later, the packet ahead of it arriving at `ahead_ns`: a jittered wire never reorders.
#[inline]
fn fifo_arrival(jitter_ns: u64, start_ns: Nanos, offset_ns: Nanos, ahead_ns: Nanos) -> Nanos {
    let a = start_ns + offset_ns;
    if jitter_ns > 0 {
        a.max(ahead_ns)
    } else {
        a
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::speedup::tests::{assert_saves_events, run_outcome, sped_up_changes_nothing};
    use crate::test_support::incast_flows;

    /// An incast star: `workers` CUBIC senders (flow i on worker i) into one aggregator, 1 GbE,
    /// 10 µs host links, 300 ms; `topo` is spliced into the topology.
    fn star(workers: u32, topo: &str) -> String {
        format!(
            r#"{{"seed":5,"duration_ns":300000000,"sample_interval_ns":10000000,
                "topology":{{"kind":"star","workers":{workers},"rate_bps":1000000000,
                  "delay_ns":10000{topo}}},
                "flows":[{}]}}"#,
            incast_flows(workers)
        )
    }

    /// Timed links of a run of `json` (`timed_links` on).
    fn timed_links(json: &str) -> usize {
        let sim = Simulation::from_json(json).unwrap();
        sim.links.iter().filter(|l| l.fast.timed).count()
    }

    /// Timed links against the same links event-driven: the same result tables (flows, time
    /// series, queues), data packets and TSQ wake-ups. dc-incast's fabric (egress PAUSE,
    /// cut-through, host jitter, clock skew: the ToR's ports are timed), PAUSE with
    /// store-and-forward and neither jitter nor skew, lossy ports with jitter and a larger
    /// spread (the NICs are timed), the same cut-through, racks whose trunks are paused and
    /// pause, and ingress
    /// accounting with a shared pool, which keeps its links event-driven.
    #[test]
    fn timed_links_change_no_result() {
        let lossless_ct = r#","forwarding":"cut-through","lossless":true"#;
        let cases = [
            // (topology, timed links: the ToR's ports, or the hosts' NICs)
            (star(8, lossless_ct), 9),
            (
                star(
                    6,
                    r#","lossless":true,"clock_ppm":0,"host_jitter_ns":0,
                       "pfc":{"xoff_bytes":30000,"xon_bytes":15000}"#,
                ),
                7,
            ),
            (star(8, r#","buffer_bytes":128000,"host_jitter_ns":5000"#), 9),
            (star(8, r#","forwarding":"cut-through","buffer_bytes":128000"#), 9),
            (star(8, &format!(r#"{lossless_ct},"hosts_per_rack":4"#)), 9),
            (
                star(
                    8,
                    r#","lossless":true,"pfc":{"accounting":"ingress"},
                       "shared_buffer_bytes":200000"#,
                ),
                0,
            ),
        ];
        let pauses = std::cell::Cell::new(0);
        for (json, timed) in &cases {
            assert_eq!(timed_links(json), *timed, "timed links: {json}");
            let run = |sped_up: bool| {
                let mut sim = Simulation::from_json_timing(json, sped_up);
                sim.run_until(u64::MAX);
                pauses.set(pauses.get() + sim.pause_frames_total * sped_up as u64);
                run_outcome(&mut sim)
            };
            let (fast, slow) = sped_up_changes_nothing(run, 10_000, json);
            assert_eq!(fast.3, slow.3, "TSQ wake-ups: {json}");
            if *timed > 0 {
                // Each data packet's departure from the port or its NIC, less the XON checks.
                assert_saves_events(&fast, &slow, (1, 2));
            } else {
                assert_eq!(fast.1, slow.1, "nothing timed, the same events: {json}");
            }
        }
        assert!(pauses.get() > 1_000, "PAUSE frames: {}", pauses.get());
    }
}
