//! Which kernel's `tcp_bbr.c`: mainline, or Linux 4.13 as the Waterloo DC study ran
//! it (the Anhalt BQL paper's 4.15 has the same code for every switch below). The switches are the
//! changes to BBRv1 between 4.13 and mainline that change what it sends; each names the commit that
//! made it.
//!
//! | switch                 | 4.13                              | mainline (since)                                                   |
//! |------------------------|-----------------------------------|--------------------------------------------------------------------|
//! | `ack_aggregation`      | cwnd = 2·BDP + 3 bursts           | + extra_acked (78dc70ebaa38 "tcp_bbr: adapt cwnd based on ack aggregation estimation", v5.1) |
//! | `pacing_margin_percent`| 0: rate from bw × MTU, fq paces whole packets, so packets leave at gain · bw | 1 % (a87c83d5ee25 "tcp_bbr: adjust TCP BBR for departure time pacing", v4.20) |
//! | `edt_inflight`         | inflight = packets in flight now (`tcp_packets_in_flight`, `rs->prior_in_flight`) | packets in the network at the next departure time (a87c83d5ee25, v4.20) |
//! | `probe_up_extra_cwnd`  | no +2 in the 5/4 phase            | +2 so probing raises inflight above a tiny BDP ("tcp_bbr: fix bw probing to raise in-flight data for very small BDPs", 2018, after 4.15) |
//! | `idle_restart_needs_data` | any ACK ends the idle restart  | only one that delivers data ("tcp_bbr: fix to zero idle_restart only upon S/ACKed data", 2018) |
//! | `min_rtt_refresh_on_equal` | a sample equal to min_rtt restarts its 10-s window (`<=`) | only a lower one (1b9e2a8c99a5 "tcp: only postpone PROBE_RTT if RTT is < current min_rtt estimate", v5.10): a recovery's RTT samples come from timestamps in whole milliseconds, so under persistent loss equal samples kept postponing PROBE_RTT |
//! | `expiry_skips_delayed_acks` | an expired window takes any sample | not one from a delayed ACK (e42a5d6f7d5e "tcp: avoid min-RTT bloat by skipping RTT from delayed-ACK in BBR", v4.17) |
//!
//! Everything else (gains, filters, PROBE_RTT, the long-term model, offload burst sizing) is the
//! same code in both.

/// Which `tcp_bbr.c`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// Linux mainline.
    Mainline,
    /// Linux 4.13 (and 4.15): the Waterloo DC study's kernel.
    Linux413,
}

/// The switches of the header's table.
#[derive(Clone, Copy, Debug)]
pub struct Params {
    /// The cwnd target includes the ACK-aggregation allowance (`bbr_ack_aggregation_cwnd`).
    pub ack_aggregation: bool,
    /// Pace this much below gain × bw.
    pub pacing_margin_percent: u64,
    /// DRAIN's exit and the PROBE_BW phase checks count the packets in the network at the next
    /// departure (EDT) rather than those in flight now.
    pub edt_inflight: bool,
    /// +2 packets of cwnd in the 5/4 phase.
    pub probe_up_extra_cwnd: bool,
    /// Only an ACK that delivers data ends an idle restart.
    pub idle_restart_needs_data: bool,
    /// A sample equal to min_rtt restarts its window (`<=` rather than `<`).
    pub min_rtt_refresh_on_equal: bool,
    /// An expired min_rtt window ignores samples from delayed ACKs.
    pub expiry_skips_delayed_acks: bool,
}

impl Params {
    pub const fn of(v: Variant) -> Params {
        match v {
            Variant::Mainline => Params {
                ack_aggregation: true,
                pacing_margin_percent: crate::bbr::pacing::PACING_MARGIN_PERCENT,
                edt_inflight: true,
                probe_up_extra_cwnd: true,
                idle_restart_needs_data: true,
                min_rtt_refresh_on_equal: false,
                expiry_skips_delayed_acks: true,
            },
            Variant::Linux413 => Params {
                ack_aggregation: false,
                pacing_margin_percent: 0,
                edt_inflight: false,
                probe_up_extra_cwnd: false,
                idle_restart_needs_data: false,
                min_rtt_refresh_on_equal: true,
                expiry_skips_delayed_acks: false,
            },
        }
    }
}
