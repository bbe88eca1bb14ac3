// SPDX-License-Identifier: GPL-2.0
/*
 * bbr3_linux: Google's Linux BBRv3 as a BPF struct_ops TCP congestion control for a stock
 * (mainline) kernel, with the behaviour of bbrlab's simulator algorithm of the same name
 * (crates/cc/src/bbr/v3 with Variant::Linux, and the family modules in crates/cc/src/bbr/).
 *
 * Sources (facts only, the code is bbrlab's): the simulator files above, which follow
 * draft-ietf-ccwg-bbr-06 with the constants and ECN response of Google's Linux v3
 * (github.com/google/bbr, branch v3, net/ipv4/tcp_bbr.c); mainline include/net/tcp.h,
 * net/ipv4/tcp_input.c, tcp_rate.c, tcp_output.c (what a struct_ops controller is given).
 *
 * Model (per ACK, in cong_control; the simulator's v3/mod.rs header has the long form):
 *
 *   max_bw          = max delivery rate over the last 2 ProbeBW cycles (2 slots, advanced once
 *                     per bandwidth probe, one round after leaving UP, never onto an empty slot)
 *   min_rtt         = min RTT over 10 s, fed by a 5 s probe_rtt_min sub-window (schedules ProbeRTT)
 *   inflight_hi     = loss/ECN-bounded max inflight, learned while probing (long-term)
 *   bw_lo, inflight_lo = short-term bounds, cut by beta 0.7 per lossy round when not probing
 *   bw              = min(max_bw, bw_lo)
 *   pacing_rate     = pacing_gain * bw * 0.99           (written to sk->sk_pacing_rate)
 *   cwnd            = min(cwnd_gain * bw * min_rtt + extra_acked (+ offload budget),
 *                         state cap from inflight_hi (-15 % headroom in CRUISE/ProbeRTT), inflight_lo)
 *
 *   Startup --(bw plateau: 3 rounds < +25 %, or loss > 2 % with 6 loss events in a recovery
 *              round, or 2 rounds with CE >= 50 % when ECN-eligible)--> Drain
 *   Drain --(inflight at next departure <= BDP, or > 3 rounds)--> ProbeBW_DOWN
 *   DOWN --(inflight <= min(BDP, inflight_hi - headroom))--> CRUISE
 *   DOWN/CRUISE --(2 s + U[0, 1 s) since DOWN, or min(BDP, 63) rounds)--> REFILL (1 round) --> UP
 *   UP --(bw plateau | loss > 2 % of inflight | precautionary: inflight reached inflight_hi)--> DOWN
 *   any --(5 s without a lower RTT sample)--> ProbeRTT (cwnd = max(BDP/2, 4) for 200 ms and a
 *              round) --> CRUISE, or Startup if the pipe was never full
 *
 * Units follow Linux: bandwidth in packets/us << 24 (BW_SCALE), gains and fractions in 2^8
 * (BBR_UNIT), time in us (tp->tcp_mstamp); the simulator keeps time in ns and gains in 2^16 with
 * Linux's 2^8 values shifted left by 8, so every ratio below is bit-for-bit the simulator's. No
 * floating point; 64-bit unsigned division only; all loops are bounded; the min/max filters are
 * written out (2 slots); random numbers come from bpf_get_prandom_u32() (the simulator uses a
 * seeded SplitMix64, so the probe timing is random in both but not the same draws).
 *
 * State: the flow's state does not fit in icsk_ca_priv (104 bytes), so it lives in a
 * BPF_MAP_TYPE_SK_STORAGE map (`bbr3_sk_state`), created in init and freed with the socket. If
 * the kernel cannot allocate it, every hook returns without acting and the socket keeps the
 * kernel's initial cwnd and its default pacing (a degraded but safe flow).
 *
 * WHERE MAINLINE LACKS WHAT GOOGLE'S TREE USES, AND WHAT THIS PORT DOES INSTEAD
 *
 * 1. rs->tx_in_flight (Google: per-skb snapshot of the data in flight when the sampled packet
 *    was sent). Mainline's struct rate_sample has only rs->prior_in_flight (in flight just before
 *    this ACK) and rs->prior_delivered (tp->delivered when the sampled packet was sent). This port
 *    keeps a ring of TX_RING snapshots {tp->delivered, tp->lost, in flight} taken on ACKs about
 *    every 1/8 of a window, and takes tx_in_flight of the sampled packet as the in-flight of the
 *    newest snapshot at or before rs->prior_delivered (the in-flight level the packets sent after
 *    that ACK met: that ACK's prior_in_flight). When the ring has no such snapshot (the first
 *    round, after long recovery), rs->prior_in_flight is used. Consequence: tx_in_flight is
 *    known to within about 1/8 of a window and one ACK instead of exactly; it sets the
 *    denominator of the 2 % loss test and the level inflight_hi is raised or cut to, so the probe
 *    ends, and inflight_hi lands, within a few packets of where Google's kernel puts them.
 * 2. rs->lost (Google: tp->lost minus the sampled skb's snapshot of it: data lost while the
 *    sampled packet was in flight). Taken as tp->lost now (after this ACK's marking) minus the
 *    same snapshot's lost: the losses marked since about the sampled packet's send time,
 *    overcounting by at most the losses of 1/8 of a window. The simulator's RS.lost = rs.lost +
 *    rs.losses (it includes this ACK's marking), and so does this.
 * 3. .skb_marked_lost (Google's per-lost-skb hook: NoteLoss, and, while probing, the exact
 *    crossing point of the 2 % threshold from that skb's own tx_in_flight and lost snapshot, at
 *    the moment of the loss, RTO marking included). Mainline has no such hook. Instead, at the
 *    top of cong_control, on an ACK whose processing marked new losses (new = tp->lost minus its
 *    value at the previous ACK, which unlike rs->losses also catches the bulk marking done by an
 *    RTO), this port does NoteLoss and, while probing, the same too-high test and crossing point
 *    (InflightAtLoss) with the ring's estimates for the sampled packet, treating all of this
 *    ACK's new losses as one step. Consequences: (a) RACK/SACK losses are marked while the ACK
 *    is processed, before cong_control, so the reaction comes on the same ACK as in Google's
 *    kernel, not later; (b) the crossing point is computed once per ACK from aggregate counts,
 *    not per packet from each lost packet's own snapshot, so inflight_hi after a too-high probe
 *    can differ by a few packets; (c) losses marked by an RTO are seen on the first ACK after
 *    the RTO instead of at the RTO.
 * 4. rs->is_ece (Google's flag on the ACK). As the simulator: an ACK "raised CE" when
 *    tp->delivered_ce grew (mainline's cong_control also gets FLAG_ECE in `flag`; not used, so
 *    that both sides use the same signal).
 * 5. Fast path (Google `bbr_run_fast_path`), PLB rehashing, CA_EVENT_TLP_RECOVERY: absent in
 *    mainline and not implemented in the simulator either (CPU saving / path selection only).
 * 6. .tso_segs (Google: BBR sizes each offload burst). Mainline has only .min_tso_segs; the
 *    stack's tcp_tso_autosize already computes pacing_rate >> sk_pacing_shift plus the
 *    64 KB >> (min_rtt_us >> 9) allowance (net.ipv4.tcp_tso_rtt_log = 9), which is v3's goal;
 *    this port returns Linux's bbr_min_tso_segs (1 segment below 1.2 Mbit/s, else 2) and uses
 *    the same formula for its own budget (send_quantum_segs), as the simulator does.
 * 7. Time: Linux keeps min_rtt/ProbeRTT stamps in jiffies, this port in us (tp->tcp_mstamp), the
 *    simulator in ns. Differences are sub-millisecond on windows of 200 ms .. 10 s.
 *
 * Kept from the simulator's bbr3_linux where it differs from Google's tree (so that both sides
 * run the same algorithm): the draft's 3-round Drain timeout and its undo to REFILL/Startup,
 * and the max_bw clock advanced exactly once per bandwidth probe (see the simulator's header).
 *
 * What the loader gets: one struct_ops map `bbr3_linux` (SEC(".struct_ops"), defined in
 * bbrlab_bbr_ops.h), one sk-storage map `bbr3_sk_state` (libbpf creates it; the runner reads
 * each flow's phase from it, see bbrlab_tcp_ca.h), and the TCP name BBRLAB_CA_NAME (the
 * placeholder bbrlab_tcp_ca.h defines and the loader replaces with the run's unique name).
 */
