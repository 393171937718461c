// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol: the address family and its socket calls.
 *
 * SDP sockets look like TCP sockets to their users but move their bytes over
 * RDMA reliable connections. Each one owns a native TCP socket (see sdp.h)
 * that holds its port and options. The calls below follow inet_stream_ops
 * and tcp_prot rule for rule: same states, errnos, waits and signals.
 */
#define pr_fmt(fmt) "sdp: " fmt

#include <linux/module.h>
#include <linux/net.h>
#include <linux/in.h>
#include <linux/poll.h>
#include <linux/sockios.h>
#include <asm/ioctls.h>
#include <net/inet_sock.h>
#include <net/tcp.h>

#include "sdp_sock.h"
#include "sdp_fallback.h"



static void sdp_release_cb(struct sock *sk);
static struct proto_ops sdp_proto_ops;

static struct proto sdp_proto = {
	.name		= "SDP",
	.owner		= THIS_MODULE,
	.obj_size	= sizeof(struct sdp_sock),
	.memory_allocated = &sdp_memory_allocated,
	.per_cpu_fw_alloc = &sdp_memory_per_cpu_fw_alloc,
	.memory_pressure = &sdp_memory_pressure,
	.enter_memory_pressure = sdp_enter_memory_pressure,
	.leave_memory_pressure = sdp_leave_memory_pressure,
	.sockets_allocated = &sdp_sockets_allocated,
	.sysctl_mem	= sdp_sysctl_mem,
	.sysctl_rmem	= sdp_sysctl_rmem,
	.sysctl_wmem	= sdp_sysctl_wmem,
	.release_cb	= sdp_release_cb,
	.keepalive	= sdp_set_keepalive,
};

/*
 * release_sock(): what a kernel user's tcp_sock_set_*() wrote into the
 * shadow, then the work completions and timers left to the owner.
 */
static void sdp_release_cb(struct sock *sk)
{
	struct sdp_sock *ssk = sdp_sk(sk);

	sdp_opts_apply(ssk);
	if (test_and_clear_bit(SDP_F_DEFERRED, &ssk->flags))
		sdp_sock_deferred(ssk);
	sdp_conn_release_cb(ssk->conn);
}

static void sdp_sk_destruct(struct sock *sk)
{
	sdp_diag_del(sdp_sk(sk));
	sdp_conn_free(sdp_sk(sk)->conn);
	kfree(sdp_sk(sk)->policy);
	/* MSG_ZEROCOPY's notifications nobody read (TCP's inet_sock_destruct()) */
	skb_queue_purge(&sk->sk_error_queue);
	WARN_ON_ONCE(atomic_read(&sk->sk_omem_alloc));
	/* the rings gave back all they charged; SO_RESERVE_MEM's goes too */
	WARN_ON_ONCE(atomic_read(&sk->sk_rmem_alloc));
	WARN_ON_ONCE(sk->sk_wmem_queued);
	sk_mem_reclaim_final(sk);
	sk_sockets_allocated_dec(sk);
}

/* A socket with its connection, each part set up by its own file. */
static struct sdp_sock *sdp_sk_alloc(struct net *net, struct socket *sock, int kern)
{
	struct sdp_conn *conn;
	struct sdp_sock *ssk;
	struct sock *sk;

	sk = sdp_fault(SDP_FAULT_SOCK) ? NULL :
	     sk_alloc(net, sdp_family, GFP_KERNEL, &sdp_proto, kern);
	if (!sk)
		return NULL;
	conn = sdp_conn_alloc(sk, GFP_KERNEL);
	if (!conn) {
		sk_free(sk);
		return NULL;
	}
	sock_init_data(sock, sk);
	ssk = sdp_sk(sk);
	ssk->conn = conn;
	sk->sk_type = SOCK_STREAM;
	sk->sk_protocol = IPPROTO_TCP;
	sk->sk_state = TCP_CLOSE;
	/* TCP's defaults, so that SO_SNDBUF/SO_RCVBUF read the same. */
	sk->sk_sndbuf = READ_ONCE(net->ipv4.sysctl_tcp_wmem[1]);
	sk->sk_rcvbuf = READ_ONCE(net->ipv4.sysctl_tcp_rmem[1]);
	sk->sk_write_space = sdp_write_space;
	sk->sk_destruct = sdp_sk_destruct;
	sk_sockets_allocated_inc(sk);
	sdp_listen_init(ssk);
	sdp_close_init(ssk);
	timer_setup(sdp_ka_timer(ssk), sdp_keepalive_timer, 0);
	sdp_fb_init(ssk);
	sdp_diag_add(ssk);
	return ssk;
}

