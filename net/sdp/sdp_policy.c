// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol: per-socket policy (SOL_SDP, SDP_POLICY).
 *
 * The preload shim decides at socket() time from the program's name; the
 * address and port rules of /etc/sdp.conf can only be applied once connect()
 * or listen() knows them, so the shim hands the rules that name selected to
 * the socket and they are applied here. A rule that says TCP makes the
 * socket fall back with SDP_FB_POLICY, as net.sdp.enabled=0 does.
 */
#include <linux/in.h>
#include <linux/in6.h>
#include <net/ipv6.h>

#include "sdp_sock.h"

static bool sdp_rule_valid(const struct sdp_policy_rule *r)
{
	if (r->use != SDP_USE_SDP && r->use != SDP_USE_TCP)
		return false;
	if (!r->roles || r->roles & ~(SDP_ROLE_LISTEN | SDP_ROLE_CONNECT))
		return false;
	if (r->port_lo > r->port_hi)
		return false;
	switch (r->family) {
	case 0:
		return !r->prefix;
	case AF_INET:
		return r->prefix <= 32;
	case AF_INET6:
		return r->prefix <= 128;
	}
	return false;
}

int sdp_policy_set(struct sdp_sock *ssk, sockptr_t optval, unsigned int optlen)
{
	struct sdp_policy hdr, *p;
	size_t size;
	u32 i;

	if (optlen < sizeof(hdr))
		return -EINVAL;
	if (copy_from_sockptr(&hdr, optval, sizeof(hdr)))
		return -EFAULT;
	if (hdr.count > SDP_POLICY_MAX_RULES ||
	    (hdr.dflt != SDP_USE_SDP && hdr.dflt != SDP_USE_TCP))
		return -EINVAL;
	size = struct_size(p, rules, hdr.count);
	if (optlen != size)
		return -EINVAL;
	p = kmalloc(size, GFP_KERNEL_ACCOUNT);
	if (!p)
		return -ENOMEM;
	if (copy_from_sockptr(p, optval, size)) {
		kfree(p);
		return -EFAULT;
	}
	/* The header again: user memory may have changed in between. */
	p->count = hdr.count;
	p->dflt = hdr.dflt;
	for (i = 0; i < p->count; i++) {
		if (!sdp_rule_valid(&p->rules[i])) {
			kfree(p);
			return -EINVAL;
		}
	}
	lock_sock(&ssk->sk);
	swap(ssk->policy, p);
	release_sock(&ssk->sk);
	kfree(p);
	return 0;
}

int sdp_policy_get(struct sdp_sock *ssk, char __user *optval, int __user *optlen)
{
	struct sdp_policy none = { .dflt = SDP_USE_SDP };
	const struct sdp_policy *p;
	int len, err = 0;

	if (get_user(len, optlen))
		return -EFAULT;
	if (len < 0)
		return -EINVAL;
	lock_sock(&ssk->sk);
	p = ssk->policy ? : &none;
	len = min_t(size_t, len, struct_size(p, rules, p->count));
	if (put_user(len, optlen) || copy_to_user(optval, p, len))
		err = -EFAULT;
	release_sock(&ssk->sk);
	return err;
}

static bool sdp_prefix_match(const u8 *a, const u8 *b, unsigned int bits)
{
	unsigned int bytes = bits / 8, rest = bits % 8;

	if (memcmp(a, b, bytes))
		return false;
	return !rest || !((a[bytes] ^ b[bytes]) & (0xff << (8 - rest)));
}

static bool sdp_rule_match(const struct sdp_policy_rule *r, int family,
			   const u8 *addr, u16 port)
{
	if (port < r->port_lo || port > r->port_hi)
		return false;
	if (!r->family)
		return true;
	return r->family == family && sdp_prefix_match(r->addr, addr, r->prefix);
}

/*
 * Does the policy send @role (SDP_ROLE_*) at @ss to TCP? A v4-mapped IPv6
 * address is matched as the IPv4 address it is. Under the socket lock.
 */
bool sdp_policy_tcp(const struct sdp_sock *ssk, const struct sockaddr_storage *ss,
		    unsigned int role)
{
	const struct sdp_policy *p = ssk->policy;
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)ss;
	const struct sockaddr_in *sin = (const struct sockaddr_in *)ss;
	int family = ss->ss_family;
	const u8 *addr;
	u16 port;
	u32 i;

	if (!p)
		return false;
	if (family == AF_INET) {
		addr = (const u8 *)&sin->sin_addr;
		port = ntohs(sin->sin_port);
	} else {
		addr = sin6->sin6_addr.s6_addr;
		port = ntohs(sin6->sin6_port);
		if (ipv6_addr_v4mapped(&sin6->sin6_addr)) {
			family = AF_INET;
			addr += 12;
		}
	}
	for (i = 0; i < p->count; i++) {
		const struct sdp_policy_rule *r = &p->rules[i];

		if ((r->roles & role) && sdp_rule_match(r, family, addr, port))
			return r->use == SDP_USE_TCP;
	}
	return p->dflt == SDP_USE_TCP;
}
