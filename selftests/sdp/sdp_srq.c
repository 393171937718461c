// SPDX-License-Identifier: GPL-2.0
/*
 * Shared receive queues (net.sdp.shared_rq = 1): connections take their
 * receive buffers from their device's SRQ, one per buffer size in use,
 * instead of posting rings of their own.
 *
 *   idle_ends_hold_no_buffers: an idle end holds no receive buffer
 *   (SO_MEMINFO's rmem_alloc 0, as TCP's), a ring end four; once it has
 *   sent and gone idle, no send buffer either; the kernel memory per
 *   connection, both ways, in the log;
 *   streams_arrive_whole: many connections at once, each stream checked;
 *   a_reader_that_never_reads_starves_no_one: one connection's peer fills
 *   every credit and its reader never reads, the others move on;
 *   an_srq_run_dry_fills_again: its refill finds no memory until the SRQ
 *   is dry and its senders wait, then finds it again: streams whole;
 *   without_an_srq_a_ring_of_its_own: the SRQ cannot be made (sdp/fail/srq),
 *   the connection posts its own ring and works;
 *   a_retired_qp_waits_for_its_fence: a closed connection's QP stays until
 *   the marker sent on it after its grace was polled (sdp/hold_poll).
 * Each case ends with the SDP sockets, QPs, CQs and PDs back (an SRQ goes
 * with its PD once its last connection is gone); TCP runs the same, the
 * oracle.
 */
#include <pthread.h>
#include <sys/resource.h>
#include <linux/sock_diag.h>

#include "kselftest_harness.h"
#include "sdp_proof.h"
#include "sdp_gen.h"
#include "sdp_baseline.h"

#define FAIL_DIR	"/sys/kernel/debug/sdp/fail/"
#define HOLD_POLL	"/sys/kernel/debug/sdp/hold_poll"
#define RING_START	4		/* receive buffers a ring posts first */
#define BUF		16384		/* net.sdp.buf_size's default */

FIXTURE(srq) {
	int family;
	bool sdp;
	int shared;
	struct baseline start;
};

FIXTURE_VARIANT(srq) {
	bool sdp;
};

SDP_ORACLE_VARIANT(srq, tcp) { .sdp = false };
FIXTURE_VARIANT_ADD(srq, sdp) { .sdp = true };

FIXTURE_SETUP(srq)
{
	self->sdp = variant->sdp;
	self->family = variant->sdp ? sdp_family() : AF_INET;
	self->shared = sdp_sysctl("shared_rq");
	ASSERT_LE(0, self->shared) TH_LOG("no net.sdp.shared_rq");
	sdp_sysctl_set("shared_rq", 1);
	baseline_read(&self->start);
}

FIXTURE_TEARDOWN(srq)
{
	struct baseline now;

	/* (a case that failed holding the pollers must not leave them held) */
	sdp_write_file(HOLD_POLL, "0");
	sdp_sysctl_set("shared_rq", self->shared);
	EXPECT_TRUE(baseline_back(&self->start, &now, 30))
		TH_LOG(BASELINE_FMT, BASELINE_ARGS(&self->start, &now));
}

/* The receive memory an end holds (SO_MEMINFO's rmem_alloc), or -1. */
static long rmem(int fd)
{
	__u32 m[SK_MEMINFO_VARS];
	socklen_t len = sizeof(m);

	return getsockopt(fd, SOL_SOCKET, SO_MEMINFO, m, &len) ? -1 : m[SK_MEMINFO_RMEM_ALLOC];
}

/* @n connected pairs; the transport every end must be on. */
static int open_pairs(struct __test_metadata *_metadata, FIXTURE_DATA(srq) *self,
		      int *c, int *s, int n)
{
	struct sockaddr_storage addr;
	socklen_t alen;
	int l = sdp_listener(self->family, SDP_A, 128, &addr, &alen);

	if (l < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		c[i] = sdp_connect(self->family, &addr, alen);
		s[i] = c[i] < 0 ? -1 : accept(l, NULL, NULL);
		if (s[i] < 0) {
			close(l);
			return -1;
		}
		if (self->sdp && (sdp_transport(c[i]) != SDP_TRANSPORT_RDMA ||
				  sdp_transport(s[i]) != SDP_TRANSPORT_RDMA)) {
			TH_LOG("pair %d is not over RDMA", i);
			close(l);
			return -1;
		}
	}
	close(l);
	return 0;
}

