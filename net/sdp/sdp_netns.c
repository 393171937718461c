// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol: per network namespace state.
 *
 * - Sysctls under net.sdp:
 *     enabled             1: sockets try RDMA; 0: every socket uses TCP
 *     rdma_only           1: never fall back to TCP (connect fails instead)
 *     connect_timeout_ms  how long the first RDMA attempt may take before
 *                         the socket falls back (answers come in ms)
 *     negative_cache_ttl  seconds a destination that failed over RDMA goes
 *                         straight to TCP; 0 disables the cache
 *     recv_poll_us        how long a blocking receive spins for data before
 *                         it sleeps (SO_BUSY_POLL overrides it per socket)
 *     syn_timeout_ms      how long an accepted RDMA connection may take to
 *                         be established before it is dropped
 *     max_half_open       how many such connections the namespace's
 *                         listeners may hold together
 *     buf_size            bytes per receive buffer, header included
 *     rx_bufs, tx_bufs    receive and send buffers per connection, unless
 *                         SO_RCVBUF or SO_SNDBUF is set
 *     zcopy_thresh        a blocking send of at least this many bytes of
 *                         user memory lets the peer read them in place, a
 *                         waiting read of as many lets it write them there;
 *                         0: never (SDP_ZCOPY_THRESH sets it per socket)
 *     shared_rq           1: connections take receive buffers from their
 *                         device's shared receive queue (no zero-copy)
 *     mem                 (initial namespace only) pages all SDP sockets'
 *                         receive buffers may hold: low, pressure, high, as
 *                         tcp_mem; past high no ring grows and no
 *                         connection starts over RDMA
 * - The negative cache itself (sdp_fallback.c).
 */
#include <linux/sysctl.h>
#include <net/net_namespace.h>

#include "sdp_compat.h"
#include "sdp_conn.h"
#include "sdp_netns.h"
#include "sdp_proto.h"

unsigned int sdp_net_id;

static int sdp_zero;
static int sdp_one = 1;
static int sdp_ms_max = 600 * 1000;
static int sdp_ttl_max = 24 * 3600;
static int sdp_poll_max = USEC_PER_SEC;
static int sdp_buf_min = SDP_MIN_BUF_SIZE;
static int sdp_buf_max = SDP_MAX_BUF_SIZE;
static int sdp_bufs_min = SDP_MIN_BUFS;
static int sdp_bufs_max = SDP_MAX_BUFS;
static int sdp_half_open_max = 65536;
static int sdp_zcopy_max = 1 << 30;

/* A template: each namespace gets a copy pointing at its own values. */
static struct ctl_table sdp_sysctl_table[] = {
	{
		.procname	= "enabled",
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= &sdp_zero,
		.extra2		= &sdp_one,
	},
	{
		.procname	= "rdma_only",
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= &sdp_zero,
		.extra2		= &sdp_one,
	},
	{
		.procname	= "connect_timeout_ms",
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= &sdp_one,
		.extra2		= &sdp_ms_max,
	},
	{
		.procname	= "negative_cache_ttl",
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= &sdp_zero,
		.extra2		= &sdp_ttl_max,
	},
	{
		.procname	= "recv_poll_us",
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= &sdp_zero,
		.extra2		= &sdp_poll_max,
	},
	{
		.procname	= "syn_timeout_ms",
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= &sdp_one,
		.extra2		= &sdp_ms_max,
	},
	{
		.procname	= "max_half_open",
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= &sdp_one,
		.extra2		= &sdp_half_open_max,
	},
	{
		.procname	= "buf_size",
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= &sdp_buf_min,
		.extra2		= &sdp_buf_max,
	},
	{
		.procname	= "rx_bufs",
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= &sdp_bufs_min,
		.extra2		= &sdp_bufs_max,
	},
	{
		.procname	= "tx_bufs",
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= &sdp_bufs_min,
		.extra2		= &sdp_bufs_max,
	},
	{
		.procname	= "zcopy_thresh",
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= &sdp_zero,
		.extra2		= &sdp_zcopy_max,
	},
	{
		.procname	= "shared_rq",
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= &sdp_zero,
		.extra2		= &sdp_one,
	},
	{
		/* the last: only the initial namespace has it */
		.procname	= "mem",
		.data		= sdp_sysctl_mem,
		.maxlen		= sizeof(sdp_sysctl_mem),
		.mode		= 0644,
		.proc_handler	= proc_doulongvec_minmax,
	},
	{ }	/* the end, for 6.1 (sdp_register_net_sysctl) */
};

