// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol: the socket's byte stream. recvmsg() and
 * sendmsg() with TCP's rules for waiting, errors, urgent data and partial
 * counts, and the readiness poll() reports; the connection (sdp_conn.h)
 * moves the bytes, and after a fallback the native socket does.
 */
#include <linux/sched/clock.h>
#include <linux/sched/stat.h>
#include <linux/uio.h>
#include <net/busy_poll.h>
#include <net/tcp.h>

#include "sdp_sock.h"
#include "sdp_fallback.h"

/* recv(MSG_OOB), tcp_recv_urg(): never waits. */
static int sdp_recv_urg(struct sdp_sock *ssk, struct msghdr *msg, size_t len,
			int flags)
{
	struct sock *sk = &ssk->sk;
	u16 urg = sdp_view(ssk)->urg_data;
	char byte = urg;

	if (sock_flag(sk, SOCK_URGINLINE) || !urg || urg == SDP_URG_READ)
		return -EINVAL;
	if (sk->sk_state == TCP_CLOSE && !sock_flag(sk, SOCK_DONE))
		return -ENOTCONN;
	if (urg & SDP_URG_VALID) {
		if (!(flags & MSG_PEEK))
			sdp_conn_urg_read(ssk->conn);
		msg->msg_flags |= MSG_OOB;
		if (!len) {
			msg->msg_flags |= MSG_TRUNC;
			return 0;
		}
		if (!(flags & MSG_TRUNC) && memcpy_to_msg(msg, &byte, 1))
			return -EFAULT;
		return 1;
	}
	if (sk->sk_state == TCP_CLOSE || (sk->sk_shutdown & RCV_SHUTDOWN))
		return 0;
	return -EAGAIN;
}

/* Would the waiting reader have something to do (@seen: bytes it peeked)? */
static bool sdp_recv_wake(struct sdp_sock *ssk, size_t seen)
{
	struct sock *sk = &ssk->sk;

	return READ_ONCE(sdp_view(ssk)->rx_avail) > seen ||
	       sdp_conn_deferred(ssk->conn) || test_bit(SDP_F_DEFERRED, &ssk->flags) ||
	       READ_ONCE(sk->sk_err) ||
	       (READ_ONCE(sk->sk_shutdown) & RCV_SHUTDOWN) ||
	       READ_ONCE(sk->sk_state) == TCP_CLOSE || sdp_fb(ssk);
}

static u32 sdp_recv_poll_us(const struct sock *sk)
{
#ifdef CONFIG_NET_RX_BUSY_POLL
	if (READ_ONCE(sk->sk_ll_usec))
		return READ_ONCE(sk->sk_ll_usec);
#endif
	return READ_ONCE(sdp_net(sock_net(sk))->recv_poll_us);
}

struct sdp_recv_spin {
	struct sdp_sock	*ssk;
	size_t		seen;
	u64		end;
	bool		cut;	/* another task wanted the CPU */
};

/*
 * Till the reader has something to do, a signal, its poll time is up, or
 * another task is runnable on this CPU (as vhost's busy polling stops).
 * Over a software device that task may be what moves our packets (rxe's
 * kworker on 6.12 sends the request we just posted): spinning on would
 * hold them back. On two one-vCPU hosts a spinning 64 B round trip took
 * 2.5 x one that slept at once.
 */
static bool sdp_recv_spin_end(void *arg, unsigned long start)
{
	struct sdp_recv_spin *x = arg;

	if (sdp_recv_wake(x->ssk, x->seen) || signal_pending(current) ||
	    local_clock() >= x->end)
		return true;
	x->cut = !single_task_running();
	return x->cut;
}

/*
 * Poll, then sleep: over RDMA an answer often comes back sooner than a
 * sleep and a wakeup take. Spin without the socket lock, until the reader
 * has something to do, for at most the socket's poll time, and only while
 * no other task wants the CPU. The spinner reaps its connection's CQ
 * itself (busy polling its NAPI context): completions need no softirq,
 * and no wake-up of ksoftirqd where the device completes in process
 * context. Without one, it waits for softirq's reaping.
 */
