// SPDX-License-Identifier: (MIT OR Apache-2.0)
/*
 * DCTCP (RFC 8257) as a BPF struct_ops congestion control, behaving as Linux
 * net/ipv4/tcp_dctcp.c does — the kernel's real algorithm on a kernel built without the
 * tcp_dctcp module. The simulator's DCTCP is crates/cc/src/dctcp.rs; the two follow the same
 * kernel file hook for hook and their differences are listed below.
 *
 * Model. The bottleneck CE-marks ECN-capable packets when its instantaneous queue exceeds a
 * small threshold K; the receiver echoes the marks; once per window of data the sender updates
 *
 *     alpha <- (1 - g)·alpha + g·F,   g = 1/16,                          (RFC 8257 §3.3)
 *
 * where F is the fraction of the segments delivered in that window that carried CE, and on
 * congestion (an ACK carrying ECE, at most once per window: the kernel's CWR state) it sets
 * ssthresh = cwnd·(1 - alpha/2). A queue that stays above K drives alpha to 1 and Reno's halving;
 * a queue touching K briefly gives small cuts, so the queue oscillates tightly around K at full
 * utilisation. Growth is Reno's; loss is answered as Reno does (halving, RFC 8257 §3.5).
 *
 * Hooks, as in tcp_dctcp.c:
 * - init: alpha = 1.0 (dctcp_alpha_on_init = DCTCP_MAX_ALPHA = 1024, 10 fractional bits), CE
 *   state 0, a new observation window starting at snd_nxt. Only when ECN was negotiated (or the
 *   socket is listening/closed, as the kernel's condition reads); otherwise the connection falls
 *   back to Reno.
 * - in_ack_event (dctcp_update_alpha): once snd_una has passed the snd_nxt of the last update,
 *   alpha -= min_not_zero(alpha, alpha >> 4); alpha += (delivered_ce << 6) / delivered, clamped
 *   to 1024, with delivered / delivered_ce the increments of tp->delivered / tp->delivered_ce.
 * - ssthresh: max(cwnd - (cwnd·alpha >> 11), 2), remembering loss_cwnd for undo.
 * - set_state: entering Recovery -> ssthresh = max(cwnd/2, 2) (dctcp_react_to_loss).
 * - cwnd_event: CA_EVENT_LOSS (RTO) -> the same; CA_EVENT_ECN_IS_CE / ECN_NO_CE -> the
 *   receiver's CE state machine (dctcp_ece_ack_update, include/net/tcp_dctcp.h): when the CE
 *   state of arriving data changes, a delayed ACK still pending is sent first with the *old*
 *   ECE state for the old rcv_nxt, then an immediate ACK is forced; ECE on outgoing ACKs follows
 *   the state of the last data packet (TCP_ECN_DEMAND_CWR set or cleared). This is how the
 *   receiver echoes the exact marked fraction with one ECE bit.
 * - undo_cwnd: max(cwnd, loss_cwnd). cong_avoid: the kernel's tcp_reno_cong_avoid (a kfunc).
 * - flags: TCP_CONG_NEEDS_ECN, so the SYN asks for ECN whatever net.ipv4.tcp_ecn says.
 *
 * Where the kernel's code is not available to BPF, the closest mainline-BPF equivalent:
 * - __tcp_send_ack(sk, prior_rcv_nxt) -> the bpf_tcp_send_ack() helper (the same function).
 * - Fallback without ECN: the kernel swaps icsk_ca_ops to its internal `dctcp_reno` and clears
 *   ECT on outgoing packets (INET_ECN_dontxmit). BPF can do neither: it switches the socket to
 *   the stock "reno" with bpf_setsockopt(TCP_CONGESTION) and cannot clear ECT (harmless: a
 *   non-ECN peer ignores it, and bbrlab's runs always negotiate ECN for this algorithm).
 * - No get_info (BPF congestion controls cannot provide TCP_CC_INFO), so `ss -ti` shows no
 *   dctcp:(alpha,...) section; no PLB (Protective Load Balancing: tcp_plb_* are not exported;
 *   PLB is off by default, net.ipv4.tcp_plb_enabled = 0, so the stock module does nothing there).
 *
 * Differences from the simulator (crates/cc/src/dctcp.rs):
 * - The window end is snd_una >= snd_nxt-at-last-update here (as the kernel); the simulator
 *   counts delivered segments (it has no snd_nxt). Identical without loss.
 * - The simulator's echo is an exact cumulative CE count; here it is the kernel's one-bit ECE
 *   with the CE-state ACK machine above, which is exact except when ACKs are lost.
 */

