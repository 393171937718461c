// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol: socket options.
 *
 * SOL_SOCKET options land on our sock (the sockets core handles them) and
 * are mirrored to the native socket by sdp_tcp_sync() where they matter:
 * before bind(), listen() and connect(), and in children. SOL_TCP, SOL_IP and
 * SOL_IPV6 options are the native socket's: it validates them with TCP's own
 * rules and keeps their values, and we cache what the data path needs
 * (TCP_NODELAY, TCP_CORK, TCP_NOTSENT_LOWAT). SOL_SDP is ours.
 */
#include <linux/tcp.h>
#include <net/tcp.h>

#include "sdp_sock.h"
#include "sdp_conn.h"

/* Mirror socket-level settings to the native socket. */
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
	release_sock(t);
}

/* Copy SOL_TCP settings between native sockets (family change, children). */
void sdp_tcp_copy_opts(struct socket *to, struct socket *from)
{
	const struct tcp_sock *f = tcp_sk(from->sk);
	struct sock *t = to->sk;

	if (f->nonagle & TCP_NAGLE_OFF)
		tcp_sock_set_nodelay(t);
	if (f->nonagle & TCP_NAGLE_CORK)
		tcp_sock_set_cork(t, true);
	if (f->keepalive_time)
		tcp_sock_set_keepidle(t, f->keepalive_time / HZ);
	if (f->keepalive_intvl)
		tcp_sock_set_keepintvl(t, f->keepalive_intvl / HZ);
	if (f->keepalive_probes)
		tcp_sock_set_keepcnt(t, f->keepalive_probes);
	if (inet_csk(from->sk)->icsk_user_timeout)
		tcp_sock_set_user_timeout(t, inet_csk(from->sk)->icsk_user_timeout);
	lock_sock(t);
	tcp_sk(t)->rx_opt.user_mss = f->rx_opt.user_mss;
	tcp_sk(t)->notsent_lowat = f->notsent_lowat;
	release_sock(t);
}

/* Re-read what the data path needs from the native socket. */
void sdp_tcp_refresh(struct sdp_sock *ssk)
{
	const struct tcp_sock *tp = tcp_sk(ssk->tcp->sk);
	bool nodelay = tp->nonagle & TCP_NAGLE_OFF, cork = tp->nonagle & TCP_NAGLE_CORK;
	bool push = (nodelay && !ssk->nodelay) || (!cork && ssk->cork);

	ssk->nodelay = nodelay;
	ssk->cork = cork;
	WRITE_ONCE(ssk->notsent_lowat, tp->notsent_lowat ? :
		   READ_ONCE(sock_net(&ssk->sk)->ipv4.sysctl_tcp_notsent_lowat));
	ssk->user_timeout = READ_ONCE(inet_csk(ssk->tcp->sk)->icsk_user_timeout);
	/* Setting TCP_NODELAY or clearing TCP_CORK sends what waits, as TCP. */
	if (push)
		sdp_tx_push(ssk, true);
	/* TCP_USER_TIMEOUT may have changed: a wait in progress gets it now. */
	if (ssk->conn)
		sdp_tx_watch(ssk, true);
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

static void sdp_fill_info(struct sdp_sock *ssk, struct sdp_info *info)
{
	memset(info, 0, sizeof(*info));
	info->transport = ssk->transport;
	/* A listener: whether it listens over RDMA now, or serves TCP only. */
	if (ssk->sk.sk_state == TCP_LISTEN && info->transport == SDP_TRANSPORT_NONE)
		info->transport = READ_ONCE(ssk->id) ? SDP_TRANSPORT_RDMA : SDP_TRANSPORT_TCP;
	info->fallback_reason = ssk->fb_reason;
	info->state = ssk->sk.sk_state;
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
		size = ssk->tcp->ops->getsockopt(ssk->tcp, level, optname,
						 optval, optlen);
		release_sock(sk);
		return size;
	}
	release_sock(sk);
	return sdp_put_opt(optval, optlen, &u, size);
}
