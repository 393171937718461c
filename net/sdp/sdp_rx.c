// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol: the receive path.
 *
 * Receive completions arrive in posting order. Each message is checked by
 * sdp_proto_check() against what the peer may send (length, sequence
 * numbers, credits, message id) before anything in it is believed; a fault
 * resets the connection and bumps the counter that names it. Then it goes
 * to its message id's handler. Data stays in its buffer until read; the
 * buffer is reposted when empty and the freed credit is returned to the
 * peer piggy-backed on the next message, or alone when the peer needs it.
 */
#include <linux/uio.h>

#include "sdp_rdma.h"

/* Post @slot's buffer at the end of the receive ring (on an SRQ: promise it). */
static int sdp_rx_post(struct sdp_conn *c, struct sdp_rx_slot *slot)
{
	int err;

	slot->done = false;
	slot->len = 0;
	slot->off = 0;
	if (!c->srq) {
		err = sdp_post_recv(c, &slot->wr, slot->dma, c->rcv_size);
		if (err)
			return err;
	}
	list_add_tail(&slot->node, &c->rx_posted);
	c->rx_posted_nr++;
	return 0;
}

/*
 * Give buffers to the receive ring's slots up to @n and post them, wherever
 * the rings may be touched (sdp_process). -ENOMEM leaves the ring as it
 * was; any other error means the QP is unusable.
 */
int sdp_rx_grow(struct sdp_conn *c, u32 n, gfp_t gfp)
{
	struct sdp_rx_slot *slot;
	int err;

	n = min(n, c->rx_count);
	if (c->srq && c->rx_alloc < n &&
	    !sdp_buf_could_charge(c, (n - c->rx_alloc) * c->rcv_size))
		return -ENOMEM;
	while (c->rx_alloc < n) {
		slot = &c->rx[c->rx_alloc];
		err = c->srq ? 0 : sdp_buf_map(c, &slot->buf, &slot->dma, c->rcv_size,
					       SDP_MEM_RX, gfp);
		if (err)
			return err;
		c->rx_alloc++;
		err = sdp_rx_post(c, slot);
		if (err)
			return err;
	}
	return 0;
}

/* The poller's (sdp_cq.c): the slot is the engine's once done is seen. */
static void sdp_rx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct sdp_wr *wr = sdp_wr_of(wc);
	struct sdp_rx_slot *slot = container_of(wr, struct sdp_rx_slot, wr);

	slot->status = wc->status;
	slot->len = wc->byte_len;
	slot->imm = wc->wc_flags & IB_WC_WITH_IMM;
	smp_store_release(&slot->done, true);
	sdp_cq_mark(cq, wr->conn);
}

void sdp_rx_ring_init(struct sdp_conn *c)
{
	u32 i;

	INIT_LIST_HEAD(&c->rx_posted);
	INIT_LIST_HEAD(&c->rx_ready);
	for (i = 0; i < c->rx_count; i++) {
		sdp_wr_init(&c->rx[i].wr, c, sdp_rx_done);
		INIT_LIST_HEAD(&c->rx[i].node);
	}
}

/*
 * On an SRQ (sdp_srq.c): the next message it took, to @slot (the oldest
 * promise), now charged to the socket as a ring buffer would be, or,
 * refused, to nobody: it is here already, loose (the SRQ lends no more
 * than SDP_SRQ_BUFS such, sdp_srq.c). False: none waits.
 */
static bool sdp_rx_land(struct sdp_conn *c, struct sdp_rx_slot *slot)
{
	struct sdp_land *e;

	if (c->land_cons == smp_load_acquire(&c->land_prod))
		return false;
	e = &c->land[c->land_cons & c->land_mask];
	slot->buf = e->buf;
	slot->dma = e->dma;
	slot->len = e->len;
	slot->status = e->status;
	slot->imm = e->imm;
	slot->kmem = e->buf && !sdp_buf_adopt(c, c->rcv_size);
	if (slot->kmem)
		atomic_inc(&c->srq->loose);
	slot->done = true;
	smp_store_release(&c->land_cons, c->land_cons + 1);
	return true;
}

/* A slot read to its end: its buffer goes, the promise is made again. */
static void sdp_rx_unslot(struct sdp_conn *c, struct sdp_rx_slot *slot)
{
	if (slot->kmem)
		atomic_dec(&c->srq->loose);
	sdp_buf_unmap(c, slot->buf, slot->dma, c->rcv_size,
		      slot->kmem ? SDP_MEM_RX_KERNEL : SDP_MEM_RX);
	slot->buf = NULL;
	slot->kmem = false;
}

