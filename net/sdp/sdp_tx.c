// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol: the send path.
 *
 * sendmsg() copies into the send ring's bounce buffers; a buffer goes out as
 * one Data message when it is full, or partly filled when Nagle, TCP_CORK and
 * MSG_MORE allow. Every message carries our posted-buffer count and the last
 * mseq we received, so credits travel with the data; a message only to
 * return credits is sent when the peer's view lags by half the ring.
 *
 * Credits (SDP): the peer's bufs minus our messages it had not yet seen.
 * Data never takes the last SDP_CTRL_CREDITS. Control messages (DisConn,
 * Abort, credit update) hold no buffer once the peer has processed them, and
 * may also take the peer's spare buffer (posted beyond what it advertises):
 * at zero credits exactly that one is free. So credits can always be
 * returned, even when both rings are full.
 */
#include <linux/uio.h>
#include <net/tcp.h>

#include "sdp_rdma.h"
#include "sdp_trace.h"

#define SDP_HDR	sizeof(struct sdp_bsdh)

static int sdp_post_send(struct sdp_sock *ssk, struct sdp_tx_slot *s, u8 mid)
{
	struct sdp_conn *c = ssk->conn;
	struct sdp_bsdh *h = s->buf;
	struct ib_sge sge = {
		.addr	= s->dma,
		.length	= s->len,
		.lkey	= c->lkey,
	};
	struct ib_send_wr wr = {
		.wr_cqe		= &s->cqe,
		.sg_list	= &sge,
		.num_sge	= 1,
		.opcode		= IB_WR_SEND,
		.send_flags	= IB_SEND_SIGNALED,
	};
	u16 bufs = c->rx_posted_nr - 1;
	int err;

	sdp_proto_bsdh(&c->seq, h, mid, s->oob, s->len, bufs);
	if (s->len <= c->max_inline)
		wr.send_flags |= IB_SEND_INLINE;
	ib_dma_sync_single_for_device(c->sdev->ibdev, s->dma, s->len,
				      DMA_TO_DEVICE);
	s->done = false;
	s->stamp = ktime_get_ns();
	/*
	 * Software providers (rxe, siw) run or schedule their send work here.
	 * A softirq raised from process context wakes ksoftirqd, a context
	 * switch per message; with BHs off it runs when they are re-enabled,
	 * in our context, as TCP's transmit does.
	 */
	local_bh_disable();
	err = ib_post_send(c->qp, &wr, NULL);
	local_bh_enable();
	if (err)
		return err;
	sdp_seq_sent(&c->seq, bufs);
	ssk->stats.tx_msgs++;
	SDP_INC_STATS(sock_net(&ssk->sk), SDP_MIB_TX_MSGS);
	return 0;
}

/* May a control message go now (see the comment at the top)? */
static bool sdp_ctrl_ok(const struct sdp_conn *c)
{
	return c->ctrl_head - c->ctrl_tail < SDP_CTRL_SLOTS &&
	       sdp_tx_credits(c) >= 0;
}

static int sdp_post_ctrl(struct sdp_sock *ssk, u8 mid, u8 oob)
{
	struct sdp_conn *c = ssk->conn;
	struct sdp_tx_slot *s = &c->ctrl[c->ctrl_head % SDP_CTRL_SLOTS];
	int err;

	s->len = SDP_HDR;
	s->oob = oob;
	err = sdp_post_send(ssk, s, mid);
	if (!err)
		c->ctrl_head++;
	return err;
}

/* Post an Abort if the peer can take it; true if posted. */
bool sdp_post_abort(struct sdp_sock *ssk)
{
	struct sdp_conn *c = ssk->conn;

	if (!c || !c->started || c->failed || !sdp_ctrl_ok(c) ||
	    test_bit(SDP_F_CM_GONE, &ssk->flags))
		return false;
	if (sdp_post_ctrl(ssk, SDP_MID_ABORT, 0))
		return false;
	SDP_INC_STATS(sock_net(&ssk->sk), SDP_MIB_ABORT_SENT);
	return true;
}

