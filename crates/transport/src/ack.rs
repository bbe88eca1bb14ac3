//! The ACK path of the sender (Linux `tcp_ack`): what one ACK delivers, its RTT samples, loss
//! detection and the recovery state machine, the rate sample, then the algorithm.
//!
//! The steps, each a helper inlined into `on_ack` (this runs per ACK) but for the rare SACK one:
//! 1-2. A D-SACK block is accounted for (recovery/reordering.rs), the other SACK blocks
//!      (`take_sacked`, out of line) and the cumulative ACK (`take_delivered`) tag newly
//!      delivered segments (`on_delivered`); then the ECN echo (`take_ce_echo`). An original
//!      delivered below the highest SACKed segment shows reordering; RACK's reordering window
//!      is updated.
//! 3. RTT samples (`take_rtt_samples`; Karn's rule, else the timestamp echo).
//! 4. RACK loss detection and the recovery state machine (recovery.rs), the rate sample.
//! 5. The algorithm: `cong_control`, or PRR / `cong_avoid` and the default pacing rate
//!    (`cong_avoid_or_prr`); then the loss-probe timer.

use crate::recovery::{is_dsack, without_dsack};
use crate::scoreboard::Delivered;
use crate::{Packet, Sender, DUPTHRESH};
use cc::rate::{self, RateSample};
use cc::{AckFlags, CaState, Nanos};

/// What one ACK delivered, gathered while tagging its segments.
struct AckedSegs {
    rs: RateSample,
    delivered: u32,
    /// Smallest and largest RTT among delivered never-retransmitted segments (Linux
    /// `sack_state.rate`'s `last_sackt`/`first_sackt` and `seq_rtt_us`).
    newest_rtt_ns: Option<u64>,
    oldest_rtt_ns: Option<u64>,
    /// Lowest segment newly delivered that was never retransmitted (Linux `state->reord` and
    /// `tcp_clean_rtx_queue`'s `reord`): below the prior highest SACKed one, it was reordered.
    reord: u64,
}

/// Linux's TCP timestamp clock ticks once per millisecond (`TCP_TS_HZ`; the microsecond clock
/// of `tcp_usec_ts` is off unless a route asks for it).
const TS_TICK_NS: u64 = 1_000_000;

/// The RTT Linux reads from an echoed timestamp (`tcp_rtt_tsopt_us(tp, 1)`): whole ticks between
/// the echoed TSval and now, at least one. Up to a tick below the true RTT (a 40.13-ms path
/// gives 40 ms in 87 % of samples) and, on a sub-millisecond path, a full tick above it.
#[inline]
pub(crate) fn tsopt_rtt_ns(now: Nanos, tsecr_ns: Nanos) -> u64 {
    (now / TS_TICK_NS).saturating_sub(tsecr_ns / TS_TICK_NS).max(1) * TS_TICK_NS
}

