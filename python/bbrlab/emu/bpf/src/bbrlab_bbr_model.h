/* SPDX-License-Identifier: (MIT OR Apache-2.0) */
/*
 * The parts of the BBR model that bbr2.bpf.c and bbr3_linux.bpf.c compute the same way: the
 * bandwidth and BDP estimates, inflight_hi's headroom, the pacing-rate conversion and the
 * initial pacing rate, round and loss-round bookkeeping, the short-term model's reset, what a
 * loss episode saves and a spurious one restores, the restart from idle, the ECN estimate,
 * ProbeRTT's cwnd, and the ACK-aggregation estimate and its allowance. Where they differ
 * (quantization, the round's own update, the probe cycle) each port keeps its own.
 *
 * The including port defines first: BBR_STATE (its per-socket struct, whose fields these
 * functions read by the names both ports use), struct ack_info (what one ACK tells, read by the
 * same names), BBR_PHASE(name) (its state codes: B2_##name, B3_##name), and the constants these
 * functions read besides the fixed point (bbrlab_bbr_fixed_point.h), the kernel's
 * (bbrlab_tcp_ca.h) and the ACK aggregation's (below): HEADROOM, CWND_MIN_TARGET,
 * PACING_MARGIN_PERCENT, PROBE_RTT_CWND_GAIN, STARTUP_PACING_GAIN, ECN_ALPHA_GAIN, each valued
 * and justified in the port.
 */
#ifndef BBRLAB_BBR_MODEL_H
#define BBRLAB_BBR_MODEL_H

#include "bbrlab_tcp_ca.h"
#include "bbrlab_bbr_fixed_point.h"

/* ACK aggregation: the extra_acked maximum is kept in 2 slots of 5 rounds (1 round in Startup);
 * the allowance is capped at 100 ms of bw (a longer stall was idleness, not aggregation); an
 * epoch restarts after 2^20 packets (Linux keeps epoch_acked in 20 bits). */
#define EXTRA_ACKED_WIN_RTTS 5
#define EXTRA_ACKED_WIN_RTTS_MAX 0x1F
#define EXTRA_ACKED_MAX_US 100000ULL
#define ACK_EPOCH_ACKED_RESET_THRESH (1U << 20)
#define ACK_EPOCH_ACKED_MAX 0xFFFFFU

static __always_inline bool is_in_probe_bw(const BBR_STATE *b)
{
	return b->state >= BBR_PHASE(PROBE_BW_DOWN) && b->state <= BBR_PHASE(PROBE_BW_UP);
}

/* bbr2_is_probing_bandwidth (draft IsProbingBW): Startup, REFILL, UP. */
static __always_inline bool is_probing_bw(const BBR_STATE *b)
{
	return b->state == BBR_PHASE(STARTUP) || b->state == BBR_PHASE(PROBE_BW_REFILL) ||
	       b->state == BBR_PHASE(PROBE_BW_UP);
}

static __always_inline u64 max_bw_of(const BBR_STATE *b)
{
	return max64(b->max_bw[0], b->max_bw[1]);
}

/* bbr_bw = min(max_bw, bw_lo). */
static __always_inline u64 bw_of(const BBR_STATE *b)
{
	return min64(max_bw_of(b), b->bw_lo);
}

/* bbr_bdp (draft BDP(gain)): ceil(gain * bw * min_rtt) packets; init_cwnd before any RTT sample. */
static __always_inline u32 bdp_multiple(const BBR_STATE *b, u64 bw, u32 gain)
{
	u64 w, pkts;

	if (b->min_rtt_us == INF_PKTS)
		return b->init_cwnd;
	w = bw * b->min_rtt_us;
	pkts = (((w * gain) >> BBR_SCALE) + BW_UNIT - 1) / BW_UNIT;
	return (u32)min64(pkts, INF_PKTS - 1);
}

/* bbr2_inflight_with_headroom: inflight_hi - max(1, HEADROOM), floor CWND_MIN_TARGET. */
static __always_inline u32 inflight_with_headroom(const BBR_STATE *b)
{
	u32 headroom;

	if (b->inflight_hi == INF_PKTS)
		return INF_PKTS;
	headroom = max32((u32)(((u64)b->inflight_hi * HEADROOM) >> BBR_SCALE), 1);
	return max32(b->inflight_hi > headroom ? b->inflight_hi - headroom : 0, CWND_MIN_TARGET);
}

