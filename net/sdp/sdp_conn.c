// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol: a connection's life and its RDMA resources.
 *
 * Every connection has one RC QP, its completions reaped in softirq from a
 * CQ it shares with others of its device (sdp_cq.c). A receive
 * buffer is reposted only when the reader has emptied it, so credits are
 * exactly the buffers free for the peer and a slow reader slows the sender
 * down. One extra buffer is posted beyond what is advertised: it catches a
 * peer that overruns its credits, and carries at most one control message
 * sent when the peer has no credit left.
 *
 * Memory follows use: an idle connection holds SDP_RX_START_BUFS receive
 * buffers and no send buffer. The receive ring doubles, up to its size, when
 * the peer has used up its credits (in softirq, or in the reader's context
 * if that allocation failed); send buffers live from sendmsg() to their
 * completion, a few kept for the next messages.
 */
#define pr_fmt(fmt) "sdp: " fmt

#include <linux/log2.h>
#include <linux/slab.h>
#include <linux/tcp.h>
#include <linux/sdp.h>

#include "sdp_rdma.h"

/* Kernel memory of the socket's cgroup, as the socket itself. */
static struct kmem_cache *sdp_conn_cache;

int sdp_conn_cache_init(void)
{
	sdp_conn_cache = kmem_cache_create("sdp_conn", sizeof(struct sdp_conn), 0,
					   SLAB_HWCACHE_ALIGN | SLAB_ACCOUNT, NULL);
	return sdp_conn_cache ? 0 : -ENOMEM;
}

void sdp_conn_cache_exit(void)
{
	kmem_cache_destroy(sdp_conn_cache);
}

struct sdp_conn *sdp_conn_alloc(struct sock *sk, gfp_t gfp)
{
	struct sdp_conn *c = kmem_cache_zalloc(sdp_conn_cache, gfp);

	if (!c)
		return NULL;
	c->sk = sk;
	INIT_LIST_HEAD(&c->dev_item);
	sdp_conn_timers_init(c);
	return c;
}

/* The socket's end: its teardown released the resources and the id. */
void sdp_conn_free(struct sdp_conn *c)
{
	WARN_ON_ONCE(c->v.live || c->id);
	sdp_zbuf_exit(c);
	kmem_cache_free(sdp_conn_cache, c);
}

static u32 sdp_ring_size(struct sock *sk, int buf, int lock, unsigned int def,
			 u32 size)
{
	u32 n = def;

	if (sk->sk_userlocks & lock)
		n = buf / size;
	return clamp_t(u32, n, SDP_MIN_BUFS, SDP_MAX_BUFS);
}

static void sdp_conn_qp_event(struct sdp_conn *c, struct ib_event *event)
{
	/*
	 * Data before the RTU: the connection is up, tell the CM (which then
	 * reports it established). Fatal errors also fail the work requests.
	 */
	if (event->event == IB_EVENT_COMM_EST && c)
		rdma_notify(c->id, IB_EVENT_COMM_EST);
	else
		pr_debug("QP event %s\n", ib_event_msg(event->event));
}

static void sdp_qp_event(struct ib_event *event, void *context)
{
	sdp_conn_qp_event(context, event);
}

/* (COMM_EST comes while the connection is set up: not retired) */
static void sdp_srq_qp_event(struct ib_event *event, void *context)
{
	sdp_conn_qp_event(READ_ONCE(((struct sdp_srq_qp *)context)->c), event);
}

/* The QP's sends drained; an SRQ's QP's receives complete late (sdp_srq_retire()). */
static void sdp_conn_drain(struct sdp_conn *c)
{
	if (c->srq)
		ib_drain_sq(c->qp);
	else
		ib_drain_qp(c->qp);
}

/*
 * The IB CM gives a QP the retry counts the peer's REQ or REP asks for, and
 * 7 retries forever: a peer that never posts receives, or stops answering,
 * would hold our sends for good. So where the device lets us (not
 * quirks.cm_qp), the QP is ours, not rdma_cm's: we move it through INIT,
 * RTR and RTS with rdma_cm's attributes but our retry counts. The peer may
 * RDMA Read only where zero-copy is offered (what our SrcAvail registers),
 * and write only where it takes our SinkAvails (what they register).
 */
