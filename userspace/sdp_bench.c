// SPDX-License-Identifier: GPL-2.0
/*
 * sdp_bench: the socket workloads of `make bench` that no packaged tool
 * measures over family 27: ping-pong latency with percentiles (blocking or
 * event-driven), parallel and bidirectional streams, many concurrent
 * streams, and idle connections held open for a memory count. The same code
 * runs over TCP, SDP, SMC (AF_SMC) and, under LD_PRELOAD=librspreload.so
 * with -f tcp, rsockets, so the paths differ only in the transport.
 *
 *   sdp_bench -l [-f FAM] ADDR PORT                 serve any of the below
 *   sdp_bench [-f FAM] [-w WAIT] ADDR PORT pp SIZE N SECS
 *                                                   N round trips (or SECS)
 *   sdp_bench [-f FAM] [-P STREAMS] [-z] [-Z THRESH] [-C USEC] ADDR PORT stream tx|rx|bidir SIZE SECS
 *   sdp_bench [-f FAM] [-w WAIT] [-P DIALERS] ADDR PORT many N SIZE SECS
 *                                                   N streams in one thread
 *   sdp_bench [-f FAM] [-P DIALERS] ADDR PORT hold N   N idle connections
 *
 * FAM is tcp (default), sdp or smc. WAIT is how both ends wait for their
 * sockets: block (blocking calls, pp's default), epoll (non-blocking
 * sockets, epoll_wait() before each read; many's default) or poll (the
 * same with poll(), which librspreload turns into rsockets' rpoll();
 * rsockets has no epoll). The server takes WAIT from the client's request.
 * Clients print one line of key=value:
 *   pp:     rtt_median_us= rtt_p99_us= rtt_mean_us= n= wait= transport=
 *   stream: mbytes_per_s= bytes= secs= streams= transport= [zc_copied=]
 *           [compute_us=]
 *   many:   mbytes_per_s= bytes= secs= conns= moved= min_kib= median_kib=
 *           max_kib= wait= transport= rdma=
 *   hold:   "started", then on a line on stdin dials, "ready n=N
 *           transport= rdma= secs=" once all are up, then waits for EOF on
 *           stdin.
 * transport is rdma or tcp for SDP (SDP_INFO), the family name otherwise;
 * rdma= counts the connections over RDMA (SDP only; 0 otherwise).
 * -z sends a stream as TCP's MSG_ZEROCOPY users do: SO_ZEROCOPY, a ring of
 * buffers, each written again only once the error queue says the kernel is
 * done with it; zc_copied= counts the sends notified as copied.
 * -C spins USEC microseconds after each send of a stream (the sender's
 * computation, overlapped with the transfer where the send returns first).
 * -Z sets SDP_ZCOPY_THRESH on every SDP socket this end opens (a server's
 * accepted ones inherit it): 0 copies its sends and reads, so a pair may
 * have zero-copy sends without reads in place, or reads without sends.
 * Both ends raise RLIMIT_NOFILE to hold tens of thousands of sockets.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <linux/sdp.h>

#include "sdp_family.h"
#include "sdp_zc_note.h"

#ifndef AF_SMC
#define AF_SMC 43
#endif

#define MAGIC 0x53425031u	/* "SBP1" */

enum mode { M_PP = 1, M_TX, M_RX, M_BIDIR, M_HOLD, M_SINK };
enum wait { W_BLOCK, W_POLL, W_EPOLL };
static const char *const wait_names[] = { "block", "poll", "epoll" };

/* Sent by the client first on every connection, network order. */
struct req {
	uint32_t magic, mode, size, msecs, wait;
};

static int fam = AF_INET;
static const char *fam_name = "tcp";
static int wait_mode = -1;	/* -w; per workload default when unset */
static bool msg_zc;		/* -z */
static int zc_thresh = -1;	/* -Z; unset: the namespace's */
static double compute_s;	/* -C, in seconds */
static unsigned long long zc_copied;
static struct sockaddr_in sin_addr = { .sin_family = AF_INET };

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
	fprintf(stderr, "sdp_bench: %s: %s\n", what, strerror(errno));
	exit(1);
}

/*
 * How one connection waits: blocking calls (w == NULL or W_BLOCK), or a
 * non-blocking socket and poll() or its own epoll set.
 */
