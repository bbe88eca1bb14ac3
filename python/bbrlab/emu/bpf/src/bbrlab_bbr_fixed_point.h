/* SPDX-License-Identifier: (MIT OR Apache-2.0) */
/*
 * The fixed point of Linux tcp_bbr.c (and of v2alpha's tcp_bbr2.c), which bbr2.bpf.c,
 * bbr3_linux.bpf.c and bbrlab_bbr_model.h compute in: bandwidth in packets per us << 24 (about
 * 715 bit/s of resolution at 1500-byte packets), gains and fractions in 2^8 (1.0 = 256), and
 * Linux's ~0 for a bound that is not set.
 */
#ifndef BBRLAB_BBR_FIXED_POINT_H
#define BBRLAB_BBR_FIXED_POINT_H

/* Bandwidth: packets per us << 24. */
#define BW_SCALE 24
#define BW_UNIT (1ULL << BW_SCALE)
/* Gains and fractions: 2^8, 1.0 = 256. */
#define BBR_SCALE 8
#define BBR_UNIT (1U << BBR_SCALE)
/* "Unset" bounds (Linux ~0U). */
#define INF_PKTS 0xFFFFFFFFU
#define INF_BW 0xFFFFFFFFFFFFFFFFULL

#endif
