//! The packet path between the TUN devices: read a packet, pass it through the link stages
//! ([`Link`]), write it out when it is due. The event loop (`run.rs`) decides *when*; this module
//! decides *where*:
//!
//! ```text
//! sender TUN i --[access fwd i: extra delay]--> bottleneck (shared) --> receiver TUN
//! receiver TUN --> bottleneck_rev (shared) --[access rev i: extra delay]--> sender TUN i
//! ```
//!
//! Packets live in a [`Pool`] of fixed-size slots; the links carry slot indices, so forwarding
//! allocates nothing per packet.

use std::collections::HashMap;
use std::os::fd::RawFd;

use crate::{
    ect0_to_ect1, flow_key, ipv4_dst, packet_ecn, set_ce, Arrival, Ecn, Link, OriginCounters,
    QueueSample,
};

pub(crate) fn now_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Fixed-size packet slots, recycled through a free list (no allocation per packet).
pub(crate) struct Pool {
    slot: usize,
    data: Vec<u8>,
    pub(crate) len: Vec<u32>,
    free: Vec<u32>,
}

impl Pool {
    pub(crate) fn new(slot: usize) -> Self {
        Pool { slot, data: Vec::new(), len: Vec::new(), free: Vec::new() }
    }
    pub(crate) fn get(&mut self) -> u32 {
        if let Some(i) = self.free.pop() {
            return i;
        }
        let i = self.len.len() as u32;
        self.data.resize(self.data.len() + self.slot, 0);
        self.len.push(0);
        i
    }
    pub(crate) fn put(&mut self, i: u32) {
        self.free.push(i);
    }
    pub(crate) fn buf(&mut self, i: u32) -> &mut [u8] {
        let s = i as usize * self.slot;
        &mut self.data[s..s + self.slot]
    }
    pub(crate) fn pkt(&mut self, i: u32) -> &mut [u8] {
        let s = i as usize * self.slot;
        let n = self.len[i as usize] as usize;
        &mut self.data[s..s + n]
    }
    /// Reads one packet from `fd` (a non-blocking TUN) into a fresh slot and returns the slot;
    /// none, with the slot given back, when the read yields nothing (empty or an error).
    pub(crate) fn read_from(&mut self, fd: RawFd) -> Option<u32> {
        let i = self.get();
        let buf = self.buf(i);
        let r = unsafe { libc::read(fd, buf.as_mut_ptr() as *mut _, buf.len()) };
        if r <= 0 {
            self.put(i);
            return None;
        }
        self.len[i as usize] = r as u32;
        Some(i)
    }
}

/// One origin's counters as a JSON object of the final line (per sender, or per graph flow).
pub(crate) fn origin_json(c: &OriginCounters) -> String {
    format!(
        "{{\"rx_pkts\":{},\"drops\":{},\"random_losses\":{},\"ce_marks\":{},\
         \"policer_drops\":{}}}",
        c.rx_pkts, c.drops, c.random_losses, c.ce_marks, c.policer_drops
    )
}

/// A float as JSON (null for NaN: a statistic over no packets, or not measured).
fn json_f64(x: f64, decimals: usize) -> String {
    if x.is_finite() {
        format!("{x:.decimals$}")
    } else {
        "null".into()
    }
}

/// One queue sample as a JSON line of the statistics file (times relative to `t0`). Sojourn
/// statistics are over the packets that entered service in the interval; counters cumulative.
pub(crate) fn sample_json(name: &str, t0: u64, s: &QueueSample) -> String {
    format!(
        "{{\"queue\":\"{name}\",\"t_ns\":{},\"occupancy_bytes\":{},\"occupancy_pkts\":{},\
         \"mean_occupancy_bytes\":{:.3},\"max_occupancy_bytes\":{},\"drops\":{},\
         \"drops_overflow\":{},\"drops_aqm\":{},\"random_losses\":{},\"ce_marks\":{},\
         \"tx_bytes\":{},\"utilization\":{},\"sojourn_mean_ns\":{},\"sojourn_p50_ns\":{},\
         \"sojourn_p99_ns\":{},\"l4s_sojourn_mean_ns\":{},\"l4s_sojourn_p50_ns\":{},\
         \"l4s_sojourn_p99_ns\":{},\"rate_bps\":{},\"policer_drops\":{}}}",
        s.t_ns - t0,
        s.occupancy_bytes,
        s.occupancy_pkts,
        s.mean_occupancy_bytes,
        s.max_occupancy_bytes,
        s.drops,
        s.drops_overflow,
        s.drops_aqm,
        s.random_losses,
        s.ce_marks,
        s.tx_bytes,
        json_f64(s.utilization, 6),
        json_f64(s.sojourn_mean_ns, 1),
        json_f64(s.sojourn_p50_ns, 1),
        json_f64(s.sojourn_p99_ns, 1),
        json_f64(s.l4s_sojourn_mean_ns, 1),
        json_f64(s.l4s_sojourn_p50_ns, 1),
        json_f64(s.l4s_sojourn_p99_ns, 1),
        s.rate_bps,
        s.policer_drops,
    )
}

