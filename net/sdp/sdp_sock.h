/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sockets Direct Protocol: the socket. struct sdp_sock and the socket
 * layer (proto_ops, addresses, options, close, listen queues, fallback,
 * policy). No RDMA type is known here: the connection under a socket is
 * the transport's struct sdp_conn, reached through sdp_conn.h.
 */
#ifndef _NET_SDP_SOCK_H
#define _NET_SDP_SOCK_H

#include <linux/net.h>
#include <linux/workqueue.h>
#include <linux/tcp.h>
#include <net/ipv6.h>
#include <net/sock.h>
#include <net/tcp.h>
#include <net/tcp_states.h>
#include <linux/sdp.h>

#include "sdp_compat.h"
#include "sdp_conn.h"
#include "sdp_debug.h"
#include "sdp_netns.h"
#include "sdp_stats.h"

struct sdp_policy;

/*
 * Locking.
 *
 * - lock_sock() serialises process context (syscalls, rdma_cm handlers,
 *   work items).
 * - Completion handlers (softirq) and timers take the socket spinlock. They
 *   do their work when no process owns the socket, and otherwise leave it
 *   to release_sock() (sdp_release_cb): the connection's (its own deferred
 *   bit) and the socket's timers' (SDP_F_DEFERRED).
 * - rdma_cm handlers hold the id's handler mutex and then take lock_sock():
 *   nothing may wait for a handler (rdma_destroy_id, rdma_connect,
 *   rdma_lock_handler, rdma_listen: a wildcard listen failing half way
 *   destroys the ids it made) while holding lock_sock().
 * - A listener's stop (SDP_F_STOPPING) and listen() of a closed socket
 *   (SDP_F_ARMING) drop lock_sock() midway, where TCP holds it throughout:
 *   connect(), listen() and shutdown() wait for them (sdp_lock_settled()).
 */

extern int sdp_family;

/* sdp_sock.flags */
enum {
	SDP_F_DEFERRED,		/* the socket's timer work waits for release_cb */
	SDP_F_FIN_TIMEOUT,	/* an orphan lingered too long */
	SDP_F_KEEPALIVE,	/* the keepalive timer fired */
	SDP_F_DESTROYED,	/* sdp_destroy() ran */
	SDP_F_STOPPING,		/* a listener is dropping its children */
	SDP_F_SWITCHING,	/* becoming the native socket (sdp_fb_start) */
	SDP_F_DEFER_ACCEPT,	/* established child waits for data (TCP_DEFER_ACCEPT) */
	SDP_F_ARMING,		/* listen() of a closed socket, or re-arm: till rdma_listen()'s end */
	SDP_F_COPY_WAITS,	/* a copied send waits behind MSG_ZEROCOPY's: no EPOLLOUT for their room */
};

/* Which of its listener's queues a child is on (sdp_child.queue). */
enum {
	SDP_Q_NONE,
	SDP_Q_SYN,	/* accepted over RDMA, not established yet */
	SDP_Q_ACCEPT,	/* established, waiting for accept() */
};

/* A listener's queues (sdp_listen.c). */
struct sdp_listener {
	struct list_head	syn_q;		/* accepted over RDMA, not established */
	struct list_head	accept_q;	/* established, waiting for accept() */
	struct list_head	item;		/* on sdp_listeners: may listen over RDMA */
	u32			rearm_gen;	/* the last re-arm pass that saw it */
	u32			syn_count;	/* children on syn_q */
};

/* A listener's child over RDMA (sdp_listen.c); it holds its parent for life. */
struct sdp_child {
	struct sdp_sock		*parent;
	struct list_head	node;		/* on the parent's syn_q or accept_q */
	int			queue;		/* SDP_Q_* */
	struct delayed_work	accept_work;	/* TCP_DEFER_ACCEPT: data came or time is up */
	struct delayed_work	syn_work;	/* not established in time: dropped */
	struct list_head	half_open_item;	/* on its namespace's half_open */
	unsigned long		syn_stamp;	/* jiffies: it joined syn_q */
	u32			promised;	/* the refused client told of its end (hash), 0 */
};

/*
 * The RDMA attempt of a connect(), what bounds it, and the fallback to the
 * native socket (sdp_fallback.c).
 */
struct sdp_fb {
	u32			transport;	/* enum sdp_transport */
	u32			reason;		/* enum sdp_fallback_reason */
	int			err;		/* native error mirrored in sk_err */
	struct sockaddr_storage	addr;		/* connect()'s address, for TCP */
	int			addrlen;
	struct timer_list	conn_timer;	/* bounds the RDMA attempt */
	struct work_struct	work;		/* ... in process context */
	struct delayed_work	retry_work;	/* after a busy listener's refusal */
	u8			syn_retries;	/* busy refusals so far (saturates) */
	unsigned long		syn_deadline;	/* jiffies: TCP's connect() would fail */
	void			(*tcp_error_report)(struct sock *sk);
	/* a listener's native socket: its own callbacks, TCP's (fallback) */
	struct sock		*listen_sk;
	void			(*tcp_state_change)(struct sock *sk);
	void			(*tcp_data_ready)(struct sock *sk);
	void			(*tcp_write_space)(struct sock *sk);
};

