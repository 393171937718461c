// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol: listeners.
 *
 * A listener has an rdma_cm id on the port its native socket holds, and the
 * native socket listens too (plain TCP clients, see sdp_fallback.c). Each
 * request's Hello is checked; then, if the queues have room (listen()
 * backlog, counted as TCP does: backlog + 1, the established and the
 * completing together; and the namespace's net.sdp.max_half_open
 * connections not yet established), it becomes a child socket with its QP,
 * accepted with a HelloAck (syn_q, for syn_timeout_ms at most), and moves
 * to accept_q when rdma_cm reports it established. Without room a request
 * is refused as busy: the client retries with TCP's SYN backoff, as a TCP
 * client whose SYN was dropped would, or sooner when the reject says when
 * the oldest child holding a place is dropped (sdp_syn_reserve()).
 *
 * A child is on at most one queue (child->queue), changed only under the
 * listener's lock; whoever takes it off a queue owns its fate.
 */
#define pr_fmt(fmt) "sdp: " fmt

#include <linux/jhash.h>
#include <net/inet6_hashtables.h>
#include <net/inet_hashtables.h>
#include <net/ipv6.h>
#include <net/tcp.h>
#include <rdma/ib_cm.h>

#include "sdp_rdma.h"

/*
 * Listeners that may listen over RDMA. rdma_cm moves a wildcard listener
 * to new devices by itself, but a listener on one address loses its id
 * with that address's device (or found none at listen()): when a device is
 * added, such listeners try again. The device's addresses reach rdma_cm a
 * little after it registers, so a failed try is retried for a few seconds.
 */
static LIST_HEAD(sdp_listeners);
static DEFINE_MUTEX(sdp_listeners_lock);
static u32 sdp_rearm_gen;
static unsigned int sdp_rearm_tries;
#define SDP_REARM_TRIES		50
#define SDP_REARM_INTERVAL	(HZ / 10)

static void sdp_rearm_work(struct work_struct *work);
static DECLARE_DELAYED_WORK(sdp_rearm, sdp_rearm_work);

/*
 * Listener locked, becoming one with SDP_F_ARMING set: it may listen over
 * RDMA, and its caller calls sdp_cm_listen() once unlocked.
 */
void sdp_listener_add(struct sdp_sock *lssk)
{
	WARN_ON_ONCE(!test_bit(SDP_F_ARMING, &lssk->flags));
	mutex_lock(&sdp_listeners_lock);
	if (list_empty(&lssk->listen_item))
		list_add_tail(&lssk->listen_item, &sdp_listeners);
	mutex_unlock(&sdp_listeners_lock);
}

void sdp_listeners_rearm(void)
{
	WRITE_ONCE(sdp_rearm_tries, SDP_REARM_TRIES);
	mod_delayed_work(sdp_wq, &sdp_rearm, 0);
}

/* The next listener without an id this pass has not seen, held; or NULL. */
static struct sdp_sock *sdp_rearm_next(u32 gen)
{
	struct sdp_sock *lssk, *found = NULL;

	mutex_lock(&sdp_listeners_lock);
	list_for_each_entry(lssk, &sdp_listeners, listen_item) {
		if (lssk->rearm_gen == gen || READ_ONCE(lssk->id))
			continue;
		lssk->rearm_gen = gen;
		sock_hold(&lssk->sk);
		found = lssk;
		break;
	}
	mutex_unlock(&sdp_listeners_lock);
	return found;
}

/*
 * rdma_listen() failed with @err because another listener holds the port:
 * for one of a reuseport group that is the group's RDMA listener, which
 * serves it too (a wildcard port in use is EADDRNOTAVAIL to rdma_cm).
 */
bool sdp_reuseport_held(const struct sdp_sock *lssk, int err)
{
	return lssk->sk.sk_reuseport && (err == -EADDRINUSE || err == -EADDRNOTAVAIL);
}

