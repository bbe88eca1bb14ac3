//! v2/v3: the loss-adapted bounds saved when a loss episode starts and restored when it proves
//! spurious.
//!
//! ```text
//! on entering Recovery/Loss (`bbr_ssthresh`, draft §SaveStateUponLoss):
//!   saved = (bw_shortterm, inflight_shortterm, inflight_longterm)
//! on undo (`bbr_undo_cwnd`, draft §HandleSpuriousLossDetection):
//!   each bound = max(bound, saved bound)     (the loss cut nothing real; never lower a bound)
//! ```
//!
//! v1 keeps no such bounds; what else each version undoes (v3: its state) stays in the version.

/// The three bounds as saved on entry to a loss episode (Linux `undo_bw_lo`, `undo_inflight_lo`,
/// `undo_inflight_hi`).
#[derive(Clone, Copy, Debug, Default)]
pub struct UndoBounds {
    bw_shortterm: u64,
    inflight_shortterm: u32,
    inflight_longterm: u32,
}

impl UndoBounds {
    /// Save the bounds as they stand.
    #[inline]
    pub fn save(bw_shortterm: u64, inflight_shortterm: u32, inflight_longterm: u32) -> Self {
        UndoBounds { bw_shortterm, inflight_shortterm, inflight_longterm }
    }

    /// Raise each bound back to at least its saved value.
    #[inline]
    pub fn restore(
        &self,
        bw_shortterm: &mut u64,
        inflight_shortterm: &mut u32,
        inflight_longterm: &mut u32,
    ) {
        *bw_shortterm = (*bw_shortterm).max(self.bw_shortterm);
        *inflight_shortterm = (*inflight_shortterm).max(self.inflight_shortterm);
        *inflight_longterm = (*inflight_longterm).max(self.inflight_longterm);
    }
}

/// `CongestionOps::ssthresh` as v2 and v3 write it, from the field names both keep
/// (`undo_bounds`, `bw_shortterm`, `inflight_shortterm`, `inflight_longterm`): on entering
/// Recovery/Loss (`bbr_ssthresh`, §OnEnterFastRecovery / OnEnterRTO) save cwnd (§SaveCwnd) and
/// the bounds (§SaveStateUponLoss); ssthresh stays as it is (BBR does not use it).
macro_rules! save_state_upon_loss {
    () => {
        fn ssthresh(&mut self, tp: &$crate::TcpCc) -> u32 {
            self.save_cwnd(tp);
            self.undo_bounds = $crate::bbr::undo::UndoBounds::save(
                self.bw_shortterm,
                self.inflight_shortterm,
                self.inflight_longterm,
            );
            tp.snd_ssthresh
        }
    };
}
pub(crate) use save_state_upon_loss;
