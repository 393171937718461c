// SPDX-License-Identifier: GPL-2.0
/*
 * Stream socket semantics of SDP, with TCP as the oracle: every test runs
 * over AF_INET/AF_INET6 TCP (tcp4, tcp6) and over the SDP family (sdp4,
 * sdp6) with the same assertions. SDP variants also check that the
 * connection really runs over RDMA (SDP_INFO) and that the bytes a test
 * moved went through it.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/select.h>
#include <sys/sendfile.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <linux/tcp.h>	/* tcp_info with the byte counts glibc's lacks */
#include <linux/sockios.h>

#include "kselftest_harness.h"
#ifndef SOL_TCP
#define SOL_TCP		IPPROTO_TCP
#endif
enum { TCP_ESTABLISHED = 1, TCP_LISTEN = 10 };	/* include/net/tcp_states.h */
#include "sdp_proof.h"
#include "sdp_gen.h"

FIXTURE(pair) {
	int lfd, cfd, sfd;	/* listener, client, accepted server side */
	int family;
	struct sockaddr_storage addr;
	socklen_t alen;
	struct sdp_proof proof;
};

FIXTURE_VARIANT(pair) {
	bool sdp;
	const char *ip;
};

SDP_ORACLE_VARIANT(pair, tcp4) { .sdp = false, .ip = SDP_A };
FIXTURE_VARIANT_ADD(pair, sdp4) { .sdp = true, .ip = SDP_A };
SDP_ORACLE_VARIANT(pair, tcp6) { .sdp = false, .ip = SDP_A6 };
FIXTURE_VARIANT_ADD(pair, sdp6) { .sdp = true, .ip = SDP_A6 };

static int variant_family(bool sdp, const char *ip)
{
	if (sdp)
		return sdp_family();
	return strchr(ip, ':') ? AF_INET6 : AF_INET;
}

FIXTURE_SETUP(pair)
{
	self->family = variant_family(variant->sdp, variant->ip);
	self->lfd = sdp_listener(self->family, variant->ip, 16, &self->addr,
				 &self->alen);
	ASSERT_LE(0, self->lfd) TH_LOG("listener: %s", strerror(errno));
	self->cfd = sdp_connect(self->family, &self->addr, self->alen);
	ASSERT_LE(0, self->cfd) TH_LOG("connect: %s", strerror(errno));
	self->sfd = accept(self->lfd, NULL, NULL);
	ASSERT_LE(0, self->sfd) TH_LOG("accept: %s", strerror(errno));
	if (variant->sdp) {
		ASSERT_EQ(sdp_expected_transport(), sdp_transport(self->cfd));
		ASSERT_EQ(sdp_expected_transport(), sdp_transport(self->sfd));
		ASSERT_EQ(0, sdp_proof_begin(&self->proof, self->cfd, self->sfd))
			TH_LOG("proof: %s", strerror(errno));
	}
}

/*
 * What the pair ran over (sdp_proof.h). A test that closes or shuts down
 * an end proves first: the QP may go with it.
 */
#define PROVE() do {							\
	if (variant->sdp)						\
		SDP_PROVE(&self->proof);				\
	else								\
		SDP_PROVE_TCP(self->cfd);				\
} while (0)

FIXTURE_TEARDOWN(pair)
{
	if (self->cfd >= 0 && self->sfd >= 0)
		PROVE();
	close(self->cfd);
	close(self->sfd);
	close(self->lfd);
}

/* For SDP over RDMA: @fd received at least @bytes over RDMA. */
#define EXPECT_RDMA_RX(fd, bytes) do {					\
	struct sdp_info _i;						\
	if (variant->sdp &&						\
	    sdp_expected_transport() == SDP_TRANSPORT_RDMA) {		\
		ASSERT_EQ(0, sdp_info(fd, &_i));			\
		EXPECT_EQ(SDP_TRANSPORT_RDMA, _i.transport);		\
		EXPECT_LE((unsigned long long)(bytes), _i.rx_bytes);	\
	}								\
} while (0)

static void fill(char *buf, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = (char)(seed + i * 31 + (i >> 8));
}

TEST_F(pair, send_recv)
{
	char out[1000], in[1000];

	fill(out, sizeof(out), 1);
	ASSERT_EQ(sizeof(out), send(self->cfd, out, sizeof(out), 0));
	ASSERT_EQ(sizeof(in), sdp_read_full(self->sfd, in, sizeof(in)));
	EXPECT_EQ(0, memcmp(out, in, sizeof(in)));
	ASSERT_EQ(5, write(self->sfd, "reply", 5));
	ASSERT_EQ(5, read(self->cfd, in, sizeof(in)));
	EXPECT_EQ(0, memcmp(in, "reply", 5));
	EXPECT_RDMA_RX(self->sfd, sizeof(out));
	EXPECT_RDMA_RX(self->cfd, 5);
}

TEST_F(pair, readv_writev_many_iovecs)
{
	static char out[64][333], in[17][1254];
	struct iovec wiov[64], riov[17];
	struct msghdr msg = {};
	size_t total = 0;
	int i;

	for (i = 0; i < 64; i++) {
		fill(out[i], sizeof(out[i]), i);
		wiov[i].iov_base = out[i];
		wiov[i].iov_len = sizeof(out[i]);
		total += sizeof(out[i]);
	}
	for (i = 0; i < 17; i++) {
		riov[i].iov_base = in[i];
		riov[i].iov_len = sizeof(in[i]);
	}
	ASSERT_EQ(total, writev(self->cfd, wiov, 64));
	/* sendmsg with the same iovecs the other way */
	msg.msg_iov = wiov;
	msg.msg_iovlen = 64;
	ASSERT_EQ(total, sendmsg(self->sfd, &msg, 0));

	size_t got = 0;

	while (got < total) {
		ssize_t n = readv(self->sfd, riov, 17);

		ASSERT_LT(0, n);
		got += n;
		/* compare what arrived against the stream */
		for (ssize_t k = 0; k < n; k++) {
			size_t pos = got - n + k;
			char want = out[pos / 333][pos % 333];
			char have = in[k / 1254][k % 1254];

			ASSERT_EQ(want, have);
		}
	}
	got = 0;
	while (got < total) {
		struct msghdr rmsg = { .msg_iov = riov, .msg_iovlen = 17 };
		ssize_t n = recvmsg(self->cfd, &rmsg, 0);

		ASSERT_LT(0, n);
		for (ssize_t k = 0; k < n; k++) {
			size_t pos = got + k;

			ASSERT_EQ(out[pos / 333][pos % 333], in[k / 1254][k % 1254]);
		}
		got += n;
	}
	EXPECT_RDMA_RX(self->sfd, total);
	EXPECT_RDMA_RX(self->cfd, total);
}

TEST_F(pair, msg_peek)
{
	char buf[32] = {};

	ASSERT_EQ(11, send(self->cfd, "hello world", 11, 0));
	ASSERT_NE(0, sdp_poll1(self->sfd, POLLIN, 5000) & POLLIN);
	ASSERT_EQ(5, recv(self->sfd, buf, 5, MSG_PEEK));
	EXPECT_EQ(0, memcmp(buf, "hello", 5));
	ASSERT_EQ(5, recv(self->sfd, buf, 5, MSG_PEEK));
	EXPECT_EQ(0, memcmp(buf, "hello", 5));
	ASSERT_EQ(11, recv(self->sfd, buf, sizeof(buf), 0));
	EXPECT_EQ(0, memcmp(buf, "hello world", 11));
	EXPECT_EQ(-1, recv(self->sfd, buf, sizeof(buf), MSG_DONTWAIT));
	EXPECT_EQ(EAGAIN, errno);
}

TEST_F(pair, msg_peek_waitall_spans_messages)
{
	char buf[300];
	int i;

	/* Three separate messages; peek all of them at once, then read. */
	for (i = 0; i < 3; i++) {
		memset(buf, 'a' + i, 100);
		ASSERT_EQ(100, send(self->cfd, buf, 100, 0));
		usleep(20000);
	}
	ASSERT_EQ(300, recv(self->sfd, buf, 300, MSG_PEEK | MSG_WAITALL));
	EXPECT_EQ('a', buf[0]);
	EXPECT_EQ('b', buf[150]);
	EXPECT_EQ('c', buf[299]);
	ASSERT_EQ(300, recv(self->sfd, buf, 300, MSG_WAITALL));
	EXPECT_EQ('c', buf[299]);
}

struct slow_writer {
	int fd;
	int chunks;
	size_t chunk;
};

static void *slow_writer(void *arg)
{
	struct slow_writer *w = arg;
	char buf[4096];
	int i;

	memset(buf, 'w', sizeof(buf));
	for (i = 0; i < w->chunks; i++) {
		usleep(20000);
		if (send(w->fd, buf, w->chunk, MSG_NOSIGNAL) != (ssize_t)w->chunk)
			break;
	}
	return NULL;
}

TEST_F(pair, msg_waitall)
{
	struct slow_writer w = { .fd = self->cfd, .chunks = 10, .chunk = 1000 };
	char buf[10000];
	pthread_t t;

	ASSERT_EQ(0, pthread_create(&t, NULL, slow_writer, &w));
	EXPECT_EQ(10000, recv(self->sfd, buf, sizeof(buf), MSG_WAITALL));
	pthread_join(t, NULL);
	for (int i = 0; i < 10000; i++) {
		ASSERT_EQ('w', buf[i]) TH_LOG("byte %d", i);
	}
	EXPECT_RDMA_RX(self->sfd, 10000);
}

TEST_F(pair, msg_dontwait_and_o_nonblock)
{
	char buf[16];
	int flags;

	EXPECT_EQ(-1, recv(self->sfd, buf, sizeof(buf), MSG_DONTWAIT));
	EXPECT_EQ(EAGAIN, errno);
	flags = fcntl(self->sfd, F_GETFL);
	ASSERT_EQ(0, fcntl(self->sfd, F_SETFL, flags | O_NONBLOCK));
	EXPECT_EQ(-1, read(self->sfd, buf, sizeof(buf)));
	EXPECT_EQ(EAGAIN, errno);
	ASSERT_EQ(3, send(self->cfd, "abc", 3, 0));
	ASSERT_NE(0, sdp_poll1(self->sfd, POLLIN, 5000) & POLLIN);
	EXPECT_EQ(3, read(self->sfd, buf, sizeof(buf)));
}

/* A writer that nobody reads from fills the pipe and then gets EAGAIN. */
TEST_F(pair, send_fills_then_eagain)
{
	static char buf[65536 + 256], in[65536];
	size_t sent = 0, got = 0;
	ssize_t n;

	/* the stream's byte i is i * 31 + 7 (period 256): a pattern, not zeros */
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (char)(i * 31 + 7);
	ASSERT_EQ(0, fcntl(self->cfd, F_SETFL, O_NONBLOCK));
	/*
	 * Until it stays full: sends that complete after an EAGAIN (acks in
	 * TCP; 6.12's rxe completes asynchronously) may free room once more.
	 */
	for (;;) {
		n = send(self->cfd, buf + sent % 256, 65536, 0);
		if (n < 0) {
			ASSERT_EQ(EAGAIN, errno);
			if (!(sdp_poll1(self->cfd, POLLOUT, 300) & POLLOUT))
				break;
			continue;
		}
		sent += n;
		ASSERT_LT(sent, 512u << 20) TH_LOG("never blocked");
	}
	while (got < sent) {
		n = recv(self->sfd, in, sizeof(in), 0);
		ASSERT_LT(0, n);
		for (ssize_t k = 0; k < n; k++)
			ASSERT_EQ((char)((got + k) * 31 + 7), in[k]);
		got += n;
	}
	EXPECT_EQ(sent, got);
	EXPECT_NE(0, sdp_poll1(self->cfd, POLLOUT, 5000) & POLLOUT);
	EXPECT_RDMA_RX(self->sfd, sent);
}

static int sigpipes;

static void on_sigpipe(int sig)
{
	sigpipes++;
}

TEST_F(pair, epipe_sigpipe_and_msg_nosignal)
{
	struct sigaction sa = { .sa_handler = on_sigpipe };

	ASSERT_EQ(0, sigaction(SIGPIPE, &sa, NULL));
	sigpipes = 0;
	ASSERT_EQ(0, shutdown(self->cfd, SHUT_WR));
	EXPECT_EQ(-1, send(self->cfd, "x", 1, 0));
	EXPECT_EQ(EPIPE, errno);
	EXPECT_EQ(1, sigpipes);
	EXPECT_EQ(-1, send(self->cfd, "x", 1, MSG_NOSIGNAL));
	EXPECT_EQ(EPIPE, errno);
	EXPECT_EQ(1, sigpipes);
	signal(SIGPIPE, SIG_DFL);
}

/* After the peer closed: the first send goes, the reset makes the next fail. */
TEST_F(pair, send_after_peer_close)
{
	char buf[8];
	ssize_t n = 0;
	int err;

	PROVE();
	close(self->sfd);
	self->sfd = -1;
	EXPECT_EQ(0, recv(self->cfd, buf, sizeof(buf), 0));
	EXPECT_EQ(1, send(self->cfd, "x", 1, MSG_NOSIGNAL));
	/* The peer's reset comes back; then sends fail. */
	for (int i = 0; i < 500 && (n = send(self->cfd, "x", 1, MSG_NOSIGNAL)) == 1; i++)
		usleep(10000);
	EXPECT_EQ(-1, n);
	err = errno;
	EXPECT_TRUE(err == EPIPE || err == ECONNRESET) TH_LOG("errno %d", err);
}

TEST_F(pair, shutdown_wr_half_close)
{
	char buf[64];

	ASSERT_EQ(4, send(self->cfd, "last", 4, 0));
	ASSERT_EQ(0, shutdown(self->cfd, SHUT_WR));
	ASSERT_EQ(4, sdp_read_full(self->sfd, buf, 4));
	EXPECT_EQ(0, recv(self->sfd, buf, sizeof(buf), 0));
	EXPECT_NE(0, sdp_poll1(self->sfd, POLLRDHUP, 1000) & POLLRDHUP);
	/* the other direction still works */
	ASSERT_EQ(6, send(self->sfd, "answer", 6, 0));
	ASSERT_EQ(6, sdp_read_full(self->cfd, buf, 6));
	EXPECT_EQ(0, memcmp(buf, "answer", 6));
	PROVE();
	ASSERT_EQ(0, shutdown(self->sfd, SHUT_WR));
	EXPECT_EQ(0, recv(self->cfd, buf, sizeof(buf), 0));
	EXPECT_NE(0, sdp_poll1(self->cfd, POLLHUP, 1000) & POLLHUP);
}

TEST_F(pair, shutdown_rd)
{
	char buf[16];

	ASSERT_EQ(0, shutdown(self->sfd, SHUT_RD));
	EXPECT_EQ(0, recv(self->sfd, buf, sizeof(buf), 0));
	EXPECT_EQ(POLLIN | POLLOUT | POLLRDHUP,
		  sdp_poll1(self->sfd, POLLIN | POLLOUT | POLLRDHUP, 0));
	/* sending still works */
	ASSERT_EQ(2, send(self->sfd, "ok", 2, 0));
	ASSERT_EQ(2, sdp_read_full(self->cfd, buf, 2));
}

