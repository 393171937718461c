// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol: the socket's state, as TCP's state machine
 * names it, and what every other file of the socket layer builds on: how a
 * connection ends (done, reset, the peer's DisConn and ours), readiness to
 * write, and the socket's own timers (an orphan's linger, keepalive) with
 * the work they leave to release_sock(). Calls nothing of the socket layer
 * above it.
 *
 * The TCP states name where a connection is (they are what SO_ACCEPTCONN,
 * TCP_INFO and /proc show): DisConn is SDP's FIN, sent after the last byte;
 * Abort is its RST. A connection is over when both DisConns are through (ours
 * completed, the peer's received) or on an Abort, a QP error or a timeout;
 * then the QP is disconnected, from process context (sdp_close.c).
 */
#include <linux/module.h>
#include <net/tcp.h>

#include "sdp_sock.h"
#include "sdp_trace.h"

int sdp_family = AF_INET_SDP;
module_param_named(family, sdp_family, int, 0444);
MODULE_PARM_DESC(family, "socket address family number to register (default 27, AF_INET_SDP)");

/* Pairs with inet_sk_state_load() in poll (inet_sk_state_store is not exported). */
void sdp_set_state(struct sock *sk, int state)
{
	int old = READ_ONCE(sk->sk_state);

	if (old != state)
		trace_sdp_state(sk, old, state, READ_ONCE(sdp_sk(sk)->fb.transport));
	smp_store_release(&sk->sk_state, state);
}

void sdp_schedule_teardown(struct sdp_sock *ssk)
{
	sock_hold(&ssk->sk);
	if (!queue_work(sdp_wq, &ssk->teardown_work))
		sock_put(&ssk->sk);
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
	sk_stop_timer(sk, &ssk->fin_timer);
	sk_stop_timer(sk, sdp_ka_timer(ssk));
	sk_stop_timer(sk, &ssk->fb.conn_timer);
	sdp_conn_stop(ssk->conn);
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
	sdp_conn_abort(ssk->conn);
	sdp_done(&ssk->sk, err);
}

/* The peer broke the protocol or the QP failed. */
void sdp_conn_error(struct sock *sk, int err, int mib)
{
	trace_sdp_conn_error(sk, sdp_mib_name(mib), err);
	SDP_INC_STATS(sock_net(sk), mib);
	sdp_abort(sdp_sk(sk), err);
}

/* The connection's device went away: a connection it carried is reset. */
void sdp_lost(struct sock *sk)
{
	if (sk->sk_state != TCP_CLOSE && sk->sk_state != TCP_LISTEN &&
	    !sdp_fb(sdp_sk(sk)))
		sdp_done(sk, ECONNRESET);
}

/* Our DisConn completed: the peer has it. */
void sdp_disconn_sent(struct sock *sk)
{
	switch (sk->sk_state) {
	case TCP_FIN_WAIT1:
		sdp_set_state(sk, TCP_FIN_WAIT2);
		if (!sock_flag(sk, SOCK_DEAD))
			sk->sk_state_change(sk);
		break;
	case TCP_CLOSING:
	case TCP_LAST_ACK:
		/* both DisConns are through: an orderly end */
		sdp_done(sk, 0);
		break;
	}
}

/* The peer's DisConn: end of its data. */
void sdp_peer_disconn(struct sock *sk)
{
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
		sdp_done(sk, 0);
		return;
	}
	if (!sock_flag(sk, SOCK_DEAD)) {
		sk->sk_state_change(sk);
		sk_wake_async(sk, SOCK_WAKE_WAITD,
			      sk->sk_shutdown == SHUTDOWN_MASK ? POLL_HUP : POLL_IN);
	}
}

/*
 * Room for a send. On a SO_ZEROCOPY socket, room for a MSG_ZEROCOPY send
 * behind those queued is room too, as TCP counts its zero-copy sends in its
 * send buffer: an epoll sender keeps several out. Copied bytes wait till
 * those are read, so once a copied send had to wait that room is no
 * longer reported (a level-triggered poller would spin on EAGAIN).
 */
bool sdp_writeable(const struct sock *sk)
{
	const struct sdp_sock *ssk = sdp_sk(sk);
	const struct sdp_conn_view *v = sdp_view(ssk);

	if (READ_ONCE(v->tx_unsent) >= READ_ONCE(ssk->opts.notsent_lowat))
		return false;
	if (READ_ONCE(v->zc_room) && sock_flag(sk, SOCK_ZEROCOPY) &&
	    !test_bit(SDP_F_COPY_WAITS, &ssk->flags))
		return true;
	/* Never connected: nothing to wait for (send fails with EPIPE). */
	return READ_ONCE(v->tx_free_slots) > 0 || !READ_ONCE(v->live);
}

