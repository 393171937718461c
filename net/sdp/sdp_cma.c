// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol: connection management over rdma_cm.
 *
 * Active side: resolve address and route, create the QP and post receives,
 * then connect with the Hello in the CM REQ private data; the HelloAck comes
 * back in the REP. The passive side is in sdp_listen.c; both share the event
 * handler below.
 */
#define pr_fmt(fmt) "sdp: " fmt

#include <linux/in.h>
#include <linux/in6.h>
#include <net/ipv6.h>
#include <rdma/ib_cm.h>

#include "sdp_rdma.h"
#include "sdp_trace.h"

static int sdp_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev);

static_assert(SDP_REQ_DATA_MAX == IB_CM_REQ_PRIVATE_DATA_SIZE - 36);
static_assert(SDP_REP_DATA_MAX == IB_CM_REP_PRIVATE_DATA_SIZE);

/* The CM parameters of either end, and its QP's ACK timeout. */
int sdp_conn_param(struct rdma_cm_id *id, struct rdma_conn_param *p,
		   const void *data, u8 len)
{
	memset(p, 0, sizeof(*p));
	p->private_data = data;
	p->private_data_len = len;
	p->flow_control = 1;
	p->retry_count = SDP_RETRY;
	p->rnr_retry_count = SDP_RNR_RETRY;
	return rdma_set_ack_timeout(id, SDP_ACK_TIMEOUT);
}

/*
 * The connection is up: record its addresses. Only a socket still
 * connecting becomes ESTABLISHED: a passive child may have had its peer's
 * DisConn or Abort before the event.
 */
void sdp_established(struct sdp_sock *ssk, struct rdma_cm_id *id)
{
	struct sock *sk = &ssk->sk;
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;

	/* For SDP_INFO and sock_diag: what tests and tools need to find our packets. */
	if (ssk->conn && !ib_query_qp(ssk->conn->qp, &attr, IB_QP_PATH_MTU | IB_QP_DEST_QPN,
				      &init)) {
		ssk->conn->path_mtu = ib_mtu_enum_to_int(attr.path_mtu);
		ssk->conn->dest_qpn = attr.dest_qp_num;
	}
	if (ssk->conn)
		ssk->conn->port_num = id->port_num;

	memcpy(&ssk->saddr, &id->route.addr.src_addr, sizeof(ssk->saddr));
	memcpy(&ssk->daddr, &id->route.addr.dst_addr, sizeof(ssk->daddr));
	ssk->transport = SDP_TRANSPORT_RDMA;
	sk_stop_timer(sk, &ssk->conn_timer);
	SDP_INC_STATS(sock_net(sk), SDP_MIB_ESTABLISHED);
	if ((1 << sk->sk_state) & (TCPF_SYN_SENT | TCPF_SYN_RECV))
		sdp_up->state(sk, TCP_ESTABLISHED);
	ssk->rx_stamp = jiffies;
	sdp_keepalive_reset(ssk);
	/* Whatever arrived before this event. */
	sdp_flush(ssk);
	if (!sock_flag(sk, SOCK_DEAD)) {
		sk->sk_state_change(sk);
		sk_wake_async(sk, SOCK_WAKE_IO, POLL_OUT);
	}
}

/*
 * Bind @id to the address and port the native socket holds, so that the
 * connection's port is taken in the TCP port space as in rdma_cm's: the two
 * agree, and no TCP socket (or SDP listener) can take a port a connection
 * uses. An unbound socket is bound here; if rdma_cm already has that port
 * (another rdma_cm user, or one of our ids that outlives its native socket),
 * a fresh native socket tries another. rdma_cm says EADDRNOTAVAIL rather
 * than EADDRINUSE when either binding is a wildcard, as ours is.
 */
