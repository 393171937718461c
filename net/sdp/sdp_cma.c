// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol: connection management over rdma_cm.
 *
 * Active side: the socket layer gives the connection an id bound to its
 * port and has it resolve the destination; route resolved, the QP is
 * created and receives posted, then the Hello goes in the CM REQ private
 * data and the HelloAck comes back in the REP. Passive side: a listener's
 * id gets each request; its Hello is checked here, the socket layer
 * decides whether a child takes it (its queues, sdp_listen.c), and the
 * child's connection is accepted with a HelloAck. Every id's events come
 * to sdp_cm_handler(), with the connection as their context.
 */
#define pr_fmt(fmt) "sdp: " fmt

#include <linux/in.h>
#include <linux/in6.h>
#include <linux/jhash.h>
#include <net/ipv6.h>
#include <rdma/ib_cm.h>

#include "sdp_rdma.h"
#include "sdp_trace.h"

static int sdp_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev);

static_assert(SDP_REQ_DATA_MAX == IB_CM_REQ_PRIVATE_DATA_SIZE - 36);
static_assert(SDP_REP_DATA_MAX == IB_CM_REP_PRIVATE_DATA_SIZE);

/* The CM parameters of either end, and its QP's ACK timeout. */
int sdp_conn_param(struct rdma_cm_id *id, struct rdma_conn_param *p,
		   const void *data, u8 len, u8 rd_in, u8 rd_out)
{
	memset(p, 0, sizeof(*p));
	p->private_data = data;
	p->private_data_len = len;
	/* RDMA Reads of our SrcAvails the peer may have in flight; ours of its */
	p->responder_resources = rd_in;
	p->initiator_depth = rd_out;
	p->flow_control = 1;
	p->retry_count = SDP_RETRY;
	p->rnr_retry_count = SDP_RNR_RETRY;
	return rdma_set_ack_timeout(id, SDP_ACK_TIMEOUT);
}

/*
 * The connection is up: record what tests and tools need to find its
 * packets (SDP_INFO, sock_diag), tell the socket, and take in whatever
 * arrived before this event.
 */
static void sdp_established(struct sdp_conn *c, struct rdma_cm_id *id)
{
	struct sock *sk = c->sk;
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;

	if (c->v.live) {
		if (!ib_query_qp(c->qp, &attr, IB_QP_PATH_MTU | IB_QP_DEST_QPN, &init)) {
			c->path_mtu = ib_mtu_enum_to_int(attr.path_mtu);
			c->dest_qpn = attr.dest_qp_num;
		}
		c->port_num = id->port_num;
	}
	memcpy(&c->saddr, &id->route.addr.src_addr, sizeof(c->saddr));
	memcpy(&c->daddr, &id->route.addr.dst_addr, sizeof(c->daddr));
	SDP_INC_STATS(sock_net(sk), SDP_MIB_ESTABLISHED);
	c->rx_stamp = jiffies;
	sdp_up->established(sk);
	sdp_conn_flush(c);
	if (!sock_flag(sk, SOCK_DEAD)) {
		sk->sk_state_change(sk);
		sk_wake_async(sk, SOCK_WAKE_IO, POLL_OUT);
	}
}

/* An id for the connection's events, holding a reference to its socket. */
static struct rdma_cm_id *sdp_cm_create_id(struct sdp_conn *c)
{
	struct rdma_cm_id *id;

	id = sdp_fault(SDP_FAULT_CM_ID) ? ERR_PTR(-ENOMEM) :
	     rdma_create_id(sock_net(c->sk), sdp_cm_handler, c, RDMA_PS_TCP, IB_QPT_RC);
	if (!IS_ERR(id))
		sock_hold(c->sk);
	return id;
}

/*
 * A new id for a connect to @dst (IPv4 as sockaddr_in), which the
 * connection owns (with its reference) from now on: through the netdev
 * SO_BINDTODEVICE names, as TCP's connect
 * goes, and with @tos (IP_TOS, IPV6_TCLASS) as the traffic class of the
 * route rdma_cm resolves: RoCE puts it in every packet's IP header, the
 * peer's queue pair takes it from our request. 0 leaves the device's.
 */
