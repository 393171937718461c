// SPDX-License-Identifier: GPL-2.0
/*
 * Allocation failures, one site at a time (debugfs sdp/fail/<site>: the
 * stock kernels have no fault injection). Each path a shortage takes must
 * end in a clear errno, a fallback to TCP for that one connection, or a
 * wait for memory; never a crash, a hang or a leak. Each case checks that
 * the fault was met (its count back at 0), and ends with the SDP sockets,
 * QPs and CQs back to their counts and the next connection over RDMA.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sys/time.h>

#include "kselftest_harness.h"
#include "sdp_proof.h"
#include "sdp_gen.h"
#include "sdp_baseline.h"
#include "sdp_peer.h"

#define FAIL_DIR	"/sys/kernel/debug/sdp/fail/"

static int arm(const char *site, int n)
{
	char path[128], v[16];

	snprintf(path, sizeof(path), FAIL_DIR "%s", site);
	snprintf(v, sizeof(v), "%d", n);
	return sdp_write_file(path, v);
}

/* The faults still armed at @site (0 once all were met). */
static int armed(const char *site)
{
	return sdp_read_int(FAIL_DIR, site);
}

static const char *const sites[] = {
	"sock", "tcp", "cm_id", "accept", "conn", "pd", "cq", "qp", "rings", "rx_buf", "tx_buf",
	"kmem_buf",
};

/*
 * One baseline for every case, read with no QP of ours left: the RDMA
 * byte's connection closes while the next case runs, whose end waits for
 * it too (a case's own snapshot had caught one still closing: QPs 4 -> 3).
 */
static struct baseline settled;

__attribute__((constructor)) static void settle(void)
{
	bool gone = sdp_qps_gone(15);

	baseline_read(&settled);
	fprintf(stderr, "# baseline%s: QPs %d, CQs %d, MRs %d, PDs %d, SDP sockets %d\n",
		gone ? "" : " (QPs of ours still there)", settled.qps, settled.cqs,
		settled.mrs, settled.pds, settled.socks);
}

/* The next program finds none of ours either. */
__attribute__((destructor)) static void settle_after(void)
{
	sdp_qps_gone(15);
}

/*
 * Every fault disarmed (one a failed case left must not fail the next),
 * everything the case made gone; then a connection over RDMA.
 */
static void all_back(struct __test_metadata *_metadata)
{
	const struct baseline *before = &settled;
	struct sockaddr_storage addr;
	struct baseline now;
	socklen_t alen;
	int l;

	for (size_t i = 0; i < sizeof(sites) / sizeof(sites[0]); i++)
		EXPECT_EQ(0, arm(sites[i], 0));
	EXPECT_TRUE(baseline_back(before, &now, 10))
		TH_LOG(BASELINE_FMT, BASELINE_ARGS(before, &now));
	l = sdp_listener(sdp_family(), SDP_A, 8, &addr, &alen);
	ASSERT_LE(0, l);
	sdp_rdma_byte(_metadata, l, &addr, alen);
	close(l);
}

/* The cases of one site or none: their teardown is all_back(). */
FIXTURE(fault) {};

FIXTURE_SETUP(fault)
{
	ASSERT_LE(0, settled.qps);
}

FIXTURE_TEARDOWN(fault)
{
	all_back(_metadata);
}

/*
 * socket() without memory for the SDP socket or its native one: ENOBUFS,
 * as TCP's inet_create() says, and the next one is fine.
 */
TEST_F(fault, socket_without_memory)
{
	for (int i = 0; i < 2; i++) {
		int fd;

		ASSERT_EQ(0, arm(sites[i], 1));
		EXPECT_EQ(-1, socket(sdp_family(), SOCK_STREAM, 0)) TH_LOG("%s", sites[i]);
		EXPECT_EQ(ENOBUFS, errno);
		EXPECT_EQ(0, armed(sites[i]));
		fd = socket(sdp_family(), SOCK_STREAM, 0);
		EXPECT_LE(0, fd);
		close(fd);
	}
	SDP_PROVE_LOCAL();
}

/*
 * A site of the connecting side (connect_site), or of a listener's child
 * (listen_site), with a listener to connect to.
 */
struct site {
	int lfd;
	struct sockaddr_storage addr;
	socklen_t alen;
	int rdma_only;
};