enum { SDP_CREDITS_KEEP, SDP_CREDITS_SEND, SDP_CREDITS_LATER };

/*
 * Whether to announce our free buffers in a message of their own. Yes when
 * the peer's idea of them lags by half the ring (at least 2). When the peer
 * can send no data (its last credits are for control), as TCP acks every
 * second segment: yes for two; for one, yes if our reader has nothing left
 * to read that would free more (an urgent byte alone at the mark holds its
 * buffer until the data after it comes), else after SDP_CREDIT_DELAY, as
 * TCP's delayed ACK: a reader that stops reading must not stall the peer.
 */
static int sdp_credit_update(const struct sdp_sock *ssk)
{
	const struct sdp_conn *c = ssk->conn;
	s32 peer_view = sdp_seq_peer_credits(&c->seq);
	s32 fresh = (s32)c->rx_posted_nr - 1 - max(peer_view, 0);
	u32 unread = c->rx_ready_bytes;

	if (fresh >= max_t(s32, 2, (c->rx_alloc - 1) / 2))
		return SDP_CREDITS_SEND;
	if (fresh <= 0 || peer_view > SDP_CTRL_CREDITS)
		return SDP_CREDITS_KEEP;
	if (sdp_urg_next(ssk) && !sock_flag(&ssk->sk, SOCK_URGINLINE))
		unread--;
	if (fresh >= 2 || !unread || test_bit(SDP_F_CREDIT_DUE, &ssk->flags))
		return SDP_CREDITS_SEND;
	return SDP_CREDITS_LATER;
}

/* A partly filled buffer may go: TCP_NODELAY, or nothing in flight (Nagle). */
static bool sdp_partial_ok(const struct sdp_sock *ssk)
{
	const struct sdp_conn *c = ssk->conn;

	if (ssk->cork || test_bit(SDP_F_MORE, &ssk->flags))
		return false;
	return ssk->nodelay || c->tx_tail == c->tx_post;
}

/*
 * Post what the credits allow: filled Data buffers in order, then DisConn
 * once all data before it is out, then a credit update if the peer needs one.
 * @force sends a partly filled buffer regardless of Nagle and corking.
 */
