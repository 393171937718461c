// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol: falling back to TCP.
 *
 * An SDP socket always connects when TCP would: when RDMA is not possible
 * (policy, loopback, no RDMA device or route, the peer refuses or does not
 * answer within net.sdp.connect_timeout_ms, an incompatible Hello), it
 * becomes its native TCP socket. A listener accepts plain TCP clients on the
 * same port too. Each fallback records a named reason (SDP_FALLBACK_REASON,
 * /proc/net/sdp_stats).
 *
 * After the switch every call is forwarded to the native socket, so the
 * socket is TCP for all purposes. Two things make that exact:
 * - The native socket's sk_wq is the SDP socket's wait queue from the start:
 *   every TCP wakeup (data, space, state, errors, SIGIO, a listener's new
 *   connection) reaches whoever sleeps or polls on the SDP file, including
 *   epoll entries added before the switch. sock_orphan() clears it when the
 *   native socket is released.
 * - Socket-level options land on the SDP sock (the core handles SOL_SOCKET)
 *   and are synced before each forwarded call; native errors are mirrored
 *   into the SDP sock for SO_ERROR, and consumed on both sides once read.
 *
 * A destination that failed over RDMA goes straight to TCP for
 * net.sdp.negative_cache_ttl seconds: the first connect to a TCP-only peer
 * costs at most the short first attempt, the next ones nothing. A port that
 * refused RDMA and then TCP too has nothing listening yet, so nothing is
 * learnt: it is forgotten, and the next connect tries RDMA again (a peer
 * that starts listening later is reached over RDMA, not cached as TCP).
 */
#define pr_fmt(fmt) "sdp: " fmt

#include <linux/inetdevice.h>
#include <linux/jhash.h>
#include <net/addrconf.h>
#include <net/inet_connection_sock.h>
#include <net/ip6_route.h>
#include <net/ipv6.h>
#include <net/request_sock.h>
#include <net/route.h>

#include "sdp_sock.h"
#include "sdp_fallback.h"
#include "sdp_trace.h"

static void sdp_ncache_key(const struct sockaddr_storage *ss, struct in6_addr *a,
			   __be16 *port)
{
	const struct sockaddr_in *sin = (const struct sockaddr_in *)ss;
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)ss;

	if (ss->ss_family == AF_INET6) {
		*a = sin6->sin6_addr;
		*port = sin6->sin6_port;
	} else {
		ipv6_addr_set_v4mapped(sin->sin_addr.s_addr, a);
		*port = sin->sin_port;
	}
}

static struct sdp_ncache_entry *sdp_ncache_slot(struct sdp_net *sn,
						const struct in6_addr *a, __be16 port)
{
	u32 h = jhash2((__force const u32 *)a->s6_addr32, 4, (__force u32)port);

	return &sn->ncache[h % SDP_NCACHE_SIZE];
}

/* @dst's entry, or NULL; the cache lock is held. */
static struct sdp_ncache_entry *sdp_ncache_find(struct sdp_net *sn,
						const struct sockaddr_storage *dst)
{
	struct sdp_ncache_entry *e;
	struct in6_addr a;
	__be16 port;

	sdp_ncache_key(dst, &a, &port);
	e = sdp_ncache_slot(sn, &a, port);
	return e->reason && e->port == port && ipv6_addr_equal(&e->addr, &a) ?
	       e : NULL;
}

/* Did @dst fail over RDMA within the last negative_cache_ttl seconds? */
static bool sdp_ncache_hit(struct net *net, const struct sockaddr_storage *dst)
{
	struct sdp_net *sn = sdp_net(net);
	struct sdp_ncache_entry *e;
	bool hit;

	if (!READ_ONCE(sn->ncache_ttl))
		return false;
	spin_lock_bh(&sn->ncache_lock);
	e = sdp_ncache_find(sn, dst);
	hit = e && time_before(jiffies, e->expires);
	spin_unlock_bh(&sn->ncache_lock);
	return hit;
}

static void sdp_ncache_forget(struct net *net, const struct sockaddr_storage *dst)
{
	struct sdp_net *sn = sdp_net(net);
	struct sdp_ncache_entry *e;

	spin_lock_bh(&sn->ncache_lock);
	e = sdp_ncache_find(sn, dst);
	if (e)
		e->reason = SDP_FB_NONE;
	spin_unlock_bh(&sn->ncache_lock);
}

/* Remember that @dst failed; one entry per slot, the newest wins. */
static void sdp_ncache_add(struct net *net, const struct sockaddr_storage *dst,
			   int reason)
{
	struct sdp_net *sn = sdp_net(net);
	int ttl = READ_ONCE(sn->ncache_ttl);
	struct sdp_ncache_entry *e;
	struct in6_addr a;
	__be16 port;

	if (!ttl)
		return;
	sdp_ncache_key(dst, &a, &port);
	spin_lock_bh(&sn->ncache_lock);
	e = sdp_ncache_slot(sn, &a, port);
	e->addr = a;
	e->port = port;
	e->reason = reason;
	e->expires = jiffies + ttl * HZ;
	spin_unlock_bh(&sn->ncache_lock);
}

/* Is @a (v4-mapped for IPv4) an address of this host? RCU or BH held. */
static bool sdp_local_addr(struct net *net, const struct in6_addr *a)
{
	if (ipv6_addr_v4mapped(a))
		return inet_addr_type(net, a->s6_addr32[3]) == RTN_LOCAL;
	return ipv6_chk_addr(net, a, NULL, 0);
}

