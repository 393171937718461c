/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sockets Direct Protocol: the RDMA connection under a socket, as the
 * socket layer sees it: set up through rdma_cm, data in and out, what it
 * reports, teardown. Its types stay opaque here; only the transport files
 * (sdp_rdma.h) know QPs, CQs and rings.
 */
#ifndef _NET_SDP_CONN_H
#define _NET_SDP_CONN_H

#include <linux/percpu-defs.h>
#include <linux/percpu_counter.h>
#include <linux/types.h>

struct msghdr;
struct net_device;
struct sdp_conn;
struct sdp_info;
struct sdp_sock;
struct sock;
struct sockaddr_storage;
struct socket;
struct tcp_info;
struct timer_list;

/*
 * What the connection needs of its socket: reports of what happened to it,
 * and the few socket services it uses. The socket layer fills this in
 * (af_sdp.c) and hands it over at sdp_dev_init(); the transport calls
 * nothing else of the socket layer (scripts/layers checks the objects).
 */
struct sdp_upcalls {
	/* the connection's state, in TCP's terms */
	void (*state)(struct sock *sk, int state);
	/* it ended: @err is what the socket reports, 0 an orderly end */
	void (*done)(struct sock *sk, int err);
	/* a fault counted in SDP_MIB @mib: reset with @err */
	void (*error)(struct sdp_sock *ssk, int err, int mib);
	/* ended by us, with an Abort to the peer */
	void (*abort)(struct sdp_sock *ssk, int err);
	/* the peer's DisConn arrived; ours completed */
	void (*peer_disconn)(struct sdp_sock *ssk);
	void (*disconn_sent)(struct sdp_sock *ssk);
	/* the data path starts: apply the SOL_TCP options it reads */
	void (*opts)(struct sdp_sock *ssk);
	/* RDMA is not possible (enum sdp_fallback_reason): TCP, or fail */
	void (*fallback)(struct sdp_sock *ssk, int reason);
	/* an attempt started that TCP's connect timeouts bound */
	void (*attempt)(struct sdp_sock *ssk);
	/* a new native socket, so a new port, of @family */
	int (*new_port)(struct sdp_sock *ssk, int family);
	/* a listener's child: created with its settings, or dropped */
	struct sdp_sock *(*child)(struct sdp_sock *lssk);
	void (*destroy)(struct sdp_sock *ssk);
	void (*teardown)(struct sdp_sock *ssk);
};

/* sdp_cma.c */
/* 0, or why RDMA cannot even start (enum sdp_fallback_reason) */
int sdp_cm_connect(struct sdp_sock *ssk, const struct sockaddr_storage *dst);
int sdp_cm_listen(struct sdp_sock *ssk);
void sdp_cm_disconnect(struct sdp_sock *ssk);
void sdp_cm_destroy(struct sdp_sock *ssk);
void sdp_cm_init(struct sdp_sock *ssk);

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
void sdp_conn_free(struct sdp_sock *ssk);
bool sdp_conn_ctrl_busy(const struct sdp_sock *ssk);
u32 sdp_conn_unread(const struct sdp_sock *ssk);
u32 sdp_conn_mss(const struct sdp_sock *ssk);
void sdp_conn_info(const struct sdp_sock *ssk, struct sdp_info *info);
void sdp_conn_tcp_info(const struct sdp_sock *ssk, struct tcp_info *ti);
void sdp_process(struct sdp_sock *ssk);
void __sdp_defer_or_process(struct sdp_sock *ssk);
void sdp_timer_event(struct sdp_sock *ssk, int bit);
void sdp_release_cb(struct sock *sk);
void sdp_flush(struct sdp_sock *ssk);
void sdp_update_counts(struct sdp_sock *ssk);

/* sdp_dev.c: the module's work items (rdma_cm retries, teardowns) run on it */
extern struct workqueue_struct *sdp_wq;
int sdp_dev_init(const struct sdp_upcalls *up);
void sdp_dev_exit(void);
bool sdp_dev_on_netdev(struct net_device *dev);

/* sdp_rx.c */
int sdp_conn_read(struct sdp_sock *ssk, struct msghdr *msg, size_t len,
		  int flags, u32 *peeked);
u32 sdp_conn_read_seq(const struct sdp_sock *ssk);
int sdp_inq(struct sdp_sock *ssk);
bool sdp_at_mark(const struct sdp_sock *ssk);

/* sdp_tx.c */
void sdp_tx_push(struct sdp_sock *ssk, bool force);
bool sdp_post_abort(struct sdp_sock *ssk);
int sdp_conn_write(struct sdp_sock *ssk, struct msghdr *msg, int flags,
		   size_t *copied);
void sdp_conn_sent(struct sdp_sock *ssk, int flags);
void sdp_cork_timer(struct timer_list *t);
void sdp_credit_timer(struct timer_list *t);
void sdp_keepalive_reset(struct sdp_sock *ssk);
void sdp_keepalive_rearm(struct sdp_sock *ssk);
void sdp_keepalive(struct sdp_sock *ssk);
void sdp_set_keepalive(struct sock *sk, int on);
void sdp_keepalive_timer(struct timer_list *t);
void sdp_tx_watch(struct sdp_sock *ssk, bool rearm);
void sdp_tx_timer(struct timer_list *t);

#endif /* _NET_SDP_CONN_H */