TEST_F(pair, shutdown_rdwr)
{
	char buf[16];

	ASSERT_EQ(0, shutdown(self->cfd, SHUT_RDWR));
	EXPECT_EQ(0, recv(self->sfd, buf, sizeof(buf), 0));
	EXPECT_NE(0, sdp_poll1(self->cfd, POLLHUP, 1000) & POLLHUP);
	EXPECT_EQ(-1, shutdown(self->cfd, 7));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(pair, eof_after_data)
{
	static char out[200000], in[200000];

	fill(out, sizeof(out), 7);
	ASSERT_EQ(sizeof(out), sdp_write_full(self->cfd, out, sizeof(out)));
	PROVE();
	close(self->cfd);
	self->cfd = -1;
	ASSERT_EQ(sizeof(in), sdp_read_full(self->sfd, in, sizeof(in)));
	EXPECT_EQ(0, memcmp(out, in, sizeof(in)));
	EXPECT_EQ(0, read(self->sfd, in, sizeof(in)));
	EXPECT_RDMA_RX(self->sfd, sizeof(out));
}

/* close() with unread data resets the connection. */
TEST_F(pair, close_with_unread_data_resets)
{
	char buf[16];

	ASSERT_EQ(10, send(self->cfd, "0123456789", 10, 0));
	ASSERT_NE(0, sdp_poll1(self->sfd, POLLIN, 5000) & POLLIN);
	PROVE();
	close(self->sfd);
	self->sfd = -1;
	ASSERT_NE(0, sdp_poll1(self->cfd, POLLIN, 5000));
	EXPECT_EQ(-1, recv(self->cfd, buf, sizeof(buf), 0));
	EXPECT_EQ(ECONNRESET, errno);
	EXPECT_EQ(0, recv(self->cfd, buf, sizeof(buf), 0));
}

TEST_F(pair, so_linger_zero_resets)
{
	struct linger l = { .l_onoff = 1, .l_linger = 0 };
	char buf[16];

	ASSERT_EQ(0, setsockopt(self->sfd, SOL_SOCKET, SO_LINGER, &l, sizeof(l)));
	PROVE();
	close(self->sfd);
	self->sfd = -1;
	ASSERT_NE(0, sdp_poll1(self->cfd, POLLIN, 5000));
	EXPECT_EQ(POLLIN | POLLOUT | POLLERR | POLLHUP | POLLRDHUP,
		  sdp_poll1(self->cfd, POLLIN | POLLOUT | POLLRDHUP, 0));
	EXPECT_EQ(-1, recv(self->cfd, buf, sizeof(buf), 0));
	EXPECT_EQ(ECONNRESET, errno);
}

/*
 * SO_LINGER with a timeout: close() returns once the data is delivered
 * (well before the timeout: the data fits in the peer's buffers).
 */
struct late_reader {
	int fd;
	size_t len, got;
	char *buf;
};

/* Starts reading half a second late, to the end. */
static void *late_reader(void *arg)
{
	struct late_reader *r = arg;

	usleep(500000);
	r->got = sdp_read_full(r->fd, r->buf, r->len);
	return NULL;
}

/* close() with SO_LINGER waits until the peer has the data, as TCP's. */
TEST_F(pair, so_linger_timeout_delivers)
{
	struct linger l = { .l_onoff = 1, .l_linger = 20 };
	static char out[16 << 20], in[16 << 20];
	struct late_reader r = { .fd = self->sfd, .buf = in };
	size_t sent = 0;
	pthread_t t;
	ssize_t n;
	double t0;

	/*
	 * Fill the pipe, so that data is still here at close(). (More than
	 * the receiver's window: SO_RCVBUF set on a fallen-back socket reaches
	 * its native socket at its next call, here after the data.) Room that
	 * comes back, as the receiver's ring grows, is filled too: full is no
	 * POLLOUT for 300 ms.
	 */
	ASSERT_EQ(0, sdp_setint(self->cfd, SOL_SOCKET, SO_SNDBUF, 32768));
	fill(out, sizeof(out), 3);
	ASSERT_EQ(0, fcntl(self->cfd, F_SETFL, O_NONBLOCK));
	do {
		while (sent < sizeof(out) &&
		       (n = send(self->cfd, out + sent, sizeof(out) - sent, 0)) > 0)
			sent += n;
	} while (sent < sizeof(out) && (sdp_poll1(self->cfd, POLLOUT, 300) & POLLOUT));
	ASSERT_GT(sizeof(out), sent) TH_LOG("the pipe never filled");
	ASSERT_EQ(0, fcntl(self->cfd, F_SETFL, 0));
	ASSERT_EQ(0, setsockopt(self->cfd, SOL_SOCKET, SO_LINGER, &l, sizeof(l)));
	r.len = sent;
	PROVE();
	ASSERT_EQ(0, pthread_create(&t, NULL, late_reader, &r));
	t0 = sdp_now();
	close(self->cfd);
	self->cfd = -1;
	/*
	 * Over RDMA it lingered until the late reader took the data: what
	 * was left waited for the credits only reading returns. TCP lingers
	 * only until the peer's kernel has acknowledged the data, which 6.12
	 * does before the reader reads: no lower bound holds for TCP.
	 */
	if (variant->sdp && sdp_expected_transport() == SDP_TRANSPORT_RDMA)
		EXPECT_LE(0.4, sdp_now() - t0);
	EXPECT_GT(10.0, sdp_now() - t0);
	pthread_join(t, NULL);
	ASSERT_EQ(sent, r.got);
	EXPECT_EQ(0, memcmp(out, in, sent));
	EXPECT_EQ(0, read(self->sfd, in, 1));
}

TEST_F(pair, so_type_domain_protocol_acceptconn)
{
	EXPECT_EQ(SOCK_STREAM, sdp_getint(self->cfd, SOL_SOCKET, SO_TYPE));
	EXPECT_EQ(IPPROTO_TCP, sdp_getint(self->cfd, SOL_SOCKET, SO_PROTOCOL));
	EXPECT_EQ(self->family, sdp_getint(self->cfd, SOL_SOCKET, SO_DOMAIN));
	EXPECT_EQ(self->family, sdp_getint(self->sfd, SOL_SOCKET, SO_DOMAIN));
	EXPECT_EQ(1, sdp_getint(self->lfd, SOL_SOCKET, SO_ACCEPTCONN));
	EXPECT_EQ(0, sdp_getint(self->cfd, SOL_SOCKET, SO_ACCEPTCONN));
	EXPECT_EQ(0, sdp_getint(self->cfd, SOL_SOCKET, SO_ERROR));
}

TEST_F(pair, so_rcvtimeo)
{
	struct timeval tv = { .tv_usec = 200000 };
	double t0;
	char buf[4];

	ASSERT_EQ(0, setsockopt(self->sfd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
	t0 = sdp_now();
	EXPECT_EQ(-1, recv(self->sfd, buf, sizeof(buf), 0));
	EXPECT_EQ(EAGAIN, errno);
	EXPECT_LE(0.18, sdp_now() - t0);
	EXPECT_GT(1.0, sdp_now() - t0);
}

TEST_F(pair, so_sndtimeo)
{
	struct timeval tv = { .tv_usec = 200000 };
	static char buf[65536];
	double t0 = 0;
	ssize_t n = 0;
	int i;

	ASSERT_EQ(0, setsockopt(self->cfd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)));
	/* Partial sends fill the pipe; the first that cannot copy a byte times out. */
	for (i = 0; i < 100000 && n >= 0; i++) {
		t0 = sdp_now();
		n = send(self->cfd, buf, sizeof(buf), 0);
	}
	EXPECT_EQ(-1, n);
	EXPECT_EQ(EAGAIN, errno);
	EXPECT_LE(0.18, sdp_now() - t0);
	EXPECT_GT(1.0, sdp_now() - t0);
}

/*
 * A receiver that stops reading closes the window (SDP: its credits): the
 * sender's data waits, and the connection stays however long that lasts,
 * until TCP_USER_TIMEOUT bounds the wait: ETIMEDOUT then, as TCP's zero
 * window probes give. (TCP's peer learns nothing; SDP's gets an Abort.)
 */
TEST_F(pair, tcp_user_timeout_bounds_zero_window)
{
	long long timeouts = sdp_stat("TxTimeout");
	static char buf[65536];
	double t0;
	ssize_t n;
	int i;

	EXPECT_EQ(0, sdp_getint(self->cfd, SOL_TCP, TCP_USER_TIMEOUT));
	ASSERT_EQ(0, fcntl(self->cfd, F_SETFL, O_NONBLOCK));
	/* full, and staying so (as in send_fills_then_eagain) */
	for (i = 0; i < 10000; i++) {
		n = send(self->cfd, buf, sizeof(buf), 0);
		if (n < 0 && (errno != EAGAIN ||
			      !(sdp_poll1(self->cfd, POLLOUT, 300) & POLLOUT)))
			break;
	}
	ASSERT_EQ(-1, n);
	ASSERT_EQ(EAGAIN, errno);
	PROVE();
	/* no bound: the data just waits */
	EXPECT_EQ(0, sdp_poll1(self->cfd, POLLOUT, 2000));
	EXPECT_EQ(0, sdp_getint(self->cfd, SOL_SOCKET, SO_ERROR));

	ASSERT_EQ(0, sdp_setint(self->cfd, SOL_TCP, TCP_USER_TIMEOUT, 1000));
	EXPECT_EQ(1000, sdp_getint(self->cfd, SOL_TCP, TCP_USER_TIMEOUT));
	t0 = sdp_now();
	EXPECT_EQ(POLLOUT | POLLERR | POLLHUP,
		  sdp_poll1(self->cfd, POLLOUT, 10000) & (POLLOUT | POLLERR | POLLHUP));
	/* TCP: at its next probe, after the window closed more than 1 s ago */
	EXPECT_GT(8.0, sdp_now() - t0);
	EXPECT_EQ(ETIMEDOUT, sdp_getint(self->cfd, SOL_SOCKET, SO_ERROR));
	EXPECT_EQ(-1, send(self->cfd, buf, 1, MSG_NOSIGNAL));
	EXPECT_EQ(EPIPE, errno);
	if (variant->sdp)
		EXPECT_EQ(SDP_TRANSPORT_RDMA == sdp_expected_transport(),
			  sdp_stat("TxTimeout") > timeouts);
}

TEST_F(pair, so_keepalive_and_tcp_keepidle)
{
	EXPECT_EQ(0, sdp_getint(self->cfd, SOL_SOCKET, SO_KEEPALIVE));
	EXPECT_EQ(0, sdp_setint(self->cfd, SOL_SOCKET, SO_KEEPALIVE, 1));
	EXPECT_EQ(1, sdp_getint(self->cfd, SOL_SOCKET, SO_KEEPALIVE));
	EXPECT_EQ(0, sdp_setint(self->cfd, SOL_TCP, TCP_KEEPIDLE, 30));
	EXPECT_EQ(30, sdp_getint(self->cfd, SOL_TCP, TCP_KEEPIDLE));
	EXPECT_EQ(-EINVAL, sdp_setint(self->cfd, SOL_TCP, TCP_KEEPIDLE, 0));
	EXPECT_EQ(0, sdp_setint(self->cfd, SOL_TCP, TCP_KEEPINTVL, 5));
	EXPECT_EQ(5, sdp_getint(self->cfd, SOL_TCP, TCP_KEEPINTVL));
	EXPECT_EQ(0, sdp_setint(self->cfd, SOL_TCP, TCP_KEEPCNT, 3));
	EXPECT_EQ(3, sdp_getint(self->cfd, SOL_TCP, TCP_KEEPCNT));
}

TEST_F(pair, tcp_nodelay)
{
	char buf[4];

	EXPECT_EQ(0, sdp_getint(self->cfd, SOL_TCP, TCP_NODELAY));
	EXPECT_EQ(0, sdp_setint(self->cfd, SOL_TCP, TCP_NODELAY, 1));
	EXPECT_EQ(1, sdp_getint(self->cfd, SOL_TCP, TCP_NODELAY));
	/* small writes go at once with NODELAY */
	ASSERT_EQ(1, send(self->cfd, "a", 1, 0));
	ASSERT_EQ(1, send(self->cfd, "b", 1, 0));
	ASSERT_EQ(2, recv(self->sfd, buf, 2, MSG_WAITALL));
}

TEST_F(pair, tcp_cork)
{
	char buf[16];

	EXPECT_EQ(0, sdp_setint(self->cfd, SOL_TCP, TCP_CORK, 1));
	EXPECT_EQ(1, sdp_getint(self->cfd, SOL_TCP, TCP_CORK));
	/* The first small write with nothing in flight waits while corked. */
	ASSERT_EQ(5, send(self->cfd, "corky", 5, 0));
	EXPECT_EQ(0, sdp_poll1(self->sfd, POLLIN, 50));
	EXPECT_EQ(0, sdp_setint(self->cfd, SOL_TCP, TCP_CORK, 0));
	ASSERT_NE(0, sdp_poll1(self->sfd, POLLIN, 2000) & POLLIN);
	EXPECT_EQ(5, recv(self->sfd, buf, sizeof(buf), 0));
}

TEST_F(pair, cork_expires)
{
	char buf[16];
	double t0 = sdp_now();

	EXPECT_EQ(0, sdp_setint(self->cfd, SOL_TCP, TCP_CORK, 1));
	ASSERT_EQ(3, send(self->cfd, "abc", 3, 0));
	/* TCP holds corked data 200 ms at most. */
	ASSERT_NE(0, sdp_poll1(self->sfd, POLLIN, 3000) & POLLIN);
	EXPECT_LE(0.15, sdp_now() - t0);
	EXPECT_GT(1.0, sdp_now() - t0);
	EXPECT_EQ(3, recv(self->sfd, buf, sizeof(buf), 0));
}

TEST_F(pair, msg_more)
{
	char buf[16];

	ASSERT_EQ(3, send(self->cfd, "abc", 3, MSG_MORE));
	EXPECT_EQ(0, sdp_poll1(self->sfd, POLLIN, 50));
	ASSERT_EQ(3, send(self->cfd, "def", 3, 0));
	ASSERT_EQ(6, recv(self->sfd, buf, 6, MSG_WAITALL));
	EXPECT_EQ(0, memcmp(buf, "abcdef", 6));
}

/* TCP_MAXSEG is the payload a segment (for SDP: a message) carries. */
TEST_F(pair, tcp_maxseg_positive)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);
	struct sdp_info info;

	EXPECT_LT(0, sdp_getint(self->cfd, SOL_TCP, TCP_MAXSEG));
	EXPECT_LT(0, sdp_getint(self->sfd, SOL_TCP, TCP_MAXSEG));
	ASSERT_EQ(0, getsockopt(self->cfd, SOL_TCP, TCP_INFO, &ti, &len));
	EXPECT_EQ(ti.tcpi_snd_mss, sdp_getint(self->cfd, SOL_TCP, TCP_MAXSEG));
	if (variant->sdp && sdp_expected_transport() == SDP_TRANSPORT_RDMA) {
		ASSERT_EQ(0, sdp_info(self->cfd, &info));
		EXPECT_EQ(info.snd_size - 16, sdp_getint(self->cfd, SOL_TCP, TCP_MAXSEG));
	}
}

TEST_F(pair, tcp_info_state)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	static char buf[3000];

	ASSERT_EQ(0, getsockopt(self->cfd, SOL_TCP, TCP_INFO, &ti, &len));
	EXPECT_EQ(TCP_ESTABLISHED, ti.tcpi_state);
	ASSERT_EQ(0, getsockopt(self->lfd, SOL_TCP, TCP_INFO, &ti, &len));
	EXPECT_EQ(TCP_LISTEN, ti.tcpi_state);
	/* the bytes a connection moved, as TCP counts them */
	ASSERT_EQ(sizeof(buf), send(self->cfd, buf, sizeof(buf), 0));
	ASSERT_EQ(sizeof(buf), sdp_read_full(self->sfd, buf, sizeof(buf)));
	ASSERT_EQ(0, getsockopt(self->sfd, SOL_TCP, TCP_INFO, &ti, &len));
	EXPECT_EQ(sizeof(buf), ti.tcpi_bytes_received);
	/* acknowledged: the sender has its round trip (6.12's rxe completes later) */
	for (int i = 0, v = 1; i < 500 && v; i++) {
		ASSERT_EQ(0, ioctl(self->cfd, SIOCOUTQ, &v));
		if (v)
			usleep(10000);
	}
	ASSERT_EQ(0, getsockopt(self->cfd, SOL_TCP, TCP_INFO, &ti, &len));
	EXPECT_EQ(sizeof(buf), ti.tcpi_bytes_sent);
	/* an RTT estimate from the round trips made, nothing retransmitted */
	EXPECT_LT(0, ti.tcpi_rtt);
	EXPECT_GT(5000000u, ti.tcpi_rtt);
	EXPECT_LT(0, ti.tcpi_min_rtt);
	EXPECT_GE(ti.tcpi_rtt + ti.tcpi_rttvar, ti.tcpi_min_rtt);
	EXPECT_EQ(0, ti.tcpi_retransmits);
	EXPECT_EQ(0, ti.tcpi_total_retrans);
	EXPECT_LT(0, ti.tcpi_snd_cwnd);
}

TEST_F(pair, fionread_siocinq_siocoutq)
{
	int v = -1;

	ASSERT_EQ(0, ioctl(self->sfd, FIONREAD, &v));
	EXPECT_EQ(0, v);
	ASSERT_EQ(100, send(self->cfd, "0123456789012345678901234567890123456789"
			    "0123456789012345678901234567890123456789"
			    "01234567890123456789", 100, 0));
	for (int i = 0; i < 500 && v != 100; i++) {
		usleep(10000);
		ASSERT_EQ(0, ioctl(self->sfd, FIONREAD, &v));
	}
	EXPECT_EQ(100, v);
	ASSERT_EQ(0, ioctl(self->sfd, SIOCINQ, &v));
	EXPECT_EQ(100, v);
	for (int i = 0; i < 500; i++) {
		ASSERT_EQ(0, ioctl(self->cfd, SIOCOUTQ, &v));
		if (!v)
			break;
		usleep(10000);
	}
	EXPECT_EQ(0, v);
	EXPECT_EQ(-1, ioctl(self->lfd, SIOCINQ, &v));
	EXPECT_EQ(EINVAL, errno);
}

/* With the peer not reading, what the sender holds shows in SIOCOUTQ. */
TEST_F(pair, siocoutq_counts_unsent_bytes)
{
	static char buf[65536], in[65536];
	size_t sent = 0, got = 0;
	int v = -1, nsd = -1;
	ssize_t n;

	ASSERT_EQ(0, fcntl(self->cfd, F_SETFL, O_NONBLOCK));
	while ((n = send(self->cfd, buf, sizeof(buf), 0)) > 0)
		sent += n;
	ASSERT_EQ(0, ioctl(self->cfd, SIOCOUTQ, &v));
	ASSERT_EQ(0, ioctl(self->cfd, SIOCOUTQNSD, &nsd));
	EXPECT_LT(0, v);
	EXPECT_GE((int)sent, v);
	EXPECT_LE(0, nsd);
	EXPECT_GE(v, nsd);
	while (got < sent) {
		n = recv(self->sfd, in, sizeof(in), 0);
		ASSERT_LT(0, n);
		got += n;
	}
	for (int i = 0; i < 500 && v; i++) {
		usleep(10000);
		ASSERT_EQ(0, ioctl(self->cfd, SIOCOUTQ, &v));
	}
	EXPECT_EQ(0, v);
	ASSERT_EQ(0, ioctl(self->cfd, SIOCOUTQNSD, &nsd));
	EXPECT_EQ(0, nsd);
}

/*
 * Page paths: sendfile(), splice() and vmsplice() into the socket, splice()
 * out of it, checked byte for byte. Byte @pos of a test file is pat(pos):
 * each page differs, so a page lost, repeated or misplaced shows.
 */
static unsigned char pat(size_t pos)
{
	return pos * 31 + (pos >> 12) + 7;
}

/* An unlinked file of @len bytes of pat(). */
static int pattern_file(size_t len)
{
	static unsigned char chunk[1 << 16];
	char path[] = "/tmp/sdp_pagesXXXXXX";
	int fd = mkstemp(path);

	if (fd < 0)
		return -1;
	unlink(path);
	for (size_t done = 0; done < len; ) {
		size_t n = len - done < sizeof(chunk) ? len - done : sizeof(chunk);

		for (size_t k = 0; k < n; k++)
			chunk[k] = pat(done + k);
		if (pwrite(fd, chunk, n, done) != (ssize_t)n) {
			close(fd);
			return -1;
		}
		done += n;
	}
	return fd;
}

/* Reads @len bytes that must be pat(@start...), by read() or via a pipe. */
struct sink {
	pthread_t thread;
	int fd;
	bool spliced;
	bool flipped_too;	/* ~pat() is right too (a file being rewritten) */
	size_t start, len, got, flipped;
	long long bad;		/* first wrong position, or -1 */
};

static void *sink_run(void *arg)
{
	static __thread unsigned char buf[1 << 16];
	struct sink *k = arg;
	int pfd[2] = { -1, -1 };

	if (k->spliced && pipe(pfd))
		return NULL;
	while (k->got < k->len) {
		size_t want = k->len - k->got < sizeof(buf) ? k->len - k->got : sizeof(buf);
		ssize_t n;

		if (k->spliced) {
			n = splice(k->fd, NULL, pfd[1], NULL, want, SPLICE_F_MOVE);
			if (n > 0)
				n = sdp_read_full(pfd[0], buf, n);
		} else {
			n = read(k->fd, buf, want);
		}
		if (n <= 0)
			break;
		for (ssize_t i = 0; i < n && k->bad < 0; i++) {
			unsigned char want = pat(k->start + k->got + i);

			if (buf[i] == want)
				continue;
			if (k->flipped_too && buf[i] == (unsigned char)~want)
				k->flipped++;
			else
				k->bad = k->start + k->got + i;
		}
		k->got += n;
	}
	if (pfd[0] >= 0) {
		close(pfd[0]);
		close(pfd[1]);
	}
	return NULL;
}

static int sink_start(struct sink *k, int fd, size_t start, size_t len, bool spliced)
{
	*k = (struct sink){ .fd = fd, .start = start, .len = len, .spliced = spliced,
			    .bad = -1 };
	return pthread_create(&k->thread, NULL, sink_run, k);
}

/* Joins the reader: every byte arrived, each the right one (@what: which). */
#define EXPECT_SINK_INTACT(k, what, ...) do {				\
	pthread_join((k)->thread, NULL);				\
	EXPECT_EQ((k)->len, (k)->got) TH_LOG(what, ##__VA_ARGS__);	\
	EXPECT_EQ(-1, (k)->bad)						\
		TH_LOG("wrong byte at %lld: " what, (k)->bad, ##__VA_ARGS__); \
} while (0)

/* Waits out EAGAIN on a non-blocking socket; false if it never clears. */
static bool wait_out(int fd, ssize_t n)
{
	return n >= 0 || (errno == EAGAIN && (sdp_poll1(fd, POLLOUT, 10000) & POLLOUT));
}

/* sendfile() @len bytes from @off, through partial sends; bytes sent. */
static size_t sendfile_all(int sock, int file, off_t off, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = sendfile(sock, file, &off, len - done);

		if (!wait_out(sock, n) || !n)
			break;
		if (n > 0)
			done += n;
	}
	return done;
}

/* file -> pipe -> socket with splice(), SPLICE_F_MORE until the last. */
static size_t splice_all(int sock, int file, off_t off, size_t len)
{
	size_t done = 0;
	int pfd[2];

	if (pipe(pfd))
		return 0;
	while (done < len) {
		ssize_t in = splice(file, &off, pfd[1], NULL, len - done,
				    SPLICE_F_MOVE | SPLICE_F_MORE);

		if (in <= 0)
			break;
		while (in > 0) {
			unsigned int more = done + in < len ? SPLICE_F_MORE : 0;
			ssize_t n = splice(pfd[0], NULL, sock, NULL, in, SPLICE_F_MOVE | more);

			if (!wait_out(sock, n) || !n)
				goto out;
			if (n > 0) {
				in -= n;
				done += n;
			}
		}
	}
out:
	close(pfd[0]);
	close(pfd[1]);
	return done;
}

/*
 * Uncorked while the receiver's window (SDP: its credits) is full, corked
 * again at once, and the cork's 200 ms pass before the window opens: the
 * partial segment at the end still goes once it does (TCP: the probe timer
 * sends it when all before it is acked), not at the next uncork.
 */
TEST_F_TIMEOUT(pair, corked_tail_goes_after_a_full_window, 60)
{
	static unsigned char out[1 << 20], in[65536];
	int mss = sdp_getint(self->cfd, SOL_TCP, TCP_MAXSEG), unsent = 0, held = 0;
	size_t sent = 0, got = 0;
	double t0;
	ssize_t n;

	ASSERT_LT(0, mss);
	for (size_t i = 0; i < sizeof(out); i++)
		out[i] = pat(i);
	ASSERT_EQ(0, sdp_setint(self->cfd, SOL_TCP, TCP_CORK, 1));
	ASSERT_EQ(0, fcntl(self->cfd, F_SETFL, O_NONBLOCK));
	/*
	 * Nothing read: full segments queue behind the window, a partial
	 * last; until the window stops growing on its own (SDP's receive
	 * ring grows with use, TCP's window as data arrives).
	 */
	for (int i = 0; i < 20 && held <= 2 * mss; i++) {
		while (unsent <= 2 * mss && sent + 997 < sizeof(out) &&
		       (n = send(self->cfd, out + sent, 997, 0)) > 0) {
			sent += n;
			ASSERT_EQ(0, ioctl(self->cfd, SIOCOUTQNSD, &unsent));
		}
		usleep(300000);
		ASSERT_EQ(0, ioctl(self->cfd, SIOCOUTQNSD, &held));
		unsent = held;
	}
	if (sent % mss == 0)
		ASSERT_EQ(1, send(self->cfd, out + sent++, 1, 0));
	ASSERT_LT(2 * mss, held) TH_LOG("%zu B taken, %d unsent", sent, held);
	ASSERT_EQ(0, sdp_setint(self->cfd, SOL_TCP, TCP_CORK, 0));
	ASSERT_EQ(0, sdp_setint(self->cfd, SOL_TCP, TCP_CORK, 1));
	usleep(300000);
	ASSERT_EQ(0, ioctl(self->cfd, SIOCOUTQNSD, &held));
	/* the uncork could not send it all, nor the cork's 200 ms since */
	ASSERT_LT(0, held);
	t0 = sdp_now();
	while (got < sent && (sdp_poll1(self->sfd, POLLIN, 5000) & POLLIN) &&
	       (n = recv(self->sfd, in, sizeof(in), MSG_DONTWAIT)) > 0) {
		EXPECT_EQ(0, memcmp(in, out + got, n)) TH_LOG("at %zu", got);
		got += n;
	}
	ASSERT_EQ(0, ioctl(self->cfd, SIOCOUTQNSD, &unsent));
	EXPECT_EQ(sent, got) TH_LOG("%zu of %zu B arrived; %d unsent", got, sent, unsent);
	TH_LOG("%zu B, %d B of them unsent at the uncork; reading took %.2f s",
	       sent, held, sdp_now() - t0);
	EXPECT_RDMA_RX(self->sfd, got);
}

/*
 * sendfile() of sizes from a byte to a MiB and a bit, at page-unaligned
 * offsets, counts ending mid-page; plain, under TCP_CORK, with TCP_NODELAY,
 * and non-blocking (partial sends, EAGAIN in the middle of a page).
 */
