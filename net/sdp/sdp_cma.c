// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol: connection management over rdma_cm.
 *
 * Active side: resolve address and route, create the QP and post receives,
 * then connect with the Hello in the CM REQ private data; the HelloAck comes
 * back in the REP. Passive side: a listener id on the port the native socket
 * holds; each request's Hello is checked, and while the accept queue has
 * room (listen() backlog, counted as TCP does) the child gets its QP and is
 * accepted with a HelloAck. Past the backlog the request is held unanswered
 * (rdma_cm sends an MRA, so the client keeps waiting as a TCP client whose
 * SYN was dropped) until accept() makes room.
 */
#define pr_fmt(fmt) "sdp: " fmt

#include <linux/in.h>
#include <linux/in6.h>
#include <net/ipv6.h>

#include "sdp.h"

/* Requests a listener holds beyond its backlog before refusing more. */
#define SDP_MAX_HELD	1024

static int sdp_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev);

static void sdp_bsdh_hello(struct sdp_bsdh *h, u8 mid, u32 len, u16 bufs)
{
	h->mid = mid;
	h->flags = 0;
	h->bufs = cpu_to_be16(bufs);
	h->len = cpu_to_be32(len);
	h->mseq = 0;
	h->mseq_ack = 0;
}

static bool sdp_size_ok(u32 size)
{
	return size >= SDP_MIN_BUF_SIZE && size <= SDP_MAX_BUF_SIZE;
}

static bool sdp_bufs_ok(u16 bufs)
{
	/* Data needs more than SDP_CTRL_CREDITS credits. */
	return bufs > SDP_CTRL_CREDITS + 1 && bufs < SDP_MAX_BUFS;
}

/* Check a Hello; returns 0 or the reason to refuse it. */
static int sdp_hello_check(const void *data, u8 len)
{
	const struct sdp_hh *hh = data;

	if (!hh || len < sizeof(*hh) || hh->bsdh.mid != SDP_MID_HELLO ||
	    be32_to_cpu(hh->bsdh.len) != sizeof(*hh))
		return SDP_REJ_MALFORMED;
	if (SDP_VERSION_MAJOR(hh->majv_minv) != SDP_VERSION_MAJOR(SDP_VERSION))
		return SDP_REJ_VERSION;
	if (!sdp_size_ok(be32_to_cpu(hh->localrcvsz)) ||
	    !sdp_bufs_ok(be16_to_cpu(hh->bsdh.bufs)))
		return SDP_REJ_MALFORMED;
	return 0;
}

static u8 sdp_ipv_cap(const struct sockaddr_storage *addr)
{
	return addr->ss_family == AF_INET6 ? SDP_IPV_CAP_IPV6 : SDP_IPV_CAP_IPV4;
}

static void sdp_conn_param(struct rdma_conn_param *p, const void *data, u8 len)
{
	memset(p, 0, sizeof(*p));
	p->private_data = data;
	p->private_data_len = len;
	p->flow_control = 1;
	p->retry_count = SDP_RETRY;
	p->rnr_retry_count = SDP_RNR_RETRY;
}

/* The connection is up: record its addresses and wake the waiters. */
static void sdp_established(struct sdp_sock *ssk, struct rdma_cm_id *id)
{
	struct sock *sk = &ssk->sk;

	memcpy(&ssk->saddr, &id->route.addr.src_addr, sizeof(ssk->saddr));
	memcpy(&ssk->daddr, &id->route.addr.dst_addr, sizeof(ssk->daddr));
	ssk->transport = SDP_TRANSPORT_RDMA;
	sdp_set_state(sk, TCP_ESTABLISHED);
	SDP_INC_STATS(sock_net(sk), SDP_MIB_ESTABLISHED);
	/* Whatever arrived before this event. */
	sdp_flush(ssk);
	if (!sock_flag(sk, SOCK_DEAD)) {
		sk->sk_state_change(sk);
		sk_wake_async(sk, SOCK_WAKE_IO, POLL_OUT);
	}
}

