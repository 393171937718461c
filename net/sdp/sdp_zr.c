// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol: zero-copy receives (SinkAvail).
 *
 * Sink: a blocking read of at least zcopy_thresh bytes that finds nothing
 * to read offers its buffer: pinned for the device to write, registered
 * remote-write only under a new key, and advertised by SinkAvail. The peer
 * RDMA Writes the stream's next bytes into it and answers with one
 * RdmaWrCompl of how many (0: it declined); the key is invalidated before
 * the reader takes its pages back, with the bytes in them, and the buffer
 * stays pinned for the next read into it (sdp_zbuf.c). The peer takes a
 * SinkAvail only if nothing it sent crossed it (its last message is the one
 * the SinkAvail acknowledges): bytes that crossed come first, so then it
 * writes none (sdp_proto_check() holds it to that). One still waiting to
 * go (for its registration, or credits) when bytes come is withdrawn: it
 * would acknowledge them, and the peer's next bytes would land before them.
 * A signal or SO_RCVTIMEO asks for the buffer back (SinkAvailCancel); the
 * answer still comes, with what was written.
 *
 * Source: a peer's SinkAvail taken, our bytes go into send slots as always,
 * but those are RDMA Written into it instead of sent; a blocking send of at
 * least zcopy_thresh bytes with nothing before it unsent is written from
 * the sender's own pages instead (sdp_zc.c), neither end copying. The
 * answer follows the writes: at the end of a send (not MSG_MORE, not
 * corked), when the SinkAvail is full, before urgent data or DisConn, or
 * when the peer asks (SinkAvailCancel). One that something crossed, or
 * that finds bytes waiting unsent, a SrcAvail queued or the stream
 * closing, is declined: the answer goes at once.
 */
#include <linux/uio.h>

#include "sdp_rdma.h"

/* ---- the sink: our reader's SinkAvail ---- */

/* The peer's view of ours (sdp_proto_check()). */
void sdp_zr_rules(const struct sdp_conn *c, struct sdp_zc_rules *z)
{
	const struct sdp_zr_adv *a = &c->zr;

	z->sink_offered = c->zr_offered;
	z->sink_held = c->zpeer.held || c->zpeer.answer_due;
	z->adv_out = a->state == SDP_ZR_OUT;
	z->adv_crossed = a->crossed;
	z->adv_len = a->len;
	z->adv_mseq = a->mseq;
}

/* The reader's wake condition (read unlocked): the peer may still write its pages. */
bool sdp_conn_zr_busy(const struct sdp_conn *c)
{
	u8 state = READ_ONCE(c->zr.state);

	return state != SDP_ZR_IDLE && state != SDP_ZR_DONE;
}

/* No one can write the pages now: the reader takes them back. */
static void sdp_zr_done(struct sdp_conn *c)
{
	WRITE_ONCE(c->zr.state, SDP_ZR_DONE);
	sdp_zc_wake(c->sk);
}

/* Answered, or withdrawn before it went: the key dies first. */
static void sdp_zr_finish(struct sdp_conn *c)
{
	struct sdp_zr_adv *a = &c->zr;

	a->state = SDP_ZR_INV;
	if (!sdp_zc_reg_inv(c, &a->reg, a->buf->mr))
		sdp_zr_done(c);
}

/*
 * Stream bytes came while ours was out, sent before the peer saw it
 * (sdp_proto_check() let them through): it declines it.
 */
void sdp_zr_crossed(struct sdp_conn *c)
{
	c->zr.crossed = true;
}

/*
 * Nothing of the stream waits to be read: a SinkAvail may offer the
 * reader's buffer for the next bytes. Checked again as it goes, since it may
 * wait for its registration or for credits while bytes come.
 */
static bool sdp_zr_stream_empty(const struct sdp_conn *c)
{
	return !c->rx_ready_bytes && !c->zsink.reading &&
	       !test_bit(SDP_C_RCVD_DISCONN, &c->flags);
}