TEST_F_TIMEOUT(pair, sendfile_sizes_offsets_and_modes, 300)
{
	static const size_t sizes[] = { 1, 4095, 4096, 4097, 65537, (1 << 20) + 3 };
	static const off_t offs[] = { 0, 1, 4095 };
	/* a stall fails saying where, before the harness kills the case */
	struct timeval tv = { .tv_sec = 60 };
	size_t total = 0;
	struct sink k;
	int file = pattern_file((1 << 20) + 8192);

	ASSERT_LE(0, file);
	ASSERT_EQ(0, setsockopt(self->sfd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
	ASSERT_EQ(0, setsockopt(self->cfd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)));
	for (int mode = 0; mode < 4; mode++) {
		if (mode == 1)
			ASSERT_EQ(0, sdp_setint(self->cfd, SOL_TCP, TCP_CORK, 1));
		if (mode == 2)
			ASSERT_EQ(0, sdp_setint(self->cfd, SOL_TCP, TCP_NODELAY, 1));
		if (mode == 3)
			ASSERT_EQ(0, fcntl(self->cfd, F_SETFL, O_NONBLOCK));
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
			for (size_t j = 0; j < sizeof(offs) / sizeof(offs[0]); j++) {
				ASSERT_EQ(0, sink_start(&k, self->sfd, offs[j], sizes[i], false));
				EXPECT_EQ(sizes[i], sendfile_all(self->cfd, file, offs[j], sizes[i]));
				if (mode == 1) {
					/* uncorking sends the rest */
					ASSERT_EQ(0, sdp_setint(self->cfd, SOL_TCP, TCP_CORK, 0));
					ASSERT_EQ(0, sdp_setint(self->cfd, SOL_TCP, TCP_CORK, 1));
				}
				EXPECT_SINK_INTACT(&k, "mode %d size %zu offset %lld",
						   mode, sizes[i], (long long)offs[j]);
				total += sizes[i];
			}
	}
	close(file);
	EXPECT_RDMA_RX(self->sfd, total);
}

/* 64 MiB by sendfile() from an unaligned offset, ending mid-page. */
TEST_F_TIMEOUT(pair, sendfile_64mib, 600)
{
	size_t len = (64 << 20) - 5;
	struct sink k;
	int file = pattern_file((64 << 20) + 8192);

	ASSERT_LE(0, file);
	ASSERT_EQ(0, sink_start(&k, self->sfd, 4095, len, false));
	EXPECT_EQ(len, sendfile_all(self->cfd, file, 4095, len));
	EXPECT_SINK_INTACT(&k, "all");
	close(file);
	EXPECT_RDMA_RX(self->sfd, len);
}

/* Rewrites a file's pages with ~pat() and back until told to stop. */
struct rewriter {
	pthread_t thread;
	int fd;
	size_t len;
	volatile bool stop;
	unsigned long rounds;
};

static void *rewriter_run(void *arg)
{
	static __thread unsigned char page[4096];
	struct rewriter *w = arg;

	while (!w->stop) {
		bool flip = w->rounds++ & 1;

		/* from the end backwards, so it crosses the sender's position */
		for (size_t off = w->len & ~4095UL; !w->stop; off -= 4096) {
			size_t n = w->len - off < 4096 ? w->len - off : 4096;

			for (size_t k = 0; k < n; k++)
				page[k] = flip ? ~pat(off + k) : pat(off + k);
			if (pwrite(w->fd, page, n, off) != (ssize_t)n || !off)
				break;
		}
	}
	return NULL;
}

/*
 * sendfile() while another thread rewrites the file in the page cache:
 * which version of a byte is sent is not defined (TCP may send a page as it
 * is at transmission), but every byte is one of them, none lost, repeated
 * or misplaced, and the count is exact.
 */
TEST_F_TIMEOUT(pair, sendfile_while_the_file_is_rewritten, 300)
{
	size_t len = (16 << 20) + 3;
	struct rewriter w = { .len = (16 << 20) + 8192 };
	struct sink k;

	w.fd = pattern_file(w.len);
	ASSERT_LE(0, w.fd);
	ASSERT_EQ(0, sink_start(&k, self->sfd, 1, len, false));
	k.flipped_too = true;
	ASSERT_EQ(0, pthread_create(&w.thread, NULL, rewriter_run, &w));
	EXPECT_EQ(len, sendfile_all(self->cfd, w.fd, 1, len));
	w.stop = true;
	pthread_join(w.thread, NULL);
	EXPECT_SINK_INTACT(&k, "rewritten %lu times", w.rounds);
	TH_LOG("%zu of %zu bytes as rewritten, the file rewritten %lu times",
	       k.flipped, len, w.rounds);
	close(w.fd);
	EXPECT_RDMA_RX(self->sfd, len);
}

/*
 * splice(): file -> pipe -> socket on the sending side, socket -> pipe on
 * the receiving side (splice_read), with and without TCP_CORK.
 */
TEST_F_TIMEOUT(pair, splice_file_to_socket_to_pipe, 300)
{
	static const size_t sizes[] = { 1, 4097, (1 << 20) + 3 };
	size_t total = 0;
	struct sink k;
	int file = pattern_file((1 << 20) + 8192);

	ASSERT_LE(0, file);
	for (int cork = 0; cork < 2; cork++) {
		ASSERT_EQ(0, sdp_setint(self->cfd, SOL_TCP, TCP_CORK, cork));
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			ASSERT_EQ(0, sink_start(&k, self->sfd, 1, sizes[i], true));
			EXPECT_EQ(sizes[i], splice_all(self->cfd, file, 1, sizes[i]));
			ASSERT_EQ(0, sdp_setint(self->cfd, SOL_TCP, TCP_CORK, 0));
			ASSERT_EQ(0, sdp_setint(self->cfd, SOL_TCP, TCP_CORK, cork));
			EXPECT_SINK_INTACT(&k, "cork %d size %zu", cork, sizes[i]);
			total += sizes[i];
		}
	}
	close(file);
	EXPECT_RDMA_RX(self->sfd, total);
}

/* vmsplice() of user memory into a pipe, spliced into the socket. */
TEST_F_TIMEOUT(pair, vmsplice_to_socket, 300)
{
	static unsigned char mem[(1 << 20) + 5];
	size_t len = sizeof(mem) - 1, done = 0;
	struct sink k;
	int pfd[2];

	for (size_t i = 0; i < sizeof(mem); i++)
		mem[i] = pat(i);
	ASSERT_EQ(0, pipe(pfd));
	ASSERT_EQ(0, sink_start(&k, self->sfd, 1, len, false));
	while (done < len) {
		/* from an unaligned address, in odd pieces */
		struct iovec iov = { mem + 1 + done, len - done < 20000 ? len - done : 20000 };
		ssize_t in = vmsplice(pfd[1], &iov, 1, 0);

		ASSERT_LT(0, in);
		while (in > 0) {
			ssize_t n = splice(pfd[0], NULL, self->cfd, NULL, in, SPLICE_F_MORE);

			ASSERT_LT(0, n);
			in -= n;
			done += n;
		}
	}
	EXPECT_SINK_INTACT(&k, "all");
	close(pfd[0]);
	close(pfd[1]);
	EXPECT_RDMA_RX(self->sfd, len);
}

/* Urgent data (MSG_OOB): one byte, the mark, SIGURG and POLLPRI, as TCP. */
static volatile sig_atomic_t sigurgs;

static void on_sigurg(int sig)
{
	sigurgs++;
}

/* SIGURG for @fd comes to us, counted from zero. */
static void urg_watch(int fd)
{
	signal(SIGURG, on_sigurg);
	sigurgs = 0;
	fcntl(fd, F_SETOWN, getpid());
}

static int ioctl_int(int fd, unsigned long req)
{
	int v = -1;

	return ioctl(fd, req, &v) ? -errno : v;
}

/* recv(MSG_OOB | @flags) of one byte: the byte, or -errno; checks MSG_OOB. */
static int recv_oob(int fd, int flags)
{
	unsigned char c;
	struct iovec iov = { &c, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n = recvmsg(fd, &m, MSG_OOB | flags);

	if (n < 0)
		return -errno;
	return n == 1 && (m.msg_flags & MSG_OOB) ? c : -1000;
}

TEST_F(pair, urgent_byte_out_of_band)
{
	char in[100];

	urg_watch(self->sfd);
	EXPECT_EQ(-EINVAL, recv_oob(self->sfd, 0));
	EXPECT_EQ(0, ioctl_int(self->sfd, SIOCATMARK));
	ASSERT_EQ(3, send(self->cfd, "abc", 3, 0));
	ASSERT_EQ(3, send(self->cfd, "xyZ", 3, MSG_OOB));
	ASSERT_EQ(3, send(self->cfd, "def", 3, 0));
	ASSERT_NE(0, sdp_poll1(self->sfd, POLLPRI, 5000) & POLLPRI);
	EXPECT_EQ(1, sigurgs);
	/* the urgent byte stays out of the count, which ends at the mark */
	EXPECT_EQ(5, ioctl_int(self->sfd, SIOCINQ));
	/* reads stop at the mark, even one that would wait for more */
	ASSERT_EQ(5, recv(self->sfd, in, sizeof(in), MSG_PEEK));
	EXPECT_EQ(0, memcmp(in, "abcxy", 5));
	ASSERT_EQ(5, recv(self->sfd, in, sizeof(in), MSG_WAITALL));
	EXPECT_EQ(0, memcmp(in, "abcxy", 5));
	EXPECT_EQ(1, ioctl_int(self->sfd, SIOCATMARK));
	EXPECT_EQ('Z', recv_oob(self->sfd, MSG_PEEK));
	EXPECT_NE(0, sdp_poll1(self->sfd, POLLPRI, 0) & POLLPRI);
	EXPECT_EQ('Z', recv_oob(self->sfd, 0));
	EXPECT_EQ(0, sdp_poll1(self->sfd, POLLPRI, 0) & POLLPRI);
	EXPECT_EQ(-EINVAL, recv_oob(self->sfd, 0));
	EXPECT_EQ(1, ioctl_int(self->sfd, SIOCATMARK));
	EXPECT_EQ(0, ioctl_int(self->sfd, SIOCINQ));
	/* and the stream goes on without it */
	ASSERT_EQ(3, recv(self->sfd, in, 3, MSG_WAITALL));
	EXPECT_EQ(0, memcmp(in, "def", 3));
	EXPECT_EQ(0, ioctl_int(self->sfd, SIOCATMARK));
	EXPECT_EQ(1, sigurgs);
	EXPECT_RDMA_RX(self->sfd, 9);
}

/* SO_OOBINLINE: the urgent byte stays in the stream, at the mark. */
TEST_F(pair, urgent_byte_inline)
{
	char in[100];

	ASSERT_EQ(0, sdp_setint(self->sfd, SOL_SOCKET, SO_OOBINLINE, 1));
	urg_watch(self->sfd);
	ASSERT_EQ(2, send(self->cfd, "ab", 2, 0));
	ASSERT_EQ(2, send(self->cfd, "cD", 2, MSG_OOB));
	ASSERT_EQ(2, send(self->cfd, "ef", 2, 0));
	ASSERT_NE(0, sdp_poll1(self->sfd, POLLPRI, 5000) & POLLPRI);
	EXPECT_EQ(-EINVAL, recv_oob(self->sfd, 0));
	ASSERT_EQ(3, recv(self->sfd, in, sizeof(in), MSG_WAITALL));
	EXPECT_EQ(0, memcmp(in, "abc", 3));
	EXPECT_EQ(1, ioctl_int(self->sfd, SIOCATMARK));
	ASSERT_EQ(3, recv(self->sfd, in, 3, MSG_WAITALL));
	EXPECT_EQ(0, memcmp(in, "Def", 3));
	EXPECT_EQ(0, ioctl_int(self->sfd, SIOCATMARK));
	EXPECT_EQ(1, sigurgs);
	EXPECT_RDMA_RX(self->sfd, 6);
}

/* A plain read at the mark passes over the urgent byte: then it is gone. */
TEST_F(pair, urgent_byte_passed_by_a_read_is_gone)
{
	char in[100];

	ASSERT_EQ(2, send(self->cfd, "aB", 2, MSG_OOB));
	ASSERT_NE(0, sdp_poll1(self->sfd, POLLPRI, 5000) & POLLPRI);
	ASSERT_EQ(1, recv(self->sfd, in, sizeof(in), 0));
	EXPECT_EQ('a', in[0]);
	EXPECT_EQ(1, ioctl_int(self->sfd, SIOCATMARK));
	EXPECT_EQ(0, sdp_poll1(self->sfd, POLLIN, 0) & POLLIN);
	EXPECT_EQ(-1, recv(self->sfd, in, sizeof(in), MSG_DONTWAIT));
	EXPECT_EQ(EAGAIN, errno);
	EXPECT_EQ(-EINVAL, recv_oob(self->sfd, 0));
	EXPECT_EQ(0, ioctl_int(self->sfd, SIOCATMARK));
	EXPECT_EQ(0, sdp_poll1(self->sfd, POLLPRI, 0) & POLLPRI);
	ASSERT_EQ(1, send(self->cfd, "c", 1, 0));
	ASSERT_EQ(1, recv(self->sfd, in, sizeof(in), 0));
	EXPECT_EQ('c', in[0]);
}

/* A newer urgent byte replaces the unread one, which becomes plain data. */
TEST_F(pair, urgent_byte_replaced_by_a_newer_one)
{
	char in[100];

	urg_watch(self->sfd);
	ASSERT_EQ(2, send(self->cfd, "aB", 2, MSG_OOB));
	ASSERT_NE(0, sdp_poll1(self->sfd, POLLPRI, 5000) & POLLPRI);
	ASSERT_EQ(2, send(self->cfd, "cD", 2, MSG_OOB));
	for (int i = 0; i < 500 && sigurgs < 2; i++)
		usleep(10000);
	EXPECT_EQ(2, sigurgs);
	ASSERT_EQ(3, recv(self->sfd, in, sizeof(in), MSG_WAITALL));
	EXPECT_EQ(0, memcmp(in, "aBc", 3));
	EXPECT_EQ('D', recv_oob(self->sfd, 0));
	EXPECT_RDMA_RX(self->sfd, 4);
}

/* @fd sends @what with @flags after @ms, from a child process. */
static pid_t send_later(int fd, const char *what, int flags, int ms)
{
	pid_t pid = fork();

	if (!pid) {
		usleep(ms * 1000);
		_exit(send(fd, what, strlen(what), flags) == (ssize_t)strlen(what) ? 0 : 1);
	}
	return pid;
}

static int child_status(pid_t pid)
{
	int st;

	return waitpid(pid, &st, 0) == pid && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* A read that has data and waits for more ends at an urgent mark that comes. */
TEST_F(pair, urgent_mark_ends_a_waiting_read)
{
	struct timeval tv = { .tv_sec = 10 };
	char in[100];
	pid_t pid;

	ASSERT_EQ(0, setsockopt(self->sfd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
	ASSERT_EQ(3, send(self->cfd, "abc", 3, 0));
	pid = send_later(self->cfd, "U", MSG_OOB, 300);
	ASSERT_EQ(3, recv(self->sfd, in, sizeof(in), MSG_WAITALL));
	EXPECT_EQ(0, memcmp(in, "abc", 3));
	EXPECT_EQ(0, child_status(pid));
	ASSERT_NE(0, sdp_poll1(self->sfd, POLLPRI, 5000) & POLLPRI);
	EXPECT_EQ(1, ioctl_int(self->sfd, SIOCATMARK));
	EXPECT_EQ('U', recv_oob(self->sfd, 0));
	EXPECT_RDMA_RX(self->sfd, 4);
}

/*
 * With the last urgent byte read and still at the mark, a new one-byte
 * urgent message (which drops the old byte) wakes a poller with POLLPRI.
 */
TEST_F(pair, urgent_byte_after_a_read_one_wakes_poll)
{
	char in[8];
	pid_t pid;

	ASSERT_EQ(1, send(self->cfd, "A", 1, MSG_OOB));
	ASSERT_NE(0, sdp_poll1(self->sfd, POLLPRI, 5000) & POLLPRI);
	EXPECT_EQ('A', recv_oob(self->sfd, 0));
	EXPECT_EQ(0, sdp_poll1(self->sfd, POLLIN | POLLPRI, 0));
	pid = send_later(self->cfd, "!", MSG_OOB, 300);
	EXPECT_NE(0, sdp_poll1(self->sfd, POLLIN | POLLPRI, 5000) & POLLPRI);
	EXPECT_EQ(0, child_status(pid));
	EXPECT_EQ('!', recv_oob(self->sfd, 0));
	EXPECT_EQ(-1, recv(self->sfd, in, sizeof(in), MSG_DONTWAIT));
	EXPECT_EQ(EAGAIN, errno);
	EXPECT_RDMA_RX(self->sfd, 2);
}

/*
 * telnet's "send synch": a one-byte urgent send, then plain data. The
 * reader, which cannot read the urgent byte in its way, must still get the
 * data after it (over SDP the byte holds a whole receive buffer).
 */
TEST_F(pair, urgent_byte_alone_does_not_hold_up_the_data)
{
	char in[16];

	ASSERT_EQ(5, send(self->cfd, "hello", 5, 0));
	ASSERT_EQ(5, sdp_read_full(self->sfd, in, 5));
	ASSERT_EQ(1, send(self->cfd, "\377", 1, MSG_OOB));
	ASSERT_EQ(1, send(self->cfd, "\362", 1, 0));
	ASSERT_EQ(3, send(self->cfd, "bye", 3, 0));
	ASSERT_NE(0, sdp_poll1(self->sfd, POLLIN, 5000) & POLLIN);
	ASSERT_EQ(4, sdp_read_full(self->sfd, in, 4));
	EXPECT_EQ(0, memcmp(in, "\362bye", 4));
	EXPECT_RDMA_RX(self->sfd, 10);
}

/* SO_OOBINLINE set later makes the urgent byte at the mark readable. */
TEST_F(pair, urgent_byte_readable_once_inline)
{
	char in[8];

	ASSERT_EQ(1, send(self->cfd, "Z", 1, MSG_OOB));
	ASSERT_NE(0, sdp_poll1(self->sfd, POLLPRI, 5000) & POLLPRI);
	EXPECT_EQ(0, sdp_poll1(self->sfd, POLLIN, 0) & POLLIN);
	ASSERT_EQ(0, sdp_setint(self->sfd, SOL_SOCKET, SO_OOBINLINE, 1));
	EXPECT_NE(0, sdp_poll1(self->sfd, POLLIN, 0) & POLLIN);
	ASSERT_EQ(1, recv(self->sfd, in, sizeof(in), 0));
	EXPECT_EQ('Z', in[0]);
	EXPECT_RDMA_RX(self->sfd, 1);
}

/*
 * The urgent notice outruns flow control: with the receiver's window (SDP:
 * its buffers) full, SIGURG still comes, and MSG_OOB says "not yet" until
 * the byte itself arrives, after the data before it has been read.
 */
TEST_F(pair, urgent_signalled_past_a_full_window)
{
	static char out[1024], in[48 << 10];
	struct timeval tv = { .tv_sec = 10 };
	struct sockaddr_storage ss;
	socklen_t len;
	int l, c, s;

	l = socket(self->family, SOCK_STREAM, 0);
	ASSERT_LE(0, l);
	ASSERT_EQ(0, sdp_setint(l, SOL_SOCKET, SO_RCVBUF, 2048));
	len = sdp_addr(&ss, variant->ip, 0);
	ASSERT_EQ(0, bind(l, (struct sockaddr *)&ss, len));
	ASSERT_EQ(0, listen(l, 1));
	ASSERT_EQ(0, getsockname(l, (struct sockaddr *)&ss, &len));
	c = socket(self->family, SOCK_STREAM, 0);
	ASSERT_LE(0, c);
	ASSERT_EQ(0, sdp_setint(c, SOL_SOCKET, SO_SNDBUF, 1 << 20));
	ASSERT_EQ(0, sdp_setint(c, SOL_TCP, TCP_NODELAY, 1));
	ASSERT_EQ(0, connect(c, (struct sockaddr *)&ss, len));
	s = accept(l, NULL, NULL);
	ASSERT_LE(0, s);
	urg_watch(s);
	/* 48 sends of 1 KiB: more than the window, more messages than buffers */
	for (int i = 0; i < 48; i++) {
		fill(out, sizeof(out), i);
		ASSERT_EQ(sizeof(out), send(c, out, sizeof(out), MSG_DONTWAIT));
	}
	/* two: the second's mark replaces the first's, still unsent */
	ASSERT_EQ(1, send(c, "!", 1, MSG_OOB | MSG_DONTWAIT));
	ASSERT_EQ(1, send(c, "?", 1, MSG_OOB | MSG_DONTWAIT));
	for (int i = 0; i < 500 && !sigurgs; i++)
		usleep(10000);
	EXPECT_EQ(1, sigurgs);
	EXPECT_EQ(-EAGAIN, recv_oob(s, 0));
	EXPECT_EQ(0, ioctl_int(s, SIOCATMARK));
	ASSERT_EQ(0, setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
	ASSERT_EQ(sizeof(in), sdp_read_full(s, in, sizeof(in)));
	for (int i = 0; i < 48; i++) {
		fill(out, sizeof(out), i);
		EXPECT_EQ(0, memcmp(in + i * sizeof(out), out, sizeof(out)));
	}
	ASSERT_EQ(1, recv(s, in, 1, 0));
	EXPECT_EQ('!', in[0]);
	ASSERT_NE(0, sdp_poll1(s, POLLPRI, 5000) & POLLPRI);
	EXPECT_EQ(1, ioctl_int(s, SIOCATMARK));
	EXPECT_EQ('?', recv_oob(s, 0));
	EXPECT_EQ(1, sigurgs);
	EXPECT_RDMA_RX(s, sizeof(in) + 2);
	close(c);
	close(s);
	close(l);
}

TEST_F(pair, getsockname_getpeername)
{
	struct sockaddr_storage a, b, l;
	socklen_t alen = sizeof(a), blen = sizeof(b), llen = sizeof(l);
	int fam = strchr(variant->ip, ':') ? AF_INET6 : AF_INET;

	ASSERT_EQ(0, getsockname(self->cfd, (struct sockaddr *)&a, &alen));
	ASSERT_EQ(0, getpeername(self->sfd, (struct sockaddr *)&b, &blen));
	EXPECT_EQ(fam, a.ss_family);
	EXPECT_EQ(fam, b.ss_family);
	EXPECT_EQ(alen, blen);
	EXPECT_EQ(0, memcmp(&a, &b, alen));
	ASSERT_EQ(0, getpeername(self->cfd, (struct sockaddr *)&a, &alen));
	ASSERT_EQ(0, getsockname(self->lfd, (struct sockaddr *)&l, &llen));
	EXPECT_EQ(sdp_port(&l), sdp_port(&a));
	EXPECT_NE(0, sdp_port(&b));
}

/* A connection's local port is taken in the TCP port space. */
TEST_F(pair, client_port_is_taken)
{
	struct sockaddr_storage a;
	socklen_t alen = sizeof(a);
	int fam = strchr(variant->ip, ':') ? AF_INET6 : AF_INET;
	int fds[2] = { socket(fam, SOCK_STREAM, 0), socket(self->family, SOCK_STREAM, 0) };

	ASSERT_EQ(0, getsockname(self->cfd, (struct sockaddr *)&a, &alen));
	for (int i = 0; i < 2; i++) {
		EXPECT_EQ(-1, bind(fds[i], (struct sockaddr *)&a, alen));
		EXPECT_EQ(EADDRINUSE, errno);
		close(fds[i]);
	}
}

/*
 * Level-triggered epoll_wait() until the event has @bit (5 s): 1, or what
 * the last call returned.
 */
static int epoll_wait_for(int ep, struct epoll_event *ev, unsigned int bit)
{
	double end = sdp_now() + 5;
	int n;

	do {
		n = epoll_wait(ep, ev, 1, 50);
		if (n != 1 || (ev->events & bit))
			return n;
		usleep(2000);
	} while (sdp_now() < end);
	return n;
}

TEST_F(pair, poll_select_epoll_level)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT | EPOLLRDHUP };
	struct timeval tv = {};
	fd_set rd;
	int ep;

	ep = epoll_create1(0);
	ASSERT_LE(0, ep);
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, self->sfd, &ev));
	ASSERT_EQ(1, epoll_wait(ep, &ev, 1, 1000));
	EXPECT_EQ(EPOLLOUT, ev.events);
	FD_ZERO(&rd);
	FD_SET(self->sfd, &rd);
	EXPECT_EQ(0, select(self->sfd + 1, &rd, NULL, NULL, &tv));

	ASSERT_EQ(1, send(self->cfd, "x", 1, 0));
	/* EPOLLOUT is always there: wait on the clock for the rest */
	ASSERT_EQ(1, epoll_wait_for(ep, &ev, EPOLLIN));
	EXPECT_EQ(EPOLLIN | EPOLLOUT, ev.events);
	FD_SET(self->sfd, &rd);
	tv.tv_sec = 1;
	EXPECT_EQ(1, select(self->sfd + 1, &rd, NULL, NULL, &tv));

	PROVE();
	ASSERT_EQ(0, shutdown(self->cfd, SHUT_WR));
	ASSERT_EQ(1, epoll_wait_for(ep, &ev, EPOLLRDHUP));
	EXPECT_EQ(EPOLLIN | EPOLLOUT | EPOLLRDHUP, ev.events);
	ASSERT_EQ(0, shutdown(self->sfd, SHUT_WR));
	ASSERT_EQ(1, epoll_wait_for(ep, &ev, EPOLLHUP));
	EXPECT_EQ(EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLHUP, ev.events);
	close(ep);
}

TEST_F(pair, epoll_edge_triggered)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET };
	int ep = epoll_create1(0);
	char buf[16];

	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, self->sfd, &ev));
	ASSERT_EQ(1, send(self->cfd, "a", 1, 0));
	ASSERT_EQ(1, epoll_wait(ep, &ev, 1, 5000));
	EXPECT_EQ(EPOLLIN, ev.events);
	/* no new data, no new edge */
	EXPECT_EQ(0, epoll_wait(ep, &ev, 1, 100));
	ASSERT_EQ(1, send(self->cfd, "b", 1, 0));
	ASSERT_EQ(1, epoll_wait(ep, &ev, 1, 5000));
	EXPECT_EQ(2, recv(self->sfd, buf, 2, MSG_WAITALL));
	close(ep);
}

