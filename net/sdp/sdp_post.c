// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol: posting work requests, one helper per kind.
 * Every work request carries a struct sdp_wr (its wr_cqe), which names the
 * slot that posted it and the slot's connection: a completion is routed
 * through it, never through the CQ it arrived on.
 */
#include "sdp_rdma.h"

void sdp_wr_init(struct sdp_wr *wr, struct sdp_conn *c,
		 void (*done)(struct ib_cq *cq, struct ib_wc *wc))
{
	wr->cqe.done = done;
	wr->conn = c;
}

/* A receive into @len bytes at @dma, owned by the device until it completes. */
int sdp_post_recv(struct sdp_conn *c, struct sdp_wr *wr, u64 dma, u32 len)
{
	struct ib_sge sge = {
		.addr	= dma,
		.length	= len,
		.lkey	= c->lkey,
	};
	struct ib_recv_wr rwr = {
		.wr_cqe		= &wr->cqe,
		.sg_list	= &sge,
		.num_sge	= 1,
	};

	ib_dma_sync_single_for_device(c->sdev->ibdev, dma, len, DMA_FROM_DEVICE);
	return ib_post_recv(c->qp, &rwr, NULL);
}

/* A signalled SEND of @len bytes at @dma (inline when they fit). */
int sdp_post_send(struct sdp_conn *c, struct sdp_wr *wr, u64 dma, u32 len)
{
	struct ib_sge sge = {
		.addr	= dma,
		.length	= len,
		.lkey	= c->lkey,
	};
	struct ib_send_wr swr = {
		.wr_cqe		= &wr->cqe,
		.sg_list	= &sge,
		.num_sge	= 1,
		.opcode		= IB_WR_SEND,
		.send_flags	= IB_SEND_SIGNALED,
	};
	int err;

	if (len <= c->max_inline)
		swr.send_flags |= IB_SEND_INLINE;
	ib_dma_sync_single_for_device(c->sdev->ibdev, dma, len, DMA_TO_DEVICE);
	/*
	 * Software providers (rxe, siw) run or schedule their send work here.
	 * A softirq raised from process context wakes ksoftirqd, a context
	 * switch per message; with BHs off it runs when they are re-enabled,
	 * in our context, as TCP's transmit does.
	 */
	local_bh_disable();
	err = ib_post_send(c->qp, &swr, NULL);
	local_bh_enable();
	return err;
}
