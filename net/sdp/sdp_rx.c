// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol: the receive path.
 *
 * Receive completions arrive in posting order. Each message is checked by
 * sdp_proto_check() against what the peer may send (length, sequence
 * numbers, credits, message id) before anything in it is believed; a fault
 * aborts the connection and bumps the counter that names it. Data stays in
 * its buffer until read; the buffer is reposted when empty and the freed
 * credit is returned to the peer piggy-backed on the next message, or alone
 * when the peer needs it.
 */
#include <linux/uio.h>

#include "sdp_rdma.h"

int sdp_post_recv(struct sdp_conn *c, struct sdp_rx_slot *slot)
{
	struct ib_sge sge = {
		.addr	= slot->dma,
		.length	= c->rcv_size,
		.lkey	= c->lkey,
	};
	struct ib_recv_wr wr = {
		.wr_cqe		= &slot->cqe,
		.sg_list	= &sge,
		.num_sge	= 1,
	};
	int err;

	ib_dma_sync_single_for_device(c->sdev->ibdev, slot->dma, c->rcv_size,
				      DMA_FROM_DEVICE);
	slot->done = false;
	slot->len = 0;
	slot->off = 0;
	err = ib_post_recv(c->qp, &wr, NULL);
	if (err)
		return err;
	list_add_tail(&slot->node, &c->rx_posted);
	c->rx_posted_nr++;
	return 0;
}

void sdp_rx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct sdp_rx_slot *slot = container_of(wc->wr_cqe, struct sdp_rx_slot, cqe);
	struct sdp_sock *ssk = cq->cq_context;
	struct sock *sk = &ssk->sk;

	bh_lock_sock(sk);
	slot->status = wc->status;
	slot->len = wc->byte_len;
	slot->imm = wc->wc_flags & IB_WC_WITH_IMM;
	slot->done = true;
	__sdp_defer_or_process(ssk);
	bh_unlock_sock(sk);
}

