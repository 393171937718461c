// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol: per network namespace state.
 *
 * - Counters, read from /proc/net/sdp_stats as "Name value" lines.
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
 * - The negative cache itself (sdp_fallback.c).
 */
#include <linux/percpu.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/sysctl.h>
#include <net/net_namespace.h>

#include "sdp.h"

unsigned int sdp_net_id;

static const char * const sdp_mib_names[SDP_MIB_MAX] = {
	[SDP_MIB_ACTIVE_OPENS]		= "ActiveOpens",
	[SDP_MIB_PASSIVE_OPENS]		= "PassiveOpens",
	[SDP_MIB_ESTABLISHED]		= "Established",
	[SDP_MIB_CONNECT_FAILED]	= "ConnectFailed",
	[SDP_MIB_REJECT_SENT]		= "RejectSent",
	[SDP_MIB_SYN_TIMEOUT]		= "SynTimeout",
	[SDP_MIB_BACKLOG_BUSY]		= "BacklogBusy",
	[SDP_MIB_CONNECT_RETRIES]	= "ConnectRetries",
	[SDP_MIB_LISTEN_NO_RDMA]	= "ListenNoRdma",
	[SDP_MIB_LISTEN_REARMED]	= "ListenRearmed",
	[SDP_MIB_BAD_HELLO]		= "BadHello",
	[SDP_MIB_DISCONN_SENT]		= "DisConnSent",
	[SDP_MIB_DISCONN_RCVD]		= "DisConnRcvd",
	[SDP_MIB_ABORT_SENT]		= "AbortSent",
	[SDP_MIB_ABORT_RCVD]		= "AbortRcvd",
	[SDP_MIB_ABORT_ON_DATA]		= "AbortOnData",
	[SDP_MIB_BAD_MID]		= "BadMid",
	[SDP_MIB_UNEXPECTED_MID]	= "UnexpectedMid",
	[SDP_MIB_BAD_LEN]		= "BadLen",
	[SDP_MIB_BAD_MSEQ]		= "BadMseq",
	[SDP_MIB_BAD_MSEQ_ACK]		= "BadMseqAck",
	[SDP_MIB_BAD_BUFS]		= "BadBufs",
	[SDP_MIB_BAD_CREDITS]		= "BadCredits",
	[SDP_MIB_BAD_FLAGS]		= "BadFlags",
	[SDP_MIB_QP_ERROR]		= "QpError",
	[SDP_MIB_TX_TIMEOUT]		= "TxTimeout",
	[SDP_MIB_DEVICE_REMOVED]	= "DeviceRemoved",
	[SDP_MIB_TX_MSGS]		= "TxMsgs",
	[SDP_MIB_RX_MSGS]		= "RxMsgs",
	[SDP_MIB_TX_BYTES]		= "TxBytes",
	[SDP_MIB_RX_BYTES]		= "RxBytes",
	[SDP_MIB_CREDIT_UPDATES]	= "CreditUpdates",
	[SDP_MIB_KEEPALIVE_PROBES]	= "KeepaliveProbes",
	[SDP_MIB_RECV_POLL_HIT]		= "RecvPollHit",
	[SDP_MIB_RECV_POLL_MISS]	= "RecvPollMiss",
	[SDP_MIB_FALLBACK + SDP_FB_NONE]	= "Fallback",
	[SDP_MIB_FALLBACK + SDP_FB_POLICY]	= "FallbackPolicy",
	[SDP_MIB_FALLBACK + SDP_FB_LOOPBACK]	= "FallbackLoopback",
	[SDP_MIB_FALLBACK + SDP_FB_NO_DEVICE]	= "FallbackNoDevice",
	[SDP_MIB_FALLBACK + SDP_FB_NO_ROUTE]	= "FallbackNoRoute",
	[SDP_MIB_FALLBACK + SDP_FB_REJECTED]	= "FallbackRejected",
	[SDP_MIB_FALLBACK + SDP_FB_TIMEOUT]	= "FallbackTimeout",
	[SDP_MIB_FALLBACK + SDP_FB_VERSION]	= "FallbackVersion",
	[SDP_MIB_FALLBACK + SDP_FB_CACHED]	= "FallbackCached",
	[SDP_MIB_FALLBACK + SDP_FB_PEER_TCP]	= "FallbackPeerTcp",
	[SDP_MIB_FALLBACK + SDP_FB_NO_RDMA_LISTEN] = "FallbackNoRdmaListen",
	[SDP_MIB_FALLBACK + SDP_FB_RESOURCES]	= "FallbackResources",
};

static int sdp_stats_show(struct seq_file *seq, void *v)
{
	struct sdp_net *sn = sdp_net(seq_file_single_net(seq));
	int i, cpu;

	for (i = 0; i < SDP_MIB_MAX; i++) {
		u64 sum = 0;

		for_each_possible_cpu(cpu)
			sum += per_cpu_ptr(sn->mib, cpu)->mibs[i];
		seq_printf(seq, "%s %llu\n", sdp_mib_names[i], sum);
	}
	return 0;
}

static int sdp_zero;
static int sdp_one = 1;
static int sdp_ms_max = 600 * 1000;
static int sdp_ttl_max = 24 * 3600;
static int sdp_poll_max = USEC_PER_SEC;

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
	{ }	/* the end, for 6.1 (sdp_register_net_sysctl) */
};

static int sdp_sysctl_init(struct net *net, struct sdp_net *sn)
{
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
	sn->sysctl = sdp_register_net_sysctl(net, "net/sdp", t,
					     ARRAY_SIZE(sdp_sysctl_table) - 1);
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
	int err = -ENOMEM;

	sn->enabled = 1;
	sn->connect_timeout_ms = 1000;
	sn->ncache_ttl = 60;
	sn->recv_poll_us = SDP_RECV_POLL_US;
	sn->syn_timeout_ms = SDP_SYN_TIMEOUT_MS;
	spin_lock_init(&sn->ncache_lock);
	sn->mib = alloc_percpu(struct sdp_mib);
	if (!sn->mib)
		return -ENOMEM;
	if (!proc_create_net_single("sdp_stats", 0444, net->proc_net,
				    sdp_stats_show, NULL))
		goto err_mib;
	err = sdp_sysctl_init(net, sn);
	if (err)
		goto err_proc;
	return 0;

err_proc:
	remove_proc_entry("sdp_stats", net->proc_net);
err_mib:
	free_percpu(sn->mib);
	return err;
}

static __net_exit void sdp_net_exit(struct net *net)
{
	struct sdp_net *sn = sdp_net(net);

	sdp_sysctl_exit(sn);
	remove_proc_entry("sdp_stats", net->proc_net);
	free_percpu(sn->mib);
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
