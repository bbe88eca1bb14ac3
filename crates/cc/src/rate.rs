//! Delivery-rate sampling.
//!
//! draft-ietf-ccwg-bbr §4.5 "Delivery Rate Samples" (formerly draft-cheng-iccrg-delivery-rate-
//! estimation), as Linux `net/ipv4/tcp_rate.c` implements it. At send time each packet records a
//! snapshot of the connection's delivery counters ([`PacketRateState`]). When an ACK (cumulative or
//! SACK) delivers packets, the newest-sent delivered packet's snapshot gives the interval over which
//! `delivered` grew:
//!
//! ```text
//! send_elapsed = P.send_time      - P.first_send_time
//! ack_elapsed  = C.delivered_time - P.delivered_time
//! interval     = max(send_elapsed, ack_elapsed)       // never over-estimate the rate
//! rate         = (C.delivered - P.delivered) / interval
//! ```
//!
//! A sample whose interval is shorter than min_rtt is discarded (a burst of ACKs after an ACK
//! compression event would otherwise produce an inflated rate). App-limited periods are tracked so
//! that BBR only lets app-limited samples raise its estimate.

use crate::{Nanos, TcpCc};

/// Per-packet snapshot taken at (re)transmission (Linux `tcp_skb_cb->tx`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PacketRateState {
    /// Transmission time of this packet, ns (`skb->skb_mstamp_ns`).
    pub sent_ns: Nanos,
    /// `tp->first_tx_mstamp` when this packet was sent.
    pub first_tx_mstamp_ns: Nanos,
    /// `tp->delivered_mstamp` when sent.
    pub delivered_mstamp_ns: Nanos,
    /// This packet's delivery was already accounted (it was SACKed before being cumulatively
    /// acked). Linux zeroes `delivered_mstamp` for this; a flag keeps t = 0 usable.
    pub accounted: bool,
    /// `tp->delivered` when sent.
    pub delivered: u64,
    /// `tp->delivered_ce` when sent.
    pub delivered_ce: u64,
    /// `tp->lost` when sent (BBRv2/v3 loss-rate per round).
    pub lost: u64,
    /// Packets in flight right after this one was sent, including it (`tx.in_flight`).
    pub tx_in_flight: u32,
    /// The connection was app-limited when this packet was sent.
    pub is_app_limited: bool,
    /// This transmission was a retransmission.
    pub is_retrans: bool,
    /// Sequence number (segment index) of this packet, to break send-time ties.
    pub seq: u64,
}

/// A rate sample handed to `cong_control` (Linux `struct rate_sample`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateSample {
    /// `delivered_mstamp` of the packet the sample is based on.
    pub prior_mstamp_ns: Nanos,
    /// A delivered packet was accounted into this sample (Linux: `prior_mstamp != 0`).
    pub has_prior: bool,
    /// `tp->delivered` when that packet was sent.
    pub prior_delivered: u64,
    pub prior_delivered_ce: u64,
    /// Segments delivered over the interval (-1: no valid sample).
    pub delivered: i64,
    /// CE-marked segments delivered over the interval.
    pub delivered_ce: i64,
    /// Sampling interval, ns (-1: invalid).
    pub interval_ns: i64,
    /// Send-side and ACK-side intervals, ns.
    pub snd_interval_ns: i64,
    pub rcv_interval_ns: i64,
    /// RTT of the most recent (re)transmitted packet acked, ns (-1: none).
    pub rtt_ns: i64,
    /// Segments newly marked lost on this ACK.
    pub losses: u32,
    /// Segments newly (s)acked on this ACK.
    pub acked_sacked: u32,
    /// Packets in flight before this ACK.
    pub prior_in_flight: u32,
    /// Packets in flight when the sample's packet was sent (`rs->tx_in_flight`).
    pub tx_in_flight: u32,
    /// Segments lost between that send and now (`rs->lost`).
    pub lost: u64,
    /// The sample's packet was sent while app-limited.
    pub is_app_limited: bool,
    /// The sample's packet was a retransmission.
    pub is_retrans: bool,
    /// The ACK was delayed by the receiver.
    pub is_ack_delayed: bool,
    /// Sequence (segment index) of the newest packet in the sample; for round tracking.
    pub last_seq: u64,
    /// Send time of the sample's packet, used to pick the newest one.
    pub sample_sent_ns: Nanos,
}