void sdp_write_space(struct sock *sk)
{
	struct sdp_sock *ssk = sdp_sk(sk);
	struct socket_wq *wq;

	/* the queue of MSG_ZEROCOPY sends emptied: copied sends go again */
	if (READ_ONCE(sdp_view(ssk)->tx_free_slots))
		clear_bit(SDP_F_COPY_WAITS, &ssk->flags);
	if (!sdp_writeable(sk))
		return;
	if (sk->sk_socket)
		clear_bit(SOCK_NOSPACE, &sk->sk_socket->flags);
	rcu_read_lock();
	wq = rcu_dereference(sk->sk_wq);
	if (skwq_has_sleeper(wq))
		wake_up_interruptible_sync_poll(&wq->wait, EPOLLOUT |
						EPOLLWRNORM | EPOLLWRBAND);
	if (wq && wq->fasync_list && !(sk->sk_shutdown & SEND_SHUTDOWN))
		sock_wake_async(wq, SOCK_WAKE_SPACE, POLL_OUT);
	rcu_read_unlock();
}

/*
 * SO_KEEPALIVE: once the connection has been idle for TCP_KEEPIDLE, a
 * probe carrying only credits goes out every TCP_KEEPINTVL. A live peer's
 * HCA acknowledges it; a dead one fails it after the RC retries, and the
 * socket gets ETIMEDOUT as TCP's would.
 */
void sdp_keepalive_reset(struct sdp_sock *ssk)
{
	struct sock *sk = &ssk->sk;

	if (sock_flag(sk, SOCK_KEEPOPEN) && sdp_can_send_state(sk))
		sk_reset_timer(sk, sdp_ka_timer(ssk),
			       jiffies + keepalive_time_when(&ssk->shadow));
	else
		sk_stop_timer(sk, sdp_ka_timer(ssk));
}

/* TCP_KEEPIDLE changed: the timer reckons again from the last arrival, now. */
void sdp_keepalive_rearm(struct sdp_sock *ssk)
{
	struct sock *sk = &ssk->sk;

	if (sock_flag(sk, SOCK_KEEPOPEN) && sdp_can_send_state(sk))
		sk_reset_timer(sk, sdp_ka_timer(ssk), jiffies);
}

/* The keepalive timer fired (spinlock held, no owner). */
static void sdp_keepalive(struct sdp_sock *ssk)
{
	const struct tcp_sock *tp = &ssk->shadow;
	u32 idle, when;

	if (!sock_flag(&ssk->sk, SOCK_KEEPOPEN) || !sdp_can_send_state(&ssk->sk) ||
	    !sdp_conn_started(ssk->conn))
		return;
	idle = jiffies - sdp_conn_rx_stamp(ssk->conn);
	when = keepalive_time_when(tp);
	if (idle >= when) {
		if (sdp_conn_probe(ssk->conn))
			SDP_INC_STATS(sock_net(&ssk->sk), SDP_MIB_KEEPALIVE_PROBES);
		when = keepalive_intvl_when(tp);
	} else {
		when -= idle;
	}
	sk_reset_timer(&ssk->sk, sdp_ka_timer(ssk), jiffies + when);
}

/* sk_prot->keepalive: SO_KEEPALIVE was set or cleared. */
void sdp_set_keepalive(struct sock *sk, int on)
{
	sock_valbool_flag(sk, SOCK_KEEPOPEN, on);
	sdp_keepalive_reset(sdp_sk(sk));
}

/* What the socket's timers left (spinlock held, no owner). */
void sdp_sock_deferred(struct sdp_sock *ssk)
{
	if (test_and_clear_bit(SDP_F_FIN_TIMEOUT, &ssk->flags))
		sdp_abort(ssk, ETIMEDOUT);
	if (test_and_clear_bit(SDP_F_KEEPALIVE, &ssk->flags))
		sdp_keepalive(ssk);
	sdp_conn_kick(ssk->conn);
}

/* A socket timer fired: its work now, or at the owner's release_sock(). */
static void sdp_sock_event(struct sdp_sock *ssk, int bit)
{
	struct sock *sk = &ssk->sk;

	set_bit(bit, &ssk->flags);
	bh_lock_sock(sk);
	if (!sock_owned_by_user(sk))
		sdp_sock_deferred(ssk);
	else
		set_bit(SDP_F_DEFERRED, &ssk->flags);
	bh_unlock_sock(sk);
	sock_put(sk);
}

void sdp_keepalive_timer(struct timer_list *t)
{
	struct sdp_sock *ssk = from_timer(ssk, t, shadow.inet_conn.icsk_keepalive_timer);

	sdp_sock_event(ssk, SDP_F_KEEPALIVE);
}

/* An orphan lingered past tcp_fin_timeout. */
void sdp_fin_timer(struct timer_list *t)
{
	struct sdp_sock *ssk = from_timer(ssk, t, fin_timer);

	sdp_sock_event(ssk, SDP_F_FIN_TIMEOUT);
}
