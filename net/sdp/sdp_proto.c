// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol: the wire protocol's rules (see sdp_proto.h).
 * Every check of a peer's field returns what it got wrong: enum
 * sdp_rej_reason for a Hello (the reject tells the peer), an SDP_MIB_*
 * counter otherwise.
 */
#include <linux/types.h>
#include <asm/byteorder.h>

#include "sdp_proto.h"

bool sdp_size_ok(u32 size)
{
	return size >= SDP_MIN_BUF_SIZE && size <= SDP_MAX_BUF_SIZE;
}

bool sdp_bufs_ok(u16 bufs)
{
	/* Data needs more than SDP_CTRL_CREDITS credits. */
	return bufs > SDP_CTRL_CREDITS + 1 && bufs < SDP_MAX_BUFS;
}

/* The bufs our Hello or HelloAck advertises: all @posted but the spare. */
u16 sdp_seq_hello(struct sdp_seq *s, u32 posted)
{
	s->rx_adv = posted - 1;
	s->rx_mseq_adv = 0;
	return s->rx_adv;
}

/* The BSDH of a Hello or HelloAck: message 0, acknowledging nothing. */
static void sdp_bsdh_setup(struct sdp_bsdh *h, u8 mid, u32 len, u16 bufs)
{
	h->mid = mid;
	h->flags = 0;
	h->bufs = cpu_to_be16(bufs);
	h->len = cpu_to_be32(len);
	h->mseq = 0;
	h->mseq_ack = 0;
}

void sdp_proto_hello(struct sdp_hh *hh, u16 bufs, u32 rcv_size, bool ipv6,
		     u8 adverts, u8 caps)
{
	*hh = (struct sdp_hh){};
	sdp_bsdh_setup(&hh->bsdh, SDP_MID_HELLO, sizeof(*hh), bufs);
	hh->majv_minv = SDP_VERSION;
	hh->ipv_cap = ipv6 ? SDP_IPV_CAP_IPV6 : SDP_IPV_CAP_IPV4;
	hh->caps = caps;
	hh->max_adverts = adverts;
	hh->desremrcvsz = cpu_to_be32(rcv_size);
	hh->localrcvsz = cpu_to_be32(rcv_size);
}

void sdp_proto_hello_ack(struct sdp_hah *hah, u16 bufs, u32 rcv_size, u8 ipv_cap,
			 u8 adverts, u8 caps)
{
	*hah = (struct sdp_hah){};
	sdp_bsdh_setup(&hah->bsdh, SDP_MID_HELLO_ACK, sizeof(*hah), bufs);
	hah->majv_minv = SDP_VERSION;
	hah->ipv_cap = ipv_cap;
	hah->caps = caps;
	hah->ext_max_adverts = adverts;
	hah->actrcvsz = cpu_to_be32(rcv_size);
}

static bool sdp_version_ok(u8 majv_minv)
{
	return SDP_VERSION_MAJOR(majv_minv) == SDP_VERSION_MAJOR(SDP_VERSION);
}

/* A CM request's Hello: 0, or the reason we refuse it. */
int sdp_proto_check_hello(const void *data, u32 len)
{
	const struct sdp_hh *hh = data;

	if (!hh || len < sizeof(*hh) || hh->bsdh.mid != SDP_MID_HELLO ||
	    be32_to_cpu(hh->bsdh.len) != sizeof(*hh))
		return SDP_REJ_MALFORMED;
	if (!sdp_version_ok(hh->majv_minv))
		return SDP_REJ_VERSION;
	if (!sdp_size_ok(be32_to_cpu(hh->localrcvsz)) ||
	    !sdp_bufs_ok(be16_to_cpu(hh->bsdh.bufs)))
		return SDP_REJ_MALFORMED;
	return 0;
}

/* A CM reply's HelloAck: 0, or SDP_MIB_BAD_HELLO. */
int sdp_proto_check_hello_ack(const void *data, u32 len)
{
	const struct sdp_hah *hah = data;

	if (!hah || len < sizeof(*hah) || hah->bsdh.mid != SDP_MID_HELLO_ACK ||
	    be32_to_cpu(hah->bsdh.len) != sizeof(*hah) ||
	    !sdp_version_ok(hah->majv_minv) ||
	    !sdp_size_ok(be32_to_cpu(hah->actrcvsz)) ||
	    !sdp_bufs_ok(be16_to_cpu(hah->bsdh.bufs)))
		return SDP_MIB_BAD_HELLO;
	return 0;
}

