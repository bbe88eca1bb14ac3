//! The phase names each algorithm reports: one table per algorithm family, indexed by the phase
//! code.
//!
//! An algorithm's state sample ([`crate::CcStateSample`]) carries a phase name and a numeric
//! code; both come from one of these tables (`phase = TABLE[code]`), so the name a timeseries
//! shows, the code stored beside it and the list the registry exports
//! ([`crate::registry::Algorithm::phases`]) cannot disagree. Everything outside the core that
//! names phases (the kernel backend's phase column, the Python contract stub, the docs) reads the
//! registry's list instead of spelling names of its own.
//!
//! The codes are the algorithms' own state numbers where Linux has them: BBRv1's `enum bbr_mode`
//! (STARTUP 0, DRAIN 1, PROBE_BW 2, PROBE_RTT 3); BBRv2/v3 split PROBE_BW into its four
//! sub-phases in the order of draft-ietf-ccwg-bbr's state diagram (DOWN, CRUISE, REFILL, UP).
//! The loss-based algorithms report where Linux's recovery state machine and slow start put them.

/// A phase table: `TABLE[code]` is the name of phase `code`.
pub type PhaseTable = &'static [&'static str];

/// Reno, CUBIC and DCTCP: slow start (`cwnd < ssthresh`), congestion avoidance, then Linux's
/// `icsk_ca_state` when it is not Open/Disorder (fast recovery, RTO recovery, ECN reduction).
pub const LOSS_BASED: PhaseTable = &["ss", "ca", "recovery", "loss", "cwr"];
pub const LOSS_BASED_SS: u8 = 0;
pub const LOSS_BASED_CA: u8 = 1;
pub const LOSS_BASED_RECOVERY: u8 = 2;
pub const LOSS_BASED_LOSS: u8 = 3;
pub const LOSS_BASED_CWR: u8 = 4;

/// CUBIC with HyStart++: [`LOSS_BASED`] plus RFC 9406's Conservative Slow Start.
pub const CUBIC_HSPP: PhaseTable = &["ss", "ca", "recovery", "loss", "cwr", "css"];
pub const CUBIC_HSPP_CSS: u8 = 5;

/// BBRv1 (Linux tcp_bbr.c `enum bbr_mode`).
pub const BBR1: PhaseTable = &["startup", "drain", "probe_bw", "probe_rtt"];

/// BBRv2 and BBRv3: PROBE_BW's four sub-phases reported on their own.
pub const BBR2_3: PhaseTable =
    &["startup", "drain", "probe_down", "probe_cruise", "probe_refill", "probe_up", "probe_rtt"];

/// BQL's controller stages (crates/cc/src/bql.rs).
pub const BQL: PhaseTable = &["gain", "drain", "control"];

/// Phase `code` of `table` as a sample's `(phase, phase_code)`.
#[inline]
pub fn phase(table: PhaseTable, code: u8) -> (&'static str, u8) {
    (table[usize::from(code)], code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_have_unique_names_and_the_named_codes_point_at_their_names() {
        for t in [LOSS_BASED, CUBIC_HSPP, BBR1, BBR2_3, BQL] {
            for (i, n) in t.iter().enumerate() {
                assert!(!t[..i].contains(n), "{n} twice in {t:?}");
            }
        }
        assert_eq!(LOSS_BASED[usize::from(LOSS_BASED_SS)], "ss");
        assert_eq!(LOSS_BASED[usize::from(LOSS_BASED_CA)], "ca");
        assert_eq!(LOSS_BASED[usize::from(LOSS_BASED_RECOVERY)], "recovery");
        assert_eq!(LOSS_BASED[usize::from(LOSS_BASED_LOSS)], "loss");
        assert_eq!(LOSS_BASED[usize::from(LOSS_BASED_CWR)], "cwr");
        assert_eq!(CUBIC_HSPP[usize::from(CUBIC_HSPP_CSS)], "css");
        assert_eq!(&CUBIC_HSPP[..LOSS_BASED.len()], LOSS_BASED);
    }
}