void sdp_tx_push(struct sdp_sock *ssk, bool force)
{
	struct sdp_conn *c = ssk->conn;
	struct sdp_tx_slot *s;
	u32 payload;

	if (!c || !c->started || test_bit(SDP_F_CM_GONE, &ssk->flags) ||
	    ssk->sk.sk_state == TCP_CLOSE)
		return;
	if (test_bit(SDP_F_SEND_DISCONN, &ssk->flags))
		force = true;

	while (c->tx_post != c->tx_head) {
		s = &c->tx[c->tx_post % c->tx_count];
		/* Urgent data goes past Nagle and corking, as TCP's. */
		if (c->tx_post + 1 == c->tx_head && s->len < c->snd_size &&
		    !force && !s->oob && !sdp_partial_ok(ssk)) {
			/*
			 * Held by TCP_CORK or MSG_MORE: timed by whichever push
			 * holds it, as TCP's probe timer sends a corked tail once
			 * all before it is acked. An uncork that credits stopped,
			 * corked again at once, leaves no other push to send it.
			 */
			if ((ssk->cork || test_bit(SDP_F_MORE, &ssk->flags)) &&
			    !timer_pending(&ssk->cork_timer))
				sk_reset_timer(&ssk->sk, &ssk->cork_timer,
					       jiffies + SDP_CORK_TIMEOUT);
			break;
		}
		if (sdp_tx_credits(c) <= SDP_CTRL_CREDITS) {
			trace_sdp_credit_stall(&ssk->sk, sdp_tx_credits(c),
					       c->tx_unposted_bytes);
			break;
		}
		if (sdp_post_send(ssk, s, SDP_MID_DATA))
			goto err;
		payload = s->len - SDP_HDR;
		c->tx_unposted_bytes -= payload;
		c->tx_post++;
		if (c->tx_post == c->tx_urg)
			c->tx_urg_pend = false;
		ssk->stats.tx_bytes += payload;
		SDP_ADD_STATS(sock_net(&ssk->sk), SDP_MIB_TX_BYTES, payload);
	}
	/*
	 * Urgent data that credits hold back is announced at once, as TCP's
	 * urgent pointer goes out ahead of its byte: the peer gets SIGURG.
	 * Not with the spare, which credit updates, DisConn and Abort need.
	 */
	if (c->tx_urg_pend && sdp_tx_credits(c) > 0 && sdp_ctrl_ok(c)) {
		if (sdp_post_ctrl(ssk, SDP_MID_DATA, SDP_OOB_PEND))
			goto err;
		c->tx_urg_pend = false;
	}

	if (test_bit(SDP_F_SEND_DISCONN, &ssk->flags) &&
	    c->tx_post == c->tx_head && sdp_ctrl_ok(c)) {
		if (sdp_post_ctrl(ssk, SDP_MID_DISCONN, 0))
			goto err;
		clear_bit(SDP_F_SEND_DISCONN, &ssk->flags);
		SDP_INC_STATS(sock_net(&ssk->sk), SDP_MIB_DISCONN_SENT);
	} else {
		switch (sdp_credit_update(ssk)) {
		case SDP_CREDITS_SEND:
			if (!sdp_ctrl_ok(c))
				break;
			if (sdp_post_ctrl(ssk, SDP_MID_DATA, 0))
				goto err;
			ssk->stats.tx_credit_updates++;
			SDP_INC_STATS(sock_net(&ssk->sk), SDP_MIB_CREDIT_UPDATES);
			fallthrough;
		case SDP_CREDITS_KEEP:
			clear_bit(SDP_F_CREDIT_DUE, &ssk->flags);
			break;
		case SDP_CREDITS_LATER:
			if (!timer_pending(&ssk->credit_timer))
				sk_reset_timer(&ssk->sk, &ssk->credit_timer,
					       jiffies + SDP_CREDIT_DELAY);
			break;
		}
	}
	sdp_update_counts(ssk);
	sdp_tx_watch(ssk, false);
	return;
err:
	sdp_up->error(ssk, ECONNRESET, SDP_MIB_QP_ERROR);
}

void sdp_tx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct sdp_tx_slot *s = container_of(wc->wr_cqe, struct sdp_tx_slot, cqe);
	struct sdp_sock *ssk = cq->cq_context;
	struct sock *sk = &ssk->sk;

	bh_lock_sock(sk);
	s->status = wc->status;
	s->stamp = ktime_get_ns() - s->stamp;
	s->done = true;
	__sdp_defer_or_process(ssk);
	bh_unlock_sock(sk);
}

/*
 * A send completes once the peer's HCA acknowledged it: post to completion
 * is a round trip (with its transmission). Smoothed as TCP's srtt, rttvar.
 */
static void sdp_rtt_sample(struct sdp_sock *ssk, u64 ns)
{
	u32 m = max_t(u32, div_u64(ns, NSEC_PER_USEC), 1);
	u32 err;

	if (!ssk->srtt_us) {
		ssk->srtt_us = m;
		ssk->rttvar_us = m / 2;
		ssk->min_rtt_us = m;
		return;
	}
	err = m > ssk->srtt_us ? m - ssk->srtt_us : ssk->srtt_us - m;
	ssk->rttvar_us = ssk->rttvar_us - ssk->rttvar_us / 4 + err / 4;
	ssk->srtt_us = ssk->srtt_us - ssk->srtt_us / 8 + m / 8;
	ssk->min_rtt_us = min(ssk->min_rtt_us, m);
}

/* A failed send: the peer is gone (retries exhausted) or broke the rules. */
static void sdp_tx_error(struct sdp_sock *ssk, u8 status)
{
	if (status == IB_WC_WR_FLUSH_ERR || ssk->sk.sk_state == TCP_CLOSE)
		return;
	ssk->conn->failed = true;
	sdp_up->error(ssk, status == IB_WC_RETRY_EXC_ERR ? ETIMEDOUT : ECONNRESET,
		       SDP_MIB_QP_ERROR);
}