/* Our refusal of a Hello: why, and for SDP_REJ_BUSY when to try again. */
void sdp_proto_rej(struct sdp_rej *rej, u8 reason, u32 retry_ms)
{
	rej->mid = SDP_MID_HELLO;
	rej->reason = reason;
	rej->retry_ms = cpu_to_be16(retry_ms < 0xffff ? retry_ms : 0xffff);
}

/*
 * A CM reject's private data: the SDP listener's reason (enum
 * sdp_rej_reason), or 0 if it is not an SDP reject; for SDP_REJ_BUSY,
 * *retry_ms is when a place frees (0: not said).
 */
u8 sdp_proto_check_rej(const void *data, u32 len, u32 *retry_ms)
{
	const struct sdp_rej *rej = data;

	*retry_ms = 0;
	if (!rej || len < offsetof(struct sdp_rej, retry_ms) || rej->mid != SDP_MID_HELLO)
		return 0;
	if (rej->reason == SDP_REJ_BUSY && len >= sizeof(*rej))
		*retry_ms = be16_to_cpu(rej->retry_ms);
	return rej->reason;
}

/* The peer's Hello or HelloAck is in: its message 0 offered @peer_bufs. */
void sdp_seq_start(struct sdp_seq *s, u16 peer_bufs)
{
	s->tx_bufs = peer_bufs;
	s->hist[0] = (struct sdp_adv){ s->rx_adv, 0 };
}

/* The BSDH of our next message; sdp_seq_sent() once it is posted. */
void sdp_proto_bsdh(const struct sdp_seq *s, struct sdp_bsdh *h, u8 mid,
		    u8 flags, u32 len, u16 bufs)
{
	h->mid = mid;
	h->flags = flags;
	h->bufs = cpu_to_be16(bufs);
	h->len = cpu_to_be32(len);
	h->mseq = cpu_to_be32(s->tx_mseq + 1);
	h->mseq_ack = cpu_to_be32(s->rx_mseq);
}

void sdp_seq_sent(struct sdp_seq *s, u16 bufs)
{
	s->tx_mseq++;
	s->hist[s->tx_mseq & (SDP_HIST_SIZE - 1)] = (struct sdp_adv){ bufs, (u16)s->rx_mseq };
	s->rx_adv = bufs;
	s->rx_mseq_adv = s->rx_mseq;
}

/* Which messages hold no buffer once processed (they may use the spare). */
static bool sdp_mid_is_ctrl(const struct sdp_bsdh *h, u32 len)
{
	switch (h->mid) {
	case SDP_MID_DISCONN:
	case SDP_MID_ABORT:
	case SDP_MID_RDMARDCOMPL:
	case SDP_MID_SENDSM:
	case SDP_MID_SRCAVAIL_CANCEL:
	case SDP_MID_RDMAWRCOMPL:
	case SDP_MID_SINKAVAIL_CANCEL:
		return true;
	case SDP_MID_DATA:
		return len == sizeof(*h);
	default:
		return false;
	}
}

/* The header's fields against the sequence numbers and credits. */
static int sdp_check_bsdh(const struct sdp_seq *s, const struct sdp_bsdh *h,
			  u32 got)
{
	u32 len = be32_to_cpu(h->len);
	u32 mseq = be32_to_cpu(h->mseq);
	u32 ack = be32_to_cpu(h->mseq_ack);
	const struct sdp_adv *adv;

	if (got < sizeof(*h) || len != got)
		return SDP_MIB_BAD_LEN;
	if (mseq != s->rx_mseq + 1)
		return SDP_MIB_BAD_MSEQ;
	if ((s32)(ack - s->tx_mseq_acked) < 0 || (s32)(s->tx_mseq - ack) < 0)
		return SDP_MIB_BAD_MSEQ_ACK;
	if (be16_to_cpu(h->bufs) >= SDP_MAX_BUFS)
		return SDP_MIB_BAD_BUFS;
	/* Urgent data: only Data; the byte itself only in a non-empty one. */
	if ((h->flags & ~(SDP_OOB_PRES | SDP_OOB_PEND)) ||
	    (h->flags && h->mid != SDP_MID_DATA) ||
	    ((h->flags & SDP_OOB_PRES) && len == sizeof(*h)))
		return SDP_MIB_BAD_FLAGS;
	/*
	 * The peer had seen our message @ack, which offered adv->bufs buffers
	 * after its message adv->rx_mseq (its low 16 bits, which tell, struct
	 * sdp_adv); a control message may take the spare.
	 */
	adv = &s->hist[ack & (SDP_HIST_SIZE - 1)];
	if ((u16)(mseq - adv->rx_mseq) > adv->bufs + sdp_mid_is_ctrl(h, len))
		return SDP_MIB_BAD_CREDITS;
	return 0;
}