/// What the event loop (`run.rs`) drives: a set of TUN devices it watches (`inputs`, epoll tags
/// 0..n) and links whose deadlines it sleeps until. Two implementations: the dumbbell ([`Emu`],
/// below) and a graph (`graph.rs`).
pub(crate) trait Forwarder {
    /// The TUN descriptors to watch, in tag order.
    fn inputs(&self) -> Vec<RawFd>;
    /// Read what input `i` has (up to a batch).
    fn drain_input(&mut self, i: usize);
    /// Deliver everything due by `now`.
    fn run_timers(&mut self, now: u64);
    /// When something next happens on a link.
    fn next_deadline(&self) -> Option<u64>;
    /// Close every link's interval at `t` (a grid point), one row each, by the link's name.
    fn sample(&mut self, t: u64, row: &mut dyn FnMut(&str, &QueueSample));
    /// The run starts at `t0` (the runner's `start`): counters zeroed, schedules start.
    fn start_run(&mut self, t0: u64);
    /// The last line of a run.
    fn final_json(&self, exit_reason: &str) -> String;
    /// The loop's counters.
    fn loop_stats(&mut self) -> &mut LoopStats;

    /// Close the statistics interval ending at grid point `t` (the run started at `t0`): every
    /// link's row, and whether the loop stalled in it.
    fn close_interval(&mut self, t: u64, t0: u64, row: &mut dyn FnMut(&str, &QueueSample)) {
        self.sample(t, row);
        self.loop_stats().close_interval(t, t0);
    }
}

impl Forwarder for Emu {
    /// The senders' TUNs, then the receiver's.
    fn inputs(&self) -> Vec<RawFd> {
        self.sender_fds.iter().copied().chain(std::iter::once(self.recv_fd)).collect()
    }

    fn drain_input(&mut self, i: usize) {
        if i < self.sender_fds.len() {
            let fd = self.sender_fds[i];
            self.drain(fd, Some(i), 64);
        } else {
            self.drain(self.recv_fd, None, 64);
        }
    }

    fn run_timers(&mut self, now: u64) {
        Emu::run_timers(self, now)
    }

    fn next_deadline(&self) -> Option<u64> {
        Emu::next_deadline(self)
    }

    fn sample(&mut self, t: u64, row: &mut dyn FnMut(&str, &QueueSample)) {
        let a = self.fwd.sample(t);
        let b = self.rev.sample(t);
        row("bottleneck", &a);
        row("bottleneck_rev", &b);
    }

    fn start_run(&mut self, t: u64) {
        self.fwd.reset_counters(t.min(now_ns()));
        self.rev.reset_counters(t.min(now_ns()));
        // The run's time 0: schedules and traces count from it.
        self.fwd.start_run(t);
        self.rev.start_run(t);
        self.stats.start_intervals();
    }

    fn final_json(&self, exit_reason: &str) -> String {
        Emu::final_json(self, exit_reason)
    }

    fn loop_stats(&mut self) -> &mut LoopStats {
        &mut self.stats
    }
}

