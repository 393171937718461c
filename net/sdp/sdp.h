/* SPDX-License-Identifier: GPL-2.0 */
/* Sockets Direct Protocol: module-internal definitions. */
#ifndef _NET_SDP_H
#define _NET_SDP_H

#include <linux/net.h>
#include <linux/workqueue.h>
#include <net/sock.h>
#include <net/tcp_states.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>
#include <net/netns/generic.h>
#include <linux/sdp.h>

#include "sdp_compat.h"
#include "sdp_proto.h"
#include "sdp_stats.h"

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
 *   rdma_lock_handler) while holding lock_sock().
 * - ssk->id has one owner: whoever takes it with xchg() destroys it.
 */

/* Tunables (module parameters, read when a connection is set up). */
extern unsigned int sdp_buf_size;
extern unsigned int sdp_rx_bufs;
extern unsigned int sdp_tx_bufs;
extern int sdp_family;

#define SDP_CTRL_SLOTS		4
/*
 * Receive buffers posted when a connection starts; the ring grows (doubling)
 * to its full size once the peer has used up its credits. Send buffers are
 * taken when a message is filled and given back when it completes, except
 * for a few kept for the next messages.
 */
#define SDP_RX_START_BUFS	4
#define SDP_TX_KEEP_BUFS	2
#define SDP_CTRL_MSG_MAX	64	/* bytes per control ring slot */
#define SDP_RESOLVE_TIMEOUT_MS	2000
/* Ports tried when rdma_cm already holds the one TCP gave us. */
#define SDP_BIND_TRIES		8
/* rnr_retry_count 7 would retry forever; a peer overrunning us is a bug. */
#define SDP_RNR_RETRY		6
/*
 * A silent peer fails a send after SDP_RETRY retries SDP_ACK_TIMEOUT apart
 * (4.096 us << 20: 4.3 s), some 30 s in all: a link down for seconds is
 * survived, a dead host is noticed. Soft-RoCE reads a retry count of 7
 * as "forever".
 */
#define SDP_RETRY		6
#define SDP_ACK_TIMEOUT		20
/*
 * A send the device neither completes nor fails within twice those retries
 * ends the connection (ETIMEDOUT) when TCP_USER_TIMEOUT is not set: a
 * provider that stalls must not hang its sender.
 */
#define SDP_TX_STALL_MS		60000
/* TCP_CORK and MSG_MORE hold a partial message at most this long (as TCP). */
#define SDP_CORK_TIMEOUT	(HZ / 5)
/* Default net.sdp.recv_poll_us. */
#define SDP_RECV_POLL_US	500
/*
 * Default net.sdp.syn_timeout_ms: an accepted connection whose client never
 * completes it (no RTU) is dropped then, as TCP's SYN-ACK retries end; a
 * real client completes in a round trip.
 */
#define SDP_SYN_TIMEOUT_MS	10000

struct sdp_dev {
	struct list_head	list;		/* on sdp_devices */
	struct ib_device	*ibdev;
	struct ib_pd		*pd;
	struct kref		ref;		/* one per connection, one for the list */
	struct completion	released;
	struct mutex		lock;		/* conns, dead */
	struct list_head	conns;
	bool			dead;
};

struct sdp_sock;

struct sdp_rx_slot {
	struct ib_cqe		cqe;
	struct list_head	node;		/* on rx_posted or rx_ready */
	void			*buf;
	u64			dma;
	u32			len;		/* bytes received, header included */
	u32			off;		/* next unread byte */
	u8			status;		/* enum ib_wc_status */
	bool			done;
};

struct sdp_tx_slot {
	struct ib_cqe		cqe;
	void			*buf;
	u64			dma;
	u32			len;		/* bytes filled, header included */
	u8			status;
	u8			oob;		/* SDP_OOB_PRES: ends in the urgent byte */
	bool			done;
	bool			ctrl;		/* from the control ring */
	u64			stamp;		/* ns: posted at; once done, it took */
};

/* A send buffer kept between messages. */
struct sdp_buf {
	void	*buf;
	u64	dma;
};

/* RDMA state of one connection; exists from QP creation to teardown. */
struct sdp_conn {
	struct sdp_sock		*ssk;
	struct rdma_cm_id	*id;		/* the id the QP belongs to */
	struct sdp_dev		*sdev;
	struct list_head	dev_item;	/* on sdev->conns */
	struct ib_cq		*cq;
	struct ib_qp		*qp;
	u32			lkey;
	u32			max_inline;
	u32			path_mtu;	/* bytes, as rdma_cm set the QP */
	bool			started;	/* the peer's Hello/HelloAck is in */

