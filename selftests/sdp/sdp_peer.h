/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A hand-made SDP peer: a userspace rdma_cm/verbs program that speaks SDP
 * by hand (BSDH, Hello, HelloAck, credits), well or badly, to the kernel's
 * SDP sockets, as the client of an SDP listener or as the server an SDP
 * socket connects to. Include after sdp_proof.h.
 */
#ifndef SDP_PEER_H
#define SDP_PEER_H

#include <poll.h>
#include <rdma/rdma_cma.h>
#include <infiniband/verbs.h>

/* The wire format, written out from the specification on purpose. */
struct bsdh {
	uint8_t mid, flags;
	uint16_t bufs;
	uint32_t len, mseq, mseq_ack;
} __attribute__((packed));

struct hh {
	struct bsdh bsdh;
	uint8_t majv_minv, ipv_cap, caps, max_adverts;
	uint32_t desremrcvsz, localrcvsz;
} __attribute__((packed));

struct hah {
	struct bsdh bsdh;
	uint8_t majv_minv, ipv_cap, caps, ext_max_adverts;
	uint32_t actrcvsz;
} __attribute__((packed));

enum { MID_HELLO = 0, MID_HELLO_ACK = 1, MID_DISCONN = 2, MID_ABORT = 3,
       MID_SENDSM = 4, MID_RDMAWRCOMPL = 5, MID_RDMARDCOMPL = 6, MID_SRCAVAIL_CANCEL = 8,
       MID_SINKAVAIL_CANCEL = 9, MID_SINKAVAIL = 0xFD, MID_SRCAVAIL = 0xFE, MID_DATA = 0xFF };
/* Hello/HelloAck caps: takes SinkAvails */
#define CAP_SINKAVAIL	0x01

/* SrcAvail's payload, RdmaRdCompl's. */
struct srcah {
	uint32_t len, rkey;
	uint64_t vaddr;
} __attribute__((packed));

struct rrch {
	uint32_t len;
} __attribute__((packed));

/* The wr_id of the peer's RDMA Reads (receives use their buffer's index). */
#define PEER_READ_WRID	0x5eadULL
enum { OOB_PRES = 0x01, OOB_PEND = 0x02 };	/* bsdh.flags */

#define PEER_BUFS	16
#define PEER_SIZE	4096
/*
 * Send buffers, each reused only this many messages later: Soft-RoCE on
 * 6.12 copies a send out of its buffer after ibv_post_send() returns (6.1
 * before), and a flood past the credits (sdp_wire) posts without waiting.
 */
#define PEER_SEND_BUFS	128

/* One end of a hand-made SDP connection. */
struct peer {
	struct rdma_event_channel *ec;
	struct rdma_cm_id *id, *listen_id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	/*
	 * A QP of our own, not rdma_cm's: we move it to RTS ourselves, giving
	 * it @rd_atomic RDMA Reads in flight whatever the CM agreed, and the
	 * RTU waits for peer_establish().
	 */
	bool own_qp;
	int rd_atomic;
	/* RDMA Reads of its memory it serves (the REQ's or REP's responder_resources) */
	int rd_in;
	/* its Hello's or HelloAck's adverts: it takes the kernel's SrcAvails */
	int adverts;
	/* its Hello's or HelloAck's caps: CAP_SINKAVAIL, it takes the kernel's SinkAvails */
	int caps;
	struct ibv_mr *zc_mr;	/* zc: its zero-copy region */
	unsigned char *zc;
	int read_status;	/* its last RDMA Read's, -1 until it completes */
	unsigned char *mem;	/* PEER_BUFS receive buffers, then PEER_SEND_BUFS to send */
	uint32_t mseq;		/* last we sent */
	uint32_t rx_mseq;	/* last we received */
	uint16_t their_bufs;	/* from their Hello/HelloAck */
	uint32_t their_size;	/* their receive buffers' size, from the same */
	uint16_t last_bufs;	/* their bufs and mseq_ack, last heard: */
	uint32_t last_ack;	/* our credits are bufs - (mseq - ack) */
	int posted;
	int rx_mids[64];	/* mids we received, in order */
	int rx_n;
	struct bsdh last_data;	/* the last Data message with payload */
	char last_payload[64];
	unsigned char last_zc[48];	/* the last zero-copy message, whole */
};

