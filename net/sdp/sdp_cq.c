// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol: completion queues shared by the connections of a
 * device, reaped in softirq with a budget, as the KSOVIA paper's kernel
 * sockets layer reaps one system-wide queue in a bottom half. The poller
 * is a NAPI context of the CQ's own (on a dummy net device of the device's),
 * so that a waiter that busy polls (SO_BUSY_POLL, net.core.busy_read and
 * busy_poll, epoll) reaps the CQ of its socket itself, as over a NIC's queue.
 *
 * Each device has a set of CQs for each of its completion vectors; a
 * connection takes room for every completion its QP can produce on a CQ of
 * the vector of the CPU it is set up on, and gives it back when its QP is
 * gone. The room is what its QP may have outstanding (max_send_wr +
 * max_recv_wr, the drain markers among them; every send is signalled and
 * each work request completes once); a QP on an SRQ has no receive queue,
 * and the first of an SRQ's QPs on the CQ takes room for all the SRQ's
 * posted receives (SDP_SRQ_BUFS), which are never more: a CQ never holds
 * more than that sum, so it cannot overflow by construction. A CQ is created when
 * none of the vector has room, and destroyed once it has served nobody for
 * SDP_CQ_LINGER: connections that come and go one at a time reuse it.
 *
 * The poller is the engine's (sdp_engine.c).
 */
#define pr_fmt(fmt) "sdp: " fmt

#include <linux/slab.h>

#include "sdp_rdma.h"

/* A CQ's entries; a QP's room (at most 2 * SDP_MAX_BUFS + a few) fits. */
#define SDP_CQ_ENTRIES		1024
/* How long an unused CQ waits for a connection before it goes. */
#define SDP_CQ_LINGER		HZ

/* A CQ's asynchronous error (an overrun would be our sizing's fault). */
static void sdp_cq_error(struct ib_event *event, void *context)
{
	struct sdp_cq *scq = context;

	pr_warn_ratelimited("%s on a CQ of %s\n", ib_event_msg(event->event),
			    dev_name(&scq->sdev->ibdev->dev));
}

static struct sdp_cq *sdp_cq_create(struct sdp_dev *sdev, int vector)
{
	struct ib_cq_init_attr attr = {
		.cqe = min_t(int, SDP_CQ_ENTRIES, sdev->ibdev->attrs.max_cqe),
		.comp_vector = vector,
	};
	struct sdp_cq *scq;

	scq = kzalloc(sizeof(*scq), GFP_KERNEL);
	if (!scq)
		return ERR_PTR(-ENOMEM);
	scq->sdev = sdev;
	scq->vector = vector;
	netif_napi_add(sdev->napi_dev, &scq->napi, sdp_cq_poll);
	napi_enable(&scq->napi);
	scq->cq = ib_create_cq(sdev->ibdev, sdp_cq_event, sdp_cq_error, scq, &attr);
	if (IS_ERR(scq->cq)) {
		struct ib_cq *cq = scq->cq;

		napi_disable(&scq->napi);
		netif_napi_del(&scq->napi);
		kfree(scq);
		return ERR_CAST(cq);
	}
	scq->entries = scq->cq->cqe;
	ib_req_notify_cq(scq->cq, IB_CQ_NEXT_COMP);
	return scq;
}

static void sdp_cq_destroy(struct sdp_cq *scq)
{
	/* (no QP is left on it: nothing completes any more) */
	napi_disable(&scq->napi);
	/*
	 * Gone from busy polling's table; a poll that let go of it may still
	 * be in its last lines (softirq, or a busy poller's RCU section):
	 * netif_napi_del() waits for both.
	 */
	netif_napi_del(&scq->napi);
	ib_destroy_cq(scq->cq);
	kfree(scq);
}

/*
 * What a QP's reservation of @nr takes: the first QP of an SRQ on the CQ
 * also takes room for all the SRQ's receives, as many as it has posted.
 */
static u32 sdp_cq_need(const struct sdp_cq *scq, u32 nr, int srq_class)
{
	return nr + (srq_class >= 0 && !scq->srq_qps[srq_class] ? SDP_SRQ_BUFS : 0);
}

static void sdp_cq_take(struct sdp_cq *scq, u32 nr, int srq_class)
{
	scq->used += sdp_cq_need(scq, nr, srq_class);
	if (srq_class >= 0)
		scq->srq_qps[srq_class]++;
}