/*
 * An RDMA child of @lssk: its settings, and a native socket like its
 * listener's. NULL if it cannot have one.
 */
static struct sdp_sock *sdp_child_new(struct sdp_sock *lssk)
{
	struct sock *lsk = &lssk->sk;
	struct sdp_sock *child;

	child = sdp_sk_alloc(sock_net(lsk), NULL, lsk->sk_kern_sock);
	if (!child)
		return NULL;
	sock_set_flag(&child->sk, SOCK_DEAD);	/* until it is whole */
	sdp_inherit_sk(child, lssk);
	if (sdp_tcp_create(child, lssk->tcp->sk->sk_family, lssk)) {
		sdp_destroy(child);
		return NULL;
	}
	sock_reset_flag(&child->sk, SOCK_DEAD);
	return child;
}

/* A request came to a listener: its queues decide, a child takes it. */
static struct sdp_conn *sdp_request(struct sock *lsk, struct sdp_req *req)
{
	return sdp_listen_request(sdp_sk(lsk), req, sdp_child_new);
}

static int sdp_release(struct socket *sock)
{
	struct sock *sk = sock->sk;

	if (!sk)
		return 0;
	sdp_close(sk, sock_flag(sk, SOCK_LINGER) &&
		  !(current->flags & PF_EXITING) ? sk->sk_lingertime : 0);
	sock->sk = NULL;
	return 0;
}

static int sdp_bind(struct socket *sock, struct sockaddr *uaddr, int addr_len)
{
	struct sdp_sock *ssk = sdp_sk(sock->sk);
	struct sockaddr_storage addr;
	int len;

	if (sdp_fb(ssk)) {
		sdp_fb_ready(ssk);
		return ssk->tcp->ops->bind(ssk->tcp, uaddr, addr_len);
	}
	lock_sock(sock->sk);
	len = sdp_addr_from_user(ssk, uaddr, addr_len, &addr, false);
	if (len >= 0) {
		sdp_tcp_sync(ssk);
		len = kernel_bind(ssk->tcp, (struct sockaddr *)&addr, len);
	}
	release_sock(sock->sk);
	return len;
}

/* Does the policy keep a listener on its bound address to TCP? */
static bool sdp_policy_listen_tcp(struct sdp_sock *ssk)
{
	struct sockaddr_storage ss;

	if (!ssk->policy || kernel_getsockname(ssk->tcp, (struct sockaddr *)&ss) < 0)
		return false;
	return sdp_policy_tcp(ssk, &ss, SDP_ROLE_LISTEN);
}

/*
 * lock_sock(), once a listener's stop and a listen() of the closed socket
 * are over: TCP holds the lock throughout both, ours drops it meanwhile
 * (sdp_listen_stop(); sdp_rdma_reset() and rdma_listen()). A connect()
 * slipping into listen()'s gap would make one socket both.
 */
static void sdp_lock_settled(struct sdp_sock *ssk)
{
	struct sock *sk = &ssk->sk;
	int bit;

	for (lock_sock(sk);; lock_sock(sk)) {
		if (test_bit(SDP_F_STOPPING, &ssk->flags))
			bit = SDP_F_STOPPING;
		else if (sk->sk_state == TCP_CLOSE &&
			 test_bit(SDP_F_ARMING, &ssk->flags))
			bit = SDP_F_ARMING;
		else
			return;
		release_sock(sk);
		wait_on_bit(&ssk->flags, bit, TASK_UNINTERRUPTIBLE);
	}
}