static bool sdp_recv_poll(struct sdp_sock *ssk, size_t seen)
{
	struct sock *sk = &ssk->sk;
	struct sdp_recv_spin x = { .ssk = ssk, .seen = seen };
	u32 us = sdp_recv_poll_us(sk);
	unsigned int __maybe_unused napi_id;
	bool hit;

	if (!us)
		return false;
	release_sock(sk);
	x.end = local_clock() + (u64)us * NSEC_PER_USEC;
#ifdef CONFIG_NET_RX_BUSY_POLL
	napi_id = READ_ONCE(sk->sk_napi_id);
	if (napi_id >= MIN_NAPI_ID)
		napi_busy_loop(napi_id, sdp_recv_spin_end, &x, false, BUSY_POLL_BUDGET);
#endif
	while (!sdp_recv_spin_end(&x, 0) && !need_resched())
		cpu_relax();
	hit = sdp_recv_wake(ssk, seen);
	lock_sock(sk);
	SDP_INC_STATS(sock_net(sk), hit ? SDP_MIB_RECV_POLL_HIT :
				    x.cut ? SDP_MIB_RECV_POLL_CUT :
					    SDP_MIB_RECV_POLL_MISS);
	return hit;
}

/* A send's SrcAvail, or (@recv) a read's SinkAvail, is out. */
static bool sdp_zc_out(struct sdp_conn *c, bool recv)
{
	return recv ? sdp_conn_zr_busy(c) : sdp_conn_zc_busy(c);
}

/*
 * A read's SinkAvail is not wanted: bytes were queued meanwhile (they came
 * first), or none came by @expire.
 */
static bool sdp_zr_overtaken(struct sdp_sock *ssk, bool recv, unsigned long expire)
{
	return recv && (READ_ONCE(sdp_view(ssk)->rx_avail) || time_after_eq(jiffies, expire));
}

/*
 * Our SrcAvail (or, @recv, SinkAvail) is out: wait till no one can read
 * (or write) the pages any more. A SinkAvail is asked back once bytes are
 * queued instead, or none came within SDP_ZR_WAIT_MS. A signal or SO_SNDTIMEO (SO_RCVTIMEO)
 * asks the peer to stop (SrcAvailCancel, SinkAvailCancel), and the wait
 * goes on for its answer, killable, uninterruptible once killed (the
 * process's exit must not leave the pages to the peer); one not given
 * within SDP_ZC_CANCEL_MS resets the connection. Whenever the connection
 * has ended, the registration is revoked at once. Either way the wait ends
 * with the pages the caller's: 0, or the errno that cut it short.
 */
static int sdp_wait_zc(struct sdp_sock *ssk, long *timeo, bool recv)
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	struct sock *sk = &ssk->sk;
	struct sdp_conn *c = ssk->conn;
	unsigned long deadline = 0, expire = jiffies + msecs_to_jiffies(SDP_ZR_WAIT_MS);
	bool asked = false;
	long left, slice;
	int err = 0;

	while (sdp_zc_out(c, recv)) {
		if (sk->sk_state == TCP_CLOSE || sk->sk_err) {
			/* the drain comes after an Abort just posted */
			release_sock(sk);
			sdp_ctrl_wait(ssk);
			lock_sock(sk);
			sdp_conn_zc_revoke(c);
			break;
		}
		if (!err && (!*timeo || signal_pending(current))) {
			err = *timeo ? sock_intr_errno(*timeo) : -EAGAIN;
			if (recv)
				sdp_conn_zr_cancel(c);
			else
				sdp_conn_zc_cancel(c);
			deadline = jiffies + msecs_to_jiffies(SDP_ZC_CANCEL_MS);
		} else if (!err && !asked && sdp_zr_overtaken(ssk, recv, expire)) {
			/* (withdrawn if not sent yet; else the answer, of none, is on its way) */
			sdp_conn_zr_cancel(c);
			asked = true;
		}
		if (err && time_after_eq(jiffies, deadline)) {
			sdp_conn_error(sk, ETIMEDOUT, SDP_MIB_ZC_CANCEL_TIMEOUT);
			err = -ETIMEDOUT;
			continue;	/* (it is over now: revoked above) */
		}
		add_wait_queue(sk_sleep(sk), &wait);
		if (err) {
			/* a signal is pending: short sleeps, till the answer */
			release_sock(sk);
			wait_woken(&wait, fatal_signal_pending(current) ?
				   TASK_UNINTERRUPTIBLE : TASK_KILLABLE, HZ / 10);
			lock_sock(sk);
		} else {
			/* (a read's SinkAvail wakes to be asked back at @expire) */
			slice = left = recv && !asked ?
				min_t(long, *timeo, max_t(long, expire - jiffies, 1)) : *timeo;
			sk_wait_event(sk, &left, !sdp_zc_out(c, recv) || sdp_conn_deferred(c) ||
				      (!asked && sdp_zr_overtaken(ssk, recv, expire)) ||
				      READ_ONCE(sk->sk_state) == TCP_CLOSE ||
				      READ_ONCE(sk->sk_err), &wait);
			if (*timeo != MAX_SCHEDULE_TIMEOUT)
				*timeo -= slice - left;
		}
		remove_wait_queue(sk_sleep(sk), &wait);
		sdp_conn_flush(c);
	}
	return err;
}

