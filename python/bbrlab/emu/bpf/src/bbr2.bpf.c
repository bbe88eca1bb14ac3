// SPDX-License-Identifier: GPL-2.0
/*
 * bbr2: Google's BBRv2 "v2alpha" (github.com/google/bbr, branch v2alpha, net/ipv4/tcp_bbr2.c)
 * as a BPF struct_ops TCP congestion control for a stock (mainline) kernel, with the behaviour
 * of bbrlab's simulator algorithm of the same name (crates/cc/src/bbr/v2 with
 * Variant::V2alpha, and the family modules in crates/cc/src/bbr/).
 *
 * Sources (facts only, the code is bbrlab's): the simulator files above, which follow
 * tcp_bbr2.c; mainline include/net/tcp.h, net/ipv4/tcp_input.c, tcp_rate.c (what a struct_ops
 * controller is given). The layout and the mainline stand-ins follow bbr3_linux.bpf.c.
 *
 * Model (per ACK, in cong_control; the simulator's v2/mod.rs header has the long form):
 *
 *   max_bw          = max delivery rate over the last 1-2 ProbeBW cycles (2 slots, advanced at
 *                     the first round start after a probe ends, never onto an empty slot)
 *   min_rtt         = min RTT over 10 s, fed by a 5 s probe_rtt_min sub-window (schedules
 *                     ProbeRTT; a sample equal to the minimum refreshes it, v2alpha's <=)
 *   inflight_hi     = loss/ECN-bounded max inflight, learned while probing (long-term)
 *   bw_lo, inflight_lo = short-term bounds, cut by 0.7 per lossy round when not probing,
 *                     inflight_lo also by (1 - alpha/3) per round with CE (ECN-eligible flows)
 *   bw              = min(max_bw, bw_lo)                  (v2alpha has no separate bw_hi)
 *   pacing_rate     = pacing_gain * bw * 0.99             (written to sk->sk_pacing_rate)
 *   cwnd            = min(cwnd_gain * bw * min_rtt + extra_acked + offload budget,
 *                         state cap from inflight_hi (-15 % headroom in CRUISE/ProbeRTT), inflight_lo)
 *
 *   Startup (pacing and cwnd gain 2.885) --(bw plateau: 3 rounds < +25 %, or a Recovery round
 *              with >= 8 loss events and loss > 2 %, or 2 rounds with CE >= 50 %)--> Drain
 *   Drain (pacing 1/2.885) --(inflight at next departure <= BDP)--> ProbeBW_DOWN
 *   DOWN (0.75) --(inflight <= min(BDP, inflight_hi - headroom))--> CRUISE
 *   DOWN/CRUISE --(2 s + U[0, 1 s) since DOWN, or min(target_inflight, 63) rounds)--> REFILL
 *   REFILL (1 round, short-term bounds reset) --> UP (1.25, inflight_hi grows 1, 2, 4 ... /round)
 *   UP --(inflight >= 1.25 BDP after min_rtt | reached the previous too-high inflight_hi |
 *         a sample with loss > 2 % or CE >= 50 %: inflight_hi cut)--> DOWN
 *   any --(5 s without a sample <= probe_rtt_min)--> ProbeRTT (cwnd = max(BDP/2, 4) for 200 ms
 *              and a round) --> CRUISE, or Startup if the pipe was never full
 *
 * Units follow Linux: bandwidth in packets/us << 24 (BW_SCALE), gains and fractions in 2^8
 * (BBR_UNIT), time in us (tp->tcp_mstamp); the simulator keeps time in ns and gains in 2^16 with
 * Linux's 2^8 values shifted left by 8, so every ratio below is bit-for-bit the simulator's. No
 * floating point; 64-bit unsigned division only; all loops are bounded; random numbers come from
 * bpf_get_prandom_u32() (the simulator uses a seeded SplitMix64: random in both, not the same
 * draws).
 *
 * State: the flow's state does not fit in icsk_ca_priv (104 bytes), so it lives in a
 * BPF_MAP_TYPE_SK_STORAGE map (`bbr2_sk_state`), created in init and freed with the socket. If
 * the kernel cannot allocate it, every hook returns without acting (the socket keeps the
 * kernel's initial cwnd and its default pacing: degraded but safe).
 *
 * WHAT BPF ON MAINLINE CANNOT DO THAT v2alpha (OR THE SIMULATOR) DOES, AND THE STAND-IN
 *
 * 1. rs->tx_in_flight (v2alpha's per-skb snapshot of the data in flight when the sampled packet
 *    was sent; the simulator's transport keeps the same). Mainline's struct rate_sample lacks it.
 *    Stand-in (as bbr3_linux.bpf.c, item 1): a ring of TX_RING snapshots {tp->delivered,
 *    tp->lost, in flight} taken on ACKs about every 1/32 of a window; the sampled packet's
 *    tx_in_flight is the in-flight of the newest snapshot at or before rs->prior_delivered
 *    (rs->prior_in_flight when the ring has none). Known to about 1/32 of a window: it is the
 *    denominator of the 2 % loss test and the level inflight_hi is raised or cut to.
 * 2. rs->lost (v2alpha: tp->lost minus the sampled skb's snapshot of it). Stand-in: tp->lost now
 *    minus the same snapshot's lost (overcounts by at most the losses of 1/32 of a window).
 * 3. The loss-round bookkeeping the simulator does for an ACK with rs.losses > 0 (v2alpha's
 *    bbr2_skb_marked_lost; neither side ports its per-skb inflight_hi refinement). Here: an ACK
 *    whose processing grew tp->lost (which, unlike rs->losses, also catches an RTO's marking,
 *    seen on the first ACK after it).
 * 4. rs->is_ece: as the simulator, "this ACK raised tp->delivered_ce". ECN is on when the flow
 *    negotiated it (tp->ecn_flags & TCP_ECN_OK), as in the simulator (v2alpha: a module
 *    parameter, off by default); it acts only at min_rtt <= 5 ms.
 * 5. Fast path (v2alpha bbr2_run_fast_path, on in the simulator): not ported. It skips model
 *    work on app-limited ACKs below max_bw while cwnd sits at its target, i.e. it saves CPU and
 *    changes nothing the flow does on a bulk transfer; here every ACK runs the full update.
 * 6. .tso_segs (v2alpha sizes each offload burst, bbr_tso_segs_generic). Mainline has only
 *    .min_tso_segs; its tcp_tso_autosize computes pacing_rate >> sk_pacing_shift plus the
 *    64 KB >> (min_rtt_us >> 9) allowance (tcp_tso_rtt_log = 9), v2alpha's goal. This port
 *    returns bbr_min_tso_segs (1 below 1.2 Mbit/s, else 2) and uses the same goal for its
 *    offload budget (tso_segs_goal), as the simulator does.
 * 7. Time: Linux keeps min_rtt/ProbeRTT stamps in jiffies, this port in us, the simulator in ns;
 *    sub-millisecond differences on windows of 200 ms .. 10 s.
 *
 * Diagnostics: the global `bbr2_last_ack` (the .bss map: `bpftool map dump`) holds the model of
 * the flow that got the latest ACK and counts how Startup and each bandwidth probe ended.
 *
 * What the loader gets: one struct_ops map `bbr2` (bbrlab_bbr_ops.h), one sk-storage map
 * `bbr2_sk_state` whose value starts with the flow's phase code (the registry's bbr2 table:
 * 0 startup, 1 drain, 2 probe_down, 3 probe_cruise, 4 probe_refill, 5 probe_up, 6 probe_rtt;
 * "Phases" in bbrlab_tcp_ca.h), and the TCP name BBRLAB_CA_NAME.
 */
