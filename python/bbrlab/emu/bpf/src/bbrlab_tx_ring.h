/* SPDX-License-Identifier: (MIT OR Apache-2.0) */
/*
 * The mainline stand-in for rs->tx_in_flight and rs->lost that bbr2.bpf.c and bbr3_linux.bpf.c
 * share (their headers, items 1-2): a ring of TX_RING snapshots {tp->delivered, tp->lost, in
 * flight} taken on ACKs about TX_RING_PER_WINDOW times per window. The sampled packet's
 * tx_in_flight is the in-flight of the newest snapshot at or before rs->prior_delivered, its
 * losses tp->lost now minus that snapshot's; rs->prior_in_flight and this ACK's new losses when
 * the ring has none.
 *
 * The including port defines TX_RING (a power of two) and TX_RING_PER_WINDOW first: their
 * values differ by port, and each port's header says why.
 */
#ifndef BBRLAB_TX_RING_H
#define BBRLAB_TX_RING_H

#include "bbrlab_tcp_ca.h"

struct tx_snap {
	__u32 delivered;
	__u32 lost;
	__u32 in_flight;
	__u32 valid;
};

/* The sampled packet's tx_in_flight and the losses since its send, into *tx_in_flight and
 * *lost: from the newest snapshot of `ring` at or before prior_delivered, else prior_in_flight
 * and new_lost. */
static __always_inline void tx_ring_estimate(const struct tx_snap *ring, const struct tcp_sock *tp,
					     __u32 prior_delivered, __u32 prior_in_flight, __u32 new_lost,
					     __u32 *tx_in_flight, __u32 *lost)
{
	__u32 best_delivered = 0, best_lost = 0, best_in_flight = 0;
	bool found = false;

	for (int i = 0; i < TX_RING; i++) {
		const struct tx_snap *s = &ring[i];

		if (!s->valid || !seq_after_eq(prior_delivered, s->delivered))
			continue;
		if (!found || seq_after_eq(s->delivered, best_delivered)) {
			found = true;
			best_delivered = s->delivered;
			best_lost = s->lost;
			best_in_flight = s->in_flight;
		}
	}
	if (found) {
		*tx_in_flight = best_in_flight;
		*lost = tp->lost - best_lost;
	} else {
		*tx_in_flight = prior_in_flight;
		*lost = new_lost;
	}
}

/* About TX_RING_PER_WINDOW times per window, remember {delivered, lost, in flight} in `ring`
 * at *head (the next slot), *last_delivered being tp->delivered at the last snapshot. */
static __always_inline void tx_ring_record(struct tx_snap *ring, __u32 *head, __u32 *last_delivered,
					   const struct tcp_sock *tp, __u32 prior_in_flight)
{
	__u32 step = max32(tp->snd_cwnd / TX_RING_PER_WINDOW, 1);
	__u32 idx;

	if (tp->delivered - *last_delivered < step && ring[0].valid)
		return;
	idx = *head & (TX_RING - 1);
	ring[idx].delivered = tp->delivered;
	ring[idx].lost = tp->lost;
	ring[idx].in_flight = prior_in_flight;
	ring[idx].valid = 1;
	*head = idx + 1;
	*last_delivered = tp->delivered;
}

#endif
