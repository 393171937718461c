/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sockets Direct Protocol: what differs between the kernels it builds for,
 * Debian 12's 6.1 and 6.12. The module is written against the newer
 * interfaces; each entry gives 6.1 that shape. Nothing else tests versions.
 */
#ifndef _NET_SDP_COMPAT_H
#define _NET_SDP_COMPAT_H

#include <linux/bvec.h>
#include <linux/memcontrol.h>
#include <linux/net.h>
#include <linux/netdevice.h>
#include <linux/slab.h>
#include <linux/socket.h>
#include <linux/uio.h>
#include <linux/version.h>
#include <net/net_namespace.h>
#include <net/sock.h>

/* 6.10: sk_under_memory_pressure() and its kin have a header of their own. */
#if __has_include(<net/proto_memory.h>)
#include <net/proto_memory.h>
#endif

/* 6.1.70 took in 6.5's MSG_SPLICE_PAGES, bvec_set_page() and splice_eof. */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 1, 70)
#error "sdp needs Linux 6.1.70 or later"
#endif

/* 6.5: no .sendpage; splice and sendfile use .sendmsg with MSG_SPLICE_PAGES. */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 5, 0)
/*
 * 6.1's .sendpage sends its page the way 6.5 does: over an ITER_BVEC with
 * MSG_SPLICE_PAGES, and MSG_MORE where 6.1 says MSG_SENDPAGE_NOTLAST.
 */
static inline ssize_t sdp_sendpage(struct socket *sock, struct page *page,
				   int offset, size_t size, int flags)
{
	struct msghdr msg = {
		.msg_flags = (flags & ~MSG_SENDPAGE_NOTLAST) | MSG_SPLICE_PAGES,
	};
	struct bio_vec bvec;

	if (flags & MSG_SENDPAGE_NOTLAST)
		msg.msg_flags |= MSG_MORE;
	bvec_set_page(&bvec, page, size, offset);
	iov_iter_bvec(&msg.msg_iter, ITER_SOURCE, &bvec, 1, size);
	return sock_sendmsg(sock, &msg);
}

#define SDP_SENDPAGE_OP		.sendpage = sdp_sendpage,
#else
#define SDP_SENDPAGE_OP
#endif

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

/* 6.10: proto_ops.accept gets its flags and kern in struct proto_accept_arg. */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 10, 0)
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

/*
 * 6.2: the core hands SOL_SOCKET options to the family's setsockopt() on a
 * socket with SOCK_CUSTOM_SOCKOPT, as it does for MPTCP; sdp_setsockopt()
 * then sets SO_REUSEPORT, which the core refuses for any family but inet's,
 * and gives it the rest. 6.1 asks MPTCP sockets alone: there the core keeps
 * them all, SO_REUSEPORT fails with EOPNOTSUPP, and SDP_REUSEPORT sets it.
 */
static inline void sdp_sock_own_sockopts(struct socket *sock)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
	set_bit(SOCK_CUSTOM_SOCKOPT, &sock->flags);
#endif
}

/*
 * A MSG_ZEROCOPY send's reference on its notification, given back:
 * @zerocopy false when some of its bytes were copied. 6.10 moved the
 * callback into an ops table.
 */
static inline void sdp_zcopy_complete(struct ubuf_info *uarg, bool zerocopy)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 10, 0)
	uarg->ops->complete(NULL, uarg, zerocopy);
#else
	uarg->callback(NULL, uarg, zerocopy);
#endif
}

/*
 * A child's memory goes to its listener's cgroup: sk_alloc() ran in
 * rdma_cm's worker, and mem_cgroup_sk_alloc() is not exported.
 */
static inline void sdp_memcg_inherit(struct sock *child, const struct sock *parent)
{
#ifdef CONFIG_MEMCG
	if (mem_cgroup_sockets_enabled && parent->sk_memcg && !child->sk_memcg) {
		css_get(&parent->sk_memcg->css);
		child->sk_memcg = parent->sk_memcg;
	}
#endif
}

/*
 * The user memory at @i's head, if it is user memory (a ubuf or an iovec
 * iterator): its address and the bytes left of that segment.
 */
static inline bool sdp_iter_user_seg(const struct iov_iter *i, unsigned long *addr,
				     size_t *len)
{
	/* (an iovec iterator at its end points past its last segment) */
	if (!i->count)
		return false;
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 4, 0)
	if (!iter_is_ubuf(i) && !iter_is_iovec(i))
		return false;
	*addr = (unsigned long)iter_iov_addr(i);
	*len = min(iter_iov_len(i), i->count);
#else
	if (iter_is_ubuf(i)) {
		*addr = (unsigned long)i->ubuf + i->iov_offset;
		*len = i->count;
	} else if (iter_is_iovec(i)) {
		*addr = (unsigned long)i->iov->iov_base + i->iov_offset;
		*len = min(i->count, i->iov->iov_len - i->iov_offset);
	} else {
		return false;
	}
#endif
	return *len > 0;
}

/*
 * 6.10: a device that only holds NAPI contexts comes from
 * alloc_netdev_dummy(); 6.1 initialises one of its caller's.
 */
static inline struct net_device *sdp_alloc_netdev_dummy(void)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 10, 0)
	return alloc_netdev_dummy(0);
#else
	struct net_device *dev = kzalloc(sizeof(*dev), GFP_KERNEL);

	if (dev)
		init_dummy_netdev(dev);
	return dev;
#endif
}

static inline void sdp_free_netdev_dummy(struct net_device *dev)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 10, 0)
	free_netdev(dev);
#else
	kfree(dev);
#endif
}

#endif /* _NET_SDP_COMPAT_H */
