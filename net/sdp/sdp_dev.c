// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol: per-device state.
 *
 * Each RDMA device gets completion queues shared by its connections (each
 * connection has its own protection domain: sdp_conn.c). When a device
 * goes away, its connections lose their QPs, PDs, CQs and buffers before
 * remove() returns, and their sockets see ECONNRESET.
 */
#define pr_fmt(fmt) "sdp: " fmt

#include <linux/module.h>
#include <linux/rwsem.h>

#include "sdp_rdma.h"

/* Guards lookups against remove(): ib_get_client_data() still answers then. */
static DECLARE_RWSEM(sdp_dev_rwsem);

static int sdp_add_one(struct ib_device *ibdev);
static void sdp_remove_one(struct ib_device *ibdev, void *client_data);

static struct ib_client sdp_client = {
	.name	= "sdp",
	.add	= sdp_add_one,
	.remove	= sdp_remove_one,
};

static void sdp_dev_release(struct kref *ref)
{
	complete(&container_of(ref, struct sdp_dev, ref)->released);
}

/* How this device's transport differs (the iWARP ports of a device are all iWARP). */
static void sdp_quirks_init(struct sdp_dev *sdev)
{
	struct ib_device *ibdev = sdev->ibdev;

	const struct ib_device_attr *a = &ibdev->attrs;
	bool iwarp = rdma_protocol_iwarp(ibdev, rdma_start_port(ibdev));

	sdev->quirks.cm_qp = iwarp;
	sdev->quirks.rd_depth = min3(SDP_ZC_RD_DEPTH, a->max_qp_rd_atom,
				     a->max_qp_init_rd_atom);
	sdev->quirks.zcopy = !iwarp && sdev->quirks.rd_depth &&
			     (a->device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS) &&
			     a->max_fast_reg_page_list_len >= SDP_ZC_PAGES;
	sdev->quirks.reg_alone = ibdev->ops.driver_id == RDMA_DRIVER_RXE;
	sdev->quirks.read_fence = ibdev->ops.driver_id == RDMA_DRIVER_RXE;
	sdev->quirks.srq = !iwarp && a->max_srq && a->max_srq_wr >= SDP_SRQ_BUFS;
}

static int sdp_add_one(struct ib_device *ibdev)
{
	struct sdp_dev *sdev;
	int err;

	sdev = kzalloc(sizeof(*sdev), GFP_KERNEL);
	if (!sdev)
		return -ENOMEM;
	sdev->ibdev = ibdev;
	mutex_init(&sdev->lock);
	INIT_LIST_HEAD(&sdev->conns);
	sdp_srq_dev_init(sdev);
	err = sdp_cq_init(sdev);
	if (err)
		goto free;
	sdp_quirks_init(sdev);
	kref_init(&sdev->ref);
	init_completion(&sdev->released);
	ib_set_client_data(ibdev, &sdp_client, sdev);
	/* It may carry the address of a listener that lost its own. */
	sdp_up->rearm();
	return 0;

free:
	kfree(sdev);
	return err;
}

static void sdp_remove_one(struct ib_device *ibdev, void *client_data)
{
	struct sdp_dev *sdev = client_data;
	struct sdp_conn *c;
	struct sock *sk;

	down_write(&sdp_dev_rwsem);
	sdev->dead = true;
	up_write(&sdp_dev_rwsem);

	mutex_lock(&sdev->lock);
	while (!list_empty(&sdev->conns)) {
		c = list_first_entry(&sdev->conns, struct sdp_conn, dev_item);
		/* the socket holds the connection */
		sk = c->sk;
		sock_hold(sk);
		mutex_unlock(&sdev->lock);

		lock_sock(sk);
		/* It may have let go of the device meanwhile. */
		if (c->v.live && c->sdev == sdev) {
			SDP_INC_STATS(sock_net(sk), SDP_MIB_DEVICE_REMOVED);
			sdp_conn_release(c);
			sdp_up->lost(sk);
		}
		release_sock(sk);
		sock_put(sk);

		mutex_lock(&sdev->lock);
	}
	mutex_unlock(&sdev->lock);

	/* Connections still being set up hold references; they fail on dead. */
	kref_put(&sdev->ref, sdp_dev_release);
	wait_for_completion(&sdev->released);
	/* the QPs their connections left on SRQs, and so the SRQs */
	sdp_srq_dev_exit(sdev);
	sdp_cq_exit(sdev);
	kfree(sdev);
}

/* The device's state with a reference, or NULL if it is going away. */
struct sdp_dev *sdp_dev_get(struct ib_device *ibdev)
{
	struct sdp_dev *sdev;

	down_read(&sdp_dev_rwsem);
	sdev = ib_get_client_data(ibdev, &sdp_client);
	if (sdev && !sdev->dead)
		kref_get(&sdev->ref);
	else
		sdev = NULL;
	up_read(&sdp_dev_rwsem);
	return sdev;
}

void sdp_dev_put(struct sdp_dev *sdev)
{
	kref_put(&sdev->ref, sdp_dev_release);
}

int sdp_dev_add_conn(struct sdp_dev *sdev, struct sdp_conn *c)
{
	int err = 0;

	mutex_lock(&sdev->lock);
	if (sdev->dead)
		err = -ENODEV;
	else
		list_add_tail(&c->dev_item, &sdev->conns);
	mutex_unlock(&sdev->lock);
	return err;
}

void sdp_dev_del_conn(struct sdp_conn *c)
{
	mutex_lock(&c->sdev->lock);
	list_del_init(&c->dev_item);
	mutex_unlock(&c->sdev->lock);
}

/* Is there an RDMA device on @dev (a policy check: no reference kept)? */
bool sdp_dev_on_netdev(struct net_device *dev)
{
	struct ib_device *ibdev = ib_device_get_by_netdev(dev, RDMA_DRIVER_UNKNOWN);

	if (!ibdev)
		return false;
	ib_device_put(ibdev);
	return true;
}

int sdp_transport_init(const struct sdp_upcalls *up)
{
	int err;

	sdp_up = up;
	err = sdp_conn_cache_init();
	if (err)
		return err;
	sdp_wq = alloc_workqueue("sdp", WQ_MEM_RECLAIM, 0);
	if (!sdp_wq) {
		sdp_conn_cache_exit();
		return -ENOMEM;
	}
	err = ib_register_client(&sdp_client);
	if (err) {
		destroy_workqueue(sdp_wq);
		sdp_conn_cache_exit();
	}
	return err;
}

/* No socket is left, so no connection and no work of theirs. */
void sdp_transport_exit(void)
{
	ib_unregister_client(&sdp_client);
	destroy_workqueue(sdp_wq);
	sdp_conn_cache_exit();
}
