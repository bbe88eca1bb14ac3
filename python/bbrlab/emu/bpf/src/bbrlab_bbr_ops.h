/* SPDX-License-Identifier: (MIT OR Apache-2.0) */
/*
 * The struct_ops that bbr2.bpf.c and bbr3_linux.bpf.c register, and the three hooks whose rules
 * v2alpha and v3 share: ssthresh (save the model for a spurious episode's undo, keep ssthresh:
 * BBR does not cut on entering recovery), cwnd_event (the restart from idle) and min_tso_segs
 * (bbr_min_tso_segs: the stack sizes the bursts, the ports' headers, item 6).
 *
 * The including port includes this last, after bbrlab_bbr_model.h and its own hooks, and
 * defines first: BBR_PORT (the prefix of its hooks' names: BBR_PORT_init, _cong_control,
 * _set_state, _undo_cwnd are its own, BBR_PORT_ssthresh, _cwnd_event, _min_tso_segs come from
 * here), BBR_OPS (the name of its struct_ops map) and check_probe_rtt_done(sk, b, now_us) (its
 * ProbeRTT exit, which the restart from idle may take).
 */
#ifndef BBRLAB_BBR_OPS_H
#define BBRLAB_BBR_OPS_H

/* BBR_HOOK(ssthresh) is BBR_PORT_ssthresh; BBR_PROG expands it before BPF_PROG pastes it. */
#define BBR_HOOK(name) BBR_HOOK_(BBR_PORT, name)
#define BBR_HOOK_(port, name) BBR_HOOK__(port, name)
#define BBR_HOOK__(port, name) port##_##name
#define BBR_PROG(name, args...) BPF_PROG(name, args)

/* bbr2_ssthresh, bbr_ssthresh (draft SaveStateUponLoss on entering recovery or RTO). */
SEC("struct_ops")
u32 BBR_PROG(BBR_HOOK(ssthresh), struct sock *sk)
{
	BBR_STATE *b = state_of(sk);

	if (b) {
		save_state_upon_loss(sk, b);
	}
	return tcp_sk(sk)->snd_ssthresh;
}

/* bbr_cwnd_event: on a restart from idle while app-limited, pace at exactly bw in ProbeBW, and
 * end a ProbeRTT whose hold is over. */
SEC("struct_ops")
void BBR_PROG(BBR_HOOK(cwnd_event), struct sock *sk, enum tcp_ca_event event)
{
	struct tcp_sock *tp = tcp_sk(sk);
	BBR_STATE *b = state_of(sk);

	if (!b || !restart_from_idle(tp, b, event))
		return;
	if (is_in_probe_bw(b))
		set_pacing_rate(sk, b, bw_of(b), BBR_UNIT);
	else if (b->state == BBR_PHASE(PROBE_RTT))
		check_probe_rtt_done(sk, b, tp->tcp_mstamp);
}

SEC("struct_ops")
u32 BBR_PROG(BBR_HOOK(min_tso_segs), struct sock *sk)
{
	return min_tso_segs(sk->sk_pacing_rate);
}

/* Legacy section name on purpose: libbpf 1.1 (Debian 12) skips ".struct_ops.link"; the
 * package's loader sets BPF_F_LINK on this map and registers it through a link it holds, so the
 * kernel unregisters it when the runner ends. (`bpftool struct_ops register` of a port's object
 * registers it without a link: remove it with `bpftool struct_ops unregister name <BBR_OPS>`.) */
SEC(".struct_ops")
struct tcp_congestion_ops BBR_OPS = {
	.init = (void *)BBR_HOOK(init),
	.cong_control = (void *)BBR_HOOK(cong_control),
	.ssthresh = (void *)BBR_HOOK(ssthresh),
	.set_state = (void *)BBR_HOOK(set_state),
	.undo_cwnd = (void *)BBR_HOOK(undo_cwnd),
	.cwnd_event = (void *)BBR_HOOK(cwnd_event),
	.min_tso_segs = (void *)BBR_HOOK(min_tso_segs),
	.name = BBRLAB_CA_NAME,
};

#endif
