// SPDX-License-Identifier: GPL-2.0
/*
 * The SDP wire protocol against a peer that does not play by the rules: a
 * userspace rdma_cm/verbs program speaks SDP by hand (BSDH, Hello, HelloAck,
 * credits) to the kernel's SDP sockets, as the client of an SDP listener
 * and as the server an SDP socket connects to. Well-formed messages must
 * get through; every malformed one must reset the connection (the socket
 * sees ECONNRESET), bump the counter that names it and draw an Abort back,
 * while another connection goes on and everything the case made (sockets,
 * QPs, CQs) goes away. Incompatible Hellos and HelloAcks are refused, and a
 * refused connect() falls back, or fails with ECONNREFUSED.
 */
#include <pthread.h>
#include <poll.h>
#include <signal.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <rdma/rdma_cma.h>
#include <infiniband/verbs.h>
#include <sys/epoll.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <sys/time.h>

#include "kselftest_harness.h"
#include "sdp_proof.h"
#include "sdp_baseline.h"
#include "sdp_gen.h"
#include "sdp_peer.h"

/*
 * A hand-made peer and a kernel SDP socket over RDMA: the peer connects to
 * a kernel listener, or (server) the kernel connects to the peer. Beside
 * them a good SDP pair, which must keep working whatever the peer does.
 */
FIXTURE(evil_client) {
	bool server;		/* the peer listens, the kernel connects */
	int lfd, sfd;
	int good[2];		/* the good pair */
	struct baseline before;
	struct sockaddr_storage addr;
	socklen_t alen;
	struct peer p;
	char hello[256];	/* the kernel's HelloAck, or (server) its Hello */
	int hello_len;
	unsigned int refused;	/* packets the kernel's HCA refused */
};

FIXTURE_VARIANT(evil_client) {
	bool server;
};

/*
 * The sdp_wire_part build (scripts/check's matrix runs the rest on 6.1)
 * leaves out the cases where the kernel connects, and those of a bad
 * message id, Hello or HelloAck alone: the passive side's handling of
 * every message, zero-copy's and the peer's deaths stay on each kernel.
 */
#ifdef SDP_WIRE_PART
#define KERNEL_CONNECTS(...)
#else
#define KERNEL_CONNECTS(...) __VA_ARGS__
#endif

FIXTURE_VARIANT_ADD(evil_client, peer_connects) { .server = false };
KERNEL_CONNECTS(FIXTURE_VARIANT_ADD(evil_client, kernel_connects) { .server = true };)

/* The kernel connects to the peer's listener, which accepts: its socket. */
static int kernel_connects(struct __test_metadata *_metadata,
			   FIXTURE_DATA(evil_client) *self)
{
	struct sockaddr_storage addr;
	int buf_size = sdp_sysctl("buf_size"), fd, err, ret = -1;
	int timeout_ms = sdp_sysctl("connect_timeout_ms");
	socklen_t alen;

	if (peer_listen(&self->p, &addr, &alen))
		return -1;
	/* receive buffers of the peer's size, as its Hello gets them below */
	sdp_sysctl_set("buf_size", PEER_SIZE);
	/* a user-space peer under emulation may take over 1 s to accept */
	sdp_sysctl_set("connect_timeout_ms", 10000);
	fd = socket(sdp_family(), SOCK_STREAM | SOCK_NONBLOCK, 0);
	/* which step failed, for a setup that fails once in many runs */
	if (fd < 0 || (connect(fd, (struct sockaddr *)&addr, alen) && errno != EINPROGRESS))
		TH_LOG("socket or connect: %s", strerror(errno));
	else if ((err = peer_accept(&self->p, (struct hh *)self->hello, &self->hello_len)))
		TH_LOG("the peer's accept failed: %d (-1 its QP, -2 rdma_accept(), an rdma_cm event + 1000), %s",
		       err, strerror(errno));
	else if (!(sdp_poll1(fd, POLLOUT, 10000) & POLLOUT))
		TH_LOG("not connected in 10 s");
	else if ((err = sdp_getint(fd, SOL_SOCKET, SO_ERROR)))
		TH_LOG("SO_ERROR %s", strerror(err));
	else if (!fcntl(fd, F_SETFL, 0))
		ret = fd;
	sdp_sysctl_set("buf_size", buf_size);
	sdp_sysctl_set("connect_timeout_ms", timeout_ms);
	if (ret < 0)
		close(fd);
	return ret;
}