/*
 * This host listens over RDMA on @laddr now: what the cache holds against
 * that port on our own addresses is stale (a TCP-only server that was
 * there before), so connects to it try RDMA again at once.
 */
void sdp_fb_listening(struct sdp_sock *lssk)
{
	struct net *net = sock_net(&lssk->sk);
	struct sdp_net *sn = sdp_net(net);
	struct sockaddr_storage ss;
	struct in6_addr a;
	__be16 port;
	bool any;
	int i;

	if (kernel_getsockname(lssk->tcp, (struct sockaddr *)&ss) < 0)
		return;
	sdp_ncache_key(&ss, &a, &port);
	any = ipv6_addr_any(&a) ||
	      (ipv6_addr_v4mapped(&a) && !a.s6_addr32[3]);
	spin_lock_bh(&sn->ncache_lock);
	for (i = 0; i < SDP_NCACHE_SIZE; i++) {
		struct sdp_ncache_entry *e = &sn->ncache[i];

		if (e->reason && e->port == port &&
		    (any ? sdp_local_addr(net, &e->addr) : ipv6_addr_equal(&e->addr, &a)))
			e->reason = SDP_FB_NONE;
	}
	spin_unlock_bh(&sn->ncache_lock);
}

static bool sdp_loopback(const struct sockaddr_storage *ss)
{
	const struct sockaddr_in *sin = (const struct sockaddr_in *)ss;
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)ss;

	if (ss->ss_family == AF_INET)
		return ipv4_is_loopback(sin->sin_addr.s_addr) ||
		       ipv4_is_zeronet(sin->sin_addr.s_addr);
	if (ipv6_addr_v4mapped(&sin6->sin6_addr))
		return ipv4_is_loopback(sin6->sin6_addr.s6_addr32[3]) ||
		       ipv4_is_zeronet(sin6->sin6_addr.s6_addr32[3]);
	return ipv6_addr_loopback(&sin6->sin6_addr) || ipv6_addr_any(&sin6->sin6_addr);
}

/*
 * The netdev packets to @dst leave through (the one owning a local address;
 * @oif, SO_BINDTODEVICE's, when set), with a reference; NULL without a
 * route (TCP will say why).
 */
static struct net_device *sdp_egress_dev(struct net *net,
					 const struct sockaddr_storage *dst, int oif)
{
	struct sockaddr_storage a = *dst;
	struct net_device *dev;

	if (oif)
		return dev_get_by_index(net, oif);
	sdp_addr_unmap(&a);
	if (a.ss_family == AF_INET) {
		struct flowi4 fl4 = { .daddr = ((struct sockaddr_in *)&a)->sin_addr.s_addr };
		struct rtable *rt;

		dev = ip_dev_find(net, fl4.daddr);
		if (dev)
			return dev;
		rt = ip_route_output_key(net, &fl4);
		if (IS_ERR(rt))
			return NULL;
		dev = rt->dst.dev;
		dev_hold(dev);
		ip_rt_put(rt);
	} else {
		struct flowi6 fl6 = { .daddr = ((struct sockaddr_in6 *)&a)->sin6_addr };
		struct dst_entry *d;

		rcu_read_lock();
		dev = ipv6_dev_find(net, &fl6.daddr, NULL);
		dev_hold(dev);
		rcu_read_unlock();
		if (dev)
			return dev;
		d = ip6_route_output(net, NULL, &fl6);
		if (!d->error) {
			dev = d->dev;
			dev_hold(dev);
		}
		dst_release(d);
	}
	return dev;
}

/* Could RDMA reach @dst at all: is there an RDMA device on the way out? */
static bool sdp_rdma_reachable(struct net *net, const struct sockaddr_storage *dst,
			       int oif)
{
	struct net_device *dev = sdp_egress_dev(net, dst, oif);
	bool found;

	if (!dev)
		return true;	/* rdma_cm and TCP report the missing route */
	found = sdp_dev_on_netdev(dev);
	dev_put(dev);
	return found;
}

/*
 * A reason to use TCP for @dst without trying RDMA, or SDP_FB_NONE. With
 * net.sdp.rdma_only a reason means the connect fails (sdp_fb_errno()).
 */
int sdp_fb_reason_now(struct sdp_sock *ssk, const struct sockaddr_storage *dst)
{
	struct net *net = sock_net(&ssk->sk);
	struct sdp_net *sn = sdp_net(net);

	if (!READ_ONCE(sn->enabled) ||
	    sdp_policy_tcp(ssk, dst, SDP_ROLE_CONNECT))
		return SDP_FB_POLICY;
	if (!READ_ONCE(sn->rdma_only)) {
		if (sdp_loopback(dst))
			return SDP_FB_LOOPBACK;
		if (sdp_ncache_hit(net, dst))
			return SDP_FB_CACHED;
	}
	if (!sdp_rdma_reachable(net, dst, READ_ONCE(ssk->sk.sk_bound_dev_if)))
		return SDP_FB_NO_DEVICE;
	return SDP_FB_NONE;
}

bool sdp_fb_allowed(struct sdp_sock *ssk)
{
	return !READ_ONCE(sdp_net(sock_net(&ssk->sk))->rdma_only);
}

static void sdp_fb_count(struct sdp_sock *ssk, int reason)
{
	trace_sdp_fallback(&ssk->sk, sdp_mib_name(SDP_MIB_FALLBACK + reason),
			   &ssk->fb.addr, ssk->fb.addrlen);
	ssk->fb.reason = reason;
	SDP_INC_STATS(sock_net(&ssk->sk), SDP_MIB_FALLBACK + reason);
}

