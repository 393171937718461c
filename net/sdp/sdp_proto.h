/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SDP's protocol rules, in one place: every message we send is built here
 * and every field a peer sends is judged here (the Hello, the HelloAck and
 * each message's BSDH), against the sequence numbers and credits of both
 * directions. Functions of bytes and of struct sdp_seq only, no socket and
 * no verbs, so that selftests/sdp/sdp_proto_test.c runs them in userspace.
 */
#ifndef _NET_SDP_PROTO_H
#define _NET_SDP_PROTO_H

#include <linux/types.h>

#include "sdp_mib.h"
#include "sdp_wire.h"

/* Bounds on receive buffer sizes and counts, ours and the peer's. */
#define SDP_MIN_BUF_SIZE	1024
#define SDP_MAX_BUF_SIZE	(128 * 1024)
#define SDP_MIN_BUFS		4
#define SDP_MAX_BUFS		256
/* Credits Data never takes: they carry DisConn, Abort and credit updates. */
#define SDP_CTRL_CREDITS	1
/*
 * Our messages the peer has not acknowledged never outnumber its buffers
 * (fewer than SDP_MAX_BUFS): what we advertised in each is kept this long.
 */
#define SDP_HIST_SIZE		512

static_assert(SDP_HIST_SIZE > SDP_MAX_BUFS && !(SDP_HIST_SIZE & (SDP_HIST_SIZE - 1)));

/*
 * What we advertised with one message we sent. Of rx_mseq the low 16 bits
 * tell enough: a message the check accepts is at most SDP_MAX_BUFS + 1 past
 * the rx_mseq of the advert it acknowledges, which is never older than
 * that of the last one accepted (so 4 bytes an entry, 2 KiB a connection).
 */
struct sdp_adv {
	u16	bufs;
	u16	rx_mseq;
};

/*
 * Sequence numbers and credits, both ways (the SDP spec's credits: bufs -
 * (mseq - mseq_ack)). Message 0 of each side is its Hello or HelloAck.
 */
struct sdp_seq {
	u32		tx_mseq;	/* last mseq we sent */
	u32		tx_mseq_acked;	/* last of ours the peer processed */
	u16		tx_bufs;	/* the peer's latest bufs */
	u32		rx_mseq;	/* last mseq we received */
	u16		rx_adv;		/* bufs we last advertised */
	u32		rx_mseq_adv;	/* rx_mseq when we did */
	struct sdp_adv	*hist;		/* SDP_HIST_SIZE, by our mseq */
};

/*
 * Zero-copy: one SrcAvail in flight each way (the adverts a Hello offers),
 * of at most SDP_SRCAVAIL_MAX bytes; one SinkAvail each way, as large.
 */
#define SDP_ZC_ADVERTS		1
#define SDP_SRCAVAIL_MAX	(1024 * 1024)

/* What zero-copy allows the peer now (sdp_proto_check()). */
struct sdp_zc_rules {
	bool	offered;	/* our Hello offered adverts: SrcAvail may come */
	bool	reading;	/* its SrcAvail is being read: the stream waits */
	u32	src_left;	/* bytes of our SrcAvail not reported read; 0: none out */
	bool	sink_offered;	/* our Hello took SinkAvails: one may come, and its cancel */
	bool	sink_held;	/* the peer's SinkAvail is unanswered: no other may come */
	bool	adv_out;	/* our SinkAvail is unanswered: its RdmaWrCompl may come */
	bool	adv_crossed;	/* ... and stream bytes crossed it: the answer is of none */
	u32	adv_len;	/* its bytes */
	u32	adv_mseq;	/* its mseq: once the peer saw it, no stream bytes till the answer */
};

bool sdp_size_ok(u32 size);
bool sdp_bufs_ok(u16 bufs);

/* Connection setup: the CM's private data. */
u16 sdp_seq_hello(struct sdp_seq *s, u32 posted);
void sdp_proto_hello(struct sdp_hh *hh, u16 bufs, u32 rcv_size, bool ipv6,
		     u8 adverts, u8 caps);
void sdp_proto_hello_ack(struct sdp_hah *hah, u16 bufs, u32 rcv_size, u8 ipv_cap,
			 u8 adverts, u8 caps);
int sdp_proto_check_hello(const void *data, u32 len);
int sdp_proto_check_hello_ack(const void *data, u32 len);
void sdp_proto_rej(struct sdp_rej *rej, u8 reason, u32 retry_ms);
u8 sdp_proto_check_rej(const void *data, u32 len, u32 *retry_ms);
void sdp_seq_start(struct sdp_seq *s, u16 peer_bufs);

/* Messages. */
void sdp_proto_bsdh(const struct sdp_seq *s, struct sdp_bsdh *h, u8 mid,
		    u8 flags, u32 len, u16 bufs);
void sdp_seq_sent(struct sdp_seq *s, u16 bufs);
int sdp_proto_check(const struct sdp_seq *s, const struct sdp_bsdh *h,
		    u32 got, bool imm, bool rcvd_disconn,
		    const struct sdp_zc_rules *z);
void sdp_seq_received(struct sdp_seq *s, const struct sdp_bsdh *h);
bool sdp_proto_stream_bytes(const struct sdp_bsdh *h, u32 got);

/*
 * Zero-copy messages' payloads (after the BSDH), built and read: SrcAvail's
 * and SinkAvail's (an advert), RdmaRdCompl's and RdmaWrCompl's (a completion).
 */
#define SDP_SRCAVAIL_LEN	(sizeof(struct sdp_bsdh) + sizeof(struct sdp_srcah))
#define SDP_RDMARDCOMPL_LEN	(sizeof(struct sdp_bsdh) + sizeof(struct sdp_rrch))
void sdp_proto_avail(struct sdp_bsdh *h, u32 len, u32 rkey, u64 vaddr);
u32 sdp_proto_avail_get(const struct sdp_bsdh *h, u32 *rkey, u64 *vaddr);
void sdp_proto_compl(struct sdp_bsdh *h, u32 len);
u32 sdp_proto_compl_get(const struct sdp_bsdh *h);

/* Credits the peer has given us now. */
static inline int sdp_seq_tx_credits(const struct sdp_seq *s)
{
	return (s16)(s->tx_bufs - (u16)(s->tx_mseq - s->tx_mseq_acked));
}

/* Credits the peer believes it has: what we advertised, less what it used. */
static inline s32 sdp_seq_peer_credits(const struct sdp_seq *s)
{
	return (s32)s->rx_adv - (s32)(s->rx_mseq - s->rx_mseq_adv);
}

#endif /* _NET_SDP_PROTO_H */