/* Free completed send buffers, in order. */
void sdp_tx_reap(struct sdp_sock *ssk)
{
	struct sock *sk = &ssk->sk;
	struct sdp_conn *c = ssk->conn;
	struct sdp_tx_slot *s;
	bool freed = false;

	while (c->tx_tail != c->tx_post) {
		s = &c->tx[c->tx_tail % c->tx_count];
		if (!s->done)
			break;
		if (s->status != IB_WC_SUCCESS) {
			sdp_tx_error(ssk, s->status);
			return;
		}
		sdp_rtt_sample(ssk, s->stamp);
		c->tx_queued_bytes -= s->len - SDP_HDR;
		s->len = 0;
		sdp_tx_buf_put(c, s);
		c->tx_tail++;
		sk_wmem_queued_add(sk, -(int)c->snd_size);
		c->tx_nomem = false;
		freed = true;
		ssk->tx_stamp = jiffies;
	}
	while (c->ctrl_tail != c->ctrl_head) {
		s = &c->ctrl[c->ctrl_tail % SDP_CTRL_SLOTS];
		if (!s->done)
			break;
		if (s->status != IB_WC_SUCCESS) {
			sdp_tx_error(ssk, s->status);
			return;
		}
		c->ctrl_tail++;
		/* no progress for data waiting for credits (TCP's zero window) */
		if (c->tx_post == c->tx_head)
			ssk->tx_stamp = jiffies;
		if (((struct sdp_bsdh *)s->buf)->mid == SDP_MID_DISCONN)
			sdp_up->disconn_sent(ssk);
		if (!ssk->conn)
			return;
	}
	if (freed) {
		sdp_conn_expand_sndbuf(c);
		sdp_update_counts(ssk);
		/*
		 * The free slots must be visible before SOCK_NOSPACE is read:
		 * sdp_poll() sets it, then reads them. (x86 lets a load pass an
		 * earlier store: without this both sides can miss, and a
		 * non-blocking sender waits for an EPOLLOUT that never comes.)
		 */
		smp_mb();
		if (sk->sk_socket && test_bit(SOCK_NOSPACE, &sk->sk_socket->flags))
			sk->sk_write_space(sk);
	}
}

void sdp_cork_timer(struct timer_list *t)
{
	struct sdp_sock *ssk = from_timer(ssk, t, cork_timer);

	sdp_timer_event(ssk, SDP_F_PUSH);
}

void sdp_credit_timer(struct timer_list *t)
{
	struct sdp_sock *ssk = from_timer(ssk, t, credit_timer);

	sdp_timer_event(ssk, SDP_F_CREDIT_DUE);
}

/*
 * TCP_USER_TIMEOUT: sends the device has not completed, or data that zero
 * credits keep from going, for that long end the connection with ETIMEDOUT,
 * as TCP's unacknowledged data and zero window probes do. Unset, only
 * uncompleted sends are bounded, by SDP_TX_STALL_MS. 0: nothing to bound.
 */
static unsigned long sdp_tx_limit(const struct sdp_sock *ssk)
{
	const struct sdp_conn *c = ssk->conn;
	/* the shadow's: 6.12's tcp_sock_set_user_timeout() takes no lock */
	u32 user = READ_ONCE(ssk->shadow.inet_conn.icsk_user_timeout);

	if (c->tx_tail != c->tx_post || c->ctrl_tail != c->ctrl_head)
		return msecs_to_jiffies(user ?: SDP_TX_STALL_MS);
	if (user && c->tx_post != c->tx_head &&
	    sdp_tx_credits(c) <= SDP_CTRL_CREDITS)
		return msecs_to_jiffies(user);
	return 0;
}

/*
 * Engine context, after each push; @rearm: the timer ran out or the limit
 * changed. The timer is lazy: progress only moves tx_stamp, and a timer that
 * fires early re-arms.
 */