/*
 * Native errors show through SO_ERROR on the SDP socket as well, once each.
 * tcp_reset() wakes pollers before it reports the error, so poll() mirrors
 * too: a caller that saw EPOLLERR must find the error with SO_ERROR.
 */
void sdp_fb_mirror_err(struct sdp_sock *ssk, struct sock *t)
{
	int err = READ_ONCE(t->sk_err);

	if (err && READ_ONCE(ssk->fb.err) != err) {
		WRITE_ONCE(ssk->fb.err, err);
		WRITE_ONCE(ssk->sk.sk_err, err);
	}
}

static void sdp_fb_error_report(struct sock *t)
{
	struct sdp_sock *ssk;

	read_lock_bh(&t->sk_callback_lock);
	ssk = t->sk_user_data;
	if (ssk) {
		sdp_fb_mirror_err(ssk, t);
		/* (only a connect sees ECONNREFUSED) */
		if (READ_ONCE(t->sk_err) == ECONNREFUSED &&
		    ssk->fb.reason == SDP_FB_REJECTED)
			sdp_ncache_forget(sock_net(t), &ssk->fb.addr);
		ssk->fb.tcp_error_report(t);
	}
	read_unlock_bh(&t->sk_callback_lock);
	if (!ssk)
		t->sk_error_report(t);
}

/* TCP's own callbacks of @t, kept in @ssk before ours replace them. */
static void sdp_fb_save_tcp(struct sdp_sock *ssk, const struct sock *t)
{
	ssk->fb.tcp_state_change = t->sk_state_change;
	ssk->fb.tcp_data_ready = t->sk_data_ready;
	ssk->fb.tcp_write_space = t->sk_write_space;
}

/* ... and put back on @t (a native socket, or a child cloned from it). */
static void sdp_fb_restore_tcp(const struct sdp_sock *ssk, struct sock *t)
{
	t->sk_state_change = ssk->fb.tcp_state_change;
	t->sk_data_ready = ssk->fb.tcp_data_ready;
	t->sk_write_space = ssk->fb.tcp_write_space;
}

/*
 * The TCP clients of a listener are children of its native socket, which
 * TCP clones. A kernel user hooks the SDP listener (sk_state_change,
 * sk_data_ready, sk_user_data: DRBD, nvmet-style drivers) and expects what
 * TCP does: the listener's sk_data_ready when a child is queued, and each
 * child established with the listener's callbacks and sk_user_data, which
 * see it established before accept(). So the native listener's
 * sk_data_ready calls the SDP listener's, and its sk_state_change, which
 * the children clone, makes a child take the SDP listener's callbacks at
 * its first state change (established) and calls them. Until then a child
 * carries the SDP listener in sk_user_data: the listener is freed an RCU
 * grace period late (SOCK_RCU_FREE) and, once released (SOCK_DEAD), gives
 * nothing. sdp_fb_accept() gives the native child TCP's callbacks back.
 */
static void sdp_fb_listen_data_ready(struct sock *t)
{
	void (*cb)(struct sock *sk);
	struct sdp_sock *lssk;

	read_lock_bh(&t->sk_callback_lock);
	lssk = t->sk_user_data;
	/* (the SDP listener's wait queue is the native one's too) */
	if (lssk && lssk->fb.listen_sk == t)
		lssk->sk.sk_data_ready(&lssk->sk);
	read_unlock_bh(&t->sk_callback_lock);
	/* unhooked meanwhile: TCP's own, now in place */
	cb = READ_ONCE(t->sk_data_ready);
	if (!lssk && cb != sdp_fb_listen_data_ready)
		cb(t);
}

static void sdp_fb_listen_state_change(struct sock *t)
{
	void (*cb)(struct sock *sk) = NULL;
	struct sdp_sock *lssk;
	struct sock *lsk;
	bool listener;

	rcu_read_lock();
	read_lock_bh(&t->sk_callback_lock);
	lssk = t->sk_user_data;
	listener = lssk && lssk->fb.listen_sk == t;
	if (listener)
		lssk->fb.tcp_state_change(t);	/* the native listener, shut down */
	read_unlock_bh(&t->sk_callback_lock);
	if (!lssk) {
		cb = READ_ONCE(t->sk_state_change);
		if (cb == sdp_fb_listen_state_change)
			cb = NULL;	/* a child of a listener gone */
	} else if (!listener) {
		/* a child: the SDP listener's callbacks, from now on */
		lsk = &lssk->sk;
		read_lock_bh(&lsk->sk_callback_lock);
		write_lock_bh(&t->sk_callback_lock);
		if (!sock_flag(lsk, SOCK_DEAD)) {
			t->sk_state_change = lsk->sk_state_change;
			t->sk_data_ready = lsk->sk_data_ready;
			if (lsk->sk_write_space != sdp_write_space)
				t->sk_write_space = lsk->sk_write_space;
			t->sk_user_data = sk_user_data_is_nocopy(lsk) ? NULL :
					  lsk->sk_user_data;
		} else {
			/* released: TCP's own, the listener's pointer gone */
			sdp_fb_restore_tcp(lssk, t);
			t->sk_user_data = NULL;
		}
		cb = t->sk_state_change;
		write_unlock_bh(&t->sk_callback_lock);
		read_unlock_bh(&lsk->sk_callback_lock);
	}
	rcu_read_unlock();
	if (cb)
		cb(t);
}