/// The dumbbell's links and TUN descriptors (borrowed: the event loop owns the devices).
pub(crate) struct Emu {
    pub(crate) pool: Pool,
    pub(crate) sender_fds: Vec<RawFd>,
    pub(crate) recv_fd: RawFd,
    pub(crate) addr_to_sender: HashMap<u32, u16>,
    /// Per sender: rewrite its ECT(0) packets to ECT(1) on arrival (an L4S flow, docs/emu.md).
    pub(crate) ect1: Vec<bool>,
    pub(crate) access_fwd: Vec<Option<Link<u32>>>,
    pub(crate) access_rev: Vec<Option<Link<u32>>>,
    pub(crate) fwd: Link<u32>,
    pub(crate) rev: Link<u32>,
    pub(crate) stats: LoopStats,
}

/// Lateness from which the loop counts as stalled, ns. The loop wakes on a 20 us grid
/// ([`crate::DEFAULT_TIMER_QUANTUM_NS`]) and its packets leave a few tens of us late on average
/// (26-27 us at 500 Mbit/s on the 2-core VM, docs/emu.md), so a packet 1 ms late means the loop
/// did not run for 50 quanta: descheduled, throttled or preempted, not timer jitter. Whatever it
/// should have delivered meanwhile then leaves at once (at 100 Mbit/s about 8 full-size packets,
/// at 500 Mbit/s about 42, and the reverse path's ACKs with them), and the sender answers the
/// bunched ACKs with a burst of as many bytes into the queue: a burst a shallow buffer feels.
pub const STALL_THRESHOLD_NS: u64 = 1_000_000;

/// At most this many stalls are listed in the final line (one per statistics interval: 10 000
/// intervals are 1000 s at the default 100 ms, longer than any run); `stall_count` counts all.
pub const MAX_STALLS_LISTED: usize = 10_000;

/// What the forwarding loop counts, for its final line (the dumbbell's and the graph's alike):
/// failed writes to a TUN, packets no route takes, how late packets left against their due
/// time, reads from the TUNs and the largest batch read at once; how late the loop woke from its
/// timed sleeps; and the statistics intervals in which the loop stalled (a packet left
/// [`STALL_THRESHOLD_NS`] or more late).
///
/// A packet belongs to the interval in which it left (its wake-up time `now`). The event loop
/// delivers at a wake-up, then closes every grid point up to that wake-up
/// ([`Forwarder::close_interval`]), so the packets of earlier wake-ups all left before the grid
/// point being closed, and those of the latest wake-up belong to it only if they left at or
/// before it: after a stall across a grid point, its late packets count in the next interval,
/// where the burst that follows them lands.
///
/// Wake-up lateness tells two kinds of stall apart. A timed sleep (epoll_pwait2's timeout, or
/// the timerfd's wake time) that ended by its timeout, no descriptor having woken the loop
/// first, was late by the time between the wake-up it asked for and the wake-up it got
/// ([`LoopStats::note_sleep`], at that wake-up's `now`, so it joins the same interval as the
/// packets it delivers). The loop was idle then, so a late wake-up is the machine's (a VM's
/// vCPU woken late from idle: the hypervisor), not the loop being busy or preempted while it
/// ran. Each listed stall carries its interval's largest wake-up lateness; a stall whose
/// wake-up lateness reaches the stall threshold itself counts as a late wake-up
/// (`python/bbrlab/emu/stalls.py`, where that rule is applied). It also carries the largest
/// *sleep overrun*: how late any timed sleep returned against the time it asked for, whatever
/// ended it. A sleep that returns late with a packet ready was not running either, but whether
/// the packet or the late timer woke it cannot be told, so it is not counted a late wake-up.
#[derive(Default)]
pub(crate) struct LoopStats {
    pub(crate) write_errors: u64,
    pub(crate) unroutable: u64,
    pub(crate) late_sum_ns: u128,
    pub(crate) late_max_ns: u64,
    pub(crate) late_n: u64,
    pub(crate) reads: u64,
    pub(crate) max_batch: usize,
    /// Timed sleeps that ended by their timeout: how many, their summed and largest lateness,
    /// and how many were [`STALL_THRESHOLD_NS`] or more late, ns.
    pub(crate) timed_wakes: u64,
    pub(crate) wake_late_sum_ns: u128,
    pub(crate) wake_late_max_ns: u64,
    pub(crate) late_wakes: u64,
    /// What the earlier wake-ups in the open interval saw.
    interval: Lateness,
    /// The latest wake-up that delivered a packet or ended a timed sleep, and what it saw.
    last_wake_ns: u64,
    last_wake: Lateness,
    /// (interval end relative to the run's start, the interval's largest packet lateness,
    /// wake-up lateness and sleep overrun), ns, for the first [`MAX_STALLS_LISTED`] intervals
    /// with a stall; `stall_count` counts every one.
    pub(crate) stalls: Vec<(u64, u64, u64, u64)>,
    pub(crate) stall_count: u64,
}

