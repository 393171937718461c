// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol: socket options.
 *
 * SOL_SOCKET options land on our sock (the sockets core handles them, or
 * from 6.2 hands them to sdp_setsockopt_socket()) and are mirrored to the
 * native socket by sdp_tcp_sync() where they matter: before bind(),
 * listen() and connect(), and in children. SOL_TCP, SOL_IP and
 * SOL_IPV6 options are the native socket's: it validates them with TCP's own
 * rules and keeps their values. Those the data path or a fallback needs
 * (TCP_NODELAY, TCP_CORK, keepalive, TCP_USER_TIMEOUT ...) are also kept in
 * our socket's tcp_sock shadow, where kernel users' tcp_sock_set_*() write
 * them: the shadow is the newest, and goes back to the native socket before
 * each SOL_TCP setsockopt() and with sdp_tcp_sync(). SOL_SDP is ours.
 */
#include <linux/tcp.h>
#include <net/tcp.h>

#include "sdp_sock.h"
#include "sdp_fallback.h"

#define SDP_NAGLE_BITS	(TCP_NAGLE_OFF | TCP_NAGLE_CORK)

/*
 * The SOL_TCP settings the data path or a fallback uses, from @from to @to:
 * a native socket and the shadow of one of ours, either way, @to locked by
 * its owner. A native socket is not connected yet, or carries the
 * connection since a fallback: TCP applies a new value from its next send.
 */
static void sdp_tcp_copy(struct sock *to, const struct sock *from)
{
	const struct tcp_sock *f = tcp_sk(from);
	struct tcp_sock *t = tcp_sk(to);

	t->nonagle = (t->nonagle & ~SDP_NAGLE_BITS) | (f->nonagle & SDP_NAGLE_BITS);
	WRITE_ONCE(t->keepalive_time, READ_ONCE(f->keepalive_time));
	WRITE_ONCE(t->keepalive_intvl, READ_ONCE(f->keepalive_intvl));
	WRITE_ONCE(t->keepalive_probes, READ_ONCE(f->keepalive_probes));
	WRITE_ONCE(inet_csk(to)->icsk_user_timeout,
		   READ_ONCE(inet_csk(from)->icsk_user_timeout));
	WRITE_ONCE(inet_csk(to)->icsk_syn_retries,
		   READ_ONCE(inet_csk(from)->icsk_syn_retries));
	t->rx_opt.user_mss = f->rx_opt.user_mss;
	WRITE_ONCE(t->notsent_lowat, READ_ONCE(f->notsent_lowat));
}

/* Mirror socket-level settings and the shadow's SOL_TCP ones to the native socket. */
void sdp_tcp_sync(struct sdp_sock *ssk)
{
	struct sock *sk = &ssk->sk, *t = ssk->tcp->sk;
	bool keepalive = sock_flag(sk, SOCK_KEEPOPEN);
	u8 locks = SOCK_SNDBUF_LOCK | SOCK_RCVBUF_LOCK;

	lock_sock(t);
	t->sk_reuse = sk->sk_reuse;
	t->sk_reuseport = sk->sk_reuseport;
	if (t->sk_bound_dev_if != sk->sk_bound_dev_if) {
		t->sk_bound_dev_if = sk->sk_bound_dev_if;
		sk_dst_reset(t);
	}
	t->sk_priority = sk->sk_priority;
	t->sk_mark = sk->sk_mark;
	WRITE_ONCE(t->sk_rcvlowat, sk->sk_rcvlowat);
	t->sk_rcvtimeo = sk->sk_rcvtimeo;
	t->sk_sndtimeo = sk->sk_sndtimeo;
	t->sk_lingertime = sk->sk_lingertime;
	sock_valbool_flag(t, SOCK_LINGER, sock_flag(sk, SOCK_LINGER));
	sock_valbool_flag(t, SOCK_URGINLINE, sock_flag(sk, SOCK_URGINLINE));
	sock_valbool_flag(t, SOCK_ZEROCOPY, sock_flag(sk, SOCK_ZEROCOPY));
	t->sk_userlocks = (t->sk_userlocks & ~locks) | (sk->sk_userlocks & locks);
	if (sk->sk_userlocks & SOCK_SNDBUF_LOCK)
		WRITE_ONCE(t->sk_sndbuf, sk->sk_sndbuf);
	if (sk->sk_userlocks & SOCK_RCVBUF_LOCK)
		WRITE_ONCE(t->sk_rcvbuf, sk->sk_rcvbuf);
	if (keepalive != sock_flag(t, SOCK_KEEPOPEN)) {
		if (t->sk_prot->keepalive)
			t->sk_prot->keepalive(t, keepalive);
		sock_valbool_flag(t, SOCK_KEEPOPEN, keepalive);
	}
	/* the shadow holds the newest SOL_TCP settings (sdp_opts_apply()) */
	sdp_tcp_copy(t, &ssk->sk);
	release_sock(t);
}

