/* SPDX-License-Identifier: (MIT OR Apache-2.0) */
/*
 * The parts of the BBR model that bbr2.bpf.c and bbr3_linux.bpf.c compute the same way: the
 * constants v2alpha and v3 share, what one ACK tells (struct ack_info, read from the rate sample
 * and the mainline stand-ins), the initial model, the bandwidth and BDP estimates, inflight_hi's
 * headroom and the bounds the model puts on cwnd, the send quantum and the in-flight estimate at
 * the next departure, the pacing rate and the initial pacing rate, round and loss-round
 * bookkeeping, the short-term model's reset, what a loss episode saves and a spurious one
 * restores, the restart from idle, the ECN estimate, the ProbeBW cycle's common steps (start of
 * DOWN and REFILL, probe wait, inflight_hi's growth), ProbeRTT's cwnd, hold and exit check, the
 * ACK-aggregation estimate and its allowance, and the latest-ACK diagnostic. Where v2alpha and
 * v3 differ (gains, quantization, the probe cycle's transitions, the min_rtt sub-window's
 * refresh, Startup's and Drain's exits, the loss and undo hooks) each port keeps its own; the
 * hooks whose rules do not differ are in bbrlab_bbr_ops.h.
 *
 * The constants v2alpha and v3 share are defined here (below); each port defines those in
 * which they differ. The including port defines first: BBR_STATE (its per-socket struct, whose
 * fields these functions read by the names both ports use), BBR_PHASE(name) (its state codes:
 * B2_##name, B3_##name), SEND_QUANTUM_MIN_SEGS(pacing_rate) (the send quantum's floor in
 * segments), TX_RING (with bbrlab_tx_ring.h included) and STARTUP_PACING_GAIN.
 * It defines after: quantization_budget(sk, b, cwnd), exit_probe_rtt(sk, b, now_us) and
 * probe_inflight_hi_upward(sk, b, a) (declared here).
 */
#ifndef BBRLAB_BBR_MODEL_H
#define BBRLAB_BBR_MODEL_H

#include "bbrlab_tcp_ca.h"
#include "bbrlab_bbr_fixed_point.h"
#include "bbrlab_tx_ring.h"

/* ---- The constants v2alpha and v3 share (Linux tcp_bbr2.c and v3's tcp_bbr.c, in 2^8) ----- */

/* Drain 1/2.885 (88/256): drains in about a round the queue Startup built. */
#define DRAIN_PACING_GAIN (BBR_UNIT * 1000 / 2885)
/* ProbeBW_UP pacing 1.25: probe 25 % above the estimate. */
#define UP_PACING_GAIN (BBR_UNIT * 5 / 4)
/* ProbeRTT cwnd = max(0.5 BDP, 4): halves the rate for 200 ms every 5 s, ~2 % cost. */
#define PROBE_RTT_CWND_GAIN (BBR_UNIT / 2)
/* Loss threshold 2 % (5/256 = 1.95 %): a sample losing more than this went above the path's
 * capacity + buffer. */
#define LOSS_THRESH (BBR_UNIT * 2 / 100)
/* Headroom 15 % (38/256): CRUISE leaves this much of inflight_hi free for other flows. */
#define HEADROOM (BBR_UNIT * 15 / 100)
/* Full pipe: bw grew less than 25 % for 3 non-app-limited rounds. */
#define FULL_BW_THRESH (BBR_UNIT * 5 / 4)
#define FULL_BW_CNT 3

/* Pace 1 % below the estimate so the bottleneck queue does not grow on average. */
#define PACING_MARGIN_PERCENT 1
/* Minimum cwnd 4: an ACK-every-other-packet receiver stays pipelined. */
#define CWND_MIN_TARGET 4
/* Linux keeps init_cwnd in 7 bits. */
#define INIT_CWND_MAX 0x7F

/* min_rtt window 10 s; ProbeRTT scheduled by a 5 s sub-window; held 200 ms (+1 round). */
#define MIN_RTT_WIN_US (10 * USEC_PER_SEC)
#define PROBE_RTT_WIN_US (5 * USEC_PER_SEC)
#define PROBE_RTT_MODE_US (200 * USEC_PER_MSEC)
/* Probe every 2 s + U[0, 1 s) ("BBR-native"), or after at most 63 rounds (Reno coexistence:
 * fair to a 25 Mbit/s 30 ms Reno flow), from a head start of U{0, 1} rounds. */
