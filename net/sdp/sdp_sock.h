/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sockets Direct Protocol: the socket. struct sdp_sock and the socket
 * layer (proto_ops, addresses, options, close, listen queues, policy). No
 * RDMA type is known here: the connection under a socket is reached
 * through sdp_conn.h.
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
#include "sdp_netns.h"
#include "sdp_stats.h"
#include "sdp_wire.h"

struct rdma_cm_id;
struct sdp_conn;
struct sdp_policy;

/*
 * Locking.
 *
 * - lock_sock() serialises process context (syscalls, rdma_cm handlers,
 *   work items).
 * - Completion handlers (softirq) and timers take the socket spinlock. They
 *   run sdp_process() when no process owns the socket, and otherwise set
 *   SDP_F_DEFERRED so that release_sock() runs it (sdp_release_cb). Slot
 *   "done" flags are written only under the spinlock.
 * - rdma_cm handlers hold the id's handler mutex and then take lock_sock():
 *   nothing may wait for a handler (rdma_destroy_id, rdma_connect,
 *   rdma_lock_handler, rdma_listen: a wildcard listen failing half way
 *   destroys the ids it made) while holding lock_sock().
 * - ssk->id has one owner: whoever takes it with xchg() destroys it.
 * - A listener's stop (SDP_F_STOPPING) and listen() of a closed socket
 *   (SDP_F_ARMING) drop lock_sock() midway, where TCP holds it throughout:
 *   connect(), listen() and shutdown() wait for them (sdp_lock_settled()).
 */

extern int sdp_family;

/* IB_DEVICE_NAME_MAX (sdp_conn.c checks it) */
#define SDP_IBDEV_NAME_MAX	64

/* sdp_sock.flags */
enum {
	SDP_F_DEFERRED,		/* completions or timer work wait for release_cb */
	SDP_F_PUSH,		/* send partial data now (cork timer fired) */
	SDP_F_MORE,		/* the last sendmsg() said MSG_MORE */
	SDP_F_SEND_DISCONN,	/* DisConn once the data before it is posted */
	SDP_F_RCVD_DISCONN,	/* the peer's DisConn arrived */
	SDP_F_FIN_TIMEOUT,	/* an orphan lingered too long */
	SDP_F_KEEPALIVE,	/* the keepalive timer fired */
	SDP_F_TX_TIMEOUT,	/* the send progress timer fired */
	SDP_F_CM_GONE,		/* the QP was disconnected (by us or the peer) */
	SDP_F_DESTROYED,	/* sdp_destroy() ran */
	SDP_F_STOPPING,		/* a listener is dropping its children */
	SDP_F_SWITCHING,	/* becoming the native socket (sdp_fb_start) */
	SDP_F_DEFER_ACCEPT,	/* established child waits for data (TCP_DEFER_ACCEPT) */
	SDP_F_PEER_UP,		/* a child's peer disconnected: it had connected */
	SDP_F_CREDIT_DUE,	/* the credit timer fired: announce what is free */
	SDP_F_ARMING,		/* listen() of a closed socket, or re-arm: till rdma_listen()'s end */
};

/* Which of its listener's queues a child is on (sdp_sock.queue). */
enum {
	SDP_Q_NONE,
	SDP_Q_SYN,	/* accepted over RDMA, not established yet */
	SDP_Q_ACCEPT,	/* established, waiting for accept() */
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

	struct rdma_cm_id	*id;
	struct rdma_cm_id	*arming;	/* a listener's id until it listens */
	struct sdp_conn		*conn;
	unsigned long		flags;

	/* listener */
	struct list_head	syn_q;		/* accepted over RDMA, not established */
	struct list_head	accept_q;	/* established, waiting for accept() */
	struct list_head	listen_item;	/* on sdp_listeners: may listen over RDMA */
	u32			rearm_gen;	/* the last re-arm pass that saw it */
	u32			syn_count;	/* children on syn_q */

