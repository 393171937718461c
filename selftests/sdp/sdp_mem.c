// SPDX-License-Identifier: GPL-2.0
/*
 * Rings are socket memory: each buffer a connection holds is in SDP's total
 * (/proc/net/protocols, limited by net.sdp.mem as TCP by tcp_mem) and in
 * its memory cgroup; receive buffers in the socket's sk_rmem_alloc, send
 * buffers in flight in its sk_wmem_queued (SO_MEMINFO), 0 once all is sent,
 * as TCP's. Closed connections give it all back (a socket destroyed with
 * charges left is a kernel WARNING, which fails the test). Past the hard
 * limit a receive ring does not grow, a sender keeps to the buffer it has,
 * the data still flows, and a new connection starts over TCP.
 *
 * The total lags: each CPU keeps up to 1 MiB of charges before adding them
 * (sk_memory_allocated_add()), so it is checked within that.
 */
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <linux/sock_diag.h>

#include "kselftest_harness.h"
#include "sdp_proof.h"

#define STREAM		(8 << 20)
#define PCPU_PAGES	256

/* What the per-CPU reserves may hide of the total, in pages. */
static long lag(void)
{
	return sysconf(_SC_NPROCESSORS_CONF) * PCPU_PAGES;
}

/* SDP's pages in /proc/net/protocols, or -1. */
static long sdp_pages(void)
{
	FILE *f = fopen("/proc/net/protocols", "r");
	char line[512], name[32];
	long size, socks, mem = -1;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%31s %ld %ld %ld", name, &size, &socks, &mem) == 4 &&
		    !strcmp(name, "SDP"))
			break;
		else
			mem = -1;
	if (f)
		fclose(f);
	return mem;
}

/* Wait up to 5 s for SDP's pages to come back to @want, within the lag. */
static long sdp_pages_back(long want)
{
	long now = sdp_pages();

	for (int i = 0; i < 250 && labs(now - want) > lag(); i++) {
		usleep(20000);
		now = sdp_pages();
	}
	return now;
}

static int meminfo(int fd, __u32 m[SK_MEMINFO_VARS])
{
	socklen_t len = SK_MEMINFO_VARS * sizeof(__u32);

	return getsockopt(fd, SOL_SOCKET, SO_MEMINFO, m, &len);
}

/*
 * The bytes one end has charged (pages' worth), or -1: its receive buffers,
 * its send buffers (in flight, or kept for the next message) and the rest
 * of its pages.
 */
static long held(int fd)
{
	__u32 m[SK_MEMINFO_VARS];
	struct sdp_info info;

	if (meminfo(fd, m) || sdp_info(fd, &info))
		return -1;
	return m[SK_MEMINFO_RMEM_ALLOC] + (long)info.tx_bufs_held * info.snd_size +
	       m[SK_MEMINFO_FWD_ALLOC];
}

/*
 * ... checked, once what it sent has completed: its receive buffers, all of
 * them, nothing queued to send (as TCP's, all acknowledged), and less than a
 * page more.
 */
static long charged(struct __test_metadata *_metadata, int fd)
{
	__u32 m[SK_MEMINFO_VARS];
	struct sdp_info info;

	for (int i = 0; !meminfo(fd, m) && m[SK_MEMINFO_WMEM_QUEUED] && i < 250; i++)
		usleep(20000);
	EXPECT_EQ(0, m[SK_MEMINFO_WMEM_QUEUED]);
	EXPECT_EQ(0, sdp_info(fd, &info));
	EXPECT_EQ(0, meminfo(fd, m));
	EXPECT_EQ((long)info.rx_bufs_held * info.rcv_size, m[SK_MEMINFO_RMEM_ALLOC]);
	EXPECT_GT(4096, m[SK_MEMINFO_FWD_ALLOC]);
	return held(fd);
}

/*
 * @STREAM bytes from @a to @b; how many arrived. Rounds: the sender fills
 * until it must wait (it has run out of credits, so the receiver's ring
 * grows), then the reader takes what came. A sender that waits with all it
 * sent already read (its one buffer not yet back) waits for room instead.
 */
static size_t stream(int a, int b)
{
	static char buf[1 << 16];
	size_t sent = 0, got = 0;
	ssize_t n;

	while (got < STREAM) {
		while (sent < STREAM &&
		       (n = send(a, buf, sizeof(buf) < STREAM - sent ? sizeof(buf) :
				 STREAM - sent, MSG_DONTWAIT)) > 0)
			sent += n;
		if (sent == got) {
			if (!(sdp_poll1(a, POLLOUT, 5000) & POLLOUT))
				break;
			continue;
		}
		n = recv(b, buf, sizeof(buf), 0);
		if (n <= 0)
			break;
		got += n;
		while ((n = recv(b, buf, sizeof(buf), MSG_DONTWAIT)) > 0)
			got += n;
	}
	return got;
}

