// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol: a connection's RDMA resources and the engine that
 * turns their completions into socket state.
 *
 * Every connection has one RC QP and one CQ polled in softirq. A receive
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
#include <linux/mm.h>
#include <linux/percpu_counter.h>
#include <linux/slab.h>

#include "sdp_rdma.h"

static_assert(SDP_IBDEV_NAME_MAX == IB_DEVICE_NAME_MAX);

static u32 sdp_ring_size(struct sock *sk, int buf, int lock, unsigned int def,
			 u32 size)
{
	u32 n = def;

	if (sk->sk_userlocks & lock)
		n = buf / size;
	return clamp_t(u32, n, SDP_MIN_BUFS, SDP_MAX_BUFS);
}

static void sdp_qp_event(struct ib_event *event, void *context)
{
	struct sdp_conn *c = context;

	/*
	 * Data before the RTU: the connection is up, tell the CM (which then
	 * reports it established). Fatal errors also fail the work requests.
	 */
	if (event->event == IB_EVENT_COMM_EST)
		rdma_notify(c->id, IB_EVENT_COMM_EST);
	else
		pr_debug("QP event %s\n", ib_event_msg(event->event));
}

/*
 * Ring buffers are socket memory, charged as TCP charges its queues: to all
 * SDP sockets' total (net.sdp.mem, in pages, as /proc/net/protocols shows
 * it) and to the socket's memory cgroup; receive buffers also to
 * sk_rmem_alloc, and send buffers filled and not yet completed to
 * sk_wmem_queued (the two kept for reuse are not in flight, as TCP's queue
 * is empty once all is acknowledged). The peer's use makes the receive ring
 * grow; past the hard limit, or the cgroup's, it does not, and a new
 * connection cannot start. A sender waits, as TCP's, while its bytes in
 * flight reach SO_SNDBUF, or for memory. The control ring, a few bytes per
 * connection like the socket itself, is kernel memory of the cgroup.
 */
atomic_long_t sdp_memory_allocated;
DEFINE_PER_CPU(int, sdp_memory_per_cpu_fw_alloc);
unsigned long sdp_memory_pressure;
struct percpu_counter sdp_sockets_allocated;
long sdp_sysctl_mem[3];
/* [0]: what a socket may hold under memory pressure (the core reads no more) */
int sdp_sysctl_rmem[3] = { SDP_RX_START_BUFS * SDP_BUF_SIZE };
int sdp_sysctl_wmem[3] = { SDP_TX_KEEP_BUFS * SDP_BUF_SIZE };

/*
 * Past the pressure limit a socket's charge is refused beyond its share of
 * the high limit (its sockets_allocated fraction), as TCP's.
 */
void sdp_enter_memory_pressure(struct sock *sk)
{
	WRITE_ONCE(sdp_memory_pressure, 1);
}

void sdp_leave_memory_pressure(struct sock *sk)
{
	WRITE_ONCE(sdp_memory_pressure, 0);
}

/* TCP's defaults (tcp_init_mem()): a sixteenth of memory before the limits. */
int sdp_mem_init(void)
{
	unsigned long limit = max(nr_free_buffer_pages() / 16, 128UL);

	sdp_sysctl_mem[0] = limit / 4 * 3;
	sdp_sysctl_mem[1] = limit;
	sdp_sysctl_mem[2] = sdp_sysctl_mem[0] * 2;
	return percpu_counter_init(&sdp_sockets_allocated, 0, GFP_KERNEL);
}

void sdp_mem_exit(void)
{
	percpu_counter_destroy(&sdp_sockets_allocated);
}

/* How a buffer is charged: to the socket (receive or send), or the cgroup. */
enum sdp_mem { SDP_MEM_RX, SDP_MEM_TX, SDP_MEM_KERNEL };

static enum dma_data_direction sdp_mem_dir(enum sdp_mem mem)
{
	return mem == SDP_MEM_RX ? DMA_FROM_DEVICE : DMA_TO_DEVICE;
}

static bool sdp_mem_charge(struct sock *sk, u32 size, enum sdp_mem mem)
{
	if (mem == SDP_MEM_KERNEL)
		return true;
	if ((int)size > sk->sk_forward_alloc &&
	    !__sk_mem_schedule(sk, size, mem == SDP_MEM_RX ? SK_MEM_RECV : SK_MEM_SEND))
		return false;
	sk_mem_charge(sk, size);
	if (mem == SDP_MEM_RX)
		atomic_add(size, &sk->sk_rmem_alloc);
	return true;
}

