// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol: shared receive queues (net.sdp.shared_rq), one
 * per device and receive buffer size in use.
 *
 * Connections on one post no receive buffer of their own: their posted
 * slots are promises, counted in credits as before, and a message takes
 * whichever buffer the SRQ has. An idle connection then holds no receive
 * memory at all; the SRQ holds SDP_SRQ_BUFS buffers however many
 * connections there are, and a sender that finds them all taken is held
 * by RNR NAKs (sdp_conn.c sets their wait) until the poller has refilled
 * them, each as its message is taken.
 *
 * The poller hands a message to its connection (the completion's QP)
 * through a single-producer ring, land, from which the engine gives it to
 * the connection's oldest promise, in order. The ring holds what the
 * credits allow and one more: the one more lands in the spare promise, and
 * sdp_proto_check() finds it beyond the credits (BadCredits, a reset), so
 * what a flood brings after it is dropped, its buffer posted again. Every
 * promise taken is made again (reposted) before the next message lands,
 * so none arrives with no promise left. The SRQ's buffers are all its
 * completions that can be unreaped at once, so a CQ that serves its QPs
 * holds room for them once, and they reserve room for their sends alone
 * (sdp_cq.c): a CQ still cannot overflow, whatever a peer does. Buffer
 * sizes are powers of two, so a device has at most SDP_SRQ_CLASSES SRQs.
 *
 * A message the socket's limits refuse to charge (past net.sdp.mem's hard
 * limit, or the memory cgroup's) is kept all the same, loose: its promise
 * was made. Promises are many more than buffers, so past SDP_SRQ_BUFS
 * loose buffers the SRQ is not refilled: senders wait on RNR NAKs until
 * readers free theirs, and reset after their retries (SDP_RNR_RETRY) if
 * none does, as TCP past tcp_mem drops what comes. A buffer is counted
 * when its connection's engine takes the message, so the SRQ's 64 posted
 * and what a batch of completions refilled before the count come on top:
 * some three times the SRQ, whatever a peer sends on how many connections.
 *
 * An SRQ and its QPs share a protection domain (Soft-RoCE and siw check
 * a receive's local key against the QP's), so connections on it offer
 * no zero-copy: no region of theirs is ever open to a peer, and the
 * domain holds none that another connection's peer could reach.
 *
 * A QP on an SRQ flushes no receive when it goes to error, which is how a
 * connection learns its end (sdp_rx.c: sdp_qp_down()): a send posted after
 * the error flushes instead and lands as the end marker, after every
 * message the QP took.
 */
#define pr_fmt(fmt) "sdp: " fmt

#include <linux/delay.h>
#include <linux/log2.h>
#include <linux/slab.h>

#include "sdp_rdma.h"

/* How long a QP its connection let go of stays before its fence (struct sdp_srq_qp). */
#define SDP_SRQ_RETIRE		HZ
/* How often the retired QPs are looked at, for fences due and done. */
#define SDP_SRQ_REAP_EVERY	(HZ / 10)
/* The device's removal waits this long for fences; a device that flushes nothing must not hold it. */
#define SDP_SRQ_FENCE_WAIT	(5 * HZ)
/*
 * Buffers the refill could not have are tried again this soon: well
 * within the RNR NAKs' hold on a sender (sdp_conn.c), should the SRQ
 * have run empty.
 */
#define SDP_SRQ_REFILL_RETRY	(HZ / 50)

static void sdp_srq_event(struct ib_event *event, void *context)
{
	pr_warn_ratelimited("%s on the shared receive queue\n", ib_event_msg(event->event));
}

static int sdp_srq_post(struct sdp_srq_wr *w)
{
	struct ib_sge sge = {
		.addr	= w->dma,
		.length	= w->srq->size,
		.lkey	= w->srq->pd->local_dma_lkey,
	};
	struct ib_recv_wr rwr = {
		.wr_cqe		= &w->wr.cqe,
		.sg_list	= &sge,
		.num_sge	= 1,
	};

	ib_dma_sync_single_for_device(w->srq->sdev->ibdev, w->dma, w->srq->size,
				      DMA_FROM_DEVICE);
	return ib_post_srq_recv(w->srq->srq, &rwr, NULL);
}

/* @w posted with its buffer, or a new one; else it waits for the refill. */
static void sdp_srq_fill(struct sdp_srq_wr *w, gfp_t gfp)
{
	struct sdp_srq *s = w->srq;
	struct ib_device *dev = s->sdev->ibdev;

	if (!w->buf) {
		w->buf = sdp_fault(SDP_FAULT_RX_BUF) || atomic_read(&s->loose) >= SDP_SRQ_BUFS ?
			 NULL : kmalloc(s->size, gfp);
		if (w->buf) {
			w->dma = ib_dma_map_single(dev, w->buf, s->size, DMA_FROM_DEVICE);
			if (ib_dma_mapping_error(dev, w->dma)) {
				kfree(w->buf);
				w->buf = NULL;
			}
		}
	}
	if (w->buf) {
		if (!sdp_srq_post(w))
			return;
		ib_dma_unmap_single(dev, w->dma, s->size, DMA_FROM_DEVICE);
		kfree(w->buf);
		w->buf = NULL;
	}
	spin_lock_bh(&s->lock);
	s->empty[s->nempty++] = w;
	spin_unlock_bh(&s->lock);
	/* the poller's failure: the refill, which may sleep, at once */
	if (!gfpflags_allow_blocking(gfp))
		mod_delayed_work(sdp_wq, &s->refill, 0);
}

static void sdp_srq_refill(struct work_struct *work)
{
	struct sdp_srq *s = container_of(to_delayed_work(work), struct sdp_srq, refill);
	struct sdp_srq_wr *w;
	u32 n;

	spin_lock_bh(&s->lock);
	n = s->nempty;
	spin_unlock_bh(&s->lock);
	/* those that fail again go back to the list, after the n taken */
	while (n--) {
		spin_lock_bh(&s->lock);
		w = s->empty[--s->nempty];
		spin_unlock_bh(&s->lock);
		sdp_srq_fill(w, GFP_KERNEL);
	}
	if (READ_ONCE(s->nempty))
		queue_delayed_work(sdp_wq, &s->refill, SDP_SRQ_REFILL_RETRY);
}

/* The landing ring's next entry for the poller (its one producer); NULL: full. */
static struct sdp_land *sdp_land_next(struct sdp_conn *c)
{
	u32 prod = c->land_prod;

	if (prod - smp_load_acquire(&c->land_cons) > c->land_mask)
		return NULL;
	return &c->land[prod & c->land_mask];
}

/* That entry filled: the engine's to take. */
static void sdp_land_push(struct sdp_conn *c)
{
	smp_store_release(&c->land_prod, c->land_prod + 1);
}

/*
 * The poller's: hand the message to its connection, refill the SRQ. A
 * retired QP's (its connection gone) is dropped.
 */
static void sdp_srq_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct sdp_srq_wr *w = container_of(sdp_wr_of(wc), struct sdp_srq_wr, wr);
	struct sdp_srq_qp *q = wc->qp->qp_context;
	struct sdp_srq *s = w->srq;
	struct sdp_land *e;
	struct sdp_conn *c;

	spin_lock_bh(&s->lock);
	c = q->c;
	if (c) {
		/* full: beyond every credit, after what resets it; the buffer serves on */
		e = sdp_land_next(c);
		if (e) {
			e->buf = w->buf;
			e->dma = w->dma;
			e->len = wc->byte_len;
			e->status = wc->status;
			e->imm = wc->wc_flags & IB_WC_WITH_IMM;
			sdp_land_push(c);
			w->buf = NULL;
		}
		sdp_cq_mark(cq, c);
	}
	spin_unlock_bh(&s->lock);
	sdp_srq_fill(w, GFP_ATOMIC);
}