static void site_setup(struct __test_metadata *_metadata, struct site *self)
{
	ASSERT_LE(0, settled.qps);
	self->rdma_only = sdp_sysctl("rdma_only");
	self->lfd = sdp_listener(sdp_family(), SDP_A, 8, &self->addr, &self->alen);
	ASSERT_LE(0, self->lfd);
}

static void site_teardown(struct __test_metadata *_metadata, struct site *self)
{
	sdp_sysctl_set("rdma_only", self->rdma_only);
	close(self->lfd);
	all_back(_metadata);
}

FIXTURE(connect_site) {
	struct site s;
};

FIXTURE_VARIANT(connect_site) {
	const char *name;
};

FIXTURE_VARIANT_ADD(connect_site, cm_id) { .name = "cm_id" };
FIXTURE_VARIANT_ADD(connect_site, conn) { .name = "conn" };
FIXTURE_VARIANT_ADD(connect_site, pd) { .name = "pd" };
FIXTURE_VARIANT_ADD(connect_site, cq) { .name = "cq" };
FIXTURE_VARIANT_ADD(connect_site, qp) { .name = "qp" };
FIXTURE_VARIANT_ADD(connect_site, rings) { .name = "rings" };
FIXTURE_VARIANT_ADD(connect_site, rx_buf) { .name = "rx_buf" };
FIXTURE_VARIANT_ADD(connect_site, kmem_buf) { .name = "kmem_buf" };

FIXTURE_SETUP(connect_site)
{
	site_setup(_metadata, &self->s);
}

FIXTURE_TEARDOWN(connect_site)
{
	site_teardown(_metadata, &self->s);
}

/* (a child has its listener's request's id: no cm_id of its own) */
FIXTURE(listen_site) {
	struct site s;
};

FIXTURE_VARIANT(listen_site) {
	const char *name;
};

FIXTURE_VARIANT_ADD(listen_site, sock) { .name = "sock" };
FIXTURE_VARIANT_ADD(listen_site, tcp) { .name = "tcp" };
FIXTURE_VARIANT_ADD(listen_site, accept) { .name = "accept" };
FIXTURE_VARIANT_ADD(listen_site, conn) { .name = "conn" };
FIXTURE_VARIANT_ADD(listen_site, pd) { .name = "pd" };
FIXTURE_VARIANT_ADD(listen_site, cq) { .name = "cq" };
FIXTURE_VARIANT_ADD(listen_site, qp) { .name = "qp" };
FIXTURE_VARIANT_ADD(listen_site, rings) { .name = "rings" };
FIXTURE_VARIANT_ADD(listen_site, rx_buf) { .name = "rx_buf" };
FIXTURE_VARIANT_ADD(listen_site, kmem_buf) { .name = "kmem_buf" };

FIXTURE_SETUP(listen_site)
{
	site_setup(_metadata, &self->s);
}

FIXTURE_TEARDOWN(listen_site)
{
	site_teardown(_metadata, &self->s);
}

/*
 * connect() short of memory for the RDMA connection: this connection falls
 * back to TCP (FallbackResources), its bytes go through, and the
 * destination is not cached: the next connect is RDMA (teardown).
 */
TEST_F(connect_site, falls_back_for_this_connection)
{
	long long res = sdp_stat("FallbackResources");
	char b = 0;
	int c, a;

	ASSERT_EQ(0, arm(variant->name, 1));
	c = sdp_connect(sdp_family(), &self->s.addr, self->s.alen);
	ASSERT_LE(0, c) TH_LOG("connect: %s", strerror(errno));
	EXPECT_EQ(0, armed(variant->name));
	a = accept(self->s.lfd, NULL, NULL);
	ASSERT_LE(0, a);
	EXPECT_EQ(SDP_TRANSPORT_TCP, sdp_transport(c));
	EXPECT_EQ(SDP_FB_RESOURCES, sdp_getint(c, SOL_SDP, SDP_FALLBACK_REASON));
	EXPECT_EQ(res + 1, sdp_stat("FallbackResources"));
	EXPECT_EQ(1, send(c, "x", 1, 0));
	EXPECT_EQ(1, recv(a, &b, 1, 0));
	EXPECT_EQ(1, send(a, "y", 1, 0));
	EXPECT_EQ(1, recv(c, &b, 1, 0));
	EXPECT_EQ('y', b);
	close(c);
	close(a);
	sdp_rdma_byte(_metadata, self->s.lfd, &self->s.addr, self->s.alen);
}