static int sdp_qp_to(struct sdp_conn *c, enum ib_qp_state state)
{
	struct ib_qp_attr attr = { .qp_state = state };
	int mask, err;

	err = rdma_init_qp_attr(c->id, &attr, &mask);
	/* -EINVAL: the CM has left the states this needs; a REJ came */
	if (err)
		return err == -EINVAL ? -ECONNREFUSED : err;
	attr.qp_access_flags = (c->sdev->quirks.zcopy && !c->srq ? IB_ACCESS_REMOTE_READ : 0) |
			       (c->zr_peer ? IB_ACCESS_REMOTE_WRITE : 0);
	/* the CM's would be the REQ's on the passive side: ours, as agreed */
	attr.max_dest_rd_atomic = c->rd_in;
	attr.max_rd_atomic = c->rd_out;
	attr.retry_cnt = SDP_RETRY;
	attr.rnr_retry = SDP_RNR_RETRY;
	/*
	 * Not the CM's 655 ms: a sender waits this long each time our SRQ is
	 * empty, its retries (SDP_RNR_RETRY) some 0.7 s for the refill.
	 */
	if (c->srq && state == IB_QPS_RTR)
		attr.min_rnr_timer = IB_RNR_TIMER_122_88;
	return ib_modify_qp(c->qp, &attr, mask);
}

static int sdp_qp_create(struct sdp_conn *c, struct ib_qp_init_attr *attr)
{
	struct rdma_cm_id *id = c->id;
	struct ib_qp *qp;
	int err;

	if (sdp_fault(SDP_FAULT_QP))
		return -ENOMEM;
	if (c->sdev->quirks.cm_qp) {
		err = rdma_create_qp(id, c->pd, attr);
		if (!err)
			c->qp = id->qp;
		return err;
	}
	qp = ib_create_qp(c->pd, attr);
	if (IS_ERR(qp))
		return PTR_ERR(qp);
	c->qp = qp;
	return sdp_qp_to(c, IB_QPS_INIT);
}

static void sdp_qp_destroy(struct sdp_conn *c)
{
	if (!c->qp)
		return;
	if (c->sdev->quirks.cm_qp)
		rdma_destroy_qp(c->id);
	else
		ib_destroy_qp(c->qp);
	c->qp = NULL;
}

/*
 * The CM exchange reached the point where rdma_cm would bring the QP up:
 * the passive side before its REP, the active side on the REP. 0 at once
 * when rdma_cm does it.
 */
int sdp_conn_rts(struct sdp_conn *c)
{
	int err;

	if (c->sdev->quirks.cm_qp)
		return 0;
	/* INIT again: now with what the CM exchange set (rdma_cm does too) */
	err = sdp_qp_to(c, IB_QPS_INIT);
	if (!err)
		err = sdp_qp_to(c, IB_QPS_RTR);
	if (!err)
		err = sdp_qp_to(c, IB_QPS_RTS);
	return err;
}

/* Our QP to error (rdma_disconnect() does so only for rdma_cm's). */
void sdp_conn_qp_err(struct sdp_conn *c)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };

	if (c->v.live && !c->sdev->quirks.cm_qp &&
	    !ib_modify_qp(c->qp, &attr, IB_QP_STATE) && c->srq)
		sdp_post_end(c);
}

/*
 * A waiter that busy polls the socket (sock_poll(), epoll, recv) reaps its
 * connection's CQ through this ID, as it would a NIC queue's over TCP.
 */
static void sdp_conn_napi_id(struct sdp_conn *c, u32 id)
{
#ifdef CONFIG_NET_RX_BUSY_POLL
	WRITE_ONCE(c->sk->sk_napi_id, id);
#endif
}

/* Every resource sdp_conn_setup() took, given back; the connection is idle. */
static void sdp_conn_res_free(struct sdp_conn *c)
{
	sdp_zc_release(c);
	sdp_conn_napi_id(c, 0);
	/* (an SRQ's QP and CQ room are the SRQ's now) */
	if (c->srq)
		sdp_srq_retire(c);
	sdp_qp_destroy(c);
	if (c->cq)
		sdp_cq_put(c->sdev, c->cq, c->cq_room, -1);
	sdp_bufs_free(c);
	/* (after the QP and the zero-copy buffers' MRs) */
	if (c->pd && !c->srq)
		ib_dealloc_pd(c->pd);
	if (!list_empty(&c->dev_item))
		sdp_dev_del_conn(c);
	if (c->sdev)
		sdp_dev_put(c->sdev);
	memset(&c->res, 0, sizeof(c->res));
	INIT_LIST_HEAD(&c->dev_item);
}

/*
 * Create the QP, CQ and receive ring on the id's device and post the first
 * receive buffers; the send side waits for the peer's receive size
 * (sdp_conn_start). Receive buffers are net.sdp.buf_size bytes, or the
 * @rcv_max a peer's Hello wishes for if smaller: never larger.
 */