static void sdp_mem_uncharge(struct sock *sk, u32 size, enum sdp_mem mem)
{
	if (mem == SDP_MEM_KERNEL)
		return;
	if (mem == SDP_MEM_RX)
		atomic_sub(size, &sk->sk_rmem_alloc);
	sk_mem_uncharge(sk, size);
}

static int sdp_map(struct sdp_conn *c, void **buf, u64 *dma, u32 size,
		   enum sdp_mem mem, gfp_t gfp)
{
	struct ib_device *dev = c->sdev->ibdev;
	struct sock *sk = &c->ssk->sk;

	static const enum sdp_fault site[] = {
		[SDP_MEM_RX] = SDP_FAULT_RX_BUF, [SDP_MEM_TX] = SDP_FAULT_TX_BUF,
		[SDP_MEM_KERNEL] = SDP_FAULT_KMEM_BUF,
	};

	if (sdp_fault(site[mem]) || !sdp_mem_charge(sk, size, mem))
		return -ENOMEM;
	*buf = kmalloc(size, mem == SDP_MEM_KERNEL ? gfp | __GFP_ACCOUNT : gfp);
	if (*buf) {
		*dma = ib_dma_map_single(dev, *buf, size, sdp_mem_dir(mem));
		if (!ib_dma_mapping_error(dev, *dma))
			return 0;
		kfree(*buf);
		*buf = NULL;
	}
	sdp_mem_uncharge(sk, size, mem);
	return -ENOMEM;
}

static void sdp_unmap(struct sdp_conn *c, void *buf, u64 dma, u32 size,
		      enum sdp_mem mem)
{
	if (!buf)
		return;
	ib_dma_unmap_single(c->sdev->ibdev, dma, size, sdp_mem_dir(mem));
	kfree(buf);
	sdp_mem_uncharge(&c->ssk->sk, size, mem);
}

static void sdp_rings_free(struct sdp_conn *c)
{
	u32 i;

	for (i = 0; c->rx && i < c->rx_count; i++)
		sdp_unmap(c, c->rx[i].buf, c->rx[i].dma, c->rcv_size, SDP_MEM_RX);
	/* what was in flight is not queued any more */
	sk_wmem_queued_add(&c->ssk->sk, -(int)((c->tx_head - c->tx_tail) * c->snd_size));
	for (i = 0; c->tx && i < c->tx_count; i++)
		sdp_unmap(c, c->tx[i].buf, c->tx[i].dma, c->snd_size,
			  c->tx[i].kmem ? SDP_MEM_KERNEL : SDP_MEM_TX);
	for (i = 0; i < c->tx_kept; i++)
		sdp_unmap(c, c->tx_keep[i].buf, c->tx_keep[i].dma, c->snd_size,
			  SDP_MEM_TX);
	sdp_unmap(c, c->ctrl_buf, c->ctrl_dma, SDP_CTRL_SLOTS * SDP_CTRL_MSG_MAX,
		  SDP_MEM_KERNEL);
	kfree(c->rx);
	kfree(c->tx);
	kfree(c->seq.hist);
}

/*
 * The IB CM gives a QP the retry counts the peer's REQ or REP asks for, and
 * 7 retries forever: a peer that never posts receives, or stops answering,
 * would hold our sends for good. So on IB and RoCE the QP is ours, not
 * rdma_cm's: we move it through INIT, RTR and RTS with rdma_cm's attributes
 * but our retry counts, no RDMA Read or Write by the peer, and none by us.
 * iWARP has no such counts, and its CM must hold the QP: rdma_cm's there.
 */
static int sdp_qp_to(struct sdp_conn *c, enum ib_qp_state state)
{
	struct ib_qp_attr attr = { .qp_state = state };
	int mask, err;

	err = rdma_init_qp_attr(c->id, &attr, &mask);
	/* -EINVAL: the CM has left the states this needs; a REJ came */
	if (err)
		return err == -EINVAL ? -ECONNREFUSED : err;
	attr.qp_access_flags = 0;
	attr.max_dest_rd_atomic = 0;
	attr.max_rd_atomic = 0;
	attr.retry_cnt = SDP_RETRY;
	attr.rnr_retry = SDP_RNR_RETRY;
	return ib_modify_qp(c->qp, &attr, mask);
}