	/* child of a listener (holds a reference on it for life) */
	struct sdp_sock		*parent;
	struct list_head	child;
	int			queue;		/* SDP_Q_* */
	struct sdp_hh		peer_hh;	/* the Hello it came with */
	struct delayed_work	accept_work;	/* TCP_DEFER_ACCEPT: data came or time is up */
	struct delayed_work	syn_work;	/* not established in time: dropped */
	struct list_head	half_open_item;	/* on its namespace's half_open */
	unsigned long		syn_stamp;	/* jiffies: it joined syn_q */
	u32			promised;	/* the refused client told of its end (hash), 0 */

	/* connection */
	u32			transport;	/* enum sdp_transport */
	u32			fb_reason;	/* enum sdp_fallback_reason */
	int			fb_err;		/* native error mirrored in sk_err */
	struct sockaddr_storage	fb_addr;	/* connect()'s address, for TCP */
	int			fb_addrlen;
	struct timer_list	conn_timer;	/* bounds the RDMA attempt */
	struct work_struct	fb_work;
	struct delayed_work	retry_work;	/* after a busy listener's refusal */
	u8			syn_retries;	/* busy refusals so far (saturates) */
	unsigned long		syn_deadline;	/* jiffies: TCP's connect() would fail */
	unsigned long		syn_sent;	/* jiffies: this attempt's request left */
	struct sdp_policy	*policy;	/* SDP_POLICY, or NULL: SDP always */
	bool			family_fixed;	/* SDP_FAMILY was set */
	void			(*tcp_error_report)(struct sock *sk);
	/* a listener's native socket: its own callbacks, TCP's (fallback) */
	struct sock		*fb_listen_sk;
	void			(*tcp_state_change)(struct sock *sk);
	void			(*tcp_data_ready)(struct sock *sk);
	void			(*tcp_write_space)(struct sock *sk);
	struct sockaddr_storage	saddr;		/* as rdma_cm saw them */
	struct sockaddr_storage	daddr;
	struct work_struct	teardown_work;
	struct timer_list	cork_timer;
	struct timer_list	credit_timer;	/* a lone free buffer, held back */
	struct timer_list	fin_timer;	/* keepalive: sdp_ka_timer() */
	unsigned long		rx_stamp;	/* jiffies of the last message in */
	struct timer_list	tx_timer;	/* bounds a send's progress */
	unsigned long		tx_stamp;	/* since when it waits, or progressed */
	bool			tx_waiting;
	char			ibdev[SDP_IBDEV_NAME_MAX];

	/*
	 * SOL_TCP options as the data path applies them: from the shadow,
	 * which setsockopt() refreshes from the native socket and kernel
	 * users' tcp_sock_set_*() write directly.
	 */
	bool			nodelay;
	bool			cork;
	u32			notsent_lowat;
	u32			user_timeout;	/* TCP_USER_TIMEOUT, ms */
	u32			keepidle;	/* TCP_KEEPIDLE, jiffies (0: sysctl) */

	/* TCP_INFO's RTT: from post to completion of our sends, in us */
	u32			srtt_us;
	u32			rttvar_us;
	u32			min_rtt_us;

	/*
	 * Urgent data (TCP's urg_data, urg_seq): the last byte of a message
	 * flagged SDP_OOB_PRES. Stream positions count payload bytes since
	 * the connection started; the byte read stays in the stream.
	 */
	u32			rcv_nxt;	/* bytes received */
	u32			urg_seq;	/* where the urgent byte is */
	u16			urg_data;	/* SDP_URG_*, and the byte when valid */

	/* read without the socket lock (poll, ioctl): kept by sdp_update_counts */
	u32			rx_avail;	/* bytes readable */
	bool			rx_mark;	/* the next is the urgent byte */
	bool			rx_full;	/* nothing more can come till a read */
	u32			tx_free_slots;	/* send buffers free */
	u32			tx_unsent;	/* bytes not yet posted */
	u32			tx_unacked;	/* bytes not yet completed */

	struct sdp_stats_sock	stats;
	struct list_head	diag_node;	/* on sdp_diag.c's list of all */
};

