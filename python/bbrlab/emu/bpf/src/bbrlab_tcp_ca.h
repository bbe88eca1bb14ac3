/* SPDX-License-Identifier: (MIT OR Apache-2.0) */
/*
 * What every bbrlab BPF congestion control shares: the kernel types (vmlinux.h, generated from
 * the running kernel's BTF by bbrlab.emu.bpf.build), the libbpf macros, the few kernel
 * constants that are #defines (and so absent from BTF), the accessors the kernel writes as
 * inline functions, small arithmetic helpers, and the placeholder the loader replaces with the
 * per-run name.
 */
#ifndef BBRLAB_TCP_CA_H
#define BBRLAB_TCP_CA_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

/* The ops' `name`: exactly 15 characters (TCP_CA_NAME_MAX = 16 with the NUL). The loader
 * (bbrlab.emu.bpf.loader) replaces these bytes in the object with a unique per-run name before
 * libbpf opens it, so two runs never collide and a leftover is recognisable. */
#define BBRLAB_CA_NAME "bbrlab_ca_name_"

/* Phases: mainline does not let a BPF congestion control fill TCP_CC_INFO
 * (.get_info is not supported for struct_ops), so a port whose algorithm has phases beyond what
 * TCP_INFO shows (ca_state, cwnd < ssthresh) keeps its per-socket state in the object's one
 * BPF_MAP_TYPE_SK_STORAGE map with a u32 at offset 0 of the value: the flow's phase code, an index
 * into the registry's phase table of the algorithm (crates/cc/src/phases.rs). The emu runner
 * looks the value up with the socket's descriptor as the key (bbrlab.emu.bpf.loader). A port
 * without such a map is reported from TCP_INFO, as the loss-based algorithms are. */

/* A port's per-socket state ("Phases" above): the sk-storage map `map` of `value_type` values,
 * state_of(sk) (NULL until init made it) and new_state_of(sk) (made now if missing; init's). */
#define BBRLAB_SK_STATE(value_type, map)                                                          \
	struct {                                                                                  \
		__uint(type, BPF_MAP_TYPE_SK_STORAGE);                                            \
		__uint(map_flags, BPF_F_NO_PREALLOC);                                             \
		__type(key, int);                                                                 \
		__type(value, value_type);                                                        \
	} map SEC(".maps");                                                                       \
	static __always_inline value_type *state_of(struct sock *sk)                              \
	{                                                                                         \
		return bpf_sk_storage_get(&map, sk, 0, 0);                                        \
	}                                                                                         \
	static __always_inline value_type *new_state_of(struct sock *sk)                          \
	{                                                                                         \
		return bpf_sk_storage_get(&map, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);              \
	}

/* include/net/tcp.h and include/uapi/linux/tcp.h: #defines, not in BTF. */
#define TCP_ECN_OK 1
#define TCP_ECN_QUEUE_CWR 2
#define TCP_ECN_DEMAND_CWR 4
#define TCP_CONG_NEEDS_ECN 0x2
#define SOL_TCP 6
#define TCP_CONGESTION 13
/* include/net/tcp.h: the ssthresh of a connection that has not left slow start. */
#define TCP_INFINITE_SSTHRESH 0x7fffffff

/* include/vdso/time64.h (unsigned long long here: the ports multiply u64 times by them). */
#define USEC_PER_MSEC 1000ULL
#define USEC_PER_SEC 1000000ULL
#define NSEC_PER_USEC 1000ULL
#define NSEC_PER_MSEC 1000000ULL
#define NSEC_PER_SEC 1000000000ULL

static __always_inline struct tcp_sock *tcp_sk(const struct sock *sk)
{
	return (struct tcp_sock *)sk;
}

static __always_inline struct inet_connection_sock *inet_csk(const struct sock *sk)
{
	return (struct inet_connection_sock *)sk;
}

/* The algorithm's private area (ICSK_CA_PRIV_SIZE bytes) inside the socket. */
static __always_inline void *inet_csk_ca(const struct sock *sk)
{
	return (void *)inet_csk(sk)->icsk_ca_priv;
}

/* The connection's TCP_CA_* state (Open, Disorder, CWR, Recovery, Loss). */
static __always_inline __u32 ca_state_of(const struct sock *sk)
{
	return inet_csk(sk)->icsk_ca_state;
}

/* include/net/tcp.h: is seq1 before seq2 (modulo 2^32)? */
static __always_inline bool before(__u32 seq1, __u32 seq2)
{
	return (__s32)(seq1 - seq2) < 0;
}

static __always_inline __u64 min64(__u64 a, __u64 b) { return a < b ? a : b; }
static __always_inline __u64 max64(__u64 a, __u64 b) { return a > b ? a : b; }
static __always_inline __u32 min32(__u32 a, __u32 b) { return a < b ? a : b; }
static __always_inline __u32 max32(__u32 a, __u32 b) { return a > b ? a : b; }

/* a is at or after b in u32 sequence space (Linux !before(a, b)). */
static __always_inline bool seq_after_eq(__u32 a, __u32 b)
{
	return (__s32)(a - b) >= 0;
}

/* tcp_packets_in_flight(): packets_out - (sacked_out + lost_out) + retrans_out. */
static __always_inline __u32 packets_in_flight(const struct tcp_sock *tp)
{
	return tp->packets_out - (tp->sacked_out + tp->lost_out) + tp->retrans_out;
}

/* Kernel functions exported to BPF congestion controls (kfuncs, net/ipv4/bpf_tcp_ca.c). */
extern void tcp_reno_cong_avoid(struct sock *sk, __u32 ack, __u32 acked) __ksym;
extern __u32 tcp_reno_ssthresh(struct sock *sk) __ksym;
extern __u32 tcp_reno_undo_cwnd(struct sock *sk) __ksym;
extern __u32 tcp_slow_start(struct tcp_sock *tp, __u32 acked) __ksym;
extern void tcp_cong_avoid_ai(struct tcp_sock *tp, __u32 w, __u32 acked) __ksym;

#endif