#include "bbrlab_tcp_ca.h"

char _license[] SEC("license") = "GPL";

/* Linux tcp_bbr2.c's fixed point: BW_SCALE/BW_UNIT, BBR_SCALE/BBR_UNIT, INF_PKTS/INF_BW. */
#include "bbrlab_bbr_fixed_point.h"

/* ---- Gains and thresholds (v2alpha, in 2^8; those v3 shares in bbrlab_bbr_model.h) ------- */

/* bbr_high_gain 2/ln 2 (+1 to round up): Startup's pacing and cwnd gain (v2alpha keeps the
 * cwnd gain at 2.885; v3 lowered it to 2), and Drain's cwnd gain. */
#define HIGH_GAIN (BBR_UNIT * 2885 / 1000 + 1)
#define STARTUP_PACING_GAIN HIGH_GAIN
/* ProbeBW_DOWN 3/4: drains what UP queued. */
#define DOWN_PACING_GAIN (BBR_UNIT * 3 / 4)
/* UP also ends once inflight reaches 1.25 BDP (bbr_bw_probe_pif_gain). */
#define BW_PROBE_PIF_GAIN (BBR_UNIT * 5 / 4)
/* ProbeBW cwnd gain 2: room for delayed/stretched ACKs while pacing at bw. */
#define CWND_GAIN (BBR_UNIT * 2)
/* bbr_beta 0.3: short-term bounds keep 1 - 0.3 (180/256) per lossy round, like CUBIC's 0.7. */
#define BETA (BBR_UNIT * 30 / 100)
/* Startup's loss exit: 8 loss events in a Recovery round (v2alpha bbr_full_loss_cnt). */
#define FULL_LOSS_CNT 8
/* Reno-coexistence probe interval: 1.0 x target inflight rounds, at most 63. */
#define BW_PROBE_RENO_GAIN BBR_UNIT