/* The native socket listens: the hooks above. Its callback lock is held. */
static void sdp_fb_hook_listen(struct sdp_sock *ssk, struct sock *t)
{
	/* (callers detach first: TCP's own are in place) */
	if (WARN_ON_ONCE(t->sk_state_change == sdp_fb_listen_state_change))
		return;
	sock_set_flag(&ssk->sk, SOCK_RCU_FREE);
	sdp_fb_save_tcp(ssk, t);
	t->sk_state_change = sdp_fb_listen_state_change;
	t->sk_data_ready = sdp_fb_listen_data_ready;
	t->sk_user_data = ssk;
	ssk->fb.listen_sk = t;
}

static void sdp_fb_unhook_listen(struct sdp_sock *ssk, struct sock *t)
{
	if (ssk->fb.listen_sk != t)
		return;
	sdp_fb_restore_tcp(ssk, t);
	ssk->fb.listen_sk = NULL;
}

/*
 * A connection on the native socket: TCP's callbacks wake the SDP socket's
 * waiters (the wait queue is shared); a kernel user's hooks on the SDP
 * socket are called after them, as TCP would call them, with the SDP sock,
 * whose sk_state follows TCP's from then on (until close() orphans it).
 * A hook runs with the native socket's callback lock held for reading, so
 * the SDP socket outlives it (sdp_fb_detach() takes it for writing).
 */
static void sdp_fb_data_ready(struct sock *t)
{
	void (*cb)(struct sock *sk);
	struct sdp_sock *ssk;

	read_lock_bh(&t->sk_callback_lock);
	ssk = t->sk_user_data;
	if (ssk) {
		ssk->fb.tcp_data_ready(t);
		cb = READ_ONCE(ssk->sk.sk_data_ready);
		/* (the same function as TCP's, unless a kernel user's) */
		if (cb != ssk->fb.tcp_data_ready && sdp_fb(ssk) &&
		    !sock_flag(&ssk->sk, SOCK_DEAD))
			cb(&ssk->sk);
	}
	read_unlock_bh(&t->sk_callback_lock);
	cb = READ_ONCE(t->sk_data_ready);
	if (!ssk && cb != sdp_fb_data_ready)
		cb(t);		/* detached meanwhile: TCP's own */
}

static void sdp_fb_write_space(struct sock *t)
{
	void (*cb)(struct sock *sk);
	struct sdp_sock *ssk;

	read_lock_bh(&t->sk_callback_lock);
	ssk = t->sk_user_data;
	if (ssk) {
		ssk->fb.tcp_write_space(t);
		cb = READ_ONCE(ssk->sk.sk_write_space);
		if (cb != sdp_write_space && sdp_fb(ssk) &&
		    !sock_flag(&ssk->sk, SOCK_DEAD))
			cb(&ssk->sk);
	}
	read_unlock_bh(&t->sk_callback_lock);
	cb = READ_ONCE(t->sk_write_space);
	if (!ssk && cb != sdp_fb_write_space)
		cb(t);
}

static void sdp_fb_state_change(struct sock *t)
{
	void (*cb)(struct sock *sk);
	struct sdp_sock *ssk;
	struct sock *sk;

	read_lock_bh(&t->sk_callback_lock);
	ssk = t->sk_user_data;
	if (ssk) {
		sk = &ssk->sk;
		ssk->fb.tcp_state_change(t);
		/* (an SDP socket over RDMA has an idle native one) */
		if (sdp_fb(ssk) && !sock_flag(sk, SOCK_DEAD)) {
			sdp_set_state(sk, inet_sk_state_load(t));
			cb = READ_ONCE(sk->sk_state_change);
			if (cb != ssk->fb.tcp_state_change)
				cb(sk);
		}
	}
	read_unlock_bh(&t->sk_callback_lock);
	cb = READ_ONCE(t->sk_state_change);
	if (!ssk && cb != sdp_fb_state_change)
		cb(t);
}

static void sdp_fb_hook_conn(struct sdp_sock *ssk, struct sock *t)
{
	if (t->sk_data_ready == sdp_fb_data_ready)
		return;
	sdp_fb_save_tcp(ssk, t);
	t->sk_state_change = sdp_fb_state_change;
	t->sk_data_ready = sdp_fb_data_ready;
	t->sk_write_space = sdp_fb_write_space;
}

static void sdp_fb_unhook_conn(struct sdp_sock *ssk, struct sock *t)
{
	if (t->sk_data_ready != sdp_fb_data_ready)
		return;
	sdp_fb_restore_tcp(ssk, t);
}

/* close(): no hook of the user's runs, nor the state changes, from now on. */
void sdp_fb_quiet(struct sdp_sock *ssk)
{
	struct sock *t = ssk->tcp->sk;

	write_lock_bh(&t->sk_callback_lock);
	if (t->sk_user_data == ssk)
		sdp_fb_unhook_conn(ssk, t);
	write_unlock_bh(&t->sk_callback_lock);
	sdp_set_state(&ssk->sk, TCP_CLOSE);
}

/*
 * Tie the native socket to the SDP socket: it wakes the SDP socket's
 * waiters and reports its errors there. The SDP sock must have its socket.
 * SIGIO and SIGURG go to the owner of the program's file: the native
 * socket's wakeups use our wait queue (whose fasync list is the file's),
 * and TCP's SIGURG finds the owner through the native socket's file,
 * borrowed until detach (a socket() not yet given its file gets it at
 * connect, listen or accept, which attach again).
 */