static int sdp_sysctl_init(struct net *net, struct sdp_net *sn)
{
	size_t n = ARRAY_SIZE(sdp_sysctl_table) - 1;
	struct ctl_table *t;

	t = kmemdup(sdp_sysctl_table, sizeof(sdp_sysctl_table), GFP_KERNEL);
	if (!t)
		return -ENOMEM;
	t[0].data = &sn->enabled;
	t[1].data = &sn->rdma_only;
	t[2].data = &sn->connect_timeout_ms;
	t[3].data = &sn->ncache_ttl;
	t[4].data = &sn->recv_poll_us;
	t[5].data = &sn->syn_timeout_ms;
	t[6].data = &sn->max_half_open;
	t[7].data = &sn->buf_size;
	t[8].data = &sn->rx_bufs;
	t[9].data = &sn->tx_bufs;
	t[10].data = &sn->zcopy_thresh;
	t[11].data = &sn->shared_rq;
	/* Kernel memory per connection: not for a user namespace's root. */
	if (net->user_ns != &init_user_ns)
		t[6].mode = t[7].mode = t[8].mode = t[9].mode = t[11].mode = 0444;
	/* SDP's memory limits are the machine's, as tcp_mem */
	if (!net_eq(net, &init_net)) {
		n--;
		memset(&t[n], 0, sizeof(t[n]));
	}
	sn->sysctl = sdp_register_net_sysctl(net, "net/sdp", t, n);
	if (!sn->sysctl) {
		kfree(t);
		return -ENOMEM;
	}
	return 0;
}

static void sdp_sysctl_exit(struct sdp_net *sn)
{
	const struct ctl_table *t = sn->sysctl->ctl_table_arg;

	unregister_net_sysctl_table(sn->sysctl);
	kfree(t);
}

static __net_init int sdp_net_init(struct net *net)
{
	struct sdp_net *sn = sdp_net(net);
	int err;

	sn->enabled = 1;
	sn->connect_timeout_ms = 1000;
	sn->ncache_ttl = 60;
	sn->recv_poll_us = SDP_RECV_POLL_US;
	sn->syn_timeout_ms = SDP_SYN_TIMEOUT_MS;
	sn->max_half_open = SDP_MAX_HALF_OPEN;
	spin_lock_init(&sn->half_open_lock);
	INIT_LIST_HEAD(&sn->half_open);
	sn->buf_size = SDP_BUF_SIZE;
	sn->rx_bufs = SDP_BUFS;
	sn->tx_bufs = SDP_BUFS;
	sn->zcopy_thresh = SDP_ZCOPY_THRESH_DEF;
	spin_lock_init(&sn->ncache_lock);
	err = sdp_stats_net_init(net, sn);
	if (err)
		return err;
	err = sdp_sysctl_init(net, sn);
	if (err)
		sdp_stats_net_exit(net, sn);
	return err;
}

static __net_exit void sdp_net_exit(struct net *net)
{
	struct sdp_net *sn = sdp_net(net);

	sdp_sysctl_exit(sn);
	sdp_stats_net_exit(net, sn);
}

static struct pernet_operations sdp_net_ops = {
	.init	= sdp_net_init,
	.exit	= sdp_net_exit,
	.id	= &sdp_net_id,
	.size	= sizeof(struct sdp_net),
};

int sdp_netns_init(void)
{
	return register_pernet_subsys(&sdp_net_ops);
}

void sdp_netns_exit(void)
{
	unregister_pernet_subsys(&sdp_net_ops);
}