#define BW_PROBE_BASE_US (2 * USEC_PER_SEC)
#define BW_PROBE_RAND_US USEC_PER_SEC
#define BW_PROBE_MAX_ROUNDS 63
#define BW_PROBE_RAND_ROUNDS 2
/* inflight_hi grows 1, 2, 4 ... packets per round in UP, up to 2^30. */
#define BW_PROBE_UP_ROUNDS_MAX 30

/* ECN (DCTCP-style, only when ECN is negotiated and min_rtt <= 5 ms). */
#define ECN_ALPHA_GAIN (BBR_UNIT / 16) /* EWMA gain 1/16, as DCTCP's g */
#define ECN_ALPHA_INIT BBR_UNIT        /* start at 1.0: react at once into a marked queue */
#define ECN_FACTOR (BBR_UNIT / 3)      /* inflight_lo *= 1 - alpha/3 per round with CE */
#define ECN_THRESH (BBR_UNIT / 2)      /* a sample is too high at 50 % CE (v2alpha >=, v3 >) */
#define FULL_ECN_CNT 2                 /* Startup ends after 2 rounds with CE >= 50 % */
#define ECN_MAX_RTT_US 5000            /* shallow-threshold marking is a datacenter signal */

/* ACK aggregation: the extra_acked maximum is kept in 2 slots of 5 rounds (1 round in Startup);
 * the allowance is capped at 100 ms of bw (a longer stall was idleness, not aggregation); an
 * epoch restarts after 2^20 packets (Linux keeps epoch_acked in 20 bits). */
#define EXTRA_ACKED_WIN_RTTS 5
#define EXTRA_ACKED_WIN_RTTS_MAX 0x1F
#define EXTRA_ACKED_MAX_US 100000ULL
#define ACK_EPOCH_ACKED_RESET_THRESH (1U << 20)
#define ACK_EPOCH_ACKED_MAX 0xFFFFFU

/* Offload (Linux tcp_tso_autosize and bbr_quantization_budget, which v2alpha and v3 share): cwnd
 * leaves room for 3 bursts in flight, +2 packets in UP so gain cycling works at small BDPs; a
 * burst is about 1 ms (2^-10 s, the default sk_pacing_shift) of the pacing rate plus 64 KB >>
 * (min_rtt_us >> 9) (tcp_tso_rtt_log = 9), at most 64 KB - 1 - MAX_TCP_HEADER (320 B on
 * x86-64), and 1 segment below 1.2 Mbit/s (bbr_min_tso_rate, in bytes/s). */
#define QUANTA_IN_FLIGHT 3
#define PROBE_UP_EXTRA_CWND 2
#define PACING_SHIFT 10
#define GSO_LEGACY_MAX_SIZE 65536ULL
#define GSO_MAX_BYTES (GSO_LEGACY_MAX_SIZE - 1 - 320)
#define TSO_RTT_SHIFT 9
#define MIN_TSO_RATE_BYTES_PER_S (1200000ULL / 8)

/* bbr_ack_phase (v2alpha's, which v3 keeps): where the probe's feedback stands, so that the
 * model reacts only to samples of the probe it started. */
enum bbr_ack_phase {
	ACK_PHASE_INIT,
	ACK_PHASE_REFILLING,
	ACK_PHASE_PROBE_STARTING,
	ACK_PHASE_PROBE_FEEDBACK,
	ACK_PHASE_PROBE_STOPPING,
};

/* What one ACK tells: the sample's rate and the mainline estimates of Google's rs fields (the
 * ports' headers, items 1-3). */
struct ack_info {
	u64 now_us;
	u64 sample_bw;
	u32 tx_in_flight; /* estimate of rs->tx_in_flight (item 1) */
	u32 lost;         /* estimate of rs->lost (+ rs->losses) (item 2) */
	u32 new_lost;     /* packets marked lost since the previous ACK (item 3) */
	u32 delivered;    /* rs->delivered, >= 0 */
	u32 delivered_ce; /* rs->delivered_ce, >= 0 */
	u32 acked_sacked;
	u32 prior_in_flight;
	u32 prior_delivered;
	u8 valid;         /* interval_us > 0 and delivered >= 0 */
	u8 app_limited;
	u8 ce_now;
	u8 ca_state;
};

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

