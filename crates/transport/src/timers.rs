//! The sender's loss-recovery deadlines, as absolute times in ns (`*_at_ns`; quinn-proto's
//! `TimerTable`).
//!
//! - `rto`: the retransmission timer (RFC 6298 §5; Linux `ICSK_TIME_RETRANS`). Armed when data
//!   is sent with none armed, re-armed by an ACK of new data and by a retransmission of the head.
//! - `tlp`: the probe timeout (RFC 8985 §7.2; Linux `ICSK_TIME_LOSS_PROBE`). Linux keeps one
//!   timer slot for both; here both deadlines exist and `on_timeout` lets a due probe win and
//!   re-arm the RTO, which is what the shared slot amounts to.
//! - `reo`: RACK's reordering timer (RFC 8985 §6.2 step 4; Linux `ICSK_TIME_REO_TIMEOUT`): the
//!   earliest time an unacknowledged segment sent before the last delivered one is deemed lost.

use cc::Nanos;

#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Timers {
    pub(crate) rto_at_ns: Option<Nanos>,
    pub(crate) tlp_at_ns: Option<Nanos>,
    pub(crate) reo_at_ns: Option<Nanos>,
}

impl Timers {
    /// The earliest armed deadline.
    #[inline]
    pub(crate) fn earliest(&self) -> Option<Nanos> {
        let mut t = self.rto_at_ns;
        for d in [self.tlp_at_ns, self.reo_at_ns] {
            t = match (t, d) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
        }
        t
    }
}
