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

/* Send the message in @s as @mid, with our credits and acknowledgement. */
static int sdp_tx_send(struct sdp_conn *c, struct sdp_tx_slot *s, u8 mid)
{
	u16 bufs = c->rx_posted_nr - 1;
	int err;

	sdp_proto_bsdh(&c->seq, s->buf, mid, s->oob, s->len, bufs);
	s->done = false;
	s->stamp = ktime_get_ns();
	err = sdp_post_send(c, &s->wr, s->buf, s->dma, s->len);
	if (err)
		return err;
	sdp_seq_sent(&c->seq, bufs);
	c->v.stats.tx_msgs++;
	SDP_INC_STATS(sock_net(c->sk), SDP_MIB_TX_MSGS);
	return 0;
}

/* May a control message go now (see the comment at the top)? */
bool sdp_tx_ctrl_ok(const struct sdp_conn *c)
{
	return c->ctrl_head - c->ctrl_tail < SDP_CTRL_SLOTS &&
	       sdp_tx_credits(c) >= 0;
}

/* The next control message, for its payload to be written before sdp_tx_ctrl(). */
struct sdp_bsdh *sdp_tx_ctrl_msg(struct sdp_conn *c)
{
	return c->ctrl[c->ctrl_head % SDP_CTRL_SLOTS].buf;
}

static int sdp_post_ctrl(struct sdp_conn *c, u8 mid, u8 oob, u32 len)
{
	struct sdp_tx_slot *s = &c->ctrl[c->ctrl_head % SDP_CTRL_SLOTS];
	int err;

	s->len = len;
	s->oob = oob;
	err = sdp_tx_send(c, s, mid);
	if (!err)
		c->ctrl_head++;
	return err;
}

/* A control message of @len bytes, its payload written (sdp_tx_ctrl_msg()). */
int sdp_tx_ctrl(struct sdp_conn *c, u8 mid, u32 len)
{
	return sdp_post_ctrl(c, mid, 0, len);
}

/* Post an Abort if the peer can take it; true if posted. */
bool sdp_conn_abort(struct sdp_conn *c)
{
	if (!c->v.live || !c->started || c->failed || !sdp_tx_ctrl_ok(c) ||
	    test_bit(SDP_C_CM_GONE, &c->flags))
		return false;
	if (sdp_post_ctrl(c, SDP_MID_ABORT, 0, SDP_HDR))
		return false;
	SDP_INC_STATS(sock_net(c->sk), SDP_MIB_ABORT_SENT);
	return true;
}

/*
 * A keepalive probe: a message carrying only credits. A live peer's HCA
 * acknowledges it; a dead one fails it after the RC retries. True if posted.
 */