/* bbr_min_tso_segs: 1 segment per burst below 1.2 Mbit/s, else 2. */
static __always_inline u32 min_tso_segs(u64 pacing_rate_bytes_per_s)
{
	return pacing_rate_bytes_per_s < MIN_TSO_RATE_BYTES_PER_S ? 1 : 2;
}

/* The send quantum (v2alpha bbr_tso_segs_generic, v3 the stack's tcp_tso_autosize):
 * pacing_rate >> 10 + 64 KB >> (min_rtt_us >> 9), at most GSO_MAX_BYTES, in segments, at least
 * SEND_QUANTUM_MIN_SEGS(pacing_rate). */
static __always_inline u32 send_quantum_segs(struct sock *sk, const BBR_STATE *b)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	u64 rate = sk->sk_pacing_rate;
	u64 bytes = rate >> PACING_SHIFT;
	u32 mss = tp->mss_cache ? tp->mss_cache : 1;

	if (b->min_rtt_us != INF_PKTS) {
		u32 r = b->min_rtt_us >> TSO_RTT_SHIFT;

		if (r < 64)
			bytes += GSO_LEGACY_MAX_SIZE >> r;
	}
	bytes = min64(bytes, GSO_MAX_BYTES);
	return max32((u32)(bytes / mss), SEND_QUANTUM_MIN_SEGS(rate));
}

/* bbr_quantization_budget, the port's: cwnd with room for the offload bursts. */
static __always_inline u32 quantization_budget(struct sock *sk, const BBR_STATE *b, u32 cwnd);

/* bbr_inflight (draft Inflight(bw, gain)) = QuantizationBudget(BDP(bw, gain)). */
static __always_inline u32 inflight_of(struct sock *sk, const BBR_STATE *b, u64 bw, u32 gain)
{
	return quantization_budget(sk, b, bdp_multiple(b, bw, gain));
}

/* bbr_packets_in_net_at_edt: in flight when the next packet departs (tp->tcp_wstamp_ns, the EDT;
 * the interval in us). */
static __always_inline u32 packets_in_net_at_edt(struct sock *sk, const BBR_STATE *b,
						 u32 inflight_now)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	u64 now_ns = tp->tcp_clock_cache;
	u64 edt_ns = max64(tp->tcp_wstamp_ns, now_ns);
	u64 interval_delivered = (bw_of(b) * ((edt_ns - now_ns) / NSEC_PER_USEC)) >> BW_SCALE;
	u64 at_edt = inflight_now;

	if (b->pacing_gain > BBR_UNIT)
		at_edt += send_quantum_segs(sk, b); /* the burst about to leave */
	return interval_delivered >= at_edt ? 0 : (u32)(at_edt - interval_delivered);
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

/* bbr_set_pacing_rate: pace at gain * bw; never lower the rate before the pipe is full. */
static __always_inline void set_pacing_rate(struct sock *sk, BBR_STATE *b, u64 bw, u32 gain)
{
	u64 rate = bw_to_pacing_rate(sk, bw, gain);

	if (!b->has_seen_rtt && tcp_sk(sk)->srtt_us)
		init_pacing_rate_from_rtt(sk, b);
	if (b->full_bw_reached || rate > (u64)sk->sk_pacing_rate)
		sk->sk_pacing_rate = rate;
}

/* bbr_init (v2alpha's bbr2_init, v3's bbr_init) on zeroed state: the initial cwnd and the cwnd
 * to restore, an infinite ssthresh, the first round and loss round (loss rounds are sampled
 * after the first flight), min_rtt and the ProbeRTT sub-window from the kernel's min RTT now
 * (~0 before any sample), the aggregation epoch, no short- or long-term bound, and the
 * baselines of the ack phase, ca_state, the ECN estimate, CE and losses. */