	/* receive ring: buffers of rcv_size bytes */
	struct sdp_rx_slot	*rx;
	u32			rx_count;	/* slots */
	u32			rx_alloc;	/* of them, with a buffer (the first) */
	bool			rx_starved;	/* the peer ran out of credits */
	u32			rcv_size;
	struct list_head	rx_posted;	/* in posting order */
	struct list_head	rx_ready;	/* data not yet read */
	u32			rx_posted_nr;
	u32			rx_ready_bytes;

	/* send ring: data messages of at most snd_size bytes */
	struct sdp_tx_slot	*tx;
	u32			tx_count;	/* slots */
	u32			tx_kept;	/* slots tx_tail..tx_head hold the others */
	struct sdp_buf		tx_keep[SDP_TX_KEEP_BUFS];
	u32			snd_size;
	u32			tx_head;	/* next slot to fill */
	u32			tx_post;	/* next slot to post */
	u32			tx_tail;	/* oldest posted, not completed */
	u32			tx_queued_bytes;	/* payload filled, not completed */
	u32			tx_unposted_bytes;	/* payload filled, not posted */
	u32			tx_urg;		/* tx_post once the urgent byte is posted */
	bool			tx_urg_pend;	/* ... and it has not been announced */

	/* control ring */
	struct sdp_tx_slot	ctrl[SDP_CTRL_SLOTS];
	void			*ctrl_buf;
	u64			ctrl_dma;
	u32			ctrl_head;
	u32			ctrl_tail;

	struct sdp_seq		seq;		/* sequence numbers and credits */
};

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
};

/* Which of its listener's queues a child is on (sdp_sock.queue). */
enum {
	SDP_Q_NONE,
	SDP_Q_SYN,	/* accepted over RDMA, not established yet */
	SDP_Q_ACCEPT,	/* established, waiting for accept() */
};

/* A destination that recently failed over RDMA (IPv4 as v4-mapped). */
struct sdp_ncache_entry {
	struct in6_addr	addr;
	__be16		port;
	u8		reason;
	unsigned long	expires;
};

#define SDP_NCACHE_SIZE	256

/* Per network namespace: counters, sysctls (net.sdp.*), negative cache. */
struct sdp_net {
	struct sdp_mib __percpu	*mib;
	struct ctl_table_header	*sysctl;
	int			enabled;		/* 0: every socket uses TCP */
	int			rdma_only;		/* 1: never fall back */
	int			connect_timeout_ms;	/* RDMA's first attempt */
	int			ncache_ttl;		/* seconds; 0 disables */
	int			recv_poll_us;		/* spin before sleeping */
	int			syn_timeout_ms;		/* a child's time to establish */
	spinlock_t		ncache_lock;
	struct sdp_ncache_entry	ncache[SDP_NCACHE_SIZE];
};

extern unsigned int sdp_net_id;

static inline struct sdp_net *sdp_net(const struct net *net)
{
	return net_generic(net, sdp_net_id);
}

struct sdp_sock {
	struct sock		sk;	/* must be first */

	/*
	 * The native TCP socket behind this one: it holds the port in the
	 * TCP port space (bind is done on it first), validates and keeps the
	 * SOL_TCP/SOL_IP/SOL_IPV6 options, and its family is the family of the
	 * addresses this socket speaks.
	 */
	struct socket		*tcp;

	struct rdma_cm_id	*id;
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

	/* connection */
	u32			transport;	/* enum sdp_transport */
	u32			fb_reason;	/* enum sdp_fallback_reason */
	int			fb_err;		/* native error mirrored in sk_err */
	struct sockaddr_storage	fb_addr;	/* connect()'s address, for TCP */
	int			fb_addrlen;
	struct timer_list	conn_timer;	/* bounds the RDMA attempt */
	struct work_struct	fb_work;
	struct delayed_work	retry_work;	/* after a busy listener's refusal */
	u8			syn_retries;
	struct sdp_policy	*policy;	/* SDP_POLICY, or NULL: SDP always */
	bool			family_fixed;	/* SDP_FAMILY was set */
	void			(*tcp_error_report)(struct sock *sk);
	struct sockaddr_storage	saddr;		/* as rdma_cm saw them */
	struct sockaddr_storage	daddr;
	struct work_struct	teardown_work;
	struct timer_list	cork_timer;
	struct timer_list	fin_timer;
	struct timer_list	ka_timer;
	unsigned long		rx_stamp;	/* jiffies of the last message in */
	struct timer_list	tx_timer;	/* bounds a send's progress */
	unsigned long		tx_stamp;	/* since when it waits, or progressed */
	bool			tx_waiting;
	char			ibdev[IB_DEVICE_NAME_MAX];

	/* cached SOL_TCP options (the values live in the native socket) */
	bool			nodelay;
	bool			cork;
	u32			notsent_lowat;
	u32			user_timeout;	/* TCP_USER_TIMEOUT, ms */

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
	u32			tx_free_slots;	/* send buffers free */
	u32			tx_unsent;	/* bytes not yet posted */
	u32			tx_unacked;	/* bytes not yet completed */