/* Start connecting to @dst; events continue in sdp_cm_handler(). */
int sdp_cm_connect(struct sdp_sock *ssk, struct sockaddr_storage *dst)
{
	struct sock *sk = &ssk->sk;
	struct sockaddr_storage src;
	struct sockaddr *srcp = NULL;
	struct rdma_cm_id *id;
	int err;

	id = rdma_create_id(sock_net(sk), sdp_cm_handler, ssk, RDMA_PS_TCP,
			    IB_QPT_RC);
	if (IS_ERR(id))
		return PTR_ERR(id);
	sock_hold(sk);
	ssk->id = id;

	/* An explicit bind() chose the source address or port. */
	if (inet_sk(ssk->tcp->sk)->inet_num &&
	    kernel_getsockname(ssk->tcp, (struct sockaddr *)&src) > 0) {
		sdp_addr_unmap(&src);
		if (src.ss_family == dst->ss_family)
			srcp = (struct sockaddr *)&src;
	}
	memcpy(&ssk->daddr, dst, sizeof(ssk->daddr));
	err = rdma_resolve_addr(id, srcp, (struct sockaddr *)dst,
				SDP_RESOLVE_TIMEOUT_MS);
	if (err)
		return err;
	SDP_INC_STATS(sock_net(sk), SDP_MIB_ACTIVE_OPENS);
	return 0;
}

static int sdp_cm_route_resolved(struct sdp_sock *ssk, struct rdma_cm_id *id)
{
	struct rdma_conn_param param;
	struct sdp_conn *c;
	struct sdp_hh hh = {};
	int err;

	err = sdp_conn_create(ssk, id, sdp_buf_size);
	if (err)
		return err;
	c = ssk->conn;
	sdp_bsdh_hello(&hh.bsdh, SDP_MID_HELLO, sizeof(hh), sdp_conn_hello_bufs(c));
	hh.majv_minv = SDP_VERSION;
	hh.ipv_cap = sdp_ipv_cap(&ssk->daddr);
	hh.desremrcvsz = cpu_to_be32(c->rcv_size);
	hh.localrcvsz = cpu_to_be32(c->rcv_size);
	sdp_conn_param(&param, &hh, sizeof(hh));
	memcpy(&ssk->saddr, &id->route.addr.src_addr, sizeof(ssk->saddr));
	return rdma_connect_locked(id, &param);
}

/* The REP came back: its HelloAck must be one we can work with. */
static int sdp_active_established(struct sdp_sock *ssk, struct rdma_cm_id *id,
				  const struct rdma_cm_event *ev)
{
	const struct sdp_hah *hah = ev->param.conn.private_data;
	int err;

	if (!hah || ev->param.conn.private_data_len < sizeof(*hah) ||
	    hah->bsdh.mid != SDP_MID_HELLO_ACK ||
	    SDP_VERSION_MAJOR(hah->majv_minv) != SDP_VERSION_MAJOR(SDP_VERSION) ||
	    !sdp_size_ok(be32_to_cpu(hah->actrcvsz)) ||
	    !sdp_bufs_ok(be16_to_cpu(hah->bsdh.bufs))) {
		SDP_INC_STATS(sock_net(&ssk->sk), SDP_MIB_BAD_HELLO);
		return -ECONNREFUSED;
	}
	err = sdp_conn_start(ssk->conn, be32_to_cpu(hah->actrcvsz),
			     be16_to_cpu(hah->bsdh.bufs));
	if (err)
		return err;
	sdp_established(ssk, id);
	return 0;
}

/* The connect attempt failed: the socket is closed with @err. */
static void sdp_connect_failed(struct sdp_sock *ssk, int err)
{
	SDP_INC_STATS(sock_net(&ssk->sk), SDP_MIB_CONNECT_FAILED);
	sdp_done(&ssk->sk, err);
}

