/* SPDX-License-Identifier: GPL-2.0 */
/* The sdp module's sock_diag, read from userspace (sdpstat, the selftests). */
#ifndef SDP_DIAG_H
#define SDP_DIAG_H

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>

#include "sdp_family.h"

/* One socket as a dump reports it. */
struct sdp_diag_row {
	struct sdp_diag_msg	m;
	struct sdp_info		info;
	int			info_len;	/* 0: SDP_DIAG_INFO not sent */
	int			shutdown;	/* -1: SDP_DIAG_SHUTDOWN not sent */
};

/*
 * A netlink socket with a dump of every SDP socket matching @req (its
 * family and extensions are set here) asked for: the fd, or -errno.
 */
static inline int sdp_diag_open(const struct sdp_diag_req *req)
{
	struct {
		struct nlmsghdr nlh;
		struct sdp_diag_req req;
	} q = {
		.nlh.nlmsg_len = sizeof(q),
		.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY,
		.nlh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
	};
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG), err;

	if (fd < 0)
		return -errno;
	if (req)
		q.req = *req;
	q.req.sdiag_family = sdp_family();
	q.req.sdiag_ext = 1 << (SDP_DIAG_INFO - 1) | 1 << (SDP_DIAG_SHUTDOWN - 1);
	if (send(fd, &q, sizeof(q), 0) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

/* One reply message into @r: 0, or -EBADMSG if it is malformed. */
static inline int sdp_diag_parse(const struct nlmsghdr *h, struct sdp_diag_row *r)
{
	const struct nlattr *a;
	int rest;

	if (h->nlmsg_len < NLMSG_LENGTH(sizeof(r->m)))
		return -EBADMSG;
	memset(r, 0, sizeof(*r));
	r->shutdown = -1;
	memcpy(&r->m, NLMSG_DATA(h), sizeof(r->m));
	a = (const void *)((const char *)NLMSG_DATA(h) + NLMSG_ALIGN(sizeof(r->m)));
	rest = (int)h->nlmsg_len - (int)NLMSG_LENGTH(NLMSG_ALIGN(sizeof(r->m)));
	while (rest >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= rest) {
		const void *v = (const char *)a + NLA_HDRLEN;
		int vlen = a->nla_len - NLA_HDRLEN;

		switch (a->nla_type & NLA_TYPE_MASK) {
		case SDP_DIAG_INFO:
			r->info_len = vlen;
			memcpy(&r->info, v, vlen < (int)sizeof(r->info) ? vlen : (int)sizeof(r->info));
			break;
		case SDP_DIAG_SHUTDOWN:
			if (vlen >= 1)
				r->shutdown = *(const unsigned char *)v;
			break;
		}
		rest -= NLA_ALIGN(a->nla_len);
		a = (const void *)((const char *)a + NLA_ALIGN(a->nla_len));
	}
	return 0;
}

#endif