/* Listen over RDMA again; true if the listener still has none. */
static bool sdp_rearm_one(struct sdp_sock *lssk)
{
	struct sock *lsk = &lssk->sk;
	bool arm, busy;
	int err;

	lock_sock(lsk);
	arm = sdp_listening(lssk) && !lssk->id;
	/* listen() or an earlier pass is arming it: see again after it */
	busy = arm && test_and_set_bit(SDP_F_ARMING, &lssk->flags);
	release_sock(lsk);
	if (!arm || busy)
		return busy;
	err = sdp_cm_listen(lssk);
	lock_sock(lsk);
	if (!err && sdp_listening(lssk)) {
		lssk->fb_reason = SDP_FB_NONE;
		SDP_INC_STATS(sock_net(lsk), SDP_MIB_LISTEN_REARMED);
	}
	release_sock(lsk);
	clear_and_wake_up_bit(SDP_F_ARMING, &lssk->flags);
	/* Stopped, or another of its group took the port: nothing to try again. */
	return err && err != -ECONNABORTED && !sdp_reuseport_held(lssk, err);
}

static void sdp_rearm_work(struct work_struct *work)
{
	struct sdp_sock *lssk;
	bool again = false;
	u32 gen;

	mutex_lock(&sdp_listeners_lock);
	gen = ++sdp_rearm_gen;
	mutex_unlock(&sdp_listeners_lock);
	while ((lssk = sdp_rearm_next(gen))) {
		again |= sdp_rearm_one(lssk);
		sock_put(&lssk->sk);
	}
	if (again && READ_ONCE(sdp_rearm_tries)) {
		WRITE_ONCE(sdp_rearm_tries, sdp_rearm_tries - 1);
		mod_delayed_work(sdp_wq, &sdp_rearm, SDP_REARM_INTERVAL);
	}
}

/* Module exit: no socket, so no listener, is left. */
void sdp_listen_exit(void)
{
	cancel_delayed_work_sync(&sdp_rearm);
}

/*
 * SO_REUSEPORT: rdma_cm shares no port, so the group's first listener holds
 * the one id and the others' rdma_listen() fail (EADDRINUSE): each request
 * arriving on the id goes to the listener TCP would give that connection.
 * The native listeners are TCP's reuseport group, and its hash of the
 * addresses picks. Returns that listener, held, or NULL for @lssk itself.
 */
static struct sdp_sock *sdp_reuseport_pick(struct sdp_sock *lssk,
					   struct rdma_cm_id *id)
{
	struct sockaddr_storage local = id->route.addr.src_addr;
	struct sockaddr_storage peer = id->route.addr.dst_addr;
	int dif = id->route.addr.dev_addr.bound_dev_if;
	struct net *net = sock_net(&lssk->sk);
	struct inet_hashinfo *hinfo = net->ipv4.tcp_death_row.hashinfo;
	struct sdp_sock *s, *found = NULL;
	struct sock *t;

	sdp_addr_unmap(&local);
	sdp_addr_unmap(&peer);
	rcu_read_lock();
	if (peer.ss_family == AF_INET) {
		const struct sockaddr_in *l = (void *)&local, *p = (void *)&peer;

		t = __inet_lookup_listener(net, hinfo, NULL, 0,
					   p->sin_addr.s_addr, p->sin_port,
					   l->sin_addr.s_addr, ntohs(l->sin_port),
					   dif, 0);
	} else {
		const struct sockaddr_in6 *l = (void *)&local, *p = (void *)&peer;

		t = inet6_lookup_listener(net, hinfo, NULL, 0, &p->sin6_addr,
					  p->sin6_port, &l->sin6_addr,
					  ntohs(l->sin6_port), dif, 0);
	}
	rcu_read_unlock();
	/* Only compared: one of ours is found by its native socket. */
	if (IS_ERR_OR_NULL(t) || t == lssk->tcp->sk)
		return NULL;
	mutex_lock(&sdp_listeners_lock);
	list_for_each_entry(s, &sdp_listeners, listen_item) {
		/* t may have been freed and reused since: the port says */
		if (s->tcp->sk == t && sdp_listening(s) && s->sk.sk_reuseport &&
		    inet_sk(t)->inet_num == inet_sk(lssk->tcp->sk)->inet_num) {
			sock_hold(&s->sk);
			found = s;
			break;
		}
	}
	mutex_unlock(&sdp_listeners_lock);
	return found;
}