int sdp_conn_setup(struct sdp_conn *c, u32 rcv_max)
{
	struct sock *sk = c->sk;
	struct sdp_net *sn = sdp_net(sock_net(sk));
	struct rdma_cm_id *id = c->id;
	struct ib_qp_init_attr attr = {};
	u32 zc_wrs;
	int err;

	if (sdp_fault(SDP_FAULT_CONN))
		return -ENOMEM;
	/* a new stream: positions start again, no urgent data */
	c->rcv_nxt = 0;
	WRITE_ONCE(c->v.urg_data, 0);
	c->srtt_us = 0;
	c->sdev = sdp_dev_get(id->device);
	if (!c->sdev)
		return -ENODEV;
	c->rcv_size = clamp_t(u32, min_t(u32, rcv_max, READ_ONCE(sn->buf_size)),
			      SDP_MIN_BUF_SIZE, SDP_MAX_BUF_SIZE);
	c->rx_count = sdp_ring_size(sk, sk->sk_rcvbuf, SOCK_RCVBUF_LOCK,
				    READ_ONCE(sn->rx_bufs), c->rcv_size);
	/*
	 * Without an SRQ to be had, a ring of our own. SRQs' buffers are
	 * powers of two: ours may be smaller than the peer wished, not larger.
	 */
	if (READ_ONCE(sn->shared_rq))
		c->srq = sdp_srq_get(c->sdev, rounddown_pow_of_two(c->rcv_size));
	if (c->srq) {
		c->rcv_size = c->srq->size;
		c->pd = c->srq->pd;
		SDP_INC_STATS(sock_net(sk), SDP_MIB_SRQ_CONNS);
		err = sdp_srq_conn_init(c);
		if (err)
			goto err;
	} else {
		c->pd = sdp_fault(SDP_FAULT_PD) ? ERR_PTR(-ENOMEM) :
			ib_alloc_pd(id->device, 0);
		if (IS_ERR(c->pd)) {
			err = PTR_ERR(c->pd);
			c->pd = NULL;
			goto err;
		}
	}
	c->lkey = c->pd->local_dma_lkey;
	/* the SRQ's domain is every such connection's: no region of ours in it for a peer */
	c->zc_offered = c->sdev->quirks.zcopy && !c->srq;
	c->zr_offered = c->sdev->quirks.zcopy && !c->srq;
	/*
	 * The peer's message size is not known yet: count in ours. A power of
	 * two, as the ring's u32 positions index it modulo its size, also
	 * across their wrap.
	 */
	c->tx_count = rounddown_pow_of_two(sdp_ring_size(sk, sk->sk_sndbuf, SOCK_SNDBUF_LOCK,
							 READ_ONCE(sn->tx_bufs), c->rcv_size));

	/*
	 * Room for all the QP may have outstanding (below); zero-copy's only
	 * if offered (the peer's answer only narrows it): a connection on the
	 * SRQ halves rxe's send queue.
	 */
	zc_wrs = c->zc_offered || c->zr_offered ? sdp_zc_wrs(c->sdev) : 0;
	c->cq_room = (c->srq ? 1 : c->rx_count) + c->tx_count + SDP_CTRL_SLOTS + zc_wrs + 2;
	c->cq = sdp_cq_get(c->sdev, c->cq_room, c->srq ? c->srq->class : -1);
	if (IS_ERR(c->cq)) {
		err = PTR_ERR(c->cq);
		c->cq = NULL;
		goto err;
	}
	sdp_conn_napi_id(c, sdp_cq_napi_id(c->cq));
	attr.event_handler = c->srq ? sdp_srq_qp_event : sdp_qp_event;
	attr.qp_context = c->srq ? (void *)c->srq_qp : c;
	attr.send_cq = c->cq;
	attr.recv_cq = c->cq;
	/* One more of each for ib_drain_qp()'s marker. */
	attr.cap.max_send_wr = c->tx_count + SDP_CTRL_SLOTS + zc_wrs + 1;
	if (c->srq) {
		/* and one for the end marker; receives are the SRQ's */
		attr.srq = c->srq->srq;
		attr.cap.max_send_wr++;
	} else {
		attr.cap.max_recv_wr = c->rx_count + 1;
		attr.cap.max_recv_sge = 1;
	}
	attr.cap.max_send_sge = 1;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.qp_type = IB_QPT_RC;
	err = sdp_qp_create(c, &attr);
	if (err)
		goto err;
	c->max_inline = attr.cap.max_inline_data;

	c->rx = sdp_fault(SDP_FAULT_RINGS) ? NULL :
		kcalloc(c->rx_count, sizeof(*c->rx), GFP_KERNEL);
	if (!c->rx) {
		err = -ENOMEM;
		goto err;
	}
	sdp_rx_ring_init(c);
	sdp_zc_init(c);
	err = sdp_buf_map(c, &c->ctrl_buf, &c->ctrl_dma,
			  SDP_CTRL_SLOTS * SDP_CTRL_MSG_MAX, SDP_MEM_KERNEL, GFP_KERNEL);
	if (err)
		goto err;
	sdp_ctrl_ring_init(c);
	err = sdp_rx_grow(c, SDP_RX_START_BUFS, GFP_KERNEL);
	if (err)
		goto err;
	err = sdp_dev_add_conn(c->sdev, c);
	if (err)
		goto err;
	strscpy(c->ibdev, dev_name(&id->device->dev), sizeof(c->ibdev));
	WRITE_ONCE(c->v.live, true);
	return 0;

err:
	/*
	 * Receives already posted complete (flushed) on the shared CQ when the
	 * QP goes, some providers' (siw) only as it is destroyed: taken in
	 * first, while the ring they name is still there.
	 */
	if (c->qp && c->rx_posted_nr)
		sdp_conn_drain(c);
	sdp_conn_res_free(c);
	return err;
}

