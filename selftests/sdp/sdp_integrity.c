// SPDX-License-Identifier: GPL-2.0
/*
 * Data integrity over SDP (and TCP, the oracle): random write sizes from
 * 1 B to 4 MiB in both directions at once, and 64 connections at once
 * driven by one non-blocking event loop. Every byte is checked against a
 * keyed generator; for SDP, each socket's RDMA byte counters must equal what
 * it moved and the rxe links must have carried the packets.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sys/epoll.h>

#include "kselftest_harness.h"
#include "sdp_proof.h"
#include "sdp_gen.h"

struct stream_job {
	int fd;
	unsigned long long key;
	unsigned long long total;
	size_t max;
	unsigned int seed;
	unsigned long long done;
	long long bad;		/* first wrong offset, -1 if none */
	int err;
};

static void *stream_writer(void *arg)
{
	struct stream_job *j = arg;
	unsigned char *buf = malloc(j->max);

	while (buf && j->done < j->total) {
		size_t len = random_size(&j->seed, j->max);

		if (len > j->total - j->done)
			len = j->total - j->done;
		stream_fill(j->key, j->done, buf, len);
		if (sdp_write_full(j->fd, buf, len) != (ssize_t)len) {
			j->err = errno;
			break;
		}
		j->done += len;
	}
	free(buf);
	return NULL;
}

static void *stream_reader(void *arg)
{
	struct stream_job *j = arg;
	unsigned char *buf = malloc(j->max);

	j->bad = -1;
	while (buf && j->done < j->total) {
		size_t len = random_size(&j->seed, j->max);
		ssize_t n = recv(j->fd, buf, len, 0);

		if (n <= 0) {
			j->err = n ? errno : EPIPE;
			break;
		}
		if (j->bad < 0)
			j->bad = stream_check(j->key, j->done, buf, n);
		j->done += n;
	}
	free(buf);
	return NULL;
}

FIXTURE(integ) {
	int family;
	const char *ip;
};

FIXTURE_VARIANT(integ) {
	bool sdp;
};

SDP_ORACLE_VARIANT(integ, tcp) { .sdp = false };
FIXTURE_VARIANT_ADD(integ, sdp) { .sdp = true };

FIXTURE_SETUP(integ)
{
	self->family = variant->sdp ? sdp_family() : AF_INET;
	self->ip = SDP_A;
}

FIXTURE_TEARDOWN(integ)
{
}

/* The evidence of what the connection ran over (sdp_proof.h). */
#define PROOF_BEGIN(pr, a, b) do {					\
	if (variant->sdp)						\
		ASSERT_EQ(0, sdp_proof_begin(pr, a, b))			\
			TH_LOG("proof: %s", strerror(errno));		\
} while (0)

#define PROOF_END(pr, a) do {						\
	if (variant->sdp)						\
		SDP_PROVE(pr);						\
	else								\
		SDP_PROVE_TCP(a);					\
} while (0)

/* For SDP: @fd moved exactly these bytes over RDMA (or is on TCP if expected). */
static bool rdma_moved(int fd, unsigned long long tx, unsigned long long rx)
{
	struct sdp_info info;

	if (sdp_info(fd, &info))
		return false;
	if (sdp_expected_transport() == SDP_TRANSPORT_TCP)
		return info.transport == SDP_TRANSPORT_TCP;
	return info.transport == SDP_TRANSPORT_RDMA &&
	       info.tx_bytes == tx && info.rx_bytes == rx;
}

#define BIDIR_BYTES	(24ULL << 20)