/* The hand-made peer's connection to a kernel SDP socket, and the good pair. */
static void client_up(struct __test_metadata *_metadata,
		      FIXTURE_DATA(evil_client) *self)
{
	struct timeval tv = { .tv_sec = 5 };
	struct peer keep = self->p;
	struct hh hello;

	/* what the case asked of the peer: its QP, the Reads and adverts it offers */
	memset(&self->p, 0, sizeof(self->p));
	self->p.own_qp = keep.own_qp;
	self->p.rd_atomic = keep.rd_atomic;
	self->p.rd_in = keep.rd_in;
	self->p.adverts = keep.adverts;
	self->p.caps = keep.caps;
	self->sfd = self->good[0] = self->good[1] = -1;
	baseline_read(&self->before);
	ASSERT_LE(0, self->before.qps);
	self->lfd = sdp_listener(sdp_family(), SDP_A, 8, &self->addr, &self->alen);
	ASSERT_LE(0, self->lfd);
	self->good[0] = sdp_connect(sdp_family(), &self->addr, self->alen);
	ASSERT_LE(0, self->good[0]);
	self->good[1] = accept(self->lfd, NULL, NULL);
	ASSERT_LE(0, self->good[1]);
	if (self->server) {
		self->sfd = kernel_connects(_metadata, self);
		ASSERT_LE(0, self->sfd);
	} else {
		good_hello(&hello, PEER_BUFS - 1);
		hello.max_adverts = self->p.adverts;
		hello.caps = self->p.caps;
		ASSERT_EQ(0, peer_connect(&self->p, &self->addr, &hello, self->hello,
					  sizeof(self->hello), &self->hello_len));
		if (self->p.own_qp)
			return;		/* the case goes on before the RTU */
		self->sfd = accept(self->lfd, NULL, NULL);
		ASSERT_LE(0, self->sfd);
	}
	ASSERT_EQ(0, setsockopt(self->sfd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
}

/* The pair's QPs name each other, and every packet we sent reached the kernel's. */
static bool qps_paired(FIXTURE_DATA(evil_client) *self, struct sdp_info *info)
{
	struct sdp_qp_state mine, theirs;

	return !sdp_qp_state(info->ibdev, info->qp_num, &theirs) &&
	       !sdp_qp_state(info->ibdev, self->p.qp->qp_num, &mine) &&
	       theirs.rqpn == self->p.qp->qp_num && mine.rqpn == info->qp_num &&
	       mine.sq_psn == ((theirs.rq_psn + self->refused) & 0xffffff);
}

/*
 * The kernel socket talked to our QP over RDMA: its QP's remote is ours,
 * and every packet we sent reached it (rdma_cm makes our send PSN its
 * receive PSN), whatever it then made of them; one still on its way gets
 * 200 ms. A packet its HCA refused moved its QP to error before the
 * receive PSN moved past it (refused). The good pair still carries bytes both ways over RDMA, and once all is
 * closed the SDP sockets, QPs and CQs are back to their counts.
 */
static void client_down(struct __test_metadata *_metadata,
			FIXTURE_DATA(evil_client) *self)
{
	struct baseline now;
	struct sdp_info info;
	bool paired = false;
	char b[2] = "";
	int i;

	if (self->sfd >= 0 && self->p.qp && !sdp_info(self->sfd, &info) &&
	    info.transport == SDP_TRANSPORT_RDMA)
		for (i = 0; i < 10 && !(paired = qps_paired(self, &info)); i++)
			usleep(20000);
	if (paired)
		fprintf(stderr, "# PROOF rdma %s qp %u<->%u, %u msgs in\n", info.ibdev,
			info.qp_num, self->p.qp->qp_num, (unsigned int)info.rx_msgs);
	else
		EXPECT_TRUE(false) TH_LOG("no RDMA connection to our QP");
	if (self->good[1] >= 0) {
		EXPECT_EQ(SDP_TRANSPORT_RDMA, sdp_transport(self->good[0]));
		EXPECT_EQ(SDP_TRANSPORT_RDMA, sdp_transport(self->good[1]));
		EXPECT_EQ(1, send(self->good[0], "g", 1, 0));
		EXPECT_EQ(1, send(self->good[1], "h", 1, 0));
		EXPECT_EQ(1, sdp_read_full(self->good[1], b, 1));
		EXPECT_EQ(1, sdp_read_full(self->good[0], b + 1, 1));
		EXPECT_EQ(0, memcmp(b, "gh", 2)) TH_LOG("the good pair broke");
	}
	close(self->sfd);
	close(self->good[0]);
	close(self->good[1]);
	close(self->lfd);
	peer_free(&self->p);
	EXPECT_TRUE(baseline_back(&self->before, &now, 10))
		TH_LOG(BASELINE_FMT, BASELINE_ARGS(&self->before, &now));
}

FIXTURE_SETUP(evil_client)
{
	self->server = variant->server;
	client_up(_metadata, self);
}

FIXTURE_TEARDOWN(evil_client)
{
	client_down(_metadata, self);
}

/* The kernel socket's next read fails with ECONNRESET. */
#define EXPECT_RESET(self) do {						\
	char _b[256];							\
	ssize_t _n;							\
	while ((_n = recv((self)->sfd, _b, sizeof(_b), 0)) > 0)		\
		;							\
	EXPECT_EQ(-1, _n);						\
	EXPECT_EQ(ECONNRESET, errno);					\
} while (0)

/* What the kernel said first: its HelloAck, or its Hello. */
TEST_F(evil_client, kernels_hello_is_well_formed)
{
	struct hah *ha = (struct hah *)self->hello;
	struct hh *h = (struct hh *)self->hello;

	ASSERT_LE(self->server ? sizeof(*h) : sizeof(*ha), self->hello_len);
	EXPECT_EQ(self->server ? MID_HELLO : MID_HELLO_ACK, h->bsdh.mid);
	EXPECT_EQ(self->server ? sizeof(*h) : sizeof(*ha), ntohl(h->bsdh.len));
	EXPECT_EQ(0, h->bsdh.flags);
	EXPECT_EQ(0, ntohl(h->bsdh.mseq));
	EXPECT_EQ(0, ntohl(h->bsdh.mseq_ack));
	EXPECT_EQ(2, h->majv_minv >> 4);
	/* a new connection posts 4 receive buffers, one kept spare */
	EXPECT_EQ(3, ntohs(h->bsdh.bufs));
	EXPECT_EQ(0x40, h->ipv_cap);	/* IPv4 (the listener: our Hello's, echoed) */
	EXPECT_EQ(PEER_SIZE, self->p.their_size);
	EXPECT_EQ(PEER_SIZE, ntohl(self->server ? h->desremrcvsz : ha->actrcvsz));
}

TEST_F(evil_client, good_data_arrives)
{
	char buf[32];

	ASSERT_EQ(0, send_msg(&self->p, MID_DATA, "hello", 5));
	ASSERT_EQ(5, recv(self->sfd, buf, sizeof(buf), 0));
	EXPECT_EQ(0, memcmp(buf, "hello", 5));
	/* and back: the kernel's Data in our buffer */
	ASSERT_EQ(3, send(self->sfd, "ack", 3, 0));
	ASSERT_TRUE(peer_wait_for(&self->p, MID_DATA));
	EXPECT_EQ(0, self->p.last_data.flags);
	EXPECT_EQ(sizeof(struct bsdh) + 3, ntohl(self->p.last_data.len));
	EXPECT_EQ(self->p.rx_mseq, ntohl(self->p.last_data.mseq));
	EXPECT_EQ(1, ntohl(self->p.last_data.mseq_ack));	/* our "hello" */
	EXPECT_EQ(0, memcmp(self->p.last_payload, "ack", 3));
	ASSERT_EQ(0, send_msg(&self->p, MID_DISCONN, NULL, 0));
	EXPECT_EQ(0, recv(self->sfd, buf, sizeof(buf), 0));
}

TEST_F(evil_client, abort_resets)
{
	long long before = sdp_stat("AbortRcvd");

	ASSERT_EQ(0, send_msg(&self->p, MID_ABORT, NULL, 0));
	EXPECT_RESET(self);
	EXPECT_EQ(before + 1, sdp_stat("AbortRcvd"));
}

#define TRACEFS	"/sys/kernel/tracing"

/*
 * The trace buffer emptied, the sdp_conn_error tracepoint on. It stays on:
 * scripts/check-guest turns the sdp events on once (sdp_trace_on in lib.sh
 * says why), so here it normally is already.
 */
static int conn_error_trace(void)
{
	char on = 0;
	int fd;

	if (access(TRACEFS "/events", F_OK))
		mount("nodev", TRACEFS, "tracefs", 0, NULL);
	fd = open(TRACEFS "/events/sdp/sdp_conn_error/enable", O_RDONLY);
	if (fd < 0 || read(fd, &on, 1) != 1)
		on = 0;
	if (fd >= 0)
		close(fd);
	if (on != '1' && (sdp_write_file(TRACEFS "/options/record-cmd", "0") ||
			  sdp_write_file(TRACEFS "/events/sdp/sdp_conn_error/enable", "1")))
		return -1;
	return sdp_write_file(TRACEFS "/trace", "");
}

/* Did the tracepoint say a connection was reset for @why? */
static bool conn_error_traced(const char *why)
{
	static char buf[1 << 16];
	int fd = open(TRACEFS "/trace", O_RDONLY);
	size_t got = 0;
	ssize_t n = 0;
	char want[64];

	while (fd >= 0 && got < sizeof(buf) - 1 &&
	       (n = read(fd, buf + got, sizeof(buf) - 1 - got)) > 0)
		got += n;
	if (fd >= 0)
		close(fd);
	buf[got] = 0;
	snprintf(want, sizeof(want), " %s err=%d", why, ECONNRESET);
	return strstr(buf, "sdp_conn_error:") && strstr(buf, want);
}

/*
 * Send @h and @len bytes of @payload (zeroes if NULL), expect a reset
 * counted in @counter and traced (sdp_conn_error) with that reason.
 */
/* The fault sent: a reset, @counter and AbortSent one past @before and @aborts. */
static void fault_seen(struct __test_metadata *_metadata, FIXTURE_DATA(evil_client) *self,
		       const char *counter, long long before, long long aborts)
{
	EXPECT_RESET(self);
	EXPECT_EQ(before + 1, sdp_stat(counter));
	EXPECT_EQ(aborts + 1, sdp_stat("AbortSent"));
	EXPECT_TRUE(peer_wait_for(&self->p, MID_ABORT));
	EXPECT_TRUE(conn_error_traced(counter)) TH_LOG("no sdp_conn_error %s", counter);
}

static void expect_fault_of(struct __test_metadata *_metadata,
			    FIXTURE_DATA(evil_client) *self, struct bsdh *h,
			    const void *payload, uint32_t len, const char *counter)
{
	static const char zeroes[PEER_SIZE];
	long long before = sdp_stat(counter), aborts = sdp_stat("AbortSent");

	ASSERT_EQ(0, conn_error_trace());
	ASSERT_EQ(0, send_raw(&self->p, h, payload ?: zeroes, len));
	fault_seen(_metadata, self, counter, before, aborts);
}

static void expect_fault(struct __test_metadata *_metadata,
			 FIXTURE_DATA(evil_client) *self, struct bsdh *h,
			 uint32_t len, const char *counter)
{
	expect_fault_of(_metadata, self, h, NULL, len, counter);
}

/* Our next message, @mid with @len bytes of @payload, is a fault named @counter. */
static void mid_fault(struct __test_metadata *_metadata,
		      FIXTURE_DATA(evil_client) *self, uint8_t mid,
		      const void *payload, uint32_t len, const char *counter)
{
	struct bsdh h;

	next_header(&self->p, &h, mid, len);
	expect_fault_of(_metadata, self, &h, payload, len, counter);
}

#ifndef SDP_WIRE_PART
/*
 * Every message id but Data, DisConn and Abort: the ones SDP has that we
 * never invite here (the peer offered no adverts; we never resize, and
 * have no SinkAvail out), a SinkAvail of nothing, and ids SDP has not.
 */
FIXTURE(evil_mid) {
	FIXTURE_DATA(evil_client) c;
};

FIXTURE_VARIANT(evil_mid) {
	uint8_t mid;
	const char *counter;
	bool server;
};

/* each both ways: to a kernel listener, and to a kernel that connected */
#define MID_VARIANT(name, id, why)					\
	FIXTURE_VARIANT_ADD(evil_mid, name) { .mid = id, .counter = why };	\
	KERNEL_CONNECTS(FIXTURE_VARIANT_ADD(evil_mid, name##_kernel_connects) { \
		.mid = id, .counter = why, .server = true })
MID_VARIANT(hello, MID_HELLO, "UnexpectedMid");
MID_VARIANT(hello_ack, MID_HELLO_ACK, "UnexpectedMid");
MID_VARIANT(sendsm, 0x04, "UnexpectedMid");
MID_VARIANT(rdmardcompl, 0x06, "UnexpectedMid");
MID_VARIANT(srcavail_cancel, 0x08, "UnexpectedMid");
MID_VARIANT(chrcvbuf, 0x0B, "UnexpectedMid");
MID_VARIANT(chrcvbuf_ack, 0x0C, "UnexpectedMid");
/* (the kernel takes SinkAvails: one of zeroes offers nothing) */
MID_VARIANT(sinkavail, 0xFD, "BadSinkAvail");
/* (an answer to a SinkAvail of ours, when none is out) */
MID_VARIANT(rdmawrcompl, 0x05, "UnexpectedMid");
MID_VARIANT(srcavail, MID_SRCAVAIL, "UnexpectedMid");
MID_VARIANT(unknown_0d, 0x0D, "BadMid");
MID_VARIANT(unknown_55, 0x55, "BadMid");
MID_VARIANT(unknown_fc, 0xFC, "BadMid");

FIXTURE_SETUP(evil_mid)
{
	self->c.server = variant->server;
	client_up(_metadata, &self->c);
}

FIXTURE_TEARDOWN(evil_mid)
{
	client_down(_metadata, &self->c);
}

TEST_F(evil_mid, resets)
{
	struct bsdh h;

	next_header(&self->c.p, &h, variant->mid, 16);
	expect_fault(_metadata, &self->c, &h, 16, variant->counter);
}
#endif /* (SDP_WIRE_PART: 6.1 runs them) */

TEST_F(evil_client, length_mismatch)
{
	struct bsdh h;

	next_header(&self->p, &h, MID_DATA, 100);
	h.len = htonl(sizeof(h) + 10);
	expect_fault(_metadata, self, &h, 100, "BadLen");
}

TEST_F(evil_client, mseq_out_of_order)
{
	struct bsdh h;

	next_header(&self->p, &h, MID_DATA, 4);
	h.mseq = htonl(self->p.mseq + 1);
	expect_fault(_metadata, self, &h, 4, "BadMseq");
}

TEST_F(evil_client, mseq_ack_from_the_future)
{
	struct bsdh h;

	next_header(&self->p, &h, MID_DATA, 4);
	h.mseq_ack = htonl(1000);
	expect_fault(_metadata, self, &h, 4, "BadMseqAck");
}

/* bufs may grow past the Hello's, but never to SDP's 256-buffer maximum. */
TEST_F(evil_client, bufs_beyond_max)
{
	struct bsdh h;

	next_header(&self->p, &h, MID_DATA, 4);
	h.bufs = htons(256);
	expect_fault(_metadata, self, &h, 4, "BadBufs");
}

/* One Data message more than the HelloAck's bufs lands in the spare. */
TEST_F(evil_client, data_beyond_credits)
{
	int bufs = self->p.their_bufs, i;
	struct bsdh h;

	for (i = 0; i < bufs; i++)
		ASSERT_EQ(0, send_msg(&self->p, MID_DATA, "x", 1));
	next_header(&self->p, &h, MID_DATA, 1);
	expect_fault(_metadata, self, &h, 1, "BadCredits");
}

/*
 * On the device's shared receive queue (net.sdp.shared_rq) every message
 * takes an SRQ buffer, posted for all connections, not one of the
 * connection's own that a peer beyond its credits would find missing: a
 * flood of Data past the credits is counted (BadCredits) and resets the
 * connection as on a ring; the good pair, on the SRQ too, moves on, and
 * the SRQ goes with its last connection (PDs back).
 */
TEST(srq_flood_beyond_credits)
{
	FIXTURE_DATA(evil_client) c = {};
	int shared = sdp_sysctl("shared_rq"), i, sent = 0;
	long long srq = sdp_stat("SrqConnections"), before, aborts;
	struct sdp_qp_state mine, theirs;
	unsigned int last;
	struct sdp_info info;

	ASSERT_LE(0, shared);
	sdp_sysctl_set("shared_rq", 1);
	client_up(_metadata, &c);
	/* the good pair's ends and the peer's */
	EXPECT_EQ(srq + 3, sdp_stat("SrqConnections"));
	before = sdp_stat("BadCredits");
	aborts = sdp_stat("AbortSent");
	ASSERT_EQ(0, conn_error_trace());
	/* what the QP takes before the reset stops it; no send buffer reused */
	ASSERT_GE(PEER_SEND_BUFS, c.p.their_bufs + 48);
	for (i = 0; i < c.p.their_bufs + 48; i++)
		sent += !send_msg(&c.p, MID_DATA, "x", 1);
	TH_LOG("%d of %d messages posted, %d credits", sent, i, c.p.their_bufs);
	fault_seen(_metadata, &c, "BadCredits", before, aborts);
	/* the flood's tail came after the kernel's QP went down: refused, once it takes no more */
	ASSERT_EQ(0, sdp_info(c.sfd, &info));
	for (i = 0, last = ~0u; i < 20; i++, usleep(50000)) {
		if (sdp_qp_state(info.ibdev, info.qp_num, &theirs) ||
		    sdp_qp_state(info.ibdev, c.p.qp->qp_num, &mine) || theirs.rq_psn == last)
			break;
		last = theirs.rq_psn;
		c.refused = (mine.sq_psn - theirs.rq_psn) & 0xffffff;
	}
	TH_LOG("%u refused after the reset", c.refused);
	EXPECT_GE(sent, c.refused);
	client_down(_metadata, &c);
	sdp_sysctl_set("shared_rq", shared);
}

/* Take in what arrived without posting its buffers again; how many. */
static int peer_take(struct peer *p, int ms)
{
	double end = sdp_now() + ms / 1000.0;
	struct ibv_wc wc;
	int n = 0;

	while (sdp_now() < end) {
		if (ibv_poll_cq(p->cq, 1, &wc) <= 0) {
			usleep(1000);
			continue;
		}
		if (wc.status != IBV_WC_SUCCESS || !(wc.opcode & IBV_WC_RECV))
			continue;
		p->rx_mseq = ntohl(((struct bsdh *)(p->mem + wc.wr_id * PEER_SIZE))->mseq);
		p->posted--;
		n++;
	}
	return n;
}

/*
 * A peer that grants credits for buffers it never posts again: our sends
 * meet receiver-not-ready. Its REQ asked for 7 RNR retries, which is
 * forever, but the retries are ours: the send fails after SDP_RNR_RETRY
 * and the connection resets in seconds, not at the 60 s bound on a send
 * that never completes.
 */
TEST_F_TIMEOUT(evil_client, receiver_never_ready_resets, 90)
{
	long long before = sdp_stat("QpError");
	static char buf[64 * PEER_SIZE];
	struct bsdh h;
	double t0;
	int i;

	/*
	 * Rounds until none of its receives is left: our messages come in,
	 * it takes them without posting again, and says all are free.
	 */
	for (i = 0; i < 32 && self->p.posted > 0; i++) {
		if (send(self->sfd, buf, sizeof(buf), MSG_DONTWAIT) < 0 && errno != EAGAIN)
			break;
		peer_take(&self->p, 500);
		next_header(&self->p, &h, MID_DATA, 0);
		ASSERT_EQ(0, send_raw(&self->p, &h, NULL, 0));
	}
	/* what we send now finds nothing posted */
	send(self->sfd, buf, sizeof(buf), MSG_DONTWAIT);
	t0 = sdp_now();
	EXPECT_NE(0, sdp_poll1(self->sfd, POLLIN, 30000) & (POLLERR | POLLHUP));
	TH_LOG("%d rounds; reset after %.1f s, %d of its receives left posted", i,
	       sdp_now() - t0, self->p.posted);
	EXPECT_GT(20.0, sdp_now() - t0);
	EXPECT_EQ(ECONNRESET, sdp_getint(self->sfd, SOL_SOCKET, SO_ERROR));
	EXPECT_EQ(before + 1, sdp_stat("QpError"));
}

TEST_F(evil_client, data_after_disconn)
{
	long long before = sdp_stat("UnexpectedMid");
	struct bsdh h;
	char buf[8];

	ASSERT_EQ(0, send_msg(&self->p, MID_DISCONN, NULL, 0));
	EXPECT_EQ(0, recv(self->sfd, buf, sizeof(buf), 0));
	next_header(&self->p, &h, MID_DATA, 4);
	ASSERT_EQ(0, send_raw(&self->p, &h, "late", 4));
	EXPECT_TRUE(peer_wait_for(&self->p, MID_ABORT));
	EXPECT_EQ(before + 1, sdp_stat("UnexpectedMid"));
}

static volatile sig_atomic_t sigurgs;

static void on_sigurg(int sig)
{
	sigurgs++;
}

/*
 * Urgent data both ways: OOB_PEND announces it (SIGURG, MSG_OOB "not yet"),
 * OOB_PRES brings it as the message's last byte; the kernel's own MSG_OOB
 * ends its message with the byte and flags it.
 */
TEST_F(evil_client, urgent_announced_then_delivered)
{
	struct bsdh h;
	char buf[8];

	signal(SIGURG, on_sigurg);
	sigurgs = 0;
	ASSERT_EQ(0, fcntl(self->sfd, F_SETOWN, getpid()));
	next_header(&self->p, &h, MID_DATA, 0);
	h.flags = OOB_PEND;
	ASSERT_EQ(0, send_raw(&self->p, &h, "", 0));
	for (int i = 0; i < 500 && !sigurgs; i++)
		usleep(10000);
	EXPECT_EQ(1, sigurgs);
	EXPECT_EQ(-1, recv(self->sfd, buf, 1, MSG_OOB));
	EXPECT_EQ(EAGAIN, errno);
	next_header(&self->p, &h, MID_DATA, 3);
	h.flags = OOB_PRES;
	ASSERT_EQ(0, send_raw(&self->p, &h, "abX", 3));
	ASSERT_NE(0, sdp_poll1(self->sfd, POLLPRI, 5000) & POLLPRI);
	ASSERT_EQ(1, recv(self->sfd, buf, 1, MSG_OOB));
	EXPECT_EQ('X', buf[0]);
	ASSERT_EQ(2, recv(self->sfd, buf, sizeof(buf), 0));
	EXPECT_EQ(0, memcmp(buf, "ab", 2));
	EXPECT_EQ(1, sigurgs);

	ASSERT_EQ(3, send(self->sfd, "hi!", 3, MSG_OOB));
	ASSERT_TRUE(peer_wait_for(&self->p, MID_DATA));
	EXPECT_EQ(OOB_PRES, self->p.last_data.flags);
	EXPECT_EQ(sizeof(struct bsdh) + 3, ntohl(self->p.last_data.len));
	EXPECT_EQ(0, memcmp(self->p.last_payload, "hi!", 3));
}

/* Urgent flags only on Data, the byte only where there is one. */
TEST_F(evil_client, urgent_flag_on_disconn)
{
	struct bsdh h;

	next_header(&self->p, &h, MID_DISCONN, 0);
	h.flags = OOB_PEND;
	expect_fault(_metadata, self, &h, 0, "BadFlags");
}

TEST_F(evil_client, urgent_byte_in_empty_data)
{
	struct bsdh h;

	next_header(&self->p, &h, MID_DATA, 0);
	h.flags = OOB_PRES;
	expect_fault(_metadata, self, &h, 0, "BadFlags");
}

TEST_F(evil_client, unknown_flag_bits)
{
	struct bsdh h;

	next_header(&self->p, &h, MID_DATA, 4);
	h.flags = 0x80;
	expect_fault(_metadata, self, &h, 4, "BadFlags");
}

TEST_F(evil_client, message_shorter_than_header)
{
	struct ibv_send_wr wr = { .opcode = IBV_WR_SEND };
	long long before = sdp_stat("BadLen");
	struct bsdh h;

	next_header(&self->p, &h, MID_DATA, 0);
	h.len = htonl(8);
	memcpy(send_slot(&self->p), &h, sizeof(h));
	ASSERT_EQ(0, post_send(&self->p, &wr, 8));
	EXPECT_RESET(self);
	EXPECT_EQ(before + 1, sdp_stat("BadLen"));
	EXPECT_TRUE(peer_wait_for(&self->p, MID_ABORT));
}

TEST_F(evil_client, disconn_with_payload)
{
	struct bsdh h;

	next_header(&self->p, &h, MID_DISCONN, 4);
	expect_fault(_metadata, self, &h, 4, "BadLen");
}

/* The message before, again. */
TEST_F(evil_client, duplicate_mseq)
{
	struct bsdh h;
	char buf[8];

	next_header(&self->p, &h, MID_DATA, 4);
	ASSERT_EQ(0, send_raw(&self->p, &h, "once", 4));
	ASSERT_EQ(4, recv(self->sfd, buf, sizeof(buf), 0));
	expect_fault(_metadata, self, &h, 4, "BadMseq");
}

/* The peer acked our message 1, then acks only message 0. */
TEST_F(evil_client, mseq_ack_from_the_past)
{
	struct bsdh h;
	char buf[8];

	ASSERT_EQ(3, send(self->sfd, "one", 3, 0));
	ASSERT_TRUE(peer_wait_for(&self->p, MID_DATA));
	ASSERT_EQ(0, send_msg(&self->p, MID_DATA, "ok", 2));
	ASSERT_EQ(2, recv(self->sfd, buf, sizeof(buf), 0));
	next_header(&self->p, &h, MID_DATA, 4);
	ASSERT_LT(0, ntohl(h.mseq_ack));
	h.mseq_ack = htonl(ntohl(h.mseq_ack) - 1);
	expect_fault(_metadata, self, &h, 4, "BadMseqAck");
}

/* SDP messages are plain Sends: immediate data is none of them. */
TEST_F(evil_client, send_with_immediate)
{
	struct ibv_send_wr wr = { .opcode = IBV_WR_SEND_WITH_IMM,
				  .imm_data = htonl(0x5d9) };
	long long before = sdp_stat("BadMid");
	struct bsdh h;

	next_header(&self->p, &h, MID_DATA, 4);
	memcpy(send_slot(&self->p), &h, sizeof(h));
	memcpy(send_slot(&self->p) + sizeof(h), "imm!", 4);
	ASSERT_EQ(0, post_send(&self->p, &wr, sizeof(h) + 4));
	EXPECT_RESET(self);
	EXPECT_EQ(before + 1, sdp_stat("BadMid"));
	EXPECT_TRUE(peer_wait_for(&self->p, MID_ABORT));
}

/* The next CM event on the peer's id within @ms, or -1. */
static int peer_cm_event(struct peer *p, int ms)
{
	struct pollfd pfd = { .fd = p->ec->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	int got;

	if (poll(&pfd, 1, ms) != 1 || rdma_get_cm_event(p->ec, &ev))
		return -1;
	got = ev->event;
	rdma_ack_cm_event(ev);
	return got;
}

/* The status of the peer's first failed send, or -1 if none failed in 5 s. */
static int peer_send_status(struct peer *p)
{
	double end = sdp_now() + 5;
	struct ibv_wc wc;

	while (sdp_now() < end) {
		if (ibv_poll_cq(p->cq, 1, &wc) <= 0) {
			usleep(1000);
			continue;
		}
		if (wc.status != IBV_WC_SUCCESS && !(wc.opcode & IBV_WC_RECV) &&
		    wc.status != IBV_WC_WR_FLUSH_ERR)
			return wc.status;
	}
	return -1;
}

static long long stat_sum(const char *const *counters)
{
	return sdp_stat(counters[0]) + (counters[1] ? sdp_stat(counters[1]) : 0);
}

/*
 * The peer did something our HCA refuses (the peer's send fails, NAKed):
 * our QP failed by itself, so nothing, not even an Abort, can go to the
 * peer on it. The connection is reset and counted in one of @counters
 * (which one may be the provider's say), and our disconnect reaches the
 * peer's CM, which would otherwise never learn of it. Other connections
 * go on over RDMA.
 */
static void expect_qp_fault(struct __test_metadata *_metadata,
			    FIXTURE_DATA(evil_client) *self,
			    const char *const *counters, long long before,
			    long long aborts, bool poke)
{
	struct sockaddr_storage addr;
	socklen_t alen = sizeof(addr);
	int c, s, status;
	char buf[4];

	status = peer_send_status(&self->p);
	EXPECT_NE(-1, status);
	self->refused = 1;
	/* @poke: our QP is down (the peer's send was NAKed); our next send finds it */
	if (poke)
		EXPECT_EQ(1, send(self->sfd, "x", 1, 0));
	EXPECT_RESET(self);
	EXPECT_EQ(before + 1, stat_sum(counters));
	EXPECT_EQ(aborts, sdp_stat("AbortSent"));
	EXPECT_EQ(RDMA_CM_EVENT_DISCONNECTED, peer_cm_event(&self->p, 5000));
	EXPECT_TRUE(conn_error_traced(counters[0]) ||
		    (counters[1] && conn_error_traced(counters[1])))
		TH_LOG("no sdp_conn_error %s", counters[0]);
	TH_LOG("peer's send: %s", ibv_wc_status_str(status));

	ASSERT_EQ(0, getsockname(self->lfd, (struct sockaddr *)&addr, &alen));
	c = sdp_connect(sdp_family(), &addr, alen);
	ASSERT_LE(0, c);
	s = accept(self->lfd, NULL, NULL);
	ASSERT_LE(0, s);
	EXPECT_EQ(SDP_TRANSPORT_RDMA, sdp_transport(s));
	ASSERT_EQ(4, send(c, "next", 4, 0));
	ASSERT_EQ(4, sdp_read_full(s, buf, 4));
	EXPECT_EQ(0, memcmp(buf, "next", 4));
	close(c);
	close(s);
}

/*
 * One Send bigger than our receive buffers (the HelloAck's actrcvsz): a
 * length error where the HCA says so, rxe calls it a QP operation error.
 */
TEST_F(evil_client, message_beyond_our_buffer)
{
	static const char *const counters[] = { "BadLen", "QpError" };
	long long before = stat_sum(counters), aborts = sdp_stat("AbortSent");
	struct ibv_send_wr wr = { .opcode = IBV_WR_SEND };
	uint32_t len = self->p.their_size + 64;
	struct bsdh h;

	ASSERT_GE(PEER_SIZE, len - 64);
	ASSERT_EQ(0, conn_error_trace());
	next_header(&self->p, &h, MID_DATA, len - sizeof(h));
	memcpy(send_slot(&self->p), &h, sizeof(h));
	ASSERT_EQ(0, post_send(&self->p, &wr, len));
	expect_qp_fault(_metadata, self, counters, before, aborts, false);
}

/*
 * Our QP grants no remote write, and no rkey of ours is known: an RDMA
 * Write without a protocol exchange. (A Read cannot even be posted: the
 * CM gave the peer's QP the read depth it asked for, 0.)
 */
static void write_on_our_memory(struct __test_metadata *_metadata,
				FIXTURE_DATA(evil_client) *self, bool poke)
{
	static const char *const counters[] = { "QpError", NULL };
	long long before = stat_sum(counters), aborts = sdp_stat("AbortSent");
	struct ibv_send_wr wr = { .opcode = IBV_WR_RDMA_WRITE,
				  .wr.rdma = { .remote_addr = 0x10000, .rkey = 0x1234 } };

	ASSERT_EQ(0, conn_error_trace());
	ASSERT_EQ(0, post_send(&self->p, &wr, 64));
	expect_qp_fault(_metadata, self, counters, before, aborts, poke);
}

TEST_F(evil_client, rdma_write_on_our_memory)
{
	write_on_our_memory(_metadata, self, false);
}

/*
 * The same on the SRQ, where nothing of the connection's own flushes when
 * its QP fails (no receive is its own): the connection learns it at its
 * next send, whose flush ends it after what the QP took, as a ring's
 * flushed receives would. (An idle reader learns it as over TCP from a
 * silent peer: by keepalive.)
 */
TEST(srq_rdma_write_on_our_memory)
{
	FIXTURE_DATA(evil_client) c = {};
	int shared = sdp_sysctl("shared_rq");
	long long srq = sdp_stat("SrqConnections");

	ASSERT_LE(0, shared);
	sdp_sysctl_set("shared_rq", 1);
	client_up(_metadata, &c);
	EXPECT_EQ(srq + 3, sdp_stat("SrqConnections"));
	write_on_our_memory(_metadata, &c, true);
	client_down(_metadata, &c);
	sdp_sysctl_set("shared_rq", shared);
}

/*
 * With its own QP a peer can give itself RDMA Reads the CM never agreed
 * to: a Read of our memory, no rkey of ours known (only a SrcAvail's
 * registration may be read, and there is none).
 */
TEST(rdma_read_of_our_memory)
{
	static const char *const counters[] = { "QpError", NULL };
	FIXTURE_DATA(evil_client) c = { .p = { .own_qp = true, .rd_atomic = 1 } };
	struct ibv_send_wr wr = { .opcode = IBV_WR_RDMA_READ,
				  .wr.rdma = { .remote_addr = 0x10000, .rkey = 0x1234 } };
	struct timeval tv = { .tv_sec = 5 };
	long long before, aborts;

	client_up(_metadata, &c);
	ASSERT_EQ(0, peer_establish(&c.p));
	c.sfd = accept(c.lfd, NULL, NULL);
	ASSERT_LE(0, c.sfd);
	ASSERT_EQ(0, setsockopt(c.sfd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
	before = stat_sum(counters);
	aborts = sdp_stat("AbortSent");
	ASSERT_EQ(0, conn_error_trace());
	ASSERT_EQ(0, post_send(&c.p, &wr, 64));
	expect_qp_fault(_metadata, &c, counters, before, aborts, false);
	client_down(_metadata, &c);
}

/*
 * Data before the RTU: the peer's QP is up once the REP is in, and its
 * first messages may overtake its RTU (or the RTU may be lost). They wait
 * in the child's ring: a provider that reports the QP's COMM_EST has the
 * CM establish the connection on them, as the IB spec says (rxe reports
 * none: then the RTU does). Either way accept() returns the connection
 * with every byte, in order.
 */
TEST(data_before_the_rtu_is_delivered)
{
	FIXTURE_DATA(evil_client) c = { .p = { .own_qp = true } };
	char buf[16];
	int early;

	client_up(_metadata, &c);
	ASSERT_EQ(0, send_msg(&c.p, MID_DATA, "early", 5));
	ASSERT_EQ(0, send_msg(&c.p, MID_DATA, "-on", 3));
	early = sdp_poll1(c.lfd, POLLIN, 1000) & POLLIN;
	TH_LOG("%s before the RTU", early ? "established (COMM_EST)" : "not acceptable");
	ASSERT_EQ(0, peer_establish(&c.p));
	ASSERT_NE(0, sdp_poll1(c.lfd, POLLIN, 10000) & POLLIN) TH_LOG("not acceptable");
	c.sfd = accept(c.lfd, NULL, NULL);
	ASSERT_LE(0, c.sfd);
	ASSERT_EQ(8, recv(c.sfd, buf, 8, MSG_WAITALL));
	EXPECT_EQ(0, memcmp(buf, "early-on", 8));
	ASSERT_EQ(0, send_msg(&c.p, MID_DATA, "late", 4));
	ASSERT_EQ(4, recv(c.sfd, buf, sizeof(buf), 0));
	EXPECT_EQ(0, memcmp(buf, "late", 4));
	ASSERT_EQ(4, send(c.sfd, "back", 4, 0));
	ASSERT_TRUE(peer_wait_for(&c.p, MID_DATA));
	EXPECT_EQ(0, memcmp(c.p.last_payload, "back", 4));
	client_down(_metadata, &c);
}

/*
 * A peer that used its last credits while our reader, having read, stopped
 * with data unread: the one buffer that read freed is announced after
 * TCP's delayed-ACK time, as TCP's ACK of the data would carry its window.
 * Before, the peer waited for good. The ring stays at its first 4 buffers
 * (net.sdp.rx_bufs), so no growth announces anything in its place.
 */
TEST(lone_free_buffer_reaches_a_stalled_peer)
{
	int rx_bufs = sdp_sysctl("rx_bufs"), i;
	FIXTURE_DATA(evil_client) c = {};
	char buf[8];
	double t0;

	sdp_sysctl_set("rx_bufs", 4);
	client_up(_metadata, &c);
	sdp_sysctl_set("rx_bufs", rx_bufs);
	ASSERT_EQ(3, c.p.their_bufs);
	ASSERT_EQ(0, send_msg(&c.p, MID_DATA, "a", 1));
	ASSERT_EQ(1, recv(c.sfd, buf, sizeof(buf), 0));
	/* (the peer still has credits: nothing is announced for one buffer) */
	ASSERT_EQ(0, send_msg(&c.p, MID_DATA, "b", 1));
	ASSERT_EQ(0, send_msg(&c.p, MID_DATA, "c", 1));
	t0 = sdp_now();
	for (i = 0; i < 300 && peer_credits(&c.p) < 1; i++)
		peer_poll(&c.p, 10);
	EXPECT_LE(1, peer_credits(&c.p)) TH_LOG("no credit in 3 s");
	TH_LOG("a credit after %.0f ms", (sdp_now() - t0) * 1000);
	ASSERT_EQ(0, send_msg(&c.p, MID_DATA, "d", 1));
	ASSERT_EQ(3, recv(c.sfd, buf, 3, MSG_WAITALL));
	EXPECT_EQ(0, memcmp(buf, "bcd", 3));
	client_down(_metadata, &c);
}

/*
 * A hand-made peer in a process of its own: it connects to @addr, writes
 * its QP number to @go, then sends Data within its credits (@sends), or
 * takes nothing at all, until it is killed.
 */
static void peer_process(const struct sockaddr_storage *addr, bool sends, int go)
{
	struct peer p = {};
	char reply[256];
	struct hh hello;
	int len;

	good_hello(&hello, PEER_BUFS - 1);
	if (peer_connect(&p, addr, &hello, reply, sizeof(reply), &len) ||
	    write(go, &p.qp->qp_num, sizeof(p.qp->qp_num)) != sizeof(p.qp->qp_num))
		_exit(1);
	for (;;) {
		if (!sends)
			pause();
		if (peer_credits(&p) > 0 && send_msg(&p, MID_DATA, "stream", 6))
			_exit(1);
		peer_poll(&p, 1);
	}
}

/*
 * The peer's process killed (SIGKILL) mid-transfer: its QP and rdma_cm id
 * go with it, and its CM disconnects without a DisConn. The kernel socket
 * resets (DisConnMissing): a reader blocked in recv(), or a sender blocked
 * on the credits the peer never gave, and an epoll waiter all hear of it
 * within seconds. Then everything of it is gone.
 */
static void peer_killed(struct __test_metadata *_metadata, bool kernel_sends)
{
	long long missing = sdp_stat("DisConnMissing");
	struct epoll_event ev = { .events = EPOLLERR };
	struct stream_io io = { .sends = kernel_sends };
	struct baseline before, now;
	struct sockaddr_storage addr;
	struct sdp_qp_state q;
	struct sdp_info info;
	unsigned int qpn = 0;
	int lfd, go[2], ep, i;
	socklen_t alen;
	pthread_t t;
	pid_t pid;

	baseline_read(&before);
	ASSERT_LE(0, before.qps);
	lfd = sdp_listener(sdp_family(), SDP_A, 8, &addr, &alen);
	ASSERT_LE(0, lfd);
	ASSERT_EQ(0, pipe(go));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		peer_process(&addr, !kernel_sends, go[1]);
	close(go[1]);
	ASSERT_EQ(sizeof(qpn), read(go[0], &qpn, sizeof(qpn))) TH_LOG("the peer did not connect");
	close(go[0]);
	io.fd = accept(lfd, NULL, NULL);
	ASSERT_LE(0, io.fd);
	ASSERT_EQ(0, pthread_create(&t, NULL, stream_io, &io));
	/* data flows; a sender then fills what the peer's credits allow */
	for (i = 0; i < 1000 && io.bytes < 600; i++)
		usleep(10000);
	for (i = 0; kernel_sends && i < 1000 && (sdp_poll1(io.fd, POLLOUT, 0) & POLLOUT); i++)
		usleep(10000);
	EXPECT_FALSE(atomic_load(&io.done));
	ASSERT_EQ(0, sdp_info(io.fd, &info));
	ASSERT_EQ(SDP_TRANSPORT_RDMA, info.transport);
	ASSERT_EQ(0, sdp_qp_state(info.ibdev, info.qp_num, &q));
	EXPECT_EQ(qpn, q.rqpn);
	EXPECT_LT(0, kernel_sends ? info.tx_msgs : info.rx_msgs);
	TH_LOG("%llu B %s over QP %u <-> %u", io.bytes, kernel_sends ? "sent" : "received",
	       info.qp_num, qpn);
	ep = epoll_create1(0);
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, io.fd, &ev));
	EXPECT_EQ(0, epoll_wait(ep, &ev, 1, 0));

	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, NULL, 0));
	/* (the blocked call may have taken the error from sk_err first) */
	EXPECT_EQ(1, epoll_wait(ep, &ev, 1, 10000));
	EXPECT_NE(0, ev.events & EPOLLHUP);
	ASSERT_TRUE(stream_io_ended(&io, 10)) TH_LOG("the kernel socket's caller still waits");
	pthread_join(t, NULL);
	EXPECT_EQ(-1, io.last);
	EXPECT_TRUE(io.err == ECONNRESET || (kernel_sends && io.err == EPIPE))
		TH_LOG("%s", strerror(io.err));
	EXPECT_EQ(missing + 1, sdp_stat("DisConnMissing"));
	close(ep);
	close(io.fd);
	close(lfd);
	EXPECT_TRUE(baseline_back(&before, &now, 10))
		TH_LOG(BASELINE_FMT, BASELINE_ARGS(&before, &now));
	if (_metadata->passed)
		fprintf(stderr, "# PROOF rdma %s qp %u<->%u, %u msgs %s\n", info.ibdev,
			info.qp_num, qpn, kernel_sends ? (unsigned int)info.tx_msgs :
			(unsigned int)info.rx_msgs, kernel_sends ? "out" : "in");
}

