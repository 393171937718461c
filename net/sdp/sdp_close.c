// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol: closing.
 *
 * The TCP states name where a connection is (they are what SO_ACCEPTCONN,
 * TCP_INFO and /proc show): DisConn is SDP's FIN, sent after the last byte;
 * Abort is its RST. A connection is over when both DisConns are through (ours
 * completed, the peer's received) or on an Abort, a QP error or a timeout;
 * then the QP is disconnected. A closed socket's RDMA resources linger until
 * that point (bounded by tcp_fin_timeout, as TCP's orphans are) and are
 * freed in process context. A socket still open keeps its receive ring so
 * that data which arrived before the end stays readable.
 */
#include <linux/net.h>
#include <net/tcp.h>

#include <linux/delay.h>

#include "sdp_sock.h"
#include "sdp_conn.h"
#include "sdp_fallback.h"
#include "sdp_trace.h"

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
	struct sdp_sock *ssk = sdp_sk(sk);
	int state = sdp_state_after_send_shutdown(sk->sk_state);

	if (!state)
		return;
	sdp_set_state(sk, state);
	set_bit(SDP_F_SEND_DISCONN, &ssk->flags);
	sdp_tx_push(ssk, true);
}

/* Both DisConns are through: an orderly end. */
static void sdp_finish(struct sdp_sock *ssk)
{
	sdp_done(&ssk->sk, 0);
}

/* Our DisConn completed: the peer has it. */
void sdp_disconn_sent(struct sdp_sock *ssk)
{
	struct sock *sk = &ssk->sk;

	switch (sk->sk_state) {
	case TCP_FIN_WAIT1:
		sdp_set_state(sk, TCP_FIN_WAIT2);
		if (!sock_flag(sk, SOCK_DEAD))
			sk->sk_state_change(sk);
		break;
	case TCP_CLOSING:
	case TCP_LAST_ACK:
		sdp_finish(ssk);
		break;
	}
}

/* The peer's DisConn: end of its data. */
void sdp_peer_disconn(struct sdp_sock *ssk)
{
	struct sock *sk = &ssk->sk;

	SDP_INC_STATS(sock_net(sk), SDP_MIB_DISCONN_RCVD);
	WRITE_ONCE(sk->sk_shutdown, sk->sk_shutdown | RCV_SHUTDOWN);
	sock_set_flag(sk, SOCK_DONE);
	switch (sk->sk_state) {
	case TCP_SYN_RECV:
	case TCP_ESTABLISHED:
		sdp_set_state(sk, TCP_CLOSE_WAIT);
		break;
	case TCP_FIN_WAIT1:
		sdp_set_state(sk, TCP_CLOSING);
		break;
	case TCP_FIN_WAIT2:
		sdp_finish(ssk);
		return;
	}
	if (!sock_flag(sk, SOCK_DEAD)) {
		sk->sk_state_change(sk);
		sk_wake_async(sk, SOCK_WAKE_WAITD,
			      sk->sk_shutdown == SHUTDOWN_MASK ? POLL_HUP : POLL_IN);
	}
}

/*
 * The connection is over (@err 0 for an orderly end or a local abort):
 * wake everybody and disconnect the QP from process context.
 */
void sdp_done(struct sock *sk, int err)
{
	struct sdp_sock *ssk = sdp_sk(sk);

	if (err)
		WRITE_ONCE(sk->sk_err, err);
	sdp_set_state(sk, TCP_CLOSE);
	WRITE_ONCE(sk->sk_shutdown, SHUTDOWN_MASK);
	sock_set_flag(sk, SOCK_DONE);
	clear_bit(SDP_F_SEND_DISCONN, &ssk->flags);
	sk_stop_timer(sk, &ssk->cork_timer);
	sk_stop_timer(sk, &ssk->credit_timer);
	sk_stop_timer(sk, &ssk->fin_timer);
	sk_stop_timer(sk, sdp_ka_timer(ssk));
	sk_stop_timer(sk, &ssk->tx_timer);
	ssk->tx_waiting = false;
	sk_stop_timer(sk, &ssk->conn_timer);
	sdp_update_counts(ssk);
	if (!sock_flag(sk, SOCK_DEAD)) {
		sk->sk_state_change(sk);
		if (err)
			sk_error_report(sk);
	}
	sdp_schedule_teardown(ssk);
}

/* Reset the connection: Abort to the peer if it can take one, then done. */
void sdp_abort(struct sdp_sock *ssk, int err)
{
	if (ssk->sk.sk_state == TCP_CLOSE)
		return;
	sdp_post_abort(ssk);
	sdp_done(&ssk->sk, err);
}

/* The peer broke the protocol or the QP failed. */
void sdp_conn_error(struct sdp_sock *ssk, int err, int mib)
{
	trace_sdp_conn_error(&ssk->sk, sdp_mib_name(mib), err);
	SDP_INC_STATS(sock_net(&ssk->sk), mib);
	sdp_abort(ssk, err);
}

/* An orphan lingered past tcp_fin_timeout. */
void sdp_fin_timer(struct timer_list *t)
{
	struct sdp_sock *ssk = from_timer(ssk, t, fin_timer);

	sdp_timer_event(ssk, SDP_F_FIN_TIMEOUT);
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
	sdp_conn_free(ssk);
	sk_stop_timer(sk, &ssk->cork_timer);
	sk_stop_timer(sk, &ssk->credit_timer);
	sk_stop_timer(sk, &ssk->fin_timer);
	sk_stop_timer(sk, sdp_ka_timer(ssk));
	sk_stop_timer(sk, &ssk->tx_timer);
	sk_stop_timer(sk, &ssk->conn_timer);
	release_sock(sk);
	/*
	 * Not the _sync variants for these two: a child is destroyed from its
	 * listener's CM handler, and these works destroy ids (their handler
	 * mutexes). One already running holds its own reference and, finding
	 * the socket closed, does nothing; ids have one owner (sdp_cm_destroy).
	 */
	if (cancel_work(&ssk->fb_work))
		sock_put(sk);
	if (cancel_delayed_work(&ssk->retry_work))
		sock_put(sk);
	/*
	 * A child's queue works use its parent, which goes below: waited for.
	 * They take only the listener's lock, never held here, and destroy no id.
	 */
	if (cancel_delayed_work_sync(&ssk->accept_work))
		sock_put(sk);
	if (cancel_delayed_work_sync(&ssk->syn_work))
		sock_put(sk);
	sdp_cm_destroy(ssk);
	tcp = xchg(&ssk->tcp, NULL);
	if (tcp) {
		sdp_fb_detach(ssk, tcp);
		sock_release(tcp);
	}
	if (ssk->parent) {
		sock_put(&ssk->parent->sk);
		ssk->parent = NULL;
	}
	sock_put(sk);
}

static bool sdp_unread(struct sdp_sock *ssk)
{
	sdp_flush(ssk);
	return sdp_conn_unread(ssk);
}

static void sdp_teardown_work(struct work_struct *work)
{
	struct sdp_sock *ssk = container_of(work, struct sdp_sock, teardown_work);
	struct sdp_sock *lssk;
	struct sock *sk = &ssk->sk;
	bool busy, release;
	int i;

	/*
	 * The disconnect flushes whatever the device has not sent yet: an
	 * Abort just posted must go first (providers that send from a work
	 * queue, as rxe does since 6.4, have not yet). A second at most;
	 * release_sock() takes in the completions.
	 */
	for (i = 0; i < 100; i++) {
		lock_sock(sk);
		busy = sdp_conn_ctrl_busy(ssk);
		release_sock(sk);
		if (!busy)
			break;
		msleep(10);
	}
	/*
	 * A child its listener may still hold: queued reset, or dropped (a
	 * request never completed). Only a close, which makes the socket dead
	 * under its lock first, lets go of the parent: held before unlocking.
	 */
	lock_sock(sk);
	sdp_cm_disconnect(ssk);
	lssk = sock_flag(sk, SOCK_DEAD) ? NULL : ssk->parent;
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
	release = ssk->transport == SDP_TRANSPORT_TCP ||
		  (ssk->parent && READ_ONCE(ssk->queue) == SDP_Q_ACCEPT && !sdp_unread(ssk));
	if (release)
		sdp_conn_free(ssk);
	release_sock(sk);
	if (release)
		sdp_cm_destroy(ssk);
	if (sock_flag(sk, SOCK_DEAD))
		sdp_destroy(ssk);
	sock_put(sk);
}

void sdp_teardown_init(struct sdp_sock *ssk)
{
	INIT_WORK(&ssk->teardown_work, sdp_teardown_work);
}

void sdp_schedule_teardown(struct sdp_sock *ssk)
{
	sock_hold(&ssk->sk);
	if (!queue_work(sdp_wq, &ssk->teardown_work))
		sock_put(&ssk->sk);
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
