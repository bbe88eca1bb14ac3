//! bbrlab's link emulator. This file holds the pure parts: the per-direction link model
//! (Bernoulli loss -> drop-tail byte/packet buffer with optional ECN CE marking -> serialization
//! at the rate -> one-way delay), the seeded RNG and the IP header edits. No I/O and no clock:
//! time is passed in (integer nanoseconds), so everything here is unit-tested without a TUN device.
//!
//! The rest is the emulator proper, entered through [`run_main`] (`run.rs`: command line, process
//! set-up, event loop), which owns the TUN devices (`tun.rs`) and moves packets through
//! [`Link::enqueue`], [`Link::pop_ready`] and [`Link::next_deadline`] (`forward.rs`). Two callers:
//! the `bbrlab-linkemu` binary (`main.rs`) and the Python extension (`bbrlab._core.linkemu_main`),
//! so the Python package carries the emulator compiled in, with no separate build.

use std::collections::VecDeque;

mod forward;
mod run;
mod tun;

pub use run::{run_main, PROCESS_NAME};

/// xorshift64* (Vigna 2016): small, fast, good enough for Bernoulli loss decisions.
#[derive(Clone, Debug)]
pub struct XorShift64Star(u64);

impl XorShift64Star {
    pub fn new(seed: u64) -> Self {
        // SplitMix64 step so that seeds 0, 1, 2 ... give unrelated streams (and never state 0).
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        XorShift64Star(if z == 0 { 0x2545_F491_4F6C_DD1D } else { z })
    }
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in [0, 1) with 53 bits of precision.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// One direction of an emulated link.
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkParams {
    /// Serialization rate in bit/s; 0 = infinitely fast (a pure delay line).
    #[serde(default)]
    pub rate_bps: u64,
    /// One-way propagation delay added after serialization.
    #[serde(default)]
    pub delay_ns: u64,
    /// Bernoulli loss probability applied on arrival, before the buffer.
    #[serde(default)]
    pub loss: f64,
    /// Drop-tail limit in wire bytes (queued + in service); None = unlimited.
    #[serde(default)]
    pub limit_bytes: Option<u64>,
    /// Drop-tail limit in packets; None = unlimited.
    #[serde(default)]
    pub limit_packets: Option<u64>,
    /// Mark ECN-capable packets CE when more than this many bytes wait on arrival (DCTCP's K).
    /// "Wait" excludes the packet in service, as the simulator counts (`crates/sim` network.rs:
    /// its queue holds the waiting packets; the one being serialized is apart).
    #[serde(default)]
    pub ecn_threshold_bytes: Option<u64>,
    /// The same threshold in packets (a packet is marked if either threshold is exceeded).
    #[serde(default)]
    pub ecn_threshold_packets: Option<u64>,
    /// Bytes added to each IP packet's length for serialization and buffer accounting
    /// (38 = Ethernet header + FCS + preamble + inter-frame gap, as the simulator charges).
    #[serde(default)]
    pub overhead_bytes: u32,
}

impl LinkParams {
    pub fn delay_line(delay_ns: u64) -> Self {
        LinkParams {
            rate_bps: 0,
            delay_ns,
            loss: 0.0,
            limit_bytes: None,
            limit_packets: None,
            ecn_threshold_bytes: None,
            ecn_threshold_packets: None,
            overhead_bytes: 0,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Random (Bernoulli) loss.
    Lost,
    /// Buffer overflow (drop-tail).
    Dropped,
    /// Accepted; `ce` = the caller must set CE on the packet.
    Queued { ce: bool },
}

/// Cumulative counters (since the last [`Link::reset_counters`]) and the current interval's
/// integrals (since the last [`Link::sample`]).
#[derive(Clone, Debug, Default)]
pub struct LinkStats {
    pub rx_pkts: u64,
    pub drops: u64,
    pub random_losses: u64,
    pub ce_marks: u64,
    pub tx_pkts: u64,
    pub tx_bytes: u64,
    // interval
    occ_integral: u128,
    max_occ_bytes: u64,
    busy_ns: u64,
    last_change_ns: u64,
    interval_start_ns: u64,
}

/// One sample of a link's queue (a row of the `queue` table).
#[derive(Clone, Debug, PartialEq)]
pub struct QueueSample {
    pub t_ns: u64,
    pub occupancy_bytes: u64,
    pub occupancy_pkts: u64,
    pub mean_occupancy_bytes: f64,
    pub max_occupancy_bytes: u64,
    pub drops: u64,
    pub random_losses: u64,
    pub ce_marks: u64,
    pub tx_bytes: u64,
    pub utilization: f64,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct OriginCounters {
    pub rx_pkts: u64,
    pub drops: u64,
    pub random_losses: u64,
    pub ce_marks: u64,
}

/// A link direction carrying payloads of type `T` (the emulator uses packet-pool slot indices).
pub struct Link<T> {
    pub p: LinkParams,
    rng: XorShift64Star,
    /// Waiting packets; the front one is in service (being serialized) until `head_done_ns`.
    queue: VecDeque<(T, u32, u16)>,
    q_bytes: u64,
    head_done_ns: u64,
    /// Fractional nanoseconds of serialization carried between packets (exact long-run rate).
    carry: u64,
    /// Serialized packets in propagation: (delivery time, payload, origin).
    delay: VecDeque<(u64, T, u16)>,
    pub stats: LinkStats,
    pub per_origin: Vec<OriginCounters>,
}

impl<T> Link<T> {
    pub fn new(p: LinkParams, seed: u64) -> Self {
        Link {
            p,
            rng: XorShift64Star::new(seed),
            queue: VecDeque::new(),
            q_bytes: 0,
            head_done_ns: 0,
            carry: 0,
            delay: VecDeque::new(),
            stats: LinkStats::default(),
            per_origin: Vec::new(),
        }
    }

    /// Serialization time of `wire` bytes at the rate, carrying the remainder.
    pub fn ser_ns(&mut self, wire: u32) -> u64 {
        if self.p.rate_bps == 0 {
            return 0;
        }
        let num = wire as u128 * 8 * 1_000_000_000 + self.carry as u128;
        let r = self.p.rate_bps as u128;
        self.carry = (num % r) as u64;
        (num / r) as u64
    }

    pub fn occupancy_bytes(&self) -> u64 {
        self.q_bytes
    }
    pub fn occupancy_pkts(&self) -> u64 {
        self.queue.len() as u64
    }
    pub fn in_propagation(&self) -> usize {
        self.delay.len()
    }

    fn origin(&mut self, o: u16) -> &mut OriginCounters {
        let i = o as usize;
        if self.per_origin.len() <= i {
            self.per_origin.resize(i + 1, OriginCounters::default());
        }
        &mut self.per_origin[i]
    }

    fn account_occ(&mut self, t: u64) {
        let t = t.max(self.stats.last_change_ns);
        self.stats.occ_integral += self.q_bytes as u128 * (t - self.stats.last_change_ns) as u128;
        self.stats.last_change_ns = t;
    }

    /// Move packets whose serialization has finished by `now` into the delay line.
    pub fn advance(&mut self, now: u64) {
        while !self.queue.is_empty() && self.head_done_ns <= now {
            let done = self.head_done_ns;
            let (payload, wire, origin) = self.queue.pop_front().unwrap();
            self.account_occ(done);
            self.q_bytes -= wire as u64;
            self.stats.tx_pkts += 1;
            self.stats.tx_bytes += wire as u64;
            self.delay.push_back((done + self.p.delay_ns, payload, origin));
            if let Some(&(_, next_wire, _)) = self.queue.front() {
                // Back to back: the next packet starts when this one finished, even if we are
                // called late, so the rate stays exact whatever the loop's latency.
                let s = self.ser_ns(next_wire);
                self.stats.busy_ns += s;
                self.head_done_ns = done + s;
            }
        }
    }

    /// A packet of `ip_len` bytes arrives at `now`. On `Queued` the link keeps `payload`; on
    /// `Lost`/`Dropped` it is handed back so the caller can recycle it.
    pub fn enqueue(
        &mut self,
        now: u64,
        payload: T,
        ip_len: u32,
        ect: bool,
        origin: u16,
    ) -> Result<Verdict, (Verdict, T)> {
        self.advance(now);
        self.stats.rx_pkts += 1;
        self.origin(origin).rx_pkts += 1;
        if self.p.loss > 0.0 && self.rng.next_f64() < self.p.loss {
            self.stats.random_losses += 1;
            self.origin(origin).random_losses += 1;
            return Err((Verdict::Lost, payload));
        }
        let wire = ip_len + self.p.overhead_bytes;
        let over_bytes = self.p.limit_bytes.is_some_and(|l| self.q_bytes + wire as u64 > l);
        let over_pkts = self.p.limit_packets.is_some_and(|l| self.queue.len() as u64 + 1 > l);
        if over_bytes || over_pkts {
            self.stats.drops += 1;
            self.origin(origin).drops += 1;
            return Err((Verdict::Dropped, payload));
        }
        // Step marking on what waits behind the packet in service (the front of `queue`).
        let (wait_bytes, wait_pkts) = match self.queue.front() {
            Some(&(_, head_wire, _)) => {
                (self.q_bytes - head_wire as u64, self.queue.len() as u64 - 1)
            }
            None => (0, 0),
        };
        let ce = ect
            && (self.p.ecn_threshold_bytes.is_some_and(|k| wait_bytes > k)
                || self.p.ecn_threshold_packets.is_some_and(|k| wait_pkts > k));
        if ce {
            self.stats.ce_marks += 1;
            self.origin(origin).ce_marks += 1;
        }
        self.account_occ(now);
        if self.queue.is_empty() {
            let s = self.ser_ns(wire);
            self.stats.busy_ns += s;
            self.head_done_ns = now + s;
        }
        self.queue.push_back((payload, wire, origin));
        self.q_bytes += wire as u64;
        self.stats.max_occ_bytes = self.stats.max_occ_bytes.max(self.q_bytes);
        Ok(Verdict::Queued { ce })
    }

    /// The next packet whose delivery time has come, with its scheduled delivery time and origin.
    pub fn pop_ready(&mut self, now: u64) -> Option<(T, u64, u16)> {
        self.advance(now);
        if self.delay.front().is_some_and(|&(t, _, _)| t <= now) {
            let (t, p, o) = self.delay.pop_front().unwrap();
            return Some((p, t, o));
        }
        None
    }

    /// When something next happens on this link (a serialization ends or a delivery is due).
    pub fn next_deadline(&self) -> Option<u64> {
        let a = if self.queue.is_empty() { None } else { Some(self.head_done_ns) };
        let b = self.delay.front().map(|&(t, _, _)| t);
        match (a, b) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, None) => x,
            (None, y) => y,
        }
    }

    /// Zero the cumulative counters and start a new interval at `now` (the run's time 0).
    pub fn reset_counters(&mut self, now: u64) {
        self.advance(now);
        self.stats = LinkStats {
            last_change_ns: now,
            interval_start_ns: now,
            max_occ_bytes: self.q_bytes,
            ..Default::default()
        };
        self.per_origin.clear();
    }

    /// Close the interval ending at `now` and return its row.
    pub fn sample(&mut self, now: u64) -> QueueSample {
        self.advance(now);
        self.account_occ(now);
        let len = now.saturating_sub(self.stats.interval_start_ns).max(1);
        // Busy time is credited when a packet starts service; cap what spills into the future.
        let future = if self.queue.is_empty() { 0 } else { self.head_done_ns.saturating_sub(now) };
        let busy = self.stats.busy_ns.saturating_sub(future);
        let s = QueueSample {
            t_ns: now,
            occupancy_bytes: self.q_bytes,
            occupancy_pkts: self.queue.len() as u64,
            mean_occupancy_bytes: self.stats.occ_integral as f64 / len as f64,
            max_occupancy_bytes: self.stats.max_occ_bytes,
            drops: self.stats.drops,
            random_losses: self.stats.random_losses,
            ce_marks: self.stats.ce_marks,
            tx_bytes: self.stats.tx_bytes,
            utilization: if self.p.rate_bps == 0 {
                f64::NAN
            } else {
                (busy as f64 / len as f64).min(1.0)
            },
        };
        self.stats.occ_integral = 0;
        self.stats.max_occ_bytes = self.q_bytes;
        self.stats.busy_ns = future;
        self.stats.interval_start_ns = now;
        s
    }
}

// ------------------------------------------------------------------ timer

/// Default wake-up granularity of the event loop (ns).
pub const DEFAULT_TIMER_QUANTUM_NS: u64 = 20_000;

/// When to wake for a deadline `d` (absolute ns): `spin_ns` early (the loop busy-polls the rest),
/// rounded *up* to a multiple of `quantum_ns` (0 or 1 = exact). Never earlier than `d - spin_ns`,
/// less than one quantum later; deadlines in one quantum share a wake-up, so at 1 Gbit/s (a
/// 1538 B packet every 12.3 us) a wake-up delivers one or two packets instead of one, and the
/// timer is not reprogrammed for every packet.
pub fn wake_time(d: u64, spin_ns: u64, quantum_ns: u64) -> u64 {
    let q = quantum_ns.max(1);
    let w = d.saturating_sub(spin_ns);
    w.div_ceil(q).saturating_mul(q)
}

/// A sleep longer than this means the link is nearly idle (a lone SYN, ACK or ping in flight).
pub const IDLE_SLEEP_NS: u64 = 1_000_000;
/// How early a nearly idle emulator wakes before its deadline, busy-polling the rest. A wake-up
/// from a long sleep comes ~0.1–0.2 ms late on a VM (deep idle state, vCPU rescheduling), which
/// added that much to a handshake's RTT; at high rates deadlines are microseconds apart, this
/// never applies and costs no CPU, and at low rates it costs at most 0.1 ms per wake-up.
pub const IDLE_SPIN_NS: u64 = 100_000;

/// The busy-poll window before deadline `d`, seen at `now`: `IDLE_SPIN_NS` (at least `spin_ns`)
/// when the sleep would be long or `d` is the deadline the loop already woke early for
/// (`spin_target`), else `spin_ns`.
pub fn spin_window(d: u64, now: u64, spin_ns: u64, spin_target: u64) -> u64 {
    if d == spin_target || d.saturating_sub(now) > IDLE_SLEEP_NS {
        IDLE_SPIN_NS.max(spin_ns)
    } else {
        spin_ns
    }
}

// ------------------------------------------------------------------ IP header helpers

/// ECN codepoint of an IPv4/IPv6 packet (0 not-ECT, 1 ECT(1), 2 ECT(0), 3 CE), None if not IP.
pub fn ecn_bits(pkt: &[u8]) -> Option<u8> {
    match pkt.first()? >> 4 {
        4 if pkt.len() >= 20 => Some(pkt[1] & 3),
        6 if pkt.len() >= 40 => Some((pkt[1] >> 4) & 3),
        _ => None,
    }
}

/// Set CE on an ECN-capable packet; IPv4 header checksum recomputed. Returns whether it changed.
pub fn set_ce(pkt: &mut [u8]) -> bool {
    match ecn_bits(pkt) {
        Some(1) | Some(2) => {}
        _ => return false,
    }
    if pkt[0] >> 4 == 4 {
        pkt[1] |= 3;
        let ihl = ((pkt[0] & 0x0f) as usize * 4).clamp(20, pkt.len());
        pkt[10] = 0;
        pkt[11] = 0;
        let c = ipv4_checksum(&pkt[..ihl]);
        pkt[10..12].copy_from_slice(&c.to_be_bytes());
    } else {
        pkt[1] |= 3 << 4;
    }
    true
}

/// RFC 791 header checksum (ones' complement of the ones' complement sum).
pub fn ipv4_checksum(hdr: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    for ch in hdr.chunks(2) {
        let w =
            if ch.len() == 2 { u16::from_be_bytes([ch[0], ch[1]]) } else { (ch[0] as u16) << 8 };
        sum += w as u32;
    }
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// IPv4 destination address as a big-endian u32, None for anything else.
pub fn ipv4_dst(pkt: &[u8]) -> Option<u32> {
    if pkt.len() >= 20 && pkt[0] >> 4 == 4 {
        Some(u32::from_be_bytes([pkt[16], pkt[17], pkt[18], pkt[19]]))
    } else {
        None
    }
}

#[cfg(test)]
mod tests;
