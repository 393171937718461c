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
#include <linux/sched/clock.h>
#include <linux/uio.h>

#include "sdp_rdma.h"
#include "sdp_fallback.h"

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
 * The QP went down under us (its receives flushed, or one failed). A peer
 * that had sent DisConn was through; otherwise this is a reset.
 */
static void sdp_qp_down(struct sdp_sock *ssk, u8 status)
{
	struct sock *sk = &ssk->sk;
	int err = ECONNRESET;

	if (sk->sk_state == TCP_CLOSE)
		return;
	if (status == IB_WC_LOC_LEN_ERR) {
		/* The peer sent more than our buffer holds. */
		sdp_conn_error(ssk, ECONNRESET, SDP_MIB_BAD_LEN);
		return;
	}
	if (status != IB_WC_WR_FLUSH_ERR)
		SDP_INC_STATS(sock_net(sk), SDP_MIB_QP_ERROR);
	else if (test_bit(SDP_F_RCVD_DISCONN, &ssk->flags))
		/* Our DisConn can no longer go: writes fail as after a RST. */
		err = sk->sk_state == TCP_CLOSE_WAIT ? EPIPE : 0;
	set_bit(SDP_F_CM_GONE, &ssk->flags);
	sdp_done(sk, err);
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
	mib = sdp_proto_check(&c->seq, h, slot->len,
			      test_bit(SDP_F_RCVD_DISCONN, &ssk->flags));
	if (mib) {
		list_del_init(&slot->node);
		sdp_conn_error(ssk, ECONNRESET, mib);
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
			sdp_conn_error(ssk, 0, SDP_MIB_ABORT_ON_DATA);
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
		sdp_done(sk, sk->sk_state == TCP_CLOSE_WAIT ? EPIPE : ECONNRESET);
		return false;
	}
	if (mib) {
		list_del_init(&slot->node);
		sdp_conn_error(ssk, ECONNRESET, mib);
		return false;
	}
	if (sdp_repost(c, slot)) {
		sdp_conn_error(ssk, ECONNRESET, SDP_MIB_QP_ERROR);
		return false;
	}
	if (h->mid == SDP_MID_DISCONN)
		sdp_peer_disconn(ssk);
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
		sdp_conn_error(ssk, ECONNRESET, SDP_MIB_QP_ERROR);
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

/* tcp_epollin_ready(): an urgent byte at the mark counts only inline. */
bool sdp_readable(const struct sock *sk, int target)
{
	const struct sdp_sock *ssk = sdp_sk(sk);

	return READ_ONCE(ssk->rx_avail) >=
	       target + (READ_ONCE(ssk->rx_mark) && !sock_flag(sk, SOCK_URGINLINE));
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

/* recv(MSG_OOB), tcp_recv_urg(): never waits. */
static int sdp_recv_urg(struct sdp_sock *ssk, struct msghdr *msg, size_t len,
			int flags)
{
	struct sock *sk = &ssk->sk;
	u16 urg = ssk->urg_data;
	char byte = urg;

	if (sock_flag(sk, SOCK_URGINLINE) || !urg || urg == SDP_URG_READ)
		return -EINVAL;
	if (sk->sk_state == TCP_CLOSE && !sock_flag(sk, SOCK_DONE))
		return -ENOTCONN;
	if (urg & SDP_URG_VALID) {
		if (!(flags & MSG_PEEK))
			WRITE_ONCE(ssk->urg_data, SDP_URG_READ);
		msg->msg_flags |= MSG_OOB;
		if (!len) {
			msg->msg_flags |= MSG_TRUNC;
			return 0;
		}
		if (!(flags & MSG_TRUNC) && memcpy_to_msg(msg, &byte, 1))
			return -EFAULT;
		return 1;
	}
	if (sk->sk_state == TCP_CLOSE || (sk->sk_shutdown & RCV_SHUTDOWN))
		return 0;
	return -EAGAIN;
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
		sdp_conn_error(ssk, ECONNRESET, SDP_MIB_QP_ERROR);
	return copied ? copied : err;
}

/* Would the waiting reader have something to do (@seen: bytes it peeked)? */
static bool sdp_recv_wake(struct sdp_sock *ssk, size_t seen)
{
	struct sock *sk = &ssk->sk;

	return READ_ONCE(ssk->rx_avail) > seen ||
	       test_bit(SDP_F_DEFERRED, &ssk->flags) ||
	       READ_ONCE(sk->sk_err) ||
	       (READ_ONCE(sk->sk_shutdown) & RCV_SHUTDOWN) ||
	       READ_ONCE(sk->sk_state) == TCP_CLOSE || sdp_fb(ssk);
}

static u32 sdp_recv_poll_us(const struct sock *sk)
{
#ifdef CONFIG_NET_RX_BUSY_POLL
	if (READ_ONCE(sk->sk_ll_usec))
		return READ_ONCE(sk->sk_ll_usec);
#endif
	return READ_ONCE(sdp_net(sock_net(sk))->recv_poll_us);
}

/*
 * Poll, then sleep: over RDMA an answer often comes back sooner than a
 * sleep and a wakeup take. Spin without the socket lock, so completions
 * are taken in softirq at once, until the reader has something to do, for
 * at most the socket's poll time, and only while nothing else wants the CPU.
 */
static bool sdp_recv_poll(struct sdp_sock *ssk, size_t seen)
{
	struct sock *sk = &ssk->sk;
	u32 us = sdp_recv_poll_us(sk);
	bool hit;
	u64 end;

	if (!us)
		return false;
	release_sock(sk);
	end = local_clock() + (u64)us * NSEC_PER_USEC;
	while (!(hit = sdp_recv_wake(ssk, seen)) && !need_resched() &&
	       !signal_pending(current) && local_clock() < end)
		cpu_relax();
	lock_sock(sk);
	SDP_INC_STATS(sock_net(sk), hit ? SDP_MIB_RECV_POLL_HIT :
					  SDP_MIB_RECV_POLL_MISS);
	return hit;
}

/* Mirrors tcp_recvmsg_locked(): same wait, error and EOF rules. */
int sdp_recvmsg(struct socket *sock, struct msghdr *msg, size_t len, int flags)
{
	struct sock *sk = sock->sk;
	struct sdp_sock *ssk = sdp_sk(sk);
	size_t copied = 0;
	u32 peeked = 0, peek_base;
	long timeo;
	int target, n, err = 0;

	if (sdp_fb(ssk))
		return sdp_fb_recvmsg(ssk, msg, len, flags);
	if (flags & MSG_ERRQUEUE)
		return sock_recv_errqueue(sk, msg, len, SOL_IP, IP_RECVERR);

	lock_sock(sk);
	if (flags & MSG_OOB) {
		err = sk->sk_state == TCP_LISTEN ? -ENOTCONN : 0;
		if (!err) {
			sdp_flush(ssk);
			err = sdp_recv_urg(ssk, msg, len, flags);
		}
		release_sock(sk);
		return err;
	}
	WARN(READ_ONCE(sdp_inject_warn) && xchg(&sdp_inject_warn, 0),
	     "sdp: warning injected through debugfs\n");
	if (sk->sk_state == TCP_LISTEN) {
		err = -ENOTCONN;
		goto out;
	}
	timeo = sock_rcvtimeo(sk, flags & MSG_DONTWAIT);
	target = sock_rcvlowat(sk, flags & MSG_WAITALL, len);
	peek_base = ssk->conn ? sdp_copied_seq(ssk) : 0;

	do {
		DEFINE_WAIT_FUNC(wait, woken_wake_function);
		size_t seen = flags & MSG_PEEK ? peeked : 0;

		if (!copied && sdp_fb(ssk)) {
			/* Fell back while we waited for the connection. */
			release_sock(sk);
			return sdp_fb_recvmsg(ssk, msg, len, flags);
		}
		sdp_flush(ssk);
		if (ssk->conn && (flags & MSG_PEEK) && sdp_copied_seq(ssk) != peek_base) {
			/* Read from under the peek (tcp_recvmsg()'s race): start over there. */
			peek_base = sdp_copied_seq(ssk);
			peeked = 0;
		}
		/* At the urgent mark a read ends, or gives way to a signal. */
		if (ssk->conn && sdp_urg_at(ssk, sdp_copied_seq(ssk) + peeked)) {
			if (copied)
				break;
			if (signal_pending(current)) {
				err = timeo ? sock_intr_errno(timeo) : -EAGAIN;
				break;
			}
		}
		n = sdp_rx_copy(ssk, msg, len - copied, flags, &peeked);
		if (n < 0) {
			if (!copied)
				err = n;
			break;
		}
		copied += n;
		/* New buffers or freed ones: the peer may need the credits. */
		if (sdp_rx_more(ssk, sk->sk_allocation) || !(flags & MSG_PEEK))
			sdp_tx_push(ssk, false);
		if (copied >= target)
			break;

		if (copied) {
			if (!timeo || sk->sk_err || sk->sk_state == TCP_CLOSE ||
			    (sk->sk_shutdown & RCV_SHUTDOWN) ||
			    signal_pending(current))
				break;
		} else {
			if (sk->sk_err) {
				err = sock_error(sk);
				break;
			}
			if (sk->sk_shutdown & RCV_SHUTDOWN)
				break;
			if (sk->sk_state == TCP_CLOSE) {
				/* Never connected. */
				if (!sock_flag(sk, SOCK_DONE))
					err = -ENOTCONN;
				break;
			}
			if (!timeo) {
				err = -EAGAIN;
				break;
			}
			if (signal_pending(current)) {
				err = sock_intr_errno(timeo);
				break;
			}
		}

		if (sdp_recv_poll(ssk, seen))
			continue;
		add_wait_queue(sk_sleep(sk), &wait);
		sk_wait_event(sk, &timeo, sdp_recv_wake(ssk, seen), &wait);
		remove_wait_queue(sk_sleep(sk), &wait);
	} while (copied < len);
out:
	release_sock(sk);
	return copied ? copied : err;
}