/* The package's shared header: vmlinux.h, libbpf macros, BBRLAB_CA_NAME (the placeholder the
 * loader replaces with the run's unique name). */
#include "bbrlab_tcp_ca.h"

char _license[] SEC("license") = "GPL";

/* Linux tcp_bbr.c's fixed point: BW_SCALE/BW_UNIT, BBR_SCALE/BBR_UNIT, INF_PKTS/INF_BW. */
#include "bbrlab_bbr_fixed_point.h"

/* ---- Gains (Linux v3 values in 2^8; the simulator's Params::of(Variant::Linux)) ---------- */
/* (Those v2alpha shares: bbrlab_bbr_model.h.) */

/* Startup pacing 2.77 = 4 ln 2 rounded up (710/256): the smallest gain that doubles the
 * delivery rate per round like slow start. */
#define STARTUP_PACING_GAIN (BBR_UNIT * 277 / 100 + 1)
/* Startup cwnd gain 2.0: the smallest cwnd that lets the rate double per round. */
#define STARTUP_CWND_GAIN (BBR_UNIT * 2)
/* ProbeBW_DOWN 0.91 (232/256): drains UP's queue and converges flows' shares. */
#define DOWN_PACING_GAIN (BBR_UNIT * 91 / 100)
/* Default cwnd gain 2.0 (tolerates delayed/stretched ACKs); UP adds 1/4 so the 1.25 probe is
 * not cwnd-limited. */
#define DEFAULT_CWND_GAIN (BBR_UNIT * 2)
#define UP_CWND_GAIN (BBR_UNIT * 9 / 4)
/* Beta 0.7 (180/256): multiplicative cut of the short-term model per lossy round, like CUBIC's,
 * so BBR coexists with loss-based flows. */
#define BETA (BBR_UNIT - BBR_UNIT * 30 / 100)
/* Startup's loss exit: 6 loss events in a recovery round (Linux bbr_full_loss_cnt). */
#define STARTUP_FULL_LOSS_CNT 6
/* Drain gives up after 3 rounds (bw over-estimated); the draft's rule, kept by the simulator. */
#define DRAIN_MAX_ROUNDS 3

/* Send quantum at least 2 segments at any rate (the simulator's SEND_QUANTUM_MIN_SEGS). */
#define SEND_QUANTUM_MIN_SEGS(pacing_rate_bytes_per_s) 2

/* After an ECN-only cycle (CE but no loss), re-probe from inflight_hi / 2. */
#define ECN_REPROBE_GAIN (BBR_UNIT / 2)