/* A listener's SOL_TCP settings to a child's native socket. */
void sdp_tcp_inherit(struct sdp_sock *child, const struct sdp_sock *parent)
{
	struct sock *t = child->tcp->sk;

	lock_sock(t);
	sdp_tcp_copy(t, &parent->sk);
	release_sock(t);
}

/*
 * The shadow's SOL_TCP settings into the data path, after setsockopt() or
 * a kernel user's tcp_sock_set_*() (from its release_sock()). As TCP's:
 * setting TCP_NODELAY or clearing TCP_CORK sends what waits; a new
 * TCP_USER_TIMEOUT applies to a wait in progress.
 */
void sdp_opts_apply(struct sdp_sock *ssk)
{
	struct sdp_opts *o = &ssk->opts;
	u8 nonagle = ssk->shadow.nonagle;
	bool nodelay = nonagle & TCP_NAGLE_OFF, cork = nonagle & TCP_NAGLE_CORK;
	u32 user = READ_ONCE(ssk->shadow.inet_conn.icsk_user_timeout);
	u32 keepidle = READ_ONCE(ssk->shadow.keepalive_time);
	bool push = (nodelay && !o->nodelay) || (!cork && o->cork);
	bool rearm = user != o->user_timeout, rekeep = keepidle != o->keepidle;

	if (nodelay == o->nodelay && cork == o->cork && !rearm && !rekeep)
		return;
	o->nodelay = nodelay;
	o->cork = cork;
	o->user_timeout = user;
	o->keepidle = keepidle;
	sdp_conn_opts(ssk->conn, nodelay, cork, push, rearm);
	if (rekeep && sdp_view(ssk)->live)
		sdp_keepalive_rearm(ssk);
}

/*
 * Upcall: TCP_USER_TIMEOUT as the connection applies it now, from the
 * shadow (6.12's tcp_sock_set_user_timeout() takes no lock).
 */
u32 sdp_user_timeout(const struct sock *sk)
{
	return READ_ONCE(sdp_sk(sk)->shadow.inet_conn.icsk_user_timeout);
}

/* Re-read the SOL_TCP settings setsockopt() left in the native socket. */
void sdp_tcp_refresh(struct sdp_sock *ssk)
{
	const struct sock *t = ssk->tcp->sk;

	sdp_tcp_copy(&ssk->sk, t);
	WRITE_ONCE(ssk->opts.notsent_lowat, tcp_sk(t)->notsent_lowat ? :
		   READ_ONCE(sock_net(&ssk->sk)->ipv4.sysctl_tcp_notsent_lowat));
	sdp_opts_apply(ssk);
}

/*
 * Create the native socket, or replace it by one of another family while
 * nothing is bound. It holds a netns reference like a user socket, since TCP
 * may keep it alive after we let it go. SOL_TCP settings come from
 * @parent (a listener), or from ours (the shadow).
 */
int sdp_tcp_create(struct sdp_sock *ssk, int family, const struct sdp_sock *parent)
{
	struct net *net = sock_net(&ssk->sk);
	struct socket *tcp, *old;
	int err;

	err = sdp_fault(SDP_FAULT_TCP) ? -ENOBUFS :
	      sock_create_kern(net, family, SOCK_STREAM, IPPROTO_TCP, &tcp);
	if (err)
		return err;
	tcp->sk->sk_net_refcnt = 1;
	get_net_track(net, &tcp->sk->ns_tracker, GFP_KERNEL);
	sock_inuse_add(net, 1);

	old = ssk->tcp;
	ssk->tcp = tcp;
	sdp_tcp_sync(ssk);
	if (parent)
		sdp_tcp_inherit(ssk, parent);
	if (old) {
		sdp_fb_detach(ssk, old);
		sock_release(old);
	}
	/* A socket the program holds: TCP wakes its waiters (see fallback). */
	if (ssk->sk.sk_socket)
		sdp_fb_attach(ssk);
	sdp_tcp_refresh(ssk);
	return 0;
}

