// SPDX-License-Identifier: GPL-2.0
/*
 * socket(2) on the SDP family, and SOL_SOCKET options set on it directly,
 * checked against AF_INET/TCP as the oracle: every test runs once per
 * variant and expects what TCP does, except where SDP is documented to
 * differ (stream sockets only; SO_REUSEPORT on 6.1).
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
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

/*
 * SO_REUSEPORT set directly, as a program that opens the family itself sets
 * it (the JDK, qperf), not the shim's SDP_REUSEPORT. Where the core lets
 * SDP have its SOL_SOCKET options (6.2 on), two listeners share a port as
 * two TCP listeners do, each gets connections over RDMA (TCP's reuseport
 * hash picks), and accepted sockets take the option as TCP's. 6.1's core
 * refuses it for any family but inet's (EOPNOTSUPP, sdp(7)): nothing is
 * set, and a second listener finds the port taken.
 */
FIXTURE(reuse) {
	int l[2];
	int timeout_ms, ttl;	/* the sysctls as they were */
};

FIXTURE_VARIANT(reuse) {
	int sdp;
};

FIXTURE_VARIANT_ADD(reuse, tcp) { .sdp = 0 };
FIXTURE_VARIANT_ADD(reuse, sdp) { .sdp = 1 };

/* Each connection over RDMA: none slow enough to fall back, no negative cache. */
FIXTURE_SETUP(reuse)
{
	self->l[0] = self->l[1] = -1;
	if (variant->sdp) {
		self->timeout_ms = sdp_sysctl("connect_timeout_ms");
		self->ttl = sdp_sysctl("negative_cache_ttl");
		sdp_sysctl_set("connect_timeout_ms", 10000);
		sdp_sysctl_set("negative_cache_ttl", 0);
	}
}

FIXTURE_TEARDOWN(reuse)
{
	close(self->l[0]);
	close(self->l[1]);
	if (variant->sdp) {
		sdp_sysctl_set("connect_timeout_ms", self->timeout_ms);
		sdp_sysctl_set("negative_cache_ttl", self->ttl);
	}
}

/*
 * A client of @family to @addr, accepted by whichever listener of @l has
 * it; SO_REUSEPORT set directly on the accepted socket; a byte across,
 * proven (@sdp: both ends SDP). Which listener it was, -1 for none.
 */
static int reuse_one(struct __test_metadata *_metadata, const int *l,
		     int family, bool sdp, const struct sockaddr_storage *addr,
		     socklen_t alen)
{
	struct pollfd pfd[2] = {
		{ .fd = l[0], .events = POLLIN }, { .fd = l[1], .events = POLLIN },
	};
	struct sdp_proof pr = {};
	int c, s = -1, which = -1, one = 1;
	char b = 0;

	c = sdp_connect(family, addr, alen);
	if (c < 0) {
		TH_LOG("connect: %s", strerror(errno));
		return -1;
	}
	if (poll(pfd, 2, 5000 * sdp_slow()) > 0)
		which = pfd[0].revents & POLLIN ? 0 : pfd[1].revents & POLLIN ? 1 : -1;
	if (which >= 0)
		s = accept(l[which], NULL, NULL);
	if (s < 0) {
		close(c);
		return -1;
	}
	if (sdp) {
		EXPECT_EQ(sdp_expected_transport(), sdp_transport(s))
			TH_LOG("fallback reason %d",
			       sdp_getint(c, SOL_SDP, SDP_FALLBACK_REASON));
		EXPECT_EQ(0, sdp_proof_begin(&pr, c, s));
	}
	EXPECT_EQ(0, setsockopt(s, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)))
		TH_LOG("accepted socket: %s", strerror(errno));
	EXPECT_EQ(1, sdp_getint(s, SOL_SOCKET, SO_REUSEPORT));
	EXPECT_EQ(1, send(c, "x", 1, 0));
	EXPECT_EQ(1, recv(s, &b, 1, 0));
	EXPECT_EQ('x', b);
	if (sdp)
		SDP_PROVE(&pr);
	else
		SDP_PROVE_TCP(c);
	close(c);
	close(s);
	return which;
}