static int sdp_cm_bind_src(struct sdp_sock *ssk, struct rdma_cm_id *id,
			   const struct sockaddr_storage *dst)
{
	bool chosen = inet_sk(ssk->tcp->sk)->inet_num;
	struct sockaddr_storage src;
	int tries, err, family;

	for (tries = 0; tries < SDP_BIND_TRIES; tries++) {
		family = ssk->tcp->sk->sk_family;
		if (!chosen) {
			memset(&src, 0, sizeof(src));
			src.ss_family = family;
			err = kernel_bind(ssk->tcp, (struct sockaddr *)&src,
					  family == AF_INET6 ? sizeof(struct sockaddr_in6) :
							       sizeof(struct sockaddr_in));
			if (err)
				return err;
		}
		err = kernel_getsockname(ssk->tcp, (struct sockaddr *)&src);
		if (err < 0)
			return err;
		sdp_addr_unmap(&src);
		if (src.ss_family != dst->ss_family) {
			/* A dual-stack wildcard bind going to an IPv4 peer. */
			struct sockaddr_in sin = {
				.sin_family = AF_INET,
				.sin_port = ((struct sockaddr_in6 *)&src)->sin6_port,
			};

			memset(&src, 0, sizeof(src));
			memcpy(&src, &sin, sizeof(sin));
		}
		if (ssk->sk.sk_reuse)
			rdma_set_reuseaddr(id, 1);
		err = rdma_bind_addr(id, (struct sockaddr *)&src);
		if ((err != -EADDRINUSE && err != -EADDRNOTAVAIL) || chosen)
			return err;
		err = sdp_up->new_port(ssk, family);
		if (err)
			return err;
	}
	return -EADDRINUSE;
}

/* An id for the socket's events, holding a reference to it. */
static struct rdma_cm_id *sdp_cm_create_id(struct sdp_sock *ssk)
{
	struct rdma_cm_id *id;

	id = sdp_fault(SDP_FAULT_CM_ID) ? ERR_PTR(-ENOMEM) :
	     rdma_create_id(sock_net(&ssk->sk), sdp_cm_handler, ssk,
			    RDMA_PS_TCP, IB_QPT_RC);
	if (!IS_ERR(id))
		sock_hold(&ssk->sk);
	return id;
}

/* A new id for the socket, which owns it (and its reference) from now on. */
static struct rdma_cm_id *sdp_cm_new_id(struct sdp_sock *ssk)
{
	struct rdma_cm_id *id;

	if (WARN_ON_ONCE(ssk->id))
		return ERR_PTR(-EBUSY);
	id = sdp_cm_create_id(ssk);
	if (!IS_ERR(id))
		ssk->id = id;
	return id;
}

/*
 * IP_TOS (IPV6_TCLASS towards IPv6) becomes the traffic class of the route
 * rdma_cm resolves: RoCE puts it in every packet's IP header, the peer's
 * queue pair takes it from our request. 0, TCP's default, leaves the
 * device's default class.
 */
static void sdp_cm_set_tos(struct sdp_sock *ssk, struct rdma_cm_id *id)
{
	struct sock *t = ssk->tcp->sk;
	u8 tos;

	if (ssk->daddr.ss_family == AF_INET6)
		tos = READ_ONCE(inet6_sk(t)->tclass);
	else
		tos = READ_ONCE(inet_sk(t)->tos);
	if (tos)
		rdma_set_service_type(id, tos);
}

/*
 * Start connecting to @dst (in the socket's family); events continue in
 * sdp_cm_handler(). rdma_cm gets IPv4 destinations as sockaddr_in. 0, or
 * why it could not start (enum sdp_fallback_reason): memory, or a port
 * rdma_cm's other users hold (sdp_cm_bind_src()), is our own lack, not the
 * destination's, and the negative cache must not learn it.
 */
int sdp_cm_connect(struct sdp_sock *ssk, const struct sockaddr_storage *dst)
{
	struct rdma_cm_id *id = sdp_cm_new_id(ssk);
	int err;

	if (IS_ERR(id))
		return SDP_FB_RESOURCES;
	memcpy(&ssk->daddr, dst, sizeof(ssk->daddr));
	sdp_addr_unmap(&ssk->daddr);
	/* SO_BINDTODEVICE: rdma_cm routes through it, as TCP's connect does. */
	id->route.addr.dev_addr.bound_dev_if = READ_ONCE(ssk->sk.sk_bound_dev_if);
	sdp_cm_set_tos(ssk, id);
	err = sdp_cm_bind_src(ssk, id, &ssk->daddr);
	if (!err)
		err = rdma_resolve_addr(id, NULL, (struct sockaddr *)&ssk->daddr,
					SDP_RESOLVE_TIMEOUT_MS);
	if (err == -EADDRINUSE || err == -EADDRNOTAVAIL)
		return SDP_FB_PORT;
	if (err == -ENOMEM)
		return SDP_FB_RESOURCES;
	if (err)
		return SDP_FB_NO_DEVICE;
	SDP_INC_STATS(sock_net(&ssk->sk), SDP_MIB_ACTIVE_OPENS);
	return 0;
}