static int sdp_qp_create(struct sdp_conn *c, struct ib_qp_init_attr *attr)
{
	struct rdma_cm_id *id = c->id;
	struct ib_qp *qp;
	int err;

	if (sdp_fault(SDP_FAULT_QP))
		return -ENOMEM;
	if (rdma_protocol_iwarp(id->device, id->port_num)) {
		err = rdma_create_qp(id, c->sdev->pd, attr);
		if (!err) {
			c->qp = id->qp;
			c->cm_qp = true;
		}
		return err;
	}
	qp = ib_create_qp(c->sdev->pd, attr);
	if (IS_ERR(qp))
		return PTR_ERR(qp);
	c->qp = qp;
	return sdp_qp_to(c, IB_QPS_INIT);
}

static void sdp_qp_destroy(struct sdp_conn *c)
{
	if (!c->qp)
		return;
	if (c->cm_qp)
		rdma_destroy_qp(c->id);
	else
		ib_destroy_qp(c->qp);
	c->qp = NULL;
}

/*
 * The CM exchange reached the point where rdma_cm would bring the QP up:
 * the passive side before its REP, the active side on the REP. 0 at once
 * when rdma_cm does it (iWARP).
 */
int sdp_conn_rts(struct sdp_conn *c)
{
	int err;

	if (c->cm_qp)
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

	if (c && !c->cm_qp)
		ib_modify_qp(c->qp, &attr, IB_QP_STATE);
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
	while (c->rx_alloc < n) {
		slot = &c->rx[c->rx_alloc];
		err = sdp_map(c, &slot->buf, &slot->dma, c->rcv_size,
			      SDP_MEM_RX, gfp);
		if (err)
			return err;
		c->rx_alloc++;
		err = sdp_post_recv(c, slot);
		if (err)
			return err;
	}
	return 0;
}

static int sdp_rx_ring_alloc(struct sdp_conn *c)
{
	u32 i;

	c->rx = sdp_fault(SDP_FAULT_RINGS) ? NULL :
		kcalloc(c->rx_count, sizeof(*c->rx), GFP_KERNEL);
	if (!c->rx)
		return -ENOMEM;
	INIT_LIST_HEAD(&c->rx_posted);
	INIT_LIST_HEAD(&c->rx_ready);
	for (i = 0; i < c->rx_count; i++) {
		c->rx[i].cqe.done = sdp_rx_done;
		INIT_LIST_HEAD(&c->rx[i].node);
	}
	return 0;
}

/*
 * A buffer for a send slot about to be filled (process context), with the
 * socket's sk_allocation: a block driver's GFP_NOIO must not recurse into
 * its own I/O. With @force, a buffer the socket's limits refuse is taken
 * as kernel memory of the cgroup: a socket with nothing in flight must not
 * wait for memory only others can free, as TCP forces its first skb
 * (sk_forced_mem_schedule(), whose cgroup charge is not exported).
 */
int sdp_tx_buf_get(struct sdp_conn *c, struct sdp_tx_slot *s, gfp_t gfp, bool force)
{
	int err;

	s->kmem = false;
	if (c->tx_kept) {
		c->tx_kept--;
		s->buf = c->tx_keep[c->tx_kept].buf;
		s->dma = c->tx_keep[c->tx_kept].dma;
		return 0;
	}
	err = sdp_map(c, &s->buf, &s->dma, c->snd_size, SDP_MEM_TX, gfp);
	if (err && force) {
		err = sdp_map(c, &s->buf, &s->dma, c->snd_size, SDP_MEM_KERNEL, gfp);
		s->kmem = !err;
	}
	return err;
}

/* A completed send slot's buffer: kept for the next message, or freed. */
void sdp_tx_buf_put(struct sdp_conn *c, struct sdp_tx_slot *s)
{
	if (s->kmem) {
		sdp_unmap(c, s->buf, s->dma, c->snd_size, SDP_MEM_KERNEL);
	} else if (c->tx_kept < SDP_TX_KEEP_BUFS) {
		c->tx_keep[c->tx_kept].buf = s->buf;
		c->tx_keep[c->tx_kept].dma = s->dma;
		c->tx_kept++;
	} else {
		sdp_unmap(c, s->buf, s->dma, c->snd_size, SDP_MEM_TX);
	}
	s->buf = NULL;
}

