// SPDX-License-Identifier: GPL-2.0
/*
 * Fallback to TCP: an SDP socket connects wherever TCP would, says why it
 * uses TCP (SDP_FALLBACK_REASON, /proc/net/sdp_stats), remembers failed
 * destinations, and an SDP listener serves plain TCP clients too.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "sdp_proof.h"
#include "sdp_server.h"

#define SDP_NORDMA	"198.20.0.2"

static int fb_reason(int fd)
{
	return sdp_getint(fd, SOL_SDP, SDP_FALLBACK_REASON);
}

/* @fd, an SDP socket, runs on its native TCP socket: the case's evidence. */
#define PROVE_FALLBACK(fd) do {						\
	int _t = sdp_transport(fd), _r = fb_reason(fd);		\
									\
	EXPECT_EQ(SDP_TRANSPORT_TCP, _t);				\
	EXPECT_NE(SDP_FB_NONE, _r);					\
	if (_t == SDP_TRANSPORT_TCP && _r > 0)				\
		fprintf(stderr, "# PROOF fallback reason=%d\n", _r);	\
} while (0)

/* A child's end: it exited, with status 0. */
#define EXPECT_CHILD_OK(pid) do {					\
	int _st;							\
									\
	ASSERT_EQ(pid, waitpid(pid, &_st, 0));				\
	EXPECT_TRUE(WIFEXITED(_st)) TH_LOG("status 0x%x", _st);	\
	EXPECT_EQ(0, WIFEXITED(_st) ? WEXITSTATUS(_st) : -1);		\
} while (0)

/* Connect with SDP; the socket must work as TCP with @reason. */
static int sdp_via_tcp(struct __test_metadata *_metadata,
		       const struct sockaddr_storage *ss, socklen_t len, int reason)
{
	char buf[16];
	int fd = sdp_connect(sdp_family(), ss, len);

	EXPECT_LE(0, fd) TH_LOG("connect: %s", strerror(errno));
	if (fd < 0)
		return -1;
	EXPECT_EQ(SDP_TRANSPORT_TCP, sdp_transport(fd));
	EXPECT_EQ(reason, fb_reason(fd));
	EXPECT_EQ(5, send(fd, "hello", 5, 0));
	EXPECT_EQ(5, recv(fd, buf, 5, MSG_WAITALL));
	EXPECT_EQ(0, memcmp(buf, "hello", 5));
	PROVE_FALLBACK(fd);
	close(fd);
	return 0;
}

TEST(tcponly_host_then_cached)
{
	long long nodev = sdp_stat("FallbackNoDevice"), cached = sdp_stat("FallbackCached");
	struct sockaddr_storage ss;
	socklen_t len;
	pid_t srv = echo_server("tcponly", SDP_TCPONLY, &ss, &len);

	ASSERT_LT(0, srv);
	sdp_via_tcp(_metadata, &ss, len, SDP_FB_NO_DEVICE);
	EXPECT_EQ(nodev + 1, sdp_stat("FallbackNoDevice"));
	sdp_via_tcp(_metadata, &ss, len, SDP_FB_CACHED);
	EXPECT_EQ(cached + 1, sdp_stat("FallbackCached"));
	stop_server(srv);
}

TEST(loopback_uses_tcp)
{
	long long before = sdp_stat("FallbackLoopback");
	struct sockaddr_storage ss;
	socklen_t len;
	pid_t srv = echo_server(NULL, "127.0.0.1", &ss, &len);

	ASSERT_LT(0, srv);
	sdp_via_tcp(_metadata, &ss, len, SDP_FB_LOOPBACK);
	EXPECT_EQ(before + 1, sdp_stat("FallbackLoopback"));
	stop_server(srv);
}

/* A host with RDMA, but only TCP listens on that port: refused, then cached. */
TEST(rdma_host_tcp_port_then_cached)
{
	long long before = sdp_stat("FallbackRejected");
	struct sockaddr_storage ss;
	socklen_t len;
	pid_t srv = echo_server(NULL, SDP_A, &ss, &len);

	ASSERT_LT(0, srv);
	sdp_via_tcp(_metadata, &ss, len, SDP_FB_REJECTED);
	EXPECT_EQ(before + 1, sdp_stat("FallbackRejected"));
	sdp_via_tcp(_metadata, &ss, len, SDP_FB_CACHED);
	stop_server(srv);
}

/* Reached through an RDMA device, no RDMA there: the short attempt expires. */
TEST(no_answer_times_out_fast_then_cached)
{
	struct sockaddr_storage ss;
	socklen_t len;
	pid_t srv = echo_server("nordma", SDP_NORDMA, &ss, &len);
	int saved = sdp_sysctl("connect_timeout_ms");
	double t0;

	ASSERT_LT(0, srv);
	ASSERT_EQ(1000, saved) TH_LOG("the default changed?");
	sdp_sysctl_set("connect_timeout_ms", 300);
	ASSERT_EQ(300, sdp_sysctl("connect_timeout_ms"));
	t0 = sdp_now();
	sdp_via_tcp(_metadata, &ss, len, SDP_FB_TIMEOUT);
	/* the sysctl, not the default's 1 s */
	EXPECT_LE(0.25, sdp_now() - t0);
	EXPECT_GT(0.8, sdp_now() - t0);
	sdp_via_tcp(_metadata, &ss, len, SDP_FB_CACHED);
	sdp_sysctl_set("connect_timeout_ms", saved);
	stop_server(srv);
}