/* ... and with net.sdp.rdma_only connect() fails: ENOBUFS, as TCP's. */
TEST_F(connect_site, rdma_only_fails_enobufs)
{
	int c;

	sdp_sysctl_set("rdma_only", 1);
	ASSERT_EQ(1, sdp_sysctl("rdma_only"));
	ASSERT_EQ(0, arm(variant->name, 1));
	c = socket(sdp_family(), SOCK_STREAM, 0);
	ASSERT_LE(0, c);
	EXPECT_EQ(-1, connect(c, (struct sockaddr *)&self->s.addr, self->s.alen));
	EXPECT_EQ(ENOBUFS, errno);
	EXPECT_EQ(0, armed(variant->name));
	close(c);
	sdp_sysctl_set("rdma_only", self->s.rdma_only);
	SDP_PROVE_LOCAL();
}

/*
 * A listener short of memory for one child (a hand-made peer connects, so
 * that only the listener's side allocates): the request is rejected
 * saying so (SDP_REJ_NOMEM, RejectSent), nothing of the child stays, and
 * the listener goes on over RDMA (teardown).
 */
TEST_F(listen_site, rejects_this_request)
{
	long long rejected = sdp_stat("RejectSent");
	struct peer p = {};
	unsigned char rej[64] = "";
	struct hh hello;
	int len = 0;

	ASSERT_EQ(0, arm(variant->name, 1));
	good_hello(&hello, PEER_BUFS - 1);
	EXPECT_EQ(1000 + RDMA_CM_EVENT_REJECTED,
		  peer_connect(&p, &self->s.addr, &hello, rej, sizeof(rej), &len));
	EXPECT_EQ(0, armed(variant->name));
	EXPECT_LE(2, len);
	EXPECT_EQ(0, rej[0]);		/* Hello's mid: SDP's reject */
	EXPECT_EQ(3, rej[1]);		/* SDP_REJ_NOMEM */
	EXPECT_EQ(rejected + 1, sdp_stat("RejectSent"));
	peer_free(&p);
	/* the listener still takes a good one */
	sdp_rdma_byte(_metadata, self->s.lfd, &self->s.addr, self->s.alen);
}

/*
 * A listener that cannot make its RDMA listener for lack of memory serves
 * TCP meanwhile and listens over RDMA again by itself (ListenRearmed).
 */
TEST_F(fault, listen_without_memory_rearms)
{
	long long rearmed = sdp_stat("ListenRearmed");
	struct sockaddr_storage addr;
	socklen_t alen;
	int l, i;

	ASSERT_EQ(0, arm("cm_id", 1));
	l = sdp_listener(sdp_family(), SDP_A, 8, &addr, &alen);
	ASSERT_LE(0, l);
	EXPECT_EQ(0, armed("cm_id"));
	for (i = 0; i < 100 && sdp_stat("ListenRearmed") == rearmed; i++)
		usleep(100000);
	EXPECT_EQ(rearmed + 1, sdp_stat("ListenRearmed"));
	EXPECT_EQ(SDP_TRANSPORT_RDMA, sdp_transport(l));
	sdp_rdma_byte(_metadata, l, &addr, alen);
	close(l);
}

/*
 * A TCP client of an SDP listener, and no memory for the SDP socket that
 * would wrap it: accept() fails (ENOMEM, as accept(2) may) and the client
 * stays queued, as TCP's: the next accept() takes it, bytes and all.
 */