#include "bbrlab_tcp_ca.h"

char _license[] SEC("license") = "GPL";

/* DCTCP_MAX_ALPHA: alpha's fixed-point scale, 1024 = 1.0 (10 fractional bits). */
#define DCTCP_MAX_ALPHA 1024U
/* dctcp_shift_g = 4: g = 1/16, RFC 8257 §4.2's recommended gain. */
#define DCTCP_SHIFT_G 4
/* dctcp_alpha_on_init: start at alpha = 1.0 (Reno-sized cuts until alpha has learnt). */
#define DCTCP_ALPHA_ON_INIT DCTCP_MAX_ALPHA
/* The minimum ssthresh / cwnd after a reduction, segments (the kernel's 2U). */
#define DCTCP_MIN_CWND 2U

/* The stock algorithm a connection without ECN falls back to. */
static const char fallback_cc[] = "reno";

/* Per-connection state in icsk_ca_priv (struct dctcp in tcp_dctcp.c, less PLB). */
struct dctcp {
	__u32 old_delivered;
	__u32 old_delivered_ce;
	__u32 prior_rcv_nxt;
	__u32 alpha;
	__u32 next_seq;
	__u32 ce_state;
	__u32 loss_cwnd;
};

static __always_inline void dctcp_reset(const struct tcp_sock *tp, struct dctcp *ca)
{
	ca->next_seq = tp->snd_nxt;
	ca->old_delivered = tp->delivered;
	ca->old_delivered_ce = tp->delivered_ce;
}

SEC("struct_ops")
void BPF_PROG(dctcp_init, struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct dctcp *ca = inet_csk_ca(sk);
	int state = sk->__sk_common.skc_state;

	if ((tp->ecn_flags & TCP_ECN_OK) || state == TCP_LISTEN || state == TCP_CLOSE) {
		ca->prior_rcv_nxt = tp->rcv_nxt;
		ca->alpha = DCTCP_ALPHA_ON_INIT < DCTCP_MAX_ALPHA ? DCTCP_ALPHA_ON_INIT : DCTCP_MAX_ALPHA;
		ca->loss_cwnd = 0;
		ca->ce_state = 0;
		dctcp_reset(tp, ca);
		return;
	}
	bpf_setsockopt(sk, SOL_TCP, TCP_CONGESTION, (void *)fallback_cc, sizeof(fallback_cc));
}

SEC("struct_ops")
__u32 BPF_PROG(dctcp_ssthresh, struct sock *sk)
{
	struct dctcp *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	__u32 cwnd = tp->snd_cwnd;
	__u32 next = cwnd - ((cwnd * ca->alpha) >> 11U);

	ca->loss_cwnd = cwnd;
	return next > DCTCP_MIN_CWND ? next : DCTCP_MIN_CWND;
}

SEC("struct_ops")
void BPF_PROG(dctcp_update_alpha, struct sock *sk, __u32 flags)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct dctcp *ca = inet_csk_ca(sk);

	/* The window outstanding at the last update has been acknowledged. */
	if (!before(tp->snd_una, ca->next_seq)) {
		__u32 delivered = tp->delivered - ca->old_delivered;
		__u32 delivered_ce = tp->delivered_ce - ca->old_delivered_ce;
		__u32 alpha = ca->alpha;
		__u32 decay = alpha >> DCTCP_SHIFT_G;

		/* alpha = (1 - g)·alpha + g·F; min_not_zero lets a tiny alpha reach 0. */
		alpha -= decay ? (decay < alpha ? decay : alpha) : alpha;
		if (delivered_ce) {
			delivered_ce <<= (10 - DCTCP_SHIFT_G);
			delivered_ce /= delivered > 1 ? delivered : 1;
			alpha += delivered_ce;
			if (alpha > DCTCP_MAX_ALPHA)
				alpha = DCTCP_MAX_ALPHA;
		}
		ca->alpha = alpha;
		dctcp_reset(tp, ca);
	}
}