TEST(nonblocking_connect_falls_back)
{
	struct sockaddr_storage ss;
	socklen_t len;
	pid_t srv = echo_server("tcponly", SDP_TCPONLY, &ss, &len);
	int fd = socket(sdp_family(), SOCK_STREAM | SOCK_NONBLOCK, 0);
	char buf[8];

	ASSERT_LT(0, srv);
	EXPECT_EQ(-1, connect(fd, (struct sockaddr *)&ss, len));
	EXPECT_EQ(EINPROGRESS, errno);
	ASSERT_NE(0, sdp_poll1(fd, POLLOUT, 10000) & POLLOUT);
	EXPECT_EQ(0, sdp_getint(fd, SOL_SOCKET, SO_ERROR));
	EXPECT_EQ(SDP_TRANSPORT_TCP, sdp_transport(fd));
	EXPECT_EQ(2, send(fd, "ok", 2, 0));
	ASSERT_NE(0, sdp_poll1(fd, POLLIN, 5000) & POLLIN);
	EXPECT_EQ(2, recv(fd, buf, sizeof(buf), 0));
	EXPECT_EQ(SDP_FB_NO_DEVICE, fb_reason(fd));
	PROVE_FALLBACK(fd);
	close(fd);
	stop_server(srv);
}

/* An address on the TCP-only host where nothing listens any more. */
static int refused_addr(struct sockaddr_storage *ss, socklen_t *len)
{
	pid_t srv = echo_server("tcponly", SDP_TCPONLY, ss, len);

	if (srv <= 0)
		return -1;
	stop_server(srv);
	return 0;
}

/* TCP's errors show through the SDP socket, once, as TCP reports them. */
TEST(nonblocking_fallback_refused)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd = socket(sdp_family(), SOCK_STREAM | SOCK_NONBLOCK, 0);
	char buf[4];

	ASSERT_EQ(0, refused_addr(&ss, &len));
	EXPECT_EQ(-1, connect(fd, (struct sockaddr *)&ss, len));
	EXPECT_EQ(EINPROGRESS, errno);
	ASSERT_NE(0, sdp_poll1(fd, POLLOUT, 10000));
	EXPECT_EQ(POLLOUT | POLLERR | POLLHUP, sdp_poll1(fd, POLLOUT, 0));
	EXPECT_EQ(ECONNREFUSED, sdp_getint(fd, SOL_SOCKET, SO_ERROR));
	EXPECT_EQ(0, sdp_getint(fd, SOL_SOCKET, SO_ERROR));
	/* read with SO_ERROR: TCP's calls do not report it again (EOF) */
	EXPECT_EQ(0, recv(fd, buf, sizeof(buf), 0));
	PROVE_FALLBACK(fd);
	close(fd);
}

/*
 * A socket whose connect failed may listen, as TCP allows: its clients are
 * accepted as SDP sockets on TCP. Returns listen()'s errno (0: it served a
 * client).
 */
static int listen_after_refused(struct __test_metadata *_metadata, int family,
				const struct sockaddr_storage *ss, socklen_t len)
{
	struct sockaddr_storage me;
	socklen_t mlen = sizeof(me);
	int fd = socket(family, SOCK_STREAM, 0), c, a, err = 0;
	char buf[2];

	EXPECT_EQ(-1, connect(fd, (const struct sockaddr *)ss, len));
	EXPECT_EQ(ECONNREFUSED, errno);
	if (listen(fd, 4)) {
		err = errno;
		goto out;
	}
	EXPECT_EQ(0, getsockname(fd, (struct sockaddr *)&me, &mlen));
	c = sdp_connect(AF_INET, &me, mlen);
	a = accept(fd, NULL, NULL);
	EXPECT_LE(0, c);
	ASSERT_LE(0, a);
	if (family == sdp_family()) {
		EXPECT_EQ(sdp_family(), sdp_getint(a, SOL_SOCKET, SO_DOMAIN));
		PROVE_FALLBACK(a);
	}
	EXPECT_EQ(2, send(a, "ok", 2, 0));
	EXPECT_EQ(2, recv(c, buf, 2, MSG_WAITALL));
	close(a);
	close(c);
out:
	close(fd);
	return err;
}

TEST(listen_after_refused_fallback)
{
	struct sockaddr_storage ss;
	socklen_t len;

	ASSERT_EQ(0, refused_addr(&ss, &len));
	/* TCP (the oracle) serves the client; SDP must too */
	EXPECT_EQ(0, listen_after_refused(_metadata, AF_INET, &ss, len));
	EXPECT_EQ(0, listen_after_refused(_metadata, sdp_family(), &ss, len));
}

/*
 * A listener shut down, then connected: TCP's refusal after the fallback
 * reaches SO_ERROR and poll as on a TCP socket. Returns SO_ERROR.
 */
