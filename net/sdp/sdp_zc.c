// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol: zero-copy sends (the ZSDP design).
 *
 * Source: a blocking send of at least zcopy_thresh bytes of user memory
 * pins them, registers them for the peer to read (remote read only), and
 * offers them by SrcAvail once the data before them is posted. The sender
 * waits until the peer has read them all (RdmaRdCompl) or will read no
 * more (SendSM, our answer to its signal's SrcAvailCancel); the
 * registration is invalidated before the pages go back, or, when the
 * connection dies first, destroyed with it (sdp_zc_release()). The
 * buffer stays pinned and mapped for the next send of the same bytes
 * (sdp_zbuf.c).
 * With the peer's SinkAvail ours to fill (sdp_zr.c), a blocking send's
 * pages are registered for our device alone and RDMA Written into it
 * instead, the sender waiting for the write's completion.
 * A MSG_ZEROCOPY send (AZ-SDP) does not wait: its pages stay pinned till
 * the peer has read them, or, what it declined copied from them as Data
 * (SDP_ZC_COPY), then go back, and the error queue says so
 * (sdp_zc_async_end()). Up to SDP_ZC_QUEUE of them queue, pinned and
 * mapped, each offered once the one before is over; the stream's other
 * bytes wait for them all.
 *
 * Sink: a peer's SrcAvail is read by RDMA Reads into receive memory, a
 * receive buffer's size at a time, SDP_ZC_READS at once, as far as
 * SO_RCVBUF and SDP_ZC_SLOTS let it run ahead of the reader; the bytes join
 * the stream in order.
 * Nothing else of the peer's data may come until all is read or the peer
 * cancelled (sdp_proto_check()); then RdmaRdCompl tells how much was read,
 * and SendSM that the rest was not.
 */
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/uio.h>

#include "sdp_rdma.h"

/* The peer's view of what it may send (sdp_proto_check()). */
void sdp_zc_rules(const struct sdp_conn *c, struct sdp_zc_rules *z)
{
	const struct sdp_zc_src *src = &c->zsrc[c->zs_head % SDP_ZC_QUEUE];

	z->offered = c->zc_offered;
	z->reading = c->zsink.reading;
	z->src_left = src->state == SDP_ZC_OUT && !src->write ? src->len - src->acked : 0;
	sdp_zr_rules(c, z);
}

/* Our SrcAvail holds the stream: no new data is taken, nor DisConn sent. */
bool sdp_zc_busy(const struct sdp_conn *c)
{
	u8 state = sdp_zc_state(c);

	return state == SDP_ZC_QUEUED || state == SDP_ZC_OUT || state == SDP_ZC_INV;
}

/*
 * ... or the rest of a MSG_ZEROCOPY send is being copied, or more wait
 * behind: no writer's bytes, no DisConn.
 */
bool sdp_zc_holds(const struct sdp_conn *c)
{
	return c->zs_head != c->zs_tail && sdp_zc_state(c) != SDP_ZC_DONE;
}

/*
 * Senders sleep on the socket's wait queue: a blocking one till its send
 * is over (sdp_conn_zc_busy()), uninterruptibly once it has cancelled; a
 * MSG_ZEROCOPY one till there is room (sdp_conn_zc_room()); a reader till
 * its SinkAvail is over (sdp_conn_zr_busy()).
 */
void sdp_zc_wake(struct sock *sk)
{
	struct socket_wq *wq;

	rcu_read_lock();
	wq = rcu_dereference(sk->sk_wq);
	if (skwq_has_sleeper(wq))
		wake_up_all(&wq->wait);
	rcu_read_unlock();
}

/* ---- the sink ---- */

static void sdp_zc_read_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct sdp_wr *wr = sdp_wr_of(wc);
	struct sdp_rx_slot *slot = container_of(wr, struct sdp_rx_slot, wr);

	/* the first says: the signalled one, or the read that failed (its fence flushes) */
	if (slot->done)
		return;
	slot->status = wc->status;
	smp_store_release(&slot->done, true);
	sdp_cq_mark(cq, wr->conn);
}

/* A read's buffer, read or not: the reader is done with it. */
void sdp_zc_rd_free(struct sdp_conn *c, struct sdp_rx_slot *slot)
{
	if (!slot->buf)
		return;
	sdp_buf_unmap(c, slot->buf, slot->dma, slot->len,
		      slot->kmem ? SDP_MEM_RX_KERNEL : SDP_MEM_RX);
	slot->buf = NULL;
}

