// SPDX-License-Identifier: GPL-2.0
/*
 * An RDMA device going away under live SDP connections: both ends see
 * ECONNRESET (blocked readers and writers wake up), nothing hangs, the
 * listener keeps its port, and once the device is back new connections run
 * over RDMA again. The device is re-added at the end for the tests after.
 * Each case runs with rings and on the device's SRQ (net.sdp.shared_rq),
 * whose retired QPs and SRQs the removal takes too.
 */
#include <pthread.h>
#include <sys/time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "sdp_proof.h"

/* The rxe device owning SDP_A (lib.sh topology). */
#define DEV_DEL	"rdma link del rxe1"
#define DEV_ADD	"rdma link add rxe1 type rxe netdev v1"

struct blocked {
	int fd;
	bool write;
	int err;	/* errno the blocked call ended with */
};

/* Block in recv() (or send() into a full pipe) until the connection dies. */
static void *blocked_call(void *arg)
{
	struct blocked *b = arg;
	static char buf[65536];
	ssize_t n;

	do {
		if (b->write)
			n = send(b->fd, buf, sizeof(buf), MSG_NOSIGNAL);
		else
			n = recv(b->fd, buf, sizeof(buf), 0);
	} while (n > 0);
	b->err = n < 0 ? errno : 0;
	return NULL;
}

/* Until listener @l listens over RDMA again (a device came back): 5 s. */
static bool rdma_listening(int l)
{
	int i;

	for (i = 0; i < 100; i++) {
		if (sdp_transport(l) == SDP_TRANSPORT_RDMA)
			return true;
		usleep(50000);
	}
	return false;
}

/* An SDP client of listener @l (on ss) ends up on RDMA at both ends. */
#define EXPECT_RDMA_CLIENT(l, ss, len) do {				\
	struct sdp_proof _pr;						\
	int _c, _s;							\
									\
	ASSERT_TRUE(rdma_listening(l));					\
	_c = sdp_connect(sdp_family(), ss, len);			\
	ASSERT_LE(0, _c) TH_LOG("connect: %s", strerror(errno));	\
	_s = accept(l, NULL, NULL);					\
	ASSERT_LE(0, _s);						\
	EXPECT_EQ(SDP_TRANSPORT_RDMA, sdp_transport(_c));		\
	EXPECT_EQ(SDP_TRANSPORT_RDMA, sdp_transport(_s));		\
	ASSERT_EQ(0, sdp_proof_begin(&_pr, _c, _s));			\
	EXPECT_EQ(2, send(_c, "ok", 2, 0));				\
	EXPECT_EQ(2, recv(_s, &_pr.info[0], 2, MSG_WAITALL));		\
	SDP_PROVE(&_pr);						\
	close(_c);							\
	close(_s);							\
} while (0)

/* A plain TCP client of listener @l is accepted (the listener serves TCP). */
#define EXPECT_TCP_CLIENT(l, ss, len) do {				\
	int _c = sdp_connect(AF_INET, ss, len), _s;			\
									\
	ASSERT_LE(0, _c) TH_LOG("connect: %s", strerror(errno));	\
	_s = accept(l, NULL, NULL);					\
	ASSERT_LE(0, _s);						\
	EXPECT_EQ(SDP_TRANSPORT_TCP, sdp_transport(_s));		\
	EXPECT_EQ(2, send(_c, "tc", 2, 0));				\
	EXPECT_EQ(2, recv(_s, &_c, 2, MSG_WAITALL));			\
	close(_c);							\
	close(_s);							\
} while (0)

/*
 * Removing and re-adding rxe1 takes seconds, and about four times more on
 * the KASAN/lockdep kernel: past the harness's default 30 s there.
 */
FIXTURE(dev) {
	int shared;
};

/* Connections with rings of their own, and on the device's SRQ. */
FIXTURE_VARIANT(dev) {
	int shared_rq;
};
FIXTURE_VARIANT_ADD(dev, rings) { .shared_rq = 0 };
FIXTURE_VARIANT_ADD(dev, srq) { .shared_rq = 1 };