/* A waiter already asleep in epoll_wait() wakes when data arrives. */
struct delayed_send {
	int fd;
	int ms;
};

static void *delayed_send(void *arg)
{
	struct delayed_send *d = arg;

	usleep(d->ms * 1000);
	send(d->fd, "z", 1, MSG_NOSIGNAL);
	return NULL;
}

/*
 * A non-blocking sender that got EAGAIN waits for EPOLLOUT on an
 * edge-triggered epoll: the room the reader makes must wake it, as TCP's
 * does (an event-loop server sending a large body depends on it).
 */
TEST_F(pair, epoll_et_wakes_sender_after_eagain)
{
	struct epoll_event ev = { .events = EPOLLOUT | EPOLLET };
	static char buf[65536];
	size_t sent, got = 0;
	int ep, rounds;
	ssize_t n;

	/* small buffers: each round fills quickly, whatever the kernel's autotuning */
	ASSERT_EQ(0, sdp_setint(self->cfd, SOL_SOCKET, SO_SNDBUF, 65536));
	ASSERT_EQ(0, sdp_setint(self->sfd, SOL_SOCKET, SO_RCVBUF, 65536));
	ep = epoll_create1(0);
	ASSERT_LE(0, ep);
	ASSERT_EQ(0, fcntl(self->cfd, F_SETFL, O_NONBLOCK));
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, self->cfd, &ev));
	ASSERT_EQ(1, epoll_wait(ep, &ev, 1, 1000));	/* writable at first */
	/*
	 * Several times: fill to EAGAIN, then the reader takes all there is;
	 * only the edge that room makes may wake us (at any speed: the reader
	 * starts once the sender is full).
	 */
	for (rounds = 0; rounds < 3; rounds++) {
		for (sent = 0; (n = send(self->cfd, buf, sizeof(buf), 0)) > 0; sent += n)
			ASSERT_LT(sent, 512u << 20) TH_LOG("never blocked");
		ASSERT_EQ(EAGAIN, errno);
		while ((n = recv(self->sfd, buf, sizeof(buf), MSG_DONTWAIT)) > 0)
			got += n;
		EXPECT_EQ(1, epoll_wait(ep, &ev, 1, 5000)) TH_LOG("no EPOLLOUT after EAGAIN (round %d)", rounds);
		EXPECT_TRUE(ev.events & EPOLLOUT);
		if (!_metadata->passed)
			break;
	}
	EXPECT_LT(0, got);
	close(ep);
}

TEST_F(pair, epoll_wakes_sleeping_waiter)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET };
	struct delayed_send d = { .fd = self->cfd, .ms = 200 };
	int ep = epoll_create1(0);
	pthread_t t;

	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, self->sfd, &ev));
	ASSERT_EQ(0, pthread_create(&t, NULL, delayed_send, &d));
	EXPECT_EQ(1, epoll_wait(ep, &ev, 1, 5000));
	pthread_join(t, NULL);
	close(ep);
}

/* EPOLLONESHOT: one event, then none until EPOLL_CTL_MOD re-arms it. */
TEST_F(pair, epolloneshot_rearm)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT };
	char buf[8];
	int ep = epoll_create1(0);

	ASSERT_LE(0, ep);
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, self->sfd, &ev));
	ASSERT_EQ(1, send(self->cfd, "a", 1, 0));
	EXPECT_EQ(1, epoll_wait(ep, &ev, 1, 5000));
	ASSERT_EQ(1, send(self->cfd, "b", 1, 0));
	EXPECT_EQ(0, epoll_wait(ep, &ev, 1, 300));
	ev.events = EPOLLIN | EPOLLONESHOT;
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_MOD, self->sfd, &ev));
	EXPECT_EQ(1, epoll_wait(ep, &ev, 1, 5000));
	EXPECT_EQ(2, sdp_read_full(self->sfd, buf, 2));
	EXPECT_EQ(0, memcmp(buf, "ab", 2));
	close(ep);
}

/* What a level-triggered epoll reports on @fd now (0: nothing in 2 s). */
static unsigned int epoll_now(int ep)
{
	struct epoll_event ev = {};

	return epoll_wait(ep, &ev, 1, 2000) == 1 ? ev.events : 0;
}

/* EPOLLRDHUP at the peer's half close, EPOLLHUP once both ways are shut. */
TEST_F(pair, epollrdhup_and_epollhup_at_close)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP };
	char buf[8];
	int ep = epoll_create1(0);

	ASSERT_LE(0, ep);
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, self->sfd, &ev));
	ASSERT_EQ(1, send(self->cfd, "x", 1, 0));
	EXPECT_EQ(EPOLLIN, epoll_now(ep));
	ASSERT_EQ(1, recv(self->sfd, buf, sizeof(buf), 0));
	PROVE();
	ASSERT_EQ(0, shutdown(self->cfd, SHUT_WR));
	EXPECT_EQ(EPOLLIN | EPOLLRDHUP, epoll_now(ep));
	EXPECT_EQ(0, recv(self->sfd, buf, sizeof(buf), 0));
	ASSERT_EQ(0, shutdown(self->sfd, SHUT_WR));
	EXPECT_EQ(EPOLLIN | EPOLLRDHUP | EPOLLHUP, epoll_now(ep));
	close(ep);
}

/*
 * O_ASYNC: SIGIO when data arrives, when room comes back to a sender that
 * got EAGAIN, and at the peer's close; each end alone asks for it, so the
 * count is that end's.
 */
static volatile sig_atomic_t sigios;

static void on_sigio(int sig)
{
	sigios++;
}

static bool sigio_within(int ms)
{
	for (int i = 0; i < ms / 10 && !sigios; i++)
		usleep(10000);
	return sigios > 0;
}

TEST_F(pair, sigio_on_data_room_and_close)
{
	static char buf[65536];
	ssize_t n;

	signal(SIGIO, on_sigio);
	ASSERT_EQ(0, fcntl(self->sfd, F_SETOWN, getpid()));
	ASSERT_EQ(0, fcntl(self->cfd, F_SETOWN, getpid()));
	ASSERT_EQ(0, fcntl(self->sfd, F_SETFL, O_ASYNC | O_NONBLOCK));
	sigios = 0;
	ASSERT_EQ(3, send(self->cfd, "abc", 3, 0));
	EXPECT_TRUE(sigio_within(5000)) TH_LOG("no SIGIO for data");
	ASSERT_EQ(3, recv(self->sfd, buf, sizeof(buf), 0));

	ASSERT_EQ(0, fcntl(self->sfd, F_SETFL, O_NONBLOCK));
	ASSERT_EQ(0, fcntl(self->cfd, F_SETFL, O_ASYNC | O_NONBLOCK));
	for (size_t sent = 0; (n = send(self->cfd, buf, sizeof(buf), 0)) > 0; sent += n)
		ASSERT_LT(sent, 512u << 20) TH_LOG("never blocked");
	ASSERT_EQ(EAGAIN, errno);
	sigios = 0;
	while (recv(self->sfd, buf, sizeof(buf), 0) > 0)
		;
	EXPECT_TRUE(sigio_within(5000)) TH_LOG("no SIGIO for room after EAGAIN");

	ASSERT_EQ(0, fcntl(self->cfd, F_SETFL, O_NONBLOCK));
	while (recv(self->sfd, buf, sizeof(buf), 0) > 0 ||
	       sdp_poll1(self->sfd, POLLIN, 300))
		;
	ASSERT_EQ(0, fcntl(self->sfd, F_SETFL, O_ASYNC | O_NONBLOCK));
	PROVE();
	sigios = 0;
	ASSERT_EQ(0, shutdown(self->cfd, SHUT_WR));
	EXPECT_TRUE(sigio_within(5000)) TH_LOG("no SIGIO for the peer's close");
	signal(SIGIO, SIG_IGN);
}

TEST_F(pair, epollerr_on_reset)
{
	struct linger l = { .l_onoff = 1, .l_linger = 0 };
	struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP };
	int ep = epoll_create1(0);

	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, self->cfd, &ev));
	ASSERT_EQ(0, setsockopt(self->sfd, SOL_SOCKET, SO_LINGER, &l, sizeof(l)));
	PROVE();
	close(self->sfd);
	self->sfd = -1;
	ASSERT_EQ(1, epoll_wait(ep, &ev, 1, 5000));
	EXPECT_EQ(EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR, ev.events);
	EXPECT_EQ(ECONNRESET, sdp_getint(self->cfd, SOL_SOCKET, SO_ERROR));
	EXPECT_EQ(0, sdp_getint(self->cfd, SOL_SOCKET, SO_ERROR));
	close(ep);
}

#define KILL_KEY	0x6b696c6cULL

/* Over RDMA while the pair is quiet: a byte each way, then the proof. */
#define PROVE_QUIET() do {						\
	char _b;							\
	ASSERT_EQ(1, send(self->cfd, "q", 1, 0));			\
	ASSERT_EQ(1, recv(self->sfd, &_b, 1, 0));			\
	ASSERT_EQ(1, send(self->sfd, "q", 1, 0));			\
	ASSERT_EQ(1, recv(self->cfd, &_b, 1, 0));			\
	PROVE();							\
} while (0)

/*
 * The sending process is killed mid-transfer (SIGKILL): its socket closes
 * as in close(), nothing unread in it, so the reader, blocked in recv(),
 * gets every byte that was sent and then EOF, and an epoll waiter
 * EPOLLRDHUP: nothing hangs, nothing is lost or made up.
 */
TEST_F(pair, sender_killed_mid_transfer)
{
	struct epoll_event ev = { .events = EPOLLRDHUP };
	struct stream_io r = { .fd = self->sfd, .check = true, .key = KILL_KEY };
	int ep = epoll_create1(0), status;
	pthread_t t;
	pid_t pid;

	PROVE_QUIET();
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct stream_io w = { .fd = self->cfd, .sends = true, .key = KILL_KEY };

		stream_io(&w);
		_exit(1);
	}
	/* the child's is the last reference */
	close(self->cfd);
	self->cfd = -1;
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, self->sfd, &ev));
	ASSERT_EQ(0, pthread_create(&t, NULL, stream_io, &r));
	for (int i = 0; i < 3000 && r.bytes < (1 << 20); i++)
		usleep(10000);
	EXPECT_LE(1 << 20, r.bytes);
	EXPECT_EQ(0, epoll_wait(ep, &ev, 1, 0)) TH_LOG("EPOLLRDHUP before the kill");
	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status));
	EXPECT_EQ(1, epoll_wait(ep, &ev, 1, 30000));
	EXPECT_NE(0, ev.events & EPOLLRDHUP);
	ASSERT_TRUE(stream_io_ended(&r, 30)) TH_LOG("the reader still waits");
	pthread_join(t, NULL);
	TH_LOG("%llu B, then recv %zd (%s)", r.bytes, r.last, r.err ? strerror(r.err) : "EOF");
	EXPECT_EQ(0, r.last);
	EXPECT_EQ(-1, r.bad) TH_LOG("byte %lld wrong", r.bad);
	close(ep);
}

/*
 * The receiving process is killed with data it never read: its socket
 * resets, so a sender blocked in send() on a full pipe gets ECONNRESET
 * (or EPIPE), and an epoll waiter EPOLLHUP.
 */
TEST_F(pair, receiver_killed_mid_transfer)
{
	struct epoll_event ev = { .events = EPOLLERR };
	struct stream_io w = { .fd = self->cfd, .sends = true, .key = KILL_KEY };
	int ep = epoll_create1(0), go[2], status, i;
	pthread_t t;
	pid_t pid;
	char b;

	PROVE_QUIET();
	ASSERT_EQ(0, pipe(go));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		static unsigned char buf[65536];

		/* reads some, says so, and reads no more */
		if (sdp_read_full(self->sfd, buf, sizeof(buf)) == sizeof(buf) &&
		    stream_check(KILL_KEY, 0, buf, sizeof(buf)) < 0)
			write(go[1], "r", 1);
		pause();
		_exit(0);
	}
	close(self->sfd);
	self->sfd = -1;
	ASSERT_EQ(0, pthread_create(&t, NULL, stream_io, &w));
	ASSERT_EQ(1, read(go[0], &b, 1));
	/* the pipe fills: the writer blocks */
	for (i = 0; i < 1000 && (sdp_poll1(self->cfd, POLLOUT, 0) & POLLOUT); i++)
		usleep(10000);
	EXPECT_EQ(0, sdp_poll1(self->cfd, POLLOUT, 0));
	EXPECT_FALSE(atomic_load(&w.done));
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, self->cfd, &ev));
	EXPECT_EQ(0, epoll_wait(ep, &ev, 1, 0));
	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	/* (the blocked writer may have taken the error from sk_err first) */
	EXPECT_EQ(1, epoll_wait(ep, &ev, 1, 30000));
	EXPECT_NE(0, ev.events & EPOLLHUP);
	ASSERT_TRUE(stream_io_ended(&w, 30)) TH_LOG("the writer still waits");
	pthread_join(t, NULL);
	TH_LOG("%llu B, then send %zd (%s)", w.bytes, w.last, strerror(w.err));
	EXPECT_EQ(-1, w.last);
	EXPECT_TRUE(w.err == ECONNRESET || w.err == EPIPE) TH_LOG("%s", strerror(w.err));
	close(ep);
	close(go[0]);
	close(go[1]);
}

TEST_F(pair, fork_inherits)
{
	char buf[32];
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (!pid) {
		send(self->cfd, "from child", 10, 0);
		_exit(0);
	}
	ASSERT_EQ(10, sdp_read_full(self->sfd, buf, 10));
	EXPECT_EQ(0, memcmp(buf, "from child", 10));
	waitpid(pid, NULL, 0);
	/* the parent's descriptor still works */
	ASSERT_EQ(2, send(self->cfd, "ok", 2, 0));
	ASSERT_EQ(2, sdp_read_full(self->sfd, buf, 2));
}

TEST_F(pair, exec_inherits)
{
	char buf[32];
	int status;
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (!pid) {
		dup2(self->cfd, 9);
		execl("/bin/sh", "sh", "-c", "printf exec >&9", (char *)NULL);
		_exit(127);
	}
	ASSERT_EQ(4, sdp_read_full(self->sfd, buf, 4));
	EXPECT_EQ(0, memcmp(buf, "exec", 4));
	waitpid(pid, &status, 0);
	EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST_F(pair, scm_rights)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = {}, buf[16], one = 'x';
	struct iovec iov = { .iov_base = &one, .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
	int sv[2];
	pid_t pid;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int fd;

		close(sv[0]);
		close(self->cfd);
		if (recvmsg(sv[1], &msg, 0) != 1)
			_exit(1);
		cm = CMSG_FIRSTHDR(&msg);
		memcpy(&fd, CMSG_DATA(cm), sizeof(fd));
		_exit(send(fd, "passed", 6, 0) == 6 ? 0 : 2);
	}
	close(sv[1]);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &self->cfd, sizeof(int));
	ASSERT_EQ(1, sendmsg(sv[0], &msg, 0));
	ASSERT_EQ(6, sdp_read_full(self->sfd, buf, 6));
	EXPECT_EQ(0, memcmp(buf, "passed", 6));
	close(sv[0]);
	waitpid(pid, NULL, 0);
}

/* Many threads on one socket: every byte arrives exactly once. */
#define T_THREADS	4
#define T_RECORDS	200
#define T_RECLEN	1000

/* Writer w's records: byte k of each is w * 37 + k, so every byte counts. */
struct record_writer {
	int fd, w;
};

static void *record_writer(void *arg)
{
	struct record_writer *rw = arg;
	char rec[T_RECLEN];
	int i;

	for (i = 0; i < T_RECLEN; i++)
		rec[i] = (char)(rw->w * 37 + i);
	for (i = 0; i < T_RECORDS; i++)
		if (sdp_write_full(rw->fd, rec, sizeof(rec)) != sizeof(rec))
			break;
	return NULL;
}

/* How often each byte value arrived: order-free, as writers interleave. */
struct reader_hist {
	int fd;
	long long hist[256];
};

static void *hist_reader(void *arg)
{
	struct reader_hist *r = arg;
	unsigned char buf[3000];
	ssize_t n;

	while ((n = recv(r->fd, buf, sizeof(buf), 0)) > 0)
		for (ssize_t i = 0; i < n; i++)
			r->hist[buf[i]]++;
	return NULL;
}