/* RdmaWrCompl: @len bytes written into our reader's pages (bounded by sdp_proto_check()). */
void sdp_zr_wrcompl(struct sdp_conn *c, u32 len)
{
	struct sock *sk = c->sk;

	c->zr.got = len;
	c->rcv_nxt += len;
	c->v.stats.rx_bytes += len;
	c->v.stats.zw_rx_bytes += len;
	SDP_ADD_STATS(sock_net(sk), SDP_MIB_RX_BYTES, len);
	SDP_ADD_STATS(sock_net(sk), SDP_MIB_ZC_RECV_BYTES, len);
	if (!len)
		SDP_INC_STATS(sock_net(sk), SDP_MIB_ZC_RECV_DECLINED);
	sdp_zr_finish(c);
}

/*
 * From sdp_tx_push(): our registration once it may go (quirks.reg_alone),
 * our SinkAvail when the credits allow it (it takes a buffer of the peer's
 * as Data does), our cancel. 0 or a post's error.
 */
int sdp_zr_push(struct sdp_conn *c)
{
	struct sdp_zr_adv *a = &c->zr;
	int err;

	/* bytes came first: withdrawn, the reader takes them (its SinkAvail would ack them) */
	if (a->state == SDP_ZR_QUEUED && !sdp_zr_stream_empty(c)) {
		sdp_zr_finish(c);
		return 0;
	}
	if (a->state == SDP_ZR_QUEUED && !a->reg.registered && sdp_zc_may_register(c)) {
		err = sdp_zc_reg_post(c, &a->reg, a->buf->mr,
				      IB_ACCESS_REMOTE_WRITE | IB_ACCESS_LOCAL_WRITE);
		if (err)
			return err;
	}
	if (a->state == SDP_ZR_QUEUED && a->reg.registered &&
	    sdp_tx_credits(c) > SDP_CTRL_CREDITS && sdp_tx_ctrl_ok(c)) {
		sdp_proto_avail(sdp_tx_ctrl_msg(c), a->len, a->buf->mr->rkey, a->buf->mr->iova);
		err = sdp_tx_ctrl(c, SDP_MID_SINKAVAIL, SDP_SRCAVAIL_LEN);
		if (err)
			return err;
		a->mseq = c->seq.tx_mseq;
		a->state = SDP_ZR_OUT;
		SDP_INC_STATS(sock_net(c->sk), SDP_MIB_ZC_RECVS);
	}
	if (a->state == SDP_ZR_OUT && a->cancel && sdp_tx_ctrl_ok(c)) {
		err = sdp_tx_ctrl(c, SDP_MID_SINKAVAIL_CANCEL, sizeof(struct sdp_bsdh));
		if (err)
			return err;
		a->cancel = false;
	}
	return 0;
}

/*
 * recvmsg(), nothing to read: offer the reader's buffer (the user memory
 * at the iterator's head, @thresh bytes or more) by SinkAvail if the
 * connection can. True: offered; the reader waits for sdp_conn_zr_busy()
 * to clear, then calls sdp_conn_zr_end().
 */
bool sdp_conn_zr_recv(struct sdp_conn *c, struct msghdr *msg, u32 thresh)
{
	struct sdp_zr_adv *a = &c->zr;
	unsigned long addr;
	size_t len;

	if (!thresh || !c->v.live || !c->started || !c->zr_peer || c->failed ||
	    !sdp_zr_stream_empty(c) || a->state != SDP_ZR_IDLE ||
	    test_bit(SDP_C_CM_GONE, &c->flags) ||
	    !sdp_iter_user_seg(&msg->msg_iter, &addr, &len) || len < thresh)
		return false;
	len = min_t(size_t, len, SDP_SRCAVAIL_MAX);
	a->buf = sdp_zbuf_get(c, addr, len, false, true);
	if (!a->buf) {
		SDP_INC_STATS(sock_net(c->sk), SDP_MIB_ZC_FALLBACK);
		return false;
	}
	sdp_zc_new_key(a->buf->mr);
	a->reg.reg_status = IB_WC_SUCCESS;
	a->reg.registered = false;
	a->len = len;
	a->got = 0;
	a->cancel = false;
	a->crossed = false;
	a->ended = false;
	a->state = SDP_ZR_QUEUED;
	sdp_tx_push(c, false);
	return true;
}

/* A signal or SO_RCVTIMEO: ask for the buffer back; one not sent yet is withdrawn. */
void sdp_conn_zr_cancel(struct sdp_conn *c)
{
	struct sdp_zr_adv *a = &c->zr;

	if (!c->v.live)
		return;
	if (a->state == SDP_ZR_QUEUED) {
		sdp_zr_finish(c);
		return;
	}
	if (a->state == SDP_ZR_OUT && !a->cancel) {
		a->cancel = true;
		sdp_tx_push(c, false);
	}
}