static void sdp_rdma_reset(struct sdp_sock *ssk);

/* inet_listen(): the native socket listens too (it holds the port). */
static int sdp_listen(struct socket *sock, int backlog)
{
	struct sock *sk = sock->sk;
	struct sdp_sock *ssk = sdp_sk(sk);
	bool claimed = false, arm = false;
	int err = -EINVAL;

	if (sdp_fb(ssk)) {
		sdp_fb_sync(ssk);
		lock_sock(sk);
		err = sdp_fb_listen(ssk, backlog);
		release_sock(sk);
		return err;
	}
	sdp_lock_settled(ssk);
	if (sock->state != SS_UNCONNECTED ||
	    !((1 << sk->sk_state) & (TCPF_CLOSE | TCPF_LISTEN)))
		goto out;
	if (sk->sk_state == TCP_CLOSE) {
		/* ours to make a listener of; cleared by sdp_listen_arm() */
		set_bit(SDP_F_ARMING, &ssk->flags);
		claimed = true;
		sdp_rdma_reset(ssk);
	}
	sdp_tcp_sync(ssk);
	err = sdp_fb_listen(ssk, backlog);
	if (err)
		goto out;
	WRITE_ONCE(sk->sk_max_ack_backlog, backlog);
	if (sk->sk_state != TCP_LISTEN) {
		/* Without an RDMA device here the listener serves TCP only. */
		if (!READ_ONCE(sdp_net(sock_net(sk))->enabled) ||
		    sdp_policy_listen_tcp(ssk)) {
			sdp_fb_listener(ssk, SDP_FB_POLICY);
		} else {
			sdp_listener_add(ssk);
			arm = true;
		}
		sdp_set_state(sk, TCP_LISTEN);
	}
out:
	release_sock(sk);
	if (arm)
		sdp_listen_arm(ssk);
	else if (claimed)
		clear_and_wake_up_bit(SDP_F_ARMING, &ssk->flags);
	return err;
}

/*
 * A plain TCP client of the listener's native socket (@flags: O_NONBLOCK).
 * The SDP socket first: without memory for it, accept() fails and the
 * client stays queued for the next one, as TCP's would.
 */
static int sdp_accept_tcp(struct sdp_sock *lssk, struct socket *newsock, int flags,
			  bool kern)
{
	struct sdp_sock *child;
	int err;

	if ((flags & O_NONBLOCK) && !sdp_fb_pending(lssk))
		return -EAGAIN;
	child = sdp_sk_alloc(sock_net(&lssk->sk), newsock, kern);
	if (!child)
		return -ENOMEM;
	err = sdp_fb_accept(lssk, child, flags);
	if (err) {
		newsock->sk = NULL;
		child->sk.sk_socket = NULL;
		sock_put(&child->sk);
		return err;
	}
	newsock->ops = &sdp_proto_ops;
	sdp_sock_own_sockopts(newsock);
	newsock->state = SS_CONNECTED;
	sdp_fb_attach(child);
	return 0;
}

static int sdp_accept(struct socket *sock, struct socket *newsock,
		      struct proto_accept_arg *arg)
{
	struct sock *sk = sock->sk;
	struct sdp_sock *ssk = sdp_sk(sk);
	struct sdp_sock *child;
	struct sock *csk;
	long timeo;
	int err;

	if (sdp_fb(ssk)) {
		sdp_fb_sync(ssk);
		return sdp_accept_tcp(ssk, newsock, arg->flags, arg->kern);
	}
	lock_sock(sk);
	err = -EINVAL;
	if (sk->sk_state != TCP_LISTEN)
		goto out;
	timeo = sock_rcvtimeo(sk, arg->flags & O_NONBLOCK);
	/* RDMA clients and plain TCP clients of the native listener alike. */
	while (!(child = sdp_accept_dequeue(ssk))) {
		DEFINE_WAIT_FUNC(wait, woken_wake_function);

		err = sdp_accept_tcp(ssk, newsock, O_NONBLOCK, arg->kern);
		if (err != -EAGAIN)
			goto out;
		if (!timeo)
			goto out;
		err = sock_intr_errno(timeo);
		if (signal_pending(current))
			goto out;
		add_wait_queue(sk_sleep(sk), &wait);
		sk_wait_event(sk, &timeo, !list_empty(&ssk->lsn.accept_q) ||
			      sdp_fb_pending(ssk) ||
			      sk->sk_state != TCP_LISTEN, &wait);
		remove_wait_queue(sk_sleep(sk), &wait);
		err = -EINVAL;
		if (sk->sk_state != TCP_LISTEN)
			goto out;
	}
	release_sock(sk);