TEST_F(pair, many_threads_one_socket)
{
	static struct reader_hist rh[2];
	struct record_writer rw[T_THREADS];
	pthread_t w[T_THREADS], r[2];
	long long want[256] = {};
	int i, k;

	for (i = 0; i < 2; i++) {
		memset(&rh[i], 0, sizeof(rh[i]));
		rh[i].fd = self->sfd;
		ASSERT_EQ(0, pthread_create(&r[i], NULL, hist_reader, &rh[i]));
	}
	for (i = 0; i < T_THREADS; i++) {
		rw[i] = (struct record_writer){ .fd = self->cfd, .w = i };
		ASSERT_EQ(0, pthread_create(&w[i], NULL, record_writer, &rw[i]));
		for (k = 0; k < T_RECLEN; k++)
			want[(unsigned char)(i * 37 + k)] += T_RECORDS;
	}
	for (i = 0; i < T_THREADS; i++)
		pthread_join(w[i], NULL);
	PROVE();
	shutdown(self->cfd, SHUT_WR);
	for (i = 0; i < 2; i++)
		pthread_join(r[i], NULL);
	for (k = 0; k < 256; k++) {
		ASSERT_EQ(want[k], rh[0].hist[k] + rh[1].hist[k]) TH_LOG("byte value %d", k);
	}
}

static void on_alarm(int sig)
{
}

static void arm_alarm(int restart, int ms)
{
	struct sigaction sa = { .sa_handler = on_alarm, .sa_flags = restart };
	struct itimerval it = { .it_value = { .tv_usec = ms * 1000 } };

	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
}

TEST_F(pair, signal_interrupts_recv)
{
	char buf[4];

	arm_alarm(0, 100);
	EXPECT_EQ(-1, recv(self->sfd, buf, sizeof(buf), 0));
	EXPECT_EQ(EINTR, errno);
}

TEST_F(pair, signal_restarts_recv)
{
	struct delayed_send d = { .fd = self->cfd, .ms = 400 };
	pthread_t t;
	char buf[4];

	ASSERT_EQ(0, pthread_create(&t, NULL, delayed_send, &d));
	arm_alarm(SA_RESTART, 100);
	EXPECT_EQ(1, recv(self->sfd, buf, sizeof(buf), 0));
	pthread_join(t, NULL);
}

TEST_F(pair, signal_interrupts_send)
{
	static char buf[65536];
	ssize_t n;

	/*
	 * Fill the pipe, then block on it until the alarm. Room freed by
	 * completions still in flight (a loaded host; the debug kernel once
	 * took more than 300 ms) is filled too. Fixed buffers: 6.12's TCP
	 * grows its window while we wait otherwise.
	 */
	ASSERT_EQ(0, sdp_setint(self->cfd, SOL_SOCKET, SO_SNDBUF, 16384));
	ASSERT_EQ(0, sdp_setint(self->sfd, SOL_SOCKET, SO_RCVBUF, 16384));
	ASSERT_EQ(0, fcntl(self->cfd, F_SETFL, O_NONBLOCK));
	do {
		while (send(self->cfd, buf, sizeof(buf), 0) > 0)
			;
	} while (sdp_poll1(self->cfd, POLLOUT, 1000));
	ASSERT_EQ(0, fcntl(self->cfd, F_SETFL, 0));
	arm_alarm(0, 200);
	n = send(self->cfd, buf, sizeof(buf), 0);
	if (n < 0) {
		EXPECT_EQ(EINTR, errno);
	} else {
		EXPECT_GT(sizeof(buf), n);	/* a partial count, as TCP */
	}
}

TEST_F(pair, signal_interrupts_accept)
{
	arm_alarm(0, 100);
	EXPECT_EQ(-1, accept(self->lfd, NULL, NULL));
	EXPECT_EQ(EINTR, errno);
}

TEST_F(pair, accept4_flags)
{
	int fd, nb;

	fd = sdp_connect(self->family, &self->addr, self->alen);
	ASSERT_LE(0, fd);
	nb = accept4(self->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	ASSERT_LE(0, nb);
	EXPECT_TRUE(fcntl(nb, F_GETFL) & O_NONBLOCK);
	EXPECT_TRUE(fcntl(nb, F_GETFD) & FD_CLOEXEC);
	if (variant->sdp)
		EXPECT_EQ(sdp_expected_transport(), sdp_transport(nb));
	close(nb);
	close(fd);
	/* nothing pending */
	ASSERT_EQ(0, fcntl(self->lfd, F_SETFL, O_NONBLOCK));
	EXPECT_EQ(-1, accept(self->lfd, NULL, NULL));
	EXPECT_EQ(EAGAIN, errno);
	EXPECT_EQ(-1, accept(self->cfd, NULL, NULL));
	EXPECT_EQ(EINVAL, errno);
}

/*
 * sendto(MSG_FASTOPEN) on a fresh socket connects and sends, as TCP does
 * without a cookie (curl --tcp-fastopen); no address: EINVAL; once
 * connected: EISCONN.
 */
TEST_F(pair, msg_fastopen_connects_then_sends)
{
	char buf[6] = {};
	int c, s;

	c = socket(self->family, SOCK_STREAM, 0);
	ASSERT_LE(0, c);
	EXPECT_EQ(-1, sendto(c, "x", 1, MSG_FASTOPEN, NULL, 0));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(5, sendto(c, "hello", 5, MSG_FASTOPEN,
			    (struct sockaddr *)&self->addr, self->alen))
		TH_LOG("sendto: %s", strerror(errno));
	s = accept(self->lfd, NULL, NULL);
	ASSERT_LE(0, s);
	EXPECT_EQ(5, recv(s, buf, 5, MSG_WAITALL));
	EXPECT_STREQ("hello", buf);
	if (variant->sdp)
		EXPECT_EQ(sdp_expected_transport(), sdp_transport(c));
	EXPECT_EQ(-1, sendto(c, "x", 1, MSG_FASTOPEN,
			     (struct sockaddr *)&self->addr, self->alen));
	EXPECT_EQ(EISCONN, errno);
	close(c);
	close(s);
}

TEST_F(pair, connect_again_eisconn)
{
	EXPECT_EQ(-1, connect(self->cfd, (struct sockaddr *)&self->addr, self->alen));
	EXPECT_EQ(EISCONN, errno);
	EXPECT_EQ(-1, listen(self->cfd, 1));
	EXPECT_EQ(EINVAL, errno);
}

/*
 * An accepted socket disconnected with connect(AF_UNSPEC) connects again
 * as TCP's does: the new connection is its own active one (over RDMA for
 * SDP), no longer its listener's child.
 */
TEST_F(pair, accepted_socket_connects_again)
{
	struct sockaddr sa = { .sa_family = AF_UNSPEC };
	struct sockaddr_storage addr;
	struct sdp_proof p;
	socklen_t alen;
	char buf[8];
	int l, s;

	PROVE();
	l = sdp_listener(self->family, variant->ip, 1, &addr, &alen);
	ASSERT_LE(0, l);
	ASSERT_EQ(0, connect(self->sfd, &sa, sizeof(sa)));
	ASSERT_EQ(0, connect(self->sfd, (struct sockaddr *)&addr, alen))
		TH_LOG("connect again: %s", strerror(errno));
	s = accept(l, NULL, NULL);
	ASSERT_LE(0, s);
	if (variant->sdp) {
		EXPECT_EQ(sdp_expected_transport(), sdp_transport(self->sfd));
		ASSERT_EQ(0, sdp_proof_begin(&p, self->sfd, s));
	}
	EXPECT_EQ(5, send(self->sfd, "again", 5, 0));
	EXPECT_EQ(5, recv(s, buf, 5, MSG_WAITALL));
	EXPECT_EQ(0, memcmp(buf, "again", 5));
	EXPECT_EQ(2, send(s, "ok", 2, 0));
	EXPECT_EQ(2, recv(self->sfd, buf, 2, MSG_WAITALL));
	if (variant->sdp)
		SDP_PROVE(&p);
	else
		SDP_PROVE_TCP(s);
	close(s);
	close(l);
	/* the first connection is gone: nothing left to prove at the end */
	close(self->cfd);
	self->cfd = -1;
}

TEST_F(pair, sockbuf_sizes)
{
	EXPECT_EQ(0, sdp_setint(self->cfd, SOL_SOCKET, SO_RCVBUF, 65536));
	EXPECT_EQ(131072, sdp_getint(self->cfd, SOL_SOCKET, SO_RCVBUF));
	EXPECT_EQ(0, sdp_setint(self->cfd, SOL_SOCKET, SO_SNDBUF, 32768));
	EXPECT_EQ(65536, sdp_getint(self->cfd, SOL_SOCKET, SO_SNDBUF));
}

/* @n one-byte round trips answered on @fd. */
struct echo {
	int fd, n;
};

static void *echo_peer(void *arg)
{
	struct echo *e = arg;
	char c;
	int i;

	for (i = 0; i < e->n; i++)
		if (read(e->fd, &c, 1) != 1 || write(e->fd, &c, 1) != 1)
			break;
	return NULL;
}

/* @n round trips from @fd to an echo_peer; how many came back. */
static int ping_pong(int fd, int peer, int n)
{
	struct echo e = { .fd = peer, .n = n };
	pthread_t t;
	char c = 'p';
	int i;

	if (pthread_create(&t, NULL, echo_peer, &e))
		return -1;
	for (i = 0; i < n; i++)
		if (write(fd, &c, 1) != 1 || read(fd, &c, 1) != 1)
			break;
	pthread_join(t, NULL);
	return i;
}

/*
 * What busy pollers reaped in init_net (BusyPollRxPackets): SDP's CQs'
 * NAPI contexts are on dummy devices of init_net's, whatever the socket's
 * namespace. -1 if unreadable.
 */
static long long busy_poll_rx_packets(void)
{
	char names[8192], vals[8192], *n, *v, *sn, *sv;
	FILE *f = fopen("/proc/1/net/netstat", "r");
	long long r = -1;

	while (f && r < 0 && fgets(names, sizeof(names), f) && fgets(vals, sizeof(vals), f)) {
		if (strncmp(names, "TcpExt:", 7))
			continue;
		for (n = strtok_r(names, " \n", &sn), v = strtok_r(vals, " \n", &sv); n && v;
		     n = strtok_r(NULL, " \n", &sn), v = strtok_r(NULL, " \n", &sv))
			if (!strcmp(n, "BusyPollRxPackets"))
				r = atoll(v);
	}
	if (f)
		fclose(f);
	return r;
}

/*
 * SO_BUSY_POLL with net.core.busy_poll, a child sending a byte 2 ms after
 * the server end's wait starts (@epoll: epoll_wait() on it, else poll()):
 * whether one wait of 30 lasted a millisecond or more and got the byte
 * without a voluntary context switch (it spun), and with @reap, reaped
 * its completion itself (a spinner lets go of the NAPI context while
 * another task takes its CPU, and softirq may take the completion then);
 * *@rounds: how many ran.
 */
static bool busy_wait_spins(struct __test_metadata *_metadata, FIXTURE_DATA(pair) *self,
			    bool epoll, bool reap, int *rounds)
{
	static const char wq_mask[] = "/sys/devices/virtual/workqueue/cpumask";
	int saved = sdp_read_int("/proc/sys/net/core", "busy_poll");
	struct pollfd p = { .fd = self->sfd, .events = POLLIN };
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = self->sfd };
	char c, mask[256] = "";
	struct rusage r0, r1;
	cpu_set_t cpus, all;
	int go[2], i, spun = 0, epfd = -1;
	long long reaped;
	double t0;
	FILE *f;
	pid_t pid;

	sdp_write_int("/proc/sys/net/core", "busy_poll", 200000);
	EXPECT_EQ(0, sdp_setint(self->sfd, SOL_SOCKET, SO_BUSY_POLL, 200000));
	/* (epoll takes a socket's NAPI ID as it is added only with busy_poll on) */
	if (epoll) {
		epfd = epoll_create1(0);
		ASSERT_LE(0, epfd);
		ASSERT_EQ(0, epoll_ctl(epfd, EPOLL_CTL_ADD, self->sfd, &ev));
	}
	/*
	 * A spin gives way when its CPU is wanted: the waiter and the sender
	 * on CPUs of their own where there are two (the sender moved before
	 * the wait starts: a migration then would take the waiter's CPU),
	 * 30 rounds at most.
	 */
	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	sched_getaffinity(0, sizeof(all), &all);
	if (CPU_COUNT(&all) > 1)
		sched_setaffinity(0, sizeof(cpus), &cpus);
	/*
	 * From 6.4 rxe sends and receives from an unbound work queue: a worker
	 * woken on the waiter's CPU wants it, as any task would, so every spin
	 * gave way (30 of 30 rounds once on 6.12). Unbound work goes to the
	 * sender's CPU for the case.
	 */
	f = CPU_COUNT(&all) > 1 ? fopen(wq_mask, "r") : NULL;
	if (f) {
		if (!fgets(mask, sizeof(mask), f))
			mask[0] = 0;
		fclose(f);
	}
	f = mask[0] ? fopen(wq_mask, "w") : NULL;
	if (f) {
		fputs("2\n", f);
		fclose(f);
	}
	for (i = 0; i < 30 && !spun; i++) {
		if (pipe(go))
			break;
		pid = fork();
		if (!pid) {
			close(go[1]);
			if (read(go[0], &c, 1) != 1)
				_exit(1);
			usleep(2000);
			_exit(send(self->cfd, "b", 1, 0) != 1);
		}
		CPU_ZERO(&cpus);
		CPU_SET(1, &cpus);
		if (CPU_COUNT(&all) > 1)
			sched_setaffinity(pid, sizeof(cpus), &cpus);
		close(go[0]);
		reaped = busy_poll_rx_packets();
		getrusage(RUSAGE_THREAD, &r0);
		EXPECT_EQ(1, write(go[1], "g", 1));
		t0 = sdp_now();
		EXPECT_EQ(1, epoll ? epoll_wait(epfd, &ev, 1, 5000) : poll(&p, 1, 5000));
		/* (a wait that found the byte there already proves nothing) */
		t0 = sdp_now() - t0;
		getrusage(RUSAGE_THREAD, &r1);
		close(go[1]);
		EXPECT_EQ(1, recv(self->sfd, &c, 1, 0));
		EXPECT_EQ(0, child_status(pid));
		spun = r1.ru_nvcsw == r0.ru_nvcsw && t0 >= 0.001 &&
		       (!reap || busy_poll_rx_packets() > reaped);
	}
	if (epoll)
		close(epfd);
	sched_setaffinity(0, sizeof(all), &all);
	f = mask[0] ? fopen(wq_mask, "w") : NULL;
	if (f) {
		fputs(mask, f);
		fclose(f);
	}
	sdp_write_int("/proc/sys/net/core", "busy_poll", saved);
	EXPECT_EQ(0, sdp_setint(self->sfd, SOL_SOCKET, SO_BUSY_POLL, 0));
	*rounds = i;
	return spun;
}

/*
 * A poll() waiting for data spins rather than sleeps until the data comes,
 * as over TCP: the core's sock_poll() keeps do_poll() asking for a socket
 * with busy polling on, whatever its family (TCP over veth has no NAPI
 * context to reap meanwhile; SDP's connection has its CQ's).
 */
TEST_F(pair, busy_poll_spins_in_poll)
{
	int rounds;
	bool spun = busy_wait_spins(_metadata, self, false, false, &rounds);

	TH_LOG("%s after %d rounds", spun ? "a poll() spun till its data came" :
	       "every poll() slept", rounds);
	EXPECT_TRUE(spun);
	EXPECT_RDMA_RX(self->sfd, rounds);
}

/*
 * epoll busy polls the NAPI context its sockets last received on (their
 * sk_napi_id, SO_INCOMING_NAPI_ID): a NIC's queue for TCP, the CQ of its
 * connection for SDP over RDMA, so epoll_wait() spins there, reaping the
 * CQ (BusyPollRxPackets). TCP over veth has none, nor has SDP's fallback:
 * their waits sleep, which is only logged.
 */
TEST_F(pair, busy_poll_spins_in_epoll)
{
	bool rdma = variant->sdp && sdp_expected_transport() == SDP_TRANSPORT_RDMA;
	long long reaped = busy_poll_rx_packets();
	int rounds, id = -1;
	socklen_t len = sizeof(id);
	bool spun;

	/* (the core answers 0 for an ID that names no NAPI context) */
	ASSERT_EQ(0, getsockopt(self->sfd, SOL_SOCKET, SO_INCOMING_NAPI_ID, &id, &len));
	TH_LOG("SO_INCOMING_NAPI_ID %d", id);
	spun = busy_wait_spins(_metadata, self, true, rdma, &rounds);
	TH_LOG("%s after %d rounds; busy pollers reaped %lld", spun ?
	       "an epoll_wait() spun till its data came" : "no epoll_wait() spun",
	       rounds, busy_poll_rx_packets() - reaped);
	if (rdma) {
		EXPECT_LT(0, id);
		/* (its completion reaped by the spinner) */
		EXPECT_TRUE(spun);
	}
	EXPECT_RDMA_RX(self->sfd, rounds);
}

/* Receive spins that ended, whichever way (sdp_recv_poll()). */
static long long recv_spins(void)
{
	return sdp_stat("RecvPollHit") + sdp_stat("RecvPollMiss") + sdp_stat("RecvPollCut");
}

/*
 * SO_BUSY_POLL is kept per socket, as TCP keeps it. Over RDMA a blocking
 * receive with a poll time spins for its data (RecvPollHit, or Miss, or Cut
 * where it gave way); with none, from the socket or net.sdp.recv_poll_us,
 * it sleeps at once.
 */
TEST_F(pair, so_busy_poll)
{
	bool rdma = variant->sdp && sdp_expected_transport() == SDP_TRANSPORT_RDMA;
	int dflt = sdp_sysctl("recv_poll_us"), i;
	long long hit, spins, reaped;

	EXPECT_EQ(0, sdp_setint(self->sfd, SOL_SOCKET, SO_BUSY_POLL, 1000000));
	EXPECT_EQ(1000000, sdp_getint(self->sfd, SOL_SOCKET, SO_BUSY_POLL));
	if (variant->sdp)
		sdp_sysctl_set("recv_poll_us", 0);

	/*
	 * A spin gives way when another task is runnable on its CPU: on 6.12,
	 * whose rxe sends from a kworker, every spin of 500 round trips once
	 * did (CI). Rounds of 50 until one spin got its data, 10 at most; the
	 * reaping is checked where one did.
	 */
	hit = sdp_stat("RecvPollHit");
	spins = recv_spins();
	reaped = busy_poll_rx_packets();
	for (i = 0; i < 10; i++) {
		EXPECT_EQ(50, ping_pong(self->sfd, self->cfd, 50));
		if (!rdma || sdp_stat("RecvPollHit") > hit)
			break;
	}
	if (rdma) {
		EXPECT_LT(spins, recv_spins());
		/* and the spinner reaped its CQ itself */
		if (sdp_stat("RecvPollHit") > hit)
			EXPECT_LT(reaped, busy_poll_rx_packets());
	}

	EXPECT_EQ(0, sdp_setint(self->sfd, SOL_SOCKET, SO_BUSY_POLL, 0));
	spins = recv_spins();
	EXPECT_EQ(50, ping_pong(self->sfd, self->cfd, 50));
	EXPECT_EQ(spins, recv_spins());

	if (variant->sdp)
		sdp_sysctl_set("recv_poll_us", dflt);
	EXPECT_RDMA_RX(self->sfd, 100);
}

/* A thread that keeps its CPU busy till told to stop. */
struct hog {
	volatile bool stop;
	cpu_set_t cpu;
};

static void *hog_run(void *arg)
{
	struct hog *h = arg;

	sched_setaffinity(0, sizeof(h->cpu), &h->cpu);
	while (!h->stop)
		;
	return NULL;
}

/*
 * A blocking receive spins for its data only while no other task wants its
 * CPU: that task may be the one moving its packets (rxe's kworker). With a
 * busy thread on the reader's CPU it sleeps at once (RecvPollCut), however
 * long its poll time, and the byte comes as over TCP.
 */
TEST_F(pair, a_spin_gives_way_to_a_task_on_its_cpu)
{
	bool rdma = variant->sdp && sdp_expected_transport() == SDP_TRANSPORT_RDMA;
	struct delayed_send d = { .fd = self->cfd, .ms = 300 };
	struct hog h = { .stop = false };
	long long cut, hit;
	pthread_t t, ht;
	cpu_set_t all;
	char c = 0;

	ASSERT_EQ(0, sched_getaffinity(0, sizeof(all), &all));
	CPU_ZERO(&h.cpu);
	CPU_SET(sched_getcpu(), &h.cpu);
	EXPECT_EQ(0, sdp_setint(self->sfd, SOL_SOCKET, SO_BUSY_POLL, 2000000));
	cut = sdp_stat("RecvPollCut");
	hit = sdp_stat("RecvPollHit");
	/* the sender before the pinning, which threads inherit */
	ASSERT_EQ(0, pthread_create(&t, NULL, delayed_send, &d));
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(h.cpu), &h.cpu));
	ASSERT_EQ(0, pthread_create(&ht, NULL, hog_run, &h));
	EXPECT_EQ(1, recv(self->sfd, &c, 1, 0));
	h.stop = true;
	pthread_join(ht, NULL);
	pthread_join(t, NULL);
	EXPECT_EQ(0, sched_setaffinity(0, sizeof(all), &all));
	EXPECT_EQ('z', c);
	if (rdma) {
		EXPECT_LT(cut, sdp_stat("RecvPollCut"));
		EXPECT_EQ(hit, sdp_stat("RecvPollHit"));
	}
	EXPECT_RDMA_RX(self->sfd, 1);
}