static int sdp_cm_errno(const struct rdma_cm_event *ev)
{
	switch (ev->event) {
	case RDMA_CM_EVENT_REJECTED:
		return ECONNREFUSED;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
		return ev->status < 0 ? -ev->status : EHOSTUNREACH;
	default:
		return ETIMEDOUT;
	}
}

/*
 * Listener: accept the child over RDMA. The caller holds the child id's
 * handler mutex (inside its event, or through rdma_lock_handler()).
 */
static int sdp_passive_accept(struct sdp_sock *child)
{
	const struct sdp_hh *hh = &child->peer_hh;
	struct rdma_cm_id *id = child->id;
	struct rdma_conn_param param;
	struct sdp_hah hah = {};
	struct sdp_conn *c;
	int err;

	lock_sock(&child->sk);
	err = -ECONNABORTED;
	if (child->sk.sk_state != TCP_SYN_RECV)
		goto out;
	err = sdp_conn_create(child, id, be32_to_cpu(hh->desremrcvsz));
	if (err)
		goto out;
	c = child->conn;
	sdp_bsdh_hello(&hah.bsdh, SDP_MID_HELLO_ACK, sizeof(hah),
		       sdp_conn_hello_bufs(c));
	err = sdp_conn_start(c, be32_to_cpu(hh->localrcvsz),
			     be16_to_cpu(hh->bsdh.bufs));
	if (err)
		goto out;
	hah.majv_minv = SDP_VERSION;
	hah.ipv_cap = hh->ipv_cap;
	hah.actrcvsz = cpu_to_be32(c->rcv_size);
	sdp_conn_param(&param, &hah, sizeof(hah));
	err = rdma_accept(id, &param);
	if (!err)
		SDP_INC_STATS(sock_net(&child->sk), SDP_MIB_PASSIVE_OPENS);
out:
	if (err)
		sdp_conn_free(child);
	release_sock(&child->sk);
	return err;
}

/*
 * A child that never made it (refused at accept, or its client gave up):
 * take it off the listener's queues and let it go.
 */
static void sdp_child_failed(struct sdp_sock *child, int err)
{
	struct sdp_sock *lssk = child->parent;
	struct sock *lsk = &lssk->sk;
	bool mine;

	lock_sock(lsk);
	mine = !list_empty(&child->child);
	if (mine) {
		list_del_init(&child->child);
		if (child->held)
			lssk->held_nr--;
		else
			sk_acceptq_removed(lsk);
	}
	release_sock(lsk);
	/* Otherwise the listener is closing and drops it itself. */
	if (!mine)
		return;
	lock_sock(&child->sk);
	sock_set_flag(&child->sk, SOCK_DEAD);
	sdp_done(&child->sk, err);
	release_sock(&child->sk);
}

/* A child for the request on @id; not yet on any of the listener's queues. */
static struct sdp_sock *sdp_child_alloc(struct sdp_sock *lssk,
					struct rdma_cm_id *id,
					const struct sdp_hh *hh)
{
	struct sock *lsk = &lssk->sk;
	struct sdp_sock *child;

	child = sdp_sk_alloc(sock_net(lsk), NULL, lsk->sk_kern_sock);
	if (!child)
		return NULL;
	sock_set_flag(&child->sk, SOCK_DEAD);
	if (sdp_inherit(child, lssk)) {
		sdp_destroy(child);
		return NULL;
	}
	sock_reset_flag(&child->sk, SOCK_DEAD);
	child->peer_hh = *hh;
	sock_hold(lsk);
	child->parent = lssk;
	sock_hold(&child->sk);
	child->id = id;
	id->context = child;
	sdp_set_state(&child->sk, TCP_SYN_RECV);
	return child;
}

/* Free a child nobody saw; rdma_cm destroys its id (handler returns 1). */
static void sdp_child_discard(struct sdp_sock *child)
{
	child->id = NULL;
	sock_put(&child->sk);
	sock_set_flag(&child->sk, SOCK_DEAD);
	sdp_destroy(child);
}