impl Sender {
    /// Process an ACK: the steps of Linux `tcp_ack`, each a helper below (inlined: this runs per
    /// ACK).
    pub fn on_ack(&mut self, now: Nanos, ack: &Packet) {
        self.tp.now_ns = now;
        if ack.rwnd_end != u64::MAX || self.rwnd_end != u64::MAX {
            self.rwnd_end = ack.rwnd_end;
        }
        if ack.ack > self.sb.snd_nxt {
            return; // acks data never sent: ignore (cannot happen in the simulator)
        }
        // TS.Recent (RFC 7323 §4.3): ACKs arrive in order of their TSval except when reordered.
        self.ts_recent_ns = self.ts_recent_ns.max(ack.seq);
        let prior_in_flight = self.tp.packets_in_flight();
        let prior_snd_una = self.sb.snd_una;
        let prior_fack = self.fack();
        let mut acked = AckedSegs {
            rs: RateSample { prior_in_flight, is_ack_delayed: ack.delayed, ..Default::default() },
            delivered: 0,
            newest_rtt_ns: None,
            oldest_rtt_ns: None,
            reord: u64::MAX,
        };
        // 1-2. SACK blocks and the cumulative ACK; reordering; then ECN.
        let acked_new = self.take_delivered(now, ack, &mut acked);
        if acked.reord < prior_fack {
            self.check_sack_reordering(acked.reord, false);
        }
        self.rack_update_reo_wnd(acked.rs.prior_delivered);
        let ece_new = self.take_ce_echo(ack);
        let delivered = acked.delivered;
        self.cc.in_ack_event(
            &mut self.tp,
            AckFlags { ece: ece_new, window_update: acked_new, acked_data: delivered > 0 },
        );
        // 3. RTT samples.
        let newest_rtt_ns = self.take_rtt_samples(now, ack, acked_new, &mut acked);
        if delivered > 0 {
            self.cc.pkts_acked(&mut self.tp, delivered, newest_rtt_ns);
        }

        // 4. Loss detection (RACK), recovery state machine.
        let lost_before = self.tp.lost;
        if delivered > 0 {
            self.rack_detect_loss(now);
        }
        let newly_lost = (self.tp.lost - lost_before) as u32;
        self.update_state(ack, acked_new, prior_snd_una);
        // The rate sample is finished where it was built (a copy of it is 128 bytes).
        let rs = &mut acked.rs;
        rate::generate(&mut self.tp, now, delivered, newly_lost, rs);
        if let Some(r) = rs.delivery_rate_bytes_per_s(self.tp.mss) {
            self.stats.last_delivery_rate_bytes_per_s = r;
            self.stats.interval_rate_samples += 1;
            self.stats.interval_app_limited_samples += rs.is_app_limited as u64;
        }

        // 5. Congestion control (Linux tcp_cong_control).
        if self.cc.has_cong_control() {
            self.cc.cong_control(&mut self.tp, rs);
        } else {
            self.cong_avoid_or_prr(delivered, newly_lost, acked_new);
        }
        if self.tp.packets_out == 0 {
            self.timers.tlp_at_ns = None;
            self.timers.reo_at_ns = None;
        } else if acked_new || delivered > 0 {
            self.schedule_tlp(now);
        }
        if self.completed_ns.is_none()
            && self.is_done()
            && self.stream.write_end != u64::MAX
            && !self.cfg.app_writes
        {
            self.completed_ns = Some(now);
        }
    }

    /// Steps 1-2 of an ACK: tag what its SACK blocks (`take_sacked`) and its cumulative ACK newly
    /// deliver. Returns whether snd_una advanced (then the RTO restarts and a tail probe is
    /// answered).
    #[inline(always)]
    fn take_delivered(&mut self, now: Nanos, ack: &Packet, acked: &mut AckedSegs) -> bool {
        // Most ACKs carry no SACK block: then there is nothing to walk, and nothing new to
        // remember once the previous ACK's blocks are forgotten.
        if ack.n_sack != 0 {
            self.take_sacked(now, ack, acked);
        } else {
            self.sb.remember_sack_blocks(ack);
        }

        // Cumulative ACK.
        let acked_new = ack.ack > self.sb.snd_una;
        while self.sb.snd_una < ack.ack {
            let seq = self.sb.snd_una;
            if let Some(d) = self.sb.ack_head(&mut self.tp, &mut acked.rs) {
                self.on_delivered(now, seq, d, acked);
            }
        }
        // The next ACK will take the segments now at the head, last touched a round trip ago.
        self.sb.prefetch_head();
        if acked_new {
            self.rtt.backoff = 0;
            if self.tp.packets_out > 0 {
                self.timers.rto_at_ns = Some(now + self.rtt.rto_ns);
            } else {
                self.timers.rto_at_ns = None;
            }
            self.rec.tlp_outstanding = false;
        }
        acked_new
    }

    /// Step 1, for an ACK with SACK blocks: a D-SACK block is accounted for and left out of the
    /// tagging (Linux tcp_sacktag_write_queue skips it after tcp_check_dsack); the others tag
    /// only what the previous ACK's blocks did not cover. Out of line: most ACKs carry none, and
    /// `on_ack`'s per-ACK code stays smaller for it.
    #[inline(never)]
    fn take_sacked(&mut self, now: Nanos, ack: &Packet, acked: &mut AckedSegs) {
        let stripped;
        let sacks = if is_dsack(ack) {
            if let Some(seq) = self.on_dsack(ack) {
                acked.reord = acked.reord.min(seq);
            }
            stripped = without_dsack(ack);
            &stripped
        } else {
            ack
        };
        if sacks.n_sack != 0 {
            for (start, end) in self.sb.newly_sacked(sacks) {
                for seq in start..end {
                    if let Some(d) = self.sb.tag_sacked(&mut self.tp, seq, &mut acked.rs) {
                        self.on_delivered(now, seq, d, acked);
                    }
                }
            }
        }
        self.sb.remember_sack_blocks(sacks);
    }