/* The end marker's flush: after every message the QP took. */
static void sdp_srq_end_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct sdp_conn *c = sdp_wr_of(wc)->conn;
	struct sdp_land *e = sdp_land_next(c);

	if (e) {
		memset(e, 0, sizeof(*e));
		e->status = wc->status == IB_WC_SUCCESS ? IB_WC_WR_FLUSH_ERR : wc->status;
		sdp_land_push(c);
	}
	sdp_cq_mark(cq, c);
}

static void sdp_srq_free(struct sdp_srq *s)
{
	struct ib_device *dev = s->sdev->ibdev;
	u32 i;

	/* (no QP is left: nothing completes, nothing else queues the refill) */
	cancel_delayed_work_sync(&s->refill);
	/* every connection gave back what it took: a count gone wrong would starve the SRQ */
	WARN_ON_ONCE(atomic_read(&s->loose));
	if (s->srq)
		ib_destroy_srq(s->srq);
	for (i = 0; i < SDP_SRQ_BUFS; i++) {
		if (!s->wrs[i].buf)
			continue;
		ib_dma_unmap_single(dev, s->wrs[i].dma, s->size, DMA_FROM_DEVICE);
		kfree(s->wrs[i].buf);
	}
	if (s->pd)
		ib_dealloc_pd(s->pd);
	kfree(s);
}

