/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sockets Direct Protocol: the test suite's knobs (debugfs sdp/, not an
 * ABI), for every layer: where an allocation is made to fail, the
 * planted warning, and the CQs' pollers held.
 */
#ifndef _NET_SDP_DEBUG_H
#define _NET_SDP_DEBUG_H

#include <linux/atomic.h>
#include <linux/compiler.h>
#include <linux/types.h>

/* Where the tests make an allocation fail (debugfs sdp/fail/). */
enum sdp_fault {
	SDP_FAULT_SOCK,		/* an SDP socket */
	SDP_FAULT_TCP,		/* its native TCP socket */
	SDP_FAULT_CM_ID,	/* an rdma_cm id */
	SDP_FAULT_ACCEPT,	/* a listener's child's connection, as a whole */
	SDP_FAULT_CONN,		/* a connection's RDMA state */
	SDP_FAULT_PD,		/* its protection domain */
	SDP_FAULT_SRQ,		/* the device's shared receive queue */
	SDP_FAULT_CQ,
	SDP_FAULT_QP,
	SDP_FAULT_RINGS,	/* the rings' slot arrays */
	SDP_FAULT_RX_BUF,	/* a receive buffer */
	SDP_FAULT_TX_BUF,	/* a send buffer */
	SDP_FAULT_KMEM_BUF,	/* a buffer charged to the cgroup only */
	SDP_FAULT_MAX
};

extern atomic_t sdp_faults[SDP_FAULT_MAX];

/* Should this allocation at @site fail? Once per count armed. */
static inline bool sdp_fault(enum sdp_fault site)
{
	return unlikely(atomic_read(&sdp_faults[site])) &&
	       atomic_add_unless(&sdp_faults[site], -1, 0);
}

extern u32 sdp_inject_warn;
/* Set: the CQs' pollers take nothing (sdp/hold_poll) and spin until it is clear. */
extern u32 sdp_hold_poll;
void sdp_debug_init(void);
void sdp_debug_exit(void);

#endif /* _NET_SDP_DEBUG_H */