bool sdp_conn_probe(struct sdp_conn *c)
{
	return c->v.live && c->started && sdp_tx_ctrl_ok(c) &&
	       !sdp_post_ctrl(c, SDP_MID_DATA, 0, SDP_HDR);
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
static int sdp_credit_update(const struct sdp_conn *c)
{
	s32 peer_view = sdp_seq_peer_credits(&c->seq);
	s32 fresh = (s32)c->rx_posted_nr - 1 - max(peer_view, 0);
	u32 unread = c->rx_ready_bytes;

	if (fresh >= max_t(s32, 2, (c->rx_alloc - 1) / 2))
		return SDP_CREDITS_SEND;
	if (fresh <= 0 || peer_view > SDP_CTRL_CREDITS)
		return SDP_CREDITS_KEEP;
	if (sdp_urg_next(c) && !sock_flag(c->sk, SOCK_URGINLINE))
		unread--;
	if (fresh >= 2 || !unread || test_bit(SDP_C_CREDIT_DUE, &c->flags))
		return SDP_CREDITS_SEND;
	return SDP_CREDITS_LATER;
}

/* A send buffer was posted: its bytes are on their way. */
static void sdp_tx_posted(struct sdp_conn *c, struct sdp_tx_slot *s)
{
	u32 payload = s->len - SDP_HDR;

	c->tx_unposted_bytes -= payload;
	c->tx_post++;
	c->v.stats.tx_bytes += payload;
	SDP_ADD_STATS(sock_net(c->sk), SDP_MIB_TX_BYTES, payload);
}

/* A buffer for the peer's SinkAvail: its bytes RDMA Written there, not sent. */
static int sdp_tx_write_slot(struct sdp_conn *c, struct sdp_tx_slot *s)
{
	int err;

	s->done = false;
	s->stamp = ktime_get_ns();
	err = sdp_post_write(c, &s->wr, s->buf + SDP_HDR, s->dma + SDP_HDR, s->len - SDP_HDR,
			     s->raddr, s->rkey);
	if (err)
		return err;
	c->v.stats.zw_tx_bytes += s->len - SDP_HDR;
	c->v.stats.zw_writes++;
	sdp_tx_posted(c, s);
	return 0;
}

/* A partly filled buffer may go: TCP_NODELAY, or nothing in flight (Nagle). */
static bool sdp_partial_ok(const struct sdp_conn *c)
{
	if (c->cork || test_bit(SDP_C_MORE, &c->flags))
		return false;
	return c->nodelay || c->tx_tail == c->tx_post;
}

/*
 * Post what the credits allow: filled Data buffers in order, then DisConn
 * once all data before it is out, then a credit update if the peer needs one.
 * @force sends a partly filled buffer regardless of Nagle and corking.
 */
void sdp_tx_push(struct sdp_conn *c, bool force)
{
	struct sock *sk = c->sk;
	struct sdp_tx_slot *s;

	if (!c->v.live || !c->started || test_bit(SDP_C_CM_GONE, &c->flags) ||
	    sk->sk_state == TCP_CLOSE)
		return;
	/* DisConn, and a SrcAvail, go after all the data before them */
	if (test_bit(SDP_C_SEND_DISCONN, &c->flags) || sdp_zc_offer_queued(c))
		force = true;
	/* ... and the peer's SinkAvail is answered with what it has */
	if (force && c->zpeer.held)
		c->zpeer.answer_due = true;

	for (;;) {
		/* the answer to the peer's SinkAvail, once the writes into it are posted */
		if (sdp_zr_answer(c))
			goto err;
		if (c->tx_post == c->tx_head)
			break;
		s = &c->tx[c->tx_post % c->tx_count];
		if (s->write) {
			/* a partial one waits for more, till the answer is due */
			if (c->tx_post + 1 == c->tx_head && s->len < c->snd_size &&
			    !c->zpeer.answer_due)
				break;
			if (sdp_tx_write_slot(c, s))
				goto err;
			continue;
		}
		/* Data comes after the SinkAvail's bytes: its answer first */
		if (c->zpeer.held || c->zpeer.answer_due)
			break;
		/* Urgent data goes past Nagle and corking, as TCP's. */
		if (c->tx_post + 1 == c->tx_head && s->len < c->snd_size &&
		    !force && !s->oob && !sdp_partial_ok(c)) {
			/*
			 * Held by TCP_CORK or MSG_MORE: timed by whichever push
			 * holds it, as TCP's probe timer sends a corked tail once
			 * all before it is acked. An uncork that credits stopped,
			 * corked again at once, leaves no other push to send it.
			 */
			if ((c->cork || test_bit(SDP_C_MORE, &c->flags)) &&
			    !timer_pending(&c->cork_timer))
				sk_reset_timer(sk, &c->cork_timer, jiffies + SDP_CORK_TIMEOUT);
			break;
		}
		if (sdp_tx_credits(c) <= SDP_CTRL_CREDITS) {
			trace_sdp_credit_stall(sk, sdp_tx_credits(c), c->tx_unposted_bytes);
			break;
		}
		if (sdp_tx_send(c, s, SDP_MID_DATA))
			goto err;
		sdp_tx_posted(c, s);
		if (c->tx_post == c->tx_urg)
			c->tx_urg_pend = false;
	}
	/*
	 * Urgent data that credits hold back is announced at once, as TCP's
	 * urgent pointer goes out ahead of its byte: the peer gets SIGURG.
	 * Not with the spare, which credit updates, DisConn and Abort need.
	 */
	if (c->tx_urg_pend && sdp_tx_credits(c) > 0 && sdp_tx_ctrl_ok(c)) {
		if (sdp_post_ctrl(c, SDP_MID_DATA, SDP_OOB_PEND, SDP_HDR))
			goto err;
		c->tx_urg_pend = false;
	}

	if (sdp_zc_push(c) || sdp_zr_push(c))
		goto err;

	if (test_bit(SDP_C_SEND_DISCONN, &c->flags) && !sdp_zc_holds(c) &&
	    c->tx_post == c->tx_head && !c->zpeer.held && !c->zpeer.answer_due &&
	    sdp_tx_ctrl_ok(c)) {
		if (sdp_post_ctrl(c, SDP_MID_DISCONN, 0, SDP_HDR))
			goto err;
		clear_bit(SDP_C_SEND_DISCONN, &c->flags);
		SDP_INC_STATS(sock_net(sk), SDP_MIB_DISCONN_SENT);
	} else {
		switch (sdp_credit_update(c)) {
		case SDP_CREDITS_SEND:
			if (!sdp_tx_ctrl_ok(c))
				break;
			if (sdp_post_ctrl(c, SDP_MID_DATA, 0, SDP_HDR))
				goto err;
			c->v.stats.tx_credit_updates++;
			SDP_INC_STATS(sock_net(sk), SDP_MIB_CREDIT_UPDATES);
			fallthrough;
		case SDP_CREDITS_KEEP:
			clear_bit(SDP_C_CREDIT_DUE, &c->flags);
			break;
		case SDP_CREDITS_LATER:
			if (!timer_pending(&c->credit_timer))
				sk_reset_timer(sk, &c->credit_timer,
					       jiffies + SDP_CREDIT_DELAY);
			break;
		}
	}
	sdp_update_counts(c);
	sdp_tx_watch(c, false);
	return;
err:
	sdp_up->error(sk, ECONNRESET, SDP_MIB_QP_ERROR);
}

/* The poller's (sdp_cq.c): the slot is the engine's once done is seen. */
static void sdp_tx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct sdp_wr *wr = sdp_wr_of(wc);
	struct sdp_tx_slot *s = container_of(wr, struct sdp_tx_slot, wr);

	s->status = wc->status;
	s->stamp = ktime_get_ns() - s->stamp;
	smp_store_release(&s->done, true);
	sdp_cq_mark(cq, wr->conn);
}