struct waiter {
	int fd, wait, epfd;
	uint32_t events;	/* what epfd watches now */
};

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static int waiter_init(struct waiter *w, int fd, int wait)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	*w = (struct waiter){ .fd = fd, .wait = wait, .epfd = -1 };
	if (wait == W_BLOCK)
		return 0;
	if (set_nonblock(fd))
		return -1;
	if (wait == W_EPOLL) {
		w->epfd = epoll_create1(EPOLL_CLOEXEC);
		if (w->epfd < 0 || epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &ev))
			return -1;
		w->events = EPOLLIN;
	}
	return 0;
}

static void waiter_done(struct waiter *w)
{
	if (w->epfd >= 0)
		close(w->epfd);
	w->epfd = -1;
}

/* Until the socket is readable (POLLIN) or writable (POLLOUT). */
static int waiter_wait(struct waiter *w, short events)
{
	for (;;) {
		int n;

		if (w->wait == W_POLL) {
			struct pollfd p = { .fd = w->fd, .events = events };

			n = poll(&p, 1, -1);
		} else {
			struct epoll_event ev = { .events = events == POLLIN ? EPOLLIN : EPOLLOUT,
						  .data.fd = w->fd };

			if (ev.events != w->events) {
				if (epoll_ctl(w->epfd, EPOLL_CTL_MOD, w->fd, &ev))
					return -1;
				w->events = ev.events;
			}
			n = epoll_wait(w->epfd, &ev, 1, -1);
		}
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -1;
	}
}

static int blocking(const struct waiter *w)
{
	return !w || w->wait == W_BLOCK;
}

/* Sends first, and waits only when the socket is full. */
static int write_allw(int fd, const char *p, size_t len, struct waiter *w)
{
	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && !blocking(w)) {
			if (waiter_wait(w, POLLOUT))
				return -1;
			continue;
		}
		if (n <= 0)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

static int write_all(int fd, const char *p, size_t len)
{
	return write_allw(fd, p, len, NULL);
}

/*
 * 1 when all read, 0 on EOF before the first byte, -1 otherwise. An
 * event-driven reader waits for readiness before each receive, as a server
 * on epoll would.
 */
static int read_allw(int fd, char *p, size_t len, struct waiter *w)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n;

		if (!blocking(w) && waiter_wait(w, POLLIN))
			return -1;
		n = recv(fd, p + got, len - got, 0);
		if (n < 0 && (errno == EINTR || (!blocking(w) && (errno == EAGAIN ||
								  errno == EWOULDBLOCK))))
			continue;
		if (n == 0 && got == 0)
			return 0;
		if (n <= 0)
			return -1;
		got += n;
	}
	return 1;
}

static int read_all(int fd, char *p, size_t len)
{
	return read_allw(fd, p, len, NULL);
}

/* Up to 64k descriptors: 10,000 idle connections, and rsockets' 3 an end. */
static void more_files(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return;
	if (rl.rlim_max < 65536) {
		struct rlimit want = { 65536, 65536 };

		if (!setrlimit(RLIMIT_NOFILE, &want))
			return;		/* root: raised the hard limit */
	}
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
}