void sdp_tx_watch(struct sdp_sock *ssk, bool rearm)
{
	struct sock *sk = &ssk->sk;
	unsigned long limit, due;

	limit = ssk->conn->started && sk->sk_state != TCP_CLOSE &&
		!test_bit(SDP_F_CM_GONE, &ssk->flags) ? sdp_tx_limit(ssk) : 0;
	if (!limit) {
		ssk->tx_waiting = false;
		return;
	}
	if (!ssk->tx_waiting) {
		ssk->tx_waiting = true;
		ssk->tx_stamp = jiffies;
	}
	due = ssk->tx_stamp + limit;
	if (time_after_eq(jiffies, due)) {
		sdp_up->error(ssk, ETIMEDOUT, SDP_MIB_TX_TIMEOUT);
		return;
	}
	if (rearm || !timer_pending(&ssk->tx_timer))
		sk_reset_timer(sk, &ssk->tx_timer, due);
}

void sdp_tx_timer(struct timer_list *t)
{
	struct sdp_sock *ssk = from_timer(ssk, t, tx_timer);

	sdp_timer_event(ssk, SDP_F_TX_TIMEOUT);
}

/*
 * SO_KEEPALIVE: once the connection has been idle for TCP_KEEPIDLE, a
 * message carrying only credits goes out every TCP_KEEPINTVL. A live peer's
 * HCA acknowledges it; a dead one fails it after the RC retries, and the
 * socket gets ETIMEDOUT as TCP's would.
 */
void sdp_keepalive_reset(struct sdp_sock *ssk)
{
	struct sock *sk = &ssk->sk;

	if (sock_flag(sk, SOCK_KEEPOPEN) && sdp_can_send_state(sk))
		sk_reset_timer(sk, sdp_ka_timer(ssk),
			       jiffies + keepalive_time_when(&ssk->shadow));
	else
		sk_stop_timer(sk, sdp_ka_timer(ssk));
}

/* TCP_KEEPIDLE changed: the timer reckons again from the last arrival, now. */
void sdp_keepalive_rearm(struct sdp_sock *ssk)
{
	struct sock *sk = &ssk->sk;

	if (sock_flag(sk, SOCK_KEEPOPEN) && sdp_can_send_state(sk))
		sk_reset_timer(sk, sdp_ka_timer(ssk), jiffies);
}

/* Engine context: the keepalive timer fired. */
void sdp_keepalive(struct sdp_sock *ssk)
{
	struct sdp_conn *c = ssk->conn;
	const struct tcp_sock *tp;
	u32 idle, when;

	if (!sock_flag(&ssk->sk, SOCK_KEEPOPEN) || !sdp_can_send_state(&ssk->sk) ||
	    !c || !c->started)
		return;
	tp = &ssk->shadow;
	idle = jiffies - ssk->rx_stamp;
	when = keepalive_time_when(tp);
	if (idle >= when) {
		if (sdp_ctrl_ok(c) && !sdp_post_ctrl(ssk, SDP_MID_DATA, 0))
			SDP_INC_STATS(sock_net(&ssk->sk), SDP_MIB_KEEPALIVE_PROBES);
		when = keepalive_intvl_when(tp);
	} else {
		when -= idle;
	}
	sk_reset_timer(&ssk->sk, sdp_ka_timer(ssk), jiffies + when);
}

/* sk_prot->keepalive: SO_KEEPALIVE was set or cleared. */
void sdp_set_keepalive(struct sock *sk, int on)
{
	sock_valbool_flag(sk, SOCK_KEEPOPEN, on);
	sdp_keepalive_reset(sdp_sk(sk));
}

void sdp_keepalive_timer(struct timer_list *t)
{
	struct sdp_sock *ssk = from_timer(ssk, t, shadow.inet_conn.icsk_keepalive_timer);

	sdp_timer_event(ssk, SDP_F_KEEPALIVE);
}

/*
 * The buffer to copy into: the one being filled, or a free one. NULL when
 * no slot is free, SO_SNDBUF's bytes are in flight, or the socket's limits
 * refuse a buffer while one is in flight, which gives its memory back
 * (*err 0). With none in flight the buffer is forced; NULL and -ENOBUFS
 * only when even that fails.
 */