	csk = &child->sk;
	lock_sock(csk);
	sock_graft(csk, newsock);
	newsock->ops = &sdp_proto_ops;
	sdp_sock_own_sockopts(newsock);
	newsock->state = SS_CONNECTED;
	/* Now that it has a file: TCP would wake its waiters after a fallback. */
	sdp_fb_attach(child);
	release_sock(csk);
	return 0;
out:
	release_sock(sk);
	return err;
}

SDP_DEFINE_ACCEPT_OP(sdp_accept)

/* Wait while connecting, as inet_wait_for_connect(). */
static long sdp_wait_for_connect(struct sock *sk, long timeo)
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);

	add_wait_queue(sk_sleep(sk), &wait);
	while ((1 << sk->sk_state) & (TCPF_SYN_SENT | TCPF_SYN_RECV)) {
		if (!timeo || signal_pending(current))
			break;
		sk_wait_event(sk, &timeo, !((1 << READ_ONCE(sk->sk_state)) &
			      (TCPF_SYN_SENT | TCPF_SYN_RECV)), &wait);
	}
	remove_wait_queue(sk_sleep(sk), &wait);
	return timeo;
}

/*
 * Forget a previous connection's RDMA state before connecting or listening
 * again. Drops the lock meanwhile: callers claim the socket first.
 */
static void sdp_rdma_reset(struct sdp_sock *ssk)
{
	unsigned long keep = BIT(SDP_F_DEFERRED) | BIT(SDP_F_ARMING);
	struct sock *sk = &ssk->sk;
	unsigned long flags;

	sdp_conn_release(ssk->conn);
	release_sock(sk);
	flush_work(&ssk->teardown_work);
	sdp_fb_cancel(ssk);
	sdp_cm_destroy(ssk->conn);
	lock_sock(sk);
	/*
	 * listen() claimed the socket (SDP_F_ARMING) before calling us; the
	 * others are set with set_bit() from softirq and timers meanwhile.
	 */
	flags = READ_ONCE(ssk->flags);
	while (!try_cmpxchg(&ssk->flags, &flags, flags & keep))
		;
	sdp_fb_reset(ssk);
	sdp_conn_reset(ssk->conn);
	sock_reset_flag(sk, SOCK_DONE);
}

/*
 * The caller's wait goes on in TCP's connect(), which we already started,
 * for the @timeo left: when it ends unconnected, TCP says EALREADY where
 * this call says @err (EINPROGRESS to the caller that started the connect).
 */
static int sdp_fb_connect_on(struct socket *sock, int flags, int err, long timeo)
{
	struct sdp_sock *ssk = sdp_sk(sock->sk);
	int ret = sdp_fb_connect(sock, (struct sockaddr *)&ssk->fb.addr,
				 ssk->fb.addrlen, flags, timeo);

	return ret == -EALREADY ? err : ret;
}