/* Read until EOF; returns the bytes read, or -1. */
static long long drain(int fd, char *buf, size_t size)
{
	long long total = 0;

	for (;;) {
		ssize_t n = recv(fd, buf, size, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			return total;
		total += n;
	}
}

/*
 * -C: the sender's computation between two sends (a spin on the clock, as
 * the AZ-SDP paper's overlap experiment): what a send that returns before
 * its bytes are moved lets overlap with the transfer.
 */
static void compute(void)
{
	double end;

	if (!compute_s)
		return;
	end = now_s() + compute_s;
	while (now_s() < end)
		;
}

/* Write SIZE-byte chunks until SECS have passed; returns the bytes sent. */
static long long pour(int fd, const char *buf, size_t size, double secs)
{
	double end = now_s() + secs;
	long long total = 0;
	unsigned int i;

	do {
		/* look at the clock every 1 MiB or so, not every small write */
		unsigned int every = size >= (1 << 20) ? 1 : (1 << 20) / size;

		for (i = 0; i < every; i++) {
			if (write_all(fd, buf, size))
				return total;
			total += size;
			compute();
		}
	} while (now_s() < end);
	return total;
}

/*
 * The error queue's zero-copy notifications so far: *@done is the id after
 * the last one notified. Waits for one when @wait. -1 on an error.
 */
static int zc_reap(int fd, unsigned int *done, bool wait)
{
	struct pollfd p = { .fd = fd, .events = POLLERR };

	for (;;) {
		struct sock_extended_err e;
		int err = sdp_zc_note(fd, &e);

		if (err == -EAGAIN) {
			if (!wait)
				return 0;
			if (poll(&p, 1, 10000) <= 0)
				return -1;
			continue;
		}
		if (err)
			return -1;
		if (e.ee_code & SO_EE_CODE_ZEROCOPY_COPIED)
			__atomic_add_fetch(&zc_copied, e.ee_data - e.ee_info + 1, __ATOMIC_RELAXED);
		*done = e.ee_data + 1;
		wait = false;
	}
}

/*
 * pour() by MSG_ZEROCOPY from a ring of buffers: a buffer is used again
 * once every send from it was notified; all are, before it returns.
 */
static long long pour_zc(int fd, size_t size, double secs)
{
	enum { RING = 8 };
	unsigned int calls = 0, done = 0, last[RING] = { 0 }, k = 0;
	double end = now_s() + secs;
	long long total = 0;
	char *buf = calloc(RING, size);
	int one = 1;

	if (!buf)
		die("calloc");
	if (setsockopt(fd, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof(one)) &&
	    (errno != EOPNOTSUPP ||
	     setsockopt(fd, SOL_SDP, SDP_ZEROCOPY, &one, sizeof(one))))
		die("SO_ZEROCOPY");
	do {
		size_t off = 0;

		while (done < last[k])
			if (zc_reap(fd, &done, true))
				die("MSG_ERRQUEUE");
		while (off < size) {
			ssize_t n = send(fd, buf + k * size + off, size - off,
					 MSG_NOSIGNAL | MSG_ZEROCOPY);

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				goto out;
			off += n;
			last[k] = ++calls;
		}
		total += size;
		k = (k + 1) % RING;
		if (zc_reap(fd, &done, false))
			die("MSG_ERRQUEUE");
		compute();
	} while (now_s() < end);
out:
	while (done < calls)
		if (zc_reap(fd, &done, true))
			die("MSG_ERRQUEUE");
	free(buf);
	return total;
}

static const char *transport(int fd)
{
	struct sdp_info info;
	socklen_t len = sizeof(info);

	if (fam == AF_INET || fam == AF_SMC)
		return fam_name;
	if (getsockopt(fd, SOL_SDP, SDP_INFO, &info, &len))
		return "unknown";
	return info.transport == SDP_TRANSPORT_RDMA ? "rdma" : "tcp";
}

static void nodelay(int fd)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* ---- server ---- */

struct pour_arg {
	int fd;
	char *buf;
	size_t size;
	double secs;
};

static void *pour_thread(void *p)
{
	struct pour_arg *a = p;

	pour(a->fd, a->buf, a->size, a->secs);
	return NULL;
}

struct conn {
	int fd;
	struct req r;
};

static void *serve_conn(void *p)
{
	struct conn *c = p;
	int fd = c->fd;
	size_t size = ntohl(c->r.size);
	char *buf = calloc(1, size);

	if (!buf)
		goto out;
	switch (ntohl(c->r.mode)) {
	case M_PP: {
		struct waiter w;

		nodelay(fd);
		if (waiter_init(&w, fd, ntohl(c->r.wait)))
			break;
		while (read_allw(fd, buf, size, &w) == 1)
			if (write_allw(fd, buf, size, &w))
				break;
		waiter_done(&w);
		break;
	}
	case M_TX:	/* the client sends: we receive until EOF */
		drain(fd, buf, size);
		break;
	case M_RX:	/* the client receives: we send for msecs */
		pour(fd, buf, size, ntohl(c->r.msecs) / 1e3);
		shutdown(fd, SHUT_WR);
		drain(fd, buf, size);
		break;
	case M_BIDIR: {
		struct pour_arg a = { fd, calloc(1, size), size, ntohl(c->r.msecs) / 1e3 };
		pthread_t t;

		if (!a.buf || pthread_create(&t, NULL, pour_thread, &a)) {
			free(a.buf);
			break;
		}
		drain(fd, buf, size);
		pthread_join(t, NULL);
		free(a.buf);
		break;
	}
	}
out:
	/* Our EOF tells the client that everything it sent has arrived. */
	shutdown(fd, SHUT_WR);
	close(fd);
	free(buf);
	free(c);
	return NULL;
}

/*
 * The server's end of `many`: one thread reads every sink connection until
 * its EOF, waiting on all of them at once with epoll or poll (the first
 * sink connection's choice), then closes it. The acceptor hands it new
 * connections through a list it looks at every 20 ms.
 */
static pthread_mutex_t sink_lock = PTHREAD_MUTEX_INITIALIZER;
static int *sink_new, sink_nnew, sink_cap, sink_wait = -1;

static void *sink_thread(void *arg)
{
	size_t bufsz = 256 << 10, nfds = 0, cap = 0, rcap = 256, i, j, nready;
	char *buf = malloc(bufsz);
	int *ready = malloc(rcap * sizeof(*ready));
	struct pollfd *pfd = NULL;
	struct epoll_event ev[256];
	int epfd = -1, wait = (int)(intptr_t)arg, n;

	if (!buf || !ready)
		die("malloc");
	if (wait == W_EPOLL && (epfd = epoll_create1(EPOLL_CLOEXEC)) < 0)
		die("epoll_create1");
	for (;;) {
		pthread_mutex_lock(&sink_lock);
		for (i = 0; i < (size_t)sink_nnew; i++) {
			int fd = sink_new[i];

			if (wait == W_EPOLL) {
				struct epoll_event e = { .events = EPOLLIN, .data.fd = fd };

				if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &e))
					close(fd);
				continue;
			}
			if (nfds == cap) {
				cap = cap ? 2 * cap : 1024;
				pfd = realloc(pfd, cap * sizeof(*pfd));
				ready = realloc(ready, (rcap = cap) * sizeof(*ready));
				if (!pfd || !ready)
					die("realloc");
			}
			pfd[nfds++] = (struct pollfd){ .fd = fd, .events = POLLIN };
		}
		sink_nnew = 0;
		pthread_mutex_unlock(&sink_lock);

		nready = 0;
		if (wait == W_EPOLL) {
			n = epoll_wait(epfd, ev, 256, 20);
			for (j = 0; n > 0 && j < (size_t)n; j++)
				ready[nready++] = ev[j].data.fd;
		} else {
			n = poll(pfd, nfds, 20);
			for (j = 0; n > 0 && j < nfds; j++)
				if (pfd[j].revents)
					ready[nready++] = pfd[j].fd;
		}
		if (n < 0 && errno != EINTR)
			die("sink wait");
		for (j = 0; j < nready; j++) {
			int fd = ready[j];
			ssize_t got = recv(fd, buf, bufsz, 0);

			if (got > 0 || (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK ||
						    errno == EINTR)))
				continue;
			/* EOF (or an error): all has arrived; our EOF says so */
			if (epfd >= 0)
				epoll_ctl(epfd, EPOLL_CTL_DEL, fd, NULL);
			for (i = 0; epfd < 0 && i < nfds; i++)
				if (pfd[i].fd == fd)
					pfd[i].fd = -1;
			shutdown(fd, SHUT_WR);
			close(fd);
		}
		if (epfd < 0) {
			for (i = j = 0; i < nfds; i++)
				if (pfd[i].fd >= 0)
					pfd[j++] = pfd[i];
			nfds = j;
		}
	}
	return NULL;
}

