// SPDX-License-Identifier: GPL-2.0
/*
 * bql: BQL ("Bottleneck Queue Level", the delay-based controller of the RMDT protocol) as a BPF
 * struct_ops TCP congestion control for a stock (mainline) kernel, with the behaviour of
 * bbrlab's simulator algorithm of the same name (crates/cc/src/bql/).
 *
 * What runs here is bbrlab's reconstruction of BQL from the Anhalt BQL paper, not RMDT's code
 * (which is not public): crates/cc/src/bql/mod.rs's header argues every equation and constant,
 * and this file ports exactly those, with the same constants. In short, per ACK:
 *
 *   min_rtt   = min RTT sample over 10 s (a sample <= min_rtt + 2 packet times restamps it)
 *   bw_max    = windowed max delivery rate over 10 rounds (Gain only)
 *   c         = EWMA (T_f) of the ACK-side rate delivered * mss / ack interval (follows a lower
 *               sample only while the own queue is busy, q_meas >= Q* / 2)
 *   q_meas    = max(0, rtt - min_rtt) * c                           (own bytes queued)
 *   q_pred    = q_meas + sent_since_P * mss - c * rtt               (Smith predictor)
 *   Q*        = clamp(c * min_rtt / 16, 30 KB, 150 KB)
 *   Gain:     pacing = x0 * 2^((t - t0) / min_rtt), <= 2.77 bw_max; exit to Drain when the
 *             filtered q_meas > Q* or bw_max grew < 25 % for 3 rounds
 *   Drain/Control: pacing = c + clamp((Q* - q_pred_f + I) / T_q, -c/2, +c/4),
 *             I += (Q* - q_meas_f) dt / (4 T_q) near the set point (anti-windup), |I| <= 2 Q*;
 *             Drain -> Control when q_pred_f <= 2 Q*; Control -> Gain (x 1.25 per min_rtt) after
 *             3 rounds with q_meas < Q* / 4; every 10 s without a min_rtt sample a refresh
 *             (pace at 0.75 c to an empty own queue, hold at c for a round, take the new min)
 *   cwnd      = a safety cap: Gain 3 BDP + 3 bursts (grows 2/acked), else 2 BDP + 2 Q* + 3 bursts
 *   loss      = not a congestion signal (ssthresh changes nothing)
 *
 * WHAT BPF CANNOT DO THAT THE SIMULATOR DOES, AND THE STAND-IN
 *
 * 1. Floating point (the simulator's BQL computes in f64): BPF has none. Rates are u64 bytes/s,
 *    times u64 ns, queue quantities (q_meas_f, q_pred_f, the I term) s64 bytes << 8 (Q_SHIFT),
 *    EWMA weights min(dt / T_f, 1) in 2^16; every product is ordered to stay below 2^63 up to
 *    10 Gbit/s x 1 s. Results differ from the f64 ones by truncation only (< 1 byte/s, 1/256 B).
 * 2. powf (the Gain ramp x0 * growth^periods): 2^e with e = periods * log2(growth) in 2^16,
 *    the integer part a shift and 2^frac a degree-4 polynomial (relative error < 5e-6).
 * 3. Signed division: the BPF ISA this is compiled for (clang's default cpu) has only unsigned
 *    division; sdiv() divides magnitudes and restores the sign (truncation toward zero, as f64
 *    -> the simulator's later rounding does not depend on it).
 * 4. rs.tx_in_flight (the Smith predictor's sent_since_P = in_flight_now - tx_in_flight +
 *    delivered, the packets sent after the sampled packet P). Mainline's rate_sample has only
 *    prior_delivered (tp->delivered when P was sent). Stand-in: a ring of SEND_RING snapshots
 *    {tp->delivered, tp->data_segs_out} taken at the end of ACKs (about every cwnd/256 packets
 *    delivered); sent_since_P = data_segs_out now - the segs_out of the newest snapshot at or
 *    before prior_delivered (binary search). It overcounts by the packets sent between that
 *    ACK and P (a burst, or cwnd/256 packets: 1-3 at 100 Mbit/s x 40 ms, far below Q*). Where
 *    the ring does not reach back to P, q_pred = q_meas (as the simulator without a prior).
 * 5. rs.rcv_interval_ns (the ACK-side interval of the sample): not in mainline's rate_sample,
 *    but exactly tcp_rate_gen's ack_us = tp->tcp_mstamp - rs->prior_mstamp, computed here.
 * 6. Time: now is tp->tcp_clock_cache (ns, the stamp of this ACK's processing); RTT samples
 *    (rs->rtt_us, srtt) are us in the kernel: 1 us resolution instead of the simulator's ns.
 * 7. Offload bursts (crate::tso_autosize, for the cwnd's burst allowance): the same formula,
 *    pacing_rate >> 10 bytes, <= 64 KB, >= 2 segments, from sk->sk_pacing_rate.
 *
 * What the loader gets: one struct_ops map `bql`, one sk-storage map `bql_sk_state` whose value
 * starts with the flow's phase code (registry table BQL: 0 gain, 1 drain, 2 control; "Phases"
 * in bbrlab_tcp_ca.h), and the TCP name BBRLAB_CA_NAME.
 */
