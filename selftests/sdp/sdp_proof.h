/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a test case's connection ran over, checked and then printed as the
 * "# PROOF <class> ..." line that run_kselftest.sh counts (a passing case
 * without one fails). Include after kselftest_harness.h.
 *
 * rdma: both ends are SDP sockets on RDMA, connected to each other (each
 * QP's remote QP is the other's); every payload byte one end counted as
 * sent the other counted as received; every packet one QP sent the other
 * received (rdma_cm gives the peer's send PSN as our receive PSN, so the
 * two are equal once nothing is in flight: `rdma res show qp`, i.e. the
 * device, not the module); and the packets match the messages: at least
 * one per message and per path MTU of bytes the other end took in, at most
 * one per message plus one per MTU of what this end posted (a message
 * posted as the connection goes down is flushed, never sent).
 * fallback: both ends on their native TCP sockets, no byte over RDMA.
 * tcp: an AF_INET socket (the oracle).
 */
#ifndef SDP_PROOF_H
#define SDP_PROOF_H

#include <stdint.h>
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>
#include "sdp_util.h"

#define SDP_BSDH_LEN	16
#define SDP_PSN_MASK	0xffffff

struct sdp_qp_state {
	unsigned int rqpn, sq_psn, rq_psn;
};

/* Is there a whole attribute at @a, with @left bytes to go? */
static inline bool sdp_nla_ok(const struct nlattr *a, int left)
{
	return left >= (int)sizeof(*a) && a->nla_len >= sizeof(*a) && a->nla_len <= left;
}

/*
 * The RDMA netlink interface (what `rdma res show qp` reads), spoken
 * directly: a test reads it several times per case, and a fork+exec costs
 * a good part of a second under emulation. Calls @fn on each u32 attribute
 * of each reply message, and on the end of each message (type -1); stops
 * at the end of a dump or after one reply. 0, or -1 on error.
 */