/* Bytes of the stream: a SinkAvail of ours that the peer saw takes them. */
bool sdp_proto_stream_bytes(const struct sdp_bsdh *h, u32 got)
{
	return (h->mid == SDP_MID_DATA && got > sizeof(*h)) ||
	       h->mid == SDP_MID_SRCAVAIL || h->mid == SDP_MID_DISCONN;
}

/*
 * Our SinkAvail is out and the peer had seen it (its message acknowledges
 * ours): its bytes go there, or it declines first; none come otherwise.
 */
static bool sdp_adv_seen(const struct sdp_bsdh *h, const struct sdp_zc_rules *z)
{
	return z->adv_out && (s32)(be32_to_cpu(h->mseq_ack) - z->adv_mseq) >= 0;
}

/* The zero-copy messages: whether they may come now, then their fields. */
static int sdp_check_zc(const struct sdp_bsdh *h, u32 got, bool rcvd_disconn,
			const struct sdp_zc_rules *z)
{
	u32 len;

	switch (h->mid) {
	case SDP_MID_SRCAVAIL:
		/* one at a time, into a stream still open */
		if (!z->offered || z->reading || rcvd_disconn || sdp_adv_seen(h, z))
			return SDP_MIB_UNEXPECTED_MID;
		if (got != SDP_SRCAVAIL_LEN)
			return SDP_MIB_BAD_LEN;
		len = be32_to_cpu(((const struct sdp_srcah *)(h + 1))->len);
		return len && len <= SDP_SRCAVAIL_MAX ? 0 : SDP_MIB_BAD_SRCAVAIL;
	case SDP_MID_RDMARDCOMPL:
		if (!z->src_left)
			return SDP_MIB_UNEXPECTED_MID;
		if (got != SDP_RDMARDCOMPL_LEN)
			return SDP_MIB_BAD_LEN;
		len = sdp_proto_compl_get(h);
		return len && len <= z->src_left ? 0 : SDP_MIB_BAD_RDMARDCOMPL;
	case SDP_MID_SENDSM:
		if (!z->src_left)
			return SDP_MIB_UNEXPECTED_MID;
		return got == sizeof(*h) ? 0 : SDP_MIB_BAD_LEN;
	case SDP_MID_SINKAVAIL:
		/* one at a time, each answered */
		if (!z->sink_offered || z->sink_held)
			return SDP_MIB_UNEXPECTED_MID;
		if (got != SDP_SRCAVAIL_LEN)
			return SDP_MIB_BAD_LEN;
		len = be32_to_cpu(((const struct sdp_srcah *)(h + 1))->len);
		return len && len <= SDP_SRCAVAIL_MAX ? 0 : SDP_MIB_BAD_SINKAVAIL;
	case SDP_MID_RDMAWRCOMPL:
		if (!z->adv_out)
			return SDP_MIB_UNEXPECTED_MID;
		if (got != SDP_RDMARDCOMPL_LEN)
			return SDP_MIB_BAD_LEN;
		/* bytes that crossed it came first: the peer may write none after */
		len = sdp_proto_compl_get(h);
		return len <= z->adv_len && !(len && z->adv_crossed) ? 0 :
		       SDP_MIB_BAD_RDMAWRCOMPL;
	case SDP_MID_SINKAVAIL_CANCEL:
		/* it may cross our RdmaWrCompl: then it asks for nothing */
		if (!z->sink_offered)
			return SDP_MIB_UNEXPECTED_MID;
		return got == sizeof(*h) ? 0 : SDP_MIB_BAD_LEN;
	default:	/* SDP_MID_SRCAVAIL_CANCEL */
		/* it may cross our RdmaRdCompl: then it asks for nothing */
		if (!z->offered)
			return SDP_MIB_UNEXPECTED_MID;
		return got == sizeof(*h) ? 0 : SDP_MIB_BAD_LEN;
	}
}