/* Sockets on their own: bind, listen, connect. */
FIXTURE(sock) {
	int family;
	const char *ip;
	bool proved;
};

FIXTURE_VARIANT(sock) {
	bool sdp;
	const char *ip;
};

SDP_ORACLE_VARIANT(sock, tcp4) { .sdp = false, .ip = SDP_A };
FIXTURE_VARIANT_ADD(sock, sdp4) { .sdp = true, .ip = SDP_A };
SDP_ORACLE_VARIANT(sock, tcp6) { .sdp = false, .ip = SDP_A6 };
FIXTURE_VARIANT_ADD(sock, sdp6) { .sdp = true, .ip = SDP_A6 };

FIXTURE_SETUP(sock)
{
	self->family = variant_family(variant->sdp, variant->ip);
	self->ip = variant->ip;
}

/*
 * A connection a sock test made: what it ran over (sdp_proof.h), once the
 * bytes moved. A case that proves none made no connection.
 */
#define PROOF_BEGIN(pr, a, b) do {					\
	if (variant->sdp)						\
		ASSERT_EQ(0, sdp_proof_begin(pr, a, b))			\
			TH_LOG("proof: %s", strerror(errno));		\
} while (0)

#define PROOF_END(pr) do {						\
	if (variant->sdp) {						\
		SDP_PROVE(pr);						\
		self->proved = true;					\
	}								\
} while (0)

FIXTURE_TEARDOWN(sock)
{
	if (!variant->sdp)
		fprintf(stderr, "# PROOF tcp\n");
	else if (!self->proved)
		SDP_PROVE_LOCAL();
}

TEST_F(sock, bind_port0_is_ephemeral)
{
	struct sockaddr_storage ss;
	socklen_t len = sdp_addr(&ss, self->ip, 0);
	int fd = socket(self->family, SOCK_STREAM, 0);

	ASSERT_EQ(0, bind(fd, (struct sockaddr *)&ss, len));
	ASSERT_EQ(0, getsockname(fd, (struct sockaddr *)&ss, &len));
	EXPECT_NE(0, sdp_port(&ss));
	EXPECT_EQ(strchr(self->ip, ':') ? AF_INET6 : AF_INET, ss.ss_family);
	EXPECT_EQ(-1, bind(fd, (struct sockaddr *)&ss, len));
	EXPECT_EQ(EINVAL, errno);
	close(fd);
}

/* The port space is TCP's: a TCP or an SDP holder blocks the port. */
TEST_F(sock, bind_eaddrinuse_against_tcp_and_sdp)
{
	int tcp_family = strchr(self->ip, ':') ? AF_INET6 : AF_INET;
	int holders[2] = { tcp_family, sdp_family() };
	struct sockaddr_storage ss;
	socklen_t len;
	int i;

	for (i = 0; i < 2; i++) {
		int h = sdp_listener(holders[i], self->ip, 1, &ss, &len);
		int fd = socket(self->family, SOCK_STREAM, 0);

		ASSERT_LE(0, h);
		EXPECT_EQ(-1, bind(fd, (struct sockaddr *)&ss, len));
		EXPECT_EQ(EADDRINUSE, errno);
		close(fd);
		close(h);
		/* freed at close */
		fd = socket(self->family, SOCK_STREAM, 0);
		EXPECT_EQ(0, bind(fd, (struct sockaddr *)&ss, len));
		close(fd);
	}
}

TEST_F(sock, so_reuseaddr)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int a, b, one = 1;

	a = socket(self->family, SOCK_STREAM, 0);
	b = socket(self->family, SOCK_STREAM, 0);
	len = sdp_addr(&ss, self->ip, 0);
	ASSERT_EQ(0, setsockopt(a, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)));
	ASSERT_EQ(0, setsockopt(b, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)));
	ASSERT_EQ(0, bind(a, (struct sockaddr *)&ss, len));
	ASSERT_EQ(0, getsockname(a, (struct sockaddr *)&ss, &len));
	/* both bound, none listening: allowed with SO_REUSEADDR */
	EXPECT_EQ(0, bind(b, (struct sockaddr *)&ss, len));
	close(b);
	ASSERT_EQ(0, listen(a, 1));
	b = socket(self->family, SOCK_STREAM, 0);
	ASSERT_EQ(0, setsockopt(b, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)));
	EXPECT_EQ(-1, bind(b, (struct sockaddr *)&ss, len));
	EXPECT_EQ(EADDRINUSE, errno);
	close(b);
	close(a);
}

TEST_F(sock, privileged_port_needs_capability)
{
	struct sockaddr_storage ss;
	socklen_t len = sdp_addr(&ss, self->ip, 99);
	int status, fd;
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (!pid) {
		fd = socket(self->family, SOCK_STREAM, 0);
		if (setuid(65534))
			_exit(3);
		_exit(bind(fd, (struct sockaddr *)&ss, len) == -1 && errno == EACCES ? 0 : 1);
	}
	waitpid(pid, &status, 0);
	EXPECT_EQ(0, WEXITSTATUS(status));
	fd = socket(self->family, SOCK_STREAM, 0);
	EXPECT_EQ(0, bind(fd, (struct sockaddr *)&ss, len));
	close(fd);
}

/* A port nobody listens on (bound, not listening, then freed). */
static socklen_t dead_port(int family, const char *ip, struct sockaddr_storage *ss)
{
	socklen_t len = sdp_addr(ss, ip, 0);
	int fd = socket(family, SOCK_STREAM, 0);

	bind(fd, (struct sockaddr *)ss, len);
	getsockname(fd, (struct sockaddr *)ss, &len);
	close(fd);
	return len;
}

/* SDP's reason for a refused first and second connect to a dead port. */
static void expect_refused_reason(struct __test_metadata *_metadata,
				  const FIXTURE_VARIANT(sock) *variant, int fd, bool again)
{
	bool fb_pass = sdp_expected_transport() == SDP_TRANSPORT_TCP;

	if (!variant->sdp)
		return;
	/* nobody listens over RDMA: rejected; the socket then stays TCP */
	EXPECT_EQ(fb_pass ? SDP_FB_POLICY : SDP_FB_REJECTED,
		  sdp_getint(fd, SOL_SDP, SDP_FALLBACK_REASON));
	if (again && _metadata->passed)
		fprintf(stderr, "# PROOF fallback (refused by TCP)\n");
}

TEST_F(sock, connect_refused)
{
	struct sockaddr_storage ss;
	socklen_t len = dead_port(self->family, self->ip, &ss);
	int fd = socket(self->family, SOCK_STREAM, 0);

	EXPECT_EQ(-1, connect(fd, (struct sockaddr *)&ss, len));
	EXPECT_EQ(ECONNREFUSED, errno);
	expect_refused_reason(_metadata, variant, fd, false);
	/* the socket can try again */
	EXPECT_EQ(-1, connect(fd, (struct sockaddr *)&ss, len));
	EXPECT_EQ(ECONNREFUSED, errno);
	expect_refused_reason(_metadata, variant, fd, true);
	self->proved = variant->sdp;
	close(fd);
}

TEST_F(sock, connect_nonblocking_refused)
{
	struct sockaddr_storage ss;
	socklen_t len = dead_port(self->family, self->ip, &ss);
	int fd = socket(self->family, SOCK_STREAM | SOCK_NONBLOCK, 0);
	int r;

	r = connect(fd, (struct sockaddr *)&ss, len);
	if (r == -1 && errno == EINPROGRESS) {
		ASSERT_NE(0, sdp_poll1(fd, POLLOUT, 10000));
		EXPECT_EQ(POLLOUT | POLLERR | POLLHUP, sdp_poll1(fd, POLLOUT, 0));
		EXPECT_EQ(ECONNREFUSED, sdp_getint(fd, SOL_SOCKET, SO_ERROR));
	} else {
		EXPECT_EQ(-1, r);
		EXPECT_EQ(ECONNREFUSED, errno);
	}
	close(fd);
}

TEST_F(sock, connect_nonblocking)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int l = sdp_listener(self->family, self->ip, 4, &ss, &len);
	int fd = socket(self->family, SOCK_STREAM | SOCK_NONBLOCK, 0);
	struct sdp_proof pr;
	int r, a;

	ASSERT_LE(0, l);
	r = connect(fd, (struct sockaddr *)&ss, len);
	EXPECT_TRUE(r == 0 || errno == EINPROGRESS);
	ASSERT_NE(0, sdp_poll1(fd, POLLOUT, 10000) & POLLOUT);
	EXPECT_EQ(0, sdp_getint(fd, SOL_SOCKET, SO_ERROR));
	/* The first call after the connection completed reports success. */
	EXPECT_EQ(0, connect(fd, (struct sockaddr *)&ss, len));
	EXPECT_EQ(-1, connect(fd, (struct sockaddr *)&ss, len));
	EXPECT_EQ(EISCONN, errno);
	a = accept(l, NULL, NULL);
	ASSERT_LE(0, a);
	PROOF_BEGIN(&pr, fd, a);
	EXPECT_EQ(2, send(fd, "hi", 2, 0));
	EXPECT_EQ(2, recv(a, &r, 2, MSG_WAITALL));
	PROOF_END(&pr);
	close(a);
	close(fd);
	close(l);
}

TEST_F(sock, unconnected_calls)
{
	int fd = socket(self->family, SOCK_STREAM, 0);
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	char buf[4];

	EXPECT_EQ(-1, recv(fd, buf, sizeof(buf), 0));
	EXPECT_EQ(ENOTCONN, errno);
	EXPECT_EQ(-1, send(fd, "x", 1, MSG_NOSIGNAL));
	EXPECT_EQ(EPIPE, errno);
	EXPECT_EQ(-1, getpeername(fd, (struct sockaddr *)&ss, &len));
	EXPECT_EQ(ENOTCONN, errno);
	EXPECT_EQ(POLLOUT | POLLHUP, sdp_poll1(fd, POLLIN | POLLOUT, 0));
	/* ENOTCONN, and yet the socket is shut down both ways. */
	EXPECT_EQ(-1, shutdown(fd, SHUT_RDWR));
	EXPECT_EQ(ENOTCONN, errno);
	EXPECT_EQ(POLLIN | POLLOUT | POLLHUP, sdp_poll1(fd, POLLIN | POLLOUT, 0));
	EXPECT_EQ(-1, accept(fd, NULL, NULL));
	EXPECT_EQ(EINVAL, errno);
	close(fd);
}

TEST_F(sock, connect_bad_address)
{
	struct sockaddr_storage ss;
	socklen_t len = sdp_addr(&ss, self->ip, 9);
	int fd = socket(self->family, SOCK_STREAM, 0);

	EXPECT_EQ(-1, connect(fd, (struct sockaddr *)&ss, 1));
	EXPECT_EQ(EINVAL, errno);
	((struct sockaddr *)&ss)->sa_family = AF_APPLETALK;
	EXPECT_EQ(-1, connect(fd, (struct sockaddr *)&ss, len));
	EXPECT_EQ(EAFNOSUPPORT, errno);
	close(fd);
}

/* listen(backlog): the queue holds backlog + 1; the rest wait, none are lost. */
/*
 * TCP_DEFER_ACCEPT: a connection is accepted once its first data arrives,
 * or, from a client that sends nothing, once the period (1 s here: one
 * SYN-ACK retransmission) is over.
 */
TEST_F(sock, tcp_defer_accept)
{
	struct sockaddr_storage ss;
	struct sdp_proof pr = {};
	socklen_t len;
	int l, c, s, c2, s2;
	double t0;
	char b = 0;

	l = sdp_listener(self->family, self->ip, 8, &ss, &len);
	ASSERT_LE(0, l);
	ASSERT_EQ(0, sdp_setint(l, SOL_TCP, TCP_DEFER_ACCEPT, 1));
	EXPECT_EQ(1, sdp_getint(l, SOL_TCP, TCP_DEFER_ACCEPT));
	c = sdp_connect(self->family, &ss, len);
	ASSERT_LE(0, c);
	EXPECT_EQ(0, sdp_poll1(l, POLLIN, 500) & POLLIN) TH_LOG("acceptable before data");
	ASSERT_EQ(1, send(c, "x", 1, 0));
	ASSERT_NE(0, sdp_poll1(l, POLLIN, 5000) & POLLIN);
	s = accept(l, NULL, NULL);
	ASSERT_LE(0, s);
	PROOF_BEGIN(&pr, c, s);
	ASSERT_EQ(1, recv(s, &b, 1, 0));
	EXPECT_EQ('x', b);

	c2 = sdp_connect(self->family, &ss, len);
	ASSERT_LE(0, c2);
	t0 = sdp_now();
	ASSERT_NE(0, sdp_poll1(l, POLLIN, 10000) & POLLIN) TH_LOG("never accepted without data");
	EXPECT_LE(0.5, sdp_now() - t0);
	s2 = accept(l, NULL, NULL);
	ASSERT_LE(0, s2);
	if (variant->sdp)
		EXPECT_EQ(sdp_expected_transport(), sdp_transport(s2));
	ASSERT_EQ(1, send(c2, "y", 1, 0));
	ASSERT_EQ(1, recv(s2, &b, 1, 0));
	EXPECT_EQ('y', b);
	PROOF_END(&pr);
	close(c2);
	close(s2);
	close(c);
	close(s);
	close(l);
}

/*
 * A child has its listener's SOL_TCP settings, as TCP's clones do, still
 * after bytes went both ways (a fallback child syncs its options then).
 */
TEST_F(sock, children_take_the_listeners_tcp_options)
{
	static const struct { int opt, val; } o[] = {
		{ TCP_NODELAY, 1 }, { TCP_KEEPIDLE, 77 }, { TCP_KEEPINTVL, 7 },
		{ TCP_KEEPCNT, 5 }, { TCP_USER_TIMEOUT, 12345 },
		{ TCP_NOTSENT_LOWAT, 54321 },
	};
	struct sockaddr_storage ss;
	struct sdp_proof pr = {};
	socklen_t len;
	int l, c, s, i;
	char b = 0;

	l = sdp_listener(self->family, self->ip, 8, &ss, &len);
	ASSERT_LE(0, l);
	for (i = 0; i < (int)(sizeof(o) / sizeof(o[0])); i++)
		ASSERT_EQ(0, sdp_setint(l, SOL_TCP, o[i].opt, o[i].val));
	c = sdp_connect(self->family, &ss, len);
	ASSERT_LE(0, c);
	s = accept(l, NULL, NULL);
	ASSERT_LE(0, s);
	PROOF_BEGIN(&pr, c, s);
	ASSERT_EQ(1, send(c, "x", 1, 0));
	ASSERT_EQ(1, recv(s, &b, 1, 0));
	ASSERT_EQ(1, send(s, "y", 1, 0));
	ASSERT_EQ(1, recv(c, &b, 1, 0));
	for (i = 0; i < (int)(sizeof(o) / sizeof(o[0])); i++)
		EXPECT_EQ(o[i].val, sdp_getint(s, SOL_TCP, o[i].opt)) TH_LOG("option %d", o[i].opt);
	PROOF_END(&pr);
	close(c);
	close(s);
	close(l);
}

TEST_F(sock, listen_backlog)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int l = sdp_listener(self->family, self->ip, 1, &ss, &len);
	long long busy = sdp_stat("BacklogBusy"), retries = sdp_stat("ConnectRetries");
	int c[4], a[4], n = 0, i, k;
	struct sdp_proof pr[4];

	ASSERT_LE(0, l);
	for (i = 0; i < 4; i++) {
		c[i] = socket(self->family, SOCK_STREAM | SOCK_NONBLOCK, 0);
		connect(c[i], (struct sockaddr *)&ss, len);
	}
	usleep(1500000);
	ASSERT_EQ(0, fcntl(l, F_SETFL, O_NONBLOCK));
	while (n < 4 && (a[n] = accept(l, NULL, NULL)) >= 0)
		n++;
	EXPECT_EQ(2, n);
	ASSERT_EQ(0, fcntl(l, F_SETFL, 0));
	while (n < 4) {
		a[n] = accept(l, NULL, NULL);
		ASSERT_LE(0, a[n]);
		n++;
	}
	for (i = 0; i < 4; i++) {
		ASSERT_NE(0, sdp_poll1(c[i], POLLOUT, 10000) & POLLOUT);
		EXPECT_EQ(0, sdp_getint(c[i], SOL_SOCKET, SO_ERROR));
		/* accepted in any order: find each client's server end */
		k = sdp_peer_of(c[i], a, 4);
		ASSERT_LE(0, k);
		PROOF_BEGIN(&pr[i], c[i], a[k]);
		EXPECT_EQ(1, send(a[k], "k", 1, 0));
	}
	for (i = 0; i < 4; i++) {
		char b;

		ASSERT_NE(0, sdp_poll1(c[i], POLLIN, 10000) & POLLIN);
		EXPECT_EQ(1, recv(c[i], &b, 1, 0));
		PROOF_END(&pr[i]);
	}
	/* over RDMA the two beyond the backlog were refused as busy and retried */
	if (variant->sdp && sdp_expected_transport() == SDP_TRANSPORT_RDMA) {
		EXPECT_LE(busy + 2, sdp_stat("BacklogBusy"));
		EXPECT_LE(retries + 2, sdp_stat("ConnectRetries"));
	}
	for (i = 0; i < 4; i++) {
		close(c[i]);
		close(a[i]);
	}
	close(l);
}

/*
 * A connect() to a listener whose accept queue stays full gives up when
 * TCP's would, with ETIMEDOUT: TCP drops the SYNs and stops retransmitting
 * at TCP_SYNCNT's (1: after 1 + 2 s) or TCP_USER_TIMEOUT's (2 s) end; over
 * RDMA each attempt is refused as busy and retried on TCP's schedule, and
 * the socket's options, not tcp_syn_retries (6: 127 s), say when to stop.
 * Then the queued two are accepted and carry a byte each way.
 */
TEST_F(sock, connect_to_a_full_queue_times_out_as_tcp)
{
	long long failed = sdp_stat("ConnectFailed"), retries = sdp_stat("ConnectRetries");
	static const struct { int opt, val; double at; } o[] = {
		{ TCP_SYNCNT, 1, 3 }, { TCP_USER_TIMEOUT, 2000, 2 },
	};
	struct sockaddr_storage ss;
	socklen_t len;
	int l = sdp_listener(self->family, self->ip, 1, &ss, &len);
	int q[2], c[2], a[2], i, k;
	struct sdp_proof pr[2];
	double t0, t;
	char b;

	ASSERT_LE(0, l);
	for (i = 0; i < 2; i++) {
		q[i] = socket(self->family, SOCK_STREAM, 0);
		ASSERT_EQ(0, connect(q[i], (struct sockaddr *)&ss, len));
	}
	/* TCP's handshake ends at the client first: the queue's second place */
	usleep(300000);
	t0 = sdp_now();
	for (i = 0; i < 2; i++) {
		c[i] = socket(self->family, SOCK_STREAM | SOCK_NONBLOCK, 0);
		ASSERT_EQ(0, sdp_setint(c[i], SOL_TCP, o[i].opt, o[i].val));
		ASSERT_EQ(-1, connect(c[i], (struct sockaddr *)&ss, len));
		ASSERT_EQ(EINPROGRESS, errno);
	}
	for (i = 0; i < 2; i++) {
		/* TCP's timers are wall-clock times, on any kernel */
		ASSERT_NE(0, sdp_poll1(c[i], POLLOUT, 15000) & POLLOUT)
			TH_LOG("option %d: still connecting after 15 s", o[i].opt);
		t = sdp_now() - t0;
		EXPECT_EQ(ETIMEDOUT, sdp_getint(c[i], SOL_SOCKET, SO_ERROR));
		/* not before TCP's time; 127 s would be tcp_syn_retries' */
		EXPECT_LE(o[i].at - 0.5, t) TH_LOG("option %d: %.1f s", o[i].opt, t);
		close(c[i]);
	}
	for (i = 0; i < 2; i++) {
		a[i] = accept(l, NULL, NULL);
		ASSERT_LE(0, a[i]);
	}
	for (i = 0; i < 2; i++) {
		/* accepted in any order: find each one's server end */
		k = sdp_peer_of(q[i], a, 2);
		ASSERT_LE(0, k);
		PROOF_BEGIN(&pr[i], q[i], a[k]);
		ASSERT_EQ(1, send(a[k], "q", 1, 0));
		ASSERT_EQ(1, recv(q[i], &b, 1, 0));
		ASSERT_EQ(1, send(q[i], "r", 1, 0));
		ASSERT_EQ(1, recv(a[k], &b, 1, 0));
		PROOF_END(&pr[i]);
	}
	for (i = 0; i < 2; i++) {
		close(a[i]);
		close(q[i]);
	}
	if (variant->sdp && sdp_expected_transport() == SDP_TRANSPORT_RDMA) {
		EXPECT_LE(retries + 2, sdp_stat("ConnectRetries"));
		EXPECT_EQ(failed + 2, sdp_stat("ConnectFailed"));
	}
	close(l);
}

/*
 * Clients that reset (SO_LINGER 0) while their connections wait in the
 * accept queue: accept() still returns each, and its reads end as TCP's
 * reset children's do, after the bytes that came first. Over RDMA, a child
 * with nothing to read lets its QP go at once, not at accept(); one with
 * bytes keeps them readable.
 */