/* One of the namespace's max_half_open places; false if none is left. */
static bool sdp_half_open_take(struct sdp_net *sn)
{
	bool ok;

	spin_lock(&sn->half_open_lock);
	ok = sn->half_open_nr < READ_ONCE(sn->max_half_open);
	if (ok)
		sn->half_open_nr++;
	spin_unlock(&sn->half_open_lock);
	return ok;
}

static void sdp_half_open_put(struct sdp_net *sn)
{
	spin_lock(&sn->half_open_lock);
	sn->half_open_nr--;
	spin_unlock(&sn->half_open_lock);
}

/* The child gives its place back: established, or off syn_q. Once. */
static void sdp_half_open_leave(struct sdp_sock *child)
{
	struct sdp_net *sn = sdp_net(sock_net(&child->sk));

	spin_lock(&sn->half_open_lock);
	if (!list_empty(&child->half_open_item)) {
		list_del_init(&child->half_open_item);
		sn->half_open_nr--;
	}
	spin_unlock(&sn->half_open_lock);
}

/* In how many ms @child, not established, is dropped (at least 1). */
static u32 sdp_half_open_left(const struct sdp_sock *child, const struct sdp_net *sn)
{
	unsigned long end = READ_ONCE(child->syn_stamp) +
			    msecs_to_jiffies(READ_ONCE(sn->syn_timeout_ms));

	return time_after(end, jiffies) ? jiffies_to_msecs(end - jiffies) : 1;
}

/*
 * Whether @child's end is for the refused client @who to hear of: each
 * place is announced to one client, who hears of it again when refused
 * again (its retries keep the port). Told to every client refused
 * meanwhile, that instant would bring all of them back at once, a herd
 * the CM serves one by one while the RTU of the one who got the place
 * waits behind it; the others follow TCP's retry delays.
 */
static bool sdp_half_open_promise(struct sdp_sock *child, u32 who)
{
	u32 old = 0;

	return try_cmpxchg(&child->promised, &old, who) || old == who;
}

/* How many of the oldest places a refusal looks at: its cost is bounded. */
#define SDP_PROMISE_SCAN	32

/* Who sent @id's request, for sdp_half_open_promise(): never 0. */
static u32 sdp_req_who(const struct rdma_cm_id *id)
{
	const struct sockaddr *a = (const struct sockaddr *)&id->route.addr.dst_addr;

	return jhash(a, rdma_addr_size(a), 0) | 1;
}

/*
 * Room for one more child of @lssk, before anything is built for it: within
 * the listener's backlog and the namespace's max_half_open. 0 with the
 * place taken (in syn_count and the namespace's count: sdp_child_link()
 * fills it, sdp_syn_unreserve() gives it back), or busy, counted, with
 * *retry_ms saying when the oldest child not established and not promised
 * to another client, which holds the place, is dropped (0 if none: an
 * accept queue full of established ones): the refused client then tries
 * again no later.
 */
static int sdp_syn_reserve(struct sdp_sock *lssk, const struct rdma_cm_id *id, u32 *retry_ms)
{
	struct sock *lsk = &lssk->sk;
	struct net *net = sock_net(lsk);
	struct sdp_net *sn = sdp_net(net);
	u32 who = sdp_req_who(id);
	struct sdp_sock *child;
	int mib, scan = SDP_PROMISE_SCAN;

	*retry_ms = 0;
	lock_sock(lsk);
	if (!sdp_listening(lssk)) {
		mib = SDP_MIB_BACKLOG_BUSY;
	} else if (READ_ONCE(lsk->sk_ack_backlog) + lssk->syn_count >
		   READ_ONCE(lsk->sk_max_ack_backlog)) {
		/* established and completing together: backlog + 1, as TCP */
		mib = SDP_MIB_BACKLOG_BUSY;
		list_for_each_entry(child, &lssk->syn_q, child) {
			if (!scan--)
				break;
			if (READ_ONCE(child->sk.sk_state) == TCP_SYN_RECV &&
			    sdp_half_open_promise(child, who)) {
				*retry_ms = sdp_half_open_left(child, sn);
				break;
			}
		}
	} else if (sdp_half_open_take(sn)) {
		lssk->syn_count++;
		release_sock(lsk);
		return 0;
	} else {
		mib = SDP_MIB_HALF_OPEN_FULL;
		spin_lock(&sn->half_open_lock);
		list_for_each_entry(child, &sn->half_open, half_open_item) {
			if (!scan--)
				break;
			if (sdp_half_open_promise(child, who)) {
				*retry_ms = sdp_half_open_left(child, sn);
				break;
			}
		}
		spin_unlock(&sn->half_open_lock);
	}
	release_sock(lsk);
	SDP_INC_STATS(net, mib);
	return -EBUSY;
}