static int refused_after_listen(struct __test_metadata *_metadata, int family,
				const struct sockaddr_storage *ss, socklen_t len)
{
	int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK, 0), err;

	EXPECT_EQ(0, listen(fd, 4));
	EXPECT_EQ(0, shutdown(fd, SHUT_RD));
	EXPECT_EQ(-1, connect(fd, (const struct sockaddr *)ss, len));
	EXPECT_EQ(EINPROGRESS, errno);
	EXPECT_NE(0, sdp_poll1(fd, POLLOUT, 10000) & POLLERR);
	err = sdp_getint(fd, SOL_SOCKET, SO_ERROR);
	if (family == sdp_family())
		PROVE_FALLBACK(fd);
	close(fd);
	return err;
}

TEST(connect_after_listen_shutdown)
{
	struct sockaddr_storage ss;
	socklen_t len;

	ASSERT_EQ(0, refused_addr(&ss, &len));
	EXPECT_EQ(ECONNREFUSED, refused_after_listen(_metadata, AF_INET, &ss, len));
	EXPECT_EQ(ECONNREFUSED, refused_after_listen(_metadata, sdp_family(), &ss, len));
}

/* An epoll waiter asleep before the switch wakes when TCP connects. */
TEST(epoll_waiter_from_before_the_fallback)
{
	struct epoll_event ev = { .events = EPOLLOUT | EPOLLIN | EPOLLET };
	struct sockaddr_storage ss;
	socklen_t len;
	pid_t srv = echo_server("nordma", SDP_NORDMA, &ss, &len);
	int fd = socket(sdp_family(), SOCK_STREAM | SOCK_NONBLOCK, 0);
	int ep = epoll_create1(0), ttl = sdp_sysctl("negative_cache_ttl");

	ASSERT_LT(0, srv);
	/* the destination may already be cached: make it fresh */
	sdp_sysctl_set("negative_cache_ttl", 0);
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
	EXPECT_EQ(-1, connect(fd, (struct sockaddr *)&ss, len));
	EXPECT_EQ(EINPROGRESS, errno);
	/* the RDMA attempt times out (1 s), then TCP connects */
	ASSERT_EQ(1, epoll_wait(ep, &ev, 1, 10000));
	EXPECT_TRUE(ev.events & EPOLLOUT);
	EXPECT_EQ(SDP_TRANSPORT_TCP, sdp_transport(fd));
	EXPECT_EQ(SDP_FB_TIMEOUT, fb_reason(fd));
	EXPECT_EQ(1, send(fd, "e", 1, 0));
	ASSERT_EQ(1, epoll_wait(ep, &ev, 1, 5000));
	EXPECT_TRUE(ev.events & EPOLLIN);
	PROVE_FALLBACK(fd);
	sdp_sysctl_set("negative_cache_ttl", ttl);
	close(ep);
	close(fd);
	stop_server(srv);
}

/*
 * A blocking connect() with SO_SNDTIMEO of 2 s; returns its errno, and its
 * time in @took (and for SDP, why it fell back in @reason).
 */
static int connect_timeo_errno(struct __test_metadata *_metadata, int family,
			       const struct sockaddr_storage *ss, socklen_t len, double *took,
			       int *reason)
{
	struct timeval tv = { .tv_sec = 2 };
	int fd = socket(family, SOCK_STREAM, 0), err;
	double t0 = sdp_now();

	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)))
		return -1;
	err = connect(fd, (const struct sockaddr *)ss, len) ? errno : 0;
	*took = sdp_now() - t0;
	*reason = family == sdp_family() ? fb_reason(fd) : 0;
	if (family == sdp_family())
		PROVE_FALLBACK(fd);
	close(fd);
	return err;
}

/*
 * A connect that TCP carries on and that times out says EINPROGRESS, as
 * TCP's own, after SO_SNDTIMEO in all: whether TCP was chosen at once (no
 * RDMA device on the way), after RDMA refused, or after the RDMA attempt
 * went unanswered for connect_timeout_ms (1 s of the 2). (TCP's second
 * connect() call would say EALREADY.)
 */
TEST(blocking_fallback_connect_times_out_in_progress)
{
	const char *ns[] = { "tcponly", NULL, "nordma" };
	const char *ip[] = { SDP_TCPONLY, SDP_A, SDP_NORDMA };
	const int why[] = { SDP_FB_NO_DEVICE, SDP_FB_REJECTED, SDP_FB_TIMEOUT };
	struct sockaddr_storage ss;
	double tcp, sdp;
	socklen_t len;
	int i, filler, reason;
	pid_t srv;

	ASSERT_EQ(1000, sdp_sysctl("connect_timeout_ms"));
	for (i = 0; i < 3; i++) {
		srv = tcp_server(ns[i], ip[i], 0, &ss, &len);
		ASSERT_LT(0, srv);
		filler = sdp_connect(AF_INET, &ss, len);
		ASSERT_LE(0, filler);
		EXPECT_EQ(EINPROGRESS, connect_timeo_errno(_metadata, AF_INET, &ss, len, &tcp,
							   &reason));
		EXPECT_EQ(EINPROGRESS, connect_timeo_errno(_metadata, sdp_family(), &ss, len, &sdp,
							   &reason))
			TH_LOG("to %s", ip[i]);
		EXPECT_EQ(why[i], reason) TH_LOG("to %s", ip[i]);
		/* SO_SNDTIMEO bounds the whole call, the RDMA attempt included */
		EXPECT_GT(tcp + 0.5, sdp) TH_LOG("to %s: %.2f s, TCP's %.2f s", ip[i], sdp, tcp);
		EXPECT_LE(1.9, sdp) TH_LOG("to %s: %.2f s", ip[i], sdp);
		close(filler);
		stop_server(srv);
	}
}