/* v2alpha's send quantum is at least bbr_min_tso_segs (1 segment below 1.2 Mbit/s, else 2). */
#define SEND_QUANTUM_MIN_SEGS(pacing_rate_bytes_per_s) min_tso_segs(pacing_rate_bytes_per_s)

/* Linux keeps rounds_since_probe in 8 bits. */
#define ROUNDS_SINCE_PROBE_MAX 0xFF

/* ---- Mainline stand-in for rs->tx_in_flight / rs->lost (header, items 1-2) ---------------- */

/* 64 snapshots at about 32 per window cover two rounds. Finer than bbr3_linux's 16 at 8: at
 * 100 Mbit/s x 40 ms with 1.5 % random loss, 4 kernel runs of 15 s averaged 64.4 Mbit/s against
 * 60.2 with 16 at 8 (the simulator: 76.7), the per-sample loss rate being less overcounted. */
#define TX_RING 64
#define TX_RING_PER_WINDOW 32
#include "bbrlab_tx_ring.h"

/* The phase codes of the registry's bbr2 table (mode and ProbeBW cycle phase in one). */
enum bbr2_state {
	B2_STARTUP = 0,
	B2_DRAIN = 1,
	B2_PROBE_BW_DOWN = 2,
	B2_PROBE_BW_CRUISE = 3,
	B2_PROBE_BW_REFILL = 4,
	B2_PROBE_BW_UP = 5,
	B2_PROBE_RTT = 6,
};

struct bbr2 {
	/* enum bbr2_state first (offset 0): the phase code the emu runner reads. */
	u32 state;
	/* Times, us. */
	u64 min_rtt_stamp_us;
	u64 probe_rtt_min_stamp_us;
	u64 probe_rtt_done_us; /* 0: the ProbeRTT hold has not begun */
	u64 cycle_stamp_us;
	u64 ack_epoch_start_us;
	u64 bw_probe_wait_us;
	/* Rates, packets/us << 24. */
	u64 max_bw[2]; /* [previous cycle, current cycle] */
	u64 bw_lo;
	u64 bw_latest;
	u64 full_bw;
	u64 undo_bw_lo;
	/* Volumes, packets; RTTs, us. */
	u32 min_rtt_us;
	u32 probe_rtt_min_us;
	u32 pacing_gain;
	u32 cwnd_gain;
	u32 init_cwnd;
	u32 prev_ca_state;
	u32 prior_cwnd;
	u32 next_round_delivered;
	u32 rounds_since_probe;
	u32 inflight_lo;
	u32 inflight_hi;
	u32 inflight_latest;
	u32 loss_round_delivered;
	u32 loss_events_in_round;
	u32 full_bw_cnt;
	u32 ack_phase;
	u32 bw_probe_up_rounds;
	u32 bw_probe_up_acks;
	u32 bw_probe_up_cnt;
	u32 undo_inflight_lo;
	u32 undo_inflight_hi;
	u32 ack_epoch_acked;
	u32 extra_acked[2];
	u32 extra_acked_win_rtts;
	u32 extra_acked_win_idx;
	u32 ecn_alpha;
	u32 alpha_last_delivered;
	u32 alpha_last_delivered_ce;
	u32 last_delivered_ce;
	u32 ecn_startup_rounds;
	u32 last_lost;
	u32 tx_ring_head;
	u32 tx_ring_last_delivered;
	/* Flags. */
	u8 round_start;
	u8 idle_restart;
	u8 loss_round_start;
	u8 loss_in_round;
	u8 ecn_in_round;
	u8 loss_in_cycle;
	u8 ecn_in_cycle;
	u8 full_bw_reached;
	u8 bw_probe_samples;
	u8 prev_probe_too_high;
	u8 stopped_risky_probe;
	u8 probe_rtt_round_done;
	u8 has_seen_rtt;
	u8 ecn_eligible;
	struct tx_snap tx_ring[TX_RING];
};

BBRLAB_SK_STATE(struct bbr2, bbr2_sk_state); /* "Phases" (bbrlab_tcp_ca.h): state at offset 0 */

/* The model parts both BBR ports compute alike (bbrlab_bbr_model.h), on this port's state. */
#define BBR_STATE struct bbr2
#define BBR_PHASE(name) B2_##name
#include "bbrlab_bbr_model.h"

/* Diagnostics: the model of the flow that got the latest ACK and, over all flows, how each
 * bandwidth probe ended (a global, so `bpftool map dump` of the object's .bss shows it; mainline
 * does not let a BPF controller fill TCP_CC_INFO). */