TEST(peer_process_killed_while_the_kernel_reads)
{
	peer_killed(_metadata, false);
}

/*
 * ... with the kernel's end on the shared receive queue, whose QP flushes
 * no receive when it goes to error: the end still comes, as a reset.
 */
TEST(peer_process_killed_while_the_kernel_reads_on_the_srq)
{
	long long srq = sdp_stat("SrqConnections");
	int shared = sdp_sysctl("shared_rq");

	ASSERT_LE(0, shared);
	sdp_sysctl_set("shared_rq", 1);
	peer_killed(_metadata, false);
	sdp_sysctl_set("shared_rq", shared);
	EXPECT_EQ(srq + 1, sdp_stat("SrqConnections"));
}

TEST(peer_process_killed_while_the_kernel_sends)
{
	peer_killed(_metadata, true);
}

/* What a peer's misstep is refused with, or how it ends the connection. */
static const char *const fuzz_reasons[] = {
	"BadMid", "UnexpectedMid", "BadLen", "BadMseq", "BadMseqAck", "BadBufs",
	"BadCredits", "BadFlags", "QpError", "AbortRcvd", "AbortOnData",
};
#define FUZZ_REASONS	(sizeof(fuzz_reasons) / sizeof(fuzz_reasons[0]))

static long long fuzz_reasons_sum(void)
{
	long long n = 0;

	for (size_t i = 0; i < FUZZ_REASONS; i++)
		n += sdp_stat(fuzz_reasons[i]);
	return n;
}

struct fuzz {
	unsigned char *sent;	/* every Data payload sent, in order */
	size_t nsent, nrecv;
	int resets, eofs, alive, msgs, bad;
	bool must_reset;	/* this connection had a misstep always refused: */
	size_t cut;		/* nothing sent from there on may arrive */
	int cut_kind;		/* that misstep, for the log */
	struct bsdh cut_h;
};