#if __has_include("bbrlab_tcp_ca.h")
#include "bbrlab_tcp_ca.h"
#else
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#endif

char _license[] SEC("license") = "GPL";

#ifndef BBRLAB_CA_NAME
#define BBRLAB_CA_NAME "bql"
#endif

#define NO_RTT 0xFFFFFFFFFFFFFFFFULL /* "no sample" (the simulator's u64::MAX) */

/* Queue quantities are bytes << Q_SHIFT; NSEC_PER_SEC >> Q_SHIFT converts ns x bytes/s to them. */
#define Q_SHIFT 8
#define Q_ONE (1LL << Q_SHIFT)
#define NS_PER_Q (NSEC_PER_SEC >> Q_SHIFT) /* 3906250, exact */
/* EWMA weights in 2^16. */
#define W_SHIFT 16
#define W_ONE (1ULL << W_SHIFT)

/* ---- The simulator's constants (crates/cc/src/bql/mod.rs), as rationals ------------------- */

/* Gain pacing gain 2.77 (BBRv3's startup gain): doubles the delivery rate per round. */
#define GAIN_PACING_NUM 277
#define GAIN_PACING_DEN 100
/* Gain cwnd cap 3 BDP: above the ~2 BDP a doubling pacer needs. */
#define GAIN_CWND_GAIN 3
/* Gain growth 2 per min_rtt, re-entered Gain 1.25: log2 of each in 2^16 (65536, 21098). */
#define LOG2_GAIN_GROWTH_W 65536ULL
#define LOG2_PROBE_GROWTH_W 21098ULL
/* The ramp's exponent is capped at 60 periods (the simulator's periods.min(60.0)). */
#define RAMP_MAX_PERIODS 60
/* Plateau: growth below 25 % (5/4) for 3 rounds. */
#define FULL_BW_THRESH_NUM 5
#define FULL_BW_THRESH_DEN 4
#define FULL_BW_CNT 3
/* Gain-state max-bw filter window, rounds. */
#define BW_WIN_ROUNDS 10
/* Gain exits when q_meas_f > 1 x Q*, filtered with T_f <= 2 ms (exit lag costs C x lag). */
#define GAIN_TF_MAX_NS (2 * NSEC_PER_MSEC)
/* Drain ends when q_pred_f <= 2 x Q*. */
#define DRAIN_EXIT_Q 2
/* Q* = BDP / 16 within [30 KB, 150 KB]. */
#define Q_TARGET_BDP_DIV 16
#define Q_TARGET_MIN 30000ULL
#define Q_TARGET_MAX 150000ULL
/* Rate command x in [c - c/2, c + c/4]. */
#define DOWN_MAX_DIV 2
#define UP_MAX_DIV 4
/* T_i = 4 T_q; |I| <= 2 Q*; integrate only while |q_pred_f - q_meas_f| <= Q* / 4. */
#define TI_OVER_TQ 4
#define I_BAND 2
#define SETTLED_DIV 4
/* A queue sample above Q* / 2 means the bottleneck was busy (its ACK rate is the capacity). */
#define BUSY_DIV 2
/* T_q = max(srtt, 1 ms); T_f = clamp(srtt / 8, 50 us, 10 ms). */
#define TQ_MIN_NS NSEC_PER_MSEC
#define TF_DIV 8
#define TF_MIN_NS (50 * NSEC_PER_USEC)
#define TF_MAX_NS (10 * NSEC_PER_MSEC)
/* Re-enter Gain after 3 rounds with the measured queue below Q* / 4, not in Control's first 4. */
#define LOW_Q_ROUNDS 3
#define LOW_Q_DIV 4
#define CONTROL_SETTLE_ROUNDS 4
/* min_rtt window before a refresh; the refresh drains the own queue at 0.75 c. */
#define MIN_RTT_WIN_NS (10 * NSEC_PER_SEC)
#define REFRESH_DRAIN_NUM 3
#define REFRESH_DRAIN_DEN 4
/* cwnd floor, packets; offload bursts the cwnd leaves room for. */
#define CWND_MIN 4
#define QUANTA_IN_FLIGHT 3
/* crate::tso_autosize: pacing_rate >> 10 bytes, <= 64 KB, >= 2 segments. */
#define PACING_SHIFT 10
#define GSO_LEGACY_MAX_SIZE 65536ULL
#define MIN_TSO_SEGS 2
/* Stand-in for rs.tx_in_flight (header, item 4): snapshots, about 256 per window. */
#define SEND_RING 512
#define SEND_RING_PER_WINDOW 256
#define SEND_RING_SEARCH_STEPS 10 /* log2(SEND_RING) + 1 */