impl Default for RateSample {
    fn default() -> Self {
        RateSample {
            prior_mstamp_ns: 0,
            has_prior: false,
            prior_delivered: 0,
            prior_delivered_ce: 0,
            delivered: -1,
            delivered_ce: 0,
            interval_ns: -1,
            snd_interval_ns: -1,
            rcv_interval_ns: -1,
            rtt_ns: -1,
            losses: 0,
            acked_sacked: 0,
            prior_in_flight: 0,
            tx_in_flight: 0,
            lost: 0,
            is_app_limited: false,
            is_retrans: false,
            is_ack_delayed: false,
            last_seq: 0,
            sample_sent_ns: 0,
        }
    }
}

impl RateSample {
    /// Delivery rate of a valid sample in bytes per second, else None.
    #[inline]
    pub fn delivery_rate_bytes_per_s(&self, mss: u32) -> Option<u64> {
        if self.delivered <= 0 || self.interval_ns <= 0 {
            return None;
        }
        // Every ACK asks: a 64-bit division when the product fits (up to ~1.8·10¹⁰ bytes
        // delivered over the interval), the 128-bit one (a library call) beyond; the same
        // quotient either way.
        Some(
            match (self.delivered as u64)
                .checked_mul(mss as u64)
                .and_then(|b| b.checked_mul(1_000_000_000))
            {
                Some(num) => num / self.interval_ns as u64,
                None => {
                    (self.delivered as u128 * mss as u128 * 1_000_000_000u128
                        / self.interval_ns as u128) as u64
                }
            },
        )
    }
}

/// Snapshot the connection's delivery state into a packet being (re)sent (`tcp_rate_skb_sent`).
/// Call after `packets_out`/`retrans_out` were updated for this packet.
#[inline]
pub fn on_packet_sent(
    tp: &mut TcpCc,
    now: Nanos,
    seq: u64,
    is_retrans: bool,
    is_first_in_flight: bool,
) -> PacketRateState {
    // With nothing in flight, a new sending window starts now: the next sample's send interval is
    // measured from here, and an idle period does not count as ACK time.
    if is_first_in_flight {
        tp.first_tx_mstamp_ns = now;
        tp.delivered_mstamp_ns = now;
    }
    PacketRateState {
        sent_ns: now,
        first_tx_mstamp_ns: tp.first_tx_mstamp_ns,
        delivered_mstamp_ns: tp.delivered_mstamp_ns,
        accounted: false,
        delivered: tp.delivered,
        delivered_ce: tp.delivered_ce,
        lost: tp.lost,
        tx_in_flight: tp.packets_in_flight(),
        is_app_limited: tp.app_limited != 0,
        is_retrans,
        seq,
    }
}

/// Account one delivered packet into the sample being built for this ACK
/// (`tcp_rate_skb_delivered`). `p` is marked as accounted so a later cumulative ACK of a packet
/// already SACKed does not count twice.
#[inline]
pub fn on_packet_delivered(tp: &mut TcpCc, p: &mut PacketRateState, rs: &mut RateSample) {
    if p.accounted {
        return; // Already accounted when it was SACKed.
    }
    if is_newer_than_sample(rs, p.sent_ns, p.seq) {
        take_sample(tp, p, rs);
    }
    p.accounted = true;
}

/// [`on_packet_delivered`]'s choice: the packet sent last among those delivered by this ACK
/// has the freshest snapshot. Split out so that a caller keeping snapshots in its own layout
/// (the transport's scoreboard) reads the rest of one only for the packet that wins.
#[inline]
pub fn is_newer_than_sample(rs: &RateSample, sent_ns: Nanos, seq: u64) -> bool {
    !rs.has_prior
        || sent_ns > rs.sample_sent_ns
        || (sent_ns == rs.sample_sent_ns && seq > rs.last_seq)
}

/// Base the sample on packet `p`, newer than the one it was based on (see
/// [`is_newer_than_sample`]); the caller marks `p` accounted.
#[inline]
pub fn take_sample(tp: &mut TcpCc, p: &PacketRateState, rs: &mut RateSample) {
    rs.prior_delivered = p.delivered;
    rs.prior_delivered_ce = p.delivered_ce;
    rs.prior_mstamp_ns = p.delivered_mstamp_ns;
    rs.has_prior = true;
    rs.is_app_limited = p.is_app_limited;
    rs.is_retrans = p.is_retrans;
    rs.last_seq = p.seq;
    rs.sample_sent_ns = p.sent_ns;
    rs.tx_in_flight = p.tx_in_flight;
    rs.lost = tp.lost.saturating_sub(p.lost);
    // The send window of the next sample starts at this packet's send time.
    tp.first_tx_mstamp_ns = p.sent_ns;
    rs.interval_ns = p.sent_ns.saturating_sub(p.first_tx_mstamp_ns) as i64;
}

