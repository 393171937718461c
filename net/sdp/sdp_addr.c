// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol: addresses.
 *
 * An SDP socket speaks the family of its native TCP socket: sockaddr_in or
 * sockaddr_in6 (dual stack, v4-mapped, honouring IPV6_V6ONLY) exactly as TCP
 * would. The native socket starts as AF_INET and becomes AF_INET6 when an
 * IPv6 address arrives before it is bound or connected.
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
	    len >= SIN6_LEN_RFC2133 && sdp_tcp_fresh(ssk) && !ssk->family_fixed) {
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