/*
 * Room for @nr completions on a CQ of @sdev, of the vector of this CPU;
 * process context.
 */
struct ib_cq *sdp_cq_get(struct sdp_dev *sdev, u32 nr, int srq_class)
{
	int vector = raw_smp_processor_id() % max(sdev->ibdev->num_comp_vectors, 1);
	struct sdp_cq *scq, *found = NULL;

	if (sdp_fault(SDP_FAULT_CQ))
		return ERR_PTR(-ENOMEM);
	mutex_lock(&sdev->lock);
	list_for_each_entry(scq, &sdev->cqs, node) {
		if (scq->vector == vector &&
		    scq->used + sdp_cq_need(scq, nr, srq_class) <= scq->entries) {
			found = scq;
			break;
		}
	}
	if (!found) {
		found = sdp_cq_create(sdev, vector);
		if (IS_ERR(found)) {
			mutex_unlock(&sdev->lock);
			return ERR_CAST(found);
		}
		if (WARN_ON_ONCE(sdp_cq_need(found, nr, srq_class) > found->entries)) {
			sdp_cq_destroy(found);
			mutex_unlock(&sdev->lock);
			return ERR_PTR(-EINVAL);
		}
		list_add_tail(&found->node, &sdev->cqs);
	}
	sdp_cq_take(found, nr, srq_class);
	mutex_unlock(&sdev->lock);
	return found->cq;
}

/* The ID busy polling knows @cq's poller by (a socket's sk_napi_id). */
u32 sdp_cq_napi_id(struct ib_cq *cq)
{
	struct sdp_cq *scq = cq->cq_context;

	return READ_ONCE(scq->napi.napi_id);
}

/* Give back what sdp_cq_get() took; its QP is gone. */
void sdp_cq_put(struct sdp_dev *sdev, struct ib_cq *cq, u32 nr, int srq_class)
{
	struct sdp_cq *scq = cq->cq_context;

	mutex_lock(&sdev->lock);
	scq->used -= nr;
	if (srq_class >= 0 && !--scq->srq_qps[srq_class])
		scq->used -= SDP_SRQ_BUFS;
	if (!scq->used) {
		scq->idle_since = jiffies;
		queue_delayed_work(sdp_wq, &sdev->cq_reap, SDP_CQ_LINGER);
	}
	mutex_unlock(&sdev->lock);
}

/* The CQs unused for SDP_CQ_LINGER go; any in all with @all (the device goes). */
static void sdp_cq_reap(struct sdp_dev *sdev, bool all)
{
	struct sdp_cq *scq, *tmp;
	LIST_HEAD(gone);
	bool later = false;

	mutex_lock(&sdev->lock);
	list_for_each_entry_safe(scq, tmp, &sdev->cqs, node) {
		if (scq->used)
			continue;
		if (all || time_after_eq(jiffies, scq->idle_since + SDP_CQ_LINGER))
			list_move(&scq->node, &gone);
		else
			later = true;
	}
	if (later)
		queue_delayed_work(sdp_wq, &sdev->cq_reap, SDP_CQ_LINGER);
	/* one still used when the device goes is our bug: it stays, unpolled */
	if (all && WARN_ON_ONCE(!list_empty(&sdev->cqs)))
		list_for_each_entry(scq, &sdev->cqs, node)
			napi_disable(&scq->napi);
	mutex_unlock(&sdev->lock);
	list_for_each_entry_safe(scq, tmp, &gone, node)
		sdp_cq_destroy(scq);
}

static void sdp_cq_reap_work(struct work_struct *work)
{
	sdp_cq_reap(container_of(to_delayed_work(work), struct sdp_dev, cq_reap), false);
}

int sdp_cq_init(struct sdp_dev *sdev)
{
	sdev->napi_dev = sdp_alloc_netdev_dummy();
	if (!sdev->napi_dev)
		return -ENOMEM;
	INIT_LIST_HEAD(&sdev->cqs);
	INIT_DELAYED_WORK(&sdev->cq_reap, sdp_cq_reap_work);
	return 0;
}

/* The device goes: no connection is left on it, so no CQ is used. */
void sdp_cq_exit(struct sdp_dev *sdev)
{
	cancel_delayed_work_sync(&sdev->cq_reap);
	sdp_cq_reap(sdev, true);
	/* (a CQ left behind keeps its NAPI context on it) */
	if (list_empty(&sdev->cqs))
		sdp_free_netdev_dummy(sdev->napi_dev);
}