enum bql_phase { BQL_GAIN = 0, BQL_DRAIN = 1, BQL_CONTROL = 2 };
enum bql_refresh { REFRESH_OFF = 0, REFRESH_DRAINING = 1, REFRESH_HOLDING = 2 };

struct win_sample {
	u64 t;
	u64 v;
};

struct send_snap {
	u32 delivered;
	u32 segs_out;
};

struct bql {
	u32 phase; /* offset 0: the phase code the emu runner reads */
	u32 refresh;
	u64 min_rtt_ns;
	u64 min_rtt_stamp_ns;
	struct win_sample bw_max[3]; /* Nichols' windowed max (lib/win_minmax.c), round clock */
	u64 c;                       /* bytes/s, 0 = none yet */
	u64 round_count;
	u64 full_bw;
	u64 ramp_x0;     /* bytes/s */
	u64 ramp_t0_ns;
	u64 ramp_log2_w; /* log2(growth) in 2^16; 0 = no ramp yet */
	s64 q_meas_f;    /* bytes << Q_SHIFT */
	s64 q_pred_f;
	s64 q_meas_raw;  /* < 0: no sample on this ACK */
	s64 integ;
	s64 round_max_q;
	u64 last_update_ns;
	u64 rate;        /* the current rate command, bytes/s */
	u64 refresh_min_ns;
	u32 refresh_round_end_delivered;
	u32 next_round_delivered;
	u32 full_bw_cnt;
	u32 control_rounds;
	u32 low_q_rounds;
	u32 ring_count;
	u32 ring_head;
	u32 ring_last_delivered;
	u8 round_start;
	u8 have_q;
	struct send_snap ring[SEND_RING];
};

BBRLAB_SK_STATE(struct bql, bql_sk_state); /* "Phases" (bbrlab_tcp_ca.h): phase at offset 0 */

/* What the simulator's RateSample gives, from mainline's rate_sample (header, items 4-6). */
struct ack_info {
	u64 now_ns;
	s64 rtt_ns;          /* < 0: no sample */
	s64 interval_ns;
	s64 rcv_interval_ns; /* ack_us of tcp_rate_gen (item 5) */
	s64 delivered;
	s64 sent_since_p;    /* < 0: unknown (item 4) */
	u32 prior_delivered;
	u32 acked_sacked;
	u8 has_prior;
	u8 app_limited;
};

/* ---- Helpers ------------------------------------------------------------------------------ */

static __always_inline s64 smin(s64 a, s64 b) { return a < b ? a : b; }
static __always_inline s64 smax(s64 a, s64 b) { return a > b ? a : b; }
static __always_inline s64 sabs(s64 a) { return a < 0 ? -a : a; }

/* a / b truncated toward zero, b > 0 (header, item 3). */
static __always_inline s64 sdiv(s64 a, u64 b)
{
	return a < 0 ? -(s64)((u64)(-a) / b) : (s64)((u64)a / b);
}

static __always_inline u64 srtt_ns_of(const struct tcp_sock *tp)
{
	return (u64)(tp->srtt_us >> 3) * NSEC_PER_USEC;
}

static __always_inline u64 t_f_ns(const struct tcp_sock *tp)
{
	u64 t = srtt_ns_of(tp) / TF_DIV;

	return min64(max64(t, TF_MIN_NS), TF_MAX_NS);
}

static __always_inline u64 t_q_ns(const struct tcp_sock *tp)
{
	return max64(srtt_ns_of(tp), TQ_MIN_NS);
}

/* The EWMA weight min(dt / t_f, 1) in 2^16. */
static __always_inline u64 ewma_weight(u64 dt_ns, u64 t_f)
{
	return dt_ns >= t_f ? W_ONE : dt_ns * W_ONE / t_f;
}

/* x += w (target - x), signed, w in 2^16. */
static __always_inline s64 ewma_step(s64 x, s64 target, u64 w)
{
	return x + sdiv((target - x) * (s64)w, W_ONE);
}

/* 2^(e / 2^16) for 0 <= e, in 2^16 units times 2^(e >> 16) (header, item 2); the caller caps
 * the integer part. Returns 2^frac in 2^16 and stores the integer part in *n. */