/* __inet_stream_connect(): the same sock->state machine and errnos. */
static int sdp_connect(struct socket *sock, struct sockaddr *uaddr, int addr_len,
		       int flags)
{
	struct sock *sk = sock->sk;
	struct sdp_sock *ssk = sdp_sk(sk);
	struct sockaddr_storage dst;
	long timeo;
	int err, reason;

	if (sdp_fb(ssk))
		return sdp_fb_connect(sock, uaddr, addr_len, flags, MAX_SCHEDULE_TIMEOUT);
	sdp_lock_settled(ssk);
	if (addr_len >= (int)sizeof(uaddr->sa_family) &&
	    uaddr->sa_family == AF_UNSPEC) {
		sdp_disconnect(sk);
		sock->state = SS_UNCONNECTED;
		err = 0;
		goto out;
	}

	switch (sock->state) {
	default:
		err = -EINVAL;
		goto out;
	case SS_CONNECTED:
		err = -EISCONN;
		goto out;
	case SS_CONNECTING:
		err = -EALREADY;
		break;
	case SS_UNCONNECTED:
		err = -EISCONN;
		if (sk->sk_state != TCP_CLOSE)
			goto out;
		err = sdp_addr_from_user(ssk, uaddr, addr_len, &dst, true);
		if (err < 0)
			goto out;
		sdp_fb_target(ssk, &dst, err);
		/* Claimed: concurrent connect() calls now see EALREADY. */
		sock->state = SS_CONNECTING;
		sdp_set_state(sk, TCP_SYN_SENT);
		sdp_rdma_reset(ssk);
		if (sk->sk_state != TCP_SYN_SENT) {
			/* Disconnected meanwhile (shutdown, connect(AF_UNSPEC)). */
			sock->state = SS_UNCONNECTED;
			err = -ECONNABORTED;
			goto out;
		}
		WRITE_ONCE(sk->sk_shutdown, 0);
		sk->sk_err = 0;
		sdp_tcp_sync(ssk);
		reason = sdp_fb_reason_now(ssk, &dst);
		if (!reason) {
			reason = sdp_connect_rdma(ssk, &dst);
			if (!reason) {
				sdp_fb_arm(ssk);
				err = -EINPROGRESS;
				break;
			}
		}
		/* (the others are choices made before any attempt) */
		if ((reason == SDP_FB_NO_DEVICE || reason == SDP_FB_RESOURCES ||
		     reason == SDP_FB_PORT) &&
		    !sdp_fb_failed(ssk, reason)) {
			err = -sdp_fb_errno(reason);
			sdp_set_state(sk, TCP_CLOSE);
			sock->state = SS_UNCONNECTED;
			goto out;
		}
		/* TCP from the start; a blocking caller waits in its connect(). */
		err = sdp_fb_start(ssk, reason);
		sock->state = ssk->tcp->state;
		if (err != -EINPROGRESS || (flags & O_NONBLOCK))
			goto out;
		release_sock(sk);
		return sdp_fb_connect_on(sock, flags, err, MAX_SCHEDULE_TIMEOUT);
	}

	timeo = sock_sndtimeo(sk, flags & O_NONBLOCK);
	if ((1 << sk->sk_state) & (TCPF_SYN_SENT | TCPF_SYN_RECV)) {
		if (!timeo)
			goto out;
		timeo = sdp_wait_for_connect(sk, timeo);
		if ((1 << sk->sk_state) & (TCPF_SYN_SENT | TCPF_SYN_RECV)) {
			err = timeo ? sock_intr_errno(timeo) : -EINPROGRESS;
			if (!timeo || signal_pending(current))
				goto out;
		}
	}
	if (sdp_fb(ssk)) {
		/* Fell back while we waited: TCP's connect() finishes it. */
		release_sock(sk);
		return sdp_fb_connect_on(sock, flags, err, timeo);
	}
	if (sk->sk_state == TCP_CLOSE)
		goto sock_error;
	sock->state = SS_CONNECTED;
	err = 0;
out:
	release_sock(sk);
	return err;
sock_error:
	err = sock_error(sk) ? : -ECONNABORTED;
	sock->state = SS_UNCONNECTED;
	goto out;
}

