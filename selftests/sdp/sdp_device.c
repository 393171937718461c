// SPDX-License-Identifier: GPL-2.0
/*
 * An RDMA device going away under live SDP connections: both ends see
 * ECONNRESET (blocked readers and writers wake up), nothing hangs, the
 * listener keeps its port, and once the device is back new connections run
 * over RDMA again. The device is re-added at the end for the tests after.
 */
#include <pthread.h>
#include <sys/time.h>

#include "kselftest_harness.h"
#include "sdp_util.h"

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

TEST(device_removal_resets_connections)
{
	struct sockaddr_storage ss;
	struct blocked r, w;
	pthread_t tr, tw;
	socklen_t len;
	long long removed = sdp_stat("DeviceRemoved");
	int l, c, s, c2, s2;

	l = sdp_listener(sdp_family(), SDP_A, 8, &ss, &len);
	ASSERT_LE(0, l);
	c = sdp_connect(sdp_family(), &ss, len);
	ASSERT_LE(0, c);
	s = accept(l, NULL, NULL);
	ASSERT_LE(0, s);
	ASSERT_EQ(SDP_TRANSPORT_RDMA, sdp_transport(c));

	/* a reader waiting for data, a writer stuck on a full pipe */
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
	EXPECT_LE(removed + 2, sdp_stat("DeviceRemoved"));
	close(c);
	close(s);

	/* The listener keeps its port; with the device back, RDMA again. */
	ASSERT_EQ(0, system(DEV_ADD));
	close(l);
	l = sdp_listener(sdp_family(), SDP_A, 8, &ss, &len);
	ASSERT_LE(0, l);
	c2 = sdp_connect(sdp_family(), &ss, len);
	ASSERT_LE(0, c2) TH_LOG("connect: %s", strerror(errno));
	s2 = accept(l, NULL, NULL);
	ASSERT_LE(0, s2);
	EXPECT_EQ(SDP_TRANSPORT_RDMA, sdp_transport(c2));
	EXPECT_EQ(2, send(c2, "ok", 2, 0));
	EXPECT_EQ(2, recv(s2, &len, 2, MSG_WAITALL));
	close(c2);
	close(s2);
	close(l);
}

/* A listener whose device goes away keeps its port in the TCP space. */
TEST(listener_survives_device_removal)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int l, t;

	l = sdp_listener(sdp_family(), SDP_A, 8, &ss, &len);
	ASSERT_LE(0, l);
	ASSERT_EQ(0, system(DEV_DEL));
	t = socket(AF_INET, SOCK_STREAM, 0);
	EXPECT_EQ(-1, bind(t, (struct sockaddr *)&ss, len));
	EXPECT_EQ(EADDRINUSE, errno);
	close(t);
	close(l);
	ASSERT_EQ(0, system(DEV_ADD));
}

TEST_HARNESS_MAIN