static __always_inline u64 exp2_w(u64 e, u32 *n)
{
	u64 f = e & (W_ONE - 1), r;

	*n = (u32)(e >> W_SHIFT);
	/* 2^f = 1 + f (c1 + f (c2 + f (c3 + f c4))), least squares on [0, 1). */
	r = 884;
	r = 3413 + ((r * f) >> W_SHIFT);
	r = 15821 + ((r * f) >> W_SHIFT);
	r = 45418 + ((r * f) >> W_SHIFT);
	return W_ONE + ((r * f) >> W_SHIFT);
}

/* ---- Windowed max (crate::filter, Nichols' lib/win_minmax.c) ------------------------------- */

static __always_inline void wmax_reset(struct bql *q, u64 t, u64 v)
{
	for (int i = 0; i < 3; i++) {
		q->bw_max[i].t = t;
		q->bw_max[i].v = v;
	}
}

static __always_inline void wmax_update(struct bql *q, u64 win, u64 t, u64 v)
{
	struct win_sample *s = q->bw_max;
	u64 dt;

	if (v >= s[0].v || (t > s[2].t ? t - s[2].t : 0) > win) {
		wmax_reset(q, t, v);
		return;
	}
	if (v >= s[1].v) {
		s[1].t = t; s[1].v = v;
		s[2].t = t; s[2].v = v;
	} else if (v >= s[2].v) {
		s[2].t = t; s[2].v = v;
	}
	dt = t > s[0].t ? t - s[0].t : 0;
	if (dt > win) {
		s[0] = s[1];
		s[1] = s[2];
		s[2].t = t; s[2].v = v;
		if ((t > s[0].t ? t - s[0].t : 0) > win) {
			s[0] = s[1];
			s[1] = s[2];
			s[2].t = t; s[2].v = v;
		}
	} else if (s[1].t == s[0].t && dt > win / 4) {
		s[1].t = t; s[1].v = v;
		s[2].t = t; s[2].v = v;
	} else if (s[2].t == s[1].t && dt > win / 2) {
		s[2].t = t; s[2].v = v;
	}
}

/* ---- Model accessors ---------------------------------------------------------------------- */

/* The bottleneck-rate estimate in use, bytes/s. */
static __always_inline u64 bw_of(const struct bql *q)
{
	return q->phase == BQL_GAIN ? q->bw_max[0].v : q->c;
}

/* Q*, bytes. */
static __always_inline u64 q_target(const struct bql *q)
{
	u64 bw = bw_of(q), t;

	if (q->min_rtt_ns == NO_RTT || !bw)
		return Q_TARGET_MIN;
	t = bw * q->min_rtt_ns / NSEC_PER_SEC / Q_TARGET_BDP_DIV;
	return min64(max64(t, Q_TARGET_MIN), Q_TARGET_MAX);
}

/* bw x min_rtt, bytes (0 without a model). */
static __always_inline u64 bdp_bytes(const struct bql *q, u64 bw)
{
	if (q->min_rtt_ns == NO_RTT)
		return 0;
	return bw * q->min_rtt_ns / NSEC_PER_SEC;
}

static __always_inline void set_pacing(struct sock *sk, struct bql *q, u64 rate)
{
	q->rate = rate;
	sk->sk_pacing_rate = min64(max64(rate, 1), (u64)sk->sk_max_pacing_rate);
}

/* The initial rate: 2.77 x cwnd / srtt (1 ms before any RTT sample), as BBR. */
static __always_inline u64 initial_rate(const struct tcp_sock *tp)
{
	u64 rtt = srtt_ns_of(tp) ? srtt_ns_of(tp) : NSEC_PER_MSEC;

	return (u64)tp->snd_cwnd * tp->mss_cache * NSEC_PER_SEC / rtt * GAIN_PACING_NUM / GAIN_PACING_DEN;
}

/* ---- Estimators (crates/cc/src/bql/estimators.rs) ---------------------------------------- */

static __always_inline void update_round(struct tcp_sock *tp, struct bql *q, const struct ack_info *a)
{
	q->round_start = 0;
	if (a->has_prior && seq_after_eq(a->prior_delivered, q->next_round_delivered)) {
		q->next_round_delivered = tp->delivered;
		q->round_count++;
		q->round_start = 1;
	}
}

