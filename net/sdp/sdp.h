/* SPDX-License-Identifier: GPL-2.0 */
/* Sockets Direct Protocol: module-internal definitions. */
#ifndef _NET_SDP_H
#define _NET_SDP_H

#include <net/sock.h>

struct sdp_sock {
	struct sock	sk;	/* must be first */
};

static inline struct sdp_sock *sdp_sk(const struct sock *sk)
{
	return container_of(sk, struct sdp_sock, sk);
}

#endif /* _NET_SDP_H */
