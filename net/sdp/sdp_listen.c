// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol: listeners and their queues.
 *
 * A listener's connection listens over rdma_cm on the port its native
 * socket holds, and the native socket listens too (plain TCP clients, see
 * sdp_fallback.c). The transport brings each request here, its Hello
 * judged (sdp_listen_request()); then, if the queues have room (listen()
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

#include <net/inet6_hashtables.h>
#include <net/inet_hashtables.h>
#include <net/ipv6.h>
#include <net/tcp.h>

#include "sdp_sock.h"
#include "sdp_fallback.h"

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
	if (list_empty(&lssk->lsn.item))
		list_add_tail(&lssk->lsn.item, &sdp_listeners);
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
	list_for_each_entry(lssk, &sdp_listeners, lsn.item) {
		if (lssk->lsn.rearm_gen == gen || sdp_cm_has_id(lssk->conn))
			continue;
		lssk->lsn.rearm_gen = gen;
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

/*
 * Listen over RDMA on the address and port the native listener holds;
 * called unlocked by whoever set SDP_F_ARMING under the lock (listen(),
 * the re-arm work), who clears it once it has noted the result: until then
 * a stop waits (sdp_listen_stop()), and so do connect() and listen() of
 * the closed socket listen() claimed.
 */
static int sdp_listen_rdma(struct sdp_sock *lssk)
{
	struct sock *lsk = &lssk->sk;
	struct sockaddr_storage addr;
	bool afonly = false, reuse = false, listened;
	int backlog = 0, err;

	lock_sock(lsk);
	err = sdp_listening(lssk) ? kernel_getsockname(lssk->tcp, (struct sockaddr *)&addr) :
				    -ECONNABORTED;
	if (err >= 0) {
		sdp_addr_unmap(&addr);
		afonly = ipv6_only_sock(lssk->tcp->sk);
		reuse = lsk->sk_reuse;
		backlog = lsk->sk_max_ack_backlog;
	}
	release_sock(lsk);
	if (err < 0)
		return err;
	err = sdp_cm_listen(lssk->conn, &addr, afonly, reuse, backlog, &listened);
	/* shut down meanwhile: its reuseport group may take the port */
	if (err == -ECONNABORTED && listened && lsk->sk_reuseport)
		sdp_listeners_rearm();
	return err;
}

/*
 * A new listener listens over RDMA too, unlocked; then it serves RDMA, or
 * TCP only and counts why. Its listen() set SDP_F_ARMING.
 */
void sdp_listen_arm(struct sdp_sock *lssk)
{
	struct sock *sk = &lssk->sk;
	int err = sdp_listen_rdma(lssk);

	lock_sock(sk);
	if (err != -ECONNABORTED && sdp_listening(lssk)) {
		/* A reuseport group's port: served by the id's holder. */
		if (err && !sdp_reuseport_held(lssk, err))
			sdp_fb_listener(lssk, SDP_FB_NO_RDMA_LISTEN);
		else
			sdp_fb_listening(lssk);
	}
	release_sock(sk);
	clear_and_wake_up_bit(SDP_F_ARMING, &lssk->flags);
	/* Short of memory now, maybe not in a moment: it tries again. */
	if (err == -ENOMEM)
		sdp_listeners_rearm();
}

/* Listen over RDMA again; true if the listener still has none. */
static bool sdp_rearm_one(struct sdp_sock *lssk)
{
	struct sock *lsk = &lssk->sk;
	bool arm, busy;
	int err;

	lock_sock(lsk);
	arm = sdp_listening(lssk) && !sdp_cm_has_id(lssk->conn);
	/* listen() or an earlier pass is arming it: see again after it */
	busy = arm && test_and_set_bit(SDP_F_ARMING, &lssk->flags);
	release_sock(lsk);
	if (!arm || busy)
		return busy;
	err = sdp_listen_rdma(lssk);
	lock_sock(lsk);
	if (!err && sdp_listening(lssk)) {
		sdp_fb_rearmed(lssk);
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
					   const struct sdp_req *req)
{
	struct net *net = sock_net(&lssk->sk);
	struct inet_hashinfo *hinfo = net->ipv4.tcp_death_row.hashinfo;
	struct sdp_sock *s, *found = NULL;
	struct sock *t;

	rcu_read_lock();
	if (req->peer.ss_family == AF_INET) {
		const struct sockaddr_in *l = (void *)&req->local, *p = (void *)&req->peer;

		t = __inet_lookup_listener(net, hinfo, NULL, 0,
					   p->sin_addr.s_addr, p->sin_port,
					   l->sin_addr.s_addr, ntohs(l->sin_port),
					   req->ifindex, 0);
	} else {
		const struct sockaddr_in6 *l = (void *)&req->local, *p = (void *)&req->peer;

		t = inet6_lookup_listener(net, hinfo, NULL, 0, &p->sin6_addr,
					  p->sin6_port, &l->sin6_addr,
					  ntohs(l->sin6_port), req->ifindex, 0);
	}
	rcu_read_unlock();
	/* Only compared: one of ours is found by its native socket. */
	if (IS_ERR_OR_NULL(t) || t == lssk->tcp->sk)
		return NULL;
	mutex_lock(&sdp_listeners_lock);
	list_for_each_entry(s, &sdp_listeners, lsn.item) {
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
	if (!list_empty(&child->child.half_open_item)) {
		list_del_init(&child->child.half_open_item);
		sn->half_open_nr--;
	}
	spin_unlock(&sn->half_open_lock);
}

/* In how many ms @child, not established, is dropped (at least 1). */
static u32 sdp_half_open_left(const struct sdp_sock *child, const struct sdp_net *sn)
{
	unsigned long end = READ_ONCE(child->child.syn_stamp) +
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

	return try_cmpxchg(&child->child.promised, &old, who) || old == who;
}

/* How many of the oldest places a refusal looks at: its cost is bounded. */
#define SDP_PROMISE_SCAN	32

/*
 * Room for one more child of @lssk, before anything is built for it: within
 * the listener's backlog and the namespace's max_half_open. 0 with the
 * place taken (in syn_count and the namespace's count: sdp_child_link()
 * fills it, sdp_syn_unreserve() gives it back), or busy, counted, with
 * *retry_ms saying when the oldest child not established and not promised
 * to another client (@who is the one refused), which holds the place, is
 * dropped (0 if none: an accept queue full of established ones): the
 * refused client then tries again no later.
 */
static int sdp_syn_reserve(struct sdp_sock *lssk, u32 who, u32 *retry_ms)
{
	struct sock *lsk = &lssk->sk;
	struct net *net = sock_net(lsk);
	struct sdp_net *sn = sdp_net(net);
	struct sdp_sock *child;
	int mib, scan = SDP_PROMISE_SCAN;

	*retry_ms = 0;
	lock_sock(lsk);
	if (!sdp_listening(lssk)) {
		mib = SDP_MIB_BACKLOG_BUSY;
	} else if (READ_ONCE(lsk->sk_ack_backlog) + lssk->lsn.syn_count >
		   READ_ONCE(lsk->sk_max_ack_backlog)) {
		/* established and completing together: backlog + 1, as TCP */
		mib = SDP_MIB_BACKLOG_BUSY;
		list_for_each_entry(child, &lssk->lsn.syn_q, child.node) {
			if (!scan--)
				break;
			if (READ_ONCE(child->sk.sk_state) == TCP_SYN_RECV &&
			    sdp_half_open_promise(child, who)) {
				*retry_ms = sdp_half_open_left(child, sn);
				break;
			}
		}
	} else if (sdp_half_open_take(sn)) {
		lssk->lsn.syn_count++;
		release_sock(lsk);
		return 0;
	} else {
		mib = SDP_MIB_HALF_OPEN_FULL;
		spin_lock(&sn->half_open_lock);
		list_for_each_entry(child, &sn->half_open, child.half_open_item) {
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
	lssk->lsn.syn_count--;
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

	list_add_tail(&child->child.node, &lssk->lsn.syn_q);
	child->child.queue = SDP_Q_SYN;
	child->child.syn_stamp = jiffies;
	spin_lock(&sn->half_open_lock);
	list_add_tail(&child->child.half_open_item, &sn->half_open);
	spin_unlock(&sn->half_open_lock);
	sock_hold(&child->sk);
	if (!queue_delayed_work(sdp_wq, &child->child.syn_work,
				msecs_to_jiffies(READ_ONCE(sn->syn_timeout_ms))))
		sock_put(&child->sk);
}

/* The SYN timeout and the half-open place no longer apply to @child. */
static void sdp_child_syn_stop(struct sdp_sock *child)
{
	sdp_half_open_leave(child);
	if (cancel_delayed_work(&child->child.syn_work))
		__sock_put(&child->sk);	/* the caller's reference remains */
}

/* Listener locked: the child is off syn_q, established or not. */
static void sdp_child_syn_done(struct sdp_sock *lssk, struct sdp_sock *child)
{
	lssk->lsn.syn_count--;
	sdp_child_syn_stop(child);
}

/* Listener locked. */
static void sdp_child_unlink(struct sdp_sock *lssk, struct sdp_sock *child)
{
	if (child->child.queue == SDP_Q_NONE)
		return;
	if (child->child.queue == SDP_Q_SYN)
		sdp_child_syn_done(lssk, child);
	else
		sk_acceptq_removed(&lssk->sk);
	list_del_init(&child->child.node);
	child->child.queue = SDP_Q_NONE;
}

/*
 * Free a child nobody saw: its connection gives the request back, and
 * rdma_cm destroys the id (the handler returns 1).
 */
static void sdp_child_discard(struct sdp_sock *child)
{
	sdp_conn_drop_req(child->conn);
	sock_set_flag(&child->sk, SOCK_DEAD);
	sdp_destroy(child);
}

/* Orphan a child that left its listener's queues: reset and tear down. */
static void sdp_child_kill(struct sdp_sock *child, int err)
{
	struct sock *csk = &child->sk;

	lock_sock(csk);
	sock_set_flag(csk, SOCK_DEAD);
	if (csk->sk_state == TCP_CLOSE)
		sdp_schedule_teardown(child);
	else if (csk->sk_state == TCP_SYN_RECV)
		/* never established: dropped without an Abort, as TCP's request */
		sdp_done(csk, err);
	else
		sdp_abort(child, err);
	release_sock(csk);
}

/*
 * Let a child go if it is still on syn_q: refused at accept, its client
 * gave up, or it died before it was established. Established (accept_q),
 * or on no queue (the listener is dropping it), it is not ours.
 */
void sdp_child_drop(struct sdp_sock *child, int err)
{
	struct sdp_sock *lssk = child->child.parent;
	bool mine;

	lock_sock(&lssk->sk);
	mine = child->child.queue == SDP_Q_SYN;
	if (mine)
		sdp_child_unlink(lssk, child);
	release_sock(&lssk->sk);
	if (mine)
		sdp_child_kill(child, err);
}

/* Upcall: a child's connection failed (unlocked). */
void sdp_child_failed(struct sock *sk, int err)
{
	sdp_child_drop(sdp_sk(sk), err);
}

/*
 * Upcall, unlocked: a request came to @lssk (its Hello judged: req->
 * bad_hello), for a child that @new_child makes (af_sdp.c). The child's
 * connection, having taken the request, on the listener's syn_q; or NULL
 * with req->verdict saying why not.
 */
struct sdp_conn *sdp_listen_request(struct sdp_sock *lssk, struct sdp_req *req,
				    struct sdp_sock *(*new_child)(struct sdp_sock *lssk))
{
	struct sdp_sock *child, *pick = NULL;
	struct sdp_conn *c = NULL;
	struct sock *lsk;

	if (lssk->sk.sk_reuseport)
		pick = sdp_reuseport_pick(lssk, req);
	if (pick)
		lssk = pick;
	lsk = &lssk->sk;
	/*
	 * SO_BINDTODEVICE: a request from another netdev is not for us, as a
	 * bound TCP listener never sees such a SYN; refused as by no listener.
	 */
	req->verdict = SDP_VERDICT_IGNORE;
	if (lsk->sk_bound_dev_if && lsk->sk_bound_dev_if != req->ifindex)
		goto out;
	req->verdict = SDP_VERDICT_BAD_HELLO;
	if (req->bad_hello)
		goto out;
	/* Nothing is built for a request the queues have no room for. */
	req->verdict = SDP_VERDICT_BUSY;
	if (sdp_syn_reserve(lssk, req->who, &req->retry_ms))
		goto out;
	child = new_child(lssk);
	if (child) {
		sdp_conn_take_req(child->conn, req);
		sock_hold(lsk);
		child->child.parent = lssk;
		sdp_set_state(&child->sk, TCP_SYN_RECV);
	}
	lock_sock(lsk);
	if (!child || !sdp_listening(lssk)) {
		sdp_syn_unreserve(lssk);
		release_sock(lsk);
		if (child) {
			SDP_INC_STATS(sock_net(lsk), SDP_MIB_BACKLOG_BUSY);
			sdp_child_discard(child);
		} else {
			req->verdict = SDP_VERDICT_NOMEM;
		}
		goto out;
	}
	sdp_child_link(lssk, child);
	release_sock(lsk);
	c = child->conn;
out:
	if (pick)
		sock_put(&pick->sk);
	return c;
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
	list_move_tail(&child->child.node, &lssk->lsn.accept_q);
	child->child.queue = SDP_Q_ACCEPT;
	sk_acceptq_added(lsk);
	lsk->sk_data_ready(lsk);
}

/* ... if the listener still listens and the child is still connected. */
static void sdp_child_ready(struct sdp_sock *lssk, struct sdp_sock *child)
{
	if (sdp_listening(lssk) && child->child.queue == SDP_Q_SYN &&
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
	bool peer_up = sdp_conn_peer_up(child->conn);
	bool mine;

	lock_sock(&lssk->sk);
	mine = child->child.queue == SDP_Q_SYN;
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

/* A deferred child's data came (softirq or process context). */
static void sdp_defer_data(struct sdp_sock *child)
{
	sock_hold(&child->sk);
	if (mod_delayed_work(sdp_wq, &child->child.accept_work, 0))
		sock_put(&child->sk);	/* it was pending, with its own */
}

/*
 * Upcall, unlocked: the passive side is established. The child may be
 * accepted now, or, under TCP_DEFER_ACCEPT, once its first data arrives
 * or the period is over (TCP then takes the client's next ACK).
 */
void sdp_child_established(struct sock *sk)
{
	struct sdp_sock *child = sdp_sk(sk);
	struct sdp_sock *lssk = child->child.parent;
	struct sock *lsk = &lssk->sk;
	unsigned long defer;

	lock_sock(lsk);
	sdp_child_syn_stop(child);
	defer = sdp_listening(lssk) ? sdp_defer_period(lssk) : 0;
	if (defer && !sdp_readable(sk, 1) && child->child.queue == SDP_Q_SYN) {
		set_bit(SDP_F_DEFER_ACCEPT, &child->flags);
		sock_hold(sk);
		if (!queue_delayed_work(sdp_wq, &child->child.accept_work, defer))
			sock_put(sk);
		/* data that came meanwhile found the flag unset */
		if (sdp_readable(sk, 1))
			sdp_defer_data(child);
	} else {
		sdp_child_ready(lssk, child);
	}
	release_sock(lsk);
}

/* Upcall: bytes came to read; a deferred child is ready for accept(). */
void sdp_data_ready(struct sock *sk)
{
	sk->sk_data_ready(sk);
	if (test_bit(SDP_F_DEFER_ACCEPT, &sdp_sk(sk)->flags))
		sdp_defer_data(sdp_sk(sk));
}

static void sdp_accept_work(struct work_struct *work)
{
	struct sdp_sock *child = container_of(to_delayed_work(work), struct sdp_sock,
					      child.accept_work);
	struct sdp_sock *lssk = child->child.parent;

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
					      child.syn_work);
	struct sdp_sock *lssk = child->child.parent;
	bool late;

	lock_sock(&lssk->sk);
	late = child->child.queue == SDP_Q_SYN &&
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

/* Both parts of a socket, listener and child, start empty. */
void sdp_listen_init(struct sdp_sock *ssk)
{
	INIT_LIST_HEAD(&ssk->lsn.syn_q);
	INIT_LIST_HEAD(&ssk->lsn.accept_q);
	INIT_LIST_HEAD(&ssk->lsn.item);
	INIT_LIST_HEAD(&ssk->child.node);
	INIT_LIST_HEAD(&ssk->child.half_open_item);
	INIT_DELAYED_WORK(&ssk->child.accept_work, sdp_accept_work);
	INIT_DELAYED_WORK(&ssk->child.syn_work, sdp_syn_work);
}

/*
 * The socket is being destroyed: a child's queue works use its parent,
 * which goes next, so they are waited for. They take only the listener's
 * lock, never held here, and destroy no id.
 */
void sdp_child_stop(struct sdp_sock *ssk)
{
	if (cancel_delayed_work_sync(&ssk->child.accept_work))
		sock_put(&ssk->sk);
	if (cancel_delayed_work_sync(&ssk->child.syn_work))
		sock_put(&ssk->sk);
}

/* ... and the reference on the parent goes. */
void sdp_child_release(struct sdp_sock *ssk)
{
	if (ssk->child.parent) {
		sock_put(&ssk->child.parent->sk);
		ssk->child.parent = NULL;
	}
}

/* Upcall: still listening (it drops its lock while it stops). */
bool sdp_listening_up(const struct sock *sk)
{
	return sdp_listening(sdp_sk(sk));
}

/* The oldest established child, off the queue; listener locked. */
struct sdp_sock *sdp_accept_dequeue(struct sdp_sock *lssk)
{
	struct sdp_sock *child;

	child = list_first_entry_or_null(&lssk->lsn.accept_q, struct sdp_sock, child.node);
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
	bool had_id = sdp_cm_has_id(lssk->conn);

	set_bit(SDP_F_STOPPING, &lssk->flags);
	release_sock(lsk);

	mutex_lock(&sdp_listeners_lock);
	list_del_init(&lssk->lsn.item);
	mutex_unlock(&sdp_listeners_lock);

	/* An rdma_listen() under way (listen(), re-arm) ends first: its id goes. */
	wait_on_bit(&lssk->flags, SDP_F_ARMING, TASK_UNINTERRUPTIBLE);
	sdp_cm_destroy(lssk->conn);
	/* The port's id is free: another of its reuseport group takes it. */
	if (had_id && lsk->sk_reuseport)
		sdp_listeners_rearm();
	kernel_sock_shutdown(lssk->tcp, SHUT_RDWR);

	for (;;) {
		lock_sock(lsk);
		child = list_first_entry_or_null(&lssk->lsn.accept_q, struct sdp_sock,
						 child.node) ? :
			list_first_entry_or_null(&lssk->lsn.syn_q, struct sdp_sock, child.node);
		if (!child)
			break;
		sdp_child_unlink(lssk, child);
		release_sock(lsk);
		sdp_child_kill(child, ECONNRESET);
	}
	sdp_set_state(lsk, TCP_CLOSE);
	clear_and_wake_up_bit(SDP_F_STOPPING, &lssk->flags);
}