/*
 * Post the next reads of the peer's SrcAvail: into the read slots whose
 * bytes were read (in order, so the next one's), while the unread bytes
 * stay within SO_RCVBUF. With nothing unread and nothing in flight one read
 * always goes, its buffer forced from the cgroup if the socket's limits
 * refuse it (nothing else would free memory for it). 0 or a post's error.
 */
int sdp_zc_read_more(struct sdp_conn *c, gfp_t gfp)
{
	struct sdp_zc_sink *k = &c->zsink;
	struct sdp_rx_slot *slot;
	u32 n;
	int err;

	while (c->v.live && k->reading && !k->cancel && k->posted < k->len) {
		bool idle = k->posted == k->got && !c->rx_ready_bytes;

		slot = &k->rd[k->rd_head % SDP_ZC_SLOTS];
		if (slot->buf || k->rd_head - k->rd_tail >= SDP_ZC_READS)
			break;
		n = min(k->len - k->posted, c->rcv_size);
		if (!idle && c->rx_ready_bytes + (k->posted - k->got) + n >
			     READ_ONCE(c->sk->sk_rcvbuf))
			break;
		slot->kmem = false;
		err = sdp_buf_map(c, &slot->buf, &slot->dma, n, SDP_MEM_RX,
				  gfp | __GFP_NOWARN);
		if (err && idle) {
			slot->kmem = true;
			err = sdp_buf_map(c, &slot->buf, &slot->dma, n,
					  SDP_MEM_RX_KERNEL, gfp | __GFP_NOWARN);
		}
		if (err)
			break;	/* the reader frees memory and asks again */
		slot->len = n;
		slot->off = 0;
		slot->done = false;
		err = sdp_post_read(c, &slot->wr, slot->dma, n, k->vaddr + k->posted,
				    k->rkey);
		/* (its read may be posted, not its fence: the buffer waits for the drain, sdp_zc_release()) */
		if (err)
			return err;
		k->rd_head++;
		k->posted += n;
		/* (a fence is a read too: it takes a request and a response of its own) */
		c->v.stats.zc_reads += sdp_read_wrs(c->sdev);
		SDP_ADD_STATS(sock_net(c->sk), SDP_MIB_ZC_READS, sdp_read_wrs(c->sdev));
	}
	/* nothing in flight, more to read: our reader holds it; declined if it stays so */
	if (c->v.live && k->reading && !k->cancel && k->posted < k->len &&
	    k->posted == k->got && !timer_pending(&c->zc_timer))
		sk_reset_timer(c->sk, &c->zc_timer, jiffies + SDP_ZC_STALL);
	return 0;
}

/* All asked for is in, and all there is or all the peer lets us have. */
static void sdp_zc_sink_check(struct sdp_conn *c)
{
	struct sdp_zc_sink *k = &c->zsink;

	if (!k->reading || k->got != k->posted || (k->got < k->len && !k->cancel))
		return;
	k->reading = false;
	k->compl_len = k->got;
	k->compl_due = k->got > 0;
	k->sendsm_due = k->got < k->len;
}

/* The read slots, made at the first SrcAvail: most connections never need them. */
static bool sdp_zc_slots(struct sdp_conn *c)
{
	u32 i;

	if (c->zsink.rd)
		return true;
	c->zsink.rd = kcalloc(SDP_ZC_SLOTS, sizeof(*c->zsink.rd), GFP_ATOMIC | __GFP_NOWARN);
	if (!c->zsink.rd)
		return false;
	for (i = 0; i < SDP_ZC_SLOTS; i++) {
		sdp_wr_init(&c->zsink.rd[i].wr, c, sdp_zc_read_done);
		c->zsink.rd[i].rd = true;
	}
	return true;
}

/*
 * The peer's SrcAvail (sdp_proto_check() judged it): start reading, or,
 * with no memory for the slots, decline it at once.
 */
int sdp_zc_srcavail(struct sdp_conn *c, const struct sdp_bsdh *h)
{
	struct sdp_zc_sink *k = &c->zsink;

	k->len = sdp_proto_avail_get(h, &k->rkey, &k->vaddr);
	k->posted = 0;
	k->got = 0;
	k->cancel = false;
	k->reading = true;
	if (!sdp_zc_slots(c)) {
		k->cancel = true;
		SDP_INC_STATS(sock_net(c->sk), SDP_MIB_ZC_DECLINED);
		sdp_zc_sink_check(c);
		return 0;
	}
	return sdp_zc_read_more(c, GFP_ATOMIC);
}

