/* SPDX-License-Identifier: GPL-2.0 */
/* Sockets Direct Protocol: counters, per namespace and per socket. */
#ifndef _NET_SDP_STATS_H
#define _NET_SDP_STATS_H

#include <linux/types.h>

#include "sdp_mib.h"

struct net;
struct sdp_net;

struct sdp_mib {
	u64	mibs[SDP_MIB_MAX];
};

/* A socket's own, for SDP_INFO. */
struct sdp_stats_sock {
	u64	tx_bytes;
	u64	rx_bytes;
	u64	tx_msgs;
	u64	rx_msgs;
	u64	tx_credit_updates;
	u64	zc_tx_bytes;
	u64	zc_rx_bytes;
	u64	zw_tx_bytes;
	u64	zw_rx_bytes;
	u32	zc_reads;
	u32	zw_writes;
};

/* Per CPU, in the socket's namespace (sdp_net() is in sdp.h). */
#define SDP_ADD_STATS(net, field, val) \
	this_cpu_add(sdp_net(net)->mib->mibs[field], val)
#define SDP_INC_STATS(net, field)	SDP_ADD_STATS(net, field, 1)

int sdp_stats_net_init(struct net *net, struct sdp_net *sn);
const char *sdp_mib_name(int field);
void sdp_stats_net_exit(struct net *net, struct sdp_net *sn);

#endif /* _NET_SDP_STATS_H */