struct bbr2_diag {
	u64 bw;           /* packets/us << 24 */
	struct bbr_ack_diag model;
	u32 up_too_high;  /* UP ended by a sample with too much loss/CE */
	u32 up_risky;     /* UP ended at the previous too-high inflight_hi */
	u32 up_queuing;   /* UP ended with inflight >= 1.25 BDP */
	u32 startup_full_bw; /* Startup ended by the bandwidth plateau ... */
	u32 startup_loss;    /* ... by loss in a Recovery round ... */
	u32 startup_ecn;     /* ... by CE in 2 rounds */
	u32 startup_exit_cwnd; /* cwnd when the latest Startup ended */
};
struct bbr2_diag bbr2_last_ack = {};

/* ---- Small helpers ---------------------------------------------------------------------- */

/* bbr_quantization_budget with bbr_cwnd_tso_budget = 1: >= 3 bursts and 4 packets, +2 in UP. */
static __always_inline u32 quantization_budget(struct sock *sk, const struct bbr2 *b, u32 cwnd)
{
	cwnd = max32(cwnd, QUANTA_IN_FLIGHT * send_quantum_segs(sk, b));
	cwnd = max32(cwnd, CWND_MIN_TARGET);
	if (b->state == B2_PROBE_BW_UP)
		cwnd = (u32)min64((u64)cwnd + PROBE_UP_EXTRA_CWND, INF_PKTS);
	return cwnd;
}

/* bbr2_target_inflight: BDP, unless congestion cut cwnd. */
static __always_inline u32 target_inflight(struct sock *sk, const struct bbr2 *b)
{
	return min32(inflight_of(sk, b, bw_of(b), BBR_UNIT), tcp_sk(sk)->snd_cwnd);
}

/* ---- Rounds, congestion signals ---------------------------------------------------------- */

/* bbr2_adapt_lower_bounds: once per loss round, not when probing. */
static __always_inline void adapt_lower_bounds(struct sock *sk, struct bbr2 *b)
{
	u32 cwnd = tcp_sk(sk)->snd_cwnd;
	u32 ecn_inflight_lo = INF_PKTS;
	u32 keep = BBR_UNIT - BETA;

	if (is_probing_bw(b))
		return;
	if (b->ecn_in_round && b->ecn_eligible) {
		u32 cut = BBR_UNIT - ((b->ecn_alpha * ECN_FACTOR) >> BBR_SCALE);

		if (b->inflight_lo == INF_PKTS)
			b->inflight_lo = cwnd;
		ecn_inflight_lo = (u32)(((u64)b->inflight_lo * cut) >> BBR_SCALE);
	}
	if (b->loss_in_round) {
		if (b->bw_lo == INF_BW)
			b->bw_lo = max_bw_of(b);
		if (b->inflight_lo == INF_PKTS)
			b->inflight_lo = cwnd;
		b->bw_lo = max64(b->bw_latest, (b->bw_lo * keep) >> BBR_SCALE);
		b->inflight_lo = max32(b->inflight_latest, (u32)(((u64)b->inflight_lo * keep) >> BBR_SCALE));
	}
	b->inflight_lo = min32(b->inflight_lo, ecn_inflight_lo);
}

/* bbr2_update_congestion_signals: max-bw filter, per-round latest rate/volume, lower bounds. */
static __always_inline void update_congestion_signals(struct sock *sk, struct bbr2 *b, const struct ack_info *a)
{
	struct tcp_sock *tp = tcp_sk(sk);

	b->loss_round_start = 0;
	if (!a->valid || !a->acked_sacked)
		return;
	if (!a->app_limited || a->sample_bw >= max_bw_of(b))
		b->max_bw[1] = max64(b->max_bw[1], a->sample_bw);
	if (a->new_lost)
		b->loss_in_round = 1;
	b->bw_latest = max64(b->bw_latest, a->sample_bw);
	b->inflight_latest = max32(b->inflight_latest, a->delivered);
	if (!seq_after_eq(a->prior_delivered, b->loss_round_delivered))
		return; /* not the end of a loss round yet */
	b->loss_round_delivered = tp->delivered;
	b->loss_round_start = 1;
	adapt_lower_bounds(sk, b);
	b->loss_in_round = 0;
	b->ecn_in_round = 0;
	b->bw_latest = a->sample_bw;
	b->inflight_latest = a->delivered;
}

/* ---- The long-term model (inflight_hi) --------------------------------------------------- */

/* bbr2_is_inflight_too_high: loss > 2 % of tx_in_flight, or CE >= 50 % (ECN-eligible). */
static __always_inline bool is_inflight_too_high(const struct bbr2 *b, u32 tx_in_flight, u32 lost,
						 u32 delivered, u32 delivered_ce)
{
	if (lost && tx_in_flight && lost > (((u64)tx_in_flight * LOSS_THRESH) >> BBR_SCALE))
		return true;
	if (delivered_ce && delivered && b->ecn_eligible &&
	    delivered_ce >= (((u64)delivered * ECN_THRESH) >> BBR_SCALE))
		return true;
	return false;
}