    /// The ACK's CE echo (a running count of CE-marked segments): whether it echoes new marks,
    /// which are added to `delivered_ce`.
    #[inline(always)]
    fn take_ce_echo(&mut self, ack: &Packet) -> bool {
        let ece_new = ack.ce_count > self.rec.ce_seen;
        let newly_ce = ack.ce_count.saturating_sub(self.rec.ce_seen);
        if ece_new {
            self.rec.ce_seen = ack.ce_count;
            self.tp.delivered_ce += newly_ce;
        }
        self.rec.ece_this_ack = ece_new;
        ece_new
    }

    /// Step 3: RTT samples (Karn: only from segments never retransmitted). Linux
    /// tcp_ack_update_rtt: an ACK that advances snd_una with no such segment (it acks a
    /// retransmission and what was SACKed before) takes its RTT from the timestamp it echoes
    /// instead, at the TS clock's tick (`tsopt_rtt_ns`). That sample reaches the estimator, the
    /// min_rtt filter, the rate sample and the algorithm, but not the run's RTT statistics, which
    /// measure the path. Returns the newest sample, the one the algorithm is given.
    #[inline(always)]
    fn take_rtt_samples(
        &mut self,
        now: Nanos,
        ack: &Packet,
        acked_new: bool,
        acked: &mut AckedSegs,
    ) -> Option<Nanos> {
        if let Some(oldest) = acked.oldest_rtt_ns {
            let newest = acked.newest_rtt_ns.unwrap_or(oldest);
            self.rtt.on_sample(&mut self.tp, now, oldest);
            self.rtt.update_min_rtt(&mut self.tp, now, newest);
            self.record_rtt(newest);
            acked.rs.rtt_ns = newest as i64;
            acked.newest_rtt_ns
        } else if acked_new && ack.ts_ns != 0 {
            let rtt = tsopt_rtt_ns(now, ack.ts_ns);
            self.rtt.on_sample(&mut self.tp, now, rtt);
            acked.rs.rtt_ns = rtt as i64;
            Some(rtt)
        } else {
            acked.newest_rtt_ns
        }
    }

    /// Step 5 for an algorithm without its own `cong_control`: PRR in recovery or CWR, else
    /// cong_avoid, then the default pacing rate.
    #[inline(always)]
    fn cong_avoid_or_prr(&mut self, delivered: u32, newly_lost: u32, acked_new: bool) {
        if self.tp.ca_state == CaState::Recovery || self.tp.ca_state == CaState::Cwr {
            self.prr(delivered, newly_lost, acked_new);
        } else if delivered > 0 && (acked_new || self.reo.reordering > DUPTHRESH) {
            // Linux tcp_cong_control → tcp_may_raise_cwnd: without high reordering, cwnd grows
            // only on FLAG_DATA_ACKED (snd_una advanced, RFC 5681 "in-order delivery"), not on
            // SACK-only ACKs in Disorder; the ACK that advances snd_una then counts everything
            // newly delivered, SACKed segments included (acked_sacked). Once reordering has
            // raised dupthresh, any forward progress (data ACKed or SACKed) grows it.
            self.cc.cong_avoid(&mut self.tp, delivered);
        }
        if !self.tp.is_cwnd_limited {
            // Every cong_avoid starts `if (!tcp_is_cwnd_limited(sk)) return;` (the de-facto
            // fast path the Google BBRv2 slides contrast BBR with); the host model charges no
            // cc work.
            self.tp.cc_fast_acks += 1;
        }
        self.update_default_pacing_rate();
    }

    /// One segment newly delivered by this ACK, tagged on the scoreboard: RTT samples (Karn: none
    /// from a retransmitted segment), RACK's reference segment.
    #[inline]
    fn on_delivered(&mut self, now: Nanos, seq: u64, d: Delivered, acked: &mut AckedSegs) {
        acked.delivered += 1;
        if !d.ever_retrans {
            acked.reord = acked.reord.min(seq);
            let rtt = now.saturating_sub(d.xmit_ns);
            acked.newest_rtt_ns = Some(acked.newest_rtt_ns.map_or(rtt, |r| r.min(rtt)));
            acked.oldest_rtt_ns = Some(acked.oldest_rtt_ns.map_or(rtt, |r| r.max(rtt)));
        }
        self.rack.on_delivered(now, seq, d.xmit_ns, d.ever_retrans, self.tp.min_rtt_ns);
    }
}