/* bbr_save_cwnd: a nested episode must not save the already-reduced cwnd. */
static __always_inline void save_cwnd(struct sock *sk, BBR_STATE *b)
{
	u32 cwnd = tcp_sk(sk)->snd_cwnd;

	if (b->prev_ca_state < TCP_CA_Recovery && b->state != BBR_PHASE(PROBE_RTT))
		b->prior_cwnd = cwnd;
	else
		b->prior_cwnd = max32(b->prior_cwnd, cwnd);
}

/* Entering recovery or RTO (bbr2_ssthresh, draft SaveStateUponLoss): save cwnd and the
 * short- and long-term model for a spurious episode's undo. */
static __always_inline void save_state_upon_loss(struct sock *sk, BBR_STATE *b)
{
	save_cwnd(sk, b);
	b->undo_bw_lo = b->bw_lo;
	b->undo_inflight_lo = b->inflight_lo;
	b->undo_inflight_hi = b->inflight_hi;
}

/* A spurious episode (bbr2_undo_cwnd, draft HandleSpuriousLossDetection): the model saved on
 * entry comes back, never lowering what was learnt since. */
static __always_inline void restore_state_upon_undo(BBR_STATE *b)
{
	b->bw_lo = max64(b->bw_lo, b->undo_bw_lo);
	b->inflight_lo = max32(b->inflight_lo, b->undo_inflight_lo);
	b->inflight_hi = max32(b->inflight_hi, b->undo_inflight_hi);
}

/* bbr_bw_to_pacing_rate: gain * bw * mss * (1 - margin) bytes/s, >= 1 B/s, <= sk_max_pacing_rate. */
static __always_inline u64 bw_to_pacing_rate(struct sock *sk, u64 bw, u32 gain)
{
	u64 rate = bw * tcp_sk(sk)->mss_cache;

	rate = (rate * gain) >> BBR_SCALE;
	rate = (rate * (USEC_PER_SEC / 100 * (100 - PACING_MARGIN_PERCENT))) >> BW_SCALE;
	rate = max64(rate, 1);
	return min64(rate, (u64)sk->sk_max_pacing_rate);
}

/* bbr_init_pacing_rate_from_rtt: STARTUP_PACING_GAIN * cwnd / (srtt, or 1 ms before any
 * sample). */
static __always_inline void init_pacing_rate_from_rtt(struct sock *sk, BBR_STATE *b)
{
	struct tcp_sock *tp = tcp_sk(sk);
	u64 rtt_us, bw;

	if (tp->srtt_us) {
		rtt_us = max64(tp->srtt_us >> 3, 1);
		b->has_seen_rtt = 1;
	} else {
		rtt_us = USEC_PER_MSEC;
	}
	bw = (u64)tp->snd_cwnd * BW_UNIT / rtt_us;
	sk->sk_pacing_rate = bw_to_pacing_rate(sk, bw, STARTUP_PACING_GAIN);
}

/* bbr_cwnd_event's restart from idle: sending starts again while app-limited, so a new
 * ACK-aggregation epoch begins now; false for any other event (the port paces only after true). */
static __always_inline bool restart_from_idle(const struct tcp_sock *tp, BBR_STATE *b,
					      enum tcp_ca_event event)
{
	if (event != CA_EVENT_TX_START || !tp->app_limited)
		return false;
	b->idle_restart = 1;
	b->ack_epoch_start_us = tp->tcp_mstamp;
	b->ack_epoch_acked = 0;
	return true;
}

/* A round ends when what is delivered now has been acked. */
static __always_inline void start_round(struct sock *sk, BBR_STATE *b)
{
	b->next_round_delivered = tcp_sk(sk)->delivered;
}

/* bbr2_reset_congestion_signals. */
static __always_inline void reset_congestion_signals(BBR_STATE *b)
{
	b->loss_in_round = 0;
	b->ecn_in_round = 0;
	b->loss_in_cycle = 0;
	b->ecn_in_cycle = 0;
	b->bw_latest = 0;
	b->inflight_latest = 0;
}

/* The loss-round bookkeeping of bbr_skb_marked_lost (draft NoteLoss): the first loss of a round
 * starts a loss round, which ends when what is delivered now has been acked. */
static __always_inline void note_loss(struct sock *sk, BBR_STATE *b)
{
	if (!b->loss_in_round)
		b->loss_round_delivered = tcp_sk(sk)->delivered;
	b->loss_in_round = 1;
	b->loss_in_cycle = 1;
}