/* What the kernel socket has for us now; false once it ended (EOF, error). */
static bool fuzz_drain(int sfd, struct fuzz *f, unsigned char *got, int *err)
{
	ssize_t n;

	while ((n = recv(sfd, got + f->nrecv, 1 << 20, MSG_DONTWAIT)) > 0)
		f->nrecv += n;
	*err = n == 0 ? 0 : errno;
	return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

/*
 * One message of a random sequence: mostly a good Data message within our
 * credits, else one misstep. Returns true if the sequence goes on.
 */
static bool fuzz_one(struct peer *p, struct fuzz *f)
{
	static unsigned char payload[PEER_SIZE];
	struct ibv_send_wr wr = { .opcode = IBV_WR_SEND };
	uint32_t len = random() % 8 ? random() % 300 : random() % (PEER_SIZE - sizeof(struct bsdh));
	int kind = random() % 10 ? -1 : (int)(random() % 13);
	bool more = true;
	struct bsdh h;

	for (uint32_t i = 0; i < len; i++)
		payload[i] = random();
	if (kind < 0 && peer_credits(p) < 1)
		return true;	/* the kernel will say when: next round */
	next_header(p, &h, MID_DATA, len);
	f->msgs++;
	f->bad += kind >= 0;
	switch (kind) {
	case 0: h.mid = random(); break;
	case 1:
		for (int k = random() % 3; k >= 0; k--)
			((unsigned char *)&h)[random() % sizeof(h)] ^= 1 << (random() % 8);
		break;
	case 2: h.len = htonl(ntohl(h.len) + 1 + random() % 64); break;
	case 3: h.mseq = htonl(--p->mseq); break;		/* a duplicate */
	case 4: h.mseq = htonl(++p->mseq); break;		/* a gap */
	case 5:	/* past all the kernel can have sent: our receives bound it */
		h.mseq_ack = htonl(p->rx_mseq + PEER_BUFS + 1 + random() % 1000);
		break;
	case 6: h.bufs = htons(random()); break;
	case 7: h.flags = random(); break;
	case 8:						/* DisConn, half with data */
		h.mid = MID_DISCONN;
		if (random() % 2) {
			len = 0;
			h.len = htonl(sizeof(h));
		}
		more = false;
		break;
	case 9: h.mid = MID_ABORT; len = 0; h.len = htonl(sizeof(h)); more = false; break;
	case 10: wr.opcode = IBV_WR_SEND_WITH_IMM; wr.imm_data = random(); break;
	case 11: len = 0; h.len = htonl(8); break;		/* shorter than a header */
	case 12: break;						/* beyond our credits */
	}
	/* (bit flips, bufs, flags and credits may yet make a good message) */
	if (!f->must_reset &&
	    ((kind >= 2 && kind <= 5) || kind == 9 || kind == 10 || kind == 11 ||
	     (kind == 8 && len) ||
	     (kind == 0 && h.mid != MID_DATA && (h.mid != MID_DISCONN || len)))) {
		f->must_reset = true;
		f->cut = f->nsent;
		f->cut_kind = kind;
		f->cut_h = h;
	}
	if (h.mid == MID_DATA) {
		memcpy(f->sent + f->nsent, payload, len);
		f->nsent += len;
	}
	memcpy(send_slot(p), &h, sizeof(h));
	memcpy(send_slot(p) + sizeof(h), payload, len);
	if (post_send(p, &wr, kind == 11 ? 8 : sizeof(h) + len))
		return false;
	return more;
}

/* SDP_FUZZ_SECONDS bounds the next case, not a TEST()'s 30 s */
FIXTURE(random_peer) {};
FIXTURE_SETUP(random_peer) {}
FIXTURE_TEARDOWN(random_peer) {}

/*
 * For SDP_FUZZ_SECONDS (default 10, times sdp_slow(): the debug kernel got
 * through 4 connections in 10 s, too few to be sure one stays alive),
 * connection after connection (every other one the kernel's connect, the
 * rest to its listener): a random
 * sequence of up to 32 messages, mostly good Data within credits, some
 * missteps (a random id, flipped header bits, wrong lengths, mseq gaps and
 * duplicates, acks from the future, bufs and flag lies, DisConn with data,
 * Abort, immediate data, a runt, a credit overrun). Each connection ends
 * one of three ways: reset, with one of the reasons counted; at EOF after
 * a DisConn; or alive, with every byte sent arrived. Whatever arrived is
 * exactly the start of what was sent. Afterwards the SDP sockets, QPs and
 * CQs are back to their counts, and a good connection goes over RDMA.
 */
TEST_F_TIMEOUT(random_peer, sequences_for_a_bounded_time, 24 * 3600)
{
	const char *env = getenv("SDP_FUZZ_SECONDS");
	double end = sdp_now() + (env ? atoi(env) : 10) * sdp_slow();
	static unsigned char got[64 << 20];
	FIXTURE_DATA(evil_client) c = {};
	struct fuzz f = { .sent = malloc(64 << 20) };
	struct baseline before, now;
	unsigned int seed = time(NULL);
	int one = 1, conns = 0;

	ASSERT_NE(NULL, f.sent);
	baseline_read(&before);
	ASSERT_LE(0, before.qps);
	srandom(seed);
	TH_LOG("seed %u", seed);
	while (sdp_now() < end && f.nsent < (60 << 20)) {
		long long reasons = fuzz_reasons_sum(), disconns = sdp_stat("DisConnRcvd");
		int n = 1 + random() % 32, err = EAGAIN;
		bool going = true, open = true;
		size_t start = f.nsent;

		/* every other one to a kernel that connected */
		c.server = conns & 1;
		client_up(_metadata, &c);
		ASSERT_EQ(0, setsockopt(c.sfd, SOL_SOCKET, SO_OOBINLINE, &one, sizeof(one)));
		f.nrecv = start;
		f.must_reset = false;
		for (int i = 0; i < n && going && open; i++) {
			going = fuzz_one(&c.p, &f);
			peer_poll(&c.p, 2);
			open = fuzz_drain(c.sfd, &f, got, &err);
		}
		/* alive: one good message more, and everything must arrive */
		if (going && open) {
			struct bsdh h;

			for (int i = 0; i < 200 && peer_credits(&c.p) < 1; i++)
				peer_poll(&c.p, 10);
			next_header(&c.p, &h, MID_DATA, 4);
			ASSERT_EQ(0, send_raw(&c.p, &h, "end.", 4));
			memcpy(f.sent + f.nsent, "end.", 4);
			f.nsent += 4;
		}
		/* then what is left: until all of it, the end, or 5 s of silence */
		while (open && (f.nrecv < f.nsent || !going)) {
			if (!(sdp_poll1(c.sfd, POLLIN, 5000) & (POLLIN | POLLERR | POLLHUP)))
				break;
			peer_poll(&c.p, 1);
			open = fuzz_drain(c.sfd, &f, got, &err);
		}
		EXPECT_EQ(0, memcmp(got + start, f.sent + start, f.nrecv - start))
			TH_LOG("connection %d: bytes that were not sent", conns);
		EXPECT_GE(f.nsent, f.nrecv);
		EXPECT_FALSE(open && !going) TH_LOG("connection %d: ended by us, not by the kernel", conns);
		EXPECT_FALSE(f.must_reset && (open || !err))
			TH_LOG("connection %d: a misstep let through", conns);
		EXPECT_FALSE(f.must_reset && f.nrecv > f.cut)
			TH_LOG("connection %d: data from a misstep on delivered (kind %d: mid 0x%02x len %u mseq %u ack %u bufs %u flags 0x%02x)",
			       conns, f.cut_kind, f.cut_h.mid, ntohl(f.cut_h.len), ntohl(f.cut_h.mseq),
			       ntohl(f.cut_h.mseq_ack), ntohs(f.cut_h.bufs), f.cut_h.flags);
		if (open) {
			f.alive++;
			EXPECT_EQ(f.nsent, f.nrecv) TH_LOG("connection %d: alive, %zu of %zu bytes",
							   conns, f.nrecv - start, f.nsent - start);
		} else if (err) {
			f.resets++;
			EXPECT_TRUE(err == ECONNRESET || err == EPIPE) TH_LOG("%s", strerror(err));
			EXPECT_LT(reasons, fuzz_reasons_sum()) TH_LOG("connection %d: reset, no reason counted", conns);
		} else {
			f.eofs++;
			EXPECT_LT(disconns, sdp_stat("DisConnRcvd"));
		}
		f.nsent = f.nrecv;	/* the next connection starts afresh */
		close(c.sfd);
		close(c.good[0]);
		close(c.good[1]);
		close(c.lfd);
		peer_free(&c.p);
		conns++;
		if (!_metadata->passed)
			break;
	}
	TH_LOG("%d connections, %d messages (%d missteps): %d reset, %d at EOF, %d alive",
	       conns, f.msgs, f.bad, f.resets, f.eofs, f.alive);
	EXPECT_LT(0, f.resets);
	EXPECT_LT(0, f.alive);
	EXPECT_TRUE(baseline_back(&before, &now, 30))
		TH_LOG(BASELINE_FMT, BASELINE_ARGS(&before, &now));
	free(f.sent);
	/* and the next connection is a good one, over RDMA */
	client_up(_metadata, &c);
	ASSERT_EQ(0, send_msg(&c.p, MID_DATA, "fine", 4));
	ASSERT_EQ(4, recv(c.sfd, got, 4, 0));
	client_down(_metadata, &c);
}

/* One field of a Hello or HelloAck set to @value (@size bytes, big-endian). */
struct mutation {
	int off, size;
	uint32_t value;
};

static void mutate(void *msg, const struct mutation *m)
{
	unsigned char *b = (unsigned char *)msg + m->off;

	for (int i = 0; i < m->size; i++)
		b[i] = m->value >> (8 * (m->size - 1 - i));
}

/* Where each field is: struct bsdh, then the Hello's or HelloAck's own. */
#define F_MID		0, 1
#define F_BUFS		2, 2
#define F_LEN		4, 4
#define F_VERSION	16, 1
#define F_SIZE		24, 4	/* Hello: localrcvsz */
#define F_ACT_SIZE	20, 4	/* HelloAck: actrcvsz */

#ifndef SDP_WIRE_PART
/* Hellos the listener must refuse, with the reason its reject gives. */
FIXTURE(evil_hello) {
	int lfd;
	struct sockaddr_storage addr;
	socklen_t alen;
	struct peer p;
};

FIXTURE_VARIANT(evil_hello) {
	struct mutation m;
	int reason;	/* SDP_REJ_VERSION 1, SDP_REJ_MALFORMED 2 */
};

#define HELLO_VARIANT(name, field, v, why)				\
	FIXTURE_VARIANT_ADD(evil_hello, name) { .m = { field, v }, .reason = why }
HELLO_VARIANT(version_1, F_VERSION, 0x10, 1);
HELLO_VARIANT(version_3, F_VERSION, 0x30, 1);
HELLO_VARIANT(not_a_hello, F_MID, 0xFF, 2);
HELLO_VARIANT(length_short, F_LEN, 16, 2);
HELLO_VARIANT(length_beyond, F_LEN, 56, 2);
HELLO_VARIANT(too_few_bufs, F_BUFS, 1, 2);
HELLO_VARIANT(bufs_beyond_max, F_BUFS, 256, 2);
HELLO_VARIANT(size_tiny, F_SIZE, 16, 2);
HELLO_VARIANT(size_huge, F_SIZE, 1 << 30, 2);

FIXTURE_SETUP(evil_hello)
{
	memset(&self->p, 0, sizeof(self->p));
	self->lfd = sdp_listener(sdp_family(), SDP_A, 8, &self->addr, &self->alen);
	ASSERT_LE(0, self->lfd);
}

/* Refused before any connection. */
FIXTURE_TEARDOWN(evil_hello)
{
	SDP_PROVE_LOCAL();
	close(self->lfd);
	peer_free(&self->p);
}

TEST_F(evil_hello, refused)
{
	long long bad = sdp_stat("BadHello"), rejected = sdp_stat("RejectSent");
	struct baseline before, now;
	struct hh hello;
	char rej[256];
	int len = 0;

	baseline_read(&before);
	good_hello(&hello, PEER_BUFS - 1);
	mutate(&hello, &variant->m);
	EXPECT_EQ(1000 + RDMA_CM_EVENT_REJECTED,
		  peer_connect(&self->p, &self->addr, &hello, rej, sizeof(rej), &len));
	ASSERT_LE(2, len);
	EXPECT_EQ(MID_HELLO, rej[0]);
	EXPECT_EQ(variant->reason, rej[1]);
	EXPECT_EQ(bad + 1, sdp_stat("BadHello"));
	EXPECT_EQ(rejected + 1, sdp_stat("RejectSent"));
	/* no child, no QP: refused before anything was built (the peer's own go first) */
	peer_free(&self->p);
	memset(&self->p, 0, sizeof(self->p));
	EXPECT_TRUE(baseline_back(&before, &now, 5))
		TH_LOG(BASELINE_FMT, BASELINE_ARGS(&before, &now));
}
#endif /* (SDP_WIRE_PART: 6.1 runs them) */

/*
 * What the socket holds, as SO_MEMINFO says: receive buffers, send buffers
 * in flight, and what it has charged ahead (its forward allocation).
 */
static long socket_memory(int fd, int *rcvbuf, int *sndbuf)
{
	__u32 m[SK_MEMINFO_VARS];
	socklen_t len = sizeof(m);

	if (getsockopt(fd, SOL_SOCKET, SO_MEMINFO, m, &len))
		return -1;
	*rcvbuf = m[SK_MEMINFO_RCVBUF];
	*sndbuf = m[SK_MEMINFO_SNDBUF];
	return (long)m[SK_MEMINFO_RMEM_ALLOC] + m[SK_MEMINFO_WMEM_QUEUED] +
	       m[SK_MEMINFO_FWD_ALLOC];
}

/*
 * A peer that asks for the largest buffers (128 KiB both ways), never
 * reads, and sends all its credits allow while our reader never reads: we
 * keep our own receive size, the receive ring stops at its size, and the
 * send ring, filled while the peer's credits are gone, holds no more bytes
 * than it was sized for in ours (before, 16 buffers of the peer's 128 KiB:
 * 2 MiB). Everything the socket holds stays within twice its SO_RCVBUF and
 * SO_SNDBUF together, as SO_MEMINFO counts it (and as /proc/net/protocols
 * and a memory cgroup are charged: sdp_mem).
 */
TEST(huge_buffer_peer_never_reading_cannot_grow_our_memory)
{
	long size = sdp_sysctl("buf_size");
	long bufs = sdp_sysctl("tx_bufs");
	static char payload[PEER_SIZE - sizeof(struct bsdh)];
	struct sockaddr_storage addr;
	unsigned long long held;
	int lfd, sfd, reply_len, sent = 0, rcvbuf = 0, sndbuf = 0, flood = 0, i;
	struct sdp_qp_state q;
	struct peer p = {};
	struct sdp_info info;
	char reply[256], chunk[1024] = "";
	long mem, high = 0;
	socklen_t alen;
	struct hh hello;
	ssize_t n = 0;

	ASSERT_LT(0, size);
	ASSERT_LT(0, bufs);
	lfd = sdp_listener(sdp_family(), SDP_A, 8, &addr, &alen);
	ASSERT_LE(0, lfd);
	good_hello(&hello, PEER_BUFS - 1);
	hello.desremrcvsz = htonl(128 << 10);
	hello.localrcvsz = htonl(128 << 10);
	ASSERT_EQ(0, peer_connect(&p, &addr, &hello, reply, sizeof(reply), &reply_len));
	sfd = accept(lfd, NULL, NULL);
	ASSERT_LE(0, sfd);
	ASSERT_EQ(0, fcntl(sfd, F_SETFL, O_NONBLOCK));
	/* small messages take the peer's credits, then the ring fills */
	ASSERT_EQ(0, sdp_setint(sfd, SOL_TCP, TCP_NODELAY, 1));
	while (sent < (64 << 20) && (n = send(sfd, chunk, sizeof(chunk), 0)) > 0)
		sent += n;
	EXPECT_EQ(-1, n);
	EXPECT_EQ(EAGAIN, errno);
	high = socket_memory(sfd, &rcvbuf, &sndbuf);
	/*
	 * The peer sends all its credits allow, rounds until none come back,
	 * saying it has no buffer free (bufs 0): it reads nothing. It acks
	 * what came, so that our side can still announce its ring's growth.
	 */
	peer_poll(&p, 100);
	for (i = 0; i < 100; i++) {
		int before = flood;
		struct bsdh h;

		while (peer_credits(&p) > 0) {
			next_header(&p, &h, MID_DATA, sizeof(payload));
			h.bufs = 0;
			if (send_raw(&p, &h, payload, sizeof(payload)))
				break;
			flood++;
		}
		peer_poll(&p, 100);
		mem = socket_memory(sfd, &rcvbuf, &sndbuf);
		if (mem > high)
			high = mem;
		if (flood == before && peer_credits(&p) <= 0)
			break;
	}
	ASSERT_EQ(0, sdp_info(sfd, &info));
	held = (unsigned long long)info.rx_bufs_held * info.rcv_size +
	       (unsigned long long)info.tx_bufs_held * info.snd_size;
	TH_LOG("%d B taken, %d messages of %zu B in; held %llu KiB: %u receive buffers of %u B, %u send buffers of %u B",
	       sent, flood, sizeof(payload), held >> 10, info.rx_bufs_held, info.rcv_size,
	       info.tx_bufs_held, info.snd_size);
	TH_LOG("high-water %ld KiB (SO_MEMINFO), SO_RCVBUF %d KiB + SO_SNDBUF %d KiB",
	       high >> 10, rcvbuf >> 10, sndbuf >> 10);
	EXPECT_EQ(size, info.rcv_size);
	EXPECT_EQ(128 << 10, info.snd_size);
	/* the ring's bytes in our size, or two of the peer's messages */
	EXPECT_LE((unsigned long long)info.tx_bufs_held * info.snd_size,
		  (unsigned long long)(bufs * size > 2 * info.snd_size ? bufs * size :
				       2 * info.snd_size));
	/* the receive ring grew as the peer used its credits, to its size */
	EXPECT_LT(4, info.rx_bufs_held);
	EXPECT_LE(info.rx_bufs_held, sdp_sysctl("rx_bufs"));
	EXPECT_LE(high, 2L * (rcvbuf + sndbuf));
	/* the messages went over our QP to the peer's */
	ASSERT_EQ(SDP_TRANSPORT_RDMA, info.transport);
	ASSERT_EQ(0, sdp_qp_state(info.ibdev, info.qp_num, &q));
	EXPECT_EQ(p.qp->qp_num, q.rqpn);
	EXPECT_LT(0, info.tx_msgs);
	EXPECT_EQ(flood, info.rx_msgs);
	if (_metadata->passed)
		fprintf(stderr, "# PROOF rdma %s qp %u<->%u, %u msgs out, %u in\n", info.ibdev,
			info.qp_num, p.qp->qp_num, (unsigned int)info.tx_msgs,
			(unsigned int)info.rx_msgs);
	close(sfd);
	close(lfd);
	peer_free(&p);
}

/*
 * Half a connection: a good Hello and no QP, so the listener's REP gets no
 * RTU (rdma_cm waits for rdma_establish()). @qpn: the listener's QP.
 */
static int half_open(struct peer *p, const struct sockaddr_storage *dst,
		     unsigned int *qpn, unsigned char rej[4])
{
	static unsigned int fake_qpn = 0x4242;
	struct hh hello;
	/* each its own QP number: the CM refuses a second as stale */
	struct rdma_conn_param param = { .private_data = &hello,
					 .private_data_len = sizeof(hello),
					 .qp_num = fake_qpn++ };
	struct rdma_cm_event *ev;
	int got;

	good_hello(&hello, PEER_BUFS - 1);
	if (peer_route(p, dst) || rdma_connect(p->id, &param) ||
	    rdma_get_cm_event(p->ec, &ev))
		return -1;
	got = ev->event;
	*qpn = ev->param.conn.qp_num;
	/* a reject's private data: SDP's reason, and when to try again */
	if (rej && got == RDMA_CM_EVENT_REJECTED && ev->param.conn.private_data &&
	    ev->param.conn.private_data_len >= 4)
		memcpy(rej, ev->param.conn.private_data, 4);
	rdma_ack_cm_event(ev);
	return got == RDMA_CM_EVENT_CONNECT_RESPONSE ? 0 : got + 1000;
}

/* The child's QP for half-open @qpn is gone (its teardown is a work item). */
static bool half_open_freed(struct peer *p, unsigned int qpn)
{
	struct sdp_qp_state q;

	for (int k = 0; k < 50 && !sdp_qp_state(p->id->verbs->device->name, qpn, &q); k++)
		usleep(100000);
	return sdp_qp_state(p->id->verbs->device->name, qpn, &q) != 0;
}

/*
 * A real client connects (non-blocking) to @addr: how long it waited, and
 * its bytes over RDMA to the connection @lfd accepts.
 */
static double real_client(struct __test_metadata *_metadata, int lfd,
			  const struct sockaddr_storage *addr, socklen_t alen)
{
	char buf[3000] = "after the half-open ones";
	struct sdp_proof proof;
	double t0, waited;
	int fd, a, err;

	t0 = sdp_now();
	fd = socket(sdp_family(), SOCK_STREAM | SOCK_NONBLOCK, 0);
	EXPECT_LE(0, fd);
	EXPECT_EQ(-1, connect(fd, (struct sockaddr *)addr, alen));
	EXPECT_EQ(EINPROGRESS, errno);
	EXPECT_EQ(POLLOUT, sdp_poll1(fd, POLLOUT, 30000) & POLLOUT);
	waited = sdp_now() - t0;
	TH_LOG("the real client waited %.1f s", waited);
	err = sdp_getint(fd, SOL_SOCKET, SO_ERROR);
	EXPECT_EQ(0, err) TH_LOG("connect: %s", strerror(err));
	if (err) {
		close(fd);
		return waited;
	}
	EXPECT_EQ(SDP_TRANSPORT_RDMA, sdp_transport(fd))
		TH_LOG("fallback reason %d", sdp_getint(fd, SOL_SDP, SDP_FALLBACK_REASON));
	a = accept(lfd, NULL, NULL);
	EXPECT_LE(0, a);
	if (a >= 0 && !sdp_proof_begin(&proof, fd, a)) {
		EXPECT_EQ(sizeof(buf), send(fd, buf, sizeof(buf), 0));
		EXPECT_EQ(sizeof(buf), sdp_read_full(a, buf, sizeof(buf)));
		SDP_PROVE(&proof);
	} else {
		EXPECT_TRUE(false) TH_LOG("no connection to prove");
	}
	close(a);
	close(fd);
	return waited;
}

/*
 * Clients that never complete their connections (no RTU): each holds a
 * place for net.sdp.syn_timeout_ms at most, in its listener's backlog and
 * in the namespace's net.sdp.max_half_open; a request refused meanwhile is
 * told when the oldest is dropped, and a real client tries again then, not
 * at TCP's next SYN retry. A backlog of 1 takes two (backlog + 1, as TCP).
 */
#define IPV4_SYSCTL	"/proc/sys/net/ipv4"

FIXTURE(half_open) {
	int saved_syn, saved_ct, saved_max, saved_syn_retries;
	struct peer evil[5];
	unsigned int qpn[5];
	int lfd;
	struct sockaddr_storage addr;
	socklen_t alen;
};

FIXTURE_SETUP(half_open)
{
	memset(self->evil, 0, sizeof(self->evil));
	self->saved_syn = sdp_sysctl("syn_timeout_ms");
	self->saved_ct = sdp_sysctl("connect_timeout_ms");
	self->saved_max = sdp_sysctl("max_half_open");
	self->saved_syn_retries = sdp_read_int(IPV4_SYSCTL, "tcp_syn_retries");
	ASSERT_LT(0, self->saved_max);
	ASSERT_LT(0, self->saved_syn_retries);
	/* the real client's connect may take its time on a slow kernel */
	sdp_sysctl_set("connect_timeout_ms", 20000);
	self->lfd = sdp_listener(sdp_family(), SDP_A, 1, &self->addr, &self->alen);
	ASSERT_LE(0, self->lfd);
}

FIXTURE_TEARDOWN(half_open)
{
	close(self->lfd);
	for (int i = 0; i < 5; i++)
		peer_free(&self->evil[i]);
	sdp_sysctl_set("syn_timeout_ms", self->saved_syn);
	sdp_sysctl_set("connect_timeout_ms", self->saved_ct);
	sdp_sysctl_set("max_half_open", self->saved_max);
	sdp_write_int(IPV4_SYSCTL, "tcp_syn_retries", self->saved_syn_retries);
}

/* @n half-open connections to @addr, each with its child's QP. */
static void hold_places(struct __test_metadata *_metadata, FIXTURE_DATA(half_open) *self,
			const struct sockaddr_storage *addr, int n)
{
	struct sdp_qp_state q;

	for (int i = 0; i < n; i++) {
		ASSERT_EQ(0, half_open(&self->evil[i], addr, &self->qpn[i], NULL))
			TH_LOG("half-open %d", i);
		/* the child's QP exists, waiting for an RTU */
		ASSERT_EQ(0, sdp_qp_state(self->evil[i].id->verbs->device->name,
					  self->qpn[i], &q));
	}
}

/* Nobody else comes: both are dropped at syn_timeout_ms with their QPs. */
TEST_F(half_open, dropped_after_syn_timeout)
{
	long long timeouts = sdp_stat("SynTimeout");
	double t0;
	int i;

	sdp_sysctl_set("syn_timeout_ms", 1500);
	ASSERT_EQ(1500, sdp_sysctl("syn_timeout_ms"));
	t0 = sdp_now();
	hold_places(_metadata, self, &self->addr, 2);
	for (i = 0; i < 100 && sdp_stat("SynTimeout") < timeouts + 2; i++)
		usleep(100000);
	TH_LOG("dropped after %.1f s", sdp_now() - t0);
	EXPECT_EQ(timeouts + 2, sdp_stat("SynTimeout"));
	EXPECT_LE(1.4, sdp_now() - t0);
	for (i = 0; i < 2; i++) {
		EXPECT_TRUE(half_open_freed(&self->evil[i], self->qpn[i]))
			TH_LOG("half-open %d: the child's QP %u is still there", i, self->qpn[i]);
	}
	real_client(_metadata, self->lfd, &self->addr, self->alen);
}

#define HELD_MS		4000

/*
 * A peer holding the listener's whole backlog delays a real client until
 * its places time out (HELD_MS here), not beyond: refused as busy, the
 * client tries again when the reject says, while TCP's SYN retries alone
 * (1, 3, 7 s) would take it to 7 s. The held children go at their time
 * (SynTimeout), their QPs with them.
 */
TEST_F(half_open, real_client_behind_a_held_backlog)
{
	long long busy = sdp_stat("BacklogBusy"), timeouts = sdp_stat("SynTimeout");
	double waited;

	sdp_sysctl_set("syn_timeout_ms", HELD_MS);
	hold_places(_metadata, self, &self->addr, 2);
	waited = real_client(_metadata, self->lfd, &self->addr, self->alen);
	EXPECT_GT(HELD_MS / 1000.0 + 1, waited);
	EXPECT_LE(busy + 1, sdp_stat("BacklogBusy"));
	EXPECT_EQ(timeouts + 2, sdp_stat("SynTimeout"));
	for (int i = 0; i < 2; i++) {
		EXPECT_TRUE(half_open_freed(&self->evil[i], self->qpn[i]))
			TH_LOG("half-open %d: the child's QP %u is still there", i, self->qpn[i]);
	}
}

/*
 * Refusals are not SYN retries: with tcp_syn_retries 2, TCP's connect()
 * tries for 1 + 2 + 4 s, which outlasts places held 5 s. The client is
 * refused at 0, 1 and 3 s (then told a place frees in about 2 s) and must
 * still get in, not fail at its third refusal.
 */
TEST_F(half_open, refusals_do_not_shorten_tcps_connect_time)
{
	long long retries = sdp_stat("ConnectRetries"), failed = sdp_stat("ConnectFailed");

	sdp_sysctl_set("syn_timeout_ms", 5000);
	sdp_write_int(IPV4_SYSCTL, "tcp_syn_retries", 2);
	ASSERT_EQ(2, sdp_read_int(IPV4_SYSCTL, "tcp_syn_retries"));
	hold_places(_metadata, self, &self->addr, 2);
	real_client(_metadata, self->lfd, &self->addr, self->alen);
	TH_LOG("ConnectRetries +%lld", sdp_stat("ConnectRetries") - retries);
	EXPECT_LE(retries + 3, sdp_stat("ConnectRetries"));
	EXPECT_EQ(failed, sdp_stat("ConnectFailed"));
}

/*
 * A place's end is told to one refused client, not to all: with two held,
 * three more clients are refused; the first two hear when a place frees,
 * the third nothing (TCP's retry delays), else all would come back at that
 * instant. (A client refused again hears of its place again: the real
 * client above gets in at the end of the first.)
 */
TEST_F(half_open, each_place_is_announced_to_one_client)
{
	long long busy = sdp_stat("BacklogBusy");
	unsigned char rej[4];
	unsigned int qpn, ms[3];

	sdp_sysctl_set("syn_timeout_ms", HELD_MS);
	hold_places(_metadata, self, &self->addr, 2);
	for (int i = 0; i < 3; i++) {
		memset(rej, 0, sizeof(rej));
		ASSERT_EQ(1000 + RDMA_CM_EVENT_REJECTED,
			  half_open(&self->evil[2 + i], &self->addr, &qpn, rej));
		EXPECT_EQ(MID_HELLO, rej[0]);
		EXPECT_EQ(4, rej[1]);		/* SDP_REJ_BUSY */
		ms[i] = rej[2] << 8 | rej[3];
	}
	TH_LOG("refused three: places free in %u, %u and %u ms", ms[0], ms[1], ms[2]);
	EXPECT_LT(0, ms[0]);
	EXPECT_GE(HELD_MS, ms[0]);
	EXPECT_LT(0, ms[1]);
	EXPECT_GE(HELD_MS, ms[1]);
	EXPECT_EQ(0, ms[2]);
	EXPECT_EQ(busy + 3, sdp_stat("BacklogBusy"));
	/* refused before any connection; the held ones have no data path */
	SDP_PROVE_LOCAL();
}

/*
 * net.sdp.max_half_open bounds such connections over all the namespace's
 * listeners: with 2 held at one listener, a request to another is refused
 * (HalfOpenFull), its reject saying when a place frees; a real client
 * there gets through then.
 */
TEST_F(half_open, namespace_cap)
{
	long long full = sdp_stat("HalfOpenFull");
	struct sockaddr_storage addr;
	unsigned char rej[4] = "";
	unsigned int qpn, ms;
	socklen_t alen;
	double waited;
	int l;

	sdp_sysctl_set("syn_timeout_ms", HELD_MS);
	sdp_sysctl_set("max_half_open", 2);
	ASSERT_EQ(2, sdp_sysctl("max_half_open"));
	l = sdp_listener(sdp_family(), SDP_A, 64, &addr, &alen);
	ASSERT_LE(0, l);
	hold_places(_metadata, self, &addr, 2);
	/* a third is refused at once, wherever it goes */
	EXPECT_EQ(1000 + RDMA_CM_EVENT_REJECTED,
		  half_open(&self->evil[2], &self->addr, &qpn, rej));
	EXPECT_EQ(full + 1, sdp_stat("HalfOpenFull"));
	ms = rej[2] << 8 | rej[3];
	EXPECT_EQ(MID_HELLO, rej[0]);
	EXPECT_EQ(4, rej[1]);		/* SDP_REJ_BUSY */
	EXPECT_LT(0, ms);
	EXPECT_GE(HELD_MS, ms);
	TH_LOG("refused: a place frees in %u ms", ms);
	waited = real_client(_metadata, self->lfd, &self->addr, self->alen);
	EXPECT_GT(HELD_MS / 1000.0 + 1, waited);
	EXPECT_LE(full + 2, sdp_stat("HalfOpenFull"));
	close(l);
}

/* The kernel connects with SDP to a hand-made listener. */
struct evil_server {
	struct peer p;
	int port;
	bool reject;		/* a bare reject, or: */
	int busy_ms;		/* first refuses as busy, this late */
	double refused_at, again_at;	/* then: when, and the next request */
	struct mutation m;	/* what is wrong with our HelloAck */
	bool vanish;		/* its id destroyed right after the REP */
	int ready;
	int event;		/* 0, or the unexpected event + 1000 */
	int answer;		/* after our HelloAck: 0 (established), or as event */
	struct hh hello;	/* what the kernel sent */
	int hello_len;
};

static void *evil_server(void *arg)
{
	struct evil_server *s = arg;
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(s->port) };
	struct rdma_conn_param param = {};
	struct hah hah = {};

	inet_pton(AF_INET, SDP_A, &sin.sin_addr);
	s->p.ec = rdma_create_event_channel();
	if (!s->p.ec || rdma_create_id(s->p.ec, &s->p.listen_id, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(s->p.listen_id, (struct sockaddr *)&sin) ||
	    rdma_listen(s->p.listen_id, 1)) {
		s->ready = -1;
		return NULL;
	}
	s->ready = 1;
	s->event = wait_event(&s->p, RDMA_CM_EVENT_CONNECT_REQUEST, &s->hello,
			      sizeof(s->hello), &s->hello_len);
	if (s->event)
		return NULL;
	if (s->busy_ms) {
		static const unsigned char busy[4] = { MID_HELLO, 4 /* SDP_REJ_BUSY */ };

		usleep(s->busy_ms * 1000);
		rdma_reject(s->p.id, busy, sizeof(busy));
		s->refused_at = sdp_now();
		rdma_destroy_id(s->p.id);
		s->p.id = NULL;
		s->event = wait_event(&s->p, RDMA_CM_EVENT_CONNECT_REQUEST, NULL, 0, NULL);
		s->again_at = sdp_now();
		if (s->event)
			return NULL;
	}
	if (s->reject) {
		rdma_reject(s->p.id, NULL, 0);
		return NULL;
	}
	if (peer_qp(&s->p))
		return NULL;
	fill_bsdh(&hah.bsdh, MID_HELLO_ACK, PEER_BUFS - 1, sizeof(hah));
	hah.majv_minv = 0x22;
	hah.ipv_cap = s->hello.ipv_cap;
	hah.actrcvsz = htonl(PEER_SIZE);
	mutate(&hah, &s->m);
	param.private_data = &hah;
	param.private_data_len = sizeof(hah);
	param.rnr_retry_count = 7;
	rdma_accept(s->p.id, &param);
	if (s->vanish) {
		/* its CM answers our RTU, if it comes after, with a REJ */
		rdma_destroy_id(s->p.id);
		s->p.id = NULL;
		return NULL;
	}
	s->answer = wait_event(&s->p, RDMA_CM_EVENT_ESTABLISHED, NULL, 0, NULL);
	return NULL;
}

/*
 * The evil server on SDP_A, with a TCP listener on the same port for the
 * fallback: the listener's fd, or -errno.
 */
static int evil_start(struct evil_server *s, struct sockaddr_storage *ss, socklen_t *len,
		      pthread_t *t)
{
	int tl;

	*len = sdp_addr(ss, SDP_A, 0);
	tl = socket(AF_INET, SOCK_STREAM, 0);
	if (bind(tl, (struct sockaddr *)ss, *len) || listen(tl, 1) ||
	    getsockname(tl, (struct sockaddr *)ss, len)) {
		close(tl);
		return -errno;
	}
	s->port = ntohs(((struct sockaddr_in *)ss)->sin_port);
	if (pthread_create(t, NULL, evil_server, s)) {
		close(tl);
		return -EAGAIN;
	}
	while (!s->ready)
		usleep(1000);
	return tl;
}

/*
 * The kernel connects to the hand-made listener, which holds the RDMA port;
 * a TCP listener holds the same port, so the refused RDMA attempt must show
 * as the fallback it is (a connection over TCP with the right reason), not
 * as a refusal TCP would give anyway. The TCP listener takes a port of the
 * kernel's choosing (a fixed one may be an earlier connection's), the hand-
 * made one the same number. Returns the connected socket or -errno;
 * @reason gets SDP_FALLBACK_REASON.
 */
static int connect_to_evil(struct __test_metadata *_metadata, struct evil_server *s,
			   int *reason)
{
	struct sockaddr_storage ss;
	socklen_t len;
	pthread_t t;
	int fd, err, tl;
	char got[3];

	tl = evil_start(s, &ss, &len, &t);
	if (tl < 0)
		return tl;
	fd = sdp_connect(sdp_family(), &ss, len);
	err = fd < 0 ? errno : 0;
	*reason = fd < 0 ? -1 : sdp_getint(fd, SOL_SDP, SDP_FALLBACK_REASON);
	if (fd >= 0) {
		int a = accept(tl, NULL, NULL);

		/* the bytes go over the fallback connection */
		if (a < 0 || send(fd, "tcp", 3, 0) != 3 || recv(a, got, 3, MSG_WAITALL) != 3)
			err = EPROTO;
		close(a);
	}
	close(tl);
	pthread_join(t, NULL);
	peer_free(&s->p);
	if (err) {
		if (fd >= 0)
			close(fd);
		return -err;
	}
	return fd;
}

/*
 * The kernel connects to a listener whose answer it must refuse: a bare
 * reject (FallbackRejected), or a HelloAck it cannot work with
 * (FallbackVersion, BadHello): it rejects the REP, never sending the RTU,
 * and falls back, or with net.sdp.rdma_only fails with ECONNREFUSED.
 */
static void refused(struct __test_metadata *_metadata, struct evil_server *s, bool rdma_only)
{
	const char *counter = s->reject ? "FallbackRejected" : "FallbackVersion";
	long long fb = sdp_stat(counter), bad = sdp_stat("BadHello");
	int fd, why, saved = sdp_sysctl("rdma_only");

	sdp_sysctl_set("rdma_only", rdma_only);
	ASSERT_EQ(rdma_only, sdp_sysctl("rdma_only"));
	fd = connect_to_evil(_metadata, s, &why);
	sdp_sysctl_set("rdma_only", saved);
	ASSERT_EQ(1, s->ready) TH_LOG("the evil server did not start");
	EXPECT_EQ(0, s->event);
	EXPECT_EQ(bad + !s->reject, sdp_stat("BadHello"));
	/* a refused HelloAck gets a reject, never the RTU */
	if (!s->reject)
		EXPECT_EQ(1000 + RDMA_CM_EVENT_REJECTED, s->answer);
	if (rdma_only) {
		EXPECT_EQ(-ECONNREFUSED, fd);
		if (fd >= 0)
			close(fd);
		SDP_PROVE_LOCAL();
		return;
	}
	ASSERT_LE(0, fd) TH_LOG("connect: %s", strerror(-fd));
	EXPECT_EQ(SDP_TRANSPORT_TCP, sdp_transport(fd));
	EXPECT_EQ(s->reject ? SDP_FB_REJECTED : SDP_FB_VERSION, why);
	EXPECT_EQ(fb + 1, sdp_stat(counter));
	if (_metadata->passed)
		fprintf(stderr, "# PROOF fallback reason=%d\n", why);
	close(fd);
}

#ifndef SDP_WIRE_PART
/* HelloAcks the connecting kernel must refuse. */
FIXTURE(evil_hello_ack) {};
FIXTURE_SETUP(evil_hello_ack) {}
FIXTURE_TEARDOWN(evil_hello_ack) {}

FIXTURE_VARIANT(evil_hello_ack) {
	struct mutation m;
};

#define HELLO_ACK_VARIANT(name, field, v)				\
	FIXTURE_VARIANT_ADD(evil_hello_ack, name) { .m = { field, v } }
HELLO_ACK_VARIANT(version_1, F_VERSION, 0x10);
HELLO_ACK_VARIANT(not_a_hello_ack, F_MID, MID_HELLO);
HELLO_ACK_VARIANT(length_beyond, F_LEN, 28);
HELLO_ACK_VARIANT(too_few_bufs, F_BUFS, 1);
HELLO_ACK_VARIANT(bufs_beyond_max, F_BUFS, 256);
HELLO_ACK_VARIANT(size_tiny, F_ACT_SIZE, 16);
HELLO_ACK_VARIANT(size_huge, F_ACT_SIZE, 1 << 30);

TEST_F(evil_hello_ack, falls_back)
{
	struct evil_server s = { .m = variant->m };

	refused(_metadata, &s, false);
}

TEST_F(evil_hello_ack, rdma_only_fails)
{
	struct evil_server s = { .m = variant->m };

	refused(_metadata, &s, true);
}
#endif /* (SDP_WIRE_PART: 6.1 runs them) */

TEST(connect_refused_by_reject)
{
	struct evil_server s = { .reject = true };

	refused(_metadata, &s, false);
}

/*
 * A listener slow to refuse is congested: its CM serves requests one at a
 * time, and one that waits past the CM's response timeout comes again as
 * a new request. Refused as busy after 2 s, the client comes back no
 * sooner than twice that (not after TCP's first 1 s, which would keep such
 * a queue full); refused bare then, it falls back. (connect_timeout_ms
 * bounds each attempt: 1 s by default, which would fall back first.)
 */
TEST(slow_refusal_slows_the_retry)
{
	struct evil_server s = { .reject = true, .busy_ms = 2000 };
	long long retries = sdp_stat("ConnectRetries");
	int fd, why, saved = sdp_sysctl("connect_timeout_ms");

	/* the attempt must outlast the slow refusal, not fall back first */
	sdp_sysctl_set("connect_timeout_ms", 10000);
	ASSERT_EQ(10000, sdp_sysctl("connect_timeout_ms"));
	fd = connect_to_evil(_metadata, &s, &why);
	sdp_sysctl_set("connect_timeout_ms", saved);
	ASSERT_LE(0, fd) TH_LOG("connect: %s", strerror(-fd));
	TH_LOG("refused as busy after %d ms; the next request came %.2f s later",
	       s.busy_ms, s.again_at - s.refused_at);
	EXPECT_EQ(0, s.event);
	EXPECT_LE(2 * s.busy_ms / 1000.0 - 0.1, s.again_at - s.refused_at);
	EXPECT_EQ(retries + 1, sdp_stat("ConnectRetries"));
	EXPECT_EQ(SDP_TRANSPORT_TCP, sdp_transport(fd));
	EXPECT_EQ(SDP_FB_REJECTED, why);
	if (_metadata->passed)
		fprintf(stderr, "# PROOF fallback reason=%d\n", why);
	close(fd);
}

/*
 * A listener whose child dies between its REP and our RTU, as when its
 * listener stops: its CM answers the RTU of a connect ours completed with a
 * REJ. Our connection resets (RejectLate), as TCP's does by the RST its
 * peer sends to the handshake's last ACK; if our RTU came first, by the
 * peer's disconnect (DisConnMissing). Either way a blocked read() ends:
 * without the reset an orphan waited out tcp_fin_timeout, and a reader for
 * ever. A reset that comes before connect() returns fails it, as TCP's
 * (ECONNRESET); a REJ before our RTU, with ECONNREFUSED.
 */
FIXTURE(vanish) {};
FIXTURE_SETUP(vanish) {}
FIXTURE_TEARDOWN(vanish) {}

TEST_F_TIMEOUT(vanish, peer_vanishes_after_accept, 300)
{
	long long late = sdp_stat("RejectLate"), missing = sdp_stat("DisConnMissing");
	int i, fd, tl, rounds = 20, reset = 0, early = 0, refused = 0;
	int saved = sdp_sysctl("rdma_only");
	struct sdp_info info = {};
	struct sockaddr_storage ss;
	socklen_t len;
	pthread_t t;
	char b;

	sdp_sysctl_set("rdma_only", 1);
	for (i = 0; i < rounds; i++) {
		struct evil_server s = { .vanish = true };

		tl = evil_start(&s, &ss, &len, &t);
		ASSERT_LE(0, tl);
		close(tl);
		fd = sdp_connect(sdp_family(), &ss, len);
		pthread_join(t, NULL);
		if (fd < 0) {
			EXPECT_TRUE(errno == ECONNRESET || errno == ECONNREFUSED)
				TH_LOG("round %d: connect: %s", i, strerror(errno));
			early += errno == ECONNRESET;
			refused += errno == ECONNREFUSED;
		} else {
			struct timeval tv = { .tv_sec = 10 * sdp_slow() };

			ASSERT_EQ(0, setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
			ASSERT_EQ(0, sdp_info(fd, &info));
			EXPECT_EQ(SDP_TRANSPORT_RDMA, info.transport);
			EXPECT_EQ(s.p.qp->qp_num, info.dest_qp_num);
			EXPECT_EQ(-1, read(fd, &b, 1));
			EXPECT_EQ(ECONNRESET, errno) TH_LOG("round %d: %s", i, strerror(errno));
			reset += errno == ECONNRESET;
			close(fd);
		}
		peer_free(&s.p);
	}
	sdp_sysctl_set("rdma_only", saved);
	late = sdp_stat("RejectLate") - late;
	missing = sdp_stat("DisConnMissing") - missing;
	TH_LOG("%d rounds: %d refused, %d reset in connect(), %d in read() (RejectLate %lld, DisConnMissing %lld)",
	       rounds, refused, early, reset, late, missing);
	EXPECT_EQ(rounds, refused + early + reset);
	EXPECT_LT(0, early + reset);
	EXPECT_EQ(early + reset, late + missing);
	if (_metadata->passed)
		fprintf(stderr, "# PROOF rdma %s: %d connections to the peer's QPs reset\n",
			info.ibdev, early + reset);
}

TEST(connect_refused_by_reject_rdma_only)
{
	struct evil_server s = { .reject = true };

	refused(_metadata, &s, true);
}

/* The Hello the kernel sent was well formed. */
TEST(connect_sends_a_good_hello)
{
	struct evil_server s = { .m = { F_VERSION, 0x10 } };
	int fd, why;

	fd = connect_to_evil(_metadata, &s, &why);
	ASSERT_EQ(1, s.ready);
	ASSERT_LE(0, fd);
	close(fd);
	ASSERT_LE(sizeof(s.hello), s.hello_len);
	EXPECT_EQ(MID_HELLO, s.hello.bsdh.mid);
	EXPECT_EQ(sizeof(s.hello), ntohl(s.hello.bsdh.len));
	EXPECT_EQ(0x22, s.hello.majv_minv);
	EXPECT_EQ(0x40, s.hello.ipv_cap);
	EXPECT_LE(1024, ntohl(s.hello.localrcvsz));
	fprintf(stderr, "# PROOF fallback reason=%d\n", why);
}

/* sdpstat --check names that cause too (sdp_ops.sh checks the others). */
TEST(sdpstat_check_names_a_bad_hello_ack)
{
	struct evil_server s = { .m = { F_VERSION, 0x10 } };
	struct sockaddr_storage ss;
	char cmd[128], line[512] = "";
	socklen_t len;
	pthread_t t;
	int tl, st;
	FILE *f;

	tl = evil_start(&s, &ss, &len, &t);
	ASSERT_LE(0, tl);
	snprintf(cmd, sizeof(cmd), "../../userspace/sdpstat --check %s:%d", SDP_A, s.port);
	f = popen(cmd, "r");
	ASSERT_NE(NULL, f);
	if (!fgets(line, sizeof(line), f))
		line[0] = 0;
	st = pclose(f);
	close(tl);
	pthread_join(t, NULL);
	peer_free(&s.p);
	fprintf(stderr, "# %s", line);
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 1) TH_LOG("status %#x", st);
	EXPECT_NE(NULL, strstr(line, ": TCP (FallbackVersion): the peer at "))
		TH_LOG("%s", line);
	EXPECT_NE(NULL, strstr(line, " speaks an incompatible SDP"));
	fprintf(stderr, "# PROOF fallback reason=%d\n", SDP_FB_VERSION);
}

/*
 * A connect from a port that another rdma_cm user holds (here an id bound
 * by this process, in rdma_cm's TCP port space only) cannot go over RDMA:
 * our own lack, not the destination's. It falls back with
 * FallbackPort, and the negative cache does not learn the
 * destination: the next connect, from another port, goes over RDMA.
 */
TEST(connect_from_a_port_rdma_cm_holds_is_not_cached)
{
	long long res = sdp_stat("FallbackPort"), nodev = sdp_stat("FallbackNoDevice");
	struct sockaddr_storage addr, src;
	struct rdma_event_channel *ec;
	socklen_t alen, slen;
	struct rdma_cm_id *id;
	int l, c, a, t;
	char b;

	l = sdp_listener(sdp_family(), SDP_A, 8, &addr, &alen);
	ASSERT_LE(0, l);
	/* a port free for TCP, then taken in rdma_cm's space */
	t = sdp_listener(AF_INET, SDP_A, 1, &src, &slen);
	ASSERT_LE(0, t);
	close(t);
	ec = rdma_create_event_channel();
	ASSERT_NE(NULL, ec);
	ASSERT_EQ(0, rdma_create_id(ec, &id, NULL, RDMA_PS_TCP));
	ASSERT_EQ(0, rdma_bind_addr(id, (struct sockaddr *)&src));

	c = socket(sdp_family(), SOCK_STREAM, 0);
	ASSERT_LE(0, c);
	ASSERT_EQ(0, bind(c, (struct sockaddr *)&src, slen));
	ASSERT_EQ(0, connect(c, (struct sockaddr *)&addr, alen));
	a = accept(l, NULL, NULL);
	ASSERT_LE(0, a);
	EXPECT_EQ(SDP_TRANSPORT_TCP, sdp_transport(c));
	EXPECT_EQ(SDP_FB_PORT, sdp_getint(c, SOL_SDP, SDP_FALLBACK_REASON));
	EXPECT_EQ(res + 1, sdp_stat("FallbackPort"));
	EXPECT_EQ(nodev, sdp_stat("FallbackNoDevice"));
	ASSERT_EQ(1, send(c, "x", 1, 0));
	ASSERT_EQ(1, recv(a, &b, 1, 0));
	close(c);
	close(a);

	sdp_rdma_byte(_metadata, l, &addr, alen);
	rdma_destroy_id(id);
	rdma_destroy_event_channel(ec);
	close(l);
}

/*
 * The same without bind(): rdma_cm has the port TCP gave us, and says
 * EADDRNOTAVAIL since our binding is a wildcard. The connect tries
 * another port; with none left (the range is that one port) it falls back
 * uncached, or with net.sdp.rdma_only fails as TCP's connect() without a
 * port: EADDRNOTAVAIL. Once the port is free the same destination is RDMA.
 */
#define PORT_RANGE	"/proc/sys/net/ipv4/ip_local_port_range"

FIXTURE(port_range) {
	char saved[64];
	int rdma_only;
	struct rdma_cm_id *held;
};

FIXTURE_SETUP(port_range)
{
	FILE *f = fopen(PORT_RANGE, "r");

	ASSERT_NE(NULL, f);
	ASSERT_NE(NULL, fgets(self->saved, sizeof(self->saved), f));
	fclose(f);
	self->rdma_only = sdp_sysctl("rdma_only");
	self->held = NULL;
}

FIXTURE_TEARDOWN(port_range)
{
	EXPECT_EQ(0, sdp_write_file(PORT_RANGE, self->saved));
	sdp_sysctl_set("rdma_only", self->rdma_only);
	if (self->held)
		rdma_destroy_id(self->held);
}

TEST_F(port_range, rdma_cm_holds_the_only_ephemeral_port)
{
	long long res = sdp_stat("FallbackPort"), nodev = sdp_stat("FallbackNoDevice");
	struct sockaddr_in any = { .sin_family = AF_INET };
	struct linger abort = { .l_onoff = 1 };
	socklen_t alen, len = sizeof(any);
	struct sockaddr_storage addr;
	char range[32], b;
	int l, c, a, t;

	l = sdp_listener(sdp_family(), SDP_A, 8, &addr, &alen);
	ASSERT_LE(0, l);
	/* a port TCP has free, then rdma_cm's, bound with no device */
	t = socket(AF_INET, SOCK_STREAM, 0);
	ASSERT_EQ(0, bind(t, (struct sockaddr *)&any, sizeof(any)));
	ASSERT_EQ(0, getsockname(t, (struct sockaddr *)&any, &len));
	close(t);
	ASSERT_EQ(0, rdma_create_id(NULL, &self->held, NULL, RDMA_PS_TCP));
	ASSERT_EQ(0, rdma_bind_addr(self->held, (struct sockaddr *)&any));
	snprintf(range, sizeof(range), "%u %u", ntohs(any.sin_port), ntohs(any.sin_port));
	ASSERT_EQ(0, sdp_write_file(PORT_RANGE, range));

	c = sdp_connect(sdp_family(), &addr, alen);
	ASSERT_LE(0, c) TH_LOG("connect: %s", strerror(errno));
	a = accept(l, NULL, NULL);
	ASSERT_LE(0, a);
	EXPECT_EQ(SDP_TRANSPORT_TCP, sdp_transport(c));
	EXPECT_EQ(SDP_FB_PORT, sdp_getint(c, SOL_SDP, SDP_FALLBACK_REASON));
	EXPECT_EQ(res + 1, sdp_stat("FallbackPort"));
	EXPECT_EQ(nodev, sdp_stat("FallbackNoDevice"));
	ASSERT_EQ(1, send(c, "x", 1, 0));
	ASSERT_EQ(1, recv(a, &b, 1, 0));
	/* a reset leaves no TIME_WAIT on the only port */
	ASSERT_EQ(0, setsockopt(c, SOL_SOCKET, SO_LINGER, &abort, sizeof(abort)));
	close(c);
	close(a);

	sdp_sysctl_set("rdma_only", 1);
	c = socket(sdp_family(), SOCK_STREAM, 0);
	ASSERT_LE(0, c);
	EXPECT_EQ(-1, connect(c, (struct sockaddr *)&addr, alen));
	EXPECT_EQ(EADDRNOTAVAIL, errno);
	close(c);
	sdp_sysctl_set("rdma_only", self->rdma_only);

	rdma_destroy_id(self->held);
	self->held = NULL;
	sdp_rdma_byte(_metadata, l, &addr, alen);
	close(l);
}

/*
 * Zero-copy with the hand-made peer, both ways of connecting. The peer
 * serves RDMA Reads (its REQ's or REP's responder_resources), issues them,
 * and offers adverts: the kernel reads the peer's SrcAvails and offers its
 * own. A 1 MiB region of the peer's is registered for the kernel to read.
 */
FIXTURE(evil_zc) {
	FIXTURE_DATA(evil_client) c;
};

FIXTURE_VARIANT(evil_zc) {
	bool server;
};

FIXTURE_VARIANT_ADD(evil_zc, peer_connects) { .server = false };
KERNEL_CONNECTS(FIXTURE_VARIANT_ADD(evil_zc, kernel_connects) { .server = true };)

#define ZC_REGION	(1 << 20)

static void zc_up(struct __test_metadata *_metadata, FIXTURE_DATA(evil_client) *c,
		  bool server)
{
	c->server = server;
	c->p.rd_in = 1;
	c->p.rd_atomic = 1;
	c->p.adverts = 1;
	client_up(_metadata, c);
	ASSERT_EQ(0, peer_zc_region(&c->p, ZC_REGION));
	stream_fill(31, 0, c->p.zc, ZC_REGION);
}

FIXTURE_SETUP(evil_zc)
{
	zc_up(_metadata, &self->c, variant->server);
}

FIXTURE_TEARDOWN(evil_zc)
{
	client_down(_metadata, &self->c);
}

/* The cases the direction of the connect changes nothing in: one way. */
FIXTURE(evil_zc1) {
	FIXTURE_DATA(evil_client) c;
};

FIXTURE_SETUP(evil_zc1)
{
	zc_up(_metadata, &self->c, false);
}

FIXTURE_TEARDOWN(evil_zc1)
{
	client_down(_metadata, &self->c);
}

#define ZC_ADDR(p)	((uint64_t)(uintptr_t)(p)->zc)

/* The kernel's RDMA Read of ours failed: a reset, counted, no Abort (its QP failed). */
static void expect_read_fault(struct __test_metadata *_metadata,
			      FIXTURE_DATA(evil_client) *self, long long before,
			      long long aborts)
{
	EXPECT_RESET(self);
	EXPECT_EQ(before + 1, sdp_stat("ZcopyReadFailed"));
	EXPECT_EQ(aborts, sdp_stat("AbortSent"));
	EXPECT_TRUE(conn_error_traced("ZcopyReadFailed"));
}

/*
 * Our SrcAvail is read into the stream, in order, as the reader takes it
 * (more than the receive buffer holds), and acknowledged once all is read.
 */
TEST_F(evil_zc, srcavail_read_in_order)
{
	static unsigned char buf[300000];
	struct peer *p = &self->c.p;
	long long before = sdp_stat("ZcopyRxBytes");
	struct rrch *rr = (void *)(p->last_zc + sizeof(struct bsdh));

	ASSERT_EQ(0, send_msg(p, MID_DATA, "head", 4));
	ASSERT_EQ(0, send_srcavail(p, ZC_ADDR(p) + 1, p->zc_mr->rkey, sizeof(buf)));
	ASSERT_EQ(4, recv(self->c.sfd, buf, 4, MSG_WAITALL));
	EXPECT_EQ(0, memcmp(buf, "head", 4));
	ASSERT_EQ(sizeof(buf), recv(self->c.sfd, buf, sizeof(buf), MSG_WAITALL));
	EXPECT_EQ(-1, stream_check(31, 1, buf, sizeof(buf)));
	ASSERT_TRUE(peer_wait_for(p, MID_RDMARDCOMPL));
	EXPECT_EQ(sizeof(buf), ntohl(rr->len));
	ASSERT_EQ(0, send_msg(p, MID_DATA, "tail", 4));
	ASSERT_EQ(4, recv(self->c.sfd, buf, 4, MSG_WAITALL));
	EXPECT_EQ(0, memcmp(buf, "tail", 4));
	EXPECT_EQ(before + (long long)sizeof(buf), sdp_stat("ZcopyRxBytes"));
	EXPECT_FALSE(peer_got(p, MID_SENDSM));
}

TEST_F(evil_zc, srcavail_bad_rkey)
{
	long long before = sdp_stat("ZcopyReadFailed"), aborts = sdp_stat("AbortSent");
	struct peer *p = &self->c.p;

	ASSERT_EQ(0, conn_error_trace());
	ASSERT_EQ(0, send_srcavail(p, ZC_ADDR(p), p->zc_mr->rkey ^ 0x5500, 4096));
	expect_read_fault(_metadata, &self->c, before, aborts);
}

TEST_F(evil_zc1, srcavail_beyond_its_region)
{
	long long before = sdp_stat("ZcopyReadFailed"), aborts = sdp_stat("AbortSent");
	struct peer *p = &self->c.p;

	ASSERT_EQ(0, conn_error_trace());
	ASSERT_EQ(0, send_srcavail(p, ZC_ADDR(p) + ZC_REGION - 4096, p->zc_mr->rkey, 65536));
	expect_read_fault(_metadata, &self->c, before, aborts);
}

/* A SrcAvail or SinkAvail of @len bytes at our region: the fault @counter names. */
static void avail_len_fault(struct __test_metadata *_metadata,
			    FIXTURE_DATA(evil_client) *c, uint8_t mid, uint32_t len,
			    const char *counter)
{
	struct srcah sa = { htonl(len), htonl(c->p.zc_mr->rkey), htobe64(ZC_ADDR(&c->p)) };

	mid_fault(_metadata, c, mid, &sa, sizeof(sa), counter);
}

/* A SrcAvail's fields and length, judged before anything is read. */
TEST_F(evil_zc1, srcavail_of_nothing)
{
	avail_len_fault(_metadata, &self->c, MID_SRCAVAIL, 0, "BadSrcAvail");
}

TEST_F(evil_zc1, srcavail_too_long)
{
	avail_len_fault(_metadata, &self->c, MID_SRCAVAIL, (1 << 20) + 1, "BadSrcAvail");
}

TEST_F(evil_zc1, srcavail_short)
{
	mid_fault(_metadata, &self->c, MID_SRCAVAIL, NULL, 12, "BadLen");
}

TEST_F(evil_zc1, rdmardcompl_for_nothing)
{
	struct rrch rr = { htonl(1) };

	mid_fault(_metadata, &self->c, MID_RDMARDCOMPL, &rr, sizeof(rr), "UnexpectedMid");
}

/*
 * While its SrcAvail is read (the kernel's reader is not reading, so the
 * kernel reads only what its receive buffer takes, and declines the rest
 * SDP_ZC_STALL later) the peer's stream waits: Data, DisConn or another
 * SrcAvail sent right behind it is a fault. A SrcAvailCancel is answered:
 * RdmaRdCompl of what was read (if anything), SendSM for the rest.
 */
static void srcavail_pending(struct __test_metadata *_metadata,
			     FIXTURE_DATA(evil_client) *self)
{
	ASSERT_EQ(0, send_srcavail(&self->p, ZC_ADDR(&self->p), self->p.zc_mr->rkey, ZC_REGION));
}

/* @mid with @len bytes of @payload right behind a SrcAvail: a fault, @counter. */
static void fault_while_read(struct __test_metadata *_metadata,
			     FIXTURE_DATA(evil_client) *self, uint8_t mid,
			     const void *payload, uint32_t len, const char *counter)
{
	long long before = sdp_stat(counter), aborts = sdp_stat("AbortSent");
	struct bsdh h;

	ASSERT_EQ(0, conn_error_trace());
	srcavail_pending(_metadata, self);
	next_header(&self->p, &h, mid, len);
	ASSERT_EQ(0, send_raw(&self->p, &h, payload, len));
	fault_seen(_metadata, self, counter, before, aborts);
}

TEST_F(evil_zc, data_while_srcavail_read)
{
	fault_while_read(_metadata, &self->c, MID_DATA, "late", 4, "UnexpectedMid");
}

TEST_F(evil_zc1, second_srcavail_while_read)
{
	struct srcah sa = { htonl(4096), htonl(self->c.p.zc_mr->rkey), htobe64(ZC_ADDR(&self->c.p)) };

	fault_while_read(_metadata, &self->c, MID_SRCAVAIL, &sa, sizeof(sa), "UnexpectedMid");
}

TEST_F(evil_zc1, disconn_while_srcavail_read)
{
	fault_while_read(_metadata, &self->c, MID_DISCONN, NULL, 0, "UnexpectedMid");
}

TEST_F(evil_zc, cancel_is_answered)
{
	static unsigned char buf[ZC_REGION + 4];
	struct peer *p = &self->c.p;
	uint32_t got;

	srcavail_pending(_metadata, &self->c);
	ASSERT_EQ(0, send_msg(p, MID_SRCAVAIL_CANCEL, NULL, 0));
	ASSERT_TRUE(peer_wait_for(p, MID_SENDSM));
	if (peer_got(p, MID_RDMARDCOMPL))
		EXPECT_EQ(MID_RDMARDCOMPL, p->rx_mids[p->rx_n - 2]);
	ASSERT_EQ(0, send_msg(p, MID_DATA, "tail", 4));
	ASSERT_EQ(0, send_msg(p, MID_DISCONN, NULL, 0));
	got = sdp_read_full(self->c.sfd, buf, sizeof(buf));
	ASSERT_LE(4, got);
	ASSERT_GT(ZC_REGION + 4, got);
	EXPECT_EQ(-1, stream_check(31, 0, buf, got - 4));
	EXPECT_EQ(0, memcmp(buf + got - 4, "tail", 4));
	TH_LOG("%u B read before the cancel", got - 4);
}

/* A cancel that crossed our RdmaRdCompl asks for nothing: ignored. */
TEST_F(evil_zc1, late_cancel_is_ignored)
{
	struct peer *p = &self->c.p;
	char buf[4100];

	ASSERT_EQ(0, send_srcavail(p, ZC_ADDR(p), p->zc_mr->rkey, 4096));
	ASSERT_TRUE(peer_wait_for(p, MID_RDMARDCOMPL));
	ASSERT_EQ(0, send_msg(p, MID_SRCAVAIL_CANCEL, NULL, 0));
	ASSERT_EQ(0, send_msg(p, MID_DATA, "tail", 4));
	ASSERT_EQ(4100, recv(self->c.sfd, buf, sizeof(buf), MSG_WAITALL));
	EXPECT_EQ(-1, stream_check(31, 0, (void *)buf, 4096));
	EXPECT_EQ(0, memcmp(buf + 4096, "tail", 4));
	peer_poll(p, 200);
	EXPECT_FALSE(peer_got(p, MID_SENDSM));
}

/* The kernel's send of @len, in a thread: what send() returned, and errno. */
struct zc_send {
	int fd;
	size_t len;
	ssize_t n;
	int err;
	unsigned char *buf;
};

static void *zc_send_thread(void *arg)
{
	struct zc_send *z = arg;

	z->n = send(z->fd, z->buf, z->len, MSG_NOSIGNAL);
	z->err = errno;
	return NULL;
}

static void zc_send_start(struct zc_send *z, int fd, size_t len, pthread_t *t)
{
	z->fd = fd;
	z->len = len;
	z->buf = malloc(len);
	stream_fill(32, 0, z->buf, len);
	pthread_create(t, NULL, zc_send_thread, z);
}

/* The kernel's SrcAvail (or @mid: SinkAvail): its fields; false if none came. */
static bool got_avail(struct peer *p, int mid, struct srcah *sa)
{
	if (!peer_wait_for(p, mid))
		return false;
	memcpy(sa, p->last_zc + sizeof(struct bsdh), sizeof(*sa));
	sa->len = ntohl(sa->len);
	sa->rkey = ntohl(sa->rkey);
	sa->vaddr = be64toh(sa->vaddr);
	return true;
}

/*
 * The kernel socket was reset while @z's send waited: one of the two calls
 * took the reset (ECONNRESET), the other then found the connection over
 * (EPIPE for the send, end of file for the read), as over TCP.
 */
static void expect_reset_seen(struct __test_metadata *_metadata,
			      FIXTURE_DATA(evil_client) *self, struct zc_send *z)
{
	char b[16];
	ssize_t n;
	int err;

	EXPECT_EQ(-1, z->n);
	while ((n = recv(self->sfd, b, sizeof(b), 0)) > 0)
		;
	err = n ? errno : 0;
	EXPECT_TRUE((z->err == ECONNRESET && (!n || err == ECONNRESET)) ||
		    (z->err == EPIPE && err == ECONNRESET))
		TH_LOG("send: %s, then recv: %zd (%s)", strerror(z->err), n, strerror(err));
}

/* The packets our RDMA Read of @len takes (the PSNs its request uses). */
static unsigned int read_pkts(FIXTURE_DATA(evil_client) *self, uint32_t len)
{
	struct sdp_info info;

	if (sdp_info(self->sfd, &info) || !info.path_mtu)
		return 1;
	return (len + info.path_mtu - 1) / info.path_mtu;
}

/*
 * We read the kernel's SrcAvail @sa whole (its bytes key 32's stream) and
 * say so: its send of @len, in @t, returns all of it.
 */
static void srcavail_read_whole(struct __test_metadata *_metadata, struct peer *p,
				const struct srcah *sa, struct zc_send *z, pthread_t t,
				size_t len)
{
	struct rrch rr = { htonl(sa->len) };

	EXPECT_EQ(IBV_WC_SUCCESS, peer_rdma(p, sa->vaddr, sa->rkey, sa->len, false));
	EXPECT_EQ(-1, stream_check(32, 0, p->zc, sa->len));
	ASSERT_EQ(0, send_msg(p, MID_RDMARDCOMPL, &rr, sizeof(rr)));
	pthread_join(t, NULL);
	EXPECT_EQ((ssize_t)len, z->n) TH_LOG("%s", strerror(z->err));
}

/* The kernel offers a large send by SrcAvail; we read it and say so. */
TEST_F(evil_zc, kernels_srcavail_is_read)
{
	struct zc_send z = {};
	struct peer *p = &self->c.p;
	struct srcah sa;
	pthread_t t;

	zc_send_start(&z, self->c.sfd, 200000, &t);
	ASSERT_TRUE(got_avail(p, MID_SRCAVAIL, &sa));
	EXPECT_EQ(200000, sa.len);
	srcavail_read_whole(_metadata, p, &sa, &z, t, 200000);
	/* its key is dead once send() returned: our QP refuses the read */
	EXPECT_NE(IBV_WC_SUCCESS, peer_rdma(p, sa.vaddr, sa.rkey, 4096, false));
	self->c.refused = read_pkts(&self->c, 4096);
	free(z.buf);
	EXPECT_RESET(&self->c);
}

TEST_F(evil_zc1, rdmardcompl_beyond_the_srcavail)
{
	long long before = sdp_stat("BadRdmaRdCompl"), aborts = sdp_stat("AbortSent");
	struct zc_send z = {};
	struct rrch rr;
	struct srcah sa;
	pthread_t t;

	zc_send_start(&z, self->c.sfd, 200000, &t);
	ASSERT_TRUE(got_avail(&self->c.p, MID_SRCAVAIL, &sa));
	ASSERT_EQ(0, conn_error_trace());
	rr.len = htonl(sa.len + 1);
	ASSERT_EQ(0, send_msg(&self->c.p, MID_RDMARDCOMPL, &rr, sizeof(rr)));
	pthread_join(t, NULL);
	expect_reset_seen(_metadata, &self->c, &z);
	EXPECT_EQ(before + 1, sdp_stat("BadRdmaRdCompl"));
	EXPECT_EQ(aborts + 1, sdp_stat("AbortSent"));
	EXPECT_TRUE(peer_wait_for(&self->c.p, MID_ABORT));
	EXPECT_TRUE(conn_error_traced("BadRdmaRdCompl"));
	free(z.buf);
}

/* A read past what the SrcAvail offers fails on our side: our QP refuses it. */
TEST_F(evil_zc, read_beyond_the_srcavail)
{
	struct zc_send z = {};
	struct srcah sa;
	pthread_t t;
	int status;

	zc_send_start(&z, self->c.sfd, 200000, &t);
	ASSERT_TRUE(got_avail(&self->c.p, MID_SRCAVAIL, &sa));
	status = peer_rdma(&self->c.p, sa.vaddr + sa.len - 100, sa.rkey, 4096, false);
	EXPECT_NE(IBV_WC_SUCCESS, status);
	TH_LOG("our read: %s", status < 0 ? "no completion" : ibv_wc_status_str(status));
	pthread_join(t, NULL);
	expect_reset_seen(_metadata, &self->c, &z);
	free(z.buf);
	self->c.refused = read_pkts(&self->c, 4096);
}

/*
 * The connection maps send after send into one memory region: the next
 * SrcAvail names the same region with a new key, and the key the peer saw
 * before reads nothing of it.
 */
TEST_F(evil_zc1, an_earlier_sends_key_reads_nothing)
{
	struct zc_send z = {};
	struct peer *p = &self->c.p;
	struct srcah sa, sa2;
	struct rrch rr;
	pthread_t t;
	int status;

	zc_send_start(&z, self->c.sfd, 200000, &t);
	ASSERT_TRUE(got_avail(p, MID_SRCAVAIL, &sa));
	ASSERT_EQ(IBV_WC_SUCCESS, peer_rdma(p, sa.vaddr, sa.rkey, sa.len, false));
	rr.len = htonl(sa.len);
	ASSERT_EQ(0, send_msg(p, MID_RDMARDCOMPL, &rr, sizeof(rr)));
	pthread_join(t, NULL);
	ASSERT_EQ(200000, z.n);
	free(z.buf);
	p->rx_n = 0;	/* (got_avail() looks for the next one) */
	zc_send_start(&z, self->c.sfd, 200000, &t);
	ASSERT_TRUE(got_avail(p, MID_SRCAVAIL, &sa2));
	/* (a fast-registration key's low byte is the consumer's, the rest the region's) */
	EXPECT_EQ(sa.rkey >> 8, sa2.rkey >> 8) TH_LOG("keys %#x, then %#x", sa.rkey, sa2.rkey);
	EXPECT_NE(sa.rkey, sa2.rkey);
	status = peer_rdma(p, sa2.vaddr, sa.rkey, 4096, false);
	EXPECT_NE(IBV_WC_SUCCESS, status);
	TH_LOG("our read with the earlier key: %s",
	       status < 0 ? "no completion" : ibv_wc_status_str(status));
	pthread_join(t, NULL);
	expect_reset_seen(_metadata, &self->c, &z);
	free(z.buf);
	self->c.refused = read_pkts(&self->c, 4096);
}

/*
 * A key of one connection's SrcAvail reads nothing through another's QP:
 * each connection's regions are in its own protection domain. Our second
 * connection's read with the first's live key fails (its kernel socket
 * resets); the first's SrcAvail is then read as usual.
 */
TEST_F(evil_zc1, another_connections_key_reads_nothing)
{
	FIXTURE_DATA(evil_client) other = {};
	struct peer *p = &self->c.p;
	struct zc_send z = {};
	struct srcah sa;
	pthread_t t;
	int status;

	zc_send_start(&z, self->c.sfd, 200000, &t);
	ASSERT_TRUE(got_avail(p, MID_SRCAVAIL, &sa));
	zc_up(_metadata, &other, false);
	status = peer_rdma(&other.p, sa.vaddr, sa.rkey, 4096, false);
	EXPECT_NE(IBV_WC_SUCCESS, status) TH_LOG("the other connection read the first's region");
	TH_LOG("the other connection's read: %s",
	       status < 0 ? "no completion" : ibv_wc_status_str(status));
	other.refused = read_pkts(&other, 4096);
	EXPECT_RESET(&other);
	client_down(_metadata, &other);
	srcavail_read_whole(_metadata, p, &sa, &z, t, 200000);
	free(z.buf);
}

/* SendSM unasked: the peer prefers copies; the send goes on by Data. */
TEST_F(evil_zc1, sendsm_makes_the_send_copy)
{
	struct zc_send z = {};
	struct srcah sa;
	pthread_t t;

	zc_send_start(&z, self->c.sfd, 200000, &t);
	ASSERT_TRUE(got_avail(&self->c.p, MID_SRCAVAIL, &sa));
	ASSERT_EQ(0, send_msg(&self->c.p, MID_SENDSM, NULL, 0));
	for (int i = 0; i < 100 && !__atomic_load_n(&z.n, __ATOMIC_ACQUIRE); i++) {
		peer_poll(&self->c.p, 50);
		/* take Data as it comes, giving the buffers back */
		ASSERT_EQ(0, send_msg(&self->c.p, MID_DATA, NULL, 0));
	}
	pthread_join(t, NULL);
	EXPECT_EQ(200000, z.n);
	EXPECT_TRUE(peer_got(&self->c.p, MID_DATA));
	free(z.buf);
}

/*
 * SO_SNDTIMEO runs out with the SrcAvail unread: the kernel cancels; the
 * SendSM that answers ends the send with what was read, nothing (EAGAIN).
 * A peer that never answers loses the connection after 5 s.
 */
static void send_until_cancel(struct __test_metadata *_metadata,
			      FIXTURE_DATA(evil_client) *self, struct zc_send *z,
			      pthread_t *t)
{
	struct timeval tv = { .tv_usec = 300000 };
	struct srcah sa;

	ASSERT_EQ(0, setsockopt(self->sfd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)));
	zc_send_start(z, self->sfd, 200000, t);
	ASSERT_TRUE(got_avail(&self->p, MID_SRCAVAIL, &sa));
	ASSERT_TRUE(peer_wait_for(&self->p, MID_SRCAVAIL_CANCEL));
}

