/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sockets Direct Protocol: what differs between the kernels it builds for,
 * Debian 12's 6.1 and 6.12. The module is written against the newer
 * interfaces; each entry gives 6.1 that shape. Nothing else tests versions.
 */
#ifndef _NET_SDP_COMPAT_H
#define _NET_SDP_COMPAT_H

#include <linux/version.h>
#include <net/net_namespace.h>

/* 6.6: net sysctl tables are registered with their number of entries. */
static inline struct ctl_table_header *
sdp_register_net_sysctl(struct net *net, const char *path,
			struct ctl_table *table, size_t entries)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 6, 0)
	return register_net_sysctl_sz(net, path, table, entries);
#else
	/* 6.1 reads up to the empty entry that ends the table. */
	return register_net_sysctl(net, path, table);
#endif
}

#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 10, 0)
/* 6.10: proto_ops.accept takes its flags and kern in struct proto_accept_arg. */
struct proto_accept_arg {
	int	flags;
	bool	kern;
};

/* Defines fn##_op, 6.1's proto_ops.accept, calling @fn (6.10's shape). */
#define SDP_DEFINE_ACCEPT_OP(fn)					\
static int fn##_op(struct socket *sock, struct socket *newsock,		\
		   int flags, bool kern)				\
{									\
	struct proto_accept_arg arg = { .flags = flags, .kern = kern };	\
									\
	return fn(sock, newsock, &arg);					\
}

#define SDP_ACCEPT_OP(fn)	fn##_op
#else
#define SDP_DEFINE_ACCEPT_OP(fn)
#define SDP_ACCEPT_OP(fn)	fn
#endif

#endif /* _NET_SDP_COMPAT_H */
