//! The ECN field's four codepoints (RFC 3168 §5; ECT(1) as the L4S identifier, RFC 9331 §4).
//! Values are the IP header's two bits, so the emulator reads and writes them directly.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Ecn {
    /// Not ECN-capable: a congested queue drops it.
    #[default]
    NotEct = 0b00,
    /// ECN-capable, L4S (RFC 9331): scalable congestion control, shallow marking expected.
    Ect1 = 0b01,
    /// ECN-capable, classic (RFC 3168): a mark means what a drop would.
    Ect0 = 0b10,
    /// Congestion Experienced.
    Ce = 0b11,
}

impl Ecn {
    /// From the IP header's two ECN bits.
    pub fn from_bits(b: u8) -> Ecn {
        match b & 3 {
            0b00 => Ecn::NotEct,
            0b01 => Ecn::Ect1,
            0b10 => Ecn::Ect0,
            _ => Ecn::Ce,
        }
    }
    pub fn bits(self) -> u8 {
        self as u8
    }
    /// ECN-capable (a queue may mark it rather than drop it): ECT(0), ECT(1), or already CE.
    pub fn is_ect(self) -> bool {
        self != Ecn::NotEct
    }
    /// DualPI2's classifier (RFC 9332 §2.3): ECT(1) and CE go to the L4S queue.
    pub fn is_l4s(self) -> bool {
        matches!(self, Ecn::Ect1 | Ecn::Ce)
    }
}

/// What a sender sets on its data packets (a flow's `ecn`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EcnMode {
    /// Not ECN-capable.
    #[default]
    Off,
    /// ECT(0): classic ECN (RFC 3168), what `ecn = true` meant.
    Ect0,
    /// ECT(1): L4S (RFC 9331), for a scalable sender (DCTCP, BBRv2/v3's ECN response, Prague).
    Ect1,
}

impl EcnMode {
    pub fn codepoint(self) -> Ecn {
        match self {
            EcnMode::Off => Ecn::NotEct,
            EcnMode::Ect0 => Ecn::Ect0,
            EcnMode::Ect1 => Ecn::Ect1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_round_trip_and_classes() {
        for b in 0..4u8 {
            assert_eq!(Ecn::from_bits(b).bits(), b);
        }
        assert!(!Ecn::NotEct.is_ect());
        assert!(Ecn::Ect0.is_ect() && !Ecn::Ect0.is_l4s());
        assert!(Ecn::Ect1.is_l4s() && Ecn::Ce.is_l4s());
    }
}