/*
 * Our reader left the peer's SrcAvail half read for SDP_ZC_STALL: the
 * rest is declined (RdmaRdCompl of what was read, then SendSM), so the
 * peer's send goes on by copies, buffered on its side as TCP's would be,
 * instead of waiting on our reader.
 */
static void sdp_zc_stalled(struct sdp_conn *c)
{
	struct sdp_zc_sink *k = &c->zsink;

	if (!k->reading || k->cancel || k->posted != k->got)
		return;
	if (sdp_zc_read_more(c, GFP_ATOMIC)) {
		sdp_up->error(c->sk, ECONNRESET, SDP_MIB_QP_ERROR);
		return;
	}
	if (k->posted != k->got)
		return;		/* the reader made room meanwhile */
	k->cancel = true;
	SDP_INC_STATS(sock_net(c->sk), SDP_MIB_ZC_DECLINED);
	sdp_zc_sink_check(c);
}

void sdp_zc_timer_stop(struct sdp_conn *c)
{
	sk_stop_timer(c->sk, &c->zc_timer);
}

/* SrcAvailCancel: read no more than is asked for already. */
void sdp_zc_cancelled(struct sdp_conn *c)
{
	if (!c->zsink.reading)
		return;		/* it crossed our RdmaRdCompl */
	c->zsink.cancel = true;
	sdp_zc_sink_check(c);
}

/* Completed reads join the stream, in order. */
static void sdp_zc_sink_reap(struct sdp_conn *c)
{
	struct sdp_zc_sink *k = &c->zsink;
	struct sock *sk = c->sk;
	struct sdp_rx_slot *slot;
	u32 before = c->rx_ready_bytes;

	while (k->rd_tail != k->rd_head) {
		slot = &k->rd[k->rd_tail % SDP_ZC_SLOTS];
		if (!smp_load_acquire(&slot->done))
			break;
		if (slot->status != IB_WC_SUCCESS) {
			sdp_wr_failed(c, slot->status, SDP_MIB_ZC_READ_FAILED);
			return;
		}
		k->rd_tail++;
		ib_dma_sync_single_for_cpu(c->sdev->ibdev, slot->dma, slot->len,
					   DMA_FROM_DEVICE);
		list_add_tail(&slot->node, &c->rx_ready);
		c->rx_ready_bytes += slot->len;
		c->rcv_nxt += slot->len;
		k->got += slot->len;
		c->v.stats.rx_bytes += slot->len;
		c->v.stats.zc_rx_bytes += slot->len;
		SDP_ADD_STATS(sock_net(sk), SDP_MIB_RX_BYTES, slot->len);
		SDP_ADD_STATS(sock_net(sk), SDP_MIB_ZC_RX_BYTES, slot->len);
	}
	sdp_zc_sink_check(c);
	if (sdp_zc_read_more(c, GFP_ATOMIC)) {
		sdp_up->error(sk, ECONNRESET, SDP_MIB_QP_ERROR);
		return;
	}
	if (c->rx_ready_bytes != before && !sock_flag(sk, SOCK_DEAD)) {
		sdp_update_counts(c);
		sdp_up->data_ready(sk);
	}
}

/*
 * Each registration of an MR gets a random key, so that the key of a send
 * or receive before, on the same MR, names nothing. (The PD is the
 * connection's: no key reaches another connection's regions.)
 */
void sdp_zc_new_key(struct ib_mr *mr)
{
	u8 key = get_random_u8();

	if (key == (mr->rkey & 0xff))
		key++;
	ib_update_fast_reg_key(mr, key);
}

/* ---- the source ---- */

static void sdp_zc_reg_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct sdp_wr *wr = sdp_wr_of(wc);
	struct sdp_zc_reg *r = container_of(wr, struct sdp_zc_reg, reg_wr);

	if (wc->status != IB_WC_SUCCESS) {
		WRITE_ONCE(r->reg_status, wc->status);
		sdp_cq_mark(cq, wr->conn);
	}
}

static void sdp_zc_inv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct sdp_wr *wr = sdp_wr_of(wc);
	struct sdp_zc_reg *r = container_of(wr, struct sdp_zc_reg, inv_wr);

	r->inv_status = wc->status;
	smp_store_release(&r->inv_done, true);
	sdp_cq_mark(cq, wr->conn);
}

void sdp_zc_reg_init(struct sdp_zc_reg *r, struct sdp_conn *c)
{
	sdp_wr_init(&r->reg_wr, c, sdp_zc_reg_done);
	sdp_wr_init(&r->inv_wr, c, sdp_zc_inv_done);
}

