/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sockets Direct Protocol: falling back to the native TCP socket, the
 * policy that decides it and the negative cache that remembers it.
 */
#ifndef _NET_SDP_FALLBACK_H
#define _NET_SDP_FALLBACK_H

#include <linux/types.h>

struct msghdr;
struct sock;
struct sockaddr;
struct sockaddr_storage;
struct socket;
struct sdp_sock;

void sdp_fb_init(struct sdp_sock *ssk);
void sdp_fb_target(struct sdp_sock *ssk, const struct sockaddr_storage *dst, int len);
void sdp_fb_reset(struct sdp_sock *ssk);
void sdp_fb_cancel(struct sdp_sock *ssk);
void sdp_fb_stop(struct sdp_sock *ssk);
void sdp_fb_rearmed(struct sdp_sock *lssk);
void sdp_fb_established(struct sock *sk);
void sdp_fb_busy(struct sock *sk, u32 retry_ms, unsigned long took);
int sdp_fb_reason_now(struct sdp_sock *ssk, const struct sockaddr_storage *dst);
bool sdp_fb_allowed(struct sdp_sock *ssk);
void sdp_fb_attach(struct sdp_sock *ssk);
void sdp_fb_detach(struct sdp_sock *ssk, struct socket *tcp);
void sdp_fb_quiet(struct sdp_sock *ssk);
int sdp_fb_start(struct sdp_sock *ssk, int reason);
void sdp_fb_ready(struct sdp_sock *ssk);
int sdp_fb_errno(int reason);
void sdp_fb_mirror_err(struct sdp_sock *ssk, struct sock *t);
bool sdp_fb_failed(struct sdp_sock *ssk, int reason);
void sdp_fb_or_fail(struct sock *sk, int reason);
void sdp_fb_arm(struct sdp_sock *ssk);
void sdp_fb_sync(struct sdp_sock *ssk);
int sdp_fb_sendmsg(struct sdp_sock *ssk, struct msghdr *msg, size_t len);
int sdp_fb_recvmsg(struct sdp_sock *ssk, struct msghdr *msg, size_t len, int flags);
int sdp_fb_connect(struct socket *sock, struct sockaddr *uaddr, int len, int flags,
		   long timeo);
int sdp_fb_listen(struct sdp_sock *ssk, int backlog);
int sdp_fb_accept(struct sdp_sock *lssk, struct sdp_sock *child, int flags);
bool sdp_fb_pending(const struct sdp_sock *lssk);
void sdp_fb_listener(struct sdp_sock *lssk, int reason);
void sdp_fb_listening(struct sdp_sock *lssk);

#endif /* _NET_SDP_FALLBACK_H */