TEST_F(sock, reset_in_accept_queue)
{
	struct linger lin = { .l_onoff = 1, .l_linger = 0 };
	bool rdma = variant->sdp && sdp_expected_transport() == SDP_TRANSPORT_RDMA;
	struct sockaddr_storage ss;
	struct sdp_info info[3];
	struct sdp_qp_state q;
	int c[3], a, i, k, data = 0, resets = 0, freed = 0;
	socklen_t len;
	char buf[16];
	ssize_t n;
	int l = sdp_listener(self->family, self->ip, 8, &ss, &len);

	ASSERT_LE(0, l);
	for (i = 0; i < 3; i++) {
		c[i] = sdp_connect(self->family, &ss, len);
		ASSERT_LE(0, c[i]);
		if (rdma) {
			/* the child's QP, the client's peer */
			ASSERT_EQ(0, sdp_info(c[i], &info[i]));
			ASSERT_EQ(0, sdp_qp_state(info[i].ibdev, info[i].dest_qp_num, &q));
			ASSERT_EQ(info[i].qp_num, q.rqpn);
		}
	}
	/* the last one's bytes arrive before its reset */
	ASSERT_EQ(4, send(c[2], "data", 4, 0));
	for (k = 0; k < 200 && sdp_getint(c[2], SOL_SOCKET, SO_ERROR) == 0; k++) {
		int out = -1;

		if (!ioctl(c[2], SIOCOUTQ, &out) && !out)
			break;
		usleep(10000);
	}
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, setsockopt(c[i], SOL_SOCKET, SO_LINGER, &lin, sizeof(lin)));
		close(c[i]);
	}
	if (rdma) {
		/* the teardown is a work item: a moment */
		for (i = 0; i < 2; i++) {
			for (k = 0; k < 50 && !sdp_qp_state(info[i].ibdev, info[i].dest_qp_num, &q); k++)
				usleep(100000);
			freed += !!sdp_qp_state(info[i].ibdev, info[i].dest_qp_num, &q);
		}
		EXPECT_EQ(2, freed) TH_LOG("the queued children without data kept their QPs");
		EXPECT_EQ(0, sdp_qp_state(info[2].ibdev, info[2].dest_qp_num, &q));
	}
	for (i = 0; i < 3; i++) {
		a = accept(l, NULL, NULL);
		ASSERT_LE(0, a);
		n = recv(a, buf, sizeof(buf), 0);
		if (n == 4 && !memcmp(buf, "data", 4)) {
			data++;
			n = recv(a, buf, sizeof(buf), 0);
		}
		if (n == -1 && errno == ECONNRESET)
			resets++;
		else
			TH_LOG("accepted %d: read %zd (%s)", i, n, n < 0 ? strerror(errno) : "");
		close(a);
	}
	EXPECT_EQ(1, data);
	EXPECT_EQ(3, resets);
	close(l);
	if (rdma && _metadata->passed) {
		fprintf(stderr, "# PROOF rdma %s: 3 children's QPs each the peer of a client's, 2 freed before accept()\n",
			info[0].ibdev);
		self->proved = true;
	} else if (variant->sdp && !rdma && _metadata->passed) {
		fprintf(stderr, "# PROOF fallback\n");
		self->proved = true;
	}
}

/*
 * Clients that reset the moment connect() returns, before the server's end
 * may know it is established (over RDMA the client's DREQ can overtake the
 * server's established event): each still reaches accept(), reset, as TCP
 * children whose RST followed the handshake.
 */
TEST_F(sock, reset_as_soon_as_connected)
{
	struct linger lin = { .l_onoff = 1, .l_linger = 0 };
	bool rdma = variant->sdp && sdp_expected_transport() == SDP_TRANSPORT_RDMA;
	long long opens = sdp_stat("PassiveOpens");
	struct sockaddr_storage ss;
	int i, n = 64, accepted = 0, resets = 0;
	socklen_t len;
	char b;
	int l = sdp_listener(self->family, self->ip, n, &ss, &len);

	ASSERT_LE(0, l);
	for (i = 0; i < n; i++) {
		int c = sdp_connect(self->family, &ss, len);

		ASSERT_LE(0, c);
		if (variant->sdp)
			ASSERT_EQ(sdp_expected_transport(), sdp_transport(c));
		ASSERT_EQ(0, setsockopt(c, SOL_SOCKET, SO_LINGER, &lin, sizeof(lin)));
		close(c);
	}
	/* over RDMA each child joins the queue when its teardown runs */
	while (accepted < n && (sdp_poll1(l, POLLIN, 10000) & POLLIN)) {
		int a = accept(l, NULL, NULL);

		ASSERT_LE(0, a);
		accepted++;
		if (recv(a, &b, 1, 0) == -1 && errno == ECONNRESET)
			resets++;
		close(a);
	}
	EXPECT_EQ(n, accepted);
	EXPECT_EQ(n, resets);
	close(l);
	if (rdma) {
		EXPECT_EQ(n, sdp_stat("PassiveOpens") - opens);
		if (_metadata->passed)
			fprintf(stderr, "# PROOF rdma %d connections over RDMA, each accepted reset\n", n);
		self->proved = true;
	} else if (variant->sdp && _metadata->passed) {
		fprintf(stderr, "# PROOF fallback\n");
		self->proved = true;
	}
}

/* A connect() waiting on a full backlog: EINTR, then it completes. */
TEST_F(sock, signal_interrupts_connect)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int l = sdp_listener(self->family, self->ip, 0, &ss, &len);
	int c[3], a[3], i, k;
	struct sdp_proof pr;

	ASSERT_LE(0, l);
	/* backlog 0 holds one connection; fill it */
	for (i = 0; i < 2; i++) {
		c[i] = socket(self->family, SOCK_STREAM | SOCK_NONBLOCK, 0);
		connect(c[i], (struct sockaddr *)&ss, len);
	}
	usleep(500000);
	c[2] = socket(self->family, SOCK_STREAM, 0);
	arm_alarm(0, 300);
	EXPECT_EQ(-1, connect(c[2], (struct sockaddr *)&ss, len));
	EXPECT_EQ(EINTR, errno);
	/* The attempt goes on in the background (a blocking call would wait). */
	ASSERT_EQ(0, fcntl(c[2], F_SETFL, O_NONBLOCK));
	EXPECT_EQ(-1, connect(c[2], (struct sockaddr *)&ss, len));
	EXPECT_EQ(EALREADY, errno);
	for (i = 0; i < 3; i++) {
		a[i] = accept(l, NULL, NULL);
		ASSERT_LE(0, a[i]);
	}
	/* the interrupted one connected, over what SDP uses */
	ASSERT_NE(0, sdp_poll1(c[2], POLLOUT, 10000) & POLLOUT);
	k = sdp_peer_of(c[2], a, 3);
	ASSERT_LE(0, k);
	PROOF_BEGIN(&pr, c[2], a[k]);
	EXPECT_EQ(1, send(c[2], "i", 1, 0));
	EXPECT_EQ(1, recv(a[k], &i, 1, 0));
	PROOF_END(&pr);
	for (i = 0; i < 3; i++) {
		close(a[i]);
		close(c[i]);
	}
	close(l);
}

TEST_F(sock, tcp_maxseg_before_connect)
{
	int fd = socket(self->family, SOCK_STREAM, 0);

	EXPECT_EQ(0, sdp_setint(fd, SOL_TCP, TCP_MAXSEG, 1000));
	EXPECT_EQ(1000, sdp_getint(fd, SOL_TCP, TCP_MAXSEG));
	EXPECT_EQ(-EINVAL, sdp_setint(fd, SOL_TCP, TCP_MAXSEG, 10));
	close(fd);
}

TEST_F(sock, ipv6_v6only)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, c;

	if (!strchr(self->ip, ':'))
		SKIP(return, "IPv6 only");
	fd = socket(self->family, SOCK_STREAM, 0);
	ASSERT_EQ(0, sdp_setint(fd, SOL_IPV6, IPV6_V6ONLY, 1));
	EXPECT_EQ(1, sdp_getint(fd, SOL_IPV6, IPV6_V6ONLY));
	len = sdp_addr(&ss, "::", 0);
	ASSERT_EQ(0, bind(fd, (struct sockaddr *)&ss, len));
	ASSERT_EQ(0, listen(fd, 1));
	ASSERT_EQ(0, getsockname(fd, (struct sockaddr *)&ss, &len));
	/* a v4-mapped destination is unreachable from a v6-only socket */
	c = socket(self->family, SOCK_STREAM, 0);
	ASSERT_EQ(0, sdp_setint(c, SOL_IPV6, IPV6_V6ONLY, 1));
	len = sdp_addr(&ss, "::ffff:198.18.0.1", sdp_port(&ss));
	EXPECT_EQ(-1, connect(c, (struct sockaddr *)&ss, len));
	EXPECT_EQ(ENETUNREACH, errno);
	close(c);
	close(fd);
}

/* A dual-stack listener takes IPv4 clients and shows them v4-mapped. */
TEST_F(sock, ipv6_dual_stack_v4_client)
{
	struct sockaddr_storage ss, peer;
	socklen_t len, plen = sizeof(peer);
	int v4 = self->family == AF_INET6 ? AF_INET : self->family;
	struct sdp_proof pr;
	int l, c, a;
	char text[64];

	if (!strchr(self->ip, ':'))
		SKIP(return, "IPv6 only");
	l = socket(self->family, SOCK_STREAM, 0);
	ASSERT_EQ(0, sdp_setint(l, SOL_IPV6, IPV6_V6ONLY, 0));
	len = sdp_addr(&ss, "::", 0);
	ASSERT_EQ(0, bind(l, (struct sockaddr *)&ss, len));
	ASSERT_EQ(0, listen(l, 4));
	ASSERT_EQ(0, getsockname(l, (struct sockaddr *)&ss, &len));
	len = sdp_addr(&ss, SDP_A, sdp_port(&ss));
	c = sdp_connect(v4, &ss, len);
	ASSERT_LE(0, c) TH_LOG("connect: %s", strerror(errno));
	a = accept(l, (struct sockaddr *)&peer, &plen);
	ASSERT_LE(0, a);
	ASSERT_EQ(AF_INET6, peer.ss_family);
	inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&peer)->sin6_addr, text, sizeof(text));
	EXPECT_STREQ("::ffff:198.18.0.1", text);
	PROOF_BEGIN(&pr, c, a);
	EXPECT_EQ(1, send(c, "4", 1, 0));
	EXPECT_EQ(1, recv(a, text, 1, 0));
	PROOF_END(&pr);
	close(a);
	close(c);
	close(l);
}

/* SDP's own machinery: rings, credits, coalescing, keepalive. */
FIXTURE(sdp) {
	int a, b;
	struct sdp_proof proof;
};

FIXTURE_SETUP(sdp)
{
	self->a = self->b = -1;
	/* The harness runs the body after a SKIP in setup: see NEED_RDMA. */
	if (sdp_expected_transport() != SDP_TRANSPORT_RDMA)
		return;
	ASSERT_EQ(0, sdp_pair(sdp_family(), SDP_A, &self->a, &self->b));
	ASSERT_EQ(0, sdp_proof_begin(&self->proof, self->a, self->b))
		TH_LOG("proof: %s", strerror(errno));
}

#define NEED_RDMA() do {						\
	if (self->a < 0)						\
		SKIP(return, "SDP's own machinery needs RDMA");		\
} while (0)

FIXTURE_TEARDOWN(sdp)
{
	if (self->a >= 0)
		SDP_PROVE(&self->proof);
	close(self->a);
	close(self->b);
}

/*
 * @a connects to listener @l, whose child becomes *@b; the proof begins,
 * and @ia, @ib get both ends' SDP_INFO. -1 if any step fails.
 */
static int ring_pair(int l, int a, int *b, struct sdp_proof *pr,
		     struct sdp_info *ia, struct sdp_info *ib)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(l, (struct sockaddr *)&ss, &len) ||
	    connect(a, (struct sockaddr *)&ss, len))
		return -1;
	*b = accept(l, NULL, NULL);
	if (*b < 0 || sdp_proof_begin(pr, a, *b))
		return -1;
	return sdp_info(a, ia) || sdp_info(*b, ib) ? -1 : 0;
}

/* SO_RCVBUF / SO_SNDBUF set before connecting size the rings. */
TEST(sdp_sockbuf_sizes_rings)
{
	struct sockaddr_storage ss;
	struct sdp_info ia, ib;
	struct sdp_proof pr;
	socklen_t len;
	int l, a, b;

	if (sdp_expected_transport() != SDP_TRANSPORT_RDMA)
		SKIP(return, "rings exist over RDMA only");
	l = socket(sdp_family(), SOCK_STREAM, 0);
	ASSERT_EQ(0, sdp_setint(l, SOL_SOCKET, SO_RCVBUF, 65536));
	len = sdp_addr(&ss, SDP_A, 0);
	ASSERT_EQ(0, bind(l, (struct sockaddr *)&ss, len));
	ASSERT_EQ(0, listen(l, 1));
	a = socket(sdp_family(), SOCK_STREAM, 0);
	/* more than the default's 16 buffers (past wmem_max: the suite is root) */
	ASSERT_EQ(0, sdp_setint(a, SOL_SOCKET, SO_SNDBUFFORCE, 512 * 1024));
	ASSERT_EQ(0, ring_pair(l, a, &b, &pr, &ia, &ib)) TH_LOG("%s", strerror(errno));
	/* the child inherits the listener's doubled 64 KiB: 128 KiB / rcv_size */
	EXPECT_EQ(131072 / ib.rcv_size, ib.rx_bufs);
	/* the send ring: a power of two of them (1 MiB / 16 KiB) */
	EXPECT_EQ(sdp_getint(a, SOL_SOCKET, SO_SNDBUF) / (int)ia.snd_size, (int)ia.tx_bufs);
	EXPECT_LT(16, ia.tx_bufs);
	SDP_PROVE(&pr);
	close(a);
	close(b);
	close(l);
}

/* Writes @v to net.sdp.@name: 0, or -errno as the write or close saw it. */
static int sysctl_write(const char *name, int v)
{
	char path[128], val[16];
	int fd, n, err = 0;

	snprintf(path, sizeof(path), "/proc/sys/net/sdp/%s", name);
	n = snprintf(val, sizeof(val), "%d\n", v);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	if (write(fd, val, n) != n)
		err = -errno;
	close(fd);
	return err;
}

static const char *const ring_sysctls[] = { "buf_size", "rx_bufs", "tx_bufs" };

FIXTURE(ring_sysctls)
{
	int saved[3];
};

FIXTURE_SETUP(ring_sysctls)
{
	int i;

	for (i = 0; i < 3; i++) {
		self->saved[i] = sdp_sysctl(ring_sysctls[i]);
		ASSERT_LT(0, self->saved[i]) TH_LOG("net.sdp.%s", ring_sysctls[i]);
	}
}

FIXTURE_TEARDOWN(ring_sysctls)
{
	int i;

	for (i = 0; i < 3; i++)
		EXPECT_EQ(0, sysctl_write(ring_sysctls[i], self->saved[i]));
}

/*
 * net.sdp.buf_size, rx_bufs and tx_bufs size the rings of the connections
 * set up afterwards, in their own namespace only; out of range is EINVAL.
 */
TEST_F(ring_sysctls, size_the_rings_of_new_connections)
{
	struct sockaddr_storage ss;
	struct sdp_info ia, ib;
	struct sdp_proof pr;
	socklen_t len;
	int l, a, b, st;
	pid_t pid;

	EXPECT_EQ(-EINVAL, sysctl_write("buf_size", 1023));
	EXPECT_EQ(-EINVAL, sysctl_write("buf_size", 131073));
	EXPECT_EQ(-EINVAL, sysctl_write("rx_bufs", 3));
	EXPECT_EQ(-EINVAL, sysctl_write("tx_bufs", 257));
	EXPECT_EQ(self->saved[0], sdp_sysctl("buf_size"));
	ASSERT_EQ(0, sysctl_write("buf_size", 4096));
	ASSERT_EQ(0, sysctl_write("rx_bufs", 8));
	ASSERT_EQ(0, sysctl_write("tx_bufs", 4));
	/* a new namespace starts from the defaults */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(unshare(CLONE_NEWNET) ? 2 :
		      sdp_sysctl("buf_size") == 16384 && sdp_sysctl("rx_bufs") == 16 &&
		      sdp_sysctl("tx_bufs") == 16 ? 0 : 1);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) TH_LOG("status %#x", st);
	if (sdp_expected_transport() != SDP_TRANSPORT_RDMA) {
		SDP_PROVE_LOCAL();
		return;
	}
	l = socket(sdp_family(), SOCK_STREAM, 0);
	len = sdp_addr(&ss, SDP_A, 0);
	ASSERT_EQ(0, bind(l, (struct sockaddr *)&ss, len));
	ASSERT_EQ(0, listen(l, 1));
	a = socket(sdp_family(), SOCK_STREAM, 0);
	ASSERT_EQ(0, ring_pair(l, a, &b, &pr, &ia, &ib)) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(4096, ia.rcv_size);
	EXPECT_EQ(4096, ib.rcv_size);
	EXPECT_EQ(8, ia.rx_bufs);
	EXPECT_EQ(8, ib.rx_bufs);
	EXPECT_EQ(4, ia.tx_bufs);
	EXPECT_EQ(4, ib.tx_bufs);
	SDP_PROVE(&pr);
	close(a);
	close(b);
	close(l);
}

struct bulk_writer {
	int fd;
	size_t len;
	bool fin;	/* shut down writing after */
};

static void *bulk_writer(void *arg)
{
	struct bulk_writer *w = arg;
	char *buf = calloc(1, w->len);

	sdp_write_full(w->fd, buf, w->len);
	if (w->fin)
		shutdown(w->fd, SHUT_WR);
	free(buf);
	return NULL;
}

/* @len bytes written on @from by a thread and read on @to: bytes read. */
static size_t bulk_transfer(int from, int to, size_t len)
{
	struct bulk_writer w = { .fd = from, .len = len };
	static char buf[65536];
	size_t got = 0;
	pthread_t t;

	if (pthread_create(&t, NULL, bulk_writer, &w))
		return 0;
	while (got < len) {
		ssize_t n = recv(to, buf, sizeof(buf), 0);

		if (n <= 0)
			break;
		got += n;
	}
	pthread_join(t, NULL);
	return got;
}

/*
 * SO_RCVLOWAT beyond what the receive ring holds: poll() still reports the
 * data once no more can come until it is read (TCP grows its window to the
 * mark, or reports under memory pressure), so a reader that waits for
 * POLLIN gets every byte.
 */
TEST_F(pair, rcvlowat_beyond_the_ring_still_polls_in)
{
	struct bulk_writer w = { .fd = self->cfd, .len = 4 << 20, .fin = true };
	static char buf[1 << 16];
	size_t got = 0;
	pthread_t t;
	ssize_t n;

	/* (the end, short of the mark, polls in as EOF) */
	ASSERT_EQ(0, sdp_setint(self->sfd, SOL_SOCKET, SO_RCVLOWAT, 1 << 20));
	ASSERT_EQ(0, pthread_create(&t, NULL, bulk_writer, &w));
	while (got < w.len && (sdp_poll1(self->sfd, POLLIN, 10000) & POLLIN) &&
	       (n = recv(self->sfd, buf, sizeof(buf), MSG_DONTWAIT)) > 0)
		got += n;
	EXPECT_EQ(w.len, got) TH_LOG("POLLIN never came, %zu B read", got);
	/* the rest, so that the writer ends */
	while (got < w.len && (n = recv(self->sfd, buf, sizeof(buf), 0)) > 0)
		got += n;
	pthread_join(t, NULL);
	EXPECT_RDMA_RX(self->sfd, w.len);
}

/* Credits ride on data; alone only when needed, never back and forth. */
TEST_F(sdp, credit_updates_bounded_and_quiet_when_idle)
{
	struct sdp_info ia, ib, ia2, ib2;

	NEED_RDMA();

	ASSERT_EQ(1 << 20, bulk_transfer(self->a, self->b, 1 << 20));
	ASSERT_EQ(0, sdp_info(self->b, &ib));
	/* at most one update per two messages of data */
	EXPECT_GE(ib.rx_msgs / 2 + 2, ib.tx_credit_updates);
	usleep(500000);
	ASSERT_EQ(0, sdp_info(self->a, &ia));
	ASSERT_EQ(0, sdp_info(self->b, &ib));
	usleep(500000);
	ASSERT_EQ(0, sdp_info(self->a, &ia2));
	ASSERT_EQ(0, sdp_info(self->b, &ib2));
	EXPECT_EQ(ia.tx_msgs, ia2.tx_msgs);
	EXPECT_EQ(ib.tx_msgs, ib2.tx_msgs);
}

/*
 * Memory follows use: an idle connection holds a few receive buffers and no
 * send buffer; a stream grows the receiver's ring to its full size, and once
 * sent the sender keeps only a few buffers.
 */
/*
 * Rounds of a writer that fills the connection while the reader waits, then
 * a reader that takes it all. The sender runs out of credits in each, which
 * is what grows the receive ring (a reader that keeps up never lets it), so
 * it grows by rounds, not by luck. Rounds it took until @b's ring was
 * whole, everything sent read; -1 if it never was.
 */
