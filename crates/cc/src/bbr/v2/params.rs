//! bbr2 vs bbr2_new: the only differences are these constants and switches (see the header's
//! "bbr2_new" list for the slide text behind each).

use crate::bbr::ecn::ECN_FACTOR;
use crate::bbr::units::BBR_UNIT;

/// Which BBRv2.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// Google's Linux v2alpha ("bbr2").
    V2alpha,
    /// v2alpha with the Google BBRv2 slides' many-flows ECN changes ("bbr2_new").
    ManyFlows,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    /// Scenario name (`tcp_congestion_ops.name`).
    pub name: &'static str,
    /// inflight_shortterm ·= 1 − α·ecn_factor per round with CE (2^8): v2alpha 1/3; bbr2_new 1/2
    /// (item 2, "Increase ecn_factor from 0.3 to 0.5 (similar to DCTCP)").
    pub ecn_factor: u32,
    /// The per-round ECN cut applies to bw_shortterm too, outside PROBE_RTT (item 1).
    pub ecn_cuts_bw_lo: bool,
    /// A probe with no tolerable ECN sample cuts bw_hi by the same factor (item 5).
    pub ecn_cuts_bw_hi: bool,
    /// inflight_longterm += this many packets when a probe starts (Linux `bbr_refill_add_inc`;
    /// item 6).
    pub refill_add_inc: u32,
    /// bw_hi += 1 packet per min_rtt when a probe starts (item 6, slide only).
    pub refill_adds_bw: bool,
}

/// Google's v2alpha.
pub const V2ALPHA: Params = Params {
    name: "bbr2",
    ecn_factor: ECN_FACTOR,
    ecn_cuts_bw_lo: false,
    ecn_cuts_bw_hi: false,
    refill_add_inc: 0,
    refill_adds_bw: false,
};

/// The Google BBRv2 slides' "pacing to scale to num_flows ≫ BDP" changes.
pub const MANY_FLOWS: Params = Params {
    name: "bbr2_new",
    ecn_factor: BBR_UNIT / 2,
    ecn_cuts_bw_lo: true,
    ecn_cuts_bw_hi: true,
    refill_add_inc: 1,
    refill_adds_bw: true,
};

impl Variant {
    pub fn params(self) -> Params {
        match self {
            Variant::V2alpha => V2ALPHA,
            Variant::ManyFlows => MANY_FLOWS,
        }
    }
}