/* Listener locked: a place sdp_syn_reserve() took and no child filled. */
static void sdp_syn_unreserve(struct sdp_sock *lssk)
{
	lssk->syn_count--;
	sdp_half_open_put(sdp_net(sock_net(&lssk->sk)));
}

/*
 * Listener locked: the child fills the place reserved for it. On syn_q it
 * counts against the backlog for syn_timeout_ms at most: a client that
 * never completes its connection cannot hold the listener's queue longer.
 */
static void sdp_child_link(struct sdp_sock *lssk, struct sdp_sock *child)
{
	struct sdp_net *sn = sdp_net(sock_net(&lssk->sk));

	list_add_tail(&child->child, &lssk->syn_q);
	child->queue = SDP_Q_SYN;
	child->syn_stamp = jiffies;
	spin_lock(&sn->half_open_lock);
	list_add_tail(&child->half_open_item, &sn->half_open);
	spin_unlock(&sn->half_open_lock);
	sock_hold(&child->sk);
	if (!queue_delayed_work(sdp_wq, &child->syn_work,
				msecs_to_jiffies(READ_ONCE(sn->syn_timeout_ms))))
		sock_put(&child->sk);
}

/* The SYN timeout and the half-open place no longer apply to @child. */
static void sdp_child_syn_stop(struct sdp_sock *child)
{
	sdp_half_open_leave(child);
	if (cancel_delayed_work(&child->syn_work))
		__sock_put(&child->sk);	/* the caller's reference remains */
}

/* Listener locked: the child is off syn_q, established or not. */
static void sdp_child_syn_done(struct sdp_sock *lssk, struct sdp_sock *child)
{
	lssk->syn_count--;
	sdp_child_syn_stop(child);
}

/* Listener locked. */
static void sdp_child_unlink(struct sdp_sock *lssk, struct sdp_sock *child)
{
	if (child->queue == SDP_Q_NONE)
		return;
	if (child->queue == SDP_Q_SYN)
		sdp_child_syn_done(lssk, child);
	else
		sk_acceptq_removed(&lssk->sk);
	list_del_init(&child->child);
	child->queue = SDP_Q_NONE;
}

/* A child for the request on @id; not yet on the listener's queues. */
static struct sdp_sock *sdp_child_alloc(struct sdp_sock *lssk,
					struct rdma_cm_id *id,
					const struct sdp_hh *hh)
{
	struct sock *lsk = &lssk->sk;
	struct sdp_sock *child;

	child = sdp_up->child(lssk);
	if (!child)
		return NULL;
	child->peer_hh = *hh;
	sock_hold(lsk);
	child->parent = lssk;
	sock_hold(&child->sk);
	child->id = id;
	id->context = child;
	sdp_up->state(&child->sk, TCP_SYN_RECV);
	return child;
}

/* Free a child nobody saw; rdma_cm destroys its id (handler returns 1). */
static void sdp_child_discard(struct sdp_sock *child)
{
	child->id = NULL;
	sock_put(&child->sk);
	sock_set_flag(&child->sk, SOCK_DEAD);
	sdp_up->destroy(child);
}

