// SPDX-License-Identifier: GPL-2.0
/*
 * sdp_bench: the socket workloads of `make bench` that no packaged tool
 * measures over family 27: ping-pong latency with percentiles, parallel and
 * bidirectional streams, and idle connections held open for a memory count.
 * The same code runs over TCP, SDP, SMC (AF_SMC) and, under
 * LD_PRELOAD=librspreload.so with -f tcp, rsockets, so the paths differ only
 * in the transport.
 *
 *   sdp_bench -l [-f FAM] ADDR PORT                 serve any of the below
 *   sdp_bench [-f FAM] ADDR PORT pp SIZE N SECS     N round trips (or SECS)
 *   sdp_bench [-f FAM] [-P STREAMS] ADDR PORT stream tx|rx|bidir SIZE SECS
 *   sdp_bench [-f FAM] ADDR PORT hold N             N idle connections
 *
 * FAM is tcp (default), sdp or smc. Clients print one line of key=value:
 *   pp:     rtt_median_us= rtt_p99_us= rtt_mean_us= n= transport=
 *   stream: mbytes_per_s= bytes= secs= streams= transport=
 *   hold:   "ready n=N" once all are up, then wait for EOF on stdin.
 * transport is rdma or tcp for SDP (SDP_INFO), the family name otherwise.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <linux/sdp.h>

#include "sdp_family.h"

#ifndef AF_SMC
#define AF_SMC 43
#endif

#define MAGIC 0x53425031u	/* "SBP1" */

enum mode { M_PP = 1, M_TX, M_RX, M_BIDIR, M_HOLD };

/* Sent by the client first on every connection, network order. */
struct req {
	uint32_t magic, mode, size, msecs;
};

static int fam = AF_INET;
static const char *fam_name = "tcp";
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

static int write_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

/* 1 when all read, 0 on EOF before the first byte, -1 otherwise. */
static int read_all(int fd, char *p, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = recv(fd, p + got, len - got, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0 && got == 0)
			return 0;
		if (n <= 0)
			return -1;
		got += n;
	}
	return 1;
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
		}
	} while (now_s() < end);
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
	case M_PP:
		nodelay(fd);
		while (read_all(fd, buf, size) == 1)
			if (write_all(fd, buf, size))
				break;
		break;
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

static void __attribute__((noreturn)) serve(void)
{
	int one = 1, l = socket(fam, SOCK_STREAM, 0);
	pthread_attr_t attr;

	if (l < 0 || setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(l, (struct sockaddr *)&sin_addr, sizeof(sin_addr)) || listen(l, 512))
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
		} else if (pthread_create(&t, &attr, serve_conn, c)) {
			close(c->fd);
			free(c);
		}
	}
}

/* ---- client ---- */

static int dial(enum mode mode, size_t size, double secs)
{
	struct req r = { htonl(MAGIC), htonl(mode), htonl(size), htonl(secs * 1e3) };
	int fd = socket(fam, SOCK_STREAM, 0);

	if (fd < 0)
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

	if (!buf || !t)
		die("calloc");
	for (i = 0; i < warm; i++)
		if (write_all(fd, buf, size) || read_all(fd, buf, size) != 1)
			die("ping-pong");
	end = now_s() + secs;
	for (i = 0; i < n; i++) {
		double s = now_s();

		if (write_all(fd, buf, size) || read_all(fd, buf, size) != 1)
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
	printf("rtt_median_us=%.1f rtt_p99_us=%.1f rtt_mean_us=%.1f n=%d transport=%s\n",
	       t[n / 2], t[(n - 1) * 99 / 100], sum / n, n, transport(fd));
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
		s->tx = pour(s->fd, buf, s->size, s->secs);
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
	printf("mbytes_per_s=%.2f bytes=%lld secs=%.3f streams=%d transport=%s\n",
	       bytes / (t1 - t0) / 1e6, bytes, t1 - t0, streams, transport(s[0].fd));
	for (i = 0; i < streams; i++)
		close(s[i].fd);
	free(s);
	return 0;
}

static int run_hold(int n)
{
	int *fd = calloc(n, sizeof(*fd)), i;
	char c;

	if (!fd)
		die("calloc");
	for (i = 0; i < n; i++)
		fd[i] = dial(M_HOLD, 64, 0);
	printf("ready n=%d transport=%s\n", n, transport(fd[n - 1]));
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	for (i = 0; i < n; i++)
		close(fd[i]);
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: sdp_bench -l [-f tcp|sdp|smc] ADDR PORT\n"
		"       sdp_bench [-f FAM] ADDR PORT pp SIZE N SECS\n"
		"       sdp_bench [-f FAM] [-P STREAMS] ADDR PORT stream tx|rx|bidir SIZE SECS\n"
		"       sdp_bench [-f FAM] ADDR PORT hold N\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int listen_mode = 0, streams = 1, c;
	char **arg;

	while ((c = getopt(argc, argv, "lf:P:")) != -1) {
		switch (c) {
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
		default:
			usage();
		}
	}
	if (argc - optind < 2 || inet_pton(AF_INET, argv[optind], &sin_addr.sin_addr) != 1)
		usage();
	sin_addr.sin_port = htons(atoi(argv[optind + 1]));
	signal(SIGPIPE, SIG_IGN);
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
	if (argc == 2 && !strcmp(arg[0], "hold") && atoi(arg[1]) > 0)
		return run_hold(atoi(arg[1]));
	usage();
	return 2;
}