static __always_inline bool rs_too_high(const struct bbr2 *b, const struct ack_info *a)
{
	return is_inflight_too_high(b, a->tx_in_flight, a->lost, a->delivered, a->delivered_ce);
}

static __always_inline void start_probe_bw_cruise(struct bbr2 *b)
{
	if (b->inflight_lo != INF_PKTS)
		b->inflight_lo = min32(b->inflight_lo, b->inflight_hi);
	b->state = B2_PROBE_BW_CRUISE;
}

static __always_inline void start_probe_bw_up(struct sock *sk, struct bbr2 *b, u64 now_us)
{
	b->ack_phase = ACK_PHASE_PROBE_STARTING;
	start_round(sk, b);
	b->cycle_stamp_us = now_us;
	b->state = B2_PROBE_BW_UP;
	raise_inflight_hi_slope(sk, b);
}

/* bbr2_handle_inflight_too_high: once per probe, inflight_hi = max(tx_in_flight,
 * 0.7 target_inflight); leave UP. */
static __always_inline void handle_inflight_too_high(struct sock *sk, struct bbr2 *b, const struct ack_info *a)
{
	b->prev_probe_too_high = 1;
	b->bw_probe_samples = 0; /* react once per probe */
	if (!a->app_limited) {
		u32 t = (u32)(((u64)target_inflight(sk, b) * (BBR_UNIT - BETA)) >> BBR_SCALE);

		b->inflight_hi = max32(a->tx_in_flight, t);
	}
	if (b->state == B2_PROBE_BW_UP) {
		__sync_fetch_and_add(&bbr2_last_ack.up_too_high, 1);
		start_probe_bw_down(sk, b, a->now_us);
	}
}

/* bbr2_probe_inflight_hi_upward: grow inflight_hi only while it limits us. */
static __always_inline void probe_inflight_hi_upward(struct sock *sk, struct bbr2 *b, const struct ack_info *a)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	if (!tp->is_cwnd_limited || tp->snd_cwnd < b->inflight_hi) {
		b->bw_probe_up_acks = 0; /* no unused credits */
		return;
	}
	b->bw_probe_up_acks += a->acked_sacked;
	if (b->bw_probe_up_cnt && b->bw_probe_up_acks >= b->bw_probe_up_cnt) {
		u32 delta = b->bw_probe_up_acks / b->bw_probe_up_cnt;

		b->bw_probe_up_acks -= delta * b->bw_probe_up_cnt;
		b->inflight_hi = (u32)min64((u64)b->inflight_hi + delta, INF_PKTS);
	}
	if (b->round_start)
		raise_inflight_hi_slope(sk, b);
}

/* bbr2_adapt_upper_bounds. Returns true if it decided a state transition. */
static __always_inline bool adapt_upper_bounds(struct sock *sk, struct bbr2 *b, const struct ack_info *a)
{
	if (b->ack_phase == ACK_PHASE_PROBE_STARTING && b->round_start)
		b->ack_phase = ACK_PHASE_PROBE_FEEDBACK;
	if (b->ack_phase == ACK_PHASE_PROBE_STOPPING && b->round_start) {
		b->bw_probe_samples = 0;
		b->ack_phase = ACK_PHASE_INIT;
		/* Best time to forget the previous cycle's samples (never onto an empty slot). */
		if (is_in_probe_bw(b) && !a->app_limited && b->max_bw[1]) {
			b->max_bw[0] = b->max_bw[1];
			b->max_bw[1] = 0;
		}
		/* Reached the previous too-high inflight_hi without loss/ECN: probe again. */
		if (is_in_probe_bw(b) && b->stopped_risky_probe && !b->prev_probe_too_high) {
			start_probe_bw_refill(sk, b, 0);
			return true;
		}
	}
	if (rs_too_high(b, a)) {
		if (b->bw_probe_samples)
			handle_inflight_too_high(sk, b, a);
		return false;
	}
	raise_inflight_hi(sk, b, a);
	return false;
}

/* ---- ProbeBW cycle ----------------------------------------------------------------------- */

/* bbr2_check_time_to_probe_bw: 2-3 s since DOWN, or min(63, target_inflight) rounds. */
static __always_inline bool check_time_to_probe_bw(struct sock *sk, struct bbr2 *b, u64 now_us)
{
	u32 reno_rounds = (u32)(((u64)target_inflight(sk, b) * BW_PROBE_RENO_GAIN) >> BBR_SCALE);

	if (now_us > b->cycle_stamp_us + b->bw_probe_wait_us ||
	    b->rounds_since_probe >= min32(BW_PROBE_MAX_ROUNDS, reno_rounds)) {
		start_probe_bw_refill(sk, b, 0);
		return true;
	}
	return false;
}