void sdp_fb_attach(struct sdp_sock *ssk)
{
	struct socket *sock = ssk->sk.sk_socket;
	struct sock *t = ssk->tcp->sk;

	write_lock_bh(&t->sk_callback_lock);
	/* a native listener no longer listens: no more children */
	if (t->sk_user_data == ssk)
		sdp_fb_unhook_listen(ssk, t);
	sdp_fb_hook_conn(ssk, t);
	/* from now on sdp_fb_state_change() keeps it */
	if (sdp_fb(ssk))
		sdp_set_state(&ssk->sk, inet_sk_state_load(t));
	if (t->sk_error_report != sdp_fb_error_report) {
		ssk->fb.tcp_error_report = t->sk_error_report;
		t->sk_error_report = sdp_fb_error_report;
	}
	t->sk_user_data = ssk;
	rcu_assign_pointer(t->sk_wq, &sock->wq);
	sock_set_flag(t, SOCK_FASYNC);
	ssk->tcp->file = sock->file;
	write_unlock_bh(&t->sk_callback_lock);
}

/* Before the native socket is released (it may outlive us in TCP). */
void sdp_fb_detach(struct sdp_sock *ssk, struct socket *tcp)
{
	struct sock *t = tcp->sk;

	write_lock_bh(&t->sk_callback_lock);
	if (t->sk_user_data == ssk) {
		if (t->sk_error_report == sdp_fb_error_report)
			t->sk_error_report = ssk->fb.tcp_error_report;
		sdp_fb_unhook_listen(ssk, t);
		sdp_fb_unhook_conn(ssk, t);
		t->sk_user_data = NULL;
	}
	/* sock_release() frees the inode only of a socket without a file */
	tcp->file = NULL;
	write_unlock_bh(&t->sk_callback_lock);
}

/*
 * Become the native TCP socket and start its connect to the address
 * connect() was given, without blocking; returns what TCP's connect()
 * said (-EINPROGRESS, or an error found at once). The socket lock is held.
 * Meanwhile (SDP_F_SWITCHING) poll() reports nothing and forwarded calls
 * wait for the lock: nobody sees the native socket before it connects.
 * Everybody waiting is woken at the end; the RDMA leftovers go with the
 * teardown.
 */
int sdp_fb_start(struct sdp_sock *ssk, int reason)
{
	struct sock *sk = &ssk->sk;
	int err;

	set_bit(SDP_F_SWITCHING, &ssk->flags);
	sdp_fb_count(ssk, reason);
	/* A listener's native socket lost the hook (sdp_fb_listen): again. */
	if (sk->sk_socket)
		sdp_fb_attach(ssk);
	sk_stop_timer(sk, &ssk->fb.conn_timer);
	sdp_tcp_sync(ssk);
	WRITE_ONCE(ssk->fb.transport, SDP_TRANSPORT_TCP);
	sdp_set_state(sk, TCP_CLOSE);
	if (sdp_cm_has_id(ssk->conn) || READ_ONCE(sdp_view(ssk)->live))
		sdp_schedule_teardown(ssk);
	err = kernel_connect(ssk->tcp, (struct sockaddr *)&ssk->fb.addr,
			     ssk->fb.addrlen, O_NONBLOCK);
	clear_bit(SDP_F_SWITCHING, &ssk->flags);
	sk->sk_state_change(sk);
	return err;
}

/* From an event: nobody waits in connect() for an error found at once. */
static void sdp_fb_start_async(struct sdp_sock *ssk, int reason)
{
	struct sock *t = ssk->tcp->sk;
	int err = sdp_fb_start(ssk, reason);

	if (err && err != -EINPROGRESS) {
		WRITE_ONCE(t->sk_err, -err);
		sk_error_report(t);
	}
}

/* Forwarded calls made while the switch is under way wait for it. */
void sdp_fb_ready(struct sdp_sock *ssk)
{
	if (test_bit(SDP_F_SWITCHING, &ssk->flags)) {
		lock_sock(&ssk->sk);
		release_sock(&ssk->sk);
	}
}

/* What connect() says when RDMA failed and net.sdp.rdma_only forbids TCP. */
int sdp_fb_errno(int reason)
{
	switch (reason) {
	case SDP_FB_NO_DEVICE:
	case SDP_FB_NO_ROUTE:
		return EHOSTUNREACH;
	case SDP_FB_REJECTED:
	case SDP_FB_VERSION:
		return ECONNREFUSED;
	case SDP_FB_TIMEOUT:
		return ETIMEDOUT;
	case SDP_FB_PORT:
		return EADDRNOTAVAIL;
	default:
		/* memory: what TCP's connect() says when it has none */
		return ENOBUFS;
	}
}

/*
 * RDMA cannot reach connect()'s destination: remember it and say whether
 * TCP may take over (else connect() fails with sdp_fb_errno()).
 */
bool sdp_fb_failed(struct sdp_sock *ssk, int reason)
{
	struct net *net = sock_net(&ssk->sk);

	SDP_INC_STATS(net, SDP_MIB_CONNECT_FAILED);
	if (!sdp_fb_allowed(ssk))
		return false;
	if (reason != SDP_FB_RESOURCES && reason != SDP_FB_PORT)
		sdp_ncache_add(net, &ssk->fb.addr, reason);
	return true;
}