/*
 * Nothing to read, a blocking read: offer its buffer by SinkAvail if it is
 * worth it (*@zr: this call may still try; after one the peer declined, it
 * waits for data as usual). 1 and *copied grown by what the peer wrote, 0
 * to wait for data, or the errno that ended the wait (with what was
 * written counted).
 */
static int sdp_recv_zr(struct sdp_sock *ssk, struct msghdr *msg, long *timeo,
		       size_t *copied, bool *zr)
{
	size_t got;
	int err;

	if (!*zr || !sdp_conn_zr_recv(ssk->conn, msg, sdp_zcopy_thresh(ssk)))
		return 0;
	err = sdp_wait_zc(ssk, timeo, true);
	got = sdp_conn_zr_end(ssk->conn, msg);
	*copied += got;
	*zr = got > 0;
	return err ?: 1;
}

/* Mirrors tcp_recvmsg_locked(): same wait, error and EOF rules. */
int sdp_recvmsg(struct socket *sock, struct msghdr *msg, size_t len, int flags)
{
	struct sock *sk = sock->sk;
	struct sdp_sock *ssk = sdp_sk(sk);
	size_t copied = 0;
	u32 peeked = 0, peek_base;
	long timeo;
	int target, n, err = 0;
	bool zr = true;

	if (sdp_fb(ssk))
		return sdp_fb_recvmsg(ssk, msg, len, flags);
	/* as TCP's: IPV6_RECVERR on an IPv6 socket */
	if (flags & MSG_ERRQUEUE) {
		lock_sock(sk);
		n = ssk->tcp->sk->sk_family;
		release_sock(sk);
		return n == AF_INET6 ?
		       sock_recv_errqueue(sk, msg, len, SOL_IPV6, IPV6_RECVERR) :
		       sock_recv_errqueue(sk, msg, len, SOL_IP, IP_RECVERR);
	}

	lock_sock(sk);
	if (flags & MSG_OOB) {
		err = sk->sk_state == TCP_LISTEN ? -ENOTCONN : 0;
		if (!err) {
			sdp_conn_flush(ssk->conn);
			err = sdp_recv_urg(ssk, msg, len, flags);
		}
		release_sock(sk);
		return err;
	}
	WARN(READ_ONCE(sdp_inject_warn) && xchg(&sdp_inject_warn, 0),
	     "sdp: warning injected through debugfs\n");
	if (sk->sk_state == TCP_LISTEN) {
		err = -ENOTCONN;
		goto out;
	}
	timeo = sock_rcvtimeo(sk, flags & MSG_DONTWAIT);
	target = sock_rcvlowat(sk, flags & MSG_WAITALL, len);
	peek_base = sdp_conn_read_seq(ssk->conn);

	do {
		DEFINE_WAIT_FUNC(wait, woken_wake_function);
		size_t seen = flags & MSG_PEEK ? peeked : 0;

		if (!copied && sdp_fb(ssk)) {
			/* Fell back while we waited for the connection. */
			release_sock(sk);
			return sdp_fb_recvmsg(ssk, msg, len, flags);
		}
		sdp_conn_flush(ssk->conn);
		if (sdp_view(ssk)->live && (flags & MSG_PEEK) &&
		    sdp_conn_read_seq(ssk->conn) != peek_base) {
			/* Read from under the peek (tcp_recvmsg()'s race): start over there. */
			peek_base = sdp_conn_read_seq(ssk->conn);
			peeked = 0;
		}
		/* At the urgent mark a read ends, or gives way to a signal. */
		if (sdp_conn_urg_at(ssk->conn, sdp_conn_read_seq(ssk->conn) + peeked)) {
			if (copied)
				break;
			if (signal_pending(current)) {
				err = timeo ? sock_intr_errno(timeo) : -EAGAIN;
				break;
			}
		}
		n = sdp_conn_read(ssk->conn, msg, len - copied, flags, &peeked);
		if (n < 0) {
			if (!copied)
				err = n;
			break;
		}
		copied += n;
		if (copied >= target)
			break;

		if (copied) {
			if (!timeo || sk->sk_err || sk->sk_state == TCP_CLOSE ||
			    (sk->sk_shutdown & RCV_SHUTDOWN) ||
			    signal_pending(current))
				break;
		} else {
			if (sk->sk_err) {
				err = sock_error(sk);
				break;
			}
			if (sk->sk_shutdown & RCV_SHUTDOWN)
				break;
			if (sk->sk_state == TCP_CLOSE) {
				/* Never connected. */
				if (!sock_flag(sk, SOCK_DONE))
					err = -ENOTCONN;
				break;
			}
			if (!timeo) {
				err = -EAGAIN;
				break;
			}
			if (signal_pending(current)) {
				err = sock_intr_errno(timeo);
				break;
			}
		}

		if (sdp_recv_poll(ssk, seen))
			continue;
		/* (a peek leaves the bytes queued; MSG_TRUNC takes none) */
		if (!(flags & (MSG_PEEK | MSG_TRUNC))) {
			n = sdp_recv_zr(ssk, msg, &timeo, &copied, &zr);
			if (n < 0) {
				if (!copied)
					err = n;
				break;
			}
			if (n)
				continue;
		}
		add_wait_queue(sk_sleep(sk), &wait);
		sk_wait_event(sk, &timeo, sdp_recv_wake(ssk, seen), &wait);
		remove_wait_queue(sk_sleep(sk), &wait);
	} while (copied < len);
out:
	release_sock(sk);
	return copied ? copied : err;
}

