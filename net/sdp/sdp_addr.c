// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol: addresses.
 *
 * An SDP socket speaks the family of its native TCP socket: sockaddr_in or
 * sockaddr_in6 (dual stack, v4-mapped, honouring IPV6_V6ONLY) exactly as TCP
 * would. The native socket starts as AF_INET and becomes AF_INET6 when an
 * IPv6 address arrives before it is bound or connected. Its port is the
 * connection's too: an RDMA connect binds its rdma_cm id to it.
 */
#include <linux/in.h>
#include <linux/in6.h>
#include <net/ipv6.h>
#include <net/inet_sock.h>

#include "sdp_sock.h"

/* The native socket can still change family: nothing bound or connected. */
bool sdp_tcp_fresh(const struct sdp_sock *ssk)
{
	const struct sock *t = ssk->tcp->sk;

	return t->sk_state == TCP_CLOSE && !inet_sk(t)->inet_num &&
	       ssk->sk.sk_state == TCP_CLOSE;
}

/*
 * Copy a user address for the native socket. A family field holding our own
 * family number means AF_INET (OFED compatibility). Returns the length to
 * pass on, or a negative errno. Validation beyond that is left to the
 * native socket (bind) or done here the way TCP's connect does it.
 */
int sdp_addr_from_user(struct sdp_sock *ssk, struct sockaddr *uaddr, int len,
		       struct sockaddr_storage *out, bool for_connect)
{
	int family = ssk->tcp->sk->sk_family;
	int err;

	if (len < (int)sizeof(uaddr->sa_family))
		return -EINVAL;
	len = min_t(int, len, sizeof(*out));
	memset(out, 0, sizeof(*out));
	memcpy(out, uaddr, len);
	if (out->ss_family == sdp_family)
		out->ss_family = AF_INET;

	if (out->ss_family == AF_INET6 && family == AF_INET &&
	    len >= SIN6_LEN_RFC2133 && sdp_tcp_fresh(ssk) && !ssk->opts.family_fixed) {
		err = sdp_tcp_create(ssk, AF_INET6, NULL);
		if (err)
			return err;
		family = AF_INET6;
	}
	if (!for_connect)
		return len;

	/*
	 * tcp_v4_connect() / tcp_v6_connect() argument checks. The address
	 * stays in the socket's family: TCP's connect() may get it (fallback).
	 */
	if (family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)out;

		if (len < (int)sizeof(*sin))
			return -EINVAL;
		if (sin->sin_family != AF_INET)
			return -EAFNOSUPPORT;
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)out;

		if (len < SIN6_LEN_RFC2133)
			return -EINVAL;
		if (sin6->sin6_family != AF_INET6)
			return -EAFNOSUPPORT;
		if (ipv6_addr_v4mapped(&sin6->sin6_addr) &&
		    ipv6_only_sock(ssk->tcp->sk))
			return -ENETUNREACH;
	}
	return len;
}

/* Write @addr the way the socket's family shows it; returns its length. */
int sdp_addr_to_user(struct sdp_sock *ssk, const struct sockaddr_storage *addr,
		     struct sockaddr *uaddr)
{
	const struct sockaddr_in *sin = (const struct sockaddr_in *)addr;
	struct sockaddr_in6 *out6 = (struct sockaddr_in6 *)uaddr;

	if (ssk->tcp->sk->sk_family == AF_INET6) {
		if (addr->ss_family == AF_INET6) {
			memcpy(out6, addr, sizeof(*out6));
		} else {
			memset(out6, 0, sizeof(*out6));
			out6->sin6_family = AF_INET6;
			out6->sin6_port = sin->sin_port;
			ipv6_addr_set_v4mapped(sin->sin_addr.s_addr, &out6->sin6_addr);
		}
		return sizeof(*out6);
	}
	memcpy(uaddr, sin, sizeof(*sin));
	memset(((struct sockaddr_in *)uaddr)->sin_zero, 0, sizeof(sin->sin_zero));
	return sizeof(*sin);
}