static __always_inline void update_min_rtt(struct tcp_sock *tp, struct bql *q, u64 now, u64 rtt)
{
	if (rtt < q->min_rtt_ns) {
		q->min_rtt_ns = rtt;
		q->min_rtt_stamp_ns = now;
	} else if (q->c) {
		u64 slack = 2ULL * tp->mss_cache * NSEC_PER_SEC / q->c;

		if (rtt <= q->min_rtt_ns + slack)
			q->min_rtt_stamp_ns = now;
	}
	if (q->refresh != REFRESH_OFF)
		q->refresh_min_ns = min64(q->refresh_min_ns, rtt);
}

static __always_inline void update_rates(struct tcp_sock *tp, struct bql *q, const struct ack_info *a, u64 dt)
{
	u64 bytes, bw, ack_rate;

	if (a->delivered <= 0 || a->interval_ns <= 0 || q->min_rtt_ns == NO_RTT)
		return;
	if ((u64)a->interval_ns < q->min_rtt_ns)
		return; /* ACK compression or retransmissions after a spurious RTO */
	bytes = (u64)a->delivered * tp->mss_cache;
	bw = bytes * NSEC_PER_SEC / (u64)a->interval_ns;
	if (!a->app_limited || bw >= q->bw_max[0].v)
		wmax_update(q, BW_WIN_ROUNDS, q->round_count, bw);
	if (a->rcv_interval_ns <= 0 || (u64)a->rcv_interval_ns < q->min_rtt_ns / 4 * 3)
		return;
	ack_rate = bytes * NSEC_PER_SEC / (u64)a->rcv_interval_ns;
	if (!q->c) {
		q->c = ack_rate;
		return;
	}
	/* An ACK rate is the capacity only while the queue is busy (or it is a higher rate). */
	if (ack_rate < q->c &&
	    (a->app_limited || q->q_meas_raw < (s64)(q_target(q) << Q_SHIFT) / BUSY_DIV))
		return;
	q->c = (u64)smax(ewma_step((s64)q->c, (s64)ack_rate, ewma_weight(dt, t_f_ns(tp))), 0);
}

static __always_inline void update_queue(struct tcp_sock *tp, struct bql *q, const struct ack_info *a, u64 dt)
{
	u64 rate, dq, t_f, w;
	s64 q_meas, q_pred;

	q->q_meas_raw = -1;
	if (a->rtt_ns < 0 || q->min_rtt_ns == NO_RTT)
		return;
	rate = q->phase == BQL_GAIN ? max64(q->bw_max[0].v, q->c) : q->c;
	if (!rate)
		return;
	dq = (u64)a->rtt_ns > q->min_rtt_ns ? (u64)a->rtt_ns - q->min_rtt_ns : 0;
	q_meas = (s64)(dq * rate / NS_PER_Q);
	q->q_meas_raw = q_meas;
	q_pred = q_meas;
	if (a->has_prior && a->delivered > 0 && a->sent_since_p >= 0)
		q_pred = q_meas + a->sent_since_p * tp->mss_cache * Q_ONE - (s64)((u64)a->rtt_ns * rate / NS_PER_Q);
	if (!q->have_q) {
		q->q_meas_f = q_meas;
		q->q_pred_f = q_pred;
		q->have_q = 1;
		return;
	}
	t_f = t_f_ns(tp);
	if (q->phase == BQL_GAIN)
		t_f = min64(t_f, GAIN_TF_MAX_NS);
	w = ewma_weight(dt, t_f);
	q->q_meas_f = ewma_step(q->q_meas_f, q_meas, w);
	q->q_pred_f = ewma_step(q->q_pred_f, q_pred, w);
}

/* ---- States (crates/cc/src/bql/states.rs) ------------------------------------------------- */

static __always_inline void enter_gain_probe(struct bql *q, u64 now)
{
	q->phase = BQL_GAIN;
	q->full_bw = 0;
	q->full_bw_cnt = 0;
	q->refresh = REFRESH_OFF;
	q->ramp_x0 = max64(q->rate, q->c);
	q->ramp_t0_ns = now;
	q->ramp_log2_w = LOG2_PROBE_GROWTH_W;
	wmax_reset(q, q->round_count, q->c);
}

static __always_inline void enter_drain(struct bql *q)
{
	q->phase = BQL_DRAIN;
	q->c = q->c ? max64(q->c, q->bw_max[0].v) : q->bw_max[0].v;
	q->ramp_log2_w = 0;
}

static __always_inline void enter_control(struct bql *q)
{
	q->phase = BQL_CONTROL;
	q->control_rounds = 0;
	q->low_q_rounds = 0;
	q->round_max_q = 0;
}