static int sdp_cm_req(struct sdp_sock *lssk, struct rdma_cm_id *id,
		      const struct rdma_cm_event *ev)
{
	struct sdp_rej rej = { .mid = SDP_MID_HELLO };
	struct sock *lsk = &lssk->sk;
	struct sdp_sock *child;
	int err;

	rej.reason = sdp_hello_check(ev->param.conn.private_data,
				     ev->param.conn.private_data_len);
	if (rej.reason) {
		SDP_INC_STATS(sock_net(lsk), SDP_MIB_BAD_HELLO);
		goto reject;
	}
	rej.reason = SDP_REJ_NOMEM;
	child = sdp_child_alloc(lssk, id, ev->param.conn.private_data);
	if (!child)
		goto reject;

	lock_sock(lsk);
	if (lsk->sk_state != TCP_LISTEN || lssk->held_nr >= SDP_MAX_HELD) {
		rej.reason = SDP_REJ_BUSY;
		release_sock(lsk);
		sdp_child_discard(child);
		goto reject;
	}
	if (sk_acceptq_is_full(lsk)) {
		list_add_tail(&child->child, &lssk->held_q);
		child->held = true;
		lssk->held_nr++;
		SDP_INC_STATS(sock_net(lsk), SDP_MIB_BACKLOG_HELD);
		release_sock(lsk);
		return 0;
	}
	list_add_tail(&child->child, &lssk->syn_q);
	sk_acceptq_added(lsk);
	release_sock(lsk);

	/* The child is the listener's now: failures go through its teardown. */
	err = sdp_passive_accept(child);
	if (err)
		sdp_child_failed(child, -err);
	return 0;

reject:
	SDP_INC_STATS(sock_net(lsk), SDP_MIB_REJECT_SENT);
	rdma_reject(id, &rej, sizeof(rej), IB_CM_REJ_CONSUMER_DEFINED);
	return 1;
}

/* accept() made room: answer held requests, oldest first. */
void sdp_accept_work(struct work_struct *work)
{
	struct sdp_sock *lssk = container_of(work, struct sdp_sock, accept_work);
	struct sock *lsk = &lssk->sk;
	struct sdp_sock *child;
	int err;

	for (;;) {
		lock_sock(lsk);
		if (lsk->sk_state != TCP_LISTEN || list_empty(&lssk->held_q) ||
		    sk_acceptq_is_full(lsk)) {
			release_sock(lsk);
			break;
		}
		child = list_first_entry(&lssk->held_q, struct sdp_sock, child);
		list_move_tail(&child->child, &lssk->syn_q);
		child->held = false;
		lssk->held_nr--;
		sk_acceptq_added(lsk);
		release_sock(lsk);

		/*
		 * A held child's id is destroyed only by its teardown, which
		 * runs on this same ordered workqueue.
		 */
		rdma_lock_handler(child->id);
		err = sdp_passive_accept(child);
		rdma_unlock_handler(child->id);
		if (err)
			sdp_child_failed(child, -err);
	}
	sock_put(lsk);
}

/* The passive side is established: move the child to the accept queue. */
static void sdp_passive_established(struct sdp_sock *child)
{
	struct sdp_sock *lssk = child->parent;
	struct sock *lsk = &lssk->sk;

	lock_sock(lsk);
	if (lsk->sk_state == TCP_LISTEN && !list_empty(&child->child)) {
		list_move_tail(&child->child, &lssk->accept_q);
		lsk->sk_data_ready(lsk);
	}
	release_sock(lsk);
}