/* From an event (an upcall, or the attempt's timer): fall back, or fail the connect. */
void sdp_fb_or_fail(struct sock *sk, int reason)
{
	struct sdp_sock *ssk = sdp_sk(sk);

	if (sdp_fb_failed(ssk, reason))
		sdp_fb_start_async(ssk, reason);
	else
		sdp_done(sk, sdp_fb_errno(reason));
}

/* A listener that serves TCP only. */
void sdp_fb_listener(struct sdp_sock *lssk, int reason)
{
	/* (its own address, for the tracepoint only) */
	if (trace_sdp_fallback_enabled())
		lssk->fb.addrlen = max(kernel_getsockname(lssk->tcp,
				(struct sockaddr *)&lssk->fb.addr), 0);
	SDP_INC_STATS(sock_net(&lssk->sk), SDP_MIB_LISTEN_NO_RDMA);
	sdp_fb_count(lssk, reason);
}

/* The first attempt took too long: process context, via fb_work. */
static void sdp_fb_timeout_work(struct work_struct *work)
{
	struct sdp_sock *ssk = container_of(work, struct sdp_sock, fb.work);
	struct sock *sk = &ssk->sk;

	lock_sock(sk);
	if (sk->sk_state == TCP_SYN_SENT && ssk->fb.transport != SDP_TRANSPORT_TCP &&
	    !sock_flag(sk, SOCK_DEAD))
		sdp_fb_or_fail(sk, SDP_FB_TIMEOUT);
	release_sock(sk);
	sock_put(sk);
}

static void sdp_fb_conn_timer(struct timer_list *t)
{
	struct sdp_sock *ssk = from_timer(ssk, t, fb.conn_timer);

	/* The timer's reference goes to the work (or is dropped there). */
	if (!queue_work(sdp_wq, &ssk->fb.work))
		sock_put(&ssk->sk);
}

static void sdp_fb_retry_work(struct work_struct *work);

void sdp_fb_init(struct sdp_sock *ssk)
{
	INIT_WORK(&ssk->fb.work, sdp_fb_timeout_work);
	timer_setup(&ssk->fb.conn_timer, sdp_fb_conn_timer, 0);
	INIT_DELAYED_WORK(&ssk->fb.retry_work, sdp_fb_retry_work);
}

/* connect()'s destination, for TCP should it come to that. */
void sdp_fb_target(struct sdp_sock *ssk, const struct sockaddr_storage *dst, int len)
{
	memcpy(&ssk->fb.addr, dst, sizeof(*dst));
	ssk->fb.addrlen = len;
}

/* A new connect() or listen(): no attempt so far, no transport chosen. */
void sdp_fb_reset(struct sdp_sock *ssk)
{
	ssk->fb.syn_retries = 0;
	ssk->fb.transport = SDP_TRANSPORT_NONE;
}

/* Unlocked, before sdp_fb_reset(): a retry under way ends first. */
void sdp_fb_cancel(struct sdp_sock *ssk)
{
	if (cancel_delayed_work_sync(&ssk->fb.retry_work))
		sock_put(&ssk->sk);
}

/*
 * The socket is being destroyed. Not the _sync variants: a child is
 * destroyed from its listener's CM handler, and these works destroy ids
 * (their handler mutexes). One already running holds its own reference
 * and, finding the socket closed, does nothing.
 */
void sdp_fb_stop(struct sdp_sock *ssk)
{
	if (cancel_work(&ssk->fb.work))
		sock_put(&ssk->sk);
	if (cancel_delayed_work(&ssk->fb.retry_work))
		sock_put(&ssk->sk);
}

/* A listener that served TCP only listens over RDMA again. */
void sdp_fb_rearmed(struct sdp_sock *lssk)
{
	lssk->fb.reason = SDP_FB_NONE;
}

/*
 * Upcall: the connection is up over RDMA. A socket still connecting (a
 * passive child may have had its peer's DisConn or Abort before the event)
 * becomes ESTABLISHED; the attempt's bound is off.
 */
void sdp_fb_established(struct sock *sk)
{
	struct sdp_sock *ssk = sdp_sk(sk);

	ssk->fb.transport = SDP_TRANSPORT_RDMA;
	sk_stop_timer(sk, &ssk->fb.conn_timer);
	if ((1 << sk->sk_state) & (TCPF_SYN_SENT | TCPF_SYN_RECV))
		sdp_set_state(sk, TCP_ESTABLISHED);
	sdp_keepalive_reset(ssk);
}

/*
 * Locked, refused as busy: past the time TCP's connect() gives up
 * (TCP_USER_TIMEOUT, TCP_SYNCNT, tcp_syn_retries), fail as it does.
 */
static bool sdp_fb_syn_expired(struct sdp_sock *ssk)
{
	if (time_before(jiffies, ssk->fb.syn_deadline))
		return false;
	SDP_INC_STATS(sock_net(&ssk->sk), SDP_MIB_CONNECT_FAILED);
	sdp_done(&ssk->sk, ETIMEDOUT);
	return true;
}

/* After the listener's word on when a place frees: its timer's latency. */
#define SDP_RETRY_SLACK		(HZ / 4)

