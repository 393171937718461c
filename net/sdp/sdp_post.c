// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol: posting work requests, one helper per kind.
 * Every work request carries a struct sdp_wr (its wr_cqe), which names the
 * slot that posted it and the slot's connection: a completion is routed
 * through it, never through the CQ it arrived on.
 */
#define pr_fmt(fmt) "sdp: " fmt

#include "sdp_rdma.h"

/*
 * The socket layer's, from sdp_transport_init() on: here, at the bottom of
 * the transport, since every file of it reports up.
 */
const struct sdp_upcalls *sdp_up;
/* SDP's work queue (sdp_transport_init() makes it), here for the same reason. */
struct workqueue_struct *sdp_wq;

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

/*
 * Software providers (rxe, siw) run or schedule their send work in
 * ib_post_send(). A softirq raised from process context wakes ksoftirqd, a
 * context switch per message; with BHs off it runs when they are
 * re-enabled, in our context, as TCP's transmit does.
 */
static int sdp_post_qp(struct ib_qp *qp, const struct ib_send_wr *wr)
{
	int err;

	local_bh_disable();
	err = ib_post_send(qp, wr, NULL);
	local_bh_enable();
	return err;
}

static int sdp_post(struct sdp_conn *c, const struct ib_send_wr *wr)
{
	return sdp_post_qp(c->qp, wr);
}

/*
 * A signalled SEND or RDMA Write of @sge's bytes; inline when they fit and
 * @va gives them at a kernel address: a provider copies inline data from
 * the address in the SGE, which must then be one the CPU can read, not a
 * DMA address (they coincide only on software devices).
 */
static int sdp_post_sge(struct sdp_conn *c, struct sdp_wr *wr, struct ib_sge *sge,
			const void *va, enum ib_wr_opcode opcode, u64 raddr, u32 rkey)
{
	struct ib_rdma_wr rwr = {
		.wr = {
			.wr_cqe		= &wr->cqe,
			.sg_list	= sge,
			.num_sge	= 1,
			.opcode		= opcode,
			.send_flags	= IB_SEND_SIGNALED,
		},
		.remote_addr	= raddr,
		.rkey		= rkey,
	};

	if (va && sge->length <= c->max_inline) {
		sge->addr = (uintptr_t)va;
		rwr.wr.send_flags |= IB_SEND_INLINE;
	}
	return sdp_post(c, &rwr.wr);
}

/* ... of @len bytes of a kernel buffer, at @va, mapped at @dma */
static int sdp_post_out(struct sdp_conn *c, struct sdp_wr *wr, const void *va, u64 dma,
			u32 len, enum ib_wr_opcode opcode, u64 raddr, u32 rkey)
{
	struct ib_sge sge = {
		.addr	= dma,
		.length	= len,
		.lkey	= c->lkey,
	};

	ib_dma_sync_single_for_device(c->sdev->ibdev, dma, len, DMA_TO_DEVICE);
	return sdp_post_sge(c, wr, &sge, va, opcode, raddr, rkey);
}

int sdp_post_send(struct sdp_conn *c, struct sdp_wr *wr, const void *va, u64 dma, u32 len)
{
	return sdp_post_out(c, wr, va, dma, len, IB_WR_SEND, 0, 0);
}

/*
 * An RDMA Read of the peer's @len bytes at @raddr (@rkey) into @dma, and
 * where the device needs it (quirks.read_fence) a read of the last byte
 * again after it, signalled instead (not a zero-byte read: 6.1's rxe
 * dereferences the NULL region of one it fails to answer). Each completes
 * under @wr if it fails or flushes.
 */
int sdp_post_read(struct sdp_conn *c, struct sdp_wr *wr, u64 dma, u32 len,
		  u64 raddr, u32 rkey)
{
	struct ib_sge sge[2] = {
		{ .addr = dma, .length = len, .lkey = c->lkey },
		{ .addr = dma + len - 1, .length = 1, .lkey = c->lkey },	/* the fence */
	};
	struct ib_rdma_wr rwr[2] = {};
	u32 i, n = sdp_read_wrs(c->sdev);

	for (i = 0; i < n; i++) {
		rwr[i].wr.wr_cqe = &wr->cqe;
		rwr[i].wr.sg_list = &sge[i];
		rwr[i].wr.num_sge = 1;
		rwr[i].wr.opcode = IB_WR_RDMA_READ;
		rwr[i].wr.next = i + 1 < n ? &rwr[i + 1].wr : NULL;
		rwr[i].remote_addr = raddr + (sge[i].addr - dma);
		rwr[i].rkey = rkey;
	}
	rwr[n - 1].wr.send_flags = IB_SEND_SIGNALED;
	ib_dma_sync_single_for_device(c->sdev->ibdev, dma, len, DMA_FROM_DEVICE);
	return sdp_post(c, &rwr[0].wr);
}