/*
 * A child takes its listener's socket-level settings, as TCP's clones do:
 * a kernel user's callbacks and sk_user_data included (unless marked
 * SK_USER_DATA_NOCOPY), so that its sk_state_change sees the child
 * established before accept(), as drivers such as DRBD wait for.
 */
void sdp_inherit_sk(struct sdp_sock *child, struct sdp_sock *parent)
{
	struct sock *csk = &child->sk, *psk = &parent->sk;

	read_lock_bh(&psk->sk_callback_lock);
	csk->sk_data_ready = psk->sk_data_ready;
	csk->sk_write_space = psk->sk_write_space;
	csk->sk_state_change = psk->sk_state_change;
	csk->sk_error_report = psk->sk_error_report;
	if (!sk_user_data_is_nocopy(psk))
		csk->sk_user_data = psk->sk_user_data;
	read_unlock_bh(&psk->sk_callback_lock);
	csk->sk_allocation = psk->sk_allocation;
	sdp_memcg_inherit(csk, psk);

	child->opts.zcopy_set = parent->opts.zcopy_set;
	child->opts.zcopy_thresh = parent->opts.zcopy_thresh;
	csk->sk_userlocks = psk->sk_userlocks & (SOCK_SNDBUF_LOCK | SOCK_RCVBUF_LOCK);
	csk->sk_sndbuf = psk->sk_sndbuf;
	csk->sk_rcvbuf = psk->sk_rcvbuf;
	csk->sk_rcvlowat = psk->sk_rcvlowat;
	csk->sk_rcvtimeo = psk->sk_rcvtimeo;
	csk->sk_sndtimeo = psk->sk_sndtimeo;
	csk->sk_lingertime = psk->sk_lingertime;
	csk->sk_priority = psk->sk_priority;
	csk->sk_mark = psk->sk_mark;
	csk->sk_bound_dev_if = psk->sk_bound_dev_if;
	sock_valbool_flag(csk, SOCK_LINGER, sock_flag(psk, SOCK_LINGER));
	sock_valbool_flag(csk, SOCK_KEEPOPEN, sock_flag(psk, SOCK_KEEPOPEN));
	sock_valbool_flag(csk, SOCK_URGINLINE, sock_flag(psk, SOCK_URGINLINE));
	sock_valbool_flag(csk, SOCK_ZEROCOPY, sock_flag(psk, SOCK_ZEROCOPY));
}

/* An int option's value: 0, or the errno setsockopt() returns. */
static int sdp_opt_int(sockptr_t optval, unsigned int optlen, int *val)
{
	if (optlen < sizeof(*val))
		return -EINVAL;
	return copy_from_sockptr(val, optval, sizeof(*val)) ? -EFAULT : 0;
}

/* SDP_REUSEPORT: SO_REUSEPORT as the core sets it for inet sockets. */
static int sdp_set_reuseport(struct sdp_sock *ssk, sockptr_t optval,
			     unsigned int optlen)
{
	int val, err = sdp_opt_int(optval, optlen, &val);

	if (err)
		return err;
	lock_sock(&ssk->sk);
	ssk->sk.sk_reuseport = !!val;
	release_sock(&ssk->sk);
	return 0;
}

/*
 * SDP_ZEROCOPY: SO_ZEROCOPY, which the core takes for TCP alone (from 6.2
 * it gives us SO_ZEROCOPY itself). A fallback's native socket gets it with
 * the other socket-level flags (sdp_tcp_sync(), before each forwarded
 * call): MSG_ZEROCOPY is TCP's then.
 */
static int sdp_set_zerocopy(struct sdp_sock *ssk, sockptr_t optval,
			    unsigned int optlen)
{
	int val, err = sdp_opt_int(optval, optlen, &val);

	if (err)
		return err;
	if (val < 0 || val > 1)
		return -EINVAL;
	lock_sock(&ssk->sk);
	sock_valbool_flag(&ssk->sk, SOCK_ZEROCOPY, val);
	release_sock(&ssk->sk);
	return 0;
}