/* Ports tried when rdma_cm already holds the one TCP gave us. */
#define SDP_BIND_TRIES		8

/*
 * Bind the connection's id to the address and port the native socket
 * holds (IPv4 unmapped, towards @dst), so that the connection's port is
 * taken in the TCP port space as in rdma_cm's: the two agree, and no TCP
 * socket (or SDP listener) can take a port a connection uses. An unbound
 * socket is bound here; if rdma_cm already has that port (another rdma_cm
 * user, or one of our ids that outlives its native socket), a fresh
 * native socket tries another. rdma_cm says EADDRNOTAVAIL rather than
 * EADDRINUSE when either binding is a wildcard, as ours is.
 */
static int sdp_bind_src(struct sdp_sock *ssk, const struct sockaddr_storage *dst)
{
	bool chosen = inet_sk(ssk->tcp->sk)->inet_num;
	struct sockaddr_storage src;
	int tries, err, family;

	for (tries = 0; tries < SDP_BIND_TRIES; tries++) {
		family = ssk->tcp->sk->sk_family;
		if (!chosen) {
			memset(&src, 0, sizeof(src));
			src.ss_family = family;
			err = kernel_bind(ssk->tcp, (struct sockaddr *)&src,
					  family == AF_INET6 ? sizeof(struct sockaddr_in6) :
							       sizeof(struct sockaddr_in));
			if (err)
				return err;
		}
		err = kernel_getsockname(ssk->tcp, (struct sockaddr *)&src);
		if (err < 0)
			return err;
		sdp_addr_unmap(&src);
		if (src.ss_family != dst->ss_family) {
			/* A dual-stack wildcard bind going to an IPv4 peer. */
			struct sockaddr_in sin = {
				.sin_family = AF_INET,
				.sin_port = ((struct sockaddr_in6 *)&src)->sin6_port,
			};

			memset(&src, 0, sizeof(src));
			memcpy(&src, &sin, sizeof(sin));
		}
		err = sdp_cm_bind(ssk->conn, &src, ssk->sk.sk_reuse);
		if ((err != -EADDRINUSE && err != -EADDRNOTAVAIL) || chosen)
			return err;
		err = sdp_tcp_create(ssk, family, NULL);
		if (err)
			return err;
	}
	return -EADDRINUSE;
}

/*
 * IP_TOS (IPV6_TCLASS towards IPv6), TCP's default 0 included: the traffic
 * class of the RDMA route (sdp_cm_new()).
 */
static u8 sdp_tos(const struct sdp_sock *ssk, int family)
{
	const struct sock *t = ssk->tcp->sk;

	if (family == AF_INET6)
		return READ_ONCE(inet6_sk(t)->tclass);
	return READ_ONCE(inet_sk(t)->tos);
}

/*
 * Start connecting over RDMA to @dst (in the socket's family); the
 * connection's events go on from there. 0, or why it could not start
 * (enum sdp_fallback_reason): memory, or a port rdma_cm's other users hold
 * (sdp_bind_src()), is our own lack, not the destination's, and the
 * negative cache must not learn it.
 */
int sdp_connect_rdma(struct sdp_sock *ssk, const struct sockaddr_storage *dst)
{
	struct sockaddr_storage daddr = *dst;
	int err;

	sdp_addr_unmap(&daddr);
	err = sdp_cm_new(ssk->conn, &daddr, READ_ONCE(ssk->sk.sk_bound_dev_if),
			 sdp_tos(ssk, daddr.ss_family));
	if (err)
		return SDP_FB_RESOURCES;
	err = sdp_bind_src(ssk, &daddr);
	if (!err)
		err = sdp_cm_resolve(ssk->conn);
	if (err == -EADDRINUSE || err == -EADDRNOTAVAIL)
		return SDP_FB_PORT;
	if (err == -ENOMEM)
		return SDP_FB_RESOURCES;
	if (err)
		return SDP_FB_NO_DEVICE;
	SDP_INC_STATS(sock_net(&ssk->sk), SDP_MIB_ACTIVE_OPENS);
	return 0;
}