int sdp_zc_reg_post(struct sdp_conn *c, struct sdp_zc_reg *r, struct ib_mr *mr, int access)
{
	int err = sdp_post_reg(c, &r->reg_wr, mr, access);

	if (!err)
		r->registered = true;
	return err;
}

/* The key dies: 1 once its invalidation is posted, 0 if it was never registered. */
int sdp_zc_reg_inv(struct sdp_conn *c, struct sdp_zc_reg *r, struct ib_mr *mr)
{
	if (!r->registered)
		return 0;
	r->inv_done = false;
	if (sdp_post_inv(c, &r->inv_wr, mr->rkey)) {
		sdp_up->error(c->sk, ECONNRESET, SDP_MIB_QP_ERROR);
		return -1;
	}
	return 1;
}

/*
 * The engine's: a failed registration ends the connection (-1); with @inv
 * (one is posted), 1 once it completed, the key dead.
 */
int sdp_zc_reg_reap(struct sdp_conn *c, struct sdp_zc_reg *r, bool inv)
{
	u8 status = READ_ONCE(r->reg_status);

	if (status != IB_WC_SUCCESS) {
		r->reg_status = IB_WC_SUCCESS;
		sdp_wr_failed(c, status, SDP_MIB_QP_ERROR);
		return -1;
	}
	if (!inv || !smp_load_acquire(&r->inv_done))
		return 0;
	if (r->inv_status != IB_WC_SUCCESS) {
		/* the registration stays till the connection's release */
		sdp_wr_failed(c, r->inv_status, SDP_MIB_QP_ERROR);
		return -1;
	}
	return 1;
}

/* The oldest send is over, its pages back, its MR invalidated or gone. */
static void sdp_zc_pop(struct sdp_conn *c)
{
	struct sdp_zc_src *z = sdp_zc_head(c);

	WRITE_ONCE(z->state, SDP_ZC_IDLE);
	c->zs_bytes -= z->len;
	WRITE_ONCE(c->zs_head, c->zs_head + 1);
}

/*
 * A MSG_ZEROCOPY send is over: its pages go back, and its notification
 * (the error queue's, as TCP's) says whether every byte went zero-copy.
 */
static void sdp_zc_async_end(struct sdp_conn *c)
{
	struct sdp_zc_src *z = sdp_zc_head(c);
	struct ubuf_info *uarg = z->uarg;

	sdp_zbuf_put(c, z->buf, false);
	z->buf = NULL;
	z->uarg = NULL;
	sdp_zc_pop(c);
	sdp_update_counts(c);
	sdp_zcopy_complete(uarg, !z->copied);
	/* MSG_ZEROCOPY senders waiting for room (sdp_conn_zc_room()), and writers */
	sdp_zc_wake(c->sk);
	c->sk->sk_write_space(c->sk);
}

/*
 * SDP_ZC_COPY: what the peer left unread of a MSG_ZEROCOPY send goes as
 * Data, copied from its pinned pages as send buffers come free (the engine
 * calls again after each completion), pushed at its end as the send()
 * would have been.
 */
static void sdp_zc_copy_rest(struct sdp_conn *c)
{
	struct sdp_zc_src *z = sdp_zc_head(c);
	int err = 0;

	while (!err && z->acked + z->copied < z->len) {
		u32 pos = z->buf->off + z->acked + z->copied;
		struct msghdr m = {};
		struct bio_vec bv;
		size_t done = 0;

		bv.bv_page = z->buf->pages[pos >> PAGE_SHIFT];
		bv.bv_offset = offset_in_page(pos);
		bv.bv_len = min_t(u32, PAGE_SIZE - bv.bv_offset,
				  z->len - z->acked - z->copied);
		iov_iter_bvec(&m.msg_iter, WRITE, &bv, 1, bv.bv_len);
		err = sdp_tx_write(c, &m, 0, &done, GFP_ATOMIC);
		z->copied += done;
	}
	/* no buffer, and none in flight to give one back: look again soon */
	if (err == -ENOBUFS)
		sk_reset_timer(c->sk, &c->zc_timer, jiffies + SDP_ZC_STALL);
	if (err)
		return;
	sdp_tx_push(c, true);
	sdp_zc_async_end(c);
}