TEST_F_TIMEOUT(integ, bidir_random_sizes_1b_to_4mib, 300)
{
	struct stream_job w[2], r[2];
	pthread_t tw[2], tr[2];
	struct sdp_proof pr;
	int a, b, i;

	ASSERT_EQ(0, sdp_pair(self->family, self->ip, &a, &b));
	PROOF_BEGIN(&pr, a, b);
	for (i = 0; i < 2; i++) {
		w[i] = (struct stream_job){ .fd = i ? b : a, .key = 11 + i,
					    .total = BIDIR_BYTES, .max = 4 << 20,
					    .seed = 1 + i };
		r[i] = (struct stream_job){ .fd = i ? a : b, .key = 11 + i,
					    .total = BIDIR_BYTES, .max = 4 << 20,
					    .seed = 7 + i };
		ASSERT_EQ(0, pthread_create(&tr[i], NULL, stream_reader, &r[i]));
		ASSERT_EQ(0, pthread_create(&tw[i], NULL, stream_writer, &w[i]));
	}
	for (i = 0; i < 2; i++) {
		pthread_join(tw[i], NULL);
		pthread_join(tr[i], NULL);
		EXPECT_EQ(0, w[i].err);
		EXPECT_EQ(0, r[i].err);
		EXPECT_EQ(BIDIR_BYTES, r[i].done);
		EXPECT_EQ(-1, r[i].bad) TH_LOG("stream %d wrong at %lld", i, r[i].bad);
	}
	if (variant->sdp) {
		EXPECT_TRUE(rdma_moved(a, BIDIR_BYTES, BIDIR_BYTES));
		EXPECT_TRUE(rdma_moved(b, BIDIR_BYTES, BIDIR_BYTES));
	}
	PROOF_END(&pr, a);
	close(a);
	close(b);
}

#define NSOCK		64
#define PER_DIR		(512ULL << 10)
#define CHUNK_MAX	(64 << 10)

struct end {
	int fd;
	unsigned long long tx, rx;	/* bytes sent and received so far */
	unsigned long long tx_key, rx_key;
	unsigned char chunk[CHUNK_MAX];	/* generated, not yet sent */
	size_t chunk_len, chunk_off;
	bool tx_done, rx_done;		/* all of PER_DIR sent, received */
};

/* Wait only for what the end still needs; finished ends leave the loop. */
static int end_rearm(int ep, struct end *e, unsigned int idx)
{
	struct epoll_event ev = { .data.u32 = idx };

	if (!e->tx_done)
		ev.events |= EPOLLOUT;
	if (!e->rx_done)
		ev.events |= EPOLLIN;
	if (!ev.events)
		return epoll_ctl(ep, EPOLL_CTL_DEL, e->fd, NULL);
	return epoll_ctl(ep, EPOLL_CTL_MOD, e->fd, &ev);
}

/* Send what the socket takes of the end's pending chunk. */
static int end_send(struct end *e, unsigned int *seed)
{
	ssize_t put;

	if (e->chunk_off == e->chunk_len) {
		size_t len = random_size(seed, CHUNK_MAX);
		unsigned long long left = PER_DIR - e->tx;

		e->chunk_len = len > left ? left : len;
		e->chunk_off = 0;
		stream_fill(e->tx_key, e->tx, e->chunk, e->chunk_len);
	}
	put = send(e->fd, e->chunk + e->chunk_off, e->chunk_len - e->chunk_off,
		   MSG_NOSIGNAL);
	if (put < 0)
		return errno == EAGAIN ? 0 : -errno;
	e->chunk_off += put;
	e->tx += put;
	return 0;
}