	struct sdp_stats_sock	stats;
};

/* sdp_sock.urg_data, as TCP's */
#define SDP_URG_VALID	0x0100	/* the byte is in the low 8 bits */
#define SDP_URG_NOTYET	0x0200	/* announced (SDP_OOB_PEND), not arrived */
#define SDP_URG_READ	0x0400	/* read with MSG_OOB */

static inline struct sdp_sock *sdp_sk(const struct sock *sk)
{
	return container_of(sk, struct sdp_sock, sk);
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

/* Where reading stands in the stream: bytes received less those unread. */
static inline u32 sdp_copied_seq(const struct sdp_sock *ssk)
{
	return ssk->rcv_nxt - ssk->conn->rx_ready_bytes;
}

/* Has the urgent byte arrived, and does it stand at @seq? */
static inline bool sdp_urg_at(const struct sdp_sock *ssk, u32 seq)
{
	return (ssk->urg_data & (SDP_URG_VALID | SDP_URG_READ)) &&
	       ssk->urg_seq == seq;
}

/* The next unread byte is the urgent one (so it has arrived, unpassed). */
static inline bool sdp_urg_next(const struct sdp_sock *ssk)
{
	return ssk->conn->rx_ready_bytes && sdp_urg_at(ssk, sdp_copied_seq(ssk));
}

/* Credits the peer has given us now. */
static inline int sdp_tx_credits(const struct sdp_conn *c)
{
	return sdp_seq_tx_credits(&c->seq);
}

/* sdp_policy.c */
int sdp_policy_set(struct sdp_sock *ssk, sockptr_t optval, unsigned int optlen);
int sdp_policy_get(struct sdp_sock *ssk, char __user *optval, int __user *optlen);
bool sdp_policy_tcp(const struct sdp_sock *ssk, const struct sockaddr_storage *ss,
		    unsigned int role);

/* af_sdp.c */
extern struct proto sdp_proto;
extern struct proto_ops sdp_proto_ops;
extern struct workqueue_struct *sdp_wq;
struct sdp_sock *sdp_sk_alloc(struct net *net, struct socket *sock, int kern);
int sdp_tcp_create(struct sdp_sock *ssk, int family, struct socket *opts_from);
int sdp_inherit(struct sdp_sock *child, struct sdp_sock *parent);
void sdp_inherit_sk(struct sdp_sock *child, struct sdp_sock *parent);
void sdp_set_state(struct sock *sk, int state);
void sdp_rdma_reset(struct sdp_sock *ssk);

/* sdp_addr.c */
bool sdp_tcp_fresh(const struct sdp_sock *ssk);
int sdp_addr_from_user(struct sdp_sock *ssk, struct sockaddr *uaddr, int len,
		       struct sockaddr_storage *out, bool for_connect);
int sdp_addr_to_user(struct sdp_sock *ssk, const struct sockaddr_storage *addr,
		     struct sockaddr *uaddr);
void sdp_addr_unmap(struct sockaddr_storage *addr);

/* sdp_cma.c */
int sdp_conn_param(struct rdma_cm_id *id, struct rdma_conn_param *p,
		   const void *data, u8 len);
void sdp_established(struct sdp_sock *ssk, struct rdma_cm_id *id);
int sdp_cm_connect(struct sdp_sock *ssk, const struct sockaddr_storage *dst);
int sdp_cm_listen(struct sdp_sock *ssk);
void sdp_cm_destroy(struct sdp_sock *ssk);
void sdp_cm_init(struct sdp_sock *ssk);

/* sdp_listen.c */
int sdp_cm_req(struct sdp_sock *lssk, struct rdma_cm_id *id,
	       const struct rdma_cm_event *ev);
struct sdp_sock *sdp_accept_dequeue(struct sdp_sock *lssk);
void sdp_passive_established(struct sdp_sock *child);
void sdp_defer_data(struct sdp_sock *child);
void sdp_listen_init(struct sdp_sock *ssk);
void sdp_child_drop(struct sdp_sock *child, int err);
void sdp_listen_stop(struct sdp_sock *lssk);
void sdp_listener_add(struct sdp_sock *lssk);
bool sdp_reuseport_held(const struct sdp_sock *lssk, int err);
void sdp_listeners_rearm(void);
void sdp_listen_exit(void);

/* sdp_conn.c */
int sdp_conn_create(struct sdp_sock *ssk, struct rdma_cm_id *id, u32 rcv_size);
int sdp_conn_start(struct sdp_conn *c, u32 snd_size, u16 peer_bufs);
int sdp_rx_grow(struct sdp_conn *c, u32 n, gfp_t gfp);
int sdp_tx_buf_get(struct sdp_conn *c, struct sdp_tx_slot *s);
void sdp_tx_buf_put(struct sdp_conn *c, struct sdp_tx_slot *s);
u16 sdp_conn_hello_bufs(struct sdp_conn *c);
void sdp_conn_free(struct sdp_sock *ssk);
void sdp_process(struct sdp_sock *ssk);
void __sdp_defer_or_process(struct sdp_sock *ssk);
void sdp_timer_event(struct sdp_sock *ssk, int bit);
void sdp_release_cb(struct sock *sk);
void sdp_flush(struct sdp_sock *ssk);
void sdp_update_counts(struct sdp_sock *ssk);

/* sdp_dev.c */
int sdp_dev_init(void);
void sdp_dev_exit(void);
struct sdp_dev *sdp_dev_get(struct ib_device *ibdev);
void sdp_dev_put(struct sdp_dev *sdev);
int sdp_dev_add_conn(struct sdp_dev *sdev, struct sdp_conn *c);
void sdp_dev_del_conn(struct sdp_conn *c);

/* sdp_rx.c */
void sdp_rx_done(struct ib_cq *cq, struct ib_wc *wc);
int sdp_post_recv(struct sdp_conn *c, struct sdp_rx_slot *slot);
void sdp_rx_reap(struct sdp_sock *ssk);
int sdp_recvmsg(struct socket *sock, struct msghdr *msg, size_t len, int flags);
bool sdp_readable(const struct sock *sk, int target);
int sdp_inq(struct sdp_sock *ssk);

/* sdp_tx.c */
void sdp_tx_done(struct ib_cq *cq, struct ib_wc *wc);
void sdp_tx_reap(struct sdp_sock *ssk);
void sdp_tx_push(struct sdp_sock *ssk, bool force);
bool sdp_post_abort(struct sdp_sock *ssk);
int sdp_sendmsg(struct socket *sock, struct msghdr *msg, size_t len);
void sdp_splice_eof(struct socket *sock);
bool sdp_writeable(const struct sock *sk);
void sdp_write_space(struct sock *sk);
void sdp_cork_timer(struct timer_list *t);
void sdp_keepalive_reset(struct sdp_sock *ssk);
void sdp_keepalive(struct sdp_sock *ssk);
void sdp_set_keepalive(struct sock *sk, int on);
void sdp_keepalive_timer(struct timer_list *t);
void sdp_tx_watch(struct sdp_sock *ssk, bool rearm);
void sdp_tx_timer(struct timer_list *t);

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
void sdp_qp_down(struct sdp_sock *ssk, u8 status);

/* sdp_sockopt.c */
int sdp_setsockopt(struct socket *sock, int level, int optname,
		   sockptr_t optval, unsigned int optlen);
int sdp_getsockopt(struct socket *sock, int level, int optname,
		   char __user *optval, int __user *optlen);
void sdp_tcp_sync(struct sdp_sock *ssk);
void sdp_tcp_copy_opts(struct socket *to, struct socket *from);
void sdp_tcp_refresh(struct sdp_sock *ssk);

/* sdp_fallback.c */
void sdp_fb_init(struct sdp_sock *ssk);
int sdp_fb_reason_now(struct sdp_sock *ssk, const struct sockaddr_storage *dst);
bool sdp_fb_allowed(struct sdp_sock *ssk);
void sdp_fb_attach(struct sdp_sock *ssk);
void sdp_fb_detach(struct sdp_sock *ssk, struct socket *tcp);
int sdp_fb_start(struct sdp_sock *ssk, int reason);
void sdp_fb_ready(struct sdp_sock *ssk);
int sdp_fb_errno(int reason);
void sdp_fb_mirror_err(struct sdp_sock *ssk, struct sock *t);
bool sdp_fb_failed(struct sdp_sock *ssk, int reason);
void sdp_fb_or_fail(struct sdp_sock *ssk, int reason);
void sdp_fb_arm(struct sdp_sock *ssk);
void sdp_fb_sync(struct sdp_sock *ssk);
int sdp_fb_sendmsg(struct sdp_sock *ssk, struct msghdr *msg, size_t len);
int sdp_fb_recvmsg(struct sdp_sock *ssk, struct msghdr *msg, size_t len, int flags);
int sdp_fb_connect(struct socket *sock, struct sockaddr *uaddr, int len, int flags);
int sdp_fb_listen(struct sdp_sock *ssk, int backlog);
int sdp_fb_accept(struct sdp_sock *lssk, struct socket *newsock, int flags, bool kern);
bool sdp_fb_pending(const struct sdp_sock *lssk);
void sdp_fb_listener(struct sdp_sock *lssk, int reason);

/* sdp_debug.c */
extern u32 sdp_inject_warn;
void sdp_debug_init(void);
void sdp_debug_exit(void);

/* sdp_netns.c */
int sdp_netns_init(void);
void sdp_netns_exit(void);

#endif /* _NET_SDP_H */