/* A buffer read to its end: back to the ring, or, an RDMA Read's, freed. */
static int sdp_repost(struct sdp_conn *c, struct sdp_rx_slot *slot)
{
	list_del_init(&slot->node);
	if (!slot->rd) {
		if (c->srq)
			sdp_rx_unslot(c, slot);
		return sdp_rx_post(c, slot);
	}
	sdp_zc_rd_free(c, slot);
	return sdp_zc_read_more(c, GFP_ATOMIC);
}

/* Pass over the next unread byte; 0 or -EIO (repost failed). */
static int sdp_rx_drop_byte(struct sdp_conn *c)
{
	struct sdp_rx_slot *slot;

	slot = list_first_entry(&c->rx_ready, struct sdp_rx_slot, node);
	slot->off++;
	c->rx_ready_bytes--;
	return slot->off == slot->len ? sdp_repost(c, slot) : 0;
}

/*
 * The peer announced urgent data (tcp_check_urg()): SIGURG, once per urgent
 * byte. An unread urgent byte still at the mark is dropped from the stream
 * when a new one replaces it, unless it is read inline.
 */
static int sdp_urg_notice(struct sdp_conn *c)
{
	struct sock *sk = c->sk;
	int err = 0;

	if (c->v.urg_data == SDP_URG_NOTYET)
		return 0;
	sk_send_sigurg(sk);
	if (sdp_urg_next(c) && !sock_flag(sk, SOCK_URGINLINE))
		err = sdp_rx_drop_byte(c);
	WRITE_ONCE(c->v.urg_data, SDP_URG_NOTYET);
	return err;
}

/*
 * The QP went down under us. A flush after we, or the peer's disconnect,
 * moved it to error ends the connection: in order if the peer's DisConn
 * came first, else as a reset, counted (DisConnMissing: the peer's CM
 * ended a connection its SDP never closed, as when its process dies). Any
 * other way the QP failed by itself: the peer did what the HCA refuses (a
 * message beyond our buffer, RDMA on our memory) or the device failed.
 * That is counted, and the teardown's disconnect tells the peer, whose CM
 * would otherwise never hear of it.
 */
static void sdp_qp_down(struct sdp_conn *c, u8 status)
{
	struct sock *sk = c->sk;

	if (sk->sk_state == TCP_CLOSE)
		return;
	if (status != IB_WC_WR_FLUSH_ERR || !test_bit(SDP_C_CM_GONE, &c->flags)) {
		c->failed = true;
		sdp_up->error(sk, ECONNRESET, status == IB_WC_LOC_LEN_ERR ?
			      SDP_MIB_BAD_LEN : SDP_MIB_QP_ERROR);
		return;
	}
	if (!test_bit(SDP_C_RCVD_DISCONN, &c->flags)) {
		sdp_up->error(sk, ECONNRESET, SDP_MIB_DISCONN_MISSING);
		return;
	}
	/* Our DisConn can no longer go: writes fail as after a RST. */
	sdp_up->done(sk, sk->sk_state == TCP_CLOSE_WAIT ? EPIPE : 0);
}

/* What a message's handler did with its buffer. */
enum sdp_rx_verdict {
	SDP_RX_REPOST,		/* done with: post it again */
	SDP_RX_HELD,		/* kept for the reader, or already reposted */
	SDP_RX_END,		/* the connection ended: it is off the ring */
};

/* The connection ends with @mib counted: @slot leaves the ring. */
static int sdp_rx_fail(struct sdp_conn *c, struct sdp_rx_slot *slot, int err, int mib)
{
	list_del_init(&slot->node);
	sdp_up->error(c->sk, err, mib);
	return SDP_RX_END;
}

/* Data: kept until read; an empty one carries only credits (or OOB_PEND). */
static int sdp_rx_data(struct sdp_conn *c, struct sdp_rx_slot *slot,
		       const struct sdp_bsdh *h)
{
	struct sock *sk = c->sk;
	u32 len = slot->len, n = len - sizeof(*h);

	if (h->flags && !sock_flag(sk, SOCK_DEAD) && sdp_urg_notice(c))
		return sdp_rx_fail(c, slot, ECONNRESET, SDP_MIB_QP_ERROR);
	if (!n)
		return SDP_RX_REPOST;
	/* Data for a closed socket: reset, as TCP does. */
	if (sock_flag(sk, SOCK_DEAD))
		return sdp_rx_fail(c, slot, 0, SDP_MIB_ABORT_ON_DATA);
	slot->off = sizeof(*h);
	list_move_tail(&slot->node, &c->rx_ready);
	/* Only the spare and the control credit left: the peer waits. */
	if (c->rx_posted_nr <= SDP_CTRL_CREDITS + 1)
		c->rx_starved = true;
	c->rx_ready_bytes += n;
	c->rcv_nxt += n;
	if (h->flags & SDP_OOB_PRES) {
		/* the message's last byte (tcp_urg()) */
		WRITE_ONCE(c->urg_seq, c->rcv_nxt - 1);
		WRITE_ONCE(c->v.urg_data, SDP_URG_VALID | ((u8 *)slot->buf)[len - 1]);
	}
	c->v.stats.rx_bytes += n;
	SDP_ADD_STATS(sock_net(sk), SDP_MIB_RX_BYTES, n);
	return SDP_RX_HELD;
}