int sdp_cm_new(struct sdp_conn *c, const struct sockaddr_storage *dst,
	       int bound_dev_if, u8 tos)
{
	struct rdma_cm_id *id;

	if (WARN_ON_ONCE(c->id))
		return -EBUSY;
	id = sdp_cm_create_id(c);
	if (IS_ERR(id))
		return PTR_ERR(id);
	memcpy(&c->daddr, dst, sizeof(c->daddr));
	id->route.addr.dev_addr.bound_dev_if = bound_dev_if;
	if (tos)
		rdma_set_service_type(id, tos);
	c->id = id;
	return 0;
}

/* Bind the id to @src (the native socket's address and port). */
int sdp_cm_bind(struct sdp_conn *c, const struct sockaddr_storage *src, bool reuse)
{
	if (reuse)
		rdma_set_reuseaddr(c->id, 1);
	return rdma_bind_addr(c->id, (struct sockaddr *)src);
}

/* Start connecting; events go on in sdp_cm_handler(). */
int sdp_cm_resolve(struct sdp_conn *c)
{
	return rdma_resolve_addr(c->id, NULL, (struct sockaddr *)&c->daddr,
				 SDP_RESOLVE_TIMEOUT_MS);
}

static int sdp_cm_route_resolved(struct sdp_conn *c, struct rdma_cm_id *id)
{
	struct rdma_conn_param param;
	struct sdp_hh hh;
	int err;

	err = sdp_conn_setup(c, U32_MAX);
	if (err)
		return err;
	sdp_proto_hello(&hh, sdp_conn_hello_bufs(c), c->rcv_size,
			c->daddr.ss_family == AF_INET6,
			c->zc_offered ? SDP_ZC_ADVERTS : 0,
			c->zr_offered ? SDP_CAP_SINKAVAIL : 0);
	err = sdp_conn_param(id, &param, &hh, sizeof(hh),
			     c->zc_offered ? c->sdev->quirks.rd_depth : 0,
			     c->zc_offered ? c->sdev->quirks.rd_depth : 0);
	if (err)
		return err;
	param.qp_num = c->qp->qp_num;
	memcpy(&c->saddr, &id->route.addr.src_addr, sizeof(c->saddr));
	c->req_sent = jiffies;
	return rdma_connect_locked(id, &param);
}

/*
 * The REP came back: its HelloAck must be one we can work with, and the
 * send ring it sizes must be had. With our own QP (sdp_conn_rts()) the
 * event is CONNECT_RESPONSE: we bring the QP up and send the RTU
 * (rdma_accept() on this side), as rdma_cm would, or, refusing, a reject,
 * so that the listener never counts the connection as up (no child of
 * ours waits in its accept queue, reset, while we fall back).
 * 0, or why we fall back (enum sdp_fallback_reason).
 */