/* A byte each way on the pair, and what it went over: the proof. */
static void prove_pair(struct __test_metadata *_metadata, FIXTURE_DATA(srq) *self,
		       int c, int s)
{
	struct sdp_proof pr;
	char b;

	if (!self->sdp) {
		SDP_PROVE_TCP(c);
		return;
	}
	ASSERT_EQ(0, sdp_proof_begin(&pr, c, s));
	ASSERT_EQ(1, write(c, "p", 1));
	ASSERT_EQ(1, sdp_read_full(s, &b, 1));
	ASSERT_EQ(1, write(s, "q", 1));
	ASSERT_EQ(1, sdp_read_full(c, &b, 1));
	SDP_PROVE(&pr);
}

static void close_all(int *fds, int n)
{
	for (int i = 0; i < n; i++)
		close(fds[i]);
}

/*
 * The kernel's memory in slabs (large kmallocs, our buffers, included) and
 * vmalloc (rxe's queues), KiB, once the per-CPU counts were folded in
 * (vm.stat_interval, a second). MemAvailable is not it: pages freed to the
 * per-CPU lists are not counted free.
 */
static long kmem_kib(void)
{
	sleep(2);
	return sdp_read_key("/proc/meminfo", "Slab:") +
	       sdp_read_key("/proc/meminfo", "VmallocUsed:");
}

/* The send buffers an end holds, in flight or kept for its next message. */
static int tx_held(int fd)
{
	struct sdp_info info;

	return sdp_info(fd, &info) ? -1 : (int)info.tx_bufs_held;
}

/*
 * Idle ends on the SRQ hold no receive buffer, as TCP's hold no skb;
 * a byte each way is read and gone again. The buffer each end sent its
 * byte from is kept for its next message, and goes once the end was idle
 * for 200 ms (SDP_TX_IDLE). Ring ends (shared_rq 0) hold their first four
 * receive buffers, which this check tells apart. The kernel memory per
 * connection (both ends) each way, for the log.
 */
TEST_F_TIMEOUT(srq, idle_ends_hold_no_buffers, 300)
{
	enum { N = 100, RING = 20 };
	long long srq0 = sdp_stat("SrqConnections");
	int c[N], s[N], rc[RING], rs[RING], i, held = 0, ring_held = 0;
	long before, after, used, ring_before, ring_after;
	char b;

	before = kmem_kib();
	ASSERT_EQ(0, open_pairs(_metadata, self, c, s, N));
	after = kmem_kib();
	for (i = 0; i < N; i++)
		held += (rmem(c[i]) != 0) + (rmem(s[i]) != 0);
	EXPECT_EQ(0, held) TH_LOG("%d of %d idle ends hold receive memory", held, 2 * N);
	if (self->sdp)
		EXPECT_EQ(srq0 + 2 * N, sdp_stat("SrqConnections"));
	for (i = 0; i < N; i++) {
		ASSERT_EQ(1, write(c[i], "c", 1));
		ASSERT_EQ(1, sdp_read_full(s[i], &b, 1));
		ASSERT_EQ('c', b);
		ASSERT_EQ(1, write(s[i], "s", 1));
		ASSERT_EQ(1, sdp_read_full(c[i], &b, 1));
		ASSERT_EQ('s', b);
	}
	for (i = 0, held = 0; i < N; i++)
		held += (rmem(c[i]) != 0) + (rmem(s[i]) != 0);
	EXPECT_EQ(0, held) TH_LOG("%d ends hold memory after their byte was read", held);
	/* (3 s at most: a slow kernel's timers run late) */
	for (int t = 0; self->sdp && t < 30; t++) {
		usleep(100000);
		for (i = 0, held = 0; i < N; i++)
			held += (tx_held(c[i]) != 0) + (tx_held(s[i]) != 0);
		if (!held)
			break;
	}
	EXPECT_EQ(0, held) TH_LOG("%d idle ends still hold send buffers", held);
	used = kmem_kib();

	sdp_sysctl_set("shared_rq", 0);
	ring_before = kmem_kib();
	ASSERT_EQ(0, open_pairs(_metadata, self, rc, rs, RING));
	ring_after = kmem_kib();
	for (i = 0; i < RING; i++)
		ring_held += (rmem(rc[i]) == RING_START * BUF) + (rmem(rs[i]) == RING_START * BUF);
	EXPECT_EQ(self->sdp ? 2 * RING : 0, ring_held)
		TH_LOG("ring ends holding their %d buffers", RING_START);
	TH_LOG("kernel memory per connection (both ends): %ld KiB on the SRQ (%ld KiB once used and idle), %ld KiB with rings",
	       (after - before) / N, (used - before) / N, (ring_after - ring_before) / RING);
	prove_pair(_metadata, self, c[0], s[0]);
	close_all(rc, RING);
	close_all(rs, RING);
	close_all(c, N);
	close_all(s, N);
}