void sdp_tx_ring_init(struct sdp_conn *c)
{
	u32 i;

	for (i = 0; i < c->tx_count; i++)
		sdp_wr_init(&c->tx[i].wr, c, sdp_tx_done);
}

/* The control ring's slots share one buffer (c->ctrl_buf). */
void sdp_ctrl_ring_init(struct sdp_conn *c)
{
	u32 i;

	for (i = 0; i < SDP_CTRL_SLOTS; i++) {
		sdp_wr_init(&c->ctrl[i].wr, c, sdp_tx_done);
		c->ctrl[i].buf = c->ctrl_buf + i * SDP_CTRL_MSG_MAX;
		c->ctrl[i].dma = c->ctrl_dma + i * SDP_CTRL_MSG_MAX;
		c->ctrl[i].ctrl = true;
	}
}

/*
 * A send completes once the peer's HCA acknowledged it: post to completion
 * is a round trip (with its transmission). Smoothed as TCP's srtt, rttvar.
 */
static void sdp_rtt_sample(struct sdp_conn *c, u64 ns)
{
	u32 m = max_t(u32, div_u64(ns, NSEC_PER_USEC), 1);
	u32 err;

	if (!c->srtt_us) {
		c->srtt_us = m;
		c->rttvar_us = m / 2;
		c->min_rtt_us = m;
		return;
	}
	err = m > c->srtt_us ? m - c->srtt_us : c->srtt_us - m;
	c->rttvar_us = c->rttvar_us - c->rttvar_us / 4 + err / 4;
	c->srtt_us = c->srtt_us - c->srtt_us / 8 + m / 8;
	c->min_rtt_us = min(c->min_rtt_us, m);
}

/*
 * A failed work request: the peer is gone (retries exhausted: ETIMEDOUT, as
 * TCP's) or broke the rules; counted as @mib. A flush says nothing: the
 * connection is ending, its receives say how. On an SRQ no receive of its
 * own flushes: a flush before the CM went is a QP that failed by itself
 * (the peer's RDMA on our memory, say), and the end marker, landing after
 * what the QP took, ends the connection as such.
 */
void sdp_wr_failed(struct sdp_conn *c, u8 status, int mib)
{
	if (c->sk->sk_state == TCP_CLOSE)
		return;
	if (status == IB_WC_WR_FLUSH_ERR) {
		if (c->srq && !test_bit(SDP_C_CM_GONE, &c->flags))
			sdp_post_end(c);
		return;
	}
	c->failed = true;
	sdp_up->error(c->sk, status == IB_WC_RETRY_EXC_ERR ? ETIMEDOUT : ECONNRESET, mib);
}