static int sdp_active_established(struct sdp_conn *c, struct rdma_cm_id *id,
				  const struct rdma_cm_event *ev)
{
	const struct sdp_hah *hah = ev->param.conn.private_data;
	int mib = sdp_proto_check_hello_ack(hah, ev->param.conn.private_data_len);
	int reason = 0, err;

	if (mib) {
		SDP_INC_STATS(sock_net(c->sk), mib);
		reason = SDP_FB_VERSION;
	} else if (sdp_conn_start(c, be32_to_cpu(hah->actrcvsz),
				  be16_to_cpu(hah->bsdh.bufs))) {
		reason = SDP_FB_RESOURCES;
	} else if (c->zc_offered) {
		/*
		 * The REP's Read depths, as the CM gives them from our side
		 * (responder_resources: the Reads it will issue, ours to
		 * serve): we read its SrcAvails if it serves our Reads; it
		 * reads ours if it offered adverts and issues Reads.
		 */
		c->rd_in = min(c->sdev->quirks.rd_depth, ev->param.conn.responder_resources);
		c->rd_out = min(c->sdev->quirks.rd_depth, ev->param.conn.initiator_depth);
		c->zc_peer = hah->ext_max_adverts && c->rd_in;
		c->zc_offered = c->rd_out;
	}
	/* it takes our SinkAvails, if the device lets us offer them */
	c->zr_peer = !reason && c->zr_offered && (hah->caps & SDP_CAP_SINKAVAIL);
	if (ev->event == RDMA_CM_EVENT_CONNECT_RESPONSE) {
		/*
		 * The peer's REJ can come while we handle the REP (its child
		 * died before our RTU): the CM leaves the REP's state at once,
		 * and our QP's transitions (-ECONNREFUSED) or the RTU
		 * (-EINVAL) fail. Refused, as when that REJ is our event.
		 */
		if (!reason) {
			err = sdp_conn_rts(c);
			if (err == -ECONNREFUSED)
				return SDP_FB_REJECTED;
			if (err)
				reason = SDP_FB_RESOURCES;
		}
		if (reason) {
			rdma_reject(id, NULL, 0, IB_CM_REJ_CONSUMER_DEFINED);
			return reason;
		}
		err = rdma_accept(id, NULL);
		if (err)
			return err == -EINVAL ? SDP_FB_REJECTED : SDP_FB_RESOURCES;
	}
	if (reason)
		return reason;
	sdp_established(c, id);
	return 0;
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
 * Why an SDP listener refused us (enum sdp_rej_reason), 0 if none did;
 * for SDP_REJ_BUSY, *retry_ms is when it said a place frees.
 */
static u8 sdp_cm_rej_reason(struct rdma_cm_id *id, struct rdma_cm_event *ev,
			    u32 *retry_ms)
{
	const void *data;
	u8 len = 0;

	*retry_ms = 0;
	if (ev->event != RDMA_CM_EVENT_REJECTED)
		return 0;
	data = rdma_consumer_reject_data(id, ev, &len);
	return sdp_proto_check_rej(data, len, retry_ms);
}

/*
 * Why a failed RDMA connect falls back (enum sdp_fallback_reason); @rej is
 * an SDP listener's reason for refusing our Hello, 0 for nobody listening.
 */
static int sdp_cm_fb_reason(struct rdma_cm_event *ev, u8 rej)
{
	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_ERROR:
		return SDP_FB_NO_DEVICE;
	case RDMA_CM_EVENT_ROUTE_ERROR:
		return SDP_FB_NO_ROUTE;
	case RDMA_CM_EVENT_REJECTED:
		if (rej == SDP_REJ_VERSION)
			return SDP_FB_VERSION;
		/* short of memory for this connection: nothing to cache */
		if (rej == SDP_REJ_NOMEM)
			return SDP_FB_RESOURCES;
		return SDP_FB_REJECTED;
	default:
		return SDP_FB_TIMEOUT;
	}
}

/*
 * Refuse @id's request, saying why (enum sdp_rej_reason) and, if busy, when
 * to try again; counted.
 */
static void sdp_req_reject(struct sock *lsk, struct rdma_cm_id *id, u8 reason,
			   u32 retry_ms)
{
	struct sdp_rej rej;

	sdp_proto_rej(&rej, reason, retry_ms);
	SDP_INC_STATS(sock_net(lsk), SDP_MIB_REJECT_SENT);
	rdma_reject(id, &rej, sizeof(rej), IB_CM_REJ_CONSUMER_DEFINED);
}

/*
 * The socket layer's child takes the request: its id (and the reference
 * the id holds), and the Hello it came with.
 */
void sdp_conn_take_req(struct sdp_conn *c, const struct sdp_req *req)
{
	c->peer_hh = *(const struct sdp_hh *)req->hello;
	c->passive = true;
	sock_hold(c->sk);
	c->id = req->id;
	c->id->context = c;
}

/* ... or gives it back, unanswered: rdma_cm destroys the id (handler returns 1). */
void sdp_conn_drop_req(struct sdp_conn *c)
{
	c->id = NULL;
	sock_put(c->sk);
}