TEST_F_TIMEOUT(integ, many_sockets_at_once, 800)
{
	static struct end ends[2 * NSOCK];
	static struct sdp_proof pr[NSOCK];
	static unsigned char buf[CHUNK_MAX];
	unsigned int seed = 42;
	int ep, i, open_ends = 2 * NSOCK;
	/* 12 s on the stock kernels; 196 and 261+ s in two debug-kernel runs */
	double deadline = sdp_now() + (sdp_slow() > 1 ? 720 : 240);
	int timeout_ms = variant->sdp ? sdp_sysctl("connect_timeout_ms") : 0;
	int ttl = variant->sdp ? sdp_sysctl("negative_cache_ttl") : 0;

	/*
	 * 64 connections over RDMA: one fell back to TCP in two full runs
	 * (the likely cause, a port left in the negative cache by an earlier
	 * test, is fixed there); a slow connect under emulation would fall
	 * back too, by design. This test is about the bytes.
	 */
	if (variant->sdp) {
		sdp_sysctl_set("connect_timeout_ms", 10000);
		sdp_sysctl_set("negative_cache_ttl", 0);
	}
	ep = epoll_create1(0);
	ASSERT_LE(0, ep);
	for (i = 0; i < NSOCK; i++) {
		struct end *a = &ends[2 * i], *b = &ends[2 * i + 1];

		ASSERT_EQ(0, sdp_pair(self->family, self->ip, &a->fd, &b->fd))
			TH_LOG("pair %d: %s", i, strerror(errno));
		PROOF_BEGIN(&pr[i], a->fd, b->fd);
		a->tx_key = b->rx_key = 1000 + 2 * i;
		b->tx_key = a->rx_key = 1001 + 2 * i;
	}
	if (variant->sdp) {
		sdp_sysctl_set("connect_timeout_ms", timeout_ms);
		sdp_sysctl_set("negative_cache_ttl", ttl);
	}
	for (i = 0; i < 2 * NSOCK; i++) {
		struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT,
					  .data.u32 = i };

		ASSERT_EQ(0, fcntl(ends[i].fd, F_SETFL, O_NONBLOCK));
		ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, ends[i].fd, &ev));
	}

	while (open_ends && sdp_now() < deadline) {
		struct epoll_event evs[32];
		int n = epoll_wait(ep, evs, 32, 1000);

		ASSERT_LE(0, n);
		for (int k = 0; k < n; k++) {
			struct end *e = &ends[evs[k].data.u32];

			if ((evs[k].events & EPOLLOUT) && e->tx < PER_DIR)
				ASSERT_EQ(0, end_send(e, &seed));
			if (e->tx == PER_DIR && !e->tx_done) {
				e->tx_done = true;
				ASSERT_EQ(0, end_rearm(ep, e, evs[k].data.u32));
				open_ends -= e->rx_done;
			}
			if (!e->rx_done && (evs[k].events & (EPOLLIN | EPOLLHUP))) {
				ssize_t got = recv(e->fd, buf,
						   random_size(&seed, sizeof(buf)), 0);

				if (got < 0) {
					ASSERT_EQ(EAGAIN, errno);
				} else {
					ASSERT_LT(0, got) TH_LOG("EOF after %llu B", e->rx);
					ASSERT_EQ(-1, stream_check(e->rx_key, e->rx, buf, got));
					e->rx += got;
				}
				ASSERT_GE(PER_DIR, e->rx);
				if (e->rx == PER_DIR) {
					e->rx_done = true;
					ASSERT_EQ(0, end_rearm(ep, e, evs[k].data.u32));
					open_ends -= e->tx_done;
				}
			}
		}
	}
	EXPECT_EQ(0, open_ends);
	for (i = 0; i < 2 * NSOCK; i++) {
		EXPECT_EQ(PER_DIR, ends[i].rx);
		if (variant->sdp) {
			EXPECT_TRUE(rdma_moved(ends[i].fd, PER_DIR, PER_DIR))
				TH_LOG("end %d", i);
		}
	}
	/* all moved, none shut yet: the QPs are quiet and up */
	for (i = 0; i < NSOCK; i++)
		PROOF_END(&pr[i], ends[2 * i].fd);
	/* then each end's FIN reaches the other: EOF, after exactly PER_DIR */
	for (i = 0; i < 2 * NSOCK; i++)
		ASSERT_EQ(0, shutdown(ends[i].fd, SHUT_WR));
	for (i = 0; i < 2 * NSOCK; i++) {
		ASSERT_NE(0, sdp_poll1(ends[i].fd, POLLIN, 10000) & POLLIN);
		EXPECT_EQ(0, recv(ends[i].fd, buf, sizeof(buf), 0)) TH_LOG("end %d", i);
	}
	for (i = 0; i < 2 * NSOCK; i++)
		close(ends[i].fd);
	close(ep);
}

TEST_HARNESS_MAIN