static __always_inline void gain(struct sock *sk, struct bql *q, const struct ack_info *a)
{
	struct tcp_sock *tp = tcp_sk(sk);
	u64 bw_max = q->bw_max[0].v, initial, rate, cap, ramp, periods_e, max_e, frac;
	bool ramping = q->ramp_log2_w != 0;
	u32 n;

	if (q->round_start && !a->app_limited && bw_max) {
		if (bw_max * FULL_BW_THRESH_DEN >= q->full_bw * FULL_BW_THRESH_NUM) {
			q->full_bw = bw_max;
			q->full_bw_cnt = 0;
		} else {
			q->full_bw_cnt++;
		}
	}
	if ((q->have_q && q->q_meas_f > (s64)(q_target(q) << Q_SHIFT)) || q->full_bw_cnt >= FULL_BW_CNT) {
		enter_drain(q);
		return;
	}
	initial = initial_rate(tp);
	if (!ramping) {
		/* The ramp starts at the first RTT sample, from the initial rate. */
		if (srtt_ns_of(tp) && q->min_rtt_ns != NO_RTT) {
			q->ramp_x0 = initial;
			q->ramp_t0_ns = a->now_ns;
			q->ramp_log2_w = LOG2_GAIN_GROWTH_W;
		}
		rate = initial;
	} else {
		/* x0 x growth^periods, periods = (now - t0) / min_rtt <= 60 (header, item 2). */
		u64 el = a->now_ns > q->ramp_t0_ns ? a->now_ns - q->ramp_t0_ns : 0;

		periods_e = el * q->ramp_log2_w / max64(q->min_rtt_ns, 1);
		max_e = RAMP_MAX_PERIODS * q->ramp_log2_w;
		frac = exp2_w(min64(periods_e, max_e), &n);
		/* Never more than 2.77 x bw_max (if the delay signal fails to come, the plateau rule
		 * ends Gain), nor less than x0. */
		cap = max64(bw_max * GAIN_PACING_NUM / GAIN_PACING_DEN, q->ramp_x0);
		ramp = (q->ramp_x0 >> 8) * frac >> (W_SHIFT - 8);
		if (n >= 48 || ramp > (cap >> n))
			ramp = cap;
		else
			ramp <<= n;
		rate = min64(ramp, cap);
		rate = max64(rate, q->rate); /* never lower the rate once the ramp runs */
	}
	set_pacing(sk, q, rate);
}

static __always_inline void transitions(struct tcp_sock *tp, struct bql *q, const struct ack_info *a)
{
	s64 qt = (s64)(q_target(q) << Q_SHIFT);

	if (q->phase == BQL_DRAIN) {
		if (q->refresh == REFRESH_HOLDING) {
			if (a->has_prior && seq_after_eq(a->prior_delivered, q->refresh_round_end_delivered)) {
				/* A packet sent after the hold began crossed an empty queue: done. */
				if (q->refresh_min_ns != NO_RTT)
					q->min_rtt_ns = q->refresh_min_ns;
				q->min_rtt_stamp_ns = a->now_ns;
				q->refresh = REFRESH_OFF;
				enter_control(q);
			}
		} else if (q->refresh == REFRESH_OFF && q->q_pred_f <= DRAIN_EXIT_Q * qt) {
			enter_control(q);
		}
	} else if (q->phase == BQL_CONTROL) {
		if (q->round_start) {
			if (q->control_rounds < 0xFFFFFFFF)
				q->control_rounds++;
			if (q->round_max_q < qt / LOW_Q_DIV && !a->app_limited)
				q->low_q_rounds++;
			else
				q->low_q_rounds = 0;
			q->round_max_q = 0;
		}
		q->round_max_q = smax(q->round_max_q, q->q_meas_f);
		if (q->control_rounds >= CONTROL_SETTLE_ROUNDS && q->low_q_rounds >= LOW_Q_ROUNDS) {
			enter_gain_probe(q, a->now_ns);
			return;
		}
		if (a->now_ns > q->min_rtt_stamp_ns && a->now_ns - q->min_rtt_stamp_ns > MIN_RTT_WIN_NS &&
		    !a->app_limited) {
			q->phase = BQL_DRAIN;
			q->refresh = REFRESH_DRAINING;
			q->refresh_min_ns = NO_RTT;
		}
	}
}

/* ---- The controller (crates/cc/src/bql/control.rs) --------------------------------------- */