/*
 * SOL_TCP options as the data path applies them, and SOL_SDP's
 * (sdp_sockopt.c): from the shadow, which setsockopt() refreshes from the
 * native socket and kernel users' tcp_sock_set_*() write directly.
 */
struct sdp_opts {
	bool			nodelay;
	bool			cork;
	u32			notsent_lowat;
	u32			user_timeout;	/* TCP_USER_TIMEOUT, ms */
	u32			keepidle;	/* TCP_KEEPIDLE, jiffies (0: sysctl) */
	bool			family_fixed;	/* SDP_FAMILY was set */
	bool			zcopy_set;	/* SDP_ZCOPY_THRESH was set: */
	u32			zcopy_thresh;
};

struct sdp_sock {
	/*
	 * Kernel users set TCP options with tcp_sock_set_*() on sock->sk,
	 * which write into it as a struct tcp_sock: ours is one (the shadow),
	 * never used as TCP's, so those writes land in memory we own and read
	 * back (sdp_opts_apply()). inet_sk() and inet_csk() writes land there
	 * too, safely; those SDP does not read (ip_sock_set_tos() ...) do nothing.
	 */
	union {
		struct sock	sk;	/* must be first */
		struct tcp_sock	shadow;
	};

	/*
	 * The native TCP socket behind this one: it holds the port in the
	 * TCP port space (bind is done on it first), validates and keeps the
	 * SOL_TCP/SOL_IP/SOL_IPV6 options, and its family is the family of the
	 * addresses this socket speaks.
	 */
	struct socket		*tcp;
	/* the transport's, from the socket's creation to its destructor */
	struct sdp_conn		*conn;
	unsigned long		flags;		/* SDP_F_* */

	/* each part is set up and written by the file named at its type */
	struct sdp_listener	lsn;
	struct sdp_child	child;
	struct sdp_fb		fb;
	struct sdp_opts		opts;
	struct sdp_policy	*policy;	/* SDP_POLICY (sdp_policy.c), or NULL */
	/* closing (sdp_close.c) */
	struct work_struct	teardown_work;
	struct timer_list	fin_timer;	/* an orphan's linger */
	struct list_head	diag_node;	/* on sdp_diag.c's list of all */
};

/*
 * The keepalive timer is TCP's, in the shadow: tcp_sock_set_keepidle()
 * re-arms it (inet_csk_reset_keepalive_timer()).
 */
static inline struct timer_list *sdp_ka_timer(struct sdp_sock *ssk)
{
	return &ssk->shadow.inet_conn.icsk_keepalive_timer;
}

static inline struct sdp_sock *sdp_sk(const struct sock *sk)
{
	return container_of(sk, struct sdp_sock, sk);
}

/* What the socket may read of its connection without the lock. */
static inline const struct sdp_conn_view *sdp_view(const struct sdp_sock *ssk)
{
	return sdp_conn_view(ssk->conn);
}

/*
 * How long TCP's @n retransmissions take: timeouts from TCP_TIMEOUT_INIT,
 * doubling up to TCP_RTO_MAX (retrans_to_secs()).
 */
static inline unsigned long sdp_tcp_backoff(int n)
{
	unsigned long rto = TCP_TIMEOUT_INIT, t = 0;

	while (n-- > 0) {
		t += rto;
		rto = min_t(unsigned long, rto << 1, TCP_RTO_MAX);
	}
	return t;
}

/* A connection that carries data: established or half closed. */
static inline bool sdp_can_send_state(const struct sock *sk)
{
	return (1 << sk->sk_state) & (TCPF_ESTABLISHED | TCPF_CLOSE_WAIT);
}

/* Fell back: every call goes to the native TCP socket. */
static inline bool sdp_fb(const struct sdp_sock *ssk)
{
	return READ_ONCE(ssk->fb.transport) == SDP_TRANSPORT_TCP;
}

/*
 * tcp_epollin_ready(): an urgent byte at the mark counts only inline. Short
 * of SO_RCVLOWAT, readable when the ring is full (tcp_rmem_pressure()):
 * nothing more comes until the reader makes room.
 */
static inline bool sdp_readable(const struct sock *sk, int target)
{
	const struct sdp_conn_view *v = sdp_view(sdp_sk(sk));
	u32 avail = READ_ONCE(v->rx_avail);
	int mark = READ_ONCE(v->rx_mark) && !sock_flag(sk, SOCK_URGINLINE);

	return avail >= target + mark || (READ_ONCE(v->rx_full) && avail > mark);
}

/* Listening, and not being stopped (sdp_listen_stop() drops the lock). */
static inline bool sdp_listening(const struct sdp_sock *lssk)
{
	return lssk->sk.sk_state == TCP_LISTEN &&
	       !test_bit(SDP_F_STOPPING, &lssk->flags);
}