/*
 * Till a send buffer is free or, for a MSG_ZEROCOPY send with no room
 * behind those queued (@zc), room there: read from the queue itself, so
 * that a return always lets the send go on.
 */
static int sdp_wait_space(struct sdp_sock *ssk, long *timeo, bool zc)
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	const struct sdp_conn_view *v = sdp_view(ssk);
	struct sock *sk = &ssk->sk;

	for (;;) {
		if (sk->sk_err || (sk->sk_shutdown & SEND_SHUTDOWN) ||
		    !sdp_can_send_state(sk) || !READ_ONCE(v->live))
			return -EPIPE;
		if (zc ? sdp_conn_zc_room(ssk->conn) : READ_ONCE(v->tx_free_slots)) {
			if (!zc)
				clear_bit(SDP_F_COPY_WAITS, &ssk->flags);
			return 0;
		}
		if (!zc)
			set_bit(SDP_F_COPY_WAITS, &ssk->flags);
		/*
		 * Before -EAGAIN too, as sk_stream_wait_memory(): completions
		 * wake writers only when this is set, and an edge-triggered
		 * epoll sender that got -EAGAIN waits for that EPOLLOUT.
		 */
		sk_set_bit(SOCKWQ_ASYNC_NOSPACE, sk);
		set_bit(SOCK_NOSPACE, &sk->sk_socket->flags);
		if (!*timeo)
			return -EAGAIN;
		if (signal_pending(current))
			return sock_intr_errno(*timeo);
		add_wait_queue(sk_sleep(sk), &wait);
		/* (the queue read unlocked: a hint, checked again above) */
		sk_wait_event(sk, timeo, (zc ? sdp_conn_zc_room(ssk->conn) :
					  READ_ONCE(v->tx_free_slots)) ||
			      sdp_conn_deferred(ssk->conn) ||
			      test_bit(SDP_F_DEFERRED, &ssk->flags) ||
			      READ_ONCE(sk->sk_err) ||
			      (READ_ONCE(sk->sk_shutdown) & SEND_SHUTDOWN), &wait);
		remove_wait_queue(sk_sleep(sk), &wait);
		sdp_conn_flush(ssk->conn);
	}
}