/* inet_getname(): addresses in the socket's own family. */
static int sdp_getname(struct socket *sock, struct sockaddr *uaddr, int peer)
{
	struct sock *sk = sock->sk;
	struct sdp_sock *ssk = sdp_sk(sk);
	const struct sockaddr_storage *addr;
	int len;

	if (sdp_fb(ssk)) {
		sdp_fb_ready(ssk);
		return ssk->tcp->ops->getname(ssk->tcp, uaddr, peer);
	}
	lock_sock(sk);
	addr = sdp_conn_addr(ssk->conn, peer);
	if (peer) {
		len = -ENOTCONN;
		if (((1 << sk->sk_state) & (TCPF_CLOSE | TCPF_SYN_SENT | TCPF_LISTEN)) &&
		    (peer == 1 || !addr->ss_family))
			goto out;
		len = sdp_addr_to_user(ssk, addr, uaddr);
	} else if (addr->ss_family) {
		len = sdp_addr_to_user(ssk, addr, uaddr);
	} else {
		len = kernel_getsockname(ssk->tcp, uaddr);
	}
out:
	release_sock(sk);
	return len;
}

/* tcp_poll(), bit for bit. */
static __poll_t sdp_poll(struct file *file, struct socket *sock, poll_table *wait)
{
	struct sock *sk = sock->sk;
	struct sdp_sock *ssk = sdp_sk(sk);
	__poll_t mask = 0;
	u8 shutdown;
	int state;

	sock_poll_wait(file, sock, wait);
	/* The native socket wakes our queue; ask it for its bits only. */
	if (sdp_fb(ssk)) {
		if (test_bit(SDP_F_SWITCHING, &ssk->flags))
			return 0;
		/* What TCP's poll reads of the options set on us since the last call */
		if (sock_flag(sk, SOCK_URGINLINE) != sock_flag(ssk->tcp->sk, SOCK_URGINLINE) ||
		    READ_ONCE(sk->sk_rcvlowat) != READ_ONCE(ssk->tcp->sk->sk_rcvlowat))
			sdp_tcp_sync(ssk);
		mask = ssk->tcp->ops->poll(file, ssk->tcp, NULL);
		if (mask & EPOLLERR)
			sdp_fb_mirror_err(ssk, ssk->tcp->sk);
		return mask;
	}
	state = inet_sk_state_load(sk);
	if (state == TCP_LISTEN) {
		mask = ssk->tcp->ops->poll(file, ssk->tcp, NULL) & (EPOLLIN | EPOLLRDNORM);
		if (!list_empty_careful(&ssk->lsn.accept_q))
			mask |= EPOLLIN | EPOLLRDNORM;
		return mask;
	}

	shutdown = READ_ONCE(sk->sk_shutdown);
	if (shutdown == SHUTDOWN_MASK || state == TCP_CLOSE)
		mask |= EPOLLHUP;
	if (shutdown & RCV_SHUTDOWN)
		mask |= EPOLLIN | EPOLLRDNORM | EPOLLRDHUP;

	if (state != TCP_SYN_SENT && state != TCP_SYN_RECV) {
		if (sdp_readable(sk, sock_rcvlowat(sk, 0, INT_MAX)))
			mask |= EPOLLIN | EPOLLRDNORM;
		if (!(shutdown & SEND_SHUTDOWN)) {
			if (sdp_writeable(sk)) {
				mask |= EPOLLOUT | EPOLLWRNORM;
			} else {
				sk_set_bit(SOCKWQ_ASYNC_NOSPACE, sk);
				set_bit(SOCK_NOSPACE, &sk->sk_socket->flags);
				/* Pairs with the barrier in the completion path. */
				smp_mb__after_atomic();
				if (sdp_writeable(sk))
					mask |= EPOLLOUT | EPOLLWRNORM;
			}
		} else {
			mask |= EPOLLOUT | EPOLLWRNORM;
		}
		if (READ_ONCE(sdp_view(ssk)->urg_data) & SDP_URG_VALID)
			mask |= EPOLLPRI;
	}
	smp_rmb();
	if (READ_ONCE(sk->sk_err) || !skb_queue_empty_lockless(&sk->sk_error_queue))
		mask |= EPOLLERR;
	return mask;
}