/* bbr2_update_cycle_phase. */
static __always_inline void update_cycle_phase(struct sock *sk, struct bbr2 *b, const struct ack_info *a)
{
	u32 inflight;
	u64 bw;

	if (!b->full_bw_reached)
		return;
	if (adapt_upper_bounds(sk, b, a))
		return;
	if (!is_in_probe_bw(b))
		return;
	inflight = packets_in_net_at_edt(sk, b, a->prior_in_flight);
	bw = max_bw_of(b);
	switch (b->state) {
	case B2_PROBE_BW_CRUISE:
		check_time_to_probe_bw(sk, b, a->now_us);
		break;
	case B2_PROBE_BW_REFILL:
		if (b->round_start) { /* one round of REFILL: samples now reflect the probe */
			b->bw_probe_samples = 1;
			start_probe_bw_up(sk, b, a->now_us);
		}
		break;
	case B2_PROBE_BW_UP: {
		bool go_down = false;

		if (b->prev_probe_too_high && inflight >= b->inflight_hi) {
			b->stopped_risky_probe = 1;
			__sync_fetch_and_add(&bbr2_last_ack.up_risky, 1);
			go_down = true;
		} else if (a->now_us > b->cycle_stamp_us + b->min_rtt_us &&
			   inflight >= inflight_of(sk, b, bw, BW_PROBE_PIF_GAIN)) {
			__sync_fetch_and_add(&bbr2_last_ack.up_queuing, 1);
			go_down = true; /* queuing: inflight reached 1.25 BDP */
		}
		if (go_down) {
			b->prev_probe_too_high = 0; /* no loss/ECN (yet) */
			start_probe_bw_down(sk, b, a->now_us);
		}
		break;
	}
	case B2_PROBE_BW_DOWN:
		if (check_time_to_probe_bw(sk, b, a->now_us))
			return;
		if (is_time_to_cruise(sk, b, inflight, bw))
			start_probe_bw_cruise(b);
		break;
	default:
		break;
	}
}

/* ---- Startup and Drain ------------------------------------------------------------------- */

/* bbr2_handle_queue_too_high_in_startup. */
static __always_inline void handle_queue_too_high_in_startup(struct sock *sk, struct bbr2 *b)
{
	b->full_bw_reached = 1;
	b->inflight_hi = inflight_of(sk, b, max_bw_of(b), BBR_UNIT);
}

/* bbr2_check_loss_too_high_in_startup: a Recovery round with >= 8 loss events, loss > 2 %. */
static __always_inline void check_loss_too_high_in_startup(struct sock *sk, struct bbr2 *b,
							   const struct ack_info *a)
{
	if (b->full_bw_reached)
		return;
	if (a->new_lost)
		b->loss_events_in_round = min32(b->loss_events_in_round + 1, 0xF);
	if (b->loss_round_start && a->ca_state == TCP_CA_Recovery &&
	    b->loss_events_in_round >= FULL_LOSS_CNT && rs_too_high(b, a)) {
		__sync_fetch_and_add(&bbr2_last_ack.startup_loss, 1);
		handle_queue_too_high_in_startup(sk, b);
		return;
	}
	if (b->loss_round_start)
		b->loss_events_in_round = 0;
}

/* bbr_check_full_bw_reached: at each non-app-limited round start compare max_bw. */
static __always_inline void check_full_bw_reached(struct bbr2 *b, const struct ack_info *a)
{
	u64 bw = max_bw_of(b);

	if (b->full_bw_reached || !b->round_start || a->app_limited)
		return;
	if (bw >= ((b->full_bw * FULL_BW_THRESH) >> BBR_SCALE)) {
		b->full_bw = bw;
		b->full_bw_cnt = 0;
		return;
	}
	b->full_bw_cnt++;
	b->full_bw_reached = b->full_bw_cnt >= FULL_BW_CNT;
	if (b->full_bw_reached)
		__sync_fetch_and_add(&bbr2_last_ack.startup_full_bw, 1);
}

/* bbr_check_drain + bbr2_check_drain. */
static __always_inline void check_drain(struct sock *sk, struct bbr2 *b, u64 now_us)
{
	struct tcp_sock *tp = tcp_sk(sk);

	if (b->state == B2_STARTUP && b->full_bw_reached) {
		bbr2_last_ack.startup_exit_cwnd = tp->snd_cwnd;
		b->state = B2_DRAIN;
		tp->snd_ssthresh = inflight_of(sk, b, max_bw_of(b), BBR_UNIT);
		reset_congestion_signals(b);
	}
	if (b->state == B2_DRAIN &&
	    packets_in_net_at_edt(sk, b, packets_in_flight(tp)) <= inflight_of(sk, b, max_bw_of(b), BBR_UNIT))
		start_probe_bw_down(sk, b, now_us);
}