/*
 * A message of @got bytes from the peer, before anything in it is believed:
 * 0 if it is one the peer may send now (@rcvd_disconn: its DisConn came
 * before; @z: where zero-copy stands), or the counter naming the fault.
 * @imm: it came with immediate data, which no SDP message has.
 */
int sdp_proto_check(const struct sdp_seq *s, const struct sdp_bsdh *h,
		    u32 got, bool imm, bool rcvd_disconn,
		    const struct sdp_zc_rules *z)
{
	int mib = sdp_check_bsdh(s, h, got);

	if (mib)
		return mib;
	if (imm)
		return SDP_MIB_BAD_MID;
	switch (h->mid) {
	case SDP_MID_DATA:
		/*
		 * After DisConn, or while the peer's SrcAvail is read (its
		 * bytes come first), only credit updates.
		 */
		if ((rcvd_disconn && (got != sizeof(*h) || h->flags)) ||
		    (z->reading && got != sizeof(*h)) ||
		    (sdp_adv_seen(h, z) && got != sizeof(*h)))
			return SDP_MIB_UNEXPECTED_MID;
		return 0;
	case SDP_MID_DISCONN:
		if (got != sizeof(*h))
			return SDP_MIB_BAD_LEN;
		return rcvd_disconn || z->reading || sdp_adv_seen(h, z) ?
		       SDP_MIB_UNEXPECTED_MID : 0;
	case SDP_MID_ABORT:
		return 0;
	case SDP_MID_SRCAVAIL:
	case SDP_MID_RDMARDCOMPL:
	case SDP_MID_SENDSM:
	case SDP_MID_SRCAVAIL_CANCEL:
	case SDP_MID_SINKAVAIL:
	case SDP_MID_RDMAWRCOMPL:
	case SDP_MID_SINKAVAIL_CANCEL:
		return sdp_check_zc(h, got, rcvd_disconn, z);
	case SDP_MID_HELLO:
	case SDP_MID_HELLO_ACK:
	case SDP_MID_CHRCVBUF:
	case SDP_MID_CHRCVBUF_ACK:
		/* Setup's, and a resize we never ask for. */
		return SDP_MIB_UNEXPECTED_MID;
	default:
		return SDP_MIB_BAD_MID;
	}
}

/* A message sdp_proto_check() passed: what it tells of both directions. */
void sdp_seq_received(struct sdp_seq *s, const struct sdp_bsdh *h)
{
	s->rx_mseq = be32_to_cpu(h->mseq);
	s->tx_mseq_acked = be32_to_cpu(h->mseq_ack);
	s->tx_bufs = be16_to_cpu(h->bufs);
}

void sdp_proto_avail(struct sdp_bsdh *h, u32 len, u32 rkey, u64 vaddr)
{
	struct sdp_srcah *sa = (struct sdp_srcah *)(h + 1);

	sa->len = cpu_to_be32(len);
	sa->rkey = cpu_to_be32(rkey);
	sa->vaddr = cpu_to_be64(vaddr);
}

/* A SrcAvail or SinkAvail sdp_proto_check() passed: its length, key and address. */
u32 sdp_proto_avail_get(const struct sdp_bsdh *h, u32 *rkey, u64 *vaddr)
{
	const struct sdp_srcah *sa = (const struct sdp_srcah *)(h + 1);

	*rkey = be32_to_cpu(sa->rkey);
	*vaddr = be64_to_cpu(sa->vaddr);
	return be32_to_cpu(sa->len);
}

void sdp_proto_compl(struct sdp_bsdh *h, u32 len)
{
	((struct sdp_rrch *)(h + 1))->len = cpu_to_be32(len);
}

u32 sdp_proto_compl_get(const struct sdp_bsdh *h)
{
	return be32_to_cpu(((const struct sdp_rrch *)(h + 1))->len);
}