/* tcp_ioctl() for the queue sizes; the rest is the native socket's. */
static int sdp_ioctl(struct socket *sock, unsigned int cmd, unsigned long arg)
{
	struct sock *sk = sock->sk;
	struct sdp_sock *ssk = sdp_sk(sk);
	int answ;

	if (sdp_fb(ssk)) {
		sdp_fb_ready(ssk);
		return ssk->tcp->ops->ioctl(ssk->tcp, cmd, arg);
	}
	switch (cmd) {
	case SIOCINQ:
	case SIOCOUTQ:
	case SIOCOUTQNSD:
		if (sk->sk_state == TCP_LISTEN)
			return -EINVAL;
		lock_sock(sk);
		sdp_conn_flush(ssk->conn);
		if (cmd == SIOCINQ)
			answ = sdp_conn_inq(ssk->conn);
		else if (cmd == SIOCOUTQ)
			answ = READ_ONCE(sdp_view(ssk)->tx_unacked);
		else
			answ = READ_ONCE(sdp_view(ssk)->tx_unsent);
		release_sock(sk);
		break;
	case SIOCATMARK:
		lock_sock(sk);
		sdp_conn_flush(ssk->conn);
		answ = sdp_conn_at_mark(ssk->conn);
		release_sock(sk);
		break;
	default:
		/* Under our lock: the native socket may be replaced meanwhile. */
		lock_sock(sk);
		answ = ssk->tcp->ops->ioctl(ssk->tcp, cmd, arg);
		release_sock(sk);
		return answ;
	}
	return put_user(answ, (int __user *)arg);
}

/* inet_shutdown(). */
static int sdp_shutdown(struct socket *sock, int how)
{
	struct sock *sk = sock->sk;
	struct sdp_sock *ssk = sdp_sk(sk);
	int err = 0;

	if (sdp_fb(ssk)) {
		sdp_fb_ready(ssk);
		return ssk->tcp->ops->shutdown(ssk->tcp, how);
	}
	how++;
	if ((how & ~SHUTDOWN_MASK) || !how)
		return -EINVAL;

	sdp_lock_settled(ssk);
	if (sock->state == SS_CONNECTING) {
		if ((1 << sk->sk_state) & (TCPF_SYN_SENT | TCPF_SYN_RECV | TCPF_CLOSE))
			sock->state = SS_DISCONNECTING;
		else
			sock->state = SS_CONNECTED;
	}
	switch (sk->sk_state) {
	case TCP_CLOSE:
		err = -ENOTCONN;
		fallthrough;
	default:
		WRITE_ONCE(sk->sk_shutdown, sk->sk_shutdown | how);
		if (how & SEND_SHUTDOWN)
			sdp_shutdown_send(sk);
		break;
	case TCP_LISTEN:
		if (!(how & RCV_SHUTDOWN))
			break;
		fallthrough;
	case TCP_SYN_SENT:
		sdp_disconnect(sk);
		sock->state = SS_UNCONNECTED;
		break;
	}
	sk->sk_state_change(sk);
	release_sock(sk);
	return err;
}

static int sdp_mmap(struct file *file, struct socket *sock,
		    struct vm_area_struct *vma)
{
	struct sdp_sock *ssk = sdp_sk(sock->sk);

	if (sdp_fb(ssk)) {
		sdp_fb_ready(ssk);
		return ssk->tcp->ops->mmap(file, ssk->tcp, vma);
	}
	return -ENODEV;
}

static struct proto_ops sdp_proto_ops = {
	.owner		= THIS_MODULE,
	.release	= sdp_release,
	.bind		= sdp_bind,
	.connect	= sdp_connect,
	.socketpair	= sock_no_socketpair,
	.accept		= SDP_ACCEPT_OP(sdp_accept),
	.getname	= sdp_getname,
	.poll		= sdp_poll,
	.ioctl		= sdp_ioctl,
	.gettstamp	= sock_gettstamp,
	.listen		= sdp_listen,
	.shutdown	= sdp_shutdown,
	.setsockopt	= sdp_setsockopt,
	.getsockopt	= sdp_getsockopt,
	.sendmsg	= sdp_sendmsg,
	.recvmsg	= sdp_recvmsg,
	.mmap		= sdp_mmap,
	.splice_eof	= sdp_splice_eof,
	SDP_SENDPAGE_OP
};