/*
 * A port that refused RDMA and then TCP has nothing listening: nothing is
 * remembered, so once it listens SDP reaches it over RDMA (DRBD's peers
 * each connect before the other listens).
 */
TEST(refused_port_then_listens_over_rdma)
{
	long long refused = sdp_stat("FallbackRejected");
	struct sockaddr_storage ss;
	socklen_t len = sdp_addr(&ss, SDP_A, 0);
	int l = socket(sdp_family(), SOCK_STREAM, 0);

	ASSERT_EQ(0, bind(l, (struct sockaddr *)&ss, len));
	ASSERT_EQ(0, getsockname(l, (struct sockaddr *)&ss, &len));
	EXPECT_EQ(-1, sdp_connect(sdp_family(), &ss, len));
	EXPECT_EQ(ECONNREFUSED, errno);
	EXPECT_EQ(refused + 1, sdp_stat("FallbackRejected"));
	ASSERT_EQ(0, listen(l, 4));
	sdp_rdma_byte(_metadata, l, &ss, len);
	close(l);
}

/*
 * A TCP server on a port of this host, cached as refusing RDMA; then an SDP
 * server listens on all addresses there: the next connect is RDMA at once,
 * not TCP until the cache expires.
 */
TEST(tcp_port_then_sdp_listener_over_rdma)
{
	struct sockaddr_storage ss, any;
	socklen_t len = sdp_addr(&ss, SDP_A, 0), alen;
	int t = socket(AF_INET, SOCK_STREAM, 0), l, c;

	ASSERT_EQ(0, sdp_setint(t, SOL_SOCKET, SO_REUSEADDR, 1));
	ASSERT_EQ(0, bind(t, (struct sockaddr *)&ss, len));
	ASSERT_EQ(0, getsockname(t, (struct sockaddr *)&ss, &len));
	ASSERT_EQ(0, listen(t, 4));
	c = sdp_connect(sdp_family(), &ss, len);
	ASSERT_LE(0, c);
	EXPECT_EQ(SDP_FB_REJECTED, fb_reason(c));
	close(c);
	c = sdp_connect(sdp_family(), &ss, len);
	ASSERT_LE(0, c);
	EXPECT_EQ(SDP_FB_CACHED, fb_reason(c));
	close(c);
	close(t);

	alen = sdp_addr(&any, "0.0.0.0", sdp_port(&ss));
	l = socket(sdp_family(), SOCK_STREAM, 0);
	ASSERT_EQ(0, sdp_setint(l, SOL_SOCKET, SO_REUSEADDR, 1));
	ASSERT_EQ(0, bind(l, (struct sockaddr *)&any, alen));
	ASSERT_EQ(0, listen(l, 4));
	sdp_rdma_byte(_metadata, l, &ss, len);
	close(l);
}

/*
 * A listener that cannot find the memory for one child (debugfs
 * sdp/fail/accept) says so in its reject: the client falls back for that
 * connection only, and the next one is RDMA, not sent to TCP by the cache.
 */
TEST(server_short_of_memory_is_not_cached)
{
	long long res = sdp_stat("FallbackResources"), rej = sdp_stat("RejectSent");
	long long refused = sdp_stat("FallbackRejected");
	struct sockaddr_storage ss;
	socklen_t len;
	int l = sdp_listener(sdp_family(), SDP_A, 4, &ss, &len), c, a;
	char buf[8];

	ASSERT_LE(0, l);
	ASSERT_EQ(0, sdp_write_file("/sys/kernel/debug/sdp/fail/accept", "1"));
	c = sdp_connect(sdp_family(), &ss, len);
	ASSERT_LE(0, c) TH_LOG("connect: %s", strerror(errno));
	a = accept(l, NULL, NULL);
	ASSERT_LE(0, a);
	EXPECT_EQ(SDP_FB_RESOURCES, fb_reason(c));
	EXPECT_EQ(5, send(c, "hello", 5, 0));
	EXPECT_EQ(5, recv(a, buf, 5, MSG_WAITALL));
	EXPECT_EQ(0, memcmp(buf, "hello", 5));
	EXPECT_EQ(rej + 1, sdp_stat("RejectSent"));
	EXPECT_EQ(res + 1, sdp_stat("FallbackResources"));
	EXPECT_EQ(refused, sdp_stat("FallbackRejected"));
	PROVE_FALLBACK(c);
	close(a);
	close(c);

	sdp_rdma_byte(_metadata, l, &ss, len);
	close(l);
}