/* ---- Mainline substitute for rs->tx_in_flight / rs->lost (header, items 1-2) -------------- */

/* Snapshots kept: 16 at about 8 per window cover two rounds. */
#define TX_RING 16
#define TX_RING_PER_WINDOW 8
#include "bbrlab_tx_ring.h"

/* Loop bound of ilog2 over a u64. */
#define ILOG2_BITS 64

enum bbr3_state {
	B3_STARTUP = 0,
	B3_DRAIN = 1,
	B3_PROBE_BW_DOWN = 2,
	B3_PROBE_BW_CRUISE = 3,
	B3_PROBE_BW_REFILL = 4,
	B3_PROBE_BW_UP = 5,
	B3_PROBE_RTT = 6,
};
/* undo_state: no saved state. */
#define B3_UNDO_NONE 0xFF

struct bbr3 {
	/* enum bbr3_state, first so that its offset is 0: the value is the flow's phase code, an
	 * index into the registry's phase table of bbr3_linux (crates/cc/src/phases.rs BBR2_3), and
	 * the emu runner reads it from user space ("Phases" in bbrlab_tcp_ca.h). */
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
	u32 round_count;
	u32 next_round_delivered;
	u32 drain_start_round;
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
	u32 undo_state;
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
	u32 cur_cwnd;
	u32 last_lost;
	u32 tx_ring_head;
	u32 tx_ring_last_delivered;
	/* Flags. */
	u8 round_start;
	u8 idle_restart;
	u8 max_bw_advance_pending;
	u8 loss_round_start;
	u8 loss_in_round;
	u8 ecn_in_round;
	u8 loss_in_cycle;
	u8 ecn_in_cycle;
	u8 full_bw_reached;
	u8 full_bw_now;
	u8 bw_probe_samples;
	u8 prev_probe_too_high;
	u8 stopped_risky_probe;
	u8 probe_rtt_round_done;
	u8 has_seen_rtt;
	u8 ecn_eligible;
	struct tx_snap tx_ring[TX_RING];
};

BBRLAB_SK_STATE(struct bbr3, bbr3_sk_state); /* "Phases" (bbrlab_tcp_ca.h): state at offset 0 */

/* The model parts both BBR ports compute alike (bbrlab_bbr_model.h), on this port's state. */
#define BBR_STATE struct bbr3
#define BBR_PHASE(name) B3_##name
#include "bbrlab_bbr_model.h"

/* Diagnostics: the model of the flow that got the latest ACK (a global, so `bpftool map dump`
 * of the object's .bss shows it; with several flows it is whichever ACKed last). Mainline does
 * not let a BPF controller fill TCP_INFO's BBR fields (.get_info is not supported for BPF). */
struct bbr3_diag {
	u64 bw;          /* packets/us << 24 */
	u64 stamp_us;
	struct bbr_ack_diag model;
	u32 too_high_events; /* probes ended by loss/ECN (HandleInflightTooHigh), all flows */
};
struct bbr3_diag bbr3_last_ack = {};

/* Diagnostics: the valid delivery-rate samples of every flow, split by whether the sampled skb
 * had been retransmitted (rs->is_retrans). tcp_rate_gen's own comment warns that a sample may be
 * over-estimated "when a spuriously retransmitted skb was first (s)acked"; these counters show
 * whether the samples that raise the max filter are such ones (docs/fidelity.md). */
struct bbr3_rate_diag {
	u64 samples;     /* valid samples */
	u64 max_bw;      /* the largest, packets/us << 24 */
	u64 raises;      /* samples above the flow's max-filter bandwidth at that ACK */
	u64 app_limited; /* of the samples, app-limited ones */
};
struct bbr3_rate_diag bbr3_rate_clean = {};   /* sampled skb not retransmitted */
struct bbr3_rate_diag bbr3_rate_retrans = {}; /* sampled skb retransmitted */

/* Count a valid sample of `bw` in `d` (the verifier wants each global addressed directly). */
#define NOTE_RATE_SAMPLE(d, bw, prior_max, app_limited_)		\
	do {								\
		__sync_fetch_and_add(&(d).samples, 1);			\
		if (app_limited_)					\
			__sync_fetch_and_add(&(d).app_limited, 1);	\
		if ((bw) > (d).max_bw)					\
			(d).max_bw = (bw);				\
		if ((bw) > (prior_max))					\
			__sync_fetch_and_add(&(d).raises, 1);		\
	} while (0)

/* ---- Small helpers ---------------------------------------------------------------------- */

static __always_inline u32 ilog2_u64(u64 v)
{
	u32 n = 0;

	for (int i = 0; i < ILOG2_BITS; i++) {
		v >>= 1;
		if (!v)
			break;
		n++;
	}
	return n;
}

/* tp->is_cwnd_limited as Google's v3 and the simulator read it: the flag tcp_cwnd_validate
 * latches for a window when the flow used its whole cwnd (not tcp_is_cwnd_limited(), whose
 * slow-start clause would call a Startup flow with ssthresh infinite cwnd-limited). */
static __always_inline bool is_cwnd_limited(const struct tcp_sock *tp)
{
	return tp->is_cwnd_limited;
}

/* QuantizationBudget: at least 3 send quanta and 4 packets, +2 in UP. */
static __always_inline u32 quantization_budget(struct sock *sk, const struct bbr3 *b, u32 cwnd)
{
	cwnd = max32(cwnd, QUANTA_IN_FLIGHT * send_quantum_segs(sk, b));
	cwnd = max32(cwnd, CWND_MIN_TARGET);
	if (b->state == B3_PROBE_BW_UP)
		cwnd += PROBE_UP_EXTRA_CWND;
	return cwnd;
}