/* Stream sockets only, with the protocol TCP would take for them. */
static int sdp_create(struct net *net, struct socket *sock, int protocol, int kern)
{
	struct sdp_sock *ssk;
	int err;

	if (sock->type != SOCK_STREAM)
		return -ESOCKTNOSUPPORT;
	if (protocol < 0 || protocol >= IPPROTO_MAX)
		return -EINVAL;
	if (protocol != IPPROTO_IP && protocol != IPPROTO_TCP)
		return -EPROTONOSUPPORT;

	ssk = sdp_sk_alloc(net, sock, kern);
	if (!ssk)
		return -ENOBUFS;	/* as inet_create() */
	sock->state = SS_UNCONNECTED;
	sock->ops = &sdp_proto_ops;
	sdp_sock_own_sockopts(sock);
	err = sdp_tcp_create(ssk, AF_INET, NULL);
	if (err) {
		sock->sk = NULL;
		ssk->sk.sk_socket = NULL;
		sock_put(&ssk->sk);
		return err;
	}
	return 0;
}

static struct net_proto_family sdp_family_ops = {
	.create	= sdp_create,
	.owner	= THIS_MODULE,
};

static const struct sdp_upcalls sdp_upcalls = {
	.established	= sdp_fb_established,
	.done		= sdp_done,
	.error		= sdp_conn_error,
	.lost		= sdp_lost,
	.peer_disconn	= sdp_peer_disconn,
	.disconn_sent	= sdp_disconn_sent,
	.data_ready	= sdp_data_ready,
	.fallback	= sdp_fb_or_fail,
	.busy		= sdp_fb_busy,
	.listening	= sdp_listening_up,
	.request	= sdp_request,
	.child_established = sdp_child_established,
	.child_failed	= sdp_child_failed,
	.user_timeout	= sdp_user_timeout,
	.rearm		= sdp_listeners_rearm,
};

static int __init sdp_init(void)
{
	int err;

	if (sdp_family <= 0 || sdp_family >= NPROTO) {
		pr_err("family=%d is out of range (1..%d)\n", sdp_family, NPROTO - 1);
		return -EINVAL;
	}
	sdp_proto_ops.family = sdp_family;
	sdp_family_ops.family = sdp_family;

	err = sdp_mem_init();
	if (err)
		goto out;
	err = sdp_netns_init();
	if (err)
		goto out_mem;
	err = proto_register(&sdp_proto, 1);
	if (err)
		goto out_netns;
	err = sdp_transport_init(&sdp_upcalls);
	if (err)
		goto out_proto;
	/* sock_diag's before the family: no socket exists until the module is up */
	err = sdp_diag_init();
	if (!err) {
		err = sock_register(&sdp_family_ops);
		if (err)
			sdp_diag_exit();
	}
	if (err) {
		pr_err("cannot register address family %d (%d): %s\n", sdp_family, err,
		       err == -EEXIST || err == -EBUSY ?
		       "another module holds it, load with family=N" : "error");
		goto out_dev;
	}
	sdp_debug_init();
	pr_info("registered address family %d\n", sdp_family);
	return 0;

out_dev:
	sdp_transport_exit();
out_proto:
	proto_unregister(&sdp_proto);
out_netns:
	sdp_netns_exit();
out_mem:
	sdp_mem_exit();
out:
	return err;
}

static void __exit sdp_exit(void)
{
	sock_unregister(sdp_family);
	sdp_diag_exit();
	sdp_debug_exit();
	sdp_listen_exit();
	/* Sockets pin the module: none exist, so no connection does. */
	sdp_transport_exit();
	proto_unregister(&sdp_proto);
	sdp_netns_exit();
	sdp_mem_exit();
}

module_init(sdp_init);
module_exit(sdp_exit);

MODULE_DESCRIPTION("Sockets Direct Protocol: TCP stream sockets over RDMA");
MODULE_LICENSE("GPL");
MODULE_ALIAS_NETPROTO(AF_INET_SDP);