/* sdp_sock.urg_data, as TCP's */
#define SDP_URG_VALID	0x0100	/* the byte is in the low 8 bits */
#define SDP_URG_NOTYET	0x0200	/* announced (SDP_OOB_PEND), not arrived */
#define SDP_URG_READ	0x0400	/* read with MSG_OOB */

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

/* rdma_cm wants IPv4 destinations as sockaddr_in. */
static inline void sdp_addr_unmap(struct sockaddr_storage *addr)
{
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)addr;
	struct sockaddr_in sin = { .sin_family = AF_INET };

	if (addr->ss_family != AF_INET6 || !ipv6_addr_v4mapped(&sin6->sin6_addr))
		return;
	sin.sin_port = sin6->sin6_port;
	sin.sin_addr.s_addr = sin6->sin6_addr.s6_addr32[3];
	memset(addr, 0, sizeof(*addr));
	memcpy(addr, &sin, sizeof(sin));
}

/* A connection that carries data: established or half closed. */
static inline bool sdp_can_send_state(const struct sock *sk)
{
	return (1 << sk->sk_state) & (TCPF_ESTABLISHED | TCPF_CLOSE_WAIT);
}

/* Fell back: every call goes to the native TCP socket. */
static inline bool sdp_fb(const struct sdp_sock *ssk)
{
	return READ_ONCE(ssk->transport) == SDP_TRANSPORT_TCP;
}

/*
 * tcp_epollin_ready(): an urgent byte at the mark counts only inline. Short
 * of SO_RCVLOWAT, readable when the ring is full (tcp_rmem_pressure()):
 * nothing more comes until the reader makes room.
 */
static inline bool sdp_readable(const struct sock *sk, int target)
{
	const struct sdp_sock *ssk = sdp_sk(sk);
	u32 avail = READ_ONCE(ssk->rx_avail);
	int mark = READ_ONCE(ssk->rx_mark) && !sock_flag(sk, SOCK_URGINLINE);

	return avail >= target + mark || (READ_ONCE(ssk->rx_full) && avail > mark);
}

/* Has the urgent byte arrived, and does it stand at @seq? */
static inline bool sdp_urg_at(const struct sdp_sock *ssk, u32 seq)
{
	return (ssk->urg_data & (SDP_URG_VALID | SDP_URG_READ)) &&
	       ssk->urg_seq == seq;
}

/* sdp_data.c */
int sdp_recvmsg(struct socket *sock, struct msghdr *msg, size_t len, int flags);
int sdp_sendmsg(struct socket *sock, struct msghdr *msg, size_t len);
void sdp_splice_eof(struct socket *sock);
bool sdp_writeable(const struct sock *sk);
void sdp_write_space(struct sock *sk);

/* sdp_policy.c */
int sdp_policy_set(struct sdp_sock *ssk, sockptr_t optval, unsigned int optlen);
int sdp_policy_get(struct sdp_sock *ssk, char __user *optval, int __user *optlen);
bool sdp_policy_tcp(const struct sdp_sock *ssk, const struct sockaddr_storage *ss,
		    unsigned int role);

/* af_sdp.c */
extern struct proto sdp_proto;
extern struct proto_ops sdp_proto_ops;
struct sdp_sock *sdp_sk_alloc(struct net *net, struct socket *sock, int kern);
int sdp_tcp_create(struct sdp_sock *ssk, int family, const struct sdp_sock *parent);
void sdp_inherit_sk(struct sdp_sock *child, struct sdp_sock *parent);
void sdp_set_state(struct sock *sk, int state);
void sdp_rdma_reset(struct sdp_sock *ssk);

/* sdp_addr.c */
bool sdp_tcp_fresh(const struct sdp_sock *ssk);
int sdp_addr_from_user(struct sdp_sock *ssk, struct sockaddr *uaddr, int len,
		       struct sockaddr_storage *out, bool for_connect);
