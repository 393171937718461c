/* SPDX-License-Identifier: GPL-2.0 */
/* Sockets Direct Protocol: per network namespace state (net.sdp.*). */
#ifndef _NET_SDP_NETNS_H
#define _NET_SDP_NETNS_H

#include <linux/in6.h>
#include <linux/spinlock.h>
#include <net/netns/generic.h>

struct sdp_mib;
struct ctl_table_header;

/* Defaults of net.sdp.buf_size and net.sdp.rx_bufs, tx_bufs. */
#define SDP_BUF_SIZE		16384
#define SDP_BUFS		16
/* Sends from this many bytes of user memory go zero-copy (OFED's default). */
#define SDP_ZCOPY_THRESH_DEF	65536
/* Default net.sdp.recv_poll_us. */
#define SDP_RECV_POLL_US	500
/*
 * Default net.sdp.syn_timeout_ms: an accepted connection whose client never
 * completes it (no RTU) is dropped then, as TCP's SYN-ACK retries end; a
 * real client completes in a round trip.
 */
#define SDP_SYN_TIMEOUT_MS	10000
/*
 * Default net.sdp.max_half_open: such connections in all of a namespace's
 * listeners together, each with its queue pair and rings (as
 * tcp_max_syn_backlog bounds TCP's requests).
 */
#define SDP_MAX_HALF_OPEN	256

/* A destination that recently failed over RDMA (IPv4 as v4-mapped). */
struct sdp_ncache_entry {
	struct in6_addr	addr;
	__be16		port;
	u8		reason;
	unsigned long	expires;
};

#define SDP_NCACHE_SIZE	256

/* Per network namespace: counters, sysctls (net.sdp.*), negative cache. */
struct sdp_net {
	struct sdp_mib __percpu	*mib;
	struct ctl_table_header	*sysctl;
	int			enabled;		/* 0: every socket uses TCP */
	int			rdma_only;		/* 1: never fall back */
	int			connect_timeout_ms;	/* RDMA's first attempt */
	int			ncache_ttl;		/* seconds; 0 disables */
	int			recv_poll_us;		/* spin before sleeping */
	int			syn_timeout_ms;		/* a child's time to establish */
	int			buf_size;		/* bytes per receive buffer */
	int			rx_bufs;		/* receive ring without SO_RCVBUF */
	int			tx_bufs;		/* send ring without SO_SNDBUF */
	int			zcopy_thresh;		/* a send this large goes by SrcAvail */
	int			shared_rq;		/* receive from the device's SRQ */
	int			max_half_open;		/* children not established */
	spinlock_t		half_open_lock;
	struct list_head	half_open;		/* those children, oldest first */
	int			half_open_nr;		/* they and requests being accepted */
	spinlock_t		ncache_lock;
	struct sdp_ncache_entry	ncache[SDP_NCACHE_SIZE];
};

extern unsigned int sdp_net_id;

static inline struct sdp_net *sdp_net(const struct net *net)
{
	return net_generic(net, sdp_net_id);
}

int sdp_netns_init(void);
void sdp_netns_exit(void);

#endif /* _NET_SDP_NETNS_H */