/*
 * The peer's Hello or HelloAck told us its receive size and buffer count:
 * set up the send ring and start the credit accounting.
 */
int sdp_conn_start(struct sdp_conn *c, u32 snd_size, u16 peer_bufs)
{
	c->snd_size = snd_size;
	/*
	 * The send ring holds the bytes it was sized for (sdp_conn_setup(),
	 * in our buffer size), not more in the peer's larger one: at least
	 * two messages, one filling while one is in flight.
	 */
	c->tx_count = rounddown_pow_of_two(clamp_t(u32, c->tx_count * c->rcv_size / snd_size,
						   2, c->tx_count));
	c->seq.hist = kcalloc(SDP_HIST_SIZE, sizeof(*c->seq.hist), GFP_KERNEL);
	c->tx = sdp_fault(SDP_FAULT_RINGS) ? NULL :
		kcalloc(c->tx_count, sizeof(*c->tx), GFP_KERNEL);
	if (!c->seq.hist || !c->tx)
		return -ENOMEM;
	sdp_seq_start(&c->seq, peer_bufs);
	sdp_tx_ring_init(c);
	c->started = true;
	sdp_expand_sndbuf(c);
	sdp_update_counts(c);
	return 0;
}

/* The bufs our Hello or HelloAck advertises. */
u16 sdp_conn_hello_bufs(struct sdp_conn *c)
{
	return sdp_seq_hello(&c->seq, c->rx_posted_nr);
}

/*
 * Release the QP, CQ and buffers. Called in process context with the socket
 * locked: completions that the drain flushes are left to the owner
 * (SDP_C_DEFERRED), and find the connection no longer live.
 */
void sdp_conn_release(struct sdp_conn *c)
{
	if (!c->v.live)
		return;
	WRITE_ONCE(c->v.live, false);
	sdp_conn_drain(c);
	sdp_conn_res_free(c);
	sdp_update_counts(c);
}

/*
 * Before the socket connects or listens again: the last connection's
 * state is forgotten (its resources and id are gone already). Work left to
 * the owner stays: the owner clears it.
 */
void sdp_conn_reset(struct sdp_conn *c)
{
	unsigned long flags = READ_ONCE(c->flags);

	/*
	 * The others are set with set_bit() from softirq and timers
	 * meanwhile. A mark stays: the connection may still be on the list of
	 * the CQ that reaped its last completions (sdp_cq_run() clears it).
	 */
	while (!try_cmpxchg(&c->flags, &flags,
			    flags & (BIT(SDP_C_DEFERRED) | BIT(SDP_C_CQ_MARKED))))
		;
	c->passive = false;
	memset(&c->saddr, 0, sizeof(c->saddr));
	memset(&c->daddr, 0, sizeof(c->daddr));
}

/* The connection is over (the socket is closed): nothing more to send or time. */
void sdp_conn_stop(struct sdp_conn *c)
{
	clear_bit(SDP_C_SEND_DISCONN, &c->flags);
	sdp_tx_timers_stop(c);
	sdp_zc_timer_stop(c);
	sdp_update_counts(c);
}

/* An Abort or DisConn posted and not yet sent (or completed). */
bool sdp_conn_ctrl_busy(const struct sdp_conn *c)
{
	return c->v.live && c->ctrl_head != c->ctrl_tail &&
	       !test_bit(SDP_C_CM_GONE, &c->flags);
}