/* Past the hard limit a new connection has no RDMA buffers: it starts over TCP. */
static void new_pair_over_tcp(struct __test_metadata *_metadata)
{
	long fb = sdp_stat("FallbackResources");
	char ok[2];
	int a, b;

	ASSERT_EQ(0, sdp_pair(sdp_family(), SDP_A, &a, &b));
	EXPECT_EQ(SDP_TRANSPORT_TCP, sdp_transport(a));
	EXPECT_EQ(fb + 1, sdp_stat("FallbackResources"));
	EXPECT_EQ(2, send(a, "ok", 2, 0));
	EXPECT_EQ(2, recv(b, ok, 2, MSG_WAITALL));
	close(a);
	close(b);
}

/* Rings for RDMA connections only: a fallback run has none to count. */
#define NEED_RDMA() do {						\
	if (sdp_expected_transport() != SDP_TRANSPORT_RDMA)		\
		SKIP(return, "no RDMA here: no rings");			\
} while (0)

/* A connection's rings are in its sockets' and SDP's memory, then gone. */
TEST(rings_are_socket_memory)
{
	static char big_buf[256 << 10];
	long before = sdp_pages(), both, grown;
	struct timeval tv = { .tv_sec = 10 };
	__u32 m[SK_MEMINFO_VARS];
	size_t sent = 0, got;
	struct sdp_info info;
	struct sdp_proof p;
	ssize_t n;
	int a, b;

	NEED_RDMA();
	ASSERT_LE(0, before);
	ASSERT_EQ(0, sdp_pair(sdp_family(), SDP_A, &a, &b));
	both = charged(_metadata, a) + charged(_metadata, b);
	EXPECT_LT(0, both);
	EXPECT_GE(lag(), labs(before + both / 4096 - sdp_pages()));
	ASSERT_EQ(0, sdp_proof_begin(&p, a, b));
	ASSERT_EQ(0, sdp_info(a, &info));
	/* SO_SNDBUF not set: it reads the send ring, as TCP's its autotuned size */
	EXPECT_EQ((int)(info.tx_bufs * info.snd_size), sdp_getint(a, SOL_SOCKET, SO_SNDBUF));

	/*
	 * The pipe full (no POLLOUT for 300 ms): the peer's ring holds all it
	 * may, and what waits for its credits is queued.
	 */
	do {
		while ((n = send(a, big_buf, sizeof(big_buf), MSG_DONTWAIT)) > 0)
			sent += n;
	} while (sdp_poll1(a, POLLOUT, 300) & POLLOUT);
	ASSERT_LT(0, sent);
	/* (SDP_INFO first: what is in flight only shrinks meanwhile) */
	ASSERT_EQ(0, sdp_info(a, &info));
	ASSERT_EQ(0, meminfo(a, m));
	EXPECT_LT(0, m[SK_MEMINFO_WMEM_QUEUED]);
	EXPECT_EQ(0, m[SK_MEMINFO_WMEM_QUEUED] % info.snd_size);
	EXPECT_GE((long)info.tx_bufs_held * info.snd_size, m[SK_MEMINFO_WMEM_QUEUED]);
	TH_LOG("queued: %u KiB in a ring of %u", m[SK_MEMINFO_WMEM_QUEUED] >> 10, info.tx_bufs);
	ASSERT_EQ(0, setsockopt(b, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
	for (got = 0; got < sent; got += n) {
		n = recv(b, big_buf, sizeof(big_buf) < sent - got ? sizeof(big_buf) : sent - got, 0);
		ASSERT_LT(0, n);
	}
	ASSERT_EQ(STREAM, stream(a, b));
	ASSERT_EQ(0, sdp_info(b, &info));
	/* the sender ran out of credits: the ring grew, and it is charged */
	EXPECT_LT(4, info.rx_bufs_held);
	grown = charged(_metadata, a) + charged(_metadata, b);
	EXPECT_LT(both, grown);
	EXPECT_GE(lag(), labs(before + grown / 4096 - sdp_pages()));
	TH_LOG("charged: %ld KiB at the start, %ld KiB after %d MiB (%u buffers)",
	       both >> 10, grown >> 10, STREAM >> 20, info.rx_bufs_held);
	SDP_PROVE(&p);
	close(a);
	close(b);
	EXPECT_GE(lag(), labs(before - sdp_pages_back(before)));
}

/*
 * Past net.sdp.mem's low limit, below pressure, rings grow as before (as
 * tcp_mem). Past its hard limit a ring does not grow, and the stream still
 * gets through on the buffers it had; a new connection cannot have rings
 * at all and starts over TCP. For the limits to be seen past the per-CPU
 * lag, connections with big rings (buf_size 64 KiB, rx_bufs 64) first hold
 * more than the reserves can hide.
 */
FIXTURE(limit) {
	long mem[3];
	int buf_size, rx_bufs, shared_rq;
};

FIXTURE_SETUP(limit)
{
	sdp_mem_get(self->mem);
	ASSERT_LE(0, self->mem[0]);
	self->buf_size = sdp_sysctl("buf_size");
	self->rx_bufs = sdp_sysctl("rx_bufs");
	self->shared_rq = sdp_sysctl("shared_rq");
}

/* The limits back, whatever the test did. */
FIXTURE_TEARDOWN(limit)
{
	sdp_mem_set(self->mem[0], self->mem[1], self->mem[2]);
	sdp_sysctl_set("buf_size", self->buf_size);
	sdp_sysctl_set("rx_bufs", self->rx_bufs);
	sdp_sysctl_set("shared_rq", self->shared_rq);
}

TEST_F_TIMEOUT(limit, hard_limit_stops_rings_not_data, 300)
{
	static char big_buf[1 << 16];
	int a, b, l, ba[4], bb[4], n = 0;
	struct timeval tv = { .tv_sec = 10 };
	struct sockaddr_storage ss;
	struct sdp_info info;
	struct sdp_proof p;
	long srq, big = 0;
	ssize_t sent, pre;
	socklen_t len;

	NEED_RDMA();
	sdp_sysctl_set("buf_size", 65536);
	sdp_sysctl_set("rx_bufs", 64);
	while (n < 4 && big <= (lag() + 2) * 4096 &&
	       !sdp_pair(sdp_family(), SDP_A, &ba[n], &bb[n])) {
		EXPECT_EQ(STREAM, stream(ba[n], bb[n]));
		big += held(ba[n]) + held(bb[n]);
		n++;
	}
	sdp_sysctl_set("buf_size", self->buf_size);
	sdp_sysctl_set("rx_bufs", self->rx_bufs);
	ASSERT_LT((lag() + 2) * 4096, big) TH_LOG("%d connections hold %ld KiB", n, big >> 10);
	ASSERT_LT(1, sdp_pages());

	ASSERT_EQ(0, sdp_mem_set(1, 1 << 20, 1 << 20));
	ASSERT_EQ(0, sdp_pair(sdp_family(), SDP_A, &a, &b));
	EXPECT_EQ(STREAM, stream(a, b));
	ASSERT_EQ(0, sdp_info(b, &info));
	EXPECT_LT(4, info.rx_bufs_held) TH_LOG("past low, below pressure: no growth");
	close(a);
	close(b);

	ASSERT_EQ(0, sdp_pair(sdp_family(), SDP_A, &a, &b));
	ASSERT_EQ(0, sdp_mem_set(1, 1, 1));
	ASSERT_EQ(0, sdp_proof_begin(&p, a, b));
	EXPECT_EQ(STREAM, stream(a, b));
	ASSERT_EQ(0, sdp_info(b, &info));
	EXPECT_EQ(4, info.rx_bufs_held);
	charged(_metadata, b);
	SDP_PROVE(&p);
	close(a);
	close(b);

	new_pair_over_tcp(_metadata);

	/*
	 * On the device's SRQ a promise holds no buffer, but lets the peer
	 * send one: past the limit promises are not made either.
	 */
	sdp_sysctl_set("shared_rq", 1);
	srq = sdp_stat("SrqConnections");
	ASSERT_EQ(0, sdp_mem_set(1, 1 << 20, 1 << 20));
	ASSERT_EQ(0, sdp_pair(sdp_family(), SDP_A, &a, &b));
	ASSERT_EQ(srq + 2, sdp_stat("SrqConnections"));
	ASSERT_EQ(0, sdp_mem_set(1, 1, 1));
	ASSERT_EQ(0, sdp_proof_begin(&p, a, b));
	EXPECT_EQ(STREAM, stream(a, b));
	ASSERT_EQ(0, sdp_info(b, &info));
	EXPECT_EQ(4, info.rx_bufs_held) TH_LOG("on the SRQ past the limit");
	SDP_PROVE(&p);
	close(a);
	close(b);
	new_pair_over_tcp(_metadata);
	sdp_sysctl_set("shared_rq", self->shared_rq);

	/*
	 * The send side: SO_SNDBUF makes a ring of many buffers, but past the
	 * limit a sender keeps to one (the core forces a charge only beyond
	 * SO_SNDBUF; we force the one). It waits for that buffer to come
	 * back, writable again then.
	 */
	ASSERT_EQ(0, sdp_mem_set(self->mem[0], self->mem[1], self->mem[2]));
	a = socket(sdp_family(), SOCK_STREAM, 0);
	ASSERT_LE(0, a);
	ASSERT_EQ(0, sdp_setint(a, SOL_SOCKET, SO_SNDBUF, 1 << 20));
	l = sdp_listener(sdp_family(), SDP_A, 1, &ss, &len);
	ASSERT_LE(0, l);
	ASSERT_EQ(0, connect(a, (struct sockaddr *)&ss, len));
	b = accept(l, NULL, NULL);
	ASSERT_LE(0, b);
	close(l);
	ASSERT_EQ(0, sdp_info(a, &info));
	ASSERT_LT(2, info.tx_bufs);
	ASSERT_EQ(0, info.tx_bufs_held);
	ASSERT_EQ(0, sdp_mem_set(1, 1, 1));
	ASSERT_EQ(0, sdp_proof_begin(&p, a, b));
	/* its first buffer is had all the same, as TCP forces its first skb */
	EXPECT_EQ(1, send(a, "w", 1, MSG_DONTWAIT)) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(1, recv(b, info.ibdev, 1, 0));
	for (pre = 0; (sent = send(a, big_buf, sizeof(big_buf), MSG_DONTWAIT)) > 0; pre += sent)
		;
	EXPECT_EQ(EAGAIN, errno);
	ASSERT_EQ(0, sdp_info(a, &info));
	EXPECT_GE(1, info.tx_bufs_held) TH_LOG("a ring of %u filled %u buffers past the limit",
					     info.tx_bufs, info.tx_bufs_held);
	/* (its buffer may wait for credits: the reader's turn) */
	ASSERT_GE(sizeof(big_buf), pre);
	ASSERT_EQ(0, setsockopt(b, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
	EXPECT_EQ(pre, sdp_read_full(b, big_buf, pre));
	EXPECT_NE(0, sdp_poll1(a, POLLOUT, 5000) & POLLOUT);
	EXPECT_EQ(STREAM, stream(a, b));
	charged(_metadata, a);
	SDP_PROVE(&p);
	close(a);
	close(b);
	TH_LOG("%d connections held %ld KiB; past the limit a receive ring stayed at 4 buffers, a send ring of %u at 1",
	       n, big >> 10, info.tx_bufs);
	while (n--) {
		close(ba[n]);
		close(bb[n]);
	}
}

/*
 * On the SRQ, a message that lands past the hard limit is kept uncharged,
 * loose: its promise was made before. Promises on many connections add up
 * to far more than the SRQ's 64 buffers, so the SRQ lends at most 64 loose
 * ones and is then not refilled: senders wait on RNR NAKs (and, nobody
 * reading, reset when their retries run out, QpError). However much the
 * peers send, what arrives for readers that do not read (their rx_bytes)
 * fits three times the SRQ (64 more were posted, and a batch of
 * completions refills before their engines count) and what the sockets'
 * reserves could still take, a buffer each.
 */
TEST_F_TIMEOUT(limit, past_the_hard_limit_the_srq_lends_one_srq_worth, 300)
{
	enum { N = 8, SRQ_BUFS = 64 };
	static char big_buf[1 << 16];
	long long qperr = sdp_stat("QpError");
	unsigned long long rx0[N], got = 0;
	int a[N], b[N], i, k, r, promised = 0;
	struct sdp_info info;
	struct sdp_proof p;

	NEED_RDMA();
	sdp_sysctl_set("shared_rq", 1);
	sdp_sysctl_set("rx_bufs", 64);
	for (i = 0; i < N; i++) {
		ASSERT_EQ(0, sdp_pair(sdp_family(), SDP_A, &a[i], &b[i]));
		ASSERT_EQ(SDP_TRANSPORT_RDMA, sdp_transport(b[i]));
		if (!i)
			ASSERT_EQ(0, sdp_proof_begin(&p, a[i], b[i]));
		/* (a ring doubles only when its sender ran dry: a reader that
		 * kept up leaves it small, so stream again until it is half grown) */
		for (k = 0; k < 4; k++) {
			EXPECT_EQ(STREAM, stream(a[i], b[i]));
			ASSERT_EQ(0, sdp_info(b[i], &info));
			if (info.rx_credits >= SRQ_BUFS / 2)
				break;
		}
		if (!i)
			SDP_PROVE(&p);
		promised += info.rx_credits;
		rx0[i] = info.rx_bytes;
	}
	ASSERT_LT(3 * SRQ_BUFS + N, promised) TH_LOG("%d promises: too few to tell", promised);
	ASSERT_EQ(0, sdp_mem_set(1, 1, 1));
	/* (a sender past the limit keeps to one buffer: rounds, while it gets credits) */
	for (r = 0; r < 20; r++) {
		for (i = 0; i < N; i++)
			while (send(a[i], big_buf, sizeof(big_buf), MSG_DONTWAIT | MSG_NOSIGNAL) > 0)
				;
		usleep(50000);
	}
	for (i = 0; i < N; i++) {
		ASSERT_EQ(0, sdp_info(b[i], &info));
		got += info.rx_bytes - rx0[i];
	}
	ASSERT_EQ(0, sdp_mem_set(self->mem[0], self->mem[1], self->mem[2]));
	TH_LOG("%d promises on %d connections; past the limit %llu KiB arrived unread, %lld QP errors",
	       promised, N, got >> 10, sdp_stat("QpError") - qperr);
	EXPECT_LT(0, got);
	EXPECT_GE((3 * SRQ_BUFS + N) * 16384ULL, got);
	for (i = 0; i < N; i++) {
		close(a[i]);
		close(b[i]);
	}
}

#define CG	"/sys/fs/cgroup"
#define CG_TEST	CG "/sdp-mem-test"

/* memory.stat's sock of the test cgroup, in bytes; -1 if unreadable. */
static long cg_sock(void)
{
	return sdp_read_key(CG_TEST "/memory.stat", "sock");
}

/* A cgroup v2 with the memory controller for CG_TEST, or why not. */
static const char *cg_setup(void)
{
	if (access(CG "/cgroup.controllers", F_OK) &&
	    mount("none", CG, "cgroup2", 0, NULL))
		return "no cgroup2";
	if (sdp_write_file(CG "/cgroup.subtree_control", "+memory"))
		return "no memory controller";
	if (mkdir(CG_TEST, 0755) && errno != EEXIST)
		return "cannot make a cgroup";
	return NULL;
}

/*
 * Both ends made in one memory cgroup (the accepted one is the listener's
 * child): the cgroup's socket memory holds both rings while they are open,
 * and nothing once they are closed.
 */
TEST(rings_charged_to_the_memory_cgroup)
{
	const char *why;
	int pipefd[2];
	long res[3];
	pid_t pid;

	NEED_RDMA();
	why = cg_setup();
	if (why)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		char me[32];
		int a, b;

		snprintf(me, sizeof(me), "%d", getpid());
		res[0] = res[1] = res[2] = -1;
		if (!sdp_write_file(CG_TEST "/cgroup.procs", me) &&
		    !sdp_pair(sdp_family(), SDP_A, &a, &b) &&
		    sdp_transport(a) == SDP_TRANSPORT_RDMA &&
		    sdp_transport(b) == SDP_TRANSPORT_RDMA &&
		    stream(a, b) == STREAM) {
			/*
			 * memory.stat is flushed every 2 s at the latest; what
			 * the ends hold is read again each time, as the last
			 * send buffer may still be on its way back
			 */
			for (int i = 0; i < 250; i++) {
				res[0] = held(a) + held(b);
				res[1] = cg_sock();
				if (res[0] == res[1])
					break;
				usleep(20000);
			}
			close(a);
			close(b);
			/* the teardown is a work item: wait for the cgroup to empty */
			for (int i = 0; i < 250 && (res[2] = cg_sock()) > 0; i++)
				usleep(20000);
		}
		_exit(write(pipefd[1], res, sizeof(res)) != sizeof(res));
	}
	close(pipefd[1]);
	ASSERT_EQ(sizeof(res), read(pipefd[0], res, sizeof(res)));
	ASSERT_EQ(pid, waitpid(pid, NULL, 0));
	rmdir(CG_TEST);
	ASSERT_LT(0, res[0]);
	TH_LOG("rings %ld KiB, the cgroup's sock %ld KiB, then %ld KiB",
	       res[0] >> 10, res[1] >> 10, res[2] >> 10);
	EXPECT_EQ(res[0], res[1]);
	EXPECT_EQ(0, res[2]);
	fprintf(stderr, "# PROOF rdma both ends charged %ld B\n", res[0]);
}

TEST_HARNESS_MAIN