/* SDP_ZCOPY_THRESH: bytes, 0 for never. */
static int sdp_set_zcopy_thresh(struct sdp_sock *ssk, sockptr_t optval,
				unsigned int optlen)
{
	int val, err = sdp_opt_int(optval, optlen, &val);

	if (err)
		return err;
	if (val < 0)
		return -EINVAL;
	WRITE_ONCE(ssk->opts.zcopy_thresh, val);
	WRITE_ONCE(ssk->opts.zcopy_set, true);
	return 0;
}

/* What a send of this socket goes by (sdp_sendmsg()). */
u32 sdp_zcopy_thresh(const struct sdp_sock *ssk)
{
	if (READ_ONCE(ssk->opts.zcopy_set))
		return READ_ONCE(ssk->opts.zcopy_thresh);
	return READ_ONCE(sdp_net(sock_net(&ssk->sk))->zcopy_thresh);
}

/*
 * SOL_SOCKET, where the core lets us have it (sdp_sock_own_sockopts()):
 * SO_REUSEPORT and SO_ZEROCOPY as the core sets them for a TCP socket, the
 * rest to the core unchanged, as if it had kept them.
 */
static int sdp_setsockopt_socket(struct socket *sock, int optname,
				 sockptr_t optval, unsigned int optlen)
{
	if (optname == SO_REUSEPORT)
		return sdp_set_reuseport(sdp_sk(sock->sk), optval, optlen);
	if (optname == SO_ZEROCOPY)
		return sdp_set_zerocopy(sdp_sk(sock->sk), optval, optlen);
	return sock_setsockopt(sock, SOL_SOCKET, optname, optval, optlen);
}

/* SDP_FAMILY: the family socket() was asked for, as the shim knows it. */
static int sdp_set_family(struct sdp_sock *ssk, sockptr_t optval, unsigned int optlen)
{
	int family, err = sdp_opt_int(optval, optlen, &family);

	if (err)
		return err;
	if (family != AF_INET && family != AF_INET6)
		return -EAFNOSUPPORT;
	lock_sock(&ssk->sk);
	if (sdp_fb(ssk) || !sdp_tcp_fresh(ssk))
		err = -EISCONN;
	else if (ssk->tcp->sk->sk_family != family)
		err = sdp_tcp_create(ssk, family, NULL);
	if (!err)
		ssk->opts.family_fixed = true;
	release_sock(&ssk->sk);
	return err;
}

int sdp_setsockopt(struct socket *sock, int level, int optname,
		   sockptr_t optval, unsigned int optlen)
{
	struct sock *sk = sock->sk;
	struct sdp_sock *ssk = sdp_sk(sk);
	struct socket *tcp;
	int err;

	if (level == SOL_SOCKET)
		return sdp_setsockopt_socket(sock, optname, optval, optlen);
	if (level == SOL_SDP) {
		if (optname == SDP_POLICY)
			return sdp_policy_set(ssk, optval, optlen);
		if (optname == SDP_FAMILY)
			return sdp_set_family(ssk, optval, optlen);
		if (optname == SDP_REUSEPORT)
			return sdp_set_reuseport(ssk, optval, optlen);
		if (optname == SDP_ZCOPY_THRESH)
			return sdp_set_zcopy_thresh(ssk, optval, optlen);
		if (optname == SDP_ZEROCOPY)
			return sdp_set_zerocopy(ssk, optval, optlen);
		return -ENOPROTOOPT;
	}
	/* Upper layers and repair mode would act on the native socket alone. */
	if (level == SOL_TCP &&
	    (optname == TCP_ULP || optname == TCP_REPAIR ||
	     optname == TCP_REPAIR_QUEUE || optname == TCP_REPAIR_OPTIONS ||
	     optname == TCP_REPAIR_WINDOW || optname == TCP_QUEUE_SEQ))
		return -EOPNOTSUPP;

	lock_sock(sk);
	/* IPv6 options make a fresh socket an IPv6 one, as bind(sin6) does. */
	if (level == SOL_IPV6 && ssk->tcp->sk->sk_family == AF_INET &&
	    sdp_tcp_fresh(ssk) && !ssk->opts.family_fixed) {
		err = sdp_tcp_create(ssk, AF_INET6, NULL);
		if (err)
			goto out;
	}
	tcp = ssk->tcp;
	if (level == SOL_TCP) {
		lock_sock(tcp->sk);
		sdp_tcp_copy(tcp->sk, sk);
		release_sock(tcp->sk);
	}
	err = tcp->ops->setsockopt(tcp, level, optname, optval, optlen);
	if (!err && level == SOL_TCP)
		sdp_tcp_refresh(ssk);
out:
	release_sock(sk);
	return err;
}