TEST_F(evil_zc, send_timeout_cancels)
{
	long long before = sdp_stat("ZcopyCancels");
	struct zc_send z = {};
	pthread_t t;

	send_until_cancel(_metadata, &self->c, &z, &t);
	ASSERT_EQ(0, send_msg(&self->c.p, MID_SENDSM, NULL, 0));
	pthread_join(t, NULL);
	EXPECT_EQ(-1, z.n);
	EXPECT_EQ(EAGAIN, z.err);
	EXPECT_EQ(before + 1, sdp_stat("ZcopyCancels"));
	free(z.buf);
}

TEST_F_TIMEOUT(evil_zc1, unanswered_cancel_resets, 60)
{
	long long before = sdp_stat("ZcopyCancelTimeout");
	struct zc_send z = {};
	double t0 = sdp_now();
	pthread_t t;

	send_until_cancel(_metadata, &self->c, &z, &t);
	pthread_join(t, NULL);
	TH_LOG("send returned after %.1f s", sdp_now() - t0);
	EXPECT_EQ(-1, z.n);
	EXPECT_EQ(ETIMEDOUT, z.err);
	EXPECT_EQ(before + 1, sdp_stat("ZcopyCancelTimeout"));
	free(z.buf);
}

/*
 * A peer that takes our SrcAvail and neither reads it nor answers: the
 * send ends as TCP's unacknowledged data does, by TCP_USER_TIMEOUT
 * (TxTimeout), with no cancel (no SO_SNDTIMEO) to wait 5 s for.
 */