/// The largest lateness seen at some wake-ups, ns: of the packets that left, of the timed
/// sleeps that ended by their timeout (wake-up lateness), of every timed sleep (overrun).
#[derive(Default, Clone, Copy)]
struct Lateness {
    pkt_ns: u64,
    wake_ns: u64,
    sleep_ns: u64,
}

impl Lateness {
    fn max(self, o: Lateness) -> Lateness {
        Lateness {
            pkt_ns: self.pkt_ns.max(o.pkt_ns),
            wake_ns: self.wake_ns.max(o.wake_ns),
            sleep_ns: self.sleep_ns.max(o.sleep_ns),
        }
    }
}

impl LoopStats {
    /// The wake-up at `now` starts: what the previous one saw joins the open interval.
    fn at_wake(&mut self, now: u64) {
        if now != self.last_wake_ns {
            self.interval = self.interval.max(std::mem::take(&mut self.last_wake));
            self.last_wake_ns = now;
        }
    }

    /// A packet due at `due` leaves at `now`.
    pub(crate) fn note_late(&mut self, now: u64, due: u64) {
        let late = now.saturating_sub(due);
        self.late_sum_ns += late as u128;
        self.late_n += 1;
        self.late_max_ns = self.late_max_ns.max(late);
        self.at_wake(now);
        self.last_wake.pkt_ns = self.last_wake.pkt_ns.max(late);
    }

    /// A timed sleep that asked to wake at `asked` returned, by its timeout (`by_timeout`) or
    /// for a descriptor; the loop runs at `now` (the wake-up its deliveries are noted at). Call
    /// it before that wake-up's deliveries.
    pub(crate) fn note_sleep(&mut self, now: u64, asked: u64, by_timeout: bool) {
        let late = now.saturating_sub(asked);
        self.at_wake(now);
        self.last_wake.sleep_ns = self.last_wake.sleep_ns.max(late);
        if !by_timeout {
            return;
        }
        self.timed_wakes += 1;
        self.wake_late_sum_ns += late as u128;
        self.wake_late_max_ns = self.wake_late_max_ns.max(late);
        if late >= STALL_THRESHOLD_NS {
            self.late_wakes += 1;
        }
        self.last_wake.wake_ns = self.last_wake.wake_ns.max(late);
    }

    /// The mean lateness of the packets that left, ns (0 before any).
    pub(crate) fn late_mean_ns(&self) -> f64 {
        if self.late_n > 0 {
            self.late_sum_ns as f64 / self.late_n as f64
        } else {
            0.0
        }
    }

    /// The mean lateness of the timed sleeps that ended by their timeout, ns (0 before any).
    pub(crate) fn wake_late_mean_ns(&self) -> f64 {
        if self.timed_wakes > 0 {
            self.wake_late_sum_ns as f64 / self.timed_wakes as f64
        } else {
            0.0
        }
    }

    /// The run starts: what left before it belongs to no interval.
    pub(crate) fn start_intervals(&mut self) {
        self.interval = Lateness::default();
        self.last_wake = Lateness::default();
    }

    /// Close the statistics interval ending at `end_ns` (absolute; the run started at `t0`):
    /// a stall when a packet that left in it was [`STALL_THRESHOLD_NS`] or more late.
    pub(crate) fn close_interval(&mut self, end_ns: u64, t0: u64) {
        let mut l = std::mem::take(&mut self.interval);
        if self.last_wake_ns <= end_ns {
            l = l.max(std::mem::take(&mut self.last_wake));
        }
        if l.pkt_ns >= STALL_THRESHOLD_NS {
            self.stall_count += 1;
            if self.stalls.len() < MAX_STALLS_LISTED {
                self.stalls.push((end_ns.saturating_sub(t0), l.pkt_ns, l.wake_ns, l.sleep_ns));
            }
        }
    }