/* TargetInflight = min(BDP, cwnd). */
static __always_inline u32 target_inflight(struct sock *sk, const struct bbr3 *b)
{
	return min32(bdp_multiple(b, bw_of(b), BBR_UNIT), tcp_sk(sk)->snd_cwnd);
}

/* ---- Full-pipe detector ------------------------------------------------------------------ */

static __always_inline void full_bw_reset(struct bbr3 *b)
{
	b->full_bw = 0;
	b->full_bw_cnt = 0;
	b->full_bw_now = 0;
}

static __always_inline void full_bw_restart_from(struct bbr3 *b, u64 bw)
{
	full_bw_reset(b);
	b->full_bw = bw;
}

/* Linux v3: every non-app-limited sample may raise the baseline; rounds without 25 % growth
 * are counted at round starts. */
static __always_inline void check_full_bw_reached(struct bbr3 *b, const struct ack_info *a)
{
	if (b->full_bw_now || a->app_limited)
		return;
	if (a->sample_bw >= ((b->full_bw * FULL_BW_THRESH) >> BBR_SCALE)) {
		full_bw_restart_from(b, a->sample_bw);
		return;
	}
	if (!b->round_start)
		return;
	b->full_bw_cnt++;
	b->full_bw_now = b->full_bw_cnt >= FULL_BW_CNT;
	if (b->full_bw_now)
		b->full_bw_reached = 1;
}

/* ---- Rounds, congestion signals, the short-term model ------------------------------------ */

static __always_inline void update_latest_delivery_signals(struct sock *sk, struct bbr3 *b, const struct ack_info *a)
{
	b->loss_round_start = 0;
	if (!a->valid || !a->acked_sacked)
		return;
	b->bw_latest = max64(b->bw_latest, a->sample_bw);
	b->inflight_latest = max32(b->inflight_latest, a->delivered);
	if (seq_after_eq(a->prior_delivered, b->loss_round_delivered)) {
		b->loss_round_delivered = tcp_sk(sk)->delivered;
		b->loss_round_start = 1;
	}
}

static __always_inline void advance_latest_delivery_signals(struct bbr3 *b, const struct ack_info *a)
{
	if (b->loss_round_start) {
		b->bw_latest = a->sample_bw;
		b->inflight_latest = a->delivered;
	}
}

/* InitLowerBounds: the first congestion of the cycle starts from max_bw / cwnd. */
static __always_inline void init_lower_bounds(struct bbr3 *b, bool init_bw)
{
	if (init_bw && b->bw_lo == INF_BW)
		b->bw_lo = max_bw_of(b);
	if (b->inflight_lo == INF_PKTS)
		b->inflight_lo = b->cur_cwnd;
}

/* AdaptLowerBoundsFromCongestion (+ Linux ECN cut): once per loss round, not when probing. */
static __always_inline void adapt_lower_bounds(struct bbr3 *b)
{
	u32 ecn_inflight = INF_PKTS;

	if (is_probing_bw(b))
		return;
	if (b->ecn_in_round) {
		u32 cut;

		init_lower_bounds(b, false);
		cut = BBR_UNIT - ((b->ecn_alpha * ECN_FACTOR) >> BBR_SCALE);
		ecn_inflight = (u32)(((u64)b->inflight_lo * cut) >> BBR_SCALE);
	}
	if (b->loss_in_round) {
		init_lower_bounds(b, true);
		b->bw_lo = max64(b->bw_latest, (b->bw_lo * BETA) >> BBR_SCALE);
		b->inflight_lo = max32(b->inflight_latest, (u32)(((u64)b->inflight_lo * BETA) >> BBR_SCALE));
	}
	b->inflight_lo = min32(b->inflight_lo, ecn_inflight);
	b->bw_lo = max64(b->bw_lo, 1);
}

/* UpdateMaxBw: app-limited samples only count if they raise the estimate. */
static __always_inline void update_congestion_signals(struct bbr3 *b, const struct ack_info *a)
{
	if (!a->valid || !a->acked_sacked)
		return;
	if (a->sample_bw && (a->sample_bw >= max_bw_of(b) || !a->app_limited))
		b->max_bw[1] = max64(b->max_bw[1], a->sample_bw);
	if (!b->loss_round_start)
		return;
	adapt_lower_bounds(b);
	b->loss_in_round = 0;
	b->ecn_in_round = 0;
}

/* AdvanceMaxBwFilter, keeping the old window if the new one is empty. */
static __always_inline void advance_max_bw_filter(struct bbr3 *b)
{
	if (!b->max_bw[1])
		return;
	b->max_bw[0] = b->max_bw[1];
	b->max_bw[1] = 0;
}

/* ---- The long-term model (inflight_hi) --------------------------------------------------- */

/* IsInflightTooHigh: loss > 2 % of the data in flight at send, or CE > 50 % (ECN-eligible). */
static __always_inline bool is_inflight_too_high(const struct bbr3 *b, u32 tx_in_flight, u32 lost,
						 u32 delivered, u32 delivered_ce)
{
	if (lost && tx_in_flight && (u64)lost * BBR_UNIT > (u64)tx_in_flight * LOSS_THRESH)
		return true;
	if (delivered_ce && delivered && b->ecn_eligible &&
	    delivered_ce > (((u64)delivered * ECN_THRESH) >> BBR_SCALE))
		return true;
	return false;
}