TEST_F(fault, accept_of_a_tcp_client_without_memory)
{
	struct sockaddr_storage addr;
	char b = 0;
	socklen_t alen;
	int l, c, a;

	l = sdp_listener(sdp_family(), SDP_A, 8, &addr, &alen);
	ASSERT_LE(0, l);
	c = sdp_connect(AF_INET, &addr, alen);
	ASSERT_LE(0, c);
	ASSERT_EQ(1, send(c, "t", 1, 0));
	ASSERT_NE(0, sdp_poll1(l, POLLIN, 5000) & POLLIN);
	ASSERT_EQ(0, arm("sock", 1));
	EXPECT_EQ(-1, accept(l, NULL, NULL));
	EXPECT_EQ(ENOMEM, errno);
	EXPECT_EQ(0, armed("sock"));
	EXPECT_EQ(0, sdp_poll1(c, POLLIN, 200)) TH_LOG("the client heard of it");
	a = accept(l, NULL, NULL);
	ASSERT_LE(0, a);
	EXPECT_EQ(SDP_TRANSPORT_TCP, sdp_transport(a));
	EXPECT_EQ(1, recv(a, &b, 1, 0));
	EXPECT_EQ('t', b);
	EXPECT_EQ(1, send(a, "u", 1, 0));
	EXPECT_EQ(1, recv(c, &b, 1, 0));
	if (_metadata->passed)
		fprintf(stderr, "# PROOF fallback reason=%d\n", SDP_FB_PEER_TCP);
	close(a);
	close(c);
	close(l);
}

/* A pair over RDMA, proven at its end by the caller. */
static void rdma_pair(struct __test_metadata *_metadata, int *l, int *c, int *a,
		      struct sdp_proof *pr)
{
	struct timeval tv = { .tv_sec = 10 };
	struct sockaddr_storage addr;
	socklen_t alen;

	*l = sdp_listener(sdp_family(), SDP_A, 8, &addr, &alen);
	ASSERT_LE(0, *l);
	*c = sdp_connect(sdp_family(), &addr, alen);
	ASSERT_LE(0, *c);
	*a = accept(*l, NULL, NULL);
	ASSERT_LE(0, *a);
	ASSERT_EQ(SDP_TRANSPORT_RDMA, sdp_transport(*c));
	ASSERT_EQ(0, setsockopt(*c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)));
	ASSERT_EQ(0, setsockopt(*a, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
	ASSERT_EQ(0, sdp_proof_begin(pr, *c, *a));
}

struct reader {
	int fd;
	unsigned char *buf;
	size_t len;
	ssize_t got;
};

static void *read_all(void *arg)
{
	struct reader *r = arg;

	r->got = sdp_read_full(r->fd, r->buf, r->len);
	return NULL;
}

/*
 * No memory for a send buffer: a sender with nothing in flight waits for
 * memory as TCP's does (EAGAIN once SO_SNDTIMEO is over, at once without
 * blocking), and sends once there is; a few failures in a stream cost it
 * nothing but time. Every byte arrives.
 */
TEST_F(fault, send_without_memory_waits)
{
	static unsigned char out[1 << 20], in[1 << 20];
	struct reader r = { .buf = in, .len = sizeof(in) };
	struct timeval tv = { .tv_sec = 1 };
	struct sdp_proof pr;
	int l, c, a;
	pthread_t t;
	double t0;

	rdma_pair(_metadata, &l, &c, &a, &pr);
	r.fd = a;
	ASSERT_EQ(0, setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)));
	ASSERT_EQ(0, arm("tx_buf", 1000));
	ASSERT_EQ(0, arm("kmem_buf", 1000));
	EXPECT_EQ(-1, send(c, "n", 1, MSG_DONTWAIT));
	EXPECT_EQ(EAGAIN, errno);
	t0 = sdp_now();
	EXPECT_EQ(-1, send(c, "b", 1, 0));
	EXPECT_EQ(EAGAIN, errno);
	TH_LOG("a blocking send without memory: EAGAIN after %.1f s", sdp_now() - t0);
	EXPECT_LE(0.9, sdp_now() - t0);
	EXPECT_NE(1000, armed("tx_buf"));
	EXPECT_NE(1000, armed("kmem_buf"));
	ASSERT_EQ(0, arm("tx_buf", 0));
	ASSERT_EQ(0, arm("kmem_buf", 0));
	EXPECT_EQ(0, sdp_poll1(a, POLLIN, 200)) TH_LOG("a refused byte arrived");

	/* now three failures in a stream of 1 MiB, copied (zero-copy needs no buffer) */
	tv.tv_sec = 30;
	ASSERT_EQ(0, setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)));
	ASSERT_EQ(0, sdp_setint(c, SOL_SDP, SDP_ZCOPY_THRESH, 0));
	stream_fill(5, 0, out, sizeof(out));
	ASSERT_EQ(0, arm("tx_buf", 3));
	ASSERT_EQ(0, pthread_create(&t, NULL, read_all, &r));
	EXPECT_EQ(sizeof(out), sdp_write_full(c, out, sizeof(out))) TH_LOG("%s", strerror(errno));
	pthread_join(t, NULL);
	ASSERT_EQ(sizeof(in), r.got);
	EXPECT_EQ(-1, stream_check(5, 0, in, sizeof(in)));
	EXPECT_EQ(0, armed("tx_buf"));
	SDP_PROVE(&pr);
	close(c);
	close(a);
	close(l);
}