TEST_F_TIMEOUT(evil_zc1, unread_srcavail_times_out, 30)
{
	long long before = sdp_stat("TxTimeout");
	unsigned int ms = 1000;
	struct zc_send z = {};
	struct srcah sa;
	double t0;
	pthread_t t;

	ASSERT_EQ(0, setsockopt(self->c.sfd, IPPROTO_TCP, TCP_USER_TIMEOUT, &ms, sizeof(ms)));
	t0 = sdp_now();
	zc_send_start(&z, self->c.sfd, 200000, &t);
	ASSERT_TRUE(got_avail(&self->c.p, MID_SRCAVAIL, &sa));
	pthread_join(t, NULL);
	TH_LOG("send returned after %.1f s", sdp_now() - t0);
	EXPECT_EQ(-1, z.n);
	EXPECT_EQ(ETIMEDOUT, z.err);
	EXPECT_EQ(before + 1, sdp_stat("TxTimeout"));
	EXPECT_GT(4.5, sdp_now() - t0);
	free(z.buf);
}

/*
 * SinkAvail both ways, with a peer that takes the kernel's (its Hello's
 * caps) and offers its own region for the kernel to write.
 */
FIXTURE(evil_sink) {
	FIXTURE_DATA(evil_client) c;
};

FIXTURE_SETUP(evil_sink)
{
	self->c.p.caps = CAP_SINKAVAIL;
	zc_up(_metadata, &self->c, false);
}