/* The peer's DisConn: its data ends here; the buffer goes back first. */
static int sdp_rx_disconn(struct sdp_conn *c, struct sdp_rx_slot *slot,
			  const struct sdp_bsdh *h)
{
	set_bit(SDP_C_RCVD_DISCONN, &c->flags);
	if (sdp_repost(c, slot)) {
		sdp_up->error(c->sk, ECONNRESET, SDP_MIB_QP_ERROR);
		return SDP_RX_END;
	}
	sdp_up->peer_disconn(c->sk);
	return SDP_RX_HELD;
}

static int sdp_rx_abort(struct sdp_conn *c, struct sdp_rx_slot *slot,
			const struct sdp_bsdh *h)
{
	struct sock *sk = c->sk;

	list_del_init(&slot->node);
	SDP_INC_STATS(sock_net(sk), SDP_MIB_ABORT_RCVD);
	/* tcp_reset(): after the peer's FIN a reset reads as EPIPE. */
	sdp_up->done(sk, sk->sk_state == TCP_CLOSE_WAIT ? EPIPE : ECONNRESET);
	return SDP_RX_END;
}

/* The peer offers bytes to read (sdp_zc.c). */
static int sdp_rx_srcavail(struct sdp_conn *c, struct sdp_rx_slot *slot,
			   const struct sdp_bsdh *h)
{
	if (sock_flag(c->sk, SOCK_DEAD))
		return sdp_rx_fail(c, slot, 0, SDP_MIB_ABORT_ON_DATA);
	if (sdp_zc_srcavail(c, h))
		return sdp_rx_fail(c, slot, ECONNRESET, SDP_MIB_QP_ERROR);
	return SDP_RX_REPOST;
}

static int sdp_rx_rdmardcompl(struct sdp_conn *c, struct sdp_rx_slot *slot,
			      const struct sdp_bsdh *h)
{
	sdp_zc_rdmardcompl(c, sdp_proto_compl_get(h));
	return SDP_RX_REPOST;
}

static int sdp_rx_sendsm(struct sdp_conn *c, struct sdp_rx_slot *slot,
			 const struct sdp_bsdh *h)
{
	sdp_zc_sendsm(c);
	return SDP_RX_REPOST;
}

static int sdp_rx_srcavail_cancel(struct sdp_conn *c, struct sdp_rx_slot *slot,
				  const struct sdp_bsdh *h)
{
	sdp_zc_cancelled(c);
	return SDP_RX_REPOST;
}

/* The peer offers its reader's buffer (sdp_zr.c). */
static int sdp_rx_sinkavail(struct sdp_conn *c, struct sdp_rx_slot *slot,
			    const struct sdp_bsdh *h)
{
	sdp_zr_sinkavail(c, h);
	return SDP_RX_REPOST;
}

static int sdp_rx_rdmawrcompl(struct sdp_conn *c, struct sdp_rx_slot *slot,
			      const struct sdp_bsdh *h)
{
	sdp_zr_wrcompl(c, sdp_proto_compl_get(h));
	return SDP_RX_REPOST;
}

static int sdp_rx_sinkavail_cancel(struct sdp_conn *c, struct sdp_rx_slot *slot,
				   const struct sdp_bsdh *h)
{
	sdp_zr_sinkavail_cancel(c);
	return SDP_RX_REPOST;
}

/*
 * The messages sdp_proto_check() lets through, by id: one small handler
 * each. An id it passes that has none here is counted as unexpected.
 */