/*
 * No memory for a send buffer, and none in flight to give some back: look
 * again soon, as sk_stream_wait_memory() does for a socket within its
 * SO_SNDBUF (only the limits on all sockets are in the way).
 */
static int sdp_wait_memory(struct sdp_sock *ssk, long *timeo)
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	struct sock *sk = &ssk->sk;
	long slice = min_t(long, *timeo, HZ / 10), left = slice;

	if (!*timeo)
		return -EAGAIN;
	if (signal_pending(current))
		return sock_intr_errno(*timeo);
	add_wait_queue(sk_sleep(sk), &wait);
	sk_wait_event(sk, &left, READ_ONCE(sk->sk_err) ||
		      (READ_ONCE(sk->sk_shutdown) & SEND_SHUTDOWN), &wait);
	remove_wait_queue(sk_sleep(sk), &wait);
	if (*timeo != MAX_SCHEDULE_TIMEOUT)
		*timeo -= slice - left;
	return 0;
}

/*
 * The next bytes of @msg by SrcAvail, if they are to go so (*@zc: this
 * call may still try): 1 and *copied grown by what the peer read, 0 to
 * copy them, or the errno that ended the wait (with what was read
 * counted). A peer that declined (SendSM unasked) gets the rest copied; a
 * connection that ended meanwhile, or can send no more, gets none (EPIPE,
 * as sdp_wait_space()). MSG_ZEROCOPY's (@uarg) does not wait: its bytes
 * count as sent once offered.
 */
static int sdp_send_zc(struct sdp_sock *ssk, struct msghdr *msg, int flags,
		       long *timeo, size_t *copied, bool *zc, struct ubuf_info *uarg)
{
	struct sock *sk = &ssk->sk;
	int err, how, n;

	/* a non-blocking send cannot wait for the peer's read */
	if (!*zc || (!uarg && ((flags & MSG_DONTWAIT) || !*timeo)))
		return 0;
	n = sdp_conn_zc_send(ssk->conn, msg, flags, sdp_zcopy_thresh(ssk), uarg);
	if (n == -EAGAIN) {
		err = sdp_wait_space(ssk, timeo, true);
		return err ?: 1;
	}
	if (!n)
		return 0;
	if (uarg) {
		*copied += n;
		return 1;
	}
	err = sdp_wait_zc(ssk, timeo, false);
	*copied += sdp_conn_zc_end(ssk->conn, msg, &how);
	*zc = how == SDP_ZC_READ;
	if (!err && (how == SDP_ZC_ENDED || sk->sk_err ||
		     (sk->sk_shutdown & SEND_SHUTDOWN) || !sdp_can_send_state(sk)))
		err = -(READ_ONCE(sk->sk_err) ?: EPIPE);
	return err ?: 1;
}

/*
 * sendto(MSG_FASTOPEN): connect to msg_name, then send, as TCP does without
 * a cookie (SDP has no data in its Hello): blocking, the bytes are sent once
 * connected; non-blocking, EINPROGRESS with none taken. A connected socket
 * gets EISCONN; client TFO off (net.ipv4.tcp_fastopen) gets EOPNOTSUPP.
 */
static int sdp_sendmsg_fastopen(struct socket *sock, struct msghdr *msg,
				size_t size)
{
	struct sock *sk = sock->sk;
	struct sockaddr *addr = msg->msg_name;
	int err;

	if (!(READ_ONCE(sock_net(sk)->ipv4.sysctl_tcp_fastopen) & TFO_CLIENT_ENABLE) ||
	    (addr && msg->msg_namelen >= sizeof(addr->sa_family) &&
	     addr->sa_family == AF_UNSPEC))
		return -EOPNOTSUPP;
	if (!addr)
		return sock->state == SS_UNCONNECTED ? -EINVAL : -EISCONN;
	err = sock->ops->connect(sock, addr, msg->msg_namelen,
				 msg->msg_flags & MSG_DONTWAIT ? O_NONBLOCK : 0);
	if (err)
		return err;
	msg->msg_flags &= ~MSG_FASTOPEN;
	msg->msg_name = NULL;
	msg->msg_namelen = 0;
	return sdp_sendmsg(sock, msg, size);
}

