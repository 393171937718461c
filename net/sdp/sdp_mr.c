// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol: the device's fast-registration MRs, lent to
 * zero-copy sends' buffers (sdp_zbuf.c) for as long as a buffer lives (one
 * send, or kept for the next ones), so that a connection that sends
 * nothing holds none and connections one after another share them
 * (LibRIPC's registration caching, at the level of the MR). A buffer gives
 * its MR back with no registration in it (invalidated, or never made); the
 * ones no send needed for a while go, on the system workqueue: the
 * device's removal cancels that work before the PD goes.
 */
#include "sdp_rdma.h"

/* An MR no send took for this long goes. */
#define SDP_MR_LINGER	HZ

/*
 * The MRs no send took since the last pass go: the pool keeps what the
 * device's sends needed at once of late, and nothing once they stop.
 * Sends take and give back at the head, so the unused are at the tail.
 */
static void sdp_mr_reap(struct work_struct *work)
{
	struct sdp_dev *sdev = container_of(to_delayed_work(work), struct sdp_dev, mr_reap);
	struct ib_mr *mr, *tmp;
	LIST_HEAD(gone);

	spin_lock_bh(&sdev->mr_lock);
	for (; sdev->mr_unused; sdev->mr_unused--, sdev->mr_idle--)
		list_move(sdev->mrs.prev, &gone);
	sdev->mr_unused = sdev->mr_idle;
	if (sdev->mr_idle)
		queue_delayed_work(system_wq, &sdev->mr_reap, SDP_MR_LINGER);
	spin_unlock_bh(&sdev->mr_lock);
	list_for_each_entry_safe(mr, tmp, &gone, qp_entry)
		ib_dereg_mr(mr);
}

/*
 * A fast-registration MR for a zero-copy send (sdp_zc.c): one a send gave
 * back if there is one (*@reused), else a new one; NULL if none can be had.
 */
struct ib_mr *sdp_mr_get(struct sdp_dev *sdev, bool *reused)
{
	struct ib_mr *mr = NULL;

	spin_lock_bh(&sdev->mr_lock);
	if (sdev->mr_idle) {
		mr = list_first_entry(&sdev->mrs, struct ib_mr, qp_entry);
		list_del(&mr->qp_entry);
		sdev->mr_idle--;
		sdev->mr_unused = min(sdev->mr_unused, sdev->mr_idle);
	}
	spin_unlock_bh(&sdev->mr_lock);
	*reused = mr;
	if (!mr) {
		mr = ib_alloc_mr(sdev->pd, IB_MR_TYPE_MEM_REG, SDP_ZC_PAGES);
		if (IS_ERR(mr))
			return NULL;
	}
	return mr;
}

/* @mr holds no registration (invalidated, or never made); in process or softirq context. */
void sdp_mr_put(struct sdp_dev *sdev, struct ib_mr *mr)
{
	spin_lock_bh(&sdev->mr_lock);
	list_add(&mr->qp_entry, &sdev->mrs);
	if (!sdev->mr_idle++)
		queue_delayed_work(system_wq, &sdev->mr_reap, SDP_MR_LINGER);
	spin_unlock_bh(&sdev->mr_lock);
}

void sdp_mr_init(struct sdp_dev *sdev)
{
	spin_lock_init(&sdev->mr_lock);
	INIT_LIST_HEAD(&sdev->mrs);
	INIT_DELAYED_WORK(&sdev->mr_reap, sdp_mr_reap);
}

/* The device goes: no connection is left to give an MR back. */
void sdp_mr_exit(struct sdp_dev *sdev)
{
	cancel_delayed_work_sync(&sdev->mr_reap);
	sdev->mr_unused = sdev->mr_idle;
	sdp_mr_reap(&sdev->mr_reap.work);
}