/* InflightAtLoss: where loss crossed the threshold inside the last `segs` packets:
 * inflight_prev + (thresh * inflight_prev - lost_prev) / (1 - thresh), rounded up. */
static __always_inline u32 inflight_at_loss(u32 tx_in_flight, u32 lost, u32 segs)
{
	u64 inflight_prev = tx_in_flight > segs ? tx_in_flight - segs : 0;
	u64 lost_prev = lost > segs ? lost - segs : 0;
	u64 budget = (inflight_prev * LOSS_THRESH + BBR_UNIT - 1) / BBR_UNIT;
	u64 prefix = lost_prev >= budget ? 0 : (budget - lost_prev) * BBR_UNIT / (BBR_UNIT - LOSS_THRESH);

	return (u32)min64(inflight_prev + prefix, INF_PKTS - 1);
}

/* StartProbeBW_DOWN (bbrlab_bbr_model.h's start_probe_bw_down); from UP it also schedules the
 * max_bw clock's advance, one round later (the simulator's rule, see the header). */
static __always_inline void go_probe_bw_down(struct sock *sk, struct bbr3 *b, u64 now_us)
{
	if (b->state == B3_PROBE_BW_UP)
		b->max_bw_advance_pending = 1;
	start_probe_bw_down(sk, b, now_us);
}

static __always_inline void start_probe_bw_up(struct sock *sk, struct bbr3 *b, const struct ack_info *a)
{
	b->ack_phase = ACK_PHASE_PROBE_STARTING;
	start_round(sk, b);
	full_bw_restart_from(b, a->sample_bw);
	b->cycle_stamp_us = a->now_us;
	b->state = B3_PROBE_BW_UP;
	raise_inflight_hi_slope(sk, b);
}

/* HandleInflightTooHigh: bound inflight_hi by the inflight that lost too much; leave UP. */
static __always_inline void handle_inflight_too_high(struct sock *sk, struct bbr3 *b, bool app_limited,
						     u32 tx_in_flight, u64 now_us)
{
	b->prev_probe_too_high = 1;
	b->bw_probe_samples = 0; /* react once per probe */
	__sync_fetch_and_add(&bbr3_last_ack.too_high_events, 1);
	if (!app_limited) {
		u32 beta_target = (u32)(((u64)target_inflight(sk, b) * BETA) >> BBR_SCALE);

		b->inflight_hi = max32(tx_in_flight, beta_target);
	}
	if (b->state == B3_PROBE_BW_UP) {
		b->undo_state = B3_PROBE_BW_UP;
		go_probe_bw_down(sk, b, now_us);
	}
}

/* Mainline stand-in for Google's .skb_marked_lost (header, item 3): run on an ACK whose
 * processing marked new losses, before the rest of the per-ACK update. */
static __always_inline void on_new_losses(struct sock *sk, struct bbr3 *b, const struct ack_info *a)
{
	note_loss(sk, b);
	if (!b->bw_probe_samples)
		return; /* not sent while probing for bandwidth */
	if (is_inflight_too_high(b, a->tx_in_flight, a->lost, 0, 0)) {
		u32 at_loss = inflight_at_loss(a->tx_in_flight, a->lost, min32(a->new_lost, a->lost));

		handle_inflight_too_high(sk, b, a->app_limited, at_loss, a->now_us);
	}
}

/* ProbeInflightLongtermUpward: grow inflight_hi while UP is using all of it. */
static __always_inline void probe_inflight_hi_upward(struct sock *sk, struct bbr3 *b, const struct ack_info *a)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	if (!is_cwnd_limited(tp) || tp->snd_cwnd < b->inflight_hi)
		return;
	b->bw_probe_up_acks += a->acked_sacked;
	if (b->bw_probe_up_acks >= b->bw_probe_up_cnt && b->bw_probe_up_cnt) {
		u32 delta = b->bw_probe_up_acks / b->bw_probe_up_cnt;

		b->bw_probe_up_acks -= delta * b->bw_probe_up_cnt;
		b->inflight_hi = (u32)min64((u64)b->inflight_hi + delta, INF_PKTS - 1);
	}
	if (b->round_start)
		raise_inflight_hi_slope(sk, b);
}

/* AdaptLongTermModel (+ Linux bbr_adapt_upper_bounds' per-ACK too-high check). Returns true
 * if it decided a state transition. */
static __always_inline bool adapt_long_term_model(struct sock *sk, struct bbr3 *b, const struct ack_info *a)
{
	if (b->ack_phase == ACK_PHASE_PROBE_STARTING && b->round_start)
		b->ack_phase = ACK_PHASE_PROBE_FEEDBACK; /* probe samples start arriving */
	if (b->max_bw_advance_pending && b->round_start && is_in_probe_bw(b) && !a->app_limited) {
		b->max_bw_advance_pending = 0;
		advance_max_bw_filter(b);
	}
	if (b->ack_phase == ACK_PHASE_PROBE_STOPPING && b->round_start) {
		b->bw_probe_samples = 0;
		b->ack_phase = ACK_PHASE_INIT;
		/* Precautionary probing: re-probe at once after a probe that stopped early. */
		if (is_in_probe_bw(b) && b->stopped_risky_probe && !b->prev_probe_too_high) {
			start_probe_bw_refill(sk, b, 0);
			return true;
		}
	}
	if (is_inflight_too_high(b, a->tx_in_flight, a->lost, a->delivered, a->delivered_ce)) {
		if (b->bw_probe_samples)
			handle_inflight_too_high(sk, b, a->app_limited, a->tx_in_flight, a->now_us);
		return false;
	}
	raise_inflight_hi(sk, b, a);
	return false;
}