TEST(tcp_client_on_sdp_listener)
{
	long long before = sdp_stat("FallbackPeerTcp");
	struct sockaddr_storage ss, peer, local;
	socklen_t len, plen = sizeof(peer), llen = sizeof(local);
	int l = sdp_listener(sdp_family(), SDP_A, 4, &ss, &len);
	int c = sdp_connect(AF_INET, &ss, len), a;
	char buf[8];

	ASSERT_LE(0, c);
	a = accept(l, (struct sockaddr *)&peer, &plen);
	ASSERT_LE(0, a);
	EXPECT_EQ(SDP_TRANSPORT_TCP, sdp_transport(a));
	EXPECT_EQ(SDP_FB_PEER_TCP, fb_reason(a));
	EXPECT_EQ(before + 1, sdp_stat("FallbackPeerTcp"));
	ASSERT_EQ(0, getsockname(c, (struct sockaddr *)&local, &llen));
	EXPECT_EQ(sdp_port(&local), sdp_port(&peer));
	EXPECT_EQ(3, send(c, "tcp", 3, 0));
	EXPECT_EQ(3, recv(a, buf, 3, MSG_WAITALL));
	EXPECT_EQ(3, send(a, "sdp", 3, 0));
	EXPECT_EQ(3, recv(c, buf, 3, MSG_WAITALL));
	EXPECT_EQ(0, memcmp(buf, "sdp", 3));
	PROVE_FALLBACK(a);
	close(a);
	close(c);
	close(l);
}

/* RDMA and TCP clients on one listener, woken through epoll. */
TEST(mixed_clients_one_listener_epoll)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct sockaddr_storage ss;
	socklen_t len;
	int l = sdp_listener(sdp_family(), SDP_A, 16, &ss, &len);
	int ep = epoll_create1(0), c[6], a[6], n = 0, rdma = 0, tcp = 0, i, k;
	struct sdp_proof pr[6];
	char b;

	ASSERT_EQ(0, fcntl(l, F_SETFL, O_NONBLOCK));
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, l, &ev));
	for (i = 0; i < 6; i++) {
		c[i] = socket(i % 2 ? AF_INET : sdp_family(), SOCK_STREAM | SOCK_NONBLOCK, 0);
		connect(c[i], (struct sockaddr *)&ss, len);
	}
	while (n < 6) {
		ASSERT_EQ(1, epoll_wait(ep, &ev, 1, 10000));
		while (n < 6 && (a[n] = accept4(l, NULL, NULL, SOCK_NONBLOCK)) >= 0)
			n++;
		/* (errno is accept4's only if it, not the count, ended the loop) */
		if (n < 6)
			ASSERT_EQ(EAGAIN, errno);
	}
	for (i = 0; i < 6; i++) {
		int t = sdp_transport(a[i]);

		rdma += t == SDP_TRANSPORT_RDMA;
		tcp += t == SDP_TRANSPORT_TCP;
	}
	EXPECT_EQ(3, rdma);
	EXPECT_EQ(3, tcp);
	/* clients in order: even ones SDP, odd ones TCP */
	for (i = 0; i < 6; i++) {
		ASSERT_NE(0, sdp_poll1(c[i], POLLOUT, 10000) & POLLOUT);
		k = sdp_peer_of(c[i], a, 6);
		ASSERT_LE(0, k);
		if (i % 2 == 0) {
			ASSERT_EQ(0, sdp_proof_begin(&pr[i], c[i], a[k]));
		} else {
			EXPECT_EQ(SDP_TRANSPORT_TCP, sdp_transport(a[k]));
		}
		EXPECT_EQ(1, send(c[i], "m", 1, 0));
		ASSERT_NE(0, sdp_poll1(a[k], POLLIN, 5000) & POLLIN);
		EXPECT_EQ(1, recv(a[k], &b, 1, 0));
		EXPECT_EQ('m', b);
		if (i % 2 == 0) {
			SDP_PROVE(&pr[i]);
		}
	}
	for (i = 0; i < 6; i++) {
		close(a[i]);
		close(c[i]);
	}
	close(ep);
	close(l);
}

TEST(rdma_only_fails_with_documented_errno)
{
	struct sockaddr_storage ss, ss2;
	socklen_t len, len2;
	pid_t srv = echo_server("tcponly", SDP_TCPONLY, &ss, &len);
	pid_t srv2 = echo_server(NULL, SDP_A, &ss2, &len2);

	ASSERT_LT(0, srv);
	ASSERT_LT(0, srv2);
	sdp_sysctl_set("rdma_only", 1);
	ASSERT_EQ(1, sdp_sysctl("rdma_only"));
	/* no RDMA device on the way: EHOSTUNREACH */
	EXPECT_EQ(-1, sdp_connect(sdp_family(), &ss, len));
	EXPECT_EQ(EHOSTUNREACH, errno);
	/* refused over RDMA (only TCP listens there): ECONNREFUSED */
	EXPECT_EQ(-1, sdp_connect(sdp_family(), &ss2, len2));
	EXPECT_EQ(ECONNREFUSED, errno);
	sdp_sysctl_set("rdma_only", 0);
	stop_server(srv);
	stop_server(srv2);
	SDP_PROVE_LOCAL();
}

/*
 * connect() with TCP_SYNCNT 1 to a host that answers nothing: its errno and
 * time. (SO_SNDTIMEO 10 s: a connect that would wait on ends, EINPROGRESS,
 * before the harness kills the test with rdma_only still set.)
 */
static int silent_connect(int family, const struct sockaddr_storage *ss, socklen_t len,
			  double *took)
{
	struct timeval tv = { .tv_sec = 10 };
	int fd = socket(family, SOCK_STREAM, 0), err;
	double t0 = sdp_now();

	if (fd < 0 || sdp_setint(fd, SOL_TCP, TCP_SYNCNT, 1) ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)))
		return -1;
	err = connect(fd, (const struct sockaddr *)ss, len) ? errno : 0;
	*took = sdp_now() - t0;
	close(fd);
	return err;
}

