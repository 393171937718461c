/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a test leaves behind: the devices' QPs, CQs and memory regions
 * (what `rdma res` counts) and the namespace's SDP sockets (sock_diag),
 * read before and waited for after. Include after sdp_proof.h.
 */
#ifndef SDP_BASELINE_H
#define SDP_BASELINE_H

#include "../../userspace/sdp_diag.h"

/* Objects of one kind (an RDMA_NLDEV_CMD_RES_{QP,CQ,MR}_GET) over every device. */
struct nl_count {
	int n, index[8];
};

static inline void count_dev(void *arg, int type, unsigned int v, const char *s)
{
	struct nl_count *c = arg;

	if (type == RDMA_NLDEV_ATTR_DEV_INDEX && c->n < 8)
		c->index[c->n++] = v;
}

/*
 * A dump's reply holds a table (one nested attribute) of the device's
 * objects, as many as fit in a message: count the table's entries, not
 * the messages, those @keep takes (all if NULL). @s is the table's
 * payload, its header just before it.
 */
static inline void count_table(int *n, int type, const char *s,
			       bool (*keep)(const struct nlattr *e))
{
	const struct nlattr *t = (const void *)(s - NLA_HDRLEN), *e;
	int left;

	if (type != RDMA_NLDEV_ATTR_RES_QP && type != RDMA_NLDEV_ATTR_RES_CQ &&
	    type != RDMA_NLDEV_ATTR_RES_MR && type != RDMA_NLDEV_ATTR_RES_PD)
		return;
	e = (const void *)s;
	left = t->nla_len - NLA_HDRLEN;
	while (sdp_nla_ok(e, left)) {
		if (!keep || keep(e))
			(*n)++;
		left -= NLA_ALIGN(e->nla_len);
		e = (const void *)((const char *)e + NLA_ALIGN(e->nla_len));
	}
}

static inline void count_entries(void *arg, int type, unsigned int v, const char *s)
{
	count_table(arg, type, s, NULL);
}

/* An entry our module made: its kernel owner is "sdp". */
static inline bool sdp_owned(const struct nlattr *e)
{
	const struct nlattr *a = (const void *)((const char *)e + NLA_HDRLEN);
	int in = e->nla_len - NLA_HDRLEN;

	while (sdp_nla_ok(a, in)) {
		if ((a->nla_type & NLA_TYPE_MASK) == RDMA_NLDEV_ATTR_RES_KERN_NAME &&
		    !strncmp((const char *)a + NLA_HDRLEN, "sdp", a->nla_len - NLA_HDRLEN))
			return true;
		in -= NLA_ALIGN(a->nla_len);
		a = (const void *)((const char *)a + NLA_ALIGN(a->nla_len));
	}
	return false;
}

static inline void count_sdp_owned(void *arg, int type, unsigned int v, const char *s)
{
	count_table(arg, type, s, sdp_owned);
}

static inline int rdma_dump_all(int op,
				void (*fn)(void *arg, int type, unsigned int v, const char *s))
{
	struct nl_count devs = {};
	int i, n = 0;

	if (sdp_rdmanl(RDMA_NLDEV_CMD_GET, true, NULL, 0, count_dev, &devs))
		return -1;
	for (i = 0; i < devs.n; i++) {
		char attrs[16];

		sdp_nla_u32(attrs, RDMA_NLDEV_ATTR_DEV_INDEX, devs.index[i]);
		if (sdp_rdmanl(op, true, attrs, NLA_HDRLEN + 4, fn, &n))
			return -1;
	}
	return n;
}

static inline int rdma_objects(int op)
{
	return rdma_dump_all(op, count_entries);
}

/*
 * Until no QP of ours is left (a closed connection's goes after its
 * DisConn exchange and the CM's time-wait), @secs at most: the state a
 * program's baseline is read in.
 */
static inline bool sdp_qps_gone(int secs)
{
	for (int i = 0; i < secs * 10; i++) {
		if (!rdma_dump_all(RDMA_NLDEV_CMD_RES_QP_GET, count_sdp_owned))
			return true;
		usleep(100000);
	}
	return false;
}

/* SDP sockets in this namespace, by sock_diag. */
static inline int sdp_sockets(void)
{
	static char buf[65536];
	struct sdp_diag_req req = { .sdiag_states = ~0u };
	int fd = sdp_diag_open(&req), n = 0, len;

	if (fd < 0)
		return -1;
	while ((len = recv(fd, buf, sizeof(buf), 0)) > 0) {
		struct nlmsghdr *h;

		for (h = (void *)buf; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
			if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR) {
				close(fd);
				return h->nlmsg_type == NLMSG_DONE ? n : -1;
			}
			n++;
		}
	}
	close(fd);
	return -1;
}

struct baseline {
	int qps, cqs, mrs, pds, socks;
};

static inline void baseline_read(struct baseline *b)
{
	b->qps = rdma_objects(RDMA_NLDEV_CMD_RES_QP_GET);
	b->cqs = rdma_objects(RDMA_NLDEV_CMD_RES_CQ_GET);
	b->mrs = rdma_objects(RDMA_NLDEV_CMD_RES_MR_GET);
	b->pds = rdma_objects(RDMA_NLDEV_CMD_RES_PD_GET);
	b->socks = sdp_sockets();
}

/*
 * Everything back to @b; closed connections finish their DisConn or Abort
 * exchange first, so wait up to @secs. The last reading goes to @now.
 * Completion queues are shared and one left unused lingers a second
 * (sdp_cq.c): one counted in @b may be gone since, none may be new; so
 * may a memory region of a connection of before still closing. Each
 * connection has its PD, gone with its QP.
 */
static inline bool baseline_back(const struct baseline *b, struct baseline *now, int secs)
{
	int i;

	for (i = 0; i < secs * 10; i++) {
		baseline_read(now);
		if (now->qps == b->qps && now->cqs <= b->cqs && now->mrs <= b->mrs &&
		    now->pds == b->pds && now->socks == b->socks)
			return true;
		usleep(100000);
	}
	return false;
}

/* What baseline_back() compared, for the log when it fails: TH_LOG(BASELINE_FMT, BASELINE_ARGS(b, now)). */
#define BASELINE_FMT	"QPs %d -> %d, CQs %d -> %d, MRs %d -> %d, PDs %d -> %d, SDP sockets %d -> %d"
#define BASELINE_ARGS(b, now)	(b)->qps, (now)->qps, (b)->cqs, (now)->cqs, (b)->mrs, (now)->mrs, \
				(b)->pds, (now)->pds, (b)->socks, (now)->socks

#endif