    /// The final line's wake-up fields, `"timed_wakes":N,"late_wakes":K,
    /// "wake_late_mean_ns":M,"wake_late_max_ns":X` (`late_wakes`: those the stall threshold or
    /// more late).
    pub(crate) fn wakes_json(&self) -> String {
        format!(
            "\"timed_wakes\":{},\"late_wakes\":{},\"wake_late_mean_ns\":{:.1},\
             \"wake_late_max_ns\":{}",
            self.timed_wakes,
            self.late_wakes,
            self.wake_late_mean_ns(),
            self.wake_late_max_ns
        )
    }

    /// The final line's stall fields: the threshold (so that readers need not repeat it), the
    /// count and the list, `"stall_threshold_ns":T,"stall_count":N,
    /// "stalls":[[t_ns,late_ns,wake_late_ns,sleep_late_ns],...]` (the first two as before
    /// wake-up lateness was recorded, so that older readers still work).
    pub(crate) fn stalls_json(&self) -> String {
        let list: Vec<String> =
            self.stalls.iter().map(|(t, l, w, o)| format!("[{t},{l},{w},{o}]")).collect();
        format!(
            "\"stall_threshold_ns\":{STALL_THRESHOLD_NS},\"stall_count\":{},\"stalls\":[{}]",
            self.stall_count,
            list.join(",")
        )
    }
}

impl Emu {
    fn write_pkt(&mut self, fd: RawFd, i: u32) {
        let n = self.pool.len[i as usize] as usize;
        let buf = self.pool.buf(i);
        let r = unsafe { libc::write(fd, buf.as_ptr() as *const _, n) };
        if r < 0 {
            self.stats.write_errors += 1;
        }
        self.pool.put(i);
    }

    fn enter_bottleneck(&mut self, now: u64, i: u32, origin: u16) {
        enqueue_bottleneck(&mut self.fwd, &mut self.pool, now, i, origin);
    }

    fn take_from_sender(&mut self, now: u64, s: usize, i: u32) {
        match self.access_fwd[s].as_mut() {
            Some(a) => enqueue_access(a, &mut self.pool, now, i, s as u16),
            None => self.enter_bottleneck(now, i, s as u16),
        }
    }

    fn take_from_receiver(&mut self, now: u64, i: u32) {
        let dst = ipv4_dst(self.pool.pkt(i));
        let Some(&s) = dst.and_then(|d| self.addr_to_sender.get(&d)) else {
            self.stats.unroutable += 1;
            self.pool.put(i);
            return;
        };
        enqueue_bottleneck(&mut self.rev, &mut self.pool, now, i, s);
    }

    /// Return to the pool the packets the bottleneck's disciplines dropped (CoDel drops at
    /// dequeue, FQ-CoDel drops another flow's packet at enqueue).
    fn recycle_dropped(&mut self) {
        for l in [&mut self.fwd, &mut self.rev] {
            for i in l.drain_dropped() {
                self.pool.put(i);
            }
        }
    }

    /// Deliver everything due by `now`, in order through the stages; a packet the bottleneck
    /// marked gets CE in its header as it leaves.
    pub(crate) fn run_timers(&mut self, now: u64) {
        for s in 0..self.access_fwd.len() {
            while let Some(d) = self.access_fwd[s].as_mut().and_then(|a| a.pop_ready(now)) {
                // Enter the bottleneck at the scheduled time, not the (later) wake-up time.
                self.enter_bottleneck(d.due_ns, d.payload, s as u16);
            }
        }
        while let Some(d) = self.fwd.pop_ready(now) {
            self.stats.note_late(now, d.due_ns);
            if d.ce {
                set_ce(self.pool.pkt(d.payload));
            }
            let fd = self.recv_fd;
            self.write_pkt(fd, d.payload);
        }
        while let Some(d) = self.rev.pop_ready(now) {
            if d.ce {
                set_ce(self.pool.pkt(d.payload));
            }
            let s = d.origin as usize;
            match self.access_rev[s].as_mut() {
                Some(a) => enqueue_access(a, &mut self.pool, d.due_ns, d.payload, d.origin),
                None => {
                    let fd = self.sender_fds[s];
                    self.write_pkt(fd, d.payload);
                }
            }
        }
        for s in 0..self.access_rev.len() {
            while let Some(d) = self.access_rev[s].as_mut().and_then(|a| a.pop_ready(now)) {
                let fd = self.sender_fds[s];
                self.write_pkt(fd, d.payload);
            }
        }
        self.recycle_dropped();
    }

