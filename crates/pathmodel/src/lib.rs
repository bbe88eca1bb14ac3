//! bbrlab's path model: what happens to a packet between two hosts, written once and run by
//! both backends — the simulator (`crates/sim`, packets are `transport::Packet`) and the link
//! emulator behind `--backend emu` (`crates/emu`, packets are the kernel's, in a TUN device).
//!
//! Everything here is sans-IO: time is passed in (integer nanoseconds, [`Nanos`]), random
//! numbers come from the caller's seeded stream ([`Random`]), and packets are any type that
//! says its size, ECN codepoint and flow ([`PathPacket`]). So every mechanism is unit-tested
//! on its own, and the two backends cannot drift apart.
//!
//! | module | mechanism | reference |
//! |---|---|---|
//! | `aqm/` | queue disciplines: FIFO drop-tail/step ECN, CoDel, FQ-CoDel, PIE, DualPI2 | RFC 8289, 8290, 8033, 9332 |
//! | `ecn.rs` | the four ECN codepoints | RFC 3168, RFC 9331 |
//! | `impair/` | schedules, traces, policer, burst loss, jitter, reordering, aggregation | netem |
//!
//! A link built from these parts offers each packet to its impairments (loss, policer) and its
//! queue discipline on arrival ([`aqm::Aqm::enqueue`]), and asks the discipline for the next
//! packet whenever its transmitter is free ([`aqm::Aqm::dequeue`]): CoDel, PIE and DualPI2
//! decide at dequeue time, from the time the packet spent waiting (its sojourn).

pub mod aqm;
pub mod ecn;
pub mod impair;

pub use ecn::Ecn;

/// Time and durations, in nanoseconds (the simulator's and the emulator's clock).
pub type Nanos = u64;

/// One millisecond in [`Nanos`].
pub const MS: Nanos = 1_000_000;

/// What the path model needs to know of a packet.
pub trait PathPacket {
    /// Bytes on the wire (what serialization and buffers count).
    fn wire_bytes(&self) -> u32;
    /// The packet's ECN codepoint.
    fn ecn(&self) -> Ecn;
    /// Set CE (called only on an ECN-capable packet: `ecn().is_ect()`).
    fn set_ce(&mut self);
    /// The packet's flow, as a hash of its 5-tuple would identify it (per-flow queueing: FQ-CoDel's
    /// and fq's flow tables). Packets of one connection in one direction share it.
    fn flow_key(&self) -> u64;
    /// The earliest departure time its sender stamped (Linux `skb->tstamp`, set by TCP's EDT
    /// pacing since 4.20), if any: fq holds the packet until then.
    fn time_to_send_ns(&self) -> Option<Nanos> {
        None
    }
    /// Its socket's pacing rate in bytes/s (Linux `sk->sk_pacing_rate`), if it has one: fq
    /// paces a packet without an EDT stamp at this rate.
    fn pacing_rate_bytes_per_s(&self) -> Option<u64> {
        None
    }
}

/// The caller's seeded random stream (the simulator's per-link xoshiro256**, the emulator's
/// xorshift64*): every draw a mechanism makes comes from it, so runs repeat.
pub trait Random {
    fn next_u64(&mut self) -> u64;
    /// Uniform in [0, 1) with 53 bits of precision.
    fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// SplitMix64 (Steele, Lea, Flood 2014): a small, fully specified stream, so that a seed names
/// one sequence of draws (the trace generator's seeds, the tests' streams).
pub struct SplitMix64(pub u64);

impl Random for SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// A packet for tests: size, codepoint, flow.
#[cfg(test)]
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct TestPacket {
    pub bytes: u32,
    pub ecn: Ecn,
    pub flow: u64,
    /// A sequence number, to check order.
    pub seq: u64,
}

#[cfg(test)]
impl PathPacket for TestPacket {
    fn wire_bytes(&self) -> u32 {
        self.bytes
    }
    fn ecn(&self) -> Ecn {
        self.ecn
    }
    fn set_ce(&mut self) {
        self.ecn = Ecn::Ce;
    }
    fn flow_key(&self) -> u64 {
        self.flow
    }
}

/// SplitMix64 for tests (a `Random` with a fixed seed).
#[cfg(test)]
pub(crate) use SplitMix64 as TestRng;