/* Orphan a child that left its listener's queues: reset and tear down. */
static void sdp_child_kill(struct sdp_sock *child, int err)
{
	struct sock *csk = &child->sk;

	lock_sock(csk);
	sock_set_flag(csk, SOCK_DEAD);
	if (csk->sk_state == TCP_CLOSE)
		sdp_up->teardown(child);
	else if (csk->sk_state == TCP_SYN_RECV)
		/* never established: dropped without an Abort, as TCP's request */
		sdp_up->done(csk, err);
	else
		sdp_up->abort(child, err);
	release_sock(csk);
}

/*
 * Let a child go if it is still on syn_q: refused at accept, its client
 * gave up, or it died before it was established. Established (accept_q),
 * or on no queue (the listener is dropping it), it is not ours.
 */
void sdp_child_drop(struct sdp_sock *child, int err)
{
	struct sdp_sock *lssk = child->parent;
	bool mine;

	lock_sock(&lssk->sk);
	mine = child->queue == SDP_Q_SYN;
	if (mine)
		sdp_child_unlink(lssk, child);
	release_sock(&lssk->sk);
	if (mine)
		sdp_child_kill(child, err);
}

/* Accept the child over RDMA, inside its CONNECT_REQUEST event. */
static int sdp_passive_accept(struct sdp_sock *child)
{
	const struct sdp_hh *hh = &child->peer_hh;
	struct rdma_cm_id *id = child->id;
	struct rdma_conn_param param;
	struct sdp_hah hah;
	struct sdp_conn *c;
	int err;

	lock_sock(&child->sk);
	err = -ECONNABORTED;
	if (child->sk.sk_state != TCP_SYN_RECV)
		goto out;
	/* our memory: the peer may wish for smaller buffers, not larger */
	err = sdp_fault(SDP_FAULT_ACCEPT) ? -ENOMEM :
	      sdp_conn_create(child, id, be32_to_cpu(hh->desremrcvsz));
	if (err)
		goto out;
	c = child->conn;
	sdp_proto_hello_ack(&hah, sdp_conn_hello_bufs(c), c->rcv_size, hh->ipv_cap);
	err = sdp_conn_start(c, be32_to_cpu(hh->localrcvsz),
			     be16_to_cpu(hh->bsdh.bufs));
	if (err)
		goto out;
	err = sdp_conn_param(id, &param, &hah, sizeof(hah));
	if (!err)
		err = sdp_conn_rts(c);
	if (!err) {
		param.qp_num = c->qp->qp_num;
		err = rdma_accept(id, &param);
	}
	if (!err)
		SDP_INC_STATS(sock_net(&child->sk), SDP_MIB_PASSIVE_OPENS);
out:
	if (err)
		sdp_conn_free(child);
	release_sock(&child->sk);
	return err;
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

int sdp_cm_req(struct sdp_sock *lssk, struct rdma_cm_id *id,
	       const struct rdma_cm_event *ev)
{
	struct sdp_sock *child, *pick = NULL;
	u32 retry_ms = 0;
	struct sock *lsk;
	u8 reason;
	int err;

	if (lssk->sk.sk_reuseport)
		pick = sdp_reuseport_pick(lssk, id);
	if (pick)
		lssk = pick;
	lsk = &lssk->sk;
	/*
	 * SO_BINDTODEVICE: a request from another netdev is not for us, as a
	 * bound TCP listener never sees such a SYN; rejected as by no listener.
	 */
	if (lsk->sk_bound_dev_if &&
	    lsk->sk_bound_dev_if != id->route.addr.dev_addr.bound_dev_if) {
		if (pick)
			sock_put(&pick->sk);
		rdma_reject(id, NULL, 0, IB_CM_REJ_CONSUMER_DEFINED);
		return 1;
	}
	reason = sdp_proto_check_hello(ev->param.conn.private_data,
				       ev->param.conn.private_data_len);
	if (reason) {
		SDP_INC_STATS(sock_net(lsk), SDP_MIB_BAD_HELLO);
		goto reject;
	}
	/* Nothing is built for a request the queues have no room for. */
	reason = SDP_REJ_BUSY;
	if (sdp_syn_reserve(lssk, id, &retry_ms))
		goto reject;
	child = sdp_child_alloc(lssk, id, ev->param.conn.private_data);
	lock_sock(lsk);
	if (!child || !sdp_listening(lssk)) {
		sdp_syn_unreserve(lssk);
		release_sock(lsk);
		if (child) {
			SDP_INC_STATS(sock_net(lsk), SDP_MIB_BACKLOG_BUSY);
			sdp_child_discard(child);
		} else {
			reason = SDP_REJ_NOMEM;
		}
		goto reject;
	}
	sdp_child_link(lssk, child);
	release_sock(lsk);

	/*
	 * The child is the listener's now: failures go through its queue.
	 * Short of resources, say so: the client falls back for this one
	 * connection instead of taking the port for TCP-only (an id destroyed
	 * unanswered sends a bare reject).
	 */
	err = sdp_passive_accept(child);
	if (err) {
		if (err != -ECONNABORTED)
			sdp_req_reject(lsk, id, SDP_REJ_NOMEM, 0);
		sdp_child_drop(child, -err);
	}
	if (pick)
		sock_put(&pick->sk);
	return 0;

reject:
	sdp_req_reject(lsk, id, reason, retry_ms);
	if (pick)
		sock_put(&pick->sk);
	return 1;
}

/*
 * TCP_DEFER_ACCEPT on the native listener, as the time TCP waits: its
 * SYN-ACK retransmissions (retrans_to_secs()).
 */
static unsigned long sdp_defer_period(const struct sdp_sock *lssk)
{
	const struct inet_connection_sock *icsk = inet_csk(lssk->tcp->sk);

	return sdp_tcp_backoff(READ_ONCE(icsk->icsk_accept_queue.rskq_defer_accept));
}

/* Listener locked: from syn_q to accept_q, and tell accept(). */
static void sdp_child_queue(struct sdp_sock *lssk, struct sdp_sock *child)
{
	struct sock *lsk = &lssk->sk;

	sdp_child_syn_done(lssk, child);
	list_move_tail(&child->child, &lssk->accept_q);
	child->queue = SDP_Q_ACCEPT;
	sk_acceptq_added(lsk);
	lsk->sk_data_ready(lsk);
}

/* ... if the listener still listens and the child is still connected. */
static void sdp_child_ready(struct sdp_sock *lssk, struct sdp_sock *child)
{
	if (sdp_listening(lssk) && child->queue == SDP_Q_SYN &&
	    READ_ONCE(child->sk.sk_state) != TCP_CLOSE)
		sdp_child_queue(lssk, child);
}

/*
 * A child's connection ended before accept(), maybe before its established
 * event. If its peer had sent a message or disconnected, the peer's connect
 * had completed: the child joins the accept queue, reset, as a TCP child
 * whose RST came after the handshake. Otherwise the peer had not connected:
 * dropped, as a request that never completed.
 */
void sdp_child_ended(struct sdp_sock *child, struct sdp_sock *lssk)
{
	bool peer_up = READ_ONCE(child->stats.rx_msgs) ||
		       test_bit(SDP_F_PEER_UP, &child->flags);
	bool mine;

	lock_sock(&lssk->sk);
	mine = child->queue == SDP_Q_SYN;
	if (mine && peer_up && sdp_listening(lssk)) {
		sdp_child_queue(lssk, child);
		mine = false;
	} else if (mine) {
		sdp_child_unlink(lssk, child);
	}
	release_sock(&lssk->sk);
	if (mine)
		sdp_child_kill(child, 0);
}

/*
 * The passive side is established: the child may be accepted now, or,
 * under TCP_DEFER_ACCEPT, once its first data arrives or the period is
 * over (TCP then takes the client's next ACK).
 */
void sdp_passive_established(struct sdp_sock *child)
{
	struct sdp_sock *lssk = child->parent;
	struct sock *lsk = &lssk->sk;
	unsigned long defer;

	lock_sock(lsk);
	sdp_child_syn_stop(child);
	defer = sdp_listening(lssk) ? sdp_defer_period(lssk) : 0;
	if (defer && !sdp_readable(&child->sk, 1) && child->queue == SDP_Q_SYN) {
		set_bit(SDP_F_DEFER_ACCEPT, &child->flags);
		sock_hold(&child->sk);
		if (!queue_delayed_work(sdp_wq, &child->accept_work, defer))
			sock_put(&child->sk);
		/* data that came meanwhile found the flag unset */
		if (sdp_readable(&child->sk, 1))
			sdp_defer_data(child);
	} else {
		sdp_child_ready(lssk, child);
	}
	release_sock(lsk);
}

/* A deferred child's data came (softirq or process context). */
void sdp_defer_data(struct sdp_sock *child)
{
	sock_hold(&child->sk);
	if (mod_delayed_work(sdp_wq, &child->accept_work, 0))
		sock_put(&child->sk);	/* it was pending, with its own */
}

static void sdp_accept_work(struct work_struct *work)
{
	struct sdp_sock *child = container_of(to_delayed_work(work), struct sdp_sock,
					      accept_work);
	struct sdp_sock *lssk = child->parent;

	lock_sock(&lssk->sk);
	if (test_and_clear_bit(SDP_F_DEFER_ACCEPT, &child->flags))
		sdp_child_ready(lssk, child);
	release_sock(&lssk->sk);
	sock_put(&child->sk);
}

/* A child still not established after syn_timeout_ms: dropped. */
static void sdp_syn_work(struct work_struct *work)
{
	struct sdp_sock *child = container_of(to_delayed_work(work), struct sdp_sock,
					      syn_work);
	struct sdp_sock *lssk = child->parent;
	bool late;

	lock_sock(&lssk->sk);
	late = child->queue == SDP_Q_SYN &&
	       READ_ONCE(child->sk.sk_state) == TCP_SYN_RECV;
	if (late)
		sdp_child_unlink(lssk, child);
	release_sock(&lssk->sk);
	if (late) {
		SDP_INC_STATS(sock_net(&child->sk), SDP_MIB_SYN_TIMEOUT);
		sdp_child_kill(child, ETIMEDOUT);
	}
	sock_put(&child->sk);
}

void sdp_listen_init(struct sdp_sock *ssk)
{
	INIT_DELAYED_WORK(&ssk->accept_work, sdp_accept_work);
	INIT_DELAYED_WORK(&ssk->syn_work, sdp_syn_work);
}

/* The oldest established child, off the queue; listener locked. */
struct sdp_sock *sdp_accept_dequeue(struct sdp_sock *lssk)
{
	struct sdp_sock *child;

	child = list_first_entry_or_null(&lssk->accept_q, struct sdp_sock, child);
	if (child)
		sdp_child_unlink(lssk, child);
	return child;
}

/*
 * Stop listening (close or shutdown): no new requests, then drop every
 * child, one at a time under the lock so that their own events can race.
 * Called and returns with the listener locked; drops the lock meanwhile.
 */
void sdp_listen_stop(struct sdp_sock *lssk)
{
	struct sock *lsk = &lssk->sk;
	struct sdp_sock *child;
	bool had_id = READ_ONCE(lssk->id);

	set_bit(SDP_F_STOPPING, &lssk->flags);
	release_sock(lsk);

	mutex_lock(&sdp_listeners_lock);
	list_del_init(&lssk->listen_item);
	mutex_unlock(&sdp_listeners_lock);

	/* An rdma_listen() under way (listen(), re-arm) ends first: its id goes. */
	wait_on_bit(&lssk->flags, SDP_F_ARMING, TASK_UNINTERRUPTIBLE);
	sdp_cm_destroy(lssk);
	/* The port's id is free: another of its reuseport group takes it. */
	if (had_id && lsk->sk_reuseport)
		sdp_listeners_rearm();
	kernel_sock_shutdown(lssk->tcp, SHUT_RDWR);

	for (;;) {
		lock_sock(lsk);
		child = list_first_entry_or_null(&lssk->accept_q, struct sdp_sock, child) ? :
			list_first_entry_or_null(&lssk->syn_q, struct sdp_sock, child);
		if (!child)
			break;
		sdp_child_unlink(lssk, child);
		release_sock(lsk);
		sdp_child_kill(child, ECONNRESET);
	}
	sdp_up->state(lsk, TCP_CLOSE);
	clear_and_wake_up_bit(SDP_F_STOPPING, &lssk->flags);
}
