// SPDX-License-Identifier: GPL-2.0
/*
 * socket(2) on the SDP family, checked against AF_INET/TCP as the oracle:
 * every test runs once per variant and expects what TCP does, except where
 * SDP is documented to differ (stream sockets only).
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "sdp_proof.h"

FIXTURE(sock) {
	int family;
};

FIXTURE_VARIANT(sock) {
	int sdp;
};

FIXTURE_VARIANT_ADD(sock, tcp) { .sdp = 0 };
FIXTURE_VARIANT_ADD(sock, sdp) { .sdp = 1 };

FIXTURE_SETUP(sock)
{
	self->family = variant->sdp ? sdp_family() : AF_INET;
}

/* socket() alone: no connection, over anything */
FIXTURE_TEARDOWN(sock)
{
	if (variant->sdp)
		SDP_PROVE_LOCAL();
	else
		fprintf(stderr, "# PROOF tcp\n");
}

TEST_F(sock, stream_default_protocol)
{
	int fd = socket(self->family, SOCK_STREAM, 0);

	ASSERT_LE(0, fd) TH_LOG("socket: %s", strerror(errno));
	EXPECT_EQ(SOCK_STREAM, sdp_getint(fd, SOL_SOCKET, SO_TYPE));
	EXPECT_EQ(IPPROTO_TCP, sdp_getint(fd, SOL_SOCKET, SO_PROTOCOL));
	close(fd);
}

TEST_F(sock, stream_tcp_protocol)
{
	int fd = socket(self->family, SOCK_STREAM, IPPROTO_TCP);

	ASSERT_LE(0, fd) TH_LOG("socket: %s", strerror(errno));
	EXPECT_EQ(IPPROTO_TCP, sdp_getint(fd, SOL_SOCKET, SO_PROTOCOL));
	close(fd);
}

TEST_F(sock, type_flags)
{
	int fd = socket(self->family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	ASSERT_LE(0, fd);
	EXPECT_TRUE(fcntl(fd, F_GETFL) & O_NONBLOCK);
	EXPECT_TRUE(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	EXPECT_EQ(SOCK_STREAM, sdp_getint(fd, SOL_SOCKET, SO_TYPE));
	close(fd);
}

TEST_F(sock, seqpacket_refused)
{
	EXPECT_EQ(-1, socket(self->family, SOCK_SEQPACKET, 0));
	EXPECT_EQ(ESOCKTNOSUPPORT, errno);
}

TEST_F(sock, wrong_protocol_refused)
{
	EXPECT_EQ(-1, socket(self->family, SOCK_STREAM, IPPROTO_UDP));
	EXPECT_EQ(EPROTONOSUPPORT, errno);
	EXPECT_EQ(-1, socket(self->family, SOCK_STREAM, IPPROTO_ICMP));
	EXPECT_EQ(EPROTONOSUPPORT, errno);
}

TEST_F(sock, protocol_out_of_range)
{
	EXPECT_EQ(-1, socket(self->family, SOCK_STREAM, IPPROTO_MAX));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, socket(self->family, SOCK_STREAM, -1));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(sock, bad_type)
{
	EXPECT_EQ(-1, socket(self->family, 99, 0));
	EXPECT_EQ(EINVAL, errno);
}

/* SDP carries byte streams only: datagrams and raw sockets are refused. */
TEST(sdp_dgram_refused)
{
	SDP_PROVE_LOCAL();
	EXPECT_EQ(-1, socket(sdp_family(), SOCK_DGRAM, 0));
	EXPECT_EQ(ESOCKTNOSUPPORT, errno);
	EXPECT_EQ(-1, socket(sdp_family(), SOCK_DGRAM, IPPROTO_UDP));
	EXPECT_EQ(ESOCKTNOSUPPORT, errno);
	EXPECT_EQ(-1, socket(sdp_family(), SOCK_RAW, IPPROTO_TCP));
	EXPECT_EQ(ESOCKTNOSUPPORT, errno);
}

TEST(sdp_many_sockets)
{
	SDP_PROVE_LOCAL();
	int fds[256], i;

	for (i = 0; i < 256; i++) {
		fds[i] = socket(sdp_family(), SOCK_STREAM, 0);
		ASSERT_LE(0, fds[i]);
	}
	for (i = 0; i < 256; i++)
		close(fds[i]);
}

/*
 * What a program sees of socket(AF_INET[6]) made SDP by the shim
 * (SDP_FAMILY) against what it sees of TCP: each step's result and errno.
 */
static void family_steps(int fd, int family, int *out)
{
	struct sockaddr_storage a4, a6, got;
	socklen_t glen = sizeof(got), l4 = sdp_addr(&a4, SDP_A, 0);
	socklen_t l6 = sdp_addr(&a6, SDP_A6, 0);
	int zero = 0, n = 0;

	out[n++] = setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero)) ? errno : 0;
	out[n++] = getsockname(fd, (struct sockaddr *)&got, &glen) ? errno : got.ss_family;
	out[n++] = bind(fd, (struct sockaddr *)(family == AF_INET ? &a6 : &a4),
			family == AF_INET ? l6 : l4) ? errno : 0;
	out[n++] = bind(fd, (struct sockaddr *)(family == AF_INET ? &a4 : &a6),
			family == AF_INET ? l4 : l6) ? errno : 0;
}

TEST(sdp_family_fixed_as_tcp)
{
	SDP_PROVE_LOCAL();
	int fams[] = { AF_INET, AF_INET6 };

	for (int i = 0; i < 2; i++) {
		int t = socket(fams[i], SOCK_STREAM, 0), s = socket(sdp_family(), SOCK_STREAM, 0);
		int want[4], got[4], f = fams[i];
		socklen_t len = sizeof(f);

		ASSERT_LE(0, t);
		ASSERT_LE(0, s);
		ASSERT_EQ(0, setsockopt(s, SOL_SDP, SDP_FAMILY, &fams[i], sizeof(int)));
		ASSERT_EQ(0, getsockopt(s, SOL_SDP, SDP_FAMILY, &f, &len));
		EXPECT_EQ(fams[i], f);
		family_steps(t, fams[i], want);
		family_steps(s, fams[i], got);
		for (int k = 0; k < 4; k++) {
			EXPECT_EQ(want[k], got[k]) TH_LOG("family %d step %d", fams[i], k);
		}
		/* bound: the family cannot change any more */
		EXPECT_EQ(-1, setsockopt(s, SOL_SDP, SDP_FAMILY, &fams[!i], sizeof(int)));
		EXPECT_EQ(EISCONN, errno);
		close(t);
		close(s);
	}
	{
		int s = socket(sdp_family(), SOCK_STREAM, 0), bad = AF_UNIX;

		EXPECT_EQ(-1, setsockopt(s, SOL_SDP, SDP_FAMILY, &bad, sizeof(bad)));
		EXPECT_EQ(EAFNOSUPPORT, errno);
		EXPECT_EQ(-1, setsockopt(s, SOL_SDP, SDP_FAMILY, &bad, 2));
		EXPECT_EQ(EINVAL, errno);
		close(s);
	}
}

TEST_HARNESS_MAIN