/* Bytes received and not read yet. */
u32 sdp_conn_unread(const struct sdp_conn *c)
{
	return c->v.live ? c->rx_ready_bytes : 0;
}

/* The peer's Hello or HelloAck is in: data may flow. */
bool sdp_conn_started(const struct sdp_conn *c)
{
	return c->v.live && c->started;
}

/* Payload bytes per message we send (TCP_MAXSEG); 0 before it is known. */
u32 sdp_conn_mss(const struct sdp_conn *c)
{
	return sdp_conn_started(c) ? c->snd_size - sizeof(struct sdp_bsdh) : 0;
}

/*
 * A child's peer had connected: it sent a message, or its disconnect came
 * (only a peer whose connect completed disconnects).
 */
bool sdp_conn_peer_up(const struct sdp_conn *c)
{
	return READ_ONCE(c->v.stats.rx_msgs) || test_bit(SDP_C_PEER_UP, &c->flags);
}

/* jiffies of the last message in (keepalive's idle time). */
unsigned long sdp_conn_rx_stamp(const struct sdp_conn *c)
{
	return c->rx_stamp;
}

/* The connection's addresses as rdma_cm saw them (no family before it knows). */
const struct sockaddr_storage *sdp_conn_addr(const struct sdp_conn *c, bool peer)
{
	return peer ? &c->daddr : &c->saddr;
}

/* SDP_INFO's fields that describe the connection. */
void sdp_conn_info(const struct sdp_conn *c, struct sdp_info *info)
{
	info->tx_bytes = c->v.stats.tx_bytes;
	info->rx_bytes = c->v.stats.rx_bytes;
	info->tx_msgs = c->v.stats.tx_msgs;
	info->rx_msgs = c->v.stats.rx_msgs;
	info->tx_credit_updates = c->v.stats.tx_credit_updates;
	info->zc_reads = c->v.stats.zc_reads;
	info->zc_tx_bytes = c->v.stats.zc_tx_bytes;
	info->zc_rx_bytes = c->v.stats.zc_rx_bytes;
	info->zw_tx_bytes = c->v.stats.zw_tx_bytes;
	info->zw_rx_bytes = c->v.stats.zw_rx_bytes;
	info->zw_writes = c->v.stats.zw_writes;
	strscpy(info->ibdev, c->ibdev, sizeof(info->ibdev));
	if (!c->v.live)
		return;
	info->rcv_size = c->rcv_size;
	info->snd_size = c->snd_size;
	info->rx_bufs = c->rx_count;
	info->tx_bufs = c->tx_count;
	info->rx_bufs_held = c->rx_alloc;
	/* every filled slot, until reaped, and the kept ones */
	info->tx_bufs_held = c->tx_head - c->tx_tail + c->tx_kept;
	info->tx_credits = c->started ? max(sdp_tx_credits(c), 0) : 0;
	info->qp_num = c->qp ? c->qp->qp_num : 0;
	info->path_mtu = c->path_mtu;
	info->port_num = c->port_num;
	info->dest_qp_num = c->dest_qpn;
	info->rx_credits = c->rx_posted_nr;
}

/* TCP_INFO's fields that map onto the connection's rings, credits, counts. */
void sdp_conn_tcp_info(const struct sdp_conn *c, struct tcp_info *ti)
{
	const struct sdp_stats_sock *st = &c->v.stats;

	if (sdp_conn_started(c)) {
		ti->tcpi_snd_mss = c->snd_size - sizeof(struct sdp_bsdh);
		ti->tcpi_rcv_mss = c->rcv_size - sizeof(struct sdp_bsdh);
		ti->tcpi_advmss = ti->tcpi_rcv_mss;
		ti->tcpi_snd_cwnd = max(sdp_tx_credits(c), 0);
		ti->tcpi_unacked = c->tx_post - c->tx_tail;
	}
	ti->tcpi_bytes_acked = st->tx_bytes;
	ti->tcpi_bytes_sent = st->tx_bytes;
	ti->tcpi_bytes_received = st->rx_bytes;
	ti->tcpi_segs_out = st->tx_msgs;
	ti->tcpi_segs_in = st->rx_msgs;
	ti->tcpi_data_segs_out = st->tx_msgs - st->tx_credit_updates;
	ti->tcpi_rtt = c->srtt_us;
	ti->tcpi_rttvar = c->rttvar_us;
	ti->tcpi_min_rtt = c->min_rtt_us;
	ti->tcpi_snd_wnd = ti->tcpi_snd_cwnd * ti->tcpi_snd_mss;
}