static __always_inline void control(struct sock *sk, struct bql *q, u64 dt)
{
	struct tcp_sock *tp = tcp_sk(sk);
	u64 c = q->c, t_q;
	s64 qt, e_p, e_m, lo, hi, u_unclamped, u;

	if (!c)
		return;
	if (q->refresh == REFRESH_DRAINING) {
		if (q->q_pred_f <= 0) {
			q->refresh = REFRESH_HOLDING;
			q->refresh_round_end_delivered = tp->delivered;
			set_pacing(sk, q, c);
		} else {
			set_pacing(sk, q, c * REFRESH_DRAIN_NUM / REFRESH_DRAIN_DEN);
		}
		return;
	}
	if (q->refresh == REFRESH_HOLDING) {
		set_pacing(sk, q, c);
		return;
	}
	qt = (s64)(q_target(q) << Q_SHIFT);
	t_q = t_q_ns(tp);
	e_p = qt - q->q_pred_f;
	e_m = qt - q->q_meas_f;
	lo = -(s64)(c / DOWN_MAX_DIV);
	hi = (s64)(c / UP_MAX_DIV);
	/* (bytes << 8) x (1e9 >> 8) / ns = bytes/s. */
	u_unclamped = sdiv((e_p + q->integ) * (s64)NS_PER_Q, t_q);
	if (q->phase == BQL_CONTROL) {
		bool pushing_hi = u_unclamped >= hi && e_m > 0;
		bool pushing_lo = u_unclamped <= lo && e_m < 0;
		bool settled = sabs(q->q_pred_f - q->q_meas_f) <= qt / SETTLED_DIV;

		/* Conditional integration (anti-windup); dt capped at 10 s (|I| <= 2 Q* anyway). */
		if (sabs(e_m) <= qt && settled && !pushing_hi && !pushing_lo)
			q->integ += sdiv(e_m * (s64)min64(dt, 10 * NSEC_PER_SEC), TI_OVER_TQ * t_q);
		q->integ = smin(smax(q->integ, -I_BAND * qt), I_BAND * qt);
	}
	u = sdiv((e_p + q->integ) * (s64)NS_PER_Q, t_q);
	u = smin(smax(u, lo), hi);
	set_pacing(sk, q, (u64)smax((s64)c + u, 0));
}

/* The offload burst the stack sizes for our pacing rate (header, item 7). */
static __always_inline u32 burst_segs(struct sock *sk)
{
	u64 bytes = min64((u64)sk->sk_pacing_rate >> PACING_SHIFT, GSO_LEGACY_MAX_SIZE);
	u32 mss = tcp_sk(sk)->mss_cache ? tcp_sk(sk)->mss_cache : 1;
	u32 segs = (u32)(bytes / mss);

	return segs > MIN_TSO_SEGS ? segs : MIN_TSO_SEGS;
}

/* cwnd: a safety cap reached by growth, cut at once. */
static __always_inline void set_cwnd(struct sock *sk, struct bql *q, u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	u32 mss = tp->mss_cache ? tp->mss_cache : 1;
	u64 burst = QUANTA_IN_FLIGHT * burst_segs(sk), target, growth, cwnd;

	if (q->phase == BQL_GAIN) {
		u64 bdp = bdp_bytes(q, q->bw_max[0].v);

		if (!bdp) {
			target = 0xFFFFFFFFULL; /* no model yet: slow start */
			growth = acked;
		} else {
			target = (GAIN_CWND_GAIN * bdp + mss - 1) / mss + burst;
			growth = 2ULL * acked;
		}
	} else {
		u64 bytes = 2 * bdp_bytes(q, q->c) + 2 * q_target(q);

		target = (bytes + mss - 1) / mss + burst;
		growth = acked;
	}
	cwnd = min64((u64)tp->snd_cwnd + growth, target);
	cwnd = max64(cwnd, CWND_MIN);
	cwnd = min64(cwnd, tp->snd_cwnd_clamp);
	tp->snd_cwnd = (u32)max64(cwnd, 1);
}

/* ---- The send ring (header, item 4) ------------------------------------------------------- */

