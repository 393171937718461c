// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol: the engine that turns a connection's completions
 * and timers into its state. It runs with the socket's spinlock held, by
 * whoever may touch the rings: a completion or timer while no process owns
 * the socket; else the owner, at its release_sock() (sdp_conn_release_cb())
 * or when it asks (sdp_conn_flush()).
 */
#include "sdp_rdma.h"

void sdp_process(struct sdp_conn *c)
{
	if (!c->v.live || !c->started)
		return;
	sdp_tx_reap(c);
	/*
	 * Reads of the peer's SrcAvail before the receives: a failed one is
	 * why the receives are flushed after it (and their bytes come before
	 * anything the receives may still bring).
	 */
	sdp_zc_reap(c);
	sdp_rx_reap(c);
	if (c->v.live) {
		/* the push ends with sdp_tx_watch(); a fired timer re-arms it */
		sdp_tx_push(c, test_and_clear_bit(SDP_C_PUSH, &c->flags));
		if (c->v.live && test_and_clear_bit(SDP_C_TX_TIMEOUT, &c->flags))
			sdp_tx_watch(c, true);
	}
	sdp_update_counts(c);
}

/*
 * The shared CQs' poller (sdp_cq.c makes them). A completion names its work
 * request's connection (struct sdp_wr): the handler records it in its slot
 * and marks the connection; once a batch is reaped, each marked
 * connection's engine runs once, for all its completions of the batch.
 */
/* Each marked connection's engine, once. */
static void sdp_cq_run(struct sdp_cq *scq)
{
	struct sdp_conn *c;
	struct sock *sk;

	while ((c = scq->todo)) {
		scq->todo = c->cq_next;
		sk = c->sk;
		/* (its link is read before another CQ may mark it again) */
		smp_mb__before_atomic();
		clear_bit(SDP_C_CQ_MARKED, &c->flags);
		smp_mb__after_atomic();
		bh_lock_sock(sk);
		sdp_defer_or_process(c);
		bh_unlock_sock(sk);
		sock_put(sk);
	}
}

/*
 * NAPI's poll: from softirq, or from a busy poller (process context, bottom
 * halves off), which owns the context till it stops and then polls once
 * more: only the poll that completes the context re-arms the CQ.
 */
int sdp_cq_poll(struct napi_struct *napi, int budget)
{
	struct sdp_cq *scq = container_of(napi, struct sdp_cq, napi);
	int n, i, done = 0;

	/* (the tests': completions wait in the CQ; NAPI calls again) */
	if (unlikely(READ_ONCE(sdp_hold_poll)))
		return budget;
	while (done < budget) {
		n = ib_poll_cq(scq->cq, min(budget - done, SDP_CQ_BATCH), scq->wc);
		for (i = 0; i < n; i++)
			if (scq->wc[i].wr_cqe)
				scq->wc[i].wr_cqe->done(scq->cq, &scq->wc[i]);
		if (n > 0)
			done += n;
		if (n < SDP_CQ_BATCH)
			break;
	}
	sdp_cq_run(scq);
	/* what came between the last poll and the re-arm is polled again */
	if (done < budget && napi_complete_done(napi, done) &&
	    ib_req_notify_cq(scq->cq, IB_CQ_NEXT_COMP | IB_CQ_REPORT_MISSED_EVENTS) > 0)
		napi_schedule(napi);
	return done;
}

/* The device's completion event, in interrupt or its provider's context. */
void sdp_cq_event(struct ib_cq *cq, void *context)
{
	struct sdp_cq *scq = context;

	napi_schedule(&scq->napi);
}

/* Completions and timers: run the engine now or leave it to the owner. */
void sdp_defer_or_process(struct sdp_conn *c)
{
	if (!sock_owned_by_user(c->sk))
		sdp_process(c);
	else
		set_bit(SDP_C_DEFERRED, &c->flags);
}

/* A timer fired: note which (@bit) for the engine and drop its reference. */
void sdp_timer_event(struct sdp_conn *c, int bit)
{
	struct sock *sk = c->sk;

	set_bit(bit, &c->flags);
	bh_lock_sock(sk);
	sdp_defer_or_process(c);
	bh_unlock_sock(sk);
	sock_put(sk);
}

/*
 * The connection's timers only tell the engine which fired (a flag bit),
 * here, so that the files the engine calls never call it back.
 */
static void sdp_cork_timer(struct timer_list *t)
{
	struct sdp_conn *c = from_timer(c, t, cork_timer);

	sdp_timer_event(c, SDP_C_PUSH);
}

static void sdp_credit_timer(struct timer_list *t)
{
	struct sdp_conn *c = from_timer(c, t, credit_timer);

	sdp_timer_event(c, SDP_C_CREDIT_DUE);
}

static void sdp_tx_timer(struct timer_list *t)
{
	struct sdp_conn *c = from_timer(c, t, tx_timer);

	sdp_timer_event(c, SDP_C_TX_TIMEOUT);
}

static void sdp_zc_stall_timer(struct timer_list *t)
{
	struct sdp_conn *c = from_timer(c, t, zc_timer);

	sdp_timer_event(c, SDP_C_ZC_STALL);
}

void sdp_conn_timers_init(struct sdp_conn *c)
{
	timer_setup(&c->cork_timer, sdp_cork_timer, 0);
	timer_setup(&c->credit_timer, sdp_credit_timer, 0);
	timer_setup(&c->tx_timer, sdp_tx_timer, 0);
	timer_setup(&c->zc_timer, sdp_zc_stall_timer, 0);
}

/*
 * The socket's own timer work ran (a keepalive probe may have been
 * posted): the engine runs after it, as after any event, so that the send
 * progress timer watches what was posted.
 */
void sdp_conn_kick(struct sdp_conn *c)
{
	sdp_process(c);
}

/* The owner's release_sock(): what completions left to it. */
void sdp_conn_release_cb(struct sdp_conn *c)
{
	if (test_and_clear_bit(SDP_C_DEFERRED, &c->flags))
		sdp_process(c);
}

/* Work left for the owner (a waiter's wake condition). */
bool sdp_conn_deferred(const struct sdp_conn *c)
{
	return test_bit(SDP_C_DEFERRED, &c->flags);
}

/* For the socket's owner: take in what completed so far. */
void sdp_conn_flush(struct sdp_conn *c)
{
	spin_lock_bh(&c->sk->sk_lock.slock);
	clear_bit(SDP_C_DEFERRED, &c->flags);
	sdp_process(c);
	spin_unlock_bh(&c->sk->sk_lock.slock);
}