static int sdp_ctrl_ring_alloc(struct sdp_conn *c)
{
	u32 i;
	int err;

	err = sdp_map(c, &c->ctrl_buf, &c->ctrl_dma,
		      SDP_CTRL_SLOTS * SDP_CTRL_MSG_MAX, SDP_MEM_KERNEL, GFP_KERNEL);
	if (err)
		return err;
	for (i = 0; i < SDP_CTRL_SLOTS; i++) {
		c->ctrl[i].cqe.done = sdp_tx_done;
		c->ctrl[i].buf = c->ctrl_buf + i * SDP_CTRL_MSG_MAX;
		c->ctrl[i].dma = c->ctrl_dma + i * SDP_CTRL_MSG_MAX;
		c->ctrl[i].ctrl = true;
	}
	return 0;
}

/*
 * Create the QP, CQ and receive ring on @id's device and post the first
 * receive buffers; the send side waits for the peer's receive size
 * (sdp_conn_start). Receive buffers are net.sdp.buf_size bytes, or the
 * @rcv_max a peer's Hello wishes for if smaller: never larger.
 */
int sdp_conn_create(struct sdp_sock *ssk, struct rdma_cm_id *id, u32 rcv_max)
{
	struct sock *sk = &ssk->sk;
	struct sdp_net *sn = sdp_net(sock_net(sk));
	struct ib_qp_init_attr attr = {};
	struct sdp_conn *c;
	int err;

	c = sdp_fault(SDP_FAULT_CONN) ? NULL : kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return -ENOMEM;
	c->ssk = ssk;
	c->id = id;
	/* a new stream: positions start again, no urgent data */
	ssk->rcv_nxt = 0;
	WRITE_ONCE(ssk->urg_data, 0);
	ssk->srtt_us = 0;
	INIT_LIST_HEAD(&c->dev_item);
	c->sdev = sdp_dev_get(id->device);
	if (!c->sdev) {
		kfree(c);
		return -ENODEV;
	}
	c->lkey = c->sdev->pd->local_dma_lkey;
	c->rcv_size = clamp_t(u32, min_t(u32, rcv_max, READ_ONCE(sn->buf_size)),
			      SDP_MIN_BUF_SIZE, SDP_MAX_BUF_SIZE);
	c->rx_count = sdp_ring_size(sk, sk->sk_rcvbuf, SOCK_RCVBUF_LOCK,
				    READ_ONCE(sn->rx_bufs), c->rcv_size);
	/*
	 * The peer's message size is not known yet: count in ours. A power of
	 * two, as the ring's u32 positions index it modulo its size, also
	 * across their wrap.
	 */
	c->tx_count = rounddown_pow_of_two(sdp_ring_size(sk, sk->sk_sndbuf, SOCK_SNDBUF_LOCK,
							 READ_ONCE(sn->tx_bufs), c->rcv_size));

	c->cq = sdp_fault(SDP_FAULT_CQ) ? ERR_PTR(-ENOMEM) :
		ib_alloc_cq_any(id->device, ssk,
				c->rx_count + c->tx_count + SDP_CTRL_SLOTS + 2,
				IB_POLL_SOFTIRQ);
	if (IS_ERR(c->cq)) {
		err = PTR_ERR(c->cq);
		c->cq = NULL;
		goto err;
	}
	attr.event_handler = sdp_qp_event;
	attr.qp_context = c;
	attr.send_cq = c->cq;
	attr.recv_cq = c->cq;
	/* One more of each for ib_drain_qp()'s marker. */
	attr.cap.max_send_wr = c->tx_count + SDP_CTRL_SLOTS + 1;
	attr.cap.max_recv_wr = c->rx_count + 1;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.qp_type = IB_QPT_RC;
	err = sdp_qp_create(c, &attr);
	if (err)
		goto err;
	c->max_inline = attr.cap.max_inline_data;

	err = sdp_rx_ring_alloc(c);
	if (!err)
		err = sdp_ctrl_ring_alloc(c);
	if (!err)
		err = sdp_rx_grow(c, SDP_RX_START_BUFS, GFP_KERNEL);
	if (err)
		goto err;
	err = sdp_dev_add_conn(c->sdev, c);
	if (err)
		goto err;
	strscpy(ssk->ibdev, dev_name(&id->device->dev), sizeof(ssk->ibdev));
	ssk->conn = c;
	return 0;

err:
	sdp_qp_destroy(c);
	if (c->cq)
		ib_free_cq(c->cq);
	sdp_rings_free(c);
	sdp_dev_put(c->sdev);
	kfree(c);
	return err;
}