static void sink_add(int fd, int wait)
{
	pthread_t t;

	if (set_nonblock(fd)) {
		close(fd);
		return;
	}
	pthread_mutex_lock(&sink_lock);
	if (sink_wait < 0) {
		sink_wait = wait == W_POLL ? W_POLL : W_EPOLL;
		if (pthread_create(&t, NULL, sink_thread, (void *)(intptr_t)sink_wait))
			die("pthread_create");
		pthread_detach(t);
	}
	if (sink_nnew == sink_cap) {
		sink_cap = sink_cap ? 2 * sink_cap : 1024;
		sink_new = realloc(sink_new, sink_cap * sizeof(*sink_new));
		if (!sink_new)
			die("realloc");
	}
	sink_new[sink_nnew++] = fd;
	pthread_mutex_unlock(&sink_lock);
}

/* -Z: the socket's zero-copy threshold, if set and it is SDP's. */
static int zc_thresh_set(int fd)
{
	if (zc_thresh < 0 || fam != sdp_family())
		return 0;
	return setsockopt(fd, SOL_SDP, SDP_ZCOPY_THRESH, &zc_thresh, sizeof(zc_thresh));
}

static void __attribute__((noreturn)) serve(void)
{
	int one = 1, l = socket(fam, SOCK_STREAM, 0);
	pthread_attr_t attr;

	if (l < 0 || zc_thresh_set(l) || setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(l, (struct sockaddr *)&sin_addr, sizeof(sin_addr)) || listen(l, 1024))
		die("listen");
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 << 10);
	for (;;) {
		struct conn *c = malloc(sizeof(*c));
		pthread_t t;

		if (!c)
			die("malloc");
		c->fd = accept(l, NULL, NULL);
		if (c->fd < 0) {
			free(c);
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			die("accept");
		}
		/*
		 * Our clients send the request right after connect(). Held
		 * connections get no thread: their memory is the sockets'.
		 */
		if (read_all(c->fd, (char *)&c->r, sizeof(c->r)) != 1 ||
		    ntohl(c->r.magic) != MAGIC || ntohl(c->r.size) < 1 ||
		    ntohl(c->r.size) > (64u << 20)) {
			close(c->fd);
			free(c);
		} else if (ntohl(c->r.mode) == M_HOLD) {
			free(c);	/* the fd stays open until the process ends */
		} else if (ntohl(c->r.mode) == M_SINK) {
			sink_add(c->fd, ntohl(c->r.wait));
			free(c);
		} else if (pthread_create(&t, &attr, serve_conn, c)) {
			close(c->fd);
			free(c);
		}
	}
}