/* The pages are nobody's but the sender's again: wake it. */
static void sdp_zc_src_done(struct sdp_conn *c)
{
	struct sdp_zc_src *z = sdp_zc_head(c);

	if (z->uarg) {
		/* (a connection that ended sends nothing more) */
		if (z->acked == z->len || z->ended || !c->v.live) {
			sdp_zc_async_end(c);
			return;
		}
		z->state = SDP_ZC_COPY;
		sdp_zc_copy_rest(c);
		return;
	}
	WRITE_ONCE(z->state, SDP_ZC_DONE);
	sdp_update_counts(c);
	sdp_zc_wake(c->sk);
	/* writers that waited for the stream */
	c->sk->sk_write_space(c->sk);
}

/* Read all, or refused: the key dies before the pages go back. */
static void sdp_zc_src_finish(struct sdp_conn *c)
{
	struct sdp_zc_src *z = sdp_zc_head(c);

	z->state = SDP_ZC_INV;
	if (!sdp_zc_reg_inv(c, &z->reg, z->buf->mr))
		sdp_zc_src_done(c);
}

/* RdmaRdCompl: @len more bytes read (sdp_proto_check() bounded it). */
void sdp_zc_rdmardcompl(struct sdp_conn *c, u32 len)
{
	struct sdp_zc_src *z = sdp_zc_head(c);

	z->acked += len;
	c->tx_stamp = jiffies;		/* progress, for sdp_tx_watch() */
	c->v.stats.tx_bytes += len;
	c->v.stats.zc_tx_bytes += len;
	SDP_ADD_STATS(sock_net(c->sk), SDP_MIB_TX_BYTES, len);
	SDP_ADD_STATS(sock_net(c->sk), SDP_MIB_ZC_TX_BYTES, len);
	if (z->acked == z->len)
		sdp_zc_src_finish(c);
}

/* SendSM: the peer reads no more of it. */
void sdp_zc_sendsm(struct sdp_conn *c)
{
	sdp_zc_src_finish(c);
}

static void sdp_zc_write_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct sdp_wr *wr = sdp_wr_of(wc);
	struct sdp_zc_src *z = container_of(wr, struct sdp_zc_src, wr);

	z->wr_status = wc->status;
	smp_store_release(&z->wr_done, true);
	sdp_cq_mark(cq, wr->conn);
}

/* Our write from the sender's pages into the peer's SinkAvail completed: its bytes are there. */
static void sdp_zc_written(struct sdp_conn *c)
{
	struct sdp_zc_src *z = sdp_zc_head(c);

	if (z->wr_status != IB_WC_SUCCESS) {
		sdp_wr_failed(c, z->wr_status, SDP_MIB_QP_ERROR);
		return;
	}
	z->acked = z->len;
	c->tx_stamp = jiffies;
	sdp_zc_src_finish(c);
}

/* Our write from the sender's pages is posted and completed (maybe failed). */
static bool sdp_zc_write_over(const struct sdp_zc_src *z)
{
	return z->write && z->state == SDP_ZC_OUT && smp_load_acquire(&z->wr_done);
}

static void sdp_zc_src_reap(struct sdp_conn *c)
{
	struct sdp_zc_src *z = sdp_zc_head(c);

	if (sdp_zc_write_over(z))
		sdp_zc_written(c);
	if (c->v.live && sdp_zc_reg_reap(c, &z->reg, z->state == SDP_ZC_INV) > 0)
		sdp_zc_src_done(c);
}

/* The engine's: reads and registrations that completed, a stalled read. */
void sdp_zc_reap(struct sdp_conn *c)
{
	if (c->v.live)
		sdp_zr_reap(c);
	if (c->v.live)
		sdp_zc_sink_reap(c);
	if (c->v.live && test_and_clear_bit(SDP_C_ZC_STALL, &c->flags))
		sdp_zc_stalled(c);
	if (c->v.live)
		sdp_zc_src_reap(c);
	if (c->v.live && sdp_zc_head(c)->state == SDP_ZC_COPY)
		sdp_zc_copy_rest(c);
}

/*
 * The data before is posted, and where the device asks (reg_alone)
 * completed: slots, control messages, reads, a write from a sender's pages.
 */
bool sdp_zc_may_register(const struct sdp_conn *c)
{
	const struct sdp_zc_src *z = &c->zsrc[c->zs_head % SDP_ZC_QUEUE];

	if (c->tx_post != c->tx_head)
		return false;
	return !c->sdev->quirks.reg_alone ||
	       (c->tx_tail == c->tx_post && c->ctrl_tail == c->ctrl_head &&
		c->zsink.rd_tail == c->zsink.rd_head &&
		!(z->write && z->state == SDP_ZC_OUT));
}

