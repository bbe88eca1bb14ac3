//! bbrlab's link emulator. This file, `params.rs`, `link.rs` and `path.rs` hold the pure parts:
//! the per-direction link model (`link.rs`: Bernoulli loss -> the shared path model's queue
//! discipline, drop-tail FIFO with step ECN marking by default -> serialization at the rate ->
//! one-way delay; `path.rs`: the path model's schedule, trace, policer, burst loss, jitter,
//! reordering and aggregation around it, the simulator's code from `pathmodel`), the seeded
//! RNG, the timer arithmetic and the IP header reads and edits. No I/O and no clock: time is
//! passed in (integer nanoseconds), so everything here is unit-tested without a TUN device.
//!
//! The rest is the emulator proper, entered through [`run_main`] (`run.rs`: command line, process
//! set-up, event loop), which owns the TUN devices (`tun.rs`) and moves packets through
//! [`Link::enqueue`], [`Link::pop_ready`] and [`Link::next_deadline`] (`forward.rs`). Two callers:
//! the `bbrlab-linkemu` binary (`main.rs`) and the Python extension (`bbrlab._core.linkemu_main`),
//! so the Python package carries the emulator compiled in, with no separate build.

mod forward;
mod graph;
mod link;
mod params;
mod path;
mod run;
mod tun;
mod wait;

pub use link::{Arrival, Departure, Entry, Link, LinkStats, OriginCounters};
pub use link::{QueueSample, Verdict};
pub use params::LinkParams;
pub use path::TraceSpec;
pub use pathmodel::Ecn;
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

/// The path model draws its random numbers (PIE's, DualPI2's) from the link's stream.
impl pathmodel::Random for XorShift64Star {
    fn next_u64(&mut self) -> u64 {
        XorShift64Star::next_u64(self)
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
        Some(1) | Some(2) => write_ecn_bits(pkt, Ecn::Ce.bits()),
        _ => false,
    }
}

/// Rewrite ECT(0) to ECT(1) (a flow sent as L4S: `ecn = "ect1"`, docs/emu.md); IPv4 header
/// checksum recomputed. Returns whether it changed (anything but ECT(0) is left alone).
pub fn ect0_to_ect1(pkt: &mut [u8]) -> bool {
    match ecn_bits(pkt) {
        Some(2) => write_ecn_bits(pkt, Ecn::Ect1.bits()),
        _ => false,
    }
}

/// Write the ECN field of an IP packet `ecn_bits` already recognised.
fn write_ecn_bits(pkt: &mut [u8], bits: u8) -> bool {
    if pkt[0] >> 4 == 4 {
        pkt[1] = (pkt[1] & !3) | bits;
        let ihl = ((pkt[0] & 0x0f) as usize * 4).clamp(20, pkt.len());
        pkt[10] = 0;
        pkt[11] = 0;
        let c = ipv4_checksum(&pkt[..ihl]);
        pkt[10..12].copy_from_slice(&c.to_be_bytes());
    } else {
        pkt[1] = (pkt[1] & !(3 << 4)) | (bits << 4);
    }
    true
}

/// The packet's ECN codepoint (not-ECT for anything but IP).
pub fn packet_ecn(pkt: &[u8]) -> Ecn {
    ecn_bits(pkt).map_or(Ecn::NotEct, Ecn::from_bits)
}

/// IP protocol numbers whose first four payload bytes are the source and destination ports.
const PROTO_TCP: u8 = 6;
const PROTO_UDP: u8 = 17;

/// A hash of the packet's 5-tuple (addresses, protocol, ports for TCP/UDP): the flow key of
/// per-flow queueing (FQ-CoDel). Packets of one connection in one direction share it; 0 for
/// anything that is not IP. IPv6 extension headers are not walked (ports then read as 0).
pub fn flow_key(pkt: &[u8]) -> u64 {
    let (proto, addrs, l4) = match pkt.first().map(|b| b >> 4) {
        Some(4) if pkt.len() >= 20 => {
            (pkt[9], &pkt[12..20], ((pkt[0] & 0x0f) as usize * 4).max(20))
        }
        Some(6) if pkt.len() >= 40 => (pkt[6], &pkt[8..40], 40),
        _ => return 0,
    };
    let ports = match proto {
        PROTO_TCP | PROTO_UDP if pkt.len() >= l4 + 4 => &pkt[l4..l4 + 4],
        _ => &[][..],
    };
    // FNV-1a over the tuple's bytes, then a SplitMix64 finalizer to spread it over all 64 bits.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in addrs.iter().chain(ports).chain(std::iter::once(&proto)) {
        h = (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3);
    }
    h = (h ^ (h >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    h ^ (h >> 31)
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
#[cfg(test)]
mod tests_path;
