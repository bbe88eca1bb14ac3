/* SPDX-License-Identifier: (MIT OR Apache-2.0) */
/*
 * The parts of the BBR model that bbr2.bpf.c and bbr3_linux.bpf.c compute the same way: the
 * bandwidth and BDP estimates, inflight_hi's headroom, the pacing-rate conversion, round and
 * loss-round bookkeeping, the short-term model's reset, ProbeRTT's cwnd and the ACK-aggregation
 * allowance. Where they differ (quantization, the round's own update, the probe cycle) each port
 * keeps its own.
 *
 * The including port defines first: BBR_STATE (its per-socket struct, whose fields these
 * functions read by the names both ports use), BBR_PHASE(name) (its state codes: B2_##name,
 * B3_##name), and the constants these functions read (BBR_SCALE, BW_SCALE, BW_UNIT, INF_PKTS,
 * INF_BW, HEADROOM, CWND_MIN_TARGET, PACING_MARGIN_PERCENT, PROBE_RTT_CWND_GAIN,
 * EXTRA_ACKED_MAX_US, USEC_PER_SEC), each valued and justified in the port.
 */
#ifndef BBRLAB_BBR_MODEL_H
#define BBRLAB_BBR_MODEL_H

#include "bbrlab_tcp_ca.h"

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

/* bbr_bw_to_pacing_rate: gain * bw * mss * (1 - margin) bytes/s, >= 1 B/s, <= sk_max_pacing_rate. */
static __always_inline u64 bw_to_pacing_rate(struct sock *sk, u64 bw, u32 gain)
{
	u64 rate = bw * tcp_sk(sk)->mss_cache;

	rate = (rate * gain) >> BBR_SCALE;
	rate = (rate * (USEC_PER_SEC / 100 * (100 - PACING_MARGIN_PERCENT))) >> BW_SCALE;
	rate = max64(rate, 1);
	return min64(rate, (u64)sk->sk_max_pacing_rate);
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

#endif