/*
 * With rdma_only, a connect whose RDMA attempt nothing answers fails as
 * TCP's to a silent host: ETIMEDOUT once TCP_SYNCNT's retries would be
 * over (1 s + 2 s), not whenever rdma_cm gives up.
 */
TEST(rdma_only_silent_peer_times_out_as_tcp)
{
	struct sockaddr_storage ss;
	long long failed = sdp_stat("ConnectFailed");
	double tcp, sdp;
	socklen_t len;
	int filler;
	/* full (backlog 0, one waiting): TCP's SYNs go unanswered; no RDMA there */
	pid_t srv = tcp_server("nordma", SDP_NORDMA, 0, &ss, &len);

	ASSERT_LT(0, srv);
	filler = sdp_connect(AF_INET, &ss, len);
	ASSERT_LE(0, filler);
	EXPECT_EQ(ETIMEDOUT, silent_connect(AF_INET, &ss, len, &tcp));
	sdp_sysctl_set("rdma_only", 1);
	ASSERT_EQ(1, sdp_sysctl("rdma_only"));
	EXPECT_EQ(ETIMEDOUT, silent_connect(sdp_family(), &ss, len, &sdp));
	sdp_sysctl_set("rdma_only", 0);
	EXPECT_LT(tcp - 0.5, sdp) TH_LOG("SDP %.2f s, TCP %.2f s", sdp, tcp);
	EXPECT_GT(tcp + 1.0, sdp) TH_LOG("SDP %.2f s, TCP %.2f s", sdp, tcp);
	EXPECT_EQ(failed + 1, sdp_stat("ConnectFailed"));
	close(filler);
	stop_server(srv);
	SDP_PROVE_LOCAL();
}

TEST(disabled_uses_tcp_both_ends)
{
	long long before = sdp_stat("FallbackPolicy");
	struct sockaddr_storage ss;
	socklen_t len;
	int l, c, a;

	sdp_sysctl_set("enabled", 0);
	l = sdp_listener(sdp_family(), SDP_A, 4, &ss, &len);
	c = sdp_connect(sdp_family(), &ss, len);
	sdp_sysctl_set("enabled", 1);
	ASSERT_LE(0, c);
	a = accept(l, NULL, NULL);
	ASSERT_LE(0, a);
	EXPECT_EQ(SDP_FB_POLICY, fb_reason(l));
	EXPECT_EQ(SDP_FB_POLICY, fb_reason(c));
	EXPECT_EQ(SDP_FB_PEER_TCP, fb_reason(a));
	EXPECT_EQ(before + 2, sdp_stat("FallbackPolicy"));
	EXPECT_EQ(2, send(c, "pp", 2, 0));
	EXPECT_EQ(2, recv(a, &len, 2, MSG_WAITALL));
	PROVE_FALLBACK(c);
	PROVE_FALLBACK(a);
	close(a);
	close(c);
	close(l);
}

/*
 * Any namespace works; without an RDMA device it is TCP, and says so, in
 * its own counters: +1 there, nothing in ours.
 */
TEST(netns_without_rdma)
{
	long long ours = sdp_stat("FallbackNoDevice");
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (!pid) {
		struct sockaddr_storage ss;
		socklen_t len;
		int l, c, a;
		char b[2];

		long long theirs;

		if (sdp_setns("tcponly"))
			_exit(10);
		/* /proc/net follows the reader's namespace */
		theirs = sdp_stat("FallbackNoDevice");
		l = sdp_listener(sdp_family(), SDP_TCPONLY, 4, &ss, &len);
		c = sdp_connect(sdp_family(), &ss, len);
		a = l < 0 || c < 0 ? -1 : accept(l, NULL, NULL);
		if (a < 0)
			_exit(11);
		if (sdp_transport(c) != SDP_TRANSPORT_TCP ||
		    fb_reason(c) != SDP_FB_NO_DEVICE)
			_exit(12);
		if (send(c, "ns", 2, MSG_NOSIGNAL) != 2 || recv(a, b, 2, MSG_WAITALL) != 2)
			_exit(13);
		_exit(sdp_stat("FallbackNoDevice") == theirs + 1 ? 0 : 14);
	}
	EXPECT_CHILD_OK(pid);
	EXPECT_EQ(ours, sdp_stat("FallbackNoDevice"));
	if (_metadata->passed)
		fprintf(stderr, "# PROOF fallback reason=%d (in netns tcponly)\n", SDP_FB_NO_DEVICE);
}

/* A policy of one rule and a default, as the shim hands it over. */
struct policy1 {
	struct sdp_policy hdr;
	struct sdp_policy_rule rule;
};

static void policy1(struct policy1 *p, int use, int roles, const char *ip,
		    int prefix, int port_lo, int port_hi)
{
	memset(p, 0, sizeof(*p));
	p->hdr.count = 1;
	p->hdr.dflt = SDP_USE_SDP;
	p->rule.use = use;
	p->rule.roles = roles;
	p->rule.prefix = prefix;
	p->rule.port_lo = port_lo;
	p->rule.port_hi = port_hi;
	if (ip) {
		p->rule.family = strchr(ip, ':') ? AF_INET6 : AF_INET;
		inet_pton(p->rule.family, ip, p->rule.addr);
	}
}