/*
 * The peer's Hello or HelloAck told us its receive size and buffer count:
 * set up the send ring and start the credit accounting.
 */
int sdp_conn_start(struct sdp_conn *c, u32 snd_size, u16 peer_bufs)
{
	u32 i;

	c->snd_size = snd_size;
	/*
	 * The send ring holds the bytes it was sized for (sdp_conn_create(),
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
	for (i = 0; i < c->tx_count; i++)
		c->tx[i].cqe.done = sdp_tx_done;
	c->started = true;
	sdp_conn_expand_sndbuf(c);
	sdp_update_counts(c->ssk);
	return 0;
}

/*
 * SO_SNDBUF not set: the send ring is the send buffer, as TCP's autotuning
 * sizes its sndbuf to what its window needs, within tcp_wmem[2]. Memory
 * pressure takes it back (sk_stream_moderate_sndbuf()); it returns after.
 */
void sdp_conn_expand_sndbuf(struct sdp_conn *c)
{
	struct sock *sk = &c->ssk->sk;
	u32 ring = min_t(u64, (u64)c->tx_count * c->snd_size,
			 READ_ONCE(sock_net(sk)->ipv4.sysctl_tcp_wmem[2]));

	if (!(sk->sk_userlocks & SOCK_SNDBUF_LOCK) && !sk_under_memory_pressure(sk) &&
	    sk->sk_sndbuf < ring)
		WRITE_ONCE(sk->sk_sndbuf, ring);
}

/* The bufs our Hello or HelloAck advertises. */
u16 sdp_conn_hello_bufs(struct sdp_conn *c)
{
	return sdp_seq_hello(&c->seq, c->rx_posted_nr);
}

/*
 * Release the QP, CQ and buffers. Called in process context with the socket
 * locked; completions arriving meanwhile find ssk->conn gone.
 */
void sdp_conn_free(struct sdp_sock *ssk)
{
	struct sdp_conn *c = ssk->conn;

	if (!c)
		return;
	ssk->conn = NULL;
	ib_drain_qp(c->qp);
	sdp_qp_destroy(c);
	ib_free_cq(c->cq);
	sdp_rings_free(c);
	sdp_dev_del_conn(c);
	sdp_dev_put(c->sdev);
	kfree(c);
	sdp_update_counts(ssk);
}

/* An Abort or DisConn posted and not yet sent (or completed). */
bool sdp_conn_ctrl_busy(const struct sdp_sock *ssk)
{
	const struct sdp_conn *c = ssk->conn;

	return c && c->ctrl_head != c->ctrl_tail &&
	       !test_bit(SDP_F_CM_GONE, &ssk->flags);
}

/* Bytes received and not read yet. */
u32 sdp_conn_unread(const struct sdp_sock *ssk)
{
	return ssk->conn ? ssk->conn->rx_ready_bytes : 0;
}

/* Payload bytes per message we send (TCP_MAXSEG); 0 before it is known. */
u32 sdp_conn_mss(const struct sdp_sock *ssk)
{
	const struct sdp_conn *c = ssk->conn;

	return c && c->started ? c->snd_size - sizeof(struct sdp_bsdh) : 0;
}

/* SDP_INFO's fields that describe the connection (zero without one). */
void sdp_conn_info(const struct sdp_sock *ssk, struct sdp_info *info)
{
	const struct sdp_conn *c = ssk->conn;

	if (!c)
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

/* TCP_INFO's fields that map onto the connection's rings and credits. */
void sdp_conn_tcp_info(const struct sdp_sock *ssk, struct tcp_info *ti)
{
	const struct sdp_conn *c = ssk->conn;

	if (!c || !c->started)
		return;
	ti->tcpi_snd_mss = c->snd_size - sizeof(struct sdp_bsdh);
	ti->tcpi_rcv_mss = c->rcv_size - sizeof(struct sdp_bsdh);
	ti->tcpi_advmss = ti->tcpi_rcv_mss;
	ti->tcpi_snd_cwnd = max(sdp_tx_credits(c), 0);
	ti->tcpi_unacked = c->tx_post - c->tx_tail;
}

/*
 * The engine. Runs with the socket spinlock held by whoever may touch the
 * rings: a completion or timer while no process owns the socket,
 * release_sock() (sdp_release_cb), or the owner itself (sdp_flush).
 */
void sdp_process(struct sdp_sock *ssk)
{
	struct sdp_conn *c = ssk->conn;

	if (test_and_clear_bit(SDP_F_FIN_TIMEOUT, &ssk->flags))
		sdp_up->abort(ssk, ETIMEDOUT);
	if (test_and_clear_bit(SDP_F_KEEPALIVE, &ssk->flags))
		sdp_keepalive(ssk);
	if (!c || !c->started)
		return;
	sdp_tx_reap(ssk);
	sdp_rx_reap(ssk);
	if (ssk->conn) {
		/* the push ends with sdp_tx_watch(); a fired timer re-arms it */
		sdp_tx_push(ssk, test_and_clear_bit(SDP_F_PUSH, &ssk->flags));
		if (ssk->conn && test_and_clear_bit(SDP_F_TX_TIMEOUT, &ssk->flags))
			sdp_tx_watch(ssk, true);
	}
	sdp_update_counts(ssk);
}

/* Completions and timers: run the engine now or leave it to the owner. */
void __sdp_defer_or_process(struct sdp_sock *ssk)
{
	if (!sock_owned_by_user(&ssk->sk))
		sdp_process(ssk);
	else
		set_bit(SDP_F_DEFERRED, &ssk->flags);
}

/* A timer fired: note which (@bit) for the engine and drop its reference. */
void sdp_timer_event(struct sdp_sock *ssk, int bit)
{
	set_bit(bit, &ssk->flags);
	bh_lock_sock(&ssk->sk);
	__sdp_defer_or_process(ssk);
	bh_unlock_sock(&ssk->sk);
	sock_put(&ssk->sk);
}

void sdp_release_cb(struct sock *sk)
{
	struct sdp_sock *ssk = sdp_sk(sk);

	/* what a kernel user's tcp_sock_set_*() wrote into the shadow */
	sdp_up->opts(ssk);

	if (test_and_clear_bit(SDP_F_DEFERRED, &ssk->flags))
		sdp_process(ssk);
}

/* For the socket's owner: take in what completed so far. */
void sdp_flush(struct sdp_sock *ssk)
{
	spin_lock_bh(&ssk->sk.sk_lock.slock);
	clear_bit(SDP_F_DEFERRED, &ssk->flags);
	sdp_process(ssk);
	spin_unlock_bh(&ssk->sk.sk_lock.slock);
}

/*
 * Counters that poll(), ioctl() and SDP_INFO read without the socket lock
 * live in the socket, not in the connection that teardown frees.
 */
void sdp_update_counts(struct sdp_sock *ssk)
{
	struct sdp_conn *c = ssk->conn;
	u32 avail = 0, free_slots = 0, unsent = 0, unacked = 0;
	bool mark = false, full = false;

	if (c) {
		avail = c->rx_ready_bytes;
		mark = sdp_urg_next(ssk);
		if (c->started) {
			/*
			 * The peer has no credit left for data (as we last
			 * told it): nothing more comes until a read frees and
			 * announces buffers.
			 */
			full = avail && sdp_seq_peer_credits(&c->seq) <= SDP_CTRL_CREDITS;
			/* none while SO_SNDBUF's bytes are in flight, or no memory */
			if (!c->tx_nomem && sk_stream_memory_free(&ssk->sk))
				free_slots = c->tx_count - (c->tx_head - c->tx_tail);
			unsent = c->tx_unposted_bytes;
			unacked = c->tx_queued_bytes;
		}
	}
	WRITE_ONCE(ssk->rx_avail, avail);
	WRITE_ONCE(ssk->rx_mark, mark);
	WRITE_ONCE(ssk->rx_full, full);
	WRITE_ONCE(ssk->tx_free_slots, free_slots);
	WRITE_ONCE(ssk->tx_unsent, unsent);
	WRITE_ONCE(ssk->tx_unacked, unacked);
}