TEST_F(reuse, so_reuseport_set_directly)
{
	int family = variant->sdp ? sdp_family() : AF_INET;
	bool direct = !variant->sdp || sdp_direct_reuseport();
	int one = 1, got[2] = {}, i, k, x, which;
	struct sockaddr_storage addr;
	socklen_t alen = sdp_addr(&addr, "0.0.0.0", 0);

	for (i = 0; i < 2; i++) {
		self->l[i] = socket(family, SOCK_STREAM, 0);
		ASSERT_LE(0, self->l[i]);
		if (direct) {
			ASSERT_EQ(0, setsockopt(self->l[i], SOL_SOCKET, SO_REUSEPORT,
						&one, sizeof(one)))
				TH_LOG("SO_REUSEPORT: %s", strerror(errno));
		} else {
			EXPECT_EQ(-1, setsockopt(self->l[i], SOL_SOCKET, SO_REUSEPORT,
						 &one, sizeof(one)));
			EXPECT_EQ(EOPNOTSUPP, errno);
		}
		EXPECT_EQ(direct, sdp_getint(self->l[i], SOL_SOCKET, SO_REUSEPORT));
		if (variant->sdp)
			EXPECT_EQ(direct, sdp_getint(self->l[i], SOL_SDP, SDP_REUSEPORT));
		if (!direct && i) {
			/* 6.1: as a TCP listener's without the option */
			EXPECT_EQ(-1, bind(self->l[i], (struct sockaddr *)&addr, alen));
			EXPECT_EQ(EADDRINUSE, errno);
			SDP_PROVE_LOCAL();
			return;
		}
		ASSERT_EQ(0, bind(self->l[i], (struct sockaddr *)&addr, alen))
			TH_LOG("bind %d: %s", i, strerror(errno));
		ASSERT_EQ(0, listen(self->l[i], 16));
		ASSERT_EQ(0, getsockname(self->l[i], (struct sockaddr *)&addr, &alen));
	}
	/* without the option, no way in */
	x = socket(family, SOCK_STREAM, 0);
	EXPECT_EQ(-1, bind(x, (struct sockaddr *)&addr, alen));
	EXPECT_EQ(EADDRINUSE, errno);
	close(x);

	alen = sdp_addr(&addr, SDP_A, sdp_port(&addr));
	/* until each has had one (16 in a row to one listener: p = 3e-5) */
	for (k = 0; k < 16 && !(got[0] && got[1]); k++) {
		which = reuse_one(_metadata, self->l, family, variant->sdp, &addr, alen);
		ASSERT_LE(0, which) TH_LOG("connection %d: nobody accepted", k);
		got[which]++;
	}
	EXPECT_TRUE(got[0] && got[1])
		TH_LOG("%d connections: %d and %d", k, got[0], got[1]);
	/* a plain TCP client: SDP accepts it from its native listener */
	if (variant->sdp)
		EXPECT_LE(0, reuse_one(_metadata, self->l, AF_INET, false, &addr, alen));
}

/*
 * SOL_SOCKET options set directly on an SDP socket get TCP's answers and
 * read back as TCP's, step by step on one socket of each (from 6.2 they
 * pass through sdp_setsockopt(), which gives all but SO_REUSEPORT to the
 * core unchanged); SO_REUSEPORT's errors are the core's. 6.1 differs in
 * one step only: SO_REUSEPORT set to non-zero (EOPNOTSUPP, nothing set).
 */