FIXTURE_SETUP(dev)
{
	self->shared = sdp_sysctl("shared_rq");
	ASSERT_LE(0, self->shared);
	sdp_sysctl_set("shared_rq", variant->shared_rq);
}

/* A test that failed with the device gone leaves it back for the next. */
FIXTURE_TEARDOWN(dev)
{
	if (access("/sys/class/infiniband/rxe1", F_OK) && system(DEV_ADD))
		TH_LOG("cannot add rxe1 back");
	sdp_sysctl_set("shared_rq", self->shared);
}

TEST_F_TIMEOUT(dev, device_removal_resets_connections, 180)
{
	struct sockaddr_storage ss;
	struct blocked r, w;
	struct sdp_proof pr;
	pthread_t tr, tw;
	socklen_t len;
	long long removed = sdp_stat("DeviceRemoved"), rearmed = sdp_stat("ListenRearmed");
	long long srq = sdp_stat("SrqConnections");
	char buf[2];
	int l, c, s;

	l = sdp_listener(sdp_family(), SDP_A, 8, &ss, &len);
	ASSERT_LE(0, l);
	c = sdp_connect(sdp_family(), &ss, len);
	ASSERT_LE(0, c);
	s = accept(l, NULL, NULL);
	ASSERT_LE(0, s);
	ASSERT_EQ(SDP_TRANSPORT_RDMA, sdp_transport(c));
	/* on the SRQ the reader learns the end from the marker after the QP's error */
	EXPECT_EQ(srq + 2 * variant->shared_rq, sdp_stat("SrqConnections"));
	ASSERT_EQ(0, sdp_proof_begin(&pr, c, s));
	ASSERT_EQ(2, send(c, "hi", 2, 0));
	ASSERT_EQ(2, recv(s, buf, 2, MSG_WAITALL));
	SDP_PROVE(&pr);

	/* callers blocked in the kernel: a reader, and a writer (the stream) */
	r = (struct blocked){ .fd = s };
	w = (struct blocked){ .fd = c, .write = true };
	ASSERT_EQ(0, pthread_create(&tr, NULL, blocked_call, &r));
	ASSERT_EQ(0, pthread_create(&tw, NULL, blocked_call, &w));
	sleep(1);

	ASSERT_EQ(0, system(DEV_DEL));
	pthread_join(tr, NULL);
	pthread_join(tw, NULL);
	EXPECT_EQ(ECONNRESET, r.err);
	EXPECT_TRUE(w.err == ECONNRESET || w.err == EPIPE) TH_LOG("errno %d", w.err);
	/* the two ends of the one connection on rxe1 */
	EXPECT_EQ(removed + 2, sdp_stat("DeviceRemoved"));
	close(c);
	close(s);

	/* The same listener: TCP clients meanwhile, RDMA once the device is back. */
	EXPECT_EQ(SDP_TRANSPORT_TCP, sdp_transport(l));
	EXPECT_TCP_CLIENT(l, &ss, len);
	ASSERT_EQ(0, system(DEV_ADD));
	EXPECT_RDMA_CLIENT(l, &ss, len);
	EXPECT_EQ(rearmed + 1, sdp_stat("ListenRearmed"));
	close(l);
}

/* A listener whose device goes away keeps its port and serves TCP; then RDMA again. */
TEST_F_TIMEOUT(dev, listener_survives_device_removal, 180)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int l, t;

	l = sdp_listener(sdp_family(), SDP_A, 8, &ss, &len);
	ASSERT_LE(0, l);
	EXPECT_EQ(SDP_TRANSPORT_RDMA, sdp_transport(l));
	ASSERT_EQ(0, system(DEV_DEL));
	EXPECT_EQ(SDP_TRANSPORT_TCP, sdp_transport(l));
	t = socket(AF_INET, SOCK_STREAM, 0);
	EXPECT_EQ(-1, bind(t, (struct sockaddr *)&ss, len));
	EXPECT_EQ(EADDRINUSE, errno);
	close(t);
	EXPECT_TCP_CLIENT(l, &ss, len);
	ASSERT_EQ(0, system(DEV_ADD));
	EXPECT_RDMA_CLIENT(l, &ss, len);
	close(l);
}

TEST_HARNESS_MAIN