/*
 * Mirrors tcp_sendmsg_locked(): same waits, errors, SIGPIPE and partial counts.
 * splice() and sendfile() come here too, with MSG_SPLICE_PAGES and the pages
 * in an ITER_BVEC (sdp_compat.h): we copy them like any other data, so they
 * are the caller's again when we return.
 * MSG_ZEROCOPY on a socket with SO_ZEROCOPY: as TCP's, each call that takes
 * bytes gets a notification on the error queue, once no one reads its
 * pages any more; SO_EE_CODE_ZEROCOPY_COPIED when any of them was copied.
 */
int sdp_sendmsg(struct socket *sock, struct msghdr *msg, size_t size)
{
	struct sock *sk = sock->sk;
	struct sdp_sock *ssk = sdp_sk(sk);
	int flags = msg->msg_flags;
	struct ubuf_info *uarg = NULL;
	size_t copied = 0, async = 0;
	bool zc = true;
	long timeo;
	int err;

	if (flags & MSG_FASTOPEN)
		return sdp_sendmsg_fastopen(sock, msg, size);
	if (sdp_fb(ssk))
		return sdp_fb_sendmsg(ssk, msg, size);

	lock_sock(sk);
	if ((flags & MSG_ZEROCOPY) && size && sock_flag(sk, SOCK_ZEROCOPY)) {
		uarg = msg_zerocopy_realloc(sk, size, NULL);
		if (!uarg) {
			release_sock(sk);
			return -ENOBUFS;
		}
	}
	timeo = sock_sndtimeo(sk, flags & MSG_DONTWAIT);
	if (!sdp_can_send_state(sk)) {
		err = sk_stream_wait_connect(sk, &timeo);
		if (err)
			goto do_error;
	}
	sk_clear_bit(SOCKWQ_ASYNC_NOSPACE, sk);
	err = -EPIPE;
	if (sk->sk_err || (sk->sk_shutdown & SEND_SHUTDOWN))
		goto do_error;

	sdp_conn_flush(ssk->conn);
	for (;;) {
		size_t before = copied;

		err = sdp_send_zc(ssk, msg, flags, &timeo, &copied, &zc, uarg);
		if (err > 0) {
			if (uarg)
				async += copied - before;
			continue;
		}
		if (err)
			goto do_error;
		err = sdp_conn_write(ssk->conn, msg, flags, &copied);
		if (err == -EAGAIN)
			err = sdp_wait_space(ssk, &timeo, false);
		else if (err == -ENOBUFS)
			err = sdp_wait_memory(ssk, &timeo);
		else
			break;
		if (err)
			goto do_error;
	}
	if (err)
		goto do_error;
out:
	sdp_conn_sent(ssk->conn, flags);
	/* (while we own the socket the engine, which completes it too, waits) */
	if (uarg)
		sdp_zcopy_complete(uarg, copied == async);
	release_sock(sk);
	return copied;

do_error:
	if (copied)
		goto out;
	/* nothing taken: no notification, its id is the next call's */
	net_zcopy_put_abort(uarg, true);
	if (sdp_fb(ssk)) {
		/* Fell back while we waited for the connection. */
		release_sock(sk);
		return sdp_fb_sendmsg(ssk, msg, size);
	}
	err = sk_stream_error(sk, flags, err);
	release_sock(sk);
	return err;
}

/*
 * sendfile() met the end of its file before its count, having sent with
 * MSG_MORE: nothing follows, so push now (tcp_splice_eof()). TCP_CORK and
 * Nagle still apply.
 */
void sdp_splice_eof(struct socket *sock)
{
	struct sock *sk = sock->sk;
	struct sdp_sock *ssk = sdp_sk(sk);
	struct socket *tcp;

	if (sdp_fb(ssk)) {
		sdp_fb_ready(ssk);
		tcp = ssk->tcp;
		if (tcp->ops->splice_eof)
			tcp->ops->splice_eof(tcp);
		return;
	}
	lock_sock(sk);
	sdp_conn_splice_eof(ssk->conn);
	release_sock(sk);
}