static struct sdp_tx_slot *sdp_tx_fill_slot(struct sdp_sock *ssk, gfp_t gfp, int *err)
{
	struct sdp_conn *c = ssk->conn;
	struct sock *sk = &ssk->sk;
	struct sdp_tx_slot *s;

	*err = 0;
	if (c->tx_head != c->tx_post) {
		s = &c->tx[(c->tx_head - 1) % c->tx_count];
		if (s->len < c->snd_size && !s->oob)
			return s;
	}
	if (c->tx_head - c->tx_tail >= c->tx_count || !sk_stream_memory_free(sk))
		return NULL;
	s = &c->tx[c->tx_head % c->tx_count];
	if (sdp_tx_buf_get(c, s, gfp, c->tx_head == c->tx_tail)) {
		if (c->tx_head == c->tx_tail) {
			*err = -ENOBUFS;
			return NULL;
		}
		/* writable again once sdp_tx_reap() has a buffer back */
		c->tx_nomem = true;
		sdp_update_counts(ssk);
		return NULL;
	}
	c->tx_head++;
	sk_wmem_queued_add(sk, c->snd_size);
	s->len = SDP_HDR;
	s->oob = 0;
	return s;
}

/*
 * MSG_OOB: the last byte sent is urgent (tcp_mark_urg()). Its message ends
 * there, so the byte is the message's last as SDP_OOB_PRES says, and it is
 * sent regardless of Nagle and corking. Nothing unsent: nothing to mark.
 */
static void sdp_mark_urg(struct sdp_sock *ssk)
{
	struct sdp_conn *c = ssk->conn;
	struct sdp_tx_slot *s;
	u32 i;

	if (!c || c->tx_head == c->tx_post)
		return;
	s = &c->tx[(c->tx_head - 1) % c->tx_count];
	if (s->len == SDP_HDR)
		return;
	/* An earlier urgent byte not yet sent is plain data now, as in TCP. */
	for (i = c->tx_post; i != c->tx_head; i++)
		c->tx[i % c->tx_count].oob = 0;
	s->oob = SDP_OOB_PRES;
	c->tx_urg = c->tx_head;
	c->tx_urg_pend = true;
}

/*
 * sendmsg()'s copy: from @msg into the send ring until it is empty (0), no
 * buffer is free (-EAGAIN, what is filled pushed), no memory is to be had
 * with none in flight (-ENOBUFS) or copying fails (-EFAULT); *copied grows
 * by what was taken. Full buffers go at once, except MSG_OOB's last, which
 * sdp_conn_sent() flags first.
 */
int sdp_conn_write(struct sdp_sock *ssk, struct msghdr *msg, int flags,
		   size_t *copied)
{
	struct sdp_conn *c = ssk->conn;
	struct sdp_tx_slot *s;
	int err = 0;

	while (msg_data_left(msg)) {
		size_t n, got;

		s = c ? sdp_tx_fill_slot(ssk, ssk->sk.sk_allocation, &err) : NULL;
		if (err)
			return err;
		if (!s) {
			sdp_tx_push(ssk, false);
			sdp_update_counts(ssk);
			return -EAGAIN;
		}
		n = min_t(size_t, msg_data_left(msg), c->snd_size - s->len);
		got = copy_from_iter(s->buf + s->len, n, &msg->msg_iter);
		s->len += got;
		c->tx_unposted_bytes += got;
		c->tx_queued_bytes += got;
		*copied += got;
		if (got != n)
			return -EFAULT;
		if (s->len == c->snd_size && (msg_data_left(msg) || !(flags & MSG_OOB)))
			sdp_tx_push(ssk, false);
	}
	return 0;
}

/*
 * The end of a sendmsg(): MSG_OOB's byte flagged, what may go pushed (a
 * partial message held by TCP_CORK or MSG_MORE timed there).
 */
void sdp_conn_sent(struct sdp_sock *ssk, int flags)
{
	if (flags & MSG_OOB)
		sdp_mark_urg(ssk);
	sdp_tx_push(ssk, false);
	sdp_update_counts(ssk);
}
