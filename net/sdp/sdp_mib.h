/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The names of SDP's counters: the protocol layer returns them as the
 * reason a peer's message is refused, so they stand alone.
 */
#ifndef _NET_SDP_MIB_H
#define _NET_SDP_MIB_H

#include <linux/sdp.h>

/* Counters in /proc/net/sdp_stats (names in sdp_stats.c). */
enum sdp_mib_field {
	SDP_MIB_ACTIVE_OPENS,		/* connects started over RDMA */
	SDP_MIB_PASSIVE_OPENS,		/* requests accepted over RDMA */
	SDP_MIB_ESTABLISHED,		/* connections that reached ESTABLISHED */
	SDP_MIB_CONNECT_FAILED,		/* RDMA connects that failed */
	SDP_MIB_REJECT_SENT,		/* requests we refused */
	SDP_MIB_BACKLOG_BUSY,		/* requests refused: backlog full */
	SDP_MIB_SYN_TIMEOUT,		/* children dropped, never established */
	SDP_MIB_HALF_OPEN_FULL,		/* requests refused: max_half_open reached */
	SDP_MIB_CONNECT_RETRIES,	/* connects retried after a busy refusal */
	SDP_MIB_LISTEN_NO_RDMA,		/* listeners without an RDMA listener */
	SDP_MIB_LISTEN_REARMED,		/* listeners listening over RDMA again */
	SDP_MIB_BAD_HELLO,		/* malformed or incompatible Hello/HelloAck */
	SDP_MIB_DISCONN_SENT,
	SDP_MIB_DISCONN_RCVD,
	SDP_MIB_ABORT_SENT,
	SDP_MIB_ABORT_RCVD,
	SDP_MIB_ABORT_ON_DATA,		/* data arrived for a closed socket */
	SDP_MIB_DISCONN_MISSING,	/* the peer's CM disconnected before its DisConn */
	SDP_MIB_REJECT_LATE,		/* the peer's CM refused a connect ours completed */
	SDP_MIB_BAD_MID,		/* unknown message id, or immediate data */
	SDP_MIB_UNEXPECTED_MID,		/* a known message where it may not be */
	SDP_MIB_BAD_LEN,		/* BSDH length disagrees with the message */
	SDP_MIB_BAD_MSEQ,		/* mseq out of order */
	SDP_MIB_BAD_MSEQ_ACK,		/* mseq_ack of a message never sent */
	SDP_MIB_BAD_BUFS,		/* bufs beyond what the peer posted */
	SDP_MIB_BAD_CREDITS,		/* peer sent beyond the credits we gave */
	SDP_MIB_BAD_FLAGS,		/* OOB flags where they may not be */
	SDP_MIB_BAD_SRCAVAIL,		/* a SrcAvail of no bytes, or too many */
	SDP_MIB_BAD_RDMARDCOMPL,	/* an RdmaRdCompl of none, or more than offered */
	SDP_MIB_ZC_READ_FAILED,		/* an RDMA Read of the peer's SrcAvail failed */
	SDP_MIB_ZC_CANCEL_TIMEOUT,	/* a SrcAvail the peer never released */
	SDP_MIB_QP_ERROR,		/* work request failed */
	SDP_MIB_TX_TIMEOUT,		/* no send progress: TCP_USER_TIMEOUT */
	SDP_MIB_DEVICE_REMOVED,		/* connections lost with their device */
	SDP_MIB_TX_MSGS,
	SDP_MIB_RX_MSGS,
	SDP_MIB_TX_BYTES,
	SDP_MIB_RX_BYTES,
	SDP_MIB_CREDIT_UPDATES,		/* messages sent only to return credits */
	SDP_MIB_KEEPALIVE_PROBES,
	SDP_MIB_RECV_POLL_HIT,		/* a receive's spin found data */
	SDP_MIB_RECV_POLL_MISS,		/* it spun in vain, then slept */
	SDP_MIB_RECV_POLL_CUT,		/* it gave the CPU to another task, then slept */
	SDP_MIB_ZC_SENDS,		/* SrcAvails sent */
	SDP_MIB_ZC_TX_BYTES,		/* bytes the peer read from them */
	SDP_MIB_ZC_RX_BYTES,		/* bytes we read of the peer's */
	SDP_MIB_ZC_READS,		/* the RDMA Reads that took them */
	SDP_MIB_ZC_CANCELS,		/* SrcAvailCancels sent */
	SDP_MIB_ZC_DECLINED,		/* peers' SrcAvails our reader left unread: SendSM */
	SDP_MIB_ZC_FALLBACK,		/* large sends copied: no pin, no room, no MR */
	SDP_MIB_ZC_ASYNC,		/* SrcAvails of MSG_ZEROCOPY sends: no one waited */
	SDP_MIB_ZC_MR_REUSED,		/* zero-copy buffers mapped into an MR their connection had */
	SDP_MIB_ZC_MR_ALLOCS,		/* ... and into one made for them */
	SDP_MIB_ZC_CACHE_HITS,		/* blocking sends of a buffer kept pinned and mapped */
	SDP_MIB_ZC_CACHE_MISSES,	/* ... and of one pinned and mapped anew */
	SDP_MIB_ZC_CACHE_STALE,		/* kept buffers dropped: the address maps other pages */
	SDP_MIB_BAD_SINKAVAIL,		/* a SinkAvail of no bytes, or too many */
	SDP_MIB_BAD_RDMAWRCOMPL,	/* an RdmaWrCompl of more than advertised, or of bytes that crossed */
	SDP_MIB_ZC_RECVS,		/* SinkAvails sent: a reader's buffer for the peer to write */
	SDP_MIB_ZC_RECV_BYTES,		/* bytes the peer wrote into them */
	SDP_MIB_ZC_RECV_DECLINED,	/* ... of them answered with none */
	SDP_MIB_ZC_WRITES,		/* peers' SinkAvails we wrote into */
	SDP_MIB_ZC_DIRECT_BYTES,	/* of those bytes, written from the sender's own pages */
	SDP_MIB_SRQ_CONNS,		/* connections set up on their device's shared receive queue */
	/* one per enum sdp_fallback_reason, in its order */
	SDP_MIB_FALLBACK,
	SDP_MIB_MAX = SDP_MIB_FALLBACK + SDP_FB_MAX
};

#endif /* _NET_SDP_MIB_H */