/*
 * From sdp_tx_push(), once the data before is posted: our answers to the
 * peer's SrcAvail, our SrcAvail when the credits allow it (it takes a
 * buffer of the peer's as Data does), our cancel. 0 or a post's error.
 */
int sdp_zc_push(struct sdp_conn *c)
{
	struct sdp_zc_sink *k = &c->zsink;
	struct sdp_zc_src *z = sdp_zc_head(c);
	int err;

	if (k->compl_due && sdp_tx_ctrl_ok(c)) {
		sdp_proto_compl(sdp_tx_ctrl_msg(c), k->compl_len);
		err = sdp_tx_ctrl(c, SDP_MID_RDMARDCOMPL, SDP_RDMARDCOMPL_LEN);
		if (err)
			return err;
		k->compl_due = false;
	}
	if (!k->compl_due && k->sendsm_due && sdp_tx_ctrl_ok(c)) {
		err = sdp_tx_ctrl(c, SDP_MID_SENDSM, sizeof(struct sdp_bsdh));
		if (err)
			return err;
		k->sendsm_due = false;
	}
	if (z->state == SDP_ZC_QUEUED && !z->reg.registered && sdp_zc_may_register(c)) {
		/* (the write's source: for our own device's use only) */
		err = sdp_zc_reg_post(c, &z->reg, z->buf->mr, z->write ? 0 : IB_ACCESS_REMOTE_READ);
		if (err)
			return err;
	}
	/* (an RDMA Write takes none of the peer's buffers: no credit) */
	if (z->state == SDP_ZC_QUEUED && z->write && z->reg.registered &&
	    c->tx_post == c->tx_head) {
		z->wr_done = false;
		err = sdp_post_write_mr(c, &z->wr, z->buf->mr, z->len, z->raddr, z->rkey);
		if (err)
			return err;
		z->state = SDP_ZC_OUT;
		c->v.stats.tx_bytes += z->len;
		c->v.stats.zw_tx_bytes += z->len;
		c->v.stats.zw_writes++;
		SDP_ADD_STATS(sock_net(c->sk), SDP_MIB_TX_BYTES, z->len);
		SDP_ADD_STATS(sock_net(c->sk), SDP_MIB_ZC_DIRECT_BYTES, z->len);
	}
	if (z->state == SDP_ZC_QUEUED && !z->write && z->reg.registered &&
	    c->tx_post == c->tx_head &&
	    sdp_tx_credits(c) > SDP_CTRL_CREDITS && sdp_tx_ctrl_ok(c)) {
		sdp_proto_avail(sdp_tx_ctrl_msg(c), z->len, z->buf->mr->rkey, z->buf->mr->iova);
		err = sdp_tx_ctrl(c, SDP_MID_SRCAVAIL, SDP_SRCAVAIL_LEN);
		if (err)
			return err;
		z->state = SDP_ZC_OUT;
		SDP_INC_STATS(sock_net(c->sk), SDP_MIB_ZC_SENDS);
	}
	if (z->state == SDP_ZC_OUT && z->cancel && sdp_tx_ctrl_ok(c)) {
		err = sdp_tx_ctrl(c, SDP_MID_SRCAVAIL_CANCEL, sizeof(struct sdp_bsdh));
		if (err)
			return err;
		z->cancel = false;
		SDP_INC_STATS(sock_net(c->sk), SDP_MIB_ZC_CANCELS);
	}
	return 0;
}

/*
 * A MSG_ZEROCOPY send may queue behind the ones there (some are): behind
 * MSG_ZEROCOPY's only, within SDP_ZC_QUEUE, and while what they pin is
 * under SO_SNDBUF (as TCP takes a send while its queue is under it).
 */
bool sdp_zc_async_room(const struct sdp_conn *c)
{
	u32 n = c->zs_tail - c->zs_head;

	return n && n < SDP_ZC_QUEUE && c->zsrc[(c->zs_tail - 1) % SDP_ZC_QUEUE].uarg &&
	       c->zs_bytes < READ_ONCE(c->sk->sk_sndbuf);
}

/*
 * The peer's SinkAvail is ours to fill, nothing of the stream waits before
 * these bytes, and they are at least @thresh: a blocking sender's own
 * pages are RDMA Written into it (registered for our device's use only),
 * neither end copying. 0: they are copied into the send buffers, which are
 * written there as well (sdp_tx_write()).
 */