/*
 * No memory for more receive buffers: the ring keeps the 4 it started
 * with, and 4 MiB still arrive intact through them.
 */
TEST_F(fault, receive_ring_without_memory_stays_small)
{
	static unsigned char out[4 << 20], in[4 << 20];
	struct reader r = { .buf = in, .len = sizeof(in) };
	struct sdp_info info;
	struct sdp_proof pr;
	int l, c, a, refused;
	pthread_t t;
	ssize_t sent;

	rdma_pair(_metadata, &l, &c, &a, &pr);
	r.fd = a;
	ASSERT_EQ(0, sdp_info(a, &info));
	ASSERT_EQ(4, info.rx_bufs_held);
	ASSERT_EQ(0, arm("rx_buf", 100000));
	stream_fill(6, 0, out, sizeof(out));
	ASSERT_EQ(0, pthread_create(&t, NULL, read_all, &r));
	sent = sdp_write_full(c, out, sizeof(out));
	pthread_join(t, NULL);
	if (sent != sizeof(out) || r.got != sizeof(in)) {
		struct sdp_info ci = {}, ai = {};

		sdp_info(c, &ci);
		sdp_info(a, &ai);
		TH_LOG("sent %zd (%s), got %zd; sender: credits %u, %u held; receiver: %u held, %u credits out",
		       sent, strerror(errno), r.got, ci.tx_credits, ci.rx_bufs_held,
		       ai.rx_bufs_held, ai.rx_credits);
	}
	ASSERT_EQ(sizeof(out), sent);
	ASSERT_EQ(sizeof(in), r.got);
	EXPECT_EQ(-1, stream_check(6, 0, in, sizeof(in)));
	/* (before disarming: any call on the socket tries to grow it again) */
	ASSERT_EQ(0, sdp_info(a, &info));
	refused = 100000 - armed("rx_buf");
	ASSERT_EQ(0, arm("rx_buf", 0));
	TH_LOG("%u receive buffers held, %d growths refused", info.rx_bufs_held, refused);
	EXPECT_LT(0, refused);
	EXPECT_EQ(4, info.rx_bufs_held);
	SDP_PROVE(&pr);
	close(c);
	close(a);
	close(l);
}

/*
 * Where the kernel has fault injection (failslab, on the debug kernel), the
 * kernel's own: each allocation a syscall on an SDP socket makes is failed
 * in turn (the task's fail-nth, as syzkaller does), until the call makes
 * no more. The call fails with an errno or does its work; nothing leaks
 * (the counts come back) and the kernel logs nothing (failslab's own
 * report is off). rdma_cm's handlers and the completions run elsewhere:
 * sdp/fail/ covers those.
 */
#define FAILSLAB	"/sys/kernel/debug/failslab/"
#define FAIL_NTH	"/proc/thread-self/fail-nth"

enum { OP_SOCKET, OP_LISTEN, OP_CONNECT, OP_ACCEPT, OP_SETSOCKOPT, OP_SEND, OP_RECV, OP_MAX };
static const char *const op_names[OP_MAX] = {
	"socket", "listen", "connect", "accept", "setsockopt", "send", "recv",
};

/* The state one attempt starts from, made without faults. */
struct nth {
	int l, c, a;
	struct sockaddr_storage addr;
	socklen_t alen;
};

static int nth_set(int n)
{
	char v[16];

	snprintf(v, sizeof(v), "%d", n);
	return sdp_write_file(FAIL_NTH, v);
}