static int starve_until_grown(int a, int b, struct sdp_info *ib)
{
	static char buf[1 << 16];
	size_t sent = 0, got = 0;
	int round;
	ssize_t n;

	for (round = 0; round < 8; round++) {
		if (sdp_info(b, ib))
			return -1;
		if (ib->rx_bufs_held == ib->rx_bufs)
			break;
		/* until no send can go: no credit left, the send buffer full */
		do {
			while ((n = send(a, buf, sizeof(buf), MSG_DONTWAIT)) > 0)
				sent += n;
		} while (errno == EAGAIN && (sdp_poll1(a, POLLOUT, 200) & POLLOUT));
		while (got < sent && (n = recv(b, buf, sizeof(buf), 0)) > 0)
			got += n;
	}
	return got == sent && ib->rx_bufs_held == ib->rx_bufs ? round : -1;
}

TEST_F(sdp, rings_grow_with_use)
{
	struct sdp_info ia, ib;

	NEED_RDMA();

	ASSERT_EQ(0, sdp_info(self->a, &ia));
	ASSERT_EQ(0, sdp_info(self->b, &ib));
	EXPECT_EQ(0, ia.tx_bufs_held);
	EXPECT_EQ(0, ib.tx_bufs_held);
	EXPECT_GE(4, ia.rx_bufs_held);
	EXPECT_GE(4, ib.rx_bufs_held);
	EXPECT_LT(ib.rx_bufs_held, ib.rx_bufs);

	ASSERT_LE(0, starve_until_grown(self->a, self->b, &ib));
	usleep(100000);
	ASSERT_EQ(0, sdp_info(self->a, &ia));
	ASSERT_EQ(0, sdp_info(self->b, &ib));
	EXPECT_EQ(ib.rx_bufs, ib.rx_bufs_held);
	EXPECT_GE(2, ia.tx_bufs_held);
	EXPECT_LE(1, ia.tx_bufs_held);
	EXPECT_EQ(0, ib.tx_bufs_held);
}

/*
 * Data messages (control ones left out) that @bursts bursts make: @lead
 * full messages, then @n one-byte writes. Before each burst the reader has
 * taken everything and the peer has returned the credits the burst needs,
 * so that credits never merge writes: what merges them is Nagle alone,
 * while the lead is still in flight. *@inflight counts the bursts whose
 * lead was (SIOCOUTQ) when the small writes began. -1 on a failure, -2 if
 * the credits never came back.
 */
static long long burst_msgs(int a, int b, int bursts, int lead, int n, int *inflight)
{
	static char buf[1 << 20];
	struct sdp_info before, after, now;
	size_t len, got;
	int i, j, outq;
	ssize_t k;

	*inflight = 0;
	if (sdp_info(a, &before))
		return -1;
	len = (size_t)lead * (before.snd_size - SDP_BSDH_LEN);
	if (len > sizeof(buf))
		return -1;
	for (i = 0; i < bursts; i++) {
		for (j = 0; j < 500; j++) {
			if (sdp_info(a, &now))
				return -1;
			if (now.tx_credits > (unsigned int)(lead + n + 1))
				break;
			usleep(10000);
		}
		if (j == 500)
			return -2;
		if (send(a, buf, len, 0) != (ssize_t)len || ioctl(a, SIOCOUTQ, &outq))
			return -1;
		*inflight += outq > 0;
		for (j = 0; j < n; j++)
			if (send(a, "x", 1, 0) != 1)
				return -1;
		for (got = 0; got < len + n; got += k) {
			if (!(sdp_poll1(b, POLLIN, 5000) & POLLIN))
				return -1;
			k = recv(b, buf, len + n - got, 0);
			if (k <= 0)
				return -1;
		}
	}
	if (sdp_info(a, &after))
		return -1;
	return (after.tx_msgs - after.tx_credit_updates) -
	       (before.tx_msgs - before.tx_credit_updates);
}

/* Nagle: small writes while a message is in flight merge, unless TCP_NODELAY. */
TEST_F(sdp, nagle_coalesces_small_writes)
{
	const int bursts = 64, lead = 1, n = 2;
	long long nagle, nodelay;
	struct sdp_info ia, ib;
	int inflight, unused;

	NEED_RDMA();

	/*
	 * Rings grown first. The peer returns credits in batches of half its
	 * ring, so a short burst is what is sure to find its credits back.
	 */
	ASSERT_EQ(0, sdp_setint(self->a, SOL_SOCKET, SO_SNDBUF, 1 << 20));
	ASSERT_EQ(0, sdp_setint(self->b, SOL_SOCKET, SO_RCVBUF, 1 << 20));
	ASSERT_LE(0, starve_until_grown(self->a, self->b, &ib));
	ASSERT_EQ(0, sdp_info(self->a, &ia));
	ASSERT_EQ(0, sdp_info(self->b, &ib));
	TH_LOG("rings: %u send buffers here, %u receive buffers there, %u credits",
	       ia.tx_bufs, ib.rx_bufs, ia.tx_credits);
	nagle = burst_msgs(self->a, self->b, bursts, lead, n, &inflight);
	ASSERT_LE(0, nagle) TH_LOG("-2: fewer than %d credits came back", lead + n + 2);
	ASSERT_EQ(0, sdp_setint(self->a, SOL_TCP, TCP_NODELAY, 1));
	nodelay = burst_msgs(self->a, self->b, bursts, lead, n, &unused);
	ASSERT_LE(0, nodelay) TH_LOG("-2: fewer than %d credits came back", lead + n + 2);
	TH_LOG("%d bursts of %d full message(s) and %d writes of 1 B: %lld messages with Nagle (the lead in flight in %d bursts), %lld with TCP_NODELAY",
	       bursts, lead, n, nagle, inflight, nodelay);
	/* every write its own message, at once */
	EXPECT_EQ(bursts * (lead + n), nodelay);
	/*
	 * A burst whose lead was still in flight holds its small writes and
	 * sends them as one: it saves n - 1 messages, unless the lead
	 * completed between SIOCOUTQ and the first write; half of them must.
	 * (6.1's rxe mostly completes a send within the call: with few such
	 * bursts Nagle has little to wait for, and this half checks nothing.)
	 */
	if (inflight >= bursts / 4)
		EXPECT_GE(nodelay - (long long)inflight / 2 * (n - 1), nagle);
	EXPECT_LE(bursts * (lead + 1), nagle);
}

/* Keepalive probes go out on an idle connection, and only with SO_KEEPALIVE. */
TEST_F(sdp, keepalive_probes_idle_connection)
{
	long long probes = sdp_stat("KeepaliveProbes");
	struct sdp_info a0, b0, a1, b1;
	char buf[2];

	NEED_RDMA();

	ASSERT_EQ(0, sdp_setint(self->a, SOL_TCP, TCP_KEEPIDLE, 1));
	ASSERT_EQ(0, sdp_setint(self->a, SOL_TCP, TCP_KEEPINTVL, 1));
	/* idle without SO_KEEPALIVE: silence */
	ASSERT_EQ(0, sdp_info(self->a, &a0));
	sleep(2);
	ASSERT_EQ(0, sdp_info(self->a, &a1));
	EXPECT_EQ(a0.tx_msgs, a1.tx_msgs);
	EXPECT_EQ(probes, sdp_stat("KeepaliveProbes"));

	ASSERT_EQ(0, sdp_info(self->a, &a0));
	ASSERT_EQ(0, sdp_info(self->b, &b0));
	ASSERT_EQ(0, sdp_setint(self->a, SOL_SOCKET, SO_KEEPALIVE, 1));
	sleep(3);
	ASSERT_EQ(0, sdp_info(self->a, &a1));
	ASSERT_EQ(0, sdp_info(self->b, &b1));
	/* probes at about 1 s and 2 s, each a message the peer took in */
	EXPECT_LE(2, a1.tx_msgs - a0.tx_msgs);
	EXPECT_GE(4, a1.tx_msgs - a0.tx_msgs);
	EXPECT_LE(2, b1.rx_msgs - b0.rx_msgs);
	EXPECT_LE(probes + 2, sdp_stat("KeepaliveProbes"));
	/* the probes did not disturb the connection */
	ASSERT_EQ(2, send(self->a, "ok", 2, 0));
	ASSERT_EQ(2, recv(self->b, buf, 2, MSG_WAITALL));
	EXPECT_EQ(0, memcmp(buf, "ok", 2));
	EXPECT_EQ(0, sdp_getint(self->a, SOL_SOCKET, SO_ERROR));
}

/*
 * TCP_KEEPIDLE on a connection whose keepalive already runs (armed for the
 * default two hours) takes effect at once, as TCP's setsockopt re-arms its
 * timer: probes within seconds.
 */
TEST_F(sdp, keepidle_rearms_running_keepalive)
{
	long long probes;
	struct sdp_info a0, a1;

	NEED_RDMA();

	ASSERT_EQ(0, sdp_setint(self->a, SOL_SOCKET, SO_KEEPALIVE, 1));
	ASSERT_EQ(0, sdp_setint(self->a, SOL_TCP, TCP_KEEPINTVL, 1));
	sleep(1);
	probes = sdp_stat("KeepaliveProbes");
	ASSERT_EQ(0, sdp_info(self->a, &a0));
	ASSERT_EQ(0, sdp_setint(self->a, SOL_TCP, TCP_KEEPIDLE, 1));
	sleep(3);
	ASSERT_EQ(0, sdp_info(self->a, &a1));
	EXPECT_LE(2, a1.tx_msgs - a0.tx_msgs);
	EXPECT_LE(probes + 2, sdp_stat("KeepaliveProbes"));
	EXPECT_EQ(0, sdp_getint(self->a, SOL_SOCKET, SO_ERROR));
}

/*
 * SO_REUSEPORT: listeners sharing a port each get connections, spread by
 * TCP's reuseport hash (SDP asks TCP which listener a connection is for),
 * over RDMA; when one closes, the rest go on. SDP sets SDP_REUSEPORT, as
 * the shim does where the core refuses SO_REUSEPORT for our family (6.1;
 * sdp_socket's reuse sets SO_REUSEPORT directly), and SO_REUSEPORT reads
 * it back. On the wildcard address, as servers listen: rdma_cm's error
 * for that port is not EADDRINUSE, and no listener of the group counts as
 * fallen back.
 */
FIXTURE(rport) {
	int l[4];
	int timeout_ms, ttl;	/* the sysctls as they were */
};

FIXTURE_VARIANT(rport) {
	bool sdp;
	const char *ip;
};

SDP_ORACLE_VARIANT(rport, tcp4) { .sdp = false, .ip = SDP_A };
FIXTURE_VARIANT_ADD(rport, sdp4) { .sdp = true, .ip = SDP_A };
SDP_ORACLE_VARIANT(rport, tcp6) { .sdp = false, .ip = SDP_A6 };
FIXTURE_VARIANT_ADD(rport, sdp6) { .sdp = true, .ip = SDP_A6 };

/*
 * 40 connections in a row, each of which must go over RDMA: a connect slow
 * enough under a debug kernel to fall back (by design) would, through the
 * negative cache, send the rest over TCP too. This test is about who gets
 * the connections.
 */
FIXTURE_SETUP(rport)
{
	for (int i = 0; i < 4; i++)
		self->l[i] = -1;
	if (variant->sdp) {
		self->timeout_ms = sdp_sysctl("connect_timeout_ms");
		self->ttl = sdp_sysctl("negative_cache_ttl");
		sdp_sysctl_set("connect_timeout_ms", 10000);
		sdp_sysctl_set("negative_cache_ttl", 0);
	}
}

FIXTURE_TEARDOWN(rport)
{
	for (int i = 0; i < 4; i++)
		close(self->l[i]);
	if (variant->sdp) {
		sdp_sysctl_set("connect_timeout_ms", self->timeout_ms);
		sdp_sysctl_set("negative_cache_ttl", self->ttl);
	}
}

/* Connect, take it from whichever listener has it, prove a round trip. */
static int rport_one(struct __test_metadata *_metadata, const int *l, int nl,
		     bool sdp, int family, const struct sockaddr_storage *addr,
		     socklen_t alen)
{
	struct pollfd pfd[4];
	struct sdp_proof pr = {};
	int c, s, i, which = -1;
	char b = 0;

	c = sdp_connect(family, addr, alen);
	if (c < 0)
		return -1;
	for (i = 0; i < nl; i++)
		pfd[i] = (struct pollfd){ .fd = l[i], .events = POLLIN };
	if (poll(pfd, nl, 5000) > 0)
		for (i = 0; i < nl && which < 0; i++)
			if (pfd[i].revents & POLLIN)
				which = i;
	s = which < 0 ? -1 : accept(l[which], NULL, NULL);
	if (s >= 0 && sdp) {
		EXPECT_EQ(sdp_expected_transport(), sdp_transport(s))
			TH_LOG("fallback reason %d",
			       sdp_getint(c, SOL_SDP, SDP_FALLBACK_REASON));
		EXPECT_EQ(0, sdp_proof_begin(&pr, c, s));
	}
	EXPECT_EQ(1, send(c, "x", 1, 0));
	EXPECT_EQ(1, recv(s, &b, 1, 0));
	EXPECT_EQ('x', b);
	if (s >= 0) {
		if (sdp)
			SDP_PROVE(&pr);
		else
			SDP_PROVE_TCP(c);
	}
	close(c);
	close(s);
	return which;
}

TEST_F(rport, listeners_share_port_and_connections)
{
	int family = variant_family(variant->sdp, variant->ip);
	int one = 1, got[4] = {}, i, k, x, which;
	struct sockaddr_storage addr;
	struct sdp_info info;
	socklen_t alen;
	double t0;

	alen = sdp_addr(&addr, strchr(variant->ip, ':') ? "::" : "0.0.0.0", 0);
	for (i = 0; i < 4; i++) {
		self->l[i] = socket(family, SOCK_STREAM, 0);
		ASSERT_LE(0, self->l[i]);
		if (variant->sdp) {
			ASSERT_EQ(0, setsockopt(self->l[i], SOL_SDP, SDP_REUSEPORT,
						&one, sizeof(one)));
			EXPECT_EQ(1, sdp_getint(self->l[i], SOL_SDP, SDP_REUSEPORT));
		} else {
			ASSERT_EQ(0, setsockopt(self->l[i], SOL_SOCKET, SO_REUSEPORT,
						&one, sizeof(one)));
		}
		EXPECT_EQ(1, sdp_getint(self->l[i], SOL_SOCKET, SO_REUSEPORT));
		ASSERT_EQ(0, bind(self->l[i], (struct sockaddr *)&addr, alen))
			TH_LOG("bind %d: %s", i, strerror(errno));
		ASSERT_EQ(0, listen(self->l[i], 64));
		ASSERT_EQ(0, getsockname(self->l[i], (struct sockaddr *)&addr, &alen));
		if (variant->sdp)
			EXPECT_EQ(sdp_expected_transport() == SDP_TRANSPORT_RDMA ?
				  SDP_FB_NONE : SDP_FB_POLICY,
				  sdp_getint(self->l[i], SOL_SDP, SDP_FALLBACK_REASON));
	}
	/* without the option, no way in */
	x = socket(family, SOCK_STREAM, 0);
	EXPECT_EQ(-1, bind(x, (struct sockaddr *)&addr, alen));
	EXPECT_EQ(EADDRINUSE, errno);
	close(x);

	alen = sdp_addr(&addr, variant->ip, sdp_port(&addr));
	for (k = 0; k < 32; k++) {
		which = rport_one(_metadata, self->l, 4, variant->sdp, family,
				  &addr, alen);
		ASSERT_LE(0, which) TH_LOG("connection %d: nobody accepted", k);
		got[which]++;
	}
	/* 32 connections over 4: each gets some (all in one: p < 1e-3) */
	for (i = 0; i < 4; i++) {
		EXPECT_LT(0, got[i]) TH_LOG("listener %d: spread %d %d %d %d", i,
					    got[0], got[1], got[2], got[3]);
	}

	/* The first, whose the port's RDMA listener is, goes: another takes it. */
	close(self->l[0]);
	self->l[0] = -1;
	if (variant->sdp && sdp_expected_transport() == SDP_TRANSPORT_RDMA) {
		for (t0 = sdp_now(); sdp_now() - t0 < 10; usleep(50000)) {
			for (i = 1; i < 4; i++)
				if (!sdp_info(self->l[i], &info) &&
				    info.transport == SDP_TRANSPORT_RDMA)
					break;
			if (i < 4)
				break;
		}
		ASSERT_GT(4, i) TH_LOG("no listener listens over RDMA again");
	}
	for (k = 0; k < 8; k++)
		ASSERT_LE(0, rport_one(_metadata, self->l + 1, 3, variant->sdp,
				       family, &addr, alen));
}

/*
 * SO_BINDTODEVICE, as TCP honours it: a connect goes out through the bound
 * netdev (over RDMA: through that netdev's device, or to TCP and its
 * answer when it cannot), and a listener bound to a netdev takes only
 * what arrives on it. In one VM, SDP_A is v1's: from v1 it is reached
 * locally; from v2 only by ARP across the veth, which v1 does not answer
 * for a sender address of its own host (TCP: EHOSTUNREACH).
 */
FIXTURE(bdev) {
	int l, c, s;
};

FIXTURE_VARIANT(bdev) {
	bool sdp;
};

SDP_ORACLE_VARIANT(bdev, tcp4) { .sdp = false };
FIXTURE_VARIANT_ADD(bdev, sdp4) { .sdp = true };

FIXTURE_SETUP(bdev)
{
	self->l = self->c = self->s = -1;
}

FIXTURE_TEARDOWN(bdev)
{
	close(self->s);
	close(self->c);
	close(self->l);
}

/* A socket bound to @dev (NULL: unbound). */
static int bdev_socket(int family, const char *dev)
{
	int fd = socket(family, SOCK_STREAM, 0);

	if (fd >= 0 && dev &&
	    setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, dev, strlen(dev) + 1)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* A listener on every address, bound to @dev; its port. */
static int bdev_listener(int family, const char *dev, int *fd)
{
	struct sockaddr_storage any;
	socklen_t alen = sdp_addr(&any, "0.0.0.0", 0);

	*fd = bdev_socket(family, dev);
	if (*fd < 0 || bind(*fd, (struct sockaddr *)&any, alen) || listen(*fd, 8) ||
	    getsockname(*fd, (struct sockaddr *)&any, &alen))
		return -1;
	return sdp_port(&any);
}

TEST_F(bdev, connect_and_listen_follow_the_device)
{
	int family = variant_family(variant->sdp, SDP_A);
	struct sockaddr_storage to;
	struct sdp_proof pr = {};
	struct sdp_info ci, si;
	socklen_t alen;
	char b = 0;
	int port, ttl;

	/* bound to v1 at both ends: over rxe1, as TCP goes */
	port = bdev_listener(family, "v1", &self->l);
	ASSERT_LT(0, port) TH_LOG("listener: %s", strerror(errno));
	self->c = bdev_socket(family, "v1");
	ASSERT_LE(0, self->c);
	alen = sdp_addr(&to, SDP_A, port);
	ASSERT_EQ(0, connect(self->c, (struct sockaddr *)&to, alen))
		TH_LOG("connect: %s", strerror(errno));
	self->s = accept(self->l, NULL, NULL);
	ASSERT_LE(0, self->s);
	if (variant->sdp) {
		ASSERT_EQ(sdp_expected_transport(), sdp_transport(self->c));
		ASSERT_EQ(0, sdp_proof_begin(&pr, self->c, self->s));
	}
	ASSERT_EQ(1, send(self->c, "d", 1, 0));
	ASSERT_EQ(1, recv(self->s, &b, 1, 0));
	EXPECT_EQ('d', b);
	if (variant->sdp) {
		SDP_PROVE(&pr);
		if (sdp_expected_transport() == SDP_TRANSPORT_RDMA) {
			ASSERT_EQ(0, sdp_info(self->c, &ci));
			ASSERT_EQ(0, sdp_info(self->s, &si));
			EXPECT_STREQ("rxe1", ci.ibdev);
			EXPECT_STREQ("rxe1", si.ibdev);
		}
	} else {
		SDP_PROVE_TCP(self->c);
	}
	close(self->c);
	close(self->s);
	self->s = -1;

	/*
	 * The failures below would put SDP_A:port in the negative cache for
	 * 60 s, and a later test's listener may get the same port: none.
	 */
	ttl = sdp_sysctl("negative_cache_ttl");
	sdp_sysctl_set("negative_cache_ttl", 0);

	/* bound to v2, the same destination: unreachable for TCP, so for SDP */
	self->c = bdev_socket(family, "v2");
	ASSERT_LE(0, self->c);
	EXPECT_EQ(-1, connect(self->c, (struct sockaddr *)&to, alen));
	EXPECT_EQ(EHOSTUNREACH, errno);
	close(self->c);
	close(self->l);

	/* a listener bound to v2 is not reached by local traffic to v1 */
	port = bdev_listener(family, "v2", &self->l);
	ASSERT_LT(0, port);
	self->c = bdev_socket(family, NULL);
	alen = sdp_addr(&to, SDP_A, port);
	EXPECT_EQ(-1, connect(self->c, (struct sockaddr *)&to, alen));
	EXPECT_EQ(ECONNREFUSED, errno);
	EXPECT_EQ(0, sdp_poll1(self->l, POLLIN, 0) & POLLIN);
	if (ttl >= 0)
		sdp_sysctl_set("negative_cache_ttl", ttl);
}

TEST_HARNESS_MAIN