static size_t sdp_zc_write_take(struct sdp_conn *c, struct sdp_zc_src *z, unsigned long addr,
				size_t len, u32 thresh)
{
	struct sdp_zr_peer *p = &c->zpeer;

	len = min_t(size_t, len, p->len - p->filled);
	if (!sdp_zr_filling(c) || len < thresh || c->tx_post != c->tx_head ||
	    c->zs_head != c->zs_tail)
		return 0;
	z->buf = sdp_zbuf_get(c, addr, len, false, false);
	if (!z->buf) {
		SDP_INC_STATS(sock_net(c->sk), SDP_MIB_ZC_FALLBACK);
		return 0;
	}
	z->raddr = p->vaddr + p->filled;
	z->rkey = p->rkey;
	p->filled += len;
	/* full: answered once the write is posted */
	if (p->filled == p->len)
		p->answer_due = true;
	return len;
}

/*
 * sendmsg(): offer the next bytes of @msg by SrcAvail (or, the peer's
 * SinkAvail held, write them into it: sdp_zc_write_take()) if they are
 * worth it (the user memory at the iterator's head is @thresh bytes or more) and
 * the connection can. The bytes offered: the sender waits for
 * sdp_conn_zc_busy() to clear, then calls sdp_conn_zc_end(); or, with
 * MSG_ZEROCOPY's @uarg, they are sent already (the iterator is past them,
 * the notification comes once they are read). 0: copy them. -EAGAIN:
 * MSG_ZEROCOPY's, with no room behind MSG_ZEROCOPY's queued (the sender
 * waits for sdp_conn_zc_room(), as TCP's for its send buffer, rather than
 * copy). Behind a blocking send (its sender waits for it alone, and takes
 * it off the queue itself) any send copies: its bytes wait in the ring.
 */
int sdp_conn_zc_send(struct sdp_conn *c, struct msghdr *msg, int flags, u32 thresh,
		     struct ubuf_info *uarg)
{
	struct sdp_zc_src *z = &c->zsrc[c->zs_tail % SDP_ZC_QUEUE];
	unsigned long addr;
	size_t len;

	/* (MSG_OOB's last byte ends a Data message: it is copied) */
	if (!thresh || (flags & MSG_OOB) || !c->v.live || !c->started ||
	    c->failed || (READ_ONCE(c->sk->sk_shutdown) & SEND_SHUTDOWN) ||
	    test_bit(SDP_C_CM_GONE, &c->flags) ||
	    !sdp_iter_user_seg(&msg->msg_iter, &addr, &len) || len < thresh)
		return 0;
	if (c->zpeer.held) {
		/* (MSG_ZEROCOPY's would outlive the send: copied) */
		len = uarg ? 0 : sdp_zc_write_take(c, z, addr, len, thresh);
		if (!len)
			return 0;
		z->write = true;
	} else {
		if (!c->zc_peer)
			return 0;
		len = min_t(size_t, len, SDP_SRCAVAIL_MAX);
		if (c->zs_head != c->zs_tail && !(uarg && sdp_zc_async_room(c)))
			return uarg && c->zsrc[(c->zs_tail - 1) % SDP_ZC_QUEUE].uarg ? -EAGAIN : 0;
		z->buf = sdp_zbuf_get(c, addr, len, uarg, false);
		if (!z->buf) {
			SDP_INC_STATS(sock_net(c->sk), SDP_MIB_ZC_FALLBACK);
			return 0;
		}
		z->write = false;
	}
	sdp_zc_new_key(z->buf->mr);
	z->reg.reg_status = IB_WC_SUCCESS;
	z->reg.registered = false;
	z->len = len;
	z->acked = 0;
	z->copied = 0;
	z->cancel = false;
	z->ended = false;
	z->state = SDP_ZC_QUEUED;
	z->uarg = uarg;
	c->zs_tail++;
	c->zs_bytes += len;
	if (uarg) {
		net_zcopy_get(uarg);
		iov_iter_advance(&msg->msg_iter, len);
		SDP_INC_STATS(sock_net(c->sk), SDP_MIB_ZC_ASYNC);
	}
	sdp_tx_push(c, !z->write);
	sdp_update_counts(c);
	return len;
}

/* A MSG_ZEROCOPY send may queue now (what a sender that got -EAGAIN waits for). */
bool sdp_conn_zc_room(const struct sdp_conn *c)
{
	return c->zs_head == c->zs_tail || sdp_zc_async_room(c);
}