/*
 * SO_SNDBUF not set: the send ring is the send buffer, as TCP's autotuning
 * sizes its sndbuf to what its window needs, within tcp_wmem[2]. Memory
 * pressure takes it back (sk_stream_moderate_sndbuf()); it returns after.
 */
void sdp_expand_sndbuf(struct sdp_conn *c)
{
	struct sock *sk = c->sk;
	u32 ring = min_t(u64, (u64)c->tx_count * c->snd_size,
			 READ_ONCE(sock_net(sk)->ipv4.sysctl_tcp_wmem[2]));

	if (!(sk->sk_userlocks & SOCK_SNDBUF_LOCK) && !sk_under_memory_pressure(sk) &&
	    sk->sk_sndbuf < ring)
		WRITE_ONCE(sk->sk_sndbuf, ring);
}

/* Free completed send buffers, in order. */
void sdp_tx_reap(struct sdp_conn *c)
{
	struct sock *sk = c->sk;
	struct sdp_tx_slot *s;
	bool freed = false;

	while (c->tx_tail != c->tx_post) {
		s = &c->tx[c->tx_tail % c->tx_count];
		if (!smp_load_acquire(&s->done))
			break;
		if (s->status != IB_WC_SUCCESS) {
			sdp_wr_failed(c, s->status, SDP_MIB_QP_ERROR);
			return;
		}
		sdp_rtt_sample(c, s->stamp);
		c->tx_queued_bytes -= s->len - SDP_HDR;
		s->len = 0;
		sdp_tx_buf_put(c, s);
		c->tx_tail++;
		sk_wmem_queued_add(sk, -(int)c->snd_size);
		c->tx_nomem = false;
		freed = true;
		c->tx_stamp = jiffies;
	}
	while (c->ctrl_tail != c->ctrl_head) {
		s = &c->ctrl[c->ctrl_tail % SDP_CTRL_SLOTS];
		if (!smp_load_acquire(&s->done))
			break;
		if (s->status != IB_WC_SUCCESS) {
			sdp_wr_failed(c, s->status, SDP_MIB_QP_ERROR);
			return;
		}
		c->ctrl_tail++;
		/* no progress for data waiting for credits (TCP's zero window) */
		if (c->tx_post == c->tx_head)
			c->tx_stamp = jiffies;
		if (((struct sdp_bsdh *)s->buf)->mid == SDP_MID_DISCONN)
			sdp_up->disconn_sent(sk);
		if (!c->v.live)
			return;
	}
	if (freed) {
		sdp_expand_sndbuf(c);
		sdp_update_counts(c);
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

/*
 * TCP_USER_TIMEOUT: sends the device has not completed, our SrcAvail the
 * peer neither reads nor answers (a live one declines what its reader
 * leaves), or data that zero credits keep from going, for that long end
 * the connection with ETIMEDOUT, as TCP's unacknowledged data and zero
 * window probes do. Unset, only the first two are bounded, by
 * SDP_TX_STALL_MS. 0: nothing to bound.
 */
static unsigned long sdp_tx_limit(const struct sdp_conn *c)
{
	u32 user = sdp_up->user_timeout(c->sk);

	if (c->tx_tail != c->tx_post || c->ctrl_tail != c->ctrl_head ||
	    sdp_zc_state(c) == SDP_ZC_OUT)
		return msecs_to_jiffies(user ?: SDP_TX_STALL_MS);
	if (user && c->tx_post != c->tx_head &&
	    sdp_tx_credits(c) <= SDP_CTRL_CREDITS)
		return msecs_to_jiffies(user);
	return 0;
}

/*
 * Engine context, after each push; @rearm: the timer ran out or the limit
 * changed. The timer is lazy: progress only moves tx_stamp, and a timer that
 * fires early re-arms. With nothing to bound, the same timer lets the kept
 * send buffers go once nothing moved for SDP_TX_IDLE.
 */
void sdp_tx_watch(struct sdp_conn *c, bool rearm)
{
	struct sock *sk = c->sk;
	unsigned long limit, due;

	if (!c->started || sk->sk_state == TCP_CLOSE || test_bit(SDP_C_CM_GONE, &c->flags)) {
		c->tx_waiting = false;
		return;
	}
	limit = sdp_tx_limit(c);
	if (!limit) {
		/* (a stall's far timer is brought in) */
		rearm |= c->tx_waiting;
		c->tx_waiting = false;
		if (!c->tx_kept)
			return;
		due = c->tx_stamp + SDP_TX_IDLE;
		if (time_after_eq(jiffies, due)) {
			sdp_tx_keep_drop(c);
			return;
		}
	} else {
		if (!c->tx_waiting) {
			c->tx_waiting = true;
			c->tx_stamp = jiffies;
		}
		due = c->tx_stamp + limit;
		if (time_after_eq(jiffies, due)) {
			sdp_up->error(sk, ETIMEDOUT, SDP_MIB_TX_TIMEOUT);
			return;
		}
	}
	if (rearm || !timer_pending(&c->tx_timer))
		sk_reset_timer(sk, &c->tx_timer, due);
}

/* The connection is over: nothing more to time. */
void sdp_tx_timers_stop(struct sdp_conn *c)
{
	sk_stop_timer(c->sk, &c->cork_timer);
	sk_stop_timer(c->sk, &c->credit_timer);
	sk_stop_timer(c->sk, &c->tx_timer);
	c->tx_waiting = false;
}

/*
 * The SOL_TCP options the data path applies (the socket's sdp_opts_apply()):
 * as TCP's, setting TCP_NODELAY or clearing TCP_CORK (@push) sends what
 * waits; a new TCP_USER_TIMEOUT (@rearm) applies to a wait in progress.
 */
void sdp_conn_opts(struct sdp_conn *c, bool nodelay, bool cork, bool push, bool rearm)
{
	c->nodelay = nodelay;
	c->cork = cork;
	if (!c->v.live)
		return;
	if (push)
		sdp_tx_push(c, true);
	if (rearm)
		sdp_tx_watch(c, true);
	sdp_update_counts(c);
}

/*
 * The buffer to copy into: the one being filled, or a free one. NULL when
 * no slot is free, SO_SNDBUF's bytes are in flight, or the socket's limits
 * refuse a buffer while one is in flight, which gives its memory back
 * (*err 0). With none in flight the buffer is forced; NULL and -ENOBUFS
 * only when even that fails.
 */
static struct sdp_tx_slot *sdp_tx_fill_slot(struct sdp_conn *c, gfp_t gfp, int *err)
{
	struct sock *sk = c->sk;
	struct sdp_tx_slot *s;
	bool write = sdp_zr_filling(c);

	*err = 0;
	/* our SrcAvail holds the stream (its sender waits till it is read) */
	if (sdp_zc_busy(c))
		return NULL;
	if (c->tx_head != c->tx_post) {
		s = &c->tx[(c->tx_head - 1) % c->tx_count];
		if (s->len < c->snd_size && !s->oob && s->write == write)
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
		sdp_update_counts(c);
		return NULL;
	}
	c->tx_head++;
	sk_wmem_queued_add(sk, c->snd_size);
	s->len = SDP_HDR;
	s->oob = 0;
	/* written into the peer's SinkAvail, after the bytes before */
	s->write = write;
	s->raddr = c->zpeer.vaddr + c->zpeer.filled;
	s->rkey = c->zpeer.rkey;
	return s;
}

/*
 * MSG_OOB: the last byte sent is urgent (tcp_mark_urg()). Its message ends
 * there, so the byte is the message's last as SDP_OOB_PRES says, and it is
 * sent regardless of Nagle and corking. Nothing unsent: nothing to mark.
 */
static void sdp_mark_urg(struct sdp_conn *c)
{
	struct sdp_tx_slot *s;
	u32 i;

	if (!c->v.live || c->tx_head == c->tx_post)
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
 * sendmsg()'s copy, or the engine's of a MSG_ZEROCOPY send's rest (@gfp
 * atomic): from @msg into the send ring until it is empty (0), no
 * buffer is free (-EAGAIN, what is filled pushed), no memory is to be had
 * with none in flight (-ENOBUFS) or copying fails (-EFAULT); *copied grows
 * by what was taken. Full buffers go at once, except MSG_OOB's last, which
 * sdp_conn_sent() flags first.
 */
int sdp_tx_write(struct sdp_conn *c, struct msghdr *msg, int flags,
		 size_t *copied, gfp_t gfp)
{
	struct sdp_zr_peer *p = &c->zpeer;
	struct sdp_tx_slot *s;
	int err = 0;

	/* urgent data ends the peer's SinkAvail: Data carries it */
	if ((flags & MSG_OOB) && p->held)
		p->answer_due = true;
	while (msg_data_left(msg)) {
		size_t n, got;

		s = c->v.live ? sdp_tx_fill_slot(c, gfp, &err) : NULL;
		if (err)
			return err;
		if (!s) {
			sdp_tx_push(c, false);
			sdp_update_counts(c);
			return -EAGAIN;
		}
		n = min_t(size_t, msg_data_left(msg), c->snd_size - s->len);
		if (s->write)
			n = min(n, p->len - p->filled);
		got = copy_from_iter(s->buf + s->len, n, &msg->msg_iter);
		s->len += got;
		c->tx_unposted_bytes += got;
		c->tx_queued_bytes += got;
		*copied += got;
		if (s->write) {
			p->filled += got;
			/* full: answered once its writes are posted */
			if (p->filled == p->len)
				p->answer_due = true;
		}
		if (got != n)
			return -EFAULT;
		if ((s->len == c->snd_size || (s->write && p->answer_due)) &&
		    (msg_data_left(msg) || !(flags & MSG_OOB)))
			sdp_tx_push(c, false);
	}
	return 0;
}

/* A writer's bytes: after all of a MSG_ZEROCOPY send's, which the engine may still copy. */
int sdp_conn_write(struct sdp_conn *c, struct msghdr *msg, int flags,
		   size_t *copied)
{
	if (msg_data_left(msg) && sdp_zc_state(c) == SDP_ZC_COPY) {
		sdp_update_counts(c);
		return -EAGAIN;
	}
	return sdp_tx_write(c, msg, flags, copied, c->sk->sk_allocation);
}

/*
 * The end of a sendmsg() that took bytes: MSG_MORE noted for the next
 * push, MSG_OOB's byte flagged, what may go pushed (a partial message held
 * by TCP_CORK or MSG_MORE timed there).
 */
void sdp_conn_sent(struct sdp_conn *c, int flags)
{
	if (flags & MSG_MORE)
		set_bit(SDP_C_MORE, &c->flags);
	else
		clear_bit(SDP_C_MORE, &c->flags);
	/* the peer's reader gets what this send wrote, as TCP's push */
	if (c->zpeer.held && !(flags & MSG_MORE) && !c->cork)
		c->zpeer.answer_due = true;
	if (flags & MSG_OOB)
		sdp_mark_urg(c);
	sdp_tx_push(c, false);
	sdp_update_counts(c);
}

/*
 * sendfile() met the end of its file before its count, having sent with
 * MSG_MORE: nothing follows, so push now (tcp_splice_eof()). TCP_CORK and
 * Nagle still apply.
 */
void sdp_conn_splice_eof(struct sdp_conn *c)
{
	if (test_and_clear_bit(SDP_C_MORE, &c->flags))
		sdp_tx_push(c, false);
}

/* shutdown(SHUT_WR) or close(): DisConn once the queued data is posted. */
void sdp_conn_shutdown(struct sdp_conn *c)
{
	set_bit(SDP_C_SEND_DISCONN, &c->flags);
	sdp_tx_push(c, true);
}

/*
 * The view poll(), ioctl() and SDP_INFO read without the socket lock: kept
 * in the connection, which lives as long as its socket, not in the rings
 * that teardown frees.
 */
void sdp_update_counts(struct sdp_conn *c)
{
	u32 avail = 0, free_slots = 0, unsent = 0, unacked = 0;
	bool mark = false, full = false, zc_room = false;

	if (c->v.live) {
		avail = c->rx_ready_bytes;
		mark = sdp_urg_next(c);
		if (c->started) {
			/*
			 * The peer has no credit left for data (as we last
			 * told it): nothing more comes until a read frees and
			 * announces buffers.
			 */
			full = avail && sdp_seq_peer_credits(&c->seq) <= SDP_CTRL_CREDITS;
			/* none while SO_SNDBUF's bytes are in flight, or no memory */
			if (!c->tx_nomem && sk_stream_memory_free(c->sk) &&
			    !sdp_zc_holds(c))
				free_slots = c->tx_count - (c->tx_head - c->tx_tail);
			zc_room = sdp_zc_async_room(c);
			unsent = c->tx_unposted_bytes;
			unacked = c->tx_queued_bytes;
		}
	}
	WRITE_ONCE(c->v.rx_avail, avail);
	WRITE_ONCE(c->v.rx_mark, mark);
	WRITE_ONCE(c->v.rx_full, full);
	WRITE_ONCE(c->v.tx_free_slots, free_slots);
	WRITE_ONCE(c->v.tx_unsent, unsent);
	WRITE_ONCE(c->v.tx_unacked, unacked);
	WRITE_ONCE(c->v.zc_room, zc_room);
}
