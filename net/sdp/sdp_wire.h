/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SDP wire format (IBTA InfiniBand Architecture Annex A4, "Sockets Direct
 * Protocol"). Documented in Documentation/networking/sdp.rst; this header is
 * its only definition. All fields are big-endian.
 */
#ifndef _NET_SDP_WIRE_H
#define _NET_SDP_WIRE_H

#include <linux/build_bug.h>
#include <linux/types.h>

/* Base Sockets Direct Header: starts every message. */
struct sdp_bsdh {
	u8	mid;		/* message id, enum sdp_mid */
	u8	flags;		/* SDP_OOB_* */
	__be16	bufs;		/* receive buffers the sender has posted */
	__be32	len;		/* message length, this header included */
	__be32	mseq;		/* sequence number of this message */
	__be32	mseq_ack;	/* last mseq the sender received */
} __packed;

enum sdp_mid {
	SDP_MID_HELLO		= 0x00,
	SDP_MID_HELLO_ACK	= 0x01,
	SDP_MID_DISCONN		= 0x02,
	SDP_MID_ABORT		= 0x03,
	SDP_MID_SENDSM		= 0x04,
	SDP_MID_RDMAWRCOMPL	= 0x05,
	SDP_MID_RDMARDCOMPL	= 0x06,
	SDP_MID_SRCAVAIL_CANCEL	= 0x08,
	SDP_MID_SINKAVAIL_CANCEL = 0x09,
	SDP_MID_CHRCVBUF	= 0x0B,
	SDP_MID_CHRCVBUF_ACK	= 0x0C,
	SDP_MID_SINKAVAIL	= 0xFD,
	SDP_MID_SRCAVAIL	= 0xFE,
	SDP_MID_DATA		= 0xFF,
};

#define SDP_OOB_PRES	0x01	/* the last byte of this message is urgent */
#define SDP_OOB_PEND	0x02	/* urgent data follows in a later message */

/* majv_minv: protocol version 2.2, major in the upper nibble. */
#define SDP_VERSION		0x22
#define SDP_VERSION_MAJOR(v)	((v) >> 4)

/* ipv_cap: IP version of the connection's addresses in the upper nibble. */
#define SDP_IPV_CAP_IPV4	0x40
#define SDP_IPV_CAP_IPV6	0x60

/*
 * caps (IBTA: reserved, so 0 from other SDPs): ours. SINKAVAIL: the sender
 * takes SinkAvails, writes our bytes into them and answers each.
 */
#define SDP_CAP_SINKAVAIL	0x01

/*
 * Hello (HH): the CM REQ private data. The IBTA Hello continues with the
 * port and both IP addresses; rdma_cm already carries those in its own
 * header, which leaves only 56 bytes of private data, so they are omitted.
 */
struct sdp_hh {
	struct sdp_bsdh	bsdh;
	u8	majv_minv;
	u8	ipv_cap;
	u8	caps;		/* SDP_CAP_* */
	u8	max_adverts;	/* SrcAvail/SinkAvail adverts we accept */
	__be32	desremrcvsz;	/* receive buffer size we wish the peer used */
	__be32	localrcvsz;	/* our receive buffer size */
} __packed;

/* HelloAck (HAH): the CM REP private data. */
struct sdp_hah {
	struct sdp_bsdh	bsdh;
	u8	majv_minv;
	u8	ipv_cap;
	u8	caps;		/* SDP_CAP_* */
	u8	ext_max_adverts;
	__be32	actrcvsz;	/* the passive side's receive buffer size */
} __packed;

/*
 * SrcAvail payload: the source's buffer, registered for the sink to RDMA
 * Read. The sink answers RdmaRdCompl with the bytes it read, or SendSM
 * when it reads no more of it (after SrcAvailCancel, or by its choice).
 * SinkAvail's too: the sink's buffer, registered for the source to RDMA
 * Write the stream's next bytes into; the source answers each with one
 * RdmaWrCompl, of the bytes it wrote (0: none, it declined).
 */
struct sdp_srcah {
	__be32	len;
	__be32	rkey;
	__be64	vaddr;
} __packed;

/* RdmaRdCompl and RdmaWrCompl payload. */
struct sdp_rrch {
	__be32	len;		/* bytes of the current SrcAvail read, SinkAvail written */
} __packed;

/* ChRcvBuf / ChRcvBufAck payload. */
struct sdp_chrcvbuf {
	__be32	size;
} __packed;

/*
 * Consumer reject private data: why a Hello was refused, so the active side
 * can tell "SDP refused this" from "nothing listens".
 */
struct sdp_rej {
	u8	mid;		/* SDP_MID_HELLO: marks an SDP reject */
	u8	reason;		/* enum sdp_rej_reason */
	/*
	 * Ours: with SDP_REJ_BUSY, in how many ms a place frees (0: not
	 * known). The CM pads what a peer without it sends with zeroes.
	 */
	__be16	retry_ms;
} __packed;

enum sdp_rej_reason {
	SDP_REJ_VERSION		= 1,	/* unsupported majv_minv */
	SDP_REJ_MALFORMED	= 2,	/* bad Hello length, id or sizes */
	SDP_REJ_NOMEM		= 3,	/* passive side out of resources */
	SDP_REJ_BUSY		= 4,	/* listener's pending queue full */
};

/*
 * What rdma_cm leaves of the CM's private data under RDMA_PS_TCP: 92 bytes
 * in a REQ less its own 36-byte header; a REP's 196 are all ours.
 */
#define SDP_REQ_DATA_MAX	56
#define SDP_REP_DATA_MAX	196

static_assert(sizeof(struct sdp_bsdh) == 16);
static_assert(sizeof(struct sdp_hh) <= SDP_REQ_DATA_MAX);
static_assert(sizeof(struct sdp_hah) <= SDP_REP_DATA_MAX);

#endif /* _NET_SDP_WIRE_H */