/* The sender's wake condition: its pages (the only ones queued) are still the device's. */
bool sdp_conn_zc_busy(const struct sdp_conn *c)
{
	return sdp_zc_state(c) != SDP_ZC_DONE;
}

/*
 * A signal or SO_SNDTIMEO: ask the peer to stop reading. A SrcAvail not
 * sent yet is withdrawn at once.
 */
void sdp_conn_zc_cancel(struct sdp_conn *c)
{
	struct sdp_zc_src *z = sdp_zc_head(c);

	if (!c->v.live)
		return;
	if (z->state == SDP_ZC_QUEUED) {
		/* (a write not posted: its bytes go elsewhere) */
		if (z->write)
			c->zpeer.filled -= z->len;
		sdp_zc_src_finish(c);
		return;
	}
	/* (a write posted completes soon: nothing to ask) */
	if (z->state == SDP_ZC_OUT && !z->cancel && !z->write) {
		z->cancel = true;
		sdp_tx_push(c, false);
	}
}

/*
 * The connection ended (reset, the peer gone, a local abort) with our
 * sends queued, or a blocking sender will wait no longer: in process
 * context, with a SrcAvail out the QP is drained (to error: nothing more
 * is read, and no registration or invalidation still names an MR), then
 * the oldest's MR goes if it was registered (the registration may be
 * live; the others' never were, and stay with their slots), and the pages
 * go back: MSG_ZEROCOPY's notified, a blocking sender's (alone in the
 * queue) its own again; buffers kept for later sends go too. The
 * connection was over, or is now.
 */
void sdp_conn_zc_revoke(struct sdp_conn *c)
{
	struct sdp_zc_src *z;

	if (sdp_zc_busy(c) || sdp_conn_zr_busy(c)) {
		if (c->v.live)
			ib_drain_qp(c->qp);
		z = sdp_zc_head(c);
		if (sdp_zc_busy(c) && z->reg.registered)
			sdp_zbuf_revoke(c, z->buf);
		/* a write from the sender's pages that completed has put its bytes there */
		if (sdp_zc_write_over(z) && z->wr_status == IB_WC_SUCCESS)
			z->acked = z->len;
		/* (and a reader's SinkAvail: its pages are the reader's to take back) */
		sdp_zr_revoke(c);
	}
	while (c->zs_head != c->zs_tail) {
		z = sdp_zc_head(c);
		if (z->state == SDP_ZC_DONE)
			break;
		z->ended = true;
		sdp_zc_src_done(c);
	}
	/* buffers kept for sends to come: none will */
	sdp_zbuf_shed_all(c);
}

/*
 * The sender takes its pages back (no one can read them now): unpinned,
 * the iterator moved past what the peer read, which is returned. *@how
 * (enum sdp_zc_end): the peer read it all; declined (or was asked to stop)
 * before; or the connection ended meanwhile (released, or revoked).
 */
size_t sdp_conn_zc_end(struct sdp_conn *c, struct msghdr *msg, int *how)
{
	struct sdp_zc_src *z = sdp_zc_head(c);
	size_t acked = z->acked;

	*how = z->ended ? SDP_ZC_ENDED : acked == z->len ? SDP_ZC_READ : SDP_ZC_DECLINED;
	sdp_zbuf_put(c, z->buf, !z->ended);
	z->buf = NULL;
	iov_iter_advance(&msg->msg_iter, acked);
	sdp_zc_pop(c);
	sdp_update_counts(c);
	/* (a MSG_ZEROCOPY sender may wait for the queue this leaves empty) */
	sdp_zc_wake(c->sk);
	return acked;
}

void sdp_zc_init(struct sdp_conn *c)
{
	u32 i;

	for (i = 0; i < SDP_ZC_QUEUE; i++) {
		sdp_zc_reg_init(&c->zsrc[i].reg, c);
		sdp_wr_init(&c->zsrc[i].wr, c, sdp_zc_write_done);
	}
	sdp_zr_init(c);
}

/*
 * The QP is drained (sdp_conn_release()): a registration still out dies
 * with its MR, so the pages can go back however the connection ended.
 */
void sdp_zc_release(struct sdp_conn *c)
{
	u32 i;

	sdp_conn_zc_revoke(c);
	/* (a blocking sender's pages wait for it to take them back) */
	sdp_zbuf_release(c);
	for (i = 0; c->zsink.rd && i < SDP_ZC_SLOTS; i++)
		sdp_zc_rd_free(c, &c->zsink.rd[i]);
	kfree(c->zsink.rd);
	c->zsink.rd = NULL;
}