static __always_inline void reset_short_term_model(BBR_STATE *b)
{
	b->bw_lo = INF_BW;
	b->inflight_lo = INF_PKTS;
}

/* The DCTCP-style ECN estimate of bbr2_update_ecn_alpha: the CE-marked fraction of what was
 * delivered since the last update into *ratio (2^8), and its EWMA (gain ECN_ALPHA_GAIN) into
 * ecn_alpha; false, and nothing updated, when nothing was delivered since. */
static __always_inline bool update_ecn_ewma(const struct tcp_sock *tp, BBR_STATE *b, u64 *ratio)
{
	u64 delivered = tp->delivered - b->alpha_last_delivered;
	u64 delivered_ce = tp->delivered_ce - b->alpha_last_delivered_ce;
	u64 alpha;

	if (!delivered)
		return false;
	*ratio = (delivered_ce << BBR_SCALE) / delivered;
	alpha = (((BBR_UNIT - ECN_ALPHA_GAIN) * (u64)b->ecn_alpha) >> BBR_SCALE) +
		((ECN_ALPHA_GAIN * *ratio) >> BBR_SCALE);
	b->ecn_alpha = (u32)min64(alpha, BBR_UNIT);
	b->alpha_last_delivered = tp->delivered;
	b->alpha_last_delivered_ce = tp->delivered_ce;
	return true;
}

/* bbr_probe_rtt_cwnd: max(PROBE_RTT_CWND_GAIN * BDP, CWND_MIN_TARGET). */
static __always_inline u32 probe_rtt_cwnd(const BBR_STATE *b)
{
	return max32(bdp_multiple(b, bw_of(b), PROBE_RTT_CWND_GAIN), CWND_MIN_TARGET);
}

/* bbr_ack_aggregation_cwnd: extra_acked (gain 1.0), at most EXTRA_ACKED_MAX_US of bw. */
static __always_inline u32 extra_acked_cwnd(const BBR_STATE *b)
{
	u64 max_aggr = (bw_of(b) * EXTRA_ACKED_MAX_US) >> BW_SCALE;

	return (u32)min64(max32(b->extra_acked[0], b->extra_acked[1]), max_aggr);
}

/* bbr_update_ack_aggregation (draft UpdateACKAggregation): the data ACKed beyond what bw
 * predicts since the epoch began at ack_epoch_start_us, into the current extra_acked slot;
 * stamp_us is the ACK's time on the port's clock (v2alpha: tp->delivered_mstamp; v3: now). */
static __always_inline void update_ack_aggregation(struct sock *sk, BBR_STATE *b,
						   const struct ack_info *a, u64 stamp_us)
{
	u32 win = b->full_bw_reached ? EXTRA_ACKED_WIN_RTTS : 1;
	u64 expected, epoch_us;
	u32 extra, idx;

	if (!a->acked_sacked || !a->valid)
		return;
	if (b->round_start) {
		b->extra_acked_win_rtts = min32(b->extra_acked_win_rtts + 1, EXTRA_ACKED_WIN_RTTS_MAX);
		if (b->extra_acked_win_rtts >= win) {
			b->extra_acked_win_rtts = 0;
			b->extra_acked_win_idx ^= 1;
			b->extra_acked[b->extra_acked_win_idx & 1] = 0;
		}
	}
	epoch_us = stamp_us > b->ack_epoch_start_us ? stamp_us - b->ack_epoch_start_us : 0;
	expected = (bw_of(b) * epoch_us) >> BW_SCALE;
	/* A new epoch if ACKs arrive no faster than bw predicts, or after very many packets. */
	if (b->ack_epoch_acked <= expected ||
	    b->ack_epoch_acked + a->acked_sacked >= ACK_EPOCH_ACKED_RESET_THRESH) {
		b->ack_epoch_start_us = stamp_us;
		b->ack_epoch_acked = 0;
		expected = 0;
	}
	b->ack_epoch_acked = min32(b->ack_epoch_acked + a->acked_sacked, ACK_EPOCH_ACKED_MAX);
	extra = (u32)min64(b->ack_epoch_acked - expected, tcp_sk(sk)->snd_cwnd);
	idx = b->extra_acked_win_idx & 1;
	b->extra_acked[idx] = max32(b->extra_acked[idx], extra);
}

#endif