/* Accept the child over RDMA, inside its CONNECT_REQUEST event. */
static int sdp_passive_accept(struct sdp_conn *c)
{
	const struct sdp_hh *hh = &c->peer_hh;
	struct sock *sk = c->sk;
	struct rdma_conn_param param;
	struct sdp_hah hah;
	int err;

	lock_sock(sk);
	err = -ECONNABORTED;
	if (sk->sk_state != TCP_SYN_RECV)
		goto out;
	/* our memory: the peer may wish for smaller buffers, not larger */
	err = sdp_fault(SDP_FAULT_ACCEPT) ? -ENOMEM :
	      sdp_conn_setup(c, be32_to_cpu(hh->desremrcvsz));
	if (err)
		goto out;
	/*
	 * Zero-copy each way the REQ allows: we read the client's SrcAvails
	 * if it serves Reads, it reads ours if it offered adverts and issues
	 * Reads; as many at once as both take.
	 */
	if (c->zc_offered) {
		c->rd_in = min(c->sdev->quirks.rd_depth, c->peer_rd_in);
		c->rd_out = min(c->sdev->quirks.rd_depth, c->peer_rd_out);
	}
	c->zc_peer = c->rd_in && hh->max_adverts;
	c->zc_offered = c->rd_out;
	c->zr_peer = c->zr_offered && (hh->caps & SDP_CAP_SINKAVAIL);
	sdp_proto_hello_ack(&hah, sdp_conn_hello_bufs(c), c->rcv_size, hh->ipv_cap,
			    c->zc_offered ? SDP_ZC_ADVERTS : 0,
			    c->zr_offered ? SDP_CAP_SINKAVAIL : 0);
	err = sdp_conn_start(c, be32_to_cpu(hh->localrcvsz),
			     be16_to_cpu(hh->bsdh.bufs));
	if (err)
		goto out;
	err = sdp_conn_param(c->id, &param, &hah, sizeof(hah), c->rd_in, c->rd_out);
	if (!err)
		err = sdp_conn_rts(c);
	if (!err) {
		param.qp_num = c->qp->qp_num;
		err = rdma_accept(c->id, &param);
	}
	if (!err)
		SDP_INC_STATS(sock_net(sk), SDP_MIB_PASSIVE_OPENS);
out:
	if (err)
		sdp_conn_release(c);
	release_sock(sk);
	return err;
}

/*
 * A request on the listener @lc's id (@id is the request's own): its Hello
 * is judged here, the socket layer's queues decide, and a child's
 * connection is accepted. 1: refused, rdma_cm destroys @id.
 */
static int sdp_cm_req(struct sdp_conn *lc, struct rdma_cm_id *id,
		      const struct rdma_cm_event *ev)
{
	const struct sockaddr *peer = (const struct sockaddr *)&id->route.addr.dst_addr;
	struct sdp_req req = {
		.id = id,
		.hello = ev->param.conn.private_data,
		.local = id->route.addr.src_addr,
		.peer = id->route.addr.dst_addr,
		.ifindex = id->route.addr.dev_addr.bound_dev_if,
		/* (each refused client hears of one place: sdp_listen.c) */
		.who = jhash(peer, rdma_addr_size(peer), 0) | 1,
	};
	struct sdp_conn *c;
	u8 reason;
	int err;

	sdp_addr_unmap(&req.local);
	sdp_addr_unmap(&req.peer);
	reason = sdp_proto_check_hello(ev->param.conn.private_data,
				       ev->param.conn.private_data_len);
	req.bad_hello = reason;
	c = sdp_up->request(lc->sk, &req);
	if (c) {
		/*
		 * The REQ's Read depths from our side: the client's Reads we
		 * would serve, and ours it would
		 */
		c->peer_rd_in = ev->param.conn.responder_resources;
		c->peer_rd_out = ev->param.conn.initiator_depth;
		/*
		 * The child is the listener's now: failures go through its
		 * queue. Short of resources, say so: the client falls back
		 * for this one connection instead of taking the port for
		 * TCP-only (an id destroyed unanswered sends a bare reject).
		 */
		err = sdp_passive_accept(c);
		if (err) {
			if (err != -ECONNABORTED)
				sdp_req_reject(c->sk, id, SDP_REJ_NOMEM, 0);
			sdp_up->child_failed(c->sk, -err);
		}
		return 0;
	}
	switch (req.verdict) {
	case SDP_VERDICT_IGNORE:
		rdma_reject(id, NULL, 0, IB_CM_REJ_CONSUMER_DEFINED);
		return 1;
	case SDP_VERDICT_BAD_HELLO:
		SDP_INC_STATS(sock_net(lc->sk), SDP_MIB_BAD_HELLO);
		break;
	case SDP_VERDICT_BUSY:
		reason = SDP_REJ_BUSY;
		break;
	default:
		reason = SDP_REJ_NOMEM;
		break;
	}
	sdp_req_reject(lc->sk, id, reason, req.retry_ms);
	return 1;
}