static struct sdp_srq *sdp_srq_create(struct sdp_dev *sdev, u32 size, int class)
{
	struct ib_srq_init_attr attr = {
		.event_handler	= sdp_srq_event,
		.attr		= { .max_wr = SDP_SRQ_BUFS, .max_sge = 1 },
		.srq_type	= IB_SRQT_BASIC,
	};
	struct sdp_srq *s;
	u32 i;

	if (sdp_fault(SDP_FAULT_SRQ))
		return NULL;
	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return NULL;
	s->sdev = sdev;
	s->size = size;
	s->class = class;
	INIT_LIST_HEAD(&s->retired);
	spin_lock_init(&s->lock);
	INIT_DELAYED_WORK(&s->refill, sdp_srq_refill);
	s->pd = ib_alloc_pd(sdev->ibdev, 0);
	if (IS_ERR(s->pd)) {
		s->pd = NULL;
		goto err;
	}
	s->srq = ib_create_srq(s->pd, &attr);
	if (IS_ERR(s->srq)) {
		s->srq = NULL;
		goto err;
	}
	for (i = 0; i < SDP_SRQ_BUFS; i++) {
		s->wrs[i].srq = s;
		sdp_wr_init(&s->wrs[i].wr, NULL, sdp_srq_done);
		sdp_srq_fill(&s->wrs[i], GFP_KERNEL);
		if (!s->wrs[i].buf)
			goto err;
	}
	return s;
err:
	sdp_srq_free(s);
	return NULL;
}

/*
 * The device's SRQ of @size-byte buffers (a power of two: a peer's Hello
 * can make a few SRQs, not many), made for the first connection that
 * receives into such; NULL: none to be had.
 */
struct sdp_srq *sdp_srq_get(struct sdp_dev *sdev, u32 size)
{
	int class = ilog2(size) - ilog2(SDP_MIN_BUF_SIZE);
	struct sdp_srq *s;

	if (!sdev->quirks.srq || WARN_ON_ONCE(!is_power_of_2(size) || class < 0 ||
					      class >= SDP_SRQ_CLASSES))
		return NULL;
	mutex_lock(&sdev->lock);
	list_for_each_entry(s, &sdev->srqs, node)
		if (s->size == size)
			goto found;
	s = sdp_srq_create(sdev, size, class);
	if (!s)
		goto out;
	list_add(&s->node, &sdev->srqs);
found:
	s->users++;
out:
	mutex_unlock(&sdev->lock);
	return s;
}

/* Its last connection's QP is gone: no completion of it is to come. */
static void sdp_srq_put(struct sdp_srq *s)
{
	struct sdp_dev *sdev = s->sdev;

	mutex_lock(&sdev->lock);
	if (--s->users)
		s = NULL;
	else
		list_del(&s->node);
	mutex_unlock(&sdev->lock);
	if (s)
		sdp_srq_free(s);
}

/*
 * The connection's QP context on the SRQ, and its ring of messages taken:
 * one per promise and its spare, and a marker.
 */
int sdp_srq_conn_init(struct sdp_conn *c)
{
	u32 n = roundup_pow_of_two(c->rx_count + 2);

	c->srq_qp = kzalloc(sizeof(*c->srq_qp), GFP_KERNEL);
	c->land = kcalloc(n, sizeof(*c->land), GFP_KERNEL);
	if (!c->srq_qp || !c->land)
		return -ENOMEM;
	c->srq_qp->c = c;
	c->srq_qp->srq = c->srq;
	c->land_mask = n - 1;
	c->land_prod = 0;
	c->land_cons = 0;
	sdp_wr_init(&c->end_wr, c, sdp_srq_end_done);
	return 0;
}

/*
 * Messages never taken (the QP no longer hands any), and the ring; the
 * loose buffers among those taken are freed with the rings.
 */
static void sdp_srq_conn_exit(struct sdp_conn *c)
{
	struct ib_device *dev = c->sdev->ibdev;
	struct sdp_land *e;
	u32 i;

	for (; c->land && c->land_cons != c->land_prod; c->land_cons++) {
		e = &c->land[c->land_cons & c->land_mask];
		if (!e->buf)
			continue;
		ib_dma_unmap_single(dev, e->dma, c->rcv_size, DMA_FROM_DEVICE);
		kfree(e->buf);
	}
	for (i = 0; c->rx && i < c->rx_count; i++)
		if (c->rx[i].buf && c->rx[i].kmem)
			atomic_dec(&c->srq->loose);
	kfree(c->land);
	c->land = NULL;
}