/* bbr2_update_ecn_alpha (+ bbr2_check_ecn_too_high_in_startup), once per round. */
static __always_inline void update_ecn_alpha(struct sock *sk, struct bbr2 *b)
{
	struct tcp_sock *tp = tcp_sk(sk);
	u64 ratio;

	if (!update_ecn_ewma(tp, b, &ratio))
		return;
	if (!b->ecn_eligible && (tp->ecn_flags & TCP_ECN_OK) && b->min_rtt_us <= ECN_MAX_RTT_US)
		b->ecn_eligible = 1;
	if (!b->full_bw_reached && b->ecn_eligible) {
		b->ecn_startup_rounds = ratio >= ECN_THRESH ? b->ecn_startup_rounds + 1 : 0;
		if (b->ecn_startup_rounds >= FULL_ECN_CNT) {
			__sync_fetch_and_add(&bbr2_last_ack.startup_ecn, 1);
			handle_queue_too_high_in_startup(sk, b);
		}
	}
}

/* ---- min_rtt and ProbeRTT ---------------------------------------------------------------- */

/* bbr2_exit_probe_rtt (after bbr_check_probe_rtt_done, bbrlab_bbr_model.h). */
static __always_inline void exit_probe_rtt(struct sock *sk, struct bbr2 *b, u64 now_us)
{
	if (b->full_bw_reached) {
		start_probe_bw_down(sk, b, now_us);
		start_probe_bw_cruise(b);
	} else {
		b->state = B2_STARTUP;
	}
}

/* bbr_update_min_rtt (v2alpha). */
static __always_inline void update_min_rtt(struct sock *sk, struct bbr2 *b, const struct ack_info *a,
					   long rtt_us, bool is_ack_delayed)
{
	u64 now = a->now_us;
	bool expired = now > b->probe_rtt_min_stamp_us + PROBE_RTT_WIN_US;

	if (rtt_us >= 0 && ((u64)rtt_us <= b->probe_rtt_min_us || (expired && !is_ack_delayed))) {
		b->probe_rtt_min_us = (u32)min64((u64)rtt_us, INF_PKTS - 1);
		b->probe_rtt_min_stamp_us = now;
	}
	update_min_rtt_from_probe_rtt_min(b, now);
	if (expired && !b->idle_restart && b->state != B2_PROBE_RTT) {
		b->state = B2_PROBE_RTT;
		b->ack_phase = ACK_PHASE_PROBE_STOPPING;
		start_round(sk, b);
		save_cwnd(sk, b);
		b->probe_rtt_done_us = 0;
	}
	handle_probe_rtt(sk, b, now);
	if (a->delivered > 0)
		b->idle_restart = 0;
}

/* ---- cwnd -------------------------------------------------------------------------------- */

/* bbr_set_cwnd (v2alpha: no packet conservation) + bbr2_bound_cwnd_for_inflight_model. */
static __always_inline void set_cwnd(struct sock *sk, struct bbr2 *b, const struct ack_info *a, u64 bw)
{
	struct tcp_sock *tp = tcp_sk(sk);
	u32 cwnd = tp->snd_cwnd;

	if (a->acked_sacked) {
		u64 target = (u64)bdp_multiple(b, bw, b->cwnd_gain) + extra_acked_cwnd(b);
		u32 t = quantization_budget(sk, b, (u32)min64(target, INF_PKTS));

		if (b->full_bw_reached)
			cwnd = (u32)min64((u64)cwnd + a->acked_sacked, t);
		else if (cwnd < t || cwnd < 2 * b->init_cwnd)
			cwnd = (u32)min64((u64)cwnd + a->acked_sacked, INF_PKTS);
		cwnd = max32(cwnd, CWND_MIN_TARGET);
	}
	tp->snd_cwnd = bound_cwnd(tp, b, cwnd);
}

/* ---- struct_ops hooks -------------------------------------------------------------------- */

/* bbr_init + bbr2_init. */
SEC("struct_ops")
void BPF_PROG(bbr2_init, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr2 *b = new_state_of(sk);
	u64 now = tp->tcp_mstamp;
	u32 min_rtt = tp->rtt_min.s[0].v;

	if (!b)
		return;
	/* The model, then the ring's entries (too large for one inlined memset). */
	__builtin_memset(b, 0, __builtin_offsetof(struct bbr2, tx_ring));
	for (int i = 0; i < TX_RING; i++)
		b->tx_ring[i].valid = 0;
	init_model(sk, b, now, min_rtt);
	b->bw_probe_up_cnt = INF_PKTS;
	b->state = B2_STARTUP;
	b->pacing_gain = HIGH_GAIN;
	b->cwnd_gain = HIGH_GAIN;
	init_pacing_rate_from_rtt(sk, b);
	/* Let the kernel's internal pacing enforce sk_pacing_rate (no fq qdisc needed). */
	sk->sk_pacing_status = SK_PACING_NEEDED;
}