static int set_policy(int fd, const struct policy1 *p)
{
	return setsockopt(fd, SOL_SDP, SDP_POLICY, p, sizeof(*p));
}

/* The transport a client with policy @p gets to listener @l at @ss. */
static int policy_outcome(int l, const struct sockaddr_storage *ss, socklen_t len,
			  const struct policy1 *p)
{
	int c = socket(sdp_family(), SOCK_STREAM, 0), t = -1;

	if (!set_policy(c, p) && !connect(c, (const struct sockaddr *)ss, len))
		t = sdp_transport(c);
	close(accept(l, NULL, NULL));
	close(c);
	return t;
}

/* connect() rules: TCP where a rule says so, v4-mapped addresses as IPv4. */
TEST(policy_connect_rules)
{
	long long pol = sdp_stat("FallbackPolicy");
	struct sockaddr_storage ss, ss2, m;
	struct sockaddr_in6 *m6 = (struct sockaddr_in6 *)&m;
	socklen_t len, len2;
	int l = sdp_listener(sdp_family(), SDP_A, 8, &ss, &len);
	int l2 = sdp_listener(sdp_family(), SDP_A, 8, &ss2, &len2);
	int port = sdp_port(&ss);
	struct sdp_proof pr;
	struct policy1 p;
	int c, a, i;

	policy1(&p, SDP_USE_TCP, SDP_ROLE_CONNECT, "198.18.0.0", 24, port, port);
	ASSERT_LE(0, l);
	ASSERT_LE(0, l2);
	/* to the rule's port: TCP, at once; to the other one: RDMA */
	c = socket(sdp_family(), SOCK_STREAM, 0);
	ASSERT_EQ(0, set_policy(c, &p));
	ASSERT_EQ(0, connect(c, (struct sockaddr *)&ss, len));
	EXPECT_EQ(SDP_TRANSPORT_TCP, sdp_transport(c));
	EXPECT_EQ(SDP_FB_POLICY, fb_reason(c));
	EXPECT_EQ(pol + 1, sdp_stat("FallbackPolicy"));
	a = accept(l, NULL, NULL);
	EXPECT_EQ(SDP_TRANSPORT_TCP, sdp_transport(a));
	close(a);
	close(c);
	c = socket(sdp_family(), SOCK_STREAM, 0);
	ASSERT_EQ(0, set_policy(c, &p));
	ASSERT_EQ(0, connect(c, (struct sockaddr *)&ss2, len2));
	EXPECT_EQ(SDP_TRANSPORT_RDMA, sdp_transport(c));
	a = accept(l2, NULL, NULL);
	ASSERT_EQ(0, sdp_proof_begin(&pr, c, a));
	EXPECT_EQ(1, send(c, "r", 1, 0));
	EXPECT_EQ(1, recv(a, &i, 1, 0));
	SDP_PROVE(&pr);
	close(a);
	close(c);
	/* addresses outside the rule's prefix, or of the other family, keep SDP */
	policy1(&p, SDP_USE_TCP, SDP_ROLE_CONNECT, "198.18.0.2", 32, 0, 65535);
	EXPECT_EQ(SDP_TRANSPORT_RDMA, policy_outcome(l, &ss, len, &p));
	policy1(&p, SDP_USE_TCP, SDP_ROLE_CONNECT, "198.18.0.2", 31, 0, 65535);
	EXPECT_EQ(SDP_TRANSPORT_RDMA, policy_outcome(l, &ss, len, &p));
	policy1(&p, SDP_USE_TCP, SDP_ROLE_CONNECT, "198.18.0.0", 31, 0, 65535);
	EXPECT_EQ(SDP_TRANSPORT_TCP, policy_outcome(l, &ss, len, &p));
	policy1(&p, SDP_USE_TCP, SDP_ROLE_CONNECT, "2001:db8::", 32, 0, 65535);
	EXPECT_EQ(SDP_TRANSPORT_RDMA, policy_outcome(l, &ss, len, &p));
	/* a listen rule does not apply to connect() */
	policy1(&p, SDP_USE_TCP, SDP_ROLE_LISTEN, NULL, 0, 0, 65535);
	EXPECT_EQ(SDP_TRANSPORT_RDMA, policy_outcome(l, &ss, len, &p));
	policy1(&p, SDP_USE_TCP, SDP_ROLE_CONNECT, "198.18.0.0", 24, port, port);
	/* ::ffff:198.18.0.1 is matched by the IPv4 rule */
	memset(&m, 0, sizeof(m));
	m6->sin6_family = AF_INET6;
	m6->sin6_port = htons(port);
	inet_pton(AF_INET6, "::ffff:" SDP_A, &m6->sin6_addr);
	c = socket(sdp_family(), SOCK_STREAM, 0);
	ASSERT_EQ(0, set_policy(c, &p));
	ASSERT_EQ(0, connect(c, (struct sockaddr *)&m, sizeof(*m6)));
	EXPECT_EQ(SDP_FB_POLICY, fb_reason(c));
	close(accept(l, NULL, NULL));
	close(c);
	/* a default of TCP, with a rule for SDP */
	for (i = 0; i < 2; i++) {
		policy1(&p, SDP_USE_SDP, SDP_ROLE_CONNECT, NULL, 0, port, port);
		p.hdr.dflt = SDP_USE_TCP;
		c = socket(sdp_family(), SOCK_STREAM, 0);
		ASSERT_EQ(0, set_policy(c, &p));
		ASSERT_EQ(0, connect(c, (struct sockaddr *)(i ? &ss2 : &ss), len));
		EXPECT_EQ(i ? SDP_TRANSPORT_TCP : SDP_TRANSPORT_RDMA, sdp_transport(c));
		close(accept(i ? l2 : l, NULL, NULL));
		close(c);
	}
	close(l);
	close(l2);
}

