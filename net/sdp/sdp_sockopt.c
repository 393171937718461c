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
#include "sdp_conn.h"

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
	u8 nonagle = ssk->shadow.nonagle;
	bool nodelay = nonagle & TCP_NAGLE_OFF, cork = nonagle & TCP_NAGLE_CORK;
	u32 user = READ_ONCE(ssk->shadow.inet_conn.icsk_user_timeout);
	u32 keepidle = READ_ONCE(ssk->shadow.keepalive_time);
	bool push = (nodelay && !ssk->nodelay) || (!cork && ssk->cork);
	bool rearm = user != ssk->user_timeout, rekeep = keepidle != ssk->keepidle;

	if (nodelay == ssk->nodelay && cork == ssk->cork && !rearm && !rekeep)
		return;
	ssk->nodelay = nodelay;
	ssk->cork = cork;
	ssk->user_timeout = user;
	ssk->keepidle = keepidle;
	if (!ssk->conn)
		return;
	if (push)
		sdp_tx_push(ssk, true);
	if (rearm)
		sdp_tx_watch(ssk, true);
	if (rekeep)
		sdp_keepalive_rearm(ssk);
	sdp_update_counts(ssk);
}

/* Re-read the SOL_TCP settings setsockopt() left in the native socket. */
void sdp_tcp_refresh(struct sdp_sock *ssk)
{
	const struct sock *t = ssk->tcp->sk;

	sdp_tcp_copy(&ssk->sk, t);
	WRITE_ONCE(ssk->notsent_lowat, tcp_sk(t)->notsent_lowat ? :
		   READ_ONCE(sock_net(&ssk->sk)->ipv4.sysctl_tcp_notsent_lowat));
	sdp_opts_apply(ssk);
}

/* SDP_REUSEPORT: SO_REUSEPORT as the core sets it for inet sockets. */
static int sdp_set_reuseport(struct sdp_sock *ssk, sockptr_t optval,
			     unsigned int optlen)
{
	int val;

	if (optlen < sizeof(val))
		return -EINVAL;
	if (copy_from_sockptr(&val, optval, sizeof(val)))
		return -EFAULT;
	lock_sock(&ssk->sk);
	ssk->sk.sk_reuseport = !!val;
	release_sock(&ssk->sk);
	return 0;
}

/*
 * SOL_SOCKET, where the core lets us have it (sdp_sock_own_sockopts()):
 * SO_REUSEPORT as the core sets it for a TCP socket, the rest to the core
 * unchanged, as if it had kept them.
 */
static int sdp_setsockopt_socket(struct socket *sock, int optname,
				 sockptr_t optval, unsigned int optlen)
{
	if (optname == SO_REUSEPORT)
		return sdp_set_reuseport(sdp_sk(sock->sk), optval, optlen);
	return sock_setsockopt(sock, SOL_SOCKET, optname, optval, optlen);
}

/* SDP_FAMILY: the family socket() was asked for, as the shim knows it. */
static int sdp_set_family(struct sdp_sock *ssk, sockptr_t optval, unsigned int optlen)
{
	int family, err = 0;

	if (optlen < sizeof(family))
		return -EINVAL;
	if (copy_from_sockptr(&family, optval, sizeof(family)))
		return -EFAULT;
	if (family != AF_INET && family != AF_INET6)
		return -EAFNOSUPPORT;
	lock_sock(&ssk->sk);
	if (sdp_fb(ssk) || !sdp_tcp_fresh(ssk))
		err = -EISCONN;
	else if (ssk->tcp->sk->sk_family != family)
		err = sdp_tcp_create(ssk, family, NULL);
	if (!err)
		ssk->family_fixed = true;
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
	    sdp_tcp_fresh(ssk) && !ssk->family_fixed) {
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

/* SDP_INFO, and sock_diag's SDP_DIAG_INFO. */
void sdp_fill_info(const struct sdp_sock *ssk, struct sdp_info *info)
{
	memset(info, 0, sizeof(*info));
	info->transport = ssk->transport;
	/* A listener: whether it listens over RDMA now, or serves TCP only. */
	if (ssk->sk.sk_state == TCP_LISTEN && info->transport == SDP_TRANSPORT_NONE)
		info->transport = READ_ONCE(ssk->id) ? SDP_TRANSPORT_RDMA : SDP_TRANSPORT_TCP;
	info->fallback_reason = ssk->fb_reason;
	info->state = ssk->sk.sk_state;
	info->syn_queue = ssk->syn_count;
	sdp_conn_info(ssk, info);
	info->tx_bytes = ssk->stats.tx_bytes;
	info->rx_bytes = ssk->stats.rx_bytes;
	info->tx_msgs = ssk->stats.tx_msgs;
	info->rx_msgs = ssk->stats.rx_msgs;
	info->tx_credit_updates = ssk->stats.tx_credit_updates;
	strscpy(info->ibdev, ssk->ibdev, sizeof(info->ibdev));
}

/* TCP_INFO for a connection over RDMA: what maps onto SDP. */
static void sdp_fill_tcp_info(struct sdp_sock *ssk, struct tcp_info *ti)
{
	memset(ti, 0, sizeof(*ti));
	ti->tcpi_state = ssk->sk.sk_state;
	sdp_conn_tcp_info(ssk, ti);
	ti->tcpi_bytes_acked = ssk->stats.tx_bytes;
	ti->tcpi_bytes_sent = ssk->stats.tx_bytes;
	ti->tcpi_bytes_received = ssk->stats.rx_bytes;
	ti->tcpi_segs_out = ssk->stats.tx_msgs;
	ti->tcpi_segs_in = ssk->stats.rx_msgs;
	ti->tcpi_data_segs_out = ssk->stats.tx_msgs - ssk->stats.tx_credit_updates;
	ti->tcpi_rcv_space = ssk->sk.sk_rcvbuf;
	ti->tcpi_rtt = ssk->srtt_us;
	ti->tcpi_rttvar = ssk->rttvar_us;
	ti->tcpi_min_rtt = ssk->min_rtt_us;
	ti->tcpi_snd_wnd = ti->tcpi_snd_cwnd * ti->tcpi_snd_mss;
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
			u.val = READ_ONCE(ssk->fb_reason);
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
		if (optname != SDP_INFO)
			return -ENOPROTOOPT;
		lock_sock(sk);
		sdp_flush(ssk);
		sdp_fill_info(ssk, &u.sdp);
		release_sock(sk);
		return sdp_put_opt(optval, optlen, &u.sdp, sizeof(u.sdp));
	}
	lock_sock(sk);
	if (level == SOL_TCP && optname == TCP_INFO &&
	    ssk->transport == SDP_TRANSPORT_RDMA) {
		sdp_flush(ssk);
		sdp_fill_tcp_info(ssk, &u.tcp);
		size = sizeof(u.tcp);
	} else if (level == SOL_TCP && optname == TCP_MAXSEG &&
		   (u.val = sdp_conn_mss(ssk))) {
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
