/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sockets Direct Protocol: the connection, as the socket layer calls it.
 *
 * struct sdp_conn is the transport's object: the rdma_cm id, the QP, CQ and
 * rings, credits and sequence numbers, the peer's Hello, the data engine's
 * timers. Every socket has one from sdp_conn_alloc() to sdp_conn_free()
 * (the socket's destructor); its RDMA resources come and go within it
 * (sdp_conn_release()). Its fields are the transport's, but for the view at
 * its head, which the socket reads without locks (poll(), ioctl(), the
 * waits' wake conditions). The connection knows its socket only as a
 * struct sock (locking, wake-ups, memory accounting) and reports to it
 * through struct sdp_upcalls.
 */
#ifndef _NET_SDP_CONN_H
#define _NET_SDP_CONN_H

#include <linux/in.h>
#include <linux/percpu-defs.h>
#include <linux/percpu_counter.h>
#include <linux/socket.h>
#include <linux/types.h>
#include <net/ipv6.h>

#include "sdp_stats.h"

struct msghdr;
struct net_device;
struct rdma_cm_id;
struct sdp_conn;
struct sdp_info;
struct sock;
struct tcp_info;
struct workqueue_struct;

/* sdp_conn_view.urg_data, as TCP's urg_data */
#define SDP_URG_VALID	0x0100	/* the byte is in the low 8 bits */
#define SDP_URG_NOTYET	0x0200	/* announced (SDP_OOB_PEND), not arrived */
#define SDP_URG_READ	0x0400	/* read with MSG_OOB */

/*
 * What the socket reads of its connection without a lock; the transport
 * writes it (WRITE_ONCE) wherever the state behind it changes, so that it is
 * current when a waiter is woken.
 */
struct sdp_conn_view {
	u32			rx_avail;	/* bytes readable */
	bool			rx_mark;	/* the next is the urgent byte */
	bool			rx_full;	/* nothing more can come till a read */
	bool			live;		/* it has RDMA resources */
	u16			urg_data;	/* SDP_URG_*, the byte when valid */
	u32			tx_free_slots;	/* send buffers free */
	u32			tx_unsent;	/* bytes not yet posted */
	u32			tx_unacked;	/* bytes not yet completed */
	bool			zc_room;	/* a MSG_ZEROCOPY send may queue behind those queued */
	struct sdp_stats_sock	stats;
};

/* The view is the head of the opaque struct sdp_conn (sdp_rdma.h asserts it). */
static inline const struct sdp_conn_view *sdp_conn_view(const struct sdp_conn *c)
{
	return (const struct sdp_conn_view *)c;
}

/* rdma_cm wants IPv4 addresses as sockaddr_in, and gives them so. */
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

/* What the socket layer says of a connection request (sdp_req.verdict). */
enum sdp_verdict {
	SDP_VERDICT_IGNORE,	/* not for this listener: refused as by nobody */
	SDP_VERDICT_BAD_HELLO,	/* the Hello was refused (sdp_req.bad_hello) */
	SDP_VERDICT_BUSY,	/* no room: retry after sdp_req.retry_ms */
	SDP_VERDICT_NOMEM,	/* no child could be had */
};

/* A connection request to a listener, for the socket layer to decide on. */
struct sdp_req {
	struct rdma_cm_id	*id;		/* the transport's, opaque here */
	const void		*hello;		/* the peer's Hello, checked or not */
	struct sockaddr_storage	local;		/* unmapped: IPv4 as sockaddr_in */
	struct sockaddr_storage	peer;
	int			ifindex;	/* the netdev it came on */
	u32			who;		/* the client, hashed: never 0 */
	bool			bad_hello;	/* the Hello is not one we take */
	/* the socket's answer when it takes no child */
	u8			verdict;	/* enum sdp_verdict */
	u32			retry_ms;	/* SDP_VERDICT_BUSY: when a place frees, 0 */
};

/*
 * What the connection reports to its socket, and the few questions it
 * asks. The socket layer fills this in (af_sdp.c) and hands it over at
 * sdp_transport_init(); the transport calls nothing else of the socket
 * layer (scripts/layers checks the objects). Called with the socket locked
 * (or its spinlock held, from completions) unless said otherwise.
 */
struct sdp_upcalls {
	/* the connection is up: the socket is ESTABLISHED over RDMA */
	void (*established)(struct sock *sk);
	/* it ended: @err is what the socket reports, 0 an orderly end */
	void (*done)(struct sock *sk, int err);
	/* a fault counted in SDP_MIB @mib: reset with @err */
	void (*error)(struct sock *sk, int err, int mib);
	/* its device went away: reset, unless it no longer carries a connection */
	void (*lost)(struct sock *sk);
	/* the peer's DisConn arrived; ours completed */
	void (*peer_disconn)(struct sock *sk);
	void (*disconn_sent)(struct sock *sk);
	/* bytes came to read (the view is current) */
	void (*data_ready)(struct sock *sk);
	/* RDMA is not possible (enum sdp_fallback_reason): TCP, or fail */
	void (*fallback)(struct sock *sk, int reason);
	/* a busy listener refused us, saying a place frees in @retry_ms (0:
	 * not known); the refusal took @took jiffies */
	void (*busy)(struct sock *sk, u32 retry_ms, unsigned long took);
	/* a listener still listens (it drops its lock while it stops) */
	bool (*listening)(const struct sock *sk);
	/*
	 * Unlocked: a request came to the listener @lsk. The child's
	 * connection, having taken the request (sdp_conn_take_req()), or NULL
	 * with req->verdict set.
	 */
	struct sdp_conn *(*request)(struct sock *lsk, struct sdp_req *req);
	/* unlocked: a listener's child is established, or failed (@err) */
	void (*child_established)(struct sock *sk);
	void (*child_failed)(struct sock *sk, int err);
	/* TCP_USER_TIMEOUT in ms, read as it is now (kernel users set it unlocked) */
	u32 (*user_timeout)(const struct sock *sk);
	/* unlocked, no socket: a device came, listeners without one try again */
	void (*rearm)(void);
};

/* sdp_dev.c: the module's work items (rdma_cm retries, teardowns) run on it */
extern struct workqueue_struct *sdp_wq;
int sdp_transport_init(const struct sdp_upcalls *up);
void sdp_transport_exit(void);
bool sdp_dev_on_netdev(struct net_device *dev);

/* sdp_conn.c: the socket memory the rings charge (struct proto sdp_proto) */
extern atomic_long_t sdp_memory_allocated;
DECLARE_PER_CPU(int, sdp_memory_per_cpu_fw_alloc);
extern unsigned long sdp_memory_pressure;
extern struct percpu_counter sdp_sockets_allocated;
extern long sdp_sysctl_mem[3];
extern int sdp_sysctl_rmem[3], sdp_sysctl_wmem[3];
void sdp_enter_memory_pressure(struct sock *sk);
void sdp_leave_memory_pressure(struct sock *sk);
int sdp_mem_init(void);
void sdp_mem_exit(void);

/* sdp_conn.c: the object and its life */
struct sdp_conn *sdp_conn_alloc(struct sock *sk, gfp_t gfp);
void sdp_conn_free(struct sdp_conn *c);
void sdp_conn_release(struct sdp_conn *c);
void sdp_conn_reset(struct sdp_conn *c);
void sdp_conn_stop(struct sdp_conn *c);
bool sdp_conn_ctrl_busy(const struct sdp_conn *c);
u32 sdp_conn_unread(const struct sdp_conn *c);
u32 sdp_conn_mss(const struct sdp_conn *c);
bool sdp_conn_started(const struct sdp_conn *c);
bool sdp_conn_deferred(const struct sdp_conn *c);
bool sdp_conn_peer_up(const struct sdp_conn *c);
unsigned long sdp_conn_rx_stamp(const struct sdp_conn *c);
const struct sockaddr_storage *sdp_conn_addr(const struct sdp_conn *c, bool peer);
void sdp_conn_info(const struct sdp_conn *c, struct sdp_info *info);
void sdp_conn_tcp_info(const struct sdp_conn *c, struct tcp_info *ti);
void sdp_conn_flush(struct sdp_conn *c);
void sdp_conn_release_cb(struct sdp_conn *c);
void sdp_conn_kick(struct sdp_conn *c);
void sdp_conn_opts(struct sdp_conn *c, bool nodelay, bool cork, bool push, bool rearm);

/* sdp_cma.c: rdma_cm; 0 or a negative errno */
int sdp_cm_new(struct sdp_conn *c, const struct sockaddr_storage *dst,
	       int bound_dev_if, u8 tos);
int sdp_cm_bind(struct sdp_conn *c, const struct sockaddr_storage *src, bool reuse);
int sdp_cm_resolve(struct sdp_conn *c);
int sdp_cm_listen(struct sdp_conn *c, const struct sockaddr_storage *addr,
		  bool afonly, bool reuse, int backlog, bool *listened);
bool sdp_cm_has_id(const struct sdp_conn *c);
void sdp_cm_disconnect(struct sdp_conn *c);
void sdp_cm_destroy(struct sdp_conn *c);
void sdp_conn_take_req(struct sdp_conn *c, const struct sdp_req *req);
void sdp_conn_drop_req(struct sdp_conn *c);

/* sdp_rx.c */
int sdp_conn_read(struct sdp_conn *c, struct msghdr *msg, size_t len,
		  int flags, u32 *peeked);
u32 sdp_conn_read_seq(const struct sdp_conn *c);
bool sdp_conn_urg_at(const struct sdp_conn *c, u32 seq);
void sdp_conn_urg_read(struct sdp_conn *c);
int sdp_conn_inq(const struct sdp_conn *c);
bool sdp_conn_at_mark(const struct sdp_conn *c);

/* sdp_tx.c */
int sdp_conn_write(struct sdp_conn *c, struct msghdr *msg, int flags,
		   size_t *copied);
void sdp_conn_sent(struct sdp_conn *c, int flags);
void sdp_conn_push(struct sdp_conn *c, bool force);
void sdp_conn_splice_eof(struct sdp_conn *c);
void sdp_conn_shutdown(struct sdp_conn *c);
bool sdp_conn_abort(struct sdp_conn *c);
bool sdp_conn_probe(struct sdp_conn *c);

/* sdp_zc.c: a send by SrcAvail; a cancel not answered within this resets */
#define SDP_ZC_CANCEL_MS	5000
int sdp_conn_zc_send(struct sdp_conn *c, struct msghdr *msg, int flags, u32 thresh,
		     struct ubuf_info *uarg);
bool sdp_conn_zc_busy(const struct sdp_conn *c);
bool sdp_conn_zc_room(const struct sdp_conn *c);
void sdp_conn_zc_cancel(struct sdp_conn *c);
void sdp_conn_zc_revoke(struct sdp_conn *c);
/* How a SrcAvail ended (sdp_conn_zc_end()). */
enum sdp_zc_end { SDP_ZC_READ, SDP_ZC_DECLINED, SDP_ZC_ENDED };
size_t sdp_conn_zc_end(struct sdp_conn *c, struct msghdr *msg, int *how);
/*
 * sdp_zr.c: a receive by SinkAvail (the same cancel bound); one no bytes
 * came into for this long is asked back, and the read waits as any other:
 * an idle reader holds no pinned buffer, no memory region
 */
#define SDP_ZR_WAIT_MS		200
bool sdp_conn_zr_recv(struct sdp_conn *c, struct msghdr *msg, u32 thresh);
bool sdp_conn_zr_busy(const struct sdp_conn *c);
void sdp_conn_zr_cancel(struct sdp_conn *c);
size_t sdp_conn_zr_end(struct sdp_conn *c, struct msghdr *msg);

#endif /* _NET_SDP_CONN_H */