/* listen() rules: a listener the policy keeps to TCP serves TCP only. */
TEST(policy_listen_rule)
{
	struct sockaddr_storage ss;
	socklen_t len = sdp_addr(&ss, SDP_A, 0);
	struct policy1 p;
	int l = socket(sdp_family(), SOCK_STREAM, 0), c, a;

	policy1(&p, SDP_USE_TCP, SDP_ROLE_LISTEN, SDP_A, 32, 0, 65535);
	ASSERT_EQ(0, set_policy(l, &p));
	ASSERT_EQ(0, bind(l, (struct sockaddr *)&ss, len));
	ASSERT_EQ(0, listen(l, 4));
	EXPECT_EQ(SDP_FB_POLICY, fb_reason(l));
	ASSERT_EQ(0, getsockname(l, (struct sockaddr *)&ss, &len));
	/* an SDP client is refused over RDMA and comes over TCP */
	c = sdp_connect(sdp_family(), &ss, len);
	ASSERT_LE(0, c);
	EXPECT_EQ(SDP_TRANSPORT_TCP, sdp_transport(c));
	EXPECT_EQ(SDP_FB_REJECTED, fb_reason(c));
	a = accept(l, NULL, NULL);
	EXPECT_EQ(SDP_TRANSPORT_TCP, sdp_transport(a));
	EXPECT_EQ(2, send(c, "ok", 2, 0));
	EXPECT_EQ(2, recv(a, &len, 2, MSG_WAITALL));
	PROVE_FALLBACK(c);
	PROVE_FALLBACK(a);
	close(a);
	close(c);
	close(l);
}

/* Bad policies get EINVAL; a good one reads back as it was set. */
TEST(policy_bad_input)
{
	int fd = socket(sdp_family(), SOCK_STREAM, 0);
	struct sdp_policy hdr = { .count = SDP_POLICY_MAX_RULES + 1, .dflt = SDP_USE_SDP };
	struct policy1 p, b, got;
	socklen_t glen = sizeof(got);

	policy1(&p, SDP_USE_TCP, SDP_ROLE_CONNECT, SDP_A, 24, 1, 2);
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, set_policy(fd, &p));
	ASSERT_EQ(0, getsockopt(fd, SOL_SDP, SDP_POLICY, &got, &glen));
	EXPECT_EQ(sizeof(got), glen);
	EXPECT_EQ(0, memcmp(&p, &got, sizeof(p)));
#define BAD(field, val) do {						\
	b = p;								\
	b.field = val;							\
	EXPECT_EQ(-1, set_policy(fd, &b));				\
	EXPECT_EQ(EINVAL, errno) TH_LOG(#field " = " #val);		\
} while (0)
	BAD(hdr.count, 2);
	BAD(hdr.count, 0xffffffff);
	BAD(hdr.dflt, 0);
	BAD(hdr.dflt, 3);
	BAD(rule.use, 0);
	BAD(rule.use, 7);
	BAD(rule.roles, 0);
	BAD(rule.roles, 4);
	BAD(rule.family, 99);
	BAD(rule.prefix, 33);
	BAD(rule.port_lo, 3);
	policy1(&b, SDP_USE_TCP, SDP_ROLE_CONNECT, NULL, 1, 0, 1);
	EXPECT_EQ(-1, set_policy(fd, &b));
	EXPECT_EQ(EINVAL, errno);
	policy1(&b, SDP_USE_TCP, SDP_ROLE_CONNECT, "2001:db8::", 129, 0, 1);
	EXPECT_EQ(-1, set_policy(fd, &b));
	EXPECT_EQ(EINVAL, errno);
#undef BAD
	EXPECT_EQ(-1, setsockopt(fd, SOL_SDP, SDP_POLICY, &hdr, sizeof(hdr)));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, setsockopt(fd, SOL_SDP, SDP_POLICY, &p, sizeof(p) - 1));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, setsockopt(fd, SOL_SDP, SDP_POLICY, &p, 4));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, setsockopt(fd, SOL_SDP, SDP_POLICY, NULL, sizeof(p)));
	EXPECT_EQ(EFAULT, errno);
	/* the policy that was set is still the one in force */
	glen = sizeof(got);
	ASSERT_EQ(0, getsockopt(fd, SOL_SDP, SDP_POLICY, &got, &glen));
	EXPECT_EQ(0, memcmp(&p, &got, sizeof(p)));
	close(fd);
	SDP_PROVE_LOCAL();
}

TEST_HARNESS_MAIN