static int sdp_cm_device_removal(struct sdp_sock *ssk, struct rdma_cm_id *id)
{
	struct sock *sk = &ssk->sk;
	bool mine;

	lock_sock(sk);
	if (ssk->conn && ssk->conn->id == id)
		sdp_conn_free(ssk);
	mine = cmpxchg(&ssk->id, id, NULL) == id;
	if (mine) {
		set_bit(SDP_F_CM_GONE, &ssk->flags);
		if (sk->sk_state != TCP_CLOSE && sk->sk_state != TCP_LISTEN)
			sdp_done(sk, ECONNRESET);
	}
	release_sock(sk);
	if (mine)
		sock_put(sk);
	/* Non-zero: rdma_cm destroys the id (we own it and nobody else will). */
	return mine;
}

static int sdp_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct sdp_sock *ssk = id->context;
	struct sock *sk = &ssk->sk;
	int err = 0;

	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
		return sdp_cm_req(ssk, id, ev);
	if (ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL)
		return sdp_cm_device_removal(ssk, id);

	lock_sock(sk);
	if (READ_ONCE(ssk->id) != id)
		goto out;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (sk->sk_state != TCP_SYN_SENT)
			break;
		err = rdma_resolve_route(id, SDP_RESOLVE_TIMEOUT_MS);
		if (err)
			sdp_connect_failed(ssk, -err);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		if (sk->sk_state != TCP_SYN_SENT)
			break;
		err = sdp_cm_route_resolved(ssk, id);
		if (err)
			sdp_connect_failed(ssk, -err);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		if (sk->sk_state == TCP_SYN_SENT) {
			err = sdp_active_established(ssk, id, ev);
			if (err)
				sdp_connect_failed(ssk, -err);
		} else if (sk->sk_state == TCP_SYN_RECV && ssk->parent) {
			sdp_established(ssk, id);
			release_sock(sk);
			sdp_passive_established(ssk);
			return 0;
		}
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
		if (sk->sk_state == TCP_SYN_SENT) {
			sdp_connect_failed(ssk, sdp_cm_errno(ev));
		} else if (sk->sk_state == TCP_SYN_RECV && ssk->parent) {
			release_sock(sk);
			sdp_child_failed(ssk, sdp_cm_errno(ev));
			return 0;
		}
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		set_bit(SDP_F_CM_GONE, &ssk->flags);
		if (sk->sk_state == TCP_SYN_RECV && ssk->parent) {
			release_sock(sk);
			sdp_child_failed(ssk, ECONNRESET);
			return 0;
		}
		/*
		 * The QP is in error now: its flushed receives tell an orderly
		 * end (DisConn came first) from a reset.
		 */
		sdp_flush(ssk);
		break;
	default:
		break;
	}
out:
	release_sock(sk);
	return 0;
}

/* Listen over RDMA on the address and port the native socket holds. */
int sdp_cm_listen(struct sdp_sock *ssk)
{
	struct sock *sk = &ssk->sk;
	struct sockaddr_storage addr;
	struct rdma_cm_id *id;
	int err;

	err = kernel_getsockname(ssk->tcp, (struct sockaddr *)&addr);
	if (err < 0)
		return err;
	sdp_addr_unmap(&addr);
	id = rdma_create_id(sock_net(sk), sdp_cm_handler, ssk, RDMA_PS_TCP,
			    IB_QPT_RC);
	if (IS_ERR(id))
		return PTR_ERR(id);
	if (addr.ss_family == AF_INET6)
		rdma_set_afonly(id, ipv6_only_sock(ssk->tcp->sk));
	err = rdma_bind_addr(id, (struct sockaddr *)&addr);
	if (!err)
		err = rdma_listen(id, SDP_MAX_HELD);
	if (err) {
		/* No event can be pending on an id that never listened. */
		rdma_destroy_id(id);
		return err;
	}
	sock_hold(sk);
	ssk->id = id;
	return 0;
}

/* Destroy the id; never with lock_sock() held (handlers take it). */
void sdp_cm_destroy(struct sdp_sock *ssk)
{
	struct rdma_cm_id *id = xchg(&ssk->id, NULL);

	if (!id)
		return;
	rdma_destroy_id(id);
	sock_put(&ssk->sk);
}