static int sdp_cm_device_removal(struct sdp_conn *c, struct rdma_cm_id *id)
{
	struct sock *sk = c->sk;
	bool mine;

	lock_sock(sk);
	if (c->v.live && c->id == id)
		sdp_conn_release(c);
	/* A listener's id not listening yet: its armer destroys it at once. */
	if (c->arming == id)
		c->arming = NULL;
	mine = cmpxchg(&c->id, id, NULL) == id;
	if (mine) {
		set_bit(SDP_C_CM_GONE, &c->flags);
		sdp_up->lost(sk);
	}
	release_sock(sk);
	if (mine) {
		/* A child the listener still holds goes with its device. */
		if (c->passive)
			sdp_up->child_failed(sk, ECONNRESET);
		sock_put(sk);
	}
	/* Non-zero: rdma_cm destroys the id (we own it and nobody else will). */
	return mine;
}

/*
 * The peer disconnected: move our QP to error too, so that its flushed
 * receives tell an orderly end (DisConn came first) from a reset.
 */
static void sdp_cm_disconnected(struct sdp_conn *c, struct rdma_cm_id *id)
{
	if (!test_and_set_bit(SDP_C_CM_GONE, &c->flags)) {
		sdp_conn_qp_err(c);
		rdma_disconnect(id);
	}
	sdp_conn_flush(c);
}

static int sdp_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct sdp_conn *c = id->context;
	struct sock *sk = c->sk;
	u32 retry_ms;
	bool child;
	int err, reason;
	u8 rej;

	trace_sdp_cm_event(sk, rdma_event_msg(ev->event), ev->status);
	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
		return sdp_cm_req(c, id, ev);
	if (ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL)
		return sdp_cm_device_removal(c, id);

	lock_sock(sk);
	if (READ_ONCE(c->id) != id) {
		release_sock(sk);
		return 0;
	}
	/* A child answers to its listener's queues until accept(). */
	child = c->passive;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		if (sk->sk_state != TCP_SYN_SENT)
			break;
		if (ev->event == RDMA_CM_EVENT_ADDR_RESOLVED) {
			err = rdma_resolve_route(id, SDP_RESOLVE_TIMEOUT_MS);
			if (err)
				sdp_up->fallback(sk, SDP_FB_NO_ROUTE);
		} else {
			err = sdp_cm_route_resolved(c, id);
			if (err)
				sdp_up->fallback(sk, SDP_FB_RESOURCES);
		}
		break;
	case RDMA_CM_EVENT_CONNECT_RESPONSE:
	case RDMA_CM_EVENT_ESTABLISHED:
		if (child) {
			if (sk->sk_state != TCP_CLOSE)
				sdp_established(c, id);
			release_sock(sk);
			sdp_up->child_established(sk);
			return 0;
		}
		if (sk->sk_state == TCP_SYN_SENT) {
			reason = sdp_active_established(c, id, ev);
			if (reason)
				sdp_up->fallback(sk, reason);
		}
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
		if (child) {
			release_sock(sk);
			sdp_up->child_failed(sk, sdp_cm_errno(ev));
			return 0;
		}
		if (ev->event == RDMA_CM_EVENT_REJECTED &&
		    ((1 << sk->sk_state) & ~(TCPF_SYN_SENT | TCPF_CLOSE | TCPF_LISTEN))) {
			/*
			 * Our connect completed, the peer's did not: its child
			 * died (its listener stopped) before our RTU came, and
			 * its CM refuses what we took as connected. A reset, as
			 * TCP's RST to the last ACK of a handshake its listener
			 * dropped; else an orphan would wait out tcp_fin_timeout
			 * for a DisConn that cannot come.
			 */
			SDP_INC_STATS(sock_net(sk), SDP_MIB_REJECT_LATE);
			trace_sdp_conn_error(sk, sdp_mib_name(SDP_MIB_REJECT_LATE), ECONNRESET);
			sdp_up->done(sk, sk->sk_state == TCP_CLOSE_WAIT ? EPIPE : ECONNRESET);
			break;
		}
		if (sk->sk_state != TCP_SYN_SENT)
			break;
		rej = sdp_cm_rej_reason(id, ev, &retry_ms);
		if (rej == SDP_REJ_BUSY)
			sdp_up->busy(sk, retry_ms, jiffies - c->req_sent);
		else
			sdp_up->fallback(sk, sdp_cm_fb_reason(ev, rej));
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		/*
		 * Only a peer whose connect completed sends a DREQ, maybe
		 * before our established event: a child still on its
		 * listener's syn queue then ends in the accept queue, reset.
		 */
		if (child)
			set_bit(SDP_C_PEER_UP, &c->flags);
		sdp_cm_disconnected(c, id);
		break;
	default:
		break;
	}
	release_sock(sk);
	return 0;
}