struct flow {
	int in, out;
	unsigned long long key, len, got;
	long long bad;
	int err;
};

/* Send @len bytes of stream @key on out, then end it. */
static void *flow_send(void *arg)
{
	struct flow *f = arg;
	static __thread unsigned char buf[64 << 10];
	unsigned long long off = 0;
	ssize_t n;

	while (off < f->len) {
		n = f->len - off < sizeof(buf) ? f->len - off : sizeof(buf);
		stream_fill(f->key, off, buf, n);
		if (sdp_write_full(f->out, buf, n) != n) {
			f->err = errno;
			break;
		}
		off += n;
	}
	shutdown(f->out, SHUT_WR);
	return NULL;
}

/* Read the stream on in to its end, checked. */
static void *flow_recv(void *arg)
{
	struct flow *f = arg;
	static __thread unsigned char buf[64 << 10];
	ssize_t n;

	f->bad = -1;
	while ((n = recv(f->in, buf, sizeof(buf), 0)) > 0) {
		if (f->bad < 0)
			f->bad = stream_check(f->key, f->got, buf, n);
		f->got += n;
	}
	if (n < 0)
		f->err = errno;
	return NULL;
}

/* @n flows of @len bytes each way at once; true if all arrived whole. */
static bool flows(struct __test_metadata *_metadata, int *c, int *s, int n,
		  unsigned long long len)
{
	struct flow *f = calloc(2 * n, sizeof(*f));
	pthread_t *t = calloc(4 * n, sizeof(*t));
	bool whole = true;
	int i;

	for (i = 0; i < 2 * n; i++) {
		f[i].out = i < n ? c[i] : s[i - n];
		f[i].in = i < n ? s[i] : c[i - n];
		f[i].key = 0x5a5a0000ULL + i;
		f[i].len = len;
		pthread_create(&t[2 * i], NULL, flow_send, &f[i]);
		pthread_create(&t[2 * i + 1], NULL, flow_recv, &f[i]);
	}
	for (i = 0; i < 4 * n; i++)
		pthread_join(t[i], NULL);
	for (i = 0; i < 2 * n; i++) {
		if (f[i].got == len && f[i].bad < 0 && !f[i].err)
			continue;
		TH_LOG("flow %d: %llu of %llu bytes, first wrong at %lld, %s", i, f[i].got,
		       len, f[i].bad, strerror(f[i].err));
		whole = false;
	}
	free(f);
	free(t);
	return whole;
}

/*
 * Connections at once on the SRQ, each stream both ways checked. Their
 * 64 KiB sends reach zcopy_thresh, yet go copied: a connection on the
 * SRQ offers the peer no region of its own.
 */
