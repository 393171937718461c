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

#endif /* _NET_SDP_COMPAT_H */