static int (*const sdp_rx_handlers[256])(struct sdp_conn *c, struct sdp_rx_slot *slot,
					 const struct sdp_bsdh *h) = {
	[SDP_MID_DATA]		= sdp_rx_data,
	[SDP_MID_DISCONN]	= sdp_rx_disconn,
	[SDP_MID_ABORT]		= sdp_rx_abort,
	[SDP_MID_SRCAVAIL]	= sdp_rx_srcavail,
	[SDP_MID_RDMARDCOMPL]	= sdp_rx_rdmardcompl,
	[SDP_MID_SENDSM]	= sdp_rx_sendsm,
	[SDP_MID_SRCAVAIL_CANCEL] = sdp_rx_srcavail_cancel,
	[SDP_MID_SINKAVAIL]	= sdp_rx_sinkavail,
	[SDP_MID_RDMAWRCOMPL]	= sdp_rx_rdmawrcompl,
	[SDP_MID_SINKAVAIL_CANCEL] = sdp_rx_sinkavail_cancel,
};

/* Handle one message; returns false when the connection ended. */
static bool sdp_rx_one(struct sdp_conn *c, struct sdp_rx_slot *slot)
{
	struct sock *sk = c->sk;
	struct sdp_bsdh *h = slot->buf;
	struct sdp_zc_rules z;
	int mib, verdict;

	c->rx_posted_nr--;
	if (slot->status != IB_WC_SUCCESS) {
		list_del_init(&slot->node);
		sdp_qp_down(c, slot->status);
		return false;
	}
	ib_dma_sync_single_for_cpu(c->sdev->ibdev, slot->dma, c->rcv_size,
				   DMA_FROM_DEVICE);
	sdp_zc_rules(c, &z);
	mib = sdp_proto_check(&c->seq, h, slot->len, slot->imm,
			      test_bit(SDP_C_RCVD_DISCONN, &c->flags), &z);
	if (!mib && !sdp_rx_handlers[h->mid])
		mib = SDP_MIB_UNEXPECTED_MID;
	if (mib)
		return sdp_rx_fail(c, slot, ECONNRESET, mib) != SDP_RX_END;
	sdp_seq_received(&c->seq, h);
	/* (the check let them through: sent before the peer saw our SinkAvail) */
	if (z.adv_out && sdp_proto_stream_bytes(h, slot->len))
		sdp_zr_crossed(c);
	c->rx_stamp = jiffies;
	c->v.stats.rx_msgs++;
	SDP_INC_STATS(sock_net(sk), SDP_MIB_RX_MSGS);

	verdict = sdp_rx_handlers[h->mid](c, slot, h);
	if (verdict == SDP_RX_REPOST && sdp_repost(c, slot)) {
		sdp_up->error(sk, ECONNRESET, SDP_MIB_QP_ERROR);
		return false;
	}
	return verdict != SDP_RX_END;
}

/* The peer had used up its credits: double the ring. True if it grew. */
static bool sdp_rx_more(struct sdp_conn *c, gfp_t gfp)
{
	int err;

	if (!c->v.live || !c->rx_starved)
		return false;
	err = sdp_rx_grow(c, 2 * c->rx_alloc, gfp);
	if (err == -ENOMEM)
		return false;	/* the reader tries again */
	c->rx_starved = false;
	if (err)
		sdp_up->error(c->sk, ECONNRESET, SDP_MIB_QP_ERROR);
	return !err;
}

/* Take in completed receives, in order. */
void sdp_rx_reap(struct sdp_conn *c)
{
	struct sock *sk = c->sk;
	u32 before = c->rx_ready_bytes, nxt = c->rcv_nxt;
	struct sdp_rx_slot *slot;

	while (c->v.live && !list_empty(&c->rx_posted)) {
		slot = list_first_entry(&c->rx_posted, struct sdp_rx_slot, node);
		if (!smp_load_acquire(&slot->done) && !(c->srq && sdp_rx_land(c, slot)))
			break;
		if (sk->sk_state == TCP_CLOSE) {
			/* Over: nothing after the end counts (teardown flushes). */
			list_del_init(&slot->node);
			c->rx_posted_nr--;
			continue;
		}
		if (!sdp_rx_one(c, slot))
			break;
	}
	sdp_rx_more(c, GFP_ATOMIC | __GFP_NOWARN);
	/* (an urgent byte may replace one it drops: the count stays) */
	if ((c->rx_ready_bytes != before || c->rcv_nxt != nxt) &&
	    !sock_flag(sk, SOCK_DEAD)) {
		/* poll() reads the counts: they must be current when it wakes. */
		sdp_update_counts(c);
		sdp_up->data_ready(sk);
	}
}

/* SIOCINQ (tcp_inq()): with an urgent byte ahead, the bytes before it. */
int sdp_conn_inq(const struct sdp_conn *c)
{
	u32 copied;

	if (!c->v.live)
		return 0;
	copied = sdp_copied_seq(c);
	if (!sock_flag(c->sk, SOCK_URGINLINE) &&
	    (c->v.urg_data & (SDP_URG_VALID | SDP_URG_READ)) &&
	    (s32)(c->urg_seq - copied) >= 0 &&
	    (s32)(c->urg_seq - c->rcv_nxt) < 0)
		return c->urg_seq - copied;
	return c->rx_ready_bytes;
}