static void nth_prepare(int op, struct nth *t)
{
	t->l = sdp_listener(sdp_family(), SDP_A, 8, &t->addr, &t->alen);
	t->c = t->a = -1;
	if (op == OP_LISTEN || op == OP_CONNECT) {
		t->c = socket(sdp_family(), SOCK_STREAM, 0);
	} else if (op != OP_SOCKET) {
		t->c = sdp_connect(sdp_family(), &t->addr, t->alen);
		if (op != OP_ACCEPT)
			t->a = accept(t->l, NULL, NULL);
		if (op == OP_RECV && t->c >= 0)
			send(t->c, "r", 1, 0);
	}
}

/* The call under faults: 0, or its errno. */
static int nth_call(int op, struct nth *t)
{
	int one = 1 << 20, fd, r;
	char b;

	switch (op) {
	case OP_SOCKET:
		fd = socket(sdp_family(), SOCK_STREAM, 0);
		if (fd < 0)
			return errno;
		close(fd);
		return 0;
	case OP_LISTEN:
		r = listen(t->c, 8);
		break;
	case OP_CONNECT:
		r = connect(t->c, (struct sockaddr *)&t->addr, t->alen);
		break;
	case OP_ACCEPT:
		r = t->a = accept(t->l, NULL, NULL);
		break;
	case OP_SETSOCKOPT:
		r = setsockopt(t->c, SOL_SOCKET, SO_RCVBUF, &one, sizeof(one));
		break;
	case OP_SEND:
		r = send(t->c, "s", 1, MSG_DONTWAIT);
		break;
	default:
		r = recv(t->a, &b, 1, MSG_DONTWAIT);
		break;
	}
	return r < 0 ? errno : 0;
}

static void nth_cleanup(struct nth *t)
{
	close(t->a);
	close(t->c);
	close(t->l);
}

/*
 * What a failed allocation may make a call say. ENFILE is the socket
 * layer's own, for AF_INET too: socket() and accept() when sock_alloc()
 * gets no inode.
 */
static bool nth_errno_ok(int err)
{
	return err == ENOMEM || err == ENOBUFS || err == EAGAIN || err == ENFILE ||
	       err == ECONNREFUSED || err == EHOSTUNREACH || err == ETIMEDOUT ||
	       err == EADDRNOTAVAIL || err == EADDRINUSE || err == ECONNABORTED;
}

TEST_F_TIMEOUT(fault, syscalls_with_each_allocation_failed, 1200)
{
	static const char *const knobs[][2] = {
		{ "ignore-gfp-wait", "N" }, { "verbose", "0" },
	};
	char saved[2][16] = {};
	struct nth t;

	if (access(FAIL_NTH, W_OK) || access(FAILSLAB, F_OK))
		SKIP(return, "no failslab in this kernel (sdp/fail/ covers the paths)");
	for (int k = 0; k < 2; k++) {
		char path[128];
		FILE *f;

		snprintf(path, sizeof(path), FAILSLAB "%s", knobs[k][0]);
		f = fopen(path, "r");
		ASSERT_NE(NULL, f);
		ASSERT_NE(NULL, fgets(saved[k], sizeof(saved[k]), f));
		fclose(f);
		ASSERT_EQ(0, sdp_write_file(path, knobs[k][1]));
	}
	for (int op = 0; op < OP_MAX; op++) {
		int n, err, left, failed = 0, errs = 0;

		for (n = 1; n < 500; n++) {
			nth_prepare(op, &t);
			ASSERT_LE(0, t.l);
			ASSERT_EQ(0, nth_set(n));
			err = nth_call(op, &t);
			left = sdp_read_int("/proc/thread-self", "fail-nth");
			nth_set(0);
			nth_cleanup(&t);
			if (left > 0)
				break;		/* the call made fewer than n */
			failed++;
			errs += !!err;
			EXPECT_TRUE(!err || nth_errno_ok(err))
				TH_LOG("%s, allocation %d failed: %s", op_names[op], n, strerror(err));
		}
		TH_LOG("%s: %d allocations failed in turn, %d calls then failed", op_names[op],
		       failed, errs);
		EXPECT_LT(0, failed) TH_LOG("%s allocates nothing?", op_names[op]);
		EXPECT_GT(500, n);
	}
	for (int k = 0; k < 2; k++) {
		char path[128];

		snprintf(path, sizeof(path), FAILSLAB "%s", knobs[k][0]);
		sdp_write_file(path, saved[k]);
	}
	SDP_PROVE_LOCAL();
}

TEST_HARNESS_MAIN