/* ---- ProbeBW cycle ----------------------------------------------------------------------- */

/* IsTimeToProbeBW (+ Linux ECN re-probe). */
static __always_inline bool is_time_to_probe_bw(struct sock *sk, struct bbr3 *b, const struct ack_info *a)
{
	u32 reno_rounds;

	if (b->ecn_eligible && b->ecn_in_cycle && !b->loss_in_cycle && a->ca_state == TCP_CA_Open) {
		u64 v = ((u64)b->inflight_hi * ECN_REPROBE_GAIN) >> BBR_SCALE;
		u32 n = v ? ilog2_u64(v) : 0;

		start_probe_bw_refill(sk, b, min32(n, BW_PROBE_UP_ROUNDS_MAX));
		return true;
	}
	reno_rounds = min32(target_inflight(sk, b), BW_PROBE_MAX_ROUNDS);
	if (a->now_us > b->cycle_stamp_us + b->bw_probe_wait_us || b->rounds_since_probe >= reno_rounds) {
		start_probe_bw_refill(sk, b, 0);
		return true;
	}
	return false;
}

/* IsTimeToGoDown. */
static __always_inline bool is_time_to_go_down(struct sock *sk, struct bbr3 *b, u32 inflight, u64 sample_bw)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	if (b->prev_probe_too_high && inflight >= b->inflight_hi) {
		b->stopped_risky_probe = 1;
		return true;
	}
	if (is_cwnd_limited(tp) && tp->snd_cwnd >= b->inflight_hi)
		full_bw_restart_from(b, sample_bw); /* bw is limited by inflight_hi */
	else if (b->full_bw_now)
		return true; /* plateau: the path's bw is in use */
	return false;
}

static __always_inline void update_probe_bw_cycle_phase(struct sock *sk, struct bbr3 *b, const struct ack_info *a)
{
	u32 inflight;

	if (!b->full_bw_reached)
		return;
	if (adapt_long_term_model(sk, b, a))
		return;
	if (!is_in_probe_bw(b))
		return;
	inflight = packets_in_net_at_edt(sk, b, a->prior_in_flight);
	switch (b->state) {
	case B3_PROBE_BW_DOWN:
		if (is_time_to_probe_bw(sk, b, a))
			return;
		if (is_time_to_cruise(sk, b, inflight, max_bw_of(b)))
			b->state = B3_PROBE_BW_CRUISE;
		break;
	case B3_PROBE_BW_CRUISE:
		is_time_to_probe_bw(sk, b, a);
		break;
	case B3_PROBE_BW_REFILL:
		if (b->round_start) { /* one round of REFILL, then UP */
			b->bw_probe_samples = 1;
			start_probe_bw_up(sk, b, a);
		}
		break;
	case B3_PROBE_BW_UP:
		if (is_time_to_go_down(sk, b, inflight, a->sample_bw)) {
			b->prev_probe_too_high = 0;
			go_probe_bw_down(sk, b, a->now_us);
		}
		break;
	default:
		break;
	}
}

/* ---- Startup and Drain ------------------------------------------------------------------- */

static __always_inline void enter_startup(struct bbr3 *b)
{
	b->state = B3_STARTUP;
	b->pacing_gain = STARTUP_PACING_GAIN;
	b->cwnd_gain = STARTUP_CWND_GAIN;
}

static __always_inline void handle_queue_too_high_in_startup(struct sock *sk, struct bbr3 *b)
{
	b->undo_state = B3_STARTUP;
	b->full_bw_reached = 1;
	b->full_bw_now = 1;
	b->inflight_hi = max32(inflight_of(sk, b, max_bw_of(b), BBR_UNIT), b->inflight_latest);
}

static __always_inline void check_startup_done(struct sock *sk, struct bbr3 *b, const struct ack_info *a)
{
	struct tcp_sock *tp = tcp_sk(sk);

	/* Loss exit: at the end of a loss round in recovery, >= 6 loss events and loss > 2 %. */
	if (!b->full_bw_reached) {
		if (a->new_lost)
			b->loss_events_in_round = min32(b->loss_events_in_round + 1, 0xF);
		if (b->loss_round_start && a->ca_state == TCP_CA_Recovery &&
		    b->loss_events_in_round >= STARTUP_FULL_LOSS_CNT &&
		    is_inflight_too_high(b, a->tx_in_flight, a->lost, 0, 0))
			handle_queue_too_high_in_startup(sk, b);
		else if (b->loss_round_start)
			b->loss_events_in_round = 0;
	}
	if (b->state == B3_STARTUP && b->full_bw_reached) {
		b->state = B3_DRAIN;
		b->pacing_gain = DRAIN_PACING_GAIN;
		b->cwnd_gain = DEFAULT_CWND_GAIN;
		b->drain_start_round = b->round_count;
		tp->snd_ssthresh = inflight_of(sk, b, max_bw_of(b), BBR_UNIT);
		reset_congestion_signals(b);
	}
}

static __always_inline void check_drain_done(struct sock *sk, struct bbr3 *b, u64 now_us)
{
	u32 inflight;

	if (b->state != B3_DRAIN)
		return;
	inflight = packets_in_net_at_edt(sk, b, packets_in_flight(tcp_sk(sk)));
	if (inflight <= inflight_of(sk, b, max_bw_of(b), BBR_UNIT) ||
	    b->round_count > b->drain_start_round + DRAIN_MAX_ROUNDS) {
		b->cwnd_gain = DEFAULT_CWND_GAIN;
		go_probe_bw_down(sk, b, now_us);
	}
}

