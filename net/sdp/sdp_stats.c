// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol: counters, per network namespace, read from
 * /proc/net/sdp_stats as "Name value" lines (names in enum sdp_mib_field's
 * order); a socket's own are in SDP_INFO.
 */
#include <linux/percpu.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <net/net_namespace.h>

#include "sdp_netns.h"
#include "sdp_stats.h"

static const char * const sdp_mib_names[SDP_MIB_MAX] = {
	[SDP_MIB_ACTIVE_OPENS]		= "ActiveOpens",
	[SDP_MIB_PASSIVE_OPENS]		= "PassiveOpens",
	[SDP_MIB_ESTABLISHED]		= "Established",
	[SDP_MIB_CONNECT_FAILED]	= "ConnectFailed",
	[SDP_MIB_REJECT_SENT]		= "RejectSent",
	[SDP_MIB_SYN_TIMEOUT]		= "SynTimeout",
	[SDP_MIB_HALF_OPEN_FULL]	= "HalfOpenFull",
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
	[SDP_MIB_DISCONN_MISSING]	= "DisConnMissing",
	[SDP_MIB_REJECT_LATE]		= "RejectLate",
	[SDP_MIB_BAD_MID]		= "BadMid",
	[SDP_MIB_UNEXPECTED_MID]	= "UnexpectedMid",
	[SDP_MIB_BAD_LEN]		= "BadLen",
	[SDP_MIB_BAD_MSEQ]		= "BadMseq",
	[SDP_MIB_BAD_MSEQ_ACK]		= "BadMseqAck",
	[SDP_MIB_BAD_BUFS]		= "BadBufs",
	[SDP_MIB_BAD_CREDITS]		= "BadCredits",
	[SDP_MIB_BAD_FLAGS]		= "BadFlags",
	[SDP_MIB_BAD_SRCAVAIL]		= "BadSrcAvail",
	[SDP_MIB_BAD_RDMARDCOMPL]	= "BadRdmaRdCompl",
	[SDP_MIB_ZC_READ_FAILED]	= "ZcopyReadFailed",
	[SDP_MIB_ZC_CANCEL_TIMEOUT]	= "ZcopyCancelTimeout",
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
	[SDP_MIB_RECV_POLL_CUT]		= "RecvPollCut",
	[SDP_MIB_ZC_SENDS]		= "ZcopySends",
	[SDP_MIB_ZC_TX_BYTES]		= "ZcopyTxBytes",
	[SDP_MIB_ZC_RX_BYTES]		= "ZcopyRxBytes",
	[SDP_MIB_ZC_READS]		= "ZcopyReads",
	[SDP_MIB_ZC_CANCELS]		= "ZcopyCancels",
	[SDP_MIB_ZC_DECLINED]		= "ZcopyDeclined",
	[SDP_MIB_ZC_FALLBACK]		= "ZcopyCopied",
	[SDP_MIB_ZC_ASYNC]		= "ZcopyAsyncSends",
	[SDP_MIB_ZC_MR_REUSED]		= "ZcopyMrReused",
	[SDP_MIB_ZC_MR_ALLOCS]		= "ZcopyMrAllocs",
	[SDP_MIB_ZC_CACHE_HITS]		= "ZcopyCacheHits",
	[SDP_MIB_ZC_CACHE_MISSES]	= "ZcopyCacheMisses",
	[SDP_MIB_ZC_CACHE_STALE]	= "ZcopyCacheStale",
	[SDP_MIB_BAD_SINKAVAIL]		= "BadSinkAvail",
	[SDP_MIB_BAD_RDMAWRCOMPL]	= "BadRdmaWrCompl",
	[SDP_MIB_ZC_RECVS]		= "ZcopyRecvs",
	[SDP_MIB_ZC_RECV_BYTES]		= "ZcopyRecvBytes",
	[SDP_MIB_ZC_RECV_DECLINED]	= "ZcopyRecvDeclined",
	[SDP_MIB_ZC_WRITES]		= "ZcopyWrites",
	[SDP_MIB_ZC_DIRECT_BYTES]	= "ZcopyDirectBytes",
	[SDP_MIB_SRQ_CONNS]		= "SrqConnections",
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
	[SDP_MIB_FALLBACK + SDP_FB_PORT]	= "FallbackPort",
};

/* A counter's name in /proc/net/sdp_stats (for the tracepoints). */
const char *sdp_mib_name(int field)
{
	return field >= 0 && field < SDP_MIB_MAX ? sdp_mib_names[field] : "?";
}

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

int sdp_stats_net_init(struct net *net, struct sdp_net *sn)
{
	sn->mib = alloc_percpu(struct sdp_mib);
	if (!sn->mib)
		return -ENOMEM;
	if (!proc_create_net_single("sdp_stats", 0444, net->proc_net,
				    sdp_stats_show, NULL)) {
		free_percpu(sn->mib);
		return -ENOMEM;
	}
	return 0;
}

void sdp_stats_net_exit(struct net *net, struct sdp_net *sn)
{
	remove_proc_entry("sdp_stats", net->proc_net);
	free_percpu(sn->mib);
}