/*
 * Wait for the next CM event; 0 if it is @want, else its type + 1000.
 * Its private data (at most @pdata_size bytes) goes to @pdata.
 */
static inline int wait_event(struct peer *p, enum rdma_cm_event_type want,
		      void *pdata, int pdata_size, int *pdata_len)
{
	struct pollfd pfd = { .fd = p->ec->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	int got;

	/* the kernel always answers: a test never waits for good */
	if (poll(&pfd, 1, 10000) != 1 || rdma_get_cm_event(p->ec, &ev))
		return -1;
	got = ev->event;
	if (pdata && ev->param.conn.private_data) {
		*pdata_len = ev->param.conn.private_data_len;
		if (*pdata_len > pdata_size)
			*pdata_len = pdata_size;
		memcpy(pdata, ev->param.conn.private_data, *pdata_len);
	}
	if (got == RDMA_CM_EVENT_CONNECT_REQUEST)
		p->id = ev->id;
	rdma_ack_cm_event(ev);
	return got == (int)want ? 0 : got + 1000;
}

static inline int post_recv(struct peer *p, int i)
{
	struct ibv_sge sge = { .addr = (uintptr_t)p->mem + i * PEER_SIZE,
			       .length = PEER_SIZE, .lkey = p->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(p->qp, &wr, &bad);
}

static inline int peer_qp(struct peer *p)
{
	struct ibv_qp_init_attr attr = {
		.cap = { .max_send_wr = 64, .max_recv_wr = PEER_BUFS + 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	int i;

	p->pd = ibv_alloc_pd(p->id->verbs);
	p->cq = ibv_create_cq(p->id->verbs, 128, NULL, NULL, 0);
	p->mem = calloc(PEER_BUFS + PEER_SEND_BUFS, PEER_SIZE);
	if (!p->pd || !p->cq || !p->mem)
		return -1;
	p->mr = ibv_reg_mr(p->pd, p->mem, (PEER_BUFS + PEER_SEND_BUFS) * PEER_SIZE,
			   IBV_ACCESS_LOCAL_WRITE);
	attr.send_cq = attr.recv_cq = p->cq;
	if (!p->mr)
		return -1;
	if (!p->own_qp && !rdma_create_qp(p->id, p->pd, &attr))
		p->qp = p->id->qp;
	if (p->own_qp) {
		struct ibv_qp_attr init = { .qp_state = IBV_QPS_INIT };
		int mask;

		/* to INIT, where receives may be posted, as rdma_create_qp() */
		p->qp = ibv_create_qp(p->pd, &attr);
		if (!p->qp || rdma_init_qp_attr(p->id, &init, &mask) ||
		    ibv_modify_qp(p->qp, &init, mask))
			return -1;
	}
	if (!p->qp)
		return -1;
	for (i = 0; i < PEER_BUFS; i++)
		if (post_recv(p, i))
			return -1;
	p->posted = PEER_BUFS;
	return 0;
}

static inline void fill_bsdh(struct bsdh *h, uint8_t mid, uint16_t bufs, uint32_t len)
{
	memset(h, 0, sizeof(*h));
	h->mid = mid;
	h->bufs = htons(bufs);
	h->len = htonl(len);
}

/* A new id with a route to @dst; 0 or -1. */
static inline int peer_route(struct peer *p, const struct sockaddr_storage *dst)
{
	p->ec = rdma_create_event_channel();
	if (!p->ec || rdma_create_id(p->ec, &p->id, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(p->id, NULL, (struct sockaddr *)dst, 2000) ||
	    wait_event(p, RDMA_CM_EVENT_ADDR_RESOLVED, NULL, 0, NULL) ||
	    rdma_resolve_route(p->id, 2000) ||
	    wait_event(p, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL, 0, NULL))
		return -1;
	return 0;
}

/* Our own QP through INIT, RTR and RTS, with the CM's attributes but ours. */
static inline int peer_qp_up(struct peer *p)
{
	static const enum ibv_qp_state states[] = { IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS };
	struct ibv_qp_attr attr;
	int mask;

	for (int i = 0; i < 3; i++) {
		memset(&attr, 0, sizeof(attr));
		attr.qp_state = states[i];
		if (rdma_init_qp_attr(p->id, &attr, &mask))
			return -1;
		if (states[i] == IBV_QPS_RTS)
			attr.max_rd_atomic = p->rd_atomic;
		if (ibv_modify_qp(p->qp, &attr, mask))
			return -1;
	}
	return 0;
}

/*
 * With our own QP, the RTU: the connection is established for the CM too
 * (no event follows on this side, as none does for the kernel's own QPs).
 */
static inline int peer_establish(struct peer *p)
{
	return rdma_establish(p->id) ? -1 : 0;
}

static inline void conn_param(struct rdma_conn_param *param, const void *data, int len, struct peer *p)
{
	memset(param, 0, sizeof(*param));
	param->private_data = data;
	param->private_data_len = len;
	/* what a careless or hostile peer asks: retry forever */
	param->retry_count = 7;
	param->rnr_retry_count = 7;
	param->initiator_depth = p->rd_atomic;
	param->responder_resources = p->rd_in;
	if (p->own_qp)
		param->qp_num = p->qp->qp_num;
}

/*
 * Connect to an SDP listener with @hello; 0, or the unexpected event + 1000.
 * With our own QP it stops short of the RTU (peer_establish()).
 */
static inline int peer_connect(struct peer *p, const struct sockaddr_storage *dst,
			const struct hh *hello, void *reply, int reply_size,
			int *reply_len)
{
	struct rdma_conn_param param;
	const struct hah *hah = reply;
	int err;

	if (peer_route(p, dst) || peer_qp(p))
		return -1;
	conn_param(&param, hello, sizeof(*hello), p);
	if (rdma_connect(p->id, &param))
		return -1;
	err = wait_event(p, p->own_qp ? RDMA_CM_EVENT_CONNECT_RESPONSE :
			 RDMA_CM_EVENT_ESTABLISHED, reply, reply_size, reply_len);
	if (!err && p->own_qp)
		err = peer_qp_up(p);
	if (!err) {
		p->their_bufs = p->last_bufs = ntohs(hah->bsdh.bufs);
		p->their_size = ntohl(hah->actrcvsz);
	}
	return err;
}

/* Listen on SDP_A, on a port of rdma_cm's choosing: @addr. */
static inline int peer_listen(struct peer *p, struct sockaddr_storage *addr, socklen_t *alen)
{
	*alen = sdp_addr(addr, SDP_A, 0);
	p->ec = rdma_create_event_channel();
	if (!p->ec || rdma_create_id(p->ec, &p->listen_id, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(p->listen_id, (struct sockaddr *)addr) ||
	    rdma_listen(p->listen_id, 1))
		return -1;
	((struct sockaddr_in *)addr)->sin_port = rdma_get_src_port(p->listen_id);
	return 0;
}

/*
 * The kernel's connect request on our listener: its Hello to @hello,
 * answered with a good HelloAck; 0, or the unexpected event + 1000.
 */
static inline int peer_accept(struct peer *p, struct hh *hello, int *hello_len)
{
	struct rdma_conn_param param;
	struct hah hah = {};
	int err;

	err = wait_event(p, RDMA_CM_EVENT_CONNECT_REQUEST, hello, sizeof(*hello), hello_len);
	if (err)
		return err;
	if (peer_qp(p) || (p->own_qp && peer_qp_up(p)))
		return -1;
	errno = 0;
	p->their_bufs = p->last_bufs = ntohs(hello->bsdh.bufs);
	p->their_size = ntohl(hello->localrcvsz);
	fill_bsdh(&hah.bsdh, MID_HELLO_ACK, PEER_BUFS - 1, sizeof(hah));
	hah.majv_minv = 0x22;
	hah.ipv_cap = hello->ipv_cap;
	hah.actrcvsz = htonl(PEER_SIZE);
	hah.ext_max_adverts = p->adverts;
	hah.caps = p->caps;
	conn_param(&param, &hah, sizeof(hah), p);
	if (rdma_accept(p->id, &param))
		return -2;
	return wait_event(p, RDMA_CM_EVENT_ESTABLISHED, NULL, 0, NULL);
}

static inline void peer_free(struct peer *p)
{
	if (p->id && p->id->qp)
		rdma_destroy_qp(p->id);
	else if (p->qp)
		ibv_destroy_qp(p->qp);
	if (p->mr)
		ibv_dereg_mr(p->mr);
	if (p->zc_mr)
		ibv_dereg_mr(p->zc_mr);
	free(p->zc);
	if (p->cq)
		ibv_destroy_cq(p->cq);
	if (p->pd)
		ibv_dealloc_pd(p->pd);
	if (p->id)
		rdma_destroy_id(p->id);
	if (p->listen_id)
		rdma_destroy_id(p->listen_id);
	if (p->ec)
		rdma_destroy_event_channel(p->ec);
	free(p->mem);
}

static inline void good_hello(struct hh *h, int bufs)
{
	memset(h, 0, sizeof(*h));
	fill_bsdh(&h->bsdh, MID_HELLO, bufs, sizeof(*h));
	h->majv_minv = 0x22;
	h->ipv_cap = 0x40;
	h->desremrcvsz = htonl(PEER_SIZE);
	h->localrcvsz = htonl(PEER_SIZE);
}

/* The send buffer of our next message. */
static inline unsigned char *send_slot(struct peer *p)
{
	return p->mem + (PEER_BUFS + (p->mseq % PEER_SEND_BUFS)) * PEER_SIZE;
}

/* Post @len bytes of the send buffer as @wr says (opcode, RDMA target). */
static inline int post_send(struct peer *p, struct ibv_send_wr *wr, uint32_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)send_slot(p), .length = len,
			       .lkey = p->mr->lkey };
	struct ibv_send_wr *bad;

	wr->sg_list = &sge;
	wr->num_sge = 1;
	wr->send_flags = IBV_SEND_SIGNALED;
	return ibv_post_send(p->qp, wr, &bad);
}

/* Send a message: @h as given (mseq etc. already set) plus @payload. */
static inline int send_raw(struct peer *p, const struct bsdh *h, const void *payload,
		    uint32_t payload_len)
{
	struct ibv_send_wr wr = { .opcode = IBV_WR_SEND };

	memcpy(send_slot(p), h, sizeof(*h));
	memcpy(send_slot(p) + sizeof(*h), payload, payload_len);
	return post_send(p, &wr, sizeof(*h) + payload_len);
}

/* A well-formed message with the next mseq. */
static inline int send_msg(struct peer *p, uint8_t mid, const void *payload, uint32_t len)
{
	struct bsdh h;

	fill_bsdh(&h, mid, PEER_BUFS - 1, sizeof(h) + len);
	h.mseq = htonl(++p->mseq);
	h.mseq_ack = htonl(p->rx_mseq);
	return send_raw(p, &h, payload, len);
}

/* Take in completions for up to @ms; records the mids we received. */
static inline void peer_poll(struct peer *p, int ms)
{
	double end = sdp_now() + ms / 1000.0;
	struct ibv_wc wc;

	while (sdp_now() < end) {
		int n = ibv_poll_cq(p->cq, 1, &wc);

		if (n <= 0) {
			usleep(1000);
			continue;
		}
		if (wc.wr_id == PEER_READ_WRID) {
			p->read_status = wc.status;
			continue;
		}
		if (wc.status != IBV_WC_SUCCESS || !(wc.opcode & IBV_WC_RECV))
			continue;
		struct bsdh *h = (void *)(p->mem + wc.wr_id * PEER_SIZE);

		p->rx_mseq = ntohl(h->mseq);
		p->last_bufs = ntohs(h->bufs);
		p->last_ack = ntohl(h->mseq_ack);
		if (p->rx_n < 64)
			p->rx_mids[p->rx_n++] = h->mid;
		if (h->mid == MID_DATA && wc.byte_len > sizeof(*h)) {
			p->last_data = *h;
			size_t n = wc.byte_len - sizeof(*h);

			memcpy(p->last_payload, h + 1,
			       n < sizeof(p->last_payload) ? n : sizeof(p->last_payload));
		} else if (h->mid != MID_DATA) {
			memcpy(p->last_zc, h, wc.byte_len < sizeof(p->last_zc) ?
			       wc.byte_len : sizeof(p->last_zc));
		}
		post_recv(p, wc.wr_id);
	}
}

/* Did @mid arrive? */
static inline bool peer_got(struct peer *p, int mid)
{
	int i;

	for (i = 0; i < p->rx_n; i++)
		if (p->rx_mids[i] == mid)
			return true;
	return false;
}

/* Take in completions until @mid arrives, 5 s at most. */
static inline bool peer_wait_for(struct peer *p, int mid)
{
	int i;

	for (i = 0; i < 50 && !peer_got(p, mid); i++)
		peer_poll(p, 100);
	return peer_got(p, mid);
}

/* The header of our next message: its mseq, our ack, all our buffers. */
static inline void next_header(struct peer *p, struct bsdh *h, uint8_t mid, uint32_t len)
{
	fill_bsdh(h, mid, PEER_BUFS - 1, sizeof(*h) + len);
	h->mseq = htonl(++p->mseq);
	h->mseq_ack = htonl(p->rx_mseq);
}

/*
 * A zero-copy region of @size bytes: the kernel may read it (our SrcAvail)
 * or write it (our SinkAvail), we may read into it or write from it.
 */
static inline int peer_zc_region(struct peer *p, size_t size)
{
	p->zc = calloc(1, size);
	if (!p->zc)
		return -1;
	p->zc_mr = ibv_reg_mr(p->pd, p->zc, size, IBV_ACCESS_LOCAL_WRITE |
			      IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
	return p->zc_mr ? 0 : -1;
}

/* Offer @len bytes at @addr of our region under @rkey: a SrcAvail. */
static inline int send_srcavail(struct peer *p, uint64_t addr, uint32_t rkey, uint32_t len)
{
	struct srcah sa = { htonl(len), htonl(rkey), htobe64(addr) };

	return send_msg(p, MID_SRCAVAIL, &sa, sizeof(sa));
}

/*
 * RDMA Read @len bytes of the kernel's at @raddr into our region, or
 * (@write) Write them there from it; its status or -1.
 */
static inline int peer_rdma(struct peer *p, uint64_t raddr, uint32_t rkey, uint32_t len,
			    bool write)
{
	struct ibv_sge sge = { .addr = (uintptr_t)p->zc, .length = len, .lkey = p->zc_mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = PEER_READ_WRID, .sg_list = &sge, .num_sge = 1,
		.opcode = write ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	}, *bad;

	p->read_status = -1;
	if (ibv_post_send(p->qp, &wr, &bad))
		return -1;
	for (int i = 0; i < 50 && p->read_status < 0; i++)
		peer_poll(p, 100);
	return p->read_status;
}

/* Our credits by what the kernel last told us. */
static inline int peer_credits(const struct peer *p)
{
	return (int)p->last_bufs - (int)(p->mseq - p->last_ack);
}

#endif