/* bbr_update_ecn_alpha (+ Startup's ECN exit), once per round. */
static __always_inline void update_ecn_alpha(struct sock *sk, struct bbr3 *b)
{
	struct tcp_sock *tp = tcp_sk(sk);
	u64 ratio;

	if (!b->ecn_eligible && (tp->ecn_flags & TCP_ECN_OK) && b->min_rtt_us <= ECN_MAX_RTT_US)
		b->ecn_eligible = 1;
	if (!b->ecn_eligible)
		return;
	if (!update_ecn_ewma(tp, b, &ratio))
		return;
	if (!b->full_bw_reached) {
		b->ecn_startup_rounds = ratio >= ECN_THRESH ? b->ecn_startup_rounds + 1 : 0;
		if (b->ecn_startup_rounds >= FULL_ECN_CNT)
			handle_queue_too_high_in_startup(sk, b);
	}
}

/* ---- min_rtt and ProbeRTT ---------------------------------------------------------------- */

/* ExitProbeRTT (after CheckProbeRTTDone, bbrlab_bbr_model.h). */
static __always_inline void exit_probe_rtt(struct sock *sk, struct bbr3 *b, u64 now_us)
{
	if (b->full_bw_reached) {
		go_probe_bw_down(sk, b, now_us);
		b->state = B3_PROBE_BW_CRUISE;
	} else {
		enter_startup(b);
	}
}

static __always_inline void update_min_rtt_and_probe_rtt(struct sock *sk, struct bbr3 *b, const struct ack_info *a,
							 long rtt_us, bool is_ack_delayed)
{
	u64 now = a->now_us;
	bool expired = now > b->probe_rtt_min_stamp_us + PROBE_RTT_WIN_US;

	/* The 5 s sub-window: a lower sample (strictly, Linux v3), or any once expired. */
	if (rtt_us >= 0 && (rtt_us < b->probe_rtt_min_us || (expired && !is_ack_delayed))) {
		b->probe_rtt_min_us = (u32)min64((u64)rtt_us, INF_PKTS - 1);
		b->probe_rtt_min_stamp_us = now;
	}
	update_min_rtt_from_probe_rtt_min(b, now);
	if (expired && !b->idle_restart && b->state != B3_PROBE_RTT) {
		if (b->state == B3_PROBE_BW_UP)
			b->max_bw_advance_pending = 1;
		b->state = B3_PROBE_RTT;
		b->pacing_gain = BBR_UNIT;
		b->cwnd_gain = PROBE_RTT_CWND_GAIN;
		save_cwnd(sk, b);
		b->probe_rtt_done_us = 0;
		b->ack_phase = ACK_PHASE_PROBE_STOPPING;
		start_round(sk, b);
	}
	handle_probe_rtt(sk, b, now);
	if (a->delivered > 0)
		b->idle_restart = 0;
}

/* ---- cwnd -------------------------------------------------------------------------------- */

static __always_inline void set_cwnd(struct sock *sk, struct bbr3 *b, const struct ack_info *a)
{
	struct tcp_sock *tp = tcp_sk(sk);
	u32 cwnd = tp->snd_cwnd;

	if (b->prev_ca_state >= TCP_CA_Recovery && a->ca_state < TCP_CA_Recovery)
		cwnd = max32(cwnd, b->prior_cwnd); /* RestoreCwnd on leaving recovery */
	if (a->acked_sacked) {
		u64 target = (u64)bdp_multiple(b, bw_of(b), b->cwnd_gain) + extra_acked_cwnd(b);
		u32 max_inflight = quantization_budget(sk, b, (u32)min64(target, INF_PKTS - 1));

		if (b->full_bw_reached)
			cwnd = min32(cwnd + a->acked_sacked, max_inflight);
		else if (cwnd < max_inflight || tp->delivered < b->init_cwnd)
			cwnd = cwnd + a->acked_sacked;
		cwnd = max32(cwnd, CWND_MIN_TARGET);
	}
	cwnd = bound_cwnd(tp, b, cwnd);
	tp->snd_cwnd = cwnd;
	b->cur_cwnd = cwnd;
}

/* ---- struct_ops hooks -------------------------------------------------------------------- */

SEC("struct_ops")
void BPF_PROG(bbr3_init, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr3 *b = new_state_of(sk);
	u64 now = tp->tcp_mstamp;
	u32 min_rtt = tp->rtt_min.s[0].v;

	if (!b)
		return;
	__builtin_memset(b, 0, sizeof(*b));
	init_model(sk, b, now, min_rtt);
	b->cur_cwnd = tp->snd_cwnd;
	b->bw_probe_up_cnt = INF_PKTS;
	b->undo_state = B3_UNDO_NONE;
	init_pacing_rate_from_rtt(sk, b);
	enter_startup(b);
	/* Let the kernel's internal pacing enforce sk_pacing_rate (no fq qdisc needed). */
	sk->sk_pacing_status = SK_PACING_NEEDED;
}