/* sdp_sock.c: states, ends, readiness, the socket's timers */
void sdp_set_state(struct sock *sk, int state);
void sdp_schedule_teardown(struct sdp_sock *ssk);
void sdp_done(struct sock *sk, int err);
void sdp_abort(struct sdp_sock *ssk, int err);
void sdp_ctrl_wait(struct sdp_sock *ssk);
void sdp_conn_error(struct sock *sk, int err, int mib);
void sdp_lost(struct sock *sk);
void sdp_peer_disconn(struct sock *sk);
void sdp_disconn_sent(struct sock *sk);
bool sdp_writeable(const struct sock *sk);
void sdp_write_space(struct sock *sk);
void sdp_keepalive_reset(struct sdp_sock *ssk);
void sdp_keepalive_rearm(struct sdp_sock *ssk);
void sdp_set_keepalive(struct sock *sk, int on);
void sdp_sock_deferred(struct sdp_sock *ssk);
void sdp_keepalive_timer(struct timer_list *t);
void sdp_fin_timer(struct timer_list *t);

/* sdp_data.c */
int sdp_recvmsg(struct socket *sock, struct msghdr *msg, size_t len, int flags);
int sdp_sendmsg(struct socket *sock, struct msghdr *msg, size_t len);
void sdp_splice_eof(struct socket *sock);

/* sdp_policy.c */
int sdp_policy_set(struct sdp_sock *ssk, sockptr_t optval, unsigned int optlen);
int sdp_policy_get(struct sdp_sock *ssk, char __user *optval, int __user *optlen);
bool sdp_policy_tcp(const struct sdp_sock *ssk, const struct sockaddr_storage *ss,
		    unsigned int role);

/* sdp_addr.c */
bool sdp_tcp_fresh(const struct sdp_sock *ssk);
int sdp_addr_from_user(struct sdp_sock *ssk, struct sockaddr *uaddr, int len,
		       struct sockaddr_storage *out, bool for_connect);
int sdp_addr_to_user(struct sdp_sock *ssk, const struct sockaddr_storage *addr,
		     struct sockaddr *uaddr);
int sdp_connect_rdma(struct sdp_sock *ssk, const struct sockaddr_storage *dst);

/* sdp_listen.c */
void sdp_listen_init(struct sdp_sock *ssk);
struct sdp_sock *sdp_accept_dequeue(struct sdp_sock *lssk);
void sdp_child_drop(struct sdp_sock *child, int err);
void sdp_child_ended(struct sdp_sock *child, struct sdp_sock *lssk);
void sdp_listen_stop(struct sdp_sock *lssk);
void sdp_listener_add(struct sdp_sock *lssk);
bool sdp_reuseport_held(const struct sdp_sock *lssk, int err);
void sdp_listen_arm(struct sdp_sock *lssk);
void sdp_listeners_rearm(void);
void sdp_listen_exit(void);
bool sdp_listening_up(const struct sock *sk);
struct sdp_conn *sdp_listen_request(struct sdp_sock *lssk, struct sdp_req *req,
				    struct sdp_sock *(*new_child)(struct sdp_sock *lssk));
void sdp_child_established(struct sock *sk);
void sdp_child_failed(struct sock *sk, int err);
void sdp_child_stop(struct sdp_sock *ssk);
void sdp_child_release(struct sdp_sock *ssk);
void sdp_data_ready(struct sock *sk);

/* sdp_close.c */
void sdp_close_init(struct sdp_sock *ssk);
void sdp_destroy(struct sdp_sock *ssk);
void sdp_close(struct sock *sk, long timeout);
void sdp_disconnect(struct sock *sk);
void sdp_shutdown_send(struct sock *sk);

/* sdp_sockopt.c */
int sdp_tcp_create(struct sdp_sock *ssk, int family, const struct sdp_sock *parent);
void sdp_inherit_sk(struct sdp_sock *child, struct sdp_sock *parent);
int sdp_setsockopt(struct socket *sock, int level, int optname,
		   sockptr_t optval, unsigned int optlen);
int sdp_getsockopt(struct socket *sock, int level, int optname,
		   char __user *optval, int __user *optlen);
void sdp_tcp_sync(struct sdp_sock *ssk);
void sdp_tcp_inherit(struct sdp_sock *child, const struct sdp_sock *parent);
void sdp_opts_apply(struct sdp_sock *ssk);
void sdp_tcp_refresh(struct sdp_sock *ssk);
u32 sdp_user_timeout(const struct sock *sk);
u32 sdp_zcopy_thresh(const struct sdp_sock *ssk);

/* sdp_diag.c */
void sdp_fill_info(const struct sdp_sock *ssk, struct sdp_info *info);
void sdp_diag_add(struct sdp_sock *ssk);
void sdp_diag_del(struct sdp_sock *ssk);
int sdp_diag_init(void);
void sdp_diag_exit(void);

#endif /* _NET_SDP_SOCK_H */