/*
 * Upcall: a busy SDP listener refused us. Try again after TCP's SYN
 * retransmit delays (1 s, 2 s, 4 s, ...), but no sooner than twice the time
 * the refusal took (@took); or sooner when the listener said a place frees
 * sooner (@retry_ms: a peer holding its queue with connections it never
 * completes then delays us until their syn_timeout_ms, not beyond); and no
 * later than TCP's deadline. That deadline, not a count of refusals, ends
 * it: such hints make refusals come faster than retransmissions.
 *
 * A slow refusal means requests queue at the listener's CM, which serves
 * them one at a time (a dropped SYN costs TCP nothing; a refused request
 * costs the CM a connection id and a reject). A request that waits there
 * past the CM's response timeout (about 6 s) is sent again, and each copy
 * that arrives after the refusal is a new request: retrying on TCP's
 * schedule regardless would keep that queue past the timeout for good.
 */
void sdp_fb_busy(struct sock *sk, u32 retry_ms, unsigned long took)
{
	struct sdp_sock *ssk = sdp_sk(sk);
	unsigned long now = jiffies;
	unsigned long delay = min_t(unsigned long, HZ << min_t(u8, ssk->fb.syn_retries, 7),
				    TCP_RTO_MAX);

	sk_stop_timer(sk, &ssk->fb.conn_timer);
	if (sdp_fb_syn_expired(ssk))
		return;
	delay = max(delay, 2 * took);
	if (retry_ms)
		delay = min(delay, msecs_to_jiffies(retry_ms) + SDP_RETRY_SLACK);
	delay = min(delay, ssk->fb.syn_deadline - now);
	if (ssk->fb.syn_retries < U8_MAX)
		ssk->fb.syn_retries++;
	SDP_INC_STATS(sock_net(sk), SDP_MIB_CONNECT_RETRIES);
	sock_hold(sk);
	if (!queue_delayed_work(sdp_wq, &ssk->fb.retry_work, delay))
		sock_put(sk);
}

static void sdp_fb_retry_work(struct work_struct *work)
{
	struct sdp_sock *ssk = container_of(to_delayed_work(work), struct sdp_sock,
					    fb.retry_work);
	struct sock *sk = &ssk->sk;
	int reason;

	lock_sock(sk);
	if (sk->sk_state == TCP_SYN_SENT && !sdp_fb(ssk) && !sdp_fb_syn_expired(ssk)) {
		/* A new id for the new attempt, on the same port. */
		sdp_conn_release(ssk->conn);
		release_sock(sk);
		sdp_cm_destroy(ssk->conn);
		lock_sock(sk);
		if (sk->sk_state == TCP_SYN_SENT && !sdp_fb(ssk) &&
		    !sdp_cm_has_id(ssk->conn)) {
			reason = sdp_connect_rdma(ssk, &ssk->fb.addr);
			if (reason)
				sdp_fb_or_fail(sk, reason);
			else
				sdp_fb_arm(ssk);
		}
	}
	release_sock(sk);
	sock_put(sk);
}

/*
 * How long TCP's connect() retries its SYN before ETIMEDOUT: TCP_USER_TIMEOUT
 * if set, else TCP_SYNCNT's (or tcp_syn_retries') doubling retransmissions.
 */
static unsigned long sdp_syn_timeout(struct sock *sk)
{
	const struct inet_connection_sock *icsk = inet_csk(sk);
	u32 user = READ_ONCE(icsk->icsk_user_timeout);
	int retries = READ_ONCE(icsk->icsk_syn_retries) ? :
		      READ_ONCE(sock_net(sk)->ipv4.sysctl_tcp_syn_retries);

	if (user)
		return msecs_to_jiffies(user);
	/* the first SYN's timeout and each retry's */
	return sdp_tcp_backoff(retries + 1);
}

/*
 * Bound the RDMA attempt: connect_timeout_ms, then TCP takes over. When
 * RDMA is all we may use, as long as TCP would try before ETIMEDOUT. The
 * deadline counts from the first attempt: a busy listener's retries keep
 * it (sdp_fb_busy()), as TCP's SYN retransmissions do.
 */
void sdp_fb_arm(struct sdp_sock *ssk)
{
	struct sdp_net *sn = sdp_net(sock_net(&ssk->sk));

	if (!ssk->fb.syn_retries)
		ssk->fb.syn_deadline = jiffies + sdp_syn_timeout(&ssk->sk);
	if (sdp_fb_allowed(ssk))
		sk_reset_timer(&ssk->sk, &ssk->fb.conn_timer, jiffies +
			       msecs_to_jiffies(READ_ONCE(sn->connect_timeout_ms)));
	else
		sk_reset_timer(&ssk->sk, &ssk->fb.conn_timer, ssk->fb.syn_deadline);
}

/*
 * Socket-level options belong to the SDP sock; errors a call consumed on
 * one side are gone from the other. Before and after each forwarded call.
 */
void sdp_fb_sync(struct sdp_sock *ssk)
{
	struct sock *sk = &ssk->sk, *t = ssk->tcp->sk;
	int e = READ_ONCE(ssk->fb.err);

	sdp_fb_ready(ssk);
	if (e) {
		if (!READ_ONCE(sk->sk_err))
			cmpxchg(&t->sk_err, e, 0);	/* read with SO_ERROR */
		else if (!READ_ONCE(t->sk_err))
			cmpxchg(&sk->sk_err, e, 0);	/* read by a TCP call */
		if (!READ_ONCE(sk->sk_err) || !READ_ONCE(t->sk_err))
			WRITE_ONCE(ssk->fb.err, 0);
	}
	sdp_tcp_sync(ssk);
	/* SO_RCVBUF/SO_SNDBUF read TCP's autotuned sizes. */
	if (!(sk->sk_userlocks & SOCK_RCVBUF_LOCK))
		WRITE_ONCE(sk->sk_rcvbuf, READ_ONCE(t->sk_rcvbuf));
	if (!(sk->sk_userlocks & SOCK_SNDBUF_LOCK))
		WRITE_ONCE(sk->sk_sndbuf, READ_ONCE(t->sk_sndbuf));
}

