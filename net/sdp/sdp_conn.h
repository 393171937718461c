/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sockets Direct Protocol: the RDMA connection under a socket, as the
 * socket layer sees it: set up through rdma_cm, data in and out, what it
 * reports, teardown. Its types stay opaque here; only the transport files
 * (sdp_rdma.h) know QPs, CQs and rings.
 */
#ifndef _NET_SDP_CONN_H
#define _NET_SDP_CONN_H

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

/* sdp_cma.c */
int sdp_cm_connect(struct sdp_sock *ssk, const struct sockaddr_storage *dst);
int sdp_cm_listen(struct sdp_sock *ssk);
void sdp_cm_disconnect(struct sdp_sock *ssk);
void sdp_cm_destroy(struct sdp_sock *ssk);
void sdp_cm_init(struct sdp_sock *ssk);

/* sdp_conn.c */
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

/* sdp_dev.c */
int sdp_dev_init(void);
void sdp_dev_exit(void);
bool sdp_dev_on_netdev(struct net_device *dev);

/* sdp_rx.c */
int sdp_recvmsg(struct socket *sock, struct msghdr *msg, size_t len, int flags);
bool sdp_readable(const struct sock *sk, int target);
int sdp_inq(struct sdp_sock *ssk);
bool sdp_at_mark(const struct sdp_sock *ssk);

/* sdp_tx.c */
void sdp_tx_push(struct sdp_sock *ssk, bool force);
bool sdp_post_abort(struct sdp_sock *ssk);
int sdp_sendmsg(struct socket *sock, struct msghdr *msg, size_t len);
void sdp_splice_eof(struct socket *sock);
bool sdp_writeable(const struct sock *sk);
void sdp_write_space(struct sock *sk);
void sdp_cork_timer(struct timer_list *t);
void sdp_keepalive_reset(struct sdp_sock *ssk);
void sdp_keepalive_rearm(struct sdp_sock *ssk);
void sdp_keepalive(struct sdp_sock *ssk);
void sdp_set_keepalive(struct sock *sk, int on);
void sdp_keepalive_timer(struct timer_list *t);
void sdp_tx_watch(struct sdp_sock *ssk, bool rearm);
void sdp_tx_timer(struct timer_list *t);

#endif /* _NET_SDP_CONN_H */