static inline int sdp_rdmanl(int op, bool dump, const void *attrs, int alen,
			     void (*fn)(void *arg, int type, unsigned int v, const char *s),
			     void *arg)
{
	struct {
		struct nlmsghdr h;
		char attrs[64];
	} req = {};
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	static char buf[32768];
	int fd, len, ret = -1;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_RDMA);
	if (fd < 0)
		return -1;
	req.h.nlmsg_len = NLMSG_LENGTH(alen);
	req.h.nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, op);
	req.h.nlmsg_flags = NLM_F_REQUEST | (dump ? NLM_F_DUMP : 0);
	req.h.nlmsg_seq = 1;
	memcpy(req.attrs, attrs, alen);
	if (sendto(fd, &req, req.h.nlmsg_len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		goto out;
	while ((len = recv(fd, buf, sizeof(buf), 0)) > 0) {
		const struct nlmsghdr *h;

		for (h = (const void *)buf; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
			const struct nlattr *a = (const void *)((const char *)h + NLMSG_HDRLEN);
			int left = h->nlmsg_len - NLMSG_HDRLEN;

			if (h->nlmsg_type == NLMSG_DONE) {
				ret = 0;
				goto out;
			}
			if (h->nlmsg_type == NLMSG_ERROR)
				goto out;
			while (sdp_nla_ok(a, left)) {
				const char *v = (const char *)a + NLA_HDRLEN;

				fn(arg, a->nla_type & NLA_TYPE_MASK,
				   a->nla_len == NLA_HDRLEN + 4 ? *(const unsigned int *)v : 0, v);
				left -= NLA_ALIGN(a->nla_len);
				a = (const void *)((const char *)a + NLA_ALIGN(a->nla_len));
			}
			fn(arg, -1, 0, NULL);
		}
		if (!dump) {
			ret = 0;
			break;
		}
	}
out:
	close(fd);
	return ret;
}

struct sdp_nl_dev {
	const char *name;
	int index, found;
};

static inline void sdp_nl_dev_attr(void *arg, int type, unsigned int v, const char *s)
{
	struct sdp_nl_dev *d = arg;

	if (d->found >= 0)
		return;
	if (type == RDMA_NLDEV_ATTR_DEV_INDEX)
		d->index = v;
	else if (type == RDMA_NLDEV_ATTR_DEV_NAME && !strcmp(s, d->name))
		d->found = d->index;
}

/* The index of RDMA device @name, or -1. */
static inline int sdp_rdma_dev_index(const char *name)
{
	struct sdp_nl_dev d = { .name = name, .index = -1, .found = -1 };

	if (sdp_rdmanl(RDMA_NLDEV_CMD_GET, true, NULL, 0, sdp_nl_dev_attr, &d))
		return -1;
	return d.found;
}

static inline void sdp_nl_qp_attr(void *arg, int type, unsigned int v, const char *s)
{
	struct sdp_qp_state *q = arg;

	if (type == RDMA_NLDEV_ATTR_RES_RQPN)
		q->rqpn = v;
	else if (type == RDMA_NLDEV_ATTR_RES_SQ_PSN)
		q->sq_psn = v;
	else if (type == RDMA_NLDEV_ATTR_RES_RQ_PSN)
		q->rq_psn = v;
}

static inline char *sdp_nla_u32(char *p, int type, unsigned int v)
{
	struct nlattr *a = (struct nlattr *)p;

	a->nla_len = NLA_HDRLEN + 4;
	a->nla_type = type;
	memcpy(p + NLA_HDRLEN, &v, 4);
	return p + NLA_ALIGN(a->nla_len);
}

/* The device's view of QP @qpn on port 1 of @dev: 0, or -1 if it has none. */
static inline int sdp_qp_state(const char *dev, unsigned int qpn, struct sdp_qp_state *q)
{
	char attrs[64], *p = attrs;
	int index = sdp_rdma_dev_index(dev);

	memset(q, 0, sizeof(*q));
	if (index < 0)
		return -1;
	p = sdp_nla_u32(p, RDMA_NLDEV_ATTR_DEV_INDEX, index);
	p = sdp_nla_u32(p, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
	p = sdp_nla_u32(p, RDMA_NLDEV_ATTR_RES_LQPN, qpn);
	q->rqpn = ~0u;
	if (sdp_rdmanl(RDMA_NLDEV_CMD_RES_QP_GET, false, attrs, p - attrs, sdp_nl_qp_attr, q))
		return -1;
	return q->rqpn == ~0u ? -1 : 0;
}

struct sdp_proof {
	int fd[2];
	struct sdp_info info[2];
	struct sdp_qp_state qp[2];
	bool begun, done;
};

/* The state of both ends now; -1 with errno if SDP_INFO or the QPs fail. */
static inline int sdp_proof_read(struct sdp_proof *p, struct sdp_info info[2],
				 struct sdp_qp_state qp[2])
{
	int i;

	for (i = 0; i < 2; i++) {
		if (sdp_info(p->fd[i], &info[i]))
			return -1;
		memset(&qp[i], 0, sizeof(qp[i]));
		if (info[i].transport == SDP_TRANSPORT_RDMA &&
		    sdp_qp_state(info[i].ibdev, info[i].qp_num, &qp[i])) {
			errno = ENOENT;
			return -1;
		}
	}
	return 0;
}

/*
 * The state once nothing moves: two reads 20 ms apart agree and every
 * packet sent was received. A message is counted when posted and its PSN
 * taken when the device sends it; this keeps the two in step. Gives up
 * after 5 s (the caller's checks then say what is off).
 */
static inline int sdp_proof_read_still(struct sdp_proof *p, struct sdp_info info[2],
				       struct sdp_qp_state qp[2])
{
	struct sdp_info i2[2];
	struct sdp_qp_state q2[2];
	int try;

	if (sdp_proof_read(p, info, qp))
		return -1;
	for (try = 0; try < 250; try++) {
		usleep(20000);
		if (sdp_proof_read(p, i2, q2))
			return -1;
		if (!memcmp(info, i2, sizeof(i2)) && !memcmp(qp, q2, sizeof(q2)) &&
		    qp[0].sq_psn == qp[1].rq_psn && qp[1].sq_psn == qp[0].rq_psn)
			return 0;
		memcpy(info, i2, sizeof(i2));
		memcpy(qp, q2, sizeof(q2));
	}
	return 0;
}

/* Start of the evidence: @a and @b are the two ends of one connection. */
static inline int sdp_proof_begin(struct sdp_proof *p, int a, int b)
{
	p->fd[0] = a;
	p->fd[1] = b;
	p->done = false;
	p->begun = !sdp_proof_read_still(p, p->info, p->qp);
	return p->begun ? 0 : -1;
}

#define SDP_PROOF_DELTA(now, p, i, f)	((now)[i].f - (p)->info[i].f)

/*
 * The end of it: checks and prints the PROOF line; the test fails on any
 * mismatch. Waits (up to 5 s) for what is in flight to land.
 */
#define SDP_PROVE(p) do {							\
	struct sdp_info _now[2];					\
	struct sdp_qp_state _qp[2];					\
	bool _settled = false;					\
	int _i;								\
									\
	/* once: an ASSERT in a teardown runs the teardown again */	\
	if ((p)->done)							\
		break;							\
	(p)->done = true;						\
	/* an ASSERT that failed leaves the harness's handler armed */	\
	_metadata->trigger = 0;						\
	ASSERT_TRUE((p)->begun) TH_LOG("no proof was begun");		\
	if (sdp_expected_transport() == SDP_TRANSPORT_TCP) {		\
		for (_i = 0; _i < 2; _i++) {				\
			ASSERT_EQ(0, sdp_info((p)->fd[_i], &_now[_i]));	\
			ASSERT_EQ(SDP_TRANSPORT_TCP, _now[_i].transport);	\
			ASSERT_EQ(0, _now[_i].tx_bytes + _now[_i].rx_bytes);	\
			ASSERT_EQ(0, _now[_i].qp_num);			\
		}							\
		fprintf(stderr, "# PROOF fallback reasons=%u,%u\n",	\
			_now[0].fallback_reason, _now[1].fallback_reason);	\
		break;							\
	}								\
	ASSERT_EQ(0, sdp_proof_read_still(p, _now, _qp))		\
		TH_LOG("SDP_INFO or rdma res: %s", strerror(errno));	\
	_settled = SDP_PROOF_DELTA(_now, p, 0, tx_bytes) ==		\
			SDP_PROOF_DELTA(_now, p, 1, rx_bytes) &&	\
		   SDP_PROOF_DELTA(_now, p, 1, tx_bytes) ==		\
			SDP_PROOF_DELTA(_now, p, 0, rx_bytes) &&	\
		   _qp[0].sq_psn == _qp[1].rq_psn &&			\
		   _qp[1].sq_psn == _qp[0].rq_psn;			\
	for (_i = 0; _i < 2; _i++) {					\
		ASSERT_EQ(SDP_TRANSPORT_RDMA, _now[_i].transport);	\
		ASSERT_EQ((p)->info[_i].qp_num, _now[_i].qp_num);	\
		ASSERT_LT(0, _now[_i].path_mtu);			\
	}								\
	/* one connection: each QP's remote is the other */		\
	ASSERT_EQ(_now[1].qp_num, _qp[0].rqpn);				\
	ASSERT_EQ(_now[0].qp_num, _qp[1].rqpn);				\
	ASSERT_STREQ(_now[0].ibdev, _now[1].ibdev);			\
	EXPECT_TRUE(_settled) TH_LOG("bytes %llu->%llu, %llu<-%llu; psn %u->%u, %u<-%u", \
		SDP_PROOF_DELTA(_now, p, 0, tx_bytes),			\
		SDP_PROOF_DELTA(_now, p, 1, rx_bytes),			\
		SDP_PROOF_DELTA(_now, p, 0, rx_bytes),			\
		SDP_PROOF_DELTA(_now, p, 1, tx_bytes),			\
		_qp[0].sq_psn, _qp[1].rq_psn, _qp[0].rq_psn, _qp[1].sq_psn);	\
	for (_i = 0; _i < 2; _i++) {					\
		/*							\
		 * what end _i posted, and what of it end !_i took in	\
		 * by Send; and its RDMA Reads of !_i's SrcAvails, each	\
		 * a PSN per MTU of what it read (plus one at the most)	\
		 */							\
		unsigned long long _msgs = SDP_PROOF_DELTA(_now, p, _i, tx_msgs);	\
		unsigned long long _wire = SDP_PROOF_DELTA(_now, p, _i, tx_bytes) - \
					   SDP_PROOF_DELTA(_now, p, _i, zc_tx_bytes) - \
					   SDP_PROOF_DELTA(_now, p, _i, zw_tx_bytes) + \
					   SDP_BSDH_LEN * _msgs;	\
		unsigned long long _in = SDP_PROOF_DELTA(_now, p, !_i, rx_msgs);	\
		unsigned long long _in_wire = SDP_PROOF_DELTA(_now, p, !_i, rx_bytes) - \
					      SDP_PROOF_DELTA(_now, p, !_i, zc_rx_bytes) - \
					      SDP_PROOF_DELTA(_now, p, !_i, zw_rx_bytes) + \
					      SDP_BSDH_LEN * _in;	\
		/* and its RDMA Writes into !_i's SinkAvails, as many PSNs */	\
		unsigned long long _wrote = SDP_PROOF_DELTA(_now, p, _i, zw_tx_bytes);	\
		unsigned long long _writes = SDP_PROOF_DELTA(_now, p, _i, zw_writes);	\
		unsigned long long _read = SDP_PROOF_DELTA(_now, p, _i, zc_rx_bytes);	\
		unsigned long long _reads = SDP_PROOF_DELTA(_now, p, _i, zc_reads);	\
		unsigned long long _mtu = _now[_i].path_mtu;		\
		unsigned long long _pkts = (_qp[_i].sq_psn - (p)->qp[_i].sq_psn) & \
					   SDP_PSN_MASK;		\
		unsigned long long _lo = (_in_wire + _mtu - 1) / _mtu;	\
									\
		if (_lo < _in)						\
			_lo = _in;					\
		_lo += _read / _mtu + _wrote / _mtu;			\
		EXPECT_LE(_lo, _pkts) TH_LOG("end %d: %llu msgs, %llu B in, %llu B read, %llu B written", _i, _in, _in_wire, _read, _wrote);	\
		EXPECT_GE(_msgs + _wire / _mtu + _read / _mtu + _reads + _wrote / _mtu + _writes, _pkts) \
			TH_LOG("end %d: %llu msgs, %llu B out, %llu B read in %llu, %llu B written in %llu", _i, _msgs, _wire, _read, _reads, _wrote, _writes); \
	}								\
	if (!_metadata->passed)						\
		break;							\
	fprintf(stderr, "# PROOF rdma %s qp %u<->%u mtu %u: %llu B in %llu msgs / %u pkts, %llu B in %llu msgs / %u pkts\n", \
		_now[0].ibdev, _now[0].qp_num, _now[1].qp_num, _now[0].path_mtu,	\
		SDP_PROOF_DELTA(_now, p, 0, tx_bytes), SDP_PROOF_DELTA(_now, p, 0, tx_msgs),	\
		(_qp[0].sq_psn - (p)->qp[0].sq_psn) & SDP_PSN_MASK,	\
		SDP_PROOF_DELTA(_now, p, 1, tx_bytes), SDP_PROOF_DELTA(_now, p, 1, tx_msgs),	\
		(_qp[1].sq_psn - (p)->qp[1].sq_psn) & SDP_PSN_MASK);	\
} while (0)

/*
 * A fixture variant on AF_INET TCP, the oracle. The fallback pass (the same
 * programs built with SDP_NO_ORACLE, run with net.sdp.enabled=0) leaves
 * them out: they already ran, and they would count twice.
 */
#ifdef SDP_NO_ORACLE
#define SDP_ORACLE_VARIANT(f, name) static const FIXTURE_VARIANT(f) __attribute__((unused)) f##_##name##_unused =
#else
#define SDP_ORACLE_VARIANT(f, name) FIXTURE_VARIANT_ADD(f, name)
#endif

/*
 * Connect to @ss, served by listener @l: over RDMA (a destination the
 * negative cache must not hold), a byte across, the proof.
 */
static inline void sdp_rdma_byte(struct __test_metadata *_metadata, int l,
				 const struct sockaddr_storage *ss, socklen_t len)
{
	int c = sdp_connect(sdp_family(), ss, len), a;
	struct sdp_proof pr;
	char b;

	ASSERT_LE(0, c) TH_LOG("connect: %s", strerror(errno));
	a = accept(l, NULL, NULL);
	ASSERT_LE(0, a);
	EXPECT_EQ(SDP_TRANSPORT_RDMA, sdp_transport(c))
		TH_LOG("fallback reason %d", sdp_getint(c, SOL_SDP, SDP_FALLBACK_REASON));
	ASSERT_EQ(0, sdp_proof_begin(&pr, c, a));
	EXPECT_EQ(1, send(c, "r", 1, 0));
	EXPECT_EQ(1, recv(a, &b, 1, MSG_WAITALL));
	SDP_PROVE(&pr);
	close(a);
	close(c);
}

/* The AF_INET oracle: nothing to prove but its family. */
#define SDP_PROVE_TCP(fd) do {						\
	int _d = sdp_getint(fd, SOL_SOCKET, SO_DOMAIN);			\
									\
	EXPECT_TRUE(_d == AF_INET || _d == AF_INET6) TH_LOG("SO_DOMAIN %d", _d); \
	if (_metadata->passed)						\
		fprintf(stderr, "# PROOF tcp\n");			\
} while (0)

/* A case with no connection (socket API, parsers, module life). */
#define SDP_PROVE_LOCAL()	fprintf(stderr, "# PROOF local\n")

#endif