static const struct {
	const char *what;
	int name;
	const void *val;
	socklen_t len;
	bool reuseport_on;	/* what 6.1 refuses */
} sol_steps[] = {
	/* read back doubled: not 65536, whose double is the default */
	{ "SO_RCVBUF", SO_RCVBUF, &(int){ 50000 }, sizeof(int) },
	{ "SO_SNDBUF", SO_SNDBUF, &(int){ 100000 }, sizeof(int) },
	{ "SO_KEEPALIVE", SO_KEEPALIVE, &(int){ 1 }, sizeof(int) },
	{ "SO_REUSEADDR", SO_REUSEADDR, &(int){ 1 }, sizeof(int) },
	{ "SO_RCVLOWAT", SO_RCVLOWAT, &(int){ 10 }, sizeof(int) },
	{ "SO_PRIORITY", SO_PRIORITY, &(int){ 5 }, sizeof(int) },
	{ "SO_MARK", SO_MARK, &(int){ 7 }, sizeof(int) },
	{ "SO_OOBINLINE", SO_OOBINLINE, &(int){ 1 }, sizeof(int) },
	{ "SO_LINGER", SO_LINGER, &(struct linger){ 1, 3 }, sizeof(struct linger) },
	{ "SO_RCVTIMEO", SO_RCVTIMEO, &(struct timeval){ 2, 500000 }, sizeof(struct timeval) },
	{ "SO_BINDTODEVICE", SO_BINDTODEVICE, "lo", 3 },
	{ "SO_RCVBUF short", SO_RCVBUF, &(int){ 1 }, 2 },
	{ "SO_KEEPALIVE NULL", SO_KEEPALIVE, NULL, sizeof(int) },
	{ "SO_TYPE", SO_TYPE, &(int){ SOCK_DGRAM }, sizeof(int) },
	{ "unknown", 4242, &(int){ 1 }, sizeof(int) },
	{ "SO_REUSEPORT 7", SO_REUSEPORT, &(int){ 7 }, sizeof(int), true },
	{ "SO_REUSEPORT short", SO_REUSEPORT, &(int){ 0 }, 2 },
	{ "SO_REUSEPORT NULL", SO_REUSEPORT, NULL, sizeof(int) },
	{ "SO_REUSEPORT 0", SO_REUSEPORT, &(int){ 0 }, sizeof(int) },
};

/* One step: setsockopt()'s errno (0 for none), then what getsockopt() reads. */
static int sol_step(int fd, int i, char *buf, socklen_t *len)
{
	int err = setsockopt(fd, SOL_SOCKET, sol_steps[i].name, sol_steps[i].val,
			     sol_steps[i].len) ? errno : 0;

	memset(buf, 0, *len);
	if (getsockopt(fd, SOL_SOCKET, sol_steps[i].name, buf, len))
		*len = -errno;
	return err;
}

TEST(sdp_sol_socket_options_as_tcp)
{
	SDP_PROVE_LOCAL();
	int t = socket(AF_INET, SOCK_STREAM, 0), s = socket(sdp_family(), SOCK_STREAM, 0);
	bool direct = sdp_direct_reuseport();

	ASSERT_LE(0, t);
	ASSERT_LE(0, s);
	for (int i = 0; i < (int)(sizeof(sol_steps) / sizeof(sol_steps[0])); i++) {
		char want[64], got[64];
		socklen_t wlen = sizeof(want), glen = sizeof(got);
		int werr = sol_step(t, i, want, &wlen), gerr = sol_step(s, i, got, &glen);

		if (sol_steps[i].reuseport_on && !direct) {
			/* 6.1: the core's answer for a family not inet's */
			EXPECT_EQ(EOPNOTSUPP, gerr) TH_LOG("%s", sol_steps[i].what);
			EXPECT_EQ(0, *(int *)got) TH_LOG("%s", sol_steps[i].what);
			EXPECT_EQ(0, sdp_getint(s, SOL_SDP, SDP_REUSEPORT));
			/* TCP's, to go on alike */
			EXPECT_EQ(0, setsockopt(s, SOL_SDP, SDP_REUSEPORT,
						sol_steps[i].val, sol_steps[i].len));
			continue;
		}
		EXPECT_EQ(werr, gerr) TH_LOG("%s: TCP %s, SDP %s", sol_steps[i].what,
					     strerror(werr), strerror(gerr));
		EXPECT_EQ((int)wlen, (int)glen) TH_LOG("%s: read back", sol_steps[i].what);
		if (wlen == glen && (int)wlen > 0) {
			EXPECT_EQ(0, memcmp(want, got, wlen))
				TH_LOG("%s: TCP reads %d, SDP %d", sol_steps[i].what,
				       *(int *)want, *(int *)got);
		}
		if (sol_steps[i].name == SO_REUSEPORT) {
			EXPECT_EQ(*(int *)want, sdp_getint(s, SOL_SDP, SDP_REUSEPORT))
				TH_LOG("%s: SDP_REUSEPORT", sol_steps[i].what);
		}
	}
	close(t);
	close(s);
}

TEST_HARNESS_MAIN