/* MSG_SPLICE_PAGES goes along: TCP takes its own page references or copies. */
int sdp_fb_sendmsg(struct sdp_sock *ssk, struct msghdr *msg, size_t len)
{
	struct socket *tcp = ssk->tcp;
	int ret;

	sdp_fb_sync(ssk);
	ret = tcp->ops->sendmsg(tcp, msg, len);
	sdp_fb_sync(ssk);
	return ret;
}

int sdp_fb_recvmsg(struct sdp_sock *ssk, struct msghdr *msg, size_t len, int flags)
{
	struct socket *tcp = ssk->tcp;
	int ret;

	sdp_fb_sync(ssk);
	ret = tcp->ops->recvmsg(tcp, msg, len, flags);
	sdp_fb_sync(ssk);
	return ret;
}

/*
 * TCP's connect() on the native socket. A blocking one waits at most
 * @timeo: what an RDMA attempt left of SO_SNDTIMEO (MAX_SCHEDULE_TIMEOUT:
 * all of it), so that the caller's whole wait is bounded as TCP's. Another
 * thread's call on the socket during the connect may meanwhile reset it
 * (sdp_fb_sync), or run with it: a window accepted for a rare pattern.
 */
int sdp_fb_connect(struct socket *sock, struct sockaddr *uaddr, int len, int flags,
		   long timeo)
{
	struct sdp_sock *ssk = sdp_sk(sock->sk);
	struct socket *tcp = ssk->tcp;
	int err;

	sdp_fb_sync(ssk);
	/* a listener shut down: the connection's hooks, not the listener's */
	if (READ_ONCE(ssk->fb.listen_sk) == tcp->sk && ssk->sk.sk_socket)
		sdp_fb_attach(ssk);
	if (timeo < READ_ONCE(tcp->sk->sk_sndtimeo))
		WRITE_ONCE(tcp->sk->sk_sndtimeo, timeo);
	err = tcp->ops->connect(tcp, uaddr, len, flags);
	sock->state = tcp->state;
	/* SO_SNDTIMEO as the program set it, again */
	sdp_fb_sync(ssk);
	return err;
}

/*
 * The native socket listens. TCP clones its children from it, callbacks and
 * sk_user_data included: it must not carry our error hook while it listens,
 * or a child would report to the listener and a closed child would call
 * itself through the saved pointer. Nothing reports errors on a listener.
 * The listener hooks go on before it is hashed, so that no child misses
 * them. The SDP socket is locked.
 */
int sdp_fb_listen(struct sdp_sock *ssk, int backlog)
{
	struct socket *tcp = ssk->tcp;
	struct sock *t = tcp->sk;
	bool may_listen = tcp->state == SS_UNCONNECTED &&
			  (1 << t->sk_state) & (TCPF_CLOSE | TCPF_LISTEN);
	int err;

	/* A socket TCP will refuse keeps its hook (it may be connected). */
	if (!may_listen || ssk->fb.listen_sk == t)
		return kernel_listen(tcp, backlog);
	sdp_fb_detach(ssk, tcp);
	write_lock_bh(&t->sk_callback_lock);
	sdp_fb_hook_listen(ssk, t);
	write_unlock_bh(&t->sk_callback_lock);
	err = kernel_listen(tcp, backlog);
	if (err) {
		sdp_fb_detach(ssk, tcp);
		if (ssk->sk.sk_socket)
			sdp_fb_attach(ssk);
	}
	return err;
}

/*
 * A plain TCP client on the listener's native socket (@flags: O_NONBLOCK)
 * becomes @child, a new SDP socket over TCP from the start.
 */
int sdp_fb_accept(struct sdp_sock *lssk, struct sdp_sock *child, int flags)
{
	struct socket *tcp;
	struct sock *t;
	int err;

	err = kernel_accept(lssk->tcp, &tcp, flags & O_NONBLOCK);
	if (err)
		return err;
	/* TCP's callbacks again: the SDP child has the listener's (below) */
	t = tcp->sk;
	lock_sock(t);
	write_lock_bh(&t->sk_callback_lock);
	sdp_fb_restore_tcp(lssk, t);
	t->sk_user_data = NULL;
	write_unlock_bh(&t->sk_callback_lock);
	release_sock(t);
	sdp_inherit_sk(child, lssk);
	child->tcp = tcp;
	/* TCP cloned the native listener; the SDP one's shadow is newer */
	sdp_tcp_inherit(child, lssk);
	sdp_tcp_refresh(child);
	child->fb.transport = SDP_TRANSPORT_TCP;
	/* (where the client is, for the tracepoint only) */
	if (trace_sdp_fallback_enabled())
		child->fb.addrlen = max(kernel_getpeername(tcp,
				(struct sockaddr *)&child->fb.addr), 0);
	sdp_fb_count(child, SDP_FB_PEER_TCP);
	return 0;
}

/* Does the listener's native socket have a TCP client waiting? */
bool sdp_fb_pending(const struct sdp_sock *lssk)
{
	return !reqsk_queue_empty(&inet_csk(lssk->tcp->sk)->icsk_accept_queue);
}