/*
 * The connection ended with ours out (sdp_conn_zc_revoke(), the QP
 * drained): a registration that may be live dies with its MR.
 */
void sdp_zr_revoke(struct sdp_conn *c)
{
	struct sdp_zr_adv *a = &c->zr;

	if (!sdp_conn_zr_busy(c))
		return;
	if (a->reg.registered)
		sdp_zbuf_revoke(c, a->buf);
	a->ended = true;
	sdp_zr_done(c);
}

/*
 * The reader takes its pages back, with what the peer wrote into them
 * (returned, the iterator moved past it). The buffer is kept for the next
 * read only if bytes came into it: an idle reader's goes.
 */
size_t sdp_conn_zr_end(struct sdp_conn *c, struct msghdr *msg)
{
	struct sdp_zr_adv *a = &c->zr;
	size_t got = a->got;

	sdp_zbuf_written(a->buf);
	sdp_zbuf_put(c, a->buf, !a->ended && got);
	a->buf = NULL;
	iov_iter_advance(&msg->msg_iter, got);
	WRITE_ONCE(a->state, SDP_ZR_IDLE);
	return got;
}

/* ---- the source: the peer's SinkAvail ---- */

/*
 * The peer's SinkAvail (sdp_proto_check() judged it): take it if nothing
 * of ours crossed it and the stream's next bytes may go there, else
 * decline it.
 */
void sdp_zr_sinkavail(struct sdp_conn *c, const struct sdp_bsdh *h)
{
	struct sdp_zr_peer *p = &c->zpeer;
	bool take;

	p->len = sdp_proto_avail_get(h, &p->rkey, &p->vaddr);
	p->filled = 0;
	take = c->seq.tx_mseq == c->seq.tx_mseq_acked && c->tx_post == c->tx_head &&
	       c->zs_head == c->zs_tail && !c->tx_urg_pend &&
	       !test_bit(SDP_C_SEND_DISCONN, &c->flags) &&
	       !(READ_ONCE(c->sk->sk_shutdown) & SEND_SHUTDOWN);
	p->held = take;
	p->answer_due = !take;
	sdp_tx_push(c, false);
	sdp_update_counts(c);
}

/* SinkAvailCancel: the writes posted, the answer goes; one that crossed it asks for nothing. */
void sdp_zr_sinkavail_cancel(struct sdp_conn *c)
{
	if (!c->zpeer.held)
		return;
	c->zpeer.answer_due = true;
	sdp_tx_push(c, false);
}

/*
 * From sdp_tx_push(), before Data: our RdmaWrCompl, once due and the
 * writes into the SinkAvail are posted. 0 or a post's error.
 */
int sdp_zr_answer(struct sdp_conn *c)
{
	struct sdp_zr_peer *p = &c->zpeer;
	int err;

	if (!p->answer_due || !sdp_tx_ctrl_ok(c) ||
	    (c->tx_post != c->tx_head && c->tx[c->tx_post % c->tx_count].write) ||
	    (sdp_zc_state(c) == SDP_ZC_QUEUED && sdp_zc_head(c)->write))
		return 0;
	sdp_proto_compl(sdp_tx_ctrl_msg(c), p->filled);
	err = sdp_tx_ctrl(c, SDP_MID_RDMAWRCOMPL, SDP_RDMARDCOMPL_LEN);
	if (err)
		return err;
	if (p->filled)
		SDP_INC_STATS(sock_net(c->sk), SDP_MIB_ZC_WRITES);
	p->held = false;
	p->answer_due = false;
	return 0;
}

/* The engine's: our registration failed, or its invalidation completed. */
void sdp_zr_reap(struct sdp_conn *c)
{
	struct sdp_zr_adv *a = &c->zr;

	if (!sdp_conn_zr_busy(c))
		return;
	if (sdp_zc_reg_reap(c, &a->reg, a->state == SDP_ZR_INV) > 0)
		sdp_zr_done(c);
}

void sdp_zr_init(struct sdp_conn *c)
{
	sdp_zc_reg_init(&c->zr.reg, c);
}