static __always_inline void init_model(struct sock *sk, BBR_STATE *b, u64 now_us, u32 min_rtt_us)
{
	struct tcp_sock *tp = tcp_sk(sk);

	b->init_cwnd = min32(max32(tp->snd_cwnd, 1), INIT_CWND_MAX);
	b->prior_cwnd = tp->prior_cwnd;
	tp->snd_ssthresh = TCP_INFINITE_SSTHRESH;
	b->next_round_delivered = tp->delivered;
	b->loss_round_delivered = tp->delivered + 1;
	b->min_rtt_us = min_rtt_us;
	b->min_rtt_stamp_us = now_us;
	b->probe_rtt_min_us = min_rtt_us;
	b->probe_rtt_min_stamp_us = now_us;
	b->ack_epoch_start_us = now_us;
	b->bw_lo = INF_BW;
	b->inflight_lo = INF_PKTS;
	b->inflight_hi = INF_PKTS;
	b->ack_phase = ACK_PHASE_INIT;
	b->prev_ca_state = TCP_CA_Open;
	b->ecn_alpha = ECN_ALPHA_INIT;
	b->alpha_last_delivered = tp->delivered;
	b->alpha_last_delivered_ce = tp->delivered_ce;
	b->last_delivered_ce = tp->delivered_ce;
	b->last_lost = tp->lost;
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

/* bbr_update_round_start (draft UpdateRound): a round starts at the ACK of a sample (with a
 * positive interval) sent after the previous round began. */
static __always_inline void update_round(struct sock *sk, BBR_STATE *b, const struct ack_info *a)
{
	b->round_start = 0;
	if (a->valid && seq_after_eq(a->prior_delivered, b->next_round_delivered)) {
		start_round(sk, b);
		b->round_start = 1;
	}
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

/* bbr_raise_inflight_hi_slope (draft RaiseInflightLongtermSlope): in UP, inflight_hi grows by
 * 1, 2, 4 ... packets per round: one packet per bw_probe_up_cnt packets acked. */
static __always_inline void raise_inflight_hi_slope(struct sock *sk, BBR_STATE *b)
{
	u32 growth = 1U << (b->bw_probe_up_rounds & 31);

	b->bw_probe_up_rounds = min32(b->bw_probe_up_rounds + 1, BW_PROBE_UP_ROUNDS_MAX);
	b->bw_probe_up_cnt = max32(tcp_sk(sk)->snd_cwnd / growth, 1);
}

/* bbr_pick_probe_wait: the next probe after a random head start of 0-1 rounds, or 2-3 s. */
static __always_inline void pick_probe_wait(BBR_STATE *b)
{
	b->rounds_since_probe = bpf_get_prandom_u32() % BW_PROBE_RAND_ROUNDS;
	b->bw_probe_wait_us = BW_PROBE_BASE_US + bpf_get_prandom_u32() % (u32)BW_PROBE_RAND_US;
}

/* bbr_start_bw_probe_down: a new cycle; its congestion signals start afresh, and the next probe
 * is drawn. (v3 also schedules the max_bw clock's advance when leaving UP, at its call sites.) */
static __always_inline void start_probe_bw_down(struct sock *sk, BBR_STATE *b, u64 now_us)
{
	reset_congestion_signals(b);
	b->bw_probe_up_cnt = INF_PKTS;
	pick_probe_wait(b);
	b->cycle_stamp_us = now_us;
	b->ack_phase = ACK_PHASE_PROBE_STOPPING;
	start_round(sk, b);
	b->state = BBR_PHASE(PROBE_BW_DOWN);
}

/* bbr_start_bw_probe_refill (bbr_refill_add_inc is 0 in v2alpha and v3): a round with the
 * short-term bounds lifted, so that UP's samples are not limited by them. */
static __always_inline void start_probe_bw_refill(struct sock *sk, BBR_STATE *b,
						  u32 probe_up_rounds)
{
	reset_short_term_model(b);
	b->bw_probe_up_rounds = probe_up_rounds;
	b->bw_probe_up_acks = 0;
	b->stopped_risky_probe = 0;
	b->ack_phase = ACK_PHASE_REFILLING;
	start_round(sk, b);
	b->state = BBR_PHASE(PROBE_BW_REFILL);
}

/* The port's exit from ProbeRTT (bbr2_exit_probe_rtt, bbr_exit_probe_rtt): to ProbeBW or
 * Startup. */
static __always_inline void exit_probe_rtt(struct sock *sk, BBR_STATE *b, u64 now_us);

/* bbr_check_probe_rtt_done: once the hold is over, restore cwnd, restart the ProbeRTT
 * sub-window, forget the short-term model, and leave ProbeRTT. */
static __always_inline void check_probe_rtt_done(struct sock *sk, BBR_STATE *b, u64 now_us)
{
	struct tcp_sock *tp = tcp_sk(sk);

	if (!b->probe_rtt_done_us || now_us <= b->probe_rtt_done_us)
		return;
	tp->snd_cwnd = max32(tp->snd_cwnd, b->prior_cwnd); /* RestoreCwnd */
	b->probe_rtt_min_stamp_us = now_us;
	reset_short_term_model(b);
	exit_probe_rtt(sk, b, now_us);
}

/* The 10 s min_rtt follows the 5 s probe_rtt_min sub-window (bbr_update_min_rtt, draft
 * UpdateMinRTT): when the sub-window's minimum is as low, or the 10 s have passed. */
static __always_inline void update_min_rtt_from_probe_rtt_min(BBR_STATE *b, u64 now_us)
{
	if (b->probe_rtt_min_us <= b->min_rtt_us || now_us > b->min_rtt_stamp_us + MIN_RTT_WIN_US) {
		b->min_rtt_us = b->probe_rtt_min_us;
		b->min_rtt_stamp_us = b->probe_rtt_min_stamp_us;
	}
}

/* In ProbeRTT (bbr_update_min_rtt's tail, draft HandleProbeRTT): hold cwnd at probe_rtt_cwnd for
 * PROBE_RTT_MODE_US and a round from when inflight got down to it, then the port's exit; the
 * low-rate samples ProbeRTT causes are marked app-limited (MarkConnectionAppLimited). */
static __always_inline void handle_probe_rtt(struct sock *sk, BBR_STATE *b, u64 now_us)
{
	struct tcp_sock *tp = tcp_sk(sk);

	if (b->state == BBR_PHASE(PROBE_RTT)) {
		u32 v = tp->delivered + packets_in_flight(tp);

		tp->app_limited = v ? v : 1;
		if (!b->probe_rtt_done_us && packets_in_flight(tp) <= probe_rtt_cwnd(b)) {
			b->probe_rtt_done_us = now_us + PROBE_RTT_MODE_US;
			b->probe_rtt_round_done = 0;
			start_round(sk, b);
		} else if (b->probe_rtt_done_us) {
			if (b->round_start)
				b->probe_rtt_round_done = 1;
			if (b->probe_rtt_round_done)
				check_probe_rtt_done(sk, b, now_us);
		}
	}
}

/* cwnd's bounds (bbr_set_cwnd's tail, bbr2_bound_cwnd_for_inflight_model; draft
 * BoundCwndForProbeRTT, BoundCwndForModel): the socket's clamp, ProbeRTT's cwnd, inflight_hi in
 * ProbeBW (with headroom in CRUISE and ProbeRTT) and inflight_lo, never below CWND_MIN_TARGET. */
static __always_inline u32 bound_cwnd(const struct tcp_sock *tp, const BBR_STATE *b, u32 cwnd)
{
	u32 cap;

	cwnd = min32(cwnd, tp->snd_cwnd_clamp);
	if (b->state == BBR_PHASE(PROBE_RTT))
		cwnd = min32(cwnd, probe_rtt_cwnd(b));
	if (b->state == BBR_PHASE(PROBE_BW_CRUISE) || b->state == BBR_PHASE(PROBE_RTT))
		cap = inflight_with_headroom(b);
	else if (is_in_probe_bw(b))
		cap = b->inflight_hi;
	else
		cap = INF_PKTS;
	cap = max32(min32(cap, b->inflight_lo), CWND_MIN_TARGET);
	return min32(cwnd, cap);
}

/* bbr2_check_time_to_cruise, draft IsTimeToCruise: inflight is down to the headroom below
 * inflight_hi and to the BDP of bw. */
static __always_inline bool is_time_to_cruise(struct sock *sk, const BBR_STATE *b, u32 inflight,
					      u64 bw)
{
	if (inflight > inflight_with_headroom(b))
		return false;
	return inflight <= inflight_of(sk, b, bw, BBR_UNIT);
}

/* The port's growth of inflight_hi in UP (bbr2_probe_inflight_hi_upward,
 * ProbeInflightLongtermUpward). */
static __always_inline void probe_inflight_hi_upward(struct sock *sk, BBR_STATE *b,
						     const struct ack_info *a);

/* The tail of bbr2_adapt_upper_bounds and of AdaptLongTermModel, for a sample that was not too
 * high: once loss or ECN has set inflight_hi, it follows tx_in_flight up, and grows in UP. */
static __always_inline void raise_inflight_hi(struct sock *sk, BBR_STATE *b,
					      const struct ack_info *a)
{
	if (b->inflight_hi == INF_PKTS)
		return; /* no excess-queue signals yet */
	if (a->tx_in_flight > b->inflight_hi)
		b->inflight_hi = a->tx_in_flight;
	if (b->state == BBR_PHASE(PROBE_BW_UP))
		probe_inflight_hi_upward(sk, b, a);
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

/* The start of cong_control (bbr2_main, bbr_main): what the rate sample tells into *a. */
static __always_inline void read_rate_sample(struct sock *sk, const struct rate_sample *rs,
					     struct ack_info *a)
{
	a->now_us = tcp_sk(sk)->tcp_mstamp;
	a->valid = rs->interval_us > 0 && rs->delivered >= 0;
	a->delivered = rs->delivered > 0 ? (u32)rs->delivered : 0;
	a->delivered_ce = rs->delivered_ce > 0 ? (u32)rs->delivered_ce : 0;
	a->acked_sacked = rs->acked_sacked;
	a->prior_in_flight = rs->prior_in_flight;
	a->prior_delivered = rs->prior_delivered;
	a->app_limited = rs->is_app_limited;
	a->ca_state = ca_state_of(sk);
}

/* bbr_calculate_bw_sample: packets/us << 24, rounded up so that a low rate can still grow. */
static __always_inline u64 sample_bw_of(const struct ack_info *a, const struct rate_sample *rs)
{
	return ((u64)a->delivered * BW_UNIT + (u64)rs->interval_us - 1) / (u64)rs->interval_us;
}

/* The mainline stand-ins for what v2alpha's and v3's rs carries (the ports' headers, items 1-4):
 * CE and losses since the previous ACK, and the ring's tx_in_flight and lost of the sampled
 * packet. */
static __always_inline void read_stand_ins(const struct tcp_sock *tp, BBR_STATE *b,
					   struct ack_info *a)
{
	a->ce_now = tp->delivered_ce != b->last_delivered_ce;
	b->last_delivered_ce = tp->delivered_ce;
	a->new_lost = tp->lost - b->last_lost;
	b->last_lost = tp->lost;
}

/* The end of cong_control: remember the ACK's ca_state and whether this cycle saw loss or CE
 * (the port then records the ring's snapshot: tx_ring_record). */
static __always_inline void finish_ack(BBR_STATE *b, const struct ack_info *a)
{
	b->prev_ca_state = a->ca_state;
	if (a->lost)
		b->loss_in_cycle = 1;
	if (a->delivered_ce)
		b->ecn_in_cycle = 1;
}

/* Diagnostics: the model after the latest ACK (of whichever flow ACKed last), as both ports'
 * .bss globals carry it (`bpftool map dump` of the object's .bss shows it; mainline does not let
 * a BPF controller fill TCP_CC_INFO). */
struct bbr_ack_diag {
	u32 state;
	u32 min_rtt_us;
	u32 inflight_hi;
	u32 inflight_lo;
	u32 tx_in_flight; /* this ACK's estimate (the ports' headers, item 1) */
	u32 lost;         /* this ACK's estimate (item 2) */
	u32 cwnd;
};

static __always_inline void note_ack_diag(struct bbr_ack_diag *d, const BBR_STATE *b,
					  const struct ack_info *a, const struct tcp_sock *tp)
{
	d->state = b->state;
	d->min_rtt_us = b->min_rtt_us;
	d->inflight_hi = b->inflight_hi;
	d->inflight_lo = b->inflight_lo;
	d->tx_in_flight = a->tx_in_flight;
	d->lost = a->lost;
	d->cwnd = tp->snd_cwnd;
}

#endif