/* bbr2_main. */
SEC("struct_ops")
void BPF_PROG(bbr2_cong_control, struct sock *sk, u32 ack, int flag, const struct rate_sample *rs)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr2 *b = state_of(sk);
	struct ack_info a = {};
	u64 bw;

	if (!b)
		return;
	read_rate_sample(sk, rs, &a);
	if (a.valid)
		a.sample_bw = sample_bw_of(&a, rs);
	read_stand_ins(tp, b, &a);
	tx_ring_estimate(b->tx_ring, tp, a.prior_delivered, a.prior_in_flight, a.new_lost, &a.tx_in_flight,
			 &a.lost);

	if (a.new_lost)
		note_loss(sk, b); /* header, item 3 */
	update_round(sk, b, &a);
	if (b->round_start) {
		b->rounds_since_probe = min32(b->rounds_since_probe + 1, ROUNDS_SINCE_PROBE_MAX);
		update_ecn_alpha(sk, b);
	}
	if (a.ce_now)
		b->ecn_in_round = 1;

	/* bbr2_update_model. */
	update_congestion_signals(sk, b, &a);
	update_ack_aggregation(sk, b, &a, tp->delivered_mstamp);
	check_loss_too_high_in_startup(sk, b, &a);
	check_full_bw_reached(b, &a);
	check_drain(sk, b, a.now_us);
	update_cycle_phase(sk, b, &a);
	update_min_rtt(sk, b, &a, rs->rtt_us, rs->is_ack_delayed);

	/* bbr_update_gains. */
	switch (b->state) {
	case B2_STARTUP:
		b->pacing_gain = HIGH_GAIN;
		b->cwnd_gain = HIGH_GAIN;
		break;
	case B2_DRAIN:
		b->pacing_gain = DRAIN_PACING_GAIN;
		b->cwnd_gain = HIGH_GAIN; /* slow pacing, keep cwnd */
		break;
	case B2_PROBE_BW_UP:
		b->pacing_gain = UP_PACING_GAIN;
		b->cwnd_gain = CWND_GAIN;
		break;
	case B2_PROBE_BW_DOWN:
		b->pacing_gain = DOWN_PACING_GAIN;
		b->cwnd_gain = CWND_GAIN;
		break;
	case B2_PROBE_RTT:
		b->pacing_gain = BBR_UNIT;
		b->cwnd_gain = BBR_UNIT;
		break;
	default: /* CRUISE, REFILL */
		b->pacing_gain = BBR_UNIT;
		b->cwnd_gain = CWND_GAIN;
		break;
	}
	bw = bw_of(b);
	set_pacing_rate(sk, b, bw, b->pacing_gain);
	set_cwnd(sk, b, &a, bw);

	finish_ack(b, &a);
	tx_ring_record(b->tx_ring, &b->tx_ring_head, &b->tx_ring_last_delivered, tp, a.prior_in_flight);

	bbr2_last_ack.bw = bw;
	note_ack_diag(&bbr2_last_ack.model, b, &a, tp);
}

/* bbr2_set_state: on RTO forget the full-bw baseline and seed inflight_lo from the pre-RTO
 * cwnd when not probing; on leaving Loss restore cwnd. */
SEC("struct_ops")
void BPF_PROG(bbr2_set_state, struct sock *sk, u8 new_state)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr2 *b = state_of(sk);

	if (!b)
		return;
	if (new_state == TCP_CA_Loss) {
		b->prev_ca_state = TCP_CA_Loss;
		b->full_bw = 0;
		if (!is_probing_bw(b) && b->inflight_lo == INF_PKTS)
			b->inflight_lo = b->prior_cwnd;
	} else if (b->prev_ca_state == TCP_CA_Loss) {
		tp->snd_cwnd = max32(tp->snd_cwnd, b->prior_cwnd);
	}
}

/* bbr2_undo_cwnd: spurious recovery; restore the bounds saved in ssthresh. */
SEC("struct_ops")
u32 BPF_PROG(bbr2_undo_cwnd, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr2 *b = state_of(sk);
	u32 cwnd = tp->snd_cwnd;

	/* Keep this load apart: clang would otherwise sink it into one load instruction shared
	 * with b->prior_cwnd's, which the verifier refuses (two pointer types). */
	asm volatile("" : "+r"(cwnd));
	if (!b)
		return cwnd;
	b->full_bw = 0;
	b->full_bw_cnt = 0;
	b->loss_in_round = 0;
	restore_state_upon_undo(b);
	return b->prior_cwnd;
}

/* The struct_ops, with the hooks both ports share (ssthresh, cwnd_event, min_tso_segs). */
#define BBR_PORT bbr2
#define BBR_OPS bbr2
#include "bbrlab_bbr_ops.h"