TEST_F_TIMEOUT(srq, streams_arrive_whole, 300)
{
	enum { N = 32 };
	long long srq0 = sdp_stat("SrqConnections"), zc0 = sdp_stat("ZcopySends");
	int c[N], s[N];

	ASSERT_EQ(0, open_pairs(_metadata, self, c, s, N));
	prove_pair(_metadata, self, c[0], s[0]);
	EXPECT_TRUE(flows(_metadata, c, s, N, 1 << 20));
	EXPECT_EQ(zc0, sdp_stat("ZcopySends"));
	if (self->sdp)
		EXPECT_EQ(srq0 + 2 * N, sdp_stat("SrqConnections"));
	close_all(c, N);
	close_all(s, N);
}

/*
 * One connection's sender fills every credit its peer gave while that
 * reader never reads: its messages hold SRQ buffers, which the SRQ
 * replaces; the other connections' streams all arrive. Then the reader
 * takes its stream, whole.
 */
TEST_F_TIMEOUT(srq, a_reader_that_never_reads_starves_no_one, 300)
{
	enum { N = 8 };
	static unsigned char buf[1 << 20];
	int c[N + 1], s[N + 1], flags;
	unsigned long long sent = 0;
	struct flow hog = { .key = 0x40e };
	ssize_t n;

	ASSERT_EQ(0, open_pairs(_metadata, self, c, s, N + 1));
	prove_pair(_metadata, self, c[0], s[0]);
	flags = fcntl(c[N], F_GETFL);
	ASSERT_EQ(0, fcntl(c[N], F_SETFL, flags | O_NONBLOCK));
	for (int tries = 0; tries < 50; tries++) {
		stream_fill(hog.key, sent, buf, sizeof(buf));
		n = send(c[N], buf, sizeof(buf), 0);
		if (n > 0) {
			sent += n;
			tries = 0;
			continue;
		}
		ASSERT_EQ(EAGAIN, errno);
		usleep(20000);
	}
	TH_LOG("%llu bytes wait for a reader that does not read", sent);
	EXPECT_LT(16 * BUF, sent);
	EXPECT_TRUE(flows(_metadata, c, s, N, 1 << 20));
	ASSERT_EQ(0, fcntl(c[N], F_SETFL, flags));
	shutdown(c[N], SHUT_WR);
	hog.in = s[N];
	flow_recv(&hog);
	EXPECT_EQ(sent, hog.got);
	EXPECT_GT(0, hog.bad) TH_LOG("the reader's stream is wrong at %lld", hog.bad);
	close_all(c, N + 1);
	close_all(s, N + 1);
}

/* Memory comes back this long after a sender met the dry SRQ (an RNR NAK). */
#define DRY_MS		20
#define DRY_ARMED	"1000000"

struct dry {
	long long rnr;		/* rxe's send_rnr_err before */
	long hit;		/* the refills that failed */
	double wait_ms;		/* from the arming to the first RNR NAK seen */
	long long rnr_back;	/* RNR NAKs when memory came back */
};

static void *memory_back_later(void *arg)
{
	struct dry *d = arg;
	double t0 = sdp_now();
	int i;

	/* (10 s at most: a slow kernel takes longer to empty it) */
	for (i = 0; i < 2000 && sdp_rxe_counter("send_rnr_err") <= d->rnr; i++)
		usleep(5000);
	d->wait_ms = (sdp_now() - t0) * 1000;
	usleep(DRY_MS * 1000);
	d->hit = atol(DRY_ARMED) - sdp_read_int(FAIL_DIR, "rx_buf");
	sdp_write_file(FAIL_DIR "rx_buf", "0");
	d->rnr_back = sdp_rxe_counter("send_rnr_err") - d->rnr;
	return NULL;
}

/*
 * The SRQ's refill finds no memory (sdp/fail/rx_buf armed): every buffer
 * a message took stays unposted, the SRQ runs dry, and the senders wait on
 * RNR NAKs (rxe's send_rnr_err). Memory comes back 20 ms after the first,
 * within the senders' 0.7 s of retries; the refill, tried again on its
 * own, posts the buffers, and both streams arrive whole.
 */
