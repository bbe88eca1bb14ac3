//! Round-trip time estimation and the retransmission timeout (RFC 6298; Linux
//! `tcp_rtt_estimator`, `__tcp_set_rto`, `tcp_update_rtt_min`).
//!
//! Model:
//! - SRTT and RTTVAR follow RFC 6298 §2 exactly (gains 1/8 and 1/4), without Linux's
//!   `mdev_max` refinements. The first sample sets SRTT = R, RTTVAR = R/2.
//! - RTO = SRTT + max(4·RTTVAR, rto_min), capped at `RTO_MAX_NS` — Linux `__tcp_set_rto`, whose
//!   floor on the variance term (not on the RTO) keeps RTO ≥ SRTT + rto_min.
//! - Exponential back-off (RFC 6298 §5.5, Linux `icsk_backoff`): each RTO doubles the timer
//!   (up to 2^16, then `RTO_MAX_NS`); a cumulative ACK of new data clears the back-off.
//! - min_rtt: a windowed minimum over `MIN_RTT_WLEN_NS` (Linux `tcp_min_rtt_wlen`, 300 s).
//!
//! SRTT and min_rtt live in `tp` (`srtt_ns`, `min_rtt_ns`) because the algorithms read them;
//! the rest is the transport's own.

use crate::{MIN_RTT_WLEN_NS, RTO_INIT_NS, RTO_MAX_NS};
use cc::filter::MinFilter;
use cc::{Nanos, TcpCc};

pub(crate) struct RttEstimator {
    /// RFC 6298 RTTVAR, ns (0 before the first sample).
    pub(crate) rttvar_ns: u64,
    /// RTO without back-off (Linux `icsk_rto` before `inet_csk_rto_backoff`), ns.
    pub(crate) rto_ns: u64,
    /// Consecutive RTOs without an ACK of new data (Linux `icsk_backoff`).
    pub(crate) backoff: u32,
    /// Floor of the variance term (Linux `tcp_rto_min`), ns.
    min_rto_ns: Nanos,
    min_rtt_filter: MinFilter,
}

impl RttEstimator {
    pub(crate) fn new(min_rto_ns: Nanos) -> RttEstimator {
        RttEstimator {
            rttvar_ns: 0,
            rto_ns: RTO_INIT_NS,
            backoff: 0,
            min_rto_ns,
            min_rtt_filter: MinFilter::new_min(),
        }
    }

    /// Feed one RTT sample to SRTT/RTTVAR, the RTO and min_rtt.
    #[inline]
    pub(crate) fn on_sample(&mut self, tp: &mut TcpCc, now: Nanos, rtt_ns: u64) {
        let rtt_ns = rtt_ns.max(1);
        // RFC 6298 §2 (Linux tcp_rtt_estimator without the mdev_max refinements).
        if tp.srtt_ns == 0 {
            tp.srtt_ns = rtt_ns;
            self.rttvar_ns = rtt_ns / 2;
        } else {
            let err = rtt_ns.abs_diff(tp.srtt_ns);
            self.rttvar_ns = (3 * self.rttvar_ns + err) / 4;
            tp.srtt_ns = (7 * tp.srtt_ns + rtt_ns) / 8;
        }
        // Linux __tcp_set_rto: srtt + max(4·mdev, rto_min).
        self.rto_ns = (tp.srtt_ns + (4 * self.rttvar_ns).max(self.min_rto_ns)).min(RTO_MAX_NS);
        self.update_min_rtt(tp, now, rtt_ns);
    }

    /// Feed a sample to the min_rtt filter only (Linux `tcp_update_rtt_min`, which takes the
    /// ACK's newest sample while the estimator takes its oldest).
    #[inline]
    pub(crate) fn update_min_rtt(&mut self, tp: &mut TcpCc, now: Nanos, rtt_ns: u64) {
        tp.min_rtt_ns = self.min_rtt_filter.update(MIN_RTT_WLEN_NS, now, rtt_ns);
    }

    /// The RTO with the current exponential back-off applied (Linux `inet_csk_rto_backoff`).
    #[inline]
    pub(crate) fn backed_off_rto_ns(&self) -> Nanos {
        self.rto_ns.saturating_mul(1u64 << self.backoff.min(16)).min(RTO_MAX_NS)
    }
}