/* A retired QP's marker, polled after every completion the QP made. */
static void sdp_srq_fence_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct sdp_srq_qp *q = container_of(sdp_wr_of(wc), struct sdp_srq_qp, fence);

	/* the poller's last look at q: the reap may free it at once */
	smp_store_release(&q->drained, true);
}

/*
 * The connection lets go of its QP (drained of its sends) and CQ room: a
 * receive the QP took may still complete (the responder flushes a message
 * half in when the QP went to error), so the QP stays, retired, its
 * completions dropped, until its fence completes (sdp_srq_reap()).
 */
void sdp_srq_retire(struct sdp_conn *c)
{
	struct sdp_srq_qp *q = c->srq_qp;
	struct sdp_srq *s = c->srq;
	struct sdp_dev *sdev = s->sdev;

	if (q) {
		spin_lock_bh(&s->lock);
		q->c = NULL;
		spin_unlock_bh(&s->lock);
	}
	sdp_srq_conn_exit(c);
	if (!q || !c->qp) {
		if (c->cq)
			sdp_cq_put(sdev, c->cq, c->cq_room, s->class);
		kfree(q);
		sdp_srq_put(s);
	} else {
		q->qp = c->qp;
		q->cq = c->cq;
		q->cq_room = c->cq_room;
		q->since = jiffies;
		sdp_wr_init(&q->fence, NULL, sdp_srq_fence_done);
		mutex_lock(&sdev->lock);
		list_add_tail(&q->node, &s->retired);
		mutex_unlock(&sdev->lock);
		queue_delayed_work(sdp_wq, &sdev->srq_reap, SDP_SRQ_REAP_EVERY);
	}
	c->srq_qp = NULL;
	c->qp = NULL;
	c->cq = NULL;
}

/*
 * One look at the retired QPs: those whose grace is over get their fence,
 * those whose fence completed go, with their CQ room; all with @force (the
 * device goes, and its fences did not complete in time). True: some stay.
 */
static bool sdp_srq_reap(struct sdp_dev *sdev, bool force)
{
	struct sdp_srq_qp *q, *tmp;
	struct sdp_srq *s;
	LIST_HEAD(gone);
	bool left = false;

	mutex_lock(&sdev->lock);
	list_for_each_entry(s, &sdev->srqs, node) {
		list_for_each_entry_safe(q, tmp, &s->retired, node) {
			if (force || smp_load_acquire(&q->drained)) {
				list_move_tail(&q->node, &gone);
				continue;
			}
			left = true;
			if (q->fenced || time_before(jiffies, q->since + SDP_SRQ_RETIRE))
				continue;
			q->fenced = true;
			/* (cannot fail on a QP that took sends: its room is there) */
			if (sdp_post_fence(q->qp, &q->fence)) {
				pr_warn_ratelimited("a retired QP's fence could not be posted\n");
				list_move_tail(&q->node, &gone);
			}
		}
	}
	mutex_unlock(&sdev->lock);
	if (force && !list_empty(&gone))
		pr_warn("%s: retired QPs whose fence never completed go\n",
			dev_name(&sdev->ibdev->dev));
	list_for_each_entry_safe(q, tmp, &gone, node) {
		s = q->srq;
		ib_destroy_qp(q->qp);
		sdp_cq_put(sdev, q->cq, q->cq_room, s->class);
		kfree(q);
		sdp_srq_put(s);
	}
	return left;
}

static void sdp_srq_reap_work(struct work_struct *work)
{
	struct sdp_dev *sdev = container_of(to_delayed_work(work), struct sdp_dev, srq_reap);

	if (sdp_srq_reap(sdev, false))
		queue_delayed_work(sdp_wq, &sdev->srq_reap, SDP_SRQ_REAP_EVERY);
}

/*
 * The device goes, its connections gone: the QPs they left, and so the
 * SRQs, each after its fence (its CQ's poller still runs).
 */
void sdp_srq_dev_exit(struct sdp_dev *sdev)
{
	unsigned long end = jiffies + SDP_SRQ_RETIRE + SDP_SRQ_FENCE_WAIT;

	cancel_delayed_work_sync(&sdev->srq_reap);
	while (sdp_srq_reap(sdev, time_after(jiffies, end)))
		msleep(20);
}

void sdp_srq_dev_init(struct sdp_dev *sdev)
{
	INIT_LIST_HEAD(&sdev->srqs);
	INIT_DELAYED_WORK(&sdev->srq_reap, sdp_srq_reap_work);
}