FIXTURE_TEARDOWN(evil_sink)
{
	client_down(_metadata, &self->c);
}

/* Offer @len bytes of our region at +@off for the kernel to write: a SinkAvail. */
static int send_sinkavail(struct peer *p, uint32_t off, uint32_t rkey, uint32_t len)
{
	struct srcah sa = { htonl(len), htonl(rkey), htobe64(ZC_ADDR(p) + off) };

	/* (acknowledging all the kernel sent: nothing of its crosses it) */
	peer_poll(p, 50);
	return send_msg(p, MID_SINKAVAIL, &sa, sizeof(sa));
}

/* The kernel's answer to our SinkAvail: the bytes it wrote; -1 if none came. */
static long got_wrcompl(struct peer *p)
{
	if (!peer_wait_for(p, MID_RDMAWRCOMPL))
		return -1;
	return ntohl(((struct rrch *)(p->last_zc + sizeof(struct bsdh)))->len);
}

/*
 * The kernel writes its next send into our SinkAvail and answers with how
 * much; what it sends after comes as Data.
 */
TEST_F(evil_sink, kernel_writes_into_ours)
{
	long long writes = sdp_stat("ZcopyWrites");
	struct peer *p = &self->c.p;
	unsigned char out[30000];

	ASSERT_EQ(0, send_sinkavail(p, 1, p->zc_mr->rkey, 100000));
	usleep(100000);
	stream_fill(33, 0, out, sizeof(out));
	ASSERT_EQ(sizeof(out), send(self->c.sfd, out, sizeof(out), 0));
	EXPECT_EQ(sizeof(out), got_wrcompl(p));
	EXPECT_EQ(-1, stream_check(33, 0, p->zc + 1, sizeof(out)));
	/* (the region held key 31's stream: not a byte past the send changed) */
	EXPECT_EQ(-1, stream_check(31, 1 + sizeof(out), p->zc + 1 + sizeof(out), 4096))
		TH_LOG("written past the send");
	EXPECT_EQ(writes + 1, sdp_stat("ZcopyWrites"));
	ASSERT_EQ(4, send(self->c.sfd, "tail", 4, 0));
	peer_poll(p, 300);
	EXPECT_EQ(0, memcmp(p->last_payload, "tail", 4));
}