static int sdp_put_opt(char __user *optval, int __user *optlen,
		       const void *val, int size)
{
	int len;

	if (get_user(len, optlen))
		return -EFAULT;
	if (len < 0)
		return -EINVAL;
	len = min(len, size);
	if (put_user(len, optlen) || copy_to_user(optval, val, len))
		return -EFAULT;
	return 0;
}

/* TCP_INFO for a connection over RDMA: what maps onto SDP. */
static void sdp_fill_tcp_info(struct sdp_sock *ssk, struct tcp_info *ti)
{
	memset(ti, 0, sizeof(*ti));
	ti->tcpi_state = ssk->sk.sk_state;
	ti->tcpi_rcv_space = ssk->sk.sk_rcvbuf;
	sdp_conn_tcp_info(ssk->conn, ti);
}

int sdp_getsockopt(struct socket *sock, int level, int optname,
		   char __user *optval, int __user *optlen)
{
	struct sock *sk = sock->sk;
	struct sdp_sock *ssk = sdp_sk(sk);
	union {
		struct sdp_info sdp;
		struct tcp_info tcp;
		int val;
	} u;
	int size;

	if (level == SOL_SDP) {
		if (optname == SDP_FALLBACK_REASON) {
			u.val = READ_ONCE(ssk->fb.reason);
			return sdp_put_opt(optval, optlen, &u.val, sizeof(u.val));
		}
		if (optname == SDP_POLICY)
			return sdp_policy_get(ssk, optval, optlen);
		if (optname == SDP_FAMILY) {
			lock_sock(sk);
			u.val = ssk->tcp->sk->sk_family;
			release_sock(sk);
			return sdp_put_opt(optval, optlen, &u.val, sizeof(u.val));
		}
		if (optname == SDP_REUSEPORT) {
			u.val = sk->sk_reuseport;
			return sdp_put_opt(optval, optlen, &u.val, sizeof(u.val));
		}
		if (optname == SDP_ZCOPY_THRESH) {
			u.val = sdp_zcopy_thresh(ssk);
			return sdp_put_opt(optval, optlen, &u.val, sizeof(u.val));
		}
		if (optname == SDP_ZEROCOPY) {
			u.val = sock_flag(sk, SOCK_ZEROCOPY);
			return sdp_put_opt(optval, optlen, &u.val, sizeof(u.val));
		}
		if (optname != SDP_INFO)
			return -ENOPROTOOPT;
		lock_sock(sk);
		sdp_conn_flush(ssk->conn);
		sdp_fill_info(ssk, &u.sdp);
		release_sock(sk);
		return sdp_put_opt(optval, optlen, &u.sdp, sizeof(u.sdp));
	}
	lock_sock(sk);
	if (level == SOL_TCP && optname == TCP_INFO &&
	    ssk->fb.transport == SDP_TRANSPORT_RDMA) {
		sdp_conn_flush(ssk->conn);
		sdp_fill_tcp_info(ssk, &u.tcp);
		size = sizeof(u.tcp);
	} else if (level == SOL_TCP && optname == TCP_MAXSEG &&
		   (u.val = sdp_conn_mss(ssk->conn))) {
		size = sizeof(u.val);
	} else {
		/* Under our lock: the native socket may be replaced meanwhile. */
		if (level == SOL_TCP) {
			/* what kernel users' helpers wrote is in the shadow */
			lock_sock(ssk->tcp->sk);
			sdp_tcp_copy(ssk->tcp->sk, sk);
			release_sock(ssk->tcp->sk);
		}
		size = ssk->tcp->ops->getsockopt(ssk->tcp, level, optname,
						 optval, optlen);
		release_sock(sk);
		return size;
	}
	release_sock(sk);
	return sdp_put_opt(optval, optlen, &u, size);
}