static int sdp_repost(struct sdp_conn *c, struct sdp_rx_slot *slot)
{
	list_del_init(&slot->node);
	return sdp_post_recv(c, slot);
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
static int sdp_urg_notice(struct sdp_sock *ssk)
{
	struct sock *sk = &ssk->sk;
	struct sdp_conn *c = ssk->conn;
	int err = 0;

	if (ssk->urg_data == SDP_URG_NOTYET)
		return 0;
	sk_send_sigurg(sk);
	if (sdp_urg_next(ssk) && !sock_flag(sk, SOCK_URGINLINE))
		err = sdp_rx_drop_byte(c);
	WRITE_ONCE(ssk->urg_data, SDP_URG_NOTYET);
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
static void sdp_qp_down(struct sdp_sock *ssk, u8 status)
{
	struct sock *sk = &ssk->sk;

	if (sk->sk_state == TCP_CLOSE)
		return;
	if (status != IB_WC_WR_FLUSH_ERR || !test_bit(SDP_F_CM_GONE, &ssk->flags)) {
		ssk->conn->failed = true;
		sdp_up->error(ssk, ECONNRESET, status == IB_WC_LOC_LEN_ERR ?
			      SDP_MIB_BAD_LEN : SDP_MIB_QP_ERROR);
		return;
	}
	if (!test_bit(SDP_F_RCVD_DISCONN, &ssk->flags)) {
		sdp_up->error(ssk, ECONNRESET, SDP_MIB_DISCONN_MISSING);
		return;
	}
	/* Our DisConn can no longer go: writes fail as after a RST. */
	sdp_up->done(sk, sk->sk_state == TCP_CLOSE_WAIT ? EPIPE : 0);
}

/* Handle one message; returns false when the connection ended. */
static bool sdp_rx_one(struct sdp_sock *ssk, struct sdp_rx_slot *slot)
{
	struct sock *sk = &ssk->sk;
	struct sdp_conn *c = ssk->conn;
	struct sdp_bsdh *h = slot->buf;
	u32 len;
	int mib;

	c->rx_posted_nr--;
	if (slot->status != IB_WC_SUCCESS) {
		list_del_init(&slot->node);
		sdp_qp_down(ssk, slot->status);
		return false;
	}
	ib_dma_sync_single_for_cpu(c->sdev->ibdev, slot->dma, c->rcv_size,
				   DMA_FROM_DEVICE);
	mib = sdp_proto_check(&c->seq, h, slot->len, slot->imm,
			      test_bit(SDP_F_RCVD_DISCONN, &ssk->flags));
	if (mib) {
		list_del_init(&slot->node);
		sdp_up->error(ssk, ECONNRESET, mib);
		return false;
	}
	len = slot->len;
	sdp_seq_received(&c->seq, h);
	ssk->rx_stamp = jiffies;
	ssk->stats.rx_msgs++;
	SDP_INC_STATS(sock_net(sk), SDP_MIB_RX_MSGS);

	switch (h->mid) {
	case SDP_MID_DATA:
		if (h->flags && !sock_flag(sk, SOCK_DEAD) && sdp_urg_notice(ssk)) {
			mib = SDP_MIB_QP_ERROR;
			break;
		}
		if (len == sizeof(*h))
			break;
		if (sock_flag(sk, SOCK_DEAD)) {
			/* Data for a closed socket: reset, as TCP does. */
			list_del_init(&slot->node);
			sdp_up->error(ssk, 0, SDP_MIB_ABORT_ON_DATA);
			return false;
		}
		slot->off = sizeof(*h);
		list_move_tail(&slot->node, &c->rx_ready);
		/* Only the spare and the control credit left: the peer waits. */
		if (c->rx_posted_nr <= SDP_CTRL_CREDITS + 1)
			c->rx_starved = true;
		c->rx_ready_bytes += len - sizeof(*h);
		ssk->rcv_nxt += len - sizeof(*h);
		if (h->flags & SDP_OOB_PRES) {
			/* the message's last byte (tcp_urg()) */
			WRITE_ONCE(ssk->urg_seq, ssk->rcv_nxt - 1);
			WRITE_ONCE(ssk->urg_data, SDP_URG_VALID |
				   ((u8 *)slot->buf)[len - 1]);
		}
		ssk->stats.rx_bytes += len - sizeof(*h);
		SDP_ADD_STATS(sock_net(sk), SDP_MIB_RX_BYTES, len - sizeof(*h));
		return true;
	case SDP_MID_DISCONN:
		set_bit(SDP_F_RCVD_DISCONN, &ssk->flags);
		break;
	case SDP_MID_ABORT:
		list_del_init(&slot->node);
		SDP_INC_STATS(sock_net(sk), SDP_MIB_ABORT_RCVD);
		/* tcp_reset(): after the peer's FIN a reset reads as EPIPE. */
		sdp_up->done(sk, sk->sk_state == TCP_CLOSE_WAIT ? EPIPE : ECONNRESET);
		return false;
	}
	if (mib) {
		list_del_init(&slot->node);
		sdp_up->error(ssk, ECONNRESET, mib);
		return false;
	}
	if (sdp_repost(c, slot)) {
		sdp_up->error(ssk, ECONNRESET, SDP_MIB_QP_ERROR);
		return false;
	}
	if (h->mid == SDP_MID_DISCONN)
		sdp_up->peer_disconn(ssk);
	return true;
}

/* The peer had used up its credits: double the ring. True if it grew. */
static bool sdp_rx_more(struct sdp_sock *ssk, gfp_t gfp)
{
	struct sdp_conn *c = ssk->conn;
	int err;

	if (!c || !c->rx_starved)
		return false;
	err = sdp_rx_grow(c, 2 * c->rx_alloc, gfp);
	if (err == -ENOMEM)
		return false;	/* the reader tries again */
	c->rx_starved = false;
	if (err)
		sdp_up->error(ssk, ECONNRESET, SDP_MIB_QP_ERROR);
	return !err;
}

/* Take in completed receives, in order. */
void sdp_rx_reap(struct sdp_sock *ssk)
{
	struct sock *sk = &ssk->sk;
	struct sdp_conn *c = ssk->conn;
	u32 before = c->rx_ready_bytes, nxt = ssk->rcv_nxt;
	struct sdp_rx_slot *slot;

	while (ssk->conn && !list_empty(&c->rx_posted)) {
		slot = list_first_entry(&c->rx_posted, struct sdp_rx_slot, node);
		if (!slot->done)
			break;
		if (sk->sk_state == TCP_CLOSE) {
			/* Over: nothing after the end counts (teardown flushes). */
			list_del_init(&slot->node);
			c->rx_posted_nr--;
			continue;
		}
		if (!sdp_rx_one(ssk, slot))
			break;
	}
	sdp_rx_more(ssk, GFP_ATOMIC | __GFP_NOWARN);
	/* (an urgent byte may replace one it drops: the count stays) */
	if ((c->rx_ready_bytes != before || ssk->rcv_nxt != nxt) &&
	    !sock_flag(sk, SOCK_DEAD)) {
		/* poll() reads the counts: they must be current when it wakes. */
		sdp_update_counts(ssk);
		sk->sk_data_ready(sk);
		if (test_bit(SDP_F_DEFER_ACCEPT, &ssk->flags))
			sdp_defer_data(ssk);
	}
}

/* SIOCINQ (tcp_inq()): with an urgent byte ahead, the bytes before it. */
int sdp_inq(struct sdp_sock *ssk)
{
	u32 copied;

	if (!ssk->conn)
		return 0;
	copied = sdp_copied_seq(ssk);
	if (!sock_flag(&ssk->sk, SOCK_URGINLINE) &&
	    (ssk->urg_data & (SDP_URG_VALID | SDP_URG_READ)) &&
	    (s32)(ssk->urg_seq - copied) >= 0 &&
	    (s32)(ssk->urg_seq - ssk->rcv_nxt) < 0)
		return ssk->urg_seq - copied;
	return ssk->conn->rx_ready_bytes;
}

/* SIOCATMARK: the next byte to read is the urgent one. */
bool sdp_at_mark(const struct sdp_sock *ssk)
{
	return ssk->conn && sdp_urg_next(ssk);
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
static int sdp_rx_copy(struct sdp_sock *ssk, struct msghdr *msg, size_t len,
		       int flags, u32 *peeked)
{
	struct sock *sk = &ssk->sk;
	struct sdp_conn *c = ssk->conn;
	struct sdp_rx_slot *slot, *tmp;
	size_t copied = 0;
	u32 skip, seq, start;
	int err = 0;

	if (!c)
		return 0;
	skip = flags & MSG_PEEK ? *peeked : 0;
	seq = sdp_copied_seq(ssk) + skip;
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
		if (ssk->urg_data & (SDP_URG_VALID | SDP_URG_READ)) {
			urg = ssk->urg_seq - seq;
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
		if ((ssk->urg_data & (SDP_URG_VALID | SDP_URG_READ)) &&
		    (s32)(seq - ssk->urg_seq) > 0 && !(flags & MSG_PEEK))
			WRITE_ONCE(ssk->urg_data, 0);
		if (sdp_urg_at(ssk, seq) && copied)
			break;
	}
	if (flags & MSG_PEEK)
		*peeked += seq - start;
	if (err == -EIO)
		sdp_up->error(ssk, ECONNRESET, SDP_MIB_QP_ERROR);
	return copied ? copied : err;
}

/*
 * recvmsg()'s copy (sdp_rx_copy()), then the credits it freed: the ring
 * doubles if the peer had run out, and what was consumed is returned.
 */
int sdp_conn_read(struct sdp_sock *ssk, struct msghdr *msg, size_t len,
		  int flags, u32 *peeked)
{
	int n = sdp_rx_copy(ssk, msg, len, flags, peeked);

	if (n >= 0 && (sdp_rx_more(ssk, ssk->sk.sk_allocation) || !(flags & MSG_PEEK)))
		sdp_tx_push(ssk, false);
	return n;
}

/* Where reading stands in the stream (0 without a connection). */
u32 sdp_conn_read_seq(const struct sdp_sock *ssk)
{
	return ssk->conn ? sdp_copied_seq(ssk) : 0;
}