TEST_F_TIMEOUT(srq, an_srq_run_dry_fills_again, 120)
{
	struct dry d = { .rnr = sdp_rxe_counter("send_rnr_err") };
	pthread_t t;
	int c, s;

	if (!self->sdp)
		SKIP(return, "no fault site in TCP");
	ASSERT_EQ(0, open_pairs(_metadata, self, &c, &s, 1));
	prove_pair(_metadata, self, c, s);
	ASSERT_EQ(0, sdp_write_file(FAIL_DIR "rx_buf", DRY_ARMED));
	ASSERT_EQ(0, pthread_create(&t, NULL, memory_back_later, &d));
	EXPECT_TRUE(flows(_metadata, &c, &s, 1, 4 << 20));
	pthread_join(t, NULL);
	TH_LOG("%ld refills failed, %lld RNR NAKs (the first %.0f ms after the arming, %lld when memory came back)",
	       d.hit, sdp_rxe_counter("send_rnr_err") - d.rnr, d.wait_ms, d.rnr_back);
	EXPECT_LE(64, d.hit);
	EXPECT_LT(d.rnr, sdp_rxe_counter("send_rnr_err"));
	close(c);
	close(s);
}

/*
 * No SRQ to be had (sdp/fail/srq: the device's cannot be made): the
 * connecting end posts a ring of its own, the accepted end takes the SRQ
 * made for it, and bytes flow both ways.
 */
TEST_F(srq, without_an_srq_a_ring_of_its_own)
{
	long long srq0 = sdp_stat("SrqConnections");
	int c, s;
	char b;

	if (!self->sdp)
		SKIP(return, "no fault site in TCP");
	ASSERT_EQ(0, sdp_write_file(FAIL_DIR "srq", "1"));
	ASSERT_EQ(0, open_pairs(_metadata, self, &c, &s, 1));
	EXPECT_EQ(0, sdp_read_int(FAIL_DIR, "srq"));
	EXPECT_EQ(srq0 + 1, sdp_stat("SrqConnections"));
	EXPECT_EQ(RING_START * BUF, rmem(c));
	EXPECT_EQ(0, rmem(s));
	ASSERT_EQ(1, write(c, "c", 1));
	ASSERT_EQ(1, sdp_read_full(s, &b, 1));
	EXPECT_EQ('c', b);
	prove_pair(_metadata, self, c, s);
	close(c);
	close(s);
}

/*
 * A closed connection's QP on the SRQ is retired: a message half in when
 * it went to error may still complete, naming the QP. After its grace (a
 * second) a marker is sent on it, and the QP goes once the marker's
 * completion was polled, every completion of the QP before it. With the
 * CQs' pollers held past the grace, both ends' QPs stay; let go, they go.
 */
TEST_F_TIMEOUT(srq, a_retired_qp_waits_for_its_fence, 120)
{
	int c, s, i, socks, held, after;
	bool gone;

	if (!self->sdp)
		SKIP(return, "no QP in TCP");
	ASSERT_EQ(0, open_pairs(_metadata, self, &c, &s, 1));
	prove_pair(_metadata, self, c, s);
	close(c);
	close(s);
	/* a socket is gone from sock_diag after its connection let go of its QP */
	for (i = 0; i < 1000 && (socks = sdp_sockets()) != self->start.socks; i++)
		usleep(1000);
	ASSERT_EQ(0, sdp_write_file(HOLD_POLL, "1"));
	held = rdma_objects(RDMA_NLDEV_CMD_RES_QP_GET);
	sleep(3);
	after = rdma_objects(RDMA_NLDEV_CMD_RES_QP_GET);
	ASSERT_EQ(0, sdp_write_file(HOLD_POLL, "0"));
	/* let go, the markers' completions are polled: the QPs go at the next look */
	gone = sdp_qps_gone(2);
	TH_LOG("QPs %d at the start, %d retired and held, %d three seconds on, %d let go",
	       self->start.qps, held, after, rdma_objects(RDMA_NLDEV_CMD_RES_QP_GET));
	EXPECT_EQ(self->start.socks, socks);
	EXPECT_EQ(self->start.qps + 2, held);
	EXPECT_EQ(held, after);
	EXPECT_TRUE(gone) TH_LOG("not gone 2 s after the pollers were let go");
}

TEST_HARNESS_MAIN