static __always_inline void dctcp_react_to_loss(struct sock *sk)
{
	struct dctcp *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	__u32 half = tp->snd_cwnd >> 1U;

	ca->loss_cwnd = tp->snd_cwnd;
	tp->snd_ssthresh = half > DCTCP_MIN_CWND ? half : DCTCP_MIN_CWND;
}

SEC("struct_ops")
void BPF_PROG(dctcp_state, struct sock *sk, __u8 new_state)
{
	/* RTO is handled in cwnd_event (CA_EVENT_LOSS): one loss adjustment per RTT. */
	if (new_state == TCP_CA_Recovery && new_state != inet_csk(sk)->icsk_ca_state)
		dctcp_react_to_loss(sk);
}

/* ECE on outgoing ACKs follows CE state `ce_state` (tcp_dctcp.h dctcp_ece_ack_cwr). */
static __always_inline void dctcp_ece_ack_cwr(struct sock *sk, __u32 ce_state)
{
	struct tcp_sock *tp = tcp_sk(sk);

	if (ce_state == 1)
		tp->ecn_flags |= TCP_ECN_DEMAND_CWR;
	else
		tp->ecn_flags &= ~TCP_ECN_DEMAND_CWR;
}

/* The receiver's CE state machine (tcp_dctcp.h dctcp_ece_ack_update): state 1 = the last data
 * packet carried CE. On a change, send the pending delayed ACK first with the prior state, for
 * the prior rcv_nxt, then force an immediate ACK reflecting the new state. */
static __always_inline void dctcp_ece_ack_update(struct sock *sk, enum tcp_ca_event evt, struct dctcp *ca)
{
	__u32 new_ce_state = evt == CA_EVENT_ECN_IS_CE ? 1 : 0;

	if (ca->ce_state != new_ce_state) {
		if (inet_csk(sk)->icsk_ack.pending & ICSK_ACK_TIMER) {
			dctcp_ece_ack_cwr(sk, ca->ce_state);
			bpf_tcp_send_ack(sk, ca->prior_rcv_nxt);
		}
		inet_csk(sk)->icsk_ack.pending |= ICSK_ACK_NOW;
	}
	ca->prior_rcv_nxt = tcp_sk(sk)->rcv_nxt;
	ca->ce_state = new_ce_state;
	dctcp_ece_ack_cwr(sk, new_ce_state);
}

SEC("struct_ops")
void BPF_PROG(dctcp_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
	struct dctcp *ca = inet_csk_ca(sk);

	switch (ev) {
	case CA_EVENT_ECN_IS_CE:
	case CA_EVENT_ECN_NO_CE:
		dctcp_ece_ack_update(sk, ev, ca);
		break;
	case CA_EVENT_LOSS:
		dctcp_react_to_loss(sk);
		break;
	default:
		break;
	}
}

SEC("struct_ops")
__u32 BPF_PROG(dctcp_cwnd_undo, struct sock *sk)
{
	const struct dctcp *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);

	return tp->snd_cwnd > ca->loss_cwnd ? tp->snd_cwnd : ca->loss_cwnd;
}

SEC("struct_ops")
void BPF_PROG(dctcp_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	tcp_reno_cong_avoid(sk, ack, acked);
}

/* Legacy section name: libbpf 1.1 (Debian 12) does not know ".struct_ops.link"; the loader
 * creates the map with BPF_F_LINK and registers it through a link, which is what libbpf >= 1.2
 * does for ".struct_ops.link" (see bbrlab.emu.bpf.loader). */
SEC(".struct_ops")
struct tcp_congestion_ops dctcp = {
	.init = (void *)dctcp_init,
	.in_ack_event = (void *)dctcp_update_alpha,
	.cwnd_event = (void *)dctcp_cwnd_event,
	.ssthresh = (void *)dctcp_ssthresh,
	.cong_avoid = (void *)dctcp_cong_avoid,
	.undo_cwnd = (void *)dctcp_cwnd_undo,
	.set_state = (void *)dctcp_state,
	.flags = TCP_CONG_NEEDS_ECN,
	.name = BBRLAB_CA_NAME,
};