/* ... into the peer's @raddr (@rkey: its SinkAvail's); its completion frees the slot. */
int sdp_post_write(struct sdp_conn *c, struct sdp_wr *wr, const void *va, u64 dma, u32 len,
		   u64 raddr, u32 rkey)
{
	return sdp_post_out(c, wr, va, dma, len, IB_WR_RDMA_WRITE, raddr, rkey);
}

/* ... from the start of @mr (a user buffer's, registered for local use: never inline) */
int sdp_post_write_mr(struct sdp_conn *c, struct sdp_wr *wr, struct ib_mr *mr, u32 len,
		      u64 raddr, u32 rkey)
{
	struct ib_sge sge = {
		.addr	= mr->iova,
		.length	= len,
		.lkey	= mr->lkey,
	};

	return sdp_post_sge(c, wr, &sge, NULL, IB_WR_RDMA_WRITE, raddr, rkey);
}

/* Register @mr (mapped already, ib_map_mr_sg()) with @access, under its rkey. */
int sdp_post_reg(struct sdp_conn *c, struct sdp_wr *wr, struct ib_mr *mr, int access)
{
	struct ib_reg_wr rwr = {
		.wr = {
			.wr_cqe		= &wr->cqe,
			.opcode		= IB_WR_REG_MR,
			.send_flags	= IB_SEND_SIGNALED,
		},
		.mr	= mr,
		.key	= mr->rkey,
		.access	= access,
	};

	return sdp_post(c, &rwr.wr);
}

/* Invalidate @rkey: once this completes, no peer can use it. */
int sdp_post_inv(struct sdp_conn *c, struct sdp_wr *wr, u32 rkey)
{
	struct ib_send_wr iwr = {
		.wr_cqe			= &wr->cqe,
		.opcode			= IB_WR_LOCAL_INV,
		.send_flags		= IB_SEND_SIGNALED,
		.ex.invalidate_rkey	= rkey,
	};

	return sdp_post(c, &iwr);
}

/* A send that flushes: @qp is in error (ib_modify_qp() to ERR is taken from any state). */
static int sdp_post_marker(struct ib_qp *qp, struct sdp_wr *wr)
{
	struct ib_send_wr swr = {
		.wr_cqe		= &wr->cqe,
		.opcode		= IB_WR_SEND,
		.send_flags	= IB_SEND_SIGNALED,
	};

	return sdp_post_qp(qp, &swr);
}

/*
 * An SRQ's QP is in error: the end marker, a send that flushes behind every
 * message the QP took (sdp_srq.c), once.
 */
void sdp_post_end(struct sdp_conn *c)
{
	if (!test_and_set_bit(SDP_C_SRQ_END, &c->flags) && sdp_post_marker(c->qp, &c->end_wr))
		pr_warn_ratelimited("the end marker could not be posted\n");
}

/* A retired SRQ QP's fence (sdp_srq.c): the QP to error, then the marker. */
int sdp_post_fence(struct ib_qp *qp, struct sdp_wr *wr)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	int err = ib_modify_qp(qp, &attr, IB_QP_STATE);

	return err ?: sdp_post_marker(qp, wr);
}

/* The completion handlers' side: @c has completions to take in. */
void sdp_cq_mark(struct ib_cq *cq, struct sdp_conn *c)
{
	struct sdp_cq *scq = cq->cq_context;

	/*
	 * The slot's completion is stored before the mark is tested, and the
	 * engine clears the mark before it reads the slots (sdp_cq_run()): a
	 * connection marked on another CQ meanwhile (its previous QP's, being
	 * reaped still) is not missed.
	 */
	smp_mb__before_atomic();
	if (test_and_set_bit(SDP_C_CQ_MARKED, &c->flags))
		return;
	sock_hold(c->sk);
	c->cq_next = scq->todo;
	scq->todo = c;
}