    pub(crate) fn next_deadline(&self) -> Option<u64> {
        let mut d =
            [self.fwd.next_deadline(), self.rev.next_deadline()].into_iter().flatten().min();
        for a in self.access_fwd.iter().chain(self.access_rev.iter()).flatten() {
            if let Some(t) = a.next_deadline() {
                d = Some(d.map_or(t, |x: u64| x.min(t)));
            }
        }
        d
    }

    /// Read up to `budget` packets from `fd`; returns how many were read.
    pub(crate) fn drain(&mut self, fd: RawFd, from: Option<usize>, budget: usize) -> usize {
        let mut n = 0;
        while n < budget {
            let Some(i) = self.pool.read_from(fd) else { break };
            self.stats.reads += 1;
            let now = now_ns();
            match from {
                Some(s) => {
                    if self.ect1[s] {
                        ect0_to_ect1(self.pool.pkt(i));
                    }
                    self.take_from_sender(now, s, i)
                }
                None => self.take_from_receiver(now, i),
            }
            n += 1;
        }
        self.recycle_dropped();
        self.stats.max_batch = self.stats.max_batch.max(n);
        n
    }

    /// The last line of a run: per-sender counters and the loop's own statistics.
    pub(crate) fn final_json(&self, exit_reason: &str) -> String {
        let n = self.sender_fds.len();
        let per = |l: &Link<u32>| {
            (0..n)
                .map(|i| origin_json(&l.per_origin.get(i).copied().unwrap_or_default()))
                .collect::<Vec<_>>()
                .join(",")
        };
        format!(
            "{{\"final\":true,\"reason\":\"{exit_reason}\",\"forward_per_sender\":[{}],\"reverse_per_sender\":[{}],\"forward_tx_bytes\":{},\"reverse_tx_bytes\":{},\"forward_tx_pkts\":{},\"reverse_tx_pkts\":{},\"write_errors\":{},\"unroutable\":{},\"reads\":{},\"max_batch\":{},\"late_mean_ns\":{:.1},\"late_max_ns\":{},{},{},\"pool_slots\":{}}}",
            per(&self.fwd),
            per(&self.rev),
            self.fwd.stats.tx_bytes,
            self.rev.stats.tx_bytes,
            self.fwd.stats.tx_pkts,
            self.rev.stats.tx_pkts,
            self.stats.write_errors,
            self.stats.unroutable,
            self.stats.reads,
            self.stats.max_batch,
            self.stats.late_mean_ns(),
            self.stats.late_max_ns,
            self.stats.wakes_json(),
            self.stats.stalls_json(),
            self.pool.len.len()
        )
    }
}

/// Queue packet `i` at a bottleneck direction, its discipline told the packet's size, ECN
/// codepoint and flow (read from its header now: the link holds only the slot index); a packet
/// it refuses goes back to the pool.
fn enqueue_bottleneck(link: &mut Link<u32>, pool: &mut Pool, now: u64, i: u32, origin: u16) {
    let a = {
        let p = pool.pkt(i);
        Arrival { ip_len: p.len() as u32, ecn: packet_ecn(p), flow_key: flow_key(p), origin }
    };
    if let Err((_, i)) = link.enqueue(now, i, a) {
        pool.put(i);
    }
}

/// Queue packet `i` on a host's access link (a delay line: no marking, no flows); a refused
/// packet's buffer goes back to the pool.
fn enqueue_access(link: &mut Link<u32>, pool: &mut Pool, now: u64, i: u32, origin: u16) {
    let a = Arrival { ip_len: pool.len[i as usize], ecn: Ecn::NotEct, flow_key: 0, origin };
    if let Err((_, i)) = link.enqueue(now, i, a) {
        pool.put(i);
    }
}