static int sdp_cm_route_resolved(struct sdp_sock *ssk, struct rdma_cm_id *id)
{
	struct rdma_conn_param param;
	struct sdp_conn *c;
	struct sdp_hh hh;
	int err;

	err = sdp_conn_create(ssk, id, U32_MAX);
	if (err)
		return err;
	c = ssk->conn;
	sdp_proto_hello(&hh, sdp_conn_hello_bufs(c), c->rcv_size,
			ssk->daddr.ss_family == AF_INET6);
	err = sdp_conn_param(id, &param, &hh, sizeof(hh));
	if (err)
		return err;
	param.qp_num = c->qp->qp_num;
	memcpy(&ssk->saddr, &id->route.addr.src_addr, sizeof(ssk->saddr));
	ssk->syn_sent = jiffies;
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
static int sdp_active_established(struct sdp_sock *ssk, struct rdma_cm_id *id,
				  const struct rdma_cm_event *ev)
{
	const struct sdp_hah *hah = ev->param.conn.private_data;
	int mib = sdp_proto_check_hello_ack(hah, ev->param.conn.private_data_len);
	int reason = 0, err;

	if (mib) {
		SDP_INC_STATS(sock_net(&ssk->sk), mib);
		reason = SDP_FB_VERSION;
	} else if (sdp_conn_start(ssk->conn, be32_to_cpu(hah->actrcvsz),
				  be16_to_cpu(hah->bsdh.bufs))) {
		reason = SDP_FB_RESOURCES;
	}
	if (ev->event == RDMA_CM_EVENT_CONNECT_RESPONSE) {
		/*
		 * The peer's REJ can come while we handle the REP (its child
		 * died before our RTU): the CM leaves the REP's state at once,
		 * and our QP's transitions (-ECONNREFUSED) or the RTU
		 * (-EINVAL) fail. Refused, as when that REJ is our event.
		 */
		if (!reason) {
			err = sdp_conn_rts(ssk->conn);
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
	sdp_established(ssk, id);
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

/* After the listener's word on when a place frees: its timer's latency. */
#define SDP_RETRY_SLACK		(HZ / 4)

/*
 * Locked, refused as busy: past the time TCP's connect() gives up
 * (TCP_USER_TIMEOUT, TCP_SYNCNT, tcp_syn_retries), fail as it does.
 */
static bool sdp_cm_syn_expired(struct sdp_sock *ssk)
{
	if (time_before(jiffies, ssk->syn_deadline))
		return false;
	SDP_INC_STATS(sock_net(&ssk->sk), SDP_MIB_CONNECT_FAILED);
	sdp_up->done(&ssk->sk, ETIMEDOUT);
	return true;
}

/*
 * A busy SDP listener refused us: try again after TCP's SYN retransmit
 * delays (1 s, 2 s, 4 s, ...), but no sooner than twice the time the
 * refusal took; or sooner when the listener said a place frees sooner (a
 * peer holding its queue with connections it never completes then delays
 * us until their syn_timeout_ms, not beyond); and no later than TCP's
 * deadline. That deadline, not a count of refusals, ends it: such hints
 * make refusals come faster than retransmissions.
 *
 * A slow refusal means requests queue at the listener's CM, which serves
 * them one at a time (a dropped SYN costs TCP nothing; a refused request
 * costs the CM a connection id and a reject). A request that waits there
 * past the CM's response timeout (about 6 s) is sent again, and each copy
 * that arrives after the refusal is a new request: retrying on TCP's
 * schedule regardless would keep that queue past the timeout for good.
 */
static void sdp_cm_retry_later(struct sdp_sock *ssk, u32 retry_ms)
{
	struct sock *sk = &ssk->sk;
	unsigned long now = jiffies;
	unsigned long delay = min_t(unsigned long, HZ << min_t(u8, ssk->syn_retries, 7),
				    TCP_RTO_MAX);

	sk_stop_timer(sk, &ssk->conn_timer);
	if (sdp_cm_syn_expired(ssk))
		return;
	delay = max(delay, 2 * (now - ssk->syn_sent));
	if (retry_ms)
		delay = min(delay, msecs_to_jiffies(retry_ms) + SDP_RETRY_SLACK);
	delay = min(delay, ssk->syn_deadline - now);
	if (ssk->syn_retries < U8_MAX)
		ssk->syn_retries++;
	SDP_INC_STATS(sock_net(sk), SDP_MIB_CONNECT_RETRIES);
	sock_hold(sk);
	if (!queue_delayed_work(sdp_wq, &ssk->retry_work, delay))
		sock_put(sk);
}

static void sdp_cm_retry_work(struct work_struct *work)
{
	struct sdp_sock *ssk = container_of(to_delayed_work(work), struct sdp_sock,
					    retry_work);
	struct sock *sk = &ssk->sk;
	int reason;

	lock_sock(sk);
	if (sk->sk_state == TCP_SYN_SENT && !sdp_fb(ssk) && !sdp_cm_syn_expired(ssk)) {
		/* A new id for the new attempt, on the same port. */
		sdp_conn_free(ssk);
		release_sock(sk);
		sdp_cm_destroy(ssk);
		lock_sock(sk);
		if (sk->sk_state == TCP_SYN_SENT && !sdp_fb(ssk) && !ssk->id) {
			reason = sdp_cm_connect(ssk, &ssk->fb_addr);
			if (reason)
				sdp_up->fallback(ssk, reason);
			else
				sdp_up->attempt(ssk);
		}
	}
	release_sock(sk);
	sock_put(sk);
}

void sdp_cm_init(struct sdp_sock *ssk)
{
	INIT_DELAYED_WORK(&ssk->retry_work, sdp_cm_retry_work);
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

static int sdp_cm_device_removal(struct sdp_sock *ssk, struct rdma_cm_id *id)
{
	struct sock *sk = &ssk->sk;
	bool mine;

	lock_sock(sk);
	if (ssk->conn && ssk->conn->id == id)
		sdp_conn_free(ssk);
	/* A listener's id not listening yet: its armer destroys it at once. */
	if (ssk->arming == id)
		ssk->arming = NULL;
	mine = cmpxchg(&ssk->id, id, NULL) == id;
	if (mine) {
		set_bit(SDP_F_CM_GONE, &ssk->flags);
		if (sk->sk_state != TCP_CLOSE && sk->sk_state != TCP_LISTEN &&
		    !sdp_fb(ssk))
			sdp_up->done(sk, ECONNRESET);
	}
	release_sock(sk);
	if (mine) {
		/* A child the listener still holds goes with its device. */
		if (ssk->parent)
			sdp_child_drop(ssk, ECONNRESET);
		sock_put(sk);
	}
	/* Non-zero: rdma_cm destroys the id (we own it and nobody else will). */
	return mine;
}

/*
 * The peer disconnected: move our QP to error too, so that its flushed
 * receives tell an orderly end (DisConn came first) from a reset.
 */
static void sdp_cm_disconnected(struct sdp_sock *ssk, struct rdma_cm_id *id)
{
	if (!test_and_set_bit(SDP_F_CM_GONE, &ssk->flags)) {
		sdp_conn_qp_err(ssk->conn);
		rdma_disconnect(id);
	}
	sdp_flush(ssk);
}

static int sdp_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct sdp_sock *ssk = id->context;
	struct sock *sk = &ssk->sk;
	u32 retry_ms;
	bool child;
	int err, reason;
	u8 rej;

	trace_sdp_cm_event(sk, rdma_event_msg(ev->event), ev->status);
	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
		return sdp_cm_req(ssk, id, ev);
	if (ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL)
		return sdp_cm_device_removal(ssk, id);

	lock_sock(sk);
	if (READ_ONCE(ssk->id) != id) {
		release_sock(sk);
		return 0;
	}
	/* A child answers to its listener's queues until accept(). */
	child = ssk->parent;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		if (sk->sk_state != TCP_SYN_SENT)
			break;
		if (ev->event == RDMA_CM_EVENT_ADDR_RESOLVED) {
			err = rdma_resolve_route(id, SDP_RESOLVE_TIMEOUT_MS);
			if (err)
				sdp_up->fallback(ssk, SDP_FB_NO_ROUTE);
		} else {
			err = sdp_cm_route_resolved(ssk, id);
			if (err)
				sdp_up->fallback(ssk, SDP_FB_RESOURCES);
		}
		break;
	case RDMA_CM_EVENT_CONNECT_RESPONSE:
	case RDMA_CM_EVENT_ESTABLISHED:
		if (child) {
			if (sk->sk_state != TCP_CLOSE)
				sdp_established(ssk, id);
			release_sock(sk);
			sdp_passive_established(ssk);
			return 0;
		}
		if (sk->sk_state == TCP_SYN_SENT) {
			reason = sdp_active_established(ssk, id, ev);
			if (reason)
				sdp_up->fallback(ssk, reason);
		}
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
		if (child) {
			release_sock(sk);
			sdp_child_drop(ssk, sdp_cm_errno(ev));
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
			sdp_cm_retry_later(ssk, retry_ms);
		else
			sdp_up->fallback(ssk, sdp_cm_fb_reason(ev, rej));
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		/*
		 * Only a peer whose connect completed sends a DREQ, maybe
		 * before our established event: a child still on syn_q then
		 * ends in the accept queue, reset (sdp_child_ended()).
		 */
		if (child)
			set_bit(SDP_F_PEER_UP, &ssk->flags);
		sdp_cm_disconnected(ssk, id);
		break;
	default:
		break;
	}
	release_sock(sk);
	return 0;
}

/*
 * Listen over RDMA on the address and port the native socket holds; called
 * unlocked by whoever set SDP_F_ARMING under the lock (listen(), the re-arm
 * work), who clears it once it has noted the result: until then a stop
 * waits (sdp_listen_stop()), and so do connect() and listen() of the
 * closed socket listen() claimed. rdma_listen() runs unlocked: a wildcard
 * listen that fails half way destroys the ids it made, waiting for their
 * handlers, and sdp_cm_req() takes the listener's lock in them. Meanwhile
 * the id is only ssk->arming, which nobody else destroys (a device removal
 * tells us by clearing it); it becomes ssk->id once it listens, if the
 * socket still does (else -ECONNABORTED). Requests may arrive on it before:
 * sdp_cm_req() serves them.
 */
int sdp_cm_listen(struct sdp_sock *ssk)
{
	struct sock *sk = &ssk->sk;
	struct sockaddr_storage addr;
	struct rdma_cm_id *id;
	bool rearm = false;
	int backlog, err;

	id = sdp_cm_create_id(ssk);
	if (IS_ERR(id)) {
		err = PTR_ERR(id);
		id = NULL;
		goto out;
	}
	lock_sock(sk);
	err = sdp_listening(ssk) ? kernel_getsockname(ssk->tcp, (struct sockaddr *)&addr) :
				   -ECONNABORTED;
	if (err < 0) {
		release_sock(sk);
		goto out;
	}
	sdp_addr_unmap(&addr);
	if (addr.ss_family == AF_INET6)
		rdma_set_afonly(id, ipv6_only_sock(ssk->tcp->sk));
	if (sk->sk_reuse)
		rdma_set_reuseaddr(id, 1);
	backlog = sk->sk_max_ack_backlog;
	ssk->arming = id;
	release_sock(sk);

	err = rdma_bind_addr(id, (struct sockaddr *)&addr);
	if (!err)
		err = rdma_listen(id, backlog);

	lock_sock(sk);
	if (!sdp_listening(ssk)) {
		/* shut down meanwhile: its reuseport group may take the port */
		rearm = !err && sk->sk_reuseport;
		err = -ECONNABORTED;
	} else if (ssk->arming != id) {
		err = -ENODEV;
	} else if (!err && !WARN_ON_ONCE(ssk->id)) {
		ssk->id = id;
		id = NULL;
	}
	ssk->arming = NULL;
	release_sock(sk);
out:
	if (id) {
		rdma_destroy_id(id);
		sock_put(sk);
	}
	if (rearm)
		sdp_listeners_rearm();
	return err;
}

/* Disconnect the QP, once: its work requests flush, the peer is told. */
void sdp_cm_disconnect(struct sdp_sock *ssk)
{
	if (ssk->conn && !test_and_set_bit(SDP_F_CM_GONE, &ssk->flags)) {
		sdp_conn_qp_err(ssk->conn);
		rdma_disconnect(ssk->conn->id);
	}
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