int sdp_addr_to_user(struct sdp_sock *ssk, const struct sockaddr_storage *addr,
		     struct sockaddr *uaddr);

/* sdp_listen.c */
struct sdp_sock *sdp_accept_dequeue(struct sdp_sock *lssk);
void sdp_listen_init(struct sdp_sock *ssk);
void sdp_child_drop(struct sdp_sock *child, int err);
void sdp_child_ended(struct sdp_sock *child, struct sdp_sock *lssk);
void sdp_listen_stop(struct sdp_sock *lssk);
void sdp_listener_add(struct sdp_sock *lssk);

/* Listening, and not being stopped (sdp_listen_stop() drops the lock). */
static inline bool sdp_listening(const struct sdp_sock *lssk)
{
	return lssk->sk.sk_state == TCP_LISTEN &&
	       !test_bit(SDP_F_STOPPING, &lssk->flags);
}
bool sdp_reuseport_held(const struct sdp_sock *lssk, int err);
void sdp_listeners_rearm(void);
void sdp_listen_exit(void);

/* sdp_close.c */
void sdp_teardown_init(struct sdp_sock *ssk);
void sdp_schedule_teardown(struct sdp_sock *ssk);
void sdp_destroy(struct sdp_sock *ssk);
void sdp_close(struct sock *sk, long timeout);
void sdp_disconnect(struct sock *sk);
void sdp_shutdown_send(struct sock *sk);
void sdp_done(struct sock *sk, int err);
void sdp_abort(struct sdp_sock *ssk, int err);
void sdp_conn_error(struct sdp_sock *ssk, int err, int mib);
void sdp_fin_timer(struct timer_list *t);
void sdp_peer_disconn(struct sdp_sock *ssk);
void sdp_disconn_sent(struct sdp_sock *ssk);

/* sdp_sockopt.c */
int sdp_setsockopt(struct socket *sock, int level, int optname,
		   sockptr_t optval, unsigned int optlen);
int sdp_getsockopt(struct socket *sock, int level, int optname,
		   char __user *optval, int __user *optlen);
void sdp_tcp_sync(struct sdp_sock *ssk);
void sdp_tcp_inherit(struct sdp_sock *child, const struct sdp_sock *parent);
void sdp_opts_apply(struct sdp_sock *ssk);
void sdp_tcp_refresh(struct sdp_sock *ssk);
void sdp_fill_info(const struct sdp_sock *ssk, struct sdp_info *info);

/* sdp_diag.c */
void sdp_diag_add(struct sdp_sock *ssk);
void sdp_diag_del(struct sdp_sock *ssk);
int sdp_diag_init(void);
void sdp_diag_exit(void);

/* sdp_debug.c */
extern u32 sdp_inject_warn;
void sdp_debug_init(void);
void sdp_debug_exit(void);

/* Where the tests make an allocation fail (debugfs sdp/fail/). */
enum sdp_fault {
	SDP_FAULT_SOCK,		/* an SDP socket */
	SDP_FAULT_TCP,		/* its native TCP socket */
	SDP_FAULT_CM_ID,	/* an rdma_cm id */
	SDP_FAULT_ACCEPT,	/* a listener's child's connection, as a whole */
	SDP_FAULT_CONN,		/* a connection's state */
	SDP_FAULT_CQ,
	SDP_FAULT_QP,
	SDP_FAULT_RINGS,	/* the rings' slot arrays */
	SDP_FAULT_RX_BUF,	/* a receive buffer */
	SDP_FAULT_TX_BUF,	/* a send buffer */
	SDP_FAULT_KMEM_BUF,	/* a buffer charged to the cgroup only */
	SDP_FAULT_MAX
};

extern atomic_t sdp_faults[SDP_FAULT_MAX];

/* Should this allocation at @site fail? Once per count armed. */
static inline bool sdp_fault(enum sdp_fault site)
{
	return unlikely(atomic_read(&sdp_faults[site])) &&
	       atomic_add_unless(&sdp_faults[site], -1, 0);
}

#endif /* _NET_SDP_SOCK_H */