/// Finish the sample for this ACK (`tcp_rate_gen`). `delivered` and `lost` are this ACK's newly
/// delivered and newly lost segment counts; `tp.delivered` must already include `delivered`.
pub fn generate(tp: &mut TcpCc, now: Nanos, delivered: u32, lost: u32, rs: &mut RateSample) {
    // The app-limited period ends once everything sent during it has been delivered.
    if tp.app_limited != 0 && tp.delivered > tp.app_limited {
        tp.app_limited = 0;
    }
    if delivered > 0 {
        tp.delivered_mstamp_ns = now;
    }
    rs.acked_sacked = delivered;
    rs.losses = lost;
    if !rs.has_prior {
        rs.delivered = -1;
        rs.interval_ns = -1;
        return;
    }
    rs.delivered = (tp.delivered - rs.prior_delivered) as i64;
    rs.delivered_ce = (tp.delivered_ce - rs.prior_delivered_ce) as i64;
    let snd_ns = rs.interval_ns;
    let ack_ns = now.saturating_sub(rs.prior_mstamp_ns) as i64;
    rs.interval_ns = snd_ns.max(ack_ns);
    rs.snd_interval_ns = snd_ns;
    rs.rcv_interval_ns = ack_ns;
    // Shorter than min_rtt: the ACK stream was compressed; the sample would overstate the rate.
    if tp.min_rtt_ns != u64::MAX && (rs.interval_ns as u64) < tp.min_rtt_ns {
        rs.interval_ns = -1;
    }
}

/// Mark the connection app-limited if the sender has run out of data to send while the window
/// had room (`tcp_rate_check_app_limited`). `unsent_segs` counts data written but not yet sent.
#[inline]
pub fn check_app_limited(tp: &mut TcpCc, unsent_segs: u64) {
    if unsent_segs == 0 && tp.packets_in_flight() < tp.snd_cwnd && tp.lost_out <= tp.retrans_out {
        let v = tp.delivered + tp.packets_in_flight() as u64;
        tp.app_limited = if v == 0 { 1 } else { v };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A steady stream: one packet sent every 1 ms, each acked 10 ms after its send, gives a rate
    /// of exactly one packet per ms once the pipe is full.
    #[test]
    fn steady_stream_rate_is_send_rate() {
        let mss = 1000u32;
        let mut tp = TcpCc::new(mss, 10);
        tp.min_rtt_ns = 10_000_000;
        let mut sent: Vec<PacketRateState> = Vec::new();
        let ms = 1_000_000u64;
        let mut last_rate = None;
        for i in 0..200u64 {
            let now = i * ms;
            // ACK for packet sent at now-10ms arrives first.
            if i >= 10 {
                let mut rs = RateSample::default();
                let idx = (i - 10) as usize;
                tp.packets_out -= 1;
                tp.delivered += 1;
                on_packet_delivered(&mut tp, &mut sent[idx], &mut rs);
                generate(&mut tp, now, 1, 0, &mut rs);
                last_rate = rs.delivery_rate_bytes_per_s(mss);
            }
            let first = tp.packets_out == 0;
            tp.packets_out += 1;
            sent.push(on_packet_sent(&mut tp, now, i, false, first));
        }
        let r = last_rate.expect("valid sample");
        // 1000 bytes per ms = 1e6 bytes/s.
        assert!((r as f64 - 1e6).abs() / 1e6 < 0.01, "rate {r}");
    }

    #[test]
    fn sample_shorter_than_min_rtt_is_discarded() {
        let mut tp = TcpCc::new(1000, 10);
        tp.min_rtt_ns = 50_000_000;
        tp.packets_out = 1;
        let mut p = on_packet_sent(&mut tp, 1, 0, false, true);
        tp.delivered = 1;
        let mut rs = RateSample::default();
        on_packet_delivered(&mut tp, &mut p, &mut rs);
        generate(&mut tp, 10_000_000, 1, 0, &mut rs);
        assert_eq!(rs.interval_ns, -1);
        assert!(rs.delivery_rate_bytes_per_s(1000).is_none());
    }

    #[test]
    fn delivered_packet_counts_once() {
        let mut tp = TcpCc::new(1000, 10);
        tp.packets_out = 1;
        let mut p = on_packet_sent(&mut tp, 5, 0, false, true);
        let mut rs = RateSample::default();
        on_packet_delivered(&mut tp, &mut p, &mut rs);
        assert!(p.accounted);
        let mut rs2 = RateSample::default();
        on_packet_delivered(&mut tp, &mut p, &mut rs2);
        assert!(!rs2.has_prior, "second delivery of the same packet must be ignored");
    }
}