/* Packets sent after the one sent when tp->delivered was `prior_delivered`; -1 if unknown. */
static __always_inline s64 sent_since(const struct bql *q, const struct tcp_sock *tp, u32 prior_delivered)
{
	u32 lo = 0, hi = q->ring_count, base, idx, best = 0xFFFFFFFF;

	if (!q->ring_count)
		return -1;
	base = q->ring_head - q->ring_count; /* oldest, modulo SEND_RING */
	/* Newest snapshot with delivered <= prior_delivered: binary search over the ring's age. */
	for (int i = 0; i < SEND_RING_SEARCH_STEPS && lo < hi; i++) {
		u32 mid = lo + (hi - lo) / 2;

		idx = (base + mid) & (SEND_RING - 1);
		if (seq_after_eq(prior_delivered, q->ring[idx].delivered)) {
			best = idx;
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	if (best == 0xFFFFFFFF)
		return -1; /* older than the ring */
	best &= SEND_RING - 1;
	return (s64)(s32)(tp->data_segs_out - q->ring[best].segs_out);
}

static __always_inline void record_send_snapshot(struct bql *q, const struct tcp_sock *tp)
{
	u32 step = tp->snd_cwnd / SEND_RING_PER_WINDOW, idx;

	if (step < 1)
		step = 1;
	if (q->ring_count && tp->delivered - q->ring_last_delivered < step)
		return;
	idx = q->ring_head & (SEND_RING - 1);
	q->ring[idx].delivered = tp->delivered;
	q->ring[idx].segs_out = tp->data_segs_out;
	q->ring_head = idx + 1;
	if (q->ring_count < SEND_RING)
		q->ring_count++;
	q->ring_last_delivered = tp->delivered;
}

/* ---- struct_ops hooks --------------------------------------------------------------------- */

SEC("struct_ops")
void BPF_PROG(bql_init, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bql *q = new_state_of(sk);
	u32 min_rtt_us = tp->rtt_min.s[0].v;

	if (!q)
		return;
	/* Everything but the ring (ring_count = 0 empties it): a re-init starts afresh. */
	__builtin_memset(q, 0, __builtin_offsetof(struct bql, ring));
	q->phase = BQL_GAIN;
	q->min_rtt_ns = min_rtt_us == 0xFFFFFFFF ? NO_RTT : (u64)min_rtt_us * NSEC_PER_USEC;
	q->min_rtt_stamp_ns = tp->tcp_clock_cache;
	q->next_round_delivered = tp->delivered;
	q->last_update_ns = tp->tcp_clock_cache;
	q->q_meas_raw = -1;
	q->refresh_min_ns = NO_RTT;
	wmax_reset(q, 0, 0);
	tp->snd_ssthresh = TCP_INFINITE_SSTHRESH;
	set_pacing(sk, q, initial_rate(tp));
	/* Let the kernel's internal pacing enforce sk_pacing_rate (no fq qdisc needed). */
	sk->sk_pacing_status = SK_PACING_NEEDED;
}

SEC("struct_ops")
void BPF_PROG(bql_cong_control, struct sock *sk, u32 ack, int flag, const struct rate_sample *rs)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bql *q = state_of(sk);
	struct ack_info a = {};
	u64 dt;

	if (!q)
		return;
	a.now_ns = tp->tcp_clock_cache;
	a.rtt_ns = rs->rtt_us >= 0 ? rs->rtt_us * (s64)NSEC_PER_USEC : -1;
	a.interval_ns = rs->interval_us > 0 ? rs->interval_us * (s64)NSEC_PER_USEC : -1;
	a.has_prior = rs->prior_mstamp != 0;
	a.rcv_interval_ns = a.has_prior && tp->tcp_mstamp > rs->prior_mstamp
		? (s64)(tp->tcp_mstamp - rs->prior_mstamp) * (s64)NSEC_PER_USEC : -1;
	a.delivered = rs->delivered;
	a.prior_delivered = rs->prior_delivered;
	a.acked_sacked = rs->acked_sacked;
	a.app_limited = rs->is_app_limited;
	a.sent_since_p = a.has_prior ? sent_since(q, tp, rs->prior_delivered) : -1;

	dt = a.now_ns > q->last_update_ns ? a.now_ns - q->last_update_ns : 0;
	q->last_update_ns = a.now_ns;
	update_round(tp, q, &a);
	if (a.rtt_ns >= 0)
		update_min_rtt(tp, q, a.now_ns, (u64)a.rtt_ns);
	update_queue(tp, q, &a, dt);
	update_rates(tp, q, &a, dt);
	transitions(tp, q, &a);
	if (q->phase == BQL_GAIN)
		gain(sk, q, &a);
	else
		control(sk, q, dt);
	set_cwnd(sk, q, a.acked_sacked);
	record_send_snapshot(q, tp);
}

/* Loss is not a congestion signal: ssthresh stays. */
SEC("struct_ops")
u32 BPF_PROG(bql_ssthresh, struct sock *sk)
{
	return tcp_sk(sk)->snd_ssthresh;
}

SEC("struct_ops")
u32 BPF_PROG(bql_undo_cwnd, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);

	return tp->snd_cwnd > tp->prior_cwnd ? tp->snd_cwnd : tp->prior_cwnd;
}

/* Legacy section name on purpose (libbpf 1.1); the loader registers it through a link. */
SEC(".struct_ops")
struct tcp_congestion_ops bql = {
	.init = (void *)bql_init,
	.cong_control = (void *)bql_cong_control,
	.ssthresh = (void *)bql_ssthresh,
	.undo_cwnd = (void *)bql_undo_cwnd,
	.name = BBRLAB_CA_NAME,
};
