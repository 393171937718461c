// SPDX-License-Identifier: GPL-2.0
/*
 * sdp_connbench: how long connect() takes, over SDP, TCP or SMC (AF_SMC).
 *
 *   sdp_connbench -l [-e] [-f tcp|sdp|smc] ADDR PORT     accept and close, forever
 *   sdp_connbench [-e] [-f tcp|sdp|smc] [-n N] ADDR PORT connect+close N times
 *
 * With -e (both ends) each connection also carries a 1-byte echo before it
 * closes: the client sends a byte and waits for it to come back, so a cycle
 * ends only once the connection has moved data both ways.
 *
 * The client prints one line:
 *   first_us=F median_us=M p99_us=P rate_per_s=R transport=tcp|rdma|smc
 * where "first" is the first connect (uncached) and the others are over the
 * remaining ones (connect, or connect and echo with -e); rate counts whole
 * cycles, close included, per second. No tool in Debian opens family 27 for
 * this, hence this one.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "sdp_family.h"

#ifndef AF_SMC
#define AF_SMC 43
#endif

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void usage(void)
{
	fprintf(stderr, "usage: sdp_connbench [-l] [-e] [-f tcp|sdp|smc] [-n N] ADDR PORT\n");
	exit(2);
}

/* 0 once the byte went to the peer and came back (client) or back (server). */
static int echo(int fd, int first)
{
	char c = 'e';

	if (first && send(fd, &c, 1, MSG_NOSIGNAL) != 1)
		return -1;
	if (recv(fd, &c, 1, MSG_WAITALL) != 1)
		return -1;
	if (!first && send(fd, &c, 1, MSG_NOSIGNAL) != 1)
		return -1;
	return 0;
}

static int serve(int fam, const struct sockaddr_in *sin, int do_echo)
{
	int one = 1, l = socket(fam, SOCK_STREAM, 0);

	if (l < 0 || setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(l, (const struct sockaddr *)sin, sizeof(*sin)) || listen(l, 128)) {
		perror("sdp_connbench: listen");
		return 1;
	}
	for (;;) {
		int a = accept(l, NULL, NULL);

		if (a >= 0) {
			if (do_echo)
				echo(a, 0);
			close(a);
		}
		else if (errno != EINTR && errno != ECONNABORTED)
			return 1;
	}
}

static const char *transport(int fd, int fam)
{
	struct sdp_info info;
	socklen_t len = sizeof(info);

	if (fam == AF_INET)
		return "tcp";
	if (fam == AF_SMC)	/* SMC's own fallback shows in its netlink counters */
		return "smc";
	if (getsockopt(fd, SOL_SDP, SDP_INFO, &info, &len))
		return "unknown";
	return info.transport == SDP_TRANSPORT_RDMA ? "rdma" : "tcp";
}

int main(int argc, char **argv)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	int fam = AF_INET, n = 100, listen_mode = 0, do_echo = 0, c, i;
	const char *tp = "tcp";
	double *t, t0, total;

	while ((c = getopt(argc, argv, "lef:n:")) != -1) {
		switch (c) {
		case 'l':
			listen_mode = 1;
			break;
		case 'e':
			do_echo = 1;
			break;
		case 'f':
			if (!strcmp(optarg, "sdp"))
				fam = sdp_family();
			else if (!strcmp(optarg, "smc"))
				fam = AF_SMC;
			else if (strcmp(optarg, "tcp"))
				usage();
			break;
		case 'n':
			n = atoi(optarg);
			if (n < 2)
				usage();
			break;
		default:
			usage();
		}
	}
	if (argc - optind != 2 || inet_pton(AF_INET, argv[optind], &sin.sin_addr) != 1)
		usage();
	sin.sin_port = htons(atoi(argv[optind + 1]));
	if (listen_mode)
		return serve(fam, &sin, do_echo);

	t = calloc(n, sizeof(*t));
	if (!t)
		return 1;
	t0 = now_us();
	for (i = 0; i < n; i++) {
		double s = now_us();
		int fd = socket(fam, SOCK_STREAM, 0);

		if (fd < 0 || connect(fd, (struct sockaddr *)&sin, sizeof(sin))) {
			fprintf(stderr, "sdp_connbench: connect %d: %s\n", i, strerror(errno));
			return 1;
		}
		errno = 0;
		if (do_echo && echo(fd, 1)) {
			fprintf(stderr, "sdp_connbench: echo %d: %s\n", i,
				errno ? strerror(errno) : "connection closed");
			return 1;
		}
		t[i] = now_us() - s;
		if (i == n - 1)
			tp = transport(fd, fam);
		close(fd);
	}
	total = now_us() - t0;
	qsort(t + 1, n - 1, sizeof(*t), cmp_double);
	printf("first_us=%.0f median_us=%.0f p99_us=%.0f rate_per_s=%.0f transport=%s\n",
	       t[0], t[1 + (n - 1) / 2], t[1 + (n - 1) * 99 / 100], n / (total / 1e6), tp);
	free(t);
	return 0;
}