/* SIOCATMARK: the next byte to read is the urgent one. */
bool sdp_conn_at_mark(const struct sdp_conn *c)
{
	return c->v.live && sdp_urg_next(c);
}

/* recv(MSG_OOB) took the urgent byte. */
void sdp_conn_urg_read(struct sdp_conn *c)
{
	WRITE_ONCE(c->v.urg_data, SDP_URG_READ);
}

/* Does the urgent byte stand at @seq of the stream (recvmsg()'s mark)? */
bool sdp_conn_urg_at(const struct sdp_conn *c, u32 seq)
{
	return c->v.live && sdp_urg_at(c, seq);
}

/*
 * Copy up to @len bytes from the ready buffers; emptied buffers are
 * reposted. With MSG_PEEK nothing is consumed: *@peeked bytes of the stream
 * (shown, or passed over, by an earlier round of the same call) are skipped,
 * and it grows by what this round passes. Reading stops at the urgent mark
 * once something was copied; at the mark the urgent byte is passed over
 * unless SO_OOBINLINE (tcp_recvmsg_locked()).
 * Returns bytes taken or a negative errno.
 */
static int sdp_rx_copy(struct sdp_conn *c, struct msghdr *msg, size_t len,
		       int flags, u32 *peeked)
{
	struct sock *sk = c->sk;
	struct sdp_rx_slot *slot, *tmp;
	size_t copied = 0;
	u32 skip, seq, start;
	int err = 0;

	if (!c->v.live)
		return 0;
	skip = flags & MSG_PEEK ? *peeked : 0;
	seq = sdp_copied_seq(c) + skip;
	start = seq;
	list_for_each_entry_safe(slot, tmp, &c->rx_ready, node) {
		u32 off = slot->off, n, urg;

		if (skip >= slot->len - off) {
			skip -= slot->len - off;
			continue;
		}
		off += skip;
		skip = 0;
		n = min_t(size_t, slot->len - off, len - copied);
		if (!n)
			break;
		if (c->v.urg_data & (SDP_URG_VALID | SDP_URG_READ)) {
			urg = c->urg_seq - seq;
			if (!urg) {
				if (copied)
					break;
				if (!sock_flag(sk, SOCK_URGINLINE)) {
					off++;
					n--;
					seq++;
				}
			} else if (urg < n) {
				n = urg;
			}
		}
		if (!(flags & MSG_TRUNC) &&
		    copy_to_iter(slot->buf + off, n, &msg->msg_iter) != n) {
			err = -EFAULT;
			break;
		}
		copied += n;
		seq += n;
		if (!(flags & MSG_PEEK)) {
			c->rx_ready_bytes -= off + n - slot->off;
			slot->off = off + n;
			if (slot->off == slot->len && sdp_repost(c, slot)) {
				err = -EIO;
				break;
			}
		}
		/* past the urgent byte: it is no longer pending */
		if ((c->v.urg_data & (SDP_URG_VALID | SDP_URG_READ)) &&
		    (s32)(seq - c->urg_seq) > 0 && !(flags & MSG_PEEK))
			WRITE_ONCE(c->v.urg_data, 0);
		if (sdp_urg_at(c, seq) && copied)
			break;
	}
	if (flags & MSG_PEEK)
		*peeked += seq - start;
	if (err == -EIO)
		sdp_up->error(sk, ECONNRESET, SDP_MIB_QP_ERROR);
	return copied ? copied : err;
}

/*
 * recvmsg()'s copy (sdp_rx_copy()), then the credits it freed: the ring
 * doubles if the peer had run out, and what was consumed is returned.
 */
int sdp_conn_read(struct sdp_conn *c, struct msghdr *msg, size_t len,
		  int flags, u32 *peeked)
{
	int n = sdp_rx_copy(c, msg, len, flags, peeked);

	/* the peer's SrcAvail waits for room that ring buffers held, or memory */
	if (c->v.live && sdp_zc_read_more(c, c->sk->sk_allocation))
		sdp_up->error(c->sk, ECONNRESET, SDP_MIB_QP_ERROR);
	if (n >= 0 && (sdp_rx_more(c, c->sk->sk_allocation) || !(flags & MSG_PEEK)))
		sdp_tx_push(c, false);
	return n;
}

/* Where reading stands in the stream (0 without a connection). */
u32 sdp_conn_read_seq(const struct sdp_conn *c)
{
	return c->v.live ? sdp_copied_seq(c) : 0;
}