/*
 * A SinkAvail that crossed a message of the kernel's (acknowledging the one
 * before) is declined, answered with 0 at once; the kernel's next send
 * goes on as without it, 1 MiB by SrcAvail, which we read.
 */
TEST_F(evil_sink, a_crossed_sinkavail_is_declined)
{
	struct srcah sink = { htonl(ZC_REGION), htonl(self->c.p.zc_mr->rkey),
			      htobe64(ZC_ADDR(&self->c.p)) };
	struct peer *p = &self->c.p;
	struct zc_send z = {};
	struct srcah sa;
	struct bsdh h;
	pthread_t t;

	ASSERT_EQ(4, send(self->c.sfd, "ping", 4, 0));
	peer_poll(p, 300);
	next_header(p, &h, MID_SINKAVAIL, sizeof(sink));
	h.mseq_ack = htonl(p->rx_mseq - 1);
	ASSERT_EQ(0, send_raw(p, &h, &sink, sizeof(sink)));
	EXPECT_EQ(0, got_wrcompl(p));
	zc_send_start(&z, self->c.sfd, ZC_REGION, &t);
	ASSERT_TRUE(got_avail(p, MID_SRCAVAIL, &sa));
	EXPECT_EQ(ZC_REGION, sa.len);
	srcavail_read_whole(_metadata, p, &sa, &z, t, ZC_REGION);
	free(z.buf);
}

/*
 * A send of the threshold or more into our SinkAvail is written from the
 * sender's own pages (ZcopyDirectBytes), not copied; nothing comes as Data.
 */
TEST_F(evil_sink, kernel_writes_its_own_pages_into_ours)
{
	long long direct = sdp_stat("ZcopyDirectBytes");
	struct peer *p = &self->c.p;
	unsigned char *out = malloc(200000);

	ASSERT_NE(NULL, out);
	ASSERT_EQ(0, send_sinkavail(p, 3, p->zc_mr->rkey, 300000));
	usleep(100000);
	memset(&p->last_data, 0, sizeof(p->last_data));
	stream_fill(35, 0, out, 200000);
	ASSERT_EQ(200000, send(self->c.sfd, out, 200000, 0));
	EXPECT_EQ(200000, got_wrcompl(p));
	EXPECT_EQ(-1, stream_check(35, 0, p->zc + 3, 200000));
	EXPECT_EQ(-1, stream_check(31, 3 + 200000, p->zc + 3 + 200000, 4096))
		TH_LOG("written past the send");
	EXPECT_EQ(direct + 200000, sdp_stat("ZcopyDirectBytes"));
	EXPECT_EQ(0, p->last_data.len) TH_LOG("Data came");
	free(out);
}

/*
 * A SinkAvail under a key that names nothing, written from the sender's
 * pages: the write fails, the connection resets and the send with it.
 */
TEST_F(evil_sink, sinkavail_bad_rkey_for_a_big_send)
{
	long long before = sdp_stat("QpError");
	struct peer *p = &self->c.p;
	struct zc_send z = {};
	pthread_t t;

	ASSERT_EQ(0, send_sinkavail(p, 0, p->zc_mr->rkey ^ 0x5500, 300000));
	usleep(100000);
	zc_send_start(&z, self->c.sfd, 200000, &t);
	pthread_join(t, NULL);
	EXPECT_EQ(-1, z.n);
	EXPECT_TRUE(z.err == ECONNRESET || z.err == EPIPE) TH_LOG("%s", strerror(z.err));
	EXPECT_LT(before, sdp_stat("QpError"));
	free(z.buf);
	EXPECT_RESET(&self->c);
}

/* A SinkAvail offering nothing, or more than 1 MiB, resets. */
TEST_F(evil_sink, sinkavail_of_nothing)
{
	avail_len_fault(_metadata, &self->c, MID_SINKAVAIL, 0, "BadSinkAvail");
}

TEST_F(evil_sink, sinkavail_too_long)
{
	avail_len_fault(_metadata, &self->c, MID_SINKAVAIL, (1 << 20) + 1, "BadSinkAvail");
}

/* A second SinkAvail before the first is answered resets. */
TEST_F(evil_sink, second_sinkavail_unanswered)
{
	struct srcah sa = { htonl(4096), htonl(self->c.p.zc_mr->rkey), htobe64(ZC_ADDR(&self->c.p)) };

	ASSERT_EQ(0, send_sinkavail(&self->c.p, 0, self->c.p.zc_mr->rkey, 4096));
	mid_fault(_metadata, &self->c, MID_SINKAVAIL, &sa, sizeof(sa), "UnexpectedMid");
}

/* A SinkAvail under a key that names nothing: the kernel's write fails, it resets. */
TEST_F(evil_sink, sinkavail_bad_rkey)
{
	long long before = sdp_stat("QpError");
	struct peer *p = &self->c.p;

	ASSERT_EQ(0, send_sinkavail(p, 0, p->zc_mr->rkey ^ 0x5500, 4096));
	usleep(100000);
	ASSERT_EQ(100, send(self->c.sfd, p->zc, 100, 0));
	EXPECT_RESET(&self->c);
	EXPECT_LT(before, sdp_stat("QpError"));
}

/* A kernel read waiting for data, in a thread: it offers its buffer. */
struct sink_read {
	int fd;
	unsigned char buf[200000];
	ssize_t n;
	int err;
};

static void *sink_read_thread(void *arg)
{
	struct sink_read *r = arg;

	r->n = recv(r->fd, r->buf, sizeof(r->buf), 0);
	r->err = errno;
	return NULL;
}

/* The kernel's read waits with its SinkAvail out; its fields in @sa. */
static void sink_read_start(struct __test_metadata *_metadata, FIXTURE_DATA(evil_client) *c,
			    struct sink_read *r, pthread_t *t, struct srcah *sa)
{
	r->fd = c->sfd;
	ASSERT_EQ(0, pthread_create(t, NULL, sink_read_thread, r));
	ASSERT_TRUE(got_avail(&c->p, MID_SINKAVAIL, sa));
	EXPECT_EQ(sizeof(r->buf), sa->len);
}

/* We write into the kernel's SinkAvail and answer: its read returns our bytes. */
TEST_F(evil_sink, we_write_into_the_kernels)
{
	long long bytes = sdp_stat("ZcopyRecvBytes");
	struct sink_read *r = calloc(1, sizeof(*r));
	struct peer *p = &self->c.p;
	struct rrch rr = { htonl(5000) };
	struct srcah sa;
	pthread_t t;

	ASSERT_NE(NULL, r);
	sink_read_start(_metadata, &self->c, r, &t, &sa);
	stream_fill(34, 0, p->zc, 5000);
	EXPECT_EQ(IBV_WC_SUCCESS, peer_rdma(p, sa.vaddr, sa.rkey, 5000, true));
	ASSERT_EQ(0, send_msg(p, MID_RDMAWRCOMPL, &rr, sizeof(rr)));
	pthread_join(t, NULL);
	EXPECT_EQ(5000, r->n) TH_LOG("%s", strerror(r->err));
	EXPECT_EQ(-1, stream_check(34, 0, r->buf, 5000));
	EXPECT_EQ(bytes + 5000, sdp_stat("ZcopyRecvBytes"));
	/* its key died before the read returned: our QP's write is refused */
	EXPECT_NE(IBV_WC_SUCCESS, peer_rdma(p, sa.vaddr, sa.rkey, 100, true));
	self->c.refused = 1;
	free(r);
	EXPECT_RESET(&self->c);
}

/*
 * Data that comes while the kernel's SinkAvail waits to go (here for
 * credits, which come with the Data) is read first: the SinkAvail is
 * withdrawn, never sent acknowledging it, so that no bytes of ours written
 * after it could land before it.
 */
TEST_F(evil_sink, data_while_the_sinkavail_waits_goes_first)
{
	long long pins = sdp_stat("ZcopyCacheMisses");
	struct sink_read *r = calloc(1, sizeof(*r));
	struct peer *p = &self->c.p;
	struct bsdh h;
	pthread_t t;
	int i;

	ASSERT_NE(NULL, r);
	/* only the kernel's control credit left: its SinkAvail cannot go */
	peer_poll(p, 50);
	next_header(p, &h, MID_DATA, 0);
	h.bufs = htons(1);
	ASSERT_EQ(0, send_raw(p, &h, NULL, 0));
	r->fd = self->c.sfd;
	ASSERT_EQ(0, sdp_setint(r->fd, SOL_SDP, SDP_ZCOPY_THRESH, 65536));
	ASSERT_EQ(0, pthread_create(&t, NULL, sink_read_thread, r));
	/* its buffer pinned, within the 200 ms before the read asks it back */
	for (i = 0; i < 1000 && sdp_stat("ZcopyCacheMisses") == pins; i++)
		usleep(2000);
	ASSERT_LT(pins, sdp_stat("ZcopyCacheMisses"));
	next_header(p, &h, MID_DATA, 5);
	ASSERT_EQ(0, send_raw(p, &h, "first", 5));
	pthread_join(t, NULL);
	EXPECT_EQ(5, r->n) TH_LOG("%s", strerror(r->err));
	EXPECT_EQ(0, memcmp(r->buf, "first", 5));
	peer_poll(p, 100);
	EXPECT_FALSE(peer_got(p, MID_SINKAVAIL));
	free(r);
}

/*
 * Our message @h (@len bytes of @payload) while the kernel's read waits on
 * its SinkAvail is a fault named @counter: the read ends with ECONNRESET
 * (or, @queued, the bytes queued before it), an Abort comes.
 */
static void sink_fault(struct __test_metadata *_metadata, FIXTURE_DATA(evil_client) *c,
		       struct sink_read *r, pthread_t t, struct bsdh *h, const void *payload,
		       uint32_t len, const char *counter, const char *queued)
{
	long long before = sdp_stat(counter), aborts = sdp_stat("AbortSent");

	ASSERT_EQ(0, conn_error_trace());
	ASSERT_EQ(0, send_raw(&c->p, h, payload, len));
	pthread_join(t, NULL);
	if (queued && r->n > 0) {
		EXPECT_EQ(strlen(queued), r->n);
		EXPECT_EQ(0, memcmp(r->buf, queued, strlen(queued)));
	} else {
		EXPECT_EQ(-1, r->n);
		EXPECT_EQ(ECONNRESET, r->err) TH_LOG("%s", strerror(r->err));
	}
	EXPECT_EQ(before + 1, sdp_stat(counter));
	EXPECT_EQ(aborts + 1, sdp_stat("AbortSent"));
	EXPECT_TRUE(peer_wait_for(&c->p, MID_ABORT));
	EXPECT_TRUE(conn_error_traced(counter)) TH_LOG("no sdp_conn_error %s", counter);
}

/* An answer of more than the kernel offered resets, and its read. */
TEST_F(evil_sink, rdmawrcompl_beyond_the_sinkavail)
{
	struct sink_read *r = calloc(1, sizeof(*r));
	struct srcah sa;
	struct rrch rr;
	struct bsdh h;
	pthread_t t;

	ASSERT_NE(NULL, r);
	sink_read_start(_metadata, &self->c, r, &t, &sa);
	rr.len = htonl(sa.len + 1);
	next_header(&self->c.p, &h, MID_RDMAWRCOMPL, sizeof(rr));
	sink_fault(_metadata, &self->c, r, t, &h, &rr, sizeof(rr), "BadRdmaWrCompl", NULL);
	free(r);
}

/* Once we saw the kernel's SinkAvail, Data before our answer resets. */
TEST_F(evil_sink, data_after_seeing_the_kernels_sinkavail)
{
	struct sink_read *r = calloc(1, sizeof(*r));
	struct srcah sa;
	struct bsdh h;
	pthread_t t;

	ASSERT_NE(NULL, r);
	sink_read_start(_metadata, &self->c, r, &t, &sa);
	next_header(&self->c.p, &h, MID_DATA, 4);
	sink_fault(_metadata, &self->c, r, t, &h, "late", 4, "UnexpectedMid", NULL);
	free(r);
}

/*
 * Data that crossed the kernel's SinkAvail (acknowledging the message
 * before it) comes first: the read asks for its SinkAvail back. An answer
 * of bytes written after that Data resets.
 */
TEST_F(evil_sink, bytes_written_after_data_that_crossed)
{
	struct sink_read *r = calloc(1, sizeof(*r));
	struct peer *p = &self->c.p;
	struct rrch rr = { htonl(10) };
	struct srcah sa;
	struct bsdh h;
	pthread_t t;

	ASSERT_NE(NULL, r);
	sink_read_start(_metadata, &self->c, r, &t, &sa);
	next_header(p, &h, MID_DATA, 5);
	h.mseq_ack = htonl(p->rx_mseq - 1);
	ASSERT_EQ(0, send_raw(p, &h, "cross", 5));
	EXPECT_TRUE(peer_wait_for(p, MID_SINKAVAIL_CANCEL));
	next_header(p, &h, MID_RDMAWRCOMPL, sizeof(rr));
	sink_fault(_metadata, &self->c, r, t, &h, &rr, sizeof(rr), "BadRdmaWrCompl", "cross");
	free(r);
}

TEST_HARNESS_MAIN