/* ---- client ---- */

static int dial(enum mode mode, size_t size, double secs)
{
	struct req r = { htonl(MAGIC), htonl(mode), htonl(size), htonl(secs * 1e3),
			 htonl(wait_mode < 0 ? W_BLOCK : wait_mode) };
	int fd = socket(fam, SOCK_STREAM, 0);

	if (fd < 0 || zc_thresh_set(fd))
		die("socket");
	if (connect(fd, (struct sockaddr *)&sin_addr, sizeof(sin_addr)))
		die("connect");
	if (mode == M_PP)
		nodelay(fd);
	if (write_all(fd, (char *)&r, sizeof(r)))
		die("send request");
	return fd;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int run_pp(size_t size, int n, double secs)
{
	int fd = dial(M_PP, size, 0), i, warm = n > 20 ? 5 : 1;
	char *buf = calloc(1, size);
	double *t = calloc(n, sizeof(*t)), end, sum = 0;
	struct waiter w;

	if (!buf || !t)
		die("calloc");
	if (waiter_init(&w, fd, wait_mode < 0 ? W_BLOCK : wait_mode))
		die("waiter");
	for (i = 0; i < warm; i++)
		if (write_allw(fd, buf, size, &w) || read_allw(fd, buf, size, &w) != 1)
			die("ping-pong");
	end = now_s() + secs;
	for (i = 0; i < n; i++) {
		double s = now_s();

		if (write_allw(fd, buf, size, &w) || read_allw(fd, buf, size, &w) != 1)
			die("ping-pong");
		t[i] = (now_s() - s) * 1e6;
		sum += t[i];
		if (i >= 10 && now_s() > end) {
			i++;
			break;
		}
	}
	n = i;
	qsort(t, n, sizeof(*t), cmp_double);
	printf("rtt_median_us=%.1f rtt_p99_us=%.1f rtt_mean_us=%.1f n=%d wait=%s transport=%s\n",
	       t[n / 2], t[(n - 1) * 99 / 100], sum / n, n, wait_names[w.wait], transport(fd));
	waiter_done(&w);
	close(fd);
	free(t);
	free(buf);
	return 0;
}

struct stream {
	pthread_t tid, rx_tid;
	int fd;
	enum mode mode;
	size_t size;
	double secs;
	long long tx, rx;
	double done;		/* when the peer's EOF arrived */
};

static pthread_barrier_t start_line;

static void *stream_rx(void *p)
{
	struct stream *s = p;
	char *buf = malloc(s->size);

	s->rx = buf ? drain(s->fd, buf, s->size) : -1;
	s->done = now_s();
	free(buf);
	return NULL;
}

static void *stream_run(void *p)
{
	struct stream *s = p;
	char *buf = calloc(1, s->size);

	if (!buf)
		die("calloc");
	pthread_barrier_wait(&start_line);
	/*
	 * Only bidir receives while it sends: rsockets (librspreload) can
	 * hang a blocking send while another thread of the process waits in
	 * recv on the same socket with nothing to receive.
	 */
	if (s->mode == M_BIDIR && pthread_create(&s->rx_tid, NULL, stream_rx, s))
		die("pthread_create");
	if (s->mode != M_RX)
		s->tx = msg_zc ? pour_zc(s->fd, s->size, s->secs) :
				 pour(s->fd, buf, s->size, s->secs);
	shutdown(s->fd, SHUT_WR);
	if (s->mode == M_BIDIR)
		pthread_join(s->rx_tid, NULL);
	else
		stream_rx(s);
	free(buf);
	return NULL;
}

static int run_stream(int streams, enum mode mode, size_t size, double secs)
{
	struct stream *s = calloc(streams, sizeof(*s));
	long long bytes = 0;
	double t0, t1 = 0;
	int i;

	if (!s)
		die("calloc");
	pthread_barrier_init(&start_line, NULL, streams + 1);
	for (i = 0; i < streams; i++) {
		s[i] = (struct stream){ .fd = dial(mode, size, secs), .mode = mode,
					.size = size, .secs = secs };
		if (pthread_create(&s[i].tid, NULL, stream_run, &s[i]))
			die("pthread_create");
	}
	t0 = now_s();
	pthread_barrier_wait(&start_line);
	for (i = 0; i < streams; i++) {
		pthread_join(s[i].tid, NULL);
		if (s[i].rx < 0) {
			fprintf(stderr, "sdp_bench: stream %d: receive failed\n", i);
			return 1;
		}
		bytes += s[i].tx + s[i].rx;
		if (s[i].done > t1)
			t1 = s[i].done;
	}
	printf("mbytes_per_s=%.2f bytes=%lld secs=%.3f streams=%d transport=%s",
	       bytes / (t1 - t0) / 1e6, bytes, t1 - t0, streams, transport(s[0].fd));
	if (msg_zc)
		printf(" zc_copied=%llu", zc_copied);
	if (compute_s)
		printf(" compute_us=%.0f", compute_s * 1e6);
	printf("\n");
	for (i = 0; i < streams; i++)
		close(s[i].fd);
	free(s);
	return 0;
}

/* Opens fd[0..n) for MODE with DIALERS threads connecting at once. */
struct dialer {
	pthread_t tid;
	int *fd, from, to;
	enum mode mode;
	size_t size;
};

static void *dialer_run(void *p)
{
	struct dialer *d = p;
	int i;

	for (i = d->from; i < d->to; i++)
		d->fd[i] = dial(d->mode, d->size, 0);
	return NULL;
}

static void dial_many(int *fd, int n, int dialers, enum mode mode, size_t size)
{
	struct dialer *d;
	int i;

	if (dialers > n)
		dialers = n;
	if (dialers <= 1) {	/* no thread's stack and arena in a memory count */
		for (i = 0; i < n; i++)
			fd[i] = dial(mode, size, 0);
		return;
	}
	d = calloc(dialers, sizeof(*d));
	if (!d)
		die("calloc");
	for (i = 0; i < dialers; i++) {
		d[i] = (struct dialer){ .fd = fd, .from = (long)n * i / dialers,
					.to = (long)n * (i + 1) / dialers, .mode = mode, .size = size };
		if (pthread_create(&d[i].tid, NULL, dialer_run, &d[i]))
			die("pthread_create");
	}
	for (i = 0; i < dialers; i++)
		pthread_join(d[i].tid, NULL);
	free(d);
}

static int count_rdma(const int *fd, int n)
{
	int i, k = 0;

	for (i = 0; fam != AF_INET && fam != AF_SMC && i < n; i++)
		k += !strcmp(transport(fd[i]), "rdma");
	return k;
}

static int run_hold(int n, int dialers)
{
	int *fd = calloc(n, sizeof(*fd)), i;
	double t0;
	char c;

	if (!fd)
		die("calloc");
	/* the caller counts memory from here: this process is all there */
	printf("started\n");
	fflush(stdout);
	while (read(0, &c, 1) > 0 && c != '\n')
		;
	t0 = now_s();
	dial_many(fd, n, dialers, M_HOLD, 64);
	printf("ready n=%d transport=%s rdma=%d secs=%.1f\n", n, transport(fd[n - 1]),
	       count_rdma(fd, n), now_s() - t0);
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	for (i = 0; i < n; i++)
		close(fd[i]);
	return 0;
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return (x > y) - (x < y);
}

/* Up to 100 ms for any of `many`'s connections: the ready ones' indices. */
static int many_wait(int epfd, struct epoll_event *ev, struct pollfd *pfd, int n, int *ready)
{
	int r = epfd >= 0 ? epoll_wait(epfd, ev, n, 100) : poll(pfd, n, 100), k, m = 0;

	if (r < 0 && errno != EINTR)
		die("wait");
	for (k = 0; r > 0 && k < (epfd >= 0 ? r : n); k++)
		if (epfd >= 0)
			ready[m++] = (int)ev[k].data.u32;
		else if (pfd[k].fd >= 0 && pfd[k].revents)
			ready[m++] = k;
	return m;
}

/*
 * N connections streaming at once from one thread: each is written SIZE
 * bytes at a time whenever it is writable, for SECS; then every one is shut
 * down and the clock stops at the last server's EOF (all has arrived).
 */
static int run_many(int n, size_t size, double secs, int dialers)
{
	int *fd = calloc(n, sizeof(*fd)), wait = wait_mode < 0 ? W_EPOLL : wait_mode;
	long long *sent = calloc(n, sizeof(*sent)), total = 0;
	size_t *off = calloc(n, sizeof(*off));
	char *buf = calloc(1, size), *sink = malloc(4096);
	struct pollfd *pfd = calloc(n, sizeof(*pfd));
	struct epoll_event *ev = calloc(n, sizeof(*ev));
	int *ready = calloc(n, sizeof(*ready));
	int epfd = -1, i, k, left, moved = 0, rdma;
	double t0, t1, end;

	if (!fd || !sent || !off || !buf || !sink || !pfd || !ev || !ready)
		die("calloc");
	dial_many(fd, n, dialers, M_SINK, size);
	rdma = count_rdma(fd, n);
	if (wait == W_EPOLL && (epfd = epoll_create1(EPOLL_CLOEXEC)) < 0)
		die("epoll_create1");
	for (i = 0; i < n; i++) {
		struct epoll_event e = { .events = EPOLLOUT, .data.u32 = i };

		if (set_nonblock(fd[i]))
			die("O_NONBLOCK");
		if (epfd >= 0 && epoll_ctl(epfd, EPOLL_CTL_ADD, fd[i], &e))
			die("epoll_ctl");
		pfd[i] = (struct pollfd){ .fd = fd[i], .events = POLLOUT };
	}
	t0 = now_s();
	end = t0 + secs;
	while (now_s() < end) {
		int r = many_wait(epfd, ev, pfd, n, ready);

		for (k = 0; k < r; k++) {
			ssize_t m;

			i = ready[k];
			m = send(fd[i], buf + off[i], size - off[i], MSG_NOSIGNAL);
			if (m < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
				continue;
			if (m <= 0) {
				fprintf(stderr, "sdp_bench: connection %d: send: %s\n", i,
					strerror(errno));
				return 1;
			}
			sent[i] += m;
			off[i] = (off[i] + m) % size;
		}
	}
	/* the end of every stream, and the wait for the server's EOFs */
	for (i = 0; i < n; i++) {
		struct epoll_event e = { .events = EPOLLIN, .data.u32 = i };

		shutdown(fd[i], SHUT_WR);
		if (epfd >= 0 && epoll_ctl(epfd, EPOLL_CTL_MOD, fd[i], &e))
			die("epoll_ctl");
		pfd[i].events = POLLIN;
	}
	t1 = t0;
	left = n;
	end = now_s() + 10 * secs + 60;
	while (left && now_s() < end) {
		int r = many_wait(epfd, ev, pfd, n, ready);

		for (k = 0; k < r; k++) {
			ssize_t m;

			i = ready[k];
			m = recv(fd[i], sink, 4096, 0);
			if (m < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
				continue;
			if (m > 0)
				continue;
			if (m < 0) {
				fprintf(stderr, "sdp_bench: connection %d: receive: %s\n", i,
					strerror(errno));
				return 1;
			}
			t1 = now_s();
			left--;
			if (epfd >= 0)
				epoll_ctl(epfd, EPOLL_CTL_DEL, fd[i], NULL);
			pfd[i].fd = -1;
		}
	}
	if (left) {
		fprintf(stderr, "sdp_bench: %d of %d connections never ended\n", left, n);
		return 1;
	}
	for (i = 0; i < n; i++) {
		total += sent[i];
		moved += sent[i] > 0;
	}
	qsort(sent, n, sizeof(*sent), cmp_ll);
	printf("mbytes_per_s=%.2f bytes=%lld secs=%.3f conns=%d moved=%d min_kib=%lld median_kib=%lld max_kib=%lld wait=%s transport=%s rdma=%d\n",
	       total / (t1 - t0) / 1e6, total, t1 - t0, n, moved, sent[0] >> 10,
	       sent[n / 2] >> 10, sent[n - 1] >> 10, wait_names[wait], transport(fd[0]), rdma);
	for (i = 0; i < n; i++)
		close(fd[i]);
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: sdp_bench -l [-f tcp|sdp|smc] ADDR PORT\n"
		"       sdp_bench [-f FAM] [-w block|poll|epoll] ADDR PORT pp SIZE N SECS\n"
		"       sdp_bench [-f FAM] [-P STREAMS] [-z] [-Z THRESH] [-C USEC] ADDR PORT stream tx|rx|bidir SIZE SECS\n"
		"       sdp_bench [-f FAM] [-w poll|epoll] [-P DIALERS] ADDR PORT many N SIZE SECS\n"
		"       sdp_bench [-f FAM] [-P DIALERS] ADDR PORT hold N\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int listen_mode = 0, streams = 1, c;
	char **arg;

	while ((c = getopt(argc, argv, "lf:P:w:zZ:C:")) != -1) {
		switch (c) {
		case 'z':
			msg_zc = true;
			break;
		case 'Z':
			zc_thresh = atoi(optarg);
			if (zc_thresh < 0)
				usage();
			break;
		case 'C':
			compute_s = atof(optarg) / 1e6;
			if (compute_s < 0)
				usage();
			break;
		case 'l':
			listen_mode = 1;
			break;
		case 'f':
			fam_name = optarg;
			if (!strcmp(optarg, "sdp"))
				fam = sdp_family();
			else if (!strcmp(optarg, "smc"))
				fam = AF_SMC;
			else if (strcmp(optarg, "tcp"))
				usage();
			break;
		case 'P':
			streams = atoi(optarg);
			if (streams < 1 || streams > 256)
				usage();
			break;
		case 'w':
			for (wait_mode = 0; wait_mode < 3; wait_mode++)
				if (!strcmp(optarg, wait_names[wait_mode]))
					break;
			if (wait_mode == 3)
				usage();
			break;
		default:
			usage();
		}
	}
	if (argc - optind < 2 || inet_pton(AF_INET, argv[optind], &sin_addr.sin_addr) != 1)
		usage();
	sin_addr.sin_port = htons(atoi(argv[optind + 1]));
	signal(SIGPIPE, SIG_IGN);
	/*
	 * librspreload intercepts poll() (as rpoll()) but none of epoll_*:
	 * epoll would watch the placeholder socket it keeps for each rsocket.
	 */
	if (wait_mode == W_EPOLL && getenv("LD_PRELOAD") && strstr(getenv("LD_PRELOAD"), "rspreload")) {
		fprintf(stderr, "sdp_bench: rsockets has no epoll (librspreload does not intercept epoll_*); use -w poll\n");
		return 2;
	}
	more_files();
	if (listen_mode)
		serve();

	arg = argv + optind + 2;
	argc -= optind + 2;
	if (argc == 4 && !strcmp(arg[0], "pp") && atoi(arg[1]) > 0 && atoi(arg[2]) > 1)
		return run_pp(atoi(arg[1]), atoi(arg[2]), atof(arg[3]));
	if (argc == 4 && !strcmp(arg[0], "stream") && atoi(arg[2]) > 0) {
		enum mode m = !strcmp(arg[1], "tx") ? M_TX : !strcmp(arg[1], "rx") ? M_RX :
			      !strcmp(arg[1], "bidir") ? M_BIDIR : 0;

		if (!m)
			usage();
		return run_stream(streams, m, atoi(arg[2]), atof(arg[3]));
	}
	if (argc == 4 && !strcmp(arg[0], "many") && atoi(arg[1]) > 0 && atoi(arg[2]) > 0) {
		if (wait_mode == W_BLOCK)
			usage();
		return run_many(atoi(arg[1]), atoi(arg[2]), atof(arg[3]), streams);
	}
	if (argc == 2 && !strcmp(arg[0], "hold") && atoi(arg[1]) > 0)
		return run_hold(atoi(arg[1]), streams);
	usage();
	return 2;
}