SEC("struct_ops")
void BPF_PROG(bbr3_cong_control, struct sock *sk, u32 ack, int flag, const struct rate_sample *rs)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr3 *b = state_of(sk);
	struct ack_info a = {};
	u32 gain_p, gain_c;

	if (!b)
		return;
	b->cur_cwnd = tp->snd_cwnd;
	read_rate_sample(sk, rs, &a);
	if (a.valid) {
		u64 prior_max = max_bw_of(b);

		a.sample_bw = sample_bw_of(&a, rs);
		if (rs->is_retrans)
			NOTE_RATE_SAMPLE(bbr3_rate_retrans, a.sample_bw, prior_max, a.app_limited);
		else
			NOTE_RATE_SAMPLE(bbr3_rate_clean, a.sample_bw, prior_max, a.app_limited);
	}
	read_stand_ins(tp, b, &a);
	tx_ring_estimate(b->tx_ring, tp, a.prior_delivered, a.prior_in_flight, a.new_lost, &a.tx_in_flight,
			 &a.lost);

	/* Mainline stand-in for .skb_marked_lost (header, item 3). */
	if (a.new_lost)
		on_new_losses(sk, b, &a);

	update_round(sk, b, &a);
	if (b->round_start) {
		b->round_count++;
		b->rounds_since_probe++;
		update_ecn_alpha(sk, b);
	}
	if (b->ecn_eligible && a.ce_now)
		b->ecn_in_round = 1;
	update_latest_delivery_signals(sk, b, &a);
	update_congestion_signals(b, &a);
	update_ack_aggregation(sk, b, &a, a.now_us);
	check_full_bw_reached(b, &a);
	check_startup_done(sk, b, &a);
	check_drain_done(sk, b, a.now_us);
	update_probe_bw_cycle_phase(sk, b, &a);
	update_min_rtt_and_probe_rtt(sk, b, &a, rs->rtt_us, rs->is_ack_delayed);
	advance_latest_delivery_signals(b, &a);

	/* Gains of the state. */
	switch (b->state) {
	case B3_STARTUP:
		gain_p = STARTUP_PACING_GAIN;
		gain_c = STARTUP_CWND_GAIN;
		break;
	case B3_DRAIN:
		gain_p = DRAIN_PACING_GAIN;
		gain_c = DEFAULT_CWND_GAIN;
		break;
	case B3_PROBE_BW_DOWN:
		gain_p = DOWN_PACING_GAIN;
		gain_c = DEFAULT_CWND_GAIN;
		break;
	case B3_PROBE_BW_UP:
		gain_p = UP_PACING_GAIN;
		gain_c = UP_CWND_GAIN;
		break;
	case B3_PROBE_RTT:
		gain_p = BBR_UNIT;
		gain_c = PROBE_RTT_CWND_GAIN;
		break;
	default: /* CRUISE, REFILL */
		gain_p = BBR_UNIT;
		gain_c = DEFAULT_CWND_GAIN;
		break;
	}
	b->pacing_gain = gain_p;
	b->cwnd_gain = gain_c;

	set_pacing_rate(sk, b, bw_of(b), b->pacing_gain);
	set_cwnd(sk, b, &a);
	if (b->prev_ca_state >= TCP_CA_Recovery && a.ca_state < TCP_CA_Recovery)
		b->undo_state = B3_UNDO_NONE; /* the loss episode is over */
	finish_ack(b, &a);
	tx_ring_record(b->tx_ring, &b->tx_ring_head, &b->tx_ring_last_delivered, tp, a.prior_in_flight);

	bbr3_last_ack.bw = bw_of(b);
	bbr3_last_ack.stamp_us = a.now_us;
	note_ack_diag(&bbr3_last_ack.model, b, &a, tp);
}

/* RTO: cwnd = inflight + 1 (the kernel has already cut), reset the full-bw detector and seed
 * inflight_lo from the pre-RTO cwnd when not probing (Linux bbr_set_state). */
SEC("struct_ops")
void BPF_PROG(bbr3_set_state, struct sock *sk, u8 new_state)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr3 *b = state_of(sk);
	u32 loss_cwnd;

	if (!b || new_state != TCP_CA_Loss)
		return;
	loss_cwnd = packets_in_flight(tp) + 1;
	if (tp->snd_cwnd > loss_cwnd)
		tp->snd_cwnd = loss_cwnd;
	full_bw_reset(b);
	if (!is_probing_bw(b) && b->inflight_lo == INF_PKTS)
		b->inflight_lo = max32(tp->snd_cwnd, b->prior_cwnd);
	b->prev_ca_state = TCP_CA_Loss;
}

/* Spurious loss: restore the model, and re-probe if the loss ended Startup or UP. */
SEC("struct_ops")
u32 BPF_PROG(bbr3_undo_cwnd, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr3 *b = state_of(sk);

	if (!b)
		return tp->snd_cwnd;
	b->loss_in_round = 0;
	full_bw_reset(b);
	restore_state_upon_undo(b);
	if (b->undo_state == B3_STARTUP && b->state != B3_STARTUP) {
		b->full_bw_reached = 0;
		if (b->state != B3_PROBE_RTT)
			enter_startup(b);
	} else if (b->undo_state == B3_PROBE_BW_UP && b->state != B3_PROBE_BW_UP) {
		if (b->state != B3_PROBE_RTT)
			start_probe_bw_refill(sk, b, 0);
	}
	b->undo_state = B3_UNDO_NONE;
	return max32(tp->snd_cwnd, b->prior_cwnd);
}

/* The struct_ops, with the hooks both ports share (ssthresh, cwnd_event, min_tso_segs). */
#define BBR_PORT bbr3
#define BBR_OPS bbr3_linux
#include "bbrlab_bbr_ops.h"