/*
 * Listen over RDMA on @addr (the native listener's, IPv4 unmapped);
 * called unlocked by whoever claimed the listener's arming (the socket
 * layer), so that nobody else stops it meanwhile. rdma_listen() runs
 * unlocked: a wildcard listen that fails half way destroys the ids it
 * made, waiting for their handlers, and sdp_cm_req() runs in them.
 * Meanwhile the id is only c->arming, which nobody else destroys (a
 * device removal tells us by clearing it); it becomes c->id once it
 * listens, if the socket still does (else -ECONNABORTED; *@listened says
 * whether rdma_listen() had worked). Requests may arrive on it before.
 */
int sdp_cm_listen(struct sdp_conn *c, const struct sockaddr_storage *addr,
		  bool afonly, bool reuse, int backlog, bool *listened)
{
	struct sock *sk = c->sk;
	struct rdma_cm_id *id;
	int err;

	*listened = false;
	id = sdp_cm_create_id(c);
	if (IS_ERR(id))
		return PTR_ERR(id);
	if (addr->ss_family == AF_INET6)
		rdma_set_afonly(id, afonly);
	if (reuse)
		rdma_set_reuseaddr(id, 1);
	lock_sock(sk);
	if (!sdp_up->listening(sk)) {
		release_sock(sk);
		rdma_destroy_id(id);
		sock_put(sk);
		return -ECONNABORTED;
	}
	c->arming = id;
	release_sock(sk);

	err = rdma_bind_addr(id, (struct sockaddr *)addr);
	if (!err)
		err = rdma_listen(id, backlog);
	*listened = !err;

	lock_sock(sk);
	if (!sdp_up->listening(sk)) {
		err = -ECONNABORTED;
	} else if (c->arming != id) {
		err = -ENODEV;
	} else if (!err && !WARN_ON_ONCE(c->id)) {
		c->id = id;
		id = NULL;
	}
	c->arming = NULL;
	release_sock(sk);
	if (id) {
		rdma_destroy_id(id);
		sock_put(sk);
	}
	return err;
}

/* Does the connection hold an id (a listener: does it listen over RDMA)? */
bool sdp_cm_has_id(const struct sdp_conn *c)
{
	return READ_ONCE(c->id);
}

/* Disconnect the QP, once: its work requests flush, the peer is told. */
void sdp_cm_disconnect(struct sdp_conn *c)
{
	if (c->v.live && !test_and_set_bit(SDP_C_CM_GONE, &c->flags)) {
		sdp_conn_qp_err(c);
		rdma_disconnect(c->id);
	}
}

/* Destroy the id; never with the socket locked (handlers take the lock). */
void sdp_cm_destroy(struct sdp_conn *c)
{
	struct rdma_cm_id *id = xchg(&c->id, NULL);

	if (!id)
		return;
	rdma_destroy_id(id);
	sock_put(c->sk);
}
