// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol: closing (the states a connection ends through
 * are in sdp_sock.c). A closed socket's RDMA resources linger until the
 * connection is over (bounded by tcp_fin_timeout, as TCP's orphans are)
 * and are freed in process context. A socket still open keeps its receive
 * ring so that data which arrived before the end stays readable.
 */
#include <linux/net.h>
#include <net/tcp.h>

#include <linux/delay.h>

#include "sdp_sock.h"
#include "sdp_fallback.h"

/* Where DisConn takes us, or 0 if it is not ours to send. */
static int sdp_state_after_send_shutdown(int state)
{
	switch (state) {
	case TCP_ESTABLISHED:
		return TCP_FIN_WAIT1;
	case TCP_CLOSE_WAIT:
		return TCP_LAST_ACK;
	default:
		return 0;
	}
}

/* shutdown(SHUT_WR) or close(): DisConn once the queued data is posted. */
void sdp_shutdown_send(struct sock *sk)
{
	int state = sdp_state_after_send_shutdown(sk->sk_state);

	if (!state)
		return;
	sdp_set_state(sk, state);
	sdp_conn_shutdown(sdp_sk(sk)->conn);
}

/*
 * The last of a closed socket: RDMA resources, id, native socket, and the
 * reference the socket (or the listener's queue) held. Process context.
 */
void sdp_destroy(struct sdp_sock *ssk)
{
	struct sock *sk = &ssk->sk;
	struct socket *tcp;

	if (test_and_set_bit(SDP_F_DESTROYED, &ssk->flags))
		return;
	lock_sock(sk);
	sdp_conn_release(ssk->conn);
	sdp_conn_stop(ssk->conn);
	sk_stop_timer(sk, &ssk->fin_timer);
	sk_stop_timer(sk, sdp_ka_timer(ssk));
	sk_stop_timer(sk, &ssk->fb.conn_timer);
	release_sock(sk);
	/*
	 * Not the _sync variants for these two: a child is destroyed from its
	 * listener's CM handler, and these works destroy ids (their handler
	 * mutexes). One already running holds its own reference and, finding
	 * the socket closed, does nothing; ids have one owner (sdp_cm_destroy).
	 */
	sdp_fb_stop(ssk);
	/*
	 * A child's queue works use its parent, which goes below: waited for.
	 * They take only the listener's lock, never held here, and destroy no id.
	 */
	sdp_child_stop(ssk);
	sdp_cm_destroy(ssk->conn);
	tcp = xchg(&ssk->tcp, NULL);
	if (tcp) {
		sdp_fb_detach(ssk, tcp);
		sock_release(tcp);
	}
	sdp_child_release(ssk);
	sock_put(sk);
}

static bool sdp_unread(struct sdp_sock *ssk)
{
	sdp_conn_flush(ssk->conn);
	return sdp_conn_unread(ssk->conn);
}

/*
 * A disconnect, or a drain, flushes whatever the device has not sent yet:
 * an Abort or DisConn just posted must go first (providers that send from
 * a work queue, as rxe does since 6.4, have not yet). A second at most;
 * release_sock() takes in the completions. Unlocked.
 */
void sdp_ctrl_wait(struct sdp_sock *ssk)
{
	struct sock *sk = &ssk->sk;
	bool busy;
	int i;

	for (i = 0; i < 100; i++) {
		lock_sock(sk);
		busy = sdp_conn_ctrl_busy(ssk->conn);
		release_sock(sk);
		if (!busy)
			break;
		msleep(10);
	}
}

static void sdp_teardown_work(struct work_struct *work)
{
	struct sdp_sock *ssk = container_of(work, struct sdp_sock, teardown_work);
	struct sdp_sock *lssk;
	struct sock *sk = &ssk->sk;
	bool release;

	sdp_ctrl_wait(ssk);
	/*
	 * A child its listener may still hold: queued reset, or dropped (a
	 * request never completed). Only a close, which makes the socket dead
	 * under its lock first, lets go of the parent: held before unlocking.
	 */
	lock_sock(sk);
	sdp_cm_disconnect(ssk->conn);
	/* sends by SrcAvail end now, as TCP's reset frees its queue: MSG_ZEROCOPY's notified */
	sdp_conn_zc_revoke(ssk->conn);
	lssk = sock_flag(sk, SOCK_DEAD) ? NULL : ssk->child.parent;
	if (lssk)
		sock_hold(&lssk->sk);
	release_sock(sk);
	if (lssk) {
		sdp_child_ended(ssk, lssk);
		sock_put(&lssk->sk);
	}
	/*
	 * What RDMA held goes now when nobody can want it: the socket fell
	 * back, or it is a child in its listener's accept queue with nothing
	 * to read (a peer resetting queued connections must not keep their
	 * QPs and rings until accept()).
	 */
	lock_sock(sk);
	release = sdp_fb(ssk) ||
		  (ssk->child.parent && READ_ONCE(ssk->child.queue) == SDP_Q_ACCEPT &&
		   !sdp_unread(ssk));
	if (release)
		sdp_conn_release(ssk->conn);
	release_sock(sk);
	if (release)
		sdp_cm_destroy(ssk->conn);
	if (sock_flag(sk, SOCK_DEAD))
		sdp_destroy(ssk);
	sock_put(sk);
}

void sdp_close_init(struct sdp_sock *ssk)
{
	INIT_WORK(&ssk->teardown_work, sdp_teardown_work);
	timer_setup(&ssk->fin_timer, sdp_fin_timer, 0);
}

/* shutdown(SHUT_RD) of a listener, or disconnect of a connecting socket. */
void sdp_disconnect(struct sock *sk)
{
	struct sdp_sock *ssk = sdp_sk(sk);

	if (sk->sk_state == TCP_LISTEN) {
		if (!test_bit(SDP_F_STOPPING, &ssk->flags))
			sdp_listen_stop(ssk);
	} else if (sk->sk_state != TCP_CLOSE) {
		sdp_abort(ssk, 0);
	}
}

/* close(): as tcp_close(), with DisConn for FIN and Abort for RST. */
void sdp_close(struct sock *sk, long timeout)
{
	struct sdp_sock *ssk = sdp_sk(sk);
	struct socket *tcp;
	bool lingering;

	sock_hold(sk);
	lock_sock(sk);
	WRITE_ONCE(sk->sk_shutdown, SHUTDOWN_MASK);

	if (sdp_fb(ssk)) {
		/* TCP's close (FIN or RST, SO_LINGER) happens at release below. */
		sdp_fb_sync(ssk);
		sdp_fb_quiet(ssk);
	} else if (sk->sk_state == TCP_LISTEN) {
		if (!test_bit(SDP_F_STOPPING, &ssk->flags))
			sdp_listen_stop(ssk);
	} else if (sk->sk_state == TCP_SYN_SENT) {
		sdp_done(sk, 0);
	} else if (sdp_unread(ssk) ||
		   (sock_flag(sk, SOCK_LINGER) && !sk->sk_lingertime)) {
		/* Unread data or SO_LINGER {1, 0}: reset, as TCP does. */
		sdp_abort(ssk, 0);
	} else {
		sdp_shutdown_send(sk);
	}
	if (timeout)
		sk_stream_wait_close(sk, timeout);

	sock_orphan(sk);
	lingering = sk->sk_state != TCP_CLOSE;
	if (lingering)
		sk_reset_timer(sk, &ssk->fin_timer, jiffies +
			       READ_ONCE(sock_net(sk)->ipv4.sysctl_tcp_fin_timeout));
	release_sock(sk);

	tcp = xchg(&ssk->tcp, NULL);
	if (tcp) {
		sdp_fb_detach(ssk, tcp);
		sock_release(tcp);
	}
	if (!lingering)
		sdp_destroy(ssk);
	sock_put(sk);
}
